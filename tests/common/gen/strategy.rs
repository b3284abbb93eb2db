//! Proptest strategies for generated programs and GPU schedules.

use proptest::prelude::*;
use stencilc::schedule::{ScheduleRequest, ShmRequest, TablePlacement};

use super::ast::*;

/// The number of cases a property runs: `PROPTEST_CASES` when set (for a
/// deeper search), else `default` (kept small: every case compiles code).
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn ty_strategy(with_int: bool) -> BoxedStrategy<Ty> {
    if with_int {
        prop_oneof![3 => Just(Ty::Float), 3 => Just(Ty::Double), 1 => Just(Ty::Int)].boxed()
    } else {
        prop_oneof![Just(Ty::Float), Just(Ty::Double)].boxed()
    }
}

fn field_strategy() -> impl Strategy<Value = GenField> {
    (
        ty_strategy(true),
        1usize..=3,
        prop_oneof![
            2 => Just(Boundary::None),
            1 => Just(Boundary::Clamp),
            1 => Just(Boundary::Mirror),
            1 => Just(Boundary::Periodic),
            1 => Just(Boundary::Zero),
        ],
    )
        .prop_map(|(ty, levels, boundary)| GenField {
            ty,
            levels,
            boundary,
        })
}

fn offset_strategy() -> impl Strategy<Value = [i8; 3]> {
    [-2i8..=2, -2i8..=2, -2i8..=2]
}

/// Expressions of bounded depth over `flavor`'s operations.
pub fn expr_strategy(flavor: Flavor) -> BoxedStrategy<GenExpr> {
    let leaf = prop_oneof![
        5 => (0usize..3, 0usize..3, offset_strategy())
            .prop_map(|(field, level, offset)| GenExpr::Read { field, level, offset }),
        2 => (-8i8..=8, any::<bool>()).prop_map(|(v, s)| GenExpr::Lit(v, s)),
        1 => (0u8..10).prop_map(GenExpr::IntLit),
        1 => Just(GenExpr::Alpha),
        1 => (0usize..3).prop_map(GenExpr::Const),
        2 => (0usize..4).prop_map(GenExpr::Local),
        1 => (
            0usize..3,
            0usize..3,
            prop_oneof![3 => -3i32..=3, 1 => Just(1_000_000_007), 1 => Just(i32::MAX)],
        )
            .prop_map(|(field, level, scale)| GenExpr::ParamRead { field, level, scale }),
    ];
    let math = match flavor {
        Flavor::Full => prop_oneof![
            Just(Math1::Fabs),
            Just(Math1::SqrtFabs),
            Just(Math1::Floor),
            Just(Math1::ExpSmall)
        ]
        .boxed(),
        Flavor::CorrectlyRounded => {
            prop_oneof![Just(Math1::Fabs), Just(Math1::SqrtFabs), Just(Math1::Floor)].boxed()
        }
    };
    let cmp = || {
        prop_oneof![
            Just(Cmp::Lt),
            Just(Cmp::Le),
            Just(Cmp::Gt),
            Just(Cmp::Ge),
            Just(Cmp::Ne),
            Just(Cmp::Eq)
        ]
    };
    leaf.prop_recursive(3, 12, 4, move |inner| {
        let b = || inner.clone().prop_map(Box::new);
        prop_oneof![
            1 => b().prop_map(GenExpr::Neg),
            3 => (b(), b()).prop_map(|(a, c)| GenExpr::Add(a, c)),
            2 => (b(), b()).prop_map(|(a, c)| GenExpr::Sub(a, c)),
            2 => (b(), b()).prop_map(|(a, c)| GenExpr::Mul(a, c)),
            1 => (b(), b()).prop_map(|(a, c)| GenExpr::SafeDiv(a, c)),
            1 => (any::<bool>(), any::<bool>(), b(), b())
                .prop_map(|(rem, long, a, b)| GenExpr::IntDiv { rem, long, a, b }),
            1 => (any::<bool>(), b()).prop_map(|(long, a)| GenExpr::BigCast(long, a)),
            2 => (math.clone(), any::<bool>(), b()).prop_map(|(m, s, a)| GenExpr::Math1(m, s, a)),
            1 => (any::<bool>(), any::<bool>(), b(), b())
                .prop_map(|(m, s, a, c)| GenExpr::MinMax(m, s, a, c)),
            1 => (cmp(), [inner.clone(), inner.clone(), inner.clone(), inner.clone()])
                .prop_map(|(c, parts)| GenExpr::Select(c, Box::new(parts))),
            1 => (
                prop_oneof![Just(Logic::And), Just(Logic::Or), Just(Logic::Not)],
                [cmp(), cmp()],
                [inner.clone(), inner.clone(), inner.clone(), inner.clone()],
            )
                .prop_map(|(op, c, parts)| GenExpr::Logic(op, c, Box::new(parts))),
        ]
    })
    .boxed()
}

fn wrap_strategy() -> impl Strategy<Value = Wrap> {
    prop_oneof![1 => Just(Wrap::Raw), 2 => Just(Wrap::Clamp), 2 => Just(Wrap::Squash)]
}

fn axis_strategy() -> impl Strategy<Value = AxisSel> {
    prop_oneof![
        6 => (0u8..=2, 0u8..=2).prop_map(|(lo, hi)| AxisSel::Range(lo, hi)),
        1 => Just(AxisSel::First),
        1 => Just(AxisSel::Last),
        1 => Just(AxisSel::Middle),
    ]
}

fn subset_strategy() -> impl Strategy<Value = [AxisSel; 3]> {
    [axis_strategy(), axis_strategy(), axis_strategy()]
}

fn assign_strategy(flavor: Flavor) -> impl Strategy<Value = Assign> {
    (0usize..3, expr_strategy(flavor), wrap_strategy()).prop_map(|(target, value, wrap)| Assign {
        target,
        value,
        wrap,
    })
}

fn part_strategy(flavor: Flavor) -> impl Strategy<Value = GenPart> {
    let call = (
        prop::collection::vec(
            (
                ty_strategy(true),
                prop::option::weighted(0.7, expr_strategy(flavor)),
            ),
            0..=2,
        ),
        prop::option::of((1u8..=2, 0usize..3, 0usize..3, 0usize..3).prop_map(
            |(radius, axis, field, level)| GenLoop {
                radius,
                axis,
                field,
                level,
            },
        )),
        prop::collection::vec(assign_strategy(flavor), 1..=2),
        0usize..3,
    )
        .prop_map(|(locals, looped, assigns, rotate)| PartBody::Call {
            locals,
            looped,
            assigns,
            rotate,
        });
    (
        subset_strategy(),
        prop_oneof![assign_strategy(flavor).prop_map(PartBody::Assign), call],
    )
        .prop_map(|(subset, body)| GenPart { subset, body })
}

fn reduction_strategy(flavor: Flavor) -> impl Strategy<Value = GenReduction> {
    (
        prop_oneof![2 => Just(RedOp::Max), 2 => Just(RedOp::Min), 1 => Just(RedOp::Sum)],
        prop::collection::vec((subset_strategy(), expr_strategy(flavor)), 1..=2),
    )
        .prop_map(|(op, parts)| GenReduction { op, parts })
}

/// Whole programs of `flavor`.
pub fn program_strategy(flavor: Flavor) -> impl Strategy<Value = GenProgram> {
    (
        prop::collection::vec(1i64..=13, 1..=3),
        1u8..=9,
        prop::collection::vec(field_strategy(), 1..=3),
        prop::collection::vec((ty_strategy(false), -20i8..=20), 0..=2),
        prop::option::of((
            ty_strategy(false),
            [-9i8..=9, -9i8..=9, -9i8..=9, -9i8..=9, -9i8..=9],
        )),
        prop::collection::vec(prop::collection::vec(part_strategy(flavor), 1..=2), 1..=3),
        prop::collection::vec(reduction_strategy(flavor), 0..=2),
        prop::option::of((0usize..2, 5i8..=80, 1u8..=3)),
        1u8..=4,
        // Last, so that the seeds of the regression files still draw the
        // same values for everything before it.
        prop::option::of(([-3i8..=2, -3i8..=2, -3i8..=2], 1u8..=7)),
    )
        .prop_map(
            move |(
                sizes,
                alpha,
                fields,
                constants,
                table,
                stencils,
                reductions,
                check,
                iterations,
                second,
            )| {
                GenProgram {
                    flavor,
                    sizes,
                    alpha: f64::from(alpha) / 10.0,
                    fields,
                    constants,
                    table,
                    stencils,
                    reductions,
                    check,
                    iterations,
                    second: second.map(|(deltas, fields)| SecondGrid { deltas, fields }),
                }
            },
        )
}

/// What to stage in shared memory.
#[derive(Clone, Debug)]
pub enum Shm {
    /// `--shm none`
    None,
    /// `--shm auto`
    Auto,
    /// Every field and the table (the schedule stages those it may).
    All,
}

/// A random schedule: block (innermost first), points per thread, staging,
/// fusion, index width.
#[derive(Clone, Debug)]
pub struct GenSchedule {
    /// Threads per block, innermost first (1 to 3 axes).
    pub block: Vec<u32>,
    /// Points per thread, innermost first (3 entries).
    pub tile: Vec<u32>,
    /// Shared-memory staging.
    pub shm: Shm,
    /// Fuse stencils where legal.
    pub fuse: bool,
    /// Where coefficient tables go (`None`: the heuristic decides).
    pub tables: Option<TablePlacement>,
    /// 64-bit flattened indices (`--index64`).
    pub wide_indices: bool,
    /// Consecutive x points per thread as one vector access (`--vector`):
    /// capped at 16 bytes of the program's widest field; with more than 1
    /// the tile's x is 1 and nothing is staged.
    pub vector: u32,
    /// `--min-blocks`: the CUDA kernels' `__launch_bounds__` minimum of
    /// resident blocks (at most 2, so that 2 blocks of 1024 threads fit).
    pub min_blocks: Option<u32>,
}

impl GenSchedule {
    /// The request for the program's grid: the block has at most one axis per
    /// grid axis and at most 1024 threads (halving its largest axis), the tile
    /// one entry per grid axis.
    pub fn request(&self, generated: &GenProgram) -> ScheduleRequest {
        let mut block = self.block.clone();
        block.truncate(generated.rank());
        while block.iter().product::<u32>() > 1024 {
            let largest = block.iter_mut().max().expect("a block has an axis");
            *largest /= 2;
        }
        let widest = generated
            .fields
            .iter()
            .map(|f| if f.ty == Ty::Double { 8 } else { 4 })
            .max()
            .unwrap_or(4);
        let vector = self.vector.min((16 / widest) as u32).max(1);
        let mut tile = self.tile[..generated.rank()].to_vec();
        if vector > 1 {
            tile[0] = 1;
        }
        ScheduleRequest {
            block: Some(block),
            tile: Some(tile),
            vector: (vector > 1).then_some(vector),
            shm: match self.shm {
                Shm::None => ShmRequest::None,
                Shm::Auto => ShmRequest::Auto,
                Shm::All if vector > 1 => ShmRequest::None,
                Shm::All => ShmRequest::Names(generated.shm_names()),
            },
            tables: self.tables,
            results: None,
            fuse: self.fuse,
            wide_indices: self.wide_indices,
            time_steps: None,
            // Results are compared with the interpreter's bit for bit.
            fma: false,
            min_blocks_per_sm: self.min_blocks,
            // Block and tile are fixed: nothing is left to rank.
            ptxas_rank: None,
        }
    }
}

/// Random schedules.
pub fn schedule_strategy() -> impl Strategy<Value = GenSchedule> {
    let size = || prop::sample::select(vec![1u32, 4, 8, 16, 32]);
    (
        prop::collection::vec(size(), 1..=3),
        // Points per thread: a few along every axis, or a streaming run of
        // 1..=8 consecutive rows (y) or planes (z).
        prop_oneof![
            prop::collection::vec(1u32..=3, 3),
            (1u32..=8, 1usize..=2).prop_map(|(run, axis)| {
                let mut tile = vec![1, 1, 1];
                tile[axis] = run;
                tile
            }),
        ],
        prop_oneof![Just(Shm::None), Just(Shm::Auto), Just(Shm::All)],
        any::<bool>(),
        prop::option::of(prop_oneof![
            Just(TablePlacement::Literals),
            Just(TablePlacement::Constant),
            Just(TablePlacement::Shared),
            Just(TablePlacement::Global),
        ]),
        any::<bool>(),
        prop::sample::select(vec![1u32, 1, 2, 4]),
        prop::sample::select(vec![None, None, Some(1u32), Some(2)]),
    )
        .prop_map(
            |(block, tile, shm, fuse, tables, wide_indices, vector, min_blocks)| GenSchedule {
                block,
                tile,
                shm,
                fuse,
                tables,
                wide_indices,
                vector,
                min_blocks,
            },
        )
}
