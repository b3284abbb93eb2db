//! The found expressions as CUDA C, named after the profile's candidates
//! (`threadIdx.x - 1`, `threadIdx.x != 0 && i < blockDim.x - 1`).

use super::arith::{Expr, Unit};
use super::logic::Guard;

fn unit_to_cuda(unit: Unit, names: &[String]) -> String {
    match unit {
        Unit::Var(v) => names
            .get(v)
            .cloned()
            .unwrap_or_else(|| format!("candidate{v}")),
        Unit::Const(c) if c < 0 => format!("({c})"),
        Unit::Const(c) => c.to_string(),
    }
}

/// An arithmetic expression: terms joined by ` + ` and ` - `, units by ` * `
/// (products bind tighter, so no parentheses are needed; a negative constant
/// factor is parenthesised).
pub fn expr_to_cuda(expr: &Expr, names: &[String]) -> String {
    let mut out = String::new();
    for (k, term) in expr.terms.iter().enumerate() {
        match (k, term.negated) {
            (0, false) => {}
            (0, true) => out.push('-'),
            (_, false) => out.push_str(" + "),
            (_, true) => out.push_str(" - "),
        }
        let units: Vec<String> = term.units.iter().map(|&u| unit_to_cuda(u, names)).collect();
        out.push_str(&units.join(" * "));
    }
    out
}

/// A guard: comparisons bare (they bind tighter than `&&` and `||`), an `&&`
/// inside an `||` and an `||` inside an `&&` parenthesised.
pub fn guard_to_cuda(guard: &Guard, names: &[String]) -> String {
    match guard {
        Guard::True => "true".to_string(),
        Guard::False => "false".to_string(),
        Guard::Cmp { lhs, op, rhs } => format!(
            "{} {} {}",
            unit_to_cuda(Unit::Var(*lhs), names),
            op.symbol(),
            expr_to_cuda(rhs, names)
        ),
        Guard::And(a, b) => format!("{} && {}", operand(a, names, true), operand(b, names, true)),
        Guard::Or(a, b) => format!(
            "{} || {}",
            operand(a, names, false),
            operand(b, names, false)
        ),
    }
}

fn operand(guard: &Guard, names: &[String], in_and: bool) -> String {
    let text = guard_to_cuda(guard, names);
    match (guard, in_and) {
        (Guard::Or(..), true) | (Guard::And(..), false) => format!("({text})"),
        _ => text,
    }
}

/// A shared-memory read: `sb[threadIdx.y + 1][threadIdx.x]`.
pub fn shared_read_to_cuda(shared: &str, index: &[Expr], names: &[String]) -> String {
    let mut out = shared.to_string();
    for e in index {
        out.push('[');
        out.push_str(&expr_to_cuda(e, names));
        out.push(']');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synth::arith::Term;
    use crate::synth::logic::CmpOp;

    fn names() -> Vec<String> {
        ["threadIdx.x", "blockDim.x", "i"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn term(negated: bool, units: &[Unit]) -> Term {
        Term {
            negated,
            units: units.to_vec(),
        }
    }

    #[test]
    fn prints_linear_expressions() {
        use Unit::{Const as C, Var as V};
        let e = Expr {
            terms: vec![term(false, &[V(0)]), term(false, &[C(1)])],
        };
        assert_eq!(expr_to_cuda(&e, &names()), "threadIdx.x + 1");
        let e = Expr {
            terms: vec![term(true, &[V(1), C(2)]), term(true, &[V(0), C(-3)])],
        };
        assert_eq!(
            expr_to_cuda(&e, &names()),
            "-blockDim.x * 2 - threadIdx.x * (-3)"
        );
        assert_eq!(
            shared_read_to_cuda("sb", &[Expr::unit(V(2)), e], &names()),
            "sb[i][-blockDim.x * 2 - threadIdx.x * (-3)]"
        );
    }

    #[test]
    fn prints_guards_with_parentheses_where_c_needs_them() {
        use Unit::{Const as C, Var as V};
        let cmp = |lhs, op, rhs: Expr| Guard::Cmp { lhs, op, rhs };
        let a = cmp(0, CmpOp::Ne, Expr::unit(C(0)));
        let b = cmp(
            0,
            CmpOp::Lt,
            Expr {
                terms: vec![term(false, &[V(1)]), term(true, &[C(1)])],
            },
        );
        let c = cmp(2, CmpOp::Eq, Expr::unit(C(0)));
        let g = Guard::Or(
            Box::new(Guard::And(Box::new(a.clone()), Box::new(b.clone()))),
            Box::new(c.clone()),
        );
        assert_eq!(
            guard_to_cuda(&g, &names()),
            "(threadIdx.x != 0 && threadIdx.x < blockDim.x - 1) || i == 0"
        );
        let g = Guard::And(Box::new(Guard::And(Box::new(a), Box::new(b))), Box::new(c));
        assert_eq!(
            guard_to_cuda(&g, &names()),
            "threadIdx.x != 0 && threadIdx.x < blockDim.x - 1 && i == 0"
        );
    }
}
