//! The shell commands shown in `README.md` and `docs/src/` run as shown, so that
//! the documentation cannot drift from the command line.
//!
//! Every fenced block of those files must name its language. Blocks in `sh`
//! hold commands (a trailing `\` continues a line; `#` starts a comment), each
//! of which must exit with status 0. Blocks in `console` hold `$ ` commands,
//! each followed by the output it prints on stdout (or stderr, with the
//! `stderr` marker): a line `...` stands for any number of lines, `[..]` for
//! any text within a line, and a last line `[exit status: N]` for a status
//! other than 0. Markers after the language (```` ```sh,cc ````) say what a
//! block needs: a runtime of [`RUNTIMES`] (the block is skipped, with the
//! reason, where it is missing, as the other tests skip), or one of
//! [`NOT_RUN`] (a GPU, MPI, a long time, or a command that is not
//! stencilc's): such blocks are counted and listed, never run.
//!
//! Each page runs in a fresh folder holding a copy of the inputs the commands
//! read (`examples/`, `bench/programs/`, `tests/data/kanicuda/`), with the
//! `stencilc` under test first on `PATH` (`cargo run --release --` and
//! `target/release/stencilc` are read as `stencilc`) and a kernel cache of its
//! own; a page's blocks run in order, so a later command may read an earlier
//! one's output.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

/// Markers of blocks that are not run, with the reason printed for each.
const NOT_RUN: [(&str, &str); 4] = [
    (
        "no-run",
        "not stencilc's (CI, installation, the test suite itself, files not in the repository)",
    ),
    ("gpu", "needs a GPU"),
    ("mpi", "needs mpirun and a build with --features mpi"),
    ("slow", "takes too long for the test suite"),
];

/// Runtime markers a block may carry: skipped where the runtime is missing.
const RUNTIMES: [&str; 4] = ["cc", "opencl", "nvrtc", "ptxas"];

/// The folders (relative to the repository) copied into each page's folder.
const INPUTS: [&str; 3] = ["examples", "bench/programs", "tests/data/kanicuda"];

/// How long one command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// A fenced block of a page.
#[derive(Debug)]
struct Block {
    /// The page and line of its opening fence, for messages.
    place: String,
    language: String,
    markers: Vec<String>,
    body: Vec<String>,
}

/// One command of a block and what it must print.
#[derive(Debug)]
struct Expected {
    command: String,
    /// `None`: only the exit status is checked.
    output: Option<Vec<String>>,
    status: i32,
}

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `README.md` and every page of the book, sorted.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![repository().join("README.md")];
    pages.extend(common::files_under(&repository().join("docs/src"), "md"));
    pages
}

/// The fenced blocks of a page; a fence without a language is an error.
fn blocks(page: &Path) -> Result<Vec<Block>, String> {
    let text = std::fs::read_to_string(page).map_err(|e| format!("{}: {e}", page.display()))?;
    let name = page
        .strip_prefix(repository())
        .unwrap_or(page)
        .display()
        .to_string();
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (index, line) in text.lines().enumerate() {
        // As in CommonMark, an info string holds no backtick: a line that
        // starts with an inline code span of backticks is prose.
        let fence = line
            .trim_start()
            .strip_prefix("```")
            .filter(|info| !info.contains('`'))
            .filter(|info| open.is_none() || info.trim().is_empty());
        let Some(info) = fence else {
            if let Some(block) = &mut open {
                block.body.push(line.to_owned());
            }
            continue;
        };
        match open.take() {
            Some(block) => found.push(block),
            None => {
                let mut words = info.trim().split(',').map(|w| w.trim().to_owned());
                let language = words.next().unwrap_or_default();
                if language.is_empty() {
                    return Err(format!(
                        "{name}:{}: a fence without a language; name it (```sh, ```console, ```text, ...)",
                        index + 1
                    ));
                }
                open = Some(Block {
                    place: format!("{name}:{}", index + 1),
                    language,
                    markers: words.filter(|w| !w.is_empty()).collect(),
                    body: Vec::new(),
                });
            }
        }
    }
    match open {
        Some(block) => Err(format!("{}: a fence never closed", block.place)),
        None => Ok(found),
    }
}

/// `cargo run --release -- ARGS` and `target/release/stencilc ARGS` are the
/// binary under test.
fn as_stencilc(command: &str) -> String {
    let mut command = command.to_owned();
    for spelling in [
        "cargo run --release --",
        "target/release/stencilc",
        "target/debug/stencilc",
    ] {
        command = command.replace(spelling, "stencilc");
    }
    command
}

/// Lines joined where a line ends with `\`.
fn logical_lines(body: &[String]) -> Vec<String> {
    let mut lines = Vec::new();
    let mut pending = String::new();
    for line in body {
        match line.strip_suffix('\\') {
            Some(head) => {
                pending.push_str(head);
                pending.push(' ');
            }
            None => {
                pending.push_str(line);
                lines.push(std::mem::take(&mut pending));
            }
        }
    }
    if !pending.is_empty() {
        lines.push(pending);
    }
    lines
}

/// The commands of a shell block and what each must print.
fn commands(block: &Block) -> Vec<Expected> {
    let lines = logical_lines(&block.body);
    if block.language == "sh" {
        return lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| Expected {
                command: as_stencilc(l),
                output: None,
                status: 0,
            })
            .collect();
    }
    let mut expected: Vec<Expected> = Vec::new();
    for line in lines {
        if let Some(command) = line.strip_prefix("$ ") {
            expected.push(Expected {
                command: as_stencilc(command.trim()),
                output: Some(Vec::new()),
                status: 0,
            });
        } else if let Some(last) = expected.last_mut() {
            let status = line
                .strip_prefix("[exit status: ")
                .and_then(|s| s.strip_suffix(']'))
                .and_then(|s| s.parse().ok());
            match status {
                Some(status) => last.status = status,
                None => last
                    .output
                    .as_mut()
                    .unwrap()
                    .push(line.trim_end().to_owned()),
            }
        }
    }
    expected
}

/// Whether `line` matches `pattern`, in which `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut pieces = pattern.split("[..]");
    let first = pieces.next().unwrap_or_default();
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let pieces: Vec<&str> = pieces.collect();
    for (index, piece) in pieces.iter().enumerate() {
        if index + 1 == pieces.len() {
            return rest.ends_with(piece);
        }
        match rest.find(piece) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether `lines` match `pattern`, in which a line `...` stands for any
/// number of lines.
fn output_matches(pattern: &[String], lines: &[&str]) -> bool {
    match pattern.split_first() {
        None => lines.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=lines.len()).any(|skip| output_matches(rest, &lines[skip..]))
        }
        Some((first, rest)) => lines.split_first().is_some_and(|(line, others)| {
            line_matches(first, line) && output_matches(rest, others)
        }),
    }
}

/// A folder for one page: the inputs, a `bin/stencilc` and a cache.
fn page_folder() -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    for input in INPUTS {
        copy_tree(&repository().join(input), &folder.path().join(input));
    }
    std::fs::create_dir_all(folder.path().join(".bin")).unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_stencilc"),
        folder.path().join(".bin/stencilc"),
    )
    .unwrap();
    folder
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// Runs one command in `folder`; an error says what differed.
fn run(folder: &Path, expected: &Expected) -> Result<(), String> {
    let path = format!(
        "{}:{}",
        folder.join(".bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("bash")
        .args(["-o", "pipefail", "-c", &expected.command])
        .current_dir(folder)
        .env("PATH", path)
        .env("STENCILC_CACHE_DIR", folder.join(".cache"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start bash: {e}"))?;
    let started = Instant::now();
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if started.elapsed() > COMMAND_TIMEOUT {
            let _ = child.kill();
            return Err(format!("still running after {COMMAND_TIMEOUT:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shown = || format!("stdout:\n{stdout}\nstderr:\n{stderr}");
    if output.status.code() != Some(expected.status) {
        return Err(format!(
            "exit status {:?}, the docs say {}\n{}",
            output.status.code(),
            expected.status,
            shown()
        ));
    }
    match &expected.output {
        Some(pattern) => {
            let lines: Vec<&str> = stdout.lines().map(str::trim_end).collect();
            if output_matches(pattern, &lines) {
                Ok(())
            } else {
                Err(format!(
                    "its output differs from\n{}\n{}",
                    pattern.join("\n"),
                    shown()
                ))
            }
        }
        None => Ok(()),
    }
}

/// Runs a block's commands in order; a `stderr` block's output is matched
/// against what its commands print on stderr.
fn run_block(folder: &Path, block: &Block) -> Result<usize, String> {
    let on_stderr = block.markers.iter().any(|m| m == "stderr");
    let mut count = 0;
    for expected in commands(block) {
        let command = if on_stderr {
            Expected {
                command: format!("{{ {}; }} 2>&1 >/dev/null", expected.command),
                output: expected.output,
                status: expected.status,
            }
        } else {
            expected
        };
        run(folder, &command)
            .map_err(|why| format!("{}: `{}`: {why}", block.place, command.command))?;
        count += 1;
    }
    Ok(count)
}

/// What a block needs that stops it from running here, if anything.
fn not_run_reason(block: &Block) -> Result<Option<String>, String> {
    for marker in &block.markers {
        if let Some((_, why)) = NOT_RUN.iter().find(|(name, _)| name == marker) {
            return Ok(Some(format!("{marker}: {why}")));
        }
        if !RUNTIMES.contains(&marker.as_str()) && marker != "stderr" {
            return Err(format!("{}: unknown marker `{marker}`", block.place));
        }
    }
    Ok(None)
}

fn runtime_here(runtime: &str) -> bool {
    let probe: Result<(), String> = match runtime {
        "cc" => return common::cc_available(),
        "opencl" => stencilc::exec::opencl::probe()
            .map(drop)
            .map_err(|e| e.to_string()),
        "nvrtc" => stencilc::exec::cuda::nvrtc::load()
            .map(drop)
            .map_err(|e| e.to_string()),
        "ptxas" => stencilc::model::ptxas::find()
            .map(drop)
            .map_err(|e| e.to_string()),
        _ => unreachable!("runtime markers are checked first"),
    };
    common::runtime_available(runtime, probe)
}

#[derive(Default)]
struct Tally {
    run: usize,
    not_run: Vec<String>,
    failures: Vec<String>,
}

fn run_page(page: &Path) -> Tally {
    let mut tally = Tally::default();
    let blocks = match blocks(page) {
        Ok(blocks) => blocks,
        Err(why) => {
            tally.failures.push(why);
            return tally;
        }
    };
    let shell: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.language == "sh" || b.language == "console")
        .collect();
    if shell.is_empty() {
        return tally;
    }
    let folder = page_folder();
    for block in shell {
        match not_run_reason(block) {
            Err(why) => tally.failures.push(why),
            Ok(Some(why)) => tally.not_run.push(format!(
                "{} ({} command(s); {why})",
                block.place,
                commands(block).len()
            )),
            Ok(None) => {
                let needs: Vec<&String> = block
                    .markers
                    .iter()
                    .filter(|m| RUNTIMES.contains(&m.as_str()))
                    .collect();
                if needs.into_iter().all(|runtime| runtime_here(runtime)) {
                    match run_block(folder.path(), block) {
                        Ok(count) => tally.run += count,
                        Err(why) => tally.failures.push(why),
                    }
                }
            }
        }
    }
    tally
}

#[test]
fn every_shell_command_of_the_docs_runs_as_shown() {
    let pages = pages();
    assert!(pages.len() > 10, "the book's pages are missing: {pages:?}");
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = pages
            .iter()
            .map(|page| {
                // The runtime probes report skips under the running test's name.
                let name = std::thread::current().name().unwrap_or("docs").to_owned();
                std::thread::Builder::new()
                    .name(name)
                    .spawn_scoped(scope, move || run_page(page))
                    .unwrap()
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let run: usize = tallies.iter().map(|t| t.run).sum();
    let not_run: Vec<&String> = tallies.iter().flat_map(|t| &t.not_run).collect();
    let failures: Vec<&String> = tallies.iter().flat_map(|t| &t.failures).collect();
    eprintln!(
        "docs: {run} command(s) run; {} block(s) not run:",
        not_run.len()
    );
    for block in &not_run {
        eprintln!("  {block}");
    }
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .map(|f| f.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
    assert!(run > 20, "only {run} command(s) ran");
}

/// The test command the README gives is the one CI runs.
#[test]
fn ci_runs_the_readme_test_command() {
    let readme = blocks(&repository().join("README.md")).unwrap();
    let ci = std::fs::read_to_string(repository().join(".ci/run")).unwrap();
    let test_commands: Vec<String> = readme
        .iter()
        .filter(|b| b.language == "sh")
        .flat_map(commands)
        .map(|c| c.command)
        .filter(|c| c.starts_with("cargo test"))
        .collect();
    assert!(
        !test_commands.is_empty(),
        "the README shows no `cargo test` command"
    );
    for command in test_commands {
        assert!(
            ci.lines()
                .any(|line| line.trim_start().starts_with(&command)
                    && line.trim_start()[command.len()..]
                        .trim_start()
                        .starts_with("||")),
            "`.ci/run` does not run the README's `{command}`"
        );
    }
}

#[test]
fn the_output_patterns_match_as_documented() {
    let pattern = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(line_matches("a [..] c", "a b b c"));
    assert!(!line_matches("a [..] c", "a b b d"));
    assert!(line_matches("[..]", ""));
    assert!(output_matches(
        &pattern(&["x", "...", "z"]),
        &["x", "y", "y", "z"]
    ));
    assert!(output_matches(&pattern(&["x", "..."]), &["x"]));
    assert!(!output_matches(&pattern(&["x", "z"]), &["x", "y", "z"]));
}
