//! One field time level's values in memory, as a flat buffer of its element
//! type: what every executor reads and writes and what `io` reads from and
//! writes to files.

use crate::ir::{ScalarType, Value};

/// A flat, row-major buffer of one field time level (innermost axis contiguous).
#[derive(Clone, Debug, PartialEq)]
pub enum Buffer {
    /// `int` elements.
    Int(Vec<i32>),
    /// `long` elements.
    Long(Vec<i64>),
    /// `float` elements.
    Float(Vec<f32>),
    /// `double` elements.
    Double(Vec<f64>),
}

impl Buffer {
    /// `len` zeros of type `ty`.
    pub fn zeros(ty: ScalarType, len: usize) -> Buffer {
        match ty {
            ScalarType::Int => Buffer::Int(vec![0; len]),
            ScalarType::Long => Buffer::Long(vec![0; len]),
            ScalarType::Float => Buffer::Float(vec![0.0; len]),
            ScalarType::Double => Buffer::Double(vec![0.0; len]),
        }
    }

    /// Element type.
    pub fn ty(&self) -> ScalarType {
        match self {
            Buffer::Int(_) => ScalarType::Int,
            Buffer::Long(_) => ScalarType::Long,
            Buffer::Float(_) => ScalarType::Float,
            Buffer::Double(_) => ScalarType::Double,
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Buffer::Int(v) => v.len(),
            Buffer::Long(v) => v.len(),
            Buffer::Float(v) => v.len(),
            Buffer::Double(v) => v.len(),
        }
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as a [`Value`].
    pub fn get(&self, i: usize) -> Value {
        match self {
            Buffer::Int(v) => Value::Int(v[i]),
            Buffer::Long(v) => Value::Long(v[i]),
            Buffer::Float(v) => Value::Float(v[i]),
            Buffer::Double(v) => Value::Double(v[i]),
        }
    }

    /// Every element converted to `f64` (for comparisons in tests and tools).
    pub fn to_f64(&self) -> Vec<f64> {
        (0..self.len()).map(|i| self.get(i).as_f64()).collect()
    }

    /// The raw bytes, native-endian.
    pub fn as_bytes(&self) -> &[u8] {
        fn bytes<T>(v: &[T]) -> &[u8] {
            // SAFETY: plain-old-data numbers; any bit pattern is a valid u8.
            unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
        }
        match self {
            Buffer::Int(v) => bytes(v),
            Buffer::Long(v) => bytes(v),
            Buffer::Float(v) => bytes(v),
            Buffer::Double(v) => bytes(v),
        }
    }

    /// The raw bytes, native-endian, writable.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        fn bytes<T>(v: &mut [T]) -> &mut [u8] {
            // SAFETY: plain-old-data numbers; any bit pattern is valid for them.
            unsafe {
                std::slice::from_raw_parts_mut(
                    v.as_mut_ptr().cast::<u8>(),
                    std::mem::size_of_val(v),
                )
            }
        }
        match self {
            Buffer::Int(v) => bytes(v),
            Buffer::Long(v) => bytes(v),
            Buffer::Float(v) => bytes(v),
            Buffer::Double(v) => bytes(v),
        }
    }
}
