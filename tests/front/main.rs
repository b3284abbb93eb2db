//! The front-end: parsing into the IR, diagnostics, pragma regions in host
//! files, and fuzzing of the front-end and the back-ends behind it.
//!
//! One test binary per area (front, interp, native, gpu, cli) keeps the build
//! short: each binary links the library and its dependencies once.

#[path = "../common/mod.rs"]
mod common;

mod cuda_kernels;
mod cuda_warps;
mod cuda_whole;
mod diagnostics;
mod fuzz;
mod overtile;
mod parse;
mod regions;
