//! The time-tile geometry of an iterate and the CPU plan built on it: what
//! overlapped tiling needs of an iteration ([`tile_shape`]), the lags of a
//! wavefront ([`TileShape::wavefront`]) and what a march needs
//! ([`march_shape`]), derived from the parts' footprints; and the plan a C
//! printer is handed ([`CpuPlan`]).
//!
//! These are facts and data, not choices: which plan a run takes is chosen
//! by `schedule::cpu_tile::plan_cpu` (through the driver). They sit here,
//! below `schedule`, so that the C back-end can be handed a plan without
//! depending on what chooses one.

use crate::analysis::footprint::Footprint;
use crate::ir::{BoundaryMode, FieldId, GridId, Program};

mod error;
mod march;

pub use error::{MarchError, TileShapeError, WavefrontError};
pub use march::{march_shape, MarchShape};

/// What overlapped tiling needs to know of an iteration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileShape {
    /// The grid every field the stencils touch lives on.
    pub grid: GridId,
    /// Its rank.
    pub rank: usize,
    /// Per stencil part of one iteration, in run order: per axis (outermost
    /// first) how far below and above the point its reads reach.
    pub parts: Vec<Vec<(u64, u64)>>,
    /// Per axis: a periodic boundary is read across it, so tiles span it.
    pub whole: Vec<bool>,
    /// The fields the stencils read or write (copied into the window).
    pub used: Vec<FieldId>,
    /// The fields the stencils write (written back).
    pub written: Vec<FieldId>,
    /// Levels that one part alone writes (the only level of its field
    /// written) before anything in the iteration reads them: `(field, time,
    /// part)`. Their points in that part's subset are overwritten before
    /// they are read, so a sweep neither copies them into the window nor,
    /// unless the reductions or the caller are about to read them, writes
    /// them back.
    pub dead: Vec<(FieldId, i32, usize)>,
}

impl TileShape {
    /// Per axis, the reach of the parts after `part` in one iteration, summed
    /// (how much wider than the tile's centre `part` must compute in the last
    /// step of a sweep).
    pub fn reach_after(&self, part: usize) -> Vec<(u64, u64)> {
        sum_reaches(self.rank, &self.parts[part + 1..])
    }

    /// Per axis, the reach of one whole iteration (every part, summed).
    pub fn iteration_reach(&self) -> Vec<(u64, u64)> {
        sum_reaches(self.rank, &self.parts)
    }

    /// The lags of the wavefront order ([`TileOrder::Wavefront`]) along the
    /// outermost axis, or why the iteration cannot run in it.
    ///
    /// Number the stages of a sweep `k = 0, 1, ...` (each part of each
    /// inner step, in run order); in round `R` stage `k` computes row
    /// `R - lag_k` of its points, stages in ascending order. Let `above_k` and
    /// `below_k` be how far stage `k` reads above and below its row (a
    /// mirrored read already counts on both sides, see [`tile_shape`]). The
    /// order gives the results of the level-by-level one when, for every
    /// `j < k`, `lag_k - lag_j >= max(above_k, below_j)`:
    ///
    /// * *read after write*: in round `R` stage `k` reads rows up to
    ///   `R - lag_k + above_k <= R - lag_j`, which stage `j` has computed
    ///   (earlier rounds, or this one before `k`);
    /// * *write after read*: stage `k` overwrites row `R - lag_k` of a level
    ///   that stage `j` reads (the ping-pong levels alternate, so the stage
    ///   two after a reader writes where it reads); `j` has finished round
    ///   `R` and reads rows from `R + 1 - lag_j - below_j > R - lag_k` on,
    ///   so none it still needs;
    /// * a stage `m > k` writing a level `k` reads overwrites `k`'s rows after
    ///   `k` read them, the same inequality for the pair `(k, m)`; two writers
    ///   of one row write it in stage order. A row outside a stage's points
    ///   is never written by it, in either order.
    ///
    /// Increments `lag_k - lag_(k-1) = max(above_k, below_(k-1))` satisfy
    /// this for every pair, as the sum from `j + 1` to `k` holds the terms
    /// `max(above_k, ..)` and `max(.., below_j)`. The lags repeat every
    /// iteration: [`Wavefront::per_iteration`] apart.
    ///
    /// Refused: a 1-D grid (a row would be one point), and an outermost axis
    /// read across a periodic boundary (its reads wrap to the far end, which
    /// the wave reaches last).
    pub fn wavefront(&self) -> Result<Wavefront, WavefrontError> {
        if self.rank < 2 {
            return Err(WavefrontError::OneDimensional);
        }
        if self.whole[0] {
            return Err(WavefrontError::PeriodicOutermost);
        }
        let above = |p: usize| self.parts[p][0].1;
        let below = |p: usize| self.parts[p][0].0;
        let count = self.parts.len();
        let mut lags = vec![0u64; count];
        for p in 1..count {
            lags[p] = lags[p - 1] + above(p).max(below(p - 1));
        }
        let per_iteration = lags[count - 1] + above(0).max(below(count - 1));
        Ok(Wavefront {
            lags,
            per_iteration,
        })
    }
}

/// The lags of a wavefront along the outermost axis (see
/// [`TileShape::wavefront`]): stage `p` of inner step `s` computes, in round
/// `R`, row `R - s * per_iteration - lags[p]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wavefront {
    /// Per part of one iteration, in run order: its lag behind the first.
    pub lags: Vec<u64>,
    /// The lag of one iteration's first part behind the previous one's.
    pub per_iteration: u64,
}

impl Wavefront {
    /// The lag of the last stage of a sweep of `steps` iterations.
    pub fn last_lag(&self, steps: u64) -> u64 {
        steps.saturating_sub(1) * self.per_iteration + self.lags.last().copied().unwrap_or(0)
    }
}

fn sum_reaches(rank: usize, parts: &[Vec<(u64, u64)>]) -> Vec<(u64, u64)> {
    let mut total = vec![(0, 0); rank];
    for part in parts {
        for (t, r) in total.iter_mut().zip(part) {
            t.0 += r.0;
            t.1 += r.1;
        }
    }
    total
}

/// Whether `program`'s iteration can be time-tiled, and what the tiles need;
/// `Err` names the construct that prevents it.
pub fn tile_shape(program: &Program) -> Result<TileShape, TileShapeError> {
    let Some(iterate) = &program.iterate else {
        return Err(TileShapeError::NoIterate);
    };
    let mut grid: Option<GridId> = None;
    let mut used: Vec<FieldId> = Vec::new();
    let mut written: Vec<FieldId> = Vec::new();
    let mut parts = Vec::new();
    let mut whole: Vec<bool> = Vec::new();
    for stencil in &iterate.stencils {
        for part in &stencil.parts {
            let footprint = Footprint::of_part(program, part);
            for extent in footprint.reads.iter().chain(&footprint.writes) {
                let field = &program.fields[extent.field.0];
                match grid {
                    None => grid = Some(field.grid),
                    Some(g) if g != field.grid => {
                        return Err(TileShapeError::TwoGrids {
                            stencil: stencil.name.clone(),
                            first: program.grids[g.0].name.clone(),
                            second: program.grids[field.grid.0].name.clone(),
                        })
                    }
                    Some(_) => {}
                }
                if !used.contains(&extent.field) {
                    used.push(extent.field);
                }
            }
            for w in &footprint.writes {
                if !w.only_center() {
                    return Err(TileShapeError::WritesAway {
                        stencil: stencil.name.clone(),
                        field: program.fields[w.field.0].name.clone(),
                    });
                }
                if !written.contains(&w.field) {
                    written.push(w.field);
                }
            }
            let rank = part.subset.rank();
            if whole.is_empty() {
                whole = vec![false; rank];
            }
            let mut reach = vec![(0u64, 0u64); rank];
            for r in &footprint.reads {
                let field = &program.fields[r.field.0];
                let Some(offsets) = r.static_box() else {
                    return Err(TileShapeError::ParameterOffset {
                        stencil: stencil.name.clone(),
                        field: field.name.clone(),
                    });
                };
                if footprint.writes_level(r.field, r.time) && !r.only_center() {
                    return Err(TileShapeError::ReadsWhatItWrites {
                        stencil: stencil.name.clone(),
                        time: r.time,
                        field: field.name.clone(),
                    });
                }
                for (axis, &(lo, hi)) in offsets.iter().enumerate().take(rank) {
                    let (mut below, mut above) = (lo.min(0).unsigned_abs(), hi.max(0) as u64);
                    if field.boundary == BoundaryMode::Mirror {
                        // A read mirrored at the grid's edge lands on the other
                        // side of the point, as far as the offset: near an edge
                        // `[-2]` reads two points above.
                        below = below.max(above);
                        above = below;
                    }
                    reach[axis].0 = reach[axis].0.max(below);
                    reach[axis].1 = reach[axis].1.max(above);
                    if field.boundary == BoundaryMode::Periodic && (lo, hi) != (0, 0) {
                        whole[axis] = true;
                    }
                }
            }
            parts.push(reach);
        }
    }
    let Some(grid) = grid else {
        return Err(TileShapeError::NoStencil);
    };
    let rank = program.grids[grid.0].rank();
    if parts.iter().any(|p| p.len() != rank) {
        return Err(TileShapeError::SubsetRank);
    }
    used.sort();
    written.sort();
    let dead = dead_levels(program, &written);
    Ok(TileShape {
        grid,
        rank,
        parts,
        whole,
        used,
        written,
        dead,
    })
}

/// See [`TileShape::dead`].
fn dead_levels(program: &Program, written: &[FieldId]) -> Vec<(FieldId, i32, usize)> {
    let Some(iterate) = &program.iterate else {
        return Vec::new();
    };
    let footprints: Vec<Footprint> = iterate
        .stencils
        .iter()
        .flat_map(|s| &s.parts)
        .map(|part| Footprint::of_part(program, part))
        .collect();
    let mut dead = Vec::new();
    for &field in written {
        let writes: Vec<(usize, i32)> = footprints
            .iter()
            .enumerate()
            .flat_map(|(j, f)| {
                f.writes
                    .iter()
                    .filter(move |w| w.field == field)
                    .map(move |w| (j, w.time))
            })
            .collect();
        let [(part, time)] = writes.as_slice() else {
            continue;
        };
        let read_before = footprints[..=*part]
            .iter()
            .any(|f| f.read_extent(field, *time).is_some());
        if !read_before {
            dead.push((field, *time, *part));
        }
    }
    dead
}

/// The order in which a tile runs its inner steps.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum TileOrder {
    /// Level by level: each inner step over the whole window before the next
    /// (`for tstep { for part { rows } }`); the window is meant to stay in L2.
    #[default]
    Levels,
    /// A wave along the outermost axis: in each round every stage computes
    /// one row, lagging the stage before it by its reach
    /// ([`TileShape::wavefront`]), so a row is read again while it is in L1
    /// and tiles can be tall (little halo recomputed along that axis).
    Wavefront,
    /// A march along the outermost axis ([`march_shape`]): a tile of the
    /// other axes advances every inner step one plane per round, the first
    /// step reading the grid, the last writing the other level's array, and
    /// the steps between keeping a ring of planes each, small enough for L2.
    /// No window and no copies; for one stencil part updating one field of
    /// two levels.
    March,
}

impl TileOrder {
    /// `levels`, `wavefront` or `march`, as `--cpu-order` spells it.
    pub fn spelling(self) -> &'static str {
        match self {
            TileOrder::Levels => "levels",
            TileOrder::Wavefront => "wavefront",
            TileOrder::March => "march",
        }
    }
}

/// The time tiling of a sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuTiling {
    /// Iterations one sweep advances (at least 2; the last sweep before a
    /// check, or before the end, takes fewer).
    pub steps: u32,
    /// Tile size per axis, outermost first (points of the centre).
    pub tile: Vec<u64>,
    /// The order of the inner steps in a tile ([`TileOrder::Wavefront`] only
    /// where [`TileShape::wavefront`] allows it).
    pub order: TileOrder,
}

/// How the C back-end runs a program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuPlan {
    /// Time tiling, or `None` for one sweep per iteration.
    pub tiling: Option<CpuTiling>,
    /// OpenMP threads (`None`: OpenMP's default).
    pub threads: Option<u32>,
    /// What was clamped or refused, one line each: print as notes.
    pub notes: Vec<String>,
    /// What the heuristic chose and why: print under `-v`.
    pub reasons: Vec<String>,
}
