/* Hand-written baseline: AN5D gradient2d. */
#define DIMS 2
#include "common.h"
static void SWEEP(long n, const float *restrict in, float *restrict out)
{
#pragma omp parallel for schedule(static)
    for (long i = 1; i <= n - 2; i++)
        for (long j = 1; j <= n - 2; j++) {
            const long p = i * n + j;
            const float c = in[p];
            out[p] = c + 1.0f / sqrtf(0.0001f + (c - in[p - n]) * (c - in[p - n]) + (c - in[p + n]) * (c - in[p + n])
                                      + (c - in[p - 1]) * (c - in[p - 1]) + (c - in[p + 1]) * (c - in[p + 1]));
        }
}
#include "driver_float.h"
