//! The shapes of the lifted fields: affine extents as text, a pointer's
//! first extent from the rows its accesses reach, one grid per nest, the
//! program's grid and field declarations, and the time level a ping-pong
//! subscript selects.

use super::*;

/// An affine form: coefficients per symbol and a constant.
pub(super) type Affine = (BTreeMap<String, i64>, i64);

pub(super) fn affine(e: &Expr) -> Option<Affine> {
    match e {
        Expr::Int(v) => Some((BTreeMap::new(), *v)),
        Expr::Load(r) if r.index.is_empty() => {
            Some(([(r.name.clone(), 1)].into_iter().collect(), 0))
        }
        Expr::Unary('-', a) => {
            let (m, c) = affine(a)?;
            Some((
                m.into_iter().map(|(k, v)| (k, -v)).collect(),
                c.checked_neg()?,
            ))
        }
        Expr::Bin(op @ (BinOp::Add | BinOp::Sub), a, b) => {
            let (mut m, c) = affine(a)?;
            let (mb, cb) = affine(b)?;
            let sign = if *op == BinOp::Add { 1 } else { -1 };
            for (k, v) in mb {
                let e = m.entry(k).or_insert(0);
                *e = e.checked_add(sign * v)?;
            }
            m.retain(|_, v| *v != 0);
            Some((m, c.checked_add(sign * cb)?))
        }
        Expr::Bin(BinOp::Mul, a, b) => {
            let (ma, ca) = affine(a)?;
            let (mb, cb) = affine(b)?;
            let (m, k, c) = if ma.is_empty() {
                (mb, ca, cb)
            } else if mb.is_empty() {
                (ma, cb, ca)
            } else {
                return None;
            };
            let mut out = BTreeMap::new();
            for (s, v) in m {
                if v.checked_mul(k)? != 0 {
                    out.insert(s, v.checked_mul(k)?);
                }
            }
            Some((out, c.checked_mul(k)?))
        }
        _ => None,
    }
}

/// An affine form as C and SDSL text (`n - 1`, `2 * m`, `157`).
pub(super) fn affine_text((m, c): &Affine) -> String {
    let mut out = String::new();
    for (sym, k) in m {
        let (sign, k) = if *k < 0 { ("-", -k) } else { ("+", *k) };
        let term = if k == 1 {
            sym.clone()
        } else {
            format!("{k} * {sym}")
        };
        if out.is_empty() {
            out = if sign == "-" {
                format!("-{term}")
            } else {
                term
            };
        } else {
            let _ = write!(out, " {sign} {term}");
        }
    }
    if out.is_empty() {
        c.to_string()
    } else if *c > 0 {
        format!("{out} + {c}")
    } else if *c < 0 {
        format!("{out} - {}", c.unsigned_abs())
    } else {
        out
    }
}

impl<'a> Lifter<'a> {
    /// Every array's grid extents ([`LiftedArray::extents`]), checking
    /// that the arrays of each nest share one grid. A pointer's first extent
    /// is the rows its accesses reach; when another array of a nest it is
    /// used in reaches further (by a constant: the Rician `F`, read on the
    /// interior only, beside `G`, read one row beyond), the pointer's grid
    /// takes those rows too and only the rows it reaches are copied
    /// ([`LiftedArray::rows`]): the program never reads the others.
    pub(super) fn settle_extents(
        &mut self,
        parts: &[LiftedNest],
        nests: &[&'a Loop],
    ) -> Result<(), String> {
        let mut shapes: BTreeMap<String, Vec<Affine>> = BTreeMap::new();
        for (c_name, info) in &self.arrays {
            let mut extents = Vec::new();
            for e in &info.extents {
                let e = e.as_ref().or(info.rows.as_ref()).ok_or_else(|| {
                    format!("the rows of `{c_name}` the nests touch are not known")
                })?;
                extents.push(e.clone());
            }
            shapes.insert(c_name.clone(), extents);
        }
        loop {
            let mut widened = false;
            for part in parts {
                let Some(first) = part.arrays.first() else {
                    continue;
                };
                let mut widest = shapes[first].clone();
                for a in &part.arrays {
                    let shape = &shapes[a];
                    if shape[0].0 == widest[0].0 && shape[0].1 > widest[0].1 {
                        widest = shape.clone();
                    }
                }
                for a in &part.arrays {
                    let pointer_rows = self.arrays[a].extents[0].is_none();
                    let shape = shapes.get_mut(a).expect("every array has a shape");
                    if pointer_rows
                        && shape[1..] == widest[1..]
                        && shape[0].0 == widest[0].0
                        && shape[0].1 < widest[0].1
                    {
                        shape[0] = widest[0].clone();
                        widened = true;
                    }
                }
            }
            if !widened {
                break;
            }
        }
        for (c_name, info) in &mut self.arrays {
            let shape = &shapes[c_name];
            info.lifted.extents = shape.iter().map(affine_text).collect();
            info.lifted.rows = info
                .rows
                .as_ref()
                .filter(|rows| info.extents[0].is_none() && *rows != &shape[0])
                .map(affine_text);
        }
        for (n, part) in parts.iter().enumerate() {
            let shapes: BTreeSet<&Vec<String>> = part
                .arrays
                .iter()
                .map(|a| &self.arrays[a].lifted.extents)
                .collect();
            if shapes.len() > 1 {
                return Err(format!(
                    "nest at line {}: its arrays are not all on one grid (extents {})",
                    nests[n].lines.0,
                    shapes
                        .iter()
                        .map(|s| format!("[{}]", s.join("][")))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        Ok(())
    }
}

impl Lifter<'_> {
    /// The SDSL declarations of the lifted program: a comment naming it, its
    /// parameters, its grids and its fields; with the grids' shapes.
    pub(super) fn declarations(&self, name: &str) -> (String, Vec<Vec<String>>) {
        let mut text = format!("// {name}: lifted by stencilc map\n");
        for p in &self.params {
            let _ = writeln!(text, "{} {};", p.elem, p.name);
        }
        let mut grids: Vec<Vec<String>> = Vec::new();
        for a in &self.array_order {
            let shape = &self.arrays[a].lifted.extents;
            if !grids.contains(shape) {
                grids.push(shape.clone());
            }
        }
        for (g, shape) in grids.iter().enumerate() {
            let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
            let _ = writeln!(text, "grid g{g}{dims};");
        }
        for a in &self.array_order {
            let a = &self.arrays[a].lifted;
            let g = grids.iter().position(|s| s == &a.extents).unwrap_or(0);
            let levels: Vec<String> = (0..a.levels()).map(|l| l.to_string()).collect();
            let _ = writeln!(
                text,
                "{} griddata {} on g{g} at {};",
                a.elem,
                a.field,
                levels.join(",")
            );
        }
        (text, grids)
    }

    /// The time level of a subscript of the form `(t + k) % m` (`m` of 2 or
    /// 3) or `(t + k) & 1`, with the number of buffers it cycles through:
    /// `(k mod m, m)`. Casts around the subscript or its parts
    /// (`(int)(t % 2)`) are looked through.
    pub(super) fn time_level(&self, e: &Expr) -> Option<(usize, usize)> {
        let t = self.time?;
        let (inner, buffers) = match uncast(e) {
            Expr::Bin(BinOp::Mod, inner, m) => (inner, constant(m)?),
            Expr::Bin(BinOp::BitAnd, inner, m) if constant(m) == Some(1) => (inner, 2),
            _ => return None,
        };
        if !(2..=3).contains(&buffers) {
            return None;
        }
        let (syms, k) = affine(uncast(inner))?;
        (syms.len() == 1 && syms.get(&t.var) == Some(&1))
            .then(|| (k.rem_euclid(buffers) as usize, buffers as usize))
    }
}

/// `e` without the casts around it.
fn uncast(mut e: &Expr) -> &Expr {
    while let Expr::Cast(_, inner) = e {
        e = inner;
    }
    e
}
