/* simd/avx2.h - the AVX2+FMA vector layer of attn.h (8 lanes).
 * Included by attn.h inside its implementation section; same names as simd/scalar.h. */
#ifndef ATTN_SIMD_AVX2_H
#define ATTN_SIMD_AVX2_H
#include <immintrin.h>

#define ATTN__ISA_NAME "avx2"
#define ATTN__VW 8

typedef __m256 attn__v;
typedef __m256 attn__vm;

static inline attn__v attn__vzero(void) { return _mm256_setzero_ps(); }
static inline attn__v attn__vset1(float a) { return _mm256_set1_ps(a); }
static inline attn__v attn__vload(const float *p) { return _mm256_loadu_ps(p); }
static inline void attn__vstore(float *p, attn__v v) { _mm256_storeu_ps(p, v); }
static inline __m256i attn__vmask_first(size_t n)
{
    static const int32_t ones_then_zeros[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
    return _mm256_loadu_si256((const __m256i *)(const void *)(ones_then_zeros + 8 - n));
}
static inline attn__v attn__vload_part(const float *p, size_t n, float fill)
{
    __m256i m = attn__vmask_first(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m),
                            _mm256_castsi256_ps(m));
}
static inline void attn__vstore_part(float *p, attn__v v, size_t n)
{
    _mm256_maskstore_ps(p, attn__vmask_first(n), v);
}
static inline attn__v attn__vadd(attn__v a, attn__v b) { return _mm256_add_ps(a, b); }
static inline attn__v attn__vsub(attn__v a, attn__v b) { return _mm256_sub_ps(a, b); }
static inline attn__v attn__vmul(attn__v a, attn__v b) { return _mm256_mul_ps(a, b); }
static inline attn__v attn__vdiv(attn__v a, attn__v b) { return _mm256_div_ps(a, b); }
static inline attn__v attn__vfma(attn__v a, attn__v b, attn__v c) { return _mm256_fmadd_ps(a, b, c); }
static inline attn__v attn__vfma_exact(attn__v a, attn__v b, attn__v c) { return _mm256_fmadd_ps(a, b, c); }
static inline attn__v attn__vmax(attn__v a, attn__v b) { return _mm256_max_ps(a, b); }
static inline attn__v attn__vmin(attn__v a, attn__v b) { return _mm256_min_ps(a, b); }
static inline float attn__vhsum(attn__v a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float attn__vhmax(attn__v a)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline attn__vm attn__vlt(attn__v a, attn__v b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline attn__vm attn__vgt(attn__v a, attn__v b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline attn__vm attn__visnan(attn__v a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
static inline attn__v attn__vselect(attn__vm m, attn__v a, attn__v b) { return _mm256_blendv_ps(b, a, m); }
static inline attn__v attn__vldexp(attn__v p, attn__v n)
{
    __m256i e = _mm256_slli_epi32(_mm256_cvtps_epi32(n), 23);
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), e));
}
#endif
