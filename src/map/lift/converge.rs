//! A time loop's convergence test, lifted as a reduction and a check.
//!
//! C writes it as a scalar reset at the start of each step, updated by one
//! statement of one nest, and tested by the step's last statement:
//!
//! ```c
//! converged = true;                                   s = 0.0;
//! for (...) { ...                                     for (...) { ...
//!     if (fabs(u[p] - u0[p]) > TOL) converged = false;     s += fabs(u[p] - u0[p]);
//! }                                                   }
//! if (converged) break;                               if (s < TOL) break;
//! ```
//!
//! The flag becomes `reduction converged min { box : !(fabs(...) > TOL); }`
//! and `check ((converged > 0)) every 1 iterations` (an `||` flag, reset to
//! 0, a `max` of `((c) != 0)`): the minimum of 0/1 values is exact, so the
//! device stops at the step C stops at. A sum (`+=`, `-=`) or product
//! (`*=`) becomes a `+` or `*` reduction of the term and the test the check:
//! the device combines the terms in another order than the C loop, so a
//! floating-point result may differ in its last bits (and a test that close
//! to its tolerance may stop one step apart); `fmax`/`fmin` accumulations
//! are not lifted. The reduction runs where the SDSL semantics evaluate
//! it, after the step's last stencil, so its term may read an array its own
//! nest writes only at the point itself (what C has there when it evaluates
//! the term), no statement after it may write one, and no later nest of the
//! step may write an array it reads. The scalar must be a local used nowhere else in the function: its
//! value after the loop is not computed.

use super::*;
use crate::front::c::CFile;
use crate::ir::ReduceOp;

/// How the tested scalar combines the per-point terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// A flag reset to `reset` (0 or 1) each step and set to the other
    /// value where a condition holds: `&&` (reset 1) or `||` (reset 0).
    Flag {
        /// The value it is reset to.
        reset: i64,
    },
    /// `s += e` (or `s -= e`, `s = s + e`) from 0.
    Sum,
    /// `s *= e` (or `s = s * e`) from 1.
    Product,
}

/// The convergence test of a lifted time loop: a reduction of the step's
/// values and the check that stops the iterate.
#[derive(Clone, Debug, PartialEq)]
pub struct LiftedCheck {
    /// The tested C scalar.
    pub scalar: String,
    /// Its C type as declared (`bool`, `double`).
    pub c_type: String,
    /// The reduction's name in the program.
    pub reduction: String,
    /// How C combines the terms.
    pub combine: Combine,
    /// The reduction's operator.
    pub op: ReduceOp,
    /// The test as C writes it (`converged`, `(s < TOL)`), of the scalar.
    pub c_test: String,
    /// The check's condition in the program.
    pub check: String,
    /// The lines of the reset, of the update and of the test.
    pub lines: (usize, usize, usize),
    /// The box of the reduction's one part: (first, last) per axis, as C
    /// expressions.
    pub bounds: Vec<(String, String)>,
    /// Whether the device combines the terms in another order than C with a
    /// result that depends on it (floating-point `+` and `*`).
    pub reordered: bool,
    /// Whether the scalar is declared in the time loop's body (by its
    /// reset), so the code replacing the loop declares it.
    pub declared_in_loop: bool,
}

impl LiftedCheck {
    /// The C value of the scalar after a step, from the reduction's value
    /// (`value`, a C expression): a flag is set where the reduction of its
    /// 0/1 terms is positive (the identity of an empty box included).
    pub fn c_value(&self, value: &str) -> String {
        match self.combine {
            Combine::Flag { .. } => format!("({value} > 0)"),
            Combine::Sum | Combine::Product => value.to_string(),
        }
    }

    /// A sentence for the report.
    pub fn describe(&self) -> String {
        let form = match self.combine {
            Combine::Flag { reset: 1 } => format!(
                "the `&&` flag `{}` (reset at line {}, cleared at line {})",
                self.scalar, self.lines.0, self.lines.1
            ),
            Combine::Flag { .. } => format!(
                "the `||` flag `{}` (reset at line {}, set at line {})",
                self.scalar, self.lines.0, self.lines.1
            ),
            Combine::Sum | Combine::Product => format!(
                "`{}` (reset at line {}, accumulated at line {})",
                self.scalar, self.lines.0, self.lines.1
            ),
        };
        let order = if self.reordered {
            format!(
                "; the device combines the terms in another order than the C loop, so `{}` may differ in its last bits and a test within that of its bound may stop at another step",
                self.scalar
            )
        } else {
            " (exact: the loop stops at the step C stops at)".to_string()
        };
        format!(
            "convergence test `if ({}) break;` (line {}) on {form}: reduction `{}` ({}) on the device, checked every step{order}",
            self.c_test,
            self.lines.2,
            self.reduction,
            self.op.symbol()
        )
    }
}

/// A statement of the time loop's body that is neither a nest nor part of a
/// pointer swap.
pub(super) struct Extra<'a> {
    /// The statement.
    pub stmt: &'a Stmt,
    /// How many nests come before it.
    pub nests_before: usize,
    /// Whether it is the body's last statement.
    pub last: bool,
}

/// The convergence test found in a time loop, before its lift.
#[derive(Clone)]
pub(super) struct Found<'a> {
    /// The tested scalar.
    pub scalar: String,
    /// Its C type.
    pub c_type: String,
    /// The index of the nest that updates it.
    pub nest: usize,
    /// The updating statement, at the top level of that nest's innermost body.
    pub update: &'a Stmt,
    /// The per-point term: the condition of a flag, the operand of a sum or
    /// product.
    pub term: &'a Expr,
    /// Whether a sum's term is subtracted (`s -= e`).
    pub negate: bool,
    /// How the terms combine.
    pub combine: Combine,
    /// The test's condition.
    pub test: &'a Expr,
    /// Reset, update and test lines.
    pub lines: (usize, usize, usize),
    /// Whether the reset declares the scalar.
    pub declared_in_loop: bool,
}

/// Whether a statement (or any inside it) reads or writes `name`.
fn mentions(s: &Stmt, name: &str) -> bool {
    let in_expr = |e: &Expr| {
        let mut found = false;
        e.visit(&mut |x| {
            if matches!(x, Expr::Load(r) if r.name == name) {
                found = true;
            }
        });
        found
    };
    let mut found = false;
    walk(std::slice::from_ref(s), &mut |s| {
        found |= match s {
            Stmt::For(l) => l.var == name || in_expr(&l.lower) || in_expr(&l.upper),
            Stmt::Assign(a) => {
                a.target.name == name || a.target.index.iter().any(in_expr) || in_expr(&a.value)
            }
            Stmt::Decl { name: n, init, .. } => n == name || init.as_ref().is_some_and(in_expr),
            Stmt::If { cond, .. } => in_expr(cond),
            Stmt::Eval { expr: e, .. } | Stmt::Return(Some(e)) => in_expr(e),
            _ => false,
        };
    });
    found
}

/// The constant a reset sets: an integer, or a floating literal (`0.0`,
/// `1.0f`).
fn reset_value(e: &Expr) -> Option<f64> {
    match e {
        Expr::Int(v) => Some(*v as f64),
        Expr::Float(s) => s.trim_end_matches(['f', 'F']).parse().ok(),
        Expr::Cast(_, inner) => reset_value(inner),
        _ => None,
    }
}

/// The first line within `lines` of the user's file where identifier `name`
/// occurs in the preprocessed text more often than `allowed` says.
fn used_elsewhere(
    file: &CFile,
    name: &str,
    lines: (usize, usize),
    allowed: &BTreeMap<usize, usize>,
) -> Option<usize> {
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    let text = file.preprocessed.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c == b'"' || c == b'\'' {
            i += 1;
            while i < text.len() && text[i] != c && text[i] != b'\n' {
                i += if text[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let start = i;
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            if &file.preprocessed[start..i] == name {
                if let Some(line) = file.line_of(start) {
                    let count = seen.entry(line).or_default();
                    *count += 1;
                    if lines.0 <= line
                        && line <= lines.1
                        && *count > allowed.get(&line).copied().unwrap_or(0)
                    {
                        return Some(line);
                    }
                }
            }
        } else {
            i += 1;
        }
    }
    None
}

/// The innermost body of a nest's perfectly nested loops.
fn innermost(root: &Loop) -> &[Stmt] {
    let mut body = &root.body;
    while let [Stmt::For(inner)] = body.as_slice() {
        body = &inner.body;
    }
    body
}

/// The one scalar the step computes that the convergence test `test`
/// (line `test_line`) reads.
fn tested_scalar(time: &Loop, test: &Expr, test_line: usize) -> Result<String, String> {
    let mut computed = BTreeSet::new();
    walk(&time.body, &mut |s| match s {
        Stmt::Assign(a) if a.target.index.is_empty() => {
            computed.insert(a.target.name.clone());
        }
        Stmt::Decl { name, .. } => {
            computed.insert(name.clone());
        }
        _ => {}
    });
    let mut tested = Vec::new();
    test.visit(&mut |x| {
        if let Expr::Load(r) = x {
            if r.index.is_empty() && computed.contains(&r.name) && !tested.contains(&r.name) {
                tested.push(r.name.clone());
            }
        }
    });
    match tested.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "the convergence test (line {test_line}) reads no scalar the step computes"
        )),
        more => Err(format!(
                "the convergence test (line {test_line}) reads several scalars the step computes ({}); one is lifted",
                more.join(", ")
            )),
    }
}

/// The reset of `scalar` among the statements `extras` (all but the test):
/// its constant, line, the nests before it, and whether it declares the scalar.
fn find_reset(extras: &[Extra<'_>], scalar: &str) -> Result<(f64, usize, usize, bool), String> {
    let plain = |s: &Stmt| {
        format!(
            "the time loop's body holds {} besides loop nests, pointer swaps and a convergence test",
            describe(s)
        )
    };
    let mut reset = None;
    for extra in &extras[..extras.len() - 1] {
        let value = match extra.stmt {
            Stmt::Assign(a) if a.target.name == *scalar && a.target.index.is_empty() => {
                a.op.is_none().then_some((&a.value, a.line))
            }
            Stmt::Decl {
                name,
                init: Some(init),
                line,
            } if name == scalar => Some((init, *line)),
            other => return Err(plain(other)),
        };
        let Some((value, line)) = value else {
            return Err(format!(
                "`{scalar}` is updated at line {} outside the nests",
                match extra.stmt {
                    Stmt::Assign(a) => a.line,
                    _ => 0,
                }
            ));
        };
        let constant = reset_value(value).ok_or_else(|| {
            format!("`{scalar}` is reset to `{value}` (line {line}), not a constant")
        })?;
        let declares = matches!(extra.stmt, Stmt::Decl { .. });
        if reset
            .replace((constant, line, extra.nests_before, declares))
            .is_some()
        {
            return Err(format!("`{scalar}` is reset twice in a step (line {line})"));
        }
    }
    reset.ok_or_else(|| {
        format!("`{scalar}` is not reset at the start of each step (a constant assigned in the time loop's body, before its nest)")
    })
}

/// The update of `scalar`: one statement of one nest's innermost body (the
/// nest's index and the statement).
fn find_update<'a>(nests: &[&'a Loop], scalar: &str) -> Result<(usize, &'a Stmt), String> {
    let mut updates = Vec::new();
    for (k, nest) in nests.iter().enumerate() {
        if !mentions(&Stmt::For((*nest).clone()), scalar) {
            continue;
        }
        let found: Vec<&Stmt> = innermost(nest)
            .iter()
            .filter(|s| mentions(s, scalar))
            .collect();
        match found.as_slice() {
            [one] => updates.push((k, *one)),
            _ => {
                return Err(format!(
                    "`{scalar}` is used in the nest at line {} other than by one statement of its innermost body",
                    nest.lines.0
                ))
            }
        }
    }
    match updates.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!("no nest of the step updates `{scalar}`")),
        _ => Err(format!(
            "`{scalar}` is updated in several nests (lines {}); one is lifted",
            updates
                .iter()
                .map(|(k, _)| nests[*k].lines.0.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Per line, the uses of `scalar` that the reset, the update, the test and
/// the declarations account for: nothing else may see the scalar, as its
/// value after the loop is not computed.
fn accounted_uses(
    scalar: &str,
    test: &Expr,
    test_line: usize,
    update: &Stmt,
    extras: &[Extra<'_>],
    function: &Function,
) -> BTreeMap<usize, usize> {
    let occurrences = |e: &Expr| {
        let mut n = 0;
        e.visit(&mut |x| {
            if matches!(x, Expr::Load(r) if r.name == scalar) {
                n += 1;
            }
        });
        n
    };
    let mut allowed: BTreeMap<usize, usize> = BTreeMap::new();
    *allowed.entry(test_line).or_default() += occurrences(test);
    let mut assignments = Vec::new();
    match update {
        Stmt::If {
            cond, then, line, ..
        } => {
            *allowed.entry(*line).or_default() += occurrences(cond);
            assignments.extend(then.iter());
        }
        other => assignments.push(other),
    }
    for extra in extras {
        if matches!(extra.stmt, Stmt::Assign(a) if a.target.name == *scalar) {
            assignments.push(extra.stmt);
        }
    }
    for s in assignments {
        if let Stmt::Assign(a) = s {
            *allowed.entry(a.line).or_default() += 1 + occurrences(&a.value);
        }
    }
    walk(&function.body, &mut |s| {
        if let Stmt::Decl { name, line, init } = s {
            if name == scalar {
                *allowed.entry(*line).or_default() += 1 + init.as_ref().map_or(0, occurrences);
            }
        }
    });
    allowed
}

/// Finds the convergence test among the statements of a time loop's body
/// that are not nests or swaps; `Ok(None)` when there are none.
pub(super) fn find<'a>(
    time: &'a Loop,
    nests: &[&'a Loop],
    extras: &[Extra<'a>],
    function: &Function,
    unit: &CUnit,
    file: &CFile,
) -> Result<Option<Found<'a>>, String> {
    let Some(last) = extras.last() else {
        return Ok(None);
    };
    let plain = |s: &Stmt| {
        format!(
            "the time loop's body holds {} besides loop nests, pointer swaps and a convergence test",
            describe(s)
        )
    };
    // The test: `if (cond) break;`, the step's last statement.
    let (test, test_line) = match last.stmt {
        Stmt::If {
            cond,
            then,
            els,
            line,
        } if els.is_empty() && matches!(then.as_slice(), [Stmt::Break]) => (cond, *line),
        _ => return Err(plain(extras[0].stmt)),
    };
    if !last.last {
        return Err(format!(
            "the convergence test (line {test_line}) is not the last statement of the step (a pointer swap follows it)"
        ));
    }
    let scalar = tested_scalar(time, test, test_line)?;
    let var = function.vars.get(&scalar).ok_or_else(|| {
        format!("the tested scalar `{scalar}` is a global variable: other functions may read it")
    })?;
    if var.pointer || !var.dims.is_empty() {
        return Err(format!("the tested `{scalar}` is not a scalar"));
    }
    let (reset, reset_line, reset_at, declared_in_loop) = find_reset(extras, &scalar)?;
    let (nest, update) = find_update(nests, &scalar)?;
    if reset_at > nest {
        return Err(format!(
            "`{scalar}` is reset (line {reset_line}) after the nest that updates it"
        ));
    }
    let not_reduction = |line: usize| {
        format!(
            "`{scalar}` is updated at line {line} other than as a reduction by a commutative, associative operator (`s += e`, `s -= e`, `s *= e`, or a flag set to a constant where a condition holds)"
        )
    };
    let is_scalar = |e: &Expr| *e == Expr::var(&scalar);
    let (combine, term, negate, update_line) = match update {
        Stmt::If {
            cond,
            then,
            els,
            line,
        } if els.is_empty() => {
            let [Stmt::Assign(a)] = then.as_slice() else {
                return Err(not_reduction(*line));
            };
            let set = (a.target.name == scalar && a.target.index.is_empty() && a.op.is_none())
                .then(|| reset_value(&a.value))
                .flatten();
            match (reset, set) {
                (r, Some(s)) if (r == 0.0 && s == 1.0) || (r == 1.0 && s == 0.0) => (
                    Combine::Flag {
                        reset: reset as i64,
                    },
                    cond,
                    false,
                    *line,
                ),
                _ => return Err(not_reduction(*line)),
            }
        }
        Stmt::Assign(a) if a.target.name == scalar && a.target.index.is_empty() => {
            let form = match (&a.op, &a.value) {
                (Some(BinOp::Add), e) => Some((Combine::Sum, e, false)),
                (Some(BinOp::Sub), e) => Some((Combine::Sum, e, true)),
                (Some(BinOp::Mul), e) => Some((Combine::Product, e, false)),
                (None, Expr::Bin(BinOp::Add, x, e)) if is_scalar(x) => {
                    Some((Combine::Sum, &**e, false))
                }
                (None, Expr::Bin(BinOp::Add, e, x)) if is_scalar(x) => {
                    Some((Combine::Sum, &**e, false))
                }
                (None, Expr::Bin(BinOp::Sub, x, e)) if is_scalar(x) => {
                    Some((Combine::Sum, &**e, true))
                }
                (None, Expr::Bin(BinOp::Mul, x, e)) if is_scalar(x) => {
                    Some((Combine::Product, &**e, false))
                }
                (None, Expr::Bin(BinOp::Mul, e, x)) if is_scalar(x) => {
                    Some((Combine::Product, &**e, false))
                }
                _ => None,
            };
            let (combine, term, negate) = form.ok_or_else(|| not_reduction(a.line))?;
            let identity = if combine == Combine::Sum { 0.0 } else { 1.0 };
            if reset != identity {
                return Err(format!(
                    "`{scalar}` is reset to {reset} (line {reset_line}), not to {identity}, the identity of its {}",
                    if combine == Combine::Sum { "sum" } else { "product" }
                ));
            }
            (combine, term, negate, a.line)
        }
        Stmt::Assign(a) => return Err(not_reduction(a.line)),
        Stmt::If { line, .. } | Stmt::Decl { line, .. } => return Err(not_reduction(*line)),
        _ => return Err(not_reduction(nests[nest].lines.0)),
    };
    if mentions(
        &Stmt::Eval {
            expr: term.clone(),
            line: 0,
        },
        &scalar,
    ) {
        return Err(not_reduction(update_line));
    }
    let allowed = accounted_uses(&scalar, test, test_line, update, extras, function);
    if let Some(line) = used_elsewhere(file, &scalar, function.lines, &allowed) {
        return Err(format!(
            "the tested scalar `{scalar}` is used otherwise (line {line}): its value outside the step is not computed on the device"
        ));
    }
    let _ = unit;
    Ok(Some(Found {
        scalar,
        c_type: var.elem.clone(),
        nest,
        update,
        term,
        negate,
        combine,
        test,
        lines: (reset_line, update_line, test_line),
        declared_in_loop,
    }))
}

impl<'a> Lifter<'a> {
    /// For a nest that writes no array: the point from the first read of
    /// the update's term that is at a point (each subscript a loop variable
    /// or a constant).
    pub(super) fn point_of_read(&mut self, term: &Expr, cx: &mut NestCx<'_>) -> Result<(), String> {
        let mut reads = Vec::new();
        term.visit(&mut |x| {
            if let Expr::Load(r) = x {
                if !r.index.is_empty() {
                    reads.push(r.clone());
                }
            }
        });
        let mut why = "it writes no array and its update reads none".to_string();
        for r in reads {
            let key = self
                .swaps
                .get(&r.name)
                .map_or(r.name.clone(), |(first, _)| first.clone());
            let written = self.arrays.get(&key).map(|a| a.lifted.written);
            match self.array_ref(&r, true, cx) {
                Ok(_) => {
                    // Taken as the point only: the nest does not write it.
                    if let Some(a) = self.arrays.get_mut(&key) {
                        a.lifted.written = written.unwrap_or(false);
                    }
                    return Ok(());
                }
                Err(e) => {
                    why = format!(
                        "it writes no array, and no read of its update gives the point ({e})"
                    )
                }
            }
        }
        Err(why)
    }

    /// The reduction's term at a point of the updating nest, as SDSL text of
    /// the reduction's value: its reads must be fields at the point where a
    /// nest of the step from this one on writes them.
    pub(super) fn reduction_term(
        &mut self,
        found: &Found<'a>,
        cx: &mut NestCx<'_>,
    ) -> Result<String, String> {
        let mut local = None;
        found.term.visit(&mut |x| {
            if let Expr::Load(r) = x {
                if r.index.is_empty() && cx.locals.contains_key(&r.name) && local.is_none() {
                    local = Some(r.name.clone());
                }
            }
        });
        if let Some(local) = local {
            return Err(format!(
                "the update of `{}` (line {}) reads the local `{local}` (a reduction sees only fields, parameters and constants)",
                found.scalar, found.lines.1
            ));
        }
        cx.reads.clear();
        let term = self.expr(found.term, Some(cx))?;
        for (key, offsets) in &cx.reads {
            if self.written_after_update.contains(key) {
                return Err(format!(
                    "the update of `{}` (line {}) reads `{key}`, which a later nest of the step writes (C reads it before)",
                    found.scalar, found.lines.1
                ));
            }
            if offsets.iter().any(|&o| o != 0) && self.written_by_update.contains(key) {
                return Err(format!(
                    "the update of `{}` (line {}) reads `{key}` away from the point, which its nest writes (C reads it before all of the nest's points are written)",
                    found.scalar, found.lines.1
                ));
            }
        }
        let ty = lookup(&found.scalar, self.function, self.unit).and_then(|v| scalar_type(&v.elem));
        Ok(match found.combine {
            Combine::Flag { reset: 1 } => format!("!({term})"),
            Combine::Flag { .. } => format!("(({term}) != 0)"),
            Combine::Sum | Combine::Product => {
                let ty = ty.ok_or_else(|| {
                    format!(
                        "`{}` is not an int, long, float or double scalar",
                        found.scalar
                    )
                })?;
                let sign = if found.negate { "-" } else { "" };
                format!("{sign}(({ty}) {term})")
            }
        })
    }

    /// The check's condition: the test with the scalar read from the
    /// reduction, and the [`LiftedCheck`] of it.
    pub(super) fn check(
        &mut self,
        found: &Found<'a>,
        bounds: Vec<(String, String)>,
    ) -> Result<LiftedCheck, String> {
        let reduction = sdsl_name(&found.scalar);
        let (op, reordered) = match found.combine {
            Combine::Flag { reset: 1 } => (ReduceOp::Min, false),
            Combine::Flag { .. } => (ReduceOp::Max, false),
            Combine::Sum | Combine::Product => {
                let floating = matches!(found.c_type.as_str(), "float" | "double");
                let op = if found.combine == Combine::Sum {
                    ReduceOp::Sum
                } else {
                    ReduceOp::Product
                };
                (op, floating)
            }
        };
        let value = match found.combine {
            Combine::Flag { .. } => format!("({reduction} > 0)"),
            _ => reduction.clone(),
        };
        self.check_scalar = Some((found.scalar.clone(), value));
        let check = self.expr(found.test, None);
        self.check_scalar = None;
        let check =
            check.map_err(|e| format!("the convergence test (line {}): {e}", found.lines.2))?;
        Ok(LiftedCheck {
            scalar: found.scalar.clone(),
            c_type: found.c_type.clone(),
            reduction,
            combine: found.combine,
            op,
            c_test: found.test.to_string(),
            check,
            lines: found.lines,
            bounds,
            reordered,
            declared_in_loop: found.declared_in_loop,
        })
    }
}
