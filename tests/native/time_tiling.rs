//! Time tiling in the C back-end (`--time`, `--cpu-tile`, `--threads`):
//! bit-identical to the interpreter on every example and benchmark program for
//! T = 1..6, on every boundary mode with several stencils per iteration and
//! checks every 1-5 iterations, on grids smaller than a tile and not multiples
//! of it (and a property test over all of those); the notes for a clamped T and
//! an untileable program; and the emitted C of one time-tiled program.

use crate::common;

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;
use stencilc::analysis::tile::TileOrder;
use stencilc::exec::options::RunOptions;
use stencilc::exec::{native, Bindings, Buffer, FieldState};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ScalarType, Value};
use stencilc::source::SourceFile;

pub(super) fn cc_available() -> bool {
    common::runtime_available(
        "cc",
        native::Compiler::from_env()
            .map(|_| ())
            .map_err(|e| e.to_string()),
    )
}

pub(super) fn parse(name: &str, text: &str) -> Program {
    stencilc::front::parse_program(SourceFile::new(name, text.to_string()))
        .and_then(stencilc::analysis::checked)
        .unwrap_or_else(|d| panic!("{d}"))
}

/// Small sizes that are not multiples of the tiles; 7 iterations.
pub(super) fn bindings(program: &Program) -> Bindings {
    let params = program
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let v = match p.name.as_str() {
                "steps" => 7.0,
                "alpha" => 0.1,
                "c2" => 0.2,
                "sigma" => 0.05,
                "lambda" => 0.065,
                _ => 9.0 + 2.0 * i as f64,
            };
            Value::Double(v).cast(p.ty)
        })
        .collect();
    Bindings { params }
}

/// Distinct values in every level, so that a level read from the wrong
/// buffer or the wrong point shows.
pub(super) fn state(program: &Program, env: &RunEnv) -> FieldState {
    let fields = program
        .fields
        .iter()
        .enumerate()
        .map(|(f, field)| {
            let len: usize = env.grid_dims()[field.grid.0].iter().product();
            (0..field.levels())
                .map(|l| {
                    let value =
                        |i: usize| (((i * 7919 + f * 104729 + l * 3571) % 1000) as f64) / 1000.0;
                    match field.ty {
                        ScalarType::Float => {
                            Buffer::Float((0..len).map(|i| value(i) as f32).collect())
                        }
                        ScalarType::Double => Buffer::Double((0..len).map(value).collect()),
                        ScalarType::Int => {
                            Buffer::Int((0..len).map(|i| (value(i) * 100.0) as i32).collect())
                        }
                        ScalarType::Long => {
                            Buffer::Long((0..len).map(|i| (value(i) * 100.0) as i64).collect())
                        }
                    }
                })
                .collect()
        })
        .collect();
    FieldState { fields }
}

/// Runs `program` on the interpreter and on the C back-end with `options`;
/// asserts the same counts, reductions and every level bit for bit. Returns
/// whether the C was time-tiled.
pub(super) fn same_as_interpreter(
    program: &Program,
    env: &RunEnv,
    options: &RunOptions,
    what: &str,
) -> bool {
    let mut expected = state(program, env);
    let want = interp::run(program, env, &mut expected).unwrap();
    let mut got = state(program, env);
    let have = native::run(program, env, &mut got, options, &mut |_| {})
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(have.iterations, want.iterations, "{what}");
    assert_eq!(have.stopped_by_check, want.stopped_by_check, "{what}");
    assert_eq!(have.reductions, want.reductions, "{what}");
    assert_eq!(got, expected, "{what}");
    native::plan(program, env, options)
        .unwrap()
        .tiling
        .is_some()
}

/// Time tiles of `time` steps and `tile` points (innermost first) in
/// `order`, on `threads` threads.
pub(super) fn ordered(order: TileOrder, time: u32, tile: &[u32], threads: u32) -> RunOptions {
    RunOptions {
        time: Some(time),
        cpu_tile: Some(tile.to_vec()),
        threads: Some(threads),
        cpu_order: Some(order),
        ..RunOptions::default()
    }
}

/// Whether the plan for `options` runs its tiles in `order`.
pub(super) fn plans_order(
    program: &Program,
    env: &RunEnv,
    options: &RunOptions,
    order: TileOrder,
) -> bool {
    native::plan(program, env, options)
        .unwrap()
        .tiling
        .is_some_and(|t| t.order == order)
}

/// `bench/programs/<name>.sdsl`, parsed.
pub(super) fn bench_program(name: &str) -> Program {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("bench/programs/{name}.sdsl"));
    parse(
        &format!("{name}.sdsl"),
        &std::fs::read_to_string(path).unwrap(),
    )
}

/// Every example and bench program, parsed, with its path.
pub(super) fn example_and_bench_programs() -> Vec<(String, Program)> {
    common::example_and_bench_programs()
        .into_iter()
        .map(|path| {
            let name = path.display().to_string();
            let program = parse(&name, &std::fs::read_to_string(&path).unwrap());
            (name, program)
        })
        .collect()
}

/// Level-by-level time tiles (the wavefront order has its own tests, in
/// `wavefront.rs`).
fn tiled(time: u32, tile: &[u32]) -> RunOptions {
    RunOptions {
        time: Some(time),
        cpu_tile: Some(tile.to_vec()),
        threads: Some(2),
        cpu_order: Some(TileOrder::Levels),
        ..RunOptions::default()
    }
}

#[test]
fn every_example_and_bench_program_matches_the_interpreter_for_t_1_to_6() {
    if !cc_available() {
        return;
    }
    let mut tiled_runs = 0;
    let mut programs = 0;
    let mut untiled = Vec::new();
    for path in common::example_and_bench_programs() {
        let program = parse(
            &path.display().to_string(),
            &std::fs::read_to_string(&path).unwrap(),
        );
        let env = RunEnv::new(&program, &bindings(&program)).unwrap();
        for time in 1..=6 {
            // Tiles of 5 and 3 points (innermost first): no size divides.
            let what = format!("{} with --time {time}", path.display());
            if same_as_interpreter(&program, &env, &tiled(time, &[5, 3, 3]), &what) {
                tiled_runs += 1;
            } else if time > 1 && env.max_iters() > 1 && env.every() != Some(1) {
                // Only one iteration, or a check after each, leaves T = 1.
                untiled.push(what);
            }
        }
        programs += 1;
    }
    assert!(programs >= 16, "examples and benchmarks found: {programs}");
    assert!(untiled.is_empty(), "untiled: {untiled:#?}");
    assert!(
        tiled_runs >= 5 * (programs - 3),
        "time-tiled runs: {tiled_runs}"
    );
}

/// Two stencils per iteration over three fields (one read-only), with
/// `mode` borders, a sum reduction and a check every `kcheck` iterations
/// that stops the iterate once the sum falls below `limit`.
pub(super) fn two_stencils(mode: &str) -> Program {
    let boundary = if mode == "none" {
        String::new()
    } else {
        format!(" boundary {mode}")
    };
    // With no boundary mode, reads must stay inside the grid.
    let smooth = if mode == "none" {
        "[1:ny-2][2:nx-2]"
    } else {
        "[0:ny-1][0:nx-1]"
    };
    let text = format!(
        "int nx;\nint ny;\nint steps;\nint kcheck;\nfloat limit;\ngrid g[ny][nx];\n\
         float griddata u on g at 0,1{boundary};\nfloat griddata v on g at 0{boundary};\n\
         float griddata k on g at 0;\n\
         iterate steps {{\n\
           stencil smooth {{\n\
             {smooth} : [0]v[0][0] = 0.25f*[0]u[-1][0] + 0.25f*[0]u[1][0] + 0.2f*[0]u[0][-2] + 0.3f*[0]u[0][1];\n\
           }}\n\
           stencil update {{\n\
             [1:ny-2][1:nx-2] : [1]u[0][0] = [0]u[0][0] + [0]k[0][0] * ([0]v[0][-1] + [0]v[1][0] - 2.0f*[0]v[0][0]);\n\
           }}\n\
           reduction total + {{\n\
             [0:ny-1][0:nx-1] : [1]u[0][0];\n\
           }}\n\
         }} check (total < limit) every kcheck iterations\n"
    );
    parse(&format!("two_stencils_{mode}.sdsl"), &text)
}

pub(super) fn env_of(
    program: &Program,
    nx: i32,
    ny: i32,
    steps: i32,
    kcheck: i32,
    limit: f32,
) -> RunEnv {
    let params = vec![
        Value::Int(nx),
        Value::Int(ny),
        Value::Int(steps),
        Value::Int(kcheck),
        Value::Float(limit),
    ];
    RunEnv::new(program, &Bindings { params }).unwrap()
}

pub(super) const MODES: [&str; 5] = ["clamp", "mirror", "periodic", "zero", "none"];

#[test]
fn every_boundary_mode_with_two_stencils_and_checks_matches_the_interpreter() {
    if !cc_available() {
        return;
    }
    for mode in MODES {
        let program = two_stencils(mode);
        for (kcheck, time) in [(1, 2), (2, 3), (3, 3), (4, 6), (5, 4)] {
            // 23 x 17 points in tiles of 6 x 4 (innermost first), and a grid
            // smaller than one tile.
            for (nx, ny, tile) in [(23, 17, [6u32, 4]), (5, 4, [16, 16])] {
                let env = env_of(&program, nx, ny, 11, kcheck, -1.0e9);
                let what = format!("{mode}, {nx}x{ny}, every {kcheck}, --time {time}");
                let was_tiled = same_as_interpreter(&program, &env, &tiled(time, &tile), &what);
                // A check every iteration leaves one step per sweep.
                assert_eq!(was_tiled, kcheck > 1, "{what}");
            }
        }
        // The check stops the iterate after the first checked iteration.
        let env = env_of(&program, 23, 17, 11, 3, 1.0e9);
        let what = format!("{mode}, stopped by the check");
        assert!(same_as_interpreter(
            &program,
            &env,
            &tiled(4, &[8, 5]),
            &what
        ));
    }
}

proptest! {
    #![proptest_config(common::proptest_config(12))]

    #[test]
    fn random_time_and_tile_sizes_match_the_interpreter(
        mode in 0usize..5,
        nx in 4i32..40,
        ny in 4i32..30,
        steps in 1i32..12,
        kcheck in 1i32..6,
        time in 1u32..8,
        tile_x in 1u32..40,
        tile_y in 1u32..20,
        threads in 1u32..4,
        wavefront in any::<bool>(),
    ) {
        if !cc_available() {
            return Ok(());
        }
        let program = two_stencils(MODES[mode]);
        let env = env_of(&program, nx, ny, steps, kcheck, -1.0e9);
        let options = RunOptions {
            time: Some(time),
            cpu_tile: Some(vec![tile_x, tile_y]),
            threads: Some(threads),
            cpu_order: Some(if wavefront { TileOrder::Wavefront } else { TileOrder::Levels }),
            ..RunOptions::default()
        };
        let what = format!("{} {nx}x{ny} steps {steps} every {kcheck} T {time} tile {tile_x},{tile_y} wavefront {wavefront}", MODES[mode]);
        same_as_interpreter(&program, &env, &options, &what);
    }
}

fn run_cli(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "stencilc {args:?}: {stderr}");
    stderr
}

#[test]
fn a_time_above_the_iterations_or_the_check_interval_is_clamped_with_a_note() {
    if !cc_available() {
        return;
    }
    let stderr = run_cli(&[
        "run",
        "bench/programs/j2d5pt.sdsl",
        "--backend",
        "c",
        "--set",
        "n=40",
        "--set",
        "steps=5",
        "--time",
        "9",
        "--verify",
    ]);
    assert!(
        stderr.contains("note: `--time 9` is more than the 5 iterations of `j2d5pt`; using 5"),
        "{stderr}"
    );
    let stderr = run_cli(&[
        "run",
        "bench/programs/j2d5pt_check.sdsl",
        "--backend",
        "c",
        "--set",
        "n=40",
        "--set",
        "steps=50",
        "--time",
        "64",
        "--verify",
    ]);
    assert!(
        stderr.contains("is more than the check interval"),
        "{stderr}"
    );
}

#[test]
fn an_untileable_program_runs_untiled_with_a_note_naming_the_construct() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in_place.sdsl");
    std::fs::write(
        &path,
        "int n;\nint k;\ngrid g[n];\nfloat griddata a on g at 0,1 boundary clamp;\n\
         iterate 6 {\n  stencil shift {\n    [0:n-1] : [1]a[0] = 0.5f*[0]a[-k] + 0.5f*[0]a[1];\n  }\n}\n",
    )
    .unwrap();
    let stderr = run_cli(&[
        "run",
        path.to_str().unwrap(),
        "--backend",
        "c",
        "--set",
        "n=30",
        "--set",
        "k=2",
        "--time",
        "3",
        "--verify",
    ]);
    assert!(
        stderr.contains(
            "note: `--time 3` ignored: `in_place` cannot be time-tiled because stencil `shift` \
             reads `a` at an offset that depends on a parameter; running one sweep per iteration"
        ),
        "{stderr}"
    );
}

#[test]
fn verbose_says_what_the_heuristic_chose_and_why() {
    if !cc_available() {
        return;
    }
    let stderr = run_cli(&[
        "run",
        "bench/programs/j2d5pt.sdsl",
        "--backend",
        "c",
        "--set",
        "n=64",
        "--set",
        "steps=3",
        "-v",
    ]);
    assert!(
        stderr.contains("c: untiled: the data") && stderr.contains("fits in the last-level cache"),
        "{stderr}"
    );
}

#[test]
fn emitted_time_tiled_c_reads_as_a_program() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/programs/j2d5pt.sdsl");
    let program = parse("j2d5pt.sdsl", &std::fs::read_to_string(path).unwrap());
    let plan = stencilc::analysis::tile::CpuPlan {
        tiling: Some(stencilc::analysis::tile::CpuTiling {
            steps: 4,
            tile: vec![32, 1024],
            order: stencilc::analysis::tile::TileOrder::Levels,
        }),
        threads: Some(2),
        ..Default::default()
    };
    let unit = stencilc::back::c::emit_program_planned(&program, &plan);
    insta::assert_snapshot!("j2d5pt_time4", unit.source);
}

/// A stop flag set before the run (as Ctrl-C in Python sets it) ends the
/// compiled loop after its first iteration or time-tiled sweep, with
/// `Interrupted`, untiled and tiled alike (the tiled loop gives back the
/// caller's buffers before freeing its second set); a flag left clear
/// changes nothing.
#[test]
fn a_set_stop_flag_ends_the_compiled_loop_after_one_iteration_or_sweep() {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use stencilc::exec::options::ProgressHook;
    use stencilc::exec::ExecError;
    if !cc_available() {
        return;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/programs/j2d5pt.sdsl");
    let program = parse("j2d5pt.sdsl", &std::fs::read_to_string(path).unwrap());
    let env = stencilc::exec::bind(&program, &bindings(&program)).unwrap();
    for (options, sweep) in [(RunOptions::default(), 1), (tiled(3, &[4, 4]), 3)] {
        let stop = Arc::new(AtomicBool::new(true));
        let options = RunOptions {
            progress: Some(ProgressHook::new(|_, _| {}).with_stop(Arc::clone(&stop))),
            ..options
        };
        let mut got = state(&program, &env);
        let error = native::run(&program, &env, &mut got, &options, &mut |_| {}).unwrap_err();
        assert!(
            matches!(error, ExecError::Interrupted(done) if done == sweep),
            "{error:?}"
        );
        stop.store(false, std::sync::atomic::Ordering::Relaxed);
        assert!(same_as_interpreter(&program, &env, &options, "flag clear") == (sweep > 1));
    }
}
