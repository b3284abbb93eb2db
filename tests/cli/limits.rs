//! The command line's limits: input that never ends, is too large,
//! nests or expands without bound, or is nonsense, gives a clear error that
//! names the limit, within seconds and without a panic, instead of filling
//! memory, hanging or "succeeding" at nothing.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// What a finished run left: exit status, stdout and stderr.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `stencilc args` in `dir`, killing it if it runs past a generous 60 s:
/// the cases here used to hang or exhaust memory.
fn stencilc_in(dir: &Path, args: &[&str]) -> Ran {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stderr.read_to_end(&mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`stencilc {}` ran past 60 s", args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let ran = Ran {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    assert!(!ran.stderr.contains("panicked"), "{}", ran.stderr);
    assert!(!ran.stderr.contains("RUST_BACKTRACE"), "{}", ran.stderr);
    ran
}

fn stencilc(args: &[&str]) -> Ran {
    stencilc_in(&repo(), args)
}

/// A failed run: status 1 and its stderr.
fn fails(args: &[&str]) -> String {
    let ran = stencilc(args);
    assert_eq!(ran.code, Some(1), "{}: {}", args.join(" "), ran.stderr);
    assert!(
        ran.stdout.is_empty(),
        "a failed run prints nothing on stdout"
    );
    ran.stderr
}

fn cc_available() -> bool {
    crate::map::cc_available()
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn dev_zero_is_refused_by_every_command_that_reads_a_source() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.c");
    let out = out.to_str().unwrap();
    let cases: [&[&str]; 8] = [
        &["run", "/dev/zero"],
        &["emit", "/dev/zero"],
        &["explain", "/dev/zero"],
        &["map", "/dev/zero"],
        &["compile", "-f", "/dev/zero", "-o", out],
        &["check-kernel", "/dev/zero"],
        &["synth", "/dev/zero", "--grid", "1", "--block", "1"],
        &[
            "tune",
            "examples/jacobi2d.sdsl",
            "--backend",
            "c",
            "--set",
            "dim0=8",
            "--set",
            "dim1=8",
            "--config",
            "/dev/zero",
        ],
    ];
    for args in cases {
        let stderr = fails(args);
        assert!(
            stderr.contains("`/dev/zero`")
                && stderr.contains("not a regular file")
                && stderr.contains(" MiB limit"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_source_past_the_size_limit_is_refused_naming_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse files: the size is checked before anything is read.
    let sdsl = dir.path().join("big.sdsl");
    std::fs::File::create(&sdsl)
        .unwrap()
        .set_len((16 << 20) + 1)
        .unwrap();
    let stderr = fails(&["run", sdsl.to_str().unwrap()]);
    assert!(stderr.contains("larger than the 16 MiB limit"), "{stderr}");
    let c = dir.path().join("big.c");
    std::fs::File::create(&c)
        .unwrap()
        .set_len(50 << 20)
        .unwrap();
    let stderr = fails(&["map", c.to_str().unwrap()]);
    assert!(stderr.contains("larger than the 4 MiB limit"), "{stderr}");
}

#[test]
fn map_refuses_loops_nested_past_the_limit() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("void f(int n, float *a) {\n");
    for i in 0..1000 {
        text.push_str(&format!("for (int i{i} = 0; i{i} < n; i{i}++) {{\n"));
    }
    text.push_str("a[i0] = 1.0f;\n");
    text.push_str(&"}\n".repeat(1000));
    text.push_str("}\n");
    let file = write(dir.path(), "deep.c", text);
    let stderr = fails(&["map", &file, "--report"]);
    assert!(
        stderr.contains("nested more than 256 deep") && stderr.contains("deep.c:129:"),
        "{stderr}"
    );
    // Four nested loops are far inside it.
    let ran = stencilc(&["map", "examples/c/heat3d.c", "--report"]);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
}

#[test]
fn map_stops_a_preprocessor_that_never_ends() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "zero.c",
        "#include </dev/zero>\nint main(void) { return 0; }\n",
    );
    let stderr = fails(&["map", &file]);
    assert!(
        stderr.contains("was still running after 20 s") && stderr.contains("#include"),
        "{stderr}"
    );
}

#[test]
fn map_stops_preprocessed_output_past_the_limit() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // A 4 MiB header of plain words, included six times: 24 MiB of output
    // that `cc -E` writes in well under a second. (Macros that double their
    // expansion reach the limit too, but spend seconds of CPU doing it, and
    // on a loaded machine ran into the 20 s time limit first.)
    let line = "xx ".repeat(40) + "\n";
    let words = line.repeat((4 << 20) / line.len());
    write(dir.path(), "words.h", words);
    let file = write(dir.path(), "expand.c", "#include \"words.h\"\n".repeat(6));
    let stderr = fails(&["map", &file]);
    assert!(
        stderr.contains("larger than the 16 MiB limit of `map`"),
        "{stderr}"
    );
}

#[test]
fn map_reads_a_file_as_c_whatever_its_name() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("examples/c/jacobi2d.c")).unwrap();
    for name in ["jacobi2d.txt", "JACOBI2D.C", "jacobi2d"] {
        let file = write(dir.path(), name, &text);
        let ran = stencilc_in(dir.path(), &["map", &file, "--report"]);
        assert_eq!(ran.code, Some(0), "{name}: {}", ran.stderr);
        assert!(
            ran.stdout.contains("parallel, mapped"),
            "{name}: {}",
            ran.stdout
        );
    }
}

#[test]
fn doubling_cuda_macros_stop_at_the_expansion_limit() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("#define E0 x\n");
    for i in 1..=20 {
        text.push_str(&format!("#define E{i} (E{p} + E{p})\n", p = i - 1));
    }
    text.push_str("__global__ void k(float *a, float x) { a[threadIdx.x] = E20; }\n");
    let file = write(dir.path(), "macros.cu", text);
    let stderr = fails(&["check-kernel", &file]);
    assert!(
        stderr.contains("more than 65536 tokens, the limit of macro expansion")
            && !stderr.contains("expands into itself")
            && stderr.contains("macros.cu:22:"),
        "{stderr}"
    );
}

#[test]
fn threads_are_bounded_by_the_machine() {
    let cap = 4 * std::thread::available_parallelism().map_or(1, |n| n.get());
    for n in ["100000", "0"] {
        let ran = stencilc(&[
            "run",
            "examples/jacobi2d.sdsl",
            "--backend",
            "c",
            "--threads",
            n,
        ]);
        assert_eq!(ran.code, Some(2), "{}", ran.stderr);
        assert!(
            ran.stderr
                .contains(&format!("give a number of threads from 1 to {cap}")),
            "{}",
            ran.stderr
        );
    }
    let over = (cap + 1).to_string();
    let stderr = stencilc(&[
        "emit",
        "examples/jacobi2d.sdsl",
        "-t",
        "c",
        "--threads",
        &over,
    ])
    .stderr;
    assert!(
        stderr.contains(&format!("more than the limit of {cap}")),
        "{stderr}"
    );
}

#[test]
fn a_program_without_an_iterate_is_a_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        write(dir.path(), "empty.sdsl", ""),
        write(dir.path(), "blank.sdsl", "  \n\t\n"),
        write(dir.path(), "comments.sdsl", "// nothing\n/* here */\n"),
        write(dir.path(), "decls.sdsl", "int n;\ngrid g[n];\n"),
        "/dev/null".to_string(),
    ];
    for file in &cases {
        for command in ["run", "emit", "explain"] {
            let stderr = fails(&[command, file]);
            assert!(
                stderr.contains("the program has no `iterate`")
                    && stderr.contains("add `iterate N {"),
                "{command} {file}: {stderr}"
            );
        }
    }
    let stderr = fails(&["run", &cases[3]]);
    assert!(stderr.contains("decls.sdsl:2:11"), "{stderr}");
}

#[test]
fn lone_carriage_returns_end_lines() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("examples/jacobi2d.sdsl")).unwrap();
    let file = write(dir.path(), "cr.sdsl", text.replace('\n', "\r"));
    let args = [
        "run",
        &file,
        "--backend",
        "interp",
        "--set",
        "dim0=16",
        "--set",
        "dim1=16",
    ];
    let ran = stencilc(&args);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(ran.stdout.starts_with("cr: 4 iterations"), "{}", ran.stdout);
    // Errors count such lines.
    let broken = text.replace("int dim1;", "int dim1").replace('\n', "\r");
    let file = write(dir.path(), "cr_broken.sdsl", broken);
    let stderr = fails(&["run", &file]);
    assert!(stderr.contains("cr_broken.sdsl:6:1"), "{stderr}");
}

#[test]
fn a_huge_identifier_is_shortened_in_the_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let name = "x".repeat(5_000_000);
    let text = format!(
        "int n;\ngrid g[n];\nfloat griddata a on g at 0,1;\n\
         iterate 1 {{ stencil s {{ [0:n-1] : [1]a[0] = [0]{name}[0]; }} }}\n"
    );
    let file = write(dir.path(), "long.sdsl", text);
    let stderr = fails(&["run", &file, "--set", "n=4"]);
    assert!(stderr.len() < 4_000, "{} bytes of stderr", stderr.len());
    assert!(
        stderr.contains("(5000000 characters)") && stderr.contains("long.sdsl:4:"),
        "{stderr}"
    );
}

#[test]
fn an_npy_shape_too_large_for_the_grid_size_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // The header, and a sparse file as long as the data: the shape is read
    // before any data (and the file must be able to hold what it claims).
    let mut header =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 1), }".to_string();
    while (header.len() + 11) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    let npy = dir.path().join("big.npy");
    std::fs::write(&npy, &bytes).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&npy).unwrap();
    file.set_len(bytes.len() as u64 + 4 * 2147483648).unwrap();
    let input = format!("a={}", npy.display());
    let stderr = fails(&["run", "examples/jacobi2d.sdsl", "--input", &input]);
    assert!(
        stderr.contains("has shape (2147483648, 1), too large")
            && stderr.contains("`dim1` (at most 2147483647)")
            && !stderr.contains("is not given a value"),
        "{stderr}"
    );
}

#[test]
fn truncated_images_are_called_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let png = std::fs::read(repo().join("examples/data/sample.png")).unwrap();
    let cases = [
        write(dir.path(), "cut.png", &png[..300]),
        write(dir.path(), "header.png", &png[..20]),
        write(dir.path(), "cut.pgm", b"P5\n4 4\n255\n12345678"),
    ];
    for file in &cases {
        let input = format!("img={file}");
        let stderr = fails(&["run", "examples/gaussian_blur.sdsl", "--input", &input]);
        assert!(
            stderr.contains("is truncated or corrupt") && !stderr.contains("exists"),
            "{file}: {stderr}"
        );
    }
}

#[test]
fn a_byte_order_mark_is_skipped_in_sdsl() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo().join("examples/jacobi2d.sdsl")).unwrap();
    let file = write(dir.path(), "bom.sdsl", format!("\u{feff}{text}"));
    let args = [
        "run",
        &file,
        "--backend",
        "interp",
        "--set",
        "dim0=16",
        "--set",
        "dim1=16",
    ];
    let ran = stencilc(&args);
    assert_eq!(ran.code, Some(0), "{}", ran.stderr);
    assert!(
        ran.stdout.starts_with("bom: 4 iterations"),
        "{}",
        ran.stdout
    );
}

#[test]
fn text_that_is_not_utf8_is_located() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "latin1.sdsl", b"int n;\nint caf\xe9;\n");
    let stderr = fails(&["run", &file]);
    assert!(
        stderr.contains("not UTF-8") && stderr.contains("line 2, column 8"),
        "{stderr}"
    );
    let cu = write(dir.path(), "latin1.cu", b"// \xe9\n");
    let stderr = fails(&["check-kernel", &cu]);
    assert!(stderr.contains("line 1, column 4"), "{stderr}");
}
