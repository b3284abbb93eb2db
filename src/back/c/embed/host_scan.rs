//! Finds a host variable's declaration in the C/C++ text before a region, to learn
//! its rank: how many times the generated type check must dereference the name to
//! reach one scalar element (`float a[N][N]` is 2, `double *U` and `double U[]` 1).
//!
//! This is a textual scan, not a C parser: it looks for the last `TYPE name[..]...`
//! or `TYPE *...name` declarator before the region, in code (comments and string
//! literals are skipped). Declarations it cannot read (a typedef'd array type, a
//! pointer to an array, a `std::vector`) give `None`, and the caller then leaves
//! the array's element type unchecked and says so.

/// The rank of the last declaration of `name` in `text`: the `*`s before the name
/// plus the `[..]` after it, at least 1; `None` when no declaration is recognised.
pub(super) fn declared_rank(text: &str, name: &str) -> Option<usize> {
    declared_shape(text, name).map(|(stars, brackets)| stars + brackets)
}

/// Whether the last declaration of `name` in `text` declares an array (it has
/// `[..]` after the name) rather than a pointer; `None` when no declaration is
/// recognised. A parameter `double F[]` reads as an array although C makes it
/// a pointer: the wrapper then checks its size exactly and refuses it, which is
/// safe (see `STENCILC_HOST_BYTES`, which only falls back on this answer with
/// compilers that cannot tell).
pub(super) fn declared_array(text: &str, name: &str) -> Option<bool> {
    declared_shape(text, name).map(|(_, brackets)| brackets > 0)
}

/// The `*`s before and the `[..]`s after the last declaration of `name` in
/// `text`, at least one of them; `None` when no declaration is recognised.
fn declared_shape(text: &str, name: &str) -> Option<(usize, usize)> {
    let code = blank_comments_and_literals(text);
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let starts: Vec<usize> = code
        .match_indices(name)
        .map(|(at, _)| at)
        .filter(|&at| {
            !code[..at].chars().next_back().is_some_and(is_ident)
                && !code[at + name.len()..].chars().next().is_some_and(is_ident)
        })
        .collect();
    starts
        .into_iter()
        .rev()
        .find_map(|at| declarator_shape(&code, at, name.len()))
}

/// The `*`s and `[..]`s of the declarator whose name occupies `code[at..at + len]`, if the
/// text around it reads as a declaration.
fn declarator_shape(code: &str, at: usize, len: usize) -> Option<(usize, usize)> {
    let brackets = brackets_then_declarator_end(&code[at + len..])?;
    let (stars, type_end) = stars_and_qualifiers_before(&code[..at]);
    let type_word = word_before(&code[..type_end])?;
    if type_word.starts_with(|c: char| c.is_ascii_digit()) || is_statement_keyword(type_word) {
        return None;
    }
    // What precedes the type must start a declaration: `n * a` in `x = n * a;` is
    // a product, `static float a[..]` and `{ double *U` are declarations.
    let before_type = code[..type_end - type_word.len()].trim_end();
    if let Some(word) = word_before(before_type) {
        if is_statement_keyword(word) {
            return None;
        }
    } else if before_type.ends_with(|c: char| "=+-%&|^!?<[.".contains(c))
        || (before_type.ends_with('/') && !before_type.ends_with("*/"))
    {
        return None;
    }
    (stars + brackets > 0).then_some((stars, brackets))
}

/// The number of `[..]` groups at the start of `after`, if they are followed by
/// what ends a declarator (`;`, `=`, `,` or `)`).
fn brackets_then_declarator_end(after: &str) -> Option<usize> {
    let mut rest = after.trim_start();
    let mut count = 0;
    while rest.starts_with('[') {
        let mut depth = 0usize;
        let close = rest.char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })?;
        rest = rest[close + 1..].trim_start();
        count += 1;
    }
    rest.starts_with([';', '=', ',', ')']).then_some(count)
}

/// The `*`s (and qualifiers such as `const` or `restrict` between them) that end
/// `before`, and where the text before them ends.
fn stars_and_qualifiers_before(before: &str) -> (usize, usize) {
    let mut stars = 0;
    let mut end = before.len();
    loop {
        let trimmed = before[..end].trim_end();
        if let Some(rest) = trimmed.strip_suffix('*') {
            stars += 1;
            end = rest.len();
        } else if let Some(word) = word_before(trimmed).filter(|w| is_qualifier(w)) {
            end = trimmed.len() - word.len();
        } else {
            return (stars, trimmed.len());
        }
    }
}

/// The identifier that ends `text` (after trailing spaces), if any.
fn word_before(text: &str) -> Option<&str> {
    let text = text.trim_end();
    let start = text
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    (start < text.len()).then(|| &text[start..])
}

fn is_qualifier(word: &str) -> bool {
    matches!(
        word,
        "const" | "volatile" | "restrict" | "__restrict" | "__restrict__" | "SDSL_RESTRICT"
    )
}

/// Words after which `x * name` is an expression, not a declaration.
fn is_statement_keyword(word: &str) -> bool {
    matches!(
        word,
        "return" | "sizeof" | "case" | "goto" | "else" | "do" | "throw" | "delete" | "co_return"
    )
}

/// `text` with comments, string and character literals replaced by spaces (newlines
/// kept), so that the scan sees only code and offsets stay the same.
fn blank_comments_and_literals(text: &str) -> String {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        Code,
        LineComment,
        BlockComment,
        Literal(char),
    }
    fn push_blank(out: &mut String, c: char) {
        if c == '\n' {
            out.push('\n');
        } else {
            out.push_str(&" ".repeat(c.len_utf8()));
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut state = State::Code;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match state {
            State::Code => match (c, chars.peek()) {
                ('/', Some('/')) => {
                    out.push(' ');
                    state = State::LineComment;
                }
                ('/', Some('*')) => {
                    chars.next();
                    out.push_str("  ");
                    state = State::BlockComment;
                }
                ('"' | '\'', _) => {
                    out.push(' ');
                    state = State::Literal(c);
                }
                _ => out.push(c),
            },
            State::LineComment => {
                if c == '\n' {
                    state = State::Code;
                }
                push_blank(&mut out, c);
            }
            State::BlockComment => {
                if c == '*' && chars.peek() == Some(&'/') {
                    chars.next();
                    out.push_str("  ");
                    state = State::Code;
                } else {
                    push_blank(&mut out, c);
                }
            }
            State::Literal(quote) => {
                push_blank(&mut out, c);
                if c == '\\' {
                    if let Some(escaped) = chars.next() {
                        push_blank(&mut out, escaped);
                    }
                } else if c == quote {
                    state = State::Code;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_count_their_brackets_and_pointers_their_stars() {
        assert_eq!(declared_rank("static float a[SIZE][SIZE];", "a"), Some(2));
        assert_eq!(
            declared_rank("int f(double *U, double F[]) {", "U"),
            Some(1)
        );
        assert_eq!(
            declared_rank("int f(double *U, double F[]) {", "F"),
            Some(1)
        );
        assert_eq!(
            declared_rank("const double *restrict const V = p;", "V"),
            Some(1)
        );
        assert_eq!(declared_rank("double b[n[0]][4] = {0};", "b"), Some(2));
        assert_eq!(declared_rank("float **rows;", "rows"), Some(2));
    }

    #[test]
    fn arrays_and_pointers_are_told_apart() {
        assert_eq!(declared_array("static float o[2];", "o"), Some(true));
        assert_eq!(declared_array("double *U = p;", "U"), Some(false));
        assert_eq!(declared_array("float **rows;", "rows"), Some(false));
        assert_eq!(declared_array("x = n * a;", "a"), None);
    }

    #[test]
    fn the_last_declaration_before_the_region_wins() {
        let text = "float a[4];\nvoid g(void) { double a[2][2]; a[0][0] = 1; }\n";
        assert_eq!(declared_rank(text, "a"), Some(2));
    }

    #[test]
    fn uses_comments_strings_and_products_are_not_declarations() {
        assert_eq!(declared_rank("x = n * a;", "a"), None);
        assert_eq!(declared_rank("return n * a;", "a"), None);
        assert_eq!(declared_rank("f(x, a); a[1] = 2;", "a"), None);
        assert_eq!(declared_rank("// float *a;\n/* double a[3]; */", "a"), None);
        assert_eq!(declared_rank("puts(\"float *a;\");", "a"), None);
        assert_eq!(declared_rank("float alpha; float a;", "a"), None);
        assert_eq!(declared_rank("std::vector<float> a(9);", "a"), None);
    }

    #[test]
    fn blanking_keeps_offsets() {
        let text = "a /* é */ \"x\\\"y\" 'c' // z\nb";
        let blanked = blank_comments_and_literals(text);
        assert_eq!(blanked.len(), text.len());
        assert!(blanked.starts_with("a ") && blanked.ends_with("\nb"));
        assert_eq!(blanked.trim_start_matches('a').trim(), "b");
    }
}
