//! Optimization warnings: why a kernel is slow and what would change it, in
//! words, from the model's figures.

use crate::model::ptxas::PtxasFigures;
use crate::model::{Device, KernelCost, KernelSpec, Resource, Role, DRAM_ROUND_NS};

/// Rounds of loads ([`register_rounds`]) from which a run is said to be held
/// back by its registers: every schedule the H100 timed with 5 or more ran
/// 1.08–1.65× slower than the model predicted (bench/gpu/MODEL.md, "the
/// blur's vector runs modelled"); with 4 or fewer, 0.83–1.03× but for the
/// 7x7 blur's vector runs.
pub const REGISTER_ROUNDS_WARNED: u32 = 5;

/// Registers of a thread that hold neither loaded values nor its points'
/// results (indices, addresses), in [`register_rounds`].
pub const ADDRESS_REGISTERS: u32 = 8;

/// Rounds in which a thread with `registers` (from ptxas) issues the
/// `loaded_words` of its run of `points`: one register per word in flight,
/// `⌈words / (registers − 8 − points)⌉`. ptxas gives some runs few registers
/// for what they load (j3d27pt's runs of two `float4` planes: 32 registers for
/// 72 words) and then issues the loads a few at a time as the sums free
/// registers, each batch waiting for the one before (the SASS shows it).
pub fn register_rounds(loaded_words: u32, registers: u32, points: u32) -> u32 {
    loaded_words
        .div_ceil(registers_for_loads(registers, points))
        .max(1)
}

/// The registers of a thread left for loads in flight: those neither
/// addresses nor its `points`' results, at least 1.
fn registers_for_loads(registers: u32, points: u32) -> u32 {
    registers
        .saturating_sub(ADDRESS_REGISTERS)
        .saturating_sub(points)
        .max(1)
}

/// Grids of this many points or more need the kernels' 64-bit indices
/// (`Schedule::wide_indices`, chosen by `Schedule::for_run`).
pub const INDEX_LIMIT: u64 = 1 << 31;

/// Who chose a kernel's block and points per thread: what a warning about
/// them may advise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeSource {
    /// The user (`--block` and `--tile`, or the region's pragma): a warning
    /// says what to change.
    Given,
    /// The model, which weighed the alternatives: a warning says what the
    /// chosen shape trades rather than advising against the model's choice.
    Model,
}

/// The warnings of one kernel. `unstaged` is the cost of the same kernel with
/// its tiles read from global memory instead (when it has tiles); `shape`
/// says who chose its block and points per thread.
pub fn warnings(
    spec: &KernelSpec,
    cost: &KernelCost,
    device: &Device,
    unstaged: Option<&KernelCost>,
    figures: Option<&PtxasFigures>,
    shape: ShapeSource,
) -> Vec<String> {
    let mut out = Vec::new();
    let points_per_thread: u32 = spec.points_per_thread.iter().product();
    staging_warning(spec, cost, unstaged, points_per_thread, &mut out);
    bound_warning(spec, cost, device, points_per_thread, &mut out);
    register_warnings(cost, figures, points_per_thread, &mut out);
    launch_shape_warnings(spec, cost, device, shape, points_per_thread, &mut out);
    out
}

/// Whether staging in shared memory is predicted slower than reading through L1.
fn staging_warning(
    spec: &KernelSpec,
    cost: &KernelCost,
    unstaged: Option<&KernelCost>,
    points_per_thread: u32,
    out: &mut Vec<String>,
) {
    if let Some(plain) = unstaged {
        if plain.time < cost.time {
            let levels: Vec<String> = spec
                .tiles
                .iter()
                .map(|t| format!("`{}` ({} reads per point)", t.level, t.reads_per_point))
                .collect();
            let figures = format!(
                "{:.1} µs with the tile against {:.1} µs reading through L1 — the tile is \
                 loaded in {} dependent rounds per thread ({:.2} wavefronts per point against \
                 {:.2})",
                us(cost.time),
                us(plain.time),
                cost.memory_rounds,
                cost.l1_wavefronts_per_point,
                plain.l1_wavefronts_per_point
            );
            // Reading through L1, a run whose loads ptxas's registers cannot
            // hold ran slower than predicted: the comparison is not to be
            // trusted there (the 7x7 blur's tile is the fastest measured).
            let rounds = register_rounds(
                plain.loaded_words_per_thread,
                plain.occupancy.registers,
                points_per_thread,
            );
            if points_per_thread > 1
                && plain.occupancy.registers_from_ptxas
                && rounds >= REGISTER_ROUNDS_WARNED
            {
                out.push(format!(
                    "staging {} in shared memory is predicted slower than reading through L1 \
                     ({figures}), but unstaged, ptxas gives each thread {} registers for the {} \
                     words its {} points load ({} rounds), and such runs ran 1.1–1.6x slower \
                     than predicted on the H100: time both (`run --json`) before passing \
                     --shm none",
                    levels.join(", "),
                    plain.occupancy.registers,
                    plain.loaded_words_per_thread,
                    points_per_thread,
                    rounds
                ));
            } else {
                out.push(format!(
                    "staging {} in shared memory costs more than it saves: {figures}; pass \
                     --shm none (or leave it out of --shm)",
                    levels.join(", "),
                ));
            }
        }
    }
}

/// What bounds the kernel, and what would change it.
fn bound_warning(
    spec: &KernelSpec,
    cost: &KernelCost,
    device: &Device,
    points_per_thread: u32,
    out: &mut Vec<String>,
) {
    match cost.bound {
        Resource::Issue => {
            let mut text = format!(
                "bound by instruction issue: {:.1} instructions per point ({} points per thread); \
                 a longer run of points per thread (--tile along the outermost axis) shares more \
                 loads in registers, and a coefficient table folded into literals saves its \
                 loads; what is left is the stencil's own arithmetic",
                cost.instructions_per_point, points_per_thread
            );
            // Contraction is the one change that shrinks the arithmetic itself.
            let contracted = spec.instructions_per_thread_fma / f64::from(points_per_thread.max(1));
            if contracted < 0.9 * cost.instructions_per_point {
                text.push_str(&format!(
                    ", whose multiplies and adds stay apart for results equal to the \
                     interpreter's: --fma contracts them into FFMAs, {contracted:.1} instructions \
                     per point (results then differ in the last bits)"
                ));
            }
            out.push(text);
        }
        Resource::L1 => out.push(format!(
            "bound by the L1/shared pipeline: {:.2} wavefronts per point ({} global and {} tiled \
             reads per point; a read shifted in x touches two 128-byte lines); sharing \
             neighbours between points of a thread in registers would cut them",
            cost.l1_wavefronts_per_point,
            spec.reads.len(),
            spec.tiles.iter().map(|t| t.reads_per_point).sum::<usize>()
        )),
        Resource::Latency if !matches!(spec.role, Role::ReductionFinish(_)) => {
            let mut levels: Vec<(&str, usize)> = Vec::new();
            for (name, elem) in spec
                .reads
                .iter()
                .map(|a| (a.level.as_str(), a.elem))
                .chain(spec.tiles.iter().map(|t| (t.level.as_str(), t.elem)))
            {
                if !levels.iter().any(|(n, _)| *n == name) {
                    levels.push((name, elem));
                }
            }
            let read_bytes: usize = levels.iter().map(|(_, e)| e).sum();
            let resident = cost.occupancy.blocks_per_sm * spec.threads();
            let in_flight = resident as f64 * read_bytes.max(1) as f64 * points_per_thread as f64
                / cost.memory_rounds.max(1) as f64;
            let needed = device.copy_gb_s * 1e9 * DRAM_ROUND_NS * 1e-9 / device.sms as f64;
            out.push(format!(
                "bound by memory latency: about {:.0} KiB in flight per SM ({} resident threads, \
                 {} point(s) each, {} dependent round(s) of loads) where the {} needs {:.0} KiB \
                 to reach its copy bandwidth (Little's law); more independent loads per thread \
                 — several points per thread with their loads issued together — would change it",
                in_flight / 1024.0,
                resident,
                points_per_thread,
                cost.memory_rounds,
                device.name,
                needed / 1024.0
            ));
        }
        Resource::L2 => out.push(format!(
            "bound by L2 bandwidth: {:.1} bytes per point come from L2 against {:.1} from DRAM; \
             neighbours along the outer axes are fetched again by every block — marching along \
             the outermost axis (2.5-D blocking) would keep them on the SM",
            cost.l2_bytes_per_point, cost.dram_bytes_per_point
        )),
        Resource::Fp64 => out.push(format!(
            "bound by FP64 throughput ({} FP64 lanes per SM on the {}): {:.0} double \
             operations per thread; use float where the precision allows",
            device.fp64_lanes_per_sm, device.name, spec.fp64_per_thread
        )),
        Resource::Latency | Resource::Dram | Resource::Launch => {}
    }
}

/// Warnings on registers: low occupancy for them, too few for the loads in
/// flight (on ptxas's figures), spills.
fn register_warnings(
    cost: &KernelCost,
    figures: Option<&PtxasFigures>,
    points_per_thread: u32,
    out: &mut Vec<String>,
) {
    if cost.occupancy.fraction < 0.5 && cost.occupancy.limiter == "registers" {
        out.push(format!(
            "occupancy {:.0} % limited by {} registers per thread; fewer points per thread or \
             a smaller block would let more warps hide latency",
            cost.occupancy.fraction * 100.0,
            cost.occupancy.registers
        ));
    }
    if let Some(f) = figures {
        let rounds = register_rounds(cost.loaded_words_per_thread, f.registers, points_per_thread);
        if points_per_thread > 1 && rounds >= REGISTER_ROUNDS_WARNED {
            out.push(format!(
                "ptxas gives each thread {} registers for the {} words its {} points load: \
                 about {} are left for loads in flight, so it issues them in about {} rounds, \
                 each waiting on memory (on the H100 every timed run of 5 or more ran \
                 1.1–1.6x slower than predicted here); --min-blocks 1 lets ptxas keep more \
                 registers a thread (fewer blocks resident), and fewer points per thread \
                 (--tile), narrower vectors (--vector 2) or a tile in shared memory (--shm) \
                 load fewer words per register; --ptxas-rank 16 lets the model weigh these on \
                 ptxas's registers",
                f.registers,
                cost.loaded_words_per_thread,
                points_per_thread,
                registers_for_loads(f.registers, points_per_thread),
                rounds
            ));
        }
        if f.spill_stores > 0 || f.spill_loads > 0 {
            out.push(format!(
                "ptxas spills registers ({} bytes stored, {} loaded per thread): each spill \
                 is a local-memory access; --min-blocks 1 lets ptxas use more registers a \
                 thread (fewer blocks resident), or use fewer points per thread",
                f.spill_stores, f.spill_loads
            ));
        }
    }
}

/// Microseconds.
fn us(t: f64) -> f64 {
    t * 1e6
}

/// Warnings on the launch's shape: 64-bit indices, misaligned warps, too few
/// blocks to fill the device, a slow reduction finish.
fn launch_shape_warnings(
    spec: &KernelSpec,
    cost: &KernelCost,
    device: &Device,
    shape: ShapeSource,
    points_per_thread: u32,
    out: &mut Vec<String>,
) {
    let grid_points: u64 = spec.grid_dims.iter().map(|&v| v as u64).product();
    if grid_points >= INDEX_LIMIT {
        out.push(format!(
            "the grid has {grid_points} points (2^31 or more): the kernels compute flattened \
             indices in 64 bits, a few more instructions per access than 32-bit ones; a grid \
             below 2^31 points keeps them 32-bit"
        ));
    }
    if spec.block[0] % 32 != 0 && spec.bounds.len() > 1 {
        out.push(format!(
            "block x = {} is not a multiple of 32: warps straddle rows and touch more 128-byte \
             lines per access; use --block 32,... or 64,...",
            spec.block[0]
        ));
    }
    let slots = device.sms as u64 * cost.occupancy.blocks_per_sm as u64;
    if cost.blocks > 0 && cost.blocks < slots && !matches!(spec.role, Role::ReductionFinish(_)) {
        out.push(match shape {
            ShapeSource::Given => format!(
                "only {} blocks for the {} an {} holds at once: the device is not filled; use \
                 fewer points per thread or a smaller block",
                cost.blocks, slots, device.name
            ),
            ShapeSource::Model => format!(
                "only {} blocks for the {} an {} holds at once: the device is not filled; the \
                 model chose this block and {} point(s) per thread anyway, predicting them \
                 faster than the smaller shapes it weighed, whose extra blocks would reload \
                 the neighbours these threads share; to compare, explain it with a smaller \
                 --block or --tile",
                cost.blocks, slots, device.name, points_per_thread
            ),
        });
    }
    if let Role::ReductionFinish(name) = &spec.role {
        if cost.time > 20e-6 {
            out.push(format!(
                "one block folds the {} partials of `{name}`, {} loads per thread, four at a \
                 time: {:.1} µs per check; fewer partials (each block folding more points) \
                 would shorten it",
                cost.points,
                spec.points_per_thread[0],
                us(cost.time)
            ));
        }
    }
}
