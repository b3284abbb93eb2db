//! What a nest may touch beyond its own accesses: the functions it calls
//! (callable when their body is in the file, they are not recursive, and they
//! read and write only their own scalars) and the arrays that may share
//! memory (pointers that are not `restrict`, not fresh `malloc`s, and not
//! given distinct arrays at every call of the function).

use std::collections::{BTreeMap, BTreeSet};

use super::facts::NestFacts;
use super::syntax::{lookup, walk, PURE_LIBRARY};
use crate::front::c::loops::{dereferenced_pointer, CUnit, Expr, Function, Stmt, Var};

/// Why a call of `name` keeps a nest on the CPU (`None` if it need not):
/// a function is callable from a kernel when its body is in the file, it
/// writes only its own locals, is not recursive and calls only such functions.
pub fn call_obstacle(
    name: &str,
    unit: &CUnit,
    declared: &BTreeMap<String, bool>,
) -> Option<String> {
    let mut visiting = Vec::new();
    pure_function(name, unit, declared, &mut visiting).err()
}

fn pure_function(
    name: &str,
    unit: &CUnit,
    declared: &BTreeMap<String, bool>,
    visiting: &mut Vec<String>,
) -> Result<(), String> {
    if PURE_LIBRARY.contains(&name) {
        return Ok(());
    }
    if visiting.iter().any(|v| v == name) {
        return Err(format!("a call of `{name}`, which is recursive"));
    }
    let Some(f) = unit.functions.iter().find(|f| f.name == name) else {
        return Err(if declared.contains_key(name) {
            format!("a call of `{name}`, whose body is not visible")
        } else {
            format!("a call of `{name}`, which is not declared")
        });
    };
    visiting.push(name.to_string());
    let mut result = Ok(());
    let mut calls = Vec::new();
    check_pure_body(&f.body, f, &mut calls, &mut result);
    for c in calls {
        if result.is_ok() {
            result = pure_function(&c, unit, declared, visiting)
                .map_err(|e| format!("a call of `{name}`, which makes {e}"));
        }
    }
    visiting.pop();
    result
}

fn check_pure_body(
    body: &[Stmt],
    f: &Function,
    calls: &mut Vec<String>,
    result: &mut Result<(), String>,
) {
    let mut exprs: Vec<&Expr> = Vec::new();
    for s in body {
        match s {
            Stmt::Assign(a) => {
                let local = f
                    .vars
                    .get(&a.target.name)
                    .is_some_and(|v| !v.param && !v.global);
                let scalar_param = f
                    .vars
                    .get(&a.target.name)
                    .is_some_and(|v| v.param && !v.pointer);
                if !a.target.index.is_empty() && !local
                    || a.target.index.is_empty() && !local && !scalar_param
                {
                    *result = Err(format!(
                        "a call of `{}`, which writes `{}` outside itself",
                        f.name, a.target.name
                    ));
                }
                exprs.push(&a.value);
                exprs.extend(a.target.index.iter());
            }
            Stmt::Decl { init: Some(e), .. }
            | Stmt::Eval { expr: e, .. }
            | Stmt::Return(Some(e)) => exprs.push(e),
            Stmt::If {
                cond, then, els, ..
            } => {
                exprs.push(cond);
                check_pure_body(then, f, calls, result);
                check_pure_body(els, f, calls, result);
            }
            Stmt::For(l) => check_pure_body(&l.body, f, calls, result),
            Stmt::Goto(_) => *result = Err(format!("a call of `{}`, which holds a goto", f.name)),
            Stmt::Other { body, .. } => check_pure_body(body, f, calls, result),
            _ => {}
        }
    }
    // Reads of anything but its own scalars would be accesses the nest's
    // dependence test does not see.
    let own_scalar = |name: &str| {
        f.vars
            .get(name)
            .is_some_and(|v| !v.global && !v.pointer && v.dims.is_empty())
    };
    for e in exprs {
        e.visit(&mut |x| match x {
            Expr::Call(name, _) => calls.push(name.clone()),
            Expr::Unsupported(what) => {
                *result = Err(format!("a call of `{}`, which holds {what}", f.name))
            }
            Expr::Str(_) => {
                *result = Err(format!(
                    "a call of `{}`, which holds a string literal",
                    f.name
                ))
            }
            Expr::Load(r) if !r.index.is_empty() || !own_scalar(&r.name) => {
                *result = Err(format!(
                    "a call of `{}`, which reads `{}` beyond its scalar parameters and locals",
                    f.name, r.name
                ))
            }
            _ => {}
        });
    }
}

/// Library functions that return memory no other pointer reaches.
const ALLOCATORS: &[&str] = &[
    "malloc",
    "calloc",
    "aligned_alloc",
    "memalign",
    "valloc",
    "polybench_alloc_data",
];

/// The allocator `e` calls, through casts (`(double (*)[N])malloc(...)`):
/// a library allocator, or a function of the file whose every `return`
/// gives a fresh allocation (`return malloc(n * sizeof *a);`).
fn allocation_call(e: &Expr, unit: &CUnit) -> Option<String> {
    let mut e = e;
    while let Expr::Cast(_, inner) = e {
        e = inner;
    }
    let Expr::Call(f, _) = e else {
        return None;
    };
    if ALLOCATORS.contains(&f.as_str()) {
        return Some(f.clone());
    }
    let function = unit.functions.iter().find(|g| &g.name == f)?;
    let mut returns = 0;
    let mut all_fresh = true;
    walk(&function.body, &mut |s| {
        if let Stmt::Return(value) = s {
            returns += 1;
            let fresh = value.as_ref().is_some_and(|v| {
                let mut v = v;
                while let Expr::Cast(_, inner) = v {
                    v = inner;
                }
                matches!(v, Expr::Call(g, _) if ALLOCATORS.contains(&g.as_str()))
            });
            all_fresh &= fresh;
        }
    });
    (returns > 0 && all_fresh).then(|| f.clone())
}

/// The allocator a local pointer is only ever set to (`p = malloc(...)` in
/// its declaration, or in the one assignment of a pointer declared without
/// a value), so that it aliases nothing else; `None` if it may be set to
/// anything else.
fn fresh_allocation(name: &str, function: &Function, unit: &CUnit) -> Option<String> {
    let mut sets: Vec<Option<String>> = Vec::new();
    walk(&function.body, &mut |s| match s {
        Stmt::Decl {
            name: n,
            init: Some(e),
            ..
        } if n == name => sets.push(allocation_call(e, unit)),
        Stmt::Assign(a) if a.target.name == name && a.target.index.is_empty() => sets.push(
            a.op.is_none()
                .then(|| allocation_call(&a.value, unit))
                .flatten(),
        ),
        _ => {}
    });
    match sets.as_slice() {
        [Some(allocator)] => Some(allocator.clone()),
        _ => None,
    }
}

/// Whether every call of `function` in the file passes distinct arrays (or
/// fresh allocations) for the two pointer parameters `a` and `b`; `Some`
/// with what they are when so.
fn call_sites_distinct(function: &Function, a: &str, b: &str, unit: &CUnit) -> Option<String> {
    let params: Vec<&Var> = {
        // Parameter order is not kept in the map; recover it from the function's declaration order.
        let mut ps: Vec<&Var> = function.vars.values().filter(|v| v.param).collect();
        ps.sort_by_key(|v| function.param_order.iter().position(|p| p == &v.name));
        ps
    };
    let pos = |n: &str| params.iter().position(|v| v.name == n);
    let (Some(pa), Some(pb)) = (pos(a), pos(b)) else {
        return None;
    };
    let mut sites = 0;
    let mut ok = true;
    let mut seen = BTreeSet::new();
    for caller in &unit.functions {
        walk(&caller.body, &mut |s| {
            let mut exprs: Vec<&Expr> = Vec::new();
            match s {
                Stmt::Eval { expr: e, .. } | Stmt::Decl { init: Some(e), .. } => exprs.push(e),
                Stmt::Assign(x) => exprs.push(&x.value),
                _ => {}
            }
            for e in exprs {
                e.visit(&mut |x| {
                    if let Expr::Call(name, args) = x {
                        if name == &function.name {
                            sites += 1;
                            let object = |i: usize| distinct_object(args.get(i)?, caller, unit);
                            match (object(pa), object(pb)) {
                                (Some(x), Some(y)) if x.0 != y.0 => {
                                    seen.insert(format!("`{}` {} in `{}`", x.0, x.1, caller.name));
                                    seen.insert(format!("`{}` {} in `{}`", y.0, y.1, caller.name));
                                }
                                _ => ok = false,
                            }
                        }
                    }
                });
            }
        });
    }
    (sites > 0 && ok).then(|| seen.into_iter().collect::<Vec<_>>().join(", "))
}

/// The object an argument passes and what makes it distinct: an array of
/// the caller (`a`), or a pointer only ever set to a fresh allocation,
/// passed as it is, dereferenced (PolyBench's `POLYBENCH_ARRAY(a)`, `*a`)
/// or through a cast.
fn distinct_object(arg: &Expr, caller: &Function, unit: &CUnit) -> Option<(String, String)> {
    let mut e = arg;
    while let Expr::Cast(_, inner) = e {
        e = inner;
    }
    let name = match e {
        Expr::Load(r) if r.index.is_empty() => r.name.as_str(),
        Expr::Unsupported(what) => dereferenced_pointer(what)?,
        _ => return None,
    };
    let var = lookup(name, caller, unit)?;
    if !var.pointer && !var.dims.is_empty() {
        return Some((name.to_string(), "an array".to_string()));
    }
    fresh_allocation(name, caller, unit)
        .map(|allocator| (name.to_string(), format!("from `{allocator}`")))
}

/// What an accessed array name denotes, for the aliasing test.
#[derive(Clone, Copy, PartialEq)]
enum Storage {
    /// An array object (not a pointer); global or local.
    Array { global: bool },
    /// A local pointer only ever set to a fresh `malloc`.
    Fresh,
    /// A pointer parameter.
    Param { restrict: bool },
    /// Any other pointer.
    Pointer,
}

fn storage(name: &str, function: &Function, unit: &CUnit) -> Option<Storage> {
    let v = lookup(name, function, unit)?;
    Some(if !v.pointer && !v.dims.is_empty() {
        Storage::Array { global: v.global }
    } else if v.param {
        Storage::Param {
            restrict: v.restrict,
        }
    } else if fresh_allocation(name, function, unit).is_some() {
        Storage::Fresh
    } else {
        Storage::Pointer
    })
}

/// Whether two distinct names may denote overlapping memory: `Err(())` if
/// they may, `Ok(None)` if the declarations alone rule it out, `Ok(Some)`
/// with the fact that does when the test had to look further (the calls'
/// arguments, the allocations).
fn may_alias(a: &str, b: &str, function: &Function, unit: &CUnit) -> Result<Option<String>, ()> {
    use Storage::*;
    let (Some(x), Some(y)) = (storage(a, function, unit), storage(b, function, unit)) else {
        return Err(());
    };
    match (x, y) {
        (Array { .. }, Array { .. }) => Ok(None),
        (Fresh, Fresh | Array { .. } | Param { .. }) | (Array { .. } | Param { .. }, Fresh) => {
            let from = |n: &str| {
                fresh_allocation(n, function, unit).map(|f| format!("`{n}` is a fresh `{f}`"))
            };
            let facts: Vec<String> = [from(a), from(b)].into_iter().flatten().collect();
            Ok(Some(facts.join(", ")))
        }
        // C's `restrict`: within the function, the object is reached through that pointer only.
        (Param { restrict: true }, _) | (_, Param { restrict: true }) => Ok(None),
        // A parameter cannot point to a local array of the same call.
        (Param { .. }, Array { global: false }) | (Array { global: false }, Param { .. }) => {
            Ok(None)
        }
        (Param { .. }, Param { .. }) => call_sites_distinct(function, a, b, unit)
            .map(|what| {
                Some(format!(
                    "every call of `{}` passes distinct objects ({what})",
                    function.name
                ))
            })
            .ok_or(()),
        _ => Err(()),
    }
}

/// Adds an obstacle for each pair of arrays of the nest (one written) that may share memory.
pub fn check_aliasing(facts: &mut NestFacts, function: &Function, unit: &CUnit) {
    let arrays: BTreeSet<&str> = facts.accesses.iter().map(|a| a.array.as_str()).collect();
    let written: BTreeSet<&str> = facts
        .accesses
        .iter()
        .filter(|a| a.write)
        .map(|a| a.array.as_str())
        .collect();
    let arrays: Vec<&str> = arrays.into_iter().collect();
    for (i, a) in arrays.iter().enumerate() {
        if lookup(a, function, unit).is_none() {
            facts
                .obstacles
                .push(format!("the array `{a}` is not declared in the file"));
            continue;
        }
        for b in &arrays[i + 1..] {
            if !(written.contains(a) || written.contains(b)) {
                continue;
            }
            match may_alias(a, b, function, unit) {
                Ok(None) => {}
                Ok(Some(fact)) => facts
                    .no_alias
                    .push(format!("no aliasing of `{a}` and `{b}`: {fact}")),
                Err(()) => facts.obstacles.push(format!(
                    "possible aliasing of `{a}` and `{b}` (pointers; declare them `restrict` (`double {a}[restrict N]` or `double *restrict {a}`), or pass distinct arrays or fresh allocations at every call of `{}`)",
                    function.name
                )),
            }
        }
    }
}
