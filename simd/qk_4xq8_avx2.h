/* simd/qk_4xq8_avx2.h - attention's decode scores on a q8_0 K cache, AVX-VNNI: four query
 * rows quantized per block of 32 against one K row, by integer dot products; and the same
 * quads against weights for attn_matmul_int8's few rows: each result's arithmetic that of
 * simd/qk_4xq8_avx512.h, in 256-bit halves. Compiles on its own (with simd/avx2.h and
 * simd/generic.h). */
#ifndef ATTN_SIMD_QK_4XQ8_AVX2_H
#define ATTN_SIMD_QK_4XQ8_AVX2_H
#include "avx2.h"
#include "generic.h"

/* vpdpbusd where the compiler targets AVX-VNNI (and F16C, for the scales), else in a
 * function compiled for them (and FMA: its helpers are AVX2+FMA+F16C in a dispatching
 * build) and taken where the CPU has AVX-VNNI (every such CPU has FMA and F16C):
 * attn__qk8_cpu. Plain AVX2 keeps the f32 scores. */
#if defined(__AVXVNNI__) && defined(__F16C__)
#define ATTN__HAVE_QK8 1
#define ATTN__QK8_ATTR
#define attn__qk8_cpu() 1
#elif defined(ATTN__QK8_EVEX) && defined(__AVX512VNNI__) && defined(__AVX512VL__) && \
    defined(__F16C__)
/* (the tests' hook: these kernels through AVX512-VNNI's 256-bit vpdpbusd, the same
 * operation, so that a CPU with AVX512-VNNI and no AVX-VNNI runs them; tests/meson.build) */
#define ATTN__HAVE_QK8 1
#define ATTN__QK8_ATTR
#define attn__qk8_cpu() 1
#define ATTN__QK8_DPBUSD _mm256_dpbusd_epi32
#elif defined(ATTN__HAVE_VI_RT)
#define ATTN__HAVE_QK8 1
#define ATTN__QK8_ATTR __attribute__((target("avxvnni,fma,f16c")))
#define attn__qk8_cpu() attn__vi_rt_cpu() /* simd/generic.h's */
#endif

#ifdef ATTN__HAVE_QK8
#ifndef ATTN__QK8_DPBUSD
#define ATTN__QK8_DPBUSD _mm256_dpbusd_avx_epi32
#endif
#define ATTN__HAVE_QK8_ROWS 1 /* attn__qk8_rows_body, below */
/* The quad's layout: simd/qk_4xq8_avx512.h's */
#define ATTN__QK8_QUAD_BYTES(nq) ((nq) * 160)

/* Row r's blocks b0, b1 (int8 at q0, q1) against K's (values + 128 at k0, k1) folded to
 * [b0's four partial sums | b1's] */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m256i attn__qk8_z2(__m256i k0, __m256i k1,
                                                              const unsigned char *q0,
                                                              const unsigned char *q1)
{
    const __m256i z = _mm256_setzero_si256();
    const __m256i a =
        ATTN__QK8_DPBUSD(z, k0, _mm256_loadu_si256((const __m256i *)(const void *)q0));
    const __m256i c =
        ATTN__QK8_DPBUSD(z, k1, _mm256_loadu_si256((const __m256i *)(const void *)q1));
    return _mm256_add_epi32(_mm256_blend_epi32(a, c, 0xF0), _mm256_permute2x128_si256(a, c, 0x21));
}

/* Four rows' folds summed per block: lane 4 b + r row r's block b (exact) */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m256i attn__qk8_sum4(const __m256i *w)
{
    const __m256i u0 =
        _mm256_add_epi32(_mm256_unpacklo_epi32(w[0], w[1]), _mm256_unpackhi_epi32(w[0], w[1]));
    const __m256i u1 =
        _mm256_add_epi32(_mm256_unpacklo_epi32(w[2], w[3]), _mm256_unpackhi_epi32(w[2], w[3]));
    return _mm256_add_epi32(_mm256_unpacklo_epi64(u0, u1), _mm256_unpackhi_epi64(u0, u1));
}

/* Columns c < 2 (at p[c]) block at byte ob: values (q8_0 + 128, or q4_0's nibbles) 0-15 in
 * half c of *x0, 16-31 in half c of *x1; returns the 2 scales' bits */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE uint32_t attn__qk8_c2(int q4,
                                                              const unsigned char *const *p,
                                                              size_t ob, __m256i *x0,
                                                              __m256i *x1)
{
    uint16_t h0, h1;
    if (q4) {
        const __m256i m15 = _mm256_set1_epi8(15);
        const __m256i v = _mm256_loadu2_m128i((const __m128i *)(const void *)(p[1] + ob + 2),
                                              (const __m128i *)(const void *)(p[0] + ob + 2));
        *x0 = _mm256_and_si256(v, m15);
        *x1 = _mm256_and_si256(_mm256_srli_epi16(v, 4), m15);
    } else {
        const __m256i x80 = _mm256_set1_epi8((char)0x80);
        *x0 = _mm256_xor_si256(
            _mm256_loadu2_m128i((const __m128i *)(const void *)(p[1] + ob + 2),
                                (const __m128i *)(const void *)(p[0] + ob + 2)), x80);
        *x1 = _mm256_xor_si256(
            _mm256_loadu2_m128i((const __m128i *)(const void *)(p[1] + ob + 18),
                                (const __m128i *)(const void *)(p[0] + ob + 18)), x80);
    }
    memcpy(&h0, p[0] + ob, 2);
    memcpy(&h1, p[1] + ob, 2);
    return (uint32_t)h0 | (uint32_t)h1 << 16;
}

/* attn__qk8_rows_body for one row (row 0 of the quad): 8 columns a pass, 4 pairs of 2 as
 * there, their sums gathered by attn__qk8_sum4 (lane 4 h + g: column 2 g + h), so that each
 * block's A half-blocks, scale and sum serve 8 columns and every lane of the fma is a column;
 * the same steps per column (its block's exact I, then one fma of I and dq dk), so its bits. */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE void
attn__qk8_row1_body(int q4, const unsigned char *b, size_t rb, size_t nc, size_t nb,
                    const unsigned char *quad, size_t nq, float *out, size_t npf)
{
    const size_t bs = q4 ? 18 : 34;
    const unsigned char *qd = quad + 4 * nq * 32;
    const __m256i tr = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    size_t j, blk, c, g;
    for (j = 0; j < nc; j += 8) {
        const unsigned char *p[8], *pn[8];
        __m256 f = _mm256_setzero_ps();
        float o[8];
        attn__qk8_cols(b, rb, j, 8, nc, npf, p, pn);
        for (blk = 0; blk < nb; blk++) {
            const size_t ob = blk * bs, oq = (blk / 4) * 128 + (blk % 4) * 16;
            const __m256i a0 = _mm256_broadcastsi128_si256(
                _mm_loadu_si128((const __m128i *)(const void *)(quad + blk * 32)));
            const __m256i a1 = _mm256_broadcastsi128_si256(
                _mm_loadu_si128((const __m128i *)(const void *)(quad + blk * 32 + 16)));
            int32_t bias;
            float da;
            uint32_t h2[4];
            __m256i x0, x1, z[4];
            __m256 db;
            memcpy(&bias, qd + oq + 64, 4);
            memcpy(&da, qd + oq, 4);
            if (q4) bias /= 16; /* 8 times the sum */
            ATTN__UNROLL
            for (g = 0; g < 4; g++) {
                h2[g] = attn__qk8_c2(q4, p + 2 * g, ob, &x0, &x1);
                z[g] = ATTN__QK8_DPBUSD(ATTN__QK8_DPBUSD(_mm256_setzero_si256(), x0, a0), x1, a1);
            }
            attn__qk8_pf(pn, 8, blk, bs);
            db = _mm256_permutevar8x32_ps( /* lane 4 h + g: column 2 g + h's scale */
                _mm256_cvtph_ps(_mm_setr_epi32((int)h2[0], (int)h2[1], (int)h2[2], (int)h2[3])),
                tr);
            f = _mm256_fmadd_ps(
                _mm256_cvtepi32_ps(_mm256_sub_epi32(attn__qk8_sum4(z), _mm256_set1_epi32(bias))),
                _mm256_mul_ps(db, _mm256_set1_ps(da)), f);
        }
        _mm256_storeu_ps(o, f);
        for (c = 0; c < 8 && j + c < nc; c++) out[j + c] = o[4 * (c % 2) + c / 2];
    }
}

/* simd/qk_4xq8_avx512.h's attn__qk8_rows_body (the same contract and arithmetic, so the same
 * bits), 2 columns to a vector (half c: column c), 4 columns at a time; one row takes
 * attn__qk8_row1_body */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE void
attn__qk8_rows_body(int q4, size_t R, const unsigned char *b, size_t rb, size_t nc, size_t nb,
                    const unsigned char *quad, size_t nq, float *out, size_t ldo, size_t npf)
{
    const size_t bs = q4 ? 18 : 34;
    const unsigned char *qd = quad + 4 * nq * 32;
    const __m256i idx = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    size_t j, blk, c, r, u;
    if (R == 1) {
        attn__qk8_row1_body(q4, b, rb, nc, nb, quad, nq, out, npf);
        return;
    }
    for (j = 0; j < nc; j += 4) {
        const unsigned char *p[4], *pn[4];
        __m256 f[2];
        float o[16];
        for (u = 0; u < 2; u++) f[u] = _mm256_setzero_ps();
        attn__qk8_cols(b, rb, j, 4, nc, npf, p, pn);
        for (blk = 0; blk < nb; blk++) {
            const size_t ob = blk * bs, oq = (blk / 4) * 128 + (blk % 4) * 16;
            const __m256 da = _mm256_broadcast_ps((const __m128 *)(const void *)(qd + oq));
            __m256i bias = _mm256_broadcastsi128_si256(
                _mm_loadu_si128((const __m128i *)(const void *)(qd + oq + 64)));
            if (q4) bias = _mm256_srai_epi32(bias, 4); /* 8 times the sum */
            attn__qk8_pf(pn, 4, blk, bs);
            ATTN__UNROLL
            for (u = 0; u < 2; u++) {
                __m256i x0, x1, z[4];
                const uint32_t h2 = attn__qk8_c2(q4, p + 2 * u, ob, &x0, &x1);
                const __m256 dk = _mm256_permutevar8x32_ps(
                    _mm256_castps128_ps256(_mm_cvtph_ps(_mm_cvtsi32_si128((int)h2))), idx);
                ATTN__UNROLL
                for (r = 0; r < 4; r++) {
                    const unsigned char *qr = quad + (r * nq + blk) * 32;
                    const __m256i a0 = _mm256_broadcastsi128_si256(
                        _mm_loadu_si128((const __m128i *)(const void *)qr));
                    const __m256i a1 = _mm256_broadcastsi128_si256(
                        _mm_loadu_si128((const __m128i *)(const void *)(qr + 16)));
                    z[r] = r < R ? ATTN__QK8_DPBUSD(ATTN__QK8_DPBUSD(
                                       _mm256_setzero_si256(), x0, a0), x1, a1)
                                 : _mm256_setzero_si256();
                }
                f[u] = _mm256_fmadd_ps(
                    _mm256_cvtepi32_ps(_mm256_sub_epi32(attn__qk8_sum4(z), bias)),
                    _mm256_mul_ps(dk, da), f[u]);
            }
        }
        for (u = 0; u < 2; u++) _mm256_storeu_ps(o + 8 * u, f[u]);
        for (c = 0; c < 4 && j + c < nc; c++)
            for (r = 0; r < 4; r++) out[r * ldo + j + c] = o[4 * c + r];
    }
}

/* Block b of a group at kg of which m blocks lie in the row (4 or more: all): its 32 values,
 * or 0 past the row's end (values and scale read as 0, as the zero padded quads hold) */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE __m256i attn__qk8_kb(const unsigned char *kg, size_t m,
                                                            size_t b)
{
    return b < m ? _mm256_loadu_si256((const __m256i *)(const void *)(kg + 34 * b + 2))
                 : _mm256_setzero_si256();
}

/* simd/qk_4xq8_avx512.h's attn__qk8_scores (the same contract and arithmetic): per group
 * of 4 blocks, blocks 0 and 1 in f0's lanes 4 b + r, blocks 2 and 3 in f1's, so that
 * f0 + f1 and then its two halves sum a row's block lanes as ((b0 + b2) + (b1 + b3)). The
 * group a row ends in read block by block where it lies. */
static ATTN__QK8_ATTR ATTN__FORCE_INLINE void
attn__qk8_scores_body(int one, const unsigned char *k, size_t rb, size_t nk, size_t nb,
                      const unsigned char *quad, size_t nq, size_t nr, const size_t *n, float *s,
                      size_t lds, const unsigned char *v, size_t vrb, size_t vb)
{
    const unsigned char *qd = quad + 4 * nq * 32;
    const __m256i x80 = _mm256_set1_epi8((char)0x80);
    const size_t rows = one ? 1 : 4;
    size_t j, g, u, h, r;
    for (j = 0; j < nk; j++, k += rb) {
        __m256 f[2];
        __m128 x;
        float o[4];
        if (v) attn__prefetch_bytes(v + j * vrb, vb, 0);
        f[0] = f[1] = _mm256_setzero_ps();
        for (g = 0; g < nq / 4; g++) {
            const unsigned char *kg = k + g * 4 * 34;
            const size_t m = nb - 4 * g < 4 ? nb - 4 * g : 4;
            const __m128 dk = _mm_cvtph_ps(_mm_cvtsi64_si128((long long)attn__qk8_h4(kg, 34, m)));
            ATTN__UNROLL
            for (h = 0; h < 2; h++) {
                const __m256i kv0 = _mm256_xor_si256(attn__qk8_kb(kg, m, 2 * h), x80);
                const __m256i kv1 = _mm256_xor_si256(attn__qk8_kb(kg, m, 2 * h + 1), x80);
                const __m256i idx = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
                const __m256 dk2 = _mm256_permutevar8x32_ps(
                    _mm256_castps128_ps256(dk), _mm256_add_epi32(idx, _mm256_set1_epi32(2 * h)));
                const unsigned char *qg = qd + g * 128 + 32 * h; /* its scales and bias */
                __m256i w[4], t;
                ATTN__UNROLL
                for (r = 0; r < rows; r++) {
                    const unsigned char *qr = quad + r * nq * 32 + g * 128 + 64 * h;
                    w[r] = attn__qk8_z2(kv0, kv1, qr, qr + 32);
                }
                ATTN__UNROLL
                for (; r < 4; r++) w[r] = w[0];
                t = _mm256_sub_epi32(attn__qk8_sum4(w),
                                     _mm256_loadu_si256((const __m256i *)(const void *)(qg + 64)));
                f[h] = _mm256_fmadd_ps(
                    _mm256_cvtepi32_ps(t),
                    _mm256_mul_ps(_mm256_loadu_ps((const float *)(const void *)qg), dk2), f[h]);
            }
        }
        f[0] = _mm256_add_ps(f[0], f[1]);
        x = _mm_add_ps(_mm256_castps256_ps128(f[0]), _mm256_extractf128_ps(f[0], 1));
        _mm_storeu_ps(o, x);
        for (u = 0; u < nr; u++)
            if (j < n[u]) s[u * lds + j] = o[u];
    }
}
#endif
#endif
