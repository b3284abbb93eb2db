//! Lowering of the per-point code of stencil and reduction parts: expressions,
//! statements, field reads (from a shared tile or global memory with the
//! boundary mode applied) and coefficient tables (literals, constant, shared).

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::Level;
use crate::ir::semantics::{binary_value, unary_value};
use crate::ir::{
    BinaryOp, BoundaryMode, Expr, ExprKind, GridRef, LocalId, Program, ScalarType, Stmt, TableId,
    UnaryOp, Value,
};
use crate::kir::helpers::{self, WrapOp};
use crate::kir::plan::ArgSource;
use crate::kir::{Helper, KExpr, KStmt, Module, Origin, SharedArray, Space, Var};
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
    /// Per axis, the offsets the tile holds around each point (`None`: all
    /// the kernel reads; time tiles hold their whole region). A fused check's
    /// terms may reach further than the stencil: they then read global memory.
    pub covers: Option<Vec<(i64, i64)>>,
}

/// A point's place in a thread's run along one axis, on the run's fast path
/// (every point of the run inside the subset, hence inside the grid).
#[derive(Clone, Debug)]
pub(crate) struct RunWindow {
    /// The grid index of the run's first point.
    pub first: KExpr,
    /// This point's position in the run.
    pub point: i64,
    /// Points in the run.
    pub len: i64,
    /// The grid the run's subset lies in: only reads of fields on it are
    /// points of the run (a field on another grid may be smaller).
    pub grid: crate::ir::GridId,
}

/// Everything needed to lower the code run at one point.
pub(crate) struct PointCtx<'a> {
    pub program: &'a Program,
    /// Grid index of the point per axis, outermost first.
    pub coords: Vec<KExpr>,
    /// Position of the point within its block's points, per axis (for tiles).
    pub in_block: Vec<KExpr>,
    /// Per axis (outermost first), the point's run window where the whole
    /// run is inside the subset: a read `point + offset` inside the run is a
    /// point of the run, read as `first + point + offset` with no boundary
    /// mode, the same expression at every point of the run (which lets
    /// [`crate::kir::cse`] share it). Empty or `None`: no window.
    pub run: Vec<Option<RunWindow>>,
    /// Levels whose reads stay inside their grid on a run's interior fast path:
    /// per level, per axis (outermost first) the offsets the path's condition
    /// proved inside. A read at such a literal offset needs no boundary mode.
    pub interior: BTreeMap<Level, Vec<(i64, i64)>>,
    /// Whether the code being lowered is on that path.
    pub on_interior: bool,
    /// The grid the point lies in (that of the levels the kernel writes),
    /// where the lowering knows it: a read at offset zero of a field on
    /// another grid is mapped by its boundary mode (that grid may be
    /// smaller). `None`: only a field on the only grid of its rank is read
    /// at offset zero as it is.
    pub grid: Option<crate::ir::GridId>,
    /// Tiled levels.
    pub tiles: BTreeMap<Level, Tile>,
    /// Table placements.
    pub tables: BTreeMap<TableId, TablePlacement>,
    /// Tables copied to shared memory: (table, shared array).
    pub shared_tables: Vec<(TableId, Var)>,
    /// Tables read from constant memory, with the kernel's variable for each.
    /// By table and whether it is the global-memory copy.
    pub const_tables: BTreeMap<(TableId, bool), Var>,
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
    /// Whether flattened field indices are computed in 64 bits
    /// ([`crate::schedule::Schedule::wide_indices`]).
    pub wide: bool,
}

impl<'a> PointCtx<'a> {
    /// A context for a point at `coords` (variables named by the caller).
    pub fn new(program: &'a Program, coords: Vec<KExpr>, in_block: Vec<KExpr>) -> Self {
        PointCtx {
            program,
            coords,
            in_block,
            run: Vec::new(),
            interior: BTreeMap::new(),
            on_interior: false,
            grid: None,
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
            wide: false,
        }
    }

    /// Whether the point lies in `grid`: the grid the kernel writes when the
    /// lowering named it ([`PointCtx::grid`]), else the only grid of its rank
    /// (subsets lie inside their grids).
    fn holds_point(&self, grid: crate::ir::GridId) -> bool {
        self.program.holds_point(self.grid, grid)
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

    /// The kernel's variable for a module-scope table: in constant memory, or
    /// (`global`) in global memory.
    pub fn const_table(&mut self, t: TableId, module: &mut Module, global: bool) -> Var {
        if let Some(var) = self.const_tables.get(&(t, global)) {
            return *var;
        }
        let index = constant_table(self.program, t, module, global);
        let table = &module.constants[index];
        let space = if global {
            Space::Global
        } else {
            Space::Constant
        };
        let var = self
            .params
            .vars
            .add(table.name.clone(), table.ty, space, Origin::Table(index));
        self.const_tables.insert((t, global), var);
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
            ExprKind::Unary(op, a) => {
                let a = self.expr(a, module);
                match (op, &a) {
                    (_, KExpr::Lit(v)) if !v.ty().is_float() => KExpr::Lit(unary_value(*op, *v)),
                    (UnaryOp::Neg, _) if !e.ty.is_float() => {
                        KExpr::Helper(Helper::Wrapping(WrapOp::Neg, e.ty), vec![a])
                    }
                    _ => KExpr::Unary(*op, Box::new(a)),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let a = self.expr(a, module);
                let b = self.expr(b, module);
                if let (KExpr::Lit(x), KExpr::Lit(y)) = (&a, &b) {
                    // The interpreter's operator: `7 / 0` is 0, not a C error. A
                    // comparison or logic of float literals is exact too (its
                    // result is an int), and left unfolded it makes the OpenCL
                    // and C compilers warn (`1.5 != 1.5`).
                    if !x.ty().is_float() || !e.ty.is_float() {
                        return KExpr::Lit(binary_value(*op, *x, *y));
                    }
                }
                let divisor = match &b {
                    KExpr::Lit(v) => Some(*v),
                    _ => None,
                };
                let wrapping = WrapOp::of_binary(*op)
                    .filter(|_| !e.ty.is_float())
                    .map(|w| Helper::Wrapping(w, e.ty));
                match Helper::for_operator(*op, e.ty, divisor).or(wrapping) {
                    Some(helper) => KExpr::Helper(helper, vec![a, b]),
                    None => KExpr::Binary(*op, Box::new(a), Box::new(b)),
                }
            }
            ExprKind::Select {
                cond,
                then,
                otherwise,
            } => match self.expr(cond, module) {
                // A condition known here picks its branch (as `?:` evaluates only
                // that one, dropping the other changes nothing).
                KExpr::Lit(c) => {
                    let taken = if c.is_true() { then } else { otherwise };
                    self.expr(taken, module)
                }
                cond => KExpr::Select(
                    Box::new(cond),
                    Box::new(self.expr(then, module)),
                    Box::new(self.expr(otherwise, module)),
                ),
            },
            ExprKind::Call {
                func,
                float_form,
                args,
            } => {
                let args = args.iter().map(|a| self.expr(a, module)).collect();
                match Helper::for_math(*func, *float_form) {
                    Some(helper) => KExpr::Helper(helper, args),
                    None => KExpr::Call {
                        func: *func,
                        float_form: *float_form,
                        args,
                    },
                }
            }
            ExprKind::Cast(a) => {
                let inner = self.expr(a, module);
                match (&inner, Helper::for_cast(a.ty, e.ty)) {
                    (KExpr::Lit(v), _) => KExpr::Lit(v.cast(e.ty)),
                    (_, Some(helper)) => KExpr::Helper(helper, vec![inner]),
                    _ => KExpr::Cast(e.ty, Box::new(inner)),
                }
            }
        }
    }

    /// The value of an integer offset or index expression when it is known at
    /// compile time with the unrolled loops' variables fixed, computed in the
    /// expression's type as the interpreter computes it.
    fn static_index(&self, e: &Expr) -> Option<i64> {
        let fixed = |l: LocalId| self.fixed.get(&l).copied();
        helpers::known_value(self.program, e, &fixed).map(Value::as_i64)
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

    /// `(long)coordinate + offset` on axis `axis`, the offset in 64 bits.
    fn wide_coordinate(
        &mut self,
        coordinate: KExpr,
        offset: &Expr,
        value: Option<i64>,
        module: &mut Module,
    ) -> KExpr {
        let base = KExpr::Cast(ScalarType::Long, Box::new(coordinate));
        // A coordinate plus an offset beyond `int` may pass the `long` limits:
        // it wraps, as in the interpreter.
        let beyond_int =
            offset.ty == ScalarType::Long && value.is_none_or(|v| i32::try_from(v).is_err());
        if beyond_int {
            let k = match value {
                Some(v) => KExpr::Lit(Value::Long(v)),
                None => self.expr(offset, module),
            };
            let add = Helper::Wrapping(WrapOp::Add, ScalarType::Long);
            return KExpr::Helper(add, vec![base, k]);
        }
        match value {
            Some(v) if v < 0 && v != i64::MIN => KExpr::Binary(
                BinaryOp::Sub,
                Box::new(base),
                Box::new(KExpr::Lit(Value::Long(-v))),
            ),
            Some(v) => KExpr::Binary(
                BinaryOp::Add,
                Box::new(base),
                Box::new(KExpr::Lit(Value::Long(v))),
            ),
            None => {
                let k = self.expr(offset, module);
                let k = match offset.ty {
                    ScalarType::Long => k,
                    _ => KExpr::Cast(ScalarType::Long, Box::new(k)),
                };
                KExpr::Binary(BinaryOp::Add, Box::new(base), Box::new(k))
            }
        }
    }

    /// The flat index of `coords` in field `field`'s grid: `int` arithmetic, or
    /// with [`PointCtx::wide`] `long` from the outermost coordinate on
    /// (`((long)iz * size_y + iy) * size_x + ix`; each coordinate fits `int`).
    pub fn linear(&mut self, field: crate::ir::FieldId, coords: Vec<KExpr>) -> KExpr {
        let grid = self.program.fields[field.0].grid;
        let widen = self.wide && coords.len() > 1;
        let mut index: Option<KExpr> = None;
        for (axis, c) in coords.into_iter().enumerate() {
            index = Some(match index {
                None if widen => KExpr::Cast(ScalarType::Long, Box::new(c)),
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
        let r_offsets = &r.offset;
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
        let proved = if self.on_interior {
            self.interior.get(&level).cloned()
        } else {
            None
        };
        let mut coords = Vec::new();
        let mut inside: Option<KExpr> = None;
        for (a, (o, value)) in offsets.into_iter().enumerate() {
            let window = self
                .run
                .get(a)
                .cloned()
                .flatten()
                .filter(|w| w.grid == grid);
            // On a run's fast path a literal offset is taken from the run's first
            // point: `first + (point + offset)`, the same at every point.
            let from_run = match (&window, value) {
                (Some(w), Some(v)) => w.point.checked_add(v).map(|r| (w, r)),
                _ => None,
            };
            if let Some((w, r)) = from_run {
                if (0..w.len).contains(&r) {
                    // A point of the run: inside the subset, hence the grid.
                    coords.push(KExpr::plus(w.first.clone(), KExpr::int(r)));
                    continue;
                }
            }
            let c = match from_run {
                Some((w, r)) if i32::try_from(r).is_ok() => {
                    KExpr::plus(w.first.clone(), KExpr::int(r))
                }
                _ => KExpr::plus(self.coords[a].clone(), o),
            };
            let proved_inside = matches!(
                (&proved, value),
                (Some(range), Some(v)) if range[a].0 <= v && v <= range[a].1
            );
            let own_point = value == Some(0) && self.holds_point(grid);
            if own_point || mode == BoundaryMode::None || proved_inside {
                // Inside the grid: the analysis checked reads of `none` fields,
                // and the interior path's condition the others.
                coords.push(c);
                continue;
            }
            // The coordinate read, in 64 bits as the interpreter computes it:
            // an offset far outside the grid must not wrap before it is mapped.
            let wide = match from_run {
                // Offsets beyond `int` keep the point's own form (they wrap).
                Some((w, r)) if i32::try_from(r).is_ok() => {
                    self.wide_coordinate(w.first.clone(), &r_offsets[a], Some(r), module)
                }
                _ => {
                    let coordinate = self.coords[a].clone();
                    self.wide_coordinate(coordinate, &r_offsets[a], value, module)
                }
            };
            let n = self.params.grid_size(self.program, grid, a);
            match Helper::for_mode(mode) {
                Some(helper) => coords.push(KExpr::Helper(helper, vec![wide, n])),
                None => {
                    // Zero: where the read is inside, the 32-bit coordinate is it.
                    let test = KExpr::Helper(Helper::Inside, vec![wide, n]);
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
        select_inside(inside, value, ty)
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
        let global = placement == TablePlacement::Global;
        let const_var = self.const_table(t, module, global);
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
            space: if global {
                Space::Global
            } else {
                Space::Constant
            },
            array: const_var,
            index: vec![flat],
        }
    }

    /// A part's code: its locals named and declared, then its statements,
    /// each local declared where it is first assigned when nothing uses it
    /// before (`float acc = 0.0f; acc = 0.0f;` reads `float acc = 0.0f;`).
    pub fn part_code(&mut self, part: &crate::ir::StencilPart, module: &mut Module) -> Vec<KStmt> {
        self.name_locals(&part.locals);
        let mut code = self.declare_locals(part);
        code.extend(self.stmts(&part.body, module, 1));
        crate::lower::tidy::drop_unread_locals(&mut code, &self.locals);
        crate::lower::tidy::declare_at_first_assignment(&mut code);
        code
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

/// `value` where `inside` holds (a load guarded by its boundary test), else
/// zero of `ty`; `value` itself where there is no test.
pub(crate) fn select_inside(inside: Option<KExpr>, value: KExpr, ty: ScalarType) -> KExpr {
    match inside {
        None => value,
        Some(test) => KExpr::Select(
            Box::new(test),
            Box::new(value),
            Box::new(KExpr::Lit(Value::Int(0).cast(ty))),
        ),
    }
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
