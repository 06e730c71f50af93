/* simd/wasm.h - the WebAssembly SIMD128 vector layer of attn.h (4 lanes; wasm_simd128.h,
 * -msimd128). SIMD128 has no fused multiply-add (relaxed-simd's is not deterministic): the
 * fma is a product rounded, then a sum rounded, and the one-rounding fma of the error terms
 * is computed in double (exact products), lanes at a float rounding boundary by fmaf. Max
 * and min are the pseudo-min/max (x86's minps/maxps rule, one instruction on x86 engines).
 * Denormals are kept, as the wasm spec requires. Primitives only, the same names and
 * contract as simd/scalar.h. Compiles on its own. */
#ifndef ATTN_SIMD_WASM_H
#define ATTN_SIMD_WASM_H
#include "common.h"
#include <float.h>
#include <math.h>
#include <string.h>
#include <wasm_simd128.h>

#define ATTN__ISA_NAME "wasm"
#define ATTN__VW 4

typedef v128_t attn__v;
typedef v128_t attn__vm;

static inline attn__v attn__vzero(void) { return wasm_f32x4_splat(0.0f); }
static inline attn__v attn__vset1(float a) { return wasm_f32x4_splat(a); }
static inline attn__v attn__vload(const float *p) { return wasm_v128_load(p); }
static inline void attn__vstore(float *p, attn__v v) { wasm_v128_store(p, v); }
static inline attn__v attn__vload_part(const float *p, size_t n, float fill)
{
    float t[4] = {fill, fill, fill, fill};
    ATTN__CHECK_PART(n);
    memcpy(t, p, n * sizeof(float));
    return wasm_v128_load(t);
}
static inline void attn__vstore_part(float *p, attn__v v, size_t n)
{
    float t[4];
    ATTN__CHECK_PART(n);
    wasm_v128_store(t, v);
    memcpy(p, t, n * sizeof(float));
}
static inline attn__v attn__vadd(attn__v a, attn__v b) { return wasm_f32x4_add(a, b); }
static inline attn__v attn__vsub(attn__v a, attn__v b) { return wasm_f32x4_sub(a, b); }
static inline attn__v attn__vmul(attn__v a, attn__v b) { return wasm_f32x4_mul(a, b); }
static inline attn__v attn__vdiv(attn__v a, attn__v b) { return wasm_f32x4_div(a, b); }
static inline attn__v attn__vsqrt(attn__v a) { return wasm_f32x4_sqrt(a); }
/* a * b + c in two roundings (SIMD128 has no fma) */
static inline attn__v attn__vfma(attn__v a, attn__v b, attn__v c)
{
    return wasm_f32x4_add(wasm_f32x4_mul(a, b), c);
}
/* a * b + c with one rounding: the product is exact in double and the sum is rounded there
 * once, then to float. Rounding twice differs from once only where the double sum lies on a
 * float rounding boundary: its low 29 bits 0x10000000 (a midpoint of normal floats), or
 * below FLT_MIN (subnormal floats round elsewhere); a vector with such a lane takes fmaf.
 * The error terms (c = -round(a * b)) are exact in double: they take it only below FLT_MIN. */
static ATTN__FORCE_INLINE v128_t attn__vfma_exact_half(v128_t a, v128_t b, v128_t c)
{
    return wasm_f64x2_add(wasm_f64x2_mul(wasm_f64x2_promote_low_f32x4(a),
                                         wasm_f64x2_promote_low_f32x4(b)),
                          wasm_f64x2_promote_low_f32x4(c));
}
static ATTN__FORCE_INLINE int attn__vfma_boundary(v128_t r)
{
    const v128_t mid = wasm_i64x2_eq(wasm_v128_and(r, wasm_i64x2_splat(0x1FFFFFFF)),
                                     wasm_i64x2_splat(0x10000000));
    const v128_t a = wasm_f64x2_abs(r);
    const v128_t tiny = wasm_v128_and(wasm_f64x2_lt(a, wasm_f64x2_splat(FLT_MIN)),
                                      wasm_f64x2_gt(a, wasm_f64x2_splat(0.0)));
    return wasm_v128_any_true(wasm_v128_or(mid, tiny));
}
static inline attn__v attn__vfma_exact(attn__v a, attn__v b, attn__v c)
{
    const v128_t lo = attn__vfma_exact_half(a, b, c);
    const v128_t hi = attn__vfma_exact_half(wasm_i64x2_shuffle(a, a, 1, 0),
                                            wasm_i64x2_shuffle(b, b, 1, 0),
                                            wasm_i64x2_shuffle(c, c, 1, 0));
    if (attn__vfma_boundary(lo) || attn__vfma_boundary(hi)) {
        float x[4], y[4], z[4];
        int i;
        wasm_v128_store(x, a);
        wasm_v128_store(y, b);
        wasm_v128_store(z, c);
        for (i = 0; i < 4; i++) x[i] = fmaf(x[i], y[i], z[i]);
        return wasm_v128_load(x);
    }
    return wasm_i64x2_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi),
                              0, 2);
}
/* maxps / minps: a > b ? a : b and a < b ? a : b, so b when either is NaN */
static inline attn__v attn__vmax(attn__v a, attn__v b) { return wasm_f32x4_pmax(b, a); }
static inline attn__v attn__vmin(attn__v a, attn__v b) { return wasm_f32x4_pmin(b, a); }
/* (l0 + l2) + (l1 + l3) */
static inline float attn__vhsum(attn__v a)
{
    const v128_t s = wasm_f32x4_add(a, wasm_i64x2_shuffle(a, a, 1, 0));
    return wasm_f32x4_extract_lane(wasm_f32x4_add(s, wasm_i32x4_shuffle(s, s, 1, 0, 3, 2)), 0);
}
static inline float attn__vhmax(attn__v a)
{
    const v128_t m = attn__vmax(a, wasm_i64x2_shuffle(a, a, 1, 0));
    return wasm_f32x4_extract_lane(attn__vmax(m, wasm_i32x4_shuffle(m, m, 1, 0, 3, 2)), 0);
}
/* out[k] = the sum (op 0), max (1) or min (2) of v[k]'s lanes, k < 8, two groups of four
 * at once: the halves, then neighbours, each sum in attn__vhsum's order, bit for bit.
 * op: a constant after inlining. */
#define ATTN__HAVE_VHRED8 1
static ATTN__FORCE_INLINE v128_t attn__vred_op(v128_t a, v128_t b, int op)
{
    return op == 0 ? wasm_f32x4_add(a, b) : op == 1 ? attn__vmax(a, b) : attn__vmin(a, b);
}
static ATTN__FORCE_INLINE void attn__vhred8(const attn__v *v, float *out, int op)
{
    int g;
    for (g = 0; g < 8; g += 4) {
        /* t01 = [v0 l0+l2, v0 l1+l3, v1 l0+l2, v1 l1+l3], t23 the same for v2, v3 */
        const v128_t t01 = attn__vred_op(wasm_i64x2_shuffle(v[g], v[g + 1], 0, 2),
                                         wasm_i64x2_shuffle(v[g], v[g + 1], 1, 3), op);
        const v128_t t23 = attn__vred_op(wasm_i64x2_shuffle(v[g + 2], v[g + 3], 0, 2),
                                         wasm_i64x2_shuffle(v[g + 2], v[g + 3], 1, 3), op);
        wasm_v128_store(out + g, attn__vred_op(wasm_i32x4_shuffle(t01, t23, 0, 2, 4, 6),
                                               wasm_i32x4_shuffle(t01, t23, 1, 3, 5, 7), op));
    }
}
static inline attn__vm attn__vlt(attn__v a, attn__v b) { return wasm_f32x4_lt(a, b); }
static inline attn__vm attn__vgt(attn__v a, attn__v b) { return wasm_f32x4_gt(a, b); }
static inline attn__v attn__vselect(attn__vm m, attn__v a, attn__v b)
{
    return wasm_v128_bitselect(a, b, m);
}
/* the lookup by two byte swizzles (each 16 bytes of the 32-byte table; an index past 15
 * gives 0): lane index j = bits & 7 becomes the byte indices 4j .. 4j + 3 */
static inline attn__v attn__vlut8_scale(const int32_t *tab, attn__v k)
{
    const v128_t j4 = wasm_i32x4_shl(wasm_v128_and(k, wasm_i32x4_splat(7)), 2);
    const v128_t idx = wasm_i8x16_add(wasm_i8x16_shuffle(j4, j4, 0, 0, 0, 0, 4, 4, 4, 4, 8, 8,
                                                         8, 8, 12, 12, 12, 12),
                                      wasm_i32x4_splat(0x03020100));
    const v128_t t = wasm_v128_or(wasm_i8x16_swizzle(wasm_v128_load(tab), idx),
                                  wasm_i8x16_swizzle(wasm_v128_load(tab + 4),
                                                     wasm_i8x16_sub(idx, wasm_i8x16_splat(16))));
    return wasm_i32x4_add(t, wasm_i32x4_shl(k, 20));
}
static inline attn__v attn__vfabs(attn__v a) { return wasm_f32x4_abs(a); }
static inline attn__v attn__vor(attn__v a, attn__v b) { return wasm_v128_or(a, b); }
static inline int attn__vany_neg(attn__v a) { return wasm_i32x4_bitmask(a) != 0; }
/* lanes 2i and 2i+1 swapped (RoPE's adjacent pairs) */
#define ATTN__HAVE_VSWAP_PAIRS 1
static inline attn__v attn__vswap_pairs(attn__v a) { return wasm_i32x4_shuffle(a, a, 1, 0, 3, 2); }
/* 16-bit storage: bf16 by shifts (rounding adds 0x7FFF plus the kept part's lowest bit, a
 * carry into the exponent gives the next binade or inf; a NaN gets its quiet bit); f16 by
 * the exact element code of simd/generic.h (SIMD128 has no half conversions). */
#define ATTN__HAVE_VBF16 1
static inline attn__v attn__vload_bf16(const uint16_t *p)
{
    return wasm_i32x4_shl(wasm_u32x4_load16x4(p), 16);
}
static inline void attn__vstore_bf16(uint16_t *p, attn__v v)
{
    const v128_t lsb = wasm_v128_and(wasm_u32x4_shr(v, 16), wasm_i32x4_splat(1));
    const v128_t rne = wasm_i32x4_add(v, wasm_i32x4_add(lsb, wasm_i32x4_splat(0x7FFF)));
    const v128_t quiet = wasm_v128_or(v, wasm_i32x4_splat(0x400000));
    const v128_t r = wasm_u32x4_shr(wasm_v128_bitselect(rne, quiet, wasm_f32x4_eq(v, v)), 16);
    wasm_v128_store64_lane(p, wasm_u16x8_narrow_i32x4(r, r), 0);
}
/* Transposes a 4 x 4 block: row q of dst (at dst + q * ldd) receives column q of the
 * block whose row i is at src + i * lds, rows i >= `rows` being zero (never read). dst rows
 * are stored in order q = 0..3, so with ldd < 4 the later rows win the overlap. */
static ATTN__FORCE_INLINE void attn__vtranspose_copy(const float *src, size_t lds,
                                                     size_t rows, float *dst, size_t ldd)
{
    const v128_t z = wasm_f32x4_splat(0.0f);
    const v128_t r0 = rows > 0 ? wasm_v128_load(src) : z;
    const v128_t r1 = rows > 1 ? wasm_v128_load(src + lds) : z;
    const v128_t r2 = rows > 2 ? wasm_v128_load(src + 2 * lds) : z;
    const v128_t r3 = rows > 3 ? wasm_v128_load(src + 3 * lds) : z;
    const v128_t t0 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5); /* r0[0] r1[0] r0[1] r1[1] */
    const v128_t t1 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7);
    const v128_t t2 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
    const v128_t t3 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
    wasm_v128_store(dst, wasm_i64x2_shuffle(t0, t2, 0, 2));
    wasm_v128_store(dst + ldd, wasm_i64x2_shuffle(t0, t2, 1, 3));
    wasm_v128_store(dst + 2 * ldd, wasm_i64x2_shuffle(t1, t3, 0, 2));
    wasm_v128_store(dst + 3 * ldd, wasm_i64x2_shuffle(t1, t3, 1, 3));
}
#endif
