//! Tidying a part's kernel-IR statements after lowering, so that the emitted
//! code reads as a person would write it: a local declared where it is first
//! assigned (`float acc = 0.0f;`, not a zero then an assignment), and no local
//! left set but never read once a literal condition dropped its branch.

use std::collections::BTreeSet;

use crate::kir::visit::{for_each_block_mut, for_each_expr, for_each_stmt};
use crate::kir::{KExpr, KStmt, Var};

/// Moves each declaration with a literal value down to its variable's first
/// assignment, when that assignment is the first statement of the same list to
/// mention the variable and its value does not read it: the literal would be
/// overwritten unread. Moving a declaration down within its list keeps every
/// use after it.
pub(super) fn declare_at_first_assignment(code: &mut Vec<KStmt>) {
    let mut at = 0;
    while at < code.len() {
        let KStmt::Decl {
            var,
            init: KExpr::Lit(_),
        } = code[at]
        else {
            at += 1;
            continue;
        };
        let first_use = (at + 1..code.len()).find(|&j| mentions(&code[j], var));
        if let Some(j) = first_use {
            if let KStmt::Assign { var: target, value } = &code[j] {
                if *target == var && !reads(value, var) {
                    code[j] = KStmt::Decl {
                        var,
                        init: value.clone(),
                    };
                    code.remove(at);
                    continue;
                }
            }
        }
        at += 1;
    }
}

/// Removes the declarations and assignments of the `locals` that nothing in
/// `code` reads, until none is left: a branch a literal condition dropped may
/// hold a local's only read, and NVRTC warns of a variable set but never used.
/// (Values are pure, so dropping an assignment changes nothing else.)
pub(super) fn drop_unread_locals(code: &mut Vec<KStmt>, locals: &[Var]) {
    loop {
        let mut read = BTreeSet::new();
        for_each_expr(code, |e| {
            if let KExpr::Var(v) = e {
                read.insert(*v);
            }
        });
        let unread: BTreeSet<Var> = locals
            .iter()
            .copied()
            .filter(|v| !read.contains(v))
            .collect();
        if !remove_writes(code, &unread) {
            return;
        }
    }
}

/// Removes every declaration or assignment of a variable of `vars` from `code`,
/// at any depth; whether it removed one.
fn remove_writes(code: &mut Vec<KStmt>, vars: &BTreeSet<Var>) -> bool {
    let mut removed = false;
    for_each_block_mut(code, |list| {
        let before = list.len();
        list.retain(
            |s| !matches!(s, KStmt::Decl { var, .. } | KStmt::Assign { var, .. } if vars.contains(var)),
        );
        removed |= list.len() != before;
    });
    removed
}

/// Whether `expr` reads `var`.
fn reads(expr: &KExpr, var: Var) -> bool {
    let mut found = false;
    expr.visit(&mut |e| found |= matches!(e, KExpr::Var(v) if *v == var));
    found
}

/// Whether `stmt` reads or assigns `var`, at any depth.
pub(crate) fn mentions(stmt: &KStmt, var: Var) -> bool {
    let mut found = false;
    for_each_expr(std::slice::from_ref(stmt), |e| {
        found |= matches!(e, KExpr::Var(v) if *v == var)
    });
    found || assigns(stmt, var)
}

/// Whether `stmt` assigns or declares `var`, at any depth.
fn assigns(stmt: &KStmt, var: Var) -> bool {
    let mut found = false;
    for_each_stmt(
        std::slice::from_ref(stmt),
        |s| found |= matches!(s, KStmt::Decl { var: v, .. } | KStmt::Assign { var: v, .. } | KStmt::For { var: v, .. } if *v == var),
    );
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assign(var: Var, value: KExpr) -> KStmt {
        KStmt::Assign { var, value }
    }

    fn zero(var: Var) -> KStmt {
        KStmt::Decl {
            var,
            init: KExpr::int(0),
        }
    }

    #[test]
    fn a_declaration_moves_to_a_first_assignment_that_does_not_read_it() {
        let (a, b) = (Var(0), Var(1));
        let mut code = vec![
            zero(a),
            zero(b),
            assign(b, KExpr::int(3)),
            assign(a, KExpr::var(b)),
        ];
        declare_at_first_assignment(&mut code);
        assert_eq!(
            format!("{code:?}"),
            format!(
                "{:?}",
                vec![
                    KStmt::Decl {
                        var: b,
                        init: KExpr::int(3)
                    },
                    KStmt::Decl {
                        var: a,
                        init: KExpr::var(b)
                    },
                ]
            )
        );
    }

    #[test]
    fn a_declaration_stays_where_its_literal_is_read_or_its_assignment_is_nested() {
        let (a, b) = (Var(0), Var(1));
        let reads_itself = vec![
            zero(a),
            assign(a, KExpr::plus(KExpr::var(a), KExpr::int(1))),
        ];
        let read_first = vec![
            zero(a),
            zero(b),
            assign(b, KExpr::var(a)),
            assign(a, KExpr::int(2)),
        ];
        let nested = vec![
            zero(a),
            KStmt::If {
                cond: KExpr::int(1),
                then: vec![assign(a, KExpr::int(2))],
                otherwise: vec![],
            },
        ];
        for code in [reads_itself, read_first, nested] {
            let mut folded = code.clone();
            declare_at_first_assignment(&mut folded);
            let declared_first =
                matches!(&folded[0], KStmt::Decl { var, init: KExpr::Lit(_) } if *var == a);
            assert!(declared_first, "{folded:?}");
        }
    }

    #[test]
    fn a_chain_of_unread_locals_goes_as_a_whole_and_read_ones_stay() {
        let (a, b, kept) = (Var(0), Var(1), Var(2));
        let store = KStmt::Store {
            space: crate::kir::Space::Global,
            array: Var(3),
            index: vec![KExpr::int(0)],
            value: KExpr::var(kept),
        };
        let mut code = vec![
            zero(a),
            zero(b),
            zero(kept),
            assign(a, KExpr::int(1)),
            KStmt::If {
                cond: KExpr::int(1),
                then: vec![assign(b, KExpr::var(a))],
                otherwise: vec![],
            },
            assign(kept, KExpr::int(2)),
            store.clone(),
        ];
        drop_unread_locals(&mut code, &[a, b, kept]);
        let expected = vec![
            zero(kept),
            KStmt::If {
                cond: KExpr::int(1),
                then: vec![],
                otherwise: vec![],
            },
            assign(kept, KExpr::int(2)),
            store,
        ];
        assert_eq!(format!("{code:?}"), format!("{expected:?}"));
    }
}
