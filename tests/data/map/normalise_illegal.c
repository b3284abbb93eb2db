/* A stride-3 loop whose variable lives on after it: normalising would
   change its final value, so it is left as written. */
#include <stdio.h>

#define N 100

static double a[N], b[N];

int main(void) {
    int i;
    for (i = 0; i < N; i++)
        b[i] = (double)(i % 7);
    for (i = 2; i < N; i += 3)
        a[i] = 3.0 * b[i];
    printf("i = %d, a[%d] = %.17g\n", i, N - 2, a[N - 2]);
    return 0;
}
