//! The host plan: what the host does around the kernels (launches with their
//! arguments, reductions, the check), shared by every GPU back-end, and
//! [`Lowered`], the kernels with their plan. Lowering builds them; they are
//! data a printer or runtime is handed, so they sit with the kernel IR, below
//! what chooses a schedule.

use super::Module;
use crate::ir::{ConstId, FieldId, ParamId, Program, ReduceOp, ReductionId, ScalarType, Subset};

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
    /// The buffer a time-tiled launch writes a field time level's new values
    /// into (its shadow, swapped with the level after the launch: blocks read
    /// the old values of their neighbours' points while others write).
    NextLevel(FieldId, i32),
    /// How many iterations a time-tiled launch advances (an `int`, at most
    /// [`TimeTileLaunch::steps`]).
    TimeSteps,
}

/// A launch that advances several iterations of the whole iterate on each
/// block's tile (overlapped time tiling, see `lower/time_tile/`).
#[derive(Clone, Debug)]
pub struct TimeTileLaunch {
    /// The launch over the whole grid (`steps` is an argument).
    pub launch: Launch,
    /// The most iterations one launch advances.
    pub steps: u32,
    /// The fields whose levels the launch writes into their shadows (every
    /// level of each): the host swaps each level with its shadow afterwards.
    pub staged: Vec<FieldId>,
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
    /// For a grid-stride kernel, the most blocks along x, y, z (its threads
    /// loop over the rest); `None` when every block covers its own points.
    pub max_groups: Option<[u32; 3]>,
    /// The blocks start at the subset's first x index rounded down to a
    /// multiple of this (a kernel loading aligned vectors; 1: at the first
    /// index), so the launch covers the x extent from there.
    pub align_x: u32,
}

impl Launch {
    /// The subset's first x index `lo` rounded down as the kernel's blocks
    /// start ([`Launch::align_x`]).
    pub fn aligned_lo_x(&self, lo: i64) -> i64 {
        let align = i64::from(self.align_x.max(1));
        lo - lo.rem_euclid(align)
    }
}

/// How one reduction runs: its parts accumulated by the fused stencil kernel
/// ([`HostPlan::fused`]) or by grid-stride kernels of their own, each block
/// writing one partial; then, when there are more than [`FOLD_THRESHOLD`]
/// partials, a fold of at most [`MAX_FOLD_BLOCKS`] blocks; then a single-block
/// pass combining what is left into the result. Every step visits its values
/// in an order fixed by the sizes alone, so results repeat bit for bit.
#[derive(Clone, Debug)]
pub struct ReductionPlan {
    /// Name (for the summary).
    pub name: String,
    /// Combining operator.
    pub op: ReduceOp,
    /// Result type.
    pub ty: ScalarType,
    /// The parts run as kernels of their own: (part index in the program, launch).
    pub parts: Vec<(usize, Launch)>,
    /// The parts the fused stencil kernel accumulates (part indices).
    pub fused_parts: Vec<usize>,
    /// The multi-block fold of many partials (its block count is chosen by
    /// the host with [`fold_groups`]).
    pub fold: Launch,
    /// The final pass.
    pub finish: Launch,
}

/// A check fused into the last stencil launch of the iteration: a variant of
/// that kernel that also accumulates reduction terms at its points and writes
/// one partial per block into each reduction's partials (from index 0). The
/// host runs it instead of the plain kernel when the check is due.
#[derive(Clone, Debug)]
pub struct FusedCheck {
    /// The entry of [`HostPlan::stencils`] whose last launch it replaces.
    pub stencil: usize,
    /// The variant's launch (same points and blocks as the plain one).
    pub launch: Launch,
    /// The reductions it accumulates (indices into [`HostPlan::reductions`]).
    pub reductions: Vec<usize>,
    /// The fused parts' subsets: the host confirms that each covers exactly
    /// the launch's points for the run's parameter values.
    pub subsets: Vec<Subset>,
}

/// Everything the host runs, in order, every iteration.
#[derive(Clone, Debug, Default)]
pub struct HostPlan {
    /// Per stencil, its launches (one per part) in order.
    pub stencils: Vec<Vec<Launch>>,
    /// Reductions, in order.
    pub reductions: Vec<ReductionPlan>,
    /// Whether the kernels compute flattened field indices in 64 bits
    /// ([`crate::schedule::Schedule::wide_indices`]); without, grids over
    /// [`MAX_GPU_GRID_POINTS`] points are refused.
    pub wide_indices: bool,
    /// The check fused into the last stencil launch, if any reduction part fuses.
    pub fused: Option<FusedCheck>,
    /// Why each reduction part was or was not fused (for `-v` and `explain`).
    pub notes: Vec<String>,
    /// With time tiling, the launch that runs the stencils of several
    /// iterations (instead of [`HostPlan::stencils`], which stay for reports;
    /// the check then runs as separate reduction kernels).
    pub time_tile: Option<TimeTileLaunch>,
}

/// Past this many partials a reduction folds them with a multi-block pass
/// before the single-block final pass.
pub const FOLD_THRESHOLD: u64 = 4096;

/// The most blocks of the multi-block fold.
pub const MAX_FOLD_BLOCKS: u32 = 256;

/// The most blocks of a separate (grid-stride) reduction-part kernel; their
/// threads loop over the rest of the part's points.
pub const MAX_REDUCTION_BLOCKS: u32 = 1024;

/// Blocks per axis (x, y, z) at most for a grid-stride reduction part over a
/// `rank`-D subset: [`MAX_REDUCTION_BLOCKS`] in all, spread over the axes.
pub fn reduction_group_cap(rank: usize) -> [u32; 3] {
    match rank {
        0 | 1 => [MAX_REDUCTION_BLOCKS, 1, 1],
        2 => [32, 32, 1],
        _ => [16, 8, 8],
    }
}

/// Blocks of the fold over `partials` values; `None` when the final pass
/// takes them directly (at most [`FOLD_THRESHOLD`]).
pub fn fold_groups(partials: u64) -> Option<u32> {
    (partials > FOLD_THRESHOLD).then(|| {
        partials
            .div_ceil(FOLD_THRESHOLD)
            .min(u64::from(MAX_FOLD_BLOCKS)) as u32
    })
}

/// Blocks per axis for `launch` over `bounds`, capped by its `max_groups`;
/// `Ok(None)` when there is nothing to run.
pub fn launch_groups(
    launch: &Launch,
    bounds: &[(i64, i64)],
) -> Result<Option<[u32; 3]>, PlanError> {
    let cap = launch.max_groups.unwrap_or([u32::MAX; 3]);
    let mut bounds = bounds.to_vec();
    if let Some((lo, hi)) = bounds.last_mut() {
        if *lo <= *hi {
            *lo = launch.aligned_lo_x(*lo);
        }
    }
    groups_for_capped(&bounds, launch.points_per_block, cap)
}

fn groups_for_capped(
    bounds: &[(i64, i64)],
    points_per_block: [u32; 3],
    cap: [u32; 3],
) -> Result<Option<[u32; 3]>, PlanError> {
    if cap == [u32::MAX; 3] {
        return groups_for(bounds, points_per_block);
    }
    // A grid-stride launch needs no more blocks than its cap: count them
    // without the per-axis limit (the cap is within it).
    if bounds.iter().any(|&(lo, hi)| hi < lo) {
        return Ok(None);
    }
    let rank = bounds.len();
    let mut groups = [1u32; 3];
    for (axis, &(lo, hi)) in bounds.iter().enumerate() {
        let d = rank - 1 - axis;
        let extent = hi.abs_diff(lo).saturating_add(1);
        let count = extent.div_ceil(u64::from(points_per_block[d].max(1)));
        groups[d] = count.min(u64::from(cap[d])) as u32;
    }
    Ok(Some(groups))
}

/// The most blocks a launch may have along x, y and z: CUDA's grid limits
/// (OpenCL's are at least as large on the devices stencilc targets).
pub const MAX_GROUPS: [u64; 3] = [i32::MAX as u64, 65535, 65535];

/// The most points a grid may have for GPU kernels that index fields with
/// 32-bit `int` arithmetic (those of a schedule without `wide_indices`).
pub const MAX_GPU_GRID_POINTS: u64 = crate::schedule::MAX_NARROW_GRID_POINTS;

/// The most points a grid may have along one axis on the GPU back-ends, with
/// 32- or 64-bit indices: per-axis coordinates (a block's first point plus its
/// points and a halo) are 32-bit `int`, and this leaves them room.
pub const MAX_GPU_AXIS_POINTS: u64 = 1 << 30;

/// Why a launch or a grid cannot run as planned, as a sentence saying what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

/// Blocks per axis (x, y, z) for a launch over `bounds`; `Ok(None)` when it is
/// empty. Refuses zero points per block and more blocks than [`MAX_GROUPS`].
pub fn groups_for(
    bounds: &[(i64, i64)],
    points_per_block: [u32; 3],
) -> Result<Option<[u32; 3]>, PlanError> {
    if bounds.len() > 3 {
        return Err(PlanError(format!(
            "a launch over {} axes; the GPU back-ends run 1 to 3",
            bounds.len()
        )));
    }
    if points_per_block.contains(&0) {
        return Err(PlanError(format!(
            "a launch computes {points_per_block:?} points per block (x, y, z); every axis needs \
             at least 1: give positive --block and --tile sizes"
        )));
    }
    let rank = bounds.len();
    let mut groups = [1u32; 3];
    for (axis, &(lo, hi)) in bounds.iter().enumerate() {
        if hi < lo {
            return Ok(None);
        }
        let d = rank - 1 - axis;
        let extent = hi.abs_diff(lo).saturating_add(1);
        let count = extent.div_ceil(u64::from(points_per_block[d]));
        if count > MAX_GROUPS[d] {
            return Err(PlanError(format!(
                "a launch over {extent} points along {} needs {count} blocks of {} points, more \
                 than the limit of {} blocks along that axis; give a larger --block or --tile \
                 along {0}, or a smaller grid",
                ["x", "y", "z"][d],
                points_per_block[d],
                MAX_GROUPS[d]
            )));
        }
        groups[d] = count as u32;
    }
    Ok(Some(groups))
}

impl HostPlan {
    /// What the host checks before any launch, from the actual sizes: every grid
    /// indexable by the kernels (see [`check_grid_sizes`]) and every
    /// launch's block count within [`MAX_GROUPS`] (`subset_box` gives a
    /// subset's bounds for this run's parameter values). Accesses outside
    /// the grids are refused before this, when the parameters are bound.
    pub fn check<'a>(
        &self,
        grids: impl IntoIterator<Item = (&'a str, &'a [usize])>,
        subset_box: &dyn Fn(&Subset) -> Vec<(i64, i64)>,
    ) -> Result<(), PlanError> {
        check_grid_sizes(grids, self.wide_indices)?;
        if let Some(fused) = &self.fused {
            if let Some(subset) = &fused.launch.subset {
                let points = subset_box(subset);
                if fused.subsets.iter().any(|s| subset_box(s) != points) {
                    return Err(PlanError(
                        "the check was fused into a stencil kernel for other parameter values \
                         (a reduction's points no longer match the kernel's); lower the program \
                         again for these values"
                            .to_string(),
                    ));
                }
            }
        }
        let mut partials = 0u64;
        for launch in self.launches() {
            if let Some(subset) = &launch.subset {
                if let Some(groups) = launch_groups(launch, &subset_box(subset))? {
                    let blocks: u64 = groups.iter().map(|&g| u64::from(g)).product();
                    partials = partials.saturating_add(blocks);
                }
            }
        }
        if partials > i32::MAX as u64 - u64::from(MAX_FOLD_BLOCKS) {
            return Err(PlanError(format!(
                "the launches need {partials} blocks in all, more than the {} partial results \
                 the reductions count with 32-bit `int`; use a smaller grid",
                i32::MAX as u64 - u64::from(MAX_FOLD_BLOCKS)
            )));
        }
        Ok(())
    }

    /// Every launch of the plan: stencils, the fused variant, reduction parts,
    /// folds and final passes.
    pub fn launches(&self) -> impl Iterator<Item = &Launch> {
        let reductions = self
            .reductions
            .iter()
            .flat_map(|r| r.parts.iter().map(|(_, l)| l).chain([&r.fold, &r.finish]));
        self.stencils
            .iter()
            .flatten()
            .chain(self.fused.as_ref().map(|f| &f.launch))
            .chain(self.time_tile.as_ref().map(|t| &t.launch))
            .chain(reductions)
    }
}

/// Refuses grids the GPU kernels cannot index (`grids` gives each grid's name
/// and sizes): more than [`MAX_GPU_AXIS_POINTS`] points along an axis, or, for
/// kernels with 32-bit indices (`wide` false), more than
/// [`MAX_GPU_GRID_POINTS`] points in all: a 32-bit flattened index would wrap.
pub fn check_grid_sizes<'a>(
    grids: impl IntoIterator<Item = (&'a str, &'a [usize])>,
    wide: bool,
) -> Result<(), PlanError> {
    for (name, dims) in grids {
        let sizes = || {
            let sizes: Vec<String> = dims.iter().map(usize::to_string).collect();
            sizes.join(" x ")
        };
        if dims.iter().any(|&d| d as u64 > MAX_GPU_AXIS_POINTS) {
            return Err(PlanError(format!(
                "grid `{name}` ({}) has more than {MAX_GPU_AXIS_POINTS} (2^30) points along an \
                 axis, the most the GPU kernels take along one axis (their per-axis coordinates \
                 are 32-bit `int`); use a smaller grid, or --backend c",
                sizes()
            )));
        }
        if !wide && crate::schedule::needs_wide_indices(dims) {
            return Err(PlanError(format!(
                "grid `{name}` ({}) has more than {MAX_GPU_GRID_POINTS} points, the most that \
                 kernels with 32-bit `int` indices can index, and these kernels were built with \
                 them; schedule for this run's sizes (`stencilc run` does) or with 64-bit \
                 indices (--index64)",
                sizes()
            )));
        }
    }
    Ok(())
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
    for launch in plan.launches() {
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
                ArgSource::Level(f, _) | ArgSource::NextLevel(f, _) => {
                    Some((true, program.fields.get(f.0).map(|f| f.ty)))
                }
                ArgSource::Partials(r) | ArgSource::Result(r) => Some((true, reduction_ty(r))),
                ArgSource::Param(p) => Some((false, program.params.get(p.0).map(|p| p.ty))),
                ArgSource::Const(c) => Some((false, program.constants.get(c.0).map(|c| c.ty))),
                ArgSource::GridSize(..)
                | ArgSource::Lo(_)
                | ArgSource::Hi(_)
                | ArgSource::PartialOffset
                | ArgSource::PartialCount
                | ArgSource::TimeSteps => Some((false, Some(ScalarType::Int))),
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

/// Kernels plus the host plan that runs them.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The kernels and constant tables.
    pub module: Module,
    /// The launches, reductions and check.
    pub plan: HostPlan,
}

impl Lowered {
    /// Runs the kernel IR verifier on the module and checks every launch of the
    /// host plan against its kernel; the error lists every violation.
    pub fn verify(&self, program: &Program) -> Result<(), Vec<String>> {
        let mut errors = crate::kir::verify::verify(&self.module)
            .err()
            .unwrap_or_default();
        if let Err(more) = verify_launches(program, &self.module, &self.plan) {
            errors.extend(more);
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_counted_without_overflow_or_division_by_zero() {
        assert_eq!(groups_for(&[(0, 99)], [32, 1, 1]), Ok(Some([4, 1, 1])));
        assert_eq!(groups_for(&[(5, 4)], [32, 1, 1]), Ok(None));
        // 256 threads x 16777216 points wrapped to 0 points per block in u32.
        assert!(groups_for(&[(0, 99)], [0, 1, 1]).is_err());
        let whole = (i64::MIN, i64::MAX);
        let err = groups_for(&[whole, (0, 0)], [1, 1, 1]).unwrap_err();
        assert!(err.0.contains("limit of 65535 blocks"), "{err}");
    }

    #[test]
    fn narrow_kernels_are_refused_on_grids_of_2_31_points_and_wide_ones_are_not() {
        let small: &[usize] = &[46340, 46340];
        assert_eq!(check_grid_sizes([("g", small)], false), Ok(()));
        // 1291^3 = 2151685171 points: past i32::MAX, flattened.
        let large: &[usize] = &[1291, 1291, 1291];
        let err = check_grid_sizes([("g", large)], false).unwrap_err();
        assert!(
            err.0.contains("2147483647") && err.0.contains("--index64"),
            "{err}"
        );
        assert_eq!(check_grid_sizes([("g", large)], true), Ok(()));
        let exactly: &[usize] = &[1 << 31];
        assert!(check_grid_sizes([("g", exactly)], false).is_err());
        let overflowing: &[usize] = &[usize::MAX, usize::MAX];
        assert!(check_grid_sizes([("g", overflowing)], true).is_err());
    }

    #[test]
    fn one_axis_past_2_30_points_is_refused_naming_the_limit() {
        let long_axis: &[usize] = &[1, (1 << 30) + 1];
        let err = check_grid_sizes([("g", long_axis)], true).unwrap_err();
        assert!(
            err.0.contains("1073741824") && err.0.contains("along an axis"),
            "{err}"
        );
        let at_limit: &[usize] = &[1 << 30, 2];
        assert_eq!(check_grid_sizes([("g", at_limit)], true), Ok(()));
    }

    #[test]
    fn the_host_plan_refuses_a_narrow_plan_for_a_2_31_point_grid() {
        let dims: &[usize] = &[1 << 11, 1 << 10, 1 << 10];
        let mut plan = HostPlan::default();
        let err = plan.check([("g", dims)], &|_| vec![]).unwrap_err();
        assert!(err.0.contains("32-bit"), "{err}");
        plan.wide_indices = true;
        assert_eq!(plan.check([("g", dims)], &|_| vec![]), Ok(()));
    }
}
