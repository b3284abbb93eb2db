//! Embedded regions: `#pragma sdsl begin <options>` … `#pragma sdsl end` in a
//! C/C++ host file, and the schedule hints on the `begin` line.
//!
//! Two spellings of the options are accepted: the guide's
//! `gpu(block:64,8 tile:1,8 time:10)` and the OverTile sources'
//! `time_steps:1 block:8,8,8 tile:1,3,1 time:1`.

use crate::diag::Diagnostic;
use crate::ir::ScheduleHints;
use crate::source::Span;

/// One region found in a host file, before its program is parsed.
#[derive(Clone, Debug)]
pub struct RawRegion {
    /// The program text's byte range in the host file (between the pragma lines).
    pub body: std::ops::Range<usize>,
    /// From the start of the `begin` line to the end of the `end` line.
    pub span: Span,
    /// Options of the `begin` line.
    pub hints: ScheduleHints,
}

/// A `#pragma` line split into its words.
struct PragmaLine<'a> {
    /// Byte range of the whole line (without the newline).
    line: std::ops::Range<usize>,
    /// The word after `pragma` and where it is.
    name: (&'a str, Span),
    /// The text after the name and where it starts.
    rest: (&'a str, usize),
}

/// Finds every region of a host file. Every problem is a diagnostic.
pub fn find_regions(text: &str) -> Result<Vec<RawRegion>, Vec<Diagnostic>> {
    let mut regions = Vec::new();
    let mut errors = Vec::new();
    let mut open: Option<(Span, ScheduleHints, usize)> = None;
    let mut offset = 0;
    for raw_line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += raw_line.len();
        let Some(pragma) = pragma_line(text, line_start, raw_line) else {
            continue;
        };
        let (name, name_span) = pragma.name;
        let (rest, rest_start) = pragma.rest;
        if name != "sdsl" {
            if looks_like_sdsl(name) {
                errors.push(
                    Diagnostic::error(format!("unknown pragma `{name}`"), name_span)
                        .with_label("did you mean `sdsl`?")
                        .with_help("write `#pragma sdsl begin` and `#pragma sdsl end` (the guide's `sds1` is a misprint of `sdsl`)"),
                );
            }
            continue;
        }
        let (verb, verb_start) = first_word(rest, rest_start);
        let line_span = Span::new(pragma.line.start, pragma.line.end);
        match verb {
            "begin" => {
                if let Some((begin, _, _)) = open {
                    errors.push(
                        Diagnostic::error("a region begins inside another region", line_span)
                            .with_label("nested `#pragma sdsl begin`")
                            .with_secondary(begin, "the open region begins here")
                            .with_help("close the first region with `#pragma sdsl end` before beginning another"),
                    );
                    continue;
                }
                let options_start = verb_start + verb.len();
                let options = &text[options_start..pragma.line.end];
                match parse_options(options, options_start) {
                    Ok(hints) => open = Some((line_span, hints, offset)),
                    Err(diag) => {
                        errors.push(diag);
                        open = Some((line_span, ScheduleHints::default(), offset));
                    }
                }
            }
            "end" => match open.take() {
                Some((begin, hints, body_start)) => regions.push(RawRegion {
                    body: body_start..line_start,
                    span: begin.to(line_span),
                    hints,
                }),
                None => errors.push(
                    Diagnostic::error("`#pragma sdsl end` without a region to end", line_span)
                        .with_label("no `#pragma sdsl begin` before this")
                        .with_help("add `#pragma sdsl begin` before the SDSL program, or remove this line"),
                ),
            },
            _ => errors.push(
                Diagnostic::error("expected `begin` or `end` after `#pragma sdsl`", Span::new(verb_start, verb_start + verb.len().max(1)))
                    .with_label("unknown directive")
                    .with_help("write `#pragma sdsl begin [options]` to start a region and `#pragma sdsl end` to close it"),
            ),
        }
    }
    if let Some((begin, _, _)) = open {
        errors.push(
            Diagnostic::error("unterminated SDSL region", begin)
                .with_label("this region is never closed")
                .with_help("add a `#pragma sdsl end` line after the SDSL program"),
        );
    }
    if errors.is_empty() {
        Ok(regions)
    } else {
        Err(errors)
    }
}

fn looks_like_sdsl(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower != "sdsl"
        && (lower == "sds1"
            || lower == "sdsi"
            || crate::front::suggest::edit_distance(&lower, "sdsl") <= 1)
        && !matches!(lower.as_str(), "once" | "omp" | "acc")
}

/// Splits `# pragma name rest` lines; `None` for any other line.
fn pragma_line<'a>(text: &'a str, start: usize, raw: &'a str) -> Option<PragmaLine<'a>> {
    let line = raw.trim_end_matches(['\n', '\r']);
    let trimmed = line.trim_start();
    let hash = start + (line.len() - trimmed.len());
    let after_hash = trimmed.strip_prefix('#')?;
    let (word, word_start) = first_word(after_hash, hash + 1);
    if word != "pragma" {
        return None;
    }
    let after = word_start + word.len();
    let (name, name_start) = first_word(&text[after..start + line.len()], after);
    Some(PragmaLine {
        line: start..start + line.len(),
        name: (name, Span::new(name_start, name_start + name.len())),
        rest: (
            &text[name_start + name.len()..start + line.len()],
            name_start + name.len(),
        ),
    })
}

/// The first run of identifier characters in `s` (after spaces) and its offset.
fn first_word(s: &str, base: usize) -> (&str, usize) {
    let skipped = s.len() - s.trim_start().len();
    let rest = &s[skipped..];
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (&rest[..len], base + skipped)
}

/// Parses the options after `begin`; `base` is their offset in the file.
pub fn parse_options(options: &str, base: usize) -> Result<ScheduleHints, Diagnostic> {
    let mut hints = ScheduleHints {
        span: Span::new(base, base + options.len()),
        ..ScheduleHints::default()
    };
    let mut text = options.trim_end();
    // `gpu( ... )` wraps the options in the guide's spelling.
    let trimmed = text.trim_start();
    let mut body_base = base + (text.len() - trimmed.len());
    text = trimmed;
    if let Some(inner) = text.strip_prefix("gpu") {
        let inner_trim = inner.trim_start();
        let Some(args) = inner_trim.strip_prefix('(') else {
            return Err(option_error("expected `(` after `gpu`", body_base, 3));
        };
        let Some(close) = args.rfind(')') else {
            return Err(option_error(
                "`gpu(` is never closed",
                body_base,
                text.len(),
            ));
        };
        if !args[close + 1..].trim().is_empty() {
            let at = body_base + text.len() - args.len() + close + 1;
            return Err(option_error(
                "unexpected text after `gpu(...)`",
                at,
                args.len() - close - 1,
            ));
        }
        body_base += text.len() - args.len();
        text = &args[..close];
    }
    let mut pos = 0;
    let bytes = text.as_bytes();
    while pos < bytes.len() {
        if bytes[pos].is_ascii_whitespace() {
            pos += 1;
            continue;
        }
        let key_start = pos;
        while pos < bytes.len() && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'_') {
            pos += 1;
        }
        let key = &text[key_start..pos];
        if key.is_empty() || pos >= bytes.len() || bytes[pos] != b':' {
            let len = key.len().max(1);
            return Err(option_error(
                "expected an option such as `block:64,8`",
                body_base + key_start,
                len,
            ));
        }
        pos += 1;
        let value_start = pos;
        while pos < bytes.len()
            && (bytes[pos].is_ascii_digit()
                || bytes[pos] == b','
                || bytes[pos] == b' ' && next_is_digit_after_comma(text, pos))
        {
            pos += 1;
        }
        let value_text = &text[value_start..pos];
        let values: Result<Vec<u32>, _> = value_text
            .split(',')
            .map(|v| v.trim().parse::<u32>())
            .collect();
        let values = match values {
            Ok(v) if !v.is_empty() && v.iter().all(|&x| x > 0) => v,
            _ => {
                return Err(option_error(
                    &format!("option `{key}` needs positive integers separated by commas"),
                    body_base + value_start,
                    value_text.len().max(1),
                ))
            }
        };
        let single = |values: &[u32]| -> Result<u32, Diagnostic> {
            if values.len() == 1 {
                Ok(values[0])
            } else {
                Err(option_error(
                    &format!("option `{key}` takes a single integer"),
                    body_base + value_start,
                    value_text.len(),
                ))
            }
        };
        match key {
            "block" => hints.block = Some(values),
            "tile" => hints.tile = Some(values),
            "time" => hints.time = Some(single(&values)?),
            "time_steps" => hints.time_steps = Some(single(&values)?),
            _ => {
                return Err(Diagnostic::error(
                    format!("unknown region option `{key}`"),
                    Span::new(body_base + key_start, body_base + key_start + key.len()),
                )
                .with_label("not an option")
                .with_help("the options are `block:`, `tile:`, `time:` and `time_steps:`, e.g. `gpu(block:64,8 tile:1,8 time:10)`"))
            }
        }
    }
    if let (Some(block), Some(tile)) = (&hints.block, &hints.tile) {
        if block.len() != tile.len() {
            return Err(Diagnostic::error(
                "`block` and `tile` list different numbers of dimensions",
                hints.span,
            )
            .with_label(format!(
                "block has {}, tile has {}",
                block.len(),
                tile.len()
            ))
            .with_help("give both one integer per spatial dimension of the grid"));
        }
    }
    Ok(hints)
}

/// Allows `block:8, 8` (a space after a comma) without swallowing the next option.
fn next_is_digit_after_comma(text: &str, pos: usize) -> bool {
    let before = text[..pos].trim_end();
    before.ends_with(',')
}

fn option_error(message: &str, at: usize, len: usize) -> Diagnostic {
    Diagnostic::error(message.to_string(), Span::new(at, at + len.max(1)))
        .with_label("bad region option")
        .with_help("region options read `gpu(block:64,8 tile:1,8 time:10)` or `block:8,8,8 tile:1,3,1 time:1 time_steps:1`")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings() {
        let h = parse_options(" gpu(block:64,8 tile:1,8 time:10)", 0).expect("parses");
        assert_eq!(h.block, Some(vec![64, 8]));
        assert_eq!(h.tile, Some(vec![1, 8]));
        assert_eq!(h.time, Some(10));
        let h = parse_options(" time_steps:1 block:8,8,8 tile:1,3,1 time:1", 0).expect("parses");
        assert_eq!(h.time_steps, Some(1));
        assert_eq!(h.block, Some(vec![8, 8, 8]));
        assert_eq!(h.tile, Some(vec![1, 3, 1]));
        assert_eq!(h.time, Some(1));
        assert_eq!(parse_options("", 0).expect("empty").block, None);
    }

    #[test]
    fn bad_options() {
        assert!(parse_options("gpu(block:0)", 0).is_err());
        assert!(parse_options("warp:3", 0).is_err());
        assert!(parse_options("gpu(block:4", 0).is_err());
        assert!(parse_options("time:1,2", 0).is_err());
        assert!(parse_options("block", 0).is_err());
    }
}
