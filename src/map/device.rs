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

use super::lift::Lift;
use crate::ir::env::{Bindings, RunEnv};
use crate::ir::{ScalarType, Value};
use crate::lower::plan::{launch_groups, ArgSource};
use crate::lower::{lower, Lowered, Target};
use crate::schedule::{Schedule, ScheduleRequest};

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
    let schedule = Schedule::new(program, &ScheduleRequest::default())
        .map_err(|e| format!("no GPU schedule: {}", e.0))?;
    let lowered = lower(program, &schedule, target);
    if lowered.plan.time_tile.is_some() || !lowered.plan.reductions.is_empty() {
        return Err("its host plan needs time tiling or reductions, not generated here".into());
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
    } else if a.time_buffers {
        let lower = lift
            .time
            .as_ref()
            .and_then(|(_, lo)| super::constant(lo))
            .unwrap_or(0);
        format!("{}[(int)(({lower}L + {done} + {level}) % 2)]", a.c_name)
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
        .stencils
        .iter()
        .flatten()
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
    let _ = writeln!(
        h,
        "{p}for (long long stencilc_step = 0; stencilc_step < stencilc_steps; stencilc_step++) {{"
    );
    let q = format!("{p}    ");
    for (s, launches) in lowered.plan.stencils.iter().enumerate() {
        for launch in launches {
            let Some(subset) = &launch.subset else {
                return Err("a launch without points".into());
            };
            let name = &kernel_names[launch.kernel];
            let _ = writeln!(h, "{q}/* stencil {s}: {name} */");
            // The box and the blocks: numbers, or C expressions of the parameters.
            let (bounds, groups): (Vec<(String, String)>, [String; 3]) = match &env {
                Some(env) => {
                    let bounds = env.subset_box(subset);
                    let groups = launch_groups(launch, &bounds).map_err(|e| e.to_string())?;
                    let Some(groups) = groups else { continue };
                    (
                        bounds
                            .iter()
                            .map(|(lo, hi)| (lo.to_string(), hi.to_string()))
                            .collect(),
                        groups.map(|g| g.to_string()),
                    )
                }
                None => {
                    if launches.len() != 1 {
                        return Err("a stencil launched in several parts".into());
                    }
                    let bounds = lift.boxes[s].clone();
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
                    (bounds, groups)
                }
            };
            let dynamic = env.is_none();
            let launch_indent = q.clone();
            let q = if dynamic {
                format!("{q}    ")
            } else {
                q.clone()
            };
            // A block per launch: its argument variables are its own.
            let q = if target == Target::Cuda {
                let _ = writeln!(h, "{q}{{");
                format!("{q}    ")
            } else {
                q.clone()
            };
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
                        match &env {
                            Some(env) => env.grid_dims()[g.0][*axis].to_string(),
                            None => format!("(int)({})", lift.grids[g.0][*axis]),
                        },
                    ),
                    ArgSource::Lo(axis) if dynamic => {
                        ("int", format!("(int)({})", bounds[*axis].0))
                    }
                    ArgSource::Hi(axis) if dynamic => {
                        ("int", format!("(int)({})", bounds[*axis].1))
                    }
                    ArgSource::Lo(axis) => ("int", bounds[*axis].0.clone()),
                    ArgSource::Hi(axis) => ("int", bounds[*axis].1.clone()),
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
                        "{q}void *args[] = {{ {} }};\n{q}stencilc_cuda_check(cudaLaunchKernel((const void *)stencilc_{id}_kernels::{name}, dim3({}, {}, {}), dim3({}, {}, {}), args, 0, 0), \"cudaLaunchKernel({name})\");\n{}}}",
                        args.join(", "),
                        groups[0], groups[1], groups[2], launch.block[0], launch.block[1], launch.block[2],
                        &q[..q.len() - 4]
                    );
                }
            }
            if dynamic {
                let _ = writeln!(h, "{launch_indent}}}");
            }
        }
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
    let _ = writeln!(h, "{p}}}");
    // C swapped the pointers once per step: an odd count leaves them crossed.
    for a in &lift.arrays {
        if let (Some(partner), Some((before, after))) = (&a.swapped_with, &a.pointer_type) {
            let _ = writeln!(
                h,
                "{p}if (stencilc_steps % 2) {{ {before}stencilc_swap{after} = {0}; {0} = {partner}; {partner} = stencilc_swap; }}",
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
                let dst = c_buffer(lift, f, level, "stencilc_steps");
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
    if target == Target::OpenCl {
        for k in 0..kernel_names.len() {
            let _ = writeln!(h, "{p}clReleaseKernel(stencilc_k{k});");
        }
        let _ = writeln!(h, "{p}clReleaseProgram(stencilc_prog);");
    }
    if let Some((var, lower)) = &lift.time {
        if lift.time_var_declared_outside {
            let _ = writeln!(h, "{p}{var} = ({lower}) + stencilc_steps;");
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
                .map(|q| crate::back::cuda::Cuda.param(q, &names[q.var.0 as usize]))
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
