//! The launches of a lifted loop's host code: each launch's blocks and
//! arguments, and the reductions of the lifted convergence test (their
//! partials, the fold and the final pass), as `exec::host_plan` runs them.

use std::fmt::Write;

use super::{host_type, DeviceCodeError, Emit};
use crate::kir::plan::{
    launch_groups, ArgSource, HostPlan, Launch, FOLD_THRESHOLD, MAX_FOLD_BLOCKS,
};
use crate::lower::Target;
use crate::map::lift::LiftedCheck;

/// Where a launch runs.
pub(super) enum Grid<'b> {
    /// Over the points of its subset; without constant sizes, over this
    /// box of C expressions.
    Points(&'b [(String, String)]),
    /// On these blocks (x, y, z), as C expressions: a reduction's fold or
    /// final pass.
    Blocks([String; 3]),
}

/// A reduction launch's partials: the reduction, where its blocks start
/// writing, and how many partials there are (C expressions).
pub(super) type Partials = Option<(usize, String, String)>;

/// A launch's box (C expressions or numbers), its blocks along x, y, z, and
/// whether they are computed at run time inside an `if` on the box.
type LaunchBox = (Vec<(String, String)>, [String; 3], bool);

impl Emit<'_> {
    /// The blocks along x, y, z of a launch over `bounds` (C expressions),
    /// as the launch computes them, and whether the box is not empty.
    fn groups_c(launch: &Launch, bounds: &[(String, String)]) -> ([String; 3], String) {
        let rank = bounds.len();
        let mut groups = [String::from("1"), String::from("1"), String::from("1")];
        for (axis, (lo, hi)) in bounds.iter().enumerate() {
            let d = rank - 1 - axis;
            let per = launch.points_per_block[d].max(1);
            let g = format!("((long long)(({hi}) - ({lo}) + {per}) / {per})");
            groups[d] = match launch.max_groups {
                Some(cap) => format!("({g} > {0} ? {0} : {g})", cap[d]),
                None => g,
            };
        }
        let nonempty: Vec<String> = bounds
            .iter()
            .map(|(lo, hi)| format!("({hi}) >= ({lo})"))
            .collect();
        (groups, nonempty.join(" && "))
    }

    /// The number of blocks of a launch over points, as a C expression.
    fn blocks_c(
        &self,
        launch: &Launch,
        bounds: &[(String, String)],
    ) -> Result<String, DeviceCodeError> {
        let Some(subset) = &launch.subset else {
            return Err(DeviceCodeError::ReductionWithoutPoints);
        };
        Ok(match self.env {
            Some(env) => {
                let groups = launch_groups(launch, &env.subset_box(subset))
                    .map_err(DeviceCodeError::Groups)?;
                groups
                    .map_or(0, |g| g.iter().map(|&v| u64::from(v)).product::<u64>())
                    .to_string()
            }
            None => {
                let (groups, nonempty) = Self::groups_c(launch, bounds);
                format!("(({nonempty}) ? {} : 0)", groups.join(" * "))
            }
        })
    }

    /// Before the steps: each reduction's partials (the fused kernel's
    /// first, then each part's, then the fold's) and its value, as
    /// `exec::host_plan` lays them out.
    pub(super) fn reduction_buffers(
        &self,
        h: &mut String,
        p: &str,
        plan: &HostPlan,
        check: &LiftedCheck,
    ) -> Result<(), DeviceCodeError> {
        for (r, reduction) in plan.reductions.iter().enumerate() {
            let total = format!("stencilc_red{r}_total");
            let _ = writeln!(
                h,
                "{p}/* reduction {}: one partial per block of its kernels, folded when there are more than {FOLD_THRESHOLD} */\n{p}long long {total} = 0;",
                reduction.name
            );
            if let Some(fused) = plan.fused.as_ref().filter(|f| f.reductions.contains(&r)) {
                let blocks = self.blocks_c(&fused.launch, &self.lift.boxes[fused.stencil])?;
                let _ = writeln!(h, "{p}{total} += {blocks};");
            }
            for (k, (_, part)) in reduction.parts.iter().enumerate() {
                let blocks = self.blocks_c(part, &check.bounds)?;
                let _ = writeln!(
                    h,
                    "{p}const long long stencilc_red{r}_offset{k} = {total};\n{p}{total} += {blocks};"
                );
            }
            let fold = format!("stencilc_red{r}_fold");
            let _ = writeln!(
                h,
                "{p}long long {fold} = {total} > {FOLD_THRESHOLD} ? ({total} + {}) / {FOLD_THRESHOLD} : 0;\n{p}if ({fold} > {MAX_FOLD_BLOCKS}) {fold} = {MAX_FOLD_BLOCKS};",
                FOLD_THRESHOLD - 1
            );
            let ty = host_type(reduction.ty, self.target);
            let room =
                format!("(size_t)({total} + {fold} > 0 ? {total} + {fold} : 1) * sizeof({ty})");
            for (buffer, bytes) in [("partials", room), ("result", format!("sizeof({ty})"))] {
                let _ = match self.target {
                    Target::OpenCl => writeln!(
                        h,
                        "{p}cl_mem stencilc_red{r}_{buffer};\n{p}{{ cl_int status; stencilc_red{r}_{buffer} = clCreateBuffer(stencilc_context, CL_MEM_READ_WRITE, {bytes}, NULL, &status); stencilc_cl_check(status, \"clCreateBuffer\"); }}"
                    ),
                    Target::Cuda => writeln!(
                        h,
                        "{p}void *stencilc_red{r}_{buffer};\n{p}stencilc_cuda_check(cudaMalloc(&stencilc_red{r}_{buffer}, {bytes}), \"cudaMalloc\");"
                    ),
                };
            }
            let _ = writeln!(h, "{p}{ty} stencilc_red{r}_value = 0;");
        }
        Ok(())
    }

    /// In a step, after its stencils: each reduction's parts, the fold of
    /// many partials, the final pass, and its value read back (this waits
    /// for the device).
    pub(super) fn reductions(
        &self,
        h: &mut String,
        q: &str,
        plan: &HostPlan,
        check: &LiftedCheck,
    ) -> Result<(), DeviceCodeError> {
        for (r, reduction) in plan.reductions.iter().enumerate() {
            let (total, fold) = (
                format!("(int)stencilc_red{r}_total"),
                format!("stencilc_red{r}_fold"),
            );
            for (k, (_, part)) in reduction.parts.iter().enumerate() {
                let _ = writeln!(
                    h,
                    "{q}/* reduction {}: {} */",
                    reduction.name, self.kernel_names[part.kernel]
                );
                let partials = Some((r, format!("(int)stencilc_red{r}_offset{k}"), total.clone()));
                self.launch(h, q, part, Grid::Points(&check.bounds), partials)?;
            }
            let _ = writeln!(
                h,
                "{q}/* reduction {}: the fold of many partials, then the final pass */\n{q}if ({fold} > 0) {{",
                reduction.name
            );
            let groups = [format!("(unsigned){fold}"), "1".into(), "1".into()];
            let partials = Some((r, "0".into(), total.clone()));
            self.launch(
                h,
                &format!("{q}    "),
                &reduction.fold,
                Grid::Blocks(groups),
                partials,
            )?;
            let _ = writeln!(h, "{q}}}");
            let partials = Some((
                r,
                format!("({fold} > 0 ? {total} : 0)"),
                format!("({fold} > 0 ? (int){fold} : {total})"),
            ));
            let one = || ["1".to_string(), "1".into(), "1".into()];
            self.launch(h, q, &reduction.finish, Grid::Blocks(one()), partials)?;
            let value = format!("stencilc_red{r}_value");
            let _ = match self.target {
                Target::OpenCl => writeln!(
                    h,
                    "{q}stencilc_cl_from_device(stencilc_red{r}_result, &{value}, sizeof {value});"
                ),
                Target::Cuda => writeln!(
                    h,
                    "{q}stencilc_cuda_from_device(stencilc_red{r}_result, &{value}, sizeof {value});"
                ),
            };
        }
        Ok(())
    }
    /// One launch: its blocks, its arguments, and the enqueue.
    pub(super) fn launch(
        &self,
        h: &mut String,
        q: &str,
        launch: &Launch,
        grid: Grid<'_>,
        partials: Partials,
    ) -> Result<(), DeviceCodeError> {
        let Some((bounds, groups, dynamic)) = self.launch_box(h, q, launch, grid)? else {
            return Ok(());
        };
        let launch_indent = q.to_string();
        let q = if dynamic {
            format!("{q}    ")
        } else {
            q.to_string()
        };
        // A block per launch: its argument variables are its own.
        let q = if self.target == Target::Cuda {
            let _ = writeln!(h, "{q}{{");
            format!("{q}    ")
        } else {
            q.clone()
        };
        let args = self.arguments(h, &q, launch, &bounds, dynamic, &partials)?;
        self.enqueue(h, &q, launch, &groups, &args);
        if dynamic {
            let _ = writeln!(h, "{launch_indent}}}");
        }
        Ok(())
    }

    /// The box of a launch and its blocks along x, y, z: numbers with
    /// constant sizes, otherwise C expressions of the parameters, computed
    /// in an `if` (opened here, `true` in the result) that skips an empty
    /// box. `None`: the box is empty for the constant sizes.
    fn launch_box(
        &self,
        h: &mut String,
        q: &str,
        launch: &Launch,
        grid: Grid<'_>,
    ) -> Result<Option<LaunchBox>, DeviceCodeError> {
        let dynamic_bounds = match grid {
            Grid::Blocks(groups) => return Ok(Some((Vec::new(), groups, false))),
            Grid::Points(dynamic_bounds) => dynamic_bounds,
        };
        let Some(subset) = &launch.subset else {
            return Err(DeviceCodeError::LaunchWithoutPoints);
        };
        if let Some(env) = self.env {
            let bounds = env.subset_box(subset);
            let groups = launch_groups(launch, &bounds).map_err(DeviceCodeError::Groups)?;
            let Some(groups) = groups else {
                return Ok(None);
            };
            return Ok(Some((
                bounds
                    .iter()
                    .map(|(lo, hi)| (lo.to_string(), hi.to_string()))
                    .collect(),
                groups.map(|g| g.to_string()),
                false,
            )));
        }
        let bounds = dynamic_bounds.to_vec();
        let nonempty: Vec<String> = bounds
            .iter()
            .map(|(lo, hi)| format!("({hi}) >= ({lo})"))
            .collect();
        let _ = writeln!(h, "{q}if ({}) {{", nonempty.join(" && "));
        let rank = bounds.len();
        let mut groups = [String::from("1"), String::from("1"), String::from("1")];
        for (axis, (lo, hi)) in bounds.iter().enumerate() {
            let d = rank - 1 - axis;
            let per = launch.points_per_block[d].max(1);
            let _ = writeln!(
                h,
                "{q}    unsigned stencilc_g{d} = (unsigned)((({hi}) - ({lo}) + {per}) / {per});"
            );
            if let Some(cap) = launch.max_groups {
                let _ = writeln!(
                    h,
                    "{q}    if (stencilc_g{d} > {0}u) stencilc_g{d} = {0}u;",
                    cap[d]
                );
            }
            groups[d] = format!("stencilc_g{d}");
        }
        Ok(Some((bounds, groups, true)))
    }

    /// A launch's arguments over `bounds` (`dynamic`: C expressions, cast
    /// to `int`): for OpenCL each set on the kernel here; for CUDA the
    /// pointers to pass, scalars declared here first.
    fn arguments(
        &self,
        h: &mut String,
        q: &str,
        launch: &Launch,
        bounds: &[(String, String)],
        dynamic: bool,
        partials: &Partials,
    ) -> Result<Vec<String>, DeviceCodeError> {
        let (program, lift, target) = (self.program, self.lift, self.target);
        let mut args = Vec::new();
        for (n, source) in launch.args.iter().enumerate() {
            let arg_name = match source {
                ArgSource::Lo(axis) => format!("stencilc_lo{axis}"),
                ArgSource::Hi(axis) => format!("stencilc_hi{axis}"),
                ArgSource::GridSize(_, axis) => format!("stencilc_size{axis}"),
                _ => format!("stencilc_arg{n}"),
            };
            let (ty, value) = match source {
                ArgSource::Level(fid, t) => {
                    let field = &program.fields[fid.0];
                    let name = &lift.arrays[fid.0].field;
                    ("buffer", format!("stencilc_{name}[{}]", t - field.time_lo))
                }
                ArgSource::Param(pid) => (
                    "param",
                    format!("stencilc_p_{}", program.params[pid.0].name),
                ),
                ArgSource::GridSize(g, axis) => (
                    "int",
                    match self.env {
                        Some(env) => env.grid_dims()[g.0][*axis].to_string(),
                        None => format!("(int)({})", lift.grids[g.0][*axis]),
                    },
                ),
                ArgSource::Lo(axis) if dynamic => ("int", format!("(int)({})", bounds[*axis].0)),
                ArgSource::Hi(axis) if dynamic => ("int", format!("(int)({})", bounds[*axis].1)),
                ArgSource::Lo(axis) => ("int", bounds[*axis].0.clone()),
                ArgSource::Hi(axis) => ("int", bounds[*axis].1.clone()),
                ArgSource::Partials(r) => ("buffer", format!("stencilc_red{}_partials", r.0)),
                ArgSource::Result(r) => ("buffer", format!("stencilc_red{}_result", r.0)),
                ArgSource::PartialOffset => (
                    "int",
                    partials.as_ref().map_or("0".to_string(), |p| p.1.clone()),
                ),
                ArgSource::PartialCount => (
                    "int",
                    partials.as_ref().map_or("0".to_string(), |p| p.2.clone()),
                ),
                other => return Err(DeviceCodeError::Argument(format!("{other:?}"))),
            };
            match (target, ty) {
                (Target::OpenCl, "buffer") => {
                    let _ = writeln!(h, "{q}stencilc_cl_check(clSetKernelArg(stencilc_k{}, {n}, sizeof(cl_mem), &{value}), \"clSetKernelArg\");", launch.kernel);
                }
                (Target::OpenCl, "param") => {
                    let _ = writeln!(h, "{q}stencilc_cl_check(clSetKernelArg(stencilc_k{}, {n}, sizeof({value}), &{value}), \"clSetKernelArg\");", launch.kernel);
                }
                (Target::OpenCl, _) => {
                    let _ = writeln!(h, "{q}{{ cl_int v = {value}; stencilc_cl_check(clSetKernelArg(stencilc_k{}, {n}, sizeof v, &v), \"clSetKernelArg\"); }}", launch.kernel);
                }
                (Target::Cuda, "buffer" | "param") => args.push(format!("&{value}")),
                (Target::Cuda, _) => {
                    let _ = writeln!(h, "{q}int {arg_name} = {value};");
                    args.push(format!("&{arg_name}"));
                }
            }
        }
        Ok(args)
    }

    /// The enqueue of a launch on `groups` blocks; for CUDA with the
    /// pointers `args`, closing the launch's own block.
    fn enqueue(
        &self,
        h: &mut String,
        q: &str,
        launch: &Launch,
        groups: &[String; 3],
        args: &[String],
    ) {
        let name = &self.kernel_names[launch.kernel];
        let global: Vec<String> = (0..3)
            .map(|d| match groups[d].parse::<u64>() {
                Ok(g) => (g * u64::from(launch.block[d])).to_string(),
                Err(_) => format!("(size_t){} * {}", groups[d], launch.block[d]),
            })
            .collect();
        match self.target {
            Target::OpenCl => {
                let _ = writeln!(
                    h,
                    "{q}{{ size_t global[3] = {{ {}, {}, {} }}, local[3] = {{ {}, {}, {} }};\n{q}  stencilc_cl_check(clEnqueueNDRangeKernel(stencilc_queue, stencilc_k{}, 3, NULL, global, local, 0, NULL, NULL), \"clEnqueueNDRangeKernel\"); }}",
                    global[0], global[1], global[2], launch.block[0], launch.block[1], launch.block[2], launch.kernel
                );
            }
            Target::Cuda => {
                let _ = writeln!(
                    h,
                    "{q}void *args[] = {{ {} }};\n{q}stencilc_cuda_check(cudaLaunchKernel((const void *)stencilc_{}_kernels::{name}, dim3({}, {}, {}), dim3({}, {}, {}), args, 0, 0), \"cudaLaunchKernel({name})\");\n{}}}",
                    args.join(", "),
                    self.id,
                    groups[0], groups[1], groups[2], launch.block[0], launch.block[1], launch.block[2],
                    &q[..q.len() - 4]
                );
            }
        }
    }
}
