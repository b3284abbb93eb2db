/* A nest calling functions of the file: `smooth` calls `clampf` (a helper of
   scalars only), both copied into the kernel; `bump` writes a global, so the
   nest calling it stays on the CPU for a GPU (OpenMP still runs it). */
#include <stdio.h>
#include <math.h>

#define N 500

static float a[N], b[N], c[N];
static float total;

static float clampf(float x, float lo, float hi) {
    if (x < lo)
        return lo;
    return x > hi ? hi : x;
}

static float smooth(float left, float mid, float right) {
    float s = 0.25f * left + 0.5f * mid + 0.25f * right;
    for (int k = 0; k < 2; k++)
        s = s * 1.5f - 0.125f;
    return clampf(sqrtf(fabsf(s)), 0.1f, 2.0f);
}

static float bump(float x) {
    total = total + x;
    return x;
}

int main(void) {
    for (int i = 0; i < N; i++)
        a[i] = (float)((i * 7) % 23) / 5.0f - 1.0f;
    for (int i = 1; i < N - 1; i++)
        b[i] = smooth(a[i - 1], a[i], a[i + 1]);
    for (int i = 0; i < N; i++)
        c[i] = bump(a[i]);
    for (int i = 0; i < N; i += 41)
        printf("b[%d] = %.9g c[%d] = %.9g\n", i, b[i], i, c[i]);
    return 0;
}
