//! Small queries over the C loop IR that every part of `map` shares: the
//! declaration a nest sees, a walk over nested statements, whether a name
//! occurs, substitution of a scalar, a constant loop's trip count, and the
//! math functions a kernel may call. They sit below the analyses so that
//! the analyses, the criteria, the transformations and the emitters can all
//! use them without depending on one another.

use crate::front::c::fold::constant;
use crate::front::c::loops::{CUnit, Expr, Function, Loop, Ref, Stmt, Var};

/// Math functions a kernel may call (C99 `<math.h>`, all pure).
pub const PURE_LIBRARY: &[&str] = &[
    "fabs", "fabsf", "sqrt", "sqrtf", "exp", "expf", "log", "logf", "sin", "sinf", "cos", "cosf",
    "tan", "tanf", "pow", "powf", "fmin", "fminf", "fmax", "fmaxf", "floor", "floorf", "ceil",
    "ceilf", "tanh", "tanhf", "atan", "atanf", "atan2", "atan2f", "fma", "fmaf", "abs", "cbrt",
    "cbrtf", "exp2", "log2", "log10", "hypot",
];

/// The declaration of `name` as the nest sees it.
pub fn lookup<'a>(name: &str, function: &'a Function, unit: &'a CUnit) -> Option<&'a Var> {
    function.vars.get(name).or_else(|| unit.globals.get(name))
}

/// Calls every statement of a body, nested ones included.
pub fn walk<'a>(body: &'a [Stmt], f: &mut dyn FnMut(&'a Stmt)) {
    for s in body {
        f(s);
        match s {
            Stmt::For(l) => walk(&l.body, f),
            Stmt::If { then, els, .. } => {
                walk(then, f);
                walk(els, f);
            }
            Stmt::Other { body, .. } => walk(body, f),
            _ => {}
        }
    }
}

/// Whether `word` occurs as an identifier in `text`.
pub fn mentions_identifier(text: &str, word: &str) -> bool {
    let bytes = text.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut from = 0;
    while let Some(i) = text[from..].find(word) {
        let start = from + i;
        let end = start + word.len();
        let before = start == 0 || !is_ident(bytes[start - 1]);
        let after = end >= bytes.len() || !is_ident(bytes[end]);
        if before && after {
            return true;
        }
        from = end;
    }
    false
}

/// The iterations of `l`, when its bounds are constants.
pub fn trip_count(l: &Loop) -> Option<i64> {
    let (lo, hi) = (constant(&l.lower)?, constant(&l.upper)?);
    let span = hi.checked_sub(lo)?.max(0);
    Some(span.checked_add(l.step - 1)? / l.step.max(1))
}

/// `body` with every read of the scalar `var` replaced by `by`.
pub fn substitute_body(body: &[Stmt], var: &str, by: &Expr) -> Vec<Stmt> {
    body.iter()
        .map(|s| match s {
            Stmt::For(l) => Stmt::For(Loop {
                lower: substitute(&l.lower, var, by),
                upper: substitute(&l.upper, var, by),
                body: substitute_body(&l.body, var, by),
                ..l.clone()
            }),
            Stmt::Assign(a) => {
                let mut a = a.clone();
                a.target.index = a
                    .target
                    .index
                    .iter()
                    .map(|e| substitute(e, var, by))
                    .collect();
                a.value = substitute(&a.value, var, by);
                Stmt::Assign(a)
            }
            Stmt::Decl { name, init, line } => Stmt::Decl {
                name: name.clone(),
                init: init.as_ref().map(|e| substitute(e, var, by)),
                line: *line,
            },
            Stmt::If {
                cond,
                then,
                els,
                line,
            } => Stmt::If {
                cond: substitute(cond, var, by),
                then: substitute_body(then, var, by),
                els: substitute_body(els, var, by),
                line: *line,
            },
            Stmt::Eval { expr, line } => Stmt::Eval {
                expr: substitute(expr, var, by),
                line: *line,
            },
            other => other.clone(),
        })
        .collect()
}

/// `e` with every read of the scalar `var` replaced by `by`.
pub fn substitute(e: &Expr, var: &str, by: &Expr) -> Expr {
    let sub = |x: &Expr| Box::new(substitute(x, var, by));
    match e {
        Expr::Load(r) if r.index.is_empty() && r.name == var => by.clone(),
        Expr::Load(r) => Expr::Load(Ref {
            name: r.name.clone(),
            index: r.index.iter().map(|x| substitute(x, var, by)).collect(),
        }),
        Expr::Bin(op, a, b) => Expr::Bin(*op, sub(a), sub(b)),
        Expr::Unary(op, a) => Expr::Unary(*op, sub(a)),
        Expr::Cast(t, a) => Expr::Cast(t.clone(), sub(a)),
        Expr::Call(f, args) => Expr::Call(
            f.clone(),
            args.iter().map(|x| substitute(x, var, by)).collect(),
        ),
        Expr::Cond(c, a, b) => Expr::Cond(sub(c), sub(a), sub(b)),
        other => other.clone(),
    }
}
