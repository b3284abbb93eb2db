/* 2-D Jacobi, 5-point, over two buffers passed as pointers and swapped
   after each step, indexed linearly (a[i*m + j]), with the sizes and the
   step count given at run time. */
#include <stdio.h>
#include <stdlib.h>

static void jacobi2d(int n, int m, int steps, float *a, float *b) {
    for (int t = 0; t < steps; t++) {
        for (int i = 1; i < n - 1; i++) {
            for (int j = 1; j < m - 1; j++) {
                b[i * m + j] = 0.2f * (a[i * m + j] + a[(i - 1) * m + j] + a[(i + 1) * m + j]
                                       + a[i * m + j - 1] + a[i * m + j + 1]);
            }
        }
        float *tmp = a;
        a = b;
        b = tmp;
    }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 203;
    int m = argc > 2 ? atoi(argv[2]) : 157;
    int steps = argc > 3 ? atoi(argv[3]) : 21;
    float *A = (float *)malloc(sizeof(float) * n * m);
    float *B = (float *)malloc(sizeof(float) * n * m);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            A[i * m + j] = (float)((i * 7 + j * 13) % 31) / 31.0f;
            B[i * m + j] = A[i * m + j];
        }

    jacobi2d(n, m, steps, A, B);

    /* After an odd number of steps the last one wrote B. */
    float *out = steps % 2 ? B : A;
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            sum += out[i * m + j];
    printf("checksum %.17g\n", sum);
    printf("out[1][1] = %.9g, out[%d][%d] = %.9g\n", out[1 * m + 1], n / 2, m / 3, out[(n / 2) * m + m / 3]);
    free(A);
    free(B);
    return 0;
}
