//! The parser of the CUDA subset: tokens to the [`ast`](super::ast) of its kernels.
//!
//! Recursive descent with C's precedence. Every construct outside the subset
//! (device functions, `struct`, `goto`, pointer arithmetic, `do`, ...) is a
//! diagnostic at the place it starts, naming what to write instead.

use crate::diag::Diagnostic;
use crate::source::Span;

use super::ast::{
    BinOp, Builtin, Expr, ExprKind, Function, Kernel, Param, Scalar, Stmt, StmtKind, Type, UnOp,
    UNRESOLVED,
};
use super::lexer::{Token, TokenKind};

/// How deeply expressions and statements may nest (the parser and every later
/// pass recurse on them).
pub const MAX_NESTING: usize = 100;

/// A top-level definition.
#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    /// A `__global__` kernel.
    Kernel(Kernel),
    /// A `__device__` function.
    Function(Function),
}

/// Words that may qualify a `__device__` function before its result type.
const FUNCTION_QUALIFIERS: &[&str] = &[
    "static",
    "inline",
    "__inline__",
    "__forceinline__",
    "__noinline__",
    "__device__",
];

/// Parses a translation unit's kernels and device functions, in source order.
pub fn parse(tokens: &[Token]) -> Result<Vec<Item>, Diagnostic> {
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
    };
    let mut items = Vec::new();
    while !parser.at_eof() {
        items.push(parser.item()?);
    }
    Ok(items)
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    depth: usize,
}

type Parsed<T> = Result<T, Diagnostic>;

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

/// Words that start a declaration's type.
const TYPE_WORDS: &[&str] = &[
    "int", "long", "float", "double", "bool", "unsigned", "signed", "size_t", "const", "short",
    "char",
];

/// Words of C and CUDA that the subset leaves out, with what to do instead.
const OUTSIDE: &[(&str, &str)] = &[
    ("do", "write the loop as `while (...) { ... }`"),
    ("switch", "write the cases as `if`/`else if`"),
    ("goto", "use structured loops and `break`/`continue`"),
    ("struct", "pass each member as its own parameter"),
    (
        "__device__",
        "define device functions outside kernels, before the kernel that calls them",
    ),
    (
        "__constant__",
        "pass the table as a `const float*` parameter",
    ),
    ("template", "write the kernel for one concrete type"),
    ("typedef", "write the type out"),
    ("asm", "write the computation in C"),
];

impl<'a> Parser<'a> {
    fn peek(&self) -> &'a Token {
        &self.tokens[self.pos.min(self.tokens.len() - 1)]
    }

    fn peek_at(&self, ahead: usize) -> &'a Token {
        &self.tokens[(self.pos + ahead).min(self.tokens.len() - 1)]
    }

    fn at_eof(&self) -> bool {
        self.peek().kind == TokenKind::Eof
    }

    fn bump(&mut self) -> &'a Token {
        let token = self.peek();
        if self.pos < self.tokens.len() - 1 {
            self.pos += 1;
        }
        token
    }

    fn is_punct(&self, p: &str) -> bool {
        matches!(&self.peek().kind, TokenKind::Punct(q) if *q == p)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(&self.peek().kind, TokenKind::Ident(n) if n == w)
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        let found = self.is_punct(p);
        if found {
            self.bump();
        }
        found
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let found = self.is_word(w);
        if found {
            self.bump();
        }
        found
    }

    fn describe(token: &Token) -> String {
        match &token.kind {
            TokenKind::Ident(n) => format!("`{n}`"),
            TokenKind::Int { value, .. } => format!("the number `{value}`"),
            TokenKind::Float { value, .. } => format!("the number `{value}`"),
            TokenKind::Str(s) => format!("the string \"{s}\""),
            TokenKind::Punct(p) => format!("`{p}`"),
            TokenKind::Eof => "the end of the file".to_string(),
        }
    }

    fn expected(&self, what: &str) -> Diagnostic {
        let token = self.peek();
        let mut diag = Diagnostic::error(
            format!("expected {what}, found {}", Self::describe(token)),
            token.span,
        )
        .with_label(format!("expected {what} here"));
        if let TokenKind::Ident(word) = &token.kind {
            if let Some((_, help)) = OUTSIDE.iter().find(|(w, _)| w == word) {
                diag.message = format!("`{word}` is outside the CUDA subset");
                diag = diag.with_help(*help);
            }
        }
        if diag.help.is_none() {
            diag = diag.with_help(format!("write {what}"));
        }
        diag
    }

    fn expect_punct(&mut self, p: &str) -> Parsed<Span> {
        if self.is_punct(p) {
            Ok(self.bump().span)
        } else {
            Err(self.expected(&format!("`{p}`")))
        }
    }

    fn ident(&mut self, what: &str) -> Parsed<(String, Span)> {
        match &self.peek().kind {
            TokenKind::Ident(name) if !TYPE_WORDS.contains(&name.as_str()) => {
                let span = self.bump().span;
                Ok((name.clone(), span))
            }
            _ => Err(self.expected(what)),
        }
    }

    fn enter(&mut self, span: Span) -> Parsed<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Diagnostic::error(
                format!("nested more than {MAX_NESTING} levels deep"),
                span,
            )
            .with_help("split the expression or statement with local variables"));
        }
        Ok(())
    }

    fn item(&mut self) -> Parsed<Item> {
        let start = self.pos;
        let mut qualifiers = Vec::new();
        while let TokenKind::Ident(word) = &self.peek().kind {
            if !FUNCTION_QUALIFIERS.contains(&word.as_str()) {
                break;
            }
            qualifiers.push(word.clone());
            self.bump();
        }
        if !qualifiers.iter().any(|q| q == "__device__") {
            // Not a device function: a kernel, or the kernel's diagnostic.
            self.pos = start;
            return Ok(Item::Kernel(self.kernel()?));
        }
        if self.is_word("void") {
            return Err(Diagnostic::error(
                "`void` device functions are outside the CUDA subset",
                self.peek().span,
            )
            .with_help("return the value the function computes, or inline it into the kernel"));
        }
        let (ret, _, _) = self.scalar_type()?;
        let (name, name_span) = self.ident("the function's name")?;
        self.expect_punct("(")?;
        let params = self.params()?;
        let open = self.expect_punct("{")?;
        let body = self.block_rest(open)?;
        Ok(Item::Function(Function {
            name,
            name_span,
            qualifiers,
            ret,
            params,
            body,
            slots: Vec::new(),
            inlined: 1,
        }))
    }

    /// The parameter list after its `(`, through the `)`.
    fn params(&mut self) -> Parsed<Vec<Param>> {
        let mut params = Vec::new();
        if !self.eat_punct(")") {
            if self.is_word("void") && matches!(&self.peek_at(1).kind, TokenKind::Punct(")")) {
                self.bump();
                self.bump();
            } else {
                loop {
                    params.push(self.param()?);
                    if self.eat_punct(")") {
                        break;
                    }
                    self.expect_punct(",")?;
                }
            }
        }
        Ok(params)
    }

    fn kernel(&mut self) -> Parsed<Kernel> {
        let extern_c = if self.eat_word("extern") {
            match &self.peek().kind {
                TokenKind::Str(s) if s == "C" => {
                    self.bump();
                    true
                }
                _ => return Err(self.expected("`\"C\"` after `extern`")),
            }
        } else {
            false
        };
        if !self.eat_word("__global__") {
            return Err(self.expected("a `__global__` kernel"));
        }
        if !self.eat_word("void") {
            return Err(self.expected("`void` (kernels return nothing)"));
        }
        let mut launch_bounds = None;
        if self.eat_word("__launch_bounds__") {
            self.expect_punct("(")?;
            match self.bump().kind {
                TokenKind::Int { value, .. } => launch_bounds = Some(value),
                _ => {
                    self.pos -= 1;
                    return Err(self.expected("the maximum threads per block"));
                }
            }
            self.expect_punct(")")?;
        }
        let (name, name_span) = self.ident("the kernel's name")?;
        self.expect_punct("(")?;
        let params = self.params()?;
        let open = self.expect_punct("{")?;
        let body = self.block_rest(open)?;
        Ok(Kernel {
            name,
            name_span,
            extern_c,
            launch_bounds,
            params,
            body,
            marked: Vec::new(),
            slots: Vec::new(),
            functions: Vec::new(),
        })
    }

    /// `const`, a scalar type, then `const` again; returns the type and
    /// whether `const` was seen.
    fn scalar_type(&mut self) -> Parsed<(Scalar, bool, Span)> {
        let start = self.peek().span;
        let mut is_const = self.eat_word("const");
        let scalar = if self.eat_word("unsigned") {
            if self.eat_word("long") {
                self.eat_word("long");
                self.eat_word("int");
                Scalar::ULong
            } else {
                self.eat_word("int");
                Scalar::UInt
            }
        } else if self.eat_word("signed") || self.eat_word("int") {
            self.eat_word("int");
            Scalar::Int
        } else if self.eat_word("long") {
            self.eat_word("long");
            self.eat_word("int");
            Scalar::Long
        } else if self.eat_word("size_t") {
            Scalar::ULong
        } else if self.eat_word("float") {
            Scalar::Float
        } else if self.eat_word("double") {
            Scalar::Double
        } else if self.eat_word("bool") {
            Scalar::Bool
        } else if self.is_word("char") || self.is_word("short") {
            return Err(Diagnostic::error(
                "`char` and `short` are outside the CUDA subset",
                self.peek().span,
            )
            .with_help("use `int`, `long`, `float`, `double` or `bool`"));
        } else {
            return Err(self.expected("a type (`int`, `float`, `double`, ...)"));
        };
        is_const |= self.eat_word("const");
        let end = self.tokens[self.pos.saturating_sub(1)].span;
        Ok((scalar, is_const, start.to(end)))
    }

    fn param(&mut self) -> Parsed<Param> {
        let start = self.peek().span;
        let (scalar, is_const, _) = self.scalar_type()?;
        let pointer = self.eat_punct("*");
        if pointer && self.is_punct("*") {
            return Err(Diagnostic::error(
                "pointers to pointers are outside the CUDA subset",
                self.peek().span,
            )
            .with_help("pass a flat array and index it as `a[i * n + j]`"));
        }
        let mut restrict = false;
        loop {
            if self.eat_word("__restrict__") || self.eat_word("__restrict") {
                restrict = true;
            } else if !self.eat_word("const") {
                break;
            }
        }
        let (name, name_span) = self.ident("the parameter's name")?;
        if self.is_punct("[") {
            return Err(Diagnostic::error(
                "array parameters are outside the CUDA subset",
                self.peek().span,
            )
            .with_help(format!("declare it as a pointer: `{scalar}* {name}`")));
        }
        Ok(Param {
            name,
            ty: if pointer {
                Type::Pointer(scalar)
            } else {
                Type::Scalar(scalar)
            },
            is_const,
            restrict,
            span: start.to(name_span),
        })
    }

    fn block_rest(&mut self, open: Span) -> Parsed<Vec<Stmt>> {
        let mut body = Vec::new();
        loop {
            if self.eat_punct("}") {
                return Ok(body);
            }
            if self.at_eof() {
                return Err(Diagnostic::error("this `{` is never closed", open)
                    .with_help("add the matching `}`"));
            }
            body.push(self.stmt()?);
        }
    }

    fn starts_type(&self) -> bool {
        matches!(&self.peek().kind, TokenKind::Ident(w) if TYPE_WORDS.contains(&w.as_str()))
    }

    fn stmt(&mut self) -> Parsed<Stmt> {
        let start = self.peek().span;
        self.enter(start)?;
        let stmt = self.stmt_inner(start);
        self.depth -= 1;
        stmt
    }

    fn finish(&self, kind: StmtKind, start: Span) -> Stmt {
        let end = self.tokens[self.pos.saturating_sub(1)].span;
        Stmt {
            kind,
            span: start.to(end),
        }
    }

    fn stmt_inner(&mut self, start: Span) -> Parsed<Stmt> {
        if self.eat_punct(";") {
            return Ok(self.finish(StmtKind::Block(Vec::new()), start));
        }
        if self.eat_punct("{") {
            let body = self.block_rest(start)?;
            return Ok(self.finish(StmtKind::Block(body), start));
        }
        if self.eat_word("if") {
            self.expect_punct("(")?;
            let cond = self.expr()?;
            self.expect_punct(")")?;
            let then = Box::new(self.stmt()?);
            let other = if self.eat_word("else") {
                Some(Box::new(self.stmt()?))
            } else {
                None
            };
            return Ok(self.finish(StmtKind::If(cond, then, other), start));
        }
        if self.eat_word("while") {
            self.expect_punct("(")?;
            let cond = self.expr()?;
            self.expect_punct(")")?;
            let body = Box::new(self.stmt()?);
            return Ok(self.finish(StmtKind::While(cond, body), start));
        }
        if self.eat_word("for") {
            return self.for_rest(start);
        }
        if self.eat_word("return") {
            if self.eat_punct(";") {
                return Ok(self.finish(StmtKind::Return, start));
            }
            let value = self.expr()?;
            self.expect_punct(";")?;
            return Ok(self.finish(StmtKind::ReturnValue(value), start));
        }
        for (word, kind) in [("break", StmtKind::Break), ("continue", StmtKind::Continue)] {
            if self.eat_word(word) {
                self.expect_punct(";")?;
                return Ok(self.finish(kind, start));
            }
        }
        if self.eat_word("__syncthreads") {
            self.expect_punct("(")?;
            self.expect_punct(")")?;
            self.expect_punct(";")?;
            return Ok(self.finish(StmtKind::Sync, start));
        }
        if self.is_word("profile") && matches!(self.peek_at(1).kind, TokenKind::Punct("(")) {
            return self.profile_rest(start);
        }
        if let TokenKind::Ident(word) = &self.peek().kind {
            if let Some((_, help)) = OUTSIDE.iter().find(|(w, _)| w == word) {
                return Err(Diagnostic::error(
                    format!("`{word}` is outside the CUDA subset"),
                    start,
                )
                .with_help(*help));
            }
        }
        if self.eat_word("__shared__") {
            return self.shared_rest(start);
        }
        if self.starts_type() {
            return self.locals(start);
        }
        let expr = self.expr()?;
        self.expect_punct(";")?;
        Ok(self.finish(StmtKind::Expr(expr), start))
    }

    fn for_rest(&mut self, start: Span) -> Parsed<Stmt> {
        self.expect_punct("(")?;
        let init = if self.eat_punct(";") {
            None
        } else if self.starts_type() {
            let init_start = self.peek().span;
            Some(Box::new(self.locals(init_start)?))
        } else {
            let init_start = self.peek().span;
            let expr = self.expr()?;
            self.expect_punct(";")?;
            Some(Box::new(self.finish(StmtKind::Expr(expr), init_start)))
        };
        let cond = if self.is_punct(";") {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect_punct(";")?;
        let step = if self.is_punct(")") {
            None
        } else {
            Some(self.expr()?)
        };
        self.expect_punct(")")?;
        let body = Box::new(self.stmt()?);
        Ok(self.finish(
            StmtKind::For {
                init,
                cond,
                step,
                body,
            },
            start,
        ))
    }

    fn profile_rest(&mut self, start: Span) -> Parsed<Stmt> {
        self.bump();
        self.expect_punct("(")?;
        let token = self.bump();
        let TokenKind::Str(text) = &token.kind else {
            self.pos -= 1;
            return Err(self.expected("a string of candidate names, as in `profile(\"i j\")`"));
        };
        // Each name's span: its bytes inside the string literal.
        let mut names = Vec::new();
        let base = token.span.start as usize + 1;
        let mut offset = 0;
        for word in text.split_whitespace() {
            let at = text[offset..].find(word).map_or(0, |i| i + offset);
            offset = at + word.len();
            names.push((
                word.to_string(),
                Span::new(base + at, base + at + word.len()),
            ));
        }
        if names.is_empty() {
            return Err(
                Diagnostic::error("`profile` names no candidate", token.span).with_help(
                    "list the candidate variables, as in `profile(\"threadIdx.x i j\")`",
                ),
            );
        }
        self.expect_punct(")")?;
        self.expect_punct(";")?;
        Ok(self.finish(StmtKind::Profile(names), start))
    }

    fn shared_rest(&mut self, start: Span) -> Parsed<Stmt> {
        let (elem, _, _) = self.scalar_type()?;
        let (name, _) = self.ident("the shared array's name")?;
        let mut dims = Vec::new();
        while self.eat_punct("[") {
            dims.push(self.expr()?);
            self.expect_punct("]")?;
        }
        if dims.is_empty() {
            return Err(self.expected(&format!("the size of `{name}`, as in `{name}[256]`")));
        }
        if self.is_punct("=") {
            return Err(Diagnostic::error(
                "shared arrays cannot be initialised in their declaration",
                self.peek().span,
            )
            .with_help("store into the array, then `__syncthreads()`"));
        }
        self.expect_punct(";")?;
        Ok(self.finish(
            StmtKind::Shared {
                elem,
                name,
                slot: UNRESOLVED,
                dims,
            },
            start,
        ))
    }

    /// `T a = 1, b;` as one statement per declarator (a block without a scope).
    fn locals(&mut self, start: Span) -> Parsed<Stmt> {
        let (ty, is_const, _) = self.scalar_type()?;
        let mut decls = Vec::new();
        loop {
            let decl_start = self.peek().span;
            if self.is_punct("*") {
                return Err(Diagnostic::error(
                    "local pointers are outside the CUDA subset",
                    self.peek().span,
                )
                .with_help("index the kernel's pointer parameters directly"));
            }
            let (name, _) = self.ident("a variable name")?;
            if self.is_punct("[") {
                return Err(Diagnostic::error(
                    "local arrays are outside the CUDA subset",
                    self.peek().span,
                )
                .with_help("use scalar variables, or a `__shared__` array"));
            }
            let init = if self.eat_punct("=") {
                Some(self.assignment()?)
            } else {
                None
            };
            decls.push(self.finish(
                StmtKind::Local {
                    ty,
                    is_const,
                    name,
                    slot: UNRESOLVED,
                    init,
                },
                decl_start,
            ));
            if !self.eat_punct(",") {
                break;
            }
        }
        self.expect_punct(";")?;
        if decls.len() == 1 {
            Ok(decls.remove(0))
        } else {
            // A declaration list stays in its enclosing scope: marked by a
            // block whose span is the whole list and that sema does not scope.
            Ok(self.finish(StmtKind::Block(decls), start).into_decl_list())
        }
    }

    /// An expression, with the comma operator left out.
    pub fn expr(&mut self) -> Parsed<Expr> {
        self.assignment()
    }

    fn assignment(&mut self) -> Parsed<Expr> {
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

impl Stmt {
    /// Marks a block as a declaration list (`int a, b;`), which declares into
    /// the enclosing scope instead of opening one.
    fn into_decl_list(self) -> Stmt {
        Stmt {
            kind: StmtKind::DeclList(match self.kind {
                StmtKind::Block(items) => items,
                other => vec![Stmt {
                    kind: other,
                    span: self.span,
                }],
            }),
            span: self.span,
        }
    }
}
