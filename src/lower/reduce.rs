//! Reductions on the device, in an order fixed by the sizes alone (so results
//! repeat bit for bit). A part either rides in the last stencil kernel of the
//! iteration (a fused check: each thread folds the terms of its points, see
//! [`fused_epilogue`]) or runs as a grid-stride kernel of at most
//! [`MAX_REDUCTION_BLOCKS`](crate::kir::plan::MAX_REDUCTION_BLOCKS) blocks,
//! each thread folding its points in row order. Each block then folds its
//! threads' values with a shared-memory tree (its last steps as warp shuffles
//! on CUDA) and writes one partial. Many partials (one per stencil block of a
//! fused kernel) are folded by a multi-block pass first; a single-block final
//! pass folds the rest into the result. Only that one value crosses to the host.
//!
//! `+` and `*` on floats are therefore associated differently from the
//! interpreter's left-to-right fold (and differently between the fused and the
//! separate plan): results agree to rounding. Integer `+`/`*` (wrapping), `min`
//! and `max` are exact whatever the order, the sign of a zero `min`/`max`
//! included ([`Helper::Extremum`]).

use crate::analysis::{Footprint, Level};
use crate::ir::{BinaryOp, Program, ReduceOp, Reduction, ReductionId, ScalarType};
use crate::kir::plan::{reduction_group_cap, ArgSource, Launch, ReductionPlan};
use crate::kir::{
    Builtin, Helper, KExpr, KStmt, Kernel, Module, Origin, SharedArray, Space, Var, Vars,
};
use crate::lower::point::{PointCtx, Tile};
use crate::lower::{Params, Target, REDUCTION_THREADS};
use crate::schedule::default_block;

/// `op(a, b)` in kernel IR, `a` the running value: `max`/`min` on floats call
/// [`Helper::Extremum`] (NaN ignored, -0.0 below +0.0: the same result in any
/// order), on integers a select.
fn combine(op: ReduceOp, ty: ScalarType, a: KExpr, b: KExpr) -> KExpr {
    if let Some(helper) = Helper::for_reduction(op, ty) {
        return KExpr::Helper(helper, vec![a, b]);
    }
    let select = |cmp: BinaryOp| {
        KExpr::Select(
            Box::new(KExpr::Binary(cmp, Box::new(b.clone()), Box::new(a.clone()))),
            Box::new(b.clone()),
            Box::new(a.clone()),
        )
    };
    match op {
        ReduceOp::Sum => KExpr::Binary(BinaryOp::Add, Box::new(a), Box::new(b)),
        ReduceOp::Product => KExpr::Binary(BinaryOp::Mul, Box::new(a), Box::new(b)),
        ReduceOp::Max => select(BinaryOp::Gt),
        ReduceOp::Min => select(BinaryOp::Lt),
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
    fn new(vars: &mut Vars, ty: ScalarType, tid: Var, prefix: &str) -> TreeVars {
        TreeVars {
            tid,
            acc: vars.add(
                format!("{prefix}acc"),
                ty,
                Space::Private,
                Origin::Generated,
            ),
            scratch: vars.add(
                format!("{prefix}scratch"),
                ty,
                Space::Shared,
                Origin::Generated,
            ),
        }
    }
}

/// The block tree over `scratch[threads]` holding each thread's value in `acc`;
/// thread 0 ends with the block's value in `acc`. Any thread count: the values
/// past the largest power of two are folded into the first ones first.
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
    let fold_from = |s: u32| KStmt::Store {
        space: Space::Shared,
        array: sh,
        index: vec![tid()],
        value: combine(
            op,
            ty,
            at(tid()),
            at(KExpr::plus(tid(), KExpr::int(s as i64))),
        ),
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
    // The largest power of two not above the thread count.
    let pow2 = if threads == 0 {
        1
    } else {
        1u32 << (31 - threads.leading_zeros())
    };
    if pow2 < threads {
        out.push(KStmt::If {
            cond: KExpr::bin(BinaryOp::Lt, tid(), KExpr::int((threads - pow2) as i64)),
            then: vec![fold_from(pow2)],
            otherwise: vec![],
        });
        out.push(KStmt::Barrier);
    }
    let warp_steps = target.has_warp_shuffle() && pow2 >= 64;
    let stop = if warp_steps { 32 } else { 0 };
    let mut s = pow2 / 2;
    while s > stop {
        out.push(KStmt::If {
            cond: KExpr::bin(BinaryOp::Lt, tid(), KExpr::int(s as i64)),
            then: vec![fold_from(s)],
            otherwise: vec![],
        });
        out.push(KStmt::Barrier);
        s /= 2;
    }
    if warp_steps {
        // The first warp finishes with shuffles: no barriers, no shared traffic.
        let mut warp = vec![KStmt::Assign {
            var: v.acc,
            value: combine(op, ty, at(tid()), at(KExpr::plus(tid(), KExpr::int(32)))),
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
                value: combine(op, ty, acc(), KExpr::var(other)),
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

/// `acc = op(acc, value)`, the value first in a variable of its own (`min`
/// and `max` select between it and `acc`: it is computed once).
fn fold_term(
    vars: &mut Vars,
    op: ReduceOp,
    ty: ScalarType,
    acc: Var,
    value: KExpr,
    hint: &str,
) -> Vec<KStmt> {
    let term = vars.add(hint, ty, Space::Private, Origin::Generated);
    vec![
        KStmt::Decl {
            var: term,
            init: value,
        },
        KStmt::Assign {
            var: acc,
            value: combine(op, ty, KExpr::var(acc), KExpr::var(term)),
        },
    ]
}

/// `if (tid == 0) partials[index] = acc;`
fn store_partial(tree: &TreeVars, partials: Var, index: KExpr) -> KStmt {
    KStmt::If {
        cond: KExpr::bin(BinaryOp::Eq, KExpr::var(tree.tid), KExpr::int(0)),
        then: vec![KStmt::Store {
            space: Space::Global,
            array: partials,
            index: vec![index],
            value: KExpr::var(tree.acc),
        }],
        otherwise: vec![],
    }
}

/// The reduction terms a stencil kernel also accumulates at each of its points
/// (a fused check), per reduction the parts it takes.
pub(crate) struct FusedTerms<'a> {
    /// The dialect (warp shuffles on CUDA).
    pub target: Target,
    /// Each reduction with the indices of its fused parts.
    pub reductions: Vec<(ReductionId, &'a Reduction, Vec<usize>)>,
}

/// What a fused check adds to a stencil kernel: accumulators declared before
/// the point loops, a fold of each term at every point (inside the point's
/// guard; [`FusedEpilogue::point_folds`] at each point of a thread's run),
/// and after the loops each block's tree and partial store.
pub(crate) struct FusedEpilogue<'a> {
    /// Before the point loops.
    pub init: Vec<KStmt>,
    /// The terms folded at each point, after the stencil's statements.
    folds: Vec<PointFold<'a>>,
    /// After the point loops (every thread reaches it: it has barriers).
    pub tail: Vec<KStmt>,
    /// Staged levels the terms read beyond their tile: read from global memory.
    unheld: Vec<Level>,
}

/// One reduction term folded into its accumulator at each point.
struct PointFold<'a> {
    op: ReduceOp,
    ty: ScalarType,
    acc: Var,
    hint: String,
    value: &'a crate::ir::Expr,
}

impl FusedEpilogue<'_> {
    /// The fold of every term at the point `ctx`'s coordinates name.
    pub fn point_folds(&self, ctx: &mut PointCtx<'_>, module: &mut Module) -> Vec<KStmt> {
        let hidden: Vec<(Level, Tile)> = self
            .unheld
            .iter()
            .filter_map(|level| ctx.tiles.remove(level).map(|tile| (*level, tile)))
            .collect();
        let mut out = Vec::new();
        for fold in &self.folds {
            let value = ctx.expr(fold.value, module);
            out.extend(fold_term(
                &mut ctx.params.vars,
                fold.op,
                fold.ty,
                fold.acc,
                value,
                &fold.hint,
            ));
        }
        ctx.tiles.extend(hidden);
        out
    }
}

/// Builds the fused check's code for a `rank`-D stencil kernel of `block`
/// threads whose point context is `ctx` (its coordinates are set per point
/// later); `thread` is the thread's linear index in its block (x fastest, as
/// warps are formed).
pub(crate) fn fused_epilogue<'a>(
    ctx: &mut PointCtx<'_>,
    terms: &FusedTerms<'a>,
    rank: usize,
    block: [u32; 3],
    thread: KExpr,
) -> FusedEpilogue<'a> {
    let threads: u32 = block.iter().product();
    let tid = ctx.params.vars.temp_int("tid");
    let mut init = Vec::new();
    let mut folds = Vec::new();
    let mut tail = vec![
        KStmt::Comment("the check's partial sums: one per block".to_string()),
        KStmt::Decl {
            var: tid,
            init: thread,
        },
    ];
    for (id, reduction, parts) in &terms.reductions {
        let ty = reduction.ty;
        let prefix = format!("{}_", reduction.name);
        let tree = TreeVars::new(&mut ctx.params.vars, ty, tid, &prefix);
        let partials = ctx.params.buffer(
            &format!("{}_partials", reduction.name),
            ty,
            ArgSource::Partials(*id),
        );
        init.push(KStmt::Decl {
            var: tree.acc,
            init: KExpr::Lit(reduction.op.identity(ty)),
        });
        for &p in parts {
            folds.push(PointFold {
                op: reduction.op,
                ty,
                acc: tree.acc,
                hint: format!("{prefix}term"),
                value: &reduction.parts[p].value,
            });
        }
        tail.extend(block_tree(
            reduction.op,
            ty,
            threads,
            terms.target,
            &tree,
            &mut ctx.params.vars,
        ));
        let block_id = linear(rank, [0; 3], |d| KExpr::Builtin(Builtin::BlockIdx(d as u8)));
        tail.push(store_partial(&tree, partials, block_id));
        ctx.shared.push(SharedArray {
            var: tree.scratch,
            ty,
            dims: vec![threads as usize],
        });
        ctx.uses_double |= ty == ScalarType::Double;
    }
    let unheld = unheld_levels(ctx, folds.iter().map(|f| f.value));
    FusedEpilogue {
        init,
        folds,
        tail,
        unheld,
    }
}

/// The staged levels of `ctx` some of `values` read outside their tile (or at
/// offsets the analysis cannot bound).
fn unheld_levels<'e>(
    ctx: &PointCtx<'_>,
    values: impl Iterator<Item = &'e crate::ir::Expr>,
) -> Vec<Level> {
    let mut unheld = Vec::new();
    for value in values {
        for extent in Footprint::of_expr(ctx.program, value).reads {
            let level = extent.level();
            let Some(tile) = ctx.tiles.get(&level) else {
                continue;
            };
            let held = match (&tile.covers, extent.static_box()) {
                (None, _) => true,
                (Some(covers), Some(reads)) => covers
                    .iter()
                    .zip(&reads)
                    .all(|(c, r)| c.0 <= r.0 && r.1 <= c.1),
                (Some(_), None) => false,
            };
            if !held && !unheld.contains(&level) {
                unheld.push(level);
            }
        }
    }
    unheld
}

/// Lowers `reduction`'s parts not in `fused` as grid-stride kernels, its fold
/// and its final pass.
pub(crate) fn lower_reduction(
    program: &Program,
    id: ReductionId,
    reduction: &Reduction,
    target: Target,
    wide: bool,
    fused: &[usize],
    module: &mut Module,
) -> ReductionPlan {
    let name = &reduction.name;
    let ty = reduction.ty;
    let identity = KExpr::Lit(reduction.op.identity(ty));
    let mut parts = Vec::new();
    for (k, part) in reduction.parts.iter().enumerate() {
        if fused.contains(&k) {
            continue;
        }
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
        let bounds = subset_bounds(&mut ctx.params, &letters);
        let offset = ctx.params.scalar(
            "partial_offset",
            ScalarType::Int,
            ArgSource::PartialOffset,
            Origin::Generated,
        );
        let value = ctx.expr(&part.value, module);
        let tid = ctx.params.vars.temp_int("tid");
        let tree = TreeVars::new(&mut ctx.params.vars, ty, tid, "");
        let mut body = vec![
            KStmt::Decl {
                var: tree.tid,
                init: linear(rank, block, |d| KExpr::Builtin(Builtin::ThreadIdx(d as u8))),
            },
            KStmt::Decl {
                var: tree.acc,
                init: identity.clone(),
            },
        ];
        // Each thread strides over the part, x innermost: a fixed order, and
        // at most the launch's capped block count of partials.
        let mut point = fold_term(
            &mut ctx.params.vars,
            reduction.op,
            ty,
            tree.acc,
            value,
            "term",
        );
        point = grid_stride_nest(point, &grid_vars, &bounds, block);
        body.extend(point);
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
        body.push(store_partial(
            &tree,
            partials,
            KExpr::plus(offset, block_id),
        ));
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
        parts.push((
            k,
            Launch {
                kernel: module.kernels.len() - 1,
                subset: Some(part.subset.clone()),
                block,
                points_per_block: block,
                args,
                max_groups: Some(reduction_group_cap(rank)),
                align_x: 1,
            },
        ));
    }
    let fold = lower_fold(reduction, id, target, true, module);
    let finish = lower_fold(reduction, id, target, false, module);
    ReductionPlan {
        name: reduction.name.clone(),
        op: reduction.op,
        ty,
        parts,
        fused_parts: fused.to_vec(),
        fold,
        finish,
    }
}

/// The kernel parameters `lo_*` and `hi_*` of a part's subset, one pair per
/// thread axis (`letters`, x first).
fn subset_bounds(params: &mut Params, letters: &[&str]) -> Vec<(KExpr, KExpr)> {
    let rank = letters.len();
    let mut bounds = Vec::new();
    for (d, l) in letters.iter().enumerate() {
        let a = rank - 1 - d;
        let lo = params.scalar(
            &format!("lo_{l}"),
            ScalarType::Int,
            ArgSource::Lo(a),
            Origin::Generated,
        );
        let hi = params.scalar(
            &format!("hi_{l}"),
            ScalarType::Int,
            ArgSource::Hi(a),
            Origin::Generated,
        );
        bounds.push((lo, hi));
    }
    bounds
}

/// `point` inside one loop per thread axis over the subset `bounds`, each
/// thread striding by the whole launch (x innermost): a fixed order.
fn grid_stride_nest(
    mut point: Vec<KStmt>,
    grid_vars: &[Var],
    bounds: &[(KExpr, KExpr)],
    block: [u32; 3],
) -> Vec<KStmt> {
    let rank = grid_vars.len();
    for d in 0..rank {
        let (lo, hi) = bounds[d].clone();
        point = vec![KStmt::For {
            var: grid_vars[d],
            start: KExpr::plus(
                lo,
                KExpr::plus(
                    KExpr::times(
                        KExpr::Builtin(Builtin::BlockIdx(d as u8)),
                        KExpr::int(block[d] as i64),
                    ),
                    KExpr::Builtin(Builtin::ThreadIdx(d as u8)),
                ),
            ),
            end: KExpr::plus(hi, KExpr::int(1)),
            step: KExpr::times(
                KExpr::int(block[d] as i64),
                KExpr::Builtin(Builtin::NumGroups(d as u8)),
            ),
            unroll: false,
            body: point,
        }];
    }
    point
}

/// The pass over a reduction's partials. `multi`: the fold, whose blocks
/// stride over `partials[0 .. partial_count]` and write theirs after them
/// (`partials[partial_count + block]`); else the final pass, one block folding
/// `partials[partial_offset ..][.. partial_count]` into the result.
fn lower_fold(
    reduction: &Reduction,
    id: ReductionId,
    target: Target,
    multi: bool,
    module: &mut Module,
) -> Launch {
    let ty = reduction.ty;
    let mut params = Params::default();
    let result = (!multi).then(|| params.buffer("result", ty, ArgSource::Result(id)));
    let partials = params.buffer("partials", ty, ArgSource::Partials(id));
    let offset = (!multi).then(|| {
        params.scalar(
            "partial_offset",
            ScalarType::Int,
            ArgSource::PartialOffset,
            Origin::Generated,
        )
    });
    let count = params.scalar(
        "partial_count",
        ScalarType::Int,
        ArgSource::PartialCount,
        Origin::Generated,
    );
    let tid = params.vars.temp_int("tid");
    let tree = TreeVars::new(&mut params.vars, ty, tid, "");
    let i = params.vars.temp_int("i");
    let threads = KExpr::int(REDUCTION_THREADS as i64);
    let block = || KExpr::Builtin(Builtin::BlockIdx(0));
    let (start, step) = if multi {
        (
            KExpr::plus(KExpr::times(block(), threads.clone()), KExpr::var(tree.tid)),
            KExpr::times(threads, KExpr::Builtin(Builtin::NumGroups(0))),
        )
    } else {
        (KExpr::var(tree.tid), threads)
    };
    let index = match &offset {
        Some(offset) => KExpr::plus(offset.clone(), KExpr::var(i)),
        None => KExpr::var(i),
    };
    let mut body = vec![
        KStmt::Decl {
            var: tree.tid,
            init: KExpr::Builtin(Builtin::ThreadIdx(0)),
        },
        KStmt::Decl {
            var: tree.acc,
            init: KExpr::Lit(reduction.op.identity(ty)),
        },
        KStmt::For {
            var: i,
            start,
            end: count.clone(),
            step,
            unroll: false,
            body: vec![KStmt::Assign {
                var: tree.acc,
                value: combine(
                    reduction.op,
                    ty,
                    KExpr::var(tree.acc),
                    KExpr::Load {
                        space: Space::Global,
                        array: partials,
                        index: vec![index],
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
    body.push(match result {
        Some(result) => store_partial(&tree, result, KExpr::int(0)),
        None => store_partial(&tree, partials, KExpr::plus(count, block())),
    });
    let (params, args, vars) = params.finish();
    let suffix = if multi { "fold" } else { "final" };
    module.kernels.push(Kernel {
        name: format!("{}_{suffix}", reduction.name),
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
    Launch {
        kernel: module.kernels.len() - 1,
        subset: None,
        block: [REDUCTION_THREADS, 1, 1],
        points_per_block: [REDUCTION_THREADS, 1, 1],
        args,
        max_groups: None,
        align_x: 1,
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
