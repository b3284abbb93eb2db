//! OverTile's own stencil language, the second language of `#pragma sdsl`
//! regions (OverTile's `tests/cuda` and `tile-search` sources use it):
//!
//! ```text
//! #pragma sdsl begin time_steps:T block:32,4 tile:1,4 time:1
//! program fdtd2d is
//! grid 2
//! field Ex float inout
//! field Ey float inout
//! field Hz float inout
//! Ey = @[1:$][0:$] : Ey[0][0] - 0.5*(Hz[0][0] - Hz[-1][0])
//! Ex = @[0:$][1:$] : Ex[0][0] - 0.5*(Hz[0][0] - Hz[0][-1])
//! Hz = @[0:$-1][0:$-1] : Hz[0][0] - 0.7*(Ex[0][1] - Ex[0][0] + Ey[1][0] - Ey[0][0])
//! #pragma sdsl end
//! ```
//!
//! A region whose text begins with the word `program` is in this language
//! ([`starts_program`]); any other is SDSL. The language is the one
//! OverTile's parser defines (`lib/OTParser/SSPGrammar.y` and `SSPParser.cpp`,
//! see [`parser`]), with the older update form of its documentation
//! (`A[1:1][1:1] = e`); its meaning is that of OverTile's CUDA code generator
//! (see `lower`). Three steps, each its own module: the [`lexer`], the
//! [`parser`] (to the [`ast`]), and the lowering to the SDSL syntax tree,
//! which the SDSL front-end's semantic analysis then types and checks into
//! the same [`Program`] an SDSL region gives. Every error is a diagnostic
//! pointing into the host file.
//!
//! Not taken from OverTile: the `converge:FIELD,TOL` pragma option (its
//! generated function only reports whether the last step changed the field
//! by less than `TOL`), host macros used as functions (OverTile passes calls
//! to CUDA unchanged, so `SQR(x)` meant the host's macro), and a field
//! updated twice in one time step.

pub mod ast;
pub mod lexer;
mod lower;
pub mod parser;

use std::ops::Range;
use std::sync::Arc;

use crate::diag::Diagnostic;
use crate::ir::{Program, ScheduleHints};
use crate::source::SourceFile;

/// Whether `text` (a region's body) is in OverTile's language: its first word,
/// after spaces and line ends, is `program`.
pub fn starts_program(text: &str) -> bool {
    let rest = text.trim_start_matches([' ', '\t', '\r', '\n']);
    rest.strip_prefix("program")
        .is_some_and(|after| !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_'))
}

/// Lexes, parses and lowers `source.text[range]`, an OverTile program, then
/// checks it as SDSL's analysis checks any program. `hints` are the region's
/// options: their `time_steps:` becomes the iteration count and leaves them.
pub(crate) fn parse_range(
    source: &Arc<SourceFile>,
    range: Range<usize>,
    name: String,
    mut hints: ScheduleHints,
) -> Result<Program, Vec<Diagnostic>> {
    let tokens = lexer::lex(&source.text, range).map_err(|d| vec![d])?;
    let program = parser::parse(tokens).map_err(|d| vec![d])?;
    let time_steps = hints.time_steps.take();
    let module = lower::lower(&program, &source.text, time_steps, hints.span)?;
    super::sema::analyze(&module, source.clone(), name, hints)
}
