//! Shared access to the field buffers from the threads that run a part.
//!
//! The threads of one part read and write the same buffers at once, so they
//! hold raw pointers instead of references. This is sound because of what
//! [`check_inputs`](crate::data::check_inputs) checked before the run: every
//! store lands inside its grid, every read of a `boundary none` field too, and
//! within one part every access to a time level that the part writes uses one
//! and the same offset, so two different points never touch the same element of
//! a written level. Reads of other levels race with nothing. The element type
//! and the store bounds are asserted again per chunk (a few comparisons per
//! row), so that a broken invariant panics instead of corrupting memory.

use crate::data::{Buffer, FieldState, ReadInPlace};
use crate::interp::compile::Access;
use crate::interp::regs::{Chunk, RegElem};
use crate::ir::{BoundaryMode, FieldId, Program, ScalarType};

/// One field's levels and geometry.
struct FieldView {
    /// Start of each level's elements (of the field's type).
    levels: Vec<*mut u8>,
    ty: ScalarType,
    dims: Vec<i64>,
    strides: Vec<i64>,
    boundary: BoundaryMode,
}

/// Raw views of every field's buffers for the duration of one iteration.
pub(crate) struct FieldViews {
    fields: Vec<FieldView>,
}

// SAFETY: the pointers stay valid while the `FieldViews` lives (it is built from
// `&mut FieldState` and dropped before the state is touched again: buffers are
// neither resized nor moved meanwhile), and concurrent use is race-free per the
// module documentation: in a part, points touch disjoint elements of every
// level the part writes.
unsafe impl Send for FieldViews {}
// SAFETY: as for `Send`.
unsafe impl Sync for FieldViews {}

fn level_ptr(buffer: &mut Buffer) -> *mut u8 {
    match buffer {
        Buffer::Int(v) => v.as_mut_ptr().cast(),
        Buffer::Long(v) => v.as_mut_ptr().cast(),
        Buffer::Float(v) => v.as_mut_ptr().cast(),
        Buffer::Double(v) => v.as_mut_ptr().cast(),
    }
}

impl FieldViews {
    /// Views of `state`, whose buffers have been checked against the program
    /// (types, lengths, number of levels) and `grid_dims`.
    pub(crate) fn new(
        program: &Program,
        grid_dims: &[Vec<usize>],
        state: &mut FieldState,
        read_in_place: Option<&ReadInPlace>,
    ) -> FieldViews {
        let fields = program
            .fields
            .iter()
            .zip(&mut state.fields)
            .enumerate()
            .map(|(f, (field, levels))| {
                let dims: Vec<i64> = grid_dims[field.grid.0].iter().map(|&d| d as i64).collect();
                let mut strides = vec![1i64; dims.len()];
                for a in (0..dims.len().saturating_sub(1)).rev() {
                    strides[a] = strides[a + 1] * dims[a + 1];
                }
                FieldView {
                    // A field read in place is never stored into (checked by
                    // `check_inputs_in_place`): its levels are all the input.
                    levels: match read_in_place.and_then(|r| r.data(FieldId(f))) {
                        Some(data) => vec![data.cast_mut(); levels.len()],
                        None => levels.iter_mut().map(level_ptr).collect(),
                    },
                    ty: field.ty,
                    dims,
                    strides,
                    boundary: field.boundary,
                }
            })
            .collect();
        FieldViews { fields }
    }

    /// Reads the chunk's elements at `access` into `dst` (boundary mode applied).
    #[inline]
    pub(crate) fn load<T: RegElem>(&self, access: &Access, chunk: &Chunk, dst: &mut [T]) {
        let view = &self.fields[access.field];
        assert_eq!(view.ty, T::TY, "a field read or written as another type");
        let base_ptr = view.levels[access.level] as *const T;
        let rank = view.dims.len();
        let mut base = 0i64;
        for a in 0..rank - 1 {
            match view
                .boundary
                .resolve(chunk.outer[a].wrapping_add(access.offset[a]), view.dims[a])
            {
                Some(i) => base += i * view.strides[a],
                None => {
                    dst.fill(T::default());
                    return;
                }
            }
        }
        let n = view.dims[rank - 1];
        // Coordinates are 64-bit and wrap, as in generated code (docs/src/semantics.md,
        // "Execution semantics"): an offset near the `long` limits is no panic.
        let start = chunk.x0.wrapping_add(access.offset[rank - 1]);
        if start >= 0
            && start
                .checked_add(dst.len() as i64)
                .is_some_and(|end| end <= n)
        {
            // SAFETY: `base + start .. + len` lies inside the level (all axes in
            // range), and no other thread writes these elements (module docs).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    base_ptr.add((base + start) as usize),
                    dst.as_mut_ptr(),
                    dst.len(),
                );
            }
        } else {
            for (i, d) in dst.iter_mut().enumerate() {
                *d = match view.boundary.resolve(start.wrapping_add(i as i64), n) {
                    // SAFETY: `resolve` returns an index inside `0..n`.
                    Some(x) => unsafe { base_ptr.add((base + x) as usize).read() },
                    None => T::default(),
                };
            }
        }
    }

    /// Writes `values` to the chunk's elements at `access` (inside the grid).
    #[inline]
    pub(crate) fn store<T: RegElem>(&self, access: &Access, chunk: &Chunk, values: &[T]) {
        let view = &self.fields[access.field];
        assert_eq!(view.ty, T::TY, "a field read or written as another type");
        let base_ptr = view.levels[access.level] as *mut T;
        let rank = view.dims.len();
        let mut base = 0i64;
        for a in 0..rank - 1 {
            let i = chunk.outer[a] + access.offset[a];
            assert!((0..view.dims[a]).contains(&i), "store outside the grid");
            base += i * view.strides[a];
        }
        let start = chunk.x0 + access.offset[rank - 1];
        assert!(
            start >= 0 && start + values.len() as i64 <= view.dims[rank - 1],
            "store outside the grid"
        );
        // SAFETY: the asserts above put every element inside the level, and
        // only this point writes these elements (module docs).
        unsafe {
            std::ptr::copy_nonoverlapping(
                values.as_ptr(),
                base_ptr.add((base + start) as usize),
                values.len(),
            );
        }
    }
}
