/* 2-D image convolution with a small constant 5x5 filter. */
#include <stdio.h>

#define H 301
#define W 222
#define R 2

static float image[H][W];
static float out[H][W];
static float filter[2 * R + 1][2 * R + 1];

int main(void) {
    for (int a = 0; a < 2 * R + 1; a++)
        for (int b = 0; b < 2 * R + 1; b++)
            filter[a][b] = (float)(1 + a * (2 * R + 1) + b) / 325.0f;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            image[y][x] = (float)((y * 3 + x * 5) % 17) / 17.0f;

    for (int y = R; y < H - R; y++) {
        for (int x = R; x < W - R; x++) {
            float acc = 0.0f;
            for (int a = 0; a < 2 * R + 1; a++) {
                for (int b = 0; b < 2 * R + 1; b++) {
                    acc += filter[a][b] * image[y + a - R][x + b - R];
                }
            }
            out[y][x] = acc;
        }
    }

    double sum = 0.0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            sum += out[y][x];
    printf("checksum %.17g\n", sum);
    printf("out[%d][%d] = %.9g\n", H / 2, W / 2, out[H / 2][W / 2]);
    return 0;
}
