//! Interchange for coalescing: when the innermost loop of a perfect nest does
//! not walk the contiguous (last) subscript of the arrays but another loop of
//! the nest does, that loop is moved innermost, so the thread loop mapped onto
//! the fastest GPU dimension and the OpenMP inner loop walk consecutive
//! elements. Legal iff no dependence vector becomes lexicographically
//! negative once its entries are permuted; applied when the moved nest keeps
//! at least as many outer parallel loops as before (a sequential outer loop
//! moved inside a parallel one turns an iterate of launches into one kernel).

use super::{band, describe, perfect_chain, text, wrap, Cx, Outcome, Proposal};
use crate::front::c::loops::{Function, Loop};
use crate::map::facts::{NestFacts, ScalarRole};
use crate::map::liveness::LiveAfter;
use crate::map::nest::{Decision, NestPlan};
use crate::map::subscript::Sub;

/// Considers the perfect nest at `root`.
pub fn consider(cx: &Cx, plan: &NestPlan, root: &Loop, function: &Function) -> Outcome {
    if !matches!(plan.decision, Decision::Mapped { .. } | Decision::Iterate) {
        return Outcome::Nothing;
    }
    let chain = perfect_chain(root, 3);
    if chain.len() < 2 {
        return Outcome::Nothing;
    }
    let facts = cx.facts(root, function);
    if !facts.obstacles.is_empty() {
        return Outcome::Nothing;
    }
    let vars: Vec<&str> = chain.iter().map(|l| l.var.as_str()).collect();
    let (walks, total) = contiguous_walks(&facts, &vars);
    let innermost = vars.len() - 1;
    let (c, best) =
        walks
            .iter()
            .enumerate()
            .fold((innermost, walks[innermost]), |(bi, bc), (i, &n)| {
                if n > bc {
                    (i, n)
                } else {
                    (bi, bc)
                }
            });
    if c == innermost {
        return Outcome::Nothing;
    }
    let moved = vars[c];
    let what = format!(
        "interchange (moving `{moved}` innermost: it walks the contiguous last subscript of {best} of {total} accesses, `{}` of {})",
        vars[innermost], walks[innermost]
    );
    let live = LiveAfter::new(root, function, cx.unit, cx.file);
    for l in &chain {
        for other in &vars {
            if *other != l.var
                && (super::mentions(&l.lower, other) || super::mentions(&l.upper, other))
            {
                return Outcome::Refuse(format!(
                    "{what}: not applied: the bounds of `{}` depend on `{other}` (the nest is not rectangular)",
                    l.var
                ));
            }
        }
        if l.not_canonical.is_some() {
            return Outcome::Nothing;
        }
        if !l.declared && live.reads(&l.var) {
            return Outcome::Refuse(format!(
                "{what}: not applied: `{}` is declared outside its loop and read after the nest (its value there could change)",
                l.var
            ));
        }
    }
    if let Some((name, _)) = facts
        .scalars
        .iter()
        .find(|(_, r)| matches!(r, ScalarRole::Carried))
    {
        return Outcome::Refuse(format!(
            "{what}: not applied: the scalar `{name}` carries a value across iterations"
        ));
    }
    let mut order: Vec<usize> = (0..vars.len()).filter(|&k| k != c).collect();
    order.push(c);
    let new_vars: Vec<&str> = order.iter().map(|&k| vars[k]).collect();
    // Legality: every dependence vector, its chain entries permuted, stays
    // lexicographically non-negative (an unknown entry before a positive one fails).
    let mut sequential_at = vec![Vec::new(); vars.len()];
    for d in &facts.dependences {
        let entry = |v: &str| d.distance.iter().find(|(x, _)| x == v).map(|(_, e)| *e);
        let permuted: Vec<(&str, Option<i64>)> = new_vars
            .iter()
            .filter_map(|v| entry(v).map(|e| (*v, e)))
            .collect();
        for (position, (_, e)) in permuted.iter().enumerate() {
            match e {
                Some(0) => continue,
                Some(x) if *x > 0 => {
                    sequential_at[position].push(describe(d));
                    break;
                }
                _ => {
                    let shown: Vec<String> = permuted
                        .iter()
                        .map(|(v, e)| format!("{v}: {}", e.map_or("*".into(), |e| e.to_string())))
                        .collect();
                    return Outcome::Refuse(format!(
                        "{what}: not applied: the {} would become ({}), lexicographically negative or unknown",
                        describe(d),
                        shown.join(", ")
                    ));
                }
            }
        }
    }
    let new_band = sequential_at.iter().take_while(|r| r.is_empty()).count();
    let old_band = band(plan).len();
    if new_band == 0 || new_band < old_band {
        let at = new_band.min(vars.len() - 1);
        return Outcome::Refuse(format!(
            "{what}: not applied: after it `{}` would be sequential ({}), leaving {new_band} outer parallel loop(s) where there are {old_band}",
            new_vars[at],
            sequential_at[at].first().cloned().unwrap_or_default()
        ));
    }
    let nest = match text::split(cx.file, root, chain.len()) {
        Ok(n) => n,
        Err(why) => return Outcome::Refuse(format!("{what}: not applied: {why}")),
    };
    let mut new_text = nest.text.clone();
    for position in (0..chain.len()).rev() {
        let h = &nest.headers[position];
        new_text.replace_range(h.start..h.end, nest.header(order[position]));
    }
    let new_chain: Vec<&Loop> = order.iter().map(|&k| chain[k]).collect();
    let innermost_body = chain[innermost].body.clone();
    let expected = wrap(&new_chain, innermost_body);
    let note = format!(
        "interchange: ({}) becomes ({}) so that the innermost loop `{moved}` walks the contiguous axis ({best} of {total} accesses; the thread loop on the fastest GPU dimension and the OpenMP inner loop); legal: no dependence vector becomes lexicographically negative{}",
        vars.join(", "),
        new_vars.join(", "),
        if facts.dependences.is_empty() {
            " (there are none)".to_string()
        } else {
            format!(" ({} checked)", facts.dependences.len())
        }
    );
    Outcome::Propose(Proposal {
        kind: "interchange",
        function: function.name.clone(),
        lines: root.lines,
        text: new_text,
        expected: vec![crate::front::c::loops::Stmt::For(expected)],
        notes: vec![(0, note)],
    })
}

/// Per loop of the chain (variables `vars`), how many accesses have it
/// alone in their last (contiguous) subscript; with the number of accesses.
fn contiguous_walks(facts: &NestFacts, vars: &[&str]) -> (Vec<usize>, usize) {
    let mut walks = vec![0usize; vars.len()];
    let mut seen: std::collections::BTreeMap<&str, usize> = Default::default();
    let mut total = 0;
    for access in &facts.accesses {
        let k = seen.entry(access.array.as_str()).or_insert(0);
        let subs = &facts.subs[&access.array][*k];
        *k += 1;
        total += 1;
        let Some(Sub::Affine(p)) = subs.last() else {
            continue;
        };
        let inside: Vec<usize> = vars
            .iter()
            .enumerate()
            .filter(|(_, v)| {
                p.0.iter()
                    .any(|(m, c)| *c != 0 && m.iter().any(|s| s == *v))
            })
            .map(|(i, _)| i)
            .collect();
        if let [one] = inside.as_slice() {
            walks[*one] += 1;
        }
    }
    (walks, total)
}
