//! Do accesses stay inside their grids and tables?
//!
//! Writes must land inside the grid; reads of a `boundary none` field must too
//! (other boundary modes define reads outside); table indices must be inside
//! the table. [`static_bounds`] reports what the subset bounds prove wrong for
//! every parameter value (affine reasoning, no values needed); [`check_run_time`]
//! decides every case once the values are known, before anything runs. The
//! run-time check also refuses a part whose points would write the same element
//! (several offsets into a time level that the part writes), since its result
//! would depend on the order of the points.

use crate::analysis::access::{
    iterate_accesses, loops_used, AccessKind, GridAccess, LoopRange, PartAccesses, PartId,
    TableAccess,
};
use crate::analysis::affine::{Affine, LowerBounds, Var};
use crate::analysis::text::{atom, axis_name, expr_text, ref_text};
use crate::diag::Diagnostic;
use crate::ir::env::{box_is_empty, RunEnv};
use crate::ir::{BoundaryMode, Expr, Local, LocalId, Program, Subset, Value};

/// The most loop-variable combinations the run-time check enumerates for one
/// offset or index (loops in stencils are short; this only bounds the work).
const MAX_COMBINATIONS: u128 = 1 << 22;

/// The locals of a part (for names and for evaluating offsets).
pub(crate) fn part_locals(program: &Program, id: PartId) -> &[Local] {
    match (id, &program.iterate) {
        (PartId::Stencil { stencil, part }, Some(it)) => &it.stencils[stencil].parts[part].locals,
        _ => &[],
    }
}

fn verb(kind: AccessKind) -> &'static str {
    match kind {
        AccessKind::Load => "reads",
        AccessKind::Store => "writes",
    }
}

fn must_stay_inside(program: &Program, access: &GridAccess) -> bool {
    access.kind == AccessKind::Store
        || program.fields[access.target.field.0].boundary == BoundaryMode::None
}

fn help_for(program: &Program, access: &GridAccess) -> String {
    let field = &program.fields[access.target.field.0].name;
    match access.kind {
        AccessKind::Load => format!(
            "narrow this part's subset so that every point's neighbours lie inside the grid, \
             or declare `{field}` with a boundary mode (`boundary clamp`, `mirror`, `periodic` or `zero`)"
        ),
        AccessKind::Store => "narrow this part's subset or change the offset so that every written \
             element lies inside the grid (boundary modes apply to reads only)"
            .to_string(),
    }
}

/// `the last column (n-1 = 9)` style text for an axis of size `dim`.
fn last_text(program: &Program, dim: &Expr, value: Option<i64>) -> String {
    let t = expr_text(program, &[], dim);
    let is_number = t.chars().all(|c| c.is_ascii_digit());
    match value {
        _ if is_number => format!("{}", t.parse::<i64>().unwrap_or(1) - 1),
        Some(n) => format!("{}-1 = {}", atom(program, &[], dim), n - 1),
        None => format!("{}-1", atom(program, &[], dim)),
    }
}

fn witness_text(locals: &[Local], at: &[(LocalId, i64)]) -> String {
    if at.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = at
        .iter()
        .map(|(l, v)| format!("{} = {v}", locals.get(l.0).map_or("?", |l| l.name.as_str())))
        .collect();
    format!(" (at {})", parts.join(", "))
}

/// The primary span for an access leaving the grid along `axis`: the offset if
/// the user wrote one, else the whole reference.
fn offset_span(access: &GridAccess, axis: usize) -> crate::source::Span {
    let span = access.target.offset[axis].span;
    if span.start < span.end {
        span
    } else {
        access.span
    }
}

// ---------------------------------------------------------------------------
// Static: provable for every parameter value.

/// Accesses that leave their grid (or table) for every parameter value, from
/// affine forms of the subset bounds, offsets and grid sizes.
pub fn static_bounds(program: &Program) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for part in iterate_accesses(program) {
        let locals = part_locals(program, part.id);
        let ranges: Vec<Option<(Affine, Affine)>> = part
            .subset
            .ranges
            .iter()
            .map(|(lo, hi)| Some((Affine::of_expr(program, lo)?, Affine::of_expr(program, hi)?)))
            .collect();
        // A subset that is empty whatever the parameters runs nothing.
        let provably_empty = ranges.iter().flatten().any(|(lo, hi)| {
            hi.sub(lo)
                .and_then(|d| d.as_constant())
                .is_some_and(|d| d < 0)
        });
        if provably_empty {
            continue;
        }
        for access in &part.grids {
            if access.loops.iter().any(|r| r.hi < r.lo) || !must_stay_inside(program, access) {
                continue;
            }
            if let Some(d) = static_grid_access(program, locals, &part, &ranges, access) {
                out.push(d);
            }
        }
        for access in &part.tables {
            if access.loops.iter().any(|r| r.hi < r.lo) {
                continue;
            }
            out.extend(static_table_access(program, locals, access));
        }
    }
    out
}

fn static_grid_access(
    program: &Program,
    locals: &[Local],
    part: &PartAccesses,
    ranges: &[Option<(Affine, Affine)>],
    access: &GridAccess,
) -> Option<Diagnostic> {
    let field = program.fields.get(access.target.field.0)?;
    let grid = program.grids.get(field.grid.0)?;
    if grid.rank() != access.target.offset.len() || grid.rank() != ranges.len() {
        return None;
    }
    let facts = run_facts(program, ranges);
    for (axis, range) in ranges.iter().enumerate() {
        let Some((lo, hi)) = range else {
            continue;
        };
        let offset_expr = &access.target.offset[axis];
        let Some(offset) = Affine::of_expr(program, offset_expr) else {
            continue;
        };
        let Some((omin, omax)) = offset.loop_extremes(&access.loops) else {
            continue;
        };
        let axis_n = axis_name(grid.rank(), axis);
        let reference = ref_text(program, locals, access.target);
        let (bound_lo, bound_hi) = &part.subset.ranges[axis];
        let off = atom(program, locals, offset_expr);
        let reach_lo = lo.add(&omin);
        let before_first = reach_lo
            .as_ref()
            .and_then(|f| f.scale(-1))
            .and_then(|f| facts.minimum(&f));
        if let Some(before) = before_first.filter(|&b| b > 0) {
            let v = match reach_lo.as_ref().and_then(|f| f.as_constant()) {
                Some(v) => format!("{v}"),
                None => format!("at most -{before}"),
            };
            let at = witness(&offset, &access.loops, false);
            return Some(
                    Diagnostic::error(
                        format!(
                            "`{reference}` {} {axis_n} {}+{off} = {v}{}, before the first {axis_n} (0), \
                             {}",
                            verb(access.kind),
                            atom(program, &[], bound_lo),
                            witness_text(locals, &at),
                            for_every(&reach_lo)
                        ),
                        offset_span(access, axis),
                    )
                    .with_label(format!("{} outside the grid of `{}`", verb(access.kind), field.name))
                    .with_secondary(bound_lo.span, format!("the subset starts at {axis_n} {}", atom(program, &[], bound_lo)))
                    .with_help(help_for(program, access)),
                );
        }
        let Some(dim) = Affine::of_expr(program, &grid.dims[axis]) else {
            continue;
        };
        let past_form = hi
            .add(&omax)
            .and_then(|f| f.sub(&dim))
            .and_then(|f| f.add(&Affine::constant(1)));
        let past = past_form.as_ref().and_then(|f| facts.minimum(f));
        if let Some(k) = past.filter(|&k| k > 0) {
            let k = match past_form.as_ref().and_then(|f| f.as_constant()) {
                Some(_) => format!("{k}"),
                None => format!("at least {k}"),
            };
            let at = witness(&offset, &access.loops, true);
            return Some(
                Diagnostic::error(
                    format!(
                        "`{reference}` {} {axis_n} {}+{off}{}, {k} past the last {axis_n} ({}), {}",
                        verb(access.kind),
                        atom(program, &[], bound_hi),
                        witness_text(locals, &at),
                        last_text(program, &grid.dims[axis], None),
                        for_every(&past_form)
                    ),
                    offset_span(access, axis),
                )
                .with_label(format!(
                    "{} outside the grid of `{}`",
                    verb(access.kind),
                    field.name
                ))
                .with_secondary(bound_hi.span, format!("the subset ends at this {axis_n}"))
                .with_help(help_for(program, access)),
            );
        }
    }
    None
}

/// What holds whenever a part runs: every grid size is at least 1 (every run
/// path refuses smaller sizes) and each axis of the part's subset has
/// `lo <= hi` (else the part computes nothing).
fn run_facts(program: &Program, ranges: &[Option<(Affine, Affine)>]) -> LowerBounds {
    let mut facts = LowerBounds::default();
    for dim in program.grids.iter().flat_map(|g| &g.dims) {
        if let Some(f) = Affine::of_expr(program, dim).and_then(|d| d.sub(&Affine::constant(1))) {
            facts.assume_non_negative(&f);
        }
    }
    for (lo, hi) in ranges.iter().flatten() {
        if let Some(extent) = hi.sub(lo) {
            facts.assume_non_negative(&extent);
        }
    }
    facts
}

/// How far a static proof reaches: every parameter value when the form was a
/// constant, else every value for which the part runs.
fn for_every(form: &Option<Affine>) -> &'static str {
    if form.as_ref().and_then(|f| f.as_constant()).is_some() {
        "for every value of the parameters"
    } else {
        "for every value of the parameters for which this part runs (grid sizes at least 1, \
         subset not empty)"
    }
}

/// The loop-variable values at which an affine offset is smallest (or largest).
fn witness(form: &Affine, loops: &[LoopRange], largest: bool) -> Vec<(LocalId, i64)> {
    loops
        .iter()
        .filter_map(|r| {
            let c = *form.terms.get(&Var::Loop(r.var))?;
            let up = (c > 0) == largest;
            Some((r.var, if up { r.hi } else { r.lo }))
        })
        .collect()
}

fn static_table_access(
    program: &Program,
    locals: &[Local],
    access: &TableAccess,
) -> Option<Diagnostic> {
    let table = program.tables.get(access.table.0)?;
    for (k, index) in access.index.iter().enumerate() {
        let n = *table.shape.get(k)? as i64;
        let (min, max) = Affine::of_expr(program, index)?.loop_extremes(&access.loops)?;
        let (Some(min), Some(max)) = (min.as_constant(), max.as_constant()) else {
            continue;
        };
        if let Some(v) = [min, max].into_iter().find(|&v| v < 0 || v >= n) {
            return Some(table_diag(program, locals, access, k, v, n));
        }
    }
    None
}

fn table_diag(
    program: &Program,
    locals: &[Local],
    access: &TableAccess,
    k: usize,
    v: i64,
    n: i64,
) -> Diagnostic {
    let table = &program.tables[access.table.0];
    let index = &access.index[k];
    let span = if index.span.start < index.span.end {
        index.span
    } else {
        access.span
    };
    Diagnostic::error(
        format!(
            "index `{}` of table `{}` reaches {v}, outside 0 to {} (its dimension {} has {n} entries)",
            expr_text(program, locals, index),
            table.name,
            n - 1,
            k + 1
        ),
        span,
    )
    .with_label("outside the table")
    .with_secondary(table.span, "the table is declared here")
    .with_help(format!(
        "keep every index of `{}` between 0 and its size minus 1: check the loop bounds and the index expression",
        table.name
    ))
}

// ---------------------------------------------------------------------------
// Run time: parameter values known.

/// The smallest and largest value of an integer expression over the loops it
/// uses, with the loop-variable values where each is reached.
pub(crate) struct Extremes {
    pub(crate) min: i64,
    min_at: Vec<(LocalId, i64)>,
    pub(crate) max: i64,
    max_at: Vec<(LocalId, i64)>,
}

pub(crate) fn extremes(
    program: &Program,
    env: &RunEnv,
    expr: &Expr,
    loops: &[LoopRange],
) -> Result<Extremes, u128> {
    let used = loops_used(expr, loops);
    let combos: u128 = used.iter().map(|r| (r.hi - r.lo + 1) as u128).product();
    if combos > MAX_COMBINATIONS {
        return Err(combos);
    }
    let n_locals = used.iter().map(|r| r.var.0 + 1).max().unwrap_or(0);
    let mut locals = vec![Value::Int(0); n_locals];
    let mut current: Vec<i64> = used.iter().map(|r| r.lo).collect();
    let mut best: Option<Extremes> = None;
    loop {
        for (r, &v) in used.iter().zip(&current) {
            locals[r.var.0] = Value::Int(v as i32);
        }
        let value = env.eval_with(expr, &program.tables, &locals, &[]).as_i64();
        let at = || {
            used.iter()
                .map(|r| r.var)
                .zip(current.iter().copied())
                .collect()
        };
        match &mut best {
            None => {
                best = Some(Extremes {
                    min: value,
                    min_at: at(),
                    max: value,
                    max_at: at(),
                })
            }
            Some(b) => {
                if value < b.min {
                    b.min = value;
                    b.min_at = at();
                }
                if value > b.max {
                    b.max = value;
                    b.max_at = at();
                }
            }
        }
        // Odometer over the used loops, innermost last.
        let mut k = used.len();
        loop {
            if k == 0 {
                return Ok(best.expect("the first combination was evaluated"));
            }
            k -= 1;
            if current[k] < used[k].hi {
                current[k] += 1;
                break;
            }
            current[k] = used[k].lo;
        }
    }
}

fn too_many(span: crate::source::Span, combos: u128) -> Diagnostic {
    Diagnostic::error(
        format!("this offset or index depends on {combos} combinations of loop variables, too many to check"),
        span,
    )
    .with_label("depends on the enclosing loops")
    .with_help("use shorter loops, or fewer loop variables in one offset")
}

/// Every access of the iterate checked against the grids and tables for the
/// parameter values in `env` (whose sizes must already be evaluated).
pub fn check_run_time(program: &Program, env: &RunEnv) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for part in iterate_accesses(program) {
        let locals = part_locals(program, part.id);
        let bounds = env.subset_box(part.subset);
        if box_is_empty(&bounds) {
            continue;
        }
        // Offsets per access (None: the access never runs, or could not be checked).
        let mut offsets: Vec<Option<Vec<Extremes>>> = Vec::new();
        for access in &part.grids {
            let checked = check_grid_access(program, env, locals, &part, &bounds, access);
            match checked {
                Ok(o) => offsets.push(o),
                Err(d) => {
                    out.push(d);
                    offsets.push(None);
                }
            }
        }
        out.extend(check_collisions(program, locals, &part, &offsets));
        for access in &part.tables {
            if access.loops.iter().any(|r| r.hi < r.lo) {
                continue;
            }
            let Some(table) = program.tables.get(access.table.0) else {
                continue;
            };
            for (k, index) in access.index.iter().enumerate() {
                let n = table.shape.get(k).copied().unwrap_or(0) as i64;
                match extremes(program, env, index, &access.loops) {
                    Err(combos) => out.push(too_many(index.span, combos)),
                    Ok(e) => {
                        if let Some(v) = [e.min, e.max].into_iter().find(|&v| v < 0 || v >= n) {
                            out.push(table_diag(program, locals, access, k, v, n));
                            break;
                        }
                    }
                }
            }
        }
    }
    out
}

fn check_grid_access(
    program: &Program,
    env: &RunEnv,
    locals: &[Local],
    part: &PartAccesses,
    bounds: &[(i64, i64)],
    access: &GridAccess,
) -> Result<Option<Vec<Extremes>>, Diagnostic> {
    if access.loops.iter().any(|r| r.hi < r.lo) {
        return Ok(None);
    }
    let field = &program.fields[access.target.field.0];
    let grid = &program.grids[field.grid.0];
    let dims = &env.grid_dims()[field.grid.0];
    if access.target.offset.len() != dims.len() || bounds.len() != dims.len() {
        return Err(Diagnostic::error(
            format!(
                "`{}` has {} offsets in a part of {} dimensions, but `{}` lives on a grid of {}",
                ref_text(program, locals, access.target),
                access.target.offset.len(),
                bounds.len(),
                field.name,
                dims.len()
            ),
            access.span,
        )
        .with_label("wrong number of offsets")
        .with_help(
            "give one offset per dimension of the field's grid, and use subsets of the same rank",
        ));
    }
    let mut per_axis = Vec::with_capacity(dims.len());
    for expr in &access.target.offset {
        match extremes(program, env, expr, &access.loops) {
            Ok(e) => per_axis.push(e),
            Err(combos) => return Err(too_many(expr.span, combos)),
        }
    }
    if !must_stay_inside(program, access) {
        return Ok(Some(per_axis));
    }
    let reference = ref_text(program, locals, access.target);
    for (axis, e) in per_axis.iter().enumerate() {
        let n = dims[axis] as i64;
        let (lo, hi) = bounds[axis];
        let axis_n = axis_name(dims.len(), axis);
        let (bound_lo, bound_hi) = &part.subset.ranges[axis];
        let offset_expr = &access.target.offset[axis];
        let off = atom(program, locals, offset_expr);
        let dim_expr = &grid.dims[axis];
        let low = lo + e.min;
        let high = hi + e.max;
        let (bound, bound_value, value, at, side) = if low < 0 {
            (
                bound_lo,
                lo,
                low,
                &e.min_at,
                format!("before the first {axis_n} (0)"),
            )
        } else if high > n - 1 {
            let last = last_text(program, dim_expr, Some(n));
            (
                bound_hi,
                hi,
                high,
                &e.max_at,
                format!("past the last {axis_n} ({last})"),
            )
        } else {
            continue;
        };
        let mut used = vec![bound, offset_expr];
        if value > n - 1 {
            used.push(dim_expr);
        }
        let params = env.describe_params(program, &used);
        return Err(Diagnostic::error(
            format!(
                "`{reference}` {} {axis_n} {}+{off} = {value}{}, {side}{params}",
                verb(access.kind),
                atom(program, &[], bound),
                witness_text(locals, at),
            ),
            offset_span(access, axis),
        )
        .with_label(format!(
            "{} outside the grid of `{}`",
            verb(access.kind),
            field.name
        ))
        .with_secondary(
            bound.span,
            format!("the subset reaches {axis_n} {bound_value}"),
        )
        .with_help(help_for(program, access)));
    }
    Ok(Some(per_axis))
}

/// Refuses a part whose points would touch the same element of a time level it
/// writes: each such level must be accessed at one offset only, so that the
/// points are independent (and the interpreter may run them in parallel).
fn check_collisions(
    program: &Program,
    locals: &[Local],
    part: &PartAccesses,
    offsets: &[Option<Vec<Extremes>>],
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for (s, store) in part.grids.iter().enumerate() {
        let key = (store.target.field, store.target.time);
        if store.kind != AccessKind::Store || seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let Some(store_off) = &offsets[s] else {
            continue;
        };
        let fixed = |o: &[Extremes]| -> Option<Vec<i64>> {
            o.iter()
                .map(|e| (e.min == e.max).then_some(e.min))
                .collect()
        };
        let level = format!(
            "[{}]{}",
            store.target.time, program.fields[store.target.field.0].name
        );
        let Some(reference) = fixed(store_off) else {
            out.push(
                Diagnostic::error(
                    format!(
                        "`{}` writes `{level}` at several offsets from each point, so points would overwrite each other's values",
                        ref_text(program, locals, store.target)
                    ),
                    store.span,
                )
                .with_label("the offset depends on a loop variable")
                .with_help("write each element from one point only: use a fixed offset in a store"),
            );
            continue;
        };
        for (a, other) in part.grids.iter().enumerate() {
            if a == s || (other.target.field, other.target.time) != key {
                continue;
            }
            let Some(other_off) = &offsets[a] else {
                continue;
            };
            if fixed(other_off).as_ref() == Some(&reference) {
                continue;
            }
            out.push(
                Diagnostic::error(
                    format!(
                        "`{}` and `{}` touch `{level}` at different offsets in one part, so the result would depend on the order of the points",
                        ref_text(program, locals, other.target),
                        ref_text(program, locals, store.target)
                    ),
                    other.span,
                )
                .with_label(format!("{} here", verb(other.kind)))
                .with_secondary(store.span, "written here")
                .with_help("access a time level that a part writes at one offset only, or move the other access to a separate stencil"),
            );
            break;
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Generated code: the conditions left for run time.

/// Which end of an axis a [`RunTimeBound`] guards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// `subset lo + smallest offset >= 0`.
    Start,
    /// `subset hi + largest offset <= size - 1`.
    End,
}

/// One access-axis condition that code generated without parameter values
/// (`compile`, `emit`) must check before computing: the [`static_bounds`]
/// analysis could neither prove it broken for every value (then the program is
/// refused) nor kept for every value (then no check is needed).
#[derive(Clone, Debug)]
pub struct RunTimeBound<'p> {
    /// The part whose access this is.
    pub part: PartId,
    /// The part's subset: the condition applies only when it is not empty.
    pub subset: &'p Subset,
    /// The grid the access indexes.
    pub grid: crate::ir::GridId,
    /// The axis (outermost first).
    pub axis: usize,
    /// Which end of the axis.
    pub side: Side,
    /// The offset along the axis, as written.
    pub offset: &'p Expr,
    /// The offset's smallest (at [`Side::Start`]) or largest (at [`Side::End`])
    /// value over its loops, when it is affine: a form of parameters only.
    pub extreme: Option<Affine>,
    /// The axes of the subset that may be empty for some parameter values
    /// (`lo <= hi` is tested for these only; the others always hold).
    pub may_be_empty: Vec<usize>,
    /// The loops the offset uses, over which a non-affine offset is checked.
    pub loops: Vec<LoopRange>,
    /// What goes wrong when the condition fails, for the message:
    /// "line 8: `[1]phi[0][0][Nx-1]` writes past the last column of `phi`".
    pub what: String,
}

/// The conditions that generated code checks from the actual parameter values
/// (see [`RunTimeBound`]), in program order: every write, and every read of a
/// `boundary none` field, on each axis and end that the affine analysis does
/// not prove inside the grid whenever the part runs.
pub fn run_time_bounds(program: &Program) -> Vec<RunTimeBound<'_>> {
    let mut out = Vec::new();
    for part in iterate_accesses(program) {
        let locals = part_locals(program, part.id);
        let ranges: Vec<Option<(Affine, Affine)>> = part
            .subset
            .ranges
            .iter()
            .map(|(lo, hi)| Some((Affine::of_expr(program, lo)?, Affine::of_expr(program, hi)?)))
            .collect();
        let facts = run_facts(program, &ranges);
        let sizes_only = run_facts(program, &[]);
        let may_be_empty: Vec<usize> = ranges
            .iter()
            .enumerate()
            .filter(|(_, range)| {
                let extent = range.as_ref().and_then(|(lo, hi)| hi.sub(lo));
                extent
                    .and_then(|e| e.as_constant().or_else(|| sizes_only.minimum(&e)))
                    .is_none_or(|e| e < 0)
            })
            .map(|(axis, _)| axis)
            .collect();
        for access in &part.grids {
            if access.loops.iter().any(|r| r.hi < r.lo) || !must_stay_inside(program, access) {
                continue;
            }
            let field = &program.fields[access.target.field.0];
            let grid = &program.grids[field.grid.0];
            if grid.rank() != access.target.offset.len() || grid.rank() != ranges.len() {
                continue;
            }
            let (line, _) = program.source.line_col(access.span.start as usize);
            for (axis, offset) in access.target.offset.iter().enumerate() {
                let extremes =
                    Affine::of_expr(program, offset).and_then(|o| o.loop_extremes(&access.loops));
                let range = ranges[axis].as_ref();
                let dim = Affine::of_expr(program, &grid.dims[axis]);
                for side in [Side::Start, Side::End] {
                    let extreme = extremes.as_ref().map(|(min, max)| match side {
                        Side::Start => min.clone(),
                        Side::End => max.clone(),
                    });
                    // The margin that must not be negative: `lo + min` at the
                    // start, `size - 1 - (hi + max)` at the end.
                    let margin = match (side, range, &extreme) {
                        (Side::Start, Some((lo, _)), Some(e)) => lo.add(e),
                        (Side::End, Some((_, hi)), Some(e)) => dim
                            .as_ref()
                            .and_then(|d| d.sub(hi))
                            .and_then(|f| f.sub(e))
                            .and_then(|f| f.add(&Affine::constant(-1))),
                        _ => None,
                    };
                    let proven_inside = margin
                        .as_ref()
                        .and_then(|m| m.as_constant().or_else(|| facts.minimum(m)))
                        .is_some_and(|m| m >= 0);
                    if proven_inside {
                        continue;
                    }
                    let end = match side {
                        Side::Start => "before the first",
                        Side::End => "past the last",
                    };
                    out.push(RunTimeBound {
                        part: part.id,
                        subset: part.subset,
                        grid: field.grid,
                        axis,
                        side,
                        offset,
                        extreme,
                        may_be_empty: may_be_empty.clone(),
                        loops: loops_used(offset, &access.loops),
                        what: format!(
                            "line {line}: `{}` {} {end} {} of `{}`",
                            ref_text(program, locals, access.target),
                            verb(access.kind),
                            axis_name(grid.rank(), axis),
                            field.name
                        ),
                    });
                }
            }
        }
    }
    out
}
