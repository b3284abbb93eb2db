//! Programs in OverTile's own stencil language (`#pragma sdsl` regions that
//! begin `program NAME is`) run on the interpreter and on the C back-end:
//! bit-identical results, and the interpreter's equal to loops written here
//! the way OverTile's own tests write their references (a Jacobi sweep per
//! update, updates in order, points outside the ranges unchanged). Then a C
//! host with such a region through `stencilc compile -b affine-c` and gcc,
//! checked against a reference loop in the host itself.

use crate::common;

use std::process::Command;

use stencilc::exec::options::RunOptions;
use stencilc::exec::{native, Bindings, Buffer, FieldState};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ScalarType, Value};
use stencilc::source::SourceFile;

fn cc_available() -> bool {
    common::cc_available()
}

/// The only region of a host file holding `body` under `options`.
fn region(options: &str, body: &str) -> Program {
    let text =
        format!("void f(void) {{\n#pragma sdsl begin {options}\n{body}\n#pragma sdsl end\n}}\n");
    stencilc::front::parse_regions(SourceFile::new("ot.c", text))
        .and_then(stencilc::analysis::checked_regions)
        .unwrap_or_else(|d| panic!("{d}"))
        .remove(0)
        .program
}

/// Parameter values by name (every parameter must be named).
fn bind(p: &Program, values: &[(&str, f64)]) -> RunEnv {
    let params = p
        .params
        .iter()
        .map(|q| {
            let (_, v) = values
                .iter()
                .find(|(n, _)| *n == q.name)
                .unwrap_or_else(|| panic!("no value for `{}`", q.name));
            Value::Double(*v).cast(q.ty)
        })
        .collect();
    RunEnv::new(p, &Bindings { params }).unwrap()
}

/// Field `f`'s start: values in [0, 1) that differ from point to point.
fn data(f: usize, len: usize) -> Vec<f64> {
    (0..len)
        .map(|i| (((i * 7919 + f * 104729) % 1000) as f64) / 1000.0)
        .collect()
}

fn state(p: &Program, env: &RunEnv) -> FieldState {
    let fields = p
        .fields
        .iter()
        .enumerate()
        .map(|(f, field)| {
            let len: usize = env.grid_dims()[field.grid.0].iter().product();
            let values = data(f, len);
            let buffer = match field.ty {
                ScalarType::Float => Buffer::Float(values.iter().map(|&v| v as f32).collect()),
                ScalarType::Double => Buffer::Double(values),
                other => panic!("OverTile fields are float or double, not {other}"),
            };
            vec![buffer; field.levels()]
        })
        .collect();
    FieldState { fields }
}

/// Runs `p` on the interpreter and, where a C compiler is here, on C; asserts
/// the two agree bit for bit on every level; returns each field's newest values.
fn run(p: &Program, env: &RunEnv, steps: u64) -> Vec<Buffer> {
    let mut expected = state(p, env);
    let summary = interp::run(p, env, &mut expected).unwrap();
    assert_eq!(summary.iterations, steps);
    if cc_available() {
        let mut got = state(p, env);
        native::run(p, env, &mut got, &RunOptions::default(), &mut |_| {}).unwrap();
        assert_eq!(
            got, expected,
            "C and the interpreter differ on `{}`",
            p.name
        );
    }
    (0..p.fields.len())
        .map(|f| expected.newest(p, f).clone())
        .collect()
}

fn floats(b: &Buffer) -> Vec<f32> {
    match b {
        Buffer::Float(v) => v.clone(),
        other => panic!("expected floats, got {}", other.ty()),
    }
}

fn doubles(b: &Buffer) -> Vec<f64> {
    match b {
        Buffer::Double(v) => v.clone(),
        other => panic!("expected doubles, got {}", other.ty()),
    }
}

fn start_f32(f: usize, len: usize) -> Vec<f32> {
    data(f, len).iter().map(|&v| v as f32).collect()
}

#[test]
fn jacobi_2d_updates_its_field_in_place_from_the_old_values() {
    let p = region(
        "time_steps:Steps block:8,8 tile:1,3 time:1",
        "program j2d is
grid 2
field A float inout
A = @[1:$-1][1:$-1] : 0.2*(A[0][-1]+A[0][0]+A[0][1]+A[1][0]+A[-1][0])",
    );
    let (rows, cols, steps) = (9usize, 13usize, 6u64);
    let env = bind(
        &p,
        &[
            ("Dim_0", cols as f64),
            ("Dim_1", rows as f64),
            ("Steps", steps as f64),
        ],
    );
    let got = floats(&run(&p, &env, steps)[0]);
    // The reference as OverTile's j2d test writes it: a copy per step.
    let mut a = start_f32(0, rows * cols);
    for _ in 0..steps {
        let old = a.clone();
        let at = |i: usize, j: usize| old[i * cols + j];
        for i in 1..rows - 1 {
            for j in 1..cols - 1 {
                let sum = at(i, j - 1) + at(i, j) + at(i, j + 1) + at(i + 1, j) + at(i - 1, j);
                a[i * cols + j] = (0.2 * f64::from(sum)) as f32;
            }
        }
    }
    assert_eq!(got, a);
}

#[test]
fn fdtd_2d_updates_run_in_order_and_see_each_others_new_values() {
    let p = region(
        "time_steps:T block:32,4 tile:1,4 time:4",
        "program fdtd is
grid 2
field Ex float inout
field Ey float inout
field Hz float inout
Ey = @[1:$][0:$] : Ey[0][0] - 0.5*(Hz[0][0] - Hz[-1][0])
Ex = @[0:$][1:$] : Ex[0][0] - 0.5*(Hz[0][0] - Hz[0][-1])
Hz = @[0:$-1][0:$-1] : Hz[0][0] - 0.7*(Ex[0][1] - Ex[0][0] + Ey[1][0] - Ey[0][0])",
    );
    let (rows, cols, steps) = (7usize, 10usize, 5u64);
    let env = bind(
        &p,
        &[
            ("Dim_0", cols as f64),
            ("Dim_1", rows as f64),
            ("T", steps as f64),
        ],
    );
    let got = run(&p, &env, steps);
    let (mut ex, mut ey, mut hz) = (
        start_f32(0, rows * cols),
        start_f32(1, rows * cols),
        start_f32(2, rows * cols),
    );
    let ix = |i: usize, j: usize| i * cols + j;
    let sub = |a: f32, b: f64| (f64::from(a) - b) as f32;
    for _ in 0..steps {
        for i in 1..rows {
            for j in 0..cols {
                ey[ix(i, j)] = sub(
                    ey[ix(i, j)],
                    0.5 * f64::from(hz[ix(i, j)] - hz[ix(i - 1, j)]),
                );
            }
        }
        for i in 0..rows {
            for j in 1..cols {
                ex[ix(i, j)] = sub(
                    ex[ix(i, j)],
                    0.5 * f64::from(hz[ix(i, j)] - hz[ix(i, j - 1)]),
                );
            }
        }
        for i in 0..rows - 1 {
            for j in 0..cols - 1 {
                let curl = ex[ix(i, j + 1)] - ex[ix(i, j)] + ey[ix(i + 1, j)] - ey[ix(i, j)];
                hz[ix(i, j)] = sub(hz[ix(i, j)], 0.7 * f64::from(curl));
            }
        }
    }
    assert_eq!(floats(&got[0]), ex);
    assert_eq!(floats(&got[1]), ey);
    assert_eq!(floats(&got[2]), hz);
}

#[test]
fn one_dimensional_out_field_then_inout_field() {
    let p = region(
        "time_steps:Steps block:256 tile:8 time:4",
        "program j1d is
grid 1
field A float inout
field B float out
B = @[1:$-1] : 0.333*(A[-1]+A[0])
A = @[1:$-1] : 0.2*(B[0]+B[1])",
    );
    let (n, steps) = (23usize, 7u64);
    let env = bind(&p, &[("Dim_0", n as f64), ("Steps", steps as f64)]);
    let got = run(&p, &env, steps);
    let (mut a, mut b) = (start_f32(0, n), start_f32(1, n));
    for _ in 0..steps {
        for i in 1..n - 1 {
            b[i] = (0.333 * f64::from(a[i - 1] + a[i])) as f32;
        }
        for i in 1..n - 1 {
            a[i] = (0.2 * f64::from(b[i] + b[i + 1])) as f32;
        }
    }
    assert_eq!(floats(&got[0]), a);
    assert_eq!(floats(&got[1]), b);
}

#[test]
fn heat_3d_with_a_read_only_field_and_a_parameter() {
    let p = region(
        "time_steps:Steps block:8,8,8 tile:2,2,2 time:2",
        "program heat3d is
grid 3
param alpha double
field K double in
field U double inout
U = @[1:$-1][1:$-1][1:$-1] : U[0][0][0] + alpha*K[0][0][0]*(U[0][0][-1] + U[0][0][1] + U[0][-1][0] + U[0][1][0] + U[-1][0][0] + U[1][0][0] - 6*U[0][0][0])",
    );
    let (nz, ny, nx, steps) = (6usize, 5usize, 7usize, 4u64);
    let alpha = 0.125;
    let env = bind(
        &p,
        &[
            ("Dim_0", nx as f64),
            ("Dim_1", ny as f64),
            ("Dim_2", nz as f64),
            ("Steps", steps as f64),
            ("alpha", alpha),
        ],
    );
    let got = run(&p, &env, steps);
    let len = nz * ny * nx;
    let k = data(0, len);
    let mut u = data(1, len);
    let ix = |z: usize, y: usize, x: usize| (z * ny + y) * nx + x;
    for _ in 0..steps {
        let old = u.clone();
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    let c = old[ix(z, y, x)];
                    let sum = old[ix(z, y, x - 1)]
                        + old[ix(z, y, x + 1)]
                        + old[ix(z, y - 1, x)]
                        + old[ix(z, y + 1, x)]
                        + old[ix(z - 1, y, x)]
                        + old[ix(z + 1, y, x)]
                        - 6.0 * c;
                    u[ix(z, y, x)] = c + alpha * k[ix(z, y, x)] * sum;
                }
            }
        }
    }
    assert_eq!(doubles(&got[1]), u);
    assert_eq!(doubles(&got[0]), k, "the `in` field is unchanged");
}

#[test]
fn where_ranges_overlap_the_first_one_gives_the_value() {
    let p = region(
        "time_steps:3",
        "program edges is
grid 2
field u float inout
u = @[0:0][0:$] : 1.0
    @[1:$][0] : 2.0 + u[0][1]
    @[0:$][0:$] : 0.5*u[0][0]
    @[1:$-1][1:$-1] : 0.5*(u[-1][0] + u[0][1])",
    );
    let (rows, cols, steps) = (6usize, 5usize, 3u64);
    let env = bind(&p, &[("Dim_0", cols as f64), ("Dim_1", rows as f64)]);
    let got = floats(&run(&p, &env, steps)[0]);
    let mut u = start_f32(0, rows * cols);
    for _ in 0..steps {
        let old = u.clone();
        for i in 0..rows {
            for j in 0..cols {
                let value = if i == 0 {
                    1.0
                } else if j == 0 {
                    (2.0 + f64::from(old[i * cols + 1])) as f32
                } else {
                    // The whole grid's range comes before the interior's,
                    // which therefore never gives a value.
                    (0.5 * f64::from(old[i * cols + j])) as f32
                };
                u[i * cols + j] = value;
            }
        }
    }
    assert_eq!(got, u);
}

#[test]
fn lets_parameters_and_math_functions_agree_on_c() {
    // Rician-like: a G update, then a U update reading the new G.
    let p = region(
        "time_steps:Steps block:16,8",
        "program rician is
grid 2
param sigma double
field U double inout
field G double inout
field F double in
G = @[1:$-1][1:$-1] :
  let left = (U[0][0] - U[0][-1])*(U[0][0] - U[0][-1]) in
  let right = (U[0][0] - U[0][1])*(U[0][0] - U[0][1]) in
  let up = pow(U[0][0] - U[-1][0], 2) in
  let down = pow(U[0][0] - U[1][0], 2) in
  rsqrt(1.0e-20 + left + right + up + down)
U = @[1:$-1][1:$-1] :
  let sigma2 = sigma*sigma in
  let r = U[0][0]*F[0][0]/sigma2 in
  let r = (r*(2.38944 + r*(0.950037 + r))) / (4.65314 + r*(2.57541 + r*(1.48937 + r))) in
  (U[0][0] + 5.0*(U[1][0]*G[1][0] + U[-1][0]*G[-1][0] + U[0][1]*G[0][1] + U[0][-1]*G[0][-1] + F[0][0]*r/sigma2))
    / (1.0 + 5.0*(G[1][0] + G[-1][0] + G[0][1] + G[0][-1] + fmax(1.0/sigma2, fabs(r))))",
    );
    let env = bind(
        &p,
        &[
            ("Dim_0", 11.0),
            ("Dim_1", 8.0),
            ("Steps", 3.0),
            ("sigma", 0.05),
        ],
    );
    let got = run(&p, &env, 3);
    let u = doubles(&got[0]);
    assert!(u.iter().all(|v| v.is_finite()));
    // The interior moved; the border kept its start.
    let start = data(0, u.len());
    assert_ne!(u[11 + 1], start[11 + 1]);
    assert_eq!(u[..11], start[..11]);
}

#[test]
fn the_older_update_form_computes_the_same() {
    let newer = region(
        "time_steps:4",
        "program j is\ngrid 2\nfield A double inout\nA = @[1:$-2][2:$-1] : 0.25*(A[-1][0] + A[1][0] + A[0][-2] + A[0][1])",
    );
    let older = region(
        "time_steps:4",
        "program j is\ngrid 2\nfield A double inout\nA[1:2][2:1] = 0.25*(A[-1][0] + A[1][0] + A[0][-2] + A[0][1])",
    );
    let values = [("Dim_0", 9.0), ("Dim_1", 8.0), ("TS", 4.0)];
    let a = run(&newer, &bind(&newer, &values), 4);
    let b = run(&older, &bind(&older, &values), 4);
    assert_eq!(a, b);
    assert_ne!(doubles(&a[0]), data(0, 72), "the update changed the field");
}

#[test]
fn a_range_past_the_extents_is_refused_before_running() {
    let p = region(
        "time_steps:1",
        "program p is\ngrid 1\nfield A float inout\nA = @[0:5] : A[0]",
    );
    let small = bind(&p, &[("Dim_0", 4.0), ("TS", 1.0)]);
    let err = stencilc::exec::check_inputs(&p, &small, &state(&p, &small)).unwrap_err();
    assert!(
        err.to_string()
            .contains("past the last element (Dim_0-1 = 3)"),
        "{err}"
    );
    let large = bind(&p, &[("Dim_0", 6.0), ("TS", 1.0)]);
    assert!(stencilc::exec::check_inputs(&p, &large, &state(&p, &large)).is_ok());
}

/// A C host in the style of OverTile's tests: a reference loop, the region,
/// and a comparison, built by `stencilc compile -b affine-c` and gcc.
const HOST: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IX(i, j) ((i) * Dim_0 + (j))

int main(void) {
  const int Dim_0 = 37, Dim_1 = 29, TimeSteps = 9;
  float *A = malloc(sizeof(float) * Dim_0 * Dim_1);
  float *B = malloc(sizeof(float) * Dim_0 * Dim_1);
  float *RefA = malloc(sizeof(float) * Dim_0 * Dim_1);
  float *RefB = malloc(sizeof(float) * Dim_0 * Dim_1);
  for (int i = 0; i < Dim_0 * Dim_1; ++i) {
    A[i] = RefA[i] = (float)((i * 7919) % 1000) / 1000.0f;
    B[i] = RefB[i] = 0.0f;
  }
  for (int t = 0; t < TimeSteps; ++t) {
    for (int i = 1; i < Dim_1 - 1; ++i)
      for (int j = 1; j < Dim_0 - 1; ++j)
        RefB[IX(i, j)] = 0.2 * (RefA[IX(i, j - 1)] + RefA[IX(i, j)] + RefA[IX(i, j + 1)] + RefA[IX(i - 1, j)] + RefA[IX(i + 1, j)]);
    for (int i = 1; i < Dim_1 - 1; ++i)
      for (int j = 1; j < Dim_0 - 1; ++j)
        RefA[IX(i, j)] = 0.2 * (RefB[IX(i, j - 1)] + RefB[IX(i, j)] + RefB[IX(i, j + 1)] + RefB[IX(i - 1, j)] + RefB[IX(i + 1, j)]);
  }
#pragma sdsl begin time_steps:TimeSteps block:32,4 tile:2,4 time:4
  program j2d is
  grid 2
  field A float inout
  field B float inout
    B =
    @[1:$-1][1:$-1] : 0.2*(A[0][-1]+A[0][0]+A[0][1]+A[-1][0]+A[1][0])
    A =
    @[1:$-1][1:$-1] : 0.2*(B[0][-1]+B[0][0]+B[0][1]+B[-1][0]+B[1][0])
#pragma sdsl end
  if (sdsl_return_0 != 0) {
    printf("status %d\n", sdsl_return_0);
    return 2;
  }
  int same = memcmp(A, RefA, sizeof(float) * Dim_0 * Dim_1) == 0
          && memcmp(B, RefB, sizeof(float) * Dim_0 * Dim_1) == 0;
  printf("%s\n", same ? "OK" : "FAIL");
  return same ? 0 : 1;
}
"#;

#[test]
fn a_c_host_with_an_overtile_region_matches_its_reference_loop() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("j2d_multi.c");
    std::fs::write(&host, HOST).unwrap();
    let out = dir.path().join("out.c");
    let compiled = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(["compile", "-b", "affine-c", "-f"])
        .arg(&host)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        compiled.status.success(),
        "{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    let exe = dir.path().join("host");
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let built = Command::new(&compiler)
        .args(["-O2", "-fopenmp", "-ffp-contract=off", "-std=c11"])
        .arg(&out)
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{compiler}: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = Command::new(&exe)
        .env("OMP_NUM_THREADS", "2")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert_eq!(stdout.trim(), "OK", "{stdout}");
    assert!(ran.status.success());
}
