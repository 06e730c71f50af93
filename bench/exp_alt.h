/* bench/exp_alt.c: the vector exp the benchmark's build does not use (see there) */
#ifndef ATTN_BENCH_EXP_ALT_H
#define ATTN_BENCH_EXP_ALT_H
#include <stddef.h>
const char *bench_exp_alt_name(void);
void bench_exp_alt(const float *x, float *y, size_t n, int passes);
#endif
