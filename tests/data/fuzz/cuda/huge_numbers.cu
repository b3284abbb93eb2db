#define N 99999999999999999999999
__global__ void k(float* a) { a[18446744073709551616] = 1e99999f; for (int i = 0; i < N; i++) a[i] = 0; }
