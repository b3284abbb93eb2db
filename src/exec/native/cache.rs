//! The compiled kernels' cache on disk: entries that are checked before use,
//! rebuilt when damaged, and never seen half-written.
//!
//! An entry is four files named after its key (a hash of the C source, the
//! compiler and the flags): `KEY.so`, the object; `KEY.json`, its manifest
//! (the object's size and blake3 hash, the source's hash, the compiler and
//! the flags); `KEY.c`, the source, for people to read; and `KEY.lock`, the
//! advisory lock held by whoever builds the entry. A lookup trusts an object
//! only when its manifest matches it and the unit being run, so a truncated
//! object, one overwritten by another program's, or one left by a process
//! killed mid-write is a miss: evicted under the lock and rebuilt, with a
//! note, never an error (as ccache treats an unreadable entry).
//!
//! A build compiles into a private folder, `.building-KEY-PID-N`, and renames
//! the object and then the manifest into place, so that a reader sees a whole
//! entry or none. The folder is listed for the signal handler, and the
//! compiler runs in its own process group, listed too: an interrupted run
//! leaves neither files nor a compiler behind. A process killed with SIGKILL
//! cannot clean up; its folder is removed by the next build that holds the
//! entry's lock (no live process can be building it then).
//!
//! A cache folder that cannot be written (read-only, full, not a folder) does
//! not stop a run: the kernel is compiled into a private temporary folder,
//! loaded, and the folder removed, with a note saying how to keep kernels.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The manifest's format; another value is a miss.
const MANIFEST_FORMAT: u32 = 1;

/// What an entry's object must be, written beside it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_FORMAT`].
    pub format: u32,
    /// The object's size in bytes.
    pub object_bytes: u64,
    /// blake3 of the object.
    pub object_blake3: String,
    /// blake3 of the C source it was compiled from.
    pub source_blake3: String,
    /// The compiler command.
    pub compiler: String,
    /// blake3 of the compiler's `--version` output.
    pub compiler_identity_blake3: String,
    /// The flags it was compiled with.
    pub flags: Vec<String>,
}

impl Manifest {
    /// The manifest of `object` (already written) built from `unit`.
    pub fn of(object: &Path, unit: &Unit) -> io::Result<Manifest> {
        let bytes = std::fs::read(object)?;
        Ok(Manifest {
            format: MANIFEST_FORMAT,
            object_bytes: bytes.len() as u64,
            object_blake3: blake3::hash(&bytes).to_hex().to_string(),
            ..unit.expected_manifest()
        })
    }
}

/// What is being built: the source, the compiler and the flags.
#[derive(Clone, Copy, Debug)]
pub struct Unit<'a> {
    /// The C source.
    pub source: &'a str,
    /// The compiler command.
    pub compiler: &'a str,
    /// The compiler's `--version` output.
    pub compiler_identity: &'a str,
    /// The flags.
    pub flags: &'a [String],
}

impl Unit<'_> {
    /// The manifest fields that do not depend on the object.
    fn expected_manifest(&self) -> Manifest {
        Manifest {
            format: MANIFEST_FORMAT,
            object_bytes: 0,
            object_blake3: String::new(),
            source_blake3: blake3::hash(self.source.as_bytes()).to_hex().to_string(),
            compiler: self.compiler.to_string(),
            compiler_identity_blake3: blake3::hash(self.compiler_identity.as_bytes())
                .to_hex()
                .to_string(),
            flags: self.flags.to_vec(),
        }
    }
}

/// What a lookup found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A whole entry for this unit.
    Valid,
    /// No entry.
    Missing,
    /// Files that cannot be trusted, and why (one clause).
    Damaged(String),
}

/// One entry's files in a cache folder.
#[derive(Clone, Debug)]
pub struct Entry {
    dir: PathBuf,
    key: String,
}

/// The prefix of the folders builds compile in.
const BUILDING_PREFIX: &str = ".building-";

impl Entry {
    /// The entry `key` in `dir`.
    pub fn new(dir: &Path, key: &str) -> Entry {
        Entry {
            dir: dir.to_path_buf(),
            key: key.to_string(),
        }
    }

    /// The object's path.
    pub fn object(&self) -> PathBuf {
        self.dir.join(format!("{}.so", self.key))
    }

    /// The manifest's path.
    pub fn manifest(&self) -> PathBuf {
        self.dir.join(format!("{}.json", self.key))
    }

    /// The source's path (kept for people to read).
    pub fn source(&self) -> PathBuf {
        self.dir.join(format!("{}.c", self.key))
    }

    fn lock_path(&self) -> PathBuf {
        self.dir.join(format!("{}.lock", self.key))
    }

    /// Whether the entry's files are whole and were built from `unit`.
    pub fn lookup(&self, unit: &Unit) -> Lookup {
        let object = self.object();
        let text = match std::fs::read_to_string(self.manifest()) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return if object.exists() {
                    Lookup::Damaged(
                        "its manifest is missing (a build was cut short, or an older stencilc \
                         wrote it)"
                            .into(),
                    )
                } else {
                    Lookup::Missing
                };
            }
            Err(e) => return Lookup::Damaged(format!("its manifest cannot be read ({e})")),
        };
        let manifest: Manifest = match serde_json::from_str(&text) {
            Ok(m) => m,
            Err(e) => return Lookup::Damaged(format!("its manifest is corrupted ({e})")),
        };
        let expected = unit.expected_manifest();
        if manifest.format != MANIFEST_FORMAT
            || manifest.source_blake3 != expected.source_blake3
            || manifest.compiler != expected.compiler
            || manifest.compiler_identity_blake3 != expected.compiler_identity_blake3
            || manifest.flags != expected.flags
        {
            return Lookup::Damaged("its manifest describes another build".into());
        }
        let bytes = match std::fs::read(&object) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Lookup::Damaged("its object is missing".into())
            }
            Err(e) => return Lookup::Damaged(format!("its object cannot be read ({e})")),
        };
        if bytes.len() as u64 != manifest.object_bytes {
            return Lookup::Damaged(format!(
                "its object is {} bytes where its manifest says {} (cut short?)",
                bytes.len(),
                manifest.object_bytes
            ));
        }
        if blake3::hash(&bytes).to_hex().as_str() != manifest.object_blake3 {
            return Lookup::Damaged(
                "its object's contents differ from what its manifest records (overwritten?)".into(),
            );
        }
        Lookup::Valid
    }

    /// Takes the entry's lock, waiting for a build in another process or
    /// thread to finish. Fails when the folder cannot be written.
    pub fn lock(&self) -> io::Result<EntryLock> {
        std::fs::create_dir_all(&self.dir)?;
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.lock_path())?;
        fs4::FileExt::lock(&file)?;
        Ok(EntryLock { _file: file })
    }

    /// Removes the entry's object and manifest (the caller holds the lock);
    /// the manifest first, so that no reader trusts a half-removed entry.
    pub fn evict(&self) -> io::Result<()> {
        for path in [self.manifest(), self.object()] {
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        Ok(())
    }

    /// Removes this entry's build folders left by processes that died; the
    /// caller holds the lock, so no live process is building the entry.
    pub fn remove_abandoned_builds(&self) {
        let prefix = format!("{BUILDING_PREFIX}{}-", self.key);
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
            {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }

    /// A new private folder to build in, inside the cache folder (so that the
    /// object is renamed, not copied, into place).
    pub fn building_dir(&self) -> io::Result<tempfile::TempDir> {
        tempfile::Builder::new()
            .prefix(&format!(
                "{BUILDING_PREFIX}{}-{}-",
                self.key,
                std::process::id()
            ))
            .tempdir_in(&self.dir)
    }

    /// Publishes a built object (renamed, not copied) with its manifest and
    /// source; the caller holds the lock.
    pub fn publish(&self, built: &Path, built_source: &Path, unit: &Unit) -> io::Result<()> {
        File::open(built)?.sync_all()?;
        let manifest = Manifest::of(built, unit)?;
        let text = serde_json::to_string_pretty(&manifest).map_err(io::Error::other)?;
        std::fs::rename(built, self.object())?;
        crate::files::write_whole(&self.manifest(), text.as_bytes())?;
        // The source is for people: losing it loses nothing the cache needs.
        let _ = std::fs::rename(built_source, self.source());
        Ok(())
    }
}

/// An entry's lock, released when dropped.
#[derive(Debug)]
pub struct EntryLock {
    _file: File,
}

/// Removes the build folders of `dir` left by processes that died (killed
/// with SIGKILL, or a machine that stopped): a folder whose entry's lock can
/// be taken belongs to no live build. Returns how many were removed.
pub fn sweep_abandoned_builds(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(BUILDING_PREFIX)) else {
            continue;
        };
        let Some((key, _)) = rest.split_once('-') else {
            continue;
        };
        let Ok(lock) = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(dir.join(format!("{key}.lock")))
        else {
            continue;
        };
        if fs4::FileExt::try_lock(&lock).is_ok() && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit<'a>(source: &'a str, flags: &'a [String]) -> Unit<'a> {
        Unit {
            source,
            compiler: "cc",
            compiler_identity: "cc (test) 1.0",
            flags,
        }
    }

    /// An entry published from a fake object.
    fn published(dir: &Path, unit: &Unit) -> Entry {
        let entry = Entry::new(dir, "k");
        let building = entry.building_dir().unwrap();
        let object = building.path().join("unit.so");
        let source = building.path().join("unit.c");
        std::fs::write(&object, b"\x7fELF object bytes").unwrap();
        std::fs::write(&source, unit.source).unwrap();
        entry.publish(&object, &source, unit).unwrap();
        entry
    }

    #[test]
    fn a_published_entry_is_valid_for_its_unit_only() {
        let dir = tempfile::tempdir().unwrap();
        let flags = vec!["-O3".to_string()];
        let entry = published(dir.path(), &unit("int x;", &flags));
        assert_eq!(entry.lookup(&unit("int x;", &flags)), Lookup::Valid);
        assert!(matches!(
            entry.lookup(&unit("int y;", &flags)),
            Lookup::Damaged(_)
        ));
        assert!(matches!(
            entry.lookup(&unit("int x;", &["-O2".to_string()])),
            Lookup::Damaged(_)
        ));
        assert!(entry.source().exists());
        assert_eq!(
            Entry::new(dir.path(), "other").lookup(&unit("int x;", &flags)),
            Lookup::Missing
        );
    }

    /// Damages an entry in one way.
    type Damage = fn(&Entry);

    #[test]
    fn every_kind_of_damage_is_seen() {
        let flags = vec!["-O3".to_string()];
        let damage: [(&str, Damage); 6] = [
            ("truncated object", |e| {
                std::fs::write(e.object(), b"\x7f").unwrap()
            }),
            ("overwritten object", |e| {
                std::fs::write(e.object(), b"\x7fELF other bytes!").unwrap()
            }),
            ("missing object", |e| {
                std::fs::remove_file(e.object()).unwrap()
            }),
            ("missing manifest", |e| {
                std::fs::remove_file(e.manifest()).unwrap()
            }),
            ("corrupted manifest", |e| {
                std::fs::write(e.manifest(), b"{ not json").unwrap()
            }),
            ("empty manifest", |e| {
                std::fs::write(e.manifest(), b"").unwrap()
            }),
        ];
        for (what, damage) in damage {
            let dir = tempfile::tempdir().unwrap();
            let entry = published(dir.path(), &unit("int x;", &flags));
            damage(&entry);
            let found = entry.lookup(&unit("int x;", &flags));
            assert!(matches!(found, Lookup::Damaged(_)), "{what}: {found:?}");
            entry.evict().unwrap();
            assert_eq!(
                entry.lookup(&unit("int x;", &flags)),
                Lookup::Missing,
                "{what}"
            );
        }
    }

    #[test]
    fn abandoned_build_folders_are_swept_and_live_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let dead = Entry::new(dir.path(), "dead");
        let live = Entry::new(dir.path(), "live");
        let dead_dir = dead.building_dir().unwrap().keep();
        let live_dir = live.building_dir().unwrap().keep();
        let held = live.lock().unwrap();
        assert_eq!(sweep_abandoned_builds(dir.path()), 1);
        assert!(!dead_dir.exists());
        assert!(live_dir.exists());
        // The lock's holder removes its own entry's leftovers.
        live.remove_abandoned_builds();
        assert!(!live_dir.exists());
        drop(held);
    }
}
