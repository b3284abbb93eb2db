//! Compile-time evaluation of typed expressions (loop bounds, table extents and
//! values, and constants that do not depend on parameters).
//!
//! Arithmetic is C's on the expression's type: the front-end has already made
//! every conversion explicit, so both operands of an arithmetic operator have
//! the same type here. The operators and math functions are the interpreter's
//! own ([`crate::ir::semantics`]), so a folded value is exactly what the
//! program would compute at run time; only integer division by zero differs,
//! being a diagnostic here.

use crate::ir::semantics::{binary_value, call_value, unary_value};
use crate::ir::{BinaryOp, Expr, ExprKind, MathFn, ScalarType, Value};
use crate::source::Span;

/// Why an expression has no compile-time value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FoldError {
    /// It depends on something known only at run time (this node).
    NotConstant(Span),
    /// Integer division or remainder by zero (this node).
    DivisionByZero(Span),
}

/// Evaluates `expr`; `constant` gives the value of a named constant when it is
/// known without parameters.
pub fn fold(expr: &Expr, constant: &dyn Fn(usize) -> Option<Value>) -> Result<Value, FoldError> {
    match &expr.kind {
        ExprKind::Literal(v) => Ok(*v),
        ExprKind::Const(id) => constant(id.0).ok_or(FoldError::NotConstant(expr.span)),
        ExprKind::Cast(inner) => Ok(fold(inner, constant)?.cast(expr.ty)),
        ExprKind::Unary(op, inner) => Ok(unary_value(*op, fold(inner, constant)?)),
        ExprKind::Binary(BinaryOp::And, a, b) => {
            let result = fold(a, constant)?.is_true() && fold(b, constant)?.is_true();
            Ok(Value::Int(i32::from(result)))
        }
        ExprKind::Binary(BinaryOp::Or, a, b) => {
            let result = fold(a, constant)?.is_true() || fold(b, constant)?.is_true();
            Ok(Value::Int(i32::from(result)))
        }
        ExprKind::Binary(op, a, b) => {
            binary(*op, fold(a, constant)?, fold(b, constant)?, expr.span)
        }
        ExprKind::Select {
            cond,
            then,
            otherwise,
        } => {
            if fold(cond, constant)?.is_true() {
                fold(then, constant)
            } else {
                fold(otherwise, constant)
            }
        }
        ExprKind::Call {
            func,
            float_form,
            args,
        } => {
            let mut values = Vec::with_capacity(args.len());
            for a in args {
                values.push(fold(a, constant)?);
            }
            Ok(call(*func, *float_form, &values))
        }
        ExprKind::Param(_)
        | ExprKind::Local(_)
        | ExprKind::Load(_)
        | ExprKind::Table { .. }
        | ExprKind::Reduction(_) => Err(FoldError::NotConstant(expr.span)),
    }
}

/// `a op b` for operands of one type (C semantics, wrapping integer overflow);
/// integer division or remainder by zero is an error.
pub fn binary(op: BinaryOp, a: Value, b: Value, span: Span) -> Result<Value, FoldError> {
    let divides = matches!(op, BinaryOp::Div | BinaryOp::Rem);
    if divides && is_integer(b.ty()) && as_integer(b) == Some(0) {
        return Err(FoldError::DivisionByZero(span));
    }
    Ok(binary_value(op, a, b))
}

/// A math function on already-converted arguments.
pub fn call(func: MathFn, float_form: bool, args: &[Value]) -> Value {
    call_value(func, float_form, args)
}

/// The value as an `i64` when it has an integer type.
pub fn as_integer(value: Value) -> Option<i64> {
    match value {
        Value::Int(v) => Some(i64::from(v)),
        Value::Long(v) => Some(v),
        _ => None,
    }
}

/// Whether `ty` is `int` or `long`.
pub fn is_integer(ty: ScalarType) -> bool {
    !ty.is_float()
}
