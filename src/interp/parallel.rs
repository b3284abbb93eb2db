//! Splitting a part's points into work for the thread pool.
//!
//! Work items are the rows of the outermost axis (in 1-D, runs of [`CHUNK`]
//! points); rayon runs them in parallel, each walking its points in
//! lexicographic order, chunk by chunk. Reduction partials are kept per work
//! item and combined in item order, so the result does not depend on the
//! number of threads.

use rayon::prelude::*;

use crate::interp::compile::Kernel;
use crate::interp::fields::FieldViews;
use crate::interp::regs::{Chunk, RegElem, Regs, CHUNK};
use crate::interp::vm::{fold_result, run_chunk};

/// Number of work items of a non-empty box.
fn item_count(bounds: &[(i64, i64)]) -> i64 {
    let (lo, hi) = bounds[0];
    if bounds.len() == 1 {
        (hi - lo + 1 + CHUNK as i64 - 1) / CHUNK as i64
    } else {
        hi - lo + 1
    }
}

/// Calls `f` on each chunk of work item `item`, in lexicographic order.
fn for_each_chunk(bounds: &[(i64, i64)], item: i64, mut f: impl FnMut(&Chunk)) {
    let rank = bounds.len();
    let (xlo, xhi) = bounds[rank - 1];
    let mut row = |outer: [i64; 2], from: i64, to: i64| {
        let mut x0 = from;
        while x0 <= to {
            let len = ((to - x0 + 1) as usize).min(CHUNK);
            f(&Chunk { outer, x0, len });
            x0 += len as i64;
        }
    };
    match rank {
        1 => {
            let from = xlo + item * CHUNK as i64;
            row([0, 0], from, (from + CHUNK as i64 - 1).min(xhi));
        }
        2 => row([bounds[0].0 + item, 0], xlo, xhi),
        _ => {
            let z = bounds[0].0 + item;
            for y in bounds[1].0..=bounds[1].1 {
                row([z, y], xlo, xhi);
            }
        }
    }
}

/// Runs a stencil part on every point of the non-empty box `bounds`.
pub(crate) fn run_stencil_part(kernel: &Kernel, bounds: &[(i64, i64)], views: &FieldViews) {
    (0..item_count(bounds)).into_par_iter().for_each_init(
        || Regs::for_kernel(kernel),
        |regs, item| for_each_chunk(bounds, item, |chunk| run_chunk(kernel, regs, views, chunk)),
    );
}

/// Runs a reduction part on every point of the non-empty box `bounds` and
/// returns one partial per work item, in order, each folded from `identity`
/// in point order.
pub(crate) fn run_reduction_part<T: RegElem>(
    kernel: &Kernel,
    bounds: &[(i64, i64)],
    views: &FieldViews,
    identity: T,
    combine: impl Fn(T, T) -> T + Sync,
) -> Vec<T> {
    (0..item_count(bounds))
        .into_par_iter()
        .map_init(
            || Regs::for_kernel(kernel),
            |regs, item| {
                let mut acc = identity;
                for_each_chunk(bounds, item, |chunk| {
                    run_chunk(kernel, regs, views, chunk);
                    fold_result(kernel, regs, chunk.len, &mut acc, &combine);
                });
                acc
            },
        )
        .collect()
}
