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

pub use host::{mapped, opencl_program, unique_functions};

use std::collections::{BTreeMap, BTreeSet};

use super::facts::{NestFacts, ScalarRole};
pub use super::kernel::{ConstantArray, KernelPlan};
use super::shared::{self, Tile};
use super::syntax::{lookup, PURE_LIBRARY};
use super::threads::{kernel_body, thread_loops};
use crate::back::text::{integer, Language, Namer};
use crate::front::c::fold::constant;
use crate::front::c::loops::{BinOp, CUnit, Expr, Function, Loop, Ref, Stmt};
use crate::front::c::CFile;

/// Whether `e` is an integer expression of scalars and constants (`n`,
/// `n + 2`, `nx * 2`): an extent a kernel can be passed; its scalars added
/// to `names`.
fn extent_of_scalars(e: &Expr, names: &mut BTreeSet<String>) -> bool {
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
) -> Result<KernelPlan, String> {
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
        super::criteria::block_shape(dims.len())
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

/// What a kernel declares of the nest's variables: its thread loops, the
/// inner loops' variables it declares, the thread loops whose exits the host
/// sets, flag reductions and private scalars; or why the nest cannot be a
/// kernel.
struct NestVariables {
    dims: Vec<(String, String, String)>,
    inner_vars: BTreeSet<String>,
    live_out: Vec<usize>,
    flags: Vec<String>,
    privates: Vec<String>,
}

/// The checks of a nest's variables against what a kernel can hold.
fn nest_variables(
    root: &Loop,
    band: &[String],
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
    file: &CFile,
) -> Result<NestVariables, String> {
    let first = file.original_line(root.lines.0).trim_start();
    let last = file.original_line(root.lines.1).trim_end();
    if !first.starts_with("for") || !(last.ends_with('}') || last.ends_with(';')) {
        return Err("the nest shares its first or last line with other code".into());
    }
    let dims = thread_loops(band, facts);
    let live = super::liveness::LiveAfter::new(root, function, unit, file);
    let read_after = |name: &str| live.reads(name);
    // Loops inside the kernel whose variables are declared outside them:
    // each thread declares its own (a statement after such a loop reads it).
    let inner_vars: BTreeSet<String> = facts
        .loops
        .iter()
        .filter(|(v, l)| !l.declared && !dims.iter().any(|(d, _, _)| d == *v))
        .map(|(v, _)| v.clone())
        .collect();
    if let Some(v) = inner_vars.iter().find(|v| read_after(v)) {
        return Err(format!(
            "the loop variable `{v}` is read after the nest, and a kernel leaves its last value on the device"
        ));
    }
    let live_out: Vec<usize> = dims
        .iter()
        .enumerate()
        .filter(|(_, (v, _, _))| facts.loops.get(v).is_some_and(|l| !l.declared) && read_after(v))
        .map(|(k, _)| k)
        .collect();
    if let Some(&d) = live_out
        .iter()
        .find(|&&d| facts.loops.get(&dims[d].0).is_some_and(|l| l.descending))
    {
        return Err(format!(
            "the loop variable `{}` runs downwards and is read after the nest (its value after the loop is not set)",
            dims[d].0
        ));
    }
    let mut flags = Vec::new();
    let mut privates = Vec::new();
    for (name, role) in &facts.scalars {
        match role {
            ScalarRole::Local(_) => {}
            ScalarRole::Private(_) if read_after(name) => {
                return Err(format!(
                    "`{name}` is read after the nest, and a kernel leaves its last value on the device"
                ))
            }
            ScalarRole::Private(_) => privates.push(name.clone()),
            ScalarRole::Reduction(op) if op == "&&" || op == "||" => flags.push(name.clone()),
            ScalarRole::Reduction(op) => {
                return Err(format!(
                    "the reduction ({op}) of `{name}` stays on the CPU for OpenCL (a device reduction would reorder it)"
                ))
            }
            ScalarRole::Carried => return Err(format!("`{name}` carries a value across iterations")),
        }
    }
    Ok(NestVariables {
        dims,
        inner_vars,
        live_out,
        flags,
        privates,
    })
}

/// A kernel's arrays: (name, written) in argument order, extents and
/// element types, sizes in bytes, the scalars their extents read, and those
/// of run-time extents.
struct KernelArrays {
    arrays: Vec<(String, bool)>,
    extents: BTreeMap<String, (Vec<String>, &'static str)>,
    bytes: BTreeMap<String, String>,
    extent_scalars: BTreeSet<String>,
    symbolic_arrays: BTreeSet<String>,
}

/// The arrays a nest accesses, each with constant extents (or, for an array
/// parameter, extents of scalars) and an element type a buffer can hold.
fn kernel_arrays(
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
) -> Result<KernelArrays, String> {
    let mut arrays = Vec::new();
    let mut extents = BTreeMap::new();
    let mut bytes = BTreeMap::new();
    // The scalars VLA parameters' extents read, passed to the kernel.
    let mut extent_scalars = BTreeSet::new();
    let mut symbolic_arrays = BTreeSet::new();
    for array in facts.subs.keys() {
        let v =
            lookup(array, function, unit).ok_or_else(|| format!("`{array}` is not declared"))?;
        // Constant extents, or for an array parameter (a VLA parameter,
        // `double a[n][n]`) extents of scalars the kernel is passed.
        let param = v.pointer && v.param;
        let mut symbolic = false;
        let dims: Option<Vec<String>> = v
            .dims
            .iter()
            .map(|d| {
                let d = d.as_ref()?;
                if let Some(c) = constant(d) {
                    return Some(c.to_string());
                }
                let mut names = BTreeSet::new();
                (param && extent_of_scalars(d, &mut names)).then(|| {
                    symbolic = true;
                    extent_scalars.extend(names);
                    format!("({d})")
                })
            })
            .collect();
        // An array parameter declared with every extent (PolyBench's
        // `double ex[NX][NY]`) holds what it declares, as an array does.
        let dims = dims
            .filter(|d| !d.is_empty() && (!v.pointer || v.param))
            .ok_or_else(|| {
                format!("the extent of `{array}` is not a constant (OpenCL buffers need the size; arrays declared `T a[N]...`, and array parameters `T a[N]...` or `T a[n]...`, qualify)")
            })?;
        if symbolic {
            symbolic_arrays.insert(array.clone());
        }
        bytes.insert(
            array.clone(),
            if v.pointer {
                format!("(size_t){} * sizeof({})", dims.join(" * "), v.elem)
            } else {
                format!("sizeof({array})")
            },
        );
        // The buffer is the C array's bytes: the kernel's element type must be the same.
        cl_type(&v.elem)
            .filter(|t| *t == v.elem)
            .ok_or_else(|| format!("`{array}` has elements of type `{}`", v.elem))?;
        arrays.push((
            array.clone(),
            facts.accesses.iter().any(|a| &a.array == array && a.write),
        ));
        extents.insert(array.clone(), (dims, cl_type(&v.elem).unwrap_or("float")));
    }
    Ok(KernelArrays {
        arrays,
        extents,
        bytes,
        extent_scalars,
        symbolic_arrays,
    })
}

/// A scalar a kernel is passed by value: its name and OpenCL type.
type Scalar = (String, String);

/// The functions of the file a kernel calls (copied before it) and the
/// scalars it is passed by value (name, OpenCL type): every scalar read that
/// is not a loop variable, a local, a private or a flag.
fn kernel_scalars(
    root: &Loop,
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
    (flags, privates): (&[String], &[String]),
    extent_scalars: BTreeSet<String>,
    dialect: Dialect,
) -> Result<(Vec<super::callee::DeviceFunction>, Vec<Scalar>), String> {
    let loop_vars: BTreeSet<&String> = facts.loops.keys().collect();
    let mut locals = BTreeSet::new();
    super::analysis::walk(&root.body, &mut |s| {
        if let Stmt::Decl { name, .. } = s {
            locals.insert(name.clone());
        }
    });
    if let Some(name) = declared_twice(&root.body) {
        return Err(format!(
            "`{name}` is declared more than once in the nest (in separate blocks); rename one"
        ));
    }
    let mut read = BTreeSet::new();
    let mut calls = Vec::new();
    let mut visit = |e: &Expr| {
        e.visit(&mut |x| match x {
            Expr::Load(r) if r.index.is_empty() => {
                read.insert(r.name.clone());
            }
            Expr::Call(name, _) => calls.push(name.clone()),
            _ => {}
        })
    };
    for l in facts.loops.values() {
        visit(&l.lower);
        visit(&l.upper);
    }
    super::analysis::walk(&root.body, &mut |s| match s {
        Stmt::Assign(a) => {
            a.target.index.iter().for_each(&mut visit);
            visit(&a.value);
        }
        Stmt::Decl { init: Some(e), .. } | Stmt::Eval { expr: e, .. } => visit(e),
        Stmt::If { cond, .. } => visit(cond),
        _ => {}
    });
    if let Some(name) = extent_scalars
        .iter()
        .find(|n| facts.scalars.contains_key(*n))
    {
        return Err(format!(
            "`{name}`, an extent of an array parameter, is written in the nest"
        ));
    }
    read.extend(extent_scalars);
    let functions = super::callee::copy_functions(&calls, unit, dialect == Dialect::Cuda)?;
    let mut scalars = Vec::new();
    for name in read {
        if loop_vars.contains(&name)
            || locals.contains(&name)
            || privates.contains(&name)
            || flags.contains(&name)
        {
            continue;
        }
        let v = lookup(&name, function, unit).ok_or_else(|| format!("`{name}` is not declared"))?;
        if v.pointer || !v.dims.is_empty() {
            return Err(format!(
                "`{name}` is used as a scalar but declared as an array"
            ));
        }
        let ty = cl_type(&v.elem).ok_or_else(|| format!("`{name}` has type `{}`", v.elem))?;
        scalars.push((name, ty.to_string()));
    }
    Ok((functions, scalars))
}

/// The arrays' kernel parameters, their memory specialisations (one line
/// each), the CUDA constant arrays and the lines that alias them.
struct ArrayParameters {
    params: Vec<String>,
    specialised: Vec<String>,
    constants: Vec<ConstantArray>,
    prologue: String,
}

/// Each array's parameter by its memory choice: constant memory, staged in
/// local (shared) memory, written, or on the read-only path.
fn array_parameters(
    arrays: &[(String, bool)],
    extents: &BTreeMap<String, (Vec<String>, &'static str)>,
    symbolic_arrays: &BTreeSet<String>,
    choices: &[super::criteria::MemoryChoice],
    staged: &BTreeMap<String, Tile>,
    (name, cuda): (&str, bool),
    namer: &mut Namer,
) -> ArrayParameters {
    let mut specialised = Vec::new();
    let mut constants = Vec::new();
    let mut params = Vec::new();
    let mut prologue = String::new();
    for (a, w) in arrays {
        let (dims, ty) = &extents[a];
        let constant_memory = !*w
            && !symbolic_arrays.contains(a)
            && choices
                .iter()
                .any(|c| &c.array == a && c.choice == "constant memory");
        match (constant_memory, *w, cuda) {
            (true, _, false) => {
                specialised.push(format!("`{a}` in constant memory (`__constant {ty} *`)"));
                params.push(format!("__constant {ty} *restrict {a}"));
            }
            (true, _, true) => {
                let symbol = namer.fresh(&format!("stencilc_const_{name}_{a}"));
                let elems: i64 = dims.iter().filter_map(|d| d.parse::<i64>().ok()).product();
                specialised.push(format!(
                    "`{a}` in constant memory (`__constant__ {ty} {symbol}[{elems}]`, filled by cudaMemcpyToSymbol)"
                ));
                prologue.push_str(&format!("    const {ty} *__restrict__ {a} = {symbol};\n"));
                constants.push(ConstantArray {
                    array: a.clone(),
                    symbol,
                    ty: ty.to_string(),
                    elems,
                });
            }
            (false, true, false) => params.push(format!("__global {ty} *restrict {a}")),
            (false, true, true) => params.push(format!("{ty} *__restrict__ {a}")),
            (false, false, _) if staged.contains_key(a) => {
                let (space, tile_name) = if cuda {
                    ("__shared__", "shared")
                } else {
                    ("__local", "local")
                };
                let tile = &staged[a];
                specialised.push(format!(
                    "`{a}` staged in {tile_name} memory (`{space} {ty} {a}_tile[{}]`, loaded once per block, read from the tile)",
                    tile.shape()
                ));
                params.push(if cuda {
                    format!("const {ty} *__restrict__ {a}")
                } else {
                    format!("__global const {ty} *restrict {a}")
                });
            }
            (false, false, false) => {
                specialised.push(format!(
                    "`{a}` on the read-only path (`__global const {ty} *restrict`)"
                ));
                params.push(format!("__global const {ty} *restrict {a}"));
            }
            (false, false, true) => {
                specialised.push(format!(
                    "`{a}` on the read-only path (`const {ty} *__restrict__`)"
                ));
                params.push(format!("const {ty} *__restrict__ {a}"));
            }
        }
    }
    ArrayParameters {
        params,
        specialised,
        constants,
        prologue,
    }
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

/// A name declared twice in one statement list of `body`: the loop
/// front-end flattens `{ ... }` blocks, so two blocks' locals of one name
/// would meet in one scope of the kernel.
fn declared_twice(body: &[Stmt]) -> Option<String> {
    let mut names = BTreeSet::new();
    for s in body {
        let inner = match s {
            Stmt::Decl { name, .. } if !names.insert(name) => return Some(name.clone()),
            Stmt::For(l) => declared_twice(&l.body),
            Stmt::If { then, els, .. } => declared_twice(then).or_else(|| declared_twice(els)),
            Stmt::Other { body, .. } => declared_twice(body),
            _ => None,
        };
        if inner.is_some() {
            return inner;
        }
    }
    None
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

pub(crate) struct Printer<'a> {
    extents: &'a BTreeMap<String, (Vec<String>, &'static str)>,
    flags: &'a [String],
    function: &'a Function,
    unit: &'a CUnit,
    /// CUDA keeps C's math names (`sqrtf`); OpenCL overloads them.
    cuda: bool,
    /// Arrays read from their tile in local (shared) memory.
    staged: &'a BTreeMap<String, Tile>,
    /// Loop variables the kernel declares at its top (declared outside
    /// their loops in C): their loops assign them, not declare them.
    declared_in_kernel: &'a BTreeSet<String>,
}

impl<'a> Printer<'a> {
    /// A printer for the body of `function` copied into the kernels (see
    /// [`super::callee`]): no arrays, no flags.
    pub(crate) fn for_function(function: &'a Function, unit: &'a CUnit, cuda: bool) -> Self {
        static NO_EXTENTS: std::sync::OnceLock<BTreeMap<String, (Vec<String>, &'static str)>> =
            std::sync::OnceLock::new();
        static NO_TILES: std::sync::OnceLock<BTreeMap<String, Tile>> = std::sync::OnceLock::new();
        static NO_VARS: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
        Printer {
            extents: NO_EXTENTS.get_or_init(BTreeMap::new),
            staged: NO_TILES.get_or_init(BTreeMap::new),
            declared_in_kernel: NO_VARS.get_or_init(BTreeSet::new),
            flags: &[],
            function,
            unit,
            cuda,
        }
    }

    pub(crate) fn block(
        &self,
        body: &[Stmt],
        depth: usize,
        out: &mut String,
    ) -> Result<(), String> {
        let pad = "    ".repeat(depth);
        for s in body {
            match s {
                Stmt::Assign(a) => {
                    let op = a.op.map_or(String::new(), |o| o.symbol().to_string());
                    out.push_str(&format!(
                        "{pad}{} {op}= {};\n",
                        self.reference(&a.target),
                        self.expr(&a.value)
                    ));
                }
                Stmt::Decl { name, init, .. } => {
                    let ty = lookup(name, self.function, self.unit)
                        .and_then(|v| cl_type(&v.elem))
                        .ok_or_else(|| format!("the type of `{name}`"))?;
                    match init {
                        Some(e) => out.push_str(&format!("{pad}{ty} {name} = {};\n", self.expr(e))),
                        None => out.push_str(&format!("{pad}{ty} {name};\n")),
                    }
                }
                Stmt::If {
                    cond, then, els, ..
                } => {
                    out.push_str(&format!("{pad}if ({}) {{\n", self.expr(cond)));
                    self.block(then, depth + 1, out)?;
                    if !els.is_empty() {
                        out.push_str(&format!("{pad}}} else {{\n"));
                        self.block(els, depth + 1, out)?;
                    }
                    out.push_str(&format!("{pad}}}\n"));
                }
                Stmt::For(l) => {
                    let ty = if self.declared_in_kernel.contains(&l.var) {
                        String::new()
                    } else {
                        let ty = lookup(&l.var, self.function, self.unit)
                            .and_then(|v| cl_type(&v.elem))
                            .unwrap_or("int");
                        format!("{ty} ")
                    };
                    let header = if l.descending {
                        format!(
                            "{ty}{v} = {}; {v} >= {}; {v}--",
                            self.expr(&l.start()),
                            self.expr(&l.lower),
                            v = l.var
                        )
                    } else {
                        format!(
                            "{ty}{v} = {}; {v} < {}; {v} += {}",
                            self.expr(&l.lower),
                            self.expr(&l.upper),
                            l.step,
                            v = l.var
                        )
                    };
                    out.push_str(&format!("{pad}for ({header}) {{\n"));
                    self.block(&l.body, depth + 1, out)?;
                    out.push_str(&format!("{pad}}}\n"));
                }
                Stmt::Eval { expr: e, .. } => out.push_str(&format!("{pad}{};\n", self.expr(e))),
                // Only in functions copied into the kernels: a nest holds none.
                Stmt::Return(Some(e)) => out.push_str(&format!("{pad}return {};\n", self.expr(e))),
                Stmt::Break => out.push_str(&format!("{pad}break;\n")),
                Stmt::Continue => out.push_str(&format!("{pad}continue;\n")),
                other => return Err(format!("a statement a kernel cannot hold: {other:?}")),
            }
        }
        Ok(())
    }

    fn reference(&self, r: &Ref) -> String {
        if r.index.is_empty() {
            return if self.flags.contains(&r.name) {
                format!("(*{})", r.name)
            } else {
                r.name.clone()
            };
        }
        if let Some(tile) = self.staged.get(&r.name) {
            let index: Vec<String> = r.index.iter().map(|e| self.expr(e)).collect();
            return tile.reference(&index);
        }
        let Some((dims, _)) = self.extents.get(&r.name) else {
            return r.to_string();
        };
        // Row-major linear index: ((i0 * d1 + i1) * d2 + i2) ...
        let mut index = self.expr(&r.index[0]);
        for (k, e) in r.index.iter().enumerate().skip(1) {
            index = format!(
                "({index}) * {} + {}",
                dims.get(k).map_or("1", String::as_str),
                self.expr(e)
            );
        }
        format!("{}[{index}]", r.name)
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Int(v) => integer(*v),
            Expr::Float(s) | Expr::Str(s) => s.clone(),
            Expr::Load(r) => self.reference(r),
            Expr::Bin(op, a, b) => format!("({} {} {})", self.expr(a), op.symbol(), self.expr(b)),
            Expr::Unary(op, a) => format!("{op}({})", self.expr(a)),
            // OpenCL overloads the math functions: `sqrtf` is `sqrt` on a float.
            Expr::Call(name, args) => {
                let base = match name.strip_suffix('f') {
                    Some(b) if PURE_LIBRARY.contains(&b) && !self.cuda => b.to_string(),
                    _ if PURE_LIBRARY.contains(&name.as_str()) => name.clone(),
                    // A function of the file, copied under a name no built-in has.
                    _ => super::callee::device_name(name),
                };
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{base}({})", args.join(", "))
            }
            Expr::Cond(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            Expr::Cast(t, a) => format!("(({t}) {})", self.expr(a)),
            Expr::Unsupported(what) => format!("/* {what} */"),
        }
    }
}
