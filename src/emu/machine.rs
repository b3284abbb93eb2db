//! The block scheduler and the threads: memory, barriers, race detection and
//! the profiles of marked reads.

use std::collections::HashMap;

use crate::front::cuda::ast::{BinOp, Builtin, Candidate, Kernel, Type};
use crate::synth::table::{AccessProfile, ProfileRow};

use super::compile::{compile, Code, Op, ShuffleKind};
use super::value::{call, Value};
use super::{Arg, Finding, FindingKind, Launch, Limits, Report};

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
) -> Result<Report, String> {
    if args.len() != kernel.params.len() {
        return Err(format!(
            "kernel `{}` takes {} arguments ({}), given {}",
            kernel.name,
            kernel.params.len(),
            kernel
                .params
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            args.len()
        ));
    }
    let threads_per_block: u64 = launch.block.iter().map(|&b| u64::from(b)).product();
    let blocks: u64 = launch.grid.iter().map(|&g| u64::from(g)).product();
    if threads_per_block == 0 || blocks == 0 {
        return Err("grid and block sizes must be at least 1 along each axis".to_string());
    }
    if threads_per_block > 1024 || launch.block[2] > 64 {
        return Err(format!(
            "a block of {}x{}x{} threads is more than CUDA allows (1024 threads, at most 64 along z)",
            launch.block[0], launch.block[1], launch.block[2]
        ));
    }
    if let Some(bound) = kernel.launch_bounds {
        if threads_per_block > bound {
            return Err(format!(
                "a block of {threads_per_block} threads exceeds the kernel's __launch_bounds__({bound})"
            ));
        }
    }
    if threads_per_block.saturating_mul(blocks) > limits.max_threads {
        return Err(format!(
            "{} threads in all is more than the emulator's limit of {}; use a smaller grid",
            threads_per_block * blocks,
            limits.max_threads
        ));
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
            (Type::Pointer(_), _) => {
                return Err(format!(
                    "parameter `{}` is a pointer: give it an array",
                    param.name
                ))
            }
            _ => {
                return Err(format!(
                    "parameter `{}` is a scalar: give it a value",
                    param.name
                ))
            }
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

    fn stop(&self, kind: FindingKind, site: usize, message: String, help: &str) -> Stop {
        Box::new(Finding {
            kind,
            message,
            span: self.code.sites[site],
            other: None,
            help: help.to_string(),
        })
    }

    /// Runs one thread until the next statement, barrier or its end.
    fn step_thread(&mut self, t: &mut Thread, tid: u32, b: &mut BlockState) -> Result<(), Stop> {
        let mut first = true;
        loop {
            self.report.steps += 1;
            if self.report.steps > self.limits.max_steps {
                let span = self.kernel.name_span;
                return Err(Box::new(Finding {
                    kind: FindingKind::Runaway,
                    message: format!(
                        "the kernel ran more than {} operations (block {}, thread {})",
                        self.limits.max_steps,
                        describe(b.block),
                        describe(t.index)
                    ),
                    span,
                    other: None,
                    help: "check the loops' conditions, or emulate a smaller grid".to_string(),
                }));
            }
            let op = &self.code.ops[t.pc].clone();
            match op {
                Op::Statement => {
                    if !first {
                        return Ok(());
                    }
                }
                Op::Push(v) => t.stack.push(*v),
                Op::Load(slot) => t.stack.push(t.locals[*slot]),
                Op::Store(slot, ty) => {
                    let v = pop(t).convert(*ty);
                    t.locals[*slot] = v;
                    t.stack.push(v);
                }
                Op::Builtin(which, axis) => {
                    let v = match which {
                        Builtin::ThreadIdx => t.index[*axis],
                        Builtin::BlockIdx => b.block[*axis],
                        Builtin::BlockDim => self.launch.block[*axis],
                        Builtin::GridDim => self.launch.grid[*axis],
                    };
                    t.stack.push(Value::UInt(v));
                }
                Op::Convert(to) => {
                    let v = pop(t).convert(*to);
                    t.stack.push(v);
                }
                Op::Unary(op) => {
                    let v = pop(t).unary(*op);
                    t.stack.push(v);
                }
                Op::Binary(op, site) => {
                    let y = pop(t);
                    let x = pop(t);
                    match Value::binary(*op, x, y) {
                        Ok(v) => t.stack.push(v),
                        Err(what) => {
                            let help = if matches!(op, BinOp::Shl | BinOp::Shr) {
                                "keep the shift amount from 0 to the width minus 1 (31 for `int`, 63 for `long`), as in `x << (s & 31)`"
                            } else {
                                "guard the divisor, as in `d != 0 ? x / d : 0`"
                            };
                            return Err(self.stop(
                                FindingKind::Arithmetic,
                                *site,
                                format!(
                                    "{what} in thread {} of block {}",
                                    describe(t.index),
                                    describe(b.block)
                                ),
                                help,
                            ));
                        }
                    }
                }
                Op::Pop => {
                    pop(t);
                }
                Op::Dup => {
                    let v = t.stack.last().copied().unwrap_or(Value::Int(0));
                    t.stack.push(v);
                }
                Op::Jump(target) => {
                    t.pc = *target;
                    first = false;
                    continue;
                }
                Op::JumpIfFalse(target) => {
                    if !pop(t).truth() {
                        t.pc = *target;
                        first = false;
                        continue;
                    }
                }
                Op::Call(name, ty, arity) => {
                    let at = t.stack.len().saturating_sub(*arity);
                    let args: Vec<Value> = t.stack.split_off(at);
                    t.stack.push(call(name, *ty, &args));
                }
                Op::LoadGlobal { slot, site, marked } => {
                    let index = pop(t).as_i64();
                    let value = self.global(*slot, index, *site, t, b)?;
                    t.last_global = Some((*slot, index));
                    if let Some(read) = marked {
                        self.profile(*read, *slot, index, t, b);
                    }
                    t.stack.push(value);
                }
                Op::StoreGlobal { slot, site, elem } => {
                    let value = pop(t).convert(*elem);
                    let index = pop(t).as_i64();
                    self.global(*slot, index, *site, t, b)?;
                    if let Some(Some(data)) = self.globals.get_mut(*slot) {
                        data[index as usize] = value;
                    }
                    // The shared copy, if any, no longer holds this element's value.
                    b.holder.remove(&(*slot, index));
                    t.stack.push(value);
                }
                Op::SharedIndex { slot, site } => {
                    let dims = &self.kernel.slots[*slot].dims;
                    let at = t.stack.len().saturating_sub(dims.len());
                    let indices: Vec<i64> =
                        t.stack.split_off(at).iter().map(|v| v.as_i64()).collect();
                    let mut flat = 0i64;
                    for (d, (&i, &n)) in indices.iter().zip(dims).enumerate() {
                        if i < 0 || i >= n {
                            let name = &self.kernel.slots[*slot].name;
                            return Err(self.stop(
                                FindingKind::OutOfBounds,
                                *site,
                                format!(
                                    "shared `{name}` indexed out of bounds: index {i} of dimension {d} (size {n}), thread {} of block {}",
                                    describe(t.index),
                                    describe(b.block)
                                ),
                                "keep shared indices inside the declared sizes (guard the access, or enlarge the array)",
                            ));
                        }
                        flat = flat * n + i;
                    }
                    t.stack.push(Value::Long(flat));
                }
                Op::LoadShared { slot, site } => {
                    let flat = pop(t).as_i64() as usize;
                    self.shared_use(*slot, flat, false, *site, tid, t, b);
                    let v = b.shared.get(slot).map_or(Value::Int(0), |a| a.data[flat]);
                    t.stack.push(v);
                }
                Op::StoreShared {
                    slot,
                    site,
                    elem,
                    fills,
                } => {
                    let value = pop(t).convert(*elem);
                    let flat = pop(t).as_i64() as usize;
                    self.shared_use(*slot, flat, true, *site, tid, t, b);
                    if let Some(array) = b.shared.get_mut(slot) {
                        array.data[flat] = value;
                        if let Some(old) = array.holds[flat].take() {
                            if b.holder.get(&old) == Some(&(*slot, flat)) {
                                b.holder.remove(&old);
                            }
                        }
                        if *fills {
                            if let Some(element) = t.last_global {
                                array.holds[flat] = Some(element);
                                b.holder.insert(element, (*slot, flat));
                            }
                        }
                    }
                    t.stack.push(value);
                }
                Op::Barrier(site) => {
                    t.state = State::AtBarrier(*site);
                    return Ok(());
                }
                Op::Shuffle { kind, ty, site } => {
                    let width = pop(t).as_i64();
                    let operand = pop(t).as_i64();
                    let value = pop(t).convert(*ty);
                    let mask = pop(t).as_i64() as u32;
                    if !matches!(width, 1 | 2 | 4 | 8 | 16 | 32) {
                        return Err(self.stop(
                            FindingKind::Shuffle,
                            *site,
                            format!(
                                "shuffle width {width} in thread {} of block {}: CUDA takes a power of two up to 32",
                                describe(t.index),
                                describe(b.block)
                            ),
                            "give a width of 1, 2, 4, 8, 16 or 32 (or leave it out)",
                        ));
                    }
                    t.shuffle = Some(Arrival {
                        kind: *kind,
                        mask,
                        value,
                        operand,
                        width: width as u32,
                    });
                    t.state = State::AtShuffle(*site);
                    return Ok(());
                }
                Op::Exit => {
                    t.state = State::Done;
                    return Ok(());
                }
            }
            first = false;
            t.pc += 1;
        }
    }

    /// Checks a global access; returns the element's current value.
    fn global(
        &self,
        slot: usize,
        index: i64,
        site: usize,
        t: &Thread,
        b: &BlockState,
    ) -> Result<Value, Stop> {
        let data = self.globals.get(slot).and_then(Option::as_ref);
        let len = data.map_or(0, Vec::len);
        if index < 0 || index as usize >= len {
            let name = &self.kernel.slots[slot].name;
            return Err(self.stop(
                FindingKind::OutOfBounds,
                site,
                format!(
                    "global `{name}` indexed out of bounds: index {index}, {len} elements, thread {} of block {}",
                    describe(t.index),
                    describe(b.block)
                ),
                "guard the access with the array's size, or pass a larger array",
            ));
        }
        Ok(data.map_or(Value::Int(0), |d| d[index as usize]))
    }

    /// Records a use of a shared slot, reporting a race with another thread's
    /// use in the same barrier interval.
    #[allow(clippy::too_many_arguments)]
    fn shared_use(
        &mut self,
        slot: usize,
        flat: usize,
        write: bool,
        site: usize,
        tid: u32,
        t: &Thread,
        b: &mut BlockState,
    ) {
        let Some(array) = b.shared.get_mut(&slot) else {
            return;
        };
        let used = &mut array.uses[flat];
        if used.interval != b.interval {
            *used = SlotUse {
                interval: b.interval,
                ..SlotUse::default()
            };
        }
        let mut conflict = None;
        if let Some((w, w_site)) = used.writer {
            if w != tid {
                conflict = Some((w, w_site, "wrote"));
            }
        }
        if write && conflict.is_none() {
            if let Some((r, r_site)) = used.reader {
                if r != tid || used.many_readers {
                    conflict = Some((r, r_site, "read"));
                }
            }
        }
        if write {
            used.writer = Some((tid, site));
        } else {
            match used.reader {
                None => used.reader = Some((tid, site)),
                Some((r, _)) if r != tid => used.many_readers = true,
                _ => {}
            }
        }
        let Some((other, other_site, how)) = conflict else {
            return;
        };
        if !self.races_seen.insert((site, other_site)) {
            return;
        }
        let dims = self.launch.block;
        let other_index = [
            other % dims[0],
            (other / dims[0]) % dims[1],
            other / (dims[0] * dims[1]),
        ];
        let name = &self.kernel.slots[slot].name;
        self.report.findings.push(Finding {
            kind: FindingKind::Race,
            message: format!(
                "race on shared `{name}` slot {flat}: thread {} {} it here, thread {} {how} it with no `__syncthreads()` between (block {})",
                describe(t.index),
                if write { "writes" } else { "reads" },
                describe(other_index),
                describe(b.block)
            ),
            span: self.code.sites[site],
            other: Some((self.code.sites[other_site], format!("thread {} {how} it here", describe(other_index)))),
            help: "put `__syncthreads()` between the store and the other threads' reads (and before the slot is overwritten)".to_string(),
        });
    }

    /// Adds a profile row for marked read `read` of `array[index]`.
    fn profile(&mut self, read: usize, array: usize, index: i64, t: &Thread, b: &BlockState) {
        let info = &self.kernel.marked[read];
        let values = info
            .candidates
            .iter()
            .map(|c| match c {
                Candidate::Builtin(which, axis) => i64::from(match which {
                    Builtin::ThreadIdx => t.index[*axis],
                    Builtin::BlockIdx => b.block[*axis],
                    Builtin::BlockDim => self.launch.block[*axis],
                    Builtin::GridDim => self.launch.grid[*axis],
                }),
                Candidate::Slot(slot) => t.locals[*slot].as_i64(),
            })
            .collect();
        let slot = b.holder.get(&(array, index)).and_then(|&(shared, flat)| {
            if shared != info.shared {
                return None;
            }
            let dims = &self.kernel.slots[shared].dims;
            let mut rest = flat as i64;
            let mut slot = vec![0; dims.len()];
            for (d, &n) in dims.iter().enumerate().rev() {
                slot[d] = rest % n;
                rest /= n;
            }
            Some(slot)
        });
        if let Some(profile) = self.report.profiles.get_mut(read) {
            profile.rows.push(ProfileRow { values, slot });
        }
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
