//! Whether an iteration can march ([`TileOrder::March`](super::TileOrder::March)): one stencil part
//! updating one field of two levels, and what the march needs of it.

use crate::analysis::footprint::Footprint;
use crate::ir::{FieldId, Program};

use super::TileShape;

/// What a march ([`TileOrder::March`](super::TileOrder::March)) needs of an iteration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarchShape {
    /// The one field the iteration updates.
    pub field: FieldId,
    /// The level its stencil reads (the lower of its two).
    pub read: i32,
    /// The level it writes (the upper).
    pub write: i32,
    /// Per axis, outermost first, how far below and above the point it reads.
    pub reach: Vec<(u64, u64)>,
}

impl MarchShape {
    /// Planes a step's ring holds: the next step reads that many of them
    /// around its plane (`below + above + 1` along the outermost axis).
    pub fn ring_planes(&self) -> u64 {
        self.reach[0].0 + self.reach[0].1 + 1
    }

    /// Rounds each step lags behind the one before it: the planes above its
    /// own that it reads, which the step before computes in the same round.
    pub fn lag(&self) -> u64 {
        self.reach[0].1
    }
}

/// Whether `program`'s iteration can march ([`TileOrder::March`](super::TileOrder::March)), and what
/// the march needs; `Err` says which construct prevents it.
///
/// A march keeps no snapshots: its first step reads the level its stencil
/// reads, its last writes the other level's array, out of place, so it takes
/// an odd number of steps (the sweep splits the rest into single steps), and
/// its rings hold the steps between. That takes one stencil part, one field
/// of two levels read at the lower and written at the upper, and no periodic
/// reads. Reads that leave the grid are handled at run time: a sweep whose
/// subset reads outside the grid (a boundary mode at work) runs untiled.
pub fn march_shape(program: &Program, shape: &TileShape) -> Result<MarchShape, String> {
    if !(2..=3).contains(&shape.rank) {
        return Err(format!(
            "the grid is {}-D (a march takes 2-D and 3-D grids)",
            shape.rank
        ));
    }
    let Some(iterate) = &program.iterate else {
        return Err("the program has no iterate".into());
    };
    let parts: Vec<_> = iterate.stencils.iter().flat_map(|s| &s.parts).collect();
    let [part] = parts.as_slice() else {
        return Err(format!(
            "an iteration runs {} stencil parts (a march takes one)",
            parts.len()
        ));
    };
    let ([field], [written]) = (shape.used.as_slice(), shape.written.as_slice()) else {
        return Err(
            "the stencil uses more than the one field it updates (a march takes one)".into(),
        );
    };
    if field != written {
        return Err("the stencil does not update the field it reads".into());
    }
    let f = &program.fields[field.0];
    if f.levels() != 2 {
        return Err(format!(
            "`{}` has {} time levels (a march takes two)",
            f.name,
            f.levels()
        ));
    }
    if shape.whole.iter().any(|&w| w) {
        return Err("a periodic boundary is read across an axis".into());
    }
    let footprint = Footprint::of_part(program, part);
    let (read, write) = (f.time_lo, f.time_hi);
    if footprint.writes.iter().any(|w| w.time != write) {
        return Err(format!(
            "the stencil writes `[{}]{}` (a march writes the upper level only)",
            f.time_lo, f.name
        ));
    }
    if footprint.reads.iter().any(|r| r.time != read) {
        return Err(format!(
            "the stencil reads `[{write}]{}`, the level it writes",
            f.name
        ));
    }
    Ok(MarchShape {
        field: *field,
        read,
        write,
        reach: shape.parts[0].clone(),
    })
}
