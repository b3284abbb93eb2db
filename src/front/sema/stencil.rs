//! The iterate: stencils (with point functions inlined), reductions and the check.

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::front::ast::{self, Target};
use crate::front::sema::expr::{convert, Cx, Frame, PartLocals, Place};
use crate::front::sema::fold;
use crate::front::sema::{Sema, Symbol};
use crate::ir::{
    Check, Expr, ExprKind, FieldId, GridRef, Iterate, ReduceOp, Reduction, ReductionId,
    ReductionPart, ScalarType, Stencil, StencilPart, Stmt, Subset,
};
use crate::source::Span;

impl Sema {
    pub(super) fn iterate(&mut self, it: &ast::Iterate) {
        let max_iters = self.count(&it.count, "the iterate count");
        let mut stencils = Vec::new();
        for stencil in &it.stencils {
            self.declare(&stencil.name, Symbol::Stencil);
            let mut parts = Vec::new();
            for part in &stencil.parts {
                if let Some(p) = self.stencil_part(part) {
                    parts.push(p);
                }
            }
            stencils.push(Stencil {
                name: stencil.name.name.clone(),
                parts,
                span: stencil.span,
            });
        }
        let mut reductions = Vec::new();
        for r in &it.reductions {
            if let Some(reduction) = self.reduction(r) {
                let id = ReductionId(reductions.len());
                if self.declare(&r.name, Symbol::Reduction(id)) {
                    self.reduction_types.push(reduction.ty);
                    reductions.push(reduction);
                }
            }
        }
        let check = it.check.as_ref().and_then(|c| {
            let cond = self.lower_expr(
                &c.cond,
                &Cx {
                    place: Place::Check,
                    frame: None,
                    part: None,
                },
            );
            let every = self.count(&c.every, "the check interval (`every`)");
            if let Some(Ok(v)) = every
                .as_ref()
                .map(|e| fold::fold(e, &|i| self.const_value(i)))
            {
                if fold::as_integer(v).is_some_and(|n| n < 1) {
                    self.errors.push(
                        Diagnostic::error("the check interval must be at least 1", c.every.span)
                            .with_label(format!("this is {v}"))
                            .with_help("check every 1 or more iterations"),
                    );
                }
            }
            Some(Check {
                cond: cond?,
                every: every?,
                span: c.span,
            })
        });
        let Some(max_iters) = max_iters else { return };
        if let Ok(v) = fold::fold(&max_iters, &|i| self.const_value(i)) {
            if fold::as_integer(v).is_some_and(|n| n < 0) {
                self.errors.push(
                    Diagnostic::error("the iterate count must not be negative", it.count.span)
                        .with_label(format!("this is {v}"))
                        .with_help("give the maximum number of iterations, 0 or more"),
                );
            }
        }
        self.program.iterate = Some(Iterate {
            max_iters,
            stencils,
            reductions,
            check,
            span: it.span,
        });
    }

    /// An integer expression of parameters and constants.
    fn count(&mut self, expr: &ast::Expr, what: &'static str) -> Option<Expr> {
        let lowered = self.lower_expr(expr, &Cx::fixed(what))?;
        self.require_integer(&lowered, what).then_some(lowered)
    }

    fn subset(&mut self, subset: &ast::Subset) -> Option<Subset> {
        let mut ranges = Vec::new();
        let mut ok = true;
        for (lo, hi) in &subset.ranges {
            let lo = self.count(lo, "a subset bound");
            let hi = match hi {
                Some(hi) => self.count(hi, "a subset bound"),
                None => lo.clone(),
            };
            match (lo, hi) {
                (Some(lo), Some(hi)) => ranges.push((lo, hi)),
                _ => ok = false,
            }
        }
        ok.then_some(Subset {
            ranges,
            span: subset.span,
        })
    }

    fn stencil_part(&mut self, part: &ast::StencilPart) -> Option<StencilPart> {
        let subset = self.subset(&part.subset);
        let mut frame = Frame {
            scopes: vec![HashMap::new()],
            bindings: HashMap::new(),
        };
        let mut locals = PartLocals::default();
        let mut body = Vec::new();
        match &part.stmt {
            ast::Stmt::Assign {
                target: Target::Grid(_),
                ..
            }
            | ast::Stmt::Call { .. } => {
                let mut calls = Vec::new();
                self.lower_stmts(
                    std::slice::from_ref(&part.stmt),
                    &mut frame,
                    &mut locals,
                    &mut body,
                    &mut calls,
                );
            }
            other => {
                self.errors.push(
                    Diagnostic::error(
                        "a stencil part is an assignment to griddata or a point-function call",
                        stmt_span(other),
                    )
                    .with_label("not allowed directly in a stencil")
                    .with_help(
                        "move declarations, loops and local variables into a point function and call it here: `[..] : f(a);`",
                    ),
                );
            }
        }
        let subset = subset?;
        let mut accesses = Vec::new();
        for stmt in &body {
            stmt_accesses(stmt, &mut accesses);
        }
        self.check_ranks(&subset, accesses.iter().map(|a| (a.field, a.span)));
        Some(StencilPart {
            subset,
            locals: locals.locals,
            body,
            span: part.span,
        })
    }

    /// Every griddata a part or reduction touches must have the subset's rank.
    fn check_ranks(&mut self, subset: &Subset, fields: impl Iterator<Item = (FieldId, Span)>) {
        for (field, span) in fields {
            let f = &self.program.fields[field.0];
            let rank = self.program.grids[f.grid.0].rank();
            if rank != subset.rank() {
                self.errors.push(
                    Diagnostic::error(
                        format!(
                            "the subset has {} dimension(s) but `{}` has {rank}",
                            subset.rank(),
                            f.name
                        ),
                        subset.span,
                    )
                    .with_label(format!("{}-D subset", subset.rank()))
                    .with_secondary(span, format!("`{}` is {rank}-D", f.name))
                    .with_help(format!(
                        "give the subset one `[lo:hi]` or `[x]` per dimension of the griddata ({rank})"
                    )),
                );
                return;
            }
        }
    }

    /// Lowers statements into `out`, inlining point-function calls.
    fn lower_stmts(
        &mut self,
        stmts: &[ast::Stmt],
        frame: &mut Frame,
        part: &mut PartLocals,
        out: &mut Vec<Stmt>,
        calls: &mut Vec<usize>,
    ) {
        for stmt in stmts {
            self.lower_stmt(stmt, frame, part, out, calls);
        }
    }

    fn lower_stmt(
        &mut self,
        stmt: &ast::Stmt,
        frame: &mut Frame,
        part: &mut PartLocals,
        out: &mut Vec<Stmt>,
        calls: &mut Vec<usize>,
    ) {
        match stmt {
            ast::Stmt::Local {
                ty,
                name,
                init,
                span,
            } => {
                let value = init.as_ref().and_then(|e| {
                    self.lower_expr(
                        e,
                        &Cx {
                            place: Place::Point,
                            frame: Some(frame),
                            part: Some(part),
                        },
                    )
                });
                if !self.declare_local(name, frame) {
                    return;
                }
                let id = part.add(name, *ty, false);
                if let Some(scope) = frame.scopes.last_mut() {
                    scope.insert(name.name.clone(), id);
                }
                if let Some(value) = value {
                    out.push(Stmt::Assign {
                        local: id,
                        value: convert(value, *ty),
                        span: *span,
                    });
                }
            }
            ast::Stmt::Assign {
                target,
                value,
                span,
            } => {
                let cx = Cx {
                    place: Place::Point,
                    frame: Some(frame),
                    part: Some(part),
                };
                let value = self.lower_expr(value, &cx);
                match target {
                    Target::Grid(grid) => {
                        let target = self.grid_ref(grid, &cx);
                        if let (Some(target), Some(value)) = (target, value) {
                            let ty = self.program.fields[target.field.0].ty;
                            out.push(Stmt::Store {
                                target,
                                value: convert(value, ty),
                                span: *span,
                            });
                        }
                    }
                    Target::Name(name) => {
                        let Some(local) = self.assignable_local(name, frame, part) else {
                            return;
                        };
                        if let Some(value) = value {
                            out.push(Stmt::Assign {
                                local,
                                value: convert(value, part.locals[local.0].ty),
                                span: *span,
                            });
                        }
                    }
                }
            }
            ast::Stmt::For {
                var,
                lo,
                hi,
                body,
                span,
            } => {
                let bounds = [lo, hi].map(|e| {
                    let cx = Cx {
                        place: Place::Offset("a loop bound"),
                        frame: Some(frame),
                        part: Some(part),
                    };
                    let lowered = self.offset_expr(e, &cx, "a loop bound")?;
                    match fold::fold(&lowered, &|i| self.const_value(i)) {
                        Ok(v) => fold::as_integer(v),
                        Err(err) => {
                            self.fold_error(err, "a loop bound", e.span);
                            None
                        }
                    }
                });
                let [Some(lo), Some(hi)] = bounds else { return };
                let id = part.add(var, ScalarType::Int, true);
                frame.scopes.push(HashMap::from([(var.name.clone(), id)]));
                // The body is a scope of its own, so it may shadow the loop variable's scope.
                frame.scopes.push(HashMap::new());
                let mut inner = Vec::new();
                self.lower_stmts(body, frame, part, &mut inner, calls);
                frame.scopes.pop();
                frame.scopes.pop();
                if i32::try_from(lo).is_err() || i32::try_from(hi).is_err() {
                    self.errors.push(
                        Diagnostic::error("loop bounds must fit in an `int`", *span)
                            .with_label("bound out of range")
                            .with_help("use loop bounds between -2147483648 and 2147483647"),
                    );
                    return;
                }
                out.push(Stmt::For {
                    var: id,
                    lo,
                    hi,
                    body: inner,
                    span: *span,
                });
            }
            ast::Stmt::Call { func, args, span } => {
                self.inline_call(func, args, *span, frame, part, out, calls)
            }
        }
    }

    /// Reports a name declared twice in one scope, or a local named like a parameter.
    fn declare_local(&mut self, name: &ast::Ident, frame: &Frame) -> bool {
        let in_scope = frame.scopes.last().and_then(|s| s.get(&name.name)).copied();
        if in_scope.is_some() {
            self.errors.push(
                Diagnostic::error(
                    format!("`{}` is already declared in this block", name.name),
                    name.span,
                )
                .with_label("redeclared")
                .with_help("give the variable another name, or assign the existing one"),
            );
            return false;
        }
        if frame.bindings.contains_key(&name.name) {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "`{}` is already a parameter of this point function",
                        name.name
                    ),
                    name.span,
                )
                .with_label("same name as a griddata parameter")
                .with_help("give the local variable another name"),
            );
            return false;
        }
        true
    }

    fn assignable_local(
        &mut self,
        name: &ast::Ident,
        frame: &Frame,
        part: &PartLocals,
    ) -> Option<crate::ir::LocalId> {
        let diag = if let Some(id) = frame.scopes.iter().rev().find_map(|s| s.get(&name.name)) {
            if !part.is_loop_var[id.0] {
                return Some(*id);
            }
            Diagnostic::error(
                format!("cannot assign to loop variable `{}`", name.name),
                name.span,
            )
            .with_label("loop variables are read-only")
            .with_help("declare a local variable and assign that instead")
        } else if let Some(decl) = self.scope.get(&name.name) {
            Diagnostic::error(
                format!("cannot assign to `{}`: it is {}", name.name, decl.symbol.describe()),
                name.span,
            )
            .with_label("not assignable")
            .with_help(if matches!(decl.symbol, Symbol::Field(_)) {
                format!("assign one element of griddata: `[1]{}[0]... = value;`", name.name)
            } else {
                "only local variables and griddata elements can be assigned; declare a local with `double x = ...;`".to_string()
            })
        } else if frame.bindings.contains_key(&name.name) {
            Diagnostic::error(
                format!(
                    "griddata `{}` is assigned without a time and offsets",
                    name.name
                ),
                name.span,
            )
            .with_label("griddata, not a scalar")
            .with_help(format!(
                "assign one element: `[1]{}[0]... = value;`",
                name.name
            ))
        } else {
            let mut candidates = Vec::new();
            for scope in &frame.scopes {
                candidates.extend(scope.keys().cloned());
            }
            self.unknown_name("variable", name, candidates)
        };
        self.errors.push(diag);
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn inline_call(
        &mut self,
        func: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
        frame: &Frame,
        part: &mut PartLocals,
        out: &mut Vec<Stmt>,
        calls: &mut Vec<usize>,
    ) {
        let index = match self.scope.get(&func.name).map(|d| d.symbol) {
            Some(Symbol::PointFunction(i)) => i,
            other => {
                let diag = self.not_a_point_function(func, other);
                self.errors.push(diag);
                return;
            }
        };
        let pf = self.point_functions[index].clone();
        if calls.contains(&index) {
            self.errors.push(
                Diagnostic::error(format!("point function `{}` calls itself", func.name), span)
                    .with_label("recursive call")
                    .with_secondary(pf.name.span, "defined here")
                    .with_help("point functions are inlined and cannot be recursive; write the computation out"),
            );
            return;
        }
        if args.len() != pf.params.len() {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "`{}` takes {} griddata argument(s), found {}",
                        func.name,
                        pf.params.len(),
                        args.len()
                    ),
                    span,
                )
                .with_label("wrong number of arguments")
                .with_secondary(pf.name.span, "defined here")
                .with_help(format!(
                    "pass one griddata per parameter: `{}({})`",
                    func.name,
                    pf.params
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            return;
        }
        let Some(bindings) = self.bind_arguments(func, &pf, args, frame, part) else {
            return;
        };
        let mut callee = Frame {
            scopes: vec![HashMap::new()],
            bindings,
        };
        calls.push(index);
        self.lower_stmts(&pf.body, &mut callee, part, out, calls);
        calls.pop();
    }

    /// The error for a call statement whose callee is not a point function:
    /// a math function whose value is dropped, another kind of name, or an
    /// unknown one (with the closest point function, if any).
    fn not_a_point_function(&mut self, func: &ast::Ident, other: Option<Symbol>) -> Diagnostic {
        let available = self.names_where(|s| matches!(s, Symbol::PointFunction(_)));
        let list = if available.is_empty() {
            "this program declares no point functions".to_string()
        } else {
            format!(
                "the point functions are {}",
                available
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        if crate::front::sema::expr::math_function(&func.name).is_some() {
            Diagnostic::error(
                format!("`{}` is a math function; its value must be used", func.name),
                func.span,
            )
            .with_label("result discarded")
            .with_help(format!("assign its value, e.g. `x = {}(...);`", func.name))
        } else if let Some(other) = other {
            Diagnostic::error(
                format!(
                    "`{}` is {}, not a point function",
                    func.name,
                    other.describe()
                ),
                func.span,
            )
            .with_label("cannot be called")
            .with_help(list)
        } else {
            let mut diag =
                Diagnostic::error(format!("unknown point function `{}`", func.name), func.span)
                    .with_label("not declared");
            let close =
                crate::front::suggest::closest(&func.name, available.iter().map(String::as_str));
            diag = match close {
                Some(close) => diag.with_help(format!("did you mean `{close}`? {list}")),
                None => diag.with_help(format!(
                    "declare it with `pointfunction {}(...) {{ ... }}`; {list}",
                    func.name
                )),
            };
            if let Some(later) = self.declared_anywhere.get(&func.name) {
                if later.start > func.span.start {
                    diag = self.unknown_name("point function", func, available);
                }
            }
            diag
        }
    }

    /// Binds each griddata parameter of `pf` to the caller's field its
    /// argument names; `None` (the errors reported) where an argument is not
    /// griddata.
    fn bind_arguments(
        &mut self,
        func: &ast::Ident,
        pf: &ast::PointFunction,
        args: &[ast::Expr],
        frame: &Frame,
        part: &PartLocals,
    ) -> Option<HashMap<String, FieldId>> {
        let cx = Cx {
            place: Place::Point,
            frame: Some(frame),
            part: Some(part),
        };
        let mut bindings = HashMap::new();
        let mut ok = true;
        for (param, arg) in pf.params.iter().zip(args) {
            if let ast::ExprKind::Name(name) = &arg.kind {
                let is_bound = frame.bindings.contains_key(&name.name);
                let symbol = self.scope.get(&name.name).map(|d| d.symbol);
                if let (false, Some(symbol)) = (is_bound, symbol) {
                    if !matches!(symbol, Symbol::Field(_)) {
                        self.errors.push(
                            Diagnostic::error(
                                format!("argument `{}` of `{}` must be griddata", param.name, func.name),
                                arg.span,
                            )
                            .with_label(format!("`{}` is {}", name.name, symbol.describe()))
                            .with_secondary(param.span, "griddata parameter")
                            .with_help(format!(
                                "pass griddata to point functions; use `{}` inside the function body directly, it is visible there",
                                name.name
                            )),
                        );
                        ok = false;
                        continue;
                    }
                }
            }
            let ast::ExprKind::Name(name) = &arg.kind else {
                self.errors.push(
                    Diagnostic::error(
                        format!("argument `{}` of `{}` must be griddata", param.name, func.name),
                        arg.span,
                    )
                    .with_label("not a griddata name")
                    .with_help("point functions take whole griddata: pass its name, e.g. `f(a)`, not an element or a value"),
                );
                ok = false;
                continue;
            };
            match self.field_of(name, &cx) {
                Some(field) => {
                    bindings.insert(param.name.clone(), field);
                }
                None => ok = false,
            }
        }
        ok.then_some(bindings)
    }

    fn reduction(&mut self, r: &ast::Reduction) -> Option<Reduction> {
        let op = match r.op.name.as_str() {
            "+" => Some(ReduceOp::Sum),
            "*" => Some(ReduceOp::Product),
            "max" => Some(ReduceOp::Max),
            "min" => Some(ReduceOp::Min),
            other => {
                let mut help = "use `+`, `*`, `max` or `min`".to_string();
                if let Some(close) = crate::front::suggest::closest(other, ["max", "min"]) {
                    help = format!("did you mean `{close}`? {help}");
                }
                self.errors.push(
                    Diagnostic::error(format!("unknown reduction operator `{other}`"), r.op.span)
                        .with_label("not a reduction operator")
                        .with_help(help),
                );
                None
            }
        };
        let mut parts = Vec::new();
        for (subset, value, span) in &r.parts {
            let subset = self.subset(subset);
            let value = self.lower_expr(
                value,
                &Cx {
                    place: Place::Reduction,
                    frame: None,
                    part: None,
                },
            );
            if let (Some(subset), Some(value)) = (subset, value) {
                let mut fields = Vec::new();
                value.visit(&mut |e| {
                    if let ExprKind::Load(g) = &e.kind {
                        fields.push((g.field, e.span));
                    }
                });
                self.check_ranks(&subset, fields.into_iter());
                parts.push(ReductionPart {
                    subset,
                    value,
                    span: *span,
                });
            }
        }
        let op = op?;
        if parts.len() != r.parts.len() {
            return None;
        }
        if parts.is_empty() {
            self.errors.push(
                Diagnostic::error(format!("reduction `{}` has no parts", r.name.name), r.span)
                    .with_label("empty reduction")
                    .with_help("add a part such as `[0:n-1] : [0]a[0];`"),
            );
            return None;
        }
        let ty = parts
            .iter()
            .map(|p| p.value.ty)
            .reduce(ScalarType::common)
            .unwrap_or(ScalarType::Double);
        for p in &mut parts {
            let value = std::mem::replace(&mut p.value, Expr::literal(crate::ir::Value::Int(0)));
            p.value = convert(value, ty);
        }
        Some(Reduction {
            name: r.name.name.clone(),
            op,
            ty,
            parts,
            span: r.span,
        })
    }
}

fn stmt_span(stmt: &ast::Stmt) -> Span {
    match stmt {
        ast::Stmt::Local { span, .. }
        | ast::Stmt::Assign { span, .. }
        | ast::Stmt::For { span, .. }
        | ast::Stmt::Call { span, .. } => *span,
    }
}

/// One griddata access in lowered statements.
pub(super) struct Access<'a> {
    pub field: FieldId,
    pub reference: &'a GridRef,
    pub is_write: bool,
    pub span: Span,
}

/// Collects every load and store in `stmt` (in source order).
pub(super) fn stmt_accesses<'a>(stmt: &'a Stmt, out: &mut Vec<Access<'a>>) {
    match stmt {
        Stmt::Assign { value, .. } => expr_loads(value, out),
        Stmt::Store {
            target,
            value,
            span,
        } => {
            expr_loads(value, out);
            out.push(Access {
                field: target.field,
                reference: target,
                is_write: true,
                span: *span,
            });
        }
        Stmt::For { body, .. } => {
            for s in body {
                stmt_accesses(s, out);
            }
        }
    }
}

fn expr_loads<'a>(expr: &'a Expr, out: &mut Vec<Access<'a>>) {
    match &expr.kind {
        ExprKind::Load(g) => out.push(Access {
            field: g.field,
            reference: g,
            is_write: false,
            span: expr.span,
        }),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => expr_loads(a, out),
        ExprKind::Binary(_, a, b) => {
            expr_loads(a, out);
            expr_loads(b, out);
        }
        ExprKind::Select {
            cond,
            then,
            otherwise,
        } => {
            expr_loads(cond, out);
            expr_loads(then, out);
            expr_loads(otherwise, out);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| expr_loads(a, out)),
        ExprKind::Table { index, .. } => index.iter().for_each(|a| expr_loads(a, out)),
        ExprKind::Literal(_)
        | ExprKind::Param(_)
        | ExprKind::Const(_)
        | ExprKind::Local(_)
        | ExprKind::Reduction(_) => {}
    }
}
