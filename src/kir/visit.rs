//! Walking kernel-IR statements and expressions: the one place that knows which
//! statements and expressions each variant holds, so that a pass says only what
//! it does at the nodes it cares about.
//!
//! [`Visitor`] and [`VisitorMut`] have a default method per kind of node
//! (statement list, statement, expression) that recurses through the matching
//! `walk_*` function; a pass overrides the methods it needs and calls the
//! `walk_*` function to go on into the children (or does not, to stop there).
//! Statements are visited in program order, each statement's own expressions
//! before the statement lists it holds; expressions parents first, operands
//! left to right (the order in which the code evaluates them).
//!
//! For the common cases the closure helpers are shorter: [`for_each_stmt`],
//! [`for_each_expr`], [`for_each_stmt_mut`], [`for_each_block_mut`] and
//! [`rewrite_stmt`] / [`rewrite_expr`].

use crate::kir::{KExpr, KStmt};

/// A read-only walk. Every method's default visits the node's children.
pub trait Visitor {
    /// A statement list: a kernel body, a loop body, a branch or a `{ }` block.
    fn visit_block(&mut self, body: &[KStmt]) {
        walk_block(self, body);
    }

    /// One statement.
    fn visit_stmt(&mut self, stmt: &KStmt) {
        walk_stmt(self, stmt);
    }

    /// One expression (and, by default, its operands).
    fn visit_expr(&mut self, expr: &KExpr) {
        walk_expr(self, expr);
    }
}

/// Visits each statement of `body`.
pub fn walk_block<V: Visitor + ?Sized>(visitor: &mut V, body: &[KStmt]) {
    for stmt in body {
        visitor.visit_stmt(stmt);
    }
}

/// Visits the expressions of `stmt`, then the statement lists it holds (a
/// loop's body; an `if`'s two branches, `then` first).
pub fn walk_stmt<V: Visitor + ?Sized>(visitor: &mut V, stmt: &KStmt) {
    match stmt {
        KStmt::Decl { init: e, .. } | KStmt::Assign { value: e, .. } => visitor.visit_expr(e),
        KStmt::Store { index, value, .. } => {
            index.iter().for_each(|i| visitor.visit_expr(i));
            visitor.visit_expr(value);
        }
        KStmt::VecStore { index, values, .. } => {
            visitor.visit_expr(index);
            values.iter().for_each(|v| visitor.visit_expr(v));
        }
        KStmt::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            for e in [start, end, step] {
                visitor.visit_expr(e);
            }
            visitor.visit_block(body);
        }
        KStmt::If {
            cond,
            then,
            otherwise,
        } => {
            visitor.visit_expr(cond);
            visitor.visit_block(then);
            visitor.visit_block(otherwise);
        }
        KStmt::Block(body) => visitor.visit_block(body),
        KStmt::Barrier | KStmt::Comment(_) => {}
    }
}

/// Visits the operands of `expr`, left to right.
pub fn walk_expr<V: Visitor + ?Sized>(visitor: &mut V, expr: &KExpr) {
    match expr {
        KExpr::Lit(_) | KExpr::Var(_) | KExpr::Builtin(_) | KExpr::Lane(..) => {}
        KExpr::Load { index, .. } => index.iter().for_each(|i| visitor.visit_expr(i)),
        KExpr::VecLoad { index, .. } => visitor.visit_expr(index),
        KExpr::Unary(_, a) | KExpr::Cast(_, a) | KExpr::ShuffleDown(a, _) => visitor.visit_expr(a),
        KExpr::Binary(_, a, b) => {
            visitor.visit_expr(a);
            visitor.visit_expr(b);
        }
        KExpr::Select(c, a, b) => {
            visitor.visit_expr(c);
            visitor.visit_expr(a);
            visitor.visit_expr(b);
        }
        KExpr::Call { args, .. } | KExpr::Helper(_, args) => {
            args.iter().for_each(|a| visitor.visit_expr(a))
        }
    }
}

/// A walk that may change what it visits. Every method's default visits the
/// node's children.
pub trait VisitorMut {
    /// A statement list (a `Vec`, so that a pass may remove or add statements).
    fn visit_block_mut(&mut self, body: &mut Vec<KStmt>) {
        walk_block_mut(self, body);
    }

    /// One statement.
    fn visit_stmt_mut(&mut self, stmt: &mut KStmt) {
        walk_stmt_mut(self, stmt);
    }

    /// One expression (and, by default, its operands).
    fn visit_expr_mut(&mut self, expr: &mut KExpr) {
        walk_expr_mut(self, expr);
    }
}

/// [`walk_block`] for [`VisitorMut`].
pub fn walk_block_mut<V: VisitorMut + ?Sized>(visitor: &mut V, body: &mut [KStmt]) {
    for stmt in body {
        visitor.visit_stmt_mut(stmt);
    }
}

/// [`walk_stmt`] for [`VisitorMut`].
pub fn walk_stmt_mut<V: VisitorMut + ?Sized>(visitor: &mut V, stmt: &mut KStmt) {
    match stmt {
        KStmt::Decl { init: e, .. } | KStmt::Assign { value: e, .. } => visitor.visit_expr_mut(e),
        KStmt::Store { index, value, .. } => {
            index.iter_mut().for_each(|i| visitor.visit_expr_mut(i));
            visitor.visit_expr_mut(value);
        }
        KStmt::VecStore { index, values, .. } => {
            visitor.visit_expr_mut(index);
            values.iter_mut().for_each(|v| visitor.visit_expr_mut(v));
        }
        KStmt::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            for e in [start, end, step] {
                visitor.visit_expr_mut(e);
            }
            visitor.visit_block_mut(body);
        }
        KStmt::If {
            cond,
            then,
            otherwise,
        } => {
            visitor.visit_expr_mut(cond);
            visitor.visit_block_mut(then);
            visitor.visit_block_mut(otherwise);
        }
        KStmt::Block(body) => visitor.visit_block_mut(body),
        KStmt::Barrier | KStmt::Comment(_) => {}
    }
}

/// [`walk_expr`] for [`VisitorMut`].
pub fn walk_expr_mut<V: VisitorMut + ?Sized>(visitor: &mut V, expr: &mut KExpr) {
    match expr {
        KExpr::Lit(_) | KExpr::Var(_) | KExpr::Builtin(_) | KExpr::Lane(..) => {}
        KExpr::Load { index, .. } => index.iter_mut().for_each(|i| visitor.visit_expr_mut(i)),
        KExpr::VecLoad { index, .. } => visitor.visit_expr_mut(index),
        KExpr::Unary(_, a) | KExpr::Cast(_, a) | KExpr::ShuffleDown(a, _) => {
            visitor.visit_expr_mut(a)
        }
        KExpr::Binary(_, a, b) => {
            visitor.visit_expr_mut(a);
            visitor.visit_expr_mut(b);
        }
        KExpr::Select(c, a, b) => {
            visitor.visit_expr_mut(c);
            visitor.visit_expr_mut(a);
            visitor.visit_expr_mut(b);
        }
        KExpr::Call { args, .. } | KExpr::Helper(_, args) => {
            args.iter_mut().for_each(|a| visitor.visit_expr_mut(a))
        }
    }
}

/// Calls `f` on every statement of `body` at any depth, each before the
/// statements it holds.
pub fn for_each_stmt(body: &[KStmt], f: impl FnMut(&KStmt)) {
    struct Stmts<F>(F);
    impl<F: FnMut(&KStmt)> Visitor for Stmts<F> {
        fn visit_stmt(&mut self, stmt: &KStmt) {
            (self.0)(stmt);
            walk_stmt(self, stmt);
        }
        fn visit_expr(&mut self, _: &KExpr) {}
    }
    Stmts(f).visit_block(body);
}

/// Calls `f` on every expression of `body` at any depth (statements in
/// program order, sub-expressions after their parents).
pub fn for_each_expr(body: &[KStmt], f: impl FnMut(&KExpr)) {
    let mut exprs = Exprs(f);
    exprs.visit_block(body);
}

/// Calls `f` on `expr` and every sub-expression, parents first.
pub fn for_each_subexpr(expr: &KExpr, f: impl FnMut(&KExpr)) {
    Exprs(f).visit_expr(expr);
}

struct Exprs<F>(F);

impl<F: FnMut(&KExpr)> Visitor for Exprs<F> {
    fn visit_expr(&mut self, expr: &KExpr) {
        (self.0)(expr);
        walk_expr(self, expr);
    }
}

/// Calls `f` on every statement of `body` at any depth, each before the
/// statements it holds (as `f` left them: a statement `f` replaces is walked
/// as replaced).
pub fn for_each_stmt_mut(body: &mut [KStmt], f: impl FnMut(&mut KStmt)) {
    struct Stmts<F>(F);
    impl<F: FnMut(&mut KStmt)> VisitorMut for Stmts<F> {
        fn visit_stmt_mut(&mut self, stmt: &mut KStmt) {
            (self.0)(stmt);
            walk_stmt_mut(self, stmt);
        }
        fn visit_expr_mut(&mut self, _: &mut KExpr) {}
    }
    walk_block_mut(&mut Stmts(f), body);
}

/// Calls `f` on `body` and on every statement list inside it (loop bodies,
/// branches, blocks), each before the lists its statements hold (as `f` left
/// them), so that `f` may remove or add statements.
pub fn for_each_block_mut(body: &mut Vec<KStmt>, f: impl FnMut(&mut Vec<KStmt>)) {
    struct Blocks<F>(F);
    impl<F: FnMut(&mut Vec<KStmt>)> VisitorMut for Blocks<F> {
        fn visit_block_mut(&mut self, body: &mut Vec<KStmt>) {
            (self.0)(body);
            walk_block_mut(self, body);
        }
        fn visit_expr_mut(&mut self, _: &mut KExpr) {}
    }
    Blocks(f).visit_block_mut(body);
}

/// Replaces, in every expression of `stmt` (and of the statements it
/// holds), each sub-expression `f` maps, outermost first: a replaced
/// expression is not looked into again.
pub fn rewrite_stmt(stmt: &mut KStmt, f: &mut dyn FnMut(&KExpr) -> Option<KExpr>) {
    Rewrite(f).visit_stmt_mut(stmt);
}

/// [`rewrite_stmt`] for one expression.
pub fn rewrite_expr(expr: &mut KExpr, f: &mut dyn FnMut(&KExpr) -> Option<KExpr>) {
    Rewrite(f).visit_expr_mut(expr);
}

struct Rewrite<'f>(&'f mut dyn FnMut(&KExpr) -> Option<KExpr>);

impl VisitorMut for Rewrite<'_> {
    fn visit_expr_mut(&mut self, expr: &mut KExpr) {
        match (self.0)(expr) {
            Some(new) => *expr = new,
            None => walk_expr_mut(self, expr),
        }
    }
}

#[cfg(test)]
mod tests;
