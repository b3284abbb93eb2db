//! The interpreter one part at a time, for drivers that act between parts.
//!
//! [`Stepper`] compiles every part once, like [`run`](super::run), and then
//! runs a stencil part, or folds a reduction part over boxes of points from
//! given seeds, when asked. The MPI driver (`exec::mpi`) exchanges halos
//! between parts and chains reduction folds across ranks with it; the
//! arithmetic is the interpreter's own, so a decomposed run computes every
//! point exactly as [`run`](super::run) does.

use crate::data::{check_inputs, ExecError, FieldState};
use crate::interp::compile::{self, Kernel};
use crate::interp::fields::FieldViews;
use crate::interp::parallel;
use crate::interp::regs::{Chunk, RegElem, Regs, CHUNK};
use crate::interp::vm::{fold_result, run_chunk, value_of};
use crate::ir::env::{box_is_empty, RunEnv};
use crate::ir::semantics::{with_elem, Elem};
use crate::ir::{Program, ReduceOp, Value};

/// A compiled stencil part and its box.
type CompiledPart = (Kernel, Vec<(i64, i64)>);

/// Every part of the iterate, compiled; `None` where the part's box is empty.
pub struct Stepper {
    stencils: Vec<Vec<Option<CompiledPart>>>,
    reductions: Vec<Vec<Option<Kernel>>>,
}

impl Stepper {
    /// Compiles the parts of `program` (none without an iterate) for `env`,
    /// after checking `state` and every access as [`run`](super::run) does.
    pub fn new(program: &Program, env: &RunEnv, state: &FieldState) -> Result<Stepper, ExecError> {
        check_inputs(program, env, state)?;
        let Some(iterate) = program.iterate.as_ref() else {
            return Ok(Stepper {
                stencils: Vec::new(),
                reductions: Vec::new(),
            });
        };
        let mut stencils = Vec::with_capacity(iterate.stencils.len());
        for (s, stencil) in iterate.stencils.iter().enumerate() {
            let mut parts = Vec::with_capacity(stencil.parts.len());
            for (p, part) in stencil.parts.iter().enumerate() {
                let bounds = env.subset_box(&part.subset);
                parts.push(if box_is_empty(&bounds) {
                    None
                } else {
                    Some((compile::stencil_part(program, env, s, p)?, bounds))
                });
            }
            stencils.push(parts);
        }
        let mut reductions = Vec::with_capacity(iterate.reductions.len());
        for (r, reduction) in iterate.reductions.iter().enumerate() {
            let mut parts = Vec::with_capacity(reduction.parts.len());
            for (p, part) in reduction.parts.iter().enumerate() {
                let bounds = env.subset_box(&part.subset);
                parts.push(if box_is_empty(&bounds) {
                    None
                } else {
                    Some(compile::reduction_part(program, env, r, p)?)
                });
            }
            reductions.push(parts);
        }
        Ok(Stepper {
            stencils,
            reductions,
        })
    }

    /// Runs part `part` of stencil `stencil` on its box (nothing if empty).
    pub fn run_stencil_part(
        &self,
        program: &Program,
        env: &RunEnv,
        state: &mut FieldState,
        stencil: usize,
        part: usize,
    ) {
        if let Some((kernel, bounds)) = &self.stencils[stencil][part] {
            let views = FieldViews::new(program, env.grid_dims(), state, None);
            parallel::run_stencil_part(kernel, bounds, &views);
        }
    }

    /// The box of part `part` of stencil `stencil`, if not empty.
    pub fn stencil_part_box(&self, stencil: usize, part: usize) -> Option<&[(i64, i64)]> {
        self.stencils[stencil][part]
            .as_ref()
            .map(|(_, b)| b.as_slice())
    }

    /// Runs part `part` of stencil `stencil` on `bounds`, a non-empty box
    /// inside the part's. The points of a part are independent (the
    /// front-end sees to it), so running its box piece by piece gives the
    /// same values as running it whole.
    pub fn run_stencil_part_on(
        &self,
        program: &Program,
        env: &RunEnv,
        state: &mut FieldState,
        (stencil, part): (usize, usize),
        bounds: &[(i64, i64)],
    ) {
        if let Some((kernel, _)) = &self.stencils[stencil][part] {
            let views = FieldViews::new(program, env.grid_dims(), state, None);
            parallel::run_stencil_part(kernel, bounds, &views);
        }
    }

    /// Folds part `part` of reduction `reduction` over each of `spans`: a
    /// non-empty box inside the part's box, walked in lexicographic order,
    /// starting from the span's seed (a value of the reduction's type). The
    /// interpreter folds each work item so; a span is the piece of one item
    /// that lies on this rank. Returns one accumulator per span.
    pub fn fold_reduction_part(
        &self,
        program: &Program,
        env: &RunEnv,
        state: &mut FieldState,
        reduction: usize,
        part: usize,
        spans: &[(Vec<(i64, i64)>, Value)],
    ) -> Vec<Value> {
        let Some(kernel) = &self.reductions[reduction][part] else {
            return spans.iter().map(|(_, seed)| *seed).collect();
        };
        let op = program.iterate.as_ref().expect("has an iterate").reductions[reduction].op;
        let ty = program.iterate.as_ref().expect("has an iterate").reductions[reduction].ty;
        let views = FieldViews::new(program, env.grid_dims(), state, None);
        with_elem!(ty, T => fold_spans::<T>(kernel, op, &views, spans))
    }
}

fn fold_spans<T: RegElem>(
    kernel: &Kernel,
    op: ReduceOp,
    views: &FieldViews,
    spans: &[(Vec<(i64, i64)>, Value)],
) -> Vec<Value> {
    let mut regs = Regs::for_kernel(kernel);
    spans
        .iter()
        .map(|(bounds, seed)| {
            let mut acc = T::from_value(*seed);
            for_each_row(bounds, |outer, xlo, xhi| {
                let mut x0 = xlo;
                while x0 <= xhi {
                    let len = ((xhi - x0 + 1) as usize).min(CHUNK);
                    let chunk = Chunk { outer, x0, len };
                    run_chunk(kernel, &mut regs, views, &chunk);
                    fold_result(kernel, &regs, len, &mut acc, |a, v| combine(op, a, v));
                    x0 += len as i64;
                }
            });
            value_of(acc)
        })
        .collect()
}

/// Calls `row` on each innermost row of the box, in lexicographic order.
fn for_each_row(bounds: &[(i64, i64)], mut row: impl FnMut([i64; 2], i64, i64)) {
    let (xlo, xhi) = bounds[bounds.len() - 1];
    match bounds.len() {
        1 => row([0, 0], xlo, xhi),
        2 => {
            for y in bounds[0].0..=bounds[0].1 {
                row([y, 0], xlo, xhi);
            }
        }
        _ => {
            for z in bounds[0].0..=bounds[0].1 {
                for y in bounds[1].0..=bounds[1].1 {
                    row([z, y], xlo, xhi);
                }
            }
        }
    }
}

/// One step of a reduction's fold, as the interpreter combines: `+` and `*`
/// in the element type; `max`/`min` ignore NaN and order -0.0 below +0.0, a
/// total order on the values they keep, so that every back-end's order of
/// combining gives the same result, sign of a zero included.
pub(crate) fn combine<T: RegElem>(op: ReduceOp, acc: T, v: T) -> T {
    // Of two equal values only zeros can differ, in their sign bits (`as_f64`
    // keeps the sign of a zero; integers of equal value have equal signs).
    let negative = |x: T| x.as_f64().is_sign_negative();
    match op {
        ReduceOp::Sum => T::add(acc, v),
        ReduceOp::Product => T::mul(acc, v),
        ReduceOp::Max => {
            if v > acc || (v == acc && negative(acc) && !negative(v)) {
                v
            } else {
                acc
            }
        }
        ReduceOp::Min => {
            if v < acc || (v == acc && negative(v) && !negative(acc)) {
                v
            } else {
                acc
            }
        }
    }
}

/// [`combine`] on values of the reduction's type `ty`.
pub fn combine_values(op: ReduceOp, acc: Value, v: Value) -> Value {
    with_elem!(acc.ty(), T => value_of(combine::<T>(op, T::from_value(acc), T::from_value(v))))
}
