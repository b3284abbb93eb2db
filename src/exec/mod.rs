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

// The buffers, bindings and summaries that a run takes and returns live in `data`, so
// that `io` uses them without depending on `exec`; callers of `exec` find them here too.
pub use crate::data::{
    bind, check_inputs, check_inputs_in_place, Bindings, Buffer, ExecError, FieldState, PhaseTimes,
    ReadInPlace, RunSummary,
};
