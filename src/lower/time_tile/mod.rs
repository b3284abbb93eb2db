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
//! The phases come twice ([`phases`]): a block whose tile lies inside the
//! grid, and whose cells each part of each stencil covers all or none of,
//! takes the **interior path** — no boundary mode, no test per cell (a part
//! that covers the cells runs unconditionally, or under a flag the block
//! computes once where its stencil has several), and loops of fixed trips,
//! unrolled ([`crate::lower::strided`]), so that the load phase issues all of
//! a thread's global loads before its first shared store. The others take
//! the **general path** above. With the per-cell tests, ptxas branched
//! around each load and waited for it, one dependent round per trip of the
//! load loops (the SASS of j2d5pt at `--time 4`: 20 loads in 20 rounds; on
//! the interior path 20 loads in one). At 16384² nearly every block is
//! interior.
//!
//! The host runs the launch with at most `T` steps, stopping at every
//! iteration whose check is due (`schedule::time::launch_steps`), where the
//! reductions run as separate kernels. `schedule::time::plan_time_tiling`
//! decides what can be tiled this way.

use std::collections::BTreeMap;

mod geometry;
mod phases;

use crate::ir::{BinaryOp, Expr, ExprKind, FieldId, Grid, Iterate, Program, ScalarType, Subset};
use crate::kir::plan::{ArgSource, Launch, TimeTileLaunch};
use crate::kir::{KExpr, KStmt, Kernel, Module, Origin, ParamKind, SharedArray, Space, Var};
use crate::lower::level_name;
use crate::lower::point::PointCtx;
use crate::schedule::time::TimeTiling;
use crate::schedule::Schedule;

use geometry::Geometry;
use phases::{Path, TileKernel};

/// Variables by staged field and level index.
type LevelVars = BTreeMap<(FieldId, usize), Var>;

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

    let (shadows, levels, slots) = staged_buffers(program, tiling, &extents, &mut ctx);
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

    let mut body = vec![KStmt::Comment(tile_comment(iterate, tiling, rank))];
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

    let kernel = TileKernel {
        program,
        schedule,
        tiling,
        geometry,
        extents,
        levels,
        slots,
        shadows,
        steps,
    };
    let general = kernel.phases(&mut ctx, module, &Path::General);
    let (tests, interior, flags) = interior_test(&kernel, &mut ctx, module);
    body.extend(tests);
    let fast = kernel.phases(&mut ctx, module, &Path::Interior(&flags));
    body.push(KStmt::If {
        cond: interior,
        then: fast,
        otherwise: general,
    });

    let uses_double = ctx.uses_double;
    let shared = ctx.shared;
    let (mut params, args, vars) = ctx.params.finish();
    // The levels are only read (the stores went to the tiles).
    for (param, arg) in params.iter_mut().zip(&args) {
        if matches!(arg, ArgSource::Level(..)) {
            param.kind = ParamKind::ReadOnlyBuffer;
        }
    }
    let name = format!("{}_time_tile", stencil_names(iterate, "_"));
    module.kernels.push(Kernel {
        name,
        block,
        vars,
        params,
        shared,
        body,
        uses_double,
    });
    Some(TimeTileLaunch {
        launch: Launch {
            kernel: module.kernels.len() - 1,
            subset: Some(whole_grid(grid)),
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

/// The buffers and tiles of the staged fields' levels, by field and level
/// index: the shadows (the written buffers, declared first so that they are
/// the kernel's first parameters), the levels, and the levels' shared tiles.
fn staged_buffers(
    program: &Program,
    tiling: &TimeTiling,
    extents: &[usize],
    ctx: &mut PointCtx<'_>,
) -> (LevelVars, LevelVars, LevelVars) {
    let mut shadows: LevelVars = BTreeMap::new();
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
    let mut levels: LevelVars = BTreeMap::new();
    let mut slots: LevelVars = BTreeMap::new();
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
                dims: extents.to_vec(),
            });
            slots.insert((f, j), var);
        }
    }
    (shadows, levels, slots)
}

/// The comment that opens the kernel: how many iterations of which stencils
/// one launch runs, on how many points, with what halo.
fn tile_comment(iterate: &Iterate, tiling: &TimeTiling, rank: usize) -> String {
    format!(
        "time tile: up to {} iterations of {} per launch (`steps` this launch) on the block's \
         {} points, with a halo of {} that shrinks by each stencil's reach",
        tiling.steps,
        stencil_names(iterate, " then "),
        (0..rank)
            .map(|a| tiling.per_block[rank - 1 - a].to_string())
            .collect::<Vec<_>>()
            .join("x"),
        tiling
            .halo
            .iter()
            .map(|(lo, hi)| format!("[-{lo}:+{hi}]"))
            .collect::<String>()
    )
}

/// The names of the iteration's stencils, in order, joined by `separator`.
fn stencil_names(iterate: &Iterate, separator: &str) -> String {
    iterate
        .stencils
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join(separator)
}

/// The subset of every point of `grid`, which the launch covers: the tile
/// kernel computes each stencil's own subset itself.
fn whole_grid(grid: &Grid) -> Subset {
    Subset {
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
    }
}

/// The test that sends a block down the interior path: its tile lies inside
/// the grid, and every part of every stencil covers all or none of the cells
/// the stencil computes at the first step (the later steps' cells are among
/// them). Returns the declarations of the test and of the flags of the parts
/// of stencils with several (by stencil and part), and the test.
fn interior_test(
    kernel: &TileKernel<'_>,
    ctx: &mut PointCtx<'_>,
    module: &mut Module,
) -> (Vec<KStmt>, KExpr, BTreeMap<(usize, usize), Var>) {
    let geometry = &kernel.geometry;
    let whole: Vec<(i64, i64)> = kernel.extents.iter().map(|&e| (0, e as i64)).collect();
    let mut decls = vec![KStmt::Comment(
        "the interior path: a block whose tile lies inside the grid, each part covering all or \
         none of the cells its stencil computes, runs without a test per cell"
            .to_string(),
    )];
    // Each condition gets a name of its own, so that the test reads as a
    // sentence: `interior = tile_in_grid && (part0_covers || part0_misses) ...`.
    fn named(ctx: &mut PointCtx<'_>, decls: &mut Vec<KStmt>, hint: String, init: KExpr) -> Var {
        let var = ctx.params.vars.temp_int(hint);
        decls.push(KStmt::Decl { var, init });
        var
    }
    let inside = named(
        ctx,
        &mut decls,
        "tile_in_grid".to_string(),
        geometry.region_inside_grid(&whole),
    );
    let mut tests = vec![KExpr::var(inside)];
    let mut flags = BTreeMap::new();
    let stencils = kernel
        .program
        .iterate
        .as_ref()
        .map_or(&[][..], |i| &i.stencils[..]);
    for (k, stencil) in stencils.iter().enumerate() {
        let region = kernel.region(0, k);
        if region.iter().any(|(lo, hi)| hi <= lo) {
            continue;
        }
        if let [part] = &stencil.parts[..] {
            let (covers, _) = geometry.subset_against_region(ctx, &part.subset, &region, module);
            let covers = named(ctx, &mut decls, format!("{}_covers", stencil.name), covers);
            tests.push(KExpr::var(covers));
            continue;
        }
        for (p, part) in stencil.parts.iter().enumerate() {
            let (covers, misses) =
                geometry.subset_against_region(ctx, &part.subset, &region, module);
            let flag = named(
                ctx,
                &mut decls,
                format!("{}_part{p}_covers", stencil.name),
                covers,
            );
            let misses = named(
                ctx,
                &mut decls,
                format!("{}_part{p}_misses", stencil.name),
                misses,
            );
            flags.insert((k, p), flag);
            tests.push(KExpr::bin(
                BinaryOp::Or,
                KExpr::var(flag),
                KExpr::var(misses),
            ));
        }
    }
    let interior = named(
        ctx,
        &mut decls,
        "interior".to_string(),
        geometry::all(tests),
    );
    (decls, KExpr::var(interior), flags)
}
