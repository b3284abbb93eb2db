/* FDTD in 2-D, PolyBench style (written fresh): per time step a boundary
   row, then the ey, ex and hz field updates. */
#include <stdio.h>

#define TMAX 12
#define NX 67
#define NY 83

static double ex[NX][NY];
static double ey[NX][NY];
static double hz[NX][NY];
static double fict[TMAX];

int main(void) {
    for (int t = 0; t < TMAX; t++)
        fict[t] = (double)t;
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++) {
            ex[i][j] = ((double)i * (j + 1)) / NX;
            ey[i][j] = ((double)i * (j + 2)) / NY;
            hz[i][j] = ((double)i * (j + 3)) / NX;
        }

    for (int t = 0; t < TMAX; t++) {
        for (int j = 0; j < NY; j++)
            ey[0][j] = fict[t];
        for (int i = 1; i < NX; i++)
            for (int j = 0; j < NY; j++)
                ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
        for (int i = 0; i < NX; i++)
            for (int j = 1; j < NY; j++)
                ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
        for (int i = 0; i < NX - 1; i++)
            for (int j = 0; j < NY - 1; j++)
                hz[i][j] = hz[i][j] - 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
    }

    double sum = 0.0;
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            sum += ex[i][j] + ey[i][j] + hz[i][j];
    printf("checksum %.17g\n", sum);
    printf("hz[%d][%d] = %.17g\n", NX / 2, NY / 3, hz[NX / 2][NY / 3]);
    return 0;
}
