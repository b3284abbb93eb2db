// The diffusion kernel of the KaniCUDA slides, exactly as given: a 2-D shared
// plane `sb` marching in z, four marked reads. BLOCK_X and BLOCK_Y come from
// the command line (`-D BLOCK_X=4 -D BLOCK_Y=4`).
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
    __shared__ float sb[BLOCK_X * BLOCK_Y];
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
