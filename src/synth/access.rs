//! One marked read served from shared memory: the index in every dimension,
//! the guard, and the rewritten read `(guard) ? sb[index] : in[w]`.

use super::guard::synthesize_guard_for;
use super::index::{closest, exact_index, not_found, slot_rows};
use super::logic::Guard;
use super::print::{expr_to_cuda, guard_to_cuda, shared_read_to_cuda};
use super::table::AccessProfile;
use super::{Bounds, Expr, NotFound, SearchStats};

/// How one marked read is served from shared memory.
#[derive(Clone, Debug, PartialEq)]
pub struct AccessPlan {
    /// The index per dimension of the shared array, outermost first.
    pub index: Vec<Expr>,
    /// True exactly on the rows the index serves.
    pub guard: Guard,
    /// Whether the index equals the slot on every row that has one (else the
    /// guard leaves some of them to the global read).
    pub exact: bool,
    /// The profiled rows the shared read serves.
    pub served: usize,
    /// The profiled rows that had a slot.
    pub with_slot: usize,
    /// What the index searches did, all dimensions together.
    pub index_stats: SearchStats,
    /// What the guard search did.
    pub guard_stats: SearchStats,
}

impl AccessPlan {
    /// Both searches' figures together: the time per access.
    pub fn stats(&self) -> SearchStats {
        let mut all = self.index_stats.clone();
        all.add(&self.guard_stats);
        all
    }

    /// The rewritten read as CUDA C: `(guard) ? sb[index] : global`, or the
    /// shared read alone when the guard is always true (and the global read
    /// alone when it never is).
    pub fn to_cuda(&self, profile: &AccessProfile, global: &str) -> String {
        let shared = shared_read_to_cuda(&profile.shared, &self.index, &profile.candidates);
        match &self.guard {
            Guard::True => shared,
            Guard::False => global.to_string(),
            guard => format!(
                "(({}) ? {shared} : {global})",
                guard_to_cuda(guard, &profile.candidates)
            ),
        }
    }
}

/// What is wrong with a profile (or a set of them) the searches cannot use.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// A row has another number of values than there are candidates.
    #[error(
        "row {row} of the profile of `{access}` has {values} values for {} candidates ({})",
        candidates.len(),
        candidates.join(" ")
    )]
    RowValues {
        /// The row's index.
        row: usize,
        /// The marked read.
        access: String,
        /// How many values the row has.
        values: usize,
        /// The profile's candidates.
        candidates: Vec<String>,
    },
    /// A row's slot has another number of indices than the shared array has
    /// dimensions.
    #[error(
        "row {row} of the profile of `{access}` names a slot of {indices} indices in \
         `{shared}`, which has {dims} dimensions"
    )]
    SlotIndices {
        /// The row's index.
        row: usize,
        /// The marked read.
        access: String,
        /// How many indices the slot has.
        indices: usize,
        /// The shared array.
        shared: String,
        /// How many dimensions it has.
        dims: usize,
    },
    /// There was no profile to merge.
    #[error("no profile to merge: profile at least one launch")]
    NothingToMerge,
    /// The profiles to merge are of different marked reads.
    #[error(
        "the profiles of `{}` (shared `{}`, candidates {}) and `{}` (shared `{}`, \
         candidates {}) are of different reads: merge the profiles of one marked read",
        first.access,
        first.shared,
        first.candidates.join(" "),
        other.access,
        other.shared,
        other.candidates.join(" ")
    )]
    DifferentReads {
        /// What the first profile is of.
        first: Box<ReadOf>,
        /// What the first profile that differs from it is of.
        other: Box<ReadOf>,
    },
}

/// Which marked read a profile is of, for [`ProfileError::DifferentReads`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadOf {
    /// The marked read.
    pub access: String,
    /// Its shared array.
    pub shared: String,
    /// Its candidates.
    pub candidates: Vec<String>,
}

impl ReadOf {
    fn of(profile: &AccessProfile) -> ReadOf {
        ReadOf {
            access: profile.access.clone(),
            shared: profile.shared.clone(),
            candidates: profile.candidates.clone(),
        }
    }
}

/// What is wrong with a profile the searches cannot use: a row with another
/// number of values than there are candidates, or a slot with another number
/// of indices than the shared array has dimensions.
pub fn check_profile(profile: &AccessProfile) -> Result<(), ProfileError> {
    for (n, row) in profile.rows.iter().enumerate() {
        if row.values.len() != profile.candidates.len() {
            return Err(ProfileError::RowValues {
                row: n,
                access: profile.access.clone(),
                values: row.values.len(),
                candidates: profile.candidates.clone(),
            });
        }
        if let Some(slot) = &row.slot {
            if slot.len() != profile.shared_dims.len() {
                return Err(ProfileError::SlotIndices {
                    row: n,
                    access: profile.access.clone(),
                    indices: slot.len(),
                    shared: profile.shared.clone(),
                    dims: profile.shared_dims.len(),
                });
            }
        }
    }
    Ok(())
}

/// One profile of a marked read from the profiles of several launches (block
/// shapes, grid sizes), so that the expressions found hold on all of them.
/// The shared sizes are the largest of each dimension (a shared array sized by
/// `-D BLOCK_X=...` differs between launches: its sizes are then constants of
/// the last passes only, see [`Bounds::shared_dims_as_constants`]).
pub fn merge_profiles(profiles: &[AccessProfile]) -> Result<AccessProfile, ProfileError> {
    let Some(first) = profiles.first() else {
        return Err(ProfileError::NothingToMerge);
    };
    let mut merged = AccessProfile {
        rows: Vec::new(),
        ..first.clone()
    };
    for p in profiles {
        if (&p.access, &p.shared, &p.candidates)
            != (&first.access, &first.shared, &first.candidates)
            || p.shared_dims.len() != first.shared_dims.len()
        {
            return Err(ProfileError::DifferentReads {
                first: Box::new(ReadOf::of(first)),
                other: Box::new(ReadOf::of(p)),
            });
        }
        for (m, &d) in merged.shared_dims.iter_mut().zip(&p.shared_dims) {
            *m = (*m).max(d);
        }
        merged.rows.extend(p.rows.iter().cloned());
    }
    Ok(merged)
}

/// The figures of an access as JSON, for `--json` outputs: the expressions
/// (as CUDA C), how many rows they serve, the expressions tested and the time.
pub fn plan_json(plan: &AccessPlan, profile: &AccessProfile) -> serde_json::Value {
    let names = &profile.candidates;
    let stats = |s: &SearchStats| {
        serde_json::json!({
            "tested": s.tested,
            "ms": s.elapsed.as_secs_f64() * 1e3,
            "budget_exhausted": s.budget_exhausted,
        })
    };
    serde_json::json!({
        "access": profile.access,
        "shared": profile.shared,
        "index": plan.index.iter().map(|e| expr_to_cuda(e, names)).collect::<Vec<_>>(),
        "guard": guard_to_cuda(&plan.guard, names),
        "exact": plan.exact,
        "rows_served": plan.served,
        "rows_with_slot": plan.with_slot,
        "rows": profile.rows.len(),
        "index_search": stats(&plan.index_stats),
        "guard_search": stats(&plan.guard_stats),
    })
}

/// The index in every dimension and the guard for one marked read. Where no
/// index equals the slot on every row (a clamped neighbour that is the
/// thread's own element, say), takes the one right on the most rows, if that
/// is at least [`Bounds::min_coverage`] of them, and a guard true exactly
/// where it is: the other rows keep the global read, which is always correct.
pub fn synthesize_access(profile: &AccessProfile, bounds: &Bounds) -> Result<AccessPlan, NotFound> {
    let mut index_stats = SearchStats::default();
    let mut index = Vec::new();
    let mut exact = true;
    for dim in 0..profile.shared_dims.len() {
        match exact_index(profile, dim, bounds) {
            Ok(found) => {
                index_stats.add(&found.stats);
                index.push(found.expr);
            }
            Err(exact_stats) => {
                index_stats.add(&exact_stats);
                // The index right on most rows with a slot: the neighbour's
                // formula, which is wrong only where the read is clamped.
                let best = closest(profile, dim, bounds, bounds.max_covering_size);
                let with_slot = slot_rows(profile, dim).len() as f64;
                match best {
                    Some((expr, wrong, s))
                        if (wrong as f64) <= (1.0 - bounds.min_coverage) * with_slot =>
                    {
                        index_stats.add(&s);
                        exact = false;
                        index.push(expr);
                    }
                    best => return Err(not_found(profile, dim, bounds, best, index_stats)),
                }
            }
        }
    }
    let served: Vec<bool> = profile
        .rows
        .iter()
        .map(|r| {
            r.slot.as_ref().is_some_and(|slot| {
                slot.len() == index.len()
                    && index.iter().zip(slot).all(|(e, &s)| e.eval(&r.values) == s)
            })
        })
        .collect();
    let guard = synthesize_guard_for(profile, &served, bounds)?;
    Ok(AccessPlan {
        index,
        guard: guard.expr,
        exact,
        served: served.iter().filter(|&&s| s).count(),
        with_slot: profile.rows.iter().filter(|r| r.slot.is_some()).count(),
        index_stats,
        guard_stats: guard.stats,
    })
}
