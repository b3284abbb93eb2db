//! `--verify` with `--decompose` (passing, and failing every rank on a
//! mismatch), CUDA per rank without a GPU, bad decompositions and inputs, and
//! a killed rank: every rank fails with a clear error, nothing is written,
//! nothing hangs.

use super::*;

/// `case` run under `mpirun -np np --decompose auto` with `extra` arguments
/// and `--verify`, its inputs written first; the output folder is `out`.
fn verified_run(case: &Case, np: usize, extra: &[&str], dir: &Path, out: &Path) -> Output {
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).expect("dir");
    std::fs::create_dir_all(out).expect("dir");
    for (i, (field, double)) in case.fields.iter().enumerate() {
        write_npy(
            &inputs.join(format!("{field}.npy")),
            &case.dims,
            *double,
            i as u64 + 1,
        );
    }
    let mut command = mpirun(np);
    command
        .arg(STENCILC)
        .args(run_args(case, &inputs, out))
        .args(["--decompose", "auto", "--verify"])
        .args(extra);
    run_limited(command)
}

#[test]
fn verify_with_decompose_passes_on_every_cpu_back_end() {
    if !mpirun_available() || !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let bench = common::examples_dir()
        .parent()
        .expect("repository")
        .join("bench/programs");
    // A reduction and a check, and a 3-D program.
    let checked = case(
        bench.join("j2d5pt_check.sdsl"),
        &["n=21", "steps=40"],
        &[21, 21],
        &[("a", false)],
    );
    let rician = case(
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
    );
    let opencl = opencl_available();
    for (name, case) in [("check", &checked), ("rician", &rician)] {
        for backend in ["interp", "c", "opencl"] {
            if backend == "opencl" && !opencl {
                continue;
            }
            let out = dir.path().join(format!("{name}_{backend}"));
            let ran = verified_run(case, 3, &["--backend", backend], dir.path(), &out);
            let stdout = String::from_utf8_lossy(&ran.stdout);
            let stderr = String::from_utf8_lossy(&ran.stderr);
            assert!(ran.status.success(), "{name} on {backend}: {stderr}");
            assert!(
                stdout.contains("verified against the interpreter: passed"),
                "{name} on {backend}: {stdout}"
            );
            assert!(out.join(format!("{}.npy", case.fields[0].0)).exists());
        }
    }
}

#[test]
fn verify_with_decompose_fails_every_rank_on_a_mismatch_without_output() {
    if !mpirun_available() || !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let rician = case(
        common::examples_dir().join("rician3d.sdsl"),
        &["dim0=9", "dim1=10", "dim2=11", "sigma=0.5", "lambda=0.1"],
        &[11, 10, 9],
        &[("U", true), ("G", true), ("F", true)],
    );
    // A compiler flag that changes the arithmetic (`sqrt` computes cube
    // roots): the ranks' C no longer computes what the interpreter does.
    let out = dir.path().join("out");
    let ran = verified_run(
        &rician,
        2,
        &[
            "--backend",
            "c",
            "--cflags=-O2 -fopenmp -ffp-contract=off -fwrapv -Dsqrt=cbrt",
        ],
        dir.path(),
        &out,
    );
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(!ran.status.success(), "the mismatch passed: {stderr}");
    assert!(
        stderr.contains("differs from the interpreter's"),
        "no difference reported: {stderr}"
    );
    assert!(
        stderr.contains("rank 0 of this run failed"),
        "rank 1 did not fail too: {stderr}"
    );
    let written: Vec<_> = std::fs::read_dir(&out)
        .expect("dir")
        .filter_map(|e| e.ok())
        .collect();
    assert!(written.is_empty(), "outputs written: {written:?}");
}

#[test]
fn cuda_per_rank_without_a_gpu_fails_on_every_rank() {
    if !mpirun_available() {
        return;
    }
    if let Ok(gpu) = stencilc::exec::cuda::probe() {
        println!("skipped: this machine has a CUDA GPU ({gpu}); see gpu_cuda_per_rank_*");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let program = common::examples_dir().join("jacobi2d.sdsl");
    let output = dir.path().join("out.npy");
    let mut command = mpirun(2);
    command
        .arg(STENCILC)
        .arg("run")
        .arg(&program)
        .args(["--set", "dim0=8", "--set", "dim1=8", "--backend", "cuda"])
        .arg(format!("--output=a={}", output.display()))
        .args(["--decompose", "2x1"]);
    assert_fails_on_every_rank(command, 2, "CUDA unavailable", &output);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn gpu_cuda_per_rank_matches_the_single_process_interpreter() {
    if !mpirun_available() {
        return;
    }
    for case in cases() {
        let name = case.path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if ["j2d5pt.sdsl", "jacobi2d.sdsl", "heat3d.sdsl"].contains(&name) {
            check_case_on(&case, &[1, 2, 3], &["--backend", "cuda"], outer_cut);
        }
    }
}

/// Runs a bad command under mpirun: it fails, says `message` on every rank,
/// and leaves no output.
fn assert_fails_on_every_rank(command: Command, np: usize, message: &str, output: &Path) {
    let ran = run_limited(command);
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(!ran.status.success(), "succeeded: {stderr}");
    assert!(
        stderr.matches("error:").count() >= np,
        "not every rank said why: {stderr}"
    );
    assert!(stderr.contains(message), "{message:?} not in: {stderr}");
    assert!(!output.exists(), "an output was written");
    let leftovers: Vec<_> = std::fs::read_dir(output.parent().expect("dir"))
        .expect("dir")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("stencilc-mpi"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn bad_decompositions_fail_on_every_rank_without_output() {
    if !mpirun_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let program = common::examples_dir().join("jacobi2d.sdsl");
    let output = dir.path().join("out.npy");
    let bad = [
        (
            3,
            "2x2",
            &["dim0=8", "dim1=8"][..],
            "makes 4 ranks, but this run has 3",
        ),
        (
            4,
            "4x1",
            &["dim0=8", "dim1=3"][..],
            "4 ranks along axis 0, which has only 3 points",
        ),
        (
            2,
            "2x1x1",
            &["dim0=8", "dim1=8"][..],
            "gives 3 axes but the grid",
        ),
        (
            2,
            "two",
            &["dim0=8", "dim1=8"][..],
            "is neither `auto` nor ranks per axis",
        ),
    ];
    for (np, decomposition, sets, message) in bad {
        let mut command = mpirun(np);
        command.arg(STENCILC).arg("run").arg(&program);
        for set in sets {
            command.args(["--set", set]);
        }
        command
            .arg(format!("--output=a={}", output.display()))
            .args(["--decompose", decomposition]);
        assert_fails_on_every_rank(command, np, message, &output);
    }
}

/// Layouts that cannot be cut say what would work: a block thinner than the
/// reach names the most ranks the axis takes, and grids of different sizes
/// point to one rank (no decomposition helps them).
#[test]
fn layouts_that_cannot_be_cut_say_what_would_work() {
    if !mpirun_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let two_grids = dir.path().join("two_grids.sdsl");
    std::fs::write(
        &two_grids,
        "int n;\nint m;\ngrid g[n][n];\ngrid h[m][m];\n\
         float griddata a on g at 0,1;\nfloat griddata b on h at 0;\n\
         iterate 2 {\n    stencil s {\n        [1:n-2][1:n-2] : [1]a[0][0] = [0]a[0][1] + [0]b[0][0];\n    }\n}\n",
    )
    .expect("program");
    let box2d2r = common::examples_dir().join("../bench/programs/box2d2r.sdsl");
    let output = dir.path().join("out.npy");
    let cases = [
        (
            &two_grids,
            &["n=8", "m=10"][..],
            "2x1",
            "has grids of different sizes (8x8, 10x10)",
            "or run it on one rank (`mpirun -np 1`",
        ),
        (
            &box2d2r,
            &["n=5", "steps=1"][..],
            "3x1",
            "blocks of 1 points along axis 0 are thinner than the program's reach (2)",
            "give fewer ranks along axis 0 (at most 2)",
        ),
    ];
    for (program, sets, decomposition, message, help) in cases {
        let np: usize = decomposition
            .split('x')
            .map(|d| d.parse::<usize>().unwrap())
            .product();
        let mut command = mpirun(np);
        command.arg(STENCILC).arg("run").arg(program);
        for set in sets {
            command.args(["--set", set]);
        }
        command
            .arg(format!("--output=a={}", output.display()))
            .args(["--decompose", decomposition]);
        let ran = run_limited(command);
        let stderr = String::from_utf8_lossy(&ran.stderr);
        assert!(!ran.status.success(), "succeeded: {stderr}");
        assert!(stderr.contains(message), "{message:?} not in: {stderr}");
        assert!(stderr.contains(help), "{help:?} not in: {stderr}");
        assert!(!output.exists(), "an output was written");
    }
}

#[test]
fn an_input_missing_on_one_rank_fails_every_rank() {
    if !mpirun_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let program = common::examples_dir().join("jacobi2d.sdsl");
    let input = dir.path().join("a.npy");
    write_npy(&input, &[12, 14], false, 3);
    let output = dir.path().join("out.npy");
    // MPMD: rank 1 is given a file that is not there (as if its machine
    // lacked it); rank 0 has it.
    let rank_args = |input: &Path| {
        vec![
            STENCILC.to_string(),
            "run".into(),
            program.display().to_string(),
            format!("--input=a={}", input.display()),
            format!("--output=a={}", output.display()),
            "--decompose".into(),
            "2x1".into(),
        ]
    };
    let mut command = mpirun(1);
    command
        .args(rank_args(&input))
        .args([":", "-np", "1"])
        .args(rank_args(&dir.path().join("missing.npy")));
    assert_fails_on_every_rank(command, 2, "rank 1 of this run failed", &output);
}

#[test]
fn a_killed_rank_ends_the_run_instead_of_hanging_it() {
    if !mpirun_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let program = common::examples_dir()
        .parent()
        .expect("repository")
        .join("bench/programs/j2d5pt.sdsl");
    let output = dir.path().join("out.npy");
    let args = format!(
        "run {} --set n=400 --set steps=100000 --output=a={} --decompose 2x1",
        program.display(),
        output.display()
    );
    // Rank 1 is killed (SIGKILL) two seconds into a run that would take
    // minutes; rank 0 is then waiting for its halo.
    let mut command = mpirun(1);
    command
        .args([STENCILC])
        .args(args.split(' '))
        .args([":", "-np", "1", "sh", "-c"])
        .arg(format!(
            "{STENCILC} {args} & pid=$!; sleep 2; kill -9 $pid; wait $pid"
        ));
    let started = Instant::now();
    let ran = run_limited(command);
    assert!(!ran.status.success(), "the run succeeded");
    assert!(started.elapsed() < LIMIT);
    assert!(!output.exists(), "an output was written");
}
