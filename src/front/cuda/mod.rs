//! The CUDA-subset front-end: the CUDA C that stencil kernels are written in,
//! with KaniCUDA's annotations (`profile("...")`, `__opt__.a[i]`).
//!
//! The [`lexer`] (with the little preprocessor the subset has) makes tokens,
//! the [`parser`] the [`ast`], and [`sema`] resolves names and types and
//! enforces the subset's rules. The result, a checked [`Unit`], is what the
//! emulator (`exec::emu`) runs and the OpenCL printer prints. Every error is a
//! [`Diagnostic`](crate::diag::Diagnostic) at its place; nothing here panics on user input.

pub mod ast;
pub mod functions;
pub mod lexer;
pub mod opencl;
pub mod parser;
pub mod sema;

use std::collections::HashSet;
use std::sync::Arc;

use crate::diag::{Diagnostic, Diagnostics};
use crate::source::SourceFile;

pub use ast::Unit;

/// Parses and checks a CUDA file; `defines` are `-D NAME=VALUE` pairs.
pub fn parse_unit(
    source: &Arc<SourceFile>,
    defines: &[(String, String)],
) -> Result<Unit, Diagnostics> {
    parse_inner(&source.text, defines).map_err(|d| Diagnostics::new(source.clone(), vec![d]))
}

fn parse_inner(text: &str, defines: &[(String, String)]) -> Result<Unit, Diagnostic> {
    let tokens = lexer::lex(text, defines)?;
    let mut functions: Vec<ast::Function> = Vec::new();
    let mut kernels = Vec::new();
    for item in parser::parse(&tokens)? {
        match item {
            parser::Item::Function(mut function) => {
                sema::check_function(&mut function, &functions)?;
                functions.push(function);
            }
            parser::Item::Kernel(kernel) => kernels.push((kernel, functions.len())),
        }
    }
    if kernels.is_empty() {
        return Err(Diagnostic::error(
            "no `__global__` kernel in the file",
            crate::source::Span::new(0, 0),
        )
        .with_help("write a kernel, as in `__global__ void k(float* a) { ... }`"));
    }
    let mut names = HashSet::new();
    let mut checked = Vec::new();
    for (mut kernel, known) in kernels {
        if !names.insert(kernel.name.clone()) {
            return Err(Diagnostic::error(
                format!("kernel `{}` is defined twice", kernel.name),
                kernel.name_span,
            )
            .with_help("rename one of them"));
        }
        sema::check(&mut kernel, &functions[..known])?;
        for read in &mut kernel.marked {
            if let Some(written) = text.get(read.span.range()) {
                read.text = written.to_string();
            }
        }
        checked.push(kernel);
    }
    Ok(Unit { kernels: checked })
}

/// Splits `NAME=VALUE` (as `-D` takes it); a bare `NAME` defines it as `1`.
pub fn parse_define(text: &str) -> Result<(String, String), String> {
    let (name, value) = text.split_once('=').unwrap_or((text, "1"));
    let valid = !name.is_empty()
        && !name.as_bytes()[0].is_ascii_digit()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !valid {
        return Err(format!(
            "`-D {text}`: `{name}` is not a macro name; write `-D NAME=VALUE`, as in `-D BLOCK_X=32`"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}
