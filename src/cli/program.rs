//! Loading the program a command works on: a `.sdsl` file, or one region of a
//! C/C++ file with `#pragma sdsl` regions.

use std::path::Path;

use stencilc::ir::Program;
use stencilc::source::{read_source, show_bytes, ReadError, SourceFile, MAX_SOURCE_BYTES};
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
    let text = read_program(path)?;
    let source = SourceFile::new(path.display().to_string(), text);
    if !is_host_file(path) {
        if let Some(n) = region {
            return Err(CliError::new(
                format!("--region {n} was given, but `{}` is not a C/C++ file with regions", path.display()),
                "leave out --region for a .sdsl program (C/C++ files end in .c, .cc, .cpp, .h, .hpp or .cu)",
            ));
        }
        return Ok(analysis::checked(front::parse_program(source)?)?);
    }
    let mut regions = analysis::checked_regions(front::parse_regions(source)?)?;
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
        _ => Ok(regions.swap_remove(wanted).program),
    }
}
