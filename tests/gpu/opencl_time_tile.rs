//! Overlapped time tiling (`--time T`, `time:`): time-tiled runs on OpenCL
//! (PoCL in CI) against the interpreter for T = 1..6 on the examples and
//! bench programs and on programs of every boundary mode with two stencils per
//! iteration and checks every 1-5 iterations, on sizes smaller than a tile and
//! not multiples of the block; what cannot be tiled and why; the kernels as
//! emitted, and NVRTC on every one.

use crate::common;
use crate::gpu_common;
use common::gen;
use proptest::prelude::*;

use gpu_common::*;
use stencilc::driver::emit::{emit_with, EmitOptions, GpuTarget};
use stencilc::exec::cuda::nvrtc;
use stencilc::exec::{opencl, Buffer, FieldState};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::Program;
use stencilc::schedule::{Schedule, ScheduleRequest};

/// A program, its parameter values and the block to run it with.
type Case = (Program, Vec<(&'static str, f64)>, Option<Vec<u32>>);

fn opencl_here() -> bool {
    common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    )
}

fn with_time(steps: u32, block: Option<Vec<u32>>, tile: Option<Vec<u32>>) -> ScheduleRequest {
    ScheduleRequest {
        time_steps: Some(steps),
        block,
        tile,
        ..ScheduleRequest::default()
    }
}

/// [`initial_state`] with each time level made different (level `j` scaled
/// by `1 + j/8`), so that a level read from the wrong buffer shows.
fn distinct_levels(program: &Program, env: &RunEnv) -> FieldState {
    let mut state = initial_state(program, env);
    for levels in &mut state.fields {
        for (j, level) in levels.iter_mut().enumerate() {
            let scale = 1.0 + j as f64 / 8.0;
            match level {
                Buffer::Float(v) => v.iter_mut().for_each(|x| *x *= scale as f32),
                Buffer::Double(v) => v.iter_mut().for_each(|x| *x *= scale),
                _ => {}
            }
        }
    }
    state
}

/// Runs `program` time-tiled under `request` on OpenCL and compares every
/// level of every field, the iteration count and the reductions with the
/// interpreter; `tiled`: whether the schedule must time-tile.
fn agree(program: &Program, values: &[(&str, f64)], request: &ScheduleRequest, tiled: bool) {
    let env = RunEnv::new(program, &bindings(program, values)).unwrap();
    let mut expected = distinct_levels(program, &env);
    let reference = interp::run(program, &env, &mut expected).expect("interpreter runs");
    let what = format!(
        "{} {values:?} --time {:?} block {:?} tile {:?}",
        program.name, request.time_steps, request.block, request.tile
    );
    let schedule = Schedule::for_run(program, request, &env).unwrap();
    assert_eq!(
        schedule.time.is_some(),
        tiled,
        "{what}: {:?}",
        schedule.time_notes
    );
    let mut actual = distinct_levels(program, &env);
    let summary = opencl::run_with_schedule(program, &env, &mut actual, &schedule)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(summary.iterations, reference.iterations, "{what}");
    assert_eq!(
        summary.stopped_by_check, reference.stopped_by_check,
        "{what}"
    );
    for ((name, a), (_, e)) in summary.reductions.iter().zip(&reference.reductions) {
        let (a, e) = (a.map(|v| v.as_f64()), e.map(|v| v.as_f64()));
        match (a, e) {
            (Some(a), Some(e)) => assert!(
                (a - e).abs() <= 1e-4 * e.abs().max(1.0),
                "{what}: reduction {name}: {a} against {e}"
            ),
            _ => assert_eq!(a, e, "{what}: reduction {name}"),
        }
    }
    assert_close(program, &expected, &actual, &what);
}

/// Two stencils per iteration over a two-level field `a`, a one-level `t`
/// and a read-only `k`, all with boundary `mode`; the second stencil runs on
/// the grid inset by `inset`; a sum checked every `every` iterations (the
/// check never holds, so every iteration runs).
fn two_stencils(mode: &str, inset: u32, every: u32) -> Program {
    let (lo, hi1) = if mode == "none" { (1, 2) } else { (0, 1) };
    let range = |n: &str, i: u32| {
        let lo = lo + i;
        let hi = hi1 + i;
        format!("[{lo}:{n}-{hi}]")
    };
    let first = format!("{}{}", range("h", 0), range("w", 0));
    let second = format!("{}{}", range("h", inset + 1), range("w", inset + 1));
    let text = format!(
        "int w;\nint h;\nint steps;\ngrid g[h][w];\n\
         float griddata a on g at 0,1 boundary {mode};\n\
         float griddata t on g at 0 boundary {mode};\n\
         float griddata k on g at 0 boundary {mode};\n\
         iterate steps {{\n\
           stencil smooth {{ {first} : [0]t[0][0] = 0.25f*[0]a[0][-1] + 0.5f*[0]a[0][0] \
             + 0.25f*[0]a[1][1]*[0]k[0][1]; }}\n\
           stencil update {{ {second} : [1]a[0][0] = 0.3f*[0]t[-1][0] + 0.3f*[0]t[0][1] \
             + 0.2f*[0]a[0][0] + 0.2f*[0]t[1][-1]; }}\n\
           reduction total + {{ {first} : [1]a[0][0]; }}\n\
         }} check (total < 0.0f) every {every} iterations\n"
    );
    parse(&format!("two_{mode}_{inset}_{every}"), &text)
}

#[test]
fn every_boundary_mode_agrees_with_the_interpreter_for_t_1_to_6() {
    if !opencl_here() {
        return;
    }
    // A sampled matrix (the suite runs on a 2-core CI): every mode twice,
    // together every T of 1..6, check intervals of 1 to 5, a grid smaller
    // than one tile, a 1-point grid and grids that are no multiple of the
    // block; the property test below draws more.
    let sizes = [(3.0, 2.0), (37.0, 13.0), (1.0, 1.0), (21.0, 30.0)];
    let cases = [
        ("clamp", 6, 5, 0),
        ("clamp", 2, 3, 1),
        ("mirror", 4, 4, 2),
        ("mirror", 3, 5, 3),
        ("periodic", 5, 5, 1),
        ("periodic", 3, 2, 3),
        ("zero", 2, 2, 0),
        ("zero", 6, 4, 1),
        ("none", 4, 5, 3),
        ("none", 1, 1, 1),
    ];
    for (mode, steps, every, size) in cases {
        let program = two_stencils(mode, steps % 2, every);
        let (w, h) = sizes[size];
        let (w, h) = if mode == "none" {
            (w + 5.0, h + 5.0)
        } else {
            (w, h)
        };
        let request = with_time(steps, Some(vec![8, 4]), Some(vec![1, 2]));
        agree(
            &program,
            &[("w", w), ("h", h), ("steps", 7.0)],
            &request,
            steps.min(every) > 1,
        );
    }
}

proptest! {
    #![proptest_config(common::proptest_config(gen::cases(3)))]

    #[test]
    fn random_t_modes_sizes_and_checks_agree_with_the_interpreter(
        mode in 0usize..5,
        steps in 1u32..=6,
        every in 1u32..=5,
        inset in 0u32..2,
        w in 1u32..40,
        h in 1u32..24,
        block in prop::sample::select(vec![vec![8u32, 4], vec![16, 2], vec![4, 4]]),
        run in 1u32..=3,
    ) {
        if !opencl_here() {
            return Ok(());
        }
        let mode = ["clamp", "mirror", "periodic", "zero", "none"][mode];
        let (w, h) = if mode == "none" { (w + 5, h + 5) } else { (w, h) };
        let program = two_stencils(mode, inset, every);
        let request = with_time(steps, Some(block), Some(vec![1, run]));
        agree(
            &program,
            &[("w", f64::from(w)), ("h", f64::from(h)), ("steps", 6.0)],
            &request,
            steps.min(every) > 1,
        );
    }
}

#[test]
fn examples_and_bench_programs_agree_with_the_interpreter_time_tiled() {
    if !opencl_here() {
        return;
    }
    let bench = |name: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("bench/programs")
            .join(format!("{name}.sdsl"));
        parse(name, &std::fs::read_to_string(path).unwrap())
    };
    let cases: Vec<Case> = vec![
        (
            example("jacobi2d"),
            vec![("dim0", 37.0), ("dim1", 23.0)],
            None,
        ),
        (
            example("heat3d"),
            vec![
                ("nx", 19.0),
                ("ny", 13.0),
                ("nz", 11.0),
                ("steps", 5.0),
                ("alpha", 0.1),
            ],
            Some(vec![8, 4, 2]),
        ),
        (
            example("wave2d"),
            vec![("n", 37.0), ("steps", 7.0), ("c2", 0.2)],
            None,
        ),
        (
            example("rician3d"),
            vec![
                ("dim0", 13.0),
                ("dim1", 9.0),
                ("dim2", 7.0),
                ("sigma", 0.05),
                ("lambda", 0.065),
            ],
            Some(vec![4, 4, 2]),
        ),
        (bench("j2d5pt"), vec![("n", 29.0), ("steps", 6.0)], None),
        (bench("j2d9pt"), vec![("n", 29.0), ("steps", 6.0)], None),
        (
            bench("star3d1r"),
            vec![("n", 13.0), ("steps", 4.0)],
            Some(vec![8, 4, 2]),
        ),
    ];
    for (c, (program, values, block)) in cases.iter().enumerate() {
        // Two T per program, 2 to 6 over the set (T = 1 is the untiled path
        // every other test runs).
        for steps in [2 + (c as u32 % 3), 6 - (c as u32 % 2)] {
            let request = with_time(steps, block.clone(), Some(vec![1, 1, 1]));
            let env = RunEnv::new(program, &bindings(program, values)).unwrap();
            let schedule = Schedule::for_run(program, &request, &env).unwrap();
            // Large T on 3-D grids may not fit in shared memory: then untiled, with a note.
            let tiled = schedule.time.is_some();
            if steps > 1 && !tiled {
                assert!(
                    schedule
                        .time_notes
                        .iter()
                        .any(|n| n.contains("runs untiled")),
                    "{}: {:?}",
                    program.name,
                    schedule.time_notes
                );
            }
            agree(program, values, &request, tiled);
        }
    }
}

/// An OverTile-language region (`program NAME is`), as a host file holds it.
fn overtile_region(options: &str, body: &str) -> Program {
    let text = format!("#pragma sdsl begin {options}\n{body}\n#pragma sdsl end\n");
    stencilc::front::parse_regions(stencilc::source::SourceFile::new("ot.c", text))
        .and_then(stencilc::analysis::checked_regions)
        .unwrap_or_else(|d| panic!("{d}"))
        .remove(0)
        .program
}

/// Programs in OverTile's own language time-tiled as their `time:` asks
/// (several updates a step reading each other's new values, several ranges,
/// 1-D to 3-D), and for T = 5, against the interpreter.
#[test]
fn overtile_language_regions_agree_time_tiled() {
    if !opencl_here() {
        return;
    }
    let fdtd = overtile_region(
        "time_steps:T block:16,4 tile:1,2 time:3",
        "program fdtd is\ngrid 2\nfield Ex float inout\nfield Ey float inout\nfield Hz float inout\n\
         Ey = @[1:$][0:$] : Ey[0][0] - 0.5*(Hz[0][0] - Hz[-1][0])\n\
         Ex = @[0:$][1:$] : Ex[0][0] - 0.5*(Hz[0][0] - Hz[0][-1])\n\
         Hz = @[0:$-1][0:$-1] : Hz[0][0] - 0.7*(Ex[0][1] - Ex[0][0] + Ey[1][0] - Ey[0][0])",
    );
    let multi = overtile_region(
        "time_steps:T block:32 time:4",
        "program j1d is\ngrid 1\nfield A float inout\nfield B float inout\n\
         B = @[1:$-1] : 0.333*(A[-1]+A[0]) @[0] : A[0]\n\
         A = @[1:$-1] : 0.2*(B[0]+B[1])",
    );
    let cube = overtile_region(
        "time_steps:T block:8,4,2 time:2",
        "program j3d is\ngrid 3\nparam c double\nfield A double inout\nfield K double in\n\
         A = @[1:$-1][1:$-1][1:$-1] : let s = A[0][0][-1]+A[0][0][1]+A[0][-1][0]+A[0][1][0]+A[-1][0][0]+A[1][0][0] in \
         A[0][0][0] + c*K[0][0][0]*(s - 6*A[0][0][0])",
    );
    let cases: Vec<(&Program, Vec<(&str, f64)>)> = vec![
        (&fdtd, vec![("Dim_0", 37.0), ("Dim_1", 23.0), ("T", 7.0)]),
        (&multi, vec![("Dim_0", 101.0), ("T", 9.0)]),
        (
            &cube,
            vec![
                ("Dim_0", 13.0),
                ("Dim_1", 9.0),
                ("Dim_2", 7.0),
                ("T", 5.0),
                ("c", 0.1),
            ],
        ),
    ];
    for (program, values) in cases {
        let asked = program.hints.time.as_ref().unwrap().text.parse().unwrap();
        for steps in [asked, 5] {
            agree(program, &values, &with_time(steps, None, None), true);
        }
    }
}

/// The interior path (a block whose tile lies inside the grid runs without a
/// test per cell) is taken only where each part covers all or none of the
/// cells its stencil computes: here the parts split the grid at `x = cut`
/// and `y = cut` (a run-time parameter), inside tiles of blocks whose tiles
/// lie in the grid, and along a row at `y = 9` that only some tiles hold,
/// and a read-only field is read from global memory at the cells. Grids of
/// 61x47 and 64x48 points (blocks of 8x4 over 8x8 points: most tiles inside
/// the grid), T = 2 and 3, every boundary mode.
#[test]
fn the_interior_path_needs_every_part_to_cover_all_or_none_of_a_tile() {
    if !opencl_here() {
        return;
    }
    for mode in ["clamp", "mirror", "periodic", "zero", "none"] {
        let text = format!(
            "int w;\nint h;\nint cut;\nint steps;\ngrid g[h][w];\n\
             float griddata a on g at 0,1 boundary {mode};\n\
             float griddata k on g at 0 boundary {mode};\n\
             iterate steps {{\n\
               stencil split {{\n\
                 [1:h-2][1:cut] : [1]a[0][0] = 0.2f*([0]a[0][-1] + [0]a[0][1] + [0]a[-1][0] \
                   + [0]a[1][0] + [0]a[0][0]);\n\
                 [1:h-2][cut+1:w-2] : [1]a[0][0] = 0.5f*[0]a[0][0] + 0.25f*[0]a[0][1]*[0]k[0][0] \
                   + 0.25f*[0]a[-1][-1];\n\
                 [9:9][2:w-3] : [1]a[0][0] = 0.9f*[0]a[0][0];\n\
                 [0:0][0:w-1] : [1]a[0][0] = [0]a[0][0];\n\
                 [h-1:h-1][0:w-1] : [1]a[0][0] = [0]a[0][0];\n\
                 [1:h-2][0:0] : [1]a[0][0] = [0]a[0][0];\n\
                 [1:h-2][w-1:w-1] : [1]a[0][0] = [0]a[0][0];\n\
               }}\n\
             }}\n"
        );
        let program = parse(&format!("split_{mode}"), &text);
        for (w, h, cut) in [(61.0, 47.0, 29.0), (64.0, 48.0, 21.0)] {
            for steps in [2, 3] {
                let values = [("w", w), ("h", h), ("cut", cut), ("steps", 5.0)];
                let request = with_time(steps, Some(vec![8, 4]), Some(vec![1, 2]));
                agree(&program, &values, &request, true);
            }
        }
    }
}

/// The time-tiled source of `program` for `values` under `request`.
fn emitted(
    program: &Program,
    values: &[(&str, f64)],
    request: &ScheduleRequest,
    target: GpuTarget,
) -> String {
    let env = RunEnv::new(program, &bindings(program, values)).unwrap();
    let options = EmitOptions {
        env: Some(&env),
        fma: false,
        ..EmitOptions::default()
    };
    emit_with(program, request, target, options).unwrap()
}

#[test]
fn emitted_time_tiled_jacobi() {
    let program = example("jacobi2d");
    let values = [("dim0", 64.0), ("dim1", 64.0)];
    let request = with_time(2, Some(vec![16, 8]), Some(vec![1, 1]));
    let cuda = emitted(&program, &values, &request, GpuTarget::Cuda);
    assert!(cuda.contains("jacobi_2d_time_tile"), "{cuda}");
    assert!(
        cuda.contains("__shared__ float a_t0_tile[12][20];"),
        "{cuda}"
    );
    insta::assert_snapshot!("time_tiled_jacobi_cuda", cuda);
    let opencl = emitted(&program, &values, &request, GpuTarget::OpenCl);
    assert!(
        opencl.contains("__local float a_t1_tile[12][20];"),
        "{opencl}"
    );
    insta::assert_snapshot!("time_tiled_jacobi_opencl", opencl);
}

#[test]
fn nvrtc_compiles_every_time_tiled_kernel_without_warnings() {
    if !common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        return;
    }
    let mut cases: Vec<Case> = Vec::new();
    for mode in ["clamp", "mirror", "periodic", "zero", "none"] {
        cases.push((
            two_stencils(mode, 1, 4),
            vec![("w", 37.0), ("h", 13.0), ("steps", 7.0)],
            None,
        ));
    }
    cases.push((
        example("jacobi2d"),
        vec![("dim0", 37.0), ("dim1", 23.0)],
        None,
    ));
    cases.push((
        example("wave2d"),
        vec![("n", 37.0), ("steps", 7.0), ("c2", 0.2)],
        None,
    ));
    cases.push((
        example("heat3d"),
        vec![
            ("nx", 19.0),
            ("ny", 13.0),
            ("nz", 11.0),
            ("steps", 8.0),
            ("alpha", 0.1),
        ],
        Some(vec![8, 4, 2]),
    ));
    cases.push((
        example("rician3d"),
        vec![
            ("dim0", 13.0),
            ("dim1", 9.0),
            ("dim2", 7.0),
            ("sigma", 0.05),
            ("lambda", 0.065),
        ],
        Some(vec![4, 4, 2]),
    ));
    for (c, (program, values, block)) in cases.iter().enumerate() {
        // Every program once, at T = 2 or 3 (affordable on a 2-core CI).
        let steps = 2 + (c % 2) as u32;
        {
            let request = with_time(steps, block.clone(), None);
            let source = emitted(program, values, &request, GpuTarget::Cuda);
            if !source.contains("_time_tile(") {
                // Too large for shared memory at this T: untiled (tested above).
                continue;
            }
            let arches: &[&str] = if c == 0 {
                &["sm_80", "sm_90"]
            } else {
                &["sm_90"]
            };
            for arch in arches {
                let compiled = nvrtc::compile_with_log(&source, arch)
                    .unwrap_or_else(|e| panic!("{} T={steps} {arch}: {e}", program.name));
                assert!(
                    compiled.log.is_empty(),
                    "{} T={steps} {arch}: NVRTC warned:\n{}\n{source}",
                    program.name,
                    compiled.log
                );
            }
        }
    }
}
