//! Affine forms over parameters and loop variables: `c0 + c1*n + c2*i`.
//!
//! Subset bounds, offsets and grid sizes are usually affine in the integer
//! parameters (`n-1`, `2*n`, `Nx-1`), so what holds for every parameter value
//! can often be decided without knowing the values: `(n-1) + 1 - (n-1)` is the
//! constant 1 whatever `n` is. Anything else (`n/2`, `n*m`, a `double`
//! parameter) is not affine and the analyses give up on it.

use std::collections::BTreeMap;

use crate::analysis::access::LoopRange;
use crate::ir::{BinaryOp, ExprKind, LocalId, ParamId, Program, UnaryOp};
use crate::ir::{Expr, Value};

/// A variable of an affine form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Var {
    /// An integer parameter.
    Param(ParamId),
    /// A loop variable.
    Loop(LocalId),
}

/// `constant + sum(coefficient * variable)`, with no zero coefficients.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Affine {
    /// The non-zero coefficients.
    pub terms: BTreeMap<Var, i64>,
    /// The constant term.
    pub constant: i64,
}

impl Affine {
    /// The constant `c`.
    pub fn constant(c: i64) -> Affine {
        Affine {
            terms: BTreeMap::new(),
            constant: c,
        }
    }

    /// The form `1 * var`.
    pub fn var(var: Var) -> Affine {
        Affine {
            terms: BTreeMap::from([(var, 1)]),
            constant: 0,
        }
    }

    /// The form of an integer expression of literals, integer parameters,
    /// constants (followed to their definitions) and local variables (taken as
    /// loop variables), or `None` when it is not affine or may overflow.
    pub fn of_expr(program: &Program, expr: &Expr) -> Option<Affine> {
        if expr.ty.is_float() {
            return None;
        }
        match &expr.kind {
            ExprKind::Literal(Value::Int(v)) => Some(Affine::constant(*v as i64)),
            ExprKind::Literal(Value::Long(v)) => Some(Affine::constant(*v)),
            ExprKind::Param(p) => Some(Affine::var(Var::Param(*p))),
            ExprKind::Const(c) => {
                let constant = program.constants.get(c.0)?;
                Affine::of_expr(program, &constant.value)
            }
            ExprKind::Local(l) => Some(Affine::var(Var::Loop(*l))),
            ExprKind::Cast(a) => Affine::of_expr(program, a),
            ExprKind::Unary(UnaryOp::Neg, a) => Affine::of_expr(program, a)?.scale(-1),
            ExprKind::Binary(op, a, b) => {
                let a = Affine::of_expr(program, a)?;
                let b = Affine::of_expr(program, b)?;
                match op {
                    BinaryOp::Add => a.add(&b),
                    BinaryOp::Sub => a.add(&b.scale(-1)?),
                    BinaryOp::Mul => match (a.as_constant(), b.as_constant()) {
                        (Some(k), _) => b.scale(k),
                        (_, Some(k)) => a.scale(k),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The value when no variable is left.
    pub fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// `self + other`, or `None` on overflow.
    pub fn add(&self, other: &Affine) -> Option<Affine> {
        let mut out = self.clone();
        out.constant = out.constant.checked_add(other.constant)?;
        for (var, c) in &other.terms {
            let entry = out.terms.entry(*var).or_insert(0);
            *entry = entry.checked_add(*c)?;
            if *entry == 0 {
                out.terms.remove(var);
            }
        }
        Some(out)
    }

    /// `self - other`, or `None` on overflow.
    pub fn sub(&self, other: &Affine) -> Option<Affine> {
        self.add(&other.scale(-1)?)
    }

    /// `k * self`, or `None` on overflow.
    pub fn scale(&self, k: i64) -> Option<Affine> {
        if k == 0 {
            return Some(Affine::constant(0));
        }
        let mut terms = BTreeMap::new();
        for (var, c) in &self.terms {
            terms.insert(*var, c.checked_mul(k)?);
        }
        Some(Affine {
            terms,
            constant: self.constant.checked_mul(k)?,
        })
    }

    /// The smallest and the largest value over the given loops (each variable
    /// replaced by the end of its range that minimises, resp. maximises, the
    /// form). Loops that run no iteration leave their variable in place.
    pub fn loop_extremes(&self, loops: &[LoopRange]) -> Option<(Affine, Affine)> {
        let mut min = self.clone();
        let mut max = self.clone();
        for r in loops.iter().filter(|r| r.lo <= r.hi) {
            let Some(&c) = self.terms.get(&Var::Loop(r.var)) else {
                continue;
            };
            let (at_min, at_max) = if c > 0 { (r.lo, r.hi) } else { (r.hi, r.lo) };
            for (form, at) in [(&mut min, at_min), (&mut max, at_max)] {
                form.terms.remove(&Var::Loop(r.var));
                form.constant = form.constant.checked_add(c.checked_mul(at)?)?;
            }
        }
        Some((min, max))
    }
}

/// Lower bounds of parameters known to hold wherever a fact applies (a grid
/// size is at least 1 in every run; a part's subset bounds satisfy `lo <= hi`
/// whenever the part runs), used to prove a form positive without values.
#[derive(Clone, Debug, Default)]
pub struct LowerBounds {
    bounds: BTreeMap<Var, i64>,
}

impl LowerBounds {
    /// Records `form >= 0`: when the form has one variable `a*v + b` with
    /// `a > 0`, this gives `v >= ceil(-b / a)`; other forms are ignored.
    pub fn assume_non_negative(&mut self, form: &Affine) {
        let mut terms = form.terms.iter();
        let (Some((&var, &a)), None) = (terms.next(), terms.next()) else {
            return;
        };
        if a <= 0 {
            return;
        }
        let Some(bound) = form
            .constant
            .checked_neg()
            .map(|b| b.div_euclid(a) + i64::from(b.rem_euclid(a) != 0))
        else {
            return;
        };
        let entry = self.bounds.entry(var).or_insert(bound);
        *entry = (*entry).max(bound);
    }

    /// The smallest value `form` can take, when every variable has a positive
    /// coefficient and a known lower bound (`None` otherwise, or on overflow).
    pub fn minimum(&self, form: &Affine) -> Option<i64> {
        let mut min = form.constant;
        for (var, &c) in &form.terms {
            if c <= 0 {
                return None;
            }
            min = min.checked_add(c.checked_mul(*self.bounds.get(var)?)?)?;
        }
        Some(min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancels_parameters() {
        let n = Affine::var(Var::Param(ParamId(0)));
        let hi = n.add(&Affine::constant(-1)).unwrap();
        let reach = hi.add(&Affine::constant(1)).unwrap();
        let last = n.sub(&Affine::constant(1)).unwrap();
        assert_eq!(reach.sub(&last).unwrap().as_constant(), Some(1));
        assert_eq!(reach.as_constant(), None);
    }

    #[test]
    fn loop_extremes_follow_the_sign() {
        let i = Var::Loop(LocalId(0));
        let form = Affine::var(i)
            .scale(-2)
            .unwrap()
            .add(&Affine::constant(1))
            .unwrap();
        let r = LoopRange {
            var: LocalId(0),
            lo: -3,
            hi: 3,
        };
        let (min, max) = form.loop_extremes(&[r]).unwrap();
        assert_eq!(min.as_constant(), Some(-5));
        assert_eq!(max.as_constant(), Some(7));
    }

    #[test]
    fn lower_bounds_prove_positive_forms() {
        let n = Var::Param(ParamId(0));
        let form = |c: i64, k: i64| Affine {
            terms: BTreeMap::from([(n, k)]),
            constant: c,
        };
        let mut facts = LowerBounds::default();
        // `n - 2 >= 0` (a subset [1:n-1] runs): n >= 2, so `n - 1` is at least 1.
        facts.assume_non_negative(&form(-2, 1));
        assert_eq!(facts.minimum(&form(-1, 1)), Some(1));
        // `2n - 3 >= 0`: n >= 2 (rounded up); the stronger bound is kept.
        facts.assume_non_negative(&form(-3, 2));
        facts.assume_non_negative(&form(5, 1));
        assert_eq!(facts.minimum(&form(0, 1)), Some(2));
        // A negative coefficient or an unknown variable proves nothing.
        assert_eq!(facts.minimum(&form(10, -1)), None);
        assert_eq!(LowerBounds::default().minimum(&form(0, 1)), None);
    }
}
