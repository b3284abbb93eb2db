//! The run function: the iterate loop (untiled, or by time-tiled sweeps), the
//! time-level rotation, reductions and the check when due, and the uniform
//! entry point the native executor calls.

use std::rc::Rc;

use crate::back::c::expr::{Access, Scope};
use crate::back::c::names;
use crate::back::c::uses::Uses;
use crate::back::c::writer::{Linkage, Writer};
use crate::ir::FieldId;

impl Writer<'_> {
    pub(super) fn run_function(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let scope = Scope {
            access: Access::Interior,
            locals: &[],
        };
        let storage = if self.linkage == Linkage::Embedded {
            "static "
        } else {
            ""
        };
        let summary = n.temp("summary");
        let (max_iters, check_every) = (n.temp("max_iters"), n.temp("check_every"));
        self.line(&format!(
            "/* Runs {}: each field argument is its array of time levels (oldest first),\n   left rotated as the iterate leaves them. Returns 0 on success; 1 for a check interval\n   below 1, 3 when out of memory, 4 when an access would leave its grid, 5 when a grid is\n   empty or too large to index (4 and 5 print a line on stderr and compute nothing){}. */",
            p.name,
            if self.polls_interrupt() {
                ",\n   6 when *interrupt (NULL: never) was set, between iterations (the fields as they are then)"
            } else {
                ""
            }
        ));
        let head = format!("{storage}int {}", names::run_symbol(p));
        let mut params = self.run_parameters();
        if self.polls_interrupt() {
            params.push_str(&format!(
                ", const volatile unsigned char *{}",
                n.temp("interrupt")
            ));
        }
        self.function_head(&head, &params);
        self.open("{");
        self.constants_and_sizes();
        self.grid_size_checks();
        self.access_bounds_checks();
        for (f, field) in p.fields.iter().enumerate() {
            for t in field.time_lo..=field.time_hi {
                self.line(&format!(
                    "{} *{} = {}[{}];",
                    names::c_type(field.ty),
                    n.level(FieldId(f), t),
                    n.field(f),
                    field.level_of(t)
                ));
            }
        }
        self.line(&format!("{summary}->iterations = 0;"));
        self.line(&format!("{summary}->stopped_by_check = 0;"));
        self.line(&format!("{summary}->reductions_evaluated = 0;"));
        if let Some(iterate) = &p.iterate {
            for (i, r) in iterate.reductions.iter().enumerate() {
                let zero = names::zero(r.ty);
                let name = n.reduction(i);
                self.line(&format!("{} {name} = {zero};", names::c_type(r.ty)));
                self.line(&format!("{summary}->{name} = {zero};"));
            }
            let max = self.expr(&iterate.max_iters, scope);
            self.line(&format!("const long {max_iters} = {max};"));
            if let Some(check) = &iterate.check {
                let every = self.expr(&check.every, scope);
                self.line(&format!("const long {check_every} = {every};"));
                self.line(&format!("if ({check_every} < 1) return 1;"));
            }
            if self.tiling.is_some() {
                self.tiled_iterate_loop(iterate);
            } else {
                self.untiled_iterate_loop(iterate);
            }
        }
        self.run_epilogue();
    }

    /// One sweep per stencil and iteration.
    fn untiled_iterate_loop(&mut self, iterate: &crate::ir::Iterate) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let summary = n.temp("summary");
        let (iter, stop) = (n.temp("iter"), n.temp("stop"));
        let max_iters = n.temp("max_iters");
        {
            self.open(&format!(
                "for (long {iter} = 1; {iter} <= {max_iters}; {iter}++) {{"
            ));
            if iterate.check.is_some() {
                self.line(&format!("int {stop} = 0;"));
            }
            for (index, stencil) in iterate.stencils.iter().enumerate() {
                let uses = Uses::of_stencil(p, stencil);
                self.line(&format!("{}({});", n.stencil(index), self.arguments(&uses)));
            }
            self.reductions_and_check(iterate);
            self.line(&format!("{summary}->iterations = {iter};"));
            self.rotation();
            if iterate.check.is_some() {
                self.open(&format!("if ({stop}) {{"));
                self.line(&format!("{summary}->stopped_by_check = 1;"));
                self.line("break;");
                self.close("}");
            }
            self.interrupt_poll("");
            self.close("}");
        }
    }

    /// Whether the run function takes the interrupt flag: the native
    /// executor's units do (the Python package sets it on Ctrl-C); the
    /// source-to-source units' run functions keep their signature.
    pub(super) fn polls_interrupt(&self) -> bool {
        self.linkage == Linkage::Internal
    }

    /// At the end of an iteration (or time-tiled sweep), the interrupt flag's
    /// poll: a set flag ends the run with status 6 after `cleanup`.
    pub(super) fn interrupt_poll(&mut self, cleanup: &str) {
        if !self.polls_interrupt() {
            return;
        }
        let interrupt = self.names.temp("interrupt");
        let cleanup = if cleanup.is_empty() {
            String::new()
        } else {
            format!("{cleanup} ")
        };
        self.line(&format!(
            "if ({interrupt} != NULL && *{interrupt} != 0) {{ {cleanup}return 6; }} /* interrupted */"
        ));
    }

    /// The level pointers handed back, and success.
    fn run_epilogue(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        for (f, field) in p.fields.iter().enumerate() {
            for t in field.time_lo..=field.time_hi {
                self.line(&format!(
                    "{}[{}] = {};",
                    n.field(f),
                    field.level_of(t),
                    n.level(FieldId(f), t)
                ));
            }
        }
        let cleanup = self.run_cleanup();
        if !cleanup.is_empty() {
            self.line(&cleanup);
        }
        self.line("return 0;");
        self.close("}");
    }

    /// At the end of an iteration: the reductions and the check when due.
    pub(super) fn reductions_and_check(&mut self, iterate: &crate::ir::Iterate) {
        self.reductions_and_check_when(iterate, None);
    }

    /// [`Writer::reductions_and_check`], where without a check the reductions
    /// run only when `unchecked` holds (`None`: every time).
    pub(super) fn reductions_and_check_when(
        &mut self,
        iterate: &crate::ir::Iterate,
        unchecked: Option<String>,
    ) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let scope = Scope {
            access: Access::Interior,
            locals: &[],
        };
        let summary = n.temp("summary");
        let (iter, stop) = (n.temp("iter"), n.temp("stop"));
        let check_every = n.temp("check_every");
        if !iterate.reductions.is_empty() || iterate.check.is_some() {
            match &iterate.check {
                Some(_) => self.open(&format!("if ({iter} % {check_every} == 0) {{")),
                None => match &unchecked {
                    Some(condition) => self.open(&format!("if ({condition}) {{")),
                    None => self.open("{"),
                },
            }
            for (i, r) in iterate.reductions.iter().enumerate() {
                let uses = Uses::of_reduction(p, r);
                let name = n.reduction(i);
                let args = self.arguments(&uses);
                let sep = if args.is_empty() { "" } else { ", " };
                let cleanup = self.run_cleanup();
                let fail = if cleanup.is_empty() {
                    "return 3;".to_string()
                } else {
                    format!("{{ {cleanup} return 3; }}")
                };
                self.line(&format!(
                    "if ({}({args}{sep}&{name}) != 0) {fail}",
                    n.reduce_function(i)
                ));
                self.line(&format!("{summary}->{name} = {name};"));
            }
            if !iterate.reductions.is_empty() {
                self.line(&format!("{summary}->reductions_evaluated = 1;"));
            }
            if let Some(check) = &iterate.check {
                let cond = self.expr(&check.cond, scope);
                self.line(&format!("{stop} = {cond} != 0;"));
            }
            self.close("}");
        }
    }

    /// Rotation by pointer swap: the level written as `[hi]` becomes `[hi-1]`.
    pub(super) fn rotation(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let oldest = n.temp("oldest");
        for (f, field) in p.fields.iter().enumerate() {
            if field.levels() < 2 {
                continue;
            }
            let ty = names::c_type(field.ty);
            let lv = |t: i32| n.level(FieldId(f), t);
            let mut text = format!("{{ {ty} *{oldest} = {};", lv(field.time_lo));
            for t in field.time_lo..field.time_hi {
                text.push_str(&format!(" {} = {};", lv(t), lv(t + 1)));
            }
            text.push_str(&format!(" {} = {oldest}; }}", lv(field.time_hi)));
            self.line(&format!(
                "/* rotate {}: [{}] becomes [{}] */",
                field.name,
                field.time_hi,
                field.time_hi - 1
            ));
            self.line(&text);
        }
    }

    /// The uniform entry point (see [`ENTRY_ABI`]).
    pub(crate) fn write_entry(&mut self) {
        let p = self.program;
        let n = Rc::clone(&self.names);
        let [params_f, params_i, levels, counts, reductions_f, reductions_i] = [
            "params_f",
            "params_i",
            "levels",
            "counts",
            "reductions_f",
            "reductions_i",
        ]
        .map(|role| n.temp(role));
        let (summary, status) = (n.temp("summary"), n.temp("status"));
        let interrupt = n.temp("interrupt");
        self.blank();
        self.line(
            "/* Uniform entry point for stencilc's native executor (see back::c::ENTRY_ABI). */",
        );
        self.function_head(
            &format!("int {}", names::entry_symbol(p)),
            &format!(
                "const double *{params_f}, const long *{params_i}, void **{levels}, \
                 long *{counts}, double *{reductions_f}, long *{reductions_i}, \
                 const volatile unsigned char *{interrupt}"
            ),
        );
        self.open("{");
        let mut base = 0;
        let mut args: Vec<String> = p
            .params
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let array = if q.ty.is_float() {
                    &params_f
                } else {
                    &params_i
                };
                format!("({}){array}[{i}]", names::c_type(q.ty))
            })
            .collect();
        for (f, field) in p.fields.iter().enumerate() {
            let ty = names::c_type(field.ty);
            let pointers: Vec<String> = (0..field.levels())
                .map(|l| format!("({ty} *){levels}[{}]", base + l))
                .collect();
            self.line(&format!(
                "{ty} *{}[{}] = {{ {} }};",
                n.field(f),
                field.levels(),
                pointers.join(", ")
            ));
            args.push(n.field(f));
            base += field.levels();
        }
        self.line(&format!("{} {summary};", names::summary_type(p)));
        args.push(format!("&{summary}"));
        args.push(interrupt);
        self.line(&format!(
            "int {status} = {}({});",
            names::run_symbol(p),
            args.join(", ")
        ));
        let mut base = 0;
        for (f, field) in p.fields.iter().enumerate() {
            for l in 0..field.levels() {
                self.line(&format!("{levels}[{}] = {}[{l}];", base + l, n.field(f)));
            }
            base += field.levels();
        }
        self.line(&format!("{counts}[0] = {summary}.iterations;"));
        self.line(&format!("{counts}[1] = {summary}.stopped_by_check;"));
        self.line(&format!("{counts}[2] = {summary}.reductions_evaluated;"));
        if let Some(iterate) = &p.iterate {
            for (i, r) in iterate.reductions.iter().enumerate() {
                let array = if r.ty.is_float() {
                    &reductions_f
                } else {
                    &reductions_i
                };
                let cast = if r.ty.is_float() { "double" } else { "long" };
                self.line(&format!(
                    "{array}[{i}] = ({cast}){summary}.{};",
                    n.reduction(i)
                ));
            }
        }
        self.line(&format!(
            "(void){params_f}; (void){params_i}; (void){reductions_f}; (void){reductions_i};"
        ));
        self.line(&format!("return {status};"));
        self.close("}");
    }
}
