//! Facts derived from a program: accesses, footprints, bounds.
//!
//! - [`access`]: every grid and table access of the iterate, with its loops;
//! - [`affine`]: affine forms over parameters, to reason without their values;
//! - [`bounds`]: accesses that leave their grid, proven statically or checked
//!   once parameter values are known;
//! - [`footprint`]: per stencil, part and time level, the offsets read and
//!   written (halos for GPU tiles, reuse, fusion checks) and which levels are
//!   read-only;
//! - [`tile`]: the time-tile geometry of an iterate (overlapped tiles,
//!   wavefronts, marches) and the CPU plan a C printer is handed.

pub mod access;
pub mod affine;
pub mod bounds;
pub mod footprint;
pub mod text;
pub mod tile;

pub use footprint::{Footprint, Level, LevelExtent};

use crate::diag::{Diagnostic, Diagnostics, Severity};
use crate::ir::{Program, Region};

/// Checks that need no parameter values: accesses that the subset bounds prove
/// to leave the grid of a `boundary none` field (or any grid, for writes), and
/// table indices outside their table. Run on every program the front-end gives
/// before it is compiled or run (see [`checked`]).
pub fn static_checks(program: &Program) -> Vec<Diagnostic> {
    bounds::static_bounds(program)
}

/// `program`, if [`static_checks`] find no error in it: what a front-end's
/// program goes through before anything compiles or runs it
/// (`front::parse_program(source).and_then(analysis::checked)`).
pub fn checked(program: Program) -> Result<Program, Diagnostics> {
    let errors = static_errors(&program);
    if errors.is_empty() {
        Ok(program)
    } else {
        Err(Diagnostics::new(program.source.clone(), errors))
    }
}

/// [`checked`] for the programs of a host file's regions, with the errors of
/// every region reported together.
pub fn checked_regions(regions: Vec<Region>) -> Result<Vec<Region>, Diagnostics> {
    let errors: Vec<Diagnostic> = regions
        .iter()
        .flat_map(|r| static_errors(&r.program))
        .collect();
    match regions.first() {
        Some(first) if !errors.is_empty() => {
            Err(Diagnostics::new(first.program.source.clone(), errors))
        }
        _ => Ok(regions),
    }
}

fn static_errors(program: &Program) -> Vec<Diagnostic> {
    static_checks(program)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .collect()
}
