//! `stencilc run`: runs a program on data files and writes the fields asked for.
//!
//! Everything that can be checked before computing is checked first: the program,
//! the field names, every output path (a temporary file is created next to each),
//! the parameters and every access against the grids, then the inputs. Outputs are
//! renamed into place only after the whole run succeeded (and, with `--verify`,
//! only when the back-end agreed with the interpreter).

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use stencilc::exec::backend;
use stencilc::exec::options::RunOptions;
use stencilc::exec::FieldState;
use stencilc::io::{self, PendingOutput};
use stencilc::ir::env::RunEnv;
use stencilc::ir::{FieldId, Program};

use crate::cli::args::{
    parse_field_file, BackendArg, FieldFile, FmaArgs, ParamArgs, ProgramArgs, ScheduleArgs,
    ShmChoice,
};
use crate::cli::error::CliError;
pub(crate) use crate::cli::inputs::{field_spec, find_field, resolve_fields, unknown_field};
use crate::cli::memory::{self, Headroom};
use crate::cli::out::stderr_line;
use crate::cli::progress::{self, Progress};
use crate::cli::summary::{Phases, Report};
use crate::cli::verify::{self, Verification};
use crate::cli::{inputs, params, program};

mod decomposed;

/// Arguments of `stencilc run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(flatten)]
    program: ProgramArgs,

    #[command(flatten)]
    params: ParamArgs,

    /// Initial values of a field, for every time level: `.npy`, `.png`/`.pgm`
    /// (2-D float fields, pixels mapped to [0, 1]) or `.raw`. Fields without an
    /// input start at zero.
    #[arg(long = "input", value_name = "FIELD=FILE", value_parser = parse_field_file)]
    inputs: Vec<FieldFile>,

    /// Writes the field's newest time level after the run, in the format the
    /// extension names. Nothing is written unless the run succeeds.
    #[arg(long = "output", value_name = "FIELD=FILE", value_parser = parse_field_file)]
    outputs: Vec<FieldFile>,

    /// Which back-end runs the program.
    #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
    backend: BackendArg,

    #[command(flatten)]
    schedule: ScheduleArgs,

    #[command(flatten)]
    fma: FmaArgs,

    /// `--backend c`: the C compiler's flags, replacing the defaults
    /// (`-O3 -march=native -fopenmp -ffp-contract=off -frounding-math -fwrapv`).
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    cflags: Option<String>,

    /// `--backend c`: add `-ffast-math` (faster, results no longer bit-identical
    /// to the interpreter's).
    #[arg(long)]
    fast_math: bool,

    /// Prints a JSON summary on stdout: back-end, iterations, reductions, times.
    #[arg(long)]
    json: bool,

    /// Reports each step on stderr.
    #[arg(short, long)]
    verbose: bool,

    /// Shows the progress line on stderr even when it is not a terminal or the
    /// run is short (by default: on a terminal, after about a second).
    #[arg(long, conflicts_with = "quiet")]
    progress: bool,

    /// Ignores the tuning database: without it, a schedule `stencilc tune`
    /// recorded for this program, parameter values, back-end and device fills
    /// in the schedule flags not given.
    #[arg(long)]
    no_tuned: bool,

    /// No progress line and no notes on stderr; errors are still printed.
    #[arg(short, long, conflicts_with = "verbose")]
    quiet: bool,

    /// Also runs the interpreter on the same inputs and compares every output
    /// field (every field without `--output`): exactly for `c` and `interp`,
    /// within a tolerance for GPU back-ends and with `--fma`. A difference fails
    /// the run, and no output is written.
    #[arg(long)]
    verify: bool,

    /// Runs across MPI ranks (start with `mpirun -np P`): the grid cut into
    /// blocks, `auto` (MPI's balancing) or ranks per axis `PxQ[xR]`. Needs a
    /// build with `--features mpi`.
    #[arg(long, value_name = "auto|PxQ[xR]")]
    decompose: Option<String>,
}

impl RunArgs {
    fn progress_mode(&self) -> progress::Mode {
        if self.quiet {
            progress::Mode::Never
        } else if self.progress {
            progress::Mode::Always
        } else {
            progress::Mode::Auto
        }
    }
}

/// Runs the command.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    if let Some(spec) = &args.decompose {
        return decomposed::run(args, spec);
    }
    let mut phases = Phases::default();
    let started = Instant::now();
    let mut program = program::load(&args.program.program, args.program.region)?;
    phases.parse = started.elapsed();
    let say = |text: String| {
        if args.verbose {
            stderr_line(&text);
        }
    };
    say(format!("parsed `{}` in {:.3?}", program.name, phases.parse));

    let inputs = inputs::resolve(&program, &args.inputs)?;
    let outputs = resolve_fields(&program, &args.outputs, "--output")?;
    reject_conflicting_paths(&program, &args.program.program, &inputs, &outputs)?;
    inputs::check(&program, &inputs)?;
    let mut options = run_options(&program, args)?;
    let mut pending: Vec<(FieldId, PendingOutput)> = outputs
        .iter()
        .map(|(f, path)| Ok((*f, io::prepare_output(path, &field_spec(&program, *f))?)))
        .collect::<Result<_, CliError>>()?;

    let started = Instant::now();
    let values = inputs::values(&program, &args.params.sets, &inputs, &say)?;
    params::bind_hint_values(&mut program, &args.params.sets, &values)?;
    params::check_hint_values(&program, args.backend.into(), &options)?;
    let bindings = params::complete(&program, values)?;
    let env = stencilc::exec::bind(&program, &bindings)?;
    phases.check = started.elapsed();
    if !args.no_tuned {
        options = with_tuned_schedule(&program, &env, args, options);
    }

    let headrooms = memory::headrooms();
    if let Some(tight) = memory::tightest(&headrooms) {
        say(format!(
            "memory: {} left under {}",
            memory::gib(tight.bytes),
            tight.source
        ));
    }
    check_memory(&program, &env, args.backend, args.verify, &headrooms)?;
    let started = Instant::now();
    let mut state = initial_state(&program, &env, &inputs)?;
    let mut reference_state = args.verify.then(|| state.clone());
    phases.read = started.elapsed();
    say(format!(
        "read {} input(s) in {:.3?}",
        inputs.len(),
        phases.read
    ));

    let counted = !matches!(args.backend, BackendArg::C);
    let progress = Progress::start(args.progress_mode(), env.max_iters(), counted);
    options.progress = Some(progress.hook());
    let mut notice = |text: &str| {
        if !args.quiet {
            progress.println(&format!("note: {text}"));
        }
    };
    let ran = backend::run(
        args.backend.into(),
        &program,
        &env,
        &mut state,
        &options,
        &mut notice,
    );
    progress.finish();
    let (summary, used) = ran?;
    say(format!(
        "ran {} iteration(s) on `{used}` in {:.3?}",
        summary.iterations, summary.times.compute
    ));

    let verification = match reference_state.as_mut() {
        Some(reference) => {
            let compared: Vec<FieldId> = if outputs.is_empty() {
                (0..program.fields.len()).map(FieldId).collect()
            } else {
                outputs.iter().map(|(f, _)| *f).collect()
            };
            Some(verify_against_interpreter(
                &program, &env, &state, reference, &compared, used, &summary, args,
            )?)
        }
        None => None,
    };
    if let Some(verification) = &verification {
        say(verification.to_text().trim_end().to_string());
        if let Some(error) = verification.error() {
            if args.json {
                let report = Report {
                    program: &program,
                    env: &env,
                    bindings: &bindings,
                    backend: used,
                    summary: &summary,
                    outputs: &[],
                    phases,
                    verification: Some(verification),
                };
                report.print(true)?;
            }
            return Err(error);
        }
    }

    let started = Instant::now();
    for (field, output) in &mut pending {
        let dims = &env.grid_dims()[program.fields[field.0].grid.0];
        output.write(state.newest(&program, field.0), dims)?;
    }
    for (field, output) in pending {
        let path = output.path().to_path_buf();
        output.persist()?;
        say(format!(
            "wrote `{}` to `{}`",
            program.fields[field.0].name,
            path.display()
        ));
    }
    phases.write = started.elapsed();

    let report = Report {
        program: &program,
        env: &env,
        bindings: &bindings,
        backend: used,
        summary: &summary,
        outputs: &outputs,
        phases,
        verification: verification.as_ref(),
    };
    report.print(args.json)
}

/// Runs the interpreter on `reference` (the initial state, a copy) and compares
/// its result with the back-end's `state` on the fields `compared`.
#[allow(clippy::too_many_arguments)]
fn verify_against_interpreter(
    program: &Program,
    env: &RunEnv,
    state: &stencilc::exec::FieldState,
    reference: &mut stencilc::exec::FieldState,
    compared: &[FieldId],
    used: backend::Backend,
    summary: &stencilc::exec::RunSummary,
    args: &RunArgs,
) -> Result<Verification, CliError> {
    let progress = Progress::start(args.progress_mode(), env.max_iters(), true);
    let ran = stencilc::interp::run_observed(program, env, reference, Some(&progress.hook()));
    progress.finish();
    let reference_summary = ran?;
    let fields = compared
        .iter()
        .map(|f| {
            verify::compare_field(
                &program.fields[f.0].name,
                used,
                args.fma.fma,
                state.newest(program, f.0),
                reference.newest(program, f.0),
                &env.grid_dims()[program.fields[f.0].grid.0],
            )
        })
        .collect();
    Ok(Verification {
        backend: used,
        iterations: summary.iterations,
        reference_iterations: reference_summary.iterations,
        fields,
    })
}

/// Refuses an output that is the program, an input or another output,
/// however each is spelt (see [`crate::cli::paths`]).
fn reject_conflicting_paths(
    program: &Program,
    program_path: &Path,
    inputs: &[(FieldId, PathBuf)],
    outputs: &[(FieldId, PathBuf)],
) -> Result<(), CliError> {
    let mut check = stencilc::files::paths::OutputCheck::new();
    check.input("the program", program_path);
    for (field, path) in inputs {
        check.input(format!("--input {}", program.fields[field.0].name), path);
    }
    for (field, path) in outputs {
        check.output(format!("--output {}", program.fields[field.0].name), path);
    }
    crate::cli::paths::refuse_conflicts(&check)
}

/// The back-end options, with `--shm` field names checked against the program.
fn run_options(program: &Program, args: &RunArgs) -> Result<RunOptions, CliError> {
    if let Some(ShmChoice::Fields(names)) = &args.schedule.shm {
        if let Some(bad) = names.iter().find(|n| find_field(program, n).is_none()) {
            return Err(unknown_field(
                program,
                bad,
                &format!("--shm {}", names.join(",")),
            ));
        }
    }
    let mut options = args.schedule.run_options();
    if let Some(bad) = options
        .results
        .iter()
        .flatten()
        .find(|n| find_field(program, n).is_none())
    {
        return Err(unknown_field(program, bad, "--results"));
    }
    if options.results.is_none() && !args.outputs.is_empty() && !args.verify {
        // Only the `--output` fields are read after the run.
        options.results = Some(args.outputs.iter().map(|o| o.field.clone()).collect());
    }
    Ok(RunOptions {
        verbose: args.verbose,
        quiet: args.quiet,
        cflags: args.cflags.clone(),
        fast_math: args.fast_math,
        fma: args.fma.fma,
        ..options
    })
}

/// `options` with the knobs of the tuned schedule recorded for this program,
/// parameter values, back-end, device and compiler, where there is one; the
/// flags given on the command line win, field by field. `-v` says so.
fn with_tuned_schedule(
    program: &Program,
    env: &RunEnv,
    args: &RunArgs,
    options: RunOptions,
) -> RunOptions {
    let mut warnings = Vec::new();
    let found =
        stencilc::tune::db::tuned_for(program, env, args.backend.into(), &options, &mut warnings);
    for warning in warnings {
        if !args.quiet {
            stderr_line(&format!("warning: {warning}"));
        }
    }
    let Some(entry) = found else {
        return options;
    };
    if args.verbose {
        stderr_line(&format!(
            "using the tuned schedule `{}` ({:.3} ms when tuned; --no-tuned to ignore it)",
            entry.knobs.label(),
            entry.seconds * 1e3
        ));
    }
    entry.knobs.fill(&options)
}

/// Refuses, with a message instead of an abort or a silent kill by the OOM
/// killer, a run that does not fit: the back-end's peak memory for the bytes of
/// every time level of every field ([`memory::estimate`], measured per
/// back-end; `--verify` adds the interpreter's copy) is compared with what each
/// memory limit leaves ([`memory::headrooms`]: `MemAvailable`, cgroup limits,
/// `ulimit -v`), and the fields are reserved once (and released) before
/// anything is read.
fn check_memory(
    program: &Program,
    env: &RunEnv,
    backend: BackendArg,
    verify: bool,
    headrooms: &[Headroom],
) -> Result<(), CliError> {
    let fields = program.fields.iter().try_fold(0usize, |total, field| {
        let points: usize = env.grid_dims()[field.grid.0].iter().product();
        points
            .checked_mul(field.ty.size_bytes() * field.levels())
            .and_then(|b| total.checked_add(b))
    });
    let (engine, name) = match backend {
        BackendArg::Interp => (memory::Engine::Interp, "interp"),
        BackendArg::C => (memory::Engine::C, "c"),
        BackendArg::Opencl => (memory::Engine::OpenCl, "opencl"),
        BackendArg::Cuda => (memory::Engine::Cuda, "cuda"),
        BackendArg::Auto => (memory::Engine::Cuda, "auto"),
    };
    let needed = fields
        .and_then(|b| u64::try_from(b).ok())
        .and_then(|b| memory::estimate(engine, b, verify).map(|n| (b, n)));
    let what = format!(
        "`{}` on the {name} back-end{}",
        program.name,
        if verify {
            " with --verify (which keeps the interpreter's copy of the fields)"
        } else {
            ""
        }
    );
    let Some((field_bytes, bytes)) = needed else {
        return Err(CliError::new(
            format!("the fields of {what} need more memory than the address space holds"),
            "use smaller grid-size parameters",
        ));
    };
    if let Some(tight) = memory::refusal(bytes, headrooms) {
        let peak = memory::peak(engine);
        return Err(CliError::new(
            format!(
                "{what} needs about {} of memory ({} × the fields' {} + {}), but {} leaves {}",
                memory::gib(bytes),
                peak.factor + u64::from(verify),
                memory::gib(field_bytes),
                memory::gib(peak.fixed),
                tight.source,
                memory::gib(tight.bytes)
            ),
            "use smaller grid-size parameters, a back-end that needs less (interp and c keep one copy of the fields), or run where more memory is allowed",
        ));
    }
    let fields = usize::try_from(field_bytes).unwrap_or(usize::MAX);
    if Vec::<u8>::new().try_reserve_exact(fields).is_err() {
        return Err(CliError::new(
            format!(
                "the fields of {what} need {} of memory, which cannot be allocated here",
                memory::gib(field_bytes)
            ),
            "use smaller grid-size parameters",
        ));
    }
    Ok(())
}

/// Every time level of every field: its input, or zeros.
pub(crate) fn initial_state(
    program: &Program,
    env: &RunEnv,
    inputs: &[(FieldId, PathBuf)],
) -> Result<FieldState, CliError> {
    let mut read = Vec::with_capacity(inputs.len());
    for (field, path) in inputs {
        let dims = env.field_dims(program, *field);
        read.push((
            *field,
            io::read_field(path, &field_spec(program, *field), dims)?,
        ));
    }
    Ok(stencilc::session::initial_state(program, env, read))
}
