//! Whole `.cu` files as shipped: host code, `#include`s, macros and several
//! kernels, of which one is parsed as the CUDA subset.
//!
//! A scan that skips comments, string and character literals and
//! preprocessor lines finds every `__global__` function definition and its
//! extent (the braces matched). The chosen kernel is parsed from a *masked*
//! copy of the file: the same bytes at the same offsets for the kernel, for
//! the `#define`s before it (conditionals `#ifdef`/`#ifndef`/`#if 0`/`#else`
//! followed, `#undef` honoured) and for the `__device__` functions before it
//! that it calls; every other byte blanked to a space (newlines kept). So
//! spans, lines and columns are those of the user's file, and a rewrite of
//! the kernel by offsets leaves the rest of the file byte for byte.

use std::collections::{HashMap, HashSet};

use crate::source::Span;

/// A `__global__` function definition found in a file.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelExtent {
    /// Its name.
    pub name: String,
    /// Where the name is.
    pub name_span: Span,
    /// From `__global__` (or an `extern "C"` before it) through the closing `}`.
    pub span: Span,
    /// Whether its body has KaniCUDA's markers (`profile(...)` or `__opt__`).
    pub marked: bool,
}

/// One token of the scan: a word (identifier) or a punctuation byte.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Word(String),
    Punct(u8),
    Str,
}

/// A preprocessor line: where it is and its text.
#[derive(Clone, Debug)]
struct Directive {
    start: usize,
    end: usize,
}

/// The code tokens (comments, literals' contents and directives left out)
/// and the directives of `text`, in order.
fn scan(text: &str) -> (Vec<(Tok, usize, usize)>, Vec<Directive>) {
    let b = text.as_bytes();
    let mut toks = Vec::new();
    let mut dirs = Vec::new();
    let mut pos = 0;
    let mut line_start = true;
    while pos < b.len() {
        let c = b[pos];
        match c {
            b'\n' => {
                line_start = true;
                pos += 1;
            }
            b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => pos += 1,
            b'\\' if b.get(pos + 1) == Some(&b'\n') => pos += 2,
            b'/' if b.get(pos + 1) == Some(&b'/') => {
                while pos < b.len() && b[pos] != b'\n' {
                    // A line comment continues past `\` + newline.
                    if b[pos] == b'\\' && b.get(pos + 1) == Some(&b'\n') {
                        pos += 1;
                    }
                    pos += 1;
                }
            }
            b'/' if b.get(pos + 1) == Some(&b'*') => {
                pos = text[pos + 2..]
                    .find("*/")
                    .map_or(b.len(), |i| pos + 2 + i + 2);
            }
            b'#' if line_start => {
                let start = pos;
                while pos < b.len() && b[pos] != b'\n' {
                    if b[pos] == b'\\' && b.get(pos + 1) == Some(&b'\n') {
                        pos += 1;
                    } else if b[pos] == b'/' && b.get(pos + 1) == Some(&b'*') {
                        // A block comment may run past the line's end.
                        pos = text[pos + 2..]
                            .find("*/")
                            .map_or(b.len(), |i| pos + 2 + i + 1);
                    }
                    pos += 1;
                }
                pos = pos.min(b.len());
                dirs.push(Directive { start, end: pos });
            }
            b'"' | b'\'' => {
                let start = pos;
                pos += 1;
                while pos < b.len() && b[pos] != c && b[pos] != b'\n' {
                    pos += if b[pos] == b'\\' { 2 } else { 1 };
                }
                pos = (pos + 1).min(b.len());
                toks.push((Tok::Str, start, pos));
                line_start = false;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let start = pos;
                while pos < b.len() && (b[pos].is_ascii_alphanumeric() || b[pos] == b'_') {
                    pos += 1;
                }
                let word = &text[start..pos];
                // A raw string literal R"delim( ... )delim".
                if word.ends_with('R') && b.get(pos) == Some(&b'"') {
                    if let Some(open) = text[pos + 1..].find('(') {
                        let delim = &text[pos + 1..pos + 1 + open];
                        let close = format!("){delim}\"");
                        pos = text[pos + 1 + open..]
                            .find(&close)
                            .map_or(b.len(), |i| pos + 1 + open + i + close.len());
                        toks.push((Tok::Str, start, pos));
                        line_start = false;
                        continue;
                    }
                }
                toks.push((Tok::Word(word.to_string()), start, pos));
                line_start = false;
            }
            b'0'..=b'9' => {
                let start = pos;
                // Digits, suffixes, `.` and C++14's `1'000` separators.
                while pos < b.len()
                    && (b[pos].is_ascii_alphanumeric()
                        || b[pos] == b'.'
                        || (b[pos] == b'\''
                            && b.get(pos + 1).is_some_and(u8::is_ascii_alphanumeric)))
                {
                    pos += 1;
                }
                toks.push((Tok::Word(String::new()), start, pos));
                line_start = false;
            }
            _ => {
                let len = text[pos..].chars().next().map_or(1, char::len_utf8);
                toks.push((Tok::Punct(c), pos, pos + len));
                pos += len;
                line_start = false;
            }
        }
    }
    (toks, dirs)
}

/// The index of the token that closes the bracket opened at `toks[open]`
/// (`(` or `{`), or `None` when it is never closed.
fn matching(toks: &[(Tok, usize, usize)], open: usize) -> Option<usize> {
    let (o, c) = match toks[open].0 {
        Tok::Punct(b'(') => (b'(', b')'),
        Tok::Punct(b'{') => (b'{', b'}'),
        _ => return None,
    };
    let mut depth = 0usize;
    for (i, (t, _, _)) in toks.iter().enumerate().skip(open) {
        if *t == Tok::Punct(o) {
            depth += 1;
        } else if *t == Tok::Punct(c) {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// A function definition starting at the qualifier token `toks[at]`
/// (`__global__` or `__device__`): its name's token and the tokens of its
/// opening and closing brace. `None` for a declaration or a variable.
fn definition(toks: &[(Tok, usize, usize)], at: usize) -> Option<(usize, usize, usize)> {
    let mut i = at + 1;
    let mut name = None;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Word(w) if w == "__launch_bounds__" => {
                let open = i + 1;
                if toks.get(open).map(|t| &t.0) != Some(&Tok::Punct(b'(')) {
                    return None;
                }
                i = matching(toks, open)? + 1;
                continue;
            }
            Tok::Word(w) if !w.is_empty() => name = Some(i),
            Tok::Punct(b'(') => break,
            Tok::Punct(b'*' | b'&' | b':' | b'<' | b'>' | b',') => {}
            _ => return None,
        }
        i += 1;
    }
    let name = name?;
    let close_params = matching(toks, i)?;
    let open = close_params + 1;
    if toks.get(open).map(|t| &t.0) != Some(&Tok::Punct(b'{')) {
        return None;
    }
    Some((name, open, matching(toks, open)?))
}

fn word(toks: &[(Tok, usize, usize)], i: usize) -> Option<&str> {
    match toks.get(i) {
        Some((Tok::Word(w), _, _)) => Some(w.as_str()),
        _ => None,
    }
}

/// Every `__global__` function definition of `text`, in order.
pub fn kernels(text: &str) -> Vec<KernelExtent> {
    let (toks, _) = scan(text);
    extents(&toks, "__global__")
        .into_iter()
        .map(|(name, first, open, close)| {
            let body = &toks[open..close];
            let marked = body.iter().enumerate().any(|(k, (t, _, _))| match t {
                Tok::Word(w) if w == "__opt__" => true,
                Tok::Word(w) if w == "profile" => {
                    body.get(k + 1).map(|t| &t.0) == Some(&Tok::Punct(b'('))
                }
                _ => false,
            });
            KernelExtent {
                name: word(&toks, name).unwrap_or_default().to_string(),
                name_span: Span::new(toks[name].1, toks[name].2),
                span: Span::new(toks[first].1, toks[close].2),
                marked,
            }
        })
        .collect()
}

/// The definitions after qualifier `qualifier`: (name token, first token,
/// opening brace, closing brace). An `extern "C"` right before a
/// `__global__` belongs to it.
fn extents(toks: &[(Tok, usize, usize)], qualifier: &str) -> Vec<(usize, usize, usize, usize)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        if word(toks, i) == Some(qualifier) {
            if let Some((name, open, close)) = definition(toks, i) {
                let first =
                    if i >= 2 && toks[i - 1].0 == Tok::Str && word(toks, i - 2) == Some("extern") {
                        i - 2
                    } else {
                        i
                    };
                found.push((name, first, open, close));
                i = close + 1;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// The preprocessor line's directive word and the rest, comments dropped.
fn directive_parts(line: &str) -> (String, String) {
    let joined = line.replace("\\\n", " ");
    let rest = joined.trim_start().trim_start_matches('#').trim_start();
    let word: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    let rest = rest[word.len()..]
        .split("//")
        .next()
        .unwrap_or("")
        .trim()
        .to_string();
    (word, rest)
}

/// Whether a `#if` condition holds, as far as a scan can tell: `0`, `1`,
/// `defined(NAME)`, `defined NAME`, `!defined(NAME)`; anything else is taken
/// as true (its first branch kept).
fn condition(rest: &str, defined: &dyn Fn(&str) -> bool) -> bool {
    let mut rest = rest.trim();
    let mut negated = false;
    while let Some(inner) = rest.strip_prefix('!') {
        negated = !negated;
        rest = inner.trim_start();
    }
    let holds = if let Some(inner) = rest.strip_prefix("defined") {
        let name = inner
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
            .trim();
        defined(name)
    } else if let Ok(v) = rest.parse::<i64>() {
        v != 0
    } else {
        // Anything else keeps its first branch.
        return true;
    };
    holds != negated
}

/// The text the subset parses for `kernel`: `text` with everything blanked
/// but the kernel, the `#define`s before it that are in effect there, and the
/// `__device__` functions before it that it calls (directly or through
/// another). `defines` are the `-D` names.
pub fn masked_text(text: &str, kernel: &KernelExtent, defines: &[(String, String)]) -> String {
    let (toks, dirs) = scan(text);
    let before = kernel.span.start as usize;
    let mut keep: Vec<(usize, usize)> = vec![(before, kernel.span.end as usize)];
    // Defines in effect at the kernel: name -> its directive's range.
    let mut live: HashMap<String, (usize, usize)> = HashMap::new();
    // Conditionals: (this branch active, some branch taken, enclosing active).
    let mut stack: Vec<(bool, bool, bool)> = Vec::new();
    let active = |stack: &[(bool, bool, bool)]| stack.last().is_none_or(|s| s.0);
    for d in dirs.iter().filter(|d| d.start < before) {
        let (word, rest) = directive_parts(&text[d.start..d.end]);
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let is_defined = |n: &str| live.contains_key(n) || defines.iter().any(|(m, _)| m == n);
        let on = active(&stack);
        match word.as_str() {
            "ifdef" | "ifndef" | "if" => {
                let holds = match word.as_str() {
                    "ifdef" => is_defined(&name),
                    "ifndef" => !is_defined(&name),
                    _ => condition(&rest, &is_defined),
                };
                stack.push((on && holds, holds, on));
            }
            "elif" => {
                if let Some(top) = stack.last_mut() {
                    let holds = !top.1 && condition(&rest, &is_defined);
                    *top = (top.2 && holds, top.1 || holds, top.2);
                }
            }
            "else" => {
                if let Some(top) = stack.last_mut() {
                    *top = (top.2 && !top.1, true, top.2);
                }
            }
            "endif" => {
                stack.pop();
            }
            "define" if on && !name.is_empty() => {
                live.insert(name, (d.start, d.end));
            }
            "undef" if on => {
                live.remove(&name);
            }
            _ => {}
        }
    }
    // Device functions before the kernel, and the defines in effect there,
    // that the kernel uses, directly or through one another.
    let functions: Vec<(String, usize, usize)> = extents(&toks, "__device__")
        .into_iter()
        .filter(|&(_, _, _, close)| toks[close].2 <= before)
        .map(|(name, first, _, close)| {
            (
                word(&toks, name).unwrap_or_default().to_string(),
                toks[first].1,
                toks[close].2,
            )
        })
        .chain(live.into_iter().map(|(name, (s, e))| (name, s, e)))
        .collect();
    let mut used: HashSet<String> = identifiers(&text[before..kernel.span.end as usize]);
    let mut taken = vec![false; functions.len()];
    loop {
        let mut grew = false;
        for (k, (name, start, end)) in functions.iter().enumerate() {
            if !taken[k] && used.contains(name.as_str()) {
                taken[k] = true;
                grew = true;
                keep.push((*start, *end));
                used.extend(identifiers(&text[*start..*end]));
            }
        }
        if !grew {
            break;
        }
    }
    mask(text, &keep)
}

/// The identifiers of a piece of code (a rough split: words in comments and
/// strings count too, which only keeps a definition more).
fn identifiers(code: &str) -> HashSet<String> {
    code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .map(str::to_string)
        .collect()
}

/// `text` with every byte outside `keep` blanked to a space, newlines kept.
fn mask(text: &str, keep: &[(usize, usize)]) -> String {
    let mut kept = vec![false; text.len()];
    for &(s, e) in keep {
        for k in kept.iter_mut().take(e.min(text.len())).skip(s) {
            *k = true;
        }
    }
    let bytes: Vec<u8> = text
        .bytes()
        .zip(&kept)
        .map(|(b, &k)| if k || b == b'\n' { b } else { b' ' })
        .collect();
    // Kept ranges start and end at ASCII bytes, blanked ones become spaces.
    String::from_utf8(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"#include <stdio.h>
#include "util.h"
#define N 8 // the size
#ifdef USE_DOUBLE
#define real double
#else
#define real float
#endif
#define SQ(x) ((x)*(x))
/* __global__ void commented(real* a) { } */
static const char* s = "__global__ void instring() {";
__device__ real twice(real v) { return v + v; }
__device__ real unused(real v) { return v; }
__global__ void first(real* a) { a[0] = twice(a[0]) + N; }
extern "C" __global__ void __launch_bounds__(64) second(real* a) {
    profile("i");
    int i = threadIdx.x;
    a[i] = __opt__.a[i];
}
__global__ void declared(real* a);
int main() { printf("%d\n", N + 1'000); first<<<1, 1>>>(0); return 0; }
__global__ void last(real* a) { a[0] = '}'; }
"#;

    #[test]
    fn finds_the_kernels_outside_comments_and_strings() {
        let found = kernels(FILE);
        let names: Vec<&str> = found.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(names, ["first", "second", "last"]);
        assert!(!found[0].marked && found[1].marked);
        let second = &FILE[found[1].span.range()];
        assert!(second.starts_with("extern \"C\" __global__") && second.ends_with("}"));
        assert!(FILE[found[0].span.range()].ends_with("+ N; }"));
    }

    #[test]
    fn the_masked_text_keeps_offsets_defines_and_called_functions() {
        let found = kernels(FILE);
        let masked = masked_text(FILE, &found[0], &[]);
        assert_eq!(masked.len(), FILE.len());
        assert_eq!(masked.lines().count(), FILE.lines().count());
        assert!(!masked.contains("#include") && !masked.contains("main"));
        assert!(masked.contains("#define real float") && !masked.contains("double"));
        assert!(masked.contains("#define N 8") && !masked.contains("SQ"));
        assert!(masked.contains("twice") && !masked.contains("unused"));
        let span = found[0].span.range();
        assert_eq!(&masked[span.clone()], &FILE[span]);
        let with_double = masked_text(FILE, &found[0], &[("USE_DOUBLE".into(), "1".into())]);
        assert!(with_double.contains("#define real double") && !with_double.contains("float"));
    }

    #[test]
    fn conditionals_negate_and_odd_text_never_panics() {
        let kernel = "__global__ void k(float* a) { a[0] = B; }\n";
        let not = format!("#if !defined(A)\n#define B 1\n#endif\n{kernel}");
        let found = kernels(&not);
        assert!(masked_text(&not, &found[0], &[]).contains("#define B 1"));
        let twice = not.replace("#if !", "#if !!");
        assert!(!masked_text(&twice, &kernels(&twice)[0], &[]).contains("#define B 1"));
        for text in [
            "#define A /* never closed",
            "__global__ void k(",
            "__global__ void k() {",
            "\"unterminated",
            "R\"x(",
            "'",
            "é __global__ é void ü() { ö }",
            "#if\n#elif\n#else\n#endif\n#endif\n__global__ void k() { }",
        ] {
            for k in kernels(text) {
                assert_eq!(masked_text(text, &k, &[]).len(), text.len());
            }
        }
    }
}
