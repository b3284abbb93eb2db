//! Hardening of the command line's inputs: outputs that would overwrite the
//! source, parameter and shape messages, long source lines in diagnostics, the
//! benchmark folder, and pragma options naming host constants.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `stencilc` in `dir`.
fn stencilc(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Asserts a failure (status 1, no panic) and returns stderr.
fn fails(dir: &Path, args: &[&str]) -> String {
    let output = stencilc(dir, args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// Asserts success and returns (stdout, stderr).
fn succeeds(dir: &Path, args: &[&str]) -> (String, String) {
    let output = stencilc(dir, args);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    (stdout, stderr)
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A host file with one region, as in `examples/embedded/jacobi2d_host.c`.
fn host_file(dir: &Path) -> (PathBuf, String) {
    let text = std::fs::read_to_string(repo().join("examples/embedded/jacobi2d_host.c")).unwrap();
    let path = dir.join("h.c");
    std::fs::write(&path, &text).unwrap();
    (path, text)
}

#[test]
fn compile_refuses_to_write_over_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let (input, text) = host_file(dir.path());
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&input, dir.path().join("link.c")).unwrap();
    std::fs::hard_link(&input, dir.path().join("hard.c")).unwrap();
    let mut outputs = vec!["h.c", "./h.c", "sub/../h.c", "hard.c"];
    let absolute = input.display().to_string();
    outputs.push(&absolute);
    if cfg!(unix) {
        outputs.push("link.c");
    }
    for out in outputs {
        let stderr = fails(dir.path(), &["compile", "-f", "h.c", "-o", out]);
        assert!(stderr.contains("is the input"), "{out}: {stderr}");
        assert!(stderr.contains("give -o a different file"), "{stderr}");
        assert_eq!(std::fs::read_to_string(&input).unwrap(), text, "{out}");
    }
    // Another file is fine.
    succeeds(dir.path(), &["compile", "-f", "h.c", "-o", "out.c"]);
    assert!(std::fs::read_to_string(dir.path().join("out.c"))
        .unwrap()
        .contains("sdsl_return_0"));
    assert_eq!(std::fs::read_to_string(&input).unwrap(), text);
}

#[test]
fn a_parameter_that_empties_several_axes_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let program = repo().join("examples/wave2d.sdsl");
    let program = program.to_str().unwrap();
    let stderr = fails(
        dir.path(),
        &[
            "run", program, "--set", "n=-5", "--set", "steps=1", "--set", "c2=0.1",
        ],
    );
    assert_eq!(stderr.matches("error:").count(), 1, "{stderr}");
    assert_eq!(stderr.matches("would have size -5").count(), 1, "{stderr}");
    // Both axes are marked.
    assert!(stderr.contains("grid g[n][n];"), "{stderr}");
    assert!(stderr.contains("^  ^"), "{stderr}");
}

/// The header of a version-1.0 `.npy` of `float32` values of shape `shape`.
fn npy_header(shape: &[usize]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = if shape.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape_text}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&u16::try_from(header.len()).unwrap().to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    bytes
}

/// A `.npy` with the given shape of `float32` zeros.
fn write_npy(path: &Path, shape: &[usize]) {
    let mut bytes = npy_header(shape);
    bytes.resize(bytes.len() + 4 * shape.iter().product::<usize>(), 0);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn an_input_of_the_wrong_rank_is_named_before_missing_parameters() {
    let dir = tempfile::tempdir().unwrap();
    write_npy(&dir.path().join("a3.npy"), &[4, 5, 6]);
    let program = repo().join("examples/jacobi2d.sdsl");
    let stderr = fails(
        dir.path(),
        &["run", program.to_str().unwrap(), "--input", "a=a3.npy"],
    );
    assert!(!stderr.contains("not given a value"), "{stderr}");
    assert!(stderr.contains("`a3.npy`"), "{stderr}");
    assert!(stderr.contains("(4, 5, 6)"), "{stderr}");
    assert!(stderr.contains("3-D array"), "{stderr}");
    assert!(stderr.contains("field `a` is on a 2-D grid"), "{stderr}");
}

#[test]
fn a_diagnostic_on_a_huge_line_shows_a_window_around_the_caret() {
    let dir = tempfile::tempdir().unwrap();
    // More than a megabyte on one line, with an unknown name in the middle.
    let params = |from: usize| -> String {
        (from..from + 50_000)
            .map(|i| format!("int p{i}; "))
            .collect()
    };
    let before = format!("int n; {}grid g[n][", params(0));
    let text = format!(
        "{before}nope]; {}float griddata a on g at 0,1;\n",
        params(50_000)
    );
    assert!(text.len() > 1_000_000);
    std::fs::write(dir.path().join("long.sdsl"), &text).unwrap();
    let stderr = fails(dir.path(), &["run", "long.sdsl", "--set", "n=8"]);
    assert!(
        stderr.len() < 2_000,
        "{} bytes: {}",
        stderr.len(),
        &stderr[..2_000]
    );
    let column = before.chars().count() + 1;
    assert!(
        stderr.contains(&format!("long.sdsl:1:{column}")),
        "{stderr}"
    );
    // The shown line is cut on both sides, and the caret sits under `nope`.
    let lines: Vec<&str> = stderr.lines().collect();
    let source = lines
        .iter()
        .position(|l| l.starts_with("1 │"))
        .expect("the source line");
    let shown = lines[source];
    assert!(shown.contains("1 │ ..."), "{shown}");
    assert!(shown.ends_with("..."), "{shown}");
    let caret = lines[source + 1].find('^').expect("a caret");
    assert_eq!(&shown[caret..caret + 4], "nope", "{stderr}");
}

#[test]
fn bench_outside_the_repository_says_where_it_looked_and_suggests_dir() {
    let dir = tempfile::tempdir().unwrap();
    let stderr = fails(dir.path(), &["bench", "--only", "j2d5pt"]);
    let looked = dir
        .path()
        .canonicalize()
        .unwrap()
        .join("bench")
        .join("programs");
    assert!(
        stderr.contains(&looked.display().to_string())
            || stderr.contains(&dir.path().join("bench/programs").display().to_string()),
        "{stderr}"
    );
    assert!(stderr.contains("--dir"), "{stderr}");
    assert!(!stderr.contains("bench: j2d5pt"), "nothing ran: {stderr}");
}

/// An OverTile-style host: pragma options name a `#define` and, optionally,
/// a host variable.
fn overtile_host(dir: &Path, block: &str) -> PathBuf {
    let text = format!(
        "#include <stdio.h>
#define IterPerCall 4
int main(void) {{
    int BX = 8;
    int dim0 = 16, dim1 = 16;
    float a[16][16] = {{{{0}}}};
#pragma sdsl begin time_steps:IterPerCall block:{block} tile:1,1 time:1
int dim0;
int dim1;
grid g[dim1][dim0];
float griddata a on g at 0,1;
iterate 2 {{
    stencil s {{
        [1:dim1-2][1:dim0-2] : [1]a[0][0] = 0.25f*([0]a[-1][0] + [0]a[1][0] + [0]a[0][-1] + [0]a[0][1]);
    }}
}}
#pragma sdsl end
    printf(\"%d\\n\", sdsl_return_0);
    return 0;
}}
"
    );
    let path = dir.join("overtile.c");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn pragma_options_may_name_defines_and_host_identifiers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Every value from `#define`s: accepted, and the schedule uses them.
    overtile_host(d, "IterPerCall*2,8");
    let (cuda, _) = succeeds(d, &["emit", "overtile.c", "--target", "cuda"]);
    assert!(cuda.contains("block 8,8,1"), "{cuda}");
    succeeds(
        d,
        &[
            "run",
            "overtile.c",
            "--set",
            "dim0=16",
            "--set",
            "dim1=16",
            "--backend",
            "interp",
        ],
    );
    succeeds(d, &["compile", "-f", "overtile.c", "-o", "out.c"]);

    // A host variable: the commands that need its value ask for it at the
    // identifier, with file:line:col and a caret.
    overtile_host(d, "BX*2,8");
    let stderr = fails(d, &["emit", "overtile.c", "--target", "cuda"]);
    assert!(stderr.contains("overtile.c:7:49"), "{stderr}");
    assert!(stderr.contains("uses the host identifier `BX`"), "{stderr}");
    assert!(stderr.contains("--set BX=VALUE"), "{stderr}");
    let pragma = stderr
        .lines()
        .find(|l| l.contains("#pragma sdsl begin"))
        .expect("the pragma line");
    let caret = stderr.lines().find(|l| l.contains('^')).expect("a caret");
    let at = caret.find('^').unwrap();
    assert_eq!(&pragma[at..at + 2], "BX", "{stderr}");
    let run = ["run", "overtile.c", "--set", "dim0=16", "--set", "dim1=16"];
    let stderr = fails(d, &run);
    assert!(stderr.contains("--set BX=VALUE"), "{stderr}");
    assert!(stderr.contains("--backend c"), "{stderr}");
    // Given with --set, it is used.
    let (cuda, _) = succeeds(
        d,
        &["emit", "overtile.c", "--target", "cuda", "--set", "BX=16"],
    );
    assert!(cuda.contains("block 32,8,1"), "{cuda}");
    let stderr = fails(
        d,
        &["emit", "overtile.c", "--target", "cuda", "--set", "BX=four"],
    );
    assert!(stderr.contains("not an integer for `BX`"), "{stderr}");
    // The interpreter and the C output do not need it.
    succeeds(d, &[&run[..], &["--backend", "interp"]].concat());
    succeeds(d, &["compile", "-f", "overtile.c", "-o", "out.c"]);
    let out = std::fs::read_to_string(d.join("out.c")).unwrap();
    assert!(out.contains("sdsl_return_0"), "{out}");
}

/// A program whose constant, stencil, reduction and check each hold `value`
/// (an expression of `[0]a[..][..]` reads where a field read is allowed;
/// `constant` where only uniform values are).
fn deep_program(value: &str, constant: &str) -> String {
    format!(
        "int n;
double k = {constant};
grid g[n][n];
float griddata a on g at 0,1;
iterate 2 {{
    stencil s {{
        [1:n-2][1:n-2] : [1]a[0][0] = {value};
    }}
    reduction r + {{
        [1:n-2][1:n-2] : {value};
    }}
}} check (r < k + {constant}) every 1 iterations
"
    )
}

fn sum_of(terms: usize, term: &dyn Fn(usize) -> String) -> String {
    (0..terms).map(term).collect::<Vec<_>>().join(" + ")
}

/// Runs every pass over the program: checks and folding, the interpreter's
/// compilation and run, the C, CUDA and OpenCL printers, and source-to-source.
fn every_pass_survives(dir: &Path, name: &str, program: &str) {
    std::fs::write(dir.join(format!("{name}.sdsl")), program).unwrap();
    let file = format!("{name}.sdsl");
    let (stdout, _) = succeeds(
        dir,
        &[
            "run",
            &file,
            "--set",
            "n=8",
            "--backend",
            "interp",
            "--json",
        ],
    );
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(summary["iterations"].as_u64().unwrap() >= 1, "{stdout}");
    for target in ["c", "cuda", "opencl"] {
        let (code, _) = succeeds(dir, &["emit", &file, "--target", target]);
        assert!(code.len() > program.len() / 4, "{target}");
    }
    let host = format!(
        "int main(void) {{\n#pragma sdsl begin\n{program}#pragma sdsl end\n  return 0;\n}}\n"
    );
    std::fs::write(dir.join(format!("{name}.c")), host).unwrap();
    succeeds(
        dir,
        &[
            "compile",
            "-f",
            &format!("{name}.c"),
            "-o",
            &format!("{name}.out.c"),
        ],
    );
}

#[test]
fn long_flat_sums_and_the_deepest_accepted_nesting_pass_every_pass() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let read = |i: usize| format!("[0]a[0][{}]", i % 3).replace("[2]", "[-1]");
    // A flat sum of 5000 terms (the old limit refused 1000).
    let flat = deep_program(&sum_of(5000, &read), &sum_of(5000, &|_| "1".into()));
    every_pass_survives(d, "flat", &flat);

    // The deepest expression accepted: a sum of nearly MAX_EXPR_DEPTH terms
    // under 45 levels of `-(...)`, near the source nesting limit (each level
    // is two: the operator and the parenthesis).
    let limit = stencilc::front::MAX_EXPR_DEPTH;
    let wrap = |inner: String| format!("{}{inner}{}", "-(".repeat(45), ")".repeat(45));
    let terms = limit - 200;
    let deepest = deep_program(
        &wrap(sum_of(terms, &read)),
        &wrap(sum_of(terms, &|_| "1".into())),
    );
    every_pass_survives(d, "deepest", &deepest);

    // One level deeper in the source, or a longer chain, is refused with the limit named.
    let nested = deep_program(&format!("{}1{}", "-(".repeat(60), ")".repeat(60)), "1");
    std::fs::write(d.join("nested.sdsl"), nested).unwrap();
    let stderr = fails(d, &["run", "nested.sdsl", "--set", "n=8"]);
    assert!(stderr.contains("nests too deeply"), "{stderr}");
    assert!(stderr.contains("at most 100 nested levels"), "{stderr}");
    let long = deep_program(&sum_of(limit + 1, &read), "1");
    std::fs::write(d.join("long.sdsl"), long).unwrap();
    let stderr = fails(d, &["run", "long.sdsl", "--set", "n=8"]);
    assert!(stderr.contains("nests too deeply"), "{stderr}");
    assert!(
        stderr.contains(&format!("at most {limit} levels deep")),
        "{stderr}"
    );
}

/// `explain`'s JSON report with `args` (ptxas left out: the model alone).
fn explain_json(dir: &Path, args: &[&str]) -> serde_json::Value {
    let output = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .arg("explain")
        .args(args)
        .arg("--json")
        .env("STENCILC_PTXAS", "/nonexistent/ptxas")
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap()
}

#[test]
fn explain_takes_grid_sizes_from_input_files_as_run_does() {
    let dir = tempfile::tempdir().unwrap();
    write_npy(&dir.path().join("a.npy"), &[24, 40]);
    let program = repo().join("examples/jacobi2d.sdsl");
    let program = program.to_str().unwrap();
    let from_file = explain_json(dir.path(), &[program, "--input", "a=a.npy"]);
    assert_eq!(from_file["parameters"]["dim0"], 40);
    assert_eq!(from_file["parameters"]["dim1"], 24);
    let set = explain_json(
        dir.path(),
        &[program, "--set", "dim0=40", "--set", "dim1=24"],
    );
    assert_eq!(from_file, set);
    // `--set` wins over the file where both give a size, as in `run`...
    let mixed = explain_json(
        dir.path(),
        &[program, "--input", "a=a.npy", "--set", "dim1=24"],
    );
    assert_eq!(mixed["parameters"]["dim0"], 40);
    // ...and a file that then does not fit is refused, as `run` would refuse it.
    let stderr = fails(
        dir.path(),
        &["explain", program, "--input", "a=a.npy", "--set", "dim0=8"],
    );
    assert!(
        stderr.contains("`a.npy` has shape (24, 40) but field `a` needs (24, 8)"),
        "{stderr}"
    );
}

#[test]
fn explain_and_emit_check_their_inputs_as_run_does() {
    let dir = tempfile::tempdir().unwrap();
    write_npy(&dir.path().join("a.npy"), &[24, 40]);
    write_npy(&dir.path().join("a3.npy"), &[4, 5, 6]);
    let program = repo().join("examples/jacobi2d.sdsl");
    let program = program.to_str().unwrap();
    for command in ["explain", "emit", "run"] {
        let stderr = fails(dir.path(), &[command, program, "--input", "b=a.npy"]);
        assert!(
            stderr.contains("`b` is not a field of the program (in `--input b=a.npy`)")
                && stderr.contains("did you mean `a`?"),
            "{command}: {stderr}"
        );
        let stderr = fails(dir.path(), &[command, program, "--input", "a=a3.npy"]);
        assert!(
            stderr.contains("3-D array") && stderr.contains("field `a` is on a 2-D grid"),
            "{command}: {stderr}"
        );
        let twice = ["--input", "a=a.npy", "--input", "a=a.npy"];
        let stderr = fails(dir.path(), &[&[command, program][..], &twice].concat());
        assert!(
            stderr.contains("given more than one --input"),
            "{command}: {stderr}"
        );
        let stderr = fails(dir.path(), &[command, program, "--input", "a=missing.npy"]);
        assert!(
            stderr.contains("cannot read `missing.npy`"),
            "{command}: {stderr}"
        );
    }
    // `emit -o` may not overwrite an input either.
    let stderr = fails(
        dir.path(),
        &["emit", program, "--input", "a=a.npy", "-o", "a.npy"],
    );
    assert!(stderr.contains("the input `a.npy`"), "{stderr}");
}

#[test]
fn emit_prints_the_kernels_of_a_run_on_the_input_files() {
    let dir = tempfile::tempdir().unwrap();
    write_npy(&dir.path().join("a.npy"), &[24, 40]);
    let program = repo().join("examples/jacobi2d.sdsl");
    let program = program.to_str().unwrap();
    for target in ["c", "cuda"] {
        let (from_file, _) = succeeds(
            dir.path(),
            &[
                "emit", program, "-t", target, "--input", "a=a.npy", "--time", "2",
            ],
        );
        let (set, _) = succeeds(
            dir.path(),
            &[
                "emit", program, "-t", target, "--set", "dim0=40", "--set", "dim1=24", "--time",
                "2",
            ],
        );
        assert_eq!(from_file, set, "{target}");
    }
    // Past 2^31 points, the CUDA kernels index in 64 bits: the sizes are
    // the file's (a sparse file: its header's shape, its length the data's).
    let big = dir.path().join("big.npy");
    let header = npy_header(&[50000, 50000]);
    std::fs::write(&big, &header).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&big).unwrap();
    file.set_len(header.len() as u64 + 4 * 50000 * 50000)
        .unwrap();
    let (wide, _) = succeeds(
        dir.path(),
        &["emit", program, "-t", "cuda", "--input", "a=big.npy"],
    );
    let (narrow, _) = succeeds(
        dir.path(),
        &["emit", program, "-t", "cuda", "--input", "a=a.npy"],
    );
    assert_ne!(wide, narrow);
    assert!(wide.contains("long long"), "{wide}");
}
