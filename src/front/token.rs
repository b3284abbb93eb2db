//! Tokens of SDSL: what the lexer produces and the parser consumes.

use std::fmt;

use crate::ir::ScalarType;
use crate::source::Span;

/// Reserved words. Words that matter only in one place (`max`, `boundary`,
/// `clamp`, `iterations`, …) stay identifiers so that programs may use them as names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keyword {
    /// `int`
    Int,
    /// `long`
    Long,
    /// `float`
    Float,
    /// `double`
    Double,
    /// `const`
    Const,
    /// `grid`
    Grid,
    /// `griddata`
    Griddata,
    /// `on`
    On,
    /// `at`
    At,
    /// `pointfunction`
    Pointfunction,
    /// `iterate`
    Iterate,
    /// `stencil`
    Stencil,
    /// `reduction`
    Reduction,
    /// `check`
    Check,
    /// `every`
    Every,
    /// `for`
    For,
    /// `in`
    In,
}

impl Keyword {
    /// Every keyword, for lookup.
    pub const ALL: [Keyword; 17] = [
        Keyword::Int,
        Keyword::Long,
        Keyword::Float,
        Keyword::Double,
        Keyword::Const,
        Keyword::Grid,
        Keyword::Griddata,
        Keyword::On,
        Keyword::At,
        Keyword::Pointfunction,
        Keyword::Iterate,
        Keyword::Stencil,
        Keyword::Reduction,
        Keyword::Check,
        Keyword::Every,
        Keyword::For,
        Keyword::In,
    ];

    /// The spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::Int => "int",
            Keyword::Long => "long",
            Keyword::Float => "float",
            Keyword::Double => "double",
            Keyword::Const => "const",
            Keyword::Grid => "grid",
            Keyword::Griddata => "griddata",
            Keyword::On => "on",
            Keyword::At => "at",
            Keyword::Pointfunction => "pointfunction",
            Keyword::Iterate => "iterate",
            Keyword::Stencil => "stencil",
            Keyword::Reduction => "reduction",
            Keyword::Check => "check",
            Keyword::Every => "every",
            Keyword::For => "for",
            Keyword::In => "in",
        }
    }

    /// The keyword spelled `word`, if any.
    pub fn from_word(word: &str) -> Option<Keyword> {
        Keyword::ALL.into_iter().find(|k| k.as_str() == word)
    }

    /// The scalar type a type keyword names.
    pub fn scalar_type(self) -> Option<ScalarType> {
        match self {
            Keyword::Int => Some(ScalarType::Int),
            Keyword::Long => Some(ScalarType::Long),
            Keyword::Float => Some(ScalarType::Float),
            Keyword::Double => Some(ScalarType::Double),
            _ => None,
        }
    }
}

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// An identifier.
    Ident(String),
    /// A reserved word.
    Keyword(Keyword),
    /// An integer literal, with its C type (`int`, or `long` for `1L` or a value
    /// too large for `int`).
    Int(i64, ScalarType),
    /// A floating literal, with its C type (`float` for `0.2f`, else `double`).
    /// The value is already rounded to that type.
    Float(f64, ScalarType),
    /// `(`
    LParen,
    /// `)`
    RParen,
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `;`
    Semi,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `?`
    Question,
    /// `..`
    DotDot,
    /// `=`
    Assign,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `/`
    Slash,
    /// `%`
    Percent,
    /// `==`
    EqEq,
    /// `!=`
    NotEq,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&`
    AndAnd,
    /// `||`
    OrOr,
    /// `!`
    Bang,
    /// The end of the program text.
    Eof,
}

impl TokenKind {
    /// How the token reads in "expected …, found …" messages.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Ident(name) => format!("identifier `{name}`"),
            TokenKind::Keyword(k) => format!("keyword `{}`", k.as_str()),
            TokenKind::Int(v, ScalarType::Long) => format!("integer literal `{v}L`"),
            TokenKind::Int(v, _) => format!("integer literal `{v}`"),
            TokenKind::Float(..) => "floating-point literal".to_string(),
            TokenKind::Eof => "end of input".to_string(),
            other => format!("`{}`", other.punct()),
        }
    }

    /// The spelling of a punctuation token (empty for the others).
    pub fn punct(&self) -> &'static str {
        match self {
            TokenKind::LParen => "(",
            TokenKind::RParen => ")",
            TokenKind::LBracket => "[",
            TokenKind::RBracket => "]",
            TokenKind::LBrace => "{",
            TokenKind::RBrace => "}",
            TokenKind::Semi => ";",
            TokenKind::Comma => ",",
            TokenKind::Colon => ":",
            TokenKind::Question => "?",
            TokenKind::DotDot => "..",
            TokenKind::Assign => "=",
            TokenKind::Plus => "+",
            TokenKind::Minus => "-",
            TokenKind::Star => "*",
            TokenKind::Slash => "/",
            TokenKind::Percent => "%",
            TokenKind::EqEq => "==",
            TokenKind::NotEq => "!=",
            TokenKind::Lt => "<",
            TokenKind::Le => "<=",
            TokenKind::Gt => ">",
            TokenKind::Ge => ">=",
            TokenKind::AndAnd => "&&",
            TokenKind::OrOr => "||",
            TokenKind::Bang => "!",
            _ => "",
        }
    }
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// A token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    /// What it is.
    pub kind: TokenKind,
    /// Where it is, in the whole source file.
    pub span: Span,
}
