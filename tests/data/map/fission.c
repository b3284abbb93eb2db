/* One loop, two statements: the first is parallel, the second carries a
   recurrence. Fission maps the first and keeps the second on the CPU. */
#include <stdio.h>

#define N 1001

static double a[N], b[N], c[N];

int main(void) {
    for (int i = 0; i < N; i++)
        a[i] = (double)((i * 13) % 29) / 29.0;
    c[0] = 1.0;
    for (int i = 1; i < N; i++) {
        b[i] = a[i] * 0.5 + a[i - 1];
        c[i] = c[i - 1] * 0.25 + b[i];
    }
    for (int i = 1; i < N; i += 97)
        printf("b[%d] = %.17g, c[%d] = %.17g\n", i, b[i], i, c[i]);
    return 0;
}
