/* Rician denoising, SDSL User Guide chapter 7: the C reference `rician3d`
   (figure 7.1), its drop-in SDSL replacement `sdsl_rician3d` (figure 7.7) and a
   driver like figure 7.8 that always checks one against the other.

   Two deliberate departures from the printed figures:
   - Figure 7.1 lacks the parenthesis that closes the numerator `(U0 + DT*(...))`;
     it is restored here.
   - Figure 7.7 prints the denominator as `(1.0 + DT*[0]g[0][1][0] + [0]g[0][-1][0]
     + ... + gamma)`, which multiplies only the first term by DT; the C reference
     computes `1.0 + DT*(sum of the six G + gamma)`, and so does the region below.
     The region also checks `every 1 iterations` (the figure says `every 10`) so
     that both versions stop after the same iteration.

   stencilc compile -f rician3d_host.c -o rician3d_host.out.c
   gcc -O2 -fopenmp rician3d_host.out.c -o rician3d_host -lm && ./rician3d_host

   DIM may be overridden (-DDIM=32) for a quicker run. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifndef DIM
#define DIM 128
#endif

/* Wall-clock seconds (processor time when built without OpenMP). */
static double timestamp(void) {
#ifdef _OPENMP
    return omp_get_wtime();
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

/* Figure 7.1 (numerator parenthesis restored). */
int rician3d(double *U, double *F, double sigma, double lambda, int dim0, int dim1, int dim2) {
    // U0, G are local arrays
    double *U0 = (double*)malloc(dim0*dim1*dim2*sizeof(double));
    double *G = (double*)malloc(dim0*dim1*dim2*sizeof(double));
    memset(G, 0, sizeof(double)*dim0*dim1*dim2);

    // Copy F to U
    memcpy(U, F, dim0*dim1*dim2*sizeof(double));

    // Constants
    const double DT = 5.0;
    const double EPSILON = 1.0E-20;
    const double sigma2 = sigma*sigma;
    const double gamma = lambda/sigma2;

    // Convergence
    const int max_iter = 50;
    const double TOL = 0.00001;
    bool converged;

    // Macro for 3d indexing
#define idx(z,y,x) ((x) + (y)*dim0 + (z)*dim0*dim1)
    /* Gradient descent loop */
    for (int t = 0; t < max_iter; ++t) {
        /* Copy U to U0 */
        for (int i = 0; i < dim2; ++i) {
        for (int j = 0; j < dim1; ++j) {
        for (int k = 0; k < dim0; ++k) {
            U0[idx(i,j,k)] = U[idx(i,j,k)];
        }}}
        /* Approximate G = 1/|grad U| */
        for (int i = 1; i < dim2 - 1; ++i) {
        for (int j = 1; j < dim1 - 1; ++j) {
        for (int k = 1; k < dim0 - 1; ++k) {
            G[idx(i,j,k)] = 1.0/sqrt(EPSILON +
                (U0[idx(i,j,k)] - U0[idx(i,j+1,k)])*(U0[idx(i,j,k)] - U0[idx(i,j+1,k)]) +
                (U0[idx(i,j,k)] - U0[idx(i,j-1,k)])*(U0[idx(i,j,k)] - U0[idx(i,j-1,k)]) +
                (U0[idx(i,j,k)] - U0[idx(i,j,k+1)])*(U0[idx(i,j,k)] - U0[idx(i,j,k+1)]) +
                (U0[idx(i,j,k)] - U0[idx(i,j,k-1)])*(U0[idx(i,j,k)] - U0[idx(i,j,k-1)]) +
                (U0[idx(i,j,k)] - U0[idx(i+1,j,k)])*(U0[idx(i,j,k)] - U0[idx(i+1,j,k)]) +
                (U0[idx(i,j,k)] - U0[idx(i-1,j,k)])*(U0[idx(i,j,k)] - U0[idx(i-1,j,k)]));
        }}}
        /* Update U by a semi-implicit step */
        converged = true;
        for (int i = 1; i < dim2 - 1; ++i) {
        for (int j = 1; j < dim1 - 1; ++j) {
        for (int k = 1; k < dim0 - 1; ++k) {
            /* Evaluate r = I1(U*F/sigma^2) / I0(U*F/sigma^2)
               with a cubic rational approximation. */
            double r = U0[idx(i,j,k)]*F[idx(i,j,k)]/sigma2;
            r = ( r*(2.38944 + r*(0.950037 + r)) )
                / ( 4.65314 + r*(2.57541 + r*(1.48937 + r)) );
            /* Update U */
            U[idx(i,j,k)] = (U0[idx(i,j,k)] +
                DT*(U0[idx(i,j+1,k)]*G[idx(i,j+1,k)] +
                    U0[idx(i,j-1,k)]*G[idx(i,j-1,k)] +
                    U0[idx(i,j,k+1)]*G[idx(i,j,k+1)] +
                    U0[idx(i,j,k-1)]*G[idx(i,j,k-1)] +
                    U0[idx(i+1,j,k)]*G[idx(i+1,j,k)] +
                    U0[idx(i-1,j,k)]*G[idx(i-1,j,k)] +
                    gamma*F[idx(i,j,k)]*r))
                /
                (1.0 + DT*(G[idx(i,j+1,k)] + G[idx(i,j-1,k)] +
                           G[idx(i,j,k+1)] + G[idx(i,j,k-1)] +
                           G[idx(i+1,j,k)] + G[idx(i-1,j,k)] +
                           gamma));
            if (fabs(U0[idx(i,j,k)] - U[idx(i,j,k)]) > TOL) {
                converged = false;
            }
        }}}
        if (converged) {
            break;
        }
    }
#undef idx
    free(U0);
    free(G);
    return 0;
}

/* Figure 7.7 (denominator parenthesised as figure 7.1 computes it; every 1). */
int sdsl_rician3d(double *U, double *F, double sigma, double lambda,
                  int dim0, int dim1, int dim2) {
    // G is a local array
    double *G = (double*)malloc(dim0*dim1*dim2*sizeof(double));
    memset(G, 0, sizeof(double)*dim0*dim1*dim2);

    // Copy F to U
    memcpy(U, F, dim0*dim1*dim2*sizeof(double));

    #pragma sdsl begin gpu(block:4,4,4 tile:4,4,4 time:1)
    // Parameters
    int dim0;
    int dim1;
    int dim2;
    double sigma;
    double lambda;

    // Constants
    double DT = 5.0;
    double EPSILON = 1.0E-20;
    double sigma2 = sigma*sigma;
    double gamma = lambda/sigma2;
    double TOL = 0.00001;

    // Grid and griddata
    grid g[dim2][dim1][dim0];

    double griddata U on g at 0,1;
    double griddata G on g at 0;
    double griddata F on g at 0;

    pointfunction approx_g(u,g) {
        [0]g[0][0][0] = 1.0 / sqrt(EPSILON +
            ([0]u[0][0][0] - [0]u[ 0][ 1][ 0]) * ([0]u[0][0][0] - [0]u[ 0][ 1][ 0]) +
            ([0]u[0][0][0] - [0]u[ 0][-1][ 0]) * ([0]u[0][0][0] - [0]u[ 0][-1][ 0]) +
            ([0]u[0][0][0] - [0]u[ 0][ 0][ 1]) * ([0]u[0][0][0] - [0]u[ 0][ 0][ 1]) +
            ([0]u[0][0][0] - [0]u[ 0][ 0][-1]) * ([0]u[0][0][0] - [0]u[ 0][ 0][-1]) +
            ([0]u[0][0][0] - [0]u[ 1][ 0][ 0]) * ([0]u[0][0][0] - [0]u[ 1][ 0][ 0]) +
            ([0]u[0][0][0] - [0]u[-1][ 0][ 0]) * ([0]u[0][0][0] - [0]u[-1][ 0][ 0]) );
    }

    pointfunction update_u(u,g,f) {
        double r = [0]u[0][0][0]*[0]f[0][0][0]/sigma2;
        r = ( r*(2.38944 + r*(0.950037 + r)) )
            / ( 4.65314 + r*(2.57541 + r*(1.48937 + r)) );
        [1]u[0][0][0] = ([0]u[0][0][0] +
            DT*([0]u[ 0][ 1][ 0]*[0]g[ 0][ 1][ 0] +
                [0]u[ 0][-1][ 0]*[0]g[ 0][-1][ 0] +
                [0]u[ 0][ 0][ 1]*[0]g[ 0][ 0][ 1] +
                [0]u[ 0][ 0][-1]*[0]g[ 0][ 0][-1] +
                [0]u[ 1][ 0][ 0]*[0]g[ 1][ 0][ 0] +
                [0]u[-1][ 0][ 0]*[0]g[-1][ 0][ 0] +
                gamma*[0]f[0][0][0]*r))
            /
            (1.0 + DT*([0]g[ 0][ 1][ 0] +
                [0]g[ 0][-1][ 0] +
                [0]g[ 0][ 0][ 1] +
                [0]g[ 0][ 0][-1] +
                [0]g[ 1][ 0][ 0] +
                [0]g[-1][ 0][ 0] +
                gamma));
    }

    iterate 50 {
        stencil gs {
            [1:dim2-2][1:dim1-2][1:dim0-2] : approx_g(U,G);
        }
        stencil us {
            [1:dim2-2][1:dim1-2][1:dim0-2] : update_u(U,G,F);
        }
        reduction max_diff max {
            [1:dim2-2][1:dim1-2][1:dim0-2] : fabs([1]U[0][0][0] - [0]U[0][0][0]);
        }
    } check (max_diff < TOL) every 1 iterations
    #pragma sdsl end
    free(G);
    return sdsl_return_0;
}

/* The largest absolute difference between the reference and the SDSL result. */
static double check(const double *Uref, const double *U, int dim0, int dim1, int dim2) {
    double max_diff = 0.0;
    for (long i = 0; i < (long)dim0 * dim1 * dim2; ++i) {
        double diff = fabs(Uref[i] - U[i]);
        if (diff > max_diff || diff != diff) {
            max_diff = diff;
        }
    }
    return max_diff;
}

/* Figure 7.8, always checking against the reference. */
int main() {
    // Problem size
    const int dim0 = DIM;
    const int dim1 = DIM;
    const int dim2 = DIM;

    // Timing
    double start, finish;

    // Data arrays
    double *U = (double*)malloc(dim0*dim1*dim2*sizeof(double));
    double *F = (double*)malloc(dim0*dim1*dim2*sizeof(double));
    double *Uref = (double*)malloc(dim0*dim1*dim2*sizeof(double));
    double *Pref = (double*)malloc(dim0*dim1*dim2*sizeof(double));

    // Populate arrays with random values
    srand(45);
    for (int i = 0; i < dim0*dim1*dim2; ++i) {
        F[i] = (double)rand() / (double)(RAND_MAX);
        Pref[i] = F[i];
    }

    // Reference denoise call
    start = timestamp();
    int ref_ret = rician3d(Uref, Pref, 0.05, 0.065, dim0, dim1, dim2);
    finish = timestamp();
    printf(" REF: %.6f sec\n", finish-start);

    // SDSL denoise call
    start = timestamp();
    int sdsl_ret = sdsl_rician3d(U, F, 0.05, 0.065, dim0, dim1, dim2);
    finish = timestamp();
    printf("SDSL: %.6f sec\n", finish-start);

    // Check results
    double max_diff = check(Uref, U, dim0, dim1, dim2);
    printf("max abs difference %.3e\n", max_diff);

    // Cleanup
    free(U);
    free(F);
    free(Uref);
    free(Pref);
    if (ref_ret != 0 || sdsl_ret != 0) {
        return sdsl_ret != 0 ? sdsl_ret : ref_ret;
    }
    return max_diff > 1e-12 ? 1 : 0;
}
