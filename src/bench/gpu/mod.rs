//! GPU benchmarks measured side by side in one run, on one CUDA device:
//! stencilc's kernels, the hand-written naive kernel for the same computation
//! (`bench/gpu/naive.cu`, compiled with NVRTC here), and the device-to-device
//! copy bandwidth (`cuMemcpyDtoD` of the same number of bytes).
//!
//! Every measurement is the median over `sweeps` sweeps after `warmup` sweeps,
//! each timed with CUDA events with the data on the device. Programs with
//! reductions or a check are also timed by whole iterations, as `run --backend
//! cuda` executes them (stencils, reductions when the check is due, the value
//! read back and the check evaluated). Beside each measured time stands the
//! performance model's prediction ([`crate::model::predict`]) for the same
//! schedule and sizes. See `bench/gpu/README.md` for the command that runs the
//! whole set.

pub mod naive;
pub mod predicted;
pub mod suite;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaStream};
use serde::Serialize;

use crate::analysis::Footprint;
use crate::bench::gpu::predicted::predict_with_ptxas;
use crate::data::{Bindings, Buffer, ExecError, FieldState};
use crate::exec::cuda::{
    driver_error, launch_function, nvrtc, runtime, timing_event, DeviceBuffer, Session,
};
use crate::exec::host_plan::{GpuDevice, KernelArg, Resident};
use crate::ir::env::RunEnv;
use crate::ir::{Program, ScalarType, Value};
use crate::lower::{lower_for, Lowered, Target};
use crate::model::predict::{preset_for_name, Prediction};
use crate::model::{Device, PredictError};
use crate::schedule::{Schedule, ScheduleError, ScheduleRequest};

/// The element type a case runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Precision {
    /// A float program as written.
    F32,
    /// A float program turned to double by [`suite::float_to_double`].
    F64,
    /// The program as written, whatever its types.
    Native,
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
            Precision::Native => "native",
        })
    }
}

/// One benchmark case: a program file, its parameter values, a precision and a
/// schedule.
#[derive(Clone, Debug, Serialize)]
pub struct BenchCase {
    /// A label for reports (`j2d5pt f32 default`).
    pub label: String,
    /// The benchmark's name (the file stem), which selects its naive kernels.
    pub name: String,
    /// The `.sdsl` file.
    pub path: PathBuf,
    /// The element type to run in.
    pub precision: Precision,
    /// Parameter values by name.
    pub params: Vec<(String, f64)>,
    /// A label for the schedule (`default`, `shm-none`, `thorin-tables`).
    pub schedule_label: String,
    /// The schedule asked for.
    #[serde(skip)]
    pub request: ScheduleRequest,
}

/// How many sweeps to run, and how to build.
#[derive(Clone, Copy, Debug)]
pub struct BenchOptions {
    /// Sweeps run before timing.
    pub warmup: usize,
    /// Sweeps timed (the median is reported).
    pub sweeps: usize,
    /// `--fma`: stencilc's kernels and the naive ones built with
    /// `--fmad=true`.
    pub fma: bool,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            warmup: 3,
            sweeps: 20,
            fma: false,
        }
    }
}

/// What one case measured.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// The GPU, with its architecture.
    pub device: String,
    /// The schedule stencilc used, one line per stencil.
    pub schedule: String,
    /// Points updated per sweep (all stencils' subsets).
    pub points: u64,
    /// Effective bytes per sweep: one read and one write per point per field
    /// level each stencil reads or writes.
    pub bytes: u64,
    /// stencilc's median time per sweep, in ms.
    pub stencilc_ms: f64,
    /// The mean time of one whole iteration (stencils, reductions when the
    /// check is due, the check), in ms: for programs with reductions or a check.
    pub iteration_ms: Option<f64>,
    /// The model's prediction for the same schedule and sizes (`None` when the
    /// model could not cost a kernel: `prediction_error` says why).
    pub predicted: Option<Prediction>,
    /// Why there is no prediction.
    pub prediction_error: Option<String>,
    /// `stencilc_ms / predicted.sweep_ms`.
    pub sweep_measured_over_predicted: Option<f64>,
    /// `iteration_ms / predicted.iteration_ms`.
    pub iteration_measured_over_predicted: Option<f64>,
    /// The naive kernels' median time per sweep, in ms (when `naive.cu` has them).
    pub naive_ms: Option<f64>,
    /// The median time of a device-to-device copy of `bytes / 2`, in ms.
    pub copy_ms: f64,
    /// Points per second, in billions.
    pub gstencils_per_s: f64,
    /// `bytes` per second, in GB/s.
    pub effective_gb_per_s: f64,
    /// The copy's bandwidth (it reads and writes `bytes / 2`), in GB/s.
    pub copy_gb_per_s: f64,
    /// `effective_gb_per_s / copy_gb_per_s`.
    pub fraction_of_copy: f64,
    /// `naive_ms / stencilc_ms` (above 1: stencilc is faster).
    pub speedup_vs_naive: Option<f64>,
    /// After one sweep from the same data, the largest difference between
    /// stencilc's and the naive kernels' fields, relative to the largest magnitude.
    pub max_rel_diff_vs_naive: Option<f64>,
}

impl BenchResult {
    /// Fills the measured/predicted ratios from the figures.
    pub fn with_ratios(mut self) -> Self {
        let ratio = |measured: f64, predicted: f64| {
            (predicted > 0.0 && measured.is_finite()).then(|| measured / predicted)
        };
        self.sweep_measured_over_predicted = self
            .predicted
            .as_ref()
            .and_then(|p| ratio(self.stencilc_ms, p.sweep_ms));
        self.iteration_measured_over_predicted = match (&self.predicted, self.iteration_ms) {
            (Some(p), Some(m)) => ratio(m, p.iteration_ms),
            _ => None,
        };
        self
    }
}

fn failed(msg: impl Into<String>) -> ExecError {
    ExecError::Failed(msg.into())
}

/// Reads, retypes and parses a case's program.
pub fn load_program(case: &BenchCase) -> Result<Program, ExecError> {
    let text =
        crate::source::read_source(&case.path, crate::source::MAX_SOURCE_BYTES).map_err(|e| {
            failed(format!(
                "cannot read {}: {e}; pass the folder of the benchmark programs \
             (bench/programs)",
                case.path.display()
            ))
        })?;
    let text = match case.precision {
        Precision::F64 => suite::float_to_double(&text),
        Precision::F32 | Precision::Native => text,
    };
    let source = crate::source::SourceFile::new(case.path.display().to_string(), text);
    let program = crate::front::parse_program(source).map_err(|d| failed(format!("{}", d)))?;
    if case.precision == Precision::F32 && program.fields.iter().any(|f| f.ty != ScalarType::Float)
    {
        return Err(failed(format!(
            "{} has fields that are not float; run it as `native`",
            case.path.display()
        )));
    }
    Ok(program)
}

/// The run environment of a case: its parameter values, by name.
pub fn case_env(program: &Program, case: &BenchCase) -> Result<RunEnv, ExecError> {
    let mut params = Vec::new();
    for p in &program.params {
        let value = case
            .params
            .iter()
            .find(|(n, _)| *n == p.name)
            .ok_or_else(|| {
                failed(format!(
                    "case `{}` gives no value for `{}`",
                    case.label, p.name
                ))
            })?
            .1;
        params.push(Value::Double(value).cast(p.ty));
    }
    crate::exec::bind(program, &Bindings { params })
}

/// The model's prediction for `lowered` on the preset matching the CUDA
/// device `device_name` (the H100 SXM preset when none matches, with a note),
/// with ptxas's registers where ptxas is found, else assumed ones.
pub fn predict_lowered(
    program: &Program,
    schedule: &Schedule,
    lowered: &Lowered,
    env: &RunEnv,
    device_name: &str,
) -> Result<Prediction, PredictError> {
    let (device, unknown) = match preset_for_name(device_name) {
        Some(d) => (d, false),
        None => (Device::default_device(), true),
    };
    let mut prediction = predict_with_ptxas(program, schedule, lowered, env, device)?;
    if unknown {
        let note = format!(
            "no preset for `{device_name}`: predicted for the {}",
            device.name
        );
        prediction.note = Some(match prediction.note {
            Some(n) => format!("{note}; {n}"),
            None => note,
        });
    }
    Ok(prediction)
}

/// The model's prediction for a case (no GPU needed): its program, schedule
/// and sizes as [`measure`] runs them, on the preset for `device_name`.
pub fn predict_case(
    case: &BenchCase,
    device_name: &str,
) -> Result<Prediction, CasePredictionError> {
    let program = load_program(case)?;
    let env = case_env(&program, case)?;
    let schedule = case_schedule(&program, case, &env, device_name, false)?;
    let lowered = lower_for(&program, &schedule, Target::Cuda, Some(&env));
    Ok(predict_lowered(
        &program,
        &schedule,
        &lowered,
        &env,
        device_name,
    )?)
}

/// Why a case has no prediction.
#[derive(Debug, thiserror::Error)]
pub enum CasePredictionError {
    /// Its program did not load or its sizes did not bind.
    #[error(transparent)]
    Setup(#[from] ExecError),
    /// Its schedule request is invalid.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// A kernel of its schedule does not fit the device.
    #[error(transparent)]
    Predict(#[from] PredictError),
}

/// A case's schedule as `stencilc run` chooses it: what the case's request
/// fixes, the rest chosen by the model for the preset of `device_name`
/// (counting contracted multiply-adds under `fma`).
fn case_schedule(
    program: &Program,
    case: &BenchCase,
    env: &RunEnv,
    device_name: &str,
    fma: bool,
) -> Result<Schedule, ScheduleError> {
    let device = preset_for_name(device_name).unwrap_or_else(crate::model::Device::default_device);
    let request = ScheduleRequest {
        fma,
        ..case.request.clone()
    };
    crate::driver::choose_gpu(program, &request, Some(env), Target::Cuda, device, None)
        .map(|chosen| chosen.schedule)
}

/// Whether a program's iteration is more than its sweep (reductions or a check).
pub fn has_iteration_work(program: &Program) -> bool {
    program
        .iterate
        .as_ref()
        .is_some_and(|i| !i.reductions.is_empty() || i.check.is_some())
}

/// Deterministic inputs in [0.5, 1.5): every level of a field gets the same data.
fn initial_state(program: &Program, env: &RunEnv) -> FieldState {
    let fields = program
        .fields
        .iter()
        .enumerate()
        .map(|(f, field)| {
            let len: usize = env.grid_dims()[field.grid.0].iter().product();
            let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ (f as u64 + 1).wrapping_mul(0x2545_F491);
            let mut next = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                0.5 + (seed >> 11) as f64 / (1u64 << 53) as f64
            };
            let buffer = match field.ty {
                ScalarType::Float => Buffer::Float((0..len).map(|_| next() as f32).collect()),
                ScalarType::Double => Buffer::Double((0..len).map(|_| next()).collect()),
                ScalarType::Int => Buffer::Int((0..len).map(|_| (next() * 100.0) as i32).collect()),
                ScalarType::Long => {
                    Buffer::Long((0..len).map(|_| (next() * 100.0) as i64).collect())
                }
            };
            vec![buffer; field.levels()]
        })
        .collect();
    FieldState { fields }
}

/// Points and effective bytes per sweep.
fn traffic(program: &Program, env: &RunEnv) -> (u64, u64) {
    let (mut points, mut bytes) = (0u64, 0u64);
    for stencil in program.iterate.iter().flat_map(|i| &i.stencils) {
        for part in &stencil.parts {
            let count: u64 = env
                .subset_box(&part.subset)
                .iter()
                .map(|(lo, hi)| (hi - lo + 1).max(0) as u64)
                .product();
            let fp = Footprint::of_part(program, part);
            let level_bytes: u64 = fp
                .reads
                .iter()
                .chain(&fp.writes)
                .map(|level| program.fields[level.field.0].ty.size_bytes() as u64)
                .sum();
            points += count;
            bytes += count * level_bytes;
        }
    }
    (points, bytes)
}

/// Times `sweeps` calls of `sweep` after `warmup` untimed ones, each between
/// two events on `stream`; returns the median in ms.
fn median_ms(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    options: BenchOptions,
    mut sweep: impl FnMut() -> Result<(), ExecError>,
) -> Result<f64, ExecError> {
    for _ in 0..options.warmup {
        sweep()?;
    }
    let sweeps = options.sweeps.max(1);
    let mut events = Vec::with_capacity(sweeps + 1);
    for _ in 0..=sweeps {
        events.push(timing_event(ctx)?);
    }
    events[0]
        .record(stream)
        .map_err(driver_error("recording an event"))?;
    for k in 0..sweeps {
        sweep()?;
        events[k + 1]
            .record(stream)
            .map_err(driver_error("recording an event"))?;
    }
    stream.synchronize().map_err(driver_error("synchronize"))?;
    let mut times = Vec::with_capacity(sweeps);
    for pair in events.windows(2) {
        times.push(
            pair[0]
                .elapsed_ms(&pair[1])
                .map_err(driver_error("reading an event"))? as f64,
        );
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// Runs `step` `warmup` times untimed, then `count` times between two events
/// on `stream`; returns the elapsed time in ms (host waits inside `step`, such
/// as a reduction's read-back, count).
fn elapsed_ms(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    warmup: usize,
    count: u64,
    mut step: impl FnMut() -> Result<(), ExecError>,
) -> Result<f64, ExecError> {
    for _ in 0..warmup {
        step()?;
    }
    let (start, end) = (timing_event(ctx)?, timing_event(ctx)?);
    start
        .record(stream)
        .map_err(driver_error("recording an event"))?;
    for _ in 0..count {
        step()?;
    }
    end.record(stream)
        .map_err(driver_error("recording an event"))?;
    stream.synchronize().map_err(driver_error("synchronize"))?;
    Ok(start
        .elapsed_ms(&end)
        .map_err(driver_error("reading an event"))? as f64)
}

/// The naive sweep of a case on the device: compiled kernels, their resolved
/// arguments and the field levels they run on.
struct NaiveSweep {
    functions: Vec<CudaFunction>,
    args: Vec<Vec<naive::Resolved>>,
    levels: Vec<Vec<DeviceBuffer>>,
    groups: [u32; 3],
    block: [u32; 3],
}

impl NaiveSweep {
    fn run(&mut self, stream: &CudaStream, env: &RunEnv) -> Result<(), ExecError> {
        for (function, args) in self.functions.iter().zip(&self.args) {
            let args: Vec<KernelArg<'_, DeviceBuffer>> = args
                .iter()
                .map(|a| match *a {
                    naive::Resolved::Level(f, l) => KernelArg::Buffer(&self.levels[f][l]),
                    naive::Resolved::Param(p) => KernelArg::Value(env.params()[p]),
                })
                .collect();
            launch_function(stream, function, self.groups, self.block, &args)?;
        }
        for list in &mut self.levels {
            list.rotate_left(1);
        }
        Ok(())
    }
}

/// Measures one case on the CUDA device. Fails with [`ExecError::Unavailable`]
/// ("no CUDA driver ...") on a machine without one.
pub fn measure(case: &BenchCase, options: BenchOptions) -> Result<BenchResult, ExecError> {
    let program = load_program(case)?;
    let env = case_env(&program, case)?;
    let rt = runtime()?
        .lock()
        .map_err(|_| ExecError::Unavailable("CUDA runtime poisoned".into()))?;
    let device = format!("{} ({})", rt.name, rt.arch);
    let (ctx, stream, arch) = (rt.ctx.clone(), rt.stream.clone(), rt.arch.clone());
    let schedule = case_schedule(&program, case, &env, &device, options.fma)
        .map_err(|e| failed(e.to_string()))?;
    let lowered = lower_for(&program, &schedule, Target::Cuda, Some(&env));
    let mut session = Session {
        rt,
        module: None,
        timer: None,
    };
    crate::lower::check_limits(&lowered.module, &session.limits())
        .map_err(|e| failed(e.to_string()))?;
    session.compile(&lowered.module)?;
    let state = initial_state(&program, &env);
    let mut resident = Resident::upload(&mut session, &program, &lowered, &env, &state)?;

    // The naive sweep, checked against stencilc's after one sweep from the same data.
    let mut naive_sweep = naive_sweep(
        case,
        &program,
        &env,
        &state,
        &mut session,
        &ctx,
        &arch,
        options.fma,
    )?;
    drop(state);
    let max_rel_diff_vs_naive = match &mut naive_sweep {
        None => None,
        Some(naive) => {
            resident.stencils(&mut session, &lowered.plan, &env)?;
            resident.rotate();
            naive.run(&stream, &env)?;
            let mut ours = initial_state_shape(&program, &env);
            resident.download(&mut session, &mut ours)?;
            let mut theirs = initial_state_shape(&program, &env);
            for (f, list) in naive.levels.iter().enumerate() {
                for (l, buf) in list.iter().enumerate() {
                    session.download(buf, &mut theirs.fields[f][l])?;
                }
            }
            Some(max_rel_diff(&program, &ours, &theirs))
        }
    };

    let plan = &lowered.plan;
    let stencilc_ms = median_ms(&ctx, &stream, options, || {
        resident.stencils(&mut session, plan, &env)?;
        resident.rotate();
        Ok(())
    })?;
    let iteration_ms = if has_iteration_work(&program) {
        // Iterations numbered from 1, as `run` numbers them, so that the check
        // falls due every `every` iterations; the check is evaluated but does
        // not stop the timing.
        let mut k = 0u64;
        let iterations = options.sweeps.max(1) as u64;
        let iterations = match env.every() {
            Some(every) if every > 1 => iterations.div_ceil(every) * every,
            _ => iterations,
        };
        let total = elapsed_ms(&ctx, &stream, options.warmup, iterations, || {
            k += 1;
            let due = match env.every() {
                Some(every) => every > 0 && k % every == 0,
                None => true,
            };
            // As `run` does: the fused-check variant of the last stencil kernel
            // when the check is due, then the rest of the reductions.
            if let Some(values) = resident.iteration(&mut session, plan, &env, due)? {
                if let Some(check) = program.iterate.as_ref().and_then(|i| i.check.as_ref()) {
                    let _ = env.eval_with(&check.cond, &program.tables, &[], &values);
                }
            }
            resident.rotate();
            Ok(())
        })?;
        Some(total / iterations as f64)
    } else {
        None
    };
    let naive_ms = match &mut naive_sweep {
        None => None,
        Some(naive) => Some(median_ms(&ctx, &stream, options, || {
            naive.run(&stream, &env)
        })?),
    };
    drop(naive_sweep);
    drop(resident);

    let (points, bytes) = traffic(&program, &env);
    let (copy_ms, half) = copy_ms(&ctx, &stream, options, bytes)?;

    let (predicted, prediction_error) =
        match predict_lowered(&program, &schedule, &lowered, &env, &session.rt.name) {
            Ok(p) => (Some(p), None),
            Err(e) => (None, Some(e.to_string())),
        };
    let seconds = stencilc_ms / 1e3;
    let effective_gb_per_s = bytes as f64 / seconds / 1e9;
    let copy_gb_per_s = 2.0 * half as f64 / (copy_ms / 1e3) / 1e9;
    Ok(BenchResult {
        device,
        schedule: schedule.describe(&program),
        points,
        bytes,
        stencilc_ms,
        iteration_ms,
        predicted,
        prediction_error,
        sweep_measured_over_predicted: None,
        iteration_measured_over_predicted: None,
        naive_ms,
        copy_ms,
        gstencils_per_s: points as f64 / seconds / 1e9,
        effective_gb_per_s,
        copy_gb_per_s,
        fraction_of_copy: effective_gb_per_s / copy_gb_per_s,
        speedup_vs_naive: naive_ms.map(|n| n / stencilc_ms),
        max_rel_diff_vs_naive,
    }
    .with_ratios())
}

/// The hand-written naive kernels of `case`, compiled and given their own
/// copy of `state` on the device (`None` when the case has none).
#[allow(clippy::too_many_arguments)]
fn naive_sweep(
    case: &BenchCase,
    program: &Program,
    env: &RunEnv,
    state: &FieldState,
    session: &mut Session,
    ctx: &Arc<CudaContext>,
    arch: &str,
    fma: bool,
) -> Result<Option<NaiveSweep>, ExecError> {
    let sweep = match naive::recipe(&case.name) {
        None => None,
        Some(launches) => {
            let args = naive::resolve(program, launches)?;
            let ty = program.fields[0].ty;
            let base = if fma {
                crate::back::cuda::NVRTC_FMA_OPTIONS
            } else {
                crate::back::cuda::NVRTC_OPTIONS
            };
            let compiled =
                nvrtc::compile_source(naive::SOURCE, arch, base, &[naive::real_define(ty)])?;
            let module = ctx
                .load_module(cudarc::nvrtc::Ptx::from_src(compiled.ptx))
                .map_err(driver_error("loading the naive kernels"))?;
            let mut functions = Vec::new();
            for launch in launches {
                functions.push(
                    module
                        .load_function(launch.kernel)
                        .map_err(driver_error("finding a naive kernel"))?,
                );
            }
            let mut levels = Vec::new();
            for (f, field) in program.fields.iter().enumerate() {
                let mut list = Vec::new();
                for data in &state.fields[f] {
                    let mut buf = session.alloc(field.ty, data.len())?;
                    session.upload(&mut buf, data)?;
                    list.push(buf);
                }
                levels.push(list);
            }
            let (groups, block) = naive::launch_shape(program, env);
            Some(NaiveSweep {
                functions,
                args,
                levels,
                groups,
                block,
            })
        }
    };
    Ok(sweep)
}

/// The median time of a device-to-device copy of `bytes` bytes (half read,
/// half written), and the half's size.
fn copy_ms(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    options: BenchOptions,
    bytes: u64,
) -> Result<(f64, usize), ExecError> {
    let half = (bytes / 2).max(1) as usize;
    let oom = |e| {
        failed(format!(
            "CUDA: could not allocate 2 x {half} bytes for the copy ({e}); use smaller sizes"
        ))
    };
    let src = stream.alloc_zeros::<u8>(half).map_err(oom)?;
    let mut dst = stream.alloc_zeros::<u8>(half).map_err(oom)?;
    let copy_ms = median_ms(ctx, stream, options, || {
        stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(driver_error("device-to-device copy"))
    })?;
    Ok((copy_ms, half))
}

/// Zeroed buffers of every field level's shape, to download into.
fn initial_state_shape(program: &Program, env: &RunEnv) -> FieldState {
    FieldState {
        fields: program
            .fields
            .iter()
            .map(|f| {
                let len: usize = env.grid_dims()[f.grid.0].iter().product();
                vec![Buffer::zeros(f.ty, len); f.levels()]
            })
            .collect(),
    }
}

/// The largest difference between the newest levels of two states, relative to
/// the largest magnitude in `a`.
fn max_rel_diff(program: &Program, a: &FieldState, b: &FieldState) -> f64 {
    let (mut diff, mut scale) = (0.0f64, 0.0f64);
    for (f, field) in program.fields.iter().enumerate() {
        let newest = field.levels() - 1;
        let (x, y) = (&a.fields[f][newest], &b.fields[f][newest]);
        for i in 0..x.len() {
            let (u, v) = (x.get(i).as_f64(), y.get(i).as_f64());
            scale = scale.max(u.abs());
            diff = diff.max((u - v).abs());
        }
    }
    diff / scale.max(f64::MIN_POSITIVE)
}
