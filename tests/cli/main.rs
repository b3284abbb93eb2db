//! The `stencilc` command line end to end (runs of the examples, errors on bad
//! input), and the test suite's own machinery (skip reports, regression seeds,
//! snapshots beside their tests).

#[path = "../common/mod.rs"]
mod common;

mod bench_scripts;
mod check_kernel;
mod docs;
mod errors;
mod exits;
mod explain;
mod faults;
mod filetests;
mod flags;
mod inputs;
mod limits;
mod map;
mod map_an5d;
mod map_converge;
mod map_lift;
mod map_liveness;
mod map_polybench;
mod map_random;
mod map_shared;
mod map_xform;
mod outputs;
mod robust;
mod run;
mod suite;
mod synth;
mod tune;
