/* simd/scalar.h - the portable one-lane vector layer of attn.h: primitives only.
 * Every ISA file defines the same names: the vector type attn__v (ATTN__VW floats), its
 * mask type attn__vm, and the primitives below; simd/generic.h derives the rest once.
 * Contract every ISA keeps: attn__vmax(a, b) and attn__vmin(a, b) return b when b is NaN
 * (x86's maxps/minps rule; NEON propagates any NaN). Compiles on its own. */
#ifndef ATTN_SIMD_SCALAR_H
#define ATTN_SIMD_SCALAR_H
#include "common.h"
#include <math.h>
#include <string.h>

#define ATTN__ISA_NAME "scalar"
#define ATTN__VW 1

typedef float attn__v;
typedef int attn__vm;

static inline attn__v attn__vzero(void) { return 0.0f; }
static inline attn__v attn__vset1(float a) { return a; }
static inline attn__v attn__vload(const float *p) { return *p; }
static inline void attn__vstore(float *p, attn__v v) { *p = v; }
/* n < ATTN__VW lanes from p, the rest `fill`; never touches memory past p + n. */
static inline attn__v attn__vload_part(const float *p, size_t n, float fill)
{
    (void)p; (void)n;
    ATTN__CHECK_PART(n);
    return fill; /* n is always 0 here: one lane has no partial vectors */
}
static inline void attn__vstore_part(float *p, attn__v v, size_t n)
{
    (void)p; (void)v; (void)n;
    ATTN__CHECK_PART(n);
}
static inline attn__v attn__vadd(attn__v a, attn__v b) { return a + b; }
static inline attn__v attn__vsub(attn__v a, attn__v b) { return a - b; }
static inline attn__v attn__vmul(attn__v a, attn__v b) { return a * b; }
static inline attn__v attn__vdiv(attn__v a, attn__v b) { return a / b; }
static inline attn__v attn__vsqrt(attn__v a) { return sqrtf(a); }
/* a * b + c: fused where the target has a fast fma (FP_FAST_FMAF), else two roundings
 * (a libm fmaf call per element would make the scalar path slower than a naive loop) */
#ifdef FP_FAST_FMAF
static inline attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return fmaf(a, b, c); }
#else
static inline attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return a * b + c; }
#endif
/* a * b + c with one rounding, always (error terms need it) */
static inline attn__v attn__vfma_exact(attn__v a, attn__v b, attn__v c) { return fmaf(a, b, c); }
static inline attn__v attn__vmax(attn__v a, attn__v b) { return a > b ? a : b; }
static inline attn__v attn__vmin(attn__v a, attn__v b) { return a < b ? a : b; }
static inline float attn__vhsum(attn__v a) { return a; }
static inline float attn__vhmax(attn__v a) { return a; }
static inline attn__vm attn__vlt(attn__v a, attn__v b) { return a < b; }
static inline attn__vm attn__vgt(attn__v a, attn__v b) { return a > b; }
/* m ? a : b, lane by lane */
static inline attn__v attn__vselect(attn__vm m, attn__v a, attn__v b) { return m ? a : b; }
/* The float whose bits are tab[bits(k) & 7] + (bits(k) << 20), lane by lane (wrapping):
 * with bits(k) = c + 8m + j, c a multiple of 2^12 (the exp's rounding shifter 1.5 * 2^23)
 * and tab[j] = bits(2^(j/8)) - (j << 20), this is 2^(j/8) * 2^m when that is normal.
 * AVX2: vpermd; NEON: tbl; here an array index. */
static inline attn__v attn__vlut8_scale(const int32_t *tab, attn__v k)
{
    uint32_t b;
    memcpy(&b, &k, 4);
    b = (uint32_t)tab[b & 7u] + (b << 20);
    memcpy(&k, &b, 4);
    return k;
}
/* |a| (clears the sign bit) */
static inline attn__v attn__vfabs(attn__v a) { return fabsf(a); }
/* bitwise or of the lanes' bits */
static inline attn__v attn__vor(attn__v a, attn__v b)
{
    uint32_t u, v;
    memcpy(&u, &a, 4);
    memcpy(&v, &b, 4);
    u |= v;
    memcpy(&a, &u, 4);
    return a;
}
/* nonzero when some lane has its sign bit set (-0 and negative NaNs included) */
static inline int attn__vany_neg(attn__v a) { return signbit(a) != 0; }
/* Transposes an ATTN__VW x ATTN__VW block from src (row i at src + i * lds; rows >= `rows`
 * are zero and never read) to dst (row q at dst + q * ldd); one lane: a copy. */
static ATTN__FORCE_INLINE void attn__vtranspose_copy(const float *src, size_t lds,
                                                     size_t rows, float *dst, size_t ldd)
{
    (void)lds; (void)ldd;
    *dst = rows > 0 ? *src : 0.0f;
}
#endif
