//! Differential property test of the native C back-end: on random valid programs
//! (tests/common/gen.rs) `--backend c` gives the interpreter's results bit for
//! bit, on every time level of every field and on every reduction. The C is
//! compiled as the back-end always compiles it (no fast-math, -ffp-contract=off).
//!
//! Also here, without any runtime: every generated program is accepted by the
//! front-end, passes the run-time bounds analysis and runs in the interpreter.

use crate::common;

use std::sync::OnceLock;

use common::gen::{self, Flavor};
use proptest::prelude::*;
use stencilc::exec::native;
use stencilc::exec::options::RunOptions;

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

proptest! {
    #![proptest_config(common::proptest_config(gen::cases(200)))]

    #[test]
    fn generated_programs_are_valid(generated in gen::program_strategy(Flavor::Full)) {
        gen::interpret(&generated);
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
        let gen::Interpreted { text, program, env, state: expected, summary: want } =
            gen::interpret(&generated);
        // Raw stores may overflow to inf and then NaN: nothing to compare bitwise.
        prop_assume!(gen::all_finite(&expected));
        let mut actual = generated.initial_state(&program, &env);
        let have = native::run(&program, &env, &mut actual, &RunOptions::default(), &mut |_| {})
            .unwrap_or_else(|e| panic!("native C failed:\n{text}\n{e}"));
        prop_assert_eq!(have.iterations, want.iterations, "iterations\n{}", text);
        prop_assert_eq!(have.stopped_by_check, want.stopped_by_check, "check\n{}", text);
        for ((name, a), (_, b)) in want.reductions.iter().zip(&have.reductions) {
            // Bits, the sign of a zero `min`/`max` included: both order -0.0
            // below +0.0, so OpenMP's order of combining threads cannot show.
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
