//! AN5D's benchmark form through `stencilc map`: the time loop of a
//! `#pragma scop` region in `kernel_stencil`, its one array a pointer to a
//! VLA cast from the caller's buffer (`SB_TYPE (*A)[n][n] = (SB_TYPE
//! (*)[n][n])A1;`) whose first axis holds the two time levels
//! (`A[(t+1)%2][i][j] = … A[t%2][i-1][j] …`). Every shape of AN5D's suite is
//! written here in that form (2-D and 3-D stars and boxes of radius 1 to 4,
//! j2d5pt, j2d9pt, j2d9pt-gol, gradient2d, j3d27pt, 3d125pt), with a driver
//! of our own that fills both buffers, runs the kernel and prints a checksum
//! of both. With `--target opencl --require-device` the time loop runs as
//! stencilc's kernels (on PoCL here) and prints the original's checksum, bit
//! for bit; with `--target cuda` its kernels compile through NVRTC and the
//! host part with g++.

use std::fmt::Write;
use std::path::Path;

use super::map::{build_and_run, cc_available, map, opencl_available, opencl_headers_available};
use super::map::{stderr, stdout};

/// The driver every shape includes, as AN5D's sources include `common.h`:
/// both buffers filled alike, the kernel run, a checksum of both printed.
const COMMON_H: &str = r#"#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <math.h>
#ifndef SB_TYPE
#define SB_TYPE float
#endif
#ifndef AN5D_STEPS
#define AN5D_STEPS 5
#endif
double kernel_stencil(SB_TYPE *A1, int compsize, int timestep, bool scop);
int main(void) {
  int compsize = (BENCH_DIM == 2) ? 37 : 9;
  size_t gridarea = 1;
  for (int i = 0; i < BENCH_DIM; i++)
    gridarea *= (size_t)(compsize + BENCH_RAD * 2);
  SB_TYPE *A = (SB_TYPE *)malloc(2 * gridarea * sizeof(SB_TYPE));
  for (size_t i = 0; i < gridarea; i++) {
    A[i] = (SB_TYPE)((i * 7919u) % 1000u) / 100.0f;
    A[gridarea + i] = A[i];
  }
  kernel_stencil(A, compsize, AN5D_STEPS, true);
  double sum = 0;
  for (size_t i = 0; i < 2 * gridarea; i++)
    sum = sum * 0.999 + A[i];
  printf("checksum %.17g\n", sum);
  free(A);
  return 0;
}
"#;

/// One of AN5D's shapes: its name, dimensions, radius and update.
struct Shape {
    name: String,
    dims: usize,
    radius: i64,
    /// The right-hand side of the update, reading `A[t%2][…]`.
    update: String,
}

/// `A[t%2][i+a][j+b]…` for an offset.
fn read(offset: &[i64]) -> String {
    let vars = ["i", "j", "k"];
    let mut r = String::from("A[t%2]");
    for (v, o) in vars.iter().zip(offset) {
        match o {
            0 => write!(r, "[{v}]").unwrap(),
            o if *o > 0 => write!(r, "[{v}+{o}]").unwrap(),
            o => write!(r, "[{v}{o}]").unwrap(),
        }
    }
    r
}

/// The offsets of a star (`box_ = false`) or a box of `radius` in `dims`.
fn offsets(dims: usize, radius: i64, box_: bool) -> Vec<Vec<i64>> {
    let range: Vec<i64> = (-radius..=radius).collect();
    let mut all: Vec<Vec<i64>> = vec![vec![]];
    for _ in 0..dims {
        all = all
            .into_iter()
            .flat_map(|o| {
                range.iter().map(move |&x| {
                    let mut o = o.clone();
                    o.push(x);
                    o
                })
            })
            .collect();
    }
    all.retain(|o| box_ || o.iter().filter(|&&x| x != 0).count() <= 1);
    all
}

/// `c0*A[…] + c1*A[…] + …`, the coefficients summing to less than one.
fn weighted(points: &[Vec<i64>]) -> String {
    let n = points.len() as f64;
    points
        .iter()
        .enumerate()
        .map(|(p, o)| {
            let c = (1.0 + (p % 5) as f64) / (3.5 * n);
            format!("{c:.6}f*{}", read(o))
        })
        .collect::<Vec<_>>()
        .join(" +\n              ")
}

/// AN5D's suite: 22 shapes.
fn shapes() -> Vec<Shape> {
    let mut out = Vec::new();
    for dims in [2, 3] {
        for radius in 1..=4 {
            for (kind, box_) in [("star", false), ("box", true)] {
                out.push(Shape {
                    name: format!("{kind}{dims}d{radius}r"),
                    dims,
                    radius,
                    update: weighted(&offsets(dims, radius, box_)),
                });
            }
        }
    }
    let over = |points: Vec<Vec<i64>>, d: i64| {
        let terms: Vec<String> = points
            .iter()
            .enumerate()
            .map(|(p, o)| format!("{:.1}f * {}", 5.0 + (p % 7) as f64 * 1.7, read(o)))
            .collect();
        format!("({}) / {d}", terms.join(" + "))
    };
    out.push(Shape {
        name: "j2d5pt".into(),
        dims: 2,
        radius: 1,
        update: over(offsets(2, 1, false), 118),
    });
    out.push(Shape {
        name: "j2d9pt".into(),
        dims: 2,
        radius: 2,
        update: over(offsets(2, 2, false), 118),
    });
    out.push(Shape {
        name: "j2d9pt-gol".into(),
        dims: 2,
        radius: 1,
        update: over(offsets(2, 1, true), 118),
    });
    out.push(Shape {
        name: "j3d27pt".into(),
        dims: 3,
        radius: 1,
        update: over(offsets(3, 1, true), 159),
    });
    let c = read(&[0, 0]);
    let diff = |o: &[i64]| format!("({c}-{r})*({c}-{r})", r = read(o));
    out.push(Shape {
        name: "gradient2d".into(),
        dims: 2,
        radius: 1,
        update: format!(
            "{c} + 1.0f / sqrt(0.0001f +\n                  {} + {} + {} + {})",
            diff(&[-1, 0]),
            diff(&[1, 0]),
            diff(&[0, 1]),
            diff(&[0, -1])
        ),
    });
    // 3d125pt: the 125 points of a radius-2 box in groups by their distance
    // from the centre, each group's sum scaled by a double.
    let mut groups: std::collections::BTreeMap<i64, Vec<String>> = Default::default();
    for o in offsets(3, 2, true) {
        let d: i64 = o.iter().map(|x| x * x).sum();
        groups.entry(d).or_default().push(read(&o));
    }
    let update = groups
        .values()
        .enumerate()
        .map(|(g, reads)| {
            let scale = 0.4 / (reads.len() as f64 * (1.0 + g as f64));
            format!("{scale:.5} * ({})", reads.join(" + "))
        })
        .collect::<Vec<_>>()
        .join(" +\n              ");
    out.push(Shape {
        name: "3d125pt".into(),
        dims: 3,
        radius: 2,
        update,
    });
    out
}

/// The shape's C file in AN5D's form.
fn source(shape: &Shape) -> String {
    let dimsize = "[dimsize]".repeat(shape.dims);
    let vars = ["i", "j", "k"];
    let mut loops = String::new();
    let mut pad = "    ".to_string();
    loops.push_str(&format!("{pad}for (int t = 0; t < timestep; t++)\n"));
    for v in &vars[..shape.dims] {
        pad.push_str("  ");
        loops.push_str(&format!(
            "{pad}for (int {v} = BENCH_RAD; {v} < dimsize - BENCH_RAD; {v}++)\n"
        ));
    }
    let point: String = vars[..shape.dims]
        .iter()
        .map(|v| format!("[{v}]"))
        .collect();
    pad.push_str("  ");
    loops.push_str(&format!(
        "{pad}A[(t+1)%2]{point} =\n{pad}  {};\n",
        shape.update
    ));
    format!(
        "#define BENCH_DIM {dims}\n#define BENCH_FPP 2\n#define BENCH_RAD {radius}\n\n#include \"common.h\"\n\n\
double kernel_stencil(SB_TYPE *A1, int compsize, int timestep, bool scop)\n{{\n\
  int dimsize = compsize + BENCH_RAD * 2;\n\
  SB_TYPE (*A){dimsize}\n    = (SB_TYPE (*){dimsize})A1;\n\n\
  if (scop) {{\n#pragma scop\n{loops}#pragma endscop\n  }}\n  else {{\n{loops}  }}\n\n  return 0.0;\n}}\n",
        dims = shape.dims,
        radius = shape.radius,
    )
}

/// Writes every shape's file (and `common.h`) into `dir`, and into
/// `$STENCILC_AN5D_DIR` too when it is set (to look at them or time them).
fn write_suite(dir: &Path) -> Vec<Shape> {
    if let Some(keep) = std::env::var_os("STENCILC_AN5D_DIR") {
        let keep = Path::new(&keep);
        if keep != dir {
            std::fs::create_dir_all(keep).unwrap();
            write_suite(keep);
        }
    }
    std::fs::write(dir.join("common.h"), COMMON_H).unwrap();
    let shapes = shapes();
    for s in &shapes {
        std::fs::write(dir.join(format!("{}.c", s.name)), source(s)).unwrap();
    }
    shapes
}

#[test]
fn an5d_suite_has_every_shape() {
    let shapes = shapes();
    assert_eq!(shapes.len(), 22);
    let points = |name: &str| {
        let s = shapes.iter().find(|s| s.name == name).unwrap();
        s.update.matches("A[t%2]").count()
    };
    assert_eq!(points("star2d1r"), 5);
    assert_eq!(points("box2d4r"), 81);
    assert_eq!(points("star3d4r"), 25);
    assert_eq!(points("box3d4r"), 729);
    assert_eq!(points("3d125pt"), 125);
    assert_eq!(points("gradient2d"), 17);
}

#[test]
fn an5d_time_loops_run_on_opencl_as_the_originals() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shapes = write_suite(dir.path());
    let mut table = String::new();
    for s in &shapes {
        let c = dir.path().join(format!("{}.c", s.name));
        // An odd and an even number of steps: the buffer holding the newest
        // level alternates.
        for steps in [4, 5] {
            let define = format!("-DAN5D_STEPS={steps}");
            let flags = ["-ffp-contract=off", define.as_str()];
            let want = build_and_run(&c, &dir.path().join(&s.name), &flags);
            assert!(want.starts_with("checksum "), "{}: {want}", s.name);
            let mapped = dir.path().join(format!("{}_cl.c", s.name));
            let out = map(
                dir.path(),
                &[
                    &format!("{}.c", s.name),
                    "--target",
                    "opencl",
                    "--require-device",
                    "-o",
                    mapped.to_str().unwrap(),
                ],
            );
            assert!(out.status.success(), "{}: {}", s.name, stderr(&out));
            let program = std::fs::read_to_string(&mapped).unwrap();
            assert!(
                program
                    .contains("0 nest(s) run as direct OpenCL kernels,\n   1 lifted time loop(s)"),
                "{}: the time loop is not lifted:\n{}",
                s.name,
                &program[..program.len().min(400)]
            );
            let include = dir.path().to_str().unwrap();
            let cl_flags = [
                "-ffp-contract=off",
                define.as_str(),
                "-I",
                include,
                "-lOpenCL",
            ];
            let got = build_and_run(
                &mapped,
                &dir.path().join(format!("{}_cl", s.name)),
                &cl_flags,
            );
            assert_eq!(
                got, want,
                "{} ({steps} steps): OpenCL differs from the original",
                s.name
            );
            if steps == 5 {
                let _ = writeln!(table, "{:<12} {}", s.name, want.trim());
            }
        }
    }
    println!("AN5D shapes on OpenCL (PoCL), 5 steps, checksums equal to the originals':\n{table}");
}

#[test]
fn an5d_report_says_each_nest_runs_in_the_lifted_loop() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    for target in ["opencl", "cuda"] {
        let out = map(dir.path(), &["box3d1r.c", "--target", target, "--report"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let report = stdout(&out);
        assert!(
            report.contains(
                "lift: lifted into an ir::Program: 1 stencil(s) over fields A (2 time levels)"
            ),
            "{target}: {report}"
        );
        assert!(
            report.contains("runs in the kernels of the lifted loop around it"),
            "{target}: {report}"
        );
        assert!(!report.contains("stays on the CPU"), "{target}: {report}");
    }
}

#[test]
fn an5d_cuda_kernels_compile_with_nvrtc() {
    use stencilc::exec::cuda::nvrtc;
    if !crate::common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shapes = write_suite(dir.path());
    for s in &shapes {
        let mapped = dir.path().join(format!("{}.cu", s.name));
        let out = map(
            dir.path(),
            &[
                &format!("{}.c", s.name),
                "--target",
                "cuda",
                "--require-device",
                "-o",
                mapped.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{}: {}", s.name, stderr(&out));
        let output = std::fs::read_to_string(&mapped).unwrap();
        assert!(
            output.contains("1 lifted time loop(s) or nest(s) run on a\n   CUDA GPU"),
            "{}: not lifted",
            s.name
        );
        let units = super::map_lift::kernel_units(&output);
        assert_eq!(units.len(), 1, "{}", s.name);
        let compiled =
            nvrtc::compile_source(&units[0], "sm_90", stencilc::back::cuda::NVRTC_OPTIONS, &[])
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", s.name, units[0]));
        assert!(compiled.ptx.contains(".entry"), "{}: no kernel", s.name);
    }
}

#[test]
fn an5d_cuda_host_parts_compile_with_gxx() {
    let Ok(includes) = super::map_lift::cuda_include_dirs() else {
        let why = super::map_lift::cuda_include_dirs().unwrap_err();
        crate::common::runtime_available("cudart", Err(why));
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    for name in ["star2d1r", "box3d2r", "gradient2d", "3d125pt"] {
        let cu = dir.path().join(format!("{name}.cu"));
        let out = map(
            dir.path(),
            &[
                &format!("{name}.c"),
                "--target",
                "cuda",
                "-o",
                cu.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        super::map_lift::compile_host_part(name, &cu, &includes);
    }
}

/// Gauss-Seidel in AN5D's form: updated in place, so its loops carry
/// dependences and it stays on the CPU; `--require-device` says so and
/// writes nothing.
#[test]
fn require_device_names_the_nest_left_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    write_suite(dir.path());
    let seidel = source(&Shape {
        name: "seidel".into(),
        dims: 2,
        radius: 1,
        update: "0.2f * (A[t%2][i-1][j] + A[t%2][i][j-1] + A[t%2][i][j] + A[t%2][i][j+1] + A[t%2][i+1][j])".into(),
    })
    .replace("A[(t+1)%2][i][j] =", "A[t%2][i][j] =");
    std::fs::write(dir.path().join("seidel.c"), seidel).unwrap();
    let out_path = dir.path().join("seidel_cl.c");
    for target in ["opencl", "cuda"] {
        let out = map(
            dir.path(),
            &[
                "seidel.c",
                "--target",
                target,
                "--require-device",
                "-o",
                out_path.to_str().unwrap(),
            ],
        );
        assert!(!out.status.success(), "{target}: {}", stdout(&out));
        let err = stderr(&out);
        assert!(
            err.contains("would stay on the CPU (--require-device)"),
            "{err}"
        );
        assert!(err.contains("nest kernel_stencil:"), "{err}");
        assert!(err.contains("dependence"), "{err}");
        assert!(!out_path.exists(), "{target}: an output was written");
    }
    let out = map(dir.path(), &["seidel.c", "--require-device"]);
    assert!(
        stderr(&out).contains("--require-device needs a device target"),
        "{}",
        stderr(&out)
    );
    // Without the flag the same file maps, the nest on the CPU.
    let out = map(
        dir.path(),
        &[
            "seidel.c",
            "--target",
            "opencl",
            "-o",
            out_path.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

/// The other spellings of the time axis: `(t + 1) & 1`, a cast around the
/// subscript, and three buffers cycled by `% 3` (a second-order wave
/// equation: a field of three time levels).
const TIME_AXIS_FORMS: &str = r#"#include <stdio.h>
#define N 41
static double U[3][N][N];
static float B[2][N][N];
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      U[0][i][j] = (i * 3 + j) % 7;
      U[1][i][j] = U[0][i][j];
      U[2][i][j] = 0;
      B[0][i][j] = (float)((i + 5 * j) % 11) / 11.0f;
      B[1][i][j] = B[0][i][j];
    }
  for (int t = 0; t < 9; t++)
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        U[(t + 2) % 3][i][j] = 2.0 * U[(t + 1) % 3][i][j] - U[t % 3][i][j]
          + 0.1 * (U[(t + 1) % 3][i - 1][j] + U[(t + 1) % 3][i + 1][j]
                   + U[(t + 1) % 3][i][j - 1] + U[(t + 1) % 3][i][j + 1] - 4.0 * U[(t + 1) % 3][i][j]);
  for (int t = 0; t < 7; t++)
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        B[(t + 1) & 1][i][j] = 0.25f * (B[(int)(t & 1)][i - 1][j] + B[t & 1][i + 1][j]
                                        + B[t & 1][i][j - 1] + B[t & 1][i][j + 1]);
  double s = 0;
  for (int l = 0; l < 3; l++)
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++)
        s = s * 0.999 + U[l][i][j];
  for (int l = 0; l < 2; l++)
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++)
        s = s * 0.999 + B[l][i][j];
  printf("%.17g\n", s);
  return 0;
}
"#;

#[test]
fn time_axis_forms_lift_and_run_on_opencl_as_the_original() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("forms3.c"), TIME_AXIS_FORMS).unwrap();
    let out = map(dir.path(), &["forms3.c", "--target", "opencl", "--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    assert!(report.contains("over fields U (3 time levels)"), "{report}");
    assert!(report.contains("over fields B (2 time levels)"), "{report}");
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let c = dir.path().join("forms3.c");
    let want = build_and_run(&c, &dir.path().join("forms3"), &["-ffp-contract=off"]);
    let mapped = dir.path().join("forms3_cl.c");
    let out = map(
        dir.path(),
        &[
            "forms3.c",
            "--target",
            "opencl",
            "-o",
            mapped.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let program = std::fs::read_to_string(&mapped).unwrap();
    assert!(
        program.contains("2 lifted time loop(s)"),
        "{}",
        &program[..300]
    );
    let got = build_and_run(
        &mapped,
        &dir.path().join("forms3_cl"),
        &["-ffp-contract=off", "-lOpenCL"],
    );
    assert_eq!(got, want);
}
