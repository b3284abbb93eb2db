//! The report of `stencilc explain` (and `Program.explain` in Python): what
//! each GPU kernel of a program would cost on a named device, and why — without
//! a GPU.
//!
//! [`explain`] lowers the program as a run would (same schedule request); for
//! CUDA the kernels are compiled by NVRTC for the device's architecture and
//! assembled by `ptxas -v` (registers, spills, shared and constant memory), when
//! both are found. The model ([`crate::model::cost`]) gives traffic per point,
//! occupancy, the bound and the predicted time; [`warnings`] says what would
//! change it. [`Report`] serialises to the `--json` object, and
//! [`Report::render`] gives the text the command prints.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::driver;
use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::kir::plan::Lowered;
use crate::lower::Target;
use crate::model::build;
use crate::model::ptxas::{self, PtxasFigures};
use crate::model::{self, warnings, Device, KernelCost, KernelSpec, Role};
use crate::schedule::{Schedule, ScheduleRequest, ShmRequest};

/// Why there is no report: what is wrong, and what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplainError {
    /// What is wrong.
    pub message: String,
    /// What to change (in terms of the schedule flags `--block`, `--tile`, `--shm`).
    pub help: String,
}

impl ExplainError {
    fn new(message: impl Into<String>, help: impl Into<String>) -> ExplainError {
        ExplainError {
            message: message.into(),
            help: help.into(),
        }
    }
}

impl std::fmt::Display for ExplainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; {}", self.message, self.help)
    }
}

impl std::error::Error for ExplainError {}

/// One kernel in the report.
#[derive(Clone, Debug, Serialize)]
pub struct KernelReport {
    /// The kernel's name in the generated code.
    pub name: String,
    /// What it computes: a stencil, a stencil with the check fused in, or a
    /// pass of a reduction.
    pub role: Role,
    /// Threads per block, innermost axis first.
    pub block: [u32; 3],
    /// Points each thread computes, innermost axis first.
    pub points_per_thread: [u32; 3],
    /// What `ptxas -v` reported (CUDA, when NVRTC and ptxas were found).
    pub ptxas: Option<PtxasFigures>,
    /// The model's figures for one launch.
    pub cost: KernelCost,
    /// One launch with its loads in flight bounded by ptxas's registers
    /// ([`model::register_bound_time`], what `--ptxas-rank` ranks on),
    /// seconds; with ptxas's figures only.
    pub register_bound_time: Option<f64>,
    /// Launches per iteration (below 1 for a kernel run only when the check
    /// is not due, or for reductions run every few iterations).
    pub launches_per_iteration: f64,
    /// Points per second of one launch, in billions.
    pub gstencils_per_s: f64,
    /// The compulsory bytes' share of the device's copy bandwidth.
    pub fraction_of_copy: f64,
    /// Why the kernel is slow and what would change it, in words.
    pub warnings: Vec<String>,
}

/// The whole report, in the order `--json` prints it.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The program's name.
    pub program: String,
    /// `cuda` or `opencl`.
    pub target: String,
    /// The device modelled.
    pub device: Device,
    /// Every parameter's value.
    pub parameters: BTreeMap<String, serde_json::Value>,
    /// The schedule, as `Schedule::describe` words it (one line per part).
    pub schedule: String,
    /// Where ptxas was, or why there are no ptxas figures.
    pub ptxas: PtxasStatus,
    /// How instructions are counted.
    pub instructions_counted: String,
    /// Every kernel, in launch order.
    pub kernels: Vec<KernelReport>,
    /// Predicted seconds of one sweep (every stencil kernel once).
    pub sweep_seconds: f64,
    /// Predicted seconds of one iteration, reductions and checks included.
    pub iteration_seconds: f64,
    /// An iteration in which the check is due (the fused variant instead of
    /// the plain last stencil kernel, every reduction pass, the read-back);
    /// `None` without reductions.
    pub checked_iteration_seconds: Option<f64>,
    /// Points per second of a sweep, in billions.
    pub gstencils_per_s: f64,
    /// A sweep's compulsory bytes' share of the device's copy bandwidth.
    pub fraction_of_copy: f64,
    /// Notes: schedule notes, why the model chose the schedule, missing figures.
    pub notes: Vec<String>,
    /// Overlapped time tiling's prediction for T = 1..8 (T = 1: untiled).
    pub time_tiling: Vec<model::time_tile::TimeRow>,
}

/// Where ptxas was, or why there are no figures.
#[derive(Clone, Debug, Serialize, Default)]
pub struct PtxasStatus {
    /// The ptxas used.
    pub path: Option<String>,
    /// Why there are no figures (ptxas or NVRTC missing, or failing).
    pub error: Option<String>,
}

const INSTRUCTIONS_COUNTED: &str = "from the kernel IR as sm_90 SASS shows them: arithmetic 1, \
     global access 1 plus 1 per new row address and 1 per new row index, shared or constant \
     access 1, division 10, sqrt 8, other math 20, loop iteration +2, a pure expression met again \
     0; per thread, over its points";

/// The report for `program` bound by `env`, its kernels lowered for `target`
/// with the schedule `request` asks for (the model chooses what it leaves
/// open) and costed on `device`.
pub fn explain(
    program: &Program,
    env: &RunEnv,
    target: Target,
    device: &Device,
    request: &ScheduleRequest,
) -> Result<Report, ExplainError> {
    let (schedule, lowered, mut notes) = schedule_and_lower(program, env, target, device, request)?;
    let mut status = PtxasStatus::default();
    let figures = match target {
        Target::Cuda => ptxas_figures(&lowered, device, &mut status),
        Target::OpenCl => {
            status.error = Some("ptxas figures are given for --target cuda only".into());
            BTreeMap::new()
        }
    };
    if status.error.is_some() {
        notes.push(format!(
            "no ptxas figures ({}); occupancy assumes {} registers per thread",
            status.error.clone().unwrap_or_default(),
            model::ASSUMED_REGISTERS
        ));
    }
    let specs = build::specs(program, &schedule, &lowered, env);
    // The same kernels without shared tiles, to say whether staging pays.
    let unstaged = unstaged_costs(program, request, env, target, device, &specs);

    // Warnings advise against a shape the user gave, not one the model chose.
    let hinted = crate::schedule::hinted_shape(program, request).unwrap_or_default();
    let shape = if (request.block.is_some() || hinted.block.is_some())
        && (request.tile.is_some() || hinted.tile.is_some())
    {
        warnings::ShapeSource::Given
    } else {
        warnings::ShapeSource::Model
    };
    let (kernels, totals) = kernel_reports(&specs, &figures, &unstaged, device, shape)?;
    let Totals {
        sweep,
        mut iteration,
        points,
        bytes,
        mut checked,
    } = totals;
    if lowered.plan.reductions.iter().any(|_| true) {
        let per_check = specs
            .iter()
            .find(|s| !matches!(s.role, Role::Stencil(_)))
            .map_or(0.0, |s| s.per_iteration);
        iteration += model::CHECK_SYNC_US * 1e-6 * per_check;
        checked += model::CHECK_SYNC_US * 1e-6;
    }
    let time_tiling = time_tiling_rows(program, &schedule, env, target, device, &mut notes);
    let parameters = parameters_json(program, env);
    Ok(Report {
        program: program.name.clone(),
        target: format!("{target:?}").to_lowercase(),
        device: *device,
        parameters,
        schedule: schedule.describe(program),
        ptxas: status,
        instructions_counted: if schedule.fma {
            format!("{INSTRUCTIONS_COUNTED}; under --fma a floating-point a * b + c is one FFMA")
        } else {
            INSTRUCTIONS_COUNTED.to_string()
        },
        kernels,
        sweep_seconds: sweep,
        iteration_seconds: iteration,
        checked_iteration_seconds: (!lowered.plan.reductions.is_empty()).then_some(checked),
        gstencils_per_s: rate(points, sweep),
        fraction_of_copy: if sweep > 0.0 {
            bytes / sweep / (device.copy_gb_s * 1e9)
        } else {
            0.0
        },
        notes,
        time_tiling,
    })
}

/// The schedule a run would choose, lowered for `env`'s sizes and held to
/// `device`'s limits, with the notes saying what was refused and why the
/// model chose it.
fn schedule_and_lower(
    program: &Program,
    env: &RunEnv,
    target: Target,
    device: &Device,
    request: &ScheduleRequest,
) -> Result<(Schedule, Lowered, Vec<String>), ExplainError> {
    // `--ptxas-rank` compiles candidates with NVRTC and ptxas.
    let registers: model::rank::Registers<'_> = &crate::exec::cuda::nvrtc::ptxas_registers;
    let choice = driver::choose_gpu(program, request, Some(env), target, device, Some(registers));
    let choice = choice.map_err(|e| {
        ExplainError::new(
            format!("cannot schedule `{}` for the GPU: {e}", program.name),
            "change --block, --tile, --vector, --shm or --ptxas-rank (or the region's pragma) \
             as the message says",
        )
    })?;
    let schedule = choice.schedule;
    let lowered = driver::lower_gpu(program, &schedule, target, Some(env));
    driver::check_fits(&lowered.module, &device.limits()).map_err(|e| {
        ExplainError::new(
            format!("the schedule does not fit the {}: {e}", device.name),
            "choose a schedule within the device's limits (--block, --tile, --shm)",
        )
    })?;
    let mut notes = schedule.notes.clone();
    notes.extend(lowered.plan.notes.iter().cloned());
    notes.extend(
        choice
            .reasons
            .iter()
            .map(|r| format!("schedule chosen by the model: {r}")),
    );
    Ok((schedule, lowered, notes))
}

/// What a sweep and an iteration add up to over the kernels.
struct Totals {
    sweep: f64,
    iteration: f64,
    points: u64,
    bytes: f64,
    checked: f64,
}

/// Each kernel's figures and warnings, and their totals.
fn kernel_reports(
    specs: &[KernelSpec],
    figures: &BTreeMap<String, PtxasFigures>,
    unstaged: &[Option<KernelCost>],
    device: &Device,
    shape: warnings::ShapeSource,
) -> Result<(Vec<KernelReport>, Totals), ExplainError> {
    let mut kernels = Vec::new();
    let (mut sweep, mut iteration, mut points, mut bytes) = (0.0, 0.0, 0u64, 0.0);
    let mut checked = 0.0;
    for (i, spec) in specs.iter().enumerate() {
        let fig = figures.get(&spec.name).cloned();
        let cost = model::cost(spec, device, fig.as_ref().map(|f| f.registers)).map_err(|e| {
            ExplainError::new(
                format!(
                    "kernel `{}` does not fit the {}: {e}",
                    spec.name, device.name
                ),
                "use a smaller --block or --tile, or --shm none",
            )
        })?;
        let warnings = warnings::warnings(
            spec,
            &cost,
            device,
            unstaged.get(i).and_then(Option::as_ref),
            fig.as_ref(),
            shape,
        );
        let copy_bytes = compulsory_bytes(spec) * cost.points as f64;
        if matches!(spec.role, Role::Stencil(_)) {
            sweep += cost.time;
            points += cost.points;
            bytes += copy_bytes;
        }
        iteration += cost.time * spec.per_iteration;
        checked += match spec.role {
            // A plain kernel the fused variant replaces when the check is due.
            Role::Stencil(_) if spec.per_iteration < 1.0 => 0.0,
            _ => cost.time,
        };
        let register_bound_time = fig
            .as_ref()
            .map(|_| model::register_bound_time(spec, &cost));
        kernels.push(KernelReport {
            name: spec.name.clone(),
            role: spec.role.clone(),
            block: spec.block,
            points_per_thread: spec.points_per_thread,
            ptxas: fig,
            register_bound_time,
            gstencils_per_s: rate(cost.points, cost.time),
            fraction_of_copy: copy_bytes / cost.time.max(1e-30) / (device.copy_gb_s * 1e9),
            launches_per_iteration: spec.per_iteration,
            cost,
            warnings,
        });
    }
    let totals = Totals {
        sweep,
        iteration,
        points,
        bytes,
        checked,
    };
    Ok((kernels, totals))
}

/// Overlapped time tiling's prediction for T = 1..8, or a note saying why
/// there is none.
fn time_tiling_rows(
    program: &Program,
    schedule: &Schedule,
    env: &RunEnv,
    target: Target,
    device: &Device,
    notes: &mut Vec<String>,
) -> Vec<model::time_tile::TimeRow> {
    match model::time_tile::untileable(program, env) {
        // A program that cannot tile gets one line, not a table of T = 1.
        Some(why) => {
            notes.push(format!("no time-tiling table: {why}"));
            Vec::new()
        }
        None => match model::time_tile::time_table(
            program,
            schedule,
            env,
            target,
            device,
            model::time_tile::MAX_TIME_STEPS,
        ) {
            Ok(rows) => rows,
            Err(why) => {
                notes.push(format!("no time-tiling prediction: {why}"));
                Vec::new()
            }
        },
    }
}

/// Every parameter's value as JSON.
fn parameters_json(program: &Program, env: &RunEnv) -> BTreeMap<String, serde_json::Value> {
    let mut parameters = BTreeMap::new();
    for (p, value) in program.params.iter().zip(env.params()) {
        let json = match *value {
            // The shortest decimal that is this float (0.1, not the double
            // 0.10000000149011612 it widens to).
            crate::ir::Value::Float(v) => {
                serde_json::json!(v.to_string().parse::<f64>().unwrap_or(f64::from(v)))
            }
            crate::ir::Value::Double(v) => serde_json::json!(v),
            _ => serde_json::json!(value.as_i64()),
        };
        parameters.insert(p.name.clone(), json);
    }
    parameters
}

fn rate(points: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        points as f64 / seconds / 1e9
    } else {
        0.0
    }
}

/// One read and one write per point per level the kernel touches, as
/// `bench-gpu` counts effective bytes.
fn compulsory_bytes(spec: &KernelSpec) -> f64 {
    let mut levels: Vec<(&str, usize)> = Vec::new();
    for (name, elem) in spec
        .reads
        .iter()
        .chain(&spec.writes)
        .map(|a| (a.level.as_str(), a.elem))
        .chain(spec.tiles.iter().map(|t| (t.level.as_str(), t.elem)))
    {
        if !levels.iter().any(|(n, _)| *n == name) {
            levels.push((name, elem));
        }
    }
    levels.iter().map(|(_, e)| *e as f64).sum()
}

/// NVRTC → PTX → `ptxas -v`; on any failure the status says why.
fn ptxas_figures(
    lowered: &Lowered,
    device: &Device,
    status: &mut PtxasStatus,
) -> BTreeMap<String, PtxasFigures> {
    let path = match ptxas::find() {
        Ok(p) => p,
        Err(e) => {
            status.error = Some(e.to_string());
            return BTreeMap::new();
        }
    };
    status.path = Some(path.display().to_string());
    match assemble(lowered, device, &path) {
        Ok(figures) => figures,
        Err(e) => {
            status.error = Some(e.to_string());
            BTreeMap::new()
        }
    }
}

fn assemble(
    lowered: &Lowered,
    device: &Device,
    ptxas_path: &Path,
) -> Result<BTreeMap<String, PtxasFigures>, ptxas::PtxasError> {
    // The module's own NVRTC options: `--fmad=true` under `--fma`.
    crate::exec::cuda::nvrtc::ptxas_figures(ptxas_path, &lowered.module, device.arch)
}

/// Per spec, the cost of the same kernel under `--shm none` (same block and
/// points per thread) where it has tiles.
fn unstaged_costs(
    program: &Program,
    request: &ScheduleRequest,
    env: &RunEnv,
    target: Target,
    device: &Device,
    specs: &[KernelSpec],
) -> Vec<Option<KernelCost>> {
    if specs.iter().all(|s| s.tiles.is_empty()) {
        return vec![None; specs.len()];
    }
    let plain_request = ScheduleRequest {
        shm: ShmRequest::None,
        ..request.clone()
    };
    let Ok(schedule) = driver::sized_schedule(program, &plain_request, env) else {
        return vec![None; specs.len()];
    };
    let lowered = driver::lower_gpu(program, &schedule, target, Some(env));
    let mut status = PtxasStatus::default();
    let figures = match target {
        Target::Cuda => ptxas_figures(&lowered, device, &mut status),
        Target::OpenCl => BTreeMap::new(),
    };
    let plain = build::specs(program, &schedule, &lowered, env);
    specs
        .iter()
        .zip(plain.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(spec, other)| {
            let other = other.filter(|o| !spec.tiles.is_empty() && o.name == spec.name)?;
            let registers = figures.get(&other.name).map(|f| f.registers);
            model::cost(other, device, registers).ok()
        })
        .collect()
}

impl Report {
    /// The text `stencilc explain` prints.
    pub fn render(&self) -> String {
        render(self)
    }
}

fn render(report: &Report) -> String {
    let d = &report.device;
    let mut out = format!(
        "explain `{}` for the {} ({}, {} SMs at {} GHz, copy {:.0} GB/s{}) — {}\n",
        report.program,
        d.name,
        d.arch,
        d.sms,
        d.clock_ghz,
        d.copy_gb_s,
        if d.copy_measured {
            " measured"
        } else {
            " estimated"
        },
        report.target
    );
    let params: Vec<String> = report
        .parameters
        .iter()
        .map(|(k, v)| format!("{k} = {v}"))
        .collect();
    if !params.is_empty() {
        out += &format!("parameters: {}\n", params.join(", "));
    }
    for line in report.schedule.lines() {
        out += &format!("schedule: {line}\n");
    }
    if let (Some(p), None) = (&report.ptxas.path, &report.ptxas.error) {
        out += &format!(
            "ptxas: {p}
"
        );
    }
    for note in &report.notes {
        out += &format!("note: {note}\n");
    }
    out += &format!("instructions counted {}\n", report.instructions_counted);
    for k in &report.kernels {
        out += &render_kernel(k);
    }
    out += &render_totals(report);
    out
}

/// One kernel's lines of the text report.
fn render_kernel(k: &KernelReport) -> String {
    let mut out = String::new();
    let c = &k.cost;
    let role = match &k.role {
        Role::Stencil(s) => format!("stencil {s}"),
        Role::FusedCheck(s) => format!("stencil {s} with the check fused in"),
        Role::ReductionPart(r) => format!("reduction {r}, partials"),
        Role::ReductionFinish(r) => format!("reduction {r}, final pass"),
    };
    out += &format!(
        "\nkernel {} ({role}): {} points, block {}x{}x{}, {} point(s) per thread, {} blocks\n",
        k.name,
        c.points,
        k.block[0],
        k.block[1],
        k.block[2],
        k.points_per_thread.iter().product::<u32>(),
        c.blocks
    );
    if let Some(f) = &k.ptxas {
        out += &format!(
            "  ptxas:     {} registers, {} B spill stores, {} B spill loads, {} B shared, {} B constant\n",
            f.registers, f.spill_stores, f.spill_loads, f.shared_bytes, f.constant_bytes
        );
    }
    out += &format!(
        "  occupancy: {} blocks per SM, {:.0} % of the threads (limited by {}{})\n",
        c.occupancy.blocks_per_sm,
        c.occupancy.fraction * 100.0,
        c.occupancy.limiter,
        if c.occupancy.registers_from_ptxas {
            ""
        } else {
            "; registers assumed"
        }
    );
    out += &format!(
        "  per point: DRAM {:.2} B (halo overfetch {:.2}), L2->SM {:.2} B, shared {:.2} B, \
         L1 {:.3} wavefronts, {:.1} instructions; {} memory round(s) per thread\n",
        c.dram_bytes_per_point,
        c.dram_overfetch_per_point,
        c.l2_bytes_per_point,
        c.shared_bytes_per_point,
        c.l1_wavefronts_per_point,
        c.instructions_per_point,
        c.memory_rounds
    );
    let t = &c.times;
    let ms = |s: f64| s * 1e3;
    out += &format!(
        "  time:      {:.4} ms per launch, bound by {} (DRAM {:.4}, L2 {:.4}, L1 {:.4}, \
         issue {:.4}, FP64 {:.4}, latency {:.4} ms)\n",
        ms(c.time),
        c.bound.describe(),
        ms(t.dram),
        ms(t.l2),
        ms(t.l1),
        ms(t.issue),
        ms(t.fp64),
        ms(t.latency)
    );
    if let (Some(bound), Role::Stencil(_)) = (k.register_bound_time, &k.role) {
        out += &format!(
            "  register-bound: {:.4} ms per launch with its loads in flight bounded by \
             ptxas's registers (what --ptxas-rank ranks on)\n",
            ms(bound)
        );
    }
    if matches!(k.role, Role::Stencil(_)) && k.launches_per_iteration < 1.0 {
        out += &format!(
            "  runs:      {:.4} times per iteration\n",
            k.launches_per_iteration
        );
    }
    if matches!(k.role, Role::Stencil(_)) {
        out += &format!(
            "  rate:      {:.1} GStencil/s, {:.0} % of the copy bandwidth\n",
            k.gstencils_per_s,
            k.fraction_of_copy * 100.0
        );
    } else {
        out += &format!(
            "  runs:      {:.4} times per iteration\n",
            k.launches_per_iteration
        );
    }
    for w in &k.warnings {
        out += &format!("  warning: {w}\n");
    }
    out
}

/// The totals and the time-tiling table of the text report.
fn render_totals(report: &Report) -> String {
    let d = &report.device;
    let mut out = String::new();
    out += &format!(
        "\nper sweep: {:.4} ms, {:.1} GStencil/s, {:.0} % of the copy bandwidth; per iteration \
         (reductions and checks included): {:.4} ms\n",
        report.sweep_seconds * 1e3,
        report.gstencils_per_s,
        report.fraction_of_copy * 100.0,
        report.iteration_seconds * 1e3
    );
    if let Some(checked) = report.checked_iteration_seconds {
        out += &format!(
            "an iteration without the check: {:.4} ms; with the check: {:.4} ms\n",
            report.sweep_seconds * 1e3,
            checked * 1e3
        );
    }
    if !report.time_tiling.is_empty() {
        out += &format!(
            "\ntime tiling (T iterations per launch, predicted for the {}; T = 1 is untiled):\n",
            d.name
        );
        out += "   T  ms/iteration   gain  DRAM B/pt/it  cells/pt/it  shared B  blocks/SM  bound\n";
        for row in &report.time_tiling {
            let num = |v: Option<f64>, digits: usize| {
                v.map_or("-".to_string(), |v| format!("{v:.digits$}"))
            };
            out += &format!(
                "  {:>2}  {:>12}  {:>5}  {:>12}  {:>11}  {:>8}  {:>9}  {}\n",
                row.steps,
                num(row.iteration_ms, 4),
                row.gain.map_or("-".to_string(), |g| format!("{g:.2}x")),
                num(row.dram_bytes_per_point, 2),
                num(row.computed_per_point, 2),
                row.shared_bytes.map_or("-".to_string(), |b| b.to_string()),
                row.blocks_per_sm.map_or("-".to_string(), |b| b.to_string()),
                row.bound
            );
        }
    }
    out
}
