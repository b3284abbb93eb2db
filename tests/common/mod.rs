//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository's `examples/` folder.
pub fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// Whether a runtime (`cc`, `opencl`, `nvrtc`, `gpu`) that a test needs is here.
///
/// When it is not, the test should return early: this prints why it is skipped,
/// unless `STENCILC_REQUIRE` (a comma-separated list, as CI sets it) names the
/// runtime, in which case the missing runtime fails the test.
pub fn runtime_available(name: &str, probe: Result<(), String>) -> bool {
    match probe {
        Ok(()) => true,
        Err(why) => {
            let required = std::env::var("STENCILC_REQUIRE").unwrap_or_default();
            if required.split(',').any(|r| r.trim() == name) {
                panic!("runtime `{name}` is required (STENCILC_REQUIRE) but unavailable: {why}");
            }
            eprintln!("skipping: runtime `{name}` unavailable: {why}");
            false
        }
    }
}
/// Random valid SDSL programs for the differential property tests.
pub mod gen;
