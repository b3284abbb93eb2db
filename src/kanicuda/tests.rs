//! Tests of the whole synthesis on the example kernels: results verified,
//! barriers placed (and hoisted, or refused, where threads diverge), a wrong
//! read caught by the verification and named.

use std::sync::Arc;

use super::barriers::{plan, Why};
use super::*;
use crate::emu::args::parse_specs;
use crate::front::cuda::ast::Unit;
use crate::front::cuda::parse_unit;

const JACOBI: &str = include_str!("../../examples/cuda/jacobi2d_tile.cu");
const DIFFUSION: &str = include_str!("../../examples/cuda/diffusion.cu");

fn jacobi_defines() -> Vec<(String, String)> {
    vec![
        ("TILE_X".to_string(), "8".to_string()),
        ("TILE_Y".to_string(), "4".to_string()),
    ]
}

fn parse(text: &str, defines: &[(String, String)]) -> (Arc<SourceFile>, Unit) {
    let source = SourceFile::new("k.cu", text);
    let unit = parse_unit(&source, defines).unwrap_or_else(|d| panic!("{d}"));
    (source, unit)
}

fn jacobi_args(kernel: &Kernel) -> Vec<ArgSpec> {
    let args: Vec<String> = ["a=random:78", "b=zeros:78", "nx=13", "ny=6"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    parse_specs(kernel, &args).expect("arguments")
}

fn request<'a>(
    source: &'a Arc<SourceFile>,
    defines: &'a [(String, String)],
    kernel: &'a Kernel,
    args: &'a [ArgSpec],
) -> Request<'a> {
    Request {
        source,
        defines,
        kernel,
        launch: Launch {
            grid: [2, 2, 1],
            block: [8, 4, 1],
        },
        args,
        bounds: Bounds::default(),
        check: false,
        limits: Limits::default(),
        shared_bytes: None,
    }
}

fn located(failure: Failure, source: &SourceFile) -> String {
    match failure {
        Failure::Located(items) => items.iter().map(|d| d.render(source)).collect(),
        Failure::Plain { message, help } => panic!("not located: {message} ({help})"),
    }
}

#[test]
fn jacobi_reads_are_all_served_and_verified() {
    let defines = jacobi_defines();
    let (source, unit) = parse(JACOBI, &defines);
    let kernel = &unit.kernels[0];
    let args = jacobi_args(kernel);
    let s = synthesize(&request(&source, &defines, kernel, &args)).unwrap_or_else(|f| {
        panic!("{}", located(f, &source));
    });
    assert_eq!(s.accesses.len(), 4);
    assert!(s.accesses.iter().all(AccessResult::served));
    assert!(s.barriers.is_empty(), "{:?}", s.barriers);
    assert!(!s.text.contains("__opt__") && !s.text.contains("profile("));
    assert!(
        s.text.contains("tile[threadIdx.y][threadIdx.x - 1]"),
        "{}",
        s.text
    );
    assert!(s.compared.iter().any(|c| !c.profiled));
    // Two block shapes and two grid sizes at least.
    let mut blocks: Vec<_> = s.profiled.iter().map(|l| l.block).collect();
    blocks.dedup();
    assert!(blocks.len() >= 2);
    assert!(s.profiled.iter().any(|l| l.grid != [2, 2, 1]));
}

#[test]
fn a_wrong_read_fails_verification_and_is_named() {
    let defines = jacobi_defines();
    let (source, unit) = parse(JACOBI, &defines);
    let kernel = &unit.kernels[0];
    let args = jacobi_args(kernel);
    let req = request(&source, &defines, kernel, &args);
    let mut s = synthesize(&req).unwrap_or_else(|f| panic!("{}", located(f, &source)));
    // The west read served from the east slot.
    s.accesses[0].replacement = s.accesses[0].replacement.replace("- 1]", "+ 1]");
    let served: Vec<usize> = (0..4).collect();
    let (text, _) = rewritten(&req, &s.accesses, &served).expect("rewrites");
    let (wrong, _) = parse_rewritten(&req, &text).expect("parses");
    let launches = [(req.launch, 5, true)];
    let failure = verify(
        &req,
        &s.accesses,
        (&wrong, &text),
        &launches,
        &mut Vec::new(),
    )
    .expect_err("a wrong read is caught");
    let shown = located(failure, &source);
    assert!(
        shown.contains("fails verification on grid 2,2 x block 8,4"),
        "{shown}"
    );
    assert!(shown.contains("k.cu:20:"), "{shown}");
    assert!(shown.contains("^^^"), "{shown}");
}

#[test]
fn the_slides_kernel_gets_a_barrier_after_the_store_and_one_at_the_loop_end() {
    let defines = vec![
        ("BLOCK_X".to_string(), "4".to_string()),
        ("BLOCK_Y".to_string(), "4".to_string()),
    ];
    let (_, unit) = parse(DIFFUSION, &defines);
    let kernel = &unit.kernels[0];
    let insertions = plan(kernel, DIFFUSION, &[0, 1, 2, 3]).expect("uniform places");
    let whys: Vec<Why> = insertions.iter().map(|i| i.why).collect();
    assert_eq!(whys, [Why::AfterStore, Why::LoopEnd]);
    let store = DIFFUSION.find("sb[csb] = in[c];").unwrap();
    let line_end = store + DIFFUSION[store..].find('\n').unwrap();
    assert_eq!(insertions[0].offset, line_end);
    assert_eq!(insertions[0].text, "\n        __syncthreads();");
    let last = DIFFUSION.find("c += xy;").unwrap();
    assert_eq!(
        insertions[1].offset,
        last + DIFFUSION[last..].find('\n').unwrap()
    );
    assert!(insertions.iter().all(|i| i.hoisted.is_none()));
    // A read left to global memory needs none.
    assert!(plan(kernel, DIFFUSION, &[]).expect("nothing").is_empty());
}

#[test]
fn a_store_under_a_divergent_if_gets_its_barrier_after_the_if() {
    let text = JACOBI.replacen("    __syncthreads();\n", "", 1);
    let defines = jacobi_defines();
    let (source, unit) = parse(&text, &defines);
    let kernel = &unit.kernels[0];
    let args = jacobi_args(kernel);
    let s = synthesize(&request(&source, &defines, kernel, &args))
        .unwrap_or_else(|f| panic!("{}", located(f, &source)));
    assert_eq!(s.barriers.len(), 1, "{:?}", s.barriers);
    let b = &s.barriers[0];
    let hoisted = b.hoisted.as_deref().unwrap_or_default();
    assert!(hoisted.contains("its threads diverge"), "{hoisted}");
    let lines: Vec<&str> = s.text.lines().collect();
    assert_eq!(lines[b.line - 1].trim(), "__syncthreads();");
    assert_eq!(
        lines[b.line - 2].trim(),
        "}",
        "after the `if (inside)` block"
    );
}

#[test]
fn store_and_read_under_one_divergent_if_have_no_uniform_barrier() {
    let text = JACOBI.replacen("    }\n    __syncthreads();\n    if (inside) {\n", "", 1);
    assert_ne!(text, JACOBI);
    let defines = jacobi_defines();
    let (source, unit) = parse(&text, &defines);
    let kernel = &unit.kernels[0];
    let diag = plan(kernel, &text, &[0]).expect_err("no uniform place");
    let shown = diag.render(&source);
    assert!(shown.contains("no uniform place"), "{shown}");
    assert!(shown.contains("`if` at line 11"), "{shown}");
}
