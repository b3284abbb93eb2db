//! Running compiled operations on one chunk of a row of points.
//!
//! A chunk is up to [`CHUNK`] consecutive points along the innermost axis. Each
//! [`Op`] is one tight loop over the chunk (which the Rust compiler vectorises),
//! so the cost of dispatching an operation is shared by all points of the
//! chunk. Registers are typed vectors, one file per element type.

use crate::interp::compile::{Access, Kernel, Op, Operand};
use crate::interp::fields::FieldViews;
use crate::interp::regs::{Chunk, RegElem, Regs, CHUNK};
use crate::ir::semantics::{arith, compare, with_elem, Elem, FloatElem};
use crate::ir::{BinaryOp, MathFn, ScalarType, Value};

/// An operand resolved for one chunk.
#[derive(Clone, Copy)]
enum Src<'a, T> {
    Slice(&'a [T]),
    Splat(T),
}

fn src<'a, T: RegElem>(regs: &'a Regs, o: &Operand, len: usize) -> Src<'a, T> {
    match o {
        Operand::Reg(r) => Src::Slice(&T::file(regs)[*r as usize][..len]),
        Operand::Imm(v) => Src::Splat(T::from_value(*v)),
    }
}

#[inline(always)]
fn map1<A: Copy, D: Copy>(dst: &mut [D], a: Src<A>, f: impl Fn(A) -> D) {
    match a {
        Src::Slice(a) => dst.iter_mut().zip(a).for_each(|(d, &x)| *d = f(x)),
        Src::Splat(x) => {
            let v = f(x);
            dst.iter_mut().for_each(|d| *d = v);
        }
    }
}

#[inline(always)]
fn map2<A: Copy, B: Copy, D>(dst: &mut [D], a: Src<A>, b: Src<B>, f: impl Fn(A, B) -> D) {
    match (a, b) {
        (Src::Slice(a), Src::Slice(b)) => dst
            .iter_mut()
            .zip(a.iter().zip(b))
            .for_each(|(d, (&x, &y))| *d = f(x, y)),
        (Src::Slice(a), Src::Splat(y)) => dst.iter_mut().zip(a).for_each(|(d, &x)| *d = f(x, y)),
        (Src::Splat(x), Src::Slice(b)) => dst.iter_mut().zip(b).for_each(|(d, &y)| *d = f(x, y)),
        (Src::Splat(x), Src::Splat(y)) => dst.iter_mut().for_each(|d| *d = f(x, y)),
    }
}

/// Element `i` of a source.
#[inline(always)]
fn at<T: Copy>(s: &Src<T>, i: usize) -> T {
    match s {
        Src::Slice(a) => a[i],
        Src::Splat(x) => *x,
    }
}

/// Runs `compute(dst, regs)` with `dst` register `dst` of type `D` taken out of
/// its file, so that the sources can be borrowed from the same files (the
/// compiler never makes `dst` one of the operands).
#[inline(always)]
fn with_dst<D: RegElem>(
    regs: &mut Regs,
    dst: u32,
    len: usize,
    compute: impl FnOnce(&mut [D], &Regs),
) {
    let mut d = std::mem::take(&mut D::file_mut(regs)[dst as usize]);
    compute(&mut d[..len], regs);
    D::file_mut(regs)[dst as usize] = d;
}

fn arith_op<T: RegElem>(
    regs: &mut Regs,
    op: BinaryOp,
    dst: u32,
    a: &Operand,
    b: &Operand,
    len: usize,
) {
    with_dst::<T>(regs, dst, len, |d, regs| {
        let (a, b) = (src::<T>(regs, a, len), src::<T>(regs, b, len));
        match op {
            BinaryOp::Add => map2(d, a, b, T::add),
            BinaryOp::Sub => map2(d, a, b, T::sub),
            BinaryOp::Mul => map2(d, a, b, T::mul),
            BinaryOp::Div => map2(d, a, b, T::div),
            _ => map2(d, a, b, |x, y| arith(op, x, y)),
        }
    });
}

fn compare_op<T: RegElem>(
    regs: &mut Regs,
    op: BinaryOp,
    dst: u32,
    a: &Operand,
    b: &Operand,
    len: usize,
) {
    with_dst::<i32>(regs, dst, len, |d, regs| {
        let (a, b) = (src::<T>(regs, a, len), src::<T>(regs, b, len));
        match op {
            BinaryOp::Lt => map2(d, a, b, |x, y| (x < y) as i32),
            BinaryOp::Gt => map2(d, a, b, |x, y| (x > y) as i32),
            _ => map2(d, a, b, |x, y| compare(op, x, y) as i32),
        }
    });
}

fn call_op<T: RegElem + FloatElem>(
    regs: &mut Regs,
    func: MathFn,
    dst: u32,
    a: &Operand,
    b: Option<&Operand>,
    len: usize,
) {
    with_dst::<T>(regs, dst, len, |d, regs| {
        let a = src::<T>(regs, a, len);
        match (func, b) {
            (MathFn::Sqrt, None) => map1(d, a, |x| T::call1(MathFn::Sqrt, x)),
            (MathFn::Fabs, None) => map1(d, a, |x| T::call1(MathFn::Fabs, x)),
            (_, None) => map1(d, a, |x| T::call1(func, x)),
            (_, Some(b)) => map2(d, a, src::<T>(regs, b, len), |x, y| T::call2(func, x, y)),
        }
    });
}

/// Runs a kernel's operations on one chunk.
pub(crate) fn run_chunk(kernel: &Kernel, regs: &mut Regs, views: &FieldViews, chunk: &Chunk) {
    let len = chunk.len;
    for op in &kernel.ops {
        match op {
            Op::Load { ty, dst, access } => with_elem!(*ty, T => {
                with_dst::<T>(regs, *dst, len, |d, _| views.load::<T>(access, chunk, d));
            }),
            Op::Store { ty, src: s, access } => with_elem!(*ty, T => {
                store::<T>(regs, views, access, chunk, s);
            }),
            Op::Neg { ty, dst, a } => with_elem!(*ty, T => {
                with_dst::<T>(regs, *dst, len, |d, regs| map1(d, src::<T>(regs, a, len), T::neg));
            }),
            Op::Truth { ty, dst, a, negate } => with_elem!(*ty, T => {
                let negate = *negate;
                with_dst::<i32>(regs, *dst, len, |d, regs| {
                    map1(d, src::<T>(regs, a, len), |x| (x.is_true() ^ negate) as i32)
                });
            }),
            Op::Arith { ty, op, dst, a, b } => {
                with_elem!(*ty, T => arith_op::<T>(regs, *op, *dst, a, b, len))
            }
            Op::Compare { ty, op, dst, a, b } => {
                with_elem!(*ty, T => compare_op::<T>(regs, *op, *dst, a, b, len))
            }
            Op::Logic { and, dst, a, b } => {
                let and = *and;
                with_dst::<i32>(regs, *dst, len, |d, regs| {
                    let (a, b) = (src::<i32>(regs, a, len), src::<i32>(regs, b, len));
                    if and {
                        map2(d, a, b, |x, y| x & y)
                    } else {
                        map2(d, a, b, |x, y| x | y)
                    }
                });
            }
            Op::Select {
                ty,
                dst,
                cond,
                then,
                otherwise,
            } => with_elem!(*ty, T => {
                with_dst::<T>(regs, *dst, len, |d, regs| {
                    let c = src::<i32>(regs, cond, len);
                    let t = src::<T>(regs, then, len);
                    let o = src::<T>(regs, otherwise, len);
                    for (i, d) in d.iter_mut().enumerate() {
                        *d = if at(&c, i) != 0 { at(&t, i) } else { at(&o, i) };
                    }
                });
            }),
            Op::Cast { from, to, dst, a } => with_elem!(*from, A => with_elem!(*to, D => {
                with_dst::<D>(regs, *dst, len, |d, regs| {
                    map1(d, src::<A>(regs, &Operand::Reg(*a), len), D::convert::<A>)
                });
            })),
            Op::Call1 { ty, func, dst, a } => match ty {
                ScalarType::Float => call_op::<f32>(regs, *func, *dst, a, None, len),
                _ => call_op::<f64>(regs, *func, *dst, a, None, len),
            },
            Op::Call2 {
                ty,
                func,
                dst,
                a,
                b,
            } => match ty {
                ScalarType::Float => call_op::<f32>(regs, *func, *dst, a, Some(b), len),
                _ => call_op::<f64>(regs, *func, *dst, a, Some(b), len),
            },
            Op::Copy { ty, dst, src: s } => with_elem!(*ty, T => {
                with_dst::<T>(regs, *dst, len, |d, regs| map1(d, src::<T>(regs, s, len), |x| x));
            }),
        }
    }
}

fn store<T: RegElem>(regs: &Regs, views: &FieldViews, access: &Access, chunk: &Chunk, s: &Operand) {
    match src::<T>(regs, s, chunk.len) {
        Src::Slice(values) => views.store::<T>(access, chunk, values),
        Src::Splat(x) => views.store::<T>(access, chunk, &[x; CHUNK][..chunk.len]),
    }
}

/// The value at each point of a reduction kernel's chunk, folded into `acc` in
/// point order.
pub(crate) fn fold_result<T: RegElem>(
    kernel: &Kernel,
    regs: &Regs,
    len: usize,
    acc: &mut T,
    combine: impl Fn(T, T) -> T,
) {
    let Some(result) = &kernel.result else {
        return;
    };
    match src::<T>(regs, result, len) {
        Src::Slice(values) => {
            for &v in values {
                *acc = combine(*acc, v);
            }
        }
        Src::Splat(v) => {
            for _ in 0..len {
                *acc = combine(*acc, v);
            }
        }
    }
}

/// A [`Value`] of type `T`, for reduction results.
pub(crate) fn value_of<T: RegElem>(v: T) -> Value {
    v.to_value()
}
