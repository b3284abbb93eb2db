//! Writing a file whole or not at all: a temporary sibling, flushed to the
//! disk, renamed over the destination.
//!
//! The temporary file lives in the destination's folder (a rename is atomic
//! only within one file system) under a hidden name, `.stencilc-PID-XXXXXX.tmp`.
//! While it is written it is listed for the signal handler
//! ([`super::cleanup`]) and holds an advisory lock, so that a later run can
//! tell it from one whose writer was killed ([`super::stale`]). On any error
//! (a full disk, a failing device) the temporary file is removed and the
//! destination, if it existed, is untouched.
//!
//! A destination that is a symbolic link is written through: the file the
//! link points to is replaced and the link stays, as editors do.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cleanup::{finish_listed, Listed};
use super::paths::write_target;
use super::stale;

/// The hidden name's parts, shared with [`stale`]'s sweep.
pub const TEMP_PREFIX: &str = ".stencilc-";
/// See [`TEMP_PREFIX`].
pub const TEMP_SUFFIX: &str = ".tmp";

/// How old an unlocked temporary file of a live (or unknown) process must be
/// before a later run removes it: its writer locks it right after creating
/// it, so only a file created this very moment can be unlocked and in use.
const STALE_AFTER: Duration = Duration::from_secs(60);

/// A file being written: a locked temporary sibling of its destination.
/// Dropping it without [`commit`](Self::commit) removes the temporary file.
#[derive(Debug)]
pub struct AtomicFile {
    temp: tempfile::NamedTempFile,
    destination: PathBuf,
    listing: Listed,
}

impl AtomicFile {
    /// Creates the temporary file that will become `destination` (through a
    /// symbolic link, the file it points to). Fails if the folder does not
    /// exist or cannot be written; nothing is then created.
    pub fn create(destination: &Path) -> io::Result<AtomicFile> {
        let destination = write_target(destination);
        let dir = match destination.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        };
        stale::sweep_files(&dir, TEMP_PREFIX, TEMP_SUFFIX, STALE_AFTER);
        let mut builder = tempfile::Builder::new();
        // The writer's process id in the name: see `stale`.
        let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
        builder.prefix(&prefix).suffix(TEMP_SUFFIX);
        // Temporary files are private (0600) by default; a new output gets the
        // permissions of any new file (0666 less the umask), a replaced one
        // keeps its own.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(&dir)?;
        let listing = Listed::temporary(temp.path());
        // Held until the file is closed: a later run's sweep leaves it alone.
        let _ = fs4::FileExt::try_lock(temp.as_file());
        if let Ok(existing) = std::fs::metadata(&destination) {
            if existing.is_file() {
                let _ = std::fs::set_permissions(temp.path(), existing.permissions());
            }
        }
        Ok(AtomicFile {
            temp,
            destination,
            listing,
        })
    }

    /// The file the data goes to (the temporary one).
    pub fn file(&mut self) -> &mut File {
        self.temp.as_file_mut()
    }

    /// Where the file will be once committed (a symbolic link resolved).
    pub fn destination(&self) -> &Path {
        &self.destination
    }

    /// The temporary file's path (for messages and tests).
    pub fn temporary_path(&self) -> &Path {
        self.temp.path()
    }

    /// Flushes the data to the disk and renames the temporary file over the
    /// destination. On error the temporary file is removed and the
    /// destination untouched.
    pub fn commit(self) -> io::Result<()> {
        let AtomicFile {
            temp,
            destination,
            listing,
        } = self;
        temp.as_file().sync_all()?;
        let renamed = finish_listed(listing, || temp.persist(&destination));
        renamed.map_err(|e| e.error)?;
        sync_folder_of(&destination);
        Ok(())
    }
}

/// Writes `bytes` to `path` whole or not at all (see the module docs).
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.file().write_all(bytes)?;
    file.commit()
}

/// Makes a rename in `path`'s folder durable. Best effort: not every file
/// system can sync a folder, and the rename itself already happened.
fn sync_folder_of(path: &Path) {
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(folder) = File::open(dir) {
            let _ = folder.sync_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_committed_file_replaces_the_old_one_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        std::fs::write(&path, "old").unwrap();
        write_whole(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }

    #[test]
    fn a_dropped_file_leaves_the_destination_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        std::fs::write(&path, "old").unwrap();
        let mut file = AtomicFile::create(&path).unwrap();
        file.file().write_all(b"half").unwrap();
        let temporary = file.temporary_path().to_path_buf();
        assert!(temporary.exists());
        drop(file);
        assert!(!temporary.exists());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
    }

    #[cfg(unix)]
    #[test]
    fn a_symbolic_link_is_written_through_and_a_replaced_file_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_whole(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    #[test]
    fn a_missing_folder_is_an_error_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/out.txt");
        assert!(write_whole(&path, b"x").is_err());
        assert!(!dir.path().join("no").exists());
    }
}
