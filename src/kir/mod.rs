//! The kernel IR: a small, explicit, CUDA-like language that lowering produces and
//! the GPU back-ends print.
//!
//! A [`Module`] is one translation unit: read-only coefficient tables in constant
//! memory and kernels. A [`Kernel`] has a fixed block shape, typed parameters
//! (device buffers and scalars), shared-memory arrays and a body of statements.
//! Every memory access names its address space, so a printer only spells it; the
//! CUDA and OpenCL printers differ in spelling alone (see [`print::Dialect`]).

pub mod cse;
pub mod helpers;
pub mod literal;
pub mod names;
pub mod plan;
pub mod print;
pub mod rewrite;
pub mod scopes;
pub mod text;
pub mod vector;
pub mod verify;
pub mod visit;

pub use helpers::{Extremum, Helper};

use crate::ir::{MathFn, ScalarType, Value};

/// Where a variable or array lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// A private (per-thread) scalar: a local variable or a scalar parameter.
    Private,
    /// Device memory, reached through a kernel parameter.
    Global,
    /// Per-block shared (OpenCL: local) memory.
    Shared,
    /// Module-scope read-only constant memory.
    Constant,
}

/// One translation unit: constant tables and kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    /// Name of the program the module was generated from (for the header comment).
    pub name: String,
    /// Arrays in constant memory, initialised at module scope.
    pub constants: Vec<ConstArray>,
    /// The kernels, in the order the host plan refers to them.
    pub kernels: Vec<Kernel>,
    /// Whether the compiler may contract `a * b + c` into a fused multiply-add
    /// (`--fma`): faster, and results then differ from the interpreter's in
    /// the last bits. Off by default.
    pub fma: bool,
    /// The blocks of each kernel that should fit on an SM at once
    /// (`--min-blocks`; CUDA's `__launch_bounds__(threads, N)`): ptxas may then
    /// use up to `registers per SM / (threads × N)` registers a thread. `None`
    /// gives only the threads, and ptxas trades registers (even spills) for
    /// resident blocks at its own thresholds.
    pub min_blocks_per_sm: Option<u32>,
}

impl Module {
    /// Whether any kernel or table uses `double` (OpenCL needs `cl_khr_fp64` then).
    pub fn uses_double(&self) -> bool {
        let table = self.constants.iter().any(|c| c.ty == ScalarType::Double);
        let param = self.kernels.iter().any(|k| {
            k.params.iter().any(|p| p.ty == ScalarType::Double)
                || k.shared.iter().any(|s| s.ty == ScalarType::Double)
                || k.uses_double
        });
        table || param
    }
}

/// A read-only table in constant memory: `__constant__ float K[49] = {...};`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstArray {
    /// Name in the generated code (module scope, given by the [`names::Namer`]).
    pub name: String,
    /// Element type.
    pub ty: ScalarType,
    /// Elements, flattened row-major.
    pub values: Vec<Value>,
    /// In global rather than constant memory ([`crate::schedule::TablePlacement::Global`]).
    pub global: bool,
}

/// What a kernel parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// A device buffer the kernel only reads (`const T* __restrict__`: the
    /// read-only data path).
    ReadOnlyBuffer,
    /// A device buffer the kernel writes (and may read).
    Buffer,
    /// A scalar passed by value.
    Scalar,
}

/// A variable of a kernel: an index into its [`Kernel::vars`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub u32);

/// Who chose a variable's preferred name, which decides who keeps it on a clash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// Named after an entity of the program (a field level, parameter, local):
    /// named first, so it keeps the program's name whenever that is allowed.
    Program,
    /// Named after a program entity with a suffix of the generated code (`a_t0`,
    /// `a_tile`, `K_shared`): named after the program's names, before temporaries.
    Derived,
    /// A temporary of the generated code (`tid`, `acc`, `tx`): gives way.
    Generated,
    /// The module's constant table with this index (named at module scope).
    Table(usize),
}

/// A declared variable: its preferred name, type and address space. The printed
/// name comes from the [`names::Namer`], never from here directly.
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// Preferred name (the program's name where there is one).
    pub hint: String,
    /// Value type (scalars) or element type (arrays and buffers).
    pub ty: ScalarType,
    /// Where it lives: private for scalars, global for buffer parameters, shared
    /// for shared arrays, constant for tables.
    pub space: Space,
    /// Who chose the hint.
    pub origin: Origin,
    /// Elements of `ty` the variable holds: 1 for a scalar, 2 or 4 for a
    /// private vector (`float4`) that a [`KExpr::VecLoad`] fills and
    /// [`KExpr::Lane`] reads.
    pub lanes: u8,
}

/// A kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct KParam {
    /// The variable (private for scalars, global for buffers).
    pub var: Var,
    /// Element type (buffers) or value type (scalars).
    pub ty: ScalarType,
    /// Buffer or scalar.
    pub kind: ParamKind,
}

/// An array in shared memory, with its extents outermost first.
#[derive(Clone, Debug, PartialEq)]
pub struct SharedArray {
    /// The variable (space shared).
    pub var: Var,
    /// Element type.
    pub ty: ScalarType,
    /// Extent per dimension, outermost first.
    pub dims: Vec<usize>,
}

impl SharedArray {
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        // Saturating: an oversized tile must fail the device check, not wrap.
        self.dims
            .iter()
            .fold(self.ty.size_bytes(), |bytes, &d| bytes.saturating_mul(d))
    }
}

/// The variables of a kernel under construction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vars {
    /// Declarations by [`Var`] index.
    pub decls: Vec<VarDecl>,
}

impl Vars {
    /// Declares a new variable.
    pub fn add(
        &mut self,
        hint: impl Into<String>,
        ty: ScalarType,
        space: Space,
        origin: Origin,
    ) -> Var {
        self.decls.push(VarDecl {
            hint: hint.into(),
            ty,
            space,
            origin,
            lanes: 1,
        });
        Var(self.decls.len() as u32 - 1)
    }

    /// A private vector of `lanes` elements of `ty`, a temporary of the
    /// generated code.
    pub fn add_vector(&mut self, hint: impl Into<String>, ty: ScalarType, lanes: u8) -> Var {
        let var = self.add(hint, ty, Space::Private, Origin::Generated);
        self.decls[var.0 as usize].lanes = lanes;
        var
    }

    /// A private `int` temporary of the generated code.
    pub fn temp_int(&mut self, hint: impl Into<String>) -> Var {
        self.add(hint, ScalarType::Int, Space::Private, Origin::Generated)
    }

    /// The declaration of `var`.
    pub fn decl(&self, var: Var) -> &VarDecl {
        &self.decls[var.0 as usize]
    }
}

/// A kernel: runs on a grid of blocks of `block` threads (x innermost).
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Name in the generated code (after the program's stencil or reduction; module
    /// scope, given by the [`names::Namer`] when lowering).
    pub name: String,
    /// Threads per block per axis (x, y, z); the kernel requires exactly this shape.
    pub block: [u32; 3],
    /// Every variable the kernel declares or refers to.
    pub vars: Vars,
    /// Parameters, in launch order.
    pub params: Vec<KParam>,
    /// Shared-memory arrays.
    pub shared: Vec<SharedArray>,
    /// The body.
    pub body: Vec<KStmt>,
    /// Whether the body computes in `double` somewhere.
    pub uses_double: bool,
}

impl Kernel {
    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.block.iter().fold(1u32, |n, &b| n.saturating_mul(b))
    }

    /// Static shared memory per block, in bytes.
    pub fn shared_bytes(&self) -> usize {
        self.shared
            .iter()
            .fold(0usize, |sum, a| sum.saturating_add(a.bytes()))
    }
}

/// Built-in per-thread values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// Thread index within the block along an axis (0 = x).
    ThreadIdx(u8),
    /// Block index within the grid along an axis.
    BlockIdx(u8),
    /// Number of blocks in the grid along an axis.
    NumGroups(u8),
}

/// Binary operators (C semantics; comparisons yield `int`).
pub use crate::ir::BinaryOp;
/// Unary operators.
pub use crate::ir::UnaryOp;

/// A typed expression of the kernel IR.
#[derive(Clone, Debug, PartialEq)]
pub enum KExpr {
    /// A literal.
    Lit(Value),
    /// A variable: a scalar parameter or a private local.
    Var(Var),
    /// A built-in thread or block index (an `int`).
    Builtin(Builtin),
    /// A read of an array element: `array[i0][i1]...` (global and constant arrays
    /// take one flat index; shared arrays one index per dimension).
    Load {
        /// Address space of the array.
        space: Space,
        /// The array (buffer parameter, shared array or constant table).
        array: Var,
        /// Indices, outermost first.
        index: Vec<KExpr>,
    },
    /// A unary operation.
    Unary(UnaryOp, Box<KExpr>),
    /// A binary operation.
    Binary(BinaryOp, Box<KExpr>, Box<KExpr>),
    /// `cond ? a : b` (only the chosen side is evaluated, so a guarded load is safe).
    Select(Box<KExpr>, Box<KExpr>, Box<KExpr>),
    /// A math function; `float_form` selects the `f`-suffixed version where the
    /// dialect spells it so.
    Call {
        /// The function.
        func: MathFn,
        /// Whether this is the `float` form.
        float_form: bool,
        /// Arguments.
        args: Vec<KExpr>,
    },
    /// An integer index helper (boundary modes).
    Helper(Helper, Vec<KExpr>),
    /// A C conversion to the given type.
    Cast(ScalarType, Box<KExpr>),
    /// `__shfl_down_sync(full mask, value, delta)`: only lowered for dialects with
    /// warp shuffles (`lower::Target::has_warp_shuffle`).
    ShuffleDown(Box<KExpr>, u32),
    /// `lanes` consecutive elements of a global buffer from flat index
    /// `index`, in one access: the index is a multiple of `lanes` and the
    /// buffer's start is aligned (lowering proves the first; device
    /// allocations give the second). Only as the initialiser of a vector
    /// variable.
    VecLoad {
        /// The buffer.
        array: Var,
        /// Flat index of the first element.
        index: Box<KExpr>,
        /// Elements loaded: 2 or 4 (at most 16 bytes).
        lanes: u8,
    },
    /// Element `lane` of a private vector variable (`v.x`).
    Lane(Var, u8),
}

impl KExpr {
    /// An `int` literal.
    pub fn int(v: i64) -> KExpr {
        KExpr::Lit(Value::Int(v as i32))
    }

    /// A variable.
    pub fn var(var: Var) -> KExpr {
        KExpr::Var(var)
    }

    /// `a op b`, folding integer literals and the neutral `+ 0`/`* 1` so generated
    /// index arithmetic stays short.
    pub fn bin(op: BinaryOp, a: KExpr, b: KExpr) -> KExpr {
        use BinaryOp::*;
        match (op, &a, &b) {
            (Add, KExpr::Lit(Value::Int(x)), KExpr::Lit(Value::Int(y))) => {
                KExpr::Lit(Value::Int(x.wrapping_add(*y)))
            }
            (Sub, KExpr::Lit(Value::Int(x)), KExpr::Lit(Value::Int(y))) => {
                KExpr::Lit(Value::Int(x.wrapping_sub(*y)))
            }
            (Mul, KExpr::Lit(Value::Int(x)), KExpr::Lit(Value::Int(y))) => {
                KExpr::Lit(Value::Int(x.wrapping_mul(*y)))
            }
            (Add | Sub, _, KExpr::Lit(Value::Int(0))) => a,
            (Add, KExpr::Lit(Value::Int(0)), _) => b,
            (Mul, _, KExpr::Lit(Value::Int(1))) => a,
            (Mul, KExpr::Lit(Value::Int(1)), _) => b,
            (Mul, KExpr::Lit(Value::Int(0)), _) | (Mul, _, KExpr::Lit(Value::Int(0))) => {
                KExpr::int(0)
            }
            // (x ± c1) ± c2 -> x ± c: keeps halo offsets folded.
            (Add | Sub, KExpr::Binary(inner @ (Add | Sub), x, c1), KExpr::Lit(Value::Int(c2))) => {
                if let KExpr::Lit(Value::Int(c1)) = **c1 {
                    let c1 = if *inner == Sub {
                        -(c1 as i64)
                    } else {
                        c1 as i64
                    };
                    let c2 = if op == Sub { -(*c2 as i64) } else { *c2 as i64 };
                    KExpr::bin(Add, (**x).clone(), KExpr::int(c1 + c2))
                } else {
                    KExpr::Binary(op, Box::new(a), Box::new(b))
                }
            }
            (Add, _, KExpr::Lit(Value::Int(c))) if *c < 0 => {
                KExpr::Binary(Sub, Box::new(a), Box::new(KExpr::int(-(*c as i64))))
            }
            _ => KExpr::Binary(op, Box::new(a), Box::new(b)),
        }
    }

    /// `a + b`.
    pub fn plus(a: KExpr, b: KExpr) -> KExpr {
        KExpr::bin(BinaryOp::Add, a, b)
    }

    /// `a * b`.
    pub fn times(a: KExpr, b: KExpr) -> KExpr {
        KExpr::bin(BinaryOp::Mul, a, b)
    }

    /// Calls `f` on this expression and every sub-expression, parents first.
    pub fn visit(&self, f: &mut dyn FnMut(&KExpr)) {
        visit::for_each_subexpr(self, f);
    }
}

/// A statement of the kernel IR.
#[derive(Clone, Debug, PartialEq)]
pub enum KStmt {
    /// Declares a private variable (of its declared type): `T name = init;`.
    Decl {
        /// The variable.
        var: Var,
        /// Initial value.
        init: KExpr,
    },
    /// `name = value;` for a private variable.
    Assign {
        /// The variable.
        var: Var,
        /// Value.
        value: KExpr,
    },
    /// `array[index...] = value;` in global or shared memory.
    Store {
        /// Address space (global or shared).
        space: Space,
        /// The array.
        array: Var,
        /// Indices, outermost first.
        index: Vec<KExpr>,
        /// The value.
        value: KExpr,
    },
    /// `for (int var = start; var < end; var += step) body`.
    For {
        /// Loop variable (a private `int`).
        var: Var,
        /// First value.
        start: KExpr,
        /// Exclusive end.
        end: KExpr,
        /// Increment (positive).
        step: KExpr,
        /// Whether to ask the compiler to unroll it (constant trip count).
        unroll: bool,
        /// The body.
        body: Vec<KStmt>,
    },
    /// `if (cond) { then } else { otherwise }`.
    If {
        /// Condition (non-zero is true).
        cond: KExpr,
        /// When true.
        then: Vec<KStmt>,
        /// When false.
        otherwise: Vec<KStmt>,
    },
    /// `{ body }`: a scope for the body's declarations.
    Block(Vec<KStmt>),
    /// `values.len()` consecutive elements of a global buffer stored in one
    /// access from flat index `index` (a multiple of the count, as for
    /// [`KExpr::VecLoad`]).
    VecStore {
        /// The buffer.
        array: Var,
        /// Flat index of the first element.
        index: KExpr,
        /// The values, 2 or 4.
        values: Vec<KExpr>,
    },
    /// A block-wide barrier on shared memory.
    Barrier,
    /// A comment line, for readers of the generated code.
    Comment(String),
}
