//! `stencilc compile` (source-to-source, like `sdslc -b affine-c`) on the host
//! programs of `examples/embedded/`: each output is compiled with gcc or g++ and
//! run; its printed results are checked against the C reference (Rician) or the
//! interpreter running the same regions on the same data.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use stencilc::interp;

use stencilc::exec::{Bindings, Buffer, FieldState};
use stencilc::front::Region;
use stencilc::ir::env::RunEnv;
use stencilc::ir::Value;
use stencilc::source::SourceFile;

fn embedded(name: &str) -> PathBuf {
    common::examples_dir().join("embedded").join(name)
}

/// Whether `compiler --version` runs (skipping the test, with a reason, if not).
fn compiler_available(compiler: &str) -> bool {
    let probe = Command::new(compiler)
        .arg("--version")
        .output()
        .map_err(|e| format!("`{compiler} --version`: {e}"))
        .and_then(|o| {
            o.status
                .success()
                .then_some(())
                .ok_or_else(|| format!("`{compiler} --version` failed"))
        });
    common::runtime_available("cc", probe)
}

/// `stencilc compile ARGS... -f INPUT -o OUTPUT`.
fn stencilc_compile(input: &Path, output: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .arg("compile")
        .args(args)
        .arg("-f")
        .arg(input)
        .arg("-o")
        .arg(output)
        .output()
        .expect("stencilc runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Compiles a host file into an executable; the compiler's output on failure.
fn build(compiler: &str, source: &Path, exe: &Path, defines: &[&str]) -> Result<(), String> {
    let output = Command::new(compiler)
        .args(["-O2", "-fopenmp", "-Wall", "-Wextra", "-Werror"])
        .args(defines)
        .arg(source)
        .arg("-o")
        .arg(exe)
        .arg("-lm")
        .output()
        .expect("the compiler runs");
    if output.status.success() {
        Ok(())
    } else {
        Err(text(&output.stderr))
    }
}

/// `stencilc compile` then `compiler`, then runs the program: (exit code, stdout).
fn compile_and_run(
    host: &Path,
    stencilc_args: &[&str],
    compiler: &str,
    defines: &[&str],
) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let extension = host.extension().unwrap().to_str().unwrap();
    let generated = dir.path().join(format!("out.{extension}"));
    let out = stencilc_compile(host, &generated, stencilc_args);
    assert!(out.status.success(), "stencilc: {}", text(&out.stderr));
    let exe = dir.path().join("host");
    build(compiler, &generated, &exe, defines)
        .unwrap_or_else(|e| panic!("{compiler} rejects {}:\n{e}", generated.display()));
    let run = Command::new(&exe)
        .env("OMP_NUM_THREADS", "2")
        .output()
        .unwrap();
    (run.status.code().unwrap_or(-1), text(&run.stdout))
}

/// The number after `label` on a line of `stdout`.
fn printed(stdout: &str, label: &str) -> f64 {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no `{label}` line in:\n{stdout}"))
        .trim()
        .parse()
        .unwrap()
}

fn regions(path: &Path) -> Vec<Region> {
    let text = std::fs::read_to_string(path).unwrap();
    stencilc::front::parse_regions(SourceFile::new(path.display().to_string(), text))
        .and_then(stencilc::analysis::checked_regions)
        .unwrap_or_else(|d| panic!("{d}"))
}

/// Runs a region on the interpreter, every level of field `f` starting from
/// `data[f]` (as the host wrapper starts them); returns field `result`'s newest level.
fn interpret(region: &Region, params: Vec<Value>, data: Vec<Buffer>, result: usize) -> Buffer {
    let program = &region.program;
    let env = RunEnv::new(program, &Bindings { params }).unwrap();
    let mut state = FieldState {
        fields: program
            .fields
            .iter()
            .zip(data)
            .map(|(f, d)| vec![d; f.levels()])
            .collect(),
    };
    interp::run(program, &env, &mut state).unwrap();
    state.newest(program, result).clone()
}

/// The host programs' checksum: a `double` sum in index order, printed `%.6f`.
fn checksum(buffer: &Buffer) -> String {
    format!("{:.6}", buffer.to_f64().iter().sum::<f64>())
}

#[test]
fn figure_4_1_jacobi_host_prints_the_interpreters_checksum() {
    if !compiler_available("gcc") {
        return;
    }
    let host = embedded("jacobi2d_host.c");
    let (code, stdout) = compile_and_run(&host, &["-b", "affine-c"], "gcc", &["-DSIZE=64"]);
    assert_eq!(code, 0, "{stdout}");

    let regions = regions(&host);
    let n = 64usize;
    let a: Vec<f32> = (0..n * n)
        .map(|k| ((k / n * 7 + k % n * 13) % 17) as f32 / 17.0)
        .collect();
    let params = vec![Value::Int(64), Value::Int(64), Value::Float(0.2)];
    let expected = interpret(&regions[0], params, vec![Buffer::Float(a)], 0);
    assert_eq!(
        stdout.trim(),
        format!("checksum {}", checksum(&expected)),
        "the C host and the interpreter disagree"
    );
}

#[test]
fn rician_drop_in_matches_the_c_reference_of_figure_7_1() {
    if !compiler_available("gcc") {
        return;
    }
    let host = embedded("rician3d_host.c");
    let (code, stdout) = compile_and_run(&host, &[], "gcc", &["-DDIM=24"]);
    assert_eq!(code, 0, "{stdout}");
    let difference = printed(&stdout, "max abs difference");
    assert!(difference <= 1e-12, "{stdout}");
    assert!(
        stdout.contains(" REF: ") && stdout.contains("SDSL: "),
        "{stdout}"
    );
}

/// Figure 7.7 as printed multiplies only the first `G` of the denominator by DT:
/// it must compile and run, and the driver must notice that it computes
/// something other than the reference.
#[test]
fn rician_with_the_figures_unparenthesised_denominator_differs_from_the_reference() {
    if !compiler_available("gcc") {
        return;
    }
    let original = std::fs::read_to_string(embedded("rician3d_host.c")).unwrap();
    let parenthesised = "(1.0 + DT*([0]g[ 0][ 1][ 0] +";
    assert!(original.contains(parenthesised));
    let verbatim = original
        .replace(parenthesised, "(1.0 + DT*[0]g[ 0][ 1][ 0] +")
        .replace(
            "                gamma));\n    }",
            "                gamma);\n    }",
        );
    assert_ne!(verbatim, original);
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("rician_verbatim.c");
    std::fs::write(&host, verbatim).unwrap();

    let (code, stdout) = compile_and_run(&host, &[], "gcc", &["-DDIM=24"]);
    assert_eq!(
        code, 1,
        "the driver should report the difference:\n{stdout}"
    );
    assert!(printed(&stdout, "max abs difference") > 1e-6, "{stdout}");
}

#[test]
fn cpp_host_with_two_regions_and_c_linkage() {
    if !compiler_available("g++") {
        return;
    }
    let host = embedded("blur_then_heat.cpp");
    let dir = tempfile::tempdir().unwrap();
    let generated = dir.path().join("out.cpp");
    let out = stencilc_compile(&host, &generated, &["-x", "-v"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("sets sdsl_return_0") && stderr.contains("sets sdsl_return_1"));
    let cpp = std::fs::read_to_string(&generated).unwrap();
    assert_eq!(cpp.matches("extern \"C\"").count(), 2, "one per wrapper");
    assert!(cpp.contains("int sdsl_return_0 = blur_then_heat_region0_sdsl("));
    assert!(cpp.contains("int sdsl_return_1 = blur_then_heat_region1_sdsl("));

    let (code, stdout) = compile_and_run(&host, &["-x"], "g++", &[]);
    assert_eq!(code, 0, "{stdout}");

    let regions = regions(&host);
    assert_eq!(regions.len(), 2);
    let (width, height) = (40, 30);
    let pixels: Vec<f32> = (0..width * height)
        .map(|i| ((i * 37) % 101) as f32 / 100.0)
        .collect();
    let size = vec![Value::Int(width as i32), Value::Int(height as i32)];
    let start = vec![
        Buffer::Float(pixels),
        Buffer::Float(vec![0.0; width * height]),
    ];
    let blurred = interpret(&regions[0], size.clone(), start, 1);
    let mut heat_params = size;
    heat_params.push(Value::Double(0.2));
    let heat = interpret(
        &regions[1],
        heat_params,
        vec![Buffer::Double(blurred.to_f64())],
        0,
    );
    assert_eq!(
        stdout,
        format!("blur {}\nheat {}\n", checksum(&blurred), checksum(&heat))
    );
}

/// A host without a variable the region binds: stencilc warns (naming the
/// variable, its type and the region's line) and still writes the file; the C
/// compiler then rejects the call at the host's `#pragma sdsl begin` line.
#[test]
fn host_lacking_a_parameter_is_named_by_stencilc_and_the_c_compiler() {
    let original = std::fs::read_to_string(embedded("jacobi2d_host.c")).unwrap();
    let without_c1 = original.replace("    float c1 = 0.2f;\n", "");
    assert_ne!(without_c1, original);
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("no_c1.c");
    std::fs::write(&host, &without_c1).unwrap();
    let generated = dir.path().join("no_c1.out.c");

    let out = stencilc_compile(&host, &generated, &[]);
    assert!(out.status.success());
    let stderr = text(&out.stderr);
    let pragma_line = without_c1
        .lines()
        .position(|l| l.contains("#pragma sdsl begin"))
        .unwrap()
        + 1;
    assert!(
        stderr.contains(&format!("no_c1.c:{pragma_line}: region 0 binds `c1`"))
            && stderr.contains("declare `float c1` there"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "only c1 is missing: {stderr}");

    if !compiler_available("gcc") {
        return;
    }
    let error = build("gcc", &generated, &dir.path().join("exe"), &[]).unwrap_err();
    assert!(
        error.contains(&format!("no_c1.c:{pragma_line}:")) && error.contains("c1"),
        "{error}"
    );
}

#[test]
fn a_host_without_regions_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("plain.c");
    std::fs::write(&host, "int main(void) { return 0; }\n").unwrap();
    let out = stencilc_compile(&host, &dir.path().join("out.c"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("no SDSL region"),
        "{}",
        text(&out.stderr)
    );
    assert!(!dir.path().join("out.c").exists());
}

#[test]
fn only_sdslcs_code_generators_are_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let out = stencilc_compile(
        &embedded("jacobi2d_host.c"),
        &dir.path().join("out.c"),
        &["-b", "opencl"],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("affine-c") && stderr.contains("overtile"),
        "{stderr}"
    );
}

/// A host whose region writes `[1]phi[0][0][Nx-1]` on the subset's last
/// column, `Nx-1`: inside the grid only when `Nx` is 1 (the first argument), so
/// only the generated code can tell, from the actual value.
const PARAMETER_DEPENDENT_WRITE: &str = r#"#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int Nx = argc > 1 ? atoi(argv[1]) : 4;
    int Ny = argc > 2 ? atoi(argv[2]) : 3;
    int Nz = 2;
    long long count = (long long)Nx * Ny * Nz;
    /* A grid too large to allocate is passed as NULL: the region must refuse it. */
    double *phi = count <= 1000 ? (double *)malloc((size_t)count * sizeof(double) + 1) : NULL;
    for (long long i = 0; phi && i < count; i++) phi[i] = (double)i;
    #pragma sdsl begin
    int Nx;
    int Ny;
    int Nz;
    grid g[Nz][Ny][Nx];
    double griddata phi on g at 0,1;
    iterate 1 {
        stencil wrap {
            [0:Nz-1][0:Ny-1][Nx-1:Nx-1] : [1]phi[0][0][Nx-1] = [0]phi[0][0][0] + 1.0;
        }
    }
    #pragma sdsl end
    double sum = 0.0;
    for (long long i = 0; phi && i < count; i++) sum += phi[i];
    printf("status %d sum %g\n", sdsl_return_0, sum);
    free(phi);
    return 0;
}
"#;

/// Whether gcc links a program built with AddressSanitizer (skipping, with a
/// reason, if not).
fn asan_available() -> bool {
    if !compiler_available("gcc") {
        return false;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("probe.c");
    std::fs::write(&source, "int main(void) { return 0; }\n").unwrap();
    let probe = Command::new("gcc")
        .args(["-fsanitize=address", "-o"])
        .arg(dir.path().join("probe"))
        .arg(&source)
        .output()
        .map_err(|e| format!("gcc -fsanitize=address: {e}"))
        .and_then(|o| {
            o.status
                .success()
                .then_some(())
                .ok_or_else(|| format!("gcc -fsanitize=address: {}", text(&o.stderr)))
        });
    common::runtime_available("cc", probe)
}

#[test]
fn a_write_outside_the_grid_for_the_given_sizes_returns_4_and_writes_nothing_under_asan() {
    if !asan_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("host.c");
    std::fs::write(&host, PARAMETER_DEPENDENT_WRITE).unwrap();
    let generated = dir.path().join("host.out.c");
    let out = stencilc_compile(&host, &generated, &[]);
    assert!(out.status.success(), "stencilc: {}", text(&out.stderr));
    let exe = dir.path().join("host");
    let built = Command::new("gcc")
        .args(["-g", "-fsanitize=address", "-fopenmp", "-Wall", "-Werror"])
        .arg(&generated)
        .arg("-o")
        .arg(&exe)
        .arg("-lm")
        .output()
        .unwrap();
    assert!(built.status.success(), "gcc: {}", text(&built.stderr));
    let run = |args: &[&str]| {
        Command::new(&exe)
            .args(args)
            .env("OMP_NUM_THREADS", "2")
            .output()
            .unwrap()
    };

    // Nx = 4: the write would land at column 6 of 4. The check refuses before
    // computing: status 4, one line on stderr, the host array as it was
    // (0 + 1 + ... + 23 = 276), and no report from AddressSanitizer.
    let outside = run(&["4"]);
    let stderr = text(&outside.stderr);
    assert_eq!(text(&outside.stdout), "status 4 sum 276\n", "{stderr}");
    assert!(outside.status.success(), "{stderr}");
    assert!(!stderr.contains("AddressSanitizer"), "{stderr}");
    assert!(
        stderr.contains(
            "`[1]phi[0][0][Nx-1]` writes past the last column of `phi` (index 6; the last is 3)"
        ),
        "{stderr}"
    );

    // Nx = 1: inside the grid; every point gets its old value plus 1.
    let inside = run(&["1"]);
    assert_eq!(
        text(&inside.stdout),
        "status 0 sum 21\n",
        "{}",
        text(&inside.stderr)
    );

    // A size below 1, and 2^30 x 2^30 x 2 doubles (2^64 bytes, past what a
    // `long` index reaches): status 5 and a message, before any allocation.
    for args in [&["0"][..], &["1073741824", "1073741824"][..]] {
        let refused = run(args);
        let stderr = text(&refused.stderr);
        assert_eq!(
            text(&refused.stdout),
            "status 5 sum 0\n",
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains("is empty or too large to index with long"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_write_outside_the_grid_for_every_size_is_refused_by_compile_and_emit() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("host.c");
    // OverTile segi3d's shape: the subset already reaches column Nx-1, and the
    // write adds Nx-1 more: at least one column past the grid whenever it runs.
    let always_outside = PARAMETER_DEPENDENT_WRITE.replace("[Nx-1:Nx-1]", "[1:Nx-1]");
    std::fs::write(&host, &always_outside).unwrap();
    let generated = dir.path().join("host.out.c");
    let out = stencilc_compile(&host, &generated, &[]);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "compile accepted it:\n{stderr}");
    assert!(!generated.exists(), "compile wrote {}", generated.display());
    let located = "host.c:20:53";
    for expected in [
        located,
        "writes column (Nx-1)+(Nx-1), at least 1 past the last column (Nx-1)",
        "for every value of the parameters for which this part runs",
        "help: narrow this part's subset or change the offset",
    ] {
        assert!(stderr.contains(expected), "no `{expected}` in:\n{stderr}");
    }
    for target in ["c", "opencl", "cuda"] {
        let emitted = Command::new(env!("CARGO_BIN_EXE_stencilc"))
            .args(["emit", "--target", target])
            .arg(&host)
            .output()
            .unwrap();
        let stderr = text(&emitted.stderr);
        assert!(
            !emitted.status.success(),
            "emit --target {target} accepted it"
        );
        assert!(
            emitted.stdout.is_empty(),
            "emit --target {target} printed code"
        );
        assert!(
            stderr.contains(located) && stderr.contains("^"),
            "{target}: {stderr}"
        );
    }
}
