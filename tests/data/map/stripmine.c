/* 600000 rows of 4: the rows need 75000 thread blocks of 8 where a grid
   dimension allows 65535, so the row loop is strip-mined. */
#include <stdio.h>

#define ROWS 600000
#define COLS 4

static float a[ROWS][COLS], b[ROWS][COLS];

int main(void) {
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            b[i][j] = (float)((i + 3 * j) % 101) / 101.0f;
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++)
            a[i][j] = 3.0f * b[i][j] + (float)j;
    for (int i = 0; i < ROWS; i += 49999)
        printf("a[%d][%d] = %.9g\n", i, i % COLS, a[i][i % COLS]);
    return 0;
}
