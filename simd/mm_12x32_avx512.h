/* simd/mm_12x32_avx512.h - attn.h's AVX-512 matmul microkernel: a 12 x 32 tile.
 * Compiles on its own (with simd/avx512.h). */
#ifndef ATTN_SIMD_MM_12X32_AVX512_H
#define ATTN_SIMD_MM_12X32_AVX512_H
#include "avx512.h"

/* The matmul microkernel (see attn.h's matmul section): a 12 x 32 register tile, 24 zmm
 * accumulators, two B vectors and one broadcast A value per row and step (27 of the 32 zmm
 * registers). acc(i, j) = sum over p < kc of A(i, p) * B(p, j) as one fma chain in p
 * order, A(i, p) = a[i * ars + p * acs], B(p, j) = b[p * ldb + j] (32 readable floats per
 * row). All 12 rows are computed and written. Then by mode: 0 c = acc; 1 c = alpha * acc,
 * then + beta * c by one fma when beta != 0 (beta = 0 never reads c); 2 c =
 * fma(alpha, acc, c). */
#define ATTN__MR 12
#define ATTN__NR 32
#define ATTN__UKR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
static ATTN__FORCE_INLINE void attn__mm_ukr_body(size_t rows, size_t kc, const float *a,
                                                 size_t ars, size_t acs, const float *b,
                                                 size_t ldb, float *c, size_t ldc, float alpha,
                                                 float beta, int mode)
{
#define ATTN__UKR_DECL(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = c##i##0;
    ATTN__UKR_ROWS(ATTN__UKR_DECL)
#undef ATTN__UKR_DECL
    __m512 b0, b1, t;
    size_t p;
    (void)rows;
    for (p = kc; p > 0; p--) {
        b0 = _mm512_loadu_ps(b);
        b1 = _mm512_loadu_ps(b + 16);
#define ATTN__UKR_ROW(i)                                                                    \
        t = _mm512_set1_ps(a[(i) * ars]);                                                   \
        c##i##0 = _mm512_fmadd_ps(t, b0, c##i##0);                                          \
        c##i##1 = _mm512_fmadd_ps(t, b1, c##i##1);
        ATTN__UKR_ROWS(ATTN__UKR_ROW)
#undef ATTN__UKR_ROW
        a += acs;
        b += ldb;
    }
    {
        /* alpha = 1: 1 * acc is acc and fma(1, acc, c) is acc + c, bit for bit */
        const int one = alpha == 1.0f;
        const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#define ATTN__UKR_OUT1(cp, x)                                                               \
    if (mode == 0 || (mode == 1 && one && beta == 0.0f)) _mm512_storeu_ps(cp, x);          \
    else if (mode == 2 && one) _mm512_storeu_ps(cp, _mm512_add_ps(x, _mm512_loadu_ps(cp))); \
    else if (mode == 2) _mm512_storeu_ps(cp, _mm512_fmadd_ps(va, x, _mm512_loadu_ps(cp)));  \
    else if (beta != 0.0f)                                                                  \
        _mm512_storeu_ps(cp, _mm512_fmadd_ps(vb, _mm512_loadu_ps(cp), _mm512_mul_ps(va, x))); \
    else _mm512_storeu_ps(cp, _mm512_mul_ps(va, x));
#define ATTN__UKR_OUT(i)                                                                    \
    {                                                                                       \
        float *cr = c + (i) * ldc;                                                          \
        ATTN__UKR_OUT1(cr, c##i##0)                                                         \
        ATTN__UKR_OUT1(cr + 16, c##i##1)                                                    \
    }
        ATTN__UKR_ROWS(ATTN__UKR_OUT)
#undef ATTN__UKR_OUT
#undef ATTN__UKR_OUT1
    }
}
#undef ATTN__UKR_ROWS
#endif
