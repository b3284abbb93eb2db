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
    Ok(header + &text)
}
