//! stencilc: a compiler for stencil programs.
//!
//! The pipeline, as in naga: front-ends ([`front`]) produce one program IR
//! ([`ir::Program`]); [`analysis`] derives facts from it; executors in [`exec`]
//! run it, and the reference interpreter ([`interp`]) defines its meaning;
//! back-ends in [`back`] print code for a target. How a program runs on a GPU (its schedule) is kept
//! apart from what it computes.
#![deny(missing_docs)]
// The library runs inside `stencilc`'s commands, whose stdout may be a closed
// pipe or a full disk: `print!` would panic there, so results are returned and
// the command line writes them (tests may print what they measured).
#![cfg_attr(not(test), deny(clippy::print_stdout))]

pub mod analysis;
pub mod back;
pub mod bench;
pub mod data;
pub mod diag;
pub mod driver;
pub mod emu;
pub mod exec;
pub mod explain;
pub mod files;
pub mod front;
pub mod interp;
pub mod io;
pub mod ir;
pub mod kanicuda;
pub mod kir;
#[cfg(test)]
mod layering;
pub mod lower;
pub mod map;
pub mod model;
pub mod schedule;
pub mod session;
pub mod source;
pub mod synth;
pub mod tune;
