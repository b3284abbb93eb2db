//! The GPU performance model: what a lowered kernel costs on a named device.
//!
//! A kernel is described by a [`KernelSpec`] (built from the program, its
//! schedule and the lowered kernels by [`build`]): its launch shape, the global
//! accesses of one point, its shared-memory tiles and its instructions per
//! thread ([`instr`]). [`cost`] turns it, with a [`Device`] and the registers
//! `ptxas -v` reports ([`ptxas`]), into bytes per point at each memory level,
//! occupancy and the time each resource needs; the largest is the bound, and
//! it plus the latency the resident threads leave exposed is the predicted
//! time. bench/gpu/MODEL.md gives the equations and compares them
//! with the H100 measurements; [`warnings`] turns the figures into advice.

pub mod build;
pub mod choose;
pub mod device;
pub mod errors;
pub mod fusion;
pub mod instr;
pub mod predict;
pub mod ptxas;
pub mod rank;
pub mod time_tile;
pub mod toolkit;
pub mod traffic;
pub mod warnings;

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

pub use device::{Device, DEVICES};
pub use errors::{OccupancyError, PredictError};

/// A memory round trip under load (a thread's lifetime when it loads once from
/// DRAM), ns: calibrated on j2d5pt f32 16384² on the H100 (1.076 ms). The
/// time-tiling model and the latency warning use it; [`cost`] adds
/// [`EXPOSED_LATENCY_NS`] instead.
pub const DRAM_ROUND_NS: f64 = 1084.0;
/// The memory latency a thread leaves exposed per round of loads, ns, added to
/// the busiest resource's time once per wave of resident threads: fitted (with
/// [`ROWS_PER_ROUND`], the tail of the last wave, the register estimate and
/// the Hopper presets' L2 bandwidth) on 145 schedules of the bench programs:
/// 91 timed on an H200 (2026-11-26, bench/gpu/h200/) and 54 vector schedules
/// on an H100 (2026-11-27, bench/gpu/h100/vectors/). It is what makes low
/// occupancy (many registers per thread) cost time even where DRAM bandwidth
/// bounds the kernel.
pub const EXPOSED_LATENCY_NS: f64 = 450.0;
/// Rows a thread computing a run of points has in flight at once (one round):
/// ptxas streams a long run's rows one after another as their registers free
/// (the SASS of the 7x7 blur's 4x4 run loads its 10 rows in 8 steps), so a run
/// waits one round per this many of the rows it loads
/// ([`KernelSpec::rows_per_thread`]). Fitted with [`EXPOSED_LATENCY_NS`].
pub const ROWS_PER_ROUND: u32 = 8;
/// Each further dependent round of loads that hits L2 (tile loading loops), ns:
/// calibrated on j2d9pt f32 16384² with its shared tile on the H100 (1.916 ms).
pub const L2_ROUND_NS: f64 = 282.0;
/// The fraction of the copy bandwidth a stencil's streams reach when bound by
/// DRAM: the median of the f64 H100 cases bound by DRAM (0.85–0.89).
pub const STREAM_EFFICIENCY: f64 = 0.88;
/// Launch overhead of one kernel, µs.
pub const LAUNCH_US: f64 = 3.0;
/// Reading a reduction's value back to the host for the check, µs.
pub const CHECK_SYNC_US: f64 = 10.0;
/// Registers assumed per thread when ptxas is not available.
pub const ASSUMED_REGISTERS: u32 = 32;

/// Registers a kernel is estimated to need where ptxas has not been run (the
/// schedule heuristic's candidates): [`ASSUMED_REGISTERS`] for one point per
/// thread; a thread computing a run of `R` points holds values of each read
/// the run does not share, so 20 + `R` × (distinct reads once the run's axis is
/// dropped, in 4-byte words) / 2, at least [`ASSUMED_REGISTERS`] and at most
/// 255. Fitted on ptxas 12.8's figures for the bench kernels (the Rician `us`
/// kernel, 11 doubles a point: 62 registers at `R` = 2 and 160 at 8, estimated
/// 42 and 108; j2d5pt, 3 floats: 63 at 16, estimated 44): low where the
/// compiler keeps every value live, high for sums it folds as it loads (star3d1r
/// keeps 40 at 16, estimated 60).
pub fn estimated_registers(spec: &KernelSpec) -> u32 {
    let run: u32 = spec.points_per_thread.iter().product();
    if run <= 1 {
        return ASSUMED_REGISTERS;
    }
    // The run's axis: the one with the most points per thread (x y z), as an
    // index into the offsets (outermost first).
    let rank = spec.bounds.len();
    let axis_xyz = (0..3)
        .max_by_key(|&d| (spec.points_per_thread[d], d))
        .unwrap_or(0);
    let axis = rank.checked_sub(1 + axis_xyz);
    let mut held: Vec<(&str, Vec<i64>, usize)> = Vec::new();
    for read in &spec.reads {
        let lateral: Vec<i64> = read
            .offset
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != axis)
            .map(|(_, o)| *o)
            .collect();
        if !held
            .iter()
            .any(|(level, offset, _)| *level == read.level && *offset == lateral)
        {
            held.push((&read.level, lateral, read.elem));
        }
    }
    let words: usize = held.iter().map(|(_, _, elem)| elem.div_ceil(4)).sum();
    let estimate = 20 + (run as usize * words).div_ceil(2);
    estimate.clamp(ASSUMED_REGISTERS as usize, 255) as u32
}

/// What a kernel is for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "of")]
pub enum Role {
    /// A stencil part (or fused stencils).
    Stencil(String),
    /// The last stencil kernel's variant with the check fused in (it also
    /// folds the reduction terms and writes one partial per block): runs
    /// instead of the plain kernel in the iterations where the check is due.
    FusedCheck(String),
    /// A reduction part writing per-block partials.
    ReductionPart(String),
    /// The passes folding a reduction's partials (the multi-block fold and
    /// the single-block final pass).
    ReductionFinish(String),
}

/// One global access of a point: a field level at an offset.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Access {
    /// The level, as the generated code names its buffer (`a_t0`).
    pub level: String,
    /// Element size, bytes.
    pub elem: usize,
    /// Offset per axis, outermost first.
    pub offset: Vec<i64>,
}

/// A level staged in a shared-memory tile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tile {
    /// The level's buffer name.
    pub level: String,
    /// Element size, bytes.
    pub elem: usize,
    /// Smallest and largest offset read per axis, outermost first.
    pub halo: Vec<(i64, i64)>,
    /// Distinct offsets each point reads from the tile.
    pub reads_per_point: usize,
    /// Those offsets, outermost axis first (a thread's run of points reads the
    /// elements they share once: [`Tile::reads_per_thread_point`]).
    pub offsets: Vec<Vec<i64>>,
}

impl Tile {
    /// Shared-memory reads per point of a thread computing `points_per_thread`
    /// (x y z) consecutive points: the distinct elements its points read, over
    /// its points, as the generated kernel loads a read its points share once.
    /// Without offsets, [`Tile::reads_per_point`].
    pub fn reads_per_thread_point(&self, points_per_thread: [u32; 3]) -> f64 {
        let run: u32 = points_per_thread.iter().product();
        if self.offsets.is_empty() || run <= 1 {
            return self.reads_per_point as f64;
        }
        let elements: std::collections::HashSet<Vec<i64>> = thread_points(points_per_thread)
            .flat_map(|point| self.offsets.iter().map(move |o| offset_at(o, point)))
            .collect();
        elements.len() as f64 / f64::from(run)
    }
}

/// The points of a thread's run, x y z, as offsets from its first.
fn thread_points(points_per_thread: [u32; 3]) -> impl Iterator<Item = [u32; 3]> {
    let [nx, ny, nz] = points_per_thread;
    (0..nz).flat_map(move |z| (0..ny).flat_map(move |y| (0..nx).map(move |x| [x, y, z])))
}

/// A read's offset (outermost axis first) from the thread's `point` (x y z)
/// of its run: the offset moved by the point along the three innermost axes.
/// With vectors the x points are consecutive, so x moves by the point too;
/// scalar x points lie a block apart, which the callers tell apart.
fn offset_at(offset: &[i64], point: [u32; 3]) -> Vec<i64> {
    let rank = offset.len();
    offset
        .iter()
        .enumerate()
        .map(|(a, o)| {
            let d = rank - 1 - a;
            o + if d < 3 { i64::from(point[d]) } else { 0 }
        })
        .collect()
}

/// Everything the model needs to know about one kernel launch.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelSpec {
    /// The kernel's name in the generated code.
    pub name: String,
    /// What it computes.
    pub role: Role,
    /// Threads per block, x y z.
    pub block: [u32; 3],
    /// Points per thread, x y z.
    pub points_per_thread: [u32; 3],
    /// With more than 1, the thread's `points_per_thread[0]` x points are
    /// consecutive and each row of them is one vector access of this many
    /// elements (`--vector`); 1: they are `block[0]` apart.
    pub vector: u32,
    /// The blocks start at the first x index rounded down to a multiple of
    /// this ([`crate::kir::plan::Launch::align_x`]).
    pub align_x: u32,
    /// The points, inclusive bounds per axis, outermost first.
    pub bounds: Vec<(i64, i64)>,
    /// The grid's extent per axis, outermost first (row pitches).
    pub grid_dims: Vec<usize>,
    /// Distinct global reads of one point (levels not staged).
    pub reads: Vec<Access>,
    /// Distinct global writes of one point.
    pub writes: Vec<Access>,
    /// Shared-memory tiles.
    pub tiles: Vec<Tile>,
    /// Instructions per thread, from the kernel IR.
    pub instructions_per_thread: f64,
    /// Of which `double` arithmetic.
    pub fp64_per_thread: f64,
    /// Instructions per thread with `--fma`'s contraction (each floating-point
    /// `a * b ± c` one `FFMA`): equal to `instructions_per_thread` under
    /// `--fma`, fewer without it where the kernel multiplies and adds.
    pub instructions_per_thread_fma: f64,
    /// Static shared memory per block, bytes (the kernel IR's arrays).
    pub shared_bytes: usize,
    /// Launches per iteration (1 for stencils; 1/every for reductions).
    pub per_iteration: f64,
    /// Loads a thread issues one after the other in a run-time loop (the
    /// final pass of a reduction); 1 elsewhere.
    pub sequential_loads: u32,
}

impl KernelSpec {
    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.block.iter().product()
    }

    /// Points each block covers along x, y, z.
    pub fn points_per_block(&self) -> [u32; 3] {
        [0, 1, 2].map(|d| self.block[d] * self.points_per_thread[d])
    }

    /// Rows a thread loads from global memory: the distinct reads of its
    /// points once the x offset is dropped (the loads of one row are issued
    /// together; ptxas streams the rows of a long run one after another).
    pub fn rows_per_thread(&self) -> u32 {
        let rows: std::collections::HashSet<(&str, Vec<i64>)> =
            thread_points(self.points_per_thread)
                .flat_map(|point| {
                    self.reads.iter().map(move |read| {
                        let mut row = offset_at(&read.offset, point);
                        // Offsets are outermost first: x is the last.
                        row.pop();
                        (read.level.as_str(), row)
                    })
                })
                .collect();
        rows.len() as u32
    }

    /// 4-byte words a thread loads from global memory: its points' distinct
    /// elements; with vectors, per row, each aligned group of `vector`
    /// elements as the kernel loads it ([`crate::kir::vector`]): one element
    /// alone as a scalar, two or more in the same half of a group of 4 as a
    /// 2-vector, others as the whole group.
    pub fn loaded_words_per_thread(&self) -> u32 {
        let vector = i64::from(self.vector.max(1));
        let mut groups: HashMap<(&str, usize, Vec<i64>), BTreeSet<i64>> = HashMap::new();
        for point in thread_points(self.points_per_thread) {
            for read in &self.reads {
                let mut element = offset_at(&read.offset, point);
                let mut lane = 0;
                if vector > 1 {
                    // The x points are consecutive: the aligned group.
                    if let Some(x) = element.last_mut() {
                        lane = x.rem_euclid(vector);
                        *x = x.div_euclid(vector);
                    }
                } else {
                    // Scalar x points lie a block apart: distinct loads.
                    element.push(i64::from(point[0]));
                }
                groups
                    .entry((read.level.as_str(), read.elem, element))
                    .or_default()
                    .insert(lane);
            }
        }
        groups
            .iter()
            .map(|((_, elem, _), lanes)| {
                let half = |l: &i64| *l < 2;
                let elements = if lanes.len() == 1 {
                    1
                } else if vector == 4 && (lanes.iter().all(half) || !lanes.iter().any(half)) {
                    2
                } else {
                    self.vector
                };
                (*elem as u32).div_ceil(4) * elements
            })
            .sum()
    }

    /// Points of the launch.
    pub fn points(&self) -> u64 {
        self.bounds
            .iter()
            .map(|(lo, hi)| (hi - lo + 1).max(0) as u64)
            .product()
    }

    /// Blocks of the launch.
    pub fn blocks(&self) -> u64 {
        let rank = self.bounds.len();
        let per_block = self.points_per_block();
        self.bounds
            .iter()
            .enumerate()
            .map(|(a, (lo, hi))| {
                let extent = (hi - lo + 1).max(0) as u64;
                extent.div_ceil(per_block[rank - 1 - a] as u64)
            })
            .product()
    }
}

/// How many blocks an SM holds, and what stops it holding more.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Occupancy {
    /// Registers per thread used for the figure.
    pub registers: u32,
    /// Whether `registers` came from ptxas (else assumed).
    pub registers_from_ptxas: bool,
    /// Resident blocks per SM.
    pub blocks_per_sm: u32,
    /// Resident threads over the SM's maximum.
    pub fraction: f64,
    /// What limits it: "threads", "registers", "shared memory" or "blocks".
    pub limiter: String,
}

/// Computes occupancy; an error names the limit a block exceeds.
pub fn occupancy(
    device: &Device,
    threads: u32,
    registers: Option<u32>,
    shared_bytes: usize,
) -> Result<Occupancy, OccupancyError> {
    let regs = registers.unwrap_or(ASSUMED_REGISTERS).max(1);
    if threads > device.max_threads_per_block {
        return Err(OccupancyError::Threads {
            threads,
            limit: device.max_threads_per_block,
            device: device.name,
        });
    }
    if shared_bytes > device.shared_per_block as usize {
        return Err(OccupancyError::SharedMemory {
            bytes: shared_bytes,
            limit: device.shared_per_block,
            device: device.name,
        });
    }
    let warps = threads.div_ceil(32);
    // Registers are allocated per warp in units of 256.
    let regs_per_warp = (regs * 32).div_ceil(256) * 256;
    let by_threads = device.max_threads_per_sm / (warps * 32);
    let by_registers = device.registers_per_sm / (regs_per_warp * warps);
    let by_shared = if shared_bytes == 0 {
        u32::MAX
    } else {
        // 1 KiB per block is reserved by the system on sm_80 and later.
        device.shared_per_sm / (shared_bytes as u32 + 1024)
    };
    let candidates = [
        (by_threads, "threads"),
        (by_registers, "registers"),
        (by_shared, "shared memory"),
        (device.max_blocks_per_sm, "blocks"),
    ];
    let (blocks, limiter) = candidates
        .iter()
        .copied()
        .min_by_key(|(n, _)| *n)
        .unwrap_or((0, "threads"));
    if blocks == 0 {
        return Err(OccupancyError::Registers {
            threads,
            registers: regs,
            needed: regs_per_warp * warps,
            available: device.registers_per_sm,
            device: device.name,
        });
    }
    Ok(Occupancy {
        registers: regs,
        registers_from_ptxas: registers.is_some(),
        blocks_per_sm: blocks,
        fraction: (blocks * warps * 32) as f64 / device.max_threads_per_sm as f64,
        limiter: limiter.into(),
    })
}

/// A resource a kernel can be bound by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// DRAM bandwidth.
    Dram,
    /// L2 to SM bandwidth.
    L2,
    /// L1/shared-memory wavefronts (the load/store pipeline).
    L1,
    /// Instruction issue.
    Issue,
    /// FP64 throughput.
    Fp64,
    /// Memory latency: too few loads in flight (Little's law).
    Latency,
    /// Launch overhead (the kernel is too small to matter).
    Launch,
}

impl Resource {
    /// In words, for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Resource::Dram => "DRAM bandwidth",
            Resource::L2 => "L2 bandwidth",
            Resource::L1 => "L1/shared wavefronts",
            Resource::Issue => "instruction issue",
            Resource::Fp64 => "FP64 throughput",
            Resource::Latency => "memory latency (too few loads in flight)",
            Resource::Launch => "launch overhead",
        }
    }
}

/// The time each resource needs for one launch, seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Times {
    /// DRAM bytes over the copy bandwidth × [`STREAM_EFFICIENCY`].
    pub dram: f64,
    /// L2→SM bytes over the L2 bandwidth.
    pub l2: f64,
    /// L1 wavefronts over one per SM per clock.
    pub l1: f64,
    /// Warp instructions over four per SM per clock.
    pub issue: f64,
    /// FP64 warp instructions over the SM's FP64 lanes.
    pub fp64: f64,
    /// Waves of resident blocks times a block's exposed latency
    /// ([`EXPOSED_LATENCY_NS`] per point plus tile rounds), added to the
    /// busiest of the others.
    pub latency: f64,
    /// Launch overhead.
    pub launch: f64,
}

/// What one launch costs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelCost {
    /// Points of the launch.
    pub points: u64,
    /// Blocks of the launch.
    pub blocks: u64,
    /// DRAM bytes per point (compulsory plus tile halos that miss L2).
    pub dram_bytes_per_point: f64,
    /// Of which halo overfetch.
    pub dram_overfetch_per_point: f64,
    /// L2→SM bytes per point (32-byte sectors a block requests).
    pub l2_bytes_per_point: f64,
    /// Shared-memory bytes per point (tile stores and loads).
    pub shared_bytes_per_point: f64,
    /// L1 wavefronts per point (global lines and shared accesses).
    pub l1_wavefronts_per_point: f64,
    /// Instructions per point (kernel IR count over points per thread).
    pub instructions_per_point: f64,
    /// Dependent rounds of memory loads in a block's life.
    pub memory_rounds: u32,
    /// Rows a thread loads from global memory (reads of its points that
    /// differ in some axis but x; a row of vector points is one).
    pub rows_per_thread: u32,
    /// 4-byte words a thread loads from global memory.
    pub loaded_words_per_thread: u32,
    /// Waves of resident blocks the launch takes (at least 1).
    pub waves: f64,
    /// Occupancy.
    pub occupancy: Occupancy,
    /// Time per resource.
    pub times: Times,
    /// Predicted time of one launch, seconds.
    pub time: f64,
    /// The resource that sets it.
    pub bound: Resource,
}

/// Predicts one launch of `spec` on `device`, with ptxas's registers if known.
pub fn cost(
    spec: &KernelSpec,
    device: &Device,
    registers: Option<u32>,
) -> Result<KernelCost, OccupancyError> {
    let occupancy = occupancy(device, spec.threads(), registers, spec.shared_bytes)?;
    let points = spec.points();
    let blocks = spec.blocks();
    let traffic = traffic::per_point(spec, device);
    let n = points as f64;
    let clock = device.clock_ghz * 1e9;
    let sms = device.sms as f64;
    let warps = blocks as f64 * spec.threads().div_ceil(32) as f64;
    let waves = (blocks as f64 / (sms * occupancy.blocks_per_sm as f64)).max(1.0);
    let points_per_thread: u32 = spec.points_per_thread.iter().product();
    let rows_per_thread = spec.rows_per_thread();
    // A thread computing a run of points waits for its rows a few at a time
    // ([`ROWS_PER_ROUND`]); a grid-stride loop (reductions) waits for every
    // fourth load.
    let run_rounds = if spec.sequential_loads > 1 {
        spec.sequential_loads
    } else if points_per_thread > 1 {
        rows_per_thread.div_ceil(ROWS_PER_ROUND).max(1)
    } else {
        1
    };
    let tile_rounds = traffic.rounds.max(1);
    let rounds = tile_rounds + run_rounds - 1;
    // Each wave of resident threads leaves one exposed latency per round of
    // its run, plus the dependent rounds of tile loads that hit L2.
    let lifetime = lifetime(run_rounds, tile_rounds);
    let times = Times {
        dram: n * traffic.dram / (device.copy_gb_s * 1e9 * STREAM_EFFICIENCY),
        l2: n * traffic.l2 / (device.l2_gb_s * 1e9),
        l1: n * traffic.l1_wavefronts / (sms * clock),
        issue: warps * spec.instructions_per_thread / (sms * 4.0 * clock),
        fp64: warps * spec.fp64_per_thread
            / (sms * (device.fp64_lanes_per_sm as f64 / 32.0) * clock),
        latency: if points == 0 { 0.0 } else { waves * lifetime },
        launch: LAUNCH_US * 1e-6,
    };
    // The latency the resident threads leave exposed adds to the busiest
    // resource's time (fitted on the H200: a max of the two under-predicts
    // every run of low occupancy); it bounds the kernel where it is the larger.
    let ranked = [
        (times.dram, Resource::Dram),
        (times.l2, Resource::L2),
        (times.l1, Resource::L1),
        (times.issue, Resource::Issue),
        (times.fp64, Resource::Fp64),
        (times.latency, Resource::Latency),
    ];
    let (_, bound) = ranked
        .iter()
        .copied()
        .fold((0.0, Resource::Launch), |best, (t, r)| {
            if t > best.0 {
                (t, r)
            } else {
                best
            }
        });
    let tail = wave_tail(waves);
    let busiest = ranked[..5].iter().map(|(t, _)| *t).fold(0.0, f64::max) * tail;
    let slowest = busiest + times.latency;
    Ok(KernelCost {
        points,
        blocks,
        dram_bytes_per_point: traffic.dram,
        dram_overfetch_per_point: traffic.dram_overfetch,
        l2_bytes_per_point: traffic.l2,
        shared_bytes_per_point: traffic.shared,
        l1_wavefronts_per_point: traffic.l1_wavefronts,
        instructions_per_point: spec.instructions_per_thread / points_per_thread.max(1) as f64,
        memory_rounds: rounds,
        rows_per_thread,
        loaded_words_per_thread: spec.loaded_words_per_thread(),
        waves,
        occupancy,
        times,
        time: times.launch + slowest,
        bound: if slowest < times.launch {
            Resource::Launch
        } else {
            bound
        },
    })
}

/// A thread's exposed latency, seconds: [`EXPOSED_LATENCY_NS`] per round of
/// its run, [`L2_ROUND_NS`] per further dependent round of tile loads.
fn lifetime(run_rounds: u32, tile_rounds: u32) -> f64 {
    (EXPOSED_LATENCY_NS * run_rounds as f64 + (tile_rounds - 1) as f64 * L2_ROUND_NS) * 1e-9
}

/// Blocks of the last, partial wave start when the others end: the
/// throughput a launch of a few waves reaches is that of whole waves
/// (fitted: the 7x7 blur's 4x4 runs fill 3.07 waves and take 4), `⌈w⌉ / w`.
fn wave_tail(waves: f64) -> f64 {
    if waves > 1.0 {
        waves.ceil() / waves
    } else {
        1.0
    }
}

/// One launch of a stencil kernel with its loads in flight bounded by the
/// registers ptxas gave it (`cost` computed with ptxas's registers): the
/// run's rounds are the more of [`ROWS_PER_ROUND`]'s and
/// [`warnings::register_rounds`]'s (one register per word in flight), DRAM
/// reaches the copy bandwidth (no [`STREAM_EFFICIENCY`]), and the latency is
/// paid over whole waves. bench/gpu/MODEL.md ("the blur's vector runs
/// modelled") fitted it on the 166 schedules timed on the H100 and H200:
/// log-RMS error 0.124 against [`cost`]'s 0.148, and its fastest schedule
/// within 6 % of the fastest measured for every program (`bench/gpu/refit.py
/// --variant registers` recombines it). It needs ptxas's registers, which
/// follow no simple estimate, so [`cost`] keeps its own rounds and only
/// `--ptxas-rank` ([`choose`]) ranks on this. A kernel whose thread loads in
/// a run-time loop (a reduction's final pass) keeps [`cost`]'s time.
pub fn register_bound_time(spec: &KernelSpec, cost: &KernelCost) -> f64 {
    if spec.sequential_loads > 1 {
        return cost.time;
    }
    let points: u32 = spec.points_per_thread.iter().product();
    let by_rows = if points > 1 {
        cost.rows_per_thread.div_ceil(ROWS_PER_ROUND).max(1)
    } else {
        1
    };
    // `cost.memory_rounds` is the tile's rounds plus the run's by rows, less 1.
    let tile_rounds = (cost.memory_rounds + 1).saturating_sub(by_rows).max(1);
    let run_rounds = if points > 1 {
        by_rows.max(warnings::register_rounds(
            cost.loaded_words_per_thread,
            cost.occupancy.registers,
            points,
        ))
    } else {
        by_rows
    };
    let lifetime = lifetime(run_rounds, tile_rounds);
    let waves = cost.waves;
    let tail = wave_tail(waves);
    let latency = if cost.points == 0 {
        0.0
    } else {
        waves * lifetime * tail
    };
    let t = &cost.times;
    let busiest = [t.dram * STREAM_EFFICIENCY, t.l2, t.l1, t.issue, t.fp64]
        .into_iter()
        .fold(0.0, f64::max)
        * tail;
    t.launch + busiest + latency
}

#[cfg(test)]
mod tests;
