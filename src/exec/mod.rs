//! Running programs: the compiled executors (native C, OpenCL, CUDA, and the
//! CUDA emulator as a GPU), the host plan they share, MPI decomposition, and
//! the choice among them with the reference interpreter ([`backend`]).
//!
//! Every executor runs a [`Program`](crate::ir::Program) with the same
//! [`Bindings`] on the same [`FieldState`] and returns a [`RunSummary`]; the
//! interpreter ([`crate::interp`]) defines what the right answer is.

pub mod backend;
pub mod cuda;
pub mod emulated;
pub mod gpu_parts;
pub mod host_plan;
pub mod kernel_cache;
pub mod mpi;
pub mod native;
pub mod opencl;
pub mod options;
#[cfg(test)]
mod refused_inputs;

// Transitional re-export: remove after merge.
pub use crate::data::{
    bind, check_inputs, check_inputs_in_place, Bindings, Buffer, ExecError, FieldState, PhaseTimes,
    ReadInPlace, RunSummary,
};
// Transitional re-export: remove after merge.
pub use crate::data::in_place;
// Transitional re-export: remove after merge.
pub use crate::interp;
