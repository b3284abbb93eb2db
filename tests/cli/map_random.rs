//! Random loop nests through `stencilc map --target c`, against the original
//! program: the legality of every parallel loop the analysis finds, and of
//! every transformation it applies (fission, fusion, interchange, ...), is
//! checked by running the code, not by reading the report.
//!
//! A program is one or two nests of one to three loops over two 2-D arrays,
//! each statement an array element written from others at random affine
//! subscripts (coefficients -1 to 2 per loop variable), so that flow, anti and
//! output dependences of every distance and direction occur, and loops that
//! carry none; now and then a statement between the loops, before the
//! innermost one or after it (reading its variable past the loop), and a
//! write whose first subscript goes through a local (`int m = ...;`, affine
//! or not). Now and then the nests run twice inside a loop whose body first
//! reads the loop variables they leave (so that a variable is live on the
//! next trip only). Then:
//!
//! - the mapped program, under OpenMP on three threads, prints what the
//!   original prints, bit for bit (a wrong rewrite shows; a race may not);
//! - for every `#pragma omp parallel for` of the mapped program, the program
//!   with that site's parallel loops run **backwards** (each alone, and all
//!   together), sequentially, prints the same. A loop whose iterations are
//!   independent gives the same result in any order; one that carries a
//!   dependence does not, since every statement adds a constant to what it
//!   reads. This makes a wrongly parallel loop a deterministic failure.

use std::path::Path;
use std::process::Command;

use proptest::prelude::*;

use super::common;
use super::map::{build_and_run, cc_available, map, opencl_available, opencl_headers_available};
use super::map_lift::{compile_host_part, cuda_include_dirs, kernel_units, lift_against_c, lifted};

/// The arrays' edge, and the offset added to every subscript: loop variables
/// stay within `[0, MAX_TRIP + 2]` (the upper end read after a loop), so a
/// subscript stays in `[0, 76]`.
const EDGE: i64 = 80;
const OFFSET: i64 = 26;
const MAX_TRIP: i64 = 6;
const VARS: [&str; 3] = ["i", "j", "k"];
const ARRAYS: [&str; 2] = ["A", "B"];

/// Every program here is built at `-O1`. gcc 12.2's loop vectorizer (on at
/// `-O2`) miscompiles some of them: `for i < 4 { for j < 3 { A[26][i + j + 26]
/// = 0.5 * B[j + 26][i + 26] + 1.0; } }` leaves `A[26][27]` from iteration
/// `(0, 1)` rather than the later `(1, 0)` (right at `-O0`, `-O1`, `-O3`,
/// with `-fno-tree-loop-vectorize` and with Clang 15; found by this test, its
/// seed kept beside it). The oracle must not be the compiler's bug.
const OPT: &str = "-O1";

/// `c0 * v0 + c1 * v1 + ... + constant`, over the nest's loop variables.
#[derive(Clone, Debug)]
struct Affine {
    coefs: Vec<i64>,
    constant: i64,
}

#[derive(Clone, Debug)]
struct Access {
    array: usize,
    subscripts: [Affine; 2],
}

/// `write = scale * read0 (+|-) read1 ... + 1.0`, the write's first
/// subscript through a local where `local` says so.
#[derive(Clone, Debug)]
struct Statement {
    write: Access,
    reads: Vec<(bool, Access)>,
    scale: &'static str,
    local: Option<Local>,
}

/// A local scalar declared before the statement, in the write's first
/// subscript: `{ int m = SUBSCRIPT; A[m][...] = ...; }`, or one that is not
/// affine in the loop variables, `{ int m = (SUBSCRIPT) % 3; A[(SUBSCRIPT) -
/// m][...] = ...; }` (a multiple of 3: iterations that differ in the loop
/// variables write one element).
#[derive(Clone, Copy, Debug)]
enum Local {
    Affine,
    Folded,
}

#[derive(Clone, Debug)]
struct Nest {
    /// `lo .. hi` per loop, outermost first.
    bounds: Vec<(i64, i64)>,
    /// Statements of the innermost body.
    body: Vec<Statement>,
    /// A statement before the innermost loop (over the outer variables
    /// only): an imperfect nest.
    before_inner: Option<Statement>,
    /// A statement after the innermost loop, over every variable: the
    /// innermost one is then past its loop (its upper bound). The nest's
    /// variables are declared outside its loops.
    after_inner: Option<Statement>,
    /// Added to every subscript (the loops of a Jacobi-like nest run
    /// there instead, and its subscripts are the bare variables).
    offset: i64,
}

fn affine(depth: usize) -> impl Strategy<Value = Affine> {
    (
        prop::collection::vec(prop::sample::select(vec![-1i64, 0, 0, 1, 1, 2]), depth),
        -2i64..=2,
    )
        .prop_map(|(coefs, constant)| Affine { coefs, constant })
}

fn access(depth: usize) -> impl Strategy<Value = Access> {
    (0usize..2, affine(depth), affine(depth)).prop_map(|(array, a, b)| Access {
        array,
        subscripts: [a, b],
    })
}

/// An access most often at a loop variable (plus a small constant, most
/// often 0) per subscript, as stencils read and write, so that many nests
/// have parallel loops; else at any affine subscripts.
fn unit_biased_access(depth: usize) -> impl Strategy<Value = Access> {
    let small = || vec![0i64, 0, 0, -1, 1, -2, 2];
    prop_oneof![
        3 => (0usize..2, unit(depth, small()), unit(depth, small())).prop_map(|(array, a, b)| {
            Access {
                array,
                subscripts: [a, b],
            }
        }),
        1 => access(depth),
    ]
}

/// A loop variable plus one of `constants`.
fn unit(depth: usize, constants: Vec<i64>) -> impl Strategy<Value = Affine> {
    (0..depth.max(1), prop::sample::select(constants)).prop_map(move |(var, constant)| {
        let mut coefs = vec![0; depth];
        if depth > 0 {
            coefs[var] = 1;
        }
        Affine { coefs, constant }
    })
}

/// A statement after the innermost loop: its accesses at a loop variable
/// minus up to [`MAX_TRIP`], so that they reach back into what the loop
/// touched (`a[i - 1]`, the last element written, as code often reads it).
fn after_statement(depth: usize) -> impl Strategy<Value = Statement> {
    let back = || (-MAX_TRIP..=2).collect::<Vec<i64>>();
    let access = move || {
        (0usize..2, unit(depth, back()), unit(depth, back())).prop_map(|(array, a, b)| Access {
            array,
            subscripts: [a, b],
        })
    };
    (
        access(),
        prop::collection::vec((any::<bool>(), access()), 1..=2),
        prop::sample::select(vec!["0.5", "2.0"]),
    )
        .prop_map(|(write, reads, scale)| Statement {
            write,
            reads,
            scale,
            local: None,
        })
}

fn statement(depth: usize) -> impl Strategy<Value = Statement> {
    (
        unit_biased_access(depth),
        prop::collection::vec((any::<bool>(), unit_biased_access(depth)), 1..=3),
        prop::sample::select(vec!["0.5", "0.25", "2.0", "1.0"]),
    )
        .prop_map(|(write, reads, scale)| Statement {
            write,
            reads,
            scale,
            local: None,
        })
        .prop_flat_map(|s| {
            let local = prop::option::weighted(
                0.25,
                prop::sample::select(vec![Local::Affine, Local::Folded]),
            );
            (Just(s), local).prop_map(|(s, local)| Statement { local, ..s })
        })
}

/// A whole program: one or two nests, run once or, `repeated`, twice inside
/// a loop whose body first reads the loop variables the nests declared
/// outside their loops left on the previous trip (and only there).
#[derive(Clone, Debug)]
struct Program {
    nests: Vec<Nest>,
    repeated: bool,
}

fn programs() -> impl Strategy<Value = Program> {
    (
        prop::collection::vec(nest(), 1..=2),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(nests, repeated)| Program { nests, repeated })
}

/// A nest of either kind: any affine subscripts, or Jacobi-like.
fn nest() -> impl Strategy<Value = Nest> {
    prop_oneof![2 => affine_nest(), 1 => jacobi_nest()]
}

/// Two loops writing `X[i][j]` from neighbours `[i + c][j + d]` (|c|, |d| at
/// most 2) of either array: nests `map` may lift into SDSL programs.
fn jacobi_nest() -> impl Strategy<Value = Nest> {
    let neighbour = (0usize..2, -2i64..=2, -2i64..=2).prop_map(|(array, c, d)| Access {
        array,
        subscripts: [
            Affine {
                coefs: vec![1, 0],
                constant: c,
            },
            Affine {
                coefs: vec![0, 1],
                constant: d,
            },
        ],
    });
    let statement = (
        0usize..2,
        prop::collection::vec((any::<bool>(), neighbour), 1..=4),
        prop::sample::select(vec!["0.5", "0.25", "2.0", "1.0"]),
    )
        .prop_map(|(array, reads, scale)| Statement {
            local: None,
            write: Access {
                array,
                subscripts: [
                    Affine {
                        coefs: vec![1, 0],
                        constant: 0,
                    },
                    Affine {
                        coefs: vec![0, 1],
                        constant: 0,
                    },
                ],
            },
            reads,
            scale,
        });
    (
        prop::collection::vec((0i64..=2, 1i64..=MAX_TRIP), 2),
        prop::collection::vec(statement, 1..=2),
    )
        .prop_map(|(bounds, body)| Nest {
            bounds: bounds
                .into_iter()
                .map(|(lo, n)| (OFFSET + lo, OFFSET + lo + n))
                .collect(),
            body,
            before_inner: None,
            after_inner: None,
            offset: 0,
        })
}

/// One to three loops, most accesses at a loop variable per subscript,
/// others at any affine subscripts; now and then a statement between the
/// loops, before or after the innermost one.
fn affine_nest() -> impl Strategy<Value = Nest> {
    (1usize..=3).prop_flat_map(|depth| {
        (
            prop::collection::vec((0i64..=2, 1i64..=MAX_TRIP), depth)
                .prop_map(|b| b.into_iter().map(|(lo, n)| (lo, lo + n)).collect()),
            prop::collection::vec(statement(depth), 1..=3),
            if depth > 1 {
                (
                    prop::option::weighted(0.2, statement(depth - 1)),
                    prop::option::weighted(0.4, after_statement(depth)),
                )
                    .boxed()
            } else {
                Just((None, None)).boxed()
            },
        )
            .prop_map(|(bounds, body, (before_inner, after_inner))| Nest {
                bounds,
                body,
                before_inner,
                after_inner,
                offset: OFFSET,
            })
    })
}

fn render_affine(a: &Affine, offset: i64) -> String {
    let mut text = String::new();
    for (c, var) in a.coefs.iter().zip(VARS) {
        let term = match c {
            0 => continue,
            1 => var.to_string(),
            -1 => format!("-{var}"),
            c => format!("{c} * {var}"),
        };
        if text.is_empty() {
            text = term;
        } else if let Some(negated) = term.strip_prefix('-') {
            text = format!("{text} - {negated}");
        } else {
            text = format!("{text} + {term}");
        }
    }
    let constant = a.constant + offset;
    match constant {
        _ if text.is_empty() => constant.to_string(),
        0 => text,
        c if c < 0 => format!("{text} - {}", -c),
        c => format!("{text} + {c}"),
    }
}

fn render_access(a: &Access, offset: i64) -> String {
    format!(
        "{}[{}][{}]",
        ARRAYS[a.array],
        render_affine(&a.subscripts[0], offset),
        render_affine(&a.subscripts[1], offset)
    )
}

fn render_statement(s: &Statement, offset: i64) -> String {
    let mut rhs = format!("{} * {}", s.scale, render_access(&s.reads[0].1, offset));
    for (plus, read) in &s.reads[1..] {
        rhs = format!(
            "{rhs} {} {}",
            if *plus { '+' } else { '-' },
            render_access(read, offset)
        );
    }
    let w = &s.write;
    let first = render_affine(&w.subscripts[0], offset);
    let second = render_affine(&w.subscripts[1], offset);
    let array = ARRAYS[w.array];
    let assign = |row: &str| format!("{array}[{row}][{second}] = {rhs} + 1.0;");
    match s.local {
        None => assign(&first),
        Some(Local::Affine) => format!("{{ int m = {first}; {} }}", assign("m")),
        Some(Local::Folded) => format!(
            "{{ int m = ({first}) % 3; {} }}",
            assign(&format!("({first}) - m"))
        ),
    }
}

/// The whole C program: fill, the nests, print the loop variables declared
/// outside their loops (or, repeated, what the loop read of them) and every
/// element.
fn program(p: &Program) -> String {
    let mut c = format!(
        "#include <stdio.h>\n\
         #define S {EDGE}\n\
         static double A[S][S], B[S][S];\n\
         int main(void) {{\n\
         \x20   int i = -1, j = -1, k = -1;\n\
         \x20   for (int i = 0; i < S; i++)\n\
         \x20       for (int j = 0; j < S; j++) {{\n\
         \x20           A[i][j] = (double)((i * 7 + j * 3) % 13);\n\
         \x20           B[i][j] = (double)((i * 5 + j * 11) % 17);\n\
         \x20       }}\n"
    );
    let base = usize::from(p.repeated);
    if p.repeated {
        c += "    double probe = 0.0;\n\
              \x20   for (int it = 0; it < 2; it++) {\n\
              \x20       probe = probe * 0.5 + i + 2 * j + 3 * k;\n";
    }
    for nest in &p.nests {
        let depth = nest.bounds.len();
        let declare = if nest.after_inner.is_some() {
            ""
        } else {
            "int "
        };
        for (level, &(lo, hi)) in nest.bounds.iter().enumerate() {
            let pad = "    ".repeat(base + level + 1);
            let var = VARS[level];
            c += &format!("{pad}for ({declare}{var} = {lo}; {var} < {hi}; {var}++) {{\n");
            if level + 2 == depth {
                if let Some(s) = &nest.before_inner {
                    c += &format!("{pad}    {}\n", render_statement(s, nest.offset));
                }
            }
        }
        let pad = "    ".repeat(base + depth + 1);
        for s in &nest.body {
            c += &format!("{pad}{}\n", render_statement(s, nest.offset));
        }
        for level in (0..depth).rev() {
            let pad = "    ".repeat(base + level + 1);
            c += &format!("{pad}}}\n");
            if let Some(s) = nest.after_inner.as_ref().filter(|_| level + 1 == depth) {
                c += &format!("{pad}{}\n", render_statement(s, nest.offset));
            }
        }
    }
    if p.repeated {
        c += "    }\n    printf(\"%.17g\\n\", probe);\n";
    } else {
        // The variables as the nests declared outside their loops leave them.
        c += "    printf(\"%d %d %d\\n\", i, j, k);\n";
    }
    c += "    for (int i = 0; i < S; i++)\n\
          \x20       for (int j = 0; j < S; j++)\n\
          \x20           printf(\"%d %d %.17g %.17g\\n\", i, j, A[i][j], B[i][j]);\n\
          \x20   return 0;\n\
          }\n";
    c
}

/// A parallel site of the mapped program: the pragma's line and the lines
/// of the loops it makes parallel (`collapse(n)`: the next `n` headers).
struct Site {
    pragma: usize,
    loops: Vec<usize>,
}

fn sites(lines: &[&str]) -> Vec<Site> {
    let mut sites = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        let Some(clauses) = line.trim().strip_prefix("#pragma omp parallel for") else {
            continue;
        };
        let count = clauses
            .split("collapse(")
            .nth(1)
            .and_then(|rest| rest.split(')').next())
            .and_then(|n| n.trim().parse::<usize>().ok())
            .unwrap_or(1);
        let loops: Vec<usize> = (at + 1..lines.len())
            .filter(|&l| lines[l].trim_start().starts_with("for ("))
            .take(count)
            .collect();
        assert_eq!(loops.len(), count, "collapse({count}) over fewer loops");
        sites.push(Site { pragma: at, loops });
    }
    sites
}

/// `for ([int ]v = LO; v < HI; v++)` run backwards, or `None` for a header
/// of another form. The loop still leaves `v` at `HI` (or `LO` if it never
/// ran), as the forward loop does, for statements that read it after.
fn reversed(header: &str) -> Option<String> {
    let indent = &header[..header.len() - header.trim_start().len()];
    let rest = header.trim_start().strip_prefix("for (")?;
    let (declare, rest) = match rest.strip_prefix("int ") {
        Some(rest) => ("int ", rest),
        None => ("", rest),
    };
    let (var, rest) = rest.split_once(" = ")?;
    let (lo, rest) = rest.split_once(&format!("; {var} < "))?;
    let (hi, tail) = rest.split_once(&format!("; {var}++)"))?;
    Some(format!(
        "{indent}for ({declare}{var} = ({hi}) - 1; {var} >= ({lo}) || \
         (({var} = ({hi}) > ({lo}) ? ({hi}) : ({lo})), 0); {var}--){tail}"
    ))
}

/// The mapped program with the loops at `loops` run backwards and every
/// pragma dropped.
fn with_loops_reversed(lines: &[&str], loops: &[usize]) -> Option<String> {
    let mut out = Vec::with_capacity(lines.len());
    for (at, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("#pragma omp") {
            continue;
        }
        if loops.contains(&at) {
            out.push(reversed(line)?);
        } else {
            out.push(line.to_string());
        }
    }
    Some(out.join("\n") + "\n")
}

/// A random program in a fresh folder (`nests.c`) and what `map --target
/// TARGET -o OUT` made of it.
struct Mapped {
    dir: tempfile::TempDir,
    source: String,
    path: std::path::PathBuf,
}

impl Mapped {
    fn new(p: &Program, target: &str, out: &str) -> Result<Mapped, TestCaseError> {
        let dir = tempfile::tempdir().unwrap();
        let source = program(p);
        write(&dir.path().join("nests.c"), &source);
        let path = dir.path().join(out);
        let ran = map(
            dir.path(),
            &["nests.c", "--target", target, "-o", path.to_str().unwrap()],
        );
        prop_assert!(
            ran.status.success(),
            "map failed:\n{}\n{source}",
            String::from_utf8_lossy(&ran.stderr)
        );
        Ok(Mapped { dir, source, path })
    }

    fn original_path(&self) -> std::path::PathBuf {
        self.dir.path().join("nests.c")
    }

    /// What the original program prints.
    fn original_output(&self) -> String {
        build_and_run(
            &self.original_path(),
            &self.dir.path().join("original"),
            &[OPT],
        )
    }
}

fn check(p: &Program) -> Result<(), TestCaseError> {
    let m = Mapped::new(p, "c", "nests.omp.c")?;
    let (dir, source, mapped_path) = (&m.dir, &m.source, &m.path);
    let original = m.original_output();
    let mapped = std::fs::read_to_string(mapped_path).unwrap();
    let threaded = build_and_run(mapped_path, &dir.path().join("mapped"), &[OPT, "-fopenmp"]);
    prop_assert!(
        threaded == original,
        "the mapped program prints otherwise under OpenMP\n--- original\n{source}\n--- mapped\n{mapped}"
    );

    // Nests lifted into SDSL programs run on the interpreter from the arrays
    // C holds before them, and must leave what C leaves, bit for bit.
    let (lifted_nests, original_lines) = lifted(&m.original_path());
    for nest in &lifted_nests {
        lift_against_c("nests", &original_lines, nest, None);
    }

    let lines: Vec<&str> = mapped.lines().collect();
    for site in sites(&lines) {
        let mut orders: Vec<Vec<usize>> = site.loops.iter().map(|&l| vec![l]).collect();
        if site.loops.len() > 1 {
            orders.push(site.loops.clone());
        }
        for loops in orders {
            let Some(text) = with_loops_reversed(&lines, &loops) else {
                // A header of another form (a strip-mined loop): the run
                // under OpenMP above still covers the site.
                continue;
            };
            let path = dir.path().join("reversed.c");
            write(&path, &text);
            let backwards = build_and_run(&path, &dir.path().join("reversed"), &[OPT]);
            let names: Vec<&str> = loops.iter().map(|&l| lines[l].trim()).collect();
            prop_assert!(
                backwards == original,
                "the parallel loop(s) {names:?} of the pragma at line {} of the mapped \
                 program give another result run backwards: they carry a dependence\n\
                 --- original\n{source}\n--- mapped\n{mapped}\n--- report\n{}",
                site.pragma + 1,
                report(dir.path())
            );
        }
    }
    Ok(())
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}

/// `map --report` of the original, for the failure message.
fn report(dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .current_dir(dir)
        .args(["map", "nests.c", "--report"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

proptest! {
    #![proptest_config(common::proptest_config(common::gen::cases(24)))]

    #[test]
    fn parallel_loops_of_random_nests_are_independent(
        program in programs()
    ) {
        if !cc_available() {
            return Ok(());
        }
        check(&program)?;
    }
}

/// `map --target opencl` of a random program (direct kernels, lifted
/// stencil loops, what stays on the CPU) on PoCL prints what the original
/// prints, bit for bit.
fn check_opencl(p: &Program) -> Result<(), TestCaseError> {
    let m = Mapped::new(p, "opencl", "nests.cl.c")?;
    let original = m.original_output();
    let ran = build_and_run(&m.path, &m.dir.path().join("mapped"), &[OPT, "-lOpenCL"]);
    prop_assert!(
        ran == original,
        "the OpenCL program prints otherwise\n--- original\n{}\n--- mapped\n{}\n--- report\n{}",
        m.source,
        std::fs::read_to_string(&m.path).unwrap(),
        report(m.dir.path())
    );
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(common::gen::cases(8)))]

    #[test]
    fn random_nests_mapped_to_opencl_print_what_the_originals_print(
        program in programs()
    ) {
        if !cc_available() || !opencl_available() || !opencl_headers_available() {
            return Ok(());
        }
        check_opencl(&program)?;
    }
}

/// `map --target cuda` of a random program: every kernel unit compiles with
/// NVRTC for sm_90, and the host part with `g++ -Wall -Werror` against the
/// CUDA runtime headers (running it needs a GPU: `gpu_map_cuda_runs_as_the_original`).
fn check_cuda(p: &Program, includes: &[std::path::PathBuf]) -> Result<(), TestCaseError> {
    use stencilc::exec::cuda::nvrtc;
    let m = Mapped::new(p, "cuda", "nests.cu")?;
    let (source, cu) = (&m.source, &m.path);
    let output = std::fs::read_to_string(cu).unwrap();
    for unit in kernel_units(&output) {
        let compiled =
            nvrtc::compile_source(&unit, "sm_90", stencilc::back::cuda::NVRTC_OPTIONS, &[]);
        prop_assert!(
            compiled.is_ok(),
            "NVRTC refused a kernel unit: {}\n{unit}\n--- original\n{source}",
            compiled.err().unwrap()
        );
    }
    compile_host_part("nests", cu, includes);
    Ok(())
}

proptest! {
    #![proptest_config(common::proptest_config(common::gen::cases(8)))]

    #[test]
    fn random_nests_mapped_to_cuda_compile_with_nvrtc_and_gxx(
        program in programs()
    ) {
        use stencilc::exec::cuda::nvrtc;
        let gxx = Command::new("g++")
            .arg("--version")
            .output()
            .map_err(|e| e.to_string())
            .and_then(|o| o.status.success().then_some(()).ok_or("g++ failed".to_string()))
            .and_then(|()| cuda_include_dirs().map(drop));
        if !cc_available()
            || !common::runtime_available("nvrtc", nvrtc::load().map(|_| ()))
            || !common::runtime_available("cudart", gxx)
        {
            return Ok(());
        }
        check_cuda(&program, &cuda_include_dirs().unwrap())?;
    }
}

#[test]
fn reversal_turns_a_header_around_and_leaves_other_forms_alone() {
    assert_eq!(
        reversed("        for (int j = 2; j < n - 1; j++) {").as_deref(),
        Some(
            "        for (int j = (n - 1) - 1; j >= (2) || ((j = (n - 1) > (2) ? (n - 1) : (2)), 0); j--) {"
        )
    );
    assert_eq!(
        reversed("for (i = 0; i < 4; i++)").as_deref(),
        Some("for (i = (4) - 1; i >= (0) || ((i = (4) > (0) ? (4) : (0)), 0); i--)")
    );
    assert_eq!(reversed("for (int i = 0; i < N; i += 4)"), None);
    let lines = [
        "    #pragma omp parallel for collapse(2)",
        "    for (int i = 0; i < 4; i++)",
        "        for (int j = 0; j < 3; j++)",
        "            A[i][j] = 1.0;",
    ];
    let found = sites(&lines);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].loops, vec![1, 2]);
    let text = with_loops_reversed(&lines, &[2]).unwrap();
    assert!(!text.contains("#pragma"));
    assert!(text.contains("for (int j = (3) - 1; j >= (0) ||"));
}

/// The reversal check finds a carried dependence: a recurrence that the
/// oracle itself would pass as parallel is caught when run backwards.
#[test]
fn a_recurrence_run_backwards_prints_otherwise() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let forward = "#include <stdio.h>\nstatic double A[8];\nint main(void) {\n\
                   \x20   for (int i = 1; i < 8; i++)\n\
                   \x20       A[i] = A[i - 1] + 1.0;\n\
                   \x20   printf(\"%.17g\\n\", A[7]);\n    return 0;\n}\n";
    let lines: Vec<&str> = forward.lines().collect();
    let backward = with_loops_reversed(&lines, &[3]).unwrap();
    write(&dir.path().join("f.c"), forward);
    write(&dir.path().join("b.c"), &backward);
    let f = build_and_run(&dir.path().join("f.c"), &dir.path().join("f"), &[]);
    let b = build_and_run(&dir.path().join("b.c"), &dir.path().join("b"), &[]);
    assert_eq!(f.trim(), "7");
    assert_ne!(f, b);
}

/// A loop run backwards leaves its variable where the forward loop does, so
/// that a statement reading it after the loop sees the same value.
#[test]
fn a_loop_run_backwards_leaves_its_variable_where_the_forward_loop_does() {
    if !cc_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let forward = "#include <stdio.h>\nint main(void) {\n    int i, n = 0;\n\
                   \x20   for (i = 2; i < 7; i++)\n        n++;\n\
                   \x20   printf(\"%d %d\\n\", i, n);\n\
                   \x20   for (i = 5; i < 3; i++)\n        n++;\n\
                   \x20   printf(\"%d %d\\n\", i, n);\n    return 0;\n}\n";
    let lines: Vec<&str> = forward.lines().collect();
    let backward = with_loops_reversed(&lines, &[3, 6]).unwrap();
    write(&dir.path().join("f.c"), forward);
    write(&dir.path().join("b.c"), &backward);
    let f = build_and_run(&dir.path().join("f.c"), &dir.path().join("f"), &[]);
    let b = build_and_run(&dir.path().join("b.c"), &dir.path().join("b"), &[]);
    assert_eq!(f, "7 5\n5 5\n");
    assert_eq!(b, f, "{backward}");
}
