//! The benchmark suites: programs timed against hand-written baselines, with
//! the results written as `RESULTS.md` and `results.json`. The GPU suite
//! ([`gpu`]) times stencilc's CUDA kernels on one device.

pub mod gpu;
