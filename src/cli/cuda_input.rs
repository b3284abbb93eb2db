//! What `check-kernel` and `synth` read alike: the CUDA file with its `-D`
//! macros, the kernel chosen, the launch sizes and the kernel's arguments
//! (parsed by [`stencilc::exec::emu::args`]).

use std::path::Path;
use std::sync::Arc;

use stencilc::exec::emu::args::{parse_sizes, parse_specs, ArgError, ArgSpec};
use stencilc::exec::emu::Launch;
use stencilc::front::cuda::ast::{Kernel, Unit};
use stencilc::front::cuda::{parse_define, parse_unit};
use stencilc::source::{read_source, SourceFile, MAX_SOURCE_BYTES};

use super::error::CliError;

impl From<ArgError> for CliError {
    fn from(error: ArgError) -> CliError {
        CliError::new(error.message, error.help)
    }
}

/// A parsed and checked CUDA file.
pub struct CudaInput {
    /// The file's text, for diagnostics.
    pub source: Arc<SourceFile>,
    /// The `-D NAME=VALUE` macros.
    pub defines: Vec<(String, String)>,
    /// Its kernels.
    pub unit: Unit,
}

/// Reads, parses and checks `file` with the `-D` macros `defines`;
/// `command` names the command for the help of a bad `-D`.
pub fn load(file: &Path, defines: &[String], command: &str) -> Result<CudaInput, CliError> {
    let text = read_source(file, MAX_SOURCE_BYTES)
        .map_err(|e| super::program::source_error(file, "the CUDA file", &e, "check the path"))?;
    let source = SourceFile::new(file.display().to_string(), text);
    let defines = defines
        .iter()
        .map(|d| parse_define(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CliError::new(e, format!("see `stencilc {command} --help`")))?;
    let unit = parse_unit(&source, &defines)?;
    Ok(CudaInput {
        source,
        defines,
        unit,
    })
}

impl CudaInput {
    /// The kernel named `name`, or the only one.
    pub fn kernel(&self, name: Option<&str>) -> Result<&Kernel, CliError> {
        self.unit.kernel(name).ok_or_else(|| {
            let names: Vec<&str> = self.unit.kernels.iter().map(|k| k.name.as_str()).collect();
            match name {
                Some(name) => CliError::new(
                    format!("no kernel `{name}` among {}", names.join(", ")),
                    "name one of them with `--kernel NAME`",
                ),
                None => CliError::new(
                    format!("the file has several kernels: {}", names.join(", ")),
                    "name one with `--kernel NAME`",
                ),
            }
        })
    }
}

/// The launch of `--grid` and `--block`.
pub fn launch(grid: &str, block: &str) -> Result<Launch, CliError> {
    Ok(Launch {
        grid: parse_sizes(grid, "grid")?,
        block: parse_sizes(block, "block")?,
    })
}

/// The kernel's arguments from `--arg NAME=VALUE` texts.
pub fn arg_specs(kernel: &Kernel, args: &[String]) -> Result<Vec<ArgSpec>, CliError> {
    Ok(parse_specs(kernel, args)?)
}
