//! `.npy` files through `ndarray-npy`, with the header checked first so that a
//! wrong shape or dtype is reported as such rather than as a decoding failure.

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;

use ndarray::{ArrayD, ArrayViewD, IxDyn};
use ndarray_npy::npy::header::Header;
use ndarray_npy::{ReadNpyExt, ReadableElement, WritableElement, WriteNpyExt};

use super::{open, DataError, FieldSpec, Format};
use crate::exec::Buffer;
use crate::ir::ScalarType;

/// The little-endian NumPy type string of a field type (`<f4` for `float`).
pub(super) fn descr_of(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Int => "<i4",
        ScalarType::Long => "<i8",
        ScalarType::Float => "<f4",
        ScalarType::Double => "<f8",
    }
}

/// The NumPy scalar name of a field type (`float32` for `float`).
pub(super) fn numpy_name(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Int => "int32",
        ScalarType::Long => "int64",
        ScalarType::Float => "float32",
        ScalarType::Double => "float64",
    }
}

/// The field type a NumPy type string stands for, either byte order.
fn type_of_descr(descr: &str) -> Option<ScalarType> {
    let body = descr.strip_prefix(['<', '>', '=', '|']).unwrap_or(descr);
    match body {
        "i4" => Some(ScalarType::Int),
        "i8" => Some(ScalarType::Long),
        "f4" => Some(ScalarType::Float),
        "f8" => Some(ScalarType::Double),
        _ => None,
    }
}

/// A readable name for a NumPy type string: `<u1 (uint8)`.
fn describe_descr(descr: &str) -> String {
    let body = descr.strip_prefix(['<', '>', '=', '|']).unwrap_or(descr);
    let (kind, size) = body.split_at(body.len().min(1));
    let name = match kind {
        "i" => format!("int{}", size.parse::<u32>().map_or(0, |b| b * 8)),
        "u" => format!("uint{}", size.parse::<u32>().map_or(0, |b| b * 8)),
        "f" => format!("float{}", size.parse::<u32>().map_or(0, |b| b * 8)),
        "c" => format!("complex{}", size.parse::<u32>().map_or(0, |b| b * 8)),
        "b" => "bool".to_string(),
        _ => return descr.to_string(),
    };
    format!("{descr} ({name})")
}

fn malformed(path: &Path, reason: impl ToString) -> DataError {
    DataError::Malformed {
        path: path.to_path_buf(),
        format: Format::Npy,
        reason: reason.to_string(),
    }
}

/// The header's type string without Python quotes.
fn header_descr(header: &Header) -> String {
    header
        .type_descriptor
        .to_string()
        .trim_matches(|c| c == '\'' || c == '"')
        .to_string()
}

fn read_header(path: &Path) -> Result<(Header, std::fs::File), DataError> {
    let mut file = open(path)?;
    let header = Header::from_reader(&mut file).map_err(|e| malformed(path, e))?;
    Ok((header, file))
}

/// The array shape recorded in the header.
pub(super) fn probe_shape(path: &Path) -> Result<Vec<usize>, DataError> {
    read_header(path).map(|(header, _)| header.shape)
}

/// Reads a whole array after checking its header against the field.
pub(super) fn read(path: &Path, field: &FieldSpec, dims: &[usize]) -> Result<Buffer, DataError> {
    let (header, mut file) = read_header(path)?;
    let descr = header_descr(&header);
    if type_of_descr(&descr) != Some(field.ty) {
        return Err(DataError::DtypeMismatch {
            path: path.to_path_buf(),
            field: field.name.clone(),
            ty: field.ty,
            found: describe_descr(&descr),
        });
    }
    if header.shape != dims {
        return Err(DataError::ShapeMismatch {
            path: path.to_path_buf(),
            field: field.name.clone(),
            expected: dims.to_vec(),
            found: header.shape,
        });
    }
    file.seek(SeekFrom::Start(0))
        .map_err(|source| DataError::Read {
            path: path.to_path_buf(),
            source,
        })?;
    let file = std::io::BufReader::new(file);
    Ok(match field.ty {
        ScalarType::Int => Buffer::Int(read_elements(path, file)?),
        ScalarType::Long => Buffer::Long(read_elements(path, file)?),
        ScalarType::Float => Buffer::Float(read_elements(path, file)?),
        ScalarType::Double => Buffer::Double(read_elements(path, file)?),
    })
}

/// The elements in row-major order (a Fortran-ordered file is transposed).
fn read_elements<T: ReadableElement + Copy>(
    path: &Path,
    reader: impl std::io::Read,
) -> Result<Vec<T>, DataError> {
    let array = ArrayD::<T>::read_npy(reader).map_err(|e| malformed(path, e))?;
    Ok(if array.is_standard_layout() {
        array.into_raw_vec_and_offset().0
    } else {
        array.iter().copied().collect()
    })
}

/// Writes `data` as an array of shape `dims`, little-endian, C order.
pub(super) fn write(writer: &mut impl Write, data: &Buffer, dims: &[usize]) -> std::io::Result<()> {
    fn write_view<T: WritableElement>(
        writer: &mut impl Write,
        v: &[T],
        dims: &[usize],
    ) -> std::io::Result<()> {
        let view = ArrayViewD::from_shape(IxDyn(dims), v).map_err(std::io::Error::other)?;
        view.write_npy(writer).map_err(std::io::Error::other)
    }
    match data {
        Buffer::Int(v) => write_view(writer, v, dims),
        Buffer::Long(v) => write_view(writer, v, dims),
        Buffer::Float(v) => write_view(writer, v, dims),
        Buffer::Double(v) => write_view(writer, v, dims),
    }
}
