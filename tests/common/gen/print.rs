//! Printing a generated program as SDSL text, and making it legal while doing so
//! (see the parent module's documentation for the rules).

use std::fmt::{self, Write as _};

use stencilc::exec::{Bindings, Buffer, FieldState};
use stencilc::ir::env::RunEnv;
use stencilc::ir::{Program, ScalarType, Value};
use stencilc::source::SourceFile;

use super::ast::*;

/// Where an expression is printed.
struct Ctx<'a> {
    program: &'a GenProgram,
    /// (field, level index) the enclosing stencil writes (none in a reduction).
    written: Vec<(usize, usize)>,
    /// Axes fixed to one index by the part's subset.
    fixed: [bool; 3],
    /// Inside a point function: the local names visible, and the field rotation.
    locals: Vec<String>,
    rotate: Option<usize>,
}

/// A read after legalization: field, level index, offsets.
type Resolved = (usize, usize, [i64; 3]);

impl Ctx<'_> {
    fn rank(&self) -> usize {
        self.program.sizes.len()
    }

    /// The legal form of a read (see the module documentation).
    fn resolve(&self, field: usize, level: usize, offset: [i64; 3]) -> Resolved {
        let f = field % self.program.fields.len();
        let decl = &self.program.fields[f];
        let l = level % decl.levels;
        let mut off = [0i64; 3];
        if !self.written.contains(&(f, l)) {
            for axis in 0..self.rank() {
                let none_fixed = decl.boundary == Boundary::None && self.fixed[axis];
                if !none_fixed {
                    off[axis] = offset[axis];
                }
            }
        }
        (f, l, off)
    }

    /// The name a field has here (a point-function parameter inside one).
    fn field_name(&self, f: usize) -> String {
        match self.rotate {
            Some(r) => {
                let n = self.program.fields.len();
                format!("p{}", (f + n - r % n) % n)
            }
            None => format!("f{f}"),
        }
    }

    fn read_text(&self, (f, l, off): Resolved, loop_axis: Option<usize>) -> String {
        let decl = &self.program.fields[f];
        let mut s = format!("[{}]{}", decl.time_lo() + l as i32, self.field_name(f));
        for (axis, o) in off.iter().enumerate().take(self.rank()) {
            if loop_axis == Some(axis) {
                s.push_str("[i]");
            } else {
                write!(s, "[{o}]").unwrap();
            }
        }
        s
    }

    fn lit(&self, value: f64, suffix: bool) -> String {
        let text = format!("{value:.1}");
        if suffix {
            format!("{text}f")
        } else {
            text
        }
    }

    /// Whether `e` has type int.
    fn is_int(&self, e: &GenExpr) -> bool {
        match e {
            GenExpr::Read { field, .. } => {
                self.program.fields[field % self.program.fields.len()].ty == Ty::Int
            }
            GenExpr::IntLit(_) => true,
            GenExpr::ParamRead { field, .. } => {
                self.program.fields[field % self.program.fields.len()].ty == Ty::Int
            }
            GenExpr::Local(i) => {
                !self.locals.is_empty() && self.local_ty(*i % self.locals.len()) == Ty::Int
            }
            GenExpr::Neg(a) => self.is_int(a),
            GenExpr::Add(a, b) | GenExpr::Sub(a, b) => self.is_int(a) && self.is_int(b),
            GenExpr::Select(_, parts) => self.is_int(&parts[2]) && self.is_int(&parts[3]),
            GenExpr::Logic(..) => true,
            GenExpr::IntDiv { long, .. } | GenExpr::BigCast(long, _) => !long,
            _ => false,
        }
    }

    fn local_ty(&self, i: usize) -> Ty {
        // Names carry their type: `t3_int`, `acc` is double.
        if self.locals[i].ends_with("_int") {
            Ty::Int
        } else {
            Ty::Double
        }
    }

    fn expr(&self, e: &GenExpr) -> String {
        let fl = self.program.flavor;
        match e {
            GenExpr::Read {
                field,
                level,
                offset,
            } => {
                let off = offset.map(i64::from);
                self.read_text(self.resolve(*field, *level, off), None)
            }
            GenExpr::ParamRead {
                field,
                level,
                scale,
            } => {
                let (f, l, zero) = self.resolve(*field, *level, [0; 3]);
                let decl = &self.program.fields[f];
                let text = self.read_text((f, l, zero), None);
                if decl.boundary == Boundary::None || self.written.contains(&(f, l)) {
                    return text;
                }
                // The first axis's `[0]` (after `[time]name`) reads at `k * scale`.
                let name_end = text.find(']').expect("time level") + 1;
                let first_axis = name_end + text[name_end..].find("[0]").expect("an axis");
                format!(
                    "{}[k * {scale}]{}",
                    &text[..first_axis],
                    &text[first_axis + 3..]
                )
            }
            GenExpr::Lit(v, suffix) => self.lit(f64::from(*v) / 4.0, *suffix),
            GenExpr::IntLit(v) => format!("{v}"),
            GenExpr::Alpha => "alpha".into(),
            GenExpr::Const(i) => {
                if self.program.constants.is_empty() {
                    "0.5".into()
                } else {
                    format!("c{}", i % self.program.constants.len())
                }
            }
            GenExpr::Local(i) => {
                if self.locals.is_empty() {
                    "1.5".into()
                } else {
                    self.locals[i % self.locals.len()].clone()
                }
            }
            GenExpr::Neg(a) => format!("-({})", self.expr(a)),
            GenExpr::Add(a, b) => format!("({} + {})", self.expr(a), self.expr(b)),
            GenExpr::Sub(a, b) => format!("({} - {})", self.expr(a), self.expr(b)),
            GenExpr::Mul(a, b) => {
                // int * int could overflow over the iterations: multiply in float.
                let cast = if self.is_int(a) && self.is_int(b) {
                    "(float)"
                } else {
                    ""
                };
                format!("({cast}{} * {})", self.expr(a), self.expr(b))
            }
            GenExpr::SafeDiv(a, b) => {
                format!("({} / (2.0 + {}))", self.expr(a), self.square(b))
            }
            GenExpr::Math1(m, suffix, a) => {
                let f = if *suffix { "f" } else { "" };
                let x = self.expr(a);
                match (m, fl) {
                    (Math1::Fabs, _) => format!("fabs{f}({x})"),
                    (Math1::SqrtFabs, _) => format!("sqrt{f}(fabs{f}({x}))"),
                    (Math1::Floor, _) | (Math1::ExpSmall, Flavor::CorrectlyRounded) => {
                        format!("floor{f}({x})")
                    }
                    (Math1::ExpSmall, Flavor::Full) => {
                        format!("exp{f}({x} / (2.0{f} + {}))", self.square(a))
                    }
                }
            }
            GenExpr::MinMax(is_min, suffix, a, b) => format!(
                "{}{}({}, {})",
                if *is_min { "fmin" } else { "fmax" },
                if *suffix { "f" } else { "" },
                self.expr(a),
                self.expr(b)
            ),
            GenExpr::IntDiv { rem, long, a, b } => {
                let t = if *long { "long" } else { "int" };
                let a = format!("(({t})({}))", self.expr(a));
                if is_constant(b) {
                    // The front-end folds a constant divisor and reports a
                    // division by zero: divide only by what is known at run time.
                    return a;
                }
                let op = if *rem { "%" } else { "/" };
                format!("({a} {op} ({t})({}))", self.expr(b))
            }
            GenExpr::BigCast(long, a) => {
                let (t, scale) = if *long {
                    ("long", "1.0e19")
                } else {
                    ("int", "1.0e10")
                };
                format!("(({t})(({}) * {scale}))", self.expr(a))
            }
            GenExpr::Logic(op, [c1, c2], parts) => {
                let compare = |a: &GenExpr, c: &Cmp, b: &GenExpr| {
                    format!("({} {} {})", self.expr(a), c.symbol(), self.expr(b))
                };
                let first = compare(&parts[0], c1, &parts[1]);
                match op {
                    Logic::Not => format!("(!{first})"),
                    Logic::And | Logic::Or => format!(
                        "({first} {} {})",
                        if *op == Logic::And { "&&" } else { "||" },
                        compare(&parts[2], c2, &parts[3])
                    ),
                }
            }
            GenExpr::Select(cmp, parts) => format!(
                "(({} {} {}) ? {} : {})",
                self.expr(&parts[0]),
                cmp.symbol(),
                self.expr(&parts[1]),
                self.expr(&parts[2]),
                self.expr(&parts[3])
            ),
        }
    }

    /// `e * e`, in float when `e` is an int (whose square could overflow).
    fn square(&self, e: &GenExpr) -> String {
        let x = self.expr(e);
        if self.is_int(e) {
            format!("(float){x} * {x}")
        } else {
            format!("{x} * {x}")
        }
    }

    /// Every read `e` makes, legalized.
    fn reads(&self, e: &GenExpr, out: &mut Vec<Resolved>) {
        match e {
            GenExpr::Read {
                field,
                level,
                offset,
            } => out.push(self.resolve(*field, *level, offset.map(i64::from))),
            // Offset only for fields with a boundary mode, which need no margin.
            GenExpr::ParamRead { field, level, .. } => {
                out.push(self.resolve(*field, *level, [0; 3]))
            }
            GenExpr::Lit(..)
            | GenExpr::IntLit(_)
            | GenExpr::Alpha
            | GenExpr::Const(_)
            | GenExpr::Local(_) => {}
            GenExpr::Neg(a) | GenExpr::Math1(_, _, a) | GenExpr::BigCast(_, a) => {
                self.reads(a, out)
            }
            GenExpr::IntDiv { a, b, .. } => {
                self.reads(a, out);
                if !is_constant(b) {
                    self.reads(b, out);
                }
            }
            GenExpr::Add(a, b)
            | GenExpr::Sub(a, b)
            | GenExpr::Mul(a, b)
            | GenExpr::SafeDiv(a, b)
            | GenExpr::MinMax(_, _, a, b) => {
                self.reads(a, out);
                self.reads(b, out);
            }
            GenExpr::Select(_, parts) => parts.iter().for_each(|p| self.reads(p, out)),
            GenExpr::Logic(op, _, parts) => {
                let printed = if *op == Logic::Not { 2 } else { 4 };
                parts[..printed].iter().for_each(|p| self.reads(p, out))
            }
        }
    }

    /// The loop's read, legalized; `Some(axis)` when it really offsets by `i`.
    fn loop_read(&self, lp: &GenLoop) -> (Resolved, Option<usize>) {
        let axis = lp.axis % self.rank();
        let (f, l, off) = self.resolve(lp.field, lp.level, [0; 3]);
        let decl = &self.program.fields[f];
        let pinned = decl.boundary == Boundary::None && self.fixed[axis];
        let moves = !self.written.contains(&(f, l)) && !pinned;
        ((f, l, off), if moves { Some(axis) } else { Option::None })
    }

    /// A stored value: converted for int fields, bounded as `wrap` says for floats.
    fn stored(&self, target: usize, value: &GenExpr, wrap: Wrap) -> String {
        let e = self.expr(value);
        match (self.program.fields[target].ty, wrap) {
            (Ty::Int, _) => format!("(int)fmin(fmax({e}, -1000.0), 1000.0)"),
            (_, Wrap::Raw) => e,
            (_, Wrap::Clamp) => format!("fmin(fmax({e}, -8.0), 8.0)"),
            (_, Wrap::Squash) => format!("{e} / (1.0 + fabs({e}))"),
        }
    }

    fn target_text(&self, target: usize) -> String {
        let decl = &self.program.fields[target];
        let zeros = "[0]".repeat(self.rank());
        format!(
            "[{}]{}{zeros}",
            decl.time_lo() + decl.written() as i32,
            self.field_name(target)
        )
    }
}

impl GenProgram {
    /// The rank of the grid.
    pub fn rank(&self) -> usize {
        self.sizes.len()
    }

    /// Whether field `f` lies on the second grid `h` (see [`SecondGrid`]).
    fn on_second(&self, f: usize) -> bool {
        let Some(second) = self.second else {
            return false;
        };
        let written = self
            .stencils
            .iter()
            .flatten()
            .any(|part| self.targets(part).contains(&f));
        let never_smaller = second.deltas[..self.rank()].iter().all(|&d| d >= 0);
        f < 8
            && second.fields & (1 << f) != 0
            && !written
            && (self.fields[f].boundary != Boundary::None || never_smaller)
    }

    /// The size of the second grid along `axis`.
    fn second_size(&self, axis: usize) -> i64 {
        let delta = self.second.map_or(0, |s| i64::from(s.deltas[axis]));
        (self.sizes[axis] + delta).max(1)
    }

    fn targets(&self, part: &GenPart) -> Vec<usize> {
        let n = self.fields.len();
        match &part.body {
            PartBody::Assign(a) => vec![a.target % n],
            PartBody::Call { assigns, .. } => assigns.iter().map(|a| a.target % n).collect(),
        }
    }

    /// The subset text for `sel`, with range axes narrowed by `margins`.
    fn subset_text(&self, sel: &[AxisSel; 3], margins: &[(i64, i64); 3]) -> String {
        let mut s = String::new();
        for (axis, sel) in sel.iter().enumerate().take(self.rank()) {
            let n = format!("n{axis}");
            match *sel {
                AxisSel::Range(lo, hi) => {
                    let lo = i64::from(lo).max(margins[axis].0);
                    let hi = i64::from(hi).max(margins[axis].1);
                    write!(s, "[{lo}:{n}-{}]", hi + 1).unwrap();
                }
                AxisSel::First => s.push_str("[0]"),
                AxisSel::Last => write!(s, "[{n}-1]").unwrap(),
                AxisSel::Middle => write!(s, "[{n}/2]").unwrap(),
            }
        }
        s
    }

    /// How far `boundary none` reads reach below and above, per axis.
    fn margins(
        &self,
        reads: &[Resolved],
        loop_reads: &[(Resolved, Option<usize>, u8)],
    ) -> [(i64, i64); 3] {
        let mut m = [(0i64, 0i64); 3];
        let mut widen = |f: usize, axis: usize, lo: i64, hi: i64| {
            if self.fields[f].boundary == Boundary::None {
                m[axis].0 = m[axis].0.max(-lo);
                m[axis].1 = m[axis].1.max(hi);
            }
        };
        for &(f, _, off) in reads {
            for (axis, &o) in off.iter().enumerate() {
                widen(f, axis, o, o);
            }
        }
        for &((f, _, _), axis, radius) in loop_reads {
            if let Some(axis) = axis {
                widen(f, axis, -i64::from(radius), i64::from(radius));
            }
        }
        m
    }

    fn fixed(sel: &[AxisSel; 3]) -> [bool; 3] {
        sel.map(|s| !matches!(s, AxisSel::Range(..)))
    }

    /// The value of the offset parameter `k`, from -4 to 4 (derived from
    /// `alpha`, so that shrinking one shrinks both).
    pub fn shift(&self) -> i64 {
        (self.alpha * 10.0).round() as i64 - 5
    }

    /// Parameter values: the sizes, `alpha` and `k`.
    pub fn bindings(&self, program: &Program) -> Bindings {
        Bindings {
            params: program
                .params
                .iter()
                .map(|p| {
                    let v = match self.generator_name(&p.name) {
                        "alpha" => self.alpha,
                        "k" => self.shift() as f64,
                        name => {
                            let axis = name[1..].parse::<usize>().expect("size param");
                            if name.starts_with('m') {
                                self.second_size(axis) as f64
                            } else {
                                self.sizes[axis] as f64
                            }
                        }
                    };
                    Value::Double(v).cast(p.ty)
                })
                .collect(),
        }
    }

    /// Deterministic inputs in [0.5, 1.5) (ints in [50, 150)), one per field.
    pub fn initial_state(&self, program: &Program, env: &RunEnv) -> FieldState {
        let inputs = program
            .fields
            .iter()
            .enumerate()
            .map(|(f, field)| {
                let len: usize = env.grid_dims()[field.grid.0].iter().product();
                let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ (f as u64 + 1).wrapping_mul(0x2545_F491);
                let data: Vec<f64> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 7;
                        seed ^= seed << 17;
                        0.5 + (seed % 1000) as f64 / 1000.0
                    })
                    .collect();
                Some(match field.ty {
                    ScalarType::Int => {
                        Buffer::Int(data.iter().map(|v| (v * 100.0) as i32).collect())
                    }
                    ScalarType::Long => {
                        Buffer::Long(data.iter().map(|v| (v * 100.0) as i64).collect())
                    }
                    ScalarType::Float => Buffer::Float(data.iter().map(|v| *v as f32).collect()),
                    ScalarType::Double => Buffer::Double(data),
                })
            })
            .collect();
        FieldState::initial(program, env, inputs).expect("inputs fit the fields")
    }

    /// Parses the printed program; panics with the text when the front-end refuses it.
    pub fn parse(&self) -> (String, Program) {
        let text = self.renamed(&self.to_string());
        match stencilc::front::parse_program(SourceFile::new("generated.sdsl", text.clone()))
            .and_then(stencilc::analysis::checked)
        {
            Ok(program) => (text, program),
            Err(d) => panic!("the front-end refused a generated program:\n{text}\n{d}"),
        }
    }

    /// The names of every field and the table (for `--shm` lists).
    pub fn shm_names(&self) -> Vec<String> {
        let mut names: Vec<String> = (0..self.fields.len()).map(|f| format!("f{f}")).collect();
        if self.table.is_some() {
            names.push("K".into());
        }
        names.iter().map(|n| self.rename(n).to_string()).collect()
    }

    fn write_part(
        &self,
        out: &mut String,
        functions: &mut String,
        written: &[(usize, usize)],
        name: &str,
        part: &GenPart,
    ) {
        let n = self.fields.len();
        let mut ctx = Ctx {
            program: self,
            written: written.to_vec(),
            fixed: Self::fixed(&part.subset),
            locals: Vec::new(),
            rotate: None,
        };
        let mut reads = Vec::new();
        let mut loop_reads = Vec::new();
        let stmt = match &part.body {
            PartBody::Assign(a) => {
                ctx.reads(&a.value, &mut reads);
                let t = a.target % n;
                format!(
                    "{} = {};",
                    ctx.target_text(t),
                    ctx.stored(t, &a.value, a.wrap)
                )
            }
            PartBody::Call {
                locals,
                looped,
                assigns,
                rotate,
            } => {
                ctx.rotate = Some(*rotate);
                // (local name, its declaration and loop) in order, then the assignments.
                let mut declared: Vec<(String, String)> = Vec::new();
                for (i, (ty, init)) in locals.iter().enumerate() {
                    // Int locals are named `_int` (see `Ctx::local_ty`).
                    let local = if *ty == Ty::Int {
                        format!("t{i}_int")
                    } else {
                        format!("t{i}")
                    };
                    let text = match init {
                        Some(e) => {
                            ctx.reads(e, &mut reads);
                            let value = if *ty == Ty::Int {
                                format!("(int)fmin(fmax({}, -1000.0), 1000.0)", ctx.expr(e))
                            } else {
                                format!("fmin(fmax({}, -8.0), 8.0)", ctx.expr(e))
                            };
                            format!("    {} {local} = {value};\n", ty.word())
                        }
                        None => format!("    {} {local};\n", ty.word()),
                    };
                    declared.push((local.clone(), text));
                    ctx.locals.push(local);
                }
                if let Some(lp) = looped {
                    let (read, axis) = ctx.loop_read(lp);
                    loop_reads.push((read, axis, lp.radius));
                    let r = lp.radius;
                    let coefficient = if self.table.is_some() {
                        format!("K[i + {r}]")
                    } else {
                        "0.25".into()
                    };
                    let text = format!(
                        "    double acc = 0.0;\n    for i in -{r}..{r} {{\n        acc = acc + {coefficient} * {};\n    }}\n",
                        ctx.read_text(read, axis)
                    );
                    declared.push(("acc".into(), text));
                    ctx.locals.push("acc".into());
                }
                let mut uses = String::new();
                for a in assigns {
                    ctx.reads(&a.value, &mut reads);
                    let t = a.target % n;
                    writeln!(
                        uses,
                        "    {} = {};",
                        ctx.target_text(t),
                        ctx.stored(t, &a.value, a.wrap)
                    )
                    .unwrap();
                }
                // Locals that nothing after them reads are left out: an unused
                // local is legal SDSL, but it makes NVRTC warn (see
                // differential_nvrtc.rs, `bug_unused_local_warns_in_cuda`), and
                // that would hide every other finding of the NVRTC property.
                let mut body = uses;
                for (local, text) in declared.iter().rev() {
                    if mentions(&body, local) {
                        body.insert_str(0, text);
                    }
                }
                let params: Vec<String> = (0..n).map(|j| format!("p{j}")).collect();
                writeln!(
                    functions,
                    "pointfunction {name}({}) {{\n{body}}}\n",
                    params.join(", ")
                )
                .unwrap();
                let args: Vec<String> = (0..n).map(|j| format!("f{}", (j + rotate) % n)).collect();
                format!("{name}({});", args.join(", "))
            }
        };
        let margins = self.margins(&reads, &loop_reads);
        writeln!(
            out,
            "        {} : {stmt}",
            self.subset_text(&part.subset, &margins)
        )
        .unwrap();
    }
}

impl fmt::Display for GenProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut head = String::new();
        for axis in 0..self.rank() {
            writeln!(head, "int n{axis};").unwrap();
        }
        if self.second.is_some() {
            for axis in 0..self.rank() {
                writeln!(head, "int m{axis};").unwrap();
            }
        }
        writeln!(head, "double alpha;").unwrap();
        writeln!(head, "int k;").unwrap();
        for (i, (ty, v)) in self.constants.iter().enumerate() {
            let suffix = if *ty == Ty::Float { "f" } else { "" };
            // Half the constants depend on the parameter, as in the guide.
            if i % 2 == 1 {
                writeln!(
                    head,
                    "{} c{i} = {:.1}{suffix} * alpha;",
                    ty.word(),
                    f64::from(*v) / 10.0
                )
                .unwrap();
            } else {
                writeln!(
                    head,
                    "const {} c{i} = {:.1}{suffix};",
                    ty.word(),
                    f64::from(*v) / 10.0
                )
                .unwrap();
            }
        }
        if let Some((ty, values)) = &self.table {
            let suffix = if *ty == Ty::Float { "f" } else { "" };
            let list: Vec<String> = values
                .iter()
                .map(|v| format!("{:.1}{suffix}", f64::from(*v) / 10.0))
                .collect();
            writeln!(head, "const {} K[5] = {{{}}};", ty.word(), list.join(", ")).unwrap();
        }
        let dims: String = (0..self.rank()).map(|a| format!("[n{a}]")).collect();
        writeln!(head, "grid g{dims};").unwrap();
        if self.second.is_some() {
            let dims: String = (0..self.rank()).map(|a| format!("[m{a}]")).collect();
            writeln!(head, "grid h{dims};").unwrap();
        }
        for (i, field) in self.fields.iter().enumerate() {
            let at = match field.levels {
                1 => "0",
                2 => "0,1",
                _ => "-1,0,1",
            };
            let boundary = match field.boundary {
                Boundary::None => "",
                Boundary::Clamp => " boundary clamp",
                Boundary::Mirror => " boundary mirror",
                Boundary::Periodic => " boundary periodic",
                Boundary::Zero => " boundary zero",
            };
            let grid = if self.on_second(i) { "h" } else { "g" };
            writeln!(
                head,
                "{} griddata f{i} on {grid} at {at}{boundary};",
                field.ty.word()
            )
            .unwrap();
        }
        let mut functions = String::new();
        let mut body = String::new();
        for (s, parts) in self.stencils.iter().enumerate() {
            let written: Vec<(usize, usize)> = parts
                .iter()
                .flat_map(|p| self.targets(p))
                .map(|t| (t, self.fields[t].written()))
                .collect();
            writeln!(body, "    stencil s{s} {{").unwrap();
            for (p, part) in parts.iter().enumerate() {
                self.write_part(
                    &mut body,
                    &mut functions,
                    &written,
                    &format!("pf{s}_{p}"),
                    part,
                );
            }
            writeln!(body, "    }}").unwrap();
        }
        for (r, red) in self.reductions.iter().enumerate() {
            let op = match red.op {
                RedOp::Max => "max",
                RedOp::Min => "min",
                RedOp::Sum => "+",
            };
            writeln!(body, "    reduction r{r} {op} {{").unwrap();
            for (subset, e) in &red.parts {
                let ctx = Ctx {
                    program: self,
                    written: Vec::new(),
                    fixed: Self::fixed(subset),
                    locals: Vec::new(),
                    rotate: None,
                };
                let mut reads = Vec::new();
                ctx.reads(e, &mut reads);
                let margins = self.margins(&reads, &[]);
                let term = match red.op {
                    RedOp::Sum => format!("fabs({})", ctx.expr(e)),
                    _ => ctx.expr(e),
                };
                writeln!(
                    body,
                    "        {} : {term};",
                    self.subset_text(subset, &margins)
                )
                .unwrap();
            }
            writeln!(body, "    }}").unwrap();
        }
        let check = self.check.and_then(|(r, t, every)| {
            // Only max/min reductions are exact on every back-end, so only they
            // decide when the iterate stops.
            let exact: Vec<usize> = (0..self.reductions.len())
                .filter(|&i| self.reductions[i].op != RedOp::Sum)
                .collect();
            (!exact.is_empty()).then(|| {
                format!(
                    " check (r{} < {:.1}) every {every} iterations",
                    exact[r % exact.len()],
                    f64::from(t) / 10.0
                )
            })
        });
        write!(
            f,
            "{head}\n{functions}iterate {} {{\n{body}}}{};\n",
            self.iterations,
            check.unwrap_or_default()
        )
    }
}

/// Whether `text` mentions the identifier `name` (not as part of a longer one).
fn mentions(text: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// Whether `e` is made of literals only (the front-end folds it).
fn is_constant(e: &GenExpr) -> bool {
    match e {
        GenExpr::Read { .. }
        | GenExpr::ParamRead { .. }
        | GenExpr::Alpha
        | GenExpr::Const(_)
        | GenExpr::Local(_) => false,
        GenExpr::Lit(..) | GenExpr::IntLit(_) => true,
        GenExpr::Neg(a) | GenExpr::Math1(_, _, a) | GenExpr::BigCast(_, a) => is_constant(a),
        GenExpr::Add(a, b)
        | GenExpr::Sub(a, b)
        | GenExpr::Mul(a, b)
        | GenExpr::SafeDiv(a, b)
        | GenExpr::MinMax(_, _, a, b)
        | GenExpr::IntDiv { a, b, .. } => is_constant(a) && is_constant(b),
        GenExpr::Select(_, parts) | GenExpr::Logic(_, _, parts) => parts.iter().all(is_constant),
    }
}
