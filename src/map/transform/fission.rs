//! Fission: a sequential loop whose body mixes a parallel part and a
//! loop-carried part is split at statement boundaries into one loop per part,
//! so the parallel parts can be mapped while the others stay on the CPU.
//! Legal iff no dependence goes from a later part back to an earlier one: the
//! statements joined by a dependence cycle (or by a scalar they share, or by a
//! dependence of unknown direction) stay in one part.

use std::collections::BTreeSet;

use super::{describe, start_line, text, Cx, Outcome, Proposal};
use crate::front::c::loops::{Expr, Function, Loop, Stmt};
use crate::map::facts::{NestFacts, ScalarRole};
use crate::map::nest::{Decision, NestPlan};
use crate::map::syntax::walk;

/// Considers a nest whose outer loop is sequential.
pub fn consider(cx: &Cx, plan: &NestPlan, root: &Loop, function: &Function) -> Outcome {
    if matches!(plan.decision, Decision::Mapped { .. }) || root.body.len() < 2 {
        return Outcome::Nothing;
    }
    let on_cpu = matches!(plan.decision, Decision::Cpu { .. });
    let refuse = |why: String| {
        if on_cpu {
            Outcome::Refuse(format!("fission of `{}`: not applied: {why}", root.var))
        } else {
            Outcome::Nothing
        }
    };
    let facts = cx.facts(root, function);
    if !facts.obstacles.is_empty() || root.not_canonical.is_some() {
        return Outcome::Nothing;
    }
    let starts: Vec<usize> = match root.body.iter().map(start_line).collect::<Option<Vec<_>>>() {
        Some(s) if s.windows(2).all(|w| w[0] < w[1]) && s[0] > root.lines.0 => s,
        _ => return refuse("its statements do not each start a line of their own".into()),
    };
    let n = root.body.len();
    let part_of = |line: usize| starts.iter().rposition(|&s| s <= line);
    // Statements that must stay together: [first, last] intervals, merged below.
    let mut together: Vec<(usize, usize, String)> = Vec::new();
    for d in &facts.dependences {
        let (Some(a), Some(b)) = (part_of(d.lines.0), part_of(d.lines.1)) else {
            return Outcome::Nothing;
        };
        if a == b {
            continue;
        }
        let carried = d
            .distance
            .iter()
            .find(|(v, _)| *v == root.var)
            .map(|(_, e)| *e)
            .unwrap_or(None);
        // A dependence from a later statement to an earlier one, or of unknown direction.
        let backward = match carried {
            Some(0) => a > b,
            Some(x) if x > 0 => a > b,
            _ => true,
        };
        if backward {
            together.push((a.min(b), a.max(b), describe(d)));
        }
    }
    let names: Vec<BTreeSet<String>> = root.body.iter().map(scalars_named).collect();
    together.extend(scalars_binding(root, &facts, &names));
    let parts = parts_between(&together, n);
    if parts.len() < 2 {
        let why = together
            .iter()
            .map(|(_, _, w)| w.clone())
            .next()
            .unwrap_or_default();
        return refuse(format!(
            "its statements depend on each other across iterations in a cycle no split breaks ({why})"
        ));
    }
    // A part is parallel when no dependence inside it is carried by the loop.
    let carried_in = |(a, b): (usize, usize)| -> Option<String> {
        for d in &facts.dependences {
            let (Some(x), Some(y)) = (part_of(d.lines.0), part_of(d.lines.1)) else {
                continue;
            };
            if (a..=b).contains(&x) && (a..=b).contains(&y) && d.carried_by(&root.var) {
                return Some(describe(d));
            }
        }
        for (name, role) in &facts.scalars {
            if matches!(role, ScalarRole::Carried) && (a..=b).any(|k| names[k].contains(name)) {
                return Some(format!("the scalar `{name}` carries a value"));
            }
        }
        None
    };
    let kinds: Vec<Option<String>> = parts.iter().map(|&p| carried_in(p)).collect();
    if kinds.iter().all(|k| k.is_some()) {
        return refuse("every part would still carry a dependence on the loop".into());
    }
    // The text: the header and `{` on the first line, `}` alone on the last.
    let nest = match text::split(cx.file, root, 1) {
        Ok(n) => n,
        Err(why) => return refuse(why.to_string()),
    };
    let first_line = cx.file.original_line(root.lines.0);
    let last_line = cx.file.original_line(root.lines.1);
    if !nest.body_text().starts_with('{')
        || !first_line.trim_end().ends_with('{')
        || last_line.trim() != "}"
    {
        return refuse(
            "the loop's braces are not at the end of its first line and alone on its last".into(),
        );
    }
    let indent = nest.indent_at(0);
    let header = nest.header(0);
    let mut new_text = Vec::new();
    let mut expected = Vec::new();
    let mut offsets = Vec::new();
    let mut line_count = 0;
    for &(a, b) in &parts {
        offsets.push(line_count);
        let from = starts[a];
        let to = if b + 1 < n {
            starts[b + 1] - 1
        } else {
            root.lines.1 - 1
        };
        let mut lines = vec![format!("{indent}{header} {{")];
        lines.extend((from..=to).map(|l| cx.file.original_line(l).to_string()));
        lines.push(format!("{indent}}}"));
        line_count += lines.len();
        new_text.push(lines.join("\n"));
        expected.push(Stmt::For(Loop {
            body: root.body[a..=b].to_vec(),
            ..root.clone()
        }));
    }
    let summary = part_summary(&parts, &kinds, &starts, root);
    let note = format!(
        "fission: the loop `{}` (lines {}-{}) split into {} loops at its statements: {}; legal: no dependence goes from a later part back to an earlier one",
        root.var,
        root.lines.0,
        root.lines.1,
        parts.len(),
        summary.join(", ")
    );
    Outcome::Propose(Proposal {
        kind: "fission",
        function: function.name.clone(),
        lines: root.lines,
        text: new_text.join("\n"),
        expected,
        notes: offsets.into_iter().map(|o| (o, note.clone())).collect(),
    })
}

/// Scalars written in the body (not loop variables) bind the statements
/// naming them (`names`, per statement): their [first, last] intervals.
fn scalars_binding(
    root: &Loop,
    facts: &NestFacts,
    names: &[BTreeSet<String>],
) -> Vec<(usize, usize, String)> {
    let n = root.body.len();
    let mut together = Vec::new();
    let loop_vars: BTreeSet<&String> = facts.loops.keys().collect();
    let mut written = BTreeSet::new();
    walk(&root.body, &mut |s| match s {
        Stmt::Assign(a) if a.target.index.is_empty() => {
            written.insert(a.target.name.clone());
        }
        Stmt::Decl { name, .. } => {
            written.insert(name.clone());
        }
        _ => {}
    });
    for name in written.iter().filter(|n| !loop_vars.contains(n)) {
        let users: Vec<usize> = (0..n).filter(|&k| names[k].contains(name)).collect();
        if let (Some(&a), Some(&b)) = (users.first(), users.last()) {
            if a != b {
                together.push((a, b, format!("the scalar `{name}` is used by both")));
            }
        }
    }
    together
}

/// The parts of `n` statements: maximal runs not split by any interval of
/// `together`.
fn parts_between(together: &[(usize, usize, String)], n: usize) -> Vec<(usize, usize)> {
    let mut cut_allowed = vec![true; n]; // cut before statement k
    for (a, b, _) in together {
        for c in cut_allowed.iter_mut().take(*b + 1).skip(a + 1) {
            *c = false;
        }
    }
    let mut parts: Vec<(usize, usize)> = Vec::new();
    for (k, &cut) in cut_allowed.iter().enumerate() {
        if k == 0 || cut {
            parts.push((k, k));
        } else if let Some(last) = parts.last_mut() {
            last.1 = k;
        }
    }
    parts
}

/// Each part's lines (`starts`: each statement's first line) and whether it
/// runs in parallel (`kinds`: what it carries), for the report.
fn part_summary(
    parts: &[(usize, usize)],
    kinds: &[Option<String>],
    starts: &[usize],
    root: &Loop,
) -> Vec<String> {
    let n = root.body.len();
    parts
        .iter()
        .zip(kinds)
        .map(|(&(a, b), k)| {
            let lines = if a == b {
                format!("line {}", starts[a])
            } else {
                format!(
                    "lines {}-{}",
                    starts[a],
                    if b + 1 < n {
                        starts[b + 1] - 1
                    } else {
                        root.lines.1 - 1
                    }
                )
            };
            match k {
                None => format!("{lines} (parallel)"),
                Some(why) => format!("{lines} (sequential: {why})"),
            }
        })
        .collect()
}

/// Every variable a statement reads or writes, array bases included: a
/// pointer swapped in one statement (`a = b;`) is the base another statement
/// indexes (`a[i]`), so the two must stay in one loop.
fn scalars_named(s: &Stmt) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let expr = |e: &Expr, out: &mut BTreeSet<String>| {
        e.visit(&mut |x| {
            if let Expr::Load(r) = x {
                out.insert(r.name.clone());
            }
        })
    };
    walk(std::slice::from_ref(s), &mut |st| match st {
        Stmt::Assign(a) => {
            out.insert(a.target.name.clone());
            a.target.index.iter().for_each(|e| expr(e, &mut out));
            expr(&a.value, &mut out);
        }
        Stmt::Decl { name, init, .. } => {
            out.insert(name.clone());
            if let Some(e) = init {
                expr(e, &mut out);
            }
        }
        Stmt::If { cond, .. } => expr(cond, &mut out),
        Stmt::Eval { expr: e, .. } => expr(e, &mut out),
        Stmt::For(l) => {
            expr(&l.lower, &mut out);
            expr(&l.upper, &mut out);
        }
        _ => {}
    });
    out
}
