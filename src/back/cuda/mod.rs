//! CUDA C back-end: prints the kernel IR as one self-contained translation unit of
//! `extern "C"` kernels that NVRTC compiles as-is (no headers, no host code).

use crate::ir::MathFn;
use crate::kir::print::{self, Dialect};
use crate::kir::{Builtin, KParam, Kernel, Module, ParamKind};

/// The options stencilc passes to NVRTC besides the architecture: no FMA
/// contraction (C semantics), IEEE division and square root.
pub const NVRTC_OPTIONS: &[&str] = &["--fmad=false", "--prec-div=true", "--prec-sqrt=true"];

/// [`NVRTC_OPTIONS`] with contraction into fused multiply-adds allowed
/// (`--fma`; results then differ from the interpreter's in the last bits).
pub const NVRTC_FMA_OPTIONS: &[&str] = &["--fmad=true", "--prec-div=true", "--prec-sqrt=true"];

/// The NVRTC options for `module`: [`NVRTC_FMA_OPTIONS`] when it allows
/// contraction ([`Module::fma`]), else [`NVRTC_OPTIONS`].
pub fn nvrtc_options(module: &Module) -> &'static [&'static str] {
    if module.fma {
        NVRTC_FMA_OPTIONS
    } else {
        NVRTC_OPTIONS
    }
}

/// CUDA spelling of the kernel IR.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cuda {
    /// The second argument of every kernel's `__launch_bounds__`
    /// ([`Module::min_blocks_per_sm`]).
    pub min_blocks_per_sm: Option<u32>,
}

/// Prints `module` as CUDA C.
pub fn print(module: &Module) -> String {
    let dialect = Cuda {
        min_blocks_per_sm: module.min_blocks_per_sm,
    };
    print::print_module(module, &dialect)
}

const AXES: [&str; 3] = ["x", "y", "z"];

impl Dialect for Cuda {
    fn language(&self) -> crate::kir::names::Language {
        crate::kir::names::Language::Cuda
    }

    fn prelude(&self, module: &Module) -> String {
        let mut text = String::from("// CUDA C for NVRTC: extern \"C\" kernels, no host code.\n");
        if module.fma {
            text.push_str(print::FMA_NOTICE);
            text.push_str("// (NVRTC: --fmad=true)\n");
        }
        text
    }

    fn kernel_head(&self, kernel: &Kernel) -> String {
        let bounds = match self.min_blocks_per_sm {
            Some(blocks) => format!("{}, {blocks}", kernel.threads()),
            None => kernel.threads().to_string(),
        };
        format!(
            "extern \"C\" __global__ void __launch_bounds__({bounds}) {}",
            kernel.name
        )
    }

    fn param(&self, param: &KParam, name: &str) -> String {
        let ty = self.type_name(param.ty);
        match param.kind {
            ParamKind::Scalar => format!("const {ty} {name}"),
            ParamKind::ReadOnlyBuffer => format!("const {ty}* __restrict__ {name}"),
            ParamKind::Buffer => format!("{ty}* __restrict__ {name}"),
        }
    }

    fn shared_qualifier(&self) -> &'static str {
        "__shared__"
    }

    fn constant_qualifier(&self) -> &'static str {
        "__constant__ const"
    }

    fn global_table_qualifier(&self) -> &'static str {
        "__device__"
    }

    fn helper_qualifier(&self) -> &'static str {
        "static __device__ __forceinline__"
    }

    fn builtin(&self, b: Builtin) -> String {
        match b {
            Builtin::ThreadIdx(a) => format!("(int)threadIdx.{}", AXES[a as usize]),
            Builtin::BlockIdx(a) => format!("(int)blockIdx.{}", AXES[a as usize]),
            Builtin::NumGroups(a) => format!("(int)gridDim.{}", AXES[a as usize]),
        }
    }

    fn barrier(&self) -> &'static str {
        "__syncthreads();"
    }

    fn math_name(&self, func: MathFn, float_form: bool) -> String {
        if float_form {
            format!("{}f", func.name())
        } else {
            func.name().into()
        }
    }

    fn shuffle_down(&self, value: &str, delta: u32) -> String {
        format!("__shfl_down_sync(0xffffffffu, {value}, {delta})")
    }

    fn vector_type(&self, ty: crate::ir::ScalarType, lanes: u8) -> String {
        match ty {
            // `long long` is one word in CUDA's vector types.
            crate::ir::ScalarType::Long => format!("longlong{lanes}"),
            other => format!("{}{lanes}", self.type_name(other)),
        }
    }

    fn vector_load(&self, vector: &str, pointer: &str) -> String {
        format!("*reinterpret_cast<const {vector}*>({pointer})")
    }

    fn vector_store(&self, vector: &str, pointer: &str, values: &[String]) -> String {
        format!(
            "*reinterpret_cast<{vector}*>({pointer}) = make_{vector}({});",
            values.join(", ")
        )
    }

    fn unroll_pragma(&self) -> Option<&'static str> {
        Some("#pragma unroll")
    }

    fn long_name(&self) -> &'static str {
        // 64 bits wherever NVRTC runs; `long` is 32 bits on Windows.
        "long long"
    }
}
