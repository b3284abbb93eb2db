//! Boundary modes in generated C: how far a part reads outside its points (its
//! reach), which decides the peeled border, and the inline helpers that resolve an
//! index outside the grid in the border loops.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::Footprint;
use crate::ir::{BoundaryMode, Expr, GridId, Program, Stmt};

/// How far the reads of fields with a boundary mode reach from the current point.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Reach {
    /// No field with a boundary mode is read: nothing to peel.
    Inside,
    /// Per grid, per axis: (lowest offset, highest offset), widened to include 0.
    Known(BTreeMap<GridId, Vec<(i64, i64)>>),
    /// Some offset is not known when the C is written (it uses a parameter):
    /// every read of a field with a boundary mode is resolved at every point.
    Unknown,
}

impl Reach {
    /// Reads only at offset zero stay inside the grid (subsets lie inside their
    /// grid, which is checked before a run): nothing to peel.
    fn simplified(self) -> Reach {
        match &self {
            Reach::Known(map) if map.values().all(|axes| axes.iter().all(|&r| r == (0, 0))) => {
                Reach::Inside
            }
            _ => self,
        }
    }

    fn merge(&mut self, grid: GridId, offsets: Option<Vec<(i64, i64)>>) {
        let Some(offsets) = offsets else {
            *self = Reach::Unknown;
            return;
        };
        match self {
            Reach::Unknown => {}
            Reach::Inside => {
                let mut map = BTreeMap::new();
                map.insert(
                    grid,
                    offsets
                        .iter()
                        .map(|&(lo, hi)| (lo.min(0), hi.max(0)))
                        .collect(),
                );
                *self = Reach::Known(map);
            }
            Reach::Known(map) => {
                let entry = map
                    .entry(grid)
                    .or_insert_with(|| vec![(0, 0); offsets.len()]);
                for (have, &(lo, hi)) in entry.iter_mut().zip(&offsets) {
                    have.0 = have.0.min(lo);
                    have.1 = have.1.max(hi);
                }
            }
        }
    }
}

/// The reach of a list of statements (a stencil part's body).
pub(super) fn reach_of_body(program: &Program, body: &[Stmt]) -> Reach {
    reach_of(program, &Footprint::of_body(program, body))
}

/// The reach of one expression (a reduction part's value).
pub(super) fn reach_of_expr(program: &Program, value: &Expr) -> Reach {
    reach_of(program, &Footprint::of_expr(program, value))
}

/// The reach of the reads of fields with a boundary mode, from the shared
/// footprint analysis (offsets over the loops' ranges; unknown when an offset
/// depends on a parameter or is not affine).
fn reach_of(program: &Program, footprint: &Footprint) -> Reach {
    let mut reach = Reach::Inside;
    for extent in &footprint.reads {
        let field = &program.fields[extent.field.0];
        if field.boundary != BoundaryMode::None {
            reach.merge(field.grid, extent.static_box());
        }
    }
    reach.simplified()
}

/// The value of an integer expression made of literals only, if it is one,
/// computed in its own type by the shared evaluator.
pub(super) fn constant(e: &Expr) -> Option<i64> {
    crate::ir::eval::integer_literal(e)
}

/// An inline C helper that generated code may need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Helper {
    /// `sdsl_min`/`sdsl_max` on `long`, for loop bounds.
    MinMax,
    /// `sdsl_clamp(i, n)`.
    Clamp,
    /// `sdsl_mirror(i, n)`.
    Mirror,
    /// `sdsl_periodic(i, n)`.
    Periodic,
    /// `sdsl_inside(i, n)`.
    Inside,
}

impl Helper {
    /// The helper that resolves an index for a mode (`None` for zero and none).
    pub(super) fn for_mode(mode: BoundaryMode) -> Option<Helper> {
        match mode {
            BoundaryMode::Clamp => Some(Helper::Clamp),
            BoundaryMode::Mirror => Some(Helper::Mirror),
            BoundaryMode::Periodic => Some(Helper::Periodic),
            BoundaryMode::Zero | BoundaryMode::None => None,
        }
    }

    /// The C function's name.
    pub(super) fn name(self) -> &'static str {
        match self {
            Helper::MinMax => "sdsl_max",
            Helper::Clamp => "sdsl_clamp",
            Helper::Mirror => "sdsl_mirror",
            Helper::Periodic => "sdsl_periodic",
            Helper::Inside => "sdsl_inside",
        }
    }

    /// The C definition.
    fn definition(self) -> &'static str {
        match self {
            Helper::MinMax => {
                "static inline long sdsl_min(long a, long b) { return a < b ? a : b; }\n\
                 static inline long sdsl_max(long a, long b) { return a > b ? a : b; }\n"
            }
            Helper::Clamp => {
                "/* boundary clamp: the nearest edge element */\n\
                 static inline long sdsl_clamp(long i, long n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }\n"
            }
            Helper::Mirror => {
                "/* boundary mirror: reflected without repeating the edge (-1 reads 1) */\n\
                 static inline long sdsl_mirror(long i, long n)\n\
                 {\n\
                 \x20   long period, m;\n\
                 \x20   if (i >= 0 && i < n) return i;\n\
                 \x20   if (n == 1) return 0;\n\
                 \x20   period = 2 * (n - 1);\n\
                 \x20   m = i % period;\n\
                 \x20   if (m < 0) m += period;\n\
                 \x20   return m < n ? m : period - m;\n\
                 }\n"
            }
            Helper::Periodic => {
                "/* boundary periodic: wrapped around (-1 reads n-1) */\n\
                 static inline long sdsl_periodic(long i, long n)\n\
                 {\n\
                 \x20   long m = i % n;\n\
                 \x20   return m < 0 ? m + n : m;\n\
                 }\n"
            }
            Helper::Inside => {
                "/* boundary zero: reads outside the grid give 0 */\n\
                 static inline int sdsl_inside(long i, long n) { return i >= 0 && i < n; }\n"
            }
        }
    }
}

/// The C definitions of the helpers used, in a fixed order.
pub(super) fn helper_definitions(used: &BTreeSet<Helper>) -> String {
    used.iter()
        .map(|h| h.definition())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{BinaryOp, ExprKind, ScalarType, Value};
    use crate::source::{SourceFile, Span};

    fn sum(a: Value, b: Value) -> Expr {
        let lit = |v: Value| Box::new(Expr::new(ExprKind::Literal(v), v.ty(), Span::default()));
        Expr::new(
            ExprKind::Binary(BinaryOp::Add, lit(a), lit(b)),
            a.ty(),
            Span::default(),
        )
    }

    #[test]
    fn constant_offsets_wrap_in_their_own_type() {
        // Computed in 64 bits, `int` offsets gave another element than the other
        // back-ends, and `long` ones panicked on overflow.
        let int = sum(Value::Int(i32::MAX), Value::Int(1));
        assert_eq!(constant(&int), Some(i64::from(i32::MIN)));
        let long = sum(Value::Long(i64::MAX), Value::Long(1));
        assert_eq!(constant(&long), Some(i64::MIN));
        let float = sum(Value::Double(1.0), Value::Double(2.0));
        assert_eq!(float.ty, ScalarType::Double);
        assert_eq!(constant(&float), None);
    }

    #[test]
    fn reach_follows_named_constants_through_the_footprint() {
        let text = "int n;\nconst int R = 2;\ngrid g[n];\n\
                    float griddata a on g at 0,1 boundary clamp;\n\
                    iterate 1 {\n  stencil s {\n    [0:n-1] : [1]a[0] = [0]a[-R] + [0]a[1];\n  }\n}\n";
        let program =
            crate::front::parse_program(SourceFile::new("reach.sdsl", text)).expect("compiles");
        let part = &program.iterate.as_ref().expect("an iterate").stencils[0].parts[0];
        let reach = reach_of_body(&program, &part.body);
        let grid = program.fields[0].grid;
        assert_eq!(
            reach,
            Reach::Known(BTreeMap::from([(grid, vec![(-2, 1)])])),
            "the offset `-R` is known from the constant"
        );
    }
}
