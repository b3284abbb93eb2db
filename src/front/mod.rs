//! Front-ends: source text to [`ir::Program`](crate::ir::Program).
//!
//! The SDSL front-end runs in four steps, each in its own module: the
//! [`lexer`] splits text into [`token`]s, the [`parser`] builds the syntax tree
//! ([`ast`]), semantic analysis (`sema`) checks it and builds the typed program,
//! with point functions inlined. C/C++ host files are first split into their
//! `#pragma sdsl` [`region`]s; a region (or a file) whose text begins with
//! `program NAME is` is in OverTile's own stencil language instead, which the
//! [`overtile`] front-end lowers to the same program. Every error is a
//! [`Diagnostic`] that points into the source; nothing here panics on user
//! input.

pub mod ast;
pub mod c;
pub mod cuda;
pub mod lexer;
pub mod overtile;
pub mod parser;
pub mod region;
mod sema;
pub mod suggest;
pub mod token;

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{Program, ScheduleHints};
use crate::source::{SourceFile, Span};

pub use sema::fold;

pub use crate::ir::Region;

/// The deepest expression accepted, in levels of its tree: each parenthesis,
/// call, unary operator or conditional counts one level, and so does each
/// operator of a chain, because `a + b + c` is `(a + b) + c` (a sum of 20 000
/// terms is 20 000 deep). Every later pass recurses over the tree, so this
/// bounds their stack use; parentheses, brackets and calls may in addition
/// nest at most [`MAX_NESTING`] deep in the source. Unoptimised builds need a
/// few KiB of stack per level in the deepest pass, so the command line runs
/// on a thread with a large stack; a library caller that takes programs this
/// deep should do the same.
pub const MAX_EXPR_DEPTH: usize = 20_000;

/// How deeply parentheses, brackets, calls, unary operators, conditionals and
/// statements may nest in the source (the parser recurses on each).
pub const MAX_NESTING: usize = 100;

/// Parses and checks a whole `.sdsl` program against the language's rules
/// (accesses are checked by `analysis::checked`, which callers run next).
pub fn parse_program(source: Arc<SourceFile>) -> Result<Program, Diagnostics> {
    let name = program_name(&source.name, None);
    let range = 0..source.text.len();
    parse_range(&source, range, name, ScheduleHints::default())
        .map_err(|items| Diagnostics::new(source.clone(), items))
}

/// Finds, parses and checks every SDSL region of a C/C++ file.
///
/// A file without regions is an error (it is most likely not what the user meant
/// to compile). Programs are named after the file stem, with `_region<N>` added
/// when the file holds more than one region.
pub fn parse_regions(source: Arc<SourceFile>) -> Result<Vec<Region>, Diagnostics> {
    let fail = |items| Diagnostics::new(source.clone(), items);
    let raw = region::find_regions(&source.text).map_err(fail)?;
    if raw.is_empty() {
        return Err(fail(vec![Diagnostic::error(
            "no SDSL region in this file",
            Span::new(0, 0),
        )
        .with_label("no `#pragma sdsl begin` line found")
        .with_help(
            "put the SDSL program between `#pragma sdsl begin` and `#pragma sdsl end` lines, or pass a `.sdsl` file",
        )]));
    }
    let several = raw.len() > 1;
    let mut regions = Vec::new();
    let mut errors = Vec::new();
    for (index, r) in raw.into_iter().enumerate() {
        let name = program_name(&source.name, several.then_some(index));
        match parse_range(&source, r.body.clone(), name, r.hints) {
            Ok(program) => regions.push(Region {
                index,
                program,
                span: r.span,
            }),
            Err(items) => errors.extend(items),
        }
    }
    if errors.is_empty() {
        Ok(regions)
    } else {
        Err(fail(errors))
    }
}

/// Reads and parses a program file: a `.sdsl` file as one program, any other
/// file (C/C++) as a host of regions, of which `region` (default 0) is taken.
pub fn load(path: &Path, region: Option<usize>) -> Result<Program, LoadError> {
    let text = crate::source::read_source(path, crate::source::MAX_SOURCE_BYTES).map_err(|e| {
        LoadError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    })?;
    let is_sdsl = path.extension().is_some_and(|e| e == "sdsl");
    let text = if is_sdsl {
        crate::source::lone_cr_to_lf(text)
    } else {
        text
    };
    let source = SourceFile::new(path.display().to_string(), text);
    if is_sdsl {
        if let Some(index) = region {
            if index > 0 {
                return Err(LoadError::NoSuchRegion {
                    path: source.name.clone(),
                    index,
                    count: 1,
                });
            }
        }
        return parse_program(source).map_err(LoadError::Program);
    }
    let mut regions = parse_regions(source.clone()).map_err(LoadError::Program)?;
    let index = region.unwrap_or(0);
    if index >= regions.len() {
        return Err(LoadError::NoSuchRegion {
            path: source.name.clone(),
            index,
            count: regions.len(),
        });
    }
    Ok(regions.swap_remove(index).program)
}

/// Why [`load`] failed.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("cannot read `{path}`: {message}; check the path")]
    Io {
        /// The path as given.
        path: String,
        /// The system's reason.
        message: String,
    },
    /// The program has errors.
    #[error("{0}")]
    Program(Diagnostics),
    /// `--region N` names a region the file does not have.
    #[error("`{path}` has {count} SDSL region(s), so there is no region {index}; pick a region from 0 to {}", count.saturating_sub(1))]
    NoSuchRegion {
        /// The file.
        path: String,
        /// The region asked for.
        index: usize,
        /// How many regions the file has.
        count: usize,
    },
}

/// Lexes, parses and checks `source.text[range]` as one program (the checks of
/// the language's rules; those that need the analysis of accesses are
/// `analysis::checked`'s): OverTile's language when the text begins with the
/// word `program`, SDSL otherwise.
fn parse_range(
    source: &Arc<SourceFile>,
    range: Range<usize>,
    name: String,
    hints: ScheduleHints,
) -> Result<Program, Vec<Diagnostic>> {
    if source
        .text
        .get(range.clone())
        .is_some_and(overtile::starts_program)
    {
        return overtile::parse_range(source, range, name, hints);
    }
    let tokens = lexer::lex(&source.text, range).map_err(|d| vec![d])?;
    let module = parser::parse(tokens).map_err(|d| vec![d])?;
    sema::analyze(&module, source.clone(), name, hints)
}

/// A C identifier made from a file name's stem (`jacobi2d`, `my_prog_region1`).
fn program_name(path: &str, region: Option<usize>) -> String {
    let stem = Path::new(path)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // `foo.sdsl.c` has stem `foo.sdsl`: drop inner extensions too.
    let stem = stem.split('.').next().unwrap_or_default();
    let mut name: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if name.is_empty() {
        name = "program".to_string();
    }
    if name.starts_with(|c: char| c.is_ascii_digit()) {
        name.insert(0, '_');
    }
    if let Some(index) = region {
        name.push_str(&format!("_region{index}"));
    }
    name
}
