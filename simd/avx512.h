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
    ATTN__CHECK_PART(n);
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), attn__vmask_first(n), p);
}
static inline void attn__vstore_part(float *p, attn__v v, size_t n)
{
    ATTN__CHECK_PART(n);
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
/* lane k = attn__vhsum(v[k]), k < 16, bit for bit: the same tree for the sixteen at once
 * (45 shuffles and adds instead of 128): halves, quarters, pairs, neighbours, the vectors
 * paired so that lane k ends up holding v[k]'s sum */
#define ATTN__HAVE_VTSUM 1
static ATTN__FORCE_INLINE __m512 attn__vts_halves(__m512 a, __m512 b)
{
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
}
static ATTN__FORCE_INLINE __m512 attn__vts_quarters(__m512 a, __m512 b)
{
    return _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x88), _mm512_shuffle_f32x4(a, b, 0xDD));
}
static ATTN__FORCE_INLINE attn__v attn__vtsum(const attn__v *v)
{
    const __m512 c0 = attn__vts_quarters(attn__vts_halves(v[0], v[4]),
                                         attn__vts_halves(v[8], v[12]));
    const __m512 c1 = attn__vts_quarters(attn__vts_halves(v[2], v[6]),
                                         attn__vts_halves(v[10], v[14]));
    const __m512 c2 = attn__vts_quarters(attn__vts_halves(v[1], v[5]),
                                         attn__vts_halves(v[9], v[13]));
    const __m512 c3 = attn__vts_quarters(attn__vts_halves(v[3], v[7]),
                                         attn__vts_halves(v[11], v[15]));
    const __m512 d0 =
        _mm512_add_ps(_mm512_shuffle_ps(c0, c2, 0x44), _mm512_shuffle_ps(c0, c2, 0xEE));
    const __m512 d1 =
        _mm512_add_ps(_mm512_shuffle_ps(c1, c3, 0x44), _mm512_shuffle_ps(c1, c3, 0xEE));
    return _mm512_add_ps(_mm512_shuffle_ps(d0, d1, 0x88), _mm512_shuffle_ps(d0, d1, 0xDD));
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
/* 4-bit values looked up (vpermps takes an index's low 4 bits: no mask, no conversion) */
static inline __m512 attn__q4_table(void)
{
    return _mm512_setr_ps(-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7);
}
static inline attn__v attn__vload_u4(const uint8_t *p, int hi)
{
    __m512i w = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    if (hi) w = _mm512_srli_epi32(w, 4);
    return _mm512_permutexvar_ps(w, attn__q4_table());
}
/* the 16 bytes widened once for both nibbles; the table scaled by d (exact: d * (q - 8)) */
#define ATTN__HAVE_VQ4_32 1
static inline void attn__vload_q4_32(const uint8_t *p, attn__v d, attn__v *out)
{
    const __m512i w = _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    const __m512 t = _mm512_mul_ps(d, attn__q4_table());
    out[0] = _mm512_permutexvar_ps(w, t);
    out[1] = _mm512_permutexvar_ps(_mm512_srli_epi32(w, 4), t);
}
/* Integer dot products (simd/generic.h's contract): AVX512-VNNI's vpdpbusd takes a4 + 128
 * unsigned; without it (AVX512F alone has no byte multiplies) two AVX2 halves, as
 * simd/avx2.h: |b| times a4 carrying b's sign (vpmaddubsw), the pairs added (vpmaddwd).
 * A build without -mavx512vnni still takes vpdpbusd where the CPU has it. */
#define ATTN__HAVE_VSTORE_I8 1
static inline void attn__vstore_i8(int8_t *p, attn__v v)
{
    _mm_storeu_si128((__m128i *)(void *)p, _mm512_cvtepi32_epi8(_mm512_cvtps_epi32(v)));
}
#define ATTN__HAVE_VI 1
#define ATTN__VI_DPBUSD(acc, a4, b)                                                         \
    _mm512_dpbusd_epi32((acc), _mm512_set1_epi32((int)((a4) ^ 0x80808080u)),               \
                        _mm512_loadu_si512((const void *)(b)))
#define ATTN__VI_TOF128(acc, s)                                                             \
    _mm512_cvtepi32_ps(                                                                    \
        _mm512_sub_epi32((acc), _mm512_slli_epi32(_mm512_loadu_si512((const void *)(s)), 7)))
#ifdef __AVX512VNNI__
#define ATTN__VI_BIAS 128
typedef __m512i attn__vi;
static inline attn__vi attn__vi_zero(void) { return _mm512_setzero_si512(); }
static inline attn__vi attn__vi_dot4(attn__vi acc, uint32_t a4, const int8_t *b)
{
    return ATTN__VI_DPBUSD(acc, a4, b);
}
static inline void attn__vi_store(int32_t *p, attn__vi v) { _mm512_storeu_si512((void *)p, v); }
static inline attn__v attn__vi_tof(attn__vi acc, const int32_t *s)
{
    return ATTN__VI_TOF128(acc, s);
}
#else
#define ATTN__VI_BIAS 0
typedef struct {
    __m256i lo, hi;
} attn__vi;
static inline attn__vi attn__vi_zero(void)
{
    attn__vi z;
    z.lo = z.hi = _mm256_setzero_si256();
    return z;
}
static inline __m256i attn__vi_half(__m256i acc, __m256i a, const int8_t *b)
{
    const __m256i bv = _mm256_loadu_si256((const __m256i *)(const void *)b);
    const __m256i p = _mm256_maddubs_epi16(_mm256_abs_epi8(bv), _mm256_sign_epi8(a, bv));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}
static inline attn__vi attn__vi_dot4(attn__vi acc, uint32_t a4, const int8_t *b)
{
    const __m256i a = _mm256_set1_epi32((int)a4);
    acc.lo = attn__vi_half(acc.lo, a, b);
    acc.hi = attn__vi_half(acc.hi, a, b + 32);
    return acc;
}
static inline void attn__vi_store(int32_t *p, attn__vi v)
{
    _mm256_storeu_si256((__m256i *)(void *)p, v.lo);
    _mm256_storeu_si256((__m256i *)(void *)(p + 8), v.hi);
}
static inline attn__v attn__vi_tof(attn__vi acc, const int32_t *s)
{
    (void)s;
    return _mm512_cvtepi32_ps(_mm512_inserti64x4(_mm512_castsi256_si512(acc.lo), acc.hi, 1));
}
#if defined(__GNUC__) || defined(__clang__)
#define ATTN__HAVE_VI_RT 1
#define ATTN__VI_RT_ATTR __attribute__((target("avx512vnni")))
#define ATTN__VI_RT_BIAS 128
typedef __m512i attn__vi_rt;
#define attn__vi_rt_zero() _mm512_setzero_si512()
#define attn__vi_rt_dot4 ATTN__VI_DPBUSD
#define attn__vi_rt_tof ATTN__VI_TOF128
/* AVX512-VNNI: cpuid leaf 7 subleaf 0, ecx bit 11 (its zmm state is AVX-512's) */
static inline int attn__vi_rt_probe(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (c >> 11 & 1u);
}
#endif
#endif
/* attn__vi_t8 (simd/generic.h's contract), in AVX-512F: 16 bytes of columns l, l + 4, l + 8,
 * l + 12 in the four 128-bit lanes, 4 x 4 int32 transposes within the lanes; q4_0's nibbles
 * less 8 by adding 0x78 (no carry between bytes) and flipping the top bit; the sums by
 * AVX2's vpmaddubsw on each half */
#define ATTN__HAVE_VI_T8 1
static inline __m512i attn__vi_cols4(const unsigned char *p, size_t rb)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(const void *)p));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(const void *)(p + 4 * rb)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(const void *)(p + 8 * rb)), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(const void *)(p + 12 * rb)),
                              3);
}
static inline void attn__vi_t4(const __m512i *y, unsigned char *o, __m256i *s)
{ /* s[0], s[1]: the sums of the byte pairs of columns 0-7, 8-15 */
    const __m512i t0 = _mm512_unpacklo_epi32(y[0], y[1]), t1 = _mm512_unpacklo_epi32(y[2], y[3]);
    const __m512i t2 = _mm512_unpackhi_epi32(y[0], y[1]), t3 = _mm512_unpackhi_epi32(y[2], y[3]);
    const __m256i one = _mm256_set1_epi8(1);
    __m512i x[4];
    size_t t;
    x[0] = _mm512_unpacklo_epi64(t0, t1);
    x[1] = _mm512_unpackhi_epi64(t0, t1);
    x[2] = _mm512_unpacklo_epi64(t2, t3);
    x[3] = _mm512_unpackhi_epi64(t2, t3);
    ATTN__UNROLL
    for (t = 0; t < 4; t++) {
        _mm512_storeu_si512((void *)(o + 64 * t), x[t]);
        s[0] = _mm256_add_epi16(s[0], _mm256_maddubs_epi16(one, _mm512_castsi512_si256(x[t])));
        s[1] = _mm256_add_epi16(s[1],
                                _mm256_maddubs_epi16(one, _mm512_extracti64x4_epi64(x[t], 1)));
    }
}
static inline void attn__vi_t8(int q4, const unsigned char *b, size_t rb, unsigned char *o,
                               int32_t *sum, uint16_t *h)
{
    const __m512i m = _mm512_set1_epi8(15), e = _mm512_set1_epi8(0x78);
    const __m512i f = _mm512_set1_epi8((char)0x80);
    __m512i y[4], z[4];
    __m256i s[2];
    size_t l;
    _mm256_storeu_si256((__m256i *)(void *)h,
                        _mm256_inserti128_si256(_mm256_castsi128_si256(attn__vi_h8(b, rb)),
                                                attn__vi_h8(b + 8 * rb, rb), 1));
    ATTN__UNROLL
    for (l = 0; l < 4; l++) {
        const unsigned char *p = b + l * rb + 2;
        if (q4) {
            const __m512i v = attn__vi_cols4(p, rb);
            y[l] = _mm512_xor_si512(_mm512_add_epi32(_mm512_and_si512(v, m), e), f);
            z[l] = _mm512_xor_si512(
                _mm512_add_epi32(_mm512_and_si512(_mm512_srli_epi32(v, 4), m), e), f);
        } else {
            y[l] = attn__vi_cols4(p, rb);
            z[l] = attn__vi_cols4(p + 16, rb);
        }
    }
    s[0] = s[1] = _mm256_setzero_si256();
    attn__vi_t4(y, o, s);
    attn__vi_t4(z, o + 256, s);
    _mm256_storeu_si256((__m256i *)(void *)sum, _mm256_madd_epi16(s[0], _mm256_set1_epi16(1)));
    _mm256_storeu_si256((__m256i *)(void *)(sum + 8),
                        _mm256_madd_epi16(s[1], _mm256_set1_epi16(1)));
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
 * block whose row i is at src + i * lds, rows i >= `rows` being zero (never read: a masked
 * load). dst rows are stored in order q = 0..15, so with ldd < 16 the later rows win the
 * overlap. Named registers, no arrays, so that compilers keep it out of memory at -O2 too.
 * Four rounds of 16 shuffles: pairs of rows interleaved in each 128-bit lane; then lane l
 * of u(4 g + c) holds rows 4 g .. 4 g + 3 of column 4 l + c; then lanes gathered across the
 * row groups, twice. */
#define ATTN__TR_LOAD(LD)                                                                  \
    r0 = LD(0), r1 = LD(1), r2 = LD(2), r3 = LD(3), r4 = LD(4), r5 = LD(5), r6 = LD(6);    \
    r7 = LD(7), r8 = LD(8), r9 = LD(9), r10 = LD(10), r11 = LD(11), r12 = LD(12);          \
    r13 = LD(13), r14 = LD(14), r15 = LD(15)
#define ATTN__TR_LD(i) _mm512_loadu_ps(src + (i) * lds)
#define ATTN__TR_LDZ(i)                                                                    \
    _mm512_maskz_loadu_ps((__mmask16)((i) < rows ? 0xFFFF : 0),                           \
                          src + ((i) < rows ? (i) : 0) * lds)
#define ATTN__TR_R1(a, b, lo, hi) lo = _mm512_unpacklo_ps(a, b), hi = _mm512_unpackhi_ps(a, b)
#define ATTN__TR_R2(t0, t1, t2, t3, u0, u1, u2, u3)                                        \
    u0 = _mm512_shuffle_ps(t0, t2, 0x44), u1 = _mm512_shuffle_ps(t0, t2, 0xEE),          \
    u2 = _mm512_shuffle_ps(t1, t3, 0x44), u3 = _mm512_shuffle_ps(t1, t3, 0xEE)
/* dst rows c, 4 + c, 8 + c, 12 + c from u(c), u(4 + c), u(8 + c), u(12 + c) */
#define ATTN__TR_R34(a, b, e, f, o0, o4, o8, o12)                                          \
    t0 = _mm512_shuffle_f32x4(a, b, 0x88), t1 = _mm512_shuffle_f32x4(a, b, 0xDD);         \
    t2 = _mm512_shuffle_f32x4(e, f, 0x88), t3 = _mm512_shuffle_f32x4(e, f, 0xDD);         \
    o0 = _mm512_shuffle_f32x4(t0, t2, 0x88), o4 = _mm512_shuffle_f32x4(t1, t3, 0x88);     \
    o8 = _mm512_shuffle_f32x4(t0, t2, 0xDD), o12 = _mm512_shuffle_f32x4(t1, t3, 0xDD)
static ATTN__FORCE_INLINE void attn__vtranspose_copy(const float *src, size_t lds,
                                                     size_t rows, float *dst, size_t ldd)
{
    __m512 r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11, r12, r13, r14, r15;
    __m512 t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15;
    if (rows >= 16) { /* the common case: no mask a row */
        ATTN__TR_LOAD(ATTN__TR_LD);
    } else {
        ATTN__TR_LOAD(ATTN__TR_LDZ);
    }
    ATTN__TR_R1(r0, r1, t0, t1), ATTN__TR_R1(r2, r3, t2, t3);
    ATTN__TR_R1(r4, r5, t4, t5), ATTN__TR_R1(r6, r7, t6, t7);
    ATTN__TR_R1(r8, r9, t8, t9), ATTN__TR_R1(r10, r11, t10, t11);
    ATTN__TR_R1(r12, r13, t12, t13), ATTN__TR_R1(r14, r15, t14, t15);
    ATTN__TR_R2(t0, t1, t2, t3, r0, r1, r2, r3);
    ATTN__TR_R2(t4, t5, t6, t7, r4, r5, r6, r7);
    ATTN__TR_R2(t8, t9, t10, t11, r8, r9, r10, r11);
    ATTN__TR_R2(t12, t13, t14, t15, r12, r13, r14, r15);
    /* outputs in t4 .. t15 and (the last column) r3, r7, r11, r15 */
    ATTN__TR_R34(r0, r4, r8, r12, t4, t8, t12, r0);
    ATTN__TR_R34(r1, r5, r9, r13, t5, t9, t13, r1);
    ATTN__TR_R34(r2, r6, r10, r14, t6, t10, t14, r2);
    ATTN__TR_R34(r3, r7, r11, r15, t7, t11, t15, r3);
    _mm512_storeu_ps(dst, t4), _mm512_storeu_ps(dst + ldd, t5);
    _mm512_storeu_ps(dst + 2 * ldd, t6), _mm512_storeu_ps(dst + 3 * ldd, t7);
    _mm512_storeu_ps(dst + 4 * ldd, t8), _mm512_storeu_ps(dst + 5 * ldd, t9);
    _mm512_storeu_ps(dst + 6 * ldd, t10), _mm512_storeu_ps(dst + 7 * ldd, t11);
    _mm512_storeu_ps(dst + 8 * ldd, t12), _mm512_storeu_ps(dst + 9 * ldd, t13);
    _mm512_storeu_ps(dst + 10 * ldd, t14), _mm512_storeu_ps(dst + 11 * ldd, t15);
    _mm512_storeu_ps(dst + 12 * ldd, r0), _mm512_storeu_ps(dst + 13 * ldd, r1);
    _mm512_storeu_ps(dst + 14 * ldd, r2), _mm512_storeu_ps(dst + 15 * ldd, r3);
}
#undef ATTN__TR_LOAD
#undef ATTN__TR_LD
#undef ATTN__TR_LDZ
#undef ATTN__TR_R1
#undef ATTN__TR_R2
#undef ATTN__TR_R34
#endif
