//! Pass-level text tests (`tests/filetests/*.sdsl`): each file's first line
//! names a `stencilc` command (`// run: emit --target kir --vector 4`), run
//! on the file itself; its trailing comment block, after the line
//! `// ---- expected ----`, is the output expected, one `// ` line per line.
//! They pin lowering decisions in the kernel IR's text without going through a
//! GPU language. `STENCILC_BLESS=1` rewrites each expected block with what the
//! command prints now (read the diff before committing it).
//! tests/filetests/README.md describes the format.

use std::path::{Path, PathBuf};
use std::process::Command;

const RUN: &str = "// run: ";
const EXPECTED: &str = "// ---- expected ----";

/// A filetest split into its command, its program part and its expected output.
struct FileTest {
    args: Vec<String>,
    /// Everything before the expected block, the marker line excluded.
    head: String,
    expected: String,
}

fn parse(path: &Path, text: &str) -> FileTest {
    let name = path.display();
    let first = text.lines().next().unwrap_or_default();
    let command = first
        .strip_prefix(RUN)
        .unwrap_or_else(|| panic!("{name}: the first line must be `{RUN}ARGS`"));
    let (head, block) = match text.find(&format!("\n{EXPECTED}\n")) {
        Some(at) => (&text[..=at], &text[at + EXPECTED.len() + 2..]),
        None => (text, ""),
    };
    let mut expected = String::new();
    for line in block.lines() {
        let line = line
            .strip_prefix("// ")
            .or_else(|| (line == "//").then_some(""))
            .unwrap_or_else(|| panic!("{name}: an expected line must start with `//`: {line:?}"));
        expected.push_str(line);
        expected.push('\n');
    }
    FileTest {
        args: command.split_whitespace().map(String::from).collect(),
        head: head.to_string(),
        expected,
    }
}

/// The file with `output` as its expected block.
fn blessed(test: &FileTest, output: &str) -> String {
    let mut text = test.head.clone();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(EXPECTED);
    text.push('\n');
    for line in output.lines() {
        if line.is_empty() {
            text.push_str("//\n");
        } else {
            text.push_str("// ");
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

/// The first line where `want` and `got` differ, for the failure message.
fn first_difference(want: &str, got: &str) -> String {
    let (mut w, mut g) = (want.lines(), got.lines());
    for n in 1.. {
        match (w.next(), g.next()) {
            (None, None) => break,
            (a, b) if a == b => continue,
            (a, b) => {
                return format!("line {n} of the output:\n  expected: {a:?}\n  got:      {b:?}")
            }
        }
    }
    "the outputs differ only in line ends".to_string()
}

/// The filetests, as paths relative to the crate root (the output names the
/// file, so a relative path keeps it the same on every machine).
fn filetests(root: &Path) -> Vec<PathBuf> {
    let dir = Path::new("tests/filetests");
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
        .expect("tests/filetests exists")
        .flatten()
        .map(|e| dir.join(e.file_name()))
        .filter(|p| p.extension().is_some_and(|e| e == "sdsl"))
        .collect();
    files.sort();
    files
}

#[test]
fn filetests_print_what_their_expected_blocks_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("STENCILC_BLESS").is_some_and(|v| v == "1");
    let files = filetests(root);
    assert!(!files.is_empty(), "no filetests found in tests/filetests");
    let mut failures = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(root.join(&path)).expect("a readable filetest");
        let test = parse(&path, &text);
        let out = Command::new(env!("CARGO_BIN_EXE_stencilc"))
            .args(&test.args)
            .arg(&path)
            .current_dir(root)
            .output()
            .expect("stencilc runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            failures.push(format!(
                "{}: `stencilc {} {}` failed: {}",
                path.display(),
                test.args.join(" "),
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            ));
            continue;
        }
        if stdout == test.expected {
            continue;
        }
        if bless {
            std::fs::write(root.join(&path), blessed(&test, &stdout))
                .expect("the filetest is writable");
        } else {
            failures.push(format!(
                "{}: {}\n  (rerun with STENCILC_BLESS=1 to accept the new output)",
                path.display(),
                first_difference(&test.expected, &stdout)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_filetest_reads_back_what_blessing_writes() {
    let text = "// run: emit --target kir\nint n;\n";
    let test = parse(Path::new("t.sdsl"), text);
    assert_eq!(test.args, ["emit", "--target", "kir"]);
    let written = blessed(&test, "a\n\n  b\n");
    assert!(written.ends_with("int n;\n// ---- expected ----\n// a\n//\n//   b\n"));
    let again = parse(Path::new("t.sdsl"), &written);
    assert_eq!(again.expected, "a\n\n  b\n");
    assert_eq!(again.head, text);
}
