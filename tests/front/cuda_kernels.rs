//! The CUDA-subset front-end and the emulator on the KaniCUDA examples under
//! `examples/cuda/`: parsing, diagnostics, emulation against direct
//! computations, races, barriers, bounds, and the profiles of marked reads.

use std::sync::Arc;

use proptest::prelude::*;
use stencilc::emu::{self, Arg, FindingKind, Launch, Limits, Value};
use stencilc::front::cuda::{parse_unit, Unit};
use stencilc::source::SourceFile;

use crate::common::examples_dir;

fn source(name: &str) -> String {
    std::fs::read_to_string(examples_dir().join("cuda").join(name)).expect("example readable")
}

fn defines(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn parse(text: &str, defs: &[(&str, &str)]) -> Result<Unit, String> {
    let file = SourceFile::new("kernel.cu", text);
    parse_unit(&file, &defines(defs)).map_err(|d| d.to_string())
}

fn floats(data: &[f32]) -> Arg {
    Arg::Array(data.iter().map(|&v| Value::Float(v)).collect())
}

fn pattern(n: usize) -> Vec<f32> {
    (0..n)
        .map(|i| ((i * 37 % 101) as f32) * 0.125 - 3.0)
        .collect()
}

fn result_f32(arg: &Arg) -> Vec<f32> {
    match arg {
        Arg::Array(data) => data.iter().map(|v| v.as_f64() as f32).collect(),
        Arg::Scalar(_) => Vec::new(),
    }
}

const DIFFUSION_COEFFS: [f32; 7] = [0.1, 0.11, 0.12, 0.13, 0.14, 0.15, 0.25];

/// The diffusion kernel's arguments on an `nx × ny × nz` volume.
fn diffusion_args(nx: usize, ny: usize, nz: usize) -> Vec<Arg> {
    let mut args = vec![
        floats(&pattern(nx * ny * nz)),
        floats(&vec![0.0; nx * ny * nz]),
    ];
    for n in [nx, ny, nz] {
        args.push(Arg::Scalar(Value::Int(n as i32)));
    }
    for c in DIFFUSION_COEFFS {
        args.push(Arg::Scalar(Value::Float(c)));
    }
    args
}

/// The diffusion step computed directly, in the kernel's order of operations.
fn diffusion_reference(input: &[f32], nx: usize, ny: usize, nz: usize) -> Vec<f32> {
    let [ce, cw, cn, cs, ct, cb, cc] = DIFFUSION_COEFFS;
    let mut out = vec![0.0f32; input.len()];
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let c = i + j * nx + k * nx * ny;
                let w = if i == 0 { c } else { c - 1 };
                let e = if i == nx - 1 { c } else { c + 1 };
                let n = if j == 0 { c } else { c - nx };
                let s = if j == ny - 1 { c } else { c + nx };
                let b = if k == 0 { c } else { c - nx * ny };
                let t = if k == nz - 1 { c } else { c + nx * ny };
                out[c] = cc * input[c]
                    + cw * input[w]
                    + ce * input[e]
                    + cs * input[s]
                    + cn * input[n]
                    + cb * input[b]
                    + ct * input[t];
            }
        }
    }
    out
}

#[test]
fn examples_parse() {
    parse(
        &source("diffusion.cu"),
        &[("BLOCK_X", "4"), ("BLOCK_Y", "4")],
    )
    .unwrap();
    parse(
        &source("diffusion_nosync.cu"),
        &[("BLOCK_X", "4"), ("BLOCK_Y", "4")],
    )
    .unwrap();
    parse(
        &source("jacobi2d_tile.cu"),
        &[("TILE_X", "8"), ("TILE_Y", "4")],
    )
    .unwrap();
    let unit = parse(&source("heat3d_7pt.cu"), &[]).unwrap();
    assert_eq!(unit.kernels[0].marked.len(), 4);
}

#[test]
fn slides_diffusion_kernel_emulates_and_profiles() {
    let (nx, ny, nz) = (8, 8, 3);
    let unit = parse(
        &source("diffusion.cu"),
        &[("BLOCK_X", "4"), ("BLOCK_Y", "4")],
    )
    .unwrap();
    let kernel = &unit.kernels[0];
    let mut args = diffusion_args(nx, ny, nz);
    let input = result_f32(&args[0]);
    let launch = Launch {
        grid: [2, 2, 1],
        block: [4, 4, 1],
    };
    let report = emu::run(kernel, launch, &mut args, Limits::default()).unwrap();
    assert!(report.is_clean(), "{:?}", report.findings);
    assert_eq!(
        result_f32(&args[1]),
        diffusion_reference(&input, nx, ny, nz)
    );
    assert_eq!(report.profiles.len(), 4);
    let west = &report.profiles[0];
    assert_eq!(west.access, "__opt__.in[w]");
    assert_eq!(west.shared, "sb");
    assert_eq!(west.shared_dims, vec![16]);
    assert_eq!(west.candidates.len(), 8);
    assert_eq!(west.rows.len(), nx * ny * nz);
    for row in &west.rows {
        // Candidates: threadIdx.x threadIdx.y blockDim.x blockDim.y csb c i j.
        let (tx, csb, i) = (row.values[0], row.values[4], row.values[6]);
        let expected = if i == 0 {
            Some(vec![csb])
        } else if tx > 0 {
            Some(vec![csb - 1])
        } else {
            None
        };
        assert_eq!(row.slot, expected, "row {row:?}");
    }
}

#[test]
fn missing_barriers_are_a_race_and_barriers_fix_it() {
    let (nx, ny, nz) = (8, 8, 2);
    let defs = [("BLOCK_X", "4"), ("BLOCK_Y", "4")];
    let text = source("diffusion_nosync.cu");
    let launch = Launch {
        grid: [2, 2, 1],
        block: [4, 4, 1],
    };
    let unit = parse(&text, &defs).unwrap();
    let mut args = diffusion_args(nx, ny, nz);
    let report = emu::run(&unit.kernels[0], launch, &mut args, Limits::default()).unwrap();
    let race = report
        .findings
        .iter()
        .find(|f| f.kind == FindingKind::Race)
        .expect("a race is reported");
    let file = SourceFile::new("diffusion_nosync.cu", text.clone());
    let shown = race.to_diagnostic().render(&file);
    assert!(shown.contains("diffusion_nosync.cu:"), "{shown}");
    assert!(shown.contains("race on shared `sb`"), "{shown}");

    let synced = text
        .replace("/* STORE BARRIER */", "__syncthreads();")
        .replace("/* LOOP BARRIER */", "__syncthreads();");
    let unit = parse(&synced, &defs).unwrap();
    let mut args = diffusion_args(nx, ny, nz);
    let input = result_f32(&args[0]);
    let report = emu::run(&unit.kernels[0], launch, &mut args, Limits::default()).unwrap();
    assert!(report.is_clean(), "{:?}", report.findings);
    assert_eq!(
        result_f32(&args[1]),
        diffusion_reference(&input, nx, ny, nz)
    );
}

#[test]
fn jacobi_tile_on_partial_blocks() {
    // 13 × 6 with 8 × 4 blocks: partial blocks along both axes.
    let (nx, ny) = (13usize, 6usize);
    let unit = parse(
        &source("jacobi2d_tile.cu"),
        &[("TILE_X", "8"), ("TILE_Y", "4")],
    )
    .unwrap();
    let input = pattern(nx * ny);
    let mut args = vec![
        floats(&input),
        floats(&vec![0.0; nx * ny]),
        Arg::Scalar(Value::Int(nx as i32)),
        Arg::Scalar(Value::Int(ny as i32)),
    ];
    let launch = Launch {
        grid: [2, 2, 1],
        block: [8, 4, 1],
    };
    let report = emu::run(&unit.kernels[0], launch, &mut args, Limits::default()).unwrap();
    assert!(report.is_clean(), "{:?}", report.findings);
    let mut expected = input.clone();
    for j in 1..ny - 1 {
        for i in 1..nx - 1 {
            let c = j * nx + i;
            expected[c] =
                0.2f32 * (input[c] + input[c - 1] + input[c + 1] + input[c - nx] + input[c + nx]);
        }
    }
    assert_eq!(result_f32(&args[1]), expected);
    let west = &report.profiles[0];
    assert_eq!(west.shared_dims, vec![4, 8]);
    assert!(west.rows.iter().any(|r| r.slot.is_some()));
    assert!(west.rows.iter().any(|r| r.slot.is_none()));
    for row in west.rows.iter().filter(|r| r.slot.is_some()) {
        let (tx, ty) = (row.values[0], row.values[1]);
        assert_eq!(row.slot, Some(vec![ty, tx - 1]));
    }
}

#[test]
fn heat3d_seven_point_matches_direct_computation() {
    let (nx, ny, nz) = (10usize, 6usize, 4usize);
    let unit = parse(&source("heat3d_7pt.cu"), &[]).unwrap();
    let input: Vec<f64> = pattern(nx * ny * nz)
        .iter()
        .map(|&v| f64::from(v))
        .collect();
    let alpha = 0.1;
    let mut args = vec![
        Arg::Array(input.iter().map(|&v| Value::Double(v)).collect()),
        Arg::Array(vec![Value::Double(0.0); input.len()]),
        Arg::Scalar(Value::Int(nx as i32)),
        Arg::Scalar(Value::Int(ny as i32)),
        Arg::Scalar(Value::Int(nz as i32)),
        Arg::Scalar(Value::Double(alpha)),
    ];
    let launch = Launch {
        grid: [2, 2, 1],
        block: [8, 4, 1],
    };
    let report = emu::run(&unit.kernels[0], launch, &mut args, Limits::default()).unwrap();
    assert!(report.is_clean(), "{:?}", report.findings);
    let mut expected = input.clone();
    for k in 1..nz - 1 {
        for j in 1..ny - 1 {
            for i in 1..nx - 1 {
                let c = (k * ny + j) * nx + i;
                let u = &input;
                expected[c] = u[c]
                    + alpha
                        * (u[c - 1]
                            + u[c + 1]
                            + u[c - nx]
                            + u[c + nx]
                            + u[c - nx * ny]
                            + u[c + nx * ny]
                            - 6.0 * u[c]);
            }
        }
    }
    let Arg::Array(out) = &args[1] else {
        panic!("array")
    };
    let out: Vec<f64> = out.iter().map(|v| v.as_f64()).collect();
    assert_eq!(out, expected);
    assert_eq!(report.profiles.len(), 4);
    assert!(report.profiles.iter().all(|p| !p.rows.is_empty()));
}

fn run_small(text: &str, block: [u32; 3], n: usize) -> emu::Report {
    let unit = parse(text, &[]).unwrap();
    let mut args = vec![floats(&vec![1.0; n])];
    let launch = Launch {
        grid: [1, 1, 1],
        block,
    };
    emu::run(&unit.kernels[0], launch, &mut args, Limits::default()).unwrap()
}

#[test]
fn out_of_bounds_and_divergent_barriers_are_reported_with_their_line() {
    let oob = run_small(
        "__global__ void k(float* a) {\n  a[threadIdx.x + 1] = 2.0f;\n}\n",
        [4, 1, 1],
        4,
    );
    let finding = &oob.findings[0];
    assert_eq!(finding.kind, FindingKind::OutOfBounds);
    assert!(
        finding.message.contains("index 4, 4 elements"),
        "{}",
        finding.message
    );
    assert_eq!(finding.span.start, 32);

    let shared_oob = run_small(
        "__global__ void k(float* a) {\n  __shared__ float s[4];\n  s[threadIdx.x + 1] = a[0];\n}\n",
        [4, 1, 1],
        4,
    );
    assert_eq!(shared_oob.findings[0].kind, FindingKind::OutOfBounds);

    let divergent = run_small(
        "__global__ void k(float* a) {\n  if (threadIdx.x < 2) { __syncthreads(); }\n  a[threadIdx.x] = 1.0f;\n}\n",
        [4, 1, 1],
        4,
    );
    assert_eq!(divergent.findings[0].kind, FindingKind::Barrier);

    let runaway = {
        let unit = parse(
            "__global__ void k(float* a) { while (true) { a[0] = 1.0f; } }",
            &[],
        )
        .unwrap();
        let mut args = vec![floats(&[0.0])];
        let limits = Limits {
            max_steps: 10_000,
            ..Limits::default()
        };
        let launch = Launch {
            grid: [1, 1, 1],
            block: [2, 1, 1],
        };
        emu::run(&unit.kernels[0], launch, &mut args, limits).unwrap()
    };
    assert_eq!(runaway.findings[0].kind, FindingKind::Runaway);
}

#[test]
fn bad_input_gets_located_diagnostics() {
    let cases: &[(&str, &str)] = &[
        (
            "__global__ void k(float* a) { profile(\"i q\"); int i = 0; __shared__ float s[4]; s[0] = a[0]; a[1] = __opt__.a[i]; }",
            "`profile` names `q`",
        ),
        (
            "__global__ void k(float* a) { profile(\"i\"); int i = 0; __shared__ float s[4]; s[0] = a[0]; a[1] = __opt__.s[i]; }",
            "marks a read of the shared array",
        ),
        (
            "__global__ void k(float* a) { __shared__ float s[N]; s[0] = a[0]; }",
            "unknown name `N`",
        ),
        (
            "__global__ void k(float* a) { __shared__ float s[4]; a[0] = s[0]; }",
            "no store fills the shared array `s`",
        ),
        ("#include <cuda.h>\n__global__ void k() {}", "`#include`"),
        ("__device__ void f() { }", "outside the CUDA subset"),
        ("__global__ void k(float* a) { a[0] = foo(1.0f); }", "not a function"),
        ("__global__ void k(float* a) { float* p = a; }", "local pointers"),
        ("__global__ void k(float* a) { do { } while (1); }", "`do` is outside"),
    ];
    for (text, expected) in cases {
        let err = parse(text, &[]).expect_err(text);
        assert!(err.contains(expected), "{text}\n{err}");
        assert!(err.contains("kernel.cu:"), "{err}");
        assert!(err.contains('^'), "{err}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Mutated kernels (bytes cut, replaced or repeated) never panic the
    /// front-end.
    #[test]
    fn mutated_kernels_never_panic(which in 0usize..4, at in 0.0f64..1.0, len in 0usize..12, byte in 0u8..128, how in 0u8..3) {
        let names = ["diffusion.cu", "diffusion_nosync.cu", "jacobi2d_tile.cu", "heat3d_7pt.cu"];
        let mut text = source(names[which]).into_bytes();
        let start = ((text.len() as f64) * at) as usize;
        let end = (start + len).min(text.len());
        match how {
            0 => { text.drain(start..end); }
            1 => { for b in &mut text[start..end] { *b = byte; } }
            _ => { let piece = text[start..end].to_vec(); text.splice(start..start, piece); }
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        let file = SourceFile::new("mutated.cu", text);
        let result = parse_unit(&Arc::clone(&file), &defines(&[("BLOCK_X", "4"), ("BLOCK_Y", "4"), ("TILE_X", "8"), ("TILE_Y", "4")]));
        if let Err(diags) = result {
            let _ = diags.to_string();
        }
    }
}
