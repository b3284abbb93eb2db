//! `stencilc check-kernel`: runs a CUDA kernel of the subset in the emulator
//! and reports shared-memory races, out-of-bounds accesses and barrier errors
//! with their line.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use stencilc::diag::Diagnostics;
use stencilc::exec::emu::args::materialize;
use stencilc::exec::emu::{self, Limits};

use super::cuda_input;
use super::error::CliError;

/// Arguments of `stencilc check-kernel`.
#[derive(Args, Debug)]
pub struct CheckKernelArgs {
    /// The CUDA file (the subset of stencil kernels; see the README).
    pub file: PathBuf,
    /// Blocks along x, y[, z].
    #[arg(long, value_name = "X,Y[,Z]")]
    pub grid: String,
    /// Threads per block along x, y[, z].
    #[arg(long, value_name = "X,Y[,Z]")]
    pub block: String,
    /// A kernel argument: `NAME=VALUE` for a scalar, `NAME=random:N` for an
    /// array of N pseudo-random elements, `NAME=zeros:N` for N zeros.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// A macro, as nvcc's `-D NAME=VALUE`.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Which kernel, when the file has several.
    #[arg(long)]
    pub kernel: Option<String>,
    /// The most operations the whole run may execute.
    #[arg(long, default_value_t = 500_000_000)]
    pub max_steps: u64,
}

/// Runs the command.
pub fn run(args: &CheckKernelArgs) -> Result<(), CliError> {
    let input = cuda_input::load(&args.file, &args.defines, "check-kernel")?;
    let kernel = input.kernel(args.kernel.as_deref())?;
    let launch = cuda_input::launch(&args.grid, &args.block)?;
    let specs = cuda_input::arg_specs(kernel, &args.args)?;
    let mut call = materialize(kernel, &specs, 0);
    let limits = Limits {
        max_steps: args.max_steps,
        ..Limits::default()
    };
    let report = emu::run(kernel, launch, &mut call, limits)
        .map_err(|e| CliError::new(e, "change the launch or the arguments"))?;
    if report.is_clean() {
        println!(
            "{}: kernel `{}` ran on grid {:?} x block {:?}: no race, no out-of-bounds access, barriers uniform ({} operations)",
            args.file.display(),
            kernel.name,
            launch.grid,
            launch.block,
            report.steps
        );
        return Ok(());
    }
    let items = report.findings.iter().map(|f| f.to_diagnostic()).collect();
    Err(CliError::Located(Diagnostics::new(
        Arc::clone(&input.source),
        items,
    )))
}
