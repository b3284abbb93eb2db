// diffusion3d with its plane in `extern __shared__` memory sized at launch, in the form KaniCUDA's benchmarks ship: one .cu file with the
// includes, the macros, the host program and two kernels, of which one is
// marked for synth (written for stencilc's tests).
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#ifndef BLOCK_X
#define BLOCK_X 4
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 4
#endif
#define CUDA_CHECK(call) do { cudaError_t e = (call); if (e != cudaSuccess) { \
    fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); \
    exit(1); } } while (0)

/* The initial condition: a kernel with braces in a string "{" and a comment }. */
__global__ void init(float* buf, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) buf[i] = (float)(i % 7) * 0.125f; // '}' in a comment
}

__global__ void diffusion_kernel(float* in,
                               float* out,
                               int nx, int ny, int nz,
                               float ce, float cw, float cn, float cs,
                               float ct, float cb, float cc) {
    profile("threadIdx.x threadIdx.y blockDim.x blockDim.y csb c i j");
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    int j = blockDim.y * blockIdx.y + threadIdx.y;
    int c = i + j * nx;
    int xy = nx * ny;
    extern __shared__ float sb[];
    int csb = threadIdx.x + threadIdx.y * blockDim.x;
    for (int k = 0; k < nz; ++k) {
        sb[csb] = in[c];
        int w = (i == 0) ? c : c - 1;
        int e = (i == nx-1) ? c : c + 1;
        int n = (j == 0) ? c : c - nx;
        int s = (j == ny-1) ? c : c + nx;
        int b = (k == 0) ? c : c - xy;
        int t = (k == nz-1) ? c : c + xy;
        out[c] =
            cc * in[c]
            + cw * __opt__.in[w]
            + ce * __opt__.in[e]
            + cs * __opt__.in[s]
            + cn * __opt__.in[n]
            + cb * in[b]
            + ct * in[t];
        c += xy;
    }
}

int main(int argc, char** argv) {
    const int nx = 8, ny = 8, nz = 2, n = nx * ny * nz;
    float *in, *out;
    CUDA_CHECK(cudaMalloc((void**)&in, n * sizeof(float)));
    CUDA_CHECK(cudaMalloc((void**)&out, n * sizeof(float)));
    init<<<(n + 63) / 64, 64>>>(in, n);
    dim3 block(BLOCK_X, BLOCK_Y, 1), grid(nx / BLOCK_X, ny / BLOCK_Y, 1);
    const char* banner = "diffusion3d: } { \" done";
    for (int step = 0; step < 10; ++step) {
        diffusion_kernel<<<grid, block, BLOCK_X * BLOCK_Y * sizeof(float)>>>(in, out, nx, ny, nz,
                                          0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.4f);
        float* tmp = in; in = out; out = tmp;
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    printf("%s\n", banner);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
