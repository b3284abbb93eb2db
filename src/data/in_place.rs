//! Inputs read in the caller's memory: the fields a program only reads (no
//! stencil stores into them) need not be copied into the run's buffers; the
//! interpreter and the C back-end read them where the caller holds them. The
//! other back-ends copy them into the state first ([`ReadInPlace::copy_into`]).
//!
//! The state keeps its levels for such a field (one per time level, as
//! [`check_inputs`](crate::data::check_inputs) wants) but they are empty and
//! never read; the field's values after the run are the input's.

use crate::analysis::footprint::Footprint;
use crate::data::{Buffer, ExecError, FieldState};
use crate::ir::{FieldId, Program, ScalarType};

/// One field's input in the caller's memory.
#[derive(Clone, Copy, Debug)]
struct Borrowed {
    field: FieldId,
    data: *const u8,
    len: usize,
    ty: ScalarType,
}

/// The fields whose input a run reads in place, and where.
#[derive(Clone, Debug, Default)]
pub struct ReadInPlace {
    inputs: Vec<Borrowed>,
}

// SAFETY: the memory is only read, by the run it was given to, while the
// caller keeps it alive and unwritten (the contract of `ReadInPlace::add`).
unsafe impl Send for ReadInPlace {}
// SAFETY: as for `Send`.
unsafe impl Sync for ReadInPlace {}

/// Whether no stencil of `program` stores into each field (by `FieldId`):
/// the fields whose input can be read in place.
pub fn read_only_fields(program: &Program) -> Vec<bool> {
    let mut read_only = vec![true; program.fields.len()];
    if let Some(iterate) = &program.iterate {
        for stencil in 0..iterate.stencils.len() {
            for (field, _) in Footprint::of_stencil(program, stencil).written() {
                read_only[field.0] = false;
            }
        }
    }
    read_only
}

impl ReadInPlace {
    /// Reads `field`'s input from `len` elements of type `ty` at `data`.
    ///
    /// # Safety
    ///
    /// `data` must address `len` initialised, aligned elements of type `ty`
    /// that stay alive and that nothing writes until every run given this value
    /// (or a clone) has returned.
    pub unsafe fn add(&mut self, field: FieldId, data: *const u8, len: usize, ty: ScalarType) {
        self.inputs.retain(|b| b.field != field);
        self.inputs.push(Borrowed {
            field,
            data,
            len,
            ty,
        });
    }

    /// The address `field`'s input is read at, if it is read in place.
    pub fn address(&self, field: FieldId) -> Option<usize> {
        self.find(field).map(|b| b.data as usize)
    }

    fn find(&self, field: FieldId) -> Option<&Borrowed> {
        self.inputs.iter().find(|b| b.field == field)
    }

    /// The start of `field`'s input, for a back-end that only reads it.
    pub(crate) fn data(&self, field: FieldId) -> Option<*const u8> {
        self.find(field).map(|b| b.data)
    }

    /// Refuses inputs of the wrong type or length for their field, and fields
    /// that a stencil writes (the caller's memory must not change).
    pub(crate) fn check(&self, program: &Program, lens: &[usize]) -> Result<(), ExecError> {
        let read_only = read_only_fields(program);
        for b in &self.inputs {
            let Some(field) = program.fields.get(b.field.0) else {
                return Err(ExecError::Failed(format!(
                    "an input read in place names field #{} but program `{}` has {} field(s)",
                    b.field.0,
                    program.name,
                    program.fields.len()
                )));
            };
            if !read_only[b.field.0] {
                return Err(ExecError::Failed(format!(
                    "field `{}` is written by a stencil, so its input cannot be read in place; \
                     give it in the state",
                    field.name
                )));
            }
            if b.ty != field.ty || b.len != lens[b.field.0] {
                return Err(ExecError::Failed(format!(
                    "the input of field `{}` read in place holds {} {} values instead of {} {}",
                    field.name, b.len, b.ty, lens[b.field.0], field.ty
                )));
            }
        }
        Ok(())
    }

    /// Copies every input into each time level of its field in `state`, for a
    /// back-end that does not read in place.
    pub fn copy_into(&self, state: &mut FieldState) {
        for b in &self.inputs {
            // SAFETY: `add`'s contract: `len` live, aligned elements of `ty`.
            let buffer = unsafe {
                match b.ty {
                    ScalarType::Int => Buffer::Int(slice(b).to_vec()),
                    ScalarType::Long => Buffer::Long(slice(b).to_vec()),
                    ScalarType::Float => Buffer::Float(slice(b).to_vec()),
                    ScalarType::Double => Buffer::Double(slice(b).to_vec()),
                }
            };
            if let Some(levels) = state.fields.get_mut(b.field.0) {
                for level in levels.iter_mut() {
                    *level = buffer.clone();
                }
            }
        }
    }
}

/// The elements of `b`, typed.
///
/// # Safety
///
/// `T` must be `b.ty`'s Rust type and `b` must honour [`ReadInPlace::add`]'s contract.
unsafe fn slice<'a, T>(b: &Borrowed) -> &'a [T] {
    std::slice::from_raw_parts(b.data.cast::<T>(), b.len)
}
