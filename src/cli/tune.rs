//! `stencilc tune`: measures a program's schedules on a back-end and keeps the
//! fastest in the tuning database, where `stencilc run` finds it.
//!
//! The tuning itself is [`stencilc::tune::tuner`] (the space, its pruning and
//! the model's order in [`stencilc::tune::space`], measuring in
//! [`stencilc::tune::search`], the database in [`stencilc::tune::db`]).
//! This module reads the arguments, shows the
//! progress bar (the best so far), prints the result (the pragma line to
//! paste, or the C back-end's flags) and draws the plot.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use stencilc::exec::backend::Backend;
use stencilc::exec::options::RunOptions;
use stencilc::source::SourceFile;
use stencilc::tune::search::{self, Measurement, Outcome, Settings};
use stencilc::tune::space::{self, Space};
use stencilc::tune::tuner::{self, Event, Request};

use crate::cli::args::{parse_field_file, FieldFile, FmaArgs, ParamArgs, ProgramArgs};
use crate::cli::error::CliError;
use crate::cli::out::stderr_line;
use crate::cli::{inputs, params, program, run, tune_plot};

/// The back-ends `tune` takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TuneBackend {
    /// Generated C with OpenMP: tile sizes x time x threads.
    C,
    /// OpenCL: block x points per thread x time x staging (x fusion).
    Opencl,
    /// CUDA: block x points per thread x time x staging (x fusion).
    Cuda,
}

impl From<TuneBackend> for Backend {
    fn from(b: TuneBackend) -> Backend {
        match b {
            TuneBackend::C => Backend::C,
            TuneBackend::Opencl => Backend::OpenCl,
            TuneBackend::Cuda => Backend::Cuda,
        }
    }
}

/// Arguments of `stencilc tune`.
#[derive(Args, Debug)]
pub struct TuneArgs {
    #[command(flatten)]
    program: ProgramArgs,

    #[command(flatten)]
    params: ParamArgs,

    /// Initial values of a field (as for `run`); fields without one start at zero.
    #[arg(long = "input", value_name = "FIELD=FILE", value_parser = parse_field_file)]
    inputs: Vec<FieldFile>,

    /// The back-end to tune.
    #[arg(long, value_enum)]
    backend: TuneBackend,

    /// Start no new configuration after this many seconds [default: no limit].
    #[arg(long, value_name = "SECONDS")]
    budget: Option<f64>,

    /// Measure every configuration that can run (prune only what cannot).
    #[arg(long)]
    exhaustive: bool,

    /// The SDSL autotuner configuration file (guide ch. 6.2): its block, tile
    /// and time ranges replace the default space.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,

    /// Timed runs of each configuration after its warm-up; its time is their median.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    repeats: u32,

    /// Draws every configuration's time, best marked (`.svg` or `.png`).
    #[arg(long, value_name = "FILE.svg|FILE.png")]
    plot: Option<PathBuf>,

    /// Measures and reports without writing the tuning database.
    #[arg(long)]
    no_save: bool,

    #[command(flatten)]
    fma: FmaArgs,

    /// Prints a JSON report on stdout (no progress bar).
    #[arg(long)]
    json: bool,

    /// Prints each configuration's result on stderr.
    #[arg(short, long)]
    verbose: bool,
}

/// Runs the command.
pub fn run(args: &TuneArgs) -> Result<(), CliError> {
    let backend: Backend = args.backend.into();
    if let Some(b) = args.budget.filter(|b| !(b.is_finite() && *b > 0.0)) {
        return Err(CliError::new(
            format!("--budget {b} is not a positive number of seconds"),
            "give the search's time limit in seconds, e.g. --budget 60",
        ));
    }
    if let Some(path) = &args.plot {
        tune_plot::check_format(path)?;
    }
    let mut program = program::load(&args.program.program, args.program.region)?;
    let inputs = inputs::resolve(&program, &args.inputs)?;
    inputs::check(&program, &inputs)?;
    let values = inputs::values(&program, &args.params.sets, &inputs, &|_| {})?;
    params::bind_hint_values(&mut program, &args.params.sets, &values)?;
    let bindings = params::complete(&program, values)?;
    let env = stencilc::exec::bind(&program, &bindings)?;
    let initial = run::initial_state(&program, &env, &inputs)?;
    let base = RunOptions {
        fma: args.fma.fma,
        ..RunOptions::default()
    };

    let config = match &args.config {
        Some(path) => Some((path.display().to_string(), read_config(path)?)),
        None => None,
    };
    let request = Request {
        backend,
        base,
        config: config.as_ref().map(|(name, c)| (name.as_str(), c)),
        exhaustive: args.exhaustive,
        settings: Settings {
            repeats: args.repeats as usize,
            budget: args.budget.map(Duration::from_secs_f64),
            tolerant: args.fma.fma,
        },
        save: !args.no_save,
    };
    let say = |text: &str| {
        if !args.json {
            stderr_line(text);
        }
    };
    let mut bar: Option<ProgressBar> = None;
    let mut events = |event: Event<'_>| match event {
        Event::Space(space) => {
            if let Some((name, _)) = &config {
                say(&format!(
                    "note: `{name}`: the sdslc and nvcc flags lines change nothing here{}",
                    if backend == Backend::C {
                        "; for --backend c its space-tile lines are the CPU tile sizes and its \
                         block lines are unused"
                    } else {
                        ""
                    }
                ));
            }
            say(&describe_space(space, args.exhaustive));
            if !space.candidates.is_empty() {
                bar = Some(progress_bar(space.candidates.len(), args.json));
            }
        }
        Event::Measured(so_far) => {
            let Some(bar) = &bar else { return };
            let last = &so_far[so_far.len() - 1];
            if args.verbose {
                bar.suspend(|| stderr_line(&format!("tune: {}", describe_measurement(last))));
            }
            if let Some(best) = search::best_of(so_far) {
                let m = &so_far[best];
                bar.set_message(format!(
                    "best {:.3} ms: {}",
                    m.median.unwrap_or(0.0) * 1e3,
                    m.knobs.label()
                ));
            }
            bar.inc(1);
        }
    };
    let tuned = tuner::tune(&program, &env, &initial, &request, &mut events)
        .map_err(|e| CliError::new(e.message, e.help));
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let tuned = tuned?;
    for w in &tuned.warnings {
        stderr_line(&format!("warning: {w}"));
    }
    let winner = tuned.winner();
    let seconds = tuned.seconds();
    let outcomes = &tuned.outcomes;
    if let Some(path) = &args.plot {
        let title = format!("{} on {backend} ({})", program.name, tuned.device);
        if let Some(note) = tune_plot::plot(path, &title, &outcomes.measurements, Some(tuned.best))?
        {
            say(&format!("note: {note}"));
        }
    }

    if args.json {
        let text = serde_json::to_string_pretty(&tuned.json())
            .map_err(|e| CliError::new(e.to_string(), "report this bug"))?;
        return crate::cli::out::stdout_text(&format!("{text}\n"));
    }
    let measured = tuned.measured();
    let failed = outcomes.measurements.len() - measured;
    let first = outcomes
        .measurements
        .iter()
        .position(|m| m.median.is_some());
    let mut text = format!(
        "tune: measured {measured} configuration(s) in {:.1} s ({failed} failed or mismatched, {} left untried{})\n",
        outcomes.elapsed.as_secs_f64(),
        outcomes.untried,
        if outcomes.untried > 0 { ": budget spent" } else { "" }
    );
    text.push_str(&format!(
        "best: {} : {:.3} ms per run (median of {}){}\n",
        winner.knobs.label(),
        seconds * 1e3,
        args.repeats,
        first.map_or(String::new(), |at| compared_with_first(
            at == tuned.best,
            outcomes.measurements[at].median.unwrap_or(seconds),
            seconds
        ))
    ));
    text.push_str(&tuned.paste());
    if let Some(path) = &tuned.saved {
        text.push_str(&format!(
            "\nsaved in `{}`: `stencilc run --backend {backend}` with these parameter values uses it",
            path.display()
        ));
    }
    crate::cli::out::stdout_text(&format!("{text}\n"))
}

/// How the best compares with the first configuration measured (the model's
/// best prediction): `, 10.58x faster than ...`.
fn compared_with_first(is_first: bool, first: f64, best: f64) -> String {
    if is_first {
        return ", the first configuration measured (the best predicted)".into();
    }
    let ratio = first / best.max(1e-12);
    if ratio >= 1.0 {
        format!(", {ratio:.2}x faster than the first (best predicted) configuration")
    } else {
        format!(
            ", {:.2}x slower than the first (best predicted) configuration",
            1.0 / ratio.max(1e-12)
        )
    }
}

fn read_config(path: &std::path::Path) -> Result<stencilc::tune::config::TuneConfig, CliError> {
    // A configuration is parsed like a source file, so it is read as one.
    let text =
        stencilc::source::read_source(path, stencilc::source::MAX_SOURCE_BYTES).map_err(|e| {
            crate::cli::program::source_error(
                path,
                "the configuration",
                &e,
                "check the path given to --config",
            )
        })?;
    Ok(stencilc::tune::config::parse(SourceFile::new(
        path.display().to_string(),
        text,
    ))?)
}

fn describe_space(space: &Space, exhaustive: bool) -> String {
    let mut text = format!(
        "tune: {} configuration(s) in the space, {} pruned, {} to measure (best predicted first)",
        space.considered,
        space.pruned(),
        space.candidates.len()
    );
    for (reason, count) in &space.pruned_unrunnable {
        text.push_str(&format!("\n  {count} pruned: {reason}"));
    }
    if space.pruned_hopeless > 0 {
        text.push_str(&format!(
            "\n  {} pruned: predicted more than {}x the model's best ({:.1} us per iteration)",
            space.pruned_hopeless,
            space::HOPELESS,
            space.best_predicted.unwrap_or(0.0) * 1e6
        ));
    } else if !exhaustive {
        text.push_str("\n  none predicted hopeless by the model");
    }
    text
}

fn describe_measurement(m: &Measurement) -> String {
    match (&m.outcome, m.median) {
        (Outcome::Measured, Some(t)) => format!("{}: {:.3} ms", m.knobs.label(), t * 1e3),
        (Outcome::Failed(why), _) => format!("{}: failed: {why}", m.knobs.label()),
        (Outcome::Mismatch(why), _) => format!("{}: rejected: {why}", m.knobs.label()),
        _ => m.knobs.label(),
    }
}

/// The progress bar with the best so far; hidden when stderr is not a
/// terminal or with `--json`.
fn progress_bar(len: usize, json: bool) -> ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} {elapsed_precise} [{bar:30}] {pos}/{len} configurations, {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
