//! The passes of a search, each over a larger vocabulary than the one before:
//! the most correlated variables with the small constants, all variables with
//! them, then both again with the shared array's sizes as constants too. At
//! each size every pass runs in turn, so the smallest expression still comes
//! first, and among equals the one over the likelier vocabulary (a constant
//! such as 128 that happens to be a block's thread count fits the profiled
//! shapes only). A pass skips what an earlier one could write.

use super::arith::{canonical_terms, naive_terms, TermShape, Unit};
use super::enumerate::{Generator, Pick, ZERO};
use super::{Bounds, Pass};

/// One pass: its variables (the first `vars` of the search order), its
/// constants and its vocabulary of terms.
pub(crate) struct PassSpec {
    /// Which variables the pass uses, for [`super::Found::pass`].
    pub pass: Pass,
    /// How many of the search order's variables.
    pub vars: usize,
    /// Its constants.
    pub constants: Vec<i64>,
    /// Its terms.
    pub terms: Vec<TermShape>,
}

/// The passes of one search.
pub(crate) fn passes(order: &[usize], bounds: &Bounds, shared_dims: &[i64]) -> Vec<PassSpec> {
    let first = if bounds.correlation_order {
        bounds.correlated_first.min(order.len())
    } else {
        order.len()
    };
    let mut var_counts = vec![(Pass::Correlated, first)];
    if first < order.len() {
        var_counts.push((Pass::All, order.len()));
    } else {
        var_counts[0].0 = Pass::All;
    }
    let mut small = bounds.constants.clone();
    small.sort_unstable();
    small.dedup();
    let mut constant_sets = vec![small.clone()];
    if bounds.shared_dims_as_constants {
        let mut with_dims = small.clone();
        with_dims.extend_from_slice(shared_dims);
        with_dims.sort_unstable();
        with_dims.dedup();
        if with_dims != small {
            constant_sets.push(with_dims);
        }
    }
    let mut specs = Vec::new();
    for constants in constant_sets {
        for &(pass, vars) in &var_counts {
            let terms = if bounds.canonical {
                canonical_terms(&order[..vars], &constants, bounds.max_units_per_term)
            } else {
                naive_terms(&order[..vars], &constants, bounds.max_units_per_term)
            };
            specs.push(PassSpec {
                pass,
                vars,
                constants: constants.clone(),
                terms,
            });
        }
    }
    specs
}

impl PassSpec {
    /// The generator over the pass's vocabulary.
    pub fn generator(&self, bounds: &Bounds) -> Generator<'_> {
        Generator::new(
            &self.terms,
            bounds.canonical,
            bounds.max_terms,
            self.constants.contains(&0),
        )
    }

    /// Whether this pass can write the expression (picked from `generator`,
    /// of any pass), with `lhs`, a variable's rank, on the left of a
    /// comparison.
    pub fn writes(&self, generator: &Generator, picks: &[Pick], lhs: Option<usize>) -> bool {
        lhs.is_none_or(|r| r < self.vars)
            && picks.iter().all(|&(_, t)| {
                if t == ZERO {
                    return self.constants.contains(&0);
                }
                let term = &generator.terms()[t];
                term.monomial.iter().all(|&r| r < self.vars)
                    && term.units.iter().all(|u| match *u {
                        Unit::Var(_) => true,
                        Unit::Const(c) => {
                            self.constants.contains(&c) || self.constants.contains(&-c)
                        }
                    })
            })
    }
}

/// Whether a pass before `pass` can write the expression.
pub(crate) fn written_before(
    specs: &[PassSpec],
    pass: usize,
    generator: &Generator,
    picks: &[Pick],
    lhs: Option<usize>,
) -> bool {
    specs[..pass]
        .iter()
        .any(|spec| spec.writes(generator, picks, lhs))
}
