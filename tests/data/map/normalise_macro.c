/* A macro names the loop variable where the rewrite cannot see it: the
   normalised text would not mean the same, so the rewrite is dropped. */
#include <stdio.h>

#define N 20
#define ROW b[i]

static double a[N][N], b[N][N];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            b[i][j] = i + 0.5 * j;
    for (int i = 1; i < N - 1; i += 2)
        for (int j = 0; j < N; j++)
            a[i][j] = ROW[j] * 2.0;
    for (int i = 1; i < N; i += 4)
        printf("a[%d][3] = %.17g\n", i, a[i][3]);
    return 0;
}
