//! Crash safety under injected faults: `kill -9` at spread-out moments of a
//! run (compiling, writing the cache, writing the output), a full disk under
//! the cache and under the outputs, a read-only cache, damaged cache entries of
//! every kind, and sixteen concurrent runs of four programs sharing one cache.
//!
//! After every fault, once it is gone, the next run must succeed and match
//! the interpreter bit for bit, and no partial file may be left: no
//! `.stencilc-*` temporary beside an output, no `.building-*` folder in the
//! cache. Each test prints its counts (faults injected, runs after them,
//! mismatches) so that the fault matrix can be read off a test log.
//!
//! Full and read-only file systems are small tmpfs mounts the test makes; that
//! needs root (CI runs as root), and the test reports a skip otherwise.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use stencilc::exec::Buffer;
use stencilc::io::{prepare_output, FieldSpec};
use stencilc::ir::ScalarType;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn stencilc(cache: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_stencilc"));
    command
        .current_dir(repo())
        .env("STENCILC_CACHE_DIR", cache)
        // A tuned schedule in the user's database must not change the runs.
        .stdin(Stdio::null());
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn cc_available() -> bool {
    common::cc_available()
}

/// Writes a field's initial values, none of them equal (so that a wrong
/// result cannot pass as a right one), to `path`.
fn write_input(path: &Path, name: &str, ty: ScalarType, dims: &[usize]) {
    let count: usize = dims.iter().product();
    let values = (0..count).map(|i| ((i * 7919) % 1000) as f64 * 0.001 + 0.5);
    let data = match ty {
        ScalarType::Float => Buffer::Float(values.map(|v| v as f32).collect()),
        _ => Buffer::Double(values.collect()),
    };
    let spec = FieldSpec {
        name: name.into(),
        ty,
        rank: dims.len(),
    };
    prepare_output(path, &spec)
        .unwrap()
        .commit(&data, dims)
        .unwrap();
}

/// A program run with an input file and one output: the arguments of `run`
/// but for `--backend` and `--output`.
struct Case {
    program: &'static str,
    field: &'static str,
    sets: &'static [&'static str],
    input: PathBuf,
}

impl Case {
    /// j2d5pt on a 300×300 grid for 40 steps, its input written into `dir`.
    fn j2d5pt(dir: &Path) -> Case {
        let input = dir.join("j2d5pt-in.npy");
        write_input(&input, "a", ScalarType::Float, &[300, 300]);
        Case {
            program: "bench/programs/j2d5pt.sdsl",
            field: "a",
            sets: &["steps=40"],
            input,
        }
    }

    /// The four programs of the concurrency test, their inputs in `dir`.
    fn four(dir: &Path) -> Vec<Case> {
        let star = dir.join("star-in.npy");
        write_input(&star, "a", ScalarType::Float, &[24, 24, 24]);
        let heat = dir.join("heat-in.npy");
        write_input(&heat, "u", ScalarType::Double, &[20, 22, 24]);
        let wave = dir.join("wave-in.npy");
        write_input(&wave, "u", ScalarType::Float, &[50, 50]);
        vec![
            Case::j2d5pt(dir),
            Case {
                program: "bench/programs/star3d1r.sdsl",
                field: "a",
                sets: &["steps=5"],
                input: star,
            },
            Case {
                program: "examples/heat3d.sdsl",
                field: "u",
                sets: &["steps=5", "alpha=0.1"],
                input: heat,
            },
            Case {
                program: "examples/wave2d.sdsl",
                field: "u",
                sets: &["steps=5", "c2=0.2"],
                input: wave,
            },
        ]
    }

    /// The arguments of a run on `backend` writing the field to `out`.
    fn args(&self, backend: &str, out: &Path) -> Vec<String> {
        let mut args: Vec<String> = ["run", self.program, "--backend", backend, "--no-tuned"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        for set in self.sets {
            args.extend(["--set".to_string(), set.to_string()]);
        }
        args.push("--input".into());
        args.push(format!("{}={}", self.field, self.input.display()));
        args.push("--output".into());
        args.push(format!("{}={}", self.field, out.display()));
        args
    }

    /// The interpreter's result: the oracle.
    fn reference(&self, dir: &Path) -> Vec<u8> {
        let name = Path::new(self.program)
            .file_stem()
            .unwrap()
            .to_string_lossy();
        let out = dir.join(format!("{name}-reference.npy"));
        run_ok(stencilc(&dir.join("reference-cache")).args(self.args("interp", &out)));
        std::fs::read(out).unwrap()
    }
}

fn run_ok(command: &mut Command) -> Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{:?} failed ({}):\n{}",
        command,
        output.status,
        text(&output.stderr)
    );
    output
}

/// Partial files anywhere under `dir`: output temporaries and build folders.
fn partial_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if name.starts_with(".stencilc-") || name.starts_with(".building-") {
                found.push(path.clone());
            }
            if path.is_dir() && !name.starts_with(".building-") {
                dirs.push(path);
            }
        }
    }
    found
}

/// The `.so` files of a cache folder.
fn objects(cache: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "so"))
        .collect();
    found.sort();
    found
}

#[test]
fn kill_9_at_any_moment_leaves_nothing_partial_and_the_next_run_succeeds() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let case = Case::j2d5pt(dir.path());
    let reference = case.reference(dir.path());
    // How long a whole run takes with an empty cache: the kills are spread
    // over it, so that they land while compiling, while publishing the cache
    // entry and while writing the output.
    let timed_cache = dir.path().join("timed-cache");
    let started = Instant::now();
    run_ok(stencilc(&timed_cache).args(case.args("c", &dir.path().join("timed.npy"))));
    let whole = started.elapsed();
    const KILLS: u32 = 12;
    let (mut landed, mut reruns, mut mismatches) = (0, 0, 0);
    for k in 0..KILLS {
        let cache = dir.path().join(format!("cache-{k}"));
        let outputs = dir.path().join(format!("out-{k}"));
        std::fs::create_dir_all(&outputs).unwrap();
        let out = outputs.join("a.npy");
        std::fs::write(&out, b"the previous result").unwrap();
        let mut child = stencilc(&cache)
            .args(case.args("c", &out))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(whole.mul_f64(f64::from(k) / f64::from(KILLS)));
        if child.try_wait().unwrap().is_none() {
            landed += 1;
        }
        let _ = child.kill(); // SIGKILL
        child.wait().unwrap();
        // The output is the old file or the whole new one, never a part.
        let after_kill = std::fs::read(&out).unwrap();
        assert!(
            after_kill == b"the previous result" || after_kill == reference,
            "kill {k}: the output is neither the old file nor the new result ({} bytes)",
            after_kill.len()
        );
        let rerun = run_ok(stencilc(&cache).args(case.args("c", &out)));
        reruns += 1;
        if std::fs::read(&out).unwrap() != reference {
            mismatches += 1;
        }
        assert!(
            !text(&rerun.stderr).contains("error"),
            "kill {k}: {}",
            text(&rerun.stderr)
        );
        let left = partial_files(&outputs)
            .into_iter()
            .chain(partial_files(&cache))
            .collect::<Vec<_>>();
        assert!(left.is_empty(), "kill {k}: partial files left: {left:?}");
    }
    println!(
        "kill -9: {KILLS} faults injected ({landed} while running), {reruns} runs after them, \
         {mismatches} mismatches"
    );
    assert_eq!(mismatches, 0);
    assert!(landed > 0, "no kill landed while the run was running");
}

/// Damages a cache entry in one way.
type Damage = fn(object: &Path, manifest: &Path, other_object: &Path);

#[test]
fn every_kind_of_damaged_cache_entry_is_rebuilt_with_a_note() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let case = Case::j2d5pt(dir.path());
    let reference = case.reference(dir.path());
    let damages: [(&str, Damage); 7] = [
        ("object truncated to 100 bytes", |object, _, _| {
            let bytes = std::fs::read(object).unwrap();
            std::fs::write(object, &bytes[..100]).unwrap();
        }),
        ("object emptied", |object, _, _| {
            std::fs::write(object, b"").unwrap()
        }),
        ("object overwritten with garbage", |object, _, _| {
            let size = std::fs::metadata(object).unwrap().len() as usize;
            std::fs::write(object, vec![0x5a; size]).unwrap();
        }),
        (
            "object replaced by another program's",
            |object, _, other| {
                std::fs::copy(other, object).unwrap();
            },
        ),
        ("object removed", |object, _, _| {
            std::fs::remove_file(object).unwrap()
        }),
        ("manifest removed", |_, manifest, _| {
            std::fs::remove_file(manifest).unwrap()
        }),
        ("manifest corrupted", |_, manifest, _| {
            std::fs::write(manifest, b"{\"format\": 1, \"object_bytes\"").unwrap()
        }),
    ];
    let mut mismatches = 0;
    for (what, damage) in damages {
        let cache = dir.path().join("cache");
        let _ = std::fs::remove_dir_all(&cache);
        let out = dir.path().join("out.npy");
        // Another program's object, to copy over the entry.
        let wave = Case::four(dir.path()).pop().unwrap();
        run_ok(stencilc(&cache).args(wave.args("c", &dir.path().join("wave.npy"))));
        let other = objects(&cache)[0].clone();
        run_ok(stencilc(&cache).args(case.args("c", &out)));
        let object = objects(&cache)
            .into_iter()
            .find(|o| *o != other)
            .expect("the Jacobi entry");
        let manifest = object.with_extension("json");
        assert!(manifest.is_file(), "{what}: no manifest beside {object:?}");
        damage(&object, &manifest, &other);
        let healed = run_ok(stencilc(&cache).args(case.args("c", &out)));
        let stderr = text(&healed.stderr);
        assert!(
            stderr.contains("was damaged") && stderr.contains("rebuilt"),
            "{what}: no note of the repair:\n{stderr}"
        );
        if std::fs::read(&out).unwrap() != reference {
            mismatches += 1;
        }
        // Healed for good: the next run is a plain cache hit, without a note.
        let again = run_ok(stencilc(&cache).args(case.args("c", &out)).arg("-v"));
        let stderr = text(&again.stderr);
        assert!(stderr.contains("cache hit"), "{what}: {stderr}");
        assert!(!stderr.contains("damaged"), "{what}: {stderr}");
        assert!(partial_files(&cache).is_empty(), "{what}");
    }
    println!("damaged entries: 7 kinds injected, 14 runs after them, {mismatches} mismatches");
    assert_eq!(mismatches, 0);
}

#[test]
fn sixteen_concurrent_runs_of_four_programs_share_one_cache() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let cases = Case::four(dir.path());
    let references: Vec<Vec<u8>> = cases.iter().map(|c| c.reference(dir.path())).collect();
    let mut children = Vec::new();
    for round in 0..4 {
        for (p, case) in cases.iter().enumerate() {
            let out = dir.path().join(format!("{p}-{round}.npy"));
            let child = stencilc(&cache)
                .args(case.args("c", &out))
                .arg("-v")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            children.push((p, out, child));
        }
    }
    let (mut compiled, mut mismatches) = ([0; 4], 0);
    for (p, out, child) in children {
        let output = child.wait_with_output().unwrap();
        let stderr = text(&output.stderr);
        assert!(output.status.success(), "{}: {stderr}", cases[p].program);
        if stderr.contains("c: compiled") {
            compiled[p] += 1;
        }
        if std::fs::read(&out).unwrap() != references[p] {
            mismatches += 1;
        }
    }
    // The entry's lock: each program compiled once, by one of its four runs.
    assert_eq!(compiled, [1; 4], "compilations per program");
    assert_eq!(mismatches, 0, "runs that disagree with the interpreter");
    assert_eq!(objects(&cache).len(), 4);
    assert!(partial_files(&cache).is_empty());
    println!("concurrency: 16 runs of 4 programs on one cache, 4 compilations, 0 mismatches");
}

#[test]
fn a_cache_folder_that_cannot_be_made_still_runs_with_a_note() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let case = Case::j2d5pt(dir.path());
    let reference = case.reference(dir.path());
    // A cache "folder" below a plain file: it cannot be created, by root either.
    let blocker = dir.path().join("not-a-folder");
    std::fs::write(&blocker, "x").unwrap();
    let out = dir.path().join("out.npy");
    let ran = run_ok(stencilc(&blocker.join("cache")).args(case.args("c", &out)));
    let stderr = text(&ran.stderr);
    assert!(
        stderr.contains("cannot be written") && stderr.contains("STENCILC_CACHE_DIR"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), reference);
}

/// A tmpfs mounted for the length of a test, unmounted when dropped.
struct Mount {
    dir: tempfile::TempDir,
}

impl Mount {
    /// A tmpfs of `size` (`mount -o size=`), with `options` added; `None` and a
    /// reported skip where this process may not mount (not root).
    fn tmpfs(size: &str, options: &str) -> Option<Mount> {
        let dir = tempfile::tempdir().unwrap();
        let all = if options.is_empty() {
            format!("size={size}")
        } else {
            format!("size={size},{options}")
        };
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &all, "tmpfs"])
            .arg(dir.path())
            .output();
        let probe = match mounted {
            Ok(o) if o.status.success() => Ok(()),
            Ok(o) => Err(format!(
                "`mount -t tmpfs` failed (run the tests as root): {}",
                text(&o.stderr).trim()
            )),
            Err(e) => Err(format!("cannot run `mount`: {e}")),
        };
        common::runtime_available("root-mount", probe).then_some(Mount { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(self.path())
            .status()
            .unwrap();
        assert!(status.success(), "remount {options}");
    }

    /// Fills the file system, leaving no byte free.
    fn fill(&self) {
        let filler = self.path().join("filler");
        let mut file = std::fs::File::create(filler).unwrap();
        let block = vec![0u8; 4096];
        while std::io::Write::write_all(&mut file, &block).is_ok() {}
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}

#[test]
fn a_full_disk_under_the_outputs_is_one_clear_error_and_leaves_the_old_file() {
    if !cc_available() {
        return;
    }
    let Some(disk) = Mount::tmpfs("2m", "") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let case = Case::j2d5pt(dir.path());
    let reference = case.reference(dir.path());
    let cache = dir.path().join("cache");
    let out = disk.path().join("a.npy");
    std::fs::write(&out, b"the previous result").unwrap();
    disk.fill();
    let failed = stencilc(&cache)
        .args(case.args("c", &out))
        .output()
        .unwrap();
    let stderr = text(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("No space left on device") && stderr.contains("a.npy"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("free space"), "{stderr}");
    assert_eq!(std::fs::read(&out).unwrap(), b"the previous result");
    assert!(partial_files(disk.path()).is_empty());
    // Space freed: the next run succeeds.
    std::fs::remove_file(disk.path().join("filler")).unwrap();
    run_ok(stencilc(&cache).args(case.args("c", &out)));
    assert_eq!(std::fs::read(&out).unwrap(), reference);
    println!("full disk under the outputs: 1 fault, 1 run after it, 0 mismatches");
}

#[test]
fn a_full_or_read_only_cache_compiles_privately_and_heals_once_writable() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let case = Case::j2d5pt(dir.path());
    let reference = case.reference(dir.path());
    let out = dir.path().join("out.npy");
    let mut runs = 0;
    for (what, options) in [("full", ""), ("read-only", "ro")] {
        let Some(disk) = Mount::tmpfs("2m", "") else {
            return;
        };
        let cache = disk.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        if options == "ro" {
            disk.remount("ro");
        } else {
            disk.fill();
        }
        let ran = run_ok(stencilc(&cache).args(case.args("c", &out)));
        runs += 1;
        let stderr = text(&ran.stderr);
        assert!(
            stderr.contains("cannot be written") && stderr.contains("private"),
            "{what}: {stderr}"
        );
        assert_eq!(std::fs::read(&out).unwrap(), reference, "{what}");
        assert!(partial_files(disk.path()).is_empty(), "{what}");
        // Writable again: the next run fills the cache, the one after hits.
        if options == "ro" {
            disk.remount("rw");
        } else {
            std::fs::remove_file(disk.path().join("filler")).unwrap();
        }
        run_ok(stencilc(&cache).args(case.args("c", &out)));
        let hit = run_ok(stencilc(&cache).args(case.args("c", &out)).arg("-v"));
        runs += 2;
        assert!(text(&hit.stderr).contains("cache hit"), "{what}");
        assert_eq!(std::fs::read(&out).unwrap(), reference, "{what}");
    }
    println!("full and read-only caches: 2 faults, {runs} runs after them, 0 mismatches");
}

#[test]
fn an_interrupted_compile_leaves_no_files_and_no_compiler_behind() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    // A "compiler" that takes a while and then writes its output, as a real
    // one would if it outlived stencilc.
    let slow_cc = dir.path().join("slow-cc");
    let marker = dir.path().join("compiler-finished");
    std::fs::write(
        &slow_cc,
        format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then exec cc --version; fi\nsleep 3\n\
             touch {}\nexec cc \"$@\"\n",
            marker.display()
        ),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&slow_cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let child = stencilc(&cache)
        .env("CC", &slow_cc)
        .args(Case::j2d5pt(dir.path()).args("c", &dir.path().join("out.npy")))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the build folder exists: the compiler is running.
    let deadline = Instant::now() + Duration::from_secs(30);
    while partial_files(&cache).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!partial_files(&cache).is_empty(), "the build never started");
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(143), "{}", text(&output.stderr));
    assert!(
        partial_files(&cache).is_empty(),
        "{:?}",
        partial_files(&cache)
    );
    // The compiler was killed with stencilc: it never gets to finish.
    std::thread::sleep(Duration::from_secs(4));
    assert!(!marker.exists(), "the compiler outlived stencilc");
    assert!(partial_files(&cache).is_empty());
}

#[test]
fn a_temporary_left_by_a_killed_writer_is_removed_by_the_next_write_there() {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("inputs");
    let outputs = dir.path().join("outputs");
    std::fs::create_dir_all(&inputs).unwrap();
    std::fs::create_dir_all(&outputs).unwrap();
    let case = Case::j2d5pt(&inputs);
    // What a process killed with SIGKILL leaves: an unlocked temporary whose
    // writer's process id no longer exists.
    let left = outputs.join(".stencilc-999999999-AbCdEf.tmp");
    std::fs::write(&left, b"part of a result").unwrap();
    let out = outputs.join("a.npy");
    run_ok(stencilc(&dir.path().join("cache")).args(case.args("interp", &out)));
    assert!(!left.exists());
    assert!(partial_files(dir.path()).is_empty());
}

#[test]
fn an_interrupted_map_profile_leaves_no_files_and_no_program_behind() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let temporary = dir.path().join("tmp");
    std::fs::create_dir_all(&temporary).unwrap();
    let marker = dir.path().join("profiled-program-finished");
    let source = dir.path().join("slow.c");
    std::fs::write(
        &source,
        format!(
            "#include <stdio.h>\n#include <unistd.h>\n#define N 64\ndouble a[N], b[N];\n\
             int main(void) {{\n  for (int i = 1; i < N - 1; i++)\n    b[i] = a[i - 1] + a[i + 1];\n\
             \x20 sleep(4);\n  FILE *f = fopen(\"{}\", \"w\");\n  if (f) fclose(f);\n  return 0;\n}}\n",
            marker.display()
        ),
    )
    .unwrap();
    let child = stencilc(&dir.path().join("cache"))
        .env("TMPDIR", &temporary)
        .args(["map", source.to_str().unwrap(), "--profile"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the profiled program is built: it is running then.
    let deadline = Instant::now() + Duration::from_secs(60);
    let built = || {
        std::fs::read_dir(&temporary)
            .unwrap()
            .flatten()
            .any(|d| d.path().join("profiled").exists())
    };
    while !built() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(built(), "the profiled program was never built");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", text(&output.stderr));
    let left: Vec<_> = std::fs::read_dir(&temporary).unwrap().flatten().collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    std::thread::sleep(Duration::from_secs(5));
    assert!(!marker.exists(), "the profiled program outlived stencilc");
}
