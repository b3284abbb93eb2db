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

/// A kernel whose float to integer conversions leave `int`'s range: an
/// explicit cast, an initialiser, an assignment, a compound assignment, and a
/// `__device__` function's result and argument.
const CONVERSIONS: &str = "__device__ int to_int(float x) {
    return x;
}

__device__ int twice(int v) {
    return v / 2 * 2;
}

__global__ void convert(const float* in, int* out, int* implicit, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = (in[i] - 0.5f) * 1.0e10f;
        out[i] = (int)x;
        int j = x;
        implicit[i] = j;
        int k = 0;
        k += x;
        implicit[i] = implicit[i] / 2 + k / 2;
        out[i] = out[i] / 2 + to_int(x) / 4 + twice(x) / 4;
    }
}
";

fn check_kernel(dir: &std::path::Path, source: &str, extra: &[&str]) -> Output {
    let file = dir.join("kernel.cu");
    std::fs::write(&file, source).unwrap();
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .arg("check-kernel")
        .arg(&file)
        .args(extra)
        .output()
        .expect("stencilc runs")
}

/// The OpenCL printing converts floats to integers with OpenCL's saturating
/// conversions, as the emulator does, so `--on opencl` agrees with it on
/// values out of `int`'s range (a plain C cast gave `INT_MIN` on PoCL where
/// the emulator saturates to `INT_MAX`, reported as a bug in stencilc).
#[test]
fn check_kernel_on_opencl_agrees_on_out_of_range_float_to_int() {
    let dir = tempfile::tempdir().unwrap();
    let printed = check_kernel(dir.path(), CONVERSIONS, &["--print-opencl"]);
    let text = String::from_utf8_lossy(&printed.stdout);
    assert!(printed.status.success(), "{text}");
    assert!(text.contains("out[i] = convert_int_sat_rtz(x);"), "{text}");
    assert!(text.contains("int j = convert_int_sat_rtz(x);"), "{text}");
    assert!(text.contains("k = convert_int_sat_rtz(k + x);"), "{text}");
    assert!(text.contains("return convert_int_sat_rtz(x);"), "{text}");
    assert!(text.contains("twice(convert_int_sat_rtz(x))"), "{text}");
    let run = check_kernel(
        dir.path(),
        CONVERSIONS,
        &[
            "--grid",
            "2",
            "--block",
            "32",
            "--arg",
            "in=random:64",
            "--arg",
            "out=zeros:64",
            "--arg",
            "implicit=zeros:64",
            "--arg",
            "n=64",
            "--on",
            "opencl",
        ],
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    if stderr.contains("OpenCL unavailable") {
        eprintln!("skipping the OpenCL run: {stderr}");
        return;
    }
    assert!(run.status.success(), "{stderr}");
    assert!(
        stdout.contains("on OpenCL agrees with the emulator"),
        "{stdout}"
    );
}

/// A shift by 32 or by a negative amount is undefined in C and CUDA: the
/// emulator reports it with its line, as it does a division by zero.
#[test]
fn check_kernel_reports_shifts_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = "__global__ void shift(int* out, int s) {
    int i = threadIdx.x;
    out[i] = 1 << (s + i);
}
";
    for (s, ok) in [("0", true), ("31", false), ("-1", false), ("32", false)] {
        let run = check_kernel(
            dir.path(),
            kernel,
            &[
                "--grid",
                "1",
                "--block",
                "2",
                "--arg",
                "out=zeros:2",
                "--arg",
                &format!("s={s}"),
            ],
        );
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.success(), ok, "s={s}: {stderr}");
        if !ok {
            assert!(
                stderr.contains("shift by a negative amount or by at least the width")
                    && stderr.contains("kernel.cu:3"),
                "s={s}: {stderr}"
            );
            assert!(!stderr.contains("internal error"), "{stderr}");
        }
    }
}

/// `stencilc run ARGS` under an address-space limit of `bytes` (`ulimit -v`,
/// set in the child before it starts: portable where cgroups cannot be made).
fn run_under_address_limit(bytes: u64, args: &[&str]) -> Output {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(env!("CARGO_BIN_EXE_stencilc"));
    command
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child
    // between fork and exec.
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    command.output().expect("stencilc runs")
}

/// The memory pre-check counts the back-end's peak, not the fields' bytes:
/// OpenCL on jacobi2d at 3000² (72 MB of fields, a peak of 310 to 523 MB
/// measured on PoCL) is refused under a 600 MiB address-space limit before
/// anything is allocated, with a message naming the limit; a small
/// interpreter run under the same limit is not.
#[test]
fn run_is_refused_when_the_backends_peak_exceeds_ulimit_v() {
    let limit = 600 << 20;
    let refused = run_under_address_limit(
        limit,
        &[
            "run",
            "examples/jacobi2d.sdsl",
            "--backend",
            "opencl",
            "--set",
            "dim0=3000",
            "--set",
            "dim1=3000",
        ],
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("on the opencl back-end needs about")
            && stderr.contains("4 × the fields' 69 MiB + 320 MiB")
            && stderr.contains("the address-space limit (ulimit -v)"),
        "{stderr}"
    );
    let small = run_under_address_limit(
        limit,
        &[
            "run",
            "examples/jacobi2d.sdsl",
            "--backend",
            "interp",
            "--set",
            "dim0=16",
            "--set",
            "dim1=16",
        ],
    );
    let stderr = String::from_utf8_lossy(&small.stderr);
    assert!(small.status.success(), "{stderr}");
}

/// `x * -1.0f` on a NaN: the interpreter keeps its sign, C and OpenCL
/// compilers compute `-x` and flip it. NaN sign and payload are not part of a
/// result's meaning (docs/src/semantics.md, `ir::semantics`): the outputs differ in that bit,
/// and `--verify` passes them, also for C, which it otherwise compares bit for
/// bit.
#[test]
fn a_nan_whose_sign_differs_between_back_ends_passes_verify() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("negate.sdsl");
    std::fs::write(
        &program,
        "int n;\ngrid g [n];\nfloat griddata a on g at 0,1;\nfloat griddata o on g at 0,1;\n\
         iterate 1 {\n    stencil s {\n        [0:n-1] : [1]o[0] = [0]a[0] * -1.0f;\n    }\n}\n",
    )
    .unwrap();
    let input = dir.path().join("a.raw");
    let values = [f32::NAN, -f32::NAN, 1.0, -0.0];
    std::fs::write(
        &input,
        values
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let run = |backend: &str, verify: bool| {
        let output = dir.path().join(format!("o.{backend}.raw"));
        let mut command = Command::new(env!("CARGO_BIN_EXE_stencilc"));
        command
            .arg("run")
            .arg(&program)
            .args(["--backend", backend, "--set", "n=4", "--input"])
            .arg(format!("a={}", input.display()))
            .arg("--output")
            .arg(format!("o={}", output.display()))
            .env("STENCILC_CACHE_DIR", dir.path().join("cache"));
        if verify {
            command.arg("--verify");
        }
        let out = command.output().expect("stencilc runs");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.success(), std::fs::read(&output).ok(), stderr)
    };
    let (ok, interp, stderr) = run("interp", false);
    assert!(ok, "{stderr}");
    let interp = interp.unwrap();
    let cc = stencilc::exec::native::Compiler::from_env()
        .map(|_| ())
        .map_err(|e| e.to_string());
    if !crate::common::runtime_available("cc", cc) {
        return;
    }
    let (ok, c, stderr) = run("c", true);
    assert!(ok, "--verify refused a NaN of the other sign: {stderr}");
    let c = c.unwrap();
    assert!(f32::from_le_bytes(c[..4].try_into().unwrap()).is_nan());
    // The finite values agree bit for bit; only NaN signs may differ.
    assert_eq!(c[8..], interp[8..]);
}

/// A memory cgroup of this process's own made for one test (cgroup v2
/// `memory.max` or v1 `memory.limit_in_bytes`), removed on drop; `Err` says
/// why none can be made here (not root, no memory controller, ...).
struct MemoryCgroup {
    dir: PathBuf,
}

impl MemoryCgroup {
    fn new(limit: u64) -> Result<MemoryCgroup, String> {
        let own = std::fs::read_to_string("/proc/self/cgroup").map_err(|e| e.to_string())?;
        let mount = std::path::Path::new("/sys/fs/cgroup");
        let (parent, limit_file) = own
            .lines()
            .find_map(|line| {
                let mut parts = line.splitn(3, ':');
                let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                let path = path.trim_start_matches('/');
                if controllers.split(',').any(|c| c == "memory") {
                    Some((mount.join("memory").join(path), "memory.limit_in_bytes"))
                } else if controllers.is_empty() && mount.join("cgroup.controllers").exists() {
                    Some((mount.join(path), "memory.max"))
                } else {
                    None
                }
            })
            .ok_or("no memory cgroup in /proc/self/cgroup")?;
        let dir = parent.join(format!("stencilc-test-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let group = MemoryCgroup { dir };
        std::fs::write(group.dir.join(limit_file), limit.to_string())
            .map_err(|e| format!("cannot set {limit_file}: {e}"))?;
        Ok(group)
    }

    /// `stencilc ARGS` inside the cgroup: a shell moves itself in, then
    /// becomes stencilc (no allocation between fork and exec).
    fn run(&self, args: &[&str]) -> Output {
        Command::new("sh")
            .arg("-c")
            .arg("echo $$ > \"$0\" && exec \"$@\"")
            .arg(self.dir.join("cgroup.procs"))
            .arg(env!("CARGO_BIN_EXE_stencilc"))
            .args(args)
            .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")))
            .output()
            .expect("sh runs")
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The docs' promise (docs/src/cli.md), end to end: in a 200 MB memory cgroup, OpenCL on
/// jacobi2d at 3000² is refused with a message naming the cgroup's limit
/// (it was SIGKILLed), and a small interpreter run in the same cgroup runs.
/// Skips, saying why, where no cgroup can be made.
#[test]
fn run_is_refused_not_killed_in_a_200_mb_cgroup() {
    let group = match MemoryCgroup::new(200_000_000) {
        Ok(group) => group,
        Err(why) => {
            eprintln!("skipped: no memory cgroup can be made here: {why}");
            return;
        }
    };
    let refused = group.run(&[
        "run",
        "examples/jacobi2d.sdsl",
        "--backend",
        "opencl",
        "--set",
        "dim0=3000",
        "--set",
        "dim1=3000",
    ]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(
        refused.status.code(),
        Some(1),
        "{:?}: {stderr}",
        refused.status
    );
    assert!(
        stderr.contains("on the opencl back-end needs about")
            && stderr.contains("the cgroup limit"),
        "{stderr}"
    );
    let small = group.run(&[
        "run",
        "examples/jacobi2d.sdsl",
        "--backend",
        "interp",
        "--set",
        "dim0=64",
        "--set",
        "dim1=64",
    ]);
    let stderr = String::from_utf8_lossy(&small.stderr);
    assert!(small.status.success(), "{:?}: {stderr}", small.status);
}
