//! Writing to stdout and stderr when either may be closed (`stencilc emit | head
//! -1`, `stencilc run ... 2>&1 | head -1`), and ending on SIGINT or SIGTERM.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe fails with `BrokenPipe`
//! instead of killing the process; `println!` and `eprintln!` would panic on that
//! failure, and a panic whose hook writes to a closed stderr aborts. Here:
//!
//! - messages on stderr are written with [`stderr_line`], which ignores failures
//!   (there is nobody left to tell);
//! - results on stdout go through [`stdout_text`]: a closed stdout becomes
//!   [`CliError::ClosedStdout`], which ends the command quietly with status 141
//!   (128 + SIGPIPE, what a shell reports for a program killed by a closed pipe);
//! - clap's `--help` and `--version` text is printed by clap, and its write
//!   failure goes through [`stdout_failure`] like every other;
//! - SIGINT and SIGTERM delete the temporary files of outputs not yet written
//!   and kill the children still running
//!   ([`stencilc::files::cleanup::clean_up_for_exit`]), and exit with 130 and 143.

use std::io::{ErrorKind, Write};

use crate::cli::error::CliError;

/// The exit status of a command whose stdout was closed: 128 + SIGPIPE.
pub const CLOSED_STDOUT_STATUS: u8 = 128 + 13;

/// Writes `text` and a newline to stderr, ignoring a closed or failing stderr.
pub fn stderr_line(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.write_all(b"\n"));
}

/// Writes `text` to stdout and flushes it. A closed stdout is
/// [`CliError::ClosedStdout`]; any other failure is an error that says so.
pub fn stdout_text(text: &str) -> Result<(), CliError> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(stdout_failure)
}

/// The error for a failed write to stdout: [`CliError::ClosedStdout`] for a
/// closed pipe, otherwise (a full disk, `/dev/full`, a revoked terminal) an
/// error that names standard output and the cause.
pub fn stdout_failure(e: std::io::Error) -> CliError {
    if e.kind() == ErrorKind::BrokenPipe {
        return CliError::ClosedStdout;
    }
    CliError::new(
        format!("cannot write to standard output: {e}"),
        "write to a file with shell redirection (`> FILE`) or give an output file",
    )
}

/// On SIGINT or SIGTERM: deletes the temporary files of pending outputs, says
/// so, and exits with 128 + the signal's number (130, 143) without running
/// destructors or `atexit` handlers (other threads may be inside a kernel).
pub fn end_on_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("stencilc-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                let removed = stencilc::files::cleanup::clean_up_for_exit();
                let name = if signal == SIGINT {
                    "interrupted"
                } else {
                    "terminated"
                };
                let what = if removed == 0 {
                    String::new()
                } else {
                    format!("; no output written ({removed} temporary file(s) removed)")
                };
                stderr_line(&format!("stencilc: {name}{what}"));
                signal_hook::low_level::exit(128 + signal);
            }
        });
    // A thread that cannot be started leaves the signals handled by nobody;
    // that cannot happen at start-up short of running out of memory.
    drop(spawned);
}
