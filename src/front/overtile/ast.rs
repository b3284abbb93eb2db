//! The syntax tree of an OverTile program, as written, with spans.
//!
//! The parser builds it; `lower` checks names, ranks and ranges and turns it
//! into the SDSL syntax tree that the SDSL front-end's semantic analysis types
//! and validates.

use crate::front::ast::Ident;
use crate::ir::ScalarType;
use crate::source::Span;

/// `program NAME is grid N param* field* update*`.
#[derive(Clone, Debug)]
pub struct Program {
    /// The program's name.
    pub name: Ident,
    /// The grid's number of dimensions and where `grid N` is written.
    pub rank: (usize, Span),
    /// `param NAME TYPE`, in order.
    pub params: Vec<ParamDecl>,
    /// `field NAME TYPE in|out|inout`, in order.
    pub fields: Vec<FieldDecl>,
    /// The updates of one time step, in order.
    pub updates: Vec<Update>,
    /// From `program` to the end of the header (`is`).
    pub span: Span,
}

/// `param NAME TYPE`: a scalar the host passes in.
#[derive(Clone, Debug)]
pub struct ParamDecl {
    /// Name.
    pub name: Ident,
    /// `float` or `double`.
    pub ty: ScalarType,
    /// The whole declaration.
    pub span: Span,
}

/// The copy semantic of a field (OverTile parses it and its code generator
/// ignores it: every field is copied in and back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Copy {
    /// `in`
    In,
    /// `out`
    Out,
    /// `inout`
    InOut,
}

/// `field NAME TYPE in|out|inout`.
#[derive(Clone, Debug)]
pub struct FieldDecl {
    /// Name.
    pub name: Ident,
    /// `float` or `double`.
    pub ty: ScalarType,
    /// The copy semantic.
    pub copy: Copy,
    /// The whole declaration.
    pub span: Span,
}

/// `A = @[..] : e @[..] : e ...` (or the older `A[1:1][1:1] = e`): the
/// field's new values, one expression per range; the first range holding a
/// point gives its value.
#[derive(Clone, Debug)]
pub struct Update {
    /// The field written.
    pub target: Ident,
    /// The ranges and their expressions, in source order.
    pub pieces: Vec<Piece>,
    /// The whole update.
    pub span: Span,
}

/// `@[lo:hi][lo:hi] : expression`.
#[derive(Clone, Debug)]
pub struct Piece {
    /// One range per dimension, outermost first (as written).
    pub bounds: Vec<Bound>,
    /// Where the ranges are written.
    pub bounds_span: Span,
    /// The new value at each point of the ranges.
    pub value: Expr,
    /// The whole piece.
    pub span: Span,
}

/// `[lo:hi]` (or `[x]`, lo = hi): inclusive.
#[derive(Clone, Copy, Debug)]
pub struct Bound {
    /// First index.
    pub lo: BoundExpr,
    /// Last index.
    pub hi: BoundExpr,
    /// Where.
    pub span: Span,
}

/// An end of a range.
#[derive(Clone, Copy, Debug)]
pub enum BoundExpr {
    /// An index from the start: `1`.
    Index(i64, Span),
    /// An index from the end: `$` (the last index, `k` = 0) or `$-k`.
    FromEnd(i64, Span),
}

impl BoundExpr {
    /// Where it is written.
    pub fn span(self) -> Span {
        match self {
            BoundExpr::Index(_, s) | BoundExpr::FromEnd(_, s) => s,
        }
    }
}

/// An expression with its span and height (nodes on the longest path to a
/// leaf, 1 for a leaf).
#[derive(Clone, Debug)]
pub struct Expr {
    /// What it is.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
    /// Height of the tree.
    pub height: usize,
}

impl Expr {
    /// A node, its height computed from its children.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        let below = match &kind {
            ExprKind::Int(_)
            | ExprKind::Real(_)
            | ExprKind::Name(_)
            | ExprKind::FieldRef { .. } => 0,
            ExprKind::Call { args, .. } => args.iter().map(|a| a.height).max().unwrap_or(0),
            ExprKind::Binary(_, a, b) => a.height.max(b.height),
            ExprKind::Let { bindings, body } => bindings
                .iter()
                .map(|(_, v)| v.height)
                .max()
                .unwrap_or(0)
                .max(body.height),
        };
        Expr {
            kind,
            span,
            height: below + 1,
        }
    }
}

/// The four operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

/// The forms of expression.
#[derive(Clone, Debug)]
pub enum ExprKind {
    /// An integer literal (`1`, or `-1`: only integer literals take a sign).
    Int(i64),
    /// A floating literal.
    Real(f64),
    /// A name: a `let` variable or a parameter.
    Name(Ident),
    /// `A[0][-1]`: a field at an offset from the point, one per dimension.
    FieldRef {
        /// The field.
        field: Ident,
        /// The offsets, outermost first, with their spans.
        offsets: Vec<(i64, Span)>,
    },
    /// `sqrt(x)`.
    Call {
        /// The function.
        func: Ident,
        /// The arguments (at least one).
        args: Vec<Expr>,
    },
    /// `a + b`, `a - b`, `a * b`, `a / b`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `let x = e in let y = e in body`: the chain's bindings, each seeing
    /// the ones before it, and the body.
    Let {
        /// Name and value of each `let`, in order.
        bindings: Vec<(Ident, Expr)>,
        /// The expression after the last `in`.
        body: Box<Expr>,
    },
}
