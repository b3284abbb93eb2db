//! Data in memory and what every executor shares about a run: field buffers
//! and their time levels, parameter bindings checked against the program,
//! inputs read in the caller's memory, the progress hook, and what a run
//! returns.
//!
//! It sits below the executors (`interp`, `exec`) and the file formats (`io`)
//! so that each of them can use it without the others.

mod buffer;
pub mod in_place;
mod inputs;
mod outcome;
mod progress;

use crate::ir::Program;

pub use crate::ir::env::Bindings;
pub use buffer::Buffer;
pub use in_place::ReadInPlace;
pub use inputs::{bind, check_inputs, check_inputs_in_place};
pub use outcome::{ExecError, PhaseTimes, RunSummary};
pub use progress::ProgressHook;

/// The data of every field: per field, one buffer per time level, indexed by
/// `time - time_lo` at the start of the current iteration.
///
/// Rotation at the end of an iteration is `levels.rotate_left(1)`: the buffer
/// written as `[time_hi]` becomes `[time_hi - 1]`, and the oldest is reused as the
/// new `[time_hi]`. Buffers are moved, never copied.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldState {
    /// `fields[f][level]`.
    pub fields: Vec<Vec<Buffer>>,
}

impl FieldState {
    /// Rotates the time levels of every multi-level field (end of an iteration).
    pub fn rotate(&mut self) {
        for levels in &mut self.fields {
            levels.rotate_left(1);
        }
    }

    /// The buffer holding the newest values of field `f` (see `Field::newest_offset`).
    pub fn newest<'a>(&'a self, program: &Program, f: usize) -> &'a Buffer {
        let field = &program.fields[f];
        &self.fields[f][field.level_of(field.newest_offset())]
    }
}
