//! The scripts of `bench/`: most run only when a GPU is lent, rarely and on a
//! short lease, so their syntax, the scripts they name and the time guard of
//! `bench/gpu/next_lease.sh` are checked here, where they would otherwise
//! break unseen.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench")
}

/// Every file under `bench/` whose extension is `extension`.
fn bench_files(extension: &str) -> Vec<PathBuf> {
    common::files_under(&bench_dir(), extension)
}

fn python3() -> bool {
    let probe = Command::new("python3")
        .arg("--version")
        .output()
        .map_err(|e| format!("python3 not found: {e}"))
        .and_then(|o| {
            o.status
                .success()
                .then_some(())
                .ok_or_else(|| "python3 --version failed".to_string())
        });
    common::runtime_available("python3", probe)
}

/// Runs `command` with `args` then each script, asserting that it succeeds.
fn each_succeeds(scripts: Vec<PathBuf>, command: &str, args: &[&str]) {
    for script in scripts {
        let out = Command::new(command)
            .args(args)
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn every_bench_shell_script_parses() {
    let scripts = bench_files("sh");
    assert!(scripts.len() >= 5, "{scripts:?}");
    each_succeeds(scripts, "bash", &["-n"]);
}

#[test]
fn every_bench_python_script_parses() {
    if !python3() {
        return;
    }
    let scripts = bench_files("py");
    assert!(scripts.len() >= 4, "{scripts:?}");
    // Parsed, not compiled: nothing is written beside the script.
    let parse = "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])";
    each_succeeds(scripts, "python3", &["-c", parse]);
}

#[test]
fn every_bench_gpu_script_a_script_or_page_names_exists() {
    let gpu = bench_dir().join("gpu");
    let mut named = Vec::new();
    for page in bench_files("sh")
        .into_iter()
        .chain(bench_files("md"))
        .chain(bench_files("py"))
    {
        let text = std::fs::read_to_string(&page).unwrap();
        for (at, _) in text.match_indices("bench/gpu/") {
            let rest = &text[at + "bench/gpu/".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '.')
                .collect();
            let name = name.trim_end_matches('.');
            if name.ends_with(".sh") || name.ends_with(".py") {
                named.push((page.clone(), name.to_string()));
            }
        }
    }
    assert!(
        named.iter().any(|(_, n)| n == "device_prepare.sh"),
        "{named:?}"
    );
    for (page, name) in named {
        assert!(
            gpu.join(&name).is_file(),
            "{} names bench/gpu/{name}, which does not exist",
            page.display()
        );
    }
}

#[test]
fn next_lease_skips_what_its_budget_leaves_no_time_for() {
    let out = tempfile::tempdir().unwrap();
    let result = Command::new("bash")
        .arg(bench_dir().join("gpu/next_lease.sh"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("OUT", out.path())
        .env("BUDGET", "0")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&result.stdout);
    assert!(result.status.success(), "{text}");
    // Each of its three parts is skipped, with the time it needs, and nothing
    // ran: no test log, no bench-gpu results.
    assert_eq!(text.matches("== skipped (needs ").count(), 3, "{text}");
    assert!(text.contains("next_lease.sh done"), "{text}");
    assert!(!out.path().join("tests.log").exists());
    assert!(!out.path().join("f32").exists());
}
