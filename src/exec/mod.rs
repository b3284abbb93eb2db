//! Running programs: data in memory, parameter bindings, and the executors.
//!
//! Every executor (the reference interpreter, native C, OpenCL, CUDA) runs a
//! [`Program`] with the same [`Bindings`] on the same [`FieldState`] and returns a
//! [`RunSummary`]; the interpreter defines what the right answer is.

pub mod backend;
pub mod cuda;
pub mod emu;
pub mod gpu_parts;
pub mod host_plan;
pub mod in_place;
mod inputs;
pub mod interp;
pub mod kanicuda;
pub mod mpi;
pub mod native;
pub mod opencl;

use std::time::Duration;

use serde::Serialize;

use crate::diag::Diagnostics;
use crate::ir::{Program, ScalarType, Value};

pub use crate::ir::env::Bindings;
pub use in_place::ReadInPlace;
pub use inputs::{bind, check_inputs, check_inputs_in_place};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// A problem located in the program's source (an access outside the grid once
    /// parameter values are known, say); rendered with file:line:col and a caret.
    #[error("{0}")]
    Located(#[from] Diagnostics),
    /// The back-end cannot run here (no C compiler, no OpenCL platform, no GPU,
    /// NVRTC missing); `--backend auto` moves on to the next back-end.
    #[error("{0}")]
    Unavailable(String),
    /// Any other run-time error, as a sentence that says what to do.
    #[error("{0}")]
    Failed(String),
    /// The run was stopped from outside between iterations (a stop flag set
    /// through [`backend::ProgressHook::with_stop`]), after this many.
    #[error("interrupted after {0} iteration(s)")]
    Interrupted(u64),
}

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

/// The data of every field: per field, one buffer per time level, indexed by
/// `time - time_lo` at the start of the current iteration.
///
/// Rotation at the end of an iteration is `levels.rotate_left(1)`: the buffer
/// written as `[time_hi]` becomes `[time_hi - 1]`, and the oldest is reused as the
/// new `[time_hi]`. Buffers are moved, never copied.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldState {
    /// `fields[f][level]`.
    pub fields: Vec<Vec<Buffer>>,
}

impl FieldState {
    /// Rotates the time levels of every multi-level field (end of an iteration).
    pub fn rotate(&mut self) {
        for levels in &mut self.fields {
            levels.rotate_left(1);
        }
    }

    /// The buffer holding the newest values of field `f` (see `Field::newest_offset`).
    pub fn newest<'a>(&'a self, program: &Program, f: usize) -> &'a Buffer {
        let field = &program.fields[f];
        &self.fields[f][field.level_of(field.newest_offset())]
    }
}

/// Wall-clock time spent in each phase of a run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PhaseTimes {
    /// Translating and compiling generated code (zero for the interpreter; zero
    /// on a cache hit except for loading).
    #[serde(serialize_with = "secs")]
    pub compile: Duration,
    /// Host-to-device transfers.
    #[serde(serialize_with = "secs")]
    pub upload: Duration,
    /// The iterate itself (on a GPU: kernel time measured with events).
    #[serde(serialize_with = "secs")]
    pub compute: Duration,
    /// Device-to-host transfers.
    #[serde(serialize_with = "secs")]
    pub download: Duration,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// What a run did.
#[derive(Clone, Debug, Default)]
pub struct RunSummary {
    /// Iterations executed.
    pub iterations: u64,
    /// Whether the check clause ended the iterate before its maximum.
    pub stopped_by_check: bool,
    /// The last evaluated value of each reduction (`None` if never evaluated).
    pub reductions: Vec<(String, Option<Value>)>,
    /// Time per phase.
    pub times: PhaseTimes,
}
