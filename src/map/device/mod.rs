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

mod launch;

use super::lift::{Lift, LiftedCheck};
use crate::ir::env::{Bindings, RunEnv};
use crate::ir::{ScalarType, Value};
use crate::kir::plan::{ArgSource, HostPlan};
use crate::lower::{Lowered, Target};
use launch::Grid;

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
fn lowered(lift: &Lift, target: Target) -> Result<(Lowered, Option<RunEnv>), DeviceCodeError> {
    let program = &lift.program;
    let schedule =
        crate::driver::lifted_loop_schedule(program).map_err(DeviceCodeError::NoSchedule)?;
    let lowered = crate::driver::lower_gpu(program, &schedule, target, None);
    if lowered.plan.time_tile.is_some() {
        return Err(DeviceCodeError::TimeTiled);
    }
    if lowered.plan.reductions.len() > 1
        || lowered.plan.reductions.len() != usize::from(lift.check.is_some())
    {
        return Err(DeviceCodeError::OtherReductions);
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
    let env =
        RunEnv::new(program, &Bindings { params }).map_err(DeviceCodeError::SizesDoNotBind)?;
    Ok((lowered, Some(env)))
}

/// The C type the host code declares a kernel's scalar of `ty` with.
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
            .and_then(|(_, lo)| crate::front::c::fold::constant(lo))
            .unwrap_or(0);
        format!(
            "{}[(int)(({lower}L + {done} + {level}) % {})]",
            a.c_name, a.time_buffers
        )
    } else {
        a.c_name.clone()
    }
}

/// Why a lift gets no device code, as a clause after "no device code for it: ".
#[derive(Debug, thiserror::Error)]
pub enum DeviceCodeError {
    /// The host code replaces whole lines.
    #[error("the nest shares its first or last line with other code")]
    SharesLines,
    /// The lifted program has no GPU schedule.
    #[error("no GPU schedule: {}", .0 .0)]
    NoSchedule(crate::schedule::ScheduleError),
    /// Time tiling's host plan is not generated here.
    #[error("its host plan needs time tiling, not generated here")]
    TimeTiled,
    /// The host plan reduces something other than the lifted check.
    #[error("its host plan's reductions are not the lifted convergence test")]
    OtherReductions,
    /// The constant sizes do not bind.
    #[error("its sizes do not bind: {0}")]
    SizesDoNotBind(crate::ir::env::BindError),
    /// Without constant sizes, a stencil must run as one launch.
    #[error("a stencil launched in several parts")]
    StencilInParts,
    /// A reduction part's launch has no subset to count blocks of.
    #[error("a reduction launch without points")]
    ReductionWithoutPoints,
    /// A stencil's launch has no subset to run over.
    #[error("a launch without points")]
    LaunchWithoutPoints,
    /// The launch's blocks do not fit the device's limits.
    #[error("{0}")]
    Groups(crate::kir::plan::PlanError),
    /// A kernel argument the host code cannot pass (its debug form).
    #[error("a kernel argument {0}")]
    Argument(String),
}

/// The device code of a lift for `target`, the host code indented by `indent`.
pub fn device_code(
    lift: &Lift,
    target: Target,
    id: &str,
    indent: &str,
) -> Result<DeviceCode, DeviceCodeError> {
    let (mut lowered, env) = lowered(lift, target)?;
    // CUDA kernels have C linkage: the prefix keeps two lifts' names apart.
    for kernel in &mut lowered.module.kernels {
        kernel.name = format!("stencilc_{id}_{}", kernel.name);
    }
    let module = &lowered.module;
    let (kernels, options) = match target {
        Target::OpenCl => (
            crate::back::opencl::print(module),
            crate::back::opencl::build_options(module),
        ),
        Target::Cuda => (crate::back::cuda::print(module), ""),
    };
    let kernel_names: Vec<String> = module.kernels.iter().map(|k| k.name.clone()).collect();
    let emit = Emit {
        lift,
        program: &lift.program,
        target,
        env: env.as_ref(),
        kernel_names: &kernel_names,
        id,
    };
    let plan = &lowered.plan;
    let check = lift.check.as_ref().filter(|_| !plan.reductions.is_empty());
    let p = format!("{indent}    ");
    let mut h = String::new();
    emit.prologue(&mut h, indent, &p, options);
    emit.upload(&mut h, &p);
    emit.kernel_params(&mut h, &p, plan);
    let done = emit.steps(&mut h, &p, plan, check)?;
    emit.download(&mut h, &p, done);
    emit.release(&mut h, &p, plan, check.is_some());
    emit.restore_time_variable(&mut h, &p, check.is_some(), done);
    let _ = writeln!(h, "{indent}}}");
    let declarations = match target {
        Target::Cuda => cuda_declarations(module),
        Target::OpenCl => String::new(),
    };
    Ok(DeviceCode {
        kernels,
        kernel_names,
        host: h,
        options,
        declarations,
    })
}

/// For CUDA, each kernel's `extern "C"` declaration, for host compilers
/// other than nvcc.
fn cuda_declarations(module: &crate::kir::Module) -> String {
    use crate::kir::print::{kernel_names as param_names, module_namer, Dialect};
    let mut declarations = String::new();
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
    declarations
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

impl Emit<'_> {
    /// The block's opening comment, the step count, and for OpenCL the
    /// program built from the kernels' source and each kernel object.
    fn prologue(&self, h: &mut String, indent: &str, p: &str, options: &str) {
        let (lift, id) = (self.lift, self.id);
        let steps_note = match &lift.time {
            Some((var, _)) => format!("the time loop over `{var}`"),
            None => "the nest".to_string(),
        };
        let _ = writeln!(
            h,
            "{indent}{{ /* stencilc map: {steps_note} (lines {}-{}) lifted into an ir::Program, {} kernel(s) of stencilc's {} back-end; the arrays stay on the device across all steps */",
            lift.lines.0,
            lift.lines.1,
            self.kernel_names.len(),
            if self.target == Target::OpenCl { "OpenCL" } else { "CUDA" }
        );
        let _ = writeln!(
            h,
            "{p}long long stencilc_steps = (long long)({});\n{p}if (stencilc_steps < 0) stencilc_steps = 0;",
            lift.steps
        );
        match self.target {
            Target::OpenCl => {
                let _ = writeln!(
                    h,
                    "{p}cl_program stencilc_prog = stencilc_cl_build(stencilc_{id}_kernels, \"{options}\");"
                );
                for (k, name) in self.kernel_names.iter().enumerate() {
                    let _ = writeln!(
                        h,
                        "{p}cl_kernel stencilc_k{k} = stencilc_cl_kernel_of(stencilc_prog, \"{name}\");"
                    );
                }
            }
            Target::Cuda => {}
        }
    }

    /// Every level of every field on the device, from the C buffer holding it.
    fn upload(&self, h: &mut String, p: &str) {
        let (lift, target) = (self.lift, self.target);
        for (f, field) in self.program.fields.iter().enumerate() {
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
    }

    /// The host copies of the parameters some kernel takes (the step count
    /// is computed apart).
    fn kernel_params(&self, h: &mut String, p: &str, plan: &HostPlan) {
        let used: Vec<usize> = plan
            .launches()
            .flat_map(|l| l.args.iter())
            .filter_map(|a| match a {
                ArgSource::Param(p) => Some(p.0),
                _ => None,
            })
            .collect();
        for (i, param) in self.program.params.iter().enumerate() {
            if !used.contains(&i) {
                continue;
            }
            let ty = host_type(param.ty, self.target);
            let _ = writeln!(h, "{p}{ty} stencilc_p_{0} = ({ty})({0});", param.name);
        }
    }

    /// The loop over the steps: each step's launches, the check's
    /// reductions, the levels rotated, and C's test of the check; before
    /// it, the check's buffers. Returns the C expression of the steps run.
    fn steps(
        &self,
        h: &mut String,
        p: &str,
        plan: &HostPlan,
        check: Option<&LiftedCheck>,
    ) -> Result<&'static str, DeviceCodeError> {
        let lift = self.lift;
        // After a check, what follows the loop needs the steps it ran (the C
        // buffers holding each level, the pointers' parity, the time variable).
        let needs_done = lift
            .arrays
            .iter()
            .any(|a| a.swapped_with.is_some() || (a.time_buffers > 0 && a.written))
            || lift.time_var_declared_outside;
        if let Some(check) = check {
            self.reduction_buffers(h, p, plan, check)?;
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
                if self.env.is_none() && launches.len() != 1 {
                    return Err(DeviceCodeError::StencilInParts);
                }
                let name = &self.kernel_names[launch.kernel];
                let _ = writeln!(h, "{q}/* stencil {s}: {name} */");
                self.launch(h, &q, launch, Grid::Points(&lift.boxes[s]), None)?;
            }
        }
        if let Some(check) = check {
            self.reductions(h, &q, plan, check)?;
        }
        self.rotate(h, &q);
        // The step is done (its levels rotated, as the iterate rotates them even
        // when the check holds); C's test, of the scalar C would have computed.
        let done = match check {
            Some(check) => {
                if needs_done {
                    let _ = writeln!(h, "{q}stencilc_done = stencilc_step + 1;");
                }
                self.check_test(h, &q, check);
                "stencilc_done"
            }
            None => "stencilc_steps",
        };
        let _ = writeln!(h, "{p}}}");
        Ok(done)
    }

    /// Rotation: the buffer written as the top level becomes the one below.
    fn rotate(&self, h: &mut String, q: &str) {
        for (f, field) in self.program.fields.iter().enumerate() {
            let levels = field.levels();
            if levels > 1 {
                let name = &self.lift.arrays[f].field;
                let ty = if self.target == Target::OpenCl {
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
    }

    /// The check's scalar as C has it after the step (declared here when C
    /// declares it in the loop), then C's own test, leaving the loop when
    /// it holds.
    fn check_test(&self, h: &mut String, q: &str, check: &LiftedCheck) {
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
        let stop = if self.lift.time_var_declared_outside {
            "stencilc_stopped = 1; "
        } else {
            ""
        };
        let _ = writeln!(h, "{q}{{ {set} if ({}) {{ {stop}break; }} }}", check.c_test);
    }

    /// After the steps (`done`: how many ran, a C expression): the swapped
    /// pointers uncrossed, and every written level copied back to the C
    /// buffer that holds it after the last step, each device buffer freed.
    fn download(&self, h: &mut String, p: &str, done: &str) {
        let (lift, target) = (self.lift, self.target);
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
        for (f, field) in self.program.fields.iter().enumerate() {
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
                    Target::OpenCl => {
                        writeln!(h, "{p}clReleaseMemObject(stencilc_{name}[{level}]);")
                    }
                    Target::Cuda => writeln!(h, "{p}cudaFree(stencilc_{name}[{level}]);"),
                };
            }
        }
    }

    /// The check's buffers freed (`checked`: there was a check), and for
    /// OpenCL the kernels and the program.
    fn release(&self, h: &mut String, p: &str, plan: &HostPlan, checked: bool) {
        if checked {
            for r in 0..plan.reductions.len() {
                for buffer in ["partials", "result"] {
                    let _ = match self.target {
                        Target::OpenCl => {
                            writeln!(h, "{p}clReleaseMemObject(stencilc_red{r}_{buffer});")
                        }
                        Target::Cuda => writeln!(h, "{p}cudaFree(stencilc_red{r}_{buffer});"),
                    };
                }
            }
        }
        if self.target == Target::OpenCl {
            for k in 0..self.kernel_names.len() {
                let _ = writeln!(h, "{p}clReleaseKernel(stencilc_k{k});");
            }
            let _ = writeln!(h, "{p}clReleaseProgram(stencilc_prog);");
        }
    }

    /// The time variable, where C declares it outside the loop, set to what
    /// C's loop leaves in it after `done` steps (`checked`: a check may
    /// have stopped the loop early).
    fn restore_time_variable(&self, h: &mut String, p: &str, checked: bool, done: &str) {
        if let Some((var, lower)) = &self.lift.time {
            if self.lift.time_var_declared_outside {
                // A `break` leaves the variable at the step it was taken in.
                let stopped = if checked { " - stencilc_stopped" } else { "" };
                let _ = writeln!(h, "{p}{var} = ({lower}) + {done}{stopped};");
            }
        }
    }
}
