//! Vector accesses of a run of consecutive points along x.
//!
//! A thread computing `W` consecutive points of a row (`--vector W`, see
//! [`crate::schedule::StencilSchedule::vector`]) reads, for each row it
//! touches, elements `ix0 + c` at a few constant offsets `c`, and writes
//! elements `ix0 + p` for `p` in `0..W`. [`vectorize`] turns those into
//! aligned vector accesses of `W` (or 2) elements: one load instruction
//! brings 8 or 16 bytes, so a thread keeps more bytes in flight (f32 streams
//! with one 4-byte load per row do not reach the copy bandwidth; f64 ones
//! do: bench/gpu/probe), and one store writes the row's values together.
//!
//! The accesses are aligned because `ix0` is a multiple of `W` (the kernel's
//! blocks start at an aligned x and each thread's run at `tx * W`), a row
//! starts at a multiple of the grid's x size, which the caller's condition
//! requires to be a multiple of `W` (the returned sizes), and device buffers
//! start aligned. A vector never leaves its row then, so a vector with one
//! lane inside the grid lies inside the buffer. A 1-D index has no row and
//! no size to require: there only the vector of the run's own points (which
//! the fast path's condition puts inside the subset, hence inside the grid of
//! the fields written) of a field on that grid is loaded as one.
//!
//! What is loaded as a vector:
//! - a global load the run performs unconditionally (as in [`super::cse`]),
//!   of an array the run never stores into, whose index is `row + ix0 + c`
//!   with `row` a multiple of a grid size variable (or absent, in 1-D) and
//!   reading no variable declared in the run;
//! - per row, each aligned group of `W` elements from which the run reads
//!   two lanes or more, as the smallest aligned vector holding them (a
//!   single lane stays a scalar load: it costs one instruction either way
//!   and fewer registers).
//!
//! What is stored as a vector: a row of `W` points whose values are stored
//! into an array at `row + ix0 + p`, once each, directly in the point's block
//! (not under a condition), into an array the run reads only by reading an
//! element back later in the block that stored it (a fused check's terms).
//! Each value goes to a private variable, which such a read then takes, and
//! the row is stored after its last point.

use std::collections::BTreeSet;

use crate::ir::{BinaryOp, Value};
use crate::kir::cse::{index_is_invariant, scan_writes, unconditional_loads};
use crate::kir::visit::rewrite_stmt;
use crate::kir::{KExpr, KStmt, Origin, Space, Var, Vars};

/// What [`vectorize`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Vectorized {
    /// Vector loads declared at the top of the run.
    pub loads: usize,
    /// Rows stored as one vector.
    pub stores: usize,
    /// The grid size variables every vectorized row index is a multiple of:
    /// the fast path must require each to be a multiple of the width.
    pub sizes: Vec<Var>,
}

/// A global index split as `row + x + c`: the row (`None` in 1-D), the row's
/// size variable and `c`.
struct Split {
    row: Option<KExpr>,
    size: Option<Var>,
    offset: i64,
}

/// `x`, `x + c` or `x - c`: `c`.
fn x_offset(e: &KExpr, x: Var) -> Option<i64> {
    match e {
        KExpr::Var(v) if *v == x => Some(0),
        KExpr::Binary(op @ (BinaryOp::Add | BinaryOp::Sub), a, b) => match (&**a, &**b) {
            (KExpr::Var(v), KExpr::Lit(Value::Int(c))) if *v == x => {
                Some(if *op == BinaryOp::Add {
                    i64::from(*c)
                } else {
                    -i64::from(*c)
                })
            }
            _ => None,
        },
        _ => None,
    }
}

fn mentions(e: &KExpr, var: Var) -> bool {
    let mut found = false;
    e.visit(&mut |n| {
        if *n == KExpr::Var(var) {
            found = true
        }
    });
    found
}

fn split(index: &KExpr, x: Var) -> Option<Split> {
    if let Some(offset) = x_offset(index, x) {
        return Some(Split {
            row: None,
            size: None,
            offset,
        });
    }
    let KExpr::Binary(BinaryOp::Add, row, xt) = index else {
        return None;
    };
    let offset = x_offset(xt, x)?;
    let KExpr::Binary(BinaryOp::Mul, _, size) = &**row else {
        return None;
    };
    let KExpr::Var(size) = **size else {
        return None;
    };
    if mentions(row, x) {
        return None;
    }
    Some(Split {
        row: Some((**row).clone()),
        size: Some(size),
        offset,
    })
}

/// `row + (x + c)`.
fn index_at(row: &Option<KExpr>, x: Var, c: i64) -> KExpr {
    let xc = KExpr::plus(KExpr::var(x), KExpr::int(c));
    match row {
        None => xc,
        Some(row) => KExpr::Binary(BinaryOp::Add, Box::new(row.clone()), Box::new(xc)),
    }
}

/// One row of one array the run reads: the offsets it reads there.
struct RowReads {
    array: Var,
    row: Option<KExpr>,
    size: Option<Var>,
    offsets: BTreeSet<i64>,
}

/// Rewrites the straight-line `run` (the fast path of a thread's `width`
/// consecutive points from `x`, which is a multiple of `width`) to use vector
/// loads and stores where it can; see the module documentation.
/// `own`: the buffers of fields on the grid the run's subset lies in (in 1-D
/// only theirs are vectorized).
pub fn vectorize(
    run: &mut Vec<KStmt>,
    vars: &mut Vars,
    x: Var,
    width: u8,
    own: &BTreeSet<Var>,
) -> Vectorized {
    let w = i64::from(width);
    let mut stored = BTreeSet::new();
    let mut declared = BTreeSet::new();
    scan_writes(run, &mut stored, &mut declared);
    let mut unconditional = Vec::new();
    for stmt in run.iter() {
        unconditional_loads(stmt, &mut unconditional);
    }
    let mut rows: Vec<RowReads> = Vec::new();
    for (space, array, index) in &unconditional {
        if *space != Space::Global
            || stored.contains(array)
            || index.len() != 1
            || !index_is_invariant(index, &declared)
            || usize::from(width) * vars.decl(*array).ty.size_bytes() > 16
        {
            continue;
        }
        let Some(s) = split(&index[0], x) else {
            continue;
        };
        match rows
            .iter_mut()
            .find(|r| r.array == *array && r.row == s.row)
        {
            Some(r) => {
                r.offsets.insert(s.offset);
            }
            None => rows.push(RowReads {
                array: *array,
                row: s.row,
                size: s.size,
                offsets: BTreeSet::from([s.offset]),
            }),
        }
    }
    let mut out = Vectorized::default();
    let mut decls = Vec::new();
    // (array, index) -> lane of a vector variable.
    let mut replace: Vec<((Var, KExpr), KExpr)> = Vec::new();
    let mut numbers: Vec<(Var, usize)> = Vec::new();
    for r in &rows {
        let groups: BTreeSet<i64> = r.offsets.iter().map(|c| c.div_euclid(w)).collect();
        for k in groups {
            let lanes: Vec<i64> = r
                .offsets
                .iter()
                .filter(|c| c.div_euclid(w) == k)
                .map(|c| c - k * w)
                .collect();
            // In 1-D no size condition keeps a vector inside the buffer:
            // only the run's own points (group 0) of a field on the run's
            // grid are known to be inside.
            if lanes.len() < 2 || (r.row.is_none() && (k != 0 || !own.contains(&r.array))) {
                continue;
            }
            // The smallest aligned vector holding the lanes.
            let (start, len) = if w == 4 && lanes.iter().all(|&l| l < 2) {
                (0, 2)
            } else if w == 4 && lanes.iter().all(|&l| l >= 2) {
                (2, 2)
            } else {
                (0, w)
            };
            let n = match numbers.iter_mut().find(|(a, _)| *a == r.array) {
                Some((_, n)) => {
                    *n += 1;
                    *n - 1
                }
                None => {
                    numbers.push((r.array, 1));
                    0
                }
            };
            let decl = vars.decl(r.array);
            let (hint, ty) = (format!("{}_v{n}", decl.hint), decl.ty);
            let var = vars.add_vector(hint, ty, len as u8);
            let first = k * w + start;
            decls.push(KStmt::Decl {
                var,
                init: KExpr::VecLoad {
                    array: r.array,
                    index: Box::new(index_at(&r.row, x, first)),
                    lanes: len as u8,
                },
            });
            for lane in lanes {
                let c = k * w + lane;
                replace.push((
                    (r.array, index_at(&r.row, x, c)),
                    KExpr::Lane(var, (lane - start) as u8),
                ));
            }
            if let Some(size) = r.size {
                if !out.sizes.contains(&size) {
                    out.sizes.push(size);
                }
            }
            out.loads += 1;
        }
    }
    if !replace.is_empty() {
        for stmt in run.iter_mut() {
            rewrite_stmt(stmt, &mut |e| {
                let KExpr::Load {
                    space: Space::Global,
                    array,
                    index,
                } = e
                else {
                    return None;
                };
                let [index] = index.as_slice() else {
                    return None;
                };
                replace
                    .iter()
                    .find(|((a, i), _)| a == array && i == index)
                    .map(|(_, lane)| lane.clone())
            });
        }
    }
    vector_stores(run, vars, x, width, &mut out);
    decls.append(run);
    *run = decls;
    out
}

/// The stores of one row of one array: (array, row, the row's size
/// variable, the stores).
type RowStores = (Var, Option<KExpr>, Option<Var>, Vec<RowStore>);

/// A store directly in the point block at `run[block]`, statement `at`.
struct RowStore {
    block: usize,
    at: usize,
    lane: i64,
}

/// Turns each row of `width` stores (see the module documentation) into
/// assignments to private variables and one vector store after the row's
/// last point.
fn vector_stores(run: &mut Vec<KStmt>, vars: &mut Vars, x: Var, width: u8, out: &mut Vectorized) {
    let w = i64::from(width);
    // (array, row, size) -> stores.
    let mut rows: Vec<RowStores> = Vec::new();
    let mut refused = kept_scalar(run);
    for (b, stmt) in run.iter().enumerate() {
        let KStmt::Block(body) = stmt else {
            continue;
        };
        for (at, s) in body.iter().enumerate() {
            let KStmt::Store {
                space: Space::Global,
                array,
                index,
                ..
            } = s
            else {
                continue;
            };
            let split = match index.as_slice() {
                [i] => split(i, x),
                _ => None,
            };
            let fits = usize::from(width) * vars.decl(*array).ty.size_bytes() <= 16;
            match split {
                Some(s) if fits && (0..w).contains(&s.offset) => {
                    let store = RowStore {
                        block: b,
                        at,
                        lane: s.offset,
                    };
                    match rows.iter_mut().find(|r| r.0 == *array && r.1 == s.row) {
                        Some(r) => r.3.push(store),
                        None => rows.push((*array, s.row, s.size, vec![store])),
                    }
                }
                _ => {
                    refused.insert(*array);
                }
            }
        }
    }
    // Insertions, applied from the back: (position in run, statements).
    let mut before: Vec<(usize, Vec<KStmt>)> = Vec::new();
    let mut after: Vec<(usize, KStmt)> = Vec::new();
    for (array, row, size, stores) in rows {
        let mut lanes: Vec<i64> = stores.iter().map(|s| s.lane).collect();
        lanes.sort_unstable();
        if refused.contains(&array) || lanes != (0..w).collect::<Vec<_>>() {
            continue;
        }
        let decl = vars.decl(array);
        let (hint, ty) = (decl.hint.clone(), decl.ty);
        let mut temps = Vec::new();
        for lane in 0..w {
            temps.push(vars.add(
                format!(
                    "{hint}_w{}{}",
                    out.stores,
                    crate::kir::print::LANE_NAMES[lane as usize]
                ),
                ty,
                Space::Private,
                Origin::Derived,
            ));
        }
        let mut first = stores.iter().map(|s| s.block).min().unwrap_or(0);
        // Before the comment naming the row's first point.
        if first > 0 && matches!(run[first - 1], KStmt::Comment(_)) {
            first -= 1;
        }
        let last = stores.iter().map(|s| s.block).max().unwrap_or(0);
        for s in &stores {
            let KStmt::Block(body) = &mut run[s.block] else {
                continue;
            };
            let temp = temps[s.lane as usize];
            if let KStmt::Store { value, .. } = &body[s.at] {
                body[s.at] = KStmt::Assign {
                    var: temp,
                    value: value.clone(),
                };
            }
            // A read of the element back (a fused check's term) takes the value.
            let element = index_at(&row, x, s.lane);
            for later in &mut body[s.at + 1..] {
                rewrite_stmt(later, &mut |e| match e {
                    KExpr::Load {
                        space: Space::Global,
                        array: a,
                        index,
                    } if *a == array && index.as_slice() == std::slice::from_ref(&element) => {
                        Some(KExpr::var(temp))
                    }
                    _ => None,
                });
            }
        }
        let zero = KExpr::Lit(Value::Int(0).cast(ty));
        before.push((
            first,
            temps
                .iter()
                .map(|&var| KStmt::Decl {
                    var,
                    init: zero.clone(),
                })
                .collect(),
        ));
        after.push((
            last,
            KStmt::VecStore {
                array,
                index: index_at(&row, x, 0),
                values: temps.iter().map(|&t| KExpr::var(t)).collect(),
            },
        ));
        if let Some(size) = size {
            if !out.sizes.contains(&size) {
                out.sizes.push(size);
            }
        }
        out.stores += 1;
    }
    // Apply from the last position back so earlier positions stay valid;
    // at one position the store goes after the block, declarations before.
    let mut edits: Vec<(usize, bool, Vec<KStmt>)> = before
        .into_iter()
        .map(|(at, stmts)| (at, false, stmts))
        .chain(after.into_iter().map(|(at, s)| (at + 1, true, vec![s])))
        .collect();
    edits.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    for (at, _, stmts) in edits {
        let at = at.min(run.len());
        for (i, s) in stmts.into_iter().enumerate() {
            run.insert(at + i, s);
        }
    }
}

/// The arrays whose stores stay scalar: those the run reads other than by
/// reading back, later in the same point block, an element that block stored
/// directly (a vector store comes after the row's last point), and those
/// stored anywhere but directly in a point block (under a condition, say).
fn kept_scalar(run: &[KStmt]) -> BTreeSet<Var> {
    let mut refused = BTreeSet::new();
    for stmt in run {
        let mut stored: Vec<(Var, KExpr)> = Vec::new();
        let (body, in_block) = match stmt {
            KStmt::Block(body) => (body.as_slice(), true),
            other => (std::slice::from_ref(other), false),
        };
        for s in body {
            crate::kir::visit::for_each_expr(std::slice::from_ref(s), |e| {
                if let KExpr::Load {
                    space: Space::Global,
                    array,
                    index,
                } = e
                {
                    let back =
                        matches!(index.as_slice(), [i] if stored.contains(&(*array, i.clone())));
                    if !back {
                        refused.insert(*array);
                    }
                }
            });
            match s {
                KStmt::Store {
                    space,
                    array,
                    index,
                    ..
                } if in_block => {
                    if let (Space::Global, [i]) = (space, index.as_slice()) {
                        stored.push((*array, i.clone()));
                    }
                }
                _ => {
                    let mut declared = BTreeSet::new();
                    scan_writes(std::slice::from_ref(s), &mut refused, &mut declared);
                }
            }
        }
    }
    refused
}
