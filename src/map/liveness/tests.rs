//! Liveness on small functions: each case names the scalars asked about and
//! what a correct answer is (several came from a review that ran the mapped
//! programs and found the first version of the module wrong on them).

use super::*;
use crate::front::c::{lower_unit, CFile};

/// Whether each of `names` is live after the loop starting on `line` of the
/// function `in_function` of `text`.
fn live_in(text: &str, in_function: &str, line: usize, names: &[&str]) -> Vec<bool> {
    let pre = format!("# 1 \"t.c\"\n{text}");
    let Ok(file) = CFile::from_preprocessed("t.c", text.to_string(), pre) else {
        panic!("does not parse")
    };
    let unit = lower_unit(&file);
    let function = unit
        .functions
        .iter()
        .find(|f| f.name == in_function)
        .expect("the function");
    fn find(body: &[Stmt], line: usize) -> Option<&Loop> {
        body.iter().find_map(|s| match s {
            Stmt::For(l) if l.lines.0 == line => Some(l),
            Stmt::For(l) => find(&l.body, line),
            Stmt::If { then, els, .. } => find(then, line).or_else(|| find(els, line)),
            Stmt::Other { body, .. } => find(body, line),
            _ => None,
        })
    }
    let root = find(&function.body, line).expect("a loop on that line");
    let after = LiveAfter::new(root, function, &unit, &file);
    names.iter().map(|n| after.reads(n)).collect()
}

fn live(text: &str, line: usize, names: &[&str]) -> Vec<bool> {
    live_in(text, "main", line, names)
}

#[test]
fn an_assignment_on_every_path_ends_the_value() {
    let text = "void main(void) {\n int i, j, k; double t, s = 0;\n\
                for (i = 0; i < 9; i++) { t = i; s += t; }\n\
                if (s > 1) { t = 0; j = 1; } else { t = 1; }\n\
                s += t + j;\n\
                for (k = 0; k < 3; k++) s += i;\n}\n";
    // `t` is assigned on both branches, `j` on one; the loop `k` may not
    // run, so `i` in its body is read.
    assert_eq!(
        live(text, 3, &["t", "j", "i", "k"]),
        [false, true, true, false]
    );
}

#[test]
fn the_next_trip_of_an_enclosing_loop_reads_what_the_nest_left() {
    let text = "void main(void) {\n int i, j; double t = 0, s = 0;\n\
                for (int n = 0; n < 3; n++) {\n\
                s += t;\n\
                for (i = 0; i < 9; i++) t = i;\n\
                for (j = 0; j < 9; j++) s += j;\n\
                }\n}\n";
    assert_eq!(live(text, 5, &["t", "i", "j"]), [true, false, false]);
    assert_eq!(live(text, 6, &["t", "j"]), [true, false]);
}

#[test]
fn break_leads_past_the_rest_of_the_body() {
    // The `break` skips `t = 0`; the loop's end then reaches `s += t`.
    let text = "void main(void) {\n int i; double t = 0, s = 0;\n\
                for (int n = 0; n < 3; n++) {\n\
                for (i = 0; i < 9; i++) t = i;\n\
                if (s > 2) break;\n\
                t = 0;\n\
                }\n\
                s += t;\n}\n";
    assert_eq!(live(text, 4, &["t"]), [true]);
    let without_break = text.replace("if (s > 2) break;", "");
    assert_eq!(live(&without_break, 4, &["t"]), [false]);
}

#[test]
fn while_loops_are_followed_as_for_loops_are() {
    // Around the nest: the condition and the next trip read `t`, not `i`.
    let around = "void main(void) {\n int i; double t = 0, s = 0;\n\
                  while (s < t + 9) {\n\
                  for (i = 0; i < 9; i++) t = i;\n\
                  s += 1;\n\
                  }\n}\n";
    assert_eq!(live(around, 4, &["t", "i"]), [true, false]);
    // After it: a `do` whose body reads `i`, and assigns `t` (a loop's
    // assignments are not counted: `t` stays live for `s += t`).
    let after = "void main(void) {\n int i; double t = 0, s = 0;\n\
                 for (i = 0; i < 9; i++) t = i;\n\
                 do { s += i; t = 0; } while (s < 3);\n\
                 s += t;\n}\n";
    assert_eq!(live(after, 3, &["i", "t"]), [true, true]);
}

#[test]
fn a_declaration_in_a_block_after_the_nest_shadows_rather_than_assigns() {
    // `{ double t; t = 5; }` assigns another `t`; the outer one is printed.
    let text = "void main(void) {\n int i; double t = -1, a[100];\n\
                for (i = 0; i < 100; i++) { t = i * 2.0; a[i] = t; }\n\
                { double t; t = 5; a[0] += t; }\n\
                { int i; for (i = 0; i < 3; i++) a[0] += a[i]; }\n\
                a[1] = t + i;\n}\n";
    assert_eq!(live(text, 3, &["t", "i"]), [true, true]);
}

#[test]
fn globals_statics_and_externs_outlive_the_function() {
    // A block-local `g` must not hide the global from the question.
    let shadowed = "double g; double a[100];\n\
                    void f(void) {\n int i;\n\
                    for (i = 0; i < 100; i++) { g = i * 2.0; a[i] = g; }\n\
                    if (a[5] > 100) { double g = 3; a[1] = g; }\n}\n";
    assert_eq!(live_in(shadowed, "f", 4, &["g", "i"]), [true, false]);
    let declared_here = "void f(void) {\n extern double g; static double t; int i;\n\
                         for (i = 0; i < 9; i++) { g = i; t = i; }\n}\n";
    assert_eq!(
        live_in(declared_here, "f", 3, &["g", "t", "i"]),
        [true, true, false]
    );
}

#[test]
fn a_scalar_whose_address_is_taken_is_live() {
    let text = "void show(double *p);\n\
                void main(void) {\n double t = -1, a[100]; double *p = &t; int i;\n\
                for (i = 0; i < 100; i++) { t = i * 2.0; a[i] = t; }\n\
                show(p);\n}\n";
    assert_eq!(live(text, 4, &["t", "i"]), [true, false]);
    assert!(address_taken("f(& t)", "t"));
    assert!(!address_taken("a && t; b & tt", "t"));
}

#[test]
fn unmodelled_code_falls_back_to_the_text_globals_included() {
    // The `switch` is not followed: its text names `k`, not `t`; the code
    // sharing the nest's last line names `t`.
    let text = "double g;\nvoid main(void) {\n int i, k = 0; double t = -1, a[100];\n\
                for (i = 0; i < 100; i++) { g = i; a[i] = i; } switch (k) { default: k++; }\n\
                for (i = 0; i < 100; i++) { t = i; a[i] = t; } if (k == 0) a[0] = t;\n\
                switch (k) { default: k++; }\n}\n";
    assert_eq!(live(text, 4, &["g", "k", "i"]), [true, true, true]);
    assert_eq!(live(text, 5, &["t"]), [true]);
}

/// [`live`] on a file whose preprocessed text is `expanded` (what `cc -E`
/// would make of `text`, line for line).
fn live_expanded(text: &str, expanded: &str, line: usize, names: &[&str]) -> Vec<bool> {
    let pre = format!("# 1 \"t.c\"\n{expanded}");
    let Ok(file) = CFile::from_preprocessed("t.c", text.to_string(), pre) else {
        panic!("does not parse")
    };
    let unit = lower_unit(&file);
    let main = &unit.functions[0];
    let Some(root) = main.body.iter().find_map(|s| match s {
        Stmt::For(l) if l.lines.0 == line => Some(l),
        _ => None,
    }) else {
        panic!("a loop on that line")
    };
    let after = LiveAfter::new(root, main, &unit, &file);
    names.iter().map(|n| after.reads(n)).collect()
}

#[test]
fn addresses_extents_and_macros_are_seen_through() {
    // `&(t)` behind a macro, then read through the pointer.
    let text = "#define ADDR(x) (&(x))\nvoid show(double *p);\n\
                void main(void) {\n double t = -1, u = 0; double *p = ADDR(t); int i;\n\
                for (i = 0; i < 9; i++) { t = i; u = t; }\n\
                show(p);\n}\n";
    let expanded = text
        .replace("#define ADDR(x) (&(x))", "")
        .replace("ADDR(t)", "(&(t))");
    assert_eq!(
        live_expanded(text, &expanded, 5, &["t", "u"]),
        [true, false]
    );
    assert!(address_taken("p = &( t);", "t"));
    // A variable-length array's extent reads the loop variable.
    let vla = "void main(void) {\n int i = 3; double a[9];\n\
               for (i = 0; i < 9; i++) a[i] = i;\n\
               double b[2][i];\n b[1][0] = 0;\n}\n";
    assert_eq!(live(vla, 3, &["i"]), [true]);
    // After a `switch` the text decides, macros expanded.
    let after_switch = "#define SHOW show(i)\nvoid show(int x);\n\
                        void main(void) {\n int i, k = 0; double a[9];\n\
                        for (i = 0; i < 9; i++) {\n a[i] = i;\n }\n\
                        switch (k) { default: k++; }\n\
                        SHOW;\n}\n";
    let expanded = after_switch
        .replace("#define SHOW show(i)", "")
        .replace("SHOW;", "show(i);");
    assert_eq!(live_expanded(after_switch, &expanded, 5, &["i"]), [true]);
    assert_eq!(live(after_switch, 5, &["i"]), [false], "unexpanded");
}

#[test]
fn a_global_a_header_declares_outlives_the_function() {
    // `g` comes from a header; a block-local `g` must not hide it.
    let text = "void f(void) {\n int i; double b[9];\n\
                if (b[0] > 5) { double g = 2; b[0] = g; }\n\
                for (i = 0; i < 9; i++) { g = i; b[i] = g; }\n}\n";
    let pre = format!("# 1 \"h.h\"\ndouble g;\n# 1 \"t.c\"\n{text}");
    let Ok(file) = CFile::from_preprocessed("t.c", text.to_string(), pre) else {
        panic!("does not parse")
    };
    let unit = lower_unit(&file);
    let f = &unit.functions[0];
    let Some(Stmt::For(root)) = f.body.iter().find(|s| matches!(s, Stmt::For(_))) else {
        panic!("the loop")
    };
    assert!(unit.header_globals.contains("g"));
    assert!(LiveAfter::new(root, f, &unit, &file).reads("g"));
}
