//! `stencilc compile -b overtile` (sdslc's GPU source-to-source path) on the
//! hosts of `examples/embedded/`: the generated part is snapshot-tested, its
//! kernels compile alone with NVRTC, and its host part compiles with `g++`
//! against the CUDA runtime headers (`cudart`: the PyPI wheel
//! `nvidia-cuda-runtime-cu12`, whose `cuda_runtime.h` includes the `crt/`
//! headers of the `nvidia-cuda-nvcc-cu12` wheel that CI installs for ptxas).
//! No GPU and no nvcc here: running the output is owed on a GPU machine
//! ([`gpu`]); `time:` in the pragma in [`time`].

mod gpu;
mod time;

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use stencilc::back::c::overtile::{self, OvertileOptions, KERNELS_BEGIN, KERNELS_END};
use stencilc::exec::cuda::nvrtc;
use stencilc::source::SourceFile;

/// The hosts of `examples/embedded/`, by file name.
const HOSTS: &[&str] = &["rician3d_host.c", "jacobi2d_host.c", "blur_then_heat.cpp"];

fn host_source(name: &str) -> std::sync::Arc<SourceFile> {
    let path = common::examples_dir().join("embedded").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    // A name that does not depend on where the repository is.
    SourceFile::new(format!("examples/embedded/{name}"), text)
}

fn generate(name: &str, options: OvertileOptions) -> String {
    let host = host_source(name);
    let regions = stencilc::front::parse_regions(host.clone())
        .and_then(stencilc::analysis::checked_regions)
        .unwrap_or_else(|d| panic!("{d}"));
    stencilc::driver::overtile::rewrite_host_for_cuda(&host, &regions, options)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .text
}

/// The generated part: everything before the host's own text.
fn generated_part(output: &str) -> &str {
    &output[..output.find("#line 1 ").expect("a #line before the host")]
}

/// Each region's kernels, as nvcc sees them (between the markers, the
/// `#if defined(__CUDACC__)` branch).
fn kernel_units(output: &str) -> Vec<String> {
    let mut units = Vec::new();
    let mut rest = output;
    while let Some(start) = rest.find(KERNELS_BEGIN) {
        let end = rest[start..].find(KERNELS_END).expect("an end marker") + start;
        let block = &rest[start..end];
        let body = &block[block
            .find("#if defined(__CUDACC__)\n")
            .expect("the nvcc branch")..];
        let body = &body[body.find('\n').unwrap() + 1..body.rfind("#else").expect("#else")];
        units.push(body.to_string());
        rest = &rest[end + KERNELS_END.len()..];
    }
    units
}

#[test]
fn generated_part_for_the_rician_and_jacobi_hosts() {
    for name in ["rician3d_host.c", "jacobi2d_host.c"] {
        let output = generate(name, OvertileOptions::default());
        let stem = name.split('.').next().unwrap();
        insta::assert_snapshot!(format!("overtile_{stem}"), generated_part(&output));
    }
}

#[test]
fn launches_go_through_the_runtime_api_and_kernels_are_nvcc_only() {
    let output = generate("rician3d_host.c", OvertileOptions::default());
    assert!(
        output.contains("cudaLaunchKernel("),
        "no runtime-API launch"
    );
    assert!(!output.contains("<<<"), "a launch only nvcc parses");
    // The region's call line is the affine-c path's, and the wrapper it calls
    // is defined with that signature.
    assert!(output.contains("int sdsl_return_0 = rician3d_host_sdsl(dim0, dim1, dim2, sigma, lambda, (double *)(U), STENCILC_HOST_BYTES(U, "));
    assert!(output.contains("int rician3d_host_sdsl("));
    // Time levels rotate by swapping device pointers.
    assert!(output.contains("dev->U[0] = dev->U[1]; dev->U[1] = oldest;"));
    // The check's reduction is read back as one scalar.
    assert!(output.contains("cudaMemcpy(&max_diff, dev->max_diff_result, sizeof(double)"));
    assert_eq!(kernel_units(&output).len(), 1);
}

#[test]
fn two_regions_keep_their_kernels_apart_and_extern_c_applies() {
    let output = generate(
        "blur_then_heat.cpp",
        OvertileOptions {
            extern_c: true,
            ..OvertileOptions::default()
        },
    );
    let units = kernel_units(&output);
    assert_eq!(units.len(), 2);
    assert_eq!(output.matches("extern \"C\"\nint ").count(), 2, "{output}");
    assert!(output.contains("sdsl_return_1"));
}

#[test]
fn kernels_of_every_host_compile_alone_with_nvrtc() {
    if !common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        return;
    }
    for fma in [false, true] {
        for name in HOSTS {
            let output = generate(
                name,
                OvertileOptions {
                    fma,
                    ..OvertileOptions::default()
                },
            );
            let options = if fma {
                stencilc::back::cuda::NVRTC_FMA_OPTIONS
            } else {
                stencilc::back::cuda::NVRTC_OPTIONS
            };
            for unit in kernel_units(&output) {
                let compiled = nvrtc::compile_source(&unit, "sm_90", options, &[])
                    .unwrap_or_else(|e| panic!("{name}: {e}\n{unit}"));
                assert!(
                    compiled.ptx.contains(".entry"),
                    "{name}: no kernel in the PTX"
                );
            }
        }
    }
}

/// The folders holding `cuda_runtime.h` (the runtime wheel) and `crt/host_config.h`
/// (the nvcc wheel), as `.ci/run` installs them under `STENCILC_CI_CACHE`, or
/// under `CUDA_HOME`/`/usr/local/cuda` where a toolkit is installed.
fn cuda_include_dirs() -> Result<Vec<PathBuf>, String> {
    let mut candidates: Vec<Vec<PathBuf>> = Vec::new();
    if let Some(cache) = std::env::var_os("STENCILC_CI_CACHE") {
        let cache = PathBuf::from(cache);
        candidates.push(vec![
            cache.join("cudart-12.8.90/nvidia/cuda_runtime/include"),
            cache.join("nvcc-12.8.93/nvidia/cuda_nvcc/include"),
        ]);
    }
    for root in [
        std::env::var_os("CUDA_HOME").map(PathBuf::from),
        Some("/usr/local/cuda".into()),
    ]
    .into_iter()
    .flatten()
    {
        candidates.push(vec![root.join("include")]);
    }
    candidates
        .into_iter()
        .find(|dirs| {
            dirs.iter().any(|d| d.join("cuda_runtime.h").is_file())
                && dirs.iter().any(|d| d.join("crt/host_config.h").is_file())
        })
        .ok_or_else(|| {
            "no cuda_runtime.h with crt/host_config.h under $STENCILC_CI_CACHE (the wheels \
             nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12, as .ci/run installs them), \
             $CUDA_HOME or /usr/local/cuda"
                .to_string()
        })
}

fn gxx_available() -> Result<(), String> {
    let output = Command::new("g++")
        .arg("--version")
        .output()
        .map_err(|e| format!("`g++ --version`: {e}"))?;
    output
        .status
        .success()
        .then_some(())
        .ok_or_else(|| "`g++ --version` failed".to_string())
}

fn stencilc_compile(input: &Path, output: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .arg("compile")
        .args(["-b", "overtile"])
        .args(args)
        .arg("-f")
        .arg(input)
        .arg("-o")
        .arg(output)
        .output()
        .expect("stencilc runs")
}

#[test]
fn host_part_of_every_host_compiles_with_gxx_against_the_cuda_runtime_headers() {
    let probe = gxx_available().and_then(|()| cuda_include_dirs().map(drop));
    if !common::runtime_available("cudart", probe) {
        return;
    }
    let includes = cuda_include_dirs().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for name in HOSTS {
        let input = common::examples_dir().join("embedded").join(name);
        let cu = dir.path().join(format!("{name}.cu"));
        let out = stencilc_compile(&input, &cu, &["-x"]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut gxx = Command::new("g++");
        gxx.args([
            "-x",
            "c++",
            "-std=c++11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
        ]);
        for include in &includes {
            gxx.arg("-I").arg(include);
        }
        let built = gxx
            .arg(&cu)
            .arg("-o")
            .arg(dir.path().join(format!("{name}.o")))
            .output()
            .expect("g++ runs");
        assert!(
            built.status.success(),
            "{name}: g++ refused the host part:\n{}",
            String::from_utf8_lossy(&built.stderr)
        );
    }
}

#[test]
fn legacy_gpu_is_accepted_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let input = common::examples_dir().join("embedded/jacobi2d_host.c");
    let out = stencilc_compile(&input, &dir.path().join("out.cu"), &["-l"]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--legacy-gpu changes nothing"), "{stderr}");
    let long = stencilc_compile(&input, &dir.path().join("out2.cu"), &["--legacy-gpu", "-v"]);
    assert!(long.status.success());
    let stderr = String::from_utf8_lossy(&long.stderr);
    assert!(
        stderr.contains("nvcc -O3 -arch=native --fmad=false"),
        "{stderr}"
    );
    assert!(stderr.contains("jacobi2d_host_j5p"), "{stderr}");
}

/// A host whose pragma gives `block:` through `BX`, a host variable.
fn host_with_block(dir: &Path, block: &str) -> PathBuf {
    let text = format!(
        "int main(void) {{
    int BX = 8;
    int dim0 = 16, dim1 = 16;
    float a[16][16] = {{{{0}}}};
#pragma sdsl begin block:{block} tile:1,1
int dim0;
int dim1;
grid g[dim1][dim0];
float griddata a on g at 0,1;
iterate 2 {{
    stencil s {{
        [1:dim1-2][1:dim0-2] : [1]a[0][0] = 0.25f*([0]a[-1][0] + [0]a[1][0] + [0]a[0][-1] + [0]a[0][1]);
    }}
}}
#pragma sdsl end
    return sdsl_return_0;
}}
"
    );
    let path = dir.join("host.c");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn pragma_blocks_are_compiled_in_so_they_need_values_and_must_fit_a_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.cu");
    // A host identifier: located error, then accepted with --set.
    let host = host_with_block(dir.path(), "BX*2,8");
    let out = stencilc_compile(&host, &out_path, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("host.c:5:26"), "{stderr}");
    assert!(stderr.contains("`BX`"), "{stderr}");
    assert!(!out_path.exists());
    let out = stencilc_compile(&host, &out_path, &["--set", "BX=16"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(text.contains("dim3(32, 8, 1)"), "the block is 32 x 8");

    // 64 x 32 = 2048 threads: more than a CUDA block holds.
    std::fs::remove_file(&out_path).unwrap();
    let host = host_with_block(dir.path(), "64,32");
    let out = stencilc_compile(&host, &out_path, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("2048 threads") && stderr.contains("block:"),
        "{stderr}"
    );
    assert!(!out_path.exists());
}

/// `program` (an `.sdsl` file's text) as the one region of a C++ host that
/// declares every parameter and griddata the region binds.
fn host_around(sdsl: &Path) -> String {
    host_around_with(sdsl, "")
}

/// [`host_around`] with `options` after `#pragma sdsl begin`.
fn host_around_with(sdsl: &Path, options: &str) -> String {
    let text = std::fs::read_to_string(sdsl).unwrap();
    let program =
        stencilc::front::parse_program(SourceFile::new(sdsl.display().to_string(), text.clone()))
            .and_then(stencilc::analysis::checked)
            .unwrap_or_else(|d| panic!("{d}"));
    let mut host = String::from("#include <stddef.h>\n\nint main(void) {\n");
    for param in &program.params {
        host.push_str(&format!("    {} {} = 1;\n", param.ty.name(), param.name));
    }
    for field in &program.fields {
        host.push_str(&format!(
            "    {} *{} = NULL;\n",
            field.ty.name(),
            field.name
        ));
    }
    host.push_str(&format!("#pragma sdsl begin {options}\n"));
    host.push_str(&text);
    host.push_str("\n#pragma sdsl end\n    return sdsl_return_0;\n}\n");
    host
}

/// Every example and bench program as a region: boundary modes, coefficient
/// tables, three time levels, `+` reductions in kernels of their own, checks
/// every K. Its kernels compile with NVRTC and its host part with g++.
#[test]
fn every_example_and_bench_program_as_a_region_compiles() {
    let nvrtc_here = common::runtime_available("nvrtc", nvrtc::load().map(|_| ()));
    let probe = gxx_available().and_then(|()| cuda_include_dirs().map(drop));
    let gxx_here = common::runtime_available("cudart", probe);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut programs: Vec<PathBuf> = Vec::new();
    for dir in [root.join("examples"), root.join("bench/programs")] {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "sdsl") {
                programs.push(path);
            }
        }
    }
    programs.sort();
    assert!(programs.len() >= 15, "programs found: {}", programs.len());
    let dir = tempfile::tempdir().unwrap();
    for sdsl in &programs {
        let stem = sdsl.file_stem().unwrap().to_string_lossy().into_owned();
        let host = dir.path().join(format!("{stem}_host.cpp"));
        std::fs::write(&host, host_around(sdsl)).unwrap();
        let cu = dir.path().join(format!("{stem}_host.cu"));
        let out = stencilc_compile(&host, &cu, &[]);
        assert!(
            out.status.success(),
            "{stem}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let output = std::fs::read_to_string(&cu).unwrap();
        assert!(output.contains("cudaLaunchKernel("), "{stem}");
        kernels_and_host_part_compile(&stem, &output, &cu, dir.path(), nvrtc_here, gxx_here);
    }
}

/// The kernels of `output` (written at `cu`) compile with NVRTC when
/// `nvrtc_here`, and its host part with `g++ -Wall -Wextra -Werror` when
/// `gxx_here`.
fn kernels_and_host_part_compile(
    stem: &str,
    output: &str,
    cu: &Path,
    dir: &Path,
    nvrtc_here: bool,
    gxx_here: bool,
) {
    if nvrtc_here {
        for unit in kernel_units(output) {
            nvrtc::compile_source(&unit, "sm_90", stencilc::back::cuda::NVRTC_OPTIONS, &[])
                .unwrap_or_else(|e| panic!("{stem}: {e}\n{unit}"));
        }
    }
    if gxx_here {
        let mut gxx = Command::new("g++");
        gxx.args([
            "-x",
            "c++",
            "-std=c++11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-c",
        ]);
        for include in cuda_include_dirs().unwrap() {
            gxx.arg("-I").arg(include);
        }
        let built = gxx
            .arg(cu)
            .arg("-o")
            .arg(dir.join(format!("{stem}.o")))
            .output()
            .expect("g++ runs");
        assert!(
            built.status.success(),
            "{stem}: g++ refused the host part:\n{}",
            String::from_utf8_lossy(&built.stderr)
        );
    }
}

#[test]
fn index64_lifts_the_limit_of_2_31_points() {
    let dir = tempfile::tempdir().unwrap();
    let input = common::examples_dir().join("embedded/jacobi2d_host.c");
    let narrow = dir.path().join("narrow.cu");
    let wide = dir.path().join("wide.cu");
    assert!(stencilc_compile(&input, &narrow, &[]).status.success());
    assert!(stencilc_compile(&input, &wide, &["--index64"])
        .status
        .success());
    let narrow = std::fs::read_to_string(narrow).unwrap();
    let wide = std::fs::read_to_string(wide).unwrap();
    assert!(narrow.contains("and 2147483647 in all") && narrow.contains("--index64"));
    assert!(!wide.contains("and 2147483647 in all"));
    assert!(wide.contains("long long"), "64-bit indices in the kernels");
}

#[test]
fn cuda_failures_name_the_region_and_the_call() {
    let output = generate("rician3d_host.c", OvertileOptions::default());
    assert!(output.contains(
        "const char *where = \"region 0 (line 132 of examples/embedded/rician3d_host.c)\";"
    ));
    // Every runtime call goes through the check, which stringifies the call.
    assert!(output.contains("STENCILC_CUDA(where, cudaMalloc((void **)&dev->U[0]"));
    assert!(output.contains("STENCILC_CUDA(where, cudaDeviceSynchronize());"));
    assert!(output.contains("if (gs_count > 0) STENCILC_CUDA(where, launch_rician3d_host_gs("));
    assert!(output.contains("\"stencilc: %s: %s failed: %s (%s)\\n\""));
    assert!(output.contains("return error == cudaErrorMemoryAllocation ? 3 : 6;"));
}

#[test]
fn fma_changes_the_advised_nvcc_options() {
    let plain = generate("jacobi2d_host.c", OvertileOptions::default());
    let fma = generate(
        "jacobi2d_host.c",
        OvertileOptions {
            fma: true,
            ..OvertileOptions::default()
        },
    );
    assert!(plain.contains("--fmad=false") && !plain.contains("--fmad=true"));
    assert!(fma.contains("--fmad=true") && fma.contains("last bits"));
}
