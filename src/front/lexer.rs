//! The lexer: SDSL text to [`Token`]s, skipping whitespace and C/C++ comments.
//!
//! Literals follow C: `118` is an `int` (a `long` when too large for `int`), `1L`
//! a `long`, `0.2f` and `.00001f` are `float`, `1.0E-20` a `double`. All literals
//! are base 10, as the SDSL guide says. `2..3` lexes as `2`, `..`, `3` so that
//! loop ranges need no spaces.

use std::ops::Range;

use crate::diag::Diagnostic;
use crate::front::token::{Keyword, Token, TokenKind};
use crate::ir::ScalarType;
use crate::source::Span;

/// Splits `text[range]` into tokens whose spans are offsets in the whole `text`,
/// ending with an [`TokenKind::Eof`] token. Stops at the first malformed token.
pub fn lex(text: &str, range: Range<usize>) -> Result<Vec<Token>, Diagnostic> {
    let mut lexer = Lexer {
        text,
        pos: range.start,
        end: range.end.min(text.len()),
        tokens: Vec::new(),
    };
    lexer.run()?;
    Ok(lexer.tokens)
}

struct Lexer<'a> {
    text: &'a str,
    pos: usize,
    end: usize,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    fn peek_at(&self, ahead: usize) -> Option<u8> {
        let i = self.pos + ahead;
        if i < self.end {
            Some(self.text.as_bytes()[i])
        } else {
            None
        }
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        self.tokens.push(Token {
            kind,
            span: Span::new(start, self.pos),
        });
    }

    fn run(&mut self) -> Result<(), Diagnostic> {
        while let Some(c) = self.peek_at(0) {
            let start = self.pos;
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\x0b' => self.pos += 1,
                // A byte-order mark that editors on Windows put first is not text.
                0xEF if self.pos == 0 && self.text.starts_with('\u{feff}') => {
                    self.pos += '\u{feff}'.len_utf8();
                }
                b'/' if self.peek_at(1) == Some(b'/') => {
                    // A lone `\r` ends a line too (classic Mac line ends), or a
                    // file of them would be one comment.
                    while let Some(c) = self.peek_at(0) {
                        if c == b'\n' || c == b'\r' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                b'/' if self.peek_at(1) == Some(b'*') => self.block_comment()?,
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.word(),
                b'0'..=b'9' => self.number()?,
                b'.' if matches!(self.peek_at(1), Some(b'0'..=b'9')) => self.number()?,
                _ => {
                    let (kind, len) = match self.punct(c) {
                        Some(found) => found,
                        None => return Err(self.bad_char(start)),
                    };
                    self.pos += len;
                    self.push(kind, start);
                }
            }
        }
        self.tokens.push(Token {
            kind: TokenKind::Eof,
            span: Span::new(self.end, self.end),
        });
        Ok(())
    }

    fn block_comment(&mut self) -> Result<(), Diagnostic> {
        let start = self.pos;
        self.pos += 2;
        loop {
            match self.peek_at(0) {
                None => {
                    return Err(Diagnostic::error(
                        "unterminated block comment",
                        Span::new(start, start + 2),
                    )
                    .with_label("this comment is never closed")
                    .with_help("close the comment with `*/`"))
                }
                Some(b'*') if self.peek_at(1) == Some(b'/') => {
                    self.pos += 2;
                    return Ok(());
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn word(&mut self) {
        let start = self.pos;
        while let Some(b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_') = self.peek_at(0) {
            self.pos += 1;
        }
        let word = &self.text[start..self.pos];
        let kind = match Keyword::from_word(word) {
            Some(k) => TokenKind::Keyword(k),
            None => TokenKind::Ident(word.to_string()),
        };
        self.push(kind, start);
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek_at(0) {
            self.pos += 1;
        }
    }

    fn number(&mut self) -> Result<(), Diagnostic> {
        let start = self.pos;
        let mut is_float = false;
        self.digits();
        // `1..3` is a range, not `1.` followed by `.3`.
        if self.peek_at(0) == Some(b'.') && self.peek_at(1) != Some(b'.') {
            is_float = true;
            self.pos += 1;
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek_at(0) {
            let sign = usize::from(matches!(self.peek_at(1), Some(b'+' | b'-')));
            if matches!(self.peek_at(1 + sign), Some(b'0'..=b'9')) {
                is_float = true;
                self.pos += 1 + sign;
                self.digits();
            } else if self.text.as_bytes()[start..self.pos]
                .iter()
                .all(u8::is_ascii_digit)
                || is_float
            {
                self.pos += 1;
                return Err(Diagnostic::error(
                    "exponent has no digits",
                    Span::new(start, self.pos),
                )
                .with_label("malformed number")
                .with_help("write the exponent's digits, as in `1.0e-5`"));
            }
        }
        let number_end = self.pos;
        while let Some(b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_') = self.peek_at(0) {
            self.pos += 1;
        }
        let digits = &self.text[start..number_end];
        let suffix = &self.text[number_end..self.pos];
        let span = Span::new(start, self.pos);
        let kind = if is_float {
            float_literal(digits, suffix, span)?
        } else {
            int_literal(digits, suffix, span)?
        };
        self.push(kind, start);
        Ok(())
    }

    fn punct(&self, c: u8) -> Option<(TokenKind, usize)> {
        let next = self.peek_at(1);
        let two = |kind| Some((kind, 2));
        let one = |kind| Some((kind, 1));
        match (c, next) {
            (b'.', Some(b'.')) => two(TokenKind::DotDot),
            (b'=', Some(b'=')) => two(TokenKind::EqEq),
            (b'!', Some(b'=')) => two(TokenKind::NotEq),
            (b'<', Some(b'=')) => two(TokenKind::Le),
            (b'>', Some(b'=')) => two(TokenKind::Ge),
            (b'&', Some(b'&')) => two(TokenKind::AndAnd),
            (b'|', Some(b'|')) => two(TokenKind::OrOr),
            (b'(', _) => one(TokenKind::LParen),
            (b')', _) => one(TokenKind::RParen),
            (b'[', _) => one(TokenKind::LBracket),
            (b']', _) => one(TokenKind::RBracket),
            (b'{', _) => one(TokenKind::LBrace),
            (b'}', _) => one(TokenKind::RBrace),
            (b';', _) => one(TokenKind::Semi),
            (b',', _) => one(TokenKind::Comma),
            (b':', _) => one(TokenKind::Colon),
            (b'?', _) => one(TokenKind::Question),
            (b'=', _) => one(TokenKind::Assign),
            (b'+', _) => one(TokenKind::Plus),
            (b'-', _) => one(TokenKind::Minus),
            (b'*', _) => one(TokenKind::Star),
            (b'/', _) => one(TokenKind::Slash),
            (b'%', _) => one(TokenKind::Percent),
            (b'<', _) => one(TokenKind::Lt),
            (b'>', _) => one(TokenKind::Gt),
            (b'!', _) => one(TokenKind::Bang),
            _ => None,
        }
    }

    fn bad_char(&self, start: usize) -> Diagnostic {
        let ch = self.text[start..].chars().next().unwrap_or('?');
        let span = Span::new(start, start + ch.len_utf8());
        let help = match ch {
            '#' => "SDSL has no preprocessor; in a C/C++ file put the program between \
                    `#pragma sdsl begin` and `#pragma sdsl end` lines"
                .to_string(),
            '&' => "write `&&` for logical and; SDSL has no bitwise operators".to_string(),
            '|' => "write `||` for logical or; SDSL has no bitwise operators".to_string(),
            '.' => "write a number with a digit after the point (`.5`) or a range as `lo..hi`"
                .to_string(),
            _ => format!("remove the character `{}`", ch.escape_default()),
        };
        Diagnostic::error(
            format!("unexpected character `{}`", ch.escape_default()),
            span,
        )
        .with_label("not part of the SDSL language")
        .with_help(help)
    }
}

fn int_literal(digits: &str, suffix: &str, span: Span) -> Result<TokenKind, Diagnostic> {
    let explicit_long = match suffix {
        "" => false,
        "l" | "L" | "ll" | "LL" => true,
        _ if digits == "0" && suffix.starts_with(['x', 'X', 'b', 'B']) => {
            return Err(Diagnostic::error(
                "hexadecimal and binary literals are not supported",
                span,
            )
            .with_label("not a base-10 literal")
            .with_help("SDSL literals are base 10: write the value in decimal"));
        }
        _ => return Err(bad_suffix(suffix, span, "`L` (long)")),
    };
    let value: i64 = digits.parse().map_err(|_| {
        Diagnostic::error("integer literal is too large", span)
            .with_label("does not fit in a `long` (64 bits)")
            .with_help("use a smaller value, or a floating-point literal such as `1.0e19`")
    })?;
    let ty = if explicit_long || value > i64::from(i32::MAX) {
        ScalarType::Long
    } else {
        ScalarType::Int
    };
    Ok(TokenKind::Int(value, ty))
}

fn float_literal(digits: &str, suffix: &str, span: Span) -> Result<TokenKind, Diagnostic> {
    let is_float = match suffix {
        "" => false,
        "f" | "F" => true,
        _ => return Err(bad_suffix(suffix, span, "`f` (float)")),
    };
    // Parse straight to the literal's type so that `0.1f` rounds once, as in C.
    let value = if is_float {
        digits.parse::<f32>().map(f64::from)
    } else {
        digits.parse::<f64>()
    };
    match value {
        Ok(v) if v.is_finite() => Ok(TokenKind::Float(
            v,
            if is_float {
                ScalarType::Float
            } else {
                ScalarType::Double
            },
        )),
        _ => Err(
            Diagnostic::error("floating-point literal is out of range", span)
                .with_label("too large for its type")
                .with_help("use a smaller exponent, or a `double` literal (no `f` suffix)"),
        ),
    }
}

fn bad_suffix(suffix: &str, span: Span, allowed: &str) -> Diagnostic {
    Diagnostic::error(format!("invalid literal suffix `{suffix}`"), span)
        .with_label("unknown suffix")
        .with_help(format!(
            "the only suffix allowed here is {allowed}; separate a name from a number with an operator or a space"
        ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        lex(text, 0..text.len())
            .expect("lexes")
            .into_iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn c_literals_get_c_types() {
        assert_eq!(
            kinds("118 1L 0.2f .00001f 1.0E-20 3000000000"),
            vec![
                TokenKind::Int(118, ScalarType::Int),
                TokenKind::Int(1, ScalarType::Long),
                TokenKind::Float(f64::from(0.2f32), ScalarType::Float),
                TokenKind::Float(f64::from(0.00001f32), ScalarType::Float),
                TokenKind::Float(1.0e-20, ScalarType::Double),
                TokenKind::Int(3_000_000_000, ScalarType::Long),
                TokenKind::Eof,
            ]
        );
    }

    #[test]
    fn trailing_point_and_exponent_forms() {
        assert_eq!(
            kinds("1. 1.e2 2e3f"),
            vec![
                TokenKind::Float(1.0, ScalarType::Double),
                TokenKind::Float(100.0, ScalarType::Double),
                TokenKind::Float(2000.0, ScalarType::Float),
                TokenKind::Eof,
            ]
        );
    }

    #[test]
    fn ranges_and_comments() {
        assert_eq!(
            kinds("-2..2 /* x */ // y\n a<=b"),
            vec![
                TokenKind::Minus,
                TokenKind::Int(2, ScalarType::Int),
                TokenKind::DotDot,
                TokenKind::Int(2, ScalarType::Int),
                TokenKind::Ident("a".into()),
                TokenKind::Le,
                TokenKind::Ident("b".into()),
                TokenKind::Eof,
            ]
        );
    }

    #[test]
    fn spans_are_absolute_in_a_sub_range() {
        let text = "xx int yy";
        let tokens = lex(text, 3..6).expect("lexes");
        assert_eq!(tokens[0].span, Span::new(3, 6));
        assert_eq!(tokens[1].span, Span::new(6, 6));
    }

    #[test]
    fn a_byte_order_mark_is_skipped_and_a_lone_cr_ends_a_comment() {
        assert_eq!(
            kinds("\u{feff}int n;"),
            kinds("int n;"),
            "a BOM at the start is not a character of the program"
        );
        assert_eq!(kinds("// c\rint n;\r"), kinds("int n;"));
        // Not at the start, U+FEFF is still an error.
        assert!(lex("int \u{feff}n;", 0.."int \u{feff}n;".len()).is_err());
    }

    #[test]
    fn malformed_input_is_a_diagnostic() {
        assert!(lex("1.5q", 0..4).is_err());
        assert!(lex("/* open", 0..7).is_err());
        assert!(lex("a $ b", 0..5).is_err());
        assert!(lex("1e", 0..2).is_err());
        assert!(lex("99999999999999999999", 0..20).is_err());
        assert!(lex("1e999", 0..5).is_err());
        assert!(lex("0x1F", 0..4).is_err());
    }
}
