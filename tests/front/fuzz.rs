//! Property test: no input text makes the front-end panic — random strings,
//! token soups from the SDSL vocabulary and from OverTile's, and mutations of
//! the examples and of programs in OverTile's language — nor
//! the back-ends on what the front-end accepts: the C writer (stand-alone and
//! embedded in its host), and lowering under the default schedule (and with
//! fusion) with the CUDA and OpenCL printers. Errors are fine; panics are not.

use crate::common;

use proptest::prelude::*;
use stencilc::back::c::{self, embed};
use stencilc::driver::emit::{emit, GpuTarget};
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

/// The words and symbols of OverTile's stencil language, and a few that are not.
const OVERTILE_VOCABULARY: &[&str] = &[
    "program",
    "is",
    "grid",
    "param",
    "field",
    "float",
    "double",
    "in",
    "out",
    "inout",
    "let",
    "@",
    "$",
    "$-1",
    "$--1",
    "[",
    "]",
    ":",
    "=",
    "(",
    ")",
    ",",
    "+",
    "-",
    "*",
    "/",
    "A",
    "B",
    "x",
    "Dim_0",
    "Dim_2",
    "TS",
    "sqrt",
    "rsqrtf",
    "pow",
    "0",
    "1",
    "-1",
    "2",
    "0.2",
    "1e-5",
    "1.2.3",
    "99999999999999999999",
    "\n",
    "//",
    ";",
    "_",
    "#pragma sdsl begin time_steps:2",
    "#pragma sdsl end",
];

/// Programs in OverTile's language (1-D to 3-D, several updates, `let`s,
/// parameters, several ranges, the older update form); `front_end_survives`
/// runs each as a file and as a region.
const OVERTILE_PROGRAMS: &[&str] = &[
    "program j2d is\ngrid 2\nfield A float inout\nA = @[1:$-1][1:$-1] : 0.2*(A[0][-1]+A[0][0]+A[0][1]+A[1][0]+A[-1][0])\n",
    "program f is\ngrid 2\nfield Ex float inout\nfield Hz float inout\nEx = @[0:$][1:$] : Ex[0][0] - 0.5*(Hz[0][0] - Hz[0][-1])\nHz = @[0:$-1][0:$-1] : Hz[0][0] - 0.7*(Ex[0][1] - Ex[0][0])\n",
    "program r is\ngrid 3\nparam s double\nfield U double inout\nfield F double in\nU[1:1][1:1][1:1] = let a = U[0][0][1] - U[0][0][0] in let b = rsqrt(1e-20 + a*a) in (U[0][0][0] + s*b*F[0][0][0]) / (1.0 + pow(b, 2))\n",
    "program e is\ngrid 1\nfield u float inout\nfield v float out\nv = @[0:$] : 2*u[0]\nu = @[0] : 1.0 @[1:$-1] : (let m = v[-1] + v[1] in m/2) @[$] : -1\n",
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
    fn overtile_token_soup(
        tokens in prop::collection::vec(prop::sample::select(OVERTILE_VOCABULARY), 0..120),
        header in any::<bool>(),
    ) {
        let soup = tokens.join(" ");
        let text = if header { format!("program p is grid 2 {soup}") } else { soup };
        front_end_survives(&text);
    }

    #[test]
    fn mutated_overtile_programs(
        which in 0usize..OVERTILE_PROGRAMS.len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..4, prop::sample::select(OVERTILE_VOCABULARY)), 1..6),
    ) {
        let mut text = OVERTILE_PROGRAMS[which].to_string();
        for (at, kind, token) in edits {
            let pos = at.index(text.len() + 1);
            match kind {
                0 => text.replace_range(pos..(pos + 3).min(text.len()), ""),
                1 | 2 => text.insert_str(pos, &format!(" {token} ")),
                _ => text.truncate(pos),
            }
        }
        front_end_survives(&text);
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

#[test]
fn deep_overtile_programs_are_diagnostics_not_stack_overflows() {
    let region = |value: &str| {
        format!("#pragma sdsl begin\nprogram p is\ngrid 1\nfield A float inout\nA = @[1:$-1] : {value}\n#pragma sdsl end\n")
    };
    let fails = |value: &str| {
        parse_regions(SourceFile::new("deep.c", region(value)))
            .and_then(stencilc::analysis::checked_regions)
            .is_err()
    };
    assert!(fails(&format!(
        "{}A[0]{}",
        "(".repeat(5000),
        ")".repeat(5000)
    )));
    assert!(fails(&format!("A[0]{}", " + 1".repeat(100_000))));
    assert!(fails(&format!(
        "{}A[0]{}",
        "sqrt(".repeat(5000),
        ")".repeat(5000)
    )));
    assert!(fails(&format!(
        "{}A[0]{}",
        "(let x = ".repeat(5000),
        " in x)".repeat(5000)
    )));
    // A long chain of `let`s nests nothing: it compiles, and so do moderate depths.
    let lets: String = (0..2000)
        .map(|i| format!("let x{i} = A[0] + {i} in "))
        .collect();
    assert!(!fails(&format!("{lets}x1999")));
    assert!(!fails(&format!(
        "{}A[0]{}",
        "(1 + ".repeat(90),
        ")".repeat(90)
    )));
    for text in [
        "#pragma sdsl begin\nprogram p is\ngrid 1\nfield A float inout\nA = @[9223372036854775807:$] : A[-9223372036854775807]\n#pragma sdsl end\n",
        "#pragma sdsl begin time_steps:2147483647\nprogram p is\ngrid 1\nfield A float inout\nA = @[0:$-9223372036854775807] : A[0]\n#pragma sdsl end\n",
        "#pragma sdsl begin\nprogram p is\ngrid 0\n#pragma sdsl end\n",
        "#pragma sdsl begin\nprogram\n#pragma sdsl end\n",
        "#pragma sdsl begin\nprogram p is grid 3 field A double inout A = @[0:$][0:$][0:$] : -9223372036854775808 / -1\n#pragma sdsl end\n",
    ] {
        front_end_survives(text);
    }
    for program in OVERTILE_PROGRAMS {
        let host = format!(
            "#pragma sdsl begin time_steps:3 block:8,8,8 time:2\n{program}#pragma sdsl end\n"
        );
        assert!(
            parse_regions(SourceFile::new("ok.c", host))
                .and_then(stencilc::analysis::checked_regions)
                .is_ok(),
            "{program}"
        );
        front_end_survives(program);
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
