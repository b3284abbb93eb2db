//! What a generated function needs from its surroundings: the parameters,
//! constants, grid sizes and field levels its code mentions (the signature and
//! arguments of every stencil, reduction and sweep function come from these).

use std::collections::{BTreeMap, BTreeSet};

use crate::ir::{Expr, ExprKind, GridId, Program, Stencil, Stmt};

/// Which parameters, constants, grid sizes and field levels a function needs.
#[derive(Debug, Default)]
pub(super) struct Uses {
    pub(super) params: BTreeSet<usize>,
    pub(super) consts: BTreeSet<usize>,
    pub(super) grids: BTreeSet<usize>,
    /// (field, time) to whether the function writes it.
    pub(super) levels: BTreeMap<(usize, i32), bool>,
}

impl Uses {
    fn expr(&mut self, program: &Program, e: &Expr) {
        e.visit(&mut |node| match &node.kind {
            ExprKind::Param(p) => {
                self.params.insert(p.0);
            }
            ExprKind::Const(c) => {
                self.consts.insert(c.0);
            }
            ExprKind::Load(r) => {
                self.grids.insert(program.fields[r.field.0].grid.0);
                self.levels.entry((r.field.0, r.time)).or_insert(false);
            }
            _ => {}
        });
    }

    fn stmts(&mut self, program: &Program, body: &[Stmt]) {
        for stmt in body {
            match stmt {
                Stmt::Assign { value, .. } => self.expr(program, value),
                Stmt::Store { target, value, .. } => {
                    target.offset.iter().for_each(|o| self.expr(program, o));
                    self.expr(program, value);
                    self.grids.insert(program.fields[target.field.0].grid.0);
                    self.levels.insert((target.field.0, target.time), true);
                }
                Stmt::For { body, .. } => self.stmts(program, body),
            }
        }
    }

    fn subset(&mut self, program: &Program, subset: &crate::ir::Subset) {
        for (lo, hi) in &subset.ranges {
            self.expr(program, lo);
            self.expr(program, hi);
        }
    }

    /// What a stencil's function needs.
    pub(super) fn of_stencil(program: &Program, stencil: &Stencil) -> Uses {
        let mut uses = Uses::default();
        for part in &stencil.parts {
            uses.subset(program, &part.subset);
            uses.stmts(program, &part.body);
        }
        uses
    }

    /// What one stencil part needs.
    pub(super) fn of_part(program: &Program, part: &crate::ir::StencilPart) -> Uses {
        let mut uses = Uses::default();
        uses.subset(program, &part.subset);
        uses.stmts(program, &part.body);
        uses
    }

    /// What a reduction's function needs.
    pub(super) fn of_reduction(program: &Program, reduction: &crate::ir::Reduction) -> Uses {
        let mut uses = Uses::default();
        for part in &reduction.parts {
            uses.subset(program, &part.subset);
            uses.expr(program, &part.value);
        }
        uses
    }

    /// The grids whose point index a body uses (grids of fields read or written).
    pub(super) fn grids_indexed(program: &Program, body: &[Stmt], out: &mut BTreeSet<GridId>) {
        let mut uses = Uses::default();
        uses.stmts(program, body);
        out.extend(uses.levels.keys().map(|&(f, _)| program.fields[f].grid));
    }

    /// The grids whose point index an expression uses.
    pub(super) fn grids_in_expr(program: &Program, e: &Expr, out: &mut BTreeSet<GridId>) {
        let mut uses = Uses::default();
        uses.expr(program, e);
        out.extend(uses.levels.keys().map(|&(f, _)| program.fields[f].grid));
    }
}
