/* simd/mm_4x8_wasm.h - attn.h's WebAssembly SIMD128 matmul microkernel: a 4 x 8 tile (8
 * accumulators, two B vectors, one broadcast A value and a product: within the 16 xmm
 * registers an x86 engine gives wasm, and the packing wants a row count that is at most the
 * vector width or a multiple of it). No fma: each step is a product rounded, then a sum.
 * Compiles on its own (with simd/wasm.h). */
#ifndef ATTN_SIMD_MM_4X8_WASM_H
#define ATTN_SIMD_MM_4X8_WASM_H
#include "wasm.h"

/* acc(i, j) = sum over p < kc of A(i, p) * B(p, j) as one multiply-add chain in p order,
 * A(i, p) = a[i * ars + p * acs], B(p, j) = b[p * ldb + j] (8 readable floats per row). Only
 * the first `rows` rows (a constant once inlined) are computed and written. Then by mode:
 * 0 c = acc; 1 c = alpha * acc, then + beta * c when beta != 0 (beta = 0 never reads c);
 * 2 c = alpha * acc + c. */
#define ATTN__MR 4
#define ATTN__NR 8
#define ATTN__MM_UKR_ROWS 1 /* the rows argument is honoured: edge kernels pay less */
#define ATTN__UKR_ROWS(X) X(0) X(1) X(2) X(3)
static ATTN__FORCE_INLINE void attn__mm_ukr_body(size_t rows, size_t kc, const float *a,
                                                 size_t ars, size_t acs, const float *b,
                                                 size_t ldb, float *c, size_t ldc, float alpha,
                                                 float beta, int mode)
{
#define ATTN__UKR_DECL(i) v128_t c##i##0 = wasm_f32x4_splat(0.0f), c##i##1 = c##i##0;
    ATTN__UKR_ROWS(ATTN__UKR_DECL)
#undef ATTN__UKR_DECL
    size_t p;
    for (p = 0; p < kc; p++, a += acs, b += ldb) {
        const v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
#define ATTN__UKR_ROW(i)                                                                    \
    if (rows > (i)) {                                                                       \
        const v128_t t = wasm_v128_load32_splat(a + (i) * ars);                             \
        c##i##0 = wasm_f32x4_add(c##i##0, wasm_f32x4_mul(b0, t));                           \
        c##i##1 = wasm_f32x4_add(c##i##1, wasm_f32x4_mul(b1, t));                           \
    }
        ATTN__UKR_ROWS(ATTN__UKR_ROW)
#undef ATTN__UKR_ROW
    }
    {
        const v128_t va = wasm_f32x4_splat(alpha), vb = wasm_f32x4_splat(beta);
#define ATTN__UKR_OUT1(cp, x)                                                               \
    if (mode == 0) wasm_v128_store(cp, x);                                                  \
    else if (mode == 2) wasm_v128_store(cp, attn__vfma(va, x, wasm_v128_load(cp)));         \
    else if (beta != 0.0f)                                                                  \
        wasm_v128_store(cp, attn__vfma(vb, wasm_v128_load(cp), wasm_f32x4_mul(va, x)));     \
    else wasm_v128_store(cp, wasm_f32x4_mul(va, x));
#define ATTN__UKR_OUT(i)                                                                    \
    if (rows > (i)) {                                                                       \
        float *cr = c + (i) * ldc;                                                          \
        ATTN__UKR_OUT1(cr, c##i##0) ATTN__UKR_OUT1(cr + 4, c##i##1)                         \
    }
        ATTN__UKR_ROWS(ATTN__UKR_OUT)
#undef ATTN__UKR_OUT
#undef ATTN__UKR_OUT1
    }
}
#undef ATTN__UKR_ROWS
#endif
