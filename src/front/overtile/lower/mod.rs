//! OverTile's program to the SDSL syntax tree, with OverTile's meaning.
//!
//! What OverTile's code generator (`CudaBackEnd`) computes, written in SDSL:
//!
//! - the grid `grid N` has the extents `Dim_0` (innermost) to `Dim_{N-1}`,
//!   `int` parameters as in OverTile's generated function
//!   (`ot_program_NAME(timesteps, fields..., Dim_0, ..., params...)`), so that
//!   a host binds them to its variables of those names; ranges and offsets are
//!   written outermost first, as SDSL writes them;
//! - `$` is the last index along its axis (`Dim_d - 1`), `$-k` is
//!   `Dim_d - 1 - k`, and both ends of a range are included;
//! - every update is one time step's Jacobi sweep of its field: it reads the
//!   field's values from before the update, and the other fields' newest
//!   values (those an earlier update of the same step wrote, else those of
//!   the previous step), as OverTile reads fields already written in the step
//!   from shared memory and the others from global memory. A written field
//!   therefore has two time levels (`at 0,1`): the update writes `[1]`, reads
//!   of it before its update read `[0]`, after it `[1]`, and the iterate
//!   rotates the levels after each step. A field no update writes has one;
//!   the copy semantic (`in`, `out`, `inout`) changes nothing, as in OverTile,
//!   which copies every field in and back;
//! - where several `@` ranges hold a point, the first gives its value (the
//!   `if ... else if` of OverTile's kernel); the parts are emitted last range
//!   first, so that the first range's, run last, stands. Points in no range
//!   keep their values: both levels start as copies of the data and the same
//!   points are written every step;
//! - the step count is the region's `time_steps:` (OverTile's default when it
//!   is missing: the host identifier `TS`); its identifiers become `int`
//!   parameters and the option leaves the schedule hints, so that `time:`
//!   alone is the time-tile size, as in OverTile;
//! - `let x = e in body` becomes a local variable of a point function that
//!   the part calls (OverTile substitutes `e` for `x`; the values are the
//!   same, the expressions are not copied).
//!
//! Every name is resolved here, so SDSL's analysis only types the program and
//! checks what it checks for any program (accesses inside the grid and so on).

mod expr;

use std::collections::{HashMap, HashSet};

use crate::diag::Diagnostic;
use crate::front::ast::{
    self as sdsl, Ident, Item, Module, PointFunction, Stencil, StencilPart, Stmt, Subset, Target,
};
use crate::front::overtile::ast::{self as ot, BoundExpr};
use crate::ir::{BinaryOp, HintExpr, HintOp, HintValue, ScalarType, UnaryOp};
use crate::source::Span;

use expr::Scope;

/// The SDSL name of the grid (a reserved word of OverTile's language, so no
/// OverTile name can be it).
const GRID_NAME: &str = "grid";

/// OverTile's step count when the pragma has no `time_steps:`.
const DEFAULT_TIME_STEPS: &str = "TS";

/// The name of the extent along axis `d` (0 innermost), as OverTile's
/// generated code names it.
fn dim_name(d: usize) -> String {
    format!("Dim_{d}")
}

/// One field of the program.
struct FieldInfo {
    ty: ScalarType,
    /// The update that writes it, if any.
    writer: Option<usize>,
}

/// The lowering's state: the program's names and the diagnostics so far.
pub(super) struct Lower<'a> {
    program: &'a ot::Program,
    /// The host file's text, for quoting.
    source_text: &'a str,
    rank: usize,
    fields: HashMap<String, usize>,
    field_info: Vec<FieldInfo>,
    params: HashMap<String, ScalarType>,
    /// Every program-scope SDSL name, user-written or generated.
    taken: HashSet<String>,
    /// Point functions generated for parts with `let`s.
    point_functions: Vec<Item>,
    errors: Vec<Diagnostic>,
}

/// Lowers `program` (written in `source_text`) to an SDSL module; `time_steps` is the region's
/// `time_steps:` option (taken out of the hints by the caller), `options`
/// where the pragma's options are (for a default step count).
pub(super) fn lower(
    program: &ot::Program,
    source_text: &str,
    time_steps: Option<HintValue>,
    options: Span,
) -> Result<Module, Vec<Diagnostic>> {
    let mut lower = Lower {
        program,
        source_text,
        rank: program.rank.0,
        fields: HashMap::new(),
        field_info: Vec::new(),
        params: HashMap::new(),
        taken: (0..program.rank.0).map(dim_name).collect(),
        point_functions: Vec::new(),
        errors: Vec::new(),
    };
    lower.taken.insert(GRID_NAME.to_string());
    let (mut items, params) = lower.declarations();
    let (count, step_params) = lower.step_count(time_steps, options);
    items.extend(step_params);
    items.extend(params);
    items.push(lower.grid());
    items.extend(lower.griddata());
    let stencils = lower.updates();
    if !lower.errors.is_empty() {
        return Err(lower.errors);
    }
    items.append(&mut lower.point_functions);
    items.push(Item::Iterate(sdsl::Iterate {
        count,
        stencils,
        reductions: Vec::new(),
        check: None,
        span: program.span,
    }));
    Ok(Module { items })
}

impl Lower<'_> {
    /// `int Dim_0; ...` and the `param`s, after checking every declared name.
    fn declarations(&mut self) -> (Vec<Item>, Vec<Item>) {
        let program = self.program;
        let grid_span = program.rank.1;
        let dims: Vec<Item> = (0..self.rank)
            .map(|d| Item::Param {
                ty: ScalarType::Int,
                name: Ident {
                    name: dim_name(d),
                    span: grid_span,
                },
                span: grid_span,
            })
            .collect();
        let mut seen: HashMap<&str, (Span, &str)> = HashMap::new();
        let names = program
            .params
            .iter()
            .map(|p| (&p.name, "parameter"))
            .chain(program.fields.iter().map(|f| (&f.name, "field")));
        for (name, what) in names {
            if let Some(d) = (0..self.rank).find(|&d| dim_name(d) == name.name) {
                self.errors.push(
                    Diagnostic::error(format!("`{}` is the grid's extent along axis {d}", name.name), name.span)
                        .with_label(format!("a {what} cannot take this name"))
                        .with_secondary(grid_span, "the grid, whose extents are `Dim_0` (innermost) and up")
                        .with_help(format!("OverTile passes the extents as `int Dim_0`, `int Dim_1`, ...: rename the {what}")),
                );
            } else if let Some(&(first, first_what)) = seen.get(name.name.as_str()) {
                self.errors.push(
                    Diagnostic::error(format!("`{}` is declared twice", name.name), name.span)
                        .with_label(format!("this {what}"))
                        .with_secondary(first, format!("already declared here, as a {first_what}"))
                        .with_help("give each parameter and field its own name"),
                );
            } else {
                seen.insert(&name.name, (name.span, what));
            }
            self.taken.insert(name.name.clone());
        }
        let mut items = Vec::new();
        for p in &program.params {
            self.params.entry(p.name.name.clone()).or_insert(p.ty);
            items.push(Item::Param {
                ty: p.ty,
                name: p.name.clone(),
                span: p.span,
            });
        }
        for f in &program.fields {
            if !self.fields.contains_key(&f.name.name) {
                self.fields
                    .insert(f.name.name.clone(), self.field_info.len());
                self.field_info.push(FieldInfo {
                    ty: f.ty,
                    writer: None,
                });
            }
        }
        (dims, items)
    }

    /// The iterate count from `time_steps:` (or OverTile's default `TS`) and
    /// an `int` parameter per host identifier it names.
    fn step_count(
        &mut self,
        time_steps: Option<HintValue>,
        options: Span,
    ) -> (sdsl::Expr, Vec<Item>) {
        let value = time_steps.unwrap_or_else(|| HintValue {
            expr: HintExpr::Name {
                name: DEFAULT_TIME_STEPS.to_string(),
                span: options,
            },
            text: DEFAULT_TIME_STEPS.to_string(),
            span: options,
        });
        let mut items = Vec::new();
        let mut added: HashSet<String> = HashSet::new();
        let mut errors = Vec::new();
        value.expr.for_each_name(&mut |name, span| {
            let is_dim = (0..self.rank).any(|d| dim_name(d) == name);
            let what = if self.params.contains_key(name) {
                Some("a parameter of the program (`float` or `double`)")
            } else if self.fields.contains_key(name) {
                Some("a field of the program")
            } else {
                None
            };
            if let Some(what) = what {
                errors.push(
                    Diagnostic::error(format!("the step count `{}` names `{name}`, {what}", value.text), span)
                        .with_label("not an integer of the host")
                        .with_help(format!("`time_steps:` names the host's `int` holding the number of time steps; rename the program's `{name}` or the host's")),
                );
            } else if !is_dim && added.insert(name.to_string()) {
                items.push(Item::Param {
                    ty: ScalarType::Int,
                    name: Ident {
                        name: name.to_string(),
                        span,
                    },
                    span,
                });
            }
        });
        self.errors.extend(errors);
        self.taken.extend(added);
        (hint_expr(&value.expr, value.span), items)
    }

    /// `grid grid[Dim_{N-1}]...[Dim_0];`
    fn grid(&self) -> Item {
        let span = self.program.rank.1;
        // The extents are not written: empty spans, so that messages name them.
        let unwritten = Span::new(span.start as usize, span.start as usize);
        Item::Grid {
            name: Ident {
                name: GRID_NAME.to_string(),
                span,
            },
            dims: (0..self.rank)
                .rev()
                .map(|d| {
                    sdsl::Expr::new(
                        sdsl::ExprKind::Name(Ident {
                            name: dim_name(d),
                            span: unwritten,
                        }),
                        unwritten,
                    )
                })
                .collect(),
            span,
        }
    }

    /// One griddata per field, after finding which update writes each (at
    /// most one may): two levels for a written field, one for the others.
    fn griddata(&mut self) -> Vec<Item> {
        let program = self.program;
        let mut first_update: HashMap<usize, Span> = HashMap::new();
        for (k, update) in program.updates.iter().enumerate() {
            let Some(&f) = self.fields.get(&update.target.name) else {
                let diag = self.unknown_field(&update.target, "update");
                self.errors.push(diag);
                continue;
            };
            if let Some(&first) = first_update.get(&f) {
                self.errors.push(
                    Diagnostic::error(format!("field `{}` is updated twice in one time step", update.target.name), update.target.span)
                        .with_label("second update")
                        .with_secondary(first, "first update")
                        .with_help(format!(
                            "stencilc runs one update per field and time step; give both ranges to one update (`{} = @[..] : e1 @[..] : e2`), or write the second result to another field",
                            update.target.name
                        )),
                );
                continue;
            }
            first_update.insert(f, update.target.span);
            self.field_info[f].writer = Some(k);
        }
        let mut items = Vec::new();
        for decl in &program.fields {
            let Some(&f) = self.fields.get(&decl.name.name) else {
                continue;
            };
            let span = decl.name.span;
            let mut at = vec![(0, span)];
            if self.field_info[f].writer.is_some() {
                at.push((1, span));
            }
            items.push(Item::Griddata {
                ty: decl.ty,
                name: decl.name.clone(),
                grid: Ident {
                    name: GRID_NAME.to_string(),
                    span,
                },
                at,
                boundary: None,
                span: decl.span,
            });
        }
        if program.updates.is_empty() {
            let at = program.fields.last().map_or(program.rank.1, |f| f.span);
            self.errors.push(
                Diagnostic::error(
                    format!("program `{}` updates no field", program.name.name),
                    at,
                )
                .with_label("the declarations end here")
                .with_help(format!(
                    "add an update after the fields, e.g. `{}`",
                    crate::front::overtile::parser::UPDATE_EXAMPLE
                )),
            );
        }
        items
    }

    /// One stencil per update.
    fn updates(&mut self) -> Vec<Stencil> {
        let program = self.program;
        let mut stencils = Vec::new();
        for (k, update) in program.updates.iter().enumerate() {
            let Some(&f) = self.fields.get(&update.target.name) else {
                continue;
            };
            if self.field_info[f].writer != Some(k) {
                continue;
            }
            let name = self.fresh(&format!("{}_{}", program.name.name, update.target.name));
            let mut parts = Vec::new();
            // Last range first: where ranges overlap, the first one's value,
            // written last, stands.
            for (i, piece) in update.pieces.iter().enumerate().rev() {
                if let Some(part) = self.piece(k, update, piece, &name, i) {
                    parts.push(part);
                }
            }
            stencils.push(Stencil {
                name: Ident {
                    name,
                    span: update.target.span,
                },
                parts,
                span: update.span,
            });
        }
        stencils
    }

    /// One range of update `k` as a stencil part; with `let`s, its
    /// statements go into a point function the part calls.
    fn piece(
        &mut self,
        k: usize,
        update: &ot::Update,
        piece: &ot::Piece,
        stencil: &str,
        index: usize,
    ) -> Option<StencilPart> {
        let subset = self.subset(piece);
        let mut scope = Scope::new(k);
        let value = self.expr(&piece.value, &mut scope);
        let (subset, (value, _)) = (subset?, value?);
        if !self.reads_inside(piece, &scope.reads) {
            return None;
        }
        let target = update.target.span;
        // Offsets no one wrote: empty spans, so that messages print them (`[1]A[0][0]`).
        let unwritten = Span::new(target.start as usize, target.start as usize);
        let int = |v: i64| sdsl::Expr::new(sdsl::ExprKind::Int(v, ScalarType::Int), unwritten);
        let store = Stmt::Assign {
            target: Target::Grid(sdsl::GridRef {
                time: Box::new(int(1)),
                field: update.target.clone(),
                offsets: (0..self.rank).map(|_| int(0)).collect(),
                span: target,
            }),
            value,
            span: piece.span,
        };
        let stmt = if scope.locals.is_empty() {
            store
        } else {
            let name = self.fresh(&format!("{stencil}_{index}"));
            let mut body = std::mem::take(&mut scope.locals);
            body.push(store);
            self.point_functions
                .push(Item::PointFunction(PointFunction {
                    name: Ident {
                        name: name.clone(),
                        span: piece.span,
                    },
                    params: Vec::new(),
                    body,
                    span: piece.span,
                }));
            Stmt::Call {
                func: Ident {
                    name,
                    span: piece.span,
                },
                args: Vec::new(),
                span: piece.span,
            }
        };
        Some(StencilPart {
            subset,
            stmt,
            span: piece.span,
        })
    }

    /// The piece's ranges, outermost first; `$` of the axis written at
    /// position `p` is `Dim_{N-1-p} - 1`.
    fn subset(&mut self, piece: &ot::Piece) -> Option<Subset> {
        if piece.bounds.len() != self.rank {
            self.errors.push(
                Diagnostic::error(
                    format!(
                        "the range has {} dimension(s) but the grid has {}",
                        piece.bounds.len(),
                        self.rank
                    ),
                    piece.bounds_span,
                )
                .with_label(format!("{}-D range", piece.bounds.len()))
                .with_secondary(self.program.rank.1, format!("{}-D grid", self.rank))
                .with_help(format!(
                    "give one `[lo:hi]` per dimension, e.g. `@{}`",
                    "[1:$-1]".repeat(self.rank)
                )),
            );
            return None;
        }
        let mut ranges = Vec::new();
        let mut ok = true;
        for (p, bound) in piece.bounds.iter().enumerate() {
            let d = self.rank - 1 - p;
            let lo = self.bound_expr(bound.lo, d);
            let hi = self.bound_expr(bound.hi, d);
            match (lo, hi) {
                (Some(lo), Some(hi)) => ranges.push((lo, Some(hi))),
                _ => ok = false,
            }
        }
        ok.then_some(Subset {
            ranges,
            span: piece.bounds_span,
        })
    }

    /// An end of a range as an integer expression of `Dim_d`.
    fn bound_expr(&mut self, end: BoundExpr, d: usize) -> Option<sdsl::Expr> {
        let limit = i64::from(i32::MAX) - 1;
        match end {
            BoundExpr::Index(v, span) if v < 0 => {
                self.errors.push(
                    Diagnostic::error(
                        format!("a range at index {v}, before the grid's first index 0"),
                        span,
                    )
                    .with_label("outside the grid")
                    .with_help("ranges lie in the grid: from 0 to `$`, the last index"),
                );
                None
            }
            BoundExpr::FromEnd(k, span) if k < 0 => {
                self.errors.push(
                    Diagnostic::error(format!("a range reaching {} past `$`, the grid's last index", -k), span)
                        .with_label("outside the grid")
                        .with_help("ranges lie in the grid: from 0 to `$`; `$-k` counts `k` back from the last index"),
                );
                None
            }
            BoundExpr::Index(v, span) | BoundExpr::FromEnd(v, span) if v > limit => {
                self.errors.push(
                    Diagnostic::error(format!("range index {v} is too large"), span)
                        .with_label("does not fit an `int`")
                        .with_help(format!("give an index up to {limit}")),
                );
                None
            }
            BoundExpr::Index(v, span) => Some(sdsl::Expr::new(
                sdsl::ExprKind::Int(v, ScalarType::Int),
                span,
            )),
            BoundExpr::FromEnd(k, span) => {
                let dim = sdsl::Expr::new(
                    sdsl::ExprKind::Name(Ident {
                        name: dim_name(d),
                        span,
                    }),
                    span,
                );
                let back = sdsl::Expr::new(sdsl::ExprKind::Int(k + 1, ScalarType::Int), span);
                Some(sdsl::Expr::new(
                    sdsl::ExprKind::Binary(BinaryOp::Sub, Box::new(dim), Box::new(back)),
                    span,
                ))
            }
        }
    }

    /// Whether every read of the piece stays inside the grid where that does
    /// not depend on the extents: from a range starting at index `c`, an
    /// offset below `-c` reads before index 0; from a range ending at `$-k`,
    /// an offset above `k` reads past `$`. (Other reads are checked once the
    /// extents are known.)
    fn reads_inside(&mut self, piece: &ot::Piece, reads: &[(Vec<i64>, Span)]) -> bool {
        let mut inside = true;
        for (p, bound) in piece.bounds.iter().enumerate() {
            let empty = match (bound.lo, bound.hi) {
                (BoundExpr::Index(a, _), BoundExpr::Index(b, _)) => a > b,
                (BoundExpr::FromEnd(a, _), BoundExpr::FromEnd(b, _)) => a < b,
                _ => false,
            };
            if empty {
                continue;
            }
            let nth = ordinal(p + 1);
            for (offsets, span) in reads {
                let o = offsets[p];
                let text = &self.program_text(*span);
                if let BoundExpr::Index(c, at) = bound.lo {
                    if c + o < 0 {
                        self.errors.push(
                            Diagnostic::error(format!("`{text}` reads outside the grid: its {nth} offset, {o}, reads index {} from the range's first index {c}", c + o), *span)
                                .with_label(format!("reads index {}", c + o))
                                .with_secondary(at, format!("the range starts at {c}"))
                                .with_help(format!("start the range at {} or later in its {nth} bracket; OverTile's language has no boundary handling, so every point read must lie in the grid", -o)),
                        );
                        inside = false;
                        break;
                    }
                }
                if let BoundExpr::FromEnd(k, at) = bound.hi {
                    if o > k {
                        let end = if k == 0 {
                            "$".to_string()
                        } else {
                            format!("$-{k}")
                        };
                        self.errors.push(
                            Diagnostic::error(format!("`{text}` reads outside the grid: its {nth} offset, {o}, reads past `$` from the range's last index `{end}`"), *span)
                                .with_label(format!("reads `$+{}`", o - k))
                                .with_secondary(at, format!("the range ends at `{end}`"))
                                .with_help(format!("end the range at `$-{o}` or earlier in its {nth} bracket; OverTile's language has no boundary handling, so every point read must lie in the grid")),
                        );
                        inside = false;
                        break;
                    }
                }
            }
        }
        inside
    }

    /// The source text of `span`.
    fn program_text(&self, span: Span) -> String {
        self.source_text
            .get(span.range())
            .unwrap_or_default()
            .to_string()
    }

    /// `base`, or `base_2`, `base_3`, … : a program-scope name no one uses.
    fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// `1st`, `2nd`, `3rd`.
fn ordinal(n: usize) -> String {
    match n {
        1 => "1st".to_string(),
        2 => "2nd".to_string(),
        3 => "3rd".to_string(),
        n => format!("{n}th"),
    }
}

/// A pragma option's integer expression as an SDSL expression.
fn hint_expr(expr: &HintExpr, span: Span) -> sdsl::Expr {
    let kind = match expr {
        HintExpr::Int(v) => {
            let ty = if i32::try_from(*v).is_ok() {
                ScalarType::Int
            } else {
                ScalarType::Long
            };
            sdsl::ExprKind::Int(*v, ty)
        }
        HintExpr::Name { name, span } => {
            return sdsl::Expr::new(
                sdsl::ExprKind::Name(Ident {
                    name: name.clone(),
                    span: *span,
                }),
                *span,
            )
        }
        HintExpr::Neg(e) => sdsl::ExprKind::Unary(UnaryOp::Neg, Box::new(hint_expr(e, span))),
        HintExpr::Binary(op, a, b) => {
            let op = match op {
                HintOp::Add => BinaryOp::Add,
                HintOp::Sub => BinaryOp::Sub,
                HintOp::Mul => BinaryOp::Mul,
                HintOp::Div => BinaryOp::Div,
                HintOp::Rem => BinaryOp::Rem,
            };
            sdsl::ExprKind::Binary(
                op,
                Box::new(hint_expr(a, span)),
                Box::new(hint_expr(b, span)),
            )
        }
    };
    sdsl::Expr::new(kind, span)
}
