//! The kernel IR verifier: what every module lowering produces must satisfy,
//! checked after lowering in debug builds and in the tests.
//!
//! - every variable is in its kernel's table, declared once, declared (or a
//!   parameter, or a loop variable) before it is used, and used as what it is:
//!   scalars as values, arrays through loads and stores in their own space;
//! - every value has the type of what receives it, every index is an `int`
//!   (a global or constant array's flat index may be a `long`: 64-bit
//!   indices), and operands of one operator have one type, except that `+`,
//!   `-` and `*` widen an `int` operand beside a `long` (as C does);
//! - no store to a read-only buffer, no assignment to a parameter;
//! - no barrier under control flow that differs between the threads of a block
//!   (a condition or loop bound that depends on the thread index);
//! - shared arrays take one index per dimension, and an index whose range is
//!   provable (from the block shape, constant loop bounds and `tid < c` guards)
//!   stays inside the array;
//! - constant tables exist in the module; kernel names are unique.

use std::collections::{HashMap, HashSet};

use crate::ir::{BinaryOp, ScalarType, UnaryOp, Value};
use crate::kir::{
    helpers::WrapOp, Builtin, Helper, KExpr, KStmt, Kernel, Module, Origin, ParamKind, SharedArray,
    Space, Var,
};

/// Checks `module`; the error lists every violation found, one a line, each
/// naming its kernel.
pub fn verify(module: &Module) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    let mut kernel_names = HashSet::new();
    for kernel in &module.kernels {
        if !kernel_names.insert(kernel.name.as_str()) {
            errors.push(format!("two kernels are named `{}`", kernel.name));
        }
        let mut checker = Checker {
            module,
            kernel,
            errors: Vec::new(),
            declared: HashSet::new(),
        };
        checker.kernel();
        errors.extend(
            checker
                .errors
                .into_iter()
                .map(|e| format!("kernel `{}`: {e}", kernel.name)),
        );
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// An inclusive range of integer values, where one is provable.
type Range = Option<(i64, i64)>;

/// What is known about the variables in scope at a point of the body.
#[derive(Clone, Default)]
struct Scope {
    /// Variables usable here.
    visible: HashSet<Var>,
    /// Variables whose value may differ between the threads of a block.
    varying: HashSet<Var>,
    /// Provable value ranges of `int` variables.
    ranges: HashMap<Var, (i64, i64)>,
}

struct Checker<'a> {
    module: &'a Module,
    kernel: &'a Kernel,
    errors: Vec<String>,
    /// Variables declared so far (each may be declared once).
    declared: HashSet<Var>,
}

impl Checker<'_> {
    fn hint(&self, var: Var) -> String {
        match self.kernel.vars.decls.get(var.0 as usize) {
            Some(decl) => format!("`{}` (#{})", decl.hint, var.0),
            None => format!("#{}", var.0),
        }
    }

    fn exists(&mut self, var: Var) -> bool {
        if (var.0 as usize) < self.kernel.vars.decls.len() {
            true
        } else {
            self.errors
                .push(format!("variable #{} is not in the kernel's table", var.0));
            false
        }
    }

    fn kernel(&mut self) {
        let kernel = self.kernel;
        let mut scope = Scope::default();
        for param in &kernel.params {
            if !self.exists(param.var) {
                continue;
            }
            let decl = kernel.vars.decl(param.var);
            let space = match param.kind {
                ParamKind::Scalar => Space::Private,
                ParamKind::Buffer | ParamKind::ReadOnlyBuffer => Space::Global,
            };
            if decl.space != space || decl.ty != param.ty {
                self.errors.push(format!(
                    "parameter {} is declared {:?} {} but passed as {:?} {}",
                    self.hint(param.var),
                    decl.space,
                    decl.ty.name(),
                    param.kind,
                    param.ty.name()
                ));
            }
            if !self.declared.insert(param.var) {
                self.errors
                    .push(format!("{} is a parameter twice", self.hint(param.var)));
            }
            scope.visible.insert(param.var);
        }
        for array in &kernel.shared {
            if !self.exists(array.var) {
                continue;
            }
            let decl = kernel.vars.decl(array.var);
            if decl.space != Space::Shared || decl.ty != array.ty {
                self.errors.push(format!(
                    "shared array {} is declared in {:?} memory",
                    self.hint(array.var),
                    decl.space
                ));
            }
            if !self.declared.insert(array.var) {
                self.errors
                    .push(format!("{} is declared twice", self.hint(array.var)));
            }
            scope.visible.insert(array.var);
        }
        for (i, decl) in kernel.vars.decls.iter().enumerate() {
            if let Origin::Table(t) = decl.origin {
                match self.module.constants.get(t) {
                    Some(table)
                        if table.ty == decl.ty
                            && decl.space
                                == if table.global {
                                    Space::Global
                                } else {
                                    Space::Constant
                                } =>
                    {
                        scope.visible.insert(Var(i as u32));
                    }
                    _ => self.errors.push(format!(
                        "{} refers to constant table {t}, which the module lacks or types otherwise",
                        self.hint(Var(i as u32))
                    )),
                }
            }
        }
        self.block(&kernel.body, &mut scope, false);
    }

    fn block(&mut self, body: &[KStmt], scope: &mut Scope, divergent: bool) {
        for stmt in body {
            self.stmt(stmt, scope, divergent);
        }
    }

    fn stmt(&mut self, stmt: &KStmt, scope: &mut Scope, divergent: bool) {
        match stmt {
            KStmt::Decl { var, init } => self.decl(var, init, scope),
            KStmt::Assign { var, value } => self.assign(var, value, scope, divergent),
            KStmt::Store {
                space,
                array,
                index,
                value,
            } => self.store(space, array, index, value, scope),
            KStmt::VecStore {
                array,
                index,
                values,
            } => self.vector_store(array, index, values, scope),
            KStmt::For {
                var,
                start,
                end,
                step,
                body,
                ..
            } => self.for_loop(var, [start, end, step], body, scope, divergent),
            KStmt::If {
                cond,
                then,
                otherwise,
            } => self.branch(cond, then, otherwise, scope, divergent),
            KStmt::Block(body) => {
                let mut inner = scope.clone();
                self.block(body, &mut inner, divergent);
                for v in &inner.varying {
                    if scope.visible.contains(v) {
                        scope.varying.insert(*v);
                    }
                }
            }
            KStmt::Barrier => {
                if divergent {
                    self.errors.push(
                        "a barrier under control flow that depends on the thread index \
                         (threads that skip it deadlock the block)"
                            .to_string(),
                    );
                }
            }
            KStmt::Comment(_) => {}
        }
    }

    /// Declares `var` with the value `init`.
    fn decl(&mut self, var: &Var, init: &KExpr, scope: &mut Scope) {
        let ty = match init {
            KExpr::VecLoad {
                array,
                index,
                lanes,
            } => self.vector_load(*var, *array, index, *lanes, scope),
            _ => self.expr(init, scope),
        };
        if !self.exists(*var) {
            return;
        }
        let decl = self.kernel.vars.decl(*var);
        if decl.lanes > 1 && !matches!(init, KExpr::VecLoad { .. }) {
            self.errors.push(format!(
                "vector {} is initialised by something other than a vector load",
                self.hint(*var)
            ));
        }
        if decl.space != Space::Private {
            self.errors.push(format!(
                "{} is declared as a scalar but lives in {:?} memory",
                self.hint(*var),
                decl.space
            ));
        }
        self.expect_type(
            ty,
            decl.ty,
            &format!("the initial value of {}", self.hint(*var)),
        );
        if !self.declared.insert(*var) {
            self.errors
                .push(format!("{} is declared twice", self.hint(*var)));
        }
        if self.varies(init, scope) {
            scope.varying.insert(*var);
        }
        if let Some(range) = self.range(init, scope) {
            scope.ranges.insert(*var, range);
        }
        scope.visible.insert(*var);
    }

    /// Assigns `value` to the scalar `var`.
    fn assign(&mut self, var: &Var, value: &KExpr, scope: &mut Scope, divergent: bool) {
        let ty = self.expr(value, scope);
        if !self.exists(*var) {
            return;
        }
        self.use_scalar(*var, scope);
        if self.kernel.params.iter().any(|p| p.var == *var) {
            self.errors
                .push(format!("assignment to parameter {}", self.hint(*var)));
        }
        let decl_ty = self.kernel.vars.decl(*var).ty;
        self.expect_type(
            ty,
            decl_ty,
            &format!("the value assigned to {}", self.hint(*var)),
        );
        if divergent || self.varies(value, scope) {
            scope.varying.insert(*var);
        }
        scope.ranges.remove(var);
    }

    /// A store of `value` into `array[index]`.
    fn store(
        &mut self,
        space: &Space,
        array: &Var,
        index: &[KExpr],
        value: &KExpr,
        scope: &mut Scope,
    ) {
        let ty = self.expr(value, scope);
        if *space == Space::Constant || *space == Space::Private {
            self.errors.push(format!("a store into {:?} memory", space));
        }
        if self.exists(*array) && matches!(self.kernel.vars.decl(*array).origin, Origin::Table(_)) {
            self.errors
                .push(format!("a store into table {}", self.hint(*array)));
        }
        if let Some(elem) = self.array(*space, *array, index, scope) {
            self.expect_type(
                ty,
                elem,
                &format!("the value stored into {}", self.hint(*array)),
            );
        }
        self.writable(*array);
    }

    /// A store of the `values` from flat index `index` of `array`.
    fn vector_store(&mut self, array: &Var, index: &KExpr, values: &[KExpr], scope: &mut Scope) {
        let types: Vec<Option<ScalarType>> = values.iter().map(|v| self.expr(v, scope)).collect();
        let lanes = values.len();
        if let Some(elem) = self.array(Space::Global, *array, std::slice::from_ref(index), scope) {
            if !matches!(lanes, 2 | 4) || lanes * elem.size_bytes() > 16 {
                self.errors.push(format!(
                    "a vector store of {lanes} {} into {} (2 or 4 elements, at most 16 bytes)",
                    elem.name(),
                    self.hint(*array)
                ));
            }
            for ty in types {
                self.expect_type(
                    ty,
                    elem,
                    &format!("a value stored into {}", self.hint(*array)),
                );
            }
        }
        self.writable(*array);
    }

    /// A loop: its bounds, its variable, and its body in a scope of its own.
    fn for_loop(
        &mut self,
        var: &Var,
        [start, end, step]: [&KExpr; 3],
        body: &[KStmt],
        scope: &mut Scope,
        divergent: bool,
    ) {
        for bound in [start, end, step] {
            let ty = self.expr(bound, scope);
            self.expect_type(ty, ScalarType::Int, "a loop bound");
        }
        if !self.exists(*var) {
            return;
        }
        let decl = self.kernel.vars.decl(*var);
        if decl.ty != ScalarType::Int || decl.space != Space::Private {
            self.errors.push(format!(
                "loop variable {} is not a private int",
                self.hint(*var)
            ));
        }
        if !self.declared.insert(*var) {
            self.errors
                .push(format!("{} is declared twice", self.hint(*var)));
        }
        let bounds_vary =
            self.varies(start, scope) || self.varies(end, scope) || self.varies(step, scope);
        let mut inner = scope.clone();
        inner.visible.insert(*var);
        if bounds_vary {
            inner.varying.insert(*var);
        }
        let first = self.range(start, scope);
        let last = self.range(end, scope);
        let positive = matches!(self.range(step, scope), Some((lo, _)) if lo > 0);
        if let (Some((lo, _)), Some((_, hi)), true) = (first, last, positive) {
            inner.ranges.insert(*var, (lo, hi - 1));
        }
        self.block(body, &mut inner, divergent || bounds_vary);
    }

    /// An `if`: each branch in a scope of its own, what they assign under a thread-dependent condition varying after it.
    fn branch(
        &mut self,
        cond: &KExpr,
        then: &[KStmt],
        otherwise: &[KStmt],
        scope: &mut Scope,
        divergent: bool,
    ) {
        let ty = self.expr(cond, scope);
        self.expect_type(ty, ScalarType::Int, "a condition");
        let inner_divergent = divergent || self.varies(cond, scope);
        let mut then_scope = scope.clone();
        refine(cond, &mut then_scope);
        self.block(then, &mut then_scope, inner_divergent);
        let mut else_scope = scope.clone();
        self.block(otherwise, &mut else_scope, inner_divergent);
        // Variables assigned under a thread-dependent condition vary.
        for s in [&then_scope, &else_scope] {
            for v in &s.varying {
                if scope.visible.contains(v) {
                    scope.varying.insert(*v);
                }
            }
            scope
                .ranges
                .retain(|v, r| s.ranges.get(v) == Some(r) || !s.visible.contains(v));
        }
    }

    fn expect_type(&mut self, got: Option<ScalarType>, want: ScalarType, what: &str) {
        if let Some(got) = got {
            if got != want {
                self.errors.push(format!(
                    "{} is a {} where a {} is expected",
                    what,
                    got.name(),
                    want.name()
                ));
            }
        }
    }

    /// A use of a scalar variable: visible and private.
    fn use_scalar(&mut self, var: Var, scope: &Scope) {
        if !scope.visible.contains(&var) {
            self.errors
                .push(format!("{} is used before it is declared", self.hint(var)));
        }
        if self.kernel.vars.decl(var).lanes > 1 {
            self.errors.push(format!(
                "vector {} is used as a scalar (read it by lane)",
                self.hint(var)
            ));
        }
        let space = self.kernel.vars.decl(var).space;
        if space != Space::Private {
            self.errors.push(format!(
                "{} is an array in {:?} memory, used as a scalar",
                self.hint(var),
                space
            ));
        }
    }

    /// Checks an array access; returns the element type.
    fn array(
        &mut self,
        space: Space,
        array: Var,
        index: &[KExpr],
        scope: &Scope,
    ) -> Option<ScalarType> {
        for i in index {
            let ty = self.expr(i, scope);
            let flat = matches!(space, Space::Global | Space::Constant);
            if !(flat && ty == Some(ScalarType::Long)) {
                self.expect_type(
                    ty,
                    ScalarType::Int,
                    &format!("an index of {}", self.hint(array)),
                );
            }
        }
        if !self.exists(array) {
            return None;
        }
        let decl = self.kernel.vars.decl(array);
        if !scope.visible.contains(&array) {
            self.errors.push(format!(
                "{} is used before it is declared",
                self.hint(array)
            ));
        }
        if decl.space != space {
            self.errors.push(format!(
                "{} lives in {:?} memory but is accessed as {:?}",
                self.hint(array),
                decl.space,
                space
            ));
        }
        match space {
            Space::Shared => {
                let shared: Option<&SharedArray> =
                    self.kernel.shared.iter().find(|s| s.var == array);
                if let Some(shared) = shared {
                    if shared.dims.len() != index.len() {
                        self.errors.push(format!(
                            "{} has {} dimensions but takes {} indices",
                            self.hint(array),
                            shared.dims.len(),
                            index.len()
                        ));
                    }
                    for (d, (i, extent)) in index.iter().zip(&shared.dims).enumerate() {
                        if let Some((lo, hi)) = self.range(i, scope) {
                            if lo < 0 || hi >= *extent as i64 {
                                self.errors.push(format!(
                                    "index {d} of {} ranges over {lo} to {hi}, outside 0 to {}",
                                    self.hint(array),
                                    *extent as i64 - 1
                                ));
                            }
                        }
                    }
                }
            }
            Space::Global | Space::Constant if index.len() != 1 => self.errors.push(format!(
                "{} takes one flat index, not {}",
                self.hint(array),
                index.len()
            )),
            _ => {}
        }
        Some(decl.ty)
    }

    /// Checks an expression; returns its type where it is well-typed.
    fn expr(&mut self, e: &KExpr, scope: &Scope) -> Option<ScalarType> {
        match e {
            KExpr::Lit(v) => Some(v.ty()),
            KExpr::Var(var) => {
                if !self.exists(*var) {
                    return None;
                }
                self.use_scalar(*var, scope);
                Some(self.kernel.vars.decl(*var).ty)
            }
            KExpr::Builtin(_) => Some(ScalarType::Int),
            KExpr::Load {
                space,
                array,
                index,
            } => self.array(*space, *array, index, scope),
            KExpr::Unary(UnaryOp::Neg, a) => self.expr(a, scope),
            KExpr::Unary(UnaryOp::Not, a) => {
                self.expr(a, scope);
                Some(ScalarType::Int)
            }
            KExpr::Binary(op, a, b) => {
                let ta = self.expr(a, scope)?;
                let tb = self.expr(b, scope)?;
                let widening = matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul)
                    && matches!(
                        (ta, tb),
                        (ScalarType::Int, ScalarType::Long) | (ScalarType::Long, ScalarType::Int)
                    );
                match op {
                    BinaryOp::And | BinaryOp::Or => Some(ScalarType::Int),
                    // Value-preserving: the `int` is converted to `long` first.
                    _ if widening => Some(ScalarType::Long),
                    _ if ta != tb => {
                        self.errors.push(format!(
                            "`{}` between a {} and a {} (conversions are explicit)",
                            op.symbol(),
                            ta.name(),
                            tb.name()
                        ));
                        None
                    }
                    BinaryOp::Eq
                    | BinaryOp::Ne
                    | BinaryOp::Lt
                    | BinaryOp::Le
                    | BinaryOp::Gt
                    | BinaryOp::Ge => Some(ScalarType::Int),
                    _ => Some(ta),
                }
            }
            KExpr::Select(c, a, b) => {
                self.expr(c, scope);
                let ta = self.expr(a, scope)?;
                let tb = self.expr(b, scope)?;
                if ta != tb {
                    self.errors.push(format!(
                        "a select between a {} and a {}",
                        ta.name(),
                        tb.name()
                    ));
                    return None;
                }
                Some(ta)
            }
            KExpr::Call { args, .. } => {
                let types: Vec<Option<ScalarType>> =
                    args.iter().map(|a| self.expr(a, scope)).collect();
                types.first().copied().flatten()
            }
            KExpr::Helper(helper, args) => {
                let (params, result) = gpu_signature(*helper);
                if args.len() != params.len() {
                    self.errors.push(format!(
                        "{} takes {} arguments, not {}",
                        helper.name(),
                        params.len(),
                        args.len()
                    ));
                }
                for (i, (a, want)) in args.iter().zip(&params).enumerate() {
                    let got = self.expr(a, scope);
                    let what = format!("argument {i} of {}", helper.name());
                    match (got, want) {
                        // A `long` parameter takes an `int` unchanged.
                        (Some(ScalarType::Int), ScalarType::Long) => {}
                        _ => self.expect_type(got, *want, &what),
                    }
                }
                Some(result)
            }
            KExpr::Cast(ty, a) => {
                self.expr(a, scope);
                Some(*ty)
            }
            KExpr::ShuffleDown(a, _) => self.expr(a, scope),
            KExpr::VecLoad { array, .. } => {
                self.errors.push(format!(
                    "a vector load of {} outside a vector's declaration",
                    self.hint(*array)
                ));
                None
            }
            KExpr::Lane(var, lane) => {
                if !self.exists(*var) {
                    return None;
                }
                if !scope.visible.contains(var) {
                    self.errors
                        .push(format!("{} is used before it is declared", self.hint(*var)));
                }
                let decl = self.kernel.vars.decl(*var);
                if *lane >= decl.lanes || decl.lanes < 2 {
                    self.errors.push(format!(
                        "lane {lane} of {}, which has {} lanes",
                        self.hint(*var),
                        decl.lanes
                    ));
                }
                Some(decl.ty)
            }
        }
    }

    /// Refuses a store into a buffer the kernel takes as read-only.
    fn writable(&mut self, array: Var) {
        let read_only = self
            .kernel
            .params
            .iter()
            .any(|p| p.var == array && p.kind == ParamKind::ReadOnlyBuffer);
        if read_only {
            self.errors.push(format!(
                "a store into read-only buffer {}",
                self.hint(array)
            ));
        }
    }

    /// Checks a vector load initialising `var`; returns the element type.
    fn vector_load(
        &mut self,
        var: Var,
        array: Var,
        index: &KExpr,
        lanes: u8,
        scope: &Scope,
    ) -> Option<ScalarType> {
        let elem = self.array(Space::Global, array, std::slice::from_ref(index), scope)?;
        if !matches!(lanes, 2 | 4) || usize::from(lanes) * elem.size_bytes() > 16 {
            self.errors.push(format!(
                "a vector load of {lanes} {} from {} (2 or 4 elements, at most 16 bytes)",
                elem.name(),
                self.hint(array)
            ));
        }
        if self.exists(var) && self.kernel.vars.decl(var).lanes != lanes {
            self.errors.push(format!(
                "{} has {} lanes but is loaded with {lanes}",
                self.hint(var),
                self.kernel.vars.decl(var).lanes
            ));
        }
        Some(elem)
    }

    /// Whether `e` may differ between the threads of one block.
    fn varies(&self, e: &KExpr, scope: &Scope) -> bool {
        let mut varies = false;
        e.visit(&mut |node| match node {
            KExpr::Builtin(Builtin::ThreadIdx(_)) | KExpr::ShuffleDown(..) => varies = true,
            KExpr::Var(v) | KExpr::Load { array: v, .. } if scope.varying.contains(v) => {
                varies = true
            }
            _ => {}
        });
        varies
    }

    /// The values an `int` expression provably takes.
    fn range(&self, e: &KExpr, scope: &Scope) -> Range {
        match e {
            KExpr::Lit(Value::Int(v)) => Some((*v as i64, *v as i64)),
            KExpr::Var(v) => scope.ranges.get(v).copied(),
            KExpr::Builtin(Builtin::ThreadIdx(d)) => {
                let n = *self.kernel.block.get(*d as usize)? as i64;
                Some((0, n - 1))
            }
            KExpr::Binary(op, a, b) => {
                let (alo, ahi) = self.range(a, scope)?;
                let (blo, bhi) = self.range(b, scope)?;
                match op {
                    BinaryOp::Add => Some((alo.checked_add(blo)?, ahi.checked_add(bhi)?)),
                    BinaryOp::Sub => Some((alo.checked_sub(bhi)?, ahi.checked_sub(blo)?)),
                    BinaryOp::Mul => {
                        let products = [
                            alo.checked_mul(blo)?,
                            alo.checked_mul(bhi)?,
                            ahi.checked_mul(blo)?,
                            ahi.checked_mul(bhi)?,
                        ];
                        Some((*products.iter().min()?, *products.iter().max()?))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Narrows the ranges of the then-branch of `if (cond)`: `v < c`, `v <= c` and
/// conjunctions of them.
fn refine(cond: &KExpr, scope: &mut Scope) {
    if let KExpr::Binary(op, a, b) = cond {
        match (op, &**a, &**b) {
            (BinaryOp::And, _, _) => {
                refine(a, scope);
                refine(b, scope);
            }
            (BinaryOp::Lt | BinaryOp::Le, KExpr::Var(v), KExpr::Lit(Value::Int(c))) => {
                let limit = if *op == BinaryOp::Lt {
                    *c as i64 - 1
                } else {
                    *c as i64
                };
                if let Some((lo, hi)) = scope.ranges.get(v).copied() {
                    scope.ranges.insert(*v, (lo, hi.min(limit)));
                }
            }
            _ => {}
        }
    }
}

/// A helper's parameter types and result type as the GPU kernels define it
/// (indices and extents `int`, see [`crate::kir::helpers::Spelling`]).
fn gpu_signature(helper: Helper) -> (Vec<ScalarType>, ScalarType) {
    use ScalarType::{Int, Long};
    match helper {
        Helper::MinMax => (vec![Long, Long], Long),
        Helper::Clamp | Helper::Mirror | Helper::Periodic | Helper::Inside => {
            (vec![Long, Int], Int)
        }
        Helper::Div(ty) | Helper::Rem(ty) => (vec![ty, ty], ty),
        Helper::FloatToInt { from, to } => (vec![from], to),
        Helper::Wrapping(WrapOp::Neg, ty) => (vec![ty], ty),
        Helper::Wrapping(_, ty) | Helper::Extremum(_, ty) => (vec![ty, ty], ty),
    }
}

#[cfg(test)]
mod tests;
