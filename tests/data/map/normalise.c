/* Every other row, from row 1: a stride-2 loop that the OpenCL kernel can
   only map once normalised to unit stride from zero. */
#include <stdio.h>

#define N 45
#define M 31

static double a[N][M], b[N][M];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            b[i][j] = (double)((i * 9 + j * 4) % 23) / 23.0;
    for (int i = 1; i < N - 1; i += 2)
        for (int j = 0; j < M; j++)
            a[i][j] = b[i][j] + 0.5 * b[i + 1][j] + i;
    for (int i = 1; i < N; i += 4)
        printf("a[%d][%d] = %.17g\n", i, i % M, a[i][i % M]);
    return 0;
}
