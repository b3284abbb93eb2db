//! `.npy` files: read here, header ([`header`]) and data, with the header
//! checked first so that a wrong shape or dtype is reported as such rather than
//! as a decoding failure, and with nothing allocated beyond what the file
//! holds; written through `ndarray-npy`.

mod header;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use ndarray::{ArrayViewD, IxDyn};
use ndarray_npy::{WritableElement, WriteNpyExt};

use super::{open, point_count, shape_text, DataError, FieldSpec, Format};
use crate::data::Buffer;
use crate::ir::ScalarType;
use header::{Descr, Header};

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
    // The first character, whatever its width (a crafted header may hold any).
    let (kind, size) = body.split_at(body.chars().next().map_or(0, char::len_utf8));
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

fn read_error(path: &Path) -> impl Fn(std::io::Error) -> DataError + '_ {
    move |source| DataError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads into `buf` until it is full or the file ends; returns the bytes read.
fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The header of the file at `path`, and the file. The header's length is
/// checked against the file's size before it is read, and the data's size
/// (its shape's points times the element size, where the type string gives
/// one) against what the file holds after the header: nothing is allocated
/// for what the file does not hold.
fn read_header(path: &Path) -> Result<(Header, File), DataError> {
    let mut file = open(path)?;
    let file_len = file.metadata().map_err(read_error(path))?.len();
    let mut start = [0u8; 12];
    let got = read_up_to(&mut file, &mut start).map_err(read_error(path))?;
    let (header_len, preamble_len) =
        header::preamble(&start[..got], file_len).map_err(|e| malformed(path, e))?;
    let mut text = vec![0u8; header_len];
    file.seek(SeekFrom::Start(preamble_len as u64))
        .and_then(|_| file.read_exact(&mut text))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => malformed(path, "the file ends inside its header"),
            _ => read_error(path)(e),
        })?;
    let header =
        header::parse(&text, (preamble_len + header_len) as u64).map_err(|e| malformed(path, e))?;
    if let Some(item) = header.descr.item_size() {
        let found = file_len.saturating_sub(header.data_offset);
        let expected = header
            .shape
            .iter()
            .try_fold(item, |n, &d| n.checked_mul(d as u64));
        let Some(expected) = expected else {
            return Err(malformed(
                path,
                format!(
                    "its header's shape {} needs more bytes than any file holds",
                    shape_text(&header.shape)
                ),
            ));
        };
        if expected != found {
            return Err(DataError::NpyDataSize {
                path: path.to_path_buf(),
                shape: header.shape,
                descr: descr_text(&header.descr),
                expected,
                found,
            });
        }
    }
    Ok((header, file))
}

fn descr_text(descr: &Descr) -> String {
    match descr {
        Descr::Simple(text) | Descr::Other(text) => text.clone(),
    }
}

/// The array shape recorded in the header, checked against the file's size.
pub(super) fn probe_shape(path: &Path) -> Result<Vec<usize>, DataError> {
    read_header(path).map(|(header, _)| header.shape)
}

/// Reads a whole array after checking its header against the field.
pub(super) fn read(path: &Path, field: &FieldSpec, dims: &[usize]) -> Result<Buffer, DataError> {
    let (header, mut file) = read_header(path)?;
    let simple = match &header.descr {
        Descr::Simple(text) => Some(text.as_str()),
        Descr::Other(_) => None,
    };
    if simple.and_then(type_of_descr) != Some(field.ty) {
        return Err(DataError::DtypeMismatch {
            path: path.to_path_buf(),
            field: field.name.clone(),
            ty: field.ty,
            found: match simple {
                Some(text) => describe_descr(text),
                None => format!("structured {}", descr_text(&header.descr)),
            },
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
    // `read_header` checked that the file holds exactly these bytes.
    let mut buffer = Buffer::zeros(field.ty, point_count(dims));
    file.seek(SeekFrom::Start(header.data_offset))
        .and_then(|_| file.read_exact(buffer.as_bytes_mut()))
        .map_err(read_error(path))?;
    let little = match simple.unwrap_or_default().as_bytes().first() {
        Some(b'<') => true,
        Some(b'>') => false,
        _ => cfg!(target_endian = "little"),
    };
    if little != cfg!(target_endian = "little") {
        let size = field.ty.size_bytes();
        for element in buffer.as_bytes_mut().chunks_exact_mut(size) {
            element.reverse();
        }
    }
    if header.fortran_order && dims.len() > 1 {
        buffer = match buffer {
            Buffer::Int(v) => Buffer::Int(fortran_to_c(&v, dims)),
            Buffer::Long(v) => Buffer::Long(fortran_to_c(&v, dims)),
            Buffer::Float(v) => Buffer::Float(fortran_to_c(&v, dims)),
            Buffer::Double(v) => Buffer::Double(fortran_to_c(&v, dims)),
        };
    }
    Ok(buffer)
}

/// The elements of a column-major array of shape `dims` in row-major order.
fn fortran_to_c<T: Copy>(column_major: &[T], dims: &[usize]) -> Vec<T> {
    // Column-major strides: the outermost axis varies fastest.
    let mut strides = vec![1usize; dims.len()];
    for axis in 1..dims.len() {
        strides[axis] = strides[axis - 1] * dims[axis - 1];
    }
    let mut index = vec![0usize; dims.len()];
    let mut offset = 0usize;
    let mut out = Vec::with_capacity(column_major.len());
    for _ in 0..column_major.len() {
        out.push(column_major[offset]);
        // Advance the row-major index, innermost axis first.
        for axis in (0..dims.len()).rev() {
            index[axis] += 1;
            offset += strides[axis];
            if index[axis] < dims[axis] {
                break;
            }
            offset -= strides[axis] * dims[axis];
            index[axis] = 0;
        }
    }
    out
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
