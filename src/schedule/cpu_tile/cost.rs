//! The CPU time-tiling cost model: predicted seconds per iteration of an
//! untiled or overlapped-tiled sweep (its inner steps level by level or in a
//! wavefront) from the program's reads, slow operations and reach, the tile,
//! and this machine's caches. The tile chooser ([`super`]) chooses with
//! it, and `stencilc tune`'s CPU model ranks candidates with it. Its
//! constants are measured on the development machine (bench/RESULTS.md); the
//! order of the candidates it predicts is what matters, not the seconds.

use crate::analysis::footprint::Footprint;
use crate::ir::env::RunEnv;
use crate::ir::{BinaryOp, Expr, ExprKind, FieldId, MathFn, Program, Stmt};

use super::{CpuCaches, CpuTiling, TileOrder, TileShape};

/// Slow operations per point of one iteration (every part of every stencil,
/// loops counted by their trip count), in units of 3 ns (`SECONDS_PER_SLOW_OP`):
/// `sqrt` 2, `exp`, `log`, `pow` and the trigonometric functions 3, a
/// floating-point division 0.01. The C is compiled without fast-math, so a math
/// function keeps `errno` and its loop stays scalar (gradient2d: one `sqrtf`
/// and one division per point cost about 6 ns per point and core on the
/// development machine, ten times its five reads), while a division vectorises
/// (j2d5pt's `/ 118.0f`: 0.25 ns per point in L2 with it, 0.22 without, on
/// 2026-11-26). Overlapped tiling repeats them in its halo, so they decide
/// whether tiling a compute-bound stencil pays.
pub fn slow_ops_per_point(program: &Program) -> f64 {
    fn of_expr(e: &Expr) -> f64 {
        let mut total = 0.0;
        e.visit(&mut |e| {
            total += match &e.kind {
                ExprKind::Binary(BinaryOp::Div | BinaryOp::Rem, _, _) if e.ty.is_float() => 0.01,
                ExprKind::Call { func, .. } => match func {
                    MathFn::Sqrt => 2.0,
                    MathFn::Exp
                    | MathFn::Log
                    | MathFn::Pow
                    | MathFn::Sin
                    | MathFn::Cos
                    | MathFn::Tan => 3.0,
                    _ => 0.0,
                },
                _ => 0.0,
            };
        });
        total
    }
    fn of_stmts(body: &[Stmt]) -> f64 {
        body.iter()
            .map(|s| match s {
                Stmt::Assign { value, .. } | Stmt::Store { value, .. } => of_expr(value),
                Stmt::For { lo, hi, body, .. } => (hi - lo + 1).max(0) as f64 * of_stmts(body),
            })
            .sum()
    }
    program.iterate.as_ref().map_or(0.0, |iterate| {
        iterate
            .stencils
            .iter()
            .flat_map(|s| &s.parts)
            .map(|part| of_stmts(&part.body))
            .sum()
    })
}

/// Seconds per unit of slow operations (see [`slow_ops_per_point`]) on one core.
const SECONDS_PER_SLOW_OP: f64 = 3e-9;

/// DRAM bandwidth of the whole machine, bytes per second, a write counted
/// twice (its read for ownership): j2d5pt's naive baseline at 16384² on the
/// 2-core development machine, quiet, streams 12 bytes per point at 85.7 ms
/// per sweep of 268 M points (bench/RESULTS.md, 2026-11-26 00:00).
const MACHINE_BANDWIDTH: f64 = 37.5e9;
/// What one core alone streams: stencilc's untiled j2d5pt at 4096² on one
/// thread, 0.53 ns per point of 12 bytes (user CPU time, 2026-11-26).
const CORE_BANDWIDTH: f64 = 22e9;
/// The share of the lesser of an untiled sweep's DRAM and compute times
/// that does not hide under the greater: j2d9pt's naive sweep at 16384²
/// (predicted DRAM 86 ms, compute 58 ms) measured 104-115 ms on the quiet
/// development machine, j2d5pt's (86 and 34 ms) 87-115 ms (bench/NOTES.md).
const UNTILED_EXPOSED_SHARE: f64 = 0.3;
/// Seconds per read of one point in a vectorised loop whose data is in L2,
/// one core: a window of 48 x 1040 points swept again and again runs j2d5pt
/// (5 reads and a division) at 0.25 ns per point and j2d9pt (9 reads and a
/// division) at 0.44 ns (development machine, gcc 12 `-O3 -march=native`,
/// 2026-11-26).
const SECONDS_PER_READ: f64 = 0.045e-9;
/// How much slower the inner steps of a tiled sweep run than that loop alone
/// (the window shares L2 with the snapshot rings, the copies and the grid's
/// rows; the copies themselves hide under the memory traffic). Fitted, with
/// [`SECONDS_PER_ROW`], to the quiet-machine 16384² sweeps on two threads:
/// j2d5pt in 32 x 1024 tiles at 0.55 ns per point and core, j2d9pt in
/// 64 x 512 tiles at 0.94 (bench/RESULTS.md, 2026-11-26 00:00).
const TILED_COMPUTE_FACTOR: f64 = 1.5;
/// How much slower the inner steps of a tile run in a streamed wavefront
/// ([`TileOrder::Wavefront`]) than the loop alone in L2 (see
/// [`TILED_COMPUTE_FACTOR`] for the level-by-level order): a row is read
/// again by the next stage soon after it is written. Fitted, with
/// [`SECONDS_PER_WAVE_ROW`] and the DRAM traffic added, to the streamed wave
/// at 16384² on two threads, quiet machine: j2d5pt in tiles of 8192 x 4096
/// at `T` = 16, 48.7 ms per sweep, `T` = 32 47.6; j2d9pt at `T` = 16, 79.6
/// (bench/NOTES.md, "Streamed wavefront", 2026-11-26).
const WAVE_COMPUTE_FACTOR: f64 = 1.3;
/// The share of the last-level cache the bands of a streamed wave (one per
/// thread) may fill before its rows spill to DRAM between stages: bands of
/// 1-4 MiB per thread ran as fast as bands that fit L2 (bench/NOTES.md).
const BAND_SHARE_OF_LLC: f64 = 0.5;
/// Seconds per row one stage computes in a wavefront, besides its points:
/// every round sets up each stage's bounds, border split and vectorised
/// loop for one row (the level-by-level order does so once per window).
const SECONDS_PER_WAVE_ROW: f64 = 0.04e-6;
/// Seconds of overhead per tile (besides bandwidth).
const SECONDS_PER_TILE: f64 = 1e-6;
/// Seconds per row a tile copies in or out of the grid, besides its bytes:
/// each row is a new page of the grid and a new prefetch stream (see
/// [`TILED_COMPUTE_FACTOR`] for the fit; it makes rows shorter than 512
/// points lose).
const SECONDS_PER_ROW: f64 = 0.05e-6;
/// The share of L2 a window may fill: the snapshot rings and the grid's rows
/// streaming in and out need the rest. Measured (bench/RESULTS.md): windows
/// of 540 KiB in a 512 KiB L2 (96 x 512 tiles) ran level with untiled sweeps.
const WINDOW_SHARE_OF_L2: f64 = 0.8;
/// Tiling is chosen only when predicted at least this much faster than
/// untiled sweeps: the model's error, so that a wrong prediction near the
/// break-even point costs little.
pub const REQUIRED_GAIN: f64 = 1.1;

/// What the model needs of a program at given sizes.
#[derive(Clone, Debug)]
pub struct ModelInputs {
    /// Grid sizes, outermost first.
    pub dims: Vec<u64>,
    /// Bytes of one point over every level of every field in the window.
    pub window_bytes_per_point: f64,
    /// Bytes of one point over every level of every field written.
    pub written_bytes_per_point: f64,
    /// Bytes of one point a sweep reads from the grid into the window: every
    /// level used, less those overwritten before they are read
    /// ([`TileShape::dead`]; only their rim is read).
    pub read_in_bytes_per_point: f64,
    /// Bytes of one point a sweep writes back to the grid: every level
    /// written, less the dead ones (written back only before the caller or a
    /// reduction reads them).
    pub written_back_bytes_per_point: f64,
    /// Bytes read and written per point by one untiled iteration.
    pub untiled_bytes_per_point: f64,
    /// Reads per point per iteration (all parts).
    pub reads_per_point: f64,
    /// Slow operations per point per iteration ([`slow_ops_per_point`]).
    pub slow_ops_per_point: f64,
    /// The reach of one iteration per axis.
    pub reach: Vec<(u64, u64)>,
    /// Axes whose tiles span the grid.
    pub whole: Vec<bool>,
}

impl ModelInputs {
    /// The inputs for `program` with `env`'s sizes.
    pub fn new(program: &Program, env: &RunEnv, shape: &TileShape) -> ModelInputs {
        let dims: Vec<u64> = env.grid_dims()[shape.grid.0]
            .iter()
            .map(|&d| d as u64)
            .collect();
        let level_bytes = |f: &FieldId| {
            let field = &program.fields[f.0];
            (field.ty.size_bytes() * field.levels()) as f64
        };
        let mut reads = 0.0;
        let mut untiled = 0.0;
        if let Some(iterate) = &program.iterate {
            for s in 0..iterate.stencils.len() {
                let footprint = Footprint::of_stencil_in(program, env, s);
                for r in &footprint.reads {
                    reads += r.distinct as f64;
                    untiled += program.fields[r.field.0].ty.size_bytes() as f64;
                }
                for w in &footprint.writes {
                    // A write costs its read for ownership too.
                    untiled += 2.0 * program.fields[w.field.0].ty.size_bytes() as f64;
                }
            }
        }
        let dead_bytes: f64 = shape
            .dead
            .iter()
            .map(|(f, _, _)| program.fields[f.0].ty.size_bytes() as f64)
            .sum();
        let window_bytes_per_point: f64 = shape.used.iter().map(level_bytes).sum();
        let written_bytes_per_point: f64 = shape.written.iter().map(level_bytes).sum();
        ModelInputs {
            dims,
            window_bytes_per_point,
            written_bytes_per_point,
            read_in_bytes_per_point: window_bytes_per_point - dead_bytes,
            written_back_bytes_per_point: written_bytes_per_point - dead_bytes,
            untiled_bytes_per_point: untiled,
            reads_per_point: reads.max(1.0),
            slow_ops_per_point: slow_ops_per_point(program),
            reach: shape.iteration_reach(),
            whole: shape.whole.clone(),
        }
    }

    /// Points of the grid.
    pub fn points(&self) -> f64 {
        self.dims.iter().product::<u64>() as f64
    }

    /// Compute seconds of one point of one iteration on one core.
    pub fn point_seconds(&self) -> f64 {
        self.reads_per_point * SECONDS_PER_READ + self.slow_ops_per_point * SECONDS_PER_SLOW_OP
    }
}

/// Predicted seconds per iteration with `tiling` (`None`: untiled) on
/// `threads` threads of a machine with `caches`.
///
/// Untiled, an iteration streams its fields from DRAM once, or is bound by
/// its reads and slow operations, whichever is slower. Tiled, the points of
/// the shrinking windows cost their reads (in L2, times
/// [`TILED_COMPUTE_FACTOR`]) and slow operations, plus the window's traffic
/// from DRAM (read in once, the centre written back once per sweep) and a
/// cost per tile and per copied row; a window that does not fit its share of
/// L2 streams again at every inner step.
pub fn predict_step_seconds(
    inputs: &ModelInputs,
    tiling: Option<&CpuTiling>,
    threads: u32,
    caches: &CpuCaches,
) -> f64 {
    let threads = f64::from(threads.max(1));
    let points = inputs.points();
    let bandwidth = MACHINE_BANDWIDTH.min(CORE_BANDWIDTH * threads);
    let Some(tiling) = tiling else {
        let memory = points * inputs.untiled_bytes_per_point / bandwidth;
        let compute = points * inputs.point_seconds() / threads;
        return memory.max(compute) + UNTILED_EXPOSED_SHARE * memory.min(compute);
    };
    if tiling.order == TileOrder::March {
        return predict_march_seconds(inputs, tiling, threads, caches, bandwidth);
    }
    let steps = f64::from(tiling.steps.max(1));
    let tile: Vec<f64> = tiling
        .tile
        .iter()
        .zip(&inputs.dims)
        .zip(&inputs.whole)
        .map(|((&t, &d), &whole)| if whole { d } else { t.min(d) } as f64)
        .collect();
    let grown = |k: f64| -> f64 {
        tile.iter()
            .zip(&inputs.reach)
            .zip(&inputs.dims)
            .zip(&inputs.whole)
            .map(|(((t, r), &d), &whole)| {
                if whole {
                    *t
                } else {
                    (t + k * (r.0 + r.1) as f64).min(d as f64)
                }
            })
            .product()
    };
    let centre: f64 = tile.iter().product();
    let tiles = points / centre;
    let window = grown(steps);
    // Read the window in, write the centre back (and read it for ownership).
    let mut traffic = window * inputs.read_in_bytes_per_point
        + 2.0 * centre * inputs.written_back_bytes_per_point;
    let window_bytes = window * inputs.window_bytes_per_point;
    let computed: f64 = (0..tiling.steps).map(|s| grown(f64::from(s))).sum();
    let (compute_factor, wave_rows) = match tiling.order {
        TileOrder::Levels | TileOrder::March => (TILED_COMPUTE_FACTOR, 0.0),
        TileOrder::Wavefront => {
            // Each stage sets up one loop per row (a plane's rows in 3-D)
            // per round.
            let rows: f64 = (0..tiling.steps)
                .map(|s| grown_rows(&tile, &inputs.reach, &inputs.dims, f64::from(s)))
                .sum();
            (WAVE_COMPUTE_FACTOR, rows * inner_rows(&tile))
        }
    };
    let spills = match tiling.order {
        TileOrder::Levels | TileOrder::March => {
            window_bytes > WINDOW_SHARE_OF_L2 * caches.l2_bytes as f64
        }
        TileOrder::Wavefront => {
            // The wave streams its rows in and out (back::c::wavefront):
            // only its band, about three times the lags deep, is held.
            let band_rows = 3.0 * (steps * (inputs.reach[0].0.max(inputs.reach[0].1)) as f64 + 3.0);
            let window_rows = grown_rows(&tile, &inputs.reach, &inputs.dims, steps);
            let band_bytes =
                band_rows.min(window_rows) * window / window_rows * inputs.window_bytes_per_point;
            band_bytes * threads > BAND_SHARE_OF_LLC * caches.llc_bytes as f64
        }
    };
    if spills {
        // The inner steps spill from L2: each streams its window again.
        traffic += (steps - 1.0) * window_bytes;
    }
    let memory = tiles * traffic / bandwidth;
    let compute = tiles
        * computed
        * (inputs.reads_per_point * SECONDS_PER_READ * compute_factor
            + inputs.slow_ops_per_point * SECONDS_PER_SLOW_OP)
        / threads
        + tiles * wave_rows * SECONDS_PER_WAVE_ROW / threads;
    // Rows copied per tile: the window's in, the centre's out (per level of
    // four bytes' worth; the innermost axis is the row).
    let inner_extent = |k: f64| -> f64 {
        let last = tile.len() - 1;
        let r = &inputs.reach[last];
        if inputs.whole[last] {
            tile[last]
        } else {
            (tile[last] + k * (r.0 + r.1) as f64).min(inputs.dims[last] as f64)
        }
    };
    let rows = window / inner_extent(steps) * inputs.read_in_bytes_per_point / 4.0
        + centre / tile[tile.len() - 1] * inputs.written_back_bytes_per_point / 4.0;
    let overhead = tiles * (SECONDS_PER_TILE + rows * SECONDS_PER_ROW) / threads;
    (compute + memory + overhead) / steps
}

/// How much slower a march's steps run than the loop alone in L2
/// ([`SECONDS_PER_READ`]) while its rings fit L2; each doubling of the rings
/// beyond L2 adds [`MARCH_SPILL_PER_DOUBLING`]. Fitted to star3d1r at 512³
/// on two threads (bench/NOTES.md, "A march along z": T = 8 in tiles of
/// 32 x 256 points, rings of 1 MiB, 38.7 ms per iteration; 64 x 256,
/// 1.8 MiB, 42.2; 128 x 512, 6 MiB, 46.5).
const MARCH_COMPUTE_FACTOR: f64 = 1.1;
/// See [`MARCH_COMPUTE_FACTOR`].
const MARCH_SPILL_PER_DOUBLING: f64 = 0.15;
/// The share of L2 a march's rings fill before they slow its loop (the
/// grid's rows streaming in and out, and the prefetched ones, take the
/// rest): on the 2 MiB-L2 Xeon, rings of 0.5 MiB (T = 5, 32 x 256) ran
/// fastest, 0.9 MiB (T = 7) 3 % slower, 1.5 MiB (T = 7, 64 x 256) 10 %.
const MARCH_RING_SHARE_OF_L2: f64 = 0.25;
/// Seconds per row of a plane one step of a march computes, besides its
/// points (bounds, the vectorised loop's prologue and tail): tiles of
/// 32 x 64 points measured 10 ms per iteration slower than 32 x 256 at
/// 512³, with 1.9 M more rows (bench/NOTES.md).
const MARCH_SECONDS_PER_ROW: f64 = 8e-9;

/// [`predict_step_seconds`] for a march ([`TileOrder::March`]): every step
/// computes its tile grown by the reach of the steps still to run, plane by
/// plane along the whole outermost axis; the grid is read once (the tile
/// grown by the sweep's halo) and the centre written once per sweep; the
/// steps between keep rings of `below + above + 1` planes, whose size sets
/// the cache the loop runs from.
fn predict_march_seconds(
    inputs: &ModelInputs,
    tiling: &CpuTiling,
    threads: f64,
    caches: &CpuCaches,
    bandwidth: f64,
) -> f64 {
    let steps = f64::from(tiling.steps.max(1));
    let rank = inputs.dims.len();
    let planes = inputs.dims[0] as f64;
    let tile: Vec<f64> = (1..rank)
        .map(|a| tiling.tile.get(a).copied().unwrap_or(1).min(inputs.dims[a]) as f64)
        .collect();
    let grown = |k: f64| -> f64 {
        (1..rank)
            .map(|a| {
                let r = inputs.reach[a];
                (tile[a - 1] + k * (r.0 + r.1) as f64).min(inputs.dims[a] as f64)
            })
            .product()
    };
    let grown_rows = |k: f64| -> f64 {
        (1..rank - 1)
            .map(|a| {
                let r = inputs.reach[a];
                (tile[a - 1] + k * (r.0 + r.1) as f64).min(inputs.dims[a] as f64)
            })
            .product::<f64>()
            .max(1.0)
    };
    let centre: f64 = tile.iter().product();
    let tiles = (1..rank)
        .map(|a| (inputs.dims[a] as f64 / tile[a - 1]).ceil())
        .product::<f64>();
    let computed: f64 = (0..tiling.steps).map(|s| grown(f64::from(s))).sum::<f64>() * planes;
    let rows: f64 = (0..tiling.steps)
        .map(|s| grown_rows(f64::from(s)))
        .sum::<f64>()
        * planes;
    let level_bytes = inputs.window_bytes_per_point / 2.0;
    let ring_planes = (inputs.reach[0].0 + inputs.reach[0].1 + 1) as f64;
    let ring_bytes = (steps - 1.0) * ring_planes * grown(steps - 1.0) * level_bytes;
    let spill = (ring_bytes / (MARCH_RING_SHARE_OF_L2 * caches.l2_bytes as f64))
        .max(1.0)
        .log2();
    let factor = MARCH_COMPUTE_FACTOR * (1.0 + MARCH_SPILL_PER_DOUBLING * spill);
    let traffic = planes * (grown(steps - 1.0) + 2.0 * centre) * level_bytes;
    let memory = tiles * traffic / bandwidth;
    let compute = tiles
        * (computed
            * (inputs.reads_per_point * SECONDS_PER_READ * factor
                + inputs.slow_ops_per_point * SECONDS_PER_SLOW_OP)
            + rows * MARCH_SECONDS_PER_ROW)
        / threads;
    (compute + memory + tiles * SECONDS_PER_TILE / threads) / steps
}

/// Rows along the outermost axis of a tile grown by `k ×` the reach (at
/// most the grid).
fn grown_rows(tile: &[f64], reach: &[(u64, u64)], dims: &[u64], k: f64) -> f64 {
    (tile[0] + k * (reach[0].0 + reach[0].1) as f64).min(dims[0] as f64)
}

/// Rows of the innermost axis per row of the outermost one: a 3-D tile's
/// row of the wave is a plane of `tile[1]` rows, each a loop of its own.
fn inner_rows(tile: &[f64]) -> f64 {
    tile[1..tile.len().saturating_sub(1)]
        .iter()
        .product::<f64>()
        .max(1.0)
}
