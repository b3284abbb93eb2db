//! Each rank's block of a `.npy` file, read and written in place: no rank
//! reads or holds more than its own block.
//!
//! Reading: every rank parses the header (version 1 to 3, little-endian,
//! C order) and reads the rows of its block at their offsets. Writing: one
//! rank writes the header of a temporary file next to the output and sizes
//! it; then every rank writes its rows at their offsets; the file is renamed
//! into place only after every rank succeeded.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::exec::Buffer;
use crate::ir::ScalarType;

/// Why a rank could not read or write its block of a `.npy` file.
#[derive(Debug, thiserror::Error)]
pub enum SlabError {
    /// The input's header could not be opened or read.
    #[error("cannot read `{}` by blocks: {source}", path.display())]
    HeaderIo {
        /// The input.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The input does not start with the `.npy` magic bytes.
    #[error("cannot read `{}` by blocks: not a .npy file", path.display())]
    NotNpy {
        /// The input.
        path: PathBuf,
    },
    /// The input's elements are not the field's type, little-endian.
    #[error(
        "cannot read `{}` by blocks: its element type is not `{wanted}` (little-endian); \
         convert it with numpy",
        path.display()
    )]
    ElementType {
        /// The input.
        path: PathBuf,
        /// The `descr` the field's type needs.
        wanted: &'static str,
    },
    /// The input is stored column-major.
    #[error("cannot read `{}` by blocks: it is in Fortran order; save it in C order", path.display())]
    FortranOrder {
        /// The input.
        path: PathBuf,
    },
    /// The input's shape is not the grid's.
    #[error("cannot read `{}` by blocks: its shape is not {shape}", path.display())]
    Shape {
        /// The input.
        path: PathBuf,
        /// The grid's shape, as Python writes a tuple.
        shape: String,
    },
    /// The input's data could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        /// The input.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// An output's temporary file could not be created or written.
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        /// The temporary file.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
}

/// The block of one rank in global and local coordinates.
pub struct Block<'a> {
    /// The grid's size per axis.
    pub global: &'a [usize],
    /// The owned points, inclusive global bounds per axis.
    pub owned: &'a [(i64, i64)],
    /// Global index of local index 0 per axis.
    pub origin: &'a [i64],
    /// The local arrays' size per axis.
    pub local: &'a [usize],
}

impl Block<'_> {
    /// Calls `row(global element index, local element index, length)` for each
    /// innermost row of the block.
    fn rows(&self, mut row: impl FnMut(usize, usize, usize)) {
        let rank = self.global.len();
        let last = rank - 1;
        let len = (self.owned[last].1 - self.owned[last].0 + 1) as usize;
        let outer: Vec<(i64, i64)> = self.owned[..last].to_vec();
        let mut index = outer.iter().map(|r| r.0).collect::<Vec<_>>();
        loop {
            let (mut g, mut l) = (0usize, 0usize);
            let axes = self.global.iter().zip(self.local).zip(self.origin);
            for (axis, ((&n, &local), &origin)) in axes.enumerate() {
                // `index` holds the outer axes; the row starts at the block's edge.
                let x = index.get(axis).copied().unwrap_or(self.owned[last].0);
                g = g * n + x as usize;
                l = l * local + (x - origin) as usize;
            }
            row(g, l, len);
            // Next outer index, innermost outer axis fastest.
            let mut axis = last;
            loop {
                if axis == 0 {
                    return;
                }
                axis -= 1;
                index[axis] += 1;
                if index[axis] <= outer[axis].1 {
                    break;
                }
                index[axis] = outer[axis].0;
            }
        }
    }
}

fn descr(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::Int => "<i4",
        ScalarType::Long => "<i8",
        ScalarType::Float => "<f4",
        ScalarType::Double => "<f8",
    }
}

/// The offset of the data in a `.npy` file, after checking that its header
/// describes a C-order little-endian array of `ty` with shape `global`.
fn data_offset(path: &Path, ty: ScalarType, global: &[usize]) -> Result<u64, SlabError> {
    let io = |source: std::io::Error| SlabError::HeaderIo {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io)?;
    let mut magic = [0u8; 8];
    file.read_exact(&mut magic).map_err(io)?;
    if &magic[..6] != b"\x93NUMPY" {
        return Err(SlabError::NotNpy {
            path: path.to_path_buf(),
        });
    }
    let (len, start) = if magic[6] == 1 {
        let mut b = [0u8; 2];
        file.read_exact(&mut b).map_err(io)?;
        (u16::from_le_bytes(b) as usize, 10)
    } else {
        let mut b = [0u8; 4];
        file.read_exact(&mut b).map_err(io)?;
        (u32::from_le_bytes(b) as usize, 12)
    };
    let mut header = vec![0u8; len];
    file.read_exact(&mut header).map_err(io)?;
    let header: String = String::from_utf8_lossy(&header)
        .split_whitespace()
        .collect();
    let shape: Vec<String> = global.iter().map(|n| n.to_string()).collect();
    let shape = if global.len() == 1 {
        format!("({},)", shape[0])
    } else {
        format!("({})", shape.join(","))
    };
    let wanted = descr(ty);
    let path = path.to_path_buf();
    if !header.contains(&format!("'descr':'{wanted}'")) {
        return Err(SlabError::ElementType { path, wanted });
    }
    if !header.contains("'fortran_order':False") {
        return Err(SlabError::FortranOrder { path });
    }
    if !header.contains(&format!("'shape':{shape}")) {
        return Err(SlabError::Shape { path, shape });
    }
    Ok((start + len) as u64)
}

/// Reads this rank's block of `path` into `buffer` (the local array).
pub fn read(path: &Path, block: &Block, buffer: &mut Buffer) -> Result<(), SlabError> {
    let ty = buffer.ty();
    let offset = data_offset(path, ty, block.global)?;
    let fail = |source| SlabError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(fail)?;
    let elem = ty.size_bytes();
    let bytes = buffer.as_bytes_mut();
    let mut result = Ok(());
    block.rows(|g, l, len| {
        if result.is_ok() {
            result = file.read_exact_at(
                &mut bytes[l * elem..(l + len) * elem],
                offset + (g * elem) as u64,
            );
        }
    });
    result.map_err(fail)
}

/// The temporary file an output is written to before it is renamed into place
/// (beside the file a symbolic link points to: outputs are written through
/// links, as every command writes them).
pub fn temporary(path: &Path) -> PathBuf {
    let target = destination(path);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.stencilc-mpi.tmp"))
}

/// The file an output replaces: `path`, or the file a link at `path` points to.
pub fn destination(path: &Path) -> PathBuf {
    crate::files::paths::write_target(path)
}

/// Flushes the temporary file of `path` to the disk and renames it into place
/// (rank 0, once every rank wrote its block).
pub fn commit(path: &Path) -> std::io::Result<()> {
    let temp = temporary(path);
    File::open(&temp)?.sync_all()?;
    std::fs::rename(&temp, destination(path))
}

/// Creates the temporary file of output `path`: its header, and its size.
/// Returns the data offset. Done by one rank.
pub fn create(path: &Path, ty: ScalarType, global: &[usize]) -> Result<u64, SlabError> {
    let shape: Vec<String> = global.iter().map(|n| n.to_string()).collect();
    let shape = if global.len() == 1 {
        format!("({},)", shape[0])
    } else {
        format!("({})", shape.join(", "))
    };
    let mut dict = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}}}",
        descr(ty)
    );
    // Magic, version and length take 10 bytes; the whole header ends in a
    // newline at a multiple of 64 bytes.
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut header = b"\x93NUMPY\x01\x00".to_vec();
    header.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    header.extend_from_slice(dict.as_bytes());
    let temp = temporary(path);
    let fail = |source| SlabError::Write {
        path: temp.clone(),
        source,
    };
    let file = File::create(&temp).map_err(fail)?;
    file.write_all_at(&header, 0).map_err(fail)?;
    let data = global.iter().product::<usize>() * ty.size_bytes();
    file.set_len((header.len() + data) as u64).map_err(fail)?;
    Ok(header.len() as u64)
}

/// Writes this rank's block of `buffer` into the temporary file of `path`.
pub fn write(path: &Path, offset: u64, block: &Block, buffer: &Buffer) -> Result<(), SlabError> {
    let temp = temporary(path);
    let fail = |source| SlabError::Write {
        path: temp.clone(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&temp)
        .map_err(fail)?;
    let elem = buffer.ty().size_bytes();
    let bytes = buffer.as_bytes();
    let mut result = Ok(());
    block.rows(|g, l, len| {
        if result.is_ok() {
            result = file.write_all_at(
                &bytes[l * elem..(l + len) * elem],
                offset + (g * elem) as u64,
            );
        }
    });
    result.map_err(fail)
}

/// This rank's block of `buffer` (the local array), rows in order: what
/// [`unpack_into`] puts back into an array of the whole grid.
pub fn pack(block: &Block, buffer: &Buffer) -> Vec<u8> {
    let elem = buffer.ty().size_bytes();
    let bytes = buffer.as_bytes();
    let mut out = Vec::new();
    block.rows(|_, l, len| out.extend_from_slice(&bytes[l * elem..(l + len) * elem]));
    out
}

/// Puts a block packed by [`pack`] (on the rank `block` describes) into
/// `whole`, an array of the whole grid. Returns false when `data` is not
/// that block's size.
pub fn unpack_into(block: &Block, data: &[u8], whole: &mut Buffer) -> bool {
    let elem = whole.ty().size_bytes();
    let points: usize = block
        .owned
        .iter()
        .map(|(lo, hi)| (hi - lo + 1) as usize)
        .product();
    if data.len() != points * elem {
        return false;
    }
    let bytes = whole.as_bytes_mut();
    let mut at = 0;
    block.rows(|g, _, len| {
        bytes[g * elem..(g + len) * elem].copy_from_slice(&data[at..at + len * elem]);
        at += len * elem;
    });
    true
}
