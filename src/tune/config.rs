//! The SDSL autotuner's configuration file (SDSL User Guide ch. 6.2, fig. 7.9),
//! read by `stencilc tune --config FILE`.
//!
//! ```text
//! # sdslc flags
//! -b overtile
//! # nvcc flags
//! -O3 -arch=compute_30 -code=sm_30 -Xcompiler -O3 -DSTANDALONE_DRIVER
//! # Space dims
//! 3
//! # Thread block sizes <start end step>
//! 4 8 2
//! 4 8 2
//! 4 8 2
//! # Space tile sizes <start end step>
//! 1 4 1
//! 1 4 1
//! 1 4 1
//! # Time tile sizes <start end step>
//! 1 1 1
//! ```
//!
//! `#` starts a comment that runs to the end of the line; blank lines are
//! ignored. The lines that remain are, in order: the sdslc flags, the nvcc
//! flags, the number of space dimensions D (1 to 3), D `start end step` lines
//! of thread-block sizes, D of space-tile sizes (points per thread), and one of
//! time-tile sizes. Dimensions are listed innermost first, as in the pragma's
//! `block:x,y,z`. The flags lines are kept but change nothing here: stencilc
//! has no sdslc back-end choice and compiles CUDA with NVRTC. A malformed file
//! is a diagnostic at the line and column of the fault.

use std::sync::Arc;

use crate::diag::{Diagnostic, Diagnostics};
use crate::source::{SourceFile, Span};

/// One `start end step` line: the values `start, start+step, ...` up to `end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// First value.
    pub start: u32,
    /// Last value allowed (inclusive).
    pub end: u32,
    /// Increment, at least 1.
    pub step: u32,
}

impl Range {
    /// The values of the range, in increasing order.
    pub fn values(&self) -> Vec<u32> {
        (self.start..=self.end)
            .step_by(self.step as usize)
            .collect()
    }
}

/// A parsed autotuner configuration file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuneConfig {
    /// The sdslc flags line (kept for reports; stencilc ignores it).
    pub sdslc_flags: String,
    /// The nvcc flags line (kept for reports; stencilc ignores it).
    pub nvcc_flags: String,
    /// Thread-block sizes per dimension, innermost first.
    pub blocks: Vec<Range>,
    /// Space-tile sizes (points per thread) per dimension, innermost first.
    pub tiles: Vec<Range>,
    /// Time-tile sizes.
    pub time: Range,
}

impl TuneConfig {
    /// The number of space dimensions.
    pub fn dims(&self) -> usize {
        self.blocks.len()
    }

    /// How many configurations the file describes (the product of the ranges'
    /// lengths: 3^3 * 4^3 * 1 = 1728 for fig. 7.9).
    pub fn size(&self) -> usize {
        self.blocks
            .iter()
            .chain(&self.tiles)
            .chain(std::iter::once(&self.time))
            .map(|r| r.values().len())
            .product()
    }
}

/// A meaningful line: its text without the comment, and where it starts.
struct Line {
    text: String,
    /// Byte offset of the line's first non-blank character in the file.
    start: usize,
}

fn meaningful_lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut offset = 0;
    for raw in text.split_inclusive('\n') {
        let content = raw.split('#').next().unwrap_or("");
        let trimmed = content.trim_end();
        let leading = trimmed.len() - trimmed.trim_start().len();
        if !trimmed.trim().is_empty() {
            out.push(Line {
                text: trimmed.trim_start().to_string(),
                start: offset + leading,
            });
        }
        offset += raw.len();
    }
    out
}

/// What the parser expects next, for messages.
fn describe(index: usize, dims: usize) -> String {
    match index {
        0 => "the sdslc flags line".into(),
        1 => "the nvcc flags line".into(),
        2 => "the number of space dimensions".into(),
        i if i < 3 + dims => format!(
            "thread-block sizes `start end step` for dimension {}",
            i - 2
        ),
        i if i < 3 + 2 * dims => format!(
            "space-tile sizes `start end step` for dimension {}",
            i - 2 - dims
        ),
        _ => "the time-tile sizes `start end step`".into(),
    }
}

/// Parses a configuration file's text; `source` names it in diagnostics.
pub fn parse(source: Arc<SourceFile>) -> Result<TuneConfig, Diagnostics> {
    parse_lines(&source).map_err(|d| Diagnostics::new(source.clone(), vec![d]))
}

fn parse_lines(source: &SourceFile) -> Result<TuneConfig, Diagnostic> {
    let text = source.text.as_str();
    let lines = meaningful_lines(text);
    let end = text.trim_end().len();
    let missing = |index: usize, dims: usize| {
        Diagnostic::error(
            format!("the configuration ends before {}", describe(index, dims)),
            Span::new(end, end),
        )
        .with_label("expected more lines here")
        .with_help(
            "a configuration has: the sdslc flags line, the nvcc flags line, the number of \
             dimensions D, D `start end step` lines of block sizes, D of tile sizes, and one \
             of time-tile sizes (SDSL User Guide 6.2)",
        )
    };
    let sdslc_flags = lines.first().ok_or_else(|| missing(0, 0))?.text.clone();
    let nvcc_flags = lines.get(1).ok_or_else(|| missing(1, 0))?.text.clone();
    let dims_line = lines.get(2).ok_or_else(|| missing(2, 0))?;
    let dims = match dims_line.text.parse::<usize>() {
        Ok(d @ 1..=3) => d,
        _ => {
            let word = dims_line.text.split_whitespace().next().unwrap_or("");
            return Err(Diagnostic::error(
                format!("`{}` is not a number of space dimensions", dims_line.text),
                Span::new(dims_line.start, dims_line.start + word.len().max(1)),
            )
            .with_label("expected 1, 2 or 3")
            .with_help(
                "the third line of a configuration is the grid's number of space dimensions: \
                 1, 2 or 3",
            ));
        }
    };
    let mut ranges = Vec::new();
    for index in 3..3 + 2 * dims + 1 {
        let line = lines.get(index).ok_or_else(|| missing(index, dims))?;
        ranges.push(parse_range(line, &describe(index, dims))?);
    }
    if let Some(extra) = lines.get(3 + 2 * dims + 1) {
        return Err(Diagnostic::error(
            "a line after the time-tile sizes",
            Span::new(extra.start, extra.start + extra.text.len().max(1)),
        )
        .with_label("unexpected")
        .with_help(format!(
            "with {dims} dimension(s) the file ends after the time-tile line; remove this line \
             or comment it out with `#`"
        )));
    }
    let time = ranges.pop().expect("the time range was parsed");
    let tiles = ranges.split_off(dims);
    Ok(TuneConfig {
        sdslc_flags,
        nvcc_flags,
        blocks: ranges,
        tiles,
        time,
    })
}

fn parse_range(line: &Line, what: &str) -> Result<Range, Diagnostic> {
    let mut numbers = Vec::new();
    let mut offset = 0;
    for word in line.text.split_whitespace() {
        let at = offset + line.text[offset..].find(word).unwrap_or(0);
        offset = at + word.len();
        let span = Span::new(line.start + at, line.start + at + word.len());
        if numbers.len() == 3 {
            return Err(Diagnostic::error(
                format!("more than three numbers on the line of {what}"),
                span,
            )
            .with_label("a fourth value")
            .with_help("give exactly `start end step`, e.g. `4 8 2`"));
        }
        match word.parse::<u32>() {
            Ok(n) if n > 0 => numbers.push((n, span)),
            _ => {
                return Err(Diagnostic::error(
                    format!("`{word}` is not a positive integer (in {what})"),
                    span,
                )
                .with_label("expected a positive integer")
                .with_help("give exactly `start end step`, three positive integers, e.g. `4 8 2`"))
            }
        }
    }
    if numbers.len() < 3 {
        let at = line.start + line.text.len();
        return Err(Diagnostic::error(
            format!("{} number(s) where {what} needs three", numbers.len()),
            Span::new(at, at),
        )
        .with_label("expected `start end step`")
        .with_help("give exactly `start end step`, three positive integers, e.g. `4 8 2`"));
    }
    let (start, _) = numbers[0];
    let (end, end_span) = numbers[1];
    if end < start {
        return Err(Diagnostic::error(
            format!("the end {end} is below the start {start} (in {what})"),
            end_span,
        )
        .with_label("expected at least the start")
        .with_help("write `start end step` with end >= start"));
    }
    Ok(Range {
        start,
        end,
        step: numbers[2].0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fig. 7.9 of the SDSL User Guide, without the figure's line numbers.
    const FIG_7_9: &str = "# sdslc flags\n-b overtile\n\n# nvcc flags\n\
        -O3 -arch=compute_30 -code=sm_30 -Xcompiler -O3 -DSTANDALONE_DRIVER\n\n# Space dims\n3\n\n\
        # Thread block sizes <start end step>\n4 8 2\n4 8 2\n4 8 2\n\n\
        # Space tile sizes <start end step>\n1 4 1\n1 4 1\n1 4 1\n\n\
        # Time tile sizes <start end step>\n1 1 1\n";

    fn parsed(text: &str) -> Result<TuneConfig, String> {
        parse(SourceFile::new("autotune.conf", text)).map_err(|d| d.to_string())
    }

    #[test]
    fn the_guides_figure_7_9_has_1728_configurations() {
        let config = parsed(FIG_7_9).unwrap();
        assert_eq!(config.sdslc_flags, "-b overtile");
        assert!(config.nvcc_flags.starts_with("-O3 -arch=compute_30"));
        assert_eq!(config.dims(), 3);
        assert_eq!(config.blocks[0].values(), vec![4, 6, 8]);
        assert_eq!(config.tiles[2].values(), vec![1, 2, 3, 4]);
        assert_eq!(config.time.values(), vec![1]);
        assert_eq!(config.size(), 1728);
    }

    #[test]
    fn the_section_6_2_example_with_trailing_comments_parses() {
        let text = "# sdslc flags\n-b overtile --legacy-gpu\n# nvcc flags\n-O3 -arch=sm_20\n\
            # Space dims\n2 # two\n8 512 8\n2 64 2\n8 256 8 # x\n2 64 2\n1 4 1\n";
        let config = parsed(text).unwrap();
        assert_eq!(config.blocks[0].values().len(), 64);
        assert_eq!(config.time.values(), vec![1, 2, 3, 4]);
    }

    #[test]
    fn malformed_files_point_at_the_fault() {
        let bad_dims = FIG_7_9.replace("\n3\n", "\nthree\n");
        let e = parsed(&bad_dims).unwrap_err();
        assert!(e.contains("autotune.conf:8:1"), "{e}");
        assert!(e.contains("expected 1, 2 or 3"), "{e}");

        let bad_number = FIG_7_9.replacen("4 8 2\n4 8 2", "4 8 2\n4 x 2", 1);
        let e = parsed(&bad_number).unwrap_err();
        assert!(e.contains("autotune.conf:12:3"), "{e}");
        assert!(e.contains("`x` is not a positive integer"), "{e}");
        assert!(e.contains("thread-block sizes"), "{e}");

        let short = FIG_7_9.replacen("1 4 1\n1 4 1\n1 4 1", "1 4 1\n1 4\n1 4 1", 1);
        let e = parsed(&short).unwrap_err();
        assert!(e.contains("autotune.conf:17:4"), "{e}");
        assert!(e.contains("needs three"), "{e}");

        let backwards = FIG_7_9.replace("1 1 1", "4 1 1");
        let e = parsed(&backwards).unwrap_err();
        assert!(e.contains("below the start"), "{e}");

        let truncated = &FIG_7_9[..FIG_7_9.find("# Time").unwrap()];
        let e = parsed(truncated).unwrap_err();
        assert!(e.contains("ends before the time-tile sizes"), "{e}");

        let extra = format!("{FIG_7_9}2 2 2\n");
        let e = parsed(&extra).unwrap_err();
        assert!(e.contains("autotune.conf:22:1"), "{e}");

        let e = parsed("").unwrap_err();
        assert!(e.contains("the sdslc flags line"), "{e}");
    }
}
