//! `stencilc tune`: measures a program's schedules on a back-end and keeps the
//! fastest in the tuning database, where `stencilc run` finds it.
//!
//! The space, its pruning and the model's order are [`stencilc::tune::space`];
//! measuring is [`stencilc::tune::search`]; the database
//! [`stencilc::tune::db`]. This module reads the arguments, shows the
//! progress bar (the best so far), prints the result (the pragma line to
//! paste, or the C back-end's flags) and draws the plot.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use stencilc::exec::backend::{Backend, RunOptions};
use stencilc::lower::Target;
use stencilc::source::SourceFile;
use stencilc::tune::cpu_model::Machine;
use stencilc::tune::db::{self, Database, Entry, Key};
use stencilc::tune::search::{self, Measurement, Outcome, Settings};
use stencilc::tune::space::{self, Family, Space};

use crate::cli::args::{parse_field_file, FieldFile, FmaArgs, ParamArgs, ProgramArgs};
use crate::cli::error::CliError;
use crate::cli::out::stderr_line;
use crate::cli::{params, program, run, tune_plot};

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
    let inputs = run::resolve_fields(&program, &args.inputs, "--input")?;
    let mut values = params::parse_sets(&program, &args.params.sets)?;
    let input_paths: Vec<_> = inputs.iter().map(|(f, p)| (*f, p.as_path())).collect();
    params::infer_grid_sizes(&program, &mut values, &input_paths)?;
    params::bind_hint_values(&mut program, &args.params.sets, &values)?;
    let bindings = params::complete(&program, values)?;
    let env = stencilc::exec::bind(&program, &bindings)?;
    let initial = run::initial_state(&program, &env, &inputs)?;
    let base = RunOptions {
        fma: args.fma.fma,
        ..RunOptions::default()
    };

    let machine = Machine::here();
    let (device_name, compiler) = db::identity(backend, &base);
    let gpu_device = match backend {
        Backend::Cuda => stencilc::model::predict::preset_for_name(&device_name)
            .unwrap_or_else(stencilc::model::Device::default_device),
        _ => stencilc::model::Device::default_device(),
    };
    let family = match backend {
        Backend::C => Family::Cpu(machine),
        Backend::Cuda => Family::Gpu(Target::Cuda, gpu_device),
        _ => Family::Gpu(Target::OpenCl, gpu_device),
    };
    let rank = space::rank(&program);
    let ranges = match &args.config {
        Some(path) => {
            let config = read_config(path)?;
            if config.dims() != rank {
                return Err(CliError::new(
                    format!(
                        "`{}` describes {} space dimension(s), but `{}` is {rank}-D",
                        path.display(),
                        config.dims(),
                        program.name
                    ),
                    format!(
                        "write {rank} in its dimensions line and give {rank} block and {rank} tile lines"
                    ),
                ));
            }
            if !args.json {
                stderr_line(&format!(
                    "note: `{}`: the sdslc and nvcc flags lines change nothing here{}",
                    path.display(),
                    if backend == Backend::C {
                        "; for --backend c its space-tile lines are the CPU tile sizes and its \
                         block lines are unused"
                    } else {
                        ""
                    }
                ));
            }
            space::config_ranges(&config, backend, &machine)
        }
        None => space::default_ranges(&program, backend, rank, &machine),
    };
    let space = space::build_space(&program, &env, family, &ranges, &base, args.exhaustive);
    let say = |text: &str| {
        if !args.json {
            stderr_line(text);
        }
    };
    say(&describe_space(&space, args.exhaustive));
    if space.candidates.is_empty() {
        return Err(CliError::new(
            "no configuration of the space can run",
            "widen the ranges (--config) or check the reasons above",
        ));
    }

    let bar = progress_bar(space.candidates.len(), args.json);
    let settings = Settings {
        repeats: args.repeats as usize,
        budget: args.budget.map(Duration::from_secs_f64),
        tolerant: args.fma.fma,
    };
    let mut tried = |so_far: &[Measurement]| {
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
    };
    let outcomes = search::measure(
        &program,
        &env,
        &initial,
        backend,
        &base,
        &space.candidates,
        &settings,
        &mut tried,
    );
    bar.finish_and_clear();

    let best = outcomes.best();
    let Some(best_index) = best else {
        let first = outcomes
            .measurements
            .iter()
            .find_map(|m| match &m.outcome {
                Outcome::Failed(why) | Outcome::Mismatch(why) => Some(why.clone()),
                Outcome::Measured => None,
            })
            .unwrap_or_else(|| "the budget ended before any ran".into());
        return Err(CliError::new(
            format!("no configuration ran: {first}"),
            "check that the back-end runs the program (`stencilc run --backend ...`), or give a larger --budget",
        ));
    };
    let winner = &outcomes.measurements[best_index];
    let seconds = winner.median.unwrap_or(0.0);

    let database = Database::in_cache();
    let mut saved = None;
    if !args.no_save {
        let key = Key::new(&program, &env, backend, &device_name, &compiler);
        let entry = Entry {
            key,
            knobs: winner.knobs.clone(),
            seconds,
            recorded: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        match database.record(entry) {
            Ok(warnings) => {
                for w in warnings {
                    stderr_line(&format!("warning: {w}"));
                }
                saved = Some(database.path().to_path_buf());
            }
            Err(why) => stderr_line(&format!("warning: the tuned schedule was not saved: {why}")),
        }
    }
    if let Some(path) = &args.plot {
        let title = format!("{} on {backend} ({device_name})", program.name);
        if let Some(note) = tune_plot::plot(path, &title, &outcomes.measurements, best)? {
            say(&format!("note: {note}"));
        }
    }

    let paste = match backend {
        Backend::C => winner.knobs.flags(),
        _ => winner.knobs.pragma(),
    };
    if args.json {
        let report = serde_json::json!({
            "program": program.name,
            "backend": backend.to_string(),
            "device": device_name,
            "compiler": compiler,
            "considered": space.considered,
            "pruned": space.pruned(),
            "pruned_unrunnable": space.pruned_unrunnable,
            "pruned_hopeless": space.pruned_hopeless,
            "best_predicted_s": space.best_predicted,
            "candidates": space.candidates.len(),
            "untried": outcomes.untried,
            "elapsed_s": outcomes.elapsed.as_secs_f64(),
            "measurements": outcomes.measurements,
            "best": {
                "knobs": winner.knobs,
                "seconds": seconds,
                "flags": winner.knobs.flags(),
                // The pragma holds GPU options only.
                "pragma": (backend != Backend::C).then(|| winner.knobs.pragma()),
            },
            "database": saved,
        });
        let text = serde_json::to_string_pretty(&report)
            .map_err(|e| CliError::new(e.to_string(), "report this bug"))?;
        return crate::cli::out::stdout_text(&format!("{text}\n"));
    }
    let measured = outcomes
        .measurements
        .iter()
        .filter(|m| m.outcome == Outcome::Measured)
        .count();
    let failed = outcomes.measurements.len() - measured;
    let first = outcomes.measurements.iter().find_map(|m| m.median);
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
        first.map_or(String::new(), |f| format!(
            ", {:.2}x the first (best predicted) configuration",
            f / seconds.max(1e-12)
        ))
    ));
    text.push_str(&paste);
    if let Some(path) = saved {
        text.push_str(&format!(
            "\nsaved in `{}`: `stencilc run --backend {backend}` with these parameter values uses it",
            path.display()
        ));
    }
    crate::cli::out::stdout_text(&format!("{text}\n"))
}

fn read_config(path: &std::path::Path) -> Result<stencilc::tune::config::TuneConfig, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        CliError::new(
            format!("cannot read the configuration `{}`: {e}", path.display()),
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
