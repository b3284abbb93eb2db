//! Embedded regions: `#pragma sdsl begin <options>` … `#pragma sdsl end` in a
//! C/C++ host file, and the schedule hints on the `begin` line.
//!
//! Two spellings of the options are accepted: the guide's
//! `gpu(block:64,8 tile:1,8 time:10)` and the OverTile sources'
//! `time_steps:1 block:8,8,8 tile:1,3,1 time:1`. Values are integer
//! expressions of literals and host identifiers (`time_steps:IterPerCall
//! block:BX*2,8`); an identifier `#define`d before the region (to an integer
//! expression) takes that value, any other is left for the user to give.

use std::collections::BTreeMap;

use crate::diag::Diagnostic;
use crate::ir::{HintExpr, HintOp, HintValue, ScheduleHints};
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

/// Parses the options after `begin`; `base` is their offset in the file.
///
/// Every value that uses no identifier is checked here (a positive integer);
/// values with identifiers are checked once the identifiers have values.
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
    let mut parser = OptionParser {
        tokens: tokenize(text, body_base)?,
        pos: 0,
        text,
        base: body_base,
    };
    while let Some(key_token) = parser.peek() {
        let key = match key_token.kind {
            TokenKind::Word(word)
                if parser.peek_at(1).map(|t| t.kind) == Some(TokenKind::Punct(b':')) =>
            {
                word
            }
            _ => {
                return Err(option_error(
                    "expected an option such as `block:64,8`",
                    key_token.start,
                    key_token.end - key_token.start,
                ))
            }
        };
        if !matches!(key, "block" | "tile" | "time" | "time_steps") {
            return Err(Diagnostic::error(
                format!("unknown region option `{key}`"),
                Span::new(key_token.start, key_token.end),
            )
            .with_label("not an option")
            .with_help("the options are `block:`, `tile:`, `time:` and `time_steps:`, e.g. `gpu(block:64,8 tile:1,8 time:10)`"));
        }
        parser.pos += 2;
        let mut values = vec![parser.value(key)?];
        while parser.peek().map(|t| t.kind) == Some(TokenKind::Punct(b',')) {
            parser.pos += 1;
            values.push(parser.value(key)?);
        }
        let single = |mut values: Vec<HintValue>| -> Result<HintValue, Diagnostic> {
            if values.len() == 1 {
                Ok(values.remove(0))
            } else {
                let span = values[0].span.to(values[values.len() - 1].span);
                Err(option_error(
                    &format!("option `{key}` takes a single integer"),
                    span.start as usize,
                    (span.end - span.start) as usize,
                ))
            }
        };
        match key {
            "block" => hints.block = Some(values),
            "tile" => hints.tile = Some(values),
            "time" => hints.time = Some(single(values)?),
            _ => hints.time_steps = Some(single(values)?),
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
    check_known_values(&hints)?;
    Ok(hints)
}

/// Evaluates every value whose identifiers all have values: each must be a
/// positive integer.
fn check_known_values(hints: &ScheduleHints) -> Result<(), Diagnostic> {
    let options = [
        ("block", hints.block.as_deref().unwrap_or_default()),
        ("tile", hints.tile.as_deref().unwrap_or_default()),
        ("time", hints.time.as_slice()),
        ("time_steps", hints.time_steps.as_slice()),
    ];
    for (option, values) in options {
        for value in values {
            let mut known = true;
            value
                .expr
                .for_each_name(&mut |name, _| known &= hints.values.contains_key(name));
            if known {
                value.evaluate(option, &hints.values)?;
            }
        }
    }
    Ok(())
}

/// The most operators one option value may hold (values are evaluated
/// recursively; real ones hold a handful).
const MAX_VALUE_OPERATORS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TokenKind<'a> {
    Word(&'a str),
    Int(i64),
    Punct(u8),
}

#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    kind: TokenKind<'a>,
    /// Byte offsets in the file.
    start: usize,
    end: usize,
}

/// Splits option text into identifiers, C integer literals (decimal, octal,
/// hexadecimal, with `u`/`l` suffixes) and the punctuation `: , ( ) + - * / %`.
fn tokenize(text: &str, base: usize) -> Result<Vec<Token<'_>>, Diagnostic> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let c = bytes[pos];
        if c.is_ascii_whitespace() {
            pos += 1;
            continue;
        }
        let start = pos;
        let kind = if c.is_ascii_alphanumeric() || c == b'_' {
            while pos < bytes.len() && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'_') {
                pos += 1;
            }
            let word = &text[start..pos];
            if c.is_ascii_digit() {
                let Some(value) = c_integer(word) else {
                    return Err(option_error(
                        &format!("`{word}` is not an integer"),
                        base + start,
                        word.len(),
                    ));
                };
                TokenKind::Int(value)
            } else {
                TokenKind::Word(word)
            }
        } else if b":,()+-*/%".contains(&c) {
            pos += 1;
            TokenKind::Punct(c)
        } else {
            let ch = text[start..].chars().next().unwrap_or(' ');
            return Err(option_error(
                &format!("unexpected `{ch}` in the region's options"),
                base + start,
                ch.len_utf8(),
            ));
        };
        tokens.push(Token {
            kind,
            start: base + start,
            end: base + pos,
        });
    }
    Ok(tokens)
}

/// A C integer literal's value: `8`, `010` (octal), `0x1F`, `8u`, `8UL`.
fn c_integer(word: &str) -> Option<i64> {
    let digits = word.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()
    } else {
        digits.parse().ok()
    }
}

/// Recursive descent over option tokens: `sum := product (('+'|'-') product)*`,
/// `product := unary (('*'|'/'|'%') unary)*`, `unary := ('-'|'+') unary | primary`,
/// `primary := INT | IDENT | '(' sum ')'`.
struct OptionParser<'a> {
    tokens: Vec<Token<'a>>,
    pos: usize,
    /// The option text and its offset in the file (for the values' text).
    text: &'a str,
    base: usize,
}

impl<'a> OptionParser<'a> {
    fn peek(&self) -> Option<Token<'a>> {
        self.tokens.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<Token<'a>> {
        self.tokens.get(self.pos + ahead).copied()
    }

    fn punct(&self) -> Option<u8> {
        match self.peek()?.kind {
            TokenKind::Punct(c) => Some(c),
            _ => None,
        }
    }

    /// One value of option `key`.
    fn value(&mut self, key: &str) -> Result<HintValue, Diagnostic> {
        let first = self.pos;
        let mut operators = 0;
        let expr = self.sum(key, &mut operators)?;
        let start = self.tokens[first].start;
        let end = self.tokens[self.pos - 1].end;
        Ok(HintValue {
            expr,
            text: self.text[start - self.base..end - self.base].to_string(),
            span: Span::new(start, end),
        })
    }

    fn sum(&mut self, key: &str, operators: &mut usize) -> Result<HintExpr, Diagnostic> {
        let mut lhs = self.product(key, operators)?;
        while let Some(op @ (b'+' | b'-')) = self.punct() {
            self.operator(operators)?;
            let rhs = self.product(key, operators)?;
            let op = if op == b'+' { HintOp::Add } else { HintOp::Sub };
            lhs = HintExpr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn product(&mut self, key: &str, operators: &mut usize) -> Result<HintExpr, Diagnostic> {
        let mut lhs = self.unary(key, operators)?;
        while let Some(op @ (b'*' | b'/' | b'%')) = self.punct() {
            self.operator(operators)?;
            let rhs = self.unary(key, operators)?;
            let op = match op {
                b'*' => HintOp::Mul,
                b'/' => HintOp::Div,
                _ => HintOp::Rem,
            };
            lhs = HintExpr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self, key: &str, operators: &mut usize) -> Result<HintExpr, Diagnostic> {
        match self.punct() {
            Some(b'-') => {
                self.operator(operators)?;
                Ok(HintExpr::Neg(Box::new(self.unary(key, operators)?)))
            }
            Some(b'+') => {
                self.operator(operators)?;
                self.unary(key, operators)
            }
            _ => self.primary(key, operators),
        }
    }

    fn primary(&mut self, key: &str, operators: &mut usize) -> Result<HintExpr, Diagnostic> {
        let Some(token) = self.peek() else {
            let at = self.tokens.last().map_or(self.base, |t| t.end);
            return Err(option_error(
                &format!("option `{key}` needs a value after `:` or `,`"),
                at,
                1,
            ));
        };
        self.pos += 1;
        match token.kind {
            TokenKind::Int(v) => Ok(HintExpr::Int(v)),
            TokenKind::Word(name) => Ok(HintExpr::Name {
                name: name.to_string(),
                span: Span::new(token.start, token.end),
            }),
            TokenKind::Punct(b'(') => {
                count_operator(operators, token)?;
                let inner = self.sum(key, operators)?;
                if self.punct() != Some(b')') {
                    let at = self.peek().map_or(token.start, |t| t.start);
                    return Err(option_error("expected `)` to close `(`", at, 1));
                }
                self.pos += 1;
                Ok(inner)
            }
            TokenKind::Punct(_) => Err(option_error(
                &format!(
                    "option `{key}` needs positive integers or host identifiers separated by commas"
                ),
                token.start,
                token.end - token.start,
            )),
        }
    }

    /// Consumes an operator, refusing overlong values.
    fn operator(&mut self, operators: &mut usize) -> Result<(), Diagnostic> {
        let token = self.tokens[self.pos];
        self.pos += 1;
        count_operator(operators, token)
    }
}

/// Counts an operator or parenthesis of a value, refusing overlong values.
fn count_operator(operators: &mut usize, token: Token<'_>) -> Result<(), Diagnostic> {
    *operators += 1;
    if *operators > MAX_VALUE_OPERATORS {
        return Err(option_error(
            &format!(
                "an option value may hold at most {MAX_VALUE_OPERATORS} operators and parentheses"
            ),
            token.start,
            1,
        ));
    }
    Ok(())
}

fn option_error(message: &str, at: usize, len: usize) -> Diagnostic {
    Diagnostic::error(message.to_string(), Span::new(at, at + len.max(1)))
        .with_label("bad region option")
        .with_help("region options read `gpu(block:64,8 tile:1,8 time:10)` or `block:8,8,8 tile:1,3,1 time:1 time_steps:1`; values are integers, host identifiers or `+ - * / %` of them, e.g. `block:BX*2,8`")
}

/// The object-like macros of a host file, as far as read (`#define NAME body`,
/// `#undef NAME`), whose bodies give option identifiers their values.
#[derive(Default)]
struct Defines {
    /// Body text by name; `None` for a function-like macro (not a value).
    bodies: BTreeMap<String, Option<String>>,
}

/// How many macros deep a value may refer (which also stops cycles).
const MAX_DEFINE_DEPTH: usize = 32;

impl Defines {
    /// Records `raw_line` if it is a `#define` or `#undef` (taking its
    /// backslash-continued lines from `rest`); whether it was one.
    fn directive<'t>(
        &mut self,
        raw_line: &str,
        rest: &mut std::iter::Peekable<impl Iterator<Item = &'t str>>,
        offset: &mut usize,
    ) -> bool {
        let Some(after_hash) = raw_line.trim_start().strip_prefix('#') else {
            return false;
        };
        let (word, _) = first_word(after_hash, 0);
        if word != "define" && word != "undef" {
            return false;
        }
        let mut line = raw_line.trim_end_matches(['\n', '\r']).to_string();
        while line.ends_with('\\') {
            line.pop();
            let Some(next) = rest.next() else { break };
            *offset += next.len();
            line.push(' ');
            line.push_str(next.trim_end_matches(['\n', '\r']));
        }
        let after_hash = line.trim_start().trim_start_matches('#');
        let after_word = after_hash.trim_start()[word.len()..].to_string();
        let (name, name_at) = first_word(&after_word, 0);
        if name.is_empty() {
            return true;
        }
        if word == "undef" {
            self.bodies.remove(name);
            return true;
        }
        let after_name = &after_word[name_at + name.len()..];
        let body = if after_name.starts_with('(') {
            None
        } else {
            Some(strip_comments(after_name).trim().to_string())
        };
        self.bodies.insert(name.to_string(), body);
        true
    }

    /// The value of macro `name`, if its body is an integer expression of
    /// literals and macros with values.
    fn value(&self, name: &str, depth: usize) -> Option<i64> {
        if depth > MAX_DEFINE_DEPTH {
            return None;
        }
        let body = self.bodies.get(name)?.as_deref()?;
        let tokens = tokenize(body, 0).ok()?;
        if tokens.is_empty() {
            return None;
        }
        let mut parser = OptionParser {
            tokens,
            pos: 0,
            text: body,
            base: 0,
        };
        let value = parser.value(name).ok()?;
        if parser.pos != parser.tokens.len() {
            return None;
        }
        value
            .expr
            .evaluate(&|inner| self.value(inner, depth + 1))
            .ok()
    }

    /// Gives the hints' identifiers the values of the macros defined so far,
    /// then checks every value that is now known.
    fn apply(&self, mut hints: ScheduleHints) -> Result<ScheduleHints, Diagnostic> {
        let names: Vec<String> = hints.names().iter().map(|(n, _)| n.to_string()).collect();
        for name in names {
            if let Some(value) = self.value(&name, 0) {
                hints.values.insert(name, value);
            }
        }
        check_known_values(&hints)?;
        Ok(hints)
    }
}

/// `text` without its `/* ... */` and `// ...` comments.
fn strip_comments(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                match rest[b + 2..].find("*/") {
                    Some(end) => rest = &rest[b + 2 + end + 2..],
                    None => return out,
                }
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                return out;
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
