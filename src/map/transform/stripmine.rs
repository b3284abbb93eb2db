//! Strip-mining for the iteration-size criterion (eq. 3): when the outermost
//! parallel loop of a mapped nest needs more thread blocks than the grid
//! allows, it is split into strips, `for (ii = lo; ii < hi; ii += S)` around
//! `for (i = ii; i < (ii + S < hi ? ii + S : hi); i++)`. The strip loop runs
//! on the host (the analysis cannot pin its distances, so it is an iterate)
//! and each strip's nest fits the grid. Always legal: the iterations keep
//! their order.

use super::{parallel_loops, perfect_chain, text, Cx, Outcome, Proposal};
use crate::front::c::loops::{BinOp, Expr, Function, Loop, Stmt};
use crate::map::criteria::{block_shape, GRID_X, GRID_YZ};
use crate::map::{constant, NestPlan};

/// Considers a mapped nest that fails eq. 3.
pub fn consider(cx: &Cx, plan: &NestPlan, root: &Loop, function: &Function) -> Outcome {
    let band = parallel_loops(plan, root);
    let fails = plan
        .criteria
        .iter()
        .any(|c| c.name.starts_with("iteration sizes") && !c.pass);
    if band.is_empty() || !fails {
        return Outcome::Nothing;
    }
    let chain = perfect_chain(root, band.len());
    let shape = block_shape(band.len());
    let mut over = None;
    for (k, l) in chain.iter().enumerate() {
        let limit = if k + 1 == band.len() { GRID_X } else { GRID_YZ };
        if let (Some(lo), Some(hi)) = (constant(&l.lower), constant(&l.upper)) {
            let trip = ceil_div((hi - lo).max(0), l.step.max(1));
            if ceil_div(trip, shape[k]) > limit {
                over = Some((k, trip, limit));
                break;
            }
        }
    }
    let Some((k, trip, limit)) = over else {
        return Outcome::Nothing;
    };
    let l = chain[k];
    let v = l.var.as_str();
    let what = format!(
        "strip-mining of `{v}` ({trip} iterations, over the grid's {limit} blocks of {})",
        shape[k]
    );
    if k != 0 {
        return Outcome::Refuse(format!(
            "{what}: not applied: only the outermost parallel loop is strip-mined (its strips then run one after the other)"
        ));
    }
    if l.step != 1 || !l.declared || l.not_canonical.is_some() {
        return Outcome::Refuse(format!(
            "{what}: not applied: the loop must have unit stride and declare `{v}` in its `for`"
        ));
    }
    // The largest power of two whose blocks fit the grid.
    let most = limit.saturating_mul(shape[k]);
    let mut strip: i64 = 1;
    while strip * 2 <= most {
        strip *= 2;
    }
    let strips = if function.vars.contains_key(&format!("{v}{v}")) {
        format!("{v}_strip")
    } else {
        format!("{v}{v}")
    };
    let nest = match text::split(cx.file, root, 1) {
        Ok(n) => n,
        Err(why) => return Outcome::Refuse(format!("{what}: not applied: {why}")),
    };
    let parsed = text::clauses(nest.header(0)).and_then(|(init, cond, _)| {
        let (declared, lo) = init.split_once('=')?;
        let ty = declared.trim().strip_suffix(v)?.trim().to_string();
        let hi = cond.strip_prefix(v)?.trim_start().strip_prefix('<')?;
        (!ty.is_empty() && !hi.starts_with('='))
            .then(|| (ty, lo.trim().to_string(), hi.trim().to_string()))
    });
    let Some((ty, lo, hi)) = parsed else {
        return Outcome::Refuse(format!(
            "{what}: not applied: its header is not `for (T {v} = lo; {v} < hi; {v}++)`"
        ));
    };
    let indent = nest.indent_at(0);
    let h = &nest.headers[0];
    let hi_text = text::paren(&hi);
    let new_text = format!(
        "{}for ({ty} {strips} = {lo}; {strips} < {hi}; {strips} += {strip})\n{indent}    for ({ty} {v} = {strips}; {v} < ({strips} + {strip} < {hi_text} ? {strips} + {strip} : {hi_text}); {v}++){}",
        &nest.text[..h.start],
        &nest.text[h.end..]
    );
    let end = Expr::Bin(
        BinOp::Add,
        Box::new(Expr::var(&strips)),
        Box::new(Expr::Int(strip)),
    );
    let inner = Loop {
        lower: Expr::var(&strips),
        upper: Expr::Cond(
            Box::new(Expr::Bin(
                BinOp::Lt,
                Box::new(end.clone()),
                Box::new(l.upper.clone()),
            )),
            Box::new(end),
            Box::new(l.upper.clone()),
        ),
        ..l.clone()
    };
    let outer = Loop {
        var: strips.clone(),
        step: strip,
        body: vec![Stmt::For(inner)],
        ..l.clone()
    };
    let note = format!(
        "strip-mining: `{v}` ({trip} iterations) needs {} blocks of {} where the grid allows {limit}; split into strips of {strip} (`{strips}`), which run one after the other, each within the grid (at most {} blocks)",
        ceil_div(trip, shape[k]),
        shape[k],
        strip / shape[k]
    );
    Outcome::Propose(Proposal {
        kind: "strip-mining",
        function: function.name.clone(),
        lines: root.lines,
        text: new_text,
        expected: vec![Stmt::For(outer)],
        notes: vec![(0, note)],
    })
}

fn ceil_div(a: i64, b: i64) -> i64 {
    a / b + i64::from(a % b != 0)
}
