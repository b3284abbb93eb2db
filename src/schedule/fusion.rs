//! Fusion of consecutive stencils into one kernel, and why a pair is refused.
//!
//! Fused stencils run one after the other at each point, in one thread, instead
//! of one sweep each. That gives the unfused result only when no stencil of the
//! group needs a value another thread computes in the same kernel:
//! - every stencil has one part, and all parts cover the same subset (compared
//!   after evaluation with the run's parameter values when they are known,
//!   else as written);
//! - every write is at offset zero;
//! - a stencil reads a level an earlier stencil of the group writes only at
//!   offset zero (no halo dependence);
//! - a stencil writes no level an earlier stencil of the group reads at a
//!   non-zero offset (that stencil's neighbours must still see the old value).

use std::ops::Range;

use crate::analysis::footprint::{Footprint, Level};
use crate::ir::env::RunEnv;
use crate::ir::{Program, Stencil, Subset};

/// Splits `stencils` into runs of consecutive stencils that fuse; `notes` gets
/// one sentence per adjacent pair left apart, saying why.
pub(crate) fn groups(
    program: &Program,
    stencils: &[Stencil],
    env: Option<&RunEnv>,
    notes: &mut Vec<String>,
) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let mut start = 0;
    for next in 1..=stencils.len() {
        if next < stencils.len() {
            match refusal(program, &stencils[start..next], &stencils[next], env) {
                None => continue,
                Some(why) => notes.push(format!(
                    "not fusing `{}` into `{}`: {why}",
                    stencils[next].name,
                    stencils[next - 1].name
                )),
            }
        }
        groups.push(start..next);
        start = next;
    }
    groups
}

/// Why `next` cannot join `group` (consecutive stencils before it), or `None`.
fn refusal(
    program: &Program,
    group: &[Stencil],
    next: &Stencil,
    env: Option<&RunEnv>,
) -> Option<String> {
    if let Some(multi) = group.iter().chain([next]).find(|s| s.parts.len() != 1) {
        return Some(format!(
            "`{}` has {} parts; only single-part stencils fuse",
            multi.name,
            multi.parts.len()
        ));
    }
    let first = &group[0].parts[0].subset;
    let subset = &next.parts[0].subset;
    if !same_subset(first, subset, env) {
        return Some(format!(
            "its subset {} differs from `{}`'s {}",
            subset_text(program, subset),
            group[0].name,
            subset_text(program, first)
        ));
    }
    let earlier: Vec<Footprint> = group
        .iter()
        .map(|s| Footprint::of_part(program, &s.parts[0]))
        .collect();
    let earlier = Footprint::merge(&earlier);
    let own = Footprint::of_part(program, &next.parts[0]);
    if !earlier.writes_only_center() || !own.writes_only_center() {
        return Some("a stencil of the pair writes at a non-zero offset".into());
    }
    let read_off_center = |fp: &Footprint, (field, time): Level| {
        fp.read_extent(field, time)
            .is_some_and(|r| !r.only_center())
    };
    for level in earlier.written() {
        if read_off_center(&own, level) {
            return Some(format!(
                "it reads {}, which `{}` writes, at a non-zero offset: it needs values \
                 that neighbouring threads compute",
                level_text(program, level),
                writer(program, group, level)
            ));
        }
    }
    for level in own.written() {
        if read_off_center(&earlier, level) {
            return Some(format!(
                "it writes {}, which an earlier stencil reads at a non-zero offset: \
                 neighbouring threads must still see the old values",
                level_text(program, level)
            ));
        }
    }
    None
}

/// Whether two subsets cover the same points.
fn same_subset(a: &Subset, b: &Subset, env: Option<&RunEnv>) -> bool {
    if a.rank() != b.rank() {
        return false;
    }
    match env {
        Some(env) => env.subset_box(a) == env.subset_box(b),
        None => a.ranges.iter().zip(&b.ranges).all(|(x, y)| {
            // As written: compare the printed expressions (spans differ).
            format!("{}:{}", x.0, x.1) == format!("{}:{}", y.0, y.1)
        }),
    }
}

fn subset_text(program: &Program, subset: &Subset) -> String {
    subset
        .ranges
        .iter()
        .map(|(lo, hi)| {
            format!(
                "[{}:{}]",
                program.display_expr(lo, &[]),
                program.display_expr(hi, &[])
            )
        })
        .collect()
}

fn level_text(program: &Program, (field, time): Level) -> String {
    format!("`[{time}]{}`", program.fields[field.0].name)
}

fn writer(program: &Program, group: &[Stencil], (field, time): Level) -> String {
    group
        .iter()
        .rev()
        .find(|s| Footprint::of_part(program, &s.parts[0]).writes_level(field, time))
        .map(|s| s.name.clone())
        .unwrap_or_default()
}
