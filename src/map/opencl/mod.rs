//! `--target opencl`: each mapped nest becomes a direct OpenCL kernel (one
//! work-item per iteration of its parallel loops, the rest of the body as
//! written) and the nest's lines are replaced by host glue: buffers, the
//! launch, and the copy back of the arrays it writes. The glue's helpers and
//! the kernels' source are put at the top of the file.
//!
//! What a kernel can hold is narrower than what OpenMP can: arrays need
//! constant extents (their size is `sizeof`), private scalars and the
//! variables of loops inside the kernel read after the nest are not
//! supported (a kernel leaves their last values on the device), and
//! floating-point reductions stay on the CPU (a device reduction would
//! reorder them); `&&`/`||` flags are reductions the kernel writes into a
//! one-element buffer, which is exact. The variables of the parallel loops,
//! when declared outside them and read after the nest, are set by the host
//! glue to what the loops leave ([`loop_exits`]).

pub mod callee;
mod host;
mod printer;
mod signature;

pub use host::{mapped, opencl_program, unique_functions};
pub(crate) use printer::Printer;
use signature::{
    array_parameters, kernel_arrays, kernel_scalars, nest_variables, ArrayParameters, KernelArrays,
    NestVariables,
};

use std::collections::{BTreeMap, BTreeSet};

use super::facts::NestFacts;
pub use super::kernel::{ConstantArray, KernelPlan};
use super::shared::{self, Tile};
use super::syntax::lookup;
use super::threads::kernel_body;
use crate::back::text::{Language, Namer};
use crate::front::c::loops::{BinOp, CUnit, Expr, Function, Loop};
use crate::front::c::CFile;

/// Whether `e` is an integer expression of scalars and constants (`n`,
/// `n + 2`, `nx * 2`): an extent a kernel can be passed; its scalars added
/// to `names`.
pub(super) fn extent_of_scalars(e: &Expr, names: &mut BTreeSet<String>) -> bool {
    match e {
        Expr::Int(_) => true,
        Expr::Load(r) if r.index.is_empty() => {
            names.insert(r.name.clone());
            true
        }
        Expr::Bin(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b) => {
            extent_of_scalars(a, names) && extent_of_scalars(b, names)
        }
        _ => false,
    }
}

/// The bytes of array `a` as a C expression, from the first kernel of
/// `plan` (or of the nests inside it) that passes it; `sizeof(a)` if none.
pub fn array_bytes(plan: &super::NestPlan, a: &str) -> String {
    if let Some(b) = plan.kernel.as_ref().and_then(|k| k.bytes.get(a)) {
        return b.clone();
    }
    plan.inner
        .iter()
        .map(|n| array_bytes(n, a))
        .find(|b| b != &format!("sizeof({a})"))
        .unwrap_or_else(|| format!("sizeof({a})"))
}

/// The language a direct kernel is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// OpenCL C: `__kernel`, `__global`, `get_global_id`.
    OpenCl,
    /// CUDA C++: `__global__`, `__restrict__`, block and thread indices.
    Cuda,
}

pub(crate) fn cl_type(elem: &str) -> Option<&'static str> {
    match elem {
        "float" => Some("float"),
        "double" => Some("double"),
        "int" | "bool" | "_Bool" | "char" | "short" => Some("int"),
        "long" => Some("long"),
        _ => None,
    }
}

/// Why a nest cannot be a kernel (it then stays on the CPU): a clause for the
/// plan, one of many reasons the checks of the nest give.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotAKernel(pub String);

impl From<String> for NotAKernel {
    fn from(why: String) -> Self {
        NotAKernel(why)
    }
}

impl From<&str> for NotAKernel {
    fn from(why: &str) -> Self {
        NotAKernel(why.to_string())
    }
}

/// The kernel for a nest in `dialect`, or why it cannot be one (the nest
/// then stays on the CPU).
pub fn kernel(
    root: &Loop,
    band: &[String],
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
    file: &CFile,
    dialect: Dialect,
) -> Result<KernelPlan, NotAKernel> {
    let NestVariables {
        dims,
        inner_vars,
        live_out,
        flags,
        privates,
    } = nest_variables(root, band, facts, function, unit, file)?;
    let KernelArrays {
        arrays,
        extents,
        bytes,
        extent_scalars,
        symbolic_arrays,
    } = kernel_arrays(facts, function, unit)?;
    let (functions, scalars) = kernel_scalars(
        root,
        facts,
        function,
        unit,
        (&flags, &privates),
        extent_scalars,
        dialect,
    )?;
    let cuda = dialect == Dialect::Cuda;
    let mut namer = file_namer(function, unit, cuda);
    let name = namer.fresh(&format!("nest_{}_{}", function.name, root.lines.0));
    let mut src = String::new();
    // Memory specialisation: small read-only arrays in constant memory,
    // read-only arrays reused within a block staged in local (shared) memory,
    // other read-only arrays through the read-only path (`const` and `restrict`).
    let choices = super::criteria::memory_choices(band, root, facts, function, unit);
    // Arrays of run-time extents are read in place: staging and constant
    // memory are sized at compile time.
    let staged: BTreeMap<String, Tile> = choices
        .iter()
        .filter(|c| !symbolic_arrays.contains(&c.array))
        .filter(|c| arrays.iter().any(|(a, w)| a == &c.array && !w))
        .filter_map(|c| Some((c.array.clone(), c.tile.clone()?)))
        .collect();
    let printer = Printer {
        extents: &extents,
        flags: &flags,
        function,
        unit,
        cuda,
        staged: &staged,
        declared_in_kernel: &inner_vars,
    };
    let ArrayParameters {
        mut params,
        specialised,
        constants,
        prologue,
    } = array_parameters(
        &arrays,
        &extents,
        &symbolic_arrays,
        &choices,
        &staged,
        (&name, cuda),
        &mut namer,
    );
    let global = if cuda { "" } else { "__global " };
    params.extend(flags.iter().map(|f| format!("{global}int *{f}")));
    params.extend(scalars.iter().map(|(n, t)| format!("const {t} {n}")));
    params.extend(dims.iter().map(|(v, _, _)| format!("const long {v}_lower")));
    // The block's shape, outermost first, when the kernel stages tiles.
    let local = if staged.is_empty() {
        Vec::new()
    } else {
        super::threads::block_shape(dims.len())
    };
    if cuda || !local.is_empty() {
        // Whole blocks are launched: each thread checks it has an iteration.
        params.extend(dims.iter().map(|(v, _, _)| format!("const long {v}_count")));
    }
    let declaration = format!("extern \"C\" void {name}({});\n", params.join(", "));
    src.push_str(&kernel_head(&name, &params, &constants, &local, cuda));
    for (a, tile) in &staged {
        src.push_str(&tile.declaration(extents[a].1, cuda));
    }
    src.push_str(&prologue);
    let depth = dims.len();
    if !local.is_empty() {
        let types: Vec<&str> = dims
            .iter()
            .map(|(v, _, _)| {
                lookup(v, function, unit)
                    .and_then(|x| cl_type(&x.elem))
                    .unwrap_or("int")
            })
            .collect();
        src.push_str(&shared::prologue(&dims, &types, &staged, &local, cuda));
    }
    if local.is_empty() {
        src.push_str(&thread_indices(&dims, function, unit, cuda));
    }
    for p in &privates {
        let ty = lookup(p, function, unit)
            .and_then(|x| cl_type(&x.elem))
            .unwrap_or("double");
        src.push_str(&format!("    {ty} {p};\n"));
    }
    for v in &inner_vars {
        let ty = lookup(v, function, unit)
            .and_then(|x| cl_type(&x.elem))
            .unwrap_or("int");
        src.push_str(&format!("    {ty} {v};\n"));
    }
    printer.block(kernel_body(root, depth), 1, &mut src)?;
    src.push_str("}\n");
    Ok(KernelPlan {
        bytes,
        name,
        source: src,
        arrays,
        scalars,
        flags,
        band: dims,
        specialised,
        constants,
        declaration,
        functions,
        local,
        live_out,
    })
}

/// The kernel's head, up to its opening brace (after CUDA's constant arrays):
/// `__kernel` with the work-group size a staging kernel requires, or CUDA's
/// `extern "C" __global__` with its launch bounds.
fn kernel_head(
    name: &str,
    params: &[String],
    constants: &[ConstantArray],
    local: &[i64],
    cuda: bool,
) -> String {
    let mut out = String::new();
    if cuda {
        for c in constants {
            out.push_str(&format!(
                "__constant__ {} {}[{}];\n",
                c.ty, c.symbol, c.elems
            ));
        }
        let bounds = if local.is_empty() {
            String::new()
        } else {
            format!("__launch_bounds__({}) ", local.iter().product::<i64>())
        };
        out.push_str(&format!(
            "extern \"C\" __global__ void {bounds}{name}({})\n{{\n",
            params.join(", ")
        ));
    } else {
        let size = if local.is_empty() {
            String::new()
        } else {
            let mut inner_first: Vec<String> = local.iter().rev().map(|b| b.to_string()).collect();
            inner_first.resize(3, "1".into());
            format!(
                "__attribute__((reqd_work_group_size({}))) ",
                inner_first.join(", ")
            )
        };
        out.push_str(&format!(
            "__kernel {size}void {name}({})\n{{\n",
            params.join(", ")
        ));
    }
    out
}

/// Each thread's point along the thread loops `dims`, in a kernel that
/// stages nothing (one work-item per iteration; CUDA's whole blocks return
/// the threads without one).
fn thread_indices(
    dims: &[(String, String, String)],
    function: &Function,
    unit: &CUnit,
    cuda: bool,
) -> String {
    let mut out = String::new();
    let depth = dims.len();
    for (k, (v, _, _)) in dims.iter().enumerate() {
        let ty = lookup(v, function, unit)
            .and_then(|x| cl_type(&x.elem))
            .unwrap_or("int");
        let d = depth - 1 - k;
        if cuda {
            let axis = ["x", "y", "z"][d];
            out.push_str(&format!(
                "    const long {v}_offset = (long)blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis};\n    if ({v}_offset >= {v}_count) return;\n    const {ty} {v} = ({ty})({v}_lower + {v}_offset);\n"
            ));
        } else {
            out.push_str(&format!(
                "    const {ty} {v} = ({ty})({v}_lower + (long)get_global_id({d}));\n"
            ));
        }
    }
    out
}

/// A namer for the names a kernel adds to the file (its own, its constant
/// arrays'): the file's functions, globals and the nest's function's
/// variables are taken, and so are the words the kernel's language reserves.
fn file_namer(function: &Function, unit: &CUnit, cuda: bool) -> Namer {
    let mut namer = Namer::for_language(if cuda {
        Language::Cuda
    } else {
        Language::OpenCl
    });
    let names = unit
        .functions
        .iter()
        .map(|f| &f.name)
        .chain(unit.globals.keys())
        .chain(&unit.header_globals)
        .chain(function.vars.keys());
    for name in names {
        namer.take(name);
    }
    namer
}

/// Host code after a kernel: the variables of its parallel loops in
/// [`KernelPlan::live_out`] set as the loops leave them: the upper bound
/// where the loop ran (its step is 1), else the lower; an inner loop's
/// variable only where every loop around it ran.
pub(super) fn loop_exits(k: &KernelPlan, pad: &str) -> String {
    let mut out = String::new();
    // The band's bounds do not read its variables, so the order is free.
    for &d in &k.live_out {
        let (v, lower, upper) = &k.band[d];
        let ran: Vec<String> = k.band[..d]
            .iter()
            .map(|(_, lo, hi)| format!("({lo}) < ({hi})"))
            .collect();
        let set = format!("{v} = ({lower}) < ({upper}) ? ({upper}) : ({lower});");
        if ran.is_empty() {
            out.push_str(&format!("{pad}{set}\n"));
        } else {
            out.push_str(&format!("{pad}if ({}) {set}\n", ran.join(" && ")));
        }
    }
    out
}
