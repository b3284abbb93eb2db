//! Footprints and static bounds checks on the examples and small programs.

use crate::common;

use stencilc::analysis::{static_checks, Footprint};
use stencilc::exec::Bindings;
use stencilc::ir::env::RunEnv;
use stencilc::ir::{FieldId, Program, Value};
use stencilc::source::SourceFile;

fn parse(name: &str, text: &str) -> Program {
    match stencilc::front::parse_program(SourceFile::new(name, text))
        .and_then(stencilc::analysis::checked)
    {
        Ok(p) => p,
        Err(d) => panic!("{name} does not compile:\n{d}"),
    }
}

fn example(name: &str) -> Program {
    let text = std::fs::read_to_string(common::examples_dir().join(name)).expect("example exists");
    parse(name, &text)
}

fn field(program: &Program, name: &str) -> FieldId {
    FieldId(
        program
            .fields
            .iter()
            .position(|f| f.name == name)
            .expect("field exists"),
    )
}

#[test]
fn jacobi_reads_a_one_point_halo_and_writes_the_next_level() {
    let p = example("jacobi2d.sdsl");
    let a = field(&p, "a");
    let fp = Footprint::of_stencil(&p, 0);
    assert_eq!(
        fp.read_extent(a, 0).unwrap().axes,
        vec![Some((-1, 1)), Some((-1, 1))]
    );
    assert!(fp.read_extent(a, 1).is_none());
    assert_eq!(fp.written(), vec![(a, 1)]);
    assert_eq!(fp.read_only(), vec![(a, 0)]);
    let reduction = Footprint::of_reduction(&p, 0);
    assert_eq!(
        reduction.read_extent(a, 1).unwrap().axes,
        vec![Some((0, 0)), Some((0, 0))]
    );
    assert!(reduction.writes.is_empty());
}

#[test]
fn rician_stencils_read_g_and_f_only() {
    let p = example("rician3d.sdsl");
    let (u, g, f) = (field(&p, "U"), field(&p, "G"), field(&p, "F"));
    let gs = Footprint::of_stencil(&p, 0);
    assert_eq!(gs.written(), vec![(g, 0)]);
    assert_eq!(gs.halo(u).unwrap(), vec![Some((-1, 1)); 3]);
    let us = Footprint::of_stencil(&p, 1);
    assert_eq!(us.written(), vec![(u, 1)]);
    assert_eq!(us.read_only(), vec![(u, 0), (g, 0), (f, 0)]);
    assert_eq!(us.read_extent(f, 0).unwrap().axes, vec![Some((0, 0)); 3]);
    assert_eq!(us.halo(g).unwrap(), vec![Some((-1, 1)); 3]);
}

#[test]
fn blur_halo_comes_from_the_loop_bounds() {
    let p = example("gaussian_blur.sdsl");
    let fp = Footprint::of_stencil(&p, 0);
    assert_eq!(
        fp.halo(field(&p, "img")).unwrap(),
        vec![Some((-3, 3)), Some((-3, 3))]
    );
    let p = example("gaussian_blur_separable.sdsl");
    assert_eq!(
        Footprint::of_stencil(&p, 0).halo(field(&p, "img")).unwrap(),
        vec![Some((0, 0)), Some((-3, 3))]
    );
    assert_eq!(
        Footprint::of_stencil(&p, 1).halo(field(&p, "tmp")).unwrap(),
        vec![Some((-3, 3)), Some((0, 0))]
    );
}

const PERIODIC_EDGE: &str = "\
int n;
grid g[n][n];
double griddata a on g at 0,1 boundary periodic;
iterate 1 {
    stencil s {
        [0:n-1][0:n-1] : [1]a[0][0] = [0]a[0][n-1] + [0]a[1][0];
    }
}
";

#[test]
fn offsets_with_parameters_are_known_only_with_values() {
    let p = parse("edge.sdsl", PERIODIC_EDGE);
    let a = field(&p, "a");
    assert_eq!(
        Footprint::of_stencil(&p, 0).read_extent(a, 0).unwrap().axes,
        vec![Some((0, 1)), None]
    );
    let env = RunEnv::new(
        &p,
        &Bindings {
            params: vec![Value::Int(8)],
        },
    )
    .unwrap();
    assert_eq!(
        Footprint::of_stencil_in(&p, &env, 0)
            .read_extent(a, 0)
            .unwrap()
            .axes,
        vec![Some((0, 1)), Some((0, 7))]
    );
}

#[test]
fn static_checks_report_only_what_holds_for_every_parameter_value() {
    let always = "\
int n;
grid g[n];
double griddata a on g at 0,1;
iterate 1 { stencil s { [0:n-1] : [1]a[0] = [0]a[1]; } }
";
    let sometimes = "\
int n;
int m;
grid g[n];
double griddata a on g at 0,1;
iterate 1 { stencil s { [m:n-2] : [1]a[0] = [0]a[-1]; } }
";
    let err = stencilc::front::parse_program(SourceFile::new("always.sdsl", always))
        .and_then(stencilc::analysis::checked)
        .unwrap_err();
    assert!(
        err.to_string().contains("1 past the last element (n-1)"),
        "{err}"
    );
    let p = parse("sometimes.sdsl", sometimes);
    assert!(
        static_checks(&p).is_empty(),
        "m = 0 reads index -1, m = 1 does not"
    );
    let err = stencilc::exec::bind(
        &p,
        &Bindings {
            params: vec![Value::Int(10), Value::Int(0)],
        },
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("before the first element (0) for m = 0"),
        "{err}"
    );
    assert!(RunEnv::new(
        &p,
        &Bindings {
            params: vec![Value::Int(10), Value::Int(1)]
        }
    )
    .is_ok());
}
