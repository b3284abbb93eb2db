//! Shared loads of unrolled straight-line code: the register window of a
//! streaming run.
//!
//! When lowering unrolls a thread's run of consecutive points, neighbouring
//! points read the same elements (point `p` at offset `+1` is point `p + 1` at
//! offset `0`). [`share_loads`] gives each such element one private variable,
//! loaded once at the top of the run and read by every point, so that both the
//! printed code and the model's instruction count (`model::instr`) see
//! one load per distinct element.
//!
//! A load is shared only where that cannot change what the code computes:
//! - it is evaluated unconditionally somewhere in the run (not only under an
//!   `if`, a `for`, a `?:` branch or the right side of `&&`/`||`), so loading
//!   it at the top is a load the run performs anyway (never one out of bounds);
//! - nothing in the run stores into its array (each field level is its own
//!   buffer, so a store into another array cannot change it);
//! - its index reads no variable declared inside the run, and no other load.
//!
//! Occurrences under conditions are replaced too: the value is the same.

use std::collections::BTreeSet;

use crate::ir::BinaryOp;
use crate::kir::visit::{self, for_each_expr, for_each_stmt, walk_expr, walk_stmt, Visitor};
use crate::kir::{KExpr, KStmt, Origin, Space, Var, Vars};

/// A load's identity: address space, array and index expressions.
pub(crate) type LoadKey = (Space, Var, Vec<KExpr>);

/// Gives every load that the straight-line `body` performs more than once one
/// private variable declared at the top of `body` (in first-use order, so every
/// shared load is issued before the code that uses it); returns how many.
pub fn share_loads(body: &mut Vec<KStmt>, vars: &mut Vars) -> usize {
    let mut stored = BTreeSet::new();
    let mut declared = BTreeSet::new();
    scan_writes(body, &mut stored, &mut declared);
    let mut unconditional: Vec<LoadKey> = Vec::new();
    for stmt in body.iter() {
        unconditional_loads(stmt, &mut unconditional);
    }
    let mut counts = Counts::default();
    for stmt in body.iter() {
        count_loads(stmt, &mut counts);
    }
    let mut chosen: Vec<(LoadKey, Var)> = Vec::new();
    for key in unconditional {
        let (space, array, index) = &key;
        if !matches!(space, Space::Global | Space::Shared)
            || stored.contains(array)
            || counts.get(&key) < 2
            || !index_is_invariant(index, &declared)
            || chosen.iter().any(|(k, _)| *k == key)
        {
            continue;
        }
        // Numbered per array in first-use order: `a_t0_r0`, `a_t0_r1`, ...
        let number = chosen.iter().filter(|((_, a, _), _)| a == array).count();
        let decl = vars.decl(*array);
        let (hint, ty) = (format!("{}_r{number}", decl.hint), decl.ty);
        let var = vars.add(hint, ty, Space::Private, Origin::Derived);
        chosen.push((key, var));
    }
    if chosen.is_empty() {
        return 0;
    }
    for stmt in body.iter_mut() {
        rewrite_stmt(stmt, &chosen);
    }
    let mut out: Vec<KStmt> = chosen
        .iter()
        .map(|((space, array, index), var)| KStmt::Decl {
            var: *var,
            init: KExpr::Load {
                space: *space,
                array: *array,
                index: index.clone(),
            },
        })
        .collect();
    let shared = out.len();
    out.append(body);
    *body = out;
    shared
}

/// How often each load occurs (loads are compared by value: few per run).
#[derive(Default)]
struct Counts(Vec<(LoadKey, usize)>);

impl Counts {
    fn add(&mut self, key: LoadKey) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => self.0.push((key, 1)),
        }
    }

    fn get(&self, key: &LoadKey) -> usize {
        self.0.iter().find(|(k, _)| k == key).map_or(0, |(_, n)| *n)
    }
}

/// Arrays stored into, and variables declared, anywhere in `body`.
pub(crate) fn scan_writes(
    body: &[KStmt],
    stored: &mut BTreeSet<Var>,
    declared: &mut BTreeSet<Var>,
) {
    for_each_stmt(body, |stmt| match stmt {
        KStmt::Decl { var, .. } | KStmt::For { var, .. } => {
            declared.insert(*var);
        }
        KStmt::Store { array, .. } | KStmt::VecStore { array, .. } => {
            stored.insert(*array);
        }
        _ => {}
    });
}

/// Whether an index reads only variables declared before the run, and no memory.
pub(crate) fn index_is_invariant(index: &[KExpr], declared: &BTreeSet<Var>) -> bool {
    let mut ok = true;
    for e in index {
        e.visit(&mut |node| match node {
            KExpr::Var(v) if declared.contains(v) => ok = false,
            KExpr::Load { .. } | KExpr::VecLoad { .. } | KExpr::ShuffleDown(..) => ok = false,
            _ => {}
        });
    }
    ok
}

/// The loads a statement always evaluates, in evaluation order.
pub(crate) fn unconditional_loads(stmt: &KStmt, out: &mut Vec<LoadKey>) {
    UnconditionalLoads(out).visit_stmt(stmt);
}

struct UnconditionalLoads<'o>(&'o mut Vec<LoadKey>);

impl Visitor for UnconditionalLoads<'_> {
    fn visit_stmt(&mut self, stmt: &KStmt) {
        // A loop may run no iteration; a branch may not run.
        if !matches!(stmt, KStmt::For { .. } | KStmt::If { .. }) {
            walk_stmt(self, stmt);
        }
    }

    fn visit_expr(&mut self, e: &KExpr) {
        match e {
            KExpr::Load {
                space,
                array,
                index,
            } => {
                walk_expr(self, e);
                self.0.push((*space, *array, index.clone()));
            }
            // The right side of `&&` and `||` runs only when the left side says so.
            KExpr::Binary(BinaryOp::And | BinaryOp::Or, a, _) => self.visit_expr(a),
            // Only the chosen side of `?:` is evaluated.
            KExpr::Select(c, _, _) => self.visit_expr(c),
            KExpr::ShuffleDown(..) => {}
            _ => walk_expr(self, e),
        }
    }
}

fn count_loads(stmt: &KStmt, counts: &mut Counts) {
    for_each_expr(std::slice::from_ref(stmt), |node| {
        if let KExpr::Load {
            space,
            array,
            index,
        } = node
        {
            counts.add((*space, *array, index.clone()));
        }
    });
}

/// Replaces each shared load by its variable.
fn rewrite_stmt(stmt: &mut KStmt, replace: &[(LoadKey, Var)]) {
    visit::rewrite_stmt(stmt, &mut |e| match e {
        KExpr::Load {
            space,
            array,
            index,
        } => replace
            .iter()
            .find(|((s, a, i), _)| s == space && a == array && i == index)
            .map(|(_, var)| KExpr::Var(*var)),
        _ => None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{ScalarType, Value};

    fn setup() -> (Vars, Var, Var, Var, Var) {
        let mut vars = Vars::default();
        let input = vars.add("a_t0", ScalarType::Float, Space::Global, Origin::Program);
        let output = vars.add("a_t1", ScalarType::Float, Space::Global, Origin::Program);
        let row = vars.temp_int("iy0");
        let acc = vars.add("acc", ScalarType::Float, Space::Private, Origin::Program);
        (vars, input, output, row, acc)
    }

    fn load(array: Var, row: Var, k: i64) -> KExpr {
        KExpr::Load {
            space: Space::Global,
            array,
            index: vec![KExpr::plus(KExpr::var(row), KExpr::int(k))],
        }
    }

    fn store(array: Var, row: Var, k: i64, value: KExpr) -> KStmt {
        KStmt::Store {
            space: Space::Global,
            array,
            index: vec![KExpr::plus(KExpr::var(row), KExpr::int(k))],
            value,
        }
    }

    fn sum(a: KExpr, b: KExpr) -> KExpr {
        KExpr::Binary(BinaryOp::Add, Box::new(a), Box::new(b))
    }

    fn loads_in(body: &[KStmt]) -> usize {
        let mut counts = Counts::default();
        body.iter().for_each(|s| count_loads(s, &mut counts));
        counts.0.iter().map(|(_, n)| n).sum()
    }

    #[test]
    fn a_two_point_run_loads_its_shared_row_once() {
        let (mut vars, input, output, row, _) = setup();
        // Point 0 reads rows -1, 0, 1; point 1 reads rows 0, 1, 2: 4 distinct of 6.
        let point = |p: i64| {
            store(
                output,
                row,
                p,
                sum(
                    sum(load(input, row, p - 1), load(input, row, p)),
                    load(input, row, p + 1),
                ),
            )
        };
        let mut body = vec![KStmt::Block(vec![point(0)]), KStmt::Block(vec![point(1)])];
        assert_eq!(share_loads(&mut body, &mut vars), 2);
        // Rows 0 and 1 are shared: two declarations, then 2 loads left inline.
        assert!(matches!(
            &body[0],
            KStmt::Decl {
                init: KExpr::Load { .. },
                ..
            }
        ));
        assert!(matches!(
            &body[1],
            KStmt::Decl {
                init: KExpr::Load { .. },
                ..
            }
        ));
        assert_eq!(loads_in(&body), 4);
    }

    #[test]
    fn a_load_after_a_store_into_its_array_stays() {
        let (mut vars, input, _, row, _) = setup();
        let mut body = vec![
            store(input, row, 0, load(input, row, 1)),
            store(input, row, 2, load(input, row, 1)),
        ];
        let before = body.clone();
        assert_eq!(share_loads(&mut body, &mut vars), 0);
        assert_eq!(body, before);
    }

    #[test]
    fn a_load_only_under_a_condition_stays() {
        let (mut vars, input, output, row, _) = setup();
        let guarded = |k| KStmt::If {
            cond: KExpr::bin(BinaryOp::Lt, KExpr::var(row), KExpr::int(10)),
            then: vec![store(output, row, k, load(input, row, 5))],
            otherwise: vec![],
        };
        let select = KExpr::Select(
            Box::new(KExpr::bin(BinaryOp::Lt, KExpr::var(row), KExpr::int(3))),
            Box::new(load(input, row, 5)),
            Box::new(KExpr::Lit(Value::Float(0.0))),
        );
        let mut body = vec![guarded(0), guarded(1), store(output, row, 2, select)];
        let before = body.clone();
        assert_eq!(share_loads(&mut body, &mut vars), 0);
        assert_eq!(body, before);
    }

    #[test]
    fn a_load_indexed_by_a_variable_of_the_run_stays() {
        let (mut vars, input, output, _, acc) = setup();
        let k = vars.temp_int("k");
        let read = KExpr::Load {
            space: Space::Global,
            array: input,
            index: vec![KExpr::var(k)],
        };
        let mut body = vec![
            KStmt::Decl {
                var: k,
                init: KExpr::int(3),
            },
            KStmt::Assign {
                var: acc,
                value: read.clone(),
            },
            KStmt::Store {
                space: Space::Global,
                array: output,
                index: vec![KExpr::int(0)],
                value: read,
            },
        ];
        assert_eq!(share_loads(&mut body, &mut vars), 0);
    }
}
