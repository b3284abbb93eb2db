//! The output-path policy every command follows: before anything is computed,
//! each output is checked against every input and every other output by the
//! file it names on disk ([`stencilc::files::paths`]), and refused with the
//! reason; then it is written whole or not at all
//! ([`stencilc::files::write_whole`]).

use std::path::Path;

use stencilc::files::paths::OutputCheck;

use crate::cli::error::CliError;

/// Refuses the first output that would overwrite an input or another output.
pub fn refuse_conflicts(check: &OutputCheck) -> Result<(), CliError> {
    check
        .check()
        .map_err(|conflict| CliError::new(conflict.to_string(), conflict.help()))
}

/// Refuses `-o OUTPUT` when it names the file `input` (the same path, a link
/// to it, a path through `..`, a hard link).
pub fn refuse_output_over_input(input: &Path, output: &Path) -> Result<(), CliError> {
    let mut check = OutputCheck::new();
    check.input("the input", input).output("-o", output);
    refuse_conflicts(&check)
}

/// Writes a command's text output (`-o FILE`) whole or not at all.
pub fn write_text(path: &Path, text: &str) -> Result<(), CliError> {
    stencilc::files::write_whole(path, text.as_bytes()).map_err(|e| {
        CliError::new(
            format!(
                "cannot write `{}`: {e}; nothing was written",
                path.display()
            ),
            if e.kind() == std::io::ErrorKind::StorageFull {
                "free space on that disk, or give -o a path on another one"
            } else {
                "give -o a path in a folder that exists and that you can write to"
            },
        )
    })
}
