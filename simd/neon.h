/* simd/neon.h - the AArch64 NEON vector layer of attn.h (4 lanes).
 * Included by attn.h inside its implementation section; same names as simd/scalar.h. */
#ifndef ATTN_SIMD_NEON_H
#define ATTN_SIMD_NEON_H
#include <arm_neon.h>
#include <string.h>

#define ATTN__ISA_NAME "neon"
#define ATTN__VW 4

typedef float32x4_t attn__v;
typedef uint32x4_t attn__vm;

static inline attn__v attn__vzero(void) { return vdupq_n_f32(0.0f); }
static inline attn__v attn__vset1(float a) { return vdupq_n_f32(a); }
static inline attn__v attn__vload(const float *p) { return vld1q_f32(p); }
static inline void attn__vstore(float *p, attn__v v) { vst1q_f32(p, v); }
static inline attn__v attn__vload_part(const float *p, size_t n, float fill)
{
    float t[4] = {fill, fill, fill, fill};
    memcpy(t, p, n * sizeof(float));
    return vld1q_f32(t);
}
static inline void attn__vstore_part(float *p, attn__v v, size_t n)
{
    float t[4];
    vst1q_f32(t, v);
    memcpy(p, t, n * sizeof(float));
}
static inline attn__v attn__vadd(attn__v a, attn__v b) { return vaddq_f32(a, b); }
static inline attn__v attn__vsub(attn__v a, attn__v b) { return vsubq_f32(a, b); }
static inline attn__v attn__vmul(attn__v a, attn__v b) { return vmulq_f32(a, b); }
static inline attn__v attn__vdiv(attn__v a, attn__v b) { return vdivq_f32(a, b); }
static inline attn__v attn__vsqrt(attn__v a) { return vsqrtq_f32(a); }
static inline attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return vfmaq_f32(c, a, b); }
static inline attn__v attn__vfma_exact(attn__v a, attn__v b, attn__v c) { return vfmaq_f32(c, a, b); }
static inline attn__v attn__vmax(attn__v a, attn__v b) { return vmaxq_f32(a, b); }
static inline attn__v attn__vmin(attn__v a, attn__v b) { return vminq_f32(a, b); }
static inline float attn__vhsum(attn__v a) { return vaddvq_f32(a); }
static inline float attn__vhmax(attn__v a) { return vmaxvq_f32(a); }
static inline attn__vm attn__vlt(attn__v a, attn__v b) { return vcltq_f32(a, b); }
static inline attn__vm attn__vgt(attn__v a, attn__v b) { return vcgtq_f32(a, b); }
static inline attn__v attn__vselect(attn__vm m, attn__v a, attn__v b) { return vbslq_f32(m, a, b); }
static inline attn__v attn__vldexp(attn__v p, attn__v n)
{
    int32x4_t e = vshlq_n_s32(vcvtnq_s32_f32(n), 23);
    return vreinterpretq_f32_s32(vaddq_s32(vreinterpretq_s32_f32(p), e));
}
/* the lookup by tbl: lane index j = bits & 7 becomes the byte indices 4j .. 4j + 3 */
static inline attn__v attn__vlut8_scale(const int32_t *tab, attn__v k)
{
    const uint32x4_t b = vreinterpretq_u32_f32(k);
    const uint32x4_t idx = vmlaq_n_u32(vdupq_n_u32(0x03020100u), vandq_u32(b, vdupq_n_u32(7u)), 0x04040404u);
    uint8x16x2_t t;
    t.val[0] = vld1q_u8((const uint8_t *)(const void *)tab);
    t.val[1] = vld1q_u8((const uint8_t *)(const void *)tab + 16);
    return vreinterpretq_f32_u32(vaddq_u32(vreinterpretq_u32_u8(vqtbl2q_u8(t, vreinterpretq_u8_u32(idx))),
                                           vshlq_n_u32(b, 20)));
}
static inline attn__v attn__vfabs(attn__v a) { return vabsq_f32(a); }
static inline attn__v attn__vor(attn__v a, attn__v b)
{
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
static inline int attn__vany_neg(attn__v a) { return vmaxvq_u32(vshrq_n_u32(vreinterpretq_u32_f32(a), 31)) != 0; }
/* Transposes a 4 x 4 block: row q of dst (at dst + q * ldd) receives column q of the
 * block whose row i is at src + i * lds, rows i >= `rows` being zero (never read). dst rows
 * are stored in order q = 0..3, so with ldd < 4 the later rows win the overlap. */
static ATTN__FORCE_INLINE void attn__vtranspose_copy(const float *src, size_t lds,
                                                     size_t rows, float *dst, size_t ldd)
{
    const float32x4_t z = vdupq_n_f32(0.0f);
    const float32x4_t r0 = rows > 0 ? vld1q_f32(src) : z;
    const float32x4_t r1 = rows > 1 ? vld1q_f32(src + lds) : z;
    const float32x4_t r2 = rows > 2 ? vld1q_f32(src + 2 * lds) : z;
    const float32x4_t r3 = rows > 3 ? vld1q_f32(src + 3 * lds) : z;
    const float32x4_t t0 = vtrn1q_f32(r0, r1), t1 = vtrn2q_f32(r0, r1);
    const float32x4_t t2 = vtrn1q_f32(r2, r3), t3 = vtrn2q_f32(r2, r3);
    vst1q_f32(dst, vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2))));
    vst1q_f32(dst + ldd, vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3))));
    vst1q_f32(dst + 2 * ldd, vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2))));
    vst1q_f32(dst + 3 * ldd, vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3))));
}

/* The matmul microkernel (the one per-ISA kernel, see attn.h's matmul section): an 8 x 12
 * register tile, 24 q accumulators, three B vectors and eight A values (two q registers,
 * used by lane) per step. acc(i, j) = sum over p < kc of A(i, p) * B(p, j) as one fma chain
 * in p order, A(i, p) = a[i * ars + p * acs], B(p, j) = b[p * ldb + j] (12 readable floats
 * per row). All 8 rows are computed and written whatever `rows`. Then by mode: 0 c = acc; 1 c = alpha * acc, then + beta * c by one fma when
 * beta != 0 (beta = 0 never reads c); 2 c = fma(alpha, acc, c). */
#define ATTN__MR 8
#define ATTN__NR 12
#define ATTN__UKR_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
static ATTN__FORCE_INLINE void attn__mm_ukr_body(size_t rows, size_t kc, const float *a,
                                                 size_t ars, size_t acs, const float *b,
                                                 size_t ldb, float *c, size_t ldc, float alpha,
                                                 float beta, int mode)
{
#define ATTN__UKR_DECL(i) float32x4_t c##i##0 = vdupq_n_f32(0.0f), c##i##1 = c##i##0, c##i##2 = c##i##0;
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
#define ATTN__UKR_OUT(i)                                                                    \
    {                                                                                       \
        float *cr = c + (i) * ldc;                                                          \
        ATTN__UKR_OUT1(cr, c##i##0) ATTN__UKR_OUT1(cr + 4, c##i##1) ATTN__UKR_OUT1(cr + 8, c##i##2) \
    }
        ATTN__UKR_ROWS(ATTN__UKR_OUT)
#undef ATTN__UKR_OUT
#undef ATTN__UKR_OUT1
    }
}
#undef ATTN__UKR_ROWS
#endif
