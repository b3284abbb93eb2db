//! Every grid and table access of the iterate, with the loops around it.
//!
//! The bounds checks and the footprints both start from this list: for each
//! stencil part and reduction part, its subset and each `[t]f[o0][o1]` it loads
//! or stores, with the `for` loops enclosing it (their variables may appear in
//! offsets and table indices).

use crate::ir::{Expr, ExprKind, GridRef, LocalId, Program, Stmt, Subset, TableId};
use crate::source::Span;

/// A part of the iterate: one `subset : ...` of a stencil or of a reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PartId {
    /// Part `part` of stencil `stencil`.
    Stencil {
        /// Index into `Iterate::stencils`.
        stencil: usize,
        /// Index into `Stencil::parts`.
        part: usize,
    },
    /// Part `part` of reduction `reduction`.
    Reduction {
        /// Index into `Iterate::reductions`.
        reduction: usize,
        /// Index into `Reduction::parts`.
        part: usize,
    },
}

/// An enclosing `for var in lo..hi` loop (both ends inclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoopRange {
    /// The loop variable.
    pub var: LocalId,
    /// First value.
    pub lo: i64,
    /// Last value; the loop runs no iteration when `hi < lo`.
    pub hi: i64,
}

/// Whether an access reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    /// A read (`ExprKind::Load`).
    Load,
    /// A write (`Stmt::Store`).
    Store,
}

/// One grid reference in a part.
#[derive(Clone, Debug)]
pub struct GridAccess<'p> {
    /// Read or write.
    pub kind: AccessKind,
    /// The reference.
    pub target: &'p GridRef,
    /// Where it is written (the load expression, or the store's target).
    pub span: Span,
    /// The loops around it, outermost first.
    pub loops: Vec<LoopRange>,
}

/// One coefficient-table read in a part.
#[derive(Clone, Debug)]
pub struct TableAccess<'p> {
    /// The table.
    pub table: TableId,
    /// One index per table dimension.
    pub index: &'p [Expr],
    /// Where it is written.
    pub span: Span,
    /// The loops around it, outermost first.
    pub loops: Vec<LoopRange>,
}

/// The accesses of one part.
#[derive(Clone, Debug)]
pub struct PartAccesses<'p> {
    /// Which part.
    pub id: PartId,
    /// The points it runs at.
    pub subset: &'p Subset,
    /// Where the part is written.
    pub span: Span,
    /// Its grid references, in program order.
    pub grids: Vec<GridAccess<'p>>,
    /// Its table reads, in program order.
    pub tables: Vec<TableAccess<'p>>,
}

/// The accesses of every part of the iterate: stencils in order, then reductions.
pub fn iterate_accesses(program: &Program) -> Vec<PartAccesses<'_>> {
    let Some(iterate) = &program.iterate else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (s, stencil) in iterate.stencils.iter().enumerate() {
        for (p, part) in stencil.parts.iter().enumerate() {
            let body = body_accesses(&part.body);
            out.push(PartAccesses {
                id: PartId::Stencil {
                    stencil: s,
                    part: p,
                },
                subset: &part.subset,
                span: part.span,
                grids: body.grids,
                tables: body.tables,
            });
        }
    }
    for (r, reduction) in iterate.reductions.iter().enumerate() {
        for (p, part) in reduction.parts.iter().enumerate() {
            let value = expr_accesses(&part.value);
            out.push(PartAccesses {
                id: PartId::Reduction {
                    reduction: r,
                    part: p,
                },
                subset: &part.subset,
                span: part.span,
                grids: value.grids,
                tables: value.tables,
            });
        }
    }
    out
}

/// The accesses of a statement list (a stencil part's body), in program order.
#[derive(Clone, Debug, Default)]
pub struct BodyAccesses<'p> {
    /// Its grid references.
    pub grids: Vec<GridAccess<'p>>,
    /// Its table reads.
    pub tables: Vec<TableAccess<'p>>,
}

/// The accesses of a stencil part's body, with the loops of the body around them.
pub fn body_accesses(body: &[Stmt]) -> BodyAccesses<'_> {
    let mut acc = BodyAccesses::default();
    collect_stmts(body, &mut Vec::new(), &mut acc);
    acc
}

/// The accesses of one expression outside any loop (a reduction part's value).
pub fn expr_accesses(expr: &Expr) -> BodyAccesses<'_> {
    let mut acc = BodyAccesses::default();
    collect_expr(expr, &[], &mut acc);
    acc
}

fn collect_stmts<'p>(body: &'p [Stmt], loops: &mut Vec<LoopRange>, acc: &mut BodyAccesses<'p>) {
    for stmt in body {
        match stmt {
            Stmt::Assign { value, .. } => collect_expr(value, loops, acc),
            Stmt::Store {
                target,
                value,
                span,
            } => {
                collect_expr(value, loops, acc);
                for o in &target.offset {
                    collect_expr(o, loops, acc);
                }
                acc.grids.push(GridAccess {
                    kind: AccessKind::Store,
                    target,
                    span: *span,
                    loops: loops.clone(),
                });
            }
            Stmt::For {
                var, lo, hi, body, ..
            } => {
                loops.push(LoopRange {
                    var: *var,
                    lo: *lo,
                    hi: *hi,
                });
                collect_stmts(body, loops, acc);
                loops.pop();
            }
        }
    }
}

fn collect_expr<'p>(expr: &'p Expr, loops: &[LoopRange], acc: &mut BodyAccesses<'p>) {
    // `Expr::visit` hands out references tied to the closure call, so walk by
    // hand to keep the `'p` lifetime of the program.
    match &expr.kind {
        ExprKind::Load(target) => {
            acc.grids.push(GridAccess {
                kind: AccessKind::Load,
                target,
                span: expr.span,
                loops: loops.to_vec(),
            });
            for o in &target.offset {
                collect_expr(o, loops, acc);
            }
        }
        ExprKind::Table { table, index } => {
            acc.tables.push(TableAccess {
                table: *table,
                index,
                span: expr.span,
                loops: loops.to_vec(),
            });
            for i in index {
                collect_expr(i, loops, acc);
            }
        }
        ExprKind::Literal(_)
        | ExprKind::Param(_)
        | ExprKind::Const(_)
        | ExprKind::Local(_)
        | ExprKind::Reduction(_) => {}
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => collect_expr(a, loops, acc),
        ExprKind::Binary(_, a, b) => {
            collect_expr(a, loops, acc);
            collect_expr(b, loops, acc);
        }
        ExprKind::Select {
            cond,
            then,
            otherwise,
        } => {
            collect_expr(cond, loops, acc);
            collect_expr(then, loops, acc);
            collect_expr(otherwise, loops, acc);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| collect_expr(a, loops, acc)),
    }
}

/// The loops (of `loops`) whose variable `expr` uses.
pub fn loops_used(expr: &Expr, loops: &[LoopRange]) -> Vec<LoopRange> {
    let mut used = Vec::new();
    expr.visit(&mut |e| {
        if let ExprKind::Local(l) = e.kind {
            if let Some(r) = loops.iter().find(|r| r.var == l) {
                if !used.contains(r) {
                    used.push(*r);
                }
            }
        }
    });
    used
}
