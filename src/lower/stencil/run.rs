//! A thread's points: one point, or a run of `tile[d]` points per axis.
//!
//! Along x a thread's points stay `block[0]` apart, so that a warp's lanes read
//! consecutive elements (coalesced); along every other axis they are
//! consecutive (`thread * tile + p`): register streaming, a 2-D thread marching
//! down `tile[1]` rows, a 3-D thread with `block[2] = 1` marching through
//! `tile[2]` planes (2.5-D blocking).
//!
//! A thread whose whole run lies inside the subset takes the **fast path**: its
//! points unrolled one after the other with no per-point guard, a read at a
//! point of the run taken as is (it is inside the grid: no boundary mode), and
//! every load that several points of the run perform shared through one private
//! variable ([`crate::kir::cse`]): the register window. A thread whose run
//! crosses the subset's end takes the **edge path**: a loop over the run with a
//! guard at every point. Runs of more than [`MAX_UNROLLED_POINTS`] points keep
//! the edge path's loop alone.

use crate::ir::{BinaryOp, StencilPart};
use crate::kir::{cse, vector, KExpr, KStmt, Module};
use crate::lower::point::{PointCtx, RunWindow};
use crate::lower::reduce::FusedEpilogue;

use super::AxisVars;

/// The most points of a thread's run that the fast path unrolls.
pub const MAX_UNROLLED_POINTS: u32 = 16;

/// The shape of a kernel's threads: per thread axis (x first) the block, the
/// points per thread, and the variables.
pub(in crate::lower) struct Shape<'a> {
    pub block: [u32; 3],
    pub tile: [u32; 3],
    pub vars: &'a [AxisVars],
    /// The subset's last index per grid axis (outermost first).
    pub hi: Vec<KExpr>,
    /// A fused check's terms, folded at every point after its statements.
    pub fold: Option<&'a FusedEpilogue<'a>>,
    /// With more than 1, `tile[0]` is this: the thread's x points are
    /// consecutive and read and written as vectors ([`crate::kir::vector`]).
    pub vector: u32,
    /// The subset's first x index where the blocks start below it (aligned
    /// for vectors): every point then also checks `ix >= lo_x`.
    pub lo_x: Option<KExpr>,
    /// The grid every level the kernel writes lies in (its subset is inside
    /// it); `None` when they lie in several, and then no read is taken as a
    /// point of the run.
    pub grid: Option<crate::ir::GridId>,
}

impl Shape<'_> {
    fn rank(&self) -> usize {
        self.vars.len()
    }

    /// The distance between a thread's consecutive points along axis `d`.
    fn step(&self, d: usize) -> i64 {
        if d == 0 && self.vector <= 1 {
            i64::from(self.block[0])
        } else {
            1
        }
    }

    /// Whether a thread has more than one point along `d`.
    fn runs(&self, d: usize) -> bool {
        self.tile[d] > 1
    }
}

/// The run's first point along each axis: `q = thread * tile` (x: `thread`)
/// within the block, `i = base + q` in the grid.
pub(in crate::lower) fn first_points(shape: &Shape<'_>) -> Vec<KStmt> {
    let mut out = Vec::new();
    for d in (0..shape.rank()).rev() {
        let v = &shape.vars[d];
        let thread = KExpr::var(v.thread);
        let q = if (d == 0 && shape.vector <= 1) || !shape.runs(d) {
            thread
        } else {
            KExpr::times(thread, KExpr::int(i64::from(shape.tile[d])))
        };
        out.push(KStmt::Decl {
            var: v.first_in_block,
            init: q,
        });
        out.push(KStmt::Decl {
            var: v.first_grid,
            init: KExpr::plus(KExpr::var(v.base), KExpr::var(v.first_in_block)),
        });
    }
    out
}

/// The per-point code of `parts` at the point the context's coordinates name,
/// then the fold of a fused check's terms there.
pub(super) fn point_code(
    ctx: &mut PointCtx<'_>,
    parts: &[(&str, &StencilPart)],
    fold: Option<&FusedEpilogue<'_>>,
    module: &mut Module,
) -> Vec<KStmt> {
    let mut point_body = Vec::new();
    for (stencil, part) in parts {
        let code = ctx.part_code(part, module);
        if parts.len() == 1 {
            point_body = code;
        } else {
            // Each fused stencil's locals in a scope of their own.
            point_body.push(KStmt::Comment(format!("stencil {stencil}")));
            point_body.push(KStmt::Block(code));
        }
    }
    if let Some(fold) = fold {
        point_body.extend(fold.point_folds(ctx, module));
    }
    point_body
}

fn and(guard: Option<KExpr>, test: KExpr) -> Option<KExpr> {
    Some(match guard {
        None => test,
        Some(g) => KExpr::bin(BinaryOp::And, g, test),
    })
}

/// The code of a thread's points (after the first points are declared).
pub(in crate::lower) fn thread_points(
    ctx: &mut PointCtx<'_>,
    parts: &[(&str, &StencilPart)],
    shape: &Shape<'_>,
    module: &mut Module,
) -> Vec<KStmt> {
    let rank = shape.rank();
    let points: u32 = shape.tile.iter().product();
    // `i <= hi` for the last point of the thread along each axis with several
    // points per block (with one, the launch covers the axis exactly).
    let mut inside: Option<KExpr> = None;
    if let Some(lo) = &shape.lo_x {
        inside = and(
            inside,
            KExpr::bin(
                BinaryOp::Ge,
                KExpr::var(shape.vars[0].first_grid),
                lo.clone(),
            ),
        );
    }
    for d in 0..rank {
        if shape.block[d] == 1 && !shape.runs(d) {
            continue;
        }
        let last = (i64::from(shape.tile[d]) - 1) * shape.step(d);
        let i = KExpr::plus(KExpr::var(shape.vars[d].first_grid), KExpr::int(last));
        inside = and(
            inside,
            KExpr::bin(BinaryOp::Le, i, shape.hi[rank - 1 - d].clone()),
        );
    }
    if points == 1 {
        set_point(ctx, shape, [0; 3], false);
        let body = point_code(ctx, parts, shape.fold, module);
        return match inside {
            Some(cond) => vec![KStmt::If {
                cond,
                then: body,
                otherwise: vec![],
            }],
            None => body,
        };
    }
    if points > MAX_UNROLLED_POINTS {
        return edge_path(ctx, parts, shape, module);
    }
    let interior = interior_condition(ctx, shape);
    let fast_comment = if interior.is_some() {
        format!(
            "fast path: the thread's {points} points are inside `{}`'s subset and \
             read only inside the grid (no boundary mode); reads shared between \
             them are loaded once",
            parts[0].0
        )
    } else {
        format!(
            "fast path: the thread's {points} points are inside `{}`'s subset; \
             reads shared between them are loaded once",
            parts[0].0
        )
    };
    let inside = match interior {
        Some(test) => and(inside, test),
        None => inside,
    };
    let mut fast = vec![KStmt::Comment(fast_comment)];
    ctx.on_interior = !ctx.interior.is_empty();
    let mut run = Vec::new();
    for pz in 0..shape.tile[2] {
        for py in 0..shape.tile[1] {
            for px in 0..shape.tile[0] {
                let p = [px, py, pz];
                set_point(ctx, shape, p, true);
                let named: Vec<String> = (0..rank)
                    .rev()
                    .filter(|&d| shape.runs(d))
                    .map(|d| {
                        format!(
                            "{}{:+}",
                            ["x", "y", "z"][d],
                            i64::from(p[d]) * shape.step(d)
                        )
                    })
                    .collect();
                run.push(KStmt::Comment(format!("point {}", named.join(" "))));
                run.push(KStmt::Block(point_code(ctx, parts, shape.fold, module)));
            }
        }
    }
    ctx.on_interior = false;
    let mut inside = inside;
    if shape.vector > 1 {
        let own = match shape.grid {
            Some(grid) => ctx.params.buffers_on(ctx.program, grid),
            None => Default::default(),
        };
        let done = vector::vectorize(
            &mut run,
            &mut ctx.params.vars,
            shape.vars[0].first_grid,
            shape.vector as u8,
            &own,
        );
        // The rows are aligned only where the grids' x sizes are multiples
        // of the width: otherwise every thread takes the edge path.
        for size in done.sizes {
            let multiple = KExpr::bin(
                BinaryOp::Eq,
                KExpr::bin(
                    BinaryOp::Rem,
                    KExpr::var(size),
                    KExpr::int(i64::from(shape.vector)),
                ),
                KExpr::int(0),
            );
            inside = and(inside, multiple);
        }
        if done.loads + done.stores > 0 {
            fast.push(KStmt::Comment(format!(
                "{} rows of {} points read and {} written as one vector each",
                done.loads, shape.vector, done.stores
            )));
        }
    }
    cse::share_loads(&mut run, &mut ctx.params.vars);
    fast.extend(run);
    let edge = edge_path(ctx, parts, shape, module);
    let mut otherwise = vec![KStmt::Comment(if ctx.interior.is_empty() {
        "edge path: the run crosses the subset's end; each point checks".to_string()
    } else {
        "edge path: the run crosses the subset's end or reads past the grid's edge; \
         each point checks"
            .to_string()
    })];
    otherwise.extend(edge);
    ctx.run = Vec::new();
    match inside {
        Some(cond) => vec![KStmt::If {
            cond,
            then: fast,
            otherwise,
        }],
        None => fast,
    }
}

/// `first + lo >= 0 && first + last + hi <= size - 1` on every axis and grid
/// of the levels in [`PointCtx::interior`]: the whole run reads inside the
/// grids, so those reads need no boundary mode. `None` when no level needs one.
/// The upper bound is tested on a grid other than the run's own even where
/// no offset passes the point (`hi` = 0): that grid may be smaller.
fn interior_condition(ctx: &mut PointCtx<'_>, shape: &Shape<'_>) -> Option<KExpr> {
    let rank = shape.rank();
    // Per (grid, axis), the widest offsets of any level on that grid.
    let mut reach: std::collections::BTreeMap<(usize, usize), (i64, i64)> = Default::default();
    for (&(field, _), range) in &ctx.interior {
        let grid = ctx.program.fields[field.0].grid;
        for (a, &(lo, hi)) in range.iter().enumerate() {
            let r = reach.entry((grid.0, a)).or_insert((0, 0));
            *r = (r.0.min(lo), r.1.max(hi));
        }
    }
    let mut test: Option<KExpr> = None;
    for ((grid, a), (lo, hi)) in reach {
        let d = rank - 1 - a;
        let first = KExpr::var(shape.vars[d].first_grid);
        if lo < 0 {
            test = and(
                test,
                KExpr::bin(BinaryOp::Ge, first.clone(), KExpr::int(-lo)),
            );
        }
        // The run's points lie in its own grid; another grid may be smaller,
        // so even a read at offset 0 of a field on it needs the bound.
        let own = shape.grid == Some(crate::ir::GridId(grid));
        if hi > 0 || !own {
            let last = (i64::from(shape.tile[d]) - 1) * shape.step(d);
            let size = ctx
                .params
                .grid_size(ctx.program, crate::ir::GridId(grid), a);
            test = and(
                test,
                KExpr::bin(
                    BinaryOp::Lt,
                    KExpr::plus(first, KExpr::int(last + hi)),
                    size,
                ),
            );
        }
    }
    test
}

/// Points the context at point `p` (per thread axis) of the thread's run, as
/// expressions of the run's first point; `window` when the whole run is known
/// to be inside the subset.
fn set_point(ctx: &mut PointCtx<'_>, shape: &Shape<'_>, p: [u32; 3], window: bool) {
    let rank = shape.rank();
    ctx.coords = Vec::new();
    ctx.in_block = Vec::new();
    ctx.run = Vec::new();
    for a in 0..rank {
        let d = rank - 1 - a;
        let v = &shape.vars[d];
        let shift = i64::from(p[d]) * shape.step(d);
        ctx.coords
            .push(KExpr::plus(KExpr::var(v.first_grid), KExpr::int(shift)));
        ctx.in_block
            .push(KExpr::plus(KExpr::var(v.first_in_block), KExpr::int(shift)));
        let windowed = window && (d > 0 || shape.vector > 1) && shape.runs(d);
        ctx.run
            .push(shape.grid.filter(|_| windowed).map(|grid| RunWindow {
                first: KExpr::var(v.first_grid),
                point: i64::from(p[d]),
                len: i64::from(shape.tile[d]),
                grid,
            }));
    }
}

/// The guarded loop over the thread's run: `for p` per axis with several points,
/// `q = first + p * step`, and the point's code under `i <= hi` on every axis.
fn edge_path(
    ctx: &mut PointCtx<'_>,
    parts: &[(&str, &StencilPart)],
    shape: &Shape<'_>,
    module: &mut Module,
) -> Vec<KStmt> {
    let rank = shape.rank();
    ctx.coords = Vec::new();
    ctx.in_block = Vec::new();
    ctx.run = Vec::new();
    for a in 0..rank {
        let d = rank - 1 - a;
        let v = &shape.vars[d];
        let (q, i) = if shape.runs(d) {
            (v.in_block, v.grid)
        } else {
            (v.first_in_block, v.first_grid)
        };
        ctx.coords.push(KExpr::var(i));
        ctx.in_block.push(KExpr::var(q));
    }
    let mut guard: Option<KExpr> = None;
    if let Some(lo) = &shape.lo_x {
        guard = and(
            guard,
            KExpr::bin(BinaryOp::Ge, ctx.coords[rank - 1].clone(), lo.clone()),
        );
    }
    for d in 0..rank {
        if shape.block[d] == 1 && !shape.runs(d) {
            continue;
        }
        let a = rank - 1 - d;
        guard = and(
            guard,
            KExpr::bin(BinaryOp::Le, ctx.coords[a].clone(), shape.hi[a].clone()),
        );
    }
    let point_body = point_code(ctx, parts, shape.fold, module);
    let mut body = match guard {
        Some(cond) => vec![KStmt::If {
            cond,
            then: point_body,
            otherwise: vec![],
        }],
        None => point_body,
    };
    // Innermost axis innermost.
    for d in 0..rank {
        if !shape.runs(d) {
            continue;
        }
        let v = &shape.vars[d];
        let shift = KExpr::times(KExpr::var(v.point), KExpr::int(shape.step(d)));
        let mut inner = Vec::new();
        // The point within the block, where a shared tile reads it.
        if uses(&body, v.in_block) {
            inner.push(KStmt::Decl {
                var: v.in_block,
                init: KExpr::plus(KExpr::var(v.first_in_block), shift.clone()),
            });
        }
        inner.extend([
            // From the run's first grid index, which is then always used (NVRTC
            // warns about a variable declared and never read).
            KStmt::Decl {
                var: v.grid,
                init: KExpr::plus(KExpr::var(v.first_grid), shift),
            },
        ]);
        inner.extend(body);
        body = vec![KStmt::For {
            var: v.point,
            start: KExpr::int(0),
            end: KExpr::int(i64::from(shape.tile[d])),
            step: KExpr::int(1),
            unroll: true,
            body: inner,
        }];
    }
    body
}

/// Whether `body` reads variable `var`.
fn uses(body: &[KStmt], var: crate::kir::Var) -> bool {
    let mut found = false;
    crate::kir::visit::for_each_expr(body, |node| {
        if *node == KExpr::Var(var) {
            found = true;
        }
    });
    found
}
