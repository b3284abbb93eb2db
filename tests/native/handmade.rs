//! The native back-end on programs built directly as IR (no front-end needed):
//! boundary modes, rotation and reductions, checked against a reference written
//! here in Rust with the same operation order.

use crate::common;

use std::sync::Arc;

use stencilc::exec::options::RunOptions;
use stencilc::exec::{native, Buffer, FieldState};
use stencilc::ir::env::{Bindings, RunEnv};
use stencilc::ir::*;
use stencilc::source::{SourceFile, Span};

fn cc_available() -> bool {
    common::runtime_available(
        "cc",
        native::Compiler::from_env()
            .map(|_| ())
            .map_err(|e| e.to_string()),
    )
}

fn e(kind: ExprKind, ty: ScalarType) -> Expr {
    Expr::new(kind, ty, Span::default())
}
fn int(v: i32) -> Expr {
    Expr::literal(Value::Int(v))
}
fn param(i: usize) -> Expr {
    e(ExprKind::Param(ParamId(i)), ScalarType::Int)
}
fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    let ty = if op.is_boolean() {
        ScalarType::Int
    } else {
        a.ty
    };
    e(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty)
}
fn load(field: usize, time: i32, off: &[i32], ty: ScalarType) -> Expr {
    e(
        ExprKind::Load(GridRef {
            field: FieldId(field),
            time,
            offset: off.iter().map(|&o| int(o)).collect(),
        }),
        ty,
    )
}

/// `[1]a = 0.2f * (5-point sum of [0]a)` over the whole grid with boundary `mode`,
/// iterate `iters` with a max-reduction of |[1]a - [0]a| checked every 2.
fn jacobi(mode: BoundaryMode, iters: i32) -> Program {
    let f = ScalarType::Float;
    let sum = [[-1, 0], [0, -1], [0, 0], [0, 1], [1, 0]]
        .iter()
        .map(|o| load(0, 0, o, f))
        .reduce(|a, b| bin(BinaryOp::Add, a, b))
        .unwrap();
    let value = bin(BinaryOp::Mul, Expr::literal(Value::Float(0.2)), sum);
    let full = || Subset {
        ranges: vec![
            (int(0), bin(BinaryOp::Sub, param(1), int(1))),
            (int(0), bin(BinaryOp::Sub, param(0), int(1))),
        ],
        span: Span::default(),
    };
    let diff = bin(
        BinaryOp::Sub,
        load(0, 1, &[0, 0], f),
        load(0, 0, &[0, 0], f),
    );
    let fabs = e(
        ExprKind::Call {
            func: MathFn::Fabs,
            float_form: true,
            args: vec![diff],
        },
        f,
    );
    let span = |a: usize, b: usize| Span::new(a, b);
    Program {
        source: SourceFile::new(
            "jacobi_hand.sdsl",
            "stencil jacobi {\n  [0:n-1][0:m-1] : five_point(a);\n}\n",
        ),
        name: "jacobi_hand".into(),
        params: vec![
            Param {
                name: "m".into(),
                ty: ScalarType::Int,
                span: Span::default(),
            },
            Param {
                name: "n".into(),
                ty: ScalarType::Int,
                span: Span::default(),
            },
        ],
        constants: vec![],
        grids: vec![Grid {
            name: "g".into(),
            dims: vec![param(1), param(0)],
            span: Span::default(),
        }],
        fields: vec![Field {
            name: "a".into(),
            ty: f,
            grid: GridId(0),
            time_lo: 0,
            time_hi: 1,
            boundary: mode,
            span: Span::default(),
        }],
        tables: vec![],
        iterate: Some(Iterate {
            max_iters: int(iters),
            stencils: vec![Stencil {
                name: "jacobi".into(),
                parts: vec![StencilPart {
                    subset: full(),
                    locals: vec![],
                    body: vec![Stmt::Store {
                        target: GridRef {
                            field: FieldId(0),
                            time: 1,
                            offset: vec![int(0), int(0)],
                        },
                        value,
                        span: Span::default(),
                    }],
                    span: span(19, 53),
                }],
                span: span(0, 10),
            }],
            reductions: vec![Reduction {
                name: "max_diff".into(),
                op: ReduceOp::Max,
                ty: f,
                parts: vec![ReductionPart {
                    subset: full(),
                    value: fabs,
                    span: Span::default(),
                }],
                span: Span::default(),
            }],
            check: Some(Check {
                cond: bin(
                    BinaryOp::Lt,
                    e(ExprKind::Reduction(ReductionId(0)), f),
                    Expr::literal(Value::Float(1e-6)),
                ),
                every: int(2),
                span: Span::default(),
            }),
            span: Span::default(),
        }),
        hints: ScheduleHints::default(),
    }
}

fn reference(
    mode: BoundaryMode,
    rows: usize,
    cols: usize,
    iters: usize,
    input: &[f32],
) -> (Vec<f32>, u64, f32) {
    let mut cur = input.to_vec();
    let mut next = input.to_vec();
    let mut last = 0.0f32;
    for k in 1..=iters {
        for i in 0..rows as i64 {
            for j in 0..cols as i64 {
                let read = |di: i64, dj: i64| -> f32 {
                    match (
                        mode.resolve(i + di, rows as i64),
                        mode.resolve(j + dj, cols as i64),
                    ) {
                        (Some(r), Some(c)) => cur[r as usize * cols + c as usize],
                        _ => 0.0,
                    }
                };
                let s = read(-1, 0) + read(0, -1) + read(0, 0) + read(0, 1) + read(1, 0);
                next[i as usize * cols + j as usize] = 0.2f32 * s;
            }
        }
        let mut stop = false;
        if k % 2 == 0 {
            last = cur
                .iter()
                .zip(&next)
                .map(|(a, b)| (b - a).abs())
                .fold(f32::NEG_INFINITY, f32::max);
            stop = last < 1e-6;
        }
        std::mem::swap(&mut cur, &mut next);
        if stop {
            return (cur, k as u64, last);
        }
    }
    (cur, iters as u64, last)
}

#[test]
fn jacobi_matches_reference_for_every_boundary_mode() {
    if !cc_available() {
        return;
    }
    let (rows, cols, iters) = (13usize, 17usize, 7);
    let input: Vec<f32> = (0..rows * cols)
        .map(|i| ((i * 37 % 101) as f32) / 7.0)
        .collect();
    for mode in [
        BoundaryMode::Clamp,
        BoundaryMode::Mirror,
        BoundaryMode::Periodic,
        BoundaryMode::Zero,
    ] {
        let program = jacobi(mode, iters as i32);
        let env = RunEnv::new(
            &program,
            &Bindings {
                params: vec![Value::Int(cols as i32), Value::Int(rows as i32)],
            },
        )
        .unwrap();
        assert_eq!(env.grid_dims(), [vec![rows, cols]]);
        assert_eq!((env.max_iters(), env.every()), (iters as u64, Some(2)));
        let mut state = FieldState {
            fields: vec![vec![
                Buffer::Float(input.clone()),
                Buffer::Float(input.clone()),
            ]],
        };
        let summary = native::run(
            &program,
            &env,
            &mut state,
            &RunOptions::default(),
            &mut |_| {},
        )
        .unwrap();
        let (expected, expected_iters, expected_max) = reference(mode, rows, cols, iters, &input);
        assert_eq!(summary.iterations, expected_iters, "{mode:?}");
        assert_eq!(
            state.newest(&program, 0),
            &Buffer::Float(expected),
            "{mode:?}"
        );
        assert_eq!(
            summary.reductions[0].1,
            Some(Value::Float(expected_max)),
            "{mode:?}"
        );
    }
}

#[test]
fn emitted_c_peels_the_border() {
    let program = jacobi(BoundaryMode::Clamp, 3);
    let unit = stencilc::back::c::emit_program(&program);
    println!("{}", unit.source);
    assert!(unit.source.contains("sdsl_clamp("));
    assert!(unit
        .source
        .contains("for (long i1 = in_lo1; i1 <= in_hi1; i1++) {"));
    let _ = Arc::clone(&program.source);
}
