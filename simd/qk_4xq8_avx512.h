/* simd/qk_4xq8_avx512.h - attention's decode scores on a q8_0 K cache, AVX512-VNNI: four
 * query rows quantized per block of 32 against one K row, by integer dot products.
 * Compiles on its own (with simd/avx512.h). */
#ifndef ATTN_SIMD_QK_4XQ8_AVX512_H
#define ATTN_SIMD_QK_4XQ8_AVX512_H
#include "avx512.h"

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
/* Four query rows, quantized, as a quad of nq blocks of 32 (nq a multiple of 4; blocks past
 * the row's end zero): 4 x nq x 32 int8 (row r's values at r * nq * 32), then per group of
 * 4 blocks 16 floats, lane 4 b + r the scale of row r's block b, then 16 int32, lane 4 b + r
 * 128 times the sum of that block's values. */
#define ATTN__QK8_QUAD_BYTES(nq) ((nq) * 160)

/* Blocks 4 g .. 4 g + 3 of the K row k (nb blocks, the last ones zero padded: scale 0):
 * their values + 128 as two vectors and their scales widened, lane 4 b + r block b's */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m512 attn__qk8_kload(const unsigned char *k,
                                                                size_t nb, size_t g,
                                                                __m512i *k0, __m512i *k1)
{
    const __m512i x80 = _mm512_set1_epi8((char)0x80);
    const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    unsigned char tail[4 * 34];
    const unsigned char *kg = k + g * 4 * 34;
    uint64_t h4 = 0;
    int b;
    if (nb - 4 * g < 4) {
        memset(tail, 0, sizeof tail);
        memcpy(tail, kg, (nb - 4 * g) * 34);
        kg = tail;
    }
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
    for (b = 0; b < 4; b++) {
        uint16_t h;
        memcpy(&h, kg + b * 34, 2);
        h4 |= (uint64_t)h << 16 * b;
    }
    return _mm512_permutexvar_ps(
        idx, _mm512_cvtph_ps(_mm256_castsi128_si256(_mm_cvtsi64_si128((long long)h4))));
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
            const __m512 dk = attn__qk8_kload(k, nb, g, &k0, &k1);
            const size_t rows = nr == 1 ? 1 : 4;
            size_t r;
            for (r = 0; r < rows; r++) { /* quarters of z[r]: row r's blocks, 4 lanes each */
                const unsigned char *qr = quad + r * nq * 32 + g * 128;
                const __m512i a = _mm512_dpbusd_epi32(_mm512_setzero_si512(), k0,
                                                      _mm512_loadu_si512((const void *)qr));
                const __m512i c = _mm512_dpbusd_epi32(
                    _mm512_setzero_si512(), k1, _mm512_loadu_si512((const void *)(qr + 64)));
                z[r] = _mm512_add_epi32(_mm512_shuffle_i32x4(a, c, 0x88),
                                        _mm512_shuffle_i32x4(a, c, 0xDD));
            }
            if (nr == 1) { /* every lane of quarter b: the block's sum */
                t = _mm512_add_epi32(z[0], _mm512_shuffle_epi32(z[0], (_MM_PERM_ENUM)0x4E));
                t = _mm512_add_epi32(t, _mm512_shuffle_epi32(t, (_MM_PERM_ENUM)0xB1));
            } else { /* lane 4 b + r: row r's block b */
                const __m512i u0 = _mm512_add_epi32(_mm512_unpacklo_epi32(z[0], z[1]),
                                                    _mm512_unpackhi_epi32(z[0], z[1]));
                const __m512i u1 = _mm512_add_epi32(_mm512_unpacklo_epi32(z[2], z[3]),
                                                    _mm512_unpackhi_epi32(z[2], z[3]));
                t = _mm512_add_epi32(_mm512_unpacklo_epi64(u0, u1),
                                     _mm512_unpackhi_epi64(u0, u1));
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
#endif
#endif
