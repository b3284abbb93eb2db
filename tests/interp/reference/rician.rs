//! The Rician denoise of the SDSL User Guide, figure 7.1, ported line by line
//! from C (with the closing parenthesis of the update of `U` restored:
//! `U = (U0 + DT*(sum U0*G + gamma*F*r)) / (1.0 + DT*(sum G + gamma))`).

/// Runs the C reference `rician3d` on `f[dim2][dim1][dim0]`; returns `U` and
/// the number of iterations run (the C breaks after the iteration in which
/// every `|U - U0| <= TOL`).
pub fn rician3d(
    f: &[f64],
    sigma: f64,
    lambda: f64,
    dim0: usize,
    dim1: usize,
    dim2: usize,
) -> (Vec<f64>, usize) {
    let n = dim0 * dim1 * dim2;
    let mut u0 = vec![0.0f64; n];
    let mut g = vec![0.0f64; n];
    let mut u = f.to_vec();

    const DT: f64 = 5.0;
    const EPSILON: f64 = 1.0E-20;
    let sigma2 = sigma * sigma;
    let gamma = lambda / sigma2;

    let max_iter = 50;
    const TOL: f64 = 0.00001;

    let idx = |z: usize, y: usize, x: usize| x + y * dim0 + z * dim0 * dim1;
    for t in 0..max_iter {
        u0.copy_from_slice(&u);
        for i in 1..dim2 - 1 {
            for j in 1..dim1 - 1 {
                for k in 1..dim0 - 1 {
                    let c = u0[idx(i, j, k)];
                    g[idx(i, j, k)] = 1.0
                        / (EPSILON
                            + (c - u0[idx(i, j + 1, k)]) * (c - u0[idx(i, j + 1, k)])
                            + (c - u0[idx(i, j - 1, k)]) * (c - u0[idx(i, j - 1, k)])
                            + (c - u0[idx(i, j, k + 1)]) * (c - u0[idx(i, j, k + 1)])
                            + (c - u0[idx(i, j, k - 1)]) * (c - u0[idx(i, j, k - 1)])
                            + (c - u0[idx(i + 1, j, k)]) * (c - u0[idx(i + 1, j, k)])
                            + (c - u0[idx(i - 1, j, k)]) * (c - u0[idx(i - 1, j, k)]))
                        .sqrt();
                }
            }
        }
        let mut converged = true;
        for i in 1..dim2 - 1 {
            for j in 1..dim1 - 1 {
                for k in 1..dim0 - 1 {
                    let mut r = u0[idx(i, j, k)] * f[idx(i, j, k)] / sigma2;
                    r = (r * (2.38944 + r * (0.950037 + r)))
                        / (4.65314 + r * (2.57541 + r * (1.48937 + r)));
                    u[idx(i, j, k)] = (u0[idx(i, j, k)]
                        + DT * (u0[idx(i, j + 1, k)] * g[idx(i, j + 1, k)]
                            + u0[idx(i, j - 1, k)] * g[idx(i, j - 1, k)]
                            + u0[idx(i, j, k + 1)] * g[idx(i, j, k + 1)]
                            + u0[idx(i, j, k - 1)] * g[idx(i, j, k - 1)]
                            + u0[idx(i + 1, j, k)] * g[idx(i + 1, j, k)]
                            + u0[idx(i - 1, j, k)] * g[idx(i - 1, j, k)]
                            + gamma * f[idx(i, j, k)] * r))
                        / (1.0
                            + DT * (g[idx(i, j + 1, k)]
                                + g[idx(i, j - 1, k)]
                                + g[idx(i, j, k + 1)]
                                + g[idx(i, j, k - 1)]
                                + g[idx(i + 1, j, k)]
                                + g[idx(i - 1, j, k)]
                                + gamma));
                    if (u0[idx(i, j, k)] - u[idx(i, j, k)]).abs() > TOL {
                        converged = false;
                    }
                }
            }
        }
        if converged {
            return (u, t + 1);
        }
    }
    (u, max_iter)
}
