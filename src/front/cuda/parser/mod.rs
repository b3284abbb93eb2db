//! The parser of the CUDA subset: tokens to the [`ast`](super::ast) of its kernels.
//!
//! Recursive descent with C's precedence. Every construct outside the subset
//! (device functions, `struct`, `goto`, pointer arithmetic, `do`, ...) is a
//! diagnostic at the place it starts, naming what to write instead.

use crate::diag::Diagnostic;
use crate::source::Span;

use super::ast::{ChosenSlot, Function, Kernel, Param, Scalar, Stmt, StmtKind, Type, UNRESOLVED};
use super::lexer::{Token, TokenKind};

mod expr;

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
        chosen: Vec::new(),
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
    /// The chosen slots of `__opt__(a[i], sb[j])` reads met so far.
    chosen: Vec<(Span, ChosenSlot)>,
}

type Parsed<T> = Result<T, Diagnostic>;

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
            // The minimum blocks per SM and the maximum blocks per cluster
            // only steer ptxas's register allocation: read and left out.
            for what in [
                "the minimum blocks per SM",
                "the maximum blocks per cluster",
            ] {
                if self.eat_punct(",") {
                    match self.bump().kind {
                        TokenKind::Int { .. } => {}
                        _ => {
                            self.pos -= 1;
                            return Err(self.expected(what));
                        }
                    }
                } else {
                    break;
                }
            }
            self.expect_punct(")")?;
        }
        let (name, name_span) = self.ident("the kernel's name")?;
        self.expect_punct("(")?;
        let params = self.params()?;
        let open = self.expect_punct("{")?;
        self.chosen.clear();
        let body = self.block_rest(open)?;
        Ok(Kernel {
            name,
            name_span,
            extern_c,
            launch_bounds,
            params,
            body,
            marked: Vec::new(),
            chosen: std::mem::take(&mut self.chosen),
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
            return self.shared_rest(start, false);
        }
        if self.is_word("extern")
            && matches!(&self.peek_at(1).kind, TokenKind::Ident(w) if w == "__shared__")
        {
            self.bump();
            self.bump();
            return self.shared_rest(start, true);
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

    /// After `__shared__` (`extern __shared__` when `is_extern`).
    fn shared_rest(&mut self, start: Span, is_extern: bool) -> Parsed<Stmt> {
        let (elem, _, _) = self.scalar_type()?;
        let (name, _) = self.ident("the shared array's name")?;
        let mut dims = Vec::new();
        if is_extern {
            self.expect_punct("[")?;
            if !self.is_punct("]") {
                return Err(Diagnostic::error(
                    format!("`extern __shared__` array `{name}` with a size"),
                    self.peek().span,
                )
                .with_help(format!(
                    "leave the size out, as in `extern __shared__ {elem} {name}[];` (the launch gives it), or drop `extern`"
                )));
            }
            self.bump();
            if self.is_punct("[") {
                return Err(Diagnostic::error(
                    format!("`extern __shared__` array `{name}` with a second dimension"),
                    self.peek().span,
                )
                .with_help("declare it with one dimension, `[]`, and index it flat"));
            }
            self.expect_punct(";")?;
            return Ok(self.finish(
                StmtKind::Shared {
                    elem,
                    name,
                    slot: UNRESOLVED,
                    dims,
                },
                start,
            ));
        }
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
