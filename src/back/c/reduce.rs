//! Reductions in C: `max`/`min` with OpenMP reduction clauses (exact in any order;
//! on floats through [`Helper::Extremum`], declared as an OpenMP reduction, which
//! orders -0.0 below +0.0 so that the sign of a zero result is order-free too),
//! `+`/`*` with one partial result per outermost row, combined in row order after
//! the parallel loop, so that the result does not depend on the thread count and
//! matches the interpreter bit for bit.

use std::collections::BTreeSet;

use crate::back::c::boundary;
use crate::back::c::expr::Scope;
use crate::back::c::loops::Nest;
use crate::back::c::names;
use crate::back::c::uses::Uses;
use crate::back::c::writer::Writer;
use crate::ir::{ReduceOp, Reduction};
use crate::kir::Helper;

impl Writer<'_> {
    /// `static int <prog>_<reduction>(..., T *result)`: evaluates the reduction over
    /// all its parts; returns 0, or 3 when the row partials cannot be allocated.
    pub(super) fn reduction_function(&mut self, index: usize, reduction: &Reduction) {
        let program = self.program;
        let n = std::rc::Rc::clone(&self.names);
        let [value, row, rows, r, partials, point, result] =
            ["value", "row", "rows", "r", "partials", "point", "result"].map(|role| n.temp(role));
        let [i0, lo0, hi0] = ["i", "lo", "hi"].map(|role| n.axis_temp(role, 0));
        let uses = Uses::of_reduction(program, reduction);
        let ty = names::c_type(reduction.ty);
        let (line, _) = program.source.line_col(reduction.span.start as usize);
        self.line(&format!(
            "/* reduction {} {} (line {line}) */",
            reduction.name,
            reduction.op.symbol()
        ));
        let signature = self.signature(&uses);
        let signature = if signature == "void" {
            String::new()
        } else {
            format!("{signature}, ")
        };
        let head = format!("static int {}", n.reduce_function(index));
        self.function_head(&head, &format!("{signature}{ty} *{result}"));
        self.open("{");
        self.sizes_read.clear();
        self.strides(&uses);
        let identity = self.literal(reduction.op.identity(reduction.ty));
        self.line(&format!("{ty} {value} = {identity};"));
        for part in &reduction.parts {
            self.source_comment(part.span);
            let reach = boundary::reach_of_expr(program, &part.value);
            let mut grids = BTreeSet::new();
            Uses::grids_in_expr(program, &part.value, &mut grids);
            let extremum = Helper::for_reduction(reduction.op, reduction.ty);
            if let Some(helper) = extremum {
                self.helpers.insert(helper);
            }
            let combine = |acc: &str, x: &str| match (reduction.op, extremum) {
                (_, Some(helper)) => format!("{acc} = {}({acc}, {x});", helper.name()),
                (ReduceOp::Sum, _) => format!("{acc} = {acc} + {x};"),
                (ReduceOp::Product, _) => format!("{acc} = {acc} * {x};"),
                (ReduceOp::Max, _) => format!("if ({x} > {acc}) {acc} = {x};"),
                (ReduceOp::Min, _) => format!("if ({x} < {acc}) {acc} = {x};"),
            };
            let omp_operator = match (reduction.op, extremum) {
                (_, Some(helper)) => helper.name(),
                (ReduceOp::Max, _) => "max".into(),
                _ => "min".into(),
            };
            let nest = match reduction.op {
                ReduceOp::Max | ReduceOp::Min => Nest {
                    subset: &part.subset,
                    reach: &reach,
                    // A reduction's points lie on no grid it writes.
                    point_grid: None,
                    grids: &grids,
                    omp: self.omp_parallel(&format!(
                        " for schedule(static) reduction({omp_operator}: {value})"
                    )),
                    row_start: Vec::new(),
                    row_end: Vec::new(),
                    before: Vec::new(),
                    after: Vec::new(),
                    clip: Vec::new(),
                },
                ReduceOp::Sum | ReduceOp::Product if part.subset.rank() == 1 => Nest {
                    // In 1-D the interpreter's partials are runs of 256 points;
                    // a sequential loop folds them the same way.
                    subset: &part.subset,
                    reach: &reach,
                    // A reduction's points lie on no grid it writes.
                    point_grid: None,
                    grids: &grids,
                    omp: "/* 1-D: partials of 256 points folded in order, as the interpreter does */".into(),
                    row_start: Vec::new(),
                    row_end: Vec::new(),
                    before: vec![format!("{ty} {row} = {identity};")],
                    after: Vec::new(),
                    clip: Vec::new(),
                },
                ReduceOp::Sum | ReduceOp::Product => Nest {
                    subset: &part.subset,
                    reach: &reach,
                    // A reduction's points lie on no grid it writes.
                    point_grid: None,
                    grids: &grids,
                    omp: self.omp_parallel(" for schedule(static)"),
                    row_start: vec![format!("{ty} {row} = {identity};")],
                    row_end: vec![format!("{partials}[{i0} - {lo0}] = {row};")],
                    before: vec![
                        format!("const long {rows} = {hi0} >= {lo0} ? {hi0} - {lo0} + 1 : 0;"),
                        format!("{ty} *{partials} = ({ty} *)malloc((size_t)({rows} > 0 ? {rows} : 1) * sizeof({ty}));"),
                        format!("if ({partials} == NULL) return 3;"),
                    ],
                    after: vec![
                        "/* combine the rows in order: the same sum for any thread count */".into(),
                        format!(
                            "for (long {r} = 0; {r} < {rows}; {r}++) {}",
                            combine(&value, &format!("{partials}[{r}]"))
                        ),
                        format!("free({partials});"),
                    ],
                    clip: Vec::new(),
                },
            };
            let accumulator = match reduction.op {
                ReduceOp::Max | ReduceOp::Min => &value,
                ReduceOp::Sum | ReduceOp::Product => &row,
            };
            let runs_of_256 = matches!(reduction.op, ReduceOp::Sum | ReduceOp::Product)
                && part.subset.rank() == 1;
            self.nest(&nest, &mut |w, access| {
                let x = w.expr(
                    &part.value,
                    Scope {
                        access,
                        locals: &[],
                    },
                );
                w.line(&format!("const {ty} {point} = {x};"));
                w.line(&combine(accumulator, &point));
                if runs_of_256 {
                    w.open(&format!(
                        "if (({i0} - {lo0}) % 256 == 255 || {i0} == {hi0}) {{"
                    ));
                    w.line(&combine(&value, &row));
                    w.line(&format!("{row} = {identity};"));
                    w.close("}");
                }
            });
        }
        self.line(&format!("*{result} = {value};"));
        self.mark_unused_sizes(&uses);
        self.line("return 0;");
        self.close("}");
    }
}
