//! The `gpu_` tests: the output built with nvcc and run on a GPU (ignored
//! without one), against the C references.

use super::*;

/// Whether nvcc and a GPU are here (the GPU machine), for the `gpu_` tests.
pub(super) fn nvcc_and_gpu() -> Result<(), String> {
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
pub(super) fn gpu_matches_affine_c(dir: &Path, host: &Path, size: &str) {
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
