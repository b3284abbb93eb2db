//! The threads that runs compute on: each with the command line's deep stack
//! ([`crate::DEEP_STACK_BYTES`]), kept between runs so that a run pays neither
//! a thread's creation nor a new thread's OpenMP set-up; two runs at once (from
//! two Python threads) take two workers. [`run_interruptibly`] runs a job on
//! one with the GIL released, Ctrl-C turning into `KeyboardInterrupt`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::prelude::*;

use crate::errors::RunError;

/// A piece of work; it sends its own result.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// Idle workers, each as the sender of its queue.
static IDLE: Mutex<Vec<Sender<Job>>> = Mutex::new(Vec::new());

/// Workers kept idle at most; more end after their run.
const MAX_IDLE: usize = 4;

fn idle() -> std::sync::MutexGuard<'static, Vec<Sender<Job>>> {
    // A panic never happens while the lock is held; take the list anyway.
    IDLE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs `job` on an idle worker, or on a new one; `false` if no thread could
/// be started.
pub fn submit(mut job: Job) -> bool {
    while let Some(worker) = idle().pop() {
        match worker.send(job) {
            Ok(()) => return true,
            // That worker has ended: try the next.
            Err(mpsc::SendError(back)) => job = back,
        }
    }
    let (queue, jobs) = mpsc::channel::<Job>();
    if queue.send(job).is_err() {
        return false;
    }
    std::thread::Builder::new()
        .name("stencilc-run".into())
        .stack_size(crate::DEEP_STACK_BYTES)
        .spawn(move || work(queue, jobs))
        .is_ok()
}

/// A worker's life: each job in turn, then back to the idle list (or the end,
/// when enough are idle). A job that panics has its result channel dropped,
/// which its caller reads as an internal error; the worker goes on.
fn work(queue: Sender<Job>, jobs: Receiver<Job>) {
    while let Ok(job) = jobs.recv() {
        let _ = catch_unwind(AssertUnwindSafe(job));
        let mut idle = idle();
        if idle.len() >= MAX_IDLE {
            return;
        }
        idle.push(queue.clone());
    }
}

/// How often the waiting thread looks for a signal (Ctrl-C) while a job runs.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Runs `job` on a worker with the GIL released, and waits for it; returns
/// its result and the exception a signal handler raised meanwhile, if any.
///
/// Why polling: a signal handler runs only in the main thread while it holds
/// the GIL, and a Rust thread waiting on a channel never gives it the chance.
/// So every [`SIGNAL_POLL`] the waiting thread takes the GIL for
/// `check_signals` (cheap: a flag test when no signal came); a Ctrl-C (or any
/// handler that raises) sets `stop`, which the back-ends read between
/// iterations (the C back-end through the flag its compiled loop polls), and
/// the caller raises the handler's exception once the job has returned. Chaining
/// a SIGINT handler of our own instead would fight Python's (and the user's).
/// A job that panicked, or no thread to run it on, is a `RunError`.
pub fn run_interruptibly<T: Send + 'static>(
    py: Python<'_>,
    stop: &Arc<AtomicBool>,
    job: impl FnOnce() -> T + Send + 'static,
) -> PyResult<(T, Option<PyErr>)> {
    let (finished, result) = mpsc::channel();
    let job: Job = Box::new(move || {
        let _ = finished.send(job());
    });
    let mut interrupt: Option<PyErr> = None;
    let interrupted = &mut interrupt;
    let ran = py.allow_threads(move || {
        if !submit(job) {
            return None;
        }
        loop {
            match result.recv_timeout(SIGNAL_POLL) {
                Ok(done) => return Some(done),
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if interrupted.is_none() {
                        if let Err(error) = Python::with_gil(|py| py.check_signals()) {
                            *interrupted = Some(error);
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
                // The job panicked.
                Err(mpsc::RecvTimeoutError::Disconnected) => return None,
            }
        }
    });
    let done = ran.ok_or_else(|| {
        RunError::new_err(
            "internal error in stencilc while running the program (or no thread could be \
             started for it); please report it with the program",
        )
    })?;
    Ok((done, interrupt))
}
