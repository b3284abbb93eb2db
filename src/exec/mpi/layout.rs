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
use crate::ir::{Expr, Program, Subset, Value};

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

/// What `--decompose` asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecomposeSpec {
    /// MPI's balancing chooses (`MPI_Dims_create`).
    Auto,
    /// Ranks per axis as given (`PxQ[xR]`).
    Given(Vec<usize>),
}

/// Parses `auto` or `PxQ[xR]`.
pub fn parse_spec(text: &str) -> Result<DecomposeSpec, String> {
    if text == "auto" {
        return Ok(DecomposeSpec::Auto);
    }
    let dims: Option<Vec<usize>> = text
        .split('x')
        .map(|p| p.trim().parse::<usize>().ok().filter(|&d| d > 0))
        .collect();
    match dims {
        Some(dims) if (1..=3).contains(&dims.len()) => Ok(DecomposeSpec::Given(dims)),
        _ => Err(format!(
            "`--decompose {text}` is neither `auto` nor ranks per axis like `4`, `2x2` or `2x2x1`"
        )),
    }
}

/// The farthest read below and above the point, per axis, over every stencil
/// and reduction (parameter values known).
fn reach(program: &Program, env: &RunEnv, rank: usize) -> Result<Vec<(usize, usize)>, String> {
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
                    return Err(format!(
                        "field `{}` is read at an offset that is not known before the run, so \
                         its ghost layers cannot be sized",
                        program.fields[read.field.0].name
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
    pub fn new(program: &Program, env: &RunEnv, dims: &[usize]) -> Result<Layout, String> {
        let global = env
            .grid_dims()
            .first()
            .cloned()
            .ok_or_else(|| format!("`{}` declares no grid to decompose", program.name))?;
        if env.grid_dims().iter().any(|d| *d != global) {
            return Err(format!(
                "`{}` has grids of different sizes; --decompose needs every grid to have the same size",
                program.name
            ));
        }
        if dims.len() != global.len() {
            return Err(format!(
                "--decompose gives {} axes but the grid of `{}` has {}",
                dims.len(),
                program.name,
                global.len()
            ));
        }
        let reach = reach(program, env, global.len())?;
        let mut ghost = Vec::with_capacity(dims.len());
        for (axis, (&d, &n)) in dims.iter().zip(&global).enumerate() {
            if d > n {
                return Err(format!(
                    "{d} ranks along axis {axis}, which has only {n} points; give at most {n}"
                ));
            }
            let (lo, hi) = if d > 1 { reach[axis] } else { (0, 0) };
            let thinnest = n / d;
            if d > 1 && thinnest < lo.max(hi) {
                return Err(format!(
                    "blocks of {thinnest} points along axis {axis} are thinner than the \
                     program's reach ({}) there; use fewer ranks along axis {axis}",
                    lo.max(hi)
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
    fn specs_parse_and_bad_ones_are_refused() {
        assert_eq!(parse_spec("auto"), Ok(DecomposeSpec::Auto));
        assert_eq!(parse_spec("2x3"), Ok(DecomposeSpec::Given(vec![2, 3])));
        assert!(parse_spec("2x0").is_err());
        assert!(parse_spec("2x2x2x2").is_err());
        assert!(parse_spec("two").is_err());
    }
}
