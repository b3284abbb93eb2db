//! Normalisation to unit stride from zero: a parallel loop
//! `for (int i = lo; i < hi; i += s)` with `s > 1` becomes
//! `for (int i = 0; i < (hi - lo + s - 1) / s; i++)` with `i` replaced by
//! `(lo + s * i)` in the rest of the nest — the generated OpenCL kernel maps
//! only unit-stride loops onto work-items. Always legal (the same iterations
//! in the same order); refused when the bounds could change inside the nest or
//! the variable is read after it ([`crate::map::liveness`]). A non-zero start with unit stride needs no
//! rewrite: kernels offset their index by the lower bound.

use super::{parallel_loops, perfect_chain, text, wrap, Cx, Outcome, Proposal};
use crate::front::c::loops::{BinOp, Expr, Function, Loop, Stmt};
use crate::map::liveness::LiveAfter;
use crate::map::nest::NestPlan;
use crate::map::syntax::{substitute_body, walk};

/// Considers the parallel loops of a mapped nest.
pub fn consider(cx: &Cx, plan: &NestPlan, root: &Loop, function: &Function) -> Outcome {
    let band = parallel_loops(plan, root);
    let chain = perfect_chain(root, band.len().max(1));
    let Some(level) = chain
        .iter()
        .take(band.len())
        .position(|l| l.step > 1 && l.not_canonical.is_none())
    else {
        return Outcome::Nothing;
    };
    let l = chain[level];
    let (v, s) = (l.var.as_str(), l.step);
    let what = format!("normalisation of `{v}` (step {s})");
    // The new loop declares its own `v`: the outer one keeps its old value.
    if !l.declared && LiveAfter::new(root, function, cx.unit, cx.file).reads(v) {
        return Outcome::Refuse(format!(
            "{what}: not applied: `{v}` is declared outside the loop and read after the nest, where its value would change"
        ));
    }
    let facts = cx.facts(root, function);
    for name in facts.scalars.keys() {
        if super::mentions(&l.lower, name) || super::mentions(&l.upper, name) {
            return Outcome::Refuse(format!(
                "{what}: not applied: its bounds read `{name}`, which the nest writes"
            ));
        }
    }
    let mut shadowed = false;
    walk(&l.body, &mut |st| match st {
        Stmt::Decl { name, .. } if name == v => shadowed = true,
        Stmt::For(inner) if inner.var == v => shadowed = true,
        _ => {}
    });
    if shadowed {
        return Outcome::Refuse(format!(
            "{what}: not applied: the body declares another `{v}`"
        ));
    }
    let nest = match text::split(cx.file, root, level + 1) {
        Ok(n) => n,
        Err(why) => return Outcome::Refuse(format!("{what}: not applied: {why}")),
    };
    let header = nest.header(level);
    let parsed = text::clauses(header).and_then(|(init, cond, _)| {
        let (declared, lo) = init.split_once('=')?;
        let ty = declared.trim().strip_suffix(v)?.trim().to_string();
        let rest = cond.strip_prefix(v)?.trim_start();
        let (inclusive, hi) = match rest.strip_prefix("<=") {
            Some(hi) => (true, hi),
            None => (false, rest.strip_prefix('<')?),
        };
        // `for (i = lo; ...)` over a dead outer `i`: the new loop declares
        // one of the same type.
        let ty = match ty.is_empty() {
            false => ty,
            true => function.vars.get(v).filter(|_| !l.declared)?.elem.clone(),
        };
        Some((ty, lo.trim().to_string(), inclusive, hi.trim().to_string()))
    });
    let Some((ty, lo, inclusive, hi)) = parsed else {
        return Outcome::Refuse(format!(
            "{what}: not applied: its header is not `for (T {v} = lo; {v} < hi; ...)`"
        ));
    };
    // The bound as the loop IR holds it (`<=` gives `hi + 1`).
    let hi_expr = if inclusive {
        match &l.upper {
            Expr::Bin(BinOp::Add, b, one) if **one == Expr::Int(1) => (**b).clone(),
            _ => return Outcome::Nothing,
        }
    } else {
        l.upper.clone()
    };
    let add = if inclusive { s } else { s - 1 };
    let trip = format!(
        "({} - {} + {add}) / {s}",
        text::paren(&hi),
        text::paren(&lo)
    );
    let new_header = format!("for ({ty} {v} = 0; {v} < {trip}; {v}++)");
    let zero_start = l.lower == Expr::Int(0);
    let by_text = if zero_start {
        format!("({s} * {v})")
    } else {
        format!("({} + {s} * {v})", text::paren(&lo))
    };
    let scaled = Expr::Bin(BinOp::Mul, Box::new(Expr::Int(s)), Box::new(Expr::var(v)));
    let by_expr = if zero_start {
        scaled
    } else {
        Expr::Bin(BinOp::Add, Box::new(l.lower.clone()), Box::new(scaled))
    };
    let h = &nest.headers[level];
    let new_text = format!(
        "{}{new_header}{}",
        &nest.text[..h.start],
        text::substitute(&nest.text[h.end..], v, &by_text)
    );
    let upper = Expr::Bin(
        BinOp::Div,
        Box::new(Expr::Bin(
            BinOp::Add,
            Box::new(Expr::Bin(
                BinOp::Sub,
                Box::new(hi_expr),
                Box::new(l.lower.clone()),
            )),
            Box::new(Expr::Int(add)),
        )),
        Box::new(Expr::Int(s)),
    );
    let normalised = Loop {
        lower: Expr::Int(0),
        upper,
        step: 1,
        descending: false,
        body: substitute_body(&l.body, v, &by_expr),
        declared: true,
        ..l.clone()
    };
    let expected = if level == 0 {
        normalised
    } else {
        wrap(&chain[..level], vec![Stmt::For(normalised)])
    };
    let note = format!(
        "normalisation: `{v}` ran from {lo} by {s}; now from 0 by 1 over {trip} iterations, with `{v}` read as `{by_text}` in the body (the kernel maps unit-stride loops onto work-items)"
    );
    Outcome::Propose(Proposal {
        kind: "normalisation",
        function: function.name.clone(),
        lines: root.lines,
        text: new_text,
        expected: vec![Stmt::For(expected)],
        notes: vec![(0, note)],
    })
}
