//! Arithmetic expressions in the slides' linear form: a unit is a constant or a
//! variable, a term a product of units, an expression a sum or difference of
//! terms (`y * x * 2 + y - 3`). Evaluation wraps like 64-bit integers.

/// A variable (a candidate, by its position in the profile) or a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Unit {
    /// The candidate at this position of [`super::table::AccessProfile::candidates`].
    Var(usize),
    /// An integer constant.
    Const(i64),
}

impl Unit {
    /// The unit's value on a row of candidate values (0 for a candidate the
    /// row lacks: [`super::check_profile`] reports such rows).
    pub fn eval(self, values: &[i64]) -> i64 {
        match self {
            Unit::Var(v) => values.get(v).copied().unwrap_or(0),
            Unit::Const(c) => c,
        }
    }
}

/// A product of units, added or subtracted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Term {
    /// Whether the term is subtracted.
    pub negated: bool,
    /// The factors, never empty.
    pub units: Vec<Unit>,
}

impl Term {
    /// The product of the units (without the sign).
    pub fn product(&self, values: &[i64]) -> i64 {
        self.units
            .iter()
            .fold(1i64, |acc, u| acc.wrapping_mul(u.eval(values)))
    }
}

/// A sum and difference of terms; the first term may be negated (`-x`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Expr {
    /// The terms, never empty.
    pub terms: Vec<Term>,
}

impl Expr {
    /// The expression of one unit.
    pub fn unit(unit: Unit) -> Expr {
        Expr {
            terms: vec![Term {
                negated: false,
                units: vec![unit],
            }],
        }
    }

    /// The expression's value on a row of candidate values.
    pub fn eval(&self, values: &[i64]) -> i64 {
        self.terms.iter().fold(0i64, |acc, t| {
            let p = t.product(values);
            if t.negated {
                acc.wrapping_sub(p)
            } else {
                acc.wrapping_add(p)
            }
        })
    }

    /// The number of units, the size the search orders by.
    pub fn size(&self) -> usize {
        self.terms.iter().map(|t| t.units.len()).sum()
    }

    /// The variables it reads.
    pub fn variables(&self) -> impl Iterator<Item = usize> + '_ {
        self.terms.iter().flat_map(|t| {
            t.units.iter().filter_map(|u| match u {
                Unit::Var(v) => Some(*v),
                Unit::Const(_) => None,
            })
        })
    }
}

/// One term of the vocabulary the generator picks from: its units, its
/// monomial (the variables, identifying terms that differ only in their
/// constant factor) and its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TermShape {
    /// The units, in print order.
    pub units: Vec<Unit>,
    /// The variables' ranks in the search order, sorted; the empty monomial is a
    /// constant term.
    pub monomial: Vec<usize>,
}

/// The terms the canonical generator picks from, in canonical order: a term's
/// variables sorted (most correlated first, repeats allowed, `x * x`), at most
/// one constant, last and at least 2 (signs come from `+`/`-`, a factor of 1 is
/// no factor); constant terms are positive. `vars` are the variables in search
/// order (most correlated first); terms come out most correlated first, each
/// monomial's plain form before its multiples.
pub fn canonical_terms(vars: &[usize], constants: &[i64], max_units: usize) -> Vec<TermShape> {
    let mut factors: Vec<i64> = constants
        .iter()
        .map(|c| c.unsigned_abs() as i64)
        .filter(|&c| c >= 1)
        .collect();
    factors.sort_unstable();
    factors.dedup();
    let mut monomials: Vec<Vec<usize>> = Vec::new();
    for degree in 1..=max_units {
        multisets(vars.len(), degree, &mut Vec::new(), &mut monomials);
    }
    let mut terms = Vec::new();
    for monomial in &monomials {
        let units: Vec<Unit> = monomial.iter().map(|&r| Unit::Var(vars[r])).collect();
        terms.push(TermShape {
            units: units.clone(),
            monomial: monomial.clone(),
        });
        if units.len() < max_units {
            for &c in factors.iter().filter(|&&c| c >= 2) {
                let mut with_factor = units.clone();
                with_factor.push(Unit::Const(c));
                terms.push(TermShape {
                    units: with_factor,
                    monomial: monomial.clone(),
                });
            }
        }
    }
    for &c in &factors {
        terms.push(TermShape {
            units: vec![Unit::Const(c)],
            monomial: Vec::new(),
        });
    }
    terms
}

/// Every unit sequence of 1 to `max_units` units, in every order and with
/// every constant (0, 1 and negative ones included): the vocabulary of the
/// naive generator that the canonical one is measured against.
pub fn naive_terms(vars: &[usize], constants: &[i64], max_units: usize) -> Vec<TermShape> {
    let mut units: Vec<Unit> = vars.iter().map(|&v| Unit::Var(v)).collect();
    let mut consts = constants.to_vec();
    consts.sort_unstable();
    consts.dedup();
    units.extend(consts.into_iter().map(Unit::Const));
    let mut terms = Vec::new();
    let mut current: Vec<Unit> = Vec::new();
    fn extend(
        units: &[Unit],
        vars: &[usize],
        left: usize,
        current: &mut Vec<Unit>,
        out: &mut Vec<TermShape>,
    ) {
        if !current.is_empty() {
            let mut monomial: Vec<usize> = current
                .iter()
                .filter_map(|u| match u {
                    Unit::Var(v) => vars.iter().position(|w| w == v),
                    Unit::Const(_) => None,
                })
                .collect();
            monomial.sort_unstable();
            out.push(TermShape {
                units: current.clone(),
                monomial,
            });
        }
        if left == 0 {
            return;
        }
        for &u in units {
            current.push(u);
            extend(units, vars, left - 1, current, out);
            current.pop();
        }
    }
    extend(&units, vars, max_units, &mut current, &mut terms);
    terms
}

/// The multisets of `degree` ranks below `n`, each sorted, in lexicographic
/// order (so rank 0, the most correlated variable, comes first).
fn multisets(n: usize, degree: usize, current: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if current.len() == degree {
        out.push(current.clone());
        return;
    }
    let from = current.last().copied().unwrap_or(0);
    for r in from..n {
        current.push(r);
        multisets(n, degree, current, out);
        current.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_sums_and_differences_of_products() {
        // y * x * 2 + y - 3 with x = 5, y = 7
        let e = Expr {
            terms: vec![
                Term {
                    negated: false,
                    units: vec![Unit::Var(1), Unit::Var(0), Unit::Const(2)],
                },
                Term {
                    negated: false,
                    units: vec![Unit::Var(1)],
                },
                Term {
                    negated: true,
                    units: vec![Unit::Const(3)],
                },
            ],
        };
        assert_eq!(e.eval(&[5, 7]), 70 + 7 - 3);
        assert_eq!(e.size(), 5);
        assert_eq!(e.variables().collect::<Vec<_>>(), vec![1, 0, 1]);
    }

    #[test]
    fn canonical_terms_fold_constants_and_sort_units() {
        let terms = canonical_terms(&[3, 1], &[-2, -1, 0, 1, 2], 2);
        let units: Vec<Vec<Unit>> = terms.iter().map(|t| t.units.clone()).collect();
        use Unit::{Const as C, Var as V};
        assert_eq!(
            units,
            vec![
                vec![V(3)],
                vec![V(3), C(2)],
                vec![V(1)],
                vec![V(1), C(2)],
                vec![V(3), V(3)],
                vec![V(3), V(1)],
                vec![V(1), V(1)],
                vec![C(1)],
                vec![C(2)],
            ]
        );
    }

    #[test]
    fn naive_terms_are_every_unit_sequence() {
        // 2 variables + 3 constants = 5 units: 5 + 25 sequences of at most 2.
        assert_eq!(naive_terms(&[0, 1], &[-1, 0, 1], 2).len(), 30);
    }
}
