//! 64-bit flattened indices: grids of 2^31 points or more get kernels that
//! index in `long` (CUDA `long long`), compiled here by NVRTC and PoCL's
//! compiler at those sizes (running them needs more memory than a test may
//! take); the same form, forced on a small grid, runs on PoCL against the
//! interpreter (also for every example: `index64` in the schedule matrix).

use std::path::PathBuf;

use crate::common;
use crate::gpu_common::{assert_close, bench_program, bindings, initial_state, parse};

use stencilc::driver::emit::{emit_with, EmitOptions, GpuTarget};
use stencilc::exec::cuda::nvrtc;
use stencilc::exec::opencl;
use stencilc::exec::options::RunOptions;
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::Program;
use stencilc::lower::{lower, Target};
use stencilc::schedule::{Schedule, ScheduleRequest};

/// The bench programs at sizes past 2^31 - 1 points: 46341² and 1291³.
fn large_cases() -> Vec<(Program, RunEnv)> {
    [("j2d5pt", 46341.0), ("star3d1r", 1291.0)]
        .into_iter()
        .map(|(name, n)| {
            let program = bench_program(name);
            let env = RunEnv::new(&program, &bindings(&program, &[("n", n), ("steps", 1.0)]))
                .expect("valid sizes");
            (program, env)
        })
        .collect()
}

#[test]
fn schedules_for_grids_of_2_31_points_use_64_bit_indices() {
    for (program, env) in large_cases() {
        let schedule = Schedule::for_run(&program, &ScheduleRequest::default(), &env).unwrap();
        assert!(schedule.wide_indices, "{}", program.name);
        let lowered = lower(&program, &schedule, Target::Cuda);
        assert!(lowered.plan.wide_indices, "{}", program.name);
    }
    // One point fewer than 2^31 along the flattened index stays 32-bit.
    let program = bench_program("j2d5pt");
    let env = RunEnv::new(
        &program,
        &bindings(&program, &[("n", 46340.0), ("steps", 1.0)]),
    )
    .unwrap();
    let schedule = Schedule::for_run(&program, &ScheduleRequest::default(), &env).unwrap();
    assert!(!schedule.wide_indices);
}

#[test]
fn nvrtc_compiles_the_64_bit_kernels_of_grids_past_2_31_points() {
    let nvrtc_here = common::runtime_available("nvrtc", nvrtc::load().map(|_| ()));
    for (program, env) in large_cases() {
        let options = EmitOptions {
            env: Some(&env),
            fma: false,
            ..EmitOptions::default()
        };
        let source = emit_with(
            &program,
            &ScheduleRequest::default(),
            GpuTarget::Cuda,
            options,
        )
        .unwrap();
        // The flattened index is computed in 64 bits from the outermost axis on.
        let outer = if program.name == "star3d1r" {
            "[((long long)iz * size_y + iy) * size_x + ix]"
        } else {
            "[(long long)iy * size_x + ix]"
        };
        assert!(source.contains(outer), "{}:\n{source}", program.name);
        assert!(source.contains("flattened indices are 64-bit"), "{source}");
        if !nvrtc_here {
            continue;
        }
        for arch in ["sm_80", "sm_90"] {
            let compiled = nvrtc::compile_with_log(&source, arch)
                .unwrap_or_else(|e| panic!("{} for {arch}: {e}\n{source}", program.name));
            assert!(
                compiled.log.is_empty(),
                "{}: {}",
                program.name,
                compiled.log
            );
            // 64-bit address arithmetic from a widened product.
            assert!(compiled.ptx.contains("mul.wide.s32") || compiled.ptx.contains("mul.lo.s64"));
        }
    }
}

#[test]
fn opencl_builds_the_64_bit_kernels_of_grids_past_2_31_points() {
    let here = common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    );
    for (program, env) in large_cases() {
        let schedule = Schedule::for_run(&program, &ScheduleRequest::default(), &env).unwrap();
        let lowered = lower(&program, &schedule, Target::OpenCl);
        let source = stencilc::back::opencl::print(&lowered.module);
        assert!(
            source.contains("[((long)i") || source.contains("[(long)i"),
            "{}:\n{source}",
            program.name
        );
        if here {
            opencl::build(&lowered.module).unwrap_or_else(|e| panic!("{}: {e}", program.name));
        }
    }
}

#[test]
fn forced_64_bit_kernels_agree_with_the_interpreter_on_pocl() {
    if !common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    ) {
        return;
    }
    // Every boundary mode reads through the flattened index; a reduction too.
    let program = parse(
        "wide",
        "int n;\ngrid g[n][n+2][n+1];\n\
         float griddata a on g at 0,1 boundary periodic;\n\
         float griddata b on g at 0 boundary mirror;\n\
         iterate 3 {\n  stencil s {\n    [0:n-1][0:n+1][0:n] : [1]a[0][0][0] = \
         0.5f*[0]a[0][0][0] + 0.25f*[0]a[-1][0][1] + 0.125f*[0]b[0][2][-1];\n  }\n  \
         reduction total + { [0:n-1][0:n+1][0:n] : [1]a[0][0][0]; }\n}\n",
    );
    let env = RunEnv::new(&program, &bindings(&program, &[("n", 7.0)])).unwrap();
    let mut expected = initial_state(&program, &env);
    interp::run(&program, &env, &mut expected).unwrap();
    let options = RunOptions {
        index64: true,
        ..RunOptions::default()
    };
    let device = stencilc::model::Device::default_device();
    let schedule = options
        .schedule(&program, &env, Target::OpenCl, device)
        .unwrap();
    assert!(schedule.wide_indices);
    let source = stencilc::back::opencl::print(&lower(&program, &schedule, Target::OpenCl).module);
    assert!(source.contains("[((long)"), "{source}");
    let mut actual = initial_state(&program, &env);
    opencl::run(&program, &env, &mut actual, &options).unwrap();
    assert_close(&program, &expected, &actual, "wide [index64]");
}

#[test]
fn halo_recompute_kernels_index_in_64_bits_when_wide() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/gaussian_blur_separable.sdsl");
    let program = parse(
        "blur",
        &std::fs::read_to_string(path).expect("example exists"),
    );
    let request = ScheduleRequest {
        fuse: true,
        wide_indices: true,
        ..ScheduleRequest::default()
    };
    let schedule = Schedule::new(&program, &request).expect("valid schedule");
    assert!(schedule.stencil(0).recompute.is_some(), "{schedule:?}");
    let source = stencilc::back::opencl::print(&lower(&program, &schedule, Target::OpenCl).module);
    // Every flattened index of the fused kernel (the recompute phase's reads
    // of `img`, the stores of `tmp` and `out`) widens its outermost coordinate.
    for array in ["img[", "tmp[", "out["] {
        for (at, _) in source.match_indices(array) {
            let index = &source[at + array.len()..];
            assert!(
                index.starts_with("((long)") || index.starts_with("(long)"),
                "{array}{}",
                &index[..40.min(index.len())]
            );
        }
    }
}
