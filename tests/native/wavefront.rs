//! The wavefront order of the C back-end's time tiles (`--cpu-order
//! wavefront`): bit-identical to the interpreter on every example and
//! benchmark program (2-D and 3-D, reach 1 and 2, several stencils per
//! iteration), on every boundary mode with a reduction and checks, with tiles
//! short and tall and sizes that are not multiples of them; the note where it
//! does not apply; and the emitted loop.

use stencilc::analysis::tile::{tile_shape, TileOrder};
use stencilc::exec::native;
use stencilc::exec::options::RunOptions;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, Value};

use super::time_tiling::{
    bench_program, bindings, cc_available, env_of, ordered, parse, plans_order,
    same_as_interpreter, two_stencils, MODES,
};

fn wave(time: u32, tile: &[u32], threads: u32) -> RunOptions {
    ordered(TileOrder::Wavefront, time, tile, threads)
}

/// Whether the plan for `options` runs its tiles in a wave.
fn in_a_wave(program: &Program, env: &RunEnv, options: &RunOptions) -> bool {
    plans_order(program, env, options, TileOrder::Wavefront)
}

#[test]
fn every_example_and_bench_program_matches_the_interpreter_in_a_wave() {
    if !cc_available() {
        return;
    }
    let mut waves = 0;
    let mut programs = 0;
    for path in crate::common::example_and_bench_programs() {
        let program = parse(
            &path.display().to_string(),
            &std::fs::read_to_string(&path).unwrap(),
        );
        let env = RunEnv::new(&program, &bindings(&program)).unwrap();
        let applies = tile_shape(&program).is_ok_and(|s| s.wavefront().is_ok());
        // Short tiles (3 rows: the wave crosses tile and chunk edges) and
        // tall ones (13 rows, taller than most of these grids); no size
        // divides.
        for (time, tile) in [(2, [5u32, 3, 3]), (5, [7, 13, 13])] {
            let what = format!("{} with --time {time} in a wave", path.display());
            let options = wave(time, &tile, 2);
            if same_as_interpreter(&program, &env, &options, &what) {
                assert_eq!(in_a_wave(&program, &env, &options), applies, "{what}");
                waves += usize::from(applies);
            }
        }
        programs += 1;
    }
    assert!(programs >= 16, "examples and benchmarks found: {programs}");
    assert!(waves >= 2 * (programs - 5), "runs in a wave: {waves}");
}

#[test]
fn every_boundary_mode_with_two_stencils_a_reduction_and_checks_matches_in_a_wave() {
    if !cc_available() {
        return;
    }
    for mode in MODES {
        let program = two_stencils(mode);
        for (kcheck, time) in [(2, 2), (3, 3), (5, 4)] {
            // 23 x 17 points in tiles 4 and 9 rows tall (innermost first), and
            // a grid smaller than one tile; 1 to 3 threads.
            for (nx, ny, tile, threads) in [
                (23, 17, [6u32, 4], 2),
                (23, 17, [7, 9], 3),
                (5, 4, [16, 16], 1),
            ] {
                let env = env_of(&program, nx, ny, 11, kcheck, -1.0e9);
                let options = wave(time, &tile, threads);
                let what =
                    format!("{mode}, {nx}x{ny}, tile {tile:?}, every {kcheck}, --time {time}");
                assert!(
                    same_as_interpreter(&program, &env, &options, &what),
                    "{what}"
                );
                // Its update reads `[0]v[1][0]` across the periodic border.
                assert_eq!(
                    in_a_wave(&program, &env, &options),
                    mode != "periodic",
                    "{what}"
                );
            }
        }
        let env = env_of(&program, 23, 17, 11, 3, 1.0e9);
        let what = format!("{mode}, stopped by the check");
        assert!(same_as_interpreter(
            &program,
            &env,
            &wave(4, &[8, 5], 2),
            &what
        ));
    }
}

#[test]
fn reach_one_and_two_and_a_3d_stencil_match_in_tall_tiles() {
    if !cc_available() {
        return;
    }
    for (name, sizes, tiles) in [
        ("j2d5pt", vec![61], vec![vec![16u32, 37], vec![50, 200]]),
        ("j2d9pt", vec![61], vec![vec![16, 37], vec![64, 23]]),
        ("star3d1r", vec![19], vec![vec![8, 5, 11], vec![32, 32, 32]]),
        // Tiles taller than the rows a streamed wave holds (3 bands and 8:
        // 26 rows at T = 4, 38 at T = 8), so its band slides down the window.
        ("j2d5pt", vec![150], vec![vec![40, 150]]),
        ("star3d1r", vec![40], vec![vec![16, 8, 64]]),
        // Planes so large (200 x 200 points, two levels: 320 kB a row) that
        // three bands would pass the window's 8 MiB at T = 8: it holds 26.
        ("star3d1r", vec![200], vec![vec![200, 200, 200]]),
    ] {
        let program = bench_program(name);
        for n in sizes {
            let params = program
                .params
                .iter()
                .map(|p| match p.name.as_str() {
                    "steps" => Value::Int(13),
                    _ => Value::Int(n),
                })
                .collect();
            let env = RunEnv::new(&program, &stencilc::exec::Bindings { params }).unwrap();
            for tile in &tiles {
                for (time, threads) in [(4, 2), (8, 3)] {
                    let options = wave(time, tile, threads);
                    let what = format!("{name} {n} tile {tile:?} T {time} threads {threads}");
                    assert!(
                        same_as_interpreter(&program, &env, &options, &what),
                        "{what}"
                    );
                    assert!(in_a_wave(&program, &env, &options), "{what}");
                }
            }
        }
    }
}

#[test]
fn a_wavefront_asked_across_a_periodic_outermost_axis_is_a_note() {
    let program = two_stencils("periodic");
    let env = env_of(&program, 23, 17, 11, 3, -1.0e9);
    let plan = native::plan(&program, &env, &wave(4, &[8, 5], 2)).unwrap();
    assert_eq!(plan.tiling.map(|t| t.order), Some(TileOrder::Levels));
    assert!(
        plan.notes
            .iter()
            .any(|n| n.contains("`--cpu-order wavefront` ignored")
                && n.contains("periodic boundary is read across the outermost axis")),
        "{:?}",
        plan.notes
    );
    // Left to the model, `-v` says why the wavefront was not considered.
    let plan = native::plan(
        &program,
        &env,
        &RunOptions {
            cpu_order: None,
            ..wave(4, &[8, 5], 2)
        },
    )
    .unwrap();
    assert!(
        plan.reasons
            .iter()
            .any(|r| r.contains("the wavefront order does not apply")),
        "{:?}",
        plan.reasons
    );
}

#[test]
fn emitted_wavefront_loop_reads_as_a_program() {
    let program = bench_program("j2d9pt");
    let plan = stencilc::analysis::tile::CpuPlan {
        tiling: Some(stencilc::analysis::tile::CpuTiling {
            steps: 4,
            tile: vec![256, 512],
            order: TileOrder::Wavefront,
        }),
        threads: Some(2),
        ..Default::default()
    };
    let unit = stencilc::back::c::emit_program_planned(&program, &plan);
    insta::assert_snapshot!("j2d9pt_time4_wavefront", unit.source);
}
