/* Two adjacent nests over the same iteration space: fused into one. */
#include <stdio.h>

#define N 41
#define M 29

static float a[N][M], b[N][M], c[N][M];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            b[i][j] = (float)((i * 3 + j * 11) % 17) / 17.0f;

    for (int i = 1; i < N; i++)
        for (int j = 0; j < M; j++)
            a[i][j] = 2.0f * b[i][j] + b[i - 1][j];

    for (int i = 1; i < N; i++)
        for (int j = 0; j < M; j++) {
            float t = a[i][j] * a[i][j];
            c[i][j] = t + b[i][j];
        }
    for (int i = 1; i < N; i += 6)
        printf("c[%d][%d] = %.9g\n", i, i % M, c[i][i % M]);
    return 0;
}
