//! Lowering of the per-point code of stencil and reduction parts: expressions,
//! statements, field reads (from a shared tile or global memory with the
//! boundary mode applied) and coefficient tables (literals, constant, shared).

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::access::LoopRange;
use crate::analysis::affine::Affine;
use crate::analysis::Level;
use crate::ir::{
    BinaryOp, BoundaryMode, Expr, ExprKind, GridRef, LocalId, Program, ScalarType, Stmt, TableId,
    Value,
};
use crate::kir::{Helper, KExpr, KStmt, Module, Origin, SharedArray, Space, Var};
use crate::lower::plan::ArgSource;
use crate::lower::{constant_table, Fixed, Params};
use crate::schedule::TablePlacement;

/// Loops are unrolled (to fold table entries) only up to this many iterations
/// in one nest.
const MAX_UNROLLED: i64 = 4096;

/// A shared-memory tile of a field level: its array and the offset of its first
/// element from the block's first point, per axis (outermost first).
#[derive(Clone, Debug)]
pub(crate) struct Tile {
    /// The shared array.
    pub var: Var,
    /// Per axis, the smallest offset read (the tile starts there).
    pub origin: Vec<i64>,
}

/// Everything needed to lower the code run at one point.
pub(crate) struct PointCtx<'a> {
    pub program: &'a Program,
    /// Grid index of the point per axis, outermost first.
    pub coords: Vec<KExpr>,
    /// Position of the point within its block's points, per axis (for tiles).
    pub in_block: Vec<KExpr>,
    /// Tiled levels.
    pub tiles: BTreeMap<Level, Tile>,
    /// Table placements.
    pub tables: BTreeMap<TableId, TablePlacement>,
    /// Tables copied to shared memory: (table, shared array).
    pub shared_tables: Vec<(TableId, Var)>,
    /// Tables read from constant memory, with the kernel's variable for each.
    pub const_tables: BTreeMap<TableId, Var>,
    /// Shared arrays the kernel declares.
    pub shared: Vec<SharedArray>,
    /// The variables of the part's locals, by `LocalId`.
    pub locals: Vec<Var>,
    /// The locals some expression of the part reads; assignments to the others
    /// are dropped (they cannot change a result, and NVRTC warns about them).
    pub read_locals: BTreeSet<LocalId>,
    /// Loop variables fixed by unrolling.
    pub fixed: Fixed,
    /// Whether to unroll loops (the part reads a table folded into literals).
    pub unroll: bool,
    /// Kernel parameters.
    pub params: Params,
    /// Whether `double` appears.
    pub uses_double: bool,
}

impl<'a> PointCtx<'a> {
    /// A context for a point at `coords` (variables named by the caller).
    pub fn new(program: &'a Program, coords: Vec<KExpr>, in_block: Vec<KExpr>) -> Self {
        PointCtx {
            program,
            coords,
            in_block,
            tiles: BTreeMap::new(),
            tables: BTreeMap::new(),
            shared_tables: Vec::new(),
            const_tables: BTreeMap::new(),
            shared: Vec::new(),
            locals: Vec::new(),
            read_locals: BTreeSet::new(),
            fixed: Fixed::new(),
            unroll: false,
            params: Params::default(),
            uses_double: false,
        }
    }

    /// Declares a variable for each of the part's locals (the namer keeps the
    /// written name where it can and tells apart locals of inlined functions
    /// that share one).
    pub fn name_locals(&mut self, locals: &[crate::ir::Local]) {
        self.locals = locals
            .iter()
            .map(|l| {
                self.params
                    .vars
                    .add(&l.name, l.ty, Space::Private, Origin::Program)
            })
            .collect();
    }

    /// The kernel's variable for a table in constant memory.
    pub fn const_table(&mut self, t: TableId, module: &mut Module) -> Var {
        if let Some(var) = self.const_tables.get(&t) {
            return *var;
        }
        let index = constant_table(self.program, t, module);
        let table = &module.constants[index];
        let var = self.params.vars.add(
            table.name.clone(),
            table.ty,
            Space::Constant,
            Origin::Table(index),
        );
        self.const_tables.insert(t, var);
        var
    }

    /// Lowers statements.
    pub fn stmts(&mut self, body: &[Stmt], module: &mut Module, nest: i64) -> Vec<KStmt> {
        let mut out = Vec::new();
        for stmt in body {
            match stmt {
                Stmt::Assign { local, .. } if !self.read_locals.contains(local) => {}
                Stmt::Assign { local, value, .. } => {
                    let value = self.expr(value, module);
                    out.push(KStmt::Assign {
                        var: self.locals[local.0],
                        value,
                    });
                }
                Stmt::Store { target, value, .. } => {
                    let value = self.expr(value, module);
                    let name = self
                        .params
                        .level(self.program, target.field, target.time, true);
                    let coords: Vec<KExpr> = target
                        .offset
                        .iter()
                        .enumerate()
                        .map(|(a, o)| KExpr::plus(self.coords[a].clone(), self.expr(o, module)))
                        .collect();
                    let index = self.linear(target.field, coords);
                    out.push(KStmt::Store {
                        space: Space::Global,
                        array: name,
                        index: vec![index],
                        value,
                    });
                }
                Stmt::For {
                    var, lo, hi, body, ..
                } => {
                    if hi < lo {
                        continue;
                    }
                    let trips = hi - lo + 1;
                    if self.unroll && nest * trips <= MAX_UNROLLED {
                        for v in *lo..=*hi {
                            self.fixed.insert(*var, v);
                            out.extend(self.stmts(body, module, nest * trips));
                        }
                        self.fixed.remove(var);
                    } else {
                        let body = self.stmts(body, module, nest * trips);
                        out.push(KStmt::For {
                            var: self.locals[var.0],
                            start: KExpr::int(*lo),
                            end: KExpr::int(hi + 1),
                            step: KExpr::int(1),
                            unroll: true,
                            body,
                        });
                    }
                }
            }
        }
        out
    }

    /// Lowers an expression.
    pub fn expr(&mut self, e: &Expr, module: &mut Module) -> KExpr {
        if e.ty == ScalarType::Double {
            self.uses_double = true;
        }
        match &e.kind {
            ExprKind::Literal(v) => KExpr::Lit(*v),
            ExprKind::Param(p) => {
                let param = &self.program.params[p.0];
                self.params
                    .scalar(&param.name, param.ty, ArgSource::Param(*p), Origin::Program)
            }
            ExprKind::Const(c) => {
                let constant = &self.program.constants[c.0];
                self.params.scalar(
                    &constant.name,
                    constant.ty,
                    ArgSource::Const(*c),
                    Origin::Program,
                )
            }
            ExprKind::Local(id) => match self.fixed.get(id) {
                Some(v) => KExpr::int(*v),
                None => KExpr::var(self.locals[id.0]),
            },
            ExprKind::Load(r) => self.load(r, module),
            ExprKind::Table { table, index } => self.table(*table, index, module),
            ExprKind::Reduction(_) => {
                // The front-end only allows reductions in the check, which runs on the host.
                KExpr::Lit(Value::Int(0))
            }
            ExprKind::Unary(op, a) => KExpr::Unary(*op, Box::new(self.expr(a, module))),
            ExprKind::Binary(op, a, b) => {
                let a = self.expr(a, module);
                let b = self.expr(b, module);
                if a_is_int_lit(&a) && a_is_int_lit(&b) {
                    KExpr::bin(*op, a, b)
                } else {
                    KExpr::Binary(*op, Box::new(a), Box::new(b))
                }
            }
            ExprKind::Select {
                cond,
                then,
                otherwise,
            } => KExpr::Select(
                Box::new(self.expr(cond, module)),
                Box::new(self.expr(then, module)),
                Box::new(self.expr(otherwise, module)),
            ),
            ExprKind::Call {
                func,
                float_form,
                args,
            } => KExpr::Call {
                func: *func,
                float_form: *float_form,
                args: args.iter().map(|a| self.expr(a, module)).collect(),
            },
            ExprKind::Cast(a) => {
                let inner = self.expr(a, module);
                match (&inner, e.ty) {
                    (KExpr::Lit(v), _) => KExpr::Lit(v.cast(e.ty)),
                    _ => KExpr::Cast(e.ty, Box::new(inner)),
                }
            }
        }
    }

    /// The value of an integer offset or index expression when it is known at
    /// compile time with the unrolled loops' variables fixed.
    fn static_index(&self, e: &Expr) -> Option<i64> {
        let fixed: Vec<LoopRange> = self
            .fixed
            .iter()
            .map(|(&var, &v)| LoopRange { var, lo: v, hi: v })
            .collect();
        let (value, _) = Affine::of_expr(self.program, e)?.loop_extremes(&fixed)?;
        value.as_constant()
    }

    /// An integer offset expression: a literal when the unrolled loops fix it.
    fn offset(&mut self, e: &Expr, module: &mut Module) -> (KExpr, Option<i64>) {
        match self.static_index(e) {
            Some(v) => (KExpr::int(v), Some(v)),
            None => {
                let k = self.expr(e, module);
                let k = if e.ty == ScalarType::Int {
                    k
                } else {
                    KExpr::Cast(ScalarType::Int, Box::new(k))
                };
                (k, None)
            }
        }
    }

    /// The flat index of `coords` in field `field`'s grid.
    pub fn linear(&mut self, field: crate::ir::FieldId, coords: Vec<KExpr>) -> KExpr {
        let grid = self.program.fields[field.0].grid;
        let mut index: Option<KExpr> = None;
        for (axis, c) in coords.into_iter().enumerate() {
            index = Some(match index {
                None => c,
                Some(prev) => {
                    let size = self.params.grid_size(self.program, grid, axis);
                    KExpr::plus(KExpr::times(prev, size), c)
                }
            });
        }
        index.unwrap_or_else(|| KExpr::int(0))
    }

    fn load(&mut self, r: &GridRef, module: &mut Module) -> KExpr {
        let offsets: Vec<(KExpr, Option<i64>)> =
            r.offset.iter().map(|o| self.offset(o, module)).collect();
        let level = (r.field, r.time);
        if let Some(tile) = self.tiles.get(&level).cloned() {
            // Shared index: point-in-block + offset - origin, affine in the thread index.
            let index = offsets
                .into_iter()
                .enumerate()
                .map(|(a, (o, _))| {
                    KExpr::plus(
                        KExpr::plus(self.in_block[a].clone(), o),
                        KExpr::int(-tile.origin[a]),
                    )
                })
                .collect();
            return KExpr::Load {
                space: Space::Shared,
                array: tile.var,
                index,
            };
        }
        let field = &self.program.fields[r.field.0];
        let (mode, grid, ty) = (field.boundary, field.grid, field.ty);
        let name = self.params.level(self.program, r.field, r.time, false);
        let mut coords = Vec::new();
        let mut inside: Option<KExpr> = None;
        for (a, (o, value)) in offsets.into_iter().enumerate() {
            let c = KExpr::plus(self.coords[a].clone(), o);
            if value == Some(0) {
                coords.push(c);
                continue;
            }
            let n = self.params.grid_size(self.program, grid, a);
            match mode {
                BoundaryMode::None => coords.push(c),
                BoundaryMode::Clamp => coords.push(KExpr::Helper(Helper::Clamp, vec![c, n])),
                BoundaryMode::Mirror => coords.push(KExpr::Helper(Helper::Mirror, vec![c, n])),
                BoundaryMode::Periodic => coords.push(KExpr::Helper(Helper::Wrap, vec![c, n])),
                BoundaryMode::Zero => {
                    let test = in_range(&c, n);
                    inside = Some(match inside {
                        None => test,
                        Some(prev) => KExpr::bin(BinaryOp::And, prev, test),
                    });
                    coords.push(c);
                }
            }
        }
        let index = self.linear(r.field, coords);
        let value = KExpr::Load {
            space: Space::Global,
            array: name,
            index: vec![index],
        };
        match inside {
            None => value,
            Some(test) => KExpr::Select(
                Box::new(test),
                Box::new(value),
                Box::new(KExpr::Lit(Value::Int(0).cast(ty))),
            ),
        }
    }

    fn table(&mut self, t: TableId, index: &[Expr], module: &mut Module) -> KExpr {
        let table = &self.program.tables[t.0];
        let placement = self
            .tables
            .get(&t)
            .copied()
            .unwrap_or(TablePlacement::Constant);
        let statics: Option<Vec<i64>> = index.iter().map(|i| self.static_index(i)).collect();
        if placement == TablePlacement::Literals {
            if let Some(idx) = &statics {
                if let Some(flat) = flat_index(&table.shape, idx) {
                    return KExpr::Lit(table.values[flat]);
                }
            }
        }
        let shape = table.shape.clone();
        let mut flat: Option<KExpr> = None;
        for (d, i) in index.iter().enumerate() {
            let (k, _) = self.offset(i, module);
            flat = Some(match flat {
                None => k,
                Some(prev) => KExpr::plus(KExpr::times(prev, KExpr::int(shape[d] as i64)), k),
            });
        }
        let flat = flat.unwrap_or_else(|| KExpr::int(0));
        let const_var = self.const_table(t, module);
        if placement == TablePlacement::Shared {
            let shared_var = match self.shared_tables.iter().find(|(id, _)| *id == t) {
                Some((_, var)) => *var,
                None => {
                    let var = self.params.vars.add(
                        format!("{}_shared", table.name),
                        table.ty,
                        Space::Shared,
                        Origin::Derived,
                    );
                    self.shared_tables.push((t, var));
                    self.shared.push(SharedArray {
                        var,
                        ty: table.ty,
                        dims: vec![table.values.len()],
                    });
                    var
                }
            };
            return KExpr::Load {
                space: Space::Shared,
                array: shared_var,
                index: vec![flat],
            };
        }
        KExpr::Load {
            space: Space::Constant,
            array: const_var,
            index: vec![flat],
        }
    }

    /// Statements declaring the part's locals (they start at zero), skipping loop
    /// variables, which their loops declare, and locals nothing reads (whose
    /// assignments [`PointCtx::stmts`] then drops).
    pub fn declare_locals(&mut self, part: &crate::ir::StencilPart) -> Vec<KStmt> {
        let loop_vars = loop_vars(&part.body);
        self.read_locals = read_locals(&part.body);
        part.locals
            .iter()
            .enumerate()
            .filter(|(i, _)| !loop_vars.contains(&LocalId(*i)))
            .filter(|(i, _)| self.read_locals.contains(&LocalId(*i)))
            .map(|(i, l)| KStmt::Decl {
                var: self.locals[i],
                init: KExpr::Lit(Value::Int(0).cast(l.ty)),
            })
            .collect()
    }
}

fn a_is_int_lit(e: &KExpr) -> bool {
    matches!(e, KExpr::Lit(Value::Int(_)))
}

fn flat_index(shape: &[usize], idx: &[i64]) -> Option<usize> {
    let mut flat = 0usize;
    for (n, i) in shape.iter().zip(idx) {
        if *i < 0 || *i as usize >= *n {
            return None;
        }
        flat = flat * n + *i as usize;
    }
    Some(flat)
}

/// `0 <= c && c < n`.
pub(crate) fn in_range(c: &KExpr, n: KExpr) -> KExpr {
    KExpr::bin(
        BinaryOp::And,
        KExpr::bin(BinaryOp::Ge, c.clone(), KExpr::int(0)),
        KExpr::bin(BinaryOp::Lt, c.clone(), n),
    )
}

/// The locals whose values can reach a store: read by a store's value or
/// offsets, or by the assignment of a local that can (a fixpoint, so a chain of
/// locals ending in nothing is dead as a whole).
fn read_locals(body: &[Stmt]) -> BTreeSet<LocalId> {
    fn reads(e: &Expr, into: &mut BTreeSet<LocalId>) {
        e.visit(&mut |e| {
            if let ExprKind::Local(id) = e.kind {
                into.insert(id);
            }
        });
    }
    fn walk(body: &[Stmt], live: &mut BTreeSet<LocalId>) {
        for stmt in body {
            match stmt {
                Stmt::Assign { local, value, .. } => {
                    if live.contains(local) {
                        reads(value, live);
                    }
                }
                Stmt::Store { target, value, .. } => {
                    target.offset.iter().for_each(|o| reads(o, live));
                    reads(value, live);
                }
                Stmt::For { body, .. } => walk(body, live),
            }
        }
    }
    let mut live = BTreeSet::new();
    loop {
        let before = live.len();
        walk(body, &mut live);
        if live.len() == before {
            return live;
        }
    }
}

fn loop_vars(body: &[Stmt]) -> Vec<LocalId> {
    let mut out = Vec::new();
    for stmt in body {
        if let Stmt::For { var, body, .. } = stmt {
            out.push(*var);
            out.extend(loop_vars(body));
        }
    }
    out
}
