//! `--target cuda`: each lifted time loop (or nest, see [`super::lift`]) is
//! replaced by host code that keeps its arrays on a CUDA device across all
//! steps and launches the kernels of stencilc's CUDA back-end
//! ([`super::device`]); every other mapped nest becomes a direct CUDA
//! kernel (one thread per iteration of its parallel loops, written by
//! [`super::opencl::kernel`] in the CUDA dialect, with the same memory
//! specialisation: `const __restrict__`, `__constant__` for small read-only
//! arrays) and host glue through the CUDA runtime API (copies in, launch,
//! copies back). The output is CUDA C++ for nvcc, laid
//! out as `compile -b overtile` lays out its files: the kernels under
//! `#if defined(__CUDACC__)` between marker lines (NVRTC compiles each such
//! unit as is), their declarations for other compilers, so that the host
//! part compiles with `g++` against the CUDA runtime headers.

use std::collections::BTreeMap;

use super::nest::{device_id, FilePlan, NestPlan};
use super::opencl::{mapped, KernelPlan};
use crate::front::c::CFile;

/// The id of the direct kernels' unit between the marker lines.
pub const DIRECT_UNIT: &str = "direct";

/// The line opening a lifted nest's kernels (followed by ` <id>`).
pub const KERNELS_BEGIN: &str = "// ---- stencilc kernels begin";
/// The line closing a lifted nest's kernels (followed by ` <id>`).
pub const KERNELS_END: &str = "// ---- stencilc kernels end";

/// The program for `--target cuda`.
pub fn cuda_program(file: &CFile, plan: &FilePlan) -> String {
    let mut kernels = String::new();
    let mut replace: BTreeMap<usize, (usize, String)> = BTreeMap::new();
    for n in &plan.nests {
        let Some(code) = &n.device else { continue };
        let id = device_id(&n.id);
        kernels.push_str(&format!(
            "/* The kernels of nest {} (lines {}-{}), lifted into an ir::Program: stencilc's CUDA back-end. */\n{KERNELS_BEGIN} {id}\nnamespace stencilc_{id}_kernels {{\n#if defined(__CUDACC__)\n{}#else\n/* Not nvcc: the kernels' declarations, so that the host part compiles. */\n{}#endif\n}} /* namespace stencilc_{id}_kernels */\n{KERNELS_END} {id}\n\n",
            n.id, n.lines.0, n.lines.1, code.kernels, code.declarations
        ));
        replace.insert(n.lines.0, (n.lines.1, code.host.clone()));
    }
    let mut direct = Vec::new();
    mapped(&plan.nests, &mut direct);
    if !direct.is_empty() {
        let mut sources = String::new();
        for f in super::opencl::unique_functions(&direct) {
            sources.push_str(&f.source);
            sources.push('\n');
        }
        let mut declarations = String::new();
        for n in &direct {
            let Some(k) = &n.kernel else { continue };
            sources.push_str(&k.source);
            sources.push('\n');
            for c in &k.constants {
                declarations.push_str(&format!("static {} {}[{}];\n", c.ty, c.symbol, c.elems));
            }
            declarations.push_str(&k.declaration);
            let indent: String = file
                .original_line(n.lines.0)
                .chars()
                .take_while(|c| c.is_whitespace())
                .collect();
            replace.insert(n.lines.0, (n.lines.1, host_glue(k, &indent, n)));
        }
        kernels.push_str(&format!(
            "/* The direct kernels: one thread per iteration of a nest's parallel loops. */\n{KERNELS_BEGIN} {DIRECT_UNIT}\nnamespace stencilc_direct {{\n#if defined(__CUDACC__)\n{sources}#else\n/* Not nvcc: the kernels' declarations, so that the host part compiles. */\n{declarations}#endif\n}} /* namespace stencilc_direct */\n{KERNELS_END} {DIRECT_UNIT}\n\n"
        ));
    }
    for n in super::resident::iterates(&plan.nests) {
        let lines = super::resident::wrap_loop(
            n,
            file,
            &|a| {
                format!(
                    "void *d_{a} = stencilc_cuda_to_device({a}, {});",
                    super::opencl::array_bytes(n, a)
                )
            },
            &|a, written| {
                let back = if written {
                    format!(
                        "stencilc_cuda_from_device(d_{a}, {a}, {}); ",
                        super::opencl::array_bytes(n, a)
                    )
                } else {
                    String::new()
                };
                format!("{back}cudaFree(d_{a});")
            },
            "",
        );
        for (line, text) in lines {
            replace.insert(line, (line, text));
        }
    }
    let mut out = format!(
        "/* Mapped by stencilc map --target cuda from {file}: {count} lifted time loop(s) or nest(s) run on a\n   CUDA GPU with stencilc's kernels, their arrays kept on the device across all steps;\n   {direct} other nest(s) as direct CUDA kernels; the rest stays on the CPU. Build with nvcc (as C++),\n   for results identical to the original:\n     nvcc -O3 -arch=native --fmad=false --prec-div=true --prec-sqrt=true -x cu THIS_FILE -o PROGRAM\n   The kernels are compiled only by nvcc (#if defined(__CUDACC__)); the host part compiles with\n   any C++ compiler given the CUDA headers (g++ -x c++ -I$CUDA/include -c). */\n\
#include <cuda_runtime.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n{restrict}{SUPPORT}\n{kernels}#line 1 \"{file}\"\n",
        restrict = if mentions_restrict(&file.preprocessed) { RESTRICT_FOR_CXX } else { "" },
        file = plan.file,
        count = plan.nests.iter().filter(|n| n.device.is_some()).count(),
        direct = direct.len(),
    );
    super::rewrite::splice(&mut out, &file.original.text, &replace, &plan.file);
    out
}

/// C99's `restrict` is no C++ keyword, and C++ has no qualifier inside an
/// array parameter's brackets (`double a[restrict N]`): the host part, C++,
/// drops it (the loops it qualified run in stencilc's kernels).
const RESTRICT_FOR_CXX: &str = "/* C99's `restrict` is not C++ (nor `a[restrict N]` in a parameter): the host part drops it. */\n#if defined(__cplusplus) && !defined(restrict)\n#define restrict\n#endif\n\n";

/// Whether C text uses the word `restrict` (directly or through a macro's
/// definition).
fn mentions_restrict(text: &str) -> bool {
    text.match_indices("restrict").any(|(at, w)| {
        let before = text[..at].chars().next_back();
        let after = text[at + w.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

/// The host code replacing a nest that runs as a direct kernel.
fn host_glue(k: &KernelPlan, indent: &str, n: &NestPlan) -> String {
    let p = format!("{indent}    ");
    let mut g = format!(
        "{indent}{{ /* stencilc map: nest {} (lines {}-{}) runs as the CUDA kernel {} */\n",
        n.id, n.lines.0, n.lines.1, k.name
    );
    let mut args = Vec::new();
    for (a, _) in &k.arrays {
        let resident = n.resident.contains(a);
        if let Some(c) = k.constants.iter().find(|c| &c.array == a) {
            // On the device already, the host copy may be stale: copy from there.
            let (from, kind) = if resident {
                (format!("d_{a}"), ", 0, cudaMemcpyDeviceToDevice")
            } else {
                (a.clone(), "")
            };
            g.push_str(&format!(
                "{p}stencilc_cuda_check(cudaMemcpyToSymbol(stencilc_direct::{}, {from}, {}{kind}), \"cudaMemcpyToSymbol({a})\");\n",
                c.symbol, k.bytes[a]
            ));
            continue;
        }
        if resident {
            g.push_str(&format!("{p}/* `{a}` is on the device already */\n"));
        } else {
            g.push_str(&format!(
                "{p}void *d_{a} = stencilc_cuda_to_device({a}, {});\n",
                k.bytes[a]
            ));
        }
        args.push(format!("&d_{a}"));
    }
    for f in &k.flags {
        g.push_str(&format!(
            "{p}int h_{f} = {f};\n{p}void *d_{f} = stencilc_cuda_to_device(&h_{f}, sizeof(int));\n"
        ));
        args.push(format!("&d_{f}"));
    }
    for (s, ty) in &k.scalars {
        g.push_str(&format!("{p}{ty} a_{s} = ({ty})({s});\n"));
        args.push(format!("&a_{s}"));
    }
    for (v, lower, _) in &k.band {
        g.push_str(&format!("{p}long lower_{v} = (long)({lower});\n"));
        args.push(format!("&lower_{v}"));
    }
    for (v, lower, upper) in &k.band {
        g.push_str(&format!(
            "{p}long count_{v} = (long)({upper}) - (long)({lower});\n"
        ));
        args.push(format!("&count_{v}"));
    }
    // The innermost loop along x, so neighbouring threads touch neighbouring elements.
    let block: &[u32] = match k.band.len() {
        1 => &[256],
        2 => &[32, 8],
        _ => &[32, 4, 2],
    };
    let mut grid = Vec::new();
    let mut threads = Vec::new();
    for (d, (v, _, _)) in k.band.iter().rev().enumerate() {
        grid.push(format!(
            "(unsigned)((count_{v} + {0}) / {1})",
            block[d] - 1,
            block[d]
        ));
        threads.push(block[d].to_string());
    }
    while grid.len() < 3 {
        grid.push("1".into());
        threads.push("1".into());
    }
    let nonempty: Vec<String> = k
        .band
        .iter()
        .map(|(v, _, _)| format!("count_{v} > 0"))
        .collect();
    g.push_str(&format!(
        "{p}if ({}) {{\n{p}    void *args[] = {{ {} }};\n{p}    stencilc_cuda_check(cudaLaunchKernel((const void *)stencilc_direct::{}, dim3({}), dim3({}), args, 0, 0), \"cudaLaunchKernel({})\");\n{p}}}\n",
        nonempty.join(" && "),
        args.join(", "),
        k.name,
        grid.join(", "),
        threads.join(", "),
        k.name
    ));
    for (a, written) in &k.arrays {
        if k.constants.iter().any(|c| &c.array == a) || n.resident.contains(a) {
            continue;
        }
        if *written {
            g.push_str(&format!(
                "{p}stencilc_cuda_from_device(d_{a}, {a}, {});\n",
                k.bytes[a]
            ));
        }
        g.push_str(&format!("{p}cudaFree(d_{a});\n"));
    }
    for f in &k.flags {
        g.push_str(&format!(
            "{p}stencilc_cuda_from_device(d_{f}, &h_{f}, sizeof(int));\n{p}{f} = h_{f};\n{p}cudaFree(d_{f});\n"
        ));
    }
    g.push_str(&super::opencl::loop_exits(k, &p));
    g.push_str(&format!("{indent}}}\n"));
    g
}

/// The host helpers: the error check and the copies in and out.
const SUPPORT: &str = r#"static inline void stencilc_cuda_check(cudaError_t error, const char *what) {
    if (error != cudaSuccess) {
        fprintf(stderr, "stencilc map: %s failed: %s (%s)\n", what, cudaGetErrorName(error),
                cudaGetErrorString(error));
        exit(1);
    }
}

static inline void *stencilc_cuda_to_device(const void *host, size_t bytes) {
    void *device = NULL;
    stencilc_cuda_check(cudaMalloc(&device, bytes), "cudaMalloc");
    stencilc_cuda_check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    return device;
}

static inline void stencilc_cuda_from_device(const void *device, void *host, size_t bytes) {
    stencilc_cuda_check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from the device");
}
"#;
