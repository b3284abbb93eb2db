//! Compiling generated C into a shared object, with a cache on disk.
//!
//! The object is stored in the user's cache directory (`STENCILC_CACHE_DIR`
//! overrides it) under a blake3 hash of the C source, the compiler's identity (its
//! path and `--version` output) and the flags, so a second run of the same program
//! compiles nothing and any change to one of them compiles afresh. How entries are
//! checked, healed, locked and published is [`cache`](super::cache)'s.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use libloading::Library;

use super::cache::{Entry, Lookup, Unit};
use crate::exec::ExecError;
use crate::files::cleanup::{output_listed, Listed};

/// The flags used unless the user replaces them (`RunOptions::cflags`):
/// optimise for this machine, OpenMP, no FMA contraction and no folding that
/// assumes the rounding mode (so results match the interpreter bit for bit:
/// GCC 12 folds `0.0 - (double)i` into `-(double)i`, which is -0.0 where `i`
/// is 0, unless told `-frounding-math`) and wrapping signed integers (as the
/// interpreter does).
pub const DEFAULT_FLAGS: &[&str] = &[
    "-O3",
    "-march=native",
    "-fopenmp",
    "-ffp-contract=off",
    "-frounding-math",
    "-fwrapv",
];

/// A C compiler found on this machine.
#[derive(Clone, Debug)]
pub struct Compiler {
    /// The command (`$CC`, or `cc`).
    pub command: String,
    /// Its `--version` output, part of the cache key.
    pub identity: String,
}

impl Compiler {
    /// The compiler named by `$CC`, or `cc`.
    pub fn from_env() -> Result<Compiler, ExecError> {
        let command = std::env::var("CC")
            .ok()
            .filter(|c| !c.trim().is_empty())
            .unwrap_or_else(|| "cc".into());
        Compiler::probe(&command)
    }

    /// Asks `command --version` who it is (remembered for the process).
    pub fn probe(command: &str) -> Result<Compiler, ExecError> {
        static KNOWN: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
        let known = KNOWN.get_or_init(|| Mutex::new(HashMap::new()));
        if let Some(identity) = known.lock().map_err(|_| poisoned())?.get(command) {
            return Ok(Compiler {
                command: command.into(),
                identity: identity.clone(),
            });
        }
        let output = Command::new(command)
            .arg("--version")
            .output()
            .map_err(|e| {
                ExecError::Unavailable(format!(
                "no C compiler: running `{command} --version` failed ({e}); install gcc or clang, \
                 set CC to a C compiler, or use --backend interp"
            ))
            })?;
        if !output.status.success() {
            return Err(ExecError::Unavailable(format!(
                "no usable C compiler: `{command} --version` exited with {}; set CC to a C compiler, \
                 or use --backend interp",
                output.status
            )));
        }
        let identity = String::from_utf8_lossy(&output.stdout).into_owned();
        known
            .lock()
            .map_err(|_| poisoned())?
            .insert(command.into(), identity.clone());
        Ok(Compiler {
            command: command.into(),
            identity,
        })
    }
}

fn poisoned() -> ExecError {
    ExecError::Failed("an earlier compilation panicked; run again".into())
}

/// The full flag list: the defaults (or the user's replacement), `-ffast-math`
/// only when asked for.
pub fn flags(cflags: Option<&str>, fast_math: bool) -> Vec<String> {
    flags_with_fma(cflags, fast_math, false)
}

/// [`flags`], and with `fma` (`--fma`) contraction into fused multiply-adds
/// allowed: `-ffp-contract=fast` in place of any other `-ffp-contract=`.
pub fn flags_with_fma(cflags: Option<&str>, fast_math: bool, fma: bool) -> Vec<String> {
    let mut flags: Vec<String> = match cflags {
        Some(text) => text.split_whitespace().map(String::from).collect(),
        None => DEFAULT_FLAGS.iter().map(|s| s.to_string()).collect(),
    };
    if fast_math && !flags.iter().any(|f| f == "-ffast-math") {
        flags.push("-ffast-math".into());
    }
    if fma {
        flags.retain(|f| !f.starts_with("-ffp-contract="));
        flags.push("-ffp-contract=fast".into());
    }
    flags
}

/// Where compiled objects are kept: `$STENCILC_CACHE_DIR`, else
/// `<user cache dir>/stencilc/native`, else a folder in the temporary directory.
pub fn cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("STENCILC_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("stencilc")
        .join("native")
}

/// A loaded shared object.
#[derive(Debug)]
pub struct Kernel {
    /// The library (kept loaded while this value lives).
    pub library: Arc<Library>,
    /// Its file in the cache.
    pub path: PathBuf,
    /// Whether it was found in the cache (nothing compiled).
    pub cache_hit: bool,
    /// Time spent hashing, compiling and loading.
    pub elapsed: Duration,
    /// What happened to the cache on the way, for the run to print as notes: a
    /// damaged entry rebuilt, a cache folder that could not be written.
    pub notes: Vec<String>,
    /// blake3 of the C source it was built from, so that it is only ever called
    /// with the unit (and so the program) it was compiled from. Private: a
    /// `Kernel` comes only from [`build`].
    source_hash: blake3::Hash,
}

impl Kernel {
    /// Whether this library was built from `source`.
    pub fn built_from(&self, source: &str) -> bool {
        self.source_hash == blake3::hash(source.as_bytes())
    }
}

/// The cache key of a unit: blake3 of source, compiler identity and flags.
pub fn cache_key(source: &str, compiler: &Compiler, flags: &[String]) -> String {
    let mut hasher = blake3::Hasher::new();
    for part in [
        source,
        "\0",
        &compiler.command,
        "\0",
        &compiler.identity,
        "\0",
        &flags.join(" "),
    ] {
        hasher.update(part.as_bytes());
    }
    hasher.finalize().to_hex()[..32].to_string()
}

/// Compiles `source` (or finds it in the cache) and loads it.
///
/// A damaged entry is rebuilt and a cache folder that cannot be written is
/// replaced by a private one, each with a note in [`Kernel::notes`] (see
/// [`cache`](super::cache)); only a compiler that fails, or an object that
/// cannot be loaded right after it was built, is an error.
pub fn build(
    source: &str,
    compiler: &Compiler,
    flags: &[String],
    dir: &Path,
) -> Result<Kernel, ExecError> {
    let start = Instant::now();
    let key = cache_key(source, compiler, flags);
    let unit = Unit {
        source,
        compiler: &compiler.command,
        compiler_identity: &compiler.identity,
        flags,
    };
    let entry = Entry::new(dir, &key);
    let mut notes = Vec::new();
    let kernel = |library, path, cache_hit, notes| Kernel {
        library,
        path,
        cache_hit,
        elapsed: start.elapsed(),
        source_hash: blake3::hash(source.as_bytes()),
        notes,
    };
    // The common case: a whole entry, loaded without taking the lock.
    if entry.lookup(&unit) == Lookup::Valid {
        if let Ok(library) = load(&entry.object()) {
            return Ok(kernel(library, entry.object(), true, notes));
        }
    }
    let lock = match entry.lock() {
        Ok(lock) => lock,
        Err(e) => {
            notes.push(unwritable_note(dir, &e));
            let (library, path) = build_privately(source, compiler, flags)?;
            return Ok(kernel(library, path, false, notes));
        }
    };
    // Under the lock, look again: another process may have built or healed
    // the entry while this one waited.
    let damage = match entry.lookup(&unit) {
        Lookup::Valid => match load(&entry.object()) {
            Ok(library) => return Ok(kernel(library, entry.object(), true, notes)),
            Err(e) => Some(format!("it cannot be loaded: {e}")),
        },
        Lookup::Missing => None,
        Lookup::Damaged(why) => Some(why),
    };
    entry.remove_abandoned_builds();
    super::cache::sweep_abandoned_builds(dir);
    if let Some(why) = damage {
        if let Err(e) = entry.evict() {
            notes.push(unwritable_note(dir, &e));
            let (library, path) = build_privately(source, compiler, flags)?;
            return Ok(kernel(library, path, false, notes));
        }
        notes.push(format!(
            "the cached kernel {} was damaged ({why}); it was rebuilt",
            entry.object().display()
        ));
    }
    match compile_into_entry(source, compiler, flags, &entry, &unit) {
        Ok(()) => {}
        Err(Built::CannotWrite(e)) => {
            drop(lock);
            notes.push(unwritable_note(dir, &e));
            let (library, path) = build_privately(source, compiler, flags)?;
            return Ok(kernel(library, path, false, notes));
        }
        Err(Built::Failed(e)) => return Err(e),
    }
    drop(lock);
    let library = load(&entry.object())?;
    Ok(kernel(library, entry.object(), false, notes))
}

/// The note for a cache folder that cannot take a new entry.
fn unwritable_note(dir: &Path, e: &std::io::Error) -> String {
    format!(
        "the kernel cache {} cannot be written ({e}); the kernel was compiled in a private \
         temporary folder (set STENCILC_CACHE_DIR to a writable folder to keep compiled kernels)",
        dir.display()
    )
}

/// Why a build into the cache did not produce an entry.
enum Built {
    /// The cache folder cannot take it (full, read-only): build elsewhere.
    CannotWrite(std::io::Error),
    /// The compiler failed or is missing: the run fails.
    Failed(ExecError),
}

/// Compiles into a private folder of the cache and publishes the entry (the
/// caller holds its lock).
fn compile_into_entry(
    source: &str,
    compiler: &Compiler,
    flags: &[String],
    entry: &Entry,
    unit: &Unit,
) -> Result<(), Built> {
    let building = entry.building_dir().map_err(Built::CannotWrite)?;
    let _listed = Listed::temporary(building.path());
    let c_file = building.path().join("unit.c");
    let object = building.path().join("unit.so");
    std::fs::write(&c_file, source).map_err(Built::CannotWrite)?;
    match run_compiler(compiler, flags, &c_file, &object) {
        Ok(()) => {}
        Err(Compiled::NoSpace(e)) => return Err(Built::CannotWrite(e)),
        Err(Compiled::Failed(message)) => {
            // Keep the C where the message says, for the user to read.
            let kept = entry.source();
            let _ = std::fs::rename(&c_file, &kept);
            return Err(Built::Failed(compiler_failed(
                compiler, flags, &kept, &message,
            )));
        }
        Err(Compiled::Unavailable(e)) => return Err(Built::Failed(e)),
    }
    entry
        .publish(&object, &c_file, unit)
        .map_err(Built::CannotWrite)
}

/// Compiles into a private temporary folder and loads the object; the
/// folder is removed once it is loaded (a loaded object needs no file).
fn build_privately(
    source: &str,
    compiler: &Compiler,
    flags: &[String],
) -> Result<(Arc<Library>, PathBuf), ExecError> {
    let private = tempfile::Builder::new()
        .prefix("stencilc-kernel-")
        .tempdir()
        .map_err(|e| {
            ExecError::Failed(format!(
                "cannot make a temporary folder to compile the kernel in: {e}; free space in \
                 the temporary folder (TMPDIR) or set STENCILC_CACHE_DIR to a writable folder"
            ))
        })?;
    let _listed = Listed::temporary(private.path());
    let c_file = private.path().join("unit.c");
    let object = private.path().join("unit.so");
    let cannot_write = |e: std::io::Error| {
        ExecError::Failed(format!(
            "cannot write the kernel to the temporary folder {}: {e}; free space there or set \
             TMPDIR or STENCILC_CACHE_DIR to a writable folder",
            private.path().display()
        ))
    };
    std::fs::write(&c_file, source).map_err(cannot_write)?;
    match run_compiler(compiler, flags, &c_file, &object) {
        Ok(()) => {}
        Err(Compiled::NoSpace(e)) => return Err(cannot_write(e)),
        Err(Compiled::Failed(message)) => {
            return Err(compiler_failed(compiler, flags, &c_file, &message))
        }
        Err(Compiled::Unavailable(e)) => return Err(e),
    }
    let library = load(&object)?;
    Ok((library, object))
}

/// How a compiler run failed.
enum Compiled {
    /// The compiler could not write its output: the folder is full.
    NoSpace(std::io::Error),
    /// It rejected the C: its first lines of errors.
    Failed(String),
    /// It could not be started.
    Unavailable(ExecError),
}

/// Runs the compiler on `c_file` into `object`, in its own process group and
/// listed, so that an interrupted run kills it (and its passes) too.
fn run_compiler(
    compiler: &Compiler,
    flags: &[String],
    c_file: &Path,
    object: &Path,
) -> Result<(), Compiled> {
    let mut command = Command::new(&compiler.command);
    command
        .args(flags)
        .args(["-fPIC", "-shared", "-o"])
        .arg(object)
        .arg(c_file)
        .arg("-lm");
    let output = output_listed(&mut command).map_err(|e| {
        Compiled::Unavailable(ExecError::Unavailable(format!(
            "no C compiler: running `{}` failed ({e}); set CC or use --backend interp",
            compiler.command
        )))
    })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("No space left on device") || stderr.contains("Disk quota exceeded") {
        return Err(Compiled::NoSpace(std::io::Error::other(
            "no space left on device",
        )));
    }
    let excerpt: Vec<&str> = stderr.lines().take(30).collect();
    Err(Compiled::Failed(excerpt.join("\n")))
}

/// The error of a compiler that rejected the generated C.
fn compiler_failed(compiler: &Compiler, flags: &[String], kept: &Path, message: &str) -> ExecError {
    ExecError::Failed(format!(
        "`{} {}` could not compile the generated C (kept at {}):\n{message}\n\
         If you set the C flags, check them; otherwise this is a stencilc bug \
         (use --backend interp meanwhile).",
        compiler.command,
        flags.join(" "),
        kept.display(),
    ))
}

/// Sets `OMP_WAIT_POLICY=passive` unless the user set a policy. OpenMP threads
/// that wait actively spin on their cores between parallel regions; on a loaded
/// machine they steal the cores the other threads need, and runs were 10 to 100
/// times slower. libgomp reads the variable once, when it is loaded with the
/// first kernel, so this runs before every load (the variable is set only once).
pub fn prefer_passive_openmp_threads() {
    static SET: std::sync::Once = std::sync::Once::new();
    SET.call_once(|| {
        if std::env::var_os("OMP_WAIT_POLICY").is_none() {
            std::env::set_var("OMP_WAIT_POLICY", "passive");
        }
    });
}

/// Loads a shared object, once per process per path.
fn load(path: &Path) -> Result<Arc<Library>, ExecError> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Arc<Library>>>> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| Mutex::new(HashMap::new()));
    let mut loaded = loaded.lock().map_err(|_| poisoned())?;
    if let Some(lib) = loaded.get(path) {
        return Ok(lib.clone());
    }
    prefer_passive_openmp_threads();
    // SAFETY: the object is one stencilc compiled from C it generated; its
    // initialisers are those of libc/libgomp, which are safe to run.
    let library = unsafe { Library::new(path) }.map_err(|e| {
        ExecError::Failed(format!(
            "cannot load the compiled kernel {}: {e}; the C compiler's output does not load \
             here (check CC and the C flags), or use --backend interp meanwhile",
            path.display()
        ))
    })?;
    let library = Arc::new(library);
    loaded.insert(path.to_path_buf(), library.clone());
    Ok(library)
}
