//! Lifting stencil nests into [`ir::Program`](crate::ir::Program).
//!
//! A time loop whose body is only stencil nests (or one stencil nest on its
//! own) becomes an SDSL program, written as text and read back through the
//! SDSL front-end and its static checks, so the lift is held to the same
//! rules as a hand-written program (no stencil writes what it reads at another
//! point, every read inside its grid). Each C array becomes a field on a grid
//! of its shape; an array whose first subscript is `(t + k) % 2` (or
//! `(t + k) & 1`) becomes a field with two time levels (the PolyBench
//! ping-pong form, and AN5D's pointer to a VLA whose first axis holds the
//! levels, `T (*A)[n][n] = (T (*)[n][n])A1`), rotated by the iterate as C
//! alternates the buffers, and `(t + k) % 3` over an axis of 3 a field of
//! three levels; two pointers swapped at the
//! end of each step (`T *tmp = a; a = b; b = tmp;`) are such a field too,
//! `a` its level 0. Pointers (`float *a` indexed `a[i*m + j]`, delinearised
//! when the strides are provable; `float (*a)[M]`; VLA parameters) become
//! fields whose first extent is the rows the nests reach, and loop bounds
//! and extents affine in scalars become parameters, set at run time. Each
//! nest becomes a stencil
//! whose one part runs on the box of the nest's loop bounds, so the points
//! outside the nest keep their values, as in C. Scalars the nests only read
//! become parameters. Anything else — a loop inside the body, a read that is
//! not the point plus a constant offset, a loop variable used as a value —
//! keeps the nest out of the lift, with the reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::front::c::loops::{BinOp, CUnit, Expr, Function, Loop, Ref, Stmt};
use crate::front::token::Keyword;
use crate::ir::Program;
use crate::source::SourceFile;

mod access;
pub mod converge;
mod shape;

use access::{describe, scalar_type, sdsl_name};
use shape::{affine, affine_text, Affine};

pub use converge::LiftedCheck;

use super::subscript::{delinearise_with_extents, Context, Poly, Sub};
use super::syntax::{lookup, walk};
use crate::front::c::fold::constant;

/// A C array lifted into a field.
#[derive(Clone, Debug, PartialEq)]
pub struct LiftedArray {
    /// The array's name in C.
    pub c_name: String,
    /// The field's name in the program (the C name, prefixed by `c_` when it
    /// is an SDSL keyword).
    pub field: String,
    /// Element type (`float`, `double`, `int`, `long`).
    pub elem: String,
    /// The field's grid extents, outermost first (the time dimension
    /// excluded), as expressions valid in C and in SDSL: constants, or
    /// parameters' affine forms (`n`, `m + 2`).
    pub extents: Vec<String>,
    /// How many buffers the array's first dimension holds, indexed by
    /// `(t + k) % m` (or `(t + k) & 1`): a field with that many time levels;
    /// 0 when it holds none.
    pub time_buffers: usize,
    /// The pointer the time loop swaps with this one at the end of each step
    /// (`tmp = a; a = b; b = tmp;`): this one holds level 0, that one level 1.
    pub swapped_with: Option<String>,
    /// For a pointer, its C type around a declarator name (`float *`, `` ;
    /// `float (*`, `)[157]`), to declare a temporary of its type.
    pub pointer_type: Option<(String, String)>,
    /// Whether a lifted nest writes it.
    pub written: bool,
    /// For a pointer whose grid has more rows than its accesses reach
    /// (another array of its nests reaches further): the rows reached, as
    /// an expression; only those are copied to and from the device.
    pub rows: Option<String>,
}

impl LiftedArray {
    /// Time levels of its field: `m` for `(t + k) % m` buffers, two for
    /// swapped pointers, else one.
    pub fn levels(&self) -> usize {
        if self.swapped_with.is_some() {
            2
        } else {
            self.time_buffers.max(1)
        }
    }

    /// The bytes of one buffer (one time level) the nests reach, which the
    /// device code copies, as a C expression.
    pub fn c_bytes(&self) -> String {
        if self.pointer_type.is_some() {
            let product: Vec<String> = self
                .extents
                .iter()
                .enumerate()
                .map(|(d, e)| match (&self.rows, d) {
                    (Some(rows), 0) => format!("(size_t)({rows})"),
                    _ => format!("(size_t)({e})"),
                })
                .collect();
            format!("{} * sizeof({})", product.join(" * "), self.elem)
        } else if self.time_buffers > 0 {
            format!("sizeof({}[0])", self.c_name)
        } else {
            format!("sizeof({})", self.c_name)
        }
    }

    /// The bytes of the field's grid on the device, when more than
    /// [`LiftedArray::c_bytes`]'s rows ([`LiftedArray::rows`]).
    pub fn grid_bytes(&self) -> Option<String> {
        self.rows.as_ref()?;
        let product: Vec<String> = self
            .extents
            .iter()
            .map(|e| format!("(size_t)({e})"))
            .collect();
        Some(format!("{} * sizeof({})", product.join(" * "), self.elem))
    }
}

/// A scalar the lifted nests read and never write: a parameter of the program.
#[derive(Clone, Debug, PartialEq)]
pub struct LiftedParam {
    /// Its C name (the parameter has the same name).
    pub name: String,
    /// Its C type.
    pub elem: String,
}

/// A time loop (or a single nest) lifted into a program.
#[derive(Clone, Debug)]
pub struct Lift {
    /// The program, parsed and checked by the SDSL front-end.
    pub program: Program,
    /// Its SDSL text.
    pub sdsl: String,
    /// The arrays, one field each, in the order of the program's fields.
    pub arrays: Vec<LiftedArray>,
    /// The parameters, in the order of the program's parameters.
    pub params: Vec<LiftedParam>,
    /// The time loop's variable and first value (`None` for a single nest,
    /// run once).
    pub time: Option<(String, Expr)>,
    /// The number of steps as a C expression (`1` for a single nest).
    pub steps: Expr,
    /// Whether the time variable is declared before its loop (its value
    /// after the loop is then the program's to see).
    pub time_var_declared_outside: bool,
    /// The lines of each lifted nest, in the order of the program's stencils.
    pub nests: Vec<(usize, usize)>,
    /// The lines of the whole lifted loop.
    pub lines: (usize, usize),
    /// Per grid of the program (`g0`, `g1`...), its extents as C expressions.
    pub grids: Vec<Vec<String>>,
    /// Per stencil, the box its one part runs on: (first, last) per axis as
    /// C expressions.
    pub boxes: Vec<Vec<(String, String)>>,
    /// Whether every size (grid extents, boxes) is a constant.
    pub constant_sizes: bool,
    /// The convergence test, lifted as a reduction and a check.
    pub check: Option<LiftedCheck>,
}

impl Lift {
    /// The C buffer (`0..buffers`) of a time-buffered array that holds time
    /// level `level` after `done` steps of a time loop starting at
    /// `time_lower`: the iterate rotates the levels each step as C cycles
    /// through the buffers.
    pub fn buffer_of_level(time_lower: i64, done: i64, level: usize, buffers: usize) -> usize {
        (time_lower + done + level as i64).rem_euclid(buffers as i64) as usize
    }

    /// A one-line summary for the report.
    pub fn summary(&self) -> String {
        let fields: Vec<String> = self
            .arrays
            .iter()
            .map(|a| match (&a.swapped_with, a.time_buffers) {
                (Some(partner), _) => format!(
                    "{} (2 time levels: pointers `{}` and `{partner}` swapped each step)",
                    a.field, a.c_name
                ),
                (None, 0) => a.field.clone(),
                (None, levels) => format!("{} ({levels} time levels)", a.field),
            })
            .collect();
        format!(
            "lifted into an ir::Program: {} stencil(s) over fields {}{}, {} step(s)",
            self.nests.len(),
            fields.join(", "),
            if self.params.is_empty() {
                String::new()
            } else {
                let p: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                format!(", parameters {}", p.join(", "))
            },
            self.steps
        ) + &self
            .check
            .as_ref()
            .map(|c| {
                format!(
                    ", stopped early by reduction `{}` ({}) of `{}`",
                    c.reduction,
                    c.op.symbol(),
                    c.scalar
                )
            })
            .unwrap_or_default()
    }
}

/// Why a loop is not lifted into a program (it is then mapped nest by nest):
/// a clause for the plan, one of many reasons the lifting gives.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotLifted(pub String);

impl From<String> for NotLifted {
    fn from(why: String) -> Self {
        NotLifted(why)
    }
}

impl From<&str> for NotLifted {
    fn from(why: &str) -> Self {
        NotLifted(why.to_string())
    }
}

/// Lifts a time loop whose body is only stencil nests, pointer swaps and a
/// convergence test ([`converge`]).
pub fn lift_iterate<'a>(
    time: &'a Loop,
    function: &'a Function,
    unit: &'a CUnit,
    file: &'a crate::front::c::CFile,
    name: &str,
) -> Result<Lift, NotLifted> {
    if let Some(why) = &time.not_canonical {
        return Err(format!("the time loop is not canonical: {why}").into());
    }
    if time.step != 1 {
        return Err(format!(
            "the time loop `{}` steps by {}; only unit steps are lifted",
            time.var, time.step
        )
        .into());
    }
    if time.descending {
        return Err(format!(
            "the time loop `{}` runs downwards; only upward time loops are lifted",
            time.var
        )
        .into());
    }
    let mut nests = Vec::new();
    let mut swaps: Vec<(String, String)> = Vec::new();
    let mut extras = Vec::new();
    let mut at = 0;
    while at < time.body.len() {
        if let Some((a, b)) = pointer_swap(&time.body[at..]) {
            swaps.push((a, b));
            at += 3;
            continue;
        }
        match &time.body[at] {
            Stmt::For(l) if swaps.is_empty() => nests.push(l),
            Stmt::For(l) => {
                return Err(format!(
                    "the loop at line {} follows a pointer swap (only swaps after the nests, at the end of each step, are lifted)",
                    l.lines.0
                ).into())
            }
            other => extras.push(converge::Extra {
                stmt: other,
                nests_before: nests.len(),
                last: at + 1 == time.body.len(),
            }),
        }
        at += 1;
    }
    if nests.is_empty() {
        return Err("the time loop holds no nest".into());
    }
    let convergence = converge::find(time, &nests, &extras, function, unit, file)?;
    let steps = Expr::Bin(
        BinOp::Sub,
        Box::new(time.upper.clone()),
        Box::new(time.lower.clone()),
    );
    let steps = constant(&steps).map_or(steps, Expr::Int);
    let mut lifter = Lifter::new(function, unit, file, Some(time));
    lifter.convergence = convergence;
    for (a, b) in swaps {
        for (x, level) in [(&a, 0), (&b, 1)] {
            let var = lookup(x, function, unit)
                .filter(|v| v.pointer && !v.global)
                .ok_or_else(|| {
                    format!("`{x}` is swapped but is not a local pointer or a parameter")
                })?;
            let _ = var;
            if lifter.swaps.insert(x.clone(), (a.clone(), level)).is_some() {
                return Err(format!("`{x}` is swapped twice in a step").into());
            }
        }
        let (va, vb) = (lookup(&a, function, unit), lookup(&b, function, unit));
        if va.map(|v| (&v.elem, &v.dims)) != vb.map(|v| (&v.elem, &v.dims)) {
            return Err(format!("`{a}` and `{b}` are swapped but have different types").into());
        }
    }
    lifter.lift(&nests, steps, name).map_err(NotLifted)
}

/// `T *tmp = a; a = b; b = tmp;` at the start of `body`: the swapped pointers.
fn pointer_swap(body: &[Stmt]) -> Option<(String, String)> {
    let scalar = |e: &Expr| match e {
        Expr::Load(r) if r.index.is_empty() => Some(r.name.clone()),
        _ => None,
    };
    let [Stmt::Decl {
        name: tmp,
        init: Some(first),
        ..
    }, Stmt::Assign(second), Stmt::Assign(third), ..] = body
    else {
        return None;
    };
    let a = scalar(first)?;
    let plain = |x: &super::super::front::c::loops::Assign| {
        (x.op.is_none() && x.target.index.is_empty())
            .then(|| (x.target.name.clone(), scalar(&x.value)))
    };
    let (a2, Some(b)) = plain(second)? else {
        return None;
    };
    let (b2, Some(tmp2)) = plain(third)? else {
        return None;
    };
    (a2 == a && b2 == b && &tmp2 == tmp && a != b && &a != tmp && &b != tmp).then_some((a, b))
}

/// Lifts a single stencil nest, run once.
pub fn lift_nest<'a>(
    root: &'a Loop,
    function: &'a Function,
    unit: &'a CUnit,
    file: &'a crate::front::c::CFile,
    name: &str,
) -> Result<Lift, NotLifted> {
    Lifter::new(function, unit, file, None)
        .lift(&[root], Expr::Int(1), name)
        .map_err(NotLifted)
}

/// Where a write puts the point along one dimension of its array.
#[derive(Clone, Debug, PartialEq)]
enum Axis {
    /// The loop variable (at this index of the band).
    Var(String),
    /// A fixed index.
    Fixed(i64),
}

struct Lifter<'a> {
    function: &'a Function,
    unit: &'a CUnit,
    file: &'a crate::front::c::CFile,
    time: Option<&'a Loop>,
    arrays: BTreeMap<String, ArrayInfo>,
    array_order: Vec<String>,
    params: Vec<LiftedParam>,
    /// Scalars written anywhere in the lifted loops.
    written_scalars: BTreeSet<String>,
    /// Swapped pointers: C name → (the pair's first pointer, its level).
    swaps: BTreeMap<String, (String, usize)>,
    /// The time loop's convergence test, if it has one.
    convergence: Option<converge::Found<'a>>,
    /// The arrays (keys of [`Lifter::arrays`]) the nest updating the tested
    /// scalar writes, and those the nests after it write.
    written_by_update: BTreeSet<String>,
    written_after_update: BTreeSet<String>,
    /// While the check is translated: the tested scalar and what it reads as.
    check_scalar: Option<(String, String)>,
}

/// An array being lifted: its field, and what is known of its extents.
struct ArrayInfo {
    lifted: LiftedArray,
    /// Per grid dimension, its extent; `None` for a pointer's first
    /// dimension, which the rows the nests touch give ([`ArrayInfo::rows`]).
    extents: Vec<Option<Affine>>,
    /// One past the last row the nests touch along the first dimension of a
    /// pointer (the largest of `upper + offset` over its accesses).
    rows: Option<Affine>,
}

/// What one nest's body is being lifted with.
struct NestCx<'n> {
    band: Vec<&'n Loop>,
    /// Scalars declared in the body: name → C type.
    locals: BTreeMap<String, String>,
    /// The point as a write places it: per dimension of the grid.
    point: Option<Vec<Axis>>,
    /// The grid extents of the nest (`None`: a pointer's first dimension).
    shape: Option<Vec<Option<Affine>>>,
    /// Fields the body uses, in order.
    fields: Vec<String>,
    /// The arrays (keys of [`Lifter::arrays`]) the body uses.
    arrays: Vec<String>,
    /// The array reads translated (keys and offsets), for the reduction's
    /// term.
    reads: Vec<(String, Vec<i64>)>,
}

/// One lifted nest.
struct LiftedNest {
    /// Its point function's text.
    function: String,
    /// Its stencil part's text (`None` for a nest that only updates the
    /// tested scalar).
    part: Option<String>,
    /// Its reduction part's text, when it updates the tested scalar.
    reduction: Option<String>,
    /// The box of its part: (first, last) per axis, as C expressions.
    bounds: Vec<(String, String)>,
    /// The arrays it uses.
    arrays: Vec<String>,
}

impl<'a> Lifter<'a> {
    fn new(
        function: &'a Function,
        unit: &'a CUnit,
        file: &'a crate::front::c::CFile,
        time: Option<&'a Loop>,
    ) -> Lifter<'a> {
        let mut written_scalars = BTreeSet::new();
        let mut note = |s: &Stmt| {
            if let Stmt::Assign(a) = s {
                if a.target.index.is_empty() {
                    written_scalars.insert(a.target.name.clone());
                }
            }
        };
        if let Some(t) = time {
            walk(&t.body, &mut note);
        }
        Lifter {
            function,
            unit,
            file,
            time,
            arrays: BTreeMap::new(),
            array_order: Vec::new(),
            params: Vec::new(),
            written_scalars,
            swaps: BTreeMap::new(),
            convergence: None,
            written_by_update: BTreeSet::new(),
            written_after_update: BTreeSet::new(),
            check_scalar: None,
        }
    }

    fn lift(mut self, nests: &[&'a Loop], steps: Expr, name: &str) -> Result<Lift, String> {
        self.note_writes(nests);
        let steps_text = self
            .expr(&steps, None)
            .map_err(|e| format!("the number of steps: {e}"))?;
        // C runs a loop with no steps at all where SDSL refuses a negative count.
        let steps_text = match constant(&steps) {
            Some(n) => n.max(0).to_string(),
            None => format!("({steps_text} > 0 ? {steps_text} : 0)"),
        };
        let mut functions = String::new();
        let mut parts = Vec::new();
        for (n, nest) in nests.iter().enumerate() {
            let part = self
                .nest(nest, n)
                .map_err(|e| format!("nest at line {}: {e}", nest.lines.0))?;
            functions.push_str(&part.function);
            parts.push(part);
        }
        if let Some(t) = self.time {
            if self.arrays.values().any(|a| a.lifted.time_buffers > 0)
                && constant(&t.lower).is_none()
            {
                return Err(format!(
                    "the time loop starts at `{}`, not a constant: which buffer is first is unknown",
                    t.lower
                ));
            }
        }
        self.settle_extents(&parts, nests)?;
        // The check before the declarations: its test may read parameters.
        let check = match self.convergence.clone() {
            Some(found) => Some(
                self.check(&found, parts[found.nest].bounds.clone())
                    .map_err(|e| format!("nest at line {}: {e}", nests[found.nest].lines.0))?,
            ),
            None => None,
        };
        let (mut text, grids) = self.declarations(name);
        text.push('\n');
        text.push_str(&functions);
        let _ = writeln!(text, "iterate {steps_text} {{");
        for (n, part) in parts.iter().enumerate() {
            if let Some(part) = &part.part {
                let _ = writeln!(text, "    stencil s{n} {{\n        {part}\n    }}");
            }
        }
        let check = match (check, self.convergence.as_ref()) {
            (Some(check), Some(found)) => {
                let nest = &parts[found.nest];
                let _ = writeln!(
                    text,
                    "    reduction {} {} {{\n        {}\n    }}",
                    check.reduction,
                    check.op.symbol(),
                    nest.reduction.as_deref().unwrap_or_default()
                );
                let _ = writeln!(text, "}} check ({}) every 1 iterations", check.check);
                Some(check)
            }
            _ => {
                text.push_str("}\n");
                None
            }
        };
        let source = SourceFile::new(format!("{name}.sdsl"), text.clone());
        let program = crate::front::parse_program(source)
            .and_then(crate::analysis::checked)
            .map_err(|d| {
                format!(
                    "the SDSL program it gives is refused: {}",
                    d.to_string().lines().next().unwrap_or("")
                )
            })?;
        crate::ir::verify::debug_check(&program).map_err(|d| d.message)?;
        let arrays: Vec<LiftedArray> = self
            .array_order
            .iter()
            .map(|a| self.arrays[a].lifted.clone())
            .collect();
        let stencil_nests: Vec<(usize, usize)> = nests
            .iter()
            .zip(&parts)
            .filter(|(_, p)| p.part.is_some())
            .map(|(n, _)| n.lines)
            .collect();
        let boxes: Vec<Vec<(String, String)>> = parts
            .into_iter()
            .filter(|p| p.part.is_some())
            .map(|p| p.bounds)
            .collect();
        let is_number = |s: &String| s.parse::<i64>().is_ok();
        let constant_sizes = grids.iter().flatten().all(is_number)
            && boxes
                .iter()
                .flatten()
                .chain(check.iter().flat_map(|c| c.bounds.iter()))
                .all(|(lo, hi)| is_number(lo) && is_number(hi));
        Ok(Lift {
            program,
            sdsl: text,
            arrays,
            params: self.params,
            time: self.time.map(|t| (t.var.clone(), t.lower.clone())),
            time_var_declared_outside: self.time.is_some_and(|t| !t.declared),
            steps,
            nests: stencil_nests,
            lines: self.time.map_or(nests[0].lines, |t| t.lines),
            grids,
            boxes,
            constant_sizes,
            check,
        })
    }

    /// Records the scalars the nests write (outside a time loop) and, with a
    /// convergence check, the arrays its update nest and the nests after it write.
    fn note_writes(&mut self, nests: &[&'a Loop]) {
        if self.time.is_none() {
            for n in nests {
                walk(&n.body, &mut |s| {
                    if let Stmt::Assign(a) = s {
                        if a.target.index.is_empty() {
                            self.written_scalars.insert(a.target.name.clone());
                        }
                    }
                });
            }
        }
        if let Some(found) = &self.convergence {
            for (k, nest) in nests.iter().enumerate().skip(found.nest) {
                walk(&nest.body, &mut |s| {
                    if let Stmt::Assign(a) = s {
                        if !a.target.index.is_empty() {
                            let key = self
                                .swaps
                                .get(&a.target.name)
                                .map_or(&a.target.name, |(first, _)| first);
                            let set = if k == found.nest {
                                &mut self.written_by_update
                            } else {
                                &mut self.written_after_update
                            };
                            set.insert(key.clone());
                        }
                    }
                });
            }
        }
    }

    /// An extent or a loop bound: affine in parameters (registered as such).
    fn param_affine(&mut self, e: &Expr, band: &[&Loop]) -> Result<Affine, String> {
        let form = affine(e).ok_or_else(|| format!("`{e}` is not affine in parameters"))?;
        for sym in form.0.keys() {
            if let Some(l) = band.iter().find(|l| &l.var == sym) {
                return Err(format!("`{e}` depends on the loop variable `{}`", l.var));
            }
            self.scalar(sym, None)?;
        }
        Ok(form)
    }

    /// One nest: its point function and its stencil part.
    fn nest(&mut self, root: &'a Loop, n: usize) -> Result<LiftedNest, String> {
        let mut band = vec![root];
        let mut body = &root.body;
        while let [Stmt::For(inner)] = body.as_slice() {
            if band.len() == 3 {
                return Err("more than 3 loops deep".into());
            }
            band.push(inner);
            body = &inner.body;
        }
        let mut ranges = BTreeMap::new();
        let live = super::liveness::LiveAfter::new(root, self.function, self.unit, self.file);
        for l in &band {
            if let Some(why) = &l.not_canonical {
                return Err(format!("loop `{}` is not canonical: {why}", l.var));
            }
            if l.step != 1 {
                return Err(format!("loop `{}` steps by {}", l.var, l.step));
            }
            // The kernels leave a variable declared outside its loop unset.
            if !l.declared && live.reads(&l.var) {
                return Err(format!(
                    "loop variable `{}` is declared outside its loop and read after the nest (its value after the loop would be lost)",
                    l.var
                ));
            }
            let lo = self
                .param_affine(&l.lower, &band)
                .map_err(|e| format!("the bounds of loop `{}`: {e}", l.var))?;
            let (m, c) = self
                .param_affine(&l.upper, &band)
                .map_err(|e| format!("the bounds of loop `{}`: {e}", l.var))?;
            ranges.insert(l.var.clone(), (affine_text(&lo), affine_text(&(m, c - 1))));
        }
        let mut cx = NestCx {
            band,
            locals: BTreeMap::new(),
            point: None,
            shape: None,
            fields: Vec::new(),
            arrays: Vec::new(),
            reads: Vec::new(),
        };
        // The point comes from the first write, which reads before it need.
        let first_write = body.iter().find_map(|s| match s {
            Stmt::Assign(a) if !a.target.index.is_empty() => Some(&a.target),
            _ => None,
        });
        let found = self.convergence.clone().filter(|c| c.nest == n);
        match (first_write, &found) {
            (Some(target), _) => {
                self.array_ref(target, true, &mut cx)?;
            }
            // A nest that only accumulates: the point is its first read's.
            (None, Some(found)) => self.point_of_read(found.term, &mut cx)?,
            (None, None) => {}
        }
        let mut lines = Vec::new();
        let mut reduction = None;
        for s in body {
            match &found {
                Some(found) if std::ptr::eq(s, found.update) => {
                    reduction = Some(self.reduction_term(found, &mut cx)?);
                }
                Some(found)
                    if reduction.is_some()
                        && matches!(s, Stmt::Assign(a) if !a.target.index.is_empty()) =>
                {
                    return Err(format!(
                        "it writes an array after updating `{}` (line {}): the reduction sees the point's final values",
                        found.scalar, found.lines.1
                    ));
                }
                _ => lines.push(self.stmt(s, &mut cx)?),
            }
        }
        let Some(point) = cx.point.clone() else {
            return Err("it writes no array".into());
        };
        let mut subset = String::new();
        let mut bounds = Vec::new();
        for axis in &point {
            let (lo, hi) = match axis {
                Axis::Var(v) => {
                    let (lo, hi) = ranges[v].clone();
                    let _ = write!(subset, "[{lo}:{hi}]");
                    (lo, hi)
                }
                Axis::Fixed(c) => {
                    let _ = write!(subset, "[{c}]");
                    (c.to_string(), c.to_string())
                }
            };
            bounds.push((lo, hi));
        }
        let reduction = reduction.map(|term| format!("{subset} : {term};"));
        if first_write.is_none() {
            if let Some(local) = cx.locals.keys().next() {
                return Err(format!(
                    "it writes no array, and its local `{local}` serves no reduction"
                ));
            }
            return Ok(LiftedNest {
                function: String::new(),
                part: None,
                reduction,
                bounds,
                arrays: cx.arrays,
            });
        }
        let args = cx.fields.join(", ");
        let mut pf = format!("pointfunction nest{n}({args}) {{\n");
        for (local, ty) in &cx.locals {
            let _ = writeln!(pf, "    {ty} {local};");
        }
        for l in lines {
            let _ = writeln!(pf, "    {l}");
        }
        pf.push_str("}\n\n");
        Ok(LiftedNest {
            function: pf,
            part: Some(format!("{subset} : nest{n}({args});")),
            reduction,
            bounds,
            arrays: cx.arrays,
        })
    }

    fn stmt(&mut self, s: &Stmt, cx: &mut NestCx<'_>) -> Result<String, String> {
        match s {
            Stmt::Decl { name, init, line } => {
                let var = lookup(name, self.function, self.unit)
                    .ok_or_else(|| format!("`{name}` (line {line}) has no known type"))?;
                let ty = scalar_type(&var.elem)
                    .filter(|_| var.dims.is_empty() && !var.pointer)
                    .ok_or_else(|| {
                        format!(
                            "the local `{name}` (line {line}) is not an int, long, float or double scalar"
                        )
                    })?;
                if cx.locals.insert(name.clone(), ty.to_string()).is_some() {
                    return Err(format!("`{name}` is declared twice in the body"));
                }
                Ok(match init {
                    Some(e) => format!("{name} = {};", self.expr(e, Some(cx))?),
                    None => String::new(),
                })
            }
            Stmt::Assign(a) => {
                let target = if a.target.index.is_empty() {
                    if !cx.locals.contains_key(&a.target.name) {
                        return Err(format!(
                            "it writes the scalar `{}` (line {}), declared outside the body",
                            a.target.name, a.line
                        ));
                    }
                    a.target.name.clone()
                } else {
                    self.array_ref(&a.target, true, cx)?
                };
                let value = self.expr(&a.value, Some(cx))?;
                Ok(match a.op {
                    None => format!("{target} = {value};"),
                    Some(op) => format!("{target} = {target} {} ({value});", op.symbol()),
                })
            }
            other => Err(format!("its body holds {}", describe(other))),
        }
    }
}
