//! Choosing a GPU schedule: what the request fixes, the rest chosen by the
//! model for a device when the sizes are known, by the static heuristic when
//! they are not.

use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::kir::plan::Lowered;
use crate::kir::Module;
use crate::lower::{lower_for, Target};
use crate::model::rank::Registers;
use crate::model::Device;
use crate::schedule::{DeviceLimits, Schedule, ScheduleError, ScheduleRequest};

/// A GPU schedule and why it was chosen.
#[derive(Clone, Debug)]
pub struct Chosen {
    /// The schedule to lower. Its own `notes` say what was refused (a fusion
    /// left apart, say) and its `time_notes` what was clamped of time tiling.
    pub schedule: Schedule,
    /// What the model chose and what it compared it with, one sentence per
    /// stencil or fused group; empty where no model ran (no sizes).
    pub reasons: Vec<String>,
}

/// The schedule `request` asks for `program` on `target`. With `env` (every
/// parameter's value), what the request leaves open is chosen by the model
/// for `device`, its candidates ranked by ptxas's registers where
/// `registers` is given and the request asks (`--ptxas-rank`). Without, the
/// static heuristic fills it in ([`fixed_schedule`]), and `--ptxas-rank` is
/// refused: ranking needs the sizes.
pub fn choose_gpu(
    program: &Program,
    request: &ScheduleRequest,
    env: Option<&RunEnv>,
    target: Target,
    device: &Device,
    registers: Option<Registers<'_>>,
) -> Result<Chosen, ScheduleError> {
    match env {
        Some(env) => {
            let choice = crate::model::choose::choose_ranked(
                program, request, env, target, device, registers,
            )?;
            Ok(Chosen {
                schedule: choice.schedule,
                reasons: choice.reasons,
            })
        }
        None if request.ptxas_rank.is_some() => Err(ScheduleError(
            "--ptxas-rank ranks the model's candidates, which need the value of every \
             parameter: give them with --set"
                .into(),
        )),
        None => Ok(Chosen {
            schedule: fixed_schedule(program, request)?,
            reasons: Vec::new(),
        }),
    }
}

/// The schedule `request` asks for, valid for any sizes, with no model: what
/// it leaves open is the static heuristic's.
pub fn fixed_schedule(
    program: &Program,
    request: &ScheduleRequest,
) -> Result<Schedule, ScheduleError> {
    Schedule::new(program, request)
}

/// The schedule of a C loop that `stencilc map` lifted into a program: the
/// default request, valid for any sizes and with no model, since the host
/// code around the kernels may compute the sizes from the C program's
/// variables only when it runs.
pub fn lifted_loop_schedule(program: &Program) -> Result<Schedule, ScheduleError> {
    fixed_schedule(program, &ScheduleRequest::default())
}

/// The schedule `request` asks for with the sizes of `env` and no model
/// (64-bit indices where a grid needs them): a baseline to compare a chosen
/// schedule with.
pub fn sized_schedule(
    program: &Program,
    request: &ScheduleRequest,
    env: &RunEnv,
) -> Result<Schedule, ScheduleError> {
    Schedule::for_run(program, request, env)
}

/// `program` lowered under `schedule` for `target`; with `env`, a reduction
/// part may fuse into the last stencil kernel where its points are that
/// kernel's for these sizes.
pub fn lower_gpu(
    program: &Program,
    schedule: &Schedule,
    target: Target,
    env: Option<&RunEnv>,
) -> Lowered {
    lower_for(program, schedule, target, env)
}

/// Whether the kernels of `module` fit `limits` (threads and shared memory
/// per block, registers where known).
pub fn check_fits(module: &Module, limits: &DeviceLimits) -> Result<(), ScheduleError> {
    crate::lower::check_limits(module, limits)
}
