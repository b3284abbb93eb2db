//! Interpreter semantics on programs built directly as IR (no front-end):
//! boundary modes, reductions, locals, loops, tables, conditionals, defined
//! integer division, time-level rotation, and the checks before a run.

use stencilc::interp;

use stencilc::exec::{Bindings, Buffer, ExecError, FieldState};
use stencilc::ir::env::RunEnv;
use stencilc::ir::*;
use stencilc::source::{SourceFile, Span};

fn lit(v: Value) -> Expr {
    Expr::literal(v)
}

fn int(v: i32) -> Expr {
    lit(Value::Int(v))
}

fn param(p: usize) -> Expr {
    Expr::new(
        ExprKind::Param(ParamId(p)),
        ScalarType::Int,
        Span::default(),
    )
}

fn local(l: usize, ty: ScalarType) -> Expr {
    Expr::new(ExprKind::Local(LocalId(l)), ty, Span::default())
}

fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    let ty = if op.is_boolean() {
        ScalarType::Int
    } else {
        a.ty
    };
    Expr::new(
        ExprKind::Binary(op, Box::new(a), Box::new(b)),
        ty,
        Span::default(),
    )
}

fn grid_ref(field: usize, time: i32, offset: Vec<Expr>) -> GridRef {
    GridRef {
        field: FieldId(field),
        time,
        offset,
    }
}

fn load(field: usize, time: i32, offset: Vec<Expr>, ty: ScalarType) -> Expr {
    Expr::new(
        ExprKind::Load(grid_ref(field, time, offset)),
        ty,
        Span::default(),
    )
}

fn store(field: usize, time: i32, offset: Vec<Expr>, value: Expr) -> Stmt {
    Stmt::Store {
        target: grid_ref(field, time, offset),
        value,
        span: Span::default(),
    }
}

fn subset(ranges: Vec<(Expr, Expr)>) -> Subset {
    Subset {
        ranges,
        span: Span::default(),
    }
}

fn field(name: &str, ty: ScalarType, time_lo: i32, time_hi: i32, boundary: BoundaryMode) -> Field {
    Field {
        name: name.into(),
        ty,
        grid: GridId(0),
        time_lo,
        time_hi,
        boundary,
        span: Span::default(),
    }
}

/// A 1-D program on `grid g[n]` (parameter 0 is `n`).
fn program_1d(fields: Vec<Field>, iterate: Iterate) -> Program {
    Program {
        source: SourceFile::new("test.sdsl", ""),
        name: "test".into(),
        params: vec![Param {
            name: "n".into(),
            ty: ScalarType::Int,
            span: Span::default(),
        }],
        constants: vec![],
        grids: vec![Grid {
            name: "g".into(),
            dims: vec![param(0)],
            span: Span::default(),
        }],
        fields,
        tables: vec![],
        iterate: Some(iterate),
        hints: ScheduleHints::default(),
    }
}

fn iterate(max: i32, stencils: Vec<Stencil>, reductions: Vec<Reduction>) -> Iterate {
    Iterate {
        max_iters: int(max),
        stencils,
        reductions,
        check: None,
        span: Span::default(),
    }
}

fn stencil(parts: Vec<StencilPart>) -> Stencil {
    Stencil {
        name: "s".into(),
        parts,
        span: Span::default(),
    }
}

fn part(s: Subset, locals: Vec<Local>, body: Vec<Stmt>) -> StencilPart {
    StencilPart {
        subset: s,
        locals,
        body,
        span: Span::default(),
    }
}

fn run(
    program: &Program,
    n: i32,
    inputs: Vec<Option<Buffer>>,
) -> Result<(FieldState, stencilc::exec::RunSummary), ExecError> {
    let env = RunEnv::new(
        program,
        &Bindings {
            params: vec![Value::Int(n)],
        },
    )?;
    let mut state = FieldState::initial(program, &env, inputs)?;
    let summary = interp::run(program, &env, &mut state)?;
    Ok((state, summary))
}

/// `[0]out[0] = [0]src[-2] + 10 * [0]src[3]` on all points, for a boundary mode.
fn shifted_sum(mode: BoundaryMode, n: i32) -> Vec<f64> {
    let d = ScalarType::Double;
    let value = bin(
        BinaryOp::Add,
        load(0, 0, vec![int(-2)], d),
        bin(
            BinaryOp::Mul,
            lit(Value::Double(10.0)),
            load(0, 0, vec![int(3)], d),
        ),
    );
    let program = program_1d(
        vec![
            field("src", d, 0, 0, mode),
            field("out", d, 0, 0, BoundaryMode::None),
        ],
        iterate(
            1,
            vec![stencil(vec![part(
                subset(vec![(int(0), bin(BinaryOp::Sub, param(0), int(1)))]),
                vec![],
                vec![store(1, 0, vec![int(0)], value)],
            )])],
            vec![],
        ),
    );
    let src: Vec<f64> = (0..n).map(|i| (i + 1) as f64).collect();
    let (state, _) = run(&program, n, vec![Some(Buffer::Double(src)), None]).unwrap();
    state.newest(&program, 1).to_f64()
}

#[test]
fn boundary_modes_define_reads_outside_the_grid() {
    let n = 7i64;
    let value = |i: i64| (i + 1) as f64;
    for mode in [
        BoundaryMode::Clamp,
        BoundaryMode::Mirror,
        BoundaryMode::Periodic,
        BoundaryMode::Zero,
    ] {
        let got = shifted_sum(mode, n as i32);
        let read = |i: i64| mode.resolve(i, n).map_or(0.0, value);
        let want: Vec<f64> = (0..n).map(|i| read(i - 2) + 10.0 * read(i + 3)).collect();
        assert_eq!(got, want, "boundary {}", mode.name());
    }
    // Spot checks of the definitions themselves.
    assert_eq!(shifted_sum(BoundaryMode::Periodic, 7)[0], 6.0 + 10.0 * 4.0);
    assert_eq!(shifted_sum(BoundaryMode::Zero, 7)[6], 5.0);
    assert_eq!(shifted_sum(BoundaryMode::Mirror, 7)[0], 3.0 + 10.0 * 4.0);
}

fn reduction(name: &str, op: ReduceOp, ty: ScalarType, value: Expr, n_minus: i32) -> Reduction {
    Reduction {
        name: name.into(),
        op,
        ty,
        parts: vec![ReductionPart {
            subset: subset(vec![(int(0), bin(BinaryOp::Sub, param(0), int(n_minus)))]),
            value,
            span: Span::default(),
        }],
        span: Span::default(),
    }
}

#[test]
fn reductions_combine_every_point() {
    let d = ScalarType::Double;
    let i = ScalarType::Int;
    let x = || load(0, 0, vec![int(0)], d);
    let k = || load(1, 0, vec![int(0)], i);
    let program = program_1d(
        vec![
            field("x", d, 0, 0, BoundaryMode::None),
            field("k", i, 0, 0, BoundaryMode::None),
        ],
        iterate(
            1,
            vec![],
            vec![
                reduction("sum", ReduceOp::Sum, d, x(), 1),
                reduction("prod", ReduceOp::Product, i, k(), 1),
                reduction("max", ReduceOp::Max, d, x(), 1),
                reduction("min", ReduceOp::Min, d, x(), 1),
                reduction("count", ReduceOp::Sum, i, int(1), 1),
                reduction("empty", ReduceOp::Max, i, k(), 1001),
            ],
        ),
    );
    let n = 1000;
    let xs: Vec<f64> = (0..n)
        .map(|j| ((j * 37 % 101) as f64 - 50.0) * 0.25)
        .collect();
    let ks: Vec<i32> = (0..n)
        .map(|j| {
            if j % 100 == 7 {
                3
            } else if j % 250 == 1 {
                -1
            } else {
                1
            }
        })
        .collect();
    let (_, summary) = run(
        &program,
        n,
        vec![
            Some(Buffer::Double(xs.clone())),
            Some(Buffer::Int(ks.clone())),
        ],
    )
    .unwrap();
    let get = |name: &str| {
        summary
            .reductions
            .iter()
            .find(|(r, _)| r == name)
            .unwrap()
            .1
    };
    // Deterministic order for 1-D: runs of 256 points, each folded in order.
    let mut sum = 0.0;
    for run in xs.chunks(256) {
        sum += run.iter().fold(0.0, |acc, v| acc + v);
    }
    assert_eq!(get("sum"), Some(Value::Double(sum)));
    assert_eq!(get("prod"), Some(Value::Int(ks.iter().product())));
    assert_eq!(
        get("max"),
        Some(Value::Double(xs.iter().cloned().fold(f64::MIN, f64::max)))
    );
    assert_eq!(
        get("min"),
        Some(Value::Double(xs.iter().cloned().fold(f64::MAX, f64::min)))
    );
    assert_eq!(get("count"), Some(Value::Int(n)));
    assert_eq!(
        get("empty"),
        Some(Value::Int(i32::MIN)),
        "an empty subset gives the identity"
    );
    assert_eq!(summary.iterations, 1);
}

#[test]
fn locals_loops_tables_selects_and_integer_division() {
    // for j in -1..1 { acc = acc + K[j+1] * [0]x[j] }  (x clamped)
    // q = [0]x[0] > 2.5 ? acc : -acc;   [0]y[0] = q;
    // [0]z[0] = 100 / ([0]k[0])         (k = 0 somewhere: defined as 0)
    let d = ScalarType::Double;
    let i = ScalarType::Int;
    let j = || local(0, i);
    let acc = || local(1, d);
    let table = Table {
        name: "K".into(),
        ty: d,
        shape: vec![3],
        values: vec![Value::Double(0.25), Value::Double(0.5), Value::Double(0.25)],
        span: Span::default(),
    };
    let k_at = Expr::new(
        ExprKind::Table {
            table: TableId(0),
            index: vec![bin(BinaryOp::Add, j(), int(1))],
        },
        d,
        Span::default(),
    );
    let body = vec![
        Stmt::For {
            var: LocalId(0),
            lo: -1,
            hi: 1,
            body: vec![Stmt::Assign {
                local: LocalId(1),
                value: bin(
                    BinaryOp::Add,
                    acc(),
                    bin(BinaryOp::Mul, k_at, load(0, 0, vec![j()], d)),
                ),
                span: Span::default(),
            }],
            span: Span::default(),
        },
        store(
            1,
            0,
            vec![int(0)],
            Expr::new(
                ExprKind::Select {
                    cond: Box::new(bin(
                        BinaryOp::Gt,
                        load(0, 0, vec![int(0)], d),
                        lit(Value::Double(2.5)),
                    )),
                    then: Box::new(acc()),
                    otherwise: Box::new(Expr::new(
                        ExprKind::Unary(UnaryOp::Neg, Box::new(acc())),
                        d,
                        Span::default(),
                    )),
                },
                d,
                Span::default(),
            ),
        ),
        store(
            2,
            0,
            vec![int(0)],
            bin(BinaryOp::Div, int(100), load(3, 0, vec![int(0)], i)),
        ),
    ];
    let locals = vec![
        Local {
            name: "j".into(),
            ty: i,
            span: Span::default(),
        },
        Local {
            name: "acc".into(),
            ty: d,
            span: Span::default(),
        },
    ];
    let mut program = program_1d(
        vec![
            field("x", d, 0, 0, BoundaryMode::Clamp),
            field("y", d, 0, 0, BoundaryMode::None),
            field("z", i, 0, 0, BoundaryMode::None),
            field("k", i, 0, 0, BoundaryMode::None),
        ],
        iterate(
            1,
            vec![stencil(vec![part(
                subset(vec![(int(0), bin(BinaryOp::Sub, param(0), int(1)))]),
                locals,
                body,
            )])],
            vec![],
        ),
    );
    program.tables.push(table);
    let n = 600;
    let xs: Vec<f64> = (0..n).map(|v| (v % 7) as f64).collect();
    let ks: Vec<i32> = (0..n).map(|v| (v % 5) - 2).collect();
    let (state, _) = run(
        &program,
        n,
        vec![
            Some(Buffer::Double(xs.clone())),
            None,
            None,
            Some(Buffer::Int(ks.clone())),
        ],
    )
    .unwrap();
    let x = |v: i64| xs[v.clamp(0, n as i64 - 1) as usize];
    let want_y: Vec<f64> = (0..n as i64)
        .map(|p| {
            let acc = 0.0 + 0.25 * x(p - 1);
            let acc = acc + 0.5 * x(p);
            let acc = acc + 0.25 * x(p + 1);
            if x(p) > 2.5 {
                acc
            } else {
                -acc
            }
        })
        .collect();
    let want_z: Vec<i32> = ks
        .iter()
        .map(|&k| if k == 0 { 0 } else { 100 / k })
        .collect();
    assert_eq!(state.newest(&program, 1), &Buffer::Double(want_y));
    assert_eq!(state.newest(&program, 2), &Buffer::Int(want_z));
}

#[test]
fn three_levels_rotate_by_moving_buffers() {
    // u at -1,0,1: [1]u[0] = [0]u[0] + [-1]u[0] (Fibonacci per point).
    let l = ScalarType::Long;
    let value = bin(
        BinaryOp::Add,
        load(0, 0, vec![int(0)], l),
        load(0, -1, vec![int(0)], l),
    );
    let program = program_1d(
        vec![field("u", l, -1, 1, BoundaryMode::None)],
        iterate(
            10,
            vec![stencil(vec![part(
                subset(vec![(int(0), bin(BinaryOp::Sub, param(0), int(1)))]),
                vec![],
                vec![store(0, 1, vec![int(0)], value)],
            )])],
            vec![],
        ),
    );
    let (state, summary) = run(&program, 3, vec![Some(Buffer::Long(vec![1, 2, 3]))]).unwrap();
    assert_eq!(summary.iterations, 10);
    // Levels start equal (f, f); after 10 steps the newest is fib-like: a_k = a_{k-1} + a_{k-2}.
    let mut seq = vec![1i64, 1];
    for _ in 0..10 {
        let next = seq[seq.len() - 1] + seq[seq.len() - 2];
        seq.push(next);
    }
    let newest = seq[seq.len() - 1];
    assert_eq!(
        state.newest(&program, 0),
        &Buffer::Long(vec![newest, 2 * newest, 3 * newest])
    );
    assert_eq!(
        state.fields[0][0],
        Buffer::Long(vec![seq[10], 2 * seq[10], 3 * seq[10]])
    );
}

#[test]
fn checks_refuse_bad_sizes_inputs_and_accesses_before_running() {
    let d = ScalarType::Double;
    // [1]a[0] = [0]a[1] on [0:n-1]: reads past the end of a `none` field.
    let program = program_1d(
        vec![field("a", d, 0, 1, BoundaryMode::None)],
        iterate(
            1,
            vec![stencil(vec![part(
                subset(vec![(int(0), bin(BinaryOp::Sub, param(0), int(1)))]),
                vec![],
                vec![store(0, 1, vec![int(0)], load(0, 0, vec![int(1)], d))],
            )])],
            vec![],
        ),
    );
    let err = stencilc::exec::bind(
        &program,
        &Bindings {
            params: vec![Value::Int(10)],
        },
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("past the last element (n-1 = 9) for n = 10"),
        "{text}"
    );
    assert!(text.contains("boundary clamp"), "{text}");
    let static_errors = stencilc::analysis::static_checks(&program);
    assert_eq!(static_errors.len(), 1, "provable for every n");
    assert!(
        static_errors[0].message.contains("1 past the last element"),
        "{}",
        static_errors[0].message
    );

    let err = RunEnv::new(
        &program,
        &Bindings {
            params: vec![Value::Int(0)],
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("size 0"), "{err}");

    let mut ok = program.clone();
    ok.fields[0].boundary = BoundaryMode::Clamp;
    assert!(stencilc::analysis::static_checks(&ok).is_empty());
    let env = RunEnv::new(
        &ok,
        &Bindings {
            params: vec![Value::Int(4)],
        },
    )
    .unwrap();
    let err = FieldState::initial(&ok, &env, vec![Some(Buffer::Float(vec![0.0; 4]))]).unwrap_err();
    assert!(err.to_string().contains("declared double"), "{err}");
    let err = FieldState::initial(&ok, &env, vec![Some(Buffer::Double(vec![0.0; 5]))]).unwrap_err();
    assert!(
        err.to_string().contains("has 5 elements but its grid is 4"),
        "{err}"
    );
    let mut state = FieldState::initial(&ok, &env, vec![None]).unwrap();
    state.fields[0].pop();
    assert!(
        interp::run(&ok, &env, &mut state).is_err(),
        "a malformed state is refused"
    );
}
