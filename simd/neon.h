/* simd/neon.h - the NEON vector layer of attn.h (4 lanes): AArch64, and ARMv7 (AArch32 with
 * NEON and VFPv4's fused multiply-add: -mfpu=neon-vfpv4), whose NEON lacks a few AArch64
 * instructions (division, square root, across-vector reductions, two-register lookups,
 * 64-bit lane transposes, f16 conversions without -mfp16-format): those are written here
 * from what it has. AArch32 NEON flushes denormals, inputs and results. Primitives only,
 * the same names and contract as simd/scalar.h. Compiles on its own. */
#ifndef ATTN_SIMD_NEON_H
#define ATTN_SIMD_NEON_H
#include "common.h"
#include <arm_neon.h>
#include <math.h>
#include <string.h>

#ifdef __aarch64__
#define ATTN__ISA_NAME "neon"
#else
#define ATTN__ISA_NAME "neon32"
#endif
#define ATTN__VW 4

#ifdef ATTN_USE_SLEEF
#include <sleef.h>
/* SLEEF's 1-ulp exp for this width */
#define attn__vsleef_exp(x) Sleef_expf4_u10advsimd(x)
#endif

typedef float32x4_t attn__v;
typedef uint32x4_t attn__vm;

static inline attn__v attn__vzero(void) { return vdupq_n_f32(0.0f); }
static inline attn__v attn__vset1(float a) { return vdupq_n_f32(a); }
static inline attn__v attn__vload(const float *p) { return vld1q_f32(p); }
static inline void attn__vstore(float *p, attn__v v) { vst1q_f32(p, v); }
static inline attn__v attn__vload_part(const float *p, size_t n, float fill)
{
    float t[4] = {fill, fill, fill, fill};
    ATTN__CHECK_PART(n);
    memcpy(t, p, n * sizeof(float));
    return vld1q_f32(t);
}
static inline void attn__vstore_part(float *p, attn__v v, size_t n)
{
    float t[4];
    ATTN__CHECK_PART(n);
    vst1q_f32(t, v);
    memcpy(p, t, n * sizeof(float));
}
static inline attn__v attn__vadd(attn__v a, attn__v b) { return vaddq_f32(a, b); }
static inline attn__v attn__vsub(attn__v a, attn__v b) { return vsubq_f32(a, b); }
static inline attn__v attn__vmul(attn__v a, attn__v b) { return vmulq_f32(a, b); }
#ifdef __aarch64__
static inline attn__v attn__vdiv(attn__v a, attn__v b) { return vdivq_f32(a, b); }
static inline attn__v attn__vsqrt(attn__v a) { return vsqrtq_f32(a); }
#else /* lane by lane: correctly rounded, as on AArch64 */
static inline attn__v attn__vdiv(attn__v a, attn__v b)
{
    float x[4], y[4];
    int i;
    vst1q_f32(x, a);
    vst1q_f32(y, b);
    for (i = 0; i < 4; i++) x[i] /= y[i];
    return vld1q_f32(x);
}
static inline attn__v attn__vsqrt(attn__v a)
{
    float x[4];
    int i;
    vst1q_f32(x, a);
    for (i = 0; i < 4; i++) x[i] = sqrtf(x[i]);
    return vld1q_f32(x);
}
#endif
static inline attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return vfmaq_f32(c, a, b); }
static inline attn__v attn__vfma_exact(attn__v a, attn__v b, attn__v c)
{
    return vfmaq_f32(c, a, b);
}
static inline attn__v attn__vmax(attn__v a, attn__v b) { return vmaxq_f32(a, b); }
static inline attn__v attn__vmin(attn__v a, attn__v b) { return vminq_f32(a, b); }
#ifdef __aarch64__
static inline float attn__vhsum(attn__v a) { return vaddvq_f32(a); }
static inline float attn__vhmax(attn__v a) { return vmaxvq_f32(a); }
#else /* pairwise: (l0 + l1) + (l2 + l3) */
static inline float attn__vhsum(attn__v a)
{
    const float32x2_t s = vpadd_f32(vget_low_f32(a), vget_high_f32(a));
    return vget_lane_f32(vpadd_f32(s, s), 0);
}
static inline float attn__vhmax(attn__v a)
{
    const float32x2_t m = vpmax_f32(vget_low_f32(a), vget_high_f32(a));
    return vget_lane_f32(vpmax_f32(m, m), 0);
}
#endif
static inline attn__vm attn__vlt(attn__v a, attn__v b) { return vcltq_f32(a, b); }
static inline attn__vm attn__vgt(attn__v a, attn__v b) { return vcgtq_f32(a, b); }
static inline attn__v attn__vselect(attn__vm m, attn__v a, attn__v b) { return vbslq_f32(m, a, b); }
/* the lookup by tbl: lane index j = bits & 7 becomes the byte indices 4j .. 4j + 3 */
static inline attn__v attn__vlut8_scale(const int32_t *tab, attn__v k)
{
    const uint32x4_t b = vreinterpretq_u32_f32(k);
    const uint32x4_t idx =
        vmlaq_n_u32(vdupq_n_u32(0x03020100u), vandq_u32(b, vdupq_n_u32(7u)), 0x04040404u);
#ifdef __aarch64__
    uint8x16x2_t t;
    t.val[0] = vld1q_u8((const uint8_t *)(const void *)tab);
    t.val[1] = vld1q_u8((const uint8_t *)(const void *)tab + 16);
    return vreinterpretq_f32_u32(vaddq_u32(
        vreinterpretq_u32_u8(vqtbl2q_u8(t, vreinterpretq_u8_u32(idx))), vshlq_n_u32(b, 20)));
#else /* the 32-byte table as four d registers, each half of idx looked up */
    const uint8_t *tb = (const uint8_t *)(const void *)tab;
    const uint8x16_t ix = vreinterpretq_u8_u32(idx);
    uint8x8x4_t t;
    t.val[0] = vld1_u8(tb);
    t.val[1] = vld1_u8(tb + 8);
    t.val[2] = vld1_u8(tb + 16);
    t.val[3] = vld1_u8(tb + 24);
    return vreinterpretq_f32_u32(
        vaddq_u32(vreinterpretq_u32_u8(
                      vcombine_u8(vtbl4_u8(t, vget_low_u8(ix)), vtbl4_u8(t, vget_high_u8(ix)))),
                  vshlq_n_u32(b, 20)));
#endif
}
static inline attn__v attn__vfabs(attn__v a) { return vabsq_f32(a); }
static inline attn__v attn__vor(attn__v a, attn__v b)
{
    return vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)));
}
static inline int attn__vany_neg(attn__v a)
{
    const uint32x4_t s = vshrq_n_u32(vreinterpretq_u32_f32(a), 31);
#ifdef __aarch64__
    return vmaxvq_u32(s) != 0;
#else
    const uint32x2_t m = vpmax_u32(vget_low_u32(s), vget_high_u32(s));
    return vget_lane_u32(vpmax_u32(m, m), 0) != 0;
#endif
}
/* lanes 2i and 2i+1 swapped (RoPE's adjacent pairs) */
#define ATTN__HAVE_VSWAP_PAIRS 1
static inline attn__v attn__vswap_pairs(attn__v a) { return vrev64q_f32(a); }
/* 16-bit storage, 4 elements widened on load and narrowed on store. f16 by the AArch64
 * conversions (fcvtl, fcvtn: half subnormals kept whatever FPCR.FZ says; rounding by
 * FPCR, to nearest even by default). bf16 by shifts: rounding adds 0x7FFF plus the kept
 * part's lowest bit (a carry into the exponent gives the next binade or inf), a NaN gets
 * its quiet bit. */
#ifdef __aarch64__ /* AArch32: the exact element code of simd/generic.h */
#define ATTN__HAVE_VF16 1
static inline attn__v attn__vload_f16(const uint16_t *p)
{
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p)));
}
static inline void attn__vstore_f16(uint16_t *p, attn__v v)
{
    vst1_u16(p, vreinterpret_u16_f16(vcvt_f16_f32(v)));
}
#define ATTN__HAVE_VSET1_F16 1
static inline attn__v attn__vset1_f16(uint16_t h)
{
    return vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h)));
}
#endif
#define ATTN__HAVE_VBF16 1
static inline attn__v attn__vload_bf16(const uint16_t *p)
{
    return vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(p), 16));
}
static inline void attn__vstore_bf16(uint16_t *p, attn__v v)
{
    const uint32x4_t x = vreinterpretq_u32_f32(v);
    const uint32x4_t lsb = vandq_u32(vshrq_n_u32(x, 16), vdupq_n_u32(1));
    const uint32x4_t rne = vaddq_u32(x, vaddq_u32(lsb, vdupq_n_u32(0x7FFF)));
    const uint32x4_t quiet = vorrq_u32(x, vdupq_n_u32(0x400000));
    vst1_u16(p, vshrn_n_u32(vbslq_u32(vceqq_f32(v, v), rne, quiet), 16));
}
/* Block-quantized weights (simd/generic.h's contract): 4 bytes widened to 4 lanes */
#define ATTN__HAVE_VQ 1
static inline attn__v attn__vload_i8(const int8_t *p)
{
    int32_t w;
    memcpy(&w, p, 4);
    return vcvtq_f32_s32(vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_s32(vdup_n_s32(w))))));
}
static inline attn__v attn__vload_u4(const uint8_t *p, int hi)
{
    uint32_t w;
    uint8x8_t b;
    memcpy(&w, p, 4);
    b = vreinterpret_u8_u32(vdup_n_u32(w));
    b = hi ? vshr_n_u8(b, 4) : vand_u8(b, vdup_n_u8(15));
    return vcvtq_f32_s32(vsubq_s32(
        vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(b)))), vdupq_n_s32(8)));
}
#define ATTN__HAVE_VSTORE_I8 1
static inline void attn__vstore_i8(int8_t *p, attn__v v)
{
    const int16x4_t h = vmovn_s32(vcvtq_s32_f32(v));
    const int8x8_t b = vmovn_s16(vcombine_s16(h, h));
    memcpy(p, &b, 4);
}
/* Integer dot products (simd/generic.h's contract) where the target has Armv8.2's sdot;
 * elsewhere simd/generic.h's lanes */
#if defined(__aarch64__) && defined(__ARM_FEATURE_DOTPROD)
#define ATTN__HAVE_VI 1
#define ATTN__VI_BIAS 0
typedef int32x4_t attn__vi;
static inline attn__vi attn__vi_zero(void) { return vdupq_n_s32(0); }
static inline attn__vi attn__vi_dot4(attn__vi acc, uint32_t a4, const int8_t *b)
{
    return vdotq_s32(acc, vld1q_s8(b), vreinterpretq_s8_u32(vdupq_n_u32(a4)));
}
static inline void attn__vi_store(int32_t *p, attn__vi v) { vst1q_s32(p, v); }
static inline attn__v attn__vi_tof(attn__vi acc, const int32_t *s)
{
    (void)s;
    return vcvtq_f32_s32(acc);
}
#endif
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
#ifdef __aarch64__
    const float32x4_t t0 = vtrn1q_f32(r0, r1), t1 = vtrn2q_f32(r0, r1);
    const float32x4_t t2 = vtrn1q_f32(r2, r3), t3 = vtrn2q_f32(r2, r3);
    vst1q_f32(dst, vreinterpretq_f32_f64(
                       vtrn1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2))));
    vst1q_f32(dst + ldd, vreinterpretq_f32_f64(
                             vtrn1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3))));
    vst1q_f32(dst + 2 * ldd, vreinterpretq_f32_f64(
                                 vtrn2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2))));
    vst1q_f32(dst + 3 * ldd, vreinterpretq_f32_f64(
                                 vtrn2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3))));
#else
    const float32x4x2_t t01 = vtrnq_f32(r0, r1), t23 = vtrnq_f32(r2, r3);
    vst1q_f32(dst, vcombine_f32(vget_low_f32(t01.val[0]), vget_low_f32(t23.val[0])));
    vst1q_f32(dst + ldd, vcombine_f32(vget_low_f32(t01.val[1]), vget_low_f32(t23.val[1])));
    vst1q_f32(dst + 2 * ldd, vcombine_f32(vget_high_f32(t01.val[0]), vget_high_f32(t23.val[0])));
    vst1q_f32(dst + 3 * ldd, vcombine_f32(vget_high_f32(t01.val[1]), vget_high_f32(t23.val[1])));
#endif
}
#endif
