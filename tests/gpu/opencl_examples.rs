//! Every example and every boundary mode, under a matrix of schedules, runs on
//! OpenCL (PoCL in CI) and agrees with the interpreter.

use crate::common;
use crate::gpu_common;

use gpu_common::*;
use stencilc::exec::{opencl, ExecError};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, Value};
use stencilc::schedule::{Schedule, ScheduleRequest};

fn opencl_here() -> bool {
    common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    )
}

fn close(a: Option<Value>, b: Option<Value>, what: &str) {
    match (a, b) {
        (Some(a), Some(b)) => {
            let (x, y) = (a.as_f64(), b.as_f64());
            let tol = if matches!(a, Value::Float(_)) {
                1e-5
            } else {
                1e-12
            } * x.abs().max(1.0);
            assert!(
                (x - y).abs() <= tol,
                "{what}: reduction interpreter {x}, got {y}"
            );
        }
        (a, b) => assert_eq!(a.is_some(), b.is_some(), "{what}: reduction evaluated"),
    }
}

fn check_program(
    program: &Program,
    params: &[(&str, f64)],
    requests: &[(String, ScheduleRequest)],
) {
    let env = RunEnv::new(program, &bindings(program, params)).expect("valid parameters");
    let mut expected = initial_state(program, &env);
    let reference = interp::run(program, &env, &mut expected).expect("interpreter runs");
    for (label, request) in requests {
        let what = format!("{} [{label}]", program.name);
        let schedule = Schedule::new(program, request).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut actual = initial_state(program, &env);
        let summary = opencl::run_with_schedule(program, &env, &mut actual, &schedule)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            summary.iterations, reference.iterations,
            "{what}: iterations"
        );
        assert_eq!(
            summary.stopped_by_check, reference.stopped_by_check,
            "{what}: check"
        );
        assert_close(program, &expected, &actual, &what);
        for ((name, a), (_, b)) in reference.reductions.iter().zip(&summary.reductions) {
            close(*a, *b, &format!("{what} {name}"));
        }
    }
}

fn check_example(name: &str) {
    if !opencl_here() {
        return;
    }
    let (_, params) = EXAMPLES.iter().find(|(n, _)| *n == name).expect("listed");
    let program = example(name);
    let matrix = schedule_matrix(&program, rank(&program));
    check_program(&program, params, &matrix);
}

#[test]
fn opencl_gaussian_blur() {
    check_example("gaussian_blur");
}

#[test]
fn opencl_gaussian_blur_separable() {
    check_example("gaussian_blur_separable");
}

#[test]
fn opencl_heat3d() {
    check_example("heat3d");
}

#[test]
fn opencl_jacobi2d() {
    check_example("jacobi2d");
}

#[test]
fn opencl_rician3d() {
    check_example("rician3d");
}

#[test]
fn opencl_wave2d() {
    check_example("wave2d");
}

#[test]
fn opencl_every_boundary_mode_in_tiles_and_global_memory() {
    if !opencl_here() {
        return;
    }
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        for ty in ["float", "double"] {
            let program = boundary_program(mode, ty);
            // A cut of the matrix: global memory, tiles with several points per
            // thread, a block with a z axis on a 2-D grid, 64-bit indices.
            let matrix: Vec<_> = schedule_matrix(&program, 2)
                .into_iter()
                .filter(|(l, _)| {
                    [
                        "default",
                        "b8x4-none",
                        "b16x2-t2x3-shm",
                        "b4x4x1-3d-block",
                        "index64",
                    ]
                    .contains(&l.as_str())
                })
                .collect();
            assert_eq!(matrix.len(), 5);
            check_program(&program, &[("w", 13.0), ("h", 7.0)], &matrix);
        }
    }
}

#[test]
fn opencl_rejects_a_block_the_device_cannot_run() {
    if !opencl_here() {
        return;
    }
    let program = example("jacobi2d");
    let env = RunEnv::new(
        &program,
        &bindings(&program, &[("dim0", 37.0), ("dim1", 23.0)]),
    )
    .unwrap();
    let request = ScheduleRequest {
        block: Some(vec![1024, 1024]),
        ..ScheduleRequest::default()
    };
    let schedule = Schedule::new(&program, &request).unwrap();
    let mut state = initial_state(&program, &env);
    let before = state.clone();
    match opencl::run_with_schedule(&program, &env, &mut state, &schedule) {
        Err(ExecError::Failed(msg)) => {
            assert!(msg.contains("1048576 threads"), "{msg}");
            assert!(msg.contains("--block"), "{msg}");
        }
        other => panic!("expected a rejected schedule, got {other:?}"),
    }
    assert_eq!(state, before, "nothing ran");
}

#[test]
fn opencl_runs_a_program_named_with_every_targets_reserved_words() {
    if !opencl_here() {
        return;
    }
    let program = reserved_names_program();
    let matrix = schedule_matrix(&program, rank(&program));
    check_program(&program, RESERVED_NAMES_PARAMS, &matrix);
}
