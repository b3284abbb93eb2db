//! Fusion of consecutive stencils: when it is legal and why it is refused, the
//! fused kernel as emitted, fused and unfused runs on OpenCL (PoCL in CI) against
//! the interpreter, and the note for a pragma's `time:` clamped to the iterations.

use crate::common;
use crate::gpu_common;

use gpu_common::*;
use stencilc::driver::emit::{emit, GpuTarget};
use stencilc::exec::opencl;
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::Program;
use stencilc::schedule::{Schedule, ScheduleRequest, ShmRequest};

/// Three stencils over one subset, each reading what the previous wrote only at
/// offset zero: they all fuse into one kernel.
const CHAIN: &str = "int n;
int steps;
grid g[n][n];
float griddata img on g at 0 boundary clamp;
float griddata tmp on g at 0;
float griddata out on g at 0,1;
iterate steps {
  stencil smooth {
    [1:n-2][1:n-2] : [0]tmp[0][0] = 0.25f*([0]img[-1][0] + [0]img[1][0] + [0]img[0][-1]
                                          + [0]img[0][1]) + 0.1f*[0]out[0][0];
  }
  stencil combine {
    [1:n-2][1:n-2] : [1]out[0][0] = [0]tmp[0][0]*[0]img[0][1] - 0.5f*[0]out[0][0];
  }
  stencil rescale {
    [1:n-2][1:n-2] : [0]tmp[0][0] = [1]out[0][0]*2.0f + [0]tmp[0][0];
  }
}
";

fn fuse(shm: ShmRequest) -> ScheduleRequest {
    ScheduleRequest {
        fuse: true,
        shm,
        ..ScheduleRequest::default()
    }
}

fn fused_flags(program: &Program, request: &ScheduleRequest) -> (Vec<bool>, Vec<String>) {
    let schedule = Schedule::new(program, request).expect("valid schedule");
    let flags = schedule.stencils.iter().map(|s| s.fuse_with_next).collect();
    (flags, schedule.notes)
}

#[test]
fn fusion_is_off_by_default() {
    let program = parse("chain", CHAIN);
    let (flags, notes) = fused_flags(&program, &ScheduleRequest::default());
    assert_eq!(flags, [false, false, false]);
    assert!(notes.is_empty(), "{notes:?}");
}

#[test]
fn a_chain_reading_only_at_offset_zero_fuses_into_one_kernel() {
    let program = parse("chain", CHAIN);
    let (flags, notes) = fused_flags(&program, &fuse(ShmRequest::Auto));
    assert_eq!(flags, [true, true, false]);
    assert!(notes.is_empty(), "{notes:?}");
    let cuda = emit(&program, &fuse(ShmRequest::Auto), GpuTarget::Cuda).unwrap();
    assert_eq!(cuda.matches("__global__").count(), 1, "{cuda}");
    assert!(cuda.contains("smooth_combine_rescale("), "{cuda}");
    insta::assert_snapshot!("fused_chain_cuda", cuda);
}

#[test]
fn rician_gs_and_us_fuse_by_halo_recompute_not_at_the_same_point() {
    // `us` reads G at offsets: not fused point by point, but by recomputing
    // `gs` over each block's halo (tests/gpu/opencl_recompute.rs).
    let program = example("rician3d");
    let (flags, notes) = fused_flags(&program, &fuse(ShmRequest::Auto));
    assert_eq!(flags, [true, false]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("fusing `us` into `gs` by recomputing `[0]G` over a halo"),
        "{}",
        notes[0]
    );
}

#[test]
fn different_subsets_are_not_fused() {
    let program = parse(
        "subsets",
        "int n;\ngrid g[n];\nfloat griddata a on g at 0;\nfloat griddata b on g at 0;\n\
         iterate 1 {\n  stencil s1 { [1:n-2] : [0]a[0] = 1.0f; }\n\
         stencil s2 { [0:n-2] : [0]b[0] = [0]a[0]; }\n}\n",
    );
    let (flags, notes) = fused_flags(&program, &fuse(ShmRequest::Auto));
    assert_eq!(flags, [false, false]);
    assert!(
        notes[0].contains("its subset [0:n - 2] differs from `s1`'s [1:n - 2]"),
        "{}",
        notes[0]
    );
    // Equal after evaluation: n - 2 and n - 1 - 1 cover the same points.
    let program = parse(
        "subsets",
        "int n;\ngrid g[n];\nfloat griddata a on g at 0;\nfloat griddata b on g at 0;\n\
         iterate 1 {\n  stencil s1 { [1:n-2] : [0]a[0] = 1.0f; }\n\
         stencil s2 { [1:n-1-1] : [0]b[0] = [0]a[0]; }\n}\n",
    );
    let env = RunEnv::new(&program, &bindings(&program, &[("n", 9.0)])).unwrap();
    let schedule = Schedule::for_run(&program, &fuse(ShmRequest::Auto), &env).unwrap();
    assert!(schedule.stencils[0].fuse_with_next, "{:?}", schedule.notes);
}

#[test]
fn a_write_to_what_an_earlier_stencil_reads_at_offsets_is_not_fused() {
    let program = parse(
        "hazard",
        "int n;\ngrid g[n];\nfloat griddata a on g at 0;\nfloat griddata b on g at 0;\n\
         iterate 1 {\n  stencil s1 { [1:n-2] : [0]b[0] = [0]a[-1] + [0]a[1]; }\n\
         stencil s2 { [1:n-2] : [0]a[0] = [0]b[0]; }\n}\n",
    );
    let (flags, notes) = fused_flags(&program, &fuse(ShmRequest::Auto));
    assert_eq!(flags, [false, false]);
    assert!(
        notes[0].contains("it writes `[0]a`, which an earlier stencil reads at a non-zero offset"),
        "{}",
        notes[0]
    );
}

#[test]
fn fused_and_unfused_runs_agree_with_the_interpreter_on_opencl() {
    if !common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    ) {
        return;
    }
    let program = parse("chain", CHAIN);
    let env = RunEnv::new(
        &program,
        &bindings(&program, &[("n", 29.0), ("steps", 3.0)]),
    )
    .unwrap();
    let mut expected = initial_state(&program, &env);
    interp::run(&program, &env, &mut expected).expect("interpreter runs");
    let tiles = ShmRequest::Names(vec!["img".into(), "out".into()]);
    let requests = [
        ("unfused", ScheduleRequest::default()),
        ("fused", fuse(ShmRequest::Auto)),
        ("fused-none", fuse(ShmRequest::None)),
        (
            "fused-tiles-b8x4-t2x3",
            ScheduleRequest {
                block: Some(vec![8, 4]),
                tile: Some(vec![2, 3]),
                ..fuse(tiles)
            },
        ),
    ];
    for (label, request) in requests {
        let schedule = Schedule::for_run(&program, &request, &env).unwrap();
        let mut actual = initial_state(&program, &env);
        opencl::run_with_schedule(&program, &env, &mut actual, &schedule)
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        assert_close(&program, &expected, &actual, label);
    }
}

#[test]
fn a_pragma_time_above_the_iteration_count_is_clamped_with_a_note() {
    let mut program = parse("chain", CHAIN);
    let env = RunEnv::new(&program, &bindings(&program, &[("n", 9.0), ("steps", 1.0)])).unwrap();
    let request = ScheduleRequest::default();
    let plain = Schedule::for_run(&program, &request, &env).unwrap();
    assert!(plain.time.is_none() && plain.time_notes.is_empty());
    program.hints.time = Some(stencilc::ir::HintValue::literal(4));
    let clamped = Schedule::for_run(&program, &request, &env).unwrap();
    assert!(clamped.time.is_none());
    assert_eq!(
        clamped.time_notes,
        ["`time:4` is more than the 1 iteration of `chain`; using 1"]
    );
}
