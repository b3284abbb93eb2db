/* The first statement reads c[i - 1], which the second wrote in the
   iteration before: a cycle across the split, no fission. */
#include <stdio.h>

#define N 1001

static double a[N], b[N], c[N];

int main(void) {
    for (int i = 0; i < N; i++)
        a[i] = (double)((i * 13) % 29) / 29.0;
    c[0] = 1.0;
    for (int i = 1; i < N; i++) {
        b[i] = a[i] * 0.5 + c[i - 1];
        c[i] = b[i] * 0.25 + a[i];
    }
    for (int i = 1; i < N; i += 97)
        printf("b[%d] = %.17g, c[%d] = %.17g\n", i, b[i], i, c[i]);
    return 0;
}
