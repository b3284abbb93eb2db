//! `stencilc map`: every example under examples/c is mapped with
//! `--target c`, the original (cc) and the mapped program (cc -fopenmp) are
//! run, and their outputs compared: point values bit-identical, checksums
//! summed by reductions within 1e-12 relative (OpenMP reorders the additions).
//! The reports are snapshots; bad input stays on the CPU with its reason.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const EXAMPLES: &[&str] = &[
    "jacobi2d",
    "rician3d",
    "conv2d",
    "heat3d",
    "fdtd2d",
    "seidel",
    "jacobi2d_swap",
];

fn examples_c() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/c")
}

pub(super) fn map(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .current_dir(dir)
        .arg("map")
        .args(args)
        .output()
        .unwrap()
}

pub(super) fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub(super) fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub(super) fn cc_available() -> bool {
    let probe = Command::new("cc")
        .arg("--version")
        .output()
        .map_err(|e| e.to_string())
        .and_then(|o| {
            if o.status.success() {
                Ok(())
            } else {
                Err("cc --version failed".into())
            }
        });
    common::runtime_available("cc", probe)
}

pub(super) fn compile_and_run(source: &Path, exe: &Path, openmp: bool) -> String {
    build_and_run(source, exe, if openmp { &["-fopenmp"] } else { &[] })
}

/// Builds `source` with `cc -O2 -std=gnu99 ... -lm` and `flags` (`-fopenmp`,
/// `-lOpenCL`, `-ffp-contract=off`), runs it and returns what it printed.
pub(super) fn build_and_run(source: &Path, exe: &Path, flags: &[&str]) -> String {
    let built = Command::new("cc")
        .args(["-O2", "-std=gnu99"])
        .arg(source)
        .arg("-o")
        .arg(exe)
        .arg("-lm")
        .args(flags)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "cc failed on {}:\n{}",
        source.display(),
        stderr(&built)
    );
    // Three threads: iteration counts are not multiples of the thread count.
    let ran = Command::new(exe)
        .env("OMP_NUM_THREADS", "3")
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{} failed: {}",
        exe.display(),
        stderr(&ran)
    );
    stdout(&ran)
}

/// Point values must agree exactly; `checksum` lines (sums that the mapped
/// program reduces in another order) within 1e-12 relative.
fn assert_same_output(name: &str, original: &str, mapped: &str) {
    let (a, b): (Vec<&str>, Vec<&str>) = (original.lines().collect(), mapped.lines().collect());
    assert_eq!(
        a.len(),
        b.len(),
        "{name}: different line counts\n{original}\n---\n{mapped}"
    );
    for (x, y) in a.iter().zip(&b) {
        match (x.strip_prefix("checksum "), y.strip_prefix("checksum ")) {
            (Some(p), Some(q)) => {
                let (p, q): (f64, f64) = (p.trim().parse().unwrap(), q.trim().parse().unwrap());
                assert!(
                    (p - q).abs() <= 1e-12 * p.abs().max(1.0),
                    "{name}: checksums {p} and {q}"
                );
            }
            _ => assert_eq!(x, y, "{name}: outputs differ"),
        }
    }
}

#[test]
fn mapped_examples_compute_what_the_originals_compute() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in EXAMPLES {
        let file = format!("{name}.c");
        let mapped_path = dir.path().join(format!("{name}.omp.c"));
        let out = map(
            &examples_c(),
            &[&file, "--target", "c", "-o", mapped_path.to_str().unwrap()],
        );
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let mapped = std::fs::read_to_string(&mapped_path).unwrap();
        assert!(
            mapped.contains("#pragma omp parallel for"),
            "{name}: nothing mapped"
        );
        let original = compile_and_run(
            &examples_c().join(&file),
            &dir.path().join(format!("{name}.orig")),
            false,
        );
        let parallel = compile_and_run(&mapped_path, &dir.path().join(format!("{name}.omp")), true);
        assert_same_output(name, &original, &parallel);
    }
}

#[test]
fn reports_of_the_examples() {
    if !cc_available() {
        return;
    }
    for name in EXAMPLES {
        let out = map(&examples_c(), &[&format!("{name}.c"), "--report"]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        insta::assert_snapshot!(format!("map_report_{name}"), stdout(&out));
    }
}

#[test]
fn the_loop_carried_nest_stays_on_the_cpu_and_is_left_unchanged() {
    if !cc_available() {
        return;
    }
    let out = map(&examples_c(), &["seidel.c", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let plan: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let nests = plan["nests"].as_array().unwrap();
    let sweep = nests
        .iter()
        .find(|n| n["lines"][0] == 16)
        .expect("the sweep nest");
    assert_eq!(sweep["decision"]["decision"], "cpu");
    assert!(sweep["decision"]["reasons"][0]
        .as_str()
        .unwrap()
        .contains("flow dependence on `A`"));
    let program = stdout(&map(&examples_c(), &["seidel.c"]));
    let sweep_line = program
        .lines()
        .position(|l| l.contains("A[i][j] = (A[i - 1][j]"))
        .unwrap();
    let lines: Vec<&str> = program.lines().collect();
    assert!(!lines[sweep_line - 2].contains("pragma") && !lines[sweep_line - 3].contains("pragma"));
}

#[test]
fn the_rician_convergence_check_is_a_logical_reduction() {
    if !cc_available() {
        return;
    }
    let program = stdout(&map(&examples_c(), &["rician3d.c"]));
    assert!(program.contains("reduction(&&: converged)"), "{program}");
}

/// Writes `text` to `name` in a fresh directory and maps it with `args`.
pub(super) fn map_text(name: &str, text: &str, args: &[&str]) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(name), text).unwrap();
    let mut all = vec![name];
    all.extend_from_slice(args);
    (map(dir.path(), &all), dir)
}

#[test]
fn unparsable_c_is_an_error_at_its_line_and_column() {
    if !cc_available() {
        return;
    }
    let (out, _dir) = map_text(
        "bad.c",
        "int main(void) {\n    int x = 1 +;\n    return x;\n}\n",
        &["--report"],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("bad.c:2:"), "{err}");
    assert!(err.contains("int x = 1 +;"), "{err}");
}

/// Maps `name` in `dir` with `--target c` and checks that the mapped
/// program, under OpenMP, prints what the original prints.
pub(super) fn assert_openmp_prints_as_written(dir: &Path, name: &str) {
    let mapped = dir.join(name.replace(".c", ".omp.c"));
    let out = map(
        dir,
        &[name, "--target", "c", "-o", mapped.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let original = compile_and_run(&dir.join(name), &dir.join("o"), false);
    let parallel = compile_and_run(&mapped, &dir.join("m"), true);
    assert_eq!(original, parallel);
}

/// Dependences that the subscripts allow but the loop bounds do not: the
/// second half of an array copied onto the first, and a row read 20 rows
/// away (or mirrored about row 10) by loops of 9 rows. All three nests are
/// parallel, and the mapped program prints what the original prints.
#[test]
fn loop_bounds_rule_out_dependences_the_subscripts_allow() {
    if !cc_available() {
        return;
    }
    let text = "#include <stdio.h>\n#define N 1000\n\
                static double a[N], b[40][40];\n\
                int main(void) {\n\
                \x20   for (int i = 0; i < N; i++) a[i] = i * 0.5;\n\
                \x20   for (int i = 0; i < 40; i++) for (int j = 0; j < 40; j++) b[i][j] = i - j;\n\
                \x20   for (int i = 0; i < N / 2; i++)\n\
                \x20       a[i] = a[i + N / 2] * 2.0;\n\
                \x20   for (int i = 1; i < 10; i++)\n\
                \x20       for (int j = 0; j < 10; j++)\n\
                \x20           b[i][j] = b[i + 20][j] + b[20 - i][j + 1];\n\
                \x20   for (int i = 0; i < N; i += 97) printf(\"%.17g\\n\", a[i]);\n\
                \x20   for (int i = 0; i < 10; i++) printf(\"%.17g\\n\", b[i][i]);\n\
                \x20   return 0;\n}\n";
    let (out, dir) = map_text("bounds.c", text, &["--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    for nest in [
        "nest main:7 (lines 7-8): stencil, mapped (parallel loops: i)",
        "nest main:9",
    ] {
        assert!(report.contains(nest), "{nest:?} not in:\n{report}");
    }
    assert!(
        report.contains("(parallel loops: i, j)"),
        "the b nest is not parallel:\n{report}"
    );
    assert!(!report.contains("dependence on"), "{report}");
    assert_openmp_prints_as_written(dir.path(), "bounds.c");
}

/// Bounds that are symbols: `u[i]` against `u[i + n]` for `i < n` never
/// meet, whatever `n` is. And a loop variable read after its loop is past
/// its range: `a[j + 1][i - 10]` below `for (i = 0; i < 10; i++)` reads
/// `a[j + 1][0]`, which the next `j` writes, and `r[i*n + j]` below the `j`
/// loop is `r[(i + 1)*n]` (no row of its own: not delinearised), so `j` and
/// `i` stay sequential.
#[test]
fn symbolic_bounds_rule_out_dependences_and_variables_after_their_loop_do_not() {
    if !cc_available() {
        return;
    }
    let text = "#include <stdio.h>\n\
                static double u[200], a[8][16], s[8], r[48], t[8];\n\
                static void halves(int n) {\n\
                \x20   for (int i = 0; i < n; i++)\n\
                \x20       u[i] = 0.5 * u[i + n] + 1.0;\n\
                }\n\
                static void rows(int m, int n, double *restrict r, double *restrict t) {\n\
                \x20   int i, j;\n\
                \x20   for (i = 0; i < m - 1; i++) {\n\
                \x20       for (j = 0; j < n; j++)\n\
                \x20           r[i * n + j] = r[i * n + j] * 2.0;\n\
                \x20       t[i] = r[i * n + j];\n\
                \x20   }\n\
                }\n\
                int main(void) {\n\
                \x20   int i, j;\n\
                \x20   for (i = 0; i < 200; i++) u[i] = i % 7;\n\
                \x20   for (i = 0; i < 48; i++) r[i] = i;\n\
                \x20   for (j = 0; j < 8; j++) for (i = 0; i < 16; i++) a[j][i] = j + i;\n\
                \x20   halves(100);\n\
                \x20   rows(8, 6, r, t);\n\
                \x20   for (j = 0; j < 7; j++) {\n\
                \x20       for (i = 0; i < 10; i++)\n\
                \x20           a[j][i] = a[j][i] * 2.0;\n\
                \x20       s[j] = a[j + 1][i - 10];\n\
                \x20   }\n\
                \x20   for (i = 0; i < 100; i += 9) printf(\"%.17g\\n\", u[i]);\n\
                \x20   for (j = 0; j < 7; j++) printf(\"%.17g %.17g\\n\", s[j], t[j]);\n\
                \x20   return 0;\n}\n";
    let (out, dir) = map_text("after.c", text, &["--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    let nest = |header: &str| -> String {
        let at = report
            .find(header)
            .unwrap_or_else(|| panic!("{header:?} not in:\n{report}"));
        let rest = &report[at..];
        rest[..rest[1..].find("\nnest ").map_or(rest.len(), |e| e + 1)].to_string()
    };
    let halves = nest("nest halves:4 (lines 4-5): parallel, mapped (parallel loops: i)");
    assert!(!halves.contains("dependence on"), "{halves}");
    let rows = nest("nest rows:9");
    assert!(
        rows.contains("i (line 9): 0 .. (m - 1); sequential: anti dependence on `r`"),
        "{rows}"
    );
    assert!(!rows.contains("delinearisation: `r`"), "{rows}");
    let sweep = nest("nest main:22");
    assert!(
        sweep.contains("j (line 22): 0 .. 7, 7 iterations; sequential: anti dependence on `a`"),
        "{sweep}"
    );
    assert_openmp_prints_as_written(dir.path(), "after.c");
}

/// Loop variables declared outside their loops, on a device: a statement
/// after an inner loop reads the thread's own variable (`k`), the host sets
/// the parallel loops' variables as the loops leave them (`i`, `j`, printed
/// after), and a private scalar read after its nest (`t`) keeps that nest on
/// the CPU, since a kernel would leave its last value on the device.
#[test]
fn loop_variables_read_after_their_loops_keep_their_values_on_opencl() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let text = "#include <stdio.h>\n\
                static double A[16][8], B[16];\n\
                int main(void) {\n\
                \x20   int i, j, k;\n\
                \x20   double t = 0.0;\n\
                \x20   for (i = 0; i < 16; i++)\n\
                \x20       for (j = 0; j < 8; j++)\n\
                \x20           A[i][j] = i * 8 + j;\n\
                \x20   printf(\"%d %d\\n\", i, j);\n\
                \x20   for (i = 0; i < 16; i++) {\n\
                \x20       for (k = 0; k < 8; k++)\n\
                \x20           A[i][k] = A[i][k] * 0.5;\n\
                \x20       B[i] = A[i][k - 1] + k;\n\
                \x20   }\n\
                \x20   for (i = 1; i < 15; i++) {\n\
                \x20       t = B[i] + 1.0;\n\
                \x20       B[i] = t * t;\n\
                \x20   }\n\
                \x20   printf(\"%d %.17g\\n\", i, t);\n\
                \x20   for (j = 0; j < 16; j++)\n\
                \x20       printf(\"%.17g\\n\", B[j]);\n\
                \x20   return 0;\n}\n";
    let (out, dir) = map_text("after.c", text, &["--target", "opencl", "--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    for expected in [
        "nest main:6 (lines 6-8): parallel, mapped (parallel loops: i, j)",
        "nest main:10 (lines 10-14): stencil, mapped (parallel loops: i)",
        "`t` is read after the nest, and a kernel leaves its last value on the device",
    ] {
        assert!(report.contains(expected), "{expected:?} not in:\n{report}");
    }
    let mapped = dir.path().join("after.cl.c");
    let out = map(
        dir.path(),
        &[
            "after.c",
            "--target",
            "opencl",
            "-o",
            mapped.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let program = std::fs::read_to_string(&mapped).unwrap();
    for expected in [
        "\"    int k;\\n\"\n    \"    for (k = 0; k < 8; k += 1) {\\n\"",
        "i = (0) < (16) ? (16) : (0);",
        "if ((0) < (16)) j = (0) < (8) ? (8) : (0);",
    ] {
        assert!(
            program.contains(expected),
            "{expected:?} not in:\n{program}"
        );
    }
    let original = compile_and_run(&dir.path().join("after.c"), &dir.path().join("o"), false);
    let on_opencl = build_and_run(&mapped, &dir.path().join("m"), &["-lOpenCL"]);
    assert!(original.starts_with("16 8\n15 "), "{original}");
    assert_eq!(original, on_opencl);
}

/// A local declared in the nest takes a new value in each iteration: `int m
/// = j % 2; u[j + m]` writes `u[2]` from `j = 1` and `j = 2`, so `j` is
/// sequential; a local defined by an affine expression (`int m = i * 3`) is
/// read through it (`u[3i + 20]` against `u[3i + 21]`: never equal; `int c
/// = i * n + j` delinearises).
#[test]
fn locals_in_subscripts_vary_with_their_loops() {
    if !cc_available() {
        return;
    }
    let text = "#include <stdio.h>\n\
                static double u[64];\n\
                int main(void) {\n\
                \x20   for (int i = 0; i < 4; i++)\n\
                \x20       for (int j = 0; j < 10; j++) {\n\
                \x20           int m = j % 2;\n\
                \x20           u[j + m] = u[j + m] + i * 10 + j;\n\
                \x20       }\n\
                \x20   for (int i = 0; i < 4; i++) {\n\
                \x20       int m = i * 3;\n\
                \x20       u[m + 20] = u[m + 21] + 1.0;\n\
                \x20   }\n\
                \x20   for (int i = 0; i < 34; i++) printf(\"%.17g\\n\", u[i]);\n\
                \x20   return 0;\n}\n";
    let (out, dir) = map_text("locals.c", text, &["--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    for expected in [
        "j (line 5): 0 .. 10, 10 iterations; sequential: anti dependence on `u` (lines 7 and 7), distance (i: *, j: *)",
        "nest main:9 (lines 9-12): parallel, mapped (parallel loops: i)",
    ] {
        assert!(report.contains(expected), "{expected:?} not in:\n{report}");
    }
    assert_openmp_prints_as_written(dir.path(), "locals.c");

    // `int c = i * n + j;` is read through its definition: the accesses
    // delinearise and both loops are parallel.
    let text = "void f(int m, int n, double *restrict a, double *restrict b) {\n\
                \x20   for (int i = 1; i < m - 1; i++)\n\
                \x20       for (int j = 1; j < n - 1; j++) {\n\
                \x20           int c = i * n + j;\n\
                \x20           b[c] = 0.25 * (a[c - 1] + a[c + 1] + a[c - n] + a[c + n]);\n\
                \x20       }\n}\n";
    let (out, _dir) = map_text("index.c", text, &["--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    for expected in [
        "nest f:2 (lines 2-6): stencil, mapped (parallel loops: i, j)",
        "delinearisation: `b`'s linear subscripts split into 2 dimensions",
    ] {
        assert!(report.contains(expected), "{expected:?} not in:\n{report}");
    }
}

#[test]
fn constructs_the_analysis_cannot_follow_keep_the_nest_on_the_cpu() {
    if !cc_available() {
        return;
    }
    let cases: &[(&str, &str)] = &[
        ("int idx[64]; float a[64], b[64];\nvoid f(void) {\n  for (int i = 0; i < 64; i++)\n    a[idx[i]] = b[i];\n}\n", "output dependence on `a`"),
        ("float a[64];\nfloat g(float);\nvoid f(void) {\n  for (int i = 0; i < 64; i++)\n    a[i] = g(a[i]);\n}\n", "whose body is not visible"),
        ("float a[64];\nfloat g(float x) { return x > 1 ? g(x / 2) : x; }\nvoid f(void) {\n  for (int i = 0; i < 64; i++)\n    a[i] = g(a[i]);\n}\n", "recursive"),
        ("float a[64];\nvoid f(void) {\n  for (int i = 0; i < 64; i++) {\n    if (a[i] < 0) goto out;\n    a[i] = 1;\n  }\nout: ;\n}\n", "goto out"),
        ("void f(float *a, float *b, int n) {\n  for (int i = 0; i < n; i++)\n    a[i] = b[i] + 1;\n}\n", "possible aliasing of `a` and `b`"),
        ("float a[64];\nvoid f(void) {\n  for (int i = 0; i < 64; i++)\n    a[i * i] = 1;\n}\n", "output dependence on `a`"),
        ("int a[10];\nvoid f(void) {\n  for (int i = 0; i < 9; i++) {\n    int *p = a;\n    p[i] = a[i + 1];\n  }\n}\n", "possible aliasing of `a` and `p`"),
        ("float b[64];\nfloat g(int i) { return b[i + 1]; }\nvoid f(void) {\n  for (int i = 0; i < 63; i++)\n    b[i] = g(i);\n}\n", "reads `b` beyond its scalar parameters"),
    ];
    for (text, reason) in cases {
        let (out, _dir) = map_text("nest.c", text, &["--report"]);
        assert!(out.status.success(), "{text}: {}", stderr(&out));
        let report = stdout(&out);
        assert!(report.contains("stays on the CPU"), "{text}\n{report}");
        assert!(
            report.contains(reason),
            "{text}: expected `{reason}` in\n{report}"
        );
        let (out, _dir) = map_text("nest.c", text, &[]);
        assert!(!stdout(&out).contains("#pragma omp"), "{text} was mapped");
    }
}

#[test]
fn restrict_pointers_and_distinct_arguments_rule_out_aliasing() {
    if !cc_available() {
        return;
    }
    let restrict = "void f(float *restrict a, const float *restrict b, int n) {\n  for (int i = 0; i < n; i++)\n    a[i] = b[i] + 1;\n}\n";
    let (out, _dir) = map_text("r.c", restrict, &[]);
    assert!(
        stdout(&out).contains("#pragma omp parallel for"),
        "{}",
        stdout(&out)
    );
    let calls = "static void f(float *a, float *b, int n) {\n  for (int i = 0; i < n; i++)\n    a[i] = b[i] + 1;\n}\nfloat x[8], y[8];\nint main(void) { f(x, y, 8); f(y, x, 8); return 0; }\n";
    let (out, _dir) = map_text("c.c", calls, &[]);
    assert!(
        stdout(&out).contains("#pragma omp parallel for"),
        "{}",
        stdout(&out)
    );
    let same = calls.replace("f(y, x, 8)", "f(x, x, 8)");
    let (out, _dir) = map_text("c.c", &same, &[]);
    assert!(!stdout(&out).contains("#pragma omp"), "{}", stdout(&out));
}

#[test]
fn cuda_writes_lifted_loops_and_direct_kernels() {
    if !cc_available() {
        return;
    }
    let out = map(
        &examples_c(),
        &["jacobi2d.c", "--target", "cuda", "--report"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    assert!(report.contains("target Cuda"));
    assert!(report.contains("communication specialisation"), "{report}");
    // The initialisation nest, not lifted, runs as a direct kernel.
    assert!(
        report.contains("memory specialisation applied in the CUDA kernel")
            || report.contains("nest main:12 (lines 12-16): parallel, mapped"),
        "{report}"
    );
    assert!(!report.contains("it has no CUDA kernel"), "{report}");
    let out = map(&examples_c(), &["jacobi2d.c", "--target", "cuda"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("cudaLaunchKernel"));
    assert!(stdout(&out).contains("runs as the CUDA kernel nest_main_12"));
}

#[test]
fn direct_cuda_kernels_put_small_read_only_arrays_in_constant_memory() {
    if !cc_available() {
        return;
    }
    let out = map(&examples_c(), &["conv2d.c", "--target", "cuda"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("__constant__ float stencilc_const_nest_main_20_filter[25];"),
        "{text}"
    );
    assert!(
        text.contains("cudaMemcpyToSymbol(stencilc_direct::stencilc_const_nest_main_20_filter, filter, sizeof(filter))"),
        "{text}"
    );
    assert!(
        text.contains("const float *__restrict__ image, float *__restrict__ out"),
        "{text}"
    );
}

#[test]
fn profile_ranks_the_nests_of_the_original_by_time() {
    if !cc_available() {
        return;
    }
    let out = map(&examples_c(), &["jacobi2d.c", "--profile"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(" 1. "), "{text}");
    assert!(text.contains("main:18"), "{text}");
    assert!(text.contains("main:19"), "{text}");
}

pub(super) fn opencl_available() -> bool {
    let probe = stencilc::exec::opencl::probe()
        .map(|_| ())
        .map_err(|e| e.to_string());
    common::runtime_available("opencl", probe)
}

/// The OpenCL glue is compiled against the system's `CL/cl.h` and `libOpenCL`.
pub(super) fn opencl_headers_available() -> bool {
    let dir = tempfile::tempdir().unwrap();
    let probe_c = dir.path().join("probe.c");
    std::fs::write(&probe_c, "#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\nint main(void) { cl_uint n; return clGetPlatformIDs(0, NULL, &n) == CL_SUCCESS ? 0 : 1; }\n").unwrap();
    let built = Command::new("cc")
        .arg(&probe_c)
        .arg("-o")
        .arg(dir.path().join("probe"))
        .arg("-lOpenCL")
        .output();
    let probe = match built {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(format!(
            "cc cannot build against CL/cl.h and -lOpenCL: {}",
            stderr(&o)
        )),
        Err(e) => Err(e.to_string()),
    };
    common::runtime_available("opencl-headers", probe)
}

#[test]
fn opencl_kernels_compute_what_the_originals_compute() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in EXAMPLES {
        let file = format!("{name}.c");
        let mapped_path = dir.path().join(format!("{name}.cl.c"));
        let out = map(
            &examples_c(),
            &[
                &file,
                "--target",
                "opencl",
                "-o",
                mapped_path.to_str().unwrap(),
            ],
        );
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        let mapped = std::fs::read_to_string(&mapped_path).unwrap();
        let original = compile_and_run(
            &examples_c().join(&file),
            &dir.path().join(format!("{name}.orig")),
            false,
        );
        let ran = build_and_run(
            &mapped_path,
            &dir.path().join(format!("{name}.cl")),
            &["-lOpenCL"],
        );
        // Floating-point sums stay on the CPU for OpenCL, so every line is bit-identical.
        assert_eq!(original, ran, "{name}");
        assert!(
            mapped.contains("runs as the OpenCL kernel")
                || mapped.contains("lifted into an ir::Program"),
            "{name}: no kernel"
        );
        if ["jacobi2d", "heat3d", "jacobi2d_swap", "rician3d"].contains(name) {
            assert!(
                mapped.contains("the arrays stay on the device across all steps"),
                "{name}: the time loop is not lifted"
            );
        }
    }
}

#[test]
fn opencl_output_of_jacobi() {
    if !cc_available() {
        return;
    }
    let out = map(&examples_c(), &["jacobi2d.c", "--target", "opencl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    insta::assert_snapshot!("map_opencl_jacobi2d", stdout(&out));
}

#[test]
fn direct_kernels_put_small_read_only_arrays_in_constant_memory() {
    if !cc_available() {
        return;
    }
    let out = map(&examples_c(), &["conv2d.c", "--target", "opencl"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let program = stdout(&out);
    assert!(
        program.contains("__constant float *restrict filter, __global const float *restrict image, __global float *restrict out"),
        "{program}"
    );
    let out = map(
        &examples_c(),
        &["conv2d.c", "--target", "opencl", "--report"],
    );
    assert!(stdout(&out).contains(
        "memory specialisation applied in the OpenCL kernel: `filter` in constant memory"
    ));
}
