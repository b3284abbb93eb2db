//! The host side of `--target opencl`: the program with each mapped nest's
//! lines replaced by glue (buffers, the launch, the copy back of what the
//! kernel writes; arrays an iterate keeps on the device are passed as they
//! are), each lifted loop's lines by its own host code, and the helpers and
//! kernel sources at the top.

use std::collections::BTreeMap;

use super::KernelPlan;
use crate::front::c::CFile;
use crate::map::nest::{Decision, FilePlan, NestPlan};

/// The C string literal of a text.
fn c_string(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let escaped = line.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("    \"{escaped}\\n\"\n"));
    }
    out
}

/// The mapped nests with a direct kernel, outside the lifted ones.
pub fn mapped<'a>(nests: &'a [NestPlan], out: &mut Vec<&'a NestPlan>) {
    for n in nests {
        if n.device.is_some() {
            continue;
        }
        if matches!(n.decision, Decision::Mapped { .. }) && n.kernel.is_some() {
            out.push(n);
        }
        mapped(&n.inner, out);
    }
}

/// The functions the kernels of `nests` call, each once, callees first.
pub fn unique_functions<'a>(nests: &[&'a NestPlan]) -> Vec<&'a super::callee::DeviceFunction> {
    let mut out: Vec<&super::callee::DeviceFunction> = Vec::new();
    for k in nests.iter().filter_map(|n| n.kernel.as_ref()) {
        for f in &k.functions {
            if !out.iter().any(|g| g.name == f.name) {
                out.push(f);
            }
        }
    }
    out
}

/// The program for `--target opencl`.
pub fn opencl_program(file: &CFile, plan: &FilePlan) -> String {
    let mut nests = Vec::new();
    mapped(&plan.nests, &mut nests);
    let mut kernels = String::from(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma OPENCL FP_CONTRACT OFF\n",
    );
    let mut replace: BTreeMap<usize, (usize, String)> = BTreeMap::new();
    for f in unique_functions(&nests) {
        kernels.push('\n');
        kernels.push_str(&f.source);
    }
    for n in &nests {
        let Some(k) = &n.kernel else { continue };
        kernels.push('\n');
        kernels.push_str(&k.source);
        let indent: String = file
            .original_line(n.lines.0)
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect();
        replace.insert(n.lines.0, (n.lines.1, host_glue(k, &indent, n)));
    }
    for n in crate::map::resident::iterates(&plan.nests) {
        let lines = crate::map::resident::wrap_loop(
            n,
            file,
            &|a| {
                format!(
                    "cl_mem d_{a} = stencilc_cl_to_device({a}, {});",
                    super::array_bytes(n, a)
                )
            },
            &|a, written| {
                let back = if written {
                    format!(
                        "stencilc_cl_from_device(d_{a}, {a}, {}); ",
                        super::array_bytes(n, a)
                    )
                } else {
                    String::new()
                };
                format!("{back}clReleaseMemObject(d_{a});")
            },
            "stencilc_cl_init();",
        );
        for (line, text) in lines {
            replace.insert(line, (line, text));
        }
    }
    let mut lifted_sources = String::new();
    let mut lifted = 0;
    for n in &plan.nests {
        if let Some(code) = &n.device {
            lifted += 1;
            lifted_sources.push_str(&format!(
                "/* The kernels of nest {} (lines {}-{}), lifted into an ir::Program: stencilc's OpenCL back-end. */\nstatic const char *stencilc_{}_kernels =\n{};\n\n",
                n.id,
                n.lines.0,
                n.lines.1,
                crate::map::device_id(&n.id),
                c_string(&code.kernels)
            ));
            replace.insert(n.lines.0, (n.lines.1, code.host.clone()));
        }
    }
    let mut out = format!(
        "/* Mapped by stencilc map --target opencl from {}: {} nest(s) run as direct OpenCL kernels,\n   {} lifted time loop(s) or nest(s) as stencilc's kernels (link with -lOpenCL). */\n\
#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n\
static const char *stencilc_kernels =\n{};\n\n{lifted_sources}{}#line 1 \"{}\"\n",
        plan.file,
        nests.len(),
        lifted,
        c_string(&kernels),
        HOST_HELPERS.replace("@OPTIONS@", crate::back::opencl::BUILD_OPTIONS),
        plan.file
    );
    crate::map::rewrite::splice(&mut out, &file.original.text, &replace, &plan.file);
    out
}

fn host_glue(k: &KernelPlan, indent: &str, n: &NestPlan) -> String {
    let p = format!("{indent}    ");
    let mut g = format!(
        "{indent}{{ /* stencilc map: nest {} (lines {}-{}) runs as the OpenCL kernel {} */\n",
        n.id, n.lines.0, n.lines.1, k.name
    );
    g.push_str(&format!(
        "{p}cl_kernel kernel = stencilc_cl_kernel(\"{}\");\n",
        k.name
    ));
    let mut arg = 0;
    for (a, _) in &k.arrays {
        if n.resident.contains(a) {
            g.push_str(&format!("{p}/* `{a}` is on the device already */\n"));
        } else {
            g.push_str(&format!(
                "{p}cl_mem d_{a} = stencilc_cl_to_device({a}, {});\n",
                k.bytes[a]
            ));
        }
        g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(cl_mem), &d_{a}), \"clSetKernelArg\");\n"));
        arg += 1;
    }
    for f in &k.flags {
        g.push_str(&format!(
            "{p}int h_{f} = {f};\n{p}cl_mem d_{f} = stencilc_cl_to_device(&h_{f}, sizeof(int));\n"
        ));
        g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(cl_mem), &d_{f}), \"clSetKernelArg\");\n"));
        arg += 1;
    }
    for (s, ty) in &k.scalars {
        let host_ty = if ty == "long" { "cl_long" } else { ty.as_str() };
        g.push_str(&format!("{p}{host_ty} a_{s} = ({host_ty})({s});\n"));
        g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(a_{s}), &a_{s}), \"clSetKernelArg\");\n"));
        arg += 1;
    }
    for (v, lower, _) in &k.band {
        g.push_str(&format!("{p}cl_long lower_{v} = (cl_long)({lower});\n"));
        g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(cl_long), &lower_{v}), \"clSetKernelArg\");\n"));
        arg += 1;
    }
    if !k.local.is_empty() {
        // A kernel that stages tiles runs whole work-groups and checks its counts.
        for (v, lower, upper) in &k.band {
            g.push_str(&format!(
                "{p}cl_long count_{v} = (cl_long)({upper}) - (cl_long)({lower});\n"
            ));
            g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(cl_long), &count_{v}), \"clSetKernelArg\");\n"));
            arg += 1;
        }
    }
    // Innermost loop along dimension 0, so neighbouring work-items touch neighbouring elements.
    let sizes: Vec<String> = k
        .band
        .iter()
        .rev()
        .map(|(_, lo, hi)| format!("(long)({hi}) - (long)({lo})"))
        .collect();
    g.push_str(&format!(
        "{p}long counts[{}] = {{ {} }};\n",
        sizes.len(),
        sizes.join(", ")
    ));
    g.push_str(&format!(
        "{p}size_t global[{}];\n{p}int empty = 0;\n",
        sizes.len()
    ));
    let local = if k.local.is_empty() {
        g.push_str(&format!(
            "{p}for (int d = 0; d < {}; d++) {{ empty |= counts[d] <= 0; global[d] = counts[d] > 0 ? (size_t)counts[d] : 0; }}\n",
            sizes.len()
        ));
        "NULL"
    } else {
        // Whole work-groups of the shape the kernel's tiles are laid out for.
        let shape: Vec<String> = k.local.iter().rev().map(|b| b.to_string()).collect();
        g.push_str(&format!(
            "{p}size_t local[{}] = {{ {} }};\n",
            shape.len(),
            shape.join(", ")
        ));
        g.push_str(&format!(
            "{p}for (int d = 0; d < {}; d++) {{ empty |= counts[d] <= 0; global[d] = counts[d] > 0 ? ((size_t)counts[d] + local[d] - 1) / local[d] * local[d] : 0; }}\n",
            sizes.len()
        ));
        "local"
    };
    g.push_str(&format!(
        "{p}if (!empty) stencilc_cl_check(clEnqueueNDRangeKernel(stencilc_queue, kernel, {}, NULL, global, {local}, 0, NULL, NULL), \"clEnqueueNDRangeKernel\");\n",
        sizes.len()
    ));
    for (a, written) in &k.arrays {
        if n.resident.contains(a) {
            continue;
        }
        if *written {
            g.push_str(&format!(
                "{p}stencilc_cl_from_device(d_{a}, {a}, {});\n",
                k.bytes[a]
            ));
        }
        g.push_str(&format!("{p}clReleaseMemObject(d_{a});\n"));
    }
    for f in &k.flags {
        g.push_str(&format!("{p}stencilc_cl_from_device(d_{f}, &h_{f}, sizeof(int));\n{p}{f} = h_{f};\n{p}clReleaseMemObject(d_{f});\n"));
    }
    g.push_str(&format!("{p}clReleaseKernel(kernel);\n"));
    g.push_str(&super::loop_exits(k, &p));
    g.push_str(&format!("{indent}}}\n"));
    g
}

/// The host helpers every mapped OpenCL program carries: one context, queue
/// and program for the whole run, built on first use.
const HOST_HELPERS: &str = r#"static cl_context stencilc_context;
static cl_command_queue stencilc_queue;
static cl_program stencilc_program;
static cl_device_id stencilc_device;

static void stencilc_cl_check(cl_int status, const char *what) {
    if (status != CL_SUCCESS) {
        fprintf(stderr, "stencilc map: OpenCL error %d in %s\n", (int)status, what);
        exit(1);
    }
}

static void stencilc_cl_init(void) {
    if (stencilc_context) return;
    cl_platform_id platform;
    cl_device_id device;
    cl_int status = clGetPlatformIDs(1, &platform, NULL);
    stencilc_cl_check(status, "clGetPlatformIDs (is an OpenCL platform installed?)");
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, NULL) != CL_SUCCESS)
        stencilc_cl_check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    stencilc_device = device;
    stencilc_context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    stencilc_cl_check(status, "clCreateContext");
    stencilc_queue = clCreateCommandQueue(stencilc_context, device, 0, &status);
    stencilc_cl_check(status, "clCreateCommandQueue");
    stencilc_program = clCreateProgramWithSource(stencilc_context, 1, &stencilc_kernels, NULL, &status);
    stencilc_cl_check(status, "clCreateProgramWithSource");
    if (clBuildProgram(stencilc_program, 1, &device, "@OPTIONS@", NULL, NULL) != CL_SUCCESS) {
        char log[16384];
        clGetProgramBuildInfo(stencilc_program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "stencilc map: the kernels did not build:\n%s\n", log);
        exit(1);
    }
}

static cl_kernel stencilc_cl_kernel(const char *name) {
    cl_int status;
    stencilc_cl_init();
    cl_kernel kernel = clCreateKernel(stencilc_program, name, &status);
    stencilc_cl_check(status, "clCreateKernel");
    return kernel;
}

/* A program of its own for a lifted nest's kernels (their helpers may share names). */
static cl_program stencilc_cl_build(const char *source, const char *options) {
    cl_int status;
    stencilc_cl_init();
    cl_program program = clCreateProgramWithSource(stencilc_context, 1, &source, NULL, &status);
    stencilc_cl_check(status, "clCreateProgramWithSource");
    if (clBuildProgram(program, 1, &stencilc_device, options, NULL, NULL) != CL_SUCCESS) {
        char log[16384];
        clGetProgramBuildInfo(program, stencilc_device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "stencilc map: the lifted kernels did not build:\n%s\n", log);
        exit(1);
    }
    return program;
}

static cl_kernel stencilc_cl_kernel_of(cl_program program, const char *name) {
    cl_int status;
    cl_kernel kernel = clCreateKernel(program, name, &status);
    stencilc_cl_check(status, "clCreateKernel");
    return kernel;
}

static cl_mem stencilc_cl_to_device(void *host, size_t bytes) {
    cl_int status;
    cl_mem buffer = clCreateBuffer(stencilc_context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host, &status);
    stencilc_cl_check(status, "clCreateBuffer");
    return buffer;
}

static void stencilc_cl_from_device(cl_mem buffer, void *host, size_t bytes) {
    stencilc_cl_check(clEnqueueReadBuffer(stencilc_queue, buffer, CL_TRUE, 0, bytes, host, 0, NULL, NULL), "clEnqueueReadBuffer");
}

"#;
