//! Front-end diagnostics: one rendered snapshot per kind of error (file:line:col,
//! the source line, a caret, and a help that says what to change).

use stencilc::front::parse_program;
use stencilc::source::SourceFile;

/// The program's rendered diagnostics; panics if it unexpectedly compiles.
fn errors(text: &str) -> String {
    let source = SourceFile::new("test.sdsl", text);
    match parse_program(source).and_then(stencilc::analysis::checked) {
        Ok(p) => panic!("expected an error, but the program compiled:\n{p}"),
        Err(d) => {
            let rendered = d.to_string();
            assert!(
                rendered.contains("test.sdsl:"),
                "no location in:\n{rendered}"
            );
            assert!(rendered.contains("help:"), "no help in:\n{rendered}");
            rendered
        }
    }
}

const JACOBI_DECLS: &str = "int n;\nint m;\ngrid g[n][m];\nfloat griddata a on g at 0,1;\n";

fn with_decls(rest: &str) -> String {
    format!("{JACOBI_DECLS}{rest}")
}

#[test]
fn syntax_error_says_what_was_expected() {
    insta::assert_snapshot!(errors("int n\ngrid g[n];\n"));
}

#[test]
fn syntax_error_in_expression() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [0:n-1][0:m-1] : [1]a[0][0] = [0]a[0][0] * ;\n  }\n}\n"
    )));
}

#[test]
fn unexpected_character() {
    insta::assert_snapshot!(errors("int n;\nint m @ 3;\n"));
}

#[test]
fn unknown_name_suggests_a_close_one() {
    insta::assert_snapshot!(errors(&with_decls(
        "double alpha;\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = alpah * [0]a[0][0];\n  }\n}\n"
    )));
}

#[test]
fn name_used_before_its_declaration() {
    insta::assert_snapshot!(errors("grid g[n];\nint n;\n"));
}

#[test]
fn wrong_number_of_offsets() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = [0]a[0][0][1];\n  }\n}\n"
    )));
}

#[test]
fn undeclared_time_offset_lists_the_declared_ones() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [2]a[0][0] = [0]a[0][0];\n  }\n}\n"
    )));
}

#[test]
fn figure_3_1_as_printed_has_a_non_literal_time_offset() {
    insta::assert_snapshot!(errors(
        "int dim0;
int dim1;

grid g [dim1][dim0];

float griddata a on g at 0,1;

pointfunction five_point_avg(p) {
    float ONE_FIFTH;
    ONE_FIFTH = 0.2f;
    [i]p[0][0] = ONE_FIFTH*([0]p[-1][0] + [0]p[0][-1] + [0]p[0][0] + [0]p[0][1] + [0]p[1][0]);
}

iterate 1000 {
    stencil jacobi_2d {
        [1:dim1-2][1:dim0-2] : five_point_avg(a);
    }
}
"
    ));
}

#[test]
fn float_spatial_offset_is_a_type_error() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = [0]a[0.5][0];\n  }\n}\n"
    )));
}

#[test]
fn remainder_on_float_is_a_type_error() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = [0]a[0][0] % 2;\n  }\n}\n"
    )));
}

#[test]
fn point_function_argument_count() {
    insta::assert_snapshot!(errors(&with_decls(
        "pointfunction f(p, q) {\n  [1]p[0][0] = [0]q[0][0];\n}\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : f(a);\n  }\n}\n"
    )));
}

#[test]
fn point_function_argument_must_be_griddata() {
    insta::assert_snapshot!(errors(&with_decls(
        "pointfunction f(p) {\n  [1]p[0][0] = [0]p[0][0];\n}\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : f(n);\n  }\n}\n"
    )));
}

#[test]
fn unknown_point_function_lists_the_available_ones() {
    insta::assert_snapshot!(errors(&with_decls(
        "pointfunction smooth(p) {\n  [1]p[0][0] = [0]p[0][0];\n}\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : blur(a);\n  }\n}\n"
    )));
}

#[test]
fn unknown_math_function() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = sqr([0]a[0][0]);\n  }\n}\n"
    )));
}

#[test]
fn math_function_argument_count() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = pow([0]a[0][0]);\n  }\n}\n"
    )));
}

#[test]
fn duplicate_names() {
    insta::assert_snapshot!(errors("int n;\ndouble n = 2.0;\n"));
}

#[test]
fn non_consecutive_time_offsets() {
    insta::assert_snapshot!(errors(
        "int n;\ngrid g[n];\nfloat griddata a on g at 0,2;\n"
    ));
}

#[test]
fn non_constant_loop_bounds() {
    insta::assert_snapshot!(errors(&with_decls(
        "pointfunction f(p) {\n  float s = 0.0f;\n  for i in 0..n {\n    s = s + [0]p[0][i];\n  }\n  [1]p[0][0] = s;\n}\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : f(a);\n  }\n}\n"
    )));
}

#[test]
fn table_shape_mismatch() {
    insta::assert_snapshot!(errors("const float K[2][3] = {{1, 2, 1}, {2, 4}};\n"));
}

#[test]
fn write_read_hazard_in_one_stencil() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = [1]a[0][-1] + [0]a[0][0];\n  }\n}\n"
    )));
}

#[test]
fn hazard_across_parts_of_one_stencil() {
    insta::assert_snapshot!(errors(&with_decls(
        "float griddata b on g at 0;\niterate 1 {\n  stencil s {\n    [0][0:m-1] : [0]b[0][0] = [0]a[0][0];\n    [1:n-1][0:m-1] : [1]a[0][0] = [0]b[-1][0];\n  }\n}\n"
    )));
}

#[test]
fn subset_rank_must_match_griddata() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2] : [1]a[0][0] = [0]a[0][0];\n  }\n}\n"
    )));
}

#[test]
fn unknown_boundary_mode() {
    insta::assert_snapshot!(errors(
        "int n;\ngrid g[n];\nfloat griddata a on g at 0 boundary clmap;\n"
    ));
}

/// A griddata whose declaration failed (unknown grid, unknown boundary mode,
/// time offsets not consecutive) and is used later, in a stencil and as a
/// point function's argument: its declaration's error alone, no panic and no
/// second error at the uses.
#[test]
fn a_failed_griddata_declaration_used_later() {
    insta::assert_snapshot!(errors(
        "int n;\ngrid g[n];\nfloat griddata a on g at 0,1;\nfloat griddata c on gx at 0;\n\
         float griddata d on g at 0,2;\nfloat griddata e on g at 0 boundary wrap;\n\
         pointfunction f(x, y) {\n  [1]y[0] = [0]x[0];\n}\n\
         iterate 2 {\n  stencil s {\n    [0:n-1] : [1]a[0] = [0]c[0] + [0]d[0] + [0]e[0];\n    \
         [0:n-1] : f(c, a);\n  }\n}\n"
    ));
}

#[test]
fn reduction_outside_the_check() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = total;\n  }\n  reduction total + {\n    [0:n-1][0:m-1] : [0]a[0][0];\n  }\n}\n"
    )));
}

#[test]
fn griddata_in_the_check() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = [0]a[0][0];\n  }\n} check ([0]a[0][0] < 1.0) every 1 iterations\n"
    )));
}

#[test]
fn assignment_to_a_parameter() {
    insta::assert_snapshot!(errors(&with_decls(
        "pointfunction f(p) {\n  n = 3;\n  [1]p[0][0] = [0]p[0][0];\n}\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : f(a);\n  }\n}\n"
    )));
}

#[test]
fn local_declared_twice() {
    insta::assert_snapshot!(errors(&with_decls(
        "pointfunction f(p) {\n  float x = 1.0f;\n  float x = 2.0f;\n  [1]p[0][0] = x;\n}\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : f(a);\n  }\n}\n"
    )));
}

#[test]
fn unterminated_comment() {
    insta::assert_snapshot!(errors("int n; /* parameters\n"));
}

#[test]
fn bad_literal_suffix() {
    insta::assert_snapshot!(errors("double c = 1.5q;\n"));
}

#[test]
fn table_index_out_of_bounds() {
    insta::assert_snapshot!(errors(&with_decls(
        "const float K[3] = {1, 2, 1};\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = K[3] * [0]a[0][0];\n  }\n}\n"
    )));
}

#[test]
fn local_variable_as_spatial_offset() {
    insta::assert_snapshot!(errors(&with_decls(
        "pointfunction f(p) {\n  int k = 1;\n  [1]p[0][0] = [0]p[0][k];\n}\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : f(a);\n  }\n}\n"
    )));
}

#[test]
fn recursive_point_function() {
    insta::assert_snapshot!(errors(&with_decls(
        "pointfunction f(p) {\n  f(p);\n}\niterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : f(a);\n  }\n}\n"
    )));
}

#[test]
fn two_iterates() {
    insta::assert_snapshot!(errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = [0]a[0][0];\n  }\n}\niterate 2 {\n}\n"
    )));
}

#[test]
fn grid_with_too_many_dimensions() {
    insta::assert_snapshot!(errors("int n;\ngrid g[n][n][n][n];\n"));
}

#[test]
fn several_errors_are_reported_together() {
    let text = errors(&with_decls(
        "iterate 1 {\n  stencil s {\n    [1:n-2][1:m-2] : [1]a[0][0] = foo + bar;\n  }\n}\n",
    ));
    assert!(text.contains("`foo`") && text.contains("`bar`"), "{text}");
}

#[test]
fn constant_division_by_zero() {
    insta::assert_snapshot!(errors("int c = 5 % (2 - 2);\n"));
}
