//! [`KernelSpec`]s of a lowered program: each launch of the host plan with the
//! accesses of its points (from the program's parts, under the schedule's
//! placements) and the instruction count of its kernel.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::access::{body_accesses, iterate_accesses, AccessKind, GridAccess, PartId};
use crate::analysis::affine::{Affine, Var};
use crate::analysis::Footprint;
use crate::ir::env::RunEnv;
use crate::ir::{Program, StencilPart, Value};
use crate::kir::plan::{fold_groups, Launch};
use crate::lower::{level_name, Lowered};
use crate::model::{instr, Access, KernelSpec, Role, Tile};
use crate::schedule::{FieldPlacement, HaloRecompute, Schedule};

/// Every launch of one iteration of `lowered`, as the model sees it.
pub fn specs(
    program: &Program,
    schedule: &Schedule,
    lowered: &Lowered,
    env: &RunEnv,
) -> Vec<KernelSpec> {
    let mut out = Vec::new();
    let Some(iterate) = &program.iterate else {
        return out;
    };
    let per_check = match env.every() {
        Some(every) if every > 0 => 1.0 / every as f64,
        _ => 1.0 / env.max_iters().max(1) as f64,
    };
    let accesses = iterate_accesses(program);
    let fused = lowered.plan.fused.as_ref();
    for (s, launches) in lowered.plan.stencils.iter().enumerate() {
        if launches.is_empty() {
            continue;
        }
        let mut end = s + 1;
        while end < iterate.stencils.len() && schedule.stencil(end - 1).fuse_with_next {
            end += 1;
        }
        let group = &iterate.stencils[s..end];
        let names: Vec<&str> = group.iter().map(|st| st.name.as_str()).collect();
        for (k, launch) in launches.iter().enumerate() {
            let parts: Vec<&StencilPart> = if group.len() > 1 {
                group.iter().map(|st| &st.parts[0]).collect()
            } else {
                vec![&group[0].parts[k]]
            };
            let mut spec = stencil_spec(
                program,
                schedule,
                s,
                &parts,
                launch,
                lowered,
                env,
                Role::Stencil(names.join("+")),
            );
            let variant = fused.filter(|f| f.stencil == s && k + 1 == launches.len());
            if let Some(f) = variant {
                // The plain kernel runs when the check is not due; the variant
                // when it is.
                spec.per_iteration = 1.0 - per_check;
                out.push(spec);
                let mut with_check = stencil_spec(
                    program,
                    schedule,
                    s,
                    &parts,
                    &f.launch,
                    lowered,
                    env,
                    Role::FusedCheck(names.join("+")),
                );
                // The terms read what the point has just read or written: only
                // levels the stencil does not touch cost traffic of their own.
                let terms = accesses.iter().filter(|a| match a.id {
                    PartId::Reduction { reduction, part } => lowered.plan.reductions[reduction]
                        .fused_parts
                        .contains(&part),
                    _ => false,
                });
                let grids: Vec<&GridAccess> = terms.flat_map(|a| &a.grids).collect();
                for access in distinct(program, env, grids.into_iter(), AccessKind::Load) {
                    let touched = |l: &Access| l.level == access.level && l.offset == access.offset;
                    let staged = with_check.tiles.iter().any(|t| t.level == access.level);
                    if !staged
                        && !with_check.reads.iter().any(touched)
                        && !with_check.writes.iter().any(touched)
                    {
                        with_check.reads.push(access);
                    }
                }
                with_check.per_iteration = per_check;
                out.push(with_check);
            } else {
                out.push(spec);
            }
        }
    }
    for (r, plan) in lowered.plan.reductions.iter().enumerate() {
        // Partials: one per block of the fused variant, then the separate parts'.
        let mut partials = match fused {
            Some(f) if f.reductions.contains(&r) => out
                .iter()
                .find(|s| matches!(s.role, Role::FusedCheck(_)))
                .map_or(0, KernelSpec::blocks),
            _ => 0,
        };
        for (p, launch) in &plan.parts {
            let grids: Vec<&GridAccess> = accesses
                .iter()
                .filter(|a| {
                    a.id == PartId::Reduction {
                        reduction: r,
                        part: *p,
                    }
                })
                .flat_map(|a| &a.grids)
                .collect();
            let mut spec = base_spec(
                program,
                launch,
                lowered,
                env,
                Role::ReductionPart(plan.name.clone()),
            );
            spec.reads = distinct(program, env, grids.into_iter(), AccessKind::Load);
            spec.per_iteration = per_check;
            grid_stride(&mut spec, launch);
            partials += spec.blocks();
            out.push(spec);
        }
        let mut finish_over = partials;
        if let Some(groups) = fold_groups(partials) {
            let mut fold = fold_spec(program, &plan.fold, lowered, env, plan, partials, groups);
            fold.per_iteration = per_check;
            out.push(fold);
            finish_over = u64::from(groups);
        }
        let mut finish = fold_spec(program, &plan.finish, lowered, env, plan, finish_over, 1);
        finish.per_iteration = per_check;
        out.push(finish);
    }
    out
}

/// A grid-stride reduction part: its block count is capped, so each thread
/// folds several points in a run-time loop.
fn grid_stride(spec: &mut KernelSpec, launch: &Launch) {
    let Some(cap) = launch.max_groups else {
        return;
    };
    let rank = spec.bounds.len();
    let mut per_thread = [1u32; 3];
    for (a, (lo, hi)) in spec.bounds.iter().enumerate() {
        let d = rank - 1 - a;
        let extent = (hi - lo + 1).max(0) as u64;
        let blocks = extent
            .div_ceil(u64::from(spec.block[d].max(1)))
            .clamp(1, u64::from(cap[d]));
        let threads = blocks * u64::from(spec.block[d].max(1));
        per_thread[d] = extent.div_ceil(threads).clamp(1, u64::from(u32::MAX)) as u32;
    }
    spec.points_per_thread = per_thread;
    let points: u32 = per_thread.iter().product();
    spec.instructions_per_thread *= f64::from(points);
    spec.instructions_per_thread_fma *= f64::from(points);
    // The loop has a run-time trip count: unrolled by 4 at most.
    spec.sequential_loads = points.div_ceil(4);
}

/// A pass folding `partials` values with `groups` blocks striding over them.
fn fold_spec(
    program: &Program,
    launch: &Launch,
    lowered: &Lowered,
    env: &RunEnv,
    plan: &crate::kir::plan::ReductionPlan,
    partials: u64,
    groups: u32,
) -> KernelSpec {
    let mut spec = base_spec(
        program,
        launch,
        lowered,
        env,
        Role::ReductionFinish(plan.name.clone()),
    );
    let threads = u64::from(spec.block[0]) * u64::from(groups.max(1));
    spec.bounds = vec![(0, partials.max(1) as i64 - 1)];
    spec.grid_dims = vec![partials.max(1) as usize];
    spec.points_per_thread = [partials.max(1).div_ceil(threads) as u32, 1, 1];
    spec.reads = vec![Access {
        level: format!("{}_partials", plan.name),
        elem: plan.ty.size_bytes(),
        offset: vec![0],
    }];
    let iterations = spec.points_per_thread[0] as f64;
    spec.instructions_per_thread *= iterations;
    spec.instructions_per_thread_fma *= iterations;
    // The loop over partials has a run-time trip count: the compiler unrolls
    // it by 4, so every fourth load waits for the one before.
    spec.sequential_loads = spec.points_per_thread[0].div_ceil(4);
    spec
}

fn base_spec(
    program: &Program,
    launch: &Launch,
    lowered: &Lowered,
    env: &RunEnv,
    role: Role,
) -> KernelSpec {
    let kernel = &lowered.module.kernels[launch.kernel];
    let count = instr::count(kernel, lowered.module.fma);
    let contracted = if lowered.module.fma {
        count
    } else {
        instr::count(kernel, true)
    };
    let bounds = launch
        .subset
        .as_ref()
        .map(|s| env.subset_box(s))
        .unwrap_or_default();
    let grid_dims = grid_of(program, env, bounds.len());
    KernelSpec {
        name: kernel.name.clone(),
        role,
        block: launch.block,
        points_per_thread: [0, 1, 2].map(|d| launch.points_per_block[d] / launch.block[d].max(1)),
        // Lowering aligns the blocks only for vectors of the x points.
        vector: if launch.align_x > 1 {
            launch.points_per_block[0] / launch.block[0].max(1)
        } else {
            1
        },
        align_x: launch.align_x.max(1),
        bounds,
        grid_dims,
        reads: vec![],
        writes: vec![],
        tiles: vec![],
        instructions_per_thread: count.total,
        fp64_per_thread: count.fp64,
        instructions_per_thread_fma: contracted.total,
        shared_bytes: kernel.shared_bytes(),
        per_iteration: 1.0,
        sequential_loads: 1,
    }
}

/// The sizes of the first grid of `rank` dimensions (row pitches of a launch).
fn grid_of(program: &Program, env: &RunEnv, rank: usize) -> Vec<usize> {
    program
        .grids
        .iter()
        .enumerate()
        .find(|(_, g)| g.rank() == rank)
        .and_then(|(i, _)| env.grid_dims().get(i).cloned())
        .unwrap_or_else(|| vec![1; rank])
}

#[allow(clippy::too_many_arguments)]
fn stencil_spec(
    program: &Program,
    schedule: &Schedule,
    stencil: usize,
    parts: &[&StencilPart],
    launch: &Launch,
    lowered: &Lowered,
    env: &RunEnv,
    role: Role,
) -> KernelSpec {
    let mut spec = base_spec(program, launch, lowered, env, role);
    if let Some(first_written) = parts
        .iter()
        .flat_map(|p| Footprint::of_part(program, p).writes)
        .next()
    {
        let grid = program.fields[first_written.field.0].grid;
        if let Some(dims) = env.grid_dims().get(grid.0) {
            spec.grid_dims = dims.clone();
        }
    }
    let placements = &schedule.stencil(stencil).fields;
    let bodies: Vec<_> = parts.iter().map(|p| body_accesses(&p.body)).collect();
    let grids = || bodies.iter().flat_map(|b| &b.grids);
    let staged = |a: &&GridAccess| {
        placements.get(&(a.target.field, a.target.time)) == Some(&FieldPlacement::SharedTile)
    };
    spec.reads = distinct(
        program,
        env,
        grids().filter(|a| !staged(a)),
        AccessKind::Load,
    );
    spec.writes = distinct(program, env, grids(), AccessKind::Store);
    if let Some(recompute) = &schedule.stencil(stencil).recompute {
        recomputed_reads(program, env, parts, recompute, &mut spec);
    }
    let staged_reads = distinct(program, env, grids().filter(staged), AccessKind::Load);
    let footprint = Footprint::merge(
        &parts
            .iter()
            .map(|p| Footprint::of_part(program, p))
            .collect::<Vec<_>>(),
    );
    for extent in &footprint.reads {
        let level = extent.level();
        if placements.get(&level) != Some(&FieldPlacement::SharedTile) {
            continue;
        }
        let (Some(halo), false) = (
            extent.static_box(),
            footprint.writes_level(level.0, level.1),
        ) else {
            continue;
        };
        let name = level_name(program, level.0, level.1);
        spec.tiles.push(Tile {
            elem: program.fields[level.0 .0].ty.size_bytes(),
            halo,
            reads_per_point: staged_reads.iter().filter(|a| a.level == name).count(),
            offsets: staged_reads
                .iter()
                .filter(|a| a.level == name)
                .map(|a| a.offset.clone())
                .collect(),
            level: name,
        });
    }
    spec
}

/// The distinct (level, offset) pairs of `kind` among `accesses`, every loop
/// iteration counted; an offset that is not affine counts as 0.
fn distinct<'a, 'p: 'a>(
    program: &Program,
    env: &RunEnv,
    accesses: impl Iterator<Item = &'a GridAccess<'p>>,
    kind: AccessKind,
) -> Vec<Access> {
    let mut seen: BTreeSet<(String, Vec<i64>)> = BTreeSet::new();
    let mut out = Vec::new();
    for access in accesses.filter(|a| a.kind == kind) {
        let target = access.target;
        let level = level_name(program, target.field, target.time);
        let elem = program.fields[target.field.0].ty.size_bytes();
        let forms: Vec<Option<Affine>> = target
            .offset
            .iter()
            .map(|o| Affine::of_expr(program, o))
            .collect();
        for values in loop_values(access) {
            let offset: Vec<i64> = forms
                .iter()
                .map(|f| f.as_ref().map_or(0, |f| evaluate(f, env.params(), &values)))
                .collect();
            if seen.insert((level.clone(), offset.clone())) {
                out.push(Access {
                    level: level.clone(),
                    elem,
                    offset,
                });
            }
        }
    }
    out
}

/// Every assignment of the access's loop variables (at most 4096).
fn loop_values(access: &GridAccess) -> Vec<BTreeMap<crate::ir::LocalId, i64>> {
    let mut out = vec![BTreeMap::new()];
    for r in &access.loops {
        let mut next = Vec::new();
        for partial in &out {
            for v in r.lo..=r.hi {
                let mut m: BTreeMap<_, _> = partial.clone();
                m.insert(r.var, v);
                next.push(m);
                if next.len() >= 4096 {
                    break;
                }
            }
        }
        out = next;
    }
    out
}

fn evaluate(form: &Affine, params: &[Value], loops: &BTreeMap<crate::ir::LocalId, i64>) -> i64 {
    form.terms.iter().fold(form.constant, |acc, (var, c)| {
        let v = match var {
            Var::Param(p) => params.get(p.0).map_or(0, |v| v.as_i64()),
            Var::Loop(l) => loops.get(l).copied().unwrap_or(0),
        };
        acc.wrapping_add(c.wrapping_mul(v))
    })
}

/// A producer/consumer pair fused by halo recompute: the consumer reads the
/// produced level from shared memory (no global read of it), the producer's
/// global write is there only with `write_back`, and the producer's reads
/// cover the block's points widened by the halo. Those are modelled as the
/// producer's offsets shifted by each end and the centre of the halo per
/// axis: the union of sectors a block requests (L2, DRAM) is exact when the
/// block is at least as wide as the halo; the L1 count is an upper bound.
/// The recomputed instructions are in the kernel IR's count already.
fn recomputed_reads(
    program: &Program,
    env: &RunEnv,
    parts: &[&StencilPart],
    recompute: &HaloRecompute,
    spec: &mut KernelSpec,
) {
    let level = level_name(program, recompute.level.0, recompute.level.1);
    spec.reads.retain(|a| a.level != level);
    if !recompute.write_back {
        spec.writes.retain(|a| a.level != level);
    }
    let Some(producer) = parts.first() else {
        return;
    };
    let body = body_accesses(&producer.body);
    let made = distinct(program, env, body.grids.iter(), AccessKind::Load);
    let mut shifts: Vec<Vec<i64>> = vec![vec![]];
    for &(lo, hi) in &recompute.halo {
        let mut ends = vec![lo, 0, hi];
        ends.dedup();
        ends.sort_unstable();
        ends.dedup();
        shifts = shifts
            .iter()
            .flat_map(|s| {
                ends.iter().map(move |e| {
                    let mut s = s.clone();
                    s.push(*e);
                    s
                })
            })
            .collect();
    }
    for access in made {
        for shift in &shifts {
            let offset: Vec<i64> = access
                .offset
                .iter()
                .zip(shift.iter().chain(std::iter::repeat(&0)))
                .map(|(o, s)| o + s)
                .collect();
            let known = spec
                .reads
                .iter()
                .any(|a| a.level == access.level && a.offset == offset);
            if !known {
                spec.reads.push(Access {
                    level: access.level.clone(),
                    elem: access.elem,
                    offset,
                });
            }
        }
    }
}
