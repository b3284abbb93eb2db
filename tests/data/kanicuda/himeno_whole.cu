// A himeno-like Jacobi step (the pressure plane staged in shared memory,
// marching in k) in the form KaniCUDA's benchmarks ship: includes, macros,
// a host main that times it, a second kernel (written for stencilc's tests).
#include <stdio.h>
#include <sys/time.h>

#define BLOCK_X 4
#define BLOCK_Y 4
#define PLANE (BLOCK_X * BLOCK_Y)
#define MR(mt, n, r, c, d) mt->m[(n) * mt->mrows * mt->mcols * mt->mdeps + (r) * mt->mcols * mt->mdeps + (c) * mt->mdeps + (d)]

typedef struct Mat { float* m; int mnums, mrows, mcols, mdeps; } Matrix;

static double second(void) {
    struct timeval tm;
    gettimeofday(&tm, NULL);
    return tm.tv_sec + tm.tv_usec * 1.0e-6;
}

__global__ void set_bnd(float* bnd, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        bnd[i] = 1.0f;
    }
}

__global__ void himeno_jacobi(float* p, float* wrk2, float* gosa, float* bnd,
                              int nx, int ny, int nz,
                              float a0, float a1, float a2, float a3,
                              float b0, float c0, float omega) {
    profile("threadIdx.x threadIdx.y blockDim.x blockDim.y csb c i j");
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    int j = blockDim.y * blockIdx.y + threadIdx.y;
    int c = i + j * nx;
    int xy = nx * ny;
    __shared__ float sb[PLANE];
    int csb = threadIdx.x + threadIdx.y * blockDim.x;
    for (int k = 0; k < nz; ++k) {
        sb[csb] = p[c];
        int w = (i == 0) ? c : c - 1;
        int e = (i == nx - 1) ? c : c + 1;
        int n = (j == 0) ? c : c - nx;
        int s = (j == ny - 1) ? c : c + nx;
        int b = (k == 0) ? c : c - xy;
        int t = (k == nz - 1) ? c : c + xy;
        float s0 = a0 * __opt__.p[e] + a1 * __opt__.p[s] + a2 * p[t]
                 + b0 * (__opt__.p[w] - p[b])
                 + c0 * __opt__.p[n] - a3 * p[c];
        float ss = s0 * bnd[c];
        gosa[c] = ss * ss;
        wrk2[c] = p[c] + omega * ss;
        c += xy;
    }
}

int main() {
    int nx = 8, ny = 8, nz = 2, n = nx * ny * nz;
    float *p, *wrk2, *gosa, *bnd;
    cudaMalloc(&p, n * sizeof(float));
    cudaMalloc(&wrk2, n * sizeof(float));
    cudaMalloc(&gosa, n * sizeof(float));
    cudaMalloc(&bnd, n * sizeof(float));
    set_bnd<<<(n + 127) / 128, 128>>>(bnd, n);
    dim3 grid(nx / BLOCK_X, ny / BLOCK_Y), block(BLOCK_X, BLOCK_Y);
    double start = second();
    himeno_jacobi<<<grid, block>>>(p, wrk2, gosa, bnd, nx, ny, nz,
                                   1.0f, 1.0f, 1.0f, 1.0f / 6.0f, 0.0f, 1.0f, 0.8f);
    cudaDeviceSynchronize();
    printf("himeno: %.3f s for '%s'\n", second() - start, "{}");
    return 0;
}
