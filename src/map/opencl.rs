//! `--target opencl`: each mapped nest becomes a direct OpenCL kernel (one
//! work-item per iteration of its parallel loops, the rest of the body as
//! written) and the nest's lines are replaced by host glue: buffers, the
//! launch, and the copy back of the arrays it writes. The glue's helpers and
//! the kernels' source are put at the top of the file.
//!
//! What a kernel can hold is narrower than what OpenMP can: arrays need
//! constant extents (their size is `sizeof`), scalars live after the nest
//! are not supported, and floating-point reductions stay on the CPU (a
//! device reduction would reorder them); `&&`/`||` flags are reductions the
//! kernel writes into a one-element buffer, which is exact.

use std::collections::{BTreeMap, BTreeSet};

use super::analysis::{lookup, NestFacts, ScalarRole, PURE_LIBRARY};
use super::shared::{self, Tile};
use super::{constant, Decision, FilePlan, NestPlan};
use crate::front::c::loops::{CUnit, Expr, Function, Loop, Ref, Stmt};
use crate::front::c::CFile;

/// What the host glue of one kernel needs.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelPlan {
    /// The kernel's name.
    pub name: String,
    /// Its OpenCL C source.
    pub source: String,
    /// Arrays (name, written) in argument order.
    pub arrays: Vec<(String, bool)>,
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
    /// program: see [`super::callee`]).
    pub functions: Vec<super::callee::DeviceFunction>,
    /// The block (work-group) shape, outermost first, of a kernel that
    /// stages tiles in local memory (it takes counts and needs whole
    /// blocks); empty for the others.
    pub local: Vec<i64>,
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
    let first = file.original_line(root.lines.0).trim_start();
    let last = file.original_line(root.lines.1).trim_end();
    if !first.starts_with("for") || !(last.ends_with('}') || last.ends_with(';')) {
        return Err("the nest shares its first or last line with other code".into());
    }
    let dims = thread_loops(band, facts);
    let mut flags = Vec::new();
    let mut privates = Vec::new();
    for (name, role) in &facts.scalars {
        match role {
            ScalarRole::Local(_) => {}
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
    let loop_vars: BTreeSet<&String> = facts.loops.keys().collect();
    // Arrays: constant extents and a known element type.
    let mut arrays = Vec::new();
    let mut extents = BTreeMap::new();
    for array in facts.subs.keys() {
        let v =
            lookup(array, function, unit).ok_or_else(|| format!("`{array}` is not declared"))?;
        let dims: Option<Vec<i64>> = v
            .dims
            .iter()
            .map(|d| d.as_ref().and_then(constant))
            .collect();
        let dims = dims.filter(|d| !d.is_empty() && !v.pointer).ok_or_else(|| {
            format!("the extent of `{array}` is not a constant (OpenCL buffers need the size; arrays declared `T a[N]...` qualify)")
        })?;
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
    // Scalars read: every scalar load that is not a loop variable, a local, a private or a flag.
    let mut locals = BTreeSet::new();
    super::analysis::walk(&root.body, &mut |s| {
        if let Stmt::Decl { name, .. } = s {
            locals.insert(name.clone());
        }
    });
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
        Stmt::Decl { init: Some(e), .. } | Stmt::Eval(e) => visit(e),
        Stmt::If { cond, .. } => visit(cond),
        _ => {}
    });
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
    let name = format!("nest_{}_{}", function.name, root.lines.0);
    let cuda = dialect == Dialect::Cuda;
    let mut src = String::new();
    // Memory specialisation: small read-only arrays in constant memory,
    // read-only arrays reused within a block staged in local (shared) memory,
    // other read-only arrays through the read-only path (`const` and `restrict`).
    let choices = super::criteria::memory_choices(band, root, facts, function, unit);
    let staged: BTreeMap<String, Tile> = choices
        .iter()
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
    };
    let mut specialised = Vec::new();
    let mut constants = Vec::new();
    let mut params = Vec::new();
    let mut prologue = String::new();
    for (a, w) in &arrays {
        let (dims, ty) = &extents[a];
        let constant_memory = !*w
            && choices
                .iter()
                .any(|c| &c.array == a && c.choice == "constant memory");
        match (constant_memory, *w, cuda) {
            (true, _, false) => {
                specialised.push(format!("`{a}` in constant memory (`__constant {ty} *`)"));
                params.push(format!("__constant {ty} *restrict {a}"));
            }
            (true, _, true) => {
                let symbol = format!("stencilc_const_{name}_{a}");
                let elems: i64 = dims.iter().product();
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
    if cuda {
        for c in &constants {
            src.push_str(&format!(
                "__constant__ {} {}[{}];\n",
                c.ty, c.symbol, c.elems
            ));
        }
        let bounds = if local.is_empty() {
            String::new()
        } else {
            format!("__launch_bounds__({}) ", local.iter().product::<i64>())
        };
        src.push_str(&format!(
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
        src.push_str(&format!(
            "__kernel {size}void {name}({})\n{{\n",
            params.join(", ")
        ));
    }
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
    for (k, (v, _, _)) in dims.iter().enumerate().filter(|_| local.is_empty()) {
        let ty = lookup(v, function, unit)
            .and_then(|x| cl_type(&x.elem))
            .unwrap_or("int");
        let d = depth - 1 - k;
        if cuda {
            let axis = ["x", "y", "z"][d];
            src.push_str(&format!(
                "    const long {v}_offset = (long)blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis};\n    if ({v}_offset >= {v}_count) return;\n    const {ty} {v} = ({ty})({v}_lower + {v}_offset);\n"
            ));
        } else {
            src.push_str(&format!(
                "    const {ty} {v} = ({ty})({v}_lower + (long)get_global_id({d}));\n"
            ));
        }
    }
    for p in &privates {
        let ty = lookup(p, function, unit)
            .and_then(|x| cl_type(&x.elem))
            .unwrap_or("double");
        src.push_str(&format!("    {ty} {p};\n"));
    }
    printer.block(kernel_body(root, depth), 1, &mut src)?;
    src.push_str("}\n");
    Ok(KernelPlan {
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
    })
}

/// The parallel loops a kernel maps onto threads (var, lower, upper),
/// outermost first: `band` cut where an inner bound depends on an outer loop
/// or a step is not one.
pub(super) fn thread_loops(band: &[String], facts: &NestFacts) -> Vec<(String, String, String)> {
    let mut dims = Vec::new();
    for var in band {
        let Some(l) = facts.loops.get(var) else { break };
        let text = format!("{} {}", l.lower, l.upper);
        if dims
            .iter()
            .any(|(v, _, _): &(String, String, String)| mentions_var(&text, v))
            || l.step != 1
        {
            break;
        }
        dims.push((var.clone(), l.lower.to_string(), l.upper.to_string()));
    }
    dims
}

/// The statements a kernel with `depth` thread loops runs: the body of its
/// innermost thread loop.
pub(super) fn kernel_body(root: &Loop, depth: usize) -> &[Stmt] {
    let mut l = root;
    for _ in 1..depth {
        if let [Stmt::For(inner)] = l.body.as_slice() {
            l = inner;
        }
    }
    &l.body
}

fn mentions_var(text: &str, var: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| w == var)
}

pub(crate) struct Printer<'a> {
    extents: &'a BTreeMap<String, (Vec<i64>, &'static str)>,
    flags: &'a [String],
    function: &'a Function,
    unit: &'a CUnit,
    /// CUDA keeps C's math names (`sqrtf`); OpenCL overloads them.
    cuda: bool,
    /// Arrays read from their tile in local (shared) memory.
    staged: &'a BTreeMap<String, Tile>,
}

impl<'a> Printer<'a> {
    /// A printer for the body of `function` copied into the kernels (see
    /// [`super::callee`]): no arrays, no flags.
    pub(crate) fn for_function(function: &'a Function, unit: &'a CUnit, cuda: bool) -> Self {
        static NO_EXTENTS: std::sync::OnceLock<BTreeMap<String, (Vec<i64>, &'static str)>> =
            std::sync::OnceLock::new();
        static NO_TILES: std::sync::OnceLock<BTreeMap<String, Tile>> = std::sync::OnceLock::new();
        Printer {
            extents: NO_EXTENTS.get_or_init(BTreeMap::new),
            staged: NO_TILES.get_or_init(BTreeMap::new),
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
                    let ty = lookup(&l.var, self.function, self.unit)
                        .and_then(|v| cl_type(&v.elem))
                        .unwrap_or("int");
                    out.push_str(&format!(
                        "{pad}for ({ty} {v} = {}; {v} < {}; {v} += {}) {{\n",
                        self.expr(&l.lower),
                        self.expr(&l.upper),
                        l.step,
                        v = l.var
                    ));
                    self.block(&l.body, depth + 1, out)?;
                    out.push_str(&format!("{pad}}}\n"));
                }
                Stmt::Eval(e) => out.push_str(&format!("{pad}{};\n", self.expr(e))),
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
                dims.get(k).copied().unwrap_or(1),
                self.expr(e)
            );
        }
        format!("{}[{index}]", r.name)
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Int(v) => v.to_string(),
            Expr::Float(s) => s.clone(),
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

/// The C string literal of a text.
fn c_string(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let escaped = line.replace('\\', "\\\\").replace('"', "\\\"");
        out.push_str(&format!("    \"{escaped}\\n\"\n"));
    }
    out
}

/// The mapped nests with a direct kernel, outside the lifted ones.
pub fn mapped<'a>(nests: &'a [NestPlan], out: &mut Vec<&'a NestPlan>) {
    for n in nests {
        if n.device.is_some() {
            continue;
        }
        if matches!(n.decision, Decision::Mapped { .. }) && n.kernel.is_some() {
            out.push(n);
        }
        mapped(&n.inner, out);
    }
}

/// The functions the kernels of `nests` call, each once, callees first.
pub fn unique_functions<'a>(nests: &[&'a NestPlan]) -> Vec<&'a super::callee::DeviceFunction> {
    let mut out: Vec<&super::callee::DeviceFunction> = Vec::new();
    for k in nests.iter().filter_map(|n| n.kernel.as_ref()) {
        for f in &k.functions {
            if !out.iter().any(|g| g.name == f.name) {
                out.push(f);
            }
        }
    }
    out
}

/// The program for `--target opencl`.
pub fn opencl_program(file: &CFile, plan: &FilePlan) -> String {
    let mut nests = Vec::new();
    mapped(&plan.nests, &mut nests);
    let mut kernels = String::from(
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#pragma OPENCL FP_CONTRACT OFF\n",
    );
    let mut replace: BTreeMap<usize, (usize, String)> = BTreeMap::new();
    for f in unique_functions(&nests) {
        kernels.push('\n');
        kernels.push_str(&f.source);
    }
    for n in &nests {
        let Some(k) = &n.kernel else { continue };
        kernels.push('\n');
        kernels.push_str(&k.source);
        let indent: String = file
            .original_line(n.lines.0)
            .chars()
            .take_while(|c| c.is_whitespace())
            .collect();
        replace.insert(n.lines.0, (n.lines.1, host_glue(k, &indent, n)));
    }
    for n in super::resident::iterates(&plan.nests) {
        let lines = super::resident::wrap_loop(
            n,
            file,
            &|a| format!("cl_mem d_{a} = stencilc_cl_to_device({a}, sizeof({a}));"),
            &|a, written| {
                let back = if written {
                    format!("stencilc_cl_from_device(d_{a}, {a}, sizeof({a})); ")
                } else {
                    String::new()
                };
                format!("{back}clReleaseMemObject(d_{a});")
            },
            "stencilc_cl_init();",
        );
        for (line, text) in lines {
            replace.insert(line, (line, text));
        }
    }
    let mut lifted_sources = String::new();
    let mut lifted = 0;
    for n in &plan.nests {
        if let Some(code) = &n.device {
            lifted += 1;
            lifted_sources.push_str(&format!(
                "/* The kernels of nest {} (lines {}-{}), lifted into an ir::Program: stencilc's OpenCL back-end. */\nstatic const char *stencilc_{}_kernels =\n{};\n\n",
                n.id,
                n.lines.0,
                n.lines.1,
                super::device_id(&n.id),
                c_string(&code.kernels)
            ));
            replace.insert(n.lines.0, (n.lines.1, code.host.clone()));
        }
    }
    let mut out = format!(
        "/* Mapped by stencilc map --target opencl from {}: {} nest(s) run as direct OpenCL kernels,\n   {} lifted time loop(s) or nest(s) as stencilc's kernels (link with -lOpenCL). */\n\
#define CL_TARGET_OPENCL_VERSION 120\n#include <CL/cl.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n\
static const char *stencilc_kernels =\n{};\n\n{lifted_sources}{}#line 1 \"{}\"\n",
        plan.file,
        nests.len(),
        lifted,
        c_string(&kernels),
        HOST_HELPERS.replace("@OPTIONS@", crate::back::opencl::BUILD_OPTIONS),
        plan.file
    );
    super::rewrite::splice(&mut out, &file.original.text, &replace, &plan.file);
    out
}

fn host_glue(k: &KernelPlan, indent: &str, n: &NestPlan) -> String {
    let p = format!("{indent}    ");
    let mut g = format!(
        "{indent}{{ /* stencilc map: nest {} (lines {}-{}) runs as the OpenCL kernel {} */\n",
        n.id, n.lines.0, n.lines.1, k.name
    );
    g.push_str(&format!(
        "{p}cl_kernel kernel = stencilc_cl_kernel(\"{}\");\n",
        k.name
    ));
    let mut arg = 0;
    for (a, _) in &k.arrays {
        if n.resident.contains(a) {
            g.push_str(&format!("{p}/* `{a}` is on the device already */\n"));
        } else {
            g.push_str(&format!(
                "{p}cl_mem d_{a} = stencilc_cl_to_device({a}, sizeof({a}));\n"
            ));
        }
        g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(cl_mem), &d_{a}), \"clSetKernelArg\");\n"));
        arg += 1;
    }
    for f in &k.flags {
        g.push_str(&format!(
            "{p}int h_{f} = {f};\n{p}cl_mem d_{f} = stencilc_cl_to_device(&h_{f}, sizeof(int));\n"
        ));
        g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(cl_mem), &d_{f}), \"clSetKernelArg\");\n"));
        arg += 1;
    }
    for (s, ty) in &k.scalars {
        let host_ty = if ty == "long" { "cl_long" } else { ty.as_str() };
        g.push_str(&format!("{p}{host_ty} a_{s} = ({host_ty})({s});\n"));
        g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(a_{s}), &a_{s}), \"clSetKernelArg\");\n"));
        arg += 1;
    }
    for (v, lower, _) in &k.band {
        g.push_str(&format!("{p}cl_long lower_{v} = (cl_long)({lower});\n"));
        g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(cl_long), &lower_{v}), \"clSetKernelArg\");\n"));
        arg += 1;
    }
    if !k.local.is_empty() {
        // A kernel that stages tiles runs whole work-groups and checks its counts.
        for (v, lower, upper) in &k.band {
            g.push_str(&format!(
                "{p}cl_long count_{v} = (cl_long)({upper}) - (cl_long)({lower});\n"
            ));
            g.push_str(&format!("{p}stencilc_cl_check(clSetKernelArg(kernel, {arg}, sizeof(cl_long), &count_{v}), \"clSetKernelArg\");\n"));
            arg += 1;
        }
    }
    // Innermost loop along dimension 0, so neighbouring work-items touch neighbouring elements.
    let sizes: Vec<String> = k
        .band
        .iter()
        .rev()
        .map(|(_, lo, hi)| format!("(long)({hi}) - (long)({lo})"))
        .collect();
    g.push_str(&format!(
        "{p}long counts[{}] = {{ {} }};\n",
        sizes.len(),
        sizes.join(", ")
    ));
    g.push_str(&format!(
        "{p}size_t global[{}];\n{p}int empty = 0;\n",
        sizes.len()
    ));
    let local = if k.local.is_empty() {
        g.push_str(&format!(
            "{p}for (int d = 0; d < {}; d++) {{ empty |= counts[d] <= 0; global[d] = counts[d] > 0 ? (size_t)counts[d] : 0; }}\n",
            sizes.len()
        ));
        "NULL"
    } else {
        // Whole work-groups of the shape the kernel's tiles are laid out for.
        let shape: Vec<String> = k.local.iter().rev().map(|b| b.to_string()).collect();
        g.push_str(&format!(
            "{p}size_t local[{}] = {{ {} }};\n",
            shape.len(),
            shape.join(", ")
        ));
        g.push_str(&format!(
            "{p}for (int d = 0; d < {}; d++) {{ empty |= counts[d] <= 0; global[d] = counts[d] > 0 ? ((size_t)counts[d] + local[d] - 1) / local[d] * local[d] : 0; }}\n",
            sizes.len()
        ));
        "local"
    };
    g.push_str(&format!(
        "{p}if (!empty) stencilc_cl_check(clEnqueueNDRangeKernel(stencilc_queue, kernel, {}, NULL, global, {local}, 0, NULL, NULL), \"clEnqueueNDRangeKernel\");\n",
        sizes.len()
    ));
    for (a, written) in &k.arrays {
        if n.resident.contains(a) {
            continue;
        }
        if *written {
            g.push_str(&format!(
                "{p}stencilc_cl_from_device(d_{a}, {a}, sizeof({a}));\n"
            ));
        }
        g.push_str(&format!("{p}clReleaseMemObject(d_{a});\n"));
    }
    for f in &k.flags {
        g.push_str(&format!("{p}stencilc_cl_from_device(d_{f}, &h_{f}, sizeof(int));\n{p}{f} = h_{f};\n{p}clReleaseMemObject(d_{f});\n"));
    }
    g.push_str(&format!("{p}clReleaseKernel(kernel);\n{indent}}}\n"));
    g
}

/// The host helpers every mapped OpenCL program carries: one context, queue
/// and program for the whole run, built on first use.
const HOST_HELPERS: &str = r#"static cl_context stencilc_context;
static cl_command_queue stencilc_queue;
static cl_program stencilc_program;
static cl_device_id stencilc_device;

static void stencilc_cl_check(cl_int status, const char *what) {
    if (status != CL_SUCCESS) {
        fprintf(stderr, "stencilc map: OpenCL error %d in %s\n", (int)status, what);
        exit(1);
    }
}

static void stencilc_cl_init(void) {
    if (stencilc_context) return;
    cl_platform_id platform;
    cl_device_id device;
    cl_int status = clGetPlatformIDs(1, &platform, NULL);
    stencilc_cl_check(status, "clGetPlatformIDs (is an OpenCL platform installed?)");
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, NULL) != CL_SUCCESS)
        stencilc_cl_check(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL), "clGetDeviceIDs");
    stencilc_device = device;
    stencilc_context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    stencilc_cl_check(status, "clCreateContext");
    stencilc_queue = clCreateCommandQueue(stencilc_context, device, 0, &status);
    stencilc_cl_check(status, "clCreateCommandQueue");
    stencilc_program = clCreateProgramWithSource(stencilc_context, 1, &stencilc_kernels, NULL, &status);
    stencilc_cl_check(status, "clCreateProgramWithSource");
    if (clBuildProgram(stencilc_program, 1, &device, "@OPTIONS@", NULL, NULL) != CL_SUCCESS) {
        char log[16384];
        clGetProgramBuildInfo(stencilc_program, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "stencilc map: the kernels did not build:\n%s\n", log);
        exit(1);
    }
}

static cl_kernel stencilc_cl_kernel(const char *name) {
    cl_int status;
    stencilc_cl_init();
    cl_kernel kernel = clCreateKernel(stencilc_program, name, &status);
    stencilc_cl_check(status, "clCreateKernel");
    return kernel;
}

/* A program of its own for a lifted nest's kernels (their helpers may share names). */
static cl_program stencilc_cl_build(const char *source, const char *options) {
    cl_int status;
    stencilc_cl_init();
    cl_program program = clCreateProgramWithSource(stencilc_context, 1, &source, NULL, &status);
    stencilc_cl_check(status, "clCreateProgramWithSource");
    if (clBuildProgram(program, 1, &stencilc_device, options, NULL, NULL) != CL_SUCCESS) {
        char log[16384];
        clGetProgramBuildInfo(program, stencilc_device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "stencilc map: the lifted kernels did not build:\n%s\n", log);
        exit(1);
    }
    return program;
}

static cl_kernel stencilc_cl_kernel_of(cl_program program, const char *name) {
    cl_int status;
    cl_kernel kernel = clCreateKernel(program, name, &status);
    stencilc_cl_check(status, "clCreateKernel");
    return kernel;
}

static cl_mem stencilc_cl_to_device(void *host, size_t bytes) {
    cl_int status;
    cl_mem buffer = clCreateBuffer(stencilc_context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, host, &status);
    stencilc_cl_check(status, "clCreateBuffer");
    return buffer;
}

static void stencilc_cl_from_device(cl_mem buffer, void *host, size_t bytes) {
    stencilc_cl_check(clEnqueueReadBuffer(stencilc_queue, buffer, CL_TRUE, 0, bytes, host, 0, NULL, NULL), "clEnqueueReadBuffer");
}

"#;
