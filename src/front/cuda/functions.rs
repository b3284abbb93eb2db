//! The functions a kernel of the subset may call besides its own `__device__`
//! functions: the math functions (with the precision each computes in) and
//! the warp shuffles; and the bound on how large inlining device functions
//! may make a kernel.

use crate::diag::Diagnostic;
use crate::source::Span;

use super::ast::{Expr, ExprKind, Function, Scalar, Stmt, StmtKind};

/// The warp shuffles of the subset: `__shfl_sync(mask, v, lane[, width])` and
/// its `up`, `down` and `xor` forms (the emulator runs them with the lanes of a
/// warp in step: see `exec::emu`).
pub const SHUFFLES: &[&str] = &[
    "__shfl_sync",
    "__shfl_up_sync",
    "__shfl_down_sync",
    "__shfl_xor_sync",
];

/// The math functions of the subset: name, the precision it computes in
/// (`None`: overloaded on its arguments, as CUDA's C++ overloads are), and
/// its number of arguments.
pub const MATH: &[(&str, Option<Scalar>, usize)] = &[
    ("sqrtf", Some(Scalar::Float), 1),
    ("rsqrtf", Some(Scalar::Float), 1),
    ("expf", Some(Scalar::Float), 1),
    ("exp2f", Some(Scalar::Float), 1),
    ("logf", Some(Scalar::Float), 1),
    ("log2f", Some(Scalar::Float), 1),
    ("sinf", Some(Scalar::Float), 1),
    ("cosf", Some(Scalar::Float), 1),
    ("tanf", Some(Scalar::Float), 1),
    ("tanhf", Some(Scalar::Float), 1),
    ("fabsf", Some(Scalar::Float), 1),
    ("floorf", Some(Scalar::Float), 1),
    ("ceilf", Some(Scalar::Float), 1),
    ("powf", Some(Scalar::Float), 2),
    ("fminf", Some(Scalar::Float), 2),
    ("fmaxf", Some(Scalar::Float), 2),
    ("fmodf", Some(Scalar::Float), 2),
    ("sqrt", None, 1),
    ("rsqrt", None, 1),
    ("exp", None, 1),
    ("exp2", None, 1),
    ("log", None, 1),
    ("log2", None, 1),
    ("sin", None, 1),
    ("cos", None, 1),
    ("tan", None, 1),
    ("tanh", None, 1),
    ("fabs", None, 1),
    ("floor", None, 1),
    ("ceil", None, 1),
    ("pow", None, 2),
    ("fmin", None, 2),
    ("fmax", None, 2),
    ("fmod", None, 2),
    ("min", None, 2),
    ("max", None, 2),
    ("abs", None, 1),
    ("signbit", None, 1),
    ("isnan", None, 1),
];

/// Whether `name` is a classification of the subset (`signbit`, `isnan`): it
/// takes a floating value and returns an `int` truth value.
pub fn is_predicate(name: &str) -> bool {
    matches!(name, "signbit" | "isnan")
}

/// The type a call of math function `name` converts its arguments to: the
/// type it computes in ([`math_type`]), but for a predicate, whose `int`
/// result says something of a `float` (all arguments `float`) or `double`.
pub fn math_operand_type(name: &str, args: &[Scalar]) -> Scalar {
    if !is_predicate(name) {
        return math_type(name, args);
    }
    if args.iter().all(|a| *a == Scalar::Float) {
        Scalar::Float
    } else {
        Scalar::Double
    }
}

/// The type a call of math function `name` computes in, given its arguments'
/// types: `int` for a predicate ([`is_predicate`]), integers for
/// `min`/`max`/`abs` on integers, else `float` when every argument is `float`
/// (or the name ends in `f`), else `double`.
pub fn math_type(name: &str, args: &[Scalar]) -> Scalar {
    let Some(&(_, fixed, _)) = MATH.iter().find(|(n, _, _)| *n == name) else {
        return Scalar::Double;
    };
    if is_predicate(name) {
        return Scalar::Int;
    }
    if let Some(fixed) = fixed {
        return fixed;
    }
    let common = args.iter().copied().fold(Scalar::Bool, Scalar::common);
    if matches!(name, "min" | "max" | "abs") {
        return common;
    }
    if common == Scalar::Float {
        Scalar::Float
    } else {
        Scalar::Double
    }
}

/// The most function bodies one kernel or function may compile to with every
/// call inlined (functions calling each other twice per level grow as 2^n).
pub const MAX_INLINED: u64 = 10_000;

/// 1 plus the inlined size of every call in `body` of a function of `known`.
pub(super) fn inlined(body: &[Stmt], known: &[Function], span: Span) -> Result<u64, Diagnostic> {
    fn expr_calls(e: &Expr, known: &[Function], total: &mut u64) {
        let mut visit = |e: &Expr| expr_calls(e, known, total);
        match &e.kind {
            ExprKind::Call { name, args } => {
                for arg in args {
                    visit(arg);
                }
                if let Some(f) = known.iter().find(|f| f.name == *name) {
                    *total = total.saturating_add(f.inlined);
                }
            }
            ExprKind::Index { indices, .. } => indices.iter().for_each(visit),
            ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => visit(a),
            ExprKind::Step { target, .. } => visit(target),
            ExprKind::Binary(_, a, b) => {
                visit(a);
                visit(b);
            }
            ExprKind::Assign { target, value, .. } => {
                visit(target);
                visit(value);
            }
            ExprKind::Cond(c, a, b) => {
                visit(c);
                visit(a);
                visit(b);
            }
            _ => {}
        }
    }
    fn stmt_calls(s: &Stmt, known: &[Function], total: &mut u64) {
        let expr = |e: &Expr, total: &mut u64| expr_calls(e, known, total);
        match &s.kind {
            StmtKind::Local { init: Some(e), .. }
            | StmtKind::Expr(e)
            | StmtKind::ReturnValue(e) => expr(e, total),
            StmtKind::Shared { dims, .. } => dims.iter().for_each(|d| expr(d, total)),
            StmtKind::If(c, a, b) => {
                expr(c, total);
                stmt_calls(a, known, total);
                if let Some(b) = b {
                    stmt_calls(b, known, total);
                }
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                if let Some(init) = init {
                    stmt_calls(init, known, total);
                }
                for e in cond.iter().chain(step) {
                    expr(e, total);
                }
                stmt_calls(body, known, total);
            }
            StmtKind::While(c, body) => {
                expr(c, total);
                stmt_calls(body, known, total);
            }
            StmtKind::Block(items) | StmtKind::DeclList(items) => {
                items.iter().for_each(|i| stmt_calls(i, known, total))
            }
            _ => {}
        }
    }
    let mut total = 1u64;
    for stmt in body {
        stmt_calls(stmt, known, &mut total);
    }
    if total > MAX_INLINED {
        return Err(Diagnostic::error(
            format!("its calls inline to {total} function bodies, more than the emulator's {MAX_INLINED}"),
            span,
        )
        .with_help("call fewer device functions per function, or inline some of them by hand"));
    }
    Ok(total)
}
