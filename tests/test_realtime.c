/* test_realtime.c - the real-time guarantees of attn.h, proven by measurement:
 *
 *  1. No allocation. This program defines malloc, calloc, realloc, free, posix_memalign,
 *     aligned_alloc and memalign itself (forwarding to glibc's __libc_* entry points), so
 *     every allocation in the process, including libc's own (strdup, printf), is counted.
 *     Then it calls every public function of attn.h (valid calls along every main path,
 *     and error calls) inside a counting window and asserts that nothing was allocated or
 *     freed. Two self-checks prove the counting works: a deliberate malloc + free and a
 *     strdup inside a window must be counted. The public functions are read from attn.h
 *     itself (every "ATTN_API ... name(" declaration; the header's path is argv[1]) and each
 *     must be covered by an entry of the call table below, so a new function that is not
 *     added here fails this test. Under AddressSanitizer (which replaces malloc) the
 *     interposition is not compiled and this part is skipped with a note; on a C library
 *     other than glibc too.
 *  2. No denormals. attn_denormals_flush_begin/end: after begin, FLT_MIN * 0.5 (a denormal
 *     result) is 0 and a denormal input reads as 0; after end both are back; nesting
 *     restores each level. The kernels documented never to return a denormal (softmax,
 *     activation, linear, ffn, mha, encoder, decoder) get inputs that produce denormal
 *     intermediates and must return none; the ones documented as able to (layernorm,
 *     rmsnorm, matmul, attention, add, positional encoding with add) must return one
 *     for those inputs without the flush (the documentation is accurate) and none inside
 *     begin/end.
 *  3. Bounded stack. Every call table entry runs on a fresh thread whose stack is a buffer
 *     this program painted (two patterns, the larger depth counts); the bytes touched,
 *     minus those of an empty entry, are each entry's stack use. Measured for small and
 *     large problem sizes: the use must not grow with the sizes (no VLAs, no alloca) and
 *     must stay below STACK_LIMIT. The table is printed. Skipped under AddressSanitizer
 *     (its redzones change the frames and its shadow memory forbids the scan).
 *     Run a second time as realtime_far (--far after the header's path): every softmax call
 *     takes the paths for calls far out of the caches, whose 16 KiB scratch (AVX2) is held
 *     to STACK_LIMIT = 20 KiB there.
 */
#define _POSIX_C_SOURCE 200809L
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"

/* ARMv7's NEON flushes every denormal result: no vector kernel on it returns one */
#if defined(__ARM_NEON) && !defined(__aarch64__) && !defined(ATTN_NO_SIMD)
#define NEON32_FLUSHES 1
#else
#define NEON32_FLUSHES 0
#endif

/* the softmax path under test: attn_softmax's own, or (--far) the far ones */
static int sm_path = ATTN__SM_AUTO;
#define attn_softmax(x, ldx, y, ldy, rows, n, s)                                            \
    attn__softmax_path(x, ldx, y, ldy, rows, n, s, sm_path)

#include <float.h>
#include <pthread.h>
#include <stdint.h>

#if defined(__SANITIZE_ADDRESS__)
#define RT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RT_ASAN 1
#endif
#endif
#ifndef RT_ASAN
#define RT_ASAN 0
#endif

#if !RT_ASAN && defined(__GLIBC__)
#define RT_INTERPOSE 1
#else
#define RT_INTERPOSE 0
#endif

#ifndef STACK_LIMIT
/* bytes; the largest measured use is printed. --far: 20 KiB (softmax's scratch) */
#define STACK_LIMIT (sm_path == ATTN__SM_FAR_PATH ? 20 * 1024 : 16 * 1024)
#endif
/* large problems may take other code paths (packed vs in place; matrix-vector products of
 * up to 8 rows vs tiles; attention's fused tiles vs its decode rows) with frames up to this
 * much larger (AVX-512's 64-byte vectors: a tile's buffers twice as large, so more);
 * a VLA or alloca sized by the problem (rows of 160 floats = 640 bytes and up) still fails
 * on the narrower paths */
#define STACK_SLACK (ATTN__VW > 8 ? 3072 : 384)

/* ---- the allocator, counted --------------------------------------------------------------- */

#if RT_INTERPOSE
static volatile int rt_counting;
static volatile long rt_allocs;

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

void *malloc(size_t n);
void *calloc(size_t n, size_t s);
void *realloc(void *p, size_t n);
void free(void *p);
int posix_memalign(void **out, size_t align, size_t n);
void *aligned_alloc(size_t align, size_t n);
void *memalign(size_t align, size_t n);

void *malloc(size_t n)
{
    if (rt_counting) rt_allocs++;
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t s)
{
    if (rt_counting) rt_allocs++;
    return __libc_calloc(n, s);
}
void *realloc(void *p, size_t n)
{
    if (rt_counting) rt_allocs++;
    return __libc_realloc(p, n);
}
void free(void *p)
{
    if (rt_counting && p) rt_allocs++;
    __libc_free(p);
}
int posix_memalign(void **out, size_t align, size_t n)
{
    void *p;
    if (rt_counting) rt_allocs++;
    if (align < sizeof(void *) || (align & (align - 1))) return 22; /* EINVAL */
    p = __libc_memalign(align, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}
void *aligned_alloc(size_t align, size_t n)
{
    if (rt_counting) rt_allocs++;
    return __libc_memalign(align, n);
}
void *memalign(size_t align, size_t n)
{
    if (rt_counting) rt_allocs++;
    return __libc_memalign(align, n);
}
#endif

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* ---- the problems every call works on ------------------------------------------------------- */

#define MAXF (160 * 160)

static int big; /* 0: small sizes, 1: large sizes */
static long bad_status; /* calls that returned something other than expected */
static float *bx, *by, *bz, *bm, *bw; /* MAXF floats each */
static unsigned char *bws;            /* workspace */
static size_t bws_size;
static uint8_t *bbool;
static int64_t klen[2];

typedef struct level {
    size_t T, d, heads, dff, M;
    attn_encoder_weights enc_pre, enc_post;
    attn_decoder_weights dec_pre, dec_post;
    attn_decoder_only_weights dec_only; /* 16-bit weights, RMSNorm, RoPE, SwiGLU, GQA */
    float *kc, *vc;                     /* its bf16 cache: 2 T positions */
} level;
static level lv[2];

static float *rnd(size_t n, float s)
{
    float *p = (float *)xmalloc(n * sizeof(float));
    size_t i;
    for (i = 0; i < n; i++) p[i] = check_uniform(-s, s);
    return p;
}

static void *owned[256];
static size_t n_owned;
static float *keep(float *p)
{
    owned[n_owned++] = p;
    return p;
}

static attn_mha_weights mk_mha(size_t d, size_t h)
{
    attn_mha_weights w;
    const float s = 1.0f / sqrtf((float)d);
    memset(&w, 0, sizeof w); /* wtype ATTN_F32 */
    w.d_model = d, w.heads = h;
    w.wq = keep(rnd(d * d, s)), w.wk = keep(rnd(d * d, s)), w.wv = keep(rnd(d * d, s)),
    w.wo = keep(rnd(d * d, s));
    w.bq = keep(rnd(d, 0.1f)), w.bk = keep(rnd(d, 0.1f)), w.bv = keep(rnd(d, 0.1f)),
    w.bo = keep(rnd(d, 0.1f));
    return w;
}

static attn_ffn_weights mk_ffn(size_t d, size_t dff, attn_act act)
{
    attn_ffn_weights w;
    memset(&w, 0, sizeof w); /* wtype ATTN_F32 */
    w.d_model = d, w.d_ff = dff, w.act = act;
    w.w1 = keep(rnd(d * dff, 1.0f / sqrtf((float)d))), w.b1 = keep(rnd(dff, 0.1f));
    w.w2 = keep(rnd(dff * d, 1.0f / sqrtf((float)dff))), w.b2 = keep(rnd(d, 0.1f));
    return w;
}

/* a din -> dout weight of type t, stored transposed when tr (PyTorch's layout) */
static attn_matrix mk_mat(size_t din, size_t dout, attn_dtype t, attn_trans tr)
{
    attn_matrix m;
    float *f = keep(rnd(din * dout, 1.0f / sqrtf((float)din)));
    float *h = keep((float *)xmalloc(din * dout * sizeof(float)));
    memset(&m, 0, sizeof m);
    if (attn_convert(t, h, ATTN_F32, f, din * dout) != ATTN_OK) bad_status++;
    m.w = h, m.type = t, m.trans = tr, m.ld = tr ? din : dout;
    return m;
}

static void mk_dec_only(level *L)
{
    attn_decoder_only_weights *w = &L->dec_only;
    const size_t d = L->d, hd = L->d / L->heads, kvh = L->heads / 2;
    memset(w, 0, sizeof *w);
    w->d_model = d, w->heads = L->heads, w->kv_heads = kvh, w->head_dim = hd, w->d_ff = L->dff;
    w->wq = mk_mat(d, d, ATTN_F16, ATTN_TRANS), w->wk = mk_mat(d, kvh * hd, ATTN_F16, ATTN_TRANS);
    w->wv = mk_mat(d, kvh * hd, ATTN_BF16, ATTN_NO_TRANS);
    w->wo = mk_mat(d, d, ATTN_BF16, ATTN_TRANS);
    w->w_gate = mk_mat(d, L->dff, ATTN_F16, ATTN_TRANS);
    w->w_up = mk_mat(d, L->dff, ATTN_F16, ATTN_NO_TRANS);
    w->w_down = mk_mat(L->dff, d, ATTN_F32, ATTN_TRANS);
    w->act = ATTN_ACT_SILU, w->norm = ATTN_NORM_RMS, w->eps = 1e-6f;
    w->attn_norm = keep(rnd(d, 1.0f)), w->ffn_norm = keep(rnd(d, 1.0f));
    w->rope.head_dim = hd, w->rope.pairing = ATTN_ROPE_HALVES;
    L->kc = keep((float *)xmalloc(2 * L->T * kvh * hd * sizeof(float)));
    L->vc = keep((float *)xmalloc(2 * L->T * kvh * hd * sizeof(float)));
}

static void setup_level(level *L, size_t T, size_t d, size_t heads, size_t dff, size_t M)
{
    L->T = T, L->d = d, L->heads = heads, L->dff = dff, L->M = M;
    L->enc_pre.attn = mk_mha(d, heads);
    L->enc_pre.ffn = mk_ffn(d, dff, ATTN_ACT_GELU);
    L->enc_pre.ln1_gamma = keep(rnd(d, 1.0f)), L->enc_pre.ln1_beta = keep(rnd(d, 0.1f));
    L->enc_pre.ln2_gamma = keep(rnd(d, 1.0f)), L->enc_pre.ln2_beta = keep(rnd(d, 0.1f));
    L->enc_pre.eps = 1e-5f, L->enc_pre.norm = ATTN_PRE_LN;
    L->enc_post = L->enc_pre;
    L->enc_post.norm = ATTN_POST_LN;
    L->enc_post.ffn.act = ATTN_ACT_GELU_TANH;
    L->dec_pre.self_attn = mk_mha(d, heads);
    L->dec_pre.cross_attn = mk_mha(d, heads);
    L->dec_pre.ffn = mk_ffn(d, dff, ATTN_ACT_RELU);
    L->dec_pre.ln1_gamma = NULL, L->dec_pre.ln1_beta = NULL;
    L->dec_pre.ln2_gamma = keep(rnd(d, 1.0f)), L->dec_pre.ln2_beta = keep(rnd(d, 0.1f));
    L->dec_pre.ln3_gamma = keep(rnd(d, 1.0f)), L->dec_pre.ln3_beta = NULL;
    L->dec_pre.eps = 1e-6f, L->dec_pre.norm = ATTN_PRE_LN;
    L->dec_post = L->dec_pre;
    L->dec_post.norm = ATTN_POST_LN;
    mk_dec_only(L);
}

#define OK(call) do { if ((call) != ATTN_OK) bad_status++; } while (0)
#define ERR(call) do { if ((call) == ATTN_OK) bad_status++; } while (0)
#define CUR (&lv[big])

/* ---- the call table: every public function --------------------------------------------------- */

#if !RT_ASAN
static void c_empty(void) {}
#endif

static void c_ident(void)
{
    int s;
    for (s = 1; s >= -8; s--)
        if (!attn_status_string((attn_status)s)) bad_status++;
    if (!attn_isa() || !attn_exp_impl()) bad_status++;
    if (attn_use_isa(attn_isa()) != ATTN_OK || attn_use_isa("nonsense") != ATTN_ERR_ARG)
        bad_status++;
}

static void c_softmax(void)
{
    const size_t r = CUR->T, n = CUR->d;
    OK(attn_softmax(bx, n, by, n, r, n, 1.0f));
    OK(attn_softmax(bx, n, by, n, r, n, -0.5f));
    /* rows past the short-row kernel's reach (64 on AVX2, 32 on NEON, 8 scalar) */
    OK(attn_softmax(bx, 100, by, 100, r, 100, 1.0f));
    ERR(attn_softmax(NULL, n, by, n, r, n, 1.0f));
}

static void c_layernorm(void)
{
    const size_t r = CUR->T, n = CUR->d;
    OK(attn_layernorm(bx, n, by, n, r, n, bw, bw + n, 1e-5f, bz, bz + r));
    OK(attn_layernorm(bx, n, by, n, r, n, NULL, NULL, 1e-5f, NULL, NULL));
    ERR(attn_layernorm(bx, n, by, n, r, n, NULL, NULL, -1.0f, NULL, NULL));
}

static void c_rmsnorm(void)
{
    const size_t r = CUR->T, n = CUR->d;
    OK(attn_rmsnorm(bx, n, by, n, r, n, bw, 1e-5f));
    ERR(attn_rmsnorm(bx, n - 1, by, n, r, n, bw, 1e-5f));
}

static void c_add_pe(void)
{
    const size_t r = CUR->T, n = CUR->d;
    OK(attn_add(by, n, bx, n, r, n));
    ERR(attn_add(by, n, bx, n, r, 0));
    OK(attn_positional_encoding(by, n, r, n, 3, 0));
    OK(attn_positional_encoding(by, n, r, n, 0, 1));
    ERR(attn_positional_encoding(NULL, n, r, n, 0, 1));
}

static void c_matmul(void)
{
    const size_t m = CUR->T, n = CUR->d, k = CUR->dff / 2;
    int ta, tb;
    for (ta = 0; ta < 2; ta++)
        for (tb = 0; tb < 2; tb++) {
            size_t need = attn_matmul_workspace_size((attn_trans)ta, (attn_trans)tb, m, n, k);
            OK(attn_matmul((attn_trans)ta, (attn_trans)tb, m, n, k, 1.0f, bx, ta ? m : k, bw,
                           tb ? k : n, 0.5f, by, n, NULL, 0));
            if (need > bws_size) bad_status++;
            OK(attn_matmul((attn_trans)ta, (attn_trans)tb, m, n, k, 1.0f, bx, ta ? m : k, bw,
                           tb ? k : n, 0.0f, by, n, bws, need));
        }
    OK(attn_matmul(ATTN_NO_TRANS, ATTN_NO_TRANS, m, n, 0, 1.0f, bx, 1, bw, n, 2.0f, by, n, NULL,
                   0));
    /* B in 16 bits (bw's bytes read as f16 / bf16): the matrix-vector and packed paths */
    OK(attn_matmul_typed(ATTN_NO_TRANS, ATTN_TRANS, m, n, k, 1.0f, bx, k, ATTN_F16, bw, k, 0.0f, by,
                         n, NULL, 0));
    OK(attn_matmul_typed(ATTN_NO_TRANS, ATTN_NO_TRANS, m, n, k, 1.0f, bx, k, ATTN_BF16, bw, n, 0.0f,
                         by, n, bws,
                         attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_NO_TRANS, m, n, k)));
    ERR(attn_matmul(ATTN_NO_TRANS, (attn_trans)3, m, n, k, 1.0f, bx, k, bw, n, 0.0f, by, n, NULL,
                    0));
    /* B in q8_0 / q4_0 blocks (bw's bytes, k = 32): the streaming and packed paths */
    OK(attn_matmul_typed(ATTN_NO_TRANS, ATTN_TRANS, m, n, 32, 1.0f, bx, 32, ATTN_Q8_0, bw, 32, 0.0f,
                         by, n, NULL, 0));
    OK(attn_matmul_typed(ATTN_NO_TRANS, ATTN_TRANS, m, n, 32, 1.0f, bx, 32, ATTN_Q4_0, bw, 32, 0.0f,
                         by, n, bws,
                         attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_TRANS, m, n, 32)));
    ERR(attn_matmul_typed(ATTN_NO_TRANS, ATTN_NO_TRANS, m, n, 32, 1.0f, bx, 32, ATTN_Q8_0, bw, n,
                          0.0f, by, n, NULL, 0));
    /* int8 products: A quantized into the workspace, B's blocks repacked there */
    if (attn_matmul_int8_workspace_size(m, n, 64) > bws_size) bad_status++;
    OK(attn_matmul_int8(m, n, 64, 1.0f, bx, 64, ATTN_Q8_0, bw, 64, 0.0f, by, n, bws,
                        attn_matmul_int8_workspace_size(m, n, 64)));
    OK(attn_matmul_int8(m, n, 32, 1.0f, bx, 32, ATTN_Q4_0, bw, 32, 0.5f, by, n, bws,
                        attn_matmul_int8_workspace_size(m, n, 32)));
    ERR(attn_matmul_int8(m, n, 32, 1.0f, bx, 32, ATTN_Q8_0, bw, 32, 0.0f, by, n, NULL, 0));
}

static void c_attention(void)
{
    const size_t L = CUR->T, dh = CUR->d / CUR->heads;
    attn_attention_params p =
        attn_attention_init(2, CUR->heads, 1, L, L + 3, dh, dh, bx, bw, bm, by, ATTN_LAYOUT_BHLD);
    size_t need = attn_attention_workspace_size(&p);
    if (need > bws_size) bad_status++;
    OK(attn_attention(&p, bws, need));
    p.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    p.softcap = 5.0f;
    p.mask = bz, p.mask_sq = L + 3;
    p.bool_mask = bbool, p.bmask_sq = L + 3;
    p.key_lengths = klen;
    OK(attn_attention(&p, bws, need));
    p.causal = ATTN_CAUSAL_OFFSET, p.causal_offset = -1;
    OK(attn_attention(&p, bws, need));
    ERR(attn_attention(&p, bws, need - 1));
    ERR(attn_attention(NULL, bws, need));
    { /* ALiBi, a sliding window and sinks (per head, at most 64 heads here) */
        static float slopes[64], sinks[64];
        size_t h;
        if (CUR->heads > 64) bad_status++;
        OK(attn_alibi_slopes(CUR->heads, slopes));
        ERR(attn_alibi_slopes(0, slopes));
        for (h = 0; h < CUR->heads; h++) sinks[h] = h % 2 ? -INFINITY : 0.5f;
        p.alibi_slopes = slopes, p.sinks = sinks, p.window = 3;
        OK(attn_attention(&p, bws, need));
        p.mask = NULL, p.bool_mask = NULL, p.softcap = 0.0f; /* the decode rows path */
        p.q_len = 1;
        OK(attn_attention(&p, bws, need));
    }
}

/* the job-system split and the KV cache: a cache in bm/bz, appended from bx/bw */
static void c_attention_tasks_kv(void)
{
    const size_t L = CUR->T, dh = CUR->d / CUR->heads, cap = L + 3;
    attn_attention_params p =
        attn_attention_init(2, CUR->heads, 1, L, L + 3, dh, dh, bx, bw, bm, by, ATTN_LAYOUT_BHLD);
    size_t need = attn_attention_workspace_size(&p), t, nt = attn_attention_tasks(&p);
    attn_kv_cache c;
    if (attn_attention_query_tile() == 0 || nt == 0) bad_status++;
    p.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    for (t = 0; t < nt; t++) OK(attn_attention_task(&p, t, bws, need));
    ERR(attn_attention_task(&p, nt, bws, need));
    OK(attn_kv_cache_init(&c, bm, bz, 2, 1, cap, dh, dh));
    OK(attn_kv_cache_append(&c, L, bx, bw, ATTN_LAYOUT_BHLD));
    OK(attn_kv_cache_append(&c, 1, bx, bw, ATTN_LAYOUT_BLHD));
    ERR(attn_kv_cache_append(&c, 3, bx, bw, ATTN_LAYOUT_BHLD));
    p = attn_attention_init_kv(&c, CUR->heads, 1, bx, by, ATTN_LAYOUT_BHLD,
                               ATTN_CAUSAL_BOTTOM_RIGHT);
    OK(attn_attention(&p, bws, attn_attention_workspace_size(&p)));
    ERR(attn_kv_cache_init(&c, NULL, bz, 2, 1, cap, dh, dh));
    OK(attn_kv_cache_init_type(&c, ATTN_F16, bm, bz, 2, 1, cap, dh, dh)); /* 16-bit cache */
    OK(attn_kv_cache_append(&c, L, bx, bw, ATTN_LAYOUT_BHLD));
    p = attn_attention_init_kv(&c, CUR->heads, 1, bx, by, ATTN_LAYOUT_BHLD,
                               ATTN_CAUSAL_BOTTOM_RIGHT);
    OK(attn_attention(&p, bws, attn_attention_workspace_size(&p)));
    ERR(attn_kv_cache_init_type(&c, (attn_dtype)7, bm, bz, 2, 1, cap, dh, dh));
    OK(attn_kv_cache_init_ring(&c, ATTN_BF16, bm, bz, 2, 1, cap, dh, dh)); /* a ring, wrapped */
    OK(attn_kv_cache_append(&c, L, bx, bw, ATTN_LAYOUT_BHLD));
    OK(attn_kv_cache_append(&c, 4, bx, bw, ATTN_LAYOUT_BLHD)); /* one past the capacity */
    p = attn_attention_init_kv(&c, CUR->heads, 1, bx, by, ATTN_LAYOUT_BHLD,
                               ATTN_CAUSAL_BOTTOM_RIGHT);
    if (p.kv_start == 0) bad_status++;
    OK(attn_attention(&p, bws, attn_attention_workspace_size(&p)));
}

static void c_activation(void)
{
    int a;
    for (a = 0; a < 5; a++)
        OK(attn_activation((attn_act)a, bx, CUR->d, by, CUR->d, CUR->T, CUR->d));
    OK(attn_activation(ATTN_ACT_GELU, by, CUR->d, by, CUR->d, CUR->T, CUR->d));
    ERR(attn_activation((attn_act)5, bx, CUR->d, by, CUR->d, CUR->T, CUR->d));
    OK(attn_glu(ATTN_ACT_SILU, bx, CUR->d, bx, CUR->d, by, CUR->d, CUR->T, CUR->d));
    ERR(attn_glu((attn_act)5, bx, CUR->d, bx, CUR->d, by, CUR->d, CUR->T, CUR->d));
}

static void c_linear(void)
{
    const size_t T = CUR->T, din = CUR->d, dout = CUR->dff;
    int tw;
    for (tw = 0; tw < 2; tw++) {
        size_t need = attn_linear_workspace_size((attn_trans)tw, T, din, dout);
        if (need > bws_size) bad_status++;
        OK(attn_linear(bx, din, T, din, (attn_trans)tw, bw, tw ? din : dout, bz, dout,
                       ATTN_ACT_GELU, by, dout, NULL, 0));
        OK(attn_linear(bx, din, T, din, (attn_trans)tw, bw, tw ? din : dout, NULL, dout,
                       ATTN_ACT_RELU, by, dout, bws, need));
    }
    ERR(attn_linear(bx, din, T, din, ATTN_NO_TRANS, bw, dout, NULL, dout, (attn_act)-2, by, dout,
                    NULL, 0));
    OK(attn_linear_typed(bx, din, T, din, ATTN_TRANS, ATTN_BF16, bw, din, bz, dout, ATTN_ACT_GELU,
                         by, dout, NULL, 0));
}

static void c_ffn(void)
{
    const attn_ffn_weights *w = &CUR->enc_pre.ffn;
    size_t need = attn_ffn_workspace_size(w, CUR->T);
    if (need == 0 || need > bws_size) bad_status++;
    OK(attn_ffn(w, bx, CUR->d, by, CUR->d, CUR->T, bws, need));
    OK(attn_ffn(&CUR->enc_post.ffn, by, CUR->d, by, CUR->d, CUR->T, bws, need));
    ERR(attn_ffn(w, bx, CUR->d, by, CUR->d, CUR->T, bws, need - 1));
}

static void c_mha(void)
{
    const attn_mha_weights *w = &CUR->enc_pre.attn;
    const size_t d = CUR->d;
    size_t need = attn_mha_workspace_size(w, CUR->T, CUR->M);
    size_t need_self = attn_mha_workspace_size(w, CUR->T, CUR->T);
    if (need == 0 || need > bws_size || need_self > bws_size) bad_status++;
    OK(attn_mha(w, bx, d, CUR->T, bm, d, CUR->M, 0, by, d, bws, need));
    OK(attn_mha(w, bx, d, CUR->T, bx, d, CUR->T, 1, by, d, bws, need_self));
    ERR(attn_mha(w, bx, d, CUR->T, bx, d, CUR->T, 7, by, d, bws, need_self));
}

/* the blocks with options: key masks, a bf16 cache in kc (2 T positions of d), a ring */
static void c_blocks_ex(void)
{
    const size_t d = CUR->d, T = CUR->T, M = CUR->M, dh = d / CUR->heads;
    size_t need = attn_encoder_workspace_size(&CUR->enc_pre, T);
    size_t need1 = attn_decoder_workspace_size(&CUR->dec_pre, 1, 0);
    size_t needd = attn_decoder_workspace_size(&CUR->dec_pre, 1, M);
    size_t needm = attn_mha_workspace_size(&CUR->enc_pre.attn, T, M);
    attn_block_options o;
    attn_kv_cache c, mc;
    memset(&o, 0, sizeof o);
    o.key_mask = bbool;
    OK(attn_mha_ex(&CUR->enc_pre.attn, bx, d, T, bm, d, M, 0, &o, by, d, bws, needm));
    OK(attn_kv_cache_init_type(&c, ATTN_BF16, CUR->kc, CUR->vc, 1, CUR->heads, 2 * T, dh, dh));
    o.cache = &c;
    OK(attn_encoder_ex(&CUR->enc_pre, bx, d, by, d, T, 1, &o, bws, need)); /* prefill */
    OK(attn_encoder_ex(&CUR->enc_post, by, d, by, d, 1, 1, &o, bws, need)); /* decode */
    c.len = 2 * T;
    ERR(attn_encoder_ex(&CUR->enc_pre, bx, d, by, d, 1, 1, &o, bws, need)); /* full */
    OK(attn_kv_cache_init_ring(&c, ATTN_F16, CUR->kc, CUR->vc, 1, CUR->heads, T, dh, dh));
    o.key_mask = NULL, o.window = 2;
    OK(attn_encoder_ex(&CUR->enc_pre, bx, d, by, d, T - 1, 1, &o, bws, need));
    OK(attn_encoder_ex(&CUR->enc_pre, by, d, by, d, 1, 1, &o, bws, need));
    OK(attn_encoder_ex(&CUR->enc_pre, by, d, by, d, 1, 1, &o, bws, need)); /* wraps */
    /* a decoder with a self cache and the memory's K and V cached once: the first half of
     * kc / vc, and the second */
    OK(attn_kv_cache_init_type(&c, ATTN_BF16, CUR->kc, CUR->vc, 1, CUR->heads, T, dh, dh));
    OK(attn_kv_cache_init_type(&mc, ATTN_BF16, CUR->kc + T * d / 2, CUR->vc + T * d / 2, 1,
                               CUR->heads, M, dh, dh));
    o.window = 0, o.mem_cache = &mc, o.mem_mask = bbool;
    OK(attn_decoder_ex(&CUR->dec_pre, bx, d, by, d, 1, 1, bm, d, M, &o, bws, needd));
    OK(attn_decoder_ex(&CUR->dec_post, by, d, by, d, 1, 0, NULL, d, 0, &o, bws, need1));
    ERR(attn_decoder_ex(&CUR->dec_post, by, d, by, d, 1, 2, NULL, d, 0, &o, bws, need1));
}

static void c_encoder(void)
{
    const size_t d = CUR->d, T = CUR->T;
    size_t need = attn_encoder_workspace_size(&CUR->enc_pre, T);
    if (need == 0 || need > bws_size) bad_status++;
    OK(attn_encoder(&CUR->enc_pre, bx, d, by, d, T, 0, bws, need));
    OK(attn_encoder(&CUR->enc_post, bx, d, by, d, T, 1, bws, need));
    OK(attn_encoder(&CUR->enc_pre, by, d, by, d, T, 1, bws, need));
    ERR(attn_encoder(&CUR->enc_pre, bx, d, by, d, T, 0, NULL, need));
}

static void c_decoder(void)
{
    const size_t d = CUR->d, T = CUR->T, M = CUR->M;
    size_t need = attn_decoder_workspace_size(&CUR->dec_pre, T, M);
    if (need == 0 || need > bws_size) bad_status++;
    OK(attn_decoder(&CUR->dec_pre, bx, d, by, d, T, bm, d, M, bws, need));
    OK(attn_decoder(&CUR->dec_post, by, d, by, d, T, bm, d, M, bws, need));
    ERR(attn_decoder(&CUR->dec_post, bx, d, by, d, T, bm, d - 1, M, bws, need));
}

static void c_decoder_only(void)
{
    const attn_decoder_only_weights *w = &CUR->dec_only;
    const size_t d = CUR->d, T = CUR->T;
    size_t need = attn_decoder_only_workspace_size(w, T);
    attn_kv_cache c;
    if (need == 0 || need > bws_size) bad_status++;
    OK(attn_kv_cache_init_type(&c, ATTN_BF16, CUR->kc, CUR->vc, 1, w->kv_heads, 2 * T,
                               w->head_dim, w->head_dim));
    OK(attn_decoder_only(w, bx, d, by, d, T, &c, bws, need)); /* prefill */
    OK(attn_decoder_only(w, by, d, by, d, 1, &c, bws, need)); /* decode, in place */
    c.len = 2 * T;
    ERR(attn_decoder_only(w, bx, d, by, d, 1, &c, bws, need)); /* full */
}

static void c_params(void)
{
    attn_param_count c;
    OK(attn_encoder_param_count(768, 12, 3072, &c));
    OK(attn_decoder_param_count(512, 8, 2048, &c));
    ERR(attn_decoder_param_count(512, 7, 2048, &c));
}

static void c_fpenv(void)
{
    attn_fp_state s;
    (void)attn_denormals_flush_supported();
    OK(attn_denormals_flush_begin(&s));
    OK(attn_denormals_flush_end(&s));
    ERR(attn_denormals_flush_begin(NULL));
}

static void c_convert(void)
{
    const size_t n = CUR->T * CUR->d; /* f32 -> f16 -> bf16 -> f32, and every error kind */
    (void)attn_dtype_size(ATTN_BF16);
    OK(attn_convert(ATTN_F16, by, ATTN_F32, bx, n));
    OK(attn_convert(ATTN_BF16, bz, ATTN_F16, by, n));
    OK(attn_convert(ATTN_F32, by, ATTN_BF16, bz, n));
    ERR(attn_convert(ATTN_F16, NULL, ATTN_F32, bx, n));
    ERR(attn_convert((attn_dtype)7, by, ATTN_F32, bx, n));
    ERR(attn_convert(ATTN_F32, bx, ATTN_F16, bx, n));
    /* quantized and back (n rounded down to whole blocks), and the errors */
    (void)attn_dtype_block(ATTN_Q4_0);
    if (attn_dtype_bytes(ATTN_Q8_0, n / 32 * 32) > n * sizeof(float)) bad_status++;
    OK(attn_convert(ATTN_Q8_0, by, ATTN_F32, bx, n / 32 * 32));
    OK(attn_convert(ATTN_F16, bz, ATTN_Q8_0, by, n / 32 * 32));
    OK(attn_convert(ATTN_Q4_0, by, ATTN_F16, bz, n / 32 * 32));
    OK(attn_convert(ATTN_F32, bz, ATTN_Q4_0, by, n / 32 * 32));
    ERR(attn_convert(ATTN_Q8_0, by, ATTN_F32, bx, 33));
    ERR(attn_convert(ATTN_Q4_0, by, ATTN_Q8_0, bx, 32));
}

static void c_rope(void)
{
    attn_rope_params p; /* both pairings, partial rotary, large positions */
    memset(&p, 0, sizeof p);
    p.head_dim = CUR->d / CUR->heads;
    OK(attn_rope(&p, by, CUR->d, CUR->T, CUR->heads, 1000000, NULL));
    p.pairing = ATTN_ROPE_HALVES;
    p.rot_dim = p.head_dim / 2 / 2 * 2;
    OK(attn_rope(&p, by, CUR->d, CUR->T, CUR->heads, 7, NULL));
    ERR(attn_rope(&p, NULL, CUR->d, CUR->T, CUR->heads, 0, NULL));
}

typedef struct rt_call {
    const char *name;
    const char *covers; /* the public functions it calls, space separated */
    void (*fn)(void);
} rt_call;

static const rt_call calls[] = {
    {"identification", "attn_status_string attn_isa attn_use_isa attn_exp_impl", c_ident},
    {"softmax", "attn_softmax", c_softmax},
    {"layernorm", "attn_layernorm", c_layernorm},
    {"rmsnorm", "attn_rmsnorm", c_rmsnorm},
    {"add, PE", "attn_add attn_positional_encoding", c_add_pe},
    {"matmul", "attn_matmul attn_matmul_workspace_size attn_matmul_typed attn_matmul_int8 "
               "attn_matmul_int8_workspace_size", c_matmul},
    {"attention",
     "attn_attention attn_attention_init attn_attention_workspace_size attn_alibi_slopes",
     c_attention},
    {"tasks, KV cache",
     "attn_attention_query_tile attn_attention_tasks attn_attention_task "
     "attn_kv_cache_init attn_kv_cache_init_type attn_kv_cache_init_ring attn_kv_cache_append "
     "attn_attention_init_kv",
     c_attention_tasks_kv},
    {"activation", "attn_activation attn_glu", c_activation},
    {"linear", "attn_linear attn_linear_workspace_size attn_linear_typed", c_linear},
    {"ffn", "attn_ffn attn_ffn_workspace_size", c_ffn},
    {"mha", "attn_mha attn_mha_workspace_size", c_mha},
    {"encoder", "attn_encoder attn_encoder_workspace_size", c_encoder},
    {"decoder", "attn_decoder attn_decoder_workspace_size", c_decoder},
    {"blocks with options", "attn_mha_ex attn_encoder_ex attn_decoder_ex", c_blocks_ex},
    {"decoder-only", "attn_decoder_only attn_decoder_only_workspace_size", c_decoder_only},
    {"param counts", "attn_encoder_param_count attn_decoder_param_count", c_params},
    {"fp env", "attn_denormals_flush_supported attn_denormals_flush_begin attn_denormals_flush_end",
     c_fpenv},
    {"convert", "attn_dtype_size attn_dtype_block attn_dtype_bytes attn_convert", c_convert},
    {"rope", "attn_rope", c_rope},
};
#define NCALLS (sizeof calls / sizeof calls[0])

static void setup(void)
{
    size_t i, need = 0;
    int l;
    bx = rnd(MAXF, 1.0f), by = rnd(MAXF, 1.0f), bz = rnd(MAXF, 1.0f), bm = rnd(MAXF, 1.0f),
    bw = rnd(MAXF, 0.5f);
    bbool = (uint8_t *)xmalloc(MAXF);
    for (i = 0; i < MAXF; i++) bbool[i] = (uint8_t)(i % 5 != 0);
    klen[0] = 2, klen[1] = 0;
    setup_level(&lv[0], 4, 16, 2, 32, 3);
    setup_level(&lv[1], 40, 64, 4, 256, 33);
    for (l = 0; l < 2; l++) {
        const level *L = &lv[l];
        size_t q = attn_encoder_workspace_size(&L->enc_pre, L->T);
        if (attn_decoder_workspace_size(&L->dec_pre, L->T, L->M) > q)
            q = attn_decoder_workspace_size(&L->dec_pre, L->T, L->M);
        if (attn_mha_workspace_size(&L->enc_pre.attn, L->T, L->M) > q)
            q = attn_mha_workspace_size(&L->enc_pre.attn, L->T, L->M);
        if (attn_decoder_only_workspace_size(&L->dec_only, L->T) > q)
            q = attn_decoder_only_workspace_size(&L->dec_only, L->T);
        if (q > need) need = q;
    }
    bws_size = need + (1u << 20); /* room for the matmul and attention workspaces too */
    bws = (unsigned char *)xmalloc(bws_size);
    memset(bws, 0, bws_size);
}

static void teardown(void)
{
    size_t i;
    for (i = 0; i < n_owned; i++) free(owned[i]);
    free(bx), free(by), free(bz), free(bm), free(bw), free(bbool), free(bws);
}

/* ---- 1. coverage and allocations --------------------------------------------------------------
 */

/* Every ATTN_API function declared in attn.h must appear in some entry's `covers`. */
static void test_coverage(const char *header)
{
    FILE *f = header ? fopen(header, "r") : NULL;
    char line[512];
    int found = 0, missing = 0;
    if (!check(f != NULL, "cannot open the header %s (pass attn.h's path as the first argument)",
               header ? header : "(none)"))
        return;
    while (fgets(line, sizeof line, f)) {
        char *p = strstr(line, "ATTN_API "), *paren, *start;
        char name[128];
        size_t i, len;
        int covered = 0;
        if (!p || p != line) continue; /* declarations and definitions start the line */
        if (!(paren = strchr(p, '('))) continue;
        start = paren;
        while (start > p && (start[-1] == '_' || (start[-1] >= 'a' && start[-1] <= 'z') ||
                             (start[-1] >= '0' && start[-1] <= '9')))
            start--;
        len = (size_t)(paren - start);
        if (len == 0 || len >= sizeof name) continue;
        memcpy(name, start, len);
        name[len] = 0;
        found++;
        for (i = 0; i < NCALLS && !covered; i++) {
            const char *c = calls[i].covers, *hit;
            while ((hit = strstr(c, name)) != NULL) {
                if ((hit == calls[i].covers || hit[-1] == ' ') &&
                    (hit[len] == 0 || hit[len] == ' ')) {
                    covered = 1;
                    break;
                }
                c = hit + 1;
            }
        }
        if (!check(covered, "public function %s is not called by the real-time test", name))
            missing++;
    }
    fclose(f);
    check(found >= 30, "only %d ATTN_API functions found in %s", found, header);
    printf("realtime: %d ATTN_API declarations and definitions in attn.h, %d not covered\n", found,
           missing);
}

static void test_allocations(void)
{
#if RT_INTERPOSE
    long counted;
    size_t i;
    void *(*volatile mp)(size_t) = malloc;
    void (*volatile fp)(void *) = free;
    char *(*volatile sd)(const char *) = strdup;
    char *s;
    /* self-checks: the window sees a malloc + free, and libc's own allocations */
    rt_allocs = 0;
    rt_counting = 1;
    fp(mp(24));
    rt_counting = 0;
    check(rt_allocs == 2, "the interposed allocator saw %ld calls of a malloc + free (want 2)",
          (long)rt_allocs);
    rt_allocs = 0;
    rt_counting = 1;
    s = sd("libc allocates");
    rt_counting = 0;
    check(rt_allocs >= 1, "a strdup inside the window was not counted");
    free(s);
    /* every public function, small and large problems, inside the window */
    for (big = 0; big < 2; big++) {
        bad_status = 0;
        rt_allocs = 0;
        rt_counting = 1;
        for (i = 0; i < NCALLS; i++) calls[i].fn();
        rt_counting = 0;
        counted = rt_allocs;
        check(counted == 0, "%ld allocator calls while running every public function (%s sizes)",
              counted, big ? "large" : "small");
        check(bad_status == 0, "%ld calls returned an unexpected status (%s sizes)", bad_status,
              big ? "large" : "small");
        printf("realtime: allocations while calling every public function (%s sizes): %ld\n",
               big ? "large" : "small", counted);
    }
    /* per entry, to name a culprit */
    big = 0;
    bad_status = 0;
    for (i = 0; i < NCALLS; i++) {
        rt_allocs = 0;
        rt_counting = 1;
        calls[i].fn();
        rt_counting = 0;
        check(rt_allocs == 0, "%s: %ld allocator calls", calls[i].name, (long)rt_allocs);
    }
    check(bad_status == 0, "%ld calls returned an unexpected status", bad_status);
#else
    check(1, "");
    printf("realtime: allocation test SKIPPED: %s (counted as passed)\n",
           RT_ASAN ? "AddressSanitizer replaces malloc, so it cannot be interposed"
                   : "the allocator interposition needs glibc");
#endif
}

/* ---- 2. denormals
 * --------------------------------------------------------------------------------- */

static int has_denormal(const float *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (p[i] != 0.0f && fabsf(p[i]) < FLT_MIN) return 1;
    return 0;
}

static volatile float v_min = FLT_MIN, v_half = 0.5f, v_big = 16777216.0f, v_dn;

static int flushing_results(void) { return v_min * v_half == 0.0f; }
static int flushing_inputs(void) { return v_dn * v_big == 0.0f; }

static void test_flush_helpers(void)
{
    attn_fp_state s1, s2;
    v_dn = v_min * v_half; /* a denormal, made before any flushing */
    check(v_dn != 0.0f && !flushing_results() && !flushing_inputs(),
          "denormals are already flushed at start");
    check(attn_denormals_flush_begin(&s1) == ATTN_OK, "begin");
    if (attn_denormals_flush_supported()) {
        check(flushing_results(), "after begin, FLT_MIN * 0.5 is %g, not 0",
              (double)(v_min * v_half));
        check(flushing_inputs(), "after begin, a denormal input is not read as 0");
        check(attn_denormals_flush_begin(&s2) == ATTN_OK && flushing_results(), "nested begin");
        check(attn_denormals_flush_end(&s2) == ATTN_OK && flushing_results(),
              "the inner end must keep flushing");
    } else {
        check(!flushing_results(), "begin changed the state where it says it is unsupported");
        printf("realtime: attn_denormals_flush_begin/end are no-ops on this target\n");
    }
    check(attn_denormals_flush_end(&s1) == ATTN_OK, "end");
    check(!flushing_results() && !flushing_inputs(), "after end, denormals are still flushed");
    check(attn_denormals_flush_begin(NULL) == ATTN_ERR_NULL &&
              attn_denormals_flush_end(NULL) == ATTN_ERR_NULL,
          "NULL state");
    printf("realtime: flush-to-zero helpers %s\n", attn_denormals_flush_supported()
                                                       ? "set and restore the FTZ/DAZ state"
                                                       : "are no-ops here");
}

/* inputs whose results are denormal: products, normalizations and sums of tiny values */
static void fill(float *p, size_t n, float s)
{
    size_t i;
    for (i = 0; i < n; i++) p[i] = check_uniform(-s, s);
}

/* runs the documented-can-produce kernels on tiny inputs; returns how many outputs hold a
 * denormal (one count per kernel) */
static int run_denormal_producers(void)
{
    enum { R = 4, N = 24 };
    float x[R * N], y[R * N], g[N], v[R * N], o[R * N], a[R * N];
    static unsigned char ws[1u << 18];
    int n = 0;
    attn_attention_params p;
    check_seed(99);
    fill(x, R * N, 1.0f);
    fill(g, N, 1e-39f * 8.0f); /* gamma near FLT_MIN / 2: normalized * gamma is denormal */
    OK(attn_layernorm(x, N, y, N, R, N, g, NULL, 1e-5f, NULL, NULL));
    n += has_denormal(y, R * N);
    OK(attn_rmsnorm(x, N, y, N, R, N, g, 1e-5f));
    n += has_denormal(y, R * N);
    fill(x, R * N, 1e-20f);
    fill(v, R * N, 1e-20f);
    OK(attn_matmul(ATTN_NO_TRANS, ATTN_NO_TRANS, R, N, R, 1.0f, x, N, v, N, 0.0f, y, N, NULL,
                   0)); /* k = R */
    n += has_denormal(y, R * N);
    fill(x, R * N, 1.0f);
    fill(v, R * N, 2e-38f); /* V near FLT_MIN: the weighted average of V rows goes below it */
    p = attn_attention_init(1, 1, 1, R, R, N, N, x, x, v, o, ATTN_LAYOUT_BHLD);
    OK(attn_attention(&p, ws, sizeof ws));
    n += has_denormal(o, R * N);
    fill(y, R * N, 1.0f);
    {
        size_t i;
        for (i = 0; i < R * N; i++) y[i] = 1.5f * FLT_MIN, a[i] = -1.25f * FLT_MIN; /* cancel */
    }
    OK(attn_add(y, N, a, N, R, N));
    n += has_denormal(y, R * N);
    memset(y, 0, sizeof y);
    y[0] = v_dn; /* position 0, column 0: sin(0) = 0 added to a denormal */
    OK(attn_positional_encoding(y, N, R, N, 0, 1));
    n += has_denormal(y, R * N);
    return n;
}

static void test_denormal_outputs(void)
{
    enum { R = 4, N = 24 };
    float x[R * N], y[R * N];
    const level *L = &lv[0];
    attn_fp_state s;
    int produced, i;
    size_t need;
    /* never-denormal kernels, without any flushing */
    check_seed(7);
    fill(x, R * N, 1.0f);
    for (i = 0; i < R * N; i++) x[i] = (i % N == 0) ? 0.0f : -100.0f - (float)(i % 7); /* e^-100 */
    OK(attn_softmax(x, N, y, N, R, N, 1.0f));
    check(!has_denormal(y, R * N), "softmax returned a denormal");
    for (i = 0; i < 5; i++) {
        fill(x, R * N, 3e-38f);
        OK(attn_activation((attn_act)i, x, N, y, N, R, N));
        check(!has_denormal(y, R * N), "activation %d of tiny inputs returned a denormal", i);
        fill(x, R * N, 1e-19f);
        fill(by, N * N, 1e-19f);
        OK(attn_linear(x, N, R, N, ATTN_NO_TRANS, by, N, NULL, N, (attn_act)i, y, N, NULL, 0));
        check(!has_denormal(y, R * N), "linear (act %d) of tiny inputs returned a denormal", i);
    }
    {
        /* blocks whose every weight and input is tiny */
        attn_encoder_weights e = L->enc_pre;
        const size_t d = L->d, T = L->T;
        float *tg = rnd(d, 1e-37f), *tw = rnd(4 * L->dff * d, 1e-19f);
        e.ln1_gamma = tg, e.ln2_gamma = tg, e.ln1_beta = e.ln2_beta = NULL;
        e.attn.wv = tw, e.attn.wo = tw + d * d, e.attn.bv = e.attn.bo = NULL;
        e.ffn.w2 = tw, e.ffn.b2 = NULL;
        fill(bx, T * d, 1e-19f);
        need = attn_encoder_workspace_size(&e, T);
        OK(attn_encoder(&e, bx, d, by, d, T, 0, bws, need));
        check(!has_denormal(by, T * d), "pre-LN encoder of tiny values returned a denormal");
        e.norm = ATTN_POST_LN;
        OK(attn_encoder(&e, bx, d, by, d, T, 1, bws, need));
        check(!has_denormal(by, T * d), "post-LN encoder of tiny values returned a denormal");
        OK(attn_ffn(&e.ffn, bx, d, by, d, T, bws, attn_ffn_workspace_size(&e.ffn, T)));
        check(!has_denormal(by, T * d), "ffn of tiny values returned a denormal");
        OK(attn_mha(&e.attn, bx, d, T, bx, d, T, 0, by, d, bws,
                    attn_mha_workspace_size(&e.attn, T, T)));
        check(!has_denormal(by, T * d), "mha of tiny values returned a denormal");
        {
            attn_decoder_weights dw = L->dec_post;
            dw.ln3_gamma = tg, dw.ln3_beta = NULL;
            need = attn_decoder_workspace_size(&dw, T, L->M);
            fill(bm, L->M * d, 1e-19f);
            OK(attn_decoder(&dw, bx, d, by, d, T, bm, d, L->M, bws, need));
            check(!has_denormal(by, T * d), "post-LN decoder with tiny gamma returned a denormal");
        }
        free(tg);
        free(tw);
        fill(bx, MAXF, 1.0f);
    }
    {
        /* blocks whose last step makes denormals: pre-LN, y = x + bo (+ bo) + b2 with every
         * weight matrix 0, x = 1.5 FLT_MIN, bo = -1.25 FLT_MIN; post-LN, the last layer norm's
         * gamma is FLT_MIN / 2 on O(1) inputs */
        const size_t d = L->d, T = L->T, M = L->M;
        float *zero = (float *)xmalloc(4 * L->dff * d * sizeof(float));
        float *bneg = (float *)xmalloc(L->dff * sizeof(float)), *bnull = zero;
        float *ghalf = (float *)xmalloc(d * sizeof(float));
        attn_encoder_weights e = L->enc_pre;
        attn_decoder_weights dw = L->dec_pre;
        memset(zero, 0, 4 * L->dff * d * sizeof(float));
        for (i = 0; i < (int)L->dff; i++) bneg[i] = -1.25f * FLT_MIN;
        for (i = 0; i < (int)d; i++) ghalf[i] = 0.5f * FLT_MIN;
        e.attn.wq = e.attn.wk = e.attn.wv = e.attn.wo = zero;
        e.attn.bq = e.attn.bk = e.attn.bv = bnull, e.attn.bo = bneg;
        e.ffn.w1 = e.ffn.w2 = zero, e.ffn.b1 = e.ffn.b2 = bnull;
        for (i = 0; i < (int)(T * d); i++) bx[i] = 1.5f * FLT_MIN;
        OK(attn_encoder(&e, bx, d, by, d, T, 0, bws, attn_encoder_workspace_size(&e, T)));
        check(!has_denormal(by, T * d),
              "pre-LN encoder: the residual sum's denormals were returned");
        dw.self_attn = e.attn, dw.cross_attn = e.attn, dw.cross_attn.bo = bnull, dw.ffn = e.ffn;
        OK(attn_decoder(&dw, bx, d, by, d, T, bm, d, M, bws,
                        attn_decoder_workspace_size(&dw, T, M)));
        check(!has_denormal(by, T * d),
              "pre-LN decoder: the residual sum's denormals were returned");
        fill(bx, T * d, 1.0f);
        e = L->enc_post, e.ln2_gamma = ghalf, e.ln2_beta = NULL;
        OK(attn_encoder(&e, bx, d, by, d, T, 0, bws, attn_encoder_workspace_size(&e, T)));
        check(!has_denormal(by, T * d),
              "post-LN encoder: the last layer norm's denormals were returned");
        dw = L->dec_post, dw.ln3_gamma = ghalf, dw.ln3_beta = NULL;
        OK(attn_decoder(&dw, bx, d, by, d, T, bm, d, M, bws,
                        attn_decoder_workspace_size(&dw, T, M)));
        check(!has_denormal(by, T * d),
              "post-LN decoder: the last layer norm's denormals were returned");
        /* and the same layer norm alone does return them: the blocks' flush is what removes them */
        OK(attn_layernorm(bx, d, by, d, T, d, ghalf, NULL, 1e-5f, NULL, NULL));
        check(has_denormal(by, T * d) != NEON32_FLUSHES,
              "layernorm with gamma FLT_MIN/2: denormals %s",
              NEON32_FLUSHES ? "returned" : "missing");
        free(zero);
        free(bneg);
        free(ghalf);
        fill(bx, MAXF, 1.0f);
    }
    /* the kernels documented as able to return denormals do so here, and not when flushing */
    produced = run_denormal_producers();
    /* (on ARMv7 only positional encoding's add, done in scalar code, still can) */
    check(produced == (NEON32_FLUSHES ? 1 : 6),
          "%d of the 6 kernels documented to return denormals from tiny inputs did", produced);
    OK(attn_denormals_flush_begin(&s));
    produced = run_denormal_producers();
    OK(attn_denormals_flush_end(&s));
    if (attn_denormals_flush_supported())
        check(produced == 0, "%d kernels returned denormals inside attn_denormals_flush_begin/end",
              produced);
    printf(
        "realtime: denormal outputs: none from softmax/activation/linear/ffn/mha/encoder/decoder; "
        "layernorm, rmsnorm, matmul, attention, add and positional_encoding(add) return them for "
        "tiny "
        "inputs without flushing and %s with attn_denormals_flush_begin\n",
        attn_denormals_flush_supported() ? (produced == 0 ? "none" : "SOME")
                                         : "(no flush on this target)");
    check(bad_status == 0, "%ld unexpected statuses in the denormal tests", bad_status);
}

/* ---- 3. stack ---------------------------------------------------------------------------------
 */

#if !RT_ASAN
#define STK_SIZE (256 * 1024)

static unsigned char *stk;

static void *stack_runner(void *arg)
{
    ((const rt_call *)arg)->fn();
    return NULL;
}

/* bytes of the painted stack touched by running c on a fresh thread (max of two patterns) */
static size_t stack_depth(const rt_call *c)
{
    size_t best = 0;
    int pat;
    for (pat = 0; pat < 2; pat++) {
        const unsigned char b = pat ? 0x5A : 0xA5;
        pthread_attr_t at;
        pthread_t th;
        size_t i;
        memset(stk, b, STK_SIZE);
        if (pthread_attr_init(&at) || pthread_attr_setstack(&at, stk, STK_SIZE) ||
            pthread_create(&th, &at, stack_runner, (void *)c) || pthread_join(th, NULL)) {
            check(0, "cannot run a thread on a painted stack");
            return 0;
        }
        pthread_attr_destroy(&at);
        for (i = 0; i < STK_SIZE && stk[i] == b; i++) {}
        if (STK_SIZE - i > best) best = STK_SIZE - i;
    }
    return best;
}
#endif

static void test_stack(void)
{
#if !RT_ASAN
    static const rt_call empty = {"(empty)", "", c_empty};
    size_t base, i, worst = 0;
    void *mem = NULL;
    if (posix_memalign(&mem, 4096, STK_SIZE) != 0) {
        check(0, "no memory for the painted stack");
        return;
    }
    stk = (unsigned char *)mem;
    big = 0;
    base = stack_depth(&empty);
    printf("realtime: stack use per call-table entry (bytes above an empty thread's %lu), "
           "small / large problems:\n", (unsigned long)base);
    for (i = 0; i < NCALLS; i++) {
        size_t s0, s1;
        big = 0;
        s0 = stack_depth(&calls[i]) - base;
        big = 1;
        s1 = stack_depth(&calls[i]) - base;
        printf("realtime:   %-15s %6lu %6lu   %s\n", calls[i].name, (unsigned long)s0,
               (unsigned long)s1, calls[i].covers);
        check(s0 <= STACK_LIMIT && s1 <= STACK_LIMIT,
              "%s: stack use %lu / %lu bytes above the limit %d", calls[i].name, (unsigned long)s0,
              (unsigned long)s1, STACK_LIMIT);
        check(s1 <= s0 + STACK_SLACK,
              "%s: stack use grows with the problem size (%lu -> %lu bytes)", calls[i].name,
              (unsigned long)s0, (unsigned long)s1);
        if (s0 > worst) worst = s0;
        if (s1 > worst) worst = s1;
    }
    big = 0;
    check(bad_status == 0, "unexpected statuses on the painted stacks");
    printf("realtime: the largest stack use of any public function: %lu bytes (limit %d)\n",
           (unsigned long)worst, STACK_LIMIT);
    free(mem);
#else
    check(1, "");
    printf("realtime: stack measurement SKIPPED under AddressSanitizer (counted as passed)\n");
#endif
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[2], "--far") == 0) sm_path = ATTN__SM_FAR_PATH;
    check_begin("realtime");
    setup();
    test_coverage(argc > 1 ? argv[1] : NULL);
    test_allocations();
    test_flush_helpers();
    test_denormal_outputs();
    test_stack();
    teardown();
    return check_end("realtime");
}
