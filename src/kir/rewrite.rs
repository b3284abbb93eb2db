//! Copies of kernel-IR statements with fresh variables ([`fresh_copy`]), so
//! that lowering may emit the same code twice in one kernel.

use std::collections::HashMap;

use crate::kir::visit::{for_each_stmt, for_each_stmt_mut, rewrite_stmt};
use crate::kir::{KExpr, KStmt, Var, Vars};

/// A copy of `stmts` in which every variable they declare (`Decl` and loop
/// variables) is a fresh one of `vars`, named and typed alike, so that the
/// same code can appear twice in one kernel (each variable is declared once).
pub fn fresh_copy(stmts: &[KStmt], vars: &mut Vars) -> Vec<KStmt> {
    let mut olds = Vec::new();
    for_each_stmt(stmts, |s| match s {
        KStmt::Decl { var, .. } | KStmt::For { var, .. } => olds.push(*var),
        _ => {}
    });
    let map: HashMap<Var, Var> = olds
        .into_iter()
        .map(|old| {
            let decl = vars.decl(old).clone();
            vars.decls.push(decl);
            (old, Var(vars.decls.len() as u32 - 1))
        })
        .collect();
    let new = |v: &mut Var| {
        if let Some(n) = map.get(v) {
            *v = *n;
        }
    };
    let mut copy = stmts.to_vec();
    for_each_stmt_mut(&mut copy, |s| match s {
        KStmt::Decl { var, .. } | KStmt::Assign { var, .. } | KStmt::For { var, .. } => new(var),
        KStmt::Store { array, .. } | KStmt::VecStore { array, .. } => new(array),
        _ => {}
    });
    for stmt in &mut copy {
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
