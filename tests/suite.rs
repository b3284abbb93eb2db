//! The test suite's own machinery: how a test skipped for a missing runtime is
//! reported, and that every committed regression file is replayed.

mod common;

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

/// Every `*.proptest-regressions` file under `tests/`.
fn regression_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            regression_files(&path, found);
        } else if path
            .extension()
            .is_some_and(|e| e == common::REGRESSIONS_EXTENSION)
        {
            found.push(path);
        }
    }
}

/// A regression file is read only by the property tests of the source file
/// beside it, and only if they use [`common::proptest_config`]: one moved
/// without its test (or left behind) would silently stop being replayed.
#[test]
fn every_regression_file_is_replayed_by_the_test_beside_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    regression_files(&root.join("tests"), &mut files);
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
        let relative = source.strip_prefix(root).unwrap().display().to_string();
        let seeds = common::proptest_config(1)
            .failure_persistence
            .unwrap()
            .load_persisted_failures2(Some(Box::leak(relative.into_boxed_str())));
        assert!(!seeds.is_empty(), "no seed read from {}", file.display());
    }
}
