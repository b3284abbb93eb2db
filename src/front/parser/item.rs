//! Top-level declarations and the iterate.

use crate::diag::Diagnostic;
use crate::front::ast::{
    Check, Ident, Initializer, Item, Iterate, Module, PointFunction, Reduction, Stencil,
    StencilPart,
};
use crate::front::parser::Parser;
use crate::front::token::{Keyword, TokenKind};
use crate::ir::ScalarType;

const ITEM_HELP: &str = "a program is a list of declarations (`int n;`, `double c = 1.0;`, \
                         `grid g[n][n];`, `float griddata a on g at 0,1;`, `pointfunction f(a) { ... }`) \
                         followed by `iterate N { ... }`";

impl Parser {
    pub(crate) fn module(&mut self) -> Result<Module, Diagnostic> {
        let mut items = Vec::new();
        while !self.at(&TokenKind::Eof) {
            items.push(self.item()?);
        }
        Ok(Module { items })
    }

    fn item(&mut self) -> Result<Item, Diagnostic> {
        let start = self.span();
        match self.peek() {
            TokenKind::Keyword(Keyword::Grid) => self.grid(),
            TokenKind::Keyword(Keyword::Pointfunction) => {
                self.point_function().map(Item::PointFunction)
            }
            TokenKind::Keyword(Keyword::Iterate) => self.iterate().map(Item::Iterate),
            TokenKind::Keyword(Keyword::Const) => {
                self.bump();
                if !self.at_type() {
                    return Err(self.expected(
                        "a type (`int`, `long`, `float` or `double`)",
                        "a constant reads `const double c = 1.0;`",
                    ));
                }
                self.typed_item(start, true)
            }
            _ if self.at_type() => self.typed_item(start, false),
            TokenKind::Keyword(Keyword::Stencil | Keyword::Reduction) => Err(self
                .expected("a declaration", ITEM_HELP)
                .with_help("stencils and reductions go inside `iterate N { ... }`")),
            _ => Err(self.expected("a declaration", ITEM_HELP)),
        }
    }

    fn scalar_type(&mut self) -> ScalarType {
        match self.bump().kind {
            TokenKind::Keyword(k) => k.scalar_type().unwrap_or(ScalarType::Int),
            _ => ScalarType::Int,
        }
    }

    /// After `[const] type`: a parameter, constant, table or griddata.
    fn typed_item(
        &mut self,
        start: crate::source::Span,
        is_const: bool,
    ) -> Result<Item, Diagnostic> {
        let ty = self.scalar_type();
        if self.at_kw(Keyword::Griddata) && !is_const {
            self.bump();
            return self.griddata(start, ty);
        }
        let name = self.ident(
            "a name",
            "a declaration reads `int n;`, `double c = 1.0;` or `float griddata a on g at 0,1;`",
        )?;
        if self.at(&TokenKind::LBracket) {
            let mut dims = Vec::new();
            while self.eat(&TokenKind::LBracket) {
                dims.push(self.expr()?);
                self.expect(&TokenKind::RBracket, "a table extent is written `[3]`")?;
            }
            self.expect(
                &TokenKind::Assign,
                "a coefficient table needs its values: `const float K[3] = {1, 2, 1};`",
            )?;
            let init = self.initializer()?;
            let end = self.expect(&TokenKind::Semi, "end the table declaration with `;`")?;
            return Ok(Item::Table {
                ty,
                name,
                dims,
                init,
                span: start.to(end),
            });
        }
        if self.eat(&TokenKind::Assign) {
            let value = self.expr()?;
            let end = self.expect(&TokenKind::Semi, "end the constant declaration with `;`")?;
            return Ok(Item::Constant {
                ty,
                name,
                value,
                span: start.to(end),
            });
        }
        if is_const {
            return Err(self.expected(
                "`=` and the constant's value",
                "a constant needs a value: `const double c = 1.0;`",
            ));
        }
        let end = self.expect(
            &TokenKind::Semi,
            "a parameter reads `int n;`; a constant reads `double c = 1.0;`",
        )?;
        Ok(Item::Param {
            ty,
            name,
            span: start.to(end),
        })
    }

    fn initializer(&mut self) -> Result<Initializer, Diagnostic> {
        if !self.at(&TokenKind::LBrace) {
            return Ok(Initializer::Value(self.expr()?));
        }
        self.enter()?;
        let start = self.bump().span;
        let mut items = Vec::new();
        while !self.at(&TokenKind::RBrace) {
            items.push(self.initializer()?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        let end = self.expect(
            &TokenKind::RBrace,
            "separate table values with `,` and close each row with `}`",
        )?;
        self.leave();
        Ok(Initializer::List(items, start.to(end)))
    }

    /// After `type griddata`.
    fn griddata(&mut self, start: crate::source::Span, ty: ScalarType) -> Result<Item, Diagnostic> {
        const HELP: &str = "griddata reads `float griddata a on g at 0,1;`";
        let name = self.ident("a griddata name", HELP)?;
        self.expect_keyword(Keyword::On, HELP)?;
        let grid = self.ident("a grid name", HELP)?;
        self.expect_keyword(Keyword::At, HELP)?;
        let mut at = Vec::new();
        loop {
            let offset_start = self.span();
            let negative = self.eat(&TokenKind::Minus);
            match self.peek().clone() {
                TokenKind::Int(v, _) => {
                    let end = self.bump().span;
                    at.push((if negative { -v } else { v }, offset_start.to(end)));
                }
                _ => return Err(self.expected(
                    "an integer time offset",
                    "list the time offsets as consecutive integers, e.g. `at 0,1` or `at -1,0,1`",
                )),
            }
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        let boundary = match self.peek() {
            TokenKind::Ident(word) if word == "boundary" => {
                self.bump();
                Some(self.ident(
                    "a boundary mode",
                    "the boundary mode is one of `none`, `clamp`, `mirror`, `periodic`, `zero`",
                )?)
            }
            _ => None,
        };
        let end = self.expect(
            &TokenKind::Semi,
            "end the griddata declaration with `;` (optionally after `boundary clamp`)",
        )?;
        Ok(Item::Griddata {
            ty,
            name,
            grid,
            at,
            boundary,
            span: start.to(end),
        })
    }

    fn grid(&mut self) -> Result<Item, Diagnostic> {
        const HELP: &str = "a grid reads `grid g[ny][nx];` with 1 to 3 sizes";
        let start = self.bump().span;
        let name = self.ident("a grid name", HELP)?;
        let mut dims = Vec::new();
        if !self.at(&TokenKind::LBracket) {
            return Err(self.expected("`[` and the grid's size", HELP));
        }
        while self.eat(&TokenKind::LBracket) {
            dims.push(self.expr()?);
            self.expect(&TokenKind::RBracket, HELP)?;
        }
        let end = self.expect(&TokenKind::Semi, "end the grid declaration with `;`")?;
        Ok(Item::Grid {
            name,
            dims,
            span: start.to(end),
        })
    }

    fn point_function(&mut self) -> Result<PointFunction, Diagnostic> {
        const HELP: &str = "a point function reads `pointfunction f(a, b) { ... }`";
        let start = self.bump().span;
        let name = self.ident("a point-function name", HELP)?;
        self.expect(&TokenKind::LParen, HELP)?;
        let mut params = Vec::new();
        if !self.at(&TokenKind::RParen) {
            loop {
                params.push(self.ident("a griddata parameter name", HELP)?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        self.expect(
            &TokenKind::RParen,
            "separate parameters with `,` and close the list with `)`",
        )?;
        self.expect(&TokenKind::LBrace, HELP)?;
        let body = self.block_body()?;
        let end = self.expect(&TokenKind::RBrace, "close the point function with `}`")?;
        Ok(PointFunction {
            name,
            params,
            body,
            span: start.to(end),
        })
    }

    fn iterate(&mut self) -> Result<Iterate, Diagnostic> {
        let span = self.bump().span;
        let count = self.expr()?;
        self.expect(
            &TokenKind::LBrace,
            "the iterate reads `iterate N { stencils and reductions }`",
        )?;
        let mut stencils = Vec::new();
        let mut reductions = Vec::new();
        loop {
            match self.peek() {
                TokenKind::Keyword(Keyword::Stencil) => stencils.push(self.stencil()?),
                TokenKind::Keyword(Keyword::Reduction) => reductions.push(self.reduction()?),
                TokenKind::RBrace => break,
                _ => {
                    return Err(self.expected(
                        "`stencil`, `reduction` or `}`",
                        "an iterate holds `stencil name { ... }` and `reduction name op { ... }`",
                    ))
                }
            }
        }
        self.bump();
        let check = if self.at_kw(Keyword::Check) {
            const HELP: &str = "the check reads `check (condition) every K iterations`";
            let start = self.bump().span;
            self.expect(&TokenKind::LParen, HELP)?;
            let cond = self.expr()?;
            self.expect(&TokenKind::RParen, HELP)?;
            self.expect_keyword(Keyword::Every, HELP)?;
            let every = self.expr()?;
            let mut end = every.span;
            if let TokenKind::Ident(word) = self.peek() {
                if word == "iterations" || word == "iteration" {
                    end = self.bump().span;
                }
            }
            Some(Check {
                cond,
                every,
                span: start.to(end),
            })
        } else {
            None
        };
        self.eat(&TokenKind::Semi);
        Ok(Iterate {
            count,
            stencils,
            reductions,
            check,
            span,
        })
    }

    fn stencil(&mut self) -> Result<Stencil, Diagnostic> {
        const HELP: &str = "a stencil reads `stencil name { [lo:hi][lo:hi] : statement; ... }`";
        let start = self.bump().span;
        let name = self.ident("a stencil name", HELP)?;
        self.expect(&TokenKind::LBrace, HELP)?;
        let mut parts = Vec::new();
        while !self.at(&TokenKind::RBrace) {
            let subset = self.subset()?;
            self.expect(
                &TokenKind::Colon,
                "a stencil part reads `subset : statement;`",
            )?;
            let stmt = self.stmt()?;
            let span = subset.span.to(self.prev_span());
            parts.push(StencilPart { subset, stmt, span });
        }
        let end = self.bump().span;
        Ok(Stencil {
            name,
            parts,
            span: start.to(end),
        })
    }

    fn reduction(&mut self) -> Result<Reduction, Diagnostic> {
        const HELP: &str = "a reduction reads `reduction name max { subset : expression; }` \
                            with operator `+`, `*`, `max` or `min`";
        let start = self.bump().span;
        let name = self.ident("a reduction name", HELP)?;
        let op_span = self.span();
        let op = match self.peek() {
            TokenKind::Plus => "+".to_string(),
            TokenKind::Star => "*".to_string(),
            TokenKind::Ident(word) => word.clone(),
            _ => return Err(self.expected("a reduction operator (`+`, `*`, `max`, `min`)", HELP)),
        };
        self.bump();
        let op = Ident {
            name: op,
            span: op_span,
        };
        self.expect(&TokenKind::LBrace, HELP)?;
        let mut parts = Vec::new();
        while !self.at(&TokenKind::RBrace) {
            let subset = self.subset()?;
            self.expect(
                &TokenKind::Colon,
                "a reduction part reads `subset : expression;`",
            )?;
            let value = self.expr()?;
            let end = self.expect(&TokenKind::Semi, "end the reduction part with `;`")?;
            let span = subset.span.to(end);
            parts.push((subset, value, span));
        }
        let end = self.bump().span;
        Ok(Reduction {
            name,
            op,
            parts,
            span: start.to(end),
        })
    }
}
