//! What an interrupted process must not leave behind: temporary files and
//! folders not yet renamed into place, and child processes still running.
//!
//! A signal handler cannot run destructors (other threads may be inside a
//! kernel), so whatever would be removed on drop is also listed here while it
//! exists: [`Listed::temporary`] for a path, [`Listed::child`] for a child
//! process. The guard takes it off the list when dropped (the owner then
//! cleans up, or has renamed the file into place). [`clean_up_for_exit`] kills
//! every listed child and removes every listed path; the list then stays
//! locked, so nothing more can be renamed into place while the process exits.
//!
//! Children are listed by process group: a C compiler runs its passes as
//! processes of its own (cc1, as, ld), and only killing the group stops them
//! all. Start such a child with [`own_process_group`].

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// One listed thing.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    /// A temporary file or folder, removed at exit.
    Path(PathBuf),
    /// A child process leading its own process group, killed at exit.
    Child(u32),
}

/// Everything listed now, in the order it was listed.
static LISTED: Mutex<Vec<(u64, Item)>> = Mutex::new(Vec::new());

/// The number the next listing gets (a guard removes its own listing only).
static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The list, even if a thread panicked while holding it: the list is valid
/// after any single push or removal.
fn listed() -> MutexGuard<'static, Vec<(u64, Item)>> {
    LISTED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A listing, given up when dropped.
#[derive(Debug)]
pub struct Listed(u64);

impl Listed {
    fn new(item: Item) -> Listed {
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        listed().push((id, item));
        Listed(id)
    }

    /// Lists a temporary file or folder that an exit must remove.
    pub fn temporary(path: &Path) -> Listed {
        Listed::new(Item::Path(path.to_path_buf()))
    }

    /// Lists a child process (the leader of its own process group, see
    /// [`own_process_group`]) that an exit must kill.
    pub fn child(pid: u32) -> Listed {
        Listed::new(Item::Child(pid))
    }
}

impl Drop for Listed {
    fn drop(&mut self) {
        listed().retain(|(id, _)| *id != self.0);
    }
}

/// Runs `finish` (a rename into place) while no exit can clean up, and gives
/// up `listing` in the same step: an exit sees the temporary file or the
/// finished one, never a half-renamed one.
pub fn finish_listed<T>(listing: Listed, finish: impl FnOnce() -> T) -> T {
    let mut list = listed();
    let result = finish();
    list.retain(|(id, _)| *id != listing.0);
    drop(list);
    // The listing is already gone; its drop must not take the lock again
    // while we might still be inside a caller holding it.
    std::mem::forget(listing);
    result
}

/// Makes `command` start its child as the leader of a new process group, so
/// that [`clean_up_for_exit`] can kill it with every process it starts.
pub fn own_process_group(command: &mut std::process::Command) -> &mut std::process::Command {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        command.process_group(0);
    }
    command
}

/// Runs `command` to completion as a listed child in its own process group
/// (see [`own_process_group`]), collecting its output as
/// [`std::process::Command::output`] does; an exit meanwhile kills it.
pub fn output_listed(command: &mut std::process::Command) -> std::io::Result<std::process::Output> {
    use std::process::Stdio;
    own_process_group(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // Started and listed in one step: an exit between the two would miss it.
    let (child, _listed) = {
        let mut list = listed();
        let child = command.spawn()?;
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        list.push((id, Item::Child(child.id())));
        (child, Listed(id))
    };
    child.wait_with_output()
}

/// Kills every listed child (with its process group) and removes every listed
/// temporary file or folder; returns how many temporary paths there were. The
/// list stays locked afterwards, so no output can be renamed into place any
/// more: call it only on the way out of the process.
pub fn clean_up_for_exit() -> usize {
    let mut list = listed();
    let mut paths = 0;
    for (_, item) in list.drain(..) {
        match item {
            Item::Child(pid) => kill_group(pid),
            Item::Path(path) => {
                paths += 1;
                if path.is_dir() {
                    let _ = std::fs::remove_dir_all(&path);
                } else {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
    }
    // Keep the lock until the process exits.
    std::mem::forget(list);
    paths
}

/// Sends SIGKILL to the process group `pid` leads.
pub fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals a process group; it has
        // no memory-safety requirements.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// Whether `path` is listed now, to be removed by an exit.
pub fn is_listed(path: &Path) -> bool {
    listed()
        .iter()
        .any(|(_, item)| matches!(item, Item::Path(p) if p == path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_given_up_when_dropped_and_only_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let a = Listed::temporary(&dir.path().join("a"));
        let b = Listed::temporary(&dir.path().join("b"));
        assert!(is_listed(&dir.path().join("a")) && is_listed(&dir.path().join("b")));
        drop(a);
        assert!(!is_listed(&dir.path().join("a")) && is_listed(&dir.path().join("b")));
        drop(b);
        assert!(!is_listed(&dir.path().join("b")));
    }

    #[test]
    fn finishing_a_listing_runs_the_step_and_unlists_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let listing = Listed::temporary(&path);
        let value = finish_listed(listing, || 7);
        assert_eq!(value, 7);
        assert!(!is_listed(&path));
    }
}
