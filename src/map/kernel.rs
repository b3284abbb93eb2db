//! The plan of one direct kernel (`--target opencl` and `cuda`): what the
//! host glue, the device residency and the report need of a kernel the
//! emitter wrote. It is plain data, below both the emitter that fills it
//! and the nest plans that hold it.

use std::collections::BTreeMap;

/// What the host glue of one kernel needs.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelPlan {
    /// The kernel's name.
    pub name: String,
    /// Its OpenCL C source.
    pub source: String,
    /// Arrays (name, written) in argument order.
    pub arrays: Vec<(String, bool)>,
    /// Per array, its size in bytes as a C expression (`sizeof(a)`, or the
    /// declared extents' product for an array parameter).
    pub bytes: BTreeMap<String, String>,
    /// Scalars passed by value (name, OpenCL type).
    pub scalars: Vec<(String, String)>,
    /// Flag reductions written through a one-element buffer.
    pub flags: Vec<String>,
    /// The parallel loops (var, lower, upper), outermost first.
    pub band: Vec<(String, String, String)>,
    /// The memory specialisation applied to its arrays, one line each.
    pub specialised: Vec<String>,
    /// CUDA: the read-only arrays in constant memory, filled before the launch.
    pub constants: Vec<ConstantArray>,
    /// CUDA: the kernel's declaration for compilers other than nvcc.
    pub declaration: String,
    /// Functions of the file the kernel calls, copied before it (once per
    /// program: see `opencl::callee`).
    pub functions: Vec<DeviceFunction>,
    /// The block (work-group) shape, outermost first, of a kernel that
    /// stages tiles in local memory (it takes counts and needs whole
    /// blocks); empty for the others.
    pub local: Vec<i64>,
    /// The parallel loops (indices into `band`) whose variables are
    /// declared outside them and read after the nest: the host sets them
    /// as the loops leave them.
    pub live_out: Vec<usize>,
}

/// A read-only array a CUDA kernel reads from constant memory.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstantArray {
    /// The C array.
    pub array: String,
    /// The `__constant__` symbol holding its copy.
    pub symbol: String,
    /// Its element type.
    pub ty: String,
    /// Its number of elements.
    pub elems: i64,
}

/// A function copied into the kernels.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceFunction {
    /// Its name.
    pub name: String,
    /// Its definition in the kernel language.
    pub source: String,
}
