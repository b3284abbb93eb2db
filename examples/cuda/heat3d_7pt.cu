// A 3-D 7-point heat step: each block is a 2-D slab of threads marching in z,
// staging the current plane in shared memory; the four in-plane neighbour
// reads are marked for KaniCUDA. Boundary points are copied.
#define BX 8
#define BY 4

__global__ void heat3d(const double* __restrict__ u, double* __restrict__ v,
                       int nx, int ny, int nz, double alpha) {
    profile("threadIdx.x threadIdx.y blockDim.x blockDim.y i j k");
    __shared__ double plane[BY][BX];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    bool inside = i < nx && j < ny;
    for (int k = 0; k < nz; k++) {
        int c = (k * ny + j) * nx + i;
        if (inside) {
            plane[threadIdx.y][threadIdx.x] = u[c];
        }
        __syncthreads();
        if (inside) {
            if (i == 0 || j == 0 || k == 0 || i == nx - 1 || j == ny - 1 || k == nz - 1) {
                v[c] = u[c];
            } else {
                v[c] = u[c] + alpha * (__opt__.u[c - 1] + __opt__.u[c + 1]
                    + __opt__.u[c - nx] + __opt__.u[c + nx]
                    + u[c - nx * ny] + u[c + nx * ny] - 6.0 * u[c]);
            }
        }
        __syncthreads();
    }
}
