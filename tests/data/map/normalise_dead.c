/* A stride-3 loop whose variable is declared outside it but assigned again
   before anything reads it: the normalised loop declares its own `i`, and
   the program cannot tell. */
#include <stdio.h>

#define N 100

static double a[N], b[N];

int main(void) {
    int i;
    for (i = 0; i < N; i++)
        b[i] = (double)(i % 7);
    for (i = 2; i < N; i += 3)
        a[i] = 3.0 * b[i];
    for (i = 0; i < N; i += 9)
        printf("a[%d] = %.17g\n", i, a[i]);
    return 0;
}
