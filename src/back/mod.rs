//! Back-ends: printers that turn an [`ir::Program`](crate::ir::Program) into code
//! for a target: C with OpenMP ([`c`]), and CUDA C and OpenCL C ([`cuda`],
//! [`opencl`]) printed from the kernel IR; [`gpu_emit`] lowers and prints a whole
//! GPU translation unit. Every printer writes through [`text`], the one C-family
//! writer (indentation, names, literals).

pub mod c;
pub mod cuda;
pub mod gpu_emit;
pub mod opencl;
pub mod text;
