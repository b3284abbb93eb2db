//! The program: declarations, stencils, reductions and the iterate.

use std::sync::Arc;

use crate::ir::expr::{Expr, Stmt};
use crate::ir::types::{ScalarType, Value};
use crate::ir::{GridId, LocalId, ScheduleHints};
use crate::source::{SourceFile, Span};

/// A validated SDSL program (one `.sdsl` file or one embedded region).
///
/// Ids (`ParamId(i)` …) index the vectors here. Everything a user wrote keeps its
/// span into [`Program::source`].
#[derive(Clone, Debug)]
pub struct Program {
    /// The source the spans point into.
    pub source: Arc<SourceFile>,
    /// A name for generated code: the file stem, or `<stem>_region<N>` for regions.
    pub name: String,
    /// Run-time parameters, in declaration order.
    pub params: Vec<Param>,
    /// Named constants, in declaration order (each may use earlier ones and params).
    pub constants: Vec<Constant>,
    /// Grids.
    pub grids: Vec<Grid>,
    /// Griddata.
    pub fields: Vec<Field>,
    /// Coefficient tables (extension).
    pub tables: Vec<Table>,
    /// The iterate; `None` for a program that declares data only.
    pub iterate: Option<Iterate>,
    /// Options from the region's `#pragma sdsl begin` line, if any.
    pub hints: ScheduleHints,
}

impl Program {
    /// Whether a point lies in `grid`, the point being one of a subset on
    /// `point_grid` (the grid of the levels a stencil part writes) when that
    /// is known, else of a subset on the only grid of `grid`'s rank (subsets
    /// lie inside their grids). A read at offset zero of a field on a grid
    /// that does not hold the point may fall outside it (that grid may be
    /// smaller) and takes the field's boundary mode.
    pub fn holds_point(&self, point_grid: Option<GridId>, grid: GridId) -> bool {
        match point_grid {
            Some(own) => own == grid,
            None => {
                let rank = self.grids[grid.0].rank();
                self.grids.iter().filter(|g| g.rank() == rank).count() == 1
            }
        }
    }
}

/// A parameter, bound to a value when the program runs.
#[derive(Clone, Debug)]
pub struct Param {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: ScalarType,
    /// Where declared.
    pub span: Span,
}

/// A named constant: `double sigma2 = sigma*sigma;`.
#[derive(Clone, Debug)]
pub struct Constant {
    /// Name.
    pub name: String,
    /// Type.
    pub ty: ScalarType,
    /// Value, of type `ty`, using only literals, parameters and earlier constants.
    pub value: Expr,
    /// Where declared.
    pub span: Span,
}

/// A rectangular grid of 1 to 3 dimensions.
#[derive(Clone, Debug)]
pub struct Grid {
    /// Name.
    pub name: String,
    /// Size per axis, outermost first (as written: `grid g[dim1][dim0]`), each an
    /// integer expression of literals, parameters and constants.
    pub dims: Vec<Expr>,
    /// Where declared.
    pub span: Span,
}

impl Grid {
    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }
}

/// What a read outside the grid returns (extension; SDSL itself has only `None`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BoundaryMode {
    /// Reading outside the grid is an error.
    #[default]
    None,
    /// The nearest edge element: index -1 reads 0, index n reads n-1.
    Clamp,
    /// Reflected without repeating the edge: index -1 reads 1, index n reads n-2.
    Mirror,
    /// Wrapped around: index -1 reads n-1, index n reads 0.
    Periodic,
    /// Zero.
    Zero,
}

impl BoundaryMode {
    /// The SDSL spelling.
    pub fn name(self) -> &'static str {
        match self {
            BoundaryMode::None => "none",
            BoundaryMode::Clamp => "clamp",
            BoundaryMode::Mirror => "mirror",
            BoundaryMode::Periodic => "periodic",
            BoundaryMode::Zero => "zero",
        }
    }

    /// Maps an index `i` (possibly outside `0..n`) to the element it reads, or
    /// `None` when it reads zero (`Zero`) or is an error (`None`). For `Mirror`
    /// and `Periodic` any distance is folded back; `Mirror` on `n == 1` reads 0.
    pub fn resolve(self, i: i64, n: i64) -> Option<i64> {
        if (0..n).contains(&i) {
            return Some(i);
        }
        match self {
            BoundaryMode::None | BoundaryMode::Zero => None,
            BoundaryMode::Clamp => Some(i.clamp(0, n - 1)),
            BoundaryMode::Periodic => Some(i.rem_euclid(n)),
            BoundaryMode::Mirror => {
                if n == 1 {
                    return Some(0);
                }
                let period = 2 * (n - 1);
                let m = i.rem_euclid(period);
                Some(if m < n { m } else { period - m })
            }
        }
    }
}

/// Griddata: `float griddata a on g at 0,1 boundary clamp;`.
#[derive(Clone, Debug)]
pub struct Field {
    /// Name.
    pub name: String,
    /// Element type.
    pub ty: ScalarType,
    /// The grid it lives on.
    pub grid: GridId,
    /// Lowest declared time offset (e.g. -1 for `at -1,0,1`).
    pub time_lo: i32,
    /// Highest declared time offset.
    pub time_hi: i32,
    /// What reads outside the grid return.
    pub boundary: BoundaryMode,
    /// Where declared.
    pub span: Span,
}

impl Field {
    /// Number of time levels (buffers) the field has.
    pub fn levels(&self) -> usize {
        (self.time_hi - self.time_lo + 1) as usize
    }

    /// Index into the field's level buffers for a time offset (`time - time_lo`).
    pub fn level_of(&self, time: i32) -> usize {
        (time - self.time_lo) as usize
    }

    /// The time offset whose buffer holds the newest values after a run: the level
    /// written as `[time_hi]` in the last iteration, which rotation moved to
    /// `time_hi - 1` (or the only level of a one-level field).
    pub fn newest_offset(&self) -> i32 {
        if self.levels() > 1 {
            self.time_hi - 1
        } else {
            self.time_hi
        }
    }
}

/// A read-only coefficient table: `const float K[3][3] = {{...}};` (extension).
#[derive(Clone, Debug)]
pub struct Table {
    /// Name.
    pub name: String,
    /// Element type.
    pub ty: ScalarType,
    /// Extent per dimension, outermost first (1 to 3 dimensions).
    pub shape: Vec<usize>,
    /// Elements in row-major order, each already of type `ty`.
    pub values: Vec<Value>,
    /// Where declared.
    pub span: Span,
}

/// `iterate N { stencils; reductions } check (cond) every K iterations`.
#[derive(Clone, Debug)]
pub struct Iterate {
    /// Maximum number of iterations (integer expression of params and constants).
    pub max_iters: Expr,
    /// Stencils, run in order every iteration.
    pub stencils: Vec<Stencil>,
    /// Reductions, evaluated in order at the end of every checked iteration.
    pub reductions: Vec<Reduction>,
    /// The convergence check, if any.
    pub check: Option<Check>,
    /// Where the `iterate` keyword is.
    pub span: Span,
}

/// `check (cond) every K iterations`.
#[derive(Clone, Debug)]
pub struct Check {
    /// Stops the iterate when true (non-zero); uses reductions, params, constants, literals.
    pub cond: Expr,
    /// Check every this many iterations (integer expression of params and constants).
    pub every: Expr,
    /// Where.
    pub span: Span,
}

/// A stencil: a list of (subset, statements) parts, all computed from the state
/// before the stencil started.
#[derive(Clone, Debug)]
pub struct Stencil {
    /// Name.
    pub name: String,
    /// Its parts, in source order.
    pub parts: Vec<StencilPart>,
    /// Where the stencil is declared.
    pub span: Span,
}

/// One `subset : statement;` of a stencil, with point-function calls inlined.
#[derive(Clone, Debug)]
pub struct StencilPart {
    /// The points it runs at.
    pub subset: Subset,
    /// Locals and loop variables used by `body` (from inlined point functions).
    pub locals: Vec<Local>,
    /// The statements run at each point.
    pub body: Vec<Stmt>,
    /// Where the part is written.
    pub span: Span,
}

impl StencilPart {
    /// The type of a local.
    pub fn local_ty(&self, id: LocalId) -> ScalarType {
        self.locals[id.0].ty
    }
}

/// A local variable or loop variable of a stencil part.
#[derive(Clone, Debug)]
pub struct Local {
    /// Name as written (not unique across inlined functions).
    pub name: String,
    /// Type (`int` for loop variables).
    pub ty: ScalarType,
    /// Where declared.
    pub span: Span,
}

/// A box of grid points: per axis an inclusive range `[lo:hi]` (or `[x]`, lo = hi).
#[derive(Clone, Debug)]
pub struct Subset {
    /// Per axis, outermost first: inclusive bounds, integer expressions of
    /// literals, parameters and constants.
    pub ranges: Vec<(Expr, Expr)>,
    /// Where.
    pub span: Span,
}

impl Subset {
    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.ranges.len()
    }
}

/// The combining operator of a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `+`
    Sum,
    /// `*`
    Product,
    /// `max`
    Max,
    /// `min`
    Min,
}

impl ReduceOp {
    /// The SDSL spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            ReduceOp::Sum => "+",
            ReduceOp::Product => "*",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }

    /// The identity element: 0, 1, the lowest value, the highest value.
    pub fn identity(self, ty: ScalarType) -> Value {
        match self {
            ReduceOp::Sum => Value::Int(0).cast(ty),
            ReduceOp::Product => Value::Int(1).cast(ty),
            ReduceOp::Max => match ty {
                ScalarType::Int => Value::Int(i32::MIN),
                ScalarType::Long => Value::Long(i64::MIN),
                ScalarType::Float => Value::Float(f32::NEG_INFINITY),
                ScalarType::Double => Value::Double(f64::NEG_INFINITY),
            },
            ReduceOp::Min => match ty {
                ScalarType::Int => Value::Int(i32::MAX),
                ScalarType::Long => Value::Long(i64::MAX),
                ScalarType::Float => Value::Float(f32::INFINITY),
                ScalarType::Double => Value::Double(f64::INFINITY),
            },
        }
    }
}

/// `reduction name op { subset : expr; ... }`.
#[derive(Clone, Debug)]
pub struct Reduction {
    /// Name, usable in the check.
    pub name: String,
    /// Combining operator.
    pub op: ReduceOp,
    /// Type of the result (the common type of the part expressions).
    pub ty: ScalarType,
    /// The parts: each a subset and the value at each of its points, of type `ty`.
    pub parts: Vec<ReductionPart>,
    /// Where declared.
    pub span: Span,
}

/// One `subset : expr;` of a reduction.
#[derive(Clone, Debug)]
pub struct ReductionPart {
    /// Points.
    pub subset: Subset,
    /// Value at each point (no locals).
    pub value: Expr,
    /// Where.
    pub span: Span,
}
