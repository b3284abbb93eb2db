//! A kernel of the CUDA subset printed as OpenCL C, so that it also runs on
//! an OpenCL platform (PoCL in CI), an execution independent of the emulator.
//!
//! The mapping: `__global__` → `__kernel`; pointer parameters → `__global`
//! (with `const` and `restrict` kept); `__shared__` → `__local`, declared at
//! the top of the kernel body (OpenCL allows local arrays only at kernel
//! scope: declarations in nested blocks are hoisted); `__syncthreads()` →
//! `barrier(CLK_LOCAL_MEM_FENCE)`; `threadIdx` / `blockIdx` / `blockDim` /
//! `gridDim` → `get_local_id` / `get_group_id` / `get_local_size` /
//! `get_num_groups`, converted to `uint` as CUDA's are (or straight to the
//! type of a cast written around them); math functions to their OpenCL
//! overloads, with the arguments converted to the precision CUDA computes in;
//! `__device__` functions to plain functions; `#define`s kept (every macro
//! use is printed by its name), `-D` values as `#define`s; the `cl_khr_fp64`
//! pragma when anything is `double`. `extern "C"` and `__launch_bounds__`
//! have no OpenCL meaning and are left out.
//!
//! It writes through the C-family writer ([`crate::back::text`]): a variable
//! whose CUDA name OpenCL C reserves (`kernel`, `local`, `uint`, `barrier`,
//! a math built-in) is named apart by a [`Namer`] for OpenCL C, which keeps
//! every other name, and literals are the one literal printer's.
//!
//! A floating value converted to an integer type (a cast, an initialiser, an
//! assignment, `i += f`, a `__device__` function's argument or result) goes through OpenCL's `convert_<T>_sat_rtz`, which
//! computes what the emulator computes where C's conversion is undefined
//! (out of range saturates, NaN gives 0); a compound assignment whose target
//! has side effects (`a[i++] += f`) keeps C's conversion.
//!
//! KaniCUDA's annotations are stripped: `profile("...")` is dropped and a
//! marked read `__opt__.a[i]` is printed as the global read `a[i]` it stands
//! for, which is what the emulator computes for it too. Warp shuffles have no
//! OpenCL 1.2 counterpart: a kernel using one is refused with a diagnostic.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::back::text::{floating, CodeWriter, Language, Namer};
use crate::diag::Diagnostic;
use crate::source::Span;

use crate::front::cuda::ast::{
    BinOp, Builtin, Expr, ExprKind, Function, Kernel, Scalar, Stmt, StmtKind, Type, UnOp,
};
use crate::front::cuda::sema::{math_operand_type, SHUFFLES};

/// Prints `kernel` (with the device functions it may call) as an OpenCL C
/// program. `source` is the CUDA text it was parsed from and `defines` the
/// `-D` pairs it was parsed with (for the `#define`s).
pub fn print_kernel(
    kernel: &Kernel,
    source: &str,
    defines: &[(String, String)],
) -> Result<String, Diagnostic> {
    let macros = macros(source, defines);
    let mut p = Printer {
        code: CodeWriter::new(Language::OpenCl),
        renamed: HashMap::new(),
        source,
        macro_names: macros.iter().map(|(n, _)| n.clone()).collect(),
        slots: Vec::new(),
        doubles: false,
        params: kernel
            .functions
            .iter()
            .map(|f| {
                let types = f
                    .params
                    .iter()
                    .map(|p| match p.ty {
                        Type::Scalar(s) => Some(s),
                        _ => None,
                    })
                    .collect();
                (f.name.clone(), types)
            })
            .collect(),
        ret: None,
    };
    let mut body = String::new();
    for function in &kernel.functions {
        p.function(function)?;
        p.code.out.push('\n');
    }
    p.kernel(kernel)?;
    std::mem::swap(&mut body, &mut p.code.out);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// OpenCL C printed by stencilc from the CUDA kernel `{}`.",
        kernel.name
    );
    if p.doubles {
        out.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    }
    for (name, value) in &macros {
        let _ = writeln!(out, "#define {name} {value}");
    }
    out.push('\n');
    out.push_str(&body);
    Ok(out)
}

/// The macros a kernel may use: `-D` pairs first, then the file's own
/// object-like `#define`s in order (the lexer has checked their form).
fn macros(source: &str, defines: &[(String, String)]) -> Vec<(String, String)> {
    let mut list: Vec<(String, String)> = defines.to_vec();
    let mut lines = source.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.trim_start().strip_prefix('#') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix("define") else {
            continue;
        };
        // Continuation lines join the definition.
        let mut text = rest.to_string();
        while text.ends_with('\\') {
            text.pop();
            text.push(' ');
            text.push_str(lines.next().unwrap_or(""));
        }
        let text = text.split("//").next().unwrap_or("").trim();
        let (name, value) = text.split_once(char::is_whitespace).unwrap_or((text, "1"));
        if name.is_empty() || list.iter().any(|(n, _)| n == name) {
            continue;
        }
        list.push((name.to_string(), value.trim().to_string()));
    }
    list
}

struct Printer<'a> {
    /// The OpenCL C text and its indentation.
    code: CodeWriter,
    /// The variables of the function or kernel being printed whose CUDA
    /// names OpenCL C reserves, with the names they are printed under.
    renamed: HashMap<String, String>,
    source: &'a str,
    macro_names: HashSet<String>,
    /// The slots of the kernel or function being printed.
    slots: Vec<crate::front::cuda::ast::SlotInfo>,
    /// Whether anything is `double` (the fp64 pragma).
    doubles: bool,
    /// The scalar parameter types of each `__device__` function, which C
    /// converts its arguments to.
    params: std::collections::HashMap<String, Vec<Option<Scalar>>>,
    /// The result type of the `__device__` function being printed (`None` in
    /// the kernel), which C converts a returned value to.
    ret: Option<Scalar>,
}

/// C precedence levels, loosest first (only their order matters).
const ASSIGN: u8 = 1;
const COND: u8 = 2;
const UNARY: u8 = 13;
const POSTFIX: u8 = 14;
const PRIMARY: u8 = 15;

fn binary_level(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 3,
        BinOp::And => 4,
        BinOp::BitOr => 5,
        BinOp::BitXor => 6,
        BinOp::BitAnd => 7,
        BinOp::Eq | BinOp::Ne => 8,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 9,
        BinOp::Shl | BinOp::Shr => 10,
        BinOp::Add | BinOp::Sub => 11,
        BinOp::Mul | BinOp::Div | BinOp::Rem => 12,
    }
}

fn level(expr: &Expr) -> u8 {
    match &expr.kind {
        ExprKind::Assign { .. } => ASSIGN,
        ExprKind::Cond(..) => COND,
        ExprKind::Binary(op, ..) => binary_level(*op),
        ExprKind::Unary(..) | ExprKind::Cast(..) => UNARY,
        ExprKind::Step { prefix: true, .. } => UNARY,
        ExprKind::Step { prefix: false, .. } | ExprKind::Index { .. } | ExprKind::Call { .. } => {
            POSTFIX
        }
        _ => PRIMARY,
    }
}

/// The OpenCL C name of a scalar type.
fn type_name(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "bool",
        Scalar::Int => "int",
        Scalar::UInt => "uint",
        Scalar::Long => "long",
        Scalar::ULong => "ulong",
        Scalar::Float => "float",
        Scalar::Double => "double",
    }
}

fn builtin_call(b: Builtin, axis: usize) -> String {
    let f = match b {
        Builtin::ThreadIdx => "get_local_id",
        Builtin::BlockIdx => "get_group_id",
        Builtin::BlockDim => "get_local_size",
        Builtin::GridDim => "get_num_groups",
    };
    format!("{f}({axis})")
}

impl Printer<'_> {
    fn line(&mut self, text: &str) {
        self.code.line(text);
    }

    /// Takes the variables of a function or kernel (`slots`) as the ones
    /// printed next, naming apart those whose names OpenCL C reserves: every
    /// CUDA name, macro and function is taken first, so a new name captures
    /// none of them.
    fn enter(&mut self, slots: &[crate::front::cuda::ast::SlotInfo]) {
        self.slots = slots.to_vec();
        let mut namer = Namer::for_language(Language::OpenCl);
        let known = slots
            .iter()
            .map(|slot| &slot.name)
            .chain(&self.macro_names)
            .chain(self.params.keys());
        for name in known {
            namer.take(name);
        }
        self.renamed.clear();
        for slot in slots {
            if namer.is_reserved(&slot.name) && !self.renamed.contains_key(&slot.name) {
                let name = namer.fresh(&slot.name);
                self.renamed.insert(slot.name.clone(), name);
            }
        }
    }

    /// A variable's name in the OpenCL C.
    fn ident(&self, name: &str) -> String {
        self.renamed
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_string())
    }

    fn scalar(&mut self, s: Scalar) -> &'static str {
        self.doubles |= s == Scalar::Double;
        type_name(s)
    }

    fn function(&mut self, f: &Function) -> Result<(), Diagnostic> {
        self.enter(&f.slots);
        self.ret = Some(f.ret);
        let ret = self.scalar(f.ret);
        let mut params = Vec::new();
        for param in &f.params {
            let ty = match param.ty {
                Type::Scalar(s) => self.scalar(s),
                _ => "int",
            };
            params.push(format!("{ty} {}", self.ident(&param.name)));
        }
        self.line(&format!("{ret} {}({})", f.name, params.join(", ")));
        self.line("{");
        self.code.indent += 1;
        for stmt in &f.body {
            self.stmt(stmt)?;
        }
        self.code.indent -= 1;
        self.line("}");
        Ok(())
    }

    fn kernel(&mut self, k: &Kernel) -> Result<(), Diagnostic> {
        self.enter(&k.slots);
        self.ret = None;
        let mut params = Vec::new();
        for param in &k.params {
            params.push(match param.ty {
                Type::Pointer(Scalar::Bool) => {
                    return Err(Diagnostic::error(
                        format!("kernel parameter `{}` points to `bool`", param.name),
                        param.span,
                    )
                    .with_help("OpenCL has no `bool` in global memory: use an `int` array"))
                }
                Type::Pointer(s) => format!(
                    "__global {}{}* {}{}",
                    if param.is_const { "const " } else { "" },
                    self.scalar(s),
                    if param.restrict { "restrict " } else { "" },
                    self.ident(&param.name)
                ),
                Type::Scalar(Scalar::Bool) => {
                    return Err(Diagnostic::error(
                        format!("kernel parameter `{}` is a `bool`", param.name),
                        param.span,
                    )
                    .with_help("OpenCL kernels take no `bool` arguments: pass an `int`"))
                }
                Type::Scalar(s) => format!(
                    "{}{} {}",
                    if param.is_const { "const " } else { "" },
                    self.scalar(s),
                    self.ident(&param.name)
                ),
                _ => format!("int {}", param.name),
            });
        }
        self.line(&format!("__kernel void {}(", k.name));
        self.code.indent += 1;
        let count = params.len();
        for (i, param) in params.iter().enumerate() {
            let end = if i + 1 == count { ")" } else { "," };
            self.line(&format!("{param}{end}"));
        }
        if count == 0 {
            self.line("void)");
        }
        self.code.indent -= 1;
        self.line("{");
        self.code.indent += 1;
        // Local arrays at kernel scope, whatever block declared them.
        let mut shared = Vec::new();
        collect_shared(&k.body, &mut shared);
        let mut names = HashSet::new();
        for stmt in shared {
            if let StmtKind::Shared {
                elem,
                name,
                dims,
                slot,
            } = &stmt.kind
            {
                if !names.insert(name.clone()) {
                    return Err(Diagnostic::error(
                        format!("a second shared array named `{name}`"),
                        stmt.span,
                    )
                    .with_help(
                        "OpenCL declares local arrays at kernel scope: give each its own name",
                    ));
                }
                let mut text = format!("__local {} {}", self.scalar(*elem), self.ident(name));
                if dims.is_empty() {
                    // `extern __shared__`: sized by the launch's dynamic bytes.
                    for n in k.slots.get(*slot).map(|s| s.dims.as_slice()).unwrap_or(&[]) {
                        let _ = write!(text, "[{n}]");
                    }
                }
                for dim in dims {
                    let d = self.expr(dim, PRIMARY)?;
                    let _ = write!(text, "[{d}]");
                }
                text.push(';');
                self.line(&text);
            }
        }
        for stmt in &k.body {
            self.stmt(stmt)?;
        }
        self.code.indent -= 1;
        self.line("}");
        Ok(())
    }

    /// A declaration without its `;` (also a `for` initialiser).
    fn declaration(&mut self, stmt: &Stmt) -> Result<String, Diagnostic> {
        match &stmt.kind {
            StmtKind::Local {
                ty,
                is_const,
                name,
                init,
                ..
            } => {
                let mut text = format!(
                    "{}{} {}",
                    if *is_const { "const " } else { "" },
                    self.scalar(*ty),
                    self.ident(name)
                );
                if let Some(init) = init {
                    let value = self.value_as(init, *ty)?;
                    let _ = write!(text, " = {value}");
                }
                Ok(text)
            }
            StmtKind::DeclList(items) => {
                let mut parts = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let text = self.declaration(item)?;
                    if i == 0 {
                        parts.push(text);
                    } else {
                        // The type is the list's; keep the declarator only.
                        let declarator = match &item.kind {
                            StmtKind::Local { name, .. } => {
                                let name = self.ident(name);
                                text[text.find(&format!(" {name}")).map_or(0, |at| at + 1)..]
                                    .to_string()
                            }
                            _ => text,
                        };
                        parts.push(declarator);
                    }
                }
                Ok(parts.join(", "))
            }
            StmtKind::Expr(expr) => self.expr(expr, 0),
            _ => Ok(String::new()),
        }
    }

    fn block(&mut self, stmt: &Stmt) -> Result<(), Diagnostic> {
        self.code.indent += 1;
        match &stmt.kind {
            StmtKind::Block(items) => {
                for item in items {
                    self.stmt(item)?;
                }
            }
            _ => self.stmt(stmt)?,
        }
        self.code.indent -= 1;
        Ok(())
    }

    fn stmt(&mut self, stmt: &Stmt) -> Result<(), Diagnostic> {
        match &stmt.kind {
            StmtKind::Local { .. } | StmtKind::DeclList(_) => {
                let text = self.declaration(stmt)?;
                self.line(&format!("{text};"));
            }
            StmtKind::Shared { .. } | StmtKind::Profile(_) => {}
            StmtKind::Expr(expr) => {
                let text = self.expr(expr, 0)?;
                self.line(&format!("{text};"));
            }
            StmtKind::If(cond, then, other) => {
                let c = self.expr(cond, 0)?;
                self.line(&format!("if ({c}) {{"));
                self.block(then)?;
                let mut other = other.as_deref();
                while let Some(next) = other {
                    if let StmtKind::If(cond, then, rest) = &next.kind {
                        let c = self.expr(cond, 0)?;
                        self.line(&format!("}} else if ({c}) {{"));
                        self.block(then)?;
                        other = rest.as_deref();
                    } else {
                        self.line("} else {");
                        self.block(next)?;
                        other = None;
                    }
                }
                self.line("}");
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                let init = match init {
                    Some(init) => self.declaration(init)?,
                    None => String::new(),
                };
                let cond = match cond {
                    Some(c) => format!(" {}", self.expr(c, 0)?),
                    None => String::new(),
                };
                let step = match step {
                    Some(s) => format!(" {}", self.expr(s, 0)?),
                    None => String::new(),
                };
                self.line(&format!("for ({init};{cond};{step}) {{"));
                self.block(body)?;
                self.line("}");
            }
            StmtKind::While(cond, body) => {
                let c = self.expr(cond, 0)?;
                self.line(&format!("while ({c}) {{"));
                self.block(body)?;
                self.line("}");
            }
            StmtKind::Block(items) => {
                self.line("{");
                self.code.indent += 1;
                for item in items {
                    self.stmt(item)?;
                }
                self.code.indent -= 1;
                self.line("}");
            }
            StmtKind::Sync => self.line("barrier(CLK_LOCAL_MEM_FENCE);"),
            StmtKind::Return => self.line("return;"),
            StmtKind::ReturnValue(value) => {
                let v = match self.ret {
                    Some(to) => self.value_as(value, to)?,
                    None => self.expr(value, 0)?,
                };
                self.line(&format!("return {v};"));
            }
            StmtKind::Break => self.line("break;"),
            StmtKind::Continue => self.line("continue;"),
        }
        Ok(())
    }

    /// The macro name an expression was written as, if it is one use of a macro.
    fn macro_use(&self, span: Span) -> Option<&str> {
        let text = self.source.get(span.range())?;
        self.macro_names.contains(text).then_some(text)
    }

    /// `expr` printed, in parentheses when it binds looser than `min`.
    fn expr(&mut self, expr: &Expr, min: u8) -> Result<String, Diagnostic> {
        if let Some(name) = self.macro_use(expr.span) {
            return Ok(name.to_string());
        }
        let text = self.expr_inner(expr)?;
        Ok(if level(expr) < min {
            format!("({text})")
        } else {
            text
        })
    }

    /// `expr` converted to `to` where C would not convert it the same way
    /// implicitly (arguments of overloaded OpenCL functions).
    fn converted(&mut self, expr: &Expr, to: Scalar) -> Result<String, Diagnostic> {
        if expr.scalar() == to {
            self.expr(expr, ASSIGN)
        } else {
            Ok(format!("({}){}", self.scalar(to), self.expr(expr, UNARY)?))
        }
    }

    /// `expr` as a value of type `to`, where C converts it implicitly (an
    /// initialiser, an assignment) or a cast does: a floating value bound for
    /// an integer type goes through OpenCL's saturating conversion, which
    /// computes what the emulator computes (truncation toward zero, the
    /// target's limits out of range, NaN 0); C's plain conversion is undefined
    /// there, and PoCL gives `INT_MIN` for `(int)3e9f`. Other conversions
    /// stay C's.
    fn value_as(&mut self, expr: &Expr, to: Scalar) -> Result<String, Diagnostic> {
        match saturating_conversion(expr.scalar(), to) {
            Some(function) => Ok(format!("{function}({})", self.expr(expr, ASSIGN)?)),
            None => self.expr(expr, ASSIGN),
        }
    }

    fn expr_inner(&mut self, expr: &Expr) -> Result<String, Diagnostic> {
        Ok(match &expr.kind {
            ExprKind::Int(v, s) => {
                let suffix = match s {
                    Scalar::UInt => "u",
                    Scalar::Long => "L",
                    Scalar::ULong => "UL",
                    _ => "",
                };
                format!("{v}{suffix}")
            }
            ExprKind::Float(v, s) => {
                let single = *s == Scalar::Float;
                self.doubles |= !single;
                floating(*v, single, Language::OpenCl)
            }
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Var { name, .. } => self.ident(name),
            ExprKind::Builtin(b, axis) => format!("(uint){}", builtin_call(*b, *axis)),
            ExprKind::Index { array, indices, .. } => {
                let mut text = self.ident(array);
                for index in indices {
                    let i = self.expr(index, 0)?;
                    let _ = write!(text, "[{i}]");
                }
                text
            }
            ExprKind::Unary(op, operand) => {
                let symbol = match op {
                    UnOp::Neg => "-",
                    UnOp::Plus => "+",
                    UnOp::Not => "!",
                    UnOp::BitNot => "~",
                };
                let inner = self.expr(operand, UNARY)?;
                // `- -x` must not become `--x`.
                if inner.starts_with(['-', '+']) {
                    format!("{symbol}({inner})")
                } else {
                    format!("{symbol}{inner}")
                }
            }
            ExprKind::Binary(op, a, b) => {
                let l = binary_level(*op);
                let x = self.expr(a, l)?;
                let y = self.expr(b, l + 1)?;
                format!("{x} {} {y}", op.symbol())
            }
            ExprKind::Cond(c, a, b) => {
                let c = self.expr(c, COND + 1)?;
                let a = self.expr(a, ASSIGN)?;
                // A nested `?:` in the else branch keeps its parentheses, for the reader.
                let b = self.expr(b, COND + 1)?;
                format!("{c} ? {a} : {b}")
            }
            ExprKind::Assign {
                op: None,
                target,
                value,
            } => {
                let t = self.expr(target, UNARY)?;
                let v = self.value_as(value, target.scalar())?;
                format!("{t} = {v}")
            }
            // `i += f` with an integer `i` and a floating `f` converts `i + f`
            // back to `i`'s type: saturating, as above, spelled out where the
            // target can be written twice (a target with side effects keeps
            // C's `+=` and its plain conversion).
            ExprKind::Assign {
                op: Some(op),
                target,
                value,
            } if value.scalar().is_float()
                && saturating_conversion(value.scalar(), target.scalar()).is_some()
                && without_side_effects(target) =>
            {
                let function = saturating_conversion(value.scalar(), target.scalar())
                    .expect("checked by the guard");
                let t = self.expr(target, UNARY)?;
                let l = binary_level(*op);
                let x = self.expr(target, l)?;
                let y = self.expr(value, l + 1)?;
                format!("{t} = {function}({x} {} {y})", op.symbol())
            }
            ExprKind::Assign { op, target, value } => {
                let t = self.expr(target, UNARY)?;
                let v = self.expr(value, ASSIGN)?;
                let symbol = op.map_or("=".to_string(), |op| format!("{}=", op.symbol()));
                format!("{t} {symbol} {v}")
            }
            ExprKind::Step {
                increment,
                prefix,
                target,
            } => {
                let t = self.expr(target, POSTFIX)?;
                let symbol = if *increment { "++" } else { "--" };
                if *prefix {
                    format!("{symbol}{t}")
                } else {
                    format!("{t}{symbol}")
                }
            }
            ExprKind::Call { name, args } => self.call(expr, name, args)?,
            ExprKind::Cast(to, operand) => {
                let ty = self.scalar(*to);
                match &operand.kind {
                    // `(int)threadIdx.x`: straight from the work-item function.
                    ExprKind::Builtin(b, axis)
                        if !to.is_float() && self.macro_use(operand.span).is_none() =>
                    {
                        format!("({ty}){}", builtin_call(*b, *axis))
                    }
                    _ if saturating_conversion(operand.scalar(), *to).is_some() => {
                        self.value_as(operand, *to)?
                    }
                    _ => format!("({ty}){}", self.expr(operand, UNARY)?),
                }
            }
        })
    }

    fn call(&mut self, expr: &Expr, name: &str, args: &[Expr]) -> Result<String, Diagnostic> {
        if SHUFFLES.contains(&name) {
            return Err(Diagnostic::error(
                format!("`{name}` has no OpenCL C counterpart here"),
                expr.span,
            )
            .with_help("the OpenCL printing takes kernels without warp shuffles (OpenCL 1.2 has no sub-group shuffles)"));
        }
        if !crate::front::cuda::sema::MATH
            .iter()
            .any(|(n, _, _)| *n == name)
        {
            // A `__device__` function: C converts the arguments to its parameters.
            let types = self.params.get(name).cloned().unwrap_or_default();
            let mut texts = Vec::new();
            for (i, arg) in args.iter().enumerate() {
                texts.push(match types.get(i).copied().flatten() {
                    Some(to) => self.value_as(arg, to)?,
                    None => self.expr(arg, ASSIGN)?,
                });
            }
            return Ok(format!("{name}({})", texts.join(", ")));
        }
        let types: Vec<Scalar> = args.iter().map(Expr::scalar).collect();
        let ty = math_operand_type(name, &types);
        let base = name
            .strip_suffix('f')
            .filter(|b| {
                crate::front::cuda::sema::MATH
                    .iter()
                    .any(|(n, _, _)| n == b)
            })
            .unwrap_or(name);
        let (function, result_cast) = match base {
            "min" | "max" if ty.is_float() => (format!("f{base}"), None),
            "abs" if ty.is_float() => ("fabs".to_string(), None),
            // OpenCL's integer `abs` returns the unsigned type.
            "abs" => ("abs".to_string(), Some(ty)),
            _ => (base.to_string(), None),
        };
        let mut texts = Vec::new();
        for arg in args {
            texts.push(self.converted(arg, ty)?);
        }
        let call = format!("{function}({})", texts.join(", "));
        Ok(match result_cast {
            Some(t) => format!("({}){call}", self.scalar(t)),
            None => call,
        })
    }
}

/// Every `__shared__` declaration in `stmts`, nested ones included.
fn collect_shared<'s>(stmts: &'s [Stmt], out: &mut Vec<&'s Stmt>) {
    for stmt in stmts {
        match &stmt.kind {
            StmtKind::Shared { .. } => out.push(stmt),
            StmtKind::Block(items) | StmtKind::DeclList(items) => collect_shared(items, out),
            StmtKind::If(_, then, other) => {
                collect_shared(std::slice::from_ref(then), out);
                if let Some(other) = other {
                    collect_shared(std::slice::from_ref(other), out);
                }
            }
            StmtKind::For { body, .. } | StmtKind::While(_, body) => {
                collect_shared(std::slice::from_ref(body), out)
            }
            _ => {}
        }
    }
}

/// OpenCL's built-in saturating, round-toward-zero conversion from `from` to
/// `to`, where a C conversion of some values is undefined (floating to
/// integer); `None` elsewhere. The generated SDSL kernels use `sdsl_f32_to_i32`
/// and the like (in the kernel IR's helpers) for the same meaning; the CUDA
/// subset has unsigned targets too, which OpenCL's built-ins cover.
fn saturating_conversion(from: Scalar, to: Scalar) -> Option<&'static str> {
    if !from.is_float() {
        return None;
    }
    match to {
        Scalar::Int => Some("convert_int_sat_rtz"),
        Scalar::UInt => Some("convert_uint_sat_rtz"),
        Scalar::Long => Some("convert_long_sat_rtz"),
        Scalar::ULong => Some("convert_ulong_sat_rtz"),
        Scalar::Bool | Scalar::Float | Scalar::Double => None,
    }
}

/// Whether evaluating `expr` twice is the same as once (no assignment, step or
/// call in it).
fn without_side_effects(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Int(..)
        | ExprKind::Float(..)
        | ExprKind::Bool(_)
        | ExprKind::Var { .. }
        | ExprKind::Builtin(..) => true,
        ExprKind::Index { indices, .. } => indices.iter().all(without_side_effects),
        ExprKind::Unary(_, a) | ExprKind::Cast(_, a) => without_side_effects(a),
        ExprKind::Binary(_, a, b) => without_side_effects(a) && without_side_effects(b),
        ExprKind::Cond(c, a, b) => {
            without_side_effects(c) && without_side_effects(a) && without_side_effects(b)
        }
        ExprKind::Assign { .. } | ExprKind::Step { .. } | ExprKind::Call { .. } => false,
    }
}
