//! Checks of the CUDA subset: names resolved to slots, types computed, and the
//! rules of the subset and of KaniCUDA's annotations enforced, each broken rule
//! a diagnostic at its place.

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::front::suggest::closest;
use crate::source::Span;

use super::ast::{
    BinOp, Builtin, Candidate, Expr, ExprKind, Function, Kernel, MarkedRead, Param, Scalar,
    SlotInfo, Stmt, StmtKind, Type, UnOp,
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
pub use super::functions::{math_type, MATH, MAX_INLINED, SHUFFLES};

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
/// marked reads. `functions` are the device functions defined before it.
pub fn check(kernel: &mut Kernel, functions: &[Function]) -> Result<(), Diagnostic> {
    let mut checker = Checker::new(functions, None);
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
    for read in &mut checker.marked {
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
}

type Checked<T> = Result<T, Diagnostic>;

fn is_integer(s: Scalar) -> bool {
    !s.is_float()
}

impl Checker {
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
            } => {
                if let Some(init) = init {
                    self.value(init)?;
                }
                if self
                    .scopes
                    .last()
                    .is_some_and(|s| s.contains_key(name.as_str()))
                {
                    return Err(Diagnostic::error(
                        format!("`{name}` is declared twice in the same scope"),
                        span,
                    )
                    .with_help("rename one of them"));
                }
                *slot = self.declare(name, Type::Scalar(*ty), Vec::new(), span, !*is_const);
            }
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
            } => {
                if dims.len() > 3 {
                    return Err(Diagnostic::error(
                        format!("shared array `{name}` has {} dimensions", dims.len()),
                        span,
                    )
                    .with_help("shared arrays have 1 to 3 dimensions"));
                }
                let mut sizes = Vec::new();
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
                    .try_fold(size_of(*elem), |acc, &d| acc.checked_mul(d))
                    .unwrap_or(i64::MAX);
                if bytes > MAX_SHARED_BYTES {
                    return Err(Diagnostic::error(
                        format!("shared array `{name}` takes {bytes} bytes, more than a block's {MAX_SHARED_BYTES}"),
                        span,
                    )
                    .with_help("make the tile smaller"));
                }
                *slot = self.declare(name, Type::Shared(*elem), sizes, span, true);
            }
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
            } => {
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
                })?;
            }
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

    /// Evaluates a constant integer expression (a shared array's size).
    fn constant(&mut self, expr: &mut Expr) -> Checked<i64> {
        let fail = || {
            Diagnostic::error(
                "a shared array's size must be a constant integer",
                expr.span,
            )
            .with_help("write a number or a `#define`d constant (or give it with `-D NAME=VALUE`)")
        };
        let value = match &mut expr.kind {
            ExprKind::Int(v, _) => i64::try_from(*v).map_err(|_| fail())?,
            ExprKind::Unary(UnOp::Neg, e) => -self.constant(e)?,
            ExprKind::Unary(UnOp::Plus, e) => self.constant(e)?,
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.constant(a)?, self.constant(b)?);
                let r = match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div => x.checked_div(y),
                    BinOp::Rem => x.checked_rem(y),
                    _ => None,
                };
                r.ok_or_else(fail)?
            }
            ExprKind::Var { name, .. } if self.lookup(name).is_none() => {
                return Err(self.unknown(&name.clone(), expr.span))
            }
            _ => return Err(fail()),
        };
        expr.ty = Type::Scalar(Scalar::Int);
        Ok(value)
    }

    /// Checks an expression that must give a scalar value.
    fn value(&mut self, expr: &mut Expr) -> Checked<Scalar> {
        let ty = self.expr(expr)?;
        match ty {
            Type::Scalar(s) => Ok(s),
            Type::Pointer(_) | Type::Shared(_) => {
                Err(Diagnostic::error("an array is used as a value", expr.span)
                    .with_help("index it, as in `a[i]` (pointer arithmetic is outside the subset)"))
            }
            Type::Void => Err(Diagnostic::error("this has no value", expr.span)
                .with_help("use it as a statement of its own")),
        }
    }

    fn integer(&mut self, expr: &mut Expr, what: &str) -> Checked<Scalar> {
        let s = self.value(expr)?;
        if !is_integer(s) {
            return Err(
                Diagnostic::error(format!("{what} is a `{s}`, not an integer"), expr.span)
                    .with_help("convert it with a cast, as in `(int)x`"),
            );
        }
        Ok(s)
    }

    fn expr(&mut self, expr: &mut Expr) -> Checked<Type> {
        let span = expr.span;
        let ty = match &mut expr.kind {
            ExprKind::Int(_, s) | ExprKind::Float(_, s) => Type::Scalar(*s),
            ExprKind::Bool(_) => Type::Scalar(Scalar::Bool),
            ExprKind::Var { name, slot } => {
                let Some(found) = self.lookup(name) else {
                    return Err(self.unknown(name, span));
                };
                *slot = found;
                self.slots[found].0.ty
            }
            ExprKind::Builtin(..) => Type::Scalar(Scalar::UInt),
            ExprKind::Index {
                array,
                slot,
                indices,
                marked,
            } => {
                let Some(found) = self.lookup(array) else {
                    return Err(self.unknown(array, span));
                };
                *slot = found;
                let info = self.slots[found].0.clone();
                for index in indices.iter_mut() {
                    self.integer(index, "an index")?;
                }
                let elem = match info.ty {
                    Type::Pointer(e) => {
                        if indices.len() != 1 {
                            return Err(Diagnostic::error(
                                format!(
                                    "`{array}` is a pointer, indexed with {} indices",
                                    indices.len()
                                ),
                                span,
                            )
                            .with_help(format!(
                                "index it once with the flat index, as in `{array}[i * n + j]`"
                            )));
                        }
                        e
                    }
                    Type::Shared(e) => {
                        if marked.is_some() {
                            return Err(Diagnostic::error(
                                format!("`__opt__` marks a read of the shared array `{array}`"),
                                span,
                            )
                            .with_help("mark reads of global arrays (pointer parameters) only"));
                        }
                        if indices.len() != info.dims.len() {
                            return Err(Diagnostic::error(
                                format!(
                                    "`{array}` has {} dimensions, indexed with {}",
                                    info.dims.len(),
                                    indices.len()
                                ),
                                span,
                            )
                            .with_help("give one index per dimension"));
                        }
                        e
                    }
                    Type::Scalar(_) | Type::Void => {
                        return Err(
                            Diagnostic::error(format!("`{array}` is not an array"), span)
                                .with_help("index pointer parameters and `__shared__` arrays only"),
                        )
                    }
                };
                if marked.is_some() {
                    *marked = Some(self.mark(array, found, span)?);
                }
                Type::Scalar(elem)
            }
            ExprKind::Unary(op, operand) => {
                let s = self.value(operand)?;
                match op {
                    UnOp::Not => Type::Scalar(Scalar::Bool),
                    UnOp::BitNot if !is_integer(s) => {
                        return Err(Diagnostic::error("`~` of a floating value", span)
                            .with_help("`~` takes integers"))
                    }
                    _ => Type::Scalar(Scalar::common(s, Scalar::Int)),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.value(a)?, self.value(b)?);
                if op.is_integer_only() && (!is_integer(x) || !is_integer(y)) {
                    return Err(Diagnostic::error(
                        format!("`{}` of a floating value", op.symbol()),
                        span,
                    )
                    .with_help(format!(
                        "`{}` takes integers; use `fmodf`/`fmod` for a floating remainder",
                        op.symbol()
                    )));
                }
                if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                    Type::Scalar(Scalar::Bool)
                } else if matches!(op, BinOp::Shl | BinOp::Shr) {
                    Type::Scalar(Scalar::common(x, Scalar::Int))
                } else {
                    Type::Scalar(Scalar::common(x, y))
                }
            }
            ExprKind::Cond(c, a, b) => {
                self.value(c)?;
                let (x, y) = (self.value(a)?, self.value(b)?);
                Type::Scalar(if x == Scalar::Bool && y == Scalar::Bool {
                    Scalar::Bool
                } else {
                    Scalar::common(x, y)
                })
            }
            ExprKind::Assign { op, target, value } => {
                let t = self.target(target)?;
                let v = self.value(value)?;
                if let Some(op) = op {
                    if op.is_integer_only() && (!is_integer(t) || !is_integer(v)) {
                        return Err(Diagnostic::error(
                            format!("`{}=` of a floating value", op.symbol()),
                            span,
                        )
                        .with_help("this operator takes integers"));
                    }
                }
                if let ExprKind::Index { slot, .. } = &target.kind {
                    if matches!(self.slots[*slot].0.ty, Type::Shared(_)) {
                        self.shared_stores.entry(*slot).or_insert(span);
                        if let Some(source) = global_source(value)
                            .filter(|&s| matches!(self.slots[s].0.ty, Type::Pointer(_)))
                        {
                            self.filled_from.entry(source).or_insert(*slot);
                        }
                    }
                }
                Type::Scalar(t)
            }
            ExprKind::Step { target, .. } => {
                if !matches!(target.kind, ExprKind::Var { .. }) {
                    return Err(Diagnostic::error(
                        "`++`/`--` of something that is not a variable",
                        span,
                    )
                    .with_help("write `a[i] += 1` for an element"));
                }
                Type::Scalar(self.target(target)?)
            }
            ExprKind::Call { name, args } if self.functions.iter().any(|f| f.name == *name) => {
                let Some(function) = self.functions.iter().find(|f| f.name == *name).cloned()
                else {
                    return Err(Diagnostic::error("internal: function vanished", span));
                };
                if args.len() != function.params.len() {
                    return Err(Diagnostic::error(
                        format!(
                            "`{name}` takes {} argument(s), given {}",
                            function.params.len(),
                            args.len()
                        ),
                        span,
                    )
                    .with_help("pass one value per parameter"));
                }
                for arg in args.iter_mut() {
                    self.value(arg)?;
                }
                Type::Scalar(function.ret)
            }
            ExprKind::Call { name, args } if SHUFFLES.contains(&name.as_str()) => {
                if !(3..=4).contains(&args.len()) {
                    return Err(Diagnostic::error(
                        format!("`{name}` takes 3 or 4 arguments, given {}", args.len()),
                        span,
                    )
                    .with_help(format!(
                        "write `{name}(mask, value, lane)` (and optionally a width)"
                    )));
                }
                let mut value = Scalar::Int;
                for (i, arg) in args.iter_mut().enumerate() {
                    if i == 1 {
                        value = Scalar::common(self.value(arg)?, Scalar::Int);
                    } else {
                        self.integer(arg, "a shuffle's mask, lane and width")?;
                    }
                }
                Type::Scalar(value)
            }
            ExprKind::Call { name, args } => {
                let Some(&(_, _, arity)) = MATH.iter().find(|(n, _, _)| n == name) else {
                    let near = closest(name, MATH.iter().map(|(n, _, _)| *n));
                    let mut diag = Diagnostic::error(
                        format!("`{name}` is not a function of the CUDA subset"),
                        span,
                    );
                    diag = diag.with_help(match near {
                        Some(near) => format!("did you mean `{near}`? (the subset calls math functions only)"),
                        None => "the subset calls math functions only (`sqrtf`, `fabs`, `min`, ...); inline device functions".to_string(),
                    });
                    return Err(diag);
                };
                if args.len() != arity {
                    return Err(Diagnostic::error(
                        format!("`{name}` takes {arity} argument(s), given {}", args.len()),
                        span,
                    )
                    .with_help(format!("call it with {arity} argument(s)")));
                }
                let mut types = Vec::new();
                for arg in args.iter_mut() {
                    types.push(self.value(arg)?);
                }
                Type::Scalar(math_type(name, &types))
            }
            ExprKind::Cast(s, operand) => {
                self.value(operand)?;
                Type::Scalar(*s)
            }
        };
        expr.ty = ty;
        Ok(ty)
    }

    /// Checks an assignment target; returns its type.
    fn target(&mut self, target: &mut Expr) -> Checked<Scalar> {
        let span = target.span;
        if let ExprKind::Index {
            marked: Some(_),
            array,
            ..
        } = &target.kind
        {
            return Err(
                Diagnostic::error(format!("`__opt__.{array}[...]` is stored into"), span)
                    .with_help("mark reads of global memory only; remove `__opt__.` here"),
            );
        }
        let s = self.value(target)?;
        let slot = match &target.kind {
            ExprKind::Var { slot, .. } | ExprKind::Index { slot, .. } => *slot,
            _ => {
                return Err(Diagnostic::error("this cannot be assigned to", span)
                    .with_help("assign to a variable or an array element"))
            }
        };
        let (info, read_only) = &self.slots[slot];
        if *read_only {
            return Err(
                Diagnostic::error(format!("`{}` is `const`", info.name), span)
                    .with_secondary(info.span, "declared here")
                    .with_help("remove `const` from its declaration, or store elsewhere"),
            );
        }
        Ok(s)
    }

    /// Records a marked read, resolving the candidates of `profile` as seen here.
    fn mark(&mut self, array: &str, slot: usize, span: Span) -> Checked<usize> {
        let text = format!("__opt__.{array}[...]");
        let Some(profile) = self.profile.clone() else {
            return Err(Diagnostic::error(format!("marked read `{text}` without a `profile`"), span)
                .with_help("name the candidate variables first, as in `profile(\"threadIdx.x i j\");` at the kernel's start"));
        };
        let mut candidates = Vec::new();
        for (name, name_span) in &profile {
            let candidate = if let Some((base, axis)) = name.split_once('.') {
                let builtin = Builtin::from_name(base);
                let axis = ["x", "y", "z"].iter().position(|a| *a == axis);
                match (builtin, axis) {
                    (Some(b), Some(a)) => Candidate::Builtin(b, a),
                    _ => {
                        return Err(Diagnostic::error(
                            format!("`profile` names `{name}`, which is not a built-in"),
                            *name_span,
                        )
                        .with_help("candidates are variables or `threadIdx.x`-style built-ins"))
                    }
                }
            } else {
                match self.lookup(name) {
                    Some(found) if matches!(self.slots[found].0.ty, Type::Scalar(s) if is_integer(s)) => {
                        Candidate::Slot(found)
                    }
                    Some(_) => {
                        return Err(Diagnostic::error(
                            format!("`profile` names `{name}`, which is not an integer variable"),
                            *name_span,
                        )
                        .with_help("candidates must be integer variables"))
                    }
                    None => {
                        return Err(Diagnostic::error(
                            format!("`profile` names `{name}`, which is not declared before the marked read"),
                            *name_span,
                        )
                        .with_secondary(span, "the marked read")
                        .with_help("name a variable visible at every marked read, or declare it earlier"))
                    }
                }
            };
            candidates.push(candidate);
        }
        self.marked.push(MarkedRead {
            text,
            span,
            array: slot,
            shared: usize::MAX,
            candidate_names: profile.iter().map(|(n, _)| n.clone()).collect(),
            candidates,
        });
        Ok(self.marked.len() - 1)
    }
}

/// The global array (its slot) that a stored value is read from, when the
/// value is a plain read `a[i]` (possibly cast): the store "fills" the shared
/// slot with that element.
pub fn global_source(value: &Expr) -> Option<usize> {
    match &value.kind {
        ExprKind::Index {
            slot,
            marked: None,
            indices,
            ..
        } if indices.len() == 1 && value.ty != Type::Void => Some(*slot),
        ExprKind::Cast(_, inner) => global_source(inner),
        _ => None,
    }
}
