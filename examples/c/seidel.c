/* Gauss-Seidel sweeps in 2-D: each point reads the points of the same
   sweep above and to its left, a loop-carried dependence on both loops;
   the nest must stay on the CPU. A row-sum nest beside it is parallel. */
#include <stdio.h>

#define N 97

static double A[N][N];
static double rowsum[N];

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            A[i][j] = (double)((i * 5 + j * 3) % 11);

    for (int i = 1; i < N - 1; i++) {
        for (int j = 1; j < N - 1; j++) {
            A[i][j] = (A[i - 1][j] + A[i][j - 1] + A[i][j] + A[i + 1][j] + A[i][j + 1]) / 5.0;
        }
    }

    for (int i = 0; i < N; i++) {
        double s = 0.0;
        for (int j = 0; j < N; j++) {
            s += A[i][j];
        }
        rowsum[i] = s;
    }

    double sum = 0.0;
    for (int i = 0; i < N; i++)
        sum += rowsum[i];
    printf("checksum %.17g\n", sum);
    printf("A[%d][%d] = %.17g\n", N / 2, N / 3, A[N / 2][N / 3]);
    return 0;
}
