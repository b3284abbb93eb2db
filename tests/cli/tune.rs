//! `stencilc tune` end to end on a small grid: the chosen configuration runs
//! and gives the interpreter's result, `run -v` then reports using it, the
//! database survives two tuners at once, and bad input is refused clearly.

use std::path::Path;
use std::process::{Command, Output};

use crate::common;

/// A 2-D Jacobi on a grid that is not a multiple of any block or tile, with a
/// clamped border and a check every 2 iterations.
const PROGRAM: &str = "int n;\nint steps;\ngrid g[n][n+3];\n\
    float griddata a on g at 0,1 boundary clamp;\n\
    iterate steps {\n  stencil s {\n    [0:n-1][0:n+2] : [1]a[0][0] = 0.2f*([0]a[-1][0] + [0]a[1][0] \
    + [0]a[0][-1] + [0]a[0][1] + [0]a[0][0]) + 0.01f;\n  }\n\
    reduction d max {\n    [0:n-1][0:n+2] : fabs([1]a[0][0] - [0]a[0][0]);\n  }\n\
    } check (d < 1e-30) every 2 iterations\n";

fn stencilc(cache: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(args)
        .current_dir(dir)
        .env("STENCILC_CACHE_DIR", cache)
        .output()
        .expect("stencilc runs")
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn c_available() -> bool {
    let probe = stencilc::exec::native::Compiler::from_env()
        .map(|_| ())
        .map_err(|e| e.to_string());
    common::runtime_available("cc", probe)
}

fn opencl_available() -> bool {
    let probe = stencilc::exec::opencl::probe()
        .map(|_| ())
        .map_err(|e| e.to_string());
    common::runtime_available("opencl", probe)
}

/// Tunes `backend` with `extra` arguments, checks the JSON report, then runs
/// the best configuration's flags with `--verify` (against the interpreter)
/// and `run -v` (which must use the tuned schedule).
fn tune_then_run(backend: &str, extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::write(dir.path().join("p.sdsl"), PROGRAM).unwrap();
    let sets = ["--set", "n=21", "--set", "steps=5"];
    let mut args = vec!["tune", "p.sdsl", "--backend", backend, "--json"];
    args.extend(sets);
    // PNG for one back-end, SVG for the other.
    let plot = if backend == "c" {
        "times.png"
    } else {
        "times.svg"
    };
    args.extend(["--repeats", "1", "--plot", plot]);
    args.extend(extra);
    let tuned = stencilc(&cache, dir.path(), &args);
    assert!(tuned.status.success(), "{}", text(&tuned));
    let report: serde_json::Value = serde_json::from_slice(&tuned.stdout).expect("JSON report");
    let measured = report["measurements"].as_array().unwrap();
    assert!(!measured.is_empty());
    assert!(
        measured
            .iter()
            .all(|m| m["outcome"]["status"] == "measured"),
        "{report:#}"
    );
    assert_eq!(
        report["considered"].as_u64().unwrap(),
        report["pruned"].as_u64().unwrap() + report["candidates"].as_u64().unwrap()
    );
    if backend == "c" {
        assert!(report["best"]["pragma"].is_null(), "{report:#}");
    } else {
        let pragma = report["best"]["pragma"].as_str().unwrap();
        assert!(pragma.starts_with("#pragma sdsl begin gpu("), "{pragma}");
    }
    let drawn = std::fs::read(dir.path().join(plot)).unwrap();
    if backend == "c" {
        assert!(drawn.starts_with(b"\x89PNG"), "not a PNG");
    } else {
        assert!(String::from_utf8_lossy(&drawn).contains("<svg"));
    }

    // The best configuration, spelled as flags, runs and gives the interpreter's result.
    let flags = report["best"]["flags"].as_str().unwrap().to_string();
    let mut run = vec![
        "run",
        "p.sdsl",
        "--backend",
        backend,
        "--verify",
        "--no-tuned",
    ];
    run.extend(sets);
    run.extend(flags.split_whitespace());
    let verified = stencilc(&cache, dir.path(), &run);
    assert!(verified.status.success(), "{}", text(&verified));
    assert!(
        String::from_utf8_lossy(&verified.stdout).contains("passed"),
        "{}",
        text(&verified)
    );

    // A following `run -v` finds and uses the tuned schedule, and is still right.
    let mut run = vec!["run", "p.sdsl", "--backend", backend, "-v", "--verify"];
    run.extend(sets);
    let used = stencilc(&cache, dir.path(), &run);
    assert!(used.status.success(), "{}", text(&used));
    let stderr = String::from_utf8_lossy(&used.stderr);
    assert!(
        stderr.contains("using the tuned schedule"),
        "{}",
        text(&used)
    );
    // Other parameter values have no tuned schedule.
    let other = stencilc(
        &cache,
        dir.path(),
        &[
            "run",
            "p.sdsl",
            "--backend",
            backend,
            "-v",
            "--set",
            "n=22",
            "--set",
            "steps=5",
        ],
    );
    assert!(other.status.success(), "{}", text(&other));
    assert!(!String::from_utf8_lossy(&other.stderr).contains("using the tuned schedule"));
}

#[test]
fn tune_c_picks_a_configuration_that_run_uses() {
    if c_available() {
        tune_then_run("c", &["--exhaustive"]);
    }
}

#[test]
fn tune_opencl_picks_a_configuration_that_run_uses() {
    if opencl_available() {
        // A small space from a configuration file keeps PoCL's compilations few.
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("space.conf");
        std::fs::write(
            &config,
            "# sdslc flags\n-b overtile\n# nvcc flags\n-O3\n# Space dims\n2\n\
             # blocks\n16 32 16\n4 4 1\n# tiles\n1 1 1\n1 2 1\n# time\n1 2 1\n",
        )
        .unwrap();
        tune_then_run("opencl", &["--config", config.to_str().unwrap()]);
    }
}

#[test]
fn two_tuners_at_once_both_land_in_the_database() {
    if !c_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::write(dir.path().join("p.sdsl"), PROGRAM).unwrap();
    let children: Vec<_> = ["19", "20"]
        .iter()
        .map(|n| {
            Command::new(env!("CARGO_BIN_EXE_stencilc"))
                .args(["tune", "p.sdsl", "--backend", "c", "--repeats", "1"])
                .args(["--set", &format!("n={n}"), "--set", "steps=2"])
                .current_dir(dir.path())
                .env("STENCILC_CACHE_DIR", &cache)
                .output()
                .expect("stencilc runs")
        })
        .collect();
    for child in &children {
        assert!(child.status.success(), "{}", text(child));
    }
    let db = stencilc::tune::db::Database::at(cache.join(stencilc::tune::db::FILE_NAME));
    assert_eq!(db.entries().unwrap().len(), 2);
}

#[test]
fn a_malformed_config_file_is_shown_at_its_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.sdsl"), PROGRAM).unwrap();
    std::fs::write(
        dir.path().join("bad.conf"),
        "-b overtile\n-O3\n2\n8 64 8\n2 x 2\n",
    )
    .unwrap();
    let out = stencilc(
        &dir.path().join("cache"),
        dir.path(),
        &[
            "tune",
            "p.sdsl",
            "--backend",
            "c",
            "--set",
            "n=8",
            "--set",
            "steps=1",
            "--config",
            "bad.conf",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.conf:5:3"), "{stderr}");
    assert!(stderr.contains("`x` is not a positive integer"), "{stderr}");
    // A plot of an unknown format is refused before anything is measured.
    let out = stencilc(
        &dir.path().join("cache"),
        dir.path(),
        &[
            "tune",
            "p.sdsl",
            "--backend",
            "c",
            "--set",
            "n=8",
            "--set",
            "steps=1",
            "--plot",
            "times.jpg",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("neither .svg nor .png"));
}

#[test]
fn a_corrupted_database_is_set_aside_by_tune_and_ignored_by_run() {
    if !c_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(cache.join("tuning.json"), "{\"format\": 1, \"entries\": [").unwrap();
    std::fs::write(dir.path().join("p.sdsl"), PROGRAM).unwrap();
    let sets = ["--set", "n=9", "--set", "steps=2"];
    let mut run = vec!["run", "p.sdsl", "--backend", "c"];
    run.extend(sets);
    let ran = stencilc(&cache, dir.path(), &run);
    assert!(ran.status.success(), "{}", text(&ran));
    assert!(String::from_utf8_lossy(&ran.stderr).contains("unreadable"));
    let mut tune = vec!["tune", "p.sdsl", "--backend", "c", "--repeats", "1"];
    tune.extend(sets);
    let tuned = stencilc(&cache, dir.path(), &tune);
    assert!(tuned.status.success(), "{}", text(&tuned));
    assert!(
        String::from_utf8_lossy(&tuned.stderr).contains("was corrupted"),
        "{}",
        text(&tuned)
    );
    let db = stencilc::tune::db::Database::at(cache.join("tuning.json"));
    assert_eq!(db.entries().unwrap().len(), 1);
}

/// `explain --target opencl --json` of `file` (no GPU needed): the schedule in
/// words, the kernels and the predicted iteration, what a schedule decides.
fn explained_schedule(dir: &Path, file: &str, sets: &[&str], flags: &[&str]) -> serde_json::Value {
    let mut args = vec!["explain", file, "--target", "opencl", "--json"];
    args.extend(sets);
    args.extend(flags);
    let out = stencilc(&dir.join("cache"), dir, &args);
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    serde_json::json!({
        "schedule": report["schedule"],
        "kernels": report["kernels"],
        "iteration_seconds": report["iteration_seconds"],
    })
}

/// [`PROGRAM`] as a region of a C file whose pragma is `pragma`.
fn host_with(pragma: &str) -> String {
    format!(
        "#include <stdio.h>\n{pragma}\n{PROGRAM}#pragma sdsl end\nint main(void) {{ return 0; }}\n"
    )
}

#[test]
fn a_pasted_pragma_with_every_gpu_knob_gives_the_schedule_of_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.sdsl"), PROGRAM).unwrap();
    let pragma = "#pragma sdsl begin gpu(block:32,4 tile:1,2 vector:2 shm:none time:2)";
    std::fs::write(dir.path().join("p.c"), host_with(pragma)).unwrap();
    let sets = ["--set", "n=64", "--set", "steps=6"];
    let flags = [
        "--block", "32,4", "--tile", "1,2", "--vector", "2", "--shm", "none", "--time", "2",
    ];
    let pasted = explained_schedule(dir.path(), "p.c", &sets, &[]);
    let flagged = explained_schedule(dir.path(), "p.sdsl", &sets, &flags);
    assert_eq!(pasted, flagged);
    assert!(
        pasted["schedule"].as_str().unwrap().contains("vector 2"),
        "{pasted:#}"
    );
    // The pragma's `vector:` is what made the difference: without it the
    // schedule is another.
    let without = explained_schedule(dir.path(), "p.sdsl", &sets, &flags[..6]);
    assert_ne!(pasted["schedule"], without["schedule"], "{without:#}");
    // A flag still wins over the pragma.
    let overridden = explained_schedule(dir.path(), "p.c", &sets, &["--vector", "4"]);
    assert!(
        overridden["schedule"]
            .as_str()
            .unwrap()
            .contains("vector 4"),
        "{overridden:#}"
    );
    // A misspelt knob is refused at its place, naming the options.
    let bad = "#pragma sdsl begin gpu(block:32,4 fuse:yes)";
    std::fs::write(dir.path().join("bad.c"), host_with(bad)).unwrap();
    let mut args = vec!["explain", "bad.c", "--target", "opencl"];
    args.extend(sets);
    let out = stencilc(&dir.path().join("cache"), dir.path(), &args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("option `fuse` takes `on` or `off`"),
        "{}",
        text(&out)
    );
}

#[test]
fn tune_prints_a_pragma_and_flags_that_reproduce_its_best_and_says_faster() {
    if !opencl_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    std::fs::write(dir.path().join("p.sdsl"), PROGRAM).unwrap();
    std::fs::write(
        dir.path().join("space.conf"),
        "# sdslc flags\n-b overtile\n# nvcc flags\n-O3\n# Space dims\n2\n\
         # blocks\n16 32 16\n4 4 1\n# tiles\n1 1 1\n1 2 1\n# time\n1 2 1\n",
    )
    .unwrap();
    let sets = ["--set", "n=21", "--set", "steps=5"];
    let mut args = vec!["tune", "p.sdsl", "--backend", "opencl", "--no-save"];
    args.extend(["--repeats", "1", "--config", "space.conf"]);
    args.extend(sets);
    let tuned = stencilc(&cache, dir.path(), &args);
    assert!(tuned.status.success(), "{}", text(&tuned));
    let stdout = String::from_utf8_lossy(&tuned.stdout).into_owned();
    let best = stdout
        .lines()
        .find_map(|l| l.strip_prefix("best: "))
        .unwrap_or_else(|| panic!("no best line: {stdout}"));
    assert!(
        best.contains("x faster than the first (best predicted) configuration")
            || best.contains("the first configuration measured"),
        "{best}"
    );
    assert!(!best.contains("x the first"), "{best}");
    let flags = best.split(" : ").next().unwrap();
    let pragma = stdout
        .lines()
        .find(|l| l.starts_with("#pragma sdsl begin gpu("))
        .unwrap_or_else(|| panic!("no pragma line: {stdout}"));
    // Every knob of the flags is in the pragma.
    for knob in ["block", "tile", "vector", "shm", "time"] {
        assert_eq!(
            flags.contains(&format!("--{knob} ")),
            pragma.contains(&format!("{knob}:")),
            "{knob}: {flags} against {pragma}"
        );
    }
    // Pasted into a region, the pragma asks for the schedule the flags do.
    std::fs::write(dir.path().join("p.c"), host_with(pragma)).unwrap();
    let flags: Vec<&str> = flags.split_whitespace().collect();
    assert_eq!(
        explained_schedule(dir.path(), "p.c", &sets, &[]),
        explained_schedule(dir.path(), "p.sdsl", &sets, &flags)
    );
}
