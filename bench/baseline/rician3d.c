/* Hand-written baseline: Rician denoise (guide fig. 7.1) with the SDSL program's
   semantics: two U buffers swapped instead of copied, the max-difference check
   every 10 iterations. */
#include "common.h"

#define idx(z, y, x) (((z) * n + (y)) * n + (x))

int main(int argc, char **argv)
{
    long n, steps;
    bench_args(argc, argv, &n, &steps);
    const long count = n * n * n;
    double *U0 = (double *)bench_alloc((size_t)count * sizeof(double));
    double *U1 = (double *)bench_alloc((size_t)count * sizeof(double));
    double *G = (double *)bench_alloc((size_t)count * sizeof(double));
    double *F = (double *)bench_alloc((size_t)count * sizeof(double));
    for (long i = 0; i < count; i++) U0[i] = U1[i] = G[i] = F[i] = bench_value(i);
    const double sigma = 0.05, lambda = 0.065;
    const double DT = 5.0, EPSILON = 1.0E-20, sigma2 = sigma * sigma, gamma = lambda / sigma2, TOL = 0.00001;
    long t;
    double start = omp_get_wtime();
    for (t = 1; t <= steps; t++) {
        const double *restrict u = U0;
        double *restrict un = U1;
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++)
            for (long j = 1; j < n - 1; j++)
                for (long k = 1; k < n - 1; k++) {
                    const double c = u[idx(i, j, k)];
                    G[idx(i, j, k)] = 1.0 / sqrt(EPSILON + (c - u[idx(i, j + 1, k)]) * (c - u[idx(i, j + 1, k)])
                                                 + (c - u[idx(i, j - 1, k)]) * (c - u[idx(i, j - 1, k)])
                                                 + (c - u[idx(i, j, k + 1)]) * (c - u[idx(i, j, k + 1)])
                                                 + (c - u[idx(i, j, k - 1)]) * (c - u[idx(i, j, k - 1)])
                                                 + (c - u[idx(i + 1, j, k)]) * (c - u[idx(i + 1, j, k)])
                                                 + (c - u[idx(i - 1, j, k)]) * (c - u[idx(i - 1, j, k)]));
                }
#pragma omp parallel for schedule(static)
        for (long i = 1; i < n - 1; i++)
            for (long j = 1; j < n - 1; j++)
                for (long k = 1; k < n - 1; k++) {
                    double r = u[idx(i, j, k)] * F[idx(i, j, k)] / sigma2;
                    r = (r * (2.38944 + r * (0.950037 + r))) / (4.65314 + r * (2.57541 + r * (1.48937 + r)));
                    un[idx(i, j, k)] =
                        (u[idx(i, j, k)]
                         + DT * (u[idx(i, j + 1, k)] * G[idx(i, j + 1, k)] + u[idx(i, j - 1, k)] * G[idx(i, j - 1, k)]
                                 + u[idx(i, j, k + 1)] * G[idx(i, j, k + 1)] + u[idx(i, j, k - 1)] * G[idx(i, j, k - 1)]
                                 + u[idx(i + 1, j, k)] * G[idx(i + 1, j, k)] + u[idx(i - 1, j, k)] * G[idx(i - 1, j, k)]
                                 + gamma * F[idx(i, j, k)] * r))
                        / (1.0 + DT * (G[idx(i, j + 1, k)] + G[idx(i, j - 1, k)] + G[idx(i, j, k + 1)]
                                       + G[idx(i, j, k - 1)] + G[idx(i + 1, j, k)] + G[idx(i - 1, j, k)] + gamma));
                }
        int stop = 0;
        if (t % 10 == 0) {
            double max_diff = -HUGE_VAL;
#pragma omp parallel for schedule(static) reduction(max : max_diff)
            for (long i = 1; i < n - 1; i++)
                for (long j = 1; j < n - 1; j++)
                    for (long k = 1; k < n - 1; k++) {
                        const double d = fabs(un[idx(i, j, k)] - u[idx(i, j, k)]);
                        if (d > max_diff) max_diff = d;
                    }
            stop = max_diff < TOL;
        }
        double *tmp = U0; U0 = U1; U1 = tmp;
        if (stop) break;
    }
    double seconds = omp_get_wtime() - start;
    double checksum = 0.0;
    for (long i = 0; i < count; i++) checksum += U0[i];
    bench_report(seconds, t > steps ? steps : t, checksum);
    free(U0); free(U1); free(G); free(F);
    return 0;
}
