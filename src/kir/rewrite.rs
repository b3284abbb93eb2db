//! Rewriting the expressions of kernel-IR statements in place: the one walk
//! that the passes replacing loads ([`super::cse`], [`super::vector`]) share;
//! and copies of statements with fresh variables ([`fresh_copy`]).

use std::collections::HashMap;

use crate::kir::{KExpr, KStmt, Var, Vars};

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

/// A copy of `stmts` in which every variable they declare (`Decl` and loop
/// variables) is a fresh one of `vars`, named and typed alike, so that the
/// same code can appear twice in one kernel (each variable is declared once).
pub fn fresh_copy(stmts: &[KStmt], vars: &mut Vars) -> Vec<KStmt> {
    fn declared(stmt: &KStmt, out: &mut Vec<Var>) {
        match stmt {
            KStmt::Decl { var, .. } => out.push(*var),
            KStmt::For { var, body, .. } => {
                out.push(*var);
                body.iter().for_each(|s| declared(s, out));
            }
            KStmt::If {
                then, otherwise, ..
            } => then.iter().chain(otherwise).for_each(|s| declared(s, out)),
            KStmt::Block(body) => body.iter().for_each(|s| declared(s, out)),
            _ => {}
        }
    }
    fn rename(stmt: &mut KStmt, map: &HashMap<Var, Var>) {
        let new = |v: &mut Var| {
            if let Some(n) = map.get(v) {
                *v = *n;
            }
        };
        match stmt {
            KStmt::Decl { var, .. } | KStmt::Assign { var, .. } => new(var),
            KStmt::Store { array, .. } | KStmt::VecStore { array, .. } => new(array),
            KStmt::For { var, body, .. } => {
                new(var);
                body.iter_mut().for_each(|s| rename(s, map));
            }
            KStmt::If {
                then, otherwise, ..
            } => then
                .iter_mut()
                .chain(otherwise.iter_mut())
                .for_each(|s| rename(s, map)),
            KStmt::Block(body) => body.iter_mut().for_each(|s| rename(s, map)),
            KStmt::Barrier | KStmt::Comment(_) => {}
        }
    }
    let mut olds = Vec::new();
    stmts.iter().for_each(|s| declared(s, &mut olds));
    let map: HashMap<Var, Var> = olds
        .into_iter()
        .map(|old| {
            let decl = vars.decl(old).clone();
            vars.decls.push(decl);
            (old, Var(vars.decls.len() as u32 - 1))
        })
        .collect();
    let mut copy = stmts.to_vec();
    for stmt in &mut copy {
        rename(stmt, &map);
        rewrite_stmt(stmt, &mut |e| match e {
            KExpr::Var(v) => map.get(v).map(|n| KExpr::Var(*n)),
            KExpr::Lane(v, lane) => map.get(v).map(|n| KExpr::Lane(*n, *lane)),
            KExpr::Load {
                space,
                array,
                index,
            } => map.get(array).map(|n| KExpr::Load {
                space: *space,
                array: *n,
                index: index.clone(),
            }),
            _ => None,
        });
    }
    copy
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ScalarType;
    use crate::kir::{Origin, Space};

    #[test]
    fn a_fresh_copy_declares_new_variables_and_keeps_the_others() {
        let mut vars = Vars::default();
        let outside = vars.temp_int("n");
        let i = vars.temp_int("i");
        let acc = vars.add("acc", ScalarType::Float, Space::Private, Origin::Generated);
        let stmts = vec![
            KStmt::Decl {
                var: acc,
                init: KExpr::Lit(crate::ir::Value::Float(0.0)),
            },
            KStmt::For {
                var: i,
                start: KExpr::int(0),
                end: KExpr::var(outside),
                step: KExpr::int(1),
                unroll: false,
                body: vec![KStmt::Assign {
                    var: acc,
                    value: KExpr::plus(KExpr::var(acc), KExpr::var(i)),
                }],
            },
        ];
        let copy = fresh_copy(&stmts, &mut vars);
        let (
            KStmt::Decl { var: acc2, .. },
            KStmt::For {
                var: i2, end, body, ..
            },
        ) = (&copy[0], &copy[1])
        else {
            panic!("same shape: {copy:?}")
        };
        assert!(*acc2 != acc && *i2 != i, "declared variables are new");
        assert_eq!(vars.decl(*acc2).hint, "acc");
        assert_eq!(vars.decl(*acc2).ty, ScalarType::Float);
        assert_eq!(
            *end,
            KExpr::var(outside),
            "a variable declared outside stays"
        );
        assert_eq!(
            body[0],
            KStmt::Assign {
                var: *acc2,
                value: KExpr::plus(KExpr::var(*acc2), KExpr::var(*i2)),
            }
        );
    }
}
