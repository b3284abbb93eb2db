//! The generator of arithmetic expressions of one size: recursive, handing each
//! expression to a visitor (a continuation, as in the slides) the moment it is
//! complete, so it is tested before the next is built and nothing is stored.
//!
//! In canonical order an expression is its added terms, then its subtracted
//! ones, each group in the vocabulary's order with no term twice, and no two
//! terms with the same variables (`x + x * 2` is `x * 3`): so `x + y` comes
//! out but `y + x` does not, and constants are folded into one term. The
//! naive order takes any term sequence with any signs, which is what the
//! canonical one is measured against.

use std::ops::ControlFlow;

use super::arith::{Expr, Term, TermShape, Unit};

/// One term of a generated expression: whether it is subtracted, and its
/// position in the vocabulary.
pub type Pick = (bool, usize);

/// The pick of the lone constant `0`, which names no term of the vocabulary
/// (canonical terms have no zero factor).
pub const ZERO: usize = usize::MAX;

/// Generates expressions over a vocabulary of terms.
pub struct Generator<'a> {
    terms: &'a [TermShape],
    canonical: bool,
    max_terms: usize,
    /// Whether the lone constant `0` is an expression (canonical order has no
    /// term 0 otherwise).
    zero: bool,
}

impl<'a> Generator<'a> {
    /// A generator over `terms` (from [`super::arith::canonical_terms`] when
    /// `canonical`, else [`super::arith::naive_terms`]).
    pub fn new(terms: &'a [TermShape], canonical: bool, max_terms: usize, zero: bool) -> Self {
        Generator {
            terms,
            canonical,
            max_terms,
            zero,
        }
    }

    /// The vocabulary.
    pub fn terms(&self) -> &'a [TermShape] {
        self.terms
    }

    /// Calls `visit` on every expression of exactly `size` units, stopping
    /// when it breaks.
    pub fn each_of_size(
        &self,
        size: usize,
        visit: &mut dyn FnMut(&[Pick]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        let mut picks = Vec::with_capacity(self.max_terms);
        if self.canonical {
            if size == 1 && self.zero {
                // `0` is the one expression with a zero constant; its pick
                // names no term of the vocabulary.
                visit(&[(false, ZERO)])?;
            }
            self.canonical_group(false, 0, size, &mut picks, visit)
        } else {
            self.naive(size, &mut picks, visit)
        }
    }

    fn canonical_group(
        &self,
        negated: bool,
        start: usize,
        left: usize,
        picks: &mut Vec<Pick>,
        visit: &mut dyn FnMut(&[Pick]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if left == 0 {
            return if picks.is_empty() {
                ControlFlow::Continue(())
            } else {
                visit(picks)
            };
        }
        if picks.len() < self.max_terms {
            for t in start..self.terms.len() {
                let term = &self.terms[t];
                if term.units.len() > left {
                    continue;
                }
                let repeats_monomial = picks
                    .iter()
                    .any(|&(_, p)| self.terms[p].monomial == term.monomial);
                if repeats_monomial {
                    continue;
                }
                picks.push((negated, t));
                self.canonical_group(negated, t + 1, left - term.units.len(), picks, visit)?;
                picks.pop();
            }
        }
        if !negated {
            // The subtracted terms follow the added ones, in their own order.
            self.canonical_group(true, 0, left, picks, visit)?;
        }
        ControlFlow::Continue(())
    }

    fn naive(
        &self,
        left: usize,
        picks: &mut Vec<Pick>,
        visit: &mut dyn FnMut(&[Pick]) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        if left == 0 {
            return visit(picks);
        }
        if picks.len() == self.max_terms {
            return ControlFlow::Continue(());
        }
        for t in 0..self.terms.len() {
            let size = self.terms[t].units.len();
            if size > left {
                continue;
            }
            for negated in [false, true] {
                picks.push((negated, t));
                self.naive(left - size, picks, visit)?;
                picks.pop();
            }
        }
        ControlFlow::Continue(())
    }

    /// The size in units of a picked term.
    pub fn size_of(&self, term: usize) -> usize {
        if term == ZERO {
            1
        } else {
            self.terms[term].units.len()
        }
    }

    /// The value of an expression on a row of candidate values.
    pub fn eval(&self, picks: &[Pick], values: &[i64]) -> i64 {
        picks.iter().fold(0i64, |acc, &(negated, t)| {
            if t == ZERO {
                return acc;
            }
            let p = self.terms[t]
                .units
                .iter()
                .fold(1i64, |p, u| p.wrapping_mul(u.eval(values)));
            if negated {
                acc.wrapping_sub(p)
            } else {
                acc.wrapping_add(p)
            }
        })
    }

    /// The expression the picks stand for.
    pub fn expr(&self, picks: &[Pick]) -> Expr {
        Expr {
            terms: picks
                .iter()
                .map(|&(negated, t)| Term {
                    negated,
                    units: if t == ZERO {
                        vec![Unit::Const(0)]
                    } else {
                        self.terms[t].units.clone()
                    },
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::synth::arith::{canonical_terms, naive_terms};

    /// The expression as a polynomial: sorted (variables, coefficient) pairs,
    /// so that two expressions equal by commutativity map to one key.
    fn normal_form(e: &Expr) -> Vec<(Vec<usize>, i64)> {
        let mut sum: std::collections::BTreeMap<Vec<usize>, i64> = Default::default();
        for t in &e.terms {
            let mut vars = Vec::new();
            let mut coefficient = if t.negated { -1 } else { 1 };
            for u in &t.units {
                match *u {
                    Unit::Var(v) => vars.push(v),
                    Unit::Const(c) => coefficient *= c,
                }
            }
            vars.sort_unstable();
            *sum.entry(vars).or_default() += coefficient;
        }
        sum.into_iter().filter(|&(_, c)| c != 0).collect()
    }

    fn collect(generator: &Generator, size: usize) -> Vec<Expr> {
        let mut out = Vec::new();
        let _ = generator.each_of_size(size, &mut |picks| {
            out.push(generator.expr(picks));
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn canonical_order_has_no_twins_by_commutativity() {
        let vars = [0, 1, 2];
        let terms = canonical_terms(&vars, &[-2, -1, 0, 1, 2], 3);
        let generator = Generator::new(&terms, true, 3, true);
        let mut seen = HashSet::new();
        let mut total = 0;
        for size in 1..=5 {
            for e in collect(&generator, size) {
                total += 1;
                assert!(
                    seen.insert(normal_form(&e)),
                    "{e:?} equals an earlier expression"
                );
            }
        }
        assert!(total > 1000, "only {total} expressions");
    }

    #[test]
    fn counts_per_size() {
        // Variables x, y; constants 1, 2 (from -2..=2); at most 2 terms of 2 units.
        let terms = canonical_terms(&[0, 1], &[-2, -1, 0, 1, 2], 2);
        let generator = Generator::new(&terms, true, 2, true);
        let counts: Vec<usize> = (1..=4).map(|s| collect(&generator, s).len()).collect();
        // Size 1: 0, x, y, 1, 2 and their negations but 0: 5 + 4.
        assert_eq!(counts[0], 9);
        // Size 2: x*2, y*2, x*x, x*y, y*y (each ±), and the sums of two
        // different units from {x, y, 1, 2} with distinct monomials: x±y,
        // x±1, x±2, y±1, y±2, and -x-y, -x-1, ... (all four sign patterns of
        // a pair where the order is fixed): 5*2 + 5 pairs * 4.
        assert_eq!(counts[1], 10 + 5 * 4);
        assert!(counts[2] > counts[1], "{counts:?}");
        let naive = naive_terms(&[0, 1], &[-2, -1, 0, 1, 2], 2);
        let naive = Generator::new(&naive, false, 2, true);
        // Naive size 1: 7 units, each ±.
        assert_eq!(collect(&naive, 1).len(), 14);
        assert!(collect(&naive, 2).len() > 3 * counts[1]);
    }

    #[test]
    fn canonical_order_puts_the_first_ranked_variable_first() {
        let terms = canonical_terms(&[5, 2], &[1], 3);
        let generator = Generator::new(&terms, true, 3, false);
        let first = collect(&generator, 1);
        assert_eq!(first[0], Expr::unit(Unit::Var(5)));
        let sums = collect(&generator, 2);
        assert!(sums.contains(&Expr {
            terms: vec![
                Term {
                    negated: false,
                    units: vec![Unit::Var(5)]
                },
                Term {
                    negated: true,
                    units: vec![Unit::Const(1)]
                }
            ]
        }));
    }
}
