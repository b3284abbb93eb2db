//! The module layering of the book's "Architecture and layout" chapter, checked: a
//! top-level module may use only modules of its own layer or above it (a lower
//! number here), and no two top-level modules may use each other, even through
//! others. Uses are `crate::…` and `stencilc::…` paths (imports, qualified
//! paths, intra-doc links and `$crate::` in macros) in every file of the module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module and its layer; a module may use those of a lower or
/// equal number.
const LAYERS: &[(&str, u32)] = &[
    ("source", 1),
    ("diag", 1),
    // Writing files whole, and what an exit cleans up: used by every layer
    // that writes or starts a child process.
    ("files", 1),
    ("ir", 2),
    ("front", 3),
    // The profiles of marked reads (and the expression synthesis over them)
    // need nothing but themselves; the emulator in `exec` fills them in.
    ("synth", 3),
    ("analysis", 4),
    // Field buffers and what every executor shares about a run; binding
    // parameters checks every access with `analysis`'s run-time bounds.
    ("data", 4),
    // Reading and writing field buffers in files needs only the buffers.
    ("io", 4),
    // The CUDA emulator runs kernels of the CUDA front-end and fills in
    // `synth`'s profiles of marked reads.
    ("emu", 4),
    // KaniCUDA's profiler: marked reads profiled in the emulator, then `synth`.
    ("kanicuda", 4),
    // The reference interpreter, the oracle: needs only `ir` and `data`.
    ("interp", 5),
    ("schedule", 5),
    ("kir", 6),
    ("lower", 6),
    // The model costs lowered kernels, so it sits beside the printers of them.
    ("model", 7),
    ("back", 7),
    // The one place that chooses a schedule or CPU plan (with the model) and
    // lowers it, above what it asks and prints with, below what runs or reports.
    ("driver", 8),
    // Runtimes run what the driver chose.
    ("exec", 9),
    // `stencilc map` plans C loop nests with the device presets of the model.
    ("map", 9),
    ("tune", 10),
    // Running a program on data in memory: what `cli` and the Python package share.
    ("session", 10),
    // `stencilc explain`'s report: the model's figures for kernels compiled
    // by NVRTC (in `exec`), for the command line and the Python package.
    ("explain", 10),
    // The benchmark suites run the executors and the model's predictions.
    ("bench", 10),
    ("cli", 10),
];

/// Uses allowed against the order, each with the reason. Empty: keep it so.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

fn layer(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|&(_, l)| l)
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `.rs` files of a top-level module (`src/m.rs` and everything under `src/m/`).
fn files_of(module: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let single = src_dir().join(format!("{module}.rs"));
    if single.is_file() {
        files.push(single);
    }
    let mut dirs = vec![src_dir().join(module)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The top-level modules a file's text names through `crate::` or
/// `stencilc::` paths, including `crate::{a, b::c}` groups, with line numbers.
fn uses(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for root in ["crate::", "stencilc::"] {
            let mut rest = line;
            while let Some(at) = rest.find(root) {
                let before = rest[..at].chars().next_back();
                let after = &rest[at + root.len()..];
                rest = after;
                // `crate::` must start a path (not `foo_crate::`).
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                if let Some(group) = after.strip_prefix('{') {
                    // Top-level names of a group: at brace depth 0.
                    let mut depth = 0;
                    let mut word = String::new();
                    let mut at_start = true;
                    for c in group.chars() {
                        match c {
                            '{' => depth += 1,
                            '}' if depth == 0 => break,
                            '}' => depth -= 1,
                            ',' if depth == 0 => at_start = true,
                            c if c.is_alphanumeric() || c == '_' => {
                                if at_start && depth == 0 {
                                    word.push(c);
                                }
                            }
                            _ => {
                                if !word.is_empty() {
                                    out.push((n + 1, std::mem::take(&mut word)));
                                    at_start = false;
                                }
                            }
                        }
                    }
                    if !word.is_empty() {
                        out.push((n + 1, word));
                    }
                } else {
                    let name: String = after
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.push((n + 1, name));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_top_level_module_has_a_layer() {
    let mut unknown = Vec::new();
    for entry in std::fs::read_dir(src_dir()).expect("src/").flatten() {
        let path = entry.path();
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let is_module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
        if is_module
            && !["lib", "main", "layering"].contains(&name.as_str())
            && layer(&name).is_none()
        {
            unknown.push(name);
        }
    }
    assert!(
        unknown.is_empty(),
        "top-level modules without a layer: {unknown:?}; add each to LAYERS in src/layering.rs \
         and to docs/src/architecture.md"
    );
}

#[test]
fn no_module_uses_one_below_it() {
    let mut violations = Vec::new();
    let mut graph: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for &(module, level) in LAYERS {
        for file in files_of(module) {
            let text = std::fs::read_to_string(&file).expect("readable source");
            for (line, used) in uses(&text) {
                if used == module || used == "self" || used == "super" {
                    continue;
                }
                let Some(used_level) = layer(&used) else {
                    continue; // an item of the crate root (none today) or a macro
                };
                graph.entry(module).or_default().insert(used.clone());
                let excepted = EXCEPTIONS
                    .iter()
                    .any(|&(from, to, _)| from == module && to == used);
                if used_level > level && !excepted {
                    let file = file
                        .strip_prefix(src_dir())
                        .unwrap_or(&file)
                        .display()
                        .to_string();
                    violations.push(format!(
                        "src/{file}:{line}: `{module}` (layer {level}) uses `{used}` (layer {used_level})"
                    ));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "uses against the layering (move the thing used to the layer that needs it, \
         or the user up):\n{}",
        violations.join("\n")
    );
    // Within one layer, uses must not go both ways (directly or through others).
    for &(start, _) in LAYERS {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<String> = graph.get(start).into_iter().flatten().cloned().collect();
        while let Some(m) = stack.pop() {
            assert_ne!(m, start, "`{start}` depends on itself through {seen:?}");
            if seen.insert(m.clone()) {
                stack.extend(graph.get(m.as_str()).into_iter().flatten().cloned());
            }
        }
    }
}

#[test]
fn uses_are_found_in_paths_groups_and_macros() {
    let text = "use crate::ir::{Program, Value};\n\
                use crate::{analysis::bounds, exec::{Buffer, FieldState}};\n\
                /// See [`x`](crate::lower::Target).\n\
                $crate::ir::ScalarType::Int => {}\n\
                let a = my_crate::kir::X; stencilc::back::c::emit();\n";
    let found: Vec<(usize, String)> = uses(text);
    let names: Vec<(usize, &str)> = found.iter().map(|(l, n)| (*l, n.as_str())).collect();
    assert_eq!(
        names,
        vec![
            (1, "ir"),
            (2, "analysis"),
            (2, "exec"),
            (3, "lower"),
            (4, "ir"),
            (5, "back")
        ]
    );
}
