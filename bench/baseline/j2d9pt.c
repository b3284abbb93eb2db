/* Hand-written baseline: AN5D j2d9pt (star, radius 2). */
#define DIMS 2
#include "common.h"
static void SWEEP(long n, const float *restrict in, float *restrict out)
{
#pragma omp parallel for schedule(static)
    for (long i = 2; i <= n - 3; i++)
        for (long j = 2; j <= n - 3; j++)
            out[i * n + j] = (7.1f * in[(i - 2) * n + j] + 5.1f * in[(i - 1) * n + j] + 9.2f * in[i * n + j - 2]
                              + 12.1f * in[i * n + j - 1] + 15.0f * in[i * n + j] + 12.2f * in[i * n + j + 1]
                              + 9.1f * in[i * n + j + 2] + 5.2f * in[(i + 1) * n + j] + 7.2f * in[(i + 2) * n + j])
                             / 118.0f;
}
#include "driver_float.h"
