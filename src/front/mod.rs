//! Front-ends: source text to [`ir::Program`](crate::ir::Program).
//!
//! (Interface stub; the SDSL front-end replaces the bodies.)

use std::sync::Arc;

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::Program;
use crate::source::{SourceFile, Span};

/// One `#pragma sdsl begin ... #pragma sdsl end` region of a C/C++ file.
#[derive(Clone, Debug)]
pub struct Region {
    /// Position among the file's regions, from 0 (the `N` of `sdsl_return_N`).
    pub index: usize,
    /// The region's program; its spans point into the whole host file.
    pub program: Program,
    /// From the start of the `#pragma sdsl begin` line to the end of the
    /// `#pragma sdsl end` line (what source-to-source replaces).
    pub span: Span,
}

/// Parses and checks a whole `.sdsl` program.
pub fn parse_program(source: Arc<SourceFile>) -> Result<Program, Diagnostics> {
    Err(Diagnostics::new(
        source,
        vec![Diagnostic::error(
            "the SDSL front-end is not built yet",
            Span::default(),
        )],
    ))
}

/// Finds, parses and checks every SDSL region of a C/C++ file.
pub fn parse_regions(source: Arc<SourceFile>) -> Result<Vec<Region>, Diagnostics> {
    parse_program(source).map(|_| Vec::new())
}
