//! Unit tests of the program-IR verifier: each breaks a valid hand-built
//! program in one way and checks that the verifier names what is wrong.

use super::*;
use crate::ir::{
    Check, ConstId, Constant, Field, Grid, GridId, Iterate, Param, ParamId, ReduceOp, Reduction,
    ReductionId, ReductionPart, ScheduleHints, Stencil, StencilPart, Table, TableId, Value,
};
use crate::source::SourceFile;

fn ex(kind: ExprKind, ty: ScalarType) -> Expr {
    Expr::new(kind, ty, Span::default())
}

fn int(v: i32) -> Expr {
    Expr::literal(Value::Int(v))
}

fn n() -> Expr {
    ex(ExprKind::Param(ParamId(0)), ScalarType::Int)
}

fn sub(a: Expr, b: Expr) -> Expr {
    let ty = a.ty;
    ex(
        ExprKind::Binary(BinaryOp::Sub, Box::new(a), Box::new(b)),
        ty,
    )
}

/// `[time]a[o0][o1]`.
fn load(time: i32, offset: Vec<Expr>) -> Expr {
    ex(
        ExprKind::Load(GridRef {
            field: FieldId(0),
            time,
            offset,
        }),
        ScalarType::Double,
    )
}

fn subset(lo: Expr, hi: Expr) -> Subset {
    Subset {
        ranges: vec![(lo.clone(), hi.clone()), (lo, hi)],
        span: Span::default(),
    }
}

fn local(name: &str, ty: ScalarType) -> Local {
    Local {
        name: name.into(),
        ty,
        span: Span::default(),
    }
}

/// A valid program:
///
/// ```text
/// param int n; double c = 0.5; const double K[3] = {...};
/// grid g[n][n]; double griddata a on g at 0,1;
/// iterate n { stencil s { [1:n-2][1:n-2] :
///     for i in -1..1 { sum = sum + K[i + 1] * [0]a[i][0]; }  [1]a[0][0] = sum; }
///   reduction r + { [0:n-1][0:n-1] : [1]a[0][0]; } } check (r < c) every 1
/// ```
fn program() -> Program {
    let i = ex(ExprKind::Local(LocalId(1)), ScalarType::Int);
    let sum = ex(ExprKind::Local(LocalId(0)), ScalarType::Double);
    let k = ex(
        ExprKind::Table {
            table: TableId(0),
            index: vec![ex(
                ExprKind::Binary(BinaryOp::Add, Box::new(i.clone()), Box::new(int(1))),
                ScalarType::Int,
            )],
        },
        ScalarType::Double,
    );
    let term = ex(
        ExprKind::Binary(
            BinaryOp::Mul,
            Box::new(k),
            Box::new(load(0, vec![i, int(0)])),
        ),
        ScalarType::Double,
    );
    let body = vec![
        Stmt::For {
            var: LocalId(1),
            lo: -1,
            hi: 1,
            body: vec![Stmt::Assign {
                local: LocalId(0),
                value: ex(
                    ExprKind::Binary(BinaryOp::Add, Box::new(sum.clone()), Box::new(term)),
                    ScalarType::Double,
                ),
                span: Span::default(),
            }],
            span: Span::default(),
        },
        Stmt::Store {
            target: GridRef {
                field: FieldId(0),
                time: 1,
                offset: vec![int(0), int(0)],
            },
            value: sum,
            span: Span::default(),
        },
    ];
    let cond = ex(
        ExprKind::Binary(
            BinaryOp::Lt,
            Box::new(ex(ExprKind::Reduction(ReductionId(0)), ScalarType::Double)),
            Box::new(ex(ExprKind::Const(ConstId(0)), ScalarType::Double)),
        ),
        ScalarType::Int,
    );
    Program {
        source: SourceFile::new("t.sdsl", ""),
        name: "t".into(),
        params: vec![Param {
            name: "n".into(),
            ty: ScalarType::Int,
            span: Span::default(),
        }],
        constants: vec![Constant {
            name: "c".into(),
            ty: ScalarType::Double,
            value: Expr::literal(Value::Double(0.5)),
            span: Span::default(),
        }],
        grids: vec![Grid {
            name: "g".into(),
            dims: vec![n(), n()],
            span: Span::default(),
        }],
        fields: vec![Field {
            name: "a".into(),
            ty: ScalarType::Double,
            grid: GridId(0),
            time_lo: 0,
            time_hi: 1,
            boundary: crate::ir::BoundaryMode::None,
            span: Span::default(),
        }],
        tables: vec![Table {
            name: "K".into(),
            ty: ScalarType::Double,
            shape: vec![3],
            values: vec![Value::Double(0.25), Value::Double(0.5), Value::Double(0.25)],
            span: Span::default(),
        }],
        iterate: Some(Iterate {
            max_iters: n(),
            stencils: vec![Stencil {
                name: "s".into(),
                parts: vec![StencilPart {
                    subset: subset(int(1), sub(n(), int(2))),
                    locals: vec![
                        local("sum", ScalarType::Double),
                        local("i", ScalarType::Int),
                    ],
                    body,
                    span: Span::default(),
                }],
                span: Span::default(),
            }],
            reductions: vec![Reduction {
                name: "r".into(),
                op: ReduceOp::Sum,
                ty: ScalarType::Double,
                parts: vec![ReductionPart {
                    subset: subset(int(0), sub(n(), int(1))),
                    value: load(1, vec![int(0), int(0)]),
                    span: Span::default(),
                }],
                span: Span::default(),
            }],
            check: Some(Check {
                cond,
                every: int(1),
                span: Span::default(),
            }),
            span: Span::default(),
        }),
        hints: ScheduleHints::default(),
    }
}

fn iterate(p: &mut Program) -> &mut Iterate {
    p.iterate.as_mut().expect("the test program has an iterate")
}

fn part(p: &mut Program) -> &mut StencilPart {
    &mut iterate(p).stencils[0].parts[0]
}

/// The store `[1]a[0][0] = sum`.
fn store(p: &mut Program) -> (&mut GridRef, &mut Expr) {
    match &mut part(p).body[1] {
        Stmt::Store { target, value, .. } => (target, value),
        _ => unreachable!("the second statement is the store"),
    }
}

/// The loop's body's assignment `sum = sum + K[i + 1] * [0]a[i][0]`.
fn loop_assign(p: &mut Program) -> &mut Expr {
    match &mut part(p).body[0] {
        Stmt::For { body, .. } => match &mut body[0] {
            Stmt::Assign { value, .. } => value,
            _ => unreachable!("the loop body is an assignment"),
        },
        _ => unreachable!("the first statement is the loop"),
    }
}

/// Verifies the broken program and checks that one message contains `want`.
#[track_caller]
fn fails_with(p: Program, want: &str) {
    let errors = verify(&p).expect_err("the broken program must fail verification");
    assert!(
        errors.iter().any(|e| e.contains(want)),
        "no message contains {want:?}: {errors:#?}"
    );
}

#[test]
fn the_hand_built_program_is_valid() {
    assert_eq!(verify(&program()), Ok(()));
}

#[test]
fn unresolved_ids_are_named() {
    let mut p = program();
    p.fields[0].grid = GridId(3);
    fails_with(p, "griddata `a`: is on grid 3 of 1");

    let mut p = program();
    store(&mut p).0.field = FieldId(2);
    fails_with(p, "stencil `s` part 0: accesses griddata 2 of 1");

    let mut p = program();
    p.grids[0].dims[0] = ex(ExprKind::Param(ParamId(4)), ScalarType::Int);
    fails_with(p, "grid `g`: uses parameter 4 where 1 can be used");

    let mut p = program();
    *store(&mut p).1 = ex(ExprKind::Local(LocalId(7)), ScalarType::Double);
    fails_with(p, "uses local 7 of 2");

    let mut p = program();
    iterate(&mut p).check.as_mut().unwrap().cond =
        ex(ExprKind::Reduction(ReductionId(1)), ScalarType::Int);
    fails_with(p, "the check: uses reduction 1 where 1 can be used");

    let mut p = program();
    *store(&mut p).1 = ex(
        ExprKind::Table {
            table: TableId(1),
            index: vec![int(0)],
        },
        ScalarType::Double,
    );
    fails_with(p, "uses table 1 where 1 can be used");
}

#[test]
fn a_constant_uses_only_earlier_constants() {
    let mut p = program();
    p.constants[0].value = ex(ExprKind::Const(ConstId(0)), ScalarType::Double);
    fails_with(p, "constant `c`: uses constant 0 where 0 can be used");
}

#[test]
fn types_must_agree() {
    let mut p = program();
    p.constants[0].value = Expr::literal(Value::Float(0.5));
    fails_with(p, "constant `c`: its value has type `float`, not `double`");

    let mut p = program();
    *store(&mut p).1 = Expr::literal(Value::Int(1));
    fails_with(p, "a stored value has type `int`, not `double`");

    let mut p = program();
    store(&mut p).1.ty = ScalarType::Float;
    fails_with(p, "a reference has type `float`, not `double`");

    let mut p = program();
    if let ExprKind::Binary(_, a, _) = &mut loop_assign(&mut p).kind {
        **a = ex(ExprKind::Local(LocalId(1)), ScalarType::Int);
    }
    fails_with(p, "`+` has operands of types `int` and `double`");

    let mut p = program();
    iterate(&mut p).check.as_mut().unwrap().cond.ty = ScalarType::Double;
    fails_with(p, "a `<` has type `double`, not `int`");

    let mut p = program();
    iterate(&mut p).reductions[0].ty = ScalarType::Float;
    fails_with(
        p,
        "reduction `r` part 0: its value has type `double`, not `float`",
    );

    let mut p = program();
    p.grids[0].dims[1] = Expr::literal(Value::Double(4.0));
    fails_with(p, "grid `g`: a size has type `double`, not an integer type");

    let mut p = program();
    p.tables[0].values[1] = Value::Float(0.5);
    fails_with(p, "table `K`: holds `0.5f` of type `float`, not `double`");
}

#[test]
fn operators_follow_the_language_rules() {
    let d = |v| Expr::literal(Value::Double(v));
    let mut p = program();
    *store(&mut p).1 = ex(
        ExprKind::Binary(BinaryOp::Rem, Box::new(d(1.0)), Box::new(d(2.0))),
        ScalarType::Double,
    );
    fails_with(p, "`%` has a floating-point operand");

    let mut p = program();
    *store(&mut p).1 = ex(
        ExprKind::Call {
            func: MathFn::Sqrt,
            float_form: true,
            args: vec![d(2.0)],
        },
        ScalarType::Double,
    );
    fails_with(p, "a call of `sqrt` has type `double`, not `float`");

    let mut p = program();
    *store(&mut p).1 = ex(
        ExprKind::Call {
            func: MathFn::Pow,
            float_form: false,
            args: vec![d(2.0)],
        },
        ScalarType::Double,
    );
    fails_with(p, "`pow` has 1 argument(s), not 2");

    let mut p = program();
    *store(&mut p).1 = ex(
        ExprKind::Select {
            cond: Box::new(int(1)),
            then: Box::new(d(1.0)),
            otherwise: Box::new(Expr::literal(Value::Float(2.0))),
        },
        ScalarType::Double,
    );
    fails_with(p, "the false arm of `?:` has type `float`, not `double`");

    let mut p = program();
    *store(&mut p).1 = ex(
        ExprKind::Unary(UnaryOp::Not, Box::new(d(1.0))),
        ScalarType::Double,
    );
    fails_with(p, "a `!` has type `double`, not `int`");
}

#[test]
fn time_offsets_and_offsets_match_the_field() {
    let mut p = program();
    store(&mut p).0.time = 2;
    fails_with(p, "accesses `a` at time offset 2, outside its levels 0..1");

    let mut p = program();
    store(&mut p).0.offset.pop();
    fails_with(p, "accesses `a` with 1 offset(s) on a 2-D grid");

    let mut p = program();
    p.fields[0].time_hi = -1;
    fails_with(p, "griddata `a`: has no time levels (0..-1)");
}

#[test]
fn subsets_have_their_grids_rank() {
    let mut p = program();
    part(&mut p).subset.ranges.pop();
    fails_with(p, "its subset has 1 dimension(s) but griddata `a` has 2");

    let mut p = program();
    iterate(&mut p).reductions[0].parts[0].subset.ranges.clear();
    fails_with(
        p,
        "reduction `r` part 0: has 0 subset dimension(s), not 1 to 3",
    );

    let mut p = program();
    p.grids[0].dims = vec![n(); 4];
    fails_with(p, "grid `g`: has 4 dimension(s), not 1 to 3");
}

#[test]
fn places_allow_what_the_language_allows() {
    let mut p = program();
    p.grids[0].dims[0] = load(0, vec![int(0), int(0)]);
    fails_with(
        p,
        "grid `g`: a griddata read is used in a size, bound or count",
    );

    let mut p = program();
    *store(&mut p).1 = ex(ExprKind::Reduction(ReductionId(0)), ScalarType::Double);
    fails_with(p, "a reduction is used in a stencil part");

    let mut p = program();
    iterate(&mut p).reductions[0].parts[0].value =
        ex(ExprKind::Local(LocalId(0)), ScalarType::Double);
    fails_with(
        p,
        "reduction `r` part 0: a local is used in a reduction value",
    );

    let mut p = program();
    store(&mut p).0.offset[0] = ex(ExprKind::Local(LocalId(0)), ScalarType::Double);
    fails_with(
        p,
        "a local (not a loop variable) is used in an offset or index",
    );

    let mut p = program();
    store(&mut p).0.offset[0] = ex(ExprKind::Local(LocalId(1)), ScalarType::Int);
    fails_with(p, "uses loop variable 1 outside its loop");
}

#[test]
fn loops_and_tables_are_well_formed() {
    let mut p = program();
    part(&mut p).locals[1].ty = ScalarType::Long;
    fails_with(p, "a loop variable has type `long`, not `int`");

    let mut p = program();
    part(&mut p).body.push(Stmt::Assign {
        local: LocalId(1),
        value: int(0),
        span: Span::default(),
    });
    fails_with(p, "assigns loop variable 1");

    let mut p = program();
    p.tables[0].values.pop();
    fails_with(p, "table `K`: has shape [3] but 2 value(s)");

    let mut p = program();
    if let ExprKind::Binary(_, _, b) = &mut loop_assign(&mut p).kind {
        if let ExprKind::Binary(_, k, _) = &mut b.kind {
            if let ExprKind::Table { index, .. } = &mut k.kind {
                index.push(int(0));
            }
        }
    }
    fails_with(p, "reads table `K` with 2 index(es) for 1 dimension(s)");
}

#[test]
fn a_violation_is_an_internal_error_diagnostic() {
    let mut p = program();
    p.fields[0].grid = GridId(3);
    if cfg!(debug_assertions) {
        let diag = debug_check(&p).expect_err("a broken program fails the check");
        assert!(diag.message.starts_with("internal error in stencilc"));
        assert!(diag.message.contains("griddata `a`: is on grid 3 of 1"));
        assert!(diag
            .help
            .as_deref()
            .unwrap_or("")
            .contains("a bug in stencilc"));
    }
    assert!(debug_check(&program()).is_ok());
}
