//! `stencilc map`'s loop transformations (interchange, fusion, fission,
//! normalisation, strip-mining, tiling) and the communication specialisation
//! of direct kernels in a time loop: each small program under tests/data/map is
//! mapped with `--target c` and `--target opencl`, and the original (cc) and
//! the mapped program are run and their outputs compared bit for bit. Each
//! transformation has a program where it applies (the mapped text shows it)
//! and one where it is illegal or refused (the report says why, the nest is
//! left as written).

use std::path::PathBuf;
use std::process::Output;

use super::map::{
    build_and_run, cc_available, compile_and_run, map, opencl_available, opencl_headers_available,
};

const PROGRAMS: &[&str] = &[
    "interchange",
    "interchange_illegal",
    "fusion",
    "fusion_illegal",
    "fission",
    "fission_illegal",
    "normalise",
    "normalise_illegal",
    "normalise_dead",
    "normalise_macro",
    "stripmine",
    "stripmine_illegal",
    "tiling",
    "resident",
    "resident_call",
    "resident_printf",
    "callee",
];

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/map")
}

fn text(o: &Output) -> String {
    assert!(
        o.status.success(),
        "stencilc map failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn report(name: &str, target: &str) -> String {
    text(&map(
        &data(),
        &[&format!("{name}.c"), "--target", target, "--report"],
    ))
}

fn program(name: &str, target: &str) -> String {
    text(&map(&data(), &[&format!("{name}.c"), "--target", target]))
}

/// The lines of `text` from the first holding `from`, `count` of them, trimmed.
fn lines_from(text: &str, from: &str, count: usize) -> Vec<String> {
    text.lines()
        .skip_while(|l| !l.contains(from))
        .take(count)
        .map(|l| l.trim().to_string())
        .collect()
}

#[test]
fn transformed_programs_compute_what_the_originals_compute() {
    if !cc_available() {
        return;
    }
    let opencl = opencl_available() && opencl_headers_available();
    let dir = tempfile::tempdir().unwrap();
    for name in PROGRAMS {
        let original = compile_and_run(
            &data().join(format!("{name}.c")),
            &dir.path().join(format!("{name}.orig")),
            false,
        );
        assert!(!original.is_empty(), "{name}: no output");
        let omp = dir.path().join(format!("{name}.omp.c"));
        std::fs::write(&omp, program(name, "c")).unwrap();
        let mapped = compile_and_run(&omp, &dir.path().join(format!("{name}.omp")), true);
        assert_eq!(original, mapped, "{name}: OpenMP output differs");
        if opencl {
            let cl = dir.path().join(format!("{name}.cl.c"));
            std::fs::write(&cl, program(name, "opencl")).unwrap();
            let mapped = build_and_run(&cl, &dir.path().join(format!("{name}.cl")), &["-lOpenCL"]);
            assert_eq!(original, mapped, "{name}: OpenCL output differs");
        }
    }
}

#[test]
fn interchange_moves_the_contiguous_loop_innermost() {
    let r = report("interchange", "c");
    assert_eq!(
        r.matches("interchange: (j, i) becomes (i, j)").count(),
        2,
        "{r}"
    );
    // The iterate of one launch per column became one nest with `i` parallel.
    assert!(
        r.contains("nest prefix:24 (lines 24-26): stencil, mapped (parallel loops: i)"),
        "{r}"
    );
    let p = program("interchange", "c");
    assert_eq!(
        lines_from(&p, "static void scale", 4)[1..],
        [
            "#pragma omp parallel for collapse(2)",
            "for (int i = 0; i < N; i++)",
            "for (int j = 0; j < M; j++)",
        ],
        "{p}"
    );
}

#[test]
fn interchange_that_would_reverse_a_dependence_is_not_applied() {
    let r = report("interchange_illegal", "c");
    assert!(
        r.contains("not applied: the flow dependence on `a` (lines 16 and 16), distance (j: 1, i: -1) would become (i: -1, j: 1), lexicographically negative"),
        "{r}"
    );
    let p = program("interchange_illegal", "c");
    assert_eq!(
        lines_from(&p, "for (int j = 1; j < M; j++)", 3),
        [
            "for (int j = 1; j < M; j++)",
            "#pragma omp parallel for",
            "for (int i = 0; i < N - 1; i++)",
        ],
        "{p}"
    );
}

#[test]
fn adjacent_conformable_nests_are_fused() {
    let r = report("fusion", "c");
    assert!(
        r.contains("fusion: the nest at lines 18-22 fused into this one"),
        "{r}"
    );
    // Two parallel nests over rows 1.. became one kernel; the first nest (rows 0..) does not conform.
    assert!(r.contains("not applied: the loops do not conform"), "{r}");
    let p = program("fusion", "c");
    assert_eq!(p.matches("#pragma omp parallel for").count(), 2, "{p}");
    assert_eq!(
        lines_from(&p, "for (int i = 1; i < N; i++)", 8),
        [
            "for (int i = 1; i < N; i++)",
            "for (int j = 0; j < M; j++) {",
            "a[i][j] = 2.0f * b[i][j] + b[i - 1][j];",
            "float t = a[i][j] * a[i][j];",
            "c[i][j] = t + b[i][j];",
            "}",
            "for (int i = 1; i < N; i += 6)",
            "printf(\"c[%d][%d] = %.9g\\n\", i, i % M, c[i][i % M]);",
        ],
        "{p}"
    );
    let cl = report("fusion", "opencl");
    assert!(
        cl.contains("fusion: the nest at lines 18-22 fused into this one"),
        "{cl}"
    );
}

#[test]
fn a_fusion_preventing_dependence_keeps_the_nests_apart() {
    let r = report("fusion_illegal", "c");
    assert!(
        r.contains("not applied: fusion-preventing anti dependence on `a`"),
        "{r}"
    );
    let p = program("fusion_illegal", "c");
    assert!(
        p.contains("c[i][j] = (i + 1 < N ? a[i + 1][j] : 0.0f) + b[i][j];"),
        "{p}"
    );
    assert_eq!(p.matches("#pragma omp parallel for").count(), 2, "{p}");
}

#[test]
fn fission_maps_the_parallel_statement_and_keeps_the_recurrence() {
    let r = report("fission", "c");
    assert!(
        r.contains("fission: the loop `i` (lines 13-16) split into 2 loops at its statements: line 14 (parallel), line 15 (sequential: flow dependence on `c`"),
        "{r}"
    );
    let p = program("fission", "c");
    assert_eq!(
        lines_from(&p, "c[0] = 1.0;", 9)[1..],
        [
            "#pragma omp parallel for",
            "for (int i = 1; i < N; i++) {",
            "b[i] = a[i] * 0.5 + a[i - 1];",
            "}",
            "for (int i = 1; i < N; i++) {",
            "c[i] = c[i - 1] * 0.25 + b[i];",
            "}",
            "for (int i = 1; i < N; i += 97)",
        ],
        "{p}"
    );
}

#[test]
fn fission_across_a_dependence_cycle_is_not_applied() {
    let r = report("fission_illegal", "c");
    assert!(
        r.contains("fission of `i`: not applied: its statements depend on each other across iterations in a cycle no split breaks (flow dependence on `c` (lines 15 and 14), distance (i: 1))"),
        "{r}"
    );
    let p = program("fission_illegal", "c");
    assert_eq!(p.matches("#pragma omp parallel for").count(), 1, "{p}");
}

#[test]
fn a_strided_loop_is_normalised_for_the_kernel() {
    let r = report("normalise", "opencl");
    assert!(
        r.contains("normalisation: `i` ran from 1 by 2; now from 0 by 1 over ((N - 1) - 1 + 1) / 2 iterations, with `i` read as `(1 + 2 * i)`"),
        "{r}"
    );
    let p = program("normalise", "c");
    assert!(
        p.contains("for (int i = 0; i < ((N - 1) - 1 + 1) / 2; i++)"),
        "{p}"
    );
    assert!(
        p.contains(
            "a[(1 + 2 * i)][j] = b[(1 + 2 * i)][j] + 0.5 * b[(1 + 2 * i) + 1][j] + (1 + 2 * i);"
        ),
        "{p}"
    );
    // Both loops are work-item dimensions of the kernel.
    let cl = program("normalise", "opencl");
    assert!(cl.contains("get_global_id(1)"), "{cl}");
}

#[test]
fn a_strided_loop_whose_variable_lives_on_is_not_normalised() {
    let r = report("normalise_illegal", "c");
    assert!(
        r.contains("normalisation of `i` (step 3): not applied: `i` is declared outside the loop and read after the nest, where its value would change"),
        "{r}"
    );
    assert!(program("normalise_illegal", "c").contains("for (i = 2; i < N; i += 3)"));
}

/// The same loop over an outer `i` that the next loop assigns before
/// anything reads it: normalised, the new loop declaring its own `i`.
#[test]
fn a_strided_loop_over_a_dead_outer_variable_is_normalised() {
    let r = report("normalise_dead", "c");
    assert!(
        r.contains("normalisation: `i` ran from 2 by 3; now from 0 by 1"),
        "{r}"
    );
    assert!(program("normalise_dead", "c").contains("for (int i = 0; i < (N - 2 + 2) / 3; i++)"));
}

#[test]
fn a_rewrite_that_does_not_read_back_as_meant_is_dropped() {
    let r = report("normalise_macro", "c");
    assert!(
        r.contains("normalisation: not applied: the rewritten lines did not read back as the transformed nest"),
        "{r}"
    );
    assert!(program("normalise_macro", "c").contains("for (int i = 1; i < N - 1; i += 2)"));
}

#[test]
fn a_nest_over_the_grid_limits_is_strip_mined() {
    let r = report("stripmine", "opencl");
    assert!(
        r.contains("strip-mining: `i` (600000 iterations) needs 75000 blocks of 8 where the grid allows 65535; split into strips of 262144 (`ii`)"),
        "{r}"
    );
    assert!(!r.contains("[FAIL]"), "{r}");
    let p = program("stripmine", "c");
    assert!(
        p.contains("for (int i = ii; i < (ii + 262144 < ROWS ? ii + 262144 : ROWS); i++)"),
        "{p}"
    );
    // For OpenCL the strip loop launches the kernel once per strip.
    let cl = program("stripmine", "opencl");
    assert_eq!(
        lines_from(&cl, "for (int ii = 0; ii < ROWS; ii += 262144)", 2)[1],
        "{ /* stencilc map: nest main:12 (lines 12-14) runs as the OpenCL kernel nest_main_12 */",
        "{cl}"
    );
}

#[test]
fn an_inner_loop_over_the_grid_limits_is_tiled_with_its_tiles_outside_the_band() {
    let r = report("tiling", "opencl");
    assert!(
        r.contains("tiling: `j` (300000 iterations) needs 75000 blocks of 4 where the grid allows 65535; split into tiles of 131072 (`jj`), the tile loop moved outside `i`"),
        "{r}"
    );
    assert!(!r.contains("[FAIL]"), "{r}");
    let p = program("tiling", "c");
    assert_eq!(
        lines_from(&p, "for (int jj = 0; jj < Q; jj += 131072)", 4),
        [
            "for (int jj = 0; jj < Q; jj += 131072)",
            "#pragma omp parallel for collapse(3)",
            "for (int i = 0; i < P; i++)",
            "for (int j = jj; j < (jj + 131072 < Q ? jj + 131072 : Q); j++)",
        ],
        "{p}"
    );
}

#[test]
fn a_loop_declared_outside_its_for_is_not_tiled() {
    let r = report("stripmine_illegal", "opencl");
    assert!(
        r.contains("tiling of `j` (300000 iterations, over the grid's 65535 blocks of 4): not applied: the loop must have unit stride and declare `j` in its `for`"),
        "{r}"
    );
    assert!(r.contains("[FAIL] iteration sizes (eq. 3)"), "{r}");
}

#[test]
fn arrays_only_the_kernels_touch_stay_on_the_device_across_the_time_loop() {
    let r = report("resident", "opencl");
    assert!(
        r.contains("communication specialisation: `u`, `w` stay on the device across the steps of `t`: copied in once before the loop, `u` back once after it, not around each launch; `v` is copied around each launch: line 25 reads or writes it on the host"),
        "{r}"
    );
    let cl = program("resident", "opencl");
    assert_eq!(
        lines_from(&cl, "stay on the device during the loop at lines 20-26", 4)[1..],
        [
            "stencilc_cl_init();",
            "cl_mem d_u = stencilc_cl_to_device(u, sizeof(u));",
            "cl_mem d_w = stencilc_cl_to_device(w, sizeof(w));",
        ],
        "{cl}"
    );
    // Inside the loop, `u` is passed as it is; `v` is copied in and out.
    assert_eq!(cl.matches("cl_mem d_u =").count(), 2, "{cl}"); // the loop's and the initialisation's
    assert!(cl.contains("/* `u` is on the device already */"), "{cl}");
    // After the loop, `u` comes back; `w`, which no kernel in it writes, does not.
    assert_eq!(
        lines_from(
            &cl,
            "stencilc_cl_from_device(d_u, u, sizeof(u)); clReleaseMemObject(d_u);",
            2
        )[1],
        "clReleaseMemObject(d_w);",
        "{cl}"
    );
    let cuda = program("resident", "cuda");
    assert!(
        cuda.contains("cudaMemcpyToSymbol(stencilc_direct::stencilc_const_nest_main_21_w, d_w, sizeof(w), 0, cudaMemcpyDeviceToDevice)"),
        "{cuda}"
    );
    assert!(
        cuda.contains("void *d_u = stencilc_cuda_to_device(u, sizeof(u));"),
        "{cuda}"
    );
    assert!(
        cuda.contains("stencilc_cuda_from_device(d_u, u, sizeof(u)); cudaFree(d_u);"),
        "{cuda}"
    );
}

#[test]
fn a_call_in_the_time_loop_keeps_every_array_copied_around_each_launch() {
    let r = report("resident_call", "opencl");
    assert!(
        r.contains("communication specialisation: not applied: line 18 calls `nudge`, which may read or write the arrays on the host; each kernel launch copies its arrays"),
        "{r}"
    );
    assert!(!program("resident_call", "opencl").contains("stay on the device during the loop"));
}

/// `printf` in the time loop reads its arguments only: the array it prints
/// is copied around each launch, the other stays on the device.
#[test]
fn printing_in_the_time_loop_keeps_only_the_printed_array_on_the_host() {
    let r = report("resident_printf", "opencl");
    assert!(
        r.contains("communication specialisation: `u` stays on the device across the steps of `t`: copied in once before the loop, `u` back once after it, not around each launch; `v` is copied around each launch: line 22 reads or writes it on the host"),
        "{r}"
    );
}

#[test]
fn functions_of_scalars_are_copied_into_the_kernels_that_call_them() {
    let cl = program("callee", "opencl");
    assert!(
        cl.contains("float stencilc_clampf(float x, float lo, float hi)"),
        "{cl}"
    );
    assert!(
        cl.contains("b[i] = stencilc_smooth(a[(i - 1)], a[i], a[(i + 1)]);"),
        "{cl}"
    );
    // Callees before callers, each once.
    let clamp = cl.find("float stencilc_clampf(").unwrap();
    assert!(clamp < cl.find("float stencilc_smooth(").unwrap(), "{cl}");
    assert_eq!(cl.matches("float stencilc_clampf(").count(), 1, "{cl}");
    let cuda = program("callee", "cuda");
    assert!(
        cuda.contains("static __device__ float stencilc_clampf(float x, float lo, float hi)"),
        "{cuda}"
    );
    // `bump` writes a global: its caller stays on the CPU, and says why.
    let r = report("callee", "opencl");
    assert!(
        r.contains("a call of `bump`, which reads `total` beyond its scalar parameters and locals"),
        "{r}"
    );
}

#[test]
fn report_of_a_fission() {
    insta::assert_snapshot!("map_report_fission", report("fission", "c"));
}
