//! `stencilc emit --target cuda|opencl`: one self-contained translation unit of
//! readable kernels named after the program's stencils and reductions.

use crate::ir::Program;
use crate::lower::{lower, Target};
use crate::schedule::{Schedule, ScheduleError, ScheduleRequest};

/// Which GPU language to emit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuTarget {
    /// CUDA C (`extern "C"` kernels for NVRTC, no host code).
    Cuda,
    /// OpenCL C.
    OpenCl,
}

/// The kernels of `program` under the schedule `request` asks for, as source text,
/// preceded by a comment giving the schedule each stencil got (and, when fusion
/// was asked for, why stencils were left apart).
pub fn emit(
    program: &Program,
    request: &ScheduleRequest,
    target: GpuTarget,
) -> Result<String, ScheduleError> {
    let schedule = Schedule::new(program, request)?;
    let text = match target {
        GpuTarget::Cuda => {
            crate::back::cuda::print(&lower(program, &schedule, Target::Cuda).module)
        }
        GpuTarget::OpenCl => {
            crate::back::opencl::print(&lower(program, &schedule, Target::OpenCl).module)
        }
    };
    let mut header = String::new();
    for line in schedule.describe(program).lines() {
        header.push_str("// schedule: ");
        header.push_str(line);
        header.push('\n');
    }
    for note in &schedule.notes {
        header.push_str("// schedule: ");
        header.push_str(note);
        header.push('\n');
    }
    header.push_str(&host_checks(program));
    Ok(header + &text)
}

/// The comment listing what a host must check before launching these kernels,
/// as `stencilc run` does (the kernels themselves do not check).
fn host_checks(program: &Program) -> String {
    let mut text = format!(
        "// host: `stencilc run` checks before any launch (a host of its own must too), from the sizes given:\n\
         //   every grid has at most {} points (the kernels index with 32-bit int; 64-bit indices\n\
         //   are planned, issue 8), and every launch at most {:?} blocks along x, y, z;\n",
        crate::lower::plan::MAX_GPU_GRID_POINTS,
        crate::lower::plan::MAX_GROUPS
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
