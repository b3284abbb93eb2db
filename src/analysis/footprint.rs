//! Footprints: which time levels a stencil reads and writes, and how far from
//! the point.
//!
//! For every (field, time level) a stencil, stencil part or reduction touches,
//! the smallest and largest offset per axis over all its accesses and loop
//! iterations. The read extents are the halo a GPU tile must load; a level that
//! is read but never written by the stencil is read-only there (it may use the
//! read-only path, and staging it in shared memory is safe). The GPU schedule
//! and lowering take their halos, tile reuse and fusion checks from here.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::access::{
    body_accesses, expr_accesses, iterate_accesses, AccessKind, GridAccess, PartId,
};
use crate::analysis::affine::Affine;
use crate::analysis::bounds::extremes;
use crate::ir::env::RunEnv;
use crate::ir::{Expr, FieldId, Program, StencilPart, Stmt};

/// A field time level: `(field, time offset)`.
pub type Level = (FieldId, i32);

/// Offsets with more points than this are not listed one by one: a level
/// accessed over such a box counts as this many distinct offsets.
const MAX_LISTED_OFFSETS: usize = 4096;

/// The offsets at which one time level of a field is accessed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelExtent {
    /// The field.
    pub field: FieldId,
    /// The time offset.
    pub time: i32,
    /// Per axis, outermost first, the smallest and largest offset; `None` where
    /// an offset depends on parameter values (or is not affine) and no values
    /// were given.
    pub axes: Vec<Option<(i64, i64)>>,
    /// How many distinct offsets with known axes are accessed, each iteration
    /// of a loop counting (capped at 4096): the reuse between neighbouring
    /// points that staging the level in shared memory exploits.
    pub distinct: usize,
}

impl LevelExtent {
    /// The level, as `(field, time)`.
    pub fn level(&self) -> Level {
        (self.field, self.time)
    }

    /// Per axis the offset range, when every axis is known.
    pub fn static_box(&self) -> Option<Vec<(i64, i64)>> {
        self.axes.iter().copied().collect()
    }

    /// Whether every access is at offset zero on every axis.
    pub fn only_center(&self) -> bool {
        self.axes.iter().all(|a| *a == Some((0, 0)))
    }
}

/// What a stencil (or reduction) reads and writes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Levels read, by (field, time).
    pub reads: Vec<LevelExtent>,
    /// Levels written, by (field, time).
    pub writes: Vec<LevelExtent>,
}

impl Footprint {
    /// The footprint of stencil `stencil` of the iterate, from the program
    /// alone: offsets that depend on parameters are `None`.
    pub fn of_stencil(program: &Program, stencil: usize) -> Footprint {
        Footprint::of_iterate_parts(program, parts_of_stencil(stencil), |a| {
            static_axes(program, a)
        })
    }

    /// The footprint of stencil `stencil` for the parameter values in `env`:
    /// every extent is known.
    pub fn of_stencil_in(program: &Program, env: &RunEnv, stencil: usize) -> Footprint {
        Footprint::of_iterate_parts(program, parts_of_stencil(stencil), |a| {
            run_time_axes(program, env, a)
        })
    }

    /// The footprint of reduction `reduction` (reads only), from the program alone.
    pub fn of_reduction(program: &Program, reduction: usize) -> Footprint {
        Footprint::of_iterate_parts(program, parts_of_reduction(reduction), |a| {
            static_axes(program, a)
        })
    }

    /// The footprint of reduction `reduction` for the parameter values in `env`.
    pub fn of_reduction_in(program: &Program, env: &RunEnv, reduction: usize) -> Footprint {
        Footprint::of_iterate_parts(program, parts_of_reduction(reduction), |a| {
            run_time_axes(program, env, a)
        })
    }

    /// The footprint of one stencil part, from the program alone (offsets that
    /// depend on parameters are `None`).
    pub fn of_part(program: &Program, part: &StencilPart) -> Footprint {
        Footprint::of_body(program, &part.body)
    }

    /// The footprint of a statement list (a stencil part's body), from the
    /// program alone.
    pub fn of_body(program: &Program, body: &[Stmt]) -> Footprint {
        let body = body_accesses(body);
        Footprint::collect(body.grids.iter(), |a| static_axes(program, a))
    }

    /// The footprint of one expression outside any loop (a reduction part's
    /// value), from the program alone.
    pub fn of_expr(program: &Program, value: &Expr) -> Footprint {
        let accesses = expr_accesses(value);
        Footprint::collect(accesses.grids.iter(), |a| static_axes(program, a))
    }

    /// The footprint of several parts run one after the other at each point
    /// (a fused kernel): their levels united, the extents widened.
    pub fn merge(footprints: &[Footprint]) -> Footprint {
        let mut out = Footprint::default();
        for fp in footprints {
            for (from, into) in [(&fp.reads, &mut out.reads), (&fp.writes, &mut out.writes)] {
                for extent in from {
                    match into.iter_mut().find(|l| l.level() == extent.level()) {
                        Some(level) => {
                            level.axes = merge_axes(&level.axes, &extent.axes);
                            level.distinct = level.distinct.max(extent.distinct);
                        }
                        None => into.push(extent.clone()),
                    }
                }
            }
        }
        out.sort();
        out
    }

    fn of_iterate_parts(
        program: &Program,
        wanted: impl Fn(PartId) -> bool,
        axes_of: impl Fn(&GridAccess) -> Vec<Option<(i64, i64)>>,
    ) -> Footprint {
        let parts = iterate_accesses(program);
        let grids = parts.iter().filter(|p| wanted(p.id)).flat_map(|p| &p.grids);
        Footprint::collect(grids, axes_of)
    }

    fn collect<'a, 'p: 'a>(
        accesses: impl Iterator<Item = &'a GridAccess<'p>>,
        axes_of: impl Fn(&GridAccess) -> Vec<Option<(i64, i64)>>,
    ) -> Footprint {
        let mut fp = Footprint::default();
        // Keyed by (is a write, level).
        let mut offsets: BTreeMap<(bool, Level), OffsetSet> = BTreeMap::new();
        for access in accesses {
            if access.loops.iter().any(|r| r.hi < r.lo) {
                continue;
            }
            let axes = axes_of(access);
            let level = (access.target.field, access.target.time);
            let is_write = access.kind == AccessKind::Store;
            offsets.entry((is_write, level)).or_default().add(&axes);
            let list = if is_write {
                &mut fp.writes
            } else {
                &mut fp.reads
            };
            match list.iter_mut().find(|l| l.level() == level) {
                Some(extent) => extent.axes = merge_axes(&extent.axes, &axes),
                None => list.push(LevelExtent {
                    field: level.0,
                    time: level.1,
                    axes,
                    distinct: 0,
                }),
            }
        }
        for extent in fp.reads.iter_mut() {
            extent.distinct = offsets[&(false, extent.level())].count();
        }
        for extent in fp.writes.iter_mut() {
            extent.distinct = offsets[&(true, extent.level())].count();
        }
        fp.sort();
        fp
    }

    fn sort(&mut self) {
        self.reads.sort_by_key(LevelExtent::level);
        self.writes.sort_by_key(LevelExtent::level);
    }

    /// The extents at which (field, time) is read, if it is.
    pub fn read_extent(&self, field: FieldId, time: i32) -> Option<&LevelExtent> {
        self.reads
            .iter()
            .find(|l| l.field == field && l.time == time)
    }

    /// Whether (field, time) is written.
    pub fn writes_level(&self, field: FieldId, time: i32) -> bool {
        self.writes
            .iter()
            .any(|l| l.field == field && l.time == time)
    }

    /// The levels read and never written: read-only in this stencil.
    pub fn read_only(&self) -> Vec<Level> {
        self.reads
            .iter()
            .filter(|l| !self.writes_level(l.field, l.time))
            .map(|l| (l.field, l.time))
            .collect()
    }

    /// The levels written.
    pub fn written(&self) -> Vec<Level> {
        self.writes.iter().map(LevelExtent::level).collect()
    }

    /// The grid of every level written, if they share one: the grid a
    /// stencil part's points lie in ([`Program::holds_point`]).
    pub fn written_grid(&self, program: &Program) -> Option<crate::ir::GridId> {
        let mut grids = self.writes.iter().map(|w| program.fields[w.field.0].grid);
        let first = grids.next()?;
        grids.all(|g| g == first).then_some(first)
    }

    /// Whether every write is at offset zero on every axis.
    pub fn writes_only_center(&self) -> bool {
        self.writes.iter().all(LevelExtent::only_center)
    }

    /// The read halo of a field over all its time levels: per axis the
    /// smallest and largest offset read (`None` if unknown, or never read).
    pub fn halo(&self, field: FieldId) -> Option<Vec<Option<(i64, i64)>>> {
        let mut levels = self.reads.iter().filter(|l| l.field == field);
        let first = levels.next()?.axes.clone();
        Some(levels.fold(first, |acc, l| merge_axes(&acc, &l.axes)))
    }
}

fn parts_of_stencil(stencil: usize) -> impl Fn(PartId) -> bool {
    move |id| matches!(id, PartId::Stencil { stencil: s, .. } if s == stencil)
}

fn parts_of_reduction(reduction: usize) -> impl Fn(PartId) -> bool {
    move |id| matches!(id, PartId::Reduction { reduction: r, .. } if r == reduction)
}

fn merge_axes(a: &[Option<(i64, i64)>], b: &[Option<(i64, i64)>]) -> Vec<Option<(i64, i64)>> {
    a.iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (Some((a0, a1)), Some((b0, b1))) => Some((*a0.min(b0), *a1.max(b1))),
            _ => None,
        })
        .collect()
}

fn static_axes(program: &Program, access: &GridAccess) -> Vec<Option<(i64, i64)>> {
    access
        .target
        .offset
        .iter()
        .map(|o| {
            let (min, max) = Affine::of_expr(program, o)?.loop_extremes(&access.loops)?;
            Some((min.as_constant()?, max.as_constant()?))
        })
        .collect()
}

fn run_time_axes(program: &Program, env: &RunEnv, access: &GridAccess) -> Vec<Option<(i64, i64)>> {
    access
        .target
        .offset
        .iter()
        .map(|o| {
            extremes(program, env, o, &access.loops)
                .ok()
                .map(|e| (e.min, e.max))
        })
        .collect()
}

/// The distinct offsets of one level's accesses, each box of offsets spanned
/// by loops listed point by point (up to [`MAX_LISTED_OFFSETS`]).
#[derive(Default)]
struct OffsetSet {
    points: BTreeSet<Vec<i64>>,
    /// Whether some box was too large to list.
    saturated: bool,
}

impl OffsetSet {
    fn add(&mut self, axes: &[Option<(i64, i64)>]) {
        let Some(ranges) = axes.iter().copied().collect::<Option<Vec<(i64, i64)>>>() else {
            return;
        };
        let count = ranges.iter().try_fold(1usize, |n, (lo, hi)| {
            n.checked_mul(usize::try_from(hi - lo + 1).ok()?)
        });
        if count.is_none_or(|n| n > MAX_LISTED_OFFSETS) {
            self.saturated = true;
            return;
        }
        let mut point: Vec<i64> = ranges.iter().map(|r| r.0).collect();
        'points: loop {
            self.points.insert(point.clone());
            // Odometer step, innermost axis fastest.
            for axis in (0..ranges.len()).rev() {
                if point[axis] < ranges[axis].1 {
                    point[axis] += 1;
                    continue 'points;
                }
                point[axis] = ranges[axis].0;
            }
            break;
        }
    }

    fn count(&self) -> usize {
        if self.saturated {
            self.points.len().max(MAX_LISTED_OFFSETS)
        } else {
            self.points.len()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceFile;

    const TWO_STENCILS: &str = "\
int n;
const int R = 1;
grid g[n][n];
float griddata a on g at 0,1;
float griddata b on g at 0;
iterate 1 {
    stencil blur {
        [1:n-2][1:n-2] : [1]a[0][0] = [0]a[-R][0] + [0]a[R][0] + [0]a[0][-1] + [0]a[0][1]
            + [0]a[-1][-1] + [0]a[-1][1] + [0]a[1][-1] + [0]a[1][1] + [0]a[0][0];
    }
    stencil copy {
        [1:n-2][1:n-2] : [0]b[0][0] = [1]a[0][0];
    }
}
";

    fn parts(program: &Program) -> Vec<&StencilPart> {
        let iterate = program.iterate.as_ref().expect("an iterate");
        iterate.stencils.iter().map(|s| &s.parts[0]).collect()
    }

    #[test]
    fn parts_count_distinct_offsets_and_follow_constants() {
        let p = crate::front::parse_program(SourceFile::new("two.sdsl", TWO_STENCILS))
            .expect("compiles");
        let [blur, copy] = parts(&p)[..] else {
            panic!("two stencils");
        };
        let (a, b) = (FieldId(0), FieldId(1));
        let blur = Footprint::of_part(&p, blur);
        let read = blur.read_extent(a, 0).expect("reads [0]a");
        // `[-R]` with `const int R = 1` is a static offset.
        assert_eq!(read.static_box(), Some(vec![(-1, 1), (-1, 1)]));
        assert_eq!(read.distinct, 9);
        assert!(!read.only_center());
        assert!(blur.writes_only_center());
        let copy = Footprint::of_part(&p, copy);
        assert!(copy.read_extent(a, 1).expect("reads [1]a").only_center());
        let fused = Footprint::merge(&[blur, copy]);
        assert_eq!(fused.written(), vec![(a, 1), (b, 0)]);
        assert_eq!(fused.read_only(), vec![(a, 0)]);
        let stencils = [Footprint::of_stencil(&p, 0), Footprint::of_stencil(&p, 1)];
        assert_eq!(fused, Footprint::merge(&stencils));
    }

    #[test]
    fn offset_boxes_too_large_to_list_saturate() {
        let mut set = OffsetSet::default();
        set.add(&[Some((-1, 1)), Some((0, 0))]);
        set.add(&[Some((0, 1)), Some((0, 0))]);
        set.add(&[None, Some((0, 0))]);
        assert_eq!(set.count(), 3);
        set.add(&[Some((-100, 100)), Some((-100, 100))]);
        assert_eq!(set.count(), MAX_LISTED_OFFSETS);
    }
}
