//! The parser of OverTile's stencil language: tokens to the syntax tree, by
//! recursive descent, following OverTile's grammar (`SSPGrammar.y`):
//!
//! ```text
//! program  ::= 'program' ID 'is' 'grid' INT param* field* update*
//! param    ::= 'param' ID type
//! field    ::= 'field' ID type ('in' | 'out' | 'inout')
//! type     ::= 'float' | 'double'
//! update   ::= ID '=' ('@' range+ ':' expr)+
//!            | ID ('[' int ':' int ']')+ '=' expr       -- the documented older form
//! range    ::= '[' end (':' end)? ']'
//! end      ::= int | '$' | '$' '-' int
//! expr     ::= 'let' ID '=' expr 'in' expr | sum
//! sum      ::= sum ('+' | '-') product | product
//! product  ::= product ('*' | '/') operand | operand
//! operand  ::= ID ('[' int ']')+ | ID | int | REAL | ID '(' expr (',' expr)* ')' | '(' expr ')'
//! int      ::= '-'? INT
//! ```
//!
//! In the older form (OverTile's `doc/stencil_spec.rst`), `A[1:1][1:1] = e`
//! updates the points from 1 to the extent minus 2 along each axis: the second
//! number counts from the end, so it is `A = @[1:$-1][1:$-1] : e`.
//!
//! It stops at the first error, which says what was expected, what was found
//! and how OverTile's language writes it.

use crate::diag::Diagnostic;
use crate::front::ast::Ident;
use crate::front::overtile::ast::{
    BinOp, Bound, BoundExpr, Copy, Expr, ExprKind, FieldDecl, ParamDecl, Piece, Program, Update,
};
use crate::front::overtile::lexer::{Keyword, Token, TokenKind};
use crate::ir::ScalarType;
use crate::source::Span;

/// How deeply parentheses, calls and `let` values may nest.
const MAX_DEPTH: usize = crate::front::MAX_NESTING;

/// The deepest expression tree accepted (see [`crate::front::MAX_EXPR_DEPTH`]).
const MAX_HEIGHT: usize = crate::front::MAX_EXPR_DEPTH;

/// An example update, for messages.
pub(crate) const UPDATE_EXAMPLE: &str =
    "A = @[1:$-1][1:$-1] : 0.25*(A[-1][0]+A[1][0]+A[0][-1]+A[0][1])";

/// Parses a token list (ending with `Eof`) into a program.
pub fn parse(tokens: Vec<Token>) -> Result<Program, Diagnostic> {
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    parser.program()
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn token(&self) -> &Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek(&self) -> &TokenKind {
        &self.token().kind
    }

    fn peek_at(&self, ahead: usize) -> &TokenKind {
        &self.tokens[(self.pos + ahead).min(self.tokens.len() - 1)].kind
    }

    fn span(&self) -> Span {
        self.token().span
    }

    fn bump(&mut self) -> Token {
        let token = self.token().clone();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        token
    }

    fn at(&self, kind: &TokenKind) -> bool {
        self.peek() == kind
    }

    fn at_keyword(&self, keyword: Keyword) -> bool {
        self.at(&TokenKind::Keyword(keyword))
    }

    fn eat(&mut self, kind: &TokenKind) -> bool {
        let found = self.at(kind);
        if found {
            self.bump();
        }
        found
    }

    /// "expected {what}, found {token}" at the current token.
    fn expected(&self, what: &str, help: impl Into<String>) -> Diagnostic {
        Diagnostic::error(
            format!("expected {what}, found {}", self.peek()),
            self.span(),
        )
        .with_label(format!("expected {what}"))
        .with_help(help)
    }

    fn expect(&mut self, kind: TokenKind, help: &str) -> Result<Span, Diagnostic> {
        if self.at(&kind) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&kind.to_string(), help))
        }
    }

    fn ident(&mut self, what: &str, help: &str) -> Result<Ident, Diagnostic> {
        match self.peek().clone() {
            TokenKind::Ident(name) => Ok(Ident {
                name,
                span: self.bump().span,
            }),
            TokenKind::Keyword(k) => Err(self.expected(what, help).with_label(format!(
                "`{}` is a reserved word of OverTile's language",
                k.as_str()
            ))),
            _ => Err(self.expected(what, help)),
        }
    }

    fn enter(&mut self) -> Result<(), Diagnostic> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::error("the expression nests too deeply", self.span())
                .with_label("nesting limit reached here")
                .with_help(format!(
                    "split it with `let` variables; parentheses, calls and `let` values may nest at most {MAX_DEPTH} deep"
                )));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn program(&mut self) -> Result<Program, Diagnostic> {
        let start = self.expect(
            TokenKind::Keyword(Keyword::Program),
            "an OverTile program begins `program NAME is`",
        )?;
        let name = self.ident(
            "the program's name",
            "write `program NAME is`, e.g. `program j2d is`",
        )?;
        if self.at(&TokenKind::Equals) {
            return Err(self.expected("`is`", "OverTile's parser reads `program NAME is` (the grammar in its documentation shows `=`, its parser and examples `is`): write `is`"));
        }
        let is = self.expect(TokenKind::Keyword(Keyword::Is), "write `program NAME is`")?;
        let rank = self.grid()?;
        let mut params = Vec::new();
        while self.at_keyword(Keyword::Param) {
            params.push(self.param()?);
        }
        let mut fields = Vec::new();
        while self.at_keyword(Keyword::Field) {
            fields.push(self.field()?);
            if self.at_keyword(Keyword::Param) {
                return Err(self.out_of_order("parameter", "before the fields"));
            }
        }
        let mut updates = Vec::new();
        loop {
            match self.peek() {
                TokenKind::Ident(_) => updates.push(self.update()?),
                TokenKind::Eof => break,
                TokenKind::Keyword(Keyword::Param) => {
                    return Err(self.out_of_order("parameter", "before the fields and updates"))
                }
                TokenKind::Keyword(Keyword::Field) => {
                    return Err(self.out_of_order("field", "before the updates"))
                }
                TokenKind::Keyword(Keyword::Grid) => return Err(Diagnostic::error(
                    "a second `grid`",
                    self.span(),
                )
                .with_label("the program already has its grid")
                .with_help(
                    "an OverTile program has one grid, declared once after `program NAME is`",
                )),
                _ => {
                    let what = if updates.is_empty() && fields.is_empty() {
                        "`param`, `field` or an update"
                    } else {
                        "an update or the end of the region"
                    };
                    return Err(self.expected(
                        what,
                        format!("an update reads `FIELD = @[range]... : expression`, e.g. `{UPDATE_EXAMPLE}`"),
                    ));
                }
            }
        }
        Ok(Program {
            name,
            rank,
            params,
            fields,
            updates,
            span: start.to(is),
        })
    }

    fn out_of_order(&self, what: &str, place: &str) -> Diagnostic {
        Diagnostic::error(format!("a {what} declared out of order"), self.span())
            .with_label(format!("this {what} comes too late"))
            .with_help(format!(
                "OverTile reads `grid N`, then the `param`s, then the `field`s, then the updates: move this {what} {place}"
            ))
    }

    /// `grid N`, N from 1 to 3.
    fn grid(&mut self) -> Result<(usize, Span), Diagnostic> {
        let start = self.expect(
            TokenKind::Keyword(Keyword::Grid),
            "after `program NAME is` comes the grid's number of dimensions: `grid 2`",
        )?;
        let TokenKind::Int(n) = *self.peek() else {
            return Err(self.expected(
                "the grid's number of dimensions",
                "write `grid 1`, `grid 2` or `grid 3`",
            ));
        };
        let span = start.to(self.bump().span);
        if !(1..=3).contains(&n) {
            return Err(Diagnostic::error(format!("a grid of {n} dimensions"), span)
                .with_label("OverTile's grids have 1, 2 or 3 dimensions")
                .with_help("write `grid 1`, `grid 2` or `grid 3`"));
        }
        Ok((n as usize, span))
    }

    fn ty(&mut self, what: &str) -> Result<ScalarType, Diagnostic> {
        let ty = match self.peek() {
            TokenKind::Keyword(Keyword::Float) => ScalarType::Float,
            TokenKind::Keyword(Keyword::Double) => ScalarType::Double,
            _ => {
                return Err(self.expected(
                    &format!("the {what}'s type"),
                    "OverTile's types are `float` and `double`",
                ))
            }
        };
        self.bump();
        Ok(ty)
    }

    /// `param NAME TYPE`.
    fn param(&mut self) -> Result<ParamDecl, Diagnostic> {
        let start = self.bump().span;
        let name = self.ident(
            "the parameter's name",
            "write `param NAME float` or `param NAME double`",
        )?;
        let ty = self.ty("parameter")?;
        Ok(ParamDecl {
            name,
            ty,
            span: start.to(self.tokens[self.pos - 1].span),
        })
    }

    /// `field NAME TYPE COPY`.
    fn field(&mut self) -> Result<FieldDecl, Diagnostic> {
        let start = self.bump().span;
        let help = "write `field NAME TYPE COPY`, e.g. `field A float inout`";
        let name = self.ident("the field's name", help)?;
        let ty = self.ty("field")?;
        let copy = match self.peek() {
            TokenKind::Keyword(Keyword::In) => Copy::In,
            TokenKind::Keyword(Keyword::Out) => Copy::Out,
            TokenKind::Keyword(Keyword::Inout) => Copy::InOut,
            _ => {
                return Err(self.expected(
                    "`in`, `out` or `inout`",
                    "a field declaration ends with its copy semantic: `field A float inout`",
                ))
            }
        };
        let end = self.bump().span;
        Ok(FieldDecl {
            name,
            ty,
            copy,
            span: start.to(end),
        })
    }

    /// `A = @[..] : e ...` or `A[a:b]... = e`.
    fn update(&mut self) -> Result<Update, Diagnostic> {
        let target = self.ident("a field to update", UPDATE_EXAMPLE)?;
        if self.at(&TokenKind::LBracket) {
            return self.older_update(target);
        }
        self.expect(
            TokenKind::Equals,
            &format!("an update reads `FIELD = @[range]... : expression`, e.g. `{UPDATE_EXAMPLE}`"),
        )?;
        if !self.at(&TokenKind::At) {
            return Err(self.expected(
                "`@` and the update's ranges",
                format!("give the points to update before the expression, one range per dimension: `{UPDATE_EXAMPLE}`"),
            ));
        }
        let mut pieces = Vec::new();
        while self.at(&TokenKind::At) {
            let start = self.bump().span;
            let mut bounds = Vec::new();
            loop {
                bounds.push(self.range()?);
                if !self.at(&TokenKind::LBracket) {
                    break;
                }
            }
            let bounds_span = bounds[0].span.to(bounds[bounds.len() - 1].span);
            self.expect(
                TokenKind::Colon,
                "the ranges are followed by `:` and the expression: `@[1:$-1] : expression`",
            )?;
            let value = self.expr()?;
            pieces.push(Piece {
                bounds,
                bounds_span,
                span: start.to(value.span),
                value,
            });
        }
        let span = target.span.to(pieces[pieces.len() - 1].span);
        Ok(Update {
            target,
            pieces,
            span,
        })
    }

    /// `A[a:b][c:d] = e`: the points from `a` to the last index minus `b`.
    fn older_update(&mut self, target: Ident) -> Result<Update, Diagnostic> {
        let help = "in the form `A[lo:hi] = expression`, `lo` counts from the first index and `hi` from the last: `A[1:1] = ...` updates 1 to $-1 (or write `A = @[1:$-1] : ...`)";
        let mut bounds = Vec::new();
        while self.at(&TokenKind::LBracket) {
            let start = self.bump().span;
            let lo = self.integer("the range's first index", help)?;
            self.expect(TokenKind::Colon, help)?;
            let hi = self.integer("how far the range ends before the last index", help)?;
            let end = self.expect(TokenKind::RBracket, help)?;
            bounds.push(Bound {
                lo: BoundExpr::Index(lo.0, lo.1),
                hi: BoundExpr::FromEnd(hi.0, hi.1),
                span: start.to(end),
            });
        }
        let bounds_span = bounds[0].span.to(bounds[bounds.len() - 1].span);
        self.expect(TokenKind::Equals, "write `A[1:1][1:1] = expression`")?;
        let value = self.expr()?;
        let piece = Piece {
            bounds,
            bounds_span,
            span: bounds_span.to(value.span),
            value,
        };
        Ok(Update {
            span: target.span.to(piece.span),
            target,
            pieces: vec![piece],
        })
    }

    /// `[lo:hi]` or `[x]`.
    fn range(&mut self) -> Result<Bound, Diagnostic> {
        let help = "a range is `[lo:hi]` or `[x]`, its ends integers or `$` (the last index) or `$-k`: `@[1:$-1]`";
        let start = self.expect(TokenKind::LBracket, help)?;
        let lo = self.range_end(help)?;
        let hi = if self.eat(&TokenKind::Colon) {
            self.range_end(help)?
        } else {
            lo
        };
        let end = self.expect(TokenKind::RBracket, help)?;
        Ok(Bound {
            lo,
            hi,
            span: start.to(end),
        })
    }

    fn range_end(&mut self, help: &str) -> Result<BoundExpr, Diagnostic> {
        if self.at(&TokenKind::Dollar) {
            let dollar = self.bump().span;
            if self.at(&TokenKind::Plus) {
                return Err(Diagnostic::error("a range ending past `$`", self.span())
                    .with_label("`$` is the last index; nothing lies beyond it")
                    .with_help("end a range at `$` or before it, `$-k`"));
            }
            if !self.eat(&TokenKind::Minus) {
                return Ok(BoundExpr::FromEnd(0, dollar));
            }
            let (k, span) = self.integer("an integer after `$-`", help)?;
            return Ok(BoundExpr::FromEnd(k, dollar.to(span)));
        }
        let (v, span) = self.integer("an integer, `$` or `$-k`", help)?;
        Ok(BoundExpr::Index(v, span))
    }

    /// `-`? INT.
    fn integer(&mut self, what: &str, help: &str) -> Result<(i64, Span), Diagnostic> {
        let negative =
            matches!(self.peek(), TokenKind::Minus) && matches!(self.peek_at(1), TokenKind::Int(_));
        let start = self.span();
        if negative {
            self.bump();
        }
        match *self.peek() {
            TokenKind::Int(v) => {
                let span = start.to(self.bump().span);
                Ok((if negative { -v } else { v }, span))
            }
            _ => Err(self.expected(what, help)),
        }
    }

    /// An expression: a chain of `let`s ending in a sum, or a sum.
    fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.enter()?;
        let result = self.let_chain();
        self.leave();
        let expr = result?;
        check_height(&expr)?;
        Ok(expr)
    }

    fn let_chain(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.span();
        let mut bindings = Vec::new();
        while self.eat(&TokenKind::Keyword(Keyword::Let)) {
            let help = "a `let` reads `let NAME = expression in expression`";
            let name = self.ident("the `let` variable's name", help)?;
            self.expect(TokenKind::Equals, help)?;
            let value = self.expr()?;
            if !self.at_keyword(Keyword::In) {
                return Err(self.expected(
                    "`in`",
                    format!("{help}: the value of `{}` ends here", name.name),
                ));
            }
            self.bump();
            bindings.push((name, value));
        }
        let body = self.sum()?;
        if bindings.is_empty() {
            return Ok(body);
        }
        let span = start.to(body.span);
        Ok(Expr::new(
            ExprKind::Let {
                bindings,
                body: Box::new(body),
            },
            span,
        ))
    }

    fn sum(&mut self) -> Result<Expr, Diagnostic> {
        let mut lhs = self.product()?;
        loop {
            let op = match self.peek() {
                TokenKind::Plus => BinOp::Add,
                TokenKind::Minus => BinOp::Sub,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.product()?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr::new(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span);
            check_height(&lhs)?;
        }
    }

    fn product(&mut self) -> Result<Expr, Diagnostic> {
        let mut lhs = self.operand()?;
        loop {
            let op = match self.peek() {
                TokenKind::Star => BinOp::Mul,
                TokenKind::Slash => BinOp::Div,
                _ => return Ok(lhs),
            };
            self.bump();
            let rhs = self.operand()?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr::new(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span);
            check_height(&lhs)?;
        }
    }

    fn operand(&mut self) -> Result<Expr, Diagnostic> {
        let span = self.span();
        match self.peek().clone() {
            TokenKind::Int(v) => {
                self.bump();
                Ok(Expr::new(ExprKind::Int(v), span))
            }
            TokenKind::Real(v) => {
                self.bump();
                Ok(Expr::new(ExprKind::Real(v), span))
            }
            TokenKind::Minus => match *self.peek_at(1) {
                TokenKind::Int(v) => {
                    self.bump();
                    let span = span.to(self.bump().span);
                    Ok(Expr::new(ExprKind::Int(-v), span))
                }
                _ => Err(Diagnostic::error("OverTile's language has no unary minus", span)
                    .with_label("only an integer literal may carry a sign")
                    .with_help("write `-1` for a negative integer, and `(0 - x)` or `-1*x` to negate anything else")),
            },
            TokenKind::LParen => {
                self.bump();
                let inner = self.expr()?;
                let end = self.expect(TokenKind::RParen, "close the parenthesis")?;
                Ok(Expr::new(inner.kind, span.to(end)))
            }
            TokenKind::Ident(name) => {
                let ident = Ident {
                    name,
                    span: self.bump().span,
                };
                match self.peek() {
                    TokenKind::LBracket => self.field_ref(ident),
                    TokenKind::LParen => self.call(ident),
                    _ => Ok(Expr::new(ExprKind::Name(ident), span)),
                }
            }
            TokenKind::Keyword(Keyword::Let) => Err(Diagnostic::error(
                "a `let` in the middle of an expression",
                span,
            )
            .with_label("`let` starts an expression of its own")
            .with_help("put it in parentheses, `(let x = ... in ...)`, or move it to the front of the expression")),
            TokenKind::Dollar => Err(Diagnostic::error("`$` in an expression", span)
                .with_label("`$` stands for the last index in ranges only")
                .with_help("use `$` in the ranges of an update, `@[1:$-1]`; an expression reads fields at offsets, `A[0][1]`")),
            _ => Err(self.expected(
                "an expression",
                "an expression is made of numbers, field references such as `A[0][-1]`, names, calls such as `sqrt(x)`, `+ - * /` and parentheses",
            )),
        }
    }

    /// `A[0][-1]`.
    fn field_ref(&mut self, field: Ident) -> Result<Expr, Diagnostic> {
        let mut offsets = Vec::new();
        let mut end = field.span;
        while self.at(&TokenKind::LBracket) {
            self.bump();
            let help =
                "a field is read at integer offsets from the point, one per dimension: `A[0][-1]`";
            if self.at(&TokenKind::Dollar) {
                return Err(self.expected("an integer offset", "`$` stands for the last index in ranges only; an expression reads fields at offsets from the point, `A[0][-1]`"));
            }
            offsets.push(self.integer("an integer offset", help)?);
            if self.at(&TokenKind::Colon) {
                return Err(self.expected("`]`", "a field reference takes one offset per bracket, `A[0][-1]`; ranges `[lo:hi]` belong after the `@` of an update"));
            }
            end = self.expect(TokenKind::RBracket, help)?;
        }
        Ok(Expr::new(
            ExprKind::FieldRef {
                field: field.clone(),
                offsets,
            },
            field.span.to(end),
        ))
    }

    /// `f(a, b)`.
    fn call(&mut self, func: Ident) -> Result<Expr, Diagnostic> {
        self.bump();
        if self.at(&TokenKind::RParen) {
            return Err(self.expected(
                "an argument",
                format!(
                    "OverTile's calls take at least one argument: `{}(x)`",
                    func.name
                ),
            ));
        }
        let mut args = vec![self.expr()?];
        while self.eat(&TokenKind::Comma) {
            args.push(self.expr()?);
        }
        let end = self.expect(
            TokenKind::RParen,
            "separate arguments with `,` and close the call with `)`",
        )?;
        Ok(Expr::new(
            ExprKind::Call {
                func: func.clone(),
                args,
            },
            func.span.to(end),
        ))
    }
}

/// Refuses trees deeper than the later recursive passes accept (checked as a
/// chain grows, so that no deeper tree is ever built).
fn check_height(expr: &Expr) -> Result<(), Diagnostic> {
    if expr.height <= MAX_HEIGHT {
        return Ok(());
    }
    Err(Diagnostic::error("the expression nests too deeply", expr.span)
        .with_label(format!("more than {MAX_HEIGHT} levels deep"))
        .with_help(format!(
            "split it with `let` variables; an expression may be at most {MAX_HEIGHT} levels deep, each operator of a chain such as `a + b + c` counting as one"
        )))
}
