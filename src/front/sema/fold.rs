//! Compile-time evaluation of typed expressions (loop bounds, table extents and
//! values, and constants that do not depend on parameters).
//!
//! Arithmetic is C's on the expression's type: the front-end has already made
//! every conversion explicit, so both operands of an arithmetic operator have
//! the same type here.

use crate::ir::{BinaryOp, Expr, ExprKind, MathFn, ScalarType, UnaryOp, Value};
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
        ExprKind::Unary(op, inner) => {
            let v = fold(inner, constant)?;
            Ok(match op {
                UnaryOp::Not => Value::Int(i32::from(!v.is_true())),
                UnaryOp::Neg => match v {
                    Value::Int(x) => Value::Int(x.wrapping_neg()),
                    Value::Long(x) => Value::Long(x.wrapping_neg()),
                    Value::Float(x) => Value::Float(-x),
                    Value::Double(x) => Value::Double(-x),
                },
            })
        }
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

/// `a op b` for operands of one type (C semantics, wrapping integer overflow).
pub fn binary(op: BinaryOp, a: Value, b: Value, span: Span) -> Result<Value, FoldError> {
    let truth = |t: bool| Value::Int(i32::from(t));
    if op.is_boolean() {
        let (x, y) = (a, b);
        let ordering = match (x, y) {
            (Value::Int(x), Value::Int(y)) => x.partial_cmp(&y),
            (Value::Long(x), Value::Long(y)) => x.partial_cmp(&y),
            _ => x.as_f64().partial_cmp(&y.as_f64()),
        };
        use std::cmp::Ordering::*;
        return Ok(truth(match op {
            BinaryOp::Lt => ordering == Some(Less),
            BinaryOp::Le => matches!(ordering, Some(Less | Equal)),
            BinaryOp::Gt => ordering == Some(Greater),
            BinaryOp::Ge => matches!(ordering, Some(Greater | Equal)),
            BinaryOp::Eq => ordering == Some(Equal),
            BinaryOp::Ne => ordering != Some(Equal),
            BinaryOp::And => x.is_true() && y.is_true(),
            _ => x.is_true() || y.is_true(),
        }));
    }
    let zero_div = matches!(op, BinaryOp::Div | BinaryOp::Rem);
    Ok(match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            if zero_div && y == 0 {
                return Err(FoldError::DivisionByZero(span));
            }
            Value::Int(match op {
                BinaryOp::Add => x.wrapping_add(y),
                BinaryOp::Sub => x.wrapping_sub(y),
                BinaryOp::Mul => x.wrapping_mul(y),
                BinaryOp::Div => x.wrapping_div(y),
                _ => x.wrapping_rem(y),
            })
        }
        (Value::Long(x), Value::Long(y)) => {
            if zero_div && y == 0 {
                return Err(FoldError::DivisionByZero(span));
            }
            Value::Long(match op {
                BinaryOp::Add => x.wrapping_add(y),
                BinaryOp::Sub => x.wrapping_sub(y),
                BinaryOp::Mul => x.wrapping_mul(y),
                BinaryOp::Div => x.wrapping_div(y),
                _ => x.wrapping_rem(y),
            })
        }
        (Value::Float(x), Value::Float(y)) => Value::Float(match op {
            BinaryOp::Add => x + y,
            BinaryOp::Sub => x - y,
            BinaryOp::Mul => x * y,
            BinaryOp::Div => x / y,
            _ => x % y,
        }),
        (x, y) => {
            let (x, y) = (x.as_f64(), y.as_f64());
            Value::Double(match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div => x / y,
                _ => x % y,
            })
        }
    })
}

/// A math function on already-converted arguments.
pub fn call(func: MathFn, float_form: bool, args: &[Value]) -> Value {
    let arg = |i: usize| args.get(i).map_or(0.0, |v| v.as_f64());
    if float_form {
        let x = arg(0) as f32;
        let y = arg(1) as f32;
        return Value::Float(match func {
            MathFn::Sqrt => x.sqrt(),
            MathFn::Fabs => x.abs(),
            MathFn::Exp => x.exp(),
            MathFn::Log => x.ln(),
            MathFn::Pow => x.powf(y),
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tan => x.tan(),
            MathFn::Fmin => x.min(y),
            MathFn::Fmax => x.max(y),
            MathFn::Floor => x.floor(),
            MathFn::Ceil => x.ceil(),
        });
    }
    let (x, y) = (arg(0), arg(1));
    Value::Double(match func {
        MathFn::Sqrt => x.sqrt(),
        MathFn::Fabs => x.abs(),
        MathFn::Exp => x.exp(),
        MathFn::Log => x.ln(),
        MathFn::Pow => x.powf(y),
        MathFn::Sin => x.sin(),
        MathFn::Cos => x.cos(),
        MathFn::Tan => x.tan(),
        MathFn::Fmin => x.min(y),
        MathFn::Fmax => x.max(y),
        MathFn::Floor => x.floor(),
        MathFn::Ceil => x.ceil(),
    })
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
