//! The test suite's own machinery: how a test skipped for a missing runtime is
//! reported, that every committed regression file is replayed, and that every
//! snapshot sits where its test looks for it.

use crate::common;

use std::path::{Path, PathBuf};

use common::SkipPolicy;

#[test]
fn a_skipped_test_is_logged_once_per_test() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("skipped.txt");
    let policy = SkipPolicy {
        required: vec!["nvrtc".to_owned()],
        log: Some(log.clone()),
    };
    // A property test probes once per case: the second skip adds nothing.
    policy.skip("gpu::a_property", "opencl", "no platform:\n  PoCL missing");
    policy.skip("gpu::a_property", "opencl", "no platform:\n  PoCL missing");
    policy.skip("native::another", "cc", "`cc` not found");
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        text,
        "gpu::a_property: runtime `opencl` unavailable: no platform: PoCL missing\n\
         native::another: runtime `cc` unavailable: `cc` not found\n"
    );
}

#[test]
#[should_panic(expected = "runtime `nvrtc` is required")]
fn a_required_runtime_that_is_missing_fails() {
    let policy = SkipPolicy {
        required: vec!["cc".to_owned(), "nvrtc".to_owned()],
        log: None,
    };
    policy.skip("gpu::needs_nvrtc", "nvrtc", "libnvrtc.so not found");
}

#[test]
fn a_skip_names_the_running_test() {
    let test = common::current_test();
    assert!(
        test.ends_with("a_skip_names_the_running_test"),
        "test named {test}"
    );
    assert!(!test.contains('-'), "cargo's hash left in {test}");
}

/// Every file under `tests/` whose extension is `extension`.
fn files_under_tests(extension: &str) -> Vec<PathBuf> {
    common::files_under(&root().join("tests"), extension)
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A regression file is read only by the property tests of the source file
/// beside it, and only if they use [`common::proptest_config`]: one moved
/// without its test (or left behind) would silently stop being replayed.
#[test]
fn every_regression_file_is_replayed_by_the_test_beside_it() {
    let files = files_under_tests(common::REGRESSIONS_EXTENSION);
    assert!(!files.is_empty(), "no regression file under tests/");
    for file in files {
        let source = file.with_extension("rs");
        let text = std::fs::read_to_string(&source).unwrap_or_else(|e| {
            panic!(
                "{} has no test beside it ({}: {e})",
                file.display(),
                source.display()
            )
        });
        assert!(
            text.contains("common::proptest_config("),
            "{} does not configure its property tests with common::proptest_config",
            source.display()
        );
        // What `proptest!` in that file passes as its source: `file!()`.
        let relative = source.strip_prefix(root()).unwrap().display().to_string();
        let seeds = common::proptest_config(1)
            .failure_persistence
            .unwrap()
            .load_persisted_failures2(Some(Box::leak(relative.into_boxed_str())));
        assert!(!seeds.is_empty(), "no seed read from {}", file.display());
    }
}

/// Every snapshot sits where insta looks for it: in `snapshots/` beside the
/// test file its header names, as `<binary>__<module>__<name>.snap` (insta
/// names snapshots after the module path). A snapshot left behind when its
/// test moved would never be compared again, and the test would write a new one.
#[test]
fn every_snapshot_sits_beside_its_test() {
    let snapshots = files_under_tests("snap");
    assert!(!snapshots.is_empty(), "no snapshot under tests/");
    for snapshot in snapshots {
        let text = std::fs::read_to_string(&snapshot).unwrap();
        let source = text
            .lines()
            .take_while(|line| !line.is_empty())
            .find_map(|line| line.strip_prefix("source: "))
            .unwrap_or_else(|| panic!("{} has no `source:` line", snapshot.display()));
        let source = Path::new(source.trim_matches('"'));
        assert!(
            root().join(source).is_file(),
            "{}: its test {} does not exist",
            snapshot.display(),
            source.display()
        );
        let folder = root().join(source.parent().unwrap()).join("snapshots");
        assert_eq!(
            snapshot.parent().unwrap(),
            folder,
            "{} is not in its test's snapshot folder",
            snapshot.display()
        );
        // tests/<binary>/<module path>.rs: main.rs is the binary's root module,
        // a folder's mod.rs the folder's module.
        let inside: Vec<String> = source
            .strip_prefix("tests")
            .unwrap_or_else(|_| panic!("{}: its test is outside tests/", snapshot.display()))
            .with_extension("")
            .iter()
            .map(|part| part.to_string_lossy().into_owned())
            .filter(|part| part != "main" && part != "mod")
            .collect();
        let prefix = format!("{}__", inside.join("__"));
        let name = snapshot.file_name().unwrap().to_string_lossy();
        assert!(
            name.starts_with(&prefix),
            "{name} is named for another module than {} ({prefix}...)",
            source.display()
        );
    }
}
