//! The kernel IR as target-neutral text (`stencilc emit --target kir`), for
//! pass-level tests: lowering's decisions (block shapes, guards, vector runs,
//! shared-memory staging, barriers, fused reductions) read without any GPU
//! language's spelling in the way.
//!
//! It is [`print_module`] with a dialect of its own: `shared`, `constant` and
//! `global` qualifiers, `barrier()`, `tid.x`/`bid.x`/`groups.x` for the
//! built-in indices, `vload`/`vstore` for vector accesses, and each kernel's
//! block shape in its head.

use crate::ir::{MathFn, ScalarType};
use crate::kir::print::{print_module, Dialect, FMA_NOTICE};
use crate::kir::{Builtin, KParam, Kernel, Module, ParamKind};

/// Prints `module` as kernel IR text.
pub fn print(module: &Module) -> String {
    print_module(module, &KirText)
}

const AXES: [&str; 3] = ["x", "y", "z"];

/// The spelling of kernel IR text.
struct KirText;

impl Dialect for KirText {
    // Literals and reserved words as in CUDA: the text is read by people, and
    // CUDA's spelling of a float literal is the shortest of the three.
    fn language(&self) -> crate::kir::names::Language {
        crate::kir::names::Language::Cuda
    }

    fn prelude(&self, module: &Module) -> String {
        let mut text = String::from("// kernel IR (target-neutral)\n");
        if module.fma {
            text.push_str(FMA_NOTICE);
        }
        if let Some(blocks) = module.min_blocks_per_sm {
            text.push_str(&format!(
                "// at least {blocks} block(s) per multiprocessor\n"
            ));
        }
        text
    }

    fn kernel_head(&self, kernel: &Kernel) -> String {
        let [x, y, z] = kernel.block;
        format!("kernel {} block({x}, {y}, {z}) ", kernel.name)
    }

    fn param(&self, param: &KParam, name: &str) -> String {
        let ty = self.type_name(param.ty);
        match param.kind {
            ParamKind::Scalar => format!("{ty} {name}"),
            ParamKind::ReadOnlyBuffer => format!("readonly {ty}* {name}"),
            ParamKind::Buffer => format!("{ty}* {name}"),
        }
    }

    fn shared_qualifier(&self) -> &'static str {
        "shared"
    }

    fn constant_qualifier(&self) -> &'static str {
        "constant"
    }

    fn global_table_qualifier(&self) -> &'static str {
        "global"
    }

    fn helper_qualifier(&self) -> &'static str {
        "helper"
    }

    fn builtin(&self, b: Builtin) -> String {
        match b {
            Builtin::ThreadIdx(a) => format!("tid.{}", AXES[a as usize]),
            Builtin::BlockIdx(a) => format!("bid.{}", AXES[a as usize]),
            Builtin::NumGroups(a) => format!("groups.{}", AXES[a as usize]),
        }
    }

    fn barrier(&self) -> &'static str {
        "barrier();"
    }

    fn math_name(&self, func: MathFn, float_form: bool) -> String {
        if float_form {
            format!("{}f", func.name())
        } else {
            func.name().into()
        }
    }

    fn shuffle_down(&self, value: &str, delta: u32) -> String {
        format!("shuffle_down({value}, {delta})")
    }

    fn vector_type(&self, ty: ScalarType, lanes: u8) -> String {
        format!("{}x{lanes}", self.type_name(ty))
    }

    fn vector_load(&self, vector: &str, pointer: &str) -> String {
        format!("vload<{vector}>({pointer})")
    }

    fn vector_store(&self, vector: &str, pointer: &str, values: &[String]) -> String {
        format!("vstore<{vector}>({pointer}, {});", values.join(", "))
    }

    fn unroll_pragma(&self) -> Option<&'static str> {
        Some("unroll")
    }
}
