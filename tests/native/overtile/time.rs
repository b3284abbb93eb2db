//! `time:T` in an overtile region's pragma: the time-tiled launch loop, and
//! the notes when it cannot apply.

use super::gpu::{gpu_matches_affine_c, nvcc_and_gpu};
use super::*;

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
    // With every size known the model decides, and says why: the time-tiled
    // kernels measured on an H200 ran slower than untiled, so it declines
    // (bench/gpu/MODEL.md, "Time tiling").
    assert!(
        stderr.contains("time tiling: not taken: no T from 2 to "),
        "{stderr}"
    );
    assert!(!std::fs::read_to_string(&out_path)
        .unwrap()
        .contains("_time_tile"));
}
