//! Which reduction parts ride in the iteration's last stencil kernel (a fused
//! check). A part fuses when its points are exactly that launch's points and
//! every level it reads is either not written by the launch or read only at
//! offset 0 (the thread's own point, which it has just written): then each
//! thread can fold the part's terms right after computing its points, and the
//! levels are not read a second time. Every other part keeps a kernel of its
//! own, with a note saying why.

use crate::analysis::Footprint;
use crate::ir::env::RunEnv;
use crate::ir::{Program, Stencil, StencilPart, Subset};

/// The iteration's last stencil launch, as the fusion test sees it.
pub(crate) struct LastLaunch<'a> {
    /// The kernel's name (for the notes).
    pub name: String,
    /// The launch's points.
    pub subset: &'a Subset,
    /// The parts the kernel runs at each point.
    pub parts: Vec<&'a StencilPart>,
}

impl<'a> LastLaunch<'a> {
    /// The last launch of a stencil group (one stencil: its last part; fused
    /// single-part stencils: all of them, over the first one's subset).
    pub(crate) fn of_group(group: &'a [Stencil], kernel_name: String) -> Option<Self> {
        let parts: Vec<&StencilPart> = match group {
            [stencil] => vec![stencil.parts.last()?],
            _ => group.iter().filter_map(|s| s.parts.first()).collect(),
        };
        Some(LastLaunch {
            name: kernel_name,
            subset: &parts.first()?.subset,
            parts,
        })
    }
}

/// Which parts fuse: per reduction (by index) the fused part indices, and one
/// note per part saying whether it fused and, if not, why.
#[derive(Debug, Default)]
pub(crate) struct Decision {
    /// Per reduction, the indices of its fused parts (empty: none fuse).
    pub fused: Vec<Vec<usize>>,
    /// One sentence per reduction part.
    pub notes: Vec<String>,
}

/// Decides for every reduction part of `program`'s iterate whether it fuses
/// into `last` (points compared as boxes under `env` when given, else as
/// written).
pub(crate) fn decide(
    program: &Program,
    last: Option<&LastLaunch<'_>>,
    env: Option<&RunEnv>,
) -> Decision {
    let mut decision = Decision::default();
    let Some(iterate) = &program.iterate else {
        return decision;
    };
    let written = last.map(|l| {
        let footprints: Vec<Footprint> = l
            .parts
            .iter()
            .map(|p| Footprint::of_part(program, p))
            .collect();
        Footprint::merge(&footprints)
    });
    for reduction in &iterate.reductions {
        let mut fused = Vec::new();
        for (k, part) in reduction.parts.iter().enumerate() {
            let what = format!("reduction `{}` part {k}", reduction.name);
            let (Some(last), Some(written)) = (last, &written) else {
                decision.notes.push(format!(
                    "{what}: a kernel of its own (the iteration has no stencil to fuse it into)"
                ));
                continue;
            };
            match why_not(program, last, written, part, env) {
                None => {
                    fused.push(k);
                    decision
                        .notes
                        .push(format!("{what}: fused into kernel `{}`", last.name));
                }
                Some(why) => decision
                    .notes
                    .push(format!("{what}: a kernel of its own, {why}")),
            }
        }
        decision.fused.push(fused);
    }
    decision
}

/// Why `part` cannot ride in `last` (whose accesses are `written`), or `None`.
fn why_not(
    program: &Program,
    last: &LastLaunch<'_>,
    written: &Footprint,
    part: &crate::ir::ReductionPart,
    env: Option<&RunEnv>,
) -> Option<String> {
    if !same_points(&part.subset, last.subset, env) {
        return Some(format!(
            "since its points differ from those of the last stencil kernel `{}`",
            last.name
        ));
    }
    if !written.writes_only_center() {
        return Some(format!(
            "since kernel `{}` writes away from its own point",
            last.name
        ));
    }
    let reads = Footprint::of_expr(program, &part.value);
    for extent in &reads.reads {
        if written.writes_level(extent.field, extent.time) && !extent.only_center() {
            return Some(format!(
                "since it reads {} away from the point, which kernel `{}` writes (a \
                 neighbour's value may not be written yet when the point's thread reads it)",
                crate::lower::level_name(program, extent.field, extent.time),
                last.name
            ));
        }
    }
    None
}

/// Whether two subsets are the same points: as boxes for the run's values,
/// or, without them, as written.
fn same_points(a: &Subset, b: &Subset, env: Option<&RunEnv>) -> bool {
    if a.rank() != b.rank() {
        return false;
    }
    match env {
        Some(env) => env.subset_box(a) == env.subset_box(b),
        None => a.ranges.iter().zip(&b.ranges).all(|((al, ah), (bl, bh))| {
            al.to_string() == bl.to_string() && ah.to_string() == bh.to_string()
        }),
    }
}
