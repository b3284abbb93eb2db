/* The middle loop is over the grid's limit, but its variable is declared
   outside its `for` (its value after the loop could be read), so it is not
   tiled: the nest stays as written, and on the CPU for a GPU. */
#include <stdio.h>

#define P 2
#define Q 300000
#define R 2

static float a[P][Q][R];

int main(void) {
    int j;
    for (int i = 0; i < P; i++)
        for (j = 0; j < Q; j++)
            for (int k = 0; k < R; k++)
                a[i][j][k] = (float)((i + j + k) % 13);
    for (j = 0; j < Q; j += 29999)
        printf("a[1][%d][1] = %.9g\n", j, a[1][j][1]);
    return 0;
}
