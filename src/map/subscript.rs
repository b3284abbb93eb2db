//! Array subscripts as the dependence test sees them: affine polynomials in
//! the loop variables and the nest's invariant scalars, `(t + k) % m` time
//! buffers, and linear subscripts (`a[i*n + j]`) delinearised into one
//! dimension per stride when the strides are provable from the loop bounds.

use std::collections::{BTreeMap, BTreeSet};

use crate::front::c::loops::{BinOp, Expr, Loop};

/// A polynomial over named symbols: monomial (sorted names, may repeat) → coefficient.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Poly(pub BTreeMap<Vec<String>, i64>);

impl Poly {
    /// The constant `c`.
    pub fn constant(c: i64) -> Poly {
        let mut p = Poly::default();
        if c != 0 {
            p.0.insert(Vec::new(), c);
        }
        p
    }

    /// `coefficient * m` (the product of the names of `m`).
    pub fn monomial(m: Vec<String>, coefficient: i64) -> Poly {
        let mut p = Poly::default();
        if coefficient != 0 {
            p.0.insert(m, coefficient);
        }
        p
    }

    /// `self * factor`; `None` on overflow.
    pub fn scale(&self, factor: i64) -> Option<Poly> {
        self.mul(&Poly::constant(factor))
    }

    fn symbol(name: &str) -> Poly {
        let mut p = Poly::default();
        p.0.insert(vec![name.to_string()], 1);
        p
    }

    /// `self + sign * other`; `None` on overflow.
    pub fn add(&self, other: &Poly, sign: i64) -> Option<Poly> {
        let mut out = self.clone();
        for (m, c) in &other.0 {
            let e = out.0.entry(m.clone()).or_insert(0);
            *e = e.checked_add(sign.checked_mul(*c)?)?;
            if *e == 0 {
                out.0.remove(m);
            }
        }
        Some(out)
    }

    /// `self * other`; `None` on overflow.
    fn mul(&self, other: &Poly) -> Option<Poly> {
        let mut out = Poly::default();
        for (m1, c1) in &self.0 {
            for (m2, c2) in &other.0 {
                let mut m: Vec<String> = m1.iter().chain(m2).cloned().collect();
                m.sort();
                out = out.add(&Poly([(m, c1.checked_mul(*c2)?)].into_iter().collect()), 1)?;
            }
        }
        Some(out)
    }

    /// The constant term.
    pub fn constant_term(&self) -> i64 {
        self.0.get(&Vec::new()).copied().unwrap_or(0)
    }

    /// The value of a polynomial without symbols.
    pub fn as_constant(&self) -> Option<i64> {
        match self.0.len() {
            0 => Some(0),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    /// The polynomial without its constant term.
    pub fn without_constant(&self) -> Poly {
        let mut p = self.clone();
        p.0.remove(&Vec::new());
        p
    }
}

/// One subscript of an access.
#[derive(Clone, Debug, PartialEq)]
pub enum Sub {
    /// Affine in the loop variables (coefficients constant), with invariant symbols.
    Affine(Poly),
    /// `(x + k) % m` with `x` invariant in the nest: (text of x, k, m).
    Modulo(String, i64, i64),
    /// Invariant in the nest but not affine: its text.
    Invariant(String),
    /// Varies in the nest and is not affine: its text.
    NonAffine(String),
}

/// What the subscript builder needs to know about the nest.
pub struct Context<'a> {
    /// Variables of the loops of the nest.
    pub loop_vars: &'a BTreeSet<String>,
    /// Scalars written in the nest (not invariant).
    pub written: &'a BTreeSet<String>,
}

impl Context<'_> {
    fn invariant(&self, e: &Expr) -> bool {
        let mut ok = true;
        e.visit(&mut |x| match x {
            Expr::Load(r)
                if !r.index.is_empty()
                    || self.loop_vars.contains(&r.name)
                    || self.written.contains(&r.name) =>
            {
                ok = false
            }
            Expr::Call(..) | Expr::Str(_) | Expr::Unsupported(_) => ok = false,
            _ => {}
        });
        ok
    }

    /// `e` as a polynomial over loop variables and invariant scalars, or
    /// `None` (a written scalar, an array element, a call, a division of
    /// symbols...).
    pub fn poly(&self, e: &Expr) -> Option<Poly> {
        match e {
            Expr::Int(v) => Some(Poly::constant(*v)),
            Expr::Load(r) if r.index.is_empty() && !self.written.contains(&r.name) => {
                Some(Poly::symbol(&r.name))
            }
            Expr::Bin(BinOp::Add, a, b) => self.poly(a)?.add(&self.poly(b)?, 1),
            Expr::Bin(BinOp::Sub, a, b) => self.poly(a)?.add(&self.poly(b)?, -1),
            Expr::Bin(BinOp::Mul, a, b) => self.poly(a)?.mul(&self.poly(b)?),
            Expr::Unary('-', a) => Poly::default().add(&self.poly(a)?, -1),
            // Constants only (`N / 2` once the preprocessor has expanded
            // `N`): C's truncating division and remainder.
            Expr::Bin(op @ (BinOp::Div | BinOp::Mod), a, b) => {
                let (a, b) = (self.poly(a)?.as_constant()?, self.poly(b)?.as_constant()?);
                let value = if *op == BinOp::Div {
                    a.checked_div(b)
                } else {
                    a.checked_rem(b)
                };
                value.map(Poly::constant)
            }
            Expr::Cast(t, a) if t == "int" || t == "long" => self.poly(a),
            _ => None,
        }
    }

    /// A subscript.
    pub fn sub(&self, e: &Expr) -> Sub {
        // `(int)(t % 2)`: a cast to an integer type of an integer subscript
        // changes nothing (as in `poly`).
        if let Expr::Cast(t, inner) = e {
            if t == "int" || t == "long" {
                return self.sub(inner);
            }
        }
        if let Some(p) = self.poly(e) {
            // Affine: every monomial holds at most one loop variable, once.
            let affine =
                p.0.keys()
                    .all(|m| m.iter().filter(|s| self.loop_vars.contains(*s)).count() <= 1);
            if affine {
                return Sub::Affine(p);
            }
        }
        if self.invariant(e) {
            // `(t + k) & 1` cycles through two buffers as `(t + k) % 2` does.
            let modulo = match e {
                Expr::Bin(BinOp::Mod, x, m) => match **m {
                    Expr::Int(m @ 1..) => Some((x, m)),
                    _ => None,
                },
                Expr::Bin(BinOp::BitAnd, x, one) if matches!(**one, Expr::Int(1)) => Some((x, 2)),
                _ => None,
            };
            if let Some((x, m)) = modulo {
                let (base, k) = match &**x {
                    Expr::Bin(BinOp::Add, a, b) => match **b {
                        Expr::Int(k) => (a.to_string(), k),
                        _ => (x.to_string(), 0),
                    },
                    _ => (x.to_string(), 0),
                };
                return Sub::Modulo(base, k, m);
            }
            return Sub::Invariant(e.to_string());
        }
        Sub::NonAffine(e.to_string())
    }
}

/// The loop variable a monomial holds, and the rest (the stride's symbols).
fn split_monomial(m: &[String], loop_vars: &BTreeSet<String>) -> (Option<String>, Vec<String>) {
    let var = m.iter().find(|s| loop_vars.contains(*s)).cloned();
    let mut rest: Vec<String> = m.to_vec();
    if let Some(v) = &var {
        if let Some(i) = rest.iter().position(|s| s == v) {
            rest.remove(i);
        }
    }
    (var, rest)
}

/// Delinearises the one-dimensional affine subscripts of one array: all
/// accesses are split along the same chain of strides (`1`, `n`, `n*m`) when
/// every loop variable's coefficient is a stride, and the ranges of the
/// inner dimensions provably stay within their extent (from the loop bounds:
/// `j + c` with `j` from `L` to `n - U` stays in `[0, n)` when `L + c >= 0`
/// and `c <= U - 1`... see [`fits`]). `None` when it cannot prove that.
pub fn delinearise(
    subs: &[Poly],
    loops: &BTreeMap<String, Loop>,
    loop_vars: &BTreeSet<String>,
) -> Option<Vec<Vec<Poly>>> {
    delinearise_with_extents(subs, loops, loop_vars).map(|(dims, _)| dims)
}

/// [`delinearise`], with the extents of the inner dimensions it found
/// (outermost first: `a[(k*n + i)*m + j]` gives `n`, `m`); the outermost
/// dimension's extent is not known from the subscripts.
pub fn delinearise_with_extents(
    subs: &[Poly],
    loops: &BTreeMap<String, Loop>,
    loop_vars: &BTreeSet<String>,
) -> Option<(Vec<Vec<Poly>>, Vec<String>)> {
    // The strides: monomials' non-loop-variable parts that multiply a loop variable.
    let mut strides: BTreeSet<Vec<String>> = BTreeSet::new();
    for p in subs {
        for m in p.0.keys() {
            let (var, rest) = split_monomial(m, loop_vars);
            if var.is_some() {
                strides.insert(rest);
            }
        }
    }
    if strides.len() < 2 {
        return None;
    }
    // A chain: each stride is the previous times one more symbol.
    let mut chain: Vec<Vec<String>> = strides.into_iter().collect();
    chain.sort_by_key(|s| s.len());
    if !chain[0].is_empty() {
        return None;
    }
    let mut extents = Vec::new();
    for w in chain.windows(2) {
        if w[1].len() != w[0].len() + 1 {
            return None;
        }
        let mut extra = w[1].clone();
        for s in &w[0] {
            let i = extra.iter().position(|x| x == s)?;
            extra.remove(i);
        }
        extents.push(extra[0].clone());
    }
    // Split every subscript: a monomial goes to the largest stride dividing it.
    let mut out = Vec::new();
    for p in subs {
        let mut dims: Vec<Poly> = vec![Poly::default(); chain.len()];
        for (m, c) in &p.0 {
            let (var, rest) = split_monomial(m, loop_vars);
            let level = chain.iter().rposition(|s| {
                let mut left = rest.clone();
                s.iter().all(|x| match left.iter().position(|y| y == x) {
                    Some(i) => {
                        left.remove(i);
                        true
                    }
                    None => false,
                })
            })?;
            let mut left = rest.clone();
            for x in &chain[level] {
                let i = left.iter().position(|y| y == x)?;
                left.remove(i);
            }
            // What is left must be constant for inner dimensions (a loop variable
            // times a stride, or a constant times it).
            if !left.is_empty() && level < chain.len() - 1 {
                return None;
            }
            let mut mono: Vec<String> = left;
            mono.extend(var);
            mono.sort();
            dims[level] = dims[level].add(&Poly([(mono, *c)].into_iter().collect()), 1)?;
        }
        // Inner dimensions (all but the outermost) must stay within their extent.
        for (level, extent) in extents.iter().enumerate() {
            if !fits(&dims[level], extent, loops, loop_vars) {
                return None;
            }
        }
        dims.reverse();
        out.push(dims);
    }
    extents.reverse();
    Some((out, extents))
}

/// Whether `var + c` (or a constant `c`) stays in `[0, extent)` over the loop's range.
fn fits(
    p: &Poly,
    extent: &str,
    loops: &BTreeMap<String, Loop>,
    loop_vars: &BTreeSet<String>,
) -> bool {
    let c = p.constant_term();
    let rest = p.without_constant();
    if rest.0.is_empty() {
        return c == 0;
    }
    if rest.0.len() != 1 {
        return false;
    }
    let (m, coef) = rest
        .0
        .iter()
        .next()
        .map(|(m, c)| (m.clone(), *c))
        .unwrap_or_default();
    if coef != 1 || m.len() != 1 || !loop_vars.contains(&m[0]) {
        return false;
    }
    let Some(l) = loops.get(&m[0]) else {
        return false;
    };
    let Expr::Int(lower) = l.lower else {
        return false;
    };
    // upper is `extent - u` (exclusive) or `extent`.
    let u = match &l.upper {
        Expr::Load(r) if r.index.is_empty() && r.name == extent => 0,
        Expr::Bin(BinOp::Sub, a, b) => match (&**a, &**b) {
            (Expr::Load(r), Expr::Int(u)) if r.index.is_empty() && r.name == extent => *u,
            _ => return false,
        },
        _ => return false,
    };
    lower.checked_add(c).is_some_and(|x| x >= 0) && c <= u
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::c::loops::Ref;

    fn var(n: &str) -> Expr {
        Expr::var(n)
    }
    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }
    fn lp(v: &str, lower: i64, upper: Expr) -> Loop {
        Loop::counted(v, lower, upper)
    }

    /// The subscript of `e` in a nest over `vars` that writes no scalar.
    fn sub_in(vars: &[&str], e: &Expr) -> Sub {
        let vars: BTreeSet<String> = vars.iter().map(|s| s.to_string()).collect();
        let written = BTreeSet::new();
        Context {
            loop_vars: &vars,
            written: &written,
        }
        .sub(e)
    }

    #[test]
    fn constant_division_folds_as_c_truncates() {
        // i + 1000 / 2 - 7 % 4 and -7 / 2 (C: -3)
        let e = bin(
            BinOp::Sub,
            bin(
                BinOp::Add,
                var("i"),
                bin(BinOp::Div, Expr::Int(1000), Expr::Int(2)),
            ),
            bin(BinOp::Mod, Expr::Int(7), Expr::Int(4)),
        );
        let Sub::Affine(p) = sub_in(&["i"], &e) else {
            panic!("not affine: {:?}", sub_in(&["i"], &e));
        };
        assert_eq!(p.constant_term(), 497);
        let Sub::Affine(p) = sub_in(&["i"], &bin(BinOp::Div, Expr::Int(-7), Expr::Int(2))) else {
            panic!("not affine");
        };
        assert_eq!(p.as_constant(), Some(-3));
        // Not folded: a division by zero, and a loop variable divided.
        for e in [
            bin(BinOp::Div, Expr::Int(7), Expr::Int(0)),
            bin(BinOp::Div, var("i"), Expr::Int(2)),
        ] {
            assert!(!matches!(sub_in(&["i"], &e), Sub::Affine(_)), "{e}");
        }
    }

    #[test]
    fn linear_subscripts_split_along_their_strides() {
        let vars: BTreeSet<String> = ["i", "j"].iter().map(|s| s.to_string()).collect();
        let written = BTreeSet::new();
        let cx = Context {
            loop_vars: &vars,
            written: &written,
        };
        // a[(i+1)*n + j - 1]
        let e = bin(
            BinOp::Sub,
            bin(
                BinOp::Add,
                bin(
                    BinOp::Mul,
                    bin(BinOp::Add, var("i"), Expr::Int(1)),
                    var("n"),
                ),
                var("j"),
            ),
            Expr::Int(1),
        );
        let Sub::Affine(p) = cx.sub(&e) else { panic!() };
        let mut loops = BTreeMap::new();
        loops.insert(
            "i".to_string(),
            lp("i", 1, bin(BinOp::Sub, var("m"), Expr::Int(1))),
        );
        loops.insert(
            "j".to_string(),
            lp("j", 1, bin(BinOp::Sub, var("n"), Expr::Int(1))),
        );
        let dims = delinearise(std::slice::from_ref(&p), &loops, &vars).expect("provable");
        assert_eq!(
            dims[0][0],
            Poly::symbol("i").add(&Poly::constant(1), 1).unwrap()
        );
        assert_eq!(
            dims[0][1],
            Poly::symbol("j").add(&Poly::constant(-1), 1).unwrap()
        );
        // j from 0: j - 1 may leave the row, so it is not delinearised.
        loops.insert("j".to_string(), lp("j", 0, var("n")));
        assert!(delinearise(&[p], &loops, &vars).is_none());
    }

    #[test]
    fn time_buffers_are_recognised() {
        let vars: BTreeSet<String> = ["i"].iter().map(|s| s.to_string()).collect();
        let written = BTreeSet::new();
        let cx = Context {
            loop_vars: &vars,
            written: &written,
        };
        let e = bin(
            BinOp::Mod,
            bin(BinOp::Add, var("t"), Expr::Int(1)),
            Expr::Int(2),
        );
        assert_eq!(cx.sub(&e), Sub::Modulo("t".into(), 1, 2));
        let and = bin(
            BinOp::BitAnd,
            bin(BinOp::Add, var("t"), Expr::Int(1)),
            Expr::Int(1),
        );
        assert_eq!(cx.sub(&and), Sub::Modulo("t".into(), 1, 2));
        let cast = Expr::Cast(
            "int".into(),
            Box::new(bin(BinOp::Mod, var("t"), Expr::Int(3))),
        );
        assert_eq!(cx.sub(&cast), Sub::Modulo("t".into(), 0, 3));
        let load = Expr::Load(Ref {
            name: "b".into(),
            index: vec![var("i")],
        });
        assert!(matches!(cx.sub(&load), Sub::NonAffine(_)));
    }
}
