//! Strip-mining and tiling for the iteration-size criterion (eq. 3): when a
//! parallel loop of a mapped nest needs more thread blocks than the grid
//! allows along its axis, it is split into strips, `for (jj = lo; jj < hi; jj
//! += S)` around `for (j = jj; j < (jj + S < hi ? jj + S : hi); j++)`. For the
//! outermost loop that is strip-mining; for an inner loop of the parallel band
//! the strip loop is also moved outside the band (tiling along that axis).
//! The strip loop runs on the host (the analysis cannot pin its distances, so
//! it is an iterate) and each strip's nest fits the grid.
//!
//! Legal because every loop of the band is parallel: no dependence has a
//! non-zero distance at a band level, so the band's iterations may run in any
//! order, and the loops inside the band keep theirs. The tiled loop's bounds
//! must not depend on the loops it moves across (a rectangular band), or the
//! strips would not cover the same iterations.

use super::{mentions, parallel_loops, perfect_chain, text, wrap, Cx, Outcome, Proposal};
use crate::front::c::fold::constant;
use crate::front::c::loops::{BinOp, Expr, Function, Loop, Stmt};
use crate::map::nest::NestPlan;
use crate::map::threads::{block_shape, GRID_X, GRID_YZ};

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
    let over = over_the_grid(&chain, &shape, band.len());
    let Some((k, trip, limit)) = over else {
        return Outcome::Nothing;
    };
    let l = chain[k];
    let v = l.var.as_str();
    let what = format!(
        "{} of `{v}` ({trip} iterations, over the grid's {limit} blocks of {})",
        if k == 0 { "strip-mining" } else { "tiling" },
        shape[k]
    );
    let across: Vec<&str> = chain[..k].iter().map(|o| o.var.as_str()).collect();
    if let Some(o) = across
        .iter()
        .find(|o| mentions(&l.lower, o) || mentions(&l.upper, o))
    {
        return Outcome::Refuse(format!(
            "{what}: not applied: the bounds of `{v}` depend on `{o}`, so its strips cannot move outside `{o}`"
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
    let nest = match text::split(cx.file, root, k + 1) {
        Ok(n) => n,
        Err(why) => return Outcome::Refuse(format!("{what}: not applied: {why}")),
    };
    let parsed = text::clauses(nest.header(k)).and_then(|(init, cond, _)| {
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
    let h = &nest.headers[k];
    let hi_text = text::paren(&hi);
    let strip_header = format!("for ({ty} {strips} = {lo}; {strips} < {hi}; {strips} += {strip})");
    let inner_header =
        format!("for ({ty} {v} = {strips}; {v} < ({strips} + {strip} < {hi_text} ? {strips} + {strip} : {hi_text}); {v}++)");
    let new_text = if k == 0 {
        format!(
            "{}{strip_header}\n{indent}    {inner_header}{}",
            &nest.text[..h.start],
            &nest.text[h.end..]
        )
    } else {
        // The strip loop goes around the whole band, which moves one level in.
        let tiled = format!(
            "{}{inner_header}{}",
            &nest.text[..h.start],
            &nest.text[h.end..]
        );
        let shifted: Vec<String> = tiled.lines().map(|line| format!("    {line}")).collect();
        format!("{indent}{strip_header}\n{}", shifted.join("\n"))
    };
    let outer = strip_loops(&chain, k, &strips, strip);
    let blocks = ceil_div(trip, shape[k]);
    let (kind, note) = if k == 0 {
        (
            "strip-mining",
            format!(
                "strip-mining: `{v}` ({trip} iterations) needs {blocks} blocks of {} where the grid allows {limit}; split into strips of {strip} (`{strips}`), which run one after the other, each within the grid (at most {} blocks)",
                shape[k],
                strip / shape[k]
            ),
        )
    } else {
        (
            "tiling",
            format!(
                "tiling: `{v}` ({trip} iterations) needs {blocks} blocks of {} where the grid allows {limit}; split into tiles of {strip} (`{strips}`), the tile loop moved outside {} (legal: no loop of the band carries a dependence), so the tiles run one after the other, each within the grid (at most {} blocks along `{v}`)",
                shape[k],
                across.iter().map(|o| format!("`{o}`")).collect::<Vec<_>>().join(", "),
                strip / shape[k]
            ),
        )
    };
    Outcome::Propose(Proposal {
        kind,
        function: function.name.clone(),
        lines: root.lines,
        text: new_text,
        expected: vec![Stmt::For(outer)],
        notes: vec![(0, note)],
    })
}

/// The first loop of the band of `band_len` loops (index, iterations, the
/// grid's limit) whose blocks do not fit the grid, when its bounds are constants.
fn over_the_grid(chain: &[&Loop], shape: &[i64], band_len: usize) -> Option<(usize, i64, i64)> {
    for (k, l) in chain.iter().enumerate() {
        let limit = if k + 1 == band_len { GRID_X } else { GRID_YZ };
        if let (Some(lo), Some(hi)) = (constant(&l.lower), constant(&l.upper)) {
            let trip = ceil_div((hi - lo).max(0), l.step.max(1));
            if ceil_div(trip, shape[k]) > limit {
                return Some((k, trip, limit));
            }
        }
    }
    None
}

/// The loops the transformed text should parse to: `strips` stepping by
/// `strip` around the band, with loop `k` of `chain` running one strip.
fn strip_loops(chain: &[&Loop], k: usize, strips: &str, strip: i64) -> Loop {
    let l = chain[k];
    let end = Expr::Bin(
        BinOp::Add,
        Box::new(Expr::var(strips)),
        Box::new(Expr::Int(strip)),
    );
    let inner = Loop {
        lower: Expr::var(strips),
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
    let band_text = if k == 0 {
        Stmt::For(inner)
    } else {
        let mut loops: Vec<&Loop> = chain[..k].to_vec();
        loops.push(&inner);
        Stmt::For(wrap(&loops, l.body.clone()))
    };
    Loop {
        var: strips.to_string(),
        step: strip,
        descending: false,
        body: vec![band_text],
        ..l.clone()
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    a / b + i64::from(a % b != 0)
}
