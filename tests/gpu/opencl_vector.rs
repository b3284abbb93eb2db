//! Vector accesses (`--vector 2|4`, `kir::vector`) against the interpreter and
//! against the scalar kernels on the same device: every example and bench
//! program at the widest vector its fields allow and at 2, with runs of 1
//! and 3 rows (2-D) or planes (3-D, 2.5-D blocking), on grids whose x size
//! is a multiple of the width (vector fast path) and is not (every thread
//! takes the edge path); every boundary mode; a fused check; 1-point grids.
//! The vector kernels compute every point with the same operations as the
//! scalar ones, so the two agree bit for bit. The same kernels compile with
//! NVRTC for sm_80 and sm_90 with an empty log.

use crate::gpu_common;

use gpu_common::*;
use stencilc::driver::emit::{emit, GpuTarget};
use stencilc::exec::opencl;
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::Program;
use stencilc::schedule::{Schedule, ScheduleRequest, ShmRequest, MAX_VECTOR_BYTES};

/// The widest vector every field of `program` allows (16 bytes).
fn widest(program: &Program) -> u32 {
    let largest = program
        .fields
        .iter()
        .map(|f| f.ty.size_bytes())
        .max()
        .unwrap_or(4);
    (MAX_VECTOR_BYTES / largest).min(4) as u32
}

fn request(program: &Program, vector: u32, run: u32) -> ScheduleRequest {
    let (block, tile) = if rank(program) == 3 {
        (vec![8, 4, 1], vec![1, 1, run])
    } else {
        (vec![8, 2], vec![1, run])
    };
    ScheduleRequest {
        block: Some(block),
        tile: Some(tile),
        vector: Some(vector),
        shm: ShmRequest::None,
        ..ScheduleRequest::default()
    }
}

/// Runs `program` with vectors of 2 and of its widest, runs of 1 and 3, on
/// OpenCL: each agrees with the interpreter and, bit for bit, with the
/// same schedule without vectors.
fn agree(program: &Program, params: &[(&str, f64)]) {
    let env = RunEnv::new(program, &bindings(program, params)).expect("valid parameters");
    let mut expected = initial_state(program, &env);
    let reference = interp::run(program, &env, &mut expected).expect("interpreter runs");
    let mut widths = vec![2, widest(program)];
    widths.dedup();
    for run in [1, 3] {
        let scalar = {
            let schedule = Schedule::new(program, &request(program, 1, run)).expect("schedules");
            let mut state = initial_state(program, &env);
            opencl::run_with_schedule(program, &env, &mut state, &schedule)
                .unwrap_or_else(|e| panic!("{} scalar run {run}: {e}", program.name));
            state
        };
        for &vector in &widths {
            let what = format!("{} {params:?} vector {vector} run {run}", program.name);
            let schedule = Schedule::new(program, &request(program, vector, run))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(schedule.stencils[0].vector, vector, "{what}");
            let mut actual = initial_state(program, &env);
            let summary = opencl::run_with_schedule(program, &env, &mut actual, &schedule)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(summary.iterations, reference.iterations, "{what}");
            assert_close(program, &expected, &actual, &what);
            for (f, field) in program.fields.iter().enumerate() {
                for level in 0..field.levels() {
                    let bits = |s: &stencilc::exec::FieldState| -> Vec<u64> {
                        s.fields[f][level]
                            .to_f64()
                            .iter()
                            .map(|v| v.to_bits())
                            .collect()
                    };
                    assert!(
                        bits(&scalar) == bits(&actual),
                        "{what}: field {} level {level} differs from the scalar kernel's",
                        field.name
                    );
                }
            }
        }
    }
}

/// `params` with every grid size set to `size`.
fn sized(params: &[(&'static str, f64)], size: f64) -> Vec<(&'static str, f64)> {
    const SIZES: [&str; 9] = [
        "width", "height", "nx", "ny", "nz", "dim0", "dim1", "dim2", "n",
    ];
    params
        .iter()
        .map(|&(name, v)| (name, if SIZES.contains(&name) { size } else { v }))
        .collect()
}

#[test]
fn opencl_vectors_on_every_example() {
    if !opencl_here() {
        return;
    }
    for (name, params) in EXAMPLES {
        let program = example(name);
        // A multiple of 4 wide (the vector fast path), then not (edge paths).
        agree(&program, &sized(params, 20.0));
        agree(&program, params);
    }
}

#[test]
fn opencl_vectors_on_every_bench_program() {
    if !opencl_here() {
        return;
    }
    for name in [
        "j2d5pt",
        "j2d5pt_check",
        "j2d9pt",
        "j2d9pt_table",
        "box2d2r",
        "gradient2d",
        "star3d1r",
        "j3d27pt",
    ] {
        let program = bench_program(name);
        for n in [36.0, 29.0] {
            agree(&program, &[("n", n), ("steps", 3.0)]);
        }
    }
    let blur = bench_program("gaussian_blur");
    for (width, height) in [(40.0, 19.0), (21.0, 19.0)] {
        agree(
            &blur,
            &[("width", width), ("height", height), ("steps", 1.0)],
        );
    }
    let rician = bench_program("rician3d");
    for dim in [12.0, 13.0] {
        agree(
            &rician,
            &[
                ("dim0", 9.0),
                ("dim1", 7.0),
                ("dim2", dim),
                ("steps", 2.0),
                ("sigma", 0.05),
                ("lambda", 0.065),
            ],
        );
    }
}

#[test]
fn opencl_vectors_in_every_boundary_mode_and_on_one_point_grids() {
    if !opencl_here() {
        return;
    }
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        for ty in ["float", "double"] {
            let program = boundary_program(mode, ty);
            // 40 wide: the first and last threads of a row read past the
            // grid's edge (edge path), the others do not (fast path).
            for (w, h) in [(40.0, 9.0), (13.0, 7.0), (1.0, 1.0)] {
                agree(&program, &[("w", w), ("h", h)]);
            }
        }
    }
}

/// The fast path loads each row's vectors once, stores each row as one
/// vector, and requires the grid's x size to be a multiple of the width.
#[test]
fn a_vector_run_loads_and_stores_rows_as_vectors() {
    let program = bench_program("j2d5pt");
    let source = emit(&program, &request(&program, 4, 2), GpuTarget::Cuda).expect("emits");
    let fast = source
        .split("// fast path")
        .nth(1)
        .and_then(|rest| rest.split("// edge path").next())
        .expect("a fast path");
    // Rows y-1 .. y+2 as float4; x-1 and x+4 as scalars.
    assert_eq!(fast.matches("float4 a_t0_v").count(), 4, "{fast}");
    assert_eq!(fast.matches("make_float4(").count(), 2, "{fast}");
    assert!(fast.contains("a_t0[iy0 * size_x + (ix0 - 1)]"), "{fast}");
    assert!(source.contains("size_x % 4 == 0"), "{source}");
    assert!(source.contains("int qx0 = tx * 4;"), "{source}");
    assert!(source.contains("lo_x - lo_x % 32"), "{source}");
    let edge = source.split("// edge path").nth(1).expect("an edge path");
    assert!(edge.contains("ix >= lo_x"), "{edge}");
    insta::assert_snapshot!("j2d5pt_vector4_run2_cuda", source);
    let opencl = emit(&program, &request(&program, 4, 2), GpuTarget::OpenCl).expect("emits");
    assert!(
        opencl.contains("*(__global const float4*)(a_t0 + ")
            && opencl.contains("*(__global float4*)(a_t1 + "),
        "{opencl}"
    );
}

#[test]
fn vector_requests_the_kernels_cannot_take_are_refused_saying_why() {
    let j2d5pt = bench_program("j2d5pt");
    let refuse = |program: &Program, request: ScheduleRequest| {
        Schedule::new(program, &request).unwrap_err().to_string()
    };
    let err = refuse(&j2d5pt, request(&j2d5pt, 3, 1));
    assert!(
        err.contains("--vector 3") && err.contains("1, 2 or 4"),
        "{err}"
    );
    let mut tiled = request(&j2d5pt, 4, 1);
    tiled.tile = Some(vec![2, 1]);
    let err = refuse(&j2d5pt, tiled);
    assert!(err.contains("give --tile 1,"), "{err}");
    let mut staged = request(&j2d5pt, 4, 1);
    staged.shm = ShmRequest::Names(vec!["a".into()]);
    let err = refuse(&j2d5pt, staged);
    assert!(err.contains("--shm stages `a`"), "{err}");
    let rician = bench_program("rician3d");
    let err = refuse(&rician, request(&rician, 4, 1));
    assert!(
        err.contains("32 bytes") && err.contains("give --vector 2"),
        "{err}"
    );
}

/// Every vector form compiles with NVRTC for sm_80 and sm_90 without a message.
#[test]
fn nvrtc_compiles_every_vector_form_without_warnings() {
    if !nvrtc_here() {
        return;
    }
    let mut programs: Vec<Program> = EXAMPLES.iter().map(|(n, _)| example(n)).collect();
    programs.extend(
        [
            "j2d5pt",
            "j2d5pt_check",
            "j2d9pt",
            "box2d2r",
            "star3d1r",
            "j3d27pt",
            "rician3d",
            "gaussian_blur",
        ]
        .iter()
        .map(|n| bench_program(n)),
    );
    programs.extend(["clamp", "zero"].map(|m| boundary_program(m, "float")));
    for program in &programs {
        let mut widths = vec![2, widest(program)];
        widths.dedup();
        for vector in widths {
            for run in [1, 4] {
                let request = request(program, vector, run);
                let source = emit(program, &request, GpuTarget::Cuda)
                    .unwrap_or_else(|e| panic!("{}: {e}", program.name));
                let what = format!("{} vector {vector} run {run}", program.name);
                assert_nvrtc_compiles_cleanly(&source, &what);
            }
        }
    }
}

/// A fused check reads each new value back at its point: it takes the value
/// the row's vector store will write, so the stores stay vectors.
#[test]
fn a_fused_check_reads_the_row_it_stores_as_a_vector() {
    let program = bench_program("j2d5pt_check");
    let source = emit(&program, &request(&program, 4, 2), GpuTarget::Cuda).expect("emits");
    let fused = source
        .split("j2d5pt_with_max_change(")
        .nth(1)
        .expect("a kernel with the check fused in");
    let fast = fused
        .split("// fast path")
        .nth(1)
        .and_then(|rest| rest.split("// edge path").next())
        .expect("a fast path");
    assert_eq!(fast.matches("make_float4(").count(), 2, "{fast}");
    assert!(
        !fast.contains("a_t1["),
        "a read of the new level is left:\n{fast}"
    );
    assert!(fast.contains("fabsf(a_t1_w0x - a_t0_v1.x)"), "{fast}");
}

/// In 1-D nothing requires the grid's size to be a multiple of the width, so
/// only the run's own points are loaded as a vector; reads beyond them stay
/// scalars, which never pass the buffer's end.
#[test]
fn a_1d_run_loads_only_its_own_points_as_a_vector() {
    let program = parse(
        "wide_1d",
        "int n;\ngrid g[n];\nfloat griddata a on g at 0,1;\niterate 2 {\n  stencil s {\n    \
         [4:n-6] : [1]a[0] = [0]a[-4] + [0]a[-1] + [0]a[0] + [0]a[1] + [0]a[2] + [0]a[5];\n  \
         }\n}\n",
    );
    let request = ScheduleRequest {
        block: Some(vec![8]),
        vector: Some(4),
        shm: ShmRequest::None,
        ..ScheduleRequest::default()
    };
    let source = emit(&program, &request, GpuTarget::Cuda).expect("emits");
    assert_eq!(source.matches("float4 a_t0_v").count(), 1, "{source}");
    assert!(
        source.contains("a_t0[ix0 + 5]") && source.contains("a_t0[ix0 - 4]"),
        "{source}"
    );
    if opencl_here() {
        let env = RunEnv::new(&program, &bindings(&program, &[("n", 30.0)])).expect("binds");
        let mut expected = initial_state(&program, &env);
        interp::run(&program, &env, &mut expected).expect("interpreter runs");
        let schedule = Schedule::new(&program, &request).expect("schedules");
        let mut actual = initial_state(&program, &env);
        opencl::run_with_schedule(&program, &env, &mut actual, &schedule).expect("runs");
        assert_close(&program, &expected, &actual, "wide_1d vector 4");
    }
}

/// Runs `program` under `request` on OpenCL against the interpreter.
fn agree_with(program: &Program, params: &[(&str, f64)], request: &ScheduleRequest, what: &str) {
    let env = RunEnv::new(program, &bindings(program, params)).expect("binds");
    let mut expected = initial_state(program, &env);
    interp::run(program, &env, &mut expected).expect("interpreter runs");
    let schedule = Schedule::new(program, request).expect("schedules");
    let mut actual = initial_state(program, &env);
    opencl::run_with_schedule(program, &env, &mut actual, &schedule)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_close(program, &expected, &actual, what);
}

/// A field on a smaller grid than the one the stencil writes: its reads at a
/// point of the run are not points of the run (they take the boundary mode),
/// and in 1-D it is never loaded as a vector (nothing keeps the vector inside
/// its buffer). The same along y for a run of rows.
#[test]
fn a_field_on_a_smaller_grid_keeps_its_boundary_mode_and_its_bounds() {
    let one_d = parse(
        "smaller_1d",
        "int n;\nint m;\ngrid ga[n];\ngrid gb[m];\nfloat griddata a on ga at 0,1;\n\
         float griddata b on gb at 0 boundary clamp;\niterate 1 {\n  stencil s {\n    \
         [0:n-1] : [1]a[0] = [0]b[-1] + [0]b[0] + [0]b[1] + [0]a[0];\n  }\n}\n",
    );
    let request = ScheduleRequest {
        block: Some(vec![8]),
        vector: Some(4),
        shm: ShmRequest::None,
        ..ScheduleRequest::default()
    };
    let source = emit(&one_d, &request, GpuTarget::Cuda).expect("emits");
    assert!(!source.contains("float4 b_v"), "{source}");
    assert!(
        source.contains("float4 a_t0_v") || source.contains("a_t0["),
        "{source}"
    );
    let two_d = parse(
        "smaller_2d",
        "int n;\nint m;\ngrid ga[n][n];\ngrid gb[m][m];\nfloat griddata a on ga at 0,1;\n\
         float griddata b on gb at 0 boundary clamp;\niterate 1 {\n  stencil s {\n    \
         [0:n-1][0:n-1] : [1]a[0][0] = [0]b[1][0] + [0]b[0][1] + [0]b[-1][-1];\n  }\n}\n",
    );
    let rows = ScheduleRequest {
        block: Some(vec![8, 2]),
        tile: Some(vec![1, 4]),
        shm: ShmRequest::None,
        ..ScheduleRequest::default()
    };
    if opencl_here() {
        for m in [3.0, 5.0, 16.0] {
            agree_with(
                &one_d,
                &[("n", 16.0), ("m", m)],
                &request,
                "smaller_1d vector 4",
            );
            agree_with(
                &two_d,
                &[("n", 16.0), ("m", m)],
                &rows,
                "smaller_2d tile 1,4",
            );
            let vectors = ScheduleRequest {
                vector: Some(4),
                ..rows.clone()
            };
            agree_with(
                &two_d,
                &[("n", 16.0), ("m", m)],
                &vectors,
                "smaller_2d vector 4",
            );
        }
    }
}

/// A field on a smaller grid read at offsets that never pass the point (`-1`
/// and `0`): the interior fast path's condition must still bound the run's
/// last point by that grid's size, not only by the offsets past the point.
#[test]
fn the_interior_path_bounds_reads_of_a_smaller_grid_at_offset_zero() {
    let one_d = parse(
        "behind_1d",
        "int n;\nint m;\ngrid ga[n];\ngrid gb[m];\nfloat griddata a on ga at 0,1;\n\
         float griddata b on gb at 0 boundary clamp;\niterate 1 {\n  stencil s {\n    \
         [0:n-1] : [1]a[0] = [0]b[-1] + [0]b[0] + [0]a[0];\n  }\n}\n",
    );
    let two_d = parse(
        "behind_2d",
        "int n;\nint m;\ngrid ga[n][n];\ngrid gb[m][m];\nfloat griddata a on ga at 0,1;\n\
         float griddata b on gb at 0 boundary mirror;\niterate 1 {\n  stencil s {\n    \
         [0:n-1][0:n-1] : [1]a[0][0] = [0]b[-1][0] + [0]b[0][-2] + [0]b[0][0];\n  }\n}\n",
    );
    if !opencl_here() {
        return;
    }
    let run = |block: Vec<u32>, tile: Vec<u32>| ScheduleRequest {
        block: Some(block),
        tile: Some(tile),
        shm: ShmRequest::None,
        ..ScheduleRequest::default()
    };
    for m in [3.0, 5.0, 16.0] {
        agree_with(
            &one_d,
            &[("n", 40.0), ("m", m)],
            &run(vec![8], vec![4]),
            "behind_1d tile 4",
        );
        agree_with(
            &two_d,
            &[("n", 16.0), ("m", m)],
            &run(vec![8, 2], vec![1, 4]),
            "behind_2d tile 1,4",
        );
    }
}

/// A reduction reading a field on a smaller grid at offset zero maps the
/// read by the field's boundary mode, as the interpreter does (its kernel
/// does not know the point's grid: two grids of one rank).
#[test]
fn a_reduction_reads_a_field_on_a_smaller_grid_through_its_boundary_mode() {
    let program = parse(
        "reduce_smaller",
        "int n;\nint m;\ngrid ga[n];\ngrid gb[m];\nfloat griddata a on ga at 0,1;\n\
         float griddata b on gb at 0 boundary clamp;\niterate 1 {\n  stencil s {\n    \
         [0:n-1] : [1]a[0] = [0]a[0] + 1.0f;\n  }\n  reduction total + {\n    \
         [0:n-1] : [0]b[0];\n  }\n}\n",
    );
    if !opencl_here() {
        return;
    }
    let env =
        RunEnv::new(&program, &bindings(&program, &[("n", 40.0), ("m", 3.0)])).expect("binds");
    let mut expected = initial_state(&program, &env);
    let reference = interp::run(&program, &env, &mut expected).expect("interpreter runs");
    let schedule = Schedule::new(&program, &ScheduleRequest::default()).expect("schedules");
    let mut actual = initial_state(&program, &env);
    let summary = opencl::run_with_schedule(&program, &env, &mut actual, &schedule).expect("runs");
    // The same values, summed in another order.
    let value = |r: &[(String, Option<stencilc::ir::Value>)]| match r {
        [(_, Some(v))] => v.as_f64(),
        other => panic!("one reduction value, not {other:?}"),
    };
    let (got, want) = (value(&summary.reductions), value(&reference.reductions));
    assert!(
        (got - want).abs() <= 1e-5 * want.abs(),
        "{got} against {want}"
    );
}

/// `long` fields take `--vector 2`: CUDA spells the vector `longlong2`.
#[test]
fn long_fields_take_vectors_of_two() {
    let program = parse(
        "long_2d",
        "int n;\ngrid g[n][n];\nlong griddata a on g at 0,1;\niterate 2 {\n  stencil s {\n    \
         [1:n-2][1:n-2] : [1]a[0][0] = [0]a[0][-1] + [0]a[0][1] + [0]a[-1][0] + [0]a[0][0];\n  \
         }\n}\n",
    );
    let request = ScheduleRequest {
        block: Some(vec![8, 2]),
        tile: Some(vec![1, 2]),
        vector: Some(2),
        shm: ShmRequest::None,
        ..ScheduleRequest::default()
    };
    let cuda = emit(&program, &request, GpuTarget::Cuda).expect("emits");
    assert!(
        cuda.contains("longlong2 a_t0_v") && cuda.contains("make_longlong2("),
        "{cuda}"
    );
    let opencl_source = emit(&program, &request, GpuTarget::OpenCl).expect("emits");
    assert!(opencl_source.contains("long2 a_t0_v"), "{opencl_source}");
    if nvrtc_here() {
        assert_nvrtc_compiles_cleanly(&cuda, "long_2d vector 2");
    }
    if opencl_here() {
        for n in [12.0, 13.0] {
            agree_with(&program, &[("n", n)], &request, "long_2d vector 2");
        }
    }
}
