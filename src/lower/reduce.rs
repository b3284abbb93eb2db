//! Reductions on the device: each part's kernel folds its points per thread,
//! then per block with a shared-memory tree (its last steps as warp shuffles on
//! CUDA), writing one partial per block; a single-block final pass folds the
//! partials into the result. Only that one value crosses to the host.

use crate::ir::{BinaryOp, Program, ReduceOp, Reduction, ReductionId, ScalarType};
use crate::kir::{Builtin, KExpr, KStmt, Kernel, Module, SharedArray, Space};
use crate::lower::plan::{ArgSource, Launch, ReductionPlan};
use crate::lower::point::PointCtx;
use crate::lower::{ident, letter, Params, Target, REDUCTION_THREADS};
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

/// The block tree over `sh[threads]` holding each thread's value in `acc`;
/// thread 0 ends with the block's value in `acc`.
fn block_tree(op: ReduceOp, ty: ScalarType, threads: u32, target: Target) -> Vec<KStmt> {
    let sh = "scratch";
    let tid = || KExpr::var("tid");
    let at = |i: KExpr| KExpr::Load {
        space: Space::Shared,
        array: sh.into(),
        index: vec![i],
    };
    let mut out = vec![
        KStmt::Store {
            space: Space::Shared,
            array: sh.into(),
            index: vec![tid()],
            value: KExpr::var("acc"),
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
                array: sh.into(),
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
            name: "acc".into(),
            value: combine(op, at(tid()), at(KExpr::plus(tid(), KExpr::int(32)))),
        }];
        let mut delta = 16;
        // Every lane shuffles unconditionally (a shuffle under a branch would be
        // divergent); the combine then reads the received value.
        warp.push(KStmt::Decl {
            name: "other".into(),
            ty,
            init: KExpr::Lit(op.identity(ty)),
        });
        while delta > 0 {
            warp.push(KStmt::Assign {
                name: "other".into(),
                value: KExpr::ShuffleDown(Box::new(KExpr::var("acc")), delta),
            });
            warp.push(KStmt::Assign {
                name: "acc".into(),
                value: combine(op, KExpr::var("acc"), KExpr::var("other")),
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
            name: "acc".into(),
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
    module: &mut Module,
) -> ReductionPlan {
    let name = ident(&reduction.name);
    let ty = reduction.ty;
    let identity = KExpr::Lit(reduction.op.identity(ty));
    let mut parts = Vec::new();
    for (k, part) in reduction.parts.iter().enumerate() {
        let rank = part.subset.rank();
        let block = default_block(rank);
        let letters: Vec<&str> = (0..rank).map(|d| ["x", "y", "z"][d]).collect();
        let coords = (0..rank)
            .map(|a| KExpr::var(format!("i{}", letter(rank, a))))
            .collect();
        let mut ctx = PointCtx::new(program, coords, vec![]);
        ctx.params.buffer("partials", ty, ArgSource::Partials(id));
        let mut body = Vec::new();
        let mut guard: Option<KExpr> = None;
        for d in 0..rank {
            let a = rank - 1 - d;
            let l = letters[d];
            let lo = ctx
                .params
                .scalar(&format!("lo_{l}"), ScalarType::Int, ArgSource::Lo(a));
            let hi = ctx
                .params
                .scalar(&format!("hi_{l}"), ScalarType::Int, ArgSource::Hi(a));
            body.push(KStmt::Decl {
                name: format!("i{l}"),
                ty: ScalarType::Int,
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
            let test = KExpr::bin(BinaryOp::Le, KExpr::var(format!("i{l}")), hi);
            guard = Some(match guard {
                None => test,
                Some(g) => KExpr::bin(BinaryOp::And, g, test),
            });
        }
        let offset = ctx
            .params
            .scalar("partial_offset", ScalarType::Int, ArgSource::PartialOffset);
        let value = ctx.expr(&part.value, module);
        body.push(KStmt::Decl {
            name: "tid".into(),
            ty: ScalarType::Int,
            init: linear(rank, block, |d| KExpr::Builtin(Builtin::ThreadIdx(d as u8))),
        });
        body.push(KStmt::Decl {
            name: "acc".into(),
            ty,
            init: identity.clone(),
        });
        body.push(KStmt::If {
            cond: guard.unwrap_or_else(|| KExpr::int(1)),
            then: vec![KStmt::Assign {
                name: "acc".into(),
                value,
            }],
            otherwise: vec![],
        });
        let threads: u32 = block.iter().product();
        body.extend(block_tree(reduction.op, ty, threads, target));
        let block_id = linear(rank, [0; 3], |d| KExpr::Builtin(Builtin::BlockIdx(d as u8)));
        body.push(KStmt::If {
            cond: KExpr::bin(BinaryOp::Eq, KExpr::var("tid"), KExpr::int(0)),
            then: vec![KStmt::Store {
                space: Space::Global,
                array: "partials".into(),
                index: vec![KExpr::plus(offset, block_id)],
                value: KExpr::var("acc"),
            }],
            otherwise: vec![],
        });
        let uses_double = ctx.uses_double || ty == ScalarType::Double;
        let (params, args) = ctx.params.finish();
        module.kernels.push(Kernel {
            name: format!("{name}_part{k}"),
            block,
            params,
            shared: vec![SharedArray {
                name: "scratch".into(),
                ty,
                dims: vec![threads as usize],
            }],
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
    params.buffer("result", ty, ArgSource::Result(id));
    params.buffer("partials", ty, ArgSource::Partials(id));
    let count = params.scalar("partial_count", ScalarType::Int, ArgSource::PartialCount);
    let mut body = vec![
        KStmt::Decl {
            name: "tid".into(),
            ty: ScalarType::Int,
            init: KExpr::Builtin(Builtin::ThreadIdx(0)),
        },
        KStmt::Decl {
            name: "acc".into(),
            ty,
            init: identity,
        },
        KStmt::For {
            var: "i".into(),
            start: KExpr::var("tid"),
            end: count,
            step: KExpr::int(REDUCTION_THREADS as i64),
            unroll: false,
            body: vec![KStmt::Assign {
                name: "acc".into(),
                value: combine(
                    reduction.op,
                    KExpr::var("acc"),
                    KExpr::Load {
                        space: Space::Global,
                        array: "partials".into(),
                        index: vec![KExpr::var("i")],
                    },
                ),
            }],
        },
    ];
    body.extend(block_tree(reduction.op, ty, REDUCTION_THREADS, target));
    body.push(KStmt::If {
        cond: KExpr::bin(BinaryOp::Eq, KExpr::var("tid"), KExpr::int(0)),
        then: vec![KStmt::Store {
            space: Space::Global,
            array: "result".into(),
            index: vec![KExpr::int(0)],
            value: KExpr::var("acc"),
        }],
        otherwise: vec![],
    });
    let (params, args) = params.finish();
    module.kernels.push(Kernel {
        name: format!("{name}_final"),
        block: [REDUCTION_THREADS, 1, 1],
        params,
        shared: vec![SharedArray {
            name: "scratch".into(),
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
