//! Instructions per thread, counted on the kernel IR.
//!
//! Each operation costs what it becomes in SASS, roughly: an arithmetic or
//! logic operation 1; a global load or store 2 (address and access; index
//! arithmetic is not counted, the compiler folds constant displacements and
//! shares row bases); a shared or constant access 1; a boundary helper 2
//! (clamp) or 4 (mirror, wrap); a division 10; `sqrt` 8; `exp`, `log`, `pow`
//! and the trigonometric functions 20; a loop iteration 2 more (increment,
//! compare and branch). Loops run their literal trip count; a loop starting at
//! a thread index runs `end / step` times on average. An `if` with an `else`
//! (a streaming run's fast path, then its edge path) costs its first branch,
//! which nearly every thread takes; an `if` without one costs its body.

use crate::ir::{BinaryOp, MathFn, ScalarType};
use crate::kir::{KExpr, KStmt, Kernel, Space, Vars};

/// Instructions one thread of a kernel executes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InstrCount {
    /// All instructions per thread.
    pub total: f64,
    /// Of which `double` arithmetic.
    pub fp64: f64,
    /// Whether every loop's trip count was known.
    pub exact: bool,
}

/// Counts the instructions of one thread of `kernel`.
pub fn count(kernel: &Kernel) -> InstrCount {
    let mut counter = Counter {
        vars: &kernel.vars,
        exact: true,
    };
    let (total, fp64) = counter.stmts(&kernel.body);
    InstrCount {
        total,
        fp64,
        exact: counter.exact,
    }
}

struct Counter<'k> {
    /// The kernel's variables, which know their types.
    vars: &'k Vars,
    exact: bool,
}

fn literal(e: &KExpr) -> Option<f64> {
    match e {
        KExpr::Lit(v) => Some(v.as_f64()),
        _ => None,
    }
}

impl Counter<'_> {
    /// `(instructions, of which fp64)` of a statement list.
    fn stmts(&mut self, body: &[KStmt]) -> (f64, f64) {
        let mut total = (0.0, 0.0);
        for s in body {
            let (a, b) = self.stmt(s);
            total.0 += a;
            total.1 += b;
        }
        total
    }

    fn value(&self, e: &KExpr, double: bool) -> (f64, f64) {
        let n = expr(e);
        (n, if double { arithmetic(e) } else { 0.0 })
    }

    fn stmt(&mut self, s: &KStmt) -> (f64, f64) {
        match s {
            KStmt::Decl { var, init } | KStmt::Assign { var, value: init } => {
                let double = self.vars.decl(*var).ty == ScalarType::Double;
                self.value(init, double)
            }
            KStmt::Store { array, value, .. } => {
                let double = self.vars.decl(*array).ty == ScalarType::Double;
                let (n, d) = self.value(value, double);
                (n + 2.0, d)
            }
            KStmt::For {
                start,
                end,
                step,
                body,
                ..
            } => {
                let trips = match (literal(start), literal(end), literal(step)) {
                    (Some(s), Some(e), Some(k)) if k > 0.0 => ((e - s) / k).ceil().max(0.0),
                    (None, Some(e), Some(k)) if k > 0.0 => e / k,
                    _ => {
                        self.exact = false;
                        1.0
                    }
                };
                let (n, d) = self.stmts(body);
                (expr(start) + expr(end) + trips * (n + 2.0), trips * d)
            }
            // The else branch is a streaming run's edge path: nearly every
            // thread takes the first branch (the fast path), so only it counts.
            KStmt::If { cond, then, .. } => {
                let (a, b) = self.stmts(then);
                (expr(cond) + 1.0 + a, b)
            }
            KStmt::Block(body) => self.stmts(body),
            KStmt::Barrier => (1.0, 0.0),
            KStmt::Comment(_) => (0.0, 0.0),
        }
    }
}

/// Instructions of an expression.
pub fn expr(e: &KExpr) -> f64 {
    match e {
        KExpr::Lit(_) | KExpr::Var(_) => 0.0,
        KExpr::Builtin(_) => 1.0,
        KExpr::Load { space, index, .. } => match space {
            Space::Global => 2.0 + index.iter().map(helpers).sum::<f64>(),
            Space::Shared | Space::Constant | Space::Private => 1.0,
        },
        KExpr::Unary(_, a) | KExpr::Cast(_, a) => 1.0 + expr(a),
        KExpr::Binary(op, a, b) => {
            let own = if matches!(op, BinaryOp::Div | BinaryOp::Rem) {
                10.0
            } else {
                1.0
            };
            own + expr(a) + expr(b)
        }
        KExpr::Select(c, a, b) => 1.0 + expr(c) + expr(a) + expr(b),
        KExpr::Call { func, args, .. } => call_cost(*func) + args.iter().map(expr).sum::<f64>(),
        KExpr::Helper(h, args) => helper_cost(*h) + args.iter().map(expr).sum::<f64>(),
        KExpr::ShuffleDown(a, _) => 2.0 + expr(a),
    }
}

/// Boundary helpers inside a global index (the rest of the index is folded).
fn helpers(e: &KExpr) -> f64 {
    let mut n = 0.0;
    e.visit(&mut |s| {
        if let KExpr::Helper(h, _) = s {
            n += helper_cost(*h);
        }
    });
    n
}

/// Floating-point operations of a value: arithmetic outside load indices.
fn arithmetic(e: &KExpr) -> f64 {
    match e {
        KExpr::Binary(_, a, b) => 1.0 + arithmetic(a) + arithmetic(b),
        KExpr::Unary(_, a) => 1.0 + arithmetic(a),
        KExpr::Cast(_, a) => arithmetic(a),
        KExpr::Select(c, a, b) => arithmetic(c) + arithmetic(a) + arithmetic(b),
        KExpr::Call { func, args, .. } => {
            call_cost(*func) + args.iter().map(arithmetic).sum::<f64>()
        }
        _ => 0.0,
    }
}

fn helper_cost(h: crate::kir::Helper) -> f64 {
    use crate::kir::Helper;
    match h {
        Helper::MinMax | Helper::Inside | Helper::Wrapping(..) => 1.0,
        Helper::Clamp => 2.0,
        Helper::Periodic | Helper::FloatToInt { .. } => 4.0,
        Helper::Mirror => 6.0,
        // A guarded integer division: the compare-and-select around the
        // division's own ~20-instruction sequence.
        Helper::Div(_) | Helper::Rem(_) => 24.0,
    }
}

fn call_cost(f: MathFn) -> f64 {
    match f {
        MathFn::Sqrt => 8.0,
        MathFn::Fabs | MathFn::Fmin | MathFn::Fmax | MathFn::Floor | MathFn::Ceil => 1.0,
        _ => 20.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Value;
    use crate::kir::{KParam, Origin, ParamKind, SharedArray, Var};

    /// The variables of the test kernels, in declaration order.
    const OUT: Var = Var(0);
    const IN: Var = Var(1);
    const I: Var = Var(2);
    const T: Var = Var(3);
    const L: Var = Var(4);
    const TX: Var = Var(5);

    /// A kernel with buffers `out` (of `ty`) and `in`, a shared array `t` and
    /// int variables `i`, `l`, `tx`.
    fn kernel(body: Vec<KStmt>, ty: ScalarType) -> Kernel {
        let mut vars = Vars::default();
        let out = vars.add("out", ty, Space::Global, Origin::Program);
        let input = vars.add("in", ScalarType::Float, Space::Global, Origin::Program);
        let i = vars.temp_int("i");
        let t = vars.add("t", ScalarType::Float, Space::Shared, Origin::Generated);
        let l = vars.temp_int("l");
        let tx = vars.temp_int("tx");
        assert_eq!([out, input, i, t, l, tx], [OUT, IN, I, T, L, TX]);
        Kernel {
            name: "k".into(),
            block: [32, 8, 1],
            vars,
            params: vec![
                KParam {
                    var: out,
                    ty,
                    kind: ParamKind::Buffer,
                },
                KParam {
                    var: input,
                    ty: ScalarType::Float,
                    kind: ParamKind::ReadOnlyBuffer,
                },
            ],
            shared: vec![SharedArray {
                var: t,
                ty: ScalarType::Float,
                dims: vec![64],
            }],
            body,
            uses_double: ty == ScalarType::Double,
        }
    }

    #[test]
    fn counts_a_store_of_a_weighted_sum_by_hand() {
        // out[i] = 0.5 * in[i-1] + in[i+1]: 2 loads (2 each), 1 mul, 1 add, store 2 = 8.
        let load = |d: i64| KExpr::Load {
            space: Space::Global,
            array: IN,
            index: vec![KExpr::plus(KExpr::var(I), KExpr::int(d))],
        };
        let value = KExpr::bin(
            BinaryOp::Add,
            KExpr::bin(BinaryOp::Mul, KExpr::Lit(Value::Double(0.5)), load(-1)),
            load(1),
        );
        let body = vec![KStmt::Store {
            space: Space::Global,
            array: OUT,
            index: vec![KExpr::var(I)],
            value,
        }];
        let c = count(&kernel(body.clone(), ScalarType::Float));
        assert_eq!(c.total, 8.0);
        assert_eq!(c.fp64, 0.0);
        assert!(c.exact);
        assert_eq!(count(&kernel(body, ScalarType::Double)).fp64, 2.0);
    }

    #[test]
    fn an_if_else_costs_its_first_branch_the_fast_path() {
        // if (i < 10) out[i] = in[i]; else { out[i] = in[i]; out[i] = in[i]; }
        // The condition 1, the branch 1, the fast path's load 2 and store 2 = 6.
        let copy = KStmt::Store {
            space: Space::Global,
            array: OUT,
            index: vec![KExpr::var(I)],
            value: KExpr::Load {
                space: Space::Global,
                array: IN,
                index: vec![KExpr::var(I)],
            },
        };
        let body = vec![KStmt::If {
            cond: KExpr::bin(BinaryOp::Lt, KExpr::var(I), KExpr::int(10)),
            then: vec![copy.clone()],
            otherwise: vec![copy.clone(), copy],
        }];
        assert_eq!(count(&kernel(body, ScalarType::Float)).total, 6.0);
    }

    #[test]
    fn loops_multiply_their_body_and_a_thread_strided_loop_averages() {
        let store = KStmt::Store {
            space: Space::Shared,
            array: T,
            index: vec![KExpr::var(L)],
            value: KExpr::Load {
                space: Space::Global,
                array: IN,
                index: vec![KExpr::var(L)],
            },
        };
        // for (l = 0; l < 6; l += 2): 3 trips of (2 load + 2 store + 2 loop).
        let fixed = KStmt::For {
            var: L,
            start: KExpr::int(0),
            end: KExpr::int(6),
            step: KExpr::int(2),
            unroll: false,
            body: vec![store.clone()],
        };
        assert_eq!(count(&kernel(vec![fixed], ScalarType::Float)).total, 18.0);
        // for (l = tx; l < 40; l += 32): 40/32 = 1.25 trips on average.
        let strided = KStmt::For {
            var: L,
            start: KExpr::var(TX),
            end: KExpr::int(40),
            step: KExpr::int(32),
            unroll: false,
            body: vec![store],
        };
        assert_eq!(
            count(&kernel(vec![strided], ScalarType::Float)).total,
            1.25 * 6.0
        );
    }
}
