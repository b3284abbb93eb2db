//! Functions of the user's file copied into direct kernels (`--target opencl`
//! and `cuda`), so that a nest calling a helper such as `clampf(x, lo, hi)`
//! runs on the device instead of staying on the CPU.
//!
//! Only functions of scalars are copied: scalar parameters (passed by value,
//! so the callee cannot write the caller's data), a scalar result, a body of
//! declarations, assignments to its own locals and parameters, `if`, `for`
//! and `return`, reading nothing but its parameters and locals, and calling
//! only the C library's math functions and other functions copied the same
//! way (not itself, directly or not). Each is printed from the parsed body,
//! as the kernels are (macros expanded), once per program, before the
//! kernels that call it, as `stencilc_<name>` (its own name could be a
//! built-in of the kernel language): `__device__` in CUDA, a plain function
//! in OpenCL C.

use std::collections::BTreeSet;

use super::{cl_type, Printer};
use crate::front::c::loops::{CUnit, Expr, Function, Stmt};
pub use crate::map::kernel::DeviceFunction;
use crate::map::syntax::{walk, PURE_LIBRARY};

/// The name of `function`'s copy in the kernels: its own could be a
/// built-in of the kernel language (`clamp`, `mix`, `min`).
pub fn device_name(function: &str) -> String {
    format!("stencilc_{function}")
}

/// The definitions the calls `calls` need, callees before their callers; or
/// why one of them cannot be copied.
pub fn copy_functions(
    calls: &[String],
    unit: &CUnit,
    cuda: bool,
) -> Result<Vec<DeviceFunction>, String> {
    let mut out = Vec::new();
    let mut stack = Vec::new();
    for c in calls {
        copy_one(c, unit, cuda, &mut stack, &mut out)?;
    }
    Ok(out)
}

fn copy_one(
    name: &str,
    unit: &CUnit,
    cuda: bool,
    stack: &mut Vec<String>,
    out: &mut Vec<DeviceFunction>,
) -> Result<(), String> {
    if PURE_LIBRARY.contains(&name) || out.iter().any(|f| f.name == name) {
        return Ok(());
    }
    if stack.iter().any(|s| s == name) {
        return Err(format!(
            "the call of `{name}`: it calls itself (through {}), and kernels cannot recurse",
            stack.join(" -> ")
        ));
    }
    let Some(f) = unit.functions.iter().find(|f| f.name == name) else {
        return Err(format!(
            "the call of `{name}`: its body is not in the file, so it cannot be copied into a kernel"
        ));
    };
    let why =
        |what: String| format!("the call of `{name}`: {what}, so it is not copied into a kernel");
    let ret =
        cl_type(&f.ret).ok_or_else(|| why(format!("it returns `{}`, not a number", f.ret)))?;
    let mut params = Vec::new();
    for p in &f.param_order {
        let v = &f.vars[p];
        if v.pointer || !v.dims.is_empty() {
            return Err(why(format!("its parameter `{p}` is a pointer or an array")));
        }
        let ty = cl_type(&v.elem)
            .ok_or_else(|| why(format!("its parameter `{p}` has type `{}`", v.elem)))?;
        params.push(format!("{ty} {p}"));
    }
    let callees = check_body(f).map_err(why)?;
    stack.push(name.to_string());
    for c in &callees {
        copy_one(c, unit, cuda, stack, out)?;
    }
    stack.pop();
    let printer = Printer::for_function(f, unit, cuda);
    let mut body = String::new();
    printer.block(&f.body, 1, &mut body).map_err(why)?;
    let qualifier = if cuda { "static __device__ " } else { "" };
    out.push(DeviceFunction {
        name: name.to_string(),
        source: format!(
            "/* `{name}` (lines {}-{}), copied from the file */\n{qualifier}{ret} {}({})\n{{\n{body}}}\n",
            f.lines.0,
            f.lines.1,
            device_name(name),
            params.join(", ")
        ),
    });
    Ok(())
}

/// The functions `f` calls, once it is known to touch only its own scalars.
fn check_body(f: &Function) -> Result<BTreeSet<String>, String> {
    let own = |n: &str| f.vars.get(n).is_some_and(|v| !v.global);
    let mut calls = BTreeSet::new();
    let mut problem = None;
    let mut expr = |e: &Expr, problem: &mut Option<String>| {
        e.visit(&mut |x| match x {
            Expr::Load(r) if !r.index.is_empty() || !own(&r.name) => {
                problem.get_or_insert(format!(
                    "it reads `{}`, which is not its own scalar",
                    r.name
                ));
            }
            Expr::Call(c, _) => {
                calls.insert(c.clone());
            }
            Expr::Unsupported(what) => {
                problem.get_or_insert(format!("it holds `{what}`"));
            }
            Expr::Str(_) => {
                problem.get_or_insert("it holds a string literal".into());
            }
            _ => {}
        })
    };
    walk(&f.body, &mut |s| match s {
        Stmt::Assign(a) => {
            if !a.target.index.is_empty() || !own(&a.target.name) {
                problem.get_or_insert(format!(
                    "it writes `{}`, which is not its own scalar",
                    a.target.name
                ));
            }
            expr(&a.value, &mut problem);
        }
        Stmt::Decl { name, init, .. } => {
            if f.vars
                .get(name)
                .is_none_or(|v| v.pointer || !v.dims.is_empty())
            {
                problem.get_or_insert(format!("its local `{name}` is not a scalar"));
            }
            if let Some(e) = init {
                expr(e, &mut problem);
            }
        }
        Stmt::If { cond, .. } => expr(cond, &mut problem),
        Stmt::For(l) => {
            expr(&l.lower, &mut problem);
            expr(&l.upper, &mut problem);
            if let Some(why) = &l.not_canonical {
                problem.get_or_insert(format!(
                    "a loop of it is not `for (i = a; i < b; i += c)`: {why}"
                ));
            }
        }
        Stmt::Return(Some(e)) | Stmt::Eval { expr: e, .. } => expr(e, &mut problem),
        Stmt::Return(None) => {
            problem.get_or_insert("it returns no value".to_string());
        }
        Stmt::Break | Stmt::Continue => {}
        Stmt::Goto(_) => {
            problem.get_or_insert("it holds a `goto`".to_string());
        }
        Stmt::Other { what, .. } => {
            problem.get_or_insert(format!("it holds {what}"));
        }
    });
    match problem {
        Some(p) => Err(p),
        None => Ok(calls),
    }
}
