/* Heat equation in 3-D, PolyBench style (written fresh): two sweeps per
   time step, B from A and A from B. */
#include <stdio.h>

#define N 41
#define TSTEPS 10

static double A[N][N][N];
static double B[N][N][N];

static void kernel_heat_3d(int tsteps, int n) {
#pragma scop
    for (int t = 1; t <= tsteps; t++) {
        for (int i = 1; i < N - 1; i++) {
            for (int j = 1; j < N - 1; j++) {
                for (int k = 1; k < N - 1; k++) {
                    B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                               + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                               + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                               + A[i][j][k];
                }
            }
        }
        for (int i = 1; i < N - 1; i++) {
            for (int j = 1; j < N - 1; j++) {
                for (int k = 1; k < N - 1; k++) {
                    A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                               + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                               + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1])
                               + B[i][j][k];
                }
            }
        }
    }
#pragma endscop
    (void)n;
}

int main(void) {
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < N; k++)
                A[i][j][k] = B[i][j][k] = (double)(i + j + (N - k)) * 10 / N;
    kernel_heat_3d(TSTEPS, N);
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            for (int k = 0; k < N; k++)
                sum += A[i][j][k];
    printf("checksum %.17g\n", sum);
    printf("A[3][5][7] = %.17g\n", A[3][5][7]);
    return 0;
}
