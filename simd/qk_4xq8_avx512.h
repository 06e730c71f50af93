/* simd/qk_4xq8_avx512.h - attention's decode scores on a q8_0 K cache, AVX512-VNNI: four
 * query rows quantized per block of 32 against one K row, by integer dot products.
 * Compiles on its own (with simd/avx512.h and simd/generic.h). */
#ifndef ATTN_SIMD_QK_4XQ8_AVX512_H
#define ATTN_SIMD_QK_4XQ8_AVX512_H
#include "avx512.h"
#include "generic.h"

/* vpdpbusd where the compiler targets AVX512-VNNI, else in a function compiled for it and
 * taken where the CPU has it (attn__qk8_cpu) */
#if defined(__AVX512VNNI__)
#define ATTN__HAVE_QK8 1
#define ATTN__QK8_ATTR
#define attn__qk8_cpu() 1
#elif defined(ATTN__HAVE_VI_RT)
#define ATTN__HAVE_QK8 1
#define ATTN__QK8_ATTR ATTN__VI_RT_ATTR
#define attn__qk8_cpu() attn__vi_rt_cpu() /* simd/generic.h's */
#endif

#ifdef ATTN__HAVE_QK8
#define ATTN__HAVE_QK8_COLS 1 /* attn__qk8_cols, below */
/* Four query rows, quantized, as a quad of nq blocks of 32 (nq a multiple of 4; blocks past
 * the row's end zero): 4 x nq x 32 int8 (row r's values at r * nq * 32), then per group of
 * 4 blocks 16 floats, lane 4 b + r the scale of row r's block b, then 16 int32, lane 4 b + r
 * 128 times the sum of that block's values. */
#define ATTN__QK8_QUAD_BYTES(nq) ((nq) * 160)

/* One row's 4 scales widened, lane 4 b + r block b's */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m512 attn__qk8_dk(uint64_t h4)
{
    const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    return _mm512_permutexvar_ps(
        idx, _mm512_cvtph_ps(_mm256_castsi128_si256(_mm_cvtsi64_si128((long long)h4))));
}

/* Four rows' 4 scales widened, lane 4 b + c row c's block b */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m512 attn__qk8_dk4(const uint64_t *h)
{
    const __m128i x01 = _mm_set_epi64x((long long)h[1], (long long)h[0]);
    const __m128i x23 = _mm_set_epi64x((long long)h[3], (long long)h[2]);
    const __m128i a = _mm_unpacklo_epi16(x01, x23), b = _mm_unpackhi_epi16(x01, x23);
    return _mm512_cvtph_ps(_mm256_set_m128i(_mm_unpackhi_epi16(a, b), _mm_unpacklo_epi16(a, b)));
}

/* Blocks 4 g .. 4 g + 3 of the q8_0 row k (nb blocks, the last ones zero padded: scale 0):
 * their values + 128 as two vectors, and their scales (attn__qk8_h4) */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE uint64_t attn__qk8_kload(const unsigned char *k,
                                                                size_t nb, size_t g,
                                                                __m512i *k0, __m512i *k1)
{
    const __m512i x80 = _mm512_set1_epi8((char)0x80);
    unsigned char tail[4 * 34];
    const unsigned char *kg = attn__qk8_group_at(k, nb, g, 34, tail);
    *k0 = _mm512_xor_si512(
        _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)(kg + 2))),
            _mm256_loadu_si256((const __m256i *)(const void *)(kg + 36)), 1),
        x80);
    *k1 = _mm512_xor_si512(
        _mm512_inserti64x4(
            _mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(const void *)(kg + 70))),
            _mm256_loadu_si256((const __m256i *)(const void *)(kg + 104)), 1),
        x80);
    return attn__qk8_h4(kg, 34);
}

/* Two q4_0 blocks' 16 bytes of nibbles at p0, p1 as [lo0 hi0 lo1 hi1] */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m512i attn__qk4_pair(const unsigned char *p0,
                                                                const unsigned char *p1)
{
    const __m512i x = _mm512_inserti64x4(
        _mm512_castsi256_si512(
            _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)p0))),
        _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)p1)), 1);
    return _mm512_and_si512(_mm512_mask_blend_epi64(0xCC, x, _mm512_srli_epi32(x, 4)),
                            _mm512_set1_epi8(15));
}

/* The same for a q4_0 row: the nibbles (values + 8, unsigned), low ones first per block */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE uint64_t attn__qk4_kload(const unsigned char *k,
                                                                size_t nb, size_t g,
                                                                __m512i *k0, __m512i *k1)
{
    unsigned char tail[4 * 18];
    const unsigned char *kg = attn__qk8_group_at(k, nb, g, 18, tail);
    *k0 = attn__qk4_pair(kg + 2, kg + 20);
    *k1 = attn__qk4_pair(kg + 38, kg + 56);
    return attn__qk8_h4(kg, 18);
}

/* Row r's 4 blocks (int8 at qr) against k0, k1: quarter b of the result holds the 4 lanes
 * whose sum is block b's dot product (unsigned k, signed q) */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m512i attn__qk8_z(__m512i k0, __m512i k1,
                                                             const unsigned char *qr)
{
    const __m512i a =
        _mm512_dpbusd_epi32(_mm512_setzero_si512(), k0, _mm512_loadu_si512((const void *)qr));
    const __m512i c = _mm512_dpbusd_epi32(_mm512_setzero_si512(), k1,
                                          _mm512_loadu_si512((const void *)(qr + 64)));
    return _mm512_add_epi32(_mm512_shuffle_i32x4(a, c, 0x88), _mm512_shuffle_i32x4(a, c, 0xDD));
}

/* Four rows' z summed per block: lane 4 b + r row r's block b (exact) */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m512i attn__qk8_sum4(const __m512i *z)
{
    const __m512i u0 =
        _mm512_add_epi32(_mm512_unpacklo_epi32(z[0], z[1]), _mm512_unpackhi_epi32(z[0], z[1]));
    const __m512i u1 =
        _mm512_add_epi32(_mm512_unpacklo_epi32(z[2], z[3]), _mm512_unpackhi_epi32(z[2], z[3]));
    return _mm512_add_epi32(_mm512_unpacklo_epi64(u0, u1), _mm512_unpackhi_epi64(u0, u1));
}

/* s[u * lds + j] for keys j < nk (K rows rb bytes apart at k, nb q8_0 blocks each) and rows
 * u < nr of the quad (nr 1 .. 4), where j < n[u]: sum over blocks b of (dq[u][b] * dk[b]) *
 * I[u][b], I the exact integer dot product of the blocks' values. Per 4 blocks: K + 128
 * (unsigned) by vpdpbusd against the rows' int8, each row's lanes summed per block by
 * integer shuffles and adds, the bias's 128 * sum taken off, then one fma with the scales
 * into lane 4 b + r; the groups of 4 blocks in order, the 4 block lanes of a row summed
 * last as ((b0 + b2) + (b1 + b3)). One row (nr 1) takes the same steps on its own lanes,
 * so a row's scores are the same bits whatever rows share its quad. */
static ATTN__QK8_ATTR void attn__qk8_scores(const unsigned char *k, size_t rb, size_t nk,
                                            size_t nb, const unsigned char *quad, size_t nq,
                                            size_t nr, const size_t *n, float *s, size_t lds)
{
    const unsigned char *qd = quad + 4 * nq * 32;
    size_t j, g, u;
    for (j = 0; j < nk; j++, k += rb) {
        __m512 f = _mm512_setzero_ps();
        float x[4];
        for (g = 0; g < nq / 4; g++) {
            __m512i k0, k1, z[4], t;
            const __m512 dk = attn__qk8_dk(attn__qk8_kload(k, nb, g, &k0, &k1));
            const size_t rows = nr == 1 ? 1 : 4;
            size_t r;
            for (r = 0; r < rows; r++) z[r] = attn__qk8_z(k0, k1, quad + r * nq * 32 + g * 128);
            if (nr == 1) { /* every lane of quarter b: the block's sum */
                t = _mm512_add_epi32(z[0], _mm512_shuffle_epi32(z[0], (_MM_PERM_ENUM)0x4E));
                t = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, (_MM_PERM_ENUM)0xB1));
            } else {
                t = attn__qk8_sum4(z);
            }
            t = _mm512_sub_epi32(t, _mm512_loadu_si512((const void *)(qd + g * 128 + 64)));
            f = _mm512_fmadd_ps(
                _mm512_cvtepi32_ps(t),
                _mm512_mul_ps(_mm512_loadu_ps((const float *)(const void *)(qd + g * 128)), dk),
                f);
        }
        f = _mm512_add_ps(f, _mm512_shuffle_f32x4(f, f, 0xEE));
        f = _mm512_add_ps(f, _mm512_shuffle_f32x4(f, f, 0x01));
        _mm_storeu_ps(x, _mm512_castps512_ps128(f));
        for (u = 0; u < nr; u++)
            if (j < n[u]) s[u * lds + j] = x[u];
    }
}

/* attn_matmul_int8 for one row of A, held in all 4 rows of a quad, against 4 columns of B at
 * once (cols; else 1 column, its 4 lanes equal). B is q8_0 rows, or q4_0 where q4, rb bytes
 * apart at b, nb blocks each. Each output: over the blocks in order, from 0, one fma each of
 * I[b] and dq[b] * dk[b], I the exact integer dot product: attn__qd_rows's arithmetic, so
 * its bits. Lane r of the group's f: column r at k + r rb. */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m128 attn__qk8_group(int q4, int cols,
                                                                const unsigned char *k,
                                                                size_t rb, size_t nb, size_t g,
                                                                const unsigned char *quad,
                                                                size_t nq, __m128 f)
{
    const unsigned char *qd = quad + 4 * nq * 32 + g * 128;
    __m512i k0, k1, z[4], bias = _mm512_loadu_si512((const void *)(qd + 64));
    uint64_t h[4];
    __m512 s, dd;
    int r;
    for (r = 0; r < 4; r++) {
        if (r == 0 || cols)
            h[r] = q4 ? attn__qk4_kload(k + r * rb, nb, g, &k0, &k1)
                      : attn__qk8_kload(k + r * rb, nb, g, &k0, &k1);
        z[r] = attn__qk8_z(k0, k1, quad + r * nq * 32 + g * 128);
    }
    if (q4) bias = _mm512_srai_epi32(bias, 4); /* 8 times the sum, for the nibbles' + 8 */
    s = _mm512_cvtepi32_ps(_mm512_sub_epi32(attn__qk8_sum4(z), bias));
    dd = _mm512_mul_ps(_mm512_loadu_ps((const float *)(const void *)qd),
                       cols ? attn__qk8_dk4(h) : attn__qk8_dk(h[0]));
    f = _mm_fmadd_ps(_mm512_castps512_ps128(s), _mm512_castps512_ps128(dd), f);
    f = _mm_fmadd_ps(_mm512_extractf32x4_ps(s, 1), _mm512_extractf32x4_ps(dd, 1), f);
    f = _mm_fmadd_ps(_mm512_extractf32x4_ps(s, 2), _mm512_extractf32x4_ps(dd, 2), f);
    return _mm_fmadd_ps(_mm512_extractf32x4_ps(s, 3), _mm512_extractf32x4_ps(dd, 3), f);
}

/* Columns j < nc into out[j]: 8 at a time (two fma chains), the rest one at a time */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE void
attn__qk8_cols_body(int q4, const unsigned char *b, size_t rb, size_t nc, size_t nb,
                    const unsigned char *quad, size_t nq, float *out)
{
    size_t j = 0, g;
    for (; j + 8 <= nc; j += 8) {
        const unsigned char *b0 = b + j * rb;
        __m128 f0 = _mm_setzero_ps(), f1 = _mm_setzero_ps();
        for (g = 0; g < nq / 4; g++) {
            f0 = attn__qk8_group(q4, 1, b0, rb, nb, g, quad, nq, f0);
            f1 = attn__qk8_group(q4, 1, b0 + 4 * rb, rb, nb, g, quad, nq, f1);
        }
        _mm_storeu_ps(out + j, f0);
        _mm_storeu_ps(out + j + 4, f1);
    }
    for (; j < nc; j++) {
        __m128 f0 = _mm_setzero_ps();
        for (g = 0; g < nq / 4; g++)
            f0 = attn__qk8_group(q4, 0, b + j * rb, rb, nb, g, quad, nq, f0);
        out[j] = _mm_cvtss_f32(f0);
    }
}

static ATTN__QK8_ATTR void attn__qk8_cols(int q4, const unsigned char *b, size_t rb, size_t nc,
                                          size_t nb, const unsigned char *quad, size_t nq,
                                          float *out)
{
    if (q4) attn__qk8_cols_body(1, b, rb, nc, nb, quad, nq, out);
    else attn__qk8_cols_body(0, b, rb, nc, nb, quad, nq, out);
}
#endif
#endif
