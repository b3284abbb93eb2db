//! The threads that runs compute on: each with the command line's deep stack
//! ([`crate::DEEP_STACK_BYTES`]), kept between runs so that a run pays neither
//! a thread's creation nor a new thread's OpenMP set-up; two runs at once (from
//! two Python threads) take two workers.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Mutex;

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
