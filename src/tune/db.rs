//! The persistent tuning database: the best configuration `stencilc tune`
//! found for a program, looked up by `stencilc run`.
//!
//! One JSON file, `tuning.json`, in stencilc's cache directory
//! (`$STENCILC_CACHE_DIR`, else `<user cache dir>/stencilc`). An entry is keyed
//! by the blake3 hash of the program's canonical text (its IR printed as
//! SDSL, so comments and layout do not matter), the parameter values, the
//! back-end, the device, the compiler (with its flags) and stencilc's version;
//! a run matches an entry only when all of them are equal.
//!
//! Every read-modify-write holds an exclusive lock on `tuning.json.lock`
//! (an advisory file lock, `fs4`: std's `File::lock` needs Rust 1.89), so two `tune` runs at once both land; the file is
//! written to a temporary file in the same folder and renamed over the old
//! one, so a reader never sees half of it. A file that does not parse is set
//! aside as `tuning.json.corrupt-<seconds>` with a warning, and the database
//! starts again empty.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::exec::backend::Backend;
use crate::ir::env::RunEnv;
use crate::ir::Program;

use super::Knobs;

/// The file's name in the cache directory.
pub const FILE_NAME: &str = "tuning.json";

/// What a tuned configuration is valid for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Key {
    /// blake3 of the program's canonical text.
    pub program: String,
    /// The program's name (for people reading the file; part of the hash anyway).
    pub name: String,
    /// Parameter values, by name.
    pub params: BTreeMap<String, String>,
    /// The back-end (`c`, `opencl`, `cuda`).
    pub backend: String,
    /// The device (the CPU model and core count, or the GPU's name).
    pub device: String,
    /// The compiler and its flags (the C compiler's `--version` line, NVRTC's
    /// version, the OpenCL platform).
    pub compiler: String,
    /// stencilc's version.
    pub version: String,
}

impl Key {
    /// The key of `program` bound by `env` on `backend` with `device` and
    /// `compiler` as [`identity`] describes them.
    pub fn new(
        program: &Program,
        env: &RunEnv,
        backend: Backend,
        device: &str,
        compiler: &str,
    ) -> Key {
        Key::with_hash(
            program_hash(program),
            program,
            env,
            backend,
            device,
            compiler,
        )
    }

    /// [`Key::new`] with the program's [`program_hash`] already computed (a
    /// caller running one program again and again keeps it).
    pub fn with_hash(
        hash: String,
        program: &Program,
        env: &RunEnv,
        backend: Backend,
        device: &str,
        compiler: &str,
    ) -> Key {
        Key {
            program: hash,
            name: program.name.clone(),
            params: program
                .params
                .iter()
                .zip(env.params())
                .map(|(p, v)| (p.name.clone(), v.to_string()))
                .collect(),
            backend: backend.to_string(),
            device: device.to_string(),
            compiler: compiler.to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// blake3 of the program's canonical text (its IR printed as SDSL).
pub fn program_hash(program: &Program) -> String {
    blake3::hash(program.to_string().as_bytes()).to_hex()[..32].to_string()
}

/// One tuned configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// What it is valid for.
    pub key: Key,
    /// The configuration.
    pub knobs: Knobs,
    /// Its measured median compute time, seconds per run.
    pub seconds: f64,
    /// When it was recorded, seconds since the Unix epoch.
    pub recorded: u64,
}

/// The file's contents.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Contents {
    /// Format version of the file.
    format: u32,
    entries: Vec<Entry>,
}

const FORMAT: u32 = 1;

/// The database at a path.
#[derive(Clone, Debug)]
pub struct Database {
    path: PathBuf,
}

/// What went wrong with the database, as a sentence.
pub type DbError = String;

/// The cache directory: `$STENCILC_CACHE_DIR`, else `<user cache dir>/stencilc`.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("STENCILC_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("stencilc")
}

impl Database {
    /// The database in stencilc's cache directory.
    pub fn in_cache() -> Database {
        Database::at(cache_root().join(FILE_NAME))
    }

    /// The database in the file `path`.
    pub fn at(path: PathBuf) -> Database {
        Database { path }
    }

    /// The database's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self, exclusive: bool) -> Result<File, DbError> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| {
            format!(
                "cannot create the tuning database's folder `{}`: {e}",
                dir.display()
            )
        })?;
        let mut name = self.path.as_os_str().to_owned();
        name.push(".lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&name)
            .map_err(|e| {
                format!(
                    "cannot open the lock file `{}`: {e}",
                    Path::new(&name).display()
                )
            })?;
        // fs4's lock (flock on Unix, LockFileEx on Windows), spelled out so
        // that std's `File::lock` of newer toolchains (beyond the crate's
        // rust-version) is not picked instead.
        let locked = if exclusive {
            fs4::FileExt::lock(&file)
        } else {
            fs4::FileExt::lock_shared(&file)
        };
        locked.map_err(|e| format!("cannot lock `{}`: {e}", Path::new(&name).display()))?;
        Ok(file)
    }

    /// Reads the file (the caller holds the lock); a corrupted one is set
    /// aside when `repair`, with a warning in `warnings`.
    fn read(&self, repair: bool, warnings: &mut Vec<String>) -> Result<Contents, DbError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Contents::default()),
            Err(e) => return Err(format!("cannot read `{}`: {e}", self.path.display())),
        };
        match serde_json::from_str::<Contents>(&text) {
            Ok(contents) if contents.format == FORMAT => Ok(contents),
            other => {
                let why = match other {
                    Err(e) => e.to_string(),
                    Ok(c) => format!("format {} where {FORMAT} was expected", c.format),
                };
                if !repair {
                    warnings.push(format!(
                        "the tuning database `{}` is unreadable ({why}); ignoring it (the next \
                         `stencilc tune` sets it aside and starts a new one)",
                        self.path.display()
                    ));
                    return Ok(Contents::default());
                }
                let stamp = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let mut aside = self.path.as_os_str().to_owned();
                aside.push(format!(".corrupt-{stamp}"));
                let aside = PathBuf::from(aside);
                std::fs::rename(&self.path, &aside).map_err(|e| {
                    format!(
                        "the tuning database `{}` is corrupted ({why}) and cannot be set aside: {e}",
                        self.path.display()
                    )
                })?;
                warnings.push(format!(
                    "the tuning database `{}` was corrupted ({why}); it was moved to `{}` and a \
                     new one started",
                    self.path.display(),
                    aside.display()
                ));
                Ok(Contents::default())
            }
        }
    }

    /// The entry for `key`, if any; warnings (an unreadable file) go to
    /// `warnings`.
    pub fn lookup(&self, key: &Key, warnings: &mut Vec<String>) -> Result<Option<Entry>, DbError> {
        if !self.path.exists() {
            return Ok(None);
        }
        let _lock = self.lock(false)?;
        let contents = self.read(false, warnings)?;
        Ok(contents.entries.into_iter().find(|e| &e.key == key))
    }

    /// Records `entry`, replacing any entry with the same key; returns the
    /// warnings (a corrupted file set aside).
    pub fn record(&self, entry: Entry) -> Result<Vec<String>, DbError> {
        let mut warnings = Vec::new();
        let _lock = self.lock(true)?;
        let mut contents = self.read(true, &mut warnings)?;
        contents.format = FORMAT;
        contents.entries.retain(|e| e.key != entry.key);
        contents.entries.push(entry);
        contents.entries.sort_by(|a, b| a.key.cmp(&b.key));
        let text = serde_json::to_string_pretty(&contents)
            .map_err(|e| format!("cannot encode the tuning database: {e}"))?;
        crate::files::write_whole(&self.path, text.as_bytes())
            .map_err(|e| format!("cannot write `{}`: {e}", self.path.display()))?;
        Ok(warnings)
    }

    /// Every entry (for tests and reports).
    pub fn entries(&self) -> Result<Vec<Entry>, DbError> {
        let _lock = self.lock(false)?;
        Ok(self.read(false, &mut Vec::new())?.entries)
    }
}

/// The device and compiler parts of a key for `backend` on this machine, as
/// `(device, compiler)`; `fma` and the C flags are part of the compiler.
pub fn identity(backend: Backend, options: &crate::exec::options::RunOptions) -> (String, String) {
    match backend {
        Backend::C => {
            let cpu = std::fs::read_to_string("/proc/cpuinfo")
                .ok()
                .and_then(|text| {
                    text.lines()
                        .find_map(|l| l.strip_prefix("model name"))
                        .map(|l| l.trim_start_matches([' ', '\t', ':']).trim().to_string())
                })
                .unwrap_or_else(|| std::env::consts::ARCH.to_string());
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let compiler = crate::exec::native::Compiler::from_env()
                .map(|c| {
                    let first = c.identity.lines().next().unwrap_or("").to_string();
                    format!("{} ({first})", c.command)
                })
                .unwrap_or_else(|_| "no C compiler".into());
            let flags = crate::exec::native::compile::flags_with_fma(
                options.cflags.as_deref(),
                options.fast_math,
                options.fma,
            );
            (
                format!("{cpu} x{cores}"),
                format!("{compiler} {}", flags.join(" ")),
            )
        }
        Backend::OpenCl => {
            let device = crate::exec::opencl::probe()
                .map(|(name, _)| name)
                .unwrap_or_else(|_| "no OpenCL device".into());
            (device, format!("opencl fma={}", options.fma))
        }
        Backend::Cuda => {
            let device = crate::exec::cuda::probe().unwrap_or_else(|_| "no CUDA device".into());
            let nvrtc = crate::exec::cuda::nvrtc::load().unwrap_or_else(|_| "no NVRTC".into());
            (device, format!("{nvrtc} fma={}", options.fma))
        }
        Backend::Interp | Backend::Auto => ("any".into(), "none".into()),
    }
}

/// The tuned configuration recorded for `program` with `env` on `backend`,
/// if the database in the cache has one for this device, compiler and
/// version; warnings (an unreadable database) go to `warnings`.
pub fn tuned_for(
    program: &Program,
    env: &RunEnv,
    backend: Backend,
    options: &crate::exec::options::RunOptions,
    warnings: &mut Vec<String>,
) -> Option<Entry> {
    if !matches!(backend, Backend::C | Backend::OpenCl | Backend::Cuda) {
        return None;
    }
    let (device, compiler) = identity(backend, options);
    let key = Key::new(program, env, backend, &device, &compiler);
    match Database::in_cache().lookup(&key, warnings) {
        Ok(found) => found,
        Err(why) => {
            warnings.push(why);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: &str) -> Key {
        Key {
            program: "p".into(),
            name: "p".into(),
            params: [("n".to_string(), n.to_string())].into(),
            backend: "c".into(),
            device: "cpu".into(),
            compiler: "cc".into(),
            version: "0".into(),
        }
    }

    fn entry(n: &str, seconds: f64) -> Entry {
        Entry {
            key: key(n),
            knobs: Knobs {
                time: Some(2),
                ..Knobs::default()
            },
            seconds,
            recorded: 0,
        }
    }

    #[test]
    fn entries_are_found_by_their_whole_key_and_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::at(dir.path().join(FILE_NAME));
        let mut warnings = Vec::new();
        assert_eq!(db.lookup(&key("8"), &mut warnings).unwrap(), None);
        db.record(entry("8", 1.0)).unwrap();
        db.record(entry("16", 2.0)).unwrap();
        db.record(entry("8", 0.5)).unwrap();
        assert_eq!(db.entries().unwrap().len(), 2);
        let found = db.lookup(&key("8"), &mut warnings).unwrap().unwrap();
        assert_eq!(found.seconds, 0.5);
        let mut other = key("8");
        other.device = "gpu".into();
        assert_eq!(db.lookup(&other, &mut warnings).unwrap(), None);
        assert!(warnings.is_empty());
        // Written whole, with no temporary file left beside it.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    #[test]
    fn a_corrupted_file_is_set_aside_and_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "{ not json").unwrap();
        let db = Database::at(path.clone());
        let mut warnings = Vec::new();
        assert_eq!(db.lookup(&key("8"), &mut warnings).unwrap(), None);
        assert!(warnings[0].contains("unreadable"), "{warnings:?}");
        let warnings = db.record(entry("8", 1.0)).unwrap();
        assert!(warnings[0].contains("was corrupted"), "{warnings:?}");
        assert_eq!(db.entries().unwrap().len(), 1);
        let aside = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .contains(".corrupt-")
            })
            .count();
        assert_eq!(aside, 1);
    }

    #[test]
    fn concurrent_writers_lose_no_entry() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let db = Database::at(path.clone());
                std::thread::spawn(move || {
                    for i in 0..10 {
                        db.record(entry(&format!("{t}-{i}"), 1.0)).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(Database::at(path).entries().unwrap().len(), 80);
    }
}
