//! `stencilc tune --plot FILE`: every measured configuration's time, in the
//! order measured, with the best marked; SVG or PNG by the file's extension
//! (plotters).
//!
//! Text needs a font file (plotters measures it even for SVG): the first of a
//! few usual system fonts (DejaVu Sans, Liberation Sans, ...) is used; without
//! one the plot is drawn without text and a note says so.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;
use stencilc::tune::search::Measurement;

use crate::cli::error::CliError;

/// Pixel size of the plot.
const SIZE: (u32, u32) = (960, 540);

/// Fonts tried for PNG text, in order.
const FONT_FILES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation/LiberationSans-Regular.ttf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Registers a system font for plotters once; whether one was found.
fn font_registered() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(|| {
        FONT_FILES.iter().any(|path| {
            let Ok(bytes) = std::fs::read(path) else {
                return false;
            };
            // plotters keeps the font for the process.
            let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok()
        })
    })
}

/// Draws the plot of `measurements` (title `title`) into `path`; returns a
/// note when the PNG had to be drawn without text.
pub fn plot(
    path: &Path,
    title: &str,
    measurements: &[Measurement],
    best: Option<usize>,
) -> Result<Option<String>, CliError> {
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let failed = |e: String| {
        CliError::new(
            format!("cannot draw the plot `{}`: {e}", path.display()),
            "check that the folder exists and is writable",
        )
    };
    match extension.as_deref() {
        Some("svg") => {
            // plotters measures text with the font even for SVG.
            let text = font_registered();
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
                draw(&root, title, measurements, best, text).map_err(failed)?;
                root.present().map_err(|e| failed(e.to_string()))?;
            }
            // Whole or not at all, as every output.
            stencilc::files::write_whole(path, svg.as_bytes())
                .map_err(|e| failed(e.to_string()))?;
            Ok((!text).then(no_font_note))
        }
        Some("png") => {
            let text = font_registered();
            let mut pixels = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
            {
                let root = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
                draw(&root, title, measurements, best, text).map_err(failed)?;
                root.present().map_err(|e| failed(e.to_string()))?;
            }
            let mut png = std::io::Cursor::new(Vec::new());
            image::write_buffer_with_format(
                &mut png,
                &pixels,
                SIZE.0,
                SIZE.1,
                image::ExtendedColorType::Rgb8,
                image::ImageFormat::Png,
            )
            .map_err(|e| failed(e.to_string()))?;
            stencilc::files::write_whole(path, png.get_ref()).map_err(|e| failed(e.to_string()))?;
            Ok((!text).then(no_font_note))
        }
        _ => Err(unknown_format(path)),
    }
}

/// Refuses, before anything is measured, a plot file that is neither `.svg`
/// nor `.png`.
pub fn check_format(path: &Path) -> Result<(), CliError> {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") || e.eq_ignore_ascii_case("png") => Ok(()),
        _ => Err(unknown_format(path)),
    }
}

fn unknown_format(path: &Path) -> CliError {
    CliError::new(
        format!(
            "`{}` is neither .svg nor .png: cannot tell which plot to draw",
            path.display()
        ),
        "give --plot a file ending in .svg or .png",
    )
}

fn no_font_note() -> String {
    format!(
        "no font found for the plot's text (looked for {} and others); drew it without labels",
        FONT_FILES[0]
    )
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    measurements: &[Measurement],
    best: Option<usize>,
    text: bool,
) -> Result<(), String> {
    let e = |err: DrawingAreaErrorKind<DB::ErrorType>| err.to_string();
    root.fill(&WHITE).map_err(e)?;
    let points: Vec<(usize, f64)> = measurements
        .iter()
        .enumerate()
        .filter_map(|(i, m)| m.median.map(|t| (i + 1, t * 1e3)))
        .collect();
    let top = points.iter().map(|p| p.1).fold(0.0, f64::max).max(1e-6) * 1.1;
    let mut builder = ChartBuilder::on(root);
    builder.margin(16);
    if text {
        builder
            .caption(title, ("sans-serif", 22))
            .x_label_area_size(44)
            .y_label_area_size(64);
    }
    let mut chart = builder
        .build_cartesian_2d(0usize..measurements.len() + 1, 0.0..top)
        .map_err(e)?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc("configuration (in the order measured)")
            .y_desc("median time (ms)");
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(e)?;
    chart
        .draw_series(
            points
                .iter()
                .map(|&(x, y)| Circle::new((x, y), 3, BLUE.filled())),
        )
        .map_err(e)?;
    if let Some((x, y)) = best.and_then(|b| measurements[b].median.map(|t| (b + 1, t * 1e3))) {
        chart
            .draw_series(std::iter::once(Circle::new((x, y), 7, RED.stroke_width(2))))
            .map_err(e)?;
        if text {
            let label = format!(
                "best: {} ({:.3} ms)",
                measurements[best.unwrap_or(0)].knobs.label(),
                y
            );
            chart
                .draw_series(std::iter::once(Text::new(
                    label,
                    (x, y + top * 0.05),
                    ("sans-serif", 15).into_font().color(&RED),
                )))
                .map_err(e)?;
        }
    }
    Ok(())
}
