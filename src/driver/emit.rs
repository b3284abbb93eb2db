//! `stencilc emit --target cuda|opencl|kir`: one self-contained translation unit of
//! readable kernels named after the program's stencils and reductions, headed
//! by the schedule the driver chose and what a host must check.

use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::lower::Target;
use crate::schedule::{ScheduleError, ScheduleRequest};

/// Which GPU language to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuTarget {
    /// CUDA C (`extern "C"` kernels for NVRTC, no host code).
    Cuda,
    /// OpenCL C.
    OpenCl,
    /// The kernel IR lowered for CUDA, as target-neutral text
    /// ([`crate::kir::text`]), for pass-level tests.
    Kir,
}

/// How to emit beyond the schedule request.
#[derive(Clone, Copy, Default)]
pub struct EmitOptions<'a> {
    /// The run's parameter values, where all are known: the schedule is then
    /// [`crate::schedule::Schedule::for_run`]'s (64-bit indices when a grid needs them).
    pub env: Option<&'a RunEnv>,
    /// `--fma`: allow fused multiply-adds ([`crate::kir::Module::fma`]).
    pub fma: bool,
    /// Compiles candidates for `--ptxas-rank`
    /// ([`crate::model::choose::choose_ranked`]).
    pub registers: Option<crate::model::rank::Registers<'a>>,
}

/// The kernels of `program` under the schedule `request` asks for, as source text,
/// preceded by a comment giving the schedule each stencil got (and, when fusion
/// was asked for, why stencils were left apart).
pub fn emit(
    program: &Program,
    request: &ScheduleRequest,
    target: GpuTarget,
) -> Result<String, ScheduleError> {
    emit_with(program, request, target, EmitOptions::default())
}

/// [`emit`] with the options of `options`.
pub fn emit_with(
    program: &Program,
    request: &ScheduleRequest,
    target: GpuTarget,
    options: EmitOptions<'_>,
) -> Result<String, ScheduleError> {
    let kind = match target {
        GpuTarget::Cuda | GpuTarget::Kir => Target::Cuda,
        GpuTarget::OpenCl => Target::OpenCl,
    };
    // The model counts contracted multiply-adds under --fma; lowering marks
    // the module from the schedule.
    let request = &ScheduleRequest {
        fma: request.fma || options.fma,
        ..request.clone()
    };
    // With the sizes, the schedule `run` would choose (the model of the
    // default device); without them, the static heuristic's.
    let device = crate::model::Device::default_device();
    let chosen = super::choose_gpu(
        program,
        request,
        options.env,
        kind,
        device,
        options.registers,
    )?;
    let (schedule, reasons) = (chosen.schedule, chosen.reasons);
    let module = super::lower_gpu(program, &schedule, kind, None).module;
    let text = match target {
        GpuTarget::Cuda => crate::back::cuda::print(&module),
        GpuTarget::OpenCl => crate::back::opencl::print(&module),
        GpuTarget::Kir => crate::kir::text::print(&module),
    };
    let mut header = String::new();
    for line in schedule.describe(program).lines() {
        header.push_str("// schedule: ");
        header.push_str(line);
        header.push('\n');
    }
    for note in schedule.notes.iter().chain(&reasons) {
        header.push_str("// schedule: ");
        header.push_str(note);
        header.push('\n');
    }
    header.push_str(&host_checks(program, schedule.wide_indices));
    Ok(header + &text)
}

/// The comment listing what a host must check before launching these kernels,
/// as `stencilc run` does (the kernels themselves do not check); `wide`: the
/// kernels compute flattened indices in 64 bits.
fn host_checks(program: &Program, wide: bool) -> String {
    let index = if wide {
        "every grid has at most 2^30 points along each axis (flattened indices are 64-bit;\n\
         //   per-axis coordinates 32-bit int)"
            .to_string()
    } else {
        format!(
            "every grid has at most {} points in all and 2^30 along each axis (the kernels index\n\
             //   with 32-bit int; emit with --index64, or --set the sizes, for larger grids)",
            crate::kir::plan::MAX_GPU_GRID_POINTS
        )
    };
    let mut text = format!(
        "// host: `stencilc run` checks before any launch (a host of its own must too), from the sizes given:\n\
         //   {index};\n\
         //   every launch at most {:?} blocks along x, y, z;\n",
        crate::kir::plan::MAX_GROUPS
    );
    let bounds = crate::analysis::bounds::run_time_bounds(program);
    if bounds.is_empty() {
        text.push_str(
            "//   (every access stays inside its grid whatever the sizes: nothing to check)\n",
        );
    } else {
        text.push_str("//   and that none of these accesses leaves its grid:\n");
        for check in &bounds {
            text.push_str(&format!("//   - {}\n", check.what));
        }
    }
    text
}
