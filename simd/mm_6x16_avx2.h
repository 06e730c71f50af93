/* simd/mm_6x16_avx2.h - attn.h's AVX2+FMA matmul microkernel: a 6 x 16 tile.
 * Compiles on its own (with simd/avx2.h). */
#ifndef ATTN_SIMD_MM_6X16_AVX2_H
#define ATTN_SIMD_MM_6X16_AVX2_H
#include "avx2.h"

/* The matmul microkernel (the one per-ISA kernel, see attn.h's matmul section): a 6 x 16
 * register tile, 12 ymm accumulators, two B vectors and one broadcast A value per step
 * (15 of the 16 ymm registers). acc(i, j) = sum over p < kc of A(i, p) * B(p, j) as one
 * fma chain in p order, A(i, p) = a[i * ars + p * acs], B(p, j) = b[p * ldb + j] (16
 * readable floats per row). Only the first `rows` rows (a constant once inlined: 2, 4 or
 * 6) are computed and written. Then by mode: 0 c = acc; 1 c = alpha * acc, then + beta * c
 * by one fma when beta != 0 (beta = 0 never reads c); 2 c = fma(alpha, acc, c). */
#define ATTN__MR 6
#define ATTN__NR 16
#define ATTN__MM_UKR_ROWS 1 /* the rows argument is honoured: edge kernels pay less */
static ATTN__FORCE_INLINE void attn__mm_ukr_body(size_t rows, size_t kc, const float *a,
                                                 size_t ars, size_t acs, const float *b,
                                                 size_t ldb, float *c, size_t ldc, float alpha,
                                                 float beta, int mode)
{
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    __m256 b0, b1, t;
    size_t p = kc;
#define ATTN__UKR_ROW(i)                                                                    \
    if (rows > (i)) {                                                                       \
        t = _mm256_broadcast_ss(a + (i) * ars);                                             \
        c##i##0 = _mm256_fmadd_ps(t, b0, c##i##0);                                          \
        c##i##1 = _mm256_fmadd_ps(t, b1, c##i##1);                                          \
    }
#define ATTN__UKR_STEP()                                                                    \
    b0 = _mm256_loadu_ps(b);                                                                \
    b1 = _mm256_loadu_ps(b + 8);                                                            \
    ATTN__UKR_ROW(0) ATTN__UKR_ROW(1) ATTN__UKR_ROW(2)                                      \
    ATTN__UKR_ROW(3) ATTN__UKR_ROW(4) ATTN__UKR_ROW(5)                                      \
    a += acs;                                                                               \
    b += ldb
    /* not unrolled: gcc then allocates registers cleanly (no copies); unrolled by 4 it
     * measured 8% slower on Zen 4, and the loop overhead hides behind the FMAs anyway */
    for (; p > 0; p--) {
        ATTN__UKR_STEP();
    }
#undef ATTN__UKR_STEP
#undef ATTN__UKR_ROW
    {
        /* alpha = 1: 1 * acc is acc and fma(1, acc, c) is acc + c, bit for bit; the plain
         * store and the add leave the FMA pipes to the next tile */
        const int one = alpha == 1.0f;
        const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#define ATTN__UKR_OUT1(cp, x)                                                               \
    if (mode == 0 || (mode == 1 && one && beta == 0.0f)) _mm256_storeu_ps(cp, x);          \
    else if (mode == 2 && one) _mm256_storeu_ps(cp, _mm256_add_ps(x, _mm256_loadu_ps(cp))); \
    else if (mode == 2) _mm256_storeu_ps(cp, _mm256_fmadd_ps(va, x, _mm256_loadu_ps(cp)));  \
    else if (beta != 0.0f)                                                                  \
        _mm256_storeu_ps(cp, _mm256_fmadd_ps(vb, _mm256_loadu_ps(cp), _mm256_mul_ps(va, x))); \
    else _mm256_storeu_ps(cp, _mm256_mul_ps(va, x));
#define ATTN__UKR_OUT(i)                                                                    \
    if (rows > (i)) {                                                                       \
        float *cr = c + (i) * ldc;                                                          \
        ATTN__UKR_OUT1(cr, c##i##0)                                                         \
        ATTN__UKR_OUT1(cr + 8, c##i##1)                                                     \
    }
        ATTN__UKR_OUT(0) ATTN__UKR_OUT(1) ATTN__UKR_OUT(2)
        ATTN__UKR_OUT(3) ATTN__UKR_OUT(4) ATTN__UKR_OUT(5)
#undef ATTN__UKR_OUT
#undef ATTN__UKR_OUT1
    }
}
#endif
