//! Loop nests in which a block's threads stride over the cells of a shared
//! tile (a fused kernel's recompute phase and its staged loads, a time tile's
//! interior path): along each axis a thread takes the cells
//! `thread + first + block·r`.
//!
//! A time tile's general path keeps run-time loops: its cells' boundary tests
//! (`gy >= 0 && gy < size_y ? load : 0`) make ptxas branch around each load,
//! so unrolled trips stayed one round each (checked in the SASS of j2d5pt at
//! `--time 4`); its interior path, which has no such tests, takes these nests.
//!
//! The trips `r` have a fixed count and are unrolled (up to
//! [`MAX_UNROLLED_TRIPS`] a thread), so that the compiler issues the global
//! loads of several trips before it waits for the first: with a run-time trip
//! count (`for (l = thread; l < end; l += block)`) ptxas issued one trip's
//! loads, waited, stored and branched to the next, one dependent round per
//! trip. Only a ragged last trip can pass the end; it follows the loop of the
//! others with the only test (a test on every trip made ptxas branch around
//! each, serialising them again), in a copy of the body with variables of its
//! own. Past the limit, the nest is the run-time loop.

use crate::ir::BinaryOp;
use crate::kir::{rewrite, KExpr, KStmt, Var, Vars};

/// The most trips (cells a thread, over all axes) a nest is unrolled to: the
/// separable blur's 70 x 32 recompute tile in 32 x 8 blocks takes 9.
const MAX_UNROLLED_TRIPS: usize = 16;

/// One axis of a strided nest.
pub(crate) struct Stride {
    /// The cell variable the nest declares.
    pub cell: Var,
    /// The thread's index along the axis.
    pub thread: Var,
    /// The cell thread 0 takes first.
    pub first: i64,
    /// One past the last cell.
    pub end: i64,
    /// Threads of the block along the axis.
    pub block: i64,
}

impl Stride {
    /// Trips a thread makes: enough for thread 0 to reach the last cell.
    fn trips(&self) -> i64 {
        let span = self.end - self.first;
        if span <= 0 {
            0
        } else {
            (span + self.block.max(1) - 1) / self.block.max(1)
        }
    }
}

/// The nest running `body` at every cell of `axes` (innermost first, `x`,
/// `y`, `z`) a thread covers; trip variables are new `int`s of `vars`.
pub(crate) fn strided_nest(vars: &mut Vars, axes: &[Stride], body: Vec<KStmt>) -> KStmt {
    let trips: Vec<i64> = axes.iter().map(Stride::trips).collect();
    if trips.contains(&0) {
        return KStmt::Block(vec![]);
    }
    let total: i64 = trips.iter().product();
    let unrolled = total <= MAX_UNROLLED_TRIPS as i64;
    let mut stmts = body;
    for (d, axis) in axes.iter().enumerate() {
        let block = axis.block.max(1);
        let at = |cell: Var, r: KExpr| KStmt::Decl {
            var: cell,
            init: KExpr::plus(
                KExpr::plus(KExpr::var(axis.thread), KExpr::int(axis.first)),
                KExpr::bin(BinaryOp::Mul, KExpr::int(block), r),
            ),
        };
        if !unrolled {
            stmts = vec![KStmt::For {
                var: axis.cell,
                start: KExpr::plus(KExpr::var(axis.thread), KExpr::int(axis.first)),
                end: KExpr::int(axis.end),
                step: KExpr::int(block),
                unroll: false,
                body: stmts,
            }];
            continue;
        }
        let count = trips[d];
        let ragged = (axis.end - axis.first) % block != 0;
        let inside = |cell: Var| KExpr::bin(BinaryOp::Lt, KExpr::var(cell), KExpr::int(axis.end));
        if count == 1 {
            // One trip: the thread's own cell (tested when the block is
            // wider than the cells).
            let mut one = vec![at(axis.cell, KExpr::int(0))];
            if ragged {
                one.push(KStmt::If {
                    cond: inside(axis.cell),
                    then: stmts,
                    otherwise: vec![],
                });
            } else {
                one.extend(stmts);
            }
            stmts = one;
            continue;
        }
        let whole = if ragged { count - 1 } else { count };
        let last = ragged.then(|| {
            let decl = vars.decl(axis.cell).clone();
            let cell = vars.add(decl.hint, decl.ty, decl.space, decl.origin);
            let mut copy = rewrite::fresh_copy(&stmts, vars);
            for stmt in &mut copy {
                crate::kir::visit::rewrite_stmt(stmt, &mut |e| {
                    (*e == KExpr::var(axis.cell)).then(|| KExpr::var(cell))
                });
            }
            KStmt::Block(vec![
                at(cell, KExpr::int(count - 1)),
                KStmt::If {
                    cond: inside(cell),
                    then: copy,
                    otherwise: vec![],
                },
            ])
        });
        let first = if whole == 1 {
            KStmt::Block(
                std::iter::once(at(axis.cell, KExpr::int(0)))
                    .chain(stmts)
                    .collect(),
            )
        } else {
            let trip = vars.temp_int(format!("r{}", ["x", "y", "z"][d.min(2)]));
            KStmt::For {
                var: trip,
                start: KExpr::int(0),
                end: KExpr::int(whole),
                step: KExpr::int(1),
                unroll: true,
                body: std::iter::once(at(axis.cell, KExpr::var(trip)))
                    .chain(stmts)
                    .collect(),
            }
        };
        stmts = std::iter::once(first).chain(last).collect();
    }
    if unrolled && total > 1 {
        stmts.insert(
            0,
            KStmt::Comment(
                "the thread's cells in fixed trips, unrolled: several trips' loads in flight"
                    .to_string(),
            ),
        );
    }
    match stmts.pop() {
        Some(stmt) if stmts.is_empty() => stmt,
        Some(stmt) => {
            stmts.push(stmt);
            KStmt::Block(stmts)
        }
        None => KStmt::Block(vec![]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cells a thread visits, read back from the nest by running it.
    fn cells(stmt: &KStmt, thread: Var, t: i64) -> Vec<i64> {
        fn eval(e: &KExpr, env: &[(Var, i64)]) -> i64 {
            match e {
                KExpr::Lit(v) => v.as_i64(),
                KExpr::Var(v) => env.iter().rev().find(|(w, _)| w == v).expect("bound").1,
                KExpr::Binary(op, a, b) => {
                    let (a, b) = (eval(a, env), eval(b, env));
                    match op {
                        BinaryOp::Add => a + b,
                        BinaryOp::Mul => a * b,
                        BinaryOp::Lt => i64::from(a < b),
                        other => panic!("{other:?}"),
                    }
                }
                other => panic!("{other:?}"),
            }
        }
        fn run(s: &KStmt, env: &mut Vec<(Var, i64)>, out: &mut Vec<i64>) {
            match s {
                KStmt::Decl { var, init } => {
                    let v = eval(init, env);
                    env.push((*var, v));
                }
                KStmt::Block(body) => {
                    let depth = env.len();
                    body.iter().for_each(|s| run(s, env, out));
                    env.truncate(depth);
                }
                KStmt::If { cond, then, .. } => {
                    if eval(cond, env) != 0 {
                        let depth = env.len();
                        then.iter().for_each(|s| run(s, env, out));
                        env.truncate(depth);
                    }
                }
                KStmt::For {
                    var,
                    start,
                    end,
                    step,
                    body,
                    ..
                } => {
                    let (mut i, end, step) = (eval(start, env), eval(end, env), eval(step, env));
                    while i < end {
                        let depth = env.len();
                        env.push((*var, i));
                        body.iter().for_each(|s| run(s, env, out));
                        env.truncate(depth);
                        i += step;
                    }
                }
                // The body's marker: the cell the trip is at (whichever
                // variable now stands for it).
                KStmt::Assign { value, .. } => out.push(eval(value, env)),
                KStmt::Comment(_) => {}
                other => panic!("{other:?}"),
            }
        }
        let mut out = Vec::new();
        run(stmt, &mut vec![(thread, t)], &mut out);
        out
    }

    #[test]
    fn every_thread_visits_its_cells_once_ragged_or_not_unrolled_or_not() {
        for (first, end, block) in [
            (0, 70, 8),
            (0, 64, 8),
            (1, 39, 8),
            (0, 5, 8),
            (0, 8, 8),
            (0, 200, 8),
            (3, 3, 8),
        ] {
            let mut vars = Vars::default();
            let thread = vars.temp_int("ty");
            let cell = vars.temp_int("ly");
            let sink = vars.temp_int("seen");
            let body = vec![KStmt::Assign {
                var: sink,
                value: KExpr::var(cell),
            }];
            let nest = strided_nest(
                &mut vars,
                &[Stride {
                    cell,
                    thread,
                    first,
                    end,
                    block,
                }],
                body,
            );
            let unrolled = (end - first + block - 1) / block <= MAX_UNROLLED_TRIPS as i64;
            let mut found = Vec::new();
            crate::kir::visit::for_each_stmt(std::slice::from_ref(&nest), |s| {
                if let KStmt::For { unroll, .. } = s {
                    found.push(*unroll);
                }
            });
            assert!(
                found.iter().all(|u| *u == unrolled),
                "{first}..{end}/{block}: {nest:?}"
            );
            for t in 0..block {
                let want: Vec<i64> = (first + t..end).step_by(block as usize).collect();
                assert_eq!(
                    cells(&nest, thread, t),
                    want,
                    "{first}..{end}/{block}, thread {t}"
                );
            }
        }
    }
}
