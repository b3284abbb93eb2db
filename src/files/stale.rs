//! Removing what a killed process left: temporary files whose writer is gone.
//!
//! A writer holds an advisory lock (flock) on its temporary file from right
//! after creating it until it closes it; the kernel releases the lock when the
//! process dies, however it dies. Its name carries the writer's process id
//! (`PREFIX<pid>-XXXXXX SUFFIX`). A temporary file that a sweep can lock
//! belongs to nobody once its writer's process is gone, or once it is older
//! than the moment between creating and locking it (for a writer in another
//! process namespace, whose id means nothing here); it is then removed.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// Removes the files of `dir` named `prefix…suffix` that no live process has
/// locked and that were last modified more than `older_than` ago; returns how
/// many were removed. Errors (an unreadable folder, a file removed meanwhile)
/// are ignored: a sweep is tidying, never a reason to fail.
pub fn sweep_files(dir: &Path, prefix: &str, suffix: &str, older_than: Duration) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if !(name.starts_with(prefix) && name.ends_with(suffix)) {
            continue;
        }
        let path = entry.path();
        let writer = name[prefix.len()..]
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        let grace = match writer {
            Some(pid) if !process_alive(pid) => Duration::ZERO,
            _ => older_than,
        };
        if abandoned(&path, grace) && std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Whether process `pid` exists on this machine (as far as `/proc` shows;
/// without `/proc`, every process counts as alive).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Whether `path` is a plain file older than `older_than` whose lock nobody
/// holds.
pub fn abandoned(path: &Path, older_than: Duration) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    let age = meta
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .unwrap_or_default();
    if age < older_than {
        return false;
    }
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    // Dropping the file releases the lock the probe took.
    fs4::FileExt::try_lock(&file).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locked_temporary_survives_and_an_unlocked_one_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let live = dir.path().join(".stencilc-live.tmp");
        let dead = dir.path().join(".stencilc-dead.tmp");
        let other = dir.path().join("result.npy");
        for path in [&live, &dead, &other] {
            std::fs::write(path, "x").unwrap();
        }
        let holder = std::fs::File::open(&live).unwrap();
        fs4::FileExt::try_lock(&holder).unwrap();
        let removed = sweep_files(dir.path(), ".stencilc-", ".tmp", Duration::ZERO);
        assert_eq!(removed, 1);
        assert!(live.exists() && !dead.exists() && other.exists());
        drop(holder);
    }

    #[test]
    fn a_fresh_temporary_of_a_dead_process_is_removed_at_once() {
        let dir = tempfile::tempdir().unwrap();
        // Process ids stop well below this one on Linux (pid_max <= 2^22).
        let dead = dir.path().join(".stencilc-999999999-abc.tmp");
        let mine = dir
            .path()
            .join(format!(".stencilc-{}-abc.tmp", std::process::id()));
        std::fs::write(&dead, "x").unwrap();
        std::fs::write(&mine, "x").unwrap();
        let removed = sweep_files(dir.path(), ".stencilc-", ".tmp", Duration::from_secs(3600));
        assert_eq!(removed, 1);
        assert!(!dead.exists() && mine.exists());
    }

    #[test]
    fn a_fresh_temporary_is_left_for_its_writer_to_lock() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = dir.path().join(".stencilc-fresh.tmp");
        std::fs::write(&fresh, "x").unwrap();
        let removed = sweep_files(dir.path(), ".stencilc-", ".tmp", Duration::from_secs(3600));
        assert_eq!(removed, 0);
        assert!(fresh.exists());
    }
}
