//! The cells of a tile the block's threads compute or load in a fused
//! kernel's recompute phase, and the loop nest that strides over them.

use super::Shape;
use crate::ir::{BinaryOp, BoundaryMode};
use crate::kir::{Helper, KExpr, KStmt, Var};
use crate::lower::point::{in_range, PointCtx};
use crate::lower::stencil::AxisVars;

/// The most trips (cells per thread, over all axes) a tile's loop nest is
/// unrolled to: the blur's 70 x 32 tile in 32 x 8 blocks takes 9.
const MAX_UNROLLED_TRIPS: usize = 16;

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

    /// The loop nest running `body` for every cell a thread covers: along
    /// each axis the thread's cells are `thread + block * r` for a fixed
    /// count of trips `r`, unrolled (where [`MAX_UNROLLED_TRIPS`] allows), so
    /// that the compiler issues the global loads of several trips before it
    /// waits for the first (a run-time trip count serialised them, one
    /// dependent round per trip). Only the last trip can pass the tile's
    /// edge, and only it is tested. Past the limit, a run-time loop.
    pub(super) fn nest(
        &self,
        shape: &Shape,
        vars: &[AxisVars],
        body: Vec<KStmt>,
        ctx: &mut PointCtx<'_>,
    ) -> KStmt {
        let rank = shape.rank;
        let trips: Vec<usize> = (0..rank)
            .map(|d| self.extents[rank - 1 - d].div_ceil(shape.block[d].max(1) as usize))
            .collect();
        let unrolled = trips.iter().product::<usize>() <= MAX_UNROLLED_TRIPS;
        let mut stmts = body;
        for (d, axis) in vars.iter().enumerate().take(rank) {
            let extent = self.extents[rank - 1 - d] as i64;
            let block = i64::from(shape.block[d].max(1));
            let cell = self.locals[d];
            if !unrolled {
                stmts = vec![KStmt::For {
                    var: cell,
                    start: KExpr::var(axis.thread),
                    end: KExpr::int(extent),
                    step: KExpr::int(block),
                    unroll: false,
                    body: stmts,
                }];
                continue;
            }
            let count = trips[d] as i64;
            let ragged = extent % block != 0;
            if count == 1 {
                // One trip: the cell is the thread's own (tested when the
                // block is wider than the tile).
                let mut one = vec![KStmt::Decl {
                    var: cell,
                    init: KExpr::var(axis.thread),
                }];
                if ragged {
                    one.push(KStmt::If {
                        cond: KExpr::bin(BinaryOp::Lt, KExpr::var(cell), KExpr::int(extent)),
                        then: stmts,
                        otherwise: vec![],
                    });
                } else {
                    one.extend(stmts);
                }
                stmts = one;
                continue;
            }
            let trip = ctx.params.vars.temp_int(format!("r{}", ["x", "y", "z"][d]));
            let cell_at = |r: KExpr| KStmt::Decl {
                var: cell,
                init: KExpr::plus(
                    KExpr::var(axis.thread),
                    KExpr::bin(BinaryOp::Mul, KExpr::int(block), r),
                ),
            };
            // Every trip but a ragged last one lies inside the tile: those
            // run unguarded (a guard on each trip made the compiler branch
            // around each one, and wait for its loads before the next).
            let whole = if ragged { count - 1 } else { count };
            let last = ragged.then(|| {
                // The same code on the last trip, with variables of its own.
                let cell_last = ctx.params.vars.decl(cell).clone();
                let cell_last = ctx.params.vars.add(
                    cell_last.hint,
                    cell_last.ty,
                    cell_last.space,
                    cell_last.origin,
                );
                let mut body = crate::kir::rewrite::fresh_copy(&stmts, &mut ctx.params.vars);
                body.iter_mut().for_each(|s| {
                    crate::kir::rewrite::rewrite_stmt(s, &mut |e| {
                        (*e == KExpr::var(cell)).then(|| KExpr::var(cell_last))
                    })
                });
                let mut decl = cell_at(KExpr::int(count - 1));
                if let KStmt::Decl { var, .. } = &mut decl {
                    *var = cell_last;
                }
                KStmt::Block(vec![
                    decl,
                    KStmt::If {
                        cond: KExpr::bin(BinaryOp::Lt, KExpr::var(cell_last), KExpr::int(extent)),
                        then: body,
                        otherwise: vec![],
                    },
                ])
            });
            let first = if whole == 1 {
                KStmt::Block(
                    std::iter::once(cell_at(KExpr::int(0)))
                        .chain(stmts)
                        .collect(),
                )
            } else {
                KStmt::For {
                    var: trip,
                    start: KExpr::int(0),
                    end: KExpr::int(whole),
                    step: KExpr::int(1),
                    unroll: true,
                    body: std::iter::once(cell_at(KExpr::var(trip)))
                        .chain(stmts)
                        .collect(),
                }
            };
            stmts = std::iter::once(first).chain(last).collect();
        }
        if unrolled && trips.iter().product::<usize>() > 1 {
            stmts.insert(
                0,
                KStmt::Comment(
                    "the thread's cells in fixed trips, unrolled: several trips' loads in flight"
                        .to_string(),
                ),
            );
        }
        match stmts.pop() {
            Some(stmt) if stmts.is_empty() => stmt,
            Some(stmt) => {
                stmts.push(stmt);
                KStmt::Block(stmts)
            }
            None => KStmt::Block(vec![]),
        }
    }
}
