//! The march order of the C back-end's time tiles (`--cpu-order march`):
//! bit-identical to the interpreter on every example and benchmark program
//! it applies to (2-D and 3-D, reach 1 and 2, offsets from loops), with odd
//! and even steps per sweep, tiles that no size divides, grids smaller than
//! a tile, every boundary mode (a subset that reads outside the grid runs
//! untiled) with a reduction and checks; the note where it does not apply;
//! the model's choice at 512³; and the emitted march.

use stencilc::analysis::tile::{march_shape, tile_shape, TileOrder};
use stencilc::exec::native;
use stencilc::exec::options::RunOptions;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, Value};

use proptest::prelude::*;

use super::time_tiling::{
    bench_program, bindings, cc_available, example_and_bench_programs, ordered, parse, plans_order,
    same_as_interpreter, two_stencils,
};

fn march(time: u32, tile: &[u32], threads: u32) -> RunOptions {
    ordered(TileOrder::March, time, tile, threads)
}

/// Whether the plan for `options` marches.
fn marches(program: &Program, env: &RunEnv, options: &RunOptions) -> bool {
    plans_order(program, env, options, TileOrder::March)
}

fn sized(program: &Program, n: i32, steps: i32) -> RunEnv {
    let params = program
        .params
        .iter()
        .map(|p| match p.name.as_str() {
            "steps" => Value::Int(steps),
            _ => Value::Int(n),
        })
        .collect();
    RunEnv::new(program, &stencilc::exec::Bindings { params }).unwrap()
}

#[test]
fn every_example_and_bench_program_matches_the_interpreter_in_a_march() {
    if !cc_available() {
        return;
    }
    let mut marched = 0;
    let mut programs = 0;
    for (path, program) in example_and_bench_programs() {
        let env = RunEnv::new(&program, &bindings(&program)).unwrap();
        let applies = tile_shape(&program).is_ok_and(|s| march_shape(&program, &s).is_ok());
        // Odd and even steps per sweep (an even sweep ends in a single
        // step), short tiles and tiles larger than these grids.
        for (time, tile) in [(3, [5u32, 3, 3]), (4, [7, 4, 2]), (5, [64, 64, 64])] {
            let what = format!("{} with --time {time} marching", path);
            let options = march(time, &tile, 2);
            if same_as_interpreter(&program, &env, &options, &what) {
                assert_eq!(marches(&program, &env, &options), applies, "{what}");
                marched += usize::from(applies);
            }
        }
        programs += 1;
    }
    assert!(programs >= 16, "examples and benchmarks found: {programs}");
    // j2d5pt, j2d9pt, star3d1r, j3d27pt, box2d2r and jacobi2d at least.
    assert!(marched >= 3 * 6, "runs marching: {marched}");
}

#[test]
fn reach_one_and_two_and_3d_stencils_match_with_any_steps_and_threads() {
    if !cc_available() {
        return;
    }
    for (name, n, tiles) in [
        ("j2d5pt", 61, vec![vec![16u32, 61], vec![7, 5]]),
        ("j2d9pt", 37, vec![vec![16, 37], vec![9, 2]]),
        ("star3d1r", 19, vec![vec![8, 5, 19], vec![32, 32, 32]]),
        ("j3d27pt", 17, vec![vec![6, 4, 17], vec![16, 16, 16]]),
        // Grids no larger than the reach: an empty subset runs untiled.
        ("j2d5pt", 2, vec![vec![4, 4]]),
        ("star3d1r", 1, vec![vec![4, 4, 4]]),
    ] {
        let program = bench_program(name);
        let env = sized(&program, n, 13);
        for tile in &tiles {
            for (time, threads) in [(1, 2), (2, 1), (3, 2), (6, 3), (9, 2)] {
                let options = march(time, tile, threads);
                let what = format!("{name} {n} tile {tile:?} T {time} threads {threads}");
                assert!(
                    same_as_interpreter(&program, &env, &options, &what) || time == 1,
                    "{what}"
                );
                if time > 1 {
                    assert!(marches(&program, &env, &options), "{what}");
                }
            }
        }
    }
}

#[test]
fn reads_within_a_plane_only_below_or_only_above_match() {
    if !cc_available() {
        return;
    }
    for (name, text) in [
        // No reach along axis 0: one ring plane, no lag.
        (
            "rows_only",
            "int n;\nint steps;\ngrid g[n][n];\ndouble griddata a on g at 0,1;\niterate steps {\n\
             stencil s {\n [1:n-2][1:n-2] : [1]a[0][0] = 0.5*[0]a[0][-1] + 0.25*[0]a[0][1] + 0.25*[0]a[0][0];\n }\n}\n",
        ),
        // Only the row below: two ring planes, no lag.
        (
            "below_only",
            "int n;\nint steps;\ngrid g[n][n];\nfloat griddata a on g at 0,1;\niterate steps {\n\
             stencil s {\n [1:n-1][0:n-1] : [1]a[0][0] = 0.5f*[0]a[-1][0] + 0.25f*[0]a[0][0];\n }\n}\n",
        ),
        // Two planes above only, in 3-D: a lag of 2.
        (
            "above_two",
            "int n;\nint steps;\ngrid g[n][n][n];\nfloat griddata a on g at 0,1;\niterate steps {\n\
             stencil s {\n [0:n-3][1:n-2][0:n-1] : [1]a[0][0][0] = 0.5f*[0]a[2][0][0] + 0.2f*[0]a[1][1][0] + 0.3f*[0]a[0][-1][0];\n }\n}\n",
        ),
    ] {
        let program = parse(&format!("{name}.sdsl"), text);
        for n in [9, 23] {
            let env = sized(&program, n, 11);
            for (time, tile) in [(3, [4u32, 3, 3]), (5, [8, 16, 16]), (8, [5, 7, 2])] {
                let options = march(time, &tile, 2);
                let what = format!("{name} {n} T {time} tile {tile:?}");
                assert!(
                    same_as_interpreter(&program, &env, &options, &what),
                    "{what}"
                );
                assert!(marches(&program, &env, &options), "{what}");
            }
        }
    }
}

/// One field of two levels, one stencil part over `subset`, a reduction
/// over every point of the upper level and a check.
fn one_part(mode: &str, subset: &str) -> Program {
    let boundary = if mode == "none" {
        String::new()
    } else {
        format!(" boundary {mode}")
    };
    let text = format!(
        "int nx;\nint ny;\nint steps;\nint kcheck;\nfloat limit;\ngrid g[ny][nx];\n\
         float griddata u on g at 0,1{boundary};\n\
         iterate steps {{\n\
           stencil smooth {{\n\
             {subset} : [1]u[0][0] = 0.3f*[0]u[0][0] + 0.2f*[0]u[-1][0] + 0.1f*[0]u[1][0] + 0.25f*[0]u[0][-2] + 0.15f*[0]u[0][1];\n\
           }}\n\
           reduction total + {{\n\
             [0:ny-1][0:nx-1] : [1]u[0][0];\n\
           }}\n\
         }} check (total < limit) every kcheck iterations\n"
    );
    parse(&format!("one_part_{mode}.sdsl"), &text)
}

fn env_of(program: &Program, nx: i32, ny: i32, steps: i32, kcheck: i32, limit: f32) -> RunEnv {
    let params = vec![
        Value::Int(nx),
        Value::Int(ny),
        Value::Int(steps),
        Value::Int(kcheck),
        Value::Float(limit),
    ];
    RunEnv::new(program, &stencilc::exec::Bindings { params }).unwrap()
}

#[test]
fn every_boundary_mode_with_a_reduction_and_checks_matches_in_a_march() {
    if !cc_available() {
        return;
    }
    for mode in ["clamp", "mirror", "zero", "none"] {
        // Inside the grid the march runs; over the whole grid (a boundary
        // mode at work) its sweeps run untiled.
        let subsets: &[&str] = if mode == "none" {
            &["[1:ny-2][2:nx-2]"]
        } else {
            &["[1:ny-2][2:nx-2]", "[0:ny-1][0:nx-1]", "[3:ny-1][0:nx-4]"]
        };
        for subset in subsets {
            let program = one_part(mode, subset);
            for (kcheck, time) in [(2, 3), (3, 3), (5, 4), (7, 7)] {
                for (nx, ny, tile, threads) in [
                    (23, 17, [6u32, 4], 2),
                    (23, 17, [7, 9], 3),
                    (5, 4, [16, 16], 1),
                ] {
                    let env = env_of(&program, nx, ny, 11, kcheck, -1.0e9);
                    let options = march(time, &tile, threads);
                    let what = format!(
                        "{mode} {subset}, {nx}x{ny}, tile {tile:?}, every {kcheck}, --time {time}"
                    );
                    assert!(
                        same_as_interpreter(&program, &env, &options, &what),
                        "{what}"
                    );
                    assert!(marches(&program, &env, &options), "{what}");
                }
            }
            let env = env_of(&program, 23, 17, 11, 3, 1.0e9);
            let what = format!("{mode} {subset}, stopped by the check");
            assert!(same_as_interpreter(
                &program,
                &env,
                &march(5, &[8, 5], 2),
                &what
            ));
        }
    }
}

proptest! {
    #![proptest_config(crate::common::proptest_config(12))]

    #[test]
    fn random_subsets_steps_and_tiles_match_the_interpreter_in_a_march(
        mode in 0usize..4,
        subset in 0usize..3,
        nx in 3i32..40,
        ny in 3i32..30,
        steps in 1i32..12,
        kcheck in 1i32..6,
        time in 1u32..10,
        tile_x in 1u32..40,
        tile_y in 1u32..20,
        threads in 1u32..4,
    ) {
        if !cc_available() {
            return Ok(());
        }
        let mode = ["clamp", "mirror", "zero", "none"][mode];
        // Inside the grid, or (with a boundary mode) over all of it.
        let subset = match (mode, subset) {
            ("none", _) | (_, 0) => "[1:ny-2][2:nx-2]",
            (_, 1) => "[0:ny-1][0:nx-1]",
            _ => "[2:ny-3][3:nx-2]",
        };
        let program = one_part(mode, subset);
        let env = env_of(&program, nx, ny, steps, kcheck, -1.0e9);
        let options = march(time, &[tile_x, tile_y], threads);
        let what = format!("{mode} {subset} {nx}x{ny} steps {steps} every {kcheck} T {time} tile {tile_x},{tile_y} threads {threads}");
        same_as_interpreter(&program, &env, &options, &what);
    }
}

#[test]
fn a_march_asked_where_it_does_not_apply_is_a_note() {
    let program = two_stencils("clamp");
    let env = super::time_tiling::env_of(&program, 23, 17, 11, 3, -1.0e9);
    let plan = native::plan(&program, &env, &march(4, &[8, 5], 2)).unwrap();
    assert_eq!(plan.tiling.map(|t| t.order), Some(TileOrder::Levels));
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("`--cpu-order march` ignored")
                && n.contains("an iteration runs 2 stencil parts")),
        "{:?}",
        plan.notes
    );
}

#[test]
fn the_model_marches_star3d1r_at_512_cubed_and_leaves_small_grids_untiled() {
    let program = bench_program("star3d1r");
    let options = RunOptions {
        threads: Some(2),
        ..RunOptions::default()
    };
    let plan = native::plan(&program, &sized(&program, 512, 64), &options).unwrap();
    let tiling = plan.tiling.expect("tiled at 512³");
    assert_eq!(tiling.order, TileOrder::March, "{:?}", plan.reasons);
    assert_eq!(tiling.steps % 2, 1, "a march takes odd steps: {tiling:?}");
    assert_eq!(tiling.tile[0], 512, "a march covers axis 0 whole");
    let plan = native::plan(&program, &sized(&program, 64, 64), &options).unwrap();
    assert!(plan.tiling.is_none(), "{:?}", plan.reasons);
}

#[test]
fn emitted_march_reads_as_a_program() {
    let program = bench_program("star3d1r");
    let plan = stencilc::analysis::tile::CpuPlan {
        tiling: Some(stencilc::analysis::tile::CpuTiling {
            steps: 7,
            tile: vec![512, 32, 256],
            order: TileOrder::March,
        }),
        threads: Some(2),
        ..Default::default()
    };
    let unit = stencilc::back::c::emit_program_planned(&program, &plan);
    insta::assert_snapshot!("star3d1r_time7_march", unit.source);
}
