//! `--fma`: the GPU kernels built with contraction into fused multiply-adds
//! (NVRTC `--fmad=true`, OpenCL `-cl-mad-enable` and `FP_CONTRACT ON`) say so
//! in their header and agree with the interpreter within the tolerance
//! `run --verify` states for them: 1e-4 (`float`) and 1e-10 (`double`) of the
//! field's largest magnitude.

use crate::common;
use crate::gpu_common::{bindings, example, initial_state, EXAMPLES};

use stencilc::exec::cuda::nvrtc;
use stencilc::exec::options::RunOptions;
use stencilc::exec::{opencl, FieldState};
use stencilc::interp;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ScalarType};
use stencilc::lower::{lower, Target};
use stencilc::schedule::{Schedule, ScheduleRequest};

/// `run --verify`'s tolerances with `--fma`, relative to the largest magnitude.
const FLOAT_TOLERANCE: f64 = 1e-4;
const DOUBLE_TOLERANCE: f64 = 1e-10;

fn assert_within_fma_tolerance(program: &Program, expected: &FieldState, actual: &FieldState) {
    for (f, field) in program.fields.iter().enumerate() {
        let e = expected.newest(program, f).to_f64();
        let a = actual.newest(program, f).to_f64();
        let scale = e.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1.0);
        let tol = match field.ty {
            ScalarType::Float => FLOAT_TOLERANCE,
            ScalarType::Double => DOUBLE_TOLERANCE,
            _ => 0.0,
        } * scale;
        for (i, (x, y)) in e.iter().zip(&a).enumerate() {
            assert!(
                (x - y).abs() <= tol,
                "{} with --fma: field {} element {i}: interpreter {x}, got {y} (tolerance {tol})",
                program.name,
                field.name
            );
        }
    }
}

#[test]
fn opencl_with_fma_agrees_with_the_interpreter_within_the_stated_tolerance() {
    if !common::runtime_available(
        "opencl",
        opencl::probe().map(|_| ()).map_err(|e| e.to_string()),
    ) {
        return;
    }
    let options = RunOptions {
        fma: true,
        ..RunOptions::default()
    };
    for (name, params) in EXAMPLES {
        let program = example(name);
        let env = RunEnv::new(&program, &bindings(&program, params)).unwrap();
        let mut expected = initial_state(&program, &env);
        let reference = interp::run(&program, &env, &mut expected).unwrap();
        let mut actual = initial_state(&program, &env);
        let summary = opencl::run(&program, &env, &mut actual, &options)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(summary.iterations, reference.iterations, "{name}");
        assert_within_fma_tolerance(&program, &expected, &actual);
    }
}

#[test]
fn fma_kernels_say_so_and_are_built_with_contraction() {
    let program = example("jacobi2d");
    let schedule = Schedule::new(&program, &ScheduleRequest::default()).unwrap();
    let mut module = lower(&program, &schedule, Target::OpenCl).module;
    let plain = stencilc::back::opencl::print(&module);
    assert!(plain.contains("#pragma OPENCL FP_CONTRACT OFF") && !plain.contains("--fma"));
    assert!(!stencilc::back::opencl::build_options(&module).contains("mad"));
    module.fma = true;
    let fused = stencilc::back::opencl::print(&module);
    assert!(fused.contains("#pragma OPENCL FP_CONTRACT ON"), "{fused}");
    assert!(fused.contains("differ from the interpreter's"), "{fused}");
    assert!(stencilc::back::opencl::build_options(&module).contains("-cl-mad-enable"));
    let cuda = stencilc::back::cuda::print(&module);
    assert!(cuda.contains("--fmad=true") && cuda.contains("in the last bits"));
    assert!(stencilc::back::cuda::nvrtc_options(&module).contains(&"--fmad=true"));
}

#[test]
fn nvrtc_compiles_with_fmad_true_and_contracts() {
    if !common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        return;
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/programs/j2d5pt.sdsl");
    let program = crate::gpu_common::parse("j2d5pt", &std::fs::read_to_string(path).unwrap());
    let schedule = Schedule::new(&program, &ScheduleRequest::default()).unwrap();
    let mut module = lower(&program, &schedule, Target::Cuda).module;
    let (_, plain) = nvrtc::compile_module(&module, "sm_90").unwrap();
    assert!(!plain.ptx.contains("fma.rn.f32"), "{}", plain.ptx);
    module.fma = true;
    for arch in ["sm_80", "sm_90"] {
        let (source, fused) = nvrtc::compile_module(&module, arch).unwrap();
        assert!(fused.log.is_empty(), "{}\n{source}", fused.log);
        // `5.1f * a + 12.1f * b + ...` became fused multiply-adds.
        assert!(fused.ptx.contains("fma.rn.f32"), "{}", fused.ptx);
    }
}
