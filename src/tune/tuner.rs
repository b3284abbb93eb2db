//! One tuning from start to end, the library face of `stencilc tune` (and of
//! Python's `stencilc.tune`): the space built for the back-end (the default
//! ranges, or an SDSL autotuner configuration's) and pruned ([`super::space`]),
//! its candidates measured best predicted first ([`super::search`]), and the
//! fastest recorded in the tuning database ([`super::db`]) where a later run
//! finds it. The caller shows progress through [`Event`]s and prints the
//! result; nothing here prints.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::exec::backend::Backend;

use crate::exec::options::RunOptions;
use crate::exec::FieldState;
use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::lower::Target;
use crate::model::Device;

use super::config::TuneConfig;
use super::cpu_model::Machine;
use super::db::{self, Database, Entry, Key};
use super::search::{self, Measurement, Outcome, Outcomes, Settings};
use super::space::{self, Family, Space};

/// What to tune and how.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The back-end to tune: `C`, `OpenCl` or `Cuda`.
    pub backend: Backend,
    /// What every run shares (`fma`, compiler flags).
    pub base: RunOptions,
    /// An SDSL autotuner configuration replacing the default space, with the
    /// name messages give it (its path).
    pub config: Option<(&'a str, &'a TuneConfig)>,
    /// Measure every configuration that can run (prune only what cannot).
    pub exhaustive: bool,
    /// Repeats, budget and how results are compared.
    pub settings: Settings,
    /// Record the best in the tuning database.
    pub save: bool,
}

/// What the caller is told while tuning.
#[derive(Debug)]
pub enum Event<'a> {
    /// The space is built and pruned; measuring starts.
    Space(&'a Space),
    /// A candidate was measured: every measurement so far, the last one new.
    Measured(&'a [Measurement]),
}

/// Why tuning gave no result: what is wrong, and what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuneError {
    /// What is wrong.
    pub message: String,
    /// What to change.
    pub help: String,
}

impl std::fmt::Display for TuneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; {}", self.message, self.help)
    }
}

impl std::error::Error for TuneError {}

fn error(message: impl Into<String>, help: impl Into<String>) -> TuneError {
    TuneError {
        message: message.into(),
        help: help.into(),
    }
}

/// A finished tuning.
#[derive(Clone, Debug)]
pub struct Tuned {
    /// The program's name.
    pub program: String,
    /// The back-end tuned.
    pub backend: Backend,
    /// The device the database entry is for (`cpu ...` for C).
    pub device: String,
    /// The compiler and its flags the entry is for.
    pub compiler: String,
    /// The space measured, after pruning.
    pub space: Space,
    /// Every measurement, the budget's leftovers and the time taken.
    pub outcomes: Outcomes,
    /// The index of the fastest in `outcomes.measurements`.
    pub best: usize,
    /// The database the best went to (`None` when not saved).
    pub saved: Option<PathBuf>,
    /// Warnings about the database (a corrupted file moved aside, or why
    /// the best was not saved).
    pub warnings: Vec<String>,
}

impl Tuned {
    /// The fastest measurement.
    pub fn winner(&self) -> &Measurement {
        &self.outcomes.measurements[self.best]
    }

    /// The fastest measurement's median seconds per run.
    pub fn seconds(&self) -> f64 {
        self.winner().median.unwrap_or(0.0)
    }

    /// How many configurations were measured (their results matching).
    pub fn measured(&self) -> usize {
        self.outcomes
            .measurements
            .iter()
            .filter(|m| m.outcome == Outcome::Measured)
            .count()
    }

    /// The line to paste: the C back-end's flags, or the region pragma, which
    /// carries every GPU knob (a line naming the flags of any knob it cannot
    /// carry follows it).
    pub fn paste(&self) -> String {
        let knobs = &self.winner().knobs;
        match self.backend {
            Backend::C => knobs.flags(),
            _ => {
                let beyond = knobs.beyond_pragma();
                if beyond.is_empty() {
                    knobs.pragma()
                } else {
                    format!(
                        "{}\nnote: the pragma cannot carry `{beyond}`: give those flags on the \
                         command line",
                        knobs.pragma()
                    )
                }
            }
        }
    }

    /// The report `stencilc tune --json` prints.
    pub fn json(&self) -> serde_json::Value {
        let winner = self.winner();
        let space = &self.space;
        serde_json::json!({
            "program": self.program,
            "backend": self.backend.to_string(),
            "device": self.device,
            "compiler": self.compiler,
            "considered": space.considered,
            "pruned": space.pruned(),
            "pruned_unrunnable": space.pruned_unrunnable,
            "pruned_hopeless": space.pruned_hopeless,
            "best_predicted_s": space.best_predicted,
            "candidates": space.candidates.len(),
            "untried": self.outcomes.untried,
            "elapsed_s": self.outcomes.elapsed.as_secs_f64(),
            "measurements": self.outcomes.measurements,
            "best": {
                "knobs": winner.knobs,
                "seconds": self.seconds(),
                "flags": winner.knobs.flags(),
                // The pragma holds GPU options only.
                "pragma": (self.backend != Backend::C).then(|| winner.knobs.pragma()),
            },
            "database": self.saved,
        })
    }
}

/// Tunes `program` bound by `env` on `request.backend`, every candidate run
/// from a copy of `initial`; `events` hears of the space and of each
/// measurement. The best goes to the tuning database unless `request.save`
/// is false.
pub fn tune(
    program: &Program,
    env: &RunEnv,
    initial: &FieldState,
    request: &Request<'_>,
    events: &mut dyn FnMut(Event<'_>),
) -> Result<Tuned, TuneError> {
    let backend = request.backend;
    if !matches!(backend, Backend::C | Backend::OpenCl | Backend::Cuda) {
        return Err(error(
            format!("`{backend}` cannot be tuned"),
            "tune the c, opencl or cuda back-end",
        ));
    }
    let base = &request.base;
    // Every candidate sets the knobs it tries; a pasted pragma's `vector:`,
    // `shm:` or `fuse:` would otherwise change those that leave them to the
    // back-end (the database key is still the program's, pragma and all).
    let keyed = program;
    let mut own = program.clone();
    own.hints.vector = None;
    own.hints.shm = None;
    own.hints.fuse = None;
    let program = &own;
    let machine = Machine::here();
    let (device_name, compiler) = db::identity(backend, base);
    let gpu_device = match backend {
        Backend::Cuda => crate::model::predict::preset_for_name(&device_name)
            .unwrap_or_else(Device::default_device),
        _ => Device::default_device(),
    };
    let family = match backend {
        Backend::C => Family::Cpu(machine),
        Backend::Cuda => Family::Gpu(Target::Cuda, gpu_device),
        _ => Family::Gpu(Target::OpenCl, gpu_device),
    };
    let rank = space::rank(program);
    let ranges = match request.config {
        Some((name, config)) => {
            if config.dims() != rank {
                return Err(error(
                    format!(
                        "`{name}` describes {} space dimension(s), but `{}` is {rank}-D",
                        config.dims(),
                        program.name
                    ),
                    format!(
                        "write {rank} in its dimensions line and give {rank} block and {rank} tile lines"
                    ),
                ));
            }
            space::config_ranges(config, backend, &machine)
        }
        None => space::default_ranges(program, backend, rank, &machine),
    };
    let space = space::build_space(program, env, family, &ranges, base, request.exhaustive);
    events(Event::Space(&space));
    if space.candidates.is_empty() {
        return Err(error(
            "no configuration of the space can run",
            "widen the ranges (--config) or check the reasons above",
        ));
    }
    let outcomes = search::measure(
        program,
        env,
        initial,
        backend,
        base,
        &space.candidates,
        &request.settings,
        &mut |so_far| events(Event::Measured(so_far)),
    );
    let Some(best) = outcomes.best() else {
        let first = outcomes
            .measurements
            .iter()
            .find_map(|m| match &m.outcome {
                Outcome::Failed(why) | Outcome::Mismatch(why) => Some(why.clone()),
                Outcome::Measured => None,
            })
            .unwrap_or_else(|| "the budget ended before any ran".into());
        return Err(error(
            format!("no configuration ran: {first}"),
            "check that the back-end runs the program (`stencilc run --backend ...`), or give a larger --budget",
        ));
    };
    let mut tuned = Tuned {
        program: program.name.clone(),
        backend,
        device: device_name,
        compiler,
        space,
        outcomes,
        best,
        saved: None,
        warnings: Vec::new(),
    };
    if request.save {
        let database = Database::in_cache();
        let key = Key::new(keyed, env, backend, &tuned.device, &tuned.compiler);
        let entry = Entry {
            key,
            knobs: tuned.winner().knobs.clone(),
            seconds: tuned.seconds(),
            recorded: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        };
        match database.record(entry) {
            Ok(warnings) => {
                tuned.warnings = warnings;
                tuned.saved = Some(database.path().to_path_buf());
            }
            Err(why) => tuned
                .warnings
                .push(format!("the tuned schedule was not saved: {why}")),
        }
    }
    Ok(tuned)
}
