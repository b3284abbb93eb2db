/* Written for stencilc's tests in PolyBench/C 4.2's form: the kernel takes its arrays as
   parameters declared with their extents, main allocates them with polybench_alloc_data
   (defined in another file, alloc.c) and passes them dereferenced, the header is found
   with -I utilities. See tests/cli/map_polybench.rs. */
#include <stdio.h>
#include "mini_polybench.h"
#define TMAX 12
#define NX 33
#define NY 41
static void init_array(int tmax, int nx, int ny, double ex[NX][NY], double ey[NX][NY], double hz[NX][NY], double _fict_[TMAX]) {
  for (int i = 0; i < tmax; i++) _fict_[i] = (double) i;
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      ex[i][j] = ((double) i * (j + 1)) / nx;
      ey[i][j] = ((double) i * (j + 2)) / ny;
      hz[i][j] = ((double) i * (j + 3)) / nx;
    }
}
static void kernel_fdtd_2d(int tmax, int nx, int ny, double ex[NX][NY], double ey[NX][NY], double hz[NX][NY], double _fict_[TMAX]) {
  int t, i, j;
#pragma scop
  for (t = 0; t < tmax; t++) {
    for (j = 0; j < ny; j++)
      ey[0][j] = _fict_[t];
    for (i = 1; i < nx; i++)
      for (j = 0; j < ny; j++)
        ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i-1][j]);
    for (i = 0; i < nx; i++)
      for (j = 1; j < ny; j++)
        ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j-1]);
    for (i = 0; i < nx - 1; i++)
      for (j = 0; j < ny - 1; j++)
        hz[i][j] = hz[i][j] - 0.7 * (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j]);
  }
#pragma endscop
}
int main(void) {
  ARRAY_2D_DECL(ex, double, NX, NY);
  ARRAY_2D_DECL(ey, double, NX, NY);
  ARRAY_2D_DECL(hz, double, NX, NY);
  double (*_fict_)[TMAX] = (double (*)[TMAX])polybench_alloc_data(TMAX, sizeof(double));
  init_array(TMAX, NX, NY, ARRAY(ex), ARRAY(ey), ARRAY(hz), ARRAY(_fict_));
  kernel_fdtd_2d(TMAX, NX, NY, ARRAY(ex), ARRAY(ey), ARRAY(hz), ARRAY(_fict_));
  double s = 0;
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++)
      s = s * 0.999 + (*ex)[i][j] + 2 * (*ey)[i][j] + 3 * (*hz)[i][j];
  printf("checksum %.17g\n", s);
  return 0;
}
