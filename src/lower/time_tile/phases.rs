//! The three phases of a time-tiled kernel (load, steps, write-back), on one
//! of two paths: the general one, which tests every cell against the grid
//! and the parts' subsets, and the interior one, taken by a block whose tile
//! lies inside the grid and whose cells each part covers all or none of.

use std::collections::BTreeMap;

use crate::ir::{BinaryOp, BoundaryMode, FieldId, Program, Stencil};
use crate::kir::{Helper, KExpr, KStmt, Module, Space, Var};
use crate::lower::letter;
use crate::lower::level_name;
use crate::lower::point::{select_inside, PointCtx, Tile};
use crate::schedule::time::TimeTiling;
use crate::schedule::{Schedule, TablePlacement};

use super::geometry::{in_subset, inside_grid, mapped, Geometry};

/// What the phases of a time-tiled kernel are generated from.
pub(super) struct TileKernel<'a> {
    pub program: &'a Program,
    pub schedule: &'a Schedule,
    pub tiling: &'a TimeTiling,
    pub geometry: Geometry,
    /// The tile's cells per axis (outermost first).
    pub extents: Vec<usize>,
    /// The global buffer of each staged level (field, level index).
    pub levels: BTreeMap<(FieldId, usize), Var>,
    /// The shared tile of each staged level.
    pub slots: BTreeMap<(FieldId, usize), Var>,
    /// The buffer each staged level's centre is written back to.
    pub shadows: BTreeMap<(FieldId, usize), Var>,
    /// The `steps` parameter: how many steps this launch advances.
    pub steps: KExpr,
}

/// One stencil within a step: what its code at each cell and its pass over
/// the cells outside the grid are generated from.
struct StencilRun<'r> {
    /// The stencil's index in the iteration.
    k: usize,
    stencil: &'r Stencil,
    /// The level the stencil writes (field, time).
    written: (FieldId, i32),
    /// The tile that holds the written level this step.
    target: Var,
    /// The written field's boundary mode.
    mode: BoundaryMode,
    /// The flags of the interior path's parts; `None` on the general path.
    interior: Option<&'r BTreeMap<(usize, usize), Var>>,
}

/// Which of the kernel's two paths the phases are for.
pub(super) enum Path<'p> {
    /// Every cell tested: against the grid (boundary modes), and against each
    /// part's subset.
    General,
    /// The block's tile lies inside the grid: no boundary mode applies, and
    /// the loops run fixed trips. A stencil of one part covers all the cells
    /// it computes; for a stencil of several, the block-uniform flag of each
    /// part, by (stencil, part), says whether it covers them all (it misses
    /// them all otherwise).
    Interior(&'p BTreeMap<(usize, usize), Var>),
}

impl TileKernel<'_> {
    /// The cells stencil `k` computes at step `s` (0-based), per axis,
    /// outermost first, `[start, end)` in tile coordinates: the tile less
    /// the reach consumed by the stencils before it and by the earlier steps.
    pub fn region(&self, s: usize, k: usize) -> Vec<(i64, i64)> {
        let rank = self.geometry.rank;
        let per_step = self.tiling.reach_per_step();
        (0..rank)
            .map(|a| {
                let before: (i64, i64) = self.tiling.reach[..=k]
                    .iter()
                    .fold((0, 0), |acc, r| (acc.0 + r[a].0, acc.1 + r[a].1));
                let lo = per_step[a].0 * s as i64 + before.0;
                let hi = per_step[a].1 * s as i64 + before.1;
                (lo, self.extents[a] as i64 - hi)
            })
            .collect()
    }

    /// Load, steps and write-back on `path`.
    pub fn phases(&self, ctx: &mut PointCtx<'_>, module: &mut Module, path: &Path) -> Vec<KStmt> {
        let mut body = self.load(ctx, path);
        body.push(KStmt::Barrier);
        for s in 0..self.tiling.steps as usize {
            let step_body = self.step(ctx, module, path, s);
            if s == 0 {
                body.extend(step_body);
            } else {
                body.push(KStmt::If {
                    cond: KExpr::bin(BinaryOp::Gt, self.steps.clone(), KExpr::int(s as i64)),
                    then: step_body,
                    otherwise: vec![],
                });
            }
        }
        body.extend(self.write_back(ctx, path));
        body
    }

    /// Every level of every staged field into its tile.
    fn load(&self, ctx: &mut PointCtx<'_>, path: &Path) -> Vec<KStmt> {
        let (program, geometry) = (self.program, &self.geometry);
        let fixed = matches!(path, Path::Interior(_));
        let whole: Vec<(i64, i64)> = self.extents.iter().map(|&e| (0, e as i64)).collect();
        let mut body = Vec::new();
        for &f in &self.tiling.staged {
            let field = &program.fields[f.0];
            for j in 0..field.levels() {
                let time = field.time_lo + j as i32;
                body.push(KStmt::Comment(if fixed {
                    format!(
                        "{} with its halo into shared memory",
                        level_name(program, f, time)
                    )
                } else {
                    format!(
                        "{} with its halo into shared memory ({} mode outside the grid)",
                        level_name(program, f, time),
                        field.boundary.name()
                    )
                }));
                let (tile, buffer) = (self.slots[&(f, j)], self.levels[&(f, j)]);
                let nest = geometry.nest(ctx, &whole, fixed, |ctx, cells, at| {
                    let (coords, inside) = if fixed {
                        (at.to_vec(), None)
                    } else {
                        mapped(geometry, at, field.boundary)
                    };
                    let index = ctx.linear(f, coords);
                    let load = KExpr::Load {
                        space: Space::Global,
                        array: buffer,
                        index: vec![index],
                    };
                    let value = select_inside(inside, load, field.ty);
                    vec![KStmt::Store {
                        space: Space::Shared,
                        array: tile,
                        index: cells.to_vec(),
                        value,
                    }]
                });
                body.push(nest);
            }
        }
        body
    }

    /// Step `s`: every stencil over the cells still exact, each followed by
    /// a barrier (and on the general path by the boundary mode's pass over
    /// the cells outside the grid).
    fn step(
        &self,
        ctx: &mut PointCtx<'_>,
        module: &mut Module,
        path: &Path,
        s: usize,
    ) -> Vec<KStmt> {
        let program = self.program;
        let iterate = program
            .iterate
            .as_ref()
            .expect("a time tile has an iterate");
        let mut step_body = Vec::new();
        for (k, stencil) in iterate.stencils.iter().enumerate() {
            let region = self.region(s, k);
            // The level this stencil writes, and its tile this step.
            let footprint = crate::analysis::Footprint::of_stencil(program, k);
            let Some(&written) = footprint.written().first() else {
                continue;
            };
            let target = self.slot_at_step(written.0, written.1, s);
            self.stage_for_stencil(ctx, s, k);
            let mode = program.fields[written.0 .0].boundary;
            let interior = match path {
                Path::Interior(flags) => Some(*flags),
                Path::General => None,
            };
            step_body.push(KStmt::Comment(match interior {
                Some(_) => format!(
                    "step {}: stencil {} into {}",
                    s + 1,
                    stencil.name,
                    ctx.params.vars.decl(target).hint
                ),
                None => format!(
                    "step {}: stencil {} into {} ({} mode outside the grid)",
                    s + 1,
                    stencil.name,
                    ctx.params.vars.decl(target).hint,
                    mode.name()
                ),
            }));
            let run = StencilRun {
                k,
                stencil,
                written,
                target,
                mode,
                interior,
            };
            let nest = self
                .geometry
                .nest(ctx, &region, interior.is_some(), |ctx, cells, at| {
                    self.stencil_at_cell(ctx, module, &run, cells, at)
                });
            step_body.push(nest);
            step_body.push(KStmt::Barrier);
            step_body.extend(self.outside_pass(ctx, &region, &run));
        }
        step_body
    }

    /// The tile that holds level `t` of field `f` at step `s`: the tiles
    /// rotate by one level each step, as the interpreter's buffers do.
    fn slot_at_step(&self, f: FieldId, t: i32, s: usize) -> Var {
        let field = &self.program.fields[f.0];
        self.slots[&(f, (field.level_of(t) + s) % field.levels())]
    }

    /// Points `ctx` at what stencil `k` reads at step `s`: every staged level
    /// from its tile this step, and the stencil's tables from constant memory
    /// (a time tile's shared memory holds the level tiles) or as literals.
    fn stage_for_stencil(&self, ctx: &mut PointCtx<'_>, s: usize, k: usize) {
        let (program, rank) = (self.program, self.geometry.rank);
        ctx.tiles = self
            .tiling
            .staged
            .iter()
            .flat_map(|&f| {
                let field = &program.fields[f.0];
                (field.time_lo..=field.time_hi).map(move |t| (f, t))
            })
            .map(|(f, t)| {
                (
                    (f, t),
                    Tile {
                        var: self.slot_at_step(f, t, s),
                        origin: vec![0; rank],
                        covers: None,
                    },
                )
            })
            .collect();
        ctx.tables = self
            .schedule
            .stencil(k)
            .tables
            .iter()
            .map(|(t, p)| {
                let placement = match p {
                    TablePlacement::Shared | TablePlacement::Global => TablePlacement::Constant,
                    other => *other,
                };
                (*t, placement)
            })
            .collect();
        ctx.unroll = ctx.tables.values().any(|p| *p == TablePlacement::Literals);
    }

    /// The stencil's code at one tile cell (`cells` its tile coordinates,
    /// `at` its grid coordinates): each part whose subset holds the cell,
    /// its store sent to the written level's tile.
    fn stencil_at_cell(
        &self,
        ctx: &mut PointCtx<'_>,
        module: &mut Module,
        run: &StencilRun<'_>,
        cells: &[KExpr],
        at: &[KExpr],
    ) -> Vec<KStmt> {
        let (program, rank, sizes) = (self.program, self.geometry.rank, &self.geometry.sizes);
        let mut cell = Vec::new();
        // Periodic: a cell outside the grid is the point it wraps to
        // (on the interior path every cell is inside).
        let coords: Vec<KExpr> = if run.mode == BoundaryMode::Periodic && run.interior.is_none() {
            (0..rank)
                .map(|a| {
                    let var = ctx.params.vars.temp_int(format!("c{}", letter(rank, a)));
                    cell.push(KStmt::Decl {
                        var,
                        init: KExpr::Helper(
                            Helper::Periodic,
                            vec![at[a].clone(), sizes[a].clone()],
                        ),
                    });
                    KExpr::var(var)
                })
                .collect()
        } else {
            at.to_vec()
        };
        ctx.coords = coords.clone();
        ctx.in_block = cells.to_vec();
        let (wf, wt) = run.written;
        let buffer = ctx.params.level(program, wf, wt, false);
        let single = run.stencil.parts.len() == 1;
        let mut parts = Vec::new();
        for (p, part) in run.stencil.parts.iter().enumerate() {
            let code = ctx.part_code(part, module);
            let code = crate::lower::recompute::redirect_stores(code, buffer, run.target, cells);
            match run.interior {
                Some(_) if single => parts.extend(code),
                Some(flags) => parts.push(KStmt::If {
                    cond: KExpr::var(flags[&(run.k, p)]),
                    then: code,
                    otherwise: vec![],
                }),
                None => {
                    let cond = in_subset(ctx, &part.subset, &coords, module);
                    parts.push(KStmt::If {
                        cond,
                        then: code,
                        otherwise: vec![],
                    });
                }
            }
        }
        if run.mode == BoundaryMode::Periodic || run.interior.is_some() {
            cell.extend(parts);
        } else {
            cell.push(KStmt::If {
                cond: inside_grid(at, sizes),
                then: parts,
                otherwise: vec![],
            });
        }
        cell
    }

    /// On the general path, for clamp and mirror: the pass (and its barrier)
    /// that copies into each cell outside the grid the computed cell it maps
    /// to. Empty on the interior path and for the other modes.
    fn outside_pass(
        &self,
        ctx: &mut PointCtx<'_>,
        region: &[(i64, i64)],
        run: &StencilRun<'_>,
    ) -> Vec<KStmt> {
        let (geometry, mode, target) = (&self.geometry, run.mode, run.target);
        let (rank, sizes) = (geometry.rank, &geometry.sizes);
        let Some(helper) = Helper::for_mode(mode)
            .filter(|_| mode != BoundaryMode::Periodic && run.interior.is_none())
        else {
            return Vec::new();
        };
        let comment = KStmt::Comment(format!(
            "cells outside the grid take the {} cell they read",
            mode.name()
        ));
        let nest = geometry.nest(ctx, region, false, |_, cells, at| {
            let from: Vec<KExpr> = (0..rank)
                .map(|a| {
                    KExpr::bin(
                        BinaryOp::Sub,
                        KExpr::Helper(helper, vec![at[a].clone(), sizes[a].clone()]),
                        geometry.origin(a),
                    )
                })
                .collect();
            vec![KStmt::If {
                cond: KExpr::Unary(crate::ir::UnaryOp::Not, Box::new(inside_grid(at, sizes))),
                then: vec![KStmt::Store {
                    space: Space::Shared,
                    array: target,
                    index: cells.to_vec(),
                    value: KExpr::Load {
                        space: Space::Shared,
                        array: target,
                        index: from,
                    },
                }],
                otherwise: vec![],
            }]
        });
        vec![comment, nest, KStmt::Barrier]
    }

    /// The centre of every level's tile (the block's own points inside the
    /// grid) into the level's shadow buffer.
    fn write_back(&self, ctx: &mut PointCtx<'_>, path: &Path) -> Vec<KStmt> {
        let (program, geometry) = (self.program, &self.geometry);
        let rank = geometry.rank;
        let fixed = matches!(path, Path::Interior(_));
        let centre: Vec<(i64, i64)> = (0..rank)
            .map(|a| {
                let lo = self.tiling.halo[a].0;
                (lo, lo + i64::from(self.tiling.per_block[rank - 1 - a]))
            })
            .collect();
        let mut body = Vec::new();
        for &f in &self.tiling.staged {
            let field = &program.fields[f.0];
            for j in 0..field.levels() {
                let (tile, shadow) = (self.slots[&(f, j)], self.shadows[&(f, j)]);
                body.push(KStmt::Comment(format!(
                    "the block's points of {} into {}",
                    ctx.params.vars.decl(tile).hint,
                    ctx.params.vars.decl(shadow).hint
                )));
                let nest = geometry.nest(ctx, &centre, fixed, |ctx, cells, at| {
                    let index = ctx.linear(f, at.to_vec());
                    let store = KStmt::Store {
                        space: Space::Global,
                        array: shadow,
                        index: vec![index],
                        value: KExpr::Load {
                            space: Space::Shared,
                            array: tile,
                            index: cells.to_vec(),
                        },
                    };
                    if fixed {
                        return vec![store];
                    }
                    let inside = super::geometry::all((0..rank).map(|a| {
                        KExpr::bin(BinaryOp::Lt, at[a].clone(), geometry.sizes[a].clone())
                    }));
                    vec![KStmt::If {
                        cond: inside,
                        then: vec![store],
                        otherwise: vec![],
                    }]
                });
                body.push(nest);
            }
        }
        body
    }
}
