//! The progress hook: told after each iteration by the executors that run
//! the iterate loop on the host, and able to stop the run between iterations.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::data::ExecError;

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
