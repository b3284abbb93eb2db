/* main() for a two-level float stencil: `SWEEP(n, in, out)` computes one sweep;
   DIMS is 2 or 3. Both levels start from the input, so the fixed border agrees. */
#include "common.h"

int main(int argc, char **argv)
{
    long n, steps, count = 1;
    bench_args(argc, argv, &n, &steps);
    for (int d = 0; d < DIMS; d++) count *= n;
    float *a0 = (float *)bench_alloc((size_t)count * sizeof(float));
    float *a1 = (float *)bench_alloc((size_t)count * sizeof(float));
    for (long i = 0; i < count; i++) a0[i] = a1[i] = (float)bench_value(i);
    double start = omp_get_wtime();
    for (long t = 0; t < steps; t++) {
        SWEEP(n, a0, a1);
        float *tmp = a0; a0 = a1; a1 = tmp;
    }
    double seconds = omp_get_wtime() - start;
    double checksum = 0.0;
    for (long i = 0; i < count; i++) checksum += a0[i];
    bench_report(seconds, steps, checksum);
    free(a0);
    free(a1);
    return 0;
}
