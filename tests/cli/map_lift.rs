//! `stencilc map`'s lift: a time loop of stencil nests (or one nest) becomes an
//! `ir::Program`, and the interpreter running it from the arrays the C program
//! holds before the loop leaves them bit for bit as the C program (`cc -O2
//! -ffp-contract=off`) leaves them after the loop.

use std::path::{Path, PathBuf};
use std::process::Command;

use stencilc::interp;

use stencilc::exec::{Buffer, FieldState};
use stencilc::front::c::{lower_unit, CFile};
use stencilc::ir::env::{Bindings, RunEnv};
use stencilc::ir::{ScalarType, Value};
use stencilc::map::lift::Lift;
use stencilc::map::{plan_file, NestPlan, Target};
use stencilc::model::device::Device;

use super::map::{
    build_and_run, cc_available, compile_and_run, map, opencl_available, opencl_headers_available,
};

/// The lifted outermost nests of a C file, with the file's lines.
pub(super) fn lifted(path: &Path) -> (Vec<NestPlan>, Vec<String>) {
    let file = CFile::load(path).unwrap_or_else(|_| panic!("{} loads", path.display()));
    let unit = lower_unit(&file);
    let plan = plan_file(&file, &unit, Target::C, Device::default_device());
    let text = std::fs::read_to_string(path).unwrap();
    let nests = plan
        .nests
        .into_iter()
        .filter(|n| n.lifted.is_some())
        .collect();
    (nests, text.lines().map(str::to_string).collect())
}

/// The C file with the lifted arrays (and the parameters' values) written to
/// files just before and just after the nest (in place: the arrays may be
/// local pointers), each buffer after its length in bytes (the rows the
/// nests reach), and the steps the time loop ran (a counter at the top of its
/// body) with the value of the tested scalar of a lifted convergence test
/// when it is declared outside the loop (`after` names it).
fn instrumented(
    lines: &[String],
    lift: &Lift,
    nest_lines: (usize, usize),
    after: Option<&str>,
) -> String {
    let dump = |path: &str| {
        let mut dump = format!("{{ FILE *f = fopen(\"{path}\", \"wb\");");
        for a in &lift.arrays {
            let buffers = match (&a.swapped_with, a.time_buffers) {
                (Some(partner), _) => vec![a.c_name.clone(), partner.clone()],
                (None, 0) => vec![a.c_name.clone()],
                (None, buffers) => (0..buffers).map(|b| format!("{}[{b}]", a.c_name)).collect(),
            };
            let bytes = a.c_bytes();
            for b in buffers {
                dump.push_str(&format!(
                    " {{ long long stencilc_bytes = {bytes}; fwrite(&stencilc_bytes, sizeof stencilc_bytes, 1, f); fwrite({b}, stencilc_bytes, 1, f); }}"
                ));
            }
        }
        dump.push_str(" fclose(f); }");
        dump
    };
    let mut params = String::from("{ FILE *stencilc_p = fopen(\"params.txt\", \"w\");");
    for p in &lift.params {
        params.push_str(&format!(
            " fprintf(stencilc_p, \"%.17g\\n\", (double)({}));",
            p.name
        ));
    }
    params.push_str(&format!(" fclose(stencilc_p); {} }}", dump("before.bin")));
    let mut out = String::from("#include <stdio.h>\n");
    for (n, line) in lines.iter().enumerate() {
        if n + 1 == nest_lines.0 {
            out.push_str("long stencilc_steps_run = 0;\n");
            out.push_str(&params);
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
        if n + 1 == nest_lines.0 && lift.time.is_some() {
            assert!(
                line.trim_end().ends_with('{'),
                "the time loop's body is a block"
            );
            out.push_str("stencilc_steps_run++;\n");
        }
        if n + 1 == nest_lines.1 {
            out.push_str(&dump("after.bin"));
            out.push_str(&format!(
                "\n{{ FILE *f = fopen(\"steps.txt\", \"w\"); fprintf(f, \"%ld %.17g\\n\", stencilc_steps_run, (double)({})); fclose(f); }}\n",
                after.unwrap_or("0")
            ));
        }
    }
    out
}

fn buffer(ty: ScalarType, bytes: &[u8]) -> Buffer {
    match ty {
        ScalarType::Float => Buffer::Float(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_ne_bytes(b.try_into().unwrap()))
                .collect(),
        ),
        ScalarType::Double => Buffer::Double(
            bytes
                .chunks_exact(8)
                .map(|b| f64::from_ne_bytes(b.try_into().unwrap()))
                .collect(),
        ),
        ScalarType::Int => Buffer::Int(
            bytes
                .chunks_exact(4)
                .map(|b| i32::from_ne_bytes(b.try_into().unwrap()))
                .collect(),
        ),
        ScalarType::Long => Buffer::Long(
            bytes
                .chunks_exact(8)
                .map(|b| i64::from_ne_bytes(b.try_into().unwrap()))
                .collect(),
        ),
    }
}

/// The arrays in a dump, per array its buffers (two for time-buffered and
/// swapped ones), each padded with zeros to its field's grid (a pointer's
/// grid may have more rows than the nests reach), and the elements dumped.
fn split(lift: &Lift, env: &RunEnv, bytes: &[u8]) -> Vec<(Vec<Buffer>, usize)> {
    let mut at = 0;
    let mut out = Vec::new();
    for (a, field) in lift.arrays.iter().zip(&lift.program.fields) {
        let points: usize = env.grid_dims()[field.grid.0].iter().product();
        let elem = field.ty.size_bytes();
        let mut buffers = Vec::new();
        let mut reached = 0;
        for _ in 0..a.levels() {
            let n = i64::from_ne_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
            at += 8;
            assert!(n <= points * elem, "`{}`: {n} bytes dumped", a.c_name);
            let mut padded = bytes[at..at + n].to_vec();
            padded.resize(points * elem, 0);
            buffers.push(buffer(field.ty, &padded));
            reached = n / elem;
            at += n;
        }
        out.push((buffers, reached));
    }
    assert_eq!(at, bytes.len(), "dump size");
    out
}

/// A value's bits, to compare values bit for bit.
fn bits(v: Value) -> u64 {
    match v {
        Value::Int(x) => x as u32 as u64,
        Value::Long(x) => x as u64,
        Value::Float(x) => u64::from(x.to_bits()),
        Value::Double(x) => x.to_bits(),
    }
}

/// What the instrumented C program reports of its time loop: the steps it
/// ran and the tested scalar's value after it.
pub(super) struct CRun {
    /// Steps the time loop ran (1 for a single nest).
    pub steps: u64,
    /// The tested scalar's value after the loop.
    pub tested: f64,
}

/// Runs the C program around the lifted nest and the lifted program on the
/// interpreter, and compares every buffer bit for bit, and the steps run.
fn assert_lift_matches_c(name: &str, lines: &[String], nest: &NestPlan) {
    lift_against_c(name, lines, nest, None);
}

/// [`assert_lift_matches_c`], reading `tested` after the loop; returns what
/// C reported and the interpreter's run.
pub(super) fn lift_against_c(
    name: &str,
    lines: &[String],
    nest: &NestPlan,
    tested: Option<&str>,
) -> (CRun, stencilc::exec::RunSummary) {
    let lift = nest.lifted.as_ref().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join(format!("{name}.c"));
    std::fs::write(&source, instrumented(lines, lift, nest.lines, tested)).unwrap();
    let exe = dir.path().join(name);
    let built = Command::new("cc")
        .args(["-O2", "-ffp-contract=off", "-std=gnu99"])
        .arg(&source)
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let ran = Command::new(&exe).current_dir(dir.path()).output().unwrap();
    assert!(ran.status.success(), "{name} failed");
    let values: Vec<f64> = std::fs::read_to_string(dir.path().join("params.txt"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let program = &lift.program;
    let params = program
        .params
        .iter()
        .zip(&values)
        .map(|(p, v)| Value::Double(*v).cast(p.ty))
        .collect();
    let env = RunEnv::new(program, &Bindings { params }).unwrap();
    let before = split(
        lift,
        &env,
        &std::fs::read(dir.path().join("before.bin")).unwrap(),
    );
    let after = split(
        lift,
        &env,
        &std::fs::read(dir.path().join("after.bin")).unwrap(),
    );
    let report = std::fs::read_to_string(dir.path().join("steps.txt")).unwrap();
    let (ran, value) = report.trim().split_once(' ').unwrap();
    let c = CRun {
        steps: if lift.time.is_some() {
            ran.parse().unwrap()
        } else {
            1
        },
        tested: value.parse().unwrap(),
    };
    let steps = c.steps;
    let lower = lift
        .time
        .as_ref()
        .and_then(|(_, lo)| stencilc::front::c::fold::constant(lo))
        .unwrap_or(0);
    let mut state = FieldState {
        fields: lift
            .arrays
            .iter()
            .zip(before)
            .map(|(a, (buffers, _))| {
                if a.time_buffers > 0 {
                    (0..a.time_buffers)
                        .map(|level| {
                            buffers[Lift::buffer_of_level(lower, 0, level, a.time_buffers)].clone()
                        })
                        .collect()
                } else {
                    buffers
                }
            })
            .collect(),
    };
    let summary = interp::run(program, &env, &mut state).unwrap();
    assert_eq!(summary.iterations, steps, "{name}: steps");
    if steps < env.max_iters() || lift.check.is_none() {
        assert_eq!(
            summary.stopped_by_check,
            lift.check.is_some(),
            "{name}: stopped by the check"
        );
    }
    for ((a, levels), (want, reached)) in lift.arrays.iter().zip(&state.fields).zip(&after) {
        for (level, got) in levels.iter().enumerate() {
            let b = if a.time_buffers > 0 {
                Lift::buffer_of_level(lower, steps as i64, level, a.time_buffers)
            } else {
                // One buffer, or swapped pointers: C's `a` holds level 0.
                level
            };
            let reached: Vec<Value> = (0..*reached).map(|i| got.get(i)).collect();
            let wanted: Vec<Value> = (0..reached.len()).map(|i| want[b].get(i)).collect();
            assert!(
                reached
                    .iter()
                    .zip(&wanted)
                    .all(|(x, y)| bits(*x) == bits(*y)),
                "{name}: `{}` level {level} (C buffer {b}) differs from C after {steps} steps",
                a.c_name
            );
        }
    }
    (c, summary)
}

#[test]
fn lifted_examples_run_on_the_interpreter_as_the_c_programs() {
    if !cc_available() {
        return;
    }
    let examples = stencilc_examples();
    for (name, want) in [("jacobi2d", 1), ("heat3d", 1), ("jacobi2d_swap", 1)] {
        let (nests, lines) = lifted(&examples.join(format!("{name}.c")));
        assert_eq!(nests.len(), want, "{name}: lifted nests");
        for nest in &nests {
            assert_lift_matches_c(name, &lines, nest);
        }
    }
}

fn stencilc_examples() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/c")
}

/// Ping-pong buffers that differ on the rim, a time loop starting at an odd
/// step, a parameter read by the stencil, a copy back and a nest over one row: the
/// levels must map to the right C buffers before and after.
const FORMS: &str = r#"#include <stdio.h>
#define N 37
#define M 23
static double P[2][N][M];
static double Q[N][M];
static double R[N][M];
static void steps(int t1, double w) {
    for (int t = 3; t < t1; t++) {
        for (int i = 1; i < N - 1; i++)
            for (int j = 2; j < M - 1; j++)
                P[(t + 1) % 2][i][j] = w * P[t % 2][i - 1][j] + (1.0 - w) * P[t % 2][i][j - 2] + Q[i][j + 1];
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++) {
                double s = P[(t + 1) % 2][i][j];
                R[i][j] = s * 0.5;
            }
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++)
                Q[i][j] = R[i][j];
        for (int j = 1; j < M; j++)
            Q[0][j] = Q[0][j] * 0.5 + R[3][j - 1];
    }
}
int main(void) {
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++)
                P[b][i][j] = (double)((i * 3 + j * 5 + b * 7) % 11) / 11.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            Q[i][j] = (double)(i - j) / 50.0;
    steps(10, 0.3);
    double sum = 0.0;
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < N; i++)
            for (int j = 0; j < M; j++)
                sum += P[b][i][j] * (1 + b) + Q[i][j] * 3 + R[i][j] * 5;
    printf("%.17g %.17g %.17g\n", P[0][5][5], P[1][5][5], sum);
    return 0;
}
"#;

#[test]
fn ping_pong_copy_back_and_rows_lift_bit_for_bit() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("forms.c");
    std::fs::write(&path, FORMS).unwrap();
    let (nests, lines) = lifted(&path);
    assert_eq!(nests.len(), 1, "the time loop lifts");
    let lift = nests[0].lifted.as_ref().unwrap();
    assert_eq!(lift.program.iterate.as_ref().unwrap().stencils.len(), 4);
    assert_eq!(lift.arrays[0].time_buffers, 2, "{:?}", lift.arrays);
    assert_eq!(
        lift.params
            .iter()
            .map(|p| p.name.as_str())
            .collect::<Vec<_>>(),
        ["t1", "w"]
    );
    assert_lift_matches_c("forms", &lines, &nests[0]);
}

#[test]
fn nests_that_are_not_stencils_say_why() {
    if !cc_available() {
        return;
    }
    let file = CFile::load(&stencilc_examples().join("conv2d.c")).unwrap();
    let unit = lower_unit(&file);
    let plan = plan_file(&file, &unit, Target::C, Device::default_device());
    let conv = plan.nests.iter().find(|n| n.lines.0 == 20).unwrap();
    assert_eq!(
        conv.lift.as_deref(),
        Some("not lifted: nest at line 20: its body holds a loop (`a`, line 23)")
    );
}

/// Maps `source` with `--target opencl`, and runs it on OpenCL and the
/// original with cc: the outputs must be identical, and a loop lifted.
pub(super) fn assert_opencl_matches(name: &str, source: &str) {
    let dir = tempfile::tempdir().unwrap();
    let c = format!("{name}.c");
    let mapped_c = format!("{name}.cl.c");
    std::fs::write(dir.path().join(&c), source).unwrap();
    let out = map(dir.path(), &[&c, "--target", "opencl", "-o", &mapped_c]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mapped = std::fs::read_to_string(dir.path().join(&mapped_c)).unwrap();
    assert!(
        mapped.contains("the arrays stay on the device across all steps"),
        "{name}: nothing lifted"
    );
    let original = compile_and_run(&dir.path().join(&c), &dir.path().join(name), false);
    let ran = build_and_run(
        &dir.path().join(&mapped_c),
        &dir.path().join(format!("{name}.cl")),
        &["-lOpenCL"],
    );
    assert_eq!(original, ran, "{name}");
}

#[test]
fn lifted_ping_pong_runs_on_opencl_as_the_original() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    assert_opencl_matches("forms", FORMS);
}

/// A stencil nest on its own (no time loop), writing a box that leaves a
/// rim of the output untouched, with a local.
const ONE_NEST: &str = r#"#include <stdio.h>
#define N 45
#define M 33
static float A[N][M], B[N][M];
int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            A[i][j] = (float)((i * 5 + j * 3) % 13) / 13.0f;
            B[i][j] = -1.0f;
        }
    for (int i = 1; i < N - 1; i++)
        for (int j = 2; j < M; j++) {
            float s = A[i - 1][j] + A[i + 1][j - 2];
            B[i][j] = s / 3.0f;
        }
    double sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            sum = sum * 0.5 + B[i][j];
    printf("%.17g\n", sum);
    return 0;
}
"#;

#[test]
fn a_lifted_single_nest_runs_on_opencl_as_the_original() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    assert_opencl_matches("one_nest", ONE_NEST);
}

/// Pointers to rows (`double (*u)[M]`, `restrict`) swapped after each step,
/// run-time rows and steps, an odd step count, reads two rows back, and a
/// rim the nest leaves untouched.
const ROW_POINTERS: &str = r#"#include <stdio.h>
#define M 29
static void relax(int n, int steps, double (*restrict u)[M], double (*restrict v)[M], double w) {
    for (int t = 0; t < steps; t++) {
        for (int i = 2; i < n - 1; i++)
            for (int j = 1; j < M - 1; j++)
                v[i][j] = w * (u[i - 2][j] + u[i + 1][j]) + (1.0 - w) * u[i][j - 1];
        double (*tmp)[M] = u;
        u = v;
        v = tmp;
    }
}
static double A[41][M], B[41][M];
int main(void) {
    for (int i = 0; i < 41; i++)
        for (int j = 0; j < M; j++) {
            A[i][j] = (double)((i * 3 + j * 5) % 11) / 11.0;
            B[i][j] = -1.0;
        }
    relax(40, 5, A, B, 0.3);
    double s = 0;
    for (int i = 0; i < 41; i++)
        for (int j = 0; j < M; j++)
            s = s * 0.5 + A[i][j] + 3 * B[i][j];
    printf("%.17g %.17g %.17g\n", s, A[7][7], B[39][28]);
    return 0;
}
"#;

#[test]
fn swapped_row_pointers_lift_bit_for_bit() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.c");
    std::fs::write(&path, ROW_POINTERS).unwrap();
    let (nests, lines) = lifted(&path);
    assert_eq!(nests.len(), 1, "the time loop lifts");
    let lift = nests[0].lifted.as_ref().unwrap();
    assert_eq!(lift.arrays[0].swapped_with.as_deref(), Some("v"));
    assert_eq!(lift.arrays[0].extents, ["n", "29"]);
    assert_lift_matches_c("rows", &lines, &nests[0]);
}

#[test]
fn swapped_row_pointers_run_on_opencl_as_the_original() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    assert_opencl_matches("rows", ROW_POINTERS);
}

/// A swap before the nest (the levels would be the other way round) is
/// not lifted, and the report says why.
#[test]
fn a_swap_before_the_nests_is_not_lifted() {
    if !cc_available() {
        return;
    }
    let text = ROW_POINTERS.replace(
        "        for (int i = 2; i < n - 1; i++)\n            for (int j = 1; j < M - 1; j++)\n                v[i][j] = w * (u[i - 2][j] + u[i + 1][j]) + (1.0 - w) * u[i][j - 1];\n        double (*tmp)[M] = u;\n        u = v;\n        v = tmp;\n",
        "        double (*tmp)[M] = u;\n        u = v;\n        v = tmp;\n        for (int i = 2; i < n - 1; i++)\n            for (int j = 1; j < M - 1; j++)\n                v[i][j] = w * (u[i - 2][j] + u[i + 1][j]) + (1.0 - w) * u[i][j - 1];\n",
    );
    assert_ne!(text, ROW_POINTERS);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("before.c");
    std::fs::write(&path, text).unwrap();
    let file = CFile::load(&path).unwrap();
    let unit = lower_unit(&file);
    let plan = plan_file(&file, &unit, Target::C, Device::default_device());
    let lift = plan.nests[0].lift.as_deref().unwrap_or("");
    assert!(
        lift.starts_with("not lifted: the loop at line 8 follows a pointer swap"),
        "{lift}"
    );
}

/// The `--target cuda` program of an example (or of `FORMS`, written to `dir`).
fn cuda_output(dir: &Path, name: &str) -> String {
    if name == "forms" {
        std::fs::write(dir.join("forms.c"), FORMS).unwrap();
    }
    let source = original_source(dir, name);
    let cwd = source.parent().unwrap();
    let file = format!("{name}.c");
    let out_path = dir.join(format!("{name}.cu"));
    let out = map(
        cwd,
        &[&file, "--target", "cuda", "-o", out_path.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(out_path).unwrap()
}

/// The C file `cuda_output` maps for `name` (after it wrote `FORMS` to `dir`).
fn original_source(dir: &Path, name: &str) -> PathBuf {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/map");
    if name == "forms" {
        dir.join("forms.c")
    } else if data.join(format!("{name}.c")).exists() {
        data.join(format!("{name}.c"))
    } else {
        stencilc_examples().join(format!("{name}.c"))
    }
}

/// The kernels of each lifted nest: what nvcc compiles under `__CUDACC__`.
pub(super) fn kernel_units(output: &str) -> Vec<String> {
    use stencilc::map::cuda::{KERNELS_BEGIN, KERNELS_END};
    let mut units = Vec::new();
    let mut rest = output;
    while let Some(start) = rest.find(KERNELS_BEGIN) {
        let end = rest[start..].find(KERNELS_END).expect("an end marker") + start;
        let block = &rest[start..end];
        let body = &block[block
            .find("#if defined(__CUDACC__)\n")
            .expect("nvcc branch")..];
        let body = &body[body.find('\n').unwrap() + 1..body.rfind("#else").expect("#else")];
        units.push(body.to_string());
        rest = &rest[end + KERNELS_END.len()..];
    }
    units
}

const CUDA_LIFTED: &[&str] = &["jacobi2d", "heat3d", "forms", "rician3d"];

/// Every example with `--target cuda`: lifted loops and direct kernels.
const CUDA_ALL: &[&str] = &[
    "jacobi2d",
    "heat3d",
    "forms",
    "conv2d",
    "fdtd2d",
    "rician3d",
    "seidel",
    "jacobi2d_swap",
    // tests/data/map: functions of the file copied into a kernel, arrays kept
    // on the device across a time loop of direct kernels.
    "callee",
    "resident",
];

#[test]
fn cuda_kernels_of_lifted_loops_compile_with_nvrtc() {
    use stencilc::exec::cuda::nvrtc;
    if !cc_available() || !crate::common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for name in CUDA_ALL {
        let output = cuda_output(dir.path(), name);
        let units = kernel_units(&output);
        let lifted = output
            .matches("lifted into an ir::Program: stencilc's CUDA back-end")
            .count();
        let direct = usize::from(output.contains("// ---- stencilc kernels begin direct"));
        assert_eq!(units.len(), lifted + direct, "{name}: kernel units");
        if CUDA_LIFTED.contains(name) {
            assert_eq!(lifted, 1, "{name}: one lifted loop");
        }
        if *name == "conv2d" {
            assert_eq!(direct, 1, "{name}: direct kernels");
        }
        for unit in units {
            let compiled =
                nvrtc::compile_source(&unit, "sm_90", stencilc::back::cuda::NVRTC_OPTIONS, &[])
                    .unwrap_or_else(|e| panic!("{name}: {e}\n{unit}"));
            assert!(compiled.ptx.contains(".entry"), "{name}: no kernel");
        }
    }
}

/// The folders holding `cuda_runtime.h` and `crt/host_config.h` (as in
/// `tests/native/overtile`).
pub(super) fn cuda_include_dirs() -> Result<Vec<std::path::PathBuf>, String> {
    use std::path::PathBuf;
    let mut candidates: Vec<Vec<PathBuf>> = Vec::new();
    if let Some(cache) = std::env::var_os("STENCILC_CI_CACHE") {
        let cache = PathBuf::from(cache);
        candidates.push(vec![
            cache.join("cudart-12.8.90/nvidia/cuda_runtime/include"),
            cache.join("nvcc-12.8.93/nvidia/cuda_nvcc/include"),
        ]);
    }
    for root in [
        std::env::var_os("CUDA_HOME").map(PathBuf::from),
        Some("/usr/local/cuda".into()),
    ]
    .into_iter()
    .flatten()
    {
        candidates.push(vec![root.join("include")]);
    }
    candidates
        .into_iter()
        .find(|dirs| {
            dirs.iter().any(|d| d.join("cuda_runtime.h").is_file())
                && dirs.iter().any(|d| d.join("crt/host_config.h").is_file())
        })
        .ok_or_else(|| "no cuda_runtime.h with crt/host_config.h under $STENCILC_CI_CACHE, $CUDA_HOME or /usr/local/cuda".to_string())
}

#[test]
fn cuda_host_part_of_lifted_loops_compiles_with_gxx() {
    let probe = Command::new("g++")
        .arg("--version")
        .output()
        .map_err(|e| e.to_string())
        .and_then(|o| {
            o.status
                .success()
                .then_some(())
                .ok_or("g++ failed".to_string())
        })
        .and_then(|()| cuda_include_dirs().map(drop));
    if !cc_available() || !crate::common::runtime_available("cudart", probe) {
        return;
    }
    let includes = cuda_include_dirs().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for name in CUDA_ALL {
        let output = cuda_output(dir.path(), name);
        assert!(output.contains("cudaLaunchKernel"), "{name}: no launch");
        let cu = dir.path().join(format!("{name}.cu"));
        compile_host_part(name, &cu, &includes);
    }
}

/// Compiles the host part of the CUDA program in `cu` (written by the map
/// under test) with `g++ -Wall -Werror` against the CUDA runtime headers.
pub(super) fn compile_host_part(name: &str, cu: &Path, includes: &[std::path::PathBuf]) {
    let mut gxx = Command::new("g++");
    gxx.args([
        "-x",
        "c++",
        "-std=c++11",
        "-Wall",
        "-Wno-unknown-pragmas",
        // A static function whose only calls moved into kernels is left unused.
        "-Wno-unused-function",
        // Loop variables declared before a lifted loop (PolyBench's `int t, i, j;`)
        // are set by no loop once the loop runs on the device.
        "-Wno-unused-but-set-variable",
        "-Wno-unused-variable",
        "-Werror",
        "-c",
    ]);
    for include in includes {
        gxx.arg("-I").arg(include);
    }
    let built = gxx
        .arg(cu)
        .arg("-o")
        .arg(cu.with_extension("o"))
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{name}: g++ refused the host part:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
}

/// On a machine with nvcc and a GPU: the CUDA programs (lifted loops and
/// direct kernels) print what the originals print; `checksum` lines of
/// OpenMP-style sums stay on the CPU, so every line is compared.
#[test]
#[ignore]
fn gpu_map_cuda_runs_as_the_original() {
    let dir = tempfile::tempdir().unwrap();
    for name in CUDA_ALL {
        let output = cuda_output(dir.path(), name);
        let cu = dir.path().join(format!("{name}.cu"));
        std::fs::write(&cu, &output).unwrap();
        let exe = dir.path().join(format!("{name}.gpu"));
        let built = Command::new("nvcc")
            .args([
                "-O3",
                "--fmad=false",
                "--prec-div=true",
                "--prec-sqrt=true",
                "-x",
                "cu",
            ])
            .arg(&cu)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("nvcc runs");
        assert!(
            built.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&built.stderr)
        );
        let ran = Command::new(&exe).output().unwrap();
        assert!(
            ran.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&ran.stderr)
        );
        let source = original_source(dir.path(), name);
        let original = compile_and_run(&source, &dir.path().join(format!("{name}.orig")), false);
        assert_eq!(original, String::from_utf8_lossy(&ran.stdout), "{name}");
    }
}

#[test]
fn cuda_output_of_heat3d() {
    if !cc_available() {
        return;
    }
    let out = map(&stencilc_examples(), &["heat3d.c", "--target", "cuda"]);
    assert!(out.status.success());
    insta::assert_snapshot!("map_cuda_heat3d", String::from_utf8_lossy(&out.stdout));
}
