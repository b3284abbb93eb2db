//! Values of the emulated kernel and C's arithmetic on them, as CUDA computes
//! it: integers wrap at their width, `float` stays in single precision.

use crate::front::cuda::ast::{BinOp, Scalar, UnOp};

/// One value of a scalar type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// `bool`
    Bool(bool),
    /// `int`
    Int(i32),
    /// `unsigned int`
    UInt(u32),
    /// `long`
    Long(i64),
    /// `unsigned long`
    ULong(u64),
    /// `float`
    Float(f32),
    /// `double`
    Double(f64),
}

impl Value {
    /// Zero of a type (what a declaration without initialiser holds here).
    pub fn zero(scalar: Scalar) -> Value {
        Value::Int(0).convert(scalar)
    }

    /// The type of the value.
    pub fn scalar(self) -> Scalar {
        match self {
            Value::Bool(_) => Scalar::Bool,
            Value::Int(_) => Scalar::Int,
            Value::UInt(_) => Scalar::UInt,
            Value::Long(_) => Scalar::Long,
            Value::ULong(_) => Scalar::ULong,
            Value::Float(_) => Scalar::Float,
            Value::Double(_) => Scalar::Double,
        }
    }

    /// The value as a 64-bit integer (floats truncated), for indices and profiles.
    pub fn as_i64(self) -> i64 {
        match self {
            Value::Bool(b) => i64::from(b),
            Value::Int(v) => i64::from(v),
            Value::UInt(v) => i64::from(v),
            Value::Long(v) => v,
            Value::ULong(v) => v as i64,
            Value::Float(v) => v as i64,
            Value::Double(v) => v as i64,
        }
    }

    /// The value as a double (for results and comparisons in tests).
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Float(v) => f64::from(v),
            Value::Double(v) => v,
            Value::ULong(v) => v as f64,
            other => other.as_i64() as f64,
        }
    }

    /// C's truth value.
    pub fn truth(self) -> bool {
        match self {
            Value::Bool(b) => b,
            Value::Float(v) => v != 0.0,
            Value::Double(v) => v != 0.0,
            other => other.as_i64() != 0,
        }
    }

    /// C's conversion to `to` (integers wrap; floats truncate toward zero,
    /// saturating where C leaves it undefined).
    pub fn convert(self, to: Scalar) -> Value {
        if self.scalar() == to {
            return self;
        }
        if to == Scalar::Bool {
            return Value::Bool(self.truth());
        }
        match self {
            Value::Float(_) | Value::Double(_) => {
                let v = self.as_f64();
                match to {
                    Scalar::Int => Value::Int(v as i32),
                    Scalar::UInt => Value::UInt(v as u32),
                    Scalar::Long => Value::Long(v as i64),
                    Scalar::ULong => Value::ULong(v as u64),
                    Scalar::Float => Value::Float(v as f32),
                    Scalar::Double | Scalar::Bool => Value::Double(v),
                }
            }
            _ => {
                // Integers: via the 64-bit two's-complement pattern.
                let bits = match self {
                    Value::ULong(v) => v,
                    other => other.as_i64() as u64,
                };
                let unsigned_source = matches!(self, Value::ULong(_) | Value::UInt(_));
                match to {
                    Scalar::Int => Value::Int(bits as i32),
                    Scalar::UInt => Value::UInt(bits as u32),
                    Scalar::Long => Value::Long(bits as i64),
                    Scalar::ULong => Value::ULong(bits),
                    Scalar::Float if unsigned_source => Value::Float(bits as f32),
                    Scalar::Float => Value::Float(bits as i64 as f32),
                    Scalar::Double if unsigned_source => Value::Double(bits as f64),
                    Scalar::Double | Scalar::Bool => Value::Double(bits as i64 as f64),
                }
            }
        }
    }

    /// A unary operator on a value already converted to the result type
    /// (`!` on a truth value).
    pub fn unary(self, op: UnOp) -> Value {
        match (op, self) {
            (UnOp::Plus, v) => v,
            (UnOp::Not, v) => Value::Bool(!v.truth()),
            (UnOp::Neg, Value::Int(v)) => Value::Int(v.wrapping_neg()),
            (UnOp::Neg, Value::UInt(v)) => Value::UInt(v.wrapping_neg()),
            (UnOp::Neg, Value::Long(v)) => Value::Long(v.wrapping_neg()),
            (UnOp::Neg, Value::ULong(v)) => Value::ULong(v.wrapping_neg()),
            (UnOp::Neg, Value::Float(v)) => Value::Float(-v),
            (UnOp::Neg, Value::Double(v)) => Value::Double(-v),
            (UnOp::Neg, Value::Bool(b)) => Value::Int(-i32::from(b)),
            (UnOp::BitNot, Value::Int(v)) => Value::Int(!v),
            (UnOp::BitNot, Value::UInt(v)) => Value::UInt(!v),
            (UnOp::BitNot, Value::Long(v)) => Value::Long(!v),
            (UnOp::BitNot, Value::ULong(v)) => Value::ULong(!v),
            (UnOp::BitNot, v) => Value::Int(!(v.as_i64() as i32)),
        }
    }

    /// A binary operator on two values of one type (the compiler converts
    /// both operands first); `Err` names what went wrong (integer division by
    /// zero, [`SHIFT_OUT_OF_RANGE`]).
    pub fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, &'static str> {
        macro_rules! int_op {
            ($x:expr, $y:expr, $wrap:ident) => {{
                let (x, y) = ($x, $y);
                match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::Div if y == 0 => return Err("integer division by zero"),
                    BinOp::Div => x.wrapping_div(y),
                    BinOp::Rem if y == 0 => return Err("integer remainder by zero"),
                    BinOp::Rem => x.wrapping_rem(y),
                    // C leaves a shift by a negative amount or by the width
                    // or more undefined (x86 masks the amount, others do not):
                    // a finding, as division by zero is, not a guessed value.
                    BinOp::Shl | BinOp::Shr
                        if !(0..i128::from(<$wrap>::BITS)).contains(&(y as i128)) =>
                    {
                        return Err(SHIFT_OUT_OF_RANGE)
                    }
                    BinOp::Shl => x.wrapping_shl(y as u32),
                    BinOp::Shr => x.wrapping_shr(y as u32),
                    BinOp::BitAnd => x & y,
                    BinOp::BitOr => x | y,
                    BinOp::BitXor => x ^ y,
                    _ => return Ok(Value::Bool(compare(op, x.partial_cmp(&y)))),
                }
            }};
        }
        macro_rules! float_op {
            ($x:expr, $y:expr) => {{
                let (x, y) = ($x, $y);
                match op {
                    BinOp::Add => x + y,
                    BinOp::Sub => x - y,
                    BinOp::Mul => x * y,
                    BinOp::Div => x / y,
                    _ => return Ok(Value::Bool(compare(op, x.partial_cmp(&y)))),
                }
            }};
        }
        if matches!(op, BinOp::And | BinOp::Or) {
            let (x, y) = (a.truth(), b.truth());
            return Ok(Value::Bool(if op == BinOp::And { x && y } else { x || y }));
        }
        Ok(match (a, b) {
            (Value::Int(x), Value::Int(y)) => Value::Int(int_op!(x, y, i32)),
            (Value::UInt(x), Value::UInt(y)) => Value::UInt(int_op!(x, y, u32)),
            (Value::Long(x), Value::Long(y)) => Value::Long(int_op!(x, y, i64)),
            (Value::ULong(x), Value::ULong(y)) => Value::ULong(int_op!(x, y, u64)),
            (Value::Float(x), Value::Float(y)) => Value::Float(float_op!(x, y)),
            (Value::Double(x), Value::Double(y)) => Value::Double(float_op!(x, y)),
            (Value::Bool(x), Value::Bool(y)) => {
                let (x, y) = (i32::from(x), i32::from(y));
                Value::Int(int_op!(x, y, i32))
            }
            // Mixed types never reach here; compute in double rather than panic.
            (x, y) => Value::Double(float_op!(x.as_f64(), y.as_f64())),
        })
    }
}

/// What [`Value::binary`] says of a shift whose amount is negative or at least
/// the shifted type's width in bits (undefined in C and CUDA).
pub const SHIFT_OUT_OF_RANGE: &str =
    "shift by a negative amount or by at least the width of the shifted type";

fn compare(op: BinOp, order: Option<std::cmp::Ordering>) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    match op {
        BinOp::Lt => order == Some(Less),
        BinOp::Le => matches!(order, Some(Less | Equal)),
        BinOp::Gt => order == Some(Greater),
        BinOp::Ge => matches!(order, Some(Greater | Equal)),
        BinOp::Eq => order == Some(Equal),
        BinOp::Ne => order != Some(Equal),
        _ => false,
    }
}

/// Calls math function `name` computing in `ty` (for a predicate, `signbit`
/// and `isnan`, the operand's type: the result is an `int`); integer
/// `min`/`max`/`abs` stay integers, `float` functions compute in single
/// precision.
pub fn call(name: &str, ty: Scalar, args: &[Value]) -> Value {
    let base = name.strip_suffix('f').filter(|b| {
        crate::front::cuda::sema::MATH
            .iter()
            .any(|(n, _, _)| n == b)
            || *b == "rsqrt"
    });
    let name = base.unwrap_or(name);
    let args: Vec<Value> = args.iter().map(|a| a.convert(ty)).collect();
    if crate::front::cuda::functions::is_predicate(name) {
        // `ty` is the operand's: the result is an `int` truth value
        // (converting a `float` to `double` keeps its sign and NaN).
        let x = args[0].as_f64();
        let holds = if name == "signbit" {
            x.is_sign_negative()
        } else {
            x.is_nan()
        };
        return Value::Int(i32::from(holds));
    }
    if !ty.is_float() {
        let x = args[0];
        return match name {
            "abs" => {
                if x.as_i64() < 0 {
                    x.unary(UnOp::Neg)
                } else {
                    x
                }
            }
            "min" | "max" => {
                let less = Value::binary(BinOp::Lt, args[0], args[1])
                    .map(Value::truth)
                    .unwrap_or(false);
                if (name == "min") == less {
                    args[0]
                } else {
                    args[1]
                }
            }
            _ => x,
        };
    }
    macro_rules! apply {
        ($t:ty, $x:expr, $y:expr) => {{
            let (x, y): ($t, $t) = ($x, $y);
            match name {
                "sqrt" => x.sqrt(),
                "rsqrt" => 1.0 / x.sqrt(),
                "exp" => x.exp(),
                "exp2" => x.exp2(),
                "log" => x.ln(),
                "log2" => x.log2(),
                "sin" => x.sin(),
                "cos" => x.cos(),
                "tan" => x.tan(),
                "tanh" => x.tanh(),
                "fabs" | "abs" => x.abs(),
                "floor" => x.floor(),
                "ceil" => x.ceil(),
                "pow" => x.powf(y),
                "fmin" | "min" => x.min(y),
                "fmax" | "max" => x.max(y),
                "fmod" => x % y,
                _ => x,
            }
        }};
    }
    let second = |t: Scalar| args.get(1).copied().unwrap_or(Value::zero(t));
    match ty {
        Scalar::Float => {
            let (Value::Float(x), Value::Float(y)) = (args[0], second(ty)) else {
                return args[0];
            };
            Value::Float(apply!(f32, x, y))
        }
        _ => Value::Double(apply!(f64, args[0].as_f64(), second(ty).as_f64())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_wrap_and_floats_stay_single() {
        let max = Value::Int(i32::MAX);
        assert_eq!(
            Value::binary(BinOp::Add, max, Value::Int(1)),
            Ok(Value::Int(i32::MIN))
        );
        assert_eq!(Value::UInt(1).unary(UnOp::Neg), Value::UInt(u32::MAX));
        let third = Value::binary(BinOp::Div, Value::Float(1.0), Value::Float(3.0)).unwrap();
        assert_eq!(third, Value::Float(1.0f32 / 3.0f32));
        assert!(Value::binary(BinOp::Div, Value::Int(1), Value::Int(0)).is_err());
        assert_eq!(Value::Int(-1).convert(Scalar::UInt), Value::UInt(u32::MAX));
        assert_eq!(Value::Double(-2.7).convert(Scalar::Int), Value::Int(-2));
    }

    #[test]
    fn shifts_out_of_range_are_errors_as_division_by_zero_is() {
        let shift = |op, x, y| Value::binary(op, x, y);
        assert_eq!(
            shift(BinOp::Shl, Value::Int(1), Value::Int(31)),
            Ok(Value::Int(i32::MIN))
        );
        assert_eq!(
            shift(BinOp::Shr, Value::Long(-8), Value::Long(63)),
            Ok(Value::Long(-1))
        );
        for (x, y) in [
            (Value::Int(1), Value::Int(32)),
            (Value::Int(1), Value::Int(-1)),
            (Value::UInt(1), Value::UInt(40)),
            (Value::Long(1), Value::Long(64)),
            (Value::ULong(1), Value::ULong(u64::MAX)),
        ] {
            for op in [BinOp::Shl, BinOp::Shr] {
                assert_eq!(
                    shift(op, x, y),
                    Err(SHIFT_OUT_OF_RANGE),
                    "{x:?} {op:?} {y:?}"
                );
            }
        }
    }

    #[test]
    fn math_in_the_functions_precision() {
        assert_eq!(
            call("sqrtf", Scalar::Float, &[Value::Float(2.0)]),
            Value::Float(2f32.sqrt())
        );
        assert_eq!(
            call("min", Scalar::Int, &[Value::Int(3), Value::Int(-4)]),
            Value::Int(-4)
        );
        assert_eq!(
            call("fabs", Scalar::Double, &[Value::Double(-1.5)]),
            Value::Double(1.5)
        );
    }
}
