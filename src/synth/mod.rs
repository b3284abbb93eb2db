//! The KaniCUDA synthesizer core: from the profile of a marked global read
//! ([`table::AccessProfile`]) to the shared-memory index that serves it and the
//! guard that says when the shared slot holds the element.
//!
//! Expressions are searched smallest first, in the slides' linear form
//! ([`arith`]: unit, term = product of units, sum/difference of terms) and as
//! logic over comparisons of it ([`logic`]). The generator ([`enumerate`]) is
//! recursive and hands every expression to the test the moment it is built, in
//! a canonical order that never yields two expressions equal by commutativity
//! or associativity; at each size, expressions over the variables most
//! correlated with the target come first ([`order`]), then those over all,
//! then those using the shared array's sizes as constants (`passes`).
//! [`index`] and [`guard`] are the two searches, [`access`] puts them together
//! for one marked read, [`print`] writes the results as CUDA C.
//!
//! The module uses nothing else of the crate: the emulator's profiler, which
//! fills the table, and the command that rewrites the kernel build on it.

pub mod access;
pub mod arith;
pub mod enumerate;
pub mod guard;
pub mod index;
pub mod logic;
pub mod order;
mod passes;
pub mod print;
pub mod table;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

pub use access::{
    check_profile, merge_profiles, plan_json, synthesize_access, AccessPlan, ProfileError, ReadOf,
};
pub use arith::{Expr, Term, Unit};
pub use guard::synthesize_guard;
pub use index::synthesize_index;
pub use logic::{CmpOp, Guard};

/// Limits and switches of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// The small integer constants an expression may use (besides the shared
    /// array's sizes when [`Bounds::shared_dims_as_constants`] is set).
    pub constants: Vec<i64>,
    /// Whether the shared array's sizes are constants of the vocabulary too.
    pub shared_dims_as_constants: bool,
    /// The largest index expression, in units (variables and constants).
    pub max_size: usize,
    /// The most terms of a sum.
    pub max_terms: usize,
    /// The most units of one term (`x * y * 2` has three).
    pub max_units_per_term: usize,
    /// The most comparisons of a guard.
    pub max_comparisons: usize,
    /// The largest index searched for the most rows when none is right on all
    /// (and for the closest candidate of a message), in units.
    pub max_covering_size: usize,
    /// The largest comparison, in units (its left side counts one).
    pub max_comparison_size: usize,
    /// The largest guard: its comparisons' sizes together.
    pub max_guard_size: usize,
    /// How many of the most correlated variables the first pass may use;
    /// the second pass uses all of them.
    pub correlated_first: usize,
    /// Canonical order (sorted terms and units, folded constants). Off only to
    /// count what it saves.
    pub canonical: bool,
    /// Variables ordered by |Pearson r| with the target, the most correlated
    /// searched first. Off only to count what it saves.
    pub correlation_order: bool,
    /// Where no index equals the slot on every row that has one, the index
    /// right on the most rows is taken if that is at least this fraction.
    pub min_coverage: f64,
    /// Wall-clock budget of one search.
    pub time_budget: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            constants: (-4..=4).collect(),
            shared_dims_as_constants: true,
            max_size: 5,
            max_terms: 3,
            max_units_per_term: 3,
            max_comparisons: 3,
            max_comparison_size: 3,
            max_covering_size: 3,
            max_guard_size: 6,
            correlated_first: 3,
            canonical: true,
            correlation_order: true,
            min_coverage: 0.5,
            time_budget: Duration::from_secs(2),
        }
    }
}

impl Bounds {
    /// The bounds in words, for messages.
    pub fn describe(&self) -> String {
        let constants: Vec<String> = self.constants.iter().map(i64::to_string).collect();
        format!(
            "expressions of at most {} units, {} terms, {} units a term; guards of at most {} \
             comparisons of {} units, {} in all; constants {}{}; {:.1} s budget",
            self.max_size,
            self.max_terms,
            self.max_units_per_term,
            self.max_comparisons,
            self.max_comparison_size,
            self.max_guard_size,
            constants.join(", "),
            if self.shared_dims_as_constants {
                " and the shared array's sizes"
            } else {
                ""
            },
            self.time_budget.as_secs_f64()
        )
    }
}

/// Which pass of a search found the expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The first pass, over the most correlated variables only.
    Correlated,
    /// The second pass, over all variables.
    All,
}

/// What a search did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchStats {
    /// Expressions tested against the rows.
    pub tested: u64,
    /// Wall-clock time of the search.
    pub elapsed: Duration,
    /// The size (in units) of the last level searched.
    pub size_reached: usize,
    /// Whether the time budget ran out before the bounds did.
    pub budget_exhausted: bool,
}

impl SearchStats {
    /// Adds another search's figures (time, tests) to these.
    pub fn add(&mut self, other: &SearchStats) {
        self.tested += other.tested;
        self.elapsed += other.elapsed;
        self.size_reached = self.size_reached.max(other.size_reached);
        self.budget_exhausted |= other.budget_exhausted;
    }
}

/// What a search found: an index expression or a guard.
#[derive(Clone, Debug, PartialEq)]
pub struct Found<T> {
    /// The expression.
    pub expr: T,
    /// The pass that found it.
    pub pass: Pass,
    /// What the search did.
    pub stats: SearchStats,
}

/// The expression that came closest to the target, for messages.
#[derive(Clone, Debug, PartialEq)]
pub struct Closest {
    /// The expression, printed as CUDA C.
    pub text: String,
    /// The rows on which it differs from the target.
    pub mismatches: usize,
    /// The rows compared.
    pub rows: usize,
}

/// No expression within the bounds fits.
#[derive(Clone, Debug, PartialEq)]
pub struct NotFound {
    /// The marked read (`__opt__.in[w]`).
    pub access: String,
    /// What was searched for (`the index of dimension 1 of sb`).
    pub what: String,
    /// The bounds, in words.
    pub bounds: String,
    /// The candidate with the fewest mismatching rows, if any was tested.
    pub closest: Option<Box<Closest>>,
    /// What the search did.
    pub stats: SearchStats,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no expression for {} of `{}` within the bounds ({}{}; {} expressions tested)",
            self.what,
            self.access,
            self.bounds,
            if self.stats.budget_exhausted {
                ", the time budget ran out"
            } else {
                ""
            },
            self.stats.tested
        )?;
        match &self.closest {
            Some(c) => write!(
                f,
                "; the closest, `{}`, is wrong on {} of {} profiled rows",
                c.text, c.mismatches, c.rows
            )?,
            None => write!(f, "; no candidate was evaluated on every row")?,
        }
        write!(
            f,
            ". Name the variables the index depends on in profile(\"...\"), \
             or raise the size bounds or the time budget"
        )
    }
}

impl std::error::Error for NotFound {}
