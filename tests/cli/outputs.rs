//! The output-path policy of every command: no output overwrites an input or
//! another output, however the path is spelt (the same path, `./`, `..`, an
//! absolute path, a symbolic or a hard link), and an output that is a
//! symbolic link is written through it by every command alike.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn stencilc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .current_dir(repo())
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every spelling of `file` that names it: the path, `./`-prefixed, through
/// `..`, a symbolic link and a hard link (made in its folder).
fn spellings(file: &Path) -> Vec<(&'static str, PathBuf)> {
    let dir = file.parent().unwrap();
    let name = file.file_name().unwrap();
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    let symlink = dir.join(format!("symlink-{}", name.to_string_lossy()));
    let hard = dir.join(format!("hard-{}", name.to_string_lossy()));
    let _ = std::fs::remove_file(&symlink);
    let _ = std::fs::remove_file(&hard);
    std::os::unix::fs::symlink(file, &symlink).unwrap();
    std::fs::hard_link(file, &hard).unwrap();
    vec![
        ("the same path", file.to_path_buf()),
        ("a ./ path", dir.join(".").join(name)),
        ("a path through ..", sub.join("..").join(name)),
        ("a symbolic link", symlink),
        ("a hard link", hard),
    ]
}

/// Runs `command` with `-o` each spelling of `input` and checks that each is
/// refused, naming both files, and leaves the input as it was.
fn refuses_every_spelling(input: &Path, command: impl Fn(&str) -> Output) {
    let before = std::fs::read(input).unwrap();
    for (how, output) in spellings(input) {
        let ran = command(path_str(&output));
        let stderr = text(&ran.stderr);
        assert_eq!(ran.status.code(), Some(1), "{how}: {stderr}");
        assert!(
            stderr.contains("overwrite the input") && stderr.contains("nothing was written"),
            "{how}: {stderr}"
        );
        assert_eq!(
            std::fs::read(input).unwrap(),
            before,
            "{how}: the input changed"
        );
    }
}

#[test]
fn emit_refuses_to_write_over_its_program() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("jacobi2d.sdsl");
    std::fs::copy(repo().join("examples/jacobi2d.sdsl"), &program).unwrap();
    refuses_every_spelling(&program, |output| {
        stencilc(&["emit", path_str(&program), "-t", "c", "-o", output])
    });
}

#[test]
fn map_refuses_to_write_over_its_c_file() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("jacobi2d.c");
    std::fs::copy(repo().join("examples/c/jacobi2d.c"), &source).unwrap();
    refuses_every_spelling(&source, |output| {
        stencilc(&["map", path_str(&source), "-o", output])
    });
}

#[test]
fn synth_refuses_to_write_over_its_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let kernel = dir.path().join("jacobi2d_tile.cu");
    std::fs::copy(repo().join("examples/cuda/jacobi2d_tile.cu"), &kernel).unwrap();
    refuses_every_spelling(&kernel, |output| {
        stencilc(&[
            "synth",
            path_str(&kernel),
            "-D",
            "TILE_X=8",
            "-D",
            "TILE_Y=4",
            "--grid",
            "2,2",
            "--block",
            "8,4",
            "--arg",
            "a=random:78",
            "--arg",
            "b=zeros:78",
            "--arg",
            "nx=13",
            "--arg",
            "ny=6",
            "-o",
            output,
        ])
    });
}

/// `run` on the Jacobi example with its 64×64 input from `input`.
fn run_jacobi(input: &Path, outputs: &[&str]) -> Output {
    let input_arg = format!("a={}", path_str(input));
    let mut args = vec![
        "run",
        "examples/jacobi2d.sdsl",
        "--backend",
        "interp",
        "--input",
        &input_arg,
    ];
    for output in outputs {
        args.extend(["--output", output]);
    }
    stencilc(&args)
}

#[test]
fn run_refuses_two_outputs_into_one_file_however_spelt() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("examples/data/jacobi_64.npy");
    let target = dir.path().join("x.npy");
    std::fs::write(&target, b"old").unwrap();
    for (how, other) in spellings(&target) {
        if how == "the same path" {
            continue;
        }
        let first = format!("a={}", path_str(&target));
        let second = format!("a={}", path_str(&other));
        let ran = run_jacobi(&input, &[&first, &second]);
        let stderr = text(&ran.stderr);
        assert_eq!(ran.status.code(), Some(1), "{how}: {stderr}");
        assert!(
            stderr.contains("are the same file") && stderr.contains("own file"),
            "{how}: {stderr}"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"old", "{how}");
    }
}

#[test]
fn run_refuses_an_output_over_its_input_or_its_program() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.npy");
    std::fs::copy(repo().join("examples/data/jacobi_64.npy"), &input).unwrap();
    let before = std::fs::read(&input).unwrap();
    for (how, output) in spellings(&input) {
        let ran = run_jacobi(&input, &[&format!("a={}", path_str(&output))]);
        let stderr = text(&ran.stderr);
        assert_eq!(ran.status.code(), Some(1), "{how}: {stderr}");
        assert!(stderr.contains("--input a"), "{how}: {stderr}");
        assert_eq!(std::fs::read(&input).unwrap(), before, "{how}");
    }
    let program = dir.path().join("jacobi2d.npy");
    std::fs::copy(repo().join("examples/jacobi2d.sdsl"), &program).unwrap();
    let ran = stencilc(&[
        "run",
        path_str(&program),
        "--input",
        "a=examples/data/jacobi_64.npy",
        "--output",
        &format!("a={}", path_str(&program)),
    ]);
    // A program whose name ends in .npy is odd but legal; overwriting it is not.
    assert_eq!(ran.status.code(), Some(1), "{}", text(&ran.stderr));
}

#[test]
fn run_and_emit_both_write_through_a_symbolic_link() {
    let dir = tempfile::tempdir().unwrap();
    let input = repo().join("examples/data/jacobi_64.npy");
    for (command, target_name) in [("run", "result.npy"), ("emit", "kernel.c")] {
        let target = dir.path().join(target_name);
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join(format!("link-{target_name}"));
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let ran = if command == "run" {
            run_jacobi(&input, &[&format!("a={}", path_str(&link))])
        } else {
            stencilc(&[
                "emit",
                "examples/jacobi2d.sdsl",
                "-t",
                "c",
                "-o",
                path_str(&link),
            ])
        };
        assert!(ran.status.success(), "{command}: {}", text(&ran.stderr));
        assert!(
            std::fs::symlink_metadata(&link).unwrap().is_symlink(),
            "{command} replaced the link"
        );
        assert_ne!(std::fs::read(&target).unwrap(), b"old", "{command}");
    }
}
