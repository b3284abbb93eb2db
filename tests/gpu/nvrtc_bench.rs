//! The GPU benchmark harness without a GPU: the naive baselines and every
//! benchmark's generated kernels compile with NVRTC, the f64 variants are all
//! double, the naive recipes match the programs, and measuring without a CUDA
//! driver fails with a clear message.

use crate::common;

use std::path::PathBuf;

use stencilc::back::gpu_emit::{emit, GpuTarget};
use stencilc::exec::cuda::bench::suite::{float_to_double, standard_suite};
use stencilc::exec::cuda::bench::{load_program, measure, naive, BenchOptions, Precision};
use stencilc::exec::cuda::{nvrtc, probe};
use stencilc::ir::ScalarType;

fn nvrtc_here() -> bool {
    common::runtime_available("nvrtc", nvrtc::load().map(|_| ()))
}

/// `bench/programs` (on main; `STENCILC_BENCH_PROGRAMS` names another folder).
fn programs_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("STENCILC_BENCH_PROGRAMS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench/programs"));
    if dir.join("j2d5pt.sdsl").exists() {
        Some(dir)
    } else {
        eprintln!("skipping: no benchmark programs in {}", dir.display());
        None
    }
}

#[test]
fn naive_kernels_compile_with_nvrtc_in_both_precisions() {
    if !nvrtc_here() {
        return;
    }
    for ty in [ScalarType::Float, ScalarType::Double] {
        let compiled =
            nvrtc::compile_with_options(naive::SOURCE, "sm_90", &[naive::real_define(ty)])
                .unwrap_or_else(|e| panic!("naive.cu ({ty}): {e}"));
        assert!(
            compiled.log.is_empty(),
            "NVRTC warned ({ty}):\n{}",
            compiled.log
        );
        for kernel in naive::kernel_names() {
            assert!(
                compiled.ptx.contains(&format!(".entry {kernel}(")),
                "naive.cu has no kernel `{kernel}` ({ty})"
            );
        }
    }
}

#[test]
fn every_benchmark_kernel_compiles_with_nvrtc_and_matches_its_naive_recipe() {
    let Some(dir) = programs_dir() else { return };
    let nvrtc = nvrtc_here();
    let mut seen = std::collections::BTreeSet::new();
    for case in standard_suite(&dir, true) {
        let program = load_program(&case).unwrap_or_else(|e| panic!("{}: {e}", case.label));
        if case.precision == Precision::F64 {
            assert!(
                program.fields.iter().all(|f| f.ty == ScalarType::Double),
                "{}: the f64 variant has non-double fields",
                case.label
            );
        }
        let recipe = naive::recipe(&case.name).expect("every benchmark has a naive kernel");
        naive::resolve(&program, recipe).unwrap_or_else(|e| panic!("{}: {e}", case.label));
        let source = emit(&program, &case.request, GpuTarget::Cuda)
            .unwrap_or_else(|e| panic!("{}: {e}", case.label));
        if !nvrtc || !seen.insert(source.clone()) {
            continue;
        }
        let compiled = nvrtc::compile_with_log(&source, "sm_90")
            .unwrap_or_else(|e| panic!("{}: {e}", case.label));
        assert!(
            compiled.log.is_empty(),
            "{}: NVRTC warned:\n{}",
            case.label,
            compiled.log
        );
    }
}

#[test]
fn the_suite_covers_the_set_of_the_issue() {
    let cases = standard_suite(std::path::Path::new("bench/programs"), false);
    let labels: Vec<&str> = cases.iter().map(|c| c.label.as_str()).collect();
    for stem in [
        "j2d5pt",
        "j2d9pt",
        "box2d2r",
        "gradient2d",
        "star3d1r",
        "j3d27pt",
        "gaussian_blur",
    ] {
        for precision in ["f32", "f64"] {
            for schedule in ["default", "shm-none"] {
                let label = format!("{stem} {precision} {schedule}");
                assert!(labels.contains(&label.as_str()), "missing {label}");
            }
        }
    }
    assert!(labels.contains(&"rician3d native default"));
    for variant in ["thorin-no-shm", "thorin-tables", "thorin-tiles-tables"] {
        assert!(labels.contains(&format!("gaussian_blur f32 {variant}").as_str()));
        assert!(labels.contains(&format!("j2d9pt f32 {variant}").as_str()));
    }
    let blur = cases.iter().find(|c| c.name == "gaussian_blur").unwrap();
    assert!(blur.params.contains(&("width".into(), 3840.0)));
    assert!(blur.params.contains(&("height".into(), 2160.0)));
    let j3d = cases.iter().find(|c| c.name == "j3d27pt").unwrap();
    assert!(j3d.params.contains(&("n".into(), 512.0)));
}

#[test]
fn float_programs_become_double_throughout() {
    let text = "float griddata a on g at 0; // float\nfloat x1f = 2.5f + 1e-3F + .5f + 7 + 0x1f;\n\
                [1]a[0] = sqrtf(fabsf(x1f)) * 3.0e+2f;\n";
    assert_eq!(
        float_to_double(text),
        "double griddata a on g at 0; // double\ndouble x1f = 2.5 + 1e-3 + .5 + 7 + 0x1f;\n\
         [1]a[0] = sqrt(fabs(x1f)) * 3.0e+2;\n"
    );
}

#[test]
fn measuring_without_a_cuda_driver_fails_with_a_clear_message() {
    let Err(why) = probe() else {
        eprintln!("skipping: this machine has a CUDA device");
        return;
    };
    let mut case = standard_suite(std::path::Path::new("bench/programs"), true).remove(0);
    // A program that is on every branch: the device is looked for after parsing.
    case.path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/jacobi2d.sdsl");
    case.name = "jacobi2d".into();
    case.params = vec![("dim0".into(), 64.0), ("dim1".into(), 64.0)];
    let err = measure(&case, BenchOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(err, why.to_string());
    // On a machine without libcuda.so (CI), the message names what is missing.
    if !std::path::Path::new("/usr/lib/x86_64-linux-gnu/libcuda.so.1").exists() {
        assert!(err.contains("no CUDA driver (libcuda.so)"), "{err}");
    }
}
