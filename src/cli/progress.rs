//! The progress line of `stencilc run` on stderr: iterations done of the
//! maximum, their rate and the time left.
//!
//! By default it appears only on a terminal, and only once a run has taken
//! about a second, so that short runs and pipelines stay quiet; `--progress`
//! forces it (on a pipe or file it is a plain line about once a second instead
//! of a redrawn one) and `--quiet` suppresses it. The back-ends know nothing of
//! it: they call the [`ProgressHook`] of their options after each iteration.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use stencilc::exec::options::ProgressHook;

/// When the progress line is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// On a terminal, once the run has taken [`DELAY`].
    Auto,
    /// Always (`--progress`).
    Always,
    /// Never (`--quiet`).
    Never,
}

/// How long a run goes before the progress line appears in [`Mode::Auto`].
pub const DELAY: Duration = Duration::from_secs(1);

/// The progress line of one run.
pub struct Progress {
    bar: ProgressBar,
    /// The log the bar is drawn to on a pipe or file (`--progress`).
    log: Option<LineLog>,
}

impl Progress {
    /// A progress line for `max` iterations. `counted` says whether the back-end
    /// reports iterations (the compiled C does not: the line then shows only the
    /// elapsed time).
    pub fn start(mode: Mode, max: u64, counted: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(max), ProgressDrawTarget::hidden());
        let terminal = std::io::stderr().is_terminal();
        let template = match (counted, terminal) {
            (true, true) => "{spinner} {elapsed_precise} [{bar:30}] {human_pos}/{human_len} iterations, {per_sec}, ETA {eta}",
            (true, false) => "progress: {elapsed_precise} {human_pos}/{human_len} iterations, {per_sec}, ETA {eta}",
            (false, true) => "{spinner} {elapsed_precise} running {msg}",
            (false, false) => "progress: {elapsed_precise} running {msg}",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        if !counted {
            bar.set_message(format!(
                "{max} iteration(s) in compiled C (it reports no count until done)"
            ));
        }
        let mut log = None;
        match mode {
            Mode::Never => {}
            Mode::Always if terminal => show_on_terminal(&bar),
            Mode::Always => {
                let lines = LineLog::default();
                bar.set_draw_target(ProgressDrawTarget::term_like(Box::new(lines.clone())));
                log = Some(lines);
            }
            Mode::Auto if terminal => {
                let later = bar.clone();
                // Detached: it ends after the delay, or the process ends first.
                let _ = std::thread::Builder::new()
                    .name("stencilc-progress".into())
                    .spawn(move || {
                        std::thread::sleep(DELAY);
                        if !later.is_finished() {
                            show_on_terminal(&later);
                        }
                    });
            }
            Mode::Auto => {}
        }
        Progress { bar, log }
    }

    /// The hook for the back-end's options.
    pub fn hook(&self) -> ProgressHook {
        let bar = self.bar.clone();
        ProgressHook::new(move |done, _max| bar.set_position(done))
    }

    /// Prints a line on stderr without garbling the progress line.
    pub fn println(&self, text: &str) {
        self.bar.suspend(|| crate::cli::out::stderr_line(text));
    }

    /// Ends the line: a terminal's is erased, a log's last line stays.
    pub fn finish(self) {
        if self.bar.is_hidden() {
            return;
        }
        match &self.log {
            Some(log) => {
                // Not `finish`, which would show every iteration done when the
                // check stopped the iterate early.
                self.bar.abandon();
                log.flush_last();
            }
            None => self.bar.finish_and_clear(),
        }
    }
}

fn show_on_terminal(bar: &ProgressBar) {
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar.enable_steady_tick(Duration::from_millis(200));
}

/// A "terminal" for a pipe or file: each drawing of the bar becomes one plain
/// line, with no cursor movement and no carriage returns, at most one a
/// [`LOG_INTERVAL`]; [`LineLog::flush_last`] prints the final state.
#[derive(Clone, Debug, Default)]
struct LineLog(Arc<Mutex<LogState>>);

/// How often a logged progress line is written.
const LOG_INTERVAL: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
struct LogState {
    /// The line being drawn.
    drawing: String,
    /// The last line drawn and not written (held back by the interval).
    held: Option<String>,
    /// When the last line was written.
    written: Option<Instant>,
}

impl LineLog {
    fn state(&self) -> std::sync::MutexGuard<'_, LogState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Writes the last line drawn if the interval held it back.
    fn flush_last(&self) {
        if let Some(line) = self.state().held.take() {
            write_stderr_line(&line);
        }
    }
}

/// A closed stderr is ignored like every other message.
fn write_stderr_line(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

impl TermLike for LineLog {
    fn width(&self) -> u16 {
        100
    }

    fn move_cursor_up(&self, _n: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_down(&self, _n: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_right(&self, _n: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn move_cursor_left(&self, _n: usize) -> std::io::Result<()> {
        Ok(())
    }

    fn write_line(&self, s: &str) -> std::io::Result<()> {
        self.write_str(s)?;
        self.flush()
    }

    fn write_str(&self, s: &str) -> std::io::Result<()> {
        self.state().drawing.push_str(s.trim_start_matches('\r'));
        Ok(())
    }

    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn flush(&self) -> std::io::Result<()> {
        let mut state = self.state();
        let line = state.drawing.trim_end().to_string();
        state.drawing.clear();
        if line.is_empty() {
            return Ok(());
        }
        if state.written.is_some_and(|t| t.elapsed() < LOG_INTERVAL) {
            state.held = Some(line);
        } else {
            state.written = Some(Instant::now());
            state.held = None;
            drop(state);
            write_stderr_line(&line);
        }
        Ok(())
    }
}
