//! Lowering of the `lang-c` syntax tree into the loop IR of [`super::loops`]:
//! declarations into [`Var`]s, `for` loops into normalised [`Loop`]s where
//! their form allows, and anything the analysis does not follow into
//! [`Stmt::Other`] or [`Expr::Unsupported`] with what it is.

use std::collections::BTreeMap;

use lang_c::ast;
use lang_c::span::Node;

use super::loops::{Assign, BinOp, CUnit, Expr, Function, Loop, Ref, Stmt, Var};
use super::CFile;

/// Lowers the functions and globals of the user's file.
pub fn lower_unit(file: &CFile) -> CUnit {
    let mut unit = CUnit::default();
    let lower = Lowerer {
        file,
        addressed: Default::default(),
    };
    for external in &file.unit.0 {
        let in_main_file = file.line_of(external.span.start).is_some();
        match &external.node {
            ast::ExternalDeclaration::Declaration(decl) if in_main_file => {
                for var in lower.declaration_vars(&decl.node) {
                    unit.globals.insert(
                        var.name.clone(),
                        Var {
                            global: true,
                            ..var
                        },
                    );
                }
            }
            ast::ExternalDeclaration::FunctionDefinition(def) if in_main_file => {
                unit.functions.push(lower.function(def));
            }
            ast::ExternalDeclaration::Declaration(decl) => {
                for var in lower.declaration_vars(&decl.node) {
                    unit.header_globals.insert(var.name);
                }
            }
            _ => {}
        }
    }
    unit
}

struct Lowerer<'a> {
    file: &'a CFile,
    /// Names whose address the function being lowered takes (`&t`).
    addressed: std::cell::RefCell<std::collections::BTreeSet<String>>,
}

impl Lowerer<'_> {
    fn line(&self, offset: usize) -> usize {
        self.file.line_of(offset).unwrap_or(0)
    }

    fn function(&self, def: &Node<ast::FunctionDefinition>) -> Function {
        let name = declarator_name(&def.node.declarator.node).unwrap_or_default();
        let mut vars = BTreeMap::new();
        let mut param_order = Vec::new();
        for derived in &def.node.declarator.node.derived {
            if let ast::DerivedDeclarator::Function(fd) = &derived.node {
                for p in &fd.node.parameters {
                    if let Some(d) = &p.node.declarator {
                        if let Some(var) = self.var(&p.node.specifiers, &d.node) {
                            let pointer = var.pointer || !var.dims.is_empty();
                            param_order.push(var.name.clone());
                            vars.insert(
                                var.name.clone(),
                                Var {
                                    param: true,
                                    pointer,
                                    ..var
                                },
                            );
                        }
                    }
                }
            }
        }
        let mut body = Vec::new();
        self.addressed.borrow_mut().clear();
        self.statement(&def.node.statement, &mut body, &mut vars);
        let ret = self
            .var(&def.node.specifiers, &def.node.declarator.node)
            .filter(|r| !r.pointer && r.dims.is_empty())
            .map_or_else(|| "other".to_string(), |r| r.elem);
        Function {
            name,
            vars,
            param_order,
            ret,
            body,
            addressed: self.addressed.take(),
            lines: (
                self.line(def.span.start),
                self.line(def.span.end.saturating_sub(1)),
            ),
        }
    }

    fn declaration_vars(&self, decl: &ast::Declaration) -> Vec<Var> {
        if decl.specifiers.iter().any(|s| {
            matches!(&s.node, ast::DeclarationSpecifier::StorageClass(c) if c.node == ast::StorageClassSpecifier::Typedef)
        }) {
            return Vec::new();
        }
        decl.declarators
            .iter()
            .filter(|d| {
                !d.node
                    .declarator
                    .node
                    .derived
                    .iter()
                    .any(|x| matches!(x.node, ast::DerivedDeclarator::Function(_)))
            })
            .filter_map(|d| self.var(&decl.specifiers, &d.node.declarator.node))
            .collect()
    }

    fn var(
        &self,
        specifiers: &[Node<ast::DeclarationSpecifier>],
        declarator: &ast::Declarator,
    ) -> Option<Var> {
        let name = declarator_name(declarator)?;
        let mut elem = String::from("int");
        for s in specifiers {
            if let ast::DeclarationSpecifier::TypeSpecifier(t) = &s.node {
                elem = match &t.node {
                    ast::TypeSpecifier::Float => "float".into(),
                    ast::TypeSpecifier::Double => "double".into(),
                    ast::TypeSpecifier::Char => "char".into(),
                    ast::TypeSpecifier::Short => "short".into(),
                    ast::TypeSpecifier::Long => "long".into(),
                    ast::TypeSpecifier::Bool => "bool".into(),
                    ast::TypeSpecifier::TypedefName(id) => id.node.name.clone(),
                    ast::TypeSpecifier::Int
                    | ast::TypeSpecifier::Unsigned
                    | ast::TypeSpecifier::Signed => {
                        if elem == "long" || elem == "short" || elem == "char" {
                            elem
                        } else {
                            "int".into()
                        }
                    }
                    _ => "other".into(),
                };
            }
        }
        let mut dims = Vec::new();
        let mut pointer = false;
        let mut restrict = false;
        for d in &declarator.derived {
            match &d.node {
                ast::DerivedDeclarator::Pointer(quals) => {
                    pointer = true;
                    restrict |= quals.iter().any(|q| {
                        matches!(&q.node, ast::PointerQualifier::TypeQualifier(t) if t.node == ast::TypeQualifier::Restrict)
                    });
                }
                ast::DerivedDeclarator::Array(a) => {
                    restrict |= a
                        .node
                        .qualifiers
                        .iter()
                        .any(|q| q.node == ast::TypeQualifier::Restrict);
                    dims.push(match &a.node.size {
                        ast::ArraySize::VariableExpression(e)
                        | ast::ArraySize::StaticExpression(e) => Some(self.expr(e)),
                        _ => None,
                    });
                }
                _ => {}
            }
        }
        // `T (*a)[M]`: a pointer to rows, its first extent unknown.
        if let ast::DeclaratorKind::Declarator(inner) = &declarator.kind.node {
            for d in &inner.node.derived {
                match &d.node {
                    ast::DerivedDeclarator::Pointer(quals) => {
                        pointer = true;
                        restrict |= quals.iter().any(|q| {
                            matches!(&q.node, ast::PointerQualifier::TypeQualifier(t) if t.node == ast::TypeQualifier::Restrict)
                        });
                        if !dims.is_empty() {
                            dims.insert(0, None);
                        }
                    }
                    _ => elem = "other".into(),
                }
            }
        }
        // A `static` local keeps its value from call to call, and an
        // `extern` one is a global: both outlive the call.
        let global = specifiers.iter().any(|s| {
            matches!(
                &s.node,
                ast::DeclarationSpecifier::StorageClass(c)
                    if matches!(c.node, ast::StorageClassSpecifier::Static | ast::StorageClassSpecifier::Extern)
            )
        });
        Some(Var {
            name,
            elem,
            dims,
            pointer,
            restrict,
            param: false,
            global,
        })
    }

    fn block_items(
        &self,
        items: &[Node<ast::BlockItem>],
        out: &mut Vec<Stmt>,
        vars: &mut BTreeMap<String, Var>,
    ) {
        for item in items {
            match &item.node {
                ast::BlockItem::Statement(s) => self.statement(s, out, vars),
                ast::BlockItem::Declaration(d) => self.declaration(d, out, vars),
                ast::BlockItem::StaticAssert(_) => {}
            }
        }
    }

    fn declaration(
        &self,
        d: &Node<ast::Declaration>,
        out: &mut Vec<Stmt>,
        vars: &mut BTreeMap<String, Var>,
    ) {
        let line = self.line(d.span.start);
        for init in &d.node.declarators {
            let Some(var) = self.var(&d.node.specifiers, &init.node.declarator.node) else {
                continue;
            };
            let value = match &init.node.initializer {
                Some(Node {
                    node: ast::Initializer::Expression(e),
                    ..
                }) => Some(self.expr(e)),
                Some(_) => Some(Expr::Unsupported("an initialiser list".into())),
                None => None,
            };
            out.push(Stmt::Decl {
                name: var.name.clone(),
                init: value,
                line,
            });
            declare(vars, var);
        }
    }

    fn body(&self, s: &Node<ast::Statement>, vars: &mut BTreeMap<String, Var>) -> Vec<Stmt> {
        let mut out = Vec::new();
        self.statement(s, &mut out, vars);
        out
    }

    fn statement(
        &self,
        s: &Node<ast::Statement>,
        out: &mut Vec<Stmt>,
        vars: &mut BTreeMap<String, Var>,
    ) {
        let line = self.line(s.span.start);
        match &s.node {
            ast::Statement::Compound(items) => self.block_items(items, out, vars),
            ast::Statement::Expression(None) => {}
            ast::Statement::Expression(Some(e)) => out.push(self.expr_statement(e, line)),
            ast::Statement::If(i) => out.push(Stmt::If {
                cond: self.expr(&i.node.condition),
                then: self.body(&i.node.then_statement, vars),
                els: i
                    .node
                    .else_statement
                    .as_ref()
                    .map(|e| self.body(e, vars))
                    .unwrap_or_default(),
                line,
            }),
            ast::Statement::For(f) => out.push(self.for_loop(f, s, vars)),
            ast::Statement::While(w) => out.push(Stmt::Other {
                what: "a while loop".into(),
                body: self.body(&w.node.statement, vars),
                cond: Some(self.expr(&w.node.expression)),
                line,
            }),
            ast::Statement::DoWhile(w) => out.push(Stmt::Other {
                what: "a do-while loop".into(),
                body: self.body(&w.node.statement, vars),
                cond: Some(self.expr(&w.node.expression)),
                line,
            }),
            ast::Statement::Switch(w) => out.push(Stmt::Other {
                what: "a switch".into(),
                body: self.body(&w.node.statement, vars),
                cond: None,
                line,
            }),
            ast::Statement::Labeled(l) => out.push(Stmt::Other {
                what: "a labelled statement".into(),
                body: self.body(&l.node.statement, vars),
                cond: None,
                line,
            }),
            ast::Statement::Goto(label) => out.push(Stmt::Goto(label.node.name.clone())),
            ast::Statement::Continue => out.push(Stmt::Continue),
            ast::Statement::Break => out.push(Stmt::Break),
            ast::Statement::Return(e) => out.push(Stmt::Return(e.as_ref().map(|e| self.expr(e)))),
            ast::Statement::Asm(_) => out.push(Stmt::Other {
                what: "inline assembly".into(),
                body: Vec::new(),
                cond: None,
                line,
            }),
        }
    }

    fn expr_statement(&self, e: &Node<ast::Expression>, line: usize) -> Stmt {
        match &e.node {
            ast::Expression::BinaryOperator(b) => {
                let op = match b.node.operator.node {
                    ast::BinaryOperator::Assign => None,
                    ast::BinaryOperator::AssignPlus => Some(BinOp::Add),
                    ast::BinaryOperator::AssignMinus => Some(BinOp::Sub),
                    ast::BinaryOperator::AssignMultiply => Some(BinOp::Mul),
                    ast::BinaryOperator::AssignDivide => Some(BinOp::Div),
                    ast::BinaryOperator::AssignModulo => Some(BinOp::Mod),
                    ast::BinaryOperator::AssignBitwiseAnd => Some(BinOp::BitAnd),
                    ast::BinaryOperator::AssignBitwiseOr => Some(BinOp::BitOr),
                    ast::BinaryOperator::AssignBitwiseXor => Some(BinOp::BitXor),
                    ast::BinaryOperator::AssignShiftLeft => Some(BinOp::Shl),
                    ast::BinaryOperator::AssignShiftRight => Some(BinOp::Shr),
                    _ => {
                        return Stmt::Eval {
                            expr: self.expr(e),
                            line,
                        }
                    }
                };
                match self.reference(&b.node.lhs) {
                    Some(target) => Stmt::Assign(Assign {
                        target,
                        op,
                        value: self.expr(&b.node.rhs),
                        line,
                    }),
                    None => Stmt::Other {
                        what: "an assignment through a pointer or a member".into(),
                        body: Vec::new(),
                        cond: None,
                        line,
                    },
                }
            }
            ast::Expression::UnaryOperator(u) => {
                let op = match u.node.operator.node {
                    ast::UnaryOperator::PostIncrement | ast::UnaryOperator::PreIncrement => {
                        BinOp::Add
                    }
                    ast::UnaryOperator::PostDecrement | ast::UnaryOperator::PreDecrement => {
                        BinOp::Sub
                    }
                    _ => {
                        return Stmt::Eval {
                            expr: self.expr(e),
                            line,
                        }
                    }
                };
                match self.reference(&u.node.operand) {
                    Some(target) => Stmt::Assign(Assign {
                        target,
                        op: Some(op),
                        value: Expr::Int(1),
                        line,
                    }),
                    None => Stmt::Other {
                        what: "an increment through a pointer or a member".into(),
                        body: Vec::new(),
                        cond: None,
                        line,
                    },
                }
            }
            _ => Stmt::Eval {
                expr: self.expr(e),
                line,
            },
        }
    }

    fn for_loop(
        &self,
        f: &Node<ast::ForStatement>,
        s: &Node<ast::Statement>,
        vars: &mut BTreeMap<String, Var>,
    ) -> Stmt {
        let lines = (
            self.line(s.span.start),
            self.line(s.span.end.saturating_sub(1)),
        );
        let mut not_canonical = None;
        let mut var = String::new();
        let mut declared = false;
        let mut lower = Expr::Int(0);
        match &f.node.initializer.node {
            ast::ForInitializer::Declaration(d) if d.node.declarators.len() == 1 => {
                let init = &d.node.declarators[0].node;
                if let Some(v) = self.var(&d.node.specifiers, &init.declarator.node) {
                    var = v.name.clone();
                    declare(vars, v);
                    declared = true;
                }
                match &init.initializer {
                    Some(Node {
                        node: ast::Initializer::Expression(e),
                        ..
                    }) => lower = self.expr(e),
                    _ => not_canonical = Some("its variable has no initial value".to_string()),
                }
            }
            ast::ForInitializer::Expression(e) => match self.expr_statement(e, lines.0) {
                Stmt::Assign(Assign {
                    target,
                    op: None,
                    value,
                    ..
                }) if target.index.is_empty() => {
                    var = target.name;
                    lower = value;
                }
                _ => not_canonical = Some("its initialiser is not `v = start`".to_string()),
            },
            _ => not_canonical = Some("its initialiser is not `v = start`".to_string()),
        }
        let one = || Box::new(Expr::Int(1));
        let plus_one = |e: Box<Expr>| Expr::Bin(BinOp::Add, e, one());
        let is_var = |e: &Expr| *e == Expr::var(&var);
        // The bound the condition gives: an exclusive upper one (`v < hi`),
        // or, for a loop running downwards, an inclusive lower one (`v >= lo`).
        let mut upper = Expr::Int(0);
        let mut lowest = None;
        match f.node.condition.as_ref().map(|c| self.expr(c)) {
            Some(Expr::Bin(BinOp::Lt, a, b)) if is_var(&a) => upper = *b,
            Some(Expr::Bin(BinOp::Le, a, b)) if is_var(&a) => upper = plus_one(b),
            Some(Expr::Bin(BinOp::Gt, a, b)) if is_var(&b) => upper = *a,
            Some(Expr::Bin(BinOp::Ge, a, b)) if is_var(&b) => upper = plus_one(a),
            Some(Expr::Bin(BinOp::Ge, a, b)) if is_var(&a) => lowest = Some(*b),
            Some(Expr::Bin(BinOp::Gt, a, b)) if is_var(&a) => lowest = Some(plus_one(b)),
            Some(Expr::Bin(BinOp::Le, a, b)) if is_var(&b) => lowest = Some(*a),
            Some(Expr::Bin(BinOp::Lt, a, b)) if is_var(&b) => lowest = Some(plus_one(a)),
            _ => {
                not_canonical.get_or_insert_with(|| {
                    format!("its condition is not `{var} < bound`, `{var} <= bound`, `{var} > bound` or `{var} >= bound`")
                });
            }
        }
        // The increment: positive for `v++`/`v += c`, negative for `v--`.
        let increment = match f
            .node
            .step
            .as_ref()
            .map(|e| self.expr_statement(e, lines.0))
        {
            Some(Stmt::Assign(Assign {
                target,
                op: Some(op @ (BinOp::Add | BinOp::Sub)),
                value: Expr::Int(c),
                ..
            })) if target.name == var && target.index.is_empty() && c > 0 => {
                Some(if op == BinOp::Add { c } else { -c })
            }
            Some(Stmt::Assign(Assign {
                target,
                op: None,
                value: Expr::Bin(op @ (BinOp::Add | BinOp::Sub), a, c),
                ..
            })) if target.name == var && target.index.is_empty() && is_var(&a) => match *c {
                Expr::Int(k) if k > 0 => Some(if op == BinOp::Add { k } else { -k }),
                _ => None,
            },
            _ => None,
        };
        let mut step = 0;
        let mut descending = false;
        match (increment, lowest) {
            (Some(c), None) if c > 0 => step = c,
            (Some(-1), Some(lowest)) => {
                // Downwards from `start` to `lowest`: the iterations of
                // `lowest <= v < start + 1`, in the other order.
                upper = plus_one(Box::new(std::mem::replace(&mut lower, lowest)));
                step = 1;
                descending = true;
            }
            (Some(c), Some(_)) if c < -1 => {
                not_canonical.get_or_insert_with(|| {
                    format!("it runs downwards by {} (only loops running downwards by 1 are normalised)", -c)
                });
            }
            (Some(_), _) => {
                not_canonical.get_or_insert_with(|| {
                    format!("its condition and its step of `{var}` go opposite ways")
                });
            }
            (None, _) => {
                not_canonical.get_or_insert_with(|| {
                    format!("its step is not an increment or a decrement of `{var}` by a constant")
                });
            }
        }
        let body = self.body(&f.node.statement, vars);
        Stmt::For(Loop {
            var,
            declared,
            lower,
            upper,
            step,
            descending,
            not_canonical,
            body,
            lines,
        })
    }

    fn reference(&self, e: &Node<ast::Expression>) -> Option<Ref> {
        match &e.node {
            ast::Expression::Identifier(id) => Some(Ref {
                name: id.node.name.clone(),
                index: Vec::new(),
            }),
            ast::Expression::BinaryOperator(b)
                if b.node.operator.node == ast::BinaryOperator::Index =>
            {
                let mut r = self.reference(&b.node.lhs)?;
                r.index.push(self.expr(&b.node.rhs));
                Some(r)
            }
            _ => None,
        }
    }

    fn expr(&self, e: &Node<ast::Expression>) -> Expr {
        use ast::BinaryOperator as B;
        match &e.node {
            ast::Expression::Identifier(id) => Expr::var(&id.node.name),
            ast::Expression::Constant(c) => match &c.node {
                ast::Constant::Integer(i) => {
                    let radix = match i.base {
                        ast::IntegerBase::Decimal => 10,
                        ast::IntegerBase::Octal => 8,
                        ast::IntegerBase::Hexadecimal => 16,
                        ast::IntegerBase::Binary => 2,
                    };
                    match i64::from_str_radix(&i.number, radix) {
                        Ok(v) => Expr::Int(v),
                        Err(_) => Expr::Unsupported("an integer literal out of range".into()),
                    }
                }
                ast::Constant::Float(fl) => {
                    let mut text = fl.number.to_string();
                    if fl.base == ast::FloatBase::Hexadecimal {
                        text = format!("0x{text}");
                    }
                    match fl.suffix.format {
                        ast::FloatFormat::Float => text.push('f'),
                        ast::FloatFormat::Double => {}
                        ast::FloatFormat::LongDouble => text.push('L'),
                        _ => return Expr::Unsupported("an extended floating literal".into()),
                    }
                    Expr::Float(text)
                }
                ast::Constant::Character(ch) => {
                    Expr::Unsupported(format!("a character literal {ch}"))
                }
            },
            ast::Expression::BinaryOperator(b) => {
                let op = match b.node.operator.node {
                    B::Index => {
                        return match self.reference(e) {
                            Some(r) => Expr::Load(r),
                            None => Expr::Unsupported("a subscript of a computed pointer".into()),
                        }
                    }
                    B::Multiply => BinOp::Mul,
                    B::Divide => BinOp::Div,
                    B::Modulo => BinOp::Mod,
                    B::Plus => BinOp::Add,
                    B::Minus => BinOp::Sub,
                    B::ShiftLeft => BinOp::Shl,
                    B::ShiftRight => BinOp::Shr,
                    B::Less => BinOp::Lt,
                    B::Greater => BinOp::Gt,
                    B::LessOrEqual => BinOp::Le,
                    B::GreaterOrEqual => BinOp::Ge,
                    B::Equals => BinOp::Eq,
                    B::NotEquals => BinOp::Ne,
                    B::BitwiseAnd => BinOp::BitAnd,
                    B::BitwiseXor => BinOp::BitXor,
                    B::BitwiseOr => BinOp::BitOr,
                    B::LogicalAnd => BinOp::And,
                    B::LogicalOr => BinOp::Or,
                    _ => return Expr::Unsupported("an assignment inside an expression".into()),
                };
                Expr::Bin(
                    op,
                    Box::new(self.expr(&b.node.lhs)),
                    Box::new(self.expr(&b.node.rhs)),
                )
            }
            ast::Expression::UnaryOperator(u) => {
                let inner = Box::new(self.expr(&u.node.operand));
                match u.node.operator.node {
                    ast::UnaryOperator::Minus => Expr::Unary('-', inner),
                    ast::UnaryOperator::Plus => *inner,
                    ast::UnaryOperator::Negate => Expr::Unary('!', inner),
                    ast::UnaryOperator::Complement => Expr::Unary('~', inner),
                    ast::UnaryOperator::Indirection => match &u.node.operand.node {
                        ast::Expression::Identifier(id) => {
                            Expr::Unsupported(super::loops::dereference_text(&id.node.name))
                        }
                        _ => Expr::Unsupported("a pointer dereference".into()),
                    },
                    ast::UnaryOperator::Address => {
                        if let ast::Expression::Identifier(id) = &u.node.operand.node {
                            self.addressed.borrow_mut().insert(id.node.name.clone());
                        }
                        Expr::Unsupported("an address-of".into())
                    }
                    _ => Expr::Unsupported("an increment inside an expression".into()),
                }
            }
            ast::Expression::Call(c) => match &c.node.callee.node {
                ast::Expression::Identifier(id) => Expr::Call(
                    id.node.name.clone(),
                    c.node.arguments.iter().map(|a| self.expr(a)).collect(),
                ),
                _ => Expr::Unsupported("a call through a pointer".into()),
            },
            ast::Expression::Conditional(c) => Expr::Cond(
                Box::new(self.expr(&c.node.condition)),
                Box::new(self.expr(&c.node.then_expression)),
                Box::new(self.expr(&c.node.else_expression)),
            ),
            ast::Expression::Cast(c) => {
                let ty = c
                    .node
                    .type_name
                    .node
                    .specifiers
                    .iter()
                    .filter_map(|s| match &s.node {
                        ast::SpecifierQualifier::TypeSpecifier(t) => Some(match &t.node {
                            ast::TypeSpecifier::Float => "float".to_string(),
                            ast::TypeSpecifier::Double => "double".to_string(),
                            ast::TypeSpecifier::Int => "int".to_string(),
                            ast::TypeSpecifier::Long => "long".to_string(),
                            ast::TypeSpecifier::Unsigned => "unsigned".to_string(),
                            _ => "?".to_string(),
                        }),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                let inner = self.expr(&c.node.expression);
                // `(double (*)[N])polybench_alloc_data(...)`: the call is what
                // the aliasing test follows (is it an allocator?).
                if matches!(&inner, Expr::Call(..)) && c.node.type_name.node.declarator.is_some() {
                    return inner;
                }
                if matches!(&inner, Expr::Call(f, _) if f == "malloc" || f == "calloc") {
                    return inner;
                }
                if ty.contains('?') || c.node.type_name.node.declarator.is_some() {
                    Expr::Unsupported("a cast to a pointer or an unusual type".into())
                } else {
                    Expr::Cast(ty, Box::new(self.expr(&c.node.expression)))
                }
            }
            ast::Expression::SizeOfTy(_) | ast::Expression::SizeOfVal(_) => {
                Expr::Unsupported("sizeof".into())
            }
            ast::Expression::StringLiteral(s) => Expr::Str(s.node.join(" ")),
            ast::Expression::Member(_) => Expr::Unsupported("a member access".into()),
            ast::Expression::Comma(_) => Expr::Unsupported("a comma expression".into()),
            _ => Expr::Unsupported("an unusual expression".into()),
        }
    }
}

fn declarator_name(d: &ast::Declarator) -> Option<String> {
    match &d.kind.node {
        ast::DeclaratorKind::Identifier(id) => Some(id.node.name.clone()),
        ast::DeclaratorKind::Declarator(inner) => declarator_name(&inner.node),
        ast::DeclaratorKind::Abstract => None,
    }
}

/// Names of the functions declared (with or without a body) anywhere in the
/// preprocessed unit, with whether they have a body in the user's file.
pub fn declared_functions(file: &CFile) -> BTreeMap<String, bool> {
    let mut names = BTreeMap::new();
    for external in &file.unit.0 {
        match &external.node {
            ast::ExternalDeclaration::FunctionDefinition(def) => {
                if let Some(name) = declarator_name(&def.node.declarator.node) {
                    names.insert(name, file.line_of(external.span.start).is_some());
                }
            }
            ast::ExternalDeclaration::Declaration(decl) => {
                for d in &decl.node.declarators {
                    if let Some(name) = declarator_name(&d.node.declarator.node) {
                        names.entry(name).or_insert(false);
                    }
                }
            }
            _ => {}
        }
    }
    names
}

/// Records a local declaration: one entry per name, the last declaration's,
/// still marked global if any declaration of the name is (a `static` or
/// `extern` local, shadowed or shadowing).
fn declare(vars: &mut BTreeMap<String, Var>, var: Var) {
    let global = var.global || vars.get(&var.name).is_some_and(|v| v.global);
    vars.insert(var.name.clone(), Var { global, ..var });
}
