/* 2-D Jacobi, 5-point, with a time loop over ping-pong buffers indexed by
   time (the AN5D / PolyBench form). */
#include <stdio.h>

#define N 203
#define M 157
#define STEPS 20

static float A[2][N][M];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++) {
            A[0][i][j] = (float)((i * 7 + j * 13) % 31) / 31.0f;
            A[1][i][j] = A[0][i][j];
        }

    for (int t = 0; t < STEPS; t++) {
        for (int i = 1; i < N - 1; i++) {
            for (int j = 1; j < M - 1; j++) {
                A[(t + 1) % 2][i][j] = 0.2f * (A[t % 2][i][j] + A[t % 2][i - 1][j] + A[t % 2][i + 1][j]
                                               + A[t % 2][i][j - 1] + A[t % 2][i][j + 1]);
            }
        }
    }

    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            sum += A[STEPS % 2][i][j];
    printf("checksum %.17g\n", sum);
    printf("A[%d][%d] = %.9g, A[%d][%d] = %.9g\n", 1, 1, A[STEPS % 2][1][1], N / 2, M / 3, A[STEPS % 2][N / 2][M / 3]);
    return 0;
}
