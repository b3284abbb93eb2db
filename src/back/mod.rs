//! Back-ends: code printers for each target.

pub mod cuda;
pub mod gpu_emit;
pub mod opencl;
