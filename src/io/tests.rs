//! Round trips and error cases of every data format.

use std::path::Path;

use super::*;

fn spec(name: &str, ty: ScalarType, rank: usize) -> FieldSpec {
    FieldSpec {
        name: name.into(),
        ty,
        rank,
    }
}

fn write_output(path: &Path, field: &FieldSpec, data: &Buffer, dims: &[usize]) {
    prepare_output(path, field)
        .unwrap()
        .commit(data, dims)
        .unwrap();
}

/// Files in `dir` other than `keep`, to check that no temporary file is left.
fn stray_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".stencilc-"))
        .collect()
}

#[test]
fn npy_round_trips_every_type() {
    let dir = tempfile::tempdir().unwrap();
    let dims = [2, 3, 4];
    let cases = [
        Buffer::Int((0..24).map(|i| i * 7 - 50).collect()),
        Buffer::Long((0..24).map(|i| i64::MAX - i).collect()),
        Buffer::Float((0..24).map(|i| i as f32 * 0.1).collect()),
        Buffer::Double((0..24).map(|i| (i as f64).sqrt()).collect()),
    ];
    for data in cases {
        let field = spec("u", data.ty(), 3);
        let path = dir.path().join(format!("u_{}.npy", data.ty()));
        write_output(&path, &field, &data, &dims);
        assert_eq!(probe_shape(&path).unwrap(), Some(dims.to_vec()));
        assert_eq!(read_field(&path, &field, &dims).unwrap(), data);
    }
    assert!(stray_files(dir.path()).is_empty());
}

/// A version-1.0 `.npy` file with the given type string, order and shape.
fn npy_bytes(descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut dict = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': {shape}, }}",
        if fortran { "True" } else { "False" }
    );
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend_from_slice(data);
    bytes
}

#[test]
fn npy_fortran_order_is_read_row_major() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.npy");
    // Column-major storage of [[0, 1, 2], [3, 4, 5]].
    let column_major: Vec<u8> = [0i32, 3, 1, 4, 2, 5]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    std::fs::write(&path, npy_bytes("<i4", true, "(2, 3)", &column_major)).unwrap();
    let data = read_field(&path, &spec("a", ScalarType::Int, 2), &[2, 3]).unwrap();
    assert_eq!(data, Buffer::Int(vec![0, 1, 2, 3, 4, 5]));
}

#[test]
fn npy_big_endian_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("be.npy");
    let values = [1.5f64, -2.25];
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_be_bytes()).collect();
    std::fs::write(&path, npy_bytes(">f8", false, "(2,)", &bytes)).unwrap();
    let data = read_field(&path, &spec("a", ScalarType::Double, 1), &[2]).unwrap();
    assert_eq!(data, Buffer::Double(values.to_vec()));
}

#[test]
fn npy_wrong_dtype_names_both_types() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.npy");
    let field = spec("a", ScalarType::Double, 2);
    write_output(&path, &field, &Buffer::Double(vec![0.0; 6]), &[2, 3]);
    let err = read_field(&path, &spec("a", ScalarType::Float, 2), &[2, 3]).unwrap_err();
    assert!(matches!(err, DataError::DtypeMismatch { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("<f8 (float64)") && text.contains("float (dtype <f4)"),
        "{text}"
    );
    assert!(err.help().contains("astype(np.float32)"), "{}", err.help());

    let bytes = npy_bytes("|u1", false, "(2, 3)", &[0; 6]);
    std::fs::write(&path, bytes).unwrap();
    let err = read_field(&path, &field, &[2, 3]).unwrap_err();
    assert!(err.to_string().contains("|u1 (uint8)"), "{err}");
}

#[test]
fn npy_wrong_shape_names_both_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.npy");
    let field = spec("a", ScalarType::Float, 2);
    write_output(&path, &field, &Buffer::Float(vec![0.0; 6]), &[3, 2]);
    let err = read_field(&path, &field, &[2, 3]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` has shape (3, 2) but field `a` needs (2, 3)",
            path.display()
        )
    );
    let err = read_field(&path, &spec("a", ScalarType::Float, 1), &[6]).unwrap_err();
    assert!(err.to_string().contains("needs (6,)"), "{err}");
}

#[test]
fn npy_garbage_is_malformed_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.npy");
    std::fs::write(&path, b"not an npy file at all").unwrap();
    let err = read_field(&path, &spec("a", ScalarType::Float, 1), &[4]).unwrap_err();
    assert!(matches!(err, DataError::Malformed { .. }), "{err:?}");
    // A valid header with too little data, and with too much.
    std::fs::write(&path, npy_bytes("<f4", false, "(4,)", &[0; 8])).unwrap();
    let err = read_field(&path, &spec("a", ScalarType::Float, 1), &[4]).unwrap_err();
    assert!(
        matches!(
            err,
            DataError::NpyDataSize {
                expected: 16,
                found: 8,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.help().contains("cut short"), "{}", err.help());
    std::fs::write(&path, npy_bytes("<f4", false, "(4,)", &[0; 20])).unwrap();
    let err = read_field(&path, &spec("a", ScalarType::Float, 1), &[4]).unwrap_err();
    assert!(
        err.to_string().ends_with(
            "holds 20 bytes after its header, but its header's shape (4,) of <f4 needs 16"
        ),
        "{err}"
    );
}

#[test]
fn npy_nested_brackets_are_refused_at_once() {
    // ndarray-npy's parser took 11.8 s on 20 levels of this and never ended on 33.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested.npy");
    let depth = 5000;
    let shape = format!("(4,), 'x': {}{}", "[".repeat(depth), "]".repeat(depth));
    std::fs::write(&path, npy_bytes("<f4", false, &shape, &[0; 16])).unwrap();
    let err = read_field(&path, &spec("a", ScalarType::Float, 1), &[4]).unwrap_err();
    assert!(
        matches!(err, DataError::Malformed { .. }) && err.to_string().contains("nest deeper"),
        "{err}"
    );
    assert!(probe_shape(&path).is_err());
}

#[test]
fn npy_shape_larger_than_the_file_is_refused_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.npy");
    std::fs::write(
        &path,
        npy_bytes("<f8", false, "(1000000, 1000000, 1000000)", &[0; 8]),
    )
    .unwrap();
    let err = probe_shape(&path).unwrap_err();
    assert!(
        matches!(err, DataError::NpyDataSize { found: 8, .. }),
        "{err:?}"
    );
    let err = read_field(
        &path,
        &spec("a", ScalarType::Double, 3),
        &[1_000_000, 1_000_000, 1_000_000],
    )
    .unwrap_err();
    assert!(matches!(err, DataError::NpyDataSize { .. }), "{err:?}");
    // A shape whose byte count overflows.
    let shape = format!("({0}, {0}, {0})", usize::MAX);
    std::fs::write(&path, npy_bytes("<f8", false, &shape, &[])).unwrap();
    let err = probe_shape(&path).unwrap_err();
    assert!(
        err.to_string().contains("more bytes than any file holds"),
        "{err}"
    );
    // A header length beyond the file's end.
    let mut bytes = npy_bytes("<f4", false, "(1,)", &[0; 4]);
    bytes[8..10].copy_from_slice(&60000u16.to_le_bytes());
    std::fs::write(&path, bytes).unwrap();
    let err = probe_shape(&path).unwrap_err();
    assert!(err.to_string().contains("claims 60000 bytes"), "{err}");
}

#[test]
fn npy_versions_two_and_three_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.npy");
    for version in [2u8, 3] {
        let dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n";
        let mut bytes = vec![0x93, b'N', b'U', b'M', b'P', b'Y', version, 0];
        bytes.extend_from_slice(&(dict.len() as u32).to_le_bytes());
        bytes.extend_from_slice(dict.as_bytes());
        bytes.extend_from_slice(&[7, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]);
        std::fs::write(&path, bytes).unwrap();
        let data = read_field(&path, &spec("a", ScalarType::Int, 1), &[2]).unwrap();
        assert_eq!(data, Buffer::Int(vec![7, -1]));
    }
}

#[test]
fn npy_fortran_order_three_dimensional() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f3.npy");
    let dims = [2usize, 3, 4];
    // Element (i, j, k) holds 100 i + 10 j + k, stored column-major.
    let mut column_major = Vec::new();
    for k in 0..4 {
        for j in 0..3 {
            for i in 0..2 {
                column_major.extend_from_slice(&(100 * i + 10 * j + k as i64).to_le_bytes());
            }
        }
    }
    std::fs::write(&path, npy_bytes("<i8", true, "(2, 3, 4)", &column_major)).unwrap();
    let data = read_field(&path, &spec("a", ScalarType::Long, 3), &dims).unwrap();
    let row_major: Vec<i64> = (0..2)
        .flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| 100 * i + 10 * j + k)))
        .collect();
    assert_eq!(data, Buffer::Long(row_major));
}

#[test]
fn missing_input_is_a_read_error() {
    let err = read_field(
        Path::new("/nonexistent/in.npy"),
        &spec("a", ScalarType::Float, 1),
        &[4],
    )
    .unwrap_err();
    assert!(matches!(err, DataError::Read { .. }), "{err:?}");
}

#[test]
fn png_maps_pixels_to_unit_range_and_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("img.png");
    let field = spec("img", ScalarType::Float, 2);
    let dims = [2, 3];
    // Out-of-range values clamp; 0.5 rounds to 128.
    let data = Buffer::Float(vec![0.0, 0.5, 1.0, -3.0, 7.0, 100.0 / 255.0]);
    write_output(&path, &field, &data, &dims);
    let decoded = image::open(&path).unwrap().into_luma8();
    assert_eq!((decoded.width(), decoded.height()), (3, 2));
    assert_eq!(decoded.into_raw(), vec![0, 128, 255, 0, 255, 100]);
    assert_eq!(probe_shape(&path).unwrap(), Some(vec![2, 3]));
    let back = read_field(&path, &field, &dims).unwrap();
    assert_eq!(
        back,
        Buffer::Float(vec![0.0, 128.0 / 255.0, 1.0, 0.0, 1.0, 100.0 / 255.0])
    );
}

#[test]
fn pgm_round_trips_as_double() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("img.pgm");
    let field = spec("img", ScalarType::Double, 2);
    let data = Buffer::Double((0..12).map(|i| f64::from(i * 20) / 255.0).collect());
    write_output(&path, &field, &data, &[4, 3]);
    assert!(std::fs::read(&path).unwrap().starts_with(b"P5"));
    assert_eq!(read_field(&path, &field, &[4, 3]).unwrap(), data);
}

#[test]
fn sixteen_bit_png_maps_to_unit_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("deep.png");
    let pixels: ImageBufferL16 = image::ImageBuffer::from_raw(2, 1, vec![0u16, 65535]).unwrap();
    pixels.save(&path).unwrap();
    let data = read_field(&path, &spec("img", ScalarType::Double, 2), &[1, 2]).unwrap();
    assert_eq!(data, Buffer::Double(vec![0.0, 1.0]));
}

type ImageBufferL16 = image::ImageBuffer<image::Luma<u16>, Vec<u16>>;

#[test]
fn colour_png_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rgb.png");
    image::RgbImage::new(2, 2).save(&path).unwrap();
    let err = read_field(&path, &spec("img", ScalarType::Float, 2), &[2, 2]).unwrap_err();
    assert!(matches!(err, DataError::NotGrayscale { .. }), "{err:?}");
    assert!(err.to_string().contains("Rgb8"), "{err}");
}

#[test]
fn image_shape_is_height_by_width() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.png");
    image::GrayImage::new(5, 2).save(&path).unwrap();
    let err = read_field(&path, &spec("img", ScalarType::Float, 2), &[5, 2]).unwrap_err();
    assert!(err.to_string().contains("has shape (2, 5)"), "{err}");
}

#[test]
fn images_need_2d_float_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.png");
    let err = prepare_output(&path, &spec("v", ScalarType::Float, 3)).unwrap_err();
    assert!(
        matches!(err, DataError::ImageNeeds2d { rank: 3, .. }),
        "{err:?}"
    );
    let err = prepare_output(&path, &spec("v", ScalarType::Int, 2)).unwrap_err();
    assert!(matches!(err, DataError::ImageNeedsFloat { .. }), "{err:?}");
    assert!(!path.exists());
}

#[test]
fn raw_round_trips_and_checks_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.raw");
    let field = spec("a", ScalarType::Long, 2);
    let data = Buffer::Long(vec![1, -2, 3, i64::MIN]);
    write_output(&path, &field, &data, &[2, 2]);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 32);
    assert_eq!(probe_shape(&path).unwrap(), None);
    assert_eq!(read_field(&path, &field, &[2, 2]).unwrap(), data);
    let err = read_field(&path, &field, &[2, 3]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "`{}` has 32 bytes but field `a` needs 48 (6 points of long, 8 bytes each)",
            path.display()
        )
    );
}

#[test]
fn raw_size_is_checked_before_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.raw");
    std::fs::write(&path, [0u8; 32]).unwrap();
    let huge = [1usize << 31, 1 << 31, 1 << 20];
    let err = read_field(&path, &spec("a", ScalarType::Double, 3), &huge).unwrap_err();
    assert!(
        matches!(err, DataError::RawSizeMismatch { found: 32, .. }),
        "{err:?}"
    );
}

#[test]
fn image_headers_claiming_more_than_the_file_holds_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("claims.pgm");
    let mut bytes = b"P5\n60000 60000\n255\n".to_vec();
    bytes.extend_from_slice(&[0; 100]);
    std::fs::write(&path, &bytes).unwrap();
    let err = probe_shape(&path).unwrap_err();
    assert!(
        err.to_string()
            .contains("claims a 60000×60000 image, more than a .pgm file of"),
        "{err}"
    );
    let field = spec("img", ScalarType::Float, 2);
    let err = read_field(&path, &field, &[60000, 60000]).unwrap_err();
    assert!(matches!(err, DataError::Malformed { .. }), "{err:?}");
    // A header that fits the file but not the grid: refused before decoding.
    let err = read_field(&path, &field, &[2, 2]).unwrap_err();
    assert!(matches!(err, DataError::Malformed { .. }), "{err:?}");
    let mut bytes = b"P5\n10 10\n255\n".to_vec();
    bytes.extend_from_slice(&[0; 40]);
    std::fs::write(&path, &bytes).unwrap();
    let err = read_field(&path, &field, &[2, 2]).unwrap_err();
    assert!(matches!(err, DataError::ShapeMismatch { .. }), "{err:?}");
    let err = read_field(&path, &field, &[10, 10]).unwrap_err();
    assert!(matches!(err, DataError::Truncated { .. }), "{err:?}");
}

#[test]
fn unsupported_extension_lists_the_supported_ones() {
    let err = Format::from_path(Path::new("out.tiff")).unwrap_err();
    assert_eq!(
        err.help(),
        "name the file with one of the extensions .npy, .png, .pgm, .raw"
    );
    assert_eq!(Format::from_path(Path::new("A.NPY")).unwrap(), Format::Npy);
    assert!(Format::from_path(Path::new("noext")).is_err());
}

#[test]
fn output_directory_must_exist_and_be_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let field = spec("a", ScalarType::Float, 1);
    let missing = dir.path().join("no/such/dir/out.npy");
    assert!(matches!(
        prepare_output(&missing, &field).unwrap_err(),
        DataError::NoSuchDirectory { .. }
    ));
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    assert!(matches!(
        prepare_output(&file.join("out.npy"), &field).unwrap_err(),
        DataError::NotADirectory { .. }
    ));
    let subdir = dir.path().join("sub.npy");
    std::fs::create_dir(&subdir).unwrap();
    assert!(matches!(
        prepare_output(&subdir, &field).unwrap_err(),
        DataError::IsADirectory { .. }
    ));
}

#[test]
fn dropped_output_leaves_nothing_and_keeps_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.raw");
    std::fs::write(&path, b"old").unwrap();
    let pending = prepare_output(&path, &spec("a", ScalarType::Int, 1)).unwrap();
    assert_eq!(stray_files(dir.path()).len(), 1);
    drop(pending);
    assert!(stray_files(dir.path()).is_empty());
    assert_eq!(std::fs::read(&path).unwrap(), b"old");
}

#[cfg(unix)]
#[test]
fn outputs_are_not_private_files() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.raw");
    let field = spec("a", ScalarType::Int, 1);
    write_output(&path, &field, &Buffer::Int(vec![1]), &[1]);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o044, 0o044 & !umask(), "mode {mode:o}");
}

/// The process umask's group/other read bits (read without changing it).
#[cfg(unix)]
fn umask() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Umask:"))
        .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        .unwrap_or(0o022)
}

/// Whether `temp` is on the list a signal's cleanup deletes.
fn listed(temp: &Path) -> bool {
    crate::files::cleanup::is_listed(temp)
}

#[test]
fn pending_temporary_files_are_listed_until_renamed_or_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let field = spec("a", ScalarType::Int, 1);
    let mut kept = prepare_output(&dir.path().join("kept.raw"), &field).unwrap();
    let dropped = prepare_output(&dir.path().join("dropped.raw"), &field).unwrap();
    let (kept_temp, dropped_temp) = (
        kept.temporary_path().to_path_buf(),
        dropped.temporary_path().to_path_buf(),
    );
    assert!(listed(&kept_temp) && listed(&dropped_temp));
    drop(dropped);
    assert!(!listed(&dropped_temp));
    kept.write(&Buffer::Int(vec![7]), &[1]).unwrap();
    kept.persist().unwrap();
    assert!(!listed(&kept_temp));
    assert!(stray_files(dir.path()).is_empty());
}
