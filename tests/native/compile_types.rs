//! `stencilc compile` checks, at the host's compile time, that each host array
//! holds its griddata's element type: a `double` array or pointer bound to a
//! `float griddata` (or the reverse) must not compile, in C99, C11 or C++, and the
//! compiler's error must say what is wrong. Matching hosts of every rank compile
//! with `-Wall -Wextra -Werror`.

use crate::common;

use std::path::Path;
use std::process::Command;

/// A host whose region declares `sdsl_type griddata U` on a 4x4x4 grid, with the
/// host's own `U` declared by `host_decl` (a statement in `main`).
fn host(sdsl_type: &str, host_decl: &str) -> String {
    format!(
        "#include <stdio.h>\n\
         #include <stdlib.h>\n\
         \n\
         typedef double cube[4][4][4];\n\
         \n\
         int main(void) {{\n\
         \x20   int n = 4;\n\
         \x20   {host_decl}\n\
         \x20   #pragma sdsl begin\n\
         \x20   int n;\n\
         \x20   grid g[n][n][n];\n\
         \x20   {sdsl_type} griddata U on g at 0,1;\n\
         \x20   iterate 2 {{\n\
         \x20       stencil halve {{\n\
         \x20           [0:n-1][0:n-1][0:n-1] : [1]U[0][0][0] = [0]U[0][0][0] / 2;\n\
         \x20       }}\n\
         \x20   }}\n\
         \x20   #pragma sdsl end\n\
         \x20   printf(\"%d\\n\", sdsl_return_0);\n\
         \x20   return sdsl_return_0;\n\
         }}\n"
    )
}

/// The C and C++ dialects every host is compiled in: (compiler, arguments).
const DIALECTS: [(&str, &[&str]); 3] = [
    ("gcc", &["-std=c99"]),
    ("gcc", &["-std=c11"]),
    ("g++", &["-x", "c++", "-std=c++17"]),
];

/// What the compiler says when `U` holds the wrong type: C11 and C++ print the
/// static assertion's message; C99 names the failing check's bit-field.
fn expected_error(dialect: &[&str], want: &str) -> String {
    if dialect.contains(&"-std=c99") {
        format!("stencilc_host_array_U_must_hold_{want}_elements")
    } else {
        format!(
            "stencilc: host array `U` must hold {want} elements, as `{want} griddata U` declares"
        )
    }
}

fn compilers_available() -> bool {
    ["gcc", "g++"].iter().all(|compiler| {
        let probe = Command::new(compiler)
            .arg("--version")
            .output()
            .map_err(|e| format!("`{compiler} --version`: {e}"))
            .and_then(|o| {
                o.status
                    .success()
                    .then_some(())
                    .ok_or_else(|| format!("`{compiler} --version` failed"))
            });
        common::runtime_available("cc", probe)
    })
}

/// `stencilc compile` on `text`: the generated file and stencilc's stderr.
fn generate(dir: &Path, text: &str) -> (std::path::PathBuf, String) {
    let input = dir.join("host.c");
    std::fs::write(&input, text).unwrap();
    let output = dir.join("host.out.c");
    let run = Command::new(env!("CARGO_BIN_EXE_stencilc"))
        .args(["compile", "-f"])
        .arg(&input)
        .arg("-o")
        .arg(&output)
        .output()
        .expect("stencilc runs");
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "stencilc: {stderr}");
    (output, stderr)
}

/// Compiles (and links) `source`: the compiler's stderr on failure.
fn build(compiler: &str, dialect: &[&str], source: &Path, exe: &Path) -> Result<(), String> {
    let out = Command::new(compiler)
        .args(dialect)
        .args([
            "-O1",
            "-fopenmp",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
        ])
        .arg(source)
        .arg("-o")
        .arg(exe)
        .arg("-lm")
        .output()
        .expect("the compiler runs");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// Host declarations of `U` holding `float` or `double` (`{T}`), of ranks 1 to 3.
const DECLARATIONS: [&str; 4] = [
    "static {T} U[4][4][4];",
    "static {T} U[64];",
    "{T} *U = ({T} *)calloc(64, sizeof({T}));",
    "{T} *const U = ({T} *)calloc(64, sizeof({T}));",
];

#[test]
fn host_arrays_of_the_wrong_element_type_do_not_compile() {
    if !compilers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (sdsl_type, host_type) in [("float", "double"), ("double", "float")] {
        for declaration in DECLARATIONS {
            let text = host(sdsl_type, &declaration.replace("{T}", host_type));
            let (generated, _) = generate(dir.path(), &text);
            for (compiler, dialect) in DIALECTS {
                let error = build(compiler, dialect, &generated, &dir.path().join("exe"))
                    .expect_err(&format!(
                        "{compiler} {dialect:?} accepts `{declaration}` with {host_type} for a \
                         {sdsl_type} griddata"
                    ));
                assert!(
                    error.contains(&expected_error(dialect, sdsl_type)),
                    "{compiler} {dialect:?}, `{declaration}`:\n{error}"
                );
                // The error points at the region, where the binding is.
                assert!(error.contains("host.c:9:"), "{error}");
            }
        }
    }
}

#[test]
fn host_arrays_of_the_right_element_type_compile_cleanly_and_run() {
    if !compilers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for ty in ["float", "double"] {
        for declaration in DECLARATIONS {
            let text = host(ty, &declaration.replace("{T}", ty));
            let (generated, stderr) = generate(dir.path(), &text);
            assert_eq!(stderr, "", "no warning for `{declaration}`");
            let source = std::fs::read_to_string(&generated).unwrap();
            assert_eq!(
                source.matches("STENCILC_CHECK_HOST_ARRAY(U, ").count(),
                1,
                "one check for `{declaration}`"
            );
            for (compiler, dialect) in DIALECTS {
                let exe = dir.path().join("exe");
                build(compiler, dialect, &generated, &exe).unwrap_or_else(|e| {
                    panic!("{compiler} {dialect:?} rejects `{declaration}`:\n{e}")
                });
                let run = Command::new(&exe).output().unwrap();
                assert_eq!(String::from_utf8_lossy(&run.stdout), "0\n");
            }
        }
    }
}

/// The dereferences in the check follow the host declaration's rank.
#[test]
fn the_check_dereferences_the_host_name_once_per_declared_rank() {
    let dir = tempfile::tempdir().unwrap();
    for (declaration, element) in [
        ("static double U[4][4][4];", "***U"),
        ("static double U[64];", "*U"),
        ("double *U = 0;", "*U"),
    ] {
        let (generated, _) = generate(dir.path(), &host("double", declaration));
        let source = std::fs::read_to_string(generated).unwrap();
        assert!(
            source.contains(&format!(
                "STENCILC_CHECK_HOST_ARRAY(U, {element}, double, \"stencilc: host array `U` \
                 must hold double elements, as `double griddata U` declares\");"
            )),
            "{declaration}:\n{source}"
        );
    }
}

/// A declaration stencilc cannot read (a typedef'd array type) leaves the array
/// unchecked, with a warning that says so; the host still compiles and runs.
#[test]
fn an_unrecognised_declaration_is_left_unchecked_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (generated, stderr) = generate(dir.path(), &host("double", "static cube U;"));
    assert!(
        stderr.contains("host.c:9: region 0 binds griddata `U`")
            && stderr.contains("its element type is not checked"),
        "{stderr}"
    );
    let source = std::fs::read_to_string(&generated).unwrap();
    assert!(!source.contains("STENCILC_CHECK_HOST_ARRAY(U"), "{source}");
    if !compilers_available() {
        return;
    }
    for (compiler, dialect) in DIALECTS {
        let exe = dir.path().join("exe");
        build(compiler, dialect, &generated, &exe)
            .unwrap_or_else(|e| panic!("{compiler} {dialect:?}:\n{e}"));
        let run = Command::new(&exe).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&run.stdout), "0\n");
    }
}

/// A host array exactly as large as a pointer (`float U[2]`, `double U[1]` on
/// a 64-bit host) once passed the wrapper's size check, which accepted any
/// size equal to `sizeof(T *)`, and the stencil then wrote past its end. Under
/// AddressSanitizer, such an array must be refused with status 2 (no
/// overflow), while arrays of the grid's size and pointers still run (0).
#[test]
fn a_host_array_the_size_of_a_pointer_is_refused_not_overrun() {
    if !compilers_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("float", "static float U[2];", "2\n"),
        ("double", "static double U[1];", "2\n"),
        ("float", "static float U[63];", "2\n"),
        ("float", "static float U[64];", "0\n"),
        ("double", "static double U[4][4][4];", "0\n"),
        (
            "float",
            "float *U = (float *)calloc(64, sizeof(float));",
            "0\n",
        ),
        (
            "double",
            "double *U = (double *)calloc(64, sizeof(double));",
            "0\n",
        ),
    ];
    for (ty, declaration, want) in cases {
        let (generated, _) = generate(dir.path(), &host(ty, declaration));
        for (compiler, dialect) in DIALECTS {
            let exe = dir.path().join("exe");
            let mut with_asan: Vec<&str> = dialect.to_vec();
            with_asan.push("-fsanitize=address");
            build(compiler, &with_asan, &generated, &exe)
                .unwrap_or_else(|e| panic!("{compiler} {dialect:?} `{declaration}`:\n{e}"));
            let run = Command::new(&exe)
                .env("ASAN_OPTIONS", "detect_leaks=0")
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&run.stderr);
            assert!(
                !stderr.contains("AddressSanitizer"),
                "{compiler} {dialect:?} `{declaration}` overflows:\n{stderr}"
            );
            assert_eq!(
                String::from_utf8_lossy(&run.stdout),
                want,
                "{compiler} {dialect:?} `{declaration}`: {stderr}"
            );
        }
    }
}
