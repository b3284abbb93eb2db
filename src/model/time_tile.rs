//! What overlapped time tiling is predicted to gain: the cost of one launch
//! advancing `T` iterations on every block's tile (`lower/time_tile/`),
//! per iteration, against the untiled iteration (`T = 1`).
//!
//! Per launch of `T` steps over `N` points (bench/gpu/MODEL.md, "Time
//! tiling", gives the equations):
//!
//! - **DRAM**: every level of every staged field read once and written once
//!   per point, plus each read-only field once (neighbouring blocks' halos hit
//!   L2): `N · (2 Σ levels · elem + Σ read-only · elem)` over the copy
//!   bandwidth × [`STREAM_EFFICIENCY`];
//! - **L2→SM**: the tiles with their halos, `N · C/P` per level loaded (`C` the
//!   tile's cells, `P` its centre), plus the read-only fields' reads;
//! - **issue and FP64**: each stencil runs over the region still exact at its
//!   step, `Σ_s Σ_k Π(extent − consumed)` cells per block, at the untiled
//!   kernel's instructions per point plus [`CELL_OVERHEAD`] (the loops and the
//!   boundary tests of a tile cell); this is the redundant halo computation;
//! - **shared memory** (L1 wavefronts): every computed cell's reads and store
//!   of the tiles, one wavefront per warp access;
//! - **latency**: waves of resident blocks (the tiles' shared memory limits
//!   how many blocks an SM holds) times a block's life: one DRAM round for the
//!   load, then [`PHASE_NS`] per stencil pass (a pass and its barrier).
//!
//! The launch costs the largest of these plus [`LAUNCH_US`]; the iteration
//! `1/T` of it plus the untiled reductions and check. [`PHASE_NS`] is measured
//! (H200); [`CELL_OVERHEAD`] is counted, not measured.

use serde::Serialize;

use crate::ir::env::RunEnv;
use crate::ir::Program;
use crate::lower::{lower_for, Target};
use crate::model::{
    occupancy, predict, Device, OccupancyError, PredictError, Role, ASSUMED_REGISTERS,
    DRAM_ROUND_NS, LAUNCH_US, STREAM_EFFICIENCY,
};
use crate::schedule::time::{plan_time_tiling, TimeTiling, TimeTilingError};
use crate::schedule::Schedule;

/// Why a row of the time-tiling table has no figures; its text is the row's
/// `bound`.
#[derive(Debug, thiserror::Error)]
enum RowError {
    /// The program cannot be time-tiled with these steps.
    #[error(transparent)]
    Tiling(#[from] TimeTilingError),
    /// The tiled block does not fit the device.
    #[error(transparent)]
    Occupancy(#[from] OccupancyError),
    /// The program has no iterate to tile.
    #[error("no iterate")]
    NoIterate,
}

/// Instructions a tile cell costs beyond the stencil's own (loop step, the
/// grid coordinate, the inside-the-grid and subset tests, the shared index);
/// counted on the emitted j2d5pt kernel, not measured.
pub const CELL_OVERHEAD: f64 = 12.0;

/// A block's time per stencil pass over its tile (the pass's shared-memory
/// round trips and the barrier that ends it), ns: measured on an H200
/// (2026-11-26, bench/gpu/h200/) with j2d5pt f32 16384² at `T` = 2..8, block
/// 32×8 over 32×16 points: 4.7–5.3 µs per pass and wave of resident blocks,
/// thirty times the 150 ns first estimated. The time-tiled kernels are
/// slower than one launch per iteration there (2.5–2.9 ms per iteration
/// against 0.87 ms), and the model now says so.
pub const PHASE_NS: f64 = 5000.0;

/// The predicted gain over one launch per iteration time tiling must show
/// before the heuristic takes it: the two time-tiled kernels measured (H200,
/// 2026-11-26: j2d5pt and the 7×7 blur) ran 2–3× slower than this model
/// predicted, the blur's `T` = 7 at 2.9× the untiled time where it predicted a
/// 6 % gain; a larger margin than the model's measured error keeps the
/// heuristic from choosing on it.
pub const MIN_TIME_TILE_GAIN: f64 = 1.5;

/// The largest `T` the table and the heuristic consider.
pub const MAX_TIME_STEPS: u32 = 8;

/// A time-tiled launch gains only when it fills the device: the heuristic
/// takes time tiling only when a launch has at least this many blocks per SM.
pub const MIN_BLOCKS_PER_SM: f64 = 1.0;

/// The prediction for one `T`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeRow {
    /// Iterations per launch.
    pub steps: u32,
    /// Predicted time per iteration, ms (`None`: the tiling is not possible).
    pub iteration_ms: Option<f64>,
    /// Speed-up over `T = 1` (the untiled iteration).
    pub gain: Option<f64>,
    /// DRAM bytes per point and iteration.
    pub dram_bytes_per_point: Option<f64>,
    /// Cells computed per point and iteration (1 without redundancy).
    pub computed_per_point: Option<f64>,
    /// Shared memory per block, bytes.
    pub shared_bytes: Option<usize>,
    /// Blocks an SM holds at once.
    pub blocks_per_sm: Option<u32>,
    /// What limits the launch, or why this `T` cannot run.
    pub bound: String,
}

/// The launch cost of `tiling` (already planned for `env`), seconds per
/// launch of `tiling.steps` iterations, with the resource that sets it.
struct LaunchCost {
    seconds: f64,
    bound: &'static str,
    dram_per_point: f64,
    computed_per_point: f64,
    blocks_per_sm: u32,
    blocks: f64,
}

fn launch_cost(
    program: &Program,
    env: &RunEnv,
    tiling: &TimeTiling,
    device: &Device,
    instructions_per_point: &[f64],
    fp64_share: f64,
) -> Result<LaunchCost, RowError> {
    let dims = &env.grid_dims()[0];
    let rank = dims.len();
    let points: f64 = dims.iter().map(|&d| d as f64).product();
    let extents = tiling.extents();
    let cells: f64 = extents.iter().map(|&e| e as f64).product();
    let centre: f64 = (0..rank)
        .map(|a| f64::from(tiling.per_block[rank - 1 - a]))
        .product();
    let blocks: f64 = (0..rank)
        .map(|a| (dims[a] as f64 / f64::from(tiling.per_block[rank - 1 - a])).ceil())
        .product();
    let threads: u32 = tiling.block.iter().product();
    let occ = occupancy(
        device,
        threads,
        Some(ASSUMED_REGISTERS),
        tiling.shared_bytes,
    )?;
    let mut staged_bytes = 0.0;
    for f in &tiling.staged {
        let field = &program.fields[f.0];
        staged_bytes += (field.levels() * field.ty.size_bytes()) as f64;
    }
    let iterate = program.iterate.as_ref().ok_or(RowError::NoIterate)?;
    let mut read_only_bytes = 0.0;
    let mut counted = Vec::new();
    for (k, _) in iterate.stencils.iter().enumerate() {
        let footprint = crate::analysis::Footprint::of_stencil_in(program, env, k);
        for read in &footprint.reads {
            if !tiling.staged.contains(&read.field) && !counted.contains(&read.level()) {
                counted.push(read.level());
                read_only_bytes += program.fields[read.field.0].ty.size_bytes() as f64;
            }
        }
    }
    // The region each stencil computes at each step, in cells per block.
    let reach = tiling.reach_per_step();
    let mut computed = 0.0;
    let mut instructions = 0.0;
    let mut wavefronts = 0.0;
    for s in 0..tiling.steps as i64 {
        let mut consumed: Vec<(i64, i64)> = reach.iter().map(|r| (r.0 * s, r.1 * s)).collect();
        for (k, r) in tiling.reach.iter().enumerate() {
            for a in 0..rank {
                consumed[a].0 += r[a].0;
                consumed[a].1 += r[a].1;
            }
            let region: f64 = (0..rank)
                .map(|a| (extents[a] as i64 - consumed[a].0 - consumed[a].1).max(0) as f64)
                .product();
            computed += region;
            let per_point = instructions_per_point.get(k).copied().unwrap_or(20.0);
            instructions += region * (per_point + CELL_OVERHEAD);
            let reads = crate::analysis::Footprint::of_stencil_in(program, env, k)
                .reads
                .iter()
                .filter(|l| tiling.staged.contains(&l.field))
                .map(|l| l.distinct.max(1))
                .sum::<usize>() as f64;
            wavefronts += region * (reads + 1.0) / 32.0;
        }
    }
    // Loading every level's tile and writing back its centre.
    let levels: f64 = tiling
        .staged
        .iter()
        .map(|f| program.fields[f.0].levels() as f64)
        .sum();
    wavefronts += levels * (cells + centre) / 32.0;
    instructions += levels * (cells + centre) * 8.0;
    let clock = device.clock_ghz * 1e9;
    let sms = f64::from(device.sms);
    let dram_per_point = 2.0 * staged_bytes + read_only_bytes;
    let l2_per_point = staged_bytes * cells / centre + read_only_bytes * computed / centre;
    let passes = f64::from(tiling.steps) * tiling.reach.len() as f64;
    let lifetime = (DRAM_ROUND_NS + passes * PHASE_NS) * 1e-9;
    let waves = (blocks / (sms * f64::from(occ.blocks_per_sm))).max(1.0);
    let times = [
        (
            points * dram_per_point / (device.copy_gb_s * 1e9 * STREAM_EFFICIENCY),
            "DRAM bandwidth",
        ),
        (
            points * l2_per_point / (device.l2_gb_s * 1e9),
            "L2 bandwidth",
        ),
        (
            blocks * wavefronts / (sms * clock),
            "shared-memory wavefronts",
        ),
        (
            blocks * instructions * (1.0 - fp64_share) / 32.0 / (sms * 4.0 * clock),
            "instruction issue (redundant halo cells included)",
        ),
        (
            blocks * instructions * fp64_share
                / 32.0
                / (sms * (f64::from(device.fp64_lanes_per_sm) / 32.0) * clock),
            "FP64 throughput",
        ),
        (
            waves * lifetime,
            "latency (shared memory limits the resident blocks)",
        ),
    ];
    let (slowest, bound) = times
        .iter()
        .copied()
        .fold((0.0, "launch overhead"), |best, t| {
            if t.0 > best.0 {
                t
            } else {
                best
            }
        });
    Ok(LaunchCost {
        seconds: slowest + LAUNCH_US * 1e-6,
        bound,
        dram_per_point: dram_per_point / f64::from(tiling.steps),
        computed_per_point: computed / centre / f64::from(tiling.steps),
        blocks_per_sm: occ.blocks_per_sm,
        blocks,
    })
}

/// The predicted time per iteration for `T = 1..=max_steps` of `program` with
/// `env`'s values on `device`, the untiled `schedule` giving `T = 1`, the
/// blocks and the reductions. Rows whose tiling is impossible say why.
pub fn time_table(
    program: &Program,
    schedule: &Schedule,
    env: &RunEnv,
    target: Target,
    device: &Device,
    max_steps: u32,
) -> Result<Vec<TimeRow>, PredictError> {
    let mut untiled = schedule.clone();
    untiled.time = None;
    let lowered = lower_for(program, &untiled, target, Some(env));
    let base = predict::predict(
        program,
        &untiled,
        &lowered,
        env,
        device,
        &Default::default(),
    )?;
    let specs = crate::model::build::specs(program, &untiled, &lowered, env);
    let stencil_count = program.iterate.as_ref().map_or(0, |i| i.stencils.len());
    // Instructions per point of each stencil's untiled kernel (its first launch).
    let mut per_point = vec![20.0; stencil_count];
    let mut fp64 = (0.0, 0.0);
    let mut s = 0;
    for spec in &specs {
        if let Role::Stencil(name) = &spec.role {
            let ppt: u32 = spec.points_per_thread.iter().product();
            let names: Vec<&str> = name.split('+').collect();
            if let Some(iterate) = &program.iterate {
                if let Some(k) = iterate.stencils.iter().position(|st| st.name == names[0]) {
                    if k >= s {
                        per_point[k] = spec.instructions_per_thread / f64::from(ppt.max(1));
                        s = k + 1;
                    }
                }
            }
            fp64.0 += spec.fp64_per_thread;
            fp64.1 += spec.instructions_per_thread;
        }
    }
    let fp64_share = if fp64.1 > 0.0 { fp64.0 / fp64.1 } else { 0.0 };
    let base_iteration = base.iteration_ms;
    let others = (base.iteration_ms - base.sweep_ms).max(0.0);
    let mut rows = vec![TimeRow {
        steps: 1,
        iteration_ms: Some(base_iteration),
        gain: Some(1.0),
        dram_bytes_per_point: None,
        computed_per_point: Some(1.0),
        shared_bytes: None,
        blocks_per_sm: None,
        bound: "one launch per stencil and iteration".into(),
    }];
    let Some(first) = untiled.stencils.first() else {
        return Ok(rows);
    };
    let rank = program.grids.first().map_or(1, |g| g.rank());
    let block: [u32; 3] = [0, 1, 2].map(|d| if d < rank { first.block[d] } else { 1 });
    let per_block: [u32; 3] = [0, 1, 2].map(|d| {
        if d < rank {
            first.block[d].saturating_mul(first.tile[d])
        } else {
            1
        }
    });
    for steps in 2..=max_steps {
        let row =
            match plan_time_tiling(program, env, steps, block, per_block, untiled.wide_indices)
                .map_err(RowError::from)
                .and_then(|tiling| {
                    launch_cost(program, env, &tiling, device, &per_point, fp64_share)
                        .map(|c| (tiling, c))
                }) {
                Ok((tiling, c)) => {
                    let iteration = c.seconds * 1e3 / f64::from(steps) + others;
                    TimeRow {
                        steps,
                        iteration_ms: Some(iteration),
                        gain: Some(base_iteration / iteration),
                        dram_bytes_per_point: Some(c.dram_per_point),
                        computed_per_point: Some(c.computed_per_point),
                        shared_bytes: Some(tiling.shared_bytes),
                        blocks_per_sm: Some(c.blocks_per_sm),
                        bound: if c.blocks < f64::from(device.sms) * MIN_BLOCKS_PER_SM {
                            format!("{} (fewer blocks than SMs)", c.bound)
                        } else {
                            c.bound.to_string()
                        },
                    }
                }
                Err(why) => TimeRow {
                    steps,
                    iteration_ms: None,
                    gain: None,
                    dram_bytes_per_point: None,
                    computed_per_point: None,
                    shared_bytes: None,
                    blocks_per_sm: None,
                    bound: why.to_string(),
                },
            };
        rows.push(row);
    }
    Ok(rows)
}

/// The most iterations one time tile may advance with `env`'s values: the
/// iteration count, and the check interval where there is a check.
pub fn step_limit(env: &RunEnv) -> u64 {
    env.every()
        .filter(|&k| k > 0)
        .map_or(env.max_iters(), |k| k.min(env.max_iters()))
}

/// Why `program` with `env`'s values cannot be time-tiled at all (no `T`
/// of 2 or more is allowed), in words; `None` when it can be tried.
pub fn untileable(program: &Program, env: &RunEnv) -> Option<String> {
    let name = &program.name;
    if program.iterate.is_none() {
        return Some(format!(
            "`{name}` has no iterate loop: a time tile advances several iterations in one launch"
        ));
    }
    let iterations = env.max_iters();
    if iterations < 2 {
        return Some(format!(
            "`{name}` runs {iterations} iteration(s) with these values: a time tile needs 2 \
             or more"
        ));
    }
    if env.every() == Some(1) {
        return Some(format!(
            "`{name}` checks its condition after every iteration: a time tile needs 2 or more \
             iterations between checks"
        ));
    }
    None
}

/// The `T` the heuristic takes from `rows` (1: untiled), allowed at most
/// `limit` (the iteration count and check interval), with the sentence
/// saying why for `-v`.
pub fn pick(rows: &[TimeRow], limit: u64, device: &Device) -> (u32, String) {
    let best = rows
        .iter()
        .filter(|r| u64::from(r.steps) <= limit.max(1))
        .filter(|r| !r.bound.contains("fewer blocks than SMs"))
        .filter_map(|r| Some((r.steps, r.gain?, r.iteration_ms?)))
        .fold((1u32, 1.0f64, None::<f64>), |best, (steps, gain, ms)| {
            // The first T taken must gain [`MIN_TIME_TILE_GAIN`]; a larger
            // one then more than 5 % over the best so far.
            let needed = if best.0 == 1 {
                MIN_TIME_TILE_GAIN
            } else {
                best.1 * 1.05
            };
            if gain > needed {
                (steps, gain, Some(ms))
            } else {
                best
            }
        });
    let base = rows.first().and_then(|r| r.iteration_ms).unwrap_or(0.0);
    let most = MAX_TIME_STEPS.min(limit.max(1) as u32);
    match best {
        (1, ..) if most < 2 => (
            1,
            format!(
                "time tiling: none: only {most} iteration runs between checks (the iteration \
                 count or check interval), and a time tile needs 2 or more"
            ),
        ),
        (1, ..) => (
            1,
            format!(
                "time tiling: not taken: no T from 2 to {most} is predicted {MIN_TIME_TILE_GAIN}x \
                 as fast as one launch per iteration ({base:.4} ms per iteration on the {}; \
                 `stencilc explain` shows the table)",
                device.name
            ),
        ),
        (steps, gain, ms) => (
            steps,
            format!(
                "time tiling: {steps} iterations per launch, predicted {:.4} ms per iteration \
                 against {base:.4} ms untiled ({gain:.2}x) on the {}",
                ms.unwrap_or(0.0),
                device.name
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::env::Bindings;
    use crate::ir::Value;
    use crate::schedule::ScheduleRequest;

    const J2D5PT: &str = "int n;\nint steps;\ngrid g[n][n];\nfloat griddata a on g at 0,1;\n\
        iterate steps {\n  stencil s {\n    [1:n-2][1:n-2] : [1]a[0][0] = 0.2f*([0]a[-1][0] \
        + [0]a[0][-1] + [0]a[0][0] + [0]a[0][1] + [0]a[1][0]);\n  }\n}\n";

    fn setup(n: i32, steps: i32) -> (Program, RunEnv) {
        let source = crate::source::SourceFile::new("t.sdsl", J2D5PT);
        let program = crate::front::parse_program(source).expect("valid program");
        let bindings = Bindings {
            params: vec![Value::Int(n), Value::Int(steps)],
        };
        let env = RunEnv::new(&program, &bindings).expect("bound");
        (program, env)
    }

    #[test]
    fn dram_traffic_falls_as_one_over_t_and_redundancy_grows() {
        let (program, env) = setup(4096, 100);
        let request = ScheduleRequest {
            block: Some(vec![32, 8]),
            tile: Some(vec![1, 1]),
            time_steps: Some(1),
            ..ScheduleRequest::default()
        };
        let schedule = Schedule::for_run(&program, &request, &env).unwrap();
        let device = Device::default_device();
        let rows = time_table(&program, &schedule, &env, Target::Cuda, device, 8).unwrap();
        assert_eq!(rows.len(), 8);
        assert_eq!(rows[0].gain, Some(1.0));
        for row in &rows[1..] {
            let t = f64::from(row.steps);
            // Two f32 levels read and written once per launch: 16 B over T.
            assert!((row.dram_bytes_per_point.unwrap() - 16.0 / t).abs() < 1e-9);
            // A 32x8 tile with a halo of T on each side; step s computes the
            // region T - s cells wide around it: sum over s of (32+2(T-s))(8+2(T-s)).
            let expected: f64 = (1..=row.steps)
                .map(|s| {
                    let h = 2.0 * f64::from(row.steps - s);
                    (32.0 + h) * (8.0 + h)
                })
                .sum::<f64>()
                / 256.0
                / t;
            assert!(
                (row.computed_per_point.unwrap() - expected).abs() < 1e-9,
                "T={}: {:?} against {expected}",
                row.steps,
                row.computed_per_point
            );
            // (32 + 2T)(8 + 2T) cells, two levels of 4 bytes.
            let cells = (32 + 2 * row.steps as usize) * (8 + 2 * row.steps as usize);
            assert_eq!(row.shared_bytes, Some(cells * 8));
        }
    }

    #[test]
    fn the_pick_takes_the_fastest_t_within_the_limit_and_says_why() {
        let row = |steps: u32, gain: f64| TimeRow {
            steps,
            iteration_ms: Some(1.0 / gain),
            gain: Some(gain),
            dram_bytes_per_point: None,
            computed_per_point: None,
            shared_bytes: None,
            blocks_per_sm: None,
            bound: "DRAM bandwidth".into(),
        };
        let rows = vec![row(1, 1.0), row(2, 1.6), row(3, 1.8), row(4, 1.7)];
        let device = Device::default_device();
        let (steps, why) = pick(&rows, 100, device);
        assert_eq!(steps, 3);
        assert!(why.contains("1.80x"), "{why}");
        // A check every 2 iterations limits T to 2.
        assert_eq!(pick(&rows, 2, device).0, 2);
        // A gain under MIN_TIME_TILE_GAIN is not worth a tiling: the model
        // over-predicted the measured time-tiled kernels by 2-3x.
        let flat = vec![row(1, 1.0), row(2, 1.4)];
        let (steps, why) = pick(&flat, 100, device);
        assert_eq!(steps, 1);
        assert!(why.starts_with("time tiling: not taken"), "{why}");
    }

    #[test]
    fn small_grids_and_oversized_tiles_are_not_time_tiled_by_the_heuristic() {
        let (program, env) = setup(64, 100);
        let schedule = Schedule::for_run(&program, &ScheduleRequest::default(), &env).unwrap();
        let device = Device::default_device();
        let rows = time_table(&program, &schedule, &env, Target::Cuda, device, 8).unwrap();
        assert!(
            rows[1].bound.contains("fewer blocks than SMs"),
            "{:?}",
            rows[1]
        );
        assert_eq!(pick(&rows, 100, device).0, 1);
        // A block too large for 48 KiB at T = 8 gives a row saying so.
        let request = ScheduleRequest {
            block: Some(vec![64, 16]),
            tile: Some(vec![1, 8]),
            ..ScheduleRequest::default()
        };
        let (program, env) = setup(4096, 100);
        let schedule = Schedule::for_run(&program, &request, &env).unwrap();
        let rows = time_table(&program, &schedule, &env, Target::Cuda, device, 8).unwrap();
        let last = rows.last().unwrap();
        assert_eq!(last.iteration_ms, None);
        assert!(
            last.bound.contains("bytes of shared memory"),
            "{}",
            last.bound
        );
    }
}
