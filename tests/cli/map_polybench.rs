//! `stencilc map` on a project as PolyBench/C ships one (written here in its
//! form, `tests/data/map/polybench/`): a header found with `-I`, sizes set
//! with `-D`, arrays allocated by `polybench_alloc_data` in another file and
//! passed dereferenced to a kernel that declares them with their extents,
//! `restrict` from a macro. Each construct is checked against the original's
//! checksum where it runs.

use std::path::{Path, PathBuf};

use super::map::{build_and_run, cc_available, map, opencl_available, opencl_headers_available};
use super::map::{stderr, stdout};

fn project() -> (tempfile::TempDir, PathBuf) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/map/polybench");
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().to_path_buf();
    std::fs::create_dir_all(to.join("utilities")).unwrap();
    for f in [
        "jacobi.c",
        "fdtd.c",
        "adi.c",
        "alloc.c",
        "utilities/mini_polybench.h",
    ] {
        std::fs::copy(data.join(f), to.join(f)).unwrap();
    }
    (dir, to)
}

#[test]
fn the_header_is_found_with_dash_i() {
    let (_keep, dir) = project();
    let out = map(&dir, &["jacobi.c", "--report"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("mini_polybench.h"),
        "{}",
        stderr(&out)
    );
    let out = map(&dir, &["jacobi.c", "-I", "utilities", "--report"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn distinct_allocations_clear_the_aliasing_doubt() {
    let (_keep, dir) = project();
    let out = map(
        &dir,
        &[
            "jacobi.c",
            "-I",
            "utilities",
            "--target",
            "opencl",
            "--report",
        ],
    );
    let report = stdout(&out);
    assert!(
        report.contains("no aliasing of `A` and `B`: every call of `kernel_jacobi_2d` passes distinct objects (`A` from `polybench_alloc_data` in `main`, `B` from `polybench_alloc_data` in `main`)"),
        "{report}"
    );
    assert!(
        report.contains("lift: lifted into an ir::Program: 2 stencil(s)"),
        "{report}"
    );
    assert!(!report.contains("possible aliasing"), "{report}");
    // Passing one allocation twice brings the doubt back, with the fix named.
    let text = std::fs::read_to_string(dir.join("jacobi.c")).unwrap();
    std::fs::write(
        dir.join("same.c"),
        text.replace(
            "kernel_jacobi_2d(tsteps, n, ARRAY(A), ARRAY(B));",
            "kernel_jacobi_2d(tsteps, n, ARRAY(A), ARRAY(A));",
        ),
    )
    .unwrap();
    let out = map(&dir, &["same.c", "-I", "utilities", "--report"]);
    let report = stdout(&out);
    assert!(
        report.contains("possible aliasing of `A` and `B`"),
        "{report}"
    );
    assert!(report.contains("declare them `restrict`"), "{report}");
}

#[test]
fn polybench_forms_run_on_opencl_as_the_originals() {
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let (_keep, dir) = project();
    let include = dir.join("utilities");
    let alloc = dir.join("alloc.c");
    let (inc, all) = (include.to_str().unwrap(), alloc.to_str().unwrap());
    for (name, defines) in [
        ("jacobi", vec![]),
        ("jacobi", vec!["-D", "N=41", "-D", "TSTEPS=3"]),
        ("fdtd", vec![]),
        ("adi", vec![]),
    ] {
        // `-D N=41` for map is `-DN=41` for cc.
        let mut cc: Vec<String> = vec![
            "-ffp-contract=off".into(),
            "-I".into(),
            inc.into(),
            all.into(),
        ];
        cc.extend(
            defines
                .iter()
                .filter(|d| **d != "-D")
                .map(|d| format!("-D{d}")),
        );
        let cc_args = |extra: &[&str]| -> Vec<String> {
            cc.iter()
                .cloned()
                .chain(extra.iter().map(|e| e.to_string()))
                .collect()
        };
        let plain = cc_args(&[]);
        let plain: Vec<&str> = plain.iter().map(String::as_str).collect();
        let want = build_and_run(&dir.join(format!("{name}.c")), &dir.join(name), &plain);
        let mapped = dir.join(format!("{name}_cl.c"));
        let mut args = vec![
            format!("{name}.c"),
            "-I".into(),
            "utilities".into(),
            "--target".into(),
            "opencl".into(),
            "--require-device".into(),
            "-o".into(),
            mapped.display().to_string(),
        ];
        args.extend(defines.iter().map(|d| d.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = map(&dir, &args);
        assert!(out.status.success(), "{name} {defines:?}: {}", stderr(&out));
        let with_cl = cc_args(&["-lOpenCL"]);
        let with_cl: Vec<&str> = with_cl.iter().map(String::as_str).collect();
        let got = build_and_run(&mapped, &dir.join(format!("{name}_cl")), &with_cl);
        assert_eq!(got, want, "{name} {defines:?}");
    }
}

#[test]
fn array_parameters_with_extents_get_direct_kernels() {
    let (_keep, dir) = project();
    let out = map(
        &dir,
        &[
            "fdtd.c",
            "-I",
            "utilities",
            "--target",
            "opencl",
            "-o",
            "fdtd_cl.c",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let program = std::fs::read_to_string(dir.join("fdtd_cl.c")).unwrap();
    assert!(
        program.contains("4 nest(s) run as direct OpenCL kernels"),
        "{}",
        &program[..400]
    );
    // The host copies the declared extents' bytes, not a pointer's.
    assert!(
        program.contains("stencilc_cl_to_device(ex, (size_t)33 * 41 * sizeof(double))"),
        "{program}"
    );
    assert!(!program.contains("sizeof(ex)"), "{program}");
}

#[test]
fn restrict_from_a_macro_compiles_as_cuda_host_code() {
    let (_keep, dir) = project();
    let cu = dir.join("jacobi.cu");
    let out = map(
        &dir,
        &[
            "jacobi.c",
            "-I",
            "utilities",
            "-D",
            "MINI_USE_RESTRICT",
            "--target",
            "cuda",
            "-o",
            "jacobi.cu",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let output = std::fs::read_to_string(&cu).unwrap();
    assert!(output.contains("#define restrict\n"), "{}", &output[..800]);
    let Ok(mut includes) = super::map_lift::cuda_include_dirs() else {
        let why = super::map_lift::cuda_include_dirs().unwrap_err();
        crate::common::runtime_available("cudart", Err(why));
        return;
    };
    includes.push(dir.join("utilities"));
    super::map_lift::compile_host_part("jacobi (restrict)", &cu, &includes);
}

#[test]
fn compile_commands_give_the_flags() {
    let (_keep, dir) = project();
    let db = serde_json::json!([{
        "directory": dir,
        "file": "jacobi.c",
        "command": "cc -O2 -Iutilities -DMINI_USE_RESTRICT -DN=17 -c jacobi.c"
    }]);
    std::fs::write(dir.join("compile_commands.json"), db.to_string()).unwrap();
    let out = map(
        &dir,
        &[
            "jacobi.c",
            "--compile-commands",
            "compile_commands.json",
            "--report",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    // `restrict` (from the database's -D) clears the doubt on its own.
    let report = stdout(&out);
    assert!(
        report.contains("lift: lifted into an ir::Program"),
        "{report}"
    );
    assert!(!report.contains("no aliasing of"), "{report}");
    let out = map(
        &dir,
        &["fdtd.c", "--compile-commands", "compile_commands.json"],
    );
    assert!(
        stderr(&out).contains("has no entry for `fdtd.c`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn profile_links_the_project_and_passes_arguments() {
    if !cc_available() {
        return;
    }
    let (_keep, dir) = project();
    let out = map(&dir, &["jacobi.c", "-I", "utilities", "--profile"]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("did not compile") && err.contains("--profile-with"),
        "{err}"
    );
    let out = map(
        &dir,
        &[
            "jacobi.c",
            "-I",
            "utilities",
            "--profile",
            "--profile-with",
            "alloc.c",
            "--profile-args",
            "4",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let profile = stdout(&out);
    assert!(profile.contains("kernel_jacobi_2d:"), "{profile}");
    // A program that fails says which arguments it ran with.
    let text = std::fs::read_to_string(dir.join("jacobi.c")).unwrap();
    std::fs::write(
        dir.join("failing.c"),
        text.replace("  return 0;\n}", "  return argc > 2;\n}"),
    )
    .unwrap();
    let out = map(
        &dir,
        &[
            "failing.c",
            "-I",
            "utilities",
            "--profile",
            "--profile-with",
            "alloc.c",
            "--profile-args",
            "4 'two words'",
        ],
    );
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("with the arguments `4 'two words'`"), "{err}");
}

#[test]
fn the_standard_is_passed_to_the_preprocessor() {
    let (_keep, dir) = project();
    let out = map(
        &dir,
        &["jacobi.c", "-I", "utilities", "--std", "c11", "--report"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let out = map(
        &dir,
        &["jacobi.c", "-I", "utilities", "--std", "no-such-standard"],
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no-such-standard"),
        "{}",
        stderr(&out)
    );
}

/// adi's back substitution runs downwards (`for (j = n - 2; j >= 1; j--)`):
/// the loop is normalised (the same iterations, in its order), so the sweep
/// around it maps, on OpenMP as in a kernel.
#[test]
fn loops_running_downwards_are_normalised() {
    let (_keep, dir) = project();
    let out = map(&dir, &["adi.c", "-I", "utilities", "--report"]);
    let report = stdout(&out);
    assert!(
        report.contains("j (line 41): (n - 2) down to 1; sequential"),
        "{report}"
    );
    assert!(
        report.contains("nest kernel_adi:32 (lines 32-44): stencil, mapped (parallel loops: i)"),
        "{report}"
    );
    assert!(!report.contains("cannot be normalised"), "{report}");
    let out = map(
        &dir,
        &[
            "adi.c",
            "-I",
            "utilities",
            "--target",
            "opencl",
            "-o",
            "adi_cl.c",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let program = std::fs::read_to_string(dir.join("adi_cl.c")).unwrap();
    assert!(
        program.contains("for (j = (n - 2); j >= 1; j--)"),
        "{program}"
    );
    if cc_available() {
        let inc = dir.join("utilities");
        let alloc = dir.join("alloc.c");
        let flags: Vec<&str> = vec![
            "-ffp-contract=off",
            "-I",
            inc.to_str().unwrap(),
            alloc.to_str().unwrap(),
        ];
        let want = build_and_run(&dir.join("adi.c"), &dir.join("adi"), &flags);
        let out = map(&dir, &["adi.c", "-I", "utilities", "-o", "adi_omp.c"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let mut omp = flags.clone();
        omp.push("-fopenmp");
        let got = build_and_run(&dir.join("adi_omp.c"), &dir.join("adi_omp"), &omp);
        assert_eq!(got, want, "OpenMP");
    }
    // Downwards by more than one is named, not guessed.
    let text = std::fs::read_to_string(dir.join("adi.c")).unwrap();
    std::fs::write(
        dir.join("by2.c"),
        text.replace("j >= 1; j--)", "j >= 1; j -= 2)"),
    )
    .unwrap();
    let out = map(&dir, &["by2.c", "-I", "utilities", "--report"]);
    assert!(
        stdout(&out).contains("it runs downwards by 2"),
        "{}",
        stdout(&out)
    );
}

/// PolyBench with `POLYBENCH_USE_C99_PROTO` declares VLA parameters
/// (`double ex[nx][ny]`): their kernels are passed the extents, the host
/// copies `nx * ny` elements, and the program prints the original's checksum.
#[test]
fn vla_parameters_get_direct_kernels_with_their_extents() {
    let (_keep, dir) = project();
    let text = std::fs::read_to_string(dir.join("fdtd.c")).unwrap();
    let vla = text.replace(
        "double ex[NX][NY], double ey[NX][NY], double hz[NX][NY], double _fict_[TMAX])",
        "double ex[nx][ny], double ey[nx][ny], double hz[nx][ny], double _fict_[tmax])",
    );
    assert_eq!(
        vla.matches("double ex[nx][ny]").count(),
        2,
        "both functions take VLAs"
    );
    std::fs::write(dir.join("fdtd_vla.c"), vla).unwrap();
    let out = map(
        &dir,
        &[
            "fdtd_vla.c",
            "-I",
            "utilities",
            "--target",
            "opencl",
            "--require-device",
            "-o",
            "fdtd_vla_cl.c",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let program = std::fs::read_to_string(dir.join("fdtd_vla_cl.c")).unwrap();
    assert!(
        program.contains("4 nest(s) run as direct OpenCL kernels"),
        "{}",
        &program[..300]
    );
    assert!(
        program.contains("stencilc_cl_to_device(ex, (size_t)(nx) * (ny) * sizeof(double))"),
        "{program}"
    );
    if !cc_available() || !opencl_available() || !opencl_headers_available() {
        return;
    }
    let (inc, alloc) = (dir.join("utilities"), dir.join("alloc.c"));
    let flags = [
        "-ffp-contract=off",
        "-I",
        inc.to_str().unwrap(),
        alloc.to_str().unwrap(),
    ];
    let want = build_and_run(&dir.join("fdtd_vla.c"), &dir.join("fdtd_vla"), &flags);
    let mut with_cl = flags.to_vec();
    with_cl.push("-lOpenCL");
    let got = build_and_run(
        &dir.join("fdtd_vla_cl.c"),
        &dir.join("fdtd_vla_cl"),
        &with_cl,
    );
    assert_eq!(got, want);
}
