//! Expressions of the CUDA subset: assignment, `?:`, binary operators by C's
//! precedence, unary and postfix operators, calls, indexing and the built-in
//! index variables.

use crate::diag::Diagnostic;
use crate::source::Span;

use super::super::ast::{BinOp, Builtin, ChosenSlot, Expr, ExprKind, Scalar, UnOp, UNRESOLVED};
use super::super::lexer::TokenKind;
use super::{Parsed, Parser, TYPE_WORDS};

/// Binary operators by precedence level, loosest first.
const LEVELS: &[&[(&str, BinOp)]] = &[
    &[("||", BinOp::Or)],
    &[("&&", BinOp::And)],
    &[("|", BinOp::BitOr)],
    &[("^", BinOp::BitXor)],
    &[("&", BinOp::BitAnd)],
    &[("==", BinOp::Eq), ("!=", BinOp::Ne)],
    &[
        ("<", BinOp::Lt),
        ("<=", BinOp::Le),
        (">", BinOp::Gt),
        (">=", BinOp::Ge),
    ],
    &[("<<", BinOp::Shl), (">>", BinOp::Shr)],
    &[("+", BinOp::Add), ("-", BinOp::Sub)],
    &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
];

const COMPOUND: &[(&str, BinOp)] = &[
    ("+=", BinOp::Add),
    ("-=", BinOp::Sub),
    ("*=", BinOp::Mul),
    ("/=", BinOp::Div),
    ("%=", BinOp::Rem),
    ("<<=", BinOp::Shl),
    (">>=", BinOp::Shr),
    ("&=", BinOp::BitAnd),
    ("|=", BinOp::BitOr),
    ("^=", BinOp::BitXor),
];

impl<'a> Parser<'a> {
    /// An expression, with the comma operator left out.
    pub fn expr(&mut self) -> Parsed<Expr> {
        self.assignment()
    }

    pub(super) fn assignment(&mut self) -> Parsed<Expr> {
        let start = self.peek().span;
        self.enter(start)?;
        let target = self.conditional()?;
        let op = if self.eat_punct("=") {
            Some(None)
        } else if let Some(&(_, op)) = COMPOUND.iter().find(|(p, _)| self.is_punct(p)) {
            self.bump();
            Some(Some(op))
        } else {
            None
        };
        let result = match op {
            None => Ok(target),
            Some(op) => {
                let value = self.assignment()?;
                let span = target.span.to(value.span);
                Ok(Expr::new(
                    ExprKind::Assign {
                        op,
                        target: Box::new(target),
                        value: Box::new(value),
                    },
                    span,
                ))
            }
        };
        self.depth -= 1;
        result
    }

    fn conditional(&mut self) -> Parsed<Expr> {
        let cond = self.binary(0)?;
        if !self.eat_punct("?") {
            return Ok(cond);
        }
        self.enter(cond.span)?;
        let then = self.assignment()?;
        self.expect_punct(":")?;
        let other = self.conditional()?;
        self.depth -= 1;
        let span = cond.span.to(other.span);
        Ok(Expr::new(
            ExprKind::Cond(Box::new(cond), Box::new(then), Box::new(other)),
            span,
        ))
    }

    fn binary(&mut self, level: usize) -> Parsed<Expr> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        let mut chain = 0;
        while let Some(&(_, op)) = LEVELS[level].iter().find(|(p, _)| self.is_punct(p)) {
            self.bump();
            chain += 1;
            self.enter(left.span)?;
            let right = self.binary(level + 1)?;
            let span = left.span.to(right.span);
            left = Expr::new(ExprKind::Binary(op, Box::new(left), Box::new(right)), span);
        }
        self.depth -= chain;
        Ok(left)
    }

    fn unary(&mut self) -> Parsed<Expr> {
        let start = self.peek().span;
        let op = match &self.peek().kind {
            TokenKind::Punct("-") => Some(UnOp::Neg),
            TokenKind::Punct("+") => Some(UnOp::Plus),
            TokenKind::Punct("!") => Some(UnOp::Not),
            TokenKind::Punct("~") => Some(UnOp::BitNot),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            self.enter(start)?;
            let operand = self.unary()?;
            self.depth -= 1;
            let span = start.to(operand.span);
            return Ok(Expr::new(ExprKind::Unary(op, Box::new(operand)), span));
        }
        for (p, increment) in [("++", true), ("--", false)] {
            if self.eat_punct(p) {
                self.enter(start)?;
                let target = self.unary()?;
                self.depth -= 1;
                let span = start.to(target.span);
                return Ok(Expr::new(
                    ExprKind::Step {
                        increment,
                        prefix: true,
                        target: Box::new(target),
                    },
                    span,
                ));
            }
        }
        if self.is_punct("&") || self.is_punct("*") {
            return Err(
                Diagnostic::error("pointer operations are outside the CUDA subset", start)
                    .with_help("index arrays with `a[i]` instead of `*` and `&`"),
            );
        }
        if self.is_punct("(")
            && matches!(&self.peek_at(1).kind, TokenKind::Ident(w) if TYPE_WORDS.contains(&w.as_str()))
        {
            self.bump();
            let (scalar, _, _) = self.scalar_type()?;
            if self.is_punct("*") {
                return Err(Diagnostic::error(
                    "pointer casts are outside the CUDA subset",
                    self.peek().span,
                )
                .with_help("index the pointer parameter with its own type"));
            }
            self.expect_punct(")")?;
            self.enter(start)?;
            let operand = self.unary()?;
            self.depth -= 1;
            let span = start.to(operand.span);
            return Ok(Expr::new(ExprKind::Cast(scalar, Box::new(operand)), span));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Parsed<Expr> {
        let mut expr = self.primary()?;
        loop {
            let step = if self.is_punct("++") {
                Some(true)
            } else if self.is_punct("--") {
                Some(false)
            } else {
                None
            };
            if let Some(increment) = step {
                let span = expr.span.to(self.bump().span);
                expr = Expr::new(
                    ExprKind::Step {
                        increment,
                        prefix: false,
                        target: Box::new(expr),
                    },
                    span,
                );
                continue;
            }
            if self.is_punct("[") {
                let open = self.peek().span;
                return Err(Diagnostic::error("only arrays may be indexed", expr.span.to(open))
                    .with_help(
                        "index a pointer parameter or a `__shared__` array by its name, as in `a[i]`",
                    ));
            }
            if self.is_punct(".") || self.is_punct("->") {
                return Err(Diagnostic::error(
                    "member access is outside the CUDA subset",
                    self.peek().span,
                )
                .with_help("only `threadIdx.x`-style built-ins have members"));
            }
            return Ok(expr);
        }
    }

    fn indices(&mut self) -> Parsed<(Vec<Expr>, Span)> {
        let mut indices = Vec::new();
        let mut end = self.peek().span;
        while self.eat_punct("[") {
            self.enter(end)?;
            indices.push(self.expr()?);
            self.depth -= 1;
            end = self.expect_punct("]")?;
        }
        Ok((indices, end))
    }

    /// `__opt__(in[w], sb[idx])` after `__opt__` (at `start`): the marked
    /// read `in[w]`, its chosen slot kept in the parser's `chosen`.
    fn chosen_read(&mut self, start: Span) -> Parsed<Expr> {
        self.bump();
        let read_start = self.peek().span;
        let (array, _) = self.ident("the array read, as in `__opt__(in[i], sb[j])`")?;
        let (indices, read_end) = self.indices()?;
        if indices.len() != 1 {
            return Err(self.expected(&format!("one index, as in `__opt__({array}[i], sb[j])`")));
        }
        self.expect_punct(",")?;
        let slot_start = self.peek().span;
        let (shared, _) =
            self.ident("the shared slot that holds the element, as in `__opt__(in[i], sb[j])`")?;
        let (slot_indices, slot_end) = self.indices()?;
        if slot_indices.is_empty() {
            return Err(self.expected(&format!("an index of `{shared}`, as in `{shared}[j]`")));
        }
        let end = self.expect_punct(")")?;
        let span = start.to(end);
        self.chosen.push((
            span,
            ChosenSlot {
                shared,
                indices: slot_indices,
                span: slot_start.to(slot_end),
                text: String::new(),
                read_span: read_start.to(read_end),
                read_text: String::new(),
            },
        ));
        Ok(Expr::new(
            ExprKind::Index {
                array,
                slot: UNRESOLVED,
                indices,
                marked: Some(UNRESOLVED),
            },
            span,
        ))
    }

    fn primary(&mut self) -> Parsed<Expr> {
        let token = self.peek();
        let span = token.span;
        match &token.kind {
            TokenKind::Int {
                value,
                unsigned,
                long,
            } => {
                self.bump();
                let scalar = match (unsigned, long) {
                    (false, false) if *value <= i32::MAX as u64 => Scalar::Int,
                    (true, false) if *value <= u32::MAX as u64 => Scalar::UInt,
                    (false, _) if *value <= i64::MAX as u64 => Scalar::Long,
                    _ => Scalar::ULong,
                };
                Ok(Expr::new(ExprKind::Int(*value, scalar), span))
            }
            TokenKind::Float { value, single } => {
                self.bump();
                let scalar = if *single {
                    Scalar::Float
                } else {
                    Scalar::Double
                };
                Ok(Expr::new(ExprKind::Float(*value, scalar), span))
            }
            TokenKind::Punct("(") => {
                self.bump();
                self.enter(span)?;
                let inner = self.expr()?;
                self.depth -= 1;
                let end = self.expect_punct(")")?;
                Ok(Expr {
                    span: span.to(end),
                    ..inner
                })
            }
            TokenKind::Ident(name) => {
                self.bump();
                let name = name.clone();
                match name.as_str() {
                    "true" | "false" => return Ok(Expr::new(ExprKind::Bool(name == "true"), span)),
                    "__opt__" if self.is_punct("(") => return self.chosen_read(span),
                    "__opt__" => {
                        self.expect_punct(".")?;
                        let (array, _) = self.ident("the array read, as in `__opt__.in[i]`")?;
                        let (indices, end) = self.indices()?;
                        if indices.is_empty() {
                            return Err(
                                self.expected(&format!("an index, as in `__opt__.{array}[i]`"))
                            );
                        }
                        return Ok(Expr::new(
                            ExprKind::Index {
                                array,
                                slot: UNRESOLVED,
                                indices,
                                marked: Some(UNRESOLVED),
                            },
                            span.to(end),
                        ));
                    }
                    _ => {}
                }
                if let Some(builtin) = Builtin::from_name(&name) {
                    if !self.eat_punct(".") {
                        return Err(self.expected(&format!("`.x`, `.y` or `.z` after `{name}`")));
                    }
                    let axis_token = self.peek();
                    let axis = match &axis_token.kind {
                        TokenKind::Ident(a) if a == "x" => 0,
                        TokenKind::Ident(a) if a == "y" => 1,
                        TokenKind::Ident(a) if a == "z" => 2,
                        _ => return Err(self.expected(&format!("`x`, `y` or `z` after `{name}.`"))),
                    };
                    let end = self.bump().span;
                    return Ok(Expr::new(ExprKind::Builtin(builtin, axis), span.to(end)));
                }
                if self.is_punct("(") {
                    let open = self.bump().span;
                    self.enter(open)?;
                    let mut args = Vec::new();
                    if !self.is_punct(")") {
                        loop {
                            args.push(self.assignment()?);
                            if !self.eat_punct(",") {
                                break;
                            }
                        }
                    }
                    self.depth -= 1;
                    let end = self.expect_punct(")")?;
                    return Ok(Expr::new(ExprKind::Call { name, args }, span.to(end)));
                }
                if self.is_punct("[") {
                    let (indices, end) = self.indices()?;
                    return Ok(Expr::new(
                        ExprKind::Index {
                            array: name,
                            slot: UNRESOLVED,
                            indices,
                            marked: None,
                        },
                        span.to(end),
                    ));
                }
                Ok(Expr::new(
                    ExprKind::Var {
                        name,
                        slot: UNRESOLVED,
                    },
                    span,
                ))
            }
            _ => Err(self.expected("an expression")),
        }
    }
}
