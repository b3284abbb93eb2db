//! Grayscale `.png` and `.pgm` images for 2-D floating-point fields.
//!
//! Row `y` of the image is index `y` of the grid's outer axis and column `x`
//! index `x` of the inner axis. Pixels map to `[0, 1]` (`p / 255` or
//! `p / 65535`); written pixels are `round(clamp(v, 0, 1) * 255)`.
//!
//! A header is read first and its claims checked before any pixel is decoded:
//! the colour type, the size against the grid's, and the decoded size against
//! what a file of its length can hold (so a few bytes claiming a
//! 60000×60000 image cost nothing).

use std::io::{BufReader, Seek, Write};
use std::path::Path;

use image::codecs::pnm::{PnmEncoder, PnmSubtype, SampleEncoding};
use image::{
    ColorType, DynamicImage, ImageBuffer, ImageDecoder, ImageFormat, ImageReader, Limits, Luma,
};

use super::{open, DataError, FieldSpec, Format};
use crate::data::Buffer;
use crate::ir::ScalarType;

fn image_format(format: Format) -> ImageFormat {
    match format {
        Format::Pgm => ImageFormat::Pnm,
        _ => ImageFormat::Png,
    }
}

/// The most bytes the decoded image of a `format` file of `file_len` bytes can
/// take: a PNM raster is stored as it is (a 1-bit PBM's pixels widen 8×), and
/// PNG's deflate expands data at most 1032× (1-bit pixels then 8× more). A
/// header claiming more is refused before anything is allocated for it.
fn decoded_bound(format: Format, file_len: u64) -> u64 {
    let factor = match format {
        Format::Pgm => 8,
        _ => 1032 * 8,
    };
    file_len.saturating_mul(factor).saturating_add(64 * 1024)
}

/// A decoder with its header read, whose claimed size has been checked against
/// the file's (the decoder's memory is bounded by the same figure).
fn decoder(path: &Path, format: Format) -> Result<impl ImageDecoder, DataError> {
    let file = open(path)?;
    let file_len = file
        .metadata()
        .map_err(|source| DataError::Read {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    let bound = decoded_bound(format, file_len);
    let mut limits = Limits::default();
    limits.max_alloc = Some(bound);
    let mut reader = ImageReader::with_format(BufReader::new(file), image_format(format));
    reader.limits(limits);
    let decoder = reader
        .into_decoder()
        .map_err(|e| malformed(path, format, e))?;
    let (width, height) = decoder.dimensions();
    if decoder.total_bytes() > bound {
        return Err(DataError::Malformed {
            path: path.to_path_buf(),
            format,
            reason: format!(
                "its header claims a {width}×{height} image, more than a {format} file of \
                 {file_len} bytes can hold"
            ),
        });
    }
    Ok(decoder)
}

fn malformed(path: &Path, format: Format, error: image::ImageError) -> DataError {
    match error {
        // The file opened, so an early end is the file's fault, not the path's.
        image::ImageError::IoError(source)
            if source.kind() == std::io::ErrorKind::UnexpectedEof =>
        {
            DataError::Truncated {
                path: path.to_path_buf(),
                format,
            }
        }
        image::ImageError::IoError(source) => DataError::Read {
            path: path.to_path_buf(),
            source,
        },
        other => DataError::Malformed {
            path: path.to_path_buf(),
            format,
            reason: other.to_string(),
        },
    }
}

/// `(height, width)` from the image header.
pub(super) fn probe_shape(path: &Path, format: Format) -> Result<Vec<usize>, DataError> {
    let (width, height) = decoder(path, format)?.dimensions();
    Ok(vec![height as usize, width as usize])
}

/// Decodes a grayscale image into a field of `dims == [height, width]`. The
/// header's colour type and size are checked before the pixels are decoded.
pub(super) fn read(
    path: &Path,
    format: Format,
    field: &FieldSpec,
    dims: &[usize],
) -> Result<Buffer, DataError> {
    let decoder = decoder(path, format)?;
    let color = decoder.color_type();
    if !matches!(color, ColorType::L8 | ColorType::L16) {
        return Err(DataError::NotGrayscale {
            path: path.to_path_buf(),
            found: format!("{color:?}"),
        });
    }
    let (width, height) = decoder.dimensions();
    let found = vec![height as usize, width as usize];
    if found != dims {
        return Err(DataError::ShapeMismatch {
            path: path.to_path_buf(),
            field: field.name.clone(),
            expected: dims.to_vec(),
            found,
        });
    }
    let image = DynamicImage::from_decoder(decoder).map_err(|e| malformed(path, format, e))?;
    let (levels, full_scale): (Vec<u16>, u16) = match image {
        DynamicImage::ImageLuma8(pixels) => (
            pixels.into_raw().into_iter().map(u16::from).collect(),
            u16::from(u8::MAX),
        ),
        DynamicImage::ImageLuma16(pixels) => (pixels.into_raw(), u16::MAX),
        other => {
            return Err(DataError::NotGrayscale {
                path: path.to_path_buf(),
                found: format!("{:?}", other.color()),
            })
        }
    };
    // Divide in the field's own type, as `(float)p / 255.0f` would in C.
    Ok(match field.ty {
        ScalarType::Double => {
            let scale = f64::from(full_scale);
            Buffer::Double(levels.iter().map(|&p| f64::from(p) / scale).collect())
        }
        // `check_compatible` admits only float and double fields.
        _ => {
            let scale = f32::from(full_scale);
            Buffer::Float(levels.iter().map(|&p| f32::from(p) / scale).collect())
        }
    })
}

/// One 8-bit pixel from a value in `[0, 1]` (NaN gives black).
fn to_pixel(value: f64) -> u8 {
    (value.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// Encodes a 2-D field of `dims == [height, width]` as an 8-bit grayscale image.
pub(super) fn write(
    writer: &mut (impl Write + Seek),
    format: Format,
    data: &Buffer,
    dims: &[usize],
) -> std::io::Result<()> {
    let (height, width) = match dims {
        [h, w] => (*h, *w),
        _ => return Err(std::io::Error::other("images hold 2-D fields only")),
    };
    let too_large = || std::io::Error::other("the image is too large to encode");
    let pixels: Vec<u8> = data.to_f64().into_iter().map(to_pixel).collect();
    let image: ImageBuffer<Luma<u8>, Vec<u8>> = ImageBuffer::from_raw(
        u32::try_from(width).map_err(|_| too_large())?,
        u32::try_from(height).map_err(|_| too_large())?,
        pixels,
    )
    .ok_or_else(|| std::io::Error::other("buffer length does not match the grid"))?;
    let result = match format {
        // The default PNM encoder picks PAM (`P7`); PGM readers expect `P5`.
        Format::Pgm => image.write_with_encoder(
            PnmEncoder::new(writer).with_subtype(PnmSubtype::Graymap(SampleEncoding::Binary)),
        ),
        _ => image.write_to(writer, ImageFormat::Png),
    };
    result.map_err(std::io::Error::other)
}
