//! Bad input to `stencilc run`: each case gives a clear message on stderr (the
//! text is snapshot-tested, paths normalised), a non-zero exit status, and writes
//! no output file.

use std::path::{Path, PathBuf};
use std::process::Command;

use stencilc::exec::Buffer;
use stencilc::io::{prepare_output, FieldSpec};

/// A 2-D Jacobi-like program on an `n`×`n` grid (float) with a reduction.
const SMOOTH: &str = "\
int n;
double weight;
grid g[n][n];
float griddata a on g at 0,1;
int griddata mask on g at 0;
iterate 3 {
    stencil smooth {
        [1:n-2][1:n-2] : [1]a[0][0] = 0.25f*([0]a[-1][0] + [0]a[1][0] + [0]a[0][-1] + [0]a[0][1]);
    }
    reduction total + {
        [0:n-1][0:n-1] : [1]a[0][0];
    }
}
";

/// A scratch directory holding the program `smooth.sdsl`.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("smooth.sdsl"), SMOOTH).unwrap();
        Scratch { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes an array file through the library (shape `dims`).
    fn array(&self, name: &str, data: Buffer, dims: &[usize]) -> PathBuf {
        let path = self.path(name);
        let spec = FieldSpec {
            name: "x".into(),
            ty: data.ty(),
            rank: dims.len(),
        };
        prepare_output(&path, &spec)
            .unwrap()
            .commit(&data, dims)
            .unwrap();
        path
    }

    /// Runs `stencilc` in the scratch directory; returns the exit status and
    /// stderr with the scratch path replaced by `[TMP]`.
    fn run(&self, args: &[&str]) -> (i32, String) {
        let before = self.files();
        let output = Command::new(env!("CARGO_BIN_EXE_stencilc"))
            .args(args)
            .current_dir(self.dir.path())
            .output()
            .unwrap();
        assert_eq!(
            self.files(),
            before,
            "a failed run must not write or leave any file"
        );
        assert!(
            output.stdout.is_empty(),
            "nothing on stdout for a failed run"
        );
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!stderr.contains("RUST_BACKTRACE"), "{stderr}");
        let tmp = self.dir.path().to_string_lossy().into_owned();
        (
            output.status.code().unwrap_or(-1),
            stderr.replace(&tmp, "[TMP]"),
        )
    }

    /// Every file name in the scratch directory, sorted.
    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = walk(self.dir.path());
        names.sort();
        names
    }
}

fn walk(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let path = entry.path();
        names.push(path.to_string_lossy().into_owned());
        if path.is_dir() {
            names.extend(walk(&path));
        }
    }
    names
}

/// Asserts exit status 1 and snapshots stderr.
fn fails(name: &str, scratch: &Scratch, args: &[&str]) {
    let (code, stderr) = scratch.run(args);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    insta::assert_snapshot!(name, stderr);
}

#[test]
fn malformed_program() {
    let s = Scratch::new();
    std::fs::write(s.path("bad.sdsl"), "int n;\ngrid g[n][n;\n").unwrap();
    fails(
        "malformed_program",
        &s,
        &["run", "bad.sdsl", "--set", "n=4", "--output", "a=out.npy"],
    );
}

#[test]
fn missing_program_file() {
    let s = Scratch::new();
    fails("missing_program_file", &s, &["run", "nope.sdsl"]);
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let s = Scratch::new();
    let (code, stderr) = s.run(&["run", "smooth.sdsl", "--sett", "n=4"]);
    assert_eq!(code, 2, "{stderr}");
    insta::assert_snapshot!("unknown_flag", stderr);
}

#[test]
fn malformed_set_is_a_usage_error() {
    let s = Scratch::new();
    let (code, stderr) = s.run(&["run", "smooth.sdsl", "--set", "n"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("expected NAME=VALUE"), "{stderr}");
}

#[test]
fn missing_parameter() {
    let s = Scratch::new();
    fails(
        "missing_parameter",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "weight=1",
            "--output",
            "a=out.npy",
        ],
    );
}

#[test]
fn parameter_of_the_wrong_type() {
    let s = Scratch::new();
    fails(
        "parameter_wrong_type",
        &s,
        &["run", "smooth.sdsl", "--set", "n=4.5", "--set", "weight=1"],
    );
}

#[test]
fn unknown_parameter() {
    let s = Scratch::new();
    fails(
        "unknown_parameter",
        &s,
        &["run", "smooth.sdsl", "--set", "size=4", "--set", "weight=1"],
    );
}

#[test]
fn unknown_field_in_input() {
    let s = Scratch::new();
    s.array("b.npy", Buffer::Float(vec![0.0; 16]), &[4, 4]);
    fails(
        "unknown_field_input",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--input",
            "temp=b.npy",
        ],
    );
}

#[test]
fn unknown_field_in_output() {
    let s = Scratch::new();
    fails(
        "unknown_field_output",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--output",
            "A=out.npy",
        ],
    );
}

#[test]
fn missing_input_file() {
    let s = Scratch::new();
    fails(
        "missing_input_file",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--input",
            "a=nothere.npy",
            "--output",
            "a=out.npy",
        ],
    );
}

#[test]
fn misshaped_npy() {
    let s = Scratch::new();
    s.array("a.npy", Buffer::Float(vec![0.0; 20]), &[4, 5]);
    fails(
        "misshaped_npy",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--input",
            "a=a.npy",
            "--output",
            "a=out.npy",
        ],
    );
}

#[test]
fn npy_of_the_wrong_dtype() {
    let s = Scratch::new();
    s.array("a.npy", Buffer::Double(vec![0.0; 16]), &[4, 4]);
    fails(
        "wrong_dtype",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--input",
            "a=a.npy",
            "--output",
            "a=out.npy",
        ],
    );
}

#[test]
fn raw_of_the_wrong_size() {
    let s = Scratch::new();
    std::fs::write(s.path("a.raw"), [0u8; 60]).unwrap();
    fails(
        "raw_wrong_size",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--input",
            "a=a.raw",
            "--output",
            "a=out.raw",
        ],
    );
}

#[test]
fn image_for_an_integer_field() {
    let s = Scratch::new();
    fails(
        "image_integer_field",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--output",
            "mask=mask.png",
        ],
    );
}

#[test]
fn output_in_a_missing_directory() {
    let s = Scratch::new();
    fails(
        "output_missing_directory",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--output",
            "a=no/such/dir/out.npy",
        ],
    );
}

#[test]
fn output_under_a_regular_file() {
    let s = Scratch::new();
    std::fs::write(s.path("plain"), b"x").unwrap();
    fails(
        "output_under_file",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--output",
            "a=plain/out.npy",
        ],
    );
}

#[test]
fn output_with_an_unsupported_extension() {
    let s = Scratch::new();
    fails(
        "output_bad_extension",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--output",
            "a=out.tiff",
        ],
    );
}

#[test]
fn an_input_error_leaves_earlier_outputs_unwritten() {
    // The output path is fine but the run fails later (missing input): the
    // output must not appear, not even empty.
    let s = Scratch::new();
    let (code, _) = s.run(&[
        "run",
        "smooth.sdsl",
        "--set",
        "n=4",
        "--set",
        "weight=1",
        "--output",
        "a=out.npy",
        "--input",
        "mask=missing.npy",
    ]);
    assert_eq!(code, 1);
    assert!(!s.path("out.npy").exists());
}

#[test]
fn region_flag_on_a_plain_program() {
    let s = Scratch::new();
    fails(
        "region_on_sdsl",
        &s,
        &["run", "smooth.sdsl", "--region", "1"],
    );
}

#[test]
fn region_out_of_range() {
    let s = Scratch::new();
    let host = format!(
        "int main(void) {{\n#pragma sdsl begin\n{SMOOTH}#pragma sdsl end\n  return 0;\n}}\n"
    );
    std::fs::write(s.path("host.c"), host).unwrap();
    fails(
        "region_out_of_range",
        &s,
        &[
            "run", "host.c", "--region", "3", "--set", "n=4", "--set", "weight=1",
        ],
    );
}

#[test]
fn conflicting_input_shapes() {
    let s = Scratch::new();
    s.array("a.npy", Buffer::Float(vec![0.0; 16]), &[4, 4]);
    s.array("mask.npy", Buffer::Int(vec![0; 25]), &[5, 5]);
    fails(
        "conflicting_shapes",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "weight=1",
            "--input",
            "a=a.npy",
            "--input",
            "mask=mask.npy",
        ],
    );
}

#[test]
fn unknown_field_in_shm() {
    let s = Scratch::new();
    fails(
        "unknown_field_shm",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--shm",
            "a,temp",
        ],
    );
}

#[test]
fn same_output_file_twice() {
    let s = Scratch::new();
    fails(
        "same_output_twice",
        &s,
        &[
            "run",
            "smooth.sdsl",
            "--set",
            "n=4",
            "--set",
            "weight=1",
            "--output",
            "a=o.npy",
            "--output",
            "mask=o.npy",
        ],
    );
}

#[test]
fn access_outside_the_grid_for_the_given_parameters() {
    // Only the parameter values show that row `m` lies outside an `n`-row grid:
    // reported before computing, and no output appears.
    let s = Scratch::new();
    std::fs::write(
        s.path("rows.sdsl"),
        "int n;\nint m;\ngrid g[n][n];\nfloat griddata a on g at 0;\n\
         iterate 1 {\n    stencil fill {\n        [0:m][0:n-1] : [0]a[0][0] = 1.0f;\n    }\n}\n",
    )
    .unwrap();
    fails(
        "outside_grid_at_run_time",
        &s,
        &[
            "run",
            "rows.sdsl",
            "--set",
            "n=4",
            "--set",
            "m=4",
            "--output",
            "a=out.npy",
        ],
    );
}
