/* The other vector exp, for a same-run comparison in the benchmark's header: this unit
 * takes a private copy of the library (ATTN_STATIC) built with the exp the benchmark's own
 * build does not use: SLEEF's when the build uses the library's own, and the other way
 * round. Compiled only where SLEEF is found and the path is SIMD (bench/meson.build). */
#ifdef ATTN_USE_SLEEF
#undef ATTN_USE_SLEEF
#else
#define ATTN_USE_SLEEF 1
#endif
#define ATTN_STATIC
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include "exp_alt.h"

const char *bench_exp_alt_name(void) { return attn_exp_impl(); }

/* y = exp(x) over n floats (a multiple of 4 vectors), passes times */
void bench_exp_alt(const float *x, float *y, size_t n, int passes)
{
    size_t i;
    int pass;
    for (pass = 0; pass < passes; pass++)
        for (i = 0; i < n; i += 4 * ATTN__VW) {
            attn__v e0 = attn__vexp(attn__vload(x + i));
            attn__v e1 = attn__vexp(attn__vload(x + i + ATTN__VW));
            attn__v e2 = attn__vexp(attn__vload(x + i + 2 * ATTN__VW));
            attn__v e3 = attn__vexp(attn__vload(x + i + 3 * ATTN__VW));
            attn__vstore(y + i, e0);
            attn__vstore(y + i + ATTN__VW, e1);
            attn__vstore(y + i + 2 * ATTN__VW, e2);
            attn__vstore(y + i + 3 * ATTN__VW, e3);
        }
}
