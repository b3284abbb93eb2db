//! What the analysis finds about one nest (`analysis::analyse`):
//! its accesses, dependences, scalars, loops and obstacles. The criteria,
//! the memory specialisation, the kernels, the rewrite and the
//! transformations all read these facts, so they live apart from the
//! analysis that computes them.

use std::collections::BTreeMap;

use serde::Serialize;

use super::subscript::Sub;
use crate::front::c::loops::{Expr, Loop};

/// One array access in the nest.
#[derive(Clone, Debug)]
pub struct Access {
    /// The array.
    pub array: String,
    /// Whether it writes.
    pub write: bool,
    /// Subscripts as written.
    pub index: Vec<Expr>,
    /// Variables of the loops around it, outermost first.
    pub loops: Vec<String>,
    /// The loops around it by first line (sibling loops may share a variable).
    pub loop_ids: Vec<usize>,
    /// Line in the user's file.
    pub line: usize,
}

/// A dependence between two accesses.
#[derive(Clone, Debug, Serialize)]
pub struct Dependence {
    /// The array.
    pub array: String,
    /// `flow`, `anti` or `output`.
    pub kind: &'static str,
    /// Lines of the two accesses.
    pub lines: (usize, usize),
    /// Distance per common loop (`Some(d)`), or unknown (`None`, written `*`).
    pub distance: Vec<(String, Option<i64>)>,
}

impl Dependence {
    /// `(i: 1, j: 0)`.
    pub fn vector(&self) -> String {
        let parts: Vec<String> = self
            .distance
            .iter()
            .map(|(v, d)| format!("{v}: {}", d.map_or("*".to_string(), |d| d.to_string())))
            .collect();
        format!("({})", parts.join(", "))
    }

    /// Whether the dependence may be carried by `var` (every outer distance may
    /// be zero and this one may not be).
    pub fn carried_by(&self, var: &str) -> bool {
        for (v, d) in &self.distance {
            if v == var {
                return *d != Some(0);
            }
            if matches!(d, Some(x) if *x != 0) {
                return false;
            }
        }
        false
    }
}

/// What is known of a scalar written in the nest.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum ScalarRole {
    /// Declared inside the nest, inside these loops: private to them by scope.
    Local(Vec<String>),
    /// Written before it is read in every iteration of the loop (the variable):
    /// privatisable there.
    Private(String),
    /// A reduction with this OpenMP operator (`+`, `*`, `max`, `min`, `&&`, `||`).
    Reduction(String),
    /// Carries a value from one iteration to the next.
    Carried,
}

/// The facts about one nest.
#[derive(Clone, Debug)]
pub struct NestFacts {
    /// Constructs that keep the nest on the CPU, each with its line.
    pub obstacles: Vec<String>,
    /// Array accesses.
    pub accesses: Vec<Access>,
    /// Dependences between them (loop-independent ones included).
    pub dependences: Vec<Dependence>,
    /// Scalars written in the nest (loop variables excluded).
    pub scalars: BTreeMap<String, ScalarRole>,
    /// Loops of the nest by variable (the last of sibling loops sharing
    /// one, `declared` only if all of them declare it).
    pub loops: BTreeMap<String, Loop>,
    /// Per loop variable: why it is sequential (empty: parallel).
    pub sequential: BTreeMap<String, Vec<String>>,
    /// Arrays whose linear subscripts were delinearised, with their dimension count.
    pub delinearised: BTreeMap<String, usize>,
    /// Per array: its subscripts in the dependence test's form, one list per access.
    pub subs: BTreeMap<String, Vec<Vec<Sub>>>,
    /// Why two pointers of the nest cannot share memory, one line per pair
    /// the aliasing test cleared by a fact it found (distinct allocations).
    pub no_alias: Vec<String>,
}
