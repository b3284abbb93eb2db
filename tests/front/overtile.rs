//! OverTile's own stencil language in `#pragma sdsl` regions: what each
//! construct lowers to (time levels, ranges, `let`s, the step count), and one
//! rendered diagnostic per kind of error. The programs are written here, in
//! the language as OverTile's grammar (`SSPGrammar.y`), lexer
//! (`SSPParser.cpp`) and documentation (`stencil_spec.rst`) define it.

use stencilc::front::{parse_program, parse_regions};
use stencilc::ir::{ExprKind, Program, ScalarType, Stmt};
use stencilc::source::SourceFile;

/// `body` as the only region of a host file, with `options` on its `begin` line.
fn host(options: &str, body: &str) -> String {
    format!("int main() {{\n#pragma sdsl begin {options}\n{body}\n#pragma sdsl end\n}}\n")
}

fn region(options: &str, body: &str) -> Program {
    let text = host(options, body);
    match parse_regions(SourceFile::new("host.c", text))
        .and_then(stencilc::analysis::checked_regions)
    {
        Ok(mut r) => r.remove(0).program,
        Err(d) => panic!("the region failed:\n{d}"),
    }
}

/// The rendered diagnostics of a region that must not compile.
fn errors(body: &str) -> String {
    let text = host("time_steps:T", body);
    match parse_regions(SourceFile::new("host.c", text))
        .and_then(stencilc::analysis::checked_regions)
    {
        Ok(r) => panic!("expected an error, but it compiled:\n{}", r[0].program),
        Err(d) => {
            let rendered = d.to_string();
            assert!(rendered.contains("host.c:"), "no location in:\n{rendered}");
            assert!(rendered.contains("help:"), "no help in:\n{rendered}");
            assert!(rendered.contains('^'), "no caret in:\n{rendered}");
            rendered
        }
    }
}

/// An expression that is one parameter: its name.
fn param_name(p: &Program, e: &stencilc::ir::Expr) -> String {
    match e.kind {
        ExprKind::Param(id) => p.params[id.0].name.clone(),
        ref other => panic!("not a parameter: {other:?}"),
    }
}

/// Every `(field name, time level)` the stencil `s` reads, in order.
fn reads(p: &Program, s: usize) -> Vec<(String, i32)> {
    let mut found = Vec::new();
    let stencil = &p.iterate.as_ref().unwrap().stencils[s];
    for part in &stencil.parts {
        for stmt in &part.body {
            let value = match stmt {
                Stmt::Store { value, .. } | Stmt::Assign { value, .. } => value,
                Stmt::For { .. } => panic!("no loops in OverTile programs"),
            };
            value.visit(&mut |e| {
                if let ExprKind::Load(r) = &e.kind {
                    found.push((p.fields[r.field.0].name.clone(), r.time));
                }
            });
        }
    }
    found
}

const HEAT: &str = "program heat is
grid 2
param k double
field T double inout
T = @[1:$-1][1:$-1] : T[0][0] + k*(T[-1][0] + T[1][0] + T[0][-1] + T[0][1] - 4*T[0][0])";

#[test]
fn a_heat_region_becomes_a_time_stepped_program() {
    let p = region("time_steps:Steps block:16,4 tile:1,2 time:2", HEAT);
    let params: Vec<(&str, ScalarType)> =
        p.params.iter().map(|q| (q.name.as_str(), q.ty)).collect();
    assert_eq!(
        params,
        [
            ("Dim_0", ScalarType::Int),
            ("Dim_1", ScalarType::Int),
            ("Steps", ScalarType::Int),
            ("k", ScalarType::Double)
        ]
    );
    // The written field has two levels; `time_steps:` became the iteration
    // count and left the hints, `time:` stays the time-tile size.
    assert_eq!((p.fields[0].time_lo, p.fields[0].time_hi), (0, 1));
    assert_eq!(p.hints.time_steps, None);
    assert_eq!(p.hints.time.as_ref().unwrap().text, "2");
    assert_eq!(p.hints.block_values().unwrap(), Some(vec![16, 4]));
    insta::assert_snapshot!(p.to_string());
}

#[test]
fn updates_read_the_newest_values_of_their_step() {
    let p = region(
        "time_steps:4",
        "program em is
grid 2
field Ex float inout
field Ey float inout
field Hz float inout
Ey = @[1:$][0:$] : Ey[0][0] - 0.5*(Hz[0][0] - Hz[-1][0])
Ex = @[0:$][1:$] : Ex[0][0] - 0.5*(Hz[0][0] - Hz[0][-1])
Hz = @[0:$-1][0:$-1] : Hz[0][0] - 0.7*(Ex[0][1] - Ex[0][0] + Ey[1][0] - Ey[0][0])",
    );
    let names: Vec<&str> = p
        .iterate
        .as_ref()
        .unwrap()
        .stencils
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["em_Ey", "em_Ex", "em_Hz"]);
    let at = |n: &str, t: i32| (n.to_string(), t);
    // Hz is written after Ey and Ex: they read its previous step's values.
    assert_eq!(reads(&p, 0), [at("Ey", 0), at("Hz", 0), at("Hz", 0)]);
    // Hz's update reads the Ex and Ey of this step, and its own old values.
    assert_eq!(
        reads(&p, 2),
        [
            at("Hz", 0),
            at("Ex", 1),
            at("Ex", 1),
            at("Ey", 1),
            at("Ey", 1)
        ]
    );
}

#[test]
fn the_first_range_holding_a_point_gives_its_value() {
    let body = "program edges is
grid 2
field u float inout
u = @[0:0][0:$] : 1.0
    @[1:$][0] : 2.0
    @[0:$][0:$] : 0.5*u[0][0]";
    let p = region("time_steps:1", body);
    let text = host("time_steps:1", body);
    let parts = &p.iterate.as_ref().unwrap().stencils[0].parts;
    let written: Vec<&str> = parts.iter().map(|part| &text[part.span.range()]).collect();
    // Run in this order, the first range's values are written last.
    assert_eq!(
        written,
        [
            "@[0:$][0:$] : 0.5*u[0][0]",
            "@[1:$][0] : 2.0",
            "@[0:0][0:$] : 1.0"
        ]
    );
    insta::assert_snapshot!(p.to_string());
}

#[test]
fn the_documented_older_update_form_is_the_same_update() {
    let older = region(
        "time_steps:3",
        "program j is\ngrid 2\nfield A float inout\nA[1:2][0:1] = 0.25*A[0][1]",
    );
    let newer = region(
        "time_steps:3",
        "program j is\ngrid 2\nfield A float inout\nA = @[1:$-2][0:$-1] : 0.25*A[0][1]",
    );
    assert_eq!(older.to_string(), newer.to_string());
    assert!(
        older.to_string().contains("[1:Dim_1 - 3][0:Dim_0 - 2]"),
        "{older}"
    );
}

#[test]
fn lets_become_locals_of_their_c_type() {
    let p = region(
        "time_steps:1",
        "program l is
grid 1
param s float
field A float inout
A = @[1:$-1] : let x = A[-1] + A[1] in let n = 2 in let A = x*s in (let x = A/n in x) + rsqrtf(x) + sqrt(A)",
    );
    let part = &p.iterate.as_ref().unwrap().stencils[0].parts[0];
    let locals: Vec<(&str, ScalarType)> = part
        .locals
        .iter()
        .map(|l| (l.name.as_str(), l.ty))
        .collect();
    // `A` and the inner `x` get names of their own: the field `A` and the
    // outer `x` stay visible where they are meant.
    assert_eq!(
        locals,
        [
            ("x", ScalarType::Float),
            ("n", ScalarType::Int),
            ("A_2", ScalarType::Float),
            ("x_2", ScalarType::Float)
        ]
    );
    assert_eq!(part.body.len(), 5, "four locals and the store");
    insta::assert_snapshot!(p.to_string());
}

#[test]
fn the_step_count_defaults_to_ts_and_takes_expressions() {
    let body = "program j is\ngrid 1\nfield A double inout\nA = @[1:$-1] : A[0]";
    let p = region("block:32", body);
    assert_eq!(p.params.last().unwrap().name, "TS");
    assert_eq!(param_name(&p, &p.iterate.as_ref().unwrap().max_iters), "TS");
    let p = region("time_steps:(N+1)*2", body);
    assert_eq!(p.params.last().unwrap().name, "N");
    assert!(p.to_string().contains("iterate (N + 1) * 2 {"), "{p}");
    let p = region("time_steps:Dim_0 time:4", body);
    assert_eq!(p.params.len(), 1, "the extent names no new parameter");
    assert_eq!(p.hints.time.as_ref().unwrap().text, "4");
    let p = region("time_steps:7", body);
    assert_eq!(p.params.len(), 1);
    assert!(p.to_string().contains("iterate 7 {"), "{p}");
}

#[test]
fn one_and_three_dimensional_grids_and_copy_semantics() {
    let p = region(
        "time_steps:2",
        "program j3 is
grid 3
field B double out
field A double in
field C double inout
B = @[1:$-1][1:$-1][1:$-1] : (A[0][0][-1] + A[0][0][1] + A[0][-1][0] + A[0][1][0] + A[-1][0][0] + A[1][0][0]) / 6 + Dim_2",
    );
    let dims: Vec<String> = p.grids[0].dims.iter().map(|d| param_name(&p, d)).collect();
    assert_eq!(dims, ["Dim_2", "Dim_1", "Dim_0"]);
    let levels: Vec<usize> = p.fields.iter().map(|f| f.levels()).collect();
    // Only the written field is time-stepped, whatever the copy semantic says.
    assert_eq!(levels, [2, 1, 1]);
    let p = region(
        "time_steps:2",
        "program j1 is\ngrid 1\nfield A float in\nA = @[0:$] : A[0] * 2",
    );
    assert_eq!(
        p.fields[0].levels(),
        2,
        "an `in` field may be updated, as in OverTile"
    );
    assert_eq!(p.grids[0].dims.len(), 1);
}

#[test]
fn sdsl_and_overtile_regions_share_a_host_file() {
    let text = format!(
        "{}{}",
        host("gpu(block:8)", "int n;\ngrid g[n];\nfloat griddata a on g at 0;\niterate 1 { stencil s { [0:n-1] : [0]a[0] = 1; } }"),
        host("time_steps:2", "  program p is grid 1 field b float inout b = @[0:$] : b[0] + 1")
    );
    let regions = parse_regions(SourceFile::new("two.c", text))
        .and_then(stencilc::analysis::checked_regions)
        .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(regions.len(), 2);
    assert_eq!(regions[0].program.params[0].name, "n");
    assert_eq!(regions[1].program.params[0].name, "Dim_0");
    assert_eq!(regions[1].program.name, "two_region1");
    // A whole file in OverTile's language is a program too.
    let p = parse_program(SourceFile::new(
        "p.sdsl",
        "program p is grid 1 field b float inout b = @[0:$] : b[0]",
    ))
    .and_then(stencilc::analysis::checked)
    .unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(p.params.last().unwrap().name, "TS");
    // `programs` is an SDSL name, not OverTile's keyword.
    assert!(!stencilc::front::overtile::starts_program("programs x;"));
    assert!(stencilc::front::overtile::starts_program(
        "\n  program p is"
    ));
}

#[test]
fn unknown_field_suggests_a_close_one() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 2\nfield Alpha float inout\nAlpha = @[1:$-1][1:$-1] : Alpah[0][0]"
    ));
}

#[test]
fn update_of_an_undeclared_field() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 1\nfield A float inout\nB = @[0:$] : A[0]"
    ));
}

#[test]
fn range_of_the_wrong_rank() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 2\nfield A float inout\nA = @[1:$-1] : A[0][0]"
    ));
}

#[test]
fn read_with_the_wrong_number_of_offsets() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 3\nfield A float inout\nA = @[1:$-1][1:$-1][1:$-1] : A[0][0]"
    ));
}

#[test]
fn read_before_the_first_index() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 2\nfield A float inout\nA = @[0:$][1:$-1] : A[-1][0]"
    ));
}

#[test]
fn read_past_the_last_index() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 2\nfield A float inout\nfield B float in\nA = @[1:$-1][1:$] : A[0][-1] + B[0][1]"
    ));
}

#[test]
fn range_outside_the_grid() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 2\nfield A float inout\nA = @[-1:$][0:$--1] : 1.0"
    ));
}

#[test]
fn field_updated_twice_in_a_step() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 1\nfield A float inout\nA = @[1:$-1] : A[0]\nA = @[1:$-1] : 2*A[0]"
    ));
}

#[test]
fn unary_minus_is_only_for_integers() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 1\nfield A float inout\nA = @[0:$] : -A[0]"
    ));
}

#[test]
fn comments_and_semicolons_are_not_overtile() {
    let text = errors("program p is\ngrid 1 // one axis\nfield A float inout\nA = @[0:$] : A[0]");
    assert!(text.contains("no comments"), "{text}");
    insta::assert_snapshot!(errors(
        "program p is\ngrid 1\nfield A float inout;\nA = @[0:$] : A[0]"
    ));
}

#[test]
fn program_header_with_equals() {
    insta::assert_snapshot!(errors(
        "program p =\ngrid 1\nfield A float inout\nA = @[0:$] : A[0]"
    ));
}

#[test]
fn unknown_function_such_as_a_host_macro() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 1\nfield A float inout\nA = @[0:$] : SQR(A[0]) + sqrtt(A[0])"
    ));
}

#[test]
fn call_with_the_wrong_number_of_arguments() {
    let text = errors("program p is\ngrid 1\nfield A float inout\nA = @[0:$] : pow(A[0])");
    assert!(
        text.contains("`pow` takes 2 argument(s), found 1"),
        "{text}"
    );
}

#[test]
fn unknown_name_and_field_without_offsets() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 2\nparam sigma double\nfield A float inout\nA = @[1:$-1][1:$-1] : let x = A in x*sigm"
    ));
}

#[test]
fn names_declared_twice_or_taken_by_the_extents() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 2\nparam c float\nparam Dim_1 float\nfield c double inout\nc = @[0:$][0:$] : c[0][0]"
    ));
}

#[test]
fn declarations_out_of_order() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 1\nfield A float inout\nparam c float\nA = @[0:$] : c*A[0]"
    ));
}

#[test]
fn grid_of_four_dimensions() {
    insta::assert_snapshot!(errors("program p is\ngrid 4\nfield A float inout"));
}

#[test]
fn program_without_updates() {
    insta::assert_snapshot!(errors("program p is\ngrid 2\nfield A float inout\n"));
}

#[test]
fn let_in_the_middle_of_an_expression() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 1\nfield A float inout\nA = @[0:$] : 1 + let x = A[0] in x"
    ));
}

#[test]
fn let_without_in() {
    let text = errors("program p is\ngrid 1\nfield A float inout\nA = @[0:$] : let x = A[0] x");
    assert!(text.contains("expected `in`"), "{text}");
}

#[test]
fn dollar_outside_a_range_and_range_in_a_read() {
    let text = errors("program p is\ngrid 1\nfield A float inout\nA = @[0:$] : A[$]");
    assert!(
        text.contains("`$` stands for the last index in ranges only"),
        "{text}"
    );
    let text = errors("program p is\ngrid 1\nfield A float inout\nA = @[0:$] : $ + A[0]");
    assert!(text.contains("`$` in an expression"), "{text}");
    let text = errors("program p is\ngrid 1\nfield A float inout\nA = @[0:$] : A[0:1]");
    assert!(text.contains("one offset per bracket"), "{text}");
}

#[test]
fn update_without_ranges() {
    insta::assert_snapshot!(errors(
        "program p is\ngrid 1\nfield A float inout\nA = A[0] * 2"
    ));
}

#[test]
fn step_count_naming_a_field_or_a_float_parameter() {
    let text = host(
        "time_steps:A+c",
        "program p is\ngrid 1\nparam c float\nfield A float inout\nA = @[0:$] : A[0]",
    );
    let rendered = parse_regions(SourceFile::new("host.c", text))
        .unwrap_err()
        .to_string();
    assert!(
        rendered.contains("the step count `A+c` names `A`, a field"),
        "{rendered}"
    );
    assert!(rendered.contains("names `c`, a parameter"), "{rendered}");
    assert!(
        rendered.contains("host.c:2:"),
        "points at the pragma line:\n{rendered}"
    );
}

#[test]
fn malformed_numbers() {
    let text = errors("program p is\ngrid 1\nfield A float inout\nA = @[0:$] : 1e+5*A[0]");
    assert!(text.contains("take no `+`"), "{text}");
    let text = errors("program p is\ngrid 1\nfield A float inout\nA = @[0:$] : 0.5f*A[0]");
    assert!(text.contains("take no suffix"), "{text}");
}
