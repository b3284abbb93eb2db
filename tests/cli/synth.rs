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

// Whole `.cu` files as KaniCUDA's benchmarks ship them (tests/data/kanicuda:
// written here in the benchmarks' form): includes, macros, host code and
// other kernels kept byte for byte, only the marked kernel rewritten.

const DIFFUSION3D_ARGS: &[&str] = &[
    "--grid",
    "2,2",
    "--block",
    "4,4",
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

const HIMENO_ARGS: &[&str] = &[
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
    "a0=0.1",
    "--arg",
    "a1=0.2",
    "--arg",
    "a2=0.3",
    "--arg",
    "a3=0.4",
    "--arg",
    "b0=0.5",
    "--arg",
    "c0=0.6",
    "--arg",
    "omega=0.8",
];

/// Synthesizes the kernel of a whole file into a temporary file with
/// `--json`; asserts it succeeded and verified, that everything before
/// `kernel_start` and from `rest` on is the input's byte for byte, and that
/// the output's kernel runs race-free in `check-kernel`. Returns the output
/// and the JSON.
fn synth_whole(
    file: &str,
    launch: &[&str],
    extra: &[&str],
    kernel: &str,
    rest: &str,
) -> (String, serde_json::Value) {
    let input = std::fs::read_to_string(file).expect("the test input");
    let out = temp_dir(&format!("whole-{kernel}-{}", extra.len())).join("out.cu");
    let mut args = strings(&["synth", file, "--json", "-o", out.to_str().unwrap()]);
    args.extend(strings(launch));
    args.extend(strings(extra));
    let run = stencilc(&args);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON on stdout");
    assert_eq!(json["kernel"], kernel);
    assert!(!json["verified"].as_array().unwrap().is_empty(), "{json}");
    let text = std::fs::read_to_string(&out).expect("the output is written");
    let start = input
        .find(&format!("__global__ void {kernel}"))
        .expect("the kernel in the input");
    assert_eq!(
        &text[..start],
        &input[..start],
        "the text before the kernel"
    );
    let tail = &input[input.find(rest).expect("the host code")..];
    assert!(text.ends_with(tail), "the text after the kernel:\n{text}");
    assert_ne!(text, input);
    let kernel_text = &text[start..text.len() - tail.len()];
    assert!(
        !kernel_text.contains("__opt__") && !kernel_text.contains("profile("),
        "{kernel_text}"
    );
    assert!(kernel_text.contains("__syncthreads();"), "{kernel_text}");
    let mut check = strings(&["check-kernel", out.to_str().unwrap(), "--kernel", kernel]);
    check.extend(strings(launch));
    check.extend(strings(extra));
    let checked = stencilc(&check);
    assert!(
        checked.status.success() && String::from_utf8_lossy(&checked.stdout).contains("no race"),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    (text, json)
}

#[test]
fn synth_takes_a_whole_diffusion3d_file_and_keeps_the_rest_byte_for_byte() {
    let (text, json) = synth_whole(
        "tests/data/kanicuda/diffusion3d_whole.cu",
        DIFFUSION3D_ARGS,
        &[],
        "diffusion_kernel",
        "\nint main(",
    );
    // The `#ifndef` defaults apply to the kernel; the other kernel, the
    // function-like macro and the strings with braces stay as written.
    assert!(text.contains("__global__ void init(float* buf, int n) {"));
    assert!(text.contains("const char* banner = \"diffusion3d: } { \\\" done\";"));
    assert!(
        text.contains("cw * ((threadIdx.x != 0) ? sb[csb - 1] : in[w])"),
        "{text}"
    );
    let found = accesses(&json);
    assert_eq!(found.len(), 4);
    assert!(found.iter().all(|a| a["served"] == true), "{json}");
    // `-D` wins over the file's guarded default, as with nvcc.
    let (_, json) = synth_whole(
        "tests/data/kanicuda/diffusion3d_whole.cu",
        DIFFUSION3D_ARGS,
        &["-D", "BLOCK_X=8", "-D", "BLOCK_Y=8"],
        "diffusion_kernel",
        "\nint main(",
    );
    assert_eq!(accesses(&json)[0]["shared"], "sb");
}

#[test]
fn synth_takes_a_whole_himeno_file() {
    let (text, json) = synth_whole(
        "tests/data/kanicuda/himeno_whole.cu",
        HIMENO_ARGS,
        &[],
        "himeno_jacobi",
        "\nint main(",
    );
    assert!(
        text.contains("typedef struct Mat { float* m; int mnums, mrows, mcols, mdeps; } Matrix;")
    );
    assert!(text.contains("#include <sys/time.h>\n"));
    assert!(
        text.contains("a0 * ((blockDim.x != threadIdx.x + 1) ? sb[csb + 1] : p[e])"),
        "{text}"
    );
    assert_eq!(accesses(&json).len(), 4);
}

#[test]
fn synth_verifies_the_slots_chosen_with_opt_of_a_read_and_a_slot() {
    let (text, json) = synth_whole(
        "tests/data/kanicuda/diffusion3d_chosen.cu",
        DIFFUSION3D_ARGS,
        &[],
        "diffusion_kernel",
        "\nint main(",
    );
    assert!(
        text.contains("cw * ((threadIdx.x != 0) ? sb[csb - 1] : in[w])"),
        "{text}"
    );
    assert!(
        text.contains("cn * ((threadIdx.y != 0) ? sb[csb - blockDim.x] : in[n])"),
        "{text}"
    );
    let accesses = accesses(&json);
    assert_eq!(accesses[0]["chosen_slot"], "sb[csb - 1]");
    assert_eq!(accesses[3]["chosen_slot"], "sb[csb - blockDim.x]");
    // Verified, not searched: no index was enumerated.
    assert!(
        accesses
            .iter()
            .all(|a| a["index"].as_array().unwrap().is_empty()),
        "{json}"
    );
}

#[test]
fn synth_refuses_a_chosen_slot_that_never_holds_the_element() {
    let input = std::fs::read_to_string("tests/data/kanicuda/diffusion3d_chosen.cu").unwrap();
    let wrong = input.replace("__opt__(in[w], sb[csb - 1])", "__opt__(in[w], sb[csb + 2])");
    let dir = temp_dir("chosen-wrong");
    let file = dir.join("wrong.cu");
    std::fs::write(&file, &wrong).unwrap();
    let out = dir.join("out.cu");
    let mut args = strings(&["synth", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    args.extend(strings(DIFFUSION3D_ARGS));
    let run = stencilc(&args);
    let stderr = fails(&run);
    assert!(
        stderr.contains("`sb[csb + 2]` never holds the element `in[w]` reads"),
        "{stderr}"
    );
    let line = wrong
        .lines()
        .position(|l| l.contains("cw * __opt__(in[w], sb[csb + 2])"))
        .unwrap()
        + 1;
    assert!(stderr.contains(&format!("wrong.cu:{line}:")), "{stderr}");
    assert!(stderr.contains("__opt__.in[w]"), "{stderr}");
    assert!(!out.exists());
    // An index over a variable that `profile` does not name.
    let unnamed = input.replace("__opt__(in[w], sb[csb - 1])", "__opt__(in[w], sb[k])");
    std::fs::write(&file, &unnamed).unwrap();
    let mut args = strings(&["synth", file.to_str().unwrap()]);
    args.extend(strings(DIFFUSION3D_ARGS));
    let stderr = fails(&stencilc(&args));
    assert!(
        stderr.contains("`k` in the chosen slot is not a candidate"),
        "{stderr}"
    );
    assert!(stderr.contains("^"), "{stderr}");
}

#[test]
fn synth_sizes_extern_shared_memory_by_shared_bytes() {
    let (text, _) = synth_whole(
        "tests/data/kanicuda/diffusion3d_extern.cu",
        DIFFUSION3D_ARGS,
        &["--shared-bytes", "64"],
        "diffusion_kernel",
        "\nint main(",
    );
    assert!(text.contains("    extern __shared__ float sb[];\n"));
    assert!(text.contains("<<<grid, block, BLOCK_X * BLOCK_Y * sizeof(float)>>>"));
    // Without the flag: the declaration, and what to add.
    let mut args = strings(&["synth", "tests/data/kanicuda/diffusion3d_extern.cu"]);
    args.extend(strings(DIFFUSION3D_ARGS));
    let stderr = fails(&stencilc(&args));
    assert!(
        stderr.contains("`sb` is `extern __shared__`") && stderr.contains("--shared-bytes N"),
        "{stderr}"
    );
    assert!(stderr.contains("diffusion3d_extern.cu:34:5"), "{stderr}");
    // Too few bytes for the block: the emulator finds the overrun.
    args.extend(strings(&["--shared-bytes", "4"]));
    let stderr = fails(&stencilc(&args));
    assert!(stderr.contains("sb"), "{stderr}");
}

#[test]
fn synth_names_the_kernels_when_it_cannot_choose() {
    let input = std::fs::read_to_string("tests/data/kanicuda/diffusion3d_whole.cu").unwrap();
    // A second marked kernel: which one is for the user to say.
    let two = input.replace(
        "__global__ void init(float* buf, int n) {\n",
        "__global__ void init(float* buf, int n) {\n    profile(\"i\");\n",
    );
    let dir = temp_dir("choose");
    let file = dir.join("two.cu");
    std::fs::write(&file, &two).unwrap();
    let mut args = strings(&["synth", file.to_str().unwrap()]);
    args.extend(strings(DIFFUSION3D_ARGS));
    let stderr = fails(&stencilc(&args));
    assert!(
        stderr.contains("2 of them with KaniCUDA's markers")
            && stderr.contains("`init` (line 19, marked)")
            && stderr.contains("`diffusion_kernel` (line 25, marked)")
            && stderr.contains("--kernel NAME"),
        "{stderr}"
    );
    args.extend(strings(&["--kernel", "nope"]));
    let stderr = fails(&stencilc(&args));
    assert!(stderr.contains("no kernel `nope` in the file"), "{stderr}");
}
