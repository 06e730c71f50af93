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
 *   "avx2"    when __AVX2__ and __FMA__ are defined (e.g. -mavx2 -mfma or -march=haswell);
 *   "neon"    on AArch64 (__aarch64__ with __ARM_NEON);
 *   "scalar"  otherwise, or when ATTN_NO_SIMD is defined.
 *
 * Conventions: float32, row-major. A matrix argument is (pointer, leading dimension):
 * element (r, c) of x is x[r * ldx + c], and ldx must be >= the row length. Sizes are
 * size_t; zero sizes are errors except where stated (matmul k = 0). Outputs may alias
 * inputs only where a function says "in place allowed", and then only exactly
 * (same pointer and same leading dimension).
 *
 * Numerics: the AVX2 and NEON paths use fused multiply-add throughout; the scalar path
 * fuses where the target has a fast fma (FP_FAST_FMAF, e.g. AArch64 or -mfma) and
 * otherwise rounds the product and the sum separately, except for the softmax's
 * error term, which always uses fmaf(). For one build, results are identical run to run. No function
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
    ATTN_ERR_ARG = -6         /* an invalid value: NaN or negative eps, bad enum, ... */
} attn_status;

/* A short English description of a status, e.g. "ok", "null pointer". Never NULL. */
ATTN_API const char *attn_status_string(attn_status status);

/* The instruction set this build was compiled for: "avx2", "neon" or "scalar". */
ATTN_API const char *attn_isa(void);

/* The exp behind every kernel: "attn" (the library's own) or "sleef". */
ATTN_API const char *attn_exp_impl(void);

/* ---------------------------------------------------------------------------------------
 * Row operations. Each processes `rows` rows of `n` elements; x has leading dimension
 * ldx, y has ldy (both >= n). In place allowed (y == x with ldy == ldx).
 */

/* y[r,:] = softmax(scale * x[r,:]). The row maximum is subtracted first, so any finite
 * input is safe. A row whose entries are all -inf gives all zeros. A row holding +inf
 * gives 1/count at the +inf entries and 0 elsewhere (the limit). A NaN makes its own
 * row all NaN and no other. Outputs below FLT_MIN are 0 (never denormal).
 * scale must be finite (1.0f for a plain softmax). */
ATTN_API attn_status attn_softmax(const float *x, size_t ldx, float *y, size_t ldy,
                                  size_t rows, size_t n, float scale);

/* y[r,:] = (x[r,:] - mean) / sqrt(var + eps) * gamma + beta, var the biased variance.
 * gamma and beta may be NULL (1 and 0). eps >= 0 and finite. mean_out and rstd_out,
 * when not NULL, receive each row's mean and 1/sqrt(var + eps) (`rows` floats each). */
ATTN_API attn_status attn_layernorm(const float *x, size_t ldx, float *y, size_t ldy,
                                    size_t rows, size_t n, const float *gamma,
                                    const float *beta, float eps, float *mean_out,
                                    float *rstd_out);

/* y[r,:] = x[r,:] / sqrt(mean(x[r,:]^2) + eps) * gamma. gamma may be NULL (1). */
ATTN_API attn_status attn_rmsnorm(const float *x, size_t ldx, float *y, size_t ldy,
                                  size_t rows, size_t n, const float *gamma, float eps);

/* y[r,:] += x[r,:] (the residual connection). In place allowed (x == y doubles y). */
ATTN_API attn_status attn_add(float *y, size_t ldy, const float *x, size_t ldx,
                              size_t rows, size_t n);

/* Sinusoidal positional encoding of positions pos0 .. pos0 + rows - 1, d columns:
 * pe[r, 2i] = sin(p / 10000^(2i/d)), pe[r, 2i+1] = cos(p / 10000^(2i/d)), p = pos0 + r.
 * Computed in double and rounded once. add != 0 adds it to pe instead of storing it
 * (embeddings + PE in one call). */
ATTN_API attn_status attn_positional_encoding(float *pe, size_t ldpe, size_t rows, size_t d,
                                              size_t pos0, int add);

/* ---------------------------------------------------------------------------------------
 * Matrix product: C = alpha * op(A) * op(B) + beta * C, C is m x n, op(A) is m x k,
 * op(B) is k x n. op(X) = X for ATTN_NO_TRANS, X^T for ATTN_TRANS (A stored k x m).
 * k = 0 gives C = beta * C. beta = 0 never reads C (NaN in C does not leak).
 *
 * workspace: scratch for packed copies of A and B, at least attn_matmul_workspace_size()
 * bytes at any alignment, or NULL (then workspace_size is ignored). The size is bounded
 * whatever the problem (a few MiB at most: one block of A plus one panel of B; less for
 * small products) and grows with m, n and k, so a workspace sized for a product serves
 * every sub-block of it. With a workspace, attn_matmul is a packed, register-blocked sgemm
 * (close to the FMA peak on large products). Without one it still works, on A and B in
 * place, tile by tile: somewhat slower for B not transposed (10-30% on large products),
 * several times slower for op(B) = B^T.
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

/* ---------------------------------------------------------------------------------------
 * Scaled dot-product attention, fused (the Lq x Lk score matrix never exists):
 *   O[b,h] = softmax(mask(softcap(scale * Q[b,h] K[b,g]^T))) V[b,g],  g = h / (heads/kv_heads)
 *
 * Tensors are addressed by strides in floats: element (b, h, i, c) of Q is
 * q[b*q_sb + h*q_sh + i*q_sl + c]; likewise K, V (with the kv head g) and O. The last
 * dimension is contiguous. attn_attention_init() fills the strides for the two common
 * layouts; change any field afterwards.
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
 * A masked key never influences the output, even if its K or V rows hold NaN or inf.
 * A query row with every key masked gives zeros. A NaN elsewhere stays in its row.
 * softcap > 0 applies softcap * tanh(s / softcap) after scaling and before the masks.
 * scale = 0 means 1/sqrt(head_dim).
 *
 * Kernel: queries in tiles of attn_attention_query_tile() rows (192), keys in tiles of
 * 128 (132 on NEON); Q K^T and P V of a tile by the matmul
 * microkernel, the online softmax on the tile in L1; causal tiles past the diagonal are
 * skipped. Query tiles of 1..11 rows (decode) stream K and V once per 6 rows, with dot
 * products and row updates (for up to 8 grouped-query heads at once when they share K and V). Workspace:
 * attn_attention_workspace_size(), a function of head_dim and v_head_dim only (never of
 * the lengths, batch or heads): 165 KiB for d = dv = 64, 325 KiB for 128 on AVX2.
 *
 * Determinism and threads: the output is identical run to run, and each output row is
 * computed the same way whatever else is in the call. To spread one call over a job
 * system, run its attn_attention_tasks(p) work items (one (batch, head, query tile) each)
 * with attn_attention_task(), in any order, on any threads, each thread with its own
 * workspace: the output is bit-identical to attn_attention(). Slicing batches or heads by
 * hand (pointers moved to one (b, h), batch = heads = kv_heads = 1) gives the same bits
 * too; slicing queries by hand does only at multiples of the query tile (with the causal
 * offset carried over as ATTN_CAUSAL_OFFSET).
 *
 * Scores (optional, for inspection and for ONNX's qk_matmul_output): with scores set, the
 * kernel also writes, for every query and every key j < kv_len, at
 * scores[b*scores_sb + h*scores_sh + i*scores_sq + j]:
 *   ATTN_SCORES_LOGITS  scale * q.k, softcapped (before any mask);
 *   ATTN_SCORES_MASKED  the same after the masks: the softmax's input (-inf where masked);
 *   ATTN_SCORES_PROBS   the attention weights softmax(...) (rows sum to 1; 0 where masked;
 *                       a fully masked row all 0).
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
    const float *k;
    size_t k_sb, k_sh, k_sl;
    const float *v;
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
} attn_attention_params;

/* Fills sizes, pointers and strides for tensors in `layout` (all four the same layout,
 * densely packed), scale 0 (default), no softcap, no masks. */
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

ATTN_API attn_status attn_attention(const attn_attention_params *p, void *workspace,
                                    size_t workspace_size);

/* Rows of a query tile (a compile-time constant of the build's ISA path). */
ATTN_API size_t attn_attention_query_tile(void);

/* Work items of a call: batch * heads * ceil(q_len / query tile) (0 for NULL or a 0 size).
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
 *   dense; positions 0 .. len-1 are filled. attn_kv_cache_init sets len = 0.
 * attn_kv_cache_append copies n new positions (k_new, v_new dense in `layout`:
 * [batch, kv_heads, n, dim] or [batch, n, kv_heads * dim]) after the filled ones:
 * ATTN_ERR_SIZE (nothing copied) when len + n > capacity. To start from an existing past,
 * append it first. attn_attention_init_kv() sets up attention of q_len queries against the
 * filled positions: kv_len = len, K/V strides of the cache; with ATTN_CAUSAL_BOTTOM_RIGHT the
 * queries are the last q_len positions (offset len - q_len = the past length when the
 * queries' own keys were just appended), which is what decoding needs. Any field can be
 * changed afterwards (e.g. ATTN_CAUSAL_OFFSET with causal_offset = past length, ONNX's rule
 * when q_len differs from the number appended).
 * The cache struct holds no hidden state: len can be reset or set by the caller (rewind a
 * speculative decode) as long as len <= capacity. */
typedef struct attn_kv_cache {
    float *k, *v;
    size_t batch, kv_heads, capacity, head_dim, v_head_dim;
    size_t len;
} attn_kv_cache;

ATTN_API attn_status attn_kv_cache_init(attn_kv_cache *c, float *k, float *v, size_t batch,
                                        size_t kv_heads, size_t capacity, size_t head_dim,
                                        size_t v_head_dim);
ATTN_API attn_status attn_kv_cache_append(attn_kv_cache *c, size_t n, const float *k_new,
                                          const float *v_new, attn_layout layout);
/* q and o in `layout` (dense, heads query heads; heads a multiple of the cache's kv_heads).
 * An invalid cache gives all-zero params (attn_attention then reports ATTN_ERR_NULL). */
ATTN_API attn_attention_params attn_attention_init_kv(const attn_kv_cache *c, size_t heads,
                                                      size_t q_len, const float *q, float *o,
                                                      attn_layout layout, attn_causal causal);

/* ---------------------------------------------------------------------------------------
 * Transformer blocks: activations, linear layers, feed-forward network, multi-head
 * attention, encoder and decoder blocks, parameter counts; and the floating-point
 * environment helpers for real-time use.
 *
 * Weights are caller-owned float32 arrays, row-major and dense, never copied. A linear
 * weight W of a block is d_in x d_out (y = x W + b; nn.Linear's [out, in] weight is its
 * transpose, which attn_linear also accepts). One sequence per call: x is tokens x
 * d_model with leading dimension ldx; batch by looping. Scratch memory comes from the
 * caller: *_workspace_size() gives the bytes for a given token count (it grows with the
 * tokens, as the activations do); any alignment; nothing is ever allocated.
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
    ATTN_ACT_GELU = 2,      /* x * Phi(x) = x/2 (1 + erf(x / sqrt 2)) (ONNX Gelu, PyTorch's default) */
    ATTN_ACT_GELU_TANH = 3  /* x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (approximate='tanh') */
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
 *   ATTN_ACT_RELU, ATTN_ACT_NONE exact. */
ATTN_API attn_status attn_activation(attn_act act, const float *x, size_t ldx, float *y,
                                     size_t ldy, size_t rows, size_t n);

/* Linear layer: y = act(x op(W) + bias), x tokens x d_in, y tokens x d_out.
 * tw = ATTN_NO_TRANS: W is d_in x d_out (ldw >= d_out);
 * tw = ATTN_TRANS:    W is d_out x d_in (ldw >= d_in), PyTorch's nn.Linear weight.
 * bias: d_out floats or NULL. y must not overlap x or W. The product is attn_matmul's;
 * workspace is optional exactly as there (NULL with size 0, or at least
 * attn_linear_workspace_size() bytes). Outputs are never denormal. */
ATTN_API size_t attn_linear_workspace_size(attn_trans tw, size_t tokens, size_t d_in,
                                           size_t d_out);
ATTN_API attn_status attn_linear(const float *x, size_t ldx, size_t tokens, size_t d_in,
                                 attn_trans tw, const float *w, size_t ldw, const float *bias,
                                 size_t d_out, attn_act act, float *y, size_t ldy,
                                 void *workspace, size_t workspace_size);

/* Feed-forward network: y = act(x W1 + b1) W2 + b2 (d_model -> d_ff -> d_model). */
typedef struct attn_ffn_weights {
    size_t d_model, d_ff;
    attn_act act;        /* usually ATTN_ACT_GELU or ATTN_ACT_RELU */
    const float *w1;     /* d_model x d_ff */
    const float *b1;     /* d_ff floats or NULL */
    const float *w2;     /* d_ff x d_model */
    const float *b2;     /* d_model floats or NULL */
} attn_ffn_weights;

/* Bytes of workspace attn_ffn needs for `tokens` rows (the d_ff hidden activations plus
 * the matmul's). Returns 0 for NULL or invalid weights, tokens 0, or on overflow. */
ATTN_API size_t attn_ffn_workspace_size(const attn_ffn_weights *w, size_t tokens);

/* x, y: tokens x d_model. In place allowed. Workspace required. */
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
} attn_mha_weights;

/* Bytes of workspace attn_mha needs (Q, K, V, O, the attention's and the matmul's).
 * Returns 0 for NULL or invalid weights, a zero token count, or on overflow. */
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
    ATTN_PRE_LN = 0, /* x1 = x + MHA(LN1(x));  x2 = x1 + FFN(LN2(x1))  (GPT-2, most modern models) */
    ATTN_POST_LN = 1 /* x1 = LN1(x + MHA(x));  x2 = LN2(x1 + FFN(x1))  (original Transformer, BERT) */
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

/* x, y: tokens x d_model (in place allowed); mem: mem_tokens x d_model, must not overlap y. */
ATTN_API attn_status attn_decoder(const attn_decoder_weights *w, const float *x, size_t ldx,
                                  float *y, size_t ldy, size_t tokens, const float *mem,
                                  size_t ldmem, size_t mem_tokens, void *workspace,
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

/* =======================================================================================
 * Implementation
 * ======================================================================================= */
#if defined(ATTN_IMPLEMENTATION) && !defined(ATTN_IMPLEMENTATION_DONE)
#define ATTN_IMPLEMENTATION_DONE

#include <float.h>
#include <math.h>
#include <string.h>

/* for the matmul microkernel's body, inlined into its packed and strided callers */
#if defined(__GNUC__) || defined(__clang__)
#define ATTN__FORCE_INLINE inline __attribute__((always_inline))
#define ATTN__NOINLINE __attribute__((noinline))
#define ATTN__PREFETCH(p) __builtin_prefetch(p)
#define ATTN__PREFETCHW(p) __builtin_prefetch(p, 1)
#define ATTN__UNROLL _Pragma("GCC unroll 8") /* the next loop, in full (short softmax rows) */
#else
#define ATTN__UNROLL
#define ATTN__PREFETCH(p) ((void)(p))
#define ATTN__PREFETCHW(p) ((void)(p))
#define ATTN__FORCE_INLINE inline
#define ATTN__NOINLINE
#endif

#if !defined(ATTN_NO_SIMD) && defined(__AVX2__) && defined(__FMA__)
#include "simd/avx2.h"
#elif !defined(ATTN_NO_SIMD) && defined(__aarch64__) && defined(__ARM_NEON)
#include "simd/neon.h"
#else
#include "simd/scalar.h"
#endif

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

#ifndef ATTN__HAVE_VSTREAM
/* ISAs without a non-temporal store (or whose cores stream full-line writes themselves) */
#define ATTN__HAVE_VSTREAM 0
static inline void attn__vstream(float *p, attn__v v) { attn__vstore(p, v); }
static inline void attn__vstream_fence(void) {}
#endif

#ifdef ATTN_USE_SLEEF
#if ATTN__VW == 1
#undef ATTN_USE_SLEEF /* the scalar path keeps the library's exp */
#else
#include <sleef.h>
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN__MAX_ELEMS ((size_t)PTRDIFF_MAX / sizeof(float))
#define ATTN__ALIGN 64

/* ---- status, identification ---------------------------------------------------------- */

ATTN_API const char *attn_status_string(attn_status status)
{
    switch (status) {
    case ATTN_OK: return "ok";
    case ATTN_ERR_NULL: return "null pointer";
    case ATTN_ERR_SIZE: return "zero or inconsistent size";
    case ATTN_ERR_LD: return "leading dimension or stride smaller than its row";
    case ATTN_ERR_WORKSPACE: return "workspace missing or too small";
    case ATTN_ERR_OVERFLOW: return "sizes overflow the address space";
    case ATTN_ERR_ARG: return "invalid argument value";
    }
    return "unknown status";
}

ATTN_API const char *attn_isa(void) { return ATTN__ISA_NAME; }

ATTN_API const char *attn_exp_impl(void)
{
#ifdef ATTN_USE_SLEEF
    return "sleef";
#else
    return "attn";
#endif
}

/* ---- argument checks ----------------------------------------------------------------- */

/* a * b, or SIZE_MAX when it exceeds `limit` */
static size_t attn__mul_lim(size_t a, size_t b, size_t limit)
{
    if (a != 0 && b > limit / a) return (size_t)-1;
    return a * b;
}

/* Adds a * b to *acc; returns 0 when the result would exceed ATTN__MAX_ELEMS. */
static int attn__extent_add(size_t *acc, size_t a, size_t b)
{
    size_t t = attn__mul_lim(a, b, ATTN__MAX_ELEMS);
    if (t > ATTN__MAX_ELEMS || *acc > ATTN__MAX_ELEMS - t) return 0;
    *acc += t;
    return 1;
}

/* rows x n matrix with leading dimension ld */
static attn_status attn__check_mat(size_t rows, size_t n, size_t ld)
{
    size_t ext = n;
    if (rows == 0 || n == 0) return ATTN_ERR_SIZE;
    if (ld < n) return ATTN_ERR_LD;
    if (n > ATTN__MAX_ELEMS || !attn__extent_add(&ext, rows - 1, ld)) return ATTN_ERR_OVERFLOW;
    return ATTN_OK;
}

static int attn__finite(float v) { return v == v && v - v == 0.0f; }

/* ---- vector helpers written once over the layer ---------------------------------------- */

/* The exp: e^x = 2^(k/8) e^r, k = round(8 x / ln2), r = x - k ln2/8 (Cody-Waite, two
 * constants, the first of 13 bits: k ln2/8 and r exact even without a fused fma), |r| <= ln2/16. 2^(k/8) =
 * 2^(j/8) 2^m (k = 8m + j) comes from an 8-entry table by a per-ISA lookup
 * (attn__vlut8_scale: vpermd, tbl, an index) that also adds m to the exponent bits, and
 * e^r = 1 + p(r), p(r) = r (c1 + c2 r + c3 r^2) (minimax for the relative error over
 * |r| <= 0.0434: 2.5e-8), so e^x = fma(s, p, s). The table entries are 2^(j/8) as float
 * bits minus j << 20, so that adding bits(z) << 20, z = 8x/ln2 + 1.5 * 2^23 (the rounding
 * shifter, whose low 12 bits are zero), adds m << 23. Max error 1.4 ulp measured over
 * every float (tests/test_exp.c). No special case costs anything in the common case:
 * for |x| <= ATTN__EXP_FAST (2^m is normal, the result at least FLT_MIN and finite) the
 * fast path is exact as written, and a NaN flows through it (r is NaN, so is fma(s, p, s));
 * a vector with a lane outside takes attn__vexp_slow. */
static const int32_t attn__exp2_8[8] = {1065353216, 1065063874, 1064843248, 1064697559,
                                        1064633587, 1064658730, 1064781053, 1065009351};
#define ATTN__EXP_FAST 87.3f

/* e^(hi + lo), lo tiny relative to 1 (it carries the rounding error of hi; has_lo = 0:
 * none). half: the scale is 2^(j/8) 2^(m-1) where hi > 0, the result doubled, so that
 * arguments up to the overflow threshold (m = 128) stay finite (the slow path's). */
static ATTN__FORCE_INLINE attn__v attn__vexp_core(attn__v hi, attn__v lo, int has_lo, int half)
{
    const attn__v shifter = attn__vset1(12582912.0f); /* 1.5 * 2^23: round to nearest */
    attn__v z = attn__vfma(hi, attn__vset1(11.54156017303466796875f), shifter); /* 8/ln2 */
    attn__v k = attn__vsub(z, shifter), r, p, sc, res;
    r = attn__vfma(k, attn__vset1(-0.086639404296875f), hi); /* 13 bits: exact, fma or not */
    r = attn__vfma(k, attn__vset1(-3.993272912339307e-06f), r);
    if (has_lo) r = attn__vadd(r, lo);
    p = attn__vfma(attn__vset1(1.666429103e-01f), r, attn__vset1(5.000650357e-01f));
    p = attn__vfma(p, r, attn__vset1(1.000000049e+00f));
    p = attn__vmul(p, r);
    if (half) {
        const attn__vm pos = attn__vgt(hi, attn__vzero());
        z = attn__vsub(z, attn__vselect(pos, attn__vset1(8.0f), attn__vzero()));
        sc = attn__vlut8_scale(attn__exp2_8, z);
        res = attn__vfma(sc, p, sc);
        return attn__vmul(res, attn__vselect(pos, attn__vset1(2.0f), attn__vset1(1.0f)));
    }
    sc = attn__vlut8_scale(attn__exp2_8, z);
    return attn__vfma(sc, p, sc);
}

/* Any lane of |hi| (NaN aside) beyond the fast path's range? */
static inline int attn__vexp_out(attn__v hi)
{
    return attn__vany_neg(attn__vsub(attn__vset1(ATTN__EXP_FAST), attn__vfabs(hi)));
}

/* Every lane, out of range included: hi above the overflow threshold gives +inf, below
 * ln(FLT_MIN) 0, a NaN NaN. With flush, results below FLT_MIN (the few arguments just
 * above ln(FLT_MIN) whose result rounds under it) are 0; without, the caller flushes. */
static attn__v attn__vexp_slow(attn__v hi, attn__v lo, int has_lo, int flush)
{
    attn__v res = attn__vexp_core(hi, lo, has_lo, 1);
    if (flush) res = attn__vselect(attn__vlt(res, attn__vset1(FLT_MIN)), attn__vzero(), res);
    res = attn__vselect(attn__vlt(hi, attn__vset1(-87.33654475f)), attn__vzero(), res);
    /* the largest x with e^x < FLT_MAX */
    return attn__vselect(attn__vgt(hi, attn__vset1(88.72283172607421875f)), attn__vset1(INFINITY), res);
}

/* exp(hi + lo) for |lo| tiny relative to 1 (lo carries the rounding error of hi), with
 * the special cases above; flush as for attn__vexp_slow (the fast path's results are all
 * at least FLT_MIN). */
static inline attn__v attn__vexp_lo(attn__v hi, attn__v lo, int flush)
{
    if (!attn__vexp_out(hi)) return attn__vexp_core(hi, lo, 1, 0);
    return attn__vexp_slow(hi, lo, 1, flush);
}

#ifdef ATTN_USE_SLEEF
/* SLEEF's 1-ulp exp for the ISA, then the library's guarantee: below FLT_MIN is 0 */
static inline attn__v attn__vexp_sleef(attn__v x)
{
#if ATTN__VW == 8
    attn__v r = Sleef_expf8_u10avx2(x);
#else
    attn__v r = Sleef_expf4_u10advsimd(x);
#endif
    return attn__vselect(attn__vlt(r, attn__vset1(FLT_MIN)), attn__vzero(), r);
}
#endif

static inline attn__v attn__vexp(attn__v x)
{
#ifdef ATTN_USE_SLEEF
    return attn__vexp_sleef(x);
#else
    if (!attn__vexp_out(x)) return attn__vexp_core(x, x, 0, 0);
    return attn__vexp_slow(x, x, 0, 1);
#endif
}

static float attn__expf(float x)
{
    float t[ATTN__VW];
    attn__vstore(t, attn__vexp(attn__vset1(x)));
    return t[0];
}

/* ---- softmax ------------------------------------------------------------------------- */

/* Rows whose extreme (max x for s >= 0, min x for s < 0) is not finite: all -inf after
 * scaling -> zeros; entries that are +inf after scaling share 1; any NaN -> NaN. Rare,
 * so scalar. */
static void attn__softmax_special(const float *x, float *y, size_t n, float s)
{
    size_t i, count = 0;
    int has_nan = 0;
    for (i = 0; i < n; i++) {
        if (x[i] != x[i] || (s == 0 && isinf(x[i]))) has_nan = 1; /* 0 * inf */
        if (isinf(x[i]) && x[i] * s > 0) count++;
    }
    for (i = 0; i < n; i++)
        y[i] = has_nan ? NAN : (count && isinf(x[i]) && x[i] * s > 0) ? 1.0f / (float)count : 0.0f;
}

/* The argument of softmax's exp, carried as hi + lo (lo: the rounding error of hi), in
 * one of two frames; softmax promises 1e-6 relative error at any input magnitude.
 * Shifted (any row): s (x - xm), xm the row's extreme (max x for s >= 0, min x for s < 0),
 * hi <= 0 (or NaN); x - xm is split exactly (2Sum), then scaled (the product's error by
 * fma). Unshifted (rows where sm = s xm is in [0, 80 - ln n]): s x itself, since
 * e^(s x) / sum e^(s x) is the same softmax; no subtraction, lo only for the product (none
 * for s = 1); every e^(s x) <= e^sm and their sum stay far from overflow, and an
 * e^(s x) that underflows (s x < ln FLT_MIN) has e^(s x - sm) < FLT_MIN too, so the
 * results are those of the shifted frame. Every product here has a non-additive use as
 * well, so a compiler contracting a*b+c into fma (-ffp-contract=fast) cannot fold it away. */
static ATTN__FORCE_INLINE void attn__softmax_arg(attn__v x, attn__v s, attn__v xm, int scaled,
                                                 int shifted, attn__v *hi_out, attn__v *lo_out)
{
    attn__v hi = x, lo = x;
    if (shifted) {
        attn__v bb;
        hi = attn__vsub(x, xm);
        bb = attn__vsub(hi, x);
        lo = attn__vsub(attn__vsub(x, attn__vsub(hi, bb)), attn__vadd(xm, bb));
        if (scaled) {
            attn__v h = attn__vmul(hi, s);
            lo = attn__vfma(lo, s, attn__vfma_exact(hi, s, attn__vsub(attn__vzero(), h)));
            hi = h;
        }
    } else if (scaled) {
        hi = attn__vmul(x, s);
        lo = attn__vfma_exact(x, s, attn__vsub(attn__vzero(), hi));
    }
    *hi_out = hi;
    *lo_out = lo;
}

/* e^(hi + lo) for softmax, any argument: below FLT_MIN not flushed (softmax flushes after
 * normalizing). With SLEEF: e^(hi+lo) = e^hi (1 + lo) to far below an ulp, as |lo| <=
 * ulp(hi) / 2. */
static ATTN__FORCE_INLINE attn__v attn__softmax_exp_any(attn__v hi, attn__v lo, int has_lo)
{
#ifdef ATTN_USE_SLEEF
    const attn__v tiny = attn__vset1(FLT_MIN);
    attn__v e0 = attn__vexp_sleef(hi), e = has_lo ? attn__vfma(e0, lo, e0) : e0;
    return attn__vselect(attn__vlt(e0, tiny), attn__vzero(), e); /* hi = -inf: lo is NaN */
#else
    return attn__vexp_slow(hi, lo, has_lo, 0);
#endif
}

/* k vectors of softmax's exps e^(hi + lo) from x into y, every argument allowed: the slow
 * path, out of line so that the fast loop keeps its registers. */
static void attn__softmax_slow(const float *x, float *y, size_t k, attn__v vs, attn__v vm,
                               int scaled, int shifted)
{
    size_t j;
    for (j = 0; j < k; j++) {
        attn__v hi, lo;
        attn__softmax_arg(attn__vload(x + j * ATTN__VW), vs, vm, scaled, shifted, &hi, &lo);
        attn__vstore(y + j * ATTN__VW, attn__softmax_exp_any(hi, lo, scaled || shifted));
    }
}

/* the lanes' maximum / minimum of four vectors */
static ATTN__FORCE_INLINE attn__v attn__vmax4(attn__v a, attn__v b, attn__v c, attn__v d)
{
    return attn__vmax(attn__vmax(a, b), attn__vmax(c, d));
}
static ATTN__FORCE_INLINE attn__v attn__vmin4(attn__v a, attn__v b, attn__v c, attn__v d)
{
    return attn__vmin(attn__vmin(a, b), attn__vmin(c, d));
}

/* max (want_max) or min of x[0..n) */
static float attn__row_extreme(const float *x, size_t n, int want_max)
{
    const float fill = want_max ? -INFINITY : INFINITY;
    attn__v m0 = attn__vset1(fill), m1 = m0, m2 = m0, m3 = m0;
    size_t i = 0;
    if (want_max) {
        for (; i + 4 * ATTN__VW <= n; i += 4 * ATTN__VW) {
            m0 = attn__vmax(m0, attn__vload(x + i));
            m1 = attn__vmax(m1, attn__vload(x + i + ATTN__VW));
            m2 = attn__vmax(m2, attn__vload(x + i + 2 * ATTN__VW));
            m3 = attn__vmax(m3, attn__vload(x + i + 3 * ATTN__VW));
        }
        for (; i + ATTN__VW <= n; i += ATTN__VW) m0 = attn__vmax(m0, attn__vload(x + i));
        if (i < n) m1 = attn__vmax(m1, attn__vload_part(x + i, n - i, fill));
        return attn__vhmax(attn__vmax4(m0, m1, m2, m3));
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW) m0 = attn__vmin(m0, attn__vload(x + i));
    if (i < n) m0 = attn__vmin(m0, attn__vload_part(x + i, n - i, fill));
    return attn__vhmin(m0);
}

/* The streaming path's previous row (attn__softmax_rows_stream): its exps wait in the
 * scratch e; each step of the current row's exp pass, from its entry lag on, first
 * normalizes the previous row's next entries (from j) into y by non-temporal stores, with
 * attn__softmax_normalize's operations. lag = 0 when the current row's exps overwrite e
 * (j is then a step ahead of their stores); with the rows' exps in two halves of the
 * scratch, taken in turn, lag gives the previous row's 1 / sum the time of a few steps
 * (the division waits on the row's last exps; the next row's steps waited on it). y's
 * entries before the first aligned one (the head) go first (attn__softmax_prev_begin),
 * the rest of the row once a step would pass its end or at the current row's end
 * (attn__softmax_prev_finish). n = 0: no previous row. */
typedef struct {
    attn__v inv; /* 1 / sum */
    const float *e;
    float *y;
    size_t j, n;
    size_t lag; /* entries of the current row's pass before the previous row's steps */
    int flush;
} attn__softmax_prev;

/* The previous row's entries j..j+t (t < ATTN__VW) by a normal store */
static ATTN__FORCE_INLINE void attn__softmax_prev_part(attn__softmax_prev *p, size_t t)
{
    const attn__v v = attn__vmul(attn__vload_part(p->e + p->j, t, 0.0f), p->inv);
    attn__vstore_part(p->y + p->j, attn__vselect(attn__vlt(v, attn__vset1(FLT_MIN)), attn__vzero(), v), t);
    p->j += t;
}

/* the head; then y + j is aligned */
static ATTN__FORCE_INLINE void attn__softmax_prev_begin(attn__softmax_prev *p)
{
    size_t head = (ATTN__VW - ((uintptr_t)p->y / sizeof(float)) % ATTN__VW) % ATTN__VW;
    p->j = 0;
    if (head > p->n) head = p->n;
    if (head) attn__softmax_prev_part(p, head);
}

/* the rest of the row from an aligned j */
static ATTN__FORCE_INLINE void attn__softmax_prev_finish(attn__softmax_prev *p)
{
    const attn__v tiny = attn__vset1(FLT_MIN), zero = attn__vzero();
    for (; p->j + ATTN__VW <= p->n; p->j += ATTN__VW) {
        const attn__v v = attn__vmul(attn__vload(p->e + p->j), p->inv);
        attn__vstream(p->y + p->j, attn__vselect(attn__vlt(v, tiny), zero, v));
    }
    if (p->j < p->n) attn__softmax_prev_part(p, p->n - p->j);
}

/* k vectors of the previous row ahead of a step of k vectors of the exp pass */
static ATTN__FORCE_INLINE void attn__softmax_prev_step(attn__softmax_prev *p, size_t k)
{
    size_t q;
    if (p->j + k * ATTN__VW <= p->n) {
        const float *const e = p->e + p->j;
        float *const y = p->y + p->j;
        if (!p->flush) {
            ATTN__UNROLL
            for (q = 0; q < k; q++)
                attn__vstream(y + q * ATTN__VW, attn__vmul(attn__vload(e + q * ATTN__VW), p->inv));
        } else {
            const attn__v tiny = attn__vset1(FLT_MIN), zero = attn__vzero();
            ATTN__UNROLL
            for (q = 0; q < k; q++) {
                const attn__v v = attn__vmul(attn__vload(e + q * ATTN__VW), p->inv);
                attn__vstream(y + q * ATTN__VW, attn__vselect(attn__vlt(v, tiny), zero, v));
            }
        }
        p->j += k * ATTN__VW;
    } else {
        attn__softmax_prev_finish(p);
    }
}

#define ATTN__SUM_BLOCK (64 * ATTN__VW) /* blocked summation: error grows with n/block + block */

/* The exp pass of one row of softmax in a frame (see attn__softmax_arg): e into y with a
 * blocked sum (*sum_out; *flush_out for attn__softmax_normalize); four vectors at a time take the fast exp (attn__vexp_core, no select) when every hi
 * is at least thr, the frame's largest argument - 87 + ln n: then every e, divided by the
 * row sum (at most n times the largest), is at least FLT_MIN and the normalizing pass
 * flushes nothing; else the slow path (any argument), and the normalizing pass flushes
 * results below FLT_MIN. A NaN takes either path: both give NaN. pv (or NULL): the
 * streaming path's previous row, whose exps in y this row's overwrite (see
 * attn__softmax_prev). */
static ATTN__FORCE_INLINE void attn__softmax_body(const float *x, float *y, size_t n, float m,
                                                  attn__v vs, attn__v vm, attn__v thr,
                                                  int scaled, int shifted, const float *xn,
                                                  float *yn, attn__softmax_prev *pv,
                                                  float *sum_out, int *flush_out, attn__v *hx,
                                                  attn__v *hn)
{
    const int has_lo = scaled || shifted;
    attn__v total = attn__vzero();
    size_t i, tail;
    int flush = 0;
#ifdef ATTN_USE_SLEEF
    flush = 1;
    (void)thr;
#endif
    for (i = 0; i < n;) {
        size_t end = n - i > ATTN__SUM_BLOCK ? i + ATTN__SUM_BLOCK : n;
        attn__v a0 = attn__vzero(), a1 = a0, h0, h1, h2, h3, l0, l1, l2, l3;
        for (; i + 4 * ATTN__VW <= end; i += 4 * ATTN__VW) {
            /* x before the previous row's part (pv): far out of the caches, 1.05-1.06x */
            const attn__v x0 = attn__vload(x + i), x1 = attn__vload(x + i + ATTN__VW);
            const attn__v x2 = attn__vload(x + i + 2 * ATTN__VW), x3 = attn__vload(x + i + 3 * ATTN__VW);
            if (xn) {
                ATTN__PREFETCH(xn + i);
                ATTN__PREFETCH(xn + i + 4 * ATTN__VW - 1);
            }
            if (yn) {
                ATTN__PREFETCHW(yn + i);
                ATTN__PREFETCHW(yn + i + 4 * ATTN__VW - 1);
            }
            if (pv && i >= pv->lag) attn__softmax_prev_step(pv, 4);
            attn__softmax_arg(x0, vs, vm, scaled, shifted, &h0, &l0);
            attn__softmax_arg(x1, vs, vm, scaled, shifted, &h1, &l1);
            attn__softmax_arg(x2, vs, vm, scaled, shifted, &h2, &l2);
            attn__softmax_arg(x3, vs, vm, scaled, shifted, &h3, &l3);
            if (hx) { /* unscaled, the min is the test's below */
                *hx = attn__vmax(*hx, attn__vmax4(x0, x1, x2, x3));
                *hn = attn__vmin(*hn, attn__vmin4(x0, x1, x2, x3));
            }
#ifndef ATTN_USE_SLEEF
            /* every h at least thr: their minimum is (a NaN, which the minimum may pass
             * over, gives NaN on either path) */
            if (!attn__vany_neg(attn__vsub(attn__vmin4(h0, h1, h2, h3), thr))) {
                h0 = attn__vexp_core(h0, l0, has_lo, 0);
                h1 = attn__vexp_core(h1, l1, has_lo, 0);
                h2 = attn__vexp_core(h2, l2, has_lo, 0);
                h3 = attn__vexp_core(h3, l3, has_lo, 0);
                attn__vstore(y + i, h0);
                attn__vstore(y + i + ATTN__VW, h1);
                attn__vstore(y + i + 2 * ATTN__VW, h2);
                attn__vstore(y + i + 3 * ATTN__VW, h3);
            } else
#endif
            {
                attn__softmax_slow(x + i, y + i, 4, vs, vm, scaled, shifted);
                flush = 1;
                h0 = attn__vload(y + i);
                h1 = attn__vload(y + i + ATTN__VW);
                h2 = attn__vload(y + i + 2 * ATTN__VW);
                h3 = attn__vload(y + i + 3 * ATTN__VW);
            }
            /* two accumulators, not four: with the exp's nine constants, four spilled */
            a0 = attn__vadd(a0, attn__vadd(h0, h1));
            a1 = attn__vadd(a1, attn__vadd(h2, h3));
        }
        for (; i + ATTN__VW <= end; i += ATTN__VW) {
            const attn__v x0 = attn__vload(x + i);
            if (pv && i >= pv->lag) attn__softmax_prev_step(pv, 1);
            attn__softmax_arg(x0, vs, vm, scaled, shifted, &h0, &l0);
            if (hx) {
                *hx = attn__vmax(*hx, x0);
                *hn = attn__vmin(*hn, x0);
            }
#ifndef ATTN_USE_SLEEF
            if (!attn__vany_neg(attn__vsub(h0, thr))) {
                h0 = attn__vexp_core(h0, l0, has_lo, 0);
            } else
#endif
            {
                h0 = attn__softmax_exp_any(h0, l0, has_lo);
                flush = 1;
            }
            attn__vstore(y + i, h0);
            a0 = attn__vadd(a0, h0);
        }
        if (i < end) { /* only at the row's end: end == n; the padding lanes are x = m */
            tail = end - i;
            if (pv) attn__softmax_prev_finish(pv);
            attn__softmax_arg(attn__vload_part(x + i, tail, m), vs, vm, scaled, shifted, &h0, &l0);
            if (hx) { /* padding: x[i], changing neither */
                const attn__v w = attn__vload_part(x + i, tail, x[i]);
                *hx = attn__vmax(*hx, w);
                *hn = attn__vmin(*hn, w);
            }
            attn__vstore_part(y + i, attn__softmax_exp_any(h0, l0, has_lo), tail);
            flush = 1;
            a1 = attn__vadd(a1, attn__vload_part(y + i, tail, 0.0f));
            i = end;
        }
        total = attn__vadd(total, attn__vadd(a0, a1));
    }
    if (pv) attn__softmax_prev_finish(pv);
    *sum_out = attn__vhsum(total);
    *flush_out = flush;
}

/* Softmax's normalizing pass in place: y = y / sum, flushing results below FLT_MIN when
 * flush (the streaming path's is attn__softmax_prev_step / _finish, with these operations) */
static ATTN__FORCE_INLINE void attn__softmax_normalize(float *y, size_t n, float sum, int flush)
{
    const attn__v inv = attn__vset1(1.0f / sum), tiny = attn__vset1(FLT_MIN), zero = attn__vzero();
    size_t i = 0;
    if (!flush) {
        for (; i + 4 * ATTN__VW <= n; i += 4 * ATTN__VW) {
            const attn__v v0 = attn__vmul(attn__vload(y + i), inv);
            const attn__v v1 = attn__vmul(attn__vload(y + i + ATTN__VW), inv);
            const attn__v v2 = attn__vmul(attn__vload(y + i + 2 * ATTN__VW), inv);
            const attn__v v3 = attn__vmul(attn__vload(y + i + 3 * ATTN__VW), inv);
            attn__vstore(y + i, v0);
            attn__vstore(y + i + ATTN__VW, v1);
            attn__vstore(y + i + 2 * ATTN__VW, v2);
            attn__vstore(y + i + 3 * ATTN__VW, v3);
        }
        for (; i + ATTN__VW <= n; i += ATTN__VW)
            attn__vstore(y + i, attn__vmul(attn__vload(y + i), inv));
    } else {
        for (; i + ATTN__VW <= n; i += ATTN__VW) {
            attn__v v = attn__vmul(attn__vload(y + i), inv);
            attn__vstore(y + i, attn__vselect(attn__vlt(v, tiny), zero, v));
        }
    }
    if (i < n) {
        attn__v v = attn__vmul(attn__vload_part(y + i, n - i, 0.0f), inv);
        attn__vstore_part(y + i, attn__vselect(attn__vlt(v, tiny), zero, v), n - i);
    }
}

/* The frame of a row whose extreme m (see attn__row_extreme) is finite: 1 shifted, 0
 * unshifted (see attn__softmax_arg; n = 1 is shifted, which gives exactly 1); *thr: the
 * least argument the fast exp takes (see attn__softmax_body). */
static ATTN__FORCE_INLINE int attn__softmax_frame(float m, float s, float lnn, size_t n, float *thr)
{
    const float sm = s * m;
    if (sm >= 0.0f && sm <= 80.0f - lnn && n > 1) {
        *thr = sm - 87.0f + lnn;
        return 0;
    }
    *thr = -87.0f + lnn;
    return 1;
}

/* One row's extreme m (see attn__row_extreme) to its exps in e (y, or a scratch): *sum and
 * *flush for attn__softmax_normalize; 0 when the row was special (its results written to
 * y). lnn: ln n (computed once per call); xn, yn: what to prefetch (or NULL); pv: see
 * attn__softmax_body (finished here when the row is special). */
static ATTN__FORCE_INLINE int attn__softmax_row_exps(const float *x, float *y, float *e,
                                                     size_t n, float s,
                                                     float lnn, float m, const float *xn,
                                                     float *yn, attn__softmax_prev *pv,
                                                     float *sum, int *flush)
{
    const attn__v vs = attn__vset1(s);
    float t;
    if (!attn__finite(m)) {
        if (pv) attn__softmax_prev_finish(pv);
        attn__softmax_special(x, y, n, s);
        return 0;
    }
    if (!attn__softmax_frame(m, s, lnn, n, &t)) {
        const attn__v thr = attn__vset1(t);
        if (s == 1.0f) attn__softmax_body(x, e, n, m, vs, vs, thr, 0, 0, xn, yn, pv, sum, flush, NULL, NULL);
        else attn__softmax_body(x, e, n, m, vs, vs, thr, 1, 0, xn, yn, pv, sum, flush, NULL, NULL);
    } else {
        const attn__v thr = attn__vset1(t), vm = attn__vset1(m);
        if (s == 1.0f) attn__softmax_body(x, e, n, m, vs, vm, thr, 0, 1, xn, yn, pv, sum, flush, NULL, NULL);
        else attn__softmax_body(x, e, n, m, vs, vm, thr, 1, 1, xn, yn, pv, sum, flush, NULL, NULL);
    }
    return 1;
}

static ATTN__FORCE_INLINE void attn__softmax_row(const float *x, float *y, size_t n, float s, float lnn, const float *xn, float *yn)
{
    /* the max of s*x is at the max of x for s >= 0, at the min of x for s < 0 */
    float sum;
    int flush;
    if (attn__softmax_row_exps(x, y, y, n, s, lnn, attn__row_extreme(x, n, s >= 0), xn, yn, NULL,
                               &sum, &flush))
        attn__softmax_normalize(y, n, sum, flush);
}

/* rows up to ATTN__SM_BATCHED long are batched, up to ATTN__SM_BATCHED_FAR when the call is
 * far out of the caches (measured on Zen 4: n = 256 batched 1.1x in cache, 0.7x far) */
#define ATTN__SM_BATCHED 512
#define ATTN__SM_BATCHED_FAR 128
#define ATTN__SM_BATCH 8 /* attn__softmax_short reduces a batch by attn__vhred8: 8 */

/* Rows in batches of ATTN__SM_BATCH: every row's extreme, then every row's exps and sum
 * (in y), then every row's normalizing pass, so that the reductions' latencies (horizontal
 * max and sum, the division), which bind short rows, overlap other rows' work. Each row's
 * operations are those of attn__softmax_row: its bits do not depend on the other rows or
 * the path. Out of line: inlined into attn_softmax, it slowed the in-cache softmax
 * 1.2-1.8x at n = 64..4096 (gcc 12, Zen 4). */
static ATTN__NOINLINE void attn__softmax_rows_batched(const float *x, size_t ldx, float *y,
                                                      size_t ldy, size_t rows, size_t n, float s,
                                                      float lnn)
{
    size_t r0;
    for (r0 = 0; r0 < rows; r0 += ATTN__SM_BATCH) {
        const size_t nb = rows - r0 < ATTN__SM_BATCH ? rows - r0 : ATTN__SM_BATCH;
        float m[ATTN__SM_BATCH], sum[ATTN__SM_BATCH];
        int flush[ATTN__SM_BATCH], live[ATTN__SM_BATCH];
        size_t k;
        for (k = 0; k < nb; k++) m[k] = attn__row_extreme(x + (r0 + k) * ldx, n, s >= 0);
        for (k = 0; k < nb; k++)
            live[k] = attn__softmax_row_exps(x + (r0 + k) * ldx, y + (r0 + k) * ldy,
                                             y + (r0 + k) * ldy, n, s, lnn, m[k], NULL, NULL,
                                             NULL, sum + k, flush + k);
        for (k = 0; k < nb; k++) /* a special row (!live) has its results in y already */
            if (live[k]) attn__softmax_normalize(y + (r0 + k) * ldy, n, sum[k], flush[k]);
    }
}

#ifndef ATTN__SM_FAR
#define ATTN__SM_FAR ((size_t)32 << 20) /* bytes of input beyond which the call is far out of the caches */
#endif
#ifndef ATTN__SM_FAR_N
#define ATTN__SM_FAR_N 2048 /* shorter rows overlap without help */
#endif

/* Long rows far out of the caches: the next row of x (for reading) and of y (for writing)
 * are prefetched while this one is computed; else a long row's max pass waits on memory
 * with nothing to overlap it, and its exp pass's stores on their lines (measured 1.2x at
 * n = 4096 on Zen 4; shorter rows lost a little). */
static void attn__softmax_rows_far(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                                   size_t n, float s, float lnn)
{
    size_t r;
    for (r = 0; r < rows; r++) {
        const size_t rn = r + 1 < rows ? r + 1 : r;
        attn__softmax_row(x + r * ldx, y + r * ldy, n, s, lnn, x + rn * ldx, y + rn * ldy);
    }
}

#ifndef ATTN__SM_SCRATCH
#define ATTN__SM_SCRATCH 4096 /* floats of stack for the streaming path's exps (16 KiB) */
#endif

#ifndef ATTN__SM_LAG
#define ATTN__SM_LAG (8 * ATTN__VW) /* see attn__softmax_prev: two steps of four vectors */
#endif

#ifndef ATTN__SM_AHEAD
#define ATTN__SM_AHEAD 1024 /* floats: the streaming path prefetches x a row or more ahead,
                             * at least this far (n = 256: 1.02-1.04x against a row) */
#endif

#ifndef ATTN__SM_WAIT
#define ATTN__SM_WAIT 8 /* batches (attn__softmax_short) or rows (attn__softmax_rows_stream)
                         * without guessing the frame after a wrong guess */
#endif

/* Rows of up to ATTN__SM_SCRATCH far out of the caches, on ISAs with a non-temporal store,
 * pipelined: each row's exp pass into a scratch on the stack (in L1; rows of up to half of
 * it take its halves in turn), which in the same steps normalizes the previous row's exps
 * from the scratch into y by non-temporal stores (attn__softmax_prev) and prefetches x of
 * a later row (the next, or for short rows the one about 4 KiB ahead). The row's frame is
 * guessed as in attn__softmax_short: while rows keep unshifted frames, the exp pass comes
 * first and takes the row's extremes on the way (x read once; n = 1024 and 4096 1.05x on
 * Zen 4, n = 256 unchanged); else, and for ATTN__SM_WAIT rows after a wrong guess, the
 * row's extreme first (its x prefetched rows before), as the general path. y's lines are
 * written without being read first (8 bytes of memory traffic per element instead of 12),
 * and every step mixes the reads of memory, its writes and the exps' arithmetic, so that
 * they overlap: measured on Zen 4 against a batch of rows' exp passes, then their
 * normalizing passes, 1.03x at n = 256, 1.1x at n = 1024 and 4096 (0.90-1.0 of memcpy's
 * speed instead of 0.77-0.97); with a step's x loaded before the previous row's part and
 * the fast exp's test by a minimum, 0.93-0.95 at n = 256, 1.04-1.13 at 1024 and 4096; with
 * the halves and ATTN__SM_LAG, n = 128 0.68 -> 0.80-0.84, n = 256 0.90 -> 0.92 (same run).
 * Out of line, so that only these calls have the scratch on their stack. Each row's bits
 * are attn__softmax_row's. */
static ATTN__NOINLINE void attn__softmax_rows_stream(const float *x, size_t ldx, float *y,
                                                     size_t ldy, size_t rows, size_t n,
                                                     float s, float lnn)
{
    float raw[ATTN__SM_SCRATCH + ATTN__VW];
    float *const buf = raw + (ATTN__VW - ((uintptr_t)raw / sizeof(float)) % ATTN__VW) % ATTN__VW;
    const size_t half = (n + ATTN__VW - 1) / ATTN__VW * ATTN__VW;
    const int dbl = 2 * half <= ATTN__SM_SCRATCH;
    const size_t ahead = (ATTN__SM_AHEAD + n - 1) / n; /* rows */
    const attn__v vs = attn__vset1(s), thr_g = attn__vset1(-87.0f + lnn);
    attn__softmax_prev p;
    size_t r, wait = 0;
    int guess = 1; /* the row's exps first, in the unshifted frame (see attn__softmax_short) */
    p.inv = attn__vzero();
    p.e = buf;
    p.y = y;
    p.j = p.n = 0;
    p.lag = dbl ? ATTN__SM_LAG : 0;
    p.flush = 0;
    for (r = 0; r < rows; r++) {
        float *const e = dbl && r % 2 ? buf + half : buf;
        const float *const xr = x + r * ldx, *const xn = r + ahead < rows ? xr + ahead * ldx : NULL;
        float sum, m, t;
        int flush, ok = 0;
        attn__softmax_prev_begin(&p);
        if (guess) { /* the extremes on the way; then the row's frame must be unshifted (its
                      * exps those of attn__softmax_row_exps: the fast exp's results are the
                      * slow one's where both apply, and thr_g, the threshold for an
                      * extreme of 0, is at most the row's), its sum finite (no NaN, which
                      * the extremes may pass over), and the normalizing pass flushes
                      * where the row's threshold would have sent a block to the slow path */
            attn__v hx = attn__vset1(-INFINITY), hn = attn__vset1(INFINITY);
            float mo;
            if (s == 1.0f) attn__softmax_body(xr, e, n, 0.0f, vs, vs, thr_g, 0, 0, xn, NULL, &p, &sum, &flush, &hx, &hn);
            else attn__softmax_body(xr, e, n, 0.0f, vs, vs, thr_g, 1, 0, xn, NULL, &p, &sum, &flush, &hx, &hn);
            m = s >= 0 ? attn__vhmax(hx) : attn__vhmin(hn);
            mo = s >= 0 ? attn__vhmin(hn) : attn__vhmax(hx); /* the other extreme */
            ok = attn__finite(m) && !attn__softmax_frame(m, s, lnn, n, &t) && attn__finite(sum);
            if (ok && s * mo < t) flush = 1;
            if (!ok) wait = ATTN__SM_WAIT;
        }
        if (!ok) { /* extremes first; the previous row is out already if this one was guessed */
            m = attn__row_extreme(xr, n, s >= 0);
            if (!attn__softmax_row_exps(xr, y + r * ldy, e, n, s, lnn, m, xn, NULL,
                                        guess ? NULL : &p, &sum, &flush)) {
                p.n = 0;
                guess = 0;
                continue;
            }
        }
        if (wait) wait--;
        guess = wait == 0 && !attn__softmax_frame(m, s, lnn, n, &t);
        p.inv = attn__vset1(1.0f / sum);
        p.e = e;
        p.y = y + r * ldy; /* j: set by attn__softmax_prev_begin */
        p.n = n;
        p.flush = flush;
    }
    attn__softmax_prev_begin(&p);
    attn__softmax_prev_finish(&p);
    attn__vstream_fence();
}

#ifndef ATTN__SM_SHORT
#define ATTN__SM_SHORT 8 /* vectors: rows up to this long take attn__softmax_short */
#endif
#if ATTN__SM_SHORT < 1 || ATTN__SM_SHORT > 8
#error "ATTN__SM_SHORT: 1 to 8 vectors (attn__softmax_rows_short has a case for each)"
#endif
#ifndef ATTN__SM_SHORT_N
#define ATTN__SM_SHORT_N (ATTN__SM_SHORT * ATTN__VW) /* 0 turns it off (tests/test_paths.c) */
#endif

/* One row by the general path (the short kernel's fallback), out of line */
static ATTN__NOINLINE void attn__softmax_row_general(const float *x, float *y, size_t n, float s, float lnn)
{
    attn__softmax_row(x, y, n, s, lnn, NULL, NULL);
}

/* The sum of a row's exps ev[0..nv) in attn__softmax_body's order up to its horizontal
 * sum (left to attn__vhred8, in attn__vhsum's order), f of them whole
 * vectors (nv or nv - 1, a constant after inlining; else ev[nv - 1] is the partial one,
 * its padding lanes 0): blocks of four in pairs into a0 and a1, the rest one by one into
 * a0, the partial one into a1 (the body's adds to 0 left out: no bit changes, as no
 * exp is negative). */
static ATTN__FORCE_INLINE attn__v attn__softmax_short_sum(const attn__v *ev, size_t nv, size_t f)
{
    attn__v a0 = ev[0], a1 = a0;
    size_t j;
    int has0 = 0, has1 = 0;
    ATTN__UNROLL
    for (j = 0; j + 4 <= f; j += 4) {
        a0 = has0 ? attn__vadd(a0, attn__vadd(ev[j], ev[j + 1])) : attn__vadd(ev[j], ev[j + 1]);
        a1 = has1 ? attn__vadd(a1, attn__vadd(ev[j + 2], ev[j + 3])) : attn__vadd(ev[j + 2], ev[j + 3]);
        has0 = has1 = 1;
    }
    ATTN__UNROLL
    for (; j < f; j++) {
        a0 = has0 ? attn__vadd(a0, ev[j]) : ev[j];
        has0 = 1;
    }
    if (f < nv) {
        a1 = has1 ? attn__vadd(a1, ev[nv - 1]) : ev[nv - 1];
        has1 = 1;
    }
    return has0 && has1 ? attn__vadd(a0, a1) : has0 ? a0 : a1;
}

/* attn__softmax_short's exps of one row, x to e: nv vectors (a constant after inlining), the
 * last one of t lanes (1..ATTN__VW; its padding lanes x = m), in the frame given; returns
 * their sum but for its horizontal sum (attn__softmax_short_sum). keep: 1 in the last
 * vector's lanes, 0 past them. */
static ATTN__FORCE_INLINE attn__v attn__softmax_short_exps(const float *x, float *e, float m,
                                                         attn__v vs, attn__v vm, int scaled,
                                                         int shifted, size_t nv, size_t t,
                                                         attn__v keep, attn__v *hx, attn__v *hn)
{
    attn__v ev[ATTN__SM_SHORT], h, l;
    size_t j;
    ATTN__UNROLL
    for (j = 0; j < nv; j++) {
        const attn__v v = j + 1 < nv || t == ATTN__VW ? attn__vload(x + j * ATTN__VW)
                                                      : attn__vload_part(x + j * ATTN__VW, t, m);
        if (hx) { /* the row's extremes on the way (a partial vector's padding: x[0]) */
            const attn__v w = j + 1 < nv || t == ATTN__VW ? v : attn__vload_part(x + j * ATTN__VW, t, x[0]);
            *hx = j ? attn__vmax(*hx, w) : w;
            *hn = j ? attn__vmin(*hn, w) : w;
        }
        attn__softmax_arg(v, vs, vm, scaled, shifted, &h, &l);
#ifdef ATTN_USE_SLEEF
        ev[j] = attn__softmax_exp_any(h, l, scaled || shifted);
#else
        ev[j] = attn__vexp_core(h, l, scaled || shifted, 0);
#endif
        attn__vstore(e + j * ATTN__VW, ev[j]);
    }
    if (t == ATTN__VW) return attn__softmax_short_sum(ev, nv, nv);
    ev[nv - 1] = attn__vmul(ev[nv - 1], keep);
    return attn__softmax_short_sum(ev, nv, nv - 1);
}

/* attn__softmax_short's normalizing pass of one row: y = e * (1 / sum), nv vectors, the
 * last of t lanes; stream (a constant): by non-temporal stores, y aligned */
static ATTN__FORCE_INLINE void attn__softmax_short_out(const float *e, float *y, float inv1,
                                                       size_t nv, size_t t, int stream)
{
    const attn__v inv = attn__vset1(inv1);
    const size_t last = (nv - 1) * ATTN__VW;
    attn__v v;
    size_t j;
    ATTN__UNROLL
    for (j = 0; j < last; j += ATTN__VW) {
        v = attn__vmul(attn__vload(e + j), inv);
        if (stream) attn__vstream(y + j, v);
        else attn__vstore(y + j, v);
    }
    v = attn__vmul(attn__vload(e + last), inv);
    if (t < ATTN__VW) attn__vstore_part(y + last, v, t);
    else if (stream) attn__vstream(y + last, v);
    else attn__vstore(y + last, v);
}

/* attn__softmax_short_out with stream (a run-time flag) as a constant in each copy */
static ATTN__FORCE_INLINE void attn__softmax_short_put(const float *e, float *y, float inv1,
                                                       size_t nv, size_t t, int stream)
{
    if (stream) attn__softmax_short_out(e, y, inv1, nv, t, 1);
    else attn__softmax_short_out(e, y, inv1, nv, t, 0);
}

/* Short rows, held in registers: rows of nv vectors (nv <= ATTN__SM_SHORT, a constant after
 * inlining; the last one of t lanes), in batches of ATTN__SM_BATCH rows (as the general
 * batched path). Each row needs its max and min (a tree over its vectors), the batch's
 * horizontal maxima and minima come at once (attn__vhred8), its frames and tests a vector
 * of rows at a time; then every row's exps (into a stack array) and sum, the batch's
 * horizontal sums and 1/sum at once.
 * The frame is guessed: while the batch before was all in the unshifted frame, a batch's
 * exps come first, in that frame (which needs no max), with each row's max and min taken
 * on the way from the same loads; when its frames and tests then show a shifted row, the
 * batch's exps run again in its frames, and the kernel stops guessing for ATTN__SM_WAIT
 * batches and while batches keep shifted rows (extremes first, as the general path). Rows
 * of unshifted frames (positive logits) thus read x once; rows of mixed or negative maxima
 * pay the max pass as before, plus one exp pass per wrong guess.
 * The normalizing pass of a batch waits for the next: after each row's exps, the same row
 * of the batch before goes out (y = e * 1/sum, from the other half of a double scratch),
 * so that its loads, multiplies and stores fill the exp pass's idle ports and stores reach
 * memory all along; the last batch goes out at the end. (On Zen 4 at n = 64, against
 * separate passes with the max first: 1.2x in cache, and far out of the caches 4.6-4.9
 * elements/ns instead of 4.2-4.5, 0.93-1.0 of memcpy.)
 * One test per row (every lane of its other extreme, in the row's frame, at least the
 * frame's threshold) takes the fast exp for the whole row, where the general path tests
 * every four vectors. A batch with a row that fails it (a non-finite extreme, an argument
 * out of the fast range) or whose sum is not finite and positive (a NaN the max and min
 * trees passed over) goes to the general path, the pending batch first. Every other row's operations
 * are those of attn__softmax_row (frame, exps, summation order, 1/sum), so its bits are
 * too (tests/test_paths.c holds every length to it); the general path's flush changes
 * nothing here, as every result of a row that passed the test is at least FLT_MIN. Rows in
 * the shifted frame run its code with the scale (s = 1 scales by 1, which changes no bit);
 * so do the unshifted rows of a batch that has both, about 0 (x - 0 splits with a zero low
 * part, which changes no bit either). A short last batch repeats its last row (its
 * results unused), so that every batch is whole. In place, a batch's rows go out while the
 * next batch is read, after their own reads. stream: y by non-temporal stores (calls far
 * out of the caches; y and ldy aligned); x is left to the hardware prefetcher (prefetching
 * the next batch measured 5% slower on Zen 4 in this structure). */
static ATTN__FORCE_INLINE void attn__softmax_short(const float *x, size_t ldx, float *y,
                                                   size_t ldy, size_t rows, size_t n, float s,
                                                   float lnn, int stream, size_t nv)
{
    const size_t B = ATTN__SM_BATCH, t = n - (nv - 1) * ATTN__VW;
    const attn__v vs = attn__vset1(s), zero = attn__vzero(), one = attn__vset1(1.0f);
    const attn__v half = attn__vset1(0.5f), lim = attn__vset1(80.0f - lnn);
    const attn__v c87 = attn__vset1(87.0f), vlnn = attn__vset1(lnn), thr_sh = attn__vset1(-87.0f + lnn);
    const attn__v inf = attn__vset1(INFINITY), mone = attn__vset1(-1.0f);
    float e[2][ATTN__SM_BATCH][ATTN__SM_SHORT * ATTN__VW], ones[ATTN__VW], inv[2][ATTN__SM_BATCH];
    float *yp = y; /* the pending batch's y: its exps in e[1 - cur], 1/sum in inv[1 - cur] */
    size_t np = 0; /* its rows (0: none) */
    int cur = 0, guess = 1; /* the batch's exps first, in the unshifted frame */
    size_t wait = 0; /* batches left before guessing again, after a wrong guess */
    attn__v keep;
    size_t r0, k, j;
    for (j = 0; j < ATTN__VW; j++) ones[j] = 1.0f;
    keep = attn__vload_part(ones, t, 0.0f); /* 1 in the last vector's lanes of the row, else 0 */
    for (r0 = 0; r0 < rows; r0 += B) {
        const size_t nb = rows - r0 < B ? rows - r0 : B;
        const float *const xb = x + r0 * ldx;
        float *const yb = y + r0 * ldy;
        const float *xr[ATTN__SM_BATCH];
        float ext[2][ATTN__SM_BATCH], m[ATTN__SM_BATCH];
        attn__v hx[ATTN__SM_BATCH], hn[ATTN__SM_BATCH], acc[ATTN__SM_BATCH], bad = zero, sh = zero;
        float (*const ec)[ATTN__SM_SHORT * ATTN__VW] = e[cur], (*const ep)[ATTN__SM_SHORT * ATTN__VW] = e[1 - cur];
        const float *const ip = inv[1 - cur];
        int pend = np > 0, done;
/* the pending batch's row k out, after the current batch's row k's exps */
#define ATTN__SM_PEND(k) \
    if ((k) < np) attn__softmax_short_put(ep[k], yp + (k) * ldy, ip[k], nv, t, stream);
        for (k = 0; k < B; k++) xr[k] = xb + (k < nb ? k : nb - 1) * ldx;
        if (guess) { /* exps in the unshifted frame, extremes on the way */
            if (s == 1.0f)
                for (k = 0; k < B; k++) { acc[k] = attn__softmax_short_exps(xr[k], ec[k], 0.0f, vs, vs, 0, 0, nv, t, keep, hx + k, hn + k); ATTN__SM_PEND(k) }
            else
                for (k = 0; k < B; k++) { acc[k] = attn__softmax_short_exps(xr[k], ec[k], 0.0f, vs, vs, 1, 0, nv, t, keep, hx + k, hn + k); ATTN__SM_PEND(k) }
            pend = 0;
        } else {
            for (k = 0; k < B; k++) { /* extremes as vectors */
                attn__v mx[ATTN__SM_SHORT], mn[ATTN__SM_SHORT];
                size_t w;
                ATTN__UNROLL
                for (j = 0; j < nv; j++) /* a partial vector's padding: x[0], changing neither */
                    mx[j] = mn[j] = j + 1 < nv || t == ATTN__VW ? attn__vload(xr[k] + j * ATTN__VW)
                                                                : attn__vload_part(xr[k] + j * ATTN__VW, t, xr[k][0]);
                ATTN__UNROLL
                for (w = 1; w < nv; w *= 2)
                    ATTN__UNROLL
                    for (j = 0; j + w < nv; j += 2 * w) {
                        mx[j] = attn__vmax(mx[j], mx[j + w]);
                        mn[j] = attn__vmin(mn[j], mn[j + w]);
                    }
                hx[k] = mx[0];
                hn[k] = mn[0];
            }
        }
        attn__vhred8(hx, ext[0], 1);
        attn__vhred8(hn, ext[1], 2);
        for (k = 0; k < B; k += ATTN__VW) { /* frames and tests (attn__softmax_frame's) */
            const attn__v mk = attn__vload(ext[s >= 0 ? 0 : 1] + k); /* the row's extreme */
            const attn__v sm = attn__vmul(vs, mk);
            /* u: 0 for the unshifted frame (0 <= sm <= 80 - ln n), 1 or NaN for the shifted */
            const attn__v u = n == 1 ? one : attn__vadd(attn__vselect(attn__vlt(sm, zero), one, attn__vselect(attn__vgt(sm, lim), one, zero)), attn__vsub(sm, sm));
            const attn__vm uns = attn__vlt(u, half);
            const attn__v mv = attn__vselect(uns, zero, mk);
            const attn__v thr = attn__vselect(uns, attn__vadd(attn__vsub(sm, c87), vlnn), thr_sh);
            /* every lane's least argument, at the other extreme (rounding is monotonic), at
             * least thr: d >= 0 and not NaN (a non-finite extreme gives a NaN or an
             * infinite d; masks, not NaNs' signs, which differ between ISAs); bad and sh:
             * -1 in a failing or shifted row's lane */
            attn__v least = attn__vsub(attn__vload(ext[s >= 0 ? 1 : 0] + k), mv), d;
            if (s != 1.0f) least = attn__vmul(least, vs);
            d = attn__vsub(least, thr);
            bad = attn__vor(bad, attn__vselect(attn__vlt(d, inf), attn__vselect(attn__vlt(d, zero), mone, zero), mone));
            sh = attn__vor(sh, attn__vselect(uns, zero, mone));
            attn__vstore(m + k, mv);
        }
        done = guess && !attn__vany_neg(sh);
        if (guess && (attn__vany_neg(bad) || attn__vany_neg(sh))) wait = ATTN__SM_WAIT;
        else if (wait) wait--;
        guess = wait == 0 && !attn__vany_neg(bad) && !attn__vany_neg(sh);
        if (!attn__vany_neg(bad) && !done) { /* exps and sums in the batch's frames: one loop
                                               * per frame, no branch inside but the pending
                                               * row's; the shifted frame's code with s = 1
                                               * scales by 1, which changes no bit */
            if (attn__vany_neg(sh))
                for (k = 0; k < B; k++) { acc[k] = attn__softmax_short_exps(xr[k], ec[k], m[k], vs, attn__vset1(m[k]), 1, 1, nv, t, keep, NULL, NULL); if (pend) { ATTN__SM_PEND(k) } }
            else if (s == 1.0f)
                for (k = 0; k < B; k++) { acc[k] = attn__softmax_short_exps(xr[k], ec[k], 0.0f, vs, vs, 0, 0, nv, t, keep, NULL, NULL); if (pend) { ATTN__SM_PEND(k) } }
            else
                for (k = 0; k < B; k++) { acc[k] = attn__softmax_short_exps(xr[k], ec[k], 0.0f, vs, vs, 1, 0, nv, t, keep, NULL, NULL); if (pend) { ATTN__SM_PEND(k) } }
            pend = 0;
        }
        if (!attn__vany_neg(bad)) {
            attn__vhred8(acc, inv[cur], 0);
            for (k = 0; k < B; k += ATTN__VW) { /* 1 / sum; a sum not finite and positive fails */
                const attn__v sv = attn__vload(inv[cur] + k);
                bad = attn__vor(bad, attn__vselect(attn__vlt(sv, inf), attn__vselect(attn__vgt(sv, zero), zero, mone), mone));
                attn__vstore(inv[cur] + k, attn__vdiv(one, sv));
            }
        }
        if (attn__vany_neg(bad)) {
            if (pend) /* the pending batch out before the general path */
                for (k = 0; k < B; k++) { ATTN__SM_PEND(k) }
            for (k = 0; k < nb; k++) attn__softmax_row_general(xb + k * ldx, yb + k * ldy, n, s, lnn);
            np = 0;
            guess = 0;
        } else {
            yp = yb;
            np = nb;
            cur = 1 - cur;
        }
    }
#undef ATTN__SM_PEND
    for (k = 0; k < np; k++) attn__softmax_short_put(e[1 - cur][k], yp + k * ldy, inv[1 - cur][k], nv, t, stream);
}

/* attn__softmax_short, one copy for each vector count */
static ATTN__NOINLINE void attn__softmax_rows_short(const float *x, size_t ldx, float *y,
                                                    size_t ldy, size_t rows, size_t n, float s,
                                                    float lnn, int stream)
{
    switch ((n + ATTN__VW - 1) / ATTN__VW) {
#define ATTN__SM_SHORT_CASE(v)                                                              \
    case v: attn__softmax_short(x, ldx, y, ldy, rows, n, s, lnn, stream, v); break;
    ATTN__SM_SHORT_CASE(1)
#if ATTN__SM_SHORT >= 2
    ATTN__SM_SHORT_CASE(2)
#endif
#if ATTN__SM_SHORT >= 3
    ATTN__SM_SHORT_CASE(3)
#endif
#if ATTN__SM_SHORT >= 4
    ATTN__SM_SHORT_CASE(4)
#endif
#if ATTN__SM_SHORT >= 5
    ATTN__SM_SHORT_CASE(5)
#endif
#if ATTN__SM_SHORT >= 6
    ATTN__SM_SHORT_CASE(6)
#endif
#if ATTN__SM_SHORT >= 7
    ATTN__SM_SHORT_CASE(7)
#endif
#if ATTN__SM_SHORT >= 8
    ATTN__SM_SHORT_CASE(8)
#endif
#undef ATTN__SM_SHORT_CASE
    default: break;
    }
    if (stream) attn__vstream_fence();
}

ATTN_API attn_status attn_softmax(const float *x, size_t ldx, float *y, size_t ldy,
                                  size_t rows, size_t n, float scale)
{
    attn_status st;
    float lnn;
    size_t r;
    int far;
    if (!x || !y) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(rows, n, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(rows, n, ldy)) != ATTN_OK) return st;
    if (!attn__finite(scale)) return ATTN_ERR_ARG;
    lnn = 1.0001f * logf((float)n); /* rounded up */
    far = rows * n + 1 > ATTN__SM_FAR / sizeof(float);
    if (n <= ATTN__SM_SHORT_N)
        attn__softmax_rows_short(x, ldx, y, ldy, rows, n, scale, lnn,
                                 far && ATTN__HAVE_VSTREAM && x != y &&
                                     (uintptr_t)y % (ATTN__VW * sizeof(float)) == 0 &&
                                     ldy % ATTN__VW == 0);
    else if (far && ATTN__HAVE_VSTREAM && n <= ATTN__SM_SCRATCH && x != y) /* in place: y's lines are read already */
        attn__softmax_rows_stream(x, ldx, y, ldy, rows, n, scale, lnn);
    else if (n <= (far ? ATTN__SM_BATCHED_FAR : ATTN__SM_BATCHED))
        attn__softmax_rows_batched(x, ldx, y, ldy, rows, n, scale, lnn);
    else if (n >= ATTN__SM_FAR_N && far)
        attn__softmax_rows_far(x, ldx, y, ldy, rows, n, scale, lnn);
    else
        for (r = 0; r < rows; r++) attn__softmax_row(x + r * ldx, y + r * ldy, n, scale, lnn, NULL, NULL);
    return ATTN_OK;
}

/* ---- layernorm, rmsnorm -------------------------------------------------------------- */

/* Sums of a row, vectorized with four accumulators and blocked so that the rounding
 * error grows with block + n/block terms, not n. mode 0: sum x; mode 1: sum (x-c) and
 * sum (x-c)^2 (into *s2); mode 2: sum x^2. */
static float attn__row_sums(const float *x, size_t n, int mode, float c, float *s2)
{
    const attn__v vc = attn__vset1(c);
    attn__v t1 = attn__vzero(), t2 = attn__vzero();
    size_t i = 0;
    while (i < n) {
        size_t end = n - i > ATTN__SUM_BLOCK ? i + ATTN__SUM_BLOCK : n;
        attn__v a0 = attn__vzero(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (; i + 4 * ATTN__VW <= end; i += 4 * ATTN__VW) { /* four chains hide the add latency */
            attn__v u0 = attn__vload(x + i), u1 = attn__vload(x + i + ATTN__VW);
            attn__v u2 = attn__vload(x + i + 2 * ATTN__VW), u3 = attn__vload(x + i + 3 * ATTN__VW);
            if (mode == 1) {
                u0 = attn__vsub(u0, vc);
                u1 = attn__vsub(u1, vc);
                u2 = attn__vsub(u2, vc);
                u3 = attn__vsub(u3, vc);
            }
            if (mode != 2) {
                a0 = attn__vadd(a0, u0);
                a1 = attn__vadd(a1, u1);
                a2 = attn__vadd(a2, u2);
                a3 = attn__vadd(a3, u3);
            }
            if (mode != 0) {
                b0 = attn__vfma(u0, u0, b0);
                b1 = attn__vfma(u1, u1, b1);
                b2 = attn__vfma(u2, u2, b2);
                b3 = attn__vfma(u3, u3, b3);
            }
        }
        for (; i < end; i += ATTN__VW) {
            size_t k = end - i;
            attn__v u0 = k >= ATTN__VW ? attn__vload(x + i) : attn__vload_part(x + i, k, mode == 1 ? c : 0.0f);
            if (mode == 1) u0 = attn__vsub(u0, vc);
            if (mode != 2) a0 = attn__vadd(a0, u0);
            if (mode != 0) b0 = attn__vfma(u0, u0, b0);
        }
        i = end;
        t1 = attn__vadd(t1, attn__vadd(attn__vadd(a0, a1), attn__vadd(a2, a3)));
        t2 = attn__vadd(t2, attn__vadd(attn__vadd(b0, b1), attn__vadd(b2, b3)));
    }
    if (s2) *s2 = attn__vhsum(t2);
    return attn__vhsum(t1);
}

/* The rare rows where float sums overflow, underflow or meet inf/NaN: in double. */
static void attn__norm_row_double(const float *x, float *y, size_t n, const float *g,
                                  const float *b, float eps, int rms, float *mean_out,
                                  float *rstd_out)
{
    double mean = 0, var = 0, rstd;
    size_t i;
    if (!rms) {
        for (i = 0; i < n; i++) mean += x[i];
        mean /= (double)n;
    }
    for (i = 0; i < n; i++) var += ((double)x[i] - mean) * ((double)x[i] - mean);
    var /= (double)n;
    rstd = 1.0 / sqrt(var + eps);
    for (i = 0; i < n; i++) {
        double v = ((double)x[i] - mean) * rstd;
        if (g) v *= g[i];
        if (b) v += b[i];
        y[i] = (float)v;
    }
    if (mean_out) *mean_out = (float)mean;
    if (rstd_out) *rstd_out = (float)rstd;
}

/* y = ((x - c) - d) * (rstd * g) + b over a row: c + d is the mean, kept as two floats
 * (x - c is exact for x near c); c = d = 0 and b = NULL for rmsnorm. One loop per case
 * (gamma, beta given or not, shifted or not), two vectors a step, the tail apart. */
static ATTN__FORCE_INLINE void attn__norm_apply_body(const float *x, float *y, size_t n, float c,
                                                     float d, float rstd, const float *g,
                                                     const float *b, int shift)
{
    const attn__v vc = attn__vset1(c), vd = attn__vset1(d), vr = attn__vset1(rstd);
    size_t i = 0;
#define ATTN__NORM_ONE(u, j)                                                                 \
    do {                                                                                     \
        attn__v sc_ = g ? attn__vmul(vr, attn__vload(g + (j))) : vr;                         \
        if (shift) u = attn__vsub(attn__vsub(u, vc), vd);                                    \
        u = b ? attn__vfma(u, sc_, attn__vload(b + (j))) : attn__vmul(u, sc_);               \
    } while (0)
    for (; i + 2 * ATTN__VW <= n; i += 2 * ATTN__VW) {
        attn__v u0 = attn__vload(x + i), u1 = attn__vload(x + i + ATTN__VW);
        ATTN__NORM_ONE(u0, i);
        ATTN__NORM_ONE(u1, i + ATTN__VW);
        attn__vstore(y + i, u0);
        attn__vstore(y + i + ATTN__VW, u1);
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v u0 = attn__vload(x + i);
        ATTN__NORM_ONE(u0, i);
        attn__vstore(y + i, u0);
    }
#undef ATTN__NORM_ONE
    if (i < n) {
        const size_t k = n - i;
        attn__v u = attn__vload_part(x + i, k, 0.0f), sc = vr, bias = attn__vzero();
        if (g) sc = attn__vmul(vr, attn__vload_part(g + i, k, 0.0f));
        if (b) bias = attn__vload_part(b + i, k, 0.0f);
        if (shift) u = attn__vsub(attn__vsub(u, vc), vd);
        attn__vstore_part(y + i, attn__vfma(u, sc, bias), k);
    }
}

static void attn__norm_apply(const float *x, float *y, size_t n, float c, float d, float rstd,
                             const float *g, const float *b)
{
    const int shift = c != 0.0f || d != 0.0f;
    if (g && b) {
        if (shift) attn__norm_apply_body(x, y, n, c, d, rstd, g, b, 1);
        else attn__norm_apply_body(x, y, n, c, d, rstd, g, b, 0);
    } else if (g) {
        if (shift) attn__norm_apply_body(x, y, n, c, d, rstd, g, NULL, 1);
        else attn__norm_apply_body(x, y, n, c, d, rstd, g, NULL, 0);
    } else if (b) {
        if (shift) attn__norm_apply_body(x, y, n, c, d, rstd, NULL, b, 1);
        else attn__norm_apply_body(x, y, n, c, d, rstd, NULL, b, 0);
    } else {
        if (shift) attn__norm_apply_body(x, y, n, c, d, rstd, NULL, NULL, 1);
        else attn__norm_apply_body(x, y, n, c, d, rstd, NULL, NULL, 0);
    }
}

static attn_status attn__norm_check(const float *x, size_t ldx, float *y, size_t ldy,
                                    size_t rows, size_t n, float eps)
{
    attn_status st;
    if (!x || !y) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(rows, n, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(rows, n, ldy)) != ATTN_OK) return st;
    if (!attn__finite(eps) || eps < 0) return ATTN_ERR_ARG;
    return ATTN_OK;
}

/* The mean of x[0..32), unrolled: (x0 + x1) + (x2 + x3) in vectors */
static float attn__norm_prefix_mean(const float *x)
{
    attn__v p0 = attn__vload(x), p1 = attn__vload(x + ATTN__VW);
    size_t i;
    for (i = 2 * ATTN__VW; i + 2 * ATTN__VW <= 32; i += 2 * ATTN__VW) {
        p0 = attn__vadd(p0, attn__vload(x + i));
        p1 = attn__vadd(p1, attn__vload(x + i + ATTN__VW));
    }
    return attn__vhsum(attn__vadd(p0, p1)) * (1.0f / 32.0f);
}

#define ATTN__NORM_BATCH 8 /* attn__vhred8 reduces 8 rows */
#define ATTN__NORM_BATCHED 512 /* longer rows: each row's output pass right after its sums */

/* Short rows (n <= ATTN__NORM_SHORT: one block of attn__row_sums), K = 1 or 2 rows
 * at once: the sums of layernorm (mode 1: c the mean of the first 32 elements, or of the
 * row when shorter, then sum (x-c) into tv, sum (x-c)^2 into sv) or rmsnorm (mode 2: sum x^2 into sv), left as vectors for attn__vhred8 to
 * reduce a batch's rows together; each row by the same operations in the same order, so a
 * row's bits do not depend on its partner; two rows interleaved overlap the latencies.
 * Longer rows: two rows' accumulators would not fit the registers (n = 256 lost 6-15% out
 * of cache on Zen 4). */
#define ATTN__NORM_SHORT (ATTN__SUM_BLOCK < 128 ? ATTN__SUM_BLOCK : 128)
static ATTN__FORCE_INLINE void attn__norm_sums_short(const float *x0, const float *x1, int K,
                                                     size_t n, int mode, float *c,
                                                     attn__v *tv, attn__v *sv)
{
    const float *xs[2];
    attn__v vc[2], a0[2], a1[2], a2[2], a3[2], b0[2], b1[2], b2[2], b3[2];
    size_t i;
    int k;
    xs[0] = x0;
    xs[1] = x1;
    for (k = 0; k < K; k++) {
        if (mode == 1) { /* the prefix mean, as attn_layernorm's general loop (each row's
                          * own loads first: out of cache, reading 8 rows' prefixes ahead
                          * of their sums halved the speed at n = 64) */
            c[k] = n >= 32 ? attn__norm_prefix_mean(xs[k]) : attn__row_sums(xs[k], n, 0, 0.0f, NULL) / (float)n;
        } else {
            c[k] = 0.0f;
        }
        vc[k] = attn__vset1(c[k]);
        a0[k] = a1[k] = a2[k] = a3[k] = b0[k] = b1[k] = b2[k] = b3[k] = attn__vzero();
    }
    for (i = 0; i + 4 * ATTN__VW <= n; i += 4 * ATTN__VW)
        for (k = 0; k < K; k++) {
            attn__v u0 = attn__vload(xs[k] + i), u1 = attn__vload(xs[k] + i + ATTN__VW);
            attn__v u2 = attn__vload(xs[k] + i + 2 * ATTN__VW), u3 = attn__vload(xs[k] + i + 3 * ATTN__VW);
            if (mode == 1) {
                u0 = attn__vsub(u0, vc[k]);
                u1 = attn__vsub(u1, vc[k]);
                u2 = attn__vsub(u2, vc[k]);
                u3 = attn__vsub(u3, vc[k]);
                a0[k] = attn__vadd(a0[k], u0);
                a1[k] = attn__vadd(a1[k], u1);
                a2[k] = attn__vadd(a2[k], u2);
                a3[k] = attn__vadd(a3[k], u3);
            }
            b0[k] = attn__vfma(u0, u0, b0[k]);
            b1[k] = attn__vfma(u1, u1, b1[k]);
            b2[k] = attn__vfma(u2, u2, b2[k]);
            b3[k] = attn__vfma(u3, u3, b3[k]);
        }
    for (; i < n; i += ATTN__VW)
        for (k = 0; k < K; k++) {
            const size_t m = n - i;
            attn__v u0 = m >= ATTN__VW ? attn__vload(xs[k] + i)
                                       : attn__vload_part(xs[k] + i, m, mode == 1 ? c[k] : 0.0f);
            if (mode == 1) {
                u0 = attn__vsub(u0, vc[k]);
                a0[k] = attn__vadd(a0[k], u0);
            }
            b0[k] = attn__vfma(u0, u0, b0[k]);
        }
    for (k = 0; k < K; k++) {
        if (mode == 1) tv[k] = attn__vadd(attn__vadd(a0[k], a1[k]), attn__vadd(a2[k], a3[k]));
        sv[k] = attn__vadd(attn__vadd(b0[k], b1[k]), attn__vadd(b2[k], b3[k]));
    }
}

/* A batch's short layernorm rows (x, x + ldx, ... nb <= 8 of them), their sums reduced
 * together: c[k] the prefix mean (of the first 32 elements, or of the row when shorter),
 * t[k] = sum (x-c), s2[k] = sum (x-c)^2; lanes k >= nb: 0. (Rmsnorm keeps one horizontal
 * sum a row: the tree measured 3-10% slower there at n = 64.) */
static ATTN__FORCE_INLINE void attn__norm_batch_sums(const float *x, size_t ldx, size_t nb,
                                                     size_t n, float *c, float *t, float *s2)
{
    const int mode = 1;
    attn__v tv[ATTN__NORM_BATCH], sv[ATTN__NORM_BATCH];
    size_t k;
    for (k = 0; k < ATTN__NORM_BATCH; k++) tv[k] = sv[k] = attn__vzero();
    for (k = nb; k < ATTN__NORM_BATCH; k++) c[k] = 0.0f;
    if (n <= ATTN__NORM_SHORT) { /* two rows interleaved */
        for (k = 0; k + 2 <= nb; k += 2)
            attn__norm_sums_short(x + k * ldx, x + (k + 1) * ldx, 2, n, mode, c + k, tv + k, sv + k);
        if (k < nb) attn__norm_sums_short(x + k * ldx, NULL, 1, n, mode, c + k, tv + k, sv + k);
    } else { /* up to one block of attn__row_sums: one row at a time */
        for (k = 0; k < nb; k++) attn__norm_sums_short(x + k * ldx, NULL, 1, n, mode, c + k, tv + k, sv + k);
    }
    attn__vhred8(tv, t, 0);
    attn__vhred8(sv, s2, 0);
}

/* The rest of one layernorm row from its sums around c: d = t / n the mean of x - c,
 * s2 the sum of squares of x - c. */
static void attn__layernorm_finish(const float *xr, float *yr, size_t n, float c, float t,
                                   float s2, const float *gamma, const float *beta, float eps,
                                   float *mean_out, float *rstd_out)
{
    float d = t / (float)n, var, rstd;
    if (d * d > 0.25f * (s2 / (float)n)) {
        c += d;
        d = attn__row_sums(xr, n, 1, c, &s2) / (float)n;
    }
    var = s2 / (float)n - d * d;
    if (!((c - c) + (s2 - s2) == 0.0f && s2 > 1e-30f)) { /* c, s2 not finite, or s2 tiny */
        attn__norm_row_double(xr, yr, n, gamma, beta, eps, 0, mean_out, rstd_out);
        return;
    }
    if (var < 0) var = 0;
    rstd = 1.0f / sqrtf(var + eps);
    if (mean_out) *mean_out = c + d;
    if (rstd_out) *rstd_out = rstd;
    attn__norm_apply(xr, yr, n, c, d, rstd, gamma, beta);
}

/* Layernorm of rows up to ATTN__NORM_BATCHED in batches of ATTN__NORM_BATCH:
 * first every row's sums (up to one summation block: attn__norm_batch_sums, the 8 rows'
 * horizontal sums in one tree; longer: attn__row_sums), then every row's scale in one
 * vector pass (lanes are rows: one square root and division for the batch), then every
 * row's output pass: the reductions' latencies, which bind short rows, overlap the other
 * rows' work instead of stalling the output pass. Each lane's arithmetic is that of one
 * row alone (a partial batch's missing rows are zeros), so a row's bits do not depend on
 * the other rows. Rows needing the second pass (d^2 > var / 4) or the double path go
 * through attn__layernorm_finish. */
static ATTN__FORCE_INLINE void attn__layernorm_short_body(const float *x, size_t ldx, float *y,
                                                          size_t ldy, size_t rows, size_t n,
                                                          const float *g, const float *b,
                                                          float eps, float *mean_out,
                                                          float *rstd_out)
{
    size_t r0;
    for (r0 = 0; r0 < rows; r0 += ATTN__NORM_BATCH) {
        const size_t nb = rows - r0 < ATTN__NORM_BATCH ? rows - r0 : ATTN__NORM_BATCH;
        float c[ATTN__NORM_BATCH], t[ATTN__NORM_BATCH], s2[ATTN__NORM_BATCH], d[ATTN__NORM_BATCH];
        float rs[ATTN__NORM_BATCH];
        size_t k;
        if (n <= ATTN__SUM_BLOCK) {
            attn__norm_batch_sums(x + r0 * ldx, ldx, nb, n, c, t, s2);
        } else {
            for (k = 0; k < ATTN__NORM_BATCH; k++) c[k] = t[k] = s2[k] = 0.0f;
            for (k = 0; k < nb; k++) {
                c[k] = attn__norm_prefix_mean(x + (r0 + k) * ldx);
                t[k] = attn__row_sums(x + (r0 + k) * ldx, n, 1, c[k], s2 + k);
            }
        }
        for (k = 0; k < ATTN__NORM_BATCH; k += ATTN__VW) { /* every row's scale at once */
            const attn__v vn = attn__vset1((float)n), m1 = attn__vset1(-1.0f);
            const attn__v inf = attn__vset1(INFINITY), vs = attn__vload(s2 + k);
            const attn__v vdk = attn__vdiv(attn__vload(t + k), vn), sn = attn__vdiv(vs, vn);
            const attn__v dd = attn__vmul(vdk, vdk);
            const attn__v var = attn__vmax(attn__vsub(sn, dd), attn__vzero());
            attn__v r = attn__vdiv(attn__vset1(1.0f), attn__vsqrt(attn__vadd(var, attn__vset1(eps))));
            /* the general path (rs = -1): c far from the mean (d^2 > var / 4), c or s2 not
             * finite, s2 tiny */
            r = attn__vselect(attn__vgt(dd, attn__vmul(attn__vset1(0.25f), sn)), m1, r);
            r = attn__vselect(attn__vgt(vs, attn__vset1(1e-30f)), r, m1);
            r = attn__vselect(attn__vlt(vs, inf), r, m1);
            r = attn__vselect(attn__vlt(attn__vfabs(attn__vload(c + k)), inf), r, m1);
            attn__vstore(d + k, vdk);
            attn__vstore(rs + k, r);
        }
        for (k = 0; k < nb; k++) {
            const size_t r = r0 + k;
            const float *xr = x + r * ldx;
            float *yr = y + r * ldy;
            if (rs[k] < 0) {
                attn__layernorm_finish(xr, yr, n, c[k], t[k], s2[k], g, b, eps,
                                       mean_out ? mean_out + r : NULL, rstd_out ? rstd_out + r : NULL);
                continue;
            }
            if (mean_out) mean_out[r] = c[k] + d[k];
            if (rstd_out) rstd_out[r] = rs[k];
            attn__norm_apply_body(xr, yr, n, c[k], d[k], rs[k], g, b, 1);
        }
    }
}

static void attn__layernorm_short(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                                  size_t n, const float *g, const float *b, float eps,
                                  float *mean_out, float *rstd_out)
{
    if (g && b) attn__layernorm_short_body(x, ldx, y, ldy, rows, n, g, b, eps, mean_out, rstd_out);
    else if (g) attn__layernorm_short_body(x, ldx, y, ldy, rows, n, g, NULL, eps, mean_out, rstd_out);
    else if (b) attn__layernorm_short_body(x, ldx, y, ldy, rows, n, NULL, b, eps, mean_out, rstd_out);
    else attn__layernorm_short_body(x, ldx, y, ldy, rows, n, NULL, NULL, eps, mean_out, rstd_out);
}

ATTN_API attn_status attn_layernorm(const float *x, size_t ldx, float *y, size_t ldy,
                                    size_t rows, size_t n, const float *gamma,
                                    const float *beta, float eps, float *mean_out,
                                    float *rstd_out)
{
    attn_status st = attn__norm_check(x, ldx, y, ldy, rows, n, eps);
    size_t r = 0;
    if (st != ATTN_OK) return st;
    /* Shifted sums: the mean d and the sum of squares s2 of x - c, with c the mean of the
     * first (up to) 32 elements. x - c is exact or nearly so for x near c, so rows whose
     * mean is far larger than their spread lose nothing, in one pass. When c turns out
     * far from the mean (d^2 > var / 4, where s2/n - d^2 starts to cancel), the sums are
     * redone around c + d. */
    if (n <= ATTN__NORM_BATCHED) {
        attn__layernorm_short(x, ldx, y, ldy, rows, n, gamma, beta, eps, mean_out, rstd_out);
        return ATTN_OK;
    }
    for (; r < rows; r++) {
        const float *xr = x + r * ldx;
        float c, s2, t;
        c = attn__norm_prefix_mean(xr); /* n > ATTN__NORM_BATCHED >= 32 here */
        t = attn__row_sums(xr, n, 1, c, &s2);
        attn__layernorm_finish(xr, y + r * ldy, n, c, t, s2, gamma, beta, eps,
                               mean_out ? mean_out + r : NULL, rstd_out ? rstd_out + r : NULL);
    }
    return ATTN_OK;
}

static void attn__rmsnorm_finish(const float *xr, float *yr, size_t n, float s2,
                                 const float *gamma, float eps)
{
    if (!attn__finite(s2) || !(s2 > 1e-30f)) {
        attn__norm_row_double(xr, yr, n, gamma, NULL, eps, 1, NULL, NULL);
        return;
    }
    attn__norm_apply(xr, yr, n, 0.0f, 0.0f, 1.0f / sqrtf(s2 / (float)n + eps), gamma, NULL);
}

/* Rmsnorm of rows up to ATTN__NORM_BATCHED, batched as layernorm (attn__layernorm_short_body):
 * every row's sum of squares and scale, then every row's output pass; each row's
 * operations those of attn__rmsnorm_finish. */
static ATTN__FORCE_INLINE void attn__rmsnorm_short_body(const float *x, size_t ldx, float *y,
                                                        size_t ldy, size_t rows, size_t n,
                                                        const float *g, float eps)
{
    size_t r0;
    for (r0 = 0; r0 < rows; r0 += ATTN__NORM_BATCH) {
        const size_t nb = rows - r0 < ATTN__NORM_BATCH ? rows - r0 : ATTN__NORM_BATCH;
        float c[ATTN__NORM_BATCH], s2[ATTN__NORM_BATCH], rs[ATTN__NORM_BATCH];
        size_t k;
        if (n <= ATTN__NORM_SHORT) {
            attn__v tv[2], sv[2];
            for (k = 0; k + 2 <= nb; k += 2) {
                attn__norm_sums_short(x + (r0 + k) * ldx, x + (r0 + k + 1) * ldx, 2, n, 2, c + k, tv, sv);
                s2[k] = attn__vhsum(sv[0]);
                s2[k + 1] = attn__vhsum(sv[1]);
            }
            if (k < nb) {
                attn__norm_sums_short(x + (r0 + k) * ldx, NULL, 1, n, 2, c + k, tv, sv);
                s2[k] = attn__vhsum(sv[0]);
            }
        } else {
            for (k = 0; k < nb; k++) attn__row_sums(x + (r0 + k) * ldx, n, 2, 0.0f, s2 + k);
        }
        for (k = 0; k < nb; k++)
            rs[k] = attn__finite(s2[k]) && s2[k] > 1e-30f ? 1.0f / sqrtf(s2[k] / (float)n + eps)
                                                          : -1.0f; /* the double path */
        for (k = 0; k < nb; k++) {
            const float *xr = x + (r0 + k) * ldx;
            float *yr = y + (r0 + k) * ldy;
            if (rs[k] < 0 || n > ATTN__NORM_SHORT) {
                attn__rmsnorm_finish(xr, yr, n, s2[k], g, eps);
                continue;
            }
            attn__norm_apply_body(xr, yr, n, 0.0f, 0.0f, rs[k], g, NULL, 0);
        }
    }
}

static void attn__rmsnorm_short(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                                size_t n, const float *g, float eps)
{
    if (g) attn__rmsnorm_short_body(x, ldx, y, ldy, rows, n, g, eps);
    else attn__rmsnorm_short_body(x, ldx, y, ldy, rows, n, NULL, eps);
}

ATTN_API attn_status attn_rmsnorm(const float *x, size_t ldx, float *y, size_t ldy,
                                  size_t rows, size_t n, const float *gamma, float eps)
{
    attn_status st = attn__norm_check(x, ldx, y, ldy, rows, n, eps);
    size_t r = 0;
    if (st != ATTN_OK) return st;
    if (n <= ATTN__NORM_BATCHED) {
        attn__rmsnorm_short(x, ldx, y, ldy, rows, n, gamma, eps);
        return ATTN_OK;
    }
    for (; r < rows; r++) {
        const float *xr = x + r * ldx;
        float s2;
        attn__row_sums(xr, n, 2, 0.0f, &s2);
        attn__rmsnorm_finish(xr, y + r * ldy, n, s2, gamma, eps);
    }
    return ATTN_OK;
}

/* ---- residual add, positional encoding ----------------------------------------------- */

ATTN_API attn_status attn_add(float *y, size_t ldy, const float *x, size_t ldx,
                              size_t rows, size_t n)
{
    attn_status st;
    size_t r, i;
    if (!x || !y) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(rows, n, ldy)) != ATTN_OK) return st;
    if ((st = attn__check_mat(rows, n, ldx)) != ATTN_OK) return st;
    for (r = 0; r < rows; r++) {
        float *yr = y + r * ldy;
        const float *xr = x + r * ldx;
        for (i = 0; i + ATTN__VW <= n; i += ATTN__VW)
            attn__vstore(yr + i, attn__vadd(attn__vload(yr + i), attn__vload(xr + i)));
        if (i < n)
            attn__vstore_part(yr + i, attn__vadd(attn__vload_part(yr + i, n - i, 0.0f),
                                                 attn__vload_part(xr + i, n - i, 0.0f)), n - i);
    }
    return ATTN_OK;
}

ATTN_API attn_status attn_positional_encoding(float *pe, size_t ldpe, size_t rows, size_t d,
                                              size_t pos0, int add)
{
    attn_status st;
    size_t r, i;
    if (!pe) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(rows, d, ldpe)) != ATTN_OK) return st;
    for (r = 0; r < rows; r++) {
        double pos = (double)pos0 + (double)r;
        float *row = pe + r * ldpe;
        for (i = 0; i < d; i++) {
            double a = pos / pow(10000.0, (double)(i & ~(size_t)1) / (double)d);
            double v = (i & 1) ? cos(a) : sin(a);
            row[i] = add ? (float)((double)row[i] + v) : (float)v;
        }
    }
    return ATTN_OK;
}

/* ---- matmul -------------------------------------------------------------------------- */
/*
 * BLIS's structure: loops jc (NC columns of C) / pc (KC-deep slices of k) / ic (MC rows)
 * around a register-blocked microkernel attn__mm_ukr_body (MR x NR, in the ISA file; the
 * generic one below serves the scalar path). op(B)'s KC x NC panel is packed into NR-column
 * slivers and op(A)'s MC x KC block into MR-row slivers, zero padded, so the microkernel
 * streams contiguous memory whatever the transposes; edge tiles are computed whole into a
 * register-sized buffer and only their valid part is merged into C.
 *
 * Summation order: k is cut into chunks of attn__mm_kc(k) (a function of k alone); in each
 * chunk every C element is one fma chain over p in order, starting from 0, and the chunks
 * are merged in order: C = alpha * acc0 (+ beta * C), then C = fma(alpha, acc_q, C). Every
 * path below (packed, A read in place, no workspace, edge tiles) follows exactly that
 * order, so C's bits do not depend on m, n, the tile position, the workspace or on how C
 * is split into blocks.
 */
#ifndef ATTN__MR
/* the generic microkernel over the vector layer: a 4 x (4 * ATTN__VW) tile */
#define ATTN__MR 4
#define ATTN__NR (4 * ATTN__VW)
static ATTN__FORCE_INLINE void attn__mm_ukr_body(size_t rows, size_t kc, const float *a,
                                                 size_t ars, size_t acs, const float *b,
                                                 size_t ldb, float *c, size_t ldc, float alpha,
                                                 float beta, int mode)
{
    attn__v acc[ATTN__MR][4];
    const attn__v va = attn__vset1(alpha), vb = attn__vset1(beta);
    size_t i, v, p;
    (void)rows; /* all ATTN__MR rows are computed and written */
    for (i = 0; i < ATTN__MR; i++)
        for (v = 0; v < 4; v++) acc[i][v] = attn__vzero();
    for (p = 0; p < kc; p++, a += acs, b += ldb) {
        const attn__v b0 = attn__vload(b), b1 = attn__vload(b + ATTN__VW);
        const attn__v b2 = attn__vload(b + 2 * ATTN__VW), b3 = attn__vload(b + 3 * ATTN__VW);
        for (i = 0; i < ATTN__MR; i++) {
            const attn__v t = attn__vset1(a[i * ars]);
            acc[i][0] = attn__vfma(t, b0, acc[i][0]);
            acc[i][1] = attn__vfma(t, b1, acc[i][1]);
            acc[i][2] = attn__vfma(t, b2, acc[i][2]);
            acc[i][3] = attn__vfma(t, b3, acc[i][3]);
        }
    }
    for (i = 0; i < ATTN__MR; i++)
        for (v = 0; v < 4; v++) {
            float *cp = c + i * ldc + v * ATTN__VW;
            if (mode == 0) attn__vstore(cp, acc[i][v]);
            else if (mode == 2) attn__vstore(cp, attn__vfma(va, acc[i][v], attn__vload(cp)));
            else if (beta != 0.0f)
                attn__vstore(cp, attn__vfma(vb, attn__vload(cp), attn__vmul(va, acc[i][v])));
            else attn__vstore(cp, attn__vmul(va, acc[i][v]));
        }
}
#endif

#ifndef ATTN__MM_MC
#define ATTN__MM_MC (24 * ATTN__MR) /* rows of op(A) per packed block (L2) */
#endif
#ifndef ATTN__MM_KC
#define ATTN__MM_KC 256 /* depth of a chunk: an NR-column B sliver is KC * NR floats (L1) */
#endif
#ifndef ATTN__MM_NC
#define ATTN__MM_NC (255 * ATTN__NR) /* columns of op(B) per packed panel (L3) */
#endif
/* NN products with n at most this read A in place, one MR-row sliver at a time against the
 * whole packed B panel (KC x n, kept in L2): no copy of A, whose elements are used only
 * n / NR times each */
#ifndef ATTN__MM_DIRECT_N
#define ATTN__MM_DIRECT_N (32 * ATTN__NR)
#endif

static size_t attn__round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }
static size_t attn__min(size_t a, size_t b) { return a < b ? a : b; }

/* Floats of A or C past which software prefetching pays (twice the L2 of common cores) */
#ifndef ATTN__MM_FAR
#define ATTN__MM_FAR (512 * 1024)
#endif
/* Floats of packed op(B) small enough to pack whole (for NN products with n <= DIRECT_N):
 * the panel stays in L2 and each A sliver streams through all of k */
#ifndef ATTN__MM_WHOLE_B
#define ATTN__MM_WHOLE_B (128 * 1024)
#endif

/* The chunk depth for a given k: k split into ceil(k / KC) near-equal chunks. Depends on
 * k alone (never on m or n): it fixes every C element's summation order. */
static size_t attn__mm_kc(size_t k)
{
    size_t chunks = (k + ATTN__MM_KC - 1) / ATTN__MM_KC;
    return chunks ? (k + chunks - 1) / chunks : 0;
}

/* Microkernel over packed slivers (compile-time strides) and over matrices in place. */
static void attn__mm_ukr_packed(size_t kc, const float *a, const float *b, float *c,
                                size_t ldc, float alpha, float beta, int mode)
{
    attn__mm_ukr_body(ATTN__MR, kc, a, 1, ATTN__MR, b, ATTN__NR, c, ldc, alpha, beta, mode);
}
static void attn__mm_ukr_strided(size_t kc, const float *a, size_t ars, size_t acs,
                                 const float *b, size_t ldb, float *c, size_t ldc, float alpha,
                                 float beta, int mode)
{
    attn__mm_ukr_body(ATTN__MR, kc, a, ars, acs, b, ldb, c, ldc, alpha, beta, mode);
}
/* Raw accumulators of the first mr rows of a tile into t (row length ATTN__NR): where the
 * ISA's kernel honours its rows argument, a kernel of exactly mr rows (same fma chains,
 * fewer of them; A's rows past mr are never read); otherwise all ATTN__MR rows. */
#ifdef ATTN__MM_ROW_VARIANTS
#define ATTN__MM_ROWS_CASES(ARS, ACS, LDB)                                                  \
    switch (mr) {                                                                           \
    case 1: attn__mm_ukr_body(1, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    case 2: attn__mm_ukr_body(2, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    case 3: attn__mm_ukr_body(3, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    case 4: attn__mm_ukr_body(4, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    case 5: attn__mm_ukr_body(5, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    default: attn__mm_ukr_body(ATTN__MR, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); \
    }
#else
#define ATTN__MM_ROWS_CASES(ARS, ACS, LDB)                                                  \
    attn__mm_ukr_body(ATTN__MR, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0);       \
    (void)mr;
#endif
static void attn__mm_ukr_packed_rows(size_t mr, size_t kc, const float *a, const float *b,
                                     float *t)
{
    ATTN__MM_ROWS_CASES(1, ATTN__MR, ATTN__NR)
}
static void attn__mm_ukr_strided_rows(size_t mr, size_t kc, const float *a, size_t ars,
                                      size_t acs, const float *b, size_t ldb, float *t)
{
    ATTN__MM_ROWS_CASES(ars, acs, ldb)
}
#undef ATTN__MM_ROWS_CASES

/* Merges the mr x nr corner of a raw accumulator tile t (row length ATTN__NR) into C by the
 * microkernel's rule for mode 1 or 2: the same operations, lane for lane. */
static void attn__mm_merge(float *c, size_t ldc, const float *t, size_t mr, size_t nr,
                           float alpha, float beta, int mode)
{
    const attn__v va = attn__vset1(alpha), vb = attn__vset1(beta);
    size_t i, j;
    for (i = 0; i < mr; i++, c += ldc, t += ATTN__NR)
        for (j = 0; j < nr; j += ATTN__VW) {
            const size_t w = attn__min(ATTN__VW, nr - j);
            const attn__v acc = attn__vload(t + j);
            attn__v r;
            if (mode == 2) {
                r = attn__vfma(va, acc, w == ATTN__VW ? attn__vload(c + j)
                                                      : attn__vload_part(c + j, w, 0.0f));
            } else {
                r = attn__vmul(va, acc);
                if (beta != 0.0f)
                    r = attn__vfma(vb, w == ATTN__VW ? attn__vload(c + j)
                                                     : attn__vload_part(c + j, w, 0.0f), r);
            }
            if (w == ATTN__VW) attn__vstore(c + j, r);
            else attn__vstore_part(c + j, r, w);
        }
}

/* The general tile (no workspace: B^T, and edge tiles, read in place): raw accumulators of
 * an mr x nr tile into t (ATTN__MR x ATTN__NR, row length ATTN__NR), in the microkernel's
 * order. A(i, p) = a[i * ars + p * acs]; B(p, j) = b[p * ldb + j], or b[j * ldb + p] when
 * tb (transposed ATTN__VW steps at a time through a small buffer). Never reads outside the
 * mr x kc and kc x nr operands (rows past mr repeat the last one and are never stored). */
static void attn__mm_tile_any(size_t mr, size_t nr, size_t kc, const float *a, size_t ars,
                              size_t acs, const float *b, size_t ldb, int tb, float *t)
{
    attn__v acc[ATTN__MR][ATTN__NR / ATTN__VW];
    const float *ar[ATTN__MR];
    float blk[ATTN__VW * ATTN__NR];
    size_t i, p, q, j, v;
    for (i = 0; i < ATTN__MR; i++) {
        ar[i] = a + (i < mr ? i : mr - 1) * ars;
        for (v = 0; v < ATTN__NR / ATTN__VW; v++) acc[i][v] = attn__vzero();
    }
    for (p = 0; p < kc;) {
        const float *bp = blk; /* steps p .. p + steps of op(B), rows bs apart */
        size_t steps = 1, bs = ATTN__NR;
        if (tb) {
            steps = attn__min(ATTN__VW, kc - p);
            if (steps == ATTN__VW) {
                for (v = 0; v < ATTN__NR; v += ATTN__VW)
                    attn__vtranspose_copy(b + v * ldb + p, ldb, nr > v ? nr - v : 0, blk + v, ATTN__NR);
            } else {
                for (q = 0; q < steps; q++)
                    for (j = 0; j < ATTN__NR; j++) blk[q * ATTN__NR + j] = j < nr ? b[j * ldb + p + q] : 0.0f;
            }
        } else if (nr == ATTN__NR) {
            bp = b + p * ldb;
            bs = ldb;
            steps = kc - p;
        } else {
            for (j = 0; j < ATTN__NR; j++) blk[j] = j < nr ? b[p * ldb + j] : 0.0f;
        }
        for (q = 0; q < steps; q++, p++, bp += bs)
            for (i = 0; i < ATTN__MR; i++) {
                const attn__v av = attn__vset1(ar[i][p * acs]);
                for (v = 0; v < ATTN__NR / ATTN__VW; v++)
                    acc[i][v] = attn__vfma(av, attn__vload(bp + v * ATTN__VW), acc[i][v]);
            }
    }
    for (i = 0; i < ATTN__MR; i++)
        for (v = 0; v < ATTN__NR / ATTN__VW; v++) attn__vstore(t + i * ATTN__NR + v * ATTN__VW, acc[i][v]);
}

/* Requests rows r0 .. r1 (stride ld) of kc floats each: the next sliver while one packs
 * (short row pieces the hardware prefetcher does not pick up in time). */
static void attn__mm_prefetch_rows(const float *x, size_t ld, size_t rows, size_t kc)
{
    size_t r, l;
    for (r = 0; r < rows; r++)
        for (l = 0; l < kc; l += 16) ATTN__PREFETCH(x + r * ld + l);
}

/* Packs `rows` rows of a row-major matrix (stride ld, kc floats each) transposed into
 * slivers of w rows: sliver s holds element (s*w + i, p) at dst[s * w * kc + p * w + i];
 * rows past `rows` are zero. With far (the matrix far out of cache), the next sliver's rows
 * are prefetched while one packs. Where w is not a multiple of ATTN__VW, the transposing
 * copy writes up to ATTN__VW floats past a sliver's last row (see attn__mm_pack_a). */
static void attn__mm_pack_t(const float *src, size_t ld, size_t rows, size_t kc, size_t w,
                            int far, float *dst)
{
    size_t s, g, p, i;
    for (s = 0; s < rows; s += w, dst += w * kc) {
        const size_t r = attn__min(w, rows - s);
        const float *sp = src + s * ld;
        if (far && s + w < rows) attn__mm_prefetch_rows(sp + w * ld, ld, attn__min(w, rows - s - w), kc);
        for (g = 0; g < w; g += ATTN__VW) {
            const float *sg = r > g ? sp + g * ld : sp; /* no rows left: zeros, nothing read */
            for (p = 0; p + ATTN__VW <= kc; p += ATTN__VW)
                attn__vtranspose_copy(sg + p, ld, r > g ? r - g : 0, dst + p * w + g, w);
            for (; p < kc; p++)
                for (i = 0; i < ATTN__VW && g + i < w; i++)
                    dst[p * w + g + i] = g + i < r ? sg[i * ld + p] : 0.0f;
        }
    }
}

/* Packs op(A)[i0 .. i0+mc, p0 .. p0+kc) into MR-row slivers: sliver s holds element
 * (s*MR + i, p) at pa[s * MR * kc + p * MR + i]; rows past mc hold zeros or other rows of
 * op(A) (m rows in all), and feed only results that are never stored. Stores whole vectors
 * where MR is not a multiple of ATTN__VW: up to ATTN__VW floats past a sliver's last row are
 * written and later overwritten (or, from the transposes, land in the ATTN__VW floats of
 * slack after the A area).
 * A is read row after row of its storage (in order for A^T; for A, sliver after sliver). */
static void attn__mm_pack_a(int ta, const float *a, size_t lda, size_t m, size_t i0,
                            size_t mc, size_t p0, size_t kc, float *pa)
{
    size_t s, p, g;
    if (ta) { /* A stored k x m: row p of the storage holds op(A)'s column p */
        for (p = 0; p < kc; p++) {
            const float *src = a + (p0 + p) * lda + i0;
            float *dst = pa + p * ATTN__MR;
            for (s = 0; s < mc; s += ATTN__MR, dst += ATTN__MR * kc) {
                const size_t mr = attn__min(ATTN__MR, mc - s);
                for (g = 0; g < ATTN__MR; g += ATTN__VW) {
                    attn__v x = attn__vzero();
                    if (i0 + s + g + ATTN__VW <= m) x = attn__vload(src + s + g); /* lanes past mr: unused rows */
                    else if (g < mr) x = attn__vload_part(src + s + g, mr - g, 0.0f);
                    if (g + ATTN__VW > ATTN__MR && p + 1 == kc) /* not into the next sliver */
                        attn__vstore_part(dst + g, x, ATTN__MR - g);
                    else
                        attn__vstore(dst + g, x);
                }
            }
        }
        return;
    }
    /* A stored m x k: transposes */
    attn__mm_pack_t(a + i0 * lda + p0, lda, mc, kc, ATTN__MR, m * lda > ATTN__MM_FAR, pa);
}

/* Packs op(B)[p0 .. p0+kc, j0 .. j0+nc) into NR-column slivers: sliver s holds element
 * (p, s*NR + j) at pb[s * NR * kc + p * NR + j]; columns past nc are zero. B is read row
 * after row of its storage (in order for B; for B^T, sliver after sliver). */
static void attn__mm_pack_b(int tb, const float *b, size_t ldb, size_t p0, size_t kc,
                            size_t j0, size_t nc, float *pb)
{
    size_t s, p, v;
    if (!tb) { /* B stored k x n: row p of the storage holds op(B)'s row p */
        for (p = 0; p < kc; p++) {
            const float *src = b + (p0 + p) * ldb + j0;
            float *dst = pb + p * ATTN__NR;
            for (s = 0; s + ATTN__NR <= nc; s += ATTN__NR, dst += ATTN__NR * kc)
                for (v = 0; v < ATTN__NR; v += ATTN__VW) attn__vstore(dst + v, attn__vload(src + s + v));
            if (s < nc) {
                const size_t nr = nc - s;
                for (v = 0; v < ATTN__NR; v += ATTN__VW) {
                    attn__v x = attn__vzero();
                    if (v + ATTN__VW <= nr) x = attn__vload(src + s + v);
                    else if (v < nr) x = attn__vload_part(src + s + v, nr - v, 0.0f);
                    attn__vstore(dst + v, x);
                }
            }
        }
        return;
    }
    /* B stored n x k: transposes */
    attn__mm_pack_t(b + j0 * ldb + p0, ldb, nc, kc, ATTN__NR, nc * ldb > ATTN__MM_FAR, pb);
}

/* One MR x NR tile of C (mr x nr valid) through the microkernel: whole tiles straight into
 * C, edge tiles into a buffer first. A(i, p) = a[i * ars + p * acs] (all MR rows readable
 * unless ATTN__MM_ROW_VARIANTS),
 * B(p, j) = b[p * ldb + j] (all NR columns readable); packed slivers have ars = 1,
 * acs = MR, ldb = NR. pfc: request the tile's lines of C first (C far out of cache). */
static ATTN__FORCE_INLINE void attn__mm_tile(size_t mr, size_t nr, size_t kc, const float *a,
                                             size_t ars, size_t acs, const float *b, size_t ldb,
                                             float *c, size_t ldc, float alpha, float beta,
                                             int mode, int pfc)
{
    const int packed = ars == 1 && acs == ATTN__MR && ldb == ATTN__NR;
    if (pfc) { /* C far out of cache: its lines arrive while the tile computes */
        size_t i;
        for (i = 0; i < mr; i++) {
            ATTN__PREFETCH(c + i * ldc);
            ATTN__PREFETCH(c + i * ldc + nr - 1);
        }
    }
    if (mr == ATTN__MR && nr == ATTN__NR) {
        if (packed) attn__mm_ukr_packed(kc, a, b, c, ldc, alpha, beta, mode);
        else attn__mm_ukr_strided(kc, a, ars, acs, b, ldb, c, ldc, alpha, beta, mode);
    } else {
        float t[ATTN__MR * ATTN__NR];
        if (packed) attn__mm_ukr_packed_rows(mr, kc, a, b, t);
        else attn__mm_ukr_strided_rows(mr, kc, a, ars, acs, b, ldb, t);
        attn__mm_merge(c, ldc, t, mr, nr, alpha, beta, mode);
    }
}

/* Without a workspace: A and B read in place, tile by tile. */
static void attn__mm_nopack(int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                            const float *a, size_t lda, const float *b, size_t ldb, float beta,
                            float *c, size_t ldc)
{
    const size_t kcb = attn__mm_kc(k), ars = ta ? 1 : lda, acs = ta ? lda : 1;
    size_t i, j, pc;
    for (j = 0; j < n; j += ATTN__NR) {
        const size_t nr = attn__min(ATTN__NR, n - j);
        for (i = 0; i < m; i += ATTN__MR) {
            const size_t mr = attn__min(ATTN__MR, m - i);
            for (pc = 0; pc < k; pc += kcb) {
                const size_t kc = attn__min(kcb, k - pc);
                const float *ap = a + i * ars + pc * acs;
                const float *bp = tb ? b + j * ldb + pc : b + pc * ldb + j;
                float *cp = c + i * ldc + j;
                const int mode = pc == 0 ? 1 : 2;
                if (mr == ATTN__MR && nr == ATTN__NR && !tb) {
                    attn__mm_ukr_strided(kc, ap, ars, acs, bp, ldb, cp, ldc, alpha, beta, mode);
                } else {
                    float t[ATTN__MR * ATTN__NR];
                    attn__mm_tile_any(mr, nr, kc, ap, ars, acs, bp, ldb, tb, t);
                    attn__mm_merge(cp, ldc, t, mr, nr, alpha, beta, mode);
                }
            }
        }
    }
}

/* C[0..m, 0..nc) (+)= alpha * A[0..m, p0..p1) * op(B)[p0..p1, 0..nc) for the chunks of depth
 * kcb from p0 to p1 (p1 - p0 <= kcb, or all of k), A (not transposed) read in place one
 * MR-row sliver at a time, each through all chunks; chunk q of op(B) is packed at
 * pb + q * kcb * np. The B panels stay in L2 while A streams by. Edge rows: with the ISA's
 * exact-row kernels (ATTN__MM_ROW_VARIANTS), read in place, the last MR + r rows split into
 * two near-equal tiles; otherwise the edge sliver is packed into pa. With pfa, the next
 * sliver's lines are requested while one runs, a share before each tile (for short streams
 * of an A far out of cache; through all of k, the hardware's prefetcher does better
 * alone). pfc: see attn__mm_tile. */
static void attn__mm_direct_a(size_t m, size_t nc, size_t p0, size_t p1, size_t kcb,
                              const float *a, size_t lda, const float *pb, size_t np, float *pa,
                              float *c, size_t ldc, float alpha, float beta, int pfa, int pfc)
{
    const size_t tiles = (nc + ATTN__NR - 1) / ATTN__NR;
    size_t ir, jr, pc, mr, next;
    for (ir = 0; ir < m; ir += mr) {
        mr = attn__min(ATTN__MR, m - ir);
#ifdef ATTN__MM_ROW_VARIANTS
        /* MR < rows left < 2 MR: two near-equal short tiles rather than MR + a few rows */
        if (m - ir > ATTN__MR && m - ir < 2 * ATTN__MR) mr = (m - ir + 1) / 2;
#endif
        next = pfa ? attn__min(ATTN__MR, m - ir - mr) : 0; /* rows to request ahead */
        for (pc = p0; pc < p1; pc += kcb) {
            const size_t kc = attn__min(kcb, p1 - pc), lines = (kc + 15) / 16;
            const size_t per = (next * lines + tiles - 1) / tiles;
            const float *ap = a + ir * lda + pc, *bp = pb + (pc - p0) * np;
            const int mode = pc == 0 ? 1 : 2;
            size_t ars = lda, acs = 1, r = 0, l = 0;
#ifndef ATTN__MM_ROW_VARIANTS
            if (mr < ATTN__MR) { /* rows past m do not exist: pack the edge */
                attn__mm_pack_a(0, a, lda, m, ir, mr, pc, kc, pa);
                ap = pa;
                ars = 1;
                acs = ATTN__MR;
            }
#endif
            for (jr = 0; jr < nc; jr += ATTN__NR) {
                size_t q;
                for (q = 0; q < per && r < next; q++) { /* line l of row r of the next tile */
                    ATTN__PREFETCH(a + (ir + mr + r) * lda + pc + l * 16);
                    if (++l == lines) {
                        l = 0;
                        r++;
                    }
                }
                attn__mm_tile(mr, attn__min(ATTN__NR, nc - jr), kc, ap, ars, acs, bp + jr * kc,
                              ATTN__NR, c + ir * ldc + jr, ldc, alpha, beta, mode, pfc);
            }
        }
    }
    (void)pa;
}

/* The packed A and B areas of a workspace for this product, in floats. */
static void attn__mm_ws_floats(size_t m, size_t n, size_t k, size_t *fa, size_t *fb)
{
    const size_t kc = attn__mm_kc(k);
    /* + slack for whole-vector stores, rounded so that B starts on a cache line too */
    *fa = attn__round_up(attn__round_up(attn__min(m, ATTN__MM_MC), ATTN__MR) * kc + ATTN__VW,
                         ATTN__ALIGN / sizeof(float));
    *fb = attn__round_up(attn__min(n, ATTN__MM_NC), ATTN__NR) * kc;
    /* room for all of op(B) when small (ATTN__MM_WHOLE_B); monotone in n and k */
    if (*fb < ATTN__MM_WHOLE_B) *fb = attn__min(ATTN__MM_WHOLE_B, attn__round_up(n, ATTN__NR) * k);
}

ATTN_API size_t attn_matmul_workspace_size(attn_trans ta, attn_trans tb, size_t m, size_t n,
                                           size_t k)
{
    size_t fa, fb;
    (void)ta; (void)tb;
    if (m == 0 || n == 0 || k == 0) return 0;
    attn__mm_ws_floats(m, n, k, &fa, &fb);
    return (fa + fb) * sizeof(float) + ATTN__ALIGN;
}

static float *attn__align(void *p)
{
    uintptr_t u = (uintptr_t)p;
    return (float *)(void *)((u + ATTN__ALIGN - 1) & ~(uintptr_t)(ATTN__ALIGN - 1));
}

ATTN_API attn_status attn_matmul(attn_trans ta, attn_trans tb, size_t m, size_t n, size_t k,
                                 float alpha, const float *a, size_t lda, const float *b,
                                 size_t ldb, float beta, float *c, size_t ldc, void *workspace,
                                 size_t workspace_size)
{
    attn_status st;
    size_t i, j, need, kcb, fa, fb, jc, pc, ic, ir, jr;
    float *pa, *pb;
    int packa, pfc;
    if (!a || !b || !c) return ATTN_ERR_NULL;
    if ((ta != ATTN_NO_TRANS && ta != ATTN_TRANS) || (tb != ATTN_NO_TRANS && tb != ATTN_TRANS))
        return ATTN_ERR_ARG;
    if (m == 0 || n == 0) return ATTN_ERR_SIZE;
    if (k > 0) {
        if ((st = ta ? attn__check_mat(k, m, lda) : attn__check_mat(m, k, lda)) != ATTN_OK) return st;
        if ((st = tb ? attn__check_mat(n, k, ldb) : attn__check_mat(k, n, ldb)) != ATTN_OK) return st;
    }
    if ((st = attn__check_mat(m, n, ldc)) != ATTN_OK) return st;
    need = attn_matmul_workspace_size(ta, tb, m, n, k);
    if (workspace && workspace_size < need) return ATTN_ERR_WORKSPACE;
    if (k == 0) {
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return ATTN_OK;
    }
    if (!workspace) {
        attn__mm_nopack(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return ATTN_OK;
    }
    kcb = attn__mm_kc(k);
    attn__mm_ws_floats(m, n, k, &fa, &fb);
    pa = attn__align(workspace);
    pb = pa + fa;
    packa = ta || n > ATTN__MM_DIRECT_N;
    pfc = m * ldc > ATTN__MM_FAR;
    if (!packa && attn__round_up(n, ATTN__NR) * k <= ATTN__MM_WHOLE_B) {
        /* all of op(B) packed at once: each A sliver then streams through all of k */
        const size_t np = attn__round_up(n, ATTN__NR);
        for (pc = 0; pc < k; pc += kcb)
            attn__mm_pack_b(tb, b, ldb, pc, attn__min(kcb, k - pc), 0, n, pb + pc * np);
        attn__mm_direct_a(m, n, 0, k, kcb, a, lda, pb, np, pa, c, ldc, alpha, beta, 0, pfc);
        return ATTN_OK;
    }
    for (jc = 0; jc < n; jc += ATTN__MM_NC) {
        const size_t nc = attn__min(ATTN__MM_NC, n - jc);
        for (pc = 0; pc < k; pc += kcb) {
            const size_t kc = attn__min(kcb, k - pc);
            const int mode = pc == 0 ? 1 : 2;
            attn__mm_pack_b(tb, b, ldb, pc, kc, jc, nc, pb);
            if (packa) {
                for (ic = 0; ic < m; ic += ATTN__MM_MC) {
                    const size_t mc = attn__min(ATTN__MM_MC, m - ic);
                    attn__mm_pack_a(ta, a, lda, m, ic, mc, pc, kc, pa);
                    for (jr = 0; jr < nc; jr += ATTN__NR)
                        for (ir = 0; ir < mc; ir += ATTN__MR)
                            attn__mm_tile(attn__min(ATTN__MR, mc - ir),
                                          attn__min(ATTN__NR, nc - jr), kc, pa + ir * kc, 1,
                                          ATTN__MR, pb + jr * kc, ATTN__NR,
                                          c + (ic + ir) * ldc + jc + jr, ldc, alpha, beta, mode,
                                          pfc);
                }
            } else {
                attn__mm_direct_a(m, nc, pc, pc + kc, kcb, a, lda, pb, 0, pa, c + jc, ldc, alpha,
                                  beta, m * lda > ATTN__MM_FAR, pfc);
            }
        }
    }
    return ATTN_OK;
}

/* ---- attention ----------------------------------------------------------------------- */
/*
 * One (batch, head) at a time, its queries in tiles of ATTN__TQ rows that start at
 * multiples of ATTN__TQ, its keys in tiles of ATTN__TK that start at multiples of ATTN__TK.
 * A query tile takes one of two paths, chosen by its row count alone:
 *  - fused (at least ATTN__FUSED_MIN rows): the tile's queries are packed once into MR-row
 *    slivers; per key tile, K^T is packed into NR-column slivers and V into NR-column
 *    slivers; per query sliver, S = Q K^T by the matmul microkernel into an MR x TK buffer
 *    (L1), the online softmax on it, and acc += P V by the microkernel (P read in place).
 *    Causal: key tiles past a sliver's last visible key are skipped, and the partial tile on
 *    the diagonal is cut at the sliver's last visible key.
 *  - rows (fewer rows: decode): in groups of MR rows, the dot products of every row of the
 *    group with a K row while it is in L1 (four rows share its loads), the online softmax
 *    per row, and acc += p V with a V row once for the group; K and V stream through once
 *    per group.
 * Online softmax per row: running max m, running sum l, acc scaled by exp(m_old - m_new) when
 * the max grows; O = acc / l at the end (0 when every key was masked).
 * Each row's arithmetic depends only on its own scores and on the tiles it belongs to, so
 * a call's output is the same bits however the caller splits batches, heads and query tiles
 * (attn_attention_task), and from run to run.
 */
#ifndef ATTN__TQ
#define ATTN__TQ (((192 + ATTN__MR - 1) / ATTN__MR) * ATTN__MR)  /* query rows per tile */
#endif
#ifndef ATTN__TK
#define ATTN__TK (((128 + ATTN__NR - 1) / ATTN__NR) * ATTN__NR)  /* keys per tile */
#endif
#ifndef ATTN__FUSED_MIN
#define ATTN__FUSED_MIN 12 /* query tiles with fewer rows take the rows path */
#endif


/* out[r] = attn__dot(q[r], k, d) for nr (a constant) rows against one key: k's loads
 * shared, each row's operations those of attn__dot (the same bits) */
static ATTN__FORCE_INLINE void attn__dot_body(const float *const *q, size_t nr, const float *k,
                                              size_t d, float *out)
{
    attn__v s0[4], s1[4];
    size_t i = 0, r;
    for (r = 0; r < nr; r++) s0[r] = attn__vzero(), s1[r] = attn__vzero();
    for (; i + 2 * ATTN__VW <= d; i += 2 * ATTN__VW) {
        const attn__v k0 = attn__vload(k + i), k1 = attn__vload(k + i + ATTN__VW);
        for (r = 0; r < nr; r++) {
            s0[r] = attn__vfma(attn__vload(q[r] + i), k0, s0[r]);
            s1[r] = attn__vfma(attn__vload(q[r] + i + ATTN__VW), k1, s1[r]);
        }
    }
    for (; i < d; i += ATTN__VW) {
        const size_t t = d - i;
        if (t >= ATTN__VW) {
            const attn__v k0 = attn__vload(k + i);
            for (r = 0; r < nr; r++) s0[r] = attn__vfma(attn__vload(q[r] + i), k0, s0[r]);
        } else {
            const attn__v k1 = attn__vload_part(k + i, t, 0.0f);
            for (r = 0; r < nr; r++)
                s1[r] = attn__vfma(attn__vload_part(q[r] + i, t, 0.0f), k1, s1[r]);
        }
    }
    for (r = 0; r < nr; r++) out[r] = attn__vhsum(attn__vadd(s0[r], s1[r]));
}

/* q . k over n floats (two chains) */
static float attn__dot(const float *q, const float *k, size_t n)
{
    float out;
    attn__dot_body(&q, 1, k, n, &out);
    return out;
}

/* attn__dot_body for nr = 1 .. 4 rows */
static void attn__dot_rows(const float *const *q, size_t nr, const float *k, size_t d,
                           float *out)
{
    switch (nr) {
    case 1: attn__dot_body(q, 1, k, d, out); break;
    case 2: attn__dot_body(q, 2, k, d, out); break;
    case 3: attn__dot_body(q, 3, k, d, out); break;
    default: attn__dot_body(q, 4, k, d, out); break;
    }
}

/* y[r][0..n) += a[r] * x[0..n) for nr (a constant) rows: x's loads shared, each row one fma
 * an element, as attn__axpby(y[r], 1, a[r], x, n) (the same bits) */
static ATTN__FORCE_INLINE void attn__axpy_body(float *const *y, const float *a, size_t nr,
                                               const float *x, size_t n)
{
    attn__v va[4];
    size_t i = 0, r;
    for (r = 0; r < nr; r++) va[r] = attn__vset1(a[r]);
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        const attn__v xv = attn__vload(x + i);
        for (r = 0; r < nr; r++) attn__vstore(y[r] + i, attn__vfma(va[r], xv, attn__vload(y[r] + i)));
    }
    if (i < n) {
        const attn__v xv = attn__vload_part(x + i, n - i, 0.0f);
        for (r = 0; r < nr; r++)
            attn__vstore_part(y[r] + i, attn__vfma(va[r], xv, attn__vload_part(y[r] + i, n - i, 0.0f)),
                              n - i);
    }
}

/* attn__axpy_body for nr = 1 .. 4 rows */
static void attn__axpy_rows(float *const *y, const float *a, size_t nr, const float *x, size_t n)
{
    switch (nr) {
    case 1: attn__axpy_body(y, a, 1, x, n); break;
    case 2: attn__axpy_body(y, a, 2, x, n); break;
    case 3: attn__axpy_body(y, a, 3, x, n); break;
    default: attn__axpy_body(y, a, 4, x, n); break;
    }
}

/* y[0..n) = y * s + a * x  (s = 1: axpy; x NULL: scaling by s) */
static void attn__axpby(float *y, float s, float a, const float *x, size_t n)
{
    const attn__v vs = attn__vset1(s), va = attn__vset1(a);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v t = attn__vmul(attn__vload(y + i), vs);
        if (x) t = attn__vfma(va, attn__vload(x + i), t);
        attn__vstore(y + i, t);
    }
    if (i < n) {
        attn__v t = attn__vmul(attn__vload_part(y + i, n - i, 0.0f), vs);
        if (x) t = attn__vfma(va, attn__vload_part(x + i, n - i, 0.0f), t);
        attn__vstore_part(y + i, t, n - i);
    }
}

/* The largest of x[0..n), NaNs ignored (-inf when n = 0 or all are NaN or -inf) */
static float attn__max_nonan(const float *x, size_t n)
{
    attn__v m0 = attn__vset1(-INFINITY), m1 = m0;
    size_t i = 0;
    for (; i + 2 * ATTN__VW <= n; i += 2 * ATTN__VW) { /* vmax(x, m): m where x is NaN */
        m0 = attn__vmax(attn__vload(x + i), m0);
        m1 = attn__vmax(attn__vload(x + i + ATTN__VW), m1);
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW) m0 = attn__vmax(attn__vload(x + i), m0);
    if (i < n) m1 = attn__vmax(attn__vload_part(x + i, n - i, -INFINITY), m1);
    return attn__vhmax(attn__vmax(m0, m1));
}

/* x[i] = exp(x[i] * s - m) in place over n floats (one rounding: fma), or exp(x[i] - m)
 * when s is 0; returns the sum */
static float attn__exp_rows(float *x, size_t n, float s, float m)
{
    const attn__v vm = attn__vset1(-m), vs = attn__vset1(s);
    attn__v s0 = attn__vzero(), s1 = attn__vzero();
    size_t i = 0;
#define ATTN__EXPARG(v) (s != 0.0f ? attn__vfma(v, vs, vm) : attn__vadd(v, vm))
    for (; i + 2 * ATTN__VW <= n; i += 2 * ATTN__VW) {
        const attn__v e0 = attn__vexp(ATTN__EXPARG(attn__vload(x + i)));
        const attn__v e1 = attn__vexp(ATTN__EXPARG(attn__vload(x + i + ATTN__VW)));
        attn__vstore(x + i, e0);
        attn__vstore(x + i + ATTN__VW, e1);
        s0 = attn__vadd(s0, e0);
        s1 = attn__vadd(s1, e1);
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        const attn__v e = attn__vexp(ATTN__EXPARG(attn__vload(x + i)));
        attn__vstore(x + i, e);
        s0 = attn__vadd(s0, e);
    }
    if (i < n) {
        const attn__v e = attn__vexp(ATTN__EXPARG(attn__vload_part(x + i, n - i, -INFINITY)));
        attn__vstore_part(x + i, e, n - i);
        s1 = attn__vadd(s1, e);
    }
#undef ATTN__EXPARG
    return attn__vhsum(attn__vadd(s0, s1));
}

/* One (batch, head), resolved from the parameters. */
typedef struct attn__hd {
    const float *q, *k, *v, *mask;
    const uint8_t *bmask;
    float *o;
    size_t q_sl, k_sl, v_sl, o_sl, mask_sq, bmask_sq;
    size_t d, dv, klen;
    float scale, softcap;
    int causal, general; /* general: masks, softcap or scale <= 0 (the per-score transform) */
    ptrdiff_t off;       /* causal: query i sees key j iff j <= i + off */
    float *scores;       /* the optional scores output, and its mode */
    size_t scores_sq;
    int scores_mode;
} attn__hd;

static attn__hd attn__head(const attn_attention_params *p, size_t b, size_t h)
{
    attn__hd hd;
    const size_t g = h / (p->heads / p->kv_heads);
    hd.q = p->q + b * p->q_sb + h * p->q_sh;
    hd.k = p->k + b * p->k_sb + g * p->k_sh;
    hd.v = p->v + b * p->v_sb + g * p->v_sh;
    hd.o = p->o + b * p->o_sb + h * p->o_sh;
    hd.mask = p->mask ? p->mask + b * p->mask_sb + h * p->mask_sh : NULL;
    hd.bmask = p->bool_mask ? p->bool_mask + b * p->bmask_sb + h * p->bmask_sh : NULL;
    hd.q_sl = p->q_sl, hd.k_sl = p->k_sl, hd.v_sl = p->v_sl, hd.o_sl = p->o_sl;
    hd.mask_sq = p->mask_sq, hd.bmask_sq = p->bmask_sq;
    hd.d = p->head_dim, hd.dv = p->v_head_dim;
    hd.klen = p->key_lengths ? (size_t)p->key_lengths[b] : p->kv_len;
    hd.scale = p->scale != 0.0f ? p->scale : 1.0f / sqrtf((float)p->head_dim);
    hd.softcap = p->softcap;
    hd.causal = p->causal != ATTN_CAUSAL_NONE;
    hd.off = p->causal == ATTN_CAUSAL_OFFSET ? p->causal_offset
                                              : (ptrdiff_t)hd.klen - (ptrdiff_t)p->q_len;
    hd.scores = p->scores ? p->scores + b * p->scores_sb + h * p->scores_sh : NULL;
    hd.scores_sq = p->scores_sq;
    hd.scores_mode = (int)p->scores_mode;
    hd.general = hd.mask || hd.bmask || hd.softcap > 0 || !(hd.scale > 0) || hd.scores;
    return hd;
}

/* Keys of row qi at or past k0 that causal masking leaves visible, at most n */
static size_t attn__visible(const attn__hd *hd, size_t qi, size_t k0, size_t n)
{
    ptrdiff_t lim;
    if (!hd->causal) return n;
    lim = (ptrdiff_t)qi + hd->off + 1 - (ptrdiff_t)k0;
    return lim <= 0 ? 0 : (size_t)lim < n ? (size_t)lim : n;
}

/* Online softmax step of row qi over keys k0 .. k0+n: s holds the raw dot products (q . k),
 * n of them visible (causal) out of nz; on return s[0..nz) holds the unnormalized
 * probabilities exp(score - m) (0 for masked keys), *m and *l are updated and the row's
 * accumulator acc[0..na) is rescaled. Scores: scaled, softcapped, then masked (a masked
 * key is -inf whatever its K row holds; a NaN score makes the row NaN). */
static void attn__online_row(const attn__hd *hd, size_t qi, size_t k0, size_t n, size_t nz,
                             float *s, float *m, float *l, float *acc, size_t na)
{
    float mx = -INFINITY, mnew, alpha, sum, es = 0.0f;
    size_t j;
    if (!hd->general && n) { /* plain scores, scale > 0: max(scale * s) = scale * max(s) */
        mx = attn__max_nonan(s, n);
        if (mx > -INFINITY && mx < INFINITY) {
            mx *= hd->scale;
            es = hd->scale;
        } else {
            mx = -INFINITY;
        }
    }
    if (es == 0.0f && n) { /* the per-score transform */
        const float *mrow = hd->mask ? hd->mask + qi * hd->mask_sq + k0 : NULL;
        const uint8_t *brow = hd->bmask ? hd->bmask + qi * hd->bmask_sq + k0 : NULL;
        float *sc = hd->scores ? hd->scores + qi * hd->scores_sq + k0 : NULL;
        int nan = 0;
        for (j = 0; j < n; j++) {
            float x = s[j] * hd->scale;
            if (hd->softcap > 0) x = hd->softcap * tanhf(x / hd->softcap);
            if (sc && hd->scores_mode == ATTN_SCORES_LOGITS) sc[j] = x;
            if (mrow) x = mrow[j] == -INFINITY ? -INFINITY : x + mrow[j];
            if (brow && !brow[j]) x = -INFINITY;
            if (sc && hd->scores_mode != ATTN_SCORES_LOGITS) sc[j] = x;
            if (x != x) nan = 1;
            else if (x > mx) mx = x;
            s[j] = x;
        }
        if (nan) mx = NAN;
    }
    mnew = mx != mx ? mx : mx > *m ? mx : *m; /* a NaN row stays NaN */
    if (mnew == -INFINITY) { /* every key so far masked: nothing to add */
        memset(s, 0, nz * sizeof(float));
        return;
    }
    alpha = mnew == *m ? 1.0f : attn__expf(*m - mnew); /* exp(0) = 1 exactly anyway */
    sum = attn__exp_rows(s, n, es, mnew);
    if (n < nz) memset(s + n, 0, (nz - n) * sizeof(float));
    *l = *l * alpha + sum;
    if (alpha != 1.0f) attn__axpby(acc, alpha, 0.0f, NULL, na);
    *m = mnew;
}

/* Packs V rows [0, tk) (stride ld, dv floats) into NR-column slivers of depth tk (sliver c
 * at dst + c * NR * tk), columns past dv zero. Returns nonzero when a value is inf or NaN. */
static int attn__pack_v(const float *v, size_t ld, size_t tk, size_t dv, float *dst)
{
    attn__v bad = attn__vzero();
    const attn__v z = attn__vzero();
    size_t p, c, u;
    float t;
    for (p = 0; p < tk; p++, v += ld)
        for (c = 0; c < dv; c += ATTN__NR) {
            float *dp = dst + c * tk + p * ATTN__NR;
            for (u = 0; u < ATTN__NR; u += ATTN__VW) {
                attn__v x = z;
                if (c + u + ATTN__VW <= dv) x = attn__vload(v + c + u);
                else if (c + u < dv) x = attn__vload_part(v + c + u, dv - c - u, 0.0f);
                bad = attn__vadd(bad, attn__vmul(x, z)); /* 0 * (inf or NaN) = NaN */
                attn__vstore(dp + u, x);
            }
        }
    t = attn__vhsum(bad);
    return t != t;
}

/* The workspace: carved into 64-byte aligned segments (the same arithmetic sizes it). */
typedef struct attn__ws {
    float *qp;   /* ATTN__TQ x d: the query tile in MR-row slivers (+ ATTN__VW slack) */
    float *kp;   /* ATTN__TK x d: the key tile, K^T in NR-column slivers */
    float *vp;   /* ATTN__TK x dvp: the value tile in NR-column slivers */
    float *s;    /* ATTN__MR x ATTN__TK: one sliver's scores, then probabilities */
    float *m, *l; /* ATTN__TQ each: running max and sum */
    float *acc;  /* ATTN__TQ x dvp */
    size_t dvp;  /* dv rounded up to NR */
} attn__ws;

/* Lays the segments out from base (NULL: only sizes); returns the bytes, 0 on overflow */
static size_t attn__ws_layout(void *base, size_t d, size_t dv, attn__ws *w)
{
    const size_t lim = ATTN__MAX_ELEMS / (4 * (ATTN__TQ + ATTN__TK));
    const size_t fa = ATTN__ALIGN / sizeof(float);
    size_t dvp, n[7], off = 0, i;
    float *f = base ? attn__align(base) : NULL;
    float *seg[7];
    if (d == 0 || dv == 0 || d > lim || dv > lim) return 0;
    dvp = attn__round_up(dv, ATTN__NR);
    n[0] = ATTN__TQ * d + ATTN__VW;
    n[1] = ATTN__TK * d + ATTN__VW;
    n[2] = ATTN__TK * dvp;
    n[3] = ATTN__MR * ATTN__TK;
    n[4] = ATTN__TQ;
    n[5] = ATTN__TQ;
    n[6] = ATTN__TQ * dvp;
    for (i = 0; i < 7; i++) {
        seg[i] = f ? f + off : NULL;
        off += attn__round_up(n[i], fa);
    }
    if (w) {
        w->qp = seg[0], w->kp = seg[1], w->vp = seg[2], w->s = seg[3];
        w->m = seg[4], w->l = seg[5], w->acc = seg[6], w->dvp = dvp;
    }
    return off * sizeof(float) + ATTN__ALIGN;
}

/* Key tiles a query tile of rows q0 .. q0+tq visits: [0, kend) */
static size_t attn__kend(const attn__hd *hd, size_t q0, size_t tq)
{
    return attn__visible(hd, q0 + tq - 1, 0, hd->klen);
}

/* O rows of a tile: acc / l, zeros where no key was visible (row r of the workspace) */
static void attn__tile_out(const attn__hd *hd, size_t q0, size_t tq, const attn__ws *w,
                           size_t r)
{
    size_t i;
    for (i = 0; i < tq; i++, r++) {
        float *orow = hd->o + (q0 + i) * hd->o_sl;
        const float l = w->l[r];
        if (l == 0.0f) memset(orow, 0, hd->dv * sizeof(float)); /* fully masked row */
        else {
            memcpy(orow, w->acc + r * w->dvp, hd->dv * sizeof(float));
            attn__axpby(orow, 1.0f / l, 0.0f, NULL, hd->dv);
        }
    }
}

static void attn__tile_init(size_t tq, size_t rows, const attn__ws *w)
{
    size_t i;
    for (i = 0; i < tq; i++) {
        w->m[i] = -INFINITY;
        w->l[i] = 0.0f;
    }
    memset(w->acc, 0, rows * w->dvp * sizeof(float));
}

/* The fused path for query rows q0 .. q0+tq (see above) */
static void attn__tile_fused(const attn__hd *hd, size_t q0, size_t tq, const attn__ws *w)
{
    const size_t d = hd->d, dv = hd->dv, dvp = w->dvp, nsl = (tq + ATTN__MR - 1) / ATTN__MR;
    const size_t kend = attn__kend(hd, q0, tq);
    size_t k0, sl, i, j;
    attn__tile_init(tq, nsl * ATTN__MR, w);
    attn__mm_pack_t(hd->q + q0 * hd->q_sl, hd->q_sl, tq, d, ATTN__MR, 0, w->qp);
    for (k0 = 0; k0 < kend; k0 += ATTN__TK) {
        const size_t tk = attn__min(ATTN__TK, kend - k0);
        const int vbad = attn__pack_v(hd->v + k0 * hd->v_sl, hd->v_sl, tk, dv, w->vp);
        attn__mm_pack_t(hd->k + k0 * hd->k_sl, hd->k_sl, tk, d, ATTN__NR, 0, w->kp);
        for (sl = 0; sl < nsl; sl++) {
            const size_t r0 = sl * ATTN__MR, mr = attn__min(ATTN__MR, tq - r0);
            const size_t ts = attn__visible(hd, q0 + r0 + mr - 1, k0, tk);
            float *acc = w->acc + r0 * dvp;
            if (ts == 0) continue; /* the sliver sees no key of this tile or later */
            for (j = 0; j < ts; j += ATTN__NR)
                attn__mm_ukr_packed(d, w->qp + r0 * d, w->kp + j * d, w->s + j, ATTN__TK, 1.0f,
                                    0.0f, 0);
            for (i = 0; i < mr; i++)
                attn__online_row(hd, q0 + r0 + i, k0, attn__visible(hd, q0 + r0 + i, k0, ts),
                                 ts, w->s + i * ATTN__TK, &w->m[r0 + i], &w->l[r0 + i],
                                 acc + i * dvp, dvp);
            if (!vbad) {
                for (j = 0; j < dvp; j += ATTN__NR)
                    attn__mm_ukr_strided(ts, w->s, ATTN__TK, 1, w->vp + j * tk, ATTN__NR,
                                         acc + j, dvp, 1.0f, 0.0f, 2);
            } else { /* inf or NaN in V: keys with p = 0 must not contribute 0 * inf */
                for (i = 0; i < mr; i++) {
                    const float *prow = w->s + i * ATTN__TK;
                    for (j = 0; j < ts; j++)
                        if (prow[j] != 0.0f)
                            attn__axpby(acc + i * dvp, 1.0f, prow[j], hd->v + (k0 + j) * hd->v_sl, dv);
                }
            }
        }
    }
    attn__tile_out(hd, q0, tq, w, 0);
}

/* The rows path for query rows q0 .. q0+tq of nh heads that share their K and V (a GQA
 * group; nh * tq <= ATTN__TQ): each key tile is read once for all of them. Rows whose
 * scores are written see every key the causal mask allows (the masked ones scored too). */
static void attn__tile_rows(const attn__hd *hds, size_t nh, size_t q0, size_t tq,
                            const attn__ws *w)
{
    const attn__hd *hd = hds;
    const size_t d = hd->d, dv = hd->dv, dvp = w->dvp, rows = nh * tq;
    const size_t kend = attn__kend(hd, q0, tq); /* the same for every head of the group */
    size_t k0, g, r, j;
    attn__tile_init(rows, rows, w);
    for (k0 = 0; k0 < kend; k0 += ATTN__TK) {
        const size_t tk = attn__min(ATTN__TK, kend - k0);
        const float *kt = hd->k + k0 * hd->k_sl, *vt = hd->v + k0 * hd->v_sl;
        for (g = 0; g < rows; g += ATTN__MR) { /* MR rows at a time (w->s: MR x TK) */
            const size_t gr = attn__min(ATTN__MR, rows - g);
            const float *qr[ATTN__MR];
            size_t n[ATTN__MR], nmax = 0;
            for (r = 0; r < gr; r++) { /* row g + r: head (g + r) / tq, query (g + r) % tq */
                const size_t qi = q0 + (g + r) % tq;
                n[r] = attn__visible(hd, qi, k0, tk);
                qr[r] = hds[(g + r) / tq].q + qi * hd->q_sl;
                nmax = n[r] > nmax ? n[r] : nmax;
            }
            if (gr == 1) /* one row (decoding): K and V stream through in order */
                for (j = 0; j < nmax; j++) w->s[j] = attn__dot(qr[0], kt + j * hd->k_sl, d);
            else
                for (j = 0; j < nmax; j++) /* a K row once for all the rows */
                    for (r = 0; r < gr; r += 4) {
                        const size_t nr = attn__min(4, gr - r);
                        size_t u;
                        float t[4];
                        attn__dot_rows(qr + r, nr, kt + j * hd->k_sl, d, t);
                        for (u = 0; u < nr; u++)
                            if (j < n[r + u]) w->s[(r + u) * ATTN__TK + j] = t[u];
                    }
            for (r = 0; r < gr; r++)
                if (n[r])
                    attn__online_row(&hds[(g + r) / tq], q0 + (g + r) % tq, k0, n[r], n[r],
                                     w->s + r * ATTN__TK, &w->m[g + r], &w->l[g + r],
                                     w->acc + (g + r) * dvp, dv);
            if (gr == 1)
                for (j = 0; j < nmax; j++) {
                    if (w->s[j] != 0.0f)
                        attn__axpby(w->acc + g * dvp, 1.0f, w->s[j], vt + j * hd->v_sl, dv);
                }
            else
                for (j = 0; j < nmax; j++) { /* a V row likewise, for the rows it weighs in */
                    float *y[4], a[4];
                    size_t c = 0;
                    for (r = 0; r < gr; r++)
                        if (j < n[r] && w->s[r * ATTN__TK + j] != 0.0f) {
                            y[c] = w->acc + (g + r) * dvp, a[c] = w->s[r * ATTN__TK + j];
                            if (++c == 4) attn__axpy_rows(y, a, 4, vt + j * hd->v_sl, dv), c = 0;
                        }
                    if (c) attn__axpy_rows(y, a, c, vt + j * hd->v_sl, dv);
                }
        }
    }
    for (r = 0; r < nh; r++) attn__tile_out(&hds[r], q0, tq, w, r * tq);
}

/* The scores output of rows q0 .. q0+tq, after their tile: every key j < kv_len gets the
 * mode's value; keys the kernel never scored are masked (-inf; probability 0). LOGITS of
 * masked keys are computed here (the kernel skips them). */
static void attn__tile_scores(const attn_attention_params *p, const attn__hd *hd, size_t q0,
                              size_t tq, const attn__ws *w)
{
    size_t i, j;
    for (i = 0; i < tq; i++) {
        const size_t qi = q0 + i, n = attn__visible(hd, qi, 0, hd->klen);
        float *sc = hd->scores + qi * hd->scores_sq;
        const float m = w->m[i], l = w->l[i];
        if (hd->scores_mode == ATTN_SCORES_LOGITS) {
            const float *qrow = hd->q + qi * hd->q_sl;
            for (j = n; j < p->kv_len; j++) {
                float x = attn__dot(qrow, hd->k + j * hd->k_sl, hd->d) * hd->scale;
                if (hd->softcap > 0) x = hd->softcap * tanhf(x / hd->softcap);
                sc[j] = x;
            }
            continue;
        }
        for (j = n; j < p->kv_len; j++) sc[j] = -INFINITY;
        if (hd->scores_mode != ATTN_SCORES_PROBS) continue;
        for (j = 0; j < p->kv_len; j++) /* MASKED values -> exp(s - m) / l */
            sc[j] = l == 0.0f ? 0.0f : attn__expf(sc[j] - m) / l;
    }
}

static void attn__head_tile(const attn_attention_params *p, const attn__hd *hd, size_t q0,
                            const attn__ws *w)
{
    const size_t tq = attn__min(ATTN__TQ, p->q_len - q0);
    if (hd->scores) { /* the reference-order rows path, then the keys it skipped */
        attn__tile_rows(hd, 1, q0, tq, w);
        attn__tile_scores(p, hd, q0, tq, w);
    } else if (tq >= ATTN__FUSED_MIN) {
        attn__tile_fused(hd, q0, tq, w);
    } else {
        attn__tile_rows(hd, 1, q0, tq, w);
    }
}

ATTN_API size_t attn_attention_workspace_size(const attn_attention_params *p)
{
    if (!p) return 0;
    return attn__ws_layout(NULL, p->head_dim, p->v_head_dim, NULL);
}

ATTN_API attn_attention_params attn_attention_init(size_t batch, size_t heads, size_t kv_heads,
                                                   size_t q_len, size_t kv_len,
                                                   size_t head_dim, size_t v_head_dim,
                                                   const float *q, const float *k,
                                                   const float *v, float *o,
                                                   attn_layout layout)
{
    attn_attention_params p;
    memset(&p, 0, sizeof p);
    p.batch = batch;
    p.heads = heads;
    p.kv_heads = kv_heads;
    p.q_len = q_len;
    p.kv_len = kv_len;
    p.head_dim = head_dim;
    p.v_head_dim = v_head_dim;
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    if (layout == ATTN_LAYOUT_BLHD) { /* [B, L, H*D] */
        p.q_sb = q_len * heads * head_dim, p.q_sh = head_dim, p.q_sl = heads * head_dim;
        p.k_sb = kv_len * kv_heads * head_dim, p.k_sh = head_dim, p.k_sl = kv_heads * head_dim;
        p.v_sb = kv_len * kv_heads * v_head_dim, p.v_sh = v_head_dim, p.v_sl = kv_heads * v_head_dim;
        p.o_sb = q_len * heads * v_head_dim, p.o_sh = v_head_dim, p.o_sl = heads * v_head_dim;
    } else { /* [B, H, L, D] */
        p.q_sb = heads * q_len * head_dim, p.q_sh = q_len * head_dim, p.q_sl = head_dim;
        p.k_sb = kv_heads * kv_len * head_dim, p.k_sh = kv_len * head_dim, p.k_sl = head_dim;
        p.v_sb = kv_heads * kv_len * v_head_dim, p.v_sh = kv_len * v_head_dim, p.v_sl = v_head_dim;
        p.o_sb = heads * q_len * v_head_dim, p.o_sh = q_len * v_head_dim, p.o_sl = v_head_dim;
    }
    p.causal = ATTN_CAUSAL_NONE;
    return p;
}

/* A [n0, n1, n2, row] tensor with strides s0, s1, s2: rows may not overlap within a dim
 * of size > 1 (stride >= row) unless `broadcast` allows stride 0; the extent must fit. */
static attn_status attn__check_tensor(size_t n0, size_t s0, size_t n1, size_t s1, size_t n2,
                                      size_t s2, size_t row, int broadcast)
{
    size_t ext = row;
    if ((n0 > 1 && s0 < row && !(broadcast && s0 == 0)) ||
        (n1 > 1 && s1 < row && !(broadcast && s1 == 0)) ||
        (n2 > 1 && s2 < row && !(broadcast && s2 == 0)))
        return ATTN_ERR_LD;
    if (row > ATTN__MAX_ELEMS || !attn__extent_add(&ext, n0 - 1, s0) ||
        !attn__extent_add(&ext, n1 - 1, s1) || !attn__extent_add(&ext, n2 - 1, s2))
        return ATTN_ERR_OVERFLOW;
    return ATTN_OK;
}

static attn_status attn__attention_check(const attn_attention_params *p, const void *ws,
                                         size_t ws_size)
{
    attn_status st;
    size_t b;
    if (!p) return ATTN_ERR_NULL;
    if (!p->q || !p->k || !p->v || !p->o) return ATTN_ERR_NULL;
    if (!ws) return ATTN_ERR_WORKSPACE;
    if (!p->batch || !p->heads || !p->kv_heads || !p->q_len || !p->kv_len || !p->head_dim ||
        !p->v_head_dim || p->heads % p->kv_heads)
        return ATTN_ERR_SIZE;
    if ((st = attn__check_tensor(p->batch, p->q_sb, p->heads, p->q_sh, p->q_len, p->q_sl, p->head_dim, 0)) ||
        (st = attn__check_tensor(p->batch, p->k_sb, p->kv_heads, p->k_sh, p->kv_len, p->k_sl, p->head_dim, 0)) ||
        (st = attn__check_tensor(p->batch, p->v_sb, p->kv_heads, p->v_sh, p->kv_len, p->v_sl, p->v_head_dim, 0)) ||
        (st = attn__check_tensor(p->batch, p->o_sb, p->heads, p->o_sh, p->q_len, p->o_sl, p->v_head_dim, 0)))
        return st;
    if (p->mask && (st = attn__check_tensor(p->batch, p->mask_sb, p->heads, p->mask_sh, p->q_len,
                                             p->mask_sq, p->kv_len, 1)))
        return st;
    if (p->bool_mask && (st = attn__check_tensor(p->batch, p->bmask_sb, p->heads, p->bmask_sh,
                                                  p->q_len, p->bmask_sq, p->kv_len, 1)))
        return st;
    if (!attn__finite(p->scale) || !attn__finite(p->softcap) || p->softcap < 0) return ATTN_ERR_ARG;
    if (p->causal != ATTN_CAUSAL_NONE && p->causal != ATTN_CAUSAL_BOTTOM_RIGHT &&
        p->causal != ATTN_CAUSAL_OFFSET)
        return ATTN_ERR_ARG;
    if (p->key_lengths)
        for (b = 0; b < p->batch; b++)
            if (p->key_lengths[b] < 0 || (uint64_t)p->key_lengths[b] > (uint64_t)p->kv_len)
                return ATTN_ERR_ARG;
    if (p->scores) {
        if (p->scores_mode != ATTN_SCORES_LOGITS && p->scores_mode != ATTN_SCORES_MASKED &&
            p->scores_mode != ATTN_SCORES_PROBS)
            return ATTN_ERR_ARG;
        if ((st = attn__check_tensor(p->batch, p->scores_sb, p->heads, p->scores_sh, p->q_len,
                                     p->scores_sq, p->kv_len, 0)))
            return st;
    }
    if (attn_attention_workspace_size(p) == 0) return ATTN_ERR_OVERFLOW;
    if (ws_size < attn_attention_workspace_size(p)) return ATTN_ERR_WORKSPACE;
    return ATTN_OK;
}


static size_t attn__qtiles(const attn_attention_params *p)
{
    return (p->q_len + ATTN__TQ - 1) / ATTN__TQ;
}

ATTN_API attn_status attn_attention(const attn_attention_params *p, void *workspace,
                                    size_t workspace_size)
{
    attn_status st = attn__attention_check(p, workspace, workspace_size);
    attn__ws w;
    size_t b, h, q0;
    if (st != ATTN_OK) return st;
    attn__ws_layout(workspace, p->head_dim, p->v_head_dim, &w);
    if (p->q_len < ATTN__FUSED_MIN && !p->scores && p->heads > p->kv_heads) {
        /* decode with grouped-query heads: the heads of a group share each K/V tile read
         * (the same rows path, row by row, as one head alone: the same bits) */
        const size_t group = p->heads / p->kv_heads, per = attn__min(8, ATTN__TQ / p->q_len);
        attn__hd hds[8];
        size_t n, i;
        for (b = 0; b < p->batch; b++)
            for (h = 0; h < p->heads; h += n) {
                n = attn__min(per, group - h % group);
                for (i = 0; i < n; i++) hds[i] = attn__head(p, b, h + i);
                attn__tile_rows(hds, n, 0, p->q_len, &w);
            }
        return ATTN_OK;
    }
    for (b = 0; b < p->batch; b++)
        for (h = 0; h < p->heads; h++) {
            const attn__hd hd = attn__head(p, b, h);
            for (q0 = 0; q0 < p->q_len; q0 += ATTN__TQ) attn__head_tile(p, &hd, q0, &w);
        }
    return ATTN_OK;
}

ATTN_API size_t attn_attention_query_tile(void) { return ATTN__TQ; }

ATTN_API size_t attn_attention_tasks(const attn_attention_params *p)
{
    size_t n;
    if (!p || !p->batch || !p->heads || !p->q_len) return 0;
    n = attn__qtiles(p);
    if (p->heads > ATTN__MAX_ELEMS / n || p->batch > ATTN__MAX_ELEMS / (n * p->heads)) return 0;
    return p->batch * p->heads * n;
}

ATTN_API attn_status attn_attention_task(const attn_attention_params *p, size_t task,
                                         void *workspace, size_t workspace_size)
{
    attn_status st = attn__attention_check(p, workspace, workspace_size);
    attn__ws w;
    attn__hd hd;
    size_t nt;
    if (st != ATTN_OK) return st;
    if (task >= attn_attention_tasks(p)) return ATTN_ERR_ARG;
    nt = attn__qtiles(p);
    attn__ws_layout(workspace, p->head_dim, p->v_head_dim, &w);
    hd = attn__head(p, task / (nt * p->heads), task / nt % p->heads);
    attn__head_tile(p, &hd, task % nt * ATTN__TQ, &w);
    return ATTN_OK;
}

/* ---- KV cache ------------------------------------------------------------------------ */

ATTN_API attn_status attn_kv_cache_init(attn_kv_cache *c, float *k, float *v, size_t batch,
                                        size_t kv_heads, size_t capacity, size_t head_dim,
                                        size_t v_head_dim)
{
    size_t ek = head_dim, ev = v_head_dim;
    if (!c || !k || !v) return ATTN_ERR_NULL;
    if (!batch || !kv_heads || !capacity || !head_dim || !v_head_dim) return ATTN_ERR_SIZE;
    if (head_dim > ATTN__MAX_ELEMS || v_head_dim > ATTN__MAX_ELEMS ||
        !attn__extent_add(&ek, capacity - 1, head_dim) ||
        !attn__extent_add(&ek, kv_heads - 1, capacity * head_dim) ||
        !attn__extent_add(&ek, batch - 1, kv_heads * capacity * head_dim) ||
        !attn__extent_add(&ev, capacity - 1, v_head_dim) ||
        !attn__extent_add(&ev, kv_heads - 1, capacity * v_head_dim) ||
        !attn__extent_add(&ev, batch - 1, kv_heads * capacity * v_head_dim))
        return ATTN_ERR_OVERFLOW;
    c->k = k;
    c->v = v;
    c->batch = batch;
    c->kv_heads = kv_heads;
    c->capacity = capacity;
    c->head_dim = head_dim;
    c->v_head_dim = v_head_dim;
    c->len = 0;
    return ATTN_OK;
}

static int attn__kv_valid(const attn_kv_cache *c)
{
    attn_kv_cache t;
    return c && c->k && c->v && c->len <= c->capacity &&
           attn_kv_cache_init(&t, c->k, c->v, c->batch, c->kv_heads, c->capacity, c->head_dim,
                              c->v_head_dim) == ATTN_OK;
}

ATTN_API attn_status attn_kv_cache_append(attn_kv_cache *c, size_t n, const float *k_new,
                                          const float *v_new, attn_layout layout)
{
    size_t b, g, t, kd, vd;
    if (!c || !k_new || !v_new) return ATTN_ERR_NULL;
    if (!attn__kv_valid(c)) return ATTN_ERR_ARG;
    if (layout != ATTN_LAYOUT_BHLD && layout != ATTN_LAYOUT_BLHD) return ATTN_ERR_ARG;
    if (n > c->capacity - c->len) return ATTN_ERR_SIZE;
    kd = c->head_dim, vd = c->v_head_dim;
    for (b = 0; b < c->batch; b++)
        for (g = 0; g < c->kv_heads; g++) {
            float *kc = c->k + ((b * c->kv_heads + g) * c->capacity + c->len) * kd;
            float *vc = c->v + ((b * c->kv_heads + g) * c->capacity + c->len) * vd;
            if (layout == ATTN_LAYOUT_BHLD) {
                memmove(kc, k_new + (b * c->kv_heads + g) * n * kd, n * kd * sizeof(float));
                memmove(vc, v_new + (b * c->kv_heads + g) * n * vd, n * vd * sizeof(float));
            } else {
                for (t = 0; t < n; t++) {
                    memmove(kc + t * kd, k_new + ((b * n + t) * c->kv_heads + g) * kd, kd * sizeof(float));
                    memmove(vc + t * vd, v_new + ((b * n + t) * c->kv_heads + g) * vd, vd * sizeof(float));
                }
            }
        }
    c->len += n;
    return ATTN_OK;
}

ATTN_API attn_attention_params attn_attention_init_kv(const attn_kv_cache *c, size_t heads,
                                                      size_t q_len, const float *q, float *o,
                                                      attn_layout layout, attn_causal causal)
{
    attn_attention_params p;
    if (!attn__kv_valid(c)) {
        memset(&p, 0, sizeof p);
        return p;
    }
    p = attn_attention_init(c->batch, heads, c->kv_heads, q_len, c->len, c->head_dim,
                            c->v_head_dim, q, c->k, c->v, o, layout);
    p.k_sl = c->head_dim, p.k_sh = c->capacity * c->head_dim, p.k_sb = c->kv_heads * p.k_sh;
    p.v_sl = c->v_head_dim, p.v_sh = c->capacity * c->v_head_dim, p.v_sb = c->kv_heads * p.v_sh;
    p.causal = causal;
    return p;
}

/* ---- transformer blocks ---------------------------------------------------------------
 * Activations over the vector layer, linear layers around attn_matmul, and the blocks
 * composed from the public kernels. Nothing here allocates: every buffer is a slice of the
 * caller's workspace, carved in 64-byte aligned segments. */

static inline attn__v attn__vabs(attn__v v) { return attn__vmax(v, attn__vsub(attn__vzero(), v)); }

/* |v| < FLT_MIN -> 0 (NaN stays) */
static inline attn__v attn__vflush(attn__v v)
{
    return attn__vselect(attn__vlt(attn__vabs(v), attn__vset1(FLT_MIN)), attn__vzero(), v);
}

/* GELU, erf form: x Phi(x), Phi(x) = 1 - E for x > 0 and E for x <= 0, E = erfc(z) / 2,
 * z = |x| / sqrt 2. erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2), P Numerical Recipes'
 * Chebyshev fit (fractional error < 1.2e-7 for every z >= 0). z^2 = x^2 / 2 is carried
 * as hi + lo (exact), and -z^2 + P as a 2Sum, so the exp's argument has no rounding error
 * worth an ulp of the result even where it reaches -87. */
static inline attn__v attn__vgelu_erf(attn__v x)
{
    const attn__v half = attn__vset1(0.5f), one = attn__vset1(1.0f), zero = attn__vzero();
    attn__v ax = attn__vabs(x), z, t, p, hi, lo, a, s, bb, err, e, big_e, y;
    z = attn__vmul(ax, attn__vset1(0.707106781186547524f));
    t = attn__vdiv(one, attn__vfma(z, half, one));
    p = attn__vset1(0.17087277f);
    p = attn__vfma(p, t, attn__vset1(-0.82215223f));
    p = attn__vfma(p, t, attn__vset1(1.48851587f));
    p = attn__vfma(p, t, attn__vset1(-1.13520398f));
    p = attn__vfma(p, t, attn__vset1(0.27886807f));
    p = attn__vfma(p, t, attn__vset1(-0.18628806f));
    p = attn__vfma(p, t, attn__vset1(0.09678418f));
    p = attn__vfma(p, t, attn__vset1(0.37409196f));
    p = attn__vfma(p, t, attn__vset1(1.00002368f));
    p = attn__vfma(p, t, attn__vset1(-1.26551223f));
    hi = attn__vmul(x, x);
    lo = attn__vfma_exact(x, x, attn__vsub(zero, hi)); /* x^2 = hi + lo exactly */
    a = attn__vmul(hi, attn__vset1(-0.5f));             /* exact */
    s = attn__vadd(p, a);                               /* 2Sum: s + err = p + a */
    bb = attn__vsub(s, p);
    err = attn__vadd(attn__vsub(p, attn__vsub(s, bb)), attn__vsub(a, bb));
    /* e = exp(s + err - lo/2) as h^2, h = exp of half the argument (halving is exact), so
     * that an exp below FLT_MIN (argument below -87) still gives a normal x E */
    e = attn__vexp_lo(attn__vmul(s, half), attn__vmul(attn__vfma(lo, attn__vset1(-0.5f), err), half), 1);
    big_e = attn__vmul(attn__vmul(attn__vmul(t, e), half), e); /* E = erfc(z) / 2 */
    /* x > 0: x (1 - E); x <= 0: x E (0 below -20, where -inf * 0 would be NaN) */
    y = attn__vselect(attn__vgt(x, zero), attn__vmul(x, attn__vsub(one, big_e)),
                      attn__vmul(attn__vmul(attn__vmul(x, half), attn__vmul(t, e)), e));
    y = attn__vselect(attn__vlt(x, attn__vset1(-20.0f)), zero, y);
    return attn__vflush(y);
}

/* GELU, tanh form: x/2 (1 + tanh(u)) = x sigmoid(2u) = x * (u >= 0 ? 1 : w) / (1 + w),
 * w = exp(-|2u|) in (0, 1]: no overflow, no cancellation. */
static inline attn__v attn__vgelu_tanh(attn__v x)
{
    const attn__v one = attn__vset1(1.0f), zero = attn__vzero();
    attn__v x3 = attn__vmul(attn__vmul(x, x), x);
    attn__v u2 = attn__vmul(attn__vfma(x3, attn__vset1(0.044715f), x),
                            attn__vset1(1.59576912160573071f)); /* 2u */
    /* w = h^2, h = exp(-|u|), so that x w stays normal where w alone would underflow */
    attn__v h = attn__vexp(attn__vmul(attn__vabs(u2), attn__vset1(-0.5f)));
    attn__v num = attn__vselect(attn__vlt(u2, zero), attn__vmul(attn__vmul(x, h), h), x);
    attn__v y = attn__vdiv(num, attn__vfma(h, h, one));
    y = attn__vselect(attn__vlt(x, attn__vset1(-20.0f)), zero, y);
    return attn__vflush(y);
}

static inline attn__v attn__vact(attn_act act, attn__v v)
{
    switch (act) {
    case ATTN_ACT_RELU: return attn__vflush(attn__vmax(attn__vzero(), v)); /* NaN stays NaN */
    case ATTN_ACT_GELU: return attn__vgelu_erf(v);
    case ATTN_ACT_GELU_TANH: return attn__vgelu_tanh(v);
    default: return attn__vflush(v);
    }
}

/* y[0..n) = act(x + bias) (bias may be NULL) */
static void attn__act_row(attn_act act, const float *x, const float *bias, float *y, size_t n)
{
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v v = attn__vload(x + i);
        if (bias) v = attn__vadd(v, attn__vload(bias + i));
        attn__vstore(y + i, attn__vact(act, v));
    }
    if (i < n) {
        attn__v v = attn__vload_part(x + i, n - i, 0.0f);
        if (bias) v = attn__vadd(v, attn__vload_part(bias + i, n - i, 0.0f));
        attn__vstore_part(y + i, attn__vact(act, v), n - i);
    }
}

static int attn__act_valid(attn_act act)
{
    return act == ATTN_ACT_NONE || act == ATTN_ACT_RELU || act == ATTN_ACT_GELU ||
           act == ATTN_ACT_GELU_TANH;
}

ATTN_API attn_status attn_activation(attn_act act, const float *x, size_t ldx, float *y,
                                     size_t ldy, size_t rows, size_t n)
{
    attn_status st;
    size_t r;
    if (!x || !y) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(rows, n, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(rows, n, ldy)) != ATTN_OK) return st;
    if (!attn__act_valid(act)) return ATTN_ERR_ARG;
    for (r = 0; r < rows; r++) attn__act_row(act, x + r * ldx, NULL, y + r * ldy, n);
    return ATTN_OK;
}

/* rows x n of y: values below FLT_MIN in magnitude -> 0 */
static void attn__flush_rows(float *y, size_t ldy, size_t rows, size_t n)
{
    size_t r;
    for (r = 0; r < rows; r++) attn__act_row(ATTN_ACT_NONE, y + r * ldy, NULL, y + r * ldy, n);
}

/* ---- workspace carving ---------------------------------------------------------------- */

/* Adds a segment of `bytes` (rounded up to ATTN__ALIGN) to *total; 0 on overflow. */
static int attn__seg(size_t *total, size_t bytes)
{
    const size_t lim = (size_t)PTRDIFF_MAX;
    if (bytes > lim - ATTN__ALIGN) return 0;
    bytes = attn__round_up(bytes, ATTN__ALIGN);
    if (*total > lim - bytes) return 0;
    *total += bytes;
    return 1;
}

/* A segment of rows x cols floats. */
static int attn__seg_f(size_t *total, size_t rows, size_t cols)
{
    size_t n = attn__mul_lim(rows, cols, ATTN__MAX_ELEMS);
    return n <= ATTN__MAX_ELEMS && attn__seg(total, n * sizeof(float));
}

/* The next segment of `bytes` from *cur (aligned base, segments as attn__seg counts them). */
static void *attn__take(unsigned char **cur, size_t bytes)
{
    void *p = *cur;
    *cur += attn__round_up(bytes, ATTN__ALIGN);
    return p;
}

static size_t attn__max3(size_t a, size_t b, size_t c)
{
    size_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* ---- linear ----------------------------------------------------------------------------- */

ATTN_API size_t attn_linear_workspace_size(attn_trans tw, size_t tokens, size_t d_in,
                                           size_t d_out)
{
    return attn_matmul_workspace_size(ATTN_NO_TRANS, tw, tokens, d_out, d_in);
}

ATTN_API attn_status attn_linear(const float *x, size_t ldx, size_t tokens, size_t d_in,
                                 attn_trans tw, const float *w, size_t ldw, const float *bias,
                                 size_t d_out, attn_act act, float *y, size_t ldy,
                                 void *workspace, size_t workspace_size)
{
    attn_status st;
    size_t r;
    if (!x || !w || !y) return ATTN_ERR_NULL;
    if (tw != ATTN_NO_TRANS && tw != ATTN_TRANS) return ATTN_ERR_ARG;
    if ((st = attn__check_mat(tokens, d_in, ldx)) != ATTN_OK) return st;
    if ((st = tw ? attn__check_mat(d_out, d_in, ldw) : attn__check_mat(d_in, d_out, ldw)) != ATTN_OK)
        return st;
    if ((st = attn__check_mat(tokens, d_out, ldy)) != ATTN_OK) return st;
    if (!attn__act_valid(act)) return ATTN_ERR_ARG;
    if (workspace && workspace_size < attn_linear_workspace_size(tw, tokens, d_in, d_out))
        return ATTN_ERR_WORKSPACE;
    st = attn_matmul(ATTN_NO_TRANS, tw, tokens, d_out, d_in, 1.0f, x, ldx, w, ldw, 0.0f, y, ldy,
                     workspace, workspace ? workspace_size : 0);
    if (st != ATTN_OK) return st;
    for (r = 0; r < tokens; r++) attn__act_row(act, y + r * ldy, bias, y + r * ldy, d_out);
    return ATTN_OK;
}

/* ---- feed-forward ----------------------------------------------------------------------- */

static attn_status attn__ffn_check(const attn_ffn_weights *w)
{
    attn_status st;
    if (!w) return ATTN_ERR_NULL;
    if (!w->w1 || !w->w2) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(w->d_model, w->d_ff, w->d_ff)) != ATTN_OK) return st;
    if (!attn__act_valid(w->act)) return ATTN_ERR_ARG;
    return ATTN_OK;
}

/* bytes of attn_ffn's workspace (valid weights), 0 on overflow or tokens 0 */
/* bytes of the matmul workspace of the FFN's two products */
static size_t attn__ffn_mm(const attn_ffn_weights *w, size_t tokens)
{
    size_t a = attn_linear_workspace_size(ATTN_NO_TRANS, tokens, w->d_model, w->d_ff);
    size_t b = attn_linear_workspace_size(ATTN_NO_TRANS, tokens, w->d_ff, w->d_model);
    return a > b ? a : b;
}

static size_t attn__ffn_ws(const attn_ffn_weights *w, size_t tokens)
{
    size_t total = ATTN__ALIGN;
    if (tokens == 0) return 0;
    if (!attn__seg_f(&total, tokens, w->d_ff) || !attn__seg(&total, attn__ffn_mm(w, tokens)))
        return 0;
    return total;
}

ATTN_API size_t attn_ffn_workspace_size(const attn_ffn_weights *w, size_t tokens)
{
    if (attn__ffn_check(w) != ATTN_OK) return 0;
    return attn__ffn_ws(w, tokens);
}

/* the work of attn_ffn on validated arguments and a big enough aligned workspace */
static void attn__ffn_run(const attn_ffn_weights *w, const float *x, size_t ldx, float *y,
                          size_t ldy, size_t tokens, unsigned char *cur)
{
    const size_t mm = attn__ffn_mm(w, tokens);
    float *h = (float *)attn__take(&cur, tokens * w->d_ff * sizeof(float));
    void *mws = mm ? attn__take(&cur, mm) : NULL;
    attn_linear(x, ldx, tokens, w->d_model, ATTN_NO_TRANS, w->w1, w->d_ff, w->b1, w->d_ff,
                w->act, h, w->d_ff, mws, mm);
    attn_linear(h, w->d_ff, tokens, w->d_ff, ATTN_NO_TRANS, w->w2, w->d_model, w->b2,
                w->d_model, ATTN_ACT_NONE, y, ldy, mws, mm);
}

ATTN_API attn_status attn_ffn(const attn_ffn_weights *w, const float *x, size_t ldx, float *y,
                              size_t ldy, size_t tokens, void *workspace,
                              size_t workspace_size)
{
    attn_status st = attn__ffn_check(w);
    size_t need;
    if (st != ATTN_OK) return st;
    if (!x || !y) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(tokens, w->d_model, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(tokens, w->d_model, ldy)) != ATTN_OK) return st;
    if ((need = attn__ffn_ws(w, tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    attn__ffn_run(w, x, ldx, y, ldy, tokens, (unsigned char *)attn__align(workspace));
    return ATTN_OK;
}

/* ---- multi-head attention ---------------------------------------------------------------- */

static attn_status attn__mha_check(const attn_mha_weights *w)
{
    attn_status st;
    if (!w) return ATTN_ERR_NULL;
    if (!w->wq || !w->wk || !w->wv || !w->wo) return ATTN_ERR_NULL;
    if (!w->heads || !w->d_model || w->d_model % w->heads) return ATTN_ERR_SIZE;
    if ((st = attn__check_mat(w->d_model, w->d_model, w->d_model)) != ATTN_OK) return st;
    return ATTN_OK;
}

static attn_attention_params attn__mha_params(const attn_mha_weights *w, size_t lq, size_t lk,
                                              const float *q, const float *k, const float *v,
                                              float *o, int causal)
{
    const size_t dh = w->d_model / w->heads;
    attn_attention_params p = attn_attention_init(1, w->heads, w->heads, lq, lk, dh, dh, q, k,
                                                  v, o, ATTN_LAYOUT_BLHD);
    p.causal = causal ? ATTN_CAUSAL_BOTTOM_RIGHT : ATTN_CAUSAL_NONE;
    return p;
}

/* bytes of the matmul workspace the projections need (the largest of the four products) */
static size_t attn__mha_mm(const attn_mha_weights *w, size_t lq, size_t lk)
{
    const size_t d = w->d_model;
    size_t a = attn_linear_workspace_size(ATTN_NO_TRANS, lq, d, d);
    size_t b = attn_linear_workspace_size(ATTN_NO_TRANS, lk, d, d);
    return a > b ? a : b;
}

/* bytes of attn_mha's workspace (valid weights) without the base alignment; 0 on overflow */
static size_t attn__mha_ws(const attn_mha_weights *w, size_t lq, size_t lk)
{
    attn_attention_params p;
    size_t total = 0;
    if (lq == 0 || lk == 0) return 0;
    p = attn__mha_params(w, lq, lk, NULL, NULL, NULL, NULL, 0);
    if (!attn__seg_f(&total, lq, w->d_model) || !attn__seg_f(&total, lk, w->d_model) ||
        !attn__seg_f(&total, lk, w->d_model) || !attn__seg_f(&total, lq, w->d_model) ||
        !attn__seg(&total, attn_attention_workspace_size(&p)) ||
        !attn__seg(&total, attn__mha_mm(w, lq, lk)))
        return 0;
    return total;
}

ATTN_API size_t attn_mha_workspace_size(const attn_mha_weights *w, size_t q_tokens,
                                        size_t kv_tokens)
{
    size_t t;
    if (attn__mha_check(w) != ATTN_OK) return 0;
    t = attn__mha_ws(w, q_tokens, kv_tokens);
    return t && attn__seg(&t, ATTN__ALIGN) ? t : 0;
}

static void attn__mha_run(const attn_mha_weights *w, const float *xq, size_t ldxq, size_t lq,
                          const float *xkv, size_t ldxkv, size_t lk, int causal, float *y,
                          size_t ldy, unsigned char *cur)
{
    const size_t d = w->d_model, mm = attn__mha_mm(w, lq, lk);
    float *q = (float *)attn__take(&cur, lq * d * sizeof(float));
    float *k = (float *)attn__take(&cur, lk * d * sizeof(float));
    float *v = (float *)attn__take(&cur, lk * d * sizeof(float));
    float *o = (float *)attn__take(&cur, lq * d * sizeof(float));
    attn_attention_params p = attn__mha_params(w, lq, lk, q, k, v, o, causal);
    const size_t aws = attn_attention_workspace_size(&p);
    void *att_ws = attn__take(&cur, aws);
    void *mws = mm ? attn__take(&cur, mm) : NULL;
    attn_linear(xq, ldxq, lq, d, ATTN_NO_TRANS, w->wq, d, w->bq, d, ATTN_ACT_NONE, q, d, mws, mm);
    attn_linear(xkv, ldxkv, lk, d, ATTN_NO_TRANS, w->wk, d, w->bk, d, ATTN_ACT_NONE, k, d, mws, mm);
    attn_linear(xkv, ldxkv, lk, d, ATTN_NO_TRANS, w->wv, d, w->bv, d, ATTN_ACT_NONE, v, d, mws, mm);
    attn_attention(&p, att_ws, aws);
    /* the output of attention is a convex combination of V rows: it may be denormal only
     * where V is; attn_linear flushes y */
    attn_linear(o, d, lq, d, ATTN_NO_TRANS, w->wo, d, w->bo, d, ATTN_ACT_NONE, y, ldy, mws, mm);
}

ATTN_API attn_status attn_mha(const attn_mha_weights *w, const float *xq, size_t ldxq,
                              size_t q_tokens, const float *xkv, size_t ldxkv, size_t kv_tokens,
                              int causal, float *y, size_t ldy, void *workspace,
                              size_t workspace_size)
{
    attn_status st = attn__mha_check(w);
    size_t need;
    if (st != ATTN_OK) return st;
    if (!xq || !xkv || !y) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(q_tokens, w->d_model, ldxq)) != ATTN_OK) return st;
    if ((st = attn__check_mat(kv_tokens, w->d_model, ldxkv)) != ATTN_OK) return st;
    if ((st = attn__check_mat(q_tokens, w->d_model, ldy)) != ATTN_OK) return st;
    if (causal != 0 && causal != 1) return ATTN_ERR_ARG;
    if ((need = attn_mha_workspace_size(w, q_tokens, kv_tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    attn__mha_run(w, xq, ldxq, q_tokens, xkv, ldxkv, kv_tokens, causal, y, ldy,
                  (unsigned char *)attn__align(workspace));
    return ATTN_OK;
}

/* ---- encoder and decoder blocks ------------------------------------------------------------ */

static attn_status attn__block_common(float eps, attn_norm_order norm)
{
    if (!attn__finite(eps) || eps < 0) return ATTN_ERR_ARG;
    if (norm != ATTN_PRE_LN && norm != ATTN_POST_LN) return ATTN_ERR_ARG;
    return ATTN_OK;
}

static attn_status attn__encoder_check(const attn_encoder_weights *w)
{
    attn_status st;
    if (!w) return ATTN_ERR_NULL;
    if ((st = attn__mha_check(&w->attn)) != ATTN_OK) return st;
    if ((st = attn__ffn_check(&w->ffn)) != ATTN_OK) return st;
    if (w->attn.d_model != w->ffn.d_model) return ATTN_ERR_SIZE;
    return attn__block_common(w->eps, w->norm);
}

/* t (tokens x d) plus the largest of the sublayers' workspaces; 0 on overflow */
static size_t attn__encoder_ws(const attn_encoder_weights *w, size_t tokens)
{
    size_t total = ATTN__ALIGN, m = attn__mha_ws(&w->attn, tokens, tokens);
    size_t f = attn__ffn_ws(&w->ffn, tokens);
    if (!m || !f || !attn__seg_f(&total, tokens, w->attn.d_model) ||
        !attn__seg(&total, m > f - ATTN__ALIGN ? m : f - ATTN__ALIGN))
        return 0;
    return total;
}

ATTN_API size_t attn_encoder_workspace_size(const attn_encoder_weights *w, size_t tokens)
{
    if (attn__encoder_check(w) != ATTN_OK || tokens == 0) return 0;
    return attn__encoder_ws(w, tokens);
}

/* rows x n: y = x (row by row; nothing when y is x) */
static void attn__copy_rows(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                            size_t n)
{
    size_t r;
    if (x == y) return;
    for (r = 0; r < rows; r++) memcpy(y + r * ldy, x + r * ldx, n * sizeof(float));
}

ATTN_API attn_status attn_encoder(const attn_encoder_weights *w, const float *x, size_t ldx,
                                  float *y, size_t ldy, size_t tokens, int causal,
                                  void *workspace, size_t workspace_size)
{
    attn_status st = attn__encoder_check(w);
    size_t need, d;
    unsigned char *cur, *sub;
    float *t;
    if (st != ATTN_OK) return st;
    d = w->attn.d_model;
    if (!x || !y) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(tokens, d, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(tokens, d, ldy)) != ATTN_OK) return st;
    if (causal != 0 && causal != 1) return ATTN_ERR_ARG;
    if ((need = attn__encoder_ws(w, tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    cur = (unsigned char *)attn__align(workspace);
    t = (float *)attn__take(&cur, tokens * d * sizeof(float));
    sub = cur; /* the sublayers' workspace, aligned */
    if (w->norm == ATTN_PRE_LN) {
        attn__copy_rows(x, ldx, y, ldy, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->attn, t, d, tokens, t, d, tokens, causal, t, d, sub);
        attn_add(y, ldy, t, d, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, t, d, t, d, tokens, sub);
        attn_add(y, ldy, t, d, tokens, d);
    } else {
        attn__mha_run(&w->attn, x, ldx, tokens, x, ldx, tokens, causal, t, d, sub);
        attn_add(t, d, x, ldx, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, y, ldy, t, d, tokens, sub);
        attn_add(t, d, y, ldy, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
    }
    attn__flush_rows(y, ldy, tokens, d);
    return ATTN_OK;
}

static attn_status attn__decoder_check(const attn_decoder_weights *w)
{
    attn_status st;
    if (!w) return ATTN_ERR_NULL;
    if ((st = attn__mha_check(&w->self_attn)) != ATTN_OK) return st;
    if ((st = attn__mha_check(&w->cross_attn)) != ATTN_OK) return st;
    if ((st = attn__ffn_check(&w->ffn)) != ATTN_OK) return st;
    if (w->self_attn.d_model != w->ffn.d_model || w->cross_attn.d_model != w->ffn.d_model)
        return ATTN_ERR_SIZE;
    return attn__block_common(w->eps, w->norm);
}

static size_t attn__decoder_ws(const attn_decoder_weights *w, size_t tokens, size_t mem_tokens)
{
    size_t total = ATTN__ALIGN, s = attn__mha_ws(&w->self_attn, tokens, tokens);
    size_t c = attn__mha_ws(&w->cross_attn, tokens, mem_tokens), f = attn__ffn_ws(&w->ffn, tokens);
    if (!s || !c || !f || !attn__seg_f(&total, tokens, w->ffn.d_model) ||
        !attn__seg(&total, attn__max3(s, c, f - ATTN__ALIGN)))
        return 0;
    return total;
}

ATTN_API size_t attn_decoder_workspace_size(const attn_decoder_weights *w, size_t tokens,
                                            size_t mem_tokens)
{
    if (attn__decoder_check(w) != ATTN_OK || tokens == 0 || mem_tokens == 0) return 0;
    return attn__decoder_ws(w, tokens, mem_tokens);
}

ATTN_API attn_status attn_decoder(const attn_decoder_weights *w, const float *x, size_t ldx,
                                  float *y, size_t ldy, size_t tokens, const float *mem,
                                  size_t ldmem, size_t mem_tokens, void *workspace,
                                  size_t workspace_size)
{
    attn_status st = attn__decoder_check(w);
    size_t need, d;
    unsigned char *cur, *sub;
    float *t;
    if (st != ATTN_OK) return st;
    d = w->ffn.d_model;
    if (!x || !y || !mem) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(tokens, d, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(tokens, d, ldy)) != ATTN_OK) return st;
    if ((st = attn__check_mat(mem_tokens, d, ldmem)) != ATTN_OK) return st;
    if ((need = attn__decoder_ws(w, tokens, mem_tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    cur = (unsigned char *)attn__align(workspace);
    t = (float *)attn__take(&cur, tokens * d * sizeof(float));
    sub = cur;
    if (w->norm == ATTN_PRE_LN) {
        attn__copy_rows(x, ldx, y, ldy, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->self_attn, t, d, tokens, t, d, tokens, 1, t, d, sub);
        attn_add(y, ldy, t, d, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->cross_attn, t, d, tokens, mem, ldmem, mem_tokens, 0, t, d, sub);
        attn_add(y, ldy, t, d, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln3_gamma, w->ln3_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, t, d, t, d, tokens, sub);
        attn_add(y, ldy, t, d, tokens, d);
    } else {
        attn__mha_run(&w->self_attn, x, ldx, tokens, x, ldx, tokens, 1, t, d, sub);
        attn_add(t, d, x, ldx, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->cross_attn, y, ldy, tokens, mem, ldmem, mem_tokens, 0, t, d, sub);
        attn_add(t, d, y, ldy, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, y, ldy, t, d, tokens, sub);
        attn_add(t, d, y, ldy, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln3_gamma, w->ln3_beta, w->eps, NULL, NULL);
    }
    attn__flush_rows(y, ldy, tokens, d);
    return ATTN_OK;
}

/* ---- parameter counts ------------------------------------------------------------------- */

/* *acc += a * b (SIZE_MAX limit); 0 on overflow */
static int attn__count_add(size_t *acc, size_t a, size_t b)
{
    size_t t = attn__mul_lim(a, b, (size_t)-1 - 1);
    if (t == (size_t)-1 || *acc > (size_t)-1 - 1 - t) return 0;
    *acc += t;
    return 1;
}

static attn_status attn__param_count(size_t d, size_t heads, size_t dff, size_t n_attn,
                                     size_t n_ln, attn_param_count *c)
{
    attn_param_count r;
    size_t dd;
    if (!c) return ATTN_ERR_NULL;
    if (!d || !heads || !dff || d % heads) return ATTN_ERR_SIZE;
    memset(&r, 0, sizeof r);
    dd = attn__mul_lim(d, d, (size_t)-1 - 1);
    if (dd == (size_t)-1 || !attn__count_add(&r.attention_weights, 4 * n_attn, dd) ||
        !attn__count_add(&r.attention_biases, 4 * n_attn, d) ||
        !attn__count_add(&r.ffn_weights, 2 * d, dff) || !attn__count_add(&r.ffn_biases, 1, dff) ||
        !attn__count_add(&r.ffn_biases, 1, d) || !attn__count_add(&r.layernorm, 2 * n_ln, d) ||
        !attn__count_add(&r.total, 1, r.attention_weights) ||
        !attn__count_add(&r.total, 1, r.attention_biases) ||
        !attn__count_add(&r.total, 1, r.ffn_weights) ||
        !attn__count_add(&r.total, 1, r.ffn_biases) || !attn__count_add(&r.total, 1, r.layernorm))
        return ATTN_ERR_OVERFLOW;
    *c = r;
    return ATTN_OK;
}

ATTN_API attn_status attn_encoder_param_count(size_t d_model, size_t heads, size_t d_ff,
                                              attn_param_count *count)
{
    return attn__param_count(d_model, heads, d_ff, 1, 2, count);
}

ATTN_API attn_status attn_decoder_param_count(size_t d_model, size_t heads, size_t d_ff,
                                              attn_param_count *count)
{
    return attn__param_count(d_model, heads, d_ff, 2, 3, count);
}

/* ---- floating-point environment: flush denormals to zero --------------------------------
 * The only per-ISA code outside simd/: the control registers differ. */
#ifdef __cplusplus
}
#endif
#if defined(__SSE__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 1)
#include <xmmintrin.h>
#define ATTN__FTZ_X86 1
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define ATTN__FTZ_A64 1
#endif
#ifdef __cplusplus
extern "C" {
#endif

ATTN_API int attn_denormals_flush_supported(void)
{
#if defined(ATTN__FTZ_X86) || defined(ATTN__FTZ_A64)
    return 1;
#else
    return 0;
#endif
}

ATTN_API attn_status attn_denormals_flush_begin(attn_fp_state *state)
{
    if (!state) return ATTN_ERR_NULL;
#if defined(ATTN__FTZ_X86)
    {
        const unsigned int csr = _mm_getcsr();
        state->saved = csr;
        state->active = 1;
        _mm_setcsr(csr | (1u << 15) | (1u << 6)); /* FTZ, DAZ */
    }
#elif defined(ATTN__FTZ_A64)
    {
        uint64_t fpcr;
        __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr) : : "memory");
        state->saved = fpcr;
        state->active = 1;
        fpcr |= (uint64_t)1 << 24; /* FZ */
        __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr) : "memory");
    }
#else
    state->saved = 0;
    state->active = 0;
#endif
    return ATTN_OK;
}

ATTN_API attn_status attn_denormals_flush_end(const attn_fp_state *state)
{
    if (!state) return ATTN_ERR_NULL;
    if (!state->active) return ATTN_OK;
#if defined(ATTN__FTZ_X86)
    _mm_setcsr((unsigned int)state->saved);
#elif defined(ATTN__FTZ_A64)
    {
        const uint64_t fpcr = state->saved;
        __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr) : "memory");
    }
#endif
    return ATTN_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* ATTN_IMPLEMENTATION */
