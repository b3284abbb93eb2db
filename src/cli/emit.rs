//! `stencilc emit PROGRAM --target c|cuda|opencl`: prints the generated code.
//!
//! For the GPU targets the schedule flags (`--block`, `--tile`, `--shm`) and the
//! region's pragma choose the kernels printed; the output is one self-contained
//! translation unit (CUDA: `extern "C"` kernels that NVRTC compiles as they are).

use std::path::PathBuf;

use stencilc::back::gpu_emit::{self, GpuTarget};

use crate::cli::args::{ParamArgs, ScheduleArgs};
use crate::cli::error::CliError;

/// What `emit` can print.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitTarget {
    /// The C with OpenMP that `--backend c` compiles.
    C,
    /// CUDA C kernels, as `--backend cuda` compiles them with NVRTC.
    Cuda,
    /// OpenCL C kernels, as `--backend opencl` builds them.
    Opencl,
}

/// Arguments of `stencilc emit`.
#[derive(clap::Args, Debug)]
pub struct EmitArgs {
    /// The program: a `.sdsl` file, or a C/C++ file with `#pragma sdsl` regions.
    pub program: PathBuf,
    /// Which code to print.
    #[arg(long, short = 't', value_enum, default_value = "c")]
    pub target: EmitTarget,
    /// For a C/C++ file: which region (from 0).
    #[arg(long)]
    pub region: Option<usize>,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The GPU schedule (ignored for `--target c`).
    #[command(flatten)]
    pub schedule: ScheduleArgs,
    /// Values of the host identifiers that the region's pragma options use
    /// (`--set BX=16` for `block:BX*2,8`); parameters may be given too.
    #[command(flatten)]
    pub params: ParamArgs,
}

/// Runs `stencilc emit`.
pub fn run(args: &EmitArgs) -> Result<(), CliError> {
    let mut program = crate::cli::program::load(&args.program, args.region)?;
    let values = crate::cli::params::parse_sets(&program, &args.params.sets)?;
    crate::cli::params::bind_hint_values(&mut program, &args.params.sets, &values)?;
    let text = match args.target {
        EmitTarget::C => stencilc::back::c::emit_program(&program).source,
        EmitTarget::Cuda => gpu_source(&program, &args.schedule, GpuTarget::Cuda)?,
        EmitTarget::Opencl => gpu_source(&program, &args.schedule, GpuTarget::OpenCl)?,
    };
    match &args.output {
        Some(path) => std::fs::write(path, text).map_err(|e| {
            CliError::new(
                format!("cannot write `{}`: {e}", path.display()),
                "give -o a path in a writable folder",
            )
        }),
        None => crate::cli::out::stdout_text(&text),
    }
}

/// Lowers `program` under the requested schedule and prints it for `target`.
fn gpu_source(
    program: &stencilc::ir::Program,
    schedule: &ScheduleArgs,
    target: GpuTarget,
) -> Result<String, CliError> {
    let request = schedule.run_options().schedule_request();
    stencilc::schedule::hinted_shape(program, &request).map_err(|d| {
        CliError::Located(stencilc::diag::Diagnostics::new(
            program.source.clone(),
            vec![d],
        ))
    })?;
    gpu_emit::emit(program, &request, target).map_err(|e| {
        CliError::new(
            format!("cannot schedule `{}` for the GPU: {e}", program.name),
            "change --block, --tile or --shm (or the region's pragma) as the message says",
        )
    })
}
