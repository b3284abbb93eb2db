//! A checked kernel to the emulator's code: a flat list of stack-machine
//! operations per kernel, so that a thread is a program counter, a stack and
//! its variables, and can stop at `__syncthreads()` and resume there.
//!
//! A call of a `__device__` function is compiled inline, with slots of its own
//! for the function's variables at each call site: the subset has no recursion
//! (a function calls only those defined before it), so a thread needs no call
//! stack, and a function's `return` is a jump to the end of its inlined body.

use crate::front::cuda::ast::{
    BinOp, Builtin, Expr, ExprKind, Function, Kernel, Scalar, Stmt, StmtKind, Type, UnOp,
};
use crate::front::cuda::sema::global_source;
use crate::source::Span;

use super::value::Value;

/// One operation. Stores leave the stored value on the stack (an assignment
/// is an expression); statements pop what their expression left.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// The start of a statement: where threads of a block take turns.
    Statement,
    /// Pushes a constant.
    Push(Value),
    /// Pushes a variable.
    Load(usize),
    /// Converts the top to the variable's type and stores it (keeping it).
    Store(usize, Scalar),
    /// Pushes a built-in index (`threadIdx.x` is `(ThreadIdx, 0)`).
    Builtin(Builtin, usize),
    /// Converts the top.
    Convert(Scalar),
    /// A unary operator on the top.
    Unary(UnOp),
    /// A binary operator on the two top values (of one type).
    Binary(BinOp, usize),
    /// Drops the top.
    Pop,
    /// Copies the top.
    Dup,
    /// Continues at an operation.
    Jump(usize),
    /// Pops a value; continues at the operation when it is false.
    JumpIfFalse(usize),
    /// Calls a math function on the top `arity` values, computing in a type.
    Call(&'static str, Scalar, usize),
    /// Pops an index; pushes the element of a global array.
    LoadGlobal {
        /// The array's parameter slot.
        slot: usize,
        /// Where the read is ([`Code::sites`]).
        site: usize,
        /// The marked read's number, for `__opt__.a[i]`.
        marked: Option<usize>,
    },
    /// Pops a value and an index; stores the value into a global array.
    StoreGlobal {
        /// The array's parameter slot.
        slot: usize,
        /// Where the store is.
        site: usize,
        /// The element type.
        elem: Scalar,
    },
    /// Pops one index per dimension; pushes the flat slot number, checking
    /// each index against its dimension.
    SharedIndex {
        /// The shared array's slot.
        slot: usize,
        /// Where the access is.
        site: usize,
    },
    /// Pops a flat slot number; pushes the shared element.
    LoadShared {
        /// The shared array's slot.
        slot: usize,
        /// Where the read is.
        site: usize,
    },
    /// Pops a value and a flat slot number; stores into shared memory.
    StoreShared {
        /// The shared array's slot.
        slot: usize,
        /// Where the store is.
        site: usize,
        /// The element type.
        elem: Scalar,
        /// The value is a plain global read: the slot now holds that element.
        fills: bool,
    },
    /// `__syncthreads()`.
    Barrier(usize),
    /// A warp shuffle: pops the width, the lane (or delta, or lane mask), the
    /// value (of `ty`) and the mask; waits until every lane of the mask has
    /// reached it, then pushes the value of the source lane.
    Shuffle {
        /// Which shuffle.
        kind: ShuffleKind,
        /// The value's type.
        ty: Scalar,
        /// Where the call is.
        site: usize,
    },
    /// `return`, or the end of the kernel.
    Exit,
}

/// Which lane a shuffle reads, for lane `l` of a segment of `width` lanes
/// starting at `s` (CUDA's definitions; a source outside the segment reads
/// the lane's own value, except for `Index`, which wraps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShuffleKind {
    /// `__shfl_sync(mask, v, src)`: lane `s + src % width`.
    Index,
    /// `__shfl_up_sync(mask, v, d)`: lane `l - d`.
    Up,
    /// `__shfl_down_sync(mask, v, d)`: lane `l + d`.
    Down,
    /// `__shfl_xor_sync(mask, v, m)`: lane `l ^ m`.
    Xor,
}

impl ShuffleKind {
    /// The shuffle a function name calls.
    pub fn from_name(name: &str) -> Option<ShuffleKind> {
        Some(match name {
            "__shfl_sync" => ShuffleKind::Index,
            "__shfl_up_sync" => ShuffleKind::Up,
            "__shfl_down_sync" => ShuffleKind::Down,
            "__shfl_xor_sync" => ShuffleKind::Xor,
            _ => return None,
        })
    }

    /// The lane that `lane` reads given the shuffle's operand and width
    /// (a power of two up to 32); itself where CUDA returns the own value.
    pub fn source(self, lane: u32, operand: i64, width: u32) -> u32 {
        let width = width.clamp(1, 32);
        let start = lane / width * width;
        let src = match self {
            ShuffleKind::Index => start as i64 + operand.rem_euclid(i64::from(width)),
            ShuffleKind::Up => lane as i64 - operand,
            ShuffleKind::Down => lane as i64 + operand,
            ShuffleKind::Xor => lane as i64 ^ operand,
        };
        if src < i64::from(start) || src >= i64::from(start + width) {
            lane
        } else {
            src as u32
        }
    }
}

/// A compiled kernel.
#[derive(Clone, Debug)]
pub struct Code {
    /// The operations; execution starts at 0.
    pub ops: Vec<Op>,
    /// The source place of each `site` number.
    pub sites: Vec<Span>,
    /// Variable slots per thread: the kernel's, then each inlined call's.
    pub slots: usize,
}

/// Compiles a checked kernel.
pub fn compile(kernel: &Kernel) -> Code {
    let mut c = Compiler {
        kernel,
        ops: Vec::new(),
        sites: Vec::new(),
        loops: Vec::new(),
        slots: kernel.slots.len(),
        frame: None,
    };
    c.stmts(&kernel.body);
    c.ops.push(Op::Exit);
    Code {
        ops: c.ops,
        sites: c.sites,
        slots: c.slots,
    }
}

struct Compiler<'a> {
    kernel: &'a Kernel,
    ops: Vec<Op>,
    sites: Vec<Span>,
    /// Per enclosing loop: the `continue` target (patched later when unknown)
    /// and the `break` jumps to patch.
    loops: Vec<(Vec<usize>, Vec<usize>)>,
    /// Slots allotted so far.
    slots: usize,
    /// The device function being inlined, if any.
    frame: Option<Frame>,
}

/// An inlined call being compiled.
struct Frame {
    /// Its first slot.
    base: usize,
    /// The function's result type.
    ret: Scalar,
    /// The `return` jumps to patch to the end of the body.
    returns: Vec<usize>,
}

impl Compiler<'_> {
    /// The thread's slot of variable `slot` of the code being compiled.
    fn var(&self, slot: usize) -> usize {
        slot + self.frame.as_ref().map_or(0, |f| f.base)
    }

    fn function(&self, name: &str) -> Option<&Function> {
        self.kernel.functions.iter().find(|f| f.name == name)
    }

    /// Compiles a call of `function` inline: the arguments into its parameter
    /// slots, then its body, which leaves the result on the stack.
    fn call_inline(&mut self, function: &Function, args: &[Expr]) {
        let base = self.slots;
        self.slots += function.slots.len();
        for (param, arg) in function.slots.iter().zip(args) {
            let ty = match param.ty {
                Type::Scalar(s) => s,
                _ => Scalar::Int,
            };
            self.value(arg, ty);
        }
        for (i, param) in function.slots.iter().enumerate().take(args.len()).rev() {
            let ty = match param.ty {
                Type::Scalar(s) => s,
                _ => Scalar::Int,
            };
            self.emit(Op::Store(base + i, ty));
            self.emit(Op::Pop);
        }
        let outer = self.frame.replace(Frame {
            base,
            ret: function.ret,
            returns: Vec::new(),
        });
        let loops = std::mem::take(&mut self.loops);
        self.stmts(&function.body);
        self.loops = loops;
        let frame = std::mem::replace(&mut self.frame, outer);
        let end = self.here();
        for at in frame.map(|f| f.returns).unwrap_or_default() {
            self.patch(at, end);
        }
    }

    fn site(&mut self, span: Span) -> usize {
        self.sites.push(span);
        self.sites.len() - 1
    }

    fn here(&self) -> usize {
        self.ops.len()
    }

    fn emit(&mut self, op: Op) -> usize {
        self.ops.push(op);
        self.ops.len() - 1
    }

    fn patch(&mut self, at: usize, target: usize) {
        match &mut self.ops[at] {
            Op::Jump(t) | Op::JumpIfFalse(t) => *t = target,
            _ => unreachable!("only jumps are patched"),
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for stmt in stmts {
            self.stmt(stmt);
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        if !matches!(stmt.kind, StmtKind::Block(_) | StmtKind::DeclList(_)) {
            self.emit(Op::Statement);
        }
        match &stmt.kind {
            StmtKind::Local { ty, slot, init, .. } => {
                match init {
                    Some(init) => self.value(init, *ty),
                    None => {
                        self.emit(Op::Push(Value::zero(*ty)));
                    }
                }
                self.emit(Op::Store(self.var(*slot), *ty));
                self.emit(Op::Pop);
            }
            StmtKind::Shared { .. } | StmtKind::Profile(_) => {}
            StmtKind::Expr(expr) => {
                self.expr(expr);
                self.emit(Op::Pop);
            }
            StmtKind::If(cond, then, other) => {
                self.value(cond, Scalar::Bool);
                let skip = self.emit(Op::JumpIfFalse(0));
                self.stmt(then);
                match other {
                    Some(other) => {
                        let end = self.emit(Op::Jump(0));
                        let at = self.here();
                        self.patch(skip, at);
                        self.stmt(other);
                        let at = self.here();
                        self.patch(end, at);
                    }
                    None => {
                        let at = self.here();
                        self.patch(skip, at);
                    }
                }
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                if let Some(init) = init {
                    self.stmt(init);
                }
                self.looped(cond.as_ref(), step.as_ref(), body);
            }
            StmtKind::While(cond, body) => self.looped(Some(cond), None, body),
            StmtKind::Block(items) | StmtKind::DeclList(items) => self.stmts(items),
            StmtKind::Sync => {
                let site = self.site(stmt.span);
                self.emit(Op::Barrier(site));
            }
            StmtKind::Return => {
                self.emit(Op::Exit);
            }
            StmtKind::ReturnValue(value) => {
                let ret = self.frame.as_ref().map_or(Scalar::Int, |f| f.ret);
                self.value(value, ret);
                let at = self.emit(Op::Jump(0));
                if let Some(frame) = &mut self.frame {
                    frame.returns.push(at);
                }
            }
            StmtKind::Break => {
                let at = self.emit(Op::Jump(0));
                if let Some((_, breaks)) = self.loops.last_mut() {
                    breaks.push(at);
                }
            }
            StmtKind::Continue => {
                let at = self.emit(Op::Jump(0));
                if let Some((continues, _)) = self.loops.last_mut() {
                    continues.push(at);
                }
            }
        }
    }

    fn looped(&mut self, cond: Option<&Expr>, step: Option<&Expr>, body: &Stmt) {
        let top = self.emit(Op::Statement);
        let exit = cond.map(|cond| {
            self.value(cond, Scalar::Bool);
            self.emit(Op::JumpIfFalse(0))
        });
        self.loops.push((Vec::new(), Vec::new()));
        self.stmt(body);
        let (continues, breaks) = self.loops.pop().unwrap_or_default();
        let next = self.here();
        for at in continues {
            self.patch(at, next);
        }
        if let Some(step) = step {
            self.expr(step);
            self.emit(Op::Pop);
        }
        self.emit(Op::Jump(top));
        let end = self.here();
        for at in breaks.into_iter().chain(exit) {
            self.patch(at, end);
        }
    }

    /// Compiles `expr` and converts it to `to`.
    fn value(&mut self, expr: &Expr, to: Scalar) {
        self.expr(expr);
        if expr.scalar() != to {
            self.emit(Op::Convert(to));
        }
    }

    fn expr(&mut self, expr: &Expr) {
        match &expr.kind {
            ExprKind::Int(v, s) => {
                self.emit(Op::Push(Value::ULong(*v).convert(*s)));
            }
            ExprKind::Float(v, s) => {
                self.emit(Op::Push(Value::Double(*v).convert(*s)));
            }
            ExprKind::Bool(b) => {
                self.emit(Op::Push(Value::Bool(*b)));
            }
            ExprKind::Var { slot, .. } => {
                self.emit(Op::Load(self.var(*slot)));
            }
            ExprKind::Builtin(b, axis) => {
                self.emit(Op::Builtin(*b, *axis));
            }
            ExprKind::Index {
                slot,
                indices,
                marked,
                ..
            } => {
                let site = self.site(expr.span);
                self.address(*slot, indices, site);
                if self.is_shared(*slot) {
                    self.emit(Op::LoadShared { slot: *slot, site });
                } else {
                    self.emit(Op::LoadGlobal {
                        slot: *slot,
                        site,
                        marked: *marked,
                    });
                }
            }
            ExprKind::Unary(op, operand) => {
                let to = expr.scalar();
                self.value(operand, if *op == UnOp::Not { Scalar::Bool } else { to });
                self.emit(Op::Unary(*op));
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), a, b) => {
                self.value(a, Scalar::Bool);
                let to_rhs = self.emit(Op::JumpIfFalse(0));
                if *op == BinOp::And {
                    self.value(b, Scalar::Bool);
                    let end = self.emit(Op::Jump(0));
                    let at = self.here();
                    self.patch(to_rhs, at);
                    self.emit(Op::Push(Value::Bool(false)));
                    let at = self.here();
                    self.patch(end, at);
                } else {
                    self.emit(Op::Push(Value::Bool(true)));
                    let end = self.emit(Op::Jump(0));
                    let at = self.here();
                    self.patch(to_rhs, at);
                    self.value(b, Scalar::Bool);
                    let at = self.here();
                    self.patch(end, at);
                }
            }
            ExprKind::Binary(op, a, b) => {
                let common = if matches!(op, BinOp::Shl | BinOp::Shr) {
                    expr.scalar()
                } else {
                    Scalar::common(a.scalar(), b.scalar())
                };
                self.value(a, common);
                self.value(b, common);
                let site = self.site(expr.span);
                self.emit(Op::Binary(*op, site));
            }
            ExprKind::Cond(c, a, b) => {
                let to = expr.scalar();
                self.value(c, Scalar::Bool);
                let other = self.emit(Op::JumpIfFalse(0));
                self.value(a, to);
                let end = self.emit(Op::Jump(0));
                let at = self.here();
                self.patch(other, at);
                self.value(b, to);
                let at = self.here();
                self.patch(end, at);
            }
            ExprKind::Assign { op, target, value } => self.assign(*op, target, value, expr.span),
            ExprKind::Step {
                increment,
                prefix,
                target,
            } => {
                let ExprKind::Var { slot, .. } = &target.kind else {
                    return;
                };
                let slot = &self.var(*slot);
                let ty = target.scalar();
                let common = Scalar::common(ty, Scalar::Int);
                self.emit(Op::Load(*slot));
                if !prefix {
                    self.emit(Op::Dup);
                }
                self.emit(Op::Convert(common));
                self.emit(Op::Push(Value::Int(1).convert(common)));
                let site = self.site(expr.span);
                let op = if *increment { BinOp::Add } else { BinOp::Sub };
                self.emit(Op::Binary(op, site));
                self.emit(Op::Store(*slot, ty));
                if !prefix {
                    self.emit(Op::Pop);
                }
            }
            ExprKind::Call { name, args } if self.function(name).is_some() => {
                if let Some(function) = self.function(name).cloned() {
                    self.call_inline(&function, args);
                }
            }
            ExprKind::Call { name, args } if ShuffleKind::from_name(name).is_some() => {
                let ty = expr.scalar();
                let kind = ShuffleKind::from_name(name).unwrap_or(ShuffleKind::Index);
                self.value(&args[0], Scalar::UInt);
                self.value(&args[1], ty);
                self.value(&args[2], Scalar::Long);
                match args.get(3) {
                    Some(width) => self.value(width, Scalar::Long),
                    None => {
                        self.emit(Op::Push(Value::Long(32)));
                    }
                }
                let site = self.site(expr.span);
                self.emit(Op::Shuffle { kind, ty, site });
            }
            ExprKind::Call { name, args } => {
                let types: Vec<Scalar> = args.iter().map(Expr::scalar).collect();
                let ty = crate::front::cuda::sema::math_operand_type(name, &types);
                for arg in args {
                    self.value(arg, ty);
                }
                let name = crate::front::cuda::sema::MATH
                    .iter()
                    .find(|(n, _, _)| n == name)
                    .map_or("fabs", |(n, _, _)| *n);
                self.emit(Op::Call(name, ty, args.len()));
            }
            ExprKind::Cast(to, operand) => self.value(operand, *to),
        }
    }

    fn is_shared(&self, slot: usize) -> bool {
        self.frame.is_none() && matches!(self.kernel.slots[slot].ty, Type::Shared(_))
    }

    /// Pushes what a load or store of `slot[indices]` pops: the index of a
    /// global element, or the flat slot of a shared one.
    fn address(&mut self, slot: usize, indices: &[Expr], site: usize) {
        for index in indices {
            self.value(index, Scalar::Long);
        }
        if self.is_shared(slot) {
            self.emit(Op::SharedIndex { slot, site });
        }
    }

    fn assign(&mut self, op: Option<BinOp>, target: &Expr, value: &Expr, span: Span) {
        let ty = target.scalar();
        let combine = |c: &mut Self| {
            if let Some(op) = op {
                let common = Scalar::common(ty, value.scalar());
                c.emit(Op::Convert(common));
                c.value(value, common);
                let site = c.site(span);
                c.emit(Op::Binary(op, site));
            } else {
                c.expr(value);
            }
        };
        match &target.kind {
            ExprKind::Var { slot, .. } => {
                let slot = self.var(*slot);
                if op.is_some() {
                    self.emit(Op::Load(slot));
                }
                combine(self);
                self.emit(Op::Store(slot, ty));
            }
            ExprKind::Index { slot, indices, .. } => {
                let site = self.site(target.span);
                self.address(*slot, indices, site);
                let shared = self.is_shared(*slot);
                if op.is_some() {
                    self.emit(Op::Dup);
                    self.emit(if shared {
                        Op::LoadShared { slot: *slot, site }
                    } else {
                        Op::LoadGlobal {
                            slot: *slot,
                            site,
                            marked: None,
                        }
                    });
                }
                combine(self);
                if shared {
                    let fills = op.is_none()
                        && global_source(value)
                            .is_some_and(|s| matches!(self.kernel.slots[s].ty, Type::Pointer(_)));
                    self.emit(Op::StoreShared {
                        slot: *slot,
                        site,
                        elem: ty,
                        fills,
                    });
                } else {
                    self.emit(Op::StoreGlobal {
                        slot: *slot,
                        site,
                        elem: ty,
                    });
                }
            }
            _ => {
                // Sema accepts variables and elements only.
                self.expr(value);
            }
        }
    }
}
