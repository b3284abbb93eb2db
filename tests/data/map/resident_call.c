/* A time loop whose host code calls a function of the file: it may read or
   write the arrays, so none stays on the device (each launch copies). */
#include <stdio.h>

#define N 200
#define STEPS 5

static float u[N];

static void nudge(int t) { u[t] += 1.0f; }

int main(void) {
    for (int i = 0; i < N; i++)
        u[i] = (float)(i % 11);
    for (int t = 0; t < STEPS; t++) {
        for (int i = 0; i < N; i++)
            u[i] = 0.5f * u[i] + (float)t;
        nudge(t);
    }
    for (int i = 0; i < N; i += 23)
        printf("u[%d] = %.9g\n", i, u[i]);
    return 0;
}
