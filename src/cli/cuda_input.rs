//! What `check-kernel` and `synth` read alike: the CUDA file (a whole `.cu`
//! file, of which only the chosen kernel is parsed) with its `-D` macros,
//! the kernel chosen, the launch sizes and the kernel's arguments
//! (parsed by [`stencilc::emu::args`]).

use std::path::Path;
use std::sync::Arc;

use stencilc::emu::args::{parse_sizes, parse_specs, ArgError, ArgSpec};
use stencilc::emu::Launch;
use stencilc::front::cuda::ast::Kernel;
use stencilc::front::cuda::{parse_define, parse_kernel_in_file, FileError, FileOptions};
use stencilc::source::{read_source, SourceFile, MAX_SOURCE_BYTES};

use super::error::CliError;

impl From<ArgError> for CliError {
    fn from(error: ArgError) -> CliError {
        CliError::new(error.message, error.help)
    }
}

/// A CUDA file with its kernel found, parsed and checked.
pub struct CudaInput {
    /// The file's text, for diagnostics and for the rewrite.
    pub source: Arc<SourceFile>,
    /// The file with all but the kernel and what it uses blanked (the same
    /// offsets): what NVRTC and the OpenCL printer are given.
    pub masked: Arc<SourceFile>,
    /// The `-D NAME=VALUE` macros.
    pub defines: Vec<(String, String)>,
    /// The kernel.
    pub kernel: Kernel,
}

/// Reads `file` (a whole `.cu` file: host code and other kernels are left
/// alone), finds the kernel (`kernel`, or the only one, or the only one with
/// KaniCUDA's markers), and parses and checks it with the `-D` macros
/// `defines` and the launch's dynamic `shared_bytes`; `command` names the
/// command for the help of a bad `-D`.
pub fn load(
    file: &Path,
    defines: &[String],
    kernel: Option<&str>,
    shared_bytes: Option<u64>,
    command: &str,
) -> Result<CudaInput, CliError> {
    let text = read_source(file, MAX_SOURCE_BYTES)
        .map_err(|e| super::program::source_error(file, "the CUDA file", &e, "check the path"))?;
    let source = SourceFile::new(file.display().to_string(), text);
    let defines = defines
        .iter()
        .map(|d| parse_define(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CliError::new(e.to_string(), format!("see `stencilc {command} --help`")))?;
    let options = FileOptions {
        defines: &defines,
        kernel,
        shared_bytes,
    };
    let found = parse_kernel_in_file(&source, &options).map_err(|e| match e {
        FileError::Located(d) => CliError::Located(d),
        FileError::Choice { message, help } => CliError::new(message, help),
    })?;
    Ok(CudaInput {
        source,
        masked: found.masked,
        defines,
        kernel: found.kernel,
    })
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
