//! The GPU benchmark harness without a GPU: the naive baselines and every
//! benchmark's generated kernels compile with NVRTC, the f64 variants are all
//! double, the naive recipes match the programs, and measuring without a CUDA
//! driver fails with a clear message.

use crate::common;

use std::path::PathBuf;

use stencilc::bench::gpu::suite::{float_to_double, standard_suite};
use stencilc::bench::gpu::{
    case_env, has_iteration_work, load_program, measure, naive, predict_case, BenchOptions,
    Precision,
};
use stencilc::driver::emit::{emit, GpuTarget};
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
        "heat3d",
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
        assert!(labels.contains(&format!("j2d9pt_table f32 {variant}").as_str()));
    }
    let blur = cases.iter().find(|c| c.name == "gaussian_blur").unwrap();
    assert!(blur.params.contains(&("width".into(), 3840.0)));
    assert!(blur.params.contains(&("height".into(), 2160.0)));
    let j3d = cases.iter().find(|c| c.name == "j3d27pt").unwrap();
    assert!(j3d.params.contains(&("n".into(), 512.0)));
    let heat = cases.iter().find(|c| c.name == "heat3d").unwrap();
    assert!(heat.params.contains(&("alpha".into(), 0.1)));
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

/// The CUDA of a case, as `measure` would compile it.
fn cuda_of(case: &stencilc::bench::gpu::BenchCase) -> String {
    let program = load_program(case).unwrap_or_else(|e| panic!("{}: {e}", case.label));
    emit(&program, &case.request, GpuTarget::Cuda).unwrap_or_else(|e| panic!("{}: {e}", case.label))
}

#[test]
fn the_three_thorin_variants_compile_to_different_kernels() {
    let Some(dir) = programs_dir() else { return };
    let cases = standard_suite(&dir, true);
    for (stem, table) in [("gaussian_blur", "K"), ("j2d9pt_table", "W")] {
        let source = |variant: &str| {
            let label = format!("{stem} f32 {variant}");
            let case = cases.iter().find(|c| c.label == label).expect(&label);
            cuda_of(case)
        };
        let (no_shm, tables, both) = (
            source("thorin-no-shm"),
            source("thorin-tables"),
            source("thorin-tiles-tables"),
        );
        // no-shm: the table in global memory (`__device__`, not `const`, so
        // NVRTC cannot fold it), read through global loads; nothing shared.
        let global = format!("__device__ float {table}_global[");
        assert!(no_shm.contains(&global), "{stem} no-shm:\n{no_shm}");
        assert!(no_shm.contains(&format!("{table}_global[")));
        assert!(!no_shm.contains("__shared__"), "{stem} no-shm:\n{no_shm}");
        // tables: the table copied into shared memory, the field read from global.
        assert!(
            tables.contains(&format!("{table}_shared")),
            "{stem} tables:\n{tables}"
        );
        assert!(!tables.contains(&global));
        // tiles and tables: a field tile besides the table.
        assert!(
            both.contains(&format!("{table}_shared")),
            "{stem} both:\n{both}"
        );
        assert!(
            both.matches("__shared__").count() > tables.matches("__shared__").count(),
            "{stem} tiles-tables has no field tile:\n{both}"
        );
        assert!(no_shm != tables && tables != both && no_shm != both);
    }
}

#[test]
fn j2d9pt_table_computes_what_j2d9pt_computes() {
    // The table variant folds back to j2d9pt's kernel when its table is folded:
    // the Thorin cases measure the same stencil as the j2d9pt ones.
    let Some(dir) = programs_dir() else { return };
    let cases = standard_suite(&dir, true);
    let plain = cases
        .iter()
        .find(|c| c.label == "j2d9pt f32 shm-none")
        .unwrap();
    let mut table = plain.clone();
    table.path = dir.join("j2d9pt_table.sdsl");
    let strip = |s: String| {
        s.lines()
            .filter(|l| !l.starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(cuda_of(plain)), strip(cuda_of(&table)));
}

#[test]
fn every_case_has_a_prediction_without_a_gpu() {
    let Some(dir) = programs_dir() else { return };
    // With the H100's driver name: the H100 SXM preset.
    for case in standard_suite(&dir, true) {
        let p = predict_case(&case, "NVIDIA H100 80GB HBM3")
            .unwrap_or_else(|e| panic!("{}: {e}", case.label));
        assert_eq!(p.device, "h100-sxm", "{}", case.label);
        assert!(p.sweep_ms > 0.0, "{}: {p:?}", case.label);
        let program = load_program(&case).unwrap();
        case_env(&program, &case).unwrap();
        if has_iteration_work(&program) {
            // The reductions and the check cost something on top of the sweep.
            assert!(p.iteration_ms > p.sweep_ms, "{}: {p:?}", case.label);
        } else {
            assert!(
                (p.iteration_ms - p.sweep_ms).abs() < 1e-12,
                "{}: {p:?}",
                case.label
            );
        }
        // Whatever ptxas does here, the prediction says where its registers came from.
        assert_eq!(
            p.note.is_none(),
            p.registers_from_ptxas,
            "{}: {p:?}",
            case.label
        );
    }
    let case = &standard_suite(&dir, true)[0];
    let p = predict_case(case, "Some Future GPU").unwrap();
    assert!(p.note.unwrap().contains("no preset for `Some Future GPU`"));
}

#[test]
fn the_predicted_column_is_what_explain_prints() {
    let Some(dir) = programs_dir() else { return };
    for label in ["j2d5pt_check f32 shm-none", "j2d5pt_check f32 default"] {
        let case = standard_suite(&dir, true)
            .into_iter()
            .find(|c| c.label == label)
            .unwrap();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_stencilc"));
        cmd.arg("explain")
            .arg(&case.path)
            .args(["--device", "h100", "--json"]);
        for (name, value) in &case.params {
            cmd.arg("--set").arg(format!("{name}={value}"));
        }
        if case.schedule_label == "shm-none" {
            cmd.args(["--shm", "none"]);
        }
        let output = cmd.output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let predicted = predict_case(&case, "NVIDIA H100 80GB HBM3").unwrap();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        let sweep = report["sweep_seconds"].as_f64().unwrap() * 1e3;
        let iteration = report["iteration_seconds"].as_f64().unwrap() * 1e3;
        assert!(
            close(sweep, predicted.sweep_ms),
            "{label}: {sweep} vs {predicted:?}"
        );
        assert!(
            close(iteration, predicted.iteration_ms),
            "{label}: {iteration} vs {predicted:?}"
        );
    }
}
