/* The second nest reads a[i + 1][j], which the first nest writes one
   iteration later: fusion-preventing. */
#include <stdio.h>

#define N 41
#define M 29

static float a[N][M], b[N][M], c[N][M];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            b[i][j] = (float)((i * 3 + j * 11) % 17) / 17.0f;

    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            a[i][j] = 2.0f * b[i][j];

    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            c[i][j] = (i + 1 < N ? a[i + 1][j] : 0.0f) + b[i][j];
    for (int i = 0; i < N; i += 6)
        printf("c[%d][%d] = %.9g\n", i, i % M, c[i][i % M]);
    return 0;
}
