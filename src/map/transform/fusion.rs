//! Fusion of two adjacent mapped nests whose parallel loops conform (the same
//! variables, bounds and steps): one kernel, one pass over the data. Legal iff
//! no dependence is fusion-preventing — an access of the second nest that, in
//! the fused loop, would run before the access of the first nest it depends on
//! (a read of a value the first nest writes at a later iteration) — and
//! applied only when the fused loops stay parallel.

use std::collections::BTreeSet;

use super::{band, describe, perfect_chain, text, wrap, Cx, Outcome, Proposal};
use crate::front::c::loops::{Function, Loop, Stmt};
use crate::map::facts::ScalarRole;
use crate::map::nest::{Decision, NestPlan};
use crate::map::syntax::walk;

/// Considers fusing the nest `a` with the nest `b` that follows it.
pub fn consider(
    cx: &Cx,
    function: &Function,
    (pa, a): (&NestPlan, &Loop),
    (pb, b): (&NestPlan, &Loop),
) -> Outcome {
    let both_mapped = matches!(pa.decision, Decision::Mapped { .. })
        && matches!(pb.decision, Decision::Mapped { .. });
    if !both_mapped {
        return Outcome::Nothing;
    }
    let depth = band(pa).len().min(band(pb).len());
    let (ca, cb) = (perfect_chain(a, depth), perfect_chain(b, depth));
    let what = format!("fusion with the nest at lines {}-{}", b.lines.0, b.lines.1);
    if ca.len() < depth || cb.len() < depth {
        return Outcome::Nothing;
    }
    for (x, y) in ca.iter().zip(&cb) {
        let same = x.var == y.var
            && x.lower == y.lower
            && x.upper == y.upper
            && x.step == y.step
            && x.declared == y.declared;
        if !same {
            return Outcome::Refuse(format!(
                "{what}: not applied: the loops do not conform (`{}` runs {} .. {} step {} here, `{}` runs {} .. {} step {} there)",
                x.var, x.lower, x.upper, x.step, y.var, y.lower, y.upper, y.step
            ));
        }
    }
    for line in a.lines.1 + 1..b.lines.0 {
        let t = cx.file.original_line(line).trim();
        if !(t.is_empty() || t.starts_with("//")) {
            return Outcome::Refuse(format!(
                "{what}: not applied: line {line} lies between them"
            ));
        }
    }
    if let Some(name) = scalar_shared(cx, function, a, b) {
        return Outcome::Refuse(format!(
            "{what}: not applied: the scalar `{name}` is written by one nest and used by the other"
        ));
    }
    let inner_a = ca[depth - 1];
    let inner_b = cb[depth - 1];
    let mut body = inner_a.body.clone();
    body.extend(inner_b.body.iter().cloned());
    let fused = wrap(&ca, body);
    let facts = cx.facts(&fused, function);
    if !facts.obstacles.is_empty() {
        return Outcome::Nothing;
    }
    let in_a = |line: usize| (a.lines.0..=a.lines.1).contains(&line);
    let in_b = |line: usize| (b.lines.0..=b.lines.1).contains(&line);
    for d in &facts.dependences {
        let zero = d.distance.iter().all(|(_, e)| *e == Some(0));
        let a_first = in_a(d.lines.0) && in_b(d.lines.1);
        let b_first = in_b(d.lines.0) && in_a(d.lines.1);
        let unknown_first = d
            .distance
            .iter()
            .find(|(_, e)| *e != Some(0))
            .is_some_and(|(_, e)| e.is_none());
        if (b_first && !zero) || (a_first && unknown_first) {
            return Outcome::Refuse(format!(
                "{what}: not applied: fusion-preventing {} (the second nest would reach an element before the first nest's iteration that it depends on)",
                describe(d)
            ));
        }
    }
    for l in &ca {
        if let Some(why) = facts.sequential.get(&l.var).and_then(|r| r.first()) {
            return Outcome::Refuse(format!(
                "{what}: not applied: the fused loop `{}` would be sequential ({why})",
                l.var
            ));
        }
    }
    let (ta, tb) = match (
        text::split(cx.file, a, depth),
        text::split(cx.file, b, depth),
    ) {
        (Ok(ta), Ok(tb)) => (ta, tb),
        (Err(why), _) | (_, Err(why)) => {
            return Outcome::Refuse(format!("{what}: not applied: {why}"))
        }
    };
    // Locals of the same name in both bodies keep the second body in braces.
    let locals = |body: &[Stmt]| -> BTreeSet<String> {
        body.iter()
            .filter_map(|s| match s {
                Stmt::Decl { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect()
    };
    let clash = !locals(&inner_a.body).is_disjoint(&locals(&inner_b.body));
    let header = &ta.headers[depth - 1];
    let indent = ta.indent_at(header.start);
    let body_indent = format!("{indent}    ");
    let body_b = if clash {
        tb.body_text()
    } else {
        tb.body_statements()
    };
    let new_text = format!(
        "{} {{\n{body_indent}{}\n{body_indent}{}\n{indent}}}{}",
        &ta.text[..header.end],
        ta.body_statements(),
        body_b,
        &ta.text[ta.body.1..]
    );
    let vars: Vec<&str> = ca.iter().map(|l| l.var.as_str()).collect();
    let note = format!(
        "fusion: the nest at lines {}-{} fused into this one (the same loops {} with the same bounds): one kernel and one pass over the data; legal: no fusion-preventing dependence{}",
        b.lines.0,
        b.lines.1,
        vars.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", "),
        {
            let mut between: Vec<String> = facts
                .dependences
                .iter()
                .filter(|d| in_a(d.lines.0) && in_b(d.lines.1))
                .map(describe)
                .collect();
            between.dedup();
            if between.is_empty() {
                " (none between them)".to_string()
            } else {
                format!(" ({} kept forward)", between.join("; "))
            }
        }
    );
    Outcome::Propose(Proposal {
        kind: "fusion",
        function: function.name.clone(),
        lines: (a.lines.0, b.lines.1),
        text: new_text,
        expected: vec![Stmt::For(fused)],
        notes: vec![(0, note)],
    })
}

/// A scalar (not a local) that one of the nests `a` and `b` writes and the
/// other uses: fusing them would change what it reads.
fn scalar_shared(cx: &Cx, function: &Function, a: &Loop, b: &Loop) -> Option<String> {
    let (fa, fb) = (cx.facts(a, function), cx.facts(b, function));
    for (mine, other, other_loop) in [(&fa, &fb, b), (&fb, &fa, a)] {
        for (name, role) in &mine.scalars {
            if matches!(role, ScalarRole::Local(_)) {
                continue;
            }
            let mut used = other.scalars.contains_key(name);
            walk(
                std::slice::from_ref(&Stmt::For(other_loop.clone())),
                &mut |s| {
                    if let Stmt::Assign(x) = s {
                        used |= super::mentions(&x.value, name)
                            || x.target.index.iter().any(|e| super::mentions(e, name));
                    }
                },
            );
            if used {
                return Some(name.clone());
            }
        }
    }
    None
}
