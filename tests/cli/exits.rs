//! How each subcommand ends when its stdout cannot be written: a closed pipe
//! (`stencilc ... | head -0`) ends it quietly with status 141, a full device
//! (`>/dev/full`) with a non-zero status and an error naming standard output,
//! and neither is reported as an internal error (a panic of `println!`).
//!
//! `bench` (the whole CPU suite) and `bench-gpu` (CUDA) are left out: their
//! results go to files, their progress to stderr. `compile` writes its output
//! file only.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use super::robust::closed_pipe;

const HEAT3D: &[&str] = &[
    "examples/cuda/heat3d_7pt.cu",
    "--grid",
    "2,2",
    "--block",
    "8,4",
    "--arg",
    "u=random:240",
    "--arg",
    "v=zeros:240",
    "--arg",
    "nx=10",
    "--arg",
    "ny=6",
    "--arg",
    "nz=4",
    "--arg",
    "alpha=0.1",
];

/// Every command line that prints its result on stdout, by name.
fn commands() -> Vec<(&'static str, Vec<&'static str>)> {
    let jacobi = [
        "examples/jacobi2d.sdsl",
        "--set",
        "dim0=16",
        "--set",
        "dim1=16",
    ];
    let with = |first: &[&'static str], rest: &[&'static str]| -> Vec<&'static str> {
        first.iter().chain(rest).copied().collect()
    };
    vec![
        ("help", vec!["--help"]),
        ("version", vec!["--version"]),
        ("run", with(&["run", "--backend", "interp"], &jacobi)),
        ("emit", vec!["emit", "examples/jacobi2d.sdsl"]),
        ("explain", with(&["explain"], &jacobi)),
        ("explain --json", with(&["explain", "--json"], &jacobi)),
        (
            "tune",
            with(&["tune", "--backend", "c", "--repeats", "1"], &jacobi),
        ),
        ("map", vec!["map", "examples/c/jacobi2d.c"]),
        ("check-kernel", with(&["check-kernel"], HEAT3D)),
        (
            "check-kernel --print-opencl",
            vec![
                "check-kernel",
                "examples/cuda/heat3d_7pt.cu",
                "--print-opencl",
            ],
        ),
        ("synth", with(&["synth"], HEAT3D)),
    ]
}

fn stencilc(args: &[&str], stdout: Stdio, cache: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")))
        .env("STENCILC_CACHE_DIR", cache)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("stencilc runs")
}

#[test]
fn every_subcommand_ends_with_status_141_on_a_closed_stdout() {
    let cache = tempfile::tempdir().unwrap();
    for (name, args) in commands() {
        let output = stencilc(&args, closed_pipe(), cache.path());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("internal error"), "{name}: {stderr}");
        assert_eq!(
            output.status.code(),
            Some(141),
            "{name}: {:?}: {stderr}",
            output.status
        );
    }
}

#[test]
fn every_subcommand_fails_with_a_clear_error_on_a_full_stdout() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full on this system");
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    for (name, args) in commands() {
        let full = File::options().write(true).open("/dev/full").unwrap();
        let output = stencilc(&args, Stdio::from(full), cache.path());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("internal error"), "{name}: {stderr}");
        assert!(!output.status.success(), "{name} succeeded: {stderr}");
        assert!(
            stderr.contains("cannot write to standard output"),
            "{name}: {stderr}"
        );
    }
}
