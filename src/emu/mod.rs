//! The CUDA emulator: runs a checked kernel of the CUDA subset
//! ([`crate::front::cuda`]) for a grid, a block and arguments on the CPU.
//!
//! Each thread is a resumable interpreter of the kernel's compiled code
//! ([`compile`]): the threads of a block take turns statement by statement (as
//! a block's warps would, roughly in step) and wait at `__syncthreads()` until
//! every thread of the block has arrived. It reports, with their source line,
//! out-of-bounds global and shared accesses, barriers that some threads reach
//! and others do not (or reach at different places), and shared-memory races:
//! two threads touching one slot between two barriers with at least one of
//! them writing. Step and thread limits make a runaway kernel an error.
//!
//! Warp shuffles (`__shfl_down_sync` and the like) run in warp lockstep: the
//! threads of a block form warps of 32 consecutive linear thread indices, as
//! on CUDA; a lane that reaches a shuffle waits there until every lane of the
//! mask that has not finished has reached the same shuffle, then all of them
//! exchange the values given at that moment. A lane of the mask that waits
//! elsewhere (a barrier, another shuffle) while the others wait here, or a
//! source lane that takes no part (outside the mask, finished, or beyond a
//! block smaller than a warp: CUDA leaves such a result undefined), is a
//! [`FindingKind::Shuffle`].
//! For KaniCUDA's marked reads it records the profile the synthesizer learns
//! from ([`crate::synth::table::AccessProfile`]).

pub mod args;
pub mod compile;
mod machine;
pub mod value;

use crate::diag::Diagnostic;
use crate::front::cuda::ast::Kernel;
use crate::source::Span;
use crate::synth::table::AccessProfile;

pub use value::Value;

/// A kernel argument, in the order of the parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A scalar parameter's value (converted to its type).
    Scalar(Value),
    /// A pointer parameter's device array (elements converted to its type).
    Array(Vec<Value>),
}

/// Grid and block sizes, `x, y, z`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Blocks along x, y, z.
    pub grid: [u32; 3],
    /// Threads per block along x, y, z.
    pub block: [u32; 3],
}

/// Bounds that make a runaway kernel an error.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Operations executed by all threads together.
    pub max_steps: u64,
    /// Threads in the whole grid.
    pub max_threads: u64,
    /// Problems reported before the run stops.
    pub max_findings: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_steps: 500_000_000,
            max_threads: 1 << 22,
            max_findings: 20,
        }
    }
}

/// What kind of problem the emulator found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindingKind {
    /// Two threads touched one shared slot between two barriers, one writing.
    Race,
    /// An index outside a global or shared array (stops the run).
    OutOfBounds,
    /// A barrier some threads reach and others do not, or reach at different
    /// places (stops the run).
    Barrier,
    /// A warp shuffle that a lane of its mask never reaches (it waits at
    /// another shuffle or a barrier), or that reads a lane that takes no part
    /// (outside the mask, finished, or beyond the block) (stops the run).
    Shuffle,
    /// Integer division by zero, or a shift by a negative amount or by at
    /// least the shifted type's width (stops the run).
    Arithmetic,
    /// The step limit was reached (stops the run).
    Runaway,
}

/// One problem, located in the kernel's source.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// What kind.
    pub kind: FindingKind,
    /// What happened, naming threads, blocks and indices.
    pub message: String,
    /// Where.
    pub span: Span,
    /// The other access of a race, or the other barrier.
    pub other: Option<(Span, String)>,
    /// What to change.
    pub help: String,
}

impl Finding {
    /// The finding as a diagnostic (with file:line:col, the line and a caret).
    pub fn to_diagnostic(&self) -> Diagnostic {
        let mut diag =
            Diagnostic::error(self.message.clone(), self.span).with_help(self.help.clone());
        if let Some((span, label)) = &self.other {
            diag = diag.with_secondary(*span, label.clone());
        }
        diag
    }
}

/// What a run found and computed.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Problems, in the order found; a finding of a kind other than
    /// [`FindingKind::Race`] ends the run.
    pub findings: Vec<Finding>,
    /// One profile per marked read, in source order.
    pub profiles: Vec<AccessProfile>,
    /// Operations executed.
    pub steps: u64,
}

impl Report {
    /// Whether the run found nothing wrong.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }
}

/// A call the emulator refuses before running the kernel: its arguments or
/// its launch do not fit the kernel, CUDA or the emulator's limits.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// Another number of arguments than the kernel has parameters.
    #[error("kernel `{kernel}` takes {} arguments ({}), given {given}", params.len(), params.join(", "))]
    ArgumentCount {
        /// The kernel.
        kernel: String,
        /// Its parameters' names.
        params: Vec<String>,
        /// How many arguments were given.
        given: usize,
    },
    /// A grid or block size of 0.
    #[error("grid and block sizes must be at least 1 along each axis")]
    EmptyLaunch,
    /// A block larger than CUDA allows.
    #[error(
        "a block of {}x{}x{} threads is more than CUDA allows (1024 threads, at most 64 along z)",
        block[0], block[1], block[2]
    )]
    BlockTooLarge {
        /// The block's threads per axis.
        block: [u32; 3],
    },
    /// A block larger than the kernel's `__launch_bounds__`.
    #[error("a block of {threads} threads exceeds the kernel's __launch_bounds__({bound})")]
    LaunchBounds {
        /// The block's threads.
        threads: u64,
        /// The kernel's bound.
        bound: u64,
    },
    /// More threads in all than the emulator runs.
    #[error(
        "{threads} threads in all is more than the emulator's limit of {limit}; use a smaller grid"
    )]
    TooManyThreads {
        /// The launch's threads.
        threads: u64,
        /// The emulator's limit.
        limit: u64,
    },
    /// A scalar given for a pointer parameter.
    #[error("parameter `{0}` is a pointer: give it an array")]
    ArrayExpected(String),
    /// An array given for a scalar parameter.
    #[error("parameter `{0}` is a scalar: give it a value")]
    ScalarExpected(String),
}

/// Runs `kernel` on `args` (updated in place: arrays hold the results).
/// `Err` is a problem with the call itself (wrong arguments, too many threads);
/// problems of the kernel are in the [`Report`].
pub fn run(
    kernel: &Kernel,
    launch: Launch,
    args: &mut [Arg],
    limits: Limits,
) -> Result<Report, CallError> {
    machine::run(kernel, launch, args, limits)
}
