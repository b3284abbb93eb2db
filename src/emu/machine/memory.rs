//! What a thread's memory accesses are checked against: global bounds,
//! races on shared slots within a barrier interval, and the profile rows of
//! marked reads.

use crate::emu::{Finding, FindingKind};
use crate::front::cuda::ast::{Builtin, Candidate};
use crate::synth::table::ProfileRow;

use super::{describe, BlockState, Machine, SlotUse, Stop, Thread, Value};

impl Machine<'_> {
    /// Checks a global access; returns the element's current value.
    pub(super) fn global(
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
    pub(super) fn shared_use(
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
    pub(super) fn profile(
        &mut self,
        read: usize,
        array: usize,
        index: i64,
        t: &Thread,
        b: &BlockState,
    ) {
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
