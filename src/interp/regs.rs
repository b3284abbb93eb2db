//! Chunks and vector registers: the data the interpreter's operations work on.
//!
//! A [`Chunk`] is up to [`CHUNK`] consecutive points along the innermost axis;
//! [`Regs`] holds one typed vector per register of a compiled kernel, one file
//! per element type, and [`RegElem`] picks the file and the C conversions for
//! an element type. They live apart from the `vm` module (which runs operations on
//! them) and the `fields` module (which loads and stores them), so that neither of
//! those two needs the other's types.

use crate::interp::compile::{type_index, Kernel};
use crate::ir::semantics::Elem;
use crate::ir::ScalarType;

/// Points per chunk: registers of this many doubles stay in the L1/L2 cache.
pub(crate) const CHUNK: usize = 256;

/// Where a chunk lies: the coordinates of its outer axes (outermost first) and
/// its first coordinate and length along the innermost axis.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chunk {
    /// Coordinates of axes `0..rank-1` (unused entries are 0).
    pub outer: [i64; 2],
    /// First innermost coordinate.
    pub x0: i64,
    /// Number of points (at most [`CHUNK`]).
    pub len: usize,
}

/// Vector registers, one file per element type.
#[derive(Default)]
pub(crate) struct Regs {
    int: Vec<Vec<i32>>,
    long: Vec<Vec<i64>>,
    float: Vec<Vec<f32>>,
    double: Vec<Vec<f64>>,
}

impl Regs {
    /// Registers for a kernel, each [`CHUNK`] elements long.
    pub(crate) fn for_kernel(kernel: &Kernel) -> Regs {
        let n = |ty: ScalarType| kernel.regs[type_index(ty)] as usize;
        Regs {
            int: vec![vec![0; CHUNK]; n(ScalarType::Int)],
            long: vec![vec![0; CHUNK]; n(ScalarType::Long)],
            float: vec![vec![0.0; CHUNK]; n(ScalarType::Float)],
            double: vec![vec![0.0; CHUNK]; n(ScalarType::Double)],
        }
    }
}

/// An element type with its register file and C conversions.
pub(crate) trait RegElem: Elem {
    fn file(regs: &Regs) -> &Vec<Vec<Self>>;
    fn file_mut(regs: &mut Regs) -> &mut Vec<Vec<Self>>;
    /// `(Self) a` for each source type, as C converts (saturating float to int).
    fn convert<A: RegElem>(a: A) -> Self;
    fn as_i32(self) -> i32;
    fn as_i64(self) -> i64;
    fn as_f32(self) -> f32;
    fn as_f64(self) -> f64;
}

macro_rules! reg_elem {
    ($t:ty, $field:ident, $as:ident) => {
        impl RegElem for $t {
            fn file(regs: &Regs) -> &Vec<Vec<Self>> {
                &regs.$field
            }
            fn file_mut(regs: &mut Regs) -> &mut Vec<Vec<Self>> {
                &mut regs.$field
            }
            #[inline(always)]
            fn convert<A: RegElem>(a: A) -> Self {
                a.$as()
            }
            #[inline(always)]
            fn as_i32(self) -> i32 {
                self as i32
            }
            #[inline(always)]
            fn as_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn as_f32(self) -> f32 {
                self as f32
            }
            #[inline(always)]
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    };
}

reg_elem!(i32, int, as_i32);
reg_elem!(i64, long, as_i64);
reg_elem!(f32, float, as_f32);
reg_elem!(f64, double, as_f64);
