// The slides' diffusion kernel with its west, east, north and south reads
// served from the shared plane `sb` by hand, but with no `__syncthreads()`:
// a thread reads its neighbours' slots in the same interval as they store
// them, and the next plane overwrites `sb` while others may still read it.
// `stencilc check-kernel` reports the race; with a barrier after the store
// and one at the end of the loop body the kernel is race-free.
__global__ void diffusion_kernel(float* in,
                               float* out,
                               int nx, int ny, int nz,
                               float ce, float cw, float cn, float cs,
                               float ct, float cb, float cc) {
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    int j = blockDim.y * blockIdx.y + threadIdx.y;
    int c = i + j * nx;
    int xy = nx * ny;
    __shared__ float sb[BLOCK_X * BLOCK_Y];
    int csb = threadIdx.x + threadIdx.y * blockDim.x;
    for (int k = 0; k < nz; ++k) {
        sb[csb] = in[c];
        /* STORE BARRIER */
        int w = (i == 0) ? c : c - 1;
        int e = (i == nx-1) ? c : c + 1;
        int n = (j == 0) ? c : c - nx;
        int s = (j == ny-1) ? c : c + nx;
        int b = (k == 0) ? c : c - xy;
        int t = (k == nz-1) ? c : c + xy;
        out[c] =
            cc * in[c]
            + cw * ((i != 0 && threadIdx.x != 0) ? sb[csb - 1] : in[w])
            + ce * ((i != nx-1 && threadIdx.x != blockDim.x - 1) ? sb[csb + 1] : in[e])
            + cs * ((j != ny-1 && threadIdx.y != blockDim.y - 1) ? sb[csb + blockDim.x] : in[s])
            + cn * ((j != 0 && threadIdx.y != 0) ? sb[csb - blockDim.x] : in[n])
            + cb * in[b]
            + ct * in[t];
        c += xy;
        /* LOOP BARRIER */
    }
}
