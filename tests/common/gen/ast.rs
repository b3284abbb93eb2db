//! The generated program's syntax tree: indices are resolved modulo what exists
//! when printed, so every value proptest shrinks to stays meaningful.

/// Which operations a generated program may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// Everything, `exp` included (bit-identical back-ends, or compile-only).
    Full,
    /// Only correctly rounded operations (no `exp`), so that a back-end whose
    /// transcendental functions differ by an ulp cannot flip a `floor` or a
    /// comparison and produce a large difference.
    CorrectlyRounded,
}

/// An element type of a field or a local.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `int`
    Int,
    /// `float`
    Float,
    /// `double`
    Double,
}

impl Ty {
    pub(super) fn word(self) -> &'static str {
        match self {
            Ty::Int => "int",
            Ty::Float => "float",
            Ty::Double => "double",
        }
    }
}

/// A field's boundary mode (`None` is `boundary none`, written as no clause).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// No clause: reads must stay inside the grid.
    None,
    /// `boundary clamp`
    Clamp,
    /// `boundary mirror`
    Mirror,
    /// `boundary periodic`
    Periodic,
    /// `boundary zero`
    Zero,
}

/// `T griddata fK on g at ... boundary ...;`
#[derive(Clone, Debug)]
pub struct GenField {
    /// Element type.
    pub ty: Ty,
    /// 1 (`at 0`), 2 (`at 0,1`) or 3 (`at -1,0,1`).
    pub levels: usize,
    /// Boundary mode.
    pub boundary: Boundary,
}

impl GenField {
    pub(super) fn time_lo(&self) -> i32 {
        if self.levels == 3 {
            -1
        } else {
            0
        }
    }
    /// The level index (0-based) that stencils write: the highest.
    pub(super) fn written(&self) -> usize {
        self.levels - 1
    }
}

/// A one-argument math function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Math1 {
    /// `fabs(x)`
    Fabs,
    /// `sqrt(fabs(x))`
    SqrtFabs,
    /// `floor(x)`
    Floor,
    /// `exp(x / (2 + x*x))`: the argument stays within ±0.36.
    ExpSmall,
}

/// A comparison for `?:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `!=`
    Ne,
    /// `==`
    Eq,
}

impl Cmp {
    pub(super) fn symbol(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Gt => ">",
            Cmp::Ge => ">=",
            Cmp::Ne => "!=",
            Cmp::Eq => "==",
        }
    }
}

/// A logical operator over comparisons (each yields the `int` 0 or 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logic {
    /// `((a c b) && (c c d))`
    And,
    /// `((a c b) || (c c d))`
    Or,
    /// `(!(a c b))`: the second comparison is not printed.
    Not,
}

/// An expression; indices are resolved modulo what exists when printed.
#[derive(Clone, Debug)]
pub enum GenExpr {
    /// `[t]f[o0][o1]...`
    Read {
        /// Field (modulo the field count).
        field: usize,
        /// Level index (modulo the field's levels).
        level: usize,
        /// Offsets per axis, outermost first (only the grid's rank are used).
        offset: [i8; 3],
    },
    /// A floating literal; `suffix` writes `f` (a float literal).
    Lit(i8, bool),
    /// A small integer literal.
    IntLit(u8),
    /// The `double` parameter `alpha`.
    Alpha,
    /// A constant (modulo the constant count; a literal when there are none).
    Const(usize),
    /// A local of the enclosing point function (a literal outside one).
    Local(usize),
    /// `-x`
    Neg(Box<GenExpr>),
    /// `a + b`
    Add(Box<GenExpr>, Box<GenExpr>),
    /// `a - b`
    Sub(Box<GenExpr>, Box<GenExpr>),
    /// `a * b`
    Mul(Box<GenExpr>, Box<GenExpr>),
    /// `a / (2 + b*b)`
    SafeDiv(Box<GenExpr>, Box<GenExpr>),
    /// A one-argument function; `bool` picks the `f`-suffixed spelling.
    Math1(Math1, bool, Box<GenExpr>),
    /// `fmin(a, b)` (`true`) or `fmax(a, b)`; the second `bool` picks `f`.
    MinMax(bool, bool, Box<GenExpr>, Box<GenExpr>),
    /// `(a CMP b) ? c : d`
    Select(Cmp, Box<[GenExpr; 4]>),
    /// Comparisons combined by `&&`, `||` or `!`, an `int` 0 or 1 used as a
    /// value.
    Logic(Logic, [Cmp; 2], Box<[GenExpr; 4]>),
    /// `((int)(a) / (int)(b))`, `%` when `rem`, in `long` when `long`: integer
    /// division by any value, zero, -1 and `MIN` included (the operands are
    /// conversions that may be out of range, which saturate).
    IntDiv {
        rem: bool,
        long: bool,
        a: Box<GenExpr>,
        b: Box<GenExpr>,
    },
    /// `[t]f[k * scale][0]`: a read at an offset that depends on the parameter
    /// `k` (legal only for a field with a boundary mode that the stencil does
    /// not write; otherwise printed at offset zero). `scale` may make the offset
    /// wrap around in `int`.
    ParamRead {
        field: usize,
        level: usize,
        scale: i32,
    },
    /// `((int)((a) * 1.0e10))` (`long`: `* 1.0e19`): a conversion that is
    /// usually out of range.
    BigCast(bool, Box<GenExpr>),
}

/// How a stored float value is kept finite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    /// As computed.
    Raw,
    /// `fmin(fmax(e, -8), 8)`
    Clamp,
    /// `e / (1 + fabs(e))`
    Squash,
}

/// One axis of a subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisSel {
    /// `[lo : n-1-hi]`, widened inwards where `none` reads need it.
    Range(u8, u8),
    /// `[0]`
    First,
    /// `[n-1]`
    Last,
    /// `[n/2]`
    Middle,
}

/// `[t]f[0]... = value;` (the target level is the field's highest).
#[derive(Clone, Debug)]
pub struct Assign {
    /// Target field (modulo the field count).
    pub target: usize,
    /// The value.
    pub value: GenExpr,
    /// How it is kept finite.
    pub wrap: Wrap,
}

/// `for i in -R..R { acc = acc + K[i + R] * [t]f[..i..]; }`
#[derive(Clone, Debug)]
pub struct GenLoop {
    /// Radius R (1 or 2).
    pub radius: u8,
    /// The axis the loop variable offsets.
    pub axis: usize,
    /// The field read (modulo the field count).
    pub field: usize,
    /// Its level (modulo its levels).
    pub level: usize,
}

/// What a stencil part does.
#[derive(Clone, Debug)]
pub enum PartBody {
    /// One assignment, written directly in the part.
    Assign(Assign),
    /// A call of a point function with locals, an optional loop and assignments.
    Call {
        /// Locals: type and optional initializer (may use earlier locals).
        locals: Vec<(Ty, Option<GenExpr>)>,
        /// The accumulating loop (into an extra `double acc`).
        looped: Option<GenLoop>,
        /// Assignments to griddata (may use every local and `acc`).
        assigns: Vec<Assign>,
        /// The call passes the fields rotated by this much.
        rotate: usize,
    },
}

/// `subset : body;`
#[derive(Clone, Debug)]
pub struct GenPart {
    /// One selection per axis (outermost first).
    pub subset: [AxisSel; 3],
    /// What it does.
    pub body: PartBody,
}

/// A reduction operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedOp {
    /// `max`
    Max,
    /// `min`
    Min,
    /// `+`, over `fabs(term)` so that the sum has no cancellation.
    Sum,
}

/// `reduction rK op { subset : expr; ... }`
#[derive(Clone, Debug)]
pub struct GenReduction {
    /// Operator.
    pub op: RedOp,
    /// Parts.
    pub parts: Vec<([AxisSel; 3], GenExpr)>,
}

/// A second grid `h` of the same rank, each axis `max(1, n + delta)` points
/// (`int mK;` parameters), on which some read-only fields lie: a read of such
/// a field at a point of `g` beyond `h`'s size takes the field's boundary mode.
#[derive(Clone, Copy, Debug)]
pub struct SecondGrid {
    /// Size difference from `g` per axis (outermost first), -3 to 2.
    pub deltas: [i8; 3],
    /// Bit `f` asks for field `f` on `h`; granted when no stencil writes the
    /// field and, for a `boundary none` field, `h` is nowhere smaller.
    pub fields: u8,
}

/// A whole generated program.
#[derive(Clone, Debug)]
pub struct GenProgram {
    /// Which operations appear.
    pub flavor: Flavor,
    /// Grid size per axis (outermost first); the length is the rank.
    pub sizes: Vec<i64>,
    /// Value of the `double alpha` parameter.
    pub alpha: f64,
    /// Fields.
    pub fields: Vec<GenField>,
    /// Constants: `double`/`float` constants with literal values (tenths).
    pub constants: Vec<(Ty, i8)>,
    /// A 1-D coefficient table `K[5]` (values in tenths), if any.
    pub table: Option<(Ty, [i8; 5])>,
    /// Stencils, each a list of parts.
    pub stencils: Vec<Vec<GenPart>>,
    /// Reductions.
    pub reductions: Vec<GenReduction>,
    /// `check (rK < T) every E iterations`: (reduction index, T in tenths, E).
    pub check: Option<(usize, i8, u8)>,
    /// Iterate count.
    pub iterations: u8,
    /// A second grid holding some read-only fields.
    pub second: Option<SecondGrid>,
}
