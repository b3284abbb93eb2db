//! Where each kernel variable is declared, as a path of nested scopes, so that
//! the printer may give variables of disjoint scopes the same name: the two
//! branches of a kernel's interior and edge paths both read `acc`, not `acc`
//! and `acc_`.

use crate::kir::visit::{walk_block, walk_stmt, Visitor};
use crate::kir::{KExpr, KStmt, Kernel, Var};

/// A declaration's scope: the ids of the scopes that hold it, outermost first
/// (empty for the kernel's body and for what no statement declares: parameters
/// and shared arrays).
pub type ScopePath = Vec<u32>;

/// The scope of every variable of `kernel`, by [`crate::kir::Var`] index. A
/// `for` loop's variable belongs to the loop's scope, which holds its body;
/// each branch of an `if` and each `{ }` block is a scope of its own.
pub fn declaration_scopes(kernel: &Kernel) -> Vec<ScopePath> {
    let mut walk = Walk {
        scopes: vec![ScopePath::new(); kernel.vars.decls.len()],
        next: 0,
        stack: Vec::new(),
        loop_var: None,
    };
    // The kernel's body is the root scope, not one of its own.
    walk_block(&mut walk, &kernel.body);
    walk.scopes
}

/// Whether variables declared in `a` and `b` can be seen from one place (one
/// scope holds the other), so that they need different names.
pub fn overlap(a: &ScopePath, b: &ScopePath) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

struct Walk {
    scopes: Vec<ScopePath>,
    next: u32,
    stack: Vec<u32>,
    /// The variable of the loop whose body is visited next: it belongs to
    /// the body's scope.
    loop_var: Option<Var>,
}

impl Visitor for Walk {
    fn visit_block(&mut self, body: &[KStmt]) {
        self.stack.push(self.next);
        self.next += 1;
        if let Some(var) = self.loop_var.take() {
            self.scopes[var.0 as usize] = self.stack.clone();
        }
        walk_block(self, body);
        self.stack.pop();
    }

    fn visit_stmt(&mut self, stmt: &KStmt) {
        match stmt {
            KStmt::Decl { var, .. } => self.scopes[var.0 as usize] = self.stack.clone(),
            KStmt::For { var, .. } => self.loop_var = Some(*var),
            _ => {}
        }
        walk_stmt(self, stmt);
    }

    fn visit_expr(&mut self, _: &KExpr) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_scopes_overlap_and_siblings_do_not() {
        let root: ScopePath = vec![];
        let (then, then_loop, otherwise) = (vec![0], vec![0, 1], vec![2]);
        assert!(overlap(&root, &then_loop));
        assert!(overlap(&then, &then_loop));
        assert!(overlap(&then, &then));
        assert!(!overlap(&then_loop, &otherwise));
        assert!(!overlap(&then, &otherwise));
    }
}
