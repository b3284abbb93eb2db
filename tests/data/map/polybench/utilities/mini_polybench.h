/* A stand-in for PolyBench's utilities/polybench.h (see tests/cli/map_polybench.rs). */
#ifndef MINI_POLYBENCH_H
#define MINI_POLYBENCH_H
#include <stdlib.h>
void *polybench_alloc_data(unsigned long long n, int elt_size);
#ifdef MINI_USE_RESTRICT
# define RESTRICT restrict
#else
# define RESTRICT
#endif
#define ARRAY_2D_DECL(var, type, d1, d2) type (*var)[d1][d2] = (type (*)[d1][d2])polybench_alloc_data((d1) * (d2), sizeof(type))
#define ARRAY(x) (*x)
#endif
