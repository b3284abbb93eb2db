//! The native executor's kernel cache and its command-line behaviour: a second
//! run compiles nothing, a change of source or flags compiles afresh, concurrent
//! runs of one program both succeed, and a missing C compiler is an error for
//! `--backend c` but a one-line notice and the interpreter for `--backend auto`.
//! Every test uses its own temporary cache folder, except the in-memory
//! [`KernelCache`]'s, which uses the default one.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Barrier};

use stencilc::back::c;
use stencilc::exec::kernel_cache::KernelCache;
use stencilc::exec::native::{self, compile, Compiler};
use stencilc::exec::options::RunOptions;
use stencilc::exec::Bindings;
use stencilc::ir::Program;
use stencilc::ir::Value;
use stencilc::source::SourceFile;

fn compiler() -> Option<Compiler> {
    let found = Compiler::from_env();
    let probe = found.as_ref().map(|_| ()).map_err(|e| e.to_string());
    common::runtime_available("cc", probe).then(|| found.unwrap())
}

fn example(name: &str) -> Program {
    let path = common::examples_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    stencilc::front::parse_program(SourceFile::new(path.display().to_string(), text))
        .and_then(stencilc::analysis::checked)
        .unwrap_or_else(|d| panic!("{d}"))
}

fn default_flags() -> Vec<String> {
    compile::flags(None, false)
}

/// The files of the cache folder with the given extension.
fn cached(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(extension))
        .collect();
    found.sort();
    found
}

#[test]
fn a_second_build_is_a_cache_hit() {
    let Some(cc) = compiler() else { return };
    let dir = tempfile::tempdir().unwrap();
    let unit = c::emit_program(&example("jacobi2d.sdsl"));

    let first = compile::build(&unit.source, &cc, &default_flags(), dir.path()).unwrap();
    assert!(!first.cache_hit, "an empty cache cannot hit");
    let second = compile::build(&unit.source, &cc, &default_flags(), dir.path()).unwrap();
    assert!(
        second.cache_hit,
        "the same source, compiler and flags must hit"
    );
    assert_eq!(first.path, second.path);
    assert_eq!(cached(dir.path(), ".so"), vec![first.path.clone()]);
    // The source is kept next to the object, for people to read.
    assert_eq!(cached(dir.path(), ".c").len(), 1);
    assert!(cached(dir.path(), ".tmp").is_empty());
}

#[test]
fn changing_the_flags_or_the_source_compiles_again() {
    let Some(cc) = compiler() else { return };
    let dir = tempfile::tempdir().unwrap();
    let jacobi = c::emit_program(&example("jacobi2d.sdsl")).source;
    let heat = c::emit_program(&example("heat3d.sdsl")).source;
    let plain = default_flags();
    let fast = compile::flags(None, true);
    assert!(fast.iter().any(|f| f == "-ffast-math"));
    assert!(!plain.iter().any(|f| f == "-ffast-math"));

    let base = compile::build(&jacobi, &cc, &plain, dir.path()).unwrap();
    let other_flags = compile::build(&jacobi, &cc, &fast, dir.path()).unwrap();
    let other_source = compile::build(&heat, &cc, &plain, dir.path()).unwrap();
    assert!(!other_flags.cache_hit && !other_source.cache_hit);
    assert_ne!(base.path, other_flags.path);
    assert_ne!(base.path, other_source.path);
    assert_eq!(cached(dir.path(), ".so").len(), 3);
    // The compiler's identity is part of the key too.
    let mut renamed = cc.clone();
    renamed.identity.push_str(" (another version)");
    assert_ne!(
        compile::cache_key(&jacobi, &cc, &plain),
        compile::cache_key(&jacobi, &renamed, &plain)
    );
}

#[test]
fn concurrent_builds_of_one_program_both_succeed() {
    let Some(cc) = compiler() else { return };
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let program = example("wave2d.sdsl");
    let unit = c::emit_program(&program);
    let start = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let (cc, dir, start) = (cc.clone(), dir.clone(), start.clone());
            let (source, entry) = (unit.source.clone(), unit.entry_symbol.clone());
            std::thread::spawn(move || {
                start.wait();
                let kernel = compile::build(&source, &cc, &default_flags(), dir.path())?;
                // SAFETY: only looks the symbol up; it is not called.
                let found = unsafe {
                    kernel
                        .library
                        .get::<unsafe extern "C" fn()>(entry.as_bytes())
                        .is_ok()
                };
                Ok::<_, stencilc::exec::ExecError>((kernel.path.clone(), found))
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    for result in &results {
        let (path, found) = result.as_ref().expect("both runs succeed");
        assert!(*found, "{} lacks the entry point", path.display());
    }
    assert_eq!(cached(dir.path(), ".so").len(), 1);
    assert!(cached(dir.path(), ".tmp").is_empty());
}

/// `stencilc ARGS...` from the repository root with a private cache folder.
fn stencilc(args: &[&str], cache: &Path, cc: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stencilc"));
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("STENCILC_CACHE_DIR", cache);
    if let Some(cc) = cc {
        command.env("CC", cc);
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn jacobi_args<'a>(backend: &'a str, out: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        "examples/jacobi2d.sdsl",
        "--backend",
        backend,
        "--input",
        "a=examples/data/jacobi_64.npy",
        "--output",
        out,
    ]
}

#[test]
fn the_command_line_reports_compiled_then_cache_hit() {
    if compiler().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let out = format!("a={}", dir.path().join("a.npy").display());
    let mut args = jacobi_args("c", &out);
    args.push("--verbose");

    let first = stencilc(&args, &cache, None);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert!(text(&first.stderr).contains("note: c: compiled: "));
    let second = stencilc(&args, &cache, None);
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert!(
        text(&second.stderr).contains("note: c: cache hit: "),
        "{}",
        text(&second.stderr)
    );
    // Other flags: another object.
    args.push("--fast-math");
    let third = stencilc(&args, &cache, None);
    assert!(text(&third.stderr).contains("note: c: compiled: "));
    assert_eq!(cached(&cache, ".so").len(), 2);
}

#[test]
fn backend_c_without_a_compiler_says_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = format!("a={}", dir.path().join("a.npy").display());
    let run = stencilc(
        &jacobi_args("c", &out),
        &dir.path().join("cache"),
        Some("/nonexistent/cc"),
    );
    assert_eq!(run.status.code(), Some(1));
    let stderr = text(&run.stderr);
    assert!(stderr.contains("no C compiler"), "{stderr}");
    assert!(stderr.contains("install gcc or clang"), "{stderr}");
    assert!(stderr.contains("set CC"), "{stderr}");
    assert!(!dir.path().join("a.npy").exists(), "nothing is written");
}

#[test]
fn backend_auto_without_a_compiler_falls_back_to_the_interpreter() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let auto_out = dir.path().join("auto.npy");
    let interp_out = dir.path().join("interp.npy");

    let auto_arg = format!("a={}", auto_out.display());
    let mut args = jacobi_args("auto", &auto_arg);
    args.push("--json");
    let auto = stencilc(&args, &cache, Some("/nonexistent/cc"));
    assert!(auto.status.success(), "{}", text(&auto.stderr));
    let stderr = text(&auto.stderr);
    let notices: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("skipping c:"))
        .collect();
    assert_eq!(notices.len(), 1, "one line about the C back-end:\n{stderr}");
    assert!(notices[0].contains("running the interpreter"), "{stderr}");
    let summary: serde_json::Value = serde_json::from_slice(&auto.stdout).unwrap();
    assert_eq!(summary["backend"], "interp", "{summary}");

    let interp_arg = format!("a={}", interp_out.display());
    let interp = stencilc(&jacobi_args("interp", &interp_arg), &cache, None);
    assert!(interp.status.success(), "{}", text(&interp.stderr));
    assert_eq!(
        std::fs::read(&auto_out).unwrap(),
        std::fs::read(&interp_out).unwrap(),
        "the fallback computes what the interpreter computes"
    );
    assert!(!cache.exists(), "nothing was compiled");
}

#[test]
fn backend_c_writes_what_the_interpreter_writes() {
    if compiler().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let mut files = Vec::new();
    for backend in ["c", "interp"] {
        let path = dir.path().join(format!("{backend}.npy"));
        let out = format!("a={}", path.display());
        let mut args = jacobi_args(backend, &out);
        args.push("--json");
        let run = stencilc(&args, &cache, None);
        assert!(run.status.success(), "{}", text(&run.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        assert_eq!(summary["backend"], backend, "{summary}");
        files.push(std::fs::read(&path).unwrap());
    }
    assert_eq!(files[0], files[1], "bit-identical with the default flags");
}

/// A [`KernelCache`] keeps one kernel per plan and serves only the program
/// value it was made for (an equal clone is another program to it); runs
/// through it give the results of runs without it.
#[test]
fn a_kernel_cache_serves_its_own_program_once_per_plan() {
    if compiler().is_none() {
        return;
    }
    let program = Arc::new(example("jacobi2d.sdsl"));
    let bindings = Bindings {
        params: vec![Value::Int(13), Value::Int(9)],
    };
    let env = stencilc::exec::bind(&program, &bindings).unwrap();
    let run = |kernels: Option<&KernelCache>, threads: Option<u32>| {
        let mut state = stencilc::session::initial_state(&program, &env, Vec::new());
        state.fields[0][0] = stencilc::exec::Buffer::Float((0..13 * 9).map(|i| i as f32).collect());
        let options = RunOptions {
            kernels: kernels.cloned(),
            threads,
            ..RunOptions::default()
        };
        native::run(&program, &env, &mut state, &options, &mut |_| {}).unwrap();
        state.newest(&program, 0).clone()
    };
    let expected = run(None, None);

    let clone_cache = KernelCache::new(Arc::new(Program::clone(&program)));
    assert_eq!(run(Some(&clone_cache), None), expected);
    assert!(
        clone_cache.is_empty(),
        "a cache serves only its own program"
    );

    let cache = KernelCache::new(Arc::clone(&program));
    assert_eq!(run(Some(&cache), None), expected);
    assert_eq!(run(Some(&cache), None), expected);
    assert_eq!(
        cache.len(),
        1,
        "the second run reuses the first run's kernel"
    );
    assert_eq!(run(Some(&cache), Some(1)), expected);
    assert_eq!(
        cache.len(),
        2,
        "another plan (one thread) is another kernel"
    );
}
