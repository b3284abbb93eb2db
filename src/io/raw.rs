//! `.raw` files: the field's elements, row-major, native-endian, no header.
//! The file's size must be the grid's bytes exactly, checked before the field
//! is allocated.

use std::io::Read;
use std::path::Path;

use super::{open, point_count, DataError, FieldSpec};
use crate::data::Buffer;

/// Opens the file and checks that its size is exactly the grid's bytes,
/// before anything is allocated: a file that does not hold the grid's points
/// costs nothing.
pub(super) fn check_size(
    path: &Path,
    field: &FieldSpec,
    dims: &[usize],
) -> Result<std::fs::File, DataError> {
    let file = open(path)?;
    let found = file
        .metadata()
        .map_err(|source| DataError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    let expected = dims
        .iter()
        .try_fold(field.ty.size_bytes(), |n, &d| n.checked_mul(d))
        .unwrap_or(usize::MAX);
    if found != expected as u64 {
        return Err(DataError::RawSizeMismatch {
            path: path.to_path_buf(),
            field: field.name.clone(),
            ty: field.ty,
            expected,
            found,
        });
    }
    Ok(file)
}

/// Reads exactly the grid's points; any other file size is an error.
pub(super) fn read(path: &Path, field: &FieldSpec, dims: &[usize]) -> Result<Buffer, DataError> {
    let mut file = check_size(path, field, dims)?;
    let mut buffer = Buffer::zeros(field.ty, point_count(dims));
    file.read_exact(buffer.as_bytes_mut())
        .map_err(|source| DataError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(buffer)
}
