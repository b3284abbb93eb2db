//! The value of a constant integer expression of the C loop IR (`N - 1`,
//! `(20 % 2)`, `-4 / 3`): one folder for every part of `map` that needs a
//! loop bound, an extent or a subscript as a number, so that they all agree.
//!
//! The folder follows C's semantics for the operations it folds and refuses
//! (returns `None`) wherever C would not give a defined value:
//!
//! - `+`, `-`, `*` and unary `-` in 64-bit signed arithmetic (the IR's
//!   literals are `i64`, C's `long long`); a result outside that range is not
//!   folded, since signed overflow is undefined in C. The IR does not record
//!   a literal's C type, so no narrower `int` wrap-around or unsigned
//!   arithmetic is modelled: a value is folded only when it is exact.
//! - `/` truncates toward zero and `%` takes the sign of the dividend (C99),
//!   so `-7 / 2` is `-3` and `-7 % 2` is `-1`.
//! - Division or remainder by zero is not folded, nor `i64::MIN / -1` and
//!   `i64::MIN % -1` (their quotient overflows).
//!
//! Anything else (a variable, a call, a comparison, a shift, a cast) is not
//! a constant here.

use super::loops::{BinOp, Expr};

/// The value of `e` when it is a constant integer expression, or `None`.
pub fn constant(e: &Expr) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::Unary('-', a) => constant(a)?.checked_neg(),
        Expr::Bin(op, a, b) => {
            let (a, b) = (constant(a)?, constant(b)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                // `checked_div` and `checked_rem` truncate toward zero and
                // refuse a zero divisor and `MIN / -1`, as C leaves them undefined.
                BinOp::Div => a.checked_div(b),
                BinOp::Mod => a.checked_rem(b),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: i64) -> Expr {
        Expr::Int(v)
    }

    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    fn neg(a: Expr) -> Expr {
        Expr::Unary('-', Box::new(a))
    }

    #[test]
    fn arithmetic_folds() {
        assert_eq!(constant(&bin(BinOp::Add, int(2), int(3))), Some(5));
        assert_eq!(constant(&bin(BinOp::Sub, int(2), int(3))), Some(-1));
        assert_eq!(constant(&bin(BinOp::Mul, int(4), neg(int(3)))), Some(-12));
        assert_eq!(constant(&neg(bin(BinOp::Sub, int(1), int(9)))), Some(8));
    }

    #[test]
    fn division_truncates_toward_zero() {
        assert_eq!(constant(&bin(BinOp::Div, int(7), int(2))), Some(3));
        assert_eq!(constant(&bin(BinOp::Div, neg(int(7)), int(2))), Some(-3));
        assert_eq!(constant(&bin(BinOp::Div, int(7), neg(int(2)))), Some(-3));
        assert_eq!(
            constant(&bin(BinOp::Div, neg(int(7)), neg(int(2)))),
            Some(3)
        );
    }

    #[test]
    fn the_remainder_takes_the_sign_of_the_dividend() {
        assert_eq!(constant(&bin(BinOp::Mod, int(20), int(2))), Some(0));
        assert_eq!(constant(&bin(BinOp::Mod, int(7), int(3))), Some(1));
        assert_eq!(constant(&bin(BinOp::Mod, neg(int(7)), int(3))), Some(-1));
        assert_eq!(constant(&bin(BinOp::Mod, int(7), neg(int(3)))), Some(1));
    }

    #[test]
    fn division_by_zero_is_not_folded() {
        assert_eq!(constant(&bin(BinOp::Div, int(1), int(0))), None);
        assert_eq!(
            constant(&bin(BinOp::Mod, int(1), bin(BinOp::Sub, int(2), int(2)))),
            None
        );
    }

    #[test]
    fn overflow_is_not_folded() {
        assert_eq!(constant(&bin(BinOp::Add, int(i64::MAX), int(1))), None);
        assert_eq!(constant(&bin(BinOp::Sub, int(i64::MIN), int(1))), None);
        assert_eq!(constant(&bin(BinOp::Mul, int(i64::MAX), int(2))), None);
        assert_eq!(constant(&neg(int(i64::MIN))), None);
        assert_eq!(constant(&bin(BinOp::Div, int(i64::MIN), int(-1))), None);
        assert_eq!(constant(&bin(BinOp::Mod, int(i64::MIN), int(-1))), None);
    }

    #[test]
    fn other_expressions_are_not_constants() {
        let n = Expr::Unsupported("n".into());
        assert_eq!(constant(&bin(BinOp::Add, n, int(1))), None);
        assert_eq!(constant(&bin(BinOp::Shl, int(1), int(2))), None);
        assert_eq!(constant(&bin(BinOp::Lt, int(1), int(2))), None);
        assert_eq!(constant(&Expr::Unary('!', Box::new(int(0)))), None);
    }
}
