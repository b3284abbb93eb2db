//! Front-end: each construct parses into the expected IR, and every example parses.

use crate::common;

use stencilc::front::parse_program;
use stencilc::ir::{
    BinaryOp, BoundaryMode, ExprKind, MathFn, Program, ReduceOp, ScalarType, Stmt, Value,
};
use stencilc::source::SourceFile;

fn parse(text: &str) -> Program {
    match parse_program(SourceFile::new("test.sdsl", text)).and_then(stencilc::analysis::checked) {
        Ok(p) => p,
        Err(d) => panic!("program failed to compile:\n{d}"),
    }
}

fn example(name: &str) -> Program {
    let path = common::examples_dir().join(name);
    let text = std::fs::read_to_string(&path).expect("example exists");
    match parse_program(SourceFile::new(path.display().to_string(), text))
        .and_then(stencilc::analysis::checked)
    {
        Ok(p) => p,
        Err(d) => panic!("{name} failed:\n{d}"),
    }
}

/// The body of the only part of the first stencil.
fn first_body(p: &Program) -> &[Stmt] {
    &p.iterate.as_ref().expect("iterate").stencils[0].parts[0].body
}

#[test]
fn all_examples_parse() {
    let mut count = 0;
    for entry in std::fs::read_dir(common::examples_dir()).expect("examples dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "sdsl") {
            let file = path
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            let program = example(&file);
            assert_eq!(program.name, file.trim_end_matches(".sdsl"));
            assert!(program.iterate.is_some(), "{file} has an iterate");
            count += 1;
        }
    }
    assert!(count >= 6, "found {count} examples");
}

#[test]
fn display_of_jacobi2d() {
    insta::assert_snapshot!(example("jacobi2d.sdsl").to_string());
}

#[test]
fn display_of_gaussian_blur() {
    insta::assert_snapshot!(example("gaussian_blur.sdsl").to_string());
}

#[test]
fn display_uses_the_program_names() {
    for name in ["rician3d.sdsl", "wave2d.sdsl", "heat3d.sdsl"] {
        let text = example(name).to_string();
        assert!(text.contains("iterate"), "{text}");
        assert!(
            !text.contains("param0") && !text.contains("field0"),
            "{text}"
        );
    }
    let wave = example("wave2d.sdsl").to_string();
    assert!(wave.contains("float griddata u on g at -1,0,1;"), "{wave}");
    assert!(wave.contains("- [-1]u[0][0]"), "{wave}");
}

#[test]
fn literals_have_c_types() {
    let p = parse(
        "long a = 1L;\nfloat b = .5f;\ndouble c = 1.0E-20;\nlong d = 3000000000;\nint e = 118;\nfloat f = 2;\n",
    );
    let ty = |i: usize| p.constants[i].value.ty;
    assert_eq!(ty(0), ScalarType::Long);
    assert_eq!(
        p.constants[1].value.kind,
        ExprKind::Literal(Value::Float(0.5))
    );
    assert_eq!(
        p.constants[2].value.kind,
        ExprKind::Literal(Value::Double(1.0e-20))
    );
    assert_eq!(
        p.constants[3].value.kind,
        ExprKind::Literal(Value::Long(3_000_000_000))
    );
    assert_eq!(
        p.constants[4].value.kind,
        ExprKind::Literal(Value::Int(118))
    );
    // `float f = 2;` converts the int literal explicitly.
    assert_eq!(ty(5), ScalarType::Float);
    assert!(
        matches!(&p.constants[5].value.kind, ExprKind::Cast(inner) if inner.ty == ScalarType::Int)
    );
}

/// `0.004833025624975562` lies just below the midpoint of two adjacent floats
/// but within half a double ulp of it: read as a double and then narrowed it
/// ties to the even float `0x3b9e5e5c`, whereas C reads the `f` literal straight
/// into the nearest float, `0x3b9e5e5b`.
#[test]
fn float_literals_round_once_like_c() {
    let text = "0.004833025624975562";
    let double_rounded = text.parse::<f64>().expect("valid") as f32;
    assert_eq!(
        double_rounded.to_bits(),
        0x3b9e_5e5c,
        "the sample must double-round"
    );
    let p = parse(&format!(
        "float a = {text}f;\nconst float K[1] = {{{text}f}};\ndouble d = {text};\n"
    ));
    let ExprKind::Literal(Value::Float(a)) = p.constants[0].value.kind else {
        panic!("expected a float literal: {:?}", p.constants[0].value);
    };
    assert_eq!(a.to_bits(), 0x3b9e_5e5b);
    let Value::Float(k) = p.tables[0].values[0] else {
        panic!("expected a float table entry: {:?}", p.tables[0].values);
    };
    assert_eq!(k.to_bits(), 0x3b9e_5e5b);
    // The unsuffixed literal stays a double, read once as a double.
    assert_eq!(
        p.constants[1].value.kind,
        ExprKind::Literal(Value::Double(0.004833025624975562))
    );
}

#[test]
fn constants_use_parameters_and_usual_conversions() {
    let p = parse("double sigma;\nint n;\nconst double s2 = sigma*sigma;\ndouble h = 1.0 / n;\n");
    assert_eq!(p.constants.len(), 2);
    let ExprKind::Binary(BinaryOp::Div, lhs, rhs) = &p.constants[1].value.kind else {
        panic!("expected a division: {:?}", p.constants[1].value);
    };
    assert_eq!(lhs.ty, ScalarType::Double);
    // `n` is converted to double before dividing.
    assert!(matches!(&rhs.kind, ExprKind::Cast(inner) if matches!(inner.kind, ExprKind::Param(_))));
    assert_eq!(
        p.display_expr(&p.constants[1].value, &[]),
        "1.0 / (double)n"
    );
}

#[test]
fn grids_griddata_and_boundaries() {
    let p = parse(
        "int n;\nint m;\ngrid a[n];\ngrid b[n][m+1];\ngrid c[2*n][n][m];\n\
         float griddata u on a at -1,0,1 boundary periodic;\nint griddata v on b at 0 boundary mirror;\n\
         long griddata w on c at 0,1 boundary zero;\ndouble griddata x on b at 2,3,4,5 boundary clamp;\n\
         double griddata y on c at 0 boundary none;\n",
    );
    let ranks: Vec<usize> = p.grids.iter().map(|g| g.rank()).collect();
    assert_eq!(ranks, vec![1, 2, 3]);
    let u = &p.fields[0];
    assert_eq!((u.time_lo, u.time_hi, u.levels()), (-1, 1, 3));
    assert_eq!(u.boundary, BoundaryMode::Periodic);
    assert_eq!(p.fields[1].boundary, BoundaryMode::Mirror);
    assert_eq!(p.fields[1].ty, ScalarType::Int);
    assert_eq!(p.fields[2].boundary, BoundaryMode::Zero);
    assert_eq!((p.fields[3].time_lo, p.fields[3].time_hi), (2, 5));
    assert_eq!(p.fields[3].boundary, BoundaryMode::Clamp);
    assert_eq!(p.fields[4].boundary, BoundaryMode::None);
    assert!(p.iterate.is_none());
}

#[test]
fn coefficient_tables_store_converted_values() {
    let p = parse(
        "const float K[3][3] = {{1, 2, 1}, {2, 4, 2}, {1, 2, 1}};\n\
         const double L[2][1][2] = {{{0.5, -1}}, {{2, 3.25}}};\nconst int M[4] = {1, -2, 3, 4,};\n",
    );
    let k = &p.tables[0];
    assert_eq!(k.shape, vec![3, 3]);
    assert_eq!(k.values[4], Value::Float(4.0));
    assert!(k.values.iter().all(|v| v.ty() == ScalarType::Float));
    assert_eq!(p.tables[1].shape, vec![2, 1, 2]);
    assert_eq!(
        p.tables[1].values,
        vec![
            Value::Double(0.5),
            Value::Double(-1.0),
            Value::Double(2.0),
            Value::Double(3.25)
        ]
    );
    assert_eq!(p.tables[2].values[1], Value::Int(-2));
}

#[test]
fn loops_tables_and_local_shadowing_in_point_functions() {
    let p = parse(
        "int n;\nint R = 1;\ngrid g[n][n];\nfloat griddata a on g at 0 boundary clamp;\nfloat griddata b on g at 0;\n\
         const float K[3][3] = {{1,2,1},{2,4,2},{1,2,1}};\n\
         pointfunction blur(src, dst) {\n  float n = 0.0f;\n  for i in -R..R {\n    for j in -1..1 {\n      n = n + K[i+1][j+1] * [0]src[i][j];\n    }\n  }\n  [0]dst[0][0] = n / 16;\n}\n\
         iterate 1 {\n  stencil s {\n    [0:n-1][0:n-1] : blur(a, b);\n  }\n}\n",
    );
    let part = &p.iterate.as_ref().expect("iterate").stencils[0].parts[0];
    // The local `n` shadows the parameter `n` inside the function only.
    let names: Vec<&str> = part.locals.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, vec!["n", "i", "j"]);
    assert_eq!(part.locals[1].ty, ScalarType::Int);
    let Stmt::For { lo, hi, body, .. } = &part.body[1] else {
        panic!("expected a loop: {:?}", part.body[1]);
    };
    assert_eq!((*lo, *hi), (-1, 1));
    assert!(matches!(&body[0], Stmt::For { lo: -1, hi: 1, .. }));
    // The store divides a float by the int 16, converted to float.
    let Stmt::Store { value, .. } = &part.body[2] else {
        panic!("expected a store");
    };
    assert_eq!(p.display_expr(value, &part.locals), "n / (float)16");
    // The subset bound still uses the program's parameter `n`.
    assert!(matches!(part.subset.ranges[0].1.kind, ExprKind::Binary(..)));
}

#[test]
fn nested_point_function_calls_get_distinct_locals() {
    let p = parse(
        "int n;\ngrid g[n];\ndouble griddata a on g at 0,1;\n\
         pointfunction add_one(x) {\n  double t = [0]x[0] + 1.0;\n  [1]x[0] = t;\n}\n\
         pointfunction twice(y) {\n  add_one(y);\n  add_one(y);\n}\n\
         iterate 1 {\n  stencil s {\n    [0:n-1] : twice(a);\n  }\n}\n",
    );
    let part = &p.iterate.as_ref().expect("iterate").stencils[0].parts[0];
    assert_eq!(part.locals.len(), 2);
    assert_eq!(part.body.len(), 4);
    let text = p.to_string();
    assert!(
        text.contains("t_0 = [0]a[0] + 1.0;") && text.contains("t_1 = [0]a[0] + 1.0;"),
        "{text}"
    );
}

#[test]
fn conditionals_comparisons_and_logic() {
    let p = parse(
        "int n;\nfloat lim;\ngrid g[n];\nfloat griddata a on g at 0,1;\n\
         iterate 1 {\n  stencil s {\n    [0:n-1] : [1]a[0] = [0]a[0] > lim && !([0]a[0] == 0) || n % 2 != 0 ? lim : [0]a[0];\n  }\n}\n",
    );
    let Stmt::Store { value, .. } = &first_body(&p)[0] else {
        panic!("expected a store")
    };
    let ExprKind::Select { cond, then, .. } = &value.kind else {
        panic!("expected a conditional: {value:?}")
    };
    assert_eq!(cond.ty, ScalarType::Int);
    assert!(matches!(cond.kind, ExprKind::Binary(BinaryOp::Or, _, _)));
    assert_eq!(then.ty, ScalarType::Float);
    assert_eq!(
        p.display_expr(value, &[]),
        "[0]a[0] > lim && !([0]a[0] == (float)0) || n % 2 != 0 ? lim : [0]a[0]"
    );
}

#[test]
fn math_functions_convert_their_arguments() {
    let p = parse(
        "int n;\ngrid g[n];\nfloat griddata a on g at 0,1;\n\
         iterate 1 {\n  stencil s {\n    [0:n-1] : [1]a[0] = sqrtf([0]a[0]) + pow([0]a[0], 2) + fminf(1, floorf(0.5f));\n  }\n}\n",
    );
    let Stmt::Store { value, .. } = &first_body(&p)[0] else {
        panic!("expected a store")
    };
    let mut calls = Vec::new();
    value.visit(&mut |e| {
        if let ExprKind::Call {
            func,
            float_form,
            args,
        } = &e.kind
        {
            calls.push((
                *func,
                *float_form,
                e.ty,
                args.iter().map(|a| a.ty).collect::<Vec<_>>(),
            ));
        }
    });
    assert_eq!(calls.len(), 4);
    assert!(calls.contains(&(
        MathFn::Fmin,
        true,
        ScalarType::Float,
        vec![ScalarType::Float; 2]
    )));
    assert!(calls.contains(&(
        MathFn::Floor,
        true,
        ScalarType::Float,
        vec![ScalarType::Float]
    )));
    assert!(calls.contains(&(
        MathFn::Sqrt,
        true,
        ScalarType::Float,
        vec![ScalarType::Float]
    )));
    assert!(calls.contains(&(
        MathFn::Pow,
        false,
        ScalarType::Double,
        vec![ScalarType::Double; 2]
    )));
    // float + double is double; the store converts back to float.
    assert!(matches!(value.kind, ExprKind::Cast(_)));
    assert_eq!(value.ty, ScalarType::Float);
}

#[test]
fn parameter_offsets_counts_and_reduction_types() {
    let p = parse(
        "int Nx;\nint steps;\nint k;\ngrid g[4][4][Nx];\ndouble griddata phi on g at 0,1;\nint griddata c on g at 0;\n\
         iterate steps*2 {\n  stencil edge {\n    [0:3][0:3][0] : [1]phi[0][0][0] = [0]phi[0][0][Nx-1];\n  }\n\
           reduction total + {\n    [0:3][0:3][0:Nx-1] : [0]c[0][0][0];\n    [0][0][0] : [1]phi[0][0][0];\n  }\n\
           reduction big max {\n    [0][0][0] : [0]c[0][0][0];\n  }\n} check (total > 10 || big >= 3) every k+1 iterations\n",
    );
    let it = p.iterate.as_ref().expect("iterate");
    assert_eq!(p.display_expr(&it.max_iters, &[]), "steps * 2");
    let Stmt::Store { value, .. } = &first_body(&p)[0] else {
        panic!("expected a store")
    };
    let ExprKind::Load(r) = &value.kind else {
        panic!("expected a load")
    };
    assert_eq!(p.display_expr(&r.offset[2], &[]), "Nx - 1");
    let total = &it.reductions[0];
    assert_eq!((total.op, total.ty), (ReduceOp::Sum, ScalarType::Double));
    assert!(matches!(total.parts[0].value.kind, ExprKind::Cast(_)));
    assert_eq!(
        (it.reductions[1].op, it.reductions[1].ty),
        (ReduceOp::Max, ScalarType::Int)
    );
    let check = it.check.as_ref().expect("check");
    assert_eq!(
        p.display_expr(&check.cond, &[]),
        "total > (double)10 || big >= 3"
    );
    assert_eq!(p.display_expr(&check.every, &[]), "k + 1");
}

#[test]
fn reading_the_written_level_at_offset_zero_is_allowed() {
    // A later statement reads, at the same point, what an earlier one wrote.
    let p = parse(
        "int n;\ngrid g[n];\nfloat griddata a on g at 0,1;\nfloat griddata b on g at 0;\n\
         iterate 1 {\n  stencil s {\n    [1:n-2] : [0]b[0] = [0]a[-1] + [0]a[1];\n    [1:n-2] : [1]a[0] = [0]b[0] * 0.5f;\n  }\n}\n",
    );
    assert_eq!(
        p.iterate.as_ref().expect("iterate").stencils[0].parts.len(),
        2
    );
}

#[test]
fn figure_7_7_update_u_verbatim() {
    // The guide's text, including its unparenthesised denominator.
    let p = parse(
        "int dim0;\nint dim1;\nint dim2;\ndouble sigma;\ndouble lambda;\n\
double DT = 5.0;\ndouble EPSILON = 1.0E-20;\ndouble sigma2 = sigma*sigma;\ndouble gamma = lambda/sigma2;\ndouble TOL = 0.00001;\n\
grid g[dim2][dim1][dim0];\ndouble griddata U on g at 0,1;\ndouble griddata G on g at 0;\ndouble griddata F on g at 0;\n
    pointfunction update_u(u,g,f) {
        double r = [0]u[0][0][0]*[0]f[0][0][0]/sigma2;
        r = ( r*(2.38944 + r*(0.950037 + r)) )
            / ( 4.65314 + r*(2.57541 + r*(1.48937 + r)) );
        [1]u[0][0][0] = ([0]u[0][0][0] +
            DT*([0]u[ 0][ 1][ 0]*[0]g[ 0][ 1][ 0] +
            [0]u[ 0][ -1][ 0]*[0]g[ 0][ -1][ 0] +
            [0]u[ 0][ 0][ 1]*[0]g[ 0][ 0][ 1] +
            [0]u[ 0][ 0][ -1]*[0]g[ 0][ 0][ -1] +
            [0]u[ 1][ 0][ 0]*[0]g[ 1][ 0][ 0] +
            [0]u[ -1][ 0][ 0]*[0]g[ -1][ 0][ 0] +
            gamma*[0]f[0][0][0]*r))
        /
        (1.0 + DT*[0]g[ 0][ 1][ 0] +
            [0]g[ 0][ -1][ 0] +
            [0]g[ 0][ 0][ 1] +
            [0]g[ 0][ 0][ -1] +
            [0]g[ 1][ 0][ 0] +
            [0]g[ -1][ 0][ 0] +
            gamma);
    }

    iterate 50 {
        stencil us {
            [1:dim2-2][1:dim1-2][1:dim0-2] : update_u(U,G,F);
        }
        reduction max_diff max {
            [1:dim2-2][1:dim1-2][1:dim0-2] : fabs([1]U[0][0][0] - [0]U[0][0][0]);
        }
    } check (max_diff < TOL) every 10 iterations
",
    );
    let body = first_body(&p);
    assert_eq!(body.len(), 3);
    let Stmt::Store { value, .. } = &body[2] else {
        panic!("expected a store")
    };
    let text = p.display_expr(value, &[]);
    // Precedence: only the first G term is multiplied by DT.
    assert!(text.ends_with("/ (1.0 + DT * [0]G[0][1][0] + [0]G[0][-1][0] + [0]G[0][0][1] + [0]G[0][0][-1] + [0]G[1][0][0] + [0]G[-1][0][0] + gamma)"), "{text}");
}

#[test]
fn grid_size_parameters_may_be_declared_anywhere_before_use() {
    let p = parse(
        "int n;\ndouble c = 1.0;\ngrid a[n];\nint m;\ngrid b[n][m];\nconst double d = c * m;\n",
    );
    assert_eq!(p.params.len(), 2);
    assert_eq!(p.grids[1].rank(), 2);
    assert_eq!(p.display_expr(&p.constants[1].value, &[]), "c * (double)m");
}
