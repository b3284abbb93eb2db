//! Which variables to try first: those most correlated with the target, by
//! |Pearson r| over the profiled rows (the slides' profile analysis).

/// Pearson's correlation coefficient of two equally long columns; 0 when
/// either is constant (it then says nothing about the other) or empty.
pub fn pearson(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len().min(ys.len());
    if n == 0 {
        return 0.0;
    }
    let mean = |v: &[f64]| v[..n].iter().sum::<f64>() / n as f64;
    let (mx, my) = (mean(xs), mean(ys));
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (x, y) in xs[..n].iter().zip(&ys[..n]) {
        let (dx, dy) = (x - mx, y - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx <= 0.0 || syy <= 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

/// The `count` variables (positions in the rows) ordered by |r| with the
/// target, highest first, ties in profile order; with `by_correlation` off,
/// the profile order itself. A row without a variable counts it as 0.
pub fn order_variables(
    count: usize,
    rows: &[&[i64]],
    target: &[f64],
    by_correlation: bool,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..count).collect();
    if by_correlation {
        let strength: Vec<f64> = (0..count)
            .map(|v| {
                let column: Vec<f64> = rows
                    .iter()
                    .map(|r| r.get(v).copied().unwrap_or(0) as f64)
                    .collect();
                pearson(&column, target).abs()
            })
            .collect();
        // A stable sort keeps the profile order among equals.
        order.sort_by(|&a, &b| strength[b].total_cmp(&strength[a]));
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_of_lines_and_constants() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((pearson(&x, &[2.0, 4.0, 6.0, 8.0]) - 1.0).abs() < 1e-12);
        assert!((pearson(&x, &[8.0, 6.0, 4.0, 2.0]) + 1.0).abs() < 1e-12);
        assert_eq!(pearson(&x, &[5.0; 4]), 0.0);
        assert_eq!(pearson(&[], &[]), 0.0);
    }

    #[test]
    fn orders_by_absolute_correlation() {
        // Target = 10 - 2 * v1; v0 is noise, v2 loosely related, v3 constant.
        let rows: Vec<[i64; 4]> = (0..8)
            .map(|k| [(k * 5) % 3, k, k / 3, 7])
            .collect::<Vec<_>>();
        let rows: Vec<&[i64]> = rows.iter().map(|r| &r[..]).collect();
        let target: Vec<f64> = rows.iter().map(|r| (10 - 2 * r[1]) as f64).collect();
        assert_eq!(order_variables(4, &rows, &target, true), vec![1, 2, 0, 3]);
        assert_eq!(order_variables(4, &rows, &target, false), vec![0, 1, 2, 3]);
    }
}
