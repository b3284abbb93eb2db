//! What every operator computes, per element type.
//!
//! The interpreter folds uniform sub-expressions at compile time on [`Value`]s and
//! runs the rest as loops over rows of elements; both go through the functions
//! here so that they produce the same bits. Where C leaves a result undefined the
//! interpreter defines it, and every back-end must agree:
//!
//! - integer `+ - *` and unary `-` wrap around (two's complement);
//! - integer `/` and `%` by zero yield 0, and `MIN / -1` wraps to `MIN` (`% -1` is 0);
//! - float to integer conversions truncate toward zero and saturate (NaN gives 0),
//!   as [`Value::cast`] does;
//! - `fmin`/`fmax` order -0.0 below +0.0 (C leaves the sign of a zero result
//!   unspecified), and a NaN argument gives the other one.
//!
//! A NaN result is defined as NaN only: its sign bit and payload are not part of
//! the meaning, and back-ends differ in them (C and OpenCL compilers turn
//! `x * -1.0` into `-x`, flipping the sign the interpreter's multiplication
//! keeps; invalid operations give the hardware's default NaN). `run --verify`
//! (`cli::verify`) takes every NaN as equal to every NaN.

use crate::ir::{BinaryOp, MathFn, ScalarType, UnaryOp, Value};

/// An element type the interpreter computes in: `i32`, `i64`, `f32` or `f64`.
pub(crate) trait Elem: Copy + Default + PartialOrd + Send + Sync + 'static {
    /// The SDSL type.
    const TY: ScalarType;
    /// The value converted to this type (as a C cast would).
    fn from_value(v: Value) -> Self;
    /// The element as a [`Value`].
    fn to_value(self) -> Value;
    /// `a + b`.
    fn add(a: Self, b: Self) -> Self;
    /// `a - b`.
    fn sub(a: Self, b: Self) -> Self;
    /// `a * b`.
    fn mul(a: Self, b: Self) -> Self;
    /// `a / b` (defined for integer division by zero, see the module docs).
    fn div(a: Self, b: Self) -> Self;
    /// `a % b` (defined for integer division by zero, see the module docs).
    fn rem(a: Self, b: Self) -> Self;
    /// `-a`.
    fn neg(a: Self) -> Self;
    /// C truth: non-zero.
    fn is_true(self) -> bool;
}

macro_rules! int_elem {
    ($t:ty, $variant:ident) => {
        impl Elem for $t {
            const TY: ScalarType = ScalarType::$variant;
            fn from_value(v: Value) -> Self {
                match v.cast(ScalarType::$variant) {
                    Value::$variant(x) => x,
                    _ => unreachable!("a cast yields its target type"),
                }
            }
            fn to_value(self) -> Value {
                Value::$variant(self)
            }
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                a.wrapping_sub(b)
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                a.wrapping_mul(b)
            }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                if b == 0 {
                    0
                } else {
                    a.wrapping_div(b)
                }
            }
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self {
                if b == 0 {
                    0
                } else {
                    a.wrapping_rem(b)
                }
            }
            #[inline(always)]
            fn neg(a: Self) -> Self {
                a.wrapping_neg()
            }
            #[inline(always)]
            fn is_true(self) -> bool {
                self != 0
            }
        }
    };
}

macro_rules! float_elem {
    ($t:ty, $variant:ident) => {
        impl Elem for $t {
            const TY: ScalarType = ScalarType::$variant;
            fn from_value(v: Value) -> Self {
                match v.cast(ScalarType::$variant) {
                    Value::$variant(x) => x,
                    _ => unreachable!("a cast yields its target type"),
                }
            }
            fn to_value(self) -> Value {
                Value::$variant(self)
            }
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self {
                a + b
            }
            #[inline(always)]
            fn sub(a: Self, b: Self) -> Self {
                a - b
            }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self {
                a * b
            }
            #[inline(always)]
            fn div(a: Self, b: Self) -> Self {
                a / b
            }
            #[inline(always)]
            fn rem(a: Self, b: Self) -> Self {
                a % b
            }
            #[inline(always)]
            fn neg(a: Self) -> Self {
                -a
            }
            #[inline(always)]
            fn is_true(self) -> bool {
                self != 0.0
            }
        }
    };
}

int_elem!(i32, Int);
int_elem!(i64, Long);
float_elem!(f32, Float);
float_elem!(f64, Double);

/// The floating-point element types, with C's `math.h` functions.
pub(crate) trait FloatElem: Elem {
    /// Applies a one-argument function.
    fn call1(func: MathFn, a: Self) -> Self;
    /// Applies a two-argument function (`pow`, `fmin`, `fmax`).
    fn call2(func: MathFn, a: Self, b: Self) -> Self;
}

macro_rules! float_math {
    ($t:ty) => {
        impl FloatElem for $t {
            #[inline(always)]
            fn call1(func: MathFn, a: Self) -> Self {
                match func {
                    MathFn::Sqrt => a.sqrt(),
                    MathFn::Fabs => a.abs(),
                    MathFn::Exp => a.exp(),
                    MathFn::Log => a.ln(),
                    MathFn::Sin => a.sin(),
                    MathFn::Cos => a.cos(),
                    MathFn::Tan => a.tan(),
                    MathFn::Floor => a.floor(),
                    MathFn::Ceil => a.ceil(),
                    // Two-argument functions never reach here (arity is checked
                    // when compiling); give the C result of f(a, a).
                    MathFn::Pow => a.powf(a),
                    MathFn::Fmin | MathFn::Fmax => a,
                }
            }
            #[inline(always)]
            fn call2(func: MathFn, a: Self, b: Self) -> Self {
                match func {
                    MathFn::Pow => a.powf(b),
                    // C's fmin/fmax: a NaN argument yields the other one; and
                    // -0.0 is below +0.0, where C leaves the sign unspecified.
                    MathFn::Fmin => {
                        if a < b || (a == b && a.is_sign_negative()) || b.is_nan() {
                            a
                        } else {
                            b
                        }
                    }
                    MathFn::Fmax => {
                        if a > b || (a == b && a.is_sign_positive()) || b.is_nan() {
                            a
                        } else {
                            b
                        }
                    }
                    other => Self::call1(other, a),
                }
            }
        }
    };
}

float_math!(f32);
float_math!(f64);

/// Runs `$body` with `$T` bound to the Rust type of the [`ScalarType`] `$ty`.
macro_rules! with_elem {
    ($ty:expr, $T:ident => $body:expr) => {
        match $ty {
            $crate::ir::ScalarType::Int => {
                type $T = i32;
                $body
            }
            $crate::ir::ScalarType::Long => {
                type $T = i64;
                $body
            }
            $crate::ir::ScalarType::Float => {
                type $T = f32;
                $body
            }
            $crate::ir::ScalarType::Double => {
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_elem;

/// The comparison `op` (one of `< <= > >= == !=`) on two elements.
#[inline(always)]
pub(crate) fn compare<T: Elem>(op: BinaryOp, a: T, b: T) -> bool {
    match op {
        BinaryOp::Lt => a < b,
        BinaryOp::Le => a <= b,
        BinaryOp::Gt => a > b,
        BinaryOp::Ge => a >= b,
        BinaryOp::Eq => a == b,
        _ => a != b,
    }
}

/// The arithmetic `op` (one of `+ - * / %`) on two elements.
#[inline(always)]
pub(crate) fn arith<T: Elem>(op: BinaryOp, a: T, b: T) -> T {
    match op {
        BinaryOp::Add => T::add(a, b),
        BinaryOp::Sub => T::sub(a, b),
        BinaryOp::Mul => T::mul(a, b),
        BinaryOp::Div => T::div(a, b),
        _ => T::rem(a, b),
    }
}

/// A binary operation on two values. Arithmetic and comparisons use the type of
/// `a` (the front-end gives both operands the common type; `b` is converted if
/// not); `&&` and `||` test each operand against zero. Comparisons and logic
/// yield `int` 0 or 1.
pub(crate) fn binary_value(op: BinaryOp, a: Value, b: Value) -> Value {
    match op {
        BinaryOp::And => Value::Int((a.is_true() && b.is_true()) as i32),
        BinaryOp::Or => Value::Int((a.is_true() || b.is_true()) as i32),
        _ if op.is_boolean() => {
            with_elem!(a.ty(), T => Value::Int(compare(op, T::from_value(a), T::from_value(b)) as i32))
        }
        _ => with_elem!(a.ty(), T => arith(op, T::from_value(a), T::from_value(b)).to_value()),
    }
}

/// A unary operation on a value (`!` yields `int`).
pub(crate) fn unary_value(op: UnaryOp, a: Value) -> Value {
    match op {
        UnaryOp::Not => Value::Int(!a.is_true() as i32),
        UnaryOp::Neg => with_elem!(a.ty(), T => T::neg(T::from_value(a)).to_value()),
    }
}

/// A math function call on values; `float_form` selects the `f`-suffixed form.
pub(crate) fn call_value(func: MathFn, float_form: bool, args: &[Value]) -> Value {
    fn go<T: FloatElem>(func: MathFn, args: &[Value]) -> Value {
        let a = args.first().map_or(T::default(), |v| T::from_value(*v));
        match args.get(1) {
            Some(b) => T::call2(func, a, T::from_value(*b)).to_value(),
            None => T::call1(func, a).to_value(),
        }
    }
    if float_form {
        go::<f32>(func, args)
    } else {
        go::<f64>(func, args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_by_zero_is_defined() {
        let v = binary_value(BinaryOp::Div, Value::Int(7), Value::Int(0));
        assert_eq!(v, Value::Int(0));
        let v = binary_value(BinaryOp::Rem, Value::Long(7), Value::Long(0));
        assert_eq!(v, Value::Long(0));
        let v = binary_value(BinaryOp::Div, Value::Int(i32::MIN), Value::Int(-1));
        assert_eq!(v, Value::Int(i32::MIN));
        let v = binary_value(BinaryOp::Rem, Value::Int(-7), Value::Int(2));
        assert_eq!(v, Value::Int(-1), "the sign follows the dividend, as in C");
    }

    #[test]
    fn comparisons_and_logic_yield_int() {
        let v = binary_value(BinaryOp::Lt, Value::Double(1.0), Value::Double(2.0));
        assert_eq!(v, Value::Int(1));
        let v = binary_value(BinaryOp::And, Value::Float(0.5), Value::Long(0));
        assert_eq!(v, Value::Int(0));
        assert_eq!(unary_value(UnaryOp::Not, Value::Double(0.0)), Value::Int(1));
    }

    #[test]
    fn float_math_uses_the_type_of_the_form() {
        let v = call_value(MathFn::Sqrt, true, &[Value::Float(2.0)]);
        assert_eq!(v, Value::Float(2.0f32.sqrt()));
        let v = call_value(
            MathFn::Fmax,
            false,
            &[Value::Double(f64::NAN), Value::Double(1.0)],
        );
        assert_eq!(v, Value::Double(1.0));
    }

    #[test]
    fn fmin_and_fmax_order_minus_zero_below_plus_zero() {
        let sign_negative = |func, a: f64, b: f64| {
            let v = call_value(func, false, &[Value::Double(a), Value::Double(b)]);
            assert_eq!(v.as_f64(), 0.0);
            v.as_f64().is_sign_negative()
        };
        for (a, b) in [(0.0, -0.0), (-0.0, 0.0)] {
            assert!(sign_negative(MathFn::Fmin, a, b), "fmin({a}, {b})");
            assert!(!sign_negative(MathFn::Fmax, a, b), "fmax({a}, {b})");
        }
        assert!(sign_negative(MathFn::Fmax, -0.0, -0.0));
        assert!(!sign_negative(MathFn::Fmin, 0.0, 0.0));
        let v = call_value(
            MathFn::Fmin,
            true,
            &[Value::Float(-0.0), Value::Float(f32::NAN)],
        );
        assert_eq!(
            v.as_f64().to_bits(),
            (-0.0f64).to_bits(),
            "NaN gives the other"
        );
    }
}
