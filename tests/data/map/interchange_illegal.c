/* The inner loop walks the rows, but moving `j` innermost would reverse the
   dependence of distance (j: 1, i: -1): the interchange is illegal. */
#include <stdio.h>

#define N 37
#define M 53

static double a[N][M];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            a[i][j] = (double)((i * 5 + j) % 7);
    for (int j = 1; j < M; j++)
        for (int i = 0; i < N - 1; i++)
            a[i][j] = 0.5 * a[i + 1][j - 1] + 1.0;
    for (int i = 0; i < N; i += 4)
        printf("a[%d][%d] = %.17g\n", i, M - 1, a[i][M - 1]);
    return 0;
}
