//! What a run of any executor returns: its summary and phase times, or why it
//! failed.

use std::time::Duration;

use serde::Serialize;

use crate::diag::Diagnostics;
use crate::ir::Value;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A problem located in the program's source (an access outside the grid once
    /// parameter values are known, say); rendered with file:line:col and a caret.
    #[error("{0}")]
    Located(#[from] Diagnostics),
    /// The back-end cannot run here (no C compiler, no OpenCL platform, no GPU,
    /// NVRTC missing); `--backend auto` moves on to the next back-end.
    #[error("{0}")]
    Unavailable(String),
    /// Any other run-time error, as a sentence that says what to do.
    #[error("{0}")]
    Failed(String),
    /// The run was stopped from outside between iterations (a stop flag set
    /// through [`ProgressHook::with_stop`](crate::data::ProgressHook::with_stop)), after this many.
    #[error("interrupted after {0} iteration(s)")]
    Interrupted(u64),
}

/// Wall-clock time spent in each phase of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhaseTimes {
    /// Translating and compiling generated code (zero for the interpreter; zero
    /// on a cache hit except for loading).
    #[serde(serialize_with = "secs")]
    pub compile: Duration,
    /// Host-to-device transfers.
    #[serde(serialize_with = "secs")]
    pub upload: Duration,
    /// The iterate itself (on a GPU: kernel time measured with events).
    #[serde(serialize_with = "secs")]
    pub compute: Duration,
    /// Device-to-host transfers.
    #[serde(serialize_with = "secs")]
    pub download: Duration,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    /// Iterations executed.
    pub iterations: u64,
    /// Whether the check clause ended the iterate before its maximum.
    pub stopped_by_check: bool,
    /// The last evaluated value of each reduction (`None` if never evaluated).
    pub reductions: Vec<(String, Option<Value>)>,
    /// Time per phase.
    pub times: PhaseTimes,
}
