/* Hand-written baseline: AN5D star3d1r (7-point star). */
#define DIMS 3
#include "common.h"
static void SWEEP(long n, const float *restrict in, float *restrict out)
{
    const long s = n * n;
#pragma omp parallel for schedule(static)
    for (long i = 1; i <= n - 2; i++)
        for (long j = 1; j <= n - 2; j++)
            for (long k = 1; k <= n - 2; k++) {
                const long p = i * s + j * n + k;
                out[p] = 0.2500f * in[p] + 0.1248f * in[p - s] + 0.1249f * in[p + s] + 0.1250f * in[p - n]
                         + 0.1251f * in[p + n] + 0.1252f * in[p - 1] + 0.1253f * in[p + 1];
            }
}
#include "driver_float.h"
