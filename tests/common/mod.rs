//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};

/// The repository's `examples/` folder.
pub fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// Every file under `dir` (recursively) whose extension is `extension`, sorted.
pub fn files_under(dir: &std::path::Path, extension: &str) -> Vec<PathBuf> {
    fn walk(dir: &std::path::Path, extension: &str, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, extension, found);
            } else if path.extension().is_some_and(|e| e == extension) {
                found.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, extension, &mut found);
    found.sort();
    found
}

/// Every `.sdsl` program of `examples/` and then of `bench/programs/`, each
/// folder's sorted by name.
pub fn example_and_bench_programs() -> Vec<PathBuf> {
    let mut all = Vec::new();
    for dir in [examples_dir(), examples_dir().join("../bench/programs")] {
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "sdsl"))
            .collect();
        paths.sort();
        all.extend(paths);
    }
    all
}

/// The environment variable naming a file to which every skipped test appends
/// one line (`.ci/run` sets it and prints the count at the end).
pub const SKIP_LOG_VAR: &str = "STENCILC_SKIP_LOG";

/// The environment variable listing the runtimes whose absence fails a test
/// instead of skipping it (comma-separated, as CI sets it).
pub const REQUIRE_VAR: &str = "STENCILC_REQUIRE";

/// Whether a runtime (`cc`, `opencl`, `nvrtc`, `gpu`) that a test needs is here.
///
/// When it is not, the test should return early: the skip is reported (see
/// [`SkipPolicy::skip`]) unless `STENCILC_REQUIRE` names the runtime, in which
/// case the missing runtime fails the test.
pub fn runtime_available(name: &str, probe: Result<(), impl std::fmt::Display>) -> bool {
    match probe {
        Ok(()) => true,
        Err(why) => {
            SkipPolicy::from_env().skip(&current_test(), name, &why.to_string());
            false
        }
    }
}

/// Whether a C compiler (`$CC`, or `cc`) is here; a missing one is reported
/// as [`runtime_available`] says.
pub fn cc_available() -> bool {
    runtime_available(
        "cc",
        stencilc::exec::native::Compiler::from_env()
            .map(|_| ())
            .map_err(|e| e.to_string()),
    )
}

/// What to do when a runtime is missing: fail if it is required, otherwise
/// report the skip.
#[derive(Clone, Debug, Default)]
pub struct SkipPolicy {
    /// Runtimes whose absence fails the test.
    pub required: Vec<String>,
    /// The file each skip is appended to, one line per skipped test.
    pub log: Option<PathBuf>,
}

impl SkipPolicy {
    /// The policy `STENCILC_REQUIRE` and `STENCILC_SKIP_LOG` ask for.
    pub fn from_env() -> SkipPolicy {
        let required = std::env::var(REQUIRE_VAR).unwrap_or_default();
        SkipPolicy {
            required: required
                .split(',')
                .map(|r| r.trim().to_owned())
                .filter(|r| !r.is_empty())
                .collect(),
            log: std::env::var_os(SKIP_LOG_VAR)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
        }
    }

    /// Test `test` cannot run because runtime `runtime` is missing (`why`):
    /// panics if the runtime is required; otherwise, the first time this test
    /// skips in this process (a property test probes once per case), prints one
    /// line on stderr — past libtest's capture, so that `cargo test` shows it —
    /// and appends the same line to the log file.
    pub fn skip(&self, test: &str, runtime: &str, why: &str) {
        if self.required.iter().any(|r| r == runtime) {
            panic!("runtime `{runtime}` is required ({REQUIRE_VAR}) but unavailable: {why}");
        }
        static REPORTED: Mutex<BTreeSet<(Option<PathBuf>, String)>> = Mutex::new(BTreeSet::new());
        let first = REPORTED
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert((self.log.clone(), test.to_owned()));
        if !first {
            return;
        }
        // One line per skip, whatever the reason's text holds.
        let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
        let line = format!("{test}: runtime `{runtime}` unavailable: {why}\n");
        let _ = std::io::stderr().write_all(format!("skipped {line}").as_bytes());
        if let Some(path) = &self.log {
            // One `write` of a line opened for appending: lines from tests
            // running in parallel do not interleave.
            let appended = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut file| file.write_all(line.as_bytes()));
            if let Err(e) = appended {
                panic!(
                    "cannot append to the skip log {} ({SKIP_LOG_VAR}): {e}",
                    path.display()
                );
            }
        }
    }
}

/// The running test as `binary::path::to::test` (libtest names each test's
/// thread after the test; the binary's name loses cargo's hash suffix).
pub fn current_test() -> String {
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|stem| match stem.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_owned(),
            _ => stem,
        })
        .unwrap_or_else(|| "?".to_owned());
    let thread = std::thread::current();
    format!("{binary}::{}", thread.name().unwrap_or("?"))
}

/// The extension of the files that hold a property test's regression seeds.
pub const REGRESSIONS_EXTENSION: &str = "proptest-regressions";

/// The configuration of every property test: `cases` cases, and the regression
/// seeds committed beside the test's source file (`tests/a/b.rs` →
/// `tests/a/b.proptest-regressions`) replayed before them; a new failure's seed
/// is appended there. (proptest's default, `SourceParallel`, would look under
/// `tests/proptest-regressions/` as soon as the test's folder has a `main.rs`.)
pub fn proptest_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        max_global_rejects: 4096,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            REGRESSIONS_EXTENSION,
        ))),
        ..ProptestConfig::default()
    }
}

/// Random valid SDSL programs for the differential property tests.
pub mod gen;
