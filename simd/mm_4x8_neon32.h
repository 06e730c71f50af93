/* simd/mm_4x8_neon32.h - attn.h's ARMv7 NEON matmul microkernel: a 4 x 8 tile (AArch32 has
 * 16 q registers: 8 accumulators, two B vectors, one broadcast A value; the packing wants
 * a row count that is a multiple of the vector width). Compiles on its own (with
 * simd/neon.h). */
#ifndef ATTN_SIMD_MM_4X8_NEON32_H
#define ATTN_SIMD_MM_4X8_NEON32_H
#include "neon.h"

/* acc(i, j) = sum over p < kc of A(i, p) * B(p, j) as one fma chain in p order,
 * A(i, p) = a[i * ars + p * acs], B(p, j) = b[p * ldb + j] (8 readable floats per row). Only
 * the first `rows` rows (a constant once inlined) are computed and written. Then by mode: 0 c =
 * acc; 1 c = alpha * acc, then
 * + beta * c by one fma when beta != 0 (beta = 0 never reads c); 2 c = fma(alpha, acc, c). */
#define ATTN__MR 4
#define ATTN__NR 8
#define ATTN__MM_UKR_ROWS 1 /* the rows argument is honoured: edge kernels pay less */
#define ATTN__UKR_ROWS(X) X(0) X(1) X(2) X(3)
static ATTN__FORCE_INLINE void attn__mm_ukr_body(size_t rows, size_t kc, const float *a,
                                                 size_t ars, size_t acs, const float *b,
                                                 size_t ldb, float *c, size_t ldc, float alpha,
                                                 float beta, int mode)
{
#define ATTN__UKR_DECL(i) float32x4_t c##i##0 = vdupq_n_f32(0.0f), c##i##1 = c##i##0;
    ATTN__UKR_ROWS(ATTN__UKR_DECL)
#undef ATTN__UKR_DECL
    size_t p;
    for (p = 0; p < kc; p++, a += acs, b += ldb) {
        const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4);
#define ATTN__UKR_ROW(i)                                                                    \
    if (rows > (i)) {                                                                       \
        const float32x4_t t = vdupq_n_f32(a[(i) * ars]);                                    \
        c##i##0 = vfmaq_f32(c##i##0, b0, t);                                                \
        c##i##1 = vfmaq_f32(c##i##1, b1, t);                                                \
    }
        ATTN__UKR_ROWS(ATTN__UKR_ROW)
#undef ATTN__UKR_ROW
    }
    {
        const float32x4_t va = vdupq_n_f32(alpha), vb = vdupq_n_f32(beta);
#define ATTN__UKR_OUT1(cp, x)                                                               \
    if (mode == 0) vst1q_f32(cp, x);                                                        \
    else if (mode == 2) vst1q_f32(cp, vfmaq_f32(vld1q_f32(cp), va, x));                     \
    else if (beta != 0.0f) vst1q_f32(cp, vfmaq_f32(vmulq_f32(va, x), vb, vld1q_f32(cp)));   \
    else vst1q_f32(cp, vmulq_f32(va, x));
#define ATTN__UKR_OUT(i)                                                                    \
    if (rows > (i)) {                                                                       \
        float *cr = c + (i) * ldc;                                                          \
        ATTN__UKR_OUT1(cr, c##i##0) ATTN__UKR_OUT1(cr + 4, c##i##1)                         \
    }
        ATTN__UKR_ROWS(ATTN__UKR_OUT)
#undef ATTN__UKR_OUT
#undef ATTN__UKR_OUT1
    }
}
#undef ATTN__UKR_ROWS
#endif
