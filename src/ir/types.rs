//! Scalar types and typed values, with C's conversion rules.

use std::fmt;

/// The four element types of SDSL: C's `int`, `long`, `float` and `double`.
///
/// `int` is 32-bit and `long` 64-bit (LP64), `float` is IEEE binary32 and
/// `double` binary64. The order of the variants is C's rank for the usual
/// arithmetic conversions, so `max` of two types is their common type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScalarType {
    /// 32-bit signed integer.
    Int,
    /// 64-bit signed integer.
    Long,
    /// IEEE binary32.
    Float,
    /// IEEE binary64.
    Double,
}

impl ScalarType {
    /// The SDSL/C spelling: `int`, `long`, `float`, `double`.
    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Int => "int",
            ScalarType::Long => "long",
            ScalarType::Float => "float",
            ScalarType::Double => "double",
        }
    }

    /// Whether the type is `float` or `double`.
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::Float | ScalarType::Double)
    }

    /// Size of one element in bytes.
    pub fn size_bytes(self) -> usize {
        match self {
            ScalarType::Int | ScalarType::Float => 4,
            ScalarType::Long | ScalarType::Double => 8,
        }
    }

    /// The type of `a op b` under C's usual arithmetic conversions.
    pub fn common(self, other: ScalarType) -> ScalarType {
        self.max(other)
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A typed scalar value, as a literal, a parameter value, a constant or a table entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// An `int`.
    Int(i32),
    /// A `long`.
    Long(i64),
    /// A `float`.
    Float(f32),
    /// A `double`.
    Double(f64),
}

impl Value {
    /// The value's type.
    pub fn ty(self) -> ScalarType {
        match self {
            Value::Int(_) => ScalarType::Int,
            Value::Long(_) => ScalarType::Long,
            Value::Float(_) => ScalarType::Float,
            Value::Double(_) => ScalarType::Double,
        }
    }

    /// Converts as a C cast `(ty)value` would (float to integer truncates toward
    /// zero and saturates instead of being undefined on overflow; NaN gives 0).
    pub fn cast(self, ty: ScalarType) -> Value {
        match ty {
            ScalarType::Int => Value::Int(match self {
                Value::Int(v) => v,
                Value::Long(v) => v as i32,
                Value::Float(v) => v as i32,
                Value::Double(v) => v as i32,
            }),
            ScalarType::Long => Value::Long(match self {
                Value::Int(v) => v as i64,
                Value::Long(v) => v,
                Value::Float(v) => v as i64,
                Value::Double(v) => v as i64,
            }),
            ScalarType::Float => Value::Float(match self {
                Value::Int(v) => v as f32,
                Value::Long(v) => v as f32,
                Value::Float(v) => v,
                Value::Double(v) => v as f32,
            }),
            ScalarType::Double => Value::Double(self.as_f64()),
        }
    }

    /// The value as `f64` (exact for `int`, `float` and `double`).
    pub fn as_f64(self) -> f64 {
        match self {
            Value::Int(v) => v as f64,
            Value::Long(v) => v as f64,
            Value::Float(v) => v as f64,
            Value::Double(v) => v,
        }
    }

    /// The value as `i64` (C truncation for floating values).
    pub fn as_i64(self) -> i64 {
        match self.cast(ScalarType::Long) {
            Value::Long(v) => v,
            _ => unreachable!("cast to long yields a long"),
        }
    }

    /// C truth: non-zero is true.
    pub fn is_true(self) -> bool {
        match self {
            Value::Int(v) => v != 0,
            Value::Long(v) => v != 0,
            Value::Float(v) => v != 0.0,
            Value::Double(v) => v != 0.0,
        }
    }
}

impl fmt::Display for Value {
    /// Prints the value for diagnostics, spelt as SDSL writes it (`1`, `1L`,
    /// `0.2f`, `0.2`); a non-finite value prints as `inf`, `-inf` or `NaN`,
    /// which is no literal: code printers use the kernel IR's literal printer
    /// (`kir::literal`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Long(v) => write!(f, "{v}L"),
            Value::Float(v) => {
                if v.is_finite() {
                    write!(f, "{v:?}f")
                } else {
                    write!(f, "{v}")
                }
            }
            Value::Double(v) => write!(f, "{v:?}"),
        }
    }
}
