//! Typed expressions and statements of the program IR.
//!
//! Types are explicit: the front-end inserts a [`ExprKind::Cast`] wherever C's usual
//! arithmetic conversions or an assignment would convert, so an evaluator or a
//! printer never has to re-derive C's promotion rules. Comparisons and the logical
//! operators yield `int` 0 or 1, as in C.

use crate::ir::types::{ScalarType, Value};
use crate::ir::{ConstId, FieldId, LocalId, ParamId, ReductionId, TableId};
use crate::source::Span;

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x` (yields `int`)
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (integer division truncates toward zero, as in C)
    Div,
    /// `%` (integers only; the sign follows the dividend, as in C)
    Rem,
    /// `<` (yields `int`)
    Lt,
    /// `<=` (yields `int`)
    Le,
    /// `>` (yields `int`)
    Gt,
    /// `>=` (yields `int`)
    Ge,
    /// `==` (yields `int`)
    Eq,
    /// `!=` (yields `int`)
    Ne,
    /// `&&`, short-circuit (yields `int`)
    And,
    /// `||`, short-circuit (yields `int`)
    Or,
}

impl BinaryOp {
    /// The C spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }

    /// Whether the result is a C truth value (`int` 0 or 1).
    pub fn is_boolean(self) -> bool {
        !matches!(
            self,
            BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem
        )
    }
}

/// The math functions callable from SDSL (C's `math.h`).
///
/// The unsuffixed forms take and return `double` (arguments are converted, as C
/// does); the `f`-suffixed forms take and return `float`. `Abs`/`Min`/`Max` on
/// integers are not provided: write `c ? a : b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    /// `sqrt`
    Sqrt,
    /// `fabs`
    Fabs,
    /// `exp`
    Exp,
    /// `log`
    Log,
    /// `pow` (two arguments)
    Pow,
    /// `sin`
    Sin,
    /// `cos`
    Cos,
    /// `tan`
    Tan,
    /// `fmin` (two arguments)
    Fmin,
    /// `fmax` (two arguments)
    Fmax,
    /// `floor`
    Floor,
    /// `ceil`
    Ceil,
}

impl MathFn {
    /// All functions, for name lookup.
    pub const ALL: [MathFn; 12] = [
        MathFn::Sqrt,
        MathFn::Fabs,
        MathFn::Exp,
        MathFn::Log,
        MathFn::Pow,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Fmin,
        MathFn::Fmax,
        MathFn::Floor,
        MathFn::Ceil,
    ];

    /// The `double` spelling (`sqrt`); the `float` one appends `f` (`sqrtf`).
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Fabs => "fabs",
            MathFn::Exp => "exp",
            MathFn::Log => "log",
            MathFn::Pow => "pow",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Fmin => "fmin",
            MathFn::Fmax => "fmax",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
        }
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Pow | MathFn::Fmin | MathFn::Fmax => 2,
            _ => 1,
        }
    }
}

/// A typed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Its type (after the conversions made explicit by the front-end).
    pub ty: ScalarType,
    /// Where the user wrote it (a default span for synthesised nodes).
    pub span: Span,
}

/// A reference to a griddata element: `[time]field[o0][o1]...`.
#[derive(Clone, Debug, PartialEq)]
pub struct GridRef {
    /// The field.
    pub field: FieldId,
    /// Time offset, within the field's declared offsets.
    pub time: i32,
    /// Spatial offset per axis, outermost axis first (as written). Each is an
    /// integer expression of literals, parameters, constants and loop variables.
    pub offset: Vec<Expr>,
}

/// The forms of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A literal.
    Literal(Value),
    /// A run-time parameter.
    Param(ParamId),
    /// A named constant (evaluated once per run from parameters and earlier constants).
    Const(ConstId),
    /// A point-function local variable or loop variable of the enclosing part.
    Local(LocalId),
    /// A read of a griddata element relative to the current point.
    Load(GridRef),
    /// A read of a coefficient table: `K[i][j]`, indices are integer expressions.
    Table {
        /// The table.
        table: TableId,
        /// One index per table dimension.
        index: Vec<Expr>,
    },
    /// The value of a reduction (only in the `check` condition).
    Reduction(ReductionId),
    /// A unary operation.
    Unary(UnaryOp, Box<Expr>),
    /// A binary operation; both operands already have the common type, except for
    /// `&&`/`||` whose operands are any scalars tested against zero.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `cond ? then : otherwise`; `then` and `otherwise` have the expression's type.
    Select {
        /// Tested against zero.
        cond: Box<Expr>,
        /// Value when true.
        then: Box<Expr>,
        /// Value when false.
        otherwise: Box<Expr>,
    },
    /// A math function call; `float_form` selects `sqrtf` over `sqrt`. Arguments
    /// already have the function's type.
    Call {
        /// The function.
        func: MathFn,
        /// Whether this is the `f`-suffixed (float) form.
        float_form: bool,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// A C conversion `(ty)arg` to the expression's type.
    Cast(Box<Expr>),
}

impl Expr {
    /// A new expression.
    pub fn new(kind: ExprKind, ty: ScalarType, span: Span) -> Expr {
        Expr { kind, ty, span }
    }

    /// A literal with a default span.
    pub fn literal(value: Value) -> Expr {
        Expr::new(ExprKind::Literal(value), value.ty(), Span::default())
    }

    /// Calls `f` on this expression and every sub-expression, parents first
    /// (including grid-reference offsets and table indices).
    pub fn visit(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Literal(_)
            | ExprKind::Param(_)
            | ExprKind::Const(_)
            | ExprKind::Local(_)
            | ExprKind::Reduction(_) => {}
            ExprKind::Load(r) => r.offset.iter().for_each(|e| e.visit(f)),
            ExprKind::Table { index, .. } => index.iter().for_each(|e| e.visit(f)),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => a.visit(f),
            ExprKind::Binary(_, a, b) => {
                a.visit(f);
                b.visit(f);
            }
            ExprKind::Select {
                cond,
                then,
                otherwise,
            } => {
                cond.visit(f);
                then.visit(f);
                otherwise.visit(f);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|e| e.visit(f)),
        }
    }
}

/// A statement in the body of a stencil part (point functions already inlined).
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// Assigns a local (declared in the part's local table). A declaration with
    /// an initializer becomes an `Assign`; one without becomes nothing (locals
    /// start at zero, unlike C where reading one would be undefined).
    Assign {
        /// The local.
        local: LocalId,
        /// The value, already of the local's type.
        value: Expr,
        /// Where.
        span: Span,
    },
    /// Writes a griddata element: `[t]f[o0][o1] = value`.
    Store {
        /// Target element.
        target: GridRef,
        /// The value, already of the field's type.
        value: Expr,
        /// Where.
        span: Span,
    },
    /// `for var in lo..hi { body }`, both ends inclusive, bounds known at compile time.
    For {
        /// The loop variable (an `int` local of the part).
        var: LocalId,
        /// First value.
        lo: i64,
        /// Last value (inclusive); the loop is empty when `hi < lo`.
        hi: i64,
        /// The body.
        body: Vec<Stmt>,
        /// Where.
        span: Span,
    },
}
