//! Program-scope declarations: parameters, constants, tables, grids, griddata
//! and point functions.

use std::collections::HashMap;
use std::rc::Rc;

use crate::diag::Diagnostic;
use crate::front::ast::{self, Initializer};
use crate::front::sema::expr::{convert, Cx};
use crate::front::sema::fold;
use crate::front::sema::{Sema, Symbol};
use crate::ir::{
    BoundaryMode, ConstId, Constant, Expr, Field, FieldId, Grid, GridId, Param, ParamId,
    ScalarType, Table, TableId, Value,
};
use crate::source::Span;

/// Tables are read-only and folded into generated code; keep them small.
const MAX_TABLE_ELEMENTS: usize = 1 << 16;

impl Sema {
    pub(super) fn declaration(&mut self, item: &ast::Item) {
        match item {
            ast::Item::Param { ty, name, span } => {
                let id = ParamId(self.program.params.len());
                if self.declare(name, Symbol::Param(id)) {
                    self.program.params.push(Param {
                        name: name.name.clone(),
                        ty: *ty,
                        span: *span,
                    });
                }
            }
            ast::Item::Constant {
                ty,
                name,
                value,
                span,
            } => self.constant(*ty, name, value, *span),
            ast::Item::Table {
                ty,
                name,
                dims,
                init,
                span,
            } => self.table(*ty, name, dims, init, *span),
            ast::Item::Grid { name, dims, span } => self.grid(name, dims, *span),
            ast::Item::Griddata {
                ty,
                name,
                grid,
                at,
                boundary,
                span,
            } => self.griddata(*ty, name, grid, at, boundary.as_ref(), *span),
            ast::Item::PointFunction(pf) => self.point_function(pf),
            ast::Item::Iterate(_) => {}
        }
    }

    fn constant(&mut self, ty: ScalarType, name: &ast::Ident, value: &ast::Expr, span: Span) {
        // Lower the value before declaring the name: a constant cannot use itself.
        let value = self.lower_expr(value, &Cx::fixed("a constant's value"));
        let id = ConstId(self.program.constants.len());
        if !self.declare(name, Symbol::Const(id)) {
            return;
        }
        let value = match value {
            Some(v) => convert(v, ty),
            None => Expr::literal(Value::Int(0).cast(ty)),
        };
        let folded = match fold::fold(&value, &|i| self.const_value(i)) {
            Ok(v) => Some(v),
            Err(err @ fold::FoldError::DivisionByZero(_)) => {
                self.fold_error(err, "the constant's value", value.span);
                None
            }
            Err(fold::FoldError::NotConstant(_)) => None,
        };
        self.const_values.push(folded);
        self.program.constants.push(Constant {
            name: name.name.clone(),
            ty,
            value,
            span,
        });
    }

    /// Folds an integer expression that must be known at compile time.
    pub(super) fn compile_time_integer(&mut self, expr: &Expr, what: &str) -> Option<i64> {
        if !self.require_integer(expr, what) {
            return None;
        }
        match fold::fold(expr, &|i| self.const_value(i)) {
            Ok(v) => fold::as_integer(v),
            Err(err) => {
                self.fold_error(err, what, expr.span);
                None
            }
        }
    }

    fn table(
        &mut self,
        ty: ScalarType,
        name: &ast::Ident,
        dims: &[ast::Expr],
        init: &Initializer,
        span: Span,
    ) {
        if dims.is_empty() || dims.len() > 3 {
            self.errors.push(
                Diagnostic::error("a coefficient table has 1 to 3 dimensions", name.span)
                    .with_label(format!("{} dimensions", dims.len()))
                    .with_help("declare the table with one to three extents, e.g. `K[3][3]`"),
            );
            return;
        }
        let mut shape = Vec::new();
        for dim in dims {
            let Some(expr) = self.lower_expr(dim, &Cx::fixed("a table extent")) else {
                return;
            };
            let extent = self.compile_time_integer(&expr, "a table extent");
            match extent {
                Some(n) if n >= 1 => shape.push(n as usize),
                Some(n) => {
                    self.errors.push(
                        Diagnostic::error("a table extent must be at least 1", dim.span)
                            .with_label(format!("this is {n}"))
                            .with_help("give every dimension a positive size"),
                    );
                    return;
                }
                None => return,
            }
        }
        let count = shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
        if count.is_none_or(|c| c > MAX_TABLE_ELEMENTS) {
            self.errors.push(
                Diagnostic::error("the coefficient table is too large", span)
                    .with_label("too many elements")
                    .with_help(format!(
                        "tables hold at most {MAX_TABLE_ELEMENTS} elements; use griddata for larger data"
                    )),
            );
            return;
        }
        let mut values = Vec::new();
        if !self.table_values(name, ty, &shape, 0, init, &mut values) {
            return;
        }
        let id = TableId(self.program.tables.len());
        if self.declare(name, Symbol::Table(id)) {
            self.program.tables.push(Table {
                name: name.name.clone(),
                ty,
                shape,
                values,
                span,
            });
        }
    }

    /// Checks `init` against `shape[depth..]` and appends its values, converted.
    fn table_values(
        &mut self,
        name: &ast::Ident,
        ty: ScalarType,
        shape: &[usize],
        depth: usize,
        init: &Initializer,
        out: &mut Vec<Value>,
    ) -> bool {
        let example = match shape.len() {
            1 => "`{1, 2, 1}`",
            2 => "`{{1, 2}, {3, 4}}`",
            _ => "`{{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}`",
        };
        match init {
            Initializer::List(items, list_span) => {
                if depth == shape.len() {
                    self.errors.push(
                        Diagnostic::error(
                            format!("table `{}` has too many levels of braces", name.name),
                            *list_span,
                        )
                        .with_label("a single value is expected here")
                        .with_help(format!(
                            "`{}` has {} dimension(s); nest the braces {} deep, as in {example}",
                            name.name,
                            shape.len(),
                            shape.len()
                        )),
                    );
                    return false;
                }
                if items.len() != shape[depth] {
                    let what = if depth == 0 { "the table" } else { "this row" };
                    self.errors.push(
                        Diagnostic::error(
                            format!(
                                "table `{}` does not match its shape: {what} has {} value(s), the declared extent is {}",
                                name.name,
                                items.len(),
                                shape[depth]
                            ),
                            *list_span,
                        )
                        .with_label(format!("expected {} here", shape[depth]))
                        .with_secondary(name.span, format!("declared with shape {}", shape_text(shape)))
                        .with_help(format!(
                            "write exactly {} value(s) in this list, or change the declared extent",
                            shape[depth]
                        )),
                    );
                    return false;
                }
                items
                    .iter()
                    .all(|item| self.table_values(name, ty, shape, depth + 1, item, out))
            }
            Initializer::Value(expr) => {
                if depth != shape.len() {
                    self.errors.push(
                        Diagnostic::error(
                            format!("table `{}` needs a braced list here", name.name),
                            expr.span,
                        )
                        .with_label(format!("expected a list of {} value(s)", shape[depth]))
                        .with_help(format!(
                            "`{}` has shape {}; write its values as nested lists, as in {example}",
                            name.name,
                            shape_text(shape)
                        )),
                    );
                    return false;
                }
                let Some(lowered) = self.lower_expr(expr, &Cx::fixed("a table value")) else {
                    return false;
                };
                match fold::fold(&lowered, &|i| self.const_value(i)) {
                    Ok(v) => {
                        out.push(v.cast(ty));
                        true
                    }
                    Err(_) => {
                        self.errors.push(
                            Diagnostic::error("a table value must be a compile-time constant", expr.span)
                                .with_label("not known at compile time")
                                .with_help("write a literal, or use constants that do not depend on parameters"),
                        );
                        false
                    }
                }
            }
        }
    }

    fn grid(&mut self, name: &ast::Ident, dims: &[ast::Expr], span: Span) {
        if dims.is_empty() || dims.len() > 3 {
            self.errors.push(
                Diagnostic::error("a grid has 1 to 3 dimensions", name.span)
                    .with_label(format!("declared with {} dimensions", dims.len()))
                    .with_help("declare one to three sizes, e.g. `grid g[ny][nx];`"),
            );
            return;
        }
        let mut sizes = Vec::new();
        for dim in dims {
            if let Some(size) = self.lower_expr(dim, &Cx::fixed("a grid size")) {
                self.require_integer(&size, "a grid size");
                if let Ok(v) = fold::fold(&size, &|i| self.const_value(i)) {
                    if fold::as_integer(v).is_some_and(|n| n < 1) {
                        self.errors.push(
                            Diagnostic::error("a grid size must be at least 1", dim.span)
                                .with_label(format!("this is {v}"))
                                .with_help("give every dimension a positive size"),
                        );
                    }
                }
                sizes.push(size);
            }
        }
        let id = GridId(self.program.grids.len());
        if self.declare(name, Symbol::Grid(id)) {
            self.program.grids.push(Grid {
                name: name.name.clone(),
                dims: sizes,
                span,
            });
        }
    }

    fn griddata(
        &mut self,
        ty: ScalarType,
        name: &ast::Ident,
        grid: &ast::Ident,
        at: &[(i64, Span)],
        boundary: Option<&ast::Ident>,
        span: Span,
    ) {
        let grid_id = match self.scope.get(&grid.name).map(|d| d.symbol) {
            Some(Symbol::Grid(id)) => Some(id),
            Some(other) => {
                self.errors.push(
                    Diagnostic::error(format!("`{}` is not a grid", grid.name), grid.span)
                        .with_label(format!("this is {}", other.describe()))
                        .with_help("name a grid declared with `grid g[...];`"),
                );
                None
            }
            None => {
                let grids = self.names_where(|s| matches!(s, Symbol::Grid(_)));
                let diag = self.unknown_name("grid", grid, grids);
                self.errors.push(diag);
                None
            }
        };
        let mut ok = grid_id.is_some();
        for (i, window) in at.windows(2).enumerate() {
            if window[1].0 != window[0].0 + 1 {
                let listed: Vec<String> = at.iter().map(|(t, _)| t.to_string()).collect();
                self.errors.push(
                    Diagnostic::error("time offsets must be consecutive integers", at[i + 1].1)
                        .with_label(format!("expected {} here", window[0].0 + 1))
                        .with_help(format!(
                            "list increasing consecutive offsets, e.g. `at {}` instead of `at {}`",
                            consecutive_example(at[0].0, at.len()),
                            listed.join(",")
                        )),
                );
                ok = false;
                break;
            }
        }
        for (t, t_span) in at {
            if i32::try_from(*t).is_err() || t.abs() > 1000 {
                self.errors.push(
                    Diagnostic::error("time offset is out of range", *t_span)
                        .with_label("too far from the current step")
                        .with_help("use small time offsets such as 0 and 1"),
                );
                ok = false;
            }
        }
        let mode = match boundary {
            None => BoundaryMode::None,
            Some(word) => match word.name.as_str() {
                "none" => BoundaryMode::None,
                "clamp" => BoundaryMode::Clamp,
                "mirror" => BoundaryMode::Mirror,
                "periodic" => BoundaryMode::Periodic,
                "zero" => BoundaryMode::Zero,
                other => {
                    let modes = ["none", "clamp", "mirror", "periodic", "zero"];
                    let mut help =
                        "write one of `none`, `clamp`, `mirror`, `periodic`, `zero`".to_string();
                    if let Some(close) = crate::front::suggest::closest(other, modes) {
                        help = format!("did you mean `{close}`? {help}");
                    }
                    self.errors.push(
                        Diagnostic::error(format!("unknown boundary mode `{other}`"), word.span)
                            .with_label("not a boundary mode")
                            .with_help(help),
                    );
                    ok = false;
                    BoundaryMode::None
                }
            },
        };
        let id = FieldId(self.program.fields.len());
        if !self.declare(name, Symbol::Field(id)) || !ok {
            return;
        }
        let (Some(grid), Some(first), Some(last)) = (grid_id, at.first(), at.last()) else {
            return;
        };
        self.program.fields.push(Field {
            name: name.name.clone(),
            ty,
            grid,
            time_lo: first.0 as i32,
            time_hi: last.0 as i32,
            boundary: mode,
            span,
        });
    }

    fn point_function(&mut self, pf: &ast::PointFunction) {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        for param in &pf.params {
            if let Some(first) = seen.insert(&param.name, param.span) {
                self.errors.push(
                    Diagnostic::error(
                        format!("parameter `{}` is listed twice", param.name),
                        param.span,
                    )
                    .with_label("repeated parameter")
                    .with_secondary(first, "first listed here")
                    .with_help("give each griddata parameter its own name"),
                );
            }
        }
        let index = self.point_functions.len();
        if self.declare(&pf.name, Symbol::PointFunction(index)) {
            self.point_functions.push(Rc::new(pf.clone()));
        }
    }
}

fn shape_text(shape: &[usize]) -> String {
    shape.iter().map(|n| format!("[{n}]")).collect()
}

fn consecutive_example(first: i64, len: usize) -> String {
    (0..len as i64)
        .map(|i| (first + i).to_string())
        .collect::<Vec<_>>()
        .join(",")
}
