//! `stencilc emit PROGRAM --target c|cuda|opencl|kir`: prints the generated code
//! (`kir`: the kernel IR the CUDA kernels are printed from).
//!
//! For the GPU targets the schedule flags (`--block`, `--tile`, `--shm`) and the
//! region's pragma choose the kernels printed; the output is one self-contained
//! translation unit (CUDA: `extern "C"` kernels that NVRTC compiles as they are).
//! With every parameter given (`--set`), the kernels are those a run at those
//! sizes compiles: 64-bit indices for a grid of 2^31 points or more.

use std::path::PathBuf;

use stencilc::analysis::tile::CpuPlan;
use stencilc::driver::emit::{self as gpu_emit, EmitOptions, GpuTarget};
use stencilc::ir::env::RunEnv;
use stencilc::schedule::cpu_tile::CpuRequest;

use std::io::Write as _;

use crate::cli::args::{FmaArgs, ParamArgs, ScheduleArgs, SizeInputArgs};
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
    /// The kernel IR that the CUDA kernels are printed from, as
    /// target-neutral text (for pass-level tests).
    Kir,
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
    /// Fused multiply-adds (the file's header says so).
    #[command(flatten)]
    pub fma: FmaArgs,
    /// Values of the host identifiers that the region's pragma options use
    /// (`--set BX=16` for `block:BX*2,8`); parameters may be given too.
    #[command(flatten)]
    pub params: ParamArgs,
    /// Inputs whose shapes give the grid sizes `--set` leaves out.
    #[command(flatten)]
    pub inputs: SizeInputArgs,
}

/// Runs `stencilc emit`.
pub fn run(args: &EmitArgs) -> Result<(), CliError> {
    if let Some(output) = &args.output {
        crate::cli::paths::refuse_output_over_input(&args.program, output)?;
        for input in &args.inputs.inputs {
            crate::cli::paths::refuse_output_over_input(&input.path, output)?;
        }
    }
    let mut program = crate::cli::program::load(&args.program, args.region)?;
    let (values, inputs) =
        crate::cli::inputs::sizes_from_inputs(&program, &args.params.sets, &args.inputs.inputs)?;
    crate::cli::params::bind_hint_values(&mut program, &args.params.sets, &values)?;
    // With every parameter given, the kernels are those of a run at these
    // sizes (64-bit indices where a grid needs them).
    let env = values
        .iter()
        .cloned()
        .collect::<Option<Vec<_>>>()
        .and_then(|params| {
            let bindings = stencilc::exec::Bindings { params };
            RunEnv::new(&program, &bindings).ok()
        });
    if let Some(env) = &env {
        crate::cli::inputs::check_fits(&program, env, &inputs)?;
    }
    let options = EmitOptions {
        env: env.as_ref(),
        fma: args.fma.fma,
        registers: Some(&stencilc::exec::cuda::nvrtc::ptxas_registers),
    };
    let text = match args.target {
        EmitTarget::C => {
            let plan = c_plan(&program, env.as_ref(), &args.schedule)?;
            let source = stencilc::back::c::emit_program_planned(&program, &plan).source;
            if args.fma.fma {
                stencilc::back::c::with_fma_notice(&source)
            } else {
                source
            }
        }
        EmitTarget::Cuda => gpu_source(&program, &args.schedule, GpuTarget::Cuda, options)?,
        EmitTarget::Opencl => gpu_source(&program, &args.schedule, GpuTarget::OpenCl, options)?,
        EmitTarget::Kir => gpu_source(&program, &args.schedule, GpuTarget::Kir, options)?,
    };
    match &args.output {
        Some(path) => crate::cli::paths::write_text(path, &text),
        None => crate::cli::out::stdout_text(&text),
    }
}

/// The C back-end's plan (threads, time tiling) for `emit -t c`: as `run`
/// would choose it when every parameter is given, else what the flags ask
/// (tiles of 32 points per axis where `--cpu-tile` does not say). Notes go
/// to stderr.
fn c_plan(
    program: &stencilc::ir::Program,
    env: Option<&RunEnv>,
    schedule: &ScheduleArgs,
) -> Result<CpuPlan, CliError> {
    let options = schedule.run_options();
    let request = CpuRequest {
        time: options.time,
        tile: options.cpu_tile.clone(),
        threads: options.threads,
        order: options.cpu_order,
    };
    let plan = stencilc::driver::cpu::plan(program, &request, env).map_err(|d| {
        stencilc::exec::ExecError::Located(stencilc::diag::Diagnostics::new(
            program.source.clone(),
            vec![d],
        ))
    })?;
    for note in &plan.notes {
        let _ = writeln!(std::io::stderr(), "note: {note}");
    }
    Ok(plan)
}

/// Lowers `program` under the requested schedule and prints it for `target`.
fn gpu_source(
    program: &stencilc::ir::Program,
    schedule: &ScheduleArgs,
    target: GpuTarget,
    options: EmitOptions<'_>,
) -> Result<String, CliError> {
    let request = schedule.run_options().schedule_request();
    stencilc::schedule::hinted_shape(program, &request).map_err(|d| {
        CliError::Located(stencilc::diag::Diagnostics::new(
            program.source.clone(),
            vec![d],
        ))
    })?;
    gpu_emit::emit_with(program, &request, target, options).map_err(|e| {
        CliError::new(
            format!("cannot schedule `{}` for the GPU: {e}", program.name),
            "change --block, --tile, --vector, --shm or --ptxas-rank (or the region's pragma) as \
             the message says",
        )
    })
}
