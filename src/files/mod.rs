//! Files stencilc writes: whole or not at all, never over an input, and never
//! left half-written by a signal.
//!
//! Every file a command produces (result fields, `emit`/`map`/`synth`/`compile`
//! outputs, the tuning database, benchmark results, compiled kernels) is written
//! to a temporary sibling, flushed to the disk and renamed over its destination
//! ([`atomic`]): a reader, a crash or a full disk sees the old file or the new
//! one, never part of one. Before anything is computed, a command checks its
//! outputs against its inputs and against each other by what they resolve to on
//! disk ([`paths`]), so that no spelling of a path (`./x`, an absolute path, a
//! symbolic or hard link) lets it overwrite an input or write two results to one
//! file.
//!
//! What a process leaves behind when it is interrupted is listed in [`cleanup`]:
//! temporary files and folders, and children (the C compiler, the preprocessor,
//! a profiled program) that must not outlive it. The signal handler of the
//! command line removes and kills them. A process killed with SIGKILL runs no
//! handler; its temporaries hold an advisory lock while they are written, so a
//! later run recognises them as abandoned and removes them ([`stale`]).

pub mod atomic;
pub mod cleanup;
pub mod paths;
pub mod stale;

pub use atomic::{write_whole, AtomicFile};
pub use paths::{same_file, OutputCheck};
