//! Boundary modes in generated C: how far a part reads outside its points (its
//! reach), which decides the peeled border, and the inline helpers that resolve an
//! index outside the grid in the border loops.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::ir::{
    BinaryOp, BoundaryMode, Expr, ExprKind, GridId, Program, ScalarType, Stmt, UnaryOp, Value,
};
pub(super) use crate::kir::helpers::Helper;
use crate::kir::helpers::{self, Spelling};

/// The largest reach (per axis and direction) peeled as a border; farther reads
/// are resolved at every point.
const MAX_PEELED_REACH: i64 = 1 << 31;

/// How far the reads of fields with a boundary mode reach from the current point.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Reach {
    /// No field with a boundary mode is read: nothing to peel.
    Inside,
    /// Per grid, per axis: (lowest offset, highest offset), widened to include 0.
    Known(BTreeMap<GridId, Vec<(i64, i64)>>),
    /// Some offset is not known when the C is written (it uses a parameter):
    /// every read of a field with a boundary mode is resolved at every point.
    Unknown,
}

impl Reach {
    /// Reads only at offset zero stay inside the grid (subsets lie inside their
    /// grid, which is checked before a run): nothing to peel.
    fn simplified(self) -> Reach {
        match &self {
            Reach::Known(map) if map.values().all(|axes| axes.iter().all(|&r| r == (0, 0))) => {
                Reach::Inside
            }
            _ => self,
        }
    }

    fn merge(&mut self, grid: GridId, offsets: Option<Vec<(i64, i64)>>) {
        // Peeling a border wider than any grid axis gains nothing, and its loop
        // bounds (grid size minus reach) could overflow: resolve every read.
        let offsets = offsets.filter(|o| {
            o.iter()
                .all(|&(lo, hi)| lo >= -MAX_PEELED_REACH && hi <= MAX_PEELED_REACH)
        });
        let Some(offsets) = offsets else {
            *self = Reach::Unknown;
            return;
        };
        match self {
            Reach::Unknown => {}
            Reach::Inside => {
                let mut map = BTreeMap::new();
                map.insert(
                    grid,
                    offsets
                        .iter()
                        .map(|&(lo, hi)| (lo.min(0), hi.max(0)))
                        .collect(),
                );
                *self = Reach::Known(map);
            }
            Reach::Known(map) => {
                let entry = map
                    .entry(grid)
                    .or_insert_with(|| vec![(0, 0); offsets.len()]);
                for (have, &(lo, hi)) in entry.iter_mut().zip(&offsets) {
                    have.0 = have.0.min(lo);
                    have.1 = have.1.max(hi);
                }
            }
        }
    }
}

/// The reach of a list of statements (a stencil part's body).
pub(super) fn reach_of_body(program: &Program, body: &[Stmt]) -> Reach {
    let mut reach = Reach::Inside;
    let mut loops = HashMap::new();
    body_reach(program, body, &mut loops, &mut reach);
    reach.simplified()
}

/// The reach of one expression (a reduction part's value).
pub(super) fn reach_of_expr(program: &Program, value: &Expr) -> Reach {
    let mut reach = Reach::Inside;
    expr_reach(program, value, &HashMap::new(), &mut reach);
    reach.simplified()
}

fn body_reach(
    program: &Program,
    body: &[Stmt],
    loops: &mut HashMap<usize, (i64, i64)>,
    reach: &mut Reach,
) {
    for stmt in body {
        match stmt {
            Stmt::Assign { value, .. } => expr_reach(program, value, loops, reach),
            Stmt::Store { target, value, .. } => {
                // Store offsets are inside the grid (checked before running), but
                // they may contain reads in their index expressions.
                for e in &target.offset {
                    expr_reach(program, e, loops, reach);
                }
                expr_reach(program, value, loops, reach);
            }
            Stmt::For {
                var, lo, hi, body, ..
            } => {
                if lo > hi {
                    continue;
                }
                let previous = loops.insert(var.0, (*lo, *hi));
                body_reach(program, body, loops, reach);
                match previous {
                    Some(p) => loops.insert(var.0, p),
                    None => loops.remove(&var.0),
                };
            }
        }
    }
}

fn expr_reach(program: &Program, e: &Expr, loops: &HashMap<usize, (i64, i64)>, reach: &mut Reach) {
    e.visit(&mut |node| {
        if let ExprKind::Load(r) = &node.kind {
            let field = &program.fields[r.field.0];
            if field.boundary != BoundaryMode::None {
                let offsets: Option<Vec<_>> = r.offset.iter().map(|o| interval(o, loops)).collect();
                reach.merge(field.grid, offsets);
            }
        }
    });
}

/// The range of an integer offset expression over the loop variables' ranges, or
/// `None` when it depends on anything else or when some value of a
/// sub-expression leaves its type (it would wrap: the bounds would be wrong).
pub(super) fn interval(e: &Expr, loops: &HashMap<usize, (i64, i64)>) -> Option<(i64, i64)> {
    let (lo, hi) = match &e.kind {
        ExprKind::Literal(Value::Int(v)) => (*v as i64, *v as i64),
        ExprKind::Literal(Value::Long(v)) => (*v, *v),
        ExprKind::Local(id) => loops.get(&id.0).copied()?,
        ExprKind::Cast(a) if !e.ty.is_float() && !a.ty.is_float() => interval(a, loops)?,
        ExprKind::Unary(UnaryOp::Neg, a) => {
            let (lo, hi) = interval(a, loops)?;
            (hi.checked_neg()?, lo.checked_neg()?)
        }
        ExprKind::Binary(op, a, b) => {
            let (alo, ahi) = interval(a, loops)?;
            let (blo, bhi) = interval(b, loops)?;
            match op {
                BinaryOp::Add => (alo.checked_add(blo)?, ahi.checked_add(bhi)?),
                BinaryOp::Sub => (alo.checked_sub(bhi)?, ahi.checked_sub(blo)?),
                BinaryOp::Mul => {
                    let products = [
                        alo.checked_mul(blo)?,
                        alo.checked_mul(bhi)?,
                        ahi.checked_mul(blo)?,
                        ahi.checked_mul(bhi)?,
                    ];
                    (*products.iter().min()?, *products.iter().max()?)
                }
                _ => return None,
            }
        }
        _ => return None,
    };
    let fits = e.ty != ScalarType::Int || (lo >= i32::MIN as i64 && hi <= i32::MAX as i64);
    fits.then_some((lo, hi))
}

/// The value of an integer offset expression when it is known as the C is
/// written, computed in its type as the program computes it.
pub(super) fn constant(program: &Program, e: &Expr) -> Option<i64> {
    helpers::known_value(program, e, &|_| None).map(Value::as_i64)
}

/// The C definitions of the helpers used, in a fixed order.
pub(super) fn helper_definitions(used: &BTreeSet<Helper>) -> String {
    helpers::definitions(used.iter().copied(), Spelling::C)
}
