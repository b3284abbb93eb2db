//! Rewriting the expressions of kernel-IR statements in place: the one walk
//! that the passes replacing loads ([`super::cse`], [`super::vector`]) share.

use crate::kir::{KExpr, KStmt};

/// Replaces, in every expression of `stmt` (and of the statements it
/// holds), each sub-expression `f` maps, outermost first: a replaced
/// expression is not looked into again.
pub fn rewrite_stmt(stmt: &mut KStmt, f: &mut dyn FnMut(&KExpr) -> Option<KExpr>) {
    match stmt {
        KStmt::Decl { init: e, .. } | KStmt::Assign { value: e, .. } => rewrite_expr(e, f),
        KStmt::Store { index, value, .. } => {
            index.iter_mut().for_each(|i| rewrite_expr(i, f));
            rewrite_expr(value, f);
        }
        KStmt::VecStore { index, values, .. } => {
            rewrite_expr(index, f);
            values.iter_mut().for_each(|v| rewrite_expr(v, f));
        }
        KStmt::For {
            start,
            end,
            step,
            body,
            ..
        } => {
            for e in [start, end, step] {
                rewrite_expr(e, f);
            }
            body.iter_mut().for_each(|s| rewrite_stmt(s, f));
        }
        KStmt::If {
            cond,
            then,
            otherwise,
        } => {
            rewrite_expr(cond, f);
            then.iter_mut()
                .chain(otherwise.iter_mut())
                .for_each(|s| rewrite_stmt(s, f));
        }
        KStmt::Block(body) => body.iter_mut().for_each(|s| rewrite_stmt(s, f)),
        KStmt::Barrier | KStmt::Comment(_) => {}
    }
}

/// [`rewrite_stmt`] for one expression.
pub fn rewrite_expr(e: &mut KExpr, f: &mut dyn FnMut(&KExpr) -> Option<KExpr>) {
    if let Some(new) = f(e) {
        *e = new;
        return;
    }
    match e {
        KExpr::Lit(_) | KExpr::Var(_) | KExpr::Builtin(_) | KExpr::Lane(..) => {}
        KExpr::Load { index, .. } => index.iter_mut().for_each(|i| rewrite_expr(i, f)),
        KExpr::VecLoad { index, .. } => rewrite_expr(index, f),
        KExpr::Unary(_, a) | KExpr::Cast(_, a) | KExpr::ShuffleDown(a, _) => rewrite_expr(a, f),
        KExpr::Binary(_, a, b) => {
            rewrite_expr(a, f);
            rewrite_expr(b, f);
        }
        KExpr::Select(c, a, b) => {
            rewrite_expr(c, f);
            rewrite_expr(a, f);
            rewrite_expr(b, f);
        }
        KExpr::Call { args, .. } | KExpr::Helper(_, args) => {
            args.iter_mut().for_each(|a| rewrite_expr(a, f))
        }
    }
}
