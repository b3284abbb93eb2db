//! The lexer of OverTile's stencil language: text to [`Token`]s.
//!
//! It accepts what OverTile's own lexer (`SSPParser::getNextToken`) accepts:
//! spaces, tabs and line ends between tokens (no comments); identifiers of a
//! letter then letters, digits and `_`; the reserved words `program is grid
//! param field float double in out inout let`; integer literals of decimal
//! digits; floating literals of digits with a `.` and/or an exponent `e5`,
//! `e-5` (OverTile's lexer takes no `+` in an exponent and no leading `.`);
//! and the symbols `+ - * / = ( ) [ ] , : @ $`. Anything else is a diagnostic
//! saying what OverTile's language writes instead.

use std::fmt;
use std::ops::Range;

use crate::diag::Diagnostic;
use crate::source::Span;

/// Reserved words of OverTile's language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyword {
    /// `program`
    Program,
    /// `is`
    Is,
    /// `grid`
    Grid,
    /// `param`
    Param,
    /// `field`
    Field,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `in` (a copy semantic, and the `in` of `let x = e in e`)
    In,
    /// `out`
    Out,
    /// `inout`
    Inout,
    /// `let`
    Let,
}

impl Keyword {
    /// Every keyword, for lookup.
    pub const ALL: [Keyword; 11] = [
        Keyword::Program,
        Keyword::Is,
        Keyword::Grid,
        Keyword::Param,
        Keyword::Field,
        Keyword::Float,
        Keyword::Double,
        Keyword::In,
        Keyword::Out,
        Keyword::Inout,
        Keyword::Let,
    ];

    /// The spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::Program => "program",
            Keyword::Is => "is",
            Keyword::Grid => "grid",
            Keyword::Param => "param",
            Keyword::Field => "field",
            Keyword::Float => "float",
            Keyword::Double => "double",
            Keyword::In => "in",
            Keyword::Out => "out",
            Keyword::Inout => "inout",
            Keyword::Let => "let",
        }
    }
}

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// A reserved word.
    Keyword(Keyword),
    /// An identifier.
    Ident(String),
    /// An integer literal (OverTile reads it as a C `long`).
    Int(i64),
    /// A floating literal.
    Real(f64),
    /// `@`
    At,
    /// `$`
    Dollar,
    /// `=`
    Equals,
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// The end of the region.
    Eof,
}

impl fmt::Display for TokenKind {
    /// How a message names the token: `` `@` ``, ``identifier `A` ``, …
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let symbol = match self {
            TokenKind::Keyword(k) => return write!(f, "keyword `{}`", k.as_str()),
            TokenKind::Ident(name) => return write!(f, "identifier `{name}`"),
            TokenKind::Int(v) => return write!(f, "integer literal `{v}`"),
            TokenKind::Real(_) => return f.write_str("floating-point literal"),
            TokenKind::Eof => return f.write_str("the end of the region"),
            TokenKind::At => "@",
            TokenKind::Dollar => "$",
            TokenKind::Equals => "=",
            TokenKind::LParen => "(",
            TokenKind::RParen => ")",
            TokenKind::LBracket => "[",
            TokenKind::RBracket => "]",
            TokenKind::Comma => ",",
            TokenKind::Colon => ":",
            TokenKind::Plus => "+",
            TokenKind::Minus => "-",
            TokenKind::Star => "*",
            TokenKind::Slash => "/",
        };
        write!(f, "`{symbol}`")
    }
}

/// A token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where, in the whole host file.
    pub span: Span,
}

/// Splits `text[range]` into tokens ending with [`TokenKind::Eof`]; spans are
/// offsets in the whole `text`. Stops at the first character OverTile's
/// language does not have.
pub fn lex(text: &str, range: Range<usize>) -> Result<Vec<Token>, Diagnostic> {
    let end = range.end.min(text.len());
    let mut pos = range.start.min(end);
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    while pos < end {
        let start = pos;
        let c = bytes[pos];
        let kind = match c {
            b' ' | b'\t' | b'\r' | b'\n' => {
                pos += 1;
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' => {
                while pos < end && (bytes[pos].is_ascii_alphanumeric() || bytes[pos] == b'_') {
                    pos += 1;
                }
                let word = &text[start..pos];
                match Keyword::ALL.into_iter().find(|k| k.as_str() == word) {
                    Some(k) => TokenKind::Keyword(k),
                    None => TokenKind::Ident(word.to_string()),
                }
            }
            b'0'..=b'9' => {
                let (kind, next) = number(text, start, end)?;
                pos = next;
                kind
            }
            _ => {
                let kind = match c {
                    b'@' => TokenKind::At,
                    b'$' => TokenKind::Dollar,
                    b'=' => TokenKind::Equals,
                    b'(' => TokenKind::LParen,
                    b')' => TokenKind::RParen,
                    b'[' => TokenKind::LBracket,
                    b']' => TokenKind::RBracket,
                    b',' => TokenKind::Comma,
                    b':' => TokenKind::Colon,
                    b'+' => TokenKind::Plus,
                    b'-' => TokenKind::Minus,
                    b'*' => TokenKind::Star,
                    b'/' if matches!(bytes.get(pos + 1), Some(b'/' | b'*')) && pos + 1 < end => {
                        return Err(Diagnostic::error(
                            "OverTile's stencil language has no comments",
                            Span::new(pos, pos + 2),
                        )
                        .with_label("a comment starts here")
                        .with_help(
                            "OverTile reads the region's text as is; move the comment above the `#pragma sdsl begin` line",
                        ));
                    }
                    b'/' => TokenKind::Slash,
                    _ => return Err(bad_char(text, pos, end)),
                };
                pos += 1;
                kind
            }
        };
        tokens.push(Token {
            kind,
            span: Span::new(start, pos),
        });
    }
    tokens.push(Token {
        kind: TokenKind::Eof,
        span: Span::new(end, end),
    });
    Ok(tokens)
}

/// A number at `start`: digits and dots, then an optional exponent `e`/`E`,
/// an optional `-` and digits, as OverTile's lexer reads them.
fn number(text: &str, start: usize, end: usize) -> Result<(TokenKind, usize), Diagnostic> {
    let bytes = text.as_bytes();
    let mut pos = start;
    let mut dots = 0;
    while pos < end && (bytes[pos].is_ascii_digit() || bytes[pos] == b'.') {
        dots += usize::from(bytes[pos] == b'.');
        pos += 1;
    }
    let mut real = dots > 0;
    if pos < end && matches!(bytes[pos], b'e' | b'E') {
        real = true;
        pos += 1;
        if pos < end && bytes[pos] == b'-' {
            pos += 1;
        }
        let digits = pos;
        while pos < end && bytes[pos].is_ascii_digit() {
            pos += 1;
        }
        if pos == digits {
            let found = if pos < end && bytes[pos] == b'+' {
                "OverTile's exponents take no `+`: write `1e5`, or `1e-5` for a negative one"
            } else {
                "an exponent is digits after `e`, optionally after a `-`: `1.0e-20`, `2e3`"
            };
            return Err(Diagnostic::error(
                "missing exponent in a floating-point literal",
                Span::new(start, pos),
            )
            .with_label("exponent expected here")
            .with_help(found));
        }
    }
    if pos < end && (bytes[pos].is_ascii_alphabetic() || bytes[pos] == b'_') {
        let mut stop = pos;
        while stop < end && (bytes[stop].is_ascii_alphanumeric() || bytes[stop] == b'_') {
            stop += 1;
        }
        return Err(Diagnostic::error(
            format!("malformed number `{}`", &text[start..stop]),
            Span::new(start, stop),
        )
        .with_label("a letter right after the digits")
        .with_help(
            "OverTile's numbers take no suffix (`0.2`, not `0.2f`); put a space or an operator between a number and a name",
        ));
    }
    let spelled = &text[start..pos];
    let span = Span::new(start, pos);
    if dots > 1 {
        return Err(
            Diagnostic::error(format!("malformed number `{spelled}`"), span)
                .with_label("more than one `.`")
                .with_help("write a number with at most one decimal point, e.g. `0.25`"),
        );
    }
    if real {
        // Digits, one dot and an exponent always parse as f64 (a huge exponent
        // gives infinity, which is checked below).
        let value: f64 = spelled.parse().map_err(|_| {
            Diagnostic::error(format!("malformed number `{spelled}`"), span)
                .with_label("not a floating-point literal")
                .with_help("write a number such as `0.25` or `1.0e-20`")
        })?;
        if !value.is_finite() {
            return Err(Diagnostic::error(
                format!("`{spelled}` is too large for a `double`"),
                span,
            )
            .with_label("overflows to infinity")
            .with_help("give a value below 1.8e308"));
        }
        return Ok((TokenKind::Real(value), pos));
    }
    match spelled.parse::<i64>() {
        Ok(v) => Ok((TokenKind::Int(v), pos)),
        Err(_) => Err(
            Diagnostic::error(format!("integer literal `{spelled}` is too large"), span)
                .with_label("does not fit a 64-bit `long`")
                .with_help("give an integer below 9223372036854775808, or write it as a floating literal (`3.0e20`)"),
        ),
    }
}

/// The diagnostic for a character OverTile's language does not have.
fn bad_char(text: &str, pos: usize, end: usize) -> Diagnostic {
    let c = text[pos..end].chars().next().unwrap_or(' ');
    let span = Span::new(pos, pos + c.len_utf8());
    let help = match c {
        ';' => "OverTile's declarations and updates end without `;`: remove it".to_string(),
        '_' => "an OverTile identifier begins with a letter (`A`, `u_0`); rename it".to_string(),
        '.' => "a floating literal begins with a digit in OverTile's language: write `0.5`, not `.5`".to_string(),
        '%' | '<' | '>' | '!' | '?' | '&' | '|' | '^' | '~' => {
            "OverTile's expressions have only `+ - * /`, parentheses, function calls and `let ... in`".to_string()
        }
        '{' | '}' => "OverTile's updates have no braces: `A = @[1:$-1][1:$-1] : expression`".to_string(),
        '#' => "a preprocessor line inside the region: OverTile reads the region's text as is, so move it outside the region".to_string(),
        _ => "OverTile's stencil language has letters, digits, spaces and `+ - * / = ( ) [ ] , : @ $` only".to_string(),
    };
    let shown = if c.is_control() {
        format!("{:?}", c)
    } else {
        format!("`{c}`")
    };
    Diagnostic::error(
        format!("{shown} is not part of OverTile's stencil language"),
        span,
    )
    .with_label("unexpected character")
    .with_help(help)
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
    fn tokens_of_an_update() {
        assert_eq!(
            kinds("A = @[1:$-1] : 0.2*A[-1] let in1"),
            vec![
                TokenKind::Ident("A".into()),
                TokenKind::Equals,
                TokenKind::At,
                TokenKind::LBracket,
                TokenKind::Int(1),
                TokenKind::Colon,
                TokenKind::Dollar,
                TokenKind::Minus,
                TokenKind::Int(1),
                TokenKind::RBracket,
                TokenKind::Colon,
                TokenKind::Real(0.2),
                TokenKind::Star,
                TokenKind::Ident("A".into()),
                TokenKind::LBracket,
                TokenKind::Minus,
                TokenKind::Int(1),
                TokenKind::RBracket,
                TokenKind::Keyword(Keyword::Let),
                TokenKind::Ident("in1".into()),
                TokenKind::Eof,
            ]
        );
    }

    #[test]
    fn numbers_as_overtile_reads_them() {
        assert_eq!(kinds("1.0e-20")[0], TokenKind::Real(1.0e-20));
        assert_eq!(kinds("2E3")[0], TokenKind::Real(2000.0));
        assert_eq!(kinds("5.")[0], TokenKind::Real(5.0));
        assert_eq!(kinds("42")[0], TokenKind::Int(42));
        for bad in [
            "1e+5",
            "1e",
            "1.2.3",
            "0.2f",
            "99999999999999999999",
            "1e999",
        ] {
            assert!(lex(bad, 0..bad.len()).is_err(), "{bad}");
        }
    }

    #[test]
    fn what_is_not_the_language_says_so() {
        for (text, words) in [
            ("A // x", "no comments"),
            ("A;", "`;`"),
            ("_a", "begins with a letter"),
            ("a % b", "`+ - * /`"),
            ("é", "not part of"),
        ] {
            let d = lex(text, 0..text.len()).unwrap_err();
            let all = format!("{} {}", d.message, d.help.unwrap_or_default());
            assert!(all.contains(words), "{text}: {all}");
        }
    }

    #[test]
    fn spans_are_offsets_in_the_whole_text() {
        let text = "xx A yy";
        let tokens = lex(text, 3..4).expect("lexes");
        assert_eq!(tokens[0].span, Span::new(3, 4));
        assert_eq!(
            tokens[1],
            Token {
                kind: TokenKind::Eof,
                span: Span::new(4, 4)
            }
        );
    }
}
