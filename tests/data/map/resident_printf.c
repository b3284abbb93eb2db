/* A time loop that prints on the host at each step: `printf` reads only its
   arguments, so `u`, which the kernels alone touch, stays on the device
   across the steps; `v`, printed at each step, is copied around each
   launch. */
#include <stdio.h>

#define N 256
#define STEPS 4

static float u[N], v[N];

int main(void) {
    for (int i = 0; i < N; i++) {
        u[i] = (float)(i % 13) / 13.0f;
        v[i] = 0.0f;
    }
    for (int t = 0; t < STEPS; t++) {
        for (int i = 0; i < N; i++)
            v[i] = 0.5f * u[i] + (float)t;
        for (int i = 0; i < N; i++)
            u[i] = 0.75f * u[i] + 0.125f * v[i];
        printf("step %d: v[%d] = %.9g\n", t, 5 * t, v[5 * t]);
    }
    for (int i = 0; i < N; i += 31)
        printf("u[%d] = %.9g\n", i, u[i]);
    return 0;
}
