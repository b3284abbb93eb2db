//! Choosing and running a back-end: `--backend interp|c|opencl|cuda|auto`.
//!
//! `auto` tries the fastest back-end first (CUDA, then an OpenCL GPU, then native
//! C, then the interpreter) and moves on with a one-line notice when one is
//! unavailable here. Every back-end runs the same program on the same state.

use std::fmt;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::exec::{ExecError, FieldState, RunSummary};
use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::schedule::{Schedule, ScheduleRequest, ShmRequest};

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

/// How to run, as the user asked on the command line or in the region's pragma.
/// Back-ends read what concerns them and ignore the rest.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// `--block x,y,z`: threads per block, innermost axis first.
    pub block: Option<Vec<u32>>,
    /// `--tile x,y,z`: points per thread, innermost axis first.
    pub tile: Option<Vec<u32>>,
    /// `--vector W`: consecutive points per thread along x, read and written
    /// as one vector access ([`crate::schedule::StencilSchedule::vector`]).
    pub vector: Option<u32>,
    /// `--shm FIELD,...|none|auto`.
    pub shm: Option<String>,
    /// `--fuse`: fuse consecutive stencils into one GPU kernel where legal.
    pub fuse: bool,
    /// `--results`: the fields read after the run (`None`: every field); see
    /// [`ScheduleRequest::results`].
    pub results: Option<Vec<String>>,
    /// `--index64`: 64-bit flattened indices in the GPU kernels whatever the
    /// grid sizes (chosen anyway for grids of more than 2^31 - 1 points).
    pub index64: bool,
    /// `--fma`: let every compiler contract `a * b + c` into a fused
    /// multiply-add (NVRTC `--fmad=true`, OpenCL `-cl-mad-enable`, C
    /// `-ffp-contract=fast`); results then differ from the interpreter's in
    /// the last bits.
    pub fma: bool,
    /// `--min-blocks N`: CUDA kernels declare `__launch_bounds__(threads, N)`
    /// ([`ScheduleRequest::min_blocks_per_sm`]).
    pub min_blocks: Option<u32>,
    /// `--ptxas-rank K` ([`ScheduleRequest::ptxas_rank`]).
    pub ptxas_rank: Option<u32>,
    /// `--time T`: time steps advanced per launch (GPU) or per tile sweep (C)
    /// by time tiling; `None` leaves it to the pragma, then to the heuristic.
    pub time: Option<u32>,
    /// `--cpu-tile x,y,z`: the C back-end's tile sizes in points, innermost
    /// axis first; `None` leaves them to the heuristic.
    pub cpu_tile: Option<Vec<u32>>,
    /// `--threads N`: OpenMP threads of the C back-end (`None`: OpenMP's
    /// default, which `OMP_NUM_THREADS` sets).
    pub threads: Option<u32>,
    /// `--cpu-order levels|wavefront`: the order of a C time tile's inner
    /// steps; `None` leaves it to the model.
    pub cpu_order: Option<crate::analysis::tile::TileOrder>,
    /// Extra or replacement C compiler flags for the native back-end.
    pub cflags: Option<String>,
    /// Allow `-ffast-math` in the native back-end.
    pub fast_math: bool,
    /// Print progress (compilation, cache hits) to stderr.
    pub verbose: bool,
    /// Print no `note:` lines (`run -q`, and the tuner's candidates, which
    /// would repeat one per candidate).
    pub quiet: bool,
    /// Told after each iteration of the iterate loop by the back-ends that run
    /// the loop on the host (the interpreter, OpenCL, CUDA); the compiled C runs
    /// its loop inside the kernel and tells nothing.
    pub progress: Option<ProgressHook>,
    /// The C back-end's loaded kernels of this program, kept between runs
    /// by a caller that runs it often (see [`KernelCache`]); `None` prints,
    /// hashes and finds the kernel in the on-disk cache on every run.
    ///
    /// [`KernelCache`]: crate::exec::native::KernelCache
    pub kernels: Option<crate::exec::native::KernelCache>,
    /// Inputs the interpreter and the C back-end read in the caller's memory
    /// (fields no stencil writes); the other back-ends, and `auto`, copy them
    /// into the state first.
    pub read_in_place: Option<crate::exec::ReadInPlace>,
}

/// A function called with (iterations done, the iterate's maximum) after each
/// iteration. It runs on the thread that runs the loop, so it must be cheap.
/// With a stop flag ([`ProgressHook::with_stop`]), the loop ends with
/// [`ExecError::Interrupted`] after the iteration during which the flag was set
/// (how the Python package turns Ctrl-C into `KeyboardInterrupt`).
#[derive(Clone)]
pub struct ProgressHook {
    tell: Arc<dyn Fn(u64, u64) + Send + Sync>,
    stop: Option<Arc<AtomicBool>>,
}

impl ProgressHook {
    /// A hook calling `tell(done, max)` after each iteration.
    pub fn new(tell: impl Fn(u64, u64) + Send + Sync + 'static) -> ProgressHook {
        ProgressHook {
            tell: Arc::new(tell),
            stop: None,
        }
    }

    /// This hook, also ending the run between iterations once `stop` is set.
    pub fn with_stop(mut self, stop: Arc<AtomicBool>) -> ProgressHook {
        self.stop = Some(stop);
        self
    }

    /// The stop flag, for loops that poll it themselves (the C back-end's
    /// compiled loop reads it between iterations).
    pub fn stop_flag(&self) -> Option<&AtomicBool> {
        self.stop.as_deref()
    }

    /// Reports that `done` of `max` iterations have run; an error if the stop
    /// flag is set, which the loop returns as it is.
    pub fn tell(&self, done: u64, max: u64) -> Result<(), ExecError> {
        (self.tell)(done, max);
        match &self.stop {
            Some(stop) if stop.load(Ordering::Relaxed) => Err(ExecError::Interrupted(done)),
            _ => Ok(()),
        }
    }
}

impl fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressHook")
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
            crate::exec::interp::run_observed(program, env, state, options.progress.as_ref())
                .map(|s| (s, Backend::Interp))
        }
        Backend::Interp => crate::exec::interp::run_in_place(
            program,
            env,
            state,
            options.progress.as_ref(),
            options.read_in_place.as_ref(),
        )
        .map(|s| (s, Backend::Interp)),
    }
}
