//! `--target cuda`: each lifted time loop (or nest, see [`super::lift`]) is
//! replaced by host code that keeps its arrays on a CUDA device across all
//! steps and launches the kernels of stencilc's CUDA back-end
//! ([`super::device`]); every other nest stays on the CPU as written (direct
//! CUDA kernels are not generated). The output is CUDA C++ for nvcc, laid
//! out as `compile -b overtile` lays out its files: the kernels under
//! `#if defined(__CUDACC__)` between marker lines (NVRTC compiles each such
//! unit as is), their declarations for other compilers, so that the host
//! part compiles with `g++` against the CUDA runtime headers.

use std::collections::BTreeMap;

use super::{device_id, FilePlan};
use crate::front::c::CFile;

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
    let mut out = format!(
        "/* Mapped by stencilc map --target cuda from {file}: {count} lifted time loop(s) or nest(s) run on a\n   CUDA GPU with stencilc's kernels, their arrays kept on the device across all steps; every\n   other nest stays on the CPU. Build with nvcc (as C++), for results identical to the original:\n     nvcc -O3 -arch=native --fmad=false --prec-div=true --prec-sqrt=true -x cu THIS_FILE -o PROGRAM\n   The kernels are compiled only by nvcc (#if defined(__CUDACC__)); the host part compiles with\n   any C++ compiler given the CUDA headers (g++ -x c++ -I$CUDA/include -c). */\n\
#include <cuda_runtime.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n{SUPPORT}\n{kernels}#line 1 \"{file}\"\n",
        file = plan.file,
        count = replace.len(),
    );
    let lines: Vec<&str> = file.original.text.split_inclusive('\n').collect();
    let mut number = 1;
    while number <= lines.len() {
        if let Some((last, glue)) = replace.get(&number) {
            out.push_str(glue);
            number = last + 1;
            out.push_str(&format!("#line {number} \"{}\"\n", plan.file));
            continue;
        }
        out.push_str(lines[number - 1]);
        number += 1;
    }
    out
}

/// The host helpers: the error check and the copies in and out.
const SUPPORT: &str = r#"static void stencilc_cuda_check(cudaError_t error, const char *what) {
    if (error != cudaSuccess) {
        fprintf(stderr, "stencilc map: %s failed: %s (%s)\n", what, cudaGetErrorName(error),
                cudaGetErrorString(error));
        exit(1);
    }
}

static void *stencilc_cuda_to_device(const void *host, size_t bytes) {
    void *device = NULL;
    stencilc_cuda_check(cudaMalloc(&device, bytes), "cudaMalloc");
    stencilc_cuda_check(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    return device;
}

static void stencilc_cuda_from_device(const void *device, void *host, size_t bytes) {
    stencilc_cuda_check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy from the device");
}
"#;
