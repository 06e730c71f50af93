/* simd/avx512.h - the AVX-512 vector layer of attn.h (16 lanes, AVX512F only): primitives
 * only, the same names and contract as simd/scalar.h. Tails by mask registers. Compiles
 * on its own (-mavx512f). */
#ifndef ATTN_SIMD_AVX512_H
#define ATTN_SIMD_AVX512_H
#include "common.h"

#define ATTN__ISA_NAME "avx512"
#define ATTN__VW 16

#ifdef ATTN_USE_SLEEF
#include <sleef.h>
/* SLEEF's 1-ulp exp for this width, declared here too: sleef.h declares it only where the
 * compiler's flags enable the ISA, not in a copy compiled for it by a target pragma */
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-qualifiers" /* sleef.h's const return type */
#ifdef __cplusplus
extern "C"
#endif
const __m512 Sleef_expf16_u10avx512f(__m512);
#pragma GCC diagnostic pop
#endif
#define attn__vsleef_exp(x) Sleef_expf16_u10avx512f(x)
#endif

typedef __m512 attn__v;
typedef __mmask16 attn__vm;

/* the first n lanes (n <= 16) */
static inline __mmask16 attn__vmask_first(size_t n) { return (__mmask16)((1u << n) - 1u); }
static inline attn__v attn__vzero(void) { return _mm512_setzero_ps(); }
static inline attn__v attn__vset1(float a) { return _mm512_set1_ps(a); }
static inline attn__v attn__vload(const float *p) { return _mm512_loadu_ps(p); }
static inline void attn__vstore(float *p, attn__v v) { _mm512_storeu_ps(p, v); }
static inline attn__v attn__vload_part(const float *p, size_t n, float fill)
{
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), attn__vmask_first(n), p);
}
static inline void attn__vstore_part(float *p, attn__v v, size_t n)
{
    _mm512_mask_storeu_ps(p, attn__vmask_first(n), v);
}
static inline attn__v attn__vadd(attn__v a, attn__v b) { return _mm512_add_ps(a, b); }
static inline attn__v attn__vsub(attn__v a, attn__v b) { return _mm512_sub_ps(a, b); }
static inline attn__v attn__vmul(attn__v a, attn__v b) { return _mm512_mul_ps(a, b); }
static inline attn__v attn__vdiv(attn__v a, attn__v b) { return _mm512_div_ps(a, b); }
static inline attn__v attn__vsqrt(attn__v a) { return _mm512_sqrt_ps(a); }
static inline attn__v attn__vfma(attn__v a, attn__v b, attn__v c)
{
    return _mm512_fmadd_ps(a, b, c);
}
static inline attn__v attn__vfma_exact(attn__v a, attn__v b, attn__v c)
{
    return _mm512_fmadd_ps(a, b, c);
}
static inline attn__v attn__vmax(attn__v a, attn__v b) { return _mm512_max_ps(a, b); }
static inline attn__v attn__vmin(attn__v a, attn__v b) { return _mm512_min_ps(a, b); }
/* horizontal sum: the halves, then as simd/avx2.h's on the 8-lane sum */
static inline float attn__vhsum(attn__v a)
{
    const __m256 h =
        _mm256_add_ps(_mm512_castps512_ps256(a),
                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline float attn__vhmax(attn__v a)
{
    const __m256 h =
        _mm256_max_ps(_mm512_castps512_ps256(a),
                      _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1)));
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline attn__vm attn__vlt(attn__v a, attn__v b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ);
}
static inline attn__vm attn__vgt(attn__v a, attn__v b)
{
    return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ);
}
static inline attn__v attn__vselect(attn__vm m, attn__v a, attn__v b)
{
    return _mm512_mask_blend_ps(m, b, a);
}
/* tab[bits(k) & 7] + (bits(k) << 20), lane by lane: the 8 entries twice, vpermd */
static inline attn__v attn__vlut8_scale(const int32_t *tab, attn__v k)
{
    const __m512i b = _mm512_castps_si512(k);
    const __m512i t8 =
        _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)tab));
    const __m512i t = _mm512_permutexvar_epi32(b, _mm512_shuffle_i64x2(t8, t8, 0x44));
    return _mm512_castsi512_ps(_mm512_add_epi32(t, _mm512_slli_epi32(b, 20)));
}
static inline attn__v attn__vfabs(attn__v a)
{
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a),
                                                _mm512_set1_epi32(0x7FFFFFFF)));
}
static inline attn__v attn__vor(attn__v a, attn__v b)
{
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}
static inline int attn__vany_neg(attn__v a)
{
    return _mm512_cmplt_epi32_mask(_mm512_castps_si512(a), _mm512_setzero_si512()) != 0;
}
/* lanes 2i and 2i+1 swapped (RoPE's adjacent pairs) */
#define ATTN__HAVE_VSWAP_PAIRS 1
static inline attn__v attn__vswap_pairs(attn__v a) { return _mm512_permute_ps(a, 0xB1); }
/* Block-quantized weights (simd/generic.h's contract): 16 bytes widened to 16 lanes */
#define ATTN__HAVE_VQ 1
static inline attn__v attn__vload_i8(const int8_t *p)
{
    const __m128i b = _mm_loadu_si128((const __m128i *)(const void *)p);
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b));
}
static inline attn__v attn__vload_u4(const uint8_t *p, int hi)
{
    __m512i w = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    if (hi) w = _mm512_srli_epi32(w, 4);
    w = _mm512_sub_epi32(_mm512_and_si512(w, _mm512_set1_epi32(15)), _mm512_set1_epi32(8));
    return _mm512_cvtepi32_ps(w);
}
/* 16-bit storage widened in the load, narrowed in the store (simd/generic.h's contract):
 * f16 by vcvtph2ps / vcvtps2ph, bf16 by shifts with round-to-nearest-even, NaN kept quiet */
#define ATTN__HAVE_VF16 1
static inline attn__v attn__vload_f16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
}
static inline void attn__vstore_f16(uint16_t *p, attn__v v)
{
    _mm256_storeu_si256((__m256i *)(void *)p, _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
#define ATTN__HAVE_VSET1_F16 1
static inline attn__v attn__vset1_f16(uint16_t h)
{
    return _mm512_cvtph_ps(_mm256_set1_epi16((short)h));
}
#define ATTN__HAVE_VBF16 1
static inline attn__v attn__vload_bf16(const uint16_t *p)
{
    const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}
static inline void attn__vstore_bf16(uint16_t *p, attn__v v)
{
    const __m512i x = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    const __m512i rne = _mm512_add_epi32(x, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7FFF)));
    const __m512i quiet = _mm512_or_si512(x, _mm512_set1_epi32(0x400000));
    const __m512i r = _mm512_mask_blend_epi32(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), rne, quiet);
    _mm256_storeu_si256((__m256i *)(void *)p, _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16)));
}
/* non-temporal store (p aligned to 64 bytes); attn__vstream_fence() before returning */
#define ATTN__HAVE_VSTREAM 1
static inline void attn__vstream(float *p, attn__v v) { _mm512_stream_ps(p, v); }
static inline void attn__vstream_fence(void) { _mm_sfence(); }

/* Transposes a 16 x 16 block: row q of dst (at dst + q * ldd) receives column q of the
 * block whose row i is at src + i * lds, rows i >= `rows` being zero (never read). dst rows
 * are stored in order q = 0..15, so with ldd < 16 the later rows win the overlap. In
 * registers, in four rounds of 16 shuffles: pairs of rows interleaved, then pairs of pairs
 * (each 128-bit lane then holds 4 rows of one column), then lanes gathered across 8 rows
 * and across all 16. */
static ATTN__FORCE_INLINE void attn__vtranspose_copy(const float *src, size_t lds,
                                                     size_t rows, float *dst, size_t ldd)
{
    __m512 r[16], t[16];
    size_t i, j;
    if (rows >= 16) /* the common case: no test per row */
        for (i = 0; i < 16; i++) r[i] = _mm512_loadu_ps(src + i * lds);
    else
        for (i = 0; i < 16; i++)
            r[i] = i < rows ? _mm512_loadu_ps(src + i * lds) : _mm512_setzero_ps();
    for (i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (i = 0; i < 16; i += 4) { /* r[i + j], lane l: rows i .. i + 3 of column 4 l + j */
        r[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
        r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
        r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    for (i = 0; i < 16; i += 8) /* t[i + j]: columns j, 8 + j; t[i + 4 + j]: 4 + j, 12 + j */
        for (j = 0; j < 4; j++) {
            t[i + j] = _mm512_shuffle_f32x4(r[i + j], r[i + 4 + j], 0x88);
            t[i + 4 + j] = _mm512_shuffle_f32x4(r[i + j], r[i + 4 + j], 0xDD);
        }
    for (j = 0; j < 8; j++) { /* columns j and 8 + j */
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xDD);
    }
    for (i = 0; i < 16; i++) _mm512_storeu_ps(dst + i * ldd, r[i]);
}
#endif
