//! OpenCL C back-end: prints the kernel IR as one OpenCL C program (1.2), with
//! `reqd_work_group_size` so the block shape is checked by the runtime.

pub mod from_cuda;

use crate::ir::MathFn;
use crate::kir::print::{self, Dialect};
use crate::kir::{Builtin, KParam, Kernel, Module, ParamKind};

/// Build options: IEEE single-precision division and square root, as C has
/// them; no warnings (PoCL prints only their count, "1 warning generated.",
/// on stderr: noise for a user whose program compares a value with itself,
/// and the same kernels printed as CUDA are checked warning-free by NVRTC in
/// the tests).
pub const BUILD_OPTIONS: &str = "-cl-fp32-correctly-rounded-divide-sqrt -w";

/// [`BUILD_OPTIONS`] with `a * b + c` allowed to become a multiply-add
/// (`--fma`; results then differ from the interpreter's in the last bits).
pub const FMA_BUILD_OPTIONS: &str = "-cl-fp32-correctly-rounded-divide-sqrt -cl-mad-enable -w";

/// The build options for `module`: [`FMA_BUILD_OPTIONS`] when it allows
/// contraction ([`Module::fma`]), else [`BUILD_OPTIONS`].
pub fn build_options(module: &Module) -> &'static str {
    if module.fma {
        FMA_BUILD_OPTIONS
    } else {
        BUILD_OPTIONS
    }
}

/// OpenCL C spelling of the kernel IR.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenCl;

/// Prints `module` as OpenCL C.
pub fn print(module: &Module) -> String {
    print::print_module(module, &OpenCl)
}

impl Dialect for OpenCl {
    fn language(&self) -> crate::kir::names::Language {
        crate::kir::names::Language::OpenCl
    }

    fn prelude(&self, module: &Module) -> String {
        let mut text = if module.fma {
            format!(
                "{}// (OpenCL: -cl-mad-enable)\n#pragma OPENCL FP_CONTRACT ON\n",
                print::FMA_NOTICE
            )
        } else {
            String::from("#pragma OPENCL FP_CONTRACT OFF\n")
        };
        if module.uses_double() {
            text.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
        }
        text
    }

    fn kernel_head(&self, kernel: &Kernel) -> String {
        let [x, y, z] = kernel.block;
        format!(
            "__kernel __attribute__((reqd_work_group_size({x}, {y}, {z}))) void {}",
            kernel.name
        )
    }

    fn param(&self, param: &KParam, name: &str) -> String {
        let ty = param.ty.name();
        match param.kind {
            ParamKind::Scalar => format!("const {ty} {name}"),
            ParamKind::ReadOnlyBuffer => format!("__global const {ty}* restrict {name}"),
            ParamKind::Buffer => format!("__global {ty}* restrict {name}"),
        }
    }

    fn shared_qualifier(&self) -> &'static str {
        "__local"
    }

    fn constant_qualifier(&self) -> &'static str {
        "__constant"
    }

    fn helper_qualifier(&self) -> &'static str {
        "static inline"
    }

    fn builtin(&self, b: Builtin) -> String {
        match b {
            Builtin::ThreadIdx(a) => format!("(int)get_local_id({a})"),
            Builtin::BlockIdx(a) => format!("(int)get_group_id({a})"),
            Builtin::NumGroups(a) => format!("(int)get_num_groups({a})"),
        }
    }

    fn barrier(&self) -> &'static str {
        "barrier(CLK_LOCAL_MEM_FENCE);"
    }

    fn math_name(&self, func: MathFn, _float_form: bool) -> String {
        // OpenCL C overloads the unsuffixed names on float and double.
        func.name().into()
    }

    fn shuffle_down(&self, value: &str, _delta: u32) -> String {
        // Lowering never emits shuffles for this dialect; keep the value.
        value.into()
    }

    fn vector_load(&self, vector: &str, pointer: &str) -> String {
        // A pointer cast rather than `vloadn`, which would allow any element
        // alignment: the access is the aligned one the CUDA kernel makes.
        format!("*(__global const {vector}*)({pointer})")
    }

    fn vector_store(&self, vector: &str, pointer: &str, values: &[String]) -> String {
        format!(
            "*(__global {vector}*)({pointer}) = ({vector})({});",
            values.join(", ")
        )
    }

    fn unroll_pragma(&self) -> Option<&'static str> {
        None
    }
}
