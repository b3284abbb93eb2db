//! The distributed iterate: the interpreter on each rank's block, ghost layers
//! exchanged before the parts that read them, reductions folded in the global
//! order the single-process interpreter uses.
//!
//! Halo exchanges are lazy: a (field, level) is exchanged before a part that
//! reads it at a non-zero offset only when some part wrote it since its last
//! exchange (every level starts dirty; rotation moves the flags with the
//! buffers). A stencil like Jacobi's therefore exchanges once per iteration.
//!
//! Reductions: the interpreter folds each work item (a row of the outermost
//! axis; in 1-D a run of 256 points) point by point from the identity, then
//! combines the items' partials in order, parts in order. A rank's share of an
//! item is contiguous in that order along the chain axis (the innermost axis in
//! 2-D, the middle one in 3-D, which is why 3-D programs with reductions may not
//! cut the innermost axis), so the ranks of a chain fold it in turn, each
//! continuing from the accumulators its predecessor sent. The finished partials
//! are gathered on every rank and combined in item order: `+` and `*` give the
//! single-process value to the last bit, and every rank takes the same branch
//! of the check.

use std::time::{Duration, Instant};

use mpi::traits::*;

use crate::analysis::footprint::Footprint;
use crate::exec::mpi::halo::Neighbourhood;
use crate::exec::mpi::layout::{Bounds, HaloBoxes};
use crate::exec::{ExecError, FieldState, RunSummary};
use crate::interp::{combine_values, Stepper};
use crate::ir::env::RunEnv;
use crate::ir::{Program, ScalarType, Value};

/// Points per work item of a 1-D part (the interpreter's chunk).
const ITEM_1D: i64 = 256;

/// What one rank's run did.
#[derive(Clone, Debug, Default)]
pub struct RankSummary {
    /// Iterations, reductions and the check, identical on every rank.
    pub summary: RunSummary,
    /// Time in the interpreter.
    pub compute: Duration,
    /// Time exchanging halos and combining reductions.
    pub communication: Duration,
    /// Bytes this rank sent.
    pub bytes_sent: u64,
    /// Bytes copied from the device to the host during the iterate (a GPU
    /// runner's: the faces exchanges send, whole levels before reductions and
    /// at the end); 0 on the host back-ends.
    pub device_bytes_down: u64,
    /// Bytes copied from the host to the device during the iterate (the ghost
    /// layers exchanges filled).
    pub device_bytes_up: u64,
}

/// Levels (field, level index) read at a non-zero offset and levels written.
#[derive(Default)]
struct PartLevels {
    halo: Vec<(usize, usize)>,
    written: Vec<(usize, usize)>,
}

fn part_levels(program: &Program, footprint: &Footprint) -> PartLevels {
    let level = |f: crate::ir::FieldId, t: i32| (f.0, program.fields[f.0].level_of(t));
    PartLevels {
        halo: footprint
            .reads
            .iter()
            .filter(|r| !r.only_center())
            .map(|r| level(r.field, r.time))
            .collect(),
        written: footprint
            .writes
            .iter()
            .map(|w| level(w.field, w.time))
            .collect(),
    }
}

fn to_bits(v: Value) -> u64 {
    match v {
        Value::Int(v) => v as u32 as u64,
        Value::Long(v) => v as u64,
        Value::Float(v) => v.to_bits() as u64,
        Value::Double(v) => v.to_bits(),
    }
}

fn from_bits(ty: ScalarType, bits: u64) -> Value {
    match ty {
        ScalarType::Int => Value::Int(bits as u32 as i32),
        ScalarType::Long => Value::Long(bits as i64),
        ScalarType::Float => Value::Float(f32::from_bits(bits as u32)),
        ScalarType::Double => Value::Double(f64::from_bits(bits)),
    }
}

/// What computes a rank's stencil parts: the interpreter, or generated code.
/// Every implementation computes each point as its back-end computes a whole
/// grid, so that the decomposed run matches the single-process one.
pub trait PartRunner {
    /// The back-end's name, for the summary.
    fn backend(&self) -> &'static str;

    /// Runs part `part` (stencil, part) of the rank's program on the points
    /// of its box inside `bounds`, on `state`'s current levels.
    fn run_part_on(
        &mut self,
        state: &mut FieldState,
        part: (usize, usize),
        bounds: &[(i64, i64)],
    ) -> Result<(), ExecError>;

    /// Waits for the work the runner started (kernels a GPU runs while the
    /// host goes on), so that the driver counts the wait as compute, not as
    /// the host copies that would otherwise wait for it.
    fn sync(&mut self) -> Result<(), ExecError> {
        Ok(())
    }

    /// Makes `state`'s copy of (field, level) current before the host reads
    /// it (an exchange, a reduction, the end of the run): a runner keeping
    /// levels elsewhere (a GPU) copies them back here.
    fn to_host(
        &mut self,
        _state: &mut FieldState,
        _level: (usize, usize),
    ) -> Result<(), ExecError> {
        Ok(())
    }

    /// Makes `state`'s copy of the boxes `boxes` (inclusive local bounds)
    /// of (field, level) current, before the host reads only them (the
    /// faces an exchange sends). By default the whole level
    /// ([`PartRunner::to_host`]).
    fn boxes_to_host(
        &mut self,
        state: &mut FieldState,
        level: (usize, usize),
        _boxes: &[Bounds],
    ) -> Result<(), ExecError> {
        self.to_host(state, level)
    }

    /// Says the host changed (field, level) anywhere; its copy was current.
    fn host_wrote(&mut self, _level: (usize, usize)) {}

    /// Says the host changed only the boxes `boxes` of (field, level) (the
    /// ghosts an exchange filled). By default as [`PartRunner::host_wrote`].
    fn host_wrote_boxes(
        &mut self,
        level: (usize, usize),
        _boxes: &[Bounds],
    ) -> Result<(), ExecError> {
        self.host_wrote(level);
        Ok(())
    }

    /// Bytes copied (device to host, host to device) so far, for a runner
    /// keeping levels on a device.
    fn transferred(&self) -> (u64, u64) {
        (0, 0)
    }

    /// Rotates the runner's own levels with `state`'s.
    fn rotate(&mut self) {}
}

/// Makes every level of `state` current ([`PartRunner::to_host`]).
fn all_to_host(runner: &mut dyn PartRunner, state: &mut FieldState) -> Result<(), ExecError> {
    for f in 0..state.fields.len() {
        for l in 0..state.fields[f].len() {
            runner.to_host(state, (f, l))?;
        }
    }
    Ok(())
}

/// The interpreter per rank.
pub struct InterpParts<'a> {
    /// The compiled parts.
    pub stepper: &'a Stepper,
    /// The rank's program.
    pub local: &'a Program,
    /// The rank's environment.
    pub local_env: &'a RunEnv,
}

impl PartRunner for InterpParts<'_> {
    fn backend(&self) -> &'static str {
        "interp"
    }

    fn run_part_on(
        &mut self,
        state: &mut FieldState,
        part: (usize, usize),
        bounds: &[(i64, i64)],
    ) -> Result<(), ExecError> {
        self.stepper
            .run_stencil_part_on(self.local, self.local_env, state, part, bounds);
        Ok(())
    }
}

/// Generated C per rank.
impl PartRunner for crate::exec::native::parts::PartKernel {
    fn backend(&self) -> &'static str {
        "c"
    }

    fn run_part_on(
        &mut self,
        state: &mut FieldState,
        part: (usize, usize),
        bounds: &[(i64, i64)],
    ) -> Result<(), ExecError> {
        crate::exec::native::parts::PartKernel::run_part_on(self, state, part, bounds)
    }
}

/// Generated OpenCL or CUDA per rank, levels resident on the device.
impl<D: crate::exec::host_plan::GpuDevice> PartRunner for crate::exec::gpu_parts::GpuParts<D> {
    fn backend(&self) -> &'static str {
        crate::exec::gpu_parts::GpuParts::backend(self)
    }

    fn run_part_on(
        &mut self,
        state: &mut FieldState,
        part: (usize, usize),
        bounds: &[(i64, i64)],
    ) -> Result<(), ExecError> {
        crate::exec::gpu_parts::GpuParts::run_part_on(self, state, part, bounds)
    }

    fn to_host(&mut self, state: &mut FieldState, level: (usize, usize)) -> Result<(), ExecError> {
        crate::exec::gpu_parts::GpuParts::to_host(self, state, level)
    }

    fn host_wrote(&mut self, level: (usize, usize)) {
        crate::exec::gpu_parts::GpuParts::host_wrote(self, level)
    }

    fn boxes_to_host(
        &mut self,
        state: &mut FieldState,
        level: (usize, usize),
        boxes: &[Bounds],
    ) -> Result<(), ExecError> {
        crate::exec::gpu_parts::GpuParts::boxes_to_host(self, state, level, boxes)
    }

    fn host_wrote_boxes(
        &mut self,
        level: (usize, usize),
        boxes: &[Bounds],
    ) -> Result<(), ExecError> {
        crate::exec::gpu_parts::GpuParts::host_wrote_boxes(self, level, boxes)
    }

    fn transferred(&self) -> (u64, u64) {
        crate::exec::gpu_parts::GpuParts::transferred(self)
    }

    fn sync(&mut self) -> Result<(), ExecError> {
        crate::exec::gpu_parts::GpuParts::sync(self)
    }

    fn rotate(&mut self) {
        crate::exec::gpu_parts::GpuParts::rotate(self)
    }
}

/// One rank's run of the iterate.
pub struct Driver<'a> {
    /// Where this rank is.
    pub neighbourhood: Neighbourhood<'a>,
    /// The program as written, and its environment (global sizes).
    pub program: &'a Program,
    /// The global environment.
    pub env: &'a RunEnv,
    /// The rank's program ([`Layout::local_program`](super::layout::Layout::local_program)).
    pub local: &'a Program,
    /// The rank's environment.
    pub local_env: &'a RunEnv,
}

impl Driver<'_> {
    /// Runs the iterate on `state` (the rank's arrays, owned points filled):
    /// stencil parts by `runner`, reductions folded by `stepper` (the
    /// interpreter's fold, on the same arrays, whatever computes the parts).
    pub fn run(
        &self,
        stepper: &Stepper,
        runner: &mut dyn PartRunner,
        state: &mut FieldState,
    ) -> Result<RankSummary, ExecError> {
        let mut out = RankSummary::default();
        let Some(iterate) = &self.local.iterate else {
            return Ok(out);
        };
        let stencil_levels: Vec<Vec<PartLevels>> = iterate
            .stencils
            .iter()
            .map(|s| {
                s.parts
                    .iter()
                    .map(|p| part_levels(self.local, &Footprint::of_body(self.local, &p.body)))
                    .collect()
            })
            .collect();
        let reduction_levels: Vec<Vec<PartLevels>> = iterate
            .reductions
            .iter()
            .map(|r| {
                r.parts
                    .iter()
                    .map(|p| part_levels(self.local, &Footprint::of_expr(self.local, &p.value)))
                    .collect()
            })
            .collect();
        let nb = &self.neighbourhood;
        let halo: Vec<HaloBoxes> = self
            .program
            .fields
            .iter()
            .map(|f| nb.layout.halo_boxes(&nb.coords, f.boundary))
            .collect();
        let (down_before, up_before) = runner.transferred();
        let mut dirty: Vec<Vec<bool>> = state.fields.iter().map(|l| vec![true; l.len()]).collect();
        let mut last: Vec<Option<Value>> = vec![None; iterate.reductions.len()];
        let started = Instant::now();
        for k in 1..=self.env.max_iters() {
            for (s, parts) in stencil_levels.iter().enumerate() {
                for (p, levels) in parts.iter().enumerate() {
                    self.stencil_part(
                        stepper,
                        runner,
                        (s, p),
                        levels,
                        state,
                        (&mut dirty, &halo),
                        &mut out,
                    )?;
                    for &(f, l) in &levels.written {
                        dirty[f][l] = true;
                    }
                }
            }
            let checked = self.env.every().is_none_or(|every| k % every == 0);
            let mut stop = false;
            if checked {
                if !iterate.reductions.is_empty() {
                    let t = Instant::now();
                    runner.sync()?;
                    out.compute += t.elapsed();
                    let t = Instant::now();
                    all_to_host(runner, state)?;
                    out.communication += t.elapsed();
                }
                let mut values = Vec::with_capacity(iterate.reductions.len());
                for (r, parts) in reduction_levels.iter().enumerate() {
                    for levels in parts {
                        self.refresh(runner, levels, state, (&mut dirty, &halo), &mut out)?;
                    }
                    values.push(self.reduce(stepper, state, r, &mut out));
                }
                if let Some(check) = &iterate.check {
                    stop = self
                        .env
                        .eval_with(&check.cond, &self.program.tables, &[], &values)
                        .is_true();
                }
                for (slot, v) in last.iter_mut().zip(values) {
                    *slot = Some(v);
                }
            }
            state.rotate();
            runner.rotate();
            for flags in &mut dirty {
                flags.rotate_left(1);
            }
            out.summary.iterations = k;
            if stop {
                out.summary.stopped_by_check = true;
                break;
            }
        }
        out.summary.reductions = iterate
            .reductions
            .iter()
            .zip(last)
            .map(|(r, v)| (r.name.clone(), v))
            .collect();
        let t = Instant::now();
        runner.sync()?;
        out.compute += t.elapsed();
        let t = Instant::now();
        all_to_host(runner, state)?;
        out.communication += t.elapsed();
        out.summary.times.compute = started.elapsed();
        let (down, up) = runner.transferred();
        out.device_bytes_down = down - down_before;
        out.device_bytes_up = up - up_before;
        Ok(out)
    }

    /// Runs a stencil part, exchanging first the dirty levels it reads at an
    /// offset; the part's interior is computed while the first exchange's
    /// messages are in flight, the rim once every ghost layer is filled.
    #[allow(clippy::too_many_arguments)]
    fn stencil_part(
        &self,
        stepper: &Stepper,
        parts: &mut dyn PartRunner,
        (s, p): (usize, usize),
        levels: &PartLevels,
        state: &mut FieldState,
        (dirty, halo): (&mut [Vec<bool>], &[HaloBoxes]),
        out: &mut RankSummary,
    ) -> Result<(), ExecError> {
        let mut stale: Vec<(usize, usize)> = Vec::new();
        for &(f, l) in &levels.halo {
            if dirty[f][l] && !stale.contains(&(f, l)) {
                stale.push((f, l));
            }
        }
        let nb = &self.neighbourhood;
        let split = stepper
            .stencil_part_box(s, p)
            .map(|bounds| nb.layout.split_interior(&nb.coords, bounds));
        let (inner, rim) = match (stale.is_empty(), split) {
            (_, None) => (None, Vec::new()),
            (true, Some(_)) => {
                // Nothing to wait for: the whole part at once.
                let bounds = stepper.stencil_part_box(s, p).expect("not empty").to_vec();
                let t = Instant::now();
                parts.run_part_on(state, (s, p), &bounds)?;
                out.compute += t.elapsed();
                return Ok(());
            }
            (false, Some(split)) => split,
        };
        let t = Instant::now();
        parts.sync()?;
        out.compute += t.elapsed();
        let t = Instant::now();
        for &(f, l) in &stale {
            parts.boxes_to_host(state, (f, l), &halo[f].read)?;
        }
        out.communication += t.elapsed();
        let mut overlapped = std::time::Duration::ZERO;
        let mut failed: Option<ExecError> = None;
        let mut interior = |state: &mut FieldState| {
            if let Some(inner) = &inner {
                let t = Instant::now();
                if let Err(e) = parts.run_part_on(state, (s, p), inner) {
                    failed = Some(e);
                }
                overlapped += t.elapsed();
            }
        };
        let t = Instant::now();
        let mut during: Option<&mut dyn FnMut(&mut FieldState)> = Some(&mut interior);
        for &(f, l) in &stale {
            out.bytes_sent += nb.exchange(
                state,
                (f, l),
                self.program.fields[f].boundary,
                during.take(),
            );
            dirty[f][l] = false;
        }
        if let Some(during) = during {
            during(state); // no exchange was due
        }
        let elapsed = t.elapsed();
        if let Some(e) = failed {
            return Err(e);
        }
        for &(f, l) in &stale {
            parts.host_wrote_boxes((f, l), &halo[f].written)?;
        }
        out.communication += elapsed.saturating_sub(overlapped);
        out.compute += overlapped;
        let t = Instant::now();
        for bounds in &rim {
            parts.run_part_on(state, (s, p), bounds)?;
        }
        out.compute += t.elapsed();
        Ok(())
    }

    /// Exchanges the dirty levels a part reads at an offset.
    fn refresh(
        &self,
        runner: &mut dyn PartRunner,
        levels: &PartLevels,
        state: &mut FieldState,
        (dirty, halo): (&mut [Vec<bool>], &[HaloBoxes]),
        out: &mut RankSummary,
    ) -> Result<(), ExecError> {
        for &(f, l) in &levels.halo {
            if dirty[f][l] {
                let t = Instant::now();
                out.bytes_sent += self.neighbourhood.exchange(
                    state,
                    (f, l),
                    self.program.fields[f].boundary,
                    None,
                );
                runner.host_wrote_boxes((f, l), &halo[f].written)?;
                dirty[f][l] = false;
                out.communication += t.elapsed();
            }
        }
        Ok(())
    }

    /// The work items rank `coords` touches in a part whose global box is
    /// `global`: an inclusive range of item indices, if any.
    fn items(&self, global: &[(i64, i64)], coords: &[usize]) -> Option<(i64, i64)> {
        let owned = self.neighbourhood.layout.owned(coords);
        let mine: Vec<(i64, i64)> = global
            .iter()
            .zip(&owned)
            .map(|(&(lo, hi), &(olo, ohi))| (lo.max(olo), hi.min(ohi)))
            .collect();
        if mine.iter().any(|(lo, hi)| lo > hi) {
            return None;
        }
        Some(if global.len() == 1 {
            (
                (mine[0].0 - global[0].0) / ITEM_1D,
                (mine[0].1 - global[0].0) / ITEM_1D,
            )
        } else {
            (mine[0].0 - global[0].0, mine[0].1 - global[0].0)
        })
    }

    /// Reduction `r` over all its parts, identical on every rank.
    fn reduce(
        &self,
        stepper: &Stepper,
        state: &mut FieldState,
        r: usize,
        out: &mut RankSummary,
    ) -> Value {
        let reduction = &self
            .program
            .iterate
            .as_ref()
            .expect("has an iterate")
            .reductions[r];
        let ty = reduction.ty;
        let identity = reduction.op.identity(ty);
        let nb = &self.neighbourhood;
        let rank = nb.layout.global.len();
        let chain_axis = if rank == 1 { 0 } else { 1 };
        let origin = nb.layout.origin(&nb.coords);
        let neighbour = |step: i64| {
            let c = nb.coords[chain_axis] as i64 + step;
            (0..nb.layout.dims[chain_axis] as i64)
                .contains(&c)
                .then(|| {
                    let mut coords = nb.coords.clone();
                    coords[chain_axis] = c as usize;
                    coords
                })
        };
        let (prev, next) = (neighbour(-1), neighbour(1));
        // (part, item, value bits) of the items whose fold ends here.
        let mut finished: Vec<u64> = Vec::new();
        for (p, part) in reduction.parts.iter().enumerate() {
            let global = self.env.subset_box(&part.subset);
            let Some(mine) = self.items(&global, &nb.coords) else {
                continue;
            };
            let shared = |other: &Option<Vec<usize>>| {
                other
                    .as_ref()
                    .and_then(|c| self.items(&global, c))
                    .map(|(lo, hi)| (lo.max(mine.0), hi.min(mine.1)))
                    .filter(|(lo, hi)| lo <= hi)
            };
            let mut seeds = vec![identity; (mine.1 - mine.0 + 1) as usize];
            if let Some((lo, hi)) = shared(&prev) {
                let t = Instant::now();
                let mut bits = vec![0u64; (hi - lo + 1) as usize];
                let from = nb.comm.coordinates_to_rank(
                    &prev
                        .as_ref()
                        .expect("shared")
                        .iter()
                        .map(|&c| c as i32)
                        .collect::<Vec<_>>(),
                );
                nb.comm
                    .process_at_rank(from)
                    .receive_into_with_tag(&mut bits[..], 100 + p as i32);
                for (i, b) in bits.into_iter().enumerate() {
                    seeds[(lo - mine.0) as usize + i] = from_bits(ty, b);
                }
                out.communication += t.elapsed();
            }
            let owned = nb.layout.owned(&nb.coords);
            let spans: Vec<(Vec<(i64, i64)>, Value)> = (mine.0..=mine.1)
                .zip(&seeds)
                .map(|(item, &seed)| {
                    let mut bounds: Vec<(i64, i64)> = global
                        .iter()
                        .zip(&owned)
                        .map(|(&(lo, hi), &(olo, ohi))| (lo.max(olo), hi.min(ohi)))
                        .collect();
                    if rank == 1 {
                        let start = global[0].0 + item * ITEM_1D;
                        bounds[0] = (bounds[0].0.max(start), bounds[0].1.min(start + ITEM_1D - 1));
                    } else {
                        let row = global[0].0 + item;
                        bounds[0] = (row, row);
                    }
                    let local = bounds
                        .iter()
                        .zip(&origin)
                        .map(|(&(lo, hi), &o)| (lo - o, hi - o))
                        .collect();
                    (local, seed)
                })
                .collect();
            let t = Instant::now();
            let accs = stepper.fold_reduction_part(self.local, self.local_env, state, r, p, &spans);
            out.compute += t.elapsed();
            let passed = shared(&next);
            for (item, acc) in (mine.0..=mine.1).zip(&accs) {
                if !passed.is_some_and(|(lo, hi)| (lo..=hi).contains(&item)) {
                    finished.extend([p as u64, item as u64, to_bits(*acc)]);
                }
            }
            if let Some((lo, hi)) = passed {
                let t = Instant::now();
                let bits: Vec<u64> = accs[(lo - mine.0) as usize..=(hi - mine.0) as usize]
                    .iter()
                    .map(|v| to_bits(*v))
                    .collect();
                let to = nb.comm.coordinates_to_rank(
                    &next
                        .as_ref()
                        .expect("shared")
                        .iter()
                        .map(|&c| c as i32)
                        .collect::<Vec<_>>(),
                );
                nb.comm
                    .process_at_rank(to)
                    .send_with_tag(&bits[..], 100 + p as i32);
                out.bytes_sent += bits.len() as u64 * 8;
                out.communication += t.elapsed();
            }
        }
        let t = Instant::now();
        let all = all_gather_u64(nb.comm, &finished);
        out.bytes_sent += finished.len() as u64 * 8;
        let mut partials: Vec<(u64, u64, u64)> =
            all.chunks_exact(3).map(|c| (c[0], c[1], c[2])).collect();
        partials.sort_unstable_by_key(|&(p, item, _)| (p, item));
        let total = partials.iter().fold(identity, |acc, &(_, _, bits)| {
            combine_values(reduction.op, acc, from_bits(ty, bits))
        });
        out.communication += t.elapsed();
        total
    }
}

/// Every rank's `local`, concatenated in rank order, on every rank.
pub fn all_gather_u64(comm: &impl Communicator, local: &[u64]) -> Vec<u64> {
    let size = comm.size() as usize;
    let mut counts = vec![0i32; size];
    comm.all_gather_into(&(local.len() as i32), &mut counts[..]);
    let displs: Vec<i32> = counts
        .iter()
        .scan(0, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect();
    let mut all = vec![0u64; counts.iter().map(|&c| c as usize).sum()];
    {
        let mut partition =
            mpi::datatype::PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
        comm.all_gather_varcount_into(local, &mut partition);
    }
    all
}
