// Hand-written naive global-memory CUDA baselines for the GPU benchmarks
// (bench/programs/*.sdsl): one thread per grid point, every read from global
// memory, no shared memory, no unrolling hints, the same arithmetic in the same
// order as the programs. `stencilc bench-gpu` compiles this file with NVRTC at
// run time, once with -Dreal=float and once with -Dreal=double (the f64 variants
// of the programs compute in double throughout, literals included).
//
// Index order follows the programs: [z][y][x], x innermost. Points outside a
// program's subset are left alone (they keep their input, as in stencilc).

#ifndef real
#define real float
#endif

#define C(x) ((real)(x))

static __device__ __forceinline__ int clampi(int i, int n)
{
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

extern "C" __global__ void j2d5pt(const real* __restrict__ a0, real* __restrict__ a1, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x > n - 2 || y > n - 2) return;
    long i = (long)y * n + x;
    a1[i] = (C(5.1) * a0[i - n] + C(12.1) * a0[i - 1] + C(15.0) * a0[i] + C(12.2) * a0[i + 1]
             + C(5.2) * a0[i + n]) / C(118.0);
}

extern "C" __global__ void j2d9pt(const real* __restrict__ a0, real* __restrict__ a1, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 2 || y < 2 || x > n - 3 || y > n - 3) return;
    long i = (long)y * n + x;
    a1[i] = (C(7.1) * a0[i - 2 * n] + C(5.1) * a0[i - n] + C(9.2) * a0[i - 2] + C(12.1) * a0[i - 1]
             + C(15.0) * a0[i] + C(12.2) * a0[i + 1] + C(9.1) * a0[i + 2] + C(5.2) * a0[i + n]
             + C(7.2) * a0[i + 2 * n]) / C(118.0);
}

// Weights (k+1)/325, k = 0..24 row-major, as the program's table W.
__constant__ real box2d2r_w[25] = {
    0.003076923079788685, 0.00615384615957737, 0.009230769239366055, 0.01230769231915474,
    0.015384615398943424, 0.01846153847873211, 0.02153846062719822, 0.02461538463830948,
    0.02769230678677559, 0.03076923079788685, 0.03384615480899811, 0.03692307695746422,
    0.03999999910593033, 0.04307692125439644, 0.04615384712815285, 0.04923076927661896,
    0.05230769142508507, 0.05538461357355118, 0.05846153944730759, 0.0615384615957737,
    0.06461538374423981, 0.06769230961799622, 0.07076922804117203, 0.07384615391492844,
    0.07692307978868484};

extern "C" __global__ void box2d2r(const real* __restrict__ a0, real* __restrict__ a1, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 2 || y < 2 || x > n - 3 || y > n - 3) return;
    real acc = C(0.0);
    for (int i = -2; i <= 2; ++i)
        for (int j = -2; j <= 2; ++j)
            acc = acc + box2d2r_w[(i + 2) * 5 + j + 2] * a0[(long)(y + i) * n + x + j];
    a1[(long)y * n + x] = acc;
}

extern "C" __global__ void gradient2d(const real* __restrict__ a0, real* __restrict__ a1, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x > n - 2 || y > n - 2) return;
    long i = (long)y * n + x;
    real c = a0[i];
    a1[i] = c + C(1.0) / sqrt(C(0.0001) + (c - a0[i - n]) * (c - a0[i - n])
                                   + (c - a0[i + n]) * (c - a0[i + n])
                                   + (c - a0[i - 1]) * (c - a0[i - 1])
                                   + (c - a0[i + 1]) * (c - a0[i + 1]));
}

extern "C" __global__ void star3d1r(const real* __restrict__ a0, real* __restrict__ a1, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x > n - 2 || y > n - 2 || z > n - 2) return;
    long s = (long)n * n;
    long i = z * s + (long)y * n + x;
    a1[i] = C(0.2500) * a0[i] + C(0.1248) * a0[i - s] + C(0.1249) * a0[i + s]
            + C(0.1250) * a0[i - n] + C(0.1251) * a0[i + n] + C(0.1252) * a0[i - 1]
            + C(0.1253) * a0[i + 1];
}

extern "C" __global__ void heat3d(const real* __restrict__ u0, real* __restrict__ u1, int n,
                                  real alpha)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x > n - 2 || y > n - 2 || z > n - 2) return;
    long s = (long)n * n;
    long i = z * s + (long)y * n + x;
    u1[i] = u0[i] + alpha * (u0[i - s] + u0[i + s] + u0[i - n] + u0[i + n] + u0[i - 1] + u0[i + 1]
                             - C(6.0) * u0[i]);
}

// Centre 0.14, faces 0.05, edges 0.02, corners 0.01, as the program's table W.
__constant__ real j3d27pt_w[27] = {
    0.01, 0.02, 0.01, 0.02, 0.05, 0.02, 0.01, 0.02, 0.01,
    0.02, 0.05, 0.02, 0.05, 0.14, 0.05, 0.02, 0.05, 0.02,
    0.01, 0.02, 0.01, 0.02, 0.05, 0.02, 0.01, 0.02, 0.01};

extern "C" __global__ void j3d27pt(const real* __restrict__ a0, real* __restrict__ a1, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x > n - 2 || y > n - 2 || z > n - 2) return;
    long s = (long)n * n;
    real acc = C(0.0);
    for (int i = -1; i <= 1; ++i)
        for (int j = -1; j <= 1; ++j)
            for (int k = -1; k <= 1; ++k)
                acc = acc + j3d27pt_w[(i + 1) * 9 + (j + 1) * 3 + k + 1]
                                * a0[(z + i) * s + (long)(y + j) * n + x + k];
    a1[z * s + (long)y * n + x] = acc;
}

// 7x7 Gaussian (sigma 1.1), as the program's table K.
__constant__ real blur_k[49] = {
    7.75556863e-05, 0.000612232379, 0.00211493918, 0.00319711614, 0.00211493918, 0.000612232379, 7.75556863e-05,
    0.000612232379, 0.0048330239, 0.0166955424, 0.025238356, 0.0166955424, 0.0048330239, 0.000612232379,
    0.00211493918, 0.0166955424, 0.0576742719, 0.0871851764, 0.0576742719, 0.0166955424, 0.00211493918,
    0.00319711614, 0.025238356, 0.0871851764, 0.131796288, 0.0871851764, 0.025238356, 0.00319711614,
    0.00211493918, 0.0166955424, 0.0576742719, 0.0871851764, 0.0576742719, 0.0166955424, 0.00211493918,
    0.000612232379, 0.0048330239, 0.0166955424, 0.025238356, 0.0166955424, 0.0048330239, 0.000612232379,
    7.75556863e-05, 0.000612232379, 0.00211493918, 0.00319711614, 0.00211493918, 0.000612232379, 7.75556863e-05};

extern "C" __global__ void gaussian_blur(const real* __restrict__ img, real* __restrict__ out,
                                         int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    real acc = C(0.0);
    for (int i = -3; i <= 3; ++i)
        for (int j = -3; j <= 3; ++j)
            acc = acc + blur_k[(i + 3) * 7 + j + 3]
                            * img[(long)clampi(y + i, height) * width + clampi(x + j, width)];
    out[(long)y * width + x] = acc;
}

// Rician denoising, stencil gs: G from U.
extern "C" __global__ void rician3d_g(const real* __restrict__ u, real* __restrict__ g,
                                      int dim0, int dim1, int dim2)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x > dim0 - 2 || y > dim1 - 2 || z > dim2 - 2) return;
    long s = (long)dim0 * dim1;
    long i = z * s + (long)y * dim0 + x;
    real c = u[i];
    g[i] = C(1.0) / sqrt(C(1.0E-20) + (c - u[i + dim0]) * (c - u[i + dim0])
                         + (c - u[i - dim0]) * (c - u[i - dim0]) + (c - u[i + 1]) * (c - u[i + 1])
                         + (c - u[i - 1]) * (c - u[i - 1]) + (c - u[i + s]) * (c - u[i + s])
                         + (c - u[i - s]) * (c - u[i - s]));
}

// Rician denoising, stencil us: the new U from U, G and F.
extern "C" __global__ void rician3d_u(const real* __restrict__ u0, real* __restrict__ u1,
                                      const real* __restrict__ g, const real* __restrict__ f,
                                      int dim0, int dim1, int dim2, double sigma, double lambda)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x > dim0 - 2 || y > dim1 - 2 || z > dim2 - 2) return;
    const real dt = C(5.0);
    real sigma2 = C(sigma * sigma);
    real gamma = C(lambda / (sigma * sigma));
    long s = (long)dim0 * dim1;
    long i = z * s + (long)y * dim0 + x;
    real r = u0[i] * f[i] / sigma2;
    r = (r * (C(2.38944) + r * (C(0.950037) + r))) / (C(4.65314) + r * (C(2.57541) + r * (C(1.48937) + r)));
    u1[i] = (u0[i] + dt * (u0[i + dim0] * g[i + dim0] + u0[i - dim0] * g[i - dim0]
                          + u0[i + 1] * g[i + 1] + u0[i - 1] * g[i - 1] + u0[i + s] * g[i + s]
                          + u0[i - s] * g[i - s] + gamma * f[i] * r))
            / (C(1.0) + dt * (g[i + dim0] + g[i - dim0] + g[i + 1] + g[i - 1] + g[i + s] + g[i - s]
                             + gamma));
}
