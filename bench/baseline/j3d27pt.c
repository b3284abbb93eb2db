/* Hand-written baseline: AN5D j3d27pt (27-point box). */
#define DIMS 3
#include "common.h"
static const float W[3][3][3] = {
    {{0.01f, 0.02f, 0.01f}, {0.02f, 0.05f, 0.02f}, {0.01f, 0.02f, 0.01f}},
    {{0.02f, 0.05f, 0.02f}, {0.05f, 0.14f, 0.05f}, {0.02f, 0.05f, 0.02f}},
    {{0.01f, 0.02f, 0.01f}, {0.02f, 0.05f, 0.02f}, {0.01f, 0.02f, 0.01f}}
};
static void SWEEP(long n, const float *restrict in, float *restrict out)
{
#pragma omp parallel for schedule(static)
    for (long i = 1; i <= n - 2; i++)
        for (long j = 1; j <= n - 2; j++)
            for (long k = 1; k <= n - 2; k++) {
                float acc = 0.0f;
                _Pragma("GCC unroll 3") for (int di = -1; di <= 1; di++)
                    _Pragma("GCC unroll 3") for (int dj = -1; dj <= 1; dj++)
                        _Pragma("GCC unroll 3") for (int dk = -1; dk <= 1; dk++)
                            acc = acc + W[di + 1][dj + 1][dk + 1] * in[((i + di) * n + j + dj) * n + k + dk];
                out[(i * n + j) * n + k] = acc;
            }
}
#include "driver_float.h"
