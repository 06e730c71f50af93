/* simd/avx2.h - the AVX2+FMA vector layer of attn.h (8 lanes): primitives only, the same
 * names and contract as simd/scalar.h. Compiles on its own. */
#ifndef ATTN_SIMD_AVX2_H
#define ATTN_SIMD_AVX2_H
#include "common.h"
#include <immintrin.h>

#define ATTN__ISA_NAME "avx2"
#define ATTN__VW 8

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
const __m256 Sleef_expf8_u10avx2(__m256);
#pragma GCC diagnostic pop
#endif
#define attn__vsleef_exp(x) Sleef_expf8_u10avx2(x)
#endif

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
    __m256i m;
    ATTN__CHECK_PART(n);
    m = attn__vmask_first(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m),
                            _mm256_castsi256_ps(m));
}
static inline void attn__vstore_part(float *p, attn__v v, size_t n)
{
    ATTN__CHECK_PART(n);
    _mm256_maskstore_ps(p, attn__vmask_first(n), v);
}
static inline attn__v attn__vadd(attn__v a, attn__v b) { return _mm256_add_ps(a, b); }
static inline attn__v attn__vsub(attn__v a, attn__v b) { return _mm256_sub_ps(a, b); }
static inline attn__v attn__vmul(attn__v a, attn__v b) { return _mm256_mul_ps(a, b); }
static inline attn__v attn__vdiv(attn__v a, attn__v b) { return _mm256_div_ps(a, b); }
static inline attn__v attn__vsqrt(attn__v a) { return _mm256_sqrt_ps(a); }
static inline attn__v attn__vfma(attn__v a, attn__v b, attn__v c)
{
    return _mm256_fmadd_ps(a, b, c);
}
static inline attn__v attn__vfma_exact(attn__v a, attn__v b, attn__v c)
{
    return _mm256_fmadd_ps(a, b, c);
}
static inline attn__v attn__vmax(attn__v a, attn__v b) { return _mm256_max_ps(a, b); }
static inline attn__v attn__vmin(attn__v a, attn__v b) { return _mm256_min_ps(a, b); }
static inline float attn__vhsum(attn__v a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
/* out[k] = the sum (op 0), max (1) or min (2) of v[k]'s lanes, k < 8, for the eight vectors
 * at once (21 shuffles and ops instead of 48): the halves, then pairs, then neighbours, so
 * that each sum's order is attn__vhsum's ((l0+l4)+(l2+l6)) + ((l1+l5)+(l3+l7)) and
 * out[k] == attn__vhsum(v[k]) bit for bit. op: a constant after inlining. */
#define ATTN__HAVE_VHRED8 1
static ATTN__FORCE_INLINE __m256 attn__vred_op(__m256 a, __m256 b, int op)
{
    return op == 0 ? _mm256_add_ps(a, b) : op == 1 ? _mm256_max_ps(a, b) : _mm256_min_ps(a, b);
}
static ATTN__FORCE_INLINE __m256 attn__vred_halves(__m256 a, __m256 b, int op)
{
    return attn__vred_op(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31),
                         op);
}
static ATTN__FORCE_INLINE __m256 attn__vhred8v(const attn__v *v, int op)
{
    const __m256 t0 = attn__vred_halves(v[0], v[4], op), t1 = attn__vred_halves(v[1], v[5], op);
    const __m256 t2 = attn__vred_halves(v[2], v[6], op), t3 = attn__vred_halves(v[3], v[7], op);
    const __m256 u0 =
        attn__vred_op(_mm256_shuffle_ps(t0, t1, 0x44), _mm256_shuffle_ps(t0, t1, 0xEE), op);
    const __m256 u1 =
        attn__vred_op(_mm256_shuffle_ps(t2, t3, 0x44), _mm256_shuffle_ps(t2, t3, 0xEE), op);
    return attn__vred_op(_mm256_shuffle_ps(u0, u1, 0x88), _mm256_shuffle_ps(u0, u1, 0xDD), op);
}
static ATTN__FORCE_INLINE void attn__vhred8(const attn__v *v, float *out, int op)
{
    _mm256_storeu_ps(out, attn__vhred8v(v, op));
}
/* lane k = attn__vhsum(v[k]), k < 8, bit for bit (the tree above) */
#define ATTN__HAVE_VTSUM 1
static ATTN__FORCE_INLINE attn__v attn__vtsum(const attn__v *v) { return attn__vhred8v(v, 0); }
static inline float attn__vhmax(attn__v a)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}
static inline attn__vm attn__vlt(attn__v a, attn__v b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline attn__vm attn__vgt(attn__v a, attn__v b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
static inline attn__v attn__vselect(attn__vm m, attn__v a, attn__v b)
{
    return _mm256_blendv_ps(b, a, m);
}
static inline attn__v attn__vlut8_scale(const int32_t *tab, attn__v k)
{
    const __m256i b = _mm256_castps_si256(k);
    const __m256i t =
        _mm256_permutevar8x32_epi32(_mm256_loadu_si256((const __m256i *)(const void *)tab), b);
    return _mm256_castsi256_ps(_mm256_add_epi32(t, _mm256_slli_epi32(b, 20)));
}
static inline attn__v attn__vfabs(attn__v a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
static inline attn__v attn__vor(attn__v a, attn__v b) { return _mm256_or_ps(a, b); }
static inline int attn__vany_neg(attn__v a) { return _mm256_movemask_ps(a); }
/* lanes 2i and 2i+1 swapped (RoPE's adjacent pairs) */
#define ATTN__HAVE_VSWAP_PAIRS 1
static inline attn__v attn__vswap_pairs(attn__v a) { return _mm256_permute_ps(a, 0xB1); }
/* Integer dot products (simd/generic.h's contract): AVX-VNNI's vpdpbusd takes a4 + 128
 * unsigned; plain AVX2 multiplies |b| (unsigned: 128 for -128) by a4 carrying b's sign
 * (vpmaddubsw; no pair reaches the int16 limit, |a| <= 127), then adds the pairs
 * (vpmaddwd). A build without -mavxvnni still takes vpdpbusd where the CPU has it. */
#define ATTN__HAVE_VSTORE_I8 1
static inline void attn__vstore_i8(int8_t *p, attn__v v)
{
    const __m256i i = _mm256_cvtps_epi32(v);
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
    _mm_storel_epi64((__m128i *)(void *)p, _mm_packs_epi16(w, w));
}
#define ATTN__HAVE_VI 1
typedef __m256i attn__vi;
#define ATTN__VI_DPBUSD(acc, a4, b)                                                         \
    _mm256_dpbusd_avx_epi32((acc), _mm256_set1_epi32((int)((a4) ^ 0x80808080u)),           \
                            _mm256_loadu_si256((const __m256i *)(const void *)(b)))
#define ATTN__VI_TOF128(acc, s)                                                             \
    _mm256_cvtepi32_ps(_mm256_sub_epi32(                                                   \
        (acc), _mm256_slli_epi32(_mm256_loadu_si256((const __m256i *)(const void *)(s)), 7)))
static inline attn__vi attn__vi_zero(void) { return _mm256_setzero_si256(); }
#ifdef __AVXVNNI__
#define ATTN__VI_BIAS 128
static inline attn__vi attn__vi_dot4(attn__vi acc, uint32_t a4, const int8_t *b)
{
    return ATTN__VI_DPBUSD(acc, a4, b);
}
static inline attn__v attn__vi_tof(attn__vi acc, const int32_t *s)
{
    return ATTN__VI_TOF128(acc, s);
}
#else
#define ATTN__VI_BIAS 0
static inline attn__vi attn__vi_dot4(attn__vi acc, uint32_t a4, const int8_t *b)
{
    const __m256i bv = _mm256_loadu_si256((const __m256i *)(const void *)b);
    const __m256i p =
        _mm256_maddubs_epi16(_mm256_abs_epi8(bv), _mm256_sign_epi8(_mm256_set1_epi32((int)a4), bv));
    return _mm256_add_epi32(acc, _mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}
static inline attn__v attn__vi_tof(attn__vi acc, const int32_t *s)
{
    (void)s;
    return _mm256_cvtepi32_ps(acc);
}
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 || \
    defined(__clang__) && __clang_major__ >= 12
#define ATTN__HAVE_VI_RT 1
#define ATTN__VI_RT_ATTR __attribute__((target("avxvnni")))
#define ATTN__VI_RT_BIAS 128
typedef __m256i attn__vi_rt;
#define attn__vi_rt_zero() _mm256_setzero_si256()
#define attn__vi_rt_dot4 ATTN__VI_DPBUSD
#define attn__vi_rt_tof ATTN__VI_TOF128
/* AVX-VNNI: cpuid leaf 7 subleaf 1, eax bit 4 (its ymm state is AVX2's) */
static inline int attn__vi_rt_probe(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4 & 1u);
}
#endif
#endif
static inline void attn__vi_store(int32_t *p, attn__vi v)
{
    _mm256_storeu_si256((__m256i *)(void *)p, v);
}
/* attn__vi_t8 (simd/generic.h's contract): 16 bytes of column l in the low 128-bit lane
 * and of column l + 4 in the high one, then 4 x 4 int32 transposes within the lanes */
#define ATTN__HAVE_VI_T8 1
static inline __m256i attn__vi_cols2(const unsigned char *p, const unsigned char *q)
{
    return _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)p)),
        _mm_loadu_si128((const __m128i *)(const void *)q), 1);
}
static inline __m256i attn__vi_t4(const __m256i *y, unsigned char *o, __m256i s)
{ /* s plus the transposed vectors' byte pairs */
    const __m256i t0 = _mm256_unpacklo_epi32(y[0], y[1]), t1 = _mm256_unpacklo_epi32(y[2], y[3]);
    const __m256i t2 = _mm256_unpackhi_epi32(y[0], y[1]), t3 = _mm256_unpackhi_epi32(y[2], y[3]);
    __m256i x[4];
    size_t t;
    x[0] = _mm256_unpacklo_epi64(t0, t1);
    x[1] = _mm256_unpackhi_epi64(t0, t1);
    x[2] = _mm256_unpacklo_epi64(t2, t3);
    x[3] = _mm256_unpackhi_epi64(t2, t3);
    ATTN__UNROLL
    for (t = 0; t < 4; t++) {
        _mm256_storeu_si256((__m256i *)(void *)(o + 32 * t), x[t]);
        s = _mm256_add_epi16(s, _mm256_maddubs_epi16(_mm256_set1_epi8(1), x[t]));
    }
    return s;
}
static inline void attn__vi_t8(int q4, const unsigned char *b, size_t rb, unsigned char *o,
                               int32_t *sum, uint16_t *h)
{
    const __m256i m = _mm256_set1_epi8(15), e = _mm256_set1_epi8(8);
    __m256i y[4], z[4], s;
    size_t l;
    _mm_storeu_si128((__m128i *)(void *)h, attn__vi_h8(b, rb));
    ATTN__UNROLL
    for (l = 0; l < 4; l++) {
        const unsigned char *p = b + l * rb + 2, *q = b + (l + 4) * rb + 2;
        if (q4) {
            const __m256i v = attn__vi_cols2(p, q);
            y[l] = _mm256_sub_epi8(_mm256_and_si256(v, m), e);
            z[l] = _mm256_sub_epi8(_mm256_and_si256(_mm256_srli_epi16(v, 4), m), e);
        } else {
            y[l] = attn__vi_cols2(p, q);
            z[l] = attn__vi_cols2(p + 16, q + 16);
        }
    }
    s = attn__vi_t4(z, o + 128, attn__vi_t4(y, o, _mm256_setzero_si256()));
    _mm256_storeu_si256((__m256i *)(void *)sum, _mm256_madd_epi16(s, _mm256_set1_epi16(1)));
}

/* 16-bit storage, 8 elements widened on load and narrowed on store. f16 by F16C (rounding
 * to nearest even from the immediate, whatever MXCSR says; half subnormals kept under
 * FTZ/DAZ), when the compiler has it (-mf16c; every AVX2 CPU does): else generic.h's exact
 * element code. bf16 by shifts: rounding adds 0x7FFF plus the kept part's lowest bit (a
 * carry into the exponent gives the next binade or inf), a NaN gets its quiet bit. */
#ifdef __F16C__
#define ATTN__HAVE_VF16 1
static inline attn__v attn__vload_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
}
static inline void attn__vstore_f16(uint16_t *p, attn__v v)
{
    _mm_storeu_si128((__m128i *)(void *)p, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}
#define ATTN__HAVE_VSET1_F16 1
static inline attn__v attn__vset1_f16(uint16_t h)
{
    return _mm256_cvtph_ps(_mm_set1_epi16((short)h));
}
#endif
#define ATTN__HAVE_VBF16 1
static inline attn__v attn__vload_bf16(const uint16_t *p)
{
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}
static inline void attn__vstore_bf16(uint16_t *p, attn__v v)
{
    const __m256i x = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    const __m256 rne = _mm256_castsi256_ps(
        _mm256_add_epi32(x, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7FFF))));
    const __m256 quiet = _mm256_castsi256_ps(_mm256_or_si256(x, _mm256_set1_epi32(0x400000)));
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    __m256i r = _mm256_srli_epi32(_mm256_castps_si256(_mm256_blendv_ps(rne, quiet, nan)), 16);
    r = _mm256_packus_epi32(r, r); /* each 128-bit lane: its 4 halves twice */
    r = _mm256_permute4x64_epi64(r, 0x08); /* quadwords 0 and 2: the 8 halves in order */
    _mm_storeu_si128((__m128i *)(void *)p, _mm256_castsi256_si128(r));
}
/* Block-quantized weights (simd/generic.h's contract): 8 bytes widened to 8 lanes (a q4_0
 * block's bytes widened 8 at a time, then split into their two nibbles) */
#define ATTN__HAVE_VQ 1
static inline attn__v attn__vload_i8(const int8_t *p)
{
    const __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)p);
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
}
static inline attn__v attn__vload_u4(const uint8_t *p, int hi)
{
    __m256i w = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p));
    if (hi) w = _mm256_srli_epi32(w, 4);
    w = _mm256_sub_epi32(_mm256_and_si256(w, _mm256_set1_epi32(15)), _mm256_set1_epi32(8));
    return _mm256_cvtepi32_ps(w);
}
/* each 8 bytes loaded and widened once for both nibbles; times d (exact: d * (q - 8)) */
#define ATTN__HAVE_VQ4_32 1
static inline void attn__vload_q4_32(const uint8_t *p, attn__v d, attn__v *out)
{
    const __m256i m = _mm256_set1_epi32(15), e = _mm256_set1_epi32(8);
    int h;
    for (h = 0; h < 2; h++) { /* bytes 8h .. 8h + 7: elements 8h .. and 16 + 8h .. */
        const __m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(p + 8 * h));
        const __m256i w = _mm256_cvtepu8_epi32(b);
        const __m256i lo = _mm256_sub_epi32(_mm256_and_si256(w, m), e);
        const __m256i hi = _mm256_sub_epi32(_mm256_srli_epi32(w, 4), e);
        out[h] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(lo));
        out[2 + h] = _mm256_mul_ps(d, _mm256_cvtepi32_ps(hi));
    }
}
/* non-temporal store (p aligned to 32 bytes): writes a line without reading it first;
 * attn__vstream_fence() before the function returns */
#define ATTN__HAVE_VSTREAM 1
static inline void attn__vstream(float *p, attn__v v) { _mm256_stream_ps(p, v); }
static inline void attn__vstream_fence(void) { _mm_sfence(); }
/* Transposes an 8 x 8 block: row q of dst (at dst + q * ldd) receives column q of the
 * block whose row i is at src + i * lds, rows i >= `rows` being zero (never read). dst rows
 * are stored in order q = 0..7, so with ldd < 8 the later rows win the overlap. */
static ATTN__FORCE_INLINE void attn__vtranspose_copy(const float *src, size_t lds,
                                                     size_t rows, float *dst, size_t ldd)
{
    const __m256 z = _mm256_setzero_ps();
    __m256 r0, r1, r2, r3, r4, r5, r6, r7, t0, t1, t2, t3, t4, t5, t6, t7;
    __m256 u0, u1, u2, u3, u4, u5, u6, u7;
    if (rows >= 8) { /* the common case: no test per row */
        r0 = _mm256_loadu_ps(src);
        r1 = _mm256_loadu_ps(src + lds);
        r2 = _mm256_loadu_ps(src + 2 * lds);
        r3 = _mm256_loadu_ps(src + 3 * lds);
        r4 = _mm256_loadu_ps(src + 4 * lds);
        r5 = _mm256_loadu_ps(src + 5 * lds);
        r6 = _mm256_loadu_ps(src + 6 * lds);
        r7 = _mm256_loadu_ps(src + 7 * lds);
    } else {
        r0 = rows > 0 ? _mm256_loadu_ps(src) : z;
        r1 = rows > 1 ? _mm256_loadu_ps(src + lds) : z;
        r2 = rows > 2 ? _mm256_loadu_ps(src + 2 * lds) : z;
        r3 = rows > 3 ? _mm256_loadu_ps(src + 3 * lds) : z;
        r4 = rows > 4 ? _mm256_loadu_ps(src + 4 * lds) : z;
        r5 = rows > 5 ? _mm256_loadu_ps(src + 5 * lds) : z;
        r6 = rows > 6 ? _mm256_loadu_ps(src + 6 * lds) : z;
        r7 = z;
    }
    t0 = _mm256_unpacklo_ps(r0, r1);
    t1 = _mm256_unpackhi_ps(r0, r1);
    t2 = _mm256_unpacklo_ps(r2, r3);
    t3 = _mm256_unpackhi_ps(r2, r3);
    t4 = _mm256_unpacklo_ps(r4, r5);
    t5 = _mm256_unpackhi_ps(r4, r5);
    t6 = _mm256_unpacklo_ps(r6, r7);
    t7 = _mm256_unpackhi_ps(r6, r7);
    u0 = _mm256_shuffle_ps(t0, t2, 0x44);
    u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    u2 = _mm256_shuffle_ps(t1, t3, 0x44);
    u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    u4 = _mm256_shuffle_ps(t4, t6, 0x44);
    u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    u6 = _mm256_shuffle_ps(t5, t7, 0x44);
    u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(dst + ldd, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(dst + 2 * ldd, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(dst + 3 * ldd, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(dst + 4 * ldd, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(dst + 5 * ldd, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(dst + 6 * ldd, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(dst + 7 * ldd, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#endif
