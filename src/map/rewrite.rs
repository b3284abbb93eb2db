//! The rewritten program: the user's text kept byte for byte, with each
//! mapped nest's parallel loop under `#pragma omp parallel for` (the direct
//! kernel of `--target c`), and the timed copy of the program that
//! `--profile` runs.

use std::collections::BTreeMap;

use super::facts::{NestFacts, ScalarRole};
use super::liveness::LiveAfter;
use super::nest::{Decision, FilePlan, NestPlan};
use super::syntax::{mentions_identifier as mentions, trip_count};
use crate::front::c::loops::{CUnit, Function, Loop, Stmt};
use crate::front::c::CFile;

/// Whether each run of `body` reaches a loop over `var` at its top level
/// (no `break`, `continue` or unmodelled statement before it).
fn reached_in_every_iteration(body: &[Stmt], var: &str) -> bool {
    fn jumps(body: &[Stmt]) -> bool {
        body.iter().any(|s| match s {
            Stmt::Break | Stmt::Continue | Stmt::Return(_) | Stmt::Goto(_) => true,
            Stmt::If { then, els, .. } => jumps(then) || jumps(els),
            _ => false,
        })
    }
    for s in body {
        match s {
            Stmt::For(l) if l.var == var => return true,
            Stmt::If { then, els, .. } if !jumps(then) && !jumps(els) => {}
            Stmt::For(_) | Stmt::Assign(_) | Stmt::Decl { .. } | Stmt::Eval { .. } => {}
            _ => return false,
        }
    }
    false
}

/// Why a nest gets no `#pragma omp parallel for`: a sentence for the plan.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoOmpClause {
    /// The pragma needs a line of its own before `for` (its line number).
    #[error("the loop at line {0} does not start its line (a macro or other code before `for`); put `for` on a line of its own")]
    ForNotFirst(usize),
    /// A collapsed loop's variable read after a nest that may not run.
    #[error("`{0}` is read after the nest, and the parallel loops may run no iteration (OpenMP would then not set it)")]
    ReadAfterNoIteration(String),
    /// An inner loop's variable read after the nest, its loop skipped in
    /// some iteration of `outer`.
    #[error("`{var}` is read after the nest, and its loop is not reached in every iteration of `{outer}`")]
    LoopNotAlwaysReached {
        /// The inner loop's variable.
        var: String,
        /// The outermost parallel loop's variable.
        outer: String,
    },
    /// A private scalar read after the nest, not written in every
    /// iteration of `outer`.
    #[error("`{name}` is used after the nest but not written in every iteration of `{outer}`")]
    NotAlwaysWritten {
        /// The scalar.
        name: String,
        /// The outermost parallel loop's variable.
        outer: String,
    },
    /// A scalar that carries a value from one iteration to the next.
    #[error("`{0}` carries a value across iterations")]
    Carried(String),
}

/// The `#pragma omp parallel for` line for a nest whose parallel loops are
/// `band`, or why the nest cannot be annotated exactly.
pub fn omp_clause(
    root: &Loop,
    band: &[String],
    facts: &NestFacts,
    function: &Function,
    unit: &CUnit,
    file: &CFile,
) -> Result<String, NoOmpClause> {
    let first = file.original_line(root.lines.0);
    if !first.trim_start().starts_with("for") {
        return Err(NoOmpClause::ForNotFirst(root.lines.0));
    }
    let live = LiveAfter::new(root, function, unit, file);

    // Collapse the band when the inner bounds do not depend on the outer loops.
    let mut collapse = 1;
    for k in 1..band.len() {
        let l = &facts.loops[&band[k]];
        let uses_outer = band[..k]
            .iter()
            .any(|v| mentions(&l.lower.to_string(), v) || mentions(&l.upper.to_string(), v));
        if uses_outer {
            break;
        }
        collapse = k + 1;
    }
    let collapsed = &band[..collapse];
    let mut private = Vec::new();
    let mut lastprivate = Vec::new();
    let mut reductions: BTreeMap<String, Vec<String>> = BTreeMap::new();
    // The body each iteration of the collapsed loops runs.
    let mut body = &root.body;
    for _ in 1..collapse {
        if let [Stmt::For(inner)] = body.as_slice() {
            body = &inner.body;
        }
    }
    for (var, l) in &facts.loops {
        if l.declared {
            continue;
        }
        if live.reads(var) {
            if collapsed.contains(var) {
                // With no iteration, OpenMP leaves the variable as it was
                // (GCC's collapse even leaves garbage); C sets it.
                let runs = collapsed.iter().all(|v| {
                    facts
                        .loops
                        .get(v)
                        .and_then(trip_count)
                        .is_some_and(|n| n > 0)
                });
                if !runs {
                    return Err(NoOmpClause::ReadAfterNoIteration(var.clone()));
                }
            } else if !reached_in_every_iteration(body, var) {
                // `lastprivate` takes the last iteration's copy, unset
                // where that iteration does not reach the loop.
                return Err(NoOmpClause::LoopNotAlwaysReached {
                    var: var.clone(),
                    outer: root.var.clone(),
                });
            }
            lastprivate.push(var.clone());
        } else if !collapsed.contains(var) {
            private.push(var.clone());
        }
    }
    for (name, role) in &facts.scalars {
        match role {
            ScalarRole::Local(_) => {}
            ScalarRole::Private(at) => {
                if live.reads(name) {
                    if *at != root.var {
                        return Err(NoOmpClause::NotAlwaysWritten {
                            name: name.clone(),
                            outer: root.var.clone(),
                        });
                    }
                    lastprivate.push(name.clone());
                } else {
                    private.push(name.clone());
                }
            }
            ScalarRole::Reduction(op) => {
                reductions.entry(op.clone()).or_default().push(name.clone())
            }
            ScalarRole::Carried => return Err(NoOmpClause::Carried(name.clone())),
        }
    }
    let mut clause = String::from("#pragma omp parallel for");
    if collapse > 1 {
        clause.push_str(&format!(" collapse({collapse})"));
    }
    if !private.is_empty() {
        clause.push_str(&format!(" private({})", private.join(", ")));
    }
    if !lastprivate.is_empty() {
        clause.push_str(&format!(" lastprivate({})", lastprivate.join(", ")));
    }
    for (op, names) in reductions {
        clause.push_str(&format!(" reduction({op}: {})", names.join(", ")));
    }
    Ok(clause)
}

fn mapped<'a>(nests: &'a [NestPlan], out: &mut Vec<&'a NestPlan>) {
    for n in nests {
        if matches!(n.decision, Decision::Mapped { .. }) {
            out.push(n);
        }
        mapped(&n.inner, out);
    }
}

fn all_nests<'a>(nests: &'a [NestPlan], out: &mut Vec<&'a NestPlan>) {
    for n in nests {
        out.push(n);
        all_nests(&n.inner, out);
    }
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// The program for `--target c`: the user's text with an OpenMP pragma
/// before each mapped nest.
pub fn openmp_program(file: &CFile, plan: &FilePlan) -> String {
    let mut nests = Vec::new();
    mapped(&plan.nests, &mut nests);
    let mut before: BTreeMap<usize, String> = BTreeMap::new();
    for n in &nests {
        if let Some(clause) = &n.omp {
            let line = file.original_line(n.lines.0);
            before.insert(n.lines.0, format!("{}{clause}", indent_of(line)));
        }
    }
    let mut out = format!(
        "/* Mapped by stencilc map --target c from {}: {} nest(s) run in parallel under OpenMP\n   (compile with -fopenmp; without it the program runs sequentially, unchanged). */\n",
        plan.file,
        nests.len()
    );
    for (index, line) in file.original.text.split_inclusive('\n').enumerate() {
        if let Some(pragma) = before.get(&(index + 1)) {
            out.push_str(pragma);
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

/// The program `--profile` runs: every nest (inner nests of iterates
/// included) between timers, the totals written at exit to the file named by
/// `STENCILC_PROFILE_OUT`, one `index seconds` line per nest. Also returns the
/// nests in index order; nests that do not start and end their lines are not timed.
pub fn profiled_program<'a>(file: &CFile, plan: &'a FilePlan) -> (String, Vec<&'a NestPlan>) {
    let mut nests = Vec::new();
    all_nests(&plan.nests, &mut nests);
    nests.retain(|n| {
        let first = file.original_line(n.lines.0).trim_start();
        let last = file.original_line(n.lines.1).trim_end();
        first.starts_with("for") && (last.ends_with('}') || last.ends_with(';'))
    });
    // Nests that share their last line with another nest's end are nested; keep the braces balanced
    // by opening before the first line and closing after the last line of each.
    let mut open: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut close: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (k, n) in nests.iter().enumerate() {
        open.entry(n.lines.0).or_default().push(k);
        close.entry(n.lines.1).or_default().push(k);
    }
    let mut out = format!(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <time.h>\nstatic double stencilc_nest_seconds[{}];\n\
static double stencilc_now(void) {{ struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }}\n\
static void stencilc_dump(void) {{ const char *p = getenv(\"STENCILC_PROFILE_OUT\"); FILE *f = p ? fopen(p, \"w\") : NULL; if (!f) return;\n\
  for (int k = 0; k < {}; k++) fprintf(f, \"%d %.9f\\n\", k, stencilc_nest_seconds[k]); fclose(f); }}\n\
__attribute__((constructor)) static void stencilc_profile_init(void) {{ atexit(stencilc_dump); }}\n#line 1 \"{}\"\n",
        nests.len().max(1),
        nests.len(),
        plan.file
    );
    for (index, line) in file.original.text.split_inclusive('\n').enumerate() {
        let number = index + 1;
        for k in open.get(&number).into_iter().flatten() {
            out.push_str(&format!("{{ double stencilc_t{k} = stencilc_now();\n"));
        }
        if open.contains_key(&number) {
            out.push_str(&format!("#line {number} \"{}\"\n", plan.file));
        }
        out.push_str(line);
        if !line.ends_with('\n') {
            out.push('\n');
        }
        for k in close.get(&number).into_iter().flatten().rev() {
            out.push_str(&format!(
                "stencilc_nest_seconds[{k}] += stencilc_now() - stencilc_t{k}; }}\n"
            ));
        }
        if close.contains_key(&number) {
            out.push_str(&format!("#line {} \"{}\"\n", number + 1, plan.file));
        }
    }
    (out, nests)
}

/// Appends `text` to `out` with the lines each entry of `replace` covers
/// (first line number → last line number and its replacement) replaced, and a
/// `#line` after each replacement so that later diagnostics name the lines of
/// `file` as written.
pub fn splice(
    out: &mut String,
    text: &str,
    replace: &BTreeMap<usize, (usize, String)>,
    file: &str,
) {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut number = 1;
    while number <= lines.len() {
        if let Some((last, glue)) = replace.get(&number) {
            out.push_str(glue);
            number = last + 1;
            out.push_str(&format!("#line {number} \"{file}\"\n"));
            continue;
        }
        out.push_str(lines[number - 1]);
        number += 1;
    }
}
