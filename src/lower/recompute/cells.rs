//! The cells of a tile the block's threads compute or load in a fused
//! kernel's recompute phase, and the loop nest that strides over them.

use super::Shape;
use crate::ir::{BinaryOp, BoundaryMode};
use crate::kir::{Helper, KExpr, KStmt, Var};
use crate::lower::point::{in_range, PointCtx};
use crate::lower::stencil::AxisVars;
use crate::lower::strided::{strided_nest, Stride};

/// A tile's extent per axis, outermost first.
pub(super) fn extents(shape: &Shape, halo: &[(i64, i64)]) -> Vec<usize> {
    (0..shape.rank)
        .map(|a| {
            let d = shape.rank - 1 - a;
            (shape.per_block[d] as usize).saturating_add(halo[a].1.abs_diff(halo[a].0) as usize)
        })
        .collect()
}

/// The cells of a tile the block's threads stride over: a cell variable per
/// thread axis, each thread starting at its index and stepping by the block
/// (see [`Cells::nest`]).
pub(super) struct Cells {
    /// Loop variables by thread axis.
    pub(super) locals: Vec<Var>,
    /// Extents, outermost first.
    pub(super) extents: Vec<usize>,
    /// Offset of the tile's first cell from the block's first point, outermost first.
    pub(super) origin: Vec<i64>,
    /// The grid of the level.
    pub(super) grid: crate::ir::GridId,
}

impl Cells {
    pub(super) fn new(
        ctx: &mut PointCtx<'_>,
        shape: &Shape,
        halo: &[(i64, i64)],
        field: crate::ir::FieldId,
    ) -> Cells {
        Cells {
            locals: (0..shape.rank)
                .map(|d| ctx.params.vars.temp_int(format!("l{}", ["x", "y", "z"][d])))
                .collect(),
            extents: extents(shape, halo),
            origin: halo.iter().map(|h| h.0).collect(),
            grid: ctx.program.fields[field.0].grid,
        }
    }

    /// The cell's grid coordinate per axis (outermost first), before any
    /// boundary mapping.
    pub(super) fn at(&self, vars: &[AxisVars]) -> Vec<KExpr> {
        let rank = self.locals.len();
        (0..rank)
            .map(|a| {
                let d = rank - 1 - a;
                KExpr::plus(
                    KExpr::plus(KExpr::var(vars[d].base), KExpr::int(self.origin[a])),
                    KExpr::var(self.locals[d]),
                )
            })
            .collect()
    }

    /// The cell's index in the tile, outermost first.
    pub(super) fn tile_index(&self) -> Vec<KExpr> {
        let rank = self.locals.len();
        (0..rank)
            .map(|a| KExpr::var(self.locals[rank - 1 - a]))
            .collect()
    }

    /// The coordinates to read for cell coordinates `at` under `mode`, and for
    /// zero and none the test that the cell is inside the grid.
    pub(super) fn mapped(
        &self,
        ctx: &mut PointCtx<'_>,
        at: &[KExpr],
        mode: BoundaryMode,
    ) -> (Vec<KExpr>, Option<KExpr>) {
        let mut inside: Option<KExpr> = None;
        let mut coords = Vec::new();
        for (a, g) in at.iter().enumerate() {
            let n = ctx.params.grid_size(ctx.program, self.grid, a);
            match Helper::for_mode(mode) {
                Some(helper) => coords.push(KExpr::Helper(helper, vec![g.clone(), n])),
                None => {
                    let test = in_range(g, n);
                    inside = Some(match inside {
                        None => test,
                        Some(prev) => KExpr::bin(BinaryOp::And, prev, test),
                    });
                    coords.push(g.clone());
                }
            }
        }
        (coords, inside)
    }

    /// The loop nest running `body` for every cell a thread covers
    /// ([`strided_nest`]: fixed trips, unrolled).
    pub(super) fn nest(
        &self,
        shape: &Shape,
        vars: &[AxisVars],
        body: Vec<KStmt>,
        ctx: &mut PointCtx<'_>,
    ) -> KStmt {
        let rank = shape.rank;
        let axes: Vec<Stride> = vars
            .iter()
            .enumerate()
            .take(rank)
            .map(|(d, axis)| Stride {
                cell: self.locals[d],
                thread: axis.thread,
                first: 0,
                end: self.extents[rank - 1 - d] as i64,
                block: i64::from(shape.block[d]),
            })
            .collect();
        strided_nest(&mut ctx.params.vars, &axes, body)
    }
}
