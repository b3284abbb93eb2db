//! Compiling generated C into a shared object, with a cache on disk.
//!
//! The object is stored in the user's cache directory (`STENCILC_CACHE_DIR`
//! overrides it) under a blake3 hash of the C source, the compiler's identity (its
//! path and `--version` output) and the flags, so a second run of the same program
//! compiles nothing and any change to one of them compiles afresh. Concurrent runs
//! never see a half-written object: each compiles to a private temporary name and
//! renames it into place, which is atomic on one file system.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use libloading::Library;

use crate::exec::ExecError;

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
pub fn build(
    source: &str,
    compiler: &Compiler,
    flags: &[String],
    dir: &Path,
) -> Result<Kernel, ExecError> {
    let start = Instant::now();
    let key = cache_key(source, compiler, flags);
    let object = dir.join(format!("{key}.so"));
    let cache_hit = object.is_file();
    if !cache_hit {
        compile_into(source, compiler, flags, dir, &key, &object)?;
    }
    let library = load(&object)?;
    Ok(Kernel {
        library,
        path: object,
        cache_hit,
        elapsed: start.elapsed(),
        source_hash: blake3::hash(source.as_bytes()),
    })
}

fn compile_into(
    source: &str,
    compiler: &Compiler,
    flags: &[String],
    dir: &Path,
    key: &str,
    object: &Path,
) -> Result<(), ExecError> {
    std::fs::create_dir_all(dir).map_err(|e| {
        ExecError::Failed(format!(
            "cannot create the kernel cache folder {}: {e}; set STENCILC_CACHE_DIR to a writable folder",
            dir.display()
        ))
    })?;
    let unique = format!(
        "{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    );
    let c_file = dir.join(format!("{key}.{unique}.c"));
    let tmp_object = dir.join(format!("{key}.{unique}.so.tmp"));
    let write_error = |e: std::io::Error| {
        ExecError::Failed(format!(
            "cannot write to the kernel cache {}: {e}; set STENCILC_CACHE_DIR",
            dir.display()
        ))
    };
    std::fs::write(&c_file, source).map_err(write_error)?;
    let output = Command::new(&compiler.command)
        .args(flags)
        .args(["-fPIC", "-shared", "-o"])
        .arg(&tmp_object)
        .arg(&c_file)
        .arg("-lm")
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) => {
            let _ = std::fs::remove_file(&c_file);
            return Err(ExecError::Unavailable(format!(
                "no C compiler: running `{}` failed ({e}); set CC or use --backend interp",
                compiler.command
            )));
        }
    };
    if !output.status.success() {
        let _ = std::fs::remove_file(&tmp_object);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let excerpt: Vec<&str> = stderr.lines().take(30).collect();
        return Err(ExecError::Failed(format!(
            "`{} {}` could not compile the generated C (kept at {}):\n{}\n\
             If you set the C flags, check them; otherwise this is a stencilc bug \
             (use --backend interp meanwhile).",
            compiler.command,
            flags.join(" "),
            c_file.display(),
            excerpt.join("\n")
        )));
    }
    // Publish the source next to the object for people to read, then the object.
    let _ = std::fs::rename(&c_file, dir.join(format!("{key}.c")));
    std::fs::rename(&tmp_object, object).map_err(write_error)
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
            "cannot load the compiled kernel {}: {e}; delete it to compile it again",
            path.display()
        ))
    })?;
    let library = Arc::new(library);
    loaded.insert(path.to_path_buf(), library.clone());
    Ok(library)
}
