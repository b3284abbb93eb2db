//! How a lifted nest's expressions become SDSL text: scalars as parameters or
//! loop variables, and array references as field reads and writes: the
//! subscripts of arrays, VLA parameters and `float (*a)[M]` pointers taken
//! axis by axis, and pointers indexed linearly (`a[i*m + j]`) split along
//! their strides when those are provable; and the names, types and
//! statement descriptions the lift uses.

use super::*;

impl<'a> Lifter<'a> {
    pub(super) fn array_ref(
        &mut self,
        r: &Ref,
        write: bool,
        cx: &mut NestCx<'_>,
    ) -> Result<String, String> {
        let var = lookup(&r.name, self.function, self.unit)
            .ok_or_else(|| format!("`{}` has no known declaration", r.name))?
            .clone();
        let elem = scalar_type(&var.elem)
            .ok_or_else(|| format!("`{}` has elements of type `{}`", r.name, var.elem))?;
        let swap = self.swaps.get(&r.name).cloned();
        let key = swap
            .as_ref()
            .map_or(r.name.clone(), |(first, _)| first.clone());
        let mut level = 0;
        // The buffers of the leading time axis (0: none).
        let mut time_buffers = 0;
        // The subscripts as affine forms, one per grid dimension, and the
        // extents known from the declaration (`None`: a pointer's rows).
        let (forms, known): (Vec<Option<Affine>>, Vec<Option<Affine>>) = if !var.pointer {
            let mut dims = Vec::new();
            for d in &var.dims {
                let extent = d
                    .as_ref()
                    .and_then(constant)
                    .filter(|&e| e > 0)
                    .ok_or_else(|| format!("`{}` has an extent that is not a constant", r.name))?;
                dims.push(extent);
            }
            if r.index.len() != dims.len() {
                return Err(format!(
                    "`{r}` has {} subscripts for {} dimensions",
                    r.index.len(),
                    dims.len()
                ));
            }
            let time = r.index.first().and_then(|e| self.time_level(e));
            let skip = match time {
                Some((k, buffers)) if dims[0] == buffers as i64 => {
                    level = k;
                    time_buffers = buffers;
                    1
                }
                _ => 0,
            };
            (
                r.index[skip..].iter().map(affine).collect(),
                dims[skip..]
                    .iter()
                    .map(|d| Some((BTreeMap::new(), *d)))
                    .collect(),
            )
        } else if var.dims.is_empty() {
            self.linear(r, cx)?
        } else {
            if r.index.len() != var.dims.len() {
                return Err(format!(
                    "`{r}` has {} subscripts for {} dimensions",
                    r.index.len(),
                    var.dims.len()
                ));
            }
            // AN5D's form, `T (*A)[n][n] = (T (*)[n][n])A1;` indexed
            // `A[(t + 1) % 2][i][j]`: the pointer's first axis holds the
            // time levels, and the grid is what follows.
            let time = r
                .index
                .first()
                .and_then(|e| self.time_level(e))
                .filter(|_| var.dims.len() > 1);
            let mut known = match time {
                Some((k, buffers)) => {
                    level = k;
                    time_buffers = buffers;
                    Vec::new()
                }
                None => vec![None],
            };
            for d in &var.dims[1..] {
                let e = d
                    .as_ref()
                    .ok_or_else(|| format!("`{}` has an inner extent that is not given", r.name))?;
                let band = cx.band.clone();
                known
                    .push(Some(self.param_affine(e, &band).map_err(|why| {
                        format!("the extent of `{}`: {why}", r.name)
                    })?));
            }
            let skip = usize::from(time_buffers > 0);
            (r.index[skip..].iter().map(affine).collect(), known)
        };
        if let Some((_, swapped_level)) = &swap {
            level = *swapped_level;
        }
        if known.is_empty() || known.len() > 3 {
            return Err(format!(
                "`{}` has {} dimensions on its grid; fields have 1 to 3",
                r.name,
                known.len()
            ));
        }
        let field = sdsl_name(&key);
        self.register_array(
            r,
            &var,
            elem,
            &key,
            &field,
            swap.is_some(),
            time_buffers,
            &known,
            write,
        )?;
        if !cx.fields.contains(&field) {
            cx.fields.push(field.clone());
        }
        if !cx.arrays.contains(&key) {
            cx.arrays.push(key.clone());
        }
        if write {
            note_write_point(r, &forms, &known, cx)?;
        }
        let Some(point) = cx.point.clone() else {
            return Err("it writes no array".into());
        };
        self.refuse_time_index(r, &forms)?;
        if point.len() != known.len() || cx.shape.as_ref() != Some(&known) {
            return Err(format!(
                "`{r}` is not on the grid the nest writes (shapes differ)"
            ));
        }
        let offsets = offsets_from_point(r, &forms, &point)?;
        if known[0].is_none() {
            self.note_rows(r, &key, &point[0], offsets[0], cx)?;
        }
        let offs: String = offsets.iter().map(|o| format!("[{o}]")).collect();
        if !write {
            cx.reads.push((key, offsets));
        }
        Ok(format!("[{level}]{field}{offs}"))
    }

    /// Refuses a reference `r` whose subscripts `forms` read the time loop's
    /// variable: a stencil's read offsets are the same at every step.
    fn refuse_time_index(&self, r: &Ref, forms: &[Option<Affine>]) -> Result<(), String> {
        if let Some(t) = self.time {
            if forms
                .iter()
                .any(|f| f.as_ref().is_some_and(|(m, _)| m.contains_key(&t.var)))
            {
                return Err(format!(
                "`{r}` is indexed by the time variable `{}` (a stencil's read offsets are the same at every step)",
                t.var
            ));
            }
        }
        Ok(())
    }

    /// Records the array `key` (the reference `r` to `var`, its SDSL `field`)
    /// on its first reference, or checks that this one agrees with the first.
    #[allow(clippy::too_many_arguments)]
    fn register_array(
        &mut self,
        r: &Ref,
        var: &crate::front::c::loops::Var,
        elem: &str,
        key: &str,
        field: &str,
        swapped: bool,
        time_buffers: usize,
        known: &[Option<Affine>],
        write: bool,
    ) -> Result<(), String> {
        match self.arrays.get_mut(key) {
            Some(a) => {
                if a.lifted.time_buffers != time_buffers {
                    return Err(format!(
                        "`{}` is indexed both by `(t + k) % {}` and otherwise in its first dimension",
                        r.name,
                        a.lifted.time_buffers.max(time_buffers)
                    ));
                }
                if a.extents != known {
                    return Err(format!(
                        "`{}` is indexed with other extents or strides than before (`{r}`)",
                        r.name
                    ));
                }
                a.lifted.written |= write;
            }
            None => {
                let pointer_type = var.pointer.then(|| {
                    if var.dims.is_empty() {
                        (format!("{elem} *"), String::new())
                    } else {
                        let rows: String = var.dims[1..]
                            .iter()
                            .map(|d| {
                                format!(
                                    "[{}]",
                                    d.as_ref().map(|e| e.to_string()).unwrap_or_default()
                                )
                            })
                            .collect();
                        (format!("{elem} (*"), format!("){rows}"))
                    }
                });
                self.arrays.insert(
                    key.to_string(),
                    ArrayInfo {
                        lifted: LiftedArray {
                            c_name: key.to_string(),
                            field: field.to_string(),
                            elem: elem.to_string(),
                            extents: Vec::new(),
                            time_buffers,
                            swapped_with: swapped.then(|| {
                                self.swaps
                                    .iter()
                                    .find(|(_, (first, l))| first == key && *l == 1)
                                    .map(|(name, _)| name.clone())
                                    .unwrap_or_default()
                            }),
                            pointer_type,
                            written: write,
                            rows: None,
                        },
                        extents: known.to_vec(),
                        rows: None,
                    },
                );
                self.array_order.push(key.to_string());
            }
        }
        Ok(())
    }

    /// For a pointer read or written by `r` at `offset` from the point's first
    /// axis `point`, the rows of `key` it reaches, joined with those before.
    fn note_rows(
        &mut self,
        r: &Ref,
        key: &str,
        point: &Axis,
        offset: i64,
        cx: &NestCx<'_>,
    ) -> Result<(), String> {
        let reach = match point {
            Axis::Var(v) => {
                let l = cx.band.iter().find(|l| &l.var == v).expect("band var");
                let lower = constant(&l.lower).ok_or_else(|| {
                    format!("`{r}`: the loop `{v}` starts at `{}`, not a constant, so the first row of `{}` is not known", l.lower, r.name)
                })?;
                if lower + offset < 0 {
                    return Err(format!(
                        "`{r}` reaches before the first row of `{}`",
                        r.name
                    ));
                }
                let (m, c) =
                    affine(&l.upper).ok_or_else(|| format!("the bound of `{v}` is not affine"))?;
                (m, c + offset)
            }
            Axis::Fixed(k) => {
                if k + offset < 0 {
                    return Err(format!(
                        "`{r}` reaches before the first row of `{}`",
                        r.name
                    ));
                }
                (BTreeMap::new(), k + offset + 1)
            }
        };
        let info = self.arrays.get_mut(key).expect("registered above");
        info.rows = match info.rows.take() {
            None => Some(reach),
            Some((m, c)) if m == reach.0 => Some((m, c.max(reach.1))),
            Some(other) => {
                return Err(format!(
                    "the rows of `{}` the nests reach have no single bound (`{}` and `{}`)",
                    r.name,
                    affine_text(&other),
                    affine_text(&reach)
                ))
            }
        };
        Ok(())
    }

    /// A pointer indexed linearly (`a[i*m + j]`): its subscript split along
    /// its strides when they are provable ([`delinearise_with_extents`]), the
    /// strides' symbols becoming parameters.
    #[allow(clippy::type_complexity)]
    pub(super) fn linear(
        &mut self,
        r: &Ref,
        cx: &NestCx<'_>,
    ) -> Result<(Vec<Option<Affine>>, Vec<Option<Affine>>), String> {
        if r.index.len() != 1 {
            return Err(format!(
                "`{r}` has {} subscripts for a pointer",
                r.index.len()
            ));
        }
        let loop_vars: BTreeSet<String> = cx.band.iter().map(|l| l.var.clone()).collect();
        let context = Context {
            loop_vars: &loop_vars,
            written: &self.written_scalars,
        };
        let Sub::Affine(poly) = context.sub(&r.index[0]) else {
            return Err(format!("the subscript of `{r}` is not affine"));
        };
        let to_affine = |p: &Poly| -> Option<Affine> {
            let mut m = BTreeMap::new();
            let mut c = 0;
            for (mono, k) in &p.0 {
                match mono.as_slice() {
                    [] => c = *k,
                    [s] => {
                        m.insert(s.clone(), *k);
                    }
                    _ => return None,
                }
            }
            Some((m, c))
        };
        let one_dimensional = poly.0.keys().all(|mono| mono.len() <= 1);
        if one_dimensional {
            return Ok((vec![to_affine(&poly)], vec![None]));
        }
        let loops: BTreeMap<String, Loop> = cx
            .band
            .iter()
            .map(|l| (l.var.clone(), (*l).clone()))
            .collect();
        let (dims, extents) = delinearise_with_extents(std::slice::from_ref(&poly), &loops, &loop_vars)
            .ok_or_else(|| {
                format!("`{r}`: its linear subscript cannot be split into rows (the strides are not provable from the loop bounds)")
            })?;
        let mut known = vec![None];
        for e in extents {
            self.scalar(&e, None)
                .map_err(|why| format!("the stride `{e}` of `{r}`: {why}"))?;
            known.push(Some(([(e, 1)].into_iter().collect(), 0)));
        }
        Ok((dims[0].iter().map(to_affine).collect(), known))
    }

    pub(super) fn expr(&mut self, e: &Expr, cx: Option<&mut NestCx<'_>>) -> Result<String, String> {
        let mut cx = cx;
        Ok(match e {
            Expr::Int(v) => {
                if i32::try_from(*v).is_ok() {
                    format!("{v}")
                } else {
                    format!("{v}L")
                }
            }
            Expr::Float(s) => {
                let lower = s.to_ascii_lowercase();
                if lower.contains('x') || lower.ends_with('l') {
                    return Err(format!("the literal `{s}` (hexadecimal or long double)"));
                }
                lower
            }
            Expr::Load(r) if r.index.is_empty() => self.scalar(&r.name, cx.as_deref())?,
            Expr::Load(r) => {
                let Some(cx) = cx else {
                    return Err(format!("`{r}` reads an array"));
                };
                self.array_ref(r, false, cx)?
            }
            Expr::Bin(op, a, b) => {
                use BinOp::*;
                if matches!(op, BitAnd | BitOr | BitXor | Shl | Shr) {
                    return Err(format!("`{}` is not an SDSL operator", op.symbol()));
                }
                // A chain of one level (`a + b + c`) is written without the
                // inner parentheses: SDSL, like C, groups it from the left,
                // and the parser bounds parentheses' nesting, not chains'.
                let chained = matches!(&**a, Expr::Bin(inner, ..) if level(*inner) == level(*op));
                let a = self.expr(a, cx.as_deref_mut())?;
                let a = if chained { &a[1..a.len() - 1] } else { &a[..] };
                let b = self.expr(b, cx)?;
                format!("({a} {} {b})", op.symbol())
            }
            Expr::Unary(op @ ('-' | '!'), a) => format!("{op}({})", self.expr(a, cx)?),
            Expr::Unary(op, _) => return Err(format!("the operator `{op}`")),
            Expr::Call(f, args) => {
                let mut out = Vec::new();
                for a in args {
                    out.push(self.expr(a, cx.as_deref_mut())?);
                }
                format!("{f}({})", out.join(", "))
            }
            Expr::Cond(c, a, b) => {
                let c = self.expr(c, cx.as_deref_mut())?;
                let a = self.expr(a, cx.as_deref_mut())?;
                let b = self.expr(b, cx)?;
                format!("({c} ? {a} : {b})")
            }
            Expr::Cast(t, a) => {
                let ty = scalar_type(t).ok_or_else(|| format!("a cast to `{t}`"))?;
                format!("(({ty}) {})", self.expr(a, cx)?)
            }
            Expr::Str(_) => return Err("a string literal".into()),
            Expr::Unsupported(what) => return Err(what.clone()),
        })
    }

    pub(super) fn scalar(&mut self, name: &str, cx: Option<&NestCx<'_>>) -> Result<String, String> {
        if let Some((tested, value)) = &self.check_scalar {
            if tested == name {
                return Ok(value.clone());
            }
        }
        if let Some(cx) = cx {
            if cx.locals.contains_key(name) {
                return Ok(name.to_string());
            }
            if cx.band.iter().any(|l| l.var == name) {
                return Err(format!(
                    "the loop variable `{name}` is used as a value (a point's coordinates are not available to a stencil)"
                ));
            }
        }
        if self.time.is_some_and(|t| t.var == name) {
            return Err(format!(
                "the time variable `{name}` is used outside a `(t + k) % 2` subscript"
            ));
        }
        if self.written_scalars.contains(name) {
            return Err(format!(
                "the scalar `{name}` is written inside the lifted loops"
            ));
        }
        let var = lookup(name, self.function, self.unit)
            .ok_or_else(|| format!("`{name}` has no known declaration"))?;
        let elem = scalar_type(&var.elem)
            .filter(|_| var.dims.is_empty() && !var.pointer)
            .ok_or_else(|| format!("`{name}` is not an int, long, float or double scalar"))?;
        if Keyword::from_word(name).is_some() {
            return Err(format!("the scalar `{name}` is named like an SDSL keyword"));
        }
        if !self.params.iter().any(|p| p.name == name) {
            self.params.push(LiftedParam {
                name: name.to_string(),
                elem: elem.to_string(),
            });
        }
        Ok(name.to_string())
    }
}

/// The precedence level of an arithmetic operator, as C and SDSL share it
/// (higher binds tighter); operators of one level group from the left.
fn level(op: BinOp) -> u8 {
    use BinOp::*;
    match op {
        Mul | Div | Mod => 9,
        Add | Sub => 8,
        Shl | Shr => 7,
        Lt | Le | Gt | Ge => 6,
        Eq | Ne => 5,
        BitAnd => 4,
        BitXor => 3,
        BitOr => 2,
        And => 1,
        Or => 0,
    }
}

/// A statement as the reasons name it.
pub(super) fn describe(s: &Stmt) -> String {
    match s {
        Stmt::For(l) => format!("a loop (`{}`, line {})", l.var, l.lines.0),
        Stmt::Assign(a) => format!("an assignment (line {})", a.line),
        Stmt::Decl { name, line, .. } => format!("a declaration of `{name}` (line {line})"),
        Stmt::If { line, .. } => format!("an `if` (line {line})"),
        Stmt::Eval { expr: e, .. } => format!("a statement `{e}`"),
        Stmt::Break => "`break`".into(),
        Stmt::Continue => "`continue`".into(),
        Stmt::Return(_) => "`return`".into(),
        Stmt::Goto(l) => format!("`goto {l}`"),
        Stmt::Other { what, line, .. } => format!("{what} (line {line})"),
    }
}

/// A C name as an SDSL name (`c_` before an SDSL keyword).
pub(super) fn sdsl_name(c: &str) -> String {
    if Keyword::from_word(c).is_some() {
        format!("c_{c}")
    } else {
        c.to_string()
    }
}

/// The constant offsets of the reference `r` (subscripts `forms`) from the
/// nest's write point `point`, one per axis.
fn offsets_from_point(
    r: &Ref,
    forms: &[Option<Affine>],
    point: &[Axis],
) -> Result<Vec<i64>, String> {
    let mut offsets = Vec::new();
    for (d, (f, axis)) in forms.iter().zip(point).enumerate() {
        let off = f.as_ref().and_then(|(m, c)| match axis {
            Axis::Var(v) => (m.len() == 1 && m.get(v) == Some(&1)).then_some(*c),
            Axis::Fixed(k) => m.is_empty().then(|| c - k),
        });
        offsets.push(off.ok_or_else(|| {
            format!(
                "the read `{r}` is not the point plus a constant offset (subscript {})",
                d + 1
            )
        })?);
    }
    Ok(offsets)
}

/// The point a write `r` (subscripts `forms` on the grid `known`) is at:
/// each subscript a band variable or a constant, each band variable used
/// once, the same point and grid for every write of the nest.
fn note_write_point(
    r: &Ref,
    forms: &[Option<Affine>],
    known: &[Option<Affine>],
    cx: &mut NestCx<'_>,
) -> Result<(), String> {
    let mut point = Vec::new();
    for (d, f) in forms.iter().enumerate() {
        let axis = match f {
            Some((m, 0)) if m.len() == 1 => {
                let (v, c) = m.iter().next().expect("one symbol");
                if *c == 1 && cx.band.iter().any(|l| &l.var == v) {
                    Some(Axis::Var(v.clone()))
                } else {
                    None
                }
            }
            Some((m, c)) if m.is_empty() => Some(Axis::Fixed(*c)),
            _ => None,
        };
        point.push(axis.ok_or_else(|| {
            format!("the write `{r}` is not at the point: its subscript {} is neither a loop variable nor a constant", d + 1)
        })?);
    }
    for l in &cx.band {
        let uses = point
            .iter()
            .filter(|a| matches!(a, Axis::Var(v) if v == &l.var))
            .count();
        if uses != 1 {
            return Err(format!(
                "the write `{r}` does not use loop variable `{}` exactly once",
                l.var
            ));
        }
    }
    match &cx.point {
        Some(p) if p != &point || cx.shape.as_deref() != Some(known) => {
            return Err(format!(
                "the writes are not all at the same point of the same grid (`{r}`)"
            ))
        }
        _ => {
            cx.point = Some(point);
            cx.shape = Some(known.to_vec());
        }
    }
    Ok(())
}

/// The SDSL type of a C scalar type.
pub(super) fn scalar_type(elem: &str) -> Option<&'static str> {
    match elem {
        "int" => Some("int"),
        "long" => Some("long"),
        "float" => Some("float"),
        "double" => Some("double"),
        _ => None,
    }
}
