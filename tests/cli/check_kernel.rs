//! `stencilc check-kernel`: a clean kernel, a racy one, missing arguments.

use std::process::{Command, Output};

fn check(file: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "check-kernel".to_string(),
        format!("examples/cuda/{file}"),
        "-D".into(),
        "BLOCK_X=4".into(),
        "-D".into(),
        "BLOCK_Y=4".into(),
        "--grid".into(),
        "2,2".into(),
        "--block".into(),
        "4,4".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("stencilc runs")
}

const DIFFUSION_ARGS: &[&str] = &[
    "--arg",
    "in=random:128",
    "--arg",
    "out=zeros:128",
    "--arg",
    "nx=8",
    "--arg",
    "ny=8",
    "--arg",
    "nz=2",
    "--arg",
    "ce=0.1",
    "--arg",
    "cw=0.1",
    "--arg",
    "cn=0.1",
    "--arg",
    "cs=0.1",
    "--arg",
    "ct=0.1",
    "--arg",
    "cb=0.1",
    "--arg",
    "cc=0.4",
];

#[test]
fn check_kernel_reports_races_with_their_line() {
    let clean = check("diffusion.cu", DIFFUSION_ARGS);
    assert!(
        clean.status.success(),
        "{}",
        String::from_utf8_lossy(&clean.stderr)
    );
    assert!(String::from_utf8_lossy(&clean.stdout).contains("no race"));

    let racy = check("diffusion_nosync.cu", DIFFUSION_ARGS);
    assert_eq!(racy.status.code(), Some(1));
    let err = String::from_utf8_lossy(&racy.stderr);
    assert!(err.contains("race on shared `sb`"), "{err}");
    assert!(err.contains("diffusion_nosync.cu:"), "{err}");

    let missing = check("diffusion.cu", &["--arg", "in=random:128"]);
    assert_eq!(missing.status.code(), Some(1));
    let err = String::from_utf8_lossy(&missing.stderr);
    assert!(err.contains("argument `out`"), "{err}");
}

#[test]
fn check_kernel_prints_opencl_and_compares_with_opencl() {
    let printed = check("diffusion.cu", &["--print-opencl"]);
    assert!(printed.status.success());
    let text = String::from_utf8_lossy(&printed.stdout);
    assert!(text.contains("__kernel void diffusion_kernel("), "{text}");
    assert!(text.contains("#define BLOCK_X 4"), "{text}");
    assert!(
        !text.contains("__opt__") && !text.contains("profile("),
        "{text}"
    );

    let no_launch = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(["check-kernel", "examples/cuda/heat3d_7pt.cu"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("stencilc runs");
    assert_eq!(no_launch.status.code(), Some(1));
    let err = String::from_utf8_lossy(&no_launch.stderr);
    assert!(err.contains("`--grid` is missing"), "{err}");

    let mut args = DIFFUSION_ARGS.to_vec();
    args.extend(["--on", "opencl"]);
    let both = check("diffusion.cu", &args);
    let out = String::from_utf8_lossy(&both.stdout);
    let err = String::from_utf8_lossy(&both.stderr);
    if err.contains("OpenCL unavailable") {
        eprintln!("skipping the OpenCL run: {err}");
        return;
    }
    assert!(both.status.success(), "{err}");
    assert!(
        out.contains("on OpenCL agrees with the emulator on all 256 array elements"),
        "{out}"
    );
}

#[test]
fn check_kernel_runs_one_kernel_of_a_whole_file() {
    let run = |extra: &[&str]| {
        let mut args = vec!["check-kernel", "tests/data/kanicuda/himeno_whole.cu"];
        args.extend(extra);
        Command::new(env!("CARGO_BIN_EXE_stencilc"))
            .args(&args)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("stencilc runs")
    };
    // The marked kernel by default, among includes, a typedef and host code.
    let marked = run(&[
        "--grid",
        "2,2",
        "--block",
        "4,4",
        "--arg",
        "p=random:128",
        "--arg",
        "wrk2=zeros:128",
        "--arg",
        "gosa=zeros:128",
        "--arg",
        "bnd=random:128",
        "--arg",
        "nx=8",
        "--arg",
        "ny=8",
        "--arg",
        "nz=2",
        "--arg",
        "a0=1",
        "--arg",
        "a1=1",
        "--arg",
        "a2=1",
        "--arg",
        "a3=1",
        "--arg",
        "b0=1",
        "--arg",
        "c0=1",
        "--arg",
        "omega=1",
    ]);
    let stdout = String::from_utf8_lossy(&marked.stdout);
    assert!(
        marked.status.success()
            && stdout.contains("kernel `himeno_jacobi`")
            && stdout.contains("no race"),
        "{stdout}{}",
        String::from_utf8_lossy(&marked.stderr)
    );
    // The other kernel by name, with a bound the emulator checks.
    let other = run(&[
        "--kernel",
        "set_bnd",
        "--grid",
        "1,1",
        "--block",
        "32,1",
        "--arg",
        "bnd=zeros:16",
        "--arg",
        "n=32",
    ]);
    let stderr = String::from_utf8_lossy(&other.stderr);
    assert!(
        !other.status.success() && stderr.contains("himeno_whole.cu:23:"),
        "{stderr}"
    );
}
