/* Rician denoising: the C reference of the SDSL User Guide (fig. 7.1),
   with a small driver. The convergence check (`fabs(...) > TOL`) is a
   logical reduction over the U stencil. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void) {
    const int dim0 = 37, dim1 = 29, dim2 = 23;
    const int n = dim0 * dim1 * dim2;
    double *U = (double*)malloc(n * sizeof(double));
    double *F = (double*)malloc(n * sizeof(double));
    for (int p = 0; p < n; p++) {
        F[p] = (double)((p * 37 + 11) % 101) / 101.0;
    }
    rician3d(U, F, 0.05, 0.065, dim0, dim1, dim2);
    double sum = 0.0;
    for (int p = 0; p < n; p++) {
        sum += U[p];
    }
    printf("checksum %.17g\n", sum);
    printf("U[1000] = %.17g, U[%d] = %.17g\n", U[1000], n / 2, U[n / 2]);
    free(U);
    free(F);
    return 0;
}
