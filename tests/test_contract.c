/* test_contract.c - the test builds check the vector layer's contracts (ATTN__CHECKS, set by
 * meson.build; simd/common.h): a partial load of a whole vector, outside attn__vload_part's
 * n < ATTN__VW, must trap. meson runs this with should_fail: a run that returns (the checks
 * off) fails the suite, and its count line fails CI's summary too. */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include <stdio.h>

int main(void)
{
    float x[64] = {0};
    volatile size_t n = ATTN__VW; /* (not a constant the compiler could fold) */
    attn__v v;
    printf("contract: %s, a partial load of %u lanes of %u: expected to trap\n", attn_isa(),
           (unsigned)n, (unsigned)ATTN__VW);
    fflush(stdout);
    v = attn__vload_part(x, n, 1.0f);
    printf("contract: 0 passed, 1 failed (no trap; lane sum %g)\n", (double)attn__vhsum(v));
    return 0;
}
