//! The checks generated C makes before computing anything, from the actual
//! parameter values: every grid size at least 1 and small enough that the
//! `long` point indices cannot wrap (status 5), and every access that the
//! affine analysis could not prove inside its grid (status 4, see
//! [`run_time_bounds`]). A failed check prints one line on `stderr` and returns
//! its status before any field element is written.

use crate::analysis::access::PartId;
use crate::analysis::affine::{Affine, Var};
use crate::analysis::bounds::{run_time_bounds, RunTimeBound, Side};
use crate::back::c::expr::{Access, Scope};
use crate::back::c::names::{self, CNames};
use crate::back::c::writer::Writer;
use crate::ir::GridId;

/// Status of a run whose grid size is below 1, or too large for `long` indices.
pub const STATUS_GRID_SIZE: i32 = 5;
/// Status of a run in which an access would leave its grid.
pub const STATUS_OUT_OF_BOUNDS: i32 = 4;

/// `text` as the contents of a C string literal used as a `printf` format.
fn c_format(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '%' => out.push_str("%%"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

impl Writer<'_> {
    /// Per grid, `if (size < 1 || the byte count passes LONG_MAX) { message; return 5; }`
    /// (the grid sizes must be declared). The products are tested by division,
    /// innermost axis first, so that the test itself cannot overflow.
    pub(super) fn grid_size_checks(&mut self) {
        let p = self.program;
        if p.grids.is_empty() {
            return;
        }
        self.line("/* Every grid size at least 1, and every field's bytes within LONG_MAX so that");
        self.line(&format!(
            "   the long point indices cannot wrap; else status {STATUS_GRID_SIZE}. */"
        ));
        for (g, grid) in p.grids.iter().enumerate() {
            let id = GridId(g);
            let sizes: Vec<String> = (0..grid.rank())
                .map(|a| self.names.grid_size(id, a))
                .collect();
            let element = p
                .fields
                .iter()
                .filter(|f| f.grid == id)
                .map(|f| format!("sizeof({})", names::c_type(f.ty)))
                .max()
                .unwrap_or_else(|| "1".to_string());
            let limit = format!("(LONG_MAX / (long){element})");
            let mut tests: Vec<String> = sizes.iter().map(|n| format!("{n} < 1")).collect();
            for axis in (0..sizes.len()).rev() {
                let inner = &sizes[axis + 1..];
                if inner.is_empty() {
                    tests.push(format!("{} > {limit}", sizes[axis]));
                } else {
                    let inner = match inner {
                        [one] => one.clone(),
                        _ => format!("({})", inner.join(" * ")),
                    };
                    tests.push(format!("{} > {limit} / {inner}", sizes[axis]));
                }
            }
            let shown: Vec<String> = sizes.iter().map(|_| "%ld".to_string()).collect();
            self.line(&format!("if ({}", tests[..sizes.len()].join(" || ")));
            let last = tests.len() - 1;
            for (i, test) in tests[sizes.len()..].iter().enumerate() {
                let end = if sizes.len() + i == last { ") {" } else { "" };
                self.line(&format!("        || {test}{end}"));
            }
            self.code.indent += 1;
            self.line(&format!(
                "fprintf(stderr, \"stencilc: {}: grid `{}` of size {} is empty or too large \
                 to index with long; give every size at least 1 and a smaller grid\\n\", {});",
                c_format(&p.name),
                c_format(&grid.name),
                shown.join(" x "),
                sizes.join(", ")
            ));
            self.line(&format!("return {STATUS_GRID_SIZE};"));
            self.close("}");
        }
    }

    /// One block per access end that may leave its grid for some parameter
    /// values: if the part runs (its subset is not empty) and the point that
    /// reaches furthest lands outside, print which access and where, return 4.
    pub(super) fn access_bounds_checks(&mut self) {
        let p = self.program;
        let checks = run_time_bounds(p);
        if checks.is_empty() {
            return;
        }
        self.line(
            "/* Accesses that may leave their grid for some parameter values, checked before",
        );
        self.line(&format!(
            "   computing; status {STATUS_OUT_OF_BOUNDS} if one would. */"
        ));
        for check in &checks {
            self.access_bounds_check(check);
        }
    }

    fn access_bounds_check(&mut self, check: &RunTimeBound<'_>) {
        let p = self.program;
        let uniform = Scope {
            access: Access::Interior,
            locals: &[],
        };
        let mut runs: Vec<String> = Vec::new();
        for &axis in &check.may_be_empty {
            let (lo, hi) = &check.subset.ranges[axis];
            let lo = self.expr(lo, uniform);
            let hi = self.expr(hi, uniform);
            runs.push(format!("{lo} <= {hi}"));
        }

        let (lo, hi) = &check.subset.ranges[check.axis];
        let bound = match check.side {
            Side::Start => self.expr(lo, uniform),
            Side::End => self.expr(hi, uniform),
        };
        if runs.is_empty() {
            self.open("{");
        } else {
            // The part runs only when its subset is not empty.
            self.open(&format!("if ({}) {{", runs.join(" && ")));
        }
        let mut opened = 0;
        let offset = match &check.extreme {
            Some(form) => affine_text(&self.names, form),
            None => {
                let locals = self.check_locals(check);
                for r in &check.loops {
                    let name = &locals[r.var.0];
                    self.open(&format!(
                        "for (int {name} = {}; {name} <= {}; {name}++) {{",
                        r.lo, r.hi
                    ));
                    opened += 1;
                }
                let scope = Scope {
                    access: Access::Interior,
                    locals: &locals,
                };
                format!("(long){}", self.expr(check.offset, scope))
            }
        };
        let size = self.names.grid_size(check.grid, check.axis);
        let reach = self.names.temp("reach");
        self.line(&format!("const long {reach} = (long){bound} + {offset};"));
        let (fails, shown, values) = match check.side {
            Side::Start => (format!("{reach} < 0"), "index %ld", reach.clone()),
            Side::End => (
                format!("{reach} > {size} - 1"),
                "index %ld; the last is %ld",
                format!("{reach}, {size} - 1"),
            ),
        };
        self.open(&format!("if ({fails}) {{"));
        self.line(&format!(
            "fprintf(stderr, \"stencilc: {}: {} ({shown}) for these parameter values; narrow the \
             part's subset, or change the offset or the sizes\\n\", {values});",
            c_format(&p.name),
            c_format(&check.what),
        ));
        self.line(&format!("return {STATUS_OUT_OF_BOUNDS};"));
        self.close("}");
        for _ in 0..opened {
            self.close("}");
        }
        self.close("}");
    }

    /// C names for the locals of a check's part (loop variables of a non-affine
    /// offset), kept apart from every other name of the run function.
    fn check_locals(&self, check: &RunTimeBound<'_>) -> Vec<String> {
        let p = self.program;
        match (check.part, &p.iterate) {
            (PartId::Stencil { stencil, part }, Some(iterate)) => self
                .names
                .check_locals(&iterate.stencils[stencil].parts[part]),
            _ => Vec::new(),
        }
    }
}

/// `(2 + 1 * (long)n)`: an affine form of parameters as a `long` C expression.
fn affine_text(names: &CNames, form: &Affine) -> String {
    let mut terms: Vec<String> = Vec::new();
    for (var, c) in &form.terms {
        if let Var::Param(id) = var {
            let name = names.param(id.0);
            terms.push(match c {
                1 => format!("(long){name}"),
                -1 => format!("-(long){name}"),
                c => format!("{c}L * (long){name}"),
            });
        }
    }
    if terms.is_empty() || form.constant != 0 {
        terms.push(format!("{}L", form.constant));
    }
    format!("({})", terms.join(" + ").replace("+ -", "- "))
}
