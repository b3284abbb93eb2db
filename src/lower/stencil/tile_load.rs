//! Cooperative loads of shared-memory tiles, in a fixed shape.
//!
//! The block shape is a compile-time constant of each kernel, so each thread
//! loads a fixed set of tile elements: along axis `d`, `ceil(extent / block)`
//! positions `l = thread + k * block` (coalesced along x, no `%` or `/`). The
//! loads are unrolled and every global load of every tile is issued into a
//! register before the first shared store, so a thread waits for memory once
//! (one round), not once per element. Only the last position along an axis
//! whose extent is not a multiple of the block can fall outside the tile; it
//! alone carries a guard (`l < extent`).
//!
//! Tile origins are not aligned to 128 bytes: the row pitch and the subset's
//! first index are run-time values, so no compile-time shift can align the
//! tile's global addresses, and widening the tile so that it could would not
//! touch fewer 128-byte lines (a warp's 32 consecutive elements span at most
//! two lines either way) while it multiplies the shared memory of narrow
//! halos (a 32-wide f32 tile with a halo of 1 would grow from 34 to 96
//! elements per row).
//!
//! A tile needing more than [`MAX_UNROLLED_TILE_LOADS`] loads per thread keeps
//! strided loops (run-time trip counts) rather than unrolling them all.

use std::collections::BTreeMap;

use crate::ir::{BinaryOp, BoundaryMode, FieldId, Value};
use crate::kir::{Helper, KExpr, KStmt, Space, Var};
use crate::lower::point::{in_range, PointCtx};

use super::AxisVars;

/// The most loads per thread per tile that are unrolled into registers.
pub const MAX_UNROLLED_TILE_LOADS: u32 = 32;

/// Loads per thread of a tile of `extents` (outermost first) for `block`:
/// `ceil(extent / block)` per axis, multiplied.
pub fn loads_per_thread(extents: &[usize], block: [u32; 3]) -> u64 {
    let rank = extents.len();
    (0..rank)
        .map(|a| (extents[a] as u64).div_ceil(u64::from(block[rank - 1 - a].max(1))))
        .product()
}

/// One tile to load: the level's buffer, the shared array, its extents and
/// origin (outermost first), and how the boundary is resolved.
pub(super) struct TileToLoad {
    pub field: FieldId,
    pub buffer: Var,
    pub tile: Var,
    pub extents: Vec<usize>,
    pub origin: Vec<i64>,
    pub mode: BoundaryMode,
    pub comment: String,
}

/// The statements loading every tile: per tile a comment and its loads into
/// registers, then every shared store; tiles too large to unroll keep loops.
pub(super) fn load_tiles(
    ctx: &mut PointCtx<'_>,
    tiles: &[TileToLoad],
    vars: &[AxisVars],
    block: [u32; 3],
) -> Vec<KStmt> {
    let mut loads = Vec::new();
    let mut stores = Vec::new();
    // The load positions `l = thread + k * block`, shared by every tile.
    let mut positions: BTreeMap<(usize, u32), Var> = BTreeMap::new();
    for t in tiles {
        loads.push(KStmt::Comment(t.comment.clone()));
        if loads_per_thread(&t.extents, block) > u64::from(MAX_UNROLLED_TILE_LOADS) {
            loads.push(KStmt::Comment(format!(
                "(more than {MAX_UNROLLED_TILE_LOADS} elements per thread: strided loops)"
            )));
            loads.push(tile_load_loops(ctx, t, vars, block));
            continue;
        }
        unrolled(ctx, t, vars, block, &mut positions, &mut loads, &mut stores);
    }
    if !stores.is_empty() {
        loads.push(KStmt::Comment(
            "every load above is in flight: now into shared memory".to_string(),
        ));
        loads.extend(stores);
    }
    loads
}

/// The global coordinates of tile element `locals` (one expression per thread
/// axis, x first) with the boundary mode applied, and the zero-mode inside test.
fn element(
    ctx: &mut PointCtx<'_>,
    t: &TileToLoad,
    vars: &[AxisVars],
    locals: &[KExpr],
) -> (KExpr, Option<KExpr>) {
    let rank = t.extents.len();
    let grid = ctx.program.fields[t.field.0].grid;
    let mut coords = Vec::new();
    let mut inside: Option<KExpr> = None;
    for (a, first) in t.origin.iter().enumerate() {
        let d = rank - 1 - a;
        let g = KExpr::plus(
            KExpr::plus(KExpr::var(vars[d].base), KExpr::int(*first)),
            locals[d].clone(),
        );
        let n = ctx.params.grid_size(ctx.program, grid, a);
        coords.push(match t.mode {
            BoundaryMode::Clamp => KExpr::Helper(Helper::Clamp, vec![g, n]),
            BoundaryMode::Mirror => KExpr::Helper(Helper::Mirror, vec![g, n]),
            BoundaryMode::Periodic => KExpr::Helper(Helper::Periodic, vec![g, n]),
            // Cells outside the grid of a `none` field are never read by a point
            // of the subset (analysis checked); they load as zero like `zero`.
            BoundaryMode::Zero | BoundaryMode::None => {
                let test = in_range(&g, n);
                inside = Some(match inside {
                    None => test,
                    Some(prev) => KExpr::bin(BinaryOp::And, prev, test),
                });
                g
            }
        });
    }
    (ctx.linear(t.field, coords), inside)
}

fn and(a: Option<KExpr>, b: Option<KExpr>) -> Option<KExpr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(KExpr::bin(BinaryOp::And, a, b)),
        (a, b) => a.or(b),
    }
}

/// The unrolled loads of one tile into registers (`loads`) and their shared
/// stores (`stores`).
fn unrolled(
    ctx: &mut PointCtx<'_>,
    t: &TileToLoad,
    vars: &[AxisVars],
    block: [u32; 3],
    positions: &mut BTreeMap<(usize, u32), Var>,
    loads: &mut Vec<KStmt>,
    stores: &mut Vec<KStmt>,
) {
    let rank = t.extents.len();
    let ty = ctx.program.fields[t.field.0].ty;
    let hint = ctx.params.vars.decl(t.buffer).hint.clone();
    // Per thread axis (x first): the trip count and the extent.
    let extent = |d: usize| t.extents[rank - 1 - d];
    let trips: Vec<u32> = (0..rank)
        .map(|d| (extent(d) as u32).div_ceil(block[d].max(1)))
        .collect();
    let total: u32 = trips.iter().product();
    for n in 0..total {
        // Position k per axis, x fastest (consecutive loads along x).
        let mut rest = n;
        let mut locals = Vec::new();
        let mut guard: Option<KExpr> = None;
        for d in 0..rank {
            let k = rest % trips[d];
            rest /= trips[d];
            let var = match positions.get(&(d, k)) {
                Some(v) => *v,
                None => {
                    let letter = ["x", "y", "z"][d];
                    let v = ctx.params.vars.temp_int(format!("l{letter}{k}"));
                    loads.push(KStmt::Decl {
                        var: v,
                        init: KExpr::plus(
                            KExpr::var(vars[d].thread),
                            KExpr::int(i64::from(k * block[d])),
                        ),
                    });
                    positions.insert((d, k), v);
                    v
                }
            };
            // Only the last position can pass the tile's end.
            let past_end = (k + 1) * block[d] > extent(d) as u32;
            if past_end {
                let test = KExpr::bin(BinaryOp::Lt, KExpr::var(var), KExpr::int(extent(d) as i64));
                guard = and(guard, Some(test));
            }
            locals.push(KExpr::var(var));
        }
        let (index, inside) = element(ctx, t, vars, &locals);
        let load = KExpr::Load {
            space: Space::Global,
            array: t.buffer,
            index: vec![index],
        };
        let zero = KExpr::Lit(Value::Int(0).cast(ty));
        let value = match and(guard.clone(), inside) {
            None => load,
            Some(test) => KExpr::Select(Box::new(test), Box::new(load), Box::new(zero)),
        };
        let register = ctx.params.vars.add(
            format!("{hint}_l{n}"),
            ty,
            Space::Private,
            crate::kir::Origin::Derived,
        );
        loads.push(KStmt::Decl {
            var: register,
            init: value,
        });
        let store = KStmt::Store {
            space: Space::Shared,
            array: t.tile,
            index: (0..rank).map(|a| locals[rank - 1 - a].clone()).collect(),
            value: KExpr::var(register),
        };
        stores.push(match guard {
            None => store,
            Some(cond) => KStmt::If {
                cond,
                then: vec![store],
                otherwise: vec![],
            },
        });
    }
}

/// The strided loops loading a tile too large to unroll: each thread strides
/// over the tile by the block size per axis.
fn tile_load_loops(
    ctx: &mut PointCtx<'_>,
    t: &TileToLoad,
    vars: &[AxisVars],
    block: [u32; 3],
) -> KStmt {
    let rank = t.extents.len();
    let locals: Vec<Var> = (0..rank)
        .map(|d| ctx.params.vars.temp_int(format!("l{}", ["x", "y", "z"][d])))
        .collect();
    let local_exprs: Vec<KExpr> = locals.iter().map(|v| KExpr::var(*v)).collect();
    let (index, inside) = element(ctx, t, vars, &local_exprs);
    let ty = ctx.program.fields[t.field.0].ty;
    let load = KExpr::Load {
        space: Space::Global,
        array: t.buffer,
        index: vec![index],
    };
    let value = crate::lower::point::select_inside(inside, load, ty);
    let mut stmt = KStmt::Store {
        space: Space::Shared,
        array: t.tile,
        index: (0..rank)
            .map(|a| KExpr::var(locals[rank - 1 - a]))
            .collect(),
        value,
    };
    for d in 0..rank {
        let a = rank - 1 - d;
        stmt = KStmt::For {
            var: locals[d],
            start: KExpr::var(vars[d].thread),
            end: KExpr::int(t.extents[a] as i64),
            step: KExpr::int(block[d] as i64),
            unroll: false,
            body: vec![stmt],
        };
    }
    stmt
}
