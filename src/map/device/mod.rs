//! Code for a lifted time loop (see [`super::lift`]) on a GPU: the kernels of
//! stencilc's own OpenCL or CUDA back-end (lowered from the lifted
//! `ir::Program`: shared tiles, register streaming) and the host code that
//! replaces the loop's lines: every array copied to the device once before
//! the first step, the steps launched back to back with the time levels
//! rotated by swapping buffer handles (as `exec::host_plan` runs them), and
//! the arrays copied back once after the last (the communication
//! specialisation). A time-buffered array's two C buffers are its two levels,
//! each copied in from and back to the buffer that holds it at that moment.

use std::fmt::Write;

use super::lift::{Lift, LiftedCheck};
use crate::ir::env::{Bindings, RunEnv};
use crate::ir::{ScalarType, Value};
use crate::kir::plan::{
    launch_groups, ArgSource, HostPlan, Launch, FOLD_THRESHOLD, MAX_FOLD_BLOCKS,
};
use crate::lower::{Lowered, Target};

/// The kernels and host code of one lifted time loop.
#[derive(Clone, Debug)]
pub struct DeviceCode {
    /// The kernels' source (OpenCL C or CUDA), as the back-end prints it.
    pub kernels: String,
    /// The kernels' names, in module order.
    pub kernel_names: Vec<String>,
    /// The host statements replacing the loop's lines.
    pub host: String,
    /// The OpenCL build options (empty for CUDA).
    pub options: &'static str,
    /// For CUDA, the kernels' declarations for compilers other than nvcc.
    pub declarations: String,
}

/// The lowered program of a lift, and the sizes when the lift fixes them as
/// constants (`None`: the host code computes them from the parameters).
fn lowered(lift: &Lift, target: Target) -> Result<(Lowered, Option<RunEnv>), String> {
    let program = &lift.program;
    let schedule = crate::driver::lifted_loop_schedule(program)
        .map_err(|e| format!("no GPU schedule: {}", e.0))?;
    let lowered = crate::driver::lower_gpu(program, &schedule, target, None);
    if lowered.plan.time_tile.is_some() {
        return Err("its host plan needs time tiling, not generated here".into());
    }
    if lowered.plan.reductions.len() > 1
        || lowered.plan.reductions.len() != usize::from(lift.check.is_some())
    {
        return Err("its host plan's reductions are not the lifted convergence test".into());
    }
    if !lift.constant_sizes {
        return Ok((lowered, None));
    }
    // Grid sizes and subsets are constants here; the parameters only
    // matter to the step count and the kernels' arguments, so any values do.
    let params = program
        .params
        .iter()
        .map(|p| Value::Int(1).cast(p.ty))
        .collect();
    let env = RunEnv::new(program, &Bindings { params })
        .map_err(|e| format!("its sizes do not bind: {e}"))?;
    Ok((lowered, Some(env)))
}

fn host_type(ty: ScalarType, target: Target) -> &'static str {
    match (ty, target) {
        (ScalarType::Int, Target::OpenCl) => "cl_int",
        (ScalarType::Long, Target::OpenCl) => "cl_long",
        (ScalarType::Float, Target::OpenCl) => "cl_float",
        (ScalarType::Double, Target::OpenCl) => "cl_double",
        (ScalarType::Int, Target::Cuda) => "int",
        (ScalarType::Long, Target::Cuda) => "long long",
        (ScalarType::Float, Target::Cuda) => "float",
        (ScalarType::Double, Target::Cuda) => "double",
    }
}

/// The C expression of the buffer holding a field level's values in the C
/// program at step `done` (a C expression).
fn c_buffer(lift: &Lift, f: usize, level: usize, done: &str) -> String {
    let a = &lift.arrays[f];
    if let Some(partner) = &a.swapped_with {
        // C swaps the pointers each step as the iterate rotates the levels.
        let _ = done;
        if level == 0 {
            a.c_name.clone()
        } else {
            partner.clone()
        }
    } else if a.time_buffers > 0 {
        let lower = lift
            .time
            .as_ref()
            .and_then(|(_, lo)| super::constant(lo))
            .unwrap_or(0);
        format!(
            "{}[(int)(({lower}L + {done} + {level}) % {})]",
            a.c_name, a.time_buffers
        )
    } else {
        a.c_name.clone()
    }
}

/// The device code of a lift for `target`, the host code indented by `indent`.
pub fn device_code(
    lift: &Lift,
    target: Target,
    id: &str,
    indent: &str,
) -> Result<DeviceCode, String> {
    let (mut lowered, env) = lowered(lift, target)?;
    // CUDA kernels have C linkage: the prefix keeps two lifts' names apart.
    for kernel in &mut lowered.module.kernels {
        kernel.name = format!("stencilc_{id}_{}", kernel.name);
    }
    let program = &lift.program;
    let module = &lowered.module;
    let (kernels, options) = match target {
        Target::OpenCl => (
            crate::back::opencl::print(module),
            crate::back::opencl::build_options(module),
        ),
        Target::Cuda => (crate::back::cuda::print(module), ""),
    };
    let kernel_names: Vec<String> = module.kernels.iter().map(|k| k.name.clone()).collect();
    let p = format!("{indent}    ");
    let mut h = String::new();
    let steps_note = match &lift.time {
        Some((var, _)) => format!("the time loop over `{var}`"),
        None => "the nest".to_string(),
    };
    let _ = writeln!(
        h,
        "{indent}{{ /* stencilc map: {steps_note} (lines {}-{}) lifted into an ir::Program, {} kernel(s) of stencilc's {} back-end; the arrays stay on the device across all steps */",
        lift.lines.0,
        lift.lines.1,
        kernel_names.len(),
        if target == Target::OpenCl { "OpenCL" } else { "CUDA" }
    );
    let _ = writeln!(
        h,
        "{p}long long stencilc_steps = (long long)({});\n{p}if (stencilc_steps < 0) stencilc_steps = 0;",
        lift.steps
    );
    match target {
        Target::OpenCl => {
            let _ = writeln!(
                h,
                "{p}cl_program stencilc_prog = stencilc_cl_build(stencilc_{id}_kernels, \"{options}\");"
            );
            for (k, name) in kernel_names.iter().enumerate() {
                let _ = writeln!(
                    h,
                    "{p}cl_kernel stencilc_k{k} = stencilc_cl_kernel_of(stencilc_prog, \"{name}\");"
                );
            }
        }
        Target::Cuda => {}
    }
    // Every level of every field on the device, from the C buffer holding it.
    for (f, field) in program.fields.iter().enumerate() {
        let a = &lift.arrays[f];
        let bytes = a.c_bytes();
        let buf = match target {
            Target::OpenCl => "cl_mem",
            Target::Cuda => "void *",
        };
        let _ = writeln!(h, "{p}{buf} stencilc_{}[{}];", a.field, field.levels());
        for level in 0..field.levels() {
            let src = c_buffer(lift, f, level, "0");
            if let Some(grid_bytes) = a.grid_bytes() {
                // A grid larger than the rows the nests reach: only those are copied.
                let _ = match target {
                    Target::OpenCl => writeln!(
                        h,
                        "{p}{{ cl_int status; stencilc_{0}[{level}] = clCreateBuffer(stencilc_context, CL_MEM_READ_WRITE, {grid_bytes}, NULL, &status); stencilc_cl_check(status, \"clCreateBuffer\"); }}\n{p}stencilc_cl_check(clEnqueueWriteBuffer(stencilc_queue, stencilc_{0}[{level}], CL_TRUE, 0, {bytes}, {src}, 0, NULL, NULL), \"clEnqueueWriteBuffer\");",
                        a.field
                    ),
                    Target::Cuda => writeln!(
                        h,
                        "{p}stencilc_cuda_check(cudaMalloc(&stencilc_{0}[{level}], {grid_bytes}), \"cudaMalloc\");\n{p}stencilc_cuda_check(cudaMemcpy(stencilc_{0}[{level}], {src}, {bytes}, cudaMemcpyHostToDevice), \"cudaMemcpy\");",
                        a.field
                    ),
                };
                continue;
            }
            let _ = match target {
                Target::OpenCl => writeln!(
                    h,
                    "{p}stencilc_{}[{level}] = stencilc_cl_to_device({src}, {bytes});",
                    a.field
                ),
                Target::Cuda => writeln!(
                    h,
                    "{p}stencilc_{}[{level}] = stencilc_cuda_to_device({src}, {bytes});",
                    a.field
                ),
            };
        }
    }
    // Only the parameters some kernel takes (the step count is computed apart).
    let used: Vec<usize> = lowered
        .plan
        .launches()
        .flat_map(|l| l.args.iter())
        .filter_map(|a| match a {
            ArgSource::Param(p) => Some(p.0),
            _ => None,
        })
        .collect();
    for (i, param) in program.params.iter().enumerate() {
        if !used.contains(&i) {
            continue;
        }
        let ty = host_type(param.ty, target);
        let _ = writeln!(h, "{p}{ty} stencilc_p_{0} = ({ty})({0});", param.name);
    }
    let emit = Emit {
        lift,
        program,
        target,
        env: env.as_ref(),
        kernel_names: &kernel_names,
        id,
    };
    let plan = &lowered.plan;
    let check = lift.check.as_ref().filter(|_| !plan.reductions.is_empty());
    // After a check, what follows the loop needs the steps it ran (the C
    // buffers holding each level, the pointers' parity, the time variable).
    let needs_done = lift
        .arrays
        .iter()
        .any(|a| a.swapped_with.is_some() || (a.time_buffers > 0 && a.written))
        || lift.time_var_declared_outside;
    if let Some(check) = check {
        emit.reduction_buffers(&mut h, &p, plan, check)?;
        if needs_done {
            let _ = writeln!(h, "{p}long long stencilc_done = 0;");
        }
        if lift.time_var_declared_outside {
            let _ = writeln!(h, "{p}int stencilc_stopped = 0;");
        }
    }
    let _ = writeln!(
        h,
        "{p}for (long long stencilc_step = 0; stencilc_step < stencilc_steps; stencilc_step++) {{"
    );
    let q = format!("{p}    ");
    // The check is due every step: the last stencil runs its fused variant.
    let fused = plan.fused.as_ref().filter(|_| check.is_some());
    for (s, launches) in plan.stencils.iter().enumerate() {
        for (k, launch) in launches.iter().enumerate() {
            let launch = match fused {
                Some(f) if f.stencil == s && k + 1 == launches.len() => &f.launch,
                _ => launch,
            };
            if env.is_none() && launches.len() != 1 {
                return Err("a stencil launched in several parts".into());
            }
            let name = &kernel_names[launch.kernel];
            let _ = writeln!(h, "{q}/* stencil {s}: {name} */");
            emit.launch(&mut h, &q, launch, Grid::Points(&lift.boxes[s]), None)?;
        }
    }
    if let Some(check) = check {
        emit.reductions(&mut h, &q, plan, check)?;
    }
    // Rotation: the buffer written as the top level becomes the one below.
    for (f, field) in program.fields.iter().enumerate() {
        let levels = field.levels();
        if levels > 1 {
            let name = &lift.arrays[f].field;
            let ty = if target == Target::OpenCl {
                "cl_mem"
            } else {
                "void *"
            };
            let _ = writeln!(
                h,
                "{q}{{ {ty} first = stencilc_{name}[0]; for (int l = 0; l + 1 < {levels}; l++) stencilc_{name}[l] = stencilc_{name}[l + 1]; stencilc_{name}[{}] = first; }}",
                levels - 1
            );
        }
    }
    // The step is done (its levels rotated, as the iterate rotates them even
    // when the check holds); C's test, of the scalar C would have computed.
    let done = match check {
        Some(check) => {
            if needs_done {
                let _ = writeln!(h, "{q}stencilc_done = stencilc_step + 1;");
            }
            // The scalar as C has it after the step (declared here when C
            // declares it in the loop), then C's own test.
            let value = check.c_value("stencilc_red0_value");
            let set = if check.declared_in_loop {
                let ty = match check.combine {
                    super::lift::converge::Combine::Flag { .. } => "int",
                    _ => check.c_type.as_str(),
                };
                format!("{ty} {} = {value};", check.scalar)
            } else {
                format!("{} = {value};", check.scalar)
            };
            let stop = if lift.time_var_declared_outside {
                "stencilc_stopped = 1; "
            } else {
                ""
            };
            let _ = writeln!(h, "{q}{{ {set} if ({}) {{ {stop}break; }} }}", check.c_test);
            "stencilc_done"
        }
        None => "stencilc_steps",
    };
    let _ = writeln!(h, "{p}}}");
    // C swapped the pointers once per step: an odd count leaves them crossed.
    for a in &lift.arrays {
        if let (Some(partner), Some((before, after))) = (&a.swapped_with, &a.pointer_type) {
            let _ = writeln!(
                h,
                "{p}if ({done} % 2) {{ {before}stencilc_swap{after} = {0}; {0} = {partner}; {partner} = stencilc_swap; }}",
                a.c_name
            );
        }
    }
    // Back to the C buffers that hold each level after the last step.
    for (f, field) in program.fields.iter().enumerate() {
        let a = &lift.arrays[f];
        let bytes = a.c_bytes();
        for level in 0..field.levels() {
            let name = &a.field;
            if a.written {
                let dst = c_buffer(lift, f, level, done);
                let _ = match target {
                    Target::OpenCl => writeln!(
                        h,
                        "{p}stencilc_cl_from_device(stencilc_{name}[{level}], {dst}, {bytes});"
                    ),
                    Target::Cuda => writeln!(
                        h,
                        "{p}stencilc_cuda_from_device(stencilc_{name}[{level}], {dst}, {bytes});"
                    ),
                };
            }
            let _ = match target {
                Target::OpenCl => writeln!(h, "{p}clReleaseMemObject(stencilc_{name}[{level}]);"),
                Target::Cuda => writeln!(h, "{p}cudaFree(stencilc_{name}[{level}]);"),
            };
        }
    }
    if check.is_some() {
        for r in 0..plan.reductions.len() {
            for buffer in ["partials", "result"] {
                let _ = match target {
                    Target::OpenCl => {
                        writeln!(h, "{p}clReleaseMemObject(stencilc_red{r}_{buffer});")
                    }
                    Target::Cuda => writeln!(h, "{p}cudaFree(stencilc_red{r}_{buffer});"),
                };
            }
        }
    }
    if target == Target::OpenCl {
        for k in 0..kernel_names.len() {
            let _ = writeln!(h, "{p}clReleaseKernel(stencilc_k{k});");
        }
        let _ = writeln!(h, "{p}clReleaseProgram(stencilc_prog);");
    }
    if let Some((var, lower)) = &lift.time {
        if lift.time_var_declared_outside {
            // A `break` leaves the variable at the step it was taken in.
            let stopped = if check.is_some() {
                " - stencilc_stopped"
            } else {
                ""
            };
            let _ = writeln!(h, "{p}{var} = ({lower}) + {done}{stopped};");
        }
    }
    let _ = writeln!(h, "{indent}}}");
    let mut declarations = String::new();
    if target == Target::Cuda {
        use crate::kir::print::{kernel_names as param_names, module_namer, Dialect};
        let namer = module_namer(module);
        for kernel in &module.kernels {
            let names = param_names(module, kernel, &namer);
            let params: Vec<String> = kernel
                .params
                .iter()
                .map(|q| crate::back::cuda::Cuda::default().param(q, &names[q.var.0 as usize]))
                .collect();
            let _ = writeln!(
                declarations,
                "extern \"C\" void {}({});",
                kernel.name,
                params.join(", ")
            );
        }
    }
    Ok(DeviceCode {
        kernels,
        kernel_names,
        host: h,
        options,
        declarations,
    })
}

/// What every launch of a lift's host code is written with.
struct Emit<'a> {
    lift: &'a Lift,
    program: &'a crate::ir::Program,
    target: Target,
    /// The sizes, when the lift fixes them as constants.
    env: Option<&'a RunEnv>,
    kernel_names: &'a [String],
    /// The lift's prefix of generated names.
    id: &'a str,
}

/// Where a launch runs.
enum Grid<'b> {
    /// Over the points of its subset; without constant sizes, over this
    /// box of C expressions.
    Points(&'b [(String, String)]),
    /// On these blocks (x, y, z), as C expressions: a reduction's fold or
    /// final pass.
    Blocks([String; 3]),
}

/// A reduction launch's partials: the reduction, where its blocks start
/// writing, and how many partials there are (C expressions).
type Partials = Option<(usize, String, String)>;

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
    fn blocks_c(&self, launch: &Launch, bounds: &[(String, String)]) -> Result<String, String> {
        let Some(subset) = &launch.subset else {
            return Err("a reduction launch without points".into());
        };
        Ok(match self.env {
            Some(env) => {
                let groups =
                    launch_groups(launch, &env.subset_box(subset)).map_err(|e| e.to_string())?;
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
    fn reduction_buffers(
        &self,
        h: &mut String,
        p: &str,
        plan: &HostPlan,
        check: &LiftedCheck,
    ) -> Result<(), String> {
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
    fn reductions(
        &self,
        h: &mut String,
        q: &str,
        plan: &HostPlan,
        check: &LiftedCheck,
    ) -> Result<(), String> {
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
    fn launch(
        &self,
        h: &mut String,
        q: &str,
        launch: &Launch,
        grid: Grid<'_>,
        partials: Partials,
    ) -> Result<(), String> {
        let (program, lift, target) = (self.program, self.lift, self.target);
        // The box and the blocks: numbers, or C expressions of the parameters.
        let (bounds, groups, dynamic): (Vec<(String, String)>, [String; 3], bool) = match grid {
            Grid::Blocks(groups) => (Vec::new(), groups, false),
            Grid::Points(dynamic_bounds) => {
                let Some(subset) = &launch.subset else {
                    return Err("a launch without points".into());
                };
                match self.env {
                    Some(env) => {
                        let bounds = env.subset_box(subset);
                        let groups = launch_groups(launch, &bounds).map_err(|e| e.to_string())?;
                        let Some(groups) = groups else { return Ok(()) };
                        (
                            bounds
                                .iter()
                                .map(|(lo, hi)| (lo.to_string(), hi.to_string()))
                                .collect(),
                            groups.map(|g| g.to_string()),
                            false,
                        )
                    }
                    None => {
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
                        (bounds, groups, true)
                    }
                }
            }
        };
        let launch_indent = q.to_string();
        let q = if dynamic {
            format!("{q}    ")
        } else {
            q.to_string()
        };
        // A block per launch: its argument variables are its own.
        let q = if target == Target::Cuda {
            let _ = writeln!(h, "{q}{{");
            format!("{q}    ")
        } else {
            q.clone()
        };
        let name = &self.kernel_names[launch.kernel];
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
                other => return Err(format!("a kernel argument {other:?}")),
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
        let global: Vec<String> = (0..3)
            .map(|d| match groups[d].parse::<u64>() {
                Ok(g) => (g * u64::from(launch.block[d])).to_string(),
                Err(_) => format!("(size_t){} * {}", groups[d], launch.block[d]),
            })
            .collect();
        match target {
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
        if dynamic {
            let _ = writeln!(h, "{launch_indent}}}");
        }
        Ok(())
    }
}
