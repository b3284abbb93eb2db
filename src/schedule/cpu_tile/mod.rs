//! Time tiling on the CPU: whether an iteration can be time-tiled, and the
//! C back-end's choice of time steps per sweep, tile sizes and threads.
//!
//! The C back-end uses **overlapped tiling**: each OpenMP thread takes a tile,
//! copies the tile grown by a halo of `T ×` the iteration's reach (every part of
//! every stencil, summed) into a private scratch window, runs the `T` inner
//! steps there with the computed region shrinking by each part's reach per
//! application, and writes the tile's centre back in place (the halo values
//! earlier tiles overwrote come from small per-thread snapshots, see
//! `back::c::snapshot`). It was chosen over split,
//! diamond and wavefront tiling because it keeps every inner step a plain,
//! branch-free, vectorisable loop nest printed by the same code as the untiled
//! sweep (so results stay bit-identical), handles several stencils and fields
//! per iteration with no extra analysis beyond each part's reach, keeps the
//! tiles free of synchronisation (one barrier per sweep, after each thread
//! saves the rows next to its chunk of tiles), and on a machine with few cores and a big L2 the redundant halo work is
//! small next to the memory traffic it saves. Its cost, recomputed halos,
//! grows with `T × reach / tile`, which is why tiles are kept wide.
//!
//! A tile's inner steps run level by level, or in a **wavefront** along the
//! outermost axis ([`TileOrder`], `--cpu-order`): the same points, each stage
//! one row per round behind the one before it ([`TileShape::wavefront`]
//! proves the lags safe), with the tile's rows streamed in and out a row per
//! round (`back::c::wavefront`), so that a tile can be a thread's whole chunk
//! of rows, recompute its halo along that axis once and take deep sweeps
//! (`T` = 16-32). The model chooses between the two where the wavefront
//! applies.
//!
//! A third order, the **march** ([`TileOrder::March`], [`march_shape`],
//! `back::c::march`), drops the window: a tile of the inner axes marches
//! along the outermost one a plane per round, its first inner step reading
//! the grid, its last writing the other level's array (out of place, so a
//! march takes odd steps), and each step between keeping a ring of the few
//! planes the next one reads, small enough for L2. It takes one stencil part
//! updating one field of two levels, and is the only form that measured a
//! gain in 3-D (star3d1r 512³: 1.4-1.7x, `bench/NOTES.md`); the model picks it
//! in 3-D, and in 2-D only where asked.
//!
//! [`tile_shape`] decides whether the iterate can be tiled at all (and names
//! the construct when not); [`plan_cpu`] turns `--time`, `--cpu-tile`,
//! `--threads` and the pragma's `time:` into a [`CpuPlan`], choosing what they
//! leave open from a small model ([`predict_step_seconds`]) with the cache
//! sizes of this machine ([`CpuCaches::here`]).

use crate::diag::Diagnostic;
use crate::ir::env::RunEnv;
use crate::ir::Program;

mod caches;
mod cost;

use super::time::{requested_time_steps, TimeSource};
use super::ScheduleRequest;
pub use caches::{parse_size, CpuCaches};
pub use cost::{predict_step_seconds, slow_ops_per_point, ModelInputs, REQUIRED_GAIN};
// The plan and the tile geometry are data and facts, below `schedule`; `plan_cpu` builds them.
// The plan's types live in `analysis::tile` (the C back-end reads them without
// depending on the planner); they are re-exported beside the planner that returns them.
pub use crate::analysis::tile::{
    march_shape, tile_shape, CpuPlan, CpuTiling, MarchShape, TileOrder, TileShape, Wavefront,
};

/// What the user asked of the C back-end.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuRequest {
    /// `--time T`.
    pub time: Option<u32>,
    /// `--cpu-tile x,y,z`, innermost axis first.
    pub tile: Option<Vec<u32>>,
    /// `--threads N`.
    pub threads: Option<u32>,
    /// `--cpu-order levels|wavefront`.
    pub order: Option<TileOrder>,
}

/// The plan for running `program` with `env` under `request`, on a machine
/// with `caches`: the request where it says, the model's choice elsewhere.
/// A pragma `time:` naming an unknown identifier is a diagnostic.
pub fn plan_cpu(
    program: &Program,
    request: &CpuRequest,
    env: &RunEnv,
    caches: &CpuCaches,
) -> Result<CpuPlan, Diagnostic> {
    let mut plan = CpuPlan {
        threads: request.threads.map(|t| t.max(1)),
        ..CpuPlan::default()
    };
    let schedule_request = ScheduleRequest {
        time_steps: request.time,
        ..ScheduleRequest::default()
    };
    let asked = requested_time_steps(program, &schedule_request, env)?;
    let threads = plan.threads.unwrap_or(caches.cores).max(1);
    let shape = tile_shape(program);
    let asked_tiling = asked.as_ref().is_some_and(|t| t.steps > 1) || request.tile.is_some();
    let shape = match shape {
        Ok(shape) => shape,
        Err(construct) => {
            if asked_tiling {
                let what = match &asked {
                    Some(t) if t.steps > 1 => match t.source {
                        TimeSource::Request => format!("`--time {}`", t.steps),
                        other => format!("`{}{}`", other.spelling(), t.steps),
                    },
                    _ => "`--cpu-tile`".into(),
                };
                plan.notes.push(format!(
                    "{what} ignored: `{}` cannot be time-tiled because {construct}; running \
                     one sweep per iteration",
                    program.name
                ));
            } else {
                plan.reasons.push(format!(
                    "c: untiled: time tiling does not apply ({construct})"
                ));
            }
            return Ok(plan);
        }
    };
    if let Some(asked) = &asked {
        plan.notes.extend(asked.notes.iter().cloned());
    }
    let orders = allowed_orders(request.order, program, &shape, &mut plan);
    let inputs = ModelInputs::new(program, env, &shape);
    let max_steps = max_steps(env);
    let requested_tile = request.tile.as_ref().map(|inner_first| {
        inputs
            .dims
            .iter()
            .enumerate()
            .map(|(a, &d)| {
                let from_inner = inputs.dims.len() - 1 - a;
                inner_first
                    .get(from_inner)
                    .map_or(d, |&t| u64::from(t.max(1)).min(d))
            })
            .collect::<Vec<u64>>()
    });
    match (asked.as_ref().map(|t| t.steps), requested_tile) {
        (Some(1), _) => {
            plan.reasons.push(
                "c: untiled: one step per sweep asked (the tile size matters only for more)".into(),
            );
        }
        (Some(steps), Some(tile)) => {
            let tiling = best_order(&inputs, steps, tile, &orders, threads, caches).1;
            plan.reasons.push(format!(
                "c: time tiling as asked: {steps} steps per sweep, tile {}, {}",
                show(&tiling.tile),
                show_order(tiling.order)
            ));
            plan.tiling = Some(tiling);
        }
        (Some(steps), None) => {
            let tiling = best_tile(&inputs, steps, &orders, threads, caches).0;
            plan.reasons.push(format!(
                "c: time tiling: {steps} steps per sweep as asked, tile {} and {} chosen by \
                 the model (L2 {} KiB)",
                show(&tiling.tile),
                show_order(tiling.order),
                caches.l2_bytes >> 10
            ));
            plan.tiling = Some(tiling);
        }
        (None, requested_tile) => {
            choose(
                &inputs,
                requested_tile,
                max_steps,
                &orders,
                threads,
                caches,
                &mut plan,
            );
        }
    }
    Ok(plan)
}

/// The orders of the inner steps the plan may take: the one asked, else
/// every one that applies. An order asked where it does not apply is a
/// note; where one merely is not considered, `-v` says why.
fn allowed_orders(
    asked: Option<TileOrder>,
    program: &Program,
    shape: &TileShape,
    plan: &mut CpuPlan,
) -> Vec<TileOrder> {
    let wavefront = shape.wavefront().map(|_| ());
    let march = march_shape(program, shape).map(|_| ());
    match asked {
        Some(TileOrder::Wavefront) if wavefront.is_err() => {
            plan.notes.push(format!(
                "`--cpu-order wavefront` ignored: {}; the inner steps of a tile run level \
                 by level",
                wavefront.unwrap_err()
            ));
            return vec![TileOrder::Levels];
        }
        Some(TileOrder::March) if march.is_err() => {
            plan.notes.push(format!(
                "`--cpu-order march` ignored: {}; the inner steps of a tile run level by level",
                march.unwrap_err()
            ));
            return vec![TileOrder::Levels];
        }
        Some(order) => return vec![order],
        None => {}
    }
    let mut orders = vec![TileOrder::Levels];
    match wavefront {
        Ok(()) => orders.push(TileOrder::Wavefront),
        Err(why) => plan.reasons.push(format!(
            "c: inner steps level by level: the wavefront order does not apply ({why})"
        )),
    }
    match march {
        // In 2-D the streamed wave meets its targets and the march was not
        // measured against it: a march there only where asked.
        Ok(()) if shape.rank >= 3 => orders.push(TileOrder::March),
        Ok(()) => plan.reasons.push(
            "c: no march: in 2-D only where asked (--cpu-order march); the wavefront is \
             measured there"
                .into(),
        ),
        Err(why) => plan
            .reasons
            .push(format!("c: no march: it does not apply ({why})")),
    }
    orders
}

/// `levels`, `wavefront` or `march` as a reason says it.
fn show_order(order: TileOrder) -> &'static str {
    match order {
        TileOrder::Levels => "inner steps level by level",
        TileOrder::Wavefront => "inner steps in a wavefront along the outermost axis",
        TileOrder::March => "inner steps marching along the outermost axis",
    }
}

/// The order among `orders` the model predicts fastest for `tile`.
fn best_order(
    inputs: &ModelInputs,
    steps: u32,
    tile: Vec<u64>,
    orders: &[TileOrder],
    threads: u32,
    caches: &CpuCaches,
) -> (f64, CpuTiling) {
    orders
        .iter()
        .map(|&order| {
            let mut tile = tile.clone();
            if order == TileOrder::March {
                // A march covers the outermost axis whole.
                tile[0] = inputs.dims[0];
            }
            let tiling = CpuTiling { steps, tile, order };
            (
                predict_step_seconds(inputs, Some(&tiling), threads, caches),
                tiling,
            )
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("at least one order")
}

/// The most steps a sweep can take: the iteration count and the check interval.
fn max_steps(env: &RunEnv) -> u32 {
    let mut most = env.max_iters().max(1);
    if let Some(every) = env.every() {
        most = most.min(every.max(1));
    }
    most.min(32) as u32
}

/// `4096x64` (outermost first).
fn show(tile: &[u64]) -> String {
    tile.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("x")
}

/// The model's choice of steps and tile where the user left them open.
fn choose(
    inputs: &ModelInputs,
    requested_tile: Option<Vec<u64>>,
    max_steps: u32,
    orders: &[TileOrder],
    threads: u32,
    caches: &CpuCaches,
    plan: &mut CpuPlan,
) {
    let data = inputs.points() * inputs.window_bytes_per_point;
    let untiled = predict_step_seconds(inputs, None, threads, caches);
    if requested_tile.is_none() && data <= caches.llc_bytes as f64 {
        plan.reasons.push(format!(
            "c: untiled: the data ({:.1} MiB) fits in the last-level cache ({} MiB)",
            data / f64::from(1 << 20),
            caches.llc_bytes >> 20
        ));
        return;
    }
    let marches = orders.contains(&TileOrder::March);
    let mut orders = orders.to_vec();
    if requested_tile.is_none() && inputs.dims.len() >= 3 && marches {
        // 3-D tiles level by level or in a wavefront measured no gain
        // (below); a march did (bench/NOTES.md, "A march along z").
        orders = vec![TileOrder::March];
    } else if requested_tile.is_none() && inputs.dims.len() >= 3 {
        // Measured on the 2-core development machine (bench/RESULTS.md):
        // star3d1r at 256³ level by level in windows that fit its L2 ran
        // 1.8x slower than untiled (they recompute too much halo), in a
        // wavefront (T = 8, 256 x 32 x 256) level with untiled.
        plan.reasons.push(
            "c: untiled: in 3-D only a march has shown a gain, and it does not apply (ask \
             with --time T --cpu-tile X,Y,Z [--cpu-order wavefront] to try the others)"
                .into(),
        );
        return;
    }
    if requested_tile.is_none() && inputs.window_bytes_per_point > 8.0 {
        // Measured (bench/RESULTS.md): with more than one field level pair in
        // the window (gradient2d) the sweeps were slower than untiled ones.
        plan.reasons.push(
            "c: untiled: time tiling has measured a gain only for one single-precision field \
             of two levels (ask with --time T to try)"
                .into(),
        );
        return;
    }
    let mut best: Option<(f64, CpuTiling)> = None;
    // Level by level the deepest T up to 8 (the measured gains grow with T
    // up to 8, and its window grows with T); a streamed wave holds only a
    // band, and measured gains up to T = 32 (bench/NOTES.md).
    for &order in &orders {
        let depths: &[u32] = match order {
            TileOrder::Levels => &[8],
            TileOrder::Wavefront => &[8, 16, 32],
            // A march takes odd steps (an even sweep ends with a single
            // step), its rings grow with them.
            TileOrder::March => &[3, 5, 7, 9],
        };
        for &most in depths {
            let mut steps = most.min(max_steps);
            if order == TileOrder::March && steps % 2 == 0 {
                steps -= 1;
            }
            if steps < 2 {
                continue;
            }
            let (seconds, tiling) = match &requested_tile {
                Some(tile) => best_order(inputs, steps, tile.clone(), &[order], threads, caches),
                None => {
                    let (tiling, seconds) = best_tile(inputs, steps, &[order], threads, caches);
                    (seconds, tiling)
                }
            };
            if best.as_ref().is_none_or(|(b, _)| seconds < *b) {
                best = Some((seconds, tiling));
            }
        }
    }
    match best {
        Some((seconds, tiling)) if seconds * REQUIRED_GAIN <= untiled => {
            plan.reasons.push(format!(
                "c: time tiling: {} steps per sweep, tile {}, {}: predicted {:.2}x faster than \
                 untiled (data {:.0} MiB > last-level cache {} MiB; L2 {} KiB)",
                tiling.steps,
                show(&tiling.tile),
                show_order(tiling.order),
                untiled / seconds,
                data / f64::from(1 << 20),
                caches.llc_bytes >> 20,
                caches.l2_bytes >> 10
            ));
            plan.tiling = Some(tiling);
        }
        Some((seconds, tiling)) => plan.reasons.push(format!(
            "c: untiled: the model predicts too little gain from time tiling ({:.2}x for {} \
             steps per sweep, tile {}, {}; {REQUIRED_GAIN}x needed)",
            untiled / seconds,
            tiling.steps,
            show(&tiling.tile),
            show_order(tiling.order)
        )),
        None => plan
            .reasons
            .push("c: untiled: the model predicts no gain from time tiling".into()),
    }
}

/// The best tile for `steps` by the model among wide ones, in each of
/// `orders`: the innermost axis long (whole rows up to 4096 points in 2-D,
/// 512 in 3-D: the hardware prefetchers and the row copies want long rows,
/// which the model does not see), the outer axes as deep as the model finds
/// best; a wavefront's outermost axis tall (its halo along that axis is
/// recomputed only once per tile).
fn best_tile(
    inputs: &ModelInputs,
    steps: u32,
    orders: &[TileOrder],
    threads: u32,
    caches: &CpuCaches,
) -> (CpuTiling, f64) {
    let rank = inputs.dims.len();
    let inner = rank - 1;
    let widths: &[u64] = if rank >= 3 {
        &[512, 256, 128]
    } else {
        &[4096, 2048, 1024, 512]
    };
    let depths = [1u64, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128];
    // A streamed wave's tile may be a thread's whole chunk of rows.
    let chunk = inputs.dims[0].div_ceil(u64::from(threads.max(1)));
    let tall = [64u64, 128, 256, 512, 1024, chunk];
    let whole = [inputs.dims[0]];
    let mut best: Option<(f64, CpuTiling)> = None;
    for &order in orders {
        let outermost: &[u64] = match order {
            TileOrder::Levels => &[0],
            TileOrder::Wavefront => &tall,
            // A march covers the outermost axis whole.
            TileOrder::March => &whole,
        };
        // A march reads its tiles' rows straight from the grid, so shorter
        // rows cost it no copies.
        let march_widths = [512u64, 256, 128, 64];
        let widths = if order == TileOrder::March && rank >= 3 {
            &march_widths[..]
        } else {
            widths
        };
        for &width in widths {
            for &depth in &depths {
                for &first in outermost {
                    let tile: Vec<u64> = inputs
                        .dims
                        .iter()
                        .enumerate()
                        .map(|(a, &d)| {
                            if a == inner {
                                width.min(d)
                            } else if a == 0 && first > 0 {
                                first.min(d)
                            } else {
                                depth.min(d)
                            }
                        })
                        .collect();
                    let tiling = CpuTiling { steps, tile, order };
                    let seconds = predict_step_seconds(inputs, Some(&tiling), threads, caches);
                    if best.as_ref().is_none_or(|(b, _)| seconds < *b) {
                        best = Some((seconds, tiling));
                    }
                }
            }
        }
    }
    let (seconds, tiling) = best.expect("at least one candidate");
    (tiling, seconds)
}

#[cfg(test)]
mod tests;
