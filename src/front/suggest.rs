//! "Did you mean …?" suggestions for misspelt names.

/// The candidate closest to `name` by edit distance, if it is close enough to be
/// a plausible typo (at most one edit per three characters, and at least one).
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (edit_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, c)| c)
}

/// Edit distance counting insertions, deletions, substitutions and swaps of
/// adjacent characters (optimal string alignment); names differing only in
/// case are one edit apart (so `dt` suggests `DT`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    if a.eq_ignore_ascii_case(b) {
        return 1;
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // d[i][j]: distance between the first i characters of a and the first j of b.
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(closest("sigam", ["sigma", "lambda"]), Some("sigma"));
        assert_eq!(closest("dt", ["DT", "EPSILON"]), Some("DT"));
        assert_eq!(closest("alpah", ["alpha", "n"]), Some("alpha"));
        assert_eq!(closest("xyz", ["sigma", "lambda"]), None);
    }
}
