//! The write/read hazard: a stencil may not read a (field, time level) that it
//! writes at a non-zero spatial offset, because the value read would depend on
//! the order in which points run.

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::front::sema::fold;
use crate::front::sema::stencil::{stmt_accesses, Access};
use crate::front::sema::Sema;
use crate::ir::{FieldId, GridRef};
use crate::source::Span;

impl Sema {
    pub(super) fn check_hazards(&mut self) {
        let Some(iterate) = self.program.iterate.take() else {
            return;
        };
        for stencil in &iterate.stencils {
            let mut accesses: Vec<Access> = Vec::new();
            for part in &stencil.parts {
                for stmt in &part.body {
                    stmt_accesses(stmt, &mut accesses);
                }
            }
            let mut writes: HashMap<(FieldId, i32), Span> = HashMap::new();
            for a in accesses.iter().filter(|a| a.is_write) {
                writes.entry((a.field, a.reference.time)).or_insert(a.span);
            }
            let mut reported = Vec::new();
            for read in accesses.iter().filter(|a| !a.is_write) {
                let key = (read.field, read.reference.time);
                let Some(write) = writes.get(&key) else {
                    continue;
                };
                if reported.contains(&key) || self.is_zero_offset(read.reference) {
                    continue;
                }
                reported.push(key);
                let field = &self.program.fields[read.field.0];
                let other_level = if field.time_hi > read.reference.time {
                    format!("write to `[{}]{}` instead", field.time_hi, field.name)
                } else {
                    let levels: Vec<String> = (field.time_lo..=field.time_hi + 1)
                        .map(|t| t.to_string())
                        .collect();
                    format!(
                        "declare another time level (`at {}`) and write `[{}]{}`",
                        levels.join(","),
                        field.time_hi + 1,
                        field.name
                    )
                };
                self.errors.push(
                    Diagnostic::error(
                        format!(
                            "stencil `{}` writes `[{t}]{name}` and reads it at a non-zero spatial offset; its parallel order would be undefined",
                            stencil.name,
                            t = read.reference.time,
                            name = field.name
                        ),
                        read.span,
                    )
                    .with_label("read of a neighbour of a written point")
                    .with_secondary(*write, "written here")
                    .with_help(format!(
                        "a point's neighbours may already hold new values or not, depending on the order points run: {other_level}, or split the stencil in two"
                    )),
                );
            }
        }
        self.program.iterate = Some(iterate);
    }

    /// Whether every offset of the reference is provably zero.
    fn is_zero_offset(&self, reference: &GridRef) -> bool {
        reference.offset.iter().all(|o| {
            fold::fold(o, &|i| self.const_value(i))
                .ok()
                .and_then(fold::as_integer)
                == Some(0)
        })
    }
}
