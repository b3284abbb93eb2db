//! The CUDA-subset front-end: the CUDA C that stencil kernels are written in,
//! with KaniCUDA's annotations (`profile("...")`, `__opt__.a[i]`).
//!
//! The [`lexer`] (with the little preprocessor the subset has) makes tokens,
//! the [`parser`] the [`ast`], and [`sema`] resolves names and types and
//! enforces the subset's rules. The result, a checked [`Unit`], is what the
//! emulator (`exec::emu`) runs and the OpenCL printer prints. Every error is a
//! [`Diagnostic`](crate::diag::Diagnostic) at its place; nothing here panics on user input.
//!
//! A whole `.cu` file (host code, `#include`s, other kernels) goes through
//! [`parse_kernel_in_file`]: [`whole`] finds the kernel and hands the subset
//! only that kernel and what it uses, at their places in the file.

pub mod ast;
pub mod functions;
pub mod lexer;
pub mod parser;
pub mod sema;
pub mod whole;

use std::collections::HashSet;
use std::sync::Arc;

use crate::diag::{Diagnostic, Diagnostics};
use crate::source::{SourceFile, Span};

pub use ast::Unit;

/// Parses and checks a CUDA file; `defines` are `-D NAME=VALUE` pairs.
pub fn parse_unit(
    source: &Arc<SourceFile>,
    defines: &[(String, String)],
) -> Result<Unit, Diagnostics> {
    parse_inner(&source.text, defines, None).map_err(|d| Diagnostics::new(source.clone(), vec![d]))
}

/// How [`parse_kernel_in_file`] chooses and parses a kernel.
#[derive(Clone, Copy, Debug, Default)]
pub struct FileOptions<'a> {
    /// The `-D NAME=VALUE` macros.
    pub defines: &'a [(String, String)],
    /// The kernel named (`--kernel NAME`); else the only kernel of the file,
    /// or the only one with KaniCUDA's markers.
    pub kernel: Option<&'a str>,
    /// The bytes of dynamic shared memory the launch gives (the size of an
    /// `extern __shared__` array).
    pub shared_bytes: Option<u64>,
}

/// A kernel parsed out of a whole file.
#[derive(Clone, Debug)]
pub struct FileKernel {
    /// The checked kernel (spans are offsets in the user's file).
    pub kernel: ast::Kernel,
    /// The text it was parsed from: the file with all else blanked
    /// ([`whole::masked_text`]), what NVRTC and the OpenCL printer are given.
    pub masked: Arc<SourceFile>,
    /// Where the kernel is in the file.
    pub extent: whole::KernelExtent,
}

/// Why [`parse_kernel_in_file`] gave no kernel.
#[derive(Debug)]
pub enum FileError {
    /// An error in the kernel or what it uses, at its place in the file.
    Located(Diagnostics),
    /// No kernel could be chosen: what is wrong and what to do.
    Choice {
        /// What is wrong.
        message: String,
        /// What to do.
        help: String,
    },
}

/// Finds the kernel in a whole `.cu` file (see [`whole`]) and parses and
/// checks it alone: the file's other code is never parsed.
pub fn parse_kernel_in_file(
    source: &Arc<SourceFile>,
    options: &FileOptions,
) -> Result<FileKernel, FileError> {
    let extent = choose_kernel(source, options.kernel)?;
    let text = whole::masked_text(&source.text, &extent, options.defines);
    let masked = SourceFile::new(source.name.clone(), text);
    let located = |d: Diagnostic| FileError::Located(Diagnostics::new(source.clone(), vec![d]));
    let unit = parse_inner(&masked.text, options.defines, options.shared_bytes).map_err(located)?;
    let kernel = unit
        .kernels
        .into_iter()
        .find(|k| k.name == extent.name)
        .ok_or_else(|| {
            located(
                Diagnostic::error(
                    format!("kernel `{}` is not in the CUDA subset's form", extent.name),
                    extent.name_span,
                )
                .with_help("write it as `__global__ void NAME(params) { ... }`"),
            )
        })?;
    Ok(FileKernel {
        kernel,
        masked,
        extent,
    })
}

/// The kernel `name`, or the only one, or the only one with markers.
fn choose_kernel(
    source: &Arc<SourceFile>,
    name: Option<&str>,
) -> Result<whole::KernelExtent, FileError> {
    let all = whole::kernels(&source.text);
    let list = |all: &[whole::KernelExtent]| {
        all.iter()
            .map(|k| {
                let (line, _) = source.line_col(k.name_span.start as usize);
                format!(
                    "`{}` (line {line}{})",
                    k.name,
                    if k.marked { ", marked" } else { "" }
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    if all.is_empty() {
        return Err(FileError::Located(Diagnostics::new(
            source.clone(),
            vec![
                Diagnostic::error("no `__global__` kernel in the file", Span::new(0, 0))
                    .with_help("write a kernel, as in `__global__ void k(float* a) { ... }`"),
            ],
        )));
    }
    if let Some(name) = name {
        return all
            .iter()
            .find(|k| k.name == name)
            .cloned()
            .ok_or_else(|| FileError::Choice {
                message: format!(
                    "no kernel `{name}` in the file; its kernels: {}",
                    list(&all)
                ),
                help: "name one of them with `--kernel NAME`".to_string(),
            });
    }
    if all.len() == 1 {
        return Ok(all[0].clone());
    }
    let marked: Vec<&whole::KernelExtent> = all.iter().filter(|k| k.marked).collect();
    if marked.len() == 1 {
        return Ok(marked[0].clone());
    }
    Err(FileError::Choice {
        message: format!(
            "the file has {} kernels, {} of them with KaniCUDA's markers (`profile(\"...\")`, `__opt__`): {}",
            all.len(),
            if marked.is_empty() { "none".to_string() } else { marked.len().to_string() },
            list(&all)
        ),
        help: "name the kernel with `--kernel NAME`".to_string(),
    })
}

fn parse_inner(
    text: &str,
    defines: &[(String, String)],
    shared_bytes: Option<u64>,
) -> Result<Unit, Diagnostic> {
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
        sema::check(&mut kernel, &functions[..known], shared_bytes)?;
        for read in &mut kernel.marked {
            if let Some(written) = text.get(read.span.range()) {
                read.text = written.to_string();
            }
            if let Some(chosen) = &mut read.chosen {
                chosen.text = text
                    .get(chosen.span.range())
                    .unwrap_or_default()
                    .to_string();
                chosen.read_text = text
                    .get(chosen.read_span.range())
                    .unwrap_or_default()
                    .to_string();
            }
        }
        checked.push(kernel);
    }
    Ok(Unit { kernels: checked })
}

/// A `-D` value whose name is not a macro name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`-D {text}`: `{name}` is not a macro name; write `-D NAME=VALUE`, as in `-D BLOCK_X=32`")]
pub struct DefineError {
    /// The value as given.
    pub text: String,
    /// The name in it.
    pub name: String,
}

/// Splits `NAME=VALUE` (as `-D` takes it); a bare `NAME` defines it as `1`.
pub fn parse_define(text: &str) -> Result<(String, String), DefineError> {
    let (name, value) = text.split_once('=').unwrap_or((text, "1"));
    let valid = !name.is_empty()
        && !name.as_bytes()[0].is_ascii_digit()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !valid {
        return Err(DefineError {
            text: text.to_string(),
            name: name.to_string(),
        });
    }
    Ok((name.to_string(), value.to_string()))
}
