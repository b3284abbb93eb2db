//! Expressions, grid references and subsets, with C precedence:
//! `?:` < `||` < `&&` < `== !=` < `< <= > >=` < `+ -` < `* / %` < unary.

use crate::diag::Diagnostic;
use crate::front::ast::{Expr, ExprKind, GridRef, Subset};
use crate::front::parser::Parser;
use crate::front::token::{Keyword, TokenKind};
use crate::ir::{BinaryOp, UnaryOp};

impl Parser {
    /// A full expression (a conditional expression).
    pub(crate) fn expr(&mut self) -> Result<Expr, Diagnostic> {
        self.enter()?;
        let result = self.conditional();
        self.leave();
        let expr = result?;
        self.check_height(&expr)?;
        Ok(expr)
    }

    /// Refuses expression trees deeper than the later recursive passes accept.
    fn check_height(&self, expr: &Expr) -> Result<(), Diagnostic> {
        if expr.height <= MAX_EXPR_HEIGHT {
            return Ok(());
        }
        Err(Diagnostic::error("the expression nests too deeply", expr.span)
            .with_label(format!("more than {MAX_EXPR_HEIGHT} levels deep"))
            .with_help(format!(
                "split it into several statements with local variables; an expression may be at most {MAX_EXPR_HEIGHT} levels deep, \
                 each operator of a chain such as `a + b + c` counting as one level"
            )))
    }

    fn conditional(&mut self) -> Result<Expr, Diagnostic> {
        let cond = self.binary(0)?;
        if !self.eat(&TokenKind::Question) {
            return Ok(cond);
        }
        let then = self.expr()?;
        self.expect(
            &TokenKind::Colon,
            "a conditional expression reads `cond ? value_if_true : value_if_false`",
        )?;
        let otherwise = self.expr()?;
        let span = cond.span.to(otherwise.span);
        Ok(Expr::new(
            ExprKind::Select(Box::new(cond), Box::new(then), Box::new(otherwise)),
            span,
        ))
    }

    fn binary_op(&self, level: usize) -> Option<BinaryOp> {
        let op = match self.peek() {
            TokenKind::OrOr => BinaryOp::Or,
            TokenKind::AndAnd => BinaryOp::And,
            TokenKind::EqEq => BinaryOp::Eq,
            TokenKind::NotEq => BinaryOp::Ne,
            TokenKind::Lt => BinaryOp::Lt,
            TokenKind::Le => BinaryOp::Le,
            TokenKind::Gt => BinaryOp::Gt,
            TokenKind::Ge => BinaryOp::Ge,
            TokenKind::Plus => BinaryOp::Add,
            TokenKind::Minus => BinaryOp::Sub,
            TokenKind::Star => BinaryOp::Mul,
            TokenKind::Slash => BinaryOp::Div,
            TokenKind::Percent => BinaryOp::Rem,
            _ => return None,
        };
        (precedence(op) == level).then_some(op)
    }

    /// Left-associative binary operators at precedence `level` and above.
    fn binary(&mut self, level: usize) -> Result<Expr, Diagnostic> {
        if level > MAX_LEVEL {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        while let Some(op) = self.binary_op(level) {
            self.bump();
            let rhs = self.binary(level + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr::new(ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)), span);
            self.check_height(&lhs)?;
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, Diagnostic> {
        let op = match self.peek() {
            TokenKind::Minus => Some(UnaryOp::Neg),
            TokenKind::Bang => Some(UnaryOp::Not),
            TokenKind::Plus => None,
            _ => return self.primary(),
        };
        let start = self.bump().span;
        self.enter()?;
        let operand = self.unary();
        self.leave();
        let operand = operand?;
        let span = start.to(operand.span);
        Ok(match op {
            Some(op) => Expr::new(ExprKind::Unary(op, Box::new(operand)), span),
            None => operand,
        })
    }

    fn primary(&mut self) -> Result<Expr, Diagnostic> {
        let start = self.span();
        match self.peek().clone() {
            TokenKind::Int(v, ty) => {
                self.bump();
                Ok(Expr::new(ExprKind::Int(v, ty), start))
            }
            TokenKind::Float(v, ty) => {
                self.bump();
                Ok(Expr::new(ExprKind::Float(v, ty), start))
            }
            TokenKind::LParen => {
                self.bump();
                if let TokenKind::Keyword(k) = self.peek() {
                    if let Some(ty) = k.scalar_type() {
                        self.bump();
                        self.expect(&TokenKind::RParen, "a cast reads `(double)x`")?;
                        self.enter()?;
                        let operand = self.unary();
                        self.leave();
                        let operand = operand?;
                        let span = start.to(operand.span);
                        return Ok(Expr::new(ExprKind::Cast(ty, Box::new(operand)), span));
                    }
                }
                let mut inner = self.expr()?;
                let end = self.expect(
                    &TokenKind::RParen,
                    "close the parenthesis opened before the expression",
                )?;
                inner.span = start.to(end);
                Ok(inner)
            }
            TokenKind::LBracket => {
                let grid = self.grid_ref()?;
                let span = grid.span;
                Ok(Expr::new(ExprKind::Grid(grid), span))
            }
            TokenKind::Ident(_) => {
                let name = self.ident("a name", "")?;
                if self.at(&TokenKind::LParen) {
                    let (args, end) = self.call_args()?;
                    return Ok(Expr::new(ExprKind::Call { func: name, args }, start.to(end)));
                }
                if self.at(&TokenKind::LBracket) {
                    let mut indices = Vec::new();
                    let mut end = name.span;
                    while self.eat(&TokenKind::LBracket) {
                        indices.push(self.expr()?);
                        end = self.expect(
                            &TokenKind::RBracket,
                            "an index is written `[expression]`",
                        )?;
                    }
                    return Ok(Expr::new(ExprKind::Index {
                            base: name,
                            indices,
                        }, start.to(end)));
                }
                Ok(Expr::new(ExprKind::Name(name.clone()), name.span))
            }
            _ => Err(self.expected(
                "an expression",
                "write a number, a name, a grid reference such as `[0]a[0][0]`, or a parenthesised expression",
            )),
        }
    }

    /// `( e, e, ... )` after a callee name; returns the arguments and the `)` span.
    pub(crate) fn call_args(&mut self) -> Result<(Vec<Expr>, crate::source::Span), Diagnostic> {
        self.expect(&TokenKind::LParen, "")?;
        let mut args = Vec::new();
        if !self.at(&TokenKind::RParen) {
            loop {
                args.push(self.expr()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        let end = self.expect(
            &TokenKind::RParen,
            "separate arguments with `,` and close the call with `)`",
        )?;
        Ok((args, end))
    }

    /// `[t]name[o0][o1]...`
    pub(crate) fn grid_ref(&mut self) -> Result<GridRef, Diagnostic> {
        let start = self.expect(&TokenKind::LBracket, "")?;
        let time = self.expr()?;
        self.expect(
            &TokenKind::RBracket,
            "a grid reference reads `[time]name[offset]...`, e.g. `[0]a[0][-1]`",
        )?;
        let field = self.ident(
            "a griddata name",
            "a grid reference reads `[time]name[offset]...`, e.g. `[0]a[0][-1]`",
        )?;
        let mut offsets = Vec::new();
        let mut end = field.span;
        while self.eat(&TokenKind::LBracket) {
            offsets.push(self.expr()?);
            end = self.expect(
                &TokenKind::RBracket,
                "each spatial offset is written `[expression]`",
            )?;
        }
        Ok(GridRef {
            time: Box::new(time),
            field,
            offsets,
            span: start.to(end),
        })
    }

    /// `[lo:hi][x]...` (at least one axis).
    pub(crate) fn subset(&mut self) -> Result<Subset, Diagnostic> {
        if !self.at(&TokenKind::LBracket) {
            return Err(self.expected(
                "a grid subset",
                "each part starts with a subset such as `[1:n-2][0:m-1]`, then `:`",
            ));
        }
        let start = self.span();
        let mut ranges = Vec::new();
        let mut end = start;
        while self.eat(&TokenKind::LBracket) {
            let lo = self.expr()?;
            let hi = if self.eat(&TokenKind::Colon) {
                Some(self.expr()?)
            } else {
                None
            };
            end = self.expect(
                &TokenKind::RBracket,
                "a subset axis is `[lo:hi]` (inclusive) or `[x]`",
            )?;
            ranges.push((lo, hi));
        }
        Ok(Subset {
            ranges,
            span: start.to(end),
        })
    }

    /// Whether the next token starts a type name.
    pub(crate) fn at_type(&self) -> bool {
        matches!(self.peek(), TokenKind::Keyword(k) if k.scalar_type().is_some())
    }

    /// Whether the next token is the keyword.
    pub(crate) fn at_kw(&self, k: Keyword) -> bool {
        self.at_keyword(k)
    }
}

const MAX_LEVEL: usize = 5;

/// The deepest expression tree accepted; see [`crate::front::MAX_EXPR_DEPTH`].
const MAX_EXPR_HEIGHT: usize = crate::front::MAX_EXPR_DEPTH;

fn precedence(op: BinaryOp) -> usize {
    match op {
        BinaryOp::Or => 0,
        BinaryOp::And => 1,
        BinaryOp::Eq | BinaryOp::Ne => 2,
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 3,
        BinaryOp::Add | BinaryOp::Sub => 4,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 5,
    }
}
