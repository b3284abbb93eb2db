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
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle, TermLike};
use stencilc::exec::backend::ProgressHook;

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
}

impl Progress {
    /// A progress line for `max` iterations. `counted` says whether the back-end
    /// reports iterations (the compiled C does not: the line then shows only the
    /// elapsed time).
    pub fn start(mode: Mode, max: u64, counted: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(max), ProgressDrawTarget::hidden());
        let template = if counted {
            "{spinner} {elapsed_precise} [{bar:30}] {human_pos}/{human_len} iterations, {per_sec}, ETA {eta}"
        } else {
            "{spinner} {elapsed_precise} running {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        if !counted {
            bar.set_message(format!(
                "{max} iteration(s) in compiled C (it reports no count until done)"
            ));
        }
        let terminal = std::io::stderr().is_terminal();
        match mode {
            Mode::Never => {}
            Mode::Always if terminal => show_on_terminal(&bar),
            Mode::Always => {
                bar.set_draw_target(ProgressDrawTarget::term_like_with_hz(
                    Box::new(LineLog::default()),
                    1,
                ));
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
        Progress { bar }
    }

    /// The hook for the back-end's options.
    pub fn hook(&self) -> ProgressHook {
        let bar = self.bar.clone();
        ProgressHook(Arc::new(move |done, _max| bar.set_position(done)))
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
        if std::io::stderr().is_terminal() {
            self.bar.finish_and_clear();
        } else {
            self.bar.finish();
        }
    }
}

fn show_on_terminal(bar: &ProgressBar) {
    bar.set_draw_target(ProgressDrawTarget::stderr());
    bar.enable_steady_tick(Duration::from_millis(200));
}

/// A "terminal" for a pipe or file: each drawing of the bar becomes one plain
/// line, with no cursor movement and no carriage returns.
#[derive(Debug, Default)]
struct LineLog {
    pending: Mutex<String>,
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
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.push_str(s.trim_start_matches('\r'));
        Ok(())
    }

    fn clear_line(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn flush(&self) -> std::io::Result<()> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let line = pending.trim_end().to_string();
        pending.clear();
        if !line.is_empty() {
            // A closed stderr is ignored like every other message.
            let _ = writeln!(std::io::stderr().lock(), "{line}");
        }
        Ok(())
    }
}
