//! The dependence tests on a pair of accesses to one array: per subscript,
//! Banerjee's bounds test where the loop bounds are known (constants, or
//! affine in the nest's invariant symbols), then the strong SIV test (equal
//! coefficients give a distance) and the GCD test; what none of them rules
//! out is a dependence, its distance unknown (`*`).

use std::collections::{BTreeMap, BTreeSet};

use super::subscript::{Context, Poly, Sub};
use crate::front::c::loops::Loop;

/// The values each loop variable takes, `first ..= last`, as polynomials in
/// the nest's invariant symbols (constants after the preprocessor, or `n - 2`
/// for `i < n - 1`): what the bounds test ([`bounds_exclude`]) needs. Loops
/// whose bounds are not affine in invariants (or name another loop's
/// variable), non-canonical loops and sibling loops sharing a variable
/// ([`ambiguous`](BTreeSet)) are left out.
///
/// A range whose `last` is below its `first` belongs to a loop that never
/// runs: accesses inside it never happen, so whatever the test concludes
/// about them holds.
pub type Ranges = BTreeMap<String, (Poly, Poly)>;

/// The [`Ranges`] of the loops of a nest.
pub fn loop_ranges(
    loops: &BTreeMap<String, Loop>,
    ambiguous: &BTreeSet<String>,
    cx: &Context,
) -> Ranges {
    let invariant = |p: &Poly| {
        p.0.keys()
            .all(|m| m.iter().all(|s| !cx.loop_vars.contains(s)))
    };
    loops
        .iter()
        .filter(|(v, l)| !ambiguous.contains(*v) && l.not_canonical.is_none() && l.step > 0)
        .filter_map(|(v, l)| {
            let (first, bound) = (cx.poly(&l.lower)?, cx.poly(&l.upper)?);
            let last = bound.add(&Poly::constant(1), -1)?;
            (invariant(&first) && invariant(&last)).then(|| (v.clone(), (first, last)))
        })
        .collect()
}

/// The ranges of the loops around one access only: a loop variable read
/// after its loop (`a[i]` below `for (i = 0; i < n; i++)`) holds a value
/// outside the loop's range.
pub fn ranges_around(ranges: &Ranges, loops: &[String]) -> Ranges {
    ranges
        .iter()
        .filter(|(v, _)| loops.contains(v))
        .map(|(v, r)| (v.clone(), r.clone()))
        .collect()
}

/// Banerjee's bounds test on one subscript: whether `p(I) = q(I')` has no
/// solution with every loop variable of `I` within its range in `p_ranges`
/// and every one of `I'` within `q_ranges` (two iterations, each access
/// with the loops around it). The extremes of `p(I) - q(I')` are
/// polynomials in the invariant symbols; the test succeeds when one of them
/// is a constant of the right sign (the symbols cancel, as in `a[i]` against
/// `a[i + n]` for `i < n`). A loop variable without a range, or multiplied
/// by a symbol, gives up (`false`).
pub fn bounds_exclude(
    p: &Poly,
    q: &Poly,
    loop_vars: &BTreeSet<String>,
    p_ranges: &Ranges,
    q_ranges: &Ranges,
) -> bool {
    extremes(p, q, loop_vars, p_ranges, q_ranges).is_some_and(|(low, high)| {
        low.as_constant().is_some_and(|l| l > 0) || high.as_constant().is_some_and(|h| h < 0)
    })
}

/// The least and greatest values of `p(I) - q(I')` over the ranges, as
/// polynomials in the invariant symbols; `None` where a term is unbounded
/// or the arithmetic overflows.
fn extremes(
    p: &Poly,
    q: &Poly,
    loop_vars: &BTreeSet<String>,
    p_ranges: &Ranges,
    q_ranges: &Ranges,
) -> Option<(Poly, Poly)> {
    let (mut low, mut high) = (Poly::default(), Poly::default());
    let monomials: BTreeSet<&Vec<String>> = p.0.keys().chain(q.0.keys()).collect();
    for m in monomials {
        let (cp, cq) = (
            p.0.get(m).copied().unwrap_or(0),
            q.0.get(m).copied().unwrap_or(0),
        );
        let loop_var = m.iter().find(|s| loop_vars.contains(*s));
        match loop_var {
            // A constant, or an invariant symbol: the same in both iterations.
            None => {
                let term = Poly::monomial(m.clone(), cp.checked_sub(cq)?);
                low = low.add(&term, 1)?;
                high = high.add(&term, 1)?;
            }
            Some(v) if m.len() == 1 => {
                // `cp * v - cq * v'`, each term at its extremes.
                for (c, ranges) in [(cp, p_ranges), (cq.checked_neg()?, q_ranges)] {
                    if c == 0 {
                        continue;
                    }
                    let (first, last) = ranges.get(v)?;
                    let (a, b) = (first.scale(c)?, last.scale(c)?);
                    let (least, most) = if c > 0 { (a, b) } else { (b, a) };
                    low = low.add(&least, 1)?;
                    high = high.add(&most, 1)?;
                }
            }
            Some(_) => return None,
        }
    }
    Some((low, high))
}

/// The distance vector over the common loops of two accesses' subscripts, or
/// `None` when they provably never touch the same element.
pub fn test_pair(
    a: &[Sub],
    b: &[Sub],
    common: &[String],
    loop_vars: &BTreeSet<String>,
    ranges: [&Ranges; 2],
) -> Option<Vec<(String, Option<i64>)>> {
    let unknown = || common.iter().map(|v| (v.clone(), None)).collect::<Vec<_>>();
    if a.len() != b.len() {
        return Some(unknown());
    }
    // Any subscript the two iterations cannot agree on within the loop
    // bounds: no dependence.
    if a.iter().zip(b).any(|pair| match pair {
        (Sub::Affine(p), Sub::Affine(q)) => bounds_exclude(p, q, loop_vars, ranges[0], ranges[1]),
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

    fn ranges(list: &[(&str, i64, i64)]) -> Ranges {
        list.iter()
            .map(|(v, a, b)| (v.to_string(), (Poly::constant(*a), Poly::constant(*b))))
            .collect()
    }

    /// The bounds test with the same ranges for both accesses.
    fn excluded(p: &Poly, q: &Poly, vars: &BTreeSet<String>, ranges: &Ranges) -> bool {
        bounds_exclude(p, q, vars, ranges, ranges)
    }

    #[test]
    fn a_distance_beyond_the_trip_count_is_no_dependence() {
        // a[i] and a[i + 500], i from 0 to 499: the two halves of a[1000].
        let (p, q) = (poly(0, &[("i", 1)]), poly(500, &[("i", 1)]));
        let i = vars(&["i"]);
        assert!(excluded(&p, &q, &i, &ranges(&[("i", 0, 499)])));
        // One more iteration and i = 500 meets i' = 0.
        assert!(!excluded(&p, &q, &i, &ranges(&[("i", 0, 500)])));
        // Without a constant range nothing is ruled out.
        assert!(!excluded(&p, &q, &i, &Ranges::new()));
    }

    #[test]
    fn coupled_subscripts_out_of_reach_are_no_dependence() {
        // B[i + 24] and B[25 - i'] meet where i + i' = 1: not for i, i' in 1..=5.
        let (p, q) = (poly(24, &[("i", 1)]), poly(25, &[("i", -1)]));
        let i = vars(&["i"]);
        assert!(excluded(&p, &q, &i, &ranges(&[("i", 1, 5)])));
        assert!(!excluded(&p, &q, &i, &ranges(&[("i", 0, 5)])));
        // Two loop variables: 2i - j' = 7 with i in 0..=2, j in 0..=3 has
        // 2i - j' at most 4.
        let (p, q) = (poly(0, &[("i", 2)]), poly(7, &[("j", 1)]));
        let ij = vars(&["i", "j"]);
        assert!(excluded(&p, &q, &ij, &ranges(&[("i", 0, 2), ("j", 0, 3)])));
        assert!(!excluded(&p, &q, &ij, &ranges(&[("i", 0, 4), ("j", 0, 3)])));
    }

    #[test]
    fn invariant_symbols_must_cancel() {
        // a[i + n] and a[i + n + 20], i in 1..=9: n is the same in both.
        let i = vars(&["i"]);
        let r = ranges(&[("i", 1, 9)]);
        let p = poly(0, &[("i", 1), ("n", 1)]);
        assert!(excluded(&p, &poly(20, &[("i", 1), ("n", 1)]), &i, &r));
        // a[i + 2n]: n's value decides.
        assert!(!excluded(&p, &poly(20, &[("i", 1), ("n", 2)]), &i, &r));
        // A loop variable times a symbol is not bounded here.
        let mut scaled = Poly::default();
        scaled.0.insert(vec!["i".to_string(), "n".to_string()], 1);
        assert!(!excluded(&scaled, &poly(1000, &[]), &i, &r));
    }

    #[test]
    fn the_pair_test_gives_distances_unless_the_bounds_exclude_it() {
        // a[i] against a[i + offset], i in 1..=9 (or unbounded).
        let pair = |offset: i64, ranges: &Ranges| {
            test_pair(
                &[Sub::Affine(poly(0, &[("i", 1)]))],
                &[Sub::Affine(poly(offset, &[("i", 1)]))],
                &["i".to_string()],
                &vars(&["i"]),
                [ranges, ranges],
            )
        };
        let bounded = ranges(&[("i", 1, 9)]);
        assert_eq!(pair(-1, &bounded), Some(vec![("i".to_string(), Some(1))]));
        // a[i + 20] is never reached by i in 1..=9.
        assert_eq!(pair(20, &bounded), None);
        // Without bounds, the same pair is a dependence at distance -20.
        assert_eq!(
            pair(20, &Ranges::new()),
            Some(vec![("i".to_string(), Some(-20))])
        );
    }

    #[test]
    fn ranges_come_from_bounds_affine_in_invariants() {
        let lp = Loop::counted;
        let bin = |op, a, b| Expr::Bin(op, Box::new(a), Box::new(b));
        let half = bin(BinOp::Div, Expr::Int(1000), Expr::Int(2));
        let by_outer = lp("t", 0, Expr::var("i"));
        let mut stepped = lp("s", 0, Expr::Int(8));
        stepped.not_canonical = Some("its step is not an increment".into());
        let loops: BTreeMap<String, Loop> = [
            ("i".to_string(), lp("i", 0, half)),
            (
                "j".to_string(),
                lp("j", 1, bin(BinOp::Sub, Expr::var("n"), Expr::Int(1))),
            ),
            ("k".to_string(), lp("k", 0, Expr::Int(8))),
            ("e".to_string(), lp("e", 5, Expr::Int(5))),
            // Bounded by a written scalar, an outer loop's variable, a
            // division of symbols: no range.
            ("w".to_string(), lp("w", 0, Expr::var("count"))),
            ("t".to_string(), by_outer),
            (
                "d".to_string(),
                lp("d", 0, bin(BinOp::Div, Expr::var("n"), Expr::Int(2))),
            ),
            ("s".to_string(), stepped),
        ]
        .into_iter()
        .collect();
        let loop_vars: BTreeSet<String> = loops.keys().cloned().collect();
        let written = vars(&["count"]);
        let cx = Context {
            loop_vars: &loop_vars,
            written: &written,
        };
        let found = loop_ranges(&loops, &vars(&["k"]), &cx);
        let mut expected = ranges(&[("i", 0, 499), ("e", 5, 4)]);
        expected.insert("j".into(), (Poly::constant(1), poly(-2, &[("n", 1)])));
        assert_eq!(found, expected);
    }

    #[test]
    fn symbolic_bounds_that_cancel_exclude() {
        // a[i] against a[i + n], i from 0 to n - 1: the two halves of a[2n].
        let i = vars(&["i"]);
        let to_n = Ranges::from([("i".to_string(), (Poly::constant(0), poly(-1, &[("n", 1)])))]);
        let (p, q) = (poly(0, &[("i", 1)]), poly(0, &[("i", 1), ("n", 1)]));
        assert!(excluded(&p, &q, &i, &to_n));
        // i up to n: i = n meets i' = 0.
        let to_n_inclusive =
            Ranges::from([("i".to_string(), (Poly::constant(0), poly(0, &[("n", 1)])))]);
        assert!(!excluded(&p, &q, &i, &to_n_inclusive));
        // a[i + m]: the symbols do not cancel, so nothing is known.
        assert!(!excluded(&p, &poly(0, &[("i", 1), ("m", 1)]), &i, &to_n));
        // A coupled pair over the same symbolic range: a[i] against
        // a[2n - 1 - i'] meet at i + i' = 2n - 1, beyond 2(n - 1).
        assert!(excluded(&p, &poly(-1, &[("i", -1), ("n", 2)]), &i, &to_n));
        assert!(!excluded(&p, &poly(-2, &[("i", -1), ("n", 2)]), &i, &to_n));
    }

    #[test]
    fn a_variable_read_after_its_loop_has_no_range() {
        // for (i = 0; i < 10; i++) a[j][i] = ...;  then a[j + 1][i - 10]
        // below the loop, where i is 10: the second access is not inside
        // loop i, so i's range says nothing of it.
        let ij = vars(&["i", "j"]);
        let all = ranges(&[("i", 0, 9), ("j", 0, 6)]);
        let (inside, after) = (poly(0, &[("i", 1)]), poly(-10, &[("i", 1)]));
        assert!(bounds_exclude(&inside, &after, &ij, &all, &all));
        let around_after = ranges_around(&all, &["j".to_string()]);
        assert!(!bounds_exclude(&inside, &after, &ij, &all, &around_after));
        assert_eq!(around_after, ranges(&[("j", 0, 6)]));
    }
}
