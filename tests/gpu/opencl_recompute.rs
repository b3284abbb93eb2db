//! Producer→consumer fusion with halo recompute (the consumer reads what the
//! producer writes at neighbouring points): when it is taken and why it is
//! refused, the fused kernel as emitted, NVRTC on it, and fused runs on OpenCL
//! (PoCL in CI) against the interpreter for every boundary mode, sizes that are
//! not multiples of the block, 1-point grids, with and without other tiles.

use crate::common;
use crate::gpu_common;

use gpu_common::*;
use stencilc::driver::emit::{emit, GpuTarget};
use stencilc::exec::cuda::nvrtc;
use stencilc::exec::opencl;
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::Program;
use stencilc::schedule::{Schedule, ScheduleRequest, ShmRequest};

fn fuse() -> ScheduleRequest {
    ScheduleRequest {
        fuse: true,
        ..ScheduleRequest::default()
    }
}

/// A row pass into `tmp` then a pass reading `tmp` at offsets on both axes
/// (and `img` again, so that `img` may have a tile of its own), over the grid
/// shrunk by `inset` on every side; both fields have boundary `mode`.
fn pair_program(mode: &str, inset: u32) -> Program {
    let hi = |n: &str| {
        if inset == 0 {
            format!("{n}-1")
        } else {
            format!("{n}-1-{inset}")
        }
    };
    let subset = format!("[{inset}:{}][{inset}:{}]", hi("h"), hi("w"));
    let text = format!(
        "int w;\nint h;\ngrid g[h][w];\n\
         float griddata img on g at 0 boundary {mode};\n\
         float griddata tmp on g at 0 boundary {mode};\n\
         float griddata out on g at 0;\n\
         iterate 2 {{\n\
           stencil rows {{ {subset} : [0]tmp[0][0] = 0.25f*[0]img[0][-1] + 0.5f*[0]img[0][0] \
             + 0.25f*[0]img[0][1] + 0.125f*[0]img[-1][1]; }}\n\
           stencil columns {{ {subset} : [0]out[0][0] = 0.2f*[0]tmp[-2][0] + 0.3f*[0]tmp[1][1] \
             + 0.5f*[0]tmp[0][-1] + 0.25f*[0]tmp[0][0] + 0.5f*[0]out[0][0] \
             + 0.1f*[0]img[1][0] - 0.1f*[0]img[-1][-1]; }}\n\
         }}\n"
    );
    parse(&format!("pair_{mode}_{inset}"), &text)
}

fn schedule(program: &Program, request: &ScheduleRequest) -> Schedule {
    Schedule::new(program, request).expect("valid schedule")
}

#[test]
fn the_separable_blur_fuses_by_recomputing_the_row_pass() {
    let program = example("gaussian_blur_separable");
    let s = schedule(&program, &fuse());
    assert!(s.stencils[0].fuse_with_next, "{:?}", s.notes);
    let recompute = s.stencils[0].recompute.as_ref().expect("halo recompute");
    assert_eq!(recompute.halo, [(-3, 3), (0, 0)]);
    // `tmp` is a field the user may save: its values still go to global memory.
    assert!(recompute.write_back);
    assert_eq!(
        s.notes,
        [
            "fusing `columns` into `rows` by recomputing `[0]tmp` over a halo of [-3:3][0:0] in \
          each block"
        ]
    );
    // Without fusion nothing changes.
    let apart = schedule(&program, &ScheduleRequest::default());
    assert!(apart.stencils.iter().all(|s| s.recompute.is_none()));
}

#[test]
fn a_level_that_is_no_result_and_read_nowhere_else_is_not_written_back() {
    let program = example("gaussian_blur_separable");
    let request = ScheduleRequest {
        results: Some(vec!["out".into()]),
        ..fuse()
    };
    let s = schedule(&program, &request);
    let recompute = s.stencils[0].recompute.as_ref().expect("halo recompute");
    assert!(!recompute.write_back);
    assert!(
        s.notes[0].ends_with(
            "(no global write: nothing reads it after the kernel and it is not a result)"
        ),
        "{}",
        s.notes[0]
    );
    let cuda = emit(&program, &request, GpuTarget::Cuda).unwrap();
    assert!(!cuda.contains("tmp[cy * size_x + cx] = "), "{cuda}");
    // Named as a result: written.
    let request = ScheduleRequest {
        results: Some(vec!["tmp".into()]),
        ..fuse()
    };
    assert!(
        schedule(&program, &request).stencils[0]
            .recompute
            .as_ref()
            .unwrap()
            .write_back
    );
}

#[test]
fn rician_gs_and_us_fuse_by_recomputing_g() {
    let program = example("rician3d");
    let s = schedule(&program, &fuse());
    let recompute = s.stencils[0].recompute.as_ref().expect("halo recompute");
    assert_eq!(recompute.halo, [(-1, 1), (-1, 1), (-1, 1)]);
    assert!(recompute.write_back);
    // G is no result and only `us` reads it: with the results named, no write.
    let request = ScheduleRequest {
        results: Some(vec!["U".into()]),
        ..fuse()
    };
    assert!(
        !schedule(&program, &request).stencils[0]
            .recompute
            .as_ref()
            .unwrap()
            .write_back
    );
}

#[test]
fn a_consumer_writing_what_the_producer_reads_is_refused_with_the_reason() {
    let program = parse(
        "race",
        "int n;\ngrid g[n];\nfloat griddata a on g at 0;\nfloat griddata b on g at 0;\n\
         iterate 1 {\n  stencil p { [1:n-2] : [0]b[0] = [0]a[-1] + [0]a[1]; }\n\
         stencil c { [1:n-2] : [0]a[0] = [0]b[-1] + [0]b[1]; }\n}\n",
    );
    let s = schedule(&program, &fuse());
    assert!(!s.stencils[0].fuse_with_next);
    assert!(s.stencils[0].recompute.is_none());
    assert_eq!(
        s.notes,
        [
            "not fusing `c` into `p`: it reads `[0]b`, which `p` writes, at a non-zero offset: \
          it needs values that neighbouring threads compute; nor by recomputing the halo: \
          `c` writes `[0]a`, which `p` reads or writes: another block may still be \
          recomputing from it"
        ]
    );
}

#[test]
fn a_producer_reading_its_own_level_is_refused_with_the_reason() {
    let program = parse(
        "inplace",
        "int n;\ngrid g[n];\nfloat griddata a on g at 0;\nfloat griddata b on g at 0;\n\
         float griddata c on g at 0;\n\
         iterate 1 {\n  stencil p { [1:n-2] : [0]b[0] = [0]a[0] + [0]b[0]; }\n\
         stencil q { [1:n-2] : [0]c[0] = [0]b[-1] + [0]b[1]; }\n}\n",
    );
    let s = schedule(&program, &fuse());
    assert!(s.stencils[0].recompute.is_none());
    assert!(
        s.notes[0].ends_with(
            "nor by recomputing the halo: `p` reads `[0]b`, which it writes: a block \
             recomputing it would read values another block has already written"
        ),
        "{}",
        s.notes[0]
    );
}

#[test]
fn emitted_fused_separable_blur() {
    let program = example("gaussian_blur_separable");
    let cuda = emit(&program, &fuse(), GpuTarget::Cuda).unwrap();
    assert_eq!(cuda.matches("__global__").count(), 1, "{cuda}");
    assert!(
        cuda.contains("__shared__ float tmp_tile[14][32];"),
        "{cuda}"
    );
    assert!(
        cuda.contains("// recompute phase: rows over the block's points"),
        "{cuda}"
    );
    insta::assert_snapshot!("fused_separable_blur_cuda", cuda);
}

#[test]
fn nvrtc_compiles_the_fused_kernels_for_sm_80_and_sm_90_without_warnings() {
    if !common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        return;
    }
    let mut programs = vec![example("gaussian_blur_separable"), example("rician3d")];
    for mode in ["clamp", "mirror", "periodic", "zero", "none"] {
        programs.push(pair_program(mode, 2));
    }
    for program in &programs {
        let has = |name: &str| program.fields.iter().any(|f| f.name == name);
        let pick = |names: &[&str]| -> Vec<String> {
            names
                .iter()
                .filter(|n| has(n))
                .map(|n| n.to_string())
                .collect()
        };
        let requests = [
            ("fused", fuse()),
            (
                "fused-no-write-tiles",
                ScheduleRequest {
                    results: Some(pick(&["out", "U"])),
                    shm: ShmRequest::Names(pick(&["img", "U"])),
                    block: Some(vec![8, 4]),
                    tile: Some(vec![2, 3]),
                    ..fuse()
                },
            ),
        ];
        for (label, request) in &requests {
            let s = schedule(program, request);
            assert!(
                s.stencils[0].recompute.is_some(),
                "{}: {:?}",
                program.name,
                s.notes
            );
            let source = emit(program, request, GpuTarget::Cuda).unwrap();
            for arch in ["sm_80", "sm_90"] {
                let compiled = nvrtc::compile_with_log(&source, arch)
                    .unwrap_or_else(|e| panic!("{} [{label}] {arch}: {e}", program.name));
                assert!(
                    compiled.log.is_empty(),
                    "{} [{label}] {arch}: NVRTC warned:\n{}\n{source}",
                    program.name,
                    compiled.log
                );
            }
        }
    }
}

fn opencl_here() -> bool {
    common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    )
}

/// Runs `program` on OpenCL under each request (each must fuse by recompute)
/// and compares every field with the interpreter.
fn agree(program: &Program, values: &[(&str, f64)], requests: &[(&str, ScheduleRequest)]) {
    let env = RunEnv::new(program, &bindings(program, values)).unwrap();
    let mut expected = initial_state(program, &env);
    interp::run(program, &env, &mut expected).expect("interpreter runs");
    for (label, request) in requests {
        let what = format!("{} {values:?} [{label}]", program.name);
        let s = Schedule::for_run(program, request, &env).unwrap();
        assert!(s.stencils[0].recompute.is_some(), "{what}: {:?}", s.notes);
        let mut actual = initial_state(program, &env);
        opencl::run_with_schedule(program, &env, &mut actual, &s)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        if request.results.is_some() {
            // Only the results (and the fields the run reads back) are kept.
            let mut masked = actual.clone();
            let tmp = program.fields.iter().position(|f| f.name == "tmp");
            if let Some(t) = tmp {
                masked.fields[t] = expected.fields[t].clone();
            }
            assert_close(program, &expected, &masked, &what);
        } else {
            assert_close(program, &expected, &actual, &what);
        }
    }
}

fn requests() -> Vec<(&'static str, ScheduleRequest)> {
    vec![
        ("fused", fuse()),
        (
            "fused-b8x4-t2x3-img-tile",
            ScheduleRequest {
                block: Some(vec![8, 4]),
                tile: Some(vec![2, 3]),
                shm: ShmRequest::Names(vec!["img".into()]),
                ..fuse()
            },
        ),
        (
            "fused-b4x2-no-write",
            ScheduleRequest {
                block: Some(vec![4, 2]),
                results: Some(vec!["out".into(), "img".into()]),
                ..fuse()
            },
        ),
        // Runs of 8 rows: the consumer's fast path (its tile reads shared in
        // registers) and edge path, and blocks whose whole tile is inside the
        // grid (the recompute phase without boundary modes) beside others.
        (
            "fused-b8x2-t1x8",
            ScheduleRequest {
                block: Some(vec![8, 2]),
                tile: Some(vec![1, 8]),
                ..fuse()
            },
        ),
    ]
}

#[test]
fn fused_pairs_agree_with_the_interpreter_on_opencl_in_every_boundary_mode() {
    if !opencl_here() {
        return;
    }
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        let program = pair_program(mode, 0);
        for (w, h) in [
            (1.0, 1.0),
            (3.0, 2.0),
            (37.0, 13.0),
            (70.0, 29.0),
            (45.0, 61.0),
        ] {
            agree(&program, &[("w", w), ("h", h)], &requests());
        }
    }
    // An inset subset: cells of the halo outside it keep what `tmp` holds;
    // `none` is read only inside the grid.
    for mode in ["clamp", "mirror", "periodic", "zero", "none"] {
        let program = pair_program(mode, 2);
        for (w, h) in [(5.0, 5.0), (37.0, 13.0), (41.0, 30.0)] {
            agree(&program, &[("w", w), ("h", h)], &requests());
        }
    }
}

#[test]
fn the_fused_separable_blur_and_rician_agree_with_the_interpreter_on_opencl() {
    if !opencl_here() {
        return;
    }
    let blur = example("gaussian_blur_separable");
    for (w, h) in [(1.0, 1.0), (37.0, 23.0), (64.0, 16.0)] {
        agree(&blur, &[("width", w), ("height", h)], &requests());
    }
    let rician = example("rician3d");
    let rician_requests = [
        ("fused", fuse()),
        (
            "fused-b8x4x2-t1x1x2-tiles",
            ScheduleRequest {
                block: Some(vec![8, 4, 2]),
                tile: Some(vec![1, 1, 2]),
                shm: ShmRequest::Names(vec!["U".into(), "F".into()]),
                ..fuse()
            },
        ),
        (
            "fused-no-write",
            ScheduleRequest {
                results: Some(vec!["U".into()]),
                ..fuse()
            },
        ),
    ];
    for dims in [(3.0, 3.0, 3.0), (19.0, 13.0, 7.0)] {
        let values = [
            ("dim0", dims.0),
            ("dim1", dims.1),
            ("dim2", dims.2),
            ("sigma", 0.05),
            ("lambda", 0.065),
        ];
        agree_rician(&rician, &values, &rician_requests);
    }
}

/// As [`agree`]; with the results named, `G` (not a result) is not compared.
fn agree_rician(program: &Program, values: &[(&str, f64)], requests: &[(&str, ScheduleRequest)]) {
    let env = RunEnv::new(program, &bindings(program, values)).unwrap();
    let mut expected = initial_state(program, &env);
    interp::run(program, &env, &mut expected).expect("interpreter runs");
    let g = program.fields.iter().position(|f| f.name == "G").unwrap();
    for (label, request) in requests {
        let what = format!("rician {values:?} [{label}]");
        let s = Schedule::for_run(program, request, &env).unwrap();
        assert!(s.stencils[0].recompute.is_some(), "{what}: {:?}", s.notes);
        let mut actual = initial_state(program, &env);
        opencl::run_with_schedule(program, &env, &mut actual, &s)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        if request.results.is_some() {
            actual.fields[g] = expected.fields[g].clone();
        }
        assert_close(program, &expected, &actual, &what);
    }
}
