//! The pipeline driver: the one place that turns a program, a schedule
//! request, the parameter values where they are known, and a GPU device or
//! this machine's CPU into a chosen schedule (or CPU plan) and a lowered
//! module, with the notes saying why.
//!
//! Everything that runs, prints or reports a program asks here — `run` (through
//! `exec`'s run options, which the Python module and the MPI ranks share),
//! `emit`, `explain`, `tune`, `bench-gpu`, `compile -b overtile` and the loops
//! `map` lifts onto a GPU — so that the same request gets the same schedule
//! wherever it is asked, and the printers in `back` are handed what was
//! chosen and only print it.
//!
//! - [`choose_gpu`]: the GPU schedule — the model's choice for a device where
//!   every parameter's value is known, the static heuristic's otherwise;
//!   [`fixed_schedule`] and [`sized_schedule`] where no model may choose, and
//!   [`lifted_loop_schedule`] for the loops `stencilc map` lifts;
//!   [`lower_gpu`] and [`check_fits`] lower it and hold it to a device's limits.
//! - [`cpu`]: the C back-end's plan (threads, time tiling).
//! - [`emit`]: `emit --target cuda|opencl`, choosing, lowering and printing a
//!   whole GPU translation unit.
//! - [`overtile`]: `compile -b overtile`, choosing each region's schedule.

pub mod cpu;
pub mod emit;
mod gpu;
pub mod overtile;

pub use gpu::{
    check_fits, choose_gpu, fixed_schedule, lifted_loop_schedule, lower_gpu, sized_schedule, Chosen,
};
