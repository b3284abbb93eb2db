//! Snapshots of the generated C: every example program as `stencilc emit
//! --target c` prints it, and the generated part of every embedded host as
//! `stencilc compile` writes it. A change to the C writer shows up here as a
//! readable diff; review it for indentation, names and source-line comments.

use crate::common;

use std::path::{Path, PathBuf};

use stencilc::back::c::{self, embed};
use stencilc::source::SourceFile;

fn files(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| extensions.iter().any(|x| e == *x))
        })
        .collect();
    paths.sort();
    paths
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// The file's name relative to `examples/`, as the generated header names it.
fn source(path: &Path) -> std::sync::Arc<SourceFile> {
    let text = std::fs::read_to_string(path).unwrap();
    let name = path
        .strip_prefix(common::examples_dir())
        .unwrap()
        .display()
        .to_string();
    SourceFile::new(name, text)
}

#[test]
fn emitted_c_of_every_example() {
    let paths = files(&common::examples_dir(), &["sdsl"]);
    assert!(paths.len() >= 6, "examples found: {}", paths.len());
    for path in paths {
        let program = stencilc::front::parse_program(source(&path))
            .and_then(stencilc::analysis::checked)
            .unwrap_or_else(|d| panic!("{d}"));
        let unit = c::emit_program(&program);
        assert!(unit.source.contains(&format!("int {}(", unit.run_symbol)));
        insta::assert_snapshot!(format!("emit_{}", stem(&path)), unit.source);
    }
}

#[test]
fn generated_part_of_every_embedded_host() {
    let paths = files(&common::examples_dir().join("embedded"), &["c", "cpp"]);
    assert!(paths.len() >= 3, "hosts found: {}", paths.len());
    for path in paths {
        let extern_c = path.extension().is_some_and(|e| e == "cpp");
        let host = source(&path);
        let regions = stencilc::front::parse_regions(host.clone())
            .and_then(stencilc::analysis::checked_regions)
            .unwrap_or_else(|d| panic!("{d}"));
        let output = embed::rewrite_host(&host, &regions, embed::EmbedOptions { extern_c });
        // The host's own text follows the first `#line 1`; it is the input, unchanged.
        let generated = &output[..output.find("#line 1 ").expect("a #line before the host")];
        insta::assert_snapshot!(format!("compile_{}", stem(&path)), generated);
    }
}
