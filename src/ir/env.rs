//! Parameter values made concrete: constants, grid sizes and trip counts.
//!
//! [`RunEnv::new`] binds the parameters, evaluates the constants in order, the
//! grid sizes, the iteration count and the check interval, and refuses values
//! that make a size or count meaningless. It does not check accesses against the
//! grids: that is analysis (`analysis::bounds`), which every executor runs on
//! its inputs before computing (`exec::check_inputs`).

use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::eval::{eval, Leaves};
use crate::ir::{
    ConstId, Expr, ExprKind, FieldId, GridRef, LocalId, ParamId, Program, ReductionId, Subset,
    Table, TableId, Value,
};

/// Values for a program's parameters, indexed by `ParamId`, each of the parameter's type.
#[derive(Clone, Debug, PartialEq)]
pub struct Bindings {
    /// One value per parameter.
    pub params: Vec<Value>,
}

/// Why parameter values cannot be bound to a program.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// The values make a grid size, the iteration count or the check interval
    /// meaningless; located at the expression.
    #[error("{0}")]
    Located(Diagnostics),
    /// Not one value per parameter.
    #[error("{0}")]
    WrongCount(String),
}

/// A program's uniform values for one run, evaluated once from its [`Bindings`].
///
/// Built only by [`RunEnv::new`], so its values are those of some program; the
/// executors check that it is theirs ([`RunEnv::belongs_to`]).
#[derive(Clone, Debug)]
pub struct RunEnv {
    /// Parameter values, by `ParamId`.
    params: Vec<Value>,
    /// Constant values, by `ConstId`.
    constants: Vec<Value>,
    /// Size per axis of each grid, outermost first, by `GridId`.
    grid_dims: Vec<Vec<usize>>,
    /// The iterate's maximum trip count (0 without an iterate).
    max_iters: u64,
    /// Check every this many iterations (`None` without a check clause).
    every: Option<u64>,
}

/// The most elements one field level may have (2^34: 128 GiB of doubles), so
/// that a mistyped size is refused instead of exhausting memory.
const MAX_FIELD_ELEMENTS: u128 = 1 << 34;

impl RunEnv {
    /// Evaluates everything uniform.
    ///
    /// Errors: a wrong number of parameter values; a grid size below 1, a
    /// negative iteration count or a check interval below 1 (located at the
    /// expression). Accesses are not checked here (see the module docs).
    pub fn new(program: &Program, bindings: &Bindings) -> Result<RunEnv, BindError> {
        if bindings.params.len() != program.params.len() {
            return Err(BindError::WrongCount(format!(
                "program `{}` has {} parameter(s) but {} value(s) were given; give one value per parameter",
                program.name,
                program.params.len(),
                bindings.params.len()
            )));
        }
        let params: Vec<Value> = bindings
            .params
            .iter()
            .zip(&program.params)
            .map(|(v, p)| v.cast(p.ty))
            .collect();
        let mut env = RunEnv {
            params,
            constants: Vec::with_capacity(program.constants.len()),
            grid_dims: Vec::new(),
            max_iters: 0,
            every: None,
        };
        for constant in &program.constants {
            let value = env.eval_uniform(&constant.value).cast(constant.ty);
            env.constants.push(value);
        }

        let mut errors = Vec::new();
        for grid in &program.grids {
            let mut dims = Vec::with_capacity(grid.rank());
            let mut elements: u128 = 1;
            for dim in &grid.dims {
                let n = env.eval_int(dim);
                if n < 1 {
                    errors.push(
                        Diagnostic::error(
                            format!(
                                "grid `{}` would have size {n} along an axis{}",
                                grid.name,
                                env.describe_params(program, &[dim])
                            ),
                            dim.span,
                        )
                        .with_label("this size is below 1")
                        .with_help(
                            "give the parameters values that make every grid size at least 1",
                        ),
                    );
                    dims.push(1);
                } else {
                    elements = elements.saturating_mul(n as u128);
                    dims.push(n as usize);
                }
            }
            if elements > MAX_FIELD_ELEMENTS {
                errors.push(
                    Diagnostic::error(
                        format!(
                            "grid `{}` would have {elements} points, more than the {MAX_FIELD_ELEMENTS} one field may hold",
                            grid.name
                        ),
                        grid.span,
                    )
                    .with_label("this grid")
                    .with_help("use smaller grid-size parameters"),
                );
            }
            env.grid_dims.push(dims);
        }

        if let Some(iterate) = &program.iterate {
            let n = env.eval_int(&iterate.max_iters);
            if n < 0 {
                errors.push(
                    Diagnostic::error(
                        format!(
                            "the iterate would run {n} times{}",
                            env.describe_params(program, &[&iterate.max_iters])
                        ),
                        iterate.max_iters.span,
                    )
                    .with_label("this count is negative")
                    .with_help(
                        "give the parameters values that make the iteration count 0 or more",
                    ),
                );
            }
            env.max_iters = n.max(0) as u64;
            if let Some(check) = &iterate.check {
                let k = env.eval_int(&check.every);
                if k < 1 {
                    errors.push(
                        Diagnostic::error(
                            format!(
                                "the check would run every {k} iterations{}",
                                env.describe_params(program, &[&check.every])
                            ),
                            check.every.span,
                        )
                        .with_label("this interval is below 1")
                        .with_help(
                            "give the parameters values that make the check interval at least 1",
                        ),
                    );
                }
                env.every = Some(k.max(1) as u64);
            }
        }
        if errors.is_empty() {
            Ok(env)
        } else {
            Err(BindError::Located(Diagnostics::new(
                program.source.clone(),
                errors,
            )))
        }
    }

    /// Parameter values, by `ParamId`, each of its parameter's type.
    pub fn params(&self) -> &[Value] {
        &self.params
    }

    /// Constant values, by `ConstId`, each of its constant's type.
    pub fn constants(&self) -> &[Value] {
        &self.constants
    }

    /// Size per axis of each grid, outermost first, by `GridId`; every size is at
    /// least 1.
    pub fn grid_dims(&self) -> &[Vec<usize>] {
        &self.grid_dims
    }

    /// The iterate's maximum trip count (0 without an iterate).
    pub fn max_iters(&self) -> u64 {
        self.max_iters
    }

    /// Check every this many iterations (`None` without a check clause).
    pub fn every(&self) -> Option<u64> {
        self.every
    }

    /// The values as [`Bindings`] (what [`RunEnv::new`] was given, converted to
    /// each parameter's type).
    pub fn bindings(&self) -> Bindings {
        Bindings {
            params: self.params.clone(),
        }
    }

    /// Whether this environment is `program`'s: binding its parameter values to
    /// `program` gives the same grid sizes, trip count, check interval and
    /// constants of the same types. An environment built for another program
    /// would make an executor index buffers with another program's sizes.
    pub fn belongs_to(&self, program: &Program) -> bool {
        let types_match =
            |values: &[Value], types: &mut dyn Iterator<Item = crate::ir::ScalarType>| {
                values.iter().all(|v| types.next() == Some(v.ty())) && types.next().is_none()
            };
        if !types_match(&self.params, &mut program.params.iter().map(|p| p.ty))
            || !types_match(&self.constants, &mut program.constants.iter().map(|c| c.ty))
        {
            return false;
        }
        match RunEnv::new(program, &self.bindings()) {
            Ok(fresh) => {
                fresh.grid_dims == self.grid_dims
                    && fresh.max_iters == self.max_iters
                    && fresh.every == self.every
            }
            Err(_) => false,
        }
    }

    /// The value of an expression of literals, parameters and constants.
    ///
    /// Grid sizes, subset bounds, trip counts and offsets outside loops are such
    /// expressions (the front-end guarantees it); a load, local or reduction in
    /// one evaluates to zero.
    pub fn eval_uniform(&self, expr: &Expr) -> Value {
        self.eval_with(expr, &[], &[], &[])
    }

    /// [`eval_uniform`](Self::eval_uniform) converted to `i64` (C truncation).
    pub fn eval_int(&self, expr: &Expr) -> i64 {
        self.eval_uniform(expr).as_i64()
    }

    /// The value of an expression that may also use loop variables or locals
    /// (`locals`, by `LocalId`), coefficient tables, and reductions (by
    /// `ReductionId`, for the check). Missing entries and loads read as zero; a
    /// table index outside the table reads zero (the checks in
    /// [`RunEnv::new`] rule that out before a run).
    pub fn eval_with(
        &self,
        expr: &Expr,
        tables: &[Table],
        locals: &[Value],
        reductions: &[Value],
    ) -> Value {
        let leaves = RunLeaves {
            env: self,
            tables,
            locals,
            reductions,
        };
        // Every leaf has a value here, so the evaluation cannot fail.
        eval(expr, &leaves).unwrap_or_else(|_| Value::Int(0).cast(expr.ty))
    }

    /// The inclusive bounds `(lo, hi)` per axis of a subset, outermost first. An
    /// axis with `hi < lo` makes the subset empty: nothing runs on it.
    pub fn subset_box(&self, subset: &Subset) -> Vec<(i64, i64)> {
        subset
            .ranges
            .iter()
            .map(|(lo, hi)| (self.eval_int(lo), self.eval_int(hi)))
            .collect()
    }

    /// The size per axis of a field's grid, outermost first.
    pub fn field_dims(&self, program: &Program, field: FieldId) -> &[usize] {
        &self.grid_dims[program.fields[field.0].grid.0]
    }

    /// The number of elements in one time level of a field.
    pub fn field_len(&self, program: &Program, field: FieldId) -> usize {
        self.field_dims(program, field).iter().product()
    }

    /// `" for n = 10, m = 3"`: the parameters the expressions use (directly or
    /// through constants) with their values, or `""` when they use none.
    pub fn describe_params(&self, program: &Program, exprs: &[&Expr]) -> String {
        let mut used = Vec::new();
        for e in exprs {
            collect_params(program, e, &mut used);
        }
        used.sort_unstable();
        used.dedup();
        if used.is_empty() {
            return String::new();
        }
        let parts: Vec<String> = used
            .iter()
            .map(|&p| format!("{} = {}", program.params[p].name, plain(self.params[p])))
            .collect();
        format!(" for {}", parts.join(", "))
    }
}

/// The leaves of a run's uniform expressions: missing entries and loads read
/// as zero (see [`RunEnv::eval_with`]).
struct RunLeaves<'a> {
    env: &'a RunEnv,
    tables: &'a [Table],
    locals: &'a [Value],
    reductions: &'a [Value],
}

const ZERO: Value = Value::Int(0);

impl Leaves for RunLeaves<'_> {
    fn param(&self, id: ParamId) -> Option<Value> {
        Some(self.env.params.get(id.0).copied().unwrap_or(ZERO))
    }
    fn constant(&self, id: ConstId) -> Option<Value> {
        Some(self.env.constants.get(id.0).copied().unwrap_or(ZERO))
    }
    fn local(&self, id: LocalId) -> Option<Value> {
        Some(self.locals.get(id.0).copied().unwrap_or(ZERO))
    }
    fn reduction(&self, id: ReductionId) -> Option<Value> {
        Some(self.reductions.get(id.0).copied().unwrap_or(ZERO))
    }
    fn table(&self, id: TableId, index: &[i64]) -> Option<Value> {
        let table = self.tables.get(id.0);
        Some(
            table
                .and_then(|t| table_offset(t, index).map(|i| t.values[i]))
                .unwrap_or(ZERO),
        )
    }
    fn load(&self, _target: &GridRef) -> Option<Value> {
        Some(ZERO)
    }
}

/// A value as a user would write it, without C's type suffixes.
fn plain(v: Value) -> String {
    match v {
        Value::Int(x) => x.to_string(),
        Value::Long(x) => x.to_string(),
        Value::Float(x) => x.to_string(),
        Value::Double(x) => x.to_string(),
    }
}

/// The parameters an expression uses, following constants to their definitions.
fn collect_params(program: &Program, expr: &Expr, out: &mut Vec<usize>) {
    expr.visit(&mut |e| match &e.kind {
        ExprKind::Param(p) => out.push(p.0),
        ExprKind::Const(c) => {
            if let Some(constant) = program.constants.get(c.0) {
                collect_params(program, &constant.value, out);
            }
        }
        _ => {}
    });
}

/// The row-major position of `index` in a table, or `None` when outside it.
pub(crate) fn table_offset(table: &Table, index: &[i64]) -> Option<usize> {
    if index.len() != table.shape.len() {
        return None;
    }
    let mut offset = 0usize;
    for (&i, &n) in index.iter().zip(&table.shape) {
        if i < 0 || i as u64 >= n as u64 {
            return None;
        }
        offset = offset * n + i as usize;
    }
    (offset < table.values.len()).then_some(offset)
}

/// Whether a box of points (from [`RunEnv::subset_box`]) holds no point.
pub fn box_is_empty(bounds: &[(i64, i64)]) -> bool {
    bounds.iter().any(|&(lo, hi)| hi < lo)
}
