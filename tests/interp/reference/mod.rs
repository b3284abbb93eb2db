//! Direct Rust ports of reference codes, written as loops with the operation
//! order and types that C would use for the same text (no FMA), so that the
//! interpreter can be compared with them bit for bit.
#![allow(dead_code)]

pub mod rician;

use stencilc::ir::BoundaryMode;

/// Jacobi 2-D as `examples/jacobi2d.sdsl` computes it, on `a[dim1][dim0]`:
/// edges copied, interior `0.2f * (five neighbours summed left to right)`, and
/// every 4th iteration the largest `fabs` change (in double) checked against
/// `.00001f`. Returns the newest level and the iterations run.
pub fn jacobi2d(input: &[f32], dim0: usize, dim1: usize, max_iters: usize) -> (Vec<f32>, usize) {
    let idx = |i: usize, j: usize| i * dim0 + j;
    let mut a0 = input.to_vec();
    let mut a1 = input.to_vec();
    for k in 1..=max_iters {
        for j in 0..dim0 {
            a1[idx(0, j)] = a0[idx(0, j)];
            a1[idx(dim1 - 1, j)] = a0[idx(dim1 - 1, j)];
        }
        for i in 0..dim1 {
            a1[idx(i, 0)] = a0[idx(i, 0)];
            a1[idx(i, dim0 - 1)] = a0[idx(i, dim0 - 1)];
        }
        for i in 1..dim1 - 1 {
            for j in 1..dim0 - 1 {
                let one_fifth = 0.2f32;
                a1[idx(i, j)] = one_fifth
                    * (a0[idx(i - 1, j)]
                        + a0[idx(i, j - 1)]
                        + a0[idx(i, j)]
                        + a0[idx(i, j + 1)]
                        + a0[idx(i + 1, j)]);
            }
        }
        let mut stop = false;
        if k % 4 == 0 {
            let mut max_diff = f64::NEG_INFINITY;
            for i in 0..dim1 {
                for j in 0..dim0 {
                    let d = ((a1[idx(i, j)] - a0[idx(i, j)]) as f64).abs();
                    if d > max_diff {
                        max_diff = d;
                    }
                }
            }
            stop = max_diff < 0.00001f32 as f64;
        }
        std::mem::swap(&mut a0, &mut a1);
        if stop {
            return (a0, k);
        }
    }
    (a0, max_iters)
}

/// The 7-point heat step of `examples/heat3d.sdsl` on `u[nz][ny][nx]`, `steps` times.
pub fn heat3d(
    input: &[f64],
    nx: usize,
    ny: usize,
    nz: usize,
    steps: usize,
    alpha: f64,
) -> Vec<f64> {
    let idx = |z: usize, y: usize, x: usize| (z * ny + y) * nx + x;
    let mut u0 = input.to_vec();
    let mut u1 = input.to_vec();
    for _ in 0..steps {
        for z in 1..nz - 1 {
            for y in 1..ny - 1 {
                for x in 1..nx - 1 {
                    u1[idx(z, y, x)] = u0[idx(z, y, x)]
                        + alpha
                            * (u0[idx(z - 1, y, x)]
                                + u0[idx(z + 1, y, x)]
                                + u0[idx(z, y - 1, x)]
                                + u0[idx(z, y + 1, x)]
                                + u0[idx(z, y, x - 1)]
                                + u0[idx(z, y, x + 1)]
                                - 6.0 * u0[idx(z, y, x)]);
                }
            }
        }
        std::mem::swap(&mut u0, &mut u1);
    }
    u0
}

/// The leapfrog step of `examples/wave2d.sdsl` on `u[m][n]` (three levels),
/// with its energy reduction summed per row and then over rows, in float.
/// Returns the newest level and the last energy.
pub fn wave2d(input: &[f32], m: usize, n: usize, steps: usize, c2: f32) -> (Vec<f32>, f32) {
    let idx = |i: usize, j: usize| i * n + j;
    let mut um = input.to_vec();
    let mut u0 = input.to_vec();
    let mut u1 = input.to_vec();
    let mut energy = 0.0f32;
    for _ in 0..steps {
        for i in 1..m - 1 {
            for j in 1..n - 1 {
                u1[idx(i, j)] = 2.0f32 * u0[idx(i, j)] - um[idx(i, j)]
                    + c2 * (u0[idx(i - 1, j)]
                        + u0[idx(i + 1, j)]
                        + u0[idx(i, j - 1)]
                        + u0[idx(i, j + 1)]
                        - 4.0f32 * u0[idx(i, j)]);
            }
        }
        energy = 0.0;
        for i in 0..m {
            let mut row = 0.0f32;
            for j in 0..n {
                row += u1[idx(i, j)] * u1[idx(i, j)];
            }
            energy += row;
        }
        // Rotate (-1, 0, 1) <- (0, 1, -1).
        std::mem::swap(&mut um, &mut u0);
        std::mem::swap(&mut u0, &mut u1);
    }
    (u0, energy)
}

/// The weights of a Gaussian of standard deviation `sigma` over `-r..=r`,
/// normalised to sum to 1.
pub fn gaussian_weights(sigma: f64, r: i64) -> Vec<f64> {
    let w: Vec<f64> = (-r..=r)
        .map(|x| (-((x * x) as f64) / (2.0 * sigma * sigma)).exp())
        .collect();
    let total: f64 = w.iter().sum();
    w.iter().map(|v| v / total).collect()
}

/// A direct 2-D convolution of `img[height][width]` with the outer product of
/// `w` (radius `w.len() / 2`), reads outside the image defined by `mode`.
pub fn convolve(
    img: &[f32],
    width: usize,
    height: usize,
    w: &[f64],
    mode: BoundaryMode,
) -> Vec<f64> {
    let r = (w.len() / 2) as i64;
    let (wi, hi) = (width as i64, height as i64);
    let read = |y: i64, x: i64| match (mode.resolve(y, hi), mode.resolve(x, wi)) {
        (Some(y), Some(x)) => img[(y * wi + x) as usize] as f64,
        _ => 0.0,
    };
    let mut out = vec![0.0; width * height];
    for y in 0..hi {
        for x in 0..wi {
            let mut acc = 0.0;
            for dy in -r..=r {
                for dx in -r..=r {
                    acc += w[(dy + r) as usize] * w[(dx + r) as usize] * read(y + dy, x + dx);
                }
            }
            out[(y * wi + x) as usize] = acc;
        }
    }
    out
}

/// A deterministic pseudo-random sequence in `[0, 1)` (64-bit LCG), for inputs.
pub fn random_unit(seed: u64, n: usize) -> Vec<f64> {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}
