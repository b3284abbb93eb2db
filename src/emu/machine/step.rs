//! One thread's operations, run until its next statement, barrier, shuffle
//! or end.

use crate::emu::{Finding, FindingKind};
use crate::front::cuda::ast::{BinOp, Builtin, Scalar};

use super::{
    describe, pop, Arrival, BlockState, Machine, Op, ShuffleKind, State, Stop, Thread, Value,
};
use crate::emu::value::call;

impl Machine<'_> {
    /// A finding at `site` that ends the launch.
    pub(super) fn stop(&self, kind: FindingKind, site: usize, message: String, help: &str) -> Stop {
        Box::new(Finding {
            kind,
            message,
            span: self.code.sites[site],
            other: None,
            help: help.to_string(),
        })
    }

    /// Runs one thread until the next statement, barrier or its end.
    pub(super) fn step_thread(
        &mut self,
        t: &mut Thread,
        tid: u32,
        b: &mut BlockState,
    ) -> Result<(), Stop> {
        let mut first = true;
        loop {
            self.report.steps += 1;
            self.count_step(t, b)?;
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
                Op::Binary(op, site) => self.binary(*op, *site, t, b)?,
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
                    self.store_global(*slot, *site, *elem, t, b)?
                }
                Op::SharedIndex { slot, site } => self.shared_index(*slot, *site, t, b)?,
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
                } => self.store_shared(*slot, *site, *elem, *fills, tid, t, b),
                Op::Barrier(site) => {
                    t.state = State::AtBarrier(*site);
                    return Ok(());
                }
                Op::Shuffle { kind, ty, site } => {
                    self.arrive_at_shuffle(*kind, *ty, *site, t, b)?;
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

    /// Counts one operation; the launch ends once the limit is passed.
    fn count_step(&mut self, t: &Thread, b: &BlockState) -> Result<(), Stop> {
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
        Ok(())
    }

    /// A binary operation on the two values on top of the stack; division by
    /// zero and out-of-range shifts end the launch.
    fn binary(&self, op: BinOp, site: usize, t: &mut Thread, b: &BlockState) -> Result<(), Stop> {
        let y = pop(t);
        let x = pop(t);
        match Value::binary(op, x, y) {
            Ok(v) => {
                t.stack.push(v);
                Ok(())
            }
            Err(what) => {
                let help = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    "keep the shift amount from 0 to the width minus 1 (31 for `int`, 63 for `long`), as in `x << (s & 31)`"
                } else {
                    "guard the divisor, as in `d != 0 ? x / d : 0`"
                };
                Err(self.stop(
                    FindingKind::Arithmetic,
                    site,
                    format!(
                        "{what} in thread {} of block {}",
                        describe(t.index),
                        describe(b.block)
                    ),
                    help,
                ))
            }
        }
    }

    /// The flat index of a shared access from the indices on the stack,
    /// each checked against its dimension.
    fn shared_index(
        &self,
        slot: usize,
        site: usize,
        t: &mut Thread,
        b: &BlockState,
    ) -> Result<(), Stop> {
        let dims = &self.kernel.slots[slot].dims;
        let at = t.stack.len().saturating_sub(dims.len());
        let indices: Vec<i64> = t.stack.split_off(at).iter().map(|v| v.as_i64()).collect();
        let mut flat = 0i64;
        for (d, (&i, &n)) in indices.iter().zip(dims).enumerate() {
            if i < 0 || i >= n {
                let name = &self.kernel.slots[slot].name;
                return Err(self.stop(
                    FindingKind::OutOfBounds,
                    site,
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
        Ok(())
    }

    /// Stores the value on the stack into a global element, which a shared
    /// copy then no longer holds.
    fn store_global(
        &mut self,
        slot: usize,
        site: usize,
        elem: Scalar,
        t: &mut Thread,
        b: &mut BlockState,
    ) -> Result<(), Stop> {
        let value = pop(t).convert(elem);
        let index = pop(t).as_i64();
        self.global(slot, index, site, t, b)?;
        if let Some(Some(data)) = self.globals.get_mut(slot) {
            data[index as usize] = value;
        }
        // The shared copy, if any, no longer holds this element's value.
        b.holder.remove(&(slot, index));
        t.stack.push(value);
        Ok(())
    }

    /// Stores the value on the stack into a shared slot, remembering which
    /// global element it copies when the store fills from one.
    #[allow(clippy::too_many_arguments)]
    fn store_shared(
        &mut self,
        slot: usize,
        site: usize,
        elem: Scalar,
        fills: bool,
        tid: u32,
        t: &mut Thread,
        b: &mut BlockState,
    ) {
        let value = pop(t).convert(elem);
        let flat = pop(t).as_i64() as usize;
        self.shared_use(slot, flat, true, site, tid, t, b);
        if let Some(array) = b.shared.get_mut(&slot) {
            array.data[flat] = value;
            if let Some(old) = array.holds[flat].take() {
                if b.holder.get(&old) == Some(&(slot, flat)) {
                    b.holder.remove(&old);
                }
            }
            if fills {
                if let Some(element) = t.last_global {
                    array.holds[flat] = Some(element);
                    b.holder.insert(element, (slot, flat));
                }
            }
        }
        t.stack.push(value);
    }

    /// The thread arrives at a shuffle with its mask, value, operand and
    /// width; the warp's exchange happens once every thread in it has.
    fn arrive_at_shuffle(
        &self,
        kind: ShuffleKind,
        ty: Scalar,
        site: usize,
        t: &mut Thread,
        b: &BlockState,
    ) -> Result<(), Stop> {
        let width = pop(t).as_i64();
        let operand = pop(t).as_i64();
        let value = pop(t).convert(ty);
        let mask = pop(t).as_i64() as u32;
        if !matches!(width, 1 | 2 | 4 | 8 | 16 | 32) {
            return Err(self.stop(
                FindingKind::Shuffle,
                site,
                format!(
                    "shuffle width {width} in thread {} of block {}: CUDA takes a power of two up to 32",
                    describe(t.index),
                    describe(b.block)
                ),
                "give a width of 1, 2, 4, 8, 16 or 32 (or leave it out)",
            ));
        }
        t.shuffle = Some(Arrival {
            kind,
            mask,
            value,
            operand,
            width: width as u32,
        });
        t.state = State::AtShuffle(site);
        Ok(())
    }
}
