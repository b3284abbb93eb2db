//! `stencilc synth`: KaniCUDA on a user's kernel — profile the marked reads
//! in the emulator, synthesize each one's shared index and guard, insert the
//! barriers, verify the rewritten kernel against the original, compile it
//! with NVRTC when NVRTC is here, and write it
//! ([`stencilc::kanicuda`] does the work).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;

use stencilc::emu::{Launch, Limits};
use stencilc::exec::cuda::nvrtc;
use stencilc::kanicuda::{self, describe, Failure, Request, Synthesis};
use stencilc::synth::{plan_json, Bounds};

use super::cuda_input;
use super::error::CliError;
use super::out;

/// Arguments of `stencilc synth`.
#[derive(Args, Debug)]
pub struct SynthArgs {
    /// The CUDA file, with KaniCUDA's `profile("...")` and `__opt__.a[i]`
    /// (a whole `.cu` file: only the kernel is rewritten, the rest kept).
    pub file: PathBuf,
    /// Blocks along x, y[, z] of the launch to profile (smaller and other
    /// launches are derived from it; see docs/src/synth.md).
    #[arg(long, value_name = "X,Y[,Z]")]
    pub grid: String,
    /// Threads per block along x, y[, z].
    #[arg(long, value_name = "X,Y[,Z]")]
    pub block: String,
    /// A kernel argument: `NAME=VALUE` for a scalar, `NAME=random:N` for an
    /// array of N pseudo-random elements, `NAME=zeros:N` for N zeros.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// A macro, as nvcc's `-D NAME=VALUE`.
    #[arg(short = 'D', value_name = "NAME=VALUE")]
    pub defines: Vec<String>,
    /// Which kernel, when the file has several (default: the only one, or
    /// the only one with `profile("...")` / `__opt__`).
    #[arg(long)]
    pub kernel: Option<String>,
    /// The launch's dynamic shared memory in bytes (the third value of
    /// `<<<grid, block, N>>>`): the size of an `extern __shared__` array.
    #[arg(long, value_name = "N")]
    pub shared_bytes: Option<u64>,
    /// Where to write the rewritten kernel (default: standard output, or
    /// the `"text"` of the JSON with `--json`).
    #[arg(short = 'o', long = "output", value_name = "OUT.cu")]
    pub output: Option<PathBuf>,
    /// Print what was found as JSON on standard output.
    #[arg(long)]
    pub json: bool,
    /// Also compare original and rewritten kernel on the profiled launches,
    /// and each launch on a second set of random inputs, listing them all.
    #[arg(long)]
    pub check: bool,
    /// Seconds each search (an index dimension or a guard) may take.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0)]
    pub budget: f64,
    /// Enumerate without the canonical order (to count what it saves).
    #[arg(long)]
    pub no_canonical_order: bool,
    /// Try the variables in profile order instead of by correlation (to
    /// count what the order saves).
    #[arg(long)]
    pub no_correlation_order: bool,
    /// The GPU architecture NVRTC compiles the output for.
    #[arg(long, default_value = "sm_80")]
    pub arch: String,
    /// The most operations one emulation may execute.
    #[arg(long, default_value_t = 500_000_000)]
    pub max_steps: u64,
}

/// Runs the command.
pub fn run(args: &SynthArgs) -> Result<(), CliError> {
    if let Some(output) = &args.output {
        crate::cli::paths::refuse_output_over_input(&args.file, output)?;
    }
    let started = Instant::now();
    let input = cuda_input::load(
        &args.file,
        &args.defines,
        args.kernel.as_deref(),
        args.shared_bytes,
        "synth",
    )?;
    let kernel = &input.kernel;
    let launch = cuda_input::launch(&args.grid, &args.block)?;
    let specs = cuda_input::arg_specs(kernel, &args.args)?;
    if !(args.budget.is_finite() && args.budget > 0.0) {
        return Err(CliError::new(
            format!(
                "`--budget {}` is not a positive number of seconds",
                args.budget
            ),
            "write it as in `--budget 2` or `--budget 0.5`",
        ));
    }
    let bounds = Bounds {
        time_budget: Duration::from_secs_f64(args.budget.min(3600.0)),
        canonical: !args.no_canonical_order,
        correlation_order: !args.no_correlation_order,
        ..Bounds::default()
    };
    let request = Request {
        source: &input.source,
        defines: &input.defines,
        kernel,
        launch,
        args: &specs,
        bounds,
        check: args.check,
        limits: Limits {
            max_steps: args.max_steps,
            ..Limits::default()
        },
        shared_bytes: args.shared_bytes,
    };
    let synthesis = kanicuda::synthesize(&request).map_err(|failure| match failure {
        Failure::Located(items) => CliError::Located(stencilc::diag::Diagnostics::new(
            input.source.clone(),
            items,
        )),
        Failure::Plain { message, help } => {
            CliError::new(format!("{message}; nothing was written"), help)
        }
    })?;
    let elapsed = started.elapsed();
    let compiled = compile_output(&synthesis.kernel_text, &input.defines, &args.arch)?;
    if let Some(path) = &args.output {
        crate::cli::paths::write_text(path, &synthesis.text)?;
    }
    if args.json {
        let value = to_json(args, kernel.name.as_str(), &synthesis, elapsed, &compiled);
        out::stdout_text(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ))?;
    } else {
        for line in summary(args, &synthesis, elapsed, &compiled) {
            out::stderr_line(&line);
        }
        if args.output.is_none() {
            out::stdout_text(&synthesis.text)?;
        }
    }
    Ok(())
}

/// Whether NVRTC compiled the output: `Ok(arch)`, or why it did not run.
type Compiled = Result<String, nvrtc::NvrtcError>;

/// Compiles the rewritten kernel with NVRTC when NVRTC loads; a rejection
/// is an error (nothing is written), an absent NVRTC a note.
fn compile_output(
    text: &str,
    defines: &[(String, String)],
    arch: &str,
) -> Result<Compiled, CliError> {
    if let Err(why) = nvrtc::load() {
        return Ok(Err(why));
    }
    let options: Vec<String> = defines.iter().map(|(n, v)| format!("-D{n}={v}")).collect();
    match nvrtc::compile_source(text, arch, &[], &options) {
        Ok(_) => Ok(Ok(arch.to_string())),
        Err(e) => Err(CliError::new(
            format!("NVRTC rejects the rewritten kernel; nothing was written: {e}"),
            "report this with the kernel: the rewritten reads and barriers should compile wherever the original does",
        )),
    }
}

fn launch_json(launch: Launch) -> serde_json::Value {
    json!({ "grid": launch.grid, "block": launch.block })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn to_json(
    args: &SynthArgs,
    kernel: &str,
    s: &Synthesis,
    elapsed: Duration,
    compiled: &Compiled,
) -> serde_json::Value {
    let accesses: Vec<serde_json::Value> = s
        .accesses
        .iter()
        .map(|a| {
            let mut v = plan_json(&a.plan, &a.profile);
            let stats = a.plan.stats();
            if let Some(map) = v.as_object_mut() {
                map.insert("replacement".into(), json!(a.replacement));
                map.insert("chosen_slot".into(), json!(a.chosen));
                map.insert("served".into(), json!(a.served()));
                map.insert("candidates_tested".into(), json!(stats.tested));
                map.insert("ms".into(), json!(ms(stats.elapsed)));
            }
            v
        })
        .collect();
    json!({
        "file": args.file.display().to_string(),
        "kernel": kernel,
        "accesses": accesses,
        "barriers": s.barriers.iter().map(|b| json!({
            "line": b.line,
            "reason": b.reason,
            "hoisted": b.hoisted,
        })).collect::<Vec<_>>(),
        "profiled": s.profiled.iter().map(|l| launch_json(*l)).collect::<Vec<_>>(),
        "verified": s.compared.iter().map(|c| {
            let mut v = launch_json(c.launch);
            if let Some(map) = v.as_object_mut() {
                map.insert("seed".into(), json!(c.seed));
                map.insert("profiled".into(), json!(c.profiled));
                map.insert("elements".into(), json!(c.elements));
            }
            v
        }).collect::<Vec<_>>(),
        "skipped": s.skipped.iter().map(|(l, why)| {
            let mut v = launch_json(*l);
            if let Some(map) = v.as_object_mut() {
                map.insert("why".into(), json!(why));
            }
            v
        }).collect::<Vec<_>>(),
        "nvrtc": match compiled {
            Ok(arch) => json!({ "compiled": true, "arch": arch }),
            Err(why) => json!({ "compiled": false, "why": why.to_string() }),
        },
        "ms": {
            "profile": ms(s.profile_time),
            "search": ms(s.search_time),
            "verify": ms(s.verify_time),
            "total": ms(elapsed),
        },
        "output": args.output.as_ref().map(|p| p.display().to_string()),
        "text": if args.output.is_none() { Some(&s.text) } else { None },
    })
}

/// The report on stderr.
fn summary(args: &SynthArgs, s: &Synthesis, elapsed: Duration, compiled: &Compiled) -> Vec<String> {
    let mut lines = Vec::new();
    let rows: usize = s.accesses.first().map_or(0, |a| a.profile.rows.len());
    lines.push(format!(
        "synth: {}: profiled {} launches ({}), {rows} executions of each marked read",
        args.file.display(),
        s.profiled.len(),
        s.profiled
            .iter()
            .map(|l| describe(*l))
            .collect::<Vec<_>>()
            .join("; ")
    ));
    for a in &s.accesses {
        let stats = a.plan.stats();
        let what = if a.served() {
            format!("-> {}", a.replacement)
        } else {
            "no slot holds its element: left as the global read".to_string()
        };
        lines.push(format!(
            "  {} {what}\n      served on {} of {} profiled executions; {} expressions tested, {:.1} ms",
            a.profile.access,
            a.plan.served,
            a.profile.rows.len(),
            stats.tested,
            ms(stats.elapsed)
        ));
    }
    if s.barriers.is_empty() {
        lines.push("barriers: none added (the kernel's own `__syncthreads()` suffice)".into());
    }
    for b in &s.barriers {
        lines.push(format!(
            "barrier added at line {}: {}{}",
            b.line,
            b.reason,
            b.hoisted
                .as_ref()
                .map(|h| format!(" ({h})"))
                .unwrap_or_default()
        ));
    }
    let elements: usize = s.compared.iter().map(|c| c.elements).sum();
    lines.push(format!(
        "verified: original and rewritten kernel equal on every element ({elements} compared) and race-free on {} launches the profiles did not see{}",
        s.compared.iter().filter(|c| !c.profiled).count(),
        if args.check {
            format!(
                ", and on the {} profiled ones (--check)",
                s.compared.iter().filter(|c| c.profiled).count()
            )
        } else {
            String::new()
        }
    ));
    if args.check {
        for c in &s.compared {
            lines.push(format!(
                "  {} seed {}: {} elements equal{}",
                describe(c.launch),
                c.seed,
                c.elements,
                if c.profiled { " (profiled)" } else { "" }
            ));
        }
    }
    if !s.skipped.is_empty() {
        lines.push(format!(
            "note: {} derived launches left out, the original kernel cannot run them (e.g. {}: {})",
            s.skipped.len(),
            describe(s.skipped[0].0),
            s.skipped[0].1
        ));
    }
    match compiled {
        Ok(arch) => lines.push(format!("NVRTC compiles the rewritten kernel ({arch})")),
        Err(why) => lines.push(format!(
            "note: the rewritten kernel was not compiled: {why}"
        )),
    }
    lines.push(format!(
        "time: {:.0} ms (profile {:.0}, search {:.0}, verify {:.0}){}",
        ms(elapsed),
        ms(s.profile_time),
        ms(s.search_time),
        ms(s.verify_time),
        args.output
            .as_ref()
            .map(|p| format!("; wrote {}", p.display()))
            .unwrap_or_default()
    ));
    lines
}
