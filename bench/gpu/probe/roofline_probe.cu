// Roofline probe: hand-written kernel shapes for two bench programs (j2d5pt at
// 16384², star3d1r at 512³, both f32 and f64), timed against a copy kernel and
// cuMemcpyDtoD-equivalent cudaMemcpy on the same device, to find which kernel
// forms reach the memory roofline before stencilc's generator is redesigned.
// Every variant is checked against the one-point-per-thread kernel
// (bit-identical: same arithmetic in the same order).
//
//   nvcc -O3 -arch=sm_90 -o probe roofline_probe.cu && ./probe
//
// Variants (T = real):
//   pt1      one point per thread, block 32x8 (today's stencilc / naive form)
//   rowsR    a thread computes R consecutive rows (y), keeping the column's
//            three values in registers (register streaming, 2-D)
//   zR       3-D: a 2-D block marches along z for R planes, z-neighbours in
//            registers (2.5-D blocking), x/y neighbours from L1
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); exit(1);} } while (0)

template <typename T> __device__ __forceinline__ T j5(T n_, T w, T c, T e, T s) {
    return (T(5.1) * n_ + T(12.1) * w + T(15.0) * c + T(12.2) * e + T(5.2) * s) / T(118.0);
}

template <typename T>
__global__ void j2d5pt_pt1(const T* __restrict__ a, T* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < 1 || y < 1 || x > n - 2 || y > n - 2) return;
    long i = (long)y * n + x;
    b[i] = j5(a[i - n], a[i - 1], a[i], a[i + 1], a[i + n]);
}

template <typename T, int R>
__global__ void j2d5pt_rows(const T* __restrict__ a, T* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * R + 1;
    if (x < 1 || x > n - 2 || y0 > n - 2) return;
    long i = (long)y0 * n + x;
    T up = a[i - n], mid = a[i];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        if (y0 + r > n - 2) break;
        T down = a[i + n];
        b[i] = j5(up, a[i - 1], mid, a[i + 1], down);
        up = mid; mid = down; i += n;
    }
}

template <typename T> __device__ __forceinline__ T s7(T c, T zm, T zp, T ym, T yp, T xm, T xp) {
    return T(0.2500) * c + T(0.1248) * zm + T(0.1249) * zp + T(0.1250) * ym + T(0.1251) * yp
         + T(0.1252) * xm + T(0.1253) * xp;
}

template <typename T>
__global__ void star_pt1(const T* __restrict__ a, T* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < 1 || y < 1 || z < 1 || x > n - 2 || y > n - 2 || z > n - 2) return;
    long nn = (long)n * n, i = z * nn + (long)y * n + x;
    b[i] = s7(a[i], a[i - nn], a[i + nn], a[i - n], a[i + n], a[i - 1], a[i + 1]);
}

template <typename T, int R>
__global__ void star_z(const T* __restrict__ a, T* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z0 = blockIdx.z * R + 1;
    if (x < 1 || y < 1 || x > n - 2 || y > n - 2 || z0 > n - 2) return;
    long nn = (long)n * n, i = z0 * nn + (long)y * n + x;
    T below = a[i - nn], mid = a[i];
#pragma unroll 4
    for (int r = 0; r < R; ++r) {
        if (z0 + r > n - 2) break;
        T above = a[i + nn];
        b[i] = s7(mid, below, above, a[i - n], a[i + n], a[i - 1], a[i + 1]);
        below = mid; mid = above; i += nn;
    }
}

template <typename T>
__global__ void copy_kernel(const T* __restrict__ a, T* __restrict__ b, long len) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    long stride = (long)gridDim.x * blockDim.x;
    for (; i < len; i += stride) b[i] = a[i];
}

template <typename F> float median_ms(F launch, int reps = 30) {
    cudaEvent_t e0, e1; CHECK(cudaEventCreate(&e0)); CHECK(cudaEventCreate(&e1));
    for (int k = 0; k < 3; ++k) launch();
    CHECK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int k = 0; k < reps; ++k) {
        CHECK(cudaEventRecord(e0)); launch(); CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1)); CHECK(cudaGetLastError());
        float ms; CHECK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

template <typename T> struct Bench {
    const char* prec; long len; T *a, *b, *ref; std::vector<T> host, got, want;
    double copy_gbs = 0;
    Bench(const char* p, long len_) : prec(p), len(len_), host(len_), got(len_), want(len_) {
        srand(7);
        for (long i = 0; i < len; ++i) host[i] = T(rand() % 1000) / T(997);
        CHECK(cudaMalloc(&a, len * sizeof(T))); CHECK(cudaMalloc(&b, len * sizeof(T)));
        CHECK(cudaMalloc(&ref, len * sizeof(T)));
        CHECK(cudaMemcpy(a, host.data(), len * sizeof(T), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b, a, len * sizeof(T), cudaMemcpyDeviceToDevice));
        CHECK(cudaMemcpy(ref, a, len * sizeof(T), cudaMemcpyDeviceToDevice));
        double bytes = 2.0 * len * sizeof(T);
        float ms = median_ms([&] { cudaMemcpy(b, a, len * sizeof(T), cudaMemcpyDeviceToDevice); });
        float kms = median_ms([&] { copy_kernel<<<132 * 16, 256>>>(a, b, len); });
        copy_gbs = bytes / (ms * 1e6);
        printf("%s copy: memcpy %.4f ms %.0f GB/s; copy kernel %.4f ms %.0f GB/s\n", prec, ms,
               bytes / (ms * 1e6), kms, bytes / (kms * 1e6));
    }
    template <typename L> void run(const char* name, L launch, bool is_ref) {
        CHECK(cudaMemcpy(b, a, len * sizeof(T), cudaMemcpyDeviceToDevice));
        launch(is_ref ? ref : b);
        CHECK(cudaDeviceSynchronize()); CHECK(cudaGetLastError());
        double maxdiff = 0;
        if (!is_ref) {
            CHECK(cudaMemcpy(got.data(), b, len * sizeof(T), cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(want.data(), ref, len * sizeof(T), cudaMemcpyDeviceToHost));
            for (long i = 0; i < len; ++i) maxdiff = std::max(maxdiff, (double)std::abs(got[i] - want[i]));
        }
        float ms = median_ms([&] { launch(b); });
        double bytes = 2.0 * len * sizeof(T);
        printf("| %-22s | %s | %8.4f | %6.0f | %4.0f %% | %.1e |\n", name, prec, ms, bytes / (ms * 1e6),
               100.0 * bytes / (ms * 1e6) / copy_gbs, maxdiff);
    }
};

template <typename T> void run2d(const char* prec) {
    const int n = 16384;
    Bench<T> B(prec, (long)n * n);
    printf("| j2d5pt variant | prec | ms | GB/s | of memcpy | max diff |\n|---|---|---:|---:|---:|---:|\n");
    B.run("pt1 32x8", [&](T* out) { j2d5pt_pt1<T><<<dim3((n + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>(B.a, out, n); }, true);
    B.run("pt1 32x8 (again)", [&](T* out) { j2d5pt_pt1<T><<<dim3((n + 31) / 32, (n + 7) / 8), dim3(32, 8)>>>(B.a, out, n); }, false);
    B.run("pt1 128x2", [&](T* out) { j2d5pt_pt1<T><<<dim3((n + 127) / 128, (n + 1) / 2), dim3(128, 2)>>>(B.a, out, n); }, false);
#define ROWS(R, BX, BY) B.run("rows" #R " " #BX "x" #BY, [&](T* out) { \
        int rows = (n - 2 + R - 1) / R; \
        j2d5pt_rows<T, R><<<dim3((n + BX - 1) / BX, (rows + BY - 1) / BY), dim3(BX, BY)>>>(B.a, out, n); }, false)
    ROWS(2, 32, 8); ROWS(4, 32, 8); ROWS(8, 32, 8); ROWS(16, 32, 8); ROWS(4, 64, 4); ROWS(8, 128, 2); ROWS(16, 128, 1);
    ROWS(32, 64, 2);
}

template <typename T> void run3d(const char* prec) {
    const int n = 512;
    Bench<T> B(prec, (long)n * n * n);
    printf("| star3d1r variant | prec | ms | GB/s | of memcpy | max diff |\n|---|---|---:|---:|---:|---:|\n");
    B.run("pt1 32x4x2", [&](T* out) { star_pt1<T><<<dim3(n / 32, n / 4, n / 2), dim3(32, 4, 2)>>>(B.a, out, n); }, true);
    B.run("pt1 32x4x2 (again)", [&](T* out) { star_pt1<T><<<dim3(n / 32, n / 4, n / 2), dim3(32, 4, 2)>>>(B.a, out, n); }, false);
#define ZR(R, BX, BY) B.run("z" #R " " #BX "x" #BY, [&](T* out) { \
        star_z<T, R><<<dim3((n + BX - 1) / BX, (n + BY - 1) / BY, (n - 2 + R - 1) / R), dim3(BX, BY)>>>(B.a, out, n); }, false)
    ZR(4, 32, 8); ZR(8, 32, 8); ZR(16, 32, 8); ZR(32, 32, 8); ZR(16, 64, 4); ZR(64, 32, 8); ZR(16, 32, 16);
}

int main() {
    cudaDeviceProp p; CHECK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
    run2d<float>("f32"); run2d<double>("f64");
    run3d<float>("f32"); run3d<double>("f64");
    return 0;
}
