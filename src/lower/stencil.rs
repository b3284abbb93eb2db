//! Stencil parts to kernels: the block's points, shared-memory tiles with their
//! cooperative halo loads, shared copies of tables, and the per-point code.

use crate::analysis::Footprint;
use crate::ir::{BinaryOp, BoundaryMode, Program, Stencil, StencilPart, Value};
use crate::kir::{
    Builtin, Helper, KExpr, KStmt, Kernel, Module, Origin, SharedArray, Space, Var, Vars,
};
use crate::lower::letter;
use crate::lower::plan::{ArgSource, Launch};
use crate::lower::point::{in_range, PointCtx, Tile};
use crate::lower::reduce::{fused_epilogue, FusedTerms};
use crate::schedule::{FieldPlacement, StencilSchedule, TablePlacement};

/// Lowers a group of stencils the schedule runs together: one stencil, each part
/// a kernel; or fused single-part stencils, one kernel named after all of them.
/// `wide`: flattened field indices in 64 bits. Returns the launches. With
/// `check`, only the group's last launch, as a variant that also folds the
/// check's reduction terms (a fused check).
pub(crate) fn lower_group(
    program: &Program,
    group: &[Stencil],
    schedule: &StencilSchedule,
    wide: bool,
    module: &mut Module,
    check: Option<&FusedTerms<'_>>,
) -> Vec<Launch> {
    if let (Some(recompute), [producer, consumer]) = (&schedule.recompute, group) {
        // `lower_for` fuses no check into a halo-recompute pair.
        debug_assert!(check.is_none());
        return vec![crate::lower::recompute::lower_pair(
            program, producer, consumer, schedule, recompute, wide, module,
        )];
    }
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

/// Variables of the thread's position along thread axis `d`.
struct AxisVars {
    /// Thread index (`tx`).
    thread: Var,
    /// Tile point loop variable (`px`).
    point: Var,
    /// Point within the block's points (`qx`).
    in_block: Var,
    /// Grid index (`ix`).
    grid: Var,
    /// First grid index of the block (`base_x`).
    base: Var,
}

fn axis_vars(d: usize, vars: &mut Vars) -> AxisVars {
    let l = ["x", "y", "z"][d];
    AxisVars {
        thread: vars.temp_int(format!("t{l}")),
        point: vars.temp_int(format!("p{l}")),
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
    let tile = schedule.tile;
    // The schedule keeps block x tile within MAX_POINTS_PER_BLOCK; saturating
    // keeps a hand-made schedule from wrapping (the host plan then refuses it).
    let per_block: [u32; 3] = [0, 1, 2].map(|d| block[d].saturating_mul(tile[d]));
    let mut kernel_vars = Vars::default();
    let vars: Vec<AxisVars> = (0..rank).map(|d| axis_vars(d, &mut kernel_vars)).collect();
    // Outermost-first lists of the point's variables.
    let coords = (0..rank)
        .map(|a| KExpr::var(vars[rank - 1 - a].grid))
        .collect();
    let in_block = (0..rank)
        .map(|a| KExpr::var(vars[rank - 1 - a].in_block))
        .collect();
    let mut ctx = PointCtx::new(program, coords, in_block);
    ctx.params.vars = kernel_vars;
    ctx.wide = wide;
    let footprints: Vec<Footprint> = parts
        .iter()
        .map(|(_, p)| Footprint::of_part(program, p))
        .collect();
    let footprint = Footprint::merge(&footprints);
    // Written levels first so their buffers are the kernel's first parameters.
    for (f, t) in footprint.written() {
        ctx.params.level(program, f, t, true);
    }
    let mut lo_hi = Vec::new();
    for a in 0..rank {
        let l = letter(rank, a);
        let lo = ctx.params.scalar(
            &format!("lo_{l}"),
            crate::ir::ScalarType::Int,
            ArgSource::Lo(a),
            Origin::Generated,
        );
        let hi = ctx.params.scalar(
            &format!("hi_{l}"),
            crate::ir::ScalarType::Int,
            ArgSource::Hi(a),
            Origin::Generated,
        );
        lo_hi.push((lo, hi));
    }
    let mut prologue = vec![];
    for d in 0..rank {
        let a = rank - 1 - d;
        prologue.push(KStmt::Decl {
            var: vars[d].thread,
            init: KExpr::Builtin(Builtin::ThreadIdx(d as u8)),
        });
        prologue.push(KStmt::Decl {
            var: vars[d].base,
            init: KExpr::plus(
                lo_hi[a].0.clone(),
                KExpr::times(
                    KExpr::Builtin(Builtin::BlockIdx(d as u8)),
                    KExpr::int(per_block[d] as i64),
                ),
            ),
        });
    }

    // Shared tiles of the levels the schedule stages.
    let mut loads = Vec::new();
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
            },
        );
        loads.push(KStmt::Comment(format!(
            "{} with its halo into shared memory ({} mode applied while loading)",
            buffer_hint,
            field.boundary.name()
        )));
        loads.push(tile_load(
            &mut ctx,
            level.0,
            buffer,
            tile,
            &extents,
            &origin,
            &vars,
            block,
            field.boundary,
        ));
    }

    // Tables: fold into literals when unrolling, else constant or shared memory.
    for part_table in schedule.tables.iter() {
        ctx.tables.insert(*part_table.0, *part_table.1);
    }
    ctx.unroll = schedule
        .tables
        .values()
        .any(|p| *p == TablePlacement::Literals);

    // The per-point code (lowered first: it decides which tables go to shared memory).
    let mut point_body = Vec::new();
    for (stencil, part) in parts {
        ctx.name_locals(&part.locals);
        let mut code = ctx.declare_locals(part);
        code.extend(ctx.stmts(&part.body, module, 1));
        if parts.len() == 1 {
            point_body = code;
        } else {
            // Each fused stencil's locals in a scope of their own.
            point_body.push(KStmt::Comment(format!("stencil {stencil}")));
            point_body.push(KStmt::Block(code));
        }
    }
    let epilogue = check.map(|terms| {
        let thread = linear_thread(rank, block, &vars);
        fused_epilogue(&mut ctx, terms, block, thread, module)
    });
    if let Some(e) = &epilogue {
        point_body.extend(e.per_point.iter().cloned());
    }
    let mut guard: Option<KExpr> = None;
    for (d, v) in vars.iter().enumerate() {
        if per_block[d] == 1 && block[d] == 1 {
            // One point per block along this axis: always inside the subset.
            continue;
        }
        let a = rank - 1 - d;
        let test = KExpr::bin(BinaryOp::Le, KExpr::var(v.grid), lo_hi[a].1.clone());
        guard = Some(match guard {
            None => test,
            Some(g) => KExpr::bin(BinaryOp::And, g, test),
        });
    }
    let guarded = match guard {
        Some(cond) => vec![KStmt::If {
            cond,
            then: point_body,
            otherwise: vec![],
        }],
        None => point_body,
    };
    // Loop over the thread's points, innermost axis innermost.
    let mut body = guarded;
    for d in 0..rank {
        let v = &vars[d];
        let mut inner = vec![
            KStmt::Decl {
                var: v.in_block,
                init: if tile[d] == 1 {
                    KExpr::var(v.thread)
                } else {
                    KExpr::plus(
                        KExpr::var(v.thread),
                        KExpr::times(KExpr::var(v.point), KExpr::int(block[d] as i64)),
                    )
                },
            },
            KStmt::Decl {
                var: v.grid,
                init: KExpr::plus(KExpr::var(v.base), KExpr::var(v.in_block)),
            },
        ];
        inner.extend(body);
        body = if tile[d] == 1 {
            inner
        } else {
            vec![KStmt::For {
                var: v.point,
                start: KExpr::int(0),
                end: KExpr::int(tile[d] as i64),
                step: KExpr::int(1),
                unroll: true,
                body: inner,
            }]
        };
    }

    let mut kernel_body = prologue;
    let threads: u32 = block.iter().product();
    if !ctx.shared_tables.is_empty() {
        let tid = ctx.params.vars.temp_int("tid");
        kernel_body.push(KStmt::Decl {
            var: tid,
            init: linear_thread(rank, block, &vars),
        });
        for (t, shared) in ctx.shared_tables.clone() {
            let constant = ctx.const_table(t, module, false);
            let len = program.tables[t.0].values.len();
            kernel_body.push(KStmt::Comment(format!(
                "coefficient table {} into shared memory",
                program.tables[t.0].name
            )));
            let s = ctx.params.vars.temp_int("s");
            kernel_body.push(KStmt::For {
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
    }
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
    }
}

/// The thread's index within its block, `tx + bx * (ty + by * tz)`.
fn linear_thread(rank: usize, block: [u32; 3], vars: &[AxisVars]) -> KExpr {
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

/// The cooperative load of a tile: each thread strides over the tile by the block
/// size per axis (coalesced along x, no division), resolving the boundary.
#[allow(clippy::too_many_arguments)]
fn tile_load(
    ctx: &mut PointCtx<'_>,
    field: crate::ir::FieldId,
    buffer: Var,
    tile: Var,
    extents: &[usize],
    origin: &[i64],
    vars: &[AxisVars],
    block: [u32; 3],
    mode: BoundaryMode,
) -> KStmt {
    let rank = extents.len();
    let grid = ctx.program.fields[field.0].grid;
    let ty = ctx.program.fields[field.0].ty;
    let locals: Vec<Var> = (0..rank)
        .map(|d| ctx.params.vars.temp_int(format!("l{}", ["x", "y", "z"][d])))
        .collect();
    let local = |d: usize| locals[d];
    let mut coords = Vec::new();
    let mut inside: Option<KExpr> = None;
    for (a, first) in origin.iter().enumerate() {
        let d = rank - 1 - a;
        let g = KExpr::plus(
            KExpr::plus(KExpr::var(vars[d].base), KExpr::int(*first)),
            KExpr::var(local(d)),
        );
        let n = ctx.params.grid_size(ctx.program, grid, a);
        coords.push(match mode {
            BoundaryMode::Clamp => KExpr::Helper(Helper::Clamp, vec![g, n]),
            BoundaryMode::Mirror => KExpr::Helper(Helper::Mirror, vec![g, n]),
            BoundaryMode::Periodic => KExpr::Helper(Helper::Periodic, vec![g, n]),
            // Cells outside the grid of a `none` field are never read by a point
            // of the subset (analysis checked); they load as zero like `zero`.
            BoundaryMode::Zero | BoundaryMode::None => {
                let test = in_range(&g, n);
                inside = Some(match inside {
                    None => test,
                    Some(prev) => KExpr::bin(BinaryOp::And, prev, test),
                });
                g
            }
        });
    }
    let index = ctx.linear(field, coords);
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
            Box::new(KExpr::Lit(Value::Int(0).cast(ty))),
        ),
    };
    let mut stmt = KStmt::Store {
        space: Space::Shared,
        array: tile,
        index: (0..rank).map(|a| KExpr::var(local(rank - 1 - a))).collect(),
        value,
    };
    for d in 0..rank {
        let a = rank - 1 - d;
        stmt = KStmt::For {
            var: local(d),
            start: KExpr::var(vars[d].thread),
            end: KExpr::int(extents[a] as i64),
            step: KExpr::int(block[d] as i64),
            unroll: false,
            body: vec![stmt],
        };
    }
    stmt
}
