//! Back-ends: code printers for each target.

pub mod cuda;
pub mod opencl;
