//! The `stencilc` command line: argument parsing and the subcommands.
//!
//! Each subcommand is a variant of [`Command`] with its own module; arguments
//! that several subcommands take (the program, `--set`, `--block`, ...) live in
//! [`args`]. Errors are [`CliError`]s, printed as `error: ...` with advice on
//! stderr and exit status 1; clap's usage errors exit with status 2. A closed
//! stdout ends a command quietly with status 141, SIGINT and SIGTERM with 130
//! and 143 (see [`out`]).
//!
//! Nothing here prints with `print!`/`println!`, which panic on a closed or
//! full stdout: results go through [`out::stdout_text`], and the lint below
//! keeps it so.

#![deny(clippy::print_stdout)]

pub mod args;
pub mod bench;
pub mod bench_gpu;
pub mod check_kernel;
pub mod compile;
pub mod cuda_input;
pub mod emit;
pub mod error;
pub mod explain;
pub mod inputs;
pub mod map;
pub mod memory;
pub mod out;
pub mod params;
pub mod paths;
pub mod program;
pub mod progress;
pub mod run;
pub mod scalar;
pub mod summary;
pub mod synth;
pub mod tune;
pub mod tune_plot;
pub mod verify;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cli::error::CliError;

/// stencilc compiles SDSL stencil programs and runs them on your data.
#[derive(Parser, Debug)]
#[command(name = "stencilc", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a program on input files and write the fields asked for.
    Run(run::RunArgs),
    /// Print the code generated for a program (C, CUDA or OpenCL).
    Emit(emit::EmitArgs),
    /// Source-to-source, like sdslc: replace the SDSL regions of a C/C++ file by
    /// calls to generated C.
    Compile(compile::CompileArgs),
    /// What each GPU kernel would cost on a device, and why (no GPU needed).
    Explain(explain::ExplainArgs),
    /// Measure a program's schedules on a back-end and keep the fastest for `run`.
    Tune(tune::TuneArgs),
    /// Map the loop nests of a sequential C file onto OpenMP (or plan them for
    /// a GPU), with the mapping report.
    Map(map::MapArgs),
    /// Run the CPU benchmark suite of bench/ and write its results.
    Bench(bench::BenchArgs),
    /// Run the GPU benchmark suite (CUDA) against naive kernels and the copy
    /// bandwidth; see bench/gpu/README.md.
    BenchGpu(bench_gpu::BenchGpuArgs),
    /// Run a CUDA kernel (the subset of stencil kernels) in the emulator and
    /// report shared-memory races, out-of-bounds accesses and barrier errors.
    CheckKernel(check_kernel::CheckKernelArgs),
    /// KaniCUDA: serve a CUDA kernel's marked global reads from shared memory
    /// (profile, synthesize index and guard, insert barriers, verify, write).
    Synth(synth::SynthArgs),
}

impl Command {
    /// Runs the subcommand.
    pub fn execute(&self) -> Result<(), CliError> {
        match self {
            Command::Run(args) => run::run(args),
            Command::Emit(args) => emit::run(args),
            Command::Compile(args) => compile::run(args),
            Command::Explain(args) => explain::run(args),
            Command::Tune(args) => tune::run(args),
            Command::Bench(args) => bench::run(args),
            Command::CheckKernel(args) => check_kernel::run(args),
            Command::Synth(args) => synth::run(args),
            Command::Map(args) => map::run(args),
            Command::BenchGpu(args) => bench_gpu::run_gpu_bench(args)
                .map_err(|e| CliError::new(format!("{e:#}"), "see bench/gpu/README.md")),
        }
    }
}

/// Parses the command line, runs the command and reports any error.
pub fn main() -> ExitCode {
    install_panic_hook();
    out::end_on_signals();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            // Help and version go to stdout with status 0; usage errors to
            // stderr with status 2 (and, for `explain --json`, as JSON on stdout).
            let status = ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(2));
            if error.use_stderr() {
                explain::usage_error_as_json(&error.to_string());
                let _ = error.print();
                return status;
            }
            // Help or version on stdout: a write that fails (`--help
            // >/dev/full`) must not end with status 0 as if it had been read.
            let printed = error
                .print()
                .and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
            return match printed.map_err(out::stdout_failure) {
                Ok(()) => status,
                Err(CliError::ClosedStdout) => ExitCode::from(out::CLOSED_STDOUT_STATUS),
                Err(error) => {
                    out::stderr_line(&error.to_string());
                    ExitCode::FAILURE
                }
            };
        }
    };
    match execute_on_a_deep_stack(cli.command) {
        Some(Ok(())) => ExitCode::SUCCESS,
        Some(Err(CliError::ClosedStdout)) => ExitCode::from(out::CLOSED_STDOUT_STATUS),
        Some(Err(error)) => {
            out::stderr_line(&error.to_string());
            ExitCode::FAILURE
        }
        // A panic, already reported by the hook.
        None => ExitCode::FAILURE,
    }
}

/// Stack for the command's thread. Every pass over a program (parser, checks,
/// folding, interpreter, code printers) recurses once per level of an
/// expression, and the front-end accepts expressions up to
/// [`stencilc::front::MAX_EXPR_DEPTH`] levels deep (a flat sum of that many
/// terms); unoptimised builds need a few KiB per level in the deepest pass.
/// The memory is reserved, and only used as deep as a program needs.
const COMMAND_STACK_BYTES: usize = 1 << 30;

/// Runs the command on a thread with [`COMMAND_STACK_BYTES`] of stack (on
/// this thread if no such thread can be made); `None` if it panicked.
fn execute_on_a_deep_stack(command: Command) -> Option<Result<(), CliError>> {
    let command = std::sync::Arc::new(command);
    let on_thread = std::sync::Arc::clone(&command);
    match std::thread::Builder::new()
        .name("stencilc".into())
        .stack_size(COMMAND_STACK_BYTES)
        .spawn(move || on_thread.execute())
    {
        Ok(handle) => handle.join().ok(),
        Err(_) => Some(command.execute()),
    }
}

/// A bug must not greet the user with a backtrace: say what happened, that it
/// is stencilc's fault, and what to report.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown cause".into());
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        // Never `eprintln!` here: it panics on a closed stderr, and a panic
        // inside the panic hook aborts.
        out::stderr_line(&format!(
            "error: internal error in stencilc: {what}{place}\n  = help: this is a bug in stencilc, not in your program; please report it with the command line and the program"
        ));
    }));
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_takes_every_documented_flag() {
        let cli = Cli::try_parse_from([
            "stencilc",
            "run",
            "p.sdsl",
            "--region",
            "1",
            "--set",
            "n=4",
            "--input",
            "a=a.npy",
            "--output",
            "a=b.png",
            "--backend",
            "opencl",
            "--block",
            "32,8",
            "--tile",
            "1,4",
            "--shm",
            "none",
            "--json",
            "-v",
        ]);
        assert!(cli.is_ok(), "{cli:?}");
        let bad = Cli::try_parse_from(["stencilc", "run", "p.sdsl", "--backend", "gpu"]);
        assert!(bad.unwrap_err().to_string().contains("possible values"));
    }
}
