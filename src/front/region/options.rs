//! The options of a `#pragma sdsl begin` line: `key:value,value` pairs whose
//! values are integer expressions of literals and host identifiers, and the
//! host file's `#define`s that give those identifiers values.

use std::collections::BTreeMap;

use super::first_word;
use crate::diag::Diagnostic;
use crate::ir::{HintExpr, HintOp, HintValue, ScheduleHints};
use crate::source::Span;

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
        if !matches!(
            key,
            "block" | "tile" | "time" | "time_steps" | "vector" | "shm" | "fuse"
        ) {
            return Err(Diagnostic::error(
                format!("unknown region option `{key}`"),
                Span::new(key_token.start, key_token.end),
            )
            .with_label("not an option")
            .with_help("the options are `block:`, `tile:`, `time:`, `time_steps:`, `vector:`, `shm:` and `fuse:`, e.g. `gpu(block:64,8 tile:1,8 vector:2 shm:none time:10)`"));
        }
        parser.pos += 2;
        match key {
            "shm" => {
                hints.shm = Some(parser.words(key)?);
                continue;
            }
            "fuse" => {
                hints.fuse = Some(parser.switch(key)?);
                continue;
            }
            _ => {}
        }
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
            "vector" => hints.vector = Some(single(values)?),
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
        ("vector", hints.vector.as_slice()),
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

    /// The comma-separated identifiers of option `key` (`shm:none`,
    /// `shm:U,F`).
    fn words(&mut self, key: &str) -> Result<Vec<String>, Diagnostic> {
        let mut words = Vec::new();
        loop {
            match self.peek() {
                Some(Token {
                    kind: TokenKind::Word(word),
                    ..
                }) => {
                    self.pos += 1;
                    words.push(word.to_string());
                }
                other => {
                    let (at, len) = other.map_or_else(
                        || (self.tokens.last().map_or(self.base, |t| t.end), 1),
                        |t| (t.start, t.end - t.start),
                    );
                    return Err(option_error(
                        &format!(
                            "option `{key}` takes `none`, `auto` or field and table names \
                             separated by commas, e.g. `{key}:none` or `{key}:U,F`"
                        ),
                        at,
                        len,
                    ));
                }
            }
            if self.punct() != Some(b',') {
                return Ok(words);
            }
            self.pos += 1;
        }
    }

    /// The `on` or `off` of option `key`.
    fn switch(&mut self, key: &str) -> Result<bool, Diagnostic> {
        let token = self.peek();
        let value = match token.map(|t| t.kind) {
            Some(TokenKind::Word("on")) => true,
            Some(TokenKind::Word("off")) => false,
            _ => {
                let (at, len) = token.map_or_else(
                    || (self.tokens.last().map_or(self.base, |t| t.end), 1),
                    |t| (t.start, t.end - t.start),
                );
                return Err(option_error(
                    &format!("option `{key}` takes `on` or `off`, e.g. `{key}:on`"),
                    at,
                    len,
                ));
            }
        };
        self.pos += 1;
        Ok(value)
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
        .with_help("region options read `gpu(block:64,8 tile:1,8 time:10)` or `block:8,8,8 tile:1,3,1 time:1 time_steps:1`, with `vector:2`, `shm:none|auto|FIELDS` and `fuse:on|off`; values are integers, host identifiers or `+ - * / %` of them, e.g. `block:BX*2,8`")
}

/// The object-like macros of a host file, as far as read (`#define NAME body`,
/// `#undef NAME`), whose bodies give option identifiers their values.
#[derive(Default)]
pub(super) struct Defines {
    /// Body text by name; `None` for a function-like macro (not a value).
    bodies: BTreeMap<String, Option<String>>,
}

/// How many macros deep a value may refer (which also stops cycles).
const MAX_DEFINE_DEPTH: usize = 32;

impl Defines {
    /// Records `raw_line` if it is a `#define` or `#undef` (taking its
    /// backslash-continued lines from `rest`); whether it was one.
    pub(super) fn directive<'t>(
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
    pub(super) fn apply(&self, mut hints: ScheduleHints) -> Result<ScheduleHints, Diagnostic> {
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
