//! Profiles of marked global reads: what the synthesizer learns from.
//!
//! For one marked read (`__opt__.NAME[expr]`), every time a thread executed it
//! (per thread and per loop iteration), the values of the candidate variables
//! named by `profile("...")` and, when a shared-memory slot held the very element
//! read at that moment, that slot's index per dimension of the shared array.
//! The synthesizer looks for an index expression per dimension that equals the
//! slot wherever one exists, and a guard that is true exactly there.

/// The profile of one marked read.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessProfile {
    /// The marked read as the user wrote it, for messages (`__opt__.in[w]`).
    pub access: String,
    /// The shared array whose slots may serve the read.
    pub shared: String,
    /// The shared array's sizes, outermost dimension first.
    pub shared_dims: Vec<i64>,
    /// The candidate variables, in the order of `profile("...")`.
    pub candidates: Vec<String>,
    /// One row per execution of the read.
    pub rows: Vec<ProfileRow>,
}

/// One execution of a marked read by one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileRow {
    /// The candidates' values, in the order of [`AccessProfile::candidates`].
    pub values: Vec<i64>,
    /// The shared slot (one index per dimension, outermost first) that held the
    /// element read, or `None` when no slot held it.
    pub slot: Option<Vec<i64>>,
}
