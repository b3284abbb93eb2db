//! Register streaming and fixed-shape tile loads against the interpreter:
//! runs of 1 to 8 and of 16 consecutive rows on 2-D programs, 2.5-D blocking (block z 1,
//! 2 to 8 planes per thread) on every 3-D program of examples/ and
//! bench/programs/, with and without shared tiles, every boundary mode, grid
//! sizes that are not multiples of block × run (so both the fast and the edge
//! path run), and 1-point grids, on OpenCL (PoCL in CI). The same kernels
//! compile with NVRTC for sm_80 and sm_90 with an empty log.

use crate::gpu_common;

use gpu_common::*;
use stencilc::driver::emit::{emit, GpuTarget};
use stencilc::exec::opencl;
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::Program;
use stencilc::schedule::{Schedule, ScheduleRequest, ShmRequest, MAX_RUN_LENGTH};

/// Every field staged (`shm`) or none.
fn request(program: &Program, block: &[u32], tile: &[u32], shm: bool) -> ScheduleRequest {
    let all = program
        .fields
        .iter()
        .map(|f| f.name.clone())
        .chain(program.tables.iter().map(|t| t.name.clone()))
        .collect();
    ScheduleRequest {
        block: Some(block.to_vec()),
        tile: Some(tile.to_vec()),
        shm: if shm {
            ShmRequest::Names(all)
        } else {
            ShmRequest::None
        },
        ..ScheduleRequest::default()
    }
}

/// Runs `program` under each request on OpenCL and compares with the interpreter.
fn agree(program: &Program, params: &[(&str, f64)], requests: &[(String, ScheduleRequest)]) {
    let env = RunEnv::new(program, &bindings(program, params)).expect("valid parameters");
    let mut expected = initial_state(program, &env);
    let reference = interp::run(program, &env, &mut expected).expect("interpreter runs");
    for (label, request) in requests {
        let what = format!("{} [{label}]", program.name);
        let schedule = Schedule::new(program, request).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut actual = initial_state(program, &env);
        let summary = opencl::run_with_schedule(program, &env, &mut actual, &schedule)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(summary.iterations, reference.iterations, "{what}");
        assert_close(program, &expected, &actual, &what);
    }
}

/// Run lengths 1..=8 along y of a 2-D program, with and without tiles.
fn rows(program: &Program, block: &[u32]) -> Vec<(String, ScheduleRequest)> {
    some_rows(program, block, &[1, 2, 3, 4, 5, 6, 7, 8])
}

/// The given run lengths along y, with and without tiles (PoCL compiles
/// every kernel: the full range runs on one program of each kind).
fn some_rows(program: &Program, block: &[u32], runs: &[u32]) -> Vec<(String, ScheduleRequest)> {
    let mut out = Vec::new();
    for &run in runs {
        for shm in [false, true] {
            out.push((
                format!("block {block:?} tile 1,{run} shm {shm}"),
                request(program, block, &[1, run], shm),
            ));
        }
    }
    out
}

/// 2.5-D: block z 1 and 2..=8 planes per thread, with and without tiles.
fn planes(program: &Program) -> Vec<(String, ScheduleRequest)> {
    let mut out = Vec::new();
    for run in 2..=8 {
        for shm in [false, true] {
            out.push((
                format!("block 8,4,1 tile 1,1,{run} shm {shm}"),
                request(program, &[8, 4, 1], &[1, 1, run], shm),
            ));
        }
    }
    out
}

#[test]
fn opencl_streaming_rows_on_2d_examples() {
    if !opencl_here() {
        return;
    }
    for name in [
        "jacobi2d",
        "wave2d",
        "gaussian_blur",
        "gaussian_blur_separable",
    ] {
        let (_, params) = EXAMPLES.iter().find(|(n, _)| *n == name).expect("listed");
        let program = example(name);
        // 23 rows: no run length of 2..8 times 4 rows divides them.
        let requests = if name == "jacobi2d" {
            rows(&program, &[8, 4])
        } else {
            some_rows(&program, &[8, 4], &[3, 8])
        };
        agree(&program, params, &requests);
    }
}

#[test]
fn opencl_streaming_rows_on_2d_bench_programs() {
    if !opencl_here() {
        return;
    }
    for name in ["j2d5pt", "j2d9pt", "j2d9pt_table", "box2d2r", "gradient2d"] {
        let program = bench_program(name);
        let requests = if name == "j2d5pt" {
            rows(&program, &[8, 2])
        } else {
            some_rows(&program, &[8, 2], &[2, 5])
        };
        agree(&program, &[("n", 29.0), ("steps", 2.0)], &requests);
    }
    let blur = bench_program("gaussian_blur");
    agree(
        &blur,
        &[("width", 21.0), ("height", 19.0), ("steps", 1.0)],
        &some_rows(&blur, &[8, 2], &[4, 7]),
    );
}

/// Runs of 16 rows, the longest the fast path unrolls and one the heuristic
/// picks for the 7×7 blur: the blur, j2d5pt and every boundary mode, on grids
/// where some runs are whole and inside (fast path) and others cross the
/// subset's end or the grid's edge (edge path).
#[test]
fn opencl_streaming_runs_of_16_rows() {
    if !opencl_here() {
        return;
    }
    let blur = bench_program("gaussian_blur");
    // Blocks of 8x2 threads cover 32 rows: rows 16..31 of the first block
    // are an interior run, the second block's runs cross row 44.
    agree(
        &blur,
        &[("width", 21.0), ("height", 45.0), ("steps", 1.0)],
        &some_rows(&blur, &[8, 2], &[16]),
    );
    let j2d5pt = bench_program("j2d5pt");
    agree(
        &j2d5pt,
        &[("n", 41.0), ("steps", 2.0)],
        &some_rows(&j2d5pt, &[8, 2], &[16]),
    );
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        let program = boundary_program(mode, "float");
        agree(
            &program,
            &[("w", 13.0), ("h", 45.0)],
            &some_rows(&program, &[4, 2], &[16]),
        );
    }
}

#[test]
fn opencl_streaming_planes_on_3d_examples() {
    if !opencl_here() {
        return;
    }
    for name in ["heat3d", "rician3d"] {
        let (_, params) = EXAMPLES.iter().find(|(n, _)| *n == name).expect("listed");
        let program = example(name);
        agree(&program, params, &planes(&program));
    }
}

#[test]
fn opencl_streaming_planes_on_3d_bench_programs() {
    if !opencl_here() {
        return;
    }
    for name in ["star3d1r", "j3d27pt"] {
        let program = bench_program(name);
        agree(&program, &[("n", 13.0), ("steps", 2.0)], &planes(&program));
    }
    let rician = bench_program("rician3d");
    agree(
        &rician,
        &[
            ("dim0", 11.0),
            ("dim1", 9.0),
            ("dim2", 13.0),
            ("steps", 2.0),
            ("sigma", 0.05),
            ("lambda", 0.065),
        ],
        &planes(&rician),
    );
}

#[test]
fn opencl_streaming_every_boundary_mode() {
    if !opencl_here() {
        return;
    }
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        for ty in ["float", "double"] {
            let program = boundary_program(mode, ty);
            // Runs along y and strided points along x together.
            let mut requests = rows(&program, &[4, 2]);
            requests.push(("tile 2,3".into(), request(&program, &[4, 2], &[2, 3], true)));
            requests.push((
                "tile 2,3 global".into(),
                request(&program, &[4, 2], &[2, 3], false),
            ));
            agree(&program, &[("w", 13.0), ("h", 7.0)], &requests);
        }
    }
}

/// A run whose reads all fall inside the grid takes the interior fast path,
/// which reads without the boundary helper; runs near the edge take the edge
/// path, which applies it. Both agree with the interpreter on a grid where most
/// runs are interior and some are not.
#[test]
fn the_interior_fast_path_reads_without_boundary_helpers_and_agrees_on_opencl() {
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        let program = boundary_program(mode, "float");
        let tiled = request(&program, &[8, 2], &[1, 4], false);
        let source = emit(&program, &tiled, GpuTarget::OpenCl).expect("emits");
        let fast = source
            .split("// fast path")
            .nth(1)
            .and_then(|rest| rest.split("// edge path").next())
            .unwrap_or_else(|| panic!("{mode}: no fast path in\n{source}"));
        assert!(
            fast.contains("read only inside the grid") && !fast.contains("sdsl_"),
            "{mode}: the interior fast path still maps its reads:\n{fast}"
        );
        let edge = source.split("// edge path").nth(1).expect("an edge path");
        assert!(
            edge.contains("sdsl_"),
            "{mode}: the edge path lost its boundary mode"
        );
        if opencl_here() {
            agree(
                &program,
                &[("w", 45.0), ("h", 38.0)],
                &[("tile 1,4 global".into(), tiled)],
            );
        }
    }
}

#[test]
fn opencl_streaming_on_one_point_grids() {
    if !opencl_here() {
        return;
    }
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        let program = boundary_program(mode, "float");
        agree(
            &program,
            &[("w", 1.0), ("h", 1.0)],
            &rows(&program, &[4, 2]),
        );
    }
    let heat = example("heat3d");
    let one = [
        ("nx", 3.0),
        ("ny", 3.0),
        ("nz", 3.0),
        ("steps", 2.0),
        ("alpha", 0.1),
    ];
    // heat3d's subset is the interior: one point of a 3x3x3 grid.
    agree(&heat, &one, &planes(&heat));
}

#[test]
fn a_run_longer_than_the_limit_is_refused_naming_it() {
    let program = example("jacobi2d");
    let request = request(&program, &[32, 4], &[1, MAX_RUN_LENGTH + 1], false);
    let err = Schedule::new(&program, &request).unwrap_err().to_string();
    assert!(
        err.contains("run of 17 points along y") && err.contains("limit of 16"),
        "{err}"
    );
    assert!(Schedule::new(&program, &request_with_tile(&program, &[1, MAX_RUN_LENGTH])).is_ok());
}

fn request_with_tile(program: &Program, tile: &[u32]) -> ScheduleRequest {
    request(program, &[32, 4], tile, false)
}

/// Every streaming form of every program above compiles with NVRTC for sm_80
/// and sm_90 without a message.
#[test]
fn nvrtc_compiles_every_streaming_form_without_warnings() {
    if !nvrtc_here() {
        return;
    }
    let mut programs: Vec<Program> = ["jacobi2d", "wave2d", "gaussian_blur", "heat3d", "rician3d"]
        .iter()
        .map(|n| example(n))
        .collect();
    programs.extend(
        [
            "j2d5pt", "j2d9pt", "box2d2r", "star3d1r", "j3d27pt", "rician3d",
        ]
        .iter()
        .map(|n| bench_program(n)),
    );
    programs.extend(["clamp", "mirror", "periodic", "zero"].map(|m| boundary_program(m, "float")));
    for program in &programs {
        let forms: Vec<(Vec<u32>, Vec<u32>)> = if rank(program) == 3 {
            vec![
                (vec![32, 4, 1], vec![1, 1, 4]),
                (vec![32, 8, 1], vec![1, 1, 3]),
            ]
        } else {
            vec![
                (vec![64, 4], vec![1, 4]),
                (vec![32, 8], vec![2, 3]),
                (vec![32, 8], vec![1, 16]),
            ]
        };
        for (block, tile) in forms {
            for shm in [false, true] {
                let request = request(program, &block, &tile, shm);
                let source = emit(program, &request, GpuTarget::Cuda)
                    .unwrap_or_else(|e| panic!("{}: {e}", program.name));
                assert_nvrtc_compiles_cleanly(&source, &format!("{} {request:?}", program.name));
            }
        }
    }
}
