//! Every example's CUDA, under the schedule matrix, compiles with NVRTC for sm_90
//! without warnings (no GPU needed); emitted kernels are snapshot-tested.

use crate::common;
use crate::gpu_common;

use gpu_common::*;
use stencilc::driver::emit::{emit, GpuTarget};
use stencilc::exec::cuda::nvrtc;
use stencilc::schedule::ScheduleRequest;

fn nvrtc_here() -> bool {
    common::runtime_available("nvrtc", nvrtc::load().map(|_| ()))
}

#[test]
fn nvrtc_compiles_every_example_under_every_schedule_without_warnings() {
    if !nvrtc_here() {
        return;
    }
    let mut programs: Vec<_> = EXAMPLES.iter().map(|(n, _)| example(n)).collect();
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        programs.push(boundary_program(mode, "double"));
    }
    for program in &programs {
        for (label, request) in schedule_matrix(program, rank(program)) {
            let source = emit(program, &request, GpuTarget::Cuda).unwrap();
            let compiled = nvrtc::compile_with_log(&source, "sm_90")
                .unwrap_or_else(|e| panic!("{} [{label}]: {e}", program.name));
            assert!(
                compiled.log.is_empty(),
                "{} [{label}]: NVRTC warned:\n{}\n{source}",
                program.name,
                compiled.log
            );
            assert!(compiled.ptx.contains(".entry"), "PTX has kernels");
        }
    }
}

#[test]
fn nvrtc_failure_shows_the_log_with_the_source_line() {
    if !nvrtc_here() {
        return;
    }
    let source = "extern \"C\" __global__ void k(float* a)\n{\n    a[0] = undefined_name;\n}\n";
    let err = nvrtc::compile_with_log(source, "sm_90")
        .unwrap_err()
        .to_string();
    assert!(err.contains("undefined_name"), "{err}");
    assert!(err.contains("    |     a[0] = undefined_name;"), "{err}");
}

#[test]
fn emitted_kernels_of_the_examples() {
    for (name, _) in EXAMPLES {
        let program = example(name);
        let request = ScheduleRequest::default();
        let cuda = emit(&program, &request, GpuTarget::Cuda).unwrap();
        insta::assert_snapshot!(format!("{name}_cuda"), cuda);
        let opencl = emit(&program, &request, GpuTarget::OpenCl).unwrap();
        insta::assert_snapshot!(format!("{name}_opencl"), opencl);
    }
}

#[test]
fn shared_tile_indices_are_affine_in_the_thread_index() {
    // The blur with tiles and several points per thread: no `%` or `/` anywhere
    // in the compute loop, only in the boundary helpers used while loading.
    let program = example("gaussian_blur");
    let request = ScheduleRequest {
        tile: Some(vec![2, 2]),
        ..ScheduleRequest::default()
    };
    let cuda = emit(&program, &request, GpuTarget::Cuda).unwrap();
    assert!(cuda.contains("img_tile[qy + "), "{cuda}");
    let kernel = &cuda[cuda.find("void __launch_bounds__").unwrap()..];
    let compute = &kernel[kernel.find("__syncthreads();").unwrap()..];
    assert!(
        !compute.contains('%') && !compute.contains(" / "),
        "{compute}"
    );
    // The table is folded into literals: no load of K remains.
    assert!(!compute.contains("K["), "{compute}");
}

#[test]
fn nvrtc_compiles_a_program_named_with_every_targets_reserved_words() {
    let program = reserved_names_program();
    for (label, request) in schedule_matrix(&program, rank(&program)) {
        let source = emit(&program, &request, GpuTarget::Cuda).unwrap();
        if label == "default" {
            // The program's names stay where they are free; reserved ones get `_`.
            for name in [
                "restrict_",
                "kernel_",
                "local_t0",
                "scratch",
                "a_tile",
                "acc",
                "tid",
            ] {
                assert!(source.contains(name), "{name} missing:\n{source}");
            }
        }
        if !nvrtc_here() {
            continue;
        }
        let compiled = nvrtc::compile_with_log(&source, "sm_90")
            .unwrap_or_else(|e| panic!("[{label}]: {e}\n{source}"));
        assert!(
            compiled.log.is_empty(),
            "[{label}]: {}\n{source}",
            compiled.log
        );
    }
}

#[test]
fn kernel_ir_of_every_example_under_every_schedule_verifies() {
    use stencilc::lower::{lower, Target};
    use stencilc::schedule::Schedule;
    let mut programs: Vec<_> = EXAMPLES.iter().map(|(n, _)| example(n)).collect();
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        programs.push(boundary_program(mode, "float"));
    }
    programs.push(reserved_names_program());
    for program in &programs {
        for (label, request) in schedule_matrix(program, rank(program)) {
            let schedule = Schedule::new(program, &request).unwrap();
            for target in [Target::Cuda, Target::OpenCl] {
                let lowered = lower(program, &schedule, target);
                if let Err(errors) = lowered.verify(program) {
                    panic!(
                        "{} [{label}] {target:?}:\n{}",
                        program.name,
                        errors.join("\n")
                    );
                }
            }
        }
    }
}
