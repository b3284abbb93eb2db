/* The middle loop is over the grid's limit along its axis (75000 blocks of 4
   where 65535 are allowed): it is tiled, its tile loop moved outside `i`. */
#include <stdio.h>

#define P 2
#define Q 300000
#define R 2

static float a[P][Q][R];

int main(void) {
    for (int i = 0; i < P; i++)
        for (int j = 0; j < Q; j++)
            for (int k = 0; k < R; k++)
                a[i][j][k] = (float)((i + j + k) % 13) + 0.5f * (float)(j % 7);
    for (int j = 0; j < Q; j += 29999)
        printf("a[1][%d][1] = %.9g\n", j, a[1][j][1]);
    return 0;
}
