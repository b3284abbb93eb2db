//! `stencilc synth`: the slides' diffusion kernel and the other examples
//! synthesized, rewritten, verified race-free in the emulator (through
//! `check-kernel` on the output) and compiled by NVRTC; `--json`; each bad
//! input's message; the rewritten diffusion kernel as a snapshot.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use stencilc::exec::cuda::nvrtc;

use crate::common;

fn stencilc(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("stencilc runs")
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

struct Example {
    file: &'static str,
    defines: &'static [&'static str],
    launch: &'static [&'static str],
    args: &'static [&'static str],
}

const DIFFUSION: Example = Example {
    file: "examples/cuda/diffusion.cu",
    defines: &["BLOCK_X=4", "BLOCK_Y=4"],
    launch: &["--grid", "2,2", "--block", "4,4"],
    args: &[
        "in=random:128",
        "out=zeros:128",
        "nx=8",
        "ny=8",
        "nz=2",
        "ce=0.1",
        "cw=0.1",
        "cn=0.1",
        "cs=0.1",
        "ct=0.1",
        "cb=0.1",
        "cc=0.4",
    ],
};

const JACOBI: Example = Example {
    file: "examples/cuda/jacobi2d_tile.cu",
    defines: &["TILE_X=8", "TILE_Y=4"],
    launch: &["--grid", "2,2", "--block", "8,4"],
    args: &["a=random:78", "b=zeros:78", "nx=13", "ny=6"],
};

const HEAT: Example = Example {
    file: "examples/cuda/heat3d_7pt.cu",
    defines: &[],
    launch: &["--grid", "2,2", "--block", "8,4"],
    args: &[
        "u=random:240",
        "v=zeros:240",
        "nx=10",
        "ny=6",
        "nz=4",
        "alpha=0.1",
    ],
};

impl Example {
    /// The flags after the file: macros, launch, arguments.
    fn flags(&self) -> Vec<String> {
        let mut out = Vec::new();
        for d in self.defines {
            out.push("-D".to_string());
            out.push(d.to_string());
        }
        out.extend(strings(self.launch));
        for a in self.args {
            out.push("--arg".to_string());
            out.push(a.to_string());
        }
        out
    }

    fn synth(&self, file: &str, extra: &[String]) -> Output {
        let mut args = vec!["synth".to_string(), file.to_string()];
        args.extend(self.flags());
        args.extend(extra.iter().cloned());
        stencilc(&args)
    }
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stencilc-synth-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Runs the example's synthesis into a file with `--json`; checks that the
/// output runs race-free in the emulator and compiles with NVRTC; returns
/// the rewritten text and the JSON.
fn synthesize(example: &Example, name: &str) -> (String, serde_json::Value) {
    let out = temp_dir(name).join("out.cu");
    let run = example.synth(
        example.file,
        &strings(&["--json", "--check", "-o", out.to_str().unwrap()]),
    );
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON on stdout");
    let text = std::fs::read_to_string(&out).expect("the output is written");
    assert!(
        !text.contains("__opt__") && !text.contains("profile("),
        "{text}"
    );
    // The emulator runs the output race-free on the given launch.
    let mut args = vec!["check-kernel".to_string(), out.display().to_string()];
    args.extend(example.flags());
    let check = stencilc(&args);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    assert!(String::from_utf8_lossy(&check.stdout).contains("no race"));
    compile_with_nvrtc(&text, example.defines);
    (text, json)
}

fn compile_with_nvrtc(text: &str, defines: &[&str]) {
    if !common::runtime_available("nvrtc", nvrtc::load().map(|_| ())) {
        return;
    }
    let options: Vec<String> = defines.iter().map(|d| format!("-D{d}")).collect();
    if let Err(e) = nvrtc::compile_source(text, "sm_80", &[], &options) {
        panic!("NVRTC rejects the rewritten kernel: {e}\n{text}");
    }
}

fn accesses(json: &serde_json::Value) -> &Vec<serde_json::Value> {
    json["accesses"].as_array().expect("accesses")
}

#[test]
fn the_slides_diffusion_kernel_is_synthesized_verified_and_race_free() {
    let (text, json) = synthesize(&DIFFUSION, "diffusion");
    let reads = accesses(&json);
    assert_eq!(reads.len(), 4);
    for read in reads {
        assert_eq!(read["served"], true, "{read}");
        assert_eq!(read["shared"], "sb");
        assert!(read["index"][0].as_str().unwrap().contains("csb"), "{read}");
        assert!(read["guard"].as_str().is_some());
        assert!(read["candidates_tested"].as_u64().unwrap() > 0);
        assert!(read["ms"].as_f64().is_some());
    }
    assert_eq!(reads[0]["access"], "__opt__.in[w]");
    assert_eq!(reads[0]["index"][0], "csb - 1");
    assert_eq!(reads[2]["index"][0], "csb + blockDim.x");
    // Two barriers, after the store and at the end of the loop body, at the
    // lines where the output has them.
    let barriers = json["barriers"].as_array().expect("barriers");
    assert_eq!(barriers.len(), 2, "{json}");
    let lines: Vec<&str> = text.lines().collect();
    for b in barriers {
        let line = b["line"].as_u64().unwrap() as usize;
        assert_eq!(lines[line - 1].trim(), "__syncthreads();");
    }
    let first = barriers[0]["line"].as_u64().unwrap() as usize;
    assert_eq!(lines[first - 2].trim(), "sb[csb] = in[c];");
    let second = barriers[1]["line"].as_u64().unwrap() as usize;
    assert_eq!(lines[second - 2].trim(), "c += xy;");
    assert!(barriers[1]["reason"]
        .as_str()
        .unwrap()
        .contains("overwrites `sb`"));
    // Profiled on two blocks and two grids at least; verified elsewhere too.
    let profiled = json["profiled"].as_array().unwrap();
    let distinct = |key: &str| {
        let mut v: Vec<String> = profiled.iter().map(|l| l[key].to_string()).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    assert!(distinct("block") >= 2 && distinct("grid") >= 2, "{json}");
    let verified = json["verified"].as_array().unwrap();
    assert!(verified.iter().any(|v| v["profiled"] == false));
    assert!(verified.iter().any(|v| v["profiled"] == true), "--check");
    insta::assert_snapshot!("diffusion_rewritten", text);
}

#[test]
fn jacobi_and_heat3d_are_synthesized_with_their_own_barriers() {
    for (example, name) in [(&JACOBI, "jacobi"), (&HEAT, "heat3d")] {
        let (text, json) = synthesize(example, name);
        let reads = accesses(&json);
        assert_eq!(reads.len(), 4, "{name}");
        assert!(reads.iter().all(|r| r["served"] == true), "{name}: {json}");
        assert!(
            json["barriers"].as_array().unwrap().is_empty(),
            "{name}: the kernel's barriers suffice: {json}"
        );
        assert!(text.contains("[threadIdx.y][threadIdx.x - 1]"), "{text}");
    }
}

#[test]
fn the_report_names_accesses_barriers_and_verification_and_stdout_is_the_kernel() {
    let run = DIFFUSION.synth(DIFFUSION.file, &[]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.starts_with("// The diffusion kernel"), "{stdout}");
    assert!(
        stderr.contains("__opt__.in[w] -> ((threadIdx.x != 0) ? sb[csb - 1] : in[w])"),
        "{stderr}"
    );
    assert!(
        stderr.contains("barrier added at line 17: after the store into `sb` at line 16"),
        "{stderr}"
    );
    assert!(
        stderr.contains("verified: original and rewritten kernel equal"),
        "{stderr}"
    );
}

/// A variant of an example with `from` replaced by `to`, in a temp file.
fn variant(example: &Example, name: &str, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(example.file))
        .expect("example");
    assert!(text.contains(from), "{from}");
    let path = temp_dir(name).join(Path::new(example.file).file_name().unwrap());
    std::fs::write(&path, text.replacen(from, to, 1)).expect("write");
    path.display().to_string()
}

fn fails(run: &Output) -> String {
    assert_eq!(
        run.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8_lossy(&run.stderr).into_owned()
}

#[test]
fn no_expression_within_the_bounds_names_the_access_bounds_and_closest() {
    let file = variant(
        &JACOBI,
        "nobounds",
        "profile(\"threadIdx.x threadIdx.y blockDim.x blockDim.y i j\")",
        "profile(\"nx ny\")",
    );
    let out = temp_dir("nobounds").join("never.cu");
    let err = fails(&JACOBI.synth(
        &file,
        &strings(&["--budget", "0.2", "-o", out.to_str().unwrap()]),
    ));
    assert!(
        err.contains("no expression for the index of dimension"),
        "{err}"
    );
    assert!(err.contains("`__opt__.a[j * nx + i - 1]`"), "{err}");
    assert!(err.contains("jacobi2d_tile.cu:20:"), "{err}");
    assert!(err.contains("^^^"), "{err}");
    assert!(err.contains("the bounds: expressions of at most"), "{err}");
    assert!(
        err.contains("closest") || err.contains("no candidate"),
        "{err}"
    );
    assert!(!out.exists(), "nothing is written");
}

#[test]
fn bad_inputs_get_clear_messages() {
    // A missing argument.
    let mut args = vec!["synth".to_string(), JACOBI.file.to_string()];
    args.extend(strings(&[
        "-D", "TILE_X=8", "-D", "TILE_Y=4", "--grid", "2,2", "--block", "8,4",
    ]));
    args.extend(strings(&["--arg", "a=random:78"]));
    let err = fails(&stencilc(&args));
    assert!(
        err.contains("argument `b` of kernel `jacobi2d` is missing"),
        "{err}"
    );

    // A shared array that no store fills.
    let file = variant(
        &JACOBI,
        "nostore",
        "tile[threadIdx.y][threadIdx.x] = a[j * nx + i];",
        ";",
    );
    let err = fails(&JACOBI.synth(&file, &[]));
    assert!(
        err.contains("no store fills the shared array `tile`"),
        "{err}"
    );

    // `profile` naming an unknown variable.
    let file = variant(&JACOBI, "unknown", "blockDim.y i j\")", "blockDim.y i q\")");
    let err = fails(&JACOBI.synth(&file, &[]));
    assert!(err.contains("`profile` names `q`"), "{err}");
    assert!(err.contains("jacobi2d_tile.cu:6:"), "{err}");

    // `__opt__` on a shared read, and on a store.
    let file = variant(
        &JACOBI,
        "optshared",
        "__opt__.a[j * nx + i - 1]",
        "__opt__.tile[threadIdx.y][threadIdx.x]",
    );
    let err = fails(&JACOBI.synth(&file, &[]));
    assert!(
        err.contains("`__opt__` marks a read of the shared array"),
        "{err}"
    );
    let file = variant(
        &JACOBI,
        "optstore",
        "b[j * nx + i] = a[j * nx + i];",
        "__opt__.b[j * nx + i] = a[j * nx + i];",
    );
    let err = fails(&JACOBI.synth(&file, &[]));
    assert!(err.contains("is stored into"), "{err}");

    // No marked read at all.
    let err = fails(&DIFFUSION.synth("examples/cuda/diffusion_nosync.cu", &[]));
    assert!(err.contains("marks no read"), "{err}");

    // A budget that is not a number of seconds.
    let err = fails(&JACOBI.synth(JACOBI.file, &strings(&["--budget=-1"])));
    assert!(
        err.contains("`--budget -1` is not a positive number"),
        "{err}"
    );
}

#[test]
fn a_kernel_that_fails_verification_is_never_written() {
    // A candidate equal to `blockDim.x` on every profiled launch (grids of
    // one and two blocks) but not on a grid three blocks wide: the guard over
    // it holds on every profiled row, the verification catches it and names
    // the read.
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(JACOBI.file))
        .expect("example")
        .replace("blockDim.x blockDim.y i j\")", "bw blockDim.y i j\")")
        .replace(
            "    bool inside",
            "    int bw = gridDim.x < 3 ? blockDim.x : 1;\n    bool inside",
        );
    let dir = temp_dir("unverified");
    let file = dir.join("jacobi2d_tile.cu");
    std::fs::write(&file, text).expect("write");
    let out = dir.join("never.cu");
    let err = fails(&JACOBI.synth(
        file.to_str().unwrap(),
        &strings(&["-o", out.to_str().unwrap()]),
    ));
    assert!(
        err.contains("fails verification on grid 3,2 x block 6,4"),
        "{err}"
    );
    assert!(err.contains("(bw != threadIdx.x + 1)"), "{err}");
    assert!(err.contains("jacobi2d_tile.cu:21:"), "{err}");
    assert!(err.contains("where the original computes"), "{err}");
    assert!(!out.exists(), "nothing is written");
}
