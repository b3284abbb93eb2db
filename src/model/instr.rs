//! Instructions per thread, counted on the kernel IR.
//!
//! Each operation costs what it becomes in SASS, as `ptxas` for sm_90 emits it
//! (calibrated on the bench kernels' SASS: `bench/gpu/MODEL.md`): an
//! arithmetic or logic operation 1; a global load or store 1 (`LDG`/`STG`,
//! its constant displacement folded into the address immediate) plus its
//! address — 1 for each distinct row of each array (`IMAD.WIDE` from the row's
//! index or the row before it) and 1 for each distinct row index
//! (`IMAD`), where a row is the index without the literal terms of its
//! innermost axis; a shared or constant access 1; a boundary helper 2 (clamp)
//! or 4 (mirror, wrap); a division 10; `sqrt` 8; `exp`, `log`, `pow` and the
//! trigonometric functions 20; a loop iteration 2 more (increment, compare and
//! branch). Within straight-line code the compiler computes a pure
//! expression once (common-subexpression elimination): an operation whose
//! operands are literals and variables never reassigned, met again, costs
//! nothing — a symmetric coefficient times a value the register window
//! shares, for instance. Rows and shared expressions seen before a loop or a
//! branch stay known inside it; those first seen inside do not leak out.
//! Loops run their literal trip count; a loop starting at a thread index runs
//! `end / step` times on average. An `if` with an `else` (a streaming run's
//! fast path, then its edge path) costs its first branch, which nearly every
//! thread takes; an `if` without one costs its body.
//!
//! Under `--fma` ([`crate::kir::Module::fma`]) a floating-point `a * b + c`
//! or `a * b - c` is one instruction (`FFMA`): NVRTC's `--fmad=true` contracts
//! every such pair, a product other points share included (the NVPTX back-end
//! fuses a multiply into each add that uses it), so the product is neither
//! charged nor remembered as computed.

use std::collections::HashSet;

use crate::ir::{BinaryOp, MathFn, ScalarType};
use crate::kir::visit::for_each_stmt;
use crate::kir::{KExpr, KStmt, Kernel, Space, Var, Vars};

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

/// Counts the instructions of one thread of `kernel`, its floating-point
/// multiply-adds contracted when `fma`.
pub fn count(kernel: &Kernel, fma: bool) -> InstrCount {
    let mut mutable = HashSet::new();
    reassigned(&kernel.body, &mut mutable);
    let mut counter = Counter {
        vars: &kernel.vars,
        exact: true,
        mutable,
        known: Known::default(),
        fma,
        float: false,
    };
    let (total, fp64) = counter.stmts(&kernel.body);
    InstrCount {
        total,
        fp64,
        exact: counter.exact,
    }
}

/// The variables assigned after their declaration, declared more than once,
/// and loop variables: an expression that reads one is not the same value each
/// time it is met.
fn reassigned(body: &[KStmt], out: &mut HashSet<Var>) {
    let mut declared = HashSet::new();
    for_each_stmt(body, |s| match s {
        KStmt::Decl { var, .. } if !declared.insert(*var) => {
            out.insert(*var);
        }
        KStmt::Assign { var, .. } | KStmt::For { var, .. } => {
            out.insert(*var);
        }
        _ => {}
    });
}

/// What the straight-line code so far has computed: pure expressions, the
/// address of each array's rows, and the row indices.
#[derive(Clone, Default)]
struct Known {
    pure: HashSet<String>,
    rows: HashSet<String>,
    row_indices: HashSet<String>,
}

struct Counter<'k> {
    /// The kernel's variables, which know their types.
    vars: &'k Vars,
    exact: bool,
    /// See [`reassigned`].
    mutable: HashSet<Var>,
    known: Known,
    /// Whether `a * b + c` is contracted ([`count`]).
    fma: bool,
    /// Whether the expression being counted is floating point (the type of
    /// what it is assigned to; inside a cast, a condition or an index, not).
    float: bool,
}

fn literal(e: &KExpr) -> Option<f64> {
    match e {
        KExpr::Lit(v) => Some(v.as_f64()),
        _ => None,
    }
}

/// `e` without its literal terms (`ix - 3` is `ix`), as a key.
fn without_literal_terms(e: &KExpr) -> String {
    fn terms<'e>(e: &'e KExpr, out: &mut Vec<&'e KExpr>) {
        match e {
            KExpr::Binary(BinaryOp::Add, a, b) => {
                terms(a, out);
                terms(b, out);
            }
            KExpr::Binary(BinaryOp::Sub, a, b) if matches!(**b, KExpr::Lit(_)) => terms(a, out),
            KExpr::Lit(_) => {}
            _ => out.push(e),
        }
    }
    let mut out = Vec::new();
    terms(e, &mut out);
    format!("{out:?}")
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

    fn value(&mut self, e: &KExpr, ty: ScalarType) -> (f64, f64) {
        self.float = ty.is_float();
        let (n, arithmetic) = self.expr(e);
        self.float = false;
        (
            n,
            if ty == ScalarType::Double {
                arithmetic
            } else {
                0.0
            },
        )
    }

    /// `e` counted as an integer or boolean expression.
    fn not_float(&mut self, e: &KExpr) -> (f64, f64) {
        let float = std::mem::replace(&mut self.float, false);
        let n = self.expr(e);
        self.float = float;
        n
    }

    /// The operands of `a * b ± c` when it is contracted into one `FFMA`:
    /// `(a, b, c)`.
    fn contracted<'e>(&self, e: &'e KExpr) -> Option<(&'e KExpr, &'e KExpr, &'e KExpr)> {
        if !(self.fma && self.float) {
            return None;
        }
        let KExpr::Binary(BinaryOp::Add | BinaryOp::Sub, left, right) = e else {
            return None;
        };
        match (&**left, &**right) {
            (KExpr::Binary(BinaryOp::Mul, a, b), c) | (c, KExpr::Binary(BinaryOp::Mul, a, b)) => {
                Some((a, b, c))
            }
            _ => None,
        }
    }

    /// The statements of a loop body or a branch: what they compute first is
    /// not known after them.
    fn nested(&mut self, body: &[KStmt]) -> (f64, f64) {
        let outer = self.known.clone();
        let cost = self.stmts(body);
        self.known = outer;
        cost
    }

    fn stmt(&mut self, s: &KStmt) -> (f64, f64) {
        match s {
            KStmt::Decl { var, init } | KStmt::Assign { var, value: init } => {
                self.value(init, self.vars.decl(*var).ty)
            }
            KStmt::Store {
                space,
                array,
                index,
                value,
            } => {
                let (n, d) = self.value(value, self.vars.decl(*array).ty);
                (n + self.access(*space, *array, index), d)
            }
            // One store instruction for every lane.
            KStmt::VecStore {
                array,
                index,
                values,
            } => {
                let ty = self.vars.decl(*array).ty;
                let (mut n, mut d) = (0.0, 0.0);
                for value in values {
                    let (vn, vd) = self.value(value, ty);
                    n += vn;
                    d += vd;
                }
                (
                    n + self.access(Space::Global, *array, std::slice::from_ref(index)),
                    d,
                )
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
                let bounds = self.expr(start).0 + self.expr(end).0;
                let (n, d) = self.nested(body);
                (bounds + trips * (n + 2.0), trips * d)
            }
            // The else branch is a streaming run's edge path: nearly every
            // thread takes the first branch (the fast path), so only it counts.
            KStmt::If { cond, then, .. } => {
                let test = self.expr(cond).0;
                let (a, b) = self.nested(then);
                (test + 1.0 + a, b)
            }
            KStmt::Block(body) => self.stmts(body),
            KStmt::Barrier => (1.0, 0.0),
            KStmt::Comment(_) => (0.0, 0.0),
        }
    }

    /// A load or store of `array` at `index`, the value apart.
    fn access(&mut self, space: Space, array: Var, index: &[KExpr]) -> f64 {
        match space {
            Space::Global => {
                let helpers: f64 = index.iter().map(helpers).sum();
                let Some((last, outer)) = index.split_last() else {
                    return 1.0 + helpers;
                };
                let row = format!("{outer:?} {}", without_literal_terms(last));
                let mut n = 1.0 + helpers;
                if self.known.rows.insert(format!("{array:?} {row}")) {
                    n += 1.0;
                }
                if self.known.row_indices.insert(row) {
                    n += 1.0;
                }
                n
            }
            Space::Shared | Space::Constant | Space::Private => 1.0,
        }
    }

    /// Whether `e` is the same value wherever the kernel meets it: only
    /// literals, built-ins and variables never reassigned, no loads.
    fn pure(&self, e: &KExpr) -> bool {
        let mut pure = true;
        e.visit(&mut |s| match s {
            KExpr::Var(v) if self.mutable.contains(v) => pure = false,
            KExpr::Load { .. } | KExpr::VecLoad { .. } | KExpr::ShuffleDown(..) => pure = false,
            _ => {}
        });
        pure
    }

    /// `(instructions, of which arithmetic outside load indices)` of an
    /// expression; a pure operation computed before costs nothing.
    fn expr(&mut self, e: &KExpr) -> (f64, f64) {
        let operation = !matches!(
            e,
            KExpr::Lit(_)
                | KExpr::Var(_)
                | KExpr::Builtin(_)
                | KExpr::Load { .. }
                | KExpr::VecLoad { .. }
                | KExpr::Lane(..)
        );
        if operation && self.pure(e) && !self.known.pure.insert(format!("{e:?}")) {
            return (0.0, 0.0);
        }
        if let Some((a, b, c)) = self.contracted(e) {
            let mut n = (1.0, 1.0);
            for operand in [a, b, c] {
                let (x, y) = self.expr(operand);
                n.0 += x;
                n.1 += y;
            }
            return n;
        }
        let both = |s: &mut Self, own: f64, arithmetic: bool, args: &[&KExpr]| {
            let mut n = (own, if arithmetic { own } else { 0.0 });
            for a in args {
                let (x, y) = s.expr(a);
                n.0 += x;
                n.1 += y;
            }
            n
        };
        match e {
            KExpr::Lit(_) | KExpr::Var(_) | KExpr::Lane(..) => (0.0, 0.0),
            KExpr::Builtin(_) => (1.0, 0.0),
            // One load instruction for every lane.
            KExpr::VecLoad { array, index, .. } => (
                self.access(Space::Global, *array, std::slice::from_ref(index)),
                0.0,
            ),
            KExpr::Load {
                space,
                array,
                index,
            } => (self.access(*space, *array, index), 0.0),
            KExpr::Unary(_, a) => both(self, 1.0, true, &[a]),
            KExpr::Cast(_, a) => {
                let (n, d) = self.not_float(a);
                (n + 1.0, d)
            }
            KExpr::Binary(op, a, b) => {
                let own = if matches!(op, BinaryOp::Div | BinaryOp::Rem) {
                    10.0
                } else {
                    1.0
                };
                let (x, y) = both(self, 0.0, false, &[a, b]);
                (own + x, 1.0 + y)
            }
            KExpr::Select(c, a, b) => {
                let (n, d) = self.not_float(c);
                let (m, e) = both(self, 1.0, false, &[a, b]);
                (n + m, d + e)
            }
            KExpr::Call { func, args, .. } => {
                let args: Vec<&KExpr> = args.iter().collect();
                both(self, call_cost(*func), true, &args)
            }
            KExpr::Helper(h, args) => {
                let float = std::mem::replace(&mut self.float, false);
                let args: Vec<&KExpr> = args.iter().collect();
                let n = both(self, helper_cost(*h), false, &args);
                self.float = float;
                n
            }
            KExpr::ShuffleDown(a, _) => both(self, 2.0, false, &[a]),
        }
    }
}

/// Boundary helpers inside a global index (the rest of the index is the row
/// address, counted once per row).
fn helpers(e: &KExpr) -> f64 {
    let mut n = 0.0;
    e.visit(&mut |s| {
        if let KExpr::Helper(h, _) = s {
            n += helper_cost(*h);
        }
    });
    n
}

fn helper_cost(h: crate::kir::Helper) -> f64 {
    use crate::kir::Helper;
    match h {
        Helper::MinMax | Helper::Inside | Helper::Wrapping(..) => 1.0,
        Helper::Clamp => 2.0,
        Helper::Periodic | Helper::FloatToInt { .. } => 4.0,
        Helper::Mirror => 6.0,
        // Two compares, two sign tests and a select.
        Helper::Extremum(..) => 5.0,
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

    /// The count without `--fma`.
    fn count_plain(kernel: &Kernel) -> InstrCount {
        count(kernel, false)
    }

    #[test]
    fn counts_a_store_of_a_weighted_sum_by_hand() {
        // out[i] = 0.5 * in[i-1] + in[i+1]: the first load 3 (access, the row's
        // address, its index), the second 1 (same row), 1 mul, 1 add, the store 2
        // (access, out's row address; the row index is known) = 8.
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
        let c = count_plain(&kernel(body.clone(), ScalarType::Float));
        assert_eq!(c.total, 8.0);
        assert_eq!(c.fp64, 0.0);
        assert!(c.exact);
        assert_eq!(
            count_plain(&kernel(body.clone(), ScalarType::Double)).fp64,
            2.0
        );
        // Under --fma the multiply and the add are one FFMA: 7, of which one
        // arithmetic instruction in double.
        assert_eq!(
            count(&kernel(body.clone(), ScalarType::Float), true).total,
            7.0
        );
        assert_eq!(count(&kernel(body, ScalarType::Double), true).fp64, 1.0);
    }

    #[test]
    fn fma_contracts_float_multiply_adds_only() {
        let product = || {
            KExpr::bin(
                BinaryOp::Mul,
                KExpr::Lit(Value::Float(0.25)),
                KExpr::var(TX),
            )
        };
        // f = f - 0.25 * tx; g = 0.25 * tx + f, with f and g of type `ty`.
        let kernel_of = |ty| {
            let mut k = kernel(vec![], ScalarType::Float);
            let f = k.vars.add("f", ty, Space::Private, Origin::Generated);
            let g = k.vars.add("g", ty, Space::Private, Origin::Generated);
            k.body = vec![
                KStmt::Assign {
                    var: f,
                    value: KExpr::bin(BinaryOp::Sub, KExpr::var(f), product()),
                },
                KStmt::Assign {
                    var: g,
                    value: KExpr::bin(BinaryOp::Add, product(), KExpr::var(f)),
                },
            ];
            k
        };
        // Two FFMAs in float; the shared product is not remembered (each add
        // takes it into its FFMA).
        assert_eq!(count(&kernel_of(ScalarType::Float), true).total, 2.0);
        assert_eq!(count(&kernel_of(ScalarType::Double), true).fp64, 2.0);
        // Without --fma: the product once (then shared), two adds.
        assert_eq!(count(&kernel_of(ScalarType::Float), false).total, 3.0);
        // Integers are not contracted by --fma.
        assert_eq!(count(&kernel_of(ScalarType::Int), true).total, 3.0);
        // Nor is a product inside a cast: f = (float)(tx * 2 + 1) is two
        // integer instructions and the conversion.
        let mut k = kernel(vec![], ScalarType::Float);
        let f = k
            .vars
            .add("f", ScalarType::Float, Space::Private, Origin::Generated);
        let cast = KExpr::Cast(
            ScalarType::Float,
            Box::new(KExpr::bin(
                BinaryOp::Add,
                KExpr::bin(BinaryOp::Mul, KExpr::var(TX), KExpr::int(2)),
                KExpr::int(1),
            )),
        );
        k.body = vec![KStmt::Assign {
            var: f,
            value: cast,
        }];
        assert_eq!(count(&k, true).total, 3.0);
    }

    #[test]
    fn an_if_else_costs_its_first_branch_the_fast_path() {
        // if (i < 10) out[i] = in[i]; else { out[i] = in[i]; out[i] = in[i]; }
        // The condition 1, the branch 1, the fast path's load 3 (access, row
        // address, row index) and store 2 (access, row address) = 7.
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
        assert_eq!(count_plain(&kernel(body, ScalarType::Float)).total, 7.0);
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
        assert_eq!(
            count_plain(&kernel(vec![fixed], ScalarType::Float)).total,
            18.0
        );
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
            count_plain(&kernel(vec![strided], ScalarType::Float)).total,
            1.25 * 6.0
        );
    }

    /// `in[i + 8 * r + c]` as a two-axis index: row `i + r`, column `c`.
    fn load_at(row: i64, column: i64) -> KExpr {
        KExpr::Load {
            space: Space::Global,
            array: IN,
            index: vec![
                KExpr::plus(KExpr::var(I), KExpr::int(row)),
                KExpr::plus(KExpr::var(TX), KExpr::int(column)),
            ],
        }
    }

    #[test]
    fn loads_along_a_row_share_its_address() {
        // l = in[i][tx-1] + in[i][tx+1] + in[i+1][tx]: the first row's loads 1
        // each plus its address 1 and index 1; the second row again 1 + 1 + 1;
        // two adds = 2 + 2 + 3 + 2 = 9.
        let sum = KExpr::bin(
            BinaryOp::Add,
            KExpr::bin(BinaryOp::Add, load_at(0, -1), load_at(0, 1)),
            load_at(1, 0),
        );
        let body = vec![KStmt::Decl { var: L, init: sum }];
        assert_eq!(count_plain(&kernel(body, ScalarType::Float)).total, 9.0);
    }

    #[test]
    fn a_pure_expression_met_again_costs_nothing_but_not_past_a_reassignment() {
        // i = 0.25 * tx; l = 0.25 * tx: the second product is the first's.
        let product = || {
            KExpr::bin(
                BinaryOp::Mul,
                KExpr::Lit(Value::Float(0.25)),
                KExpr::var(TX),
            )
        };
        let decl = |var| KStmt::Decl {
            var,
            init: product(),
        };
        assert_eq!(
            count_plain(&kernel(vec![decl(I), decl(L)], ScalarType::Float)).total,
            1.0
        );
        // With tx reassigned in between, both are computed.
        let body = vec![
            decl(I),
            KStmt::Assign {
                var: TX,
                value: KExpr::int(3),
            },
            decl(L),
        ];
        assert_eq!(count_plain(&kernel(body, ScalarType::Float)).total, 2.0);
        // Known before a branch, known inside it; first met inside, not after.
        let body = vec![
            KStmt::If {
                cond: KExpr::var(I),
                then: vec![decl(L)],
                otherwise: vec![],
            },
            decl(I),
        ];
        // The branch 1 (condition free), its product 1, the product after it 1.
        assert_eq!(count_plain(&kernel(body, ScalarType::Float)).total, 3.0);
    }
}
