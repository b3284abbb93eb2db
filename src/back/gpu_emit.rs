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
/// preceded by a comment giving the schedule each stencil got.
pub fn emit(
    program: &Program,
    request: &ScheduleRequest,
    target: GpuTarget,
) -> Result<String, ScheduleError> {
    let schedule = Schedule::new(program, request)?;
    let (lowered, text) = match target {
        GpuTarget::Cuda => {
            let l = lower(program, &schedule, Target::Cuda);
            let t = crate::back::cuda::print(&l.module);
            (l, t)
        }
        GpuTarget::OpenCl => {
            let l = lower(program, &schedule, Target::OpenCl);
            let t = crate::back::opencl::print(&l.module);
            (l, t)
        }
    };
    let _ = lowered;
    let mut header = String::new();
    for line in schedule.describe(program).lines() {
        header.push_str("// schedule: ");
        header.push_str(line);
        header.push('\n');
    }
    Ok(header + &text)
}
