/* polybench_alloc_data, in its own file as in PolyBench's utilities/polybench.c. */
#include <stdlib.h>
void *polybench_alloc_data(unsigned long long n, int elt_size) { return calloc(n, (size_t)elt_size); }
