//! Printing a nest's C statements and expressions as OpenCL C or CUDA
//! source, with the kernel's arrays, flags and staged tiles in view.

use std::collections::{BTreeMap, BTreeSet};

use super::cl_type;
use crate::back::text::integer;
use crate::front::c::loops::{CUnit, Expr, Function, Ref, Stmt};
use crate::map::shared::Tile;
use crate::map::syntax::{lookup, PURE_LIBRARY};

pub(crate) struct Printer<'a> {
    pub(super) extents: &'a BTreeMap<String, (Vec<String>, &'static str)>,
    pub(super) flags: &'a [String],
    pub(super) function: &'a Function,
    pub(super) unit: &'a CUnit,
    /// CUDA keeps C's math names (`sqrtf`); OpenCL overloads them.
    pub(super) cuda: bool,
    /// Arrays read from their tile in local (shared) memory.
    pub(super) staged: &'a BTreeMap<String, Tile>,
    /// Loop variables the kernel declares at its top (declared outside
    /// their loops in C): their loops assign them, not declare them.
    pub(super) declared_in_kernel: &'a BTreeSet<String>,
}

impl<'a> Printer<'a> {
    /// A printer for the body of `function` copied into the kernels (see
    /// [`super::callee`]): no arrays, no flags.
    pub(crate) fn for_function(function: &'a Function, unit: &'a CUnit, cuda: bool) -> Self {
        static NO_EXTENTS: std::sync::OnceLock<BTreeMap<String, (Vec<String>, &'static str)>> =
            std::sync::OnceLock::new();
        static NO_TILES: std::sync::OnceLock<BTreeMap<String, Tile>> = std::sync::OnceLock::new();
        static NO_VARS: std::sync::OnceLock<BTreeSet<String>> = std::sync::OnceLock::new();
        Printer {
            extents: NO_EXTENTS.get_or_init(BTreeMap::new),
            staged: NO_TILES.get_or_init(BTreeMap::new),
            declared_in_kernel: NO_VARS.get_or_init(BTreeSet::new),
            flags: &[],
            function,
            unit,
            cuda,
        }
    }

    pub(crate) fn block(
        &self,
        body: &[Stmt],
        depth: usize,
        out: &mut String,
    ) -> Result<(), String> {
        let pad = "    ".repeat(depth);
        for s in body {
            match s {
                Stmt::Assign(a) => {
                    let op = a.op.map_or(String::new(), |o| o.symbol().to_string());
                    out.push_str(&format!(
                        "{pad}{} {op}= {};\n",
                        self.reference(&a.target),
                        self.expr(&a.value)
                    ));
                }
                Stmt::Decl { name, init, .. } => {
                    let ty = lookup(name, self.function, self.unit)
                        .and_then(|v| cl_type(&v.elem))
                        .ok_or_else(|| format!("the type of `{name}`"))?;
                    match init {
                        Some(e) => out.push_str(&format!("{pad}{ty} {name} = {};\n", self.expr(e))),
                        None => out.push_str(&format!("{pad}{ty} {name};\n")),
                    }
                }
                Stmt::If {
                    cond, then, els, ..
                } => {
                    out.push_str(&format!("{pad}if ({}) {{\n", self.expr(cond)));
                    self.block(then, depth + 1, out)?;
                    if !els.is_empty() {
                        out.push_str(&format!("{pad}}} else {{\n"));
                        self.block(els, depth + 1, out)?;
                    }
                    out.push_str(&format!("{pad}}}\n"));
                }
                Stmt::For(l) => {
                    let ty = if self.declared_in_kernel.contains(&l.var) {
                        String::new()
                    } else {
                        let ty = lookup(&l.var, self.function, self.unit)
                            .and_then(|v| cl_type(&v.elem))
                            .unwrap_or("int");
                        format!("{ty} ")
                    };
                    let header = if l.descending {
                        format!(
                            "{ty}{v} = {}; {v} >= {}; {v}--",
                            self.expr(&l.start()),
                            self.expr(&l.lower),
                            v = l.var
                        )
                    } else {
                        format!(
                            "{ty}{v} = {}; {v} < {}; {v} += {}",
                            self.expr(&l.lower),
                            self.expr(&l.upper),
                            l.step,
                            v = l.var
                        )
                    };
                    out.push_str(&format!("{pad}for ({header}) {{\n"));
                    self.block(&l.body, depth + 1, out)?;
                    out.push_str(&format!("{pad}}}\n"));
                }
                Stmt::Eval { expr: e, .. } => out.push_str(&format!("{pad}{};\n", self.expr(e))),
                // Only in functions copied into the kernels: a nest holds none.
                Stmt::Return(Some(e)) => out.push_str(&format!("{pad}return {};\n", self.expr(e))),
                Stmt::Break => out.push_str(&format!("{pad}break;\n")),
                Stmt::Continue => out.push_str(&format!("{pad}continue;\n")),
                other => return Err(format!("a statement a kernel cannot hold: {other:?}")),
            }
        }
        Ok(())
    }

    fn reference(&self, r: &Ref) -> String {
        if r.index.is_empty() {
            return if self.flags.contains(&r.name) {
                format!("(*{})", r.name)
            } else {
                r.name.clone()
            };
        }
        if let Some(tile) = self.staged.get(&r.name) {
            let index: Vec<String> = r.index.iter().map(|e| self.expr(e)).collect();
            return tile.reference(&index);
        }
        let Some((dims, _)) = self.extents.get(&r.name) else {
            return r.to_string();
        };
        // Row-major linear index: ((i0 * d1 + i1) * d2 + i2) ...
        let mut index = self.expr(&r.index[0]);
        for (k, e) in r.index.iter().enumerate().skip(1) {
            index = format!(
                "({index}) * {} + {}",
                dims.get(k).map_or("1", String::as_str),
                self.expr(e)
            );
        }
        format!("{}[{index}]", r.name)
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Int(v) => integer(*v),
            Expr::Float(s) | Expr::Str(s) => s.clone(),
            Expr::Load(r) => self.reference(r),
            Expr::Bin(op, a, b) => format!("({} {} {})", self.expr(a), op.symbol(), self.expr(b)),
            Expr::Unary(op, a) => format!("{op}({})", self.expr(a)),
            // OpenCL overloads the math functions: `sqrtf` is `sqrt` on a float.
            Expr::Call(name, args) => {
                let base = match name.strip_suffix('f') {
                    Some(b) if PURE_LIBRARY.contains(&b) && !self.cuda => b.to_string(),
                    _ if PURE_LIBRARY.contains(&name.as_str()) => name.clone(),
                    // A function of the file, copied under a name no built-in has.
                    _ => super::callee::device_name(name),
                };
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("{base}({})", args.join(", "))
            }
            Expr::Cond(c, a, b) => {
                format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b))
            }
            Expr::Cast(t, a) => format!("(({t}) {})", self.expr(a)),
            Expr::Unsupported(what) => format!("/* {what} */"),
        }
    }
}
