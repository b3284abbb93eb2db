//! Schedules: how a program runs on a GPU, never what it computes.
//!
//! Per stencil: the block shape and the points each thread computes per axis
//! (innermost axis first, as CUDA's x, y, z), where each field time level it reads
//! lives (global memory, the read-only path, or a shared-memory tile with halo),
//! where each coefficient table lives (folded into literals, constant memory or
//! shared memory), and whether to fuse with the next stencil (off by default;
//! see `schedule/fusion.rs` for when it is legal).
//!
//! [`Schedule::new`] applies a default heuristic, then the region's pragma hints,
//! then the command line ([`ScheduleRequest`]). Any schedule gives the same
//! results; `lower::check_limits` rejects one a device cannot run before any
//! launch.
//!
//! Index width: the GPU kernels compute the flattened index of a field element
//! in 32-bit `int` unless the schedule says [`Schedule::wide_indices`], which
//! [`Schedule::for_run`] sets when a grid of the run has more than
//! [`MAX_NARROW_GRID_POINTS`] points (and [`ScheduleRequest::wide_indices`]
//! forces); per-axis coordinates stay `int` either way.
//!
//! Time tiling: [`Schedule::for_run`] resolves `--time T` or the pragma's
//! `time:` / `time_steps:` ([`time::requested_time_steps`]) and, above 1, plans
//! overlapped time tiling ([`time::plan_time_tiling`]) into [`Schedule::time`];
//! what cannot be time-tiled runs untiled with a note in
//! [`Schedule::time_notes`]. Without a request the model chooses the step
//! count (`model::choose`). `compile -b overtile` plans the pragma's step
//! count from the program alone ([`Schedule::set_time_steps_static`]); its
//! generated host code computes each launch's steps at run time.
//! The C back-end time-tiles too (see [`cpu_tile`]).

pub mod cpu_tile;
mod describe;
mod fusion;
pub mod time;
mod vector;

pub use fusion::unfuse;
use vector::check_vector;
pub use vector::{MAX_VECTOR_BYTES, VECTOR_WIDTHS};

use std::collections::BTreeMap;

use crate::ir::env::RunEnv;

use crate::analysis::footprint::{Footprint, Level, LevelExtent};
use crate::ir::{FieldId, Program, TableId};

/// Where a field time level read by a stencil lives while the stencil runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldPlacement {
    /// Plain global memory (levels the stencil also writes).
    Global,
    /// Global memory through the read-only data path (`const __restrict__`).
    ReadOnly,
    /// A shared-memory tile of the block's points plus the halo, loaded
    /// cooperatively with the boundary mode applied.
    SharedTile,
}

/// Where a coefficient table lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TablePlacement {
    /// Folded into literals where the loops over it are unrolled (constant
    /// memory for any access whose index is not known at compile time).
    Literals,
    /// Constant memory.
    Constant,
    /// Copied into shared memory at the start of each block.
    Shared,
    /// A module-scope array in global memory (CUDA `__device__`, not `const`,
    /// so the compiler cannot fold it): every read is a global load. The
    /// Thorin report's `no_shm` variant; OpenCL 1.2 has no such arrays and
    /// keeps the table in constant memory.
    Global,
}

/// The schedule of one stencil.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StencilSchedule {
    /// Threads per block along x, y, z (x is the grid's innermost axis).
    pub block: [u32; 3],
    /// Points computed per thread along x, y, z: the thread's run. Along x its
    /// points stay `block[0]` apart (a warp's lanes read consecutive elements);
    /// along y and z they are consecutive (`thread * tile + p`), so that the
    /// rows or planes neighbouring points share are loaded once (register
    /// streaming; with `block[2] = 1` a 3-D thread marches `tile[2]` planes:
    /// 2.5-D blocking). At most [`MAX_RUN_LENGTH`] per axis.
    pub tile: [u32; 3],
    /// With more than 1 (2 or 4, at most 16 bytes of every field the stencil
    /// reads or writes): along x a thread computes this many consecutive
    /// points, reading and writing each row of them as one aligned vector
    /// access (`float4`), instead of `tile[0]` points `block[0]` apart (which
    /// is then 1). Wider accesses keep more bytes in flight per thread. No
    /// field is staged in shared memory then.
    pub vector: u32,
    /// Placement of every field time level the stencil reads.
    pub fields: BTreeMap<Level, FieldPlacement>,
    /// Placement of every coefficient table the stencil reads.
    pub tables: BTreeMap<TableId, TablePlacement>,
    /// Run the next stencil in this stencil's kernel, at the same point right
    /// after it (fused stencils share one schedule, that of the group's first).
    pub fuse_with_next: bool,
    /// With `fuse_with_next`: the next stencil reads what this one writes at
    /// neighbouring points, so the kernel recomputes this stencil over the
    /// block's points plus that halo into a shared tile (see
    /// `schedule/fusion.rs`); `None` for fusion at the same point.
    pub recompute: Option<HaloRecompute>,
}

/// A producer stencil fused with its consumer by recomputing the halo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HaloRecompute {
    /// The level the producer writes and the consumer reads from the tile.
    pub level: Level,
    /// The consumer's read offsets of it per axis, outermost first: the tile
    /// covers the block's points widened by them.
    pub halo: Vec<(i64, i64)>,
    /// Whether the producer's values at the block's own points also go to
    /// global memory (the level is read after the kernel or is a result).
    pub write_back: bool,
}

/// A whole program's schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// One per stencil of the iterate, in order.
    pub stencils: Vec<StencilSchedule>,
    /// Why stencils were left apart when fusion was asked for (for `--verbose`).
    pub notes: Vec<String>,
    /// Compute flattened field indices in 64 bits (`long`): needed for grids of
    /// more than [`MAX_NARROW_GRID_POINTS`] points, which the host plan refuses
    /// to run with 32-bit kernels.
    pub wide_indices: bool,
    /// Overlapped time tiling of the whole iteration, when a run asked for (or
    /// the model chose) more than one step per launch and the program allows it.
    pub time: Option<time::TimeTiling>,
    /// What was clamped about the time-tile size, or why the run is not
    /// time-tiled: printed as notices whether or not `--verbose`.
    pub time_notes: Vec<String>,
    /// The kernels may contract `a * b + c` into fused multiply-adds
    /// ([`ScheduleRequest::fma`]; lowering marks the kernel module with it).
    pub fma: bool,
    /// Blocks per SM the CUDA kernels declare they should fit
    /// ([`ScheduleRequest::min_blocks_per_sm`]).
    pub min_blocks_per_sm: Option<u32>,
}

/// The most points a grid may have for kernels that index with 32-bit `int`
/// (the largest flattened index is one less).
pub const MAX_NARROW_GRID_POINTS: u64 = i32::MAX as u64;

/// Whether a grid of `dims` points (outermost first) needs 64-bit indices.
pub fn needs_wide_indices(dims: &[usize]) -> bool {
    dims.iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
        .is_none_or(|p| p > MAX_NARROW_GRID_POINTS)
}

/// `--shm`: which fields (and tables) to stage in shared memory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ShmRequest {
    /// The heuristic decides.
    #[default]
    Auto,
    /// Nothing in shared memory.
    None,
    /// Exactly the named fields and tables (where legal: a field only where the
    /// stencil does not write it).
    Names(Vec<String>),
}

impl ShmRequest {
    /// Parses `FIELD[,FIELD...]|none|auto`.
    pub fn parse(text: &str) -> ShmRequest {
        match text.trim() {
            "auto" | "" => ShmRequest::Auto,
            "none" => ShmRequest::None,
            list => ShmRequest::Names(
                list.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect(),
            ),
        }
    }
}

/// The shared-memory variants compared in the Thorin report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ThorinVariant {
    /// `no_shm`: nothing in shared memory; tables in global memory.
    NoShm,
    /// `shm_filteronly`: coefficient tables in shared memory.
    TablesOnly,
    /// `shm_both`: tables and tiles of the read-only fields in shared memory.
    TilesAndTables,
}

/// What the user asked for (command line or API); unset items fall back to the
/// pragma hints, then to the heuristic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScheduleRequest {
    /// Threads per block, innermost axis first.
    pub block: Option<Vec<u32>>,
    /// Points per thread, innermost axis first.
    pub tile: Option<Vec<u32>>,
    /// Consecutive points per thread along x read and written as one vector
    /// (`--vector`; [`StencilSchedule::vector`]).
    pub vector: Option<u32>,
    /// Shared-memory staging.
    pub shm: ShmRequest,
    /// Force every table to one placement.
    pub tables: Option<TablePlacement>,
    /// Fuse consecutive stencils where legal.
    pub fuse: bool,
    /// The fields whose values are read after the run (`run --output`);
    /// `None`: every field (a library caller, `--verify`, or no `--output`).
    /// A producer fused with halo recompute skips writing a level to global
    /// memory only when its field is not among them and nothing else reads it.
    pub results: Option<Vec<String>>,
    /// Compute flattened field indices in 64 bits even when every grid is
    /// small enough for 32 (`--index64`; chosen anyway for larger grids).
    pub wide_indices: bool,
    /// Time steps one launch advances for its tile (`--time T`; overlapped time
    /// tiling): `None` leaves it to the pragma's `time:` / `time_steps:`, then
    /// to the heuristic.
    pub time_steps: Option<u32>,
    /// Let the compiler contract `a * b + c` into one fused multiply-add
    /// (`--fma`): not a shape, but the kernels' instruction counts, hence the
    /// model's choice, depend on it.
    pub fma: bool,
    /// `--min-blocks N`: each CUDA kernel declares `__launch_bounds__(threads,
    /// N)`, letting ptxas use up to `registers per SM / (threads × N)`
    /// registers a thread (1: up to 255) rather than squeezing them, spills
    /// included, to its own occupancy thresholds. The OpenCL kernels have no
    /// such attribute and are unchanged.
    pub min_blocks_per_sm: Option<u32>,
    /// `--ptxas-rank K`: the model's `K` fastest candidates of each stencil
    /// are compiled (NVRTC, `ptxas -v`) and ranked on ptxas's registers
    /// (the model's `rank` module); CUDA only. Not a shape: it decides how the
    /// shapes left open are chosen.
    pub ptxas_rank: Option<u32>,
}

impl ScheduleRequest {
    /// The request for one of the Thorin report's variants.
    pub fn thorin(variant: ThorinVariant) -> ScheduleRequest {
        let (shm, tables) = match variant {
            ThorinVariant::NoShm => (ShmRequest::None, TablePlacement::Global),
            ThorinVariant::TablesOnly => (ShmRequest::None, TablePlacement::Shared),
            ThorinVariant::TilesAndTables => (ShmRequest::Auto, TablePlacement::Shared),
        };
        ScheduleRequest {
            shm,
            tables: Some(tables),
            ..ScheduleRequest::default()
        }
    }
}

/// What a device allows per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Threads per block.
    pub max_threads_per_block: u32,
    /// Threads per block along each axis.
    pub max_block_dims: [u32; 3],
    /// Static shared memory per block, in bytes.
    pub shared_bytes_per_block: usize,
    /// Threads resident on one SM (or compute unit) at most: `--min-blocks`
    /// blocks of a kernel must fit in them.
    pub max_threads_per_sm: u32,
}

impl DeviceLimits {
    /// Limits of current NVIDIA GPUs without opting into large shared memory.
    pub const CUDA_DEFAULT: DeviceLimits = DeviceLimits {
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        shared_bytes_per_block: 48 * 1024,
        max_threads_per_sm: 2048,
    };
}

/// The default block for a grid of `rank` dimensions (256 threads, a power of two
/// so reduction trees need no tail handling).
pub fn default_block(rank: usize) -> [u32; 3] {
    match rank {
        1 => [256, 1, 1],
        2 => [32, 8, 1],
        _ => [32, 4, 2],
    }
}

/// Shared memory the heuristic is willing to use per block (bytes).
const HEURISTIC_SHARED_BUDGET: usize = 32 * 1024;
/// A level is worth a tile when a point reads at least this many distinct offsets.
const TILE_MIN_REUSE: usize = 9;
/// Tables with at most this many elements are folded into literals.
const FOLD_MAX_ELEMENTS: usize = 1024;

/// The most points one block may compute (threads times points per thread,
/// over all axes): 2^20, far above what any device runs in one block (1024
/// threads on CUDA), so that every product of block and tile sizes fits the
/// 32-bit `int` arithmetic of the kernels and the host's `u32` counts.
pub const MAX_POINTS_PER_BLOCK: u64 = 1 << 20;

/// The longest run of points a thread may compute along one axis (`--tile`):
/// a run is unrolled into straight-line code, and beyond 16 points the code
/// and its registers grow while the H100 probe (bench/gpu/probe) measured
/// short runs (4) beating long ones (16–64).
pub const MAX_RUN_LENGTH: u32 = 16;

/// Refuses a tile whose run along some axis exceeds [`MAX_RUN_LENGTH`].
fn check_run_length(tile: [u32; 3], stencil: &str) -> Result<(), ScheduleError> {
    match tile.iter().position(|&t| t > MAX_RUN_LENGTH) {
        None => Ok(()),
        Some(d) => Err(ScheduleError(format!(
            "stencil `{stencil}`: --tile {} asks each thread for a run of {} points along {}, \
             more than the limit of {MAX_RUN_LENGTH} points per axis; give a shorter run \
             (e.g. --tile 1,4)",
            join(&tile),
            tile[d],
            ["x", "y", "z"][d]
        ))),
    }
}

/// An invalid schedule request, as a sentence saying what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ScheduleError(pub String);

fn axes3(list: &[u32], what: &str, rank: usize, stencil: &str) -> Result<[u32; 3], ScheduleError> {
    if list.is_empty() || list.len() > 3 || list.contains(&0) {
        return Err(ScheduleError(format!(
            "--{what} {}: give 1 to 3 positive numbers, innermost axis first (e.g. --{what} 32,8)",
            join(list)
        )));
    }
    if list.len() > rank && list[rank..].iter().any(|&v| v != 1) {
        return Err(ScheduleError(format!(
            "--{what} {} has {} axes but stencil `{stencil}` runs on a {rank}-D grid; \
             give at most {rank} numbers",
            join(list),
            list.len()
        )));
    }
    let mut out = [1; 3];
    for (i, v) in list.iter().take(rank).enumerate() {
        out[i] = *v;
    }
    Ok(out)
}

/// Refuses a block and tile whose points per block exceed
/// [`MAX_POINTS_PER_BLOCK`] (computed in `u64`: three `u32` factors of each
/// kind cannot overflow it before the comparison).
fn check_points_per_block(
    block: [u32; 3],
    tile: [u32; 3],
    stencil: &str,
) -> Result<(), ScheduleError> {
    let points = block.iter().zip(&tile).try_fold(1u64, |acc, (&b, &t)| {
        acc.checked_mul(u64::from(b))?.checked_mul(u64::from(t))
    });
    match points {
        Some(p) if p <= MAX_POINTS_PER_BLOCK => Ok(()),
        _ => Err(ScheduleError(format!(
            "stencil `{stencil}`: block {} with tile {} asks each block to compute {} points, \
             more than the limit of {MAX_POINTS_PER_BLOCK} (2^20) points per block; \
             give a smaller --tile or --block (e.g. --block 32,8 --tile 1,4)",
            join(&block),
            join(&tile),
            points.map_or_else(|| "more than 2^64".to_string(), |p| p.to_string())
        ))),
    }
}

fn join(list: &[u32]) -> String {
    list.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The rank of the grid a stencil runs on (that of the first field it writes).
pub fn stencil_rank(program: &Program, stencil: &crate::ir::Stencil) -> usize {
    stencil
        .parts
        .first()
        .map(|p| p.subset.rank())
        .filter(|&r| r > 0)
        .unwrap_or_else(|| program.grids.first().map(|g| g.rank()).unwrap_or(1))
}

impl Schedule {
    /// The schedule for `program`: heuristic, then pragma hints, then `request`.
    /// Fusion compares subsets as written.
    pub fn new(program: &Program, request: &ScheduleRequest) -> Result<Schedule, ScheduleError> {
        Schedule::build(program, request, None)
    }

    /// The schedule for a run with `env`'s parameter values: as [`Schedule::new`],
    /// but fusion compares subsets by the points they cover, and indices are
    /// 64-bit when a grid has more than [`MAX_NARROW_GRID_POINTS`] points.
    pub fn for_run(
        program: &Program,
        request: &ScheduleRequest,
        env: &RunEnv,
    ) -> Result<Schedule, ScheduleError> {
        Schedule::build(program, request, Some(env))
    }

    fn build(
        program: &Program,
        request: &ScheduleRequest,
        env: Option<&RunEnv>,
    ) -> Result<Schedule, ScheduleError> {
        let merged = with_pragma(program, request)
            .map_err(|d| ScheduleError(d.one_line(&program.source)))?;
        let request = &merged;
        let Some(iterate) = &program.iterate else {
            return Ok(Schedule {
                stencils: vec![],
                notes: vec![],
                wide_indices: request.wide_indices,
                time: None,
                time_notes: vec![],
                fma: request.fma,
                min_blocks_per_sm: request.min_blocks_per_sm,
            });
        };
        check_shm_names(program, request)?;
        let hinted = hinted_shape(program, request)
            .map_err(|d| ScheduleError(d.one_line(&program.source)))?;
        let mut notes = Vec::new();
        let groups: Vec<fusion::Group> = if request.fuse {
            fusion::groups(program, &iterate.stencils, env, request, &mut notes)
        } else {
            (0..iterate.stencils.len())
                .map(fusion::Group::single)
                .collect()
        };
        let mut stencils = Vec::new();
        for group in groups {
            let range = group.range.clone();
            let members = &iterate.stencils[range.clone()];
            let schedule = group_schedule(program, members, request, &hinted)?;
            for i in range.clone() {
                stencils.push(StencilSchedule {
                    fuse_with_next: i + 1 < range.end,
                    recompute: if i == range.start {
                        group.recompute.clone()
                    } else {
                        None
                    },
                    ..schedule.clone()
                });
            }
        }
        let wide_indices = request.wide_indices
            || env.is_some_and(|env| env.grid_dims().iter().any(|d| needs_wide_indices(d)));
        let mut schedule = Schedule {
            stencils,
            notes,
            wide_indices,
            time: None,
            time_notes: vec![],
            fma: request.fma,
            min_blocks_per_sm: request.min_blocks_per_sm,
        };
        if let Some(env) = env {
            let asked = time::requested_time_steps(program, request, env)
                .map_err(|d| ScheduleError(d.one_line(&program.source)))?;
            if let Some(asked) = asked {
                schedule.time_notes = asked.notes;
                schedule.set_time_steps(program, env, asked.steps);
            }
        }
        Ok(schedule)
    }

    /// Time-tiles the run with `steps` iterations per launch (1: untiled),
    /// with the blocks of the first stencil; where the program cannot be
    /// time-tiled, leaves it untiled and says why in [`Schedule::time_notes`].
    pub fn set_time_steps(&mut self, program: &Program, env: &RunEnv, steps: u32) {
        self.set_time_steps_with(program, Some(env), steps);
    }

    /// [`Schedule::set_time_steps`] for code generated before the parameters
    /// have values (`compile -b overtile`): the launches take the step count
    /// at run time, and a read whose offset depends on a parameter leaves the
    /// program untiled.
    pub fn set_time_steps_static(&mut self, program: &Program, steps: u32) {
        self.set_time_steps_with(program, None, steps);
    }

    /// The time tiling from `env`'s footprints, or the program's alone.
    fn set_time_steps_with(&mut self, program: &Program, env: Option<&RunEnv>, steps: u32) {
        self.time = None;
        if steps <= 1 || self.stencils.is_empty() {
            return;
        }
        let first = &self.stencils[0];
        let rank = program.grids.first().map_or(1, |g| g.rank());
        let per_block: [u32; 3] = [0, 1, 2].map(|d| {
            if d < rank {
                first.block[d].saturating_mul(first.tile[d])
            } else {
                1
            }
        });
        let block: [u32; 3] = [0, 1, 2].map(|d| if d < rank { first.block[d] } else { 1 });
        let planned = match env {
            Some(env) => {
                time::plan_time_tiling(program, env, steps, block, per_block, self.wide_indices)
            }
            None => {
                time::plan_time_tiling_static(program, steps, block, per_block, self.wide_indices)
            }
        };
        match planned {
            Ok(tiling) => self.time = Some(tiling),
            Err(why) => self.time_notes.push(format!(
                "`{}` runs untiled in time (one launch per iteration): {why}",
                program.name
            )),
        }
    }

    /// The schedule of stencil `i`.
    pub fn stencil(&self, i: usize) -> &StencilSchedule {
        &self.stencils[i]
    }
}

/// The pragma's `block:` and `tile:`, evaluated where the request does not
/// override them (and its `vector:`, checked); an identifier without a value
/// is an error at the identifier.
pub fn hinted_shape(
    program: &Program,
    request: &ScheduleRequest,
) -> Result<HintedShape, crate::diag::Diagnostic> {
    let hints = &program.hints;
    if request.vector.is_none() {
        hints.vector_value()?;
    }
    Ok(HintedShape {
        block: match request.block {
            Some(_) => None,
            None => hints.block_values()?,
        },
        tile: match request.tile {
            Some(_) => None,
            None => hints.tile_values()?,
        },
    })
}

/// `request` with the knobs the region's pragma sets and `request` leaves
/// open: `vector:` where no `--vector`, `shm:` where `--shm` is absent or
/// `auto`, `fuse:on` where no `--fuse` (a command-line flag wins). `block:`,
/// `tile:` and `time:` are read where the schedule is built ([`hinted_shape`],
/// [`time::asked_time_steps`]). An identifier without a value is an error at
/// the identifier.
pub fn with_pragma(
    program: &Program,
    request: &ScheduleRequest,
) -> Result<ScheduleRequest, crate::diag::Diagnostic> {
    let hints = &program.hints;
    let mut out = request.clone();
    if out.vector.is_none() {
        out.vector = hints.vector_value()?;
    }
    if let (ShmRequest::Auto, Some(words)) = (&out.shm, &hints.shm) {
        out.shm = ShmRequest::parse(&words.join(","));
    }
    out.fuse |= hints.fuse == Some(true);
    Ok(out)
}

/// Threads per block and points per thread from the region's pragma.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HintedShape {
    /// `block:`, innermost axis first.
    pub block: Option<Vec<u32>>,
    /// `tile:`, innermost axis first.
    pub tile: Option<Vec<u32>>,
}

/// Rejects `--shm` names that are neither a field nor a table.
fn check_shm_names(program: &Program, request: &ScheduleRequest) -> Result<(), ScheduleError> {
    let ShmRequest::Names(names) = &request.shm else {
        return Ok(());
    };
    for name in names {
        let known = program.fields.iter().any(|f| &f.name == name)
            || program.tables.iter().any(|t| &t.name == name);
        if !known {
            let mut all: Vec<&str> = program.fields.iter().map(|f| f.name.as_str()).collect();
            all.extend(program.tables.iter().map(|t| t.name.as_str()));
            return Err(ScheduleError(format!(
                "--shm (or the pragma's shm:) names `{name}`, which is not a field or table of `{}`; \
                 choose among: {} (or none, auto)",
                program.name,
                all.join(", ")
            )));
        }
    }
    Ok(())
}

/// The schedule shared by a group of stencils run in one kernel (a single
/// stencil, or a fused run): block, points per thread, and placements of
/// everything the group reads. A level any member writes is never tiled.
fn group_schedule(
    program: &Program,
    members: &[crate::ir::Stencil],
    request: &ScheduleRequest,
    hinted: &HintedShape,
) -> Result<StencilSchedule, ScheduleError> {
    let leader = &members[0];
    let rank = stencil_rank(program, leader);
    let block_req = request.block.as_ref().or(hinted.block.as_ref());
    let tile_req = request.tile.as_ref().or(hinted.tile.as_ref());
    let block = match block_req {
        Some(b) => axes3(b, "block", rank, &leader.name)?,
        None => default_block(rank),
    };
    let tile = match tile_req {
        Some(t) => axes3(t, "tile", rank, &leader.name)?,
        None => [1, 1, 1],
    };
    let parts: Vec<&crate::ir::StencilPart> = members.iter().flat_map(|s| &s.parts).collect();
    let vector = request.vector.unwrap_or(1);
    check_vector(program, &parts, vector, tile, request, &leader.name)?;
    let points_x = if vector > 1 { [vector, 1, 1] } else { [1; 3] };
    check_points_per_block(
        block,
        [0, 1, 2].map(|d| tile[d] * points_x[d]),
        &leader.name,
    )?;
    check_run_length(tile, &leader.name)?;
    let mut footprints: Vec<Footprint> = parts
        .iter()
        .map(|p| Footprint::of_part(program, p))
        .collect();
    if members.len() > 1 {
        // One kernel runs them all: one tile per level, covering every member's reads.
        footprints = vec![Footprint::merge(&footprints)];
    }
    let written: Vec<Level> = footprints.iter().flat_map(Footprint::written).collect();
    let mut fields = BTreeMap::new();
    let mut shared_bytes = 0usize;
    for fp in &footprints {
        for reads in &fp.reads {
            let level = reads.level();
            if fields.contains_key(&level) {
                continue;
            }
            let field = &program.fields[reads.field.0];
            let read_only = !written.contains(&level);
            let tileable = read_only
                && reads.static_box().is_some()
                && rank == field_rank(program, reads.field);
            let bytes = tile_bytes(reads, block, tile, field.ty.size_bytes());
            let wanted = match &request.shm {
                ShmRequest::None => false,
                _ if vector > 1 => false,
                ShmRequest::Names(names) => names.contains(&field.name),
                ShmRequest::Auto => {
                    reads.distinct >= TILE_MIN_REUSE
                        && shared_bytes.saturating_add(bytes) <= HEURISTIC_SHARED_BUDGET
                }
            };
            let placement = if tileable && wanted {
                shared_bytes = shared_bytes.saturating_add(bytes);
                FieldPlacement::SharedTile
            } else if read_only {
                FieldPlacement::ReadOnly
            } else {
                FieldPlacement::Global
            };
            fields.insert(level, placement);
        }
    }
    let mut tables = BTreeMap::new();
    for part in &parts {
        for_each_table(&part.body, &mut |t| {
            tables
                .entry(t)
                .or_insert_with(|| table_placement(program, t, request));
        });
    }
    Ok(StencilSchedule {
        block,
        tile,
        vector,
        fields,
        tables,
        fuse_with_next: false,
        recompute: None,
    })
}

/// Where table `t` goes: as forced, as named in `--shm`, else folded when small.
fn table_placement(program: &Program, t: TableId, request: &ScheduleRequest) -> TablePlacement {
    let table = &program.tables[t.0];
    if let Some(forced) = request.tables {
        return forced;
    }
    if let ShmRequest::Names(names) = &request.shm {
        if names.contains(&table.name) {
            return TablePlacement::Shared;
        }
    }
    if table.values.len() <= FOLD_MAX_ELEMENTS {
        TablePlacement::Literals
    } else {
        TablePlacement::Constant
    }
}

fn field_rank(program: &Program, f: FieldId) -> usize {
    program.grids[program.fields[f.0].grid.0].rank()
}

/// The bytes of a level's shared tile (points per block plus the halo, per
/// axis); `usize::MAX` when the reads have no static box or the count overflows,
/// which no device's shared memory holds.
fn tile_bytes(reads: &LevelExtent, block: [u32; 3], tile: [u32; 3], elem: usize) -> usize {
    let Some(range) = reads.static_box() else {
        return usize::MAX;
    };
    let rank = range.len();
    range
        .iter()
        .enumerate()
        .try_fold(elem, |bytes, (axis, (lo, hi))| {
            let d = rank - 1 - axis;
            let points = u64::from(block[d]).checked_mul(u64::from(tile[d]))?;
            let halo = u64::try_from(hi.checked_sub(*lo)?).ok()?;
            let extent = usize::try_from(points.checked_add(halo)?).ok()?;
            bytes.checked_mul(extent)
        })
        .unwrap_or(usize::MAX)
}

fn for_each_table(body: &[crate::ir::Stmt], f: &mut dyn FnMut(TableId)) {
    use crate::ir::{ExprKind, Stmt};
    fn visit(e: &crate::ir::Expr, f: &mut dyn FnMut(TableId)) {
        e.visit(&mut |s| {
            if let ExprKind::Table { table, .. } = &s.kind {
                f(*table);
            }
        })
    }
    for stmt in body {
        match stmt {
            Stmt::Assign { value, .. } => visit(value, f),
            Stmt::Store { value, target, .. } => {
                visit(value, f);
                target.offset.iter().for_each(|e| visit(e, f));
            }
            Stmt::For { body, .. } => for_each_table(body, f),
        }
    }
}
