//! Loading the program a command works on: a `.sdsl` file, or one region of a
//! C/C++ file with `#pragma sdsl` regions.

use std::path::Path;

use stencilc::ir::Program;
use stencilc::source::SourceFile;
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

/// Reads and checks the program in `path`; for a host file, region `region`
/// (the first by default).
pub fn load(path: &Path, region: Option<usize>) -> Result<Program, CliError> {
    let text = std::fs::read(path).map_err(|e| {
        CliError::new(
            format!("cannot read the program `{}`: {e}", path.display()),
            "check the path of the .sdsl or C/C++ file",
        )
    })?;
    let text = String::from_utf8(text).map_err(|_| {
        CliError::new(
            format!("the program `{}` is not UTF-8 text", path.display()),
            "give a .sdsl or C/C++ source file saved as UTF-8",
        )
    })?;
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
