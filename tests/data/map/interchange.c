/* Interchange for coalescing: both nests walk the arrays column by column
   (the inner loop runs down the rows, the non-contiguous axis). */
#include <stdio.h>

#define N 37
#define M 53

static double a[N][M], b[N][M], s[N][M];

static void init(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            b[i][j] = (double)((i * 7 + j * 3) % 13) / 13.0;
}

static void scale(void) {
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++)
            a[i][j] = 2.0 * b[i][j] + 1.0;
}

/* A prefix sum along each row: `j` carries it, `i` is parallel. */
static void prefix(void) {
    for (int j = 1; j < M; j++)
        for (int i = 0; i < N; i++)
            s[i][j] = s[i][j - 1] + a[i][j];
}

int main(void) {
    init();
    scale();
    prefix();
    for (int i = 0; i < N; i += 5)
        printf("a[%d][%d] = %.17g, s[%d][%d] = %.17g\n", i, i + 3, a[i][i + 3], i, M - 1, s[i][M - 1]);
    return 0;
}
