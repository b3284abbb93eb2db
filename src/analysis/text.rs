//! Expressions and grid references as short text for diagnostics.
//!
//! Text the user wrote is quoted from the source; nodes the front-end made up
//! (an implicit `[0]`, a conversion) are printed from the IR.

use crate::ir::{Expr, ExprKind, GridRef, Local, Program};

/// How the user wrote `expr` (or an SDSL rendering of it). `locals` names the
/// part's locals and loop variables.
pub fn expr_text(program: &Program, locals: &[Local], expr: &Expr) -> String {
    let text = &program.source.text;
    let range = expr.span.range();
    if !range.is_empty() && range.end <= text.len() {
        if let Some(s) = text.get(range) {
            return s.split_whitespace().collect::<Vec<_>>().join(" ");
        }
    }
    match &expr.kind {
        ExprKind::Literal(v) => format!("{v}"),
        ExprKind::Param(p) => program
            .params
            .get(p.0)
            .map_or("?".into(), |p| p.name.clone()),
        ExprKind::Const(c) => program
            .constants
            .get(c.0)
            .map_or("?".into(), |c| c.name.clone()),
        ExprKind::Local(l) => locals.get(l.0).map_or("?".into(), |l| l.name.clone()),
        ExprKind::Cast(a) => expr_text(program, locals, a),
        ExprKind::Unary(op, a) => {
            let sym = match op {
                crate::ir::UnaryOp::Neg => "-",
                crate::ir::UnaryOp::Not => "!",
            };
            format!("{sym}{}", atom(program, locals, a))
        }
        ExprKind::Binary(op, a, b) => format!(
            "{}{}{}",
            atom(program, locals, a),
            op.symbol(),
            atom(program, locals, b)
        ),
        ExprKind::Load(r) => ref_text(program, locals, r),
        _ => "...".into(),
    }
}

/// `expr_text`, parenthesised unless it is a name or a non-negative number.
pub fn atom(program: &Program, locals: &[Local], expr: &Expr) -> String {
    let t = expr_text(program, locals, expr);
    if t.chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        t
    } else {
        format!("({t})")
    }
}

/// `[t]name[o0][o1]` with the field's real name (not a point-function parameter).
pub fn ref_text(program: &Program, locals: &[Local], target: &GridRef) -> String {
    let name = program
        .fields
        .get(target.field.0)
        .map_or("?", |f| f.name.as_str());
    let mut s = format!("[{}]{name}", target.time);
    for o in &target.offset {
        s.push('[');
        s.push_str(&expr_text(program, locals, o));
        s.push(']');
    }
    s
}

/// What to call axis `axis` (0 = outermost) of a grid of `rank` dimensions:
/// `column` for the innermost, then `row`, then `plane`; `element` in 1-D.
pub fn axis_name(rank: usize, axis: usize) -> &'static str {
    if rank == 1 {
        return "element";
    }
    match rank - 1 - axis {
        0 => "column",
        1 => "row",
        _ => "plane",
    }
}
