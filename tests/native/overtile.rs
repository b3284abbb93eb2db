//! `stencilc compile -b overtile` (sdslc's GPU source-to-source path) on the
//! hosts of `examples/embedded/`: the generated part is snapshot-tested, its
//! kernels compile alone with NVRTC, and its host part compiles with `g++`
//! against the CUDA runtime headers (`cudart`: the PyPI wheel
//! `nvidia-cuda-runtime-cu12`, whose `cuda_runtime.h` includes the `crt/`
//! headers of the `nvidia-cuda-nvcc-cu12` wheel that CI installs for ptxas).
//! No GPU and no nvcc here: running the output is owed on a GPU machine.

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
    overtile::rewrite_host_for_cuda(&host, &regions, options)
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
    assert!(output.contains("int sdsl_return_0 = rician3d_host_sdsl(dim0, dim1, dim2, sigma, lambda, (double *)(U), sizeof(U)"));
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

/// Whether nvcc and a GPU are here (the GPU machine), for the `gpu_` tests.
fn nvcc_and_gpu() -> Result<(), String> {
    let nvcc = Command::new("nvcc")
        .arg("--version")
        .output()
        .map_err(|e| format!("`nvcc --version`: {e}"))?;
    if !nvcc.status.success() {
        return Err("`nvcc --version` failed".into());
    }
    stencilc::exec::cuda::probe()
        .map(drop)
        .map_err(|e| e.to_string())
}

/// Builds `host` with `-b overtile` and nvcc, runs it; its exit code and stdout.
fn run_on_gpu(dir: &Path, host: &Path, defines: &[&str]) -> (i32, String) {
    let cu = dir.join("out.cu");
    let out = stencilc_compile(host, &cu, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = dir.join("gpu_program");
    let built = Command::new("nvcc")
        .args(["-O3", "-arch=native"])
        .args(overtile::nvcc_options(false).split(' '))
        .args(defines)
        .arg(&cu)
        .arg("-o")
        .arg(&exe)
        .output()
        .expect("nvcc runs");
    assert!(
        built.status.success(),
        "nvcc refused the output:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = Command::new(&exe).output().expect("the program runs");
    (
        ran.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&ran.stdout).into_owned() + &String::from_utf8_lossy(&ran.stderr),
    )
}

/// The guide's figure 7.8 driver: the region on the GPU against the C
/// reference of figure 7.1 (the driver exits 1 past 1e-12).
#[test]
#[ignore = "needs nvcc and a GPU: cargo test --test native -- --ignored gpu_overtile"]
fn gpu_overtile_rician_driver_matches_the_c_reference() {
    if !common::runtime_available("gpu", nvcc_and_gpu()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = common::examples_dir().join("embedded/rician3d_host.c");
    for size in ["-DDIM=24", "-DDIM=37", "-DDIM=128"] {
        let (code, stdout) = run_on_gpu(dir.path(), &host, &[size]);
        assert_eq!(code, 0, "{size}: {stdout}");
        assert!(stdout.contains("max abs difference"), "{stdout}");
    }
}

/// Jacobi (figure 4.1) on the GPU prints the checksum the affine-c build prints.
#[test]
#[ignore = "needs nvcc and a GPU: cargo test --test native -- --ignored gpu_overtile"]
fn gpu_overtile_jacobi_prints_the_affine_c_checksum() {
    if !common::runtime_available("gpu", nvcc_and_gpu()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = common::examples_dir().join("embedded/jacobi2d_host.c");
    gpu_matches_affine_c(dir.path(), &host, "-DSIZE=77");
}

/// `host` built with `-b overtile` and nvcc prints what its affine-c build
/// prints, both compiled with `size` (`-DSIZE=N`).
fn gpu_matches_affine_c(dir: &Path, host: &Path, size: &str) {
    let (code, gpu) = run_on_gpu(dir, host, &[size]);
    assert_eq!(code, 0, "{gpu}");
    let c = dir.join("out.c");
    let out = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(["compile", "-f"])
        .arg(host)
        .arg("-o")
        .arg(&c)
        .output()
        .unwrap();
    assert!(out.status.success());
    let exe = dir.join("cpu_program");
    let built = Command::new("gcc")
        .args(["-O2", "-ffp-contract=off", "-fwrapv", size])
        .arg(&c)
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let cpu = Command::new(&exe).output().unwrap();
    assert_eq!(gpu.trim(), String::from_utf8_lossy(&cpu.stdout).trim());
}

/// `examples/<stem>.sdsl` as a region whose pragma asks for `time:3`, written
/// in `dir`; the output and `stencilc`'s stderr.
fn time_tiled_region(dir: &Path, stem: &str) -> (String, String, PathBuf) {
    let sdsl = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(format!("{stem}.sdsl"));
    let host = dir.join(format!("{stem}_time.cpp"));
    std::fs::write(
        &host,
        host_around_with(&sdsl, "gpu(block:16,8 tile:1,1 time:3)"),
    )
    .unwrap();
    let cu = dir.join(format!("{stem}_time.cu"));
    let out = stencilc_compile(&host, &cu, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stem}: {stderr}");
    (std::fs::read_to_string(&cu).unwrap(), stderr, cu)
}

/// The part of the run function from the iteration count to the final
/// synchronisation: the launch loop.
fn launch_loop(output: &str) -> &str {
    let start = output.find("const long max_iters").expect("an iterate");
    let start = output[..start].rfind('\n').map_or(0, |i| i + 1);
    let end = output[start..]
        .find("    STENCILC_CUDA(where, cudaDeviceSynchronize")
        .expect("a synchronisation")
        + start;
    &output[start..end]
}

/// `time:3` makes the host code launch the time-tiled kernel as `run` does
/// (`exec::host_plan::run`, checked against the interpreter on PoCL for the
/// same programs in `tests/gpu/opencl_time_tile.rs`): up to 3 iterations per
/// launch, never past a checked one, the levels swapped with their shadows,
/// then per iteration the reductions when due, the check and the rotation.
#[test]
fn time_3_in_the_pragma_runs_the_time_tiled_launch_loop() {
    let nvrtc_here = common::runtime_available("nvrtc", nvrtc::load().map(|_| ()));
    let probe = gxx_available().and_then(|()| cuda_include_dirs().map(drop));
    let gxx_here = common::runtime_available("cudart", probe);
    let dir = tempfile::tempdir().unwrap();

    // Jacobi: a max reduction checked every 4 iterations.
    let (output, stderr, cu) = time_tiled_region(dir.path(), "jacobi2d");
    assert!(
        !stderr.contains("note:"),
        "time-tiled, nothing to note: {stderr}"
    );
    let body = launch_loop(&output);
    assert!(body.contains("long done = 0;\n    while (done < max_iters) {"));
    assert!(body.contains("const long steps = time_tile_steps(done, max_iters, check_every, 3);"));
    assert_eq!(
        body.matches("launch_jacobi2d_time_jacobi_2d_time_tile(")
            .count(),
        1
    );
    assert!(body.contains("dev->a_shadow[0], dev->a_shadow[1], dev->a[0], dev->a[1],"));
    assert!(body.contains("(int)steps, (int)g_n0"));
    assert!(body.contains("dev->a[held] = dev->a_shadow[held]; dev->a_shadow[held] = swapped;"));
    assert!(body.contains("for (long iter = done + 1; iter <= done + steps; iter++) {"));
    assert!(body.contains("const int due = iter % check_every == 0;"));
    assert!(body.contains("            stop = due && (max_diff < ((double)1e-5f)) != 0;"));
    assert_eq!(
        body.matches("if (stop) break;").count(),
        2,
        "inner and outer loop"
    );
    assert!(body.contains("done += steps;"));
    // The per-stencil kernel is neither sized nor launched.
    assert!(
        !output.contains("jacobi_2d_count")
            && !output.contains("launch_jacobi2d_time_jacobi_2d_part")
    );
    assert!(output.contains("cudaMalloc((void **)&dev->a_shadow[1]"));
    assert!(output.contains("cudaFree(buffers.a_shadow[1]);"));
    let shadows = &output[output.find("struct Buffers {").unwrap()..];
    let shadows = &shadows[..shadows.find("};").unwrap() + 2];
    let helper = &output[output.find("/* Iterations the next time-tiled").unwrap()..];
    let helper = &helper[..helper.find("\n}\n").unwrap() + 2];
    insta::assert_snapshot!(
        "overtile_time_tiled_jacobi_loop",
        format!("{shadows}\n\n{helper}\n\n{body}")
    );
    kernels_and_host_part_compile("jacobi2d", &output, &cu, dir.path(), nvrtc_here, gxx_here);

    // Wave: three time levels, a reduction read only after the last iteration.
    let (output, _, cu) = time_tiled_region(dir.path(), "wave2d");
    let body = launch_loop(&output);
    assert!(body.contains("time_tile_steps(done, max_iters, 0, 3);"));
    assert!(body.contains("dev->u_shadow[0], dev->u_shadow[1], dev->u_shadow[2],"));
    assert!(body.contains("for (int held = 0; held < 3; held++) {"));
    assert!(body.contains("const int due = iter == max_iters;"));
    kernels_and_host_part_compile("wave2d", &output, &cu, dir.path(), nvrtc_here, gxx_here);
}

/// What cannot be time-tiled is emitted untiled, with the note `run` gives
/// (the construct named); the pragma's `time:` needs a value at compile time.
#[test]
fn time_that_cannot_apply_is_noted_and_the_region_runs_untiled() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out.cu");
    // time:10 with the pragma's 64 x 64 points per block: too much shared memory.
    let input = common::examples_dir().join("embedded/jacobi2d_host.c");
    let out = stencilc_compile(&input, &out_path, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "note: region 0: `jacobi2d_host` runs untiled in time (one launch per iteration): \
             its tile of 84x84 cells"
        ),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(!text.contains("_time_tile") && !text.contains("_shadow"));
    // 64-bit indices: the time-tiled kernel indexes with int.
    let sdsl = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/jacobi2d.sdsl");
    let host = dir.path().join("wide.cpp");
    std::fs::write(&host, host_around_with(&sdsl, "gpu(block:16,8 time:3)")).unwrap();
    let out = stencilc_compile(&host, &out_path, &["--index64"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "runs untiled in time (one launch per iteration): its grid needs 64-bit indices"
        ),
        "{stderr}"
    );
    // A host identifier: located error, then accepted with --set.
    let host = host_with_block(dir.path(), "16,8 time:TT");
    let out = stencilc_compile(&host, &out_path, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("`TT`") && stderr.contains("--set TT=VALUE"),
        "{stderr}"
    );
    let out = stencilc_compile(&host, &out_path, &["--set", "TT=2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(text.contains("time_tile_steps(done, max_iters, 0, 2);"));
}

/// Jacobi (figure 4.1) with `time:3` on the GPU prints the checksum of the
/// affine-c build (bit-identical to the interpreter): 1000 iterations in
/// launches of 3, the last of 1.
#[test]
#[ignore = "needs nvcc and a GPU: cargo test --test native -- --ignored gpu_overtile"]
fn gpu_overtile_time_jacobi_prints_the_affine_c_checksum() {
    if !common::runtime_available("gpu", nvcc_and_gpu()) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let original = common::examples_dir().join("embedded/jacobi2d_host.c");
    let text = std::fs::read_to_string(original).unwrap().replace(
        "gpu(block:64,8 tile:1,8 time:10)",
        "gpu(block:32,8 tile:1,2 time:3)",
    );
    assert!(text.contains("time:3"));
    let host = dir.path().join("jacobi2d_time_host.c");
    std::fs::write(&host, text).unwrap();
    let cu = dir.path().join("check.cu");
    let out = stencilc_compile(&host, &cu, &[]);
    assert!(
        std::fs::read_to_string(&cu)
            .unwrap()
            .contains("_time_tile("),
        "{out:?}"
    );
    gpu_matches_affine_c(dir.path(), &host, "-DSIZE=77");
    gpu_matches_affine_c(dir.path(), &host, "-DSIZE=130");
}

/// Without `time:` in the pragma, the model chooses the time-tile size as
/// `run` does when `--set` gives every parameter a value (`-v` says why).
#[test]
fn without_time_the_model_chooses_when_every_parameter_has_a_value() {
    let dir = tempfile::tempdir().unwrap();
    let original = common::examples_dir().join("embedded/jacobi2d_host.c");
    let text = std::fs::read_to_string(original).unwrap().replace(
        "gpu(block:64,8 tile:1,8 time:10)",
        "gpu(block:32,8 tile:1,2)",
    );
    let host = dir.path().join("host.c");
    std::fs::write(&host, text).unwrap();
    let out_path = dir.path().join("out.cu");
    let out = stencilc_compile(&host, &out_path, &["-v"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("the model cannot choose one; untiled"),
        "{stderr}"
    );
    assert!(!std::fs::read_to_string(&out_path)
        .unwrap()
        .contains("_time_tile"));
    let sizes = [
        "-v",
        "--set",
        "dim0=4096",
        "--set",
        "dim1=4096",
        "--set",
        "c1=0.2",
    ];
    let out = stencilc_compile(&host, &out_path, &sizes);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("iterations per launch, predicted"),
        "{stderr}"
    );
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(text.contains("_time_tile(") && text.contains("time_tile_steps(done, max_iters, 0, "));
}
