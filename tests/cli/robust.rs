//! The command line under hostile conditions: closed pipes, signals, progress
//! on stderr, OpenMP's wait policy, and `--verify` against the interpreter.

use crate::common;

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use stencilc::exec::Buffer;
use stencilc::io::{prepare_output, FieldSpec};
use stencilc::ir::ScalarType;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn stencilc() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stencilc"));
    command.current_dir(repo());
    command
}

/// The write end of a pipe whose read end is already closed: every write to
/// it fails with EPIPE, as when `head` has exited.
pub(super) fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned by nobody else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    Stdio::from(write)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn cc_available() -> bool {
    common::cc_available()
}

fn opencl_available() -> bool {
    let probe = stencilc::exec::opencl::probe()
        .map(|_| ())
        .map_err(|e| e.to_string());
    common::runtime_available("opencl", probe)
}

/// Writes a program to `dir` and returns its path.
fn program(dir: &Path, name: &str, source: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, source).unwrap();
    path
}

/// A program that runs as long as `steps` says.
const LONG: &str = "int n;
int steps;
grid g [n][n];
float griddata a on g at 0,1;

iterate steps {
    stencil grow {
        [0:n-1][0:n-1] : [1]a[0][0] = [0]a[0][0] * 0.5f + 1.0f;
    }
}
";

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn emit_to_a_closed_stdout_ends_quietly_with_status_141() {
    let output = stencilc()
        .args(["emit", "examples/rician3d.sdsl"])
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = text(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(141),
        "{:?}: {stderr}",
        output.status
    );
    assert!(stderr.is_empty(), "expected no message, got: {stderr}");
}

#[test]
fn run_with_a_closed_stderr_finishes_and_prints_its_summary() {
    let output = stencilc()
        .args([
            "run",
            "examples/jacobi2d.sdsl",
            "--backend",
            "interp",
            "--set",
            "dim0=16",
            "--set",
            "dim1=16",
            "--verbose",
            "--progress",
        ])
        .stdout(Stdio::piped())
        .stderr(closed_pipe())
        .output()
        .unwrap();
    assert!(output.status.success(), "{:?}", output.status);
    assert!(text(&output.stdout).starts_with("jacobi2d: 4 iterations"));
}

#[test]
fn run_with_stdout_and_stderr_closed_ends_with_status_141_and_writes_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("a.npy");
    let pipe = closed_pipe();
    let output = stencilc()
        .args([
            "run",
            "examples/jacobi2d.sdsl",
            "--backend",
            "interp",
            "--set",
            "dim0=16",
            "--set",
            "dim1=16",
            "-v",
            "--output",
            &format!("a={}", path_str(&out)),
        ])
        .stdout(pipe)
        .stderr(closed_pipe())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(141), "{:?}", output.status);
    assert!(out.exists());
}

/// Files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Starts a long run writing to `dir/out.npy`, waits until its temporary file
/// exists, sends `signal` and returns how it ended.
fn interrupted_run(signal: i32) -> (Output, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let source = program(dir.path(), "long.sdsl", LONG);
    let out = dir.path().join("out.npy");
    let child = stencilc()
        .args([
            "run",
            path_str(&source),
            "--backend",
            "interp",
            "--set",
            "n=64",
            "--set",
            "steps=2000000000",
            "--output",
            &format!("a={}", path_str(&out)),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !files_in(dir.path()).iter().any(|n| n.ends_with(".tmp")) {
        assert!(Instant::now() < deadline, "no temporary file appeared");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) on the child's own process id.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let output = child.wait_with_output().unwrap();
    let left = files_in(dir.path())
        .into_iter()
        .filter(|n| n != "long.sdsl")
        .collect();
    (output, left)
}

#[test]
fn sigterm_removes_the_temporary_output_and_exits_143() {
    let (output, left) = interrupted_run(libc::SIGTERM);
    assert_eq!(output.status.code(), Some(143), "{:?}", output.status);
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(text(&output.stderr).contains("terminated; no output written"));
}

#[test]
fn sigint_removes_the_temporary_output_and_exits_130() {
    let (output, left) = interrupted_run(libc::SIGINT);
    assert_eq!(output.status.code(), Some(130), "{:?}", output.status);
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn short_run(extra: &[&str]) -> Output {
    stencilc()
        .args([
            "run",
            "examples/jacobi2d.sdsl",
            "--backend",
            "interp",
            "--set",
            "dim0=16",
            "--set",
            "dim1=16",
            "--json",
        ])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn progress_is_forced_by_the_flag_and_absent_on_a_pipe_by_default() {
    let forced = short_run(&["--progress"]);
    assert!(forced.status.success());
    let stderr = text(&forced.stderr);
    assert!(stderr.contains("4/1,000 iterations"), "{stderr}");
    // stdout stays one JSON object.
    let summary: serde_json::Value = serde_json::from_slice(&forced.stdout).unwrap();
    assert_eq!(summary["iterations"], 4);

    let default = short_run(&[]);
    assert!(default.status.success());
    assert!(
        !text(&default.stderr).contains("iterations"),
        "{}",
        text(&default.stderr)
    );
    let quiet = short_run(&["--quiet"]);
    assert!(!text(&quiet.stderr).contains("iterations"));
    let both = short_run(&["--quiet", "--progress"]);
    assert_eq!(both.status.code(), Some(2));
}

/// What libgomp says of its wait policy when loaded with the kernel
/// (`OMP_DISPLAY_ENV=verbose`): the policy's line and the spin count's. An unset
/// policy also reads `PASSIVE` but spins 300000 times; only a passive one
/// spins 0 times.
fn wait_policy_seen_by_libgomp(user_policy: Option<&str>) -> (String, String) {
    let mut command = stencilc();
    command
        .args([
            "run",
            "examples/jacobi2d.sdsl",
            "--backend",
            "c",
            "--set",
            "dim0=16",
            "--set",
            "dim1=16",
        ])
        .env("OMP_DISPLAY_ENV", "verbose")
        .env_remove("OMP_WAIT_POLICY")
        .env_remove("GOMP_SPINCOUNT");
    if let Some(policy) = user_policy {
        command.env("OMP_WAIT_POLICY", policy);
    }
    let output = command.output().unwrap();
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let line = |name: &str| {
        stderr
            .lines()
            .map(str::trim)
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("libgomp printed no {name}: {stderr}"))
            .to_string()
    };
    (line("OMP_WAIT_POLICY"), line("GOMP_SPINCOUNT"))
}

#[test]
fn openmp_threads_wait_passively_unless_the_user_chose() {
    if !cc_available() {
        return;
    }
    let (policy, spins) = wait_policy_seen_by_libgomp(None);
    assert_eq!(policy, "OMP_WAIT_POLICY = 'PASSIVE'");
    assert_eq!(spins, "GOMP_SPINCOUNT = '0'");
    let (policy, spins) = wait_policy_seen_by_libgomp(Some("active"));
    assert_eq!(policy, "OMP_WAIT_POLICY = 'ACTIVE'");
    assert_ne!(spins, "GOMP_SPINCOUNT = '0'");
}

/// The examples with their inputs, as `run` arguments.
fn example_runs() -> Vec<Vec<&'static str>> {
    vec![
        vec![
            "examples/gaussian_blur.sdsl",
            "--input",
            "img=examples/data/sample.png",
        ],
        vec![
            "examples/jacobi2d.sdsl",
            "--input",
            "a=examples/data/jacobi_64.npy",
        ],
        vec![
            "examples/heat3d.sdsl",
            "--input",
            "u=examples/data/heat_16.npy",
            "--set",
            "steps=10",
            "--set",
            "alpha=0.1",
        ],
        vec![
            "examples/wave2d.sdsl",
            "--input",
            "u=examples/data/wave_64.npy",
            "--set",
            "steps=25",
            "--set",
            "c2=0.2",
        ],
        vec![
            "examples/rician3d.sdsl",
            "--input",
            "U=examples/data/rician_24x20x16.npy",
            "--input",
            "F=examples/data/rician_24x20x16.npy",
            "--set",
            "sigma=0.05",
            "--set",
            "lambda=0.065",
        ],
    ]
}

fn verify_examples_on(backend: &str) {
    for run in example_runs() {
        let output = stencilc()
            .arg("run")
            .args(&run)
            .args(["--backend", backend, "--verify", "--json"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{run:?} on {backend}: {}",
            text(&output.stderr)
        );
        let summary: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(summary["backend"], backend, "{run:?}");
        let verify = &summary["verify"];
        assert_eq!(verify["passed"], true, "{run:?}: {verify}");
        let fields = verify["fields"].as_object().unwrap();
        assert!(!fields.is_empty(), "{run:?}");
        if backend == "c" {
            for (name, field) in fields {
                assert_eq!(field["max_abs_diff"], 0.0, "{run:?} {name}: {field}");
            }
        }
    }
}

#[test]
fn verify_passes_for_c_on_every_example() {
    if cc_available() {
        verify_examples_on("c");
    }
}

#[test]
fn verify_passes_for_opencl_on_every_example() {
    if opencl_available() {
        verify_examples_on("opencl");
    }
}

/// `x / 3.0f` is correctly rounded; `-ffast-math` lets gcc multiply by the
/// rounded reciprocal instead, which differs in the last bit for some `x`.
const DIVIDE: &str = "int n;
float shift;
grid g [n][n];
float griddata a on g at 0,1;

iterate 3 {
    stencil scale {
        [0:n-1][0:n-1] : [1]a[0][0] = [0]a[0][0] / 3.0f + shift;
    }
}
";

#[test]
fn verify_fails_where_fast_math_changes_the_results() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = program(dir.path(), "divide.sdsl", DIVIDE);
    let input = dir.path().join("in.npy");
    let values: Vec<f32> = (0..64 * 64).map(|i| i as f32 * 0.37 + 0.1).collect();
    let spec = FieldSpec {
        name: "a".into(),
        ty: ScalarType::Float,
        rank: 2,
    };
    prepare_output(&input, &spec)
        .unwrap()
        .commit(&Buffer::Float(values), &[64, 64])
        .unwrap();
    let out = dir.path().join("out.npy");
    let run = |extra: &[&str]| {
        stencilc()
            .args([
                "run",
                path_str(&source),
                "--backend",
                "c",
                "--set",
                "shift=0.1",
                "--input",
                &format!("a={}", path_str(&input)),
                "--output",
                &format!("a={}", path_str(&out)),
                "--verify",
                "--json",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let exact = run(&[]);
    assert!(exact.status.success(), "{}", text(&exact.stderr));
    std::fs::remove_file(&out).unwrap();

    let fast = run(&["--fast-math"]);
    let stderr = text(&fast.stderr);
    assert_eq!(fast.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--verify: field `a` differs from the interpreter's: at index ["),
        "{stderr}"
    );
    assert!(stderr.contains("the c back-end gives"), "{stderr}");
    assert!(!out.exists(), "an output was written despite the mismatch");
    let summary: serde_json::Value = serde_json::from_slice(&fast.stdout).unwrap();
    let field = &summary["verify"]["fields"]["a"];
    assert_eq!(summary["verify"]["passed"], false);
    assert_eq!(field["passed"], false);
    assert!(field["max_abs_diff"].as_f64().unwrap() > 0.0);
    assert_eq!(field["worst_index"].as_array().unwrap().len(), 2);
}

/// `--quiet` silences every `note:` line, the time-tiling one included: a
/// `--time` the kernels cannot take is said without it and not with it.
#[test]
fn quiet_silences_the_time_tiling_note() {
    let probe = stencilc::exec::opencl::probe()
        .map(|_| ())
        .map_err(|e| e.to_string());
    if !common::runtime_available("opencl", probe) {
        return;
    }
    let run = |extra: &[&str]| {
        stencilc()
            .args([
                "run",
                "bench/programs/rician3d.sdsl",
                "--backend",
                "opencl",
                "--set",
                "dim0=16",
                "--set",
                "dim1=16",
                "--set",
                "dim2=16",
                "--set",
                "steps=2",
                "--set",
                "sigma=0.05",
                "--set",
                "lambda=0.065",
                "--time",
                "2",
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let loud = run(&[]);
    assert!(loud.status.success(), "{}", text(&loud.stderr));
    assert!(
        text(&loud.stderr).contains("runs untiled in time"),
        "{}",
        text(&loud.stderr)
    );
    let quiet = run(&["--quiet"]);
    assert!(quiet.status.success(), "{}", text(&quiet.stderr));
    assert!(
        !text(&quiet.stderr).contains("note:"),
        "{}",
        text(&quiet.stderr)
    );
}
