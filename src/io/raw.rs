//! `.raw` files: the field's elements, row-major, native-endian, no header.

use std::io::Read;
use std::path::Path;

use super::{open, point_count, DataError, FieldSpec};
use crate::exec::Buffer;

/// Reads exactly the grid's points; any other file size is an error.
pub(super) fn read(path: &Path, field: &FieldSpec, dims: &[usize]) -> Result<Buffer, DataError> {
    let mut file = open(path)?;
    let read_error = |source| DataError::Read {
        path: path.to_path_buf(),
        source,
    };
    let found = file.metadata().map_err(read_error)?.len();
    let mut buffer = Buffer::zeros(field.ty, point_count(dims));
    let expected = buffer.as_bytes().len();
    if found != expected as u64 {
        return Err(DataError::RawSizeMismatch {
            path: path.to_path_buf(),
            field: field.name.clone(),
            ty: field.ty,
            expected,
            found,
        });
    }
    file.read_exact(buffer.as_bytes_mut()).map_err(read_error)?;
    Ok(buffer)
}
