/* Shared-memory staging in direct kernels: read-only arrays read at constant
   offsets around each point are staged per block (1-D, 2-D with a filter loop,
   a row read along x only, rows read at a constant subscript, 3-D; each nest
   holds a loop or uses a loop variable as a value, so it is not lifted), and the
   arrays that do not qualify keep the read-only path: two offsets (too little
   reuse), an offset from a scalar, offsets too wide. No size is a multiple of
   a block (256, 32x8, 32x4x2); one nest has bounds known only at run time. */
#include <stdio.h>

#define N 3001
#define H 67
#define W 4099
#define D 11
#define M 13
#define V 61
#define R 30
#define WH 70
#define WW 101

static double line_in[N];
static double line_out[N];
static double pair_out[N];
static double shift_out[N];
static double bound_out[N];
static float img[H][W];
static float row[W];
static float rows3[3][W];
static float smooth[H][W];
static float vol[D][M][V];
static float lap[D][M][V];
static float wide[WH][WW];
static float wide_out[WH][WW];
static float trans[H][H];
static int shift = 3;
static int lo = 1;
static int hi = N - 1;

int main(void) {
    for (int i = 0; i < N; i++)
        line_in[i] = (double)((i * 7) % 31) / 31.0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img[y][x] = (float)((y * 5 + x * 3) % 23) / 23.0f;
    for (int x = 0; x < W; x++)
        row[x] = (float)(x % 13) / 13.0f;
    for (int k = 0; k < 3; k++)
        for (int x = 0; x < W; x++)
            rows3[k][x] = (float)((k + x) % 7) / 7.0f;
    for (int z = 0; z < D; z++)
        for (int y = 0; y < M; y++)
            for (int x = 0; x < V; x++)
                vol[z][y][x] = (float)((z * 11 + y * 5 + x) % 19) / 19.0f;
    for (int y = 0; y < WH; y++)
        for (int x = 0; x < WW; x++)
            wide[y][x] = (float)((y + 2 * x) % 29) / 29.0f;

    /* 1-D, five points through a loop: staged. */
    for (int i = 2; i < N - 2; i++) {
        double weighted = 0.0;
        for (int d = -2; d <= 2; d++)
            weighted += (0.1 + 0.05 * d) * line_in[i + d];
        line_out[i] = weighted;
    }

    /* 2-D, a 3x3 filter loop over img; row read along x only; rows3 at constant rows. */
    for (int y = 1; y < H - 1; y++) {
        for (int x = 1; x < W - 1; x++) {
            float s = 0.0f;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    s += img[y + dy][x + dx];
            float t = 0.0f;
            for (int k = 0; k < 3; k++)
                t += rows3[k][x];
            smooth[y][x] = s / 9.0f + (row[x - 1] - row[x + 1]) * t + row[x];
        }
    }

    /* 3-D, seven points: staged. */
    for (int z = 1; z < D - 1; z++)
        for (int y = 1; y < M - 1; y++)
            for (int x = 1; x < V - 1; x++)
                lap[z][y][x] = vol[z - 1][y][x] + vol[z + 1][y][x] + vol[z][y - 1][x]
                               + vol[z][y + 1][x] + vol[z][y][x - 1] + vol[z][y][x + 1]
                               - (float)(6 + x % 2) * vol[z][y][x];

    /* Two offsets: a reuse under 2, not staged. */
    for (int i = 0; i < N - 1; i++)
        pair_out[i] = line_in[i] * line_in[i + 1] + (double)(i % 3);

    /* An offset from a scalar: not staged. */
    for (int i = 0; i < N - 3; i++)
        shift_out[i] = line_in[i + shift] - line_in[i];

    /* Bounds known at run time: staged, guarded on both sides. */
    for (int i = lo; i < hi; i++)
        bound_out[i] = line_in[i - 1] - (double)(2 + i % 2) * line_in[i] + line_in[i + 1];

    /* Offsets -30..30 along both axes: the tile is too wide, not staged. */
    for (int y = R; y < WH - R; y++) {
        for (int x = R; x < WW - R; x++) {
            float c = 0.0f;
            for (int d = -R; d <= R; d++)
                c += wide[y + d][x] + wide[y][x + d];
            wide_out[y][x] = c;
        }
    }

    /* Transposed reads: the tile follows x along img's rows, y along its columns. */
    for (int y = 1; y < H - 1; y++)
        for (int x = 1; x < H - 1; x++)
            trans[y][x] = img[x - 1][y] + img[x + 1][y] + img[x][y + 1] + (float)(x % 2);

    double sum = 0.0;
    for (int i = 0; i < N; i++)
        sum += line_out[i] + 3.0 * pair_out[i] + 5.0 * shift_out[i] + 7.0 * bound_out[i];
    printf("checksum 1-D %.17g\n", sum);
    sum = 0.0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            sum += smooth[y][x] * (double)(1 + (x + y) % 5);
    printf("checksum 2-D %.17g\n", sum);
    sum = 0.0;
    for (int z = 0; z < D; z++)
        for (int y = 0; y < M; y++)
            for (int x = 0; x < V; x++)
                sum += lap[z][y][x] * (double)(1 + (x + y + z) % 3);
    printf("checksum 3-D %.17g\n", sum);
    sum = 0.0;
    for (int y = 0; y < WH; y++)
        for (int x = 0; x < WW; x++)
            sum += wide_out[y][x];
    printf("checksum wide %.17g\n", sum);
    sum = 0.0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < H; x++)
            sum += trans[y][x] * (double)(1 + x % 4);
    printf("checksum trans %.17g\n", sum);
    printf("%.17g %.17g %.9g %.9g %.9g %.9g\n", line_out[N - 3], bound_out[1], smooth[H - 2][W - 2],
           smooth[1][1], lap[D - 2][M - 2][V - 2], wide_out[R][WW - R - 1]);
    return 0;
}
