//! OpenCL per rank moves only what halo exchanges need between the device and
//! the host: the faces it sends down, the ghosts it receives up (the
//! `device_bytes_down`/`device_bytes_up` of `--json`'s `per_rank`, checked
//! against the number computed from the block and the reach), and stays bit
//! for bit the single-process run on 2x2 ranks with diagonal reads, where the
//! corners travel through the slabs, on periodic and clamped edges.

use super::*;

#[test]
fn opencl_per_rank_moves_the_faces_not_the_block() {
    if !mpirun_available() || !opencl_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let program = common::examples_dir()
        .parent()
        .expect("repository")
        .join("bench/programs/j2d5pt.sdsl");
    // 37 rows over 2 ranks: blocks of 19 and 18 rows, each with one ghost row
    // on both sides (the reach is 1); the columns are not cut.
    let (n, steps) = (37u64, 6u64);
    let mut command = mpirun(2);
    command.arg(STENCILC).args([
        "run",
        &program.display().to_string(),
        "--set",
        &format!("n={n}"),
        "--set",
        &format!("steps={steps}"),
        "--backend",
        "opencl",
        "--decompose",
        "2x1",
        "--json",
        "-q",
    ]);
    command.current_dir(dir.path());
    let ran = run_limited(command);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&ran.stdout).expect("--json output");
    let ranks = json["decomposition"]["per_rank"]
        .as_array()
        .expect("per_rank");
    assert_eq!(ranks.len(), 2);
    let row = n * 4; // one row of floats
    for (rank, own) in ranks.iter().zip([19u64, 18]) {
        // Each sweep exchanges [0]a: the row a neighbour reads goes down (not
        // in the first sweep, when the host's copy is still the input's), the
        // ghost row received goes up. The end reads back both levels whole
        // (block and ghost rows) for the output.
        let down = (steps - 1) * row + 2 * (own + 2) * row;
        let up = steps * row;
        assert_eq!(
            rank["device_bytes_down"], down,
            "rank {}: {rank}",
            rank["rank"]
        );
        assert_eq!(rank["device_bytes_up"], up, "rank {}: {rank}", rank["rank"]);
        // The halo itself: one row each way per sweep.
        assert_eq!(rank["bytes_sent"], steps * row, "rank {}", rank["rank"]);
    }
}

/// Only `2x2`.
fn two_by_two(_np: usize, _rank: usize) -> Vec<String> {
    vec!["2x2".to_string()]
}

#[test]
fn opencl_per_rank_on_2x2_ranks_reads_the_corners_on_every_edge() {
    if !mpirun_available() || !opencl_available() {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    for mode in ["periodic", "clamp", "mirror"] {
        check_case_on(
            &boundary_program(dir.path(), mode, 2),
            &[4],
            &["--backend", "opencl"],
            two_by_two,
        );
    }
}
