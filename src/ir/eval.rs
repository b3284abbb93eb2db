//! The one evaluator of expressions to values.
//!
//! Everything that computes an expression's value outside the interpreter's
//! compiled loops goes through [`eval`]: the front-end's constant folding, a
//! run's uniform values (the run environment's constants, grid
//! sizes, subset bounds, the check), the analysis of accesses for given
//! parameter values, and the C back-end's constant offsets. The operators are
//! those of [`crate::ir::semantics`]; `&&`, `||` and `?:` evaluate only what C
//! evaluates. What the leaves (parameters, constants, locals, tables, loads,
//! reductions) are worth is the caller's [`Leaves`].

use crate::ir::semantics::{binary_value, call_value, unary_value};
use crate::ir::{
    BinaryOp, ConstId, Expr, ExprKind, GridRef, LocalId, ParamId, ReductionId, TableId, Value,
};
use crate::source::Span;

/// Why an expression has no value here.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EvalError {
    /// It depends on a leaf whose value is not known (this node).
    Unknown(Span),
    /// Integer division or remainder by zero, where [`Leaves::refuse_division_by_zero`]
    /// says so (this node).
    DivisionByZero(Span),
}

/// The values of an expression's leaves; each `None` (the default) when not
/// known, which makes the evaluation fail with [`EvalError::Unknown`].
pub trait Leaves {
    /// A parameter's value.
    fn param(&self, _id: ParamId) -> Option<Value> {
        None
    }
    /// A named constant's value.
    fn constant(&self, _id: ConstId) -> Option<Value> {
        None
    }
    /// A loop variable's or local's value.
    fn local(&self, _id: LocalId) -> Option<Value> {
        None
    }
    /// A reduction's last value (in the check).
    fn reduction(&self, _id: ReductionId) -> Option<Value> {
        None
    }
    /// A coefficient table's element at `index`.
    fn table(&self, _id: TableId, _index: &[i64]) -> Option<Value> {
        None
    }
    /// A field element.
    fn load(&self, _target: &GridRef) -> Option<Value> {
        None
    }
    /// Whether integer division or remainder by zero is an error (compile-time
    /// folding, where it is a mistake to report) rather than the defined 0 of
    /// [`crate::ir::semantics`].
    fn refuse_division_by_zero(&self) -> bool {
        false
    }
}

/// No leaf known: literals and the operators on them only.
pub struct Literals;

impl Leaves for Literals {}

/// The value of `expr`, of type `expr.ty`, given its leaves.
pub fn eval(expr: &Expr, leaves: &dyn Leaves) -> Result<Value, EvalError> {
    let known = |v: Option<Value>| v.ok_or(EvalError::Unknown(expr.span));
    let go = |e: &Expr| eval(e, leaves);
    let value = match &expr.kind {
        ExprKind::Literal(v) => *v,
        ExprKind::Param(p) => known(leaves.param(*p))?,
        ExprKind::Const(c) => known(leaves.constant(*c))?,
        ExprKind::Local(l) => known(leaves.local(*l))?,
        ExprKind::Reduction(r) => known(leaves.reduction(*r))?,
        ExprKind::Load(target) => known(leaves.load(target))?,
        ExprKind::Table { table, index } => {
            let mut at = Vec::with_capacity(index.len());
            for i in index {
                at.push(go(i)?.as_i64());
            }
            known(leaves.table(*table, &at))?
        }
        ExprKind::Cast(a) => go(a)?,
        ExprKind::Unary(op, a) => unary_value(*op, go(a)?),
        ExprKind::Binary(op, a, b) => {
            let a = go(a)?;
            // `&&` and `||` short-circuit, as in C.
            match op {
                BinaryOp::And if !a.is_true() => Value::Int(0),
                BinaryOp::Or if a.is_true() => Value::Int(1),
                BinaryOp::And | BinaryOp::Or => Value::Int(i32::from(go(b)?.is_true())),
                BinaryOp::Div | BinaryOp::Rem => {
                    let b = go(b)?;
                    if leaves.refuse_division_by_zero() && !b.ty().is_float() && b.as_i64() == 0 {
                        return Err(EvalError::DivisionByZero(expr.span));
                    }
                    binary_value(*op, a, b)
                }
                _ => binary_value(*op, a, go(b)?),
            }
        }
        ExprKind::Select {
            cond,
            then,
            otherwise,
        } => {
            if go(cond)?.is_true() {
                go(then)?
            } else {
                go(otherwise)?
            }
        }
        ExprKind::Call {
            func,
            float_form,
            args,
        } => {
            let mut values = Vec::with_capacity(args.len());
            for a in args {
                values.push(go(a)?);
            }
            call_value(*func, *float_form, &values)
        }
    };
    Ok(value.cast(expr.ty))
}

/// The value of an integer expression of literals only (no parameter, constant
/// or loop variable), computed in its own type as every back-end computes it.
pub fn integer_literal(expr: &Expr) -> Option<i64> {
    if expr.ty.is_float() {
        return None;
    }
    eval(expr, &Literals).ok().map(Value::as_i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ScalarType;

    fn lit(v: Value) -> Expr {
        Expr::new(ExprKind::Literal(v), v.ty(), Span::new(0, 0))
    }

    fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        let ty = if op.is_boolean() {
            ScalarType::Int
        } else {
            a.ty
        };
        Expr::new(
            ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty,
            Span::new(0, 0),
        )
    }

    struct Strict;
    impl Leaves for Strict {
        fn refuse_division_by_zero(&self) -> bool {
            true
        }
    }

    #[test]
    fn int_offsets_wrap_in_32_bits() {
        // `2147483647 + 1` is an `int` expression: it wraps, as in every back-end.
        let e = bin(BinaryOp::Add, lit(Value::Int(i32::MAX)), lit(Value::Int(1)));
        assert_eq!(integer_literal(&e), Some(i64::from(i32::MIN)));
    }

    #[test]
    fn division_by_zero_is_defined_unless_refused() {
        let e = bin(BinaryOp::Div, lit(Value::Int(7)), lit(Value::Int(0)));
        assert_eq!(eval(&e, &Literals), Ok(Value::Int(0)));
        assert!(matches!(
            eval(&e, &Strict),
            Err(EvalError::DivisionByZero(_))
        ));
    }

    #[test]
    fn logic_short_circuits() {
        let unknown = Expr::new(
            ExprKind::Param(ParamId(0)),
            ScalarType::Int,
            Span::new(0, 0),
        );
        let e = bin(BinaryOp::And, lit(Value::Int(0)), unknown.clone());
        assert_eq!(eval(&e, &Literals), Ok(Value::Int(0)));
        let e = bin(BinaryOp::Or, lit(Value::Int(0)), unknown);
        assert!(matches!(eval(&e, &Literals), Err(EvalError::Unknown(_))));
    }
}
