//! `stencilc bench`: the CPU benchmark suite of `bench/`.
//!
//! For every program in `bench/programs` it runs the native C back-end (compile
//! time measured apart, in a fresh cache), the hand-written C+OpenMP baseline of
//! `bench/baseline` (same compiler, same flags) and, unless told not to, the
//! interpreter; it reports time per sweep, GStencil/s, effective GB/s (one read
//! and one write per point per field), the ratio to the baseline and the peak
//! resident memory next to the data size, in `bench/RESULTS.md` and
//! `bench/results.json`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use stencilc::exec::native::{self, compile};
use stencilc::exec::options::RunOptions;
use stencilc::exec::{Bindings, Buffer, FieldState};
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ScalarType, Value};
use stencilc::source::SourceFile;

use crate::cli::error::CliError;

/// Arguments of `stencilc bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The benchmark folder (with `programs/` and `baseline/`).
    #[arg(long, default_value = "bench")]
    pub dir: PathBuf,
    /// Edge of the 2-D grids.
    #[arg(long, default_value_t = 4096)]
    pub size_2d: usize,
    /// Edge of the 3-D grids.
    #[arg(long, default_value_t = 256)]
    pub size_3d: usize,
    /// Aim for this many seconds of computation per measurement (the probe
    /// run that sets the sweep count runs cold, so real runs take about half).
    #[arg(long, default_value_t = 2.0)]
    pub seconds: f64,
    /// Run the generated code and the baseline this many times each, in
    /// alternation, and report the median time of each.
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// Run only these benchmarks (by name; repeat the flag or separate
    /// names with commas).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Leave out the interpreter (it is much slower).
    #[arg(long)]
    pub no_interp: bool,
    /// Fused multiply-adds in the generated C and the baselines
    /// (`-ffp-contract=fast`).
    #[command(flatten)]
    pub fma: crate::cli::args::FmaArgs,
    /// Time steps per tile sweep of the generated C (time tiling; 1 turns it
    /// off) [default: the C back-end's choice].
    #[arg(long = "time", value_name = "T", value_parser = clap::value_parser!(u32).range(1..))]
    pub time: Option<u32>,
    /// Tile sizes of the generated C's time tiling, innermost axis first
    /// [default: the C back-end's choice].
    #[arg(long = "cpu-tile", value_name = "X,Y[,Z]", value_parser = crate::cli::args::parse_axes)]
    pub cpu_tile: Option<crate::cli::args::Axes>,
    /// Order of the time tiles' inner steps [default: the C back-end's choice].
    #[arg(long = "cpu-order", value_name = "ORDER")]
    pub cpu_order: Option<crate::cli::args::CpuOrderArg>,
    /// OpenMP threads of the generated C and of the baselines
    /// (`OMP_NUM_THREADS` for them), at most four per hardware thread
    /// [default: OpenMP's].
    #[arg(long, value_name = "N", value_parser = crate::cli::args::parse_threads)]
    pub threads: Option<u32>,
    /// Write RESULTS.md and results.json here rather than in `--dir`.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// The suite: name and rank (2-D or 3-D).
const SUITE: [(&str, usize); 8] = [
    ("j2d5pt", 2),
    ("j2d9pt", 2),
    ("box2d2r", 2),
    ("star3d1r", 3),
    ("j3d27pt", 3),
    ("gradient2d", 2),
    ("rician3d", 3),
    ("gaussian_blur", 2),
];

/// One benchmark's measurements.
#[derive(serde::Serialize, Debug)]
struct Row {
    name: String,
    /// How the generated C ran: `untiled`, or `T=4 tile 64x2048` (outermost
    /// axis first), with `threads=N` when given.
    schedule: String,
    size: usize,
    rank: usize,
    sweeps: u64,
    compile_s: f64,
    cached_load_s: f64,
    c_sweep_s: f64,
    baseline_sweep_s: f64,
    interp_sweep_s: Option<f64>,
    ratio_to_baseline: f64,
    gstencil_per_s: f64,
    effective_gb_per_s: f64,
    peak_rss_mb: f64,
    baseline_peak_rss_mb: f64,
    data_mb: f64,
    /// Sum in f64, in index order, of the newest level of the field compared.
    checksum: f64,
    /// The same sum over the baseline's result.
    baseline_checksum: f64,
    /// `|checksum - baseline_checksum| / |baseline_checksum|` (0 when equal).
    checksum_rel_diff: f64,
}

/// Runs the suite and writes the reports.
pub fn run(args: &BenchArgs) -> Result<(), CliError> {
    check_bench_dir(&args.dir)?;
    if let Some(unknown) = args
        .only
        .iter()
        .find(|o| !SUITE.iter().any(|(name, _)| name == o))
    {
        let names: Vec<&str> = SUITE.iter().map(|(name, _)| *name).collect();
        return Err(CliError::new(
            format!("`--only {unknown}`: there is no benchmark of that name"),
            format!("the benchmarks are {}", names.join(", ")),
        ));
    }
    // Before measuring, so that a bad `--out-dir` does not waste the run.
    if let Some(dir) = &args.out_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::new(
                format!("cannot create `--out-dir {}`: {e}", dir.display()),
                "give a folder you can write to",
            )
        })?;
    }
    let cache = std::env::temp_dir().join(format!("stencilc-bench-{}", std::process::id()));
    // A fresh cache, so that the compile time reported is a real compilation.
    std::env::set_var("STENCILC_CACHE_DIR", &cache);
    let compiler = native::Compiler::from_env()?;
    let flags = compile::flags_with_fma(None, false, args.fma.fma);
    let mut rows = Vec::new();
    for (name, rank) in SUITE {
        if !args.only.is_empty() && !args.only.iter().any(|o| o == name) {
            continue;
        }
        let size = if rank == 2 {
            args.size_2d
        } else {
            args.size_3d
        };
        eprintln!("bench: {name} at {size}^{rank}");
        rows.push(bench_one(args, name, rank, size, &compiler, &flags)?);
    }
    let _ = std::fs::remove_dir_all(&cache);
    let json = serde_json::to_string_pretty(&rows)
        .map_err(|e| CliError::new(e.to_string(), "report this bug"))?;
    let out_dir = args.out_dir.clone().unwrap_or_else(|| args.dir.clone());
    write(&out_dir.join("results.json"), &json)?;
    let mut report = markdown(&rows, &compiler, &flags);
    if let Some(notes) = notes(&args.dir)? {
        report.push('\n');
        report.push_str(&notes);
    }
    write(&out_dir.join("RESULTS.md"), &report)?;
    eprintln!(
        "bench: wrote {} and {}",
        out_dir.join("RESULTS.md").display(),
        out_dir.join("results.json").display()
    );
    Ok(())
}

/// Refuses, before anything runs, a `--dir` without the suite's `programs/`
/// and `baseline/` folders, saying where it looked (`bench` is relative to the
/// current folder, so running elsewhere than the repository root lands here).
fn check_bench_dir(dir: &Path) -> Result<(), CliError> {
    let missing: Vec<PathBuf> = ["programs", "baseline"]
        .iter()
        .map(|sub| dir.join(sub))
        .filter(|path| !path.is_dir())
        .collect();
    let Some(first) = missing.first() else {
        return Ok(());
    };
    let shown = std::path::absolute(first).unwrap_or_else(|_| first.clone());
    Err(CliError::new(
        format!(
            "no benchmark suite in `{}`: looked for the folder `{}`, which does not exist",
            dir.display(),
            shown.display()
        ),
        "run `stencilc bench` from the root of the stencilc repository, or give the suite's \
         folder with `--dir PATH/TO/stencilc/bench`",
    ))
}

/// `NOTES.md` of the bench folder (measurements made by hand), if there is one:
/// the report includes it verbatim so that regenerating does not lose it.
fn notes(dir: &Path) -> Result<Option<String>, CliError> {
    let path = dir.join("NOTES.md");
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(failed(format!("cannot read {}: {e}", path.display()))),
    }
}

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    stencilc::files::write_whole(path, text.as_bytes()).map_err(|e| {
        CliError::new(
            format!("cannot write `{}`: {e}", path.display()),
            "run from the repository root",
        )
    })
}

/// Element `i` of every input: the same values as `bench_value` in `baseline/common.h`.
fn input_value(i: usize) -> f64 {
    ((i as u64).wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0
}

fn bindings(program: &Program, size: usize, steps: u64) -> Bindings {
    let params = program
        .params
        .iter()
        .map(|p| {
            let v = match p.name.as_str() {
                "steps" => steps as f64,
                "sigma" => 0.05,
                "lambda" => 0.065,
                _ => size as f64,
            };
            // C's conversion, as `--set` would give the parameter.
            Value::Double(v).cast(p.ty)
        })
        .collect();
    Bindings { params }
}

fn initial_state(program: &Program, env: &RunEnv) -> FieldState {
    let fields = program
        .fields
        .iter()
        .map(|f| {
            let len: usize = env.grid_dims()[f.grid.0].iter().product();
            let buffer = match f.ty {
                ScalarType::Float => {
                    Buffer::Float((0..len).map(|i| input_value(i) as f32).collect())
                }
                ScalarType::Double => Buffer::Double((0..len).map(input_value).collect()),
                ScalarType::Int => {
                    Buffer::Int((0..len).map(|i| (input_value(i) * 1000.0) as i32).collect())
                }
                ScalarType::Long => {
                    Buffer::Long((0..len).map(|i| (input_value(i) * 1000.0) as i64).collect())
                }
            };
            vec![buffer; f.levels()]
        })
        .collect();
    FieldState { fields }
}

/// Peak resident memory since the last reset, in MiB (Linux; 0 elsewhere).
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn failed(what: String) -> CliError {
    CliError::new(
        what,
        "check that the bench folder (`--dir`, default `bench`) is complete and a C compiler works",
    )
}

fn bench_one(
    args: &BenchArgs,
    name: &str,
    rank: usize,
    size: usize,
    compiler: &native::Compiler,
    flags: &[String],
) -> Result<Row, CliError> {
    let path = args.dir.join("programs").join(format!("{name}.sdsl"));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| failed(format!("cannot read {}: {e}", path.display())))?;
    let program = stencilc::analysis::checked(stencilc::front::parse_program(SourceFile::new(
        path.display().to_string(),
        text,
    ))?)?;
    let options = RunOptions {
        fma: args.fma.fma,
        time: args.time,
        cpu_tile: args.cpu_tile.as_ref().map(|a| a.0.clone()),
        threads: args.threads,
        cpu_order: args.cpu_order.map(Into::into),
        ..RunOptions::default()
    };
    // Planned for many iterations, so that no iteration count clamps the
    // time tile (the run's last sweep takes what is left).
    let plan_env = stencilc::exec::bind(&program, &bindings(&program, size, 1 << 20))?;
    let plan = native::plan(&program, &plan_env, &options)?;
    for line in plan.notes.iter().chain(&plan.reasons) {
        eprintln!("bench: {name}: {line}");
    }
    let schedule = describe_plan(&plan);

    // Compile in the fresh cache, then load again from it.
    let start = Instant::now();
    native::prepare_planned(&program, &plan, &options, compiler)?;
    let compile_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let (unit, kernel) = native::prepare_planned(&program, &plan, &options, compiler)?;
    let cached_load_s = start.elapsed().as_secs_f64();

    // Calibrate the number of sweeps on a short run.
    let probe_steps = 2;
    let env = stencilc::exec::bind(&program, &bindings(&program, size, probe_steps))?;
    let mut state = initial_state(&program, &env);
    let probe = native::execute(&program, &env, &mut state, &unit, &kernel)?;
    let per_sweep = probe.times.compute.as_secs_f64() / probe_steps as f64;
    let sweeps = ((args.seconds / per_sweep.max(1e-6)).ceil() as u64).clamp(3, 10_000);
    drop(state);

    // Alternate the generated code and the baseline, `repeats` times each, and
    // keep the medians: on a shared machine one run of each, minutes apart, can
    // differ by 30 % for reasons that have nothing to do with the code.
    let env = stencilc::exec::bind(&program, &bindings(&program, size, sweeps))?;
    let baseline_binary = compile_baseline(args, name, flags, compiler)?;
    let mut c_times = Vec::new();
    let mut baseline_times = Vec::new();
    let mut first = None;
    for _ in 0..args.repeats.max(1) {
        let mut state = initial_state(&program, &env);
        reset_peak_rss();
        let summary = native::execute(&program, &env, &mut state, &unit, &kernel)?;
        let done = summary.iterations.max(1);
        c_times.push(summary.times.compute.as_secs_f64() / done as f64);
        if first.is_none() {
            first = Some((peak_rss_mb(), done, state));
        }
        baseline_times.push(run_baseline(
            &baseline_binary,
            name,
            size,
            done,
            args.threads,
        )?);
    }
    let _ = std::fs::remove_file(&baseline_binary);
    let (peak_rss_mb, done, state) = first.expect("at least one repetition ran");
    let c_sweep_s = median(&mut c_times);
    let baseline_sweep_s = median(&mut baseline_times.iter().map(|r| r.0).collect::<Vec<_>>());
    let (_, baseline_rss_mb, baseline_checksum) = baseline_times[0];
    let newest = program
        .fields
        .iter()
        .position(|f| f.levels() > 1)
        .unwrap_or(program.fields.len() - 1);
    let checksum: f64 = state.newest(&program, newest).to_f64().iter().sum();
    let data_bytes: usize = state
        .fields
        .iter()
        .flatten()
        .map(|b| b.as_bytes().len())
        .sum();
    drop(state);
    eprintln!(
        "bench: {name}: {done} sweeps x {} repeats, checksum {checksum:.17e}, baseline {baseline_checksum:.17e}",
        c_times.len()
    );

    let interp_sweep_s = if args.no_interp {
        None
    } else {
        let env = stencilc::exec::bind(&program, &bindings(&program, size, 1))?;
        let mut state = initial_state(&program, &env);
        let s = stencilc::interp::run(&program, &env, &mut state)?;
        Some(s.times.compute.as_secs_f64() / s.iterations.max(1) as f64)
    };

    // Points updated per sweep (every stencil part) and bytes moved per sweep.
    let points: f64 = (size as f64).powi(rank as i32);
    let stencils = program.iterate.as_ref().map_or(1, |it| it.stencils.len()) as f64;
    let bytes_per_sweep: f64 = program
        .fields
        .iter()
        .map(|f| 2.0 * f.ty.size_bytes() as f64 * points)
        .sum();
    Ok(Row {
        name: name.into(),
        schedule,
        size,
        rank,
        sweeps: done,
        compile_s,
        cached_load_s,
        c_sweep_s,
        baseline_sweep_s,
        interp_sweep_s,
        ratio_to_baseline: c_sweep_s / baseline_sweep_s,
        gstencil_per_s: points * stencils / c_sweep_s / 1e9,
        effective_gb_per_s: bytes_per_sweep / c_sweep_s / 1e9,
        peak_rss_mb,
        baseline_peak_rss_mb: baseline_rss_mb,
        data_mb: data_bytes as f64 / (1024.0 * 1024.0),
        checksum,
        baseline_checksum,
        checksum_rel_diff: relative_difference(checksum, baseline_checksum),
    })
}

/// Relative difference of a checksum to the baseline's; 0 when both are equal
/// (also both zero), NaN when either is not a number.
fn relative_difference(value: f64, reference: f64) -> f64 {
    if value == reference {
        0.0
    } else {
        (value - reference).abs() / reference.abs()
    }
}

/// Compiles and runs `baseline/<name>.c`; returns seconds per sweep, peak RSS
/// in MiB and the checksum of its result.
/// Compiles the hand-written baseline of `name` with the generated code's flags.
fn compile_baseline(
    args: &BenchArgs,
    name: &str,
    flags: &[String],
    compiler: &native::Compiler,
) -> Result<PathBuf, CliError> {
    let source = args.dir.join("baseline").join(format!("{name}.c"));
    let binary =
        std::env::temp_dir().join(format!("stencilc-baseline-{name}-{}", std::process::id()));
    let status = Command::new(&compiler.command)
        .args(flags)
        .arg("-o")
        .arg(&binary)
        .arg(&source)
        .arg("-lm")
        .status()
        .map_err(|e| failed(format!("cannot run {}: {e}", compiler.command)))?;
    if !status.success() {
        return Err(failed(format!(
            "the baseline {} did not compile",
            source.display()
        )));
    }
    Ok(binary)
}

/// Runs a compiled baseline: seconds per sweep, peak RSS in MiB, checksum.
fn run_baseline(
    binary: &Path,
    name: &str,
    size: usize,
    sweeps: u64,
    threads: Option<u32>,
) -> Result<(f64, f64, f64), CliError> {
    let mut command = Command::new(binary);
    if let Some(n) = threads {
        command.env("OMP_NUM_THREADS", n.to_string());
    }
    let output = command
        .arg(size.to_string())
        .arg(sweeps.to_string())
        .output()
        .map_err(|e| failed(format!("cannot run the baseline {}: {e}", binary.display())))?;
    let report = BaselineReport::parse(&output.stdout)
        .map_err(|e| failed(format!("the baseline {name} printed no result: {e}")))?;
    Ok((
        report.seconds / report.steps.max(1) as f64,
        report.peak_rss_kb as f64 / 1024.0,
        report.checksum,
    ))
}

/// The median of some timings (the mean of the middle two for an even count).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The result line a baseline prints (`bench_report` in `baseline/common.h`).
#[derive(serde::Deserialize, Debug, PartialEq)]
struct BaselineReport {
    seconds: f64,
    steps: u64,
    /// Printed with `%.17g`, which names the double exactly; serde_json's
    /// `float_roundtrip` feature makes the parse exact too (its default parser
    /// may land one ulp off, which made identical results look different).
    checksum: f64,
    peak_rss_kb: i64,
}

impl BaselineReport {
    fn parse(stdout: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(stdout)
    }
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{cpu}, {cores} cores ({})", std::env::consts::ARCH)
}

/// The table cell of a checksum's relative difference to the baseline: `0`
/// for bit-identical sums, else the difference in scientific notation.
fn checksum_cell(rel_diff: f64) -> String {
    if rel_diff == 0.0 {
        "0".into()
    } else {
        format!("{rel_diff:.1e}")
    }
}

/// `untiled`, or `T=4 tile 64x2048` (outermost axis first), ` wavefront`
/// for that order; `, threads=N`.
fn describe_plan(plan: &stencilc::analysis::tile::CpuPlan) -> String {
    let mut text = match &plan.tiling {
        Some(t) => format!(
            "T={} tile {}{}",
            t.steps,
            t.tile
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join("x"),
            match t.order {
                stencilc::analysis::tile::TileOrder::Levels => "",
                stencilc::analysis::tile::TileOrder::Wavefront => " wavefront",
                stencilc::analysis::tile::TileOrder::March => " march",
            }
        ),
        None => "untiled".into(),
    };
    if let Some(n) = plan.threads {
        text.push_str(&format!(", threads={n}"));
    }
    text
}

fn markdown(rows: &[Row], compiler: &native::Compiler, flags: &[String]) -> String {
    let mut out = String::new();
    out.push_str("# CPU benchmark results\n\n");
    out.push_str(&format!("Machine: {}.  \n", machine()));
    out.push_str(&format!(
        "Compiler: `{}` ({}), flags `{}` for both the generated C and the baselines.  \n",
        compiler.command,
        compiler.identity.lines().next().unwrap_or("").trim(),
        flags.join(" ")
    ));
    out.push_str("Made by `stencilc bench` (see bench/README.md). Times are per sweep (one iteration of the \
                  iterate); GStencil/s counts grid points x stencils per second; effective GB/s assumes one \
                  read and one write per point per field; ratio = `--backend c` time / baseline time (speed-up: its inverse); \
                  checksum rel. diff = |c checksum - baseline checksum| / |baseline checksum|, each the \
                  f64 sum in index order of the newest level of the result field (0: the same sum, as \
                  for bit-identical results).\n\n");
    out.push_str("| benchmark | c schedule | size | sweeps | c (ms/sweep) | baseline (ms/sweep) | ratio | speed-up | interp (ms/sweep) | GStencil/s | GB/s | compile (s) | cached load (ms) | peak RSS (MiB) | baseline RSS (MiB) | data (MiB) | checksum rel. diff |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in rows {
        out.push_str(&format!(
            "| {} | {} | {}^{} | {} | {:.2} | {:.2} | {:.3} | {:.2}x | {} | {:.2} | {:.1} | {:.2} | {:.1} | {:.0} | {:.0} | {:.0} | {} |\n",
            r.name,
            r.schedule,
            r.size,
            r.rank,
            r.sweeps,
            r.c_sweep_s * 1e3,
            r.baseline_sweep_s * 1e3,
            r.ratio_to_baseline,
            1.0 / r.ratio_to_baseline,
            r.interp_sweep_s.map_or("-".into(), |s| format!("{:.1}", s * 1e3)),
            r.gstencil_per_s,
            r.effective_gb_per_s,
            r.compile_s,
            r.cached_load_s * 1e3,
            r.peak_rss_mb,
            r.baseline_peak_rss_mb,
            r.data_mb,
            checksum_cell(r.checksum_rel_diff)
        ));
    }
    if let Some(worst) = rows
        .iter()
        .max_by(|a, b| a.ratio_to_baseline.total_cmp(&b.ratio_to_baseline))
    {
        out.push_str(&format!(
            "\nWorst ratio to the baseline: {:.3} ({}).\n",
            worst.ratio_to_baseline, worst.name
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn baseline_checksum_parses_to_the_exact_double() {
        // A checksum whose 17 digits serde_json's default parser rounds to the
        // neighbouring double (…7012e5), which made bit-identical results differ.
        let line = br#"{"seconds": 0.037057977, "steps": 3, "checksum": 523764.55609914707, "peak_rss_kb": 9884}"#;
        let report = BaselineReport::parse(line).unwrap();
        assert_eq!(
            report.checksum,
            "523764.55609914707".parse::<f64>().unwrap()
        );
        assert_eq!(report.steps, 3);
        assert_eq!(report.peak_rss_kb, 9884);
    }

    #[test]
    fn relative_difference_is_zero_only_for_equal_checksums() {
        assert_eq!(relative_difference(2.5, 2.5), 0.0);
        let one_ulp = f64::from_bits(2.5f64.to_bits() + 1);
        let d = relative_difference(one_ulp, 2.5);
        assert!(d > 0.0 && d < 1e-15, "{d}");
        assert!(relative_difference(f64::NAN, 2.5).is_nan());
    }

    #[test]
    fn checksum_cell_shows_the_difference() {
        assert_eq!(checksum_cell(0.0), "0");
        assert_eq!(checksum_cell(1.1e-16), "1.1e-16");
    }
}
