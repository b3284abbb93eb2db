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

/// Checks that every launch of `plan` fits its kernel in `module`: the kernel
/// exists, the block shape is the kernel's, and each argument is what the
/// parameter in its place takes (a buffer for field levels, partials and
/// results; a scalar of the right type otherwise). Run with the kernel IR
/// verifier after lowering.
pub fn verify_launches(
    program: &crate::ir::Program,
    module: &crate::kir::Module,
    plan: &HostPlan,
) -> Result<(), Vec<String>> {
    use crate::kir::ParamKind;
    let mut errors = Vec::new();
    let launches = plan.stencils.iter().flatten().chain(
        plan.reductions
            .iter()
            .flat_map(|r| r.parts.iter().chain(std::iter::once(&r.finish))),
    );
    for launch in launches {
        let Some(kernel) = module.kernels.get(launch.kernel) else {
            errors.push(format!(
                "a launch of kernel {}, which the module lacks",
                launch.kernel
            ));
            continue;
        };
        if launch.block != kernel.block {
            errors.push(format!(
                "kernel `{}` requires blocks of {:?} but is launched with {:?}",
                kernel.name, kernel.block, launch.block
            ));
        }
        if launch.args.len() != kernel.params.len() {
            errors.push(format!(
                "kernel `{}` takes {} parameters but is launched with {} arguments",
                kernel.name,
                kernel.params.len(),
                launch.args.len()
            ));
        }
        for (i, (arg, param)) in launch.args.iter().zip(&kernel.params).enumerate() {
            let reduction_ty = |r: &ReductionId| plan.reductions.get(r.0).map(|p| p.ty);
            let expected = match arg {
                ArgSource::Level(f, _) => Some((true, program.fields.get(f.0).map(|f| f.ty))),
                ArgSource::Partials(r) | ArgSource::Result(r) => Some((true, reduction_ty(r))),
                ArgSource::Param(p) => Some((false, program.params.get(p.0).map(|p| p.ty))),
                ArgSource::Const(c) => Some((false, program.constants.get(c.0).map(|c| c.ty))),
                ArgSource::GridSize(..)
                | ArgSource::Lo(_)
                | ArgSource::Hi(_)
                | ArgSource::PartialOffset
                | ArgSource::PartialCount => Some((false, Some(ScalarType::Int))),
            };
            let Some((buffer, ty)) = expected else {
                continue;
            };
            let is_buffer = param.kind != ParamKind::Scalar;
            if is_buffer != buffer || ty != Some(param.ty) {
                errors.push(format!(
                    "kernel `{}`: argument {i} ({arg:?}) does not fit its parameter ({:?} {})",
                    kernel.name,
                    param.kind,
                    param.ty.name()
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}
