//! Statements of point functions and stencil parts.

use crate::diag::Diagnostic;
use crate::front::ast::{Stmt, Target};
use crate::front::parser::Parser;
use crate::front::token::{Keyword, TokenKind};

const STMT_HELP: &str = "a statement is a declaration (`float x = 0.0f;`), an assignment \
                         (`x = ...;` or `[1]a[0][0] = ...;`), a loop (`for i in -1..1 { ... }`) \
                         or a point-function call (`f(a);`)";

impl Parser {
    /// Statements up to (not including) a closing `}`.
    pub(crate) fn block_body(&mut self) -> Result<Vec<Stmt>, Diagnostic> {
        let mut body = Vec::new();
        while !self.at(&TokenKind::RBrace) {
            if self.at(&TokenKind::Eof) {
                return Err(self.expected("`}`", "close the block with `}`"));
            }
            body.push(self.stmt()?);
        }
        Ok(body)
    }

    /// One statement, including its `;` (loops end with their `}`).
    pub(crate) fn stmt(&mut self) -> Result<Stmt, Diagnostic> {
        self.enter()?;
        let result = self.stmt_inner();
        self.leave();
        result
    }

    fn stmt_inner(&mut self) -> Result<Stmt, Diagnostic> {
        let start = self.span();
        if self.at_type() {
            let ty = match self.bump().kind {
                TokenKind::Keyword(k) => k.scalar_type(),
                _ => None,
            }
            .unwrap_or(crate::ir::ScalarType::Int);
            let name = self.ident(
                "a variable name",
                "a local declaration reads `float x;` or `float x = value;`",
            )?;
            let init = if self.eat(&TokenKind::Assign) {
                Some(self.expr()?)
            } else {
                None
            };
            let end = self.expect(&TokenKind::Semi, "end the declaration with `;`")?;
            return Ok(Stmt::Local {
                ty,
                name,
                init,
                span: start.to(end),
            });
        }
        if self.at_kw(Keyword::For) {
            self.bump();
            let var = self.ident(
                "a loop variable name",
                "a loop reads `for i in -1..1 { ... }`",
            )?;
            self.expect_keyword(Keyword::In, "a loop reads `for i in -1..1 { ... }`")?;
            let lo = self.expr()?;
            self.expect(
                &TokenKind::DotDot,
                "a loop range reads `lo..hi`, both ends inclusive",
            )?;
            let hi = self.expr()?;
            self.expect(&TokenKind::LBrace, "the loop body is a block `{ ... }`")?;
            let body = self.block_body()?;
            let end = self.expect(&TokenKind::RBrace, "close the loop body with `}`")?;
            return Ok(Stmt::For {
                var,
                lo,
                hi,
                body,
                span: start.to(end),
            });
        }
        let target = match self.peek() {
            TokenKind::LBracket => Target::Grid(self.grid_ref()?),
            TokenKind::Ident(_) => {
                let name = self.ident("a name", STMT_HELP)?;
                if self.at(&TokenKind::LParen) {
                    let (args, _) = self.call_args()?;
                    let end = self.expect(&TokenKind::Semi, "end the call with `;`")?;
                    return Ok(Stmt::Call {
                        func: name,
                        args,
                        span: start.to(end),
                    });
                }
                Target::Name(name)
            }
            _ => return Err(self.expected("a statement", STMT_HELP)),
        };
        self.expect(
            &TokenKind::Assign,
            "an assignment reads `target = value;`; a call reads `f(a);`",
        )?;
        let value = self.expr()?;
        let end = self.expect(&TokenKind::Semi, "end the assignment with `;`")?;
        Ok(Stmt::Assign {
            target,
            value,
            span: start.to(end),
        })
    }
}
