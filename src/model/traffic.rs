//! Memory traffic per point, by simulating the addresses of sample warps.
//!
//! - **L1 wavefronts**: a warp's global access costs one L1 cycle per 128-byte
//!   line its active lanes touch; a shared access `ceil(32 × elem / 128)`
//!   (conflict-free, as tile indices are affine and unit-stride in x).
//! - **L2→SM bytes**: the 32-byte sectors one block requests, every read offset
//!   and tile element united (what the block reads twice hits its L1).
//! - **DRAM bytes**: every level touched once per point (compulsory), plus a
//!   tile's halo when the rows it shares with the next blocks do not stay in L2.
//! - **Memory rounds**: loads a thread must wait for one after the other — one
//!   for a tile's fixed-shape loads (all issued before the first shared store;
//!   one per element for a tile too large to unroll, whose loop makes each load
//!   wait for its store), plus one for the global reads after the barrier.
//! - **Streaming runs**: a thread's points are `block[0]` apart along x and
//!   consecutive along y and z; the distinct elements a thread reads are counted
//!   once (a read its run's points share is one load, as in the kernel).
//!
//! Sample blocks sit one block in from the grid's corner, four along x so that
//! row alignments average out.

use std::collections::{HashMap, HashSet};

use crate::model::{Device, KernelSpec};

/// Traffic of one point (and the rounds of one thread).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    /// DRAM bytes per point.
    pub dram: f64,
    /// Of which tile halo overfetch.
    pub dram_overfetch: f64,
    /// L2→SM bytes per point.
    pub l2: f64,
    /// Shared-memory bytes per point.
    pub shared: f64,
    /// L1 wavefronts per point.
    pub l1_wavefronts: f64,
    /// Dependent rounds of loads per thread.
    pub rounds: u32,
}

const LINE: i64 = 128;
const SECTOR: i64 = 32;

struct Geometry<'a> {
    spec: &'a KernelSpec,
    rank: usize,
    strides: Vec<i64>,
    per_block: [u32; 3],
}

impl Geometry<'_> {
    /// Thread coordinates (x, y, z) of linear thread `lin`.
    fn thread(&self, lin: u32) -> [i64; 3] {
        let b = self.spec.block;
        [
            (lin % b[0]) as i64,
            ((lin / b[0]) % b[1]) as i64,
            (lin / (b[0] * b[1])) as i64,
        ]
    }

    /// The sample blocks' first points, per thread axis.
    fn sample_blocks(&self) -> Vec<[i64; 3]> {
        let rank = self.rank;
        let mut counts = [1i64; 3];
        let mut lo = [0i64; 3];
        for (a, (l, h)) in self.spec.bounds.iter().enumerate() {
            let d = rank - 1 - a;
            counts[d] = ((h - l + 1).max(1))
                .div_euclid(self.per_block[d] as i64)
                .max(1);
            lo[d] = if d == 0 {
                l - l.rem_euclid(i64::from(self.spec.align_x.max(1)))
            } else {
                *l
            };
        }
        let pick = |d: usize, k: i64| (if counts[d] > 1 { 1 + k } else { 0 }).min(counts[d] - 1);
        (0..4)
            .map(|k| {
                [0, 1, 2].map(|d| {
                    let index = if d == 0 { pick(0, k) } else { pick(d, 0) };
                    lo[d] + index * self.per_block[d] as i64
                })
            })
            .collect::<Vec<_>>()
    }

    /// Element index of a point (thread axes) plus an offset (outermost first).
    fn element(&self, point: [i64; 3], offset: &[i64]) -> i64 {
        (0..self.rank)
            .map(|a| {
                (point[self.rank - 1 - a] + offset.get(a).copied().unwrap_or(0)) * self.strides[a]
            })
            .sum()
    }

    /// The points of a thread, as lowering lays them out: `block[0]` apart
    /// along x, consecutive along y and z (a streaming run).
    fn thread_points(&self, base: [i64; 3], t: [i64; 3]) -> Vec<[i64; 3]> {
        let ppt = self.spec.points_per_thread.map(i64::from);
        let b = self.spec.block;
        let mut out = Vec::new();
        for pz in 0..ppt[2] {
            for py in 0..ppt[1] {
                for px in 0..ppt[0] {
                    // Vectors: the x points are consecutive from `t * ppt`.
                    let x = if self.spec.vector > 1 {
                        t[0] * ppt[0] + px
                    } else {
                        t[0] + px * b[0] as i64
                    };
                    out.push([
                        base[0] + x,
                        base[1] + t[1] * ppt[1] + py,
                        base[2] + t[2] * ppt[2] + pz,
                    ]);
                }
            }
        }
        out
    }
}

/// Traffic of one point of `spec` on `device`.
pub fn per_point(spec: &KernelSpec, device: &Device) -> Traffic {
    let rank = spec.bounds.len();
    if rank == 0 || spec.points() == 0 {
        return Traffic {
            rounds: 1,
            ..Traffic::default()
        };
    }
    let mut strides = vec![1i64; rank];
    for a in (0..rank.saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * spec.grid_dims.get(a + 1).copied().unwrap_or(1) as i64;
    }
    let geo = Geometry {
        spec,
        rank,
        strides,
        per_block: spec.points_per_block(),
    };
    let threads = spec.threads();
    let warps = threads.div_ceil(32);
    let block_points: f64 = geo.per_block.iter().map(|&v| v as f64).product();
    let samples = geo.sample_blocks();

    let mut lines_total = 0.0;
    let mut lanes_total = 0.0;
    let mut tile_wavefronts = 0.0;
    let mut sectors_total = 0.0;
    for base in &samples {
        let mut sectors: HashSet<(&str, i64)> = HashSet::new();
        for w in 0..warps {
            let lanes: Vec<[i64; 3]> = (w * 32..((w + 1) * 32).min(threads))
                .map(|lin| geo.thread(lin))
                .collect();
            let per_lane: Vec<Vec<[i64; 3]>> =
                lanes.iter().map(|&t| geo.thread_points(*base, t)).collect();
            let points_each = per_lane.first().map_or(0, Vec::len);
            // A thread's distinct elements per level (relative to its first
            // point): a read that several points of a run share is one load.
            let mut keys: Vec<(&str, usize, i64)> = Vec::new();
            for p in 0..points_each {
                for access in spec.reads.iter().chain(&spec.writes) {
                    let key = (
                        access.level.as_str(),
                        access.elem,
                        geo.element(per_lane[0][p], &access.offset)
                            - geo.element(per_lane[0][0], &[]),
                    );
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
                lanes_total += per_lane.len() as f64;
            }
            // One access per key, or with vectors per aligned group of
            // `vector` elements (a vector load or store): the lines it touches.
            let vector = i64::from(spec.vector.max(1));
            let mut accesses: HashMap<(&str, i64), HashSet<i64>> = HashMap::new();
            for (level, elem, relative) in &keys {
                let group = if vector > 1 {
                    relative.div_euclid(vector)
                } else {
                    *relative
                };
                let lines = accesses.entry((*level, group)).or_default();
                for pts in &per_lane {
                    let byte = (geo.element(pts[0], &[]) + relative) * *elem as i64;
                    lines.insert(byte.div_euclid(LINE));
                    sectors.insert((*level, byte.div_euclid(SECTOR)));
                }
            }
            lines_total += accesses.values().map(|l| l.len() as f64).sum::<f64>();
            // Tile loads: each warp strides over the tile by the block size.
            tile_wavefronts += warp_tile_loads(&geo, *base, &lanes, &mut sectors);
        }
        sectors_total += sectors.len() as f64;
    }
    let blocks = samples.len() as f64;
    let mut l1 = if lanes_total > 0.0 {
        lines_total / lanes_total
    } else {
        0.0
    };
    l1 += tile_wavefronts / blocks / block_points;
    let mut shared = 0.0;
    let mut tile_rounds = 0;
    let mut overfetch = 0.0;
    for tile in &spec.tiles {
        let warp_access = ((32 * tile.elem) as f64 / LINE as f64).ceil();
        let reads = tile.reads_per_thread_point(spec.points_per_thread);
        l1 += reads * warp_access / 32.0;
        let extents = tile_extents(&geo, tile);
        let elements: f64 = extents.iter().map(|&e| e as f64).product();
        shared += (elements / block_points + reads) * tile.elem as f64;
        // Fixed-shape loads are all issued before the first shared store: one
        // round; a tile too large to unroll loads in strided loops, one round
        // per element a thread loads.
        let loads = (0..3)
            .map(|d| ceil_div(extents[d], spec.block[d] as i64) as u32)
            .product::<u32>();
        tile_rounds += if loads <= crate::lower::MAX_UNROLLED_TILE_LOADS {
            1
        } else {
            loads
        };
        // The rows a block shares with its neighbours along the outermost axis
        // come back from L2 only if a slab of them fits in half of it.
        if rank >= 2 {
            let slab = extents[rank - 1] as f64
                * spec.grid_dims[1..]
                    .iter()
                    .map(|&v| v as f64)
                    .product::<f64>()
                * tile.elem as f64;
            if slab > device.l2_bytes as f64 / 2.0 {
                overfetch += (elements / block_points - 1.0) * tile.elem as f64;
            }
        }
    }
    let compulsory = compulsory_bytes(spec);
    let rounds = if spec.tiles.is_empty() {
        1
    } else {
        tile_rounds + u32::from(!spec.reads.is_empty())
    };
    Traffic {
        dram: compulsory + overfetch,
        dram_overfetch: overfetch,
        l2: sectors_total / blocks * SECTOR as f64 / block_points,
        shared,
        l1_wavefronts: l1,
        rounds,
    }
}

/// The L1 wavefronts of one warp's loads of every tile of a block at `base`
/// (its `lanes`' thread indices), each adding the L2 sectors it touches to
/// `sectors`.
fn warp_tile_loads<'s>(
    geo: &Geometry<'s>,
    base: [i64; 3],
    lanes: &[[i64; 3]],
    sectors: &mut HashSet<(&'s str, i64)>,
) -> f64 {
    let spec = geo.spec;
    let mut wavefronts = 0.0;
    for tile in &spec.tiles {
        let extents = tile_extents(geo, tile);
        let trips: Vec<i64> = (0..3)
            .map(|d| ceil_div(extents[d], spec.block[d] as i64))
            .collect();
        for iz in 0..trips[2] {
            for iy in 0..trips[1] {
                for ix in 0..trips[0] {
                    let mut lines = HashSet::new();
                    let mut active = 0;
                    for t in lanes {
                        let l = [
                            t[0] + ix * spec.block[0] as i64,
                            t[1] + iy * spec.block[1] as i64,
                            t[2] + iz * spec.block[2] as i64,
                        ];
                        if (0..3).any(|d| l[d] >= extents[d]) {
                            continue;
                        }
                        active += 1;
                        let point = [0, 1, 2].map(|d| base[d] + l[d]);
                        let origin: Vec<i64> = tile.halo.iter().map(|h| h.0).collect();
                        let byte = geo.element(point, &origin) * tile.elem as i64;
                        lines.insert(byte.div_euclid(LINE));
                        sectors.insert((tile.level.as_str(), byte.div_euclid(SECTOR)));
                    }
                    if active > 0 {
                        let stores = ((active * tile.elem) as f64 / LINE as f64).ceil();
                        wavefronts += lines.len() as f64 + stores;
                    }
                }
            }
        }
    }
    wavefronts
}

/// The bytes per point every level read or written costs at least: one
/// element each.
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

/// A tile's extent along thread axes x, y, z.
fn tile_extents(geo: &Geometry<'_>, tile: &crate::model::Tile) -> [i64; 3] {
    let mut extents = [1i64; 3];
    for (a, (lo, hi)) in tile.halo.iter().enumerate() {
        let d = geo.rank - 1 - a;
        extents[d] = geo.per_block[d] as i64 + hi - lo;
    }
    extents
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1).div_euclid(b.max(1))
}
