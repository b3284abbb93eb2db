//! `stencilc run --decompose` under `mpirun -np 1..4`: every example
//! and bench program on every decomposition of 1 to 4 ranks gives the fields,
//! iteration count and reductions of the single-process interpreter run, bit
//! for bit, on the interpreter per rank (and on the generated C per rank, on
//! `auto` and the innermost-axis cut); every boundary mode; `--verify`
//! passes, and fails every rank on a deliberate mismatch; bad input fails on
//! every rank without an output; a rank killed mid-run ends the run instead
//! of hanging it. OpenCL per rank matches the interpreter bit for bit on a
//! few programs and boundary modes (PoCL here; skipped without OpenCL).
//!
//! Needs the `mpi` feature and `mpirun` (runtime `mpi`); skips otherwise.

#[path = "../common/mod.rs"]
mod common;
mod faces;
mod failures;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const STENCILC: &str = env!("CARGO_BIN_EXE_stencilc");
/// No mpirun in these tests may run longer than this.
const LIMIT: Duration = Duration::from_secs(120);

fn mpirun_available() -> bool {
    let probe = Command::new("mpirun")
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot start `mpirun`: {e}"))
        .and_then(|o| {
            o.status
                .success()
                .then_some(())
                .ok_or_else(|| "`mpirun --version` failed".to_string())
        });
    common::runtime_available("mpi", probe)
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

/// Runs `command` to completion, killed after [`LIMIT`] (which fails the test).
fn run_limited(mut command: Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("waits").is_some() {
            return child.wait_with_output().expect("output");
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "{command:?} did not end within {LIMIT:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn mpirun(np: usize) -> Command {
    let mut command = Command::new("mpirun");
    command.args([
        "--oversubscribe",
        "--allow-run-as-root",
        "-np",
        &np.to_string(),
    ]);
    // Ranks share the two cores: one interpreter (or OpenMP) thread each.
    command.env("RAYON_NUM_THREADS", "1");
    command.env("OMP_NUM_THREADS", "1");
    command.env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    // Open MPI 4.1 creates its session directory `<tmp>/ompi.<host>.<uid>`
    // without tolerating a concurrent mpirun doing the same ("mkdir: File
    // exists", orte_init fails); the tests start mpiruns in parallel, so each
    // gets a base directory of its own.
    command.env("OMPI_MCA_orte_tmpdir_base", session_base());
    command
}

/// A fresh directory for one mpirun's Open MPI session files.
fn session_base() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let ours = format!("ompi-{}-", std::process::id());
    if n == 0 {
        // What earlier runs of this binary left (Open MPI empties them only).
        for entry in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("ompi-") && !name.starts_with(&ours) {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
    let dir = tmp.join(format!("{ours}{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// Writes a `.npy` of `float` or `double` values from a fixed pseudo-random
/// sequence (different per `seed`).
fn write_npy(path: &Path, dims: &[usize], double: bool, seed: u64) {
    let n: usize = dims.iter().product();
    let shape: Vec<String> = dims.iter().map(usize::to_string).collect();
    let shape = if dims.len() == 1 {
        format!("({},)", shape[0])
    } else {
        format!("({})", shape.join(", "))
    };
    let descr = if double { "<f8" } else { "<f4" };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}}}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    for _ in 0..n {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = (state >> 11) as f64 / (1u64 << 53) as f64;
        if double {
            bytes.extend_from_slice(&v.to_le_bytes());
        } else {
            bytes.extend_from_slice(&(v as f32).to_le_bytes());
        }
    }
    std::fs::write(path, bytes).expect("writes the input");
}

/// A program with its parameter values and fields (name, is double).
struct Case {
    path: PathBuf,
    sets: Vec<String>,
    dims: Vec<usize>,
    fields: Vec<(&'static str, bool)>,
}

fn case(path: PathBuf, sets: &[&str], dims: &[usize], fields: &[(&'static str, bool)]) -> Case {
    Case {
        path,
        sets: sets.iter().map(|s| s.to_string()).collect(),
        dims: dims.to_vec(),
        fields: fields.to_vec(),
    }
}

fn cases() -> Vec<Case> {
    let ex = common::examples_dir();
    let bench = ex.parent().expect("repository").join("bench/programs");
    let f = false;
    vec![
        case(
            ex.join("gaussian_blur.sdsl"),
            &["width=23", "height=19"],
            &[19, 23],
            &[("img", f), ("out", f)],
        ),
        case(
            ex.join("gaussian_blur_separable.sdsl"),
            &["width=23", "height=19"],
            &[19, 23],
            &[("img", f), ("tmp", f), ("out", f)],
        ),
        case(
            ex.join("heat3d.sdsl"),
            &["nx=9", "ny=11", "nz=10", "steps=4", "alpha=0.1"],
            &[10, 11, 9],
            &[("u", true)],
        ),
        case(
            ex.join("jacobi2d.sdsl"),
            &["dim0=17", "dim1=13"],
            &[13, 17],
            &[("a", f)],
        ),
        case(
            ex.join("rician3d.sdsl"),
            &["dim0=9", "dim1=10", "dim2=11", "sigma=0.5", "lambda=0.1"],
            &[11, 10, 9],
            &[("U", true), ("G", true), ("F", true)],
        ),
        case(
            ex.join("wave2d.sdsl"),
            &["n=21", "steps=6", "c2=0.1"],
            &[21, 21],
            &[("u", f)],
        ),
        case(
            bench.join("box2d2r.sdsl"),
            &["n=22", "steps=3"],
            &[22, 22],
            &[("a", f)],
        ),
        case(
            bench.join("gaussian_blur.sdsl"),
            &["width=23", "height=19", "steps=2"],
            &[19, 23],
            &[("img", f), ("out", f)],
        ),
        case(
            bench.join("gradient2d.sdsl"),
            &["n=21", "steps=3"],
            &[21, 21],
            &[("a", f)],
        ),
        case(
            bench.join("j2d5pt.sdsl"),
            &["n=21", "steps=4"],
            &[21, 21],
            &[("a", f)],
        ),
        case(
            bench.join("j2d5pt_check.sdsl"),
            &["n=21", "steps=40"],
            &[21, 21],
            &[("a", f)],
        ),
        case(
            bench.join("j2d9pt.sdsl"),
            &["n=21", "steps=3"],
            &[21, 21],
            &[("a", f)],
        ),
        case(
            bench.join("j2d9pt_table.sdsl"),
            &["n=21", "steps=3"],
            &[21, 21],
            &[("a", f)],
        ),
        case(
            bench.join("j3d27pt.sdsl"),
            &["n=10", "steps=2"],
            &[10, 10, 10],
            &[("a", f)],
        ),
        case(
            bench.join("rician3d.sdsl"),
            &[
                "dim0=9",
                "dim1=10",
                "dim2=11",
                "steps=3",
                "sigma=0.5",
                "lambda=0.1",
            ],
            &[11, 10, 9],
            &[("U", true), ("G", true), ("F", true)],
        ),
        case(
            bench.join("star3d1r.sdsl"),
            &["n=10", "steps=3"],
            &[10, 10, 10],
            &[("a", f)],
        ),
    ]
}

/// Every decomposition of `np` ranks over `rank` axes, and `auto`.
fn decompositions(np: usize, rank: usize) -> Vec<String> {
    let mut all = vec!["auto".to_string()];
    let divisors: Vec<usize> = (1..=np).filter(|d| np % d == 0).collect();
    match rank {
        1 => all.push(np.to_string()),
        2 => all.extend(divisors.iter().map(|d| format!("{d}x{}", np / d))),
        _ => {
            for &a in &divisors {
                for &b in &divisors {
                    if (np / a) % b == 0 {
                        all.push(format!("{a}x{b}x{}", np / a / b));
                    }
                }
            }
        }
    }
    all
}

/// `stencilc run` arguments for a case writing its outputs to `out_dir`.
fn run_args(case: &Case, inputs: &Path, out_dir: &Path) -> Vec<String> {
    let mut args = vec!["run".to_string(), case.path.display().to_string()];
    for set in &case.sets {
        args.extend(["--set".to_string(), set.clone()]);
    }
    for (field, _) in &case.fields {
        args.push(format!(
            "--input={field}={}",
            inputs.join(format!("{field}.npy")).display()
        ));
        args.push(format!(
            "--output={field}={}",
            out_dir.join(format!("{field}.npy")).display()
        ));
    }
    args
}

/// The summary's lines without the times (and, decomposed, the ranks).
fn summary_lines(stdout: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| l.split(" (").next().unwrap_or(l).to_string())
        .collect()
}

/// `auto` and the decomposition that cuts only the innermost axis (the
/// other way from `auto`'s), for the back-ends whose per-rank compile makes
/// every decomposition too slow to try.
fn representative_decompositions(np: usize, rank: usize) -> Vec<String> {
    let mut all = vec!["auto".to_string()];
    if rank > 1 && np > 1 {
        let mut dims = vec!["1".to_string(); rank];
        dims[rank - 1] = np.to_string();
        all.push(dims.join("x"));
    }
    all
}

fn check_case(case: &Case, nps: &[usize]) {
    check_case_on(case, nps, &[], decompositions);
}

/// [`check_case`] with `extra` arguments on the decomposed runs (the
/// single-process reference is always the interpreter) and the
/// decompositions `decompositions(np, rank)` gives.
fn check_case_on(
    case: &Case,
    nps: &[usize],
    extra: &[&str],
    decompositions: fn(usize, usize) -> Vec<String>,
) {
    let dir = tempfile::tempdir().expect("temp dir");
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).expect("dir");
    for (i, (field, double)) in case.fields.iter().enumerate() {
        write_npy(
            &inputs.join(format!("{field}.npy")),
            &case.dims,
            *double,
            i as u64 + 1,
        );
    }
    let reference = dir.path().join("ref");
    std::fs::create_dir(&reference).expect("dir");
    let mut single = Command::new(STENCILC);
    single
        .args(run_args(case, &inputs, &reference))
        .args(["--backend", "interp", "-q"]);
    let single = run_limited(single);
    assert!(
        single.status.success(),
        "{}",
        String::from_utf8_lossy(&single.stderr)
    );
    let expected = summary_lines(&single.stdout);
    for &np in nps {
        for decomposition in decompositions(np, case.dims.len()) {
            let out = dir.path().join(format!("np{np}_{decomposition}"));
            std::fs::create_dir(&out).expect("dir");
            let mut command = mpirun(np);
            command
                .arg(STENCILC)
                .args(run_args(case, &inputs, &out))
                .args(["--decompose", &decomposition, "-q"])
                .args(extra);
            let ran = run_limited(command);
            let what = format!(
                "{} on -np {np} --decompose {decomposition} {}",
                case.path.display(),
                extra.join(" ")
            );
            let stderr = String::from_utf8_lossy(&ran.stderr);
            if !ran.status.success() && stderr.contains("cannot cut its innermost axis") {
                continue; // refused by design (3-D with reductions), tested below
            }
            assert!(ran.status.success(), "{what}: {stderr}");
            let backend = extra
                .windows(2)
                .find(|w| w[0] == "--backend")
                .map_or("interp", |w| w[1]);
            let want: Vec<String> = expected
                .iter()
                .map(|l| l.replace(" on interp", &format!(" on {backend}")))
                .collect();
            assert_eq!(summary_lines(&ran.stdout), want, "{what}: summary");
            for (field, _) in &case.fields {
                let name = format!("{field}.npy");
                let want = std::fs::read(reference.join(&name)).expect("reference output");
                let got = std::fs::read(out.join(&name)).expect("decomposed output");
                assert!(
                    want == got,
                    "{what}: field `{field}` differs from the single-process run"
                );
            }
        }
    }
}

#[test]
fn every_program_on_every_decomposition_matches_the_single_process_run() {
    if !mpirun_available() {
        return;
    }
    for case in cases() {
        check_case(&case, &[1, 2, 3, 4]);
    }
}

#[test]
fn c_per_rank_matches_the_single_process_interpreter_on_every_program() {
    if !mpirun_available() || !cc_available() {
        return;
    }
    for case in cases() {
        check_case_on(
            &case,
            &[1, 2, 3, 4],
            &["--backend", "c"],
            representative_decompositions,
        );
    }
}

/// The decompositions the OpenCL per-rank test runs: `auto`, and on more
/// than one rank the cut of the outermost axis.
fn outer_cut(np: usize, rank: usize) -> Vec<String> {
    let mut all = vec!["auto".to_string()];
    if rank > 1 && np > 1 {
        let mut dims = vec!["1".to_string(); rank];
        dims[0] = np.to_string();
        all.push(dims.join("x"));
    }
    all
}

#[test]
fn opencl_per_rank_matches_the_single_process_interpreter() {
    if !mpirun_available() || !opencl_available() {
        return;
    }
    let names = [
        "j2d5pt.sdsl",
        "jacobi2d.sdsl",
        "heat3d.sdsl",
        "rician3d.sdsl",
    ];
    for case in cases() {
        let name = case.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let example = case.path.parent() == Some(common::examples_dir().as_path());
        if names.contains(&name) && (example || name == "j2d5pt.sdsl") {
            check_case_on(&case, &[1, 2, 3], &["--backend", "opencl"], outer_cut);
        }
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for (mode, rank) in [("periodic", 2), ("mirror", 3), ("zero", 1)] {
        check_case_on(
            &boundary_program(dir.path(), mode, rank),
            &[3],
            &["--backend", "opencl"],
            representative_decompositions,
        );
    }
}

/// A program reading diagonally and two points away with boundary `mode`,
/// with a `+` reduction.
fn boundary_program(dir: &Path, mode: &str, rank: usize) -> Case {
    let (grid, subset, reads, dims) = match rank {
        1 => (
            "grid g[n];",
            "[0:n-1]",
            "0.5f*[0]a[-2] + 0.3f*[0]a[1] + 0.2f*[0]a[0]",
            vec![700],
        ),
        2 => (
            "grid g[n][m];",
            "[0:n-1][0:m-1]",
            "0.25f*([0]a[-1][-1] + [0]a[1][1]) + 0.2f*([0]a[0][-2] + [0]a[2][1]) + 0.1f*[0]a[0][0]",
            vec![13, 17],
        ),
        _ => (
            "grid g[k][n][m];",
            "[0:k-1][0:n-1][0:m-1]",
            "0.3f*([0]a[-1][1][-1] + [0]a[1][-2][1]) + 0.4f*[0]a[0][0][0]",
            vec![9, 10, 11],
        ),
    };
    let source = format!(
        "int n;\nint m;\nint k;\nint steps;\n{grid}\nfloat griddata a on g at 0,1 boundary {mode};\n\
         iterate steps {{\n  stencil s {{ {subset} : [1]a{c} = {reads}; }}\n  \
         reduction total + {{ {subset} : [1]a{c}; }}\n}}\n",
        c = "[0]".repeat(rank)
    );
    let path = dir.join(format!("boundary_{mode}_{rank}d.sdsl"));
    std::fs::write(&path, source).expect("writes the program");
    let named = ["k", "n", "m"];
    let names = &named[3 - rank..];
    let mut sets: Vec<String> = names
        .iter()
        .zip(&dims)
        .map(|(n, d)| format!("{n}={d}"))
        .collect();
    for unused in &named[..3 - rank] {
        sets.push(format!("{unused}=1"));
    }
    sets.push("steps=5".into());
    // The 1-D program names its axis n.
    if rank == 1 {
        sets = vec!["n=700".into(), "m=1".into(), "k=1".into(), "steps=5".into()];
    }
    Case {
        path,
        sets,
        dims,
        fields: vec![("a", false)],
    }
}

#[test]
fn every_boundary_mode_matches_the_single_process_run() {
    if !mpirun_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        for rank in 1..=3 {
            check_case(&boundary_program(dir.path(), mode, rank), &[2, 3, 4]);
        }
    }
}

#[test]
fn c_per_rank_matches_on_every_boundary_mode() {
    if !mpirun_available() || !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for mode in ["clamp", "mirror", "periodic", "zero"] {
        for rank in 1..=3 {
            check_case_on(
                &boundary_program(dir.path(), mode, rank),
                &[3],
                &["--backend", "c"],
                representative_decompositions,
            );
        }
    }
}
