/* Shared by the hand-written baselines: data fill (the same as `stencilc bench`
   uses), timing, peak memory, and the result line. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Element i of every field's input: a fixed pseudo-random value in [0, 1). */
static inline double bench_value(long i)
{
    return (double)(((unsigned long long)i * 2654435761ULL) % 1000ULL) / 1000.0;
}

static void *bench_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* Peak resident set size of this process in KiB (VmHWM). */
static long bench_peak_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    if (f == NULL) return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmHWM:", 6) == 0) kb = atol(line + 6);
    }
    fclose(f);
    return kb;
}

static void bench_report(double seconds, long steps, double checksum)
{
    printf("{\"seconds\": %.9f, \"steps\": %ld, \"checksum\": %.17g, \"peak_rss_kb\": %ld}\n",
           seconds, steps, checksum, bench_peak_rss_kb());
}

static void bench_args(int argc, char **argv, long *n, long *steps)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s SIZE STEPS\n", argv[0]);
        exit(2);
    }
    *n = atol(argv[1]);
    *steps = atol(argv[2]);
}
#endif
