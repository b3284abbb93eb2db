//! What a nest's kernel takes and declares, or why the nest cannot be a
//! kernel: its variables, arrays and scalars checked against what a kernel
//! can hold, and each array's parameter by its memory choice.

use std::collections::{BTreeMap, BTreeSet};

use super::{cl_type, extent_of_scalars, Dialect};
use crate::back::text::Namer;
use crate::front::c::fold::constant;
use crate::front::c::loops::{CUnit, Expr, Function, Loop, Stmt};
use crate::front::c::CFile;
use crate::map::facts::{NestFacts, ScalarRole};
use crate::map::kernel::ConstantArray;
use crate::map::shared::Tile;
use crate::map::syntax::lookup;
use crate::map::threads::thread_loops;

/// What a kernel declares of the nest's variables: its thread loops, the
/// inner loops' variables it declares, the thread loops whose exits the host
/// sets, flag reductions and private scalars; or why the nest cannot be a
/// kernel.
pub(super) struct NestVariables {
    pub(super) dims: Vec<(String, String, String)>,
    pub(super) inner_vars: BTreeSet<String>,
    pub(super) live_out: Vec<usize>,
    pub(super) flags: Vec<String>,
    pub(super) privates: Vec<String>,
}

/// The checks of a nest's variables against what a kernel can hold.
pub(super) fn nest_variables(
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
    let live = crate::map::liveness::LiveAfter::new(root, function, unit, file);
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
pub(super) struct KernelArrays {
    pub(super) arrays: Vec<(String, bool)>,
    pub(super) extents: BTreeMap<String, (Vec<String>, &'static str)>,
    pub(super) bytes: BTreeMap<String, String>,
    pub(super) extent_scalars: BTreeSet<String>,
    pub(super) symbolic_arrays: BTreeSet<String>,
}

/// The arrays a nest accesses, each with constant extents (or, for an array
/// parameter, extents of scalars) and an element type a buffer can hold.
pub(super) fn kernel_arrays(
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
pub(super) type Scalar = (String, String);

/// The functions of the file a kernel calls (copied before it) and the
/// scalars it is passed by value (name, OpenCL type): every scalar read that
/// is not a loop variable, a local, a private or a flag.
pub(super) fn kernel_scalars(
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
    crate::map::syntax::walk(&root.body, &mut |s| {
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
    crate::map::syntax::walk(&root.body, &mut |s| match s {
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
pub(super) struct ArrayParameters {
    pub(super) params: Vec<String>,
    pub(super) specialised: Vec<String>,
    pub(super) constants: Vec<ConstantArray>,
    pub(super) prologue: String,
}

/// Each array's parameter by its memory choice: constant memory, staged in
/// local (shared) memory, written, or on the read-only path.
pub(super) fn array_parameters(
    arrays: &[(String, bool)],
    extents: &BTreeMap<String, (Vec<String>, &'static str)>,
    symbolic_arrays: &BTreeSet<String>,
    choices: &[crate::map::criteria::MemoryChoice],
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

/// A name declared twice in one statement list of `body`: the loop
/// front-end flattens `{ ... }` blocks, so two blocks' locals of one name
/// would meet in one scope of the kernel.
pub(super) fn declared_twice(body: &[Stmt]) -> Option<String> {
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
