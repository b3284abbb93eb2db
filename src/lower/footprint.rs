//! Read footprints computed from the IR: per field time level and axis, the
//! smallest and largest offset a stencil part reads, with loop variables ranging
//! over their bounds.
//!
//! Offsets are integer expressions of literals, loop variables, parameters and
//! constants. Only offsets known at compile time (literals and loop variables,
//! combined with `+`, `-`, `*` by a literal) give a static halo; a level read at
//! an offset that depends on a run-time value stays in global memory.

use std::collections::BTreeMap;

use crate::ir::{BinaryOp, Expr, ExprKind, FieldId, LocalId, StencilPart, Stmt, UnaryOp, Value};

/// A field time level: `(field, time offset)`.
pub type Level = (FieldId, i32);

/// What a part reads of one field time level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LevelReads {
    /// Per axis (outermost first), the inclusive offset range read; `None` when
    /// some offset is not known at compile time.
    pub range: Option<Vec<(i64, i64)>>,
    /// Number of distinct static offsets read (a measure of reuse between
    /// neighbouring points).
    pub distinct: usize,
    /// Whether every read is at offset zero on every axis.
    pub only_center: bool,
}

/// Reads and writes of one stencil part.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartFootprint {
    /// Levels read, with their offset ranges.
    pub reads: BTreeMap<Level, LevelReads>,
    /// Levels written.
    pub writes: Vec<Level>,
    /// Whether every write is at offset zero on every axis (known statically).
    pub writes_only_center: bool,
}

impl PartFootprint {
    /// The footprint of parts run one after the other at each point (a fused
    /// group): reads and writes united, ranges widened.
    pub fn merge(parts: &[PartFootprint]) -> PartFootprint {
        let mut out = PartFootprint {
            writes_only_center: true,
            ..PartFootprint::default()
        };
        for fp in parts {
            out.writes_only_center &= fp.writes_only_center;
            for level in &fp.writes {
                if !out.writes.contains(level) {
                    out.writes.push(*level);
                }
            }
            for (level, reads) in &fp.reads {
                match out.reads.get_mut(level) {
                    None => {
                        out.reads.insert(*level, reads.clone());
                    }
                    Some(acc) => acc.widen(reads),
                }
            }
        }
        out
    }
}

impl LevelReads {
    /// Widens to also cover `other`'s reads of the same level.
    fn widen(&mut self, other: &LevelReads) {
        self.range = match (self.range.take(), &other.range) {
            (Some(a), Some(b)) => Some(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| (x.0.min(y.0), x.1.max(y.1)))
                    .collect(),
            ),
            _ => None,
        };
        self.distinct = self.distinct.max(other.distinct);
        self.only_center &= other.only_center;
    }
}

/// The inclusive range of an integer offset expression, given the ranges of the
/// loop variables in scope; `None` if it is not a compile-time affine expression.
pub fn offset_range(e: &Expr, loops: &BTreeMap<LocalId, (i64, i64)>) -> Option<(i64, i64)> {
    match &e.kind {
        ExprKind::Literal(Value::Int(v)) => Some((*v as i64, *v as i64)),
        ExprKind::Literal(Value::Long(v)) => Some((*v, *v)),
        ExprKind::Local(id) => loops.get(id).copied(),
        ExprKind::Cast(a) if !e.ty.is_float() => offset_range(a, loops),
        ExprKind::Unary(UnaryOp::Neg, a) => offset_range(a, loops).map(|(lo, hi)| (-hi, -lo)),
        ExprKind::Binary(op, a, b) => {
            let (alo, ahi) = offset_range(a, loops)?;
            let (blo, bhi) = offset_range(b, loops)?;
            match op {
                BinaryOp::Add => Some((alo + blo, ahi + bhi)),
                BinaryOp::Sub => Some((alo - bhi, ahi - blo)),
                BinaryOp::Mul => {
                    let c = [alo * blo, alo * bhi, ahi * blo, ahi * bhi];
                    Some((*c.iter().min()?, *c.iter().max()?))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The static value of an integer offset expression with the given loop
/// variables fixed, if it has one.
pub fn offset_value(e: &Expr, fixed: &BTreeMap<LocalId, i64>) -> Option<i64> {
    let loops = fixed.iter().map(|(k, v)| (*k, (*v, *v))).collect();
    match offset_range(e, &loops)? {
        (lo, hi) if lo == hi => Some(lo),
        _ => None,
    }
}

/// Computes a part's footprint.
pub fn part_footprint(part: &StencilPart) -> PartFootprint {
    let mut fp = PartFootprint {
        writes_only_center: true,
        ..PartFootprint::default()
    };
    let mut offsets = OffsetLists::new();
    let mut loops = BTreeMap::new();
    walk(&part.body, &mut loops, &mut fp, &mut offsets);
    for (level, list) in offsets {
        let rank = list.iter().flatten().map(Vec::len).next().unwrap_or(0);
        let mut range: Option<Vec<(i64, i64)>> = Some(vec![(i64::MAX, i64::MIN); rank]);
        let mut distinct = std::collections::BTreeSet::new();
        let mut only_center = true;
        for item in &list {
            match (item, range.as_mut()) {
                (Some(r), Some(acc)) => {
                    for (a, (lo, hi)) in r.iter().enumerate() {
                        acc[a].0 = acc[a].0.min(*lo);
                        acc[a].1 = acc[a].1.max(*hi);
                    }
                    if r.iter().any(|&(lo, hi)| lo != 0 || hi != 0) {
                        only_center = false;
                    }
                    // Each point of a loop-spanned range is one distinct offset.
                    enumerate_box(r, &mut |p| {
                        distinct.insert(p);
                    });
                }
                _ => {
                    range = None;
                    only_center = false;
                }
            }
        }
        fp.reads.insert(
            level,
            LevelReads {
                range,
                distinct: distinct.len(),
                only_center,
            },
        );
    }
    fp
}

fn enumerate_box(r: &[(i64, i64)], f: &mut dyn FnMut(Vec<i64>)) {
    let count: i64 = r.iter().map(|(lo, hi)| hi - lo + 1).product();
    if count > 4096 {
        // Too many to list; report a large reuse without enumerating.
        for i in 0..4096 {
            f(vec![i, i64::MIN]);
        }
        return;
    }
    fn rec(r: &[(i64, i64)], prefix: &mut Vec<i64>, f: &mut dyn FnMut(Vec<i64>)) {
        match r.split_first() {
            None => f(prefix.clone()),
            Some(((lo, hi), rest)) => {
                for v in *lo..=*hi {
                    prefix.push(v);
                    rec(rest, prefix, f);
                    prefix.pop();
                }
            }
        }
    }
    rec(r, &mut Vec::new(), f);
}

type OffsetLists = BTreeMap<Level, Vec<Option<Vec<(i64, i64)>>>>;

fn walk(
    body: &[Stmt],
    loops: &mut BTreeMap<LocalId, (i64, i64)>,
    fp: &mut PartFootprint,
    offsets: &mut OffsetLists,
) {
    for stmt in body {
        match stmt {
            Stmt::Assign { value, .. } => reads(value, loops, offsets),
            Stmt::Store { target, value, .. } => {
                reads(value, loops, offsets);
                target.offset.iter().for_each(|e| reads(e, loops, offsets));
                let center = target
                    .offset
                    .iter()
                    .all(|o| offset_range(o, loops) == Some((0, 0)));
                fp.writes_only_center &= center;
                let level = (target.field, target.time);
                if !fp.writes.contains(&level) {
                    fp.writes.push(level);
                }
            }
            Stmt::For {
                var, lo, hi, body, ..
            } => {
                if hi < lo {
                    continue;
                }
                let saved = loops.insert(*var, (*lo, *hi));
                walk(body, loops, fp, offsets);
                match saved {
                    Some(s) => loops.insert(*var, s),
                    None => loops.remove(var),
                };
            }
        }
    }
}

fn reads(e: &Expr, loops: &BTreeMap<LocalId, (i64, i64)>, offsets: &mut OffsetLists) {
    e.visit(&mut |sub| {
        if let ExprKind::Load(r) = &sub.kind {
            let ranges: Option<Vec<_>> = r.offset.iter().map(|o| offset_range(o, loops)).collect();
            offsets.entry((r.field, r.time)).or_default().push(ranges);
        }
    });
}
