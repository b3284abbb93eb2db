//! Differential property test of the native C back-end: on random valid programs
//! (tests/common/gen.rs) `--backend c` gives the interpreter's results bit for
//! bit, on every time level of every field and on every reduction. The C is
//! compiled as the back-end always compiles it (no fast-math, -ffp-contract=off).
//!
//! Also here, without any runtime: every generated program is accepted by the
//! front-end, passes the run-time bounds analysis and runs in the interpreter.

use crate::common;

use std::sync::OnceLock;

use common::gen::{self, Flavor, GenProgram};
use proptest::prelude::*;
use stencilc::exec::backend::RunOptions;
use stencilc::exec::{interp, native, FieldState, RunSummary};
use stencilc::ir::env::RunEnv;

/// Compiled objects go to a private temporary cache, shared by the cases of
/// this run and removed with the process's temporary directory.
fn use_private_cache() {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR.get_or_init(|| tempfile::tempdir().expect("temporary directory"));
    std::env::set_var("STENCILC_CACHE_DIR", dir.path());
}

fn cc_available() -> bool {
    common::runtime_available(
        "cc",
        native::Compiler::from_env()
            .map(|_| ())
            .map_err(|e| e.to_string()),
    )
}

/// Parses, binds and runs `generated` in the interpreter; panics (with the
/// program text) when any step refuses it, since the generator promises
/// valid programs.
fn interpret(
    generated: &GenProgram,
) -> (
    String,
    stencilc::ir::Program,
    RunEnv,
    FieldState,
    RunSummary,
) {
    let (text, program) = generated.parse();
    let env = RunEnv::new(&program, &generated.bindings(&program))
        .unwrap_or_else(|e| panic!("analysis refused a generated program:\n{text}\n{e}"));
    let mut state = generated.initial_state(&program, &env);
    let summary = interp::run(&program, &env, &mut state)
        .unwrap_or_else(|e| panic!("the interpreter failed:\n{text}\n{e}"));
    (text, program, env, state, summary)
}

proptest! {
    #![proptest_config(common::proptest_config(gen::cases(200)))]

    #[test]
    fn generated_programs_are_valid(generated in gen::program_strategy(Flavor::Full)) {
        interpret(&generated);
    }
}

proptest! {
    #![proptest_config(common::proptest_config(gen::cases(24)))]

    #[test]
    fn native_c_equals_the_interpreter_bit_for_bit(generated in gen::program_strategy(Flavor::Full)) {
        if !cc_available() {
            return Ok(());
        }
        use_private_cache();
        let (text, program, env, expected, want) = interpret(&generated);
        // Raw stores may overflow to inf and then NaN: nothing to compare bitwise.
        prop_assume!(gen::all_finite(&expected));
        let mut actual = generated.initial_state(&program, &env);
        let have = native::run(&program, &env, &mut actual, &RunOptions::default(), &mut |_| {})
            .unwrap_or_else(|e| panic!("native C failed:\n{text}\n{e}"));
        prop_assert_eq!(have.iterations, want.iterations, "iterations\n{}", text);
        prop_assert_eq!(have.stopped_by_check, want.stopped_by_check, "check\n{}", text);
        for ((name, a), (_, b)) in want.reductions.iter().zip(&have.reductions) {
            prop_assert_eq!(
                gen::value_bits(*a), gen::value_bits(*b),
                "reduction {}: interpreter {:?}, C {:?}\n{}", name, a, b, text
            );
        }
        for (f, field) in program.fields.iter().enumerate() {
            for level in 0..field.levels() {
                let e = gen::bits(&expected.fields[f][level]);
                let a = gen::bits(&actual.fields[f][level]);
                if let Some(i) = (0..e.len()).find(|&i| e[i] != a[i]) {
                    prop_assert!(
                        false,
                        "field {} level {} element {}: interpreter {:?}, C {:?}\n{}",
                        field.name, level, i,
                        expected.fields[f][level].get(i), actual.fields[f][level].get(i), text
                    );
                }
            }
        }
    }
}
