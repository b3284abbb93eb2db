// A 2-D Jacobi sweep (5-point average) with a 2-D shared tile of the block's
// own points; the four neighbour reads are marked for KaniCUDA. Edge points
// (the first and last row and column) are copied. TILE_X and TILE_Y must be
// the block's sizes (`-D TILE_X=8 -D TILE_Y=4`).
__global__ void jacobi2d(const float* __restrict__ a, float* __restrict__ b, int nx, int ny) {
    profile("threadIdx.x threadIdx.y blockDim.x blockDim.y i j");
    __shared__ float tile[TILE_Y][TILE_X];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    bool inside = i < nx && j < ny;
    if (inside) {
        tile[threadIdx.y][threadIdx.x] = a[j * nx + i];
    }
    __syncthreads();
    if (inside) {
        if (i == 0 || j == 0 || i == nx - 1 || j == ny - 1) {
            b[j * nx + i] = a[j * nx + i];
        } else {
            b[j * nx + i] = 0.2f * (a[j * nx + i]
                + __opt__.a[j * nx + i - 1] + __opt__.a[j * nx + i + 1]
                + __opt__.a[(j - 1) * nx + i] + __opt__.a[(j + 1) * nx + i]);
        }
    }
}
