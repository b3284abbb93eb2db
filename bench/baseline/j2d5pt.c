/* Hand-written baseline: AN5D j2d5pt. */
#define DIMS 2
#include "common.h"
static void SWEEP(long n, const float *restrict in, float *restrict out)
{
#pragma omp parallel for schedule(static)
    for (long i = 1; i <= n - 2; i++)
        for (long j = 1; j <= n - 2; j++)
            out[i * n + j] = (5.1f * in[(i - 1) * n + j] + 12.1f * in[i * n + j - 1] + 15.0f * in[i * n + j]
                              + 12.2f * in[i * n + j + 1] + 5.2f * in[(i + 1) * n + j]) / 118.0f;
}
#include "driver_float.h"
