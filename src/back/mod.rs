//! Back-ends: printers that turn an [`ir::Program`](crate::ir::Program) into code
//! for a target: C with OpenMP ([`c`]), and CUDA C and OpenCL C ([`cuda`],
//! [`opencl`]) printed from the kernel IR. Printers only print: the schedule,
//! the lowered module and the CPU plan they are handed were chosen by
//! the `driver`. Every printer writes through [`text`], the one C-family
//! writer (indentation, names, literals).

pub mod c;
pub mod cuda;
pub mod opencl;
pub mod text;
