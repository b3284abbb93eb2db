/* The 2-D Jacobi stencil embedded in C: SDSL User Guide, figure 4.1, with a main
   that initialises the array, runs the region and prints a checksum.

   stencilc compile -f jacobi2d_host.c -o jacobi2d_host.out.c
   gcc -O2 -fopenmp jacobi2d_host.out.c -o jacobi2d_host -lm && ./jacobi2d_host

   SIZE may be overridden (-DSIZE=64) for a quicker run. */
#include <stdio.h>

#ifndef SIZE
#define SIZE (256)
#endif

int main() {
    static float a[SIZE][SIZE];
    int dim0 = SIZE;
    int dim1 = SIZE;
    float c1 = 0.2f;

    for (int i = 0; i < SIZE; ++i) {
        for (int j = 0; j < SIZE; ++j) {
            a[i][j] = (float)((i * 7 + j * 13) % 17) / 17.0f;
        }
    }

    #pragma sdsl begin gpu(block:64,8 tile:1,8 time:10)
        int dim0;
        int dim1;
        float c1;

        grid g[dim1][dim0];
        float griddata a on g at 0,1;

        pointfunction five_pt(x) {
            [1]x[0][0] = c1*([0]x[-1][0] + [0]x[0][-1] + [0]x[0][0] + [0]x[0][1] + [0]x[1][0]);
        }

        iterate 1000 {
            stencil j5p {
                [1:dim1-2][1:dim0-2] : five_pt(a);
            }
        }
    #pragma sdsl end

    double checksum = 0.0;
    for (int i = 0; i < SIZE; ++i) {
        for (int j = 0; j < SIZE; ++j) {
            checksum += a[i][j];
        }
    }
    printf("checksum %.6f\n", checksum);
    return sdsl_return_0;
}
