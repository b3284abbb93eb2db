//! `--ptxas-rank K`: the schedule heuristic's last step on ptxas's registers.
//!
//! The heuristic (`model::choose`) costs its candidates on
//! *estimated* registers, and ptxas's follow no simple estimate: it trades
//! registers for occupancy at its own thresholds, and a run given too few
//! issues its loads a few at a time (bench/gpu/MODEL.md, "why ptxas starves
//! these runs"). Asked for, the heuristic compiles its `K` fastest candidates
//! of each stencil and its `K` fastest unstaged ones, which `--shm none`
//! would rank (NVRTC, `ptxas -v`), and keeps the one fastest by
//! [`register_bound_time`], whose rounds of loads are bounded by the
//! registers ptxas gave. Among the 166 schedules the H100 and H200 timed, the
//! heuristic's pick for each program and sweep was on average 1.05× the
//! fastest measured (1.21× at worst); re-ranked this way, `K` = 4 to 8,
//! 1.01–1.02× (1.06×). Those are the schedules the register-bound equations
//! were fitted on: the next GPU lease times the ranking out of sample
//! (bench/gpu/next_lease.sh).
//!
//! The model cannot compile kernels (NVRTC is in `exec`, a layer above), so
//! the caller passes the compiler as [`Registers`].

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::ops::Range;

use crate::kir::Module;
use crate::lower::{lower, Target};
use crate::model::{cost, register_bound_time, Device, KernelSpec};
use crate::schedule::{Schedule, ScheduleError};

/// Relative differences of predicted time below this are ties (here and in
/// the heuristic's own comparisons).
pub const TIE: f64 = 1e-9;

/// ptxas's registers per kernel name of a lowered module, for a GPU
/// architecture (`sm_90`): what `--ptxas-rank` ranks on.
pub type Registers<'a> =
    &'a dyn Fn(&Module, &str) -> Result<BTreeMap<String, u32>, crate::model::ptxas::PtxasError>;

/// A candidate schedule as the ranking sees it: its index among the
/// heuristic's candidates (the key of its compiled registers), its schedule,
/// and the specs of each stencil's launches.
pub(super) struct Ranked<'c> {
    pub index: usize,
    pub schedule: &'c Schedule,
    pub specs: &'c [Vec<KernelSpec>],
}

/// The one of `ranked` (the group's candidates, fastest first by the model)
/// that the ranking keeps, and the sentence saying so.
pub(super) struct Ranking {
    /// Position in `ranked`.
    pub chosen: usize,
    /// Appended to the group's reason.
    pub why: String,
}

/// The ranking of one `choose`: what it needs to compile candidates, and
/// the registers of those it compiled (a candidate serves every stencil).
pub(super) struct Ranker<'a> {
    pub program: &'a crate::ir::Program,
    pub target: Target,
    pub device: &'a Device,
    /// `K`.
    pub k: u32,
    pub registers: Registers<'a>,
    /// ptxas's registers per kernel, by candidate index.
    pub compiled: BTreeMap<usize, BTreeMap<String, u32>>,
}

impl Ranker<'_> {
    /// Among `ranked` (a group's candidates the heuristic picked, fastest
    /// first by the model), the fastest by [`register_bound_time`] over the
    /// launches of the stencils in `group`, a later one winning only by more
    /// than [`TIE`].
    pub fn keep(
        &mut self,
        ranked: &[Ranked<'_>],
        group: Range<usize>,
    ) -> Result<Ranking, ScheduleError> {
        let mut best: Option<(usize, f64, u32)> = None;
        let mut first: Option<(f64, u32)> = None;
        for (position, candidate) in ranked.iter().enumerate() {
            let figures = match self.compiled.entry(candidate.index) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(slot) => {
                    let module = lower(self.program, candidate.schedule, self.target).module;
                    let figures = (self.registers)(&module, self.device.arch).map_err(|e| {
                        ScheduleError(format!(
                            "--ptxas-rank compiles the model's best candidates with NVRTC and \
                             ptxas: {e}"
                        ))
                    })?;
                    slot.insert(figures)
                }
            };
            let mut time = 0.0;
            let mut most = 0;
            for spec in candidate.specs[group.clone()].iter().flatten() {
                let regs = *figures.get(&spec.name).ok_or_else(|| {
                    ScheduleError(format!(
                        "--ptxas-rank: ptxas gave no figures for kernel `{}`",
                        spec.name
                    ))
                })?;
                let c = cost(spec, self.device, Some(regs))
                    .map_err(|e| ScheduleError(e.to_string()))?;
                time += register_bound_time(spec, &c);
                most = most.max(regs);
            }
            first.get_or_insert((time, most));
            if best.is_none_or(|(_, b, _)| time < b * (1.0 - TIE)) {
                best = Some((position, time, most));
            }
        }
        let (chosen, time, regs) = best.ok_or_else(|| {
            ScheduleError("--ptxas-rank: no candidate fits the device to rank".into())
        })?;
        let (first_time, first_regs) = first.unwrap_or((time, regs));
        let mut why = format!(
            "; ranked on ptxas's registers among the model's {} fastest and {} fastest \
             unstaged ({} compiled): {regs} registers, {:.1} us with its loads in flight \
             bounded by them",
            self.k,
            self.k,
            ranked.len(),
            time * 1e6
        );
        if chosen != 0 {
            why.push_str(&format!(
                " (the model's own first choice {:.1} us at {first_regs} registers)",
                first_time * 1e6
            ));
        }
        Ok(Ranking { chosen, why })
    }
}
