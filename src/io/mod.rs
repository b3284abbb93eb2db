//! Field data files: reading a field's initial values and writing its result.
//!
//! Three formats, chosen by the file's extension:
//!
//! - `.npy` (NumPy): the array's shape must equal the grid's (outermost axis
//!   first) and its dtype the field's type (`int` = `i4`, `long` = `i8`,
//!   `float` = `f4`, `double` = `f8`), either byte order, C or Fortran order.
//!   Nothing is converted silently: a mismatch is an error naming both.
//! - `.png` / `.pgm`: grayscale images for 2-D `float`/`double` fields. The
//!   image's height is the grid's outer axis and its width the inner axis.
//!   8-bit and 16-bit pixels are mapped to `[0, 1]` on input; on output values
//!   are clamped to `[0, 1]`, scaled by 255 and rounded to 8-bit pixels.
//! - `.raw`: the field's elements in row-major order, native-endian, no header;
//!   the file's size must be the grid's point count times the element size.
//!
//! Outputs are written atomically: [`prepare_output`] checks the destination and
//! creates a temporary file next to it before anything is computed, and
//! [`PendingOutput::commit`] fills it and renames it over the destination. A run
//! that fails drops its pending outputs, which deletes the temporary files.
//! A process that is interrupted (SIGINT, SIGTERM) never drops anything, so
//! every temporary file is also listed until it is renamed or dropped, and
//! [`crate::files::cleanup::clean_up_for_exit`] deletes the listed ones from a
//! signal handler's thread before the process exits.

mod grayscale;
mod npy;
mod raw;

use crate::data::Buffer;
use crate::files::AtomicFile;
use crate::ir::ScalarType;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A data file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// NumPy `.npy`.
    Npy,
    /// Grayscale PNG.
    Png,
    /// Grayscale binary PGM (Netpbm `P5`).
    Pgm,
    /// Headerless native-endian elements.
    Raw,
}

impl Format {
    /// Every format, for messages listing what is supported.
    pub const ALL: [Format; 4] = [Format::Npy, Format::Png, Format::Pgm, Format::Raw];

    /// The file extension, without the dot.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Npy => "npy",
            Format::Png => "png",
            Format::Pgm => "pgm",
            Format::Raw => "raw",
        }
    }

    /// The format a path's extension names (case-insensitive).
    pub fn from_path(path: &Path) -> Result<Format, DataError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        Format::ALL
            .into_iter()
            .find(|f| ext.as_deref() == Some(f.extension()))
            .ok_or_else(|| DataError::UnsupportedExtension {
                path: path.to_path_buf(),
            })
    }

    /// Whether the format is a grayscale image.
    pub fn is_image(self) -> bool {
        matches!(self, Format::Png | Format::Pgm)
    }

    /// Checks that a field of this shape and type can be stored in this format.
    pub fn check_compatible(self, path: &Path, field: &FieldSpec) -> Result<(), DataError> {
        if self.is_image() {
            if field.rank != 2 {
                return Err(DataError::ImageNeeds2d {
                    path: path.to_path_buf(),
                    field: field.name.clone(),
                    rank: field.rank,
                });
            }
            if !field.ty.is_float() {
                return Err(DataError::ImageNeedsFloat {
                    path: path.to_path_buf(),
                    field: field.name.clone(),
                    ty: field.ty,
                });
            }
        }
        Ok(())
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ".{}", self.extension())
    }
}

/// What a data file must hold for one field: its name (for messages), its element
/// type, and its number of dimensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldSpec {
    /// The field's name.
    pub name: String,
    /// The element type.
    pub ty: ScalarType,
    /// Number of grid dimensions (1 to 3).
    pub rank: usize,
}

/// Why a data file could not be read or written. `Display` says what is wrong;
/// [`DataError::help`] says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// The extension is none of `.npy`, `.png`, `.pgm`, `.raw`.
    #[error("`{}` has an unsupported extension", path.display())]
    UnsupportedExtension {
        /// The file.
        path: PathBuf,
    },
    /// An image format for a field that is not 2-D.
    #[error("`{}` is an image, but field `{field}` has {rank} dimension{}", path.display(), if *rank == 1 { "" } else { "s" })]
    ImageNeeds2d {
        /// The file.
        path: PathBuf,
        /// The field.
        field: String,
        /// The field's number of dimensions.
        rank: usize,
    },
    /// An image format for an integer field.
    #[error("`{}` is an image, but field `{field}` is of type {ty}", path.display())]
    ImageNeedsFloat {
        /// The file.
        path: PathBuf,
        /// The field.
        field: String,
        /// The field's type.
        ty: ScalarType,
    },
    /// The file could not be opened or read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file ends before its data does (a cut-short download or copy).
    #[error("`{}` is truncated or corrupt: it ends before the {format} image data does", path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Its format.
        format: Format,
    },
    /// The file is not a valid file of its format.
    #[error("`{}` is not a valid {format} file: {reason}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// Its format.
        format: Format,
        /// What the decoder said.
        reason: String,
    },
    /// The array's shape is not the grid's.
    #[error("`{}` has shape {} but field `{field}` needs {}", path.display(), shape_text(found), shape_text(expected))]
    ShapeMismatch {
        /// The file.
        path: PathBuf,
        /// The field.
        field: String,
        /// The grid's shape, outermost first.
        expected: Vec<usize>,
        /// The file's shape, outermost first.
        found: Vec<usize>,
    },
    /// The array has another number of dimensions than the field's grid.
    #[error("`{}` holds a {}-D array of shape {} but field `{field}` is on a {rank}-D grid", path.display(), found.len(), shape_text(found))]
    RankMismatch {
        /// The file.
        path: PathBuf,
        /// The field.
        field: String,
        /// The file's shape, outermost first.
        found: Vec<usize>,
        /// The number of dimensions of the field's grid.
        rank: usize,
    },
    /// The array's element type is not the field's.
    #[error("`{}` holds {found} elements but field `{field}` is {ty} (dtype {})", path.display(), npy::descr_of(*ty))]
    DtypeMismatch {
        /// The file.
        path: PathBuf,
        /// The field.
        field: String,
        /// The field's type.
        ty: ScalarType,
        /// The file's dtype, described.
        found: String,
    },
    /// An image with colour channels.
    #[error("`{}` is a {found} image, not grayscale", path.display())]
    NotGrayscale {
        /// The file.
        path: PathBuf,
        /// Its colour type.
        found: String,
    },
    /// A `.npy` file whose data is not as long as its header's shape and
    /// dtype say.
    #[error("`{}` holds {found} bytes after its header, but its header's shape {} of {descr} needs {expected}", path.display(), shape_text(shape))]
    NpyDataSize {
        /// The file.
        path: PathBuf,
        /// The shape its header gives.
        shape: Vec<usize>,
        /// The type string its header gives.
        descr: String,
        /// Bytes the shape and dtype need.
        expected: u64,
        /// Bytes after the header.
        found: u64,
    },
    /// A `.raw` file whose size is not the grid's.
    #[error("`{}` has {found} bytes but field `{field}` needs {expected} ({} points of {ty}, {} bytes each)", path.display(), expected / ty.size_bytes(), ty.size_bytes())]
    RawSizeMismatch {
        /// The file.
        path: PathBuf,
        /// The field.
        field: String,
        /// The field's type.
        ty: ScalarType,
        /// Bytes needed.
        expected: usize,
        /// Bytes found.
        found: u64,
    },
    /// The output's directory does not exist.
    #[error("cannot write `{}`: the directory `{}` does not exist", path.display(), dir.display())]
    NoSuchDirectory {
        /// The output file.
        path: PathBuf,
        /// Its directory.
        dir: PathBuf,
    },
    /// The output's "directory" is a file.
    #[error("cannot write `{}`: `{}` is not a directory", path.display(), dir.display())]
    NotADirectory {
        /// The output file.
        path: PathBuf,
        /// What should have been its directory.
        dir: PathBuf,
    },
    /// The output path names a directory.
    #[error("cannot write `{}`: it is a directory", path.display())]
    IsADirectory {
        /// The output path.
        path: PathBuf,
    },
    /// The output could not be created or written.
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        /// The output file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

impl DataError {
    /// One sentence on how to fix the problem.
    pub fn help(&self) -> String {
        match self {
            DataError::UnsupportedExtension { .. } => {
                let list: Vec<String> = Format::ALL.iter().map(|f| f.to_string()).collect();
                format!("name the file with one of the extensions {}", list.join(", "))
            }
            DataError::ImageNeeds2d { .. } => {
                "images hold 2-D fields only; use .npy or .raw for this field".into()
            }
            DataError::ImageNeedsFloat { .. } => {
                "images map pixels to [0, 1], which needs a float or double field; use .npy or .raw for integer fields".into()
            }
            DataError::Read { .. } => "check that the file exists and is readable".into(),
            DataError::Truncated { format, .. } => {
                format!("the file was cut short: write it again whole, or give a complete {format} file")
            }
            DataError::Malformed { format, .. } => {
                format!("give a file written as {format} (the extension selects the format)")
            }
            DataError::ShapeMismatch { expected, .. } => format!(
                "give an array of shape {} (outermost axis first), or change the grid-size parameters with --set",
                shape_text(expected)
            ),
            DataError::RankMismatch { field, rank, .. } => format!(
                "give `{field}` a {rank}-D array (outermost axis first), or check that the file is the one meant for `{field}`"
            ),
            DataError::DtypeMismatch { ty, .. } => format!(
                "convert the array to {} first (in NumPy: `a.astype(np.{})`); stencilc does not convert silently",
                npy::descr_of(*ty),
                npy::numpy_name(*ty)
            ),
            DataError::NotGrayscale { .. } => {
                "convert the image to grayscale first (e.g. `convert in.png -colorspace Gray out.png`)".into()
            }
            DataError::NpyDataSize {
                expected, found, ..
            } if found < expected => {
                "the file was cut short (or its header is wrong): write it again whole, e.g. with \
                 NumPy's `np.save`"
                    .into()
            }
            DataError::NpyDataSize { .. } => {
                "the file has bytes after the array its header describes: write it again with \
                 NumPy's `np.save`"
                    .into()
            }
            DataError::RawSizeMismatch { .. } => {
                "give a file of exactly the grid's points, or change the grid-size parameters with --set".into()
            }
            DataError::NoSuchDirectory { .. } | DataError::NotADirectory { .. } => {
                "create the directory first, or choose an output path in an existing directory".into()
            }
            DataError::IsADirectory { .. } => "give a file name, not a directory".into(),
            DataError::Write { source, .. } if is_disk_full(source) => {
                "free space on that disk or write the output to another one; nothing was \
                 written, and a previous file there is untouched"
                    .into()
            }
            DataError::Write { .. } => {
                "choose an output path in a directory you can write to".into()
            }
        }
    }
}

/// Whether a write failed because the disk (or the user's quota) is full,
/// however deep the writer wrapped the error.
fn is_disk_full(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::StorageFull
        || error.kind() == std::io::ErrorKind::QuotaExceeded
        || error.to_string().contains("No space left on device")
}

/// `(240, 320)` for `[240, 320]`, as NumPy prints shapes.
fn shape_text(shape: &[usize]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => {
            let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    }
}

/// The shape a file declares without reading its data, when the format records
/// one: `.npy` gives its array shape, an image `(height, width)`. `.raw` files
/// have no shape and give `None`.
pub fn probe_shape(path: &Path) -> Result<Option<Vec<usize>>, DataError> {
    match Format::from_path(path)? {
        Format::Npy => npy::probe_shape(path).map(Some),
        format @ (Format::Png | Format::Pgm) => grayscale::probe_shape(path, format).map(Some),
        Format::Raw => Ok(None),
    }
}

/// Checks what can be checked of an input before the grid's size is known: a
/// supported extension, a format suited to the field, a readable file, and for
/// formats that record a shape, as many dimensions as the field's grid.
pub fn check_input(path: &Path, field: &FieldSpec) -> Result<(), DataError> {
    Format::from_path(path)?.check_compatible(path, field)?;
    open(path).map(drop)?;
    match probe_shape(path)? {
        Some(found) if found.len() != field.rank => Err(DataError::RankMismatch {
            path: path.to_path_buf(),
            field: field.name.clone(),
            found,
            rank: field.rank,
        }),
        _ => Ok(()),
    }
}

/// Checks, without reading its values, that a file fits a field on a grid of
/// size `dims` (outermost first): the shape its header records, or for
/// `.raw` its size. [`read_field`] makes the same checks before reading.
pub fn check_fits(path: &Path, field: &FieldSpec, dims: &[usize]) -> Result<(), DataError> {
    let format = Format::from_path(path)?;
    format.check_compatible(path, field)?;
    match format {
        Format::Raw => raw::check_size(path, field, dims).map(drop),
        _ => match probe_shape(path)? {
            Some(found) if found != dims => Err(DataError::ShapeMismatch {
                path: path.to_path_buf(),
                field: field.name.clone(),
                expected: dims.to_vec(),
                found,
            }),
            _ => Ok(()),
        },
    }
}

/// Reads a field's values from a file whose format its extension gives.
///
/// `dims` is the grid's size per axis, outermost first. The file must match it
/// and the field's type exactly (see the module documentation).
pub fn read_field(path: &Path, field: &FieldSpec, dims: &[usize]) -> Result<Buffer, DataError> {
    let format = Format::from_path(path)?;
    format.check_compatible(path, field)?;
    match format {
        Format::Npy => npy::read(path, field, dims),
        Format::Png | Format::Pgm => grayscale::read(path, format, field, dims),
        Format::Raw => raw::read(path, field, dims),
    }
}

/// An output checked and ready to be written: a temporary file in the
/// destination's directory ([`crate::files::AtomicFile`]). Dropping it without
/// [`commit`](Self::commit) deletes the temporary file and leaves the
/// destination untouched.
#[derive(Debug)]
pub struct PendingOutput {
    file: AtomicFile,
    path: PathBuf,
    format: Format,
    field: FieldSpec,
}

/// Checks that `path` can receive `field` (supported extension, format suited to
/// the field, existing and writable directory) by creating the temporary file the
/// output will be written to. Call it before computing anything.
pub fn prepare_output(path: &Path, field: &FieldSpec) -> Result<PendingOutput, DataError> {
    let format = Format::from_path(path)?;
    format.check_compatible(path, field)?;
    if path.is_dir() {
        return Err(DataError::IsADirectory {
            path: path.to_path_buf(),
        });
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if !dir.exists() {
        return Err(DataError::NoSuchDirectory {
            path: path.to_path_buf(),
            dir,
        });
    }
    if !dir.is_dir() {
        return Err(DataError::NotADirectory {
            path: path.to_path_buf(),
            dir,
        });
    }
    let file = AtomicFile::create(path).map_err(|source| DataError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(PendingOutput {
        file,
        path: path.to_path_buf(),
        format,
        field: field.clone(),
    })
}

impl PendingOutput {
    /// The destination path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The destination's format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The temporary file the data goes to until it is renamed into place.
    pub fn temporary_path(&self) -> &Path {
        self.file.temporary_path()
    }

    /// Writes `data` (the field's values on a grid of size `dims`, outermost
    /// first) to the temporary file and renames it over the destination.
    pub fn commit(mut self, data: &Buffer, dims: &[usize]) -> Result<(), DataError> {
        self.write(data, dims)?;
        self.persist()
    }

    /// Writes `data` to the temporary file only. With several outputs, write
    /// them all before renaming any, so that a failure leaves none half-done.
    pub fn write(&mut self, data: &Buffer, dims: &[usize]) -> Result<(), DataError> {
        let write_error = |source| DataError::Write {
            path: self.path.clone(),
            source,
        };
        if data.ty() != self.field.ty || data.len() != point_count(dims) {
            return Err(write_error(std::io::Error::other(format!(
                "the data ({} {} values) does not fit field `{}` on a grid of {} points",
                data.len(),
                data.ty(),
                self.field.name,
                point_count(dims)
            ))));
        }
        let mut writer = BufWriter::new(self.file.file());
        match self.format {
            Format::Npy => npy::write(&mut writer, data, dims),
            Format::Png | Format::Pgm => grayscale::write(&mut writer, self.format, data, dims),
            Format::Raw => writer.write_all(data.as_bytes()),
        }
        .and_then(|()| writer.flush())
        .map_err(write_error)
    }

    /// Flushes the written temporary file to the disk and renames it over the
    /// destination.
    pub fn persist(self) -> Result<(), DataError> {
        let PendingOutput { file, path, .. } = self;
        file.commit()
            .map_err(|source| DataError::Write { path, source })
    }
}

/// Opens a file for reading, with the error this module reports.
fn open(path: &Path) -> Result<File, DataError> {
    File::open(path).map_err(|source| DataError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// Number of points of a grid.
fn point_count(dims: &[usize]) -> usize {
    dims.iter().product()
}

#[cfg(test)]
mod tests;
