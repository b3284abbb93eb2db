//! The reference interpreter and the analyses it relies on: the examples against
//! hand-written reference loops, programs built as IR, footprints and bounds,
//! and a speed measurement (ignored by default).

#[path = "../common/mod.rs"]
mod common;
mod reference;

mod analysis;
mod examples;
mod ir;
mod speed;
