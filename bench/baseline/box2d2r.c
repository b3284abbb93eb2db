/* Hand-written baseline: AN5D box2d2r (25-point box, radius 2). */
#define DIMS 2
#include "common.h"
static const float W[5][5] = {
    {0.003076923079788685f, 0.00615384615957737f, 0.009230769239366055f, 0.01230769231915474f, 0.015384615398943424f},
    {0.01846153847873211f, 0.02153846062719822f, 0.02461538463830948f, 0.02769230678677559f, 0.03076923079788685f},
    {0.03384615480899811f, 0.03692307695746422f, 0.03999999910593033f, 0.04307692125439644f, 0.04615384712815285f},
    {0.04923076927661896f, 0.05230769142508507f, 0.05538461357355118f, 0.05846153944730759f, 0.0615384615957737f},
    {0.06461538374423981f, 0.06769230961799622f, 0.07076922804117203f, 0.07384615391492844f, 0.07692307978868484f}
};
static void SWEEP(long n, const float *restrict in, float *restrict out)
{
#pragma omp parallel for schedule(static)
    for (long i = 2; i <= n - 3; i++)
        for (long j = 2; j <= n - 3; j++) {
            float acc = 0.0f;
            _Pragma("GCC unroll 5") for (int di = -2; di <= 2; di++)
                _Pragma("GCC unroll 5") for (int dj = -2; dj <= 2; dj++)
                    acc = acc + W[di + 2][dj + 2] * in[(i + di) * n + j + dj];
            out[i * n + j] = acc;
        }
}
#include "driver_float.h"
