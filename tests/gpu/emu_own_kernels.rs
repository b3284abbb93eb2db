//! stencilc's own CUDA, run in the CUDA emulator (`exec::emu::device`): every
//! example under several schedules (default, no shared memory, several points
//! per thread, a block that does not divide the grid, fusion), and time-tiled
//! kernels on both of their paths, run with no race, no out-of-bounds access,
//! no barrier or shuffle that some thread misses, and give the interpreter's
//! results. No GPU needed.

use crate::gpu_common;

use gpu_common::*;
use stencilc::emu::Limits;
use stencilc::exec::emulated::{run_on, run_with_schedule, EmuDevice};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, Value};
use stencilc::schedule::{Schedule, ScheduleRequest, ShmRequest};

/// An example with its iteration count cut (the emulator is slow): the
/// kernels and the host plan are those of the full program; only the host
/// loop runs fewer times (the check of `jacobi2d`, every 4 iterations, still
/// runs once).
fn short_example(name: &str) -> Program {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(format!("{name}.sdsl"));
    let text = std::fs::read_to_string(&path).expect("example exists");
    let text = text
        .replace("iterate 1000 {", "iterate 4 {")
        .replace("iterate 50 {", "iterate 2 {");
    parse(name, &text)
}

/// The schedules every example is checked under.
fn schedules(program: &Program) -> Vec<(String, ScheduleRequest)> {
    let all: Vec<String> = program.fields.iter().map(|f| f.name.clone()).collect();
    let rank = rank(program);
    let pick = |two: &[u32], three: &[u32]| {
        let v = if rank == 3 { three } else { two };
        Some(v[..rank.min(v.len())].to_vec())
    };
    vec![
        ("default".into(), ScheduleRequest::default()),
        (
            "shm-none".into(),
            ScheduleRequest {
                shm: ShmRequest::None,
                ..ScheduleRequest::default()
            },
        ),
        (
            "tile-shm".into(),
            ScheduleRequest {
                block: pick(&[16, 4], &[8, 4, 2]),
                tile: pick(&[2, 3], &[1, 2, 3]),
                shm: ShmRequest::Names(all),
                ..ScheduleRequest::default()
            },
        ),
        (
            // 37 x 23 (2-D) and 19 x 13 x 11 (3-D) are multiples of none of
            // these; `__launch_bounds__(threads, 2)` as --min-blocks 2 writes it.
            "block-odd".into(),
            ScheduleRequest {
                block: pick(&[8, 4], &[8, 4, 4]),
                min_blocks_per_sm: Some(2),
                ..ScheduleRequest::default()
            },
        ),
        (
            "fused".into(),
            ScheduleRequest {
                fuse: true,
                ..ScheduleRequest::default()
            },
        ),
    ]
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
                "{what}: reduction interpreter {x}, emulator {y}"
            );
        }
        (a, b) => assert_eq!(a.is_some(), b.is_some(), "{what}: reduction evaluated"),
    }
}

fn check_example(name: &str) {
    let (_, params) = EXAMPLES.iter().find(|(n, _)| *n == name).expect("listed");
    let program = short_example(name);
    let env = RunEnv::new(&program, &bindings(&program, params)).expect("valid parameters");
    let mut expected = initial_state(&program, &env);
    let reference = interp::run(&program, &env, &mut expected).expect("interpreter runs");
    for (label, request) in schedules(&program) {
        let what = format!("{name} [{label}]");
        let schedule = Schedule::new(&program, &request).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut actual = initial_state(&program, &env);
        let (summary, device) =
            run_with_schedule(&program, &env, &mut actual, &schedule, Limits::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(device.launches > 0, "{what}: nothing launched");
        assert_eq!(
            summary.iterations, reference.iterations,
            "{what}: iterations"
        );
        assert_eq!(
            summary.stopped_by_check, reference.stopped_by_check,
            "{what}: check"
        );
        assert_close(&program, &expected, &actual, &what);
        for ((r, a), (_, b)) in reference.reductions.iter().zip(&summary.reductions) {
            close(*a, *b, &format!("{what} {r}"));
        }
    }
}

#[test]
fn emu_runs_the_cuda_of_jacobi2d() {
    check_example("jacobi2d");
}

#[test]
fn emu_runs_the_cuda_of_gaussian_blur() {
    check_example("gaussian_blur");
}

#[test]
fn emu_runs_the_cuda_of_gaussian_blur_separable() {
    check_example("gaussian_blur_separable");
}

#[test]
fn emu_runs_the_cuda_of_heat3d() {
    check_example("heat3d");
}

#[test]
fn emu_runs_the_cuda_of_wave2d() {
    check_example("wave2d");
}

#[test]
fn emu_runs_the_cuda_of_rician3d() {
    check_example("rician3d");
}

/// Runs `program` in the emulator under its default schedule and one with an
/// odd block, against the interpreter.
fn check_program(program: &Program, params: &[(&str, f64)]) {
    let env = RunEnv::new(program, &bindings(program, params)).expect("valid parameters");
    let mut expected = initial_state(program, &env);
    let reference = interp::run(program, &env, &mut expected).expect("interpreter runs");
    let odd = ScheduleRequest {
        block: Some(if rank(program) == 3 {
            vec![8, 2, 2]
        } else {
            vec![8, 4]
        }),
        ..ScheduleRequest::default()
    };
    for (label, request) in [("default", ScheduleRequest::default()), ("block-odd", odd)] {
        let what = format!("{} [{label}]", program.name);
        let schedule = Schedule::new(program, &request).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut actual = initial_state(program, &env);
        let (summary, _) =
            run_with_schedule(program, &env, &mut actual, &schedule, Limits::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            summary.iterations, reference.iterations,
            "{what}: iterations"
        );
        assert_close(program, &expected, &actual, &what);
        for ((r, a), (_, b)) in reference.reductions.iter().zip(&summary.reductions) {
            close(*a, *b, &format!("{what} {r}"));
        }
    }
}

#[test]
fn emu_runs_the_cuda_of_the_bench_programs() {
    let two_d = [("n", 21.0), ("steps", 2.0)];
    for name in [
        "box2d2r",
        "gradient2d",
        "j2d5pt",
        "j2d5pt_check",
        "j2d9pt",
        "j2d9pt_table",
    ] {
        check_program(&bench_program(name), &two_d);
    }
    let three_d = [("n", 11.0), ("steps", 2.0)];
    for name in ["j3d27pt", "star3d1r"] {
        check_program(&bench_program(name), &three_d);
    }
    check_program(
        &bench_program("gaussian_blur"),
        &[("width", 23.0), ("height", 13.0), ("steps", 1.0)],
    );
    check_program(
        &bench_program("rician3d"),
        &[
            ("dim0", 11.0),
            ("dim1", 9.0),
            ("dim2", 5.0),
            ("steps", 2.0),
            ("sigma", 0.05),
            ("lambda", 0.065),
        ],
    );
}

/// A program, its parameter values and the block it runs time-tiled with.
type TimeTiled = (Program, Vec<(&'static str, f64)>, Vec<u32>);

/// Time-tiled CUDA (`--time 2`) in the emulator: the interior path (blocks
/// whose tile lies inside the grid: no test per cell, unrolled loads) and the
/// general path in one launch, with races and barriers checked, against the
/// interpreter. jacobi2d has five parts (the interior path's flags), j2d5pt
/// one part, heat3d is 3-D.
#[test]
fn emu_runs_the_time_tiled_cuda() {
    let cases: [TimeTiled; 3] = [
        (
            short_example("jacobi2d"),
            vec![("dim0", 37.0), ("dim1", 23.0)],
            vec![8, 4],
        ),
        (
            bench_program("j2d5pt"),
            vec![("n", 29.0), ("steps", 4.0)],
            vec![8, 4],
        ),
        (
            short_example("heat3d"),
            vec![
                ("nx", 19.0),
                ("ny", 13.0),
                ("nz", 11.0),
                ("steps", 2.0),
                ("alpha", 0.1),
            ],
            vec![4, 2, 2],
        ),
    ];
    for (program, params, block) in cases {
        let what = format!("{} --time 2 --block {block:?}", program.name);
        let env = RunEnv::new(&program, &bindings(&program, &params)).expect("valid parameters");
        let mut expected = initial_state(&program, &env);
        let reference = interp::run(&program, &env, &mut expected).expect("interpreter runs");
        let request = ScheduleRequest {
            time_steps: Some(2),
            block: Some(block),
            tile: Some(vec![1, 1, 1][..rank(&program)].to_vec()),
            ..ScheduleRequest::default()
        };
        let schedule =
            Schedule::for_run(&program, &request, &env).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(schedule.time.is_some(), "{what}: {:?}", schedule.time_notes);
        let mut actual = initial_state(&program, &env);
        let (summary, _) =
            run_with_schedule(&program, &env, &mut actual, &schedule, Limits::default())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(summary.iterations, reference.iterations, "{what}");
        assert_close(&program, &expected, &actual, &what);
    }
}

/// The error of a run of `name`'s CUDA with `rewrite` applied to it.
fn broken_run(name: &str, request: ScheduleRequest, rewrite: fn(&str) -> String) -> String {
    let (_, params) = EXAMPLES.iter().find(|(n, _)| *n == name).expect("listed");
    let program = short_example(name);
    let env = RunEnv::new(&program, &bindings(&program, params)).expect("valid parameters");
    let schedule = Schedule::new(&program, &request).expect("schedule");
    let mut state = initial_state(&program, &env);
    let device = EmuDevice::new().with_rewrite(rewrite);
    match run_on(device, &program, &env, &mut state, &schedule) {
        Ok(_) => panic!("{name}: the broken kernels ran clean"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_checks_catch_broken_generated_kernels() {
    // The barrier after the shared tile's load removed: a race.
    let err = broken_run("gaussian_blur", ScheduleRequest::default(), |cuda| {
        cuda.replacen("    __syncthreads();\n", "", 1)
    });
    assert!(err.contains("race on shared `img_tile`"), "{err}");
    assert!(err.contains("generated.cu:"), "{err}");
    // The points' guard loosened: reads past the end of the field.
    let err = broken_run(
        "jacobi2d",
        ScheduleRequest {
            shm: ShmRequest::None,
            ..ScheduleRequest::default()
        },
        |cuda| {
            cuda.replace(
                "ix <= hi_x && iy <= hi_y",
                "ix <= hi_x + 2 && iy <= hi_y + 2",
            )
        },
    );
    assert!(err.contains("indexed out of bounds"), "{err}");
    // Half of the reduction's first warp skips its shuffles.
    let err = broken_run("jacobi2d", ScheduleRequest::default(), |cuda| {
        cuda.replace("if (tid < 32) {", "if (tid < 16) {")
    });
    assert!(err.contains("takes no part in this shuffle"), "{err}");
}
