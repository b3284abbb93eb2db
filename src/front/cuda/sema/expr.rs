//! Expressions of the CUDA subset: constants, values and their types, the
//! targets of assignments, and KaniCUDA's marked reads.

use crate::diag::Diagnostic;
use crate::front::suggest::closest;
use crate::source::Span;

use super::super::ast::{
    BinOp, Builtin, Candidate, ChosenSlot, Expr, ExprKind, MarkedRead, Scalar, Type, UnOp,
    UNRESOLVED,
};
use super::{is_integer, math_type, Checked, Checker, MATH, SHUFFLES};

impl Checker {
    /// Evaluates a constant integer expression (a shared array's size).
    pub(super) fn constant(&mut self, expr: &mut Expr) -> Checked<i64> {
        let fail = || {
            Diagnostic::error(
                "a shared array's size must be a constant integer",
                expr.span,
            )
            .with_help("write a number or a `#define`d constant (or give it with `-D NAME=VALUE`)")
        };
        let value = match &mut expr.kind {
            ExprKind::Int(v, _) => i64::try_from(*v).map_err(|_| fail())?,
            ExprKind::Unary(UnOp::Neg, e) => -self.constant(e)?,
            ExprKind::Unary(UnOp::Plus, e) => self.constant(e)?,
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.constant(a)?, self.constant(b)?);
                let r = match op {
                    BinOp::Add => x.checked_add(y),
                    BinOp::Sub => x.checked_sub(y),
                    BinOp::Mul => x.checked_mul(y),
                    BinOp::Div => x.checked_div(y),
                    BinOp::Rem => x.checked_rem(y),
                    _ => None,
                };
                r.ok_or_else(fail)?
            }
            ExprKind::Var { name, .. } if self.lookup(name).is_none() => {
                return Err(self.unknown(&name.clone(), expr.span))
            }
            _ => return Err(fail()),
        };
        expr.ty = Type::Scalar(Scalar::Int);
        Ok(value)
    }

    /// Checks an expression that must give a scalar value.
    pub(super) fn value(&mut self, expr: &mut Expr) -> Checked<Scalar> {
        let ty = self.expr(expr)?;
        match ty {
            Type::Scalar(s) => Ok(s),
            Type::Pointer(_) | Type::Shared(_) => {
                Err(Diagnostic::error("an array is used as a value", expr.span)
                    .with_help("index it, as in `a[i]` (pointer arithmetic is outside the subset)"))
            }
            Type::Void => Err(Diagnostic::error("this has no value", expr.span)
                .with_help("use it as a statement of its own")),
        }
    }

    pub(super) fn integer(&mut self, expr: &mut Expr, what: &str) -> Checked<Scalar> {
        let s = self.value(expr)?;
        if !is_integer(s) {
            return Err(
                Diagnostic::error(format!("{what} is a `{s}`, not an integer"), expr.span)
                    .with_help("convert it with a cast, as in `(int)x`"),
            );
        }
        Ok(s)
    }

    pub(super) fn expr(&mut self, expr: &mut Expr) -> Checked<Type> {
        let span = expr.span;
        let ty = match &mut expr.kind {
            ExprKind::Int(_, s) | ExprKind::Float(_, s) => Type::Scalar(*s),
            ExprKind::Bool(_) => Type::Scalar(Scalar::Bool),
            ExprKind::Var { name, slot } => {
                let Some(found) = self.lookup(name) else {
                    return Err(self.unknown(name, span));
                };
                *slot = found;
                self.slots[found].0.ty
            }
            ExprKind::Builtin(..) => Type::Scalar(Scalar::UInt),
            ExprKind::Index {
                array,
                slot,
                indices,
                marked,
            } => self.index_type(array, slot, indices, marked, span)?,
            ExprKind::Unary(op, operand) => {
                let s = self.value(operand)?;
                match op {
                    UnOp::Not => Type::Scalar(Scalar::Bool),
                    UnOp::BitNot if !is_integer(s) => {
                        return Err(Diagnostic::error("`~` of a floating value", span)
                            .with_help("`~` takes integers"))
                    }
                    _ => Type::Scalar(Scalar::common(s, Scalar::Int)),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.value(a)?, self.value(b)?);
                if op.is_integer_only() && (!is_integer(x) || !is_integer(y)) {
                    return Err(Diagnostic::error(
                        format!("`{}` of a floating value", op.symbol()),
                        span,
                    )
                    .with_help(format!(
                        "`{}` takes integers; use `fmodf`/`fmod` for a floating remainder",
                        op.symbol()
                    )));
                }
                if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) {
                    Type::Scalar(Scalar::Bool)
                } else if matches!(op, BinOp::Shl | BinOp::Shr) {
                    Type::Scalar(Scalar::common(x, Scalar::Int))
                } else {
                    Type::Scalar(Scalar::common(x, y))
                }
            }
            ExprKind::Cond(c, a, b) => {
                self.value(c)?;
                let (x, y) = (self.value(a)?, self.value(b)?);
                Type::Scalar(if x == Scalar::Bool && y == Scalar::Bool {
                    Scalar::Bool
                } else {
                    Scalar::common(x, y)
                })
            }
            ExprKind::Assign { op, target, value } => self.assign_type(*op, target, value, span)?,
            ExprKind::Step { target, .. } => {
                if !matches!(target.kind, ExprKind::Var { .. }) {
                    return Err(Diagnostic::error(
                        "`++`/`--` of something that is not a variable",
                        span,
                    )
                    .with_help("write `a[i] += 1` for an element"));
                }
                Type::Scalar(self.target(target)?)
            }
            ExprKind::Call { name, args } if self.functions.iter().any(|f| f.name == *name) => {
                self.user_call_type(name, args, span)?
            }
            ExprKind::Call { name, args } if SHUFFLES.contains(&name.as_str()) => {
                self.shuffle_type(name, args, span)?
            }
            ExprKind::Call { name, args } => self.math_call_type(name, args, span)?,
            ExprKind::Cast(s, operand) => {
                self.value(operand)?;
                Type::Scalar(*s)
            }
        };
        expr.ty = ty;
        Ok(ty)
    }

    /// Checks an element read `array[indices]`; returns the element's type.
    fn index_type(
        &mut self,
        array: &str,
        slot: &mut usize,
        indices: &mut [Expr],
        marked: &mut Option<usize>,
        span: Span,
    ) -> Checked<Type> {
        let Some(found) = self.lookup(array) else {
            return Err(self.unknown(array, span));
        };
        *slot = found;
        let info = self.slots[found].0.clone();
        for index in indices.iter_mut() {
            self.integer(index, "an index")?;
        }
        let elem = match info.ty {
            Type::Pointer(e) => {
                if indices.len() != 1 {
                    return Err(Diagnostic::error(
                        format!(
                            "`{array}` is a pointer, indexed with {} indices",
                            indices.len()
                        ),
                        span,
                    )
                    .with_help(format!(
                        "index it once with the flat index, as in `{array}[i * n + j]`"
                    )));
                }
                e
            }
            Type::Shared(e) => {
                if marked.is_some() {
                    return Err(Diagnostic::error(
                        format!("`__opt__` marks a read of the shared array `{array}`"),
                        span,
                    )
                    .with_help("mark reads of global arrays (pointer parameters) only"));
                }
                if indices.len() != info.dims.len() {
                    return Err(Diagnostic::error(
                        format!(
                            "`{array}` has {} dimensions, indexed with {}",
                            info.dims.len(),
                            indices.len()
                        ),
                        span,
                    )
                    .with_help("give one index per dimension"));
                }
                e
            }
            Type::Scalar(_) | Type::Void => {
                return Err(
                    Diagnostic::error(format!("`{array}` is not an array"), span)
                        .with_help("index pointer parameters and `__shared__` arrays only"),
                )
            }
        };
        if marked.is_some() {
            *marked = Some(self.mark(array, found, span)?);
        }
        Ok(Type::Scalar(elem))
    }

    /// Checks an assignment and records stores into shared arrays.
    fn assign_type(
        &mut self,
        op: Option<BinOp>,
        target: &mut Expr,
        value: &mut Expr,
        span: Span,
    ) -> Checked<Type> {
        let t = self.target(target)?;
        let v = self.value(value)?;
        if let Some(op) = op {
            if op.is_integer_only() && (!is_integer(t) || !is_integer(v)) {
                return Err(Diagnostic::error(
                    format!("`{}=` of a floating value", op.symbol()),
                    span,
                )
                .with_help("this operator takes integers"));
            }
        }
        if let ExprKind::Index { slot, .. } = &target.kind {
            if matches!(self.slots[*slot].0.ty, Type::Shared(_)) {
                self.shared_stores.entry(*slot).or_insert(span);
                if let Some(source) =
                    global_source(value).filter(|&s| matches!(self.slots[s].0.ty, Type::Pointer(_)))
                {
                    self.filled_from.entry(source).or_insert(*slot);
                }
            }
        }
        Ok(Type::Scalar(t))
    }

    /// Checks a call of one of the file's device functions.
    fn user_call_type(&mut self, name: &str, args: &mut [Expr], span: Span) -> Checked<Type> {
        let Some(function) = self.functions.iter().find(|f| f.name == *name).cloned() else {
            return Err(Diagnostic::error("internal: function vanished", span));
        };
        if args.len() != function.params.len() {
            return Err(Diagnostic::error(
                format!(
                    "`{name}` takes {} argument(s), given {}",
                    function.params.len(),
                    args.len()
                ),
                span,
            )
            .with_help("pass one value per parameter"));
        }
        for arg in args.iter_mut() {
            self.value(arg)?;
        }
        Ok(Type::Scalar(function.ret))
    }

    /// Checks a warp shuffle: integer mask, lane and width around the shuffled value.
    fn shuffle_type(&mut self, name: &str, args: &mut [Expr], span: Span) -> Checked<Type> {
        if !(3..=4).contains(&args.len()) {
            return Err(Diagnostic::error(
                format!("`{name}` takes 3 or 4 arguments, given {}", args.len()),
                span,
            )
            .with_help(format!(
                "write `{name}(mask, value, lane)` (and optionally a width)"
            )));
        }
        let mut value = Scalar::Int;
        for (i, arg) in args.iter_mut().enumerate() {
            if i == 1 {
                value = Scalar::common(self.value(arg)?, Scalar::Int);
            } else {
                self.integer(arg, "a shuffle's mask, lane and width")?;
            }
        }
        Ok(Type::Scalar(value))
    }

    /// Checks a call of a math function of the subset.
    fn math_call_type(&mut self, name: &str, args: &mut [Expr], span: Span) -> Checked<Type> {
        let Some(&(_, _, arity)) = MATH.iter().find(|(n, _, _)| *n == name) else {
            let near = closest(name, MATH.iter().map(|(n, _, _)| *n));
            let mut diag = Diagnostic::error(
                format!("`{name}` is not a function of the CUDA subset"),
                span,
            );
            diag = diag.with_help(match near {
                Some(near) => format!("did you mean `{near}`? (the subset calls math functions only)"),
                None => "the subset calls math functions only (`sqrtf`, `fabs`, `min`, ...); inline device functions".to_string(),
            });
            return Err(diag);
        };
        if args.len() != arity {
            return Err(Diagnostic::error(
                format!("`{name}` takes {arity} argument(s), given {}", args.len()),
                span,
            )
            .with_help(format!("call it with {arity} argument(s)")));
        }
        let mut types = Vec::new();
        for arg in args.iter_mut() {
            types.push(self.value(arg)?);
        }
        Ok(Type::Scalar(math_type(name, &types)))
    }

    /// Checks an assignment target; returns its type.
    pub(super) fn target(&mut self, target: &mut Expr) -> Checked<Scalar> {
        let span = target.span;
        if let ExprKind::Index {
            marked: Some(_),
            array,
            ..
        } = &target.kind
        {
            return Err(
                Diagnostic::error(format!("`__opt__.{array}[...]` is stored into"), span)
                    .with_help("mark reads of global memory only; remove `__opt__.` here"),
            );
        }
        let s = self.value(target)?;
        let slot = match &target.kind {
            ExprKind::Var { slot, .. } | ExprKind::Index { slot, .. } => *slot,
            _ => {
                return Err(Diagnostic::error("this cannot be assigned to", span)
                    .with_help("assign to a variable or an array element"))
            }
        };
        let (info, read_only) = &self.slots[slot];
        if *read_only {
            return Err(
                Diagnostic::error(format!("`{}` is `const`", info.name), span)
                    .with_secondary(info.span, "declared here")
                    .with_help("remove `const` from its declaration, or store elsewhere"),
            );
        }
        Ok(s)
    }

    /// Records a marked read, resolving the candidates of `profile` as seen here.
    pub(super) fn mark(&mut self, array: &str, slot: usize, span: Span) -> Checked<usize> {
        let text = format!("__opt__.{array}[...]");
        let Some(profile) = self.profile.clone() else {
            return Err(Diagnostic::error(format!("marked read `{text}` without a `profile`"), span)
                .with_help("name the candidate variables first, as in `profile(\"threadIdx.x i j\");` at the kernel's start"));
        };
        let mut candidates = Vec::new();
        for (name, name_span) in &profile {
            let candidate = if let Some((base, axis)) = name.split_once('.') {
                let builtin = Builtin::from_name(base);
                let axis = ["x", "y", "z"].iter().position(|a| *a == axis);
                match (builtin, axis) {
                    (Some(b), Some(a)) => Candidate::Builtin(b, a),
                    _ => {
                        return Err(Diagnostic::error(
                            format!("`profile` names `{name}`, which is not a built-in"),
                            *name_span,
                        )
                        .with_help("candidates are variables or `threadIdx.x`-style built-ins"))
                    }
                }
            } else {
                match self.lookup(name) {
                    Some(found) if matches!(self.slots[found].0.ty, Type::Scalar(s) if is_integer(s)) => {
                        Candidate::Slot(found)
                    }
                    Some(_) => {
                        return Err(Diagnostic::error(
                            format!("`profile` names `{name}`, which is not an integer variable"),
                            *name_span,
                        )
                        .with_help("candidates must be integer variables"))
                    }
                    None => {
                        return Err(Diagnostic::error(
                            format!("`profile` names `{name}`, which is not declared before the marked read"),
                            *name_span,
                        )
                        .with_secondary(span, "the marked read")
                        .with_help("name a variable visible at every marked read, or declare it earlier"))
                    }
                }
            };
            candidates.push(candidate);
        }
        let (shared, chosen) = match self.chosen.iter().position(|(s, _)| *s == span) {
            Some(at) => {
                let (_, chosen) = self.chosen.remove(at);
                let (shared, chosen) = self.check_chosen(chosen, &candidates)?;
                (shared, Some(chosen))
            }
            None => (usize::MAX, None),
        };
        self.marked.push(MarkedRead {
            text,
            span,
            array: slot,
            shared,
            candidate_names: profile.iter().map(|(n, _)| n.clone()).collect(),
            candidates,
            chosen,
        });
        Ok(self.marked.len() - 1)
    }

    /// Checks the chosen slot of `__opt__(a[i], sb[idx])`: a shared array
    /// indexed once per dimension by integers that synth can compute from the
    /// candidates' profiled values. Returns the array's slot.
    fn check_chosen(
        &mut self,
        chosen: ChosenSlot,
        candidates: &[Candidate],
    ) -> Checked<(usize, ChosenSlot)> {
        let mut read = Expr::new(
            ExprKind::Index {
                array: chosen.shared.clone(),
                slot: UNRESOLVED,
                indices: chosen.indices,
                marked: None,
            },
            chosen.span,
        );
        self.value(&mut read)?;
        let ExprKind::Index { slot, indices, .. } = read.kind else {
            return Err(
                Diagnostic::error("a chosen slot that is not an array read", chosen.span)
                    .with_help("write the slot as in `__opt__(in[i], sb[j])`"),
            );
        };
        if !matches!(self.slots[slot].0.ty, Type::Shared(_)) {
            return Err(Diagnostic::error(
                format!("`{}` is not a `__shared__` array", chosen.shared),
                chosen.span,
            )
            .with_help(
                "name the shared array whose slot holds the element, as in `__opt__(in[i], sb[j])`",
            ));
        }
        for index in &indices {
            computable(index, candidates, &self.slots)?;
        }
        Ok((slot, ChosenSlot { indices, ..chosen }))
    }
}

/// Whether synth can compute `index` on each profiled row: integer
/// arithmetic over the `profile` candidates and constants.
fn computable(
    index: &Expr,
    candidates: &[Candidate],
    slots: &[(super::SlotInfo, bool)],
) -> Checked<()> {
    let not_candidate = |name: &str| {
        Diagnostic::error(
            format!("`{name}` in the chosen slot is not a candidate of `profile(\"...\")`"),
            index.span,
        )
        .with_help(format!(
            "add `{name}` to `profile(\"...\")`, so that synth can compute the slot on every profiled read"
        ))
    };
    match &index.kind {
        ExprKind::Int(..) => Ok(()),
        ExprKind::Var { name, slot } => {
            if candidates.contains(&Candidate::Slot(*slot)) {
                Ok(())
            } else {
                Err(not_candidate(slots.get(*slot).map_or(name, |s| &s.0.name)))
            }
        }
        ExprKind::Builtin(b, axis) => {
            if candidates.contains(&Candidate::Builtin(*b, *axis)) {
                Ok(())
            } else {
                Err(not_candidate(&format!("{}.{}", b.name(), ["x", "y", "z"][*axis])))
            }
        }
        ExprKind::Unary(UnOp::Neg | UnOp::Plus, a) | ExprKind::Cast(_, a) => {
            computable(a, candidates, slots)
        }
        ExprKind::Binary(
            BinOp::Add
            | BinOp::Sub
            | BinOp::Mul
            | BinOp::Div
            | BinOp::Rem
            | BinOp::Shl
            | BinOp::Shr
            | BinOp::BitAnd
            | BinOp::BitOr
            | BinOp::BitXor,
            a,
            b,
        ) => {
            computable(a, candidates, slots)?;
            computable(b, candidates, slots)
        }
        _ => Err(Diagnostic::error(
            "the chosen slot's index is more than synth computes from the profile",
            index.span,
        )
        .with_help("write it with `+ - * / %`, shifts and bit operations over the candidates of `profile(\"...\")` and constants")),
    }
}

/// The global array (its slot) that a stored value is read from, when the
/// value is a plain read `a[i]` (possibly cast): the store "fills" the shared
/// slot with that element.
pub fn global_source(value: &Expr) -> Option<usize> {
    match &value.kind {
        ExprKind::Index {
            slot,
            marked: None,
            indices,
            ..
        } if indices.len() == 1 && value.ty != Type::Void => Some(*slot),
        ExprKind::Cast(_, inner) => global_source(inner),
        _ => None,
    }
}
