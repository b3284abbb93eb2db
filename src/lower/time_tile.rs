//! Overlapped time tiling (OverTile's): one kernel that advances the whole
//! iteration `steps` times on each block's tile.
//!
//! Every time level of every field the stencils write (the *staged* fields)
//! lives in a shared tile of the block's points widened by the halo `T` steps
//! need (`T` times the sum of the stencils' reaches). The kernel, in order:
//!
//! 1. **load**: every level's tile from global memory, the field's boundary
//!    mode applied to cells outside the grid (as a tile load does);
//! 2. **steps**, unrolled (`T` of them, the `s`-th run when `steps > s`): each
//!    stencil over the tile cells whose values are still exact, a region that
//!    shrinks by the stencil's reach each time. A cell runs the parts whose
//!    subset holds it, reading staged levels from the tiles and the other
//!    fields from global memory; its store goes to the written level's tile.
//!    Cells outside the grid follow the written field's boundary rule at every
//!    step, as the interpreter reads them: clamp and mirror copy the cell they
//!    map to once it is computed, periodic computes the cell as the point it
//!    wraps to (its neighbours in the tile are that point's), zero and none
//!    stay 0. Barriers separate the stencils; at the end of a step the level
//!    tiles rotate as the interpreter's buffers do (a renaming: the step
//!    after reads the tile that now holds each level);
//! 3. **write-back**: the centre of every level's tile (the block's own points
//!    inside the grid) into the level's *shadow* buffer, which the host swaps
//!    with the level after the launch: blocks still loading their halos read
//!    the old values.
//!
//! The host runs the launch with at most `T` steps, stopping at every
//! iteration whose check is due (`schedule::time::launch_steps`), where the
//! reductions run as separate kernels. `schedule::time::plan_time_tiling`
//! decides what can be tiled this way.

use std::collections::BTreeMap;

use crate::ir::{BinaryOp, BoundaryMode, Expr, ExprKind, FieldId, Program, ScalarType, Subset};
use crate::kir::{
    Helper, KExpr, KStmt, Kernel, Module, Origin, ParamKind, SharedArray, Space, Var,
};
use crate::lower::plan::{ArgSource, Launch, TimeTileLaunch};
use crate::lower::point::{in_range, PointCtx, Tile};
use crate::lower::{letter, level_name};
use crate::schedule::time::TimeTiling;
use crate::schedule::{Schedule, TablePlacement};

/// The time-tiled kernel of `program`'s iteration under `tiling` and its
/// launch; `None` for a program without an iterate.
pub(crate) fn lower_time_tile(
    program: &Program,
    schedule: &Schedule,
    tiling: &TimeTiling,
    module: &mut Module,
) -> Option<TimeTileLaunch> {
    let iterate = program.iterate.as_ref()?;
    let grid_id = crate::ir::GridId(0);
    let grid = program.grids.first()?;
    let rank = grid.rank();
    let block = tiling.block;
    let extents = tiling.extents();
    let halo = &tiling.halo;

    let mut ctx = PointCtx::new(program, vec![], vec![]);
    let threads: Vec<Var> = (0..rank)
        .map(|d| ctx.params.vars.temp_int(format!("t{}", ["x", "y", "z"][d])))
        .collect();
    let bases: Vec<Var> = (0..rank)
        .map(|d| {
            ctx.params
                .vars
                .temp_int(format!("base_{}", ["x", "y", "z"][d]))
        })
        .collect();

    // The shadows first (the written buffers), then the levels.
    let mut shadows: BTreeMap<(FieldId, usize), Var> = BTreeMap::new();
    for &f in &tiling.staged {
        let field = &program.fields[f.0];
        for j in 0..field.levels() {
            let time = field.time_lo + j as i32;
            let hint = format!("{}_next", level_name(program, f, time));
            let var = ctx
                .params
                .buffer(&hint, field.ty, ArgSource::NextLevel(f, time));
            shadows.insert((f, j), var);
        }
    }
    let mut levels: BTreeMap<(FieldId, usize), Var> = BTreeMap::new();
    let mut slots: BTreeMap<(FieldId, usize), Var> = BTreeMap::new();
    for &f in &tiling.staged {
        let field = &program.fields[f.0];
        for j in 0..field.levels() {
            let time = field.time_lo + j as i32;
            levels.insert((f, j), ctx.params.level(program, f, time, false));
            let hint = format!("{}_tile", level_name(program, f, time));
            let var = ctx
                .params
                .vars
                .add(hint, field.ty, Space::Shared, Origin::Derived);
            ctx.shared.push(SharedArray {
                var,
                ty: field.ty,
                dims: extents.clone(),
            });
            slots.insert((f, j), var);
        }
    }
    let steps = ctx.params.scalar(
        "steps",
        ScalarType::Int,
        ArgSource::TimeSteps,
        Origin::Generated,
    );
    let sizes: Vec<KExpr> = (0..rank)
        .map(|a| ctx.params.grid_size(program, grid_id, a))
        .collect();
    let geometry = Geometry {
        rank,
        block,
        threads: threads.clone(),
        bases: bases.clone(),
        halo_lo: halo.iter().map(|h| h.0).collect(),
        sizes: sizes.clone(),
    };

    let mut body = vec![KStmt::Comment(format!(
        "time tile: up to {} iterations of {} per launch (`steps` this launch) on the block's \
         {} points, with a halo of {} that shrinks by each stencil's reach",
        tiling.steps,
        iterate
            .stencils
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join(" then "),
        (0..rank)
            .map(|a| tiling.per_block[rank - 1 - a].to_string())
            .collect::<Vec<_>>()
            .join("x"),
        halo.iter()
            .map(|(lo, hi)| format!("[-{lo}:+{hi}]"))
            .collect::<String>()
    ))];
    let zeros = vec![KExpr::int(0); rank];
    let lo_hi: Vec<(KExpr, KExpr)> = zeros.iter().map(|z| (z.clone(), z.clone())).collect();
    let pairs: Vec<(Var, Var)> = threads.iter().copied().zip(bases.iter().copied()).collect();
    // Time tiles keep scalar accesses: their blocks need no alignment.
    body.extend(crate::lower::stencil::block_origin(
        &pairs,
        &lo_hi,
        tiling.per_block,
        1,
    ));

    // 1. Load every level of every staged field.
    let whole: Vec<(i64, i64)> = extents.iter().map(|&e| (0, e as i64)).collect();
    for &f in &tiling.staged {
        let field = &program.fields[f.0];
        for j in 0..field.levels() {
            let time = field.time_lo + j as i32;
            body.push(KStmt::Comment(format!(
                "{} with its halo into shared memory ({} mode outside the grid)",
                level_name(program, f, time),
                field.boundary.name()
            )));
            let (tile, buffer) = (slots[&(f, j)], levels[&(f, j)]);
            let nest = geometry.nest(&mut ctx, &whole, |ctx, cells, at| {
                let (mapped, inside) = mapped(ctx, &geometry, at, field.boundary);
                let index = ctx.linear(f, mapped);
                let load = KExpr::Load {
                    space: Space::Global,
                    array: buffer,
                    index: vec![index],
                };
                let value = match inside {
                    None => load,
                    Some(test) => KExpr::Select(
                        Box::new(test),
                        Box::new(load),
                        Box::new(KExpr::Lit(crate::ir::Value::Int(0).cast(field.ty))),
                    ),
                };
                vec![KStmt::Store {
                    space: Space::Shared,
                    array: tile,
                    index: cells.to_vec(),
                    value,
                }]
            });
            body.push(nest);
        }
    }
    body.push(KStmt::Barrier);

    // 2. The steps.
    let reach_per_step = tiling.reach_per_step();
    for s in 0..tiling.steps as usize {
        let mut step_body = Vec::new();
        let mut consumed: Vec<(i64, i64)> = reach_per_step
            .iter()
            .map(|(lo, hi)| (lo * s as i64, hi * s as i64))
            .collect();
        for (k, stencil) in iterate.stencils.iter().enumerate() {
            for (a, r) in tiling.reach[k].iter().enumerate() {
                consumed[a].0 += r.0;
                consumed[a].1 += r.1;
            }
            let region: Vec<(i64, i64)> = (0..rank)
                .map(|a| (consumed[a].0, extents[a] as i64 - consumed[a].1))
                .collect();
            // The level this stencil writes, and its tile this step.
            let footprint = crate::analysis::Footprint::of_stencil(program, k);
            let Some(&(wf, wt)) = footprint.written().first() else {
                continue;
            };
            let written = &program.fields[wf.0];
            let slot_of = |f: FieldId, t: i32| {
                let field = &program.fields[f.0];
                slots[&(f, (field.level_of(t) + s) % field.levels())]
            };
            let target = slot_of(wf, wt);
            ctx.tiles = tiling
                .staged
                .iter()
                .flat_map(|&f| {
                    let field = &program.fields[f.0];
                    (field.time_lo..=field.time_hi).map(move |t| (f, t))
                })
                .map(|(f, t)| {
                    (
                        (f, t),
                        Tile {
                            var: slot_of(f, t),
                            origin: vec![0; rank],
                            covers: None,
                        },
                    )
                })
                .collect();
            ctx.tables = schedule
                .stencil(k)
                .tables
                .iter()
                .map(|(t, p)| {
                    let placement = match p {
                        TablePlacement::Shared | TablePlacement::Global => TablePlacement::Constant,
                        other => *other,
                    };
                    (*t, placement)
                })
                .collect();
            ctx.unroll = ctx.tables.values().any(|p| *p == TablePlacement::Literals);
            let mode = written.boundary;
            step_body.push(KStmt::Comment(format!(
                "step {}: stencil {} into {} ({} mode outside the grid)",
                s + 1,
                stencil.name,
                ctx.params.vars.decl(target).hint,
                mode.name()
            )));
            let nest = geometry.nest(&mut ctx, &region, |ctx, cells, at| {
                let mut cell = Vec::new();
                // Periodic: a cell outside the grid is the point it wraps to.
                let coords: Vec<KExpr> = if mode == BoundaryMode::Periodic {
                    (0..rank)
                        .map(|a| {
                            let var = ctx.params.vars.temp_int(format!("c{}", letter(rank, a)));
                            cell.push(KStmt::Decl {
                                var,
                                init: KExpr::Helper(
                                    Helper::Periodic,
                                    vec![at[a].clone(), sizes[a].clone()],
                                ),
                            });
                            KExpr::var(var)
                        })
                        .collect()
                } else {
                    at.to_vec()
                };
                ctx.coords = coords.clone();
                ctx.in_block = cells.to_vec();
                let buffer = ctx.params.level(program, wf, wt, false);
                let mut parts = Vec::new();
                for part in &stencil.parts {
                    let code = ctx.part_code(part, module);
                    let code =
                        crate::lower::recompute::redirect_stores(code, buffer, target, cells);
                    let cond = in_subset(ctx, &part.subset, &coords, module);
                    parts.push(KStmt::If {
                        cond,
                        then: code,
                        otherwise: vec![],
                    });
                }
                if mode == BoundaryMode::Periodic {
                    cell.extend(parts);
                } else {
                    cell.push(KStmt::If {
                        cond: inside_grid(at, &sizes),
                        then: parts,
                        otherwise: vec![],
                    });
                }
                cell
            });
            step_body.push(nest);
            step_body.push(KStmt::Barrier);
            if let Some(helper) = Helper::for_mode(mode).filter(|_| mode != BoundaryMode::Periodic)
            {
                step_body.push(KStmt::Comment(format!(
                    "cells outside the grid take the {} cell they read",
                    mode.name()
                )));
                let nest = geometry.nest(&mut ctx, &region, |_, cells, at| {
                    let from: Vec<KExpr> = (0..rank)
                        .map(|a| {
                            let d = rank - 1 - a;
                            KExpr::bin(
                                BinaryOp::Sub,
                                KExpr::Helper(helper, vec![at[a].clone(), sizes[a].clone()]),
                                KExpr::plus(KExpr::var(bases[d]), KExpr::int(-geometry.halo_lo[a])),
                            )
                        })
                        .collect();
                    vec![KStmt::If {
                        cond: KExpr::Unary(
                            crate::ir::UnaryOp::Not,
                            Box::new(inside_grid(at, &sizes)),
                        ),
                        then: vec![KStmt::Store {
                            space: Space::Shared,
                            array: target,
                            index: cells.to_vec(),
                            value: KExpr::Load {
                                space: Space::Shared,
                                array: target,
                                index: from,
                            },
                        }],
                        otherwise: vec![],
                    }]
                });
                step_body.push(nest);
                step_body.push(KStmt::Barrier);
            }
        }
        if s == 0 {
            body.extend(step_body);
        } else {
            body.push(KStmt::If {
                cond: KExpr::bin(BinaryOp::Gt, steps.clone(), KExpr::int(s as i64)),
                then: step_body,
                otherwise: vec![],
            });
        }
    }

    // 3. Write the centres back into the shadows.
    let centre: Vec<(i64, i64)> = (0..rank)
        .map(|a| {
            (
                halo[a].0,
                halo[a].0 + i64::from(tiling.per_block[rank - 1 - a]),
            )
        })
        .collect();
    for &f in &tiling.staged {
        let field = &program.fields[f.0];
        for j in 0..field.levels() {
            let (tile, shadow) = (slots[&(f, j)], shadows[&(f, j)]);
            body.push(KStmt::Comment(format!(
                "the block's points of {} into {}",
                ctx.params.vars.decl(tile).hint,
                ctx.params.vars.decl(shadow).hint
            )));
            let nest = geometry.nest(&mut ctx, &centre, |ctx, cells, at| {
                let index = ctx.linear(f, at.to_vec());
                let mut inside: Option<KExpr> = None;
                for a in 0..rank {
                    let test = KExpr::bin(BinaryOp::Lt, at[a].clone(), sizes[a].clone());
                    inside = Some(match inside.take() {
                        None => test,
                        Some(prev) => KExpr::bin(BinaryOp::And, prev, test),
                    });
                }
                vec![KStmt::If {
                    cond: inside.unwrap_or_else(|| KExpr::int(1)),
                    then: vec![KStmt::Store {
                        space: Space::Global,
                        array: shadow,
                        index: vec![index],
                        value: KExpr::Load {
                            space: Space::Shared,
                            array: tile,
                            index: cells.to_vec(),
                        },
                    }],
                    otherwise: vec![],
                }]
            });
            body.push(nest);
        }
    }

    let uses_double = ctx.uses_double;
    let shared = ctx.shared;
    let (mut params, args, vars) = ctx.params.finish();
    // The levels are only read (the stores went to the tiles).
    for (param, arg) in params.iter_mut().zip(&args) {
        if matches!(arg, ArgSource::Level(..)) {
            param.kind = ParamKind::ReadOnlyBuffer;
        }
    }
    let name = format!(
        "{}_time_tile",
        iterate
            .stencils
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join("_")
    );
    module.kernels.push(Kernel {
        name,
        block,
        vars,
        params,
        shared,
        body,
        uses_double,
    });
    let whole_grid = Subset {
        ranges: grid
            .dims
            .iter()
            .map(|dim| {
                let last = Expr::new(
                    ExprKind::Binary(
                        BinaryOp::Sub,
                        Box::new(dim.clone()),
                        Box::new(Expr::literal(crate::ir::Value::Int(1).cast(dim.ty))),
                    ),
                    dim.ty,
                    dim.span,
                );
                (Expr::literal(crate::ir::Value::Int(0).cast(dim.ty)), last)
            })
            .collect(),
        span: grid.span,
    };
    Some(TimeTileLaunch {
        launch: Launch {
            kernel: module.kernels.len() - 1,
            subset: Some(whole_grid),
            block,
            points_per_block: tiling.per_block,
            args,
            max_groups: None,
            align_x: 1,
        },
        steps: tiling.steps,
        staged: tiling.staged.clone(),
    })
}

/// The block's geometry: what every loop nest over tile cells needs.
struct Geometry {
    rank: usize,
    block: [u32; 3],
    /// Thread index per thread axis (x first).
    threads: Vec<Var>,
    /// The block's first grid point per thread axis (x first).
    bases: Vec<Var>,
    /// The halo below the block's points per grid axis (outermost first).
    halo_lo: Vec<i64>,
    /// Grid sizes per axis (outermost first).
    sizes: Vec<KExpr>,
}

impl Geometry {
    /// A loop nest over the tile cells of `region` (per axis, outermost first,
    /// `[start, end)` in tile coordinates), the block's threads striding over
    /// them; `body` gets the cell's tile index and grid coordinate (outermost
    /// first) and returns the statements run at the cell.
    fn nest(
        &self,
        ctx: &mut PointCtx<'_>,
        region: &[(i64, i64)],
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
        let mut stmts: Vec<KStmt> = (0..rank)
            .map(|a| {
                let d = rank - 1 - a;
                KStmt::Decl {
                    var: grid_at[a],
                    init: KExpr::plus(
                        KExpr::plus(KExpr::var(self.bases[d]), KExpr::int(-self.halo_lo[a])),
                        KExpr::var(locals[d]),
                    ),
                }
            })
            .collect();
        let at: Vec<KExpr> = grid_at.iter().map(|&v| KExpr::var(v)).collect();
        stmts.extend(body(ctx, &cells, &at));
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
}

/// The coordinates a cell at grid coordinates `at` reads under `mode`, and for
/// zero and none the test that it is inside the grid.
fn mapped(
    _ctx: &mut PointCtx<'_>,
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
fn inside_grid(at: &[KExpr], sizes: &[KExpr]) -> KExpr {
    let mut test: Option<KExpr> = None;
    for (g, n) in at.iter().zip(sizes) {
        let t = in_range(g, n.clone());
        test = Some(match test.take() {
            None => t,
            Some(prev) => KExpr::bin(BinaryOp::And, prev, t),
        });
    }
    test.unwrap_or_else(|| KExpr::int(1))
}

/// Whether `coords` lie in `subset` (its bounds lowered as expressions of the
/// parameters).
fn in_subset(
    ctx: &mut PointCtx<'_>,
    subset: &Subset,
    coords: &[KExpr],
    module: &mut Module,
) -> KExpr {
    let mut test: Option<KExpr> = None;
    for ((lo, hi), c) in subset.ranges.iter().zip(coords) {
        let lo = ctx.expr(lo, module);
        let hi = ctx.expr(hi, module);
        for t in [
            KExpr::bin(BinaryOp::Ge, c.clone(), lo),
            KExpr::bin(BinaryOp::Le, c.clone(), hi),
        ] {
            test = Some(match test.take() {
                None => t,
                Some(prev) => KExpr::bin(BinaryOp::And, prev, t),
            });
        }
    }
    test.unwrap_or_else(|| KExpr::int(1))
}
