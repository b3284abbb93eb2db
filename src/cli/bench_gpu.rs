//! `stencilc bench-gpu`: runs the GPU benchmark set on the CUDA device and writes
//! `RESULTS.md` and `results.json` (see `bench/gpu/README.md`).

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use stencilc::bench::gpu::suite::{
    default_programs_dir, results_json, results_markdown, standard_suite,
};
use stencilc::bench::gpu::{measure, BenchOptions};
use stencilc::exec::cuda::probe;

/// Arguments of `stencilc bench-gpu`.
#[derive(Args, Debug)]
pub struct BenchGpuArgs {
    /// Folder holding the benchmark programs (`j2d5pt.sdsl`, ...).
    #[arg(long, default_value_os_t = default_programs_dir())]
    pub programs: PathBuf,
    /// Folder to write `RESULTS.md` and `results.json` into (created if missing).
    #[arg(long, default_value = "bench/gpu/out")]
    pub out: PathBuf,
    /// Only the cases whose label contains this text (e.g. `j2d9pt f32`).
    #[arg(long)]
    pub filter: Option<String>,
    /// Sweeps timed per measurement (the median is reported).
    #[arg(long, default_value_t = 20)]
    pub sweeps: usize,
    /// Untimed sweeps before each measurement.
    #[arg(long, default_value_t = 3)]
    pub warmup: usize,
    /// Small sizes (2-D 2048², 3-D 128³, 960×540), for a quick check of the set.
    #[arg(long)]
    pub quick: bool,
    /// Fused multiply-adds in every kernel timed (NVRTC `--fmad=true`).
    #[command(flatten)]
    pub fma: crate::cli::args::FmaArgs,
}

/// Runs the set; a case that fails is reported in the results and the others
/// still run. Fails without a CUDA device, or when every case failed.
pub fn run_gpu_bench(args: &BenchGpuArgs) -> anyhow::Result<()> {
    let device = probe().map_err(|e| anyhow::anyhow!("{e}; the GPU benchmarks need one"))?;
    let options = BenchOptions {
        warmup: args.warmup,
        sweeps: args.sweeps,
        fma: args.fma.fma,
    };
    let cases: Vec<_> = standard_suite(&args.programs, args.quick)
        .into_iter()
        .filter(|c| {
            args.filter
                .as_ref()
                .is_none_or(|f| c.label.contains(f.as_str()))
        })
        .collect();
    anyhow::ensure!(!cases.is_empty(), "no benchmark case matches the filter");
    let mut outcomes = Vec::new();
    for case in cases {
        eprintln!("bench-gpu: {}", case.label);
        let outcome = measure(&case, options).map_err(|e| e.to_string());
        match &outcome {
            Ok(r) => eprintln!(
                "  {:.4} ms/sweep (predicted {}){}, {:.0} % of copy, {} vs naive",
                r.stencilc_ms,
                r.predicted
                    .as_ref()
                    .map_or("–".into(), |p| format!("{:.4}", p.sweep_ms)),
                r.iteration_ms.map_or(String::new(), |m| format!(
                    ", {m:.4} ms/iteration (predicted {})",
                    r.predicted
                        .as_ref()
                        .map_or("–".into(), |p| format!("{:.4}", p.iteration_ms))
                )),
                100.0 * r.fraction_of_copy,
                r.speedup_vs_naive
                    .map_or("no naive kernel".into(), |s| format!("{s:.2}x"))
            ),
            Err(why) => eprintln!("  failed: {why}"),
        }
        outcomes.push((case, outcome));
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let markdown = results_markdown(&device, &outcomes);
    let md_path = args.out.join("RESULTS.md");
    stencilc::files::write_whole(&md_path, markdown.as_bytes())
        .with_context(|| format!("writing {}", md_path.display()))?;
    let json_path = args.out.join("results.json");
    let text = serde_json::to_string_pretty(&results_json(&device, &outcomes))?;
    stencilc::files::write_whole(&json_path, text.as_bytes())
        .with_context(|| format!("writing {}", json_path.display()))?;
    eprintln!(
        "bench-gpu: wrote {} and {}",
        md_path.display(),
        json_path.display()
    );
    anyhow::ensure!(
        outcomes.iter().any(|(_, o)| o.is_ok()),
        "every benchmark case failed; see {}",
        md_path.display()
    );
    Ok(())
}
