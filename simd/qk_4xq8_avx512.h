/* simd/qk_4xq8_avx512.h - attention's decode scores on a q8_0 K cache, AVX512-VNNI: four
 * query rows quantized per block of 32 against one K row, by integer dot products; and the
 * same quads of rows against q8_0 / q4_0 weights for attn_matmul_int8's few rows.
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
#define ATTN__HAVE_QK8_ROWS 1 /* attn__qk8_rows_body, below */
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

/* Block b of a group at kg of which m blocks lie in the row (4 or more: all): its 32 values,
 * or 0 past the row's end (values and scale read as 0, as the zero padded quads hold) */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m256i attn__qk8_kb(const unsigned char *kg, size_t m,
                                                            size_t b)
{
    return b < m ? _mm256_loadu_si256((const __m256i *)(const void *)(kg + 34 * b + 2))
                 : _mm256_setzero_si256();
}

/* Blocks 4 g .. 4 g + 3 of the q8_0 row k (nb blocks, the last ones zero padded: scale 0):
 * their values + 128 as two vectors, and their scales (attn__qk8_h4); a group the row ends
 * in read block by block where it lies (no copy) */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE uint64_t attn__qk8_kload(const unsigned char *k,
                                                                size_t nb, size_t g,
                                                                __m512i *k0, __m512i *k1)
{
    const __m512i x80 = _mm512_set1_epi8((char)0x80);
    const unsigned char *kg = k + g * 4 * 34;
    const size_t m = nb - 4 * g < 4 ? nb - 4 * g : 4;
    uint64_t h4;
    if (m == 4) { /* a whole group: no test per block */
        *k0 = _mm512_inserti64x4(_mm512_castsi256_si512(attn__qk8_kb(kg, 4, 0)),
                                 attn__qk8_kb(kg, 4, 1), 1);
        *k1 = _mm512_inserti64x4(_mm512_castsi256_si512(attn__qk8_kb(kg, 4, 2)),
                                 attn__qk8_kb(kg, 4, 3), 1);
        h4 = attn__qk8_h4(kg, 34, 4);
    } else {
        *k0 = _mm512_inserti64x4(_mm512_castsi256_si512(attn__qk8_kb(kg, m, 0)),
                                 attn__qk8_kb(kg, m, 1), 1);
        *k1 = _mm512_inserti64x4(_mm512_castsi256_si512(attn__qk8_kb(kg, m, 2)),
                                 attn__qk8_kb(kg, m, 3), 1);
        h4 = attn__qk8_h4(kg, 34, m);
    }
    *k0 = _mm512_xor_si512(*k0, x80);
    *k1 = _mm512_xor_si512(*k1, x80);
    return h4;
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
 * so a row's scores are the same bits whatever rows share its quad. V row j (vb bytes at
 * v + j * vrb; none where v is NULL) is requested as K row j is read. */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE void
attn__qk8_scores_body(int one, const unsigned char *k, size_t rb, size_t nk, size_t nb,
                      const unsigned char *quad, size_t nq, size_t nr, const size_t *n, float *s,
                      size_t lds, const unsigned char *v, size_t vrb, size_t vb)
{
    const unsigned char *qd = quad + 4 * nq * 32;
    size_t j, g, u;
    for (j = 0; j < nk; j++, k += rb) {
        __m512 f = _mm512_setzero_ps();
        float x[4];
        if (v) attn__prefetch_bytes(v + j * vrb, vb, 0);
        for (g = 0; g < nq / 4; g++) {
            __m512i k0, k1, z[4], t;
            const __m512 dk = attn__qk8_dk(attn__qk8_kload(k, nb, g, &k0, &k1));
            size_t r;
            ATTN__UNROLL
            for (r = 0; r < 4; r++)
                if (r == 0 || !one) z[r] = attn__qk8_z(k0, k1, quad + r * nq * 32 + g * 128);
            if (one) { /* every lane of quarter b: the block's sum */
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

/* 16 bytes at p + o[c] in quarter c */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m512i attn__qk8_q4x16(const unsigned char *const *p,
                                                                 size_t o)
{
    __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(const void *)(p[0] + o)));
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(const void *)(p[1] + o)), 1);
    v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(const void *)(p[2] + o)), 2);
    return _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(const void *)(p[3] + o)), 3);
}

/* Column c's (c < 4, at p[c]) block at byte ob: its values (q8_0 + 128, or q4_0's nibbles)
 * 0-15 in quarter c of *x0, 16-31 in quarter c of *x1; returns the 4 scales' bits */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE uint64_t attn__qk8_c4(int q4,
                                                              const unsigned char *const *p,
                                                              size_t ob, __m512i *x0,
                                                              __m512i *x1)
{
    uint64_t h4 = 0;
    size_t c;
    if (q4) {
        const __m512i v = attn__qk8_q4x16(p, ob + 2), m15 = _mm512_set1_epi8(15);
        *x0 = _mm512_and_si512(v, m15);
        *x1 = _mm512_and_si512(_mm512_srli_epi32(v, 4), m15);
    } else {
        const __m512i x80 = _mm512_set1_epi8((char)0x80);
        *x0 = _mm512_xor_si512(attn__qk8_q4x16(p, ob + 2), x80);
        *x1 = _mm512_xor_si512(attn__qk8_q4x16(p, ob + 18), x80);
    }
    ATTN__UNROLL
    for (c = 0; c < 4; c++) {
        uint16_t h;
        memcpy(&h, p[c] + ob, 2);
        h4 |= (uint64_t)h << 16 * c;
    }
    return h4;
}

/* One row's block (half-blocks broadcast in a0, a1) against 4 columns' (attn__qk8_c4's x0,
 * x1): quarter c holds the 4 lanes whose sum is column c's dot product */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m512i attn__qk8_cz(__m512i x0, __m512i x1, __m512i a0,
                                                              __m512i a1)
{
    return _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), x0, a0), x1, a1);
}

/* A row's half-block at qr broadcast to every quarter */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m512i attn__qk8_ah(const unsigned char *qr)
{
    return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(const void *)qr));
}

/* attn__qk8_rows_body for one row (row 0 of the quad): 16 columns a pass, 4 groups of 4 as
 * there, their sums gathered by attn__qk8_sum4 (lane 4 c + g: column 4 g + c), so that each
 * block's A half-blocks, scale and sum serve 16 columns and every lane of the fma is a column;
 * the same steps per column (its block's exact I, then one fma of I and dq dk), so its bits. */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE void
attn__qk8_row1_body(int q4, const unsigned char *b, size_t rb, size_t nc, size_t nb,
                    const unsigned char *quad, size_t nq, float *out, size_t npf)
{
    const size_t bs = q4 ? 18 : 34;
    const unsigned char *qd = quad + 4 * nq * 32;
    const __m512i tr = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    size_t j, blk, c, g;
    for (j = 0; j < nc; j += 16) {
        const unsigned char *p[16], *pn[16];
        __m512 f = _mm512_setzero_ps();
        float o[16];
        attn__qk8_cols(b, rb, j, 16, nc, npf, p, pn);
        for (blk = 0; blk < nb; blk++) {
            const size_t ob = blk * bs, oq = (blk / 4) * 128 + (blk % 4) * 16;
            const __m512i a0 = attn__qk8_ah(quad + blk * 32);
            const __m512i a1 = attn__qk8_ah(quad + blk * 32 + 16);
            int32_t bias;
            float da;
            uint64_t h4[4];
            __m512i x0, x1, z[4];
            __m512 db;
            memcpy(&bias, qd + oq + 64, 4);
            memcpy(&da, qd + oq, 4);
            if (q4) bias /= 16; /* 8 times the sum */
            ATTN__UNROLL
            for (g = 0; g < 4; g++) {
                h4[g] = attn__qk8_c4(q4, p + 4 * g, ob, &x0, &x1);
                z[g] = attn__qk8_cz(x0, x1, a0, a1);
            }
            attn__qk8_pf(pn, 16, blk, bs);
            db = _mm512_permutexvar_ps( /* lane 4 c + g: column 4 g + c's scale */
                tr, _mm512_cvtph_ps(_mm256_setr_epi64x((long long)h4[0], (long long)h4[1],
                                                       (long long)h4[2], (long long)h4[3])));
            f = _mm512_fmadd_ps(
                _mm512_cvtepi32_ps(_mm512_sub_epi32(attn__qk8_sum4(z), _mm512_set1_epi32(bias))),
                _mm512_mul_ps(db, _mm512_set1_ps(da)), f);
        }
        _mm512_storeu_ps(o, f);
        for (c = 0; c < 16 && j + c < nc; c++) out[j + c] = o[4 * (c % 4) + c / 4];
    }
}

/* attn_matmul_int8 for the quad's rows r < R (R 1 or 4; A's rows, each its own; one row
 * takes attn__qk8_row1_body) against
 * columns j < nc of B (q8_0, or q4_0 where q4; rows rb bytes apart at b, nb blocks each),
 * out[r * ldo + j]: 4 columns at a time, their half-blocks in quarters (attn__qk8_c4)
 * against a row's half-block broadcast, so one vpdpbusd per row and half; per block the
 * rows' lanes summed by integer shuffles (lane 4 c + r), then one fma of I and dq dk into
 * lane 4 c + r: attn__qd_rows's arithmetic, so its bits, without packing B. The next 4
 * columns' rows (those before column npf) are requested into L2 as these are read (rows of
 * a few KiB, 4 at a time, are too short for the hardware prefetcher). */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE void
attn__qk8_rows_body(int q4, size_t R, const unsigned char *b, size_t rb, size_t nc, size_t nb,
                    const unsigned char *quad, size_t nq, float *out, size_t ldo, size_t npf)
{
    const size_t bs = q4 ? 18 : 34;
    const unsigned char *qd = quad + 4 * nq * 32;
    size_t j, blk, c, r;
    if (R == 1) {
        attn__qk8_row1_body(q4, b, rb, nc, nb, quad, nq, out, npf);
        return;
    }
    for (j = 0; j < nc; j += 4) {
        const unsigned char *p[4], *pn[4];
        __m512 f = _mm512_setzero_ps();
        float o[16];
        attn__qk8_cols(b, rb, j, 4, nc, npf, p, pn);
        for (blk = 0; blk < nb; blk++) {
            const size_t ob = blk * bs, oq = (blk / 4) * 128 + (blk % 4) * 16;
            const __m128i b4 = _mm_loadu_si128((const __m128i *)(const void *)(qd + oq + 64));
            __m512i x0, x1, z[4], bias = _mm512_broadcast_i32x4(b4);
            const uint64_t h4 = attn__qk8_c4(q4, p, ob, &x0, &x1);
            attn__qk8_pf(pn, 4, blk, bs);
            ATTN__UNROLL
            for (r = 0; r < 4; r++) {
                const unsigned char *qr = quad + (r * nq + blk) * 32;
                z[r] = attn__qk8_cz(x0, x1, attn__qk8_ah(qr), attn__qk8_ah(qr + 16));
            }
            if (q4) bias = _mm512_srai_epi32(bias, 4); /* 8 times the sum */
            f = _mm512_fmadd_ps(
                _mm512_cvtepi32_ps(_mm512_sub_epi32(attn__qk8_sum4(z), bias)),
                _mm512_mul_ps(attn__qk8_dk(h4), _mm512_broadcast_f32x4(_mm_loadu_ps(
                                                    (const float *)(const void *)(qd + oq)))),
                f);
        }
        _mm512_storeu_ps(o, f);
        for (c = 0; c < 4 && j + c < nc; c++)
            for (r = 0; r < 4; r++) out[r * ldo + j + c] = o[4 * c + r];
    }
}

#endif
#endif
