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
