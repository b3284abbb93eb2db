//! The syntax tree of the CUDA subset, with the types and variable slots that
//! the checks ([`super::sema`]) fill in.

use std::fmt;

use crate::source::Span;

/// A scalar type of the subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    /// `bool`
    Bool,
    /// `int`
    Int,
    /// `unsigned` / `unsigned int`
    UInt,
    /// `long` / `long long` (64 bits, as on CUDA's 64-bit hosts)
    Long,
    /// `unsigned long` / `size_t`
    ULong,
    /// `float`
    Float,
    /// `double`
    Double,
}

impl Scalar {
    /// Whether the type is `float` or `double`.
    pub fn is_float(self) -> bool {
        matches!(self, Scalar::Float | Scalar::Double)
    }

    /// The C spelling.
    pub fn c_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::Int => "int",
            Scalar::UInt => "unsigned int",
            Scalar::Long => "long",
            Scalar::ULong => "unsigned long",
            Scalar::Float => "float",
            Scalar::Double => "double",
        }
    }

    /// The rank in C's usual arithmetic conversions (higher wins).
    fn rank(self) -> u8 {
        match self {
            Scalar::Bool => 0,
            Scalar::Int => 1,
            Scalar::UInt => 2,
            Scalar::Long => 3,
            Scalar::ULong => 4,
            Scalar::Float => 5,
            Scalar::Double => 6,
        }
    }

    /// The type both operands of a binary arithmetic operator convert to
    /// (C's usual arithmetic conversions; `bool` promotes to `int`).
    pub fn common(a: Scalar, b: Scalar) -> Scalar {
        let wider = if a.rank() >= b.rank() { a } else { b };
        if wider == Scalar::Bool {
            Scalar::Int
        } else {
            wider
        }
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.c_name())
    }
}

/// The type of a name or an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// A value.
    Scalar(Scalar),
    /// A pointer to global memory (a kernel parameter).
    Pointer(Scalar),
    /// A `__shared__` array.
    Shared(Scalar),
    /// No value (a call to `__syncthreads`, say); also the type before checking.
    Void,
}

/// One of the built-in index variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `threadIdx`
    ThreadIdx,
    /// `blockIdx`
    BlockIdx,
    /// `blockDim`
    BlockDim,
    /// `gridDim`
    GridDim,
}

impl Builtin {
    /// Looks a name up.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Some(match name {
            "threadIdx" => Builtin::ThreadIdx,
            "blockIdx" => Builtin::BlockIdx,
            "blockDim" => Builtin::BlockDim,
            "gridDim" => Builtin::GridDim,
            _ => return None,
        })
    }

    /// The CUDA spelling.
    pub fn name(self) -> &'static str {
        match self {
            Builtin::ThreadIdx => "threadIdx",
            Builtin::BlockIdx => "blockIdx",
            Builtin::BlockDim => "blockDim",
            Builtin::GridDim => "gridDim",
        }
    }
}

/// A unary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `+x`
    Plus,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
}

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinOp {
    /// The C spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// Whether the result is a truth value.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }

    /// Whether the operator takes integers only.
    pub fn is_integer_only(self) -> bool {
        matches!(
            self,
            BinOp::Rem | BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor
        )
    }
}

/// An expression, with its type once checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where it is.
    pub span: Span,
    /// Its type (filled in by the checks; [`Type::Void`] before).
    pub ty: Type,
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer literal and its type.
    Int(u64, Scalar),
    /// A floating literal and its type.
    Float(f64, Scalar),
    /// `true` / `false`.
    Bool(bool),
    /// A variable; `slot` is its slot once resolved.
    Var {
        /// The name.
        name: String,
        /// The variable's slot among the kernel's ([`Kernel::slots`]).
        slot: usize,
    },
    /// `threadIdx.x` and the like; `axis` is 0 for `x`.
    Builtin(Builtin, usize),
    /// `a[i]`, `tile[i][j]`, or a marked `__opt__.a[i]`.
    Index {
        /// The array's name.
        array: String,
        /// Its slot once resolved.
        slot: usize,
        /// One index per dimension, outermost first.
        indices: Vec<Expr>,
        /// Written `__opt__.a[i]`: a read the user wants served from shared
        /// memory; the number of the marked read ([`Kernel::marked`]) once checked.
        marked: Option<usize>,
    },
    /// A unary operator.
    Unary(UnOp, Box<Expr>),
    /// A binary operator (arithmetic, comparison, logic).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `x = v` or `x op= v`.
    Assign {
        /// The operator of a compound assignment.
        op: Option<BinOp>,
        /// A variable or an element.
        target: Box<Expr>,
        /// The value.
        value: Box<Expr>,
    },
    /// `++x`, `x++`, `--x`, `x--`.
    Step {
        /// `++` (else `--`).
        increment: bool,
        /// Written before the operand.
        prefix: bool,
        /// The variable.
        target: Box<Expr>,
    },
    /// A call of a math function.
    Call {
        /// The function's name.
        name: String,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// `(type) x`
    Cast(Scalar, Box<Expr>),
}

impl Expr {
    /// An unchecked expression.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        Expr {
            kind,
            span,
            ty: Type::Void,
        }
    }

    /// The scalar type of a checked value expression (`int` for anything else).
    pub fn scalar(&self) -> Scalar {
        match self.ty {
            Type::Scalar(s) => s,
            _ => Scalar::Int,
        }
    }
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// What it is.
    pub kind: StmtKind,
    /// Where it is.
    pub span: Span,
}

/// The kinds of statement.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `int x = e;` (one statement per declarator).
    Local {
        /// The declared type.
        ty: Scalar,
        /// `const`
        is_const: bool,
        /// The name.
        name: String,
        /// Its slot once resolved.
        slot: usize,
        /// The initial value.
        init: Option<Expr>,
    },
    /// `__shared__ float s[A][B];`, or `extern __shared__ float s[];`
    /// (no `dims`: one dimension, sized by the launch's dynamic shared bytes).
    Shared {
        /// Element type.
        elem: Scalar,
        /// The name.
        name: String,
        /// Its slot once resolved.
        slot: usize,
        /// Sizes, outermost first, as written (constant expressions).
        dims: Vec<Expr>,
    },
    /// An expression statement.
    Expr(Expr),
    /// `if (c) a else b`
    If(Expr, Box<Stmt>, Option<Box<Stmt>>),
    /// `for (init; cond; step) body`
    For {
        /// The initialiser (a declaration or an expression statement).
        init: Option<Box<Stmt>>,
        /// The condition (true when missing).
        cond: Option<Expr>,
        /// The step.
        step: Option<Expr>,
        /// The body.
        body: Box<Stmt>,
    },
    /// `while (c) body`
    While(Expr, Box<Stmt>),
    /// `{ ... }`
    Block(Vec<Stmt>),
    /// `int a = 1, b;`: declarations into the enclosing scope.
    DeclList(Vec<Stmt>),
    /// `__syncthreads();`
    Sync,
    /// `profile("a b c");`: the candidate variables of every marked read.
    Profile(Vec<(String, Span)>),
    /// `return;`
    Return,
    /// `return value;` (in a `__device__` function).
    ReturnValue(Expr),
    /// `break;`
    Break,
    /// `continue;`
    Continue,
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The name.
    pub name: String,
    /// Scalar or pointer.
    pub ty: Type,
    /// `const` (on the pointee, for a pointer).
    pub is_const: bool,
    /// `__restrict__`
    pub restrict: bool,
    /// Where it is declared.
    pub span: Span,
}

/// What a variable slot holds.
#[derive(Clone, Debug, PartialEq)]
pub struct SlotInfo {
    /// Its name.
    pub name: String,
    /// Its type.
    pub ty: Type,
    /// For a shared array: its sizes, outermost first.
    pub dims: Vec<i64>,
    /// Where it is declared.
    pub span: Span,
}

/// Where a candidate variable of `profile("...")` takes its value from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidate {
    /// `threadIdx.x` and the like.
    Builtin(Builtin, usize),
    /// A local variable's slot.
    Slot(usize),
}

/// A marked read, `__opt__.a[i]`, as the checks resolved it.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkedRead {
    /// The read as written, for messages (`__opt__.in[w]`).
    pub text: String,
    /// Where it is.
    pub span: Span,
    /// The global array read (its parameter slot).
    pub array: usize,
    /// The shared array that a store fills from that global array (its slot).
    pub shared: usize,
    /// The candidate names of `profile("...")`, in order.
    pub candidate_names: Vec<String>,
    /// Where each candidate's value comes from at this read.
    pub candidates: Vec<Candidate>,
    /// Written `__opt__(a[i], sb[idx])`: the shared slot the user chose,
    /// which synth verifies instead of searching for an index.
    pub chosen: Option<ChosenSlot>,
}

/// The shared slot of a marked read written `__opt__(in[w], sb[csb - 1])`.
#[derive(Clone, Debug, PartialEq)]
pub struct ChosenSlot {
    /// The shared array's name (`sb`).
    pub shared: String,
    /// Its indices, outermost first (checked: integers over `profile`'s
    /// candidates, constants and macros).
    pub indices: Vec<Expr>,
    /// Where the shared read is.
    pub span: Span,
    /// The shared read as written (`sb[csb - 1]`; filled in with the text).
    pub text: String,
    /// Where the global read is.
    pub read_span: Span,
    /// The global read as written (`in[w]`; filled in with the text).
    pub read_text: String,
}

impl ChosenSlot {
    /// The slot's index per dimension on one profiled execution, from the
    /// candidates' values there (`values[k]` of `candidates[k]`); `None` where
    /// it cannot be computed (a division by zero, an overflow).
    pub fn eval(&self, candidates: &[Candidate], values: &[i64]) -> Option<Vec<i64>> {
        self.indices
            .iter()
            .map(|e| eval_index(e, candidates, values))
            .collect()
    }
}

fn eval_index(e: &Expr, candidates: &[Candidate], values: &[i64]) -> Option<i64> {
    let find = |c: Candidate| {
        let k = candidates.iter().position(|&k| k == c)?;
        values.get(k).copied()
    };
    match &e.kind {
        ExprKind::Int(v, _) => i64::try_from(*v).ok(),
        ExprKind::Var { slot, .. } => find(Candidate::Slot(*slot)),
        ExprKind::Builtin(b, axis) => find(Candidate::Builtin(*b, *axis)),
        ExprKind::Unary(UnOp::Neg, a) => eval_index(a, candidates, values)?.checked_neg(),
        ExprKind::Unary(UnOp::Plus, a) | ExprKind::Cast(_, a) => eval_index(a, candidates, values),
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (
                eval_index(a, candidates, values)?,
                eval_index(b, candidates, values)?,
            );
            match op {
                BinOp::Add => x.checked_add(y),
                BinOp::Sub => x.checked_sub(y),
                BinOp::Mul => x.checked_mul(y),
                BinOp::Div => x.checked_div(y),
                BinOp::Rem => x.checked_rem(y),
                BinOp::Shl => x.checked_shl(u32::try_from(y).ok()?),
                BinOp::Shr => x.checked_shr(u32::try_from(y).ok()?),
                BinOp::BitAnd => Some(x & y),
                BinOp::BitOr => Some(x | y),
                BinOp::BitXor => Some(x ^ y),
                _ => None,
            }
        }
        _ => None,
    }
}

/// A `__device__` function: scalar parameters, a scalar result, called from
/// kernels and from device functions defined after it (so never recursively).
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// Where the name is.
    pub name_span: Span,
    /// The text before the result type as written (`static __device__
    /// __forceinline__`), kept for printing.
    pub qualifiers: Vec<String>,
    /// The result type.
    pub ret: Scalar,
    /// The parameters (slots `0..params.len()`), scalars only.
    pub params: Vec<Param>,
    /// The body; it ends with `return value;`.
    pub body: Vec<Stmt>,
    /// Every variable: parameters first, then locals (filled in by the checks).
    pub slots: Vec<SlotInfo>,
    /// How many function bodies one call compiles to once every call in it
    /// is inlined (itself included; filled in by the checks).
    pub inlined: u64,
}

/// A `__global__` function.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Its name.
    pub name: String,
    /// Where the name is.
    pub name_span: Span,
    /// Written with `extern "C"`.
    pub extern_c: bool,
    /// `__launch_bounds__(N)`: the maximum threads per block (its optional
    /// minimum blocks per SM and maximum blocks per cluster, which only steer
    /// ptxas's registers, are not kept).
    pub launch_bounds: Option<u64>,
    /// The parameters (slots `0..params.len()`).
    pub params: Vec<Param>,
    /// The body.
    pub body: Vec<Stmt>,
    /// The marked reads (`__opt__.a[i]`), in source order (filled in by the checks).
    pub marked: Vec<MarkedRead>,
    /// The shared slots chosen in `__opt__(a[i], sb[idx])` reads, each with
    /// the span of its marked read, as parsed (the checks move them into
    /// [`MarkedRead::chosen`]).
    pub chosen: Vec<(Span, ChosenSlot)>,
    /// Every variable: parameters first, then locals and shared arrays in the
    /// order declared (filled in by the checks).
    pub slots: Vec<SlotInfo>,
    /// The `__device__` functions defined before the kernel in its file, in
    /// order (filled in by the checks): what its calls may call.
    pub functions: Vec<Function>,
}

/// A checked translation unit: its kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// The kernels, in source order.
    pub kernels: Vec<Kernel>,
}

impl Unit {
    /// The kernel named `name`, or the only one when `name` is `None`.
    pub fn kernel(&self, name: Option<&str>) -> Option<&Kernel> {
        match name {
            Some(name) => self.kernels.iter().find(|k| k.name == name),
            None if self.kernels.len() == 1 => self.kernels.first(),
            None => None,
        }
    }
}

/// Slot number of a name not resolved yet.
pub const UNRESOLVED: usize = usize::MAX;
