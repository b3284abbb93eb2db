//! Stencil parts to kernels: the block's points, shared-memory tiles with their
//! cooperative halo loads, shared copies of tables, and the per-point code.

use crate::analysis::Footprint;
use crate::ir::{Program, Stencil, StencilPart};
use crate::kir::plan::{ArgSource, Launch};
use crate::kir::{Builtin, KExpr, KStmt, Kernel, Module, Origin, SharedArray, Space, Var, Vars};
use crate::lower::letter;
use crate::lower::point::{PointCtx, Tile};
use crate::lower::reduce::{fused_epilogue, FusedTerms};
use run::{first_points, thread_points, Shape};
use tile_load::{load_tiles, TileToLoad};

pub(super) mod run;
mod tile_load;

use crate::schedule::{FieldPlacement, StencilSchedule, TablePlacement};
pub use run::MAX_UNROLLED_POINTS;
pub use tile_load::{loads_per_thread, MAX_UNROLLED_TILE_LOADS};

/// Lowers a group of stencils the schedule runs together: one stencil, each part
/// a kernel; or fused single-part stencils, one kernel named after all of them.
/// `wide`: flattened field indices in 64 bits. Returns the launches. With
/// `check`, only the group's last launch, as a variant that also folds the
/// check's reduction terms (a fused check). A halo-recompute pair is not
/// lowered here but by `lower::recompute`.
pub(crate) fn lower_group(
    program: &Program,
    group: &[Stencil],
    schedule: &StencilSchedule,
    wide: bool,
    module: &mut Module,
    check: Option<&FusedTerms<'_>>,
) -> Vec<Launch> {
    let mut launches: Vec<(String, Vec<(&str, &StencilPart)>)> = if let [stencil] = group {
        let single = stencil.parts.len() == 1;
        stencil
            .parts
            .iter()
            .enumerate()
            .map(|(k, part)| {
                let name = if single {
                    stencil.name.clone()
                } else {
                    format!("{}_part{k}", stencil.name)
                };
                (name, vec![(stencil.name.as_str(), part)])
            })
            .collect()
    } else {
        // The schedule fuses only single-part stencils over one subset.
        let names: Vec<&str> = group.iter().map(|s| s.name.as_str()).collect();
        let parts = group
            .iter()
            .map(|s| (s.name.as_str(), &s.parts[0]))
            .collect();
        vec![(names.join("_"), parts)]
    };
    if let Some(terms) = check {
        launches = launches.split_off(launches.len().saturating_sub(1));
        for (name, _) in &mut launches {
            let reductions: Vec<&str> =
                terms.reductions.iter().map(|r| r.1.name.as_str()).collect();
            *name = format!("{name}_with_{}", reductions.join("_"));
        }
    }
    launches
        .iter()
        .map(|(name, parts)| lower_part(program, name, parts, schedule, wide, module, check))
        .collect()
}

/// The kernel parameters `lo_*` and `hi_*`: the launch subset's first and last
/// index per grid axis (outermost first).
pub(crate) fn subset_bounds(ctx: &mut PointCtx<'_>, rank: usize) -> Vec<(KExpr, KExpr)> {
    (0..rank)
        .map(|a| {
            let l = letter(rank, a);
            let mut bound = |end: &str, source| {
                ctx.params.scalar(
                    &format!("{end}_{l}"),
                    crate::ir::ScalarType::Int,
                    source,
                    Origin::Generated,
                )
            };
            (bound("lo", ArgSource::Lo(a)), bound("hi", ArgSource::Hi(a)))
        })
        .collect()
}

/// Declares each thread axis's `(thread index, block's first grid index)`
/// variables (x first): `t = threadIdx`, `base = lo + blockIdx * per_block`.
/// With `align_x` > 1 the blocks start at the subset's first x rounded down to
/// a multiple of `align_x` elements (`lo - lo % align_x`), so that every
/// thread's vectors are aligned (the launch's `align_x` tells the
/// host); other kernels pass 1.
pub(crate) fn block_origin(
    threads: &[(Var, Var)],
    lo_hi: &[(KExpr, KExpr)],
    per_block: [u32; 3],
    align_x: u32,
) -> Vec<KStmt> {
    let rank = threads.len();
    let mut out = Vec::new();
    for (d, &(thread, base)) in threads.iter().enumerate() {
        out.push(KStmt::Decl {
            var: thread,
            init: KExpr::Builtin(Builtin::ThreadIdx(d as u8)),
        });
        let lo = lo_hi[rank - 1 - d].0.clone();
        let first = if d == 0 && align_x > 1 {
            KExpr::bin(
                crate::ir::BinaryOp::Sub,
                lo.clone(),
                KExpr::bin(crate::ir::BinaryOp::Rem, lo, KExpr::int(i64::from(align_x))),
            )
        } else {
            lo
        };
        out.push(KStmt::Decl {
            var: base,
            init: KExpr::plus(
                first,
                KExpr::times(
                    KExpr::Builtin(Builtin::BlockIdx(d as u8)),
                    KExpr::int(per_block[d] as i64),
                ),
            ),
        });
    }
    out
}

/// Variables of the thread's position along thread axis `d`.
pub(super) struct AxisVars {
    /// Thread index (`tx`).
    pub thread: Var,
    /// Run point loop variable of the edge path (`px`).
    pub point: Var,
    /// The run's first point within the block's points (`qx`, or `qy0` when
    /// the thread has several points along the axis).
    pub first_in_block: Var,
    /// The run's first grid index (`ix`, or `iy0`).
    pub first_grid: Var,
    /// Point within the block's points on the edge path (`qy`).
    pub in_block: Var,
    /// Grid index on the edge path (`iy`).
    pub grid: Var,
    /// First grid index of the block (`base_x`).
    pub base: Var,
}

pub(super) fn axis_vars(d: usize, runs: bool, vars: &mut Vars) -> AxisVars {
    let l = ["x", "y", "z"][d];
    let first = if runs { "0" } else { "" };
    AxisVars {
        thread: vars.temp_int(format!("t{l}")),
        point: vars.temp_int(format!("p{l}")),
        first_in_block: vars.temp_int(format!("q{l}{first}")),
        first_grid: vars.temp_int(format!("i{l}{first}")),
        in_block: vars.temp_int(format!("q{l}")),
        grid: vars.temp_int(format!("i{l}")),
        base: vars.temp_int(format!("base_{l}")),
    }
}

/// One kernel running `parts` (each with its stencil's name, over the first's
/// subset) one after the other at each point; with `check`, also folding the
/// check's reduction terms at each point (see `reduce::fused_epilogue`).
fn lower_part(
    program: &Program,
    name: &str,
    parts: &[(&str, &StencilPart)],
    schedule: &StencilSchedule,
    wide: bool,
    module: &mut Module,
    check: Option<&FusedTerms<'_>>,
) -> Launch {
    let subset = &parts[0].1.subset;
    let rank = subset.rank();
    let block = schedule.block;
    let vector = schedule.vector.max(1);
    // With vectors, a thread's x points are `vector` consecutive ones.
    let tile = if vector > 1 {
        [vector, schedule.tile[1], schedule.tile[2]]
    } else {
        schedule.tile
    };
    // The schedule keeps block x tile within MAX_POINTS_PER_BLOCK; saturating
    // keeps a hand-made schedule from wrapping (the host plan then refuses it).
    let per_block: [u32; 3] = [0, 1, 2].map(|d| block[d].saturating_mul(tile[d]));
    let mut kernel_vars = Vars::default();
    let vars: Vec<AxisVars> = (0..rank)
        .map(|d| axis_vars(d, tile[d] > 1, &mut kernel_vars))
        .collect();
    // The run module points the context at each of the thread's points.
    let mut ctx = PointCtx::new(program, Vec::new(), Vec::new());
    ctx.params.vars = kernel_vars;
    ctx.wide = wide;
    let footprints: Vec<Footprint> = parts
        .iter()
        .map(|(_, p)| Footprint::of_part(program, p))
        .collect();
    let footprint = Footprint::merge(&footprints);
    ctx.grid = footprint.written_grid(program);
    // Written levels first so their buffers are the kernel's first parameters.
    for (f, t) in footprint.written() {
        ctx.params.level(program, f, t, true);
    }
    let lo_hi = subset_bounds(&mut ctx, rank);
    let threads: Vec<(Var, Var)> = vars.iter().map(|v| (v.thread, v.base)).collect();
    let align_x = if vector > 1 {
        vector_alignment(program, &footprint, vector)
    } else {
        1
    };
    let prologue = block_origin(&threads, &lo_hi, per_block, align_x);

    let to_load = staged_tiles(&mut ctx, schedule, &footprint, rank, per_block);
    let loads = load_tiles(&mut ctx, &to_load, &vars, block);
    ctx.interior = interior_levels(program, &footprint, &ctx);

    // Tables: fold into literals when unrolling, else constant or shared memory.
    for part_table in schedule.tables.iter() {
        ctx.tables.insert(*part_table.0, *part_table.1);
    }
    ctx.unroll = schedule
        .tables
        .values()
        .any(|p| *p == TablePlacement::Literals);

    // The per-point code (lowered first: it decides which tables go to shared memory).
    let epilogue = check.map(|terms| {
        let thread = linear_thread(rank, block, &vars);
        fused_epilogue(&mut ctx, terms, rank, block, thread)
    });
    let shape = Shape {
        block,
        tile,
        vars: &vars,
        hi: lo_hi.iter().map(|(_, hi)| hi.clone()).collect(),
        fold: epilogue.as_ref(),
        vector,
        lo_x: (align_x > 1).then(|| lo_hi[rank - 1].0.clone()),
        grid: ctx.grid,
    };
    let mut body = first_points(&shape);
    body.extend(thread_points(&mut ctx, parts, &shape, module));

    let mut kernel_body = prologue;
    kernel_body.extend(shared_table_copies(&mut ctx, rank, block, &vars, module));
    let staged = !loads.is_empty() || !ctx.shared_tables.is_empty();
    kernel_body.extend(loads);
    if staged {
        kernel_body.push(KStmt::Barrier);
    }
    if let Some(e) = &epilogue {
        kernel_body.extend(e.init.iter().cloned());
    }
    kernel_body.extend(body);
    if let Some(e) = epilogue {
        kernel_body.extend(e.tail);
    }

    let uses_double = ctx.uses_double;
    let shared = ctx.shared;
    let (params, args, vars) = ctx.params.finish();
    module.kernels.push(Kernel {
        name: name.to_string(),
        block,
        vars,
        params,
        shared,
        body: kernel_body,
        uses_double,
    });
    Launch {
        kernel: module.kernels.len() - 1,
        subset: Some(subset.clone()),
        block,
        points_per_block: per_block,
        args,
        max_groups: None,
        align_x,
    }
}

/// The shared tiles of the levels the schedule stages (those read over a
/// static box of the kernel's rank and not written by it): each declared,
/// registered in `ctx` for the reads, and returned for loading.
fn staged_tiles(
    ctx: &mut PointCtx<'_>,
    schedule: &StencilSchedule,
    footprint: &Footprint,
    rank: usize,
    per_block: [u32; 3],
) -> Vec<TileToLoad> {
    let program = ctx.program;
    let mut to_load = Vec::new();
    for reads in &footprint.reads {
        let level = reads.level();
        if schedule.fields.get(&level) != Some(&FieldPlacement::SharedTile) {
            continue;
        }
        let Some(range) = reads.static_box() else {
            continue;
        };
        let field = &program.fields[level.0 .0];
        if range.len() != rank || footprint.writes_level(level.0, level.1) {
            continue;
        }
        let buffer = ctx.params.level(program, level.0, level.1, false);
        let buffer_hint = ctx.params.vars.decl(buffer).hint.clone();
        let tile = ctx.params.vars.add(
            format!("{buffer_hint}_tile"),
            field.ty,
            Space::Shared,
            Origin::Derived,
        );
        let extents: Vec<usize> = (0..rank)
            .map(|a| {
                let d = rank - 1 - a;
                (per_block[d] as usize).saturating_add(range[a].1.abs_diff(range[a].0) as usize)
            })
            .collect();
        ctx.shared.push(SharedArray {
            var: tile,
            ty: field.ty,
            dims: extents.clone(),
        });
        let origin: Vec<i64> = range.iter().map(|r| r.0).collect();
        ctx.tiles.insert(
            level,
            Tile {
                var: tile,
                origin: origin.clone(),
                covers: Some(range.clone()),
            },
        );
        to_load.push(TileToLoad {
            field: level.0,
            buffer,
            tile,
            extents,
            origin,
            mode: field.boundary,
            comment: format!(
                "{} with its halo into shared memory ({} mode applied while loading)",
                buffer_hint,
                field.boundary.name()
            ),
        });
    }
    to_load
}

/// Where a kernel with vectors of `vector` elements starts its blocks along x:
/// at multiples of 128 bytes of the widest element it accesses (a warp's
/// accesses then start on a cache line), and at least of `vector`.
fn vector_alignment(program: &Program, footprint: &Footprint, vector: u32) -> u32 {
    let widest = footprint
        .reads
        .iter()
        .map(|r| r.field)
        .chain(footprint.written().into_iter().map(|(f, _)| f))
        .map(|f| program.fields[f.0].ty.size_bytes() as u32)
        .max()
        .unwrap_or(4)
        .max(1);
    (128 / widest).max(vector)
}

/// Offsets beyond this are left to the boundary helpers: the interior
/// condition adds them to 32-bit grid indices.
const MAX_INTERIOR_OFFSET: i64 = 1 << 20;

/// The levels read from global memory at offsets a boundary mode would map,
/// with the box of offsets each is read at: a run whose whole box lies inside
/// the grid reads them as they are (see `run::interior_condition`).
pub(super) fn interior_levels(
    program: &Program,
    footprint: &Footprint,
    ctx: &PointCtx<'_>,
) -> std::collections::BTreeMap<crate::analysis::Level, Vec<(i64, i64)>> {
    footprint
        .reads
        .iter()
        .filter(|r| !ctx.tiles.contains_key(&r.level()) && !r.only_center())
        .filter(|r| program.fields[r.field.0].boundary != crate::ir::BoundaryMode::None)
        .filter_map(|r| Some((r.level(), r.static_box()?)))
        .filter(|(_, range)| {
            range
                .iter()
                .all(|&(lo, hi)| lo.abs() <= MAX_INTERIOR_OFFSET && hi.abs() <= MAX_INTERIOR_OFFSET)
        })
        .collect()
}

/// The copies of the coefficient tables placed in shared memory from their
/// constant arrays, the block's threads striding over each (the caller puts
/// the barrier after them); nothing when no table is in shared memory.
pub(super) fn shared_table_copies(
    ctx: &mut PointCtx<'_>,
    rank: usize,
    block: [u32; 3],
    vars: &[AxisVars],
    module: &mut Module,
) -> Vec<KStmt> {
    let mut out = Vec::new();
    if ctx.shared_tables.is_empty() {
        return out;
    }
    let program = ctx.program;
    let threads: u32 = block.iter().product();
    let tid = ctx.params.vars.temp_int("tid");
    out.push(KStmt::Decl {
        var: tid,
        init: linear_thread(rank, block, vars),
    });
    for (t, shared) in ctx.shared_tables.clone() {
        let constant = ctx.const_table(t, module, false);
        let len = program.tables[t.0].values.len();
        out.push(KStmt::Comment(format!(
            "coefficient table {} into shared memory",
            program.tables[t.0].name
        )));
        let s = ctx.params.vars.temp_int("s");
        out.push(KStmt::For {
            var: s,
            start: KExpr::var(tid),
            end: KExpr::int(len as i64),
            step: KExpr::int(threads as i64),
            unroll: false,
            body: vec![KStmt::Store {
                space: Space::Shared,
                array: shared,
                index: vec![KExpr::var(s)],
                value: KExpr::Load {
                    space: Space::Constant,
                    array: constant,
                    index: vec![KExpr::var(s)],
                },
            }],
        });
    }
    out
}

/// The thread's index within its block, `tx + bx * (ty + by * tz)`.
pub(super) fn linear_thread(rank: usize, block: [u32; 3], vars: &[AxisVars]) -> KExpr {
    let mut e: Option<KExpr> = None;
    for d in (0..rank).rev() {
        let t = KExpr::var(vars[d].thread);
        e = Some(match e {
            None => t,
            Some(outer) => KExpr::plus(t, KExpr::times(KExpr::int(block[d] as i64), outer)),
        });
    }
    e.unwrap_or_else(|| KExpr::int(0))
}
