//! The block's geometry in a time-tiled kernel: the loop nests over tile
//! cells, the grid and subset tests of a cell, and the test that sends a
//! block down the interior path.

use crate::ir::{BinaryOp, BoundaryMode, Subset};
use crate::kir::{Helper, KExpr, KStmt, Module, Var};
use crate::lower::letter;
use crate::lower::point::{in_range, PointCtx};
use crate::lower::strided::{strided_nest, Stride};
use crate::lower::tidy::mentions;

/// The block's geometry: what every loop nest over tile cells needs.
pub(super) struct Geometry {
    pub rank: usize,
    pub block: [u32; 3],
    /// Thread index per thread axis (x first).
    pub threads: Vec<Var>,
    /// The block's first grid point per thread axis (x first).
    pub bases: Vec<Var>,
    /// The halo below the block's points per grid axis (outermost first).
    pub halo_lo: Vec<i64>,
    /// Grid sizes per axis (outermost first).
    pub sizes: Vec<KExpr>,
}

impl Geometry {
    /// A loop nest over the tile cells of `region` (per axis, outermost first,
    /// `[start, end)` in tile coordinates), the block's threads striding over
    /// them; `body` gets the cell's tile index and grid coordinate (outermost
    /// first) and returns the statements run at the cell. On the interior
    /// path (`fixed`) the trips have a fixed count and are unrolled
    /// ([`strided_nest`]), so that several trips' loads are in flight; the
    /// general path keeps run-time loops, whose cells' boundary tests would
    /// make the compiler branch around each trip anyway.
    pub fn nest(
        &self,
        ctx: &mut PointCtx<'_>,
        region: &[(i64, i64)],
        fixed: bool,
        body: impl FnOnce(&mut PointCtx<'_>, &[KExpr], &[KExpr]) -> Vec<KStmt>,
    ) -> KStmt {
        let rank = self.rank;
        let locals: Vec<Var> = (0..rank)
            .map(|d| ctx.params.vars.temp_int(format!("l{}", ["x", "y", "z"][d])))
            .collect();
        let grid_at: Vec<Var> = (0..rank)
            .map(|a| ctx.params.vars.temp_int(format!("g{}", letter(rank, a))))
            .collect();
        let cells: Vec<KExpr> = (0..rank)
            .map(|a| KExpr::var(locals[rank - 1 - a]))
            .collect();
        let at: Vec<KExpr> = grid_at.iter().map(|&v| KExpr::var(v)).collect();
        let code = body(ctx, &cells, &at);
        // The grid coordinates the cell's code reads (on the interior path a
        // stencil's cells may need none: no boundary test, no subset test).
        let mut stmts: Vec<KStmt> = (0..rank)
            .filter(|&a| code.iter().any(|s| mentions(s, grid_at[a])))
            .map(|a| {
                let d = rank - 1 - a;
                KStmt::Decl {
                    var: grid_at[a],
                    init: KExpr::plus(self.origin(a), KExpr::var(locals[d])),
                }
            })
            .collect();
        stmts.extend(code);
        if fixed {
            let axes: Vec<Stride> = (0..rank)
                .map(|d| {
                    let a = rank - 1 - d;
                    Stride {
                        cell: locals[d],
                        thread: self.threads[d],
                        first: region[a].0,
                        end: region[a].1,
                        block: i64::from(self.block[d]),
                    }
                })
                .collect();
            return strided_nest(&mut ctx.params.vars, &axes, stmts);
        }
        for (d, &local) in locals.iter().enumerate() {
            let a = rank - 1 - d;
            stmts = vec![KStmt::For {
                var: local,
                start: KExpr::plus(KExpr::var(self.threads[d]), KExpr::int(region[a].0)),
                end: KExpr::int(region[a].1),
                step: KExpr::int(i64::from(self.block[d])),
                unroll: false,
                body: stmts,
            }];
        }
        stmts.pop().unwrap_or(KStmt::Block(vec![]))
    }

    /// The grid coordinate of the tile's first cell along grid axis `a`
    /// (outermost first): the block's first point less the halo.
    pub fn origin(&self, a: usize) -> KExpr {
        let d = self.rank - 1 - a;
        KExpr::plus(KExpr::var(self.bases[d]), KExpr::int(-self.halo_lo[a]))
    }

    /// The grid coordinates of `region`'s first and last cells (inclusive)
    /// along grid axis `a`.
    fn span(&self, region: &[(i64, i64)], a: usize) -> (KExpr, KExpr) {
        (
            KExpr::plus(self.origin(a), KExpr::int(region[a].0)),
            KExpr::plus(self.origin(a), KExpr::int(region[a].1 - 1)),
        )
    }

    /// Whether the tile cells of `region` all lie inside the grid.
    pub fn region_inside_grid(&self, region: &[(i64, i64)]) -> KExpr {
        all((0..self.rank).flat_map(|a| {
            let (first, last) = self.span(region, a);
            [
                KExpr::bin(BinaryOp::Ge, first, KExpr::int(0)),
                KExpr::bin(BinaryOp::Lt, last, self.sizes[a].clone()),
            ]
        }))
    }

    /// Whether `subset` holds every cell of `region` (`covers`), and whether
    /// it holds none of them (`misses`).
    pub fn subset_against_region(
        &self,
        ctx: &mut PointCtx<'_>,
        subset: &Subset,
        region: &[(i64, i64)],
        module: &mut Module,
    ) -> (KExpr, KExpr) {
        let mut covers = Vec::new();
        let mut misses = Vec::new();
        for (a, (lo, hi)) in subset.ranges.iter().enumerate() {
            let lo = ctx.expr(lo, module);
            let hi = ctx.expr(hi, module);
            let (first, last) = self.span(region, a);
            covers.push(KExpr::bin(BinaryOp::Le, lo.clone(), first.clone()));
            covers.push(KExpr::bin(BinaryOp::Le, last.clone(), hi.clone()));
            misses.push(KExpr::bin(BinaryOp::Lt, hi, first));
            misses.push(KExpr::bin(BinaryOp::Lt, last, lo));
        }
        (all(covers), any(misses))
    }
}

/// The coordinates a cell at grid coordinates `at` reads under `mode`, and for
/// zero and none the test that it is inside the grid.
pub(super) fn mapped(
    geometry: &Geometry,
    at: &[KExpr],
    mode: BoundaryMode,
) -> (Vec<KExpr>, Option<KExpr>) {
    match Helper::for_mode(mode) {
        Some(helper) => (
            at.iter()
                .zip(&geometry.sizes)
                .map(|(g, n)| KExpr::Helper(helper, vec![g.clone(), n.clone()]))
                .collect(),
            None,
        ),
        None => (at.to_vec(), Some(inside_grid(at, &geometry.sizes))),
    }
}

/// Whether grid coordinates `at` are inside the grid of `sizes`.
pub(super) fn inside_grid(at: &[KExpr], sizes: &[KExpr]) -> KExpr {
    all(at.iter().zip(sizes).map(|(g, n)| in_range(g, n.clone())))
}

/// Whether `coords` lie in `subset` (its bounds lowered as expressions of the
/// parameters).
pub(super) fn in_subset(
    ctx: &mut PointCtx<'_>,
    subset: &Subset,
    coords: &[KExpr],
    module: &mut Module,
) -> KExpr {
    let mut tests = Vec::new();
    for ((lo, hi), c) in subset.ranges.iter().zip(coords) {
        let lo = ctx.expr(lo, module);
        let hi = ctx.expr(hi, module);
        tests.push(KExpr::bin(BinaryOp::Ge, c.clone(), lo));
        tests.push(KExpr::bin(BinaryOp::Le, c.clone(), hi));
    }
    all(tests)
}

/// The conjunction of `tests` (true when there are none).
pub(super) fn all(tests: impl IntoIterator<Item = KExpr>) -> KExpr {
    tests
        .into_iter()
        .reduce(|prev, t| KExpr::bin(BinaryOp::And, prev, t))
        .unwrap_or_else(|| KExpr::int(1))
}

/// The disjunction of `tests` (false when there are none).
fn any(tests: impl IntoIterator<Item = KExpr>) -> KExpr {
    tests
        .into_iter()
        .reduce(|prev, t| KExpr::bin(BinaryOp::Or, prev, t))
        .unwrap_or_else(|| KExpr::int(0))
}
