//! Boundary modes in generated C: how far a part reads outside its points (its
//! reach), which decides the peeled border, and the inline helpers that resolve an
//! index outside the grid in the border loops.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::ir::{BinaryOp, BoundaryMode, Expr, ExprKind, GridId, Program, Stmt, UnaryOp, Value};

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
/// `None` when it depends on anything else.
pub(super) fn interval(e: &Expr, loops: &HashMap<usize, (i64, i64)>) -> Option<(i64, i64)> {
    match &e.kind {
        ExprKind::Literal(Value::Int(v)) => Some((*v as i64, *v as i64)),
        ExprKind::Literal(Value::Long(v)) => Some((*v, *v)),
        ExprKind::Local(id) => loops.get(&id.0).copied(),
        ExprKind::Cast(a) if !e.ty.is_float() && !a.ty.is_float() => interval(a, loops),
        ExprKind::Unary(UnaryOp::Neg, a) => interval(a, loops).map(|(lo, hi)| (-hi, -lo)),
        ExprKind::Binary(op, a, b) => {
            let (alo, ahi) = interval(a, loops)?;
            let (blo, bhi) = interval(b, loops)?;
            match op {
                BinaryOp::Add => Some((alo + blo, ahi + bhi)),
                BinaryOp::Sub => Some((alo - bhi, ahi - blo)),
                BinaryOp::Mul => {
                    let products = [alo * blo, alo * bhi, ahi * blo, ahi * bhi];
                    Some((*products.iter().min()?, *products.iter().max()?))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The value of an integer expression made of literals only, if it is one.
pub(super) fn constant(e: &Expr) -> Option<i64> {
    interval(e, &HashMap::new()).and_then(|(lo, hi)| (lo == hi).then_some(lo))
}

/// An inline C helper that generated code may need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Helper {
    /// `sdsl_min`/`sdsl_max` on `long`, for loop bounds.
    MinMax,
    /// `sdsl_clamp(i, n)`.
    Clamp,
    /// `sdsl_mirror(i, n)`.
    Mirror,
    /// `sdsl_periodic(i, n)`.
    Periodic,
    /// `sdsl_inside(i, n)`.
    Inside,
}

impl Helper {
    /// The helper that resolves an index for a mode (`None` for zero and none).
    pub(super) fn for_mode(mode: BoundaryMode) -> Option<Helper> {
        match mode {
            BoundaryMode::Clamp => Some(Helper::Clamp),
            BoundaryMode::Mirror => Some(Helper::Mirror),
            BoundaryMode::Periodic => Some(Helper::Periodic),
            BoundaryMode::Zero | BoundaryMode::None => None,
        }
    }

    /// The C function's name.
    pub(super) fn name(self) -> &'static str {
        match self {
            Helper::MinMax => "sdsl_max",
            Helper::Clamp => "sdsl_clamp",
            Helper::Mirror => "sdsl_mirror",
            Helper::Periodic => "sdsl_periodic",
            Helper::Inside => "sdsl_inside",
        }
    }

    /// The C definition.
    fn definition(self) -> &'static str {
        match self {
            Helper::MinMax => {
                "static inline long sdsl_min(long a, long b) { return a < b ? a : b; }\n\
                 static inline long sdsl_max(long a, long b) { return a > b ? a : b; }\n"
            }
            Helper::Clamp => {
                "/* boundary clamp: the nearest edge element */\n\
                 static inline long sdsl_clamp(long i, long n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }\n"
            }
            Helper::Mirror => {
                "/* boundary mirror: reflected without repeating the edge (-1 reads 1) */\n\
                 static inline long sdsl_mirror(long i, long n)\n\
                 {\n\
                 \x20   long period, m;\n\
                 \x20   if (i >= 0 && i < n) return i;\n\
                 \x20   if (n == 1) return 0;\n\
                 \x20   period = 2 * (n - 1);\n\
                 \x20   m = i % period;\n\
                 \x20   if (m < 0) m += period;\n\
                 \x20   return m < n ? m : period - m;\n\
                 }\n"
            }
            Helper::Periodic => {
                "/* boundary periodic: wrapped around (-1 reads n-1) */\n\
                 static inline long sdsl_periodic(long i, long n)\n\
                 {\n\
                 \x20   long m = i % n;\n\
                 \x20   return m < 0 ? m + n : m;\n\
                 }\n"
            }
            Helper::Inside => {
                "/* boundary zero: reads outside the grid give 0 */\n\
                 static inline int sdsl_inside(long i, long n) { return i >= 0 && i < n; }\n"
            }
        }
    }
}

/// The C definitions of the helpers used, in a fixed order.
pub(super) fn helper_definitions(used: &BTreeSet<Helper>) -> String {
    used.iter()
        .map(|h| h.definition())
        .collect::<Vec<_>>()
        .join("\n")
}
