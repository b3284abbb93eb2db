//! Facts derived from a program: footprints, hazards, bounds.
//!
//! (Interface stub; the analysis owner replaces the bodies.)

use crate::diag::Diagnostic;
use crate::ir::Program;

/// Checks that need no parameter values: accesses that the subset bounds prove
/// to leave the grid of a `boundary none` field. Called by the front-end.
pub fn static_checks(_program: &Program) -> Vec<Diagnostic> {
    Vec::new()
}
