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
//!
//! A pair whose second stencil (the consumer) reads what the first (the
//! producer) writes at neighbouring points fuses instead by **halo
//! recompute** ([`recompute_refusal`]): each block computes the producer over
//! its points plus the consumer's halo into a shared tile, then the consumer
//! reads the tile. Blocks overlap in what they compute, so it also needs:
//! - the producer writes exactly one level, at offset zero, and does not read
//!   it (a recomputing block would read values another block has written);
//! - the consumer reads that level at offsets known at compile time, on a
//!   grid of the subset's rank, and no other level the producer writes;
//! - the consumer writes no level the producer reads or writes (another block
//!   may still be recomputing from it).
//!
//! Such a group is exactly the pair; the model-driven choice may take it back
//! ([`unfuse`]) when it predicts no gain.

use std::ops::Range;

use crate::analysis::footprint::{Footprint, Level};
use crate::ir::env::RunEnv;
use crate::ir::{Program, Stencil, Subset};
use crate::schedule::{HaloRecompute, Schedule, ScheduleRequest};

/// Consecutive stencils run in one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    /// The stencils, by index in the iterate.
    pub range: Range<usize>,
    /// For a producer/consumer pair fused by halo recompute, how.
    pub recompute: Option<HaloRecompute>,
}

impl Group {
    /// A stencil on its own.
    pub fn single(s: usize) -> Group {
        Group {
            range: s..s + 1,
            recompute: None,
        }
    }
}

/// Splits `stencils` into runs of consecutive stencils that fuse; `notes` gets
/// one sentence per adjacent pair left apart, saying why, and one per pair
/// fused by halo recompute.
pub(crate) fn groups(
    program: &Program,
    stencils: &[Stencil],
    env: Option<&RunEnv>,
    request: &ScheduleRequest,
    notes: &mut Vec<String>,
) -> Vec<Group> {
    let mut groups = Vec::new();
    let mut start = 0;
    let mut next = 1;
    while next <= stencils.len() {
        if next < stencils.len() {
            let Some(why) = refusal(program, &stencils[start..next], &stencils[next], env) else {
                next += 1;
                continue;
            };
            if next == start + 1 {
                match recompute_refusal(program, stencils, start, env, request) {
                    Ok(recompute) => {
                        notes.push(format!(
                            "fusing `{}` into `{}` by recomputing {} over a halo of {} in each \
                             block{}",
                            stencils[next].name,
                            stencils[start].name,
                            level_text(program, recompute.level),
                            halo_text(&recompute.halo),
                            if recompute.write_back {
                                ""
                            } else {
                                " (no global write: nothing reads it after the kernel and \
                                 it is not a result)"
                            }
                        ));
                        groups.push(Group {
                            range: start..next + 1,
                            recompute: Some(recompute),
                        });
                        start = next + 1;
                        next = start + 1;
                        continue;
                    }
                    Err(Some(more)) => notes.push(format!(
                        "not fusing `{}` into `{}`: {why}; nor by recomputing the halo: {more}",
                        stencils[next].name,
                        stencils[next - 1].name
                    )),
                    Err(None) => notes.push(format!(
                        "not fusing `{}` into `{}`: {why}",
                        stencils[next].name,
                        stencils[next - 1].name
                    )),
                }
            } else {
                notes.push(format!(
                    "not fusing `{}` into `{}`: {why}",
                    stencils[next].name,
                    stencils[next - 1].name
                ));
            }
        }
        if start < stencils.len() {
            groups.push(Group {
                range: start..next.min(stencils.len()),
                recompute: None,
            });
        }
        start = next;
        next = start + 1;
    }
    groups
}

/// How stencil `producer` and the next one fuse by halo recompute, or why
/// not: `Err(None)` when the pair does not have the producer/consumer shape
/// at all (the consumer reads nothing the producer writes at an offset).
fn recompute_refusal(
    program: &Program,
    stencils: &[Stencil],
    producer: usize,
    env: Option<&RunEnv>,
    request: &ScheduleRequest,
) -> Result<HaloRecompute, Option<String>> {
    let (first, next) = (&stencils[producer], &stencils[producer + 1]);
    if first.parts.len() != 1 || next.parts.len() != 1 {
        return Err(None);
    }
    if !same_subset(&first.parts[0].subset, &next.parts[0].subset, env) {
        // Said by the same-point check already.
        return Err(None);
    }
    let made = Footprint::of_part(program, &first.parts[0]);
    let used = Footprint::of_part(program, &next.parts[0]);
    let shared: Vec<Level> = made
        .written()
        .into_iter()
        .filter(|&(f, t)| used.read_extent(f, t).is_some_and(|r| !r.only_center()))
        .collect();
    let [level] = shared[..] else {
        return Err(None);
    };
    let (field, time) = level;
    let refuse = |why: String| Err(Some(why));
    if made.written().len() != 1 {
        return refuse(format!(
            "`{}` writes {} levels; only a stencil writing one level is recomputed",
            first.name,
            made.written().len()
        ));
    }
    if made.read_extent(field, time).is_some() {
        return refuse(format!(
            "`{}` reads {}, which it writes: a block recomputing it would read values \
             another block has already written",
            first.name,
            level_text(program, level)
        ));
    }
    let Some(halo) = used.read_extent(field, time).and_then(|r| r.static_box()) else {
        return refuse(format!(
            "`{}` reads {} at offsets that depend on parameter values; the recomputed \
             halo must be known when the kernel is generated",
            next.name,
            level_text(program, level)
        ));
    };
    let rank = first.parts[0].subset.rank();
    let grid = program.fields[field.0].grid;
    if halo.len() != rank || program.grids[grid.0].rank() != rank {
        return refuse(format!(
            "{} lives on a grid of another rank than the stencils' points",
            level_text(program, level)
        ));
    }
    for written in used.written() {
        if made.read_extent(written.0, written.1).is_some()
            || made.writes_level(written.0, written.1)
        {
            return refuse(format!(
                "`{}` writes {}, which `{}` reads or writes: another block may still be \
                 recomputing from it",
                next.name,
                level_text(program, written),
                first.name
            ));
        }
    }
    Ok(HaloRecompute {
        level,
        halo,
        write_back: observable(program, stencils, producer, level, request),
    })
}

/// Whether `level`, written by stencil `producer` and read by the next one from
/// the fused kernel's tile, must also reach global memory: a result the user
/// reads after the run (every field unless the run names its results), or a
/// level some other stencil, any reduction or the check reads. A time level
/// other than the newest rotates into an older one the next iteration, so a
/// field with several levels is always written.
fn observable(
    program: &Program,
    stencils: &[Stencil],
    producer: usize,
    (field, time): Level,
    request: &ScheduleRequest,
) -> bool {
    let f = &program.fields[field.0];
    let result = request
        .results
        .as_ref()
        .is_none_or(|names| names.contains(&f.name));
    if result || f.levels() != 1 {
        return true;
    }
    let read_elsewhere = stencils.iter().enumerate().any(|(i, s)| {
        i != producer + 1
            && s.parts.iter().any(|p| {
                Footprint::of_part(program, p)
                    .read_extent(field, time)
                    .is_some()
            })
    });
    let Some(iterate) = &program.iterate else {
        return true;
    };
    let reduced = (0..iterate.reductions.len()).any(|r| {
        Footprint::of_reduction(program, r)
            .read_extent(field, time)
            .is_some()
    });
    read_elsewhere || reduced
}

/// Takes back the halo-recompute fusion of stencil `producer` with the next
/// one (the model predicted no gain): both get their schedules from `apart`
/// (the same request without fusion), and `why` goes to the notes.
pub fn unfuse(schedule: &mut Schedule, producer: usize, apart: &Schedule, why: String) {
    let pair = producer..producer + 2;
    let fused = schedule
        .stencils
        .get(producer)
        .is_some_and(|s| s.recompute.is_some());
    if !fused || apart.stencils.len() < pair.end || schedule.stencils.len() < pair.end {
        return;
    }
    schedule.stencils[pair.clone()].clone_from_slice(&apart.stencils[pair]);
    schedule.notes.push(why);
}

fn halo_text(halo: &[(i64, i64)]) -> String {
    halo.iter().map(|(lo, hi)| format!("[{lo}:{hi}]")).collect()
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

pub(crate) fn level_text(program: &Program, (field, time): Level) -> String {
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
