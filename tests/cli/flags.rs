//! `--fma` and `--index64` on the command line: listed in the help of the
//! subcommands whose output they change, and doing what they say end to end.

use std::path::PathBuf;
use std::process::{Command, Output};

fn stencilc(args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "stencilc {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn the_help_lists_fma_and_index64_where_they_change_what_is_built() {
    for command in ["run", "emit", "bench", "bench-gpu", "compile"] {
        let help = stdout(&stencilc(&[command, "--help"]));
        assert!(help.contains("--fma"), "{command}:\n{help}");
        assert!(help.contains("last bits"), "{command}:\n{help}");
    }
    for command in ["run", "emit", "explain"] {
        let help = stdout(&stencilc(&[command, "--help"]));
        assert!(help.contains("--index64"), "{command}:\n{help}");
    }
}

#[test]
fn emit_with_the_sizes_of_a_large_grid_prints_64_bit_indices() {
    let large = stdout(&stencilc(&[
        "emit",
        "bench/programs/star3d1r.sdsl",
        "--target",
        "cuda",
        "--set",
        "n=1291",
        "--set",
        "steps=1",
    ]));
    assert!(
        large.contains("a_t1[((long long)iz * size_y + iy) * size_x + ix]"),
        "{large}"
    );
    let small = stdout(&stencilc(&[
        "emit",
        "bench/programs/star3d1r.sdsl",
        "--target",
        "cuda",
        "--set",
        "n=1290",
        "--set",
        "steps=1",
    ]));
    assert!(
        small.contains("a_t1[(iz * size_y + iy) * size_x + ix]"),
        "{small}"
    );
    let forced = stdout(&stencilc(&[
        "emit",
        "bench/programs/star3d1r.sdsl",
        "--target",
        "opencl",
        "--index64",
        "--fma",
    ]));
    assert!(
        forced.contains("[((long)iz * size_y + iy) * size_x + ix]"),
        "{forced}"
    );
    assert!(forced.contains("#pragma OPENCL FP_CONTRACT ON"), "{forced}");
    let c = stdout(&stencilc(&[
        "emit",
        "bench/programs/star3d1r.sdsl",
        "--fma",
    ]));
    assert!(c.starts_with("/* --fma:") && c.contains("last bits"), "{c}");
}

#[test]
fn run_verify_with_fma_on_the_c_back_end_allows_the_float_tolerance() {
    if stencilc::exec::native::Compiler::from_env().is_err() {
        eprintln!("skipped: no C compiler");
        return;
    }
    let args = |fma: bool| {
        let mut list = vec![
            "run",
            "bench/programs/j2d5pt.sdsl",
            "--backend",
            "c",
            "--set",
            "n=40",
            "--set",
            "steps=3",
            "--verify",
            "--json",
        ];
        if fma {
            list.push("--fma");
        }
        list.into_iter().map(String::from).collect::<Vec<_>>()
    };
    for fma in [false, true] {
        let list = args(fma);
        let refs: Vec<&str> = list.iter().map(String::as_str).collect();
        let summary: serde_json::Value = serde_json::from_slice(&stencilc(&refs).stdout).unwrap();
        let field = &summary["verify"]["fields"]["a"];
        assert_eq!(field["passed"], true, "{summary}");
        let allowed = field["allowed_abs_diff"].as_f64().unwrap();
        assert_eq!(allowed > 0.0, fma, "{summary}");
    }
}
