//! The syntax tree: what the program says, as written, with spans.
//!
//! The parser builds it; semantic analysis (`sema`) resolves names, types and
//! point-function calls and turns it into an [`ir::Program`](crate::ir::Program).

use crate::ir::{BinaryOp, ScalarType, UnaryOp};
use crate::source::Span;

/// A name and where it is written.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// A whole program (a `.sdsl` file or one region).
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// Declarations and the iterate, in source order.
    pub items: Vec<Item>,
}

/// A top-level declaration.
#[derive(Clone, Debug)]
pub enum Item {
    /// `int n;`
    Param {
        /// Type.
        ty: ScalarType,
        /// Name.
        name: Ident,
        /// Whole declaration.
        span: Span,
    },
    /// `double sigma2 = sigma*sigma;` (optionally with `const` in front).
    Constant {
        /// Type.
        ty: ScalarType,
        /// Name.
        name: Ident,
        /// Value.
        value: Expr,
        /// Whole declaration.
        span: Span,
    },
    /// `const float K[3][3] = {{...}};`
    Table {
        /// Element type.
        ty: ScalarType,
        /// Name.
        name: Ident,
        /// Extent per dimension, as written.
        dims: Vec<Expr>,
        /// The braced initializer.
        init: Initializer,
        /// Whole declaration.
        span: Span,
    },
    /// `grid g[n][m];`
    Grid {
        /// Name.
        name: Ident,
        /// Size per axis, outermost first.
        dims: Vec<Expr>,
        /// Whole declaration.
        span: Span,
    },
    /// `float griddata a on g at 0,1 boundary clamp;`
    Griddata {
        /// Element type.
        ty: ScalarType,
        /// Name.
        name: Ident,
        /// The grid.
        grid: Ident,
        /// Time offsets as written, with their spans.
        at: Vec<(i64, Span)>,
        /// The boundary mode word, if given.
        boundary: Option<Ident>,
        /// Whole declaration.
        span: Span,
    },
    /// `pointfunction f(a, b) { ... }`
    PointFunction(PointFunction),
    /// `iterate N { ... } check (...) every K iterations`
    Iterate(Iterate),
}

/// A point function definition.
#[derive(Clone, Debug)]
pub struct PointFunction {
    /// Name.
    pub name: Ident,
    /// Griddata parameters.
    pub params: Vec<Ident>,
    /// Body.
    pub body: Vec<Stmt>,
    /// From `pointfunction` to the closing brace.
    pub span: Span,
}

/// A braced table initializer or one of its elements.
#[derive(Clone, Debug)]
pub enum Initializer {
    /// `{a, b, ...}`
    List(Vec<Initializer>, Span),
    /// One value.
    Value(Expr),
}

impl Initializer {
    /// Where it is written.
    pub fn span(&self) -> Span {
        match self {
            Initializer::List(_, span) => *span,
            Initializer::Value(e) => e.span,
        }
    }
}

/// The iterate construct.
#[derive(Clone, Debug)]
pub struct Iterate {
    /// Maximum number of iterations.
    pub count: Expr,
    /// Stencils and reductions in order.
    pub stencils: Vec<Stencil>,
    /// Reductions in order.
    pub reductions: Vec<Reduction>,
    /// `check (cond) every K iterations`.
    pub check: Option<Check>,
    /// The `iterate` keyword.
    pub span: Span,
}

/// `check (cond) every K iterations`.
#[derive(Clone, Debug)]
pub struct Check {
    /// Condition.
    pub cond: Expr,
    /// How often.
    pub every: Expr,
    /// Whole clause.
    pub span: Span,
}

/// `stencil name { subset : stmt; ... }`
#[derive(Clone, Debug)]
pub struct Stencil {
    /// Name.
    pub name: Ident,
    /// Parts.
    pub parts: Vec<StencilPart>,
    /// Whole stencil.
    pub span: Span,
}

/// `subset : stmt;`
#[derive(Clone, Debug)]
pub struct StencilPart {
    /// Points.
    pub subset: Subset,
    /// An assignment or a point-function call.
    pub stmt: Stmt,
    /// Whole part.
    pub span: Span,
}

/// `reduction name op { subset : expr; ... }`
#[derive(Clone, Debug)]
pub struct Reduction {
    /// Name.
    pub name: Ident,
    /// Operator word or symbol (`+`, `*`, `max`, `min`) with its span.
    pub op: Ident,
    /// Parts.
    pub parts: Vec<(Subset, Expr, Span)>,
    /// Whole reduction.
    pub span: Span,
}

/// `[lo:hi][x]...`
#[derive(Clone, Debug)]
pub struct Subset {
    /// Per axis: `lo` and, for `[lo:hi]`, `hi`.
    pub ranges: Vec<(Expr, Option<Expr>)>,
    /// Whole subset.
    pub span: Span,
}

/// A statement in a point function or a stencil part.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `float x;` or `float x = e;`
    Local {
        /// Type.
        ty: ScalarType,
        /// Name.
        name: Ident,
        /// Initial value.
        init: Option<Expr>,
        /// Whole statement.
        span: Span,
    },
    /// `x = e;` or `[1]a[0][0] = e;`
    Assign {
        /// What is assigned.
        target: Target,
        /// Value.
        value: Expr,
        /// Whole statement.
        span: Span,
    },
    /// `for i in lo..hi { ... }`
    For {
        /// Loop variable.
        var: Ident,
        /// First value.
        lo: Expr,
        /// Last value (inclusive).
        hi: Expr,
        /// Body.
        body: Vec<Stmt>,
        /// Whole loop.
        span: Span,
    },
    /// `f(a, b);` — a point-function call.
    Call {
        /// Callee.
        func: Ident,
        /// Arguments (griddata names).
        args: Vec<Expr>,
        /// Whole statement.
        span: Span,
    },
}

/// The left side of an assignment.
#[derive(Clone, Debug)]
pub enum Target {
    /// A local variable.
    Name(Ident),
    /// A griddata element.
    Grid(GridRef),
}

/// `[t]name[o0][o1]`
#[derive(Clone, Debug)]
pub struct GridRef {
    /// Time offset, as written (must be an integer literal).
    pub time: Box<Expr>,
    /// Griddata (or point-function parameter) name.
    pub field: Ident,
    /// Spatial offsets.
    pub offsets: Vec<Expr>,
    /// Whole reference.
    pub span: Span,
}

/// An expression as written.
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
    /// Nodes on the longest path to a leaf (1 for a leaf), so that the parser can
    /// refuse trees too deep for the recursive passes that follow.
    pub height: usize,
}

impl Expr {
    /// A node, with its height computed from its children.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        let child = |e: &Expr| e.height;
        let max_of = |es: &[Expr]| es.iter().map(child).max().unwrap_or(0);
        let below = match &kind {
            ExprKind::Int(..) | ExprKind::Float(..) | ExprKind::Name(_) => 0,
            ExprKind::Index { indices, .. } => max_of(indices),
            ExprKind::Grid(g) => child(&g.time).max(max_of(&g.offsets)),
            ExprKind::Call { args, .. } => max_of(args),
            ExprKind::Cast(_, e) | ExprKind::Unary(_, e) => child(e),
            ExprKind::Binary(_, a, b) => child(a).max(child(b)),
            ExprKind::Select(a, b, c) => child(a).max(child(b)).max(child(c)),
        };
        Expr {
            kind,
            span,
            height: below + 1,
        }
    }
}

/// The forms of expression.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// Integer literal with its C type.
    Int(i64, ScalarType),
    /// Floating literal with its C type.
    Float(f64, ScalarType),
    /// A name.
    Name(Ident),
    /// `K[i][j]` — a table element.
    Index {
        /// The table.
        base: Ident,
        /// Indices.
        indices: Vec<Expr>,
    },
    /// A griddata element.
    Grid(GridRef),
    /// `f(x, y)`.
    Call {
        /// Callee.
        func: Ident,
        /// Arguments.
        args: Vec<Expr>,
    },
    /// `(double)x`.
    Cast(ScalarType, Box<Expr>),
    /// `-x`, `!x`.
    Unary(UnaryOp, Box<Expr>),
    /// `x + y` etc.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
}
