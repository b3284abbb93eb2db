//! Boundary modes in generated C: how far a part reads outside its points (its
//! reach), which decides the peeled border, and the inline helpers that resolve an
//! index outside the grid in the border loops.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::Footprint;
use crate::ir::{BoundaryMode, Expr, GridId, Program, Stmt, Value};
pub(super) use crate::kir::helpers::Helper;
use crate::kir::helpers::{self, Spelling};

/// The largest reach (per axis and direction) peeled as a border; farther reads
/// are resolved at every point.
const MAX_PEELED_REACH: i64 = 1 << 31;

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
    /// Reads only at offset zero of fields on the grid that holds the point
    /// stay inside it (subsets lie inside their grid, which is checked before
    /// a run): nothing to peel. A field on another grid read at offset zero
    /// keeps its entry: that grid may be smaller.
    fn simplified(self, program: &Program, point_grid: Option<GridId>) -> Reach {
        match &self {
            Reach::Known(map)
                if map.iter().all(|(&grid, axes)| {
                    program.holds_point(point_grid, grid) && axes.iter().all(|&r| r == (0, 0))
                }) =>
            {
                Reach::Inside
            }
            _ => self,
        }
    }

    fn merge(&mut self, grid: GridId, offsets: Option<Vec<(i64, i64)>>) {
        // Peeling a border wider than any grid axis gains nothing, and its loop
        // bounds (grid size minus reach) could overflow: resolve every read.
        let offsets = offsets.filter(|o| {
            o.iter()
                .all(|&(lo, hi)| lo >= -MAX_PEELED_REACH && hi <= MAX_PEELED_REACH)
        });
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

/// The reach of a stencil part's body, its points on `point_grid` (the grid
/// it writes, when it writes one; see [`Program::holds_point`]).
pub(super) fn reach_of_body(program: &Program, body: &[Stmt], point_grid: Option<GridId>) -> Reach {
    reach_of(program, &Footprint::of_body(program, body), point_grid)
}

/// The reach of one expression (a reduction part's value; its points lie on
/// no grid it writes).
pub(super) fn reach_of_expr(program: &Program, value: &Expr) -> Reach {
    reach_of(program, &Footprint::of_expr(program, value), None)
}

/// The reach of the reads of fields with a boundary mode, from the shared
/// footprint analysis (offsets over the loops' ranges; unknown when an offset
/// depends on a parameter or is not affine).
fn reach_of(program: &Program, footprint: &Footprint, point_grid: Option<GridId>) -> Reach {
    let mut reach = Reach::Inside;
    for extent in &footprint.reads {
        let field = &program.fields[extent.field.0];
        if field.boundary != BoundaryMode::None {
            reach.merge(field.grid, extent.static_box());
        }
    }
    reach.simplified(program, point_grid)
}

/// The value of an integer offset expression when it is known as the C is
/// written, computed in its type as the program computes it.
pub(super) fn constant(program: &Program, e: &Expr) -> Option<i64> {
    if e.ty.is_float() {
        return None;
    }
    helpers::known_value(program, e, &|_| None).map(Value::as_i64)
}

/// The C definitions of the helpers used, in a fixed order.
pub(super) fn helper_definitions(used: &BTreeSet<Helper>) -> String {
    helpers::definitions(used.iter().copied(), Spelling::C)
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
        let text = "int n;\ngrid g[n];\nfloat griddata a on g at 0;\n";
        let program =
            crate::front::parse_program(SourceFile::new("wrap.sdsl", text)).expect("compiles");
        let int = sum(Value::Int(i32::MAX), Value::Int(1));
        assert_eq!(constant(&program, &int), Some(i64::from(i32::MIN)));
        let long = sum(Value::Long(i64::MAX), Value::Long(1));
        assert_eq!(constant(&program, &long), Some(i64::MIN));
        let float = sum(Value::Double(1.0), Value::Double(2.0));
        assert_eq!(float.ty, ScalarType::Double);
        assert_eq!(constant(&program, &float), None);
    }

    #[test]
    fn reach_follows_named_constants_through_the_footprint() {
        let text = "int n;\nconst int R = 2;\ngrid g[n];\n\
                    float griddata a on g at 0,1 boundary clamp;\n\
                    iterate 1 {\n  stencil s {\n    [0:n-1] : [1]a[0] = [0]a[-R] + [0]a[1];\n  }\n}\n";
        let program =
            crate::front::parse_program(SourceFile::new("reach.sdsl", text)).expect("compiles");
        let part = &program.iterate.as_ref().expect("an iterate").stencils[0].parts[0];
        let grid = program.fields[0].grid;
        let reach = reach_of_body(&program, &part.body, Some(grid));
        assert_eq!(
            reach,
            Reach::Known(BTreeMap::from([(grid, vec![(-2, 1)])])),
            "the offset `-R` is known from the constant"
        );
    }

    #[test]
    fn a_read_at_offset_zero_of_a_field_on_another_grid_reaches_it() {
        let text = "int n;\nint m;\ngrid ga[n];\ngrid gb[m];\n\
                    float griddata a on ga at 0,1;\nfloat griddata b on gb at 0 boundary clamp;\n\
                    iterate 1 {\n  stencil s {\n    [0:n-1] : [1]a[0] = [0]b[0];\n  }\n}\n";
        let program =
            crate::front::parse_program(SourceFile::new("two.sdsl", text)).expect("compiles");
        let part = &program.iterate.as_ref().expect("an iterate").stencils[0].parts[0];
        let (ga, gb) = (program.fields[0].grid, program.fields[1].grid);
        // The points lie on `ga`: `b` on `gb` may be smaller, so the loops are
        // bounded by its size too.
        assert_eq!(
            reach_of_body(&program, &part.body, Some(ga)),
            Reach::Known(BTreeMap::from([(gb, vec![(0, 0)])]))
        );
        // Had the points been on `gb`, nothing would reach outside.
        assert_eq!(reach_of_body(&program, &part.body, Some(gb)), Reach::Inside);
    }
}
