//! The source text of a nest, cut where the transformations rewrite it: the
//! `for (...)` headers of its perfectly nested loops, the innermost body, and
//! the closing braces after it. Comments, strings and character literals are
//! skipped when matching brackets.

use crate::front::c::loops::Loop;
use crate::front::c::CFile;

/// One `for (...)` header in a nest's text.
#[derive(Clone, Debug)]
pub struct Header {
    /// Byte where `for` starts.
    pub start: usize,
    /// Byte after its `)`.
    pub end: usize,
    /// The `{` opening its body, when the body is braced and holds the next loop.
    pub brace: Option<usize>,
}

/// A nest's text and where its parts are.
#[derive(Clone, Debug)]
pub struct NestText {
    /// The lines of the nest joined by `\n` (no newline at the end).
    pub text: String,
    /// The headers of the perfectly nested loops, outermost first.
    pub headers: Vec<Header>,
    /// The innermost body statement (braces included when it has them).
    pub body: (usize, usize),
}

impl NestText {
    /// The text of header `k` (`for (int i = 0; i < n; i++)`).
    pub fn header(&self, k: usize) -> &str {
        &self.text[self.headers[k].start..self.headers[k].end]
    }

    /// The innermost body statement.
    pub fn body_text(&self) -> &str {
        &self.text[self.body.0..self.body.1]
    }

    /// The innermost body without its braces (the statements inside), or the
    /// one statement, each line as written.
    pub fn body_statements(&self) -> &str {
        let body = self.body_text();
        if body.starts_with('{') && body.ends_with('}') {
            body[1..body.len() - 1].trim_matches(|c: char| c == '\n' || c == '\r' || c == ' ')
        } else {
            body
        }
    }

    /// The indentation of the line where byte `at` is.
    pub fn indent_at(&self, at: usize) -> String {
        let line_start = self.text[..at].rfind('\n').map_or(0, |i| i + 1);
        self.text[line_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    }
}

/// Why a nest's text is not the shape a transformation rewrites.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NestShape {
    /// Other code before the first `for` on its line (the line number).
    #[error("the loop at line {0} does not start its line")]
    ForNotFirst(usize),
    /// Other code after the nest on its last line (the line number).
    #[error("other code follows the nest on line {0}")]
    CodeAfter(usize),
    /// The loop at this level (from 1) is not the only statement of the
    /// one around it.
    #[error("the loops are not written one inside the other (level {0})")]
    NotNested(usize),
    /// A `for` keyword not followed by its header.
    #[error("a `for` without `(`")]
    NoParenthesis,
    /// A loop header's parentheses do not close.
    #[error("unbalanced parentheses")]
    Unbalanced,
    /// A loop's body braces do not close at the end of the nest.
    #[error("a closing brace is not where the nest ends")]
    BraceMisplaced,
    /// Nothing between the innermost header and the closing braces.
    #[error("the innermost loop has no body")]
    NoBody,
}

/// The nest rooted at `root` cut into `depth` headers, the innermost body and
/// the closing braces; or why its text does not have that shape.
pub fn split(file: &CFile, root: &Loop, depth: usize) -> Result<NestText, NestShape> {
    let (first, last) = root.lines;
    let lines: Vec<&str> = (first..=last).map(|l| file.original_line(l)).collect();
    let text = lines.join("\n");
    if !text.trim_start().starts_with("for") {
        return Err(NestShape::ForNotFirst(first));
    }
    let tail = text.trim_end();
    if !(tail.ends_with('}') || tail.ends_with(';')) {
        return Err(NestShape::CodeAfter(last));
    }
    let bytes = text.as_bytes();
    let mut headers = Vec::new();
    let mut at = skip_space(&text, 0);
    for level in 0..depth {
        if !text[at..].starts_with("for")
            || bytes
                .get(at + 3)
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            return Err(NestShape::NotNested(level + 1));
        }
        let open = skip_space(&text, at + 3);
        if bytes.get(open) != Some(&b'(') {
            return Err(NestShape::NoParenthesis);
        }
        let close = matching(&text, open).ok_or(NestShape::Unbalanced)?;
        let end = close + 1;
        let mut next = skip_space(&text, end);
        let mut brace = None;
        if level + 1 < depth && bytes.get(next) == Some(&b'{') {
            brace = Some(next);
            next = skip_space(&text, next + 1);
        }
        headers.push(Header {
            start: at,
            end,
            brace,
        });
        at = next;
    }
    let mut end = tail.len();
    for h in headers.iter().rev() {
        if h.brace.is_some() {
            end = text[..end].trim_end().len();
            if !text[..end].ends_with('}') {
                return Err(NestShape::BraceMisplaced);
            }
            end -= 1;
        }
    }
    let end = text[..end].trim_end().len();
    if end <= at {
        return Err(NestShape::NoBody);
    }
    Ok(NestText {
        text,
        headers,
        body: (at, end),
    })
}

/// The first byte at or after `i` that is not whitespace or inside a comment.
pub fn skip_space(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if s[i..].starts_with("//") {
            i = s[i..].find('\n').map_or(b.len(), |k| i + k);
        } else if s[i..].starts_with("/*") {
            i = s[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
        } else {
            return i;
        }
    }
}

/// The byte of the bracket closing the one at `open`.
pub fn matching(s: &str, open: usize) -> Option<usize> {
    let b = s.as_bytes();
    let (o, c) = match b[open] {
        b'(' => (b'(', b')'),
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let mut depth = 0usize;
    let mut i = open;
    while i < b.len() {
        if s[i..].starts_with("//") || s[i..].starts_with("/*") {
            i = skip_space(s, i);
            continue;
        }
        match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            x if x == o => depth += 1,
            x if x == c => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The three clauses of a header `for (init; cond; step)`, trimmed.
pub fn clauses(header: &str) -> Option<(&str, &str, &str)> {
    let open = header.find('(')?;
    let inner = &header[open + 1..header.rfind(')')?];
    let mut parts = inner.splitn(3, ';');
    Some((
        parts.next()?.trim(),
        parts.next()?.trim(),
        parts.next()?.trim(),
    ))
}

/// `(text)` unless `text` is one identifier or number.
pub fn paren(text: &str) -> String {
    let t = text.trim();
    if t.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
    {
        t.to_string()
    } else {
        format!("({t})")
    }
}

/// `text` with every identifier `var` replaced by `by` (outside comments,
/// strings and character literals).
pub fn substitute(text: &str, var: &str, by: &str) -> String {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("//") || text[i..].starts_with("/*") {
            let end = skip_space(text, i);
            out.push_str(&text[i..end]);
            i = end;
            continue;
        }
        match b[i] {
            q @ (b'"' | b'\'') => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i = (i + 1).min(b.len());
                out.push_str(&text[start..i]);
            }
            c if ident(c) => {
                let start = i;
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                let word = &text[start..i];
                let member = start > 0 && (b[start - 1] == b'.' || text[..start].ends_with("->"));
                if word == var && !member {
                    out.push_str(by);
                } else {
                    out.push_str(word);
                }
            }
            _ => {
                let c = text[i..].chars().next().unwrap_or(' ');
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitution_skips_comments_strings_and_longer_names() {
        assert_eq!(
            substitute("a[i] = ii + i; /* i */ \"i\"", "i", "(1 + 2 * i)"),
            "a[(1 + 2 * i)] = ii + (1 + 2 * i); /* i */ \"i\""
        );
    }

    #[test]
    fn brackets_match_across_comments() {
        let s = "(a /* ) */ + (b))";
        assert_eq!(matching(s, 0), Some(s.len() - 1));
    }
}
