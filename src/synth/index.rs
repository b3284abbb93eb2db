//! The index search: the smallest expression equal to the profiled slot in one
//! dimension of the shared array on every row that has a slot
//! ([`synthesize_index`]); when none is, the one right on the most of them
//! (for the access search, whose guard then selects the rows it serves).

use std::ops::ControlFlow;
use std::time::Instant;

use super::arith::Expr;
use super::enumerate::{Generator, Pick};
use super::order::order_variables;
use super::passes::{passes, written_before};
use super::print::expr_to_cuda;
use super::table::AccessProfile;
use super::{Bounds, Closest, Found, NotFound, Pass, SearchStats};

/// Runs `visit` on expressions smallest first; at each size, pass by pass
/// ([`super::passes`]: the most correlated variables first, `order` being the
/// search order), skipping what an earlier pass tested. Counts the tests and
/// stops at the deadline.
pub(crate) fn search(
    order: &[usize],
    shared_dims: &[i64],
    bounds: &Bounds,
    max_size: usize,
    deadline: Instant,
    stats: &mut SearchStats,
    visit: &mut Visitor,
) -> ControlFlow<()> {
    let specs = passes(order, bounds, shared_dims);
    let generators: Vec<Generator> = specs.iter().map(|spec| spec.generator(bounds)).collect();
    for size in 1..=max_size {
        stats.size_reached = stats.size_reached.max(size);
        for (p, generator) in generators.iter().enumerate() {
            generator.each_of_size(size, &mut |picks| {
                if written_before(&specs, p, generator, picks, None) {
                    return ControlFlow::Continue(());
                }
                stats.tested += 1;
                if stats.tested % 1024 == 0 && Instant::now() >= deadline {
                    stats.budget_exhausted = true;
                    return ControlFlow::Break(());
                }
                visit(generator, picks, specs[p].pass)
            })?;
        }
    }
    ControlFlow::Continue(())
}

/// What [`search`] calls with each expression: the generator, its picks and
/// the pass.
pub(crate) type Visitor<'a> = dyn FnMut(&Generator, &[Pick], Pass) -> ControlFlow<()> + 'a;

/// The rows with a slot: candidate values and the slot's index in `dim`.
pub(crate) fn slot_rows(profile: &AccessProfile, dim: usize) -> Vec<(&[i64], i64)> {
    profile
        .rows
        .iter()
        .filter_map(|r| {
            let slot = r.slot.as_ref()?;
            Some((&r.values[..], *slot.get(dim)?))
        })
        .collect()
}

/// Mismatches of an expression on the rows, counted up to `limit + 1`, rows
/// that reject being moved to the front so the next candidate meets them first.
fn mismatches(
    generator: &Generator,
    picks: &[Pick],
    rows: &[(&[i64], i64)],
    order: &mut [usize],
    limit: usize,
) -> usize {
    let mut wrong = 0;
    for at in 0..order.len() {
        let (values, target) = rows[order[at]];
        if generator.eval(picks, values) != target {
            wrong += 1;
            // Move-to-front of the rejecting row, bounded to the first few.
            let to = at.min(wrong - 1);
            order[to..=at].rotate_right(1);
            if wrong > limit {
                break;
            }
        }
    }
    wrong
}

fn what(profile: &AccessProfile, dim: usize) -> String {
    format!("the index of dimension {dim} of `{}`", profile.shared)
}

/// The smallest expression equal to `slot[dim]` on every profiled row that has
/// a slot; `NotFound` names the bounds and the closest candidate.
pub fn synthesize_index(
    profile: &AccessProfile,
    dim: usize,
    bounds: &Bounds,
) -> Result<Found<Expr>, NotFound> {
    exact_index(profile, dim, bounds).map_err(|stats| {
        let closest = closest(profile, dim, bounds, bounds.max_covering_size);
        not_found(profile, dim, bounds, closest, stats)
    })
}

pub(crate) fn not_found(
    profile: &AccessProfile,
    dim: usize,
    bounds: &Bounds,
    closest: Option<(Expr, usize, SearchStats)>,
    stats: SearchStats,
) -> NotFound {
    NotFound {
        access: profile.access.clone(),
        what: what(profile, dim),
        bounds: bounds.describe(),
        closest: closest.map(|(expr, wrong, _)| {
            Box::new(Closest {
                text: expr_to_cuda(&expr, &profile.candidates),
                mismatches: wrong,
                rows: slot_rows(profile, dim).len(),
            })
        }),
        stats,
    }
}

/// The exact search, stopping at the first row where a candidate is wrong;
/// without a result, what it did.
pub(crate) fn exact_index(
    profile: &AccessProfile,
    dim: usize,
    bounds: &Bounds,
) -> Result<Found<Expr>, SearchStats> {
    let start = Instant::now();
    let rows = slot_rows(profile, dim);
    let targets: Vec<f64> = rows.iter().map(|&(_, t)| t as f64).collect();
    let values: Vec<&[i64]> = rows.iter().map(|&(v, _)| v).collect();
    let order = if values.is_empty() {
        (0..profile.candidates.len()).collect()
    } else {
        order_variables(
            profile.candidates.len(),
            &values,
            &targets,
            bounds.correlation_order,
        )
    };
    let mut row_order: Vec<usize> = (0..rows.len()).collect();
    let mut stats = SearchStats::default();
    let mut found = None;
    let _ = search(
        &order,
        &profile.shared_dims,
        bounds,
        bounds.max_size,
        start + bounds.time_budget,
        &mut stats,
        &mut |generator, picks, pass| {
            if mismatches(generator, picks, &rows, &mut row_order, 0) == 0 {
                found = Some((generator.expr(picks), pass));
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    stats.elapsed = start.elapsed();
    match found {
        Some((expr, pass)) => Ok(Found { expr, pass, stats }),
        None => Err(stats),
    }
}

/// The expression with the fewest mismatches against `slot[dim]` (the
/// smallest among equals) up to `max_size` units, its mismatch count and the
/// search's figures. Each candidate is counted only until it is worse than the
/// best so far, so this costs more per candidate than the exact search.
pub(crate) fn closest(
    profile: &AccessProfile,
    dim: usize,
    bounds: &Bounds,
    max_size: usize,
) -> Option<(Expr, usize, SearchStats)> {
    let start = Instant::now();
    let rows = slot_rows(profile, dim);
    if rows.is_empty() {
        return None;
    }
    let targets: Vec<f64> = rows.iter().map(|&(_, t)| t as f64).collect();
    let values: Vec<&[i64]> = rows.iter().map(|&(v, _)| v).collect();
    let order = order_variables(
        profile.candidates.len(),
        &values,
        &targets,
        bounds.correlation_order,
    );
    let mut row_order: Vec<usize> = (0..rows.len()).collect();
    let mut stats = SearchStats::default();
    let mut best: Option<(Expr, usize)> = None;
    let _ = search(
        &order,
        &profile.shared_dims,
        bounds,
        max_size,
        start + bounds.time_budget,
        &mut stats,
        &mut |generator, picks, _| {
            // Better is fewer mismatches, or as few and smaller (the second
            // pass may find a smaller one than the first).
            let size: usize = picks.iter().map(|&(_, t)| generator.size_of(t)).sum();
            let limit = match &best {
                None => rows.len(),
                Some((e, w)) if size < e.size() => *w,
                Some((_, w)) => w.saturating_sub(1),
            };
            let wrong = mismatches(generator, picks, &rows, &mut row_order, limit);
            if wrong <= limit {
                best = Some((generator.expr(picks), wrong));
                if wrong == 0 {
                    return ControlFlow::Break(());
                }
            }
            ControlFlow::Continue(())
        },
    );
    stats.elapsed = start.elapsed();
    best.map(|(e, w)| (e, w, stats))
}
