//! Embedded regions: `#pragma sdsl begin <options>` … `#pragma sdsl end` in a
//! C/C++ host file, and the schedule hints on the `begin` line.
//!
//! Two spellings of the options are accepted: the guide's
//! `gpu(block:64,8 tile:1,8 time:10)` and the OverTile sources'
//! `time_steps:1 block:8,8,8 tile:1,3,1 time:1`. Values are integer
//! expressions of literals and host identifiers (`time_steps:IterPerCall
//! block:BX*2,8`); an identifier `#define`d before the region (to an integer
//! expression) takes that value, any other is left for the user to give.

mod options;

use crate::diag::Diagnostic;
use crate::ir::ScheduleHints;
use crate::source::Span;

pub use options::parse_options;
use options::Defines;

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
    let mut defines = Defines::default();
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(raw_line) = lines.next() {
        let line_start = offset;
        offset += raw_line.len();
        if open.is_none() && defines.directive(raw_line, &mut lines, &mut offset) {
            continue;
        }
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
                match parse_options(options, options_start)
                    .and_then(|hints| defines.apply(hints))
                {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::HintValue;

    fn values(list: &Option<Vec<HintValue>>) -> Vec<String> {
        list.iter().flatten().map(|v| v.text.clone()).collect()
    }

    #[test]
    fn both_spellings() {
        let h = parse_options(" gpu(block:64,8 tile:1,8 time:10)", 0).expect("parses");
        assert_eq!(h.block_values().unwrap(), Some(vec![64, 8]));
        assert_eq!(h.tile_values().unwrap(), Some(vec![1, 8]));
        assert_eq!(h.time.as_ref().unwrap().text, "10");
        let h = parse_options(" time_steps:1 block:8,8,8 tile:1,3,1 time:1", 0).expect("parses");
        assert_eq!(h.time_steps.as_ref().unwrap().text, "1");
        assert_eq!(h.block_values().unwrap(), Some(vec![8, 8, 8]));
        assert_eq!(h.tile_values().unwrap(), Some(vec![1, 3, 1]));
        assert_eq!(h.time.as_ref().unwrap().text, "1");
        assert_eq!(parse_options("", 0).expect("empty").block, None);
        // A space after a comma, and C literals.
        let h = parse_options("block:8, 0x10 tile:1,2u", 0).expect("parses");
        assert_eq!(h.block_values().unwrap(), Some(vec![8, 16]));
        assert_eq!(h.tile_values().unwrap(), Some(vec![1, 2]));
    }

    #[test]
    fn values_may_be_host_identifiers_and_expressions() {
        let text = " time_steps:IterPerCall block:BX*2,(8+BY)/2 tile:1,-1+3 time:1";
        let h = parse_options(text, 100).expect("parses");
        assert_eq!(values(&h.block), ["BX*2", "(8+BY)/2"]);
        assert_eq!(values(&h.tile), ["1", "-1+3"]);
        let names: Vec<&str> = h.names().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["BX", "BY", "IterPerCall"]);
        // Spans point at the identifier in the file.
        let (_, span) = h.names()[0];
        assert_eq!(
            &text[span.start as usize - 100..span.end as usize - 100],
            "BX"
        );
        // Without values, evaluating says which identifier and how to give it.
        let missing = h.block_values().unwrap_err();
        assert!(missing.message.contains("`BX`"), "{}", missing.message);
        assert!(missing.help.as_deref().unwrap().contains("--set BX="));
        assert_eq!(h.tile_values().unwrap(), Some(vec![1, 2]));
        let mut h = h;
        h.values.insert("BX".into(), 16);
        h.values.insert("BY".into(), 8);
        assert_eq!(h.block_values().unwrap(), Some(vec![32, 8]));
    }

    #[test]
    fn defines_before_the_region_give_values() {
        let host = "#define BX 8\n#define BY (BX / 2) /* half */\n#define STEPS \\\n   4u\n#define F(x) x\n\
                    #pragma sdsl begin time_steps:STEPS block:BX*2,BY tile:1,F\nint n;\n#pragma sdsl end\n\
                    #undef BX\n#define BY 3\n\
                    #pragma sdsl begin block:BX,BY\nint n;\n#pragma sdsl end\n";
        let regions = find_regions(host).expect("regions");
        let first = &regions[0].hints;
        assert_eq!(first.block_values().unwrap(), Some(vec![16, 4]));
        assert_eq!(first.values.get("STEPS"), Some(&4));
        // A function-like macro is not a value.
        assert!(first.tile_values().unwrap_err().message.contains("`F`"));
        let second = &regions[1].hints;
        assert_eq!(second.values.get("BY"), Some(&3));
        assert!(second.block_values().unwrap_err().message.contains("`BX`"));
    }

    #[test]
    fn known_values_must_be_positive() {
        let err =
            find_regions("#define BX 4\n#pragma sdsl begin block:BX-4\nint n;\n#pragma sdsl end\n")
                .unwrap_err();
        assert!(err[0].message.contains("`BX-4` is 0"), "{}", err[0].message);
        assert!(parse_options("block:8/0", 0).is_err());
        // Cyclic macros have no value (and do not recurse forever).
        let regions = find_regions(
            "#define A B\n#define B A\n#pragma sdsl begin block:A\nint n;\n#pragma sdsl end\n",
        )
        .expect("regions");
        assert!(regions[0].hints.block_values().is_err());
    }

    #[test]
    fn vector_staging_and_fusion_options() {
        let h = parse_options(
            " gpu(block:32,4 tile:1,2 vector:2 shm:U,F fuse:on time:6)",
            0,
        )
        .expect("parses");
        assert_eq!(h.vector_value().unwrap(), Some(2));
        assert_eq!(h.shm, Some(vec!["U".to_string(), "F".to_string()]));
        assert_eq!(h.fuse, Some(true));
        assert_eq!(h.time.as_ref().unwrap().text, "6");
        assert!(h.any());
        let h = parse_options("shm:none fuse:off vector:W", 0).expect("parses");
        assert_eq!(h.shm, Some(vec!["none".to_string()]));
        assert_eq!(h.fuse, Some(false));
        assert!(h.vector_value().unwrap_err().message.contains("`W`"));
        assert!(!parse_options("", 0).unwrap().any());
        let fuse = parse_options("fuse:1", 0).unwrap_err();
        assert!(
            fuse.message.contains("takes `on` or `off`"),
            "{}",
            fuse.message
        );
        let shm = parse_options("shm:8", 0).unwrap_err();
        assert!(
            shm.message.contains("`none`, `auto` or field"),
            "{}",
            shm.message
        );
        assert!(parse_options("vector:2,2", 0).is_err());
        assert!(parse_options("vector:0", 0).is_err());
        assert!(parse_options("shm:", 0).is_err());
    }

    #[test]
    fn bad_options() {
        assert!(parse_options("gpu(block:0)", 0).is_err());
        assert!(parse_options("warp:3", 0).is_err());
        assert!(parse_options("gpu(block:4", 0).is_err());
        assert!(parse_options("time:1,2", 0).is_err());
        assert!(parse_options("block", 0).is_err());
        assert!(parse_options("block:", 0).is_err());
        assert!(parse_options("block:8 8", 0).is_err());
        assert!(parse_options("block:(8", 0).is_err());
        assert!(parse_options("block:8;", 0).is_err());
        assert!(parse_options("block:09", 0).is_err());
        let long = format!("block:{}", vec!["1"; 200].join("+"));
        assert!(parse_options(&long, 0).is_err());
    }
}
