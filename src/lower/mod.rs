//! Lowering: [`ir::Program`](crate::ir::Program) + [`Schedule`] to kernel IR and a
//! host plan.
//!
//! Every stencil part becomes one kernel over its subset (parts run in order, so
//! one launch per part keeps their in-place semantics); stencils the schedule
//! fuses become one kernel running them one after the other at each point; every
//! reduction part a
//! grid-stride kernel writing per-block partials, or, where legal, a term the
//! iteration's last stencil kernel folds in a variant of its own (a fused
//! check, see `fused_check`); every reduction a fold and a single-block final
//! pass. Shared-memory tiles, table placement and boundary handling follow the
//! schedule; the kernels never compute a shared-memory index with `%` or `/`.

mod fused_check;
mod point;
mod recompute;
mod reduce;
mod stencil;
mod strided;
mod tidy;
mod time_tile;

pub use stencil::{loads_per_thread, MAX_UNROLLED_POINTS, MAX_UNROLLED_TILE_LOADS};

use std::collections::BTreeMap;

use crate::ir::env::RunEnv;
use crate::ir::{FieldId, GridId, Program, ScalarType};
use crate::kir::names::Namer;
use crate::kir::plan::{ArgSource, HostPlan};
use crate::kir::{ConstArray, KExpr, KParam, Module, Origin, ParamKind, Space, Var, Vars};
use crate::schedule::{DeviceLimits, Schedule, ScheduleError};
// What lowering returns is kernel-IR data, defined with the host plan in `kir`.
pub use crate::kir::plan::Lowered;

/// The target dialect's capabilities that change what lowering emits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// CUDA: warp shuffles for the last steps of reduction trees.
    Cuda,
    /// OpenCL: a portable local-memory tree all the way.
    OpenCl,
}

impl Target {
    /// Whether reductions may use warp shuffles.
    pub fn has_warp_shuffle(self) -> bool {
        self == Target::Cuda
    }
}

/// Threads of every reduction block (a power of two).
pub const REDUCTION_THREADS: u32 = 256;

/// Lowers `program` under `schedule` for `target`; a reduction part fuses into
/// the last stencil kernel when its subset is written as that kernel's is.
pub fn lower(program: &Program, schedule: &Schedule, target: Target) -> Lowered {
    lower_for(program, schedule, target, None)
}

/// [`lower`] for the parameter values of `env` when given: a reduction part
/// then fuses into the last stencil kernel when its points are that kernel's
/// for these values (the host plan refuses other values).
pub fn lower_for(
    program: &Program,
    schedule: &Schedule,
    target: Target,
    env: Option<&RunEnv>,
) -> Lowered {
    let mut module = Module {
        name: program.name.clone(),
        constants: Vec::new(),
        kernels: Vec::new(),
        fma: schedule.fma,
        min_blocks_per_sm: schedule.min_blocks_per_sm,
    };
    let mut plan = HostPlan {
        wide_indices: schedule.wide_indices,
        ..HostPlan::default()
    };
    if let Some(tiling) = &schedule.time {
        plan.time_tile = time_tile::lower_time_tile(program, schedule, tiling, &mut module);
    }
    let wide = schedule.wide_indices;
    if let Some(iterate) = &program.iterate {
        let mut first = 0;
        let mut last_group = None;
        while first < iterate.stencils.len() {
            let mut end = first + 1;
            while end < iterate.stencils.len() && schedule.stencil(end - 1).fuse_with_next {
                end += 1;
            }
            let group = &iterate.stencils[first..end];
            let launches = match (&schedule.stencil(first).recompute, group) {
                (Some(recompute), [producer, consumer]) => vec![recompute::lower_pair(
                    program,
                    producer,
                    consumer,
                    schedule.stencil(first),
                    recompute,
                    wide,
                    &mut module,
                )],
                _ => stencil::lower_group(
                    program,
                    group,
                    schedule.stencil(first),
                    wide,
                    &mut module,
                    None,
                ),
            };
            // A check fuses into a plain kernel, not into a halo-recompute pair's.
            if let (Some(launch), None) = (launches.last(), &schedule.stencil(first).recompute) {
                last_group = Some((first, end, module.kernels[launch.kernel].name.clone()));
            }
            plan.stencils.push(launches);
            // The fused stencils run inside the group's kernel: no launches of their own.
            plan.stencils.extend((first + 1..end).map(|_| Vec::new()));
            first = end;
        }
        let last = last_group.as_ref().and_then(|(first, end, name)| {
            fused_check::LastLaunch::of_group(&iterate.stencils[*first..*end], name.clone())
        });
        // A time-tiled run evaluates its checks with separate reduction kernels.
        let last = last.filter(|_| plan.time_tile.is_none());
        let decision = fused_check::decide(program, last.as_ref(), env);
        plan.notes = decision.notes;
        let terms = reduce::FusedTerms {
            target,
            reductions: iterate
                .reductions
                .iter()
                .enumerate()
                .zip(&decision.fused)
                .filter(|(_, parts)| !parts.is_empty())
                .map(|((r, reduction), parts)| {
                    (crate::ir::ReductionId(r), reduction, parts.clone())
                })
                .collect(),
        };
        if let Some((first, end, _)) = &last_group {
            if !terms.reductions.is_empty() {
                let group = &iterate.stencils[*first..*end];
                let variant = stencil::lower_group(
                    program,
                    group,
                    schedule.stencil(*first),
                    wide,
                    &mut module,
                    Some(&terms),
                );
                plan.fused =
                    variant
                        .into_iter()
                        .next()
                        .map(|launch| crate::kir::plan::FusedCheck {
                            stencil: *first,
                            launch,
                            reductions: terms.reductions.iter().map(|(r, ..)| r.0).collect(),
                            subsets: terms
                                .reductions
                                .iter()
                                .flat_map(|(_, red, parts)| {
                                    parts.iter().map(|&p| red.parts[p].subset.clone())
                                })
                                .collect(),
                        });
            }
        }
        for (r, reduction) in iterate.reductions.iter().enumerate() {
            plan.reductions.push(reduce::lower_reduction(
                program,
                crate::ir::ReductionId(r),
                reduction,
                target,
                wide,
                &decision.fused[r],
                &mut module,
            ));
        }
    }
    name_module(&mut module);
    let lowered = Lowered { module, plan };
    #[cfg(debug_assertions)]
    if let Err(errors) = lowered.verify(program) {
        panic!(
            "lowering produced invalid kernel IR (a stencilc bug):\n{}",
            errors.join("\n")
        );
    }
    lowered
}

/// The thread-axis letter of grid axis `axis` (outermost first) in a `rank`-D grid.
pub(crate) fn letter(rank: usize, axis: usize) -> &'static str {
    ["x", "y", "z"][rank - 1 - axis]
}

/// The variables of a kernel being lowered, with its parameters collected
/// buffers first, in the order they were first used, each with where the host
/// takes it from (which also identifies it: one parameter per source).
#[derive(Default)]
pub(crate) struct Params {
    /// Every variable of the kernel.
    pub vars: Vars,
    buffers: Vec<(KParam, ArgSource)>,
    scalars: Vec<(KParam, ArgSource)>,
}

impl Params {
    /// The buffers registered so far of the levels of fields on `grid`.
    pub(crate) fn buffers_on(
        &self,
        program: &Program,
        grid: crate::ir::GridId,
    ) -> std::collections::BTreeSet<Var> {
        self.buffers
            .iter()
            .filter_map(|(p, source)| match source {
                ArgSource::Level(f, _) if program.fields[f.0].grid == grid => Some(p.var),
                _ => None,
            })
            .collect()
    }

    /// The buffer of a field time level, registering it (a later use as a
    /// written buffer upgrades a read-only one).
    pub(crate) fn level(
        &mut self,
        program: &Program,
        field: FieldId,
        time: i32,
        writes: bool,
    ) -> Var {
        let f = &program.fields[field.0];
        let source = ArgSource::Level(field, time);
        if let Some((p, _)) = self.buffers.iter_mut().find(|(_, s)| *s == source) {
            if writes {
                p.kind = ParamKind::Buffer;
            }
            return p.var;
        }
        let origin = if f.levels() == 1 {
            Origin::Program
        } else {
            Origin::Derived
        };
        let var = self.vars.add(
            level_name(program, field, time),
            f.ty,
            Space::Global,
            origin,
        );
        let kind = if writes {
            ParamKind::Buffer
        } else {
            ParamKind::ReadOnlyBuffer
        };
        self.buffers.push((
            KParam {
                var,
                ty: f.ty,
                kind,
            },
            source,
        ));
        var
    }

    /// A buffer that is not a field level (partials, results).
    pub(crate) fn buffer(&mut self, hint: &str, ty: ScalarType, source: ArgSource) -> Var {
        if let Some((p, _)) = self.buffers.iter().find(|(_, s)| *s == source) {
            return p.var;
        }
        let var = self.vars.add(hint, ty, Space::Global, Origin::Generated);
        self.buffers.push((
            KParam {
                var,
                ty,
                kind: ParamKind::Buffer,
            },
            source,
        ));
        var
    }

    /// A scalar parameter, registered once per source; `origin` says whether
    /// `hint` is the program's name for it.
    pub(crate) fn scalar(
        &mut self,
        hint: &str,
        ty: ScalarType,
        source: ArgSource,
        origin: Origin,
    ) -> KExpr {
        if let Some((p, _)) = self.scalars.iter().find(|(_, s)| *s == source) {
            return KExpr::Var(p.var);
        }
        let var = self.vars.add(hint, ty, Space::Private, origin);
        self.scalars.push((
            KParam {
                var,
                ty,
                kind: ParamKind::Scalar,
            },
            source,
        ));
        KExpr::Var(var)
    }

    /// The size of `grid` along `axis` (outermost first).
    pub(crate) fn grid_size(&mut self, program: &Program, grid: GridId, axis: usize) -> KExpr {
        let rank = program.grids[grid.0].rank();
        let name = if program.grids.len() == 1 {
            format!("size_{}", letter(rank, axis))
        } else {
            format!("size_{}_{}", program.grids[grid.0].name, letter(rank, axis))
        };
        self.scalar(
            &name,
            ScalarType::Int,
            ArgSource::GridSize(grid, axis),
            Origin::Generated,
        )
    }

    /// Parameters, argument sources and the variables, buffers first.
    pub(crate) fn finish(self) -> (Vec<KParam>, Vec<ArgSource>, Vars) {
        let (params, args) = self.buffers.into_iter().chain(self.scalars).unzip();
        (params, args, self.vars)
    }
}

/// The preferred name of a field time level's buffer: the field's name for a
/// one-level field, else `u_t0`, `u_t1`, `u_tm1` (time -1). The printed name
/// is the namer's.
pub fn level_name(program: &Program, field: FieldId, time: i32) -> String {
    let f = &program.fields[field.0];
    let base = &f.name;
    if f.levels() == 1 {
        base.clone()
    } else if time < 0 {
        format!("{base}_tm{}", -time)
    } else {
        format!("{base}_t{time}")
    }
}

/// Adds table `t` to the module once, in constant memory or (`global`) as a
/// global-memory array named after `<table>_global`; returns its index there.
pub(crate) fn constant_table(
    program: &Program,
    t: crate::ir::TableId,
    module: &mut Module,
    global: bool,
) -> usize {
    let table = &program.tables[t.0];
    let name = if global {
        format!("{}_global", table.name)
    } else {
        table.name.clone()
    };
    if let Some(i) = module
        .constants
        .iter()
        .position(|c| c.name == name && c.global == global)
    {
        return i;
    }
    module.constants.push(ConstArray {
        name,
        ty: table.ty,
        values: table.values.clone(),
        global,
    });
    module.constants.len() - 1
}

/// Gives the module-scope names (constant tables, then kernels) their final,
/// collision-free spelling; lowering chose them from the program's names.
fn name_module(module: &mut Module) {
    let mut namer = Namer::new();
    for table in &mut module.constants {
        table.name = namer.fresh(&table.name);
    }
    for kernel in &mut module.kernels {
        kernel.name = namer.fresh(&kernel.name);
    }
}

/// Shared helper: `BTreeMap` of the loop variables fixed by unrolling.
pub(crate) type Fixed = BTreeMap<crate::ir::LocalId, i64>;

/// Checks every kernel of `module` against the device's limits (before any
/// launch: a kernel the device cannot run fails to launch with a less helpful
/// message).
pub fn check_limits(module: &Module, limits: &DeviceLimits) -> Result<(), ScheduleError> {
    for kernel in &module.kernels {
        let threads = kernel.threads();
        if threads > limits.max_threads_per_block {
            return Err(ScheduleError(format!(
                "kernel `{}`: block {}x{}x{} has {threads} threads but the device allows {} per \
                 block; pass a smaller --block (e.g. --block 32,8)",
                kernel.name,
                kernel.block[0],
                kernel.block[1],
                kernel.block[2],
                limits.max_threads_per_block
            )));
        }
        for axis in 0..3 {
            if kernel.block[axis] > limits.max_block_dims[axis] {
                return Err(ScheduleError(format!(
                    "kernel `{}`: {} threads along {} but the device allows {}; pass a \
                     smaller --block",
                    kernel.name,
                    kernel.block[axis],
                    ["x", "y", "z"][axis],
                    limits.max_block_dims[axis]
                )));
            }
        }
        if let Some(blocks) = module.min_blocks_per_sm {
            let resident = u64::from(threads) * u64::from(blocks);
            if resident > u64::from(limits.max_threads_per_sm) {
                return Err(ScheduleError(format!(
                    "kernel `{}`: --min-blocks {blocks} asks for {blocks} blocks of {threads} \
                     threads ({resident}) on one SM, which holds {} threads; pass --min-blocks {} \
                     or less",
                    kernel.name,
                    limits.max_threads_per_sm,
                    (limits.max_threads_per_sm / threads.max(1)).max(1)
                )));
            }
        }
        let bytes = kernel.shared_bytes();
        if bytes > limits.shared_bytes_per_block {
            return Err(ScheduleError(format!(
                "kernel `{}` needs {bytes} bytes of shared memory per block but the device \
                 allows {}; use a smaller --block or --tile, or --shm none",
                kernel.name, limits.shared_bytes_per_block
            )));
        }
    }
    Ok(())
}
