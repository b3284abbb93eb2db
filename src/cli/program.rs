//! Loading the program a command works on: a `.sdsl` file, or one region of a
//! C/C++ file with `#pragma sdsl` regions.

use std::path::Path;
use std::sync::Arc;

use stencilc::diag::{Diagnostic, Diagnostics};

use stencilc::ir::Program;
use stencilc::source::{read_source, show_bytes, ReadError, SourceFile, Span, MAX_SOURCE_BYTES};
use stencilc::{analysis, front};

use crate::cli::error::CliError;

/// Extensions of C, C++ and CUDA host files, whose SDSL lives in pragma regions.
const HOST_EXTENSIONS: [&str; 11] = [
    "c", "h", "cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "cu", "cuh",
];

/// Whether `path` names a C/C++ host file rather than a `.sdsl` program.
pub fn is_host_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| HOST_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The text of the program file `path` (SDSL or a C/C++ host file), read with
/// [`read_source`]'s bound of [`MAX_SOURCE_BYTES`].
pub fn read_program(path: &Path) -> Result<String, CliError> {
    read_source(path, MAX_SOURCE_BYTES).map_err(|e| {
        source_error(
            path,
            "the program",
            &e,
            "check the path of the .sdsl or C/C++ file",
        )
    })
}

/// The error of a source file `what` (e.g. "the program") at `path` that
/// [`read_source`] could not read; `io_help` is the help for an error of the
/// operating system (a missing file, say).
pub fn source_error(path: &Path, what: &str, error: &ReadError, io_help: &str) -> CliError {
    let help = match error {
        ReadError::Io(_) => io_help.to_string(),
        ReadError::TooLarge { regular: false, .. } => {
            "give the path of a source file (a device or pipe that never ends cannot be read)"
                .to_string()
        }
        ReadError::TooLarge { limit, .. } => format!(
            "split the program into smaller files of at most {}",
            show_bytes(*limit)
        ),
        ReadError::NotUtf8 { .. } => {
            "save the file as UTF-8 (or remove the bytes that are not UTF-8)".to_string()
        }
    };
    CliError::new(
        format!("cannot read {what} `{}`: {error}", path.display()),
        help,
    )
}

/// Reads and checks the program in `path`; for a host file, region `region`
/// (the first by default).
pub fn load(path: &Path, region: Option<usize>) -> Result<Program, CliError> {
    let mut text = read_program(path)?;
    if !is_host_file(path) {
        text = stencilc::source::lone_cr_to_lf(text);
    }
    let source = SourceFile::new(path.display().to_string(), text);
    if !is_host_file(path) {
        if let Some(n) = region {
            return Err(CliError::new(
                format!("--region {n} was given, but `{}` is not a C/C++ file with regions", path.display()),
                "leave out --region for a .sdsl program (C/C++ files end in .c, .cc, .cpp, .h, .hpp or .cu)",
            ));
        }
        let program = analysis::checked(front::parse_program(source.clone())?)?;
        // Where the iterate would go: after the last declaration.
        let end = source.text.trim_end().len();
        return require_iterate(program, &source, Span::new(end, end), "the program");
    }
    let mut regions = analysis::checked_regions(front::parse_regions(source.clone())?)?;
    let wanted = region.unwrap_or(0);
    match regions.len() {
        0 => Err(CliError::new(
            format!("`{}` has no SDSL region", path.display()),
            "mark the SDSL code with `#pragma sdsl begin` and `#pragma sdsl end` lines",
        )),
        count if wanted >= count => Err(CliError::new(
            format!(
                "`{}` has {count} SDSL region{}, so there is no region {wanted}",
                path.display(),
                if count == 1 { "" } else { "s" }
            ),
            if count == 1 {
                "leave out --region, or give --region 0".to_string()
            } else {
                format!("give --region a number from 0 to {}", count - 1)
            },
        )),
        _ => {
            let region = regions.swap_remove(wanted);
            let what = format!("region {wanted}");
            let at = Span::new(region.span.start as usize, region.span.start as usize);
            require_iterate(region.program, &source, at, &what)
        }
    }
}

/// `program`, or a diagnostic at `at` when it has no `iterate`: the SDSL guide
/// (sec. 3.2.11) makes the iterate the program's outer loop, and a file of
/// declarations only (an empty file, comments, `/dev/null`) is a mistake that
/// would otherwise "run" zero iterations and succeed. `what` names the program
/// ("the program", "region 1"). The library still parses declaration-only
/// programs (a host file's region may only declare).
fn require_iterate(
    program: Program,
    source: &Arc<SourceFile>,
    at: Span,
    what: &str,
) -> Result<Program, CliError> {
    if program.iterate.is_some() {
        return Ok(program);
    }
    let diagnostic = Diagnostic::error(format!("{what} has no `iterate`"), at)
        .with_label("the program ends here without one")
        .with_help(
            "add `iterate N { stencil name { ... } }` after the declarations: the stencils \
             it holds are what the program runs, N times",
        );
    Err(CliError::Located(Diagnostics::new(
        source.clone(),
        vec![diagnostic],
    )))
}
