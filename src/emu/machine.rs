//! The block scheduler and the threads: memory, barriers, race detection and
//! the profiles of marked reads.

use std::collections::HashMap;

use crate::front::cuda::ast::{Kernel, Type};
use crate::synth::table::AccessProfile;

mod memory;
mod step;

use super::compile::{compile, Code, Op, ShuffleKind};
use super::value::Value;
use super::{Arg, CallError, Finding, FindingKind, Launch, Limits, Report};

/// Where a thread stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Running,
    /// Waiting at the barrier with this site.
    AtBarrier(usize),
    /// Waiting at the shuffle with this site for the other lanes of its warp.
    AtShuffle(usize),
    Done,
}

struct Thread {
    index: [u32; 3],
    pc: usize,
    stack: Vec<Value>,
    locals: Vec<Value>,
    state: State,
    /// The last global element read (array slot, index), for the stores
    /// that fill shared slots.
    last_global: Option<(usize, i64)>,
    /// At a shuffle: what the thread gives it.
    shuffle: Option<Arrival>,
}

/// What a lane brings to a shuffle.
#[derive(Clone, Copy, Debug)]
struct Arrival {
    kind: ShuffleKind,
    mask: u32,
    value: Value,
    operand: i64,
    width: u32,
}

/// The size of a warp.
const WARP: usize = 32;

/// Who touched a shared slot in the current barrier interval.
#[derive(Clone, Copy, Default)]
struct SlotUse {
    interval: u64,
    writer: Option<(u32, usize)>,
    reader: Option<(u32, usize)>,
    many_readers: bool,
}

/// One shared array of a block.
struct SharedArray {
    data: Vec<Value>,
    uses: Vec<SlotUse>,
    /// The global element (array slot, index) each slot was filled with.
    holds: Vec<Option<(usize, i64)>>,
}

/// A problem that stops the run.
type Stop = Box<Finding>;

struct Machine<'a> {
    kernel: &'a Kernel,
    code: Code,
    launch: Launch,
    limits: Limits,
    globals: Vec<Option<Vec<Value>>>,
    scalars: Vec<Value>,
    report: Report,
    /// Races reported, by (site, other site), so each is named once.
    races_seen: std::collections::HashSet<(usize, usize)>,
}

pub(super) fn run(
    kernel: &Kernel,
    launch: Launch,
    args: &mut [Arg],
    limits: Limits,
) -> Result<Report, CallError> {
    if args.len() != kernel.params.len() {
        return Err(CallError::ArgumentCount {
            kernel: kernel.name.to_string(),
            params: kernel.params.iter().map(|p| p.name.to_string()).collect(),
            given: args.len(),
        });
    }
    let threads_per_block: u64 = launch.block.iter().map(|&b| u64::from(b)).product();
    let blocks: u64 = launch.grid.iter().map(|&g| u64::from(g)).product();
    if threads_per_block == 0 || blocks == 0 {
        return Err(CallError::EmptyLaunch);
    }
    if threads_per_block > 1024 || launch.block[2] > 64 {
        return Err(CallError::BlockTooLarge {
            block: launch.block,
        });
    }
    if let Some(bound) = kernel.launch_bounds {
        if threads_per_block > bound {
            return Err(CallError::LaunchBounds {
                threads: threads_per_block,
                bound,
            });
        }
    }
    if threads_per_block.saturating_mul(blocks) > limits.max_threads {
        return Err(CallError::TooManyThreads {
            threads: threads_per_block * blocks,
            limit: limits.max_threads,
        });
    }
    let mut globals = Vec::new();
    let mut scalars = Vec::new();
    for (param, arg) in kernel.params.iter().zip(args.iter_mut()) {
        match (param.ty, arg) {
            (Type::Pointer(elem), Arg::Array(data)) => {
                globals.push(Some(data.iter().map(|v| v.convert(elem)).collect()));
                scalars.push(Value::Int(0));
            }
            (Type::Scalar(s), Arg::Scalar(v)) => {
                globals.push(None);
                scalars.push(v.convert(s));
            }
            (Type::Pointer(_), _) => return Err(CallError::ArrayExpected(param.name.to_string())),
            _ => return Err(CallError::ScalarExpected(param.name.to_string())),
        }
    }
    let mut machine = Machine {
        kernel,
        code: compile(kernel),
        launch,
        limits,
        globals,
        scalars,
        report: Report::default(),
        races_seen: Default::default(),
    };
    machine.report.profiles = kernel
        .marked
        .iter()
        .map(|read| AccessProfile {
            access: read.text.clone(),
            shared: kernel.slots[read.shared].name.clone(),
            shared_dims: kernel.slots[read.shared].dims.clone(),
            candidates: read.candidate_names.clone(),
            rows: Vec::new(),
        })
        .collect();
    'grid: for bz in 0..launch.grid[2] {
        for by in 0..launch.grid[1] {
            for bx in 0..launch.grid[0] {
                if let Err(stop) = machine.block([bx, by, bz]) {
                    machine.report.findings.push(*stop);
                    break 'grid;
                }
                if machine.report.findings.len() >= limits.max_findings {
                    break 'grid;
                }
            }
        }
    }
    for (arg, global) in args.iter_mut().zip(machine.globals) {
        if let (Arg::Array(data), Some(result)) = (arg, global) {
            *data = result;
        }
    }
    Ok(machine.report)
}

fn describe(index: [u32; 3]) -> String {
    format!("({},{},{})", index[0], index[1], index[2])
}

impl Machine<'_> {
    fn block(&mut self, block: [u32; 3]) -> Result<(), Stop> {
        let dims = self.launch.block;
        let mut threads = Vec::new();
        for z in 0..dims[2] {
            for y in 0..dims[1] {
                for x in 0..dims[0] {
                    let mut locals: Vec<Value> = self.scalars.clone();
                    locals.resize(self.code.slots, Value::Int(0));
                    threads.push(Thread {
                        index: [x, y, z],
                        pc: 0,
                        stack: Vec::new(),
                        locals,
                        state: State::Running,
                        last_global: None,
                        shuffle: None,
                    });
                }
            }
        }
        let mut shared: HashMap<usize, SharedArray> = HashMap::new();
        for (slot, info) in self.kernel.slots.iter().enumerate() {
            if let Type::Shared(elem) = info.ty {
                let len = info.dims.iter().product::<i64>().max(0) as usize;
                shared.insert(
                    slot,
                    SharedArray {
                        data: vec![Value::zero(elem); len],
                        uses: vec![SlotUse::default(); len],
                        holds: vec![None; len],
                    },
                );
            }
        }
        // Which shared slot holds a global element, per (array, index).
        let mut holder: HashMap<(usize, i64), (usize, usize)> = HashMap::new();
        let mut interval = 1u64;
        let mut block_state = BlockState {
            block,
            shared: &mut shared,
            holder: &mut holder,
            interval,
        };
        loop {
            let mut any_ran = false;
            for (tid, thread) in threads.iter_mut().enumerate() {
                if thread.state == State::Running {
                    any_ran = true;
                    self.step_thread(thread, tid as u32, &mut block_state)?;
                    if self.report.findings.len() >= self.limits.max_findings {
                        return Ok(());
                    }
                }
            }
            if self.shuffles(&mut threads, block, false)? {
                continue;
            }
            if any_ran {
                continue;
            }
            // Nobody runs: a shuffle some lane never reaches is an error.
            self.shuffles(&mut threads, block, true)?;
            // Everyone is done or waits at a barrier.
            let waiting: Vec<usize> = (0..threads.len())
                .filter(|&t| matches!(threads[t].state, State::AtBarrier(_)))
                .collect();
            let Some(&first) = waiting.first() else {
                return Ok(());
            };
            let State::AtBarrier(site) = threads[first].state else {
                return Ok(());
            };
            let span = self.code.sites[site];
            if let Some(done) = threads.iter().find(|t| t.state == State::Done) {
                return Err(Box::new(Finding {
                    kind: FindingKind::Barrier,
                    message: format!(
                        "block {}: thread {} waits at this barrier, but thread {} has finished without reaching it",
                        describe(block),
                        describe(threads[first].index),
                        describe(done.index)
                    ),
                    span,
                    other: None,
                    help: "every thread of a block must reach each `__syncthreads()`: move it out of the condition or early `return`".to_string(),
                }));
            }
            if let Some(&other) = waiting
                .iter()
                .find(|&&t| threads[t].state != State::AtBarrier(site))
            {
                let State::AtBarrier(other_site) = threads[other].state else {
                    return Ok(());
                };
                return Err(Box::new(Finding {
                    kind: FindingKind::Barrier,
                    message: format!(
                        "block {}: thread {} waits at this barrier, thread {} at another (divergent control flow)",
                        describe(block),
                        describe(threads[first].index),
                        describe(threads[other].index)
                    ),
                    span,
                    other: Some((self.code.sites[other_site], "the other barrier".to_string())),
                    help: "put `__syncthreads()` where every thread of the block reaches it, outside conditions that differ between threads".to_string(),
                }));
            }
            interval += 1;
            block_state.interval = interval;
            for thread in &mut threads {
                thread.state = State::Running;
                thread.pc += 1;
            }
        }
    }

    /// Completes the shuffles whose lanes have all arrived; returns whether
    /// any did. With `stuck` (no thread can run), a shuffle still waiting is
    /// reported.
    fn shuffles(&self, threads: &mut [Thread], block: [u32; 3], stuck: bool) -> Result<bool, Stop> {
        let mut released = false;
        for warp_start in (0..threads.len()).step_by(WARP) {
            let lanes = warp_start..(warp_start + WARP).min(threads.len());
            let Some(first) = lanes
                .clone()
                .find(|&t| matches!(threads[t].state, State::AtShuffle(_)))
            else {
                continue;
            };
            let State::AtShuffle(site) = threads[first].state else {
                continue;
            };
            let Some(arrival) = threads[first].shuffle else {
                continue;
            };
            let lane_of = |t: usize| (t - warp_start) as u32;
            let in_mask = |t: usize| arrival.mask & (1u32 << lane_of(t)) != 0;
            let shuffle_stop = |message: String, help: &str| {
                Box::new(Finding {
                    kind: FindingKind::Shuffle,
                    message,
                    span: self.code.sites[site],
                    other: None,
                    help: help.to_string(),
                })
            };
            let warp = warp_start / WARP;
            // The lanes that must take part: those of the mask still running.
            let mut waiting_for = None;
            for t in lanes.clone() {
                let state = threads[t].state;
                if state == State::Done {
                    continue;
                }
                let arrived = state == State::AtShuffle(site);
                if arrived && !in_mask(t) {
                    return Err(shuffle_stop(
                        format!(
                            "block {}: lane {} of warp {warp} reaches this shuffle, but the mask {:#010x} does not name it",
                            describe(block),
                            lane_of(t),
                            arrival.mask
                        ),
                        "give every lane that calls the shuffle a mask naming it (all lanes: `0xffffffff`)",
                    ));
                }
                if in_mask(t) && !arrived {
                    waiting_for = Some(t);
                    break;
                }
            }
            if let Some(t) = waiting_for {
                if stuck {
                    let where_ = match threads[t].state {
                        State::AtBarrier(_) => "waits at a barrier",
                        State::AtShuffle(_) => "waits at another shuffle",
                        _ => "never gets here",
                    };
                    return Err(shuffle_stop(
                        format!(
                            "block {}: lanes of warp {warp} wait at this shuffle, but lane {} of its mask {where_}",
                            describe(block),
                            lane_of(t)
                        ),
                        "every lane the mask names must reach the same shuffle: call it outside conditions that differ between those lanes",
                    ));
                }
                continue;
            }
            // Everyone is here: exchange the values given.
            let given: Vec<Option<Arrival>> = lanes
                .clone()
                .map(|t| {
                    (threads[t].state == State::AtShuffle(site))
                        .then_some(threads[t].shuffle)
                        .flatten()
                })
                .collect();
            for t in lanes.clone() {
                let Some(mine) = given[t - warp_start] else {
                    continue;
                };
                let lane = lane_of(t);
                let source = mine.kind.source(lane, mine.operand, mine.width);
                let value = match given.get(source as usize).copied().flatten() {
                    Some(theirs) if arrival.mask & (1u32 << source) != 0 => theirs.value,
                    _ => {
                        let why = if warp_start + source as usize >= threads.len() {
                            "beyond the block's threads"
                        } else if arrival.mask & (1u32 << source) == 0 {
                            "outside the mask"
                        } else {
                            "finished"
                        };
                        return Err(shuffle_stop(
                            format!(
                                "block {}: lane {lane} of warp {warp} reads lane {source}, which takes no part in this shuffle ({why}): CUDA leaves the value undefined",
                                describe(block)
                            ),
                            "read only lanes that call the shuffle (a block of fewer than 32 threads has fewer lanes; guard the shuffle by the lane count)",
                        ));
                    }
                };
                let thread = &mut threads[t];
                thread.stack.push(value);
                thread.shuffle = None;
                thread.state = State::Running;
                thread.pc += 1;
                released = true;
            }
        }
        Ok(released)
    }
}

struct BlockState<'s> {
    block: [u32; 3],
    shared: &'s mut HashMap<usize, SharedArray>,
    holder: &'s mut HashMap<(usize, i64), (usize, usize)>,
    interval: u64,
}

fn pop(t: &mut Thread) -> Value {
    t.stack.pop().unwrap_or(Value::Int(0))
}
