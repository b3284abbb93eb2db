//! The host plan: what the host does around the kernels (launches with their
//! arguments, reductions, the check), shared by every GPU back-end.

use crate::ir::{ConstId, FieldId, ParamId, ReduceOp, ReductionId, ScalarType, Subset};

/// Where the host takes one kernel argument from.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgSource {
    /// The device buffer currently holding a field's time level.
    Level(FieldId, i32),
    /// A parameter's value.
    Param(ParamId),
    /// A constant's value.
    Const(ConstId),
    /// The size of a grid along an axis (outermost first), as an `int`.
    GridSize(crate::ir::GridId, usize),
    /// The launch subset's first index along an axis (outermost first).
    Lo(usize),
    /// The launch subset's last index along an axis (outermost first).
    Hi(usize),
    /// The per-block partial results of a reduction.
    Partials(ReductionId),
    /// Where this launch's blocks start writing in the partials buffer.
    PartialOffset,
    /// How many partials the final pass combines.
    PartialCount,
    /// The one-element buffer receiving a reduction's value.
    Result(ReductionId),
}

/// One kernel launch over a box of points.
#[derive(Clone, Debug)]
pub struct Launch {
    /// Index into the module's kernels.
    pub kernel: usize,
    /// The points; `None` for a single-block launch (final reduction pass).
    pub subset: Option<Subset>,
    /// Threads per block (x, y, z).
    pub block: [u32; 3],
    /// Points each block covers along x, y, z (block times points per thread).
    pub points_per_block: [u32; 3],
    /// The arguments, in the kernel's parameter order.
    pub args: Vec<ArgSource>,
}

/// How one reduction runs: a kernel per part writing per-block partials, then a
/// single-block pass combining them into the result.
#[derive(Clone, Debug)]
pub struct ReductionPlan {
    /// Name (for the summary).
    pub name: String,
    /// Combining operator.
    pub op: ReduceOp,
    /// Result type.
    pub ty: ScalarType,
    /// One launch per part.
    pub parts: Vec<Launch>,
    /// The final pass.
    pub finish: Launch,
}

/// Everything the host runs, in order, every iteration.
#[derive(Clone, Debug, Default)]
pub struct HostPlan {
    /// Per stencil, its launches (one per part) in order.
    pub stencils: Vec<Vec<Launch>>,
    /// Reductions, in order.
    pub reductions: Vec<ReductionPlan>,
}

/// Blocks per axis (x, y, z) for a launch over `bounds`; `None` when it is empty.
pub fn groups_for(bounds: &[(i64, i64)], points_per_block: [u32; 3]) -> Option<[u32; 3]> {
    let rank = bounds.len();
    let mut groups = [1u32; 3];
    for (axis, (lo, hi)) in bounds.iter().enumerate() {
        if hi < lo {
            return None;
        }
        let d = rank - 1 - axis;
        let extent = (hi - lo + 1) as u64;
        groups[d] = extent.div_ceil(points_per_block[d] as u64) as u32;
    }
    Some(groups)
}
