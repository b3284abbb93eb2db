//! The reference interpreter: defines what every program means.
//!
//! [`run`] follows the semantics of docs/src/semantics.md: stencils in order each
//! iteration, parts and statements in order and in place; at the end of
//! iteration `k`, when `k` is a multiple of the check interval (or always when
//! there is no check), the reductions in order and then the check; then every
//! multi-level field rotates its buffers, and the iterate stops after its
//! maximum or once the check held.
//!
//! Each part is compiled once per run ([`compile`]): uniform values folded,
//! loops unrolled, the rest a list of typed vector operations that [`vm`] applies
//! to chunks of a row at a time; [`parallel`] spreads rows over threads. Arithmetic
//! is C's without fused multiply-add (`float` in f32, `double` in f64), with the
//! cases C leaves undefined defined in [`crate::ir::semantics`].
//!
//! Reductions `+` and `*` combine per-row partials (rows of the outermost axis;
//! in 1-D, runs of 256 points) in row order, parts in order, so the result
//! does not depend on the number of threads. `max` and `min` keep the first of
//! equal values and ignore NaN (`v > acc`, `v < acc`).
//!
//! [`Stepper`] runs the same compiled parts one at a time, for a driver that
//! acts between them (the MPI driver exchanges halos there).
//!
//! `RunSummary::stopped_by_check` is true when the check held (which ends the
//! iterate), even at the last allowed iteration.

mod compile;
mod fields;
mod parallel;
mod regs;
mod stepper;
mod vm;

pub use stepper::{combine_values, Stepper};

use std::time::Instant;

use crate::data::ProgressHook;
use crate::data::{check_inputs_in_place, ExecError, FieldState, ReadInPlace, RunSummary};
use crate::ir::env::{box_is_empty, RunEnv};
use crate::ir::semantics::with_elem;
use crate::ir::{Program, ReduceOp, Value};
use compile::Kernel;
use fields::FieldViews;
use regs::RegElem;
use vm::value_of;

/// A compiled part and the box of points it runs on.
struct Part {
    kernel: Kernel,
    bounds: Vec<(i64, i64)>,
}

/// Runs the whole iterate on `state`.
///
/// The inputs are checked first ([`check_inputs`]): `env` must come from
/// [`RunEnv::new`] for this program, every access must stay inside its grid for
/// these values, and `state` must have, per field, one buffer per time level of
/// the field's type and grid size (as [`FieldState::initial`] builds it).
pub fn run(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
) -> Result<RunSummary, ExecError> {
    run_observed(program, env, state, None)
}

/// [`run`], telling `progress` after each iteration.
pub fn run_observed(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    progress: Option<&ProgressHook>,
) -> Result<RunSummary, ExecError> {
    run_in_place(program, env, state, progress, None)
}

/// [`run_observed`], reading the inputs of `read_in_place` where the caller
/// holds them (see [`ReadInPlace`]).
pub fn run_in_place(
    program: &Program,
    env: &RunEnv,
    state: &mut FieldState,
    progress: Option<&ProgressHook>,
    read_in_place: Option<&ReadInPlace>,
) -> Result<RunSummary, ExecError> {
    check_inputs_in_place(program, env, state, read_in_place)?;
    let start = Instant::now();
    let mut summary = RunSummary::default();
    let Some(iterate) = &program.iterate else {
        return Ok(summary);
    };
    let non_empty = |subset: &crate::ir::Subset| {
        let bounds = env.subset_box(subset);
        if !(1..=3).contains(&bounds.len()) {
            return Err(ExecError::Failed(format!(
                "a subset of program `{}` has {} dimensions; subsets have 1 to 3, like grids",
                program.name,
                bounds.len()
            )));
        }
        Ok((!box_is_empty(&bounds)).then_some(bounds))
    };
    let mut stencils = Vec::with_capacity(iterate.stencils.len());
    for (s, stencil) in iterate.stencils.iter().enumerate() {
        let mut parts = Vec::new();
        for (p, part) in stencil.parts.iter().enumerate() {
            if let Some(bounds) = non_empty(&part.subset)? {
                let kernel = compile::stencil_part(program, env, s, p)?;
                parts.push(Part { kernel, bounds });
            }
        }
        stencils.push(parts);
    }
    let mut reductions = Vec::with_capacity(iterate.reductions.len());
    for (r, reduction) in iterate.reductions.iter().enumerate() {
        let mut parts = Vec::new();
        for (p, part) in reduction.parts.iter().enumerate() {
            if let Some(bounds) = non_empty(&part.subset)? {
                let kernel = compile::reduction_part(program, env, r, p)?;
                parts.push(Part { kernel, bounds });
            }
        }
        reductions.push(parts);
    }

    let mut last: Vec<Option<Value>> = vec![None; iterate.reductions.len()];
    for k in 1..=env.max_iters() {
        let views = FieldViews::new(program, env.grid_dims(), state, read_in_place);
        for parts in &stencils {
            for part in parts {
                parallel::run_stencil_part(&part.kernel, &part.bounds, &views);
            }
        }
        let checked = env.every().is_none_or(|every| k % every == 0);
        let mut stop = false;
        if checked {
            let values: Vec<Value> = iterate
                .reductions
                .iter()
                .zip(&reductions)
                .map(|(r, parts)| with_elem!(r.ty, T => reduce::<T>(r.op, parts, &views)))
                .collect();
            if let Some(check) = &iterate.check {
                stop = env
                    .eval_with(&check.cond, &program.tables, &[], &values)
                    .is_true();
            }
            for (slot, v) in last.iter_mut().zip(values) {
                *slot = Some(v);
            }
        }
        drop(views);
        state.rotate();
        summary.iterations = k;
        if let Some(progress) = progress {
            progress.tell(k, env.max_iters())?;
        }
        if stop {
            summary.stopped_by_check = true;
            break;
        }
    }
    summary.reductions = iterate
        .reductions
        .iter()
        .zip(last)
        .map(|(r, v)| (r.name.clone(), v))
        .collect();
    summary.times.compute = start.elapsed();
    Ok(summary)
}

/// One reduction over all its parts: per-row partials combined in order.
fn reduce<T: RegElem>(op: ReduceOp, parts: &[Part], views: &FieldViews) -> Value {
    let combine = move |acc: T, v: T| stepper::combine(op, acc, v);
    let identity = T::from_value(op.identity(T::TY));
    let mut total = identity;
    for part in parts {
        let partials =
            parallel::run_reduction_part::<T>(&part.kernel, &part.bounds, views, identity, combine);
        for p in partials {
            total = combine(total, p);
        }
    }
    value_of(total)
}
