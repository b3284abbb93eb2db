//! Compile-time evaluation of typed expressions (loop bounds, table extents and
//! values, and constants that do not depend on parameters).
//!
//! Arithmetic is C's on the expression's type: the front-end has already made
//! every conversion explicit, so both operands of an arithmetic operator have
//! the same type here. The evaluator is the one every layer uses
//! ([`crate::ir::eval`], with the operators of [`crate::ir::semantics`]), so a
//! folded value is exactly what the program would compute at run time; only
//! integer division by zero differs, being a diagnostic here.

use crate::ir::eval::{eval, EvalError, Leaves};
use crate::ir::{ConstId, Expr, ScalarType, Value};
use crate::source::Span;

/// Why an expression has no compile-time value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FoldError {
    /// It depends on something known only at run time (this node).
    NotConstant(Span),
    /// Integer division or remainder by zero (this node).
    DivisionByZero(Span),
}

/// Evaluates `expr` with the shared evaluator ([`crate::ir::eval`]);
/// `constant` gives the value of a named constant when it is known without
/// parameters.
pub fn fold(expr: &Expr, constant: &dyn Fn(usize) -> Option<Value>) -> Result<Value, FoldError> {
    eval(expr, &Constants(constant)).map_err(|e| match e {
        EvalError::Unknown(span) => FoldError::NotConstant(span),
        EvalError::DivisionByZero(span) => FoldError::DivisionByZero(span),
    })
}

/// Compile-time leaves: literals and the constants known without parameters;
/// integer division by zero is a mistake to report.
struct Constants<'a>(&'a dyn Fn(usize) -> Option<Value>);

impl Leaves for Constants<'_> {
    fn constant(&self, id: ConstId) -> Option<Value> {
        (self.0)(id.0)
    }
    fn refuse_division_by_zero(&self) -> bool {
        true
    }
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
