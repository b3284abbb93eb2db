//! `stencilc map`'s lift of a convergence loop: a time loop whose step
//! resets a scalar, updates it in a nest (`if (c) converged = false;`,
//! `s += e`) and ends with `if (test) break;` becomes an iterate with a
//! reduction and a check. The interpreter, from the arrays the C program
//! holds before the loop, stops at the step C stops at and leaves the arrays
//! bit for bit as C does (`cc -O2 -ffp-contract=off`); `--target opencl` on
//! PoCL prints what the original prints. A sum is reduced in another order
//! than the C loop: its value is compared within 1e-12 relative, and the
//! tolerances are chosen away from every step's sum. What is not safe stays
//! on the CPU with the reason.

use std::path::{Path, PathBuf};

use stencilc::front::c::{lower_unit, CFile};
use stencilc::ir::{ReduceOp, Value};
use stencilc::map::lift::converge::Combine;
use stencilc::map::{plan_file, Target};
use stencilc::model::device::Device;

use super::map::{cc_available, map, opencl_available, opencl_headers_available};
use super::map_lift::{assert_opencl_matches, lift_against_c, lifted};

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/c")
        .join(name)
}

/// Two relaxations on a 41×29 grid with a rim held at 1: one stops when the
/// sum of the step's changes falls below a tolerance (declared outside, the
/// time variable too, so the step count is returned), one keeps an `||`
/// flag set in a nest of its own (which writes no array) and stops when no
/// point moved more than a tolerance. Both stop at step 27 of at most 200:
/// the sums around it are 75.57 and 74.97 against 75, the largest changes
/// 0.00771 and 0.00739 against 0.0075.
const CONVERGE: &str = r#"#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#define N 41
#define M 29
static double A[N][M], B[N][M];
static int relax_sum(int steps, double tol) {
    int t;
    double change;
    for (t = 0; t < steps; t++) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++)
                B[i][j] = A[i][j];
        change = 0.0;
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < M - 1; j++) {
                A[i][j] = 0.25 * (B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1]);
                change += fabs(A[i][j] - B[i][j]);
            }
        if (change < tol)
            break;
    }
    return t;
}
static int relax_flag(int steps, double tol) {
    int t = 0;
    bool moving;
    for (t = 0; t < steps; t++) {
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++)
                B[i][j] = A[i][j];
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < M - 1; j++)
                A[i][j] = 0.2 * (B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1] + B[i][j]);
        moving = false;
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < M - 1; j++)
                if (fabs(A[i][j] - B[i][j]) > tol)
                    moving = true;
        if (!moving)
            break;
    }
    return t;
}
static void fill(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            A[i][j] = (i == 0 || j == 0) ? 1.0 : (double)((i * 7 + j * 3) % 10) / 10.0;
}
static void show(int steps) {
    double s = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            s = s * 0.5 + A[i][j] + 3 * B[i][j];
    printf("%d steps: %.17g %.17g %.17g\n", steps, s, A[7][7], B[39][27]);
}
int main(void) {
    fill();
    show(relax_sum(200, 75.0));
    fill();
    show(relax_flag(200, 0.0075));
    return 0;
}
"#;

/// Writes `text` to a fresh directory and plans it for `--target c`.
fn plan_text(text: &str) -> (stencilc::map::FilePlan, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("converge.c");
    std::fs::write(&path, text).unwrap();
    let file = CFile::load(&path).unwrap();
    let unit = lower_unit(&file);
    (
        plan_file(&file, &unit, Target::C, Device::default_device()),
        dir,
    )
}

/// The report's lift line of the time loop in function `function`.
fn lift_line(text: &str, function: &str) -> String {
    let (plan, _dir) = plan_text(text);
    plan.nests
        .iter()
        .find(|n| n.function == function && !n.inner.is_empty())
        .and_then(|n| n.lift.clone())
        .unwrap_or_default()
}

fn value_f64(v: Value) -> f64 {
    match v {
        Value::Int(x) => f64::from(x),
        Value::Long(x) => x as f64,
        Value::Float(x) => f64::from(x),
        Value::Double(x) => x,
    }
}

#[test]
fn the_rician_convergence_loop_stops_on_the_interpreter_where_c_stops() {
    if !cc_available() {
        return;
    }
    let (nests, lines) = lifted(&example("rician3d.c"));
    let nest = nests
        .iter()
        .find(|n| n.lines.0 == 33)
        .expect("the time loop lifts");
    let lift = nest.lifted.as_ref().unwrap();
    let check = lift.check.as_ref().expect("a check");
    assert_eq!(
        (check.combine, check.op, check.reordered),
        (Combine::Flag { reset: 1 }, ReduceOp::Min, false)
    );
    assert_eq!(check.lines, (53, 76, 80));
    assert_eq!(lift.program.iterate.as_ref().unwrap().reductions.len(), 1);
    // `F` is read on the interior only: its grid takes `G`'s rows, its
    // copies only the rows the nests reach.
    let f = lift.arrays.iter().find(|a| a.c_name == "F").unwrap();
    assert_eq!(f.rows.as_deref(), Some("dim2 - 1"));
    let (c, summary) = lift_against_c("rician3d", &lines, nest, None);
    assert_eq!(c.steps, 8, "the Rician driver converges at its 8th step");
    assert!(summary.stopped_by_check);
    assert_eq!(summary.reductions[0].1, Some(Value::Int(1)));
}

#[test]
fn a_sum_and_a_flag_in_a_nest_of_its_own_stop_where_c_stops() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("converge.c");
    std::fs::write(&path, CONVERGE).unwrap();
    let (nests, lines) = lifted(&path);
    let sum = nests.iter().find(|n| n.function == "relax_sum").unwrap();
    let check = sum.lifted.as_ref().unwrap().check.clone().unwrap();
    assert_eq!((check.op, check.reordered), (ReduceOp::Sum, true));
    assert!(
        check.describe().contains("another order than the C loop"),
        "{}",
        check.describe()
    );
    let (c, summary) = lift_against_c("relax_sum", &lines, sum, Some("change"));
    assert_eq!(c.steps, 28, "the sum stops at step 27");
    let reduced = value_f64(summary.reductions[0].1.unwrap());
    assert!(
        (reduced - c.tested).abs() <= 1e-12 * c.tested.abs(),
        "the sum {reduced} against C's {}",
        c.tested
    );

    let flag = nests.iter().find(|n| n.function == "relax_flag").unwrap();
    let lift = flag.lifted.as_ref().unwrap();
    let check = lift.check.clone().unwrap();
    assert_eq!(
        (check.combine, check.op, check.reordered),
        (Combine::Flag { reset: 0 }, ReduceOp::Max, false)
    );
    assert_eq!(
        lift.program.iterate.as_ref().unwrap().stencils.len(),
        2,
        "the nest that only sets the flag is no stencil"
    );
    let (c, summary) = lift_against_c("relax_flag", &lines, flag, Some("moving"));
    assert_eq!(c.steps, 28, "the flag stops at step 27");
    assert_eq!(c.tested, 0.0, "nothing moved at the last step");
    assert_eq!(summary.reductions[0].1, Some(Value::Int(0)));
}

#[test]
fn convergence_loops_run_on_opencl_as_the_originals() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let (out, _dir) = {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("converge.c"), CONVERGE).unwrap();
        (
            map(
                dir.path(),
                &["converge.c", "--target", "opencl", "--report"],
            ),
            dir,
        )
    };
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        report.matches("communication specialisation").count(),
        2,
        "both time loops run on the device:\n{report}"
    );
    // Each time loop stops at step 27 on the device, as printed.
    assert_opencl_matches("converge", CONVERGE);
}

#[test]
fn the_lifted_rician_program_and_its_report() {
    if !cc_available() {
        return;
    }
    let out = map(&example(""), &["rician3d.c", "--json"]);
    assert!(out.status.success());
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let time_loop = &plan["nests"][0];
    let sdsl = time_loop["lift_sdsl"].as_str().expect("lifted");
    insta::assert_snapshot!("map_lift_rician3d_sdsl", sdsl);
    let transformations = time_loop["transformations"].to_string();
    assert!(
        transformations.contains("reduction `converged` (min) on the device"),
        "{transformations}"
    );
    let out = map(
        &example(""),
        &["rician3d.c", "--target", "opencl", "--report"],
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("stopped early by reduction `converged` (min) of `converged`"),
        "{report}"
    );
    assert!(
        report.contains("stencilc_rician3d_33_s2_with_converged"),
        "{report}"
    );
}

/// Row pointers swapped after the nest, then the test: the sums around
/// the stop are 6.10 and 5.38 against 5.7, so it stops after 11 steps (an
/// odd count: the pointers are left crossed) of at most 200.
const SWAPPED: &str = r#"#include <math.h>
#include <stdio.h>
#define M 29
static int relax(int n, int steps, double tol, double (*restrict u)[M], double (*restrict v)[M]) {
    int t;
    double change;
    for (t = 0; t < steps; t++) {
        change = 0.0;
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < M - 1; j++) {
                v[i][j] = 0.25 * (u[i - 1][j] + u[i + 1][j] + u[i][j - 1] + u[i][j + 1]);
                change += fabs(v[i][j] - u[i][j]);
            }
        double (*tmp)[M] = u;
        u = v;
        v = tmp;
        if (change < tol)
            break;
    }
    return t;
}
static double A[41][M], B[41][M];
int main(void) {
    for (int i = 0; i < 41; i++)
        for (int j = 0; j < M; j++)
            A[i][j] = B[i][j] = (i == 0 || j == 0) ? 1.0 : (double)((i * 3 + j * 5) % 11) / 11.0;
    int t = relax(40, 200, 5.7, A, B);
    double s = 0;
    for (int i = 0; i < 41; i++)
        for (int j = 0; j < M; j++)
            s = s * 0.5 + A[i][j] + 3 * B[i][j];
    printf("%d steps: %.17g %.17g %.17g\n", t, s, A[7][7], B[39][27]);
    return 0;
}
"#;

#[test]
fn a_convergence_test_after_a_pointer_swap_stops_where_c_stops() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("swapped.c");
    std::fs::write(&path, SWAPPED).unwrap();
    let (nests, lines) = lifted(&path);
    assert_eq!(nests.len(), 1, "the time loop lifts");
    let lift = nests[0].lifted.as_ref().unwrap();
    assert_eq!(lift.arrays[0].swapped_with.as_deref(), Some("v"));
    let (c, summary) = lift_against_c("swapped", &lines, &nests[0], Some("change"));
    assert_eq!(c.steps, 11);
    let reduced = value_f64(summary.reductions[0].1.unwrap());
    assert!((reduced - c.tested).abs() <= 1e-12 * c.tested.abs());
    if opencl_available() && opencl_headers_available() {
        assert_opencl_matches("swapped", SWAPPED);
    }
    // The test before the swap would leave the pointers as C does not.
    let early = SWAPPED.replace(
        "        double (*tmp)[M] = u;\n        u = v;\n        v = tmp;\n        if (change < tol)\n            break;\n",
        "        if (change < tol)\n            break;\n        double (*tmp)[M] = u;\n        u = v;\n        v = tmp;\n",
    );
    assert_ne!(early, SWAPPED);
    let (plan, _dir) = plan_text(&early);
    let line = plan.nests[0].lift.clone().unwrap_or_default();
    assert!(
        line.contains("the convergence test (line 14) is not the last statement of the step"),
        "{line}"
    );
}

/// Each change to [`CONVERGE`] keeps `relax_sum` or `relax_flag` (named
/// first) on the CPU, with the reason the report gives.
#[test]
fn unsafe_convergence_tests_stay_on_the_cpu_with_the_reason() {
    if !cc_available() {
        return;
    }
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "relax_flag",
            "    return t;\n}\nstatic void fill",
            "    return moving ? -t : t;\n}\nstatic void fill",
            "the tested scalar `moving` is used otherwise (line 43)",
        ),
        (
            "relax_sum",
            "    double change;\n",
            "    double change = 1.0, before = change;\n",
            "the tested scalar `change` is used otherwise (line 9)",
        ),
        (
            "relax_sum",
            "change += fabs(A[i][j] - B[i][j]);",
            "change = fabs(A[i][j] - B[i][j]) - change;",
            "stays on the CPU",
        ),
        (
            "relax_sum",
            "change += fabs(A[i][j] - B[i][j]);",
            "change = fmax(change, fabs(A[i][j] - B[i][j]));",
            "`change` is updated at line 18 other than as a reduction by a commutative, associative operator",
        ),
        (
            "relax_sum",
            "        if (change < tol)\n            break;",
            "        if (change < tol || t > 150)\n            break;",
            "the convergence test (line 20): the time variable `t` is used outside",
        ),
        (
            "relax_sum",
            "        if (change < tol)\n            break;",
            "        if (change < tol) {\n            printf(\"done\\n\");\n            break;\n        }",
            "besides loop nests, pointer swaps and a convergence test",
        ),
        (
            "relax_sum",
            "        change = 0.0;\n",
            "",
            "`change` is not reset at the start of each step",
        ),
        (
            "relax_sum",
            "        change = 0.0;\n",
            "        change = 1.0;\n",
            "`change` is reset to 1 (line 14), not to 0, the identity of its sum",
        ),
        (
            "relax_flag",
            "                    moving = true;\n        if (!moving)",
            "                    moving = true;\n        for (int i = 0; i < N; i++)\n            for (int j = 0; j < M; j++)\n                B[i][j] = 0.5;\n        if (!moving)",
            "reads `B`, which a later nest of the step writes",
        ),
        (
            "relax_flag",
            "if (fabs(A[i][j] - B[i][j]) > tol)",
            "if (fabs(A[i][j] - B[i][j + 1]) > tol)",
            // The nest that only reads lifts with reads at offsets: what an
            // earlier nest wrote is complete.
            "lifted into an ir::Program",
        ),
    ];
    for (function, from, to, reason) in cases {
        let text = CONVERGE.replace(from, to);
        assert_ne!(text, CONVERGE, "{from}");
        let line = lift_line(&text, function);
        assert!(
            line.contains(reason),
            "{function}: `{to}`: expected `{reason}` in `{line}`"
        );
    }
}

/// `--target cuda` writes the Rician loop with its check: the kernels
/// compile with NVRTC (tested with every example in `map_lift`), the host
/// part has the reduction's launches and reads its value back.
#[test]
fn the_rician_cuda_host_code_reads_the_check_back() {
    if !cc_available() {
        return;
    }
    let out = map(Path::new(&example("")), &["rician3d.c", "--target", "cuda"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for piece in [
        "stencilc_rician3d_33_kernels::stencilc_rician3d_33_s2_with_converged",
        "stencilc_rician3d_33_kernels::stencilc_rician3d_33_converged_final",
        "stencilc_cuda_from_device(stencilc_red0_result, &stencilc_red0_value, sizeof stencilc_red0_value);",
        "{ converged = (stencilc_red0_value > 0); if (converged) { break; } }",
    ] {
        assert!(text.contains(piece), "{piece}");
    }
}
