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
static inline attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return vfmaq_f32(c, a, b); }
static inline attn__v attn__vfma_exact(attn__v a, attn__v b, attn__v c) { return vfmaq_f32(c, a, b); }
static inline attn__v attn__vmax(attn__v a, attn__v b) { return vmaxq_f32(a, b); }
static inline attn__v attn__vmin(attn__v a, attn__v b) { return vminq_f32(a, b); }
static inline float attn__vhsum(attn__v a) { return vaddvq_f32(a); }
static inline float attn__vhmax(attn__v a) { return vmaxvq_f32(a); }
static inline attn__vm attn__vlt(attn__v a, attn__v b) { return vcltq_f32(a, b); }
static inline attn__vm attn__vgt(attn__v a, attn__v b) { return vcgtq_f32(a, b); }
static inline attn__vm attn__visnan(attn__v a) { return vmvnq_u32(vceqq_f32(a, a)); }
static inline attn__v attn__vselect(attn__vm m, attn__v a, attn__v b) { return vbslq_f32(m, a, b); }
static inline attn__v attn__vldexp(attn__v p, attn__v n)
{
    int32x4_t e = vshlq_n_s32(vcvtnq_s32_f32(n), 23);
    return vreinterpretq_f32_s32(vaddq_s32(vreinterpretq_s32_f32(p), e));
}
#endif
