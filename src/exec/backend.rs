//! Choosing and running a back-end: `--backend interp|c|opencl|cuda|auto`.
//!
//! `auto` tries the fastest back-end first (CUDA, then an OpenCL GPU, then native
//! C, then the interpreter) and moves on with a one-line notice when one is
//! unavailable here. Every back-end runs the same program on the same state.

use std::fmt;
use std::io::Write as _;

use crate::data::{ExecError, FieldState, RunSummary};
use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::schedule::{Schedule, ScheduleRequest, ShmRequest};

use crate::exec::options::RunOptions;

/// A back-end the user can ask for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// The reference interpreter.
    Interp,
    /// Generated C with OpenMP, compiled and loaded at run time.
    C,
    /// Generated OpenCL C on any OpenCL platform.
    OpenCl,
    /// Generated CUDA C through NVRTC and the driver API.
    Cuda,
    /// The fastest available.
    Auto,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Interp => "interp",
            Backend::C => "c",
            Backend::OpenCl => "opencl",
            Backend::Cuda => "cuda",
            Backend::Auto => "auto",
        })
    }
}

impl RunOptions {
    /// The schedule request these options carry (`--block`, `--tile`, `--shm`,
    /// `--fuse`, `--index64`).
    pub fn schedule_request(&self) -> ScheduleRequest {
        ScheduleRequest {
            block: self.block.clone(),
            tile: self.tile.clone(),
            vector: self.vector,
            shm: self
                .shm
                .as_deref()
                .map(ShmRequest::parse)
                .unwrap_or_default(),
            tables: None,
            fuse: self.fuse,
            results: self.results.clone(),
            wide_indices: self.index64,
            time_steps: self.time,
            fma: self.fma,
            min_blocks_per_sm: self.min_blocks,
            ptxas_rank: self.ptxas_rank,
        }
    }

    /// The schedule these options ask for: what `--block`, `--tile`, `--shm`,
    /// `--fuse` and the region's pragma fix, the rest chosen by the model for
    /// `device` ([`crate::driver::choose_gpu`]). Under `--verbose` the schedule's
    /// notes (refused fusions, say) and the model's reasons go to stderr.
    pub fn schedule(
        &self,
        program: &Program,
        env: &RunEnv,
        target: crate::lower::Target,
        device: &crate::model::Device,
    ) -> Result<Schedule, ExecError> {
        let request = self.schedule_request();
        // A pragma option naming a value that was not given is shown with its
        // line and a caret.
        crate::schedule::hinted_shape(program, &request).map_err(|d| {
            ExecError::Located(crate::diag::Diagnostics::new(
                program.source.clone(),
                vec![d],
            ))
        })?;
        let registers: crate::model::rank::Registers<'_> =
            &crate::exec::cuda::nvrtc::ptxas_registers;
        let choice = crate::driver::choose_gpu(
            program,
            &request,
            Some(env),
            target,
            device,
            Some(registers),
        )
        .map_err(|e| ExecError::Failed(e.to_string()))?;
        // What was clamped about time tiling, or why it was not applied,
        // is said whether or not --verbose (not under `quiet`).
        if !self.quiet {
            for note in &choice.schedule.time_notes {
                let _ = writeln!(std::io::stderr(), "stencilc: note: {note}");
            }
        }
        if self.verbose {
            for note in choice.schedule.notes.iter().chain(&choice.reasons) {
                // Not `eprintln!`, which panics on a closed stderr.
                let _ = writeln!(std::io::stderr(), "stencilc: {note}");
            }
        }
        Ok(choice.schedule)
    }
}

/// Runs `program` on `state` with the chosen back-end; returns the summary and the
/// back-end that actually ran. `notice` receives one-line messages (e.g. why
/// `auto` skipped a back-end).
pub fn run(
    backend: Backend,
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    options: &RunOptions,
    notice: &mut dyn FnMut(&str),
) -> Result<(RunSummary, Backend), ExecError> {
    if let (Some(read_in_place), Backend::Cuda | Backend::OpenCl | Backend::Auto) =
        (&options.read_in_place, backend)
    {
        read_in_place.copy_into(state);
        let copied = RunOptions {
            read_in_place: None,
            ..options.clone()
        };
        return run(backend, program, env, state, &copied, notice);
    }
    match backend {
        Backend::Cuda => {
            crate::exec::cuda::run(program, env, state, options).map(|s| (s, Backend::Cuda))
        }
        Backend::OpenCl => {
            crate::exec::opencl::run(program, env, state, options).map(|s| (s, Backend::OpenCl))
        }
        Backend::C => {
            crate::exec::native::run(program, env, state, options, notice).map(|s| (s, Backend::C))
        }
        Backend::Auto => {
            match crate::exec::cuda::run(program, env, state, options) {
                Err(ExecError::Unavailable(why)) => notice(&format!("auto: skipping cuda: {why}")),
                other => return other.map(|s| (s, Backend::Cuda)),
            }
            match crate::exec::opencl::probe() {
                Ok((_, true)) => match crate::exec::opencl::run(program, env, state, options) {
                    Err(ExecError::Unavailable(why)) => {
                        notice(&format!("auto: skipping opencl: {why}"))
                    }
                    other => return other.map(|s| (s, Backend::OpenCl)),
                },
                Ok((name, false)) => {
                    notice(&format!("auto: skipping opencl: `{name}` is not a GPU"))
                }
                Err(why) => notice(&format!("auto: skipping opencl: {why}")),
            }
            match crate::exec::native::run(program, env, state, options, notice) {
                Err(ExecError::Unavailable(why)) => {
                    notice(&format!("auto: skipping c: {why}; running the interpreter"))
                }
                other => return other.map(|s| (s, Backend::C)),
            }
            crate::interp::run_observed(program, env, state, options.progress.as_ref())
                .map(|s| (s, Backend::Interp))
        }
        Backend::Interp => crate::interp::run_in_place(
            program,
            env,
            state,
            options.progress.as_ref(),
            options.read_in_place.as_ref(),
        )
        .map(|s| (s, Backend::Interp)),
    }
}
