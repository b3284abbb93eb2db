// Hand-written naive global-memory CUDA baselines for the GPU benchmarks: one
// thread per point, no shared memory, no unrolling hints; the same arithmetic as
// the examples. Compiled with NVRTC by bench/gpu/run.sh's runner (see README.md).

extern "C" __global__ void copy_f32(const float* __restrict__ src, float* __restrict__ dst, long n)
{
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

extern "C" __global__ void jacobi2d_f32(const float* a0, float* a1, int nx, int ny)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= nx || y >= ny) return;
    long i = (long)y * nx + x;
    if (x == 0 || y == 0 || x == nx - 1 || y == ny - 1) { a1[i] = a0[i]; return; }
    a1[i] = 0.2f * (a0[i - nx] + a0[i - 1] + a0[i] + a0[i + 1] + a0[i + nx]);
}

extern "C" __global__ void heat3d_f64(const double* u0, double* u1, int nx, int ny, int nz, double alpha)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x >= nx - 1 || y >= ny - 1 || z >= nz - 1) return;
    long s = (long)nx * ny;
    long i = z * s + (long)y * nx + x;
    u1[i] = u0[i] + alpha * (u0[i - s] + u0[i + s] + u0[i - nx] + u0[i + nx] + u0[i - 1] + u0[i + 1]
                             - 6.0 * u0[i]);
}

extern "C" __global__ void blur7x7_f32(const float* img, float* out, const float* K, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float acc = 0.0f;
    for (int i = -3; i <= 3; ++i) {
        for (int j = -3; j <= 3; ++j) {
            int yy = min(max(y + i, 0), h - 1);
            int xx = min(max(x + j, 0), w - 1);
            acc = acc + K[(i + 3) * 7 + j + 3] * img[(long)yy * w + xx];
        }
    }
    out[(long)y * w + x] = acc;
}
