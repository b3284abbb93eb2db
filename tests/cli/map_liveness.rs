//! `stencilc map`: what a nest leaves live. A scalar the nest writes (a loop
//! variable declared outside its loop, a private temporary) is live when a
//! path after the nest reads it before assigning it, including the next trip
//! of an enclosing loop; live ones get `lastprivate` (OpenMP), are set by the
//! host glue or keep the nest on the CPU (OpenCL), and block lifting; dead
//! ones do not. Every program is run mapped and compared with the original.

use super::map::{
    assert_openmp_prints_as_written, build_and_run, cc_available, compile_and_run, map, map_text,
    opencl_available, opencl_headers_available, stderr, stdout,
};
use super::map_lift::assert_opencl_matches;

/// `s += j + t` at the top of the time loop reads what the nests below left
/// on the previous trip: `t` (private in the first nest) and `j` (the
/// second nest's variable). The first nest's `i` is dead: the next
/// statement to touch it is the loop `for (i = 0; ...)`.
const NEXT_TRIP: &str = "#include <stdio.h>\n\
     #define N 100\n\
     static double a[N], b[N];\n\
     int main(void) {\n\
     \x20   int i, j = 0;\n\
     \x20   double t = 0.0, s = 0.0;\n\
     \x20   for (i = 0; i < N; i++) a[i] = i * 0.25;\n\
     \x20   for (int it = 0; it < 3; it++) {\n\
     \x20       s += j + t;\n\
     \x20       for (i = 0; i < N; i++) {\n\
     \x20           t = a[i] + it;\n\
     \x20           b[i] = t * 0.5;\n\
     \x20       }\n\
     \x20       for (j = 0; j < N; j++)\n\
     \x20           a[j] = b[j] + 1.0;\n\
     \x20   }\n\
     \x20   printf(\"%.17g %.17g\\n\", s, a[N - 1]);\n\
     \x20   return 0;\n}\n";

#[test]
fn a_value_read_on_the_next_trip_of_an_enclosing_loop_is_live() {
    if !cc_available() {
        return;
    }
    let (out, dir) = map_text("trip.c", NEXT_TRIP, &["--target", "c", "-o", "trip.omp.c"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mapped = std::fs::read_to_string(dir.path().join("trip.omp.c")).unwrap();
    let pragmas: Vec<&str> = mapped
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#pragma omp "))
        .collect();
    assert_eq!(
        pragmas,
        [
            "parallel for",
            "parallel for lastprivate(t)",
            "parallel for lastprivate(j)"
        ],
        "{mapped}"
    );
    assert_openmp_prints_as_written(dir.path(), "trip.c");
}

/// The same program for OpenCL: the nest leaving `t` stays on the CPU, and
/// the glue sets `j` as its loop leaves it.
#[test]
fn a_value_read_on_the_next_trip_is_kept_on_opencl() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let (out, dir) = map_text("trip.c", NEXT_TRIP, &["--target", "opencl", "--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    for expected in [
        "nest main:10 (lines 10-13): parallel, stays on the CPU",
        "`t` is read after the nest, and a kernel leaves its last value on the device",
        "nest main:14 (lines 14-15): parallel, mapped (parallel loops: j)",
    ] {
        assert!(report.contains(expected), "{expected:?} not in:\n{report}");
    }
    let program = assert_opencl_prints_as_written(dir.path(), "trip.c");
    assert!(
        program.contains("j = (0) < (100) ? (100) : (0);"),
        "{program}"
    );
}

/// Maps `name` in `dir` with `--target opencl`, runs it on OpenCL and the
/// original with cc, asserts they print the same and returns the mapped
/// program.
fn assert_opencl_prints_as_written(dir: &std::path::Path, name: &str) -> String {
    let mapped = name.replace(".c", ".cl.c");
    let out = map(dir, &[name, "--target", "opencl", "-o", &mapped]);
    assert!(out.status.success(), "{}", stderr(&out));
    let original = compile_and_run(&dir.join(name), &dir.join("o"), false);
    let on_opencl = build_and_run(&dir.join(&mapped), &dir.join("m"), &["-lOpenCL"]);
    assert_eq!(original, on_opencl);
    std::fs::read_to_string(dir.join(mapped)).unwrap()
}

/// Scalars each nest assigns before reading (`t`, and `k` of an inner loop)
/// do not tie one nest to the next: every nest is a kernel.
#[test]
fn scalars_assigned_before_they_are_read_do_not_keep_a_nest_on_the_cpu() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let text = "#include <stdio.h>\n\
                static double A[16][8], B[16];\n\
                int main(void) {\n\
                \x20   int i, k;\n\
                \x20   double t;\n\
                \x20   for (i = 0; i < 16; i++)\n\
                \x20       for (k = 0; k < 8; k++)\n\
                \x20           A[i][k] = i + 0.5 * k;\n\
                \x20   for (i = 0; i < 16; i++) {\n\
                \x20       t = 0.0;\n\
                \x20       for (k = 0; k < 8; k++)\n\
                \x20           t += A[i][k];\n\
                \x20       B[i] = t;\n\
                \x20   }\n\
                \x20   for (i = 0; i < 16; i++) {\n\
                \x20       t = B[i] * 2.0;\n\
                \x20       for (k = 0; k < 8; k++)\n\
                \x20           A[i][k] = t - k;\n\
                \x20   }\n\
                \x20   for (i = 0; i < 16; i++)\n\
                \x20       printf(\"%.17g %.17g\\n\", B[i], A[i][7]);\n\
                \x20   return 0;\n}\n";
    let (out, dir) = map_text("dead.c", text, &["--target", "opencl", "--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    // The first two nests fuse; the fused one and the third are kernels.
    assert_eq!(
        report.matches(", mapped (parallel loops: i)").count(),
        2,
        "{report}"
    );
    assert!(!report.contains("read after the nest"), "{report}");
    assert_opencl_prints_as_written(dir.path(), "dead.c");
}

/// Sibling loops sharing `k`, one assigning the outer `k` and one declaring
/// its own: the outer `k` is written by every thread, so it is private.
#[test]
fn a_variable_one_sibling_loop_declares_and_another_assigns_is_private() {
    if !cc_available() {
        return;
    }
    let text = "#include <stdio.h>\n\
                static double a[64][8], b[64][8];\n\
                int main(void) {\n\
                \x20   int k = -1;\n\
                \x20   for (int i = 0; i < 64; i++) {\n\
                \x20       for (k = 0; k < 8; k++)\n\
                \x20           a[i][k] = i + k;\n\
                \x20       for (int k = 0; k < 8; k++)\n\
                \x20           b[i][k] = a[i][k] * 2.0;\n\
                \x20   }\n\
                \x20   for (int i = 0; i < 64; i += 9)\n\
                \x20       printf(\"%.17g\\n\", b[i][7]);\n\
                \x20   return 0;\n}\n";
    let (out, dir) = map_text("siblings.c", text, &["--target", "c", "-o", "sib.omp.c"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mapped = std::fs::read_to_string(dir.path().join("sib.omp.c")).unwrap();
    assert!(
        mapped.contains("#pragma omp parallel for private(k)\n"),
        "{mapped}"
    );
    assert_openmp_prints_as_written(dir.path(), "siblings.c");
}

/// A C89 time loop (`int t, i, j;` at the top) lifts into stencilc's
/// kernels: `i` and `j` are assigned again before anything reads them.
const C89_JACOBI: &str = "#include <stdio.h>\n\
     #define N 40\n\
     static double A[N][N], B[N][N];\n\
     int main(void) {\n\
     \x20   int t, i, j;\n\
     \x20   for (i = 0; i < N; i++)\n\
     \x20       for (j = 0; j < N; j++) {\n\
     \x20           A[i][j] = (i * 7 + j * 3) % 11;\n\
     \x20           B[i][j] = 0.0;\n\
     \x20       }\n\
     \x20   for (t = 0; t < 5; t++) {\n\
     \x20       for (i = 1; i < N - 1; i++)\n\
     \x20           for (j = 1; j < N - 1; j++)\n\
     \x20               B[i][j] = 0.25 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);\n\
     \x20       for (i = 1; i < N - 1; i++)\n\
     \x20           for (j = 1; j < N - 1; j++)\n\
     \x20               A[i][j] = B[i][j];\n\
     \x20   }\n\
     \x20   for (i = 0; i < N; i += 7)\n\
     \x20       printf(\"%.17g\\n\", A[i][i]);\n\
     \x20   printf(\"%d\\n\", t);\n\
     \x20   return 0;\n}\n";

#[test]
fn loop_variables_declared_at_the_top_lift_when_nothing_reads_them_after() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    assert_opencl_matches("c89", C89_JACOBI);
    // Reading `j` after the loop keeps the lift out, with the reason.
    let read_after = C89_JACOBI.replace("printf(\"%d\\n\", t);", "printf(\"%d %d\\n\", t, j);");
    let (out, _dir) = map_text("c89.c", &read_after, &["--target", "opencl", "--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    let expected = "loop variable `j` is declared outside its loop and read after the nest";
    assert!(report.contains(expected), "{expected:?} not in:\n{report}");
}

/// Values read after the nest in ways a first version of the analysis
/// missed (found by a review that ran the programs): through a block that
/// declares the same name, by the caller (a global a block-local hides, an
/// `extern`), through a pointer taken before the nest, and after a `while`.
#[test]
fn values_read_past_shadowing_blocks_callers_and_pointers_stay_live() {
    if !cc_available() {
        return;
    }
    let text = "#include <stdio.h>\n\
                double g, h, a[100];\n\
                static void show(double *p) { printf(\"%g\\n\", *p); }\n\
                static void f(void) {\n\
                \x20   extern double h;\n\
                \x20   int i;\n\
                \x20   for (i = 0; i < 100; i++) { g = i * 2.0; h = g + 1.0; a[i] = h; }\n\
                \x20   if (a[5] > 100) { double g = 3; a[1] = g; }\n\
                }\n\
                int main(void) {\n\
                \x20   int i, k = 0; double t = -1, u = -1; double *p = &u;\n\
                \x20   f();\n\
                \x20   for (i = 0; i < 100; i++) { t = i * 2.0; u = t; a[i] = t + u; }\n\
                \x20   { double t; t = 5; a[0] += t; }\n\
                \x20   while (k < 2) k++;\n\
                \x20   show(p);\n\
                \x20   printf(\"%g %g %g %g %d\\n\", t, g, h, a[0], i);\n\
                \x20   return 0;\n}\n";
    let (out, dir) = map_text("reads.c", text, &["--target", "c", "-o", "reads.omp.c"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mapped = std::fs::read_to_string(dir.path().join("reads.omp.c")).unwrap();
    for pragma in [
        "#pragma omp parallel for lastprivate(g, h)",
        "#pragma omp parallel for lastprivate(i, t, u)",
    ] {
        assert!(mapped.contains(pragma), "{pragma:?} not in:\n{mapped}");
    }
    assert_openmp_prints_as_written(dir.path(), "reads.c");
}

/// `lastprivate` brings back the last iteration's copy, and only when some
/// iteration ran: a loop variable live after the nest keeps it sequential
/// when the last iteration may skip its loop (`j` under an `if`), or when
/// the parallel loop may not run at all (`argc - 1` iterations; C still sets
/// `i` to the lower bound).
#[test]
fn loop_variables_lastprivate_would_not_bring_back_keep_the_nest_sequential() {
    if !cc_available() {
        return;
    }
    let text = "#include <stdio.h>\n\
                double a[1000][10];\n\
                int main(int argc, char **argv) {\n\
                \x20   int i, j = -5;\n\
                \x20   for (i = 0; i < 1000; i++) {\n\
                \x20       if (i < 50) {\n\
                \x20           for (j = 0; j < i % 7 + 1; j++) a[i][j] = i + j;\n\
                \x20       }\n\
                \x20   }\n\
                \x20   printf(\"%d %d\\n\", i, j);\n\
                \x20   i = 77;\n\
                \x20   for (i = 5; i < argc - 1; i++) a[i][0] = 1.0;\n\
                \x20   printf(\"%d %s %g\\n\", i, argv[0] ? \"\" : \"-\", a[3][4]);\n\
                \x20   return 0;\n}\n";
    let (out, dir) = map_text("last.c", text, &["--target", "c", "--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = stdout(&out);
    for expected in [
        "`j` is read after the nest, and its loop is not reached in every iteration of `i`",
        "`i` is read after the nest, and the parallel loops may run no iteration",
    ] {
        assert!(report.contains(expected), "{expected:?} not in:\n{report}");
    }
    assert_openmp_prints_as_written(dir.path(), "last.c");
}
