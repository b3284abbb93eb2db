//! The loop IR of `stencilc map`: C function bodies as loops, assignments to
//! scalars and array elements, conditionals and calls; everything else kept as
//! an [`Stmt::Other`] that says what it is (the analysis then leaves the nest
//! holding it on the CPU). Lowered from the `lang-c` syntax tree.

use std::collections::BTreeMap;
use std::fmt;

/// The functions and global variables of a translation unit (those of the
/// user's file; declarations from headers only name functions without bodies).
#[derive(Clone, Debug, Default)]
pub struct CUnit {
    /// Functions defined in the user's file, in order.
    pub functions: Vec<Function>,
    /// Global variables of the user's file.
    pub globals: BTreeMap<String, Var>,
    /// Names of the file-scope variables the headers declare.
    pub header_globals: std::collections::BTreeSet<String>,
}

/// A function definition.
#[derive(Clone, Debug)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// Its parameters and local variables by name (a shadowing declaration
    /// replaces the outer one; the analysis only needs types and extents).
    pub vars: BTreeMap<String, Var>,
    /// Its parameters' names, in order.
    pub param_order: Vec<String>,
    /// Its return type as written (`float`, `void` is `other`), or `other`
    /// for a pointer or anything else.
    pub ret: String,
    /// Its body.
    pub body: Vec<Stmt>,
    /// Names whose address it takes (`&t`, macros expanded): a pointer may
    /// read or write them anywhere.
    pub addressed: std::collections::BTreeSet<String>,
    /// First and last line in the user's file.
    pub lines: (usize, usize),
}

/// A declared variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// Its name.
    pub name: String,
    /// The element (or scalar) type as written: `double`, `float`, `int`, `bool`.
    pub elem: String,
    /// Array extents, outermost first (`None`: unknown, as for `a[]`).
    pub dims: Vec<Option<Expr>>,
    /// Whether it is a pointer (or an array parameter, which C makes one).
    pub pointer: bool,
    /// Whether the pointer is `restrict`.
    pub restrict: bool,
    /// Whether it is a function parameter.
    pub param: bool,
    /// Whether it is a global, or a `static` local (which outlives the call
    /// as a global does).
    pub global: bool,
}

impl Var {
    /// Size of one element in bytes.
    pub fn elem_bytes(&self) -> u64 {
        match self.elem.as_str() {
            "double" | "long" => 8,
            "char" | "bool" | "_Bool" => 1,
            "short" => 2,
            _ => 4,
        }
    }
}

/// A C statement of a function body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// A `for` loop.
    For(Loop),
    /// `x = e`, `a[i][j] += e`, `x++`.
    Assign(Assign),
    /// A local declaration, maybe initialised.
    Decl {
        /// Its name.
        name: String,
        /// The initial value.
        init: Option<Expr>,
        /// Line in the user's file.
        line: usize,
    },
    /// `if (c) ... else ...`.
    If {
        /// The condition.
        cond: Expr,
        /// The then branch.
        then: Vec<Stmt>,
        /// The else branch (empty if none).
        els: Vec<Stmt>,
        /// Line in the user's file.
        line: usize,
    },
    /// An expression evaluated for its effects (a call).
    Eval {
        /// The expression.
        expr: Expr,
        /// Line in the user's file.
        line: usize,
    },
    /// `break`.
    Break,
    /// `continue`.
    Continue,
    /// `return`, with its value.
    Return(Option<Expr>),
    /// `goto label`.
    Goto(String),
    /// Anything else: what it is, and the statements inside it.
    Other {
        /// What it is (`a while loop`, `a switch`).
        what: String,
        /// Statements inside it.
        body: Vec<Stmt>,
        /// The condition of a `while` or `do`-`while` loop (`None` for
        /// other constructs).
        cond: Option<Expr>,
        /// Line in the user's file.
        line: usize,
    },
}

/// A `for` loop, with its bounds when it has the form
/// `for (v = lower; v < upper; v += step)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Loop {
    /// The loop variable.
    pub var: String,
    /// Whether it is declared in the loop's initialiser (`for (int i = ...)`).
    pub declared: bool,
    /// The first value.
    pub lower: Expr,
    /// The bound, exclusive (`i <= n` gives `n + 1`).
    pub upper: Expr,
    /// The increment (positive; see `descending`).
    pub step: i64,
    /// Whether the loop runs downwards, by 1, from `upper - 1` to `lower`
    /// (`for (j = n - 2; j >= 1; j--)`): the same iterations as the
    /// ascending loop, in the other order.
    pub descending: bool,
    /// Why the loop does not have the form above, if it does not.
    pub not_canonical: Option<String>,
    /// Its body.
    pub body: Vec<Stmt>,
    /// First and last line in the user's file.
    pub lines: (usize, usize),
}

/// An assignment.
#[derive(Clone, Debug, PartialEq)]
pub struct Assign {
    /// What is written.
    pub target: Ref,
    /// The operator of a compound assignment (`+=` is `Some(Add)`).
    pub op: Option<BinOp>,
    /// The value.
    pub value: Expr,
    /// Line in the user's file.
    pub line: usize,
}

/// A scalar variable or an array element.
#[derive(Clone, Debug, PartialEq)]
pub struct Ref {
    /// The variable.
    pub name: String,
    /// Subscripts, outermost first (empty for a scalar).
    pub index: Vec<Expr>,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl Loop {
    /// The first value of the variable: `lower`, or for a loop running
    /// downwards `upper - 1` (the start as written, `n - 2` of
    /// `for (j = n - 2; j >= 1; j--)`).
    pub fn start(&self) -> Expr {
        if !self.descending {
            return self.lower.clone();
        }
        match &self.upper {
            Expr::Bin(BinOp::Add, from, one) if **one == Expr::Int(1) => (**from).clone(),
            upper => Expr::Bin(BinOp::Sub, Box::new(upper.clone()), Box::new(Expr::Int(1))),
        }
    }
}

#[cfg(test)]
impl Loop {
    /// `for (int var = lower; var < upper; var++) {}` on line 1 (unit tests).
    pub fn counted(var: &str, lower: i64, upper: Expr) -> Loop {
        Loop {
            var: var.into(),
            declared: true,
            lower: Expr::Int(lower),
            upper,
            step: 1,
            descending: false,
            not_canonical: None,
            body: Vec::new(),
            lines: (1, 1),
        }
    }
}

impl BinOp {
    /// The C spelling.
    pub fn symbol(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Mod => "%",
            Lt => "<",
            Gt => ">",
            Le => "<=",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            And => "&&",
            Or => "||",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Shl => "<<",
            Shr => ">>",
        }
    }
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// An integer literal.
    Int(i64),
    /// A floating literal, as written.
    Float(String),
    /// A string literal as written, quotes and escapes included (adjacent
    /// literals joined by a space).
    Str(String),
    /// A scalar variable or an array element.
    Load(Ref),
    /// `a op b`.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `-a` (`'-'`), `!a` (`'!'`), `~a` (`'~'`).
    Unary(char, Box<Expr>),
    /// `f(args)`.
    Call(String, Vec<Expr>),
    /// `c ? a : b`.
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(type) e`.
    Cast(String, Box<Expr>),
    /// A construct the analysis does not follow (a pointer dereference, an
    /// assignment inside an expression, a member access...).
    Unsupported(String),
}

/// The [`Expr::Unsupported`] text of `*name`, a pointer dereferenced (as
/// PolyBench's `POLYBENCH_ARRAY(A)` passes its arrays): the analysis does
/// not follow it, but the aliasing test reads the name back
/// ([`dereferenced_pointer`]).
pub fn dereference_text(name: &str) -> String {
    format!("a dereference of the pointer `{name}`")
}

/// The pointer named by a [`dereference_text`].
pub fn dereferenced_pointer(what: &str) -> Option<&str> {
    what.strip_prefix("a dereference of the pointer `")?
        .strip_suffix('`')
}

impl Expr {
    /// Every array element and scalar read in the expression, and every call.
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match self {
            Expr::Load(r) => r.index.iter().for_each(|e| e.visit(f)),
            Expr::Bin(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            Expr::Unary(_, a) | Expr::Cast(_, a) => a.visit(f),
            Expr::Call(_, args) => args.iter().for_each(|e| e.visit(f)),
            Expr::Cond(c, a, b) => {
                c.visit(f);
                a.visit(f);
                b.visit(f);
            }
            Expr::Int(_) | Expr::Float(_) | Expr::Str(_) | Expr::Unsupported(_) => {}
        }
    }

    /// A scalar variable.
    pub fn var(name: &str) -> Expr {
        Expr::Load(Ref {
            name: name.to_string(),
            index: Vec::new(),
        })
    }
}

impl fmt::Display for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name)?;
        for e in &self.index {
            write!(f, "[{e}]")?;
        }
        Ok(())
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Int(v) => write!(f, "{v}"),
            Expr::Float(s) | Expr::Str(s) => write!(f, "{s}"),
            Expr::Load(r) => write!(f, "{r}"),
            Expr::Bin(op, a, b) => write!(f, "({a} {} {b})", op.symbol()),
            Expr::Unary(op, a) => write!(f, "{op}({a})"),
            Expr::Call(name, args) => {
                let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
                write!(f, "{name}({})", args.join(", "))
            }
            Expr::Cond(c, a, b) => write!(f, "({c} ? {a} : {b})"),
            Expr::Cast(t, a) => write!(f, "(({t}) {a})"),
            Expr::Unsupported(what) => write!(f, "/* {what} */"),
        }
    }
}
