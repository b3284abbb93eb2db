//! A producer and its consumer fused by halo recompute: one kernel in which
//! each block computes the producer over its points plus the halo the consumer
//! reads into a shared tile, then runs the consumer reading that tile.
//!
//! The kernel, in order:
//! 1. tiles of the other levels the schedule stages (loaded as usual, boundary
//!    mode applied while loading) and shared copies of tables;
//! 2. the **recompute phase**: the block's threads stride over the tile of the
//!    produced level. A cell outside the grid takes the level's boundary mode
//!    (clamp, mirror and periodic map it into the grid; zero and none give 0:
//!    the analysis checked that a `none` field is never read outside). A cell
//!    (after mapping) inside the producer's subset gets the producer's value,
//!    computed there; any other cell takes what the level holds in global
//!    memory, as a tile load would. With `write_back`, a cell that is one of
//!    the block's own points also goes to global memory (each point of the
//!    subset is written by exactly one block). A block whose whole tile, and
//!    every read of the producer from it, lies inside the grid and the subset
//!    (nearly every block) takes an **interior path** instead: its cells are
//!    their grid coordinates and the producer reads with no boundary mode;
//! 3. a barrier, then the consumer at each of the thread's points, reading the
//!    produced level from the tile: a run of consecutive points lowered as a
//!    stencil kernel's (`lower/stencil/run.rs`), whose fast path shares the
//!    tile reads of its points in registers.
//!
//! The schedule (`schedule/fusion.rs`) guarantees what makes this equal to the
//! two sweeps: the producer does not read its level, and the consumer writes
//! nothing the producer reads or writes, so no block's recomputation can see
//! another block's writes.

use std::collections::BTreeMap;

use crate::analysis::{Footprint, Level};
use crate::ir::{BinaryOp, Program, Stencil, Value};
use crate::kir::plan::Launch;
use crate::kir::{KExpr, KStmt, Kernel, Module, Origin, SharedArray, Space, Var, Vars};
use crate::lower::letter;
use crate::lower::point::{select_inside, PointCtx, Tile};
use crate::lower::stencil::{axis_vars, run, shared_table_copies, AxisVars};
use crate::schedule::{FieldPlacement, HaloRecompute, StencilSchedule, TablePlacement};

mod cells;

use cells::{extents, Cells};

/// The fused kernel of `producer` and `consumer` (single-part stencils over
/// the same subset) and its launch.
pub(crate) fn lower_pair(
    program: &Program,
    producer: &Stencil,
    consumer: &Stencil,
    schedule: &StencilSchedule,
    recompute: &HaloRecompute,
    wide: bool,
    module: &mut Module,
) -> Launch {
    let made = &producer.parts[0];
    let used = &consumer.parts[0];
    let subset = &used.subset;
    let rank = subset.rank();
    let block = schedule.block;
    let tile = schedule.tile;
    let per_block: [u32; 3] = [0, 1, 2].map(|d| block[d].saturating_mul(tile[d]));
    let mut kernel_vars = Vars::default();
    let vars: Vec<AxisVars> = (0..rank)
        .map(|d| axis_vars(d, tile[d] > 1, &mut kernel_vars))
        .collect();
    let point_coords: Vec<KExpr> = (0..rank)
        .map(|a| KExpr::var(vars[rank - 1 - a].first_grid))
        .collect();
    let in_block = (0..rank)
        .map(|a| KExpr::var(vars[rank - 1 - a].first_in_block))
        .collect();
    let mut ctx = PointCtx::new(program, point_coords.clone(), in_block);
    ctx.wide = wide;
    ctx.params.vars = kernel_vars;
    let footprint = Footprint::merge(&[
        Footprint::of_part(program, made),
        Footprint::of_part(program, used),
    ]);
    // Written levels first so their buffers are the kernel's first parameters.
    for (f, t) in footprint.written() {
        ctx.params.level(program, f, t, true);
    }
    let lo_hi = crate::lower::stencil::subset_bounds(&mut ctx, rank);
    let threads: Vec<(Var, Var)> = vars.iter().map(|v| (v.thread, v.base)).collect();
    // Fused pairs keep scalar accesses: their blocks need no alignment.
    let mut kernel_body = crate::lower::stencil::block_origin(&threads, &lo_hi, per_block, 1);
    let pair = Pair {
        program,
        producer,
        consumer,
        schedule,
        recompute,
        shape: Shape {
            rank,
            block,
            per_block,
        },
        vars,
        lo_hi,
    };

    let loads = pair.staged_loads(&mut ctx, &footprint);
    for (t, p) in &schedule.tables {
        ctx.tables.insert(*t, *p);
    }
    ctx.unroll = schedule
        .tables
        .values()
        .any(|p| *p == TablePlacement::Literals);
    let (recompute_phase, hint) = pair.recompute_phase(&mut ctx, point_coords, module);
    let body = pair.consumer_phase(&mut ctx, &hint, module);

    let tables = shared_table_copies(&mut ctx, rank, block, &pair.vars, module);
    if !tables.is_empty() {
        kernel_body.extend(tables);
        // The recompute phase may read the tables.
        kernel_body.push(KStmt::Barrier);
    }
    kernel_body.extend(loads);
    kernel_body.extend(recompute_phase);
    kernel_body.push(KStmt::Barrier);
    kernel_body.extend(body);

    let uses_double = ctx.uses_double;
    let shared = ctx.shared;
    let (params, args, vars) = ctx.params.finish();
    let name = format!("{}_{}", producer.name, consumer.name);
    module.kernels.push(Kernel {
        name,
        block,
        vars,
        params,
        shared,
        body: kernel_body,
        uses_double,
    });
    Launch {
        kernel: module.kernels.len() - 1,
        subset: Some(subset.clone()),
        block,
        points_per_block: per_block,
        args,
        max_groups: None,
        align_x: 1,
    }
}

/// What the phases of one fused kernel share: the pair and its schedule, the
/// block's shape, its axis variables and the subset's bounds.
struct Pair<'p> {
    program: &'p Program,
    producer: &'p Stencil,
    consumer: &'p Stencil,
    schedule: &'p StencilSchedule,
    recompute: &'p HaloRecompute,
    shape: Shape,
    vars: Vec<AxisVars>,
    lo_hi: Vec<(KExpr, KExpr)>,
}

/// The level the producer writes: its global buffer and its shared tile.
#[derive(Clone, Copy)]
struct Produced {
    buffer: Var,
    tile: Var,
}

impl Pair<'_> {
    /// 1. Tiles of the other staged levels the consumer reads, over its halo
    ///    (the producer reads global memory: its cells reach further).
    fn staged_loads(&self, ctx: &mut PointCtx<'_>, footprint: &Footprint) -> Vec<KStmt> {
        let program = self.program;
        let (shape, vars) = (&self.shape, &self.vars);
        let rank = shape.rank;
        let mut loads = Vec::new();
        for reads in &Footprint::of_part(program, &self.consumer.parts[0]).reads {
            let level = reads.level();
            if self.schedule.fields.get(&level) != Some(&FieldPlacement::SharedTile)
                || level == self.recompute.level
                || footprint.writes_level(level.0, level.1)
            {
                continue;
            }
            let Some(range) = reads.static_box().filter(|r| r.len() == rank) else {
                continue;
            };
            let field = &program.fields[level.0 .0];
            let buffer = ctx.params.level(program, level.0, level.1, false);
            let hint = ctx.params.vars.decl(buffer).hint.clone();
            let var = shared_tile(ctx, &format!("{hint}_tile"), field.ty, shape, &range);
            let origin: Vec<i64> = range.iter().map(|r| r.0).collect();
            ctx.tiles.insert(
                level,
                Tile {
                    var,
                    origin: origin.clone(),
                    covers: Some(range.clone()),
                },
            );
            loads.push(KStmt::Comment(format!(
                "{hint} with its halo into shared memory ({} mode applied while loading)",
                field.boundary.name()
            )));
            let cells = Cells::new(ctx, shape, &range, level.0);
            let at = cells.at(vars);
            let (mapped, inside) = cells.mapped(ctx, &at, field.boundary);
            let index = ctx.linear(level.0, mapped);
            let load = KExpr::Load {
                space: Space::Global,
                array: buffer,
                index: vec![index],
            };
            let value = select_inside(inside, load, field.ty);
            loads.push(cells.nest(
                shape,
                vars,
                vec![KStmt::Store {
                    space: Space::Shared,
                    array: var,
                    index: cells.tile_index(),
                    value,
                }],
                ctx,
            ));
        }
        loads
    }

    /// 2. The recompute phase, and the hint of the produced level's buffer.
    ///    Leaves the produced tile registered for the consumer's reads.
    fn recompute_phase(
        &self,
        ctx: &mut PointCtx<'_>,
        point_coords: Vec<KExpr>,
        module: &mut Module,
    ) -> (Vec<KStmt>, String) {
        let (shape, vars, recompute) = (&self.shape, &self.vars, self.recompute);
        let field_id = recompute.level.0;
        let field = &self.program.fields[field_id.0];
        let buffer = ctx
            .params
            .level(self.program, field_id, recompute.level.1, true);
        let hint = ctx.params.vars.decl(buffer).hint.clone();
        let tile = shared_tile(
            ctx,
            &format!("{hint}_tile"),
            field.ty,
            shape,
            &recompute.halo,
        );
        let produced = Produced { buffer, tile };
        // The producer at a cell: its loads from global memory (the tiles cover
        // only the consumer's reads), its store of the level into the tile.
        let staged = std::mem::take(&mut ctx.tiles);
        let (fast_cells, fast_at, fast_test, fast) = self.interior_cells(ctx, produced, module);
        let (cells, cell_body) = self.boundary_cells(ctx, produced, (point_coords, staged), module);
        let halo_text = recompute
            .halo
            .iter()
            .map(|(lo, hi)| format!("[{lo}:{hi}]"))
            .collect::<String>();
        let mut fast_body: Vec<KStmt> = fast_at
            .iter()
            .zip(fast_cells.at(vars))
            .map(|(&var, init)| KStmt::Decl { var, init })
            .collect();
        fast_body.extend(fast);
        let phase = vec![
            KStmt::Comment(format!(
                "recompute phase: {} over the block's points and a halo of {halo_text} into \
                 {hint}_tile",
                self.producer.name
            )),
            KStmt::If {
                cond: fast_test,
                then: vec![
                    KStmt::Comment(
                        "the block's tile and every read of it lie inside the grid and the \
                         subset: no boundary mode"
                            .to_string(),
                    ),
                    fast_cells.nest(shape, vars, fast_body, ctx),
                ],
                otherwise: vec![
                    KStmt::Comment(format!(
                        "{} mode outside the grid; cells outside {}'s subset keep what {hint} \
                         holds",
                        field.boundary.name(),
                        self.producer.name
                    )),
                    cells.nest(shape, vars, cell_body, ctx),
                ],
            },
        ];
        ctx.tiles.insert(
            recompute.level,
            Tile {
                var: tile,
                origin: recompute.halo.iter().map(|h| h.0).collect(),
                covers: Some(recompute.halo.clone()),
            },
        );
        (phase, hint)
    }

    /// Where the block's whole tile and every read of the producer from it
    /// lie inside the grid and the subset (nearly every block): the cells are
    /// their grid coordinates, the producer reads with no boundary mode.
    /// Lowered first, so that its variables keep the plain names. Gives the
    /// cells, their coordinate variables, the test and the producer's code.
    fn interior_cells(
        &self,
        ctx: &mut PointCtx<'_>,
        produced: Produced,
        module: &mut Module,
    ) -> (Cells, Vec<Var>, KExpr, Vec<KStmt>) {
        let (shape, recompute) = (&self.shape, self.recompute);
        let rank = shape.rank;
        let made = &self.producer.parts[0];
        let field_id = recompute.level.0;
        let producer_reads = crate::lower::stencil::interior_levels(
            self.program,
            &Footprint::of_part(self.program, made),
            ctx,
        );
        let fast_cells = Cells::new(ctx, shape, &recompute.halo, field_id);
        let fast_at: Vec<Var> = (0..rank)
            .map(|a| ctx.params.vars.temp_int(format!("g{}", letter(rank, a))))
            .collect();
        let fast_exprs: Vec<KExpr> = fast_at.iter().map(|&v| KExpr::var(v)).collect();
        let fast_test = block_inside(
            ctx,
            &producer_reads,
            (&self.vars, shape, &self.lo_hi),
            &recompute.halo,
            fast_cells.grid,
        );
        ctx.interior = producer_reads;
        ctx.on_interior = true;
        let fast = compute_cell(
            ctx,
            made,
            &fast_exprs,
            &fast_exprs,
            (&fast_cells, shape, &self.lo_hi),
            (
                field_id,
                produced.buffer,
                produced.tile,
                recompute.write_back,
            ),
            module,
        );
        ctx.on_interior = false;
        ctx.interior = Default::default();
        (fast_cells, fast_at, fast_test, fast)
    }

    /// Elsewhere a cell outside the grid takes the level's boundary mode, and
    /// one outside the producer's subset what the level holds. `restore` is
    /// the point coordinates and staged tiles put back once the producer is
    /// lowered. Gives the cells and the code at a cell.
    fn boundary_cells(
        &self,
        ctx: &mut PointCtx<'_>,
        produced: Produced,
        restore: (Vec<KExpr>, BTreeMap<Level, Tile>),
        module: &mut Module,
    ) -> (Cells, Vec<KStmt>) {
        let (shape, recompute) = (&self.shape, self.recompute);
        let rank = shape.rank;
        let field_id = recompute.level.0;
        let field = &self.program.fields[field_id.0];
        let cells = Cells::new(ctx, shape, &recompute.halo, field_id);
        let at = cells.at(&self.vars);
        let grid_at: Vec<Var> = (0..rank)
            .map(|a| ctx.params.vars.temp_int(format!("g{}", letter(rank, a))))
            .collect();
        let cell_at: Vec<Var> = (0..rank)
            .map(|a| ctx.params.vars.temp_int(format!("c{}", letter(rank, a))))
            .collect();
        let mut cell_body: Vec<KStmt> = grid_at
            .iter()
            .zip(at)
            .map(|(&var, init)| KStmt::Decl { var, init })
            .collect();
        let grid_exprs: Vec<KExpr> = grid_at.iter().map(|&v| KExpr::var(v)).collect();
        let (mapped, inside) = cells.mapped(ctx, &grid_exprs, field.boundary);
        for (&var, init) in cell_at.iter().zip(mapped) {
            cell_body.push(KStmt::Decl { var, init });
        }
        let cell_exprs: Vec<KExpr> = cell_at.iter().map(|&v| KExpr::var(v)).collect();
        let computed = compute_cell(
            ctx,
            &self.producer.parts[0],
            &cell_exprs,
            &grid_exprs,
            (&cells, shape, &self.lo_hi),
            (
                field_id,
                produced.buffer,
                produced.tile,
                recompute.write_back,
            ),
            module,
        );
        (ctx.coords, ctx.tiles) = restore;
        let held = {
            let index = ctx.linear(field_id, cell_exprs.clone());
            KStmt::Store {
                space: Space::Shared,
                array: produced.tile,
                index: cells.tile_index(),
                value: KExpr::Load {
                    space: Space::Global,
                    array: produced.buffer,
                    index: vec![index],
                },
            }
        };
        let in_subset = in_subset(&cell_exprs, &recompute.halo, &self.lo_hi);
        let mut resolved = vec![KStmt::If {
            cond: in_subset,
            then: computed,
            otherwise: vec![held],
        }];
        if let Some(test) = inside {
            resolved = vec![KStmt::If {
                cond: test,
                then: resolved,
                otherwise: vec![KStmt::Store {
                    space: Space::Shared,
                    array: produced.tile,
                    index: cells.tile_index(),
                    value: KExpr::Lit(Value::Int(0).cast(field.ty)),
                }],
            }];
        }
        cell_body.extend(resolved);
        (cells, cell_body)
    }

    /// 3. The consumer at the thread's points: a run of consecutive points
    ///    along the outermost axis, as a stencil kernel's (its reads of the
    ///    tile shared between the run's points in registers).
    fn consumer_phase(
        &self,
        ctx: &mut PointCtx<'_>,
        hint: &str,
        module: &mut Module,
    ) -> Vec<KStmt> {
        let used = &self.consumer.parts[0];
        let consumer_footprint = Footprint::of_part(self.program, used);
        ctx.interior =
            crate::lower::stencil::interior_levels(self.program, &consumer_footprint, ctx);
        ctx.grid = consumer_footprint.written_grid(self.program);
        let run_shape = run::Shape {
            block: self.shape.block,
            tile: self.schedule.tile,
            vars: &self.vars,
            hi: self.lo_hi.iter().map(|(_, hi)| hi.clone()).collect(),
            fold: None,
            vector: 1,
            lo_x: None,
            grid: ctx.grid,
        };
        let mut body = vec![KStmt::Comment(format!(
            "stencil {}, reading {hint} from {hint}_tile",
            self.consumer.name
        ))];
        body.extend(run::first_points(&run_shape));
        body.extend(run::thread_points(
            ctx,
            &[(self.consumer.name.as_str(), used)],
            &run_shape,
            module,
        ));
        body
    }
}

/// The producer's code at a cell whose coordinates (after any boundary
/// mapping) are `cell`, `at` before it, its stores sent to the tile; with
/// `write_back`, the block's own points also stored to global memory.
fn compute_cell(
    ctx: &mut PointCtx<'_>,
    made: &crate::ir::StencilPart,
    cell: &[KExpr],
    at: &[KExpr],
    (cells, shape, lo_hi): (&Cells, &Shape, &[(KExpr, KExpr)]),
    (field, level_buffer, produced, write_back): (crate::ir::FieldId, Var, Var, bool),
    module: &mut Module,
) -> Vec<KStmt> {
    ctx.coords = cell.to_vec();
    let code = ctx.part_code(made, module);
    let mut computed = vec![KStmt::Block(redirect_stores(
        code,
        level_buffer,
        produced,
        &cells.tile_index(),
    ))];
    if write_back {
        let own = own_point(cells, at, shape, lo_hi);
        let hint = ctx.params.vars.decl(level_buffer).hint.clone();
        let index = ctx.linear(field, cell.to_vec());
        let store = KStmt::Store {
            space: Space::Global,
            array: level_buffer,
            index: vec![index],
            value: KExpr::Load {
                space: Space::Shared,
                array: produced,
                index: cells.tile_index(),
            },
        };
        computed.push(KStmt::Comment(format!(
            "the block's own points of {hint} also go to global memory"
        )));
        computed.push(match own {
            Some(cond) => KStmt::If {
                cond,
                then: vec![store],
                otherwise: vec![],
            },
            None => store,
        });
    }
    computed
}

/// Whether the whole tile of cells (the block's points widened by `halo`)
/// lies inside the subset `lo_hi`, and every read of `reads` (per level, the
/// box of offsets) from every cell inside its grid: then no cell needs a
/// boundary mode, and every cell is computed.
fn block_inside(
    ctx: &mut PointCtx<'_>,
    reads: &std::collections::BTreeMap<crate::analysis::Level, Vec<(i64, i64)>>,
    (vars, shape, lo_hi): (&[AxisVars], &Shape, &[(KExpr, KExpr)]),
    halo: &[(i64, i64)],
    cells_grid: crate::ir::GridId,
) -> KExpr {
    let rank = shape.rank;
    let mut tests = Vec::new();
    for a in 0..rank {
        let d = rank - 1 - a;
        let base = KExpr::var(vars[d].base);
        let first = KExpr::plus(base.clone(), KExpr::int(halo[a].0));
        let last = KExpr::plus(
            base,
            KExpr::int(i64::from(shape.per_block[d]) - 1 + halo[a].1),
        );
        if halo[a].0 < 0 {
            tests.push(KExpr::bin(BinaryOp::Ge, first.clone(), lo_hi[a].0.clone()));
        }
        tests.push(KExpr::bin(BinaryOp::Le, last.clone(), lo_hi[a].1.clone()));
        for (&(field, _), range) in reads {
            let grid = ctx.program.fields[field.0].grid;
            let (lo, hi) = range[a];
            if lo < 0 {
                tests.push(KExpr::bin(
                    BinaryOp::Ge,
                    KExpr::plus(first.clone(), KExpr::int(lo)),
                    KExpr::int(0),
                ));
            }
            // The cells lie in the produced level's grid; another may be smaller.
            let own = ctx.program.holds_point(Some(cells_grid), grid);
            if hi > 0 || !own {
                let size = ctx.params.grid_size(ctx.program, grid, a);
                tests.push(KExpr::bin(
                    BinaryOp::Lt,
                    KExpr::plus(last.clone(), KExpr::int(hi)),
                    size,
                ));
            }
        }
    }
    tests
        .into_iter()
        .reduce(|a, b| KExpr::bin(BinaryOp::And, a, b))
        .unwrap_or(KExpr::Lit(Value::Int(1)))
}

/// The block's shape.
struct Shape {
    /// Axes of the grid.
    rank: usize,
    /// Threads per block along x, y, z.
    block: [u32; 3],
    /// Points per block along x, y, z.
    per_block: [u32; 3],
}

/// Declares a shared tile of the block's points widened by `halo` (per axis,
/// outermost first).
fn shared_tile(
    ctx: &mut PointCtx<'_>,
    hint: &str,
    ty: crate::ir::ScalarType,
    shape: &Shape,
    halo: &[(i64, i64)],
) -> Var {
    let var = ctx
        .params
        .vars
        .add(hint, ty, Space::Shared, Origin::Derived);
    ctx.shared.push(SharedArray {
        var,
        ty,
        dims: extents(shape, halo),
    });
    var
}

/// Whether mapped cell coordinates lie in the subset `[lo, hi]`; an axis whose
/// tile starts at or after the block's first point cannot be below `lo`.
fn in_subset(cell: &[KExpr], halo: &[(i64, i64)], lo_hi: &[(KExpr, KExpr)]) -> KExpr {
    let mut test: Option<KExpr> = None;
    for (a, c) in cell.iter().enumerate() {
        let mut push = |t: KExpr| {
            test = Some(match test.take() {
                None => t,
                Some(prev) => KExpr::bin(BinaryOp::And, prev, t),
            });
        };
        if halo[a].0 < 0 {
            push(KExpr::bin(BinaryOp::Ge, c.clone(), lo_hi[a].0.clone()));
        }
        push(KExpr::bin(BinaryOp::Le, c.clone(), lo_hi[a].1.clone()));
    }
    test.unwrap_or(KExpr::Lit(Value::Int(1)))
}

/// Whether the cell at grid coordinates `at` is one of the block's own points
/// (within the block's points and the subset); `None` when every cell is.
fn own_point(
    cells: &Cells,
    at: &[KExpr],
    shape: &Shape,
    lo_hi: &[(KExpr, KExpr)],
) -> Option<KExpr> {
    let rank = shape.rank;
    let mut test: Option<KExpr> = None;
    for a in 0..rank {
        let d = rank - 1 - a;
        let l = KExpr::var(cells.locals[d]);
        let first = -cells.origin[a];
        let end = first + shape.per_block[d] as i64;
        let mut tests = vec![];
        if first > 0 {
            tests.push(KExpr::bin(BinaryOp::Ge, l.clone(), KExpr::int(first)));
        }
        if end < cells.extents[a] as i64 {
            tests.push(KExpr::bin(BinaryOp::Lt, l, KExpr::int(end)));
        }
        tests.push(KExpr::bin(BinaryOp::Le, at[a].clone(), lo_hi[a].1.clone()));
        for t in tests {
            test = Some(match test.take() {
                None => t,
                Some(prev) => KExpr::bin(BinaryOp::And, prev, t),
            });
        }
    }
    test
}

/// `code` with its global stores to `buffer` sent to the tile cell instead.
pub(crate) fn redirect_stores(
    mut code: Vec<KStmt>,
    buffer: Var,
    tile: Var,
    cell: &[KExpr],
) -> Vec<KStmt> {
    crate::kir::visit::for_each_stmt_mut(&mut code, |stmt| {
        if let KStmt::Store {
            space: space @ Space::Global,
            array,
            index,
            ..
        } = stmt
        {
            if *array == buffer {
                *space = Space::Shared;
                *array = tile;
                *index = cell.to_vec();
            }
        }
    });
    code
}
