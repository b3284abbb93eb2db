//! [`Schedule::describe`]: a schedule in words, one line per stencil (and
//! one for the CUDA launch bounds and one for time tiling), as `--verbose`,
//! `emit`'s header and `explain` print it.

use super::{fusion, join, FieldPlacement, Schedule};
use crate::ir::Program;

impl Schedule {
    /// One line per stencil, for `--verbose` and reports.
    pub fn describe(&self, program: &Program) -> String {
        let mut lines = Vec::new();
        let Some(iterate) = &program.iterate else {
            return String::new();
        };
        for (s, sched) in iterate.stencils.iter().zip(&self.stencils) {
            let tiles: Vec<String> = sched
                .fields
                .iter()
                .filter(|(_, p)| **p == FieldPlacement::SharedTile)
                .map(|((f, t), _)| format!("[{t}]{}", program.fields[f.0].name))
                .collect();
            let tables: Vec<String> = sched
                .tables
                .iter()
                .map(|(t, p)| format!("{}:{p:?}", program.tables[t.0].name))
                .collect();
            lines.push(format!(
                "{}: block {} tile {}{} shared tiles [{}] tables [{}]{}",
                s.name,
                join(&sched.block),
                join(&sched.tile),
                if sched.vector > 1 {
                    format!(" vector {}", sched.vector)
                } else {
                    String::new()
                },
                tiles.join(" "),
                tables.join(" "),
                match (&sched.recompute, sched.fuse_with_next) {
                    (Some(r), _) => format!(
                        " fused with the next stencil, recomputing {} over a halo{}",
                        fusion::level_text(program, r.level),
                        if r.write_back {
                            ""
                        } else {
                            " (not written to global memory)"
                        }
                    ),
                    (None, true) => " fused with the next stencil".into(),
                    (None, false) => String::new(),
                }
            ));
        }
        if let Some(blocks) = self.min_blocks_per_sm {
            lines.push(format!(
                "CUDA kernels: __launch_bounds__(threads, {blocks}) (--min-blocks {blocks}): \
                 ptxas may use up to 65536 / (threads x {blocks}) registers a thread"
            ));
        }
        if let Some(time) = &self.time {
            lines.push(format!(
                "time tiling: up to {} iterations per launch of `{}_time_tile` (block {} over {} \
                 points, halo {}, {} bytes of shared memory); the per-stencil kernels are not launched",
                time.steps,
                iterate
                    .stencils
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join("_"),
                join(&time.block),
                join(&time.per_block),
                time.halo
                    .iter()
                    .map(|(lo, hi)| format!("[-{lo}:+{hi}]"))
                    .collect::<String>(),
                time.shared_bytes
            ));
        }
        lines.join("\n")
    }
}
