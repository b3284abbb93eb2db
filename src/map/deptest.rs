//! The dependence tests on a pair of accesses to one array: per subscript,
//! Banerjee's bounds test where the loop bounds are constants, then the
//! strong SIV test (equal coefficients give a distance) and the GCD test;
//! what none of them rules out is a dependence, its distance unknown (`*`).

use std::collections::{BTreeMap, BTreeSet};

use super::constant;
use super::subscript::{Poly, Sub};
use crate::front::c::loops::Loop;

/// The values each loop variable takes, `(first, last)`, where both bounds
/// are constants (after the preprocessor): what the bounds test
/// ([`bounds_exclude`]) needs. Variables of sibling loops with other bounds
/// are left out.
pub fn constant_ranges(
    loops: &BTreeMap<String, Loop>,
    ambiguous: &BTreeSet<String>,
) -> BTreeMap<String, (i64, i64)> {
    loops
        .iter()
        .filter(|(v, l)| !ambiguous.contains(*v) && l.not_canonical.is_none())
        .filter_map(|(v, l)| {
            let (lower, upper) = (constant(&l.lower)?, constant(&l.upper)?);
            (upper > lower).then(|| (v.clone(), (lower, upper - 1)))
        })
        .collect()
}

/// Banerjee's bounds test on one subscript: whether `p(I) = q(I')` has no
/// solution with every loop variable of `I` and `I'` (taken apart: two
/// iterations) within its range. Symbols other than loop variables must
/// cancel; a loop variable without a constant range, or multiplied by a
/// symbol, gives up (`false`).
pub fn bounds_exclude(
    p: &Poly,
    q: &Poly,
    loop_vars: &BTreeSet<String>,
    ranges: &BTreeMap<String, (i64, i64)>,
) -> bool {
    let (mut low, mut high) = (0i128, 0i128);
    let monomials: BTreeSet<&Vec<String>> = p.0.keys().chain(q.0.keys()).collect();
    for m in monomials {
        let (cp, cq) = (
            p.0.get(m).copied().unwrap_or(0),
            q.0.get(m).copied().unwrap_or(0),
        );
        let loop_var = m.iter().find(|s| loop_vars.contains(*s));
        match loop_var {
            None if m.is_empty() => {
                low += i128::from(cp) - i128::from(cq);
                high += i128::from(cp) - i128::from(cq);
            }
            // An invariant symbol: the same in both iterations.
            None if cp == cq => {}
            None => return false,
            Some(v) if m.len() == 1 => {
                let Some(&(first, last)) = ranges.get(v) else {
                    return false;
                };
                // `cp * v - cq * v'`, each term at its extremes.
                for c in [i128::from(cp), -i128::from(cq)] {
                    let (a, b) = (c * i128::from(first), c * i128::from(last));
                    low += a.min(b);
                    high += a.max(b);
                }
            }
            Some(_) => return false,
        }
    }
    low > 0 || high < 0
}

/// The distance vector over the common loops of two accesses' subscripts, or
/// `None` when they provably never touch the same element.
pub fn test_pair(
    a: &[Sub],
    b: &[Sub],
    common: &[String],
    loop_vars: &BTreeSet<String>,
    ranges: &BTreeMap<String, (i64, i64)>,
) -> Option<Vec<(String, Option<i64>)>> {
    let unknown = || common.iter().map(|v| (v.clone(), None)).collect::<Vec<_>>();
    if a.len() != b.len() {
        return Some(unknown());
    }
    // Any subscript the two iterations cannot agree on within the loop
    // bounds: no dependence.
    if a.iter().zip(b).any(|pair| match pair {
        (Sub::Affine(p), Sub::Affine(q)) => bounds_exclude(p, q, loop_vars, ranges),
        _ => false,
    }) {
        return None;
    }
    let mut fixed: BTreeMap<String, i64> = BTreeMap::new();
    for (sa, sb) in a.iter().zip(b) {
        match (sa, sb) {
            (Sub::Modulo(x, k1, m1), Sub::Modulo(y, k2, m2))
                if x == y
                    && m1 == m2
                    && k1.checked_sub(*k2).is_some_and(|d| d.rem_euclid(*m1) != 0) =>
            {
                return None;
            }
            (Sub::Affine(p), Sub::Affine(q)) => {
                let (pv, qv) = (p.without_constant(), q.without_constant());
                let Some(diff) = p.constant_term().checked_sub(q.constant_term()) else {
                    continue;
                };
                // Symbols that are not loop variables must cancel.
                let terms = |x: &Poly| -> BTreeMap<Vec<String>, i64> { x.0.clone() };
                if terms(&pv) == terms(&qv) {
                    let vars: Vec<(String, i64)> =
                        pv.0.iter()
                            .filter(|(m, _)| m.len() == 1 && loop_vars.contains(&m[0]))
                            .map(|(m, c)| (m[0].clone(), *c))
                            .collect();
                    let invariant_only =
                        pv.0.keys()
                            .all(|m| m.iter().all(|s| !loop_vars.contains(s)) || m.len() == 1);
                    if !invariant_only {
                        continue;
                    }
                    match vars.as_slice() {
                        [] => {
                            if diff != 0 {
                                return None;
                            }
                        }
                        [(v, c)] if common.contains(v) => {
                            if diff.checked_rem(*c).is_none_or(|r| r != 0) {
                                return None;
                            }
                            let d = diff.checked_div(*c).unwrap_or(0);
                            if let Some(prev) = fixed.insert(v.clone(), d) {
                                if prev != d {
                                    return None;
                                }
                            }
                        }
                        _ => {
                            let g = vars.iter().fold(0, |g, (_, c)| gcd(g, c.abs()));
                            if g != 0 && diff.checked_rem(g).is_some_and(|r| r != 0) {
                                return None;
                            }
                        }
                    }
                } else {
                    // GCD test over all coefficients of loop variables (as separate unknowns).
                    let mut g = 0;
                    let mut symbolic = false;
                    for x in [&pv, &qv] {
                        for (m, c) in &x.0 {
                            if m.len() == 1 && loop_vars.contains(&m[0]) {
                                g = gcd(g, c.abs());
                            } else {
                                symbolic = true;
                            }
                        }
                    }
                    if !symbolic && g != 0 && diff.checked_rem(g).is_some_and(|r| r != 0) {
                        return None;
                    }
                }
            }
            (Sub::Invariant(x), Sub::Invariant(y)) if x == y => {}
            _ => {}
        }
    }
    Some(
        common
            .iter()
            .map(|v| (v.clone(), fixed.get(v).copied()))
            .collect(),
    )
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::c::loops::{BinOp, Expr};

    /// `constant + Σ coefficient * symbol`.
    fn poly(constant: i64, terms: &[(&str, i64)]) -> Poly {
        let mut p = Poly::default();
        if constant != 0 {
            p.0.insert(Vec::new(), constant);
        }
        for (s, c) in terms {
            p.0.insert(vec![s.to_string()], *c);
        }
        p
    }

    fn vars(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    fn ranges(list: &[(&str, i64, i64)]) -> BTreeMap<String, (i64, i64)> {
        list.iter()
            .map(|(v, a, b)| (v.to_string(), (*a, *b)))
            .collect()
    }

    #[test]
    fn a_distance_beyond_the_trip_count_is_no_dependence() {
        // a[i] and a[i + 500], i from 0 to 499: the two halves of a[1000].
        let (p, q) = (poly(0, &[("i", 1)]), poly(500, &[("i", 1)]));
        let i = vars(&["i"]);
        assert!(bounds_exclude(&p, &q, &i, &ranges(&[("i", 0, 499)])));
        // One more iteration and i = 500 meets i' = 0.
        assert!(!bounds_exclude(&p, &q, &i, &ranges(&[("i", 0, 500)])));
        // Without a constant range nothing is ruled out.
        assert!(!bounds_exclude(&p, &q, &i, &BTreeMap::new()));
    }

    #[test]
    fn coupled_subscripts_out_of_reach_are_no_dependence() {
        // B[i + 24] and B[25 - i'] meet where i + i' = 1: not for i, i' in 1..=5.
        let (p, q) = (poly(24, &[("i", 1)]), poly(25, &[("i", -1)]));
        let i = vars(&["i"]);
        assert!(bounds_exclude(&p, &q, &i, &ranges(&[("i", 1, 5)])));
        assert!(!bounds_exclude(&p, &q, &i, &ranges(&[("i", 0, 5)])));
        // Two loop variables: 2i - j' = 7 with i in 0..=2, j in 0..=3 has
        // 2i - j' at most 4.
        let (p, q) = (poly(0, &[("i", 2)]), poly(7, &[("j", 1)]));
        let ij = vars(&["i", "j"]);
        assert!(bounds_exclude(
            &p,
            &q,
            &ij,
            &ranges(&[("i", 0, 2), ("j", 0, 3)])
        ));
        assert!(!bounds_exclude(
            &p,
            &q,
            &ij,
            &ranges(&[("i", 0, 4), ("j", 0, 3)])
        ));
    }

    #[test]
    fn invariant_symbols_must_cancel() {
        // a[i + n] and a[i + n + 20], i in 1..=9: n is the same in both.
        let i = vars(&["i"]);
        let r = ranges(&[("i", 1, 9)]);
        let p = poly(0, &[("i", 1), ("n", 1)]);
        assert!(bounds_exclude(&p, &poly(20, &[("i", 1), ("n", 1)]), &i, &r));
        // a[i + 2n]: n's value decides.
        assert!(!bounds_exclude(
            &p,
            &poly(20, &[("i", 1), ("n", 2)]),
            &i,
            &r
        ));
        // A loop variable times a symbol is not bounded here.
        let mut scaled = Poly::default();
        scaled.0.insert(vec!["i".to_string(), "n".to_string()], 1);
        assert!(!bounds_exclude(&scaled, &poly(1000, &[]), &i, &r));
    }

    #[test]
    fn the_pair_test_gives_distances_unless_the_bounds_exclude_it() {
        // a[i] against a[i + offset], i in 1..=9 (or unbounded).
        let pair = |offset: i64, ranges: &BTreeMap<String, (i64, i64)>| {
            test_pair(
                &[Sub::Affine(poly(0, &[("i", 1)]))],
                &[Sub::Affine(poly(offset, &[("i", 1)]))],
                &["i".to_string()],
                &vars(&["i"]),
                ranges,
            )
        };
        let bounded = ranges(&[("i", 1, 9)]);
        assert_eq!(pair(-1, &bounded), Some(vec![("i".to_string(), Some(1))]));
        // a[i + 20] is never reached by i in 1..=9.
        assert_eq!(pair(20, &bounded), None);
        // Without bounds, the same pair is a dependence at distance -20.
        assert_eq!(
            pair(20, &BTreeMap::new()),
            Some(vec![("i".to_string(), Some(-20))])
        );
    }

    #[test]
    fn ranges_come_from_constant_bounds_only() {
        let lp = Loop::counted;
        let half = Expr::Bin(
            BinOp::Div,
            Box::new(Expr::Int(1000)),
            Box::new(Expr::Int(2)),
        );
        let loops: BTreeMap<String, Loop> = [
            ("i".to_string(), lp("i", 0, half)),
            ("j".to_string(), lp("j", 1, Expr::var("n"))),
            ("k".to_string(), lp("k", 0, Expr::Int(8))),
            ("e".to_string(), lp("e", 5, Expr::Int(5))),
        ]
        .into_iter()
        .collect();
        let found = constant_ranges(&loops, &vars(&["k"]));
        assert_eq!(found, ranges(&[("i", 0, 499)]));
    }
}
