//! Where each kernel variable is declared, as a path of nested scopes, so that
//! the printer may give variables of disjoint scopes the same name: the two
//! branches of a kernel's interior and edge paths both read `acc`, not `acc`
//! and `acc_`.

use crate::kir::{KStmt, Kernel};

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
    };
    walk.stmts(&kernel.body);
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
}

impl Walk {
    fn stmts(&mut self, body: &[KStmt]) {
        for stmt in body {
            match stmt {
                KStmt::Decl { var, .. } => self.scopes[var.0 as usize] = self.stack.clone(),
                KStmt::For { var, body, .. } => {
                    self.enter();
                    self.scopes[var.0 as usize] = self.stack.clone();
                    self.stmts(body);
                    self.stack.pop();
                }
                KStmt::If {
                    then, otherwise, ..
                } => {
                    self.scope(then);
                    self.scope(otherwise);
                }
                KStmt::Block(body) => self.scope(body),
                KStmt::Assign { .. }
                | KStmt::Store { .. }
                | KStmt::VecStore { .. }
                | KStmt::Barrier
                | KStmt::Comment(_) => {}
            }
        }
    }

    fn enter(&mut self) {
        self.stack.push(self.next);
        self.next += 1;
    }

    fn scope(&mut self, body: &[KStmt]) {
        self.enter();
        self.stmts(body);
        self.stack.pop();
    }
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
