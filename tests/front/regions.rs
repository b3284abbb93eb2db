//! Embedded SDSL regions in C/C++ host files (`#pragma sdsl begin ... end`).

use stencilc::front::{parse_regions, Region};
use stencilc::source::SourceFile;

fn regions(name: &str, text: &str) -> Vec<Region> {
    match parse_regions(SourceFile::new(name, text)).and_then(stencilc::analysis::checked_regions) {
        Ok(r) => r,
        Err(d) => panic!("regions failed:\n{d}"),
    }
}

fn region_errors(text: &str) -> String {
    match parse_regions(SourceFile::new("host.c", text))
        .and_then(stencilc::analysis::checked_regions)
    {
        Ok(r) => panic!("expected an error, got {} region(s)", r.len()),
        Err(d) => d.to_string(),
    }
}

/// The guide's figure 4.1: a Jacobi stencil embedded in `main`.
const FIGURE_4_1: &str = "#define SIZE (256)

int main() {
    float a[SIZE][SIZE];
    int dim0 = SIZE;
    int dim1 = SIZE;
    float c1 = 0.2f;

    #pragma sdsl begin gpu(block:64,8 tile:1,8 time:10)
        int dim0;
        int dim1;
        float c1;

        grid g[dim1][dim0];
        float griddata a on g at 0,1;

        pointfunction five_pt(x) {
            [1]x[0][0] = c1*([0]x[-1][0] + [0]x[0][-1] + [0]x[0][0] + [0]x[0][1] + [0]x[1][0]);
        }

        iterate 1000 {
            stencil j5p {
                [1:dim1-2][1:dim0-2] : five_pt(a);
            }
        }
    #pragma sdsl end
    return sdsl_return_0;
}
";

#[test]
fn figure_4_1_host_file() {
    let found = regions("jacobi.sdsl.c", FIGURE_4_1);
    assert_eq!(found.len(), 1);
    let r = &found[0];
    assert_eq!(r.index, 0);
    assert_eq!(r.program.name, "jacobi");
    assert_eq!(r.program.hints.block_values().unwrap(), Some(vec![64, 8]));
    assert_eq!(r.program.hints.tile_values().unwrap(), Some(vec![1, 8]));
    assert_eq!(r.program.hints.time.as_ref().unwrap().text, "10");
    assert_eq!(r.program.hints.time_steps, None);
    assert_eq!(r.program.params.len(), 3);
    assert_eq!(r.program.fields[0].name, "a");
    // The region's span covers the two pragma lines and what is between them.
    let text = &FIGURE_4_1[r.span.range()];
    assert!(
        text.trim_start().starts_with("#pragma sdsl begin"),
        "{text}"
    );
    assert!(text.ends_with("#pragma sdsl end"), "{text}");
    // Spans point into the host file: the grid is declared on line 14.
    let grid_line = r
        .program
        .source
        .line_col(r.program.grids[0].span.start as usize)
        .0;
    assert_eq!(grid_line, 14);
}

#[test]
fn overtile_spelling_and_several_regions() {
    let host = "void f() {
#pragma sdsl begin time_steps:1 block:8,8,8 tile:1,3,1 time:1
int n;
grid g[n][n][n];
double griddata u on g at 0,1;
iterate 1 {
  stencil s {
    [1:n-2][1:n-2][1:n-2] : [1]u[0][0][0] = [0]u[0][0][1];
  }
}
#pragma sdsl end
}
void h() {
  #pragma sdsl begin
  int m;
  grid g[m];
  float griddata v on g at 0;
  #pragma sdsl end
}
";
    let found = regions("dir/two.cpp", host);
    assert_eq!(found.len(), 2);
    assert_eq!(found[0].program.name, "two_region0");
    assert_eq!(found[1].program.name, "two_region1");
    let hints = &found[0].program.hints;
    assert_eq!(hints.time_steps.as_ref().unwrap().text, "1");
    assert_eq!(hints.block_values().unwrap(), Some(vec![8, 8, 8]));
    assert_eq!(hints.tile_values().unwrap(), Some(vec![1, 3, 1]));
    assert_eq!(hints.time.as_ref().unwrap().text, "1");
    assert_eq!(found[1].index, 1);
    assert_eq!(found[1].program.hints.block, None);
    assert!(found[1].program.iterate.is_none());
    // An error inside a region reports the host file's line.
    let broken = host.replace("int m;", "int m");
    let text = region_errors(&broken);
    assert!(text.contains("host.c:16:"), "{text}");
}

#[test]
fn unterminated_region() {
    insta::assert_snapshot!(region_errors(
        "int main() {\n#pragma sdsl begin\nint n;\n}\n"
    ));
}

#[test]
fn misprinted_pragma_name() {
    insta::assert_snapshot!(region_errors(
        "int main() {\n  #pragma sds1 begin gpu(block:4,4,4 tile:4,4,4 time:1)\n  int n;\n  #pragma sds1 end\n}\n"
    ));
}

#[test]
fn bad_region_option() {
    insta::assert_snapshot!(region_errors(
        "#pragma sdsl begin gpu(block:64,8 tiles:1,8)\nint n;\n#pragma sdsl end\n"
    ));
}

#[test]
fn end_without_begin() {
    insta::assert_snapshot!(region_errors("int n;\n#pragma sdsl end\n"));
}

#[test]
fn file_without_regions() {
    let text = region_errors("int main() { return 0; }\n");
    assert!(text.contains("no SDSL region"), "{text}");
}

#[test]
fn other_pragmas_are_ignored() {
    let host =
        "#pragma once\n#pragma omp parallel for\n#pragma sdsl begin\nint n;\n#pragma sdsl end\n";
    assert_eq!(regions("x.c", host).len(), 1);
}
