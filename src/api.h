/* attn.h - header-only SIMD transformer kernels for float32 (C99 / C++).
 *
 * Softmax, LayerNorm, RMSNorm, matmul, fused scaled-dot-product attention and
 * the small helpers around them, vectorized for AVX2+FMA (x86-64) and NEON
 * (AArch64) with a scalar fallback. The instruction set is chosen at compile
 * time. Kernels never allocate, lock, start threads or keep mutable global
 * state; scratch memory comes from the caller, sized by a *_workspace_size()
 * query. Every function validates its arguments and returns an attn_status;
 * on any error no output is written.
 *
 * Minimal use (exactly one C or C++ file defines ATTN_IMPLEMENTATION):
 *
 *     #define ATTN_IMPLEMENTATION
 *     #include "attn.h"
 *
 *     float x[2][4] = {{1, 2, 3, 4}, {4, 3, 2, 1}};
 *     attn_status st = attn_softmax(&x[0][0], 4, &x[0][0], 4, 2, 4, 1.0f);
 *     if (st != ATTN_OK) fprintf(stderr, "%s\n", attn_status_string(st));
 *
 * Configuration macros (define before including):
 *   ATTN_IMPLEMENTATION  emit the definitions in this translation unit (one per program,
 *                        or one per translation unit together with ATTN_STATIC).
 *   ATTN_STATIC          make every public function static (private to the translation unit).
 *   ATTN_API             storage/visibility prefix of public functions (default: extern, or
 *                        static when ATTN_STATIC); e.g. __declspec(dllexport) or
 *                        __attribute__((visibility("default"))).
 *   ATTN_NO_SIMD         force the portable scalar path even when AVX2 or NEON is available.
 *   ATTN_USE_SLEEF       take the vector exp from SLEEF (link with -lsleef); otherwise the
 *                        library's own exp is used.
 *
 * Instruction-set selection (see attn_isa()):
 *   x86-64 with gcc or clang and no instruction-set flags (or with ATTN_DISPATCH): every
 *             path below is compiled, and each call runs the best one this CPU has
 *             ("avx512", "avx2" or "scalar", checked once; attn_use_isa() pins one);
 *   "avx512"  when __AVX512F__ is defined (e.g. -mavx512f or -march=x86-64-v4), unless
 *             ATTN_NO_AVX512 keeps AVX2 on such a build;
 *   "avx2"    when __AVX2__ and __FMA__ are defined (e.g. -mavx2 -mfma or -march=haswell);
 *   "neon"    on AArch64 (__aarch64__ with __ARM_NEON);
 *   "wasm"    on WebAssembly with SIMD128 (__wasm_simd128__, e.g. emcc -msimd128);
 *   "scalar"  otherwise, or when ATTN_NO_SIMD is defined.
 *   ATTN_NO_DISPATCH keeps a flag-less x86-64 build on the scalar path alone.
 *
 * Conventions: float32, row-major. A matrix argument is (pointer, leading dimension):
 * element (r, c) of x is x[r * ldx + c], and ldx must be >= the row length. Sizes are
 * size_t. A count of zero rows, tokens, batch entries or elements is an empty call: ATTN_OK,
 * nothing read or written, and the pointers are not checked (they may be NULL); the other
 * arguments are still checked, but for an empty matrix product (m or n 0: none). Zero
 * feature sizes (row length, head_dim, heads, kv_len, d_model, ...) are ATTN_ERR_SIZE.
 * Outputs may alias inputs only where a function says "in place allowed", and then only
 * exactly (same pointer and same leading dimension); see "Aliasing and threads" below.
 * Storage types: attn_dtype (f32, f16 = IEEE binary16, bf16 = bfloat16), see attn_convert.
 *
 * Numerics: the AVX2 and NEON paths use fused multiply-add throughout; wasm (no fma) and
 * the scalar path without a fast fma (FP_FAST_FMAF, e.g. AArch64 or -mfma) round the
 * product and the sum separately, except for the error terms of softmax and GELU: fused.
 * For one build, results are identical run to run. No function
 * returns a denormal from the exp it uses: exp results below FLT_MIN are flushed to 0,
 * and softmax outputs below FLT_MIN are 0.
 */
#ifndef ATTN_H
#define ATTN_H

#include <stddef.h>
#include <stdint.h>

#define ATTN_VERSION_MAJOR 0
#define ATTN_VERSION_MINOR 1
#define ATTN_VERSION_PATCH 0

/* Aliasing and threads: an output that overlaps an input, another output or the workspace,
 * other than the exact in-place cases a function allows, is ATTN_ERR_ALIAS (nothing
 * written). Two matrices with the same leading dimension are compared row by row (rows
 * interleaved in one buffer are fine), except by the matrix products (attn_matmul and its
 * typed and int8 forms), which compare C with A, B and the workspace on extents; anything
 * else on extents, from a tensor's first float to its last. Attention O (or scores)
 * strides must nest (sorted by stride, each at least the extent of the smaller
 * dimensions), else ATTN_ERR_LD: every layout that maps two elements onto one float is
 * refused (so work items always write disjoint rows), and so are the rare ones that
 * interleave two dimensions without such a collision. Every function is reentrant and
 * thread-safe given its own outputs and workspace. */

#if defined(__GNUC__) || defined(__clang__)
#define ATTN__MAYBE_UNUSED __attribute__((unused))
#else
#define ATTN__MAYBE_UNUSED
#endif

#ifndef ATTN_API
#ifdef ATTN_STATIC
#define ATTN_API static ATTN__MAYBE_UNUSED
#else
#define ATTN_API extern
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
 * Status codes. ATTN_OK is 0; every error is negative.
 */
typedef enum attn_status {
    ATTN_OK = 0,
    ATTN_ERR_NULL = -1,       /* a required pointer is NULL */
    ATTN_ERR_SIZE = -2,       /* a size is zero or sizes are inconsistent with each other */
    ATTN_ERR_LD = -3,         /* a leading dimension or stride is smaller than its row */
    ATTN_ERR_WORKSPACE = -4,  /* the workspace is missing or smaller than the query says */
    ATTN_ERR_OVERFLOW = -5,   /* sizes whose products overflow size_t / the address space */
    ATTN_ERR_ARG = -6,        /* an invalid value: NaN or negative eps, bad enum, ... */
    ATTN_ERR_CAPACITY = -7,   /* a KV cache append past the cache's capacity */
    ATTN_ERR_ALIAS = -8       /* an output overlaps an input or another output */
} attn_status;

/* A short English description of a status, e.g. "ok", "null pointer". Never NULL. */
ATTN_API const char *attn_status_string(attn_status status);

/* The instruction set the calls run on: "avx512", "avx2", "neon", "neon32", "wasm" or
 * "scalar" (in a build that dispatches at run time, the one chosen for this CPU or pinned). */
ATTN_API const char *attn_isa(void);

/* Pins the instruction set of a build that dispatches at run time: "avx512", "avx2",
 * "scalar", or "auto" / NULL for the best one this CPU runs. ATTN_ERR_ARG when the name is
 * unknown, not compiled in, or not runnable here (nothing changes then). In a single-target
 * build only that target's name (or "auto" / NULL) is accepted. The one piece of state the
 * library keeps: set it at start-up, before other threads call in. In such a build every
 * *_workspace_size query returns the largest size of the targets this CPU runs, so a
 * workspace sized before pinning serves whichever of them runs (a call refuses only a
 * workspace smaller than its own target needs). */
ATTN_API attn_status attn_use_isa(const char *name);

/* The exp behind every kernel: "attn" (the library's own) or "sleef". */
ATTN_API const char *attn_exp_impl(void);

/* ---------------------------------------------------------------------------------------
 * Storage types. Every kernel computes in float32; arrays may be stored in 16 bits, and
 * weights in 8 or 4 bits:
 *   ATTN_F32   IEEE binary32 (float), 4 bytes.
 *   ATTN_F16   IEEE binary16 (half): 1 sign, 5 exponent, 10 fraction bits, 2 bytes; largest
 *              finite 65504, smallest normal 2^-14, smallest subnormal 2^-24.
 *   ATTN_BF16  bfloat16: the top 16 bits of an IEEE binary32 (1 sign, 8 exponent, 7 fraction
 *              bits), 2 bytes; float32's range with 8 significant bits.
 *   ATTN_Q8_0  blocks of 32 elements, 34 bytes each (ggml's block_q8_0, so tensors from such
 *              files are used as they are): bytes 0-1 the scale d (binary16, little-endian),
 *              bytes 2-33 q[0..31] (int8); element i = d * q[i].
 *   ATTN_Q4_0  blocks of 32 elements, 18 bytes each (ggml's block_q4_0): bytes 0-1 the scale d
 *              (binary16, little-endian), bytes 2-17 qs[0..15]; element i < 16 is
 *              d * ((qs[i] & 15) - 8), element i + 16 is d * ((qs[i] >> 4) - 8).
 * 16-bit elements are uint16_t bit patterns in the machine's byte order. Block types have no
 * alignment; a row of them holds a whole number of blocks (lengths and leading dimensions in
 * elements, multiples of 32) and lies along the reduction: weights [out, in] (ATTN_TRANS),
 * as PyTorch and ggml store them. Dequantized elements (d times a small integer) are exact in
 * float32, so every product computes on exactly the values the blocks stand for.
 */
typedef enum attn_dtype {
    ATTN_F32 = 0,
    ATTN_F16 = 1,
    ATTN_BF16 = 2,
    ATTN_Q8_0 = 3,
    ATTN_Q4_0 = 4
} attn_dtype;

/* Bytes per element of an element type: 4, 2, 2; 0 for the block types (see
 * attn_dtype_bytes) and for a value that is not an attn_dtype. Everything that takes only
 * element types (KV caches, attention) checks its type with this. */
ATTN_API size_t attn_dtype_size(attn_dtype type);

/* Elements per block: 1 for f32, f16, bf16; 32 for q8_0 and q4_0; 0 for another value. */
ATTN_API size_t attn_dtype_block(attn_dtype type);

/* Bytes of n contiguous elements of a type (n a multiple of its block: 34 n / 32 for q8_0,
 * 18 n / 32 for q4_0); 0 when n is not, for an invalid type, or when it overflows. */
ATTN_API size_t attn_dtype_bytes(attn_dtype type, size_t n);

/* Converts n contiguous elements of src (stored as src_type) to dst (stored as dst_type),
 * any pair of types, vectorized (F16C on x86, the AArch64 conversions on NEON, shifts for
 * bf16; the scalar path gives the same bits).
 *   16 -> 32 bits: exact, subnormals included; a NaN stays a NaN with its payload (an f16
 *     signaling NaN comes out quiet, as the hardware converts it; bf16 bits are shifted
 *     unchanged).
 *   32 -> 16 bits: round to nearest, ties to even; what rounds beyond the largest finite
 *     value is inf; subnormal results are kept (for bf16 also from float32 subnormals);
 *     a NaN stays a NaN (quiet, sign and the top of its payload kept), never inf.
 *   f16 <-> bf16: through float32, so rounded once as above. Same type: a copy.
 * Flush-to-zero (attn_denormals_flush_begin) changes no result (quantizing: no value the
 * blocks hold; a block whose scale is a float32 subnormal, max|x| below about 1.5e-36, holds
 * d = 0 either way, and its q bytes may differ); the rounding mode must be
 * the default (to nearest). n = 0 converts nothing and returns ATTN_OK (dst and src may then
 * be NULL). In place allowed (dst == src) when both types have the same size; any other
 * overlap of dst's and src's bytes is ATTN_ERR_ALIAS. Errors: ATTN_ERR_NULL (dst or src
 * NULL), ATTN_ERR_ARG (a type that is not an attn_dtype), ATTN_ERR_OVERFLOW (n elements of
 * either type exceed PTRDIFF_MAX bytes).
 * Quantize and dequantize: one type a block type (ATTN_Q8_0, ATTN_Q4_0), the other an element
 * type (or the same block type: a copy; q8_0 <-> q4_0 is ATTN_ERR_ARG); n a multiple of 32,
 * else ATTN_ERR_SIZE; no overlap at all. Dequantizing is exact (to f16 / bf16: d * q rounded
 * once). Quantizing takes each block of 32 as floats (16-bit sources widened exactly) and
 * gives ggml's reference bits:
 *   q8_0: d = max|x| / 127 (in float32), q[i] = x[i] / d rounded half away from zero
 *         (x[i] * (1 / d) as ggml computes it), d stored as binary16 (nearest even);
 *   q4_0: m = the x[i] of largest |x[i]| (the first such), d = m / -8, q = x[i] * (1 / d) + 8.5
 *         truncated, at most 15; d stored as binary16.
 * A block of zeros has d = 0; where 1 / d overflows float32 (d rounds to 0 in binary16),
 * q = 0 as for zeros (ggml's reference would form 0 * inf there). A NaN or infinite
 * element, or a block whose scale overflows binary16 (max|x| above about 8.3e6 for q8_0,
 * 5.2e5 for q4_0), is ATTN_ERR_ARG, found before anything is written. */
ATTN_API attn_status attn_convert(attn_dtype dst_type, void *dst, attn_dtype src_type,
                                  const void *src, size_t n);

/* ---------------------------------------------------------------------------------------
 * Row operations. Each processes `rows` rows of `n` elements; x has leading dimension
 * ldx, y has ldy (both >= n). In place allowed (y == x with ldy == ldx).
 */

/* y[r,:] = softmax(scale * x[r,:]). The row maximum is subtracted first, so any finite
 * input is safe. A row whose entries are all -inf gives all zeros. A row holding +inf
 * gives 1/count at the +inf entries and 0 elsewhere (the limit). A NaN makes its own
 * row all NaN and no other. Outputs below FLT_MIN are 0 (never denormal).
 * scale must be finite (1.0f for a plain softmax); scale 0 with an infinite entry gives a
 * NaN row (0 * inf). */
ATTN_API attn_status attn_softmax(const float *x, size_t ldx, float *y, size_t ldy,
                                  size_t rows, size_t n, float scale);

/* y[r,:] = (x[r,:] - mean) / sqrt(var + eps) * gamma + beta, var the biased variance.
 * gamma and beta may be NULL (1 and 0). eps >= 0 and finite. mean_out and rstd_out,
 * when not NULL, receive each row's mean and 1/sqrt(var + eps) (`rows` floats each).
 * eps = 0 is allowed: a row of equal values (variance 0) then normalizes to 0 (y = beta,
 * rstd_out = +inf). A row holding inf or NaN gives a NaN row and rstd NaN; its mean NaN,
 * or +-inf when its only non-finite entries are infinities of one sign. */
ATTN_API attn_status attn_layernorm(const float *x, size_t ldx, float *y, size_t ldy,
                                    size_t rows, size_t n, const float *gamma,
                                    const float *beta, float eps, float *mean_out,
                                    float *rstd_out);

/* y[r,:] = x[r,:] / sqrt(mean(x[r,:]^2) + eps) * gamma. gamma may be NULL (1). eps >= 0 and
 * finite; with eps = 0 an all-zero row gives zeros. A row holding inf or NaN gives NaN
 * where x is inf or NaN, and 0 (inf) or NaN (NaN) elsewhere. */
ATTN_API attn_status attn_rmsnorm(const float *x, size_t ldx, float *y, size_t ldy,
                                  size_t rows, size_t n, const float *gamma, float eps);

/* y[r,:] += x[r,:] (the residual connection). In place allowed (x == y doubles y). */
ATTN_API attn_status attn_add(float *y, size_t ldy, const float *x, size_t ldx,
                              size_t rows, size_t n);

/* Sinusoidal positional encoding of positions pos0 .. pos0 + rows - 1, d columns:
 * pe[r, 2i] = sin(p / 10000^(2i/d)), pe[r, 2i+1] = cos(p / 10000^(2i/d)), p = pos0 + r.
 * Computed in double and rounded once (the README's bound holds for positions below 2^27;
 * past them the angle's rounding in double, about p 2^-53, adds). add != 0 adds it to pe
 * instead of storing it (embeddings + PE in one call). */
ATTN_API attn_status attn_positional_encoding(float *pe, size_t ldpe, size_t rows, size_t d,
                                              size_t pos0, int add);

/* ---------------------------------------------------------------------------------------
 * Matrix product: C = alpha * op(A) * op(B) + beta * C, C is m x n, op(A) is m x k,
 * op(B) is k x n. op(X) = X for ATTN_NO_TRANS, X^T for ATTN_TRANS (A stored k x m).
 * k = 0 gives C = beta * C (A and B unread, may be NULL); m = 0 or n = 0 is an empty
 * product: ATTN_OK, nothing read or written. beta = 0 never reads C (NaN in C does not leak).
 * C may not overlap A, B or the workspace, nor the workspace A or B (ATTN_ERR_ALIAS).
 *
 * workspace: scratch for packed copies of A and B, at least attn_matmul_workspace_size()
 * bytes at any alignment, or NULL (then workspace_size is ignored). The size is bounded
 * whatever the problem (a few MiB at most: one block of A plus one panel of B; less for
 * small products) and never decreases as m, n or k grow, so a workspace sized for a product
 * serves every sub-block of it, and attn_matmul_workspace_size(ta, tb, SIZE_MAX, SIZE_MAX,
 * SIZE_MAX) serves every product (a static buffer for real-time use). With a workspace,
 * attn_matmul is a packed, register-blocked sgemm (close to the FMA peak on large products).
 * Without one it still works, on A and B in place, tile by tile: somewhat slower for B not
 * transposed (10-30% on large products), several times slower for op(B) = B^T.
 * Products of m <= 8 rows (decode: matrix-vector) read B once, in place, with or without a
 * workspace (op(B) = B keeps its sums in the workspace if there is one, else in 4 KiB of
 * stack), in the order of the rest.
 * A non-NULL workspace smaller than the query is ATTN_ERR_WORKSPACE.
 *
 * Determinism: each element of C is summed in an order that depends on k alone (one fma
 * chain over each chunk of k, chunks merged into C in order), never on m, n, the element's
 * position, the instruction-set tile shape's edges or the workspace. So splitting C into
 * row or column blocks across threads, and running with or without a workspace, gives
 * bit-identical results (for one build).
 */
typedef enum attn_trans { ATTN_NO_TRANS = 0, ATTN_TRANS = 1 } attn_trans;

ATTN_API size_t attn_matmul_workspace_size(attn_trans ta, attn_trans tb, size_t m, size_t n,
                                           size_t k);
ATTN_API attn_status attn_matmul(attn_trans ta, attn_trans tb, size_t m, size_t n, size_t k,
                                 float alpha, const float *a, size_t lda, const float *b,
                                 size_t ldb, float beta, float *c, size_t ldc, void *workspace,
                                 size_t workspace_size);

/* attn_matmul with B stored as b_type (ATTN_F32, ATTN_F16 or ATTN_BF16; ldb in elements):
 * weights kept in 16 bits, computed in float32 (each element widened exactly). Arguments,
 * checks (ATTN_ERR_ARG for b_type too), workspace (attn_matmul_workspace_size serves it) and
 * aliasing rules are attn_matmul's; with ATTN_F32 it is attn_matmul, bit for bit.
 * Large products widen B while packing it. Products of m <= 8 rows with a 16-bit B (decode:
 * a matrix-vector product) stream B once, unpacked, as attn_matmul's do, except op(A) = A^T
 * with op(B) = B^T, which takes the packed path.
 * Accuracy: the result is that of attn_matmul run on B widened to float32, within its bound.
 * Determinism: as attn_matmul's, with one difference. For op(B) = B^T, op(A) = A and
 * m <= 8, each element of C is one dot product over k taken ATTN__VW lanes at a time and
 * scaled once, in an order set by k, m and the row's place among the m rows (never by n,
 * the column blocks or the workspace), and not the order of products with m > 8. So such a
 * product gives the same bits from run to run, whatever its column blocks and workspace;
 * splitting its rows may change the last bits. With f16 or bf16 B, blocks of 2 to 8 rows
 * keep them (lane l sums the p = l mod the vector width in order, the lanes are then added),
 * and so does a single row where k > 4096; a single row with k <= 4096 sums each lane in 4
 * chains (whole vector v of k into chain v mod 4; any vectors past the last 4 and the part
 * vector into chain 0), added in order before the lanes. op(B) = B with any m keeps
 * attn_matmul's order exactly.
 * Block types (ATTN_Q8_0, ATTN_Q4_0): B is n x k stored in blocks along k, so tb must be
 * ATTN_TRANS (else ATTN_ERR_ARG), k and ldb multiples of 32 (else ATTN_ERR_SIZE and
 * ATTN_ERR_LD). For m <= 8 (or without a workspace, 8 rows at a time) the blocks are
 * streamed once and dequantized in registers (groups of 4 rows widen each block to d * q
 * and fma it into the lanes; 1 or 2 rows scale each block's per-lane partial sums by d:
 * splitting the rows differently may change the last bits); larger products dequantize
 * while packing. The result is attn_matmul's on the dequantized B (exact in
 * float32), within its bound. */
ATTN_API attn_status attn_matmul_typed(attn_trans ta, attn_trans tb, size_t m, size_t n,
                                       size_t k, float alpha, const float *a, size_t lda,
                                       attn_dtype b_type, const void *b, size_t ldb, float beta,
                                       float *c, size_t ldc, void *workspace,
                                       size_t workspace_size);

/* Prefill products with block-quantized weights in integer arithmetic:
 *   C = alpha A B^T + beta C   (C m x n, A m x k floats, B n x k of b_type)
 * A's rows are quantized to q8_0 per block of 32 (attn_convert's rule: d = max|x| / 127
 * rounded to binary16, q = x / d rounded half away from zero) and multiplied by B (ATTN_Q8_0
 * or ATTN_Q4_0 blocks along k, ggml's layouts, ldb in elements) with int8 dot products per
 * block (AVX512-VNNI or AVX-VNNI where the compiler targets them or, with gcc >= 11 or
 * clang >= 12, where the CPU has them: asked of cpuid once per process; else AVX2's
 * vpmaddubsw / vpmaddwd; Armv8.2 sdot where the target has dotprod, else plain integer
 * multiplies), each block's exact integer sum scaled by the two d in float32: the same bits
 * with or without VNNI. B is repacked a chunk at a time (the ISA's transposes); up to 8
 * rows (decode) read B where it lies instead where the CPU runs VNNI (AVX512-VNNI on the
 * AVX-512 path, AVX-VNNI on AVX2's), 4 rows of A against 4 columns (AVX2: 2) per instruction,
 * one row against 16 columns per pass on AVX-512 (the same bits). The README gives where
 * this beats attn_matmul_typed, which streams B unpacked, on few rows.
 * k and ldb multiples of 32 (ATTN_ERR_SIZE, ATTN_ERR_LD); lda, ldc >= k, n. The workspace
 * is required (NULL: ATTN_ERR_NULL; attn_matmul_int8_workspace_size: about 1.13 m k bytes
 * for A's blocks plus a chunk of B's, up to 256 KiB; it never decreases as m, n or k grow,
 * so the size for the largest product serves every smaller one); no overlap of C, A, B and
 * workspace (ATTN_ERR_ALIAS).
 * A block of A that does not quantize (inf, NaN, or max|x| above about 8.3e6) is
 * ATTN_ERR_ARG, C untouched. beta = 0 never reads C.
 * Accuracy: the result is the product of the dequantized A (what attn_convert to q8_0 and
 * back gives) and the dequantized B, within attn_matmul's bound for it (each block exact,
 * k / 32 float32 terms). Against the float A, quantizing adds up to d / 2 = max|x| / 254
 * of a block per element of A (see the README). Rows and column groups are independent:
 * the same bits whatever m, n and the workspace. */
ATTN_API size_t attn_matmul_int8_workspace_size(size_t m, size_t n, size_t k);
ATTN_API attn_status attn_matmul_int8(size_t m, size_t n, size_t k, float alpha, const float *a,
                                      size_t lda, attn_dtype b_type, const void *b, size_t ldb,
                                      float beta, float *c, size_t ldc, void *workspace,
                                      size_t workspace_size);

/* ---------------------------------------------------------------------------------------
 * Scaled dot-product attention, fused (the Lq x Lk score matrix never exists):
 *   O[b,h] = softmax(mask(softcap(scale * Q[b,h] K[b,g]^T))) V[b,g],  g = h / (heads/kv_heads)
 *
 * Tensors are addressed by strides in floats: element (b, h, i, c) of Q is
 * q[b*q_sb + h*q_sh + i*q_sl + c]; likewise K, V (with the kv head g) and O. The last
 * dimension is contiguous. attn_attention_init() fills the strides for the two common
 * layouts; change any field afterwards.
 *
 * K and V in 16 bits: kv_type = ATTN_F16 or ATTN_BF16 makes k and v point at uint16_t
 * elements of that type (aligned to 2 bytes; strides still in elements); ATTN_F32 (0, what
 * attn_attention_init sets) at floats. Each element is widened to float in registers as it
 * is read (no f32 copy, the same workspace): the output is bit for bit that of the f32 call
 * on the widened values, so its error against exact attention on the stored (rounded) K and
 * V is the f32 path's. Rounding K and V to 16 bits is the only other error (see the README).
 * K and V in int8: kv_type = ATTN_Q8_0 stores each row as q8_0 blocks (ggml's block_q8_0:
 * an f16 scale d, then 32 int8 q; x = d * q), about 1.06 bytes an element. head_dim and
 * v_head_dim must be multiples of 32 (else ATTN_ERR_SIZE) and every K and V stride too (else
 * ATTN_ERR_LD), in elements; k and v need no alignment. Dequantizing is exact, so the output
 * is bit for bit the f32 call on the dequantized K and V; quantizing them is the only other
 * error. Except where the CPU has AVX512-VNNI (AVX-512 builds) or AVX-VNNI (AVX2 builds;
 * gcc >= 11 or clang >= 12, else -mavxvnni): there the query tiles of fewer than 12 rows
 * (decode) and every row when scores are asked for are first rounded to q8_0 themselves
 * (attn_convert's rule, per block of 32: half a step, max|block| / 254, per element; a row
 * that does not quantize, not finite or past binary16's range, is kept) and their scores
 * are integer dot products, equal to the f32 path's on the rounded queries to within f32
 * rounding. (ATTN_Q4_0 is ATTN_ERR_ARG here.)
 * Q, O, masks and scores stay float. A kv_type that is not an attn_dtype is ATTN_ERR_ARG.
 *
 * Masks (all optional, combined):
 *   causal:     ATTN_CAUSAL_NONE; ATTN_CAUSAL_BOTTOM_RIGHT: query i sees key j iff
 *               j <= i + (kv_len - q_len) (the queries are the last q_len positions, as a
 *               KV cache needs; with key_lengths, kv_len is that batch's length);
 *               ATTN_CAUSAL_OFFSET: j <= i + causal_offset (0 = PyTorch's is_causal,
 *               past length = ONNX Attention with a past; may be negative).
 *   mask:       additive float mask, mask[b*mask_sb + h*mask_sh + i*mask_sq + j]; a stride of
 *               0 broadcasts. -inf masks the key.
 *   bool_mask:  uint8, nonzero = attend, same addressing with bmask_* strides.
 *   key_lengths: per batch, keys j >= key_lengths[b] are masked (padding); NULL = kv_len;
 *               a value outside [0, kv_len] is ATTN_ERR_ARG.
 *   window:     > 0: query i (at position i + off, off = causal_offset or kv_len - q_len as
 *               for causal, also without causal masking) sees only keys j > i + off - window
 *               (Mistral's sliding window: with causal, the last `window` positions); whole
 *               key tiles before it are skipped.
 * Biases and sinks (optional, per head h):
 *   alibi_slopes: ALiBi, slopes[h] * (j - (i + off)) added to each score after the masks
 *               (attn_alibi_slopes gives the paper's slopes); finite, else ATTN_ERR_ARG.
 *   sinks:      a learned sink logit per head (gpt-oss): it joins the softmax's denominator
 *               as a key of score sinks[h] (in the scaled, softcapped domain) that adds no
 *               value, so a row's weights sum to less than 1; -inf = none for that head,
 *               NaN or +inf is ATTN_ERR_ARG. A row with every key masked still gives zeros.
 * Ring of keys: with kv_start > 0 key j (its position, the masks' and scores' index j)
 * lies in row (kv_start + j) % kv_len of K and V, as in a ring-buffer KV cache
 * (attn_kv_cache_init_ring); kv_start >= kv_len is ATTN_ERR_ARG.
 * A masked key never influences the output, even if its K or V rows hold NaN or inf.
 * A query row with every key masked gives zeros. A NaN elsewhere stays in its row.
 * Any finite scaled score is safe (the row maximum is subtracted as in attn_softmax). A
 * score that is not finite (scale q.k overflowing float, or inf or NaN in Q or in a visible
 * K row) either is -inf, and its key counts as masked, or makes the row NaN.
 * causal_offset may be any ptrdiff_t (PTRDIFF_MAX: every key visible; PTRDIFF_MIN: none).
 * softcap > 0 applies softcap * tanh(s / softcap) after scaling and before the masks.
 * scale = 0 means 1/sqrt(head_dim).
 *
 * Kernel: queries in tiles of attn_attention_query_tile() rows (192), keys in tiles of
 * 128 (132 on NEON); Q K^T and P V of a tile by the matmul
 * microkernel, the online softmax on the tile in L1; causal tiles past the diagonal are
 * skipped. Query tiles of 1..11 rows (decode) stream K and V once per group of rows (6 on
 * AVX2, 12 on AVX-512), with dot products and row updates (for up to 8 grouped-query heads
 * at once when they share K and V). Workspace: attn_attention_workspace_size(), a function
 * of head_dim and v_head_dim only (never of the lengths, batch or heads): 205 KiB for
 * d = dv = 64, 365 KiB for 128 on AVX2 (198 / 358 KiB on AVX-512, 164 / 324 scalar).
 *
 * Determinism and threads: the output is identical run to run, and each output row is
 * computed the same way whatever the other rows hold. The one thing the rest of the call
 * decides is the path: a row in a query tile of 1..11 rows (decode) gets the same bits in
 * every such call, one in a larger tile in every such call, and the two may differ in the
 * last bits (a token decoded alone against the same token in a prefill). To spread one call
 * over a job
 * system, run its attn_attention_tasks(p) work items (one (batch, head, query tile) each)
 * with attn_attention_task(), in any order, on any threads, each thread with its own
 * workspace: the output is bit-identical to attn_attention() (a NaN output may differ in
 * its sign or payload, which the compiler's operand order picks). Slicing batches or heads by
 * hand (pointers moved to one (b, h), batch = heads = kv_heads = 1) gives the same bits
 * too; slicing queries by hand does only at multiples of the query tile (with the causal
 * offset carried over as ATTN_CAUSAL_OFFSET).
 *
 * Scores (optional, for inspection and for ONNX's qk_matmul_output): with scores set, the
 * kernel also writes, for every query and every key j < kv_len, at
 * scores[b*scores_sb + h*scores_sh + i*scores_sq + j]:
 *   ATTN_SCORES_LOGITS  scale * q.k, softcapped (before any mask);
 *   ATTN_SCORES_MASKED  the same after the masks and ALiBi: the softmax's input (-inf where
 *                       masked);
 *   ATTN_SCORES_PROBS   the attention weights softmax(...) (rows sum to 1, less with a
 *                       sink; 0 where masked; a fully masked row all 0).
 * This materializes Lq x Lk floats per head and takes the reference-order rows path (slower;
 * O's last bits may differ from a call without scores).
 */
typedef enum attn_causal {
    ATTN_CAUSAL_NONE = 0,
    ATTN_CAUSAL_BOTTOM_RIGHT = 1,
    ATTN_CAUSAL_OFFSET = 2
} attn_causal;

typedef enum attn_layout {
    ATTN_LAYOUT_BHLD = 0, /* [batch, heads, len, dim]: each head a contiguous matrix */
    ATTN_LAYOUT_BLHD = 1  /* [batch, len, heads * dim]: heads interleaved in each row */
} attn_layout;

typedef enum attn_scores {
    ATTN_SCORES_LOGITS = 0,
    ATTN_SCORES_MASKED = 1,
    ATTN_SCORES_PROBS = 2
} attn_scores;

typedef struct attn_attention_params {
    size_t batch, heads, kv_heads; /* kv_heads divides heads (GQA / MQA) */
    size_t q_len, kv_len;          /* Lq, Lk */
    size_t head_dim, v_head_dim;   /* d (Q and K), dv (V and O) */
    const float *q;
    size_t q_sb, q_sh, q_sl;
    const void *k; /* K and V: elements of type kv_type, strides in elements */
    size_t k_sb, k_sh, k_sl;
    const void *v;
    size_t v_sb, v_sh, v_sl;
    float *o;
    size_t o_sb, o_sh, o_sl;
    float scale;   /* 0 = 1/sqrt(head_dim) */
    float softcap; /* 0 = none */
    attn_causal causal;
    ptrdiff_t causal_offset; /* for ATTN_CAUSAL_OFFSET */
    const float *mask;
    size_t mask_sb, mask_sh, mask_sq;
    const uint8_t *bool_mask;
    size_t bmask_sb, bmask_sh, bmask_sq;
    const int64_t *key_lengths; /* [batch] or NULL */
    float *scores;              /* optional output, see above; NULL = none */
    size_t scores_sb, scores_sh, scores_sq;
    attn_scores scores_mode;
    attn_dtype kv_type; /* storage of K and V: ATTN_F32 (0, the default), ATTN_F16, ATTN_BF16,
                         * ATTN_Q8_0 */
    const float *alibi_slopes; /* [heads] or NULL: ALiBi (see above) */
    size_t window;             /* 0 = none: sliding window (see above) */
    const float *sinks;        /* [heads] or NULL: learned attention sinks (see above) */
    size_t kv_start;           /* K and V rows as a ring: key j in row (kv_start + j) % kv_len */
} attn_attention_params;

/* ALiBi's slopes for `heads` heads into slopes[0..heads): 2^(-8 i / n) for i = 1..n, n the
 * largest power of two <= heads, then for the remaining heads every other slope of the 2n
 * rule (2^(-4 (2i - 1) / n)), as the ALiBi paper's code and BLOOM give them. */
ATTN_API attn_status attn_alibi_slopes(size_t heads, float *slopes);

/* Fills sizes, pointers and strides for tensors in `layout` (all four the same layout,
 * densely packed), scale 0 (default), no softcap, no masks. Invalid arguments show in the
 * call: a stride that does not fit size_t is SIZE_MAX (attn_attention: ATTN_ERR_OVERFLOW
 * where it is used), an unknown layout leaves causal out of range (ATTN_ERR_ARG). */
ATTN_API attn_attention_params attn_attention_init(size_t batch, size_t heads, size_t kv_heads,
                                                   size_t q_len, size_t kv_len,
                                                   size_t head_dim, size_t v_head_dim,
                                                   const float *q, const float *k,
                                                   const float *v, float *o,
                                                   attn_layout layout);

/* Bytes of workspace attn_attention needs (any alignment); depends on head_dim and
 * v_head_dim only, never on the lengths. Returns 0 for NULL, head_dim 0 or v_head_dim 0
 * (or sizes whose workspace would not fit in memory). */
ATTN_API size_t attn_attention_workspace_size(const attn_attention_params *p);

/* batch = 0 or q_len = 0 is an empty call (ATTN_OK; pointers, strides and workspace
 * unchecked, kv_start checked when kv_len > 0); kv_len = 0 is otherwise ATTN_ERR_SIZE.
 * ATTN_ERR_ALIAS when O, scores or the workspace overlap each other, Q, K, V, a mask or
 * key_lengths (extents, as above). */
ATTN_API attn_status attn_attention(const attn_attention_params *p, void *workspace,
                                    size_t workspace_size);

/* Rows of a query tile (a compile-time constant of the build's ISA path). */
ATTN_API size_t attn_attention_query_tile(void);

/* Work items of a call: batch * heads * ceil(q_len / query tile) (0 for NULL, a 0 size, or
 * sizes whose count does not fit, such as a q_len no call accepts).
 * Item t is batch t / (heads * tiles), head t / tiles % heads, query tile t % tiles. */
ATTN_API size_t attn_attention_tasks(const attn_attention_params *p);

/* Computes work item `task` of the call p (validated like attn_attention; ATTN_ERR_ARG when
 * task >= attn_attention_tasks(p)). Items write disjoint rows of O (and of scores). */
ATTN_API attn_status attn_attention_task(const attn_attention_params *p, size_t task,
                                         void *workspace, size_t workspace_size);

/* ---------------------------------------------------------------------------------------
 * KV cache: caller-owned key and value buffers that new positions are appended to, as an
 * autoregressive decoder needs (ONNX Attention's past/present: present = concat(past, new)).
 *   k: [batch, kv_heads, capacity, head_dim], v: [batch, kv_heads, capacity, v_head_dim],
 *   dense, of floats (or f16 / bf16 / q8_0: attn_kv_cache_init_type); positions 0 .. len-1 are
 *   filled. attn_kv_cache_init sets len = 0.
 * attn_kv_cache_append copies n new positions (k_new, v_new dense in `layout`:
 * [batch, kv_heads, n, dim] or [batch, n, kv_heads * dim]) after the filled ones:
 * ATTN_ERR_CAPACITY (nothing copied) when len + n > capacity, ATTN_ERR_ALIAS when k_new or
 * v_new lies in the cache's k or v (which may not overlap each other either); n = 0 appends
 * nothing (k_new and v_new may then be NULL). To start from an existing past,
 * append it first. attn_attention_init_kv() sets up attention of q_len queries against the
 * filled positions: kv_len = len, K/V strides of the cache; with ATTN_CAUSAL_BOTTOM_RIGHT the
 * queries are the last q_len positions (offset len - q_len = the past length when the
 * queries' own keys were just appended), which is what decoding needs. Any field can be
 * changed afterwards (e.g. ATTN_CAUSAL_OFFSET with causal_offset = past length, ONNX's rule
 * when q_len differs from the number appended).
 * The cache struct holds no hidden state: len can be reset or set by the caller (rewind a
 * speculative decode) as long as len <= capacity; on a ring that has wrapped (start != 0),
 * only to 0 together with start = 0 (emptied): attention reads a ring as kv_len rows from
 * row start, wrapping at kv_len, so a wrapped ring cannot be rewound. Any other state is an
 * invalid cache (ATTN_ERR_ARG from append, all-zero params from attn_attention_init_kv), as
 * are a k and v that overlap.
 * A ring cache (attn_kv_cache_init_ring) never fills: an append of n <= capacity positions
 * overwrites the oldest ones once len reaches capacity, so a stream runs forever in fixed
 * memory (a sliding window's cache: capacity >= window + tokens per call - 1 keeps every key
 * the window lets a new token see). Its oldest position is in row `start` (0 until it
 * wraps) and attn_attention_init_kv sets kv_start = start; `pos` counts the positions
 * appended in all (RoPE's position of the next one). A plain cache keeps start = 0. */
typedef struct attn_kv_cache {
    void *k, *v; /* elements of type `type` */
    size_t batch, kv_heads, capacity, head_dim, v_head_dim;
    size_t len;
    attn_dtype type;
    int ring;     /* 1: a ring (attn_kv_cache_init_ring) */
    size_t start; /* a full ring's oldest row */
    size_t pos;   /* positions appended since init */
} attn_kv_cache;

ATTN_API attn_status attn_kv_cache_init(attn_kv_cache *c, float *k, float *v, size_t batch,
                                        size_t kv_heads, size_t capacity, size_t head_dim,
                                        size_t v_head_dim);
/* The same for a cache stored as `type` (ATTN_F16 or ATTN_BF16: k and v hold uint16_t
 * elements, half the bytes; ATTN_Q8_0: every row q8_0 blocks, about 0.27 of the f32 bytes
 * (attn_dtype_bytes sizes the buffers), head_dim and v_head_dim multiples of 32, else
 * ATTN_ERR_SIZE; ATTN_F32 as attn_kv_cache_init; another value ATTN_ERR_ARG):
 * attn_kv_cache_append rounds the new float rows to it (16 bits: to nearest even, inf past
 * the range, NaN kept a NaN; q8_0: attn_convert's quantization, each block of 32 of a row
 * on its own scale, and a block holding NaN or inf, or whose scale would pass binary16's
 * range (max|x| / 127 rounds to binary16's inf: max|x| >= about 65520 * 127 = 8.32e6), stored
 * as NaN: scale NaN, q 0, all 32 values read as NaN) and
 * attn_attention_init_kv sets kv_type, so attention reads the stored cache directly. */
ATTN_API attn_status attn_kv_cache_init_type(attn_kv_cache *c, attn_dtype type, void *k,
                                             void *v, size_t batch, size_t kv_heads,
                                             size_t capacity, size_t head_dim,
                                             size_t v_head_dim);
/* A ring cache of `capacity` positions, as attn_kv_cache_init_type otherwise; appending more
 * than capacity positions in one call is ATTN_ERR_CAPACITY. */
ATTN_API attn_status attn_kv_cache_init_ring(attn_kv_cache *c, attn_dtype type, void *k,
                                             void *v, size_t batch, size_t kv_heads,
                                             size_t capacity, size_t head_dim,
                                             size_t v_head_dim);
ATTN_API attn_status attn_kv_cache_append(attn_kv_cache *c, size_t n, const float *k_new,
                                          const float *v_new, attn_layout layout);
/* q and o in `layout` (dense, heads query heads; heads a multiple of the cache's kv_heads).
 * An invalid cache gives all-zero params (attn_attention then reports ATTN_ERR_SIZE), an
 * unknown layout causal out of range (ATTN_ERR_ARG), as attn_attention_init. */
ATTN_API attn_attention_params attn_attention_init_kv(const attn_kv_cache *c, size_t heads,
                                                      size_t q_len, const float *q, float *o,
                                                      attn_layout layout, attn_causal causal);

/* ---------------------------------------------------------------------------------------
 * Rotary position embedding (RoPE), in place on query or key rows. Pair k of a head's
 * rotated part (k < r / 2, r = rot_dim) turns by the angle pos * pos_scale * f_k:
 *   (a, b) -> (a cos - b sin, a sin + b cos),
 * the pair being elements (2k, 2k + 1) with ATTN_ROPE_ADJACENT, (k, k + r / 2) with
 * ATTN_ROPE_HALVES; elements r .. head_dim - 1 are left as they are (partial rotary).
 * f_k = inv_freq[k] when given (any published scaling scheme: NTK, YaRN, Llama 3), else
 * theta^(-2k / r). Angles, sines and cosines are computed in double and rounded once, so
 * positions below 2^31 keep full float accuracy (PyTorch's float32 angles lose it past
 * about 2^13; past 2^31 the angle's own rounding in double, about pos 2^-53, shows); the
 * error is stated in the README.
 */
typedef enum attn_rope_pairing {
    ATTN_ROPE_ADJACENT = 0, /* (2k, 2k + 1): GPT-J, the original RoFormer, Meta's Llama code */
    ATTN_ROPE_HALVES = 1    /* (k, k + r / 2): GPT-NeoX, Hugging Face's Llama code */
} attn_rope_pairing;

typedef struct attn_rope_params {
    size_t head_dim;           /* floats per head */
    size_t rot_dim;            /* r: the rotated leading part of a head, even; 0 = head_dim */
    attn_rope_pairing pairing;
    float theta;               /* the frequencies' base; 0 = 10000 */
    float pos_scale;           /* linear position scaling (positions times this); 0 = 1 */
    const float *inv_freq;     /* r / 2 frequencies f_k, or NULL for theta^(-2k / r) */
} attn_rope_params;

/* Rotates x in place: `tokens` rows ldx floats apart, each holding `heads` heads of
 * head_dim floats side by side ([L, H * D] rows, ldx >= heads * head_dim; for [B, H, L, D]
 * call once per head with heads = 1 and ldx = head_dim). Row t has the position
 * positions[t] when positions is not NULL, else pos0 + t (a KV cache appends at its
 * length). Errors: ATTN_ERR_NULL, ATTN_ERR_SIZE (head_dim or heads 0, rot_dim odd or above
 * head_dim), ATTN_ERR_LD, ATTN_ERR_OVERFLOW (also pos0 + tokens - 1 past SIZE_MAX),
 * ATTN_ERR_ARG (theta or pos_scale negative or not finite), ATTN_ERR_ALIAS (inv_freq or
 * positions inside x). tokens = 0: nothing. */
ATTN_API attn_status attn_rope(const attn_rope_params *p, float *x, size_t ldx, size_t tokens,
                               size_t heads, size_t pos0, const size_t *positions);

/* ---------------------------------------------------------------------------------------
 * Transformer blocks: activations, linear layers, feed-forward network, multi-head
 * attention, encoder and decoder blocks, parameter counts; and the floating-point
 * environment helpers for real-time use.
 *
 * Weights are caller-owned arrays, row-major, never copied: float32, or f16 / bf16 / q8_0 /
 * q4_0 where a struct's wtype says so (encoder and decoder blocks: each sublayer's struct
 * has its own; an invalid wtype is ATTN_ERR_ARG; block types need trans = ATTN_TRANS and
 * dimensions that are multiples of 32, as attn_matmul_typed says, and pointers into fused
 * tensors then count bytes: attn_dtype_bytes). A linear weight W of a block is d_in x d_out
 * (y = x W + b), or stored as its transpose, nn.Linear's [out, in], with the struct's trans
 * = ATTN_TRANS; leading dimensions (0 = dense) let a block use views into fused tensors, so
 * a state dict is used as stored (an invalid trans is ATTN_ERR_ARG, a leading dimension
 * below its row ATTN_ERR_LD). One sequence per call: x is tokens x
 * d_model with leading dimension ldx; batch by looping. Scratch memory comes from the
 * caller: *_workspace_size() gives the bytes for a given token count (it grows with the
 * tokens, as the activations do, and never decreases as any size grows, so the size for the
 * largest sizes a program uses serves every smaller call: one static buffer for real-time
 * use; the head count aside where head_dim is d_model / heads, as in attn_mha, attn_encoder
 * and attn_decoder: more heads are smaller ones, and may need less); any alignment; nothing
 * is ever allocated.
 *
 * Denormals: attn_activation, attn_linear, attn_ffn, attn_mha, attn_encoder and
 * attn_decoder never return a denormal (a result below FLT_MIN in magnitude is 0), and
 * neither do attn_softmax or the exp inside every kernel. The older kernels can return
 * one when their inputs are tiny: attn_layernorm / attn_rmsnorm (tiny gamma or beta, or
 * an eps far larger than the row's variance), attn_matmul (products of tiny values),
 * attn_attention (tiny V), attn_add (two nearly cancelling values) and
 * attn_positional_encoding with add (a tiny input). Intermediate values inside a block can
 * be denormal too. To keep the hardware from ever computing with denormals (their slow
 * paths cost 10-100x on many x86 cores), wrap the real-time section in
 * attn_denormals_flush_begin() / attn_denormals_flush_end(). */

/* Activation functions. */
typedef enum attn_act {
    ATTN_ACT_NONE = 0,      /* identity */
    ATTN_ACT_RELU = 1,      /* max(x, 0) */
    ATTN_ACT_GELU = 2,      /* x * Phi(x) = x/2 (1 + erf(x / sqrt 2)) (ONNX Gelu, PyTorch's) */
    ATTN_ACT_GELU_TANH = 3, /* x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (approximate='tanh') */
    ATTN_ACT_SILU = 4       /* x * sigmoid(x) (SiLU, swish: Llama's gate, PyTorch's F.silu) */
} attn_act;

/* y[r,:] = act(x[r,:]). In place allowed. Outputs below FLT_MIN in magnitude are 0 (a
 * denormal input gives 0). NaN gives NaN; GELU(+inf) = +inf, GELU(-inf) = 0.
 * Accuracy against the exact functions (double erf / tanh), for every float x whose
 * result is at least FLT_MIN in magnitude:
 *   ATTN_ACT_GELU       relative error <= 1e-6 (measured 4.9e-7): erfc from Numerical
 *                       Recipes' Chebyshev fit (fractional error 1.2e-7) times
 *                       exp(-x^2/2 + P) with the square carried exactly; x > 0 uses
 *                       x (1 - erfc/2), so nothing cancels;
 *   ATTN_ACT_GELU_TANH  relative error <= 1e-6 (1 + |a|), a = 2 sqrt(2/pi) (x + 0.044715 x^3)
 *                       the exponent of e^-|a| (the rounding of a in float, amplified by
 *                       the exp; |a| < 100 wherever the result is not 0; measured: 1.9e-7
 *                       (1 + |a|), at most 1.5e-5 relative, in the far negative tail);
 *   ATTN_ACT_SILU       relative error <= 1e-6: x / (1 + e^-x) as x (x >= 0 ? 1 : w) /
 *                       (1 + w), w = e^-|x| (no overflow, no cancellation);
 *                       SiLU(+inf) = +inf, SiLU(-inf) = 0;
 *   ATTN_ACT_RELU, ATTN_ACT_NONE exact. */
ATTN_API attn_status attn_activation(attn_act act, const float *x, size_t ldx, float *y,
                                     size_t ldy, size_t rows, size_t n);

/* Gated linear unit: y[r,c] = act(gate[r,c]) * up[r,c] over rows x n, the middle of a
 * gated MLP (SwiGLU: ATTN_ACT_SILU, Llama, Mistral, Qwen; GEGLU: ATTN_ACT_GELU or
 * ATTN_ACT_GELU_TANH, Gemma). gate, up and y have their own leading dimensions; a fused
 * gate-up projection's output h = [gate | up] (tokens x 2n) is gate = h, up = h + n,
 * ldg = ldu = 2n. y may be gate or up exactly (in place: same pointer and leading
 * dimension); other overlaps are ATTN_ERR_ALIAS. Error: that of act plus one rounding
 * (relative <= 1.2e-6 for SiLU and GELU) where |act(gate)| >= FLT_MIN; an act(gate) below
 * FLT_MIN is 0 (so is y; at most FLT_MIN |up| from the exact product); outputs below FLT_MIN
 * are 0. */
ATTN_API attn_status attn_glu(attn_act act, const float *gate, size_t ldg, const float *up,
                              size_t ldu, float *y, size_t ldy, size_t rows, size_t n);

/* Linear layer: y = act(x op(W) + bias), x tokens x d_in, y tokens x d_out.
 * tw = ATTN_NO_TRANS: W is d_in x d_out (ldw >= d_out);
 * tw = ATTN_TRANS:    W is d_out x d_in (ldw >= d_in), PyTorch's nn.Linear weight.
 * bias: d_out floats or NULL. y must not overlap x, W, bias or the workspace
 * (ATTN_ERR_ALIAS). The product is attn_matmul's;
 * workspace is optional exactly as there (NULL with size 0, or at least
 * attn_linear_workspace_size() bytes). Outputs are never denormal. */
ATTN_API size_t attn_linear_workspace_size(attn_trans tw, size_t tokens, size_t d_in,
                                           size_t d_out);
ATTN_API attn_status attn_linear(const float *x, size_t ldx, size_t tokens, size_t d_in,
                                 attn_trans tw, const float *w, size_t ldw, const float *bias,
                                 size_t d_out, attn_act act, float *y, size_t ldy,
                                 void *workspace, size_t workspace_size);

/* attn_linear with W stored as w_type (any attn_dtype; ldw in elements; ATTN_ERR_ARG for
 * another value; block types need tw = ATTN_TRANS and d_in, ldw multiples of 32, as
 * attn_matmul_typed says): the product is attn_matmul_typed's (for up to 8 tokens,
 * the decode case, W is streamed once; with tw = ATTN_TRANS the rounding order of those
 * calls is its dot-product order), the rest attn_linear's. The result is attn_linear's on W
 * widened (dequantized) to float32, within its bound; with ATTN_F32 it is attn_linear, bit
 * for bit. */
ATTN_API attn_status attn_linear_typed(const float *x, size_t ldx, size_t tokens, size_t d_in,
                                       attn_trans tw, attn_dtype w_type, const void *w,
                                       size_t ldw, const float *bias, size_t d_out, attn_act act,
                                       float *y, size_t ldy, void *workspace,
                                       size_t workspace_size);

/* Feed-forward network: y = act(x W1 + b1) W2 + b2 (d_model -> d_ff -> d_model). */
typedef struct attn_ffn_weights {
    size_t d_model, d_ff;
    attn_act act;        /* usually ATTN_ACT_GELU or ATTN_ACT_RELU */
    const float *w1;     /* d_model x d_ff */
    const float *b1;     /* d_ff floats or NULL */
    const float *w2;     /* d_ff x d_model */
    const float *b2;     /* d_model floats or NULL */
    attn_dtype wtype;    /* storage of w1 and w2: ATTN_F32 (0: zero-initialized structs), or
                            ATTN_F16 / ATTN_BF16 (the pointers then hold uint16_t elements,
                            cast to const float *); biases stay float32 */
    attn_trans trans;    /* ATTN_TRANS: w1 stored d_ff x d_model and w2 d_model x d_ff, as
                            PyTorch's nn.Linear weights ([out, in]); ATTN_NO_TRANS (0) as above */
    size_t ld1, ld2;     /* leading dimensions of w1 and w2 in elements, 0 = dense */
} attn_ffn_weights;

/* Bytes of workspace attn_ffn needs for `tokens` rows (the d_ff hidden activations plus
 * the matmul's). Returns 0 for NULL or invalid weights, tokens 0, or on overflow. */
ATTN_API size_t attn_ffn_workspace_size(const attn_ffn_weights *w, size_t tokens);

/* x, y: tokens x d_model. In place allowed. Workspace required. Blocks (attn_ffn, attn_mha,
 * attn_encoder, attn_decoder): tokens = 0 (q_tokens for attn_mha) is an empty call; the
 * workspace may not overlap x, y or mem, nor y x other than exactly in place
 * (ATTN_ERR_ALIAS); the weights are read-only inputs whose overlap with y or the workspace
 * is not checked. */
ATTN_API attn_status attn_ffn(const attn_ffn_weights *w, const float *x, size_t ldx, float *y,
                              size_t ldy, size_t tokens, void *workspace,
                              size_t workspace_size);

/* Multi-head attention layer:
 *   Q = xq Wq + bq, K = xkv Wk + bk, V = xkv Wv + bv   (projections, d_model x d_model)
 *   O = attention over `heads` heads of head_dim = d_model / heads (scale 1/sqrt(head_dim);
 *       head h is columns [h head_dim, (h+1) head_dim) of Q, K, V and O)
 *   y = O Wo + bo. */
typedef struct attn_mha_weights {
    size_t d_model, heads;           /* heads divides d_model */
    const float *wq, *wk, *wv, *wo;  /* d_model x d_model each */
    const float *bq, *bk, *bv, *bo;  /* d_model floats each, or NULL (no bias) */
    attn_dtype wtype; /* storage of wq, wk, wv, wo: ATTN_F32 (0) or 16 bits, as in the FFN */
    attn_trans trans; /* ATTN_TRANS: each stored [out, in] (nn.Linear); 0 as above */
    size_t ldq, ldk, ldv, ldo; /* leading dimensions in elements, 0 = dense (d_model). Weights
                                * used as stored: nn.MultiheadAttention's in_proj_weight [3E, E]
                                * is wq = p, wk = p + E*E, wv = p + 2*E*E with ATTN_TRANS; a
                                * fused [E, 3E] (GPT-2's c_attn) is wq = p, wk = p + E,
                                * wv = p + 2*E, ldq = ldk = ldv = 3E with ATTN_NO_TRANS. */
} attn_mha_weights;

/* Bytes of workspace attn_mha needs (Q, K, V, O, the attention's and the matmul's).
 * Returns 0 for NULL or invalid weights, q_tokens 0, or on overflow; kv_tokens 0 is a
 * cached call's (attn_mha_ex) that appends nothing. */
ATTN_API size_t attn_mha_workspace_size(const attn_mha_weights *w, size_t q_tokens,
                                        size_t kv_tokens);

/* xq: q_tokens x d_model (the queries' input), xkv: kv_tokens x d_model (keys' and values'
 * input): self-attention passes the same matrix twice, cross-attention the encoder output
 * as xkv. causal: 0 none, 1 query i sees key j iff j <= i + kv_tokens - q_tokens (with
 * equal lengths, the usual j <= i); other values are ATTN_ERR_ARG. y: q_tokens x d_model;
 * y may be xq or xkv (in place, same leading dimension). Workspace required. */
ATTN_API attn_status attn_mha(const attn_mha_weights *w, const float *xq, size_t ldxq,
                              size_t q_tokens, const float *xkv, size_t ldxkv, size_t kv_tokens,
                              int causal, float *y, size_t ldy, void *workspace,
                              size_t workspace_size);

/* Where the layer norms sit in a block. */
typedef enum attn_norm_order {
    ATTN_PRE_LN = 0, /* x1 = x + MHA(LN1(x));  x2 = x1 + FFN(LN2(x1))  (GPT-2, most models) */
    ATTN_POST_LN = 1 /* x1 = LN1(x + MHA(x));  x2 = LN2(x1 + FFN(x1))  (Transformer, BERT) */
} attn_norm_order;

/* Encoder block: self-attention and FFN with residuals and layer norms (ln*_gamma/beta:
 * d_model floats each, NULL = 1 / 0; eps >= 0 and finite, e.g. 1e-5 or BERT's 1e-12).
 * attn.d_model must equal ffn.d_model. */
typedef struct attn_encoder_weights {
    attn_mha_weights attn;
    attn_ffn_weights ffn;
    const float *ln1_gamma, *ln1_beta, *ln2_gamma, *ln2_beta;
    float eps;
    attn_norm_order norm;
} attn_encoder_weights;

/* Bytes of workspace attn_encoder needs for `tokens` rows; 0 for invalid weights. */
ATTN_API size_t attn_encoder_workspace_size(const attn_encoder_weights *w, size_t tokens);

/* x, y: tokens x d_model; in place allowed. causal != 0 makes the self-attention causal
 * (a decoder-only, GPT-style block); 0 is the bidirectional (BERT) encoder; values other
 * than 0 and 1 are ATTN_ERR_ARG. */
ATTN_API attn_status attn_encoder(const attn_encoder_weights *w, const float *x, size_t ldx,
                                  float *y, size_t ldy, size_t tokens, int causal,
                                  void *workspace, size_t workspace_size);

/* Decoder block: causal self-attention, cross-attention over an encoder output `mem`, FFN.
 *   pre-LN:  x1 = x + Self(LN1(x)); x2 = x1 + Cross(LN2(x1), mem); x3 = x2 + FFN(LN3(x2))
 *   post-LN: x1 = LN1(x + Self(x)); x2 = LN2(x1 + Cross(x1, mem)); x3 = LN3(x2 + FFN(x2))
 * self_attn, cross_attn and ffn have the same d_model. */
typedef struct attn_decoder_weights {
    attn_mha_weights self_attn, cross_attn;
    attn_ffn_weights ffn;
    const float *ln1_gamma, *ln1_beta, *ln2_gamma, *ln2_beta, *ln3_gamma, *ln3_beta;
    float eps;
    attn_norm_order norm;
} attn_decoder_weights;

ATTN_API size_t attn_decoder_workspace_size(const attn_decoder_weights *w, size_t tokens,
                                            size_t mem_tokens);

/* x, y: tokens x d_model (in place allowed); mem: mem_tokens x d_model, must not overlap y
 * (ATTN_ERR_ALIAS); mem_tokens = 0 with tokens > 0 is ATTN_ERR_SIZE. */
ATTN_API attn_status attn_decoder(const attn_decoder_weights *w, const float *x, size_t ldx,
                                  float *y, size_t ldy, size_t tokens, const float *mem,
                                  size_t ldmem, size_t mem_tokens, void *workspace,
                                  size_t workspace_size);

/* Per-call options of attn_mha_ex, attn_encoder_ex and attn_decoder_ex (zero-initialize;
 * every field optional; NULL options = all zero = attn_mha / attn_encoder / attn_decoder).
 *   key_mask: [kv_len] uint8 over the self-attention's keys (attn_mha_ex: its keys), oldest
 *             first, nonzero = attend: PyTorch's key_padding_mask negated. kv_len is
 *             kv_tokens, or with a cache its len after the append.
 *   mem_mask: [mem_len] over the decoder's memory keys (mem_tokens, or mem_cache's len).
 *   cache:    a KV cache of the self-attention (batch 1, kv_heads = heads, head_dim =
 *             v_head_dim = d_model / heads, any storage type, plain or ring): the call
 *             appends the K and V of its new tokens and attends over every cached position;
 *             causal makes the new tokens the last positions. Decoding token by token then
 *             costs one token's projections per call. Errors as attn_decoder_only's: a
 *             cache of another shape ATTN_ERR_SIZE, no room ATTN_ERR_CAPACITY, a cache over
 *             an input, the output or the workspace ATTN_ERR_ALIAS; nothing is appended on
 *             error.
 *   mem_cache: attn_decoder_ex's cross-attention memory K and V (attn_mha_ex ignores it):
 *             a call with mem appends mem's projected K and V (reset len to 0 first for a
 *             new memory); a call with mem NULL (mem_tokens 0) reuses them, so the memory is
 *             projected once per sequence.
 *   window:   the self-attention's sliding window (see attn_attention); with a ring cache it
 *             runs forever in fixed memory, capacity >= window + tokens per call - 1.
 * The workspace queries count new tokens only (kv_tokens or mem_tokens 0 with a cache). */
typedef struct attn_block_options {
    const uint8_t *key_mask, *mem_mask;
    attn_kv_cache *cache, *mem_cache;
    size_t window;
} attn_block_options;

/* attn_mha with options: xkv may be NULL with kv_tokens 0 when opt->cache holds the keys. */
ATTN_API attn_status attn_mha_ex(const attn_mha_weights *w, const float *xq, size_t ldxq,
                                 size_t q_tokens, const float *xkv, size_t ldxkv,
                                 size_t kv_tokens, int causal, const attn_block_options *opt,
                                 float *y, size_t ldy, void *workspace, size_t workspace_size);

/* attn_encoder with options (key_mask, cache, window). */
ATTN_API attn_status attn_encoder_ex(const attn_encoder_weights *w, const float *x, size_t ldx,
                                     float *y, size_t ldy, size_t tokens, int causal,
                                     const attn_block_options *opt, void *workspace,
                                     size_t workspace_size);

/* attn_decoder with options and the self-attention's causal flag (1: attn_decoder; 0:
 * bidirectional, 0 and 1 only); mem may be NULL with mem_tokens 0 when opt->mem_cache
 * holds the memory's K and V. */
ATTN_API attn_status attn_decoder_ex(const attn_decoder_weights *w, const float *x, size_t ldx,
                                     float *y, size_t ldy, size_t tokens, int causal,
                                     const float *mem, size_t ldmem, size_t mem_tokens,
                                     const attn_block_options *opt, void *workspace,
                                     size_t workspace_size);

/* ---------------------------------------------------------------------------------------
 * Decoder-only block, the layer of today's small language models (Llama, Mistral, Qwen,
 * GPT-NeoX, Phi), for prefill of many tokens and decode of one against a KV cache:
 *   h = norm1(x); q = h Wq, k = h Wk, v = h Wv (+ biases); RoPE on q and k at the cache's
 *   positions; k, v appended to the cache; a = attention(q, cache) (grouped-query heads,
 *   causal: the new tokens are the last positions) Wo;
 *   sequential: r = x + a, y = r + MLP(norm2(r));  parallel: y = x + a + MLP(norm2(x))
 *   (GPT-NeoX; without ffn_norm, norm1(x) feeds the MLP too: GPT-J);
 *   MLP(z) = (act(z W_gate) * (z W_up)) W_down (SwiGLU, GEGLU), or act(z W_up) W_down when
 *   w_gate.w is NULL.
 * Weights are used as stored: each matrix is an attn_matrix view (PyTorch's [out, in]
 * weights with ATTN_TRANS; a fused qkv or gate-up tensor as pointers into it; f16 / bf16
 * storage). window, sinks and alibi_slopes go to the attention as its fields of those names.
 * RoPE's position is the cache's len, or pos for a ring cache; a ring takes up to capacity
 * tokens a call, and with a window at most capacity - window + 1 (ATTN_ERR_CAPACITY). */

/* A weight matrix as stored, for the linear map z op(W) + bias from d_in to d_out:
 * trans ATTN_TRANS: stored d_out x d_in (nn.Linear.weight), ld >= d_in;
 * ATTN_NO_TRANS: stored d_in x d_out, ld >= d_out. ld in elements of `type`. */
typedef struct attn_matrix {
    const void *w;
    size_t ld;
    attn_trans trans;
    attn_dtype type;   /* ATTN_F32 (0), ATTN_F16, ATTN_BF16, ATTN_Q8_0 or ATTN_Q4_0 */
    const float *bias; /* d_out floats or NULL */
} attn_matrix;

typedef enum attn_norm_kind { ATTN_NORM_RMS = 0, ATTN_NORM_LAYER = 1 } attn_norm_kind;

typedef struct attn_decoder_only_weights {
    size_t d_model, heads, kv_heads, head_dim, d_ff; /* kv_heads divides heads */
    attn_matrix wq, wk, wv, wo;        /* d_model -> heads*head_dim, -> kv_heads*head_dim (k, v),
                                        * heads*head_dim -> d_model */
    attn_matrix w_gate, w_up, w_down; /* d_model -> d_ff (gate: w NULL for none), d_ff -> d_model */
    attn_act act;                      /* ATTN_ACT_SILU for SwiGLU */
    attn_norm_kind norm;               /* RMSNorm (gamma only) or LayerNorm (gamma, beta) */
    const float *attn_norm, *attn_norm_b; /* norm1's gamma (required) and beta (or NULL) */
    const float *ffn_norm, *ffn_norm_b;   /* norm2's; ffn_norm NULL only with parallel_residual */
    float eps;
    int parallel_residual; /* 0 or 1 */
    attn_rope_params rope; /* rope.head_dim = head_dim, or 0 for no RoPE */
    size_t window;             /* sliding window (Mistral), 0 = none; see attn_attention */
    const float *sinks;        /* [heads] learned sink logits (gpt-oss), or NULL */
    const float *alibi_slopes; /* [heads] ALiBi slopes (BLOOM, MPT), or NULL */
    int int8_products; /* 0 or 1: see below */
} attn_decoder_only_weights;

/* int8_products = 1: for calls of 2 or more tokens, the q8_0 / q4_0 matrices multiply their
 * inputs (the normed rows, the attention's output, the gated MLP rows) rounded to q8_0 per
 * block of 32, in integer arithmetic (attn_matmul_int8; llama.cpp's arithmetic for such
 * weights); the workspace query counts its scratch. One token (decode) too where the CPU
 * runs VNNI (AVX512-VNNI on the AVX-512 path, AVX-VNNI on AVX2's: attn_matmul_int8 then
 * reads the weights in place, faster than the float products); elsewhere one token keeps the
 * float products, which stream the weights as fast or faster. A product whose input does
 * not quantize (inf, NaN, a block above about 8.3e6) runs as with 0. 0: every product in
 * float32 on the dequantized weights (attn_matmul_typed). The README gives the speed and
 * the error of each against the f32 weights; f32 / f16 / bf16 matrices are the same either
 * way. */

/* Bytes of workspace for `tokens` new tokens (0 for invalid weights, tokens 0 or overflow);
 * never decreases as tokens grows. */
ATTN_API size_t attn_decoder_only_workspace_size(const attn_decoder_only_weights *w,
                                                 size_t tokens);

/* x, y: tokens x d_model (in place allowed), the tokens at positions cache->len ..
 * cache->len + tokens - 1; the cache (batch 1, the block's kv_heads and head_dim for keys
 * and values, any storage type) gets their keys and values. Errors, all before anything is
 * written or appended: ATTN_ERR_NULL, ATTN_ERR_SIZE (zero sizes, heads not a multiple of
 * kv_heads, a cache of another shape), ATTN_ERR_LD, ATTN_ERR_ARG (enums, eps, RoPE
 * parameters, an invalid cache), ATTN_ERR_CAPACITY (the cache cannot take `tokens` more),
 * ATTN_ERR_WORKSPACE, ATTN_ERR_OVERFLOW, ATTN_ERR_ALIAS (y over x other than in place; x, y or
 * the workspace over the cache; the workspace over x). tokens = 0: nothing. */
ATTN_API attn_status attn_decoder_only(const attn_decoder_only_weights *w, const float *x,
                                       size_t ldx, float *y, size_t ldy, size_t tokens,
                                       attn_kv_cache *cache, void *workspace,
                                       size_t workspace_size);

/* Parameter counts of one block with every bias present (what the weight structs above
 * point to). For BERT-base (d_model 768, 12 heads, d_ff 3072) the encoder gives
 * attention_weights 2,359,296, attention_biases 3,072, ffn_weights + ffn_biases 4,722,432,
 * layernorm 3,072, total 7,087,872. */
typedef struct attn_param_count {
    size_t attention_weights; /* W_Q, W_K, W_V, W_O: 4 d_model^2 per attention */
    size_t attention_biases;  /* 4 d_model per attention */
    size_t ffn_weights;       /* W1, W2: 2 d_model d_ff */
    size_t ffn_biases;        /* d_ff + d_model */
    size_t layernorm;         /* gamma and beta: 2 d_model per layer norm */
    size_t total;
} attn_param_count;

/* heads must divide d_model. ATTN_ERR_OVERFLOW when a count does not fit size_t. */
ATTN_API attn_status attn_encoder_param_count(size_t d_model, size_t heads, size_t d_ff,
                                              attn_param_count *count);
ATTN_API attn_status attn_decoder_param_count(size_t d_model, size_t heads, size_t d_ff,
                                              attn_param_count *count);

/* Flush-to-zero for the calling thread: after begin, the hardware turns denormal results
 * and inputs of float (and double) arithmetic into 0 (x86: MXCSR FTZ, bit 15, and DAZ,
 * bit 6; AArch64: FPCR.FZ, bit 24); end restores the state begin saved. Elsewhere both
 * are no-ops and attn_denormals_flush_supported() is 0. The state is per thread (set it in
 * the audio / game thread), and code run in between, including libm, sees it. */
typedef struct attn_fp_state {
    uint64_t saved; /* the previous control register */
    int active;     /* 1 when begin changed anything that end must restore */
} attn_fp_state;

ATTN_API int attn_denormals_flush_supported(void);
ATTN_API attn_status attn_denormals_flush_begin(attn_fp_state *state);
ATTN_API attn_status attn_denormals_flush_end(const attn_fp_state *state);

#ifdef __cplusplus
}
#endif
#endif /* ATTN_H */
