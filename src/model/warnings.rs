//! Optimization warnings: why a kernel is slow and what would change it, in
//! words, from the model's figures.

use crate::model::ptxas::PtxasFigures;
use crate::model::{Device, KernelCost, KernelSpec, Resource, Role, DRAM_ROUND_NS};

/// Grids of this many points or more need the kernels' 64-bit indices
/// (`Schedule::wide_indices`, chosen by `Schedule::for_run`).
pub const INDEX_LIMIT: u64 = 1 << 31;

/// The warnings of one kernel. `unstaged` is the cost of the same kernel with
/// its tiles read from global memory instead (when it has tiles).
pub fn warnings(
    spec: &KernelSpec,
    cost: &KernelCost,
    device: &Device,
    unstaged: Option<&KernelCost>,
    figures: Option<&PtxasFigures>,
) -> Vec<String> {
    let mut out = Vec::new();
    let us = |t: f64| t * 1e6;
    if let Some(plain) = unstaged {
        if plain.time < cost.time {
            let levels: Vec<String> = spec
                .tiles
                .iter()
                .map(|t| format!("`{}` ({} reads per point)", t.level, t.reads_per_point))
                .collect();
            out.push(format!(
                "staging {} in shared memory costs more than it saves: {:.1} µs with the tile \
                 against {:.1} µs reading through L1 — the tile is loaded in {} dependent rounds \
                 per thread ({:.2} wavefronts per point against {:.2}); pass --shm none (or \
                 leave it out of --shm)",
                levels.join(", "),
                us(cost.time),
                us(plain.time),
                cost.memory_rounds,
                cost.l1_wavefronts_per_point,
                plain.l1_wavefronts_per_point
            ));
        }
    }
    let points_per_thread: u32 = spec.points_per_thread.iter().product();
    match cost.bound {
        Resource::Issue => out.push(format!(
            "bound by instruction issue: {:.1} instructions per point ({} points per thread); a longer \
             run of points per thread (--tile along the outermost axis) shares more loads in \
             registers, and a coefficient table folded into literals saves its loads; what is \
             left is the stencil's own arithmetic",
            cost.instructions_per_point,
            points_per_thread
        )),
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
    if cost.occupancy.fraction < 0.5 && cost.occupancy.limiter == "registers" {
        out.push(format!(
            "occupancy {:.0} % limited by {} registers per thread; fewer points per thread or \
             a smaller block would let more warps hide latency",
            cost.occupancy.fraction * 100.0,
            cost.occupancy.registers
        ));
    }
    if let Some(f) = figures {
        if f.spill_stores > 0 || f.spill_loads > 0 {
            out.push(format!(
                "ptxas spills registers ({} bytes stored, {} loaded per thread): each spill \
                 is a local-memory access; use fewer points per thread",
                f.spill_stores, f.spill_loads
            ));
        }
    }
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
        out.push(format!(
            "only {} blocks for the {} an {} holds at once: the device is not filled; use \
             fewer points per thread or a smaller block",
            cost.blocks, slots, device.name
        ));
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
    out
}
