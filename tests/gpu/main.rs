//! The GPU back-ends: schedules, OpenCL runs (PoCL in CI) and CUDA compiled by
//! NVRTC against the interpreter, stencilc's CUDA run in the CUDA emulator and
//! CUDA-subset kernels printed as OpenCL C (`emu_own_kernels`,
//! `opencl_cuda_kernels`), fusion, the benchmark harness, random
//! programs (property tests), and `gpu_*` tests on a real device (ignored by
//! default: `cargo test --test gpu -- --ignored gpu_`).

#[path = "../common/mod.rs"]
mod common;

mod device;
mod differential_nvrtc;
mod differential_opencl;
mod emu_own_kernels;
mod emu_ptxas_rank;
mod fma;
mod gpu_common;
mod naive_baselines;
mod nvrtc_bench;
mod nvrtc_examples;
mod opencl_checks;
mod opencl_cuda_kernels;
mod opencl_examples;
mod opencl_fusion;
mod opencl_recompute;
mod opencl_streaming;
mod opencl_time_tile;
mod opencl_vector;
mod schedule_requests;
mod semantics;
mod wide_indices;
