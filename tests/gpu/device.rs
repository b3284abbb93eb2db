//! On a real GPU (ignored by default; run with `cargo test --test gpu --
//! --ignored gpu_` on the device machine): every example under the schedule matrix runs
//! through CUDA and agrees with the interpreter.

use crate::common;
use crate::gpu_common;

use gpu_common::*;
use stencilc::exec::cuda;
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::schedule::Schedule;

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_examples_agree_with_interpreter() {
    if !common::runtime_available("gpu", cuda::probe().map(|_| ()).map_err(|e| e.to_string())) {
        return;
    }
    for (name, params) in EXAMPLES {
        let program = example(name);
        let env = RunEnv::new(&program, &bindings(&program, params)).unwrap();
        let mut expected = initial_state(&program, &env);
        let reference = interp::run(&program, &env, &mut expected).unwrap();
        for (label, request) in schedule_matrix(&program, rank(&program)) {
            let what = format!("{name} [{label}]");
            let schedule = Schedule::new(&program, &request).unwrap();
            let mut actual = initial_state(&program, &env);
            let summary = cuda::run_with_schedule(&program, &env, &mut actual, &schedule)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(summary.iterations, reference.iterations, "{what}");
            assert_close(&program, &expected, &actual, &what);
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_every_boundary_mode() {
    if !common::runtime_available("gpu", cuda::probe().map(|_| ()).map_err(|e| e.to_string())) {
        return;
    }
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        for ty in ["float", "double"] {
            let program = boundary_program(mode, ty);
            let env =
                RunEnv::new(&program, &bindings(&program, &[("w", 13.0), ("h", 7.0)])).unwrap();
            let mut expected = initial_state(&program, &env);
            interp::run(&program, &env, &mut expected).unwrap();
            for (label, request) in schedule_matrix(&program, 2) {
                let schedule = Schedule::new(&program, &request).unwrap();
                let mut actual = initial_state(&program, &env);
                cuda::run_with_schedule(&program, &env, &mut actual, &schedule).unwrap();
                assert_close(
                    &program,
                    &expected,
                    &actual,
                    &format!("{mode} {ty} [{label}]"),
                );
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_a_program_named_with_every_targets_reserved_words() {
    if !common::runtime_available("gpu", cuda::probe().map(|_| ()).map_err(|e| e.to_string())) {
        return;
    }
    let program = reserved_names_program();
    let env = RunEnv::new(&program, &bindings(&program, RESERVED_NAMES_PARAMS)).unwrap();
    let mut expected = initial_state(&program, &env);
    let reference = interp::run(&program, &env, &mut expected).unwrap();
    for (label, request) in schedule_matrix(&program, rank(&program)) {
        let schedule = Schedule::new(&program, &request).unwrap();
        let mut actual = initial_state(&program, &env);
        let summary = cuda::run_with_schedule(&program, &env, &mut actual, &schedule)
            .unwrap_or_else(|e| panic!("[{label}]: {e}"));
        assert_eq!(summary.iterations, reference.iterations, "[{label}]");
        assert_close(
            &program,
            &expected,
            &actual,
            &format!("reserved names [{label}]"),
        );
    }
}

#[test]
fn cuda_without_a_gpu_is_unavailable_not_a_crash() {
    // On machines without a driver this is the path `auto` takes; with one, probe works.
    match cuda::probe() {
        Ok(name) => assert!(!name.is_empty()),
        Err(stencilc::exec::ExecError::Unavailable(why)) => assert!(why.contains("CUDA"), "{why}"),
        Err(other) => panic!("expected Unavailable, got {other}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_time_tiled_runs_agree_with_the_interpreter() {
    if !common::runtime_available("gpu", cuda::probe().map(|_| ()).map_err(|e| e.to_string())) {
        return;
    }
    for (name, params) in EXAMPLES {
        let program = example(name);
        let env = RunEnv::new(&program, &bindings(&program, params)).unwrap();
        let mut expected = initial_state(&program, &env);
        let reference = interp::run(&program, &env, &mut expected).unwrap();
        for steps in 1..=6 {
            let what = format!("{name} --time {steps}");
            let request = stencilc::schedule::ScheduleRequest {
                time_steps: Some(steps),
                block: Some(if rank(&program) == 3 {
                    vec![8, 4, 2]
                } else {
                    vec![16, 8]
                }),
                ..Default::default()
            };
            let schedule = Schedule::for_run(&program, &request, &env).unwrap();
            let mut actual = initial_state(&program, &env);
            let summary = cuda::run_with_schedule(&program, &env, &mut actual, &schedule)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(summary.iterations, reference.iterations, "{what}");
            assert_close(&program, &expected, &actual, &what);
        }
    }
}
