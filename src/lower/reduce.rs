//! Reductions on the device: each part's kernel folds its points per thread,
//! then per block with a shared-memory tree (its last steps as warp shuffles on
//! CUDA), writing one partial per block; a single-block final pass folds the
//! partials into the result. Only that one value crosses to the host.

use crate::ir::{BinaryOp, Program, ReduceOp, Reduction, ReductionId, ScalarType};
use crate::kir::{Builtin, KExpr, KStmt, Kernel, Module, Origin, SharedArray, Space, Var, Vars};
use crate::lower::plan::{ArgSource, Launch, ReductionPlan};
use crate::lower::point::PointCtx;
use crate::lower::{Params, Target, REDUCTION_THREADS};
use crate::schedule::default_block;

/// `op(a, b)` in kernel IR (max/min as selects: exact, like every back-end).
fn combine(op: ReduceOp, a: KExpr, b: KExpr) -> KExpr {
    match op {
        ReduceOp::Sum => KExpr::Binary(BinaryOp::Add, Box::new(a), Box::new(b)),
        ReduceOp::Product => KExpr::Binary(BinaryOp::Mul, Box::new(a), Box::new(b)),
        ReduceOp::Max => KExpr::Select(
            Box::new(KExpr::Binary(
                BinaryOp::Gt,
                Box::new(b.clone()),
                Box::new(a.clone()),
            )),
            Box::new(b),
            Box::new(a),
        ),
        ReduceOp::Min => KExpr::Select(
            Box::new(KExpr::Binary(
                BinaryOp::Lt,
                Box::new(b.clone()),
                Box::new(a.clone()),
            )),
            Box::new(b),
            Box::new(a),
        ),
    }
}

/// The variables every reduction kernel's block tree uses.
struct TreeVars {
    /// The thread's index in its block.
    tid: Var,
    /// The thread's running value.
    acc: Var,
    /// The shared array of one value per thread.
    scratch: Var,
}

impl TreeVars {
    fn new(vars: &mut Vars, ty: ScalarType) -> TreeVars {
        TreeVars {
            tid: vars.temp_int("tid"),
            acc: vars.add("acc", ty, Space::Private, Origin::Generated),
            scratch: vars.add("scratch", ty, Space::Shared, Origin::Generated),
        }
    }
}

/// The block tree over `scratch[threads]` holding each thread's value in `acc`;
/// thread 0 ends with the block's value in `acc`.
fn block_tree(
    op: ReduceOp,
    ty: ScalarType,
    threads: u32,
    target: Target,
    v: &TreeVars,
    vars: &mut Vars,
) -> Vec<KStmt> {
    let sh = v.scratch;
    let tid = || KExpr::var(v.tid);
    let acc = || KExpr::var(v.acc);
    let at = |i: KExpr| KExpr::Load {
        space: Space::Shared,
        array: sh,
        index: vec![i],
    };
    let mut out = vec![
        KStmt::Store {
            space: Space::Shared,
            array: sh,
            index: vec![tid()],
            value: acc(),
        },
        KStmt::Barrier,
    ];
    let warp_steps = target.has_warp_shuffle() && threads >= 64;
    let stop = if warp_steps { 32 } else { 0 };
    let mut s = threads / 2;
    while s > stop {
        out.push(KStmt::If {
            cond: KExpr::bin(BinaryOp::Lt, tid(), KExpr::int(s as i64)),
            then: vec![KStmt::Store {
                space: Space::Shared,
                array: sh,
                index: vec![tid()],
                value: combine(op, at(tid()), at(KExpr::plus(tid(), KExpr::int(s as i64)))),
            }],
            otherwise: vec![],
        });
        out.push(KStmt::Barrier);
        s /= 2;
    }
    if warp_steps {
        // The first warp finishes with shuffles: no barriers, no shared traffic.
        let mut warp = vec![KStmt::Assign {
            var: v.acc,
            value: combine(op, at(tid()), at(KExpr::plus(tid(), KExpr::int(32)))),
        }];
        let mut delta = 16;
        // Every lane shuffles unconditionally (a shuffle under a branch would be
        // divergent); the combine then reads the received value.
        let other = vars.add("other", ty, Space::Private, Origin::Generated);
        warp.push(KStmt::Decl {
            var: other,
            init: KExpr::Lit(op.identity(ty)),
        });
        while delta > 0 {
            warp.push(KStmt::Assign {
                var: other,
                value: KExpr::ShuffleDown(Box::new(acc()), delta),
            });
            warp.push(KStmt::Assign {
                var: v.acc,
                value: combine(op, acc(), KExpr::var(other)),
            });
            delta /= 2;
        }
        out.push(KStmt::If {
            cond: KExpr::bin(BinaryOp::Lt, tid(), KExpr::int(32)),
            then: warp,
            otherwise: vec![],
        });
    } else {
        out.push(KStmt::Assign {
            var: v.acc,
            value: at(KExpr::int(0)),
        });
    }
    out
}

pub(crate) fn lower_reduction(
    program: &Program,
    id: ReductionId,
    reduction: &Reduction,
    target: Target,
    wide: bool,
    module: &mut Module,
) -> ReductionPlan {
    let name = &reduction.name;
    let ty = reduction.ty;
    let identity = KExpr::Lit(reduction.op.identity(ty));
    let mut parts = Vec::new();
    for (k, part) in reduction.parts.iter().enumerate() {
        let rank = part.subset.rank();
        let block = default_block(rank);
        let letters: Vec<&str> = (0..rank).map(|d| ["x", "y", "z"][d]).collect();
        let mut vars = Vars::default();
        // Grid index per thread axis (x first).
        let grid_vars: Vec<Var> = letters
            .iter()
            .map(|l| vars.temp_int(format!("i{l}")))
            .collect();
        let coords = (0..rank)
            .map(|a| KExpr::var(grid_vars[rank - 1 - a]))
            .collect();
        let mut ctx = PointCtx::new(program, coords, vec![]);
        ctx.params.vars = vars;
        ctx.wide = wide;
        let partials = ctx.params.buffer("partials", ty, ArgSource::Partials(id));
        let mut body = Vec::new();
        let mut guard: Option<KExpr> = None;
        for d in 0..rank {
            let a = rank - 1 - d;
            let l = letters[d];
            let lo = ctx.params.scalar(
                &format!("lo_{l}"),
                ScalarType::Int,
                ArgSource::Lo(a),
                Origin::Generated,
            );
            let hi = ctx.params.scalar(
                &format!("hi_{l}"),
                ScalarType::Int,
                ArgSource::Hi(a),
                Origin::Generated,
            );
            body.push(KStmt::Decl {
                var: grid_vars[d],
                init: KExpr::plus(
                    lo,
                    KExpr::plus(
                        KExpr::times(
                            KExpr::Builtin(Builtin::BlockIdx(d as u8)),
                            KExpr::int(block[d] as i64),
                        ),
                        KExpr::Builtin(Builtin::ThreadIdx(d as u8)),
                    ),
                ),
            });
            let test = KExpr::bin(BinaryOp::Le, KExpr::var(grid_vars[d]), hi);
            guard = Some(match guard {
                None => test,
                Some(g) => KExpr::bin(BinaryOp::And, g, test),
            });
        }
        let offset = ctx.params.scalar(
            "partial_offset",
            ScalarType::Int,
            ArgSource::PartialOffset,
            Origin::Generated,
        );
        let value = ctx.expr(&part.value, module);
        let tree = TreeVars::new(&mut ctx.params.vars, ty);
        body.push(KStmt::Decl {
            var: tree.tid,
            init: linear(rank, block, |d| KExpr::Builtin(Builtin::ThreadIdx(d as u8))),
        });
        body.push(KStmt::Decl {
            var: tree.acc,
            init: identity.clone(),
        });
        body.push(KStmt::If {
            cond: guard.unwrap_or_else(|| KExpr::int(1)),
            then: vec![KStmt::Assign {
                var: tree.acc,
                value,
            }],
            otherwise: vec![],
        });
        let threads: u32 = block.iter().product();
        body.extend(block_tree(
            reduction.op,
            ty,
            threads,
            target,
            &tree,
            &mut ctx.params.vars,
        ));
        let block_id = linear(rank, [0; 3], |d| KExpr::Builtin(Builtin::BlockIdx(d as u8)));
        body.push(KStmt::If {
            cond: KExpr::bin(BinaryOp::Eq, KExpr::var(tree.tid), KExpr::int(0)),
            then: vec![KStmt::Store {
                space: Space::Global,
                array: partials,
                index: vec![KExpr::plus(offset, block_id)],
                value: KExpr::var(tree.acc),
            }],
            otherwise: vec![],
        });
        let uses_double = ctx.uses_double || ty == ScalarType::Double;
        let mut shared = ctx.shared;
        shared.push(SharedArray {
            var: tree.scratch,
            ty,
            dims: vec![threads as usize],
        });
        let (params, args, vars) = ctx.params.finish();
        module.kernels.push(Kernel {
            name: format!("{name}_part{k}"),
            block,
            vars,
            params,
            shared,
            body,
            uses_double,
        });
        parts.push(Launch {
            kernel: module.kernels.len() - 1,
            subset: Some(part.subset.clone()),
            block,
            points_per_block: block,
            args,
        });
    }

    // The final pass: one block strides over the partials in a fixed order.
    let mut params = Params::default();
    let result = params.buffer("result", ty, ArgSource::Result(id));
    let partials = params.buffer("partials", ty, ArgSource::Partials(id));
    let count = params.scalar(
        "partial_count",
        ScalarType::Int,
        ArgSource::PartialCount,
        Origin::Generated,
    );
    let tree = TreeVars::new(&mut params.vars, ty);
    let i = params.vars.temp_int("i");
    let mut body = vec![
        KStmt::Decl {
            var: tree.tid,
            init: KExpr::Builtin(Builtin::ThreadIdx(0)),
        },
        KStmt::Decl {
            var: tree.acc,
            init: identity,
        },
        KStmt::For {
            var: i,
            start: KExpr::var(tree.tid),
            end: count,
            step: KExpr::int(REDUCTION_THREADS as i64),
            unroll: false,
            body: vec![KStmt::Assign {
                var: tree.acc,
                value: combine(
                    reduction.op,
                    KExpr::var(tree.acc),
                    KExpr::Load {
                        space: Space::Global,
                        array: partials,
                        index: vec![KExpr::var(i)],
                    },
                ),
            }],
        },
    ];
    body.extend(block_tree(
        reduction.op,
        ty,
        REDUCTION_THREADS,
        target,
        &tree,
        &mut params.vars,
    ));
    body.push(KStmt::If {
        cond: KExpr::bin(BinaryOp::Eq, KExpr::var(tree.tid), KExpr::int(0)),
        then: vec![KStmt::Store {
            space: Space::Global,
            array: result,
            index: vec![KExpr::int(0)],
            value: KExpr::var(tree.acc),
        }],
        otherwise: vec![],
    });
    let (params, args, vars) = params.finish();
    module.kernels.push(Kernel {
        name: format!("{name}_final"),
        block: [REDUCTION_THREADS, 1, 1],
        vars,
        params,
        shared: vec![SharedArray {
            var: tree.scratch,
            ty,
            dims: vec![REDUCTION_THREADS as usize],
        }],
        body,
        uses_double: ty == ScalarType::Double,
    });
    let finish = Launch {
        kernel: module.kernels.len() - 1,
        subset: None,
        block: [REDUCTION_THREADS, 1, 1],
        points_per_block: [REDUCTION_THREADS, 1, 1],
        args,
    };
    ReductionPlan {
        name: reduction.name.clone(),
        op: reduction.op,
        ty,
        parts,
        finish,
    }
}

/// `v(0) + b0 * (v(1) + b1 * v(2))`, or with `block` all zero the block index
/// linearised over the grid (`gridDim`).
fn linear(rank: usize, block: [u32; 3], v: impl Fn(usize) -> KExpr) -> KExpr {
    let mut e: Option<KExpr> = None;
    for d in (0..rank).rev() {
        e = Some(match e {
            None => v(d),
            Some(outer) => {
                let size = if block[d] == 0 {
                    KExpr::Builtin(Builtin::NumGroups(d as u8))
                } else {
                    KExpr::int(block[d] as i64)
                };
                KExpr::plus(v(d), KExpr::times(size, outer))
            }
        });
    }
    e.unwrap_or_else(|| KExpr::int(0))
}
