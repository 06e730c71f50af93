/* simd/generic.h - vector operations derived once from an ISA file's primitives, each
 * behind the ISA's "has it natively" flag where one exists. Compiles on its own (with the
 * scalar layer unless an ISA file was included first). */
#ifndef ATTN_SIMD_GENERIC_H
#define ATTN_SIMD_GENERIC_H
#ifndef ATTN__VW
#include "scalar.h"
#endif
#include <string.h>

/* the least lane of a */
static inline float attn__vhmin(attn__v a) { return -attn__vhmax(attn__vsub(attn__vzero(), a)); }

#ifndef ATTN__HAVE_VHRED8
/* out[k] = the sum (op 0), max (1) or min (2) of v[k]'s lanes, k < 8 (ISAs without a
 * batched tree: one by one) */
static ATTN__FORCE_INLINE void attn__vhred8(const attn__v *v, float *out, int op)
{
    int k;
    for (k = 0; k < 8; k++)
        out[k] = op == 0 ? attn__vhsum(v[k]) : op == 1 ? attn__vhmax(v[k]) : attn__vhmin(v[k]);
}
#endif

#ifndef ATTN__HAVE_VTSUM
/* lane k = attn__vhsum(v[k]), k < ATTN__VW (ISAs without a batched tree: one by one) */
static ATTN__FORCE_INLINE attn__v attn__vtsum(const attn__v *v)
{
    float f[ATTN__VW];
    int k;
    for (k = 0; k < ATTN__VW; k++) f[k] = attn__vhsum(v[k]);
    return attn__vload(f);
}
#endif

#ifndef ATTN__HAVE_VSTREAM
/* ISAs without a non-temporal store (or whose cores stream full-line writes themselves) */
#define ATTN__HAVE_VSTREAM 0
static inline void attn__vstream(float *p, attn__v v) { attn__vstore(p, v); }
static inline void attn__vstream_fence(void) {}
#endif


/* the lanes' maximum / minimum of four vectors */
static ATTN__FORCE_INLINE attn__v attn__vmax4(attn__v a, attn__v b, attn__v c, attn__v d)
{
    return attn__vmax(attn__vmax(a, b), attn__vmax(c, d));
}
static ATTN__FORCE_INLINE attn__v attn__vmin4(attn__v a, attn__v b, attn__v c, attn__v d)
{
    return attn__vmin(attn__vmin(a, b), attn__vmin(c, d));
}

/* ---- 16-bit storage: f16 (IEEE binary16) and bf16 (the top half of a float) ------------ */

/* One element each way, exact, by bit manipulation: the scalar path's conversions and the
 * fallback of an ISA without a vector one. Bit for bit what F16C and AArch64 give: f16 ->
 * f32 exact, a signaling NaN quieted; f32 -> f16 rounded to nearest even, inf from 65520
 * up, subnormals kept, a NaN quiet with the top 10 bits of its payload. */
static inline float attn__f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, m = h & 0x3FFu;
    uint32_t e = (uint32_t)(h >> 10) & 0x1Fu, x, sub = m;
    float f;
    if (e == 0x1Fu) { /* inf, NaN (quieted) */
        x = sign | 0x7F800000u | m << 13 | (m ? 0x400000u : 0u);
    } else if (e != 0) { /* normal: rebias 15 -> 127 */
        x = sign | (e + 112u) << 23 | m << 13;
    } else if (m == 0) {
        x = sign;
    } else { /* subnormal m 2^-24: normalized, a normal float */
        for (e = 113; !(sub & 0x400u); e--) sub <<= 1;
        x = sign | e << 23 | (sub & 0x3FFu) << 13;
    }
    memcpy(&f, &x, 4);
    return f;
}
static inline uint16_t attn__f32_to_f16(float f)
{
    uint32_t x, a, e, m, s, r, rem, half, sign;
    memcpy(&x, &f, 4);
    sign = x >> 16 & 0x8000u;
    a = x & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return (uint16_t)(sign | 0x7E00u | (a >> 13 & 0x3FFu)); /* NaN */
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u); /* 65520 and up: inf */
    if (a >= 0x38800000u) { /* normal half: rebias 127 -> 15, drop 13 bits to nearest even */
        a -= 0x38000000u;
        return (uint16_t)(sign | (a + 0xFFFu + (a >> 13 & 1u)) >> 13);
    }
    if (a <= 0x33000000u) return (uint16_t)sign; /* up to 2^-25, half the least subnormal */
    e = a >> 23; /* 102 .. 112: subnormal half, (1.m 2^(e-127)) / 2^-24 rounded */
    m = (a & 0x7FFFFFu) | 0x800000u;
    s = 126u - e; /* 14 .. 24 */
    r = m >> s;
    rem = m & ((1u << s) - 1u);
    half = 1u << (s - 1u);
    r += rem > half || (rem == half && (r & 1u));
    return (uint16_t)(sign | r);
}
/* bf16: the top half of a float; rounding adds 0x7FFF plus the kept part's lowest bit (a
 * carry into the exponent gives the next binade or inf); a NaN gets its quiet bit. */
static inline float attn__bf16_to_f32(uint16_t h)
{
    const uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}
static inline uint16_t attn__f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)(x >> 16 | 0x40u);
    return (uint16_t)((x + 0x7FFFu + (x >> 16 & 1u)) >> 16);
}

/* ATTN__VW elements from 16 bits to a vector and back (ISAs without them natively: one by
 * one through the element conversions above). */
#ifndef ATTN__HAVE_VF16
static inline attn__v attn__vload_f16(const uint16_t *p)
{
    float t[ATTN__VW];
    size_t k;
    for (k = 0; k < ATTN__VW; k++) t[k] = attn__f16_to_f32(p[k]);
    return attn__vload(t);
}
static inline void attn__vstore_f16(uint16_t *p, attn__v v)
{
    float t[ATTN__VW];
    size_t k;
    attn__vstore(t, v);
    for (k = 0; k < ATTN__VW; k++) p[k] = attn__f32_to_f16(t[k]);
}
#endif
#ifndef ATTN__HAVE_VBF16
static inline attn__v attn__vload_bf16(const uint16_t *p)
{
    float t[ATTN__VW];
    size_t k;
    for (k = 0; k < ATTN__VW; k++) t[k] = attn__bf16_to_f32(p[k]);
    return attn__vload(t);
}
static inline void attn__vstore_bf16(uint16_t *p, attn__v v)
{
    float t[ATTN__VW];
    size_t k;
    attn__vstore(t, v);
    for (k = 0; k < ATTN__VW; k++) p[k] = attn__f32_to_bf16(t[k]);
}
#endif
/* Block-quantized weights: ATTN__VW int8 values, or ATTN__VW 4-bit values (the low nibbles
 * of p[0 ..], or with hi the high ones) less 8, as floats (exact); a block's 32 values as
 * 32 / ATTN__VW vectors (q4: the 16 low nibbles, then the 16 high ones, less 8, times the
 * block's scale d: exact products); a binary16 value in every lane. */
#ifndef ATTN__HAVE_VQ
static inline attn__v attn__vload_i8(const int8_t *p)
{
    float t[ATTN__VW];
    size_t k;
    for (k = 0; k < ATTN__VW; k++) t[k] = (float)p[k];
    return attn__vload(t);
}
static inline attn__v attn__vload_u4(const uint8_t *p, int hi)
{
    float t[ATTN__VW];
    size_t k;
    for (k = 0; k < ATTN__VW; k++) t[k] = (float)((hi ? p[k] >> 4 : p[k] & 15) - 8);
    return attn__vload(t);
}
#endif
static inline void attn__vload_q8_32(const int8_t *p, attn__v *out)
{
    size_t v;
    ATTN__UNROLL
    for (v = 0; v < 32 / ATTN__VW; v++) out[v] = attn__vload_i8(p + v * ATTN__VW);
}
#ifndef ATTN__HAVE_VQ4_32
static inline void attn__vload_q4_32(const uint8_t *p, attn__v d, attn__v *out)
{
    size_t v;
    ATTN__UNROLL
    for (v = 0; v < 16 / ATTN__VW; v++) {
        out[v] = attn__vmul(d, attn__vload_u4(p + v * ATTN__VW, 0));
        out[16 / ATTN__VW + v] = attn__vmul(d, attn__vload_u4(p + v * ATTN__VW, 1));
    }
}
#endif
/* Integer dot products of int8 blocks (the int8 matmul): attn__vi holds ATTN__VW int32
 * lanes. attn__vi_dot4(acc, a4, b) adds to lane l the dot product of the 4 int8 in a4
 * (byte t of its little-endian value; none of them -128) with b[4 l .. 4 l + 3], plus
 * ATTN__VI_BIAS times the sum of those 4 b (an ISA whose instruction wants one operand
 * unsigned takes a4 + 128); attn__vi_store stores the lanes; attn__vi_tof(acc, s) is
 * acc - ATTN__VI_BIAS s[lane] as floats (s: the sums of the b the lane took). Every value
 * is exact: a block's 32 products stay far below 2^24.
 * An x86 ISA file may also offer the same three for a CPU that has more than the compiler
 * targets (ATTN__HAVE_VI_RT: attn__vi_rt type, attn__vi_rt_zero, _dot4, _tof macros with
 * ATTN__VI_RT_BIAS, valid in a function marked ATTN__VI_RT_ATTR; attn__vi_rt_probe() says
 * whether this CPU runs them, attn__vi_rt_cpu() below the same, asked once).
 * attn__vi_t8(q4, b, rb, o, sum, h) transposes one block of ATTN__VW columns rb bytes
 * apart for the int8 product (b: column 0's q8_0 or q4_0 block, the q4_0 values less 8): 8
 * steps of ATTN__VW x 4 bytes at o (step t, lane l: column l's values 4 t .. 4 t + 3),
 * sum[l] the sum of column l's 32 values, h[l] its scale's bits. */
#ifdef ATTN__HAVE_VI_RT
static inline int attn__vi_rt_cpu(void)
{ /* cpuid is slow under a hypervisor: one word, written with its value */
    static int has = -1;
    int h = __atomic_load_n(&has, __ATOMIC_RELAXED);
    if (h < 0) {
        h = attn__vi_rt_probe();
        __atomic_store_n(&has, h, __ATOMIC_RELAXED);
    }
    return h;
}
#endif
#ifndef ATTN__HAVE_VSTORE_I8
/* v's lanes, integers in [-127, 127], as ATTN__VW int8 at p */
static inline void attn__vstore_i8(int8_t *p, attn__v v)
{
    float t[ATTN__VW];
    size_t l;
    attn__vstore(t, v);
    for (l = 0; l < ATTN__VW; l++) p[l] = (int8_t)(int)t[l];
}
#endif
#ifndef ATTN__HAVE_VI
#define ATTN__VI_BIAS 0
typedef struct {
    int32_t l[ATTN__VW];
} attn__vi;
static inline attn__vi attn__vi_zero(void)
{
    attn__vi z;
    memset(&z, 0, sizeof z);
    return z;
}
static inline attn__vi attn__vi_dot4(attn__vi acc, uint32_t a4, const int8_t *b)
{
    size_t l, t;
    for (l = 0; l < ATTN__VW; l++)
        for (t = 0; t < 4; t++)
            acc.l[l] += (int32_t)(int8_t)(uint8_t)(a4 >> 8 * t) * b[4 * l + t];
    return acc;
}
static inline void attn__vi_store(int32_t *p, attn__vi v) { memcpy(p, v.l, sizeof v.l); }
static inline attn__v attn__vi_tof(attn__vi acc, const int32_t *corr)
{
    float t[ATTN__VW];
    size_t l;
    for (l = 0; l < ATTN__VW; l++) t[l] = (float)(acc.l[l] - ATTN__VI_BIAS * corr[l]);
    return attn__vload(t);
}
#endif
#ifndef ATTN__HAVE_VI_T8
static inline void attn__vi_t8(int q4, const unsigned char *b, size_t rb, unsigned char *o,
                               int32_t *sum, uint16_t *h)
{
    size_t l, t;
    for (l = 0; l < ATTN__VW; l++) {
        const unsigned char *c = b + l * rb + 2;
        int32_t s = 0;
        h[l] = (uint16_t)(c[-2] | c[-1] << 8);
        for (t = 0; t < 32; t++) {
            const int v = q4 ? (t < 16 ? c[t] & 15 : c[t - 16] >> 4) - 8 : (int8_t)c[t];
            o[(t / 4 * ATTN__VW + l) * 4 + t % 4] = (unsigned char)v;
            s += v;
        }
        sum[l] = s;
    }
}
#endif
#ifndef ATTN__HAVE_VSET1_F16
static inline attn__v attn__vset1_f16(uint16_t h) { return attn__vset1(attn__f16_to_f32(h)); }
#endif
/* n < ATTN__VW elements (the other lanes 0 on load; nothing past p + n touched; with one
 * lane n is 0, which the compiler is told) */
static inline attn__v attn__vload_f16_part(const uint16_t *p, size_t n)
{
    uint16_t t[ATTN__VW] = {0};
    ATTN__CHECK_PART(n);
    memcpy(t, p, (ATTN__VW == 1 ? 0 : n) * sizeof *t);
    return attn__vload_f16(t);
}
static inline void attn__vstore_f16_part(uint16_t *p, attn__v v, size_t n)
{
    uint16_t t[ATTN__VW];
    ATTN__CHECK_PART(n);
    attn__vstore_f16(t, v);
    memcpy(p, t, (ATTN__VW == 1 ? 0 : n) * sizeof *t);
}
static inline attn__v attn__vload_bf16_part(const uint16_t *p, size_t n)
{
    uint16_t t[ATTN__VW] = {0};
    ATTN__CHECK_PART(n);
    memcpy(t, p, (ATTN__VW == 1 ? 0 : n) * sizeof *t);
    return attn__vload_bf16(t);
}
static inline void attn__vstore_bf16_part(uint16_t *p, attn__v v, size_t n)
{
    uint16_t t[ATTN__VW];
    ATTN__CHECK_PART(n);
    attn__vstore_bf16(t, v);
    memcpy(p, t, (ATTN__VW == 1 ? 0 : n) * sizeof *t);
}

/* For the integer scores of simd/qk_4xq8_*.h, which take a row's blocks 4 at a time: the
 * scales of 4 blocks bs bytes apart at kg, as 4 binary16, of which the first m lie in the row
 * (the others 0; m 4 or more: all) */
static ATTN__FORCE_INLINE uint64_t attn__qk8_h4(const unsigned char *kg, size_t bs, size_t m)
{
    uint64_t h4 = 0;
    size_t b;
    for (b = 0; b < 4 && b < m; b++) {
        uint16_t h;
        memcpy(&h, kg + b * bs, 2);
        h4 |= (uint64_t)h << 16 * b;
    }
    return h4;
}

/* For attn_matmul_int8's few rows (simd/qk_4xq8_*.h): columns j .. j + cols - 1 of B (rows
 * rb bytes apart at b; those past nc repeat column j) at p, and the next cols columns (those
 * before npf; else these) at pn, for attn__qk8_pf */
static ATTN__FORCE_INLINE void attn__qk8_cols(const unsigned char *b, size_t rb, size_t j,
                                              size_t cols, size_t nc, size_t npf,
                                              const unsigned char **p, const unsigned char **pn)
{
    size_t c;
    for (c = 0; c < cols; c++) {
        p[c] = b + (j + c < nc ? j + c : j) * rb;
        pn[c] = j + cols + c < npf ? b + (j + cols + c) * rb : p[c];
    }
}

/* The next columns' rows (blocks of bs bytes) requested into L2 at the pace these are read:
 * at block blk, the line holding the block's last byte in each, once a line (a pass ahead,
 * spread over the pass: a burst of the next rows' requests at a pass's start stalled it) */
static ATTN__FORCE_INLINE void attn__qk8_pf(const unsigned char *const *pn, size_t cols,
                                            size_t blk, size_t bs)
{
    const size_t e = blk * bs + bs - 1;
    size_t c;
    if (blk == 0 || e / 64 != (e - bs) / 64)
        for (c = 0; c < cols; c++) ATTN__PREFETCH_L2(pn[c] + e);
}

#endif
