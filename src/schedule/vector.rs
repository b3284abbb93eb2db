//! `--vector`: which widths a stencil group's kernel may take
//! ([`super::StencilSchedule::vector`]).

use crate::analysis::Footprint;
use crate::ir::Program;

use super::{ScheduleError, ScheduleRequest, ShmRequest};

/// The vector widths `--vector` takes.
pub const VECTOR_WIDTHS: [u32; 3] = [1, 2, 4];

/// The most bytes one vector access moves (`float4`, `double2`).
pub const MAX_VECTOR_BYTES: usize = 16;

/// Refuses a `--vector` width the stencils cannot take: not 1, 2 or 4; with
/// an x tile; more than [`MAX_VECTOR_BYTES`] of a field's elements; or with
/// a field named for shared memory.
pub(super) fn check_vector(
    program: &Program,
    parts: &[&crate::ir::StencilPart],
    vector: u32,
    tile: [u32; 3],
    request: &ScheduleRequest,
    stencil: &str,
) -> Result<(), ScheduleError> {
    if !VECTOR_WIDTHS.contains(&vector) {
        return Err(ScheduleError(format!(
            "--vector {vector}: a thread's vector is 1, 2 or 4 points wide"
        )));
    }
    if vector == 1 {
        return Ok(());
    }
    if tile[0] > 1 {
        return Err(ScheduleError(format!(
            "stencil `{stencil}`: --vector {vector} sets the thread's points along x; \
             give --tile 1,... (or leave --tile out) with it"
        )));
    }
    for part in parts {
        let footprint = Footprint::of_part(program, part);
        let levels = footprint
            .reads
            .iter()
            .map(|r| r.field)
            .chain(footprint.written().into_iter().map(|(f, _)| f));
        for f in levels {
            let field = &program.fields[f.0];
            let bytes = field.ty.size_bytes() * vector as usize;
            if bytes > MAX_VECTOR_BYTES {
                return Err(ScheduleError(format!(
                    "stencil `{stencil}`: --vector {vector} would access {vector} {} elements of \
                     field `{}` at once, {bytes} bytes; a vector access moves at most \
                     {MAX_VECTOR_BYTES}: give --vector {}",
                    field.ty.name(),
                    field.name,
                    MAX_VECTOR_BYTES / field.ty.size_bytes()
                )));
            }
            if let ShmRequest::Names(names) = &request.shm {
                if names.contains(&field.name) {
                    return Err(ScheduleError(format!(
                        "stencil `{stencil}`: --vector {vector} reads fields from global \
                         memory, but --shm stages `{}`; drop one of the two",
                        field.name
                    )));
                }
            }
        }
    }
    Ok(())
}
