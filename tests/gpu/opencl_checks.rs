//! Checks fused into the last stencil kernel: the plan fuses a reduction part
//! only when legal (and says why not), and fused and separate reductions on
//! OpenCL (PoCL in CI) agree with the interpreter: same iteration count, same
//! integer/min/max values bit for bit, float sums and products to rounding.

use crate::common;
use crate::gpu_common;

use gpu_common::*;
use stencilc::exec::opencl;
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, Value};
use stencilc::lower::{lower, lower_for, Target};
use stencilc::schedule::{Schedule, ScheduleRequest, ShmRequest};

/// A Jacobi sweep whose reduction `body` is over `subset`, checked every 2
/// iterations against `tol`.
fn jacobi(subset: &str, body: &str, op: &str, ty: &str) -> Program {
    parse(
        "checked",
        &format!(
            "int n;\nint m;\nint steps;\nfloat tol;\ngrid g[n][m];\n\
             float griddata a on g at 0,1;\nint griddata k on g at 0,1;\n\
             iterate steps {{\n  stencil s {{\n    [1:n-2][1:m-2] : [1]a[0][0] = 0.25f*([0]a[-1][0] + \
             [0]a[1][0] + [0]a[0][-1] + [0]a[0][1]);\n    [1:n-2][1:m-2] : [1]k[0][0] = \
             ([0]k[-1][0] + [0]k[0][1]) % 7 - 3;\n  }}\n  reduction r {op} {{\n    {subset} : \
             ({ty})({body});\n  }}\n}} check (r < tol) every 2 iterations\n"
        ),
    )
}

fn fused_notes(program: &Program) -> (bool, Vec<String>) {
    let schedule = Schedule::new(program, &ScheduleRequest::default()).unwrap();
    let lowered = lower(program, &schedule, Target::OpenCl);
    (lowered.plan.fused.is_some(), lowered.plan.notes)
}

#[test]
fn the_plan_fuses_a_check_only_when_legal_and_says_why_not() {
    let same = "[1:n-2][1:m-2]";
    let (fused, notes) = fused_notes(&jacobi(
        same,
        "fabsf([1]a[0][0] - [0]a[0][0])",
        "max",
        "float",
    ));
    assert!(fused, "{notes:?}");
    assert!(
        notes[0].contains("fused into kernel `s_part1`"),
        "{notes:?}"
    );
    // Neighbours of a level the kernel only reads are fine.
    let (fused, notes) = fused_notes(&jacobi(same, "[1]a[0][0] - [0]a[0][1]", "+", "float"));
    assert!(fused, "{notes:?}");
    let (fused, notes) = fused_notes(&jacobi("[0:n-1][0:m-1]", "[0]a[0][0]", "+", "float"));
    assert!(!fused);
    assert!(notes[0].contains("its points differ"), "{notes:?}");
    let (fused, notes) = fused_notes(&jacobi(same, "[1]k[0][1]", "+", "int"));
    assert!(!fused);
    assert!(
        notes[0].contains("reads k_t1 away from the point"),
        "{notes:?}"
    );
    // Equal only as boxes: fused when lowered for the run's values.
    let program = jacobi("[1:n-1-1][1:m-2]", "[1]a[0][0]", "+", "float");
    assert!(!fused_notes(&program).0);
    let env = RunEnv::new(
        &program,
        &bindings(
            &program,
            &[("n", 9.0), ("m", 7.0), ("steps", 2.0), ("tol", 0.0)],
        ),
    )
    .unwrap();
    let schedule = Schedule::for_run(&program, &ScheduleRequest::default(), &env).unwrap();
    assert!(lower_for(&program, &schedule, Target::Cuda, Some(&env))
        .plan
        .fused
        .is_some());
}

fn opencl_here() -> bool {
    common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    )
}

/// Runs `program` on the interpreter and on OpenCL under `request`; returns
/// the OpenCL reduction value after checking iterations, the check and fields.
fn run_both(
    program: &Program,
    params: &[(&str, f64)],
    request: &ScheduleRequest,
) -> (Value, Value) {
    let env = RunEnv::new(program, &bindings(program, params)).expect("valid parameters");
    let mut expected = initial_state(program, &env);
    let reference = interp::run(program, &env, &mut expected).expect("interpreter runs");
    let schedule = Schedule::for_run(program, request, &env).unwrap();
    let mut actual = initial_state(program, &env);
    let summary = opencl::run_with_schedule(program, &env, &mut actual, &schedule)
        .unwrap_or_else(|e| panic!("{params:?}: {e}"));
    assert_eq!(summary.iterations, reference.iterations, "{params:?}");
    assert_eq!(
        summary.stopped_by_check, reference.stopped_by_check,
        "{params:?}"
    );
    assert_close(program, &expected, &actual, &format!("{params:?}"));
    let value = |s: &stencilc::exec::RunSummary| s.reductions[0].1.expect("a value");
    (value(&reference), value(&summary))
}

fn agree(expected: Value, actual: Value, exact: bool, what: &str) {
    if exact {
        assert_eq!(expected, actual, "{what}");
    } else {
        let (e, a) = (expected.as_f64(), actual.as_f64());
        assert!(
            (e - a).abs() <= 1e-4 * e.abs().max(1.0),
            "{what}: {e} against {a}"
        );
    }
}

#[test]
fn fused_and_separate_checks_agree_with_the_interpreter_on_opencl() {
    if !opencl_here() {
        return;
    }
    let same = "[1:n-2][1:m-2]";
    let cases: &[(&str, &str, &str, bool)] = &[
        ("max", "fabsf([1]a[0][0] - [0]a[0][0])", "float", true),
        ("min", "[1]a[0][0]", "float", true),
        ("+", "[1]a[0][0] - [0]a[0][0]", "float", false),
        ("*", "1.0f + 0.001f*[1]a[0][0]", "float", false),
        ("+", "[1]k[0][0]", "int", true),
        ("*", "[1]k[0][0] > 0 ? 1 : -1", "int", true),
        ("max", "[1]k[0][0]", "int", true),
        ("min", "[1]k[0][0]", "int", true),
    ];
    let blocks = [
        ("default", ScheduleRequest::default()),
        (
            "b3x5",
            ScheduleRequest {
                block: Some(vec![3, 5]),
                ..ScheduleRequest::default()
            },
        ),
    ];
    for &(op, body, ty, exact) in cases {
        let fused = jacobi(same, body, op, ty);
        // The same value read with a neighbour of the just-written level: not fused.
        let separate = jacobi(same, &format!("{body} + 0*[1]k[0][1]"), op, ty);
        assert!(fused_notes(&fused).0 && !fused_notes(&separate).0);
        for (n, m) in [(37.0, 23.0), (3.0, 3.0), (130.0, 70.0)] {
            for (label, request) in &blocks {
                let what = format!("{op} {body} {n}x{m} {label}");
                let params = [("n", n), ("m", m), ("steps", 5.0), ("tol", -1e30)];
                let (e1, a1) = run_both(&fused, &params, request);
                let (e2, a2) = run_both(&separate, &params, request);
                agree(e1, a1, exact, &what);
                agree(e2, a2, exact, &what);
                if exact {
                    assert_eq!(a1, a2, "{what}: fused and separate");
                }
            }
        }
    }
}

/// A fused check may read a staged level further from the point than the
/// stencil does: the tile holds only the stencil's halo, so those terms read
/// global memory (a proptest once found the kernel indexing its tile at -1).
#[test]
fn a_fused_check_reaching_past_the_staged_tile_agrees_on_opencl() {
    let same = "[1:n-2][1:m-2]";
    let program = jacobi(
        same,
        // The stencil reads k_t0 at [-1][0] and [0][1] only.
        "fabsf([1]a[0][0] - [0]a[0][1]) + (float)([0]k[1][-1] + [0]k[-1][1])",
        "max",
        "float",
    );
    let request = ScheduleRequest {
        shm: ShmRequest::Names(vec!["a".into(), "k".into()]),
        block: Some(vec![4, 8]),
        ..ScheduleRequest::default()
    };
    let schedule = Schedule::new(&program, &request).unwrap();
    let lowered = lower(&program, &schedule, Target::OpenCl);
    assert!(lowered.plan.fused.is_some(), "{:?}", lowered.plan.notes);
    if !opencl_here() {
        return;
    }
    for (n, m) in [(13.0, 11.0), (3.0, 3.0), (40.0, 37.0)] {
        let params = [("n", n), ("m", m), ("steps", 4.0), ("tol", -1e30)];
        let (expected, actual) = run_both(&program, &params, &request);
        agree(expected, actual, true, &format!("{n}x{m}"));
    }
}

#[test]
fn a_fused_check_that_stops_early_and_many_partials_agree_on_opencl() {
    if !opencl_here() {
        return;
    }
    let program = jacobi(
        "[1:n-2][1:m-2]",
        "fabsf([1]a[0][0] - [0]a[0][0])",
        "max",
        "float",
    );
    // 8x4 blocks over 598x398 points: 7475 partials, folded in two levels.
    let small = ScheduleRequest {
        block: Some(vec![8, 4]),
        ..ScheduleRequest::default()
    };
    let params = [("n", 400.0), ("m", 600.0), ("steps", 40.0), ("tol", 0.2)];
    let env = RunEnv::new(&program, &bindings(&program, &params)).unwrap();
    let mut state = initial_state(&program, &env);
    let reference = interp::run(&program, &env, &mut state).unwrap();
    assert!(
        reference.stopped_by_check && reference.iterations < 40,
        "the check should stop early: {} iterations",
        reference.iterations
    );
    let (e, a) = run_both(&program, &params, &small);
    assert_eq!(e, a);
    // A reduction over the whole grid (1 point, and not the stencil's points).
    let whole = jacobi("[0:n-1][0:m-1]", "[0]a[0][0]", "+", "float");
    for (n, m) in [(1.0, 1.0), (130.0, 70.0)] {
        let params = [("n", n), ("m", m), ("steps", 3.0), ("tol", -1e30)];
        let (e, a) = run_both(&whole, &params, &ScheduleRequest::default());
        agree(e, a, false, "whole grid");
    }
    // The bench program with its check and the examples with theirs.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/programs/j2d5pt_check.sdsl"),
    )
    .unwrap();
    let program = parse("j2d5pt_check", &text);
    assert!(fused_notes(&program).0);
    let (e, a) = run_both(
        &program,
        &[("n", 45.0), ("steps", 6.0)],
        &ScheduleRequest::default(),
    );
    assert_eq!(e, a);
}

#[test]
fn nvrtc_compiles_fused_checks_for_sm_80_and_sm_90_without_warnings() {
    use stencilc::exec::cuda::nvrtc;
    if !common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        return;
    }
    let request = ScheduleRequest::default();
    let odd = ScheduleRequest {
        block: Some(vec![3, 5]),
        ..ScheduleRequest::default()
    };
    for (op, ty) in [
        ("+", "double"),
        ("*", "float"),
        ("max", "int"),
        ("min", "float"),
    ] {
        let program = jacobi("[1:n-2][1:m-2]", "[1]k[0][0] + [0]a[0][1]", op, ty);
        for request in [&request, &odd] {
            let source = stencilc::driver::emit::emit(
                &program,
                request,
                stencilc::driver::emit::GpuTarget::Cuda,
            )
            .unwrap();
            assert!(source.contains("s_part1_with_r("), "{source}");
            for arch in ["sm_80", "sm_90"] {
                let compiled = nvrtc::compile_with_log(&source, arch)
                    .unwrap_or_else(|e| panic!("{op} {ty} {arch}: {e}"));
                assert!(
                    compiled.log.is_empty(),
                    "{arch}: {}\n{source}",
                    compiled.log
                );
            }
        }
    }
}
