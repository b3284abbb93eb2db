/* Written for stencilc's tests in PolyBench/C 4.2's form: the kernel takes its arrays as
   parameters declared with their extents, main allocates them with polybench_alloc_data
   (defined in another file, alloc.c) and passes them dereferenced, the header is found
   with -I utilities. See tests/cli/map_polybench.rs. */
#include <stdio.h>
#include "mini_polybench.h"
#ifndef N
# define N 30
#endif
#ifndef TSTEPS
# define TSTEPS 20
#endif
static void init_array(int n, double A[N][N], double B[N][N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = ((double) i * (j + 2) + 2) / n;
      B[i][j] = ((double) i * (j + 3) + 3) / n;
    }
}
static void kernel_jacobi_2d(int tsteps, int n, double A[RESTRICT N][N], double B[RESTRICT N][N]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tsteps; t++) {
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j-1] + A[i][1+j] + A[1+i][j] + A[i-1][j]);
    for (i = 1; i < n - 1; i++)
      for (j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j-1] + B[i][1+j] + B[1+i][j] + B[i-1][j]);
  }
#pragma endscop
}
int main(int argc, char **argv) {
  int n = N;
  int tsteps = argc > 1 ? atoi(argv[1]) : TSTEPS;
  ARRAY_2D_DECL(A, double, N, N);
  ARRAY_2D_DECL(B, double, N, N);
  init_array(n, ARRAY(A), ARRAY(B));
  kernel_jacobi_2d(tsteps, n, ARRAY(A), ARRAY(B));
  double s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      s = s * 0.999 + (*A)[i][j];
  printf("checksum %.17g\n", s);
  free(A); free(B);
  return 0;
}
