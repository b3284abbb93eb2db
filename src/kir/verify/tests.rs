//! Unit tests of the kernel-IR verifier: each builds a broken module and
//! checks that the verifier names what is wrong.

use super::*;
use crate::kir::{ConstArray, KParam, Vars};

/// A one-kernel module: a block of 64 threads, a buffer parameter and a
/// shared array of 64 floats.
fn module(body: impl FnOnce(&mut Vars, Var, Var) -> Vec<KStmt>) -> Module {
    let mut vars = Vars::default();
    let out = vars.add("out", ScalarType::Float, Space::Global, Origin::Program);
    let tile = vars.add("tile", ScalarType::Float, Space::Shared, Origin::Generated);
    let body = body(&mut vars, out, tile);
    Module {
        name: "test".into(),
        constants: Vec::new(),
        fma: false,
        min_blocks_per_sm: None,
        kernels: vec![Kernel {
            name: "k".into(),
            block: [64, 1, 1],
            vars,
            params: vec![KParam {
                var: out,
                ty: ScalarType::Float,
                kind: ParamKind::Buffer,
            }],
            shared: vec![SharedArray {
                var: tile,
                ty: ScalarType::Float,
                dims: vec![64],
            }],
            body,
            uses_double: false,
        }],
    }
}

fn tid_decl(vars: &mut Vars) -> (Var, KStmt) {
    let tid = vars.temp_int("tid");
    let decl = KStmt::Decl {
        var: tid,
        init: KExpr::Builtin(Builtin::ThreadIdx(0)),
    };
    (tid, decl)
}

fn store(space: Space, array: Var, index: KExpr) -> KStmt {
    KStmt::Store {
        space,
        array,
        index: vec![index],
        value: KExpr::Lit(Value::Float(1.0)),
    }
}

fn errors(module: &Module) -> String {
    verify(module).err().unwrap_or_default().join("\n")
}

#[test]
fn a_correct_kernel_passes() {
    let m = module(|vars, out, tile| {
        let (tid, decl) = tid_decl(vars);
        vec![
            decl,
            store(Space::Shared, tile, KExpr::var(tid)),
            KStmt::Barrier,
            KStmt::If {
                cond: KExpr::bin(BinaryOp::Lt, KExpr::var(tid), KExpr::int(32)),
                then: vec![store(
                    Space::Shared,
                    tile,
                    KExpr::plus(KExpr::var(tid), KExpr::int(32)),
                )],
                otherwise: vec![],
            },
            store(Space::Global, out, KExpr::var(tid)),
        ]
    });
    assert_eq!(verify(&m), Ok(()));
}

#[test]
fn use_before_declaration_is_caught() {
    let m = module(|vars, out, _| {
        let (tid, decl) = tid_decl(vars);
        vec![store(Space::Global, out, KExpr::var(tid)), decl]
    });
    assert!(
        errors(&m).contains("used before it is declared"),
        "{}",
        errors(&m)
    );
}

#[test]
fn wrong_types_are_caught() {
    let m = module(|vars, _, tile| {
        let x = vars.add("x", ScalarType::Int, Space::Private, Origin::Program);
        vec![
            KStmt::Decl {
                var: x,
                init: KExpr::Lit(Value::Double(1.0)),
            },
            store(Space::Shared, tile, KExpr::Lit(Value::Long(0))),
            KStmt::Assign {
                var: x,
                value: KExpr::bin(
                    BinaryOp::Lt,
                    KExpr::Lit(Value::Long(1)),
                    KExpr::Lit(Value::Int(2)),
                ),
            },
        ]
    });
    let e = errors(&m);
    assert!(
        e.contains("the initial value of `x` (#2) is a double"),
        "{e}"
    );
    assert!(e.contains("an index of `tile` (#1) is a long"), "{e}");
    assert!(e.contains("`<` between a long and a int"), "{e}");
}

#[test]
fn a_global_flat_index_may_be_a_long_computed_with_widened_ints() {
    let m = module(|vars, out, _| {
        let (tid, decl) = tid_decl(vars);
        // `(long)tid * 3 + tid`: 64-bit indices, the `int`s widened as in C.
        let wide = KExpr::plus(
            KExpr::times(
                KExpr::Cast(ScalarType::Long, Box::new(KExpr::var(tid))),
                KExpr::int(3),
            ),
            KExpr::var(tid),
        );
        vec![decl, store(Space::Global, out, wide)]
    });
    assert_eq!(verify(&m), Ok(()));
}

#[test]
fn a_barrier_under_a_thread_dependent_branch_is_caught() {
    let m = module(|vars, _, _| {
        let (tid, decl) = tid_decl(vars);
        vec![
            decl,
            KStmt::If {
                cond: KExpr::bin(BinaryOp::Lt, KExpr::var(tid), KExpr::int(32)),
                then: vec![KStmt::Barrier],
                otherwise: vec![],
            },
        ]
    });
    assert!(
        errors(&m).contains("a barrier under control flow"),
        "{}",
        errors(&m)
    );
}

#[test]
fn a_shared_index_provably_out_of_range_is_caught() {
    let m = module(|vars, _, tile| {
        let (tid, decl) = tid_decl(vars);
        vec![
            decl,
            store(
                Space::Shared,
                tile,
                KExpr::plus(KExpr::var(tid), KExpr::int(1)),
            ),
        ]
    });
    assert!(
        errors(&m).contains("ranges over 1 to 64, outside 0 to 63"),
        "{}",
        errors(&m)
    );
}

#[test]
fn misused_spaces_and_read_only_stores_are_caught() {
    let mut m = module(|_, out, tile| {
        vec![
            store(Space::Global, tile, KExpr::int(0)),
            KStmt::Assign {
                var: out,
                value: KExpr::Lit(Value::Float(0.0)),
            },
        ]
    });
    m.kernels[0].params[0].kind = ParamKind::ReadOnlyBuffer;
    let e = errors(&m);
    assert!(
        e.contains("lives in Shared memory but is accessed as Global"),
        "{e}"
    );
    assert!(e.contains("used as a scalar"), "{e}");
    assert!(e.contains("assignment to parameter"), "{e}");
}

#[test]
fn helpers_are_typed_by_their_signatures() {
    let m = module(|vars, _, _| {
        let q = vars.add("q", ScalarType::Long, Space::Private, Origin::Program);
        let n = vars.add("n", ScalarType::Int, Space::Private, Origin::Program);
        let long = || KExpr::Lit(Value::Long(7));
        vec![
            // Right: a long division, a long index into an int periodic map.
            KStmt::Decl {
                var: q,
                init: KExpr::Helper(Helper::Div(ScalarType::Long), vec![long(), long()]),
            },
            KStmt::Decl {
                var: n,
                init: KExpr::Helper(Helper::Periodic, vec![long(), KExpr::int(4)]),
            },
            // Wrong: an int where the conversion takes a double.
            KStmt::Assign {
                var: n,
                value: KExpr::Helper(
                    Helper::FloatToInt {
                        from: ScalarType::Double,
                        to: ScalarType::Int,
                    },
                    vec![KExpr::int(1)],
                ),
            },
        ]
    });
    let e = errors(&m);
    assert!(
        e.contains("argument 0 of sdsl_f64_to_i32 is a int where a double is expected"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn a_store_into_a_global_table_is_caught() {
    let mut m = module(|vars, _, _| {
        let table = vars.add("K", ScalarType::Float, Space::Global, Origin::Table(0));
        vec![store(Space::Global, table, KExpr::int(0))]
    });
    m.constants.push(ConstArray {
        name: "K_global".into(),
        ty: ScalarType::Float,
        values: vec![Value::Float(1.0)],
        global: true,
    });
    let e = errors(&m);
    assert!(e.contains("a store into table `K`"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn vector_loads_and_stores_are_checked() {
    let good = module(|vars, out, _| {
        let (tid, decl) = tid_decl(vars);
        let v = vars.add_vector("v", ScalarType::Float, 4);
        let index = KExpr::times(KExpr::var(tid), KExpr::int(4));
        vec![
            decl,
            KStmt::Decl {
                var: v,
                init: KExpr::VecLoad {
                    array: out,
                    index: Box::new(index.clone()),
                    lanes: 4,
                },
            },
            KStmt::VecStore {
                array: out,
                index,
                values: (0..4).map(|lane| KExpr::Lane(v, 3 - lane)).collect(),
            },
        ]
    });
    assert_eq!(verify(&good), Ok(()));
    let bad = module(|vars, out, _| {
        let (tid, decl) = tid_decl(vars);
        let v = vars.add_vector("v", ScalarType::Float, 2);
        let x = vars.add("x", ScalarType::Float, Space::Private, Origin::Program);
        vec![
            decl,
            KStmt::Decl {
                var: v,
                init: KExpr::VecLoad {
                    array: out,
                    index: Box::new(KExpr::var(tid)),
                    lanes: 4,
                },
            },
            KStmt::Decl {
                var: x,
                init: KExpr::plus(KExpr::var(v), KExpr::Lane(v, 2)),
            },
            KStmt::VecStore {
                array: out,
                index: KExpr::var(tid),
                values: vec![KExpr::var(x); 3],
            },
            store(
                Space::Global,
                out,
                KExpr::VecLoad {
                    array: out,
                    index: Box::new(KExpr::int(0)),
                    lanes: 2,
                },
            ),
        ]
    });
    let e = errors(&bad);
    assert!(e.contains("has 2 lanes but is loaded with 4"), "{e}");
    assert!(e.contains("is used as a scalar (read it by lane)"), "{e}");
    assert!(e.contains("lane 2 of `v`"), "{e}");
    assert!(e.contains("a vector store of 3 float"), "{e}");
    assert!(e.contains("outside a vector's declaration"), "{e}");
}
