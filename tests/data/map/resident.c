/* A time loop around two direct kernels (neither is a stencil: `w` is read at
   the loop variable's value). `u` and `w` are touched by the kernels alone and
   stay on the device across the steps; `v` is read on the host after each
   step, so it is copied around each launch. */
#include <stdio.h>

#define N 300
#define STEPS 7

static float u[N], v[N], w[STEPS];

int main(void) {
    for (int i = 0; i < N; i++) {
        u[i] = (float)(i % 17) / 17.0f;
        v[i] = 0.0f;
    }
    for (int s = 0; s < STEPS; s++)
        w[s] = 0.5f + 0.0625f * (float)s;
    float trace = 0.0f;
    for (int t = 0; t < STEPS; t++) {
        for (int i = 0; i < N; i++)
            v[i] = w[t] * u[i] + (float)i;
        for (int i = 0; i < N; i++)
            u[i] = 0.25f * u[i] + 0.001f * v[i];
        trace = trace + v[t * 13];
    }
    printf("trace %.9g\n", trace);
    for (int i = 0; i < N; i += 37)
        printf("u[%d] = %.9g v[%d] = %.9g\n", i, u[i], i, v[i]);
    return 0;
}
