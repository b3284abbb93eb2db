//! End-to-end runs of the examples through the `stencilc` binary: inputs from
//! `examples/data`, outputs in every format, results checked against loops
//! written here, and the `--json` summary.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use stencilc::exec::Buffer;
use stencilc::io::{read_field, FieldSpec};
use stencilc::ir::ScalarType;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `stencilc` from the repository root; panics with stderr if it fails.
fn stencilc(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "stencilc {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).expect("--json prints one JSON object")
}

fn read(path: &Path, ty: ScalarType, dims: &[usize]) -> Buffer {
    let spec = FieldSpec {
        name: "out".into(),
        ty,
        rank: dims.len(),
    };
    read_field(path, &spec, dims).unwrap()
}

fn floats(buffer: Buffer) -> Vec<f32> {
    match buffer {
        Buffer::Float(v) => v,
        other => panic!("expected floats, got {:?}", other.ty()),
    }
}

fn doubles(buffer: Buffer) -> Vec<f64> {
    match buffer {
        Buffer::Double(v) => v,
        other => panic!("expected doubles, got {:?}", other.ty()),
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The sample image as `p / 255` in f32, with its (height, width).
fn sample_image() -> (Vec<f32>, usize, usize) {
    let image = image::open(repo().join("examples/data/sample.png"))
        .unwrap()
        .into_luma8();
    let (w, h) = (image.width() as usize, image.height() as usize);
    let pixels = image
        .into_raw()
        .into_iter()
        .map(|p| f32::from(p) / 255.0)
        .collect();
    (pixels, h, w)
}

/// A 7×7 Gaussian (σ = 1.1) with clamped borders, in f64.
fn reference_blur(img: &[f32], h: usize, w: usize) -> Vec<f64> {
    let mut k = [[0.0f64; 7]; 7];
    let mut total = 0.0;
    for (i, row) in k.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            let (y, x) = (i as f64 - 3.0, j as f64 - 3.0);
            *v = (-(x * x + y * y) / (2.0 * 1.1 * 1.1)).exp();
            total += *v;
        }
    }
    let mut out = vec![0.0; h * w];
    for y in 0..h {
        for x in 0..w {
            let mut acc = 0.0;
            for (i, row) in k.iter().enumerate() {
                for (j, kv) in row.iter().enumerate() {
                    let sy = (y as i64 + i as i64 - 3).clamp(0, h as i64 - 1) as usize;
                    let sx = (x as i64 + j as i64 - 3).clamp(0, w as i64 - 1) as usize;
                    acc += kv / total * f64::from(img[sy * w + sx]);
                }
            }
            out[y * w + x] = acc;
        }
    }
    out
}

#[test]
fn gaussian_blur_of_the_sample_image_writes_png() {
    let dir = tempfile::tempdir().unwrap();
    let (img, h, w) = sample_image();
    let expected = reference_blur(&img, h, w);
    for program in ["gaussian_blur", "gaussian_blur_separable"] {
        let out = dir.path().join(format!("{program}.png"));
        // The README's first command: width and height come from the image.
        let output = stencilc(&[
            "run",
            &format!("examples/{program}.sdsl"),
            "--backend",
            "interp",
            "--input",
            "img=examples/data/sample.png",
            "--output",
            &format!("out={}", path_str(&out)),
        ]);
        assert!(String::from_utf8_lossy(&output.stdout).contains("1 iteration on interp"));
        let written = image::open(&out).unwrap().into_luma8();
        assert_eq!(
            (written.width() as usize, written.height() as usize),
            (w, h)
        );
        for (i, (&got, want)) in written.as_raw().iter().zip(&expected).enumerate() {
            let want = (want.clamp(0.0, 1.0) * 255.0).round();
            assert!(
                (f64::from(got) - want).abs() <= 1.0,
                "{program}: pixel ({}, {}) is {got}, expected {want}",
                i / w,
                i % w
            );
        }
    }
}

#[test]
fn blur_to_npy_keeps_full_precision_and_pgm_works() {
    let dir = tempfile::tempdir().unwrap();
    let (img, h, w) = sample_image();
    let expected = reference_blur(&img, h, w);
    let npy = dir.path().join("blur.npy");
    let pgm = dir.path().join("blur.pgm");
    stencilc(&[
        "run",
        "examples/gaussian_blur.sdsl",
        "--backend",
        "interp",
        "--input",
        "img=examples/data/sample.png",
        "--output",
        &format!("out={}", path_str(&npy)),
        "--output",
        &format!("out={}", path_str(&pgm)),
    ]);
    let got = floats(read(&npy, ScalarType::Float, &[h, w]));
    let worst = got
        .iter()
        .zip(&expected)
        .map(|(g, e)| (f64::from(*g) - e).abs())
        .fold(0.0, f64::max);
    // The table holds the weights rounded to float; the sum runs in f32.
    assert!(worst < 1e-5, "largest difference {worst}");
    assert!(std::fs::read(&pgm).unwrap().starts_with(b"P5"));
    let pgm_pixels = image::open(&pgm).unwrap().into_luma8();
    assert_eq!(
        (pgm_pixels.width() as usize, pgm_pixels.height() as usize),
        (w, h)
    );
}

/// The guide's Jacobi (examples/jacobi2d.sdsl) written out: f32, in the same
/// order of operations, checking every 4 iterations. Returns the field and the
/// number of iterations run.
fn reference_jacobi(start: &[f32], n: usize, max_iters: u64) -> (Vec<f32>, u64) {
    let mut cur = start.to_vec();
    let mut next = start.to_vec();
    for k in 1..=max_iters {
        for y in 0..n {
            for x in 0..n {
                let i = y * n + x;
                next[i] = if y == 0 || x == 0 || y == n - 1 || x == n - 1 {
                    cur[i]
                } else {
                    0.2f32 * (cur[i - n] + cur[i - 1] + cur[i] + cur[i + 1] + cur[i + n])
                };
            }
        }
        let mut stop = false;
        if k % 4 == 0 {
            let max_diff = cur
                .iter()
                .zip(&next)
                .map(|(a, b)| f64::from(b - a).abs())
                .fold(f64::NEG_INFINITY, f64::max);
            stop = max_diff < f64::from(0.00001f32);
        }
        std::mem::swap(&mut cur, &mut next);
        if stop {
            return (cur, k);
        }
    }
    (cur, max_iters)
}

#[test]
fn jacobi_from_npy_matches_the_loop_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("jacobi.npy");
    let output = stencilc(&[
        "run",
        "examples/jacobi2d.sdsl",
        "--backend",
        "interp",
        "--input",
        "a=examples/data/jacobi_64.npy",
        "--output",
        &format!("a={}", path_str(&out)),
        "--json",
    ]);
    let summary = json(&output);
    let start = floats(read(
        &repo().join("examples/data/jacobi_64.npy"),
        ScalarType::Float,
        &[64, 64],
    ));
    let (expected, iterations) = reference_jacobi(&start, 64, 1000);
    assert_eq!(summary["iterations"], iterations);
    assert_eq!(summary["stopped_by_check"], iterations < 1000);
    assert_eq!(summary["backend"], "interp");
    assert_eq!(summary["parameters"]["dim0"], 64, "inferred from the input");
    assert_eq!(summary["parameters"]["dim1"], 64);
    assert!(summary["reductions"]["max_diff"].is_f64());
    for phase in [
        "parse", "check", "read", "compile", "upload", "compute", "download", "write", "total",
    ] {
        assert!(summary["times"][phase].as_f64().unwrap() >= 0.0, "{phase}");
    }
    let got = floats(read(&out, ScalarType::Float, &[64, 64]));
    assert!(
        got == expected,
        "the output differs from the hand-written loop"
    );
}

#[test]
fn heat3d_with_set_parameters_matches_the_loop() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("heat.npy");
    let (steps, alpha, n) = (10, 0.1f64, 16);
    stencilc(&[
        "run",
        "examples/heat3d.sdsl",
        "--backend",
        "interp",
        "--input",
        "u=examples/data/heat_16.npy",
        "--set",
        &format!("steps={steps}"),
        "--set",
        &format!("alpha={alpha}"),
        "--output",
        &format!("u={}", path_str(&out)),
    ]);
    let start = doubles(read(
        &repo().join("examples/data/heat_16.npy"),
        ScalarType::Double,
        &[n, n, n],
    ));
    let mut cur = start.clone();
    let mut next = start;
    let idx = |z: usize, y: usize, x: usize| (z * n + y) * n + x;
    for _ in 0..steps {
        for z in 1..n - 1 {
            for y in 1..n - 1 {
                for x in 1..n - 1 {
                    let v = cur[idx(z, y, x)];
                    next[idx(z, y, x)] = v + alpha
                        * (cur[idx(z - 1, y, x)]
                            + cur[idx(z + 1, y, x)]
                            + cur[idx(z, y - 1, x)]
                            + cur[idx(z, y + 1, x)]
                            + cur[idx(z, y, x - 1)]
                            + cur[idx(z, y, x + 1)]
                            - 6.0 * v);
                }
            }
        }
        std::mem::swap(&mut cur, &mut next);
    }
    let got = doubles(read(&out, ScalarType::Double, &[n, n, n]));
    assert!(got == cur, "the output differs from the hand-written loop");
}

#[test]
fn wave2d_on_three_levels_writes_raw() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("wave.raw");
    let (steps, c2, n) = (25, 0.2f32, 64);
    let output = stencilc(&[
        "run",
        "examples/wave2d.sdsl",
        "--backend",
        "interp",
        "--input",
        "u=examples/data/wave_64.npy",
        "--set",
        &format!("steps={steps}"),
        "--set",
        "c2=0.2",
        "--output",
        &format!("u={}", path_str(&out)),
        "--json",
    ]);
    let summary = json(&output);
    assert_eq!(summary["iterations"], steps);
    assert!(summary["reductions"]["energy"].as_f64().unwrap() > 0.0);
    assert_eq!(std::fs::metadata(&out).unwrap().len(), (n * n * 4) as u64);

    let start = floats(read(
        &repo().join("examples/data/wave_64.npy"),
        ScalarType::Float,
        &[n, n],
    ));
    let (mut prev, mut cur, mut next) = (start.clone(), start.clone(), start);
    for _ in 0..steps {
        for y in 1..n - 1 {
            for x in 1..n - 1 {
                let i = y * n + x;
                let u0 = cur[i];
                next[i] = 2.0f32 * u0 - prev[i]
                    + c2 * (cur[i - n] + cur[i + n] + cur[i - 1] + cur[i + 1] - 4.0f32 * u0);
            }
        }
        // Rotation: [-1] <- [0], [0] <- [1], [1] <- the old [-1] buffer.
        std::mem::swap(&mut prev, &mut cur);
        std::mem::swap(&mut cur, &mut next);
    }
    let got = floats(read(&out, ScalarType::Float, &[n, n]));
    assert!(got == cur, "the output differs from the hand-written loop");
}

#[test]
fn rician_denoise_runs_with_two_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("denoised.npy");
    let data = "examples/data/rician_24x20x16.npy";
    let output = stencilc(&[
        "run",
        "examples/rician3d.sdsl",
        "--backend",
        "interp",
        "--input",
        &format!("U={data}"),
        "--input",
        &format!("F={data}"),
        "--set",
        "sigma=0.05",
        "--set",
        "lambda=0.065",
        "--output",
        &format!("U={}", path_str(&out)),
        "--json",
    ]);
    let summary = json(&output);
    assert_eq!(summary["parameters"]["dim0"], 24);
    assert_eq!(summary["parameters"]["dim1"], 20);
    assert_eq!(summary["parameters"]["dim2"], 16);
    let iterations = summary["iterations"].as_u64().unwrap();
    // The check runs every 10 iterations of at most 50.
    assert!(
        iterations % 10 == 0 && (10..=50).contains(&iterations),
        "{iterations}"
    );
    let noisy = doubles(read(&repo().join(data), ScalarType::Double, &[16, 20, 24]));
    let clean = doubles(read(&out, ScalarType::Double, &[16, 20, 24]));
    assert!(clean.iter().all(|v| v.is_finite()));
    // Denoising smooths: the interior's total variation goes down.
    let variation = |v: &[f64]| -> f64 { v.windows(2).map(|w| (w[1] - w[0]).abs()).sum() };
    assert!(variation(&clean) < variation(&noisy));
}

#[test]
fn embedded_region_of_a_c_file() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("host.c");
    std::fs::write(
        &host,
        "#include <stdio.h>\n\
         void first(void) {\n\
         #pragma sdsl begin gpu(block:32,8 tile:1,2 time:1)\n\
         int n;\n\
         grid g[n];\n\
         int griddata a on g at 0;\n\
         iterate 1 { stencil fill { [0:n-1] : [0]a[0] = 7; } }\n\
         #pragma sdsl end\n\
         }\n\
         void second(void) {\n\
         #pragma sdsl begin time_steps:1 block:8,8,8 tile:1,3,1 time:1\n\
         int n;\n\
         grid g[n];\n\
         long griddata b on g at 0,1;\n\
         iterate 3 { stencil inc { [0:n-1] : [1]b[0] = [0]b[0] + 2L; } }\n\
         #pragma sdsl end\n\
         }\n",
    )
    .unwrap();
    let first = dir.path().join("a.raw");
    stencilc(&[
        "run",
        path_str(&host),
        "--set",
        "n=5",
        "--backend",
        "interp",
        "--output",
        &format!("a={}", path_str(&first)),
    ]);
    assert_eq!(read(&first, ScalarType::Int, &[5]), Buffer::Int(vec![7; 5]));
    let second = dir.path().join("b.npy");
    stencilc(&[
        "run",
        path_str(&host),
        "--region",
        "1",
        "--set",
        "n=4",
        "--backend",
        "interp",
        "--output",
        &format!("b={}", path_str(&second)),
    ]);
    assert_eq!(
        read(&second, ScalarType::Long, &[4]),
        Buffer::Long(vec![6; 4])
    );
}

#[test]
fn auto_backend_and_schedule_flags_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o.npy");
    let output = stencilc(&[
        "run",
        "examples/gaussian_blur.sdsl",
        "--input",
        "img=examples/data/sample.png",
        "--output",
        &format!("out={}", path_str(&out)),
        "--block",
        "32,8",
        "--tile",
        "1,2",
        "--shm",
        "img",
        "--json",
        "-v",
    ]);
    let summary = json(&output);
    assert!(summary["backend"].is_string());
    assert_ne!(
        summary["backend"], "auto",
        "the summary names the back-end that ran"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("width = 320 (from the shape of"),
        "{stderr}"
    );
    assert!(out.exists());
}

#[test]
fn opencl_backend_with_a_schedule_agrees_with_the_interpreter() {
    let probe = stencilc::exec::opencl::probe()
        .map(|_| ())
        .map_err(|e| e.to_string());
    if !common::runtime_available("opencl", probe) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (h, w) = (240, 320);
    let mut results = Vec::new();
    for (backend, schedule) in [
        ("interp", &[][..]),
        (
            "opencl",
            &["--block", "16,8", "--tile", "1,2", "--shm", "img"][..],
        ),
        ("opencl", &["--block", "32,4", "--shm", "none"][..]),
    ] {
        let out = dir.path().join(format!("{backend}{}.npy", results.len()));
        let mut args = vec![
            "run",
            "examples/gaussian_blur_separable.sdsl",
            "--backend",
            backend,
            "--input",
            "img=examples/data/sample.png",
            "--json",
        ];
        args.extend_from_slice(schedule);
        let output_arg = format!("out={}", path_str(&out));
        args.extend(["--output", &output_arg]);
        let summary = json(&stencilc(&args));
        assert_eq!(summary["backend"], backend);
        results.push(floats(read(&out, ScalarType::Float, &[h, w])));
    }
    for other in &results[1..] {
        let worst = results[0]
            .iter()
            .zip(other)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst <= 1e-5,
            "OpenCL differs from the interpreter by {worst}"
        );
    }
}

/// Without the `mpi` feature, `--decompose` says how to build with MPI.
#[cfg(not(feature = "mpi"))]
#[test]
fn decompose_without_an_mpi_build_says_how_to_get_one() {
    let output = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args([
            "run",
            "examples/jacobi2d.sdsl",
            "--set",
            "dim0=8",
            "--set",
            "dim1=8",
        ])
        .args(["--decompose", "auto"])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("built without"), "{stderr}");
    assert!(stderr.contains("--features mpi"), "{stderr}");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_ptxas_rank_runs_the_schedule_it_keeps_as_the_interpreter_does() {
    let gpu = stencilc::exec::cuda::probe()
        .map(|_| ())
        .map_err(|e| e.to_string());
    if !common::runtime_available("gpu", gpu)
        || !common::runtime_available("ptxas", stencilc::model::ptxas::find().map(|_| ()))
    {
        return;
    }
    // j3d27pt on a cube that is a multiple of no block, then the 7x7 blur:
    // the kept schedule runs and `--verify` compares every field with the
    // interpreter; `--verbose` says what the ranking kept.
    for (program, sets) in [
        ("bench/programs/j3d27pt.sdsl", &["n=67", "steps=3"][..]),
        (
            "bench/programs/gaussian_blur.sdsl",
            &["width=333", "height=123", "steps=2"][..],
        ),
    ] {
        let mut args = vec![
            "run",
            program,
            "--backend",
            "cuda",
            "--ptxas-rank",
            "8",
            "--verify",
            "--verbose",
        ];
        for set in sets {
            args.extend(["--set", set]);
        }
        let out = stencilc(&args);
        let log = String::from_utf8_lossy(&out.stderr);
        assert!(log.contains("ranked on ptxas's registers"), "{log}");
    }
}

/// A C host whose region is in OverTile's own language, as OverTile's tests
/// write them (`Dim_0`, `Dim_1` and the step count are host variables).
const OVERTILE_HOST: &str = "#include <stdio.h>
int main(void) {
  const int Dim_0 = 64, Dim_1 = 64, TimeSteps = 7;
  float *A = 0;
#pragma sdsl begin time_steps:TimeSteps block:32,4 tile:1,4 time:1
  program j2d is
  grid 2
  field A float inout
    A =
    @[1:$-1][1:$-1] : 0.2*(A[0][-1]+A[0][0]+A[0][1]+A[-1][0]+A[1][0])
#pragma sdsl end
  return sdsl_return_0;
}
";

#[test]
fn overtile_language_region_runs_and_compiles() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("j2d.c");
    std::fs::write(&host, OVERTILE_HOST).unwrap();
    let input = "examples/data/jacobi_64.npy";
    let start = floats(read(&repo().join(input), ScalarType::Float, &[64, 64]));
    let mut expected = start.clone();
    for _ in 0..7 {
        let old = expected.clone();
        for i in 1..63 {
            for j in 1..63 {
                let at = |i: usize, j: usize| old[i * 64 + j];
                let sum = at(i, j - 1) + at(i, j) + at(i, j + 1) + at(i - 1, j) + at(i + 1, j);
                expected[i * 64 + j] = (0.2 * f64::from(sum)) as f32;
            }
        }
    }
    for backend in ["interp", "c"] {
        let out = dir.path().join(format!("{backend}.npy"));
        let summary = json(&stencilc(&[
            "run",
            path_str(&host),
            "--backend",
            backend,
            "--input",
            &format!("A={input}"),
            "--set",
            "TimeSteps=7",
            "--output",
            &format!("A={}", path_str(&out)),
            "--json",
        ]));
        assert_eq!(summary["iterations"], 7, "{backend}");
        assert_eq!(
            summary["parameters"]["Dim_0"], 64,
            "inferred from the input"
        );
        assert_eq!(summary["parameters"]["Dim_1"], 64);
        let got = floats(read(&out, ScalarType::Float, &[64, 64]));
        assert!(got == expected, "{backend}: differs from the loop");
    }
    // Both source-to-source back-ends take the region; the call binds the
    // host's variables of OverTile's names.
    for backend in ["affine-c", "overtile"] {
        let out = dir.path().join(format!("out_{backend}.cu"));
        stencilc(&[
            "compile",
            "-b",
            backend,
            "-f",
            path_str(&host),
            "-o",
            path_str(&out),
        ]);
        let text = std::fs::read_to_string(&out).unwrap();
        assert!(
            text.contains("int sdsl_return_0 = j2d_sdsl(Dim_0, Dim_1, TimeSteps, (float *)(A)"),
            "{backend}"
        );
        assert!(
            !text.contains("program j2d is\n  grid 2"),
            "{backend}: the region is replaced"
        );
    }
}
