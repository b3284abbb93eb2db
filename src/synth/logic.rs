//! Logic expressions: comparisons of a variable with an arithmetic expression
//! (`threadIdx.x < blockDim.x - 1`), joined by `&&` and `||`; and the row sets
//! (bit sets over the profiled rows) the guard search combines them with.

use super::arith::{Expr, Unit};

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// Every operator, in search order.
    pub const ALL: [CmpOp; 6] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Gt,
        CmpOp::Le,
        CmpOp::Ge,
    ];

    /// Whether swapping the operands keeps the meaning.
    pub fn is_symmetric(self) -> bool {
        matches!(self, CmpOp::Eq | CmpOp::Ne)
    }

    /// The operator with the operands swapped: `a < b` is `b > a`.
    pub fn mirror(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Ge => CmpOp::Le,
            symmetric => symmetric,
        }
    }

    /// Applies the comparison.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        }
    }

    /// The operator as C writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            CmpOp::Eq => "==",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        }
    }
}

/// A guard: true where the shared slot holds the element read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Guard {
    /// Every profiled row has the slot.
    True,
    /// No profiled row has it.
    False,
    /// `candidate op expression`.
    Cmp {
        /// The candidate on the left, by its position in the profile.
        lhs: usize,
        /// The comparison.
        op: CmpOp,
        /// The right side.
        rhs: Expr,
    },
    /// Both hold.
    And(Box<Guard>, Box<Guard>),
    /// Either holds.
    Or(Box<Guard>, Box<Guard>),
}

impl Guard {
    /// The guard's value on a row of candidate values.
    pub fn eval(&self, values: &[i64]) -> bool {
        match self {
            Guard::True => true,
            Guard::False => false,
            Guard::Cmp { lhs, op, rhs } => op.holds(Unit::Var(*lhs).eval(values), rhs.eval(values)),
            Guard::And(a, b) => a.eval(values) && b.eval(values),
            Guard::Or(a, b) => a.eval(values) || b.eval(values),
        }
    }

    /// Its size in units: each comparison's left side and right side.
    pub fn size(&self) -> usize {
        match self {
            Guard::True | Guard::False => 0,
            Guard::Cmp { rhs, .. } => 1 + rhs.size(),
            Guard::And(a, b) | Guard::Or(a, b) => a.size() + b.size(),
        }
    }
}

/// A set of profiled rows, one bit per row.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowSet {
    words: Vec<u64>,
}

impl RowSet {
    /// The rows whose flag is set.
    pub fn from_flags(flags: &[bool]) -> RowSet {
        let mut words = vec![0u64; flags.len().div_ceil(64)];
        for (row, _) in flags.iter().enumerate().filter(|(_, &f)| f) {
            words[row / 64] |= 1 << (row % 64);
        }
        RowSet { words }
    }

    /// Whether every row of `self` is in `other`.
    pub fn is_subset(&self, other: &RowSet) -> bool {
        self.words
            .iter()
            .zip(&other.words)
            .all(|(a, b)| a & !b == 0)
    }

    /// The rows in both.
    pub fn and(&self, other: &RowSet) -> RowSet {
        RowSet {
            words: self
                .words
                .iter()
                .zip(&other.words)
                .map(|(a, b)| a & b)
                .collect(),
        }
    }

    /// The rows in either.
    pub fn or(&self, other: &RowSet) -> RowSet {
        RowSet {
            words: self
                .words
                .iter()
                .zip(&other.words)
                .map(|(a, b)| a | b)
                .collect(),
        }
    }

    /// Whether `self ∧ other` (or `self ∨ other` with `or`) equals `target`,
    /// without building the set.
    pub fn combines_to(&self, other: &RowSet, or: bool, target: &RowSet) -> bool {
        self.words
            .iter()
            .zip(&other.words)
            .zip(&target.words)
            .all(|((a, b), t)| if or { a | b == *t } else { a & b == *t })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_evaluate_like_c() {
        // x != 0 && y < x + 2
        let g = Guard::And(
            Box::new(Guard::Cmp {
                lhs: 0,
                op: CmpOp::Ne,
                rhs: Expr::unit(Unit::Const(0)),
            }),
            Box::new(Guard::Cmp {
                lhs: 1,
                op: CmpOp::Lt,
                rhs: Expr {
                    terms: vec![
                        crate::synth::Term {
                            negated: false,
                            units: vec![Unit::Var(0)],
                        },
                        crate::synth::Term {
                            negated: false,
                            units: vec![Unit::Const(2)],
                        },
                    ],
                },
            }),
        );
        assert!(g.eval(&[1, 2]));
        assert!(!g.eval(&[0, 0]));
        assert!(!g.eval(&[1, 3]));
        assert_eq!(g.size(), 5);
    }

    #[test]
    fn row_sets_combine() {
        let a = RowSet::from_flags(&[true, true, false, true]);
        let b = RowSet::from_flags(&[true, false, false, true]);
        assert!(b.is_subset(&a) && !a.is_subset(&b));
        assert_eq!(a.and(&b), b);
        assert_eq!(a.or(&b), a);
        assert!(a.combines_to(&b, false, &b));
        assert!(a.combines_to(&b, true, &a));
    }
}
