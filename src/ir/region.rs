//! A program embedded in a C/C++ host file.

use crate::ir::Program;
use crate::source::Span;

/// One `#pragma sdsl begin ... #pragma sdsl end` region of a C/C++ file: what
/// the front-end finds in a host file and source-to-source (`back::c::embed`)
/// replaces.
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
