//! The decomposition of a program's grid over a Cartesian grid of ranks, and
//! the program each rank runs on its block.
//!
//! Axis `a` of the grid (`n` points) is cut into `dims[a]` blocks whose sizes
//! differ by at most one (the first `n % dims[a]` blocks get the extra point).
//! On an axis cut in more than one block every rank's block has ghost layers on
//! both sides, as wide as the program's farthest read in that direction; on an
//! uncut axis there are none, and the field's boundary mode applies at the
//! block's (= the grid's) edge exactly as in a single-process run.
//!
//! [`Layout::local_program`] is the program a rank runs: the same program with
//! the grid sized to the block plus its ghosts and every part's subset cut to
//! the points the rank owns, in block coordinates. Every back-end runs it
//! unchanged, so it computes each of its points as it computes the whole grid.
//! Nothing here communicates; `exec::mpi::driver` does.

use crate::analysis::footprint::Footprint;
use crate::ir::env::RunEnv;
use crate::ir::{BoundaryMode, Expr, Program, Subset, Value};

/// A box of points: inclusive bounds per axis, outermost first.
pub type Bounds = Vec<(i64, i64)>;

/// How the grid is cut, and how wide the ghost layers are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Ranks per axis, outermost first.
    pub dims: Vec<usize>,
    /// The grid's size per axis.
    pub global: Vec<usize>,
    /// Ghost layers per axis below and above the block (0 on uncut axes).
    pub ghost: Vec<(usize, usize)>,
}

/// The boxes of a rank's arrays (local indices) that a halo exchange of one
/// level reads and writes ([`Layout::halo_boxes`]): what a runner keeping
/// levels on a device must copy to the host before it, and back after it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HaloBoxes {
    /// Owned points the exchange reads: the faces (and, through the slabs,
    /// corners) sent to neighbours, and the planes a boundary mode copies into
    /// ghost layers at the grid's edge.
    pub read: Vec<Bounds>,
    /// Ghost points the exchange writes, across the whole local extent of the
    /// other axes (so corners included).
    pub written: Vec<Bounds>,
}

/// Why a grid cannot be cut as asked ([`Layout::new`]): what is wrong, and
/// what to change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayoutError {
    /// What is wrong.
    pub message: String,
    /// What to change.
    pub help: String,
}

impl LayoutError {
    fn new(message: impl Into<String>, help: impl Into<String>) -> LayoutError {
        LayoutError {
            message: message.into(),
            help: help.into(),
        }
    }
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.help)
    }
}

/// Help for what only a single-process run can do.
const ONE_RANK: &str = "run it on one rank (`mpirun -np 1`, or without mpirun)";

/// What `--decompose` asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecomposeSpec {
    /// MPI's balancing chooses (`MPI_Dims_create`).
    Auto,
    /// Ranks per axis as given (`PxQ[xR]`).
    Given(Vec<usize>),
}

/// A `--decompose` value that is neither `auto` nor one to three positive
/// counts of ranks joined by `x`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`--decompose {text}` is neither `auto` nor ranks per axis like `4`, `2x2` or `2x2x1`")]
pub struct DecomposeSpecError {
    /// The value as given.
    pub text: String,
}

/// Parses `auto` or `PxQ[xR]`.
pub fn parse_spec(text: &str) -> Result<DecomposeSpec, DecomposeSpecError> {
    if text == "auto" {
        return Ok(DecomposeSpec::Auto);
    }
    let dims: Option<Vec<usize>> = text
        .split('x')
        .map(|p| p.trim().parse::<usize>().ok().filter(|&d| d > 0))
        .collect();
    match dims {
        Some(dims) if (1..=3).contains(&dims.len()) => Ok(DecomposeSpec::Given(dims)),
        _ => Err(DecomposeSpecError {
            text: text.to_string(),
        }),
    }
}

/// The farthest read below and above the point, per axis, over every stencil
/// and reduction (parameter values known).
fn reach(program: &Program, env: &RunEnv, rank: usize) -> Result<Vec<(usize, usize)>, LayoutError> {
    let Some(iterate) = &program.iterate else {
        return Ok(vec![(0, 0); rank]);
    };
    let footprints = (0..iterate.stencils.len())
        .map(|s| Footprint::of_stencil_in(program, env, s))
        .chain((0..iterate.reductions.len()).map(|r| Footprint::of_reduction_in(program, env, r)));
    let mut reach = vec![(0usize, 0usize); rank];
    for footprint in footprints {
        for read in &footprint.reads {
            for (axis, extent) in read.axes.iter().enumerate() {
                let Some((lo, hi)) = extent else {
                    return Err(LayoutError::new(
                        format!(
                            "field `{}` is read at an offset that is not known before the run, \
                             so its ghost layers cannot be sized",
                            program.fields[read.field.0].name
                        ),
                        format!("give the offset's parameters with --set, or {ONE_RANK}"),
                    ));
                };
                reach[axis].0 = reach[axis].0.max((-lo).max(0) as usize);
                reach[axis].1 = reach[axis].1.max((*hi).max(0) as usize);
            }
        }
    }
    Ok(reach)
}

impl Layout {
    /// The layout of `program` over `dims` ranks per axis. Refuses several grids
    /// of different sizes, more ranks than points on an axis, and blocks
    /// thinner than the ghost layers their neighbours need.
    pub fn new(program: &Program, env: &RunEnv, dims: &[usize]) -> Result<Layout, LayoutError> {
        let global = env.grid_dims().first().cloned().ok_or_else(|| {
            LayoutError::new(
                format!("`{}` declares no grid to decompose", program.name),
                ONE_RANK,
            )
        })?;
        if env.grid_dims().iter().any(|d| *d != global) {
            let sizes: Vec<String> = env
                .grid_dims()
                .iter()
                .map(|d| d.iter().map(usize::to_string).collect::<Vec<_>>().join("x"))
                .collect();
            return Err(LayoutError::new(
                format!(
                    "`{}` has grids of different sizes ({}); a decomposed run cuts every grid \
                     in the same blocks, so they must have one size",
                    program.name,
                    sizes.join(", ")
                ),
                format!("give the grids one size with --set, or {ONE_RANK}"),
            ));
        }
        if dims.len() != global.len() {
            return Err(LayoutError::new(
                format!(
                    "--decompose gives {} axes but the grid of `{}` has {}",
                    dims.len(),
                    program.name,
                    global.len()
                ),
                format!(
                    "give one count per axis ({} here), or `--decompose auto`",
                    global.len()
                ),
            ));
        }
        let reach = reach(program, env, global.len())?;
        let mut ghost = Vec::with_capacity(dims.len());
        for (axis, (&d, &n)) in dims.iter().zip(&global).enumerate() {
            if d > n {
                return Err(LayoutError::new(
                    format!("{d} ranks along axis {axis}, which has only {n} points"),
                    format!("give at most {n} ranks along axis {axis}, or run on fewer ranks"),
                ));
            }
            let (lo, hi) = if d > 1 { reach[axis] } else { (0, 0) };
            let thinnest = n / d;
            if d > 1 && thinnest < lo.max(hi) {
                return Err(LayoutError::new(
                    format!(
                        "blocks of {thinnest} points along axis {axis} are thinner than the \
                         program's reach ({}) there",
                        lo.max(hi)
                    ),
                    format!(
                        "give fewer ranks along axis {axis} (at most {}), or run on fewer ranks",
                        n / lo.max(hi).max(1)
                    ),
                ));
            }
            ghost.push((lo, hi));
        }
        Ok(Layout {
            dims: dims.to_vec(),
            global,
            ghost,
        })
    }

    /// First global index and size of block `coord` along `axis`.
    pub fn block(&self, axis: usize, coord: usize) -> (usize, usize) {
        let (n, d) = (self.global[axis], self.dims[axis]);
        let (base, extra) = (n / d, n % d);
        (
            coord * base + coord.min(extra),
            base + usize::from(coord < extra),
        )
    }

    /// The points rank `coords` owns, as inclusive global bounds per axis.
    pub fn owned(&self, coords: &[usize]) -> Vec<(i64, i64)> {
        coords
            .iter()
            .enumerate()
            .map(|(axis, &c)| {
                let (start, len) = self.block(axis, c);
                (start as i64, (start + len) as i64 - 1)
            })
            .collect()
    }

    /// Size per axis of a rank's arrays: its block and its ghost layers.
    pub fn local_dims(&self, coords: &[usize]) -> Vec<usize> {
        coords
            .iter()
            .enumerate()
            .map(|(axis, &c)| self.block(axis, c).1 + self.ghost[axis].0 + self.ghost[axis].1)
            .collect()
    }

    /// Global index of local index 0 along each axis (may be negative).
    pub fn origin(&self, coords: &[usize]) -> Vec<i64> {
        coords
            .iter()
            .enumerate()
            .map(|(axis, &c)| self.block(axis, c).0 as i64 - self.ghost[axis].0 as i64)
            .collect()
    }

    /// Splits a part's local box into its interior (points that read no
    /// ghost layer, computable while halos are in flight) and the rim around
    /// it, as disjoint boxes. No interior: the whole box is rim.
    pub fn split_interior(
        &self,
        coords: &[usize],
        bounds: &[(i64, i64)],
    ) -> (Option<Bounds>, Vec<Bounds>) {
        let mut inner = bounds.to_vec();
        for (axis, range) in inner.iter_mut().enumerate() {
            if self.dims[axis] > 1 {
                let (g_lo, g_hi) = (self.ghost[axis].0 as i64, self.ghost[axis].1 as i64);
                let own = self.block(axis, coords[axis]).1 as i64;
                *range = (range.0.max(2 * g_lo), range.1.min(g_lo + own - 1 - g_hi));
            }
        }
        if inner.iter().any(|(lo, hi)| lo > hi) {
            return (None, vec![bounds.to_vec()]);
        }
        let mut rim = Vec::new();
        let mut rest = bounds.to_vec();
        for axis in 0..rest.len() {
            let (lo, hi) = rest[axis];
            let (ilo, ihi) = inner[axis];
            if lo < ilo {
                let mut slab = rest.clone();
                slab[axis] = (lo, ilo - 1);
                rim.push(slab);
            }
            if ihi < hi {
                let mut slab = rest.clone();
                slab[axis] = (ihi + 1, hi);
                rim.push(slab);
            }
            rest[axis] = (ilo, ihi);
        }
        (Some(inner), rim)
    }

    /// What an exchange of a level with boundary mode `boundary` reads and
    /// writes on rank `coords` (as `exec::mpi::halo` does it: axis after axis,
    /// slabs spanning the other axes' whole local extent). Only owned points
    /// are listed as read: the ghosts a slab also spans are the host's own
    /// (filled by this exchange, or by an earlier one).
    pub fn halo_boxes(&self, coords: &[usize], boundary: BoundaryMode) -> HaloBoxes {
        let dims = self.local_dims(coords);
        let owned: Bounds = (0..dims.len())
            .map(|axis| {
                let g_lo = self.ghost[axis].0 as i64;
                (g_lo, g_lo + self.block(axis, coords[axis]).1 as i64 - 1)
            })
            .collect();
        let whole: Bounds = dims.iter().map(|&n| (0, n as i64 - 1)).collect();
        let periodic = boundary == BoundaryMode::Periodic;
        let mut boxes = HaloBoxes::default();
        for axis in 0..dims.len() {
            let d = self.dims[axis];
            if d == 1 {
                continue;
            }
            let c = coords[axis];
            let (g_lo, g_hi) = self.ghost[axis];
            let (start, own) = self.block(axis, c);
            let below = c > 0 || periodic;
            let above = c + 1 < d || periodic;
            let mut planes: Vec<usize> = Vec::new();
            // Sent below: the first `g_hi` owned planes; above: the last `g_lo`.
            if below {
                planes.extend(g_lo..g_lo + g_hi);
            }
            if above {
                planes.extend(own..own + g_lo);
            }
            // At the grid's edge: the planes the boundary mode copies.
            let edge_ghosts = (!below)
                .then_some(0..g_lo)
                .into_iter()
                .chain((!above).then_some(g_lo + own..g_lo + own + g_hi))
                .flatten();
            if boundary != BoundaryMode::None {
                let n = self.global[axis] as i64;
                for ghost in edge_ghosts {
                    let global = start as i64 - g_lo as i64 + ghost as i64;
                    if let Some(src) = boundary.resolve(global, n) {
                        let local = src - start as i64 + g_lo as i64;
                        if local >= g_lo as i64 && local < (g_lo + own) as i64 {
                            planes.push(local as usize);
                        }
                    }
                }
            }
            planes.sort_unstable();
            planes.dedup();
            for run in runs(&planes) {
                let mut b = owned.clone();
                b[axis] = run;
                boxes.read.push(b);
            }
            let filled = |side: bool| side || boundary != BoundaryMode::None;
            let layers = [
                (filled(below), 0, g_lo),
                (filled(above), g_lo + own, g_lo + own + g_hi),
            ];
            for (written, lo, hi) in layers {
                if written && lo < hi {
                    let mut b = whole.clone();
                    b[axis] = (lo as i64, hi as i64 - 1);
                    boxes.written.push(b);
                }
            }
        }
        boxes
    }

    /// The program rank `coords` runs: grids sized to its arrays, every part
    /// cut to the points it owns, in local coordinates.
    pub fn local_program(&self, program: &Program, env: &RunEnv, coords: &[usize]) -> Program {
        let mut local = program.clone();
        let dims = self.local_dims(coords);
        for grid in &mut local.grids {
            grid.dims = dims.iter().map(|&n| int_literal(n as i64)).collect();
        }
        let owned = self.owned(coords);
        let origin = self.origin(coords);
        let cut = |subset: &mut Subset| {
            let global = env.subset_box(subset);
            let mut ranges = Vec::with_capacity(global.len());
            let mut empty = false;
            for (axis, &(lo, hi)) in global.iter().enumerate() {
                let (lo, hi) = (lo.max(owned[axis].0), hi.min(owned[axis].1));
                empty |= lo > hi;
                ranges.push((lo - origin[axis], hi - origin[axis]));
            }
            if empty {
                ranges = vec![(0, -1); global.len()];
            }
            subset.ranges = ranges
                .into_iter()
                .map(|(lo, hi)| (int_literal(lo), int_literal(hi)))
                .collect();
        };
        if let Some(iterate) = &mut local.iterate {
            for stencil in &mut iterate.stencils {
                for part in &mut stencil.parts {
                    cut(&mut part.subset);
                }
            }
            for reduction in &mut iterate.reductions {
                for part in &mut reduction.parts {
                    cut(&mut part.subset);
                }
            }
        }
        local
    }
}

/// Sorted, distinct indices as inclusive runs of consecutive ones.
fn runs(sorted: &[usize]) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = Vec::new();
    for &i in sorted {
        let i = i as i64;
        match out.last_mut() {
            Some((_, hi)) if *hi + 1 == i => *hi = i,
            _ => out.push((i, i)),
        }
    }
    out
}

fn int_literal(v: i64) -> Expr {
    match i32::try_from(v) {
        Ok(v) => Expr::literal(Value::Int(v)),
        Err(_) => Expr::literal(Value::Long(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(global: &[usize], dims: &[usize]) -> Layout {
        Layout {
            dims: dims.to_vec(),
            global: global.to_vec(),
            ghost: vec![(1, 1); global.len()],
        }
    }

    #[test]
    fn blocks_spread_the_remainder_over_the_first_ranks() {
        let l = layout(&[10], &[4]);
        let blocks: Vec<_> = (0..4).map(|c| l.block(0, c)).collect();
        assert_eq!(blocks, vec![(0, 3), (3, 3), (6, 2), (8, 2)]);
    }

    #[test]
    fn interior_and_rim_cover_the_box_once() {
        let l = layout(&[20, 30], &[2, 3]);
        let bounds = vec![(1, 10), (0, 11)];
        let (inner, rim) = l.split_interior(&[0, 1], &bounds);
        let inner = inner.expect("an interior");
        assert_eq!(inner, vec![(2, 9), (2, 9)]);
        let mut count = vec![0; 12 * 12];
        for b in rim.iter().chain([&inner]) {
            for y in b[0].0..=b[0].1 {
                for x in b[1].0..=b[1].1 {
                    count[(y * 12 + x) as usize] += 1;
                }
            }
        }
        for y in 1..=10 {
            for x in 0..=11 {
                assert_eq!(count[(y * 12 + x) as usize], 1, "({y}, {x})");
            }
        }
    }

    #[test]
    fn halo_boxes_are_the_faces_sent_and_the_ghosts_filled() {
        // 2x2 ranks on 10x12, reach 1 (ghosts 1 on both sides of both axes);
        // rank (0, 1): block rows 0-4, columns 6-11, local arrays 7x8.
        let l = layout(&[10, 12], &[2, 2]);
        let clamp = l.halo_boxes(&[0, 1], BoundaryMode::Clamp);
        assert_eq!(
            clamp.read,
            vec![
                // Axis 0: the top edge's source (row 1) and the last row sent.
                vec![(1, 1), (1, 6)],
                vec![(5, 5), (1, 6)],
                // Axis 1: the first column sent, the right edge's source.
                vec![(1, 5), (1, 1)],
                vec![(1, 5), (6, 6)],
            ]
        );
        assert_eq!(
            clamp.written,
            vec![
                vec![(0, 0), (0, 7)],
                vec![(6, 6), (0, 7)],
                vec![(0, 6), (0, 0)],
                vec![(0, 6), (7, 7)],
            ]
        );
        // With `none` the edges are neither read nor written.
        let none = l.halo_boxes(&[0, 1], BoundaryMode::None);
        assert_eq!(none.read, vec![vec![(5, 5), (1, 6)], vec![(1, 5), (1, 1)]]);
        assert_eq!(
            none.written,
            vec![vec![(6, 6), (0, 7)], vec![(0, 6), (0, 0)]]
        );
        // Periodic: both faces sent on every axis, uncut axes skipped.
        let l = Layout {
            dims: vec![1, 2],
            global: vec![5, 12],
            ghost: vec![(0, 0), (2, 1)],
        };
        let periodic = l.halo_boxes(&[0, 1], BoundaryMode::Periodic);
        assert_eq!(
            periodic.read,
            // Block of 6 at local 2-7: sent below local 2, above local 6-7.
            vec![vec![(0, 4), (2, 2)], vec![(0, 4), (6, 7)]]
        );
        assert_eq!(
            periodic.written,
            vec![vec![(0, 4), (0, 1)], vec![(0, 4), (8, 8)]]
        );
    }

    #[test]
    fn specs_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_spec("auto"), Ok(DecomposeSpec::Auto));
        assert_eq!(parse_spec("2x3"), Ok(DecomposeSpec::Given(vec![2, 3])));
        assert!(parse_spec("2x0").is_err());
        assert!(parse_spec("2x2x2x2").is_err());
        assert!(parse_spec("two").is_err());
    }
}
