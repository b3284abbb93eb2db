//! `stencilc compile -b overtile`: each region's schedule chosen from its
//! pragma (the heuristic fills in the rest), its time-tile size from the
//! pragma's `time:` or, where every parameter's value is given, the model's;
//! the region lowered for CUDA and held to a CUDA device's limits, then
//! handed to the printer ([`crate::back::c::overtile`]).

use crate::back::c::overtile::{rewrite_host, ChosenRegion, OvertileOptions, OvertileOutput};
use crate::ir::env::RunEnv;
use crate::ir::{Program, Region};
use crate::lower::Target;
use crate::schedule::{DeviceLimits, Schedule, ScheduleError, ScheduleRequest};
use crate::source::SourceFile;

/// The host file with each region replaced by a call to a generated function
/// that runs it on a CUDA GPU. Fails when a region's schedule cannot be built or
/// does not fit a CUDA device (say, a pragma block of more than 1024 threads).
pub fn rewrite_host_for_cuda(
    host: &SourceFile,
    regions: &[Region],
    options: OvertileOptions,
) -> Result<OvertileOutput, ScheduleError> {
    rewrite_host_for_cuda_in(host, regions, options, &[])
}

/// [`rewrite_host_for_cuda`] where `envs[i]`, when there, gives region `i`'s
/// parameter values: for a region whose pragma gives no `time:`, the model
/// then chooses the time-tile size as `run` does (for the default device),
/// and the kernels, compiled for any size, are time-tiled with it.
pub fn rewrite_host_for_cuda_in(
    host: &SourceFile,
    regions: &[Region],
    options: OvertileOptions,
    envs: &[Option<RunEnv>],
) -> Result<OvertileOutput, ScheduleError> {
    let chosen = regions
        .iter()
        .enumerate()
        .map(|(i, region)| choose_region(region, options, envs.get(i).and_then(Option::as_ref)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(rewrite_host(host, regions, options, chosen))
}

/// One region's schedule and kernels; `env`: its parameter values, where given.
fn choose_region(
    region: &Region,
    options: OvertileOptions,
    env: Option<&RunEnv>,
) -> Result<ChosenRegion, ScheduleError> {
    let program = &region.program;
    let request = ScheduleRequest {
        wide_indices: options.wide_indices,
        fma: options.fma,
        ..ScheduleRequest::default()
    };
    let mut schedule = super::fixed_schedule(program, &request)
        .map_err(|e| ScheduleError(format!("region {}: {}", region.index, e.0)))?;
    // The pragma's `time:` (or `time_steps:`) as `run` takes it; its
    // clamping to the iteration count and the check interval happens at
    // run time, where each launch's step count is computed as the host
    // plan computes it (`schedule::time::launch_steps`).
    let asked = crate::schedule::time::asked_time_steps(program, &request).map_err(|d| {
        ScheduleError(format!(
            "region {}: {}",
            region.index,
            d.one_line(&program.source)
        ))
    })?;
    let mut reasons = Vec::new();
    match (asked, env) {
        (Some((steps, _)), _) => schedule.set_time_steps_static(program, steps),
        (None, Some(env)) if program.iterate.is_some() => {
            let steps = modelled_time_steps(program, &schedule, env, &mut reasons);
            if steps > 1 {
                schedule.set_time_steps_static(program, steps);
            }
        }
        (None, None) if program.iterate.is_some() => reasons.push(
            "time tiling: the pragma gives no `time:`, and without every parameter's value \
             (--set NAME=VALUE) the model cannot choose one; untiled"
                .to_string(),
        ),
        (None, _) => {}
    }
    let lowered = super::lower_gpu(program, &schedule, Target::Cuda, None);
    super::check_fits(&lowered.module, &DeviceLimits::CUDA_DEFAULT).map_err(|e| {
        ScheduleError(format!(
            "region {}: {}; for -b overtile, change the pragma's `block:`",
            region.index, e.0
        ))
    })?;
    Ok(ChosenRegion {
        lowered,
        schedule: schedule
            .describe(program)
            .lines()
            .map(String::from)
            .collect(),
        notes: schedule.time_notes.clone(),
        reasons,
    })
}

/// The time-tile size the model predicts fastest for `env`'s values on the
/// default device, as `model::choose` picks it for `run` (1: untiled); why, in
/// `reasons`.
fn modelled_time_steps(
    program: &Program,
    schedule: &Schedule,
    env: &RunEnv,
    reasons: &mut Vec<String>,
) -> u32 {
    use crate::model::time_tile::{pick, time_table, MAX_TIME_STEPS};
    let device = crate::model::Device::default_device();
    let limit = env
        .every()
        .filter(|&k| k > 0)
        .map_or(env.max_iters(), |k| k.min(env.max_iters()));
    let max = MAX_TIME_STEPS.min(limit.max(1) as u32);
    match time_table(program, schedule, env, Target::Cuda, device, max) {
        Ok(rows) => {
            let (steps, why) = pick(&rows, limit, device);
            reasons.push(why);
            steps
        }
        Err(why) => {
            reasons.push(format!("time tiling: not predicted ({why}); untiled"));
            1
        }
    }
}
