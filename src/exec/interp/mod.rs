//! The reference interpreter: defines what every program means.
//!
//! (Interface stub; the interpreter owner writes it.)

use crate::exec::env::RunEnv;
use crate::exec::{ExecError, FieldState, RunSummary};
use crate::ir::Program;

/// Runs the whole iterate on `state`.
pub fn run(
    _program: &Program,
    _env: &RunEnv,
    _state: &mut FieldState,
) -> Result<RunSummary, ExecError> {
    Err(ExecError::Failed("the interpreter is not built yet".into()))
}
