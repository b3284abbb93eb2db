//! `stencilc check-kernel`: runs a CUDA kernel of the subset in the emulator
//! and reports shared-memory races, out-of-bounds accesses and barrier errors
//! with their line; `--on opencl` also runs it on OpenCL and compares every
//! array, and `--print-opencl` prints the kernel as OpenCL C.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use stencilc::back::opencl::from_cuda::print_kernel;
use stencilc::diag::Diagnostics;
use stencilc::emu::args::materialize;
use stencilc::emu::{self, Arg, Limits, Value};
use stencilc::exec::opencl::cuda_kernel::run_cuda_kernel;
use stencilc::front::cuda::ast::Kernel;

use super::cuda_input;
use super::error::CliError;
use super::out;

/// Arguments of `stencilc check-kernel`.
#[derive(Args, Debug)]
pub struct CheckKernelArgs {
    /// The CUDA file (a whole `.cu` file: only the kernel is parsed, as the
    /// subset of stencil kernels; see docs/src/check-kernel.md).
    pub file: PathBuf,
    /// Blocks along x, y[, z] (needed to run).
    #[arg(long, value_name = "X,Y[,Z]")]
    pub grid: Option<String>,
    /// Threads per block along x, y[, z] (needed to run).
    #[arg(long, value_name = "X,Y[,Z]")]
    pub block: Option<String>,
    /// A kernel argument: `NAME=VALUE` for a scalar, `NAME=random:N` for an
    /// array of N pseudo-random elements, `NAME=zeros:N` for N zeros.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// A macro, as nvcc's `-D NAME=VALUE`.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Which kernel, when the file has several (default: the only one, or
    /// the only one with `profile("...")` / `__opt__`).
    #[arg(long)]
    pub kernel: Option<String>,
    /// The launch's dynamic shared memory in bytes (the third value of
    /// `<<<grid, block, N>>>`): the size of an `extern __shared__` array.
    #[arg(long, value_name = "N")]
    pub shared_bytes: Option<u64>,
    /// The most operations the whole run may execute.
    #[arg(long, default_value_t = 500_000_000)]
    pub max_steps: u64,
    /// Also run the kernel on OpenCL (printed as OpenCL C; PoCL runs it on
    /// the CPU) and compare every array with the emulator's.
    #[arg(long, value_name = "opencl")]
    pub on: Option<OnPlatform>,
    /// Print the kernel as OpenCL C (annotations stripped) and run nothing.
    #[arg(long)]
    pub print_opencl: bool,
}

/// Where `--on` runs the kernel besides the emulator.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnPlatform {
    /// The OpenCL platform (PoCL on a CPU, or a GPU's driver).
    Opencl,
}

/// Runs the command.
pub fn run(args: &CheckKernelArgs) -> Result<(), CliError> {
    let input = cuda_input::load(
        &args.file,
        &args.defines,
        args.kernel.as_deref(),
        args.shared_bytes,
        "check-kernel",
    )?;
    let kernel = &input.kernel;
    if args.print_opencl {
        let printed = print_kernel(kernel, &input.masked.text, &input.defines)
            .map_err(|d| CliError::Located(Diagnostics::new(Arc::clone(&input.source), vec![d])))?;
        return out::stdout_text(&printed);
    }
    let needed = |given: &Option<String>, what: &str| {
        given.clone().ok_or_else(|| {
            CliError::new(
                format!("`--{what}` is missing: the emulator needs the launch's sizes"),
                "give `--grid X,Y[,Z] --block X,Y[,Z]`, as in `--grid 2,2 --block 8,4`",
            )
        })
    };
    let launch = cuda_input::launch(&needed(&args.grid, "grid")?, &needed(&args.block, "block")?)?;
    let specs = cuda_input::arg_specs(kernel, &args.args)?;
    let mut call = materialize(kernel, &specs, 0);
    let limits = Limits {
        max_steps: args.max_steps,
        ..Limits::default()
    };
    let given_args = call.clone();
    let report = emu::run(kernel, launch, &mut call, limits)
        .map_err(|e| CliError::new(e.to_string(), "change the launch or the arguments"))?;
    if report.is_clean() && args.on == Some(OnPlatform::Opencl) {
        let mut on_opencl = given_args;
        run_cuda_kernel(
            kernel,
            &input.masked,
            &input.defines,
            launch,
            &mut on_opencl,
        )?;
        let (compared, worst) = compare(kernel, &call, &on_opencl)?;
        out::stdout_text(&format!(
            "{}: kernel `{}` on OpenCL agrees with the emulator on all {compared} array elements (largest difference {worst:e})\n",
            args.file.display(),
            kernel.name
        ))?;
    }
    if report.is_clean() {
        return out::stdout_text(&format!(
            "{}: kernel `{}` ran on grid {:?} x block {:?}: no race, no out-of-bounds access, barriers uniform ({} operations)\n",
            args.file.display(),
            kernel.name,
            launch.grid,
            launch.block,
            report.steps
        ));
    }
    let items = report.findings.iter().map(|f| f.to_diagnostic()).collect();
    Err(CliError::Located(Diagnostics::new(
        Arc::clone(&input.source),
        items,
    )))
}

/// Compares every array of two runs: floats within 1e-5 (`double` 1e-12) of
/// the array's largest magnitude (an OpenCL compiler may contract `a*b+c`),
/// integers exactly. Returns the elements compared and the largest difference.
fn compare(kernel: &Kernel, emulated: &[Arg], other: &[Arg]) -> Result<(usize, f64), CliError> {
    let mut compared = 0;
    let mut worst = 0.0f64;
    for ((param, a), b) in kernel.params.iter().zip(emulated).zip(other) {
        let (Arg::Array(a), Arg::Array(b)) = (a, b) else {
            continue;
        };
        let scale = a
            .iter()
            .fold(0.0f64, |m, v| m.max(v.as_f64().abs()))
            .max(1e-30);
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            let tolerance = match x {
                Value::Float(_) => 1e-5 * scale,
                Value::Double(_) => 1e-12 * scale,
                _ => 0.0,
            };
            let diff = (x.as_f64() - y.as_f64()).abs();
            if diff > tolerance || diff.is_nan() {
                return Err(CliError::new(
                    format!(
                        "`{}[{i}]`: the emulator computed {}, OpenCL {}",
                        param.name,
                        x.as_f64(),
                        y.as_f64()
                    ),
                    "a difference the kernel's arithmetic does not explain: a race the emulator's \
                     schedule hides, or a bug in stencilc's emulator or OpenCL printing (please report it)",
                ));
            }
            worst = worst.max(diff);
            compared += 1;
        }
    }
    Ok((compared, worst))
}
