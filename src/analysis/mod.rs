//! Facts derived from a program: accesses, footprints, bounds.
//!
//! - [`access`]: every grid and table access of the iterate, with its loops;
//! - [`affine`]: affine forms over parameters, to reason without their values;
//! - [`bounds`]: accesses that leave their grid, proven statically or checked
//!   once parameter values are known;
//! - [`footprint`]: per stencil, part and time level, the offsets read and
//!   written (halos for GPU tiles, reuse, fusion checks) and which levels are
//!   read-only.

pub mod access;
pub mod affine;
pub mod bounds;
pub mod footprint;
pub mod text;

pub use footprint::{Footprint, Level, LevelExtent};

use crate::diag::Diagnostic;
use crate::ir::Program;

/// Checks that need no parameter values: accesses that the subset bounds prove
/// to leave the grid of a `boundary none` field (or any grid, for writes), and
/// table indices outside their table. Called by the front-end.
pub fn static_checks(program: &Program) -> Vec<Diagnostic> {
    bounds::static_bounds(program)
}
