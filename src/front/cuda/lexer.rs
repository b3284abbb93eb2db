//! The lexer and preprocessor of the CUDA subset: text to [`Token`]s.
//!
//! Comments and whitespace are skipped. Of the preprocessor, only object-like
//! `#define NAME tokens...` (plus `-D NAME=VALUE` from the command line) and
//! `#pragma` lines (ignored, as they only tune code generation) are accepted;
//! every other directive is a diagnostic. Macro uses are expanded here, with the
//! span of the use, so that the parser never sees a macro name.

use std::collections::HashMap;

use crate::diag::Diagnostic;
use crate::source::Span;

/// How deeply macros may expand into macros (a `#define A B` / `#define B A`
/// pair is reported instead of looping).
pub const MAX_MACRO_DEPTH: usize = 32;

/// The most tokens that macro uses in a file may expand into, all uses
/// together: 65,536 (2^16), far past what a kernel's constants and short
/// expressions need, while a chain of macros that each use the previous one
/// twice (2^20 terms in 20 lines) is stopped before it takes gigabytes.
pub const MAX_EXPANDED_TOKENS: usize = 1 << 16;

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// A name or keyword (`int`, `__global__`, `threadIdx`, `in`).
    Ident(String),
    /// An integer literal and whether it has a `u`/`U` suffix and an `l`/`L` one.
    Int {
        /// The value (hex literals included).
        value: u64,
        /// `u` or `U` suffix.
        unsigned: bool,
        /// `l`, `L`, `ll` or `LL` suffix.
        long: bool,
    },
    /// A floating literal and whether it has an `f`/`F` suffix.
    Float {
        /// The value.
        value: f64,
        /// `f` or `F` suffix: a `float`, not a `double`.
        single: bool,
    },
    /// A string literal's contents (only `profile("...")` and `extern "C"` take one).
    Str(String),
    /// An operator or punctuation, as written (`+=`, `<<`, `(`).
    Punct(&'static str),
    /// The end of the text.
    Eof,
}

/// One token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is (for an expanded macro: where the macro was used).
    pub span: Span,
}

/// Operators and punctuation, longest first so that `<<=` wins over `<<` and `<`.
const PUNCTS: &[&str] = &[
    "<<=", ">>=", "++", "--", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<", ">>", "<=",
    ">=", "==", "!=", "&&", "||", "->", "::", "+", "-", "*", "/", "%", "<", ">", "=", "!", "~",
    "&", "|", "^", "?", ":", ";", ",", ".", "(", ")", "[", "]", "{", "}",
];

/// Lexes `text` and expands macros; `defines` are `-D NAME=VALUE` pairs from the
/// command line (a `#define` in the file may not redefine one).
pub fn lex(text: &str, defines: &[(String, String)]) -> Result<Vec<Token>, Diagnostic> {
    let mut macros: HashMap<String, Vec<Token>> = HashMap::new();
    for (name, value) in defines {
        let mut body = raw_lex(value, 0, value.len(), &mut HashMap::new()).map_err(|d| {
            Diagnostic::error(
                format!("`-D {name}={value}`: {}", d.message),
                Span::new(0, 0),
            )
            .with_help("give -D a value that is one C expression, as in `-D BLOCK_X=32`")
        })?;
        body.pop(); // Eof
        for token in &mut body {
            token.span = Span::new(0, 0);
        }
        macros.insert(name.clone(), body);
    }
    let raw = raw_lex(text, 0, text.len(), &mut macros)?;
    expand(raw, &macros)
}

/// Replaces macro names by their bodies, recursively, each expansion carrying
/// the span of the use.
fn expand(raw: Vec<Token>, macros: &HashMap<String, Vec<Token>>) -> Result<Vec<Token>, Diagnostic> {
    let mut out = Vec::with_capacity(raw.len());
    let mut budget = MAX_EXPANDED_TOKENS;
    for token in raw {
        expand_one(token, macros, &mut Vec::new(), &mut budget, &mut out)?;
    }
    Ok(out)
}

/// Expands `token` into `out`; `budget` is how many more tokens macro bodies
/// may still add (see [`MAX_EXPANDED_TOKENS`]).
fn expand_one(
    token: Token,
    macros: &HashMap<String, Vec<Token>>,
    active: &mut Vec<String>,
    budget: &mut usize,
    out: &mut Vec<Token>,
) -> Result<(), Diagnostic> {
    let TokenKind::Ident(name) = &token.kind else {
        out.push(token);
        return Ok(());
    };
    let Some(body) = macros.get(name) else {
        out.push(token);
        return Ok(());
    };
    if active.contains(name) {
        return Err(
            Diagnostic::error(format!("macro `{name}` expands into itself"), token.span).with_help(
                "give the macro a value that does not name it, directly or through others",
            ),
        );
    }
    if active.len() >= MAX_MACRO_DEPTH {
        return Err(Diagnostic::error(
            format!(
                "macro `{name}` is nested more than {MAX_MACRO_DEPTH} macros deep (in `{}`), \
                 the limit of macro expansion",
                active[0]
            ),
            token.span,
        )
        .with_label("expanded here")
        .with_help(format!(
            "define the value with fewer macros in between (at most {MAX_MACRO_DEPTH} deep), \
             or pass it with `-D NAME=VALUE`"
        )));
    }
    if body.len() > *budget {
        return Err(Diagnostic::error(
            format!(
                "the macros of this file expand into more than {MAX_EXPANDED_TOKENS} tokens, \
                 the limit of macro expansion (reached expanding `{name}`)"
            ),
            token.span,
        )
        .with_label("the limit was reached expanding this")
        .with_help(
            "write the expression without macros that use other macros several times \
             (each such use doubles the text)",
        ));
    }
    *budget -= body.len();
    active.push(name.clone());
    for inner in body {
        let mut inner = inner.clone();
        inner.span = token.span;
        expand_one(inner, macros, active, budget, out)?;
    }
    active.pop();
    Ok(())
}

/// Lexes `text[start..end]`, recording `#define`s into `macros` as it goes
/// (unexpanded).
fn raw_lex(
    text: &str,
    start: usize,
    end: usize,
    macros: &mut HashMap<String, Vec<Token>>,
) -> Result<Vec<Token>, Diagnostic> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut pos = start;
    let mut line_start = true;
    while pos < end {
        let c = bytes[pos];
        match c {
            b'\n' => {
                pos += 1;
                line_start = true;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => pos += 1,
            b'\\' if bytes.get(pos + 1) == Some(&b'\n') => pos += 2,
            b'/' if bytes.get(pos + 1) == Some(&b'/') => {
                while pos < end && bytes[pos] != b'\n' {
                    pos += 1;
                }
            }
            b'/' if bytes.get(pos + 1) == Some(&b'*') => {
                let Some(close) = text[pos + 2..end].find("*/") else {
                    return Err(Diagnostic::error(
                        "unterminated block comment",
                        Span::new(pos, pos + 2),
                    )
                    .with_help("close the comment with `*/`"));
                };
                pos += close + 4;
            }
            b'#' if line_start => {
                let line_end = directive_end(text, pos, end);
                directive(text, pos, line_end, macros)?;
                pos = line_end;
            }
            b'"' => {
                let from = pos;
                pos += 1;
                while pos < end && bytes[pos] != b'"' && bytes[pos] != b'\n' {
                    pos += 1;
                }
                if pos >= end || bytes[pos] != b'"' {
                    return Err(Diagnostic::error(
                        "unterminated string literal",
                        Span::new(from, pos),
                    )
                    .with_help("close the string with `\"` on the same line"));
                }
                pos += 1;
                tokens.push(Token {
                    kind: TokenKind::Str(text[from + 1..pos - 1].to_string()),
                    span: Span::new(from, pos),
                });
                line_start = false;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let from = pos;
                while pos < end && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'_') {
                    pos += 1;
                }
                tokens.push(Token {
                    kind: TokenKind::Ident(text[from..pos].to_string()),
                    span: Span::new(from, pos),
                });
                line_start = false;
            }
            b'0'..=b'9' => {
                let (kind, len) = number(text, pos, end)?;
                tokens.push(Token {
                    kind,
                    span: Span::new(pos, pos + len),
                });
                pos += len;
                line_start = false;
            }
            b'.' if bytes.get(pos + 1).is_some_and(u8::is_ascii_digit) && pos + 1 < end => {
                let (kind, len) = number(text, pos, end)?;
                tokens.push(Token {
                    kind,
                    span: Span::new(pos, pos + len),
                });
                pos += len;
                line_start = false;
            }
            _ => {
                let rest = &text[pos..end];
                let Some(p) = PUNCTS.iter().find(|p| rest.starts_with(**p)) else {
                    let ch = rest.chars().next().unwrap_or('?');
                    return Err(Diagnostic::error(
                        format!("unexpected character `{}`", ch.escape_default()),
                        Span::new(pos, pos + ch.len_utf8()),
                    )
                    .with_label("not part of the CUDA subset")
                    .with_help("remove it; kernels use C operators, names and numbers only"));
                };
                tokens.push(Token {
                    kind: TokenKind::Punct(p),
                    span: Span::new(pos, pos + p.len()),
                });
                pos += p.len();
                line_start = false;
            }
        }
    }
    tokens.push(Token {
        kind: TokenKind::Eof,
        span: Span::new(end, end),
    });
    Ok(tokens)
}

/// The end of a directive's line, following `\` continuations.
fn directive_end(text: &str, from: usize, end: usize) -> usize {
    let bytes = text.as_bytes();
    let mut pos = from;
    while pos < end && bytes[pos] != b'\n' {
        if bytes[pos] == b'\\' && bytes.get(pos + 1) == Some(&b'\n') {
            pos += 1;
        }
        pos += 1;
    }
    pos
}

/// Handles one preprocessor line `text[from..to]` (starting at `#`).
fn directive(
    text: &str,
    from: usize,
    to: usize,
    macros: &mut HashMap<String, Vec<Token>>,
) -> Result<(), Diagnostic> {
    let bytes = text.as_bytes();
    let mut pos = from + 1;
    while pos < to && (bytes[pos] == b' ' || bytes[pos] == b'\t') {
        pos += 1;
    }
    let word_start = pos;
    while pos < to && bytes[pos].is_ascii_alphabetic() {
        pos += 1;
    }
    let word = &text[word_start..pos];
    match word {
        "pragma" => Ok(()),
        "define" => {
            while pos < to && (bytes[pos] == b' ' || bytes[pos] == b'\t') {
                pos += 1;
            }
            let name_start = pos;
            while pos < to && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'_') {
                pos += 1;
            }
            let name = &text[name_start..pos];
            let name_span = Span::new(name_start, pos);
            if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
                return Err(Diagnostic::error("`#define` without a name", name_span)
                    .with_help("write `#define NAME VALUE`"));
            }
            if bytes.get(pos) == Some(&b'(') {
                return Err(Diagnostic::error(
                    format!("function-like macro `{name}` is outside the CUDA subset"),
                    Span::new(name_start, pos + 1),
                )
                .with_help(
                    "use an object-like `#define NAME VALUE`, or write the expression out",
                ));
            }
            if macros
                .get(name)
                .is_some_and(|b| b.iter().all(|t| t.span == Span::new(0, 0)))
            {
                // `-D` from the command line wins over the file, as with nvcc
                // when the file guards its default (here without `#ifndef`).
                return Ok(());
            }
            let mut body = raw_lex(text, pos, to, &mut HashMap::new())?;
            body.pop();
            macros.insert(name.to_string(), body);
            Ok(())
        }
        _ => Err(Diagnostic::error(
            format!("preprocessor directive `#{word}` is outside the CUDA subset"),
            Span::new(from, pos.max(from + 1)),
        )
        .with_label("only `#define NAME VALUE` and `#pragma` are accepted")
        .with_help("remove the directive, or give values with `-D NAME=VALUE`")),
    }
}

/// Lexes a number at `text[pos..]`; returns the token and its length.
fn number(text: &str, pos: usize, end: usize) -> Result<(TokenKind, usize), Diagnostic> {
    let bytes = &text.as_bytes()[..end];
    let mut i = pos;
    let is_hex = bytes[i] == b'0' && matches!(bytes.get(i + 1), Some(b'x' | b'X'));
    let mut is_float = false;
    if is_hex {
        i += 2;
        while i < end && bytes[i].is_ascii_hexdigit() {
            i += 1;
        }
    } else {
        while i < end && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if i < end && bytes[i] == b'.' {
            is_float = true;
            i += 1;
            while i < end && bytes[i].is_ascii_digit() {
                i += 1;
            }
        }
        if i < end && matches!(bytes[i], b'e' | b'E') {
            let sign = usize::from(matches!(bytes.get(i + 1), Some(b'+' | b'-')));
            if bytes.get(i + 1 + sign).is_some_and(u8::is_ascii_digit) {
                is_float = true;
                i += 1 + sign;
                while i < end && bytes[i].is_ascii_digit() {
                    i += 1;
                }
            }
        }
    }
    let digits_end = i;
    while i < end && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
        i += 1;
    }
    let digits = &text[pos..digits_end];
    let suffix = text[digits_end..i].to_ascii_lowercase();
    let span = Span::new(pos, i);
    let bad = |what: &str, help: &str| {
        Err(Diagnostic::error(format!("malformed number: {what}"), span)
            .with_help(help.to_string()))
    };
    if is_float {
        let single = match suffix.as_str() {
            "" => false,
            "f" => true,
            _ => {
                return bad(
                    "unknown suffix",
                    "use `f` for a float literal, or no suffix for a double",
                )
            }
        };
        match digits.parse::<f64>() {
            Ok(value) => Ok((TokenKind::Float { value, single }, i - pos)),
            Err(_) => bad("not a number", "write a decimal number such as `0.25f`"),
        }
    } else {
        let (unsigned, long) = match suffix.as_str() {
            "" => (false, false),
            "u" => (true, false),
            "l" | "ll" => (false, true),
            "ul" | "lu" | "ull" | "llu" => (true, true),
            "f" => return bad("`f` on an integer", "write `1.0f` for a float"),
            _ => {
                return bad(
                    "unknown suffix",
                    "use `u`, `l` or `ul` (or none) on integers",
                )
            }
        };
        let value = if is_hex {
            u64::from_str_radix(&digits[2..], 16)
        } else {
            digits.parse::<u64>()
        };
        match value {
            Ok(value) => Ok((
                TokenKind::Int {
                    value,
                    unsigned,
                    long,
                },
                i - pos,
            )),
            Err(_) => bad("too large or empty", "integers must fit in 64 bits"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str, defines: &[(String, String)]) -> Vec<TokenKind> {
        lex(text, defines)
            .unwrap()
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn defines_expand_and_command_line_wins() {
        let found = kinds(
            "#define N 4\n#define M (N+1)\nM",
            &[("N".to_string(), "8".to_string())],
        );
        assert_eq!(
            found[1],
            TokenKind::Int {
                value: 8,
                unsigned: false,
                long: false
            }
        );
    }

    #[test]
    fn numbers_and_operators() {
        let found = kinds("0xffu 1.5f 2e3 x<<=1", &[]);
        assert_eq!(
            found[0],
            TokenKind::Int {
                value: 255,
                unsigned: true,
                long: false
            }
        );
        assert_eq!(
            found[1],
            TokenKind::Float {
                value: 1.5,
                single: true
            }
        );
        assert_eq!(found[4], TokenKind::Punct("<<="));
    }

    #[test]
    fn include_is_refused_with_a_place() {
        let err = lex("int a;\n#include <x.h>\n", &[]).unwrap_err();
        assert!(err.message.contains("#include"), "{}", err.message);
        assert_eq!(err.span.start, 7);
    }

    #[test]
    fn recursive_macro_is_an_error() {
        let err = lex("#define A B\n#define B A\nA", &[]).unwrap_err();
        assert!(err.message.contains("expands into itself"));
    }

    #[test]
    fn doubling_macros_stop_at_the_expansion_limit() {
        // E20 would be 2^20 terms (about 4 million tokens).
        let mut text = String::from("#define E0 x\n");
        for i in 1..=20 {
            text.push_str(&format!("#define E{i} (E{p} + E{p})\n", p = i - 1));
        }
        text.push_str("E20\n");
        let err = lex(&text, &[]).unwrap_err();
        assert!(
            err.message.contains("more than 65536 tokens") && err.message.contains("limit"),
            "{}",
            err.message
        );
        // Twelve doublings (about 20,000 tokens) are within it.
        let ok = text.replace("E20\n", "E12\n");
        assert!(lex(&ok, &[]).is_ok());
    }

    #[test]
    fn a_deep_chain_of_macros_names_the_depth_limit() {
        let mut text = String::from("#define M0 1\n");
        for i in 1..=40 {
            text.push_str(&format!("#define M{i} M{}\n", i - 1));
        }
        text.push_str("M40\n");
        let err = lex(&text, &[]).unwrap_err();
        assert!(
            err.message.contains("more than 32 macros deep") && !err.message.contains("itself"),
            "{}",
            err.message
        );
    }
}
