//! Footprints: which time levels a stencil reads and writes, and how far from
//! the point.
//!
//! For every (field, time level) a stencil or reduction touches, the smallest
//! and largest offset per axis over all its parts and loop iterations. The read
//! extents are the halo a GPU tile must load; a level that is read but never
//! written by the stencil is read-only there (it may use the read-only path,
//! and staging it in shared memory is safe).

use crate::analysis::access::{iterate_accesses, AccessKind, GridAccess, PartId};
use crate::analysis::affine::Affine;
use crate::analysis::bounds::extremes;
use crate::exec::env::RunEnv;
use crate::ir::{FieldId, Program};

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
        Footprint::collect(
            program,
            |id| matches!(id, PartId::Stencil { stencil: s, .. } if s == stencil),
            |a| static_axes(program, a),
        )
    }

    /// The footprint of stencil `stencil` for the parameter values in `env`:
    /// every extent is known.
    pub fn of_stencil_in(program: &Program, env: &RunEnv, stencil: usize) -> Footprint {
        Footprint::collect(
            program,
            |id| matches!(id, PartId::Stencil { stencil: s, .. } if s == stencil),
            |a| run_time_axes(program, env, a),
        )
    }

    /// The footprint of reduction `reduction` (reads only), from the program alone.
    pub fn of_reduction(program: &Program, reduction: usize) -> Footprint {
        Footprint::collect(
            program,
            |id| matches!(id, PartId::Reduction { reduction: r, .. } if r == reduction),
            |a| static_axes(program, a),
        )
    }

    /// The footprint of reduction `reduction` for the parameter values in `env`.
    pub fn of_reduction_in(program: &Program, env: &RunEnv, reduction: usize) -> Footprint {
        Footprint::collect(
            program,
            |id| matches!(id, PartId::Reduction { reduction: r, .. } if r == reduction),
            |a| run_time_axes(program, env, a),
        )
    }

    fn collect(
        program: &Program,
        wanted: impl Fn(PartId) -> bool,
        axes_of: impl Fn(&GridAccess) -> Vec<Option<(i64, i64)>>,
    ) -> Footprint {
        let mut fp = Footprint::default();
        for part in iterate_accesses(program).iter().filter(|p| wanted(p.id)) {
            for access in &part.grids {
                if access.loops.iter().any(|r| r.hi < r.lo) {
                    continue;
                }
                let list = match access.kind {
                    AccessKind::Load => &mut fp.reads,
                    AccessKind::Store => &mut fp.writes,
                };
                merge(list, access, axes_of(access));
            }
        }
        fp.reads.sort_by_key(|l| (l.field, l.time));
        fp.writes.sort_by_key(|l| (l.field, l.time));
        fp
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
    pub fn read_only(&self) -> Vec<(FieldId, i32)> {
        self.reads
            .iter()
            .filter(|l| !self.writes_level(l.field, l.time))
            .map(|l| (l.field, l.time))
            .collect()
    }

    /// The levels written.
    pub fn written(&self) -> Vec<(FieldId, i32)> {
        self.writes.iter().map(|l| (l.field, l.time)).collect()
    }

    /// The read halo of a field over all its time levels: per axis the
    /// smallest and largest offset read (`None` if unknown, or never read).
    pub fn halo(&self, field: FieldId) -> Option<Vec<Option<(i64, i64)>>> {
        let mut levels = self.reads.iter().filter(|l| l.field == field);
        let first = levels.next()?.axes.clone();
        Some(levels.fold(first, |acc, l| merge_axes(&acc, &l.axes)))
    }
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

fn merge(list: &mut Vec<LevelExtent>, access: &GridAccess, axes: Vec<Option<(i64, i64)>>) {
    let (field, time) = (access.target.field, access.target.time);
    match list.iter_mut().find(|l| l.field == field && l.time == time) {
        Some(level) => level.axes = merge_axes(&level.axes, &axes),
        None => list.push(LevelExtent { field, time, axes }),
    }
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
