//! Property test: no input text makes the front-end panic — random strings,
//! token soups from the SDSL vocabulary, and mutations of the examples — nor
//! the back-ends on what the front-end accepts: the C writer (stand-alone and
//! embedded in its host), and lowering under the default schedule (and with
//! fusion) with the CUDA and OpenCL printers. Errors are fine; panics are not.

use crate::common;

use proptest::prelude::*;
use stencilc::back::c::{self, embed};
use stencilc::back::gpu_emit::{emit, GpuTarget};
use stencilc::front::{parse_program, parse_regions};
use stencilc::ir::Program;
use stencilc::schedule::ScheduleRequest;
use stencilc::source::SourceFile;

const VOCABULARY: &[&str] = &[
    "int",
    "long",
    "float",
    "double",
    "const",
    "grid",
    "griddata",
    "on",
    "at",
    "boundary",
    "clamp",
    "mirror",
    "pointfunction",
    "iterate",
    "stencil",
    "reduction",
    "check",
    "every",
    "iterations",
    "for",
    "in",
    "max",
    "min",
    "sqrt",
    "fabsf",
    "pow",
    "a",
    "g",
    "n",
    "m",
    "p",
    "K",
    "i",
    "0",
    "1",
    "-1",
    "2",
    "1L",
    "0.2f",
    ".5",
    "1.0E-20",
    "3000000000",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ";",
    ",",
    ":",
    "?",
    "..",
    "=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "!",
    "//",
    "/*",
    "*/",
    "\n",
    "#pragma sdsl begin",
    "#pragma sdsl end",
    "gpu(block:4,4",
    "time:1",
];

fn examples() -> Vec<String> {
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(common::examples_dir()).expect("examples dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "sdsl") {
            texts.push(std::fs::read_to_string(path).expect("read"));
        }
    }
    texts.sort();
    texts
}

/// Runs both entry points, and the back-ends on every program they accept;
/// any panic fails the property.
fn front_end_survives(text: &str) {
    if let Ok(program) =
        parse_program(SourceFile::new("fuzz.sdsl", text)).and_then(stencilc::analysis::checked)
    {
        back_ends_survive(&program);
    }
    host_survives(text);
    host_survives(&format!("#pragma sdsl begin\n{text}\n#pragma sdsl end\n"));
}

/// The regions of a C host file, and `stencilc compile`'s rewriting of it.
fn host_survives(text: &str) {
    let host = SourceFile::new("fuzz.c", text);
    if let Ok(regions) = parse_regions(host.clone()).and_then(stencilc::analysis::checked_regions) {
        for region in &regions {
            back_ends_survive(&region.program);
        }
        for extern_c in [false, true] {
            let _ = embed::rewrite_host(&host, &regions, embed::EmbedOptions { extern_c });
        }
    }
}

/// `emit --target c|cuda|opencl` on a program the front-end accepted: the GPU
/// targets lower it under the default schedule (its pragma hints applied) and
/// with fusion asked for.
fn back_ends_survive(program: &Program) {
    let unit = c::emit_program(program);
    assert!(unit.source.contains(&unit.run_symbol));
    let fused = ScheduleRequest {
        fuse: true,
        ..ScheduleRequest::default()
    };
    for request in [ScheduleRequest::default(), fused] {
        for target in [GpuTarget::Cuda, GpuTarget::OpenCl] {
            let _ = emit(program, &request, target);
        }
    }
}

proptest! {
    #![proptest_config(common::proptest_config(common::gen::cases(256)))]

    #[test]
    fn random_strings(text in "\\PC{0,200}") {
        front_end_survives(&text);
    }

    #[test]
    fn token_soup(tokens in prop::collection::vec(prop::sample::select(VOCABULARY), 0..120)) {
        front_end_survives(&tokens.join(" "));
    }

    #[test]
    fn mutated_examples(
        which in 0usize..6,
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..4, prop::sample::select(VOCABULARY)), 1..6),
    ) {
        let all = examples();
        let mut text = all[which % all.len()].clone();
        for (at, kind, token) in edits {
            let mut pos = at.index(text.len() + 1);
            while !text.is_char_boundary(pos) {
                pos -= 1;
            }
            match kind {
                // Delete a short stretch.
                0 => {
                    let mut end = (pos + 3).min(text.len());
                    while !text.is_char_boundary(end) {
                        end += 1;
                    }
                    text.replace_range(pos..end, "");
                }
                // Insert a token.
                1 | 2 => text.insert_str(pos, &format!(" {token} ")),
                // Cut the text here.
                _ => text.truncate(pos),
            }
        }
        front_end_survives(&text);
    }
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_stack_overflow() {
    let deep = format!("double c = {}1{};", "(".repeat(5000), ")".repeat(5000));
    assert!(parse_program(SourceFile::new("deep.sdsl", deep))
        .and_then(stencilc::analysis::checked)
        .is_err());
    let chain = format!("double c = 1{};", " + 1".repeat(100_000));
    assert!(parse_program(SourceFile::new("deep.sdsl", chain))
        .and_then(stencilc::analysis::checked)
        .is_err());
    let nested_chains = format!(
        "double c = {}1{};",
        "(1 + 1 + 1 + 1 + ".repeat(99),
        ")".repeat(99)
    );
    // Moderately deep programs still compile.
    assert!(parse_program(SourceFile::new("deep.sdsl", nested_chains))
        .and_then(stencilc::analysis::checked)
        .is_ok());
    let minus = format!("double c = {}1;", "-".repeat(5000));
    assert!(parse_program(SourceFile::new("deep.sdsl", minus))
        .and_then(stencilc::analysis::checked)
        .is_err());
    let braces = format!(
        "const float K[1] = {}1{};",
        "{".repeat(5000),
        "}".repeat(5000)
    );
    assert!(parse_program(SourceFile::new("deep.sdsl", braces))
        .and_then(stencilc::analysis::checked)
        .is_err());
    let loops = format!(
        "int n; grid g[n]; float griddata a on g at 0;\npointfunction f(p) {{ {} [0]p[0] = 1; {} }}\niterate 1 {{ stencil s {{ [0:n-1] : f(a); }} }}",
        "for i in 0..1 {".repeat(3000),
        "}".repeat(3000)
    );
    assert!(parse_program(SourceFile::new("deep.sdsl", loops))
        .and_then(stencilc::analysis::checked)
        .is_err());
}

#[test]
fn extreme_values_do_not_panic() {
    for text in [
        "const int K[2147483647][2147483647] = {1};",
        "const int K[0] = {};",
        "int n; grid g[n]; float griddata a on g at 9223372036854775807;",
        "int n; grid g[n]; float griddata a on g at -9223372036854775807, 0;",
        "int c = -2147483648 / -1;",
        "int c = 5 % 0;",
        "const float K[2] = {1 / 0, 1};",
        "int n; grid g[n]; float griddata a on g at 0,1; iterate 1 { stencil s { [0:n-1] : [1]a[9223372036854775807] = [0]a[0]; } }",
        "int n; grid g[n]; float griddata a on g at 0,1; pointfunction f(p) { for i in -2147483648..2147483647 { [1]p[i] = 1; } } iterate 1 { stencil s { [0:n-1] : f(a); } }",
    ] {
        front_end_survives(text);
    }
}

/// The back-end half of the property on inputs known to reach it: every example,
/// stand-alone and as a region of a C host.
#[test]
fn every_example_goes_through_every_back_end() {
    for text in examples() {
        let program = parse_program(SourceFile::new("example.sdsl", text.as_str()))
            .unwrap_or_else(|d| panic!("{d}"));
        back_ends_survive(&program);
        front_end_survives(&text);
    }
}
