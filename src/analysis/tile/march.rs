//! Whether an iteration can march ([`TileOrder::March`](super::TileOrder::March)): one stencil part
//! updating one field of two levels, and what the march needs of it.

use crate::analysis::footprint::Footprint;
use crate::ir::{FieldId, Program};

use super::{MarchError, TileShape};

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
pub fn march_shape(program: &Program, shape: &TileShape) -> Result<MarchShape, MarchError> {
    if !(2..=3).contains(&shape.rank) {
        return Err(MarchError::Rank(shape.rank));
    }
    let Some(iterate) = &program.iterate else {
        return Err(MarchError::NoIterate);
    };
    let parts: Vec<_> = iterate.stencils.iter().flat_map(|s| &s.parts).collect();
    let [part] = parts.as_slice() else {
        return Err(MarchError::Parts(parts.len()));
    };
    let ([field], [written]) = (shape.used.as_slice(), shape.written.as_slice()) else {
        return Err(MarchError::OtherFields);
    };
    if field != written {
        return Err(MarchError::NotUpdated);
    }
    let f = &program.fields[field.0];
    if f.levels() != 2 {
        return Err(MarchError::Levels {
            field: f.name.clone(),
            levels: f.levels(),
        });
    }
    if shape.whole.iter().any(|&w| w) {
        return Err(MarchError::Periodic);
    }
    let footprint = Footprint::of_part(program, part);
    let (read, write) = (f.time_lo, f.time_hi);
    if footprint.writes.iter().any(|w| w.time != write) {
        return Err(MarchError::WritesLower {
            time: f.time_lo,
            field: f.name.clone(),
        });
    }
    if footprint.reads.iter().any(|r| r.time != read) {
        return Err(MarchError::ReadsUpper {
            time: write,
            field: f.name.clone(),
        });
    }
    Ok(MarchShape {
        field: *field,
        read,
        write,
        reach: shape.parts[0].clone(),
    })
}
