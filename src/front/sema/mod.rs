//! Semantic analysis: the syntax tree to a validated, typed [`Program`].
//!
//! It resolves names (one program scope; point-function parameters and locals
//! scoped to their function, shadowing program names), computes types and makes
//! C's conversions explicit, inlines point-function calls into the stencil parts
//! that make them, folds what must be known at compile time (loop bounds, table
//! shapes and values) and rejects programs whose meaning would be undefined.
//! It keeps going after an error so that one run reports as much as it can.

mod decl;
mod expr;
pub mod fold;
mod hazard;
mod stencil;

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use crate::diag::Diagnostic;
use crate::front::ast::{self, Module};
use crate::front::suggest;
use crate::ir::{
    ConstId, FieldId, GridId, ParamId, Program, ReductionId, ScalarType, ScheduleHints, TableId,
    Value,
};
use crate::source::{SourceFile, Span};

/// What a program-scope name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Symbol {
    Param(ParamId),
    Const(ConstId),
    Grid(GridId),
    Field(FieldId),
    Table(TableId),
    PointFunction(usize),
    Stencil,
    Reduction(ReductionId),
}

impl Symbol {
    /// "a parameter", "a grid", … for messages.
    fn describe(self) -> &'static str {
        match self {
            Symbol::Param(_) => "a parameter",
            Symbol::Const(_) => "a constant",
            Symbol::Grid(_) => "a grid",
            Symbol::Field(_) => "griddata",
            Symbol::Table(_) => "a coefficient table",
            Symbol::PointFunction(_) => "a point function",
            Symbol::Stencil => "a stencil",
            Symbol::Reduction(_) => "a reduction",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Decl {
    symbol: Symbol,
    span: Span,
}

/// Checks `module` and builds its program. `name` becomes [`Program::name`].
pub fn analyze(
    module: &Module,
    source: Arc<SourceFile>,
    name: String,
    hints: ScheduleHints,
) -> Result<Program, Vec<Diagnostic>> {
    let mut sema = Sema::new(source, name, hints);
    sema.collect_declared_names(module);
    let mut seen_iterate: Option<Span> = None;
    for item in &module.items {
        match item {
            ast::Item::Iterate(iterate) => {
                if let Some(first) = seen_iterate {
                    sema.errors.push(
                        Diagnostic::error("a program has only one iterate", iterate.span)
                            .with_label("second iterate")
                            .with_secondary(first, "first iterate here")
                            .with_help("put all stencils and reductions into the first iterate"),
                    );
                    continue;
                }
                seen_iterate = Some(iterate.span);
                sema.iterate(iterate);
            }
            other => sema.declaration(other),
        }
    }
    if sema.errors.is_empty() {
        sema.check_hazards();
    }
    sema.finish()
}

struct Sema {
    program: Program,
    scope: HashMap<String, Decl>,
    /// Every name declared anywhere in the module, for "declared later" advice.
    declared_anywhere: HashMap<String, Span>,
    /// Reduction names, which only the check may use.
    reduction_names: HashMap<String, Span>,
    point_functions: Vec<Rc<ast::PointFunction>>,
    /// Values of constants that do not depend on parameters.
    const_values: Vec<Option<Value>>,
    /// Types of the reductions lowered so far (for the check).
    reduction_types: Vec<ScalarType>,
    errors: Vec<Diagnostic>,
}

impl Sema {
    fn new(source: Arc<SourceFile>, name: String, hints: ScheduleHints) -> Sema {
        Sema {
            program: Program {
                source,
                name,
                params: Vec::new(),
                constants: Vec::new(),
                grids: Vec::new(),
                fields: Vec::new(),
                tables: Vec::new(),
                iterate: None,
                hints,
            },
            scope: HashMap::new(),
            declared_anywhere: HashMap::new(),
            reduction_names: HashMap::new(),
            point_functions: Vec::new(),
            const_values: Vec::new(),
            reduction_types: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn finish(mut self) -> Result<Program, Vec<Diagnostic>> {
        if self.errors.is_empty() {
            crate::ir::verify::debug_check(&self.program).map_err(|d| vec![d])?;
            return Ok(self.program);
        }
        // Inlining checks a point function once per call; report each problem once.
        let mut seen = HashSet::new();
        self.errors
            .retain(|d| seen.insert((d.span, d.message.clone())));
        self.errors.sort_by_key(|d| (d.span.start, d.span.end));
        Err(self.errors)
    }

    fn collect_declared_names(&mut self, module: &Module) {
        for item in &module.items {
            let mut note = |name: &ast::Ident| {
                self.declared_anywhere
                    .entry(name.name.clone())
                    .or_insert(name.span);
            };
            match item {
                ast::Item::Param { name, .. }
                | ast::Item::Constant { name, .. }
                | ast::Item::Table { name, .. }
                | ast::Item::Grid { name, .. }
                | ast::Item::Griddata { name, .. } => note(name),
                ast::Item::PointFunction(pf) => note(&pf.name),
                ast::Item::Iterate(it) => {
                    for r in &it.reductions {
                        self.reduction_names
                            .entry(r.name.name.clone())
                            .or_insert(r.name.span);
                    }
                }
            }
        }
    }

    /// Adds a program-scope name, or reports a duplicate.
    fn declare(&mut self, name: &ast::Ident, symbol: Symbol) -> bool {
        if let Some(previous) = self.scope.get(&name.name) {
            self.errors.push(
                Diagnostic::error(format!("`{}` is declared twice", name.name), name.span)
                    .with_label(format!("redeclares `{}`", name.name))
                    .with_secondary(
                        previous.span,
                        format!("first declared here as {}", previous.symbol.describe()),
                    )
                    .with_help("give one of them another name; program-scope names must be unique"),
            );
            return false;
        }
        self.scope.insert(
            name.name.clone(),
            Decl {
                symbol,
                span: name.span,
            },
        );
        true
    }

    fn line_of(&self, span: Span) -> usize {
        self.program.source.line_col(span.start as usize).0
    }

    /// "unknown name" with a suggestion among `candidates`, or a note that the
    /// name is declared only later.
    fn unknown_name(&self, what: &str, name: &ast::Ident, candidates: Vec<String>) -> Diagnostic {
        let mut diag = Diagnostic::error(format!("unknown {what} `{}`", name.name), name.span)
            .with_label("not declared");
        if let Some(later) = self.declared_anywhere.get(&name.name) {
            if later.start > name.span.start {
                return diag
                    .with_label("used before its declaration")
                    .with_secondary(*later, "declared here")
                    .with_help(format!(
                        "move the declaration of `{}` (line {}) above this use; names must be declared before they are used",
                        name.name,
                        self.line_of(*later)
                    ));
            }
        }
        let help = match suggest::closest(&name.name, candidates.iter().map(String::as_str)) {
            Some(close) => format!("did you mean `{close}`?"),
            None if candidates.is_empty() => format!("declare `{}` before using it", name.name),
            None => {
                let mut list = candidates.clone();
                list.sort();
                list.truncate(12);
                format!(
                    "declare `{}` before using it; names usable here: {}",
                    name.name,
                    list.iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        };
        diag = diag.with_help(help);
        diag
    }

    /// Program-scope names whose symbols satisfy `keep`.
    fn names_where(&self, keep: impl Fn(Symbol) -> bool) -> Vec<String> {
        let mut names: Vec<String> = self
            .scope
            .iter()
            .filter(|(_, d)| keep(d.symbol))
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        names
    }

    fn const_value(&self, id: usize) -> Option<Value> {
        self.const_values.get(id).copied().flatten()
    }
}
