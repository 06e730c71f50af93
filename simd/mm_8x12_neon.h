/* simd/mm_8x12_neon.h - attn.h's AArch64 NEON matmul microkernel: an 8 x 12 tile.
 * Compiles on its own (with simd/neon.h). */
#ifndef ATTN_SIMD_MM_8X12_NEON_H
#define ATTN_SIMD_MM_8X12_NEON_H
#include "neon.h"

/* The matmul microkernel (the one per-ISA kernel, see attn.h's matmul section): an 8 x 12
 * register tile, 24 q accumulators, three B vectors and eight A values (two q registers,
 * used by lane) per step. acc(i, j) = sum over p < kc of A(i, p) * B(p, j) as one fma chain
 * in p order, A(i, p) = a[i * ars + p * acs], B(p, j) = b[p * ldb + j] (12 readable floats
 * per row). All 8 rows are computed and written whatever `rows`. Then by mode: 0 c = acc; 1 c =
 * alpha * acc, then + beta * c by one fma when beta != 0 (beta = 0 never reads c); 2 c = fma(alpha,
 * acc, c). */
#define ATTN__MR 8
#define ATTN__NR 12
#define ATTN__UKR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
static ATTN__FORCE_INLINE void attn__mm_ukr_body(size_t rows, size_t kc, const float *a,
                                                 size_t ars, size_t acs, const float *b,
                                                 size_t ldb, float *c, size_t ldc, float alpha,
                                                 float beta, int mode)
{
#define ATTN__UKR_DECL(i)                                                                          \
    float32x4_t c##i##0 = vdupq_n_f32(0.0f), c##i##1 = c##i##0, c##i##2 = c##i##0;
    ATTN__UKR_ROWS(ATTN__UKR_DECL)
#undef ATTN__UKR_DECL
    size_t p;
    (void)rows;
    if (ars == 1) { /* the sliver's A values are contiguous: two vector loads, fma by lane */
        for (p = 0; p < kc; p++, a += acs, b += ldb) {
            const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
            const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
#define ATTN__UKR_LANE(i, av, l)                                                            \
    c##i##0 = vfmaq_laneq_f32(c##i##0, b0, av, l);                                           \
    c##i##1 = vfmaq_laneq_f32(c##i##1, b1, av, l);                                           \
    c##i##2 = vfmaq_laneq_f32(c##i##2, b2, av, l);
            ATTN__UKR_LANE(0, a0, 0) ATTN__UKR_LANE(1, a0, 1) ATTN__UKR_LANE(2, a0, 2)
            ATTN__UKR_LANE(3, a0, 3) ATTN__UKR_LANE(4, a1, 0) ATTN__UKR_LANE(5, a1, 1)
            ATTN__UKR_LANE(6, a1, 2) ATTN__UKR_LANE(7, a1, 3)
#undef ATTN__UKR_LANE
        }
    } else {
        for (p = 0; p < kc; p++, a += acs, b += ldb) {
            const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
#define ATTN__UKR_N(i)                                                                      \
    {                                                                                       \
        const float x = a[(i) * ars];                                                       \
        c##i##0 = vfmaq_n_f32(c##i##0, b0, x);                                               \
        c##i##1 = vfmaq_n_f32(c##i##1, b1, x);                                               \
        c##i##2 = vfmaq_n_f32(c##i##2, b2, x);                                               \
    }
            ATTN__UKR_ROWS(ATTN__UKR_N)
#undef ATTN__UKR_N
        }
    }
    {
        const float32x4_t va = vdupq_n_f32(alpha), vb = vdupq_n_f32(beta);
#define ATTN__UKR_OUT1(cp, x)                                                               \
    if (mode == 0) vst1q_f32(cp, x);                                                        \
    else if (mode == 2) vst1q_f32(cp, vfmaq_f32(vld1q_f32(cp), va, x));                     \
    else if (beta != 0.0f) vst1q_f32(cp, vfmaq_f32(vmulq_f32(va, x), vb, vld1q_f32(cp)));   \
    else vst1q_f32(cp, vmulq_f32(va, x));
#define ATTN__UKR_OUT(i)                                                                           \
    {                                                                                              \
        float *cr = c + (i)*ldc;                                                                   \
        ATTN__UKR_OUT1(cr, c##i##0)                                                                \
        ATTN__UKR_OUT1(cr + 4, c##i##1) ATTN__UKR_OUT1(cr + 8, c##i##2)                            \
    }
        ATTN__UKR_ROWS(ATTN__UKR_OUT)
#undef ATTN__UKR_OUT
#undef ATTN__UKR_OUT1
    }
}
#undef ATTN__UKR_ROWS
#endif
