//! The static analysis of one loop nest (the methodology's first step):
//! constructs that keep it on the CPU, array accesses and their dependences
//! with distance vectors, scalars (privatisable, reductions) and, from them,
//! which loops are parallel.

use std::collections::{BTreeMap, BTreeSet};

use super::alias::{call_obstacle, check_aliasing};
use super::deptest::{loop_ranges, ranges_around, test_pair};
pub use super::facts::{Access, Dependence, NestFacts, ScalarRole};
use super::subscript::{delinearise, Context, Poly, Sub};
use super::syntax::substitute;
use super::syntax::{walk, PURE_LIBRARY};
use crate::front::c::loops::{Assign, BinOp, CUnit, Expr, Function, Loop, Ref, Stmt};

/// Analyses the nest rooted at `root`, in `function` of `unit`.
pub fn analyse(
    root: &Loop,
    function: &Function,
    unit: &CUnit,
    declared: &BTreeMap<String, bool>,
) -> NestFacts {
    let mut facts = NestFacts {
        obstacles: Vec::new(),
        accesses: Vec::new(),
        dependences: Vec::new(),
        scalars: BTreeMap::new(),
        loops: BTreeMap::new(),
        sequential: BTreeMap::new(),
        delinearised: BTreeMap::new(),
        subs: BTreeMap::new(),
        no_alias: Vec::new(),
    };
    let mut walker = Walker {
        unit,
        declared,
        facts: &mut facts,
        stack: Vec::new(),
        ids: Vec::new(),
        ambiguous: BTreeSet::new(),
        locals: BTreeMap::new(),
        scalar_events: Vec::new(),
    };
    walker.for_loop(root);
    let events = std::mem::take(&mut walker.scalar_events);
    let locals = std::mem::take(&mut walker.locals);
    let ambiguous = std::mem::take(&mut walker.ambiguous);
    if facts.obstacles.is_empty() {
        check_aliasing(&mut facts, function, unit);
    }
    classify_scalars(&mut facts, root, &events, &locals, function);
    dependences(&mut facts, &ambiguous, &locals);
    facts
}

/// A read or write of a scalar, in program order, with the loops around it
/// and whether it sits under a conditional.
#[derive(Clone, Debug)]
struct ScalarEvent {
    name: String,
    write: Option<Assign>,
    loops: Vec<String>,
    conditional: bool,
    /// The statement index path inside the loop bodies, to find the first event of a loop.
    top_level_of: Option<String>,
}

struct Walker<'a> {
    unit: &'a CUnit,
    declared: &'a BTreeMap<String, bool>,
    facts: &'a mut NestFacts,
    stack: Vec<String>,
    ids: Vec<usize>,
    ambiguous: BTreeSet<String>,
    locals: BTreeMap<String, Vec<String>>,
    scalar_events: Vec<ScalarEvent>,
}

impl Walker<'_> {
    fn for_loop(&mut self, l: &Loop) {
        if let Some(why) = &l.not_canonical {
            self.facts.obstacles.push(format!(
                "the loop at line {} cannot be normalised: {why}",
                l.lines.0
            ));
        }
        self.expr(&l.lower, l.lines.0, false, None);
        self.expr(&l.upper, l.lines.0, false, None);
        if let Some(other) = self.facts.loops.insert(l.var.clone(), l.clone()) {
            if other.lower != l.lower || other.upper != l.upper {
                self.ambiguous.insert(l.var.clone());
            }
            // Sibling loops share the entry: the variable is declared in
            // the nest only if every one of them declares it.
            if !other.declared {
                if let Some(entry) = self.facts.loops.get_mut(&l.var) {
                    entry.declared = false;
                }
            }
        }
        self.stack.push(l.var.clone());
        self.ids.push(l.lines.0);
        self.block(&l.body, false, Some(l.var.clone()));
        self.stack.pop();
        self.ids.pop();
    }

    fn block(&mut self, body: &[Stmt], conditional: bool, top: Option<String>) {
        for s in body {
            self.stmt(s, conditional, top.clone());
        }
    }

    fn stmt(&mut self, s: &Stmt, conditional: bool, top: Option<String>) {
        match s {
            Stmt::For(l) => self.for_loop(l),
            Stmt::Assign(a) => {
                for e in &a.target.index {
                    self.expr(e, a.line, conditional, top.clone());
                }
                if a.op.is_some() {
                    self.load(&a.target, a.line, conditional, top.clone());
                }
                self.expr(&a.value, a.line, conditional, top.clone());
                if a.target.index.is_empty() {
                    if self.stack.contains(&a.target.name) {
                        self.facts.obstacles.push(format!(
                            "the loop variable `{}` is assigned in the body (line {})",
                            a.target.name, a.line
                        ));
                    }
                    self.scalar_events.push(ScalarEvent {
                        name: a.target.name.clone(),
                        write: Some(a.clone()),
                        loops: self.stack.clone(),
                        conditional,
                        top_level_of: top,
                    });
                } else {
                    self.facts.accesses.push(Access {
                        array: a.target.name.clone(),
                        write: true,
                        index: a.target.index.clone(),
                        loops: self.stack.clone(),
                        loop_ids: self.ids.clone(),
                        line: a.line,
                    });
                }
            }
            Stmt::Decl { name, init, line } => {
                self.locals.insert(name.clone(), self.stack.clone());
                if let Some(e) = init {
                    self.expr(e, *line, conditional, top);
                }
            }
            Stmt::If {
                cond,
                then,
                els,
                line,
            } => {
                self.expr(cond, *line, conditional, top);
                self.block(then, true, None);
                self.block(els, true, None);
            }
            Stmt::Eval { expr, line } => self.expr(expr, *line, conditional, top),
            Stmt::Break => self
                .facts
                .obstacles
                .push("a `break` leaves a loop of the nest early".into()),
            Stmt::Continue => self.facts.obstacles.push("a `continue` in the nest".into()),
            Stmt::Return(_) => self
                .facts
                .obstacles
                .push("a `return` inside the nest".into()),
            Stmt::Goto(label) => self
                .facts
                .obstacles
                .push(format!("a `goto {label}` inside the nest")),
            Stmt::Other {
                what, body, line, ..
            } => {
                self.facts.obstacles.push(format!("{what} at line {line}"));
                self.block(body, true, None);
            }
        }
    }

    fn load(&mut self, r: &Ref, line: usize, conditional: bool, top: Option<String>) {
        if r.index.is_empty() {
            self.scalar_events.push(ScalarEvent {
                name: r.name.clone(),
                write: None,
                loops: self.stack.clone(),
                conditional,
                top_level_of: top,
            });
        } else {
            self.facts.accesses.push(Access {
                array: r.name.clone(),
                write: false,
                index: r.index.clone(),
                loops: self.stack.clone(),
                loop_ids: self.ids.clone(),
                line,
            });
        }
    }

    fn expr(&mut self, e: &Expr, line: usize, conditional: bool, top: Option<String>) {
        let mut loads = Vec::new();
        let mut problems = Vec::new();
        e.visit(&mut |x| match x {
            Expr::Load(r) => loads.push(r.clone()),
            Expr::Unsupported(what) => problems.push(what.clone()),
            // Strings go to calls that stay on the CPU (`printf`).
            Expr::Str(_) => problems.push("a string literal".into()),
            Expr::Call(name, _) if !PURE_LIBRARY.contains(&name.as_str()) => {
                problems.push(format!("CALL:{name}"))
            }
            _ => {}
        });
        for r in loads {
            self.load(&r, line, conditional, top.clone());
        }
        let at = if line > 0 {
            format!(" (line {line})")
        } else {
            String::new()
        };
        for p in problems {
            if let Some(name) = p.strip_prefix("CALL:") {
                if let Some(why) = call_obstacle(name, self.unit, self.declared) {
                    self.facts.obstacles.push(format!("{why}{at}"));
                }
            } else {
                self.facts.obstacles.push(format!("{p}{at}"));
            }
        }
    }
}

fn classify_scalars(
    facts: &mut NestFacts,
    root: &Loop,
    events: &[ScalarEvent],
    locals: &BTreeMap<String, Vec<String>>,
    function: &Function,
) {
    let loop_vars: BTreeSet<&String> = facts.loops.keys().collect();
    let written: BTreeSet<&String> = events
        .iter()
        .filter(|e| e.write.is_some())
        .map(|e| &e.name)
        .collect();
    for name in written {
        if loop_vars.contains(name) {
            continue;
        }
        if let Some(inside) = locals.get(name) {
            facts
                .scalars
                .insert(name.clone(), ScalarRole::Local(inside.clone()));
            continue;
        }
        let mine: Vec<&ScalarEvent> = events.iter().filter(|e| &e.name == name).collect();
        let role = reduction(name, &mine, function)
            .map(ScalarRole::Reduction)
            .or_else(|| private_at(root, &mine).map(ScalarRole::Private))
            .unwrap_or(ScalarRole::Carried);
        facts.scalars.insert(name.clone(), role);
    }
}

/// The OpenMP operator of a reduction, if every event of the scalar is one
/// update `s op= e` (or `s = s op e`) with one operator and `e` free of `s`,
/// or every event writes the same boolean constant to a `bool`.
fn reduction(name: &str, events: &[&ScalarEvent], function: &Function) -> Option<String> {
    let mut op: Option<String> = None;
    let mentions = |e: &Expr| {
        let mut found = false;
        e.visit(&mut |x| {
            if matches!(x, Expr::Load(r) if r.name == name) {
                found = true;
            }
        });
        found
    };
    // Reads of `s` come as events too: one read per update is the update's own.
    let writes: Vec<&Assign> = events.iter().filter_map(|e| e.write.as_ref()).collect();
    let reads = events.iter().filter(|e| e.write.is_none()).count();
    let mut own_reads = 0;
    for a in &writes {
        let this = match (&a.op, &a.value) {
            (Some(BinOp::Add), v) | (Some(BinOp::Sub), v) if !mentions(v) => "+".to_string(),
            (Some(BinOp::Mul), v) if !mentions(v) => "*".to_string(),
            (None, Expr::Bin(BinOp::Add, x, v)) if **x == Expr::var(name) && !mentions(v) => {
                "+".to_string()
            }
            (None, Expr::Bin(BinOp::Mul, x, v)) if **x == Expr::var(name) && !mentions(v) => {
                "*".to_string()
            }
            (None, Expr::Call(f, args))
                if args.len() == 2
                    && args[0] == Expr::var(name)
                    && !mentions(&args[1])
                    && f.starts_with("fmax") =>
            {
                "max".to_string()
            }
            (None, Expr::Call(f, args))
                if args.len() == 2
                    && args[0] == Expr::var(name)
                    && !mentions(&args[1])
                    && f.starts_with("fmin") =>
            {
                "min".to_string()
            }
            (None, Expr::Int(c @ (0 | 1))) => {
                let boolean = function
                    .vars
                    .get(name)
                    .is_some_and(|v| v.elem == "bool" || v.elem == "_Bool");
                if !boolean {
                    return None;
                }
                own_reads -= 1; // no read of its own
                if *c == 0 { "&&" } else { "||" }.to_string()
            }
            _ => return None,
        };
        own_reads += 1;
        if op.get_or_insert(this.clone()) != &this {
            return None;
        }
    }
    (reads as i64 == own_reads).then_some(op).flatten()
}

/// The outermost loop of the nest at which the scalar is privatisable: its
/// first event in that loop's body is an unconditional write at the body's
/// top level that does not read it.
fn private_at(root: &Loop, events: &[&ScalarEvent]) -> Option<String> {
    let mut candidates: Vec<String> = vec![root.var.clone()];
    // The loops around the first event, outermost first.
    candidates.extend(events.first()?.loops.iter().skip(1).cloned());
    for var in candidates {
        let inside: Vec<&&ScalarEvent> = events.iter().filter(|e| e.loops.contains(&var)).collect();
        if inside.len() != events.len() {
            continue;
        }
        let first = inside.first()?;
        let reads_itself = first.write.as_ref().is_some_and(|a| {
            let mut found = a.op.is_some();
            a.value.visit(&mut |x| {
                if matches!(x, Expr::Load(r) if r.name == first.name) {
                    found = true;
                }
            });
            found
        });
        if first.write.is_some()
            && !first.conditional
            && !reads_itself
            && first.top_level_of.as_deref() == Some(var.as_str())
        {
            return Some(var);
        }
        // The write's own reads come before it in the event order: skip them.
        if let Some(w) = inside.iter().position(|e| e.write.is_some()) {
            let before_are_own = inside[..w]
                .iter()
                .all(|e| e.loops == inside[w].loops && !e.conditional);
            let a = inside[w].write.as_ref()?;
            let mut reads_self = a.op.is_some();
            a.value.visit(&mut |x| {
                if matches!(x, Expr::Load(r) if r.name == first.name) {
                    reads_self = true;
                }
            });
            if w > 0
                && before_are_own
                && !reads_self
                && !inside[w].conditional
                && inside[w].top_level_of.as_deref() == Some(var.as_str())
            {
                return Some(var);
            }
        }
    }
    None
}

/// Tests every pair of accesses to an array (one of them a write) and marks
/// the loops their dependences carry as sequential.
fn dependences(
    facts: &mut NestFacts,
    ambiguous: &BTreeSet<String>,
    locals: &BTreeMap<String, Vec<String>>,
) {
    let loop_vars: BTreeSet<String> = facts.loops.keys().cloned().collect();
    // Every scalar written in the nest varies, and so does every local (its
    // initialiser runs again in each iteration of the loops around it).
    let written_scalars: BTreeSet<String> =
        facts.scalars.keys().chain(locals.keys()).cloned().collect();
    let cx = Context {
        loop_vars: &loop_vars,
        written: &written_scalars,
    };
    let definitions = local_definitions(facts, locals, &cx);
    let ranges = loop_ranges(&facts.loops, ambiguous, &cx);
    let mut by_array: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, a) in facts.accesses.iter().enumerate() {
        by_array.entry(a.array.clone()).or_default().push(i);
    }
    let mut sequential: BTreeMap<String, Vec<String>> =
        loop_vars.iter().map(|v| (v.clone(), Vec::new())).collect();
    for (array, ids) in &by_array {
        let mut subs: Vec<Vec<Sub>> = ids
            .iter()
            .map(|&i| {
                let index = facts.accesses[i].index.iter();
                index.map(|e| cx.sub(&definitions.apply(e))).collect()
            })
            .collect();
        // One linear subscript everywhere: try to delinearise.
        if subs
            .iter()
            .all(|s| s.len() == 1 && matches!(s[0], Sub::Affine(_)))
        {
            delinearise_array(facts, array, ids, &mut subs, ambiguous, &loop_vars);
        }
        facts.subs.insert(array.clone(), subs.clone());
        if !ids.iter().any(|&i| facts.accesses[i].write) {
            continue;
        }
        for (x, &i) in ids.iter().enumerate() {
            for (y, &j) in ids.iter().enumerate().skip(x) {
                let (a, b) = (&facts.accesses[i], &facts.accesses[j]);
                if !a.write && !b.write {
                    continue;
                }
                let shared = a
                    .loop_ids
                    .iter()
                    .zip(&b.loop_ids)
                    .take_while(|(p, q)| p == q)
                    .count();
                let common: Vec<String> = a.loops[..shared].to_vec();
                let around = [
                    ranges_around(&ranges, &a.loops),
                    ranges_around(&ranges, &b.loops),
                ];
                let Some(distance) = test_pair(
                    &subs[x],
                    &subs[y],
                    &common,
                    &loop_vars,
                    [&around[0], &around[1]],
                ) else {
                    continue;
                };
                // Distances are of the second access's iteration minus the first's:
                // a negative leading distance means the second runs first.
                let backwards = distance
                    .iter()
                    .find(|(_, d)| *d != Some(0))
                    .is_some_and(|(_, d)| matches!(d, Some(x) if *x < 0));
                let (first, second) = if backwards { (b, a) } else { (a, b) };
                let kind = match (first.write, second.write) {
                    (true, true) => "output",
                    (true, false) => "flow",
                    _ => "anti",
                };
                let distance = if backwards {
                    distance
                        .into_iter()
                        .map(|(v, d)| (v, d.map(|x| -x)))
                        .collect()
                } else {
                    distance
                };
                let dep = Dependence {
                    array: array.clone(),
                    kind,
                    lines: (first.line, second.line),
                    distance,
                };
                if x == y && dep.distance.iter().all(|(_, d)| *d == Some(0)) {
                    continue;
                }
                for v in &common {
                    let reason = format!(
                        "{} dependence on `{array}` (lines {} and {}), distance {}",
                        dep.kind,
                        dep.lines.0,
                        dep.lines.1,
                        dep.vector()
                    );
                    if let Some(reasons) = sequential
                        .get_mut(v)
                        .filter(|r| dep.carried_by(v) && !r.contains(&reason))
                    {
                        reasons.push(reason);
                    }
                }
                facts.dependences.push(dep);
            }
        }
    }
    mark_carried_scalars(facts, &mut sequential);
    facts.sequential = sequential;
}

/// Replaces the single linear subscripts `subs` of `array` (accesses `ids`)
/// by one per dimension when the delinearisation test finds them.
fn delinearise_array(
    facts: &mut NestFacts,
    array: &str,
    ids: &[usize],
    subs: &mut Vec<Vec<Sub>>,
    ambiguous: &BTreeSet<String>,
    loop_vars: &BTreeSet<String>,
) {
    let polys: Vec<Poly> = subs
        .iter()
        .map(|s| match &s[0] {
            Sub::Affine(p) => p.clone(),
            _ => Poly::default(),
        })
        .collect();
    let mut bounds = facts.loops.clone();
    bounds.retain(|v, _| !ambiguous.contains(v));
    // A loop's bounds say nothing of its variable read after the
    // loop (`a[i*n + j]` below the `j` loop is `a[(i+1)*n]`).
    for (&i, p) in ids.iter().zip(&polys) {
        let around = &facts.accesses[i].loops;
        for v in p.0.keys().flatten() {
            if !around.contains(v) {
                bounds.remove(v);
            }
        }
    }
    if let Some(dims) = delinearise(&polys, &bounds, loop_vars) {
        facts
            .delinearised
            .insert(array.to_string(), dims.first().map_or(0, |d| d.len()));
        *subs = dims
            .into_iter()
            .map(|d| d.into_iter().map(Sub::Affine).collect())
            .collect();
    }
}

/// Adds to `sequential` each loop around the writes of a scalar that
/// carries a value from one iteration to the next there.
fn mark_carried_scalars(facts: &NestFacts, sequential: &mut BTreeMap<String, Vec<String>>) {
    for (name, role) in &facts.scalars {
        for (v, reasons) in sequential.iter_mut() {
            let private_here = match role {
                // Private at `p`: also at every loop around `p` (all its events are in `p`).
                ScalarRole::Private(p) => loop_depth(&facts.loops, v, p),
                ScalarRole::Local(around) => around.contains(v),
                ScalarRole::Reduction(_) => true,
                ScalarRole::Carried => false,
            };
            let carried =
                format!("the scalar `{name}` carries a value from one iteration to the next");
            if !private_here
                && scalar_written_inside(&facts.loops, v, name)
                && !reasons.contains(&carried)
            {
                reasons.push(format!(
                    "the scalar `{name}` carries a value from one iteration to the next"
                ));
            }
        }
    }
}

/// Locals of the nest that subscripts may read through: each declared once,
/// never assigned after, and initialised by an expression affine in the
/// variables of the loops around its declaration and in invariants (`int c
/// = i * n + j;`). Within its scope that expression has the local's value,
/// so a subscript reading the local reads the expression.
struct Definitions(Vec<(String, Expr)>);

impl Definitions {
    /// `e` with every such local replaced by its definition.
    fn apply(&self, e: &Expr) -> Expr {
        self.0
            .iter()
            .fold(e.clone(), |e, (name, by)| substitute(&e, name, by))
    }
}

fn local_definitions(
    facts: &NestFacts,
    locals: &BTreeMap<String, Vec<String>>,
    cx: &Context,
) -> Definitions {
    // Per local, its declarations by line (a nested loop's body is walked
    // again from each loop around it).
    let mut decls: BTreeMap<String, BTreeMap<usize, Option<Expr>>> = BTreeMap::new();
    let mut assigned: BTreeSet<String> = BTreeSet::new();
    for l in facts.loops.values() {
        walk(&l.body, &mut |s| match s {
            Stmt::Decl { name, init, line } => {
                decls
                    .entry(name.clone())
                    .or_default()
                    .insert(*line, init.clone());
            }
            Stmt::Assign(a) if a.target.index.is_empty() => {
                assigned.insert(a.target.name.clone());
            }
            _ => {}
        });
    }
    let mut found = Vec::new();
    for (name, around) in locals {
        let Some(set) = decls.get(name).filter(|d| d.len() == 1) else {
            continue;
        };
        let Some((_, Some(init))) = set.first_key_value() else {
            continue;
        };
        if assigned.contains(name) {
            continue;
        }
        // Affine, reading no written scalar (other locals included), and no
        // loop variable but those around the declaration.
        let Some(p) = cx.poly(init) else { continue };
        let outside =
            p.0.keys()
                .flatten()
                .any(|s| cx.loop_vars.contains(s) && !around.contains(s));
        if !outside {
            found.push((name.clone(), init.clone()));
        }
    }
    Definitions(found)
}

/// Whether loop `inner` is `outer` or nested in it.
fn loop_depth(loops: &BTreeMap<String, Loop>, outer: &str, inner: &str) -> bool {
    if outer == inner {
        return true;
    }
    loops.get(outer).is_some_and(|l| {
        let mut found = false;
        walk(&l.body, &mut |s| {
            if matches!(s, Stmt::For(x) if x.var == inner) {
                found = true;
            }
        });
        found
    })
}

fn scalar_written_inside(loops: &BTreeMap<String, Loop>, var: &str, name: &str) -> bool {
    loops.get(var).is_some_and(|l| {
        let mut found = false;
        walk(&l.body, &mut |s| {
            if matches!(s, Stmt::Assign(a) if a.target.name == name && a.target.index.is_empty()) {
                found = true;
            }
        });
        found
    })
}
