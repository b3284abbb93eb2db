//! The parser: tokens to the syntax tree, by recursive descent.
//!
//! It stops at the first error, which says precisely what was expected and
//! what was found instead. Expressions use C's precedence and associativity.

mod expr;
mod item;
mod stmt;

use crate::diag::Diagnostic;
use crate::front::ast::{Ident, Module};
use crate::front::token::{Keyword, Token, TokenKind};
use crate::source::Span;

/// How deeply expressions, statements and initializers may nest before the
/// parser gives up (instead of overflowing the stack on hostile input).
const MAX_DEPTH: usize = crate::front::MAX_NESTING;

/// Parses a token list (ending with `Eof`) into a module.
pub fn parse(tokens: Vec<Token>) -> Result<Module, Diagnostic> {
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    parser.module()
}

pub(crate) struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &TokenKind {
        &self.tokens[self.pos.min(self.tokens.len() - 1)].kind
    }

    fn span(&self) -> Span {
        self.tokens[self.pos.min(self.tokens.len() - 1)].span
    }

    /// The span of the token just consumed.
    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            self.span()
        } else {
            self.tokens[(self.pos - 1).min(self.tokens.len() - 1)].span
        }
    }

    fn bump(&mut self) -> Token {
        let token = self.tokens[self.pos.min(self.tokens.len() - 1)].clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        token
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.peek() == kind
    }

    fn at_keyword(&self, keyword: Keyword) -> bool {
        self.peek() == &TokenKind::Keyword(keyword)
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// An error at the current token: "expected {what}, found {token}".
    fn expected(&self, what: &str, help: &str) -> Diagnostic {
        let found = self.peek().describe();
        Diagnostic::error(format!("expected {what}, found {found}"), self.span())
            .with_label(format!("expected {what}"))
            .with_help(help.to_string())
    }

    fn expect(&mut self, kind: &TokenKind, help: &str) -> Result<Span, Diagnostic> {
        if self.at(kind) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{}`", kind.punct()), help))
        }
    }

    fn expect_keyword(&mut self, keyword: Keyword, help: &str) -> Result<Span, Diagnostic> {
        if self.at_keyword(keyword) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{}`", keyword.as_str()), help))
        }
    }

    fn ident(&mut self, what: &str, help: &str) -> Result<Ident, Diagnostic> {
        match self.peek().clone() {
            TokenKind::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            TokenKind::Keyword(k) => Err(self
                .expected(what, help)
                .with_label(format!("`{}` is a reserved word", k.as_str()))),
            _ => Err(self.expected(what, help)),
        }
    }

    /// Guards a recursive descent step against unbounded nesting.
    fn enter(&mut self) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::error("the program nests too deeply", self.span())
                .with_label("nesting limit reached here")
                .with_help(format!(
                    "split the expression or statement; at most {MAX_DEPTH} nested levels are allowed"
                )));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }
}
