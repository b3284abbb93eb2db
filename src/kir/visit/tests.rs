use super::*;
use crate::ir::{BinaryOp, ScalarType, Value};
use crate::kir::{Origin, Space, Var, Vars};

/// `acc = 0; for (i = 0; i < n; i++) { if (i < 3) { out[i] = a[i] + 1; } else { acc = acc + a[i]; } }`
fn nest() -> (Vec<KStmt>, Var, Var, Var, Var, Var) {
    let mut vars = Vars::default();
    let n = vars.temp_int("n");
    let i = vars.temp_int("i");
    let acc = vars.add("acc", ScalarType::Float, Space::Private, Origin::Generated);
    let a = vars.add("a", ScalarType::Float, Space::Global, Origin::Program);
    let out = vars.add("out", ScalarType::Float, Space::Global, Origin::Program);
    let load = KExpr::Load {
        space: Space::Global,
        array: a,
        index: vec![KExpr::var(i)],
    };
    let body = vec![
        KStmt::Decl {
            var: acc,
            init: KExpr::Lit(Value::Float(0.0)),
        },
        KStmt::For {
            var: i,
            start: KExpr::int(0),
            end: KExpr::var(n),
            step: KExpr::int(1),
            unroll: false,
            body: vec![KStmt::If {
                cond: KExpr::bin(BinaryOp::Lt, KExpr::var(i), KExpr::int(3)),
                then: vec![KStmt::Store {
                    space: Space::Global,
                    array: out,
                    index: vec![KExpr::var(i)],
                    value: KExpr::plus(load.clone(), KExpr::int(1)),
                }],
                otherwise: vec![KStmt::Block(vec![KStmt::Assign {
                    var: acc,
                    value: KExpr::plus(KExpr::var(acc), load),
                }])],
            }],
        },
    ];
    (body, n, i, acc, a, out)
}

fn kind(s: &KStmt) -> &'static str {
    match s {
        KStmt::Decl { .. } => "decl",
        KStmt::Assign { .. } => "assign",
        KStmt::Store { .. } => "store",
        KStmt::VecStore { .. } => "vecstore",
        KStmt::For { .. } => "for",
        KStmt::If { .. } => "if",
        KStmt::Block(_) => "block",
        KStmt::Barrier => "barrier",
        KStmt::Comment(_) => "comment",
    }
}

#[test]
fn statements_come_in_program_order_parents_first() {
    let (body, ..) = nest();
    let mut seen = Vec::new();
    for_each_stmt(&body, |s| seen.push(kind(s)));
    assert_eq!(seen, ["decl", "for", "if", "store", "block", "assign"]);
}

#[test]
fn expressions_come_in_evaluation_order_parents_first() {
    let (body, n, i, acc, a, _) = nest();
    let mut vars_read = Vec::new();
    let mut loads = 0;
    for_each_expr(&body, |e| match e {
        KExpr::Var(v) => vars_read.push(*v),
        KExpr::Load { array, .. } => {
            assert_eq!(*array, a);
            loads += 1;
        }
        _ => {}
    });
    // The loop's end, the condition, the store's index, the loaded index;
    // then the else branch: acc and the loaded index.
    assert_eq!(vars_read, [n, i, i, i, acc, i]);
    assert_eq!(loads, 2);
}

#[test]
fn a_visitor_that_does_not_walk_on_stops_there() {
    struct OutsideBranches(usize);
    impl Visitor for OutsideBranches {
        fn visit_stmt(&mut self, stmt: &KStmt) {
            self.0 += 1;
            if !matches!(stmt, KStmt::If { .. }) {
                walk_stmt(self, stmt);
            }
        }
    }
    let (body, ..) = nest();
    let mut count = OutsideBranches(0);
    count.visit_block(&body);
    assert_eq!(count.0, 3, "decl, for, if: nothing inside the branches");
}

#[test]
fn a_rewrite_replaces_outermost_first_and_does_not_look_inside() {
    let (mut body, _, i, _, a, _) = nest();
    let mut calls = 0;
    for stmt in &mut body {
        rewrite_stmt(stmt, &mut |e| {
            calls += 1;
            matches!(e, KExpr::Load { .. }).then(|| KExpr::int(7))
        });
    }
    let mut loads = 0;
    let mut reads_of_i = 0;
    for_each_expr(&body, |e| match e {
        KExpr::Load { .. } => loads += 1,
        KExpr::Var(v) if *v == i => reads_of_i += 1,
        _ => {}
    });
    assert_eq!(loads, 0);
    assert_eq!(
        reads_of_i, 2,
        "the condition and the store's index; not the loads'"
    );
    let _ = a;
    // Every node outside the loads, and each load itself, was offered once.
    assert_eq!(calls, 14);
}

#[test]
fn every_statement_list_can_be_edited_in_place() {
    let (mut body, _, _, acc, ..) = nest();
    let mut lists = 0;
    for_each_block_mut(&mut body, |list| {
        lists += 1;
        list.retain(|s| !matches!(s, KStmt::Assign { var, .. } if *var == acc));
    });
    // The body, the loop's, both branches and the block.
    assert_eq!(lists, 5);
    let mut assigns = 0;
    for_each_stmt(&body, |s| {
        assigns += usize::from(matches!(s, KStmt::Assign { .. }))
    });
    assert_eq!(assigns, 0);
}

#[test]
fn a_statement_replaced_is_walked_as_replaced() {
    let (mut body, ..) = nest();
    let mut seen = Vec::new();
    for_each_stmt_mut(&mut body, |s| {
        seen.push(kind(s));
        if let KStmt::If { then, .. } = s {
            *s = KStmt::Block(std::mem::take(then));
        }
    });
    assert_eq!(seen, ["decl", "for", "if", "store"]);
    assert!(matches!(&body[1], KStmt::For { body, .. } if matches!(body[0], KStmt::Block(_))));
}

#[test]
fn a_mutable_visitor_reaches_every_expression() {
    struct Bump;
    impl VisitorMut for Bump {
        fn visit_expr_mut(&mut self, expr: &mut KExpr) {
            if let KExpr::Lit(Value::Int(k)) = expr {
                *k += 10;
            }
            walk_expr_mut(self, expr);
        }
    }
    let (mut body, ..) = nest();
    Bump.visit_block_mut(&mut body);
    let mut ints = Vec::new();
    for_each_expr(&body, |e| {
        if let KExpr::Lit(Value::Int(k)) = e {
            ints.push(*k);
        }
    });
    // The loop's start and step, the condition's 3, the store's + 1.
    assert_eq!(ints, [10, 11, 13, 11]);
}
