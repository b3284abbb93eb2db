//! Back-ends: printers that turn an [`ir::Program`](crate::ir::Program) into code
//! for a target (C with OpenMP; the GPU back-ends add their own modules).

pub mod c;
