//! Checks of the CUDA subset: names resolved to slots, types computed, and the
//! rules of the subset and of KaniCUDA's annotations enforced, each broken rule
//! a diagnostic at its place. Statements and declarations here; expressions,
//! assignment targets and marked reads in [`expr`].

mod expr;

pub use expr::global_source;

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::front::suggest::closest;
use crate::source::Span;

use super::ast::{
    ChosenSlot, Expr, Function, Kernel, MarkedRead, Param, Scalar, SlotInfo, Stmt, StmtKind, Type,
};

/// A device function's signature, as calls see it.
#[derive(Clone, Debug)]
struct Signature {
    name: String,
    ret: Scalar,
    params: Vec<Scalar>,
}

fn signatures(functions: &[Function]) -> Vec<Signature> {
    functions
        .iter()
        .map(|f| Signature {
            name: f.name.clone(),
            ret: f.ret,
            params: f
                .params
                .iter()
                .map(|p| match p.ty {
                    Type::Scalar(s) => s,
                    _ => Scalar::Int,
                })
                .collect(),
        })
        .collect()
}

use super::functions::inlined;
pub use super::functions::{math_operand_type, math_type, MATH, MAX_INLINED, SHUFFLES};

/// The most bytes of static shared memory a block may declare (CUDA's limit
/// without opting in to more).
pub const MAX_SHARED_BYTES: i64 = 48 * 1024;

/// Bytes of one element.
pub fn size_of(scalar: Scalar) -> i64 {
    match scalar {
        Scalar::Bool => 1,
        Scalar::Int | Scalar::UInt | Scalar::Float => 4,
        Scalar::Long | Scalar::ULong | Scalar::Double => 8,
    }
}

impl Checker {
    fn new(functions: &[Function], returns: Option<Scalar>) -> Checker {
        Checker {
            slots: Vec::new(),
            scopes: vec![HashMap::new()],
            profile: None,
            marked: Vec::new(),
            loops: 0,
            shared_stores: HashMap::new(),
            filled_from: HashMap::new(),
            functions: signatures(functions),
            returns,
            chosen: Vec::new(),
            shared_bytes: None,
            extern_shared: None,
        }
    }
}

/// Checks a `__device__` function in place; `earlier` are the device functions
/// defined before it, which it may call.
pub fn check_function(function: &mut Function, earlier: &[Function]) -> Result<(), Diagnostic> {
    let mut checker = Checker::new(earlier, Some(function.ret));
    if earlier.iter().any(|f| f.name == function.name) {
        return Err(Diagnostic::error(
            format!("device function `{}` is defined twice", function.name),
            function.name_span,
        )
        .with_help("rename one of them (the subset has no overloading)"));
    }
    declare_params(&mut checker, &function.params, true)?;
    match function.body.last() {
        Some(Stmt {
            kind: StmtKind::ReturnValue(_),
            ..
        }) => {}
        _ => {
            return Err(Diagnostic::error(
                format!(
                    "device function `{}` does not end with `return`",
                    function.name
                ),
                function.name_span,
            )
            .with_help("end its body with `return value;`, so that every path returns a value"))
        }
    }
    let mut body = std::mem::take(&mut function.body);
    let result = checker.stmts(&mut body);
    function.body = body;
    result?;
    function.slots = checker.slots.into_iter().map(|(info, _)| info).collect();
    function.inlined = inlined(&function.body, earlier, function.name_span)?;
    Ok(())
}

/// Declares parameters as the first slots; a device function's must be scalars.
fn declare_params(checker: &mut Checker, params: &[Param], scalars_only: bool) -> Checked<()> {
    for param in params {
        if scalars_only && !matches!(param.ty, Type::Scalar(_)) {
            return Err(Diagnostic::error(
                format!("device function parameter `{}` is a pointer", param.name),
                param.span,
            )
            .with_help("pass the element's value, or index the array in the kernel"));
        }
        if checker.scopes[0].contains_key(&param.name) {
            return Err(Diagnostic::error(
                format!("parameter `{}` is declared twice", param.name),
                param.span,
            )
            .with_help("give each parameter its own name"));
        }
        let slot = checker.declare(
            &param.name,
            param.ty,
            Vec::new(),
            param.span,
            !param.is_const || matches!(param.ty, Type::Scalar(_)),
        );
        checker.slots[slot].1 = param.is_const && matches!(param.ty, Type::Pointer(_));
    }
    Ok(())
}

/// Checks one kernel in place: resolves names and fills in types, slots and
/// marked reads. `functions` are the device functions defined before it;
/// `shared_bytes` the launch's dynamic shared memory, the size of an
/// `extern __shared__` array.
pub fn check(
    kernel: &mut Kernel,
    functions: &[Function],
    shared_bytes: Option<u64>,
) -> Result<(), Diagnostic> {
    let mut checker = Checker::new(functions, None);
    checker.shared_bytes = shared_bytes;
    checker.chosen = std::mem::take(&mut kernel.chosen);
    kernel.functions = functions.to_vec();
    declare_params(&mut checker, &kernel.params, false)?;
    let mut body = std::mem::take(&mut kernel.body);
    let result = checker.stmts(&mut body);
    kernel.body = body;
    result?;
    for (slot, (info, _)) in checker.slots.iter().enumerate() {
        if matches!(info.ty, Type::Shared(_)) && !checker.shared_stores.contains_key(&slot) {
            return Err(Diagnostic::error(
                format!("no store fills the shared array `{}`", info.name),
                info.span,
            )
            .with_label("declared here, never stored into")
            .with_help(format!(
                "store the elements it should hold, as in `{}[...] = in[...];`, then `__syncthreads()`",
                info.name
            )));
        }
    }
    for read in checker.marked.iter_mut().filter(|r| r.chosen.is_none()) {
        let Some(&shared) = checker.filled_from.get(&read.array) else {
            let array = &checker.slots[read.array].0.name;
            return Err(Diagnostic::error(
                format!("no shared array is filled from `{array}`, so no slot can serve `{}`", read.text),
                read.span,
            )
            .with_help(format!(
                "declare a `__shared__` array and the store that fills it, as in `sb[csb] = {array}[c];`"
            )));
        };
        read.shared = shared;
    }
    inlined(&kernel.body, functions, kernel.name_span)?;
    kernel.slots = checker.slots.into_iter().map(|(info, _)| info).collect();
    kernel.marked = checker.marked;
    Ok(())
}

struct Checker {
    /// Each slot and whether it is read-only (`const`).
    slots: Vec<(SlotInfo, bool)>,
    scopes: Vec<HashMap<String, usize>>,
    profile: Option<Vec<(String, Span)>>,
    marked: Vec<MarkedRead>,
    loops: usize,
    shared_stores: HashMap<usize, Span>,
    /// For a global array, the first shared array a store fills from it.
    filled_from: HashMap<usize, usize>,
    /// The device functions that calls may call.
    functions: Vec<Signature>,
    /// In a device function: its result type.
    returns: Option<Scalar>,
    /// The chosen slots of `__opt__(a[i], sb[j])` not checked yet.
    chosen: Vec<(Span, ChosenSlot)>,
    /// The launch's dynamic shared bytes, if given.
    shared_bytes: Option<u64>,
    /// Where the `extern __shared__` array is declared, once seen.
    extern_shared: Option<Span>,
}

type Checked<T> = Result<T, Diagnostic>;

fn is_integer(s: Scalar) -> bool {
    !s.is_float()
}

impl Checker {
    /// The elements of the `extern __shared__` array `name` declared at
    /// `span`: the launch's dynamic shared bytes over the element's size.
    fn extern_size(&mut self, elem: Scalar, name: &str, span: Span) -> Checked<i64> {
        if let Some(first) = self.extern_shared {
            return Err(Diagnostic::error(
                format!("a second `extern __shared__` array, `{name}`"),
                span,
            )
            .with_secondary(first, "the first one")
            .with_help("`extern __shared__` arrays all start at the same address: declare one and index it"));
        }
        self.extern_shared = Some(span);
        let Some(bytes) = self.shared_bytes else {
            return Err(Diagnostic::error(
                format!("`{name}` is `extern __shared__`: its size is given at launch, and none was given"),
                span,
            )
            .with_help("give the launch's dynamic shared memory in bytes with `--shared-bytes N` (the third value of `<<<grid, block, N>>>`)"));
        };
        let size = size_of(elem) as u64;
        if bytes % size != 0 || bytes == 0 {
            return Err(Diagnostic::error(
                format!("`--shared-bytes {bytes}` is not a whole number of `{elem}`s ({size} bytes each) for `{name}`"),
                span,
            )
            .with_help(format!("give a positive multiple of {size}")));
        }
        if bytes > MAX_SHARED_BYTES as u64 {
            return Err(Diagnostic::error(
                format!("`--shared-bytes {bytes}` for `{name}` is more than a block's {MAX_SHARED_BYTES}"),
                span,
            )
            .with_help(format!("give at most {MAX_SHARED_BYTES} bytes")));
        }
        Ok((bytes / size) as i64)
    }

    fn declare(
        &mut self,
        name: &str,
        ty: Type,
        dims: Vec<i64>,
        span: Span,
        writable: bool,
    ) -> usize {
        let slot = self.slots.len();
        self.slots.push((
            SlotInfo {
                name: name.to_string(),
                ty,
                dims,
                span,
            },
            !writable,
        ));
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name.to_string(), slot);
        }
        slot
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn unknown(&self, name: &str, span: Span) -> Diagnostic {
        let visible: Vec<&str> = self
            .scopes
            .iter()
            .flat_map(|s| s.keys().map(String::as_str))
            .collect();
        let mut diag = Diagnostic::error(format!("unknown name `{name}`"), span)
            .with_label("not declared before this use");
        let help = match closest(name, visible) {
            Some(near) => format!("did you mean `{near}`?"),
            None if name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
            {
                format!("define it, as in `#define {name} 16` or `-D {name}=16`")
            }
            None => format!("declare `{name}` before using it"),
        };
        diag = diag.with_help(help);
        diag
    }

    fn scoped<T>(&mut self, f: impl FnOnce(&mut Self) -> Checked<T>) -> Checked<T> {
        self.scopes.push(HashMap::new());
        let result = f(self);
        self.scopes.pop();
        result
    }

    fn stmts(&mut self, stmts: &mut [Stmt]) -> Checked<()> {
        for stmt in stmts {
            self.stmt(stmt)?;
        }
        Ok(())
    }

    fn stmt(&mut self, stmt: &mut Stmt) -> Checked<()> {
        let span = stmt.span;
        match &mut stmt.kind {
            StmtKind::Local {
                ty,
                is_const,
                name,
                slot,
                init,
            } => *slot = self.local(*ty, *is_const, name, init.as_mut(), span)?,
            StmtKind::Shared { name, .. } if self.returns.is_some() => {
                return Err(Diagnostic::error(
                    format!("shared array `{name}` declared in a device function"),
                    span,
                )
                .with_help("declare `__shared__` arrays in the kernel"))
            }
            StmtKind::Shared {
                elem,
                name,
                slot,
                dims,
            } => *slot = self.shared(*elem, name, dims, span)?,
            StmtKind::Expr(expr) => {
                self.expr(expr)?;
            }
            StmtKind::If(cond, then, other) => {
                self.value(cond)?;
                self.scoped(|c| c.stmt(then))?;
                if let Some(other) = other {
                    self.scoped(|c| c.stmt(other))?;
                }
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => self.for_loop(init.as_deref_mut(), cond.as_mut(), step.as_mut(), body)?,
            StmtKind::While(cond, body) => {
                self.value(cond)?;
                self.loops += 1;
                let result = self.scoped(|c| c.stmt(body));
                self.loops -= 1;
                result?;
            }
            StmtKind::Block(items) => self.scoped(|c| c.stmts(items))?,
            StmtKind::DeclList(items) => self.stmts(items)?,
            StmtKind::Sync if self.returns.is_some() => {
                return Err(
                    Diagnostic::error("`__syncthreads()` in a device function", span)
                        .with_help("call `__syncthreads()` in the kernel itself"),
                )
            }
            StmtKind::Sync => {}
            StmtKind::Return if self.returns.is_some() => {
                return Err(Diagnostic::error("`return;` in a device function", span)
                    .with_help("return the function's value, as in `return x;`"))
            }
            StmtKind::Return => {}
            StmtKind::ReturnValue(value) => {
                if self.returns.is_none() {
                    return Err(Diagnostic::error("a kernel returns no value", span)
                        .with_help("write `return;`, or store the value into an output array"));
                }
                self.value(value)?;
            }
            StmtKind::Break | StmtKind::Continue => {
                if self.loops == 0 {
                    return Err(
                        Diagnostic::error("`break` or `continue` outside a loop", span)
                            .with_help("remove it, or put it inside a `for` or `while`"),
                    );
                }
            }
            StmtKind::Profile(_) if self.returns.is_some() => {
                return Err(Diagnostic::error("`profile` in a device function", span)
                    .with_help("name the candidates in the kernel"))
            }
            StmtKind::Profile(names) => {
                if self.profile.is_some() {
                    return Err(Diagnostic::error("a second `profile` in one kernel", span)
                        .with_help("list every candidate in one `profile(\"...\")`"));
                }
                self.profile = Some(names.clone());
            }
        }
        Ok(())
    }

    /// Checks a local declaration, its initialiser before the name is
    /// declared; returns the new variable's slot.
    fn local(
        &mut self,
        ty: Scalar,
        is_const: bool,
        name: &str,
        init: Option<&mut Expr>,
        span: Span,
    ) -> Checked<usize> {
        if let Some(init) = init {
            self.value(init)?;
        }
        if self.scopes.last().is_some_and(|s| s.contains_key(name)) {
            return Err(Diagnostic::error(
                format!("`{name}` is declared twice in the same scope"),
                span,
            )
            .with_help("rename one of them"));
        }
        Ok(self.declare(name, Type::Scalar(ty), Vec::new(), span, !is_const))
    }

    /// Checks a `__shared__` array's dimensions (constant, positive, fitting
    /// in a block's shared memory); returns the array's slot.
    fn shared(
        &mut self,
        elem: Scalar,
        name: &str,
        dims: &mut [Expr],
        span: Span,
    ) -> Checked<usize> {
        if dims.len() > 3 {
            return Err(Diagnostic::error(
                format!("shared array `{name}` has {} dimensions", dims.len()),
                span,
            )
            .with_help("shared arrays have 1 to 3 dimensions"));
        }
        let mut sizes = Vec::new();
        if dims.is_empty() {
            sizes.push(self.extern_size(elem, name, span)?);
        }
        for dim in dims.iter_mut() {
            let value = self.constant(dim)?;
            if value <= 0 {
                return Err(Diagnostic::error(
                    format!("shared array size {value} is not positive"),
                    dim.span,
                )
                .with_help("give each dimension a positive constant size"));
            }
            sizes.push(value);
        }
        let bytes = sizes
            .iter()
            .try_fold(size_of(elem), |acc, &d| acc.checked_mul(d))
            .unwrap_or(i64::MAX);
        if bytes > MAX_SHARED_BYTES {
            return Err(Diagnostic::error(
                format!("shared array `{name}` takes {bytes} bytes, more than a block's {MAX_SHARED_BYTES}"),
                span,
            )
            .with_help("make the tile smaller"));
        }
        Ok(self.declare(name, Type::Shared(elem), sizes, span, true))
    }

    /// Checks a `for` loop: its header in a scope of its own (so that its
    /// variable ends with the loop), its body one scope further in.
    fn for_loop(
        &mut self,
        init: Option<&mut Stmt>,
        cond: Option<&mut Expr>,
        step: Option<&mut Expr>,
        body: &mut Stmt,
    ) -> Checked<()> {
        self.scoped(|c| {
            if let Some(init) = init {
                c.stmt(init)?;
            }
            if let Some(cond) = cond {
                c.value(cond)?;
            }
            if let Some(step) = step {
                c.expr(step)?;
            }
            c.loops += 1;
            let result = c.scoped(|c| c.stmt(body));
            c.loops -= 1;
            result
        })
    }
}
