//! `stencilc map`: sequential C loop nests onto GPUs and OpenMP, after the
//! methodology of Gouin, Ancourt and Guettier (CPC 2018).
//!
//! Per outermost loop of each function (or of each `#pragma scop` region):
//! static analysis ([`analysis`]: obstacles, dependences with distance
//! vectors, privatisable scalars, reductions, parallel loops), classification,
//! the three criteria with the device's numbers ([`criteria`]), memory
//! specialisation, and the decision, reported ([`report`]) and applied to the
//! source text ([`rewrite`]). A sequential outer loop around loops (a time
//! loop) stays on the host as an iterate and its inner nests are planned in
//! turn; a nest that cannot be shown safe stays on the CPU with the reason.

pub mod alias;
pub mod analysis;
pub mod criteria;
pub mod cuda;
pub mod deptest;
pub mod device;
pub mod facts;
pub mod kernel;
pub mod lift;
pub mod liveness;
pub mod nest;
pub mod opencl;
pub mod plan;
pub mod report;
pub mod resident;
pub mod rewrite;
pub mod shared;
pub mod subscript;
pub mod syntax;
pub mod threads;
pub mod transform;

pub use criteria::device_memory_bytes;
pub use nest::{device_id, Decision, FilePlan, LoopReport, NestPlan, Target};
pub use plan::plan_file;
