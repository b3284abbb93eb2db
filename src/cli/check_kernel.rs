//! `stencilc check-kernel`: runs a CUDA kernel of the subset in the emulator
//! and reports shared-memory races, out-of-bounds accesses and barrier errors
//! with their line; `--on opencl` also runs it on OpenCL and compares every
//! array, and `--print-opencl` prints the kernel as OpenCL C.

use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use stencilc::diag::Diagnostics;
use stencilc::exec::emu::{self, Arg, Launch, Limits, Value};
use stencilc::exec::opencl::cuda_kernel::run_cuda_kernel;
use stencilc::front::cuda::ast::Kernel;
use stencilc::front::cuda::ast::{Scalar, Type};
use stencilc::front::cuda::opencl::print_kernel;
use stencilc::front::cuda::{parse_define, parse_unit};
use stencilc::source::SourceFile;

use super::error::CliError;

/// Arguments of `stencilc check-kernel`.
#[derive(Args, Debug)]
pub struct CheckKernelArgs {
    /// The CUDA file (the subset of stencil kernels; see the README).
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
    /// Which kernel, when the file has several.
    #[arg(long)]
    pub kernel: Option<String>,
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

fn sizes(text: &str, what: &str) -> Result<[u32; 3], CliError> {
    let parts: Result<Vec<u32>, _> = text.split(',').map(|p| p.trim().parse::<u32>()).collect();
    match parts {
        Ok(p) if (1..=3).contains(&p.len()) && p.iter().all(|&v| v > 0) => {
            Ok([p[0], *p.get(1).unwrap_or(&1), *p.get(2).unwrap_or(&1)])
        }
        _ => Err(CliError::new(
            format!("`--{what} {text}` is not a list of 1 to 3 positive sizes"),
            format!("write it as X,Y[,Z], as in `--{what} 16,8`"),
        )),
    }
}

/// Deterministic pseudo-random numbers in [-1, 1) (a 64-bit LCG), so that a
/// reported problem can be reproduced.
fn random(n: usize, seed: u64) -> impl Iterator<Item = f64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n).map(move |_| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    })
}

fn array_value(elem: Scalar, x: f64) -> Value {
    if elem.is_float() {
        Value::Double(x).convert(elem)
    } else {
        Value::Long((x * 50.0 + 50.0) as i64).convert(elem)
    }
}

/// Runs the command.
pub fn run(args: &CheckKernelArgs) -> Result<(), CliError> {
    let text = std::fs::read_to_string(&args.file).map_err(|e| {
        CliError::new(
            format!("cannot read `{}`: {e}", args.file.display()),
            "check the path",
        )
    })?;
    let source = SourceFile::new(args.file.display().to_string(), text);
    let defines = args
        .defines
        .iter()
        .map(|d| parse_define(d))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CliError::new(e, "see `stencilc check-kernel --help`"))?;
    let unit = parse_unit(&source, &defines)?;
    let kernel = unit.kernel(args.kernel.as_deref()).ok_or_else(|| {
        let names: Vec<&str> = unit.kernels.iter().map(|k| k.name.as_str()).collect();
        CliError::new(
            format!("no kernel to check among {}", names.join(", ")),
            "name one with `--kernel NAME`",
        )
    })?;
    if args.print_opencl {
        let printed = print_kernel(kernel, &source.text, &defines)
            .map_err(|d| CliError::Located(Diagnostics::new(Arc::clone(&source), vec![d])))?;
        print!("{printed}");
        return Ok(());
    }
    let needed = |given: &Option<String>, what: &str| {
        given.clone().ok_or_else(|| {
            CliError::new(
                format!("`--{what}` is missing: the emulator needs the launch's sizes"),
                "give `--grid X,Y[,Z] --block X,Y[,Z]`, as in `--grid 2,2 --block 8,4`",
            )
        })
    };
    let launch = Launch {
        grid: sizes(&needed(&args.grid, "grid")?, "grid")?,
        block: sizes(&needed(&args.block, "block")?, "block")?,
    };
    let mut given = std::collections::HashMap::new();
    for arg in &args.args {
        let Some((name, value)) = arg.split_once('=') else {
            return Err(CliError::new(
                format!("`--arg {arg}` has no value"),
                "write `--arg NAME=VALUE` or `--arg NAME=random:N`",
            ));
        };
        if !kernel.params.iter().any(|p| p.name == name) {
            let names: Vec<&str> = kernel.params.iter().map(|p| p.name.as_str()).collect();
            return Err(CliError::new(
                format!(
                    "`--arg {arg}`: kernel `{}` has no parameter `{name}`",
                    kernel.name
                ),
                format!("its parameters are {}", names.join(", ")),
            ));
        }
        given.insert(name.to_string(), value.to_string());
    }
    let mut call = Vec::new();
    for (seed, param) in kernel.params.iter().enumerate() {
        let Some(value) = given.get(&param.name) else {
            let example = match param.ty {
                Type::Pointer(_) => format!("--arg {}=random:1024", param.name),
                _ => format!("--arg {}=16", param.name),
            };
            return Err(CliError::new(
                format!(
                    "argument `{}` of kernel `{}` is missing",
                    param.name, kernel.name
                ),
                format!("give it, as in `{example}`"),
            ));
        };
        let bad = |what: &str| {
            CliError::new(
                format!("`--arg {}={value}`: {what}", param.name),
                "scalars take a number; arrays take `random:N` or `zeros:N`",
            )
        };
        call.push(match param.ty {
            Type::Pointer(elem) => {
                let (kind, count) = value.split_once(':').ok_or_else(|| bad("not an array"))?;
                let n: usize = count
                    .parse()
                    .map_err(|_| bad("the count is not a number"))?;
                match kind {
                    "random" => Arg::Array(
                        random(n, seed as u64)
                            .map(|x| array_value(elem, x))
                            .collect(),
                    ),
                    "zeros" => Arg::Array(vec![Value::zero(elem); n]),
                    _ => return Err(bad("unknown array kind")),
                }
            }
            Type::Scalar(s) => {
                let parsed = if s.is_float() {
                    value
                        .parse::<f64>()
                        .map(|v| Value::Double(v).convert(s))
                        .ok()
                } else {
                    value.parse::<i64>().map(|v| Value::Long(v).convert(s)).ok()
                };
                Arg::Scalar(parsed.ok_or_else(|| bad("not a number"))?)
            }
            _ => return Err(bad("not a kernel parameter")),
        });
    }
    let limits = Limits {
        max_steps: args.max_steps,
        ..Limits::default()
    };
    let given_args = call.clone();
    let report = emu::run(kernel, launch, &mut call, limits)
        .map_err(|e| CliError::new(e, "change the launch or the arguments"))?;
    if report.is_clean() && args.on == Some(OnPlatform::Opencl) {
        let mut on_opencl = given_args;
        run_cuda_kernel(kernel, &source, &defines, launch, &mut on_opencl)?;
        let (compared, worst) = compare(kernel, &call, &on_opencl)?;
        println!(
            "{}: kernel `{}` on OpenCL agrees with the emulator on all {compared} array elements (largest difference {worst:e})",
            args.file.display(),
            kernel.name
        );
    }
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
        Arc::clone(&source),
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
