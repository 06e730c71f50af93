/* op_attention.c - attention (BHLD layout, kv_heads = heads, Lq = Lk = L, scale 1/sqrt(d)),
 * fused and as the unfused composition sgemm + softmax + sgemm; and decode (a few queries
 * per head against a long KV cache). Peer: OpenBLAS as the unfused composition's sgemm
 * (peers.c). */
#include "bench.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* K and V as floats (the 16-bit cache's values widened, see struct attcase) */
static const float *att_k32(const struct attcase *c)
{
    return c->k32 ? c->k32 : (const float *)c->p.k;
}
static const float *att_v32(const struct attcase *c)
{
    return c->v32 ? c->v32 : (const float *)c->p.v;
}

/* Stores the case's K and V (nk and nv floats at k and v, c->p pointing at them) as type t:
 * rounded (16 bits) or quantized (q8_0) into one buffer that c->p then reads (kv_type t), and
 * the stored values widened back into k and v for the implementations that read floats.
 * f32: nothing. */
static void attcase_store(struct attcase *c, attn_dtype t, float *k, float *v, size_t nk,
                          size_t nv)
{
    unsigned char *h;
    const size_t bk = attn_dtype_bytes(t, nk);
    c->k32 = c->v32 = NULL;
    c->kv16 = NULL;
    if (t == ATTN_F32)
        return;
    h = (unsigned char *)xalloc(bk + attn_dtype_bytes(t, nv));
    check(attn_convert(t, h, ATTN_F32, k, nk), "attn_convert");
    check(attn_convert(t, h + bk, ATTN_F32, v, nv), "attn_convert");
    check(attn_convert(ATTN_F32, k, t, h, nk), "attn_convert");
    check(attn_convert(ATTN_F32, v, t, h + bk, nv), "attn_convert");
    c->p.k = h, c->p.v = h + bk, c->p.kv_type = t;
    c->k32 = k, c->v32 = v, c->kv16 = h;
}

static const char *const dtype_name[4] = {"f32", "f16", "bf16", "q8_0"};

/* The buffers of a case whose parameters c->p are set: the attention workspace, the
 * lq x lk scores and the matmul workspace of the unfused compositions (S = Q K^T, O = P V;
 * their 128-row blocks need no more). */
static void attcase_alloc(struct attcase *c, size_t lq, size_t lk, size_t d)
{
    size_t pv;
    c->ws_size = attn_attention_workspace_size(&c->p);
    if (c->ws_size == 0)
        die("attn_attention_workspace_size", "returned 0 for valid parameters");
    c->ws = xalloc(c->ws_size);
    c->scores = falloc(lq * lk);
    memset(c->scores, 0, lq * lk * sizeof(float));
    c->mm_ws_size = attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_TRANS, lq, lk, d);
    pv = attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_NO_TRANS, lq, d, lk);
    if (pv > c->mm_ws_size)
        c->mm_ws_size = pv;
    c->mm_ws = xalloc(c->mm_ws_size ? c->mm_ws_size : 1);
}

static void attcase_free(struct attcase *c)
{
    free(c->kv16);
    free(c->ws);
    free(c->scores);
    free(c->mm_ws);
}

/* Materializes each head's score matrix S = scale Q K^T (only the unmasked part when
 * causal), a 3-pass softmax over each row, then O = P V. */
static NAIVE_FN void naive_attention(void *ctx, void *data)
{
    const struct attcase *c = (const struct attcase *)data;
    const attn_attention_params *p = &c->p;
    size_t L = p->q_len, Lk = p->kv_len, d = p->head_dim, b, h, i, j, t;
    float scale = 1.0f / sqrtf((float)d);
    int causal = p->causal != ATTN_CAUSAL_NONE;
    (void)ctx;
    for (b = 0; b < p->batch; b++)
        for (h = 0; h < p->heads; h++) {
            const float *q = p->q + b * p->q_sb + h * p->q_sh;
            const size_t g = h / (p->heads / p->kv_heads);
            const float *k = att_k32(c) + b * p->k_sb + g * p->k_sh;
            const float *v = att_v32(c) + b * p->v_sb + g * p->v_sh;
            float *o = p->o + b * p->o_sb + h * p->o_sh;
            for (i = 0; i < L; i++) {
                size_t nk = causal ? i + 1 : Lk;
                float *s = c->scores + i * Lk, mx = -INFINITY, sum = 0.0f, inv;
                for (j = 0; j < nk; j++) {
                    float acc = 0.0f;
                    NOVEC for (t = 0; t < d; t++)
                        acc += q[i * p->q_sl + t] * k[j * p->k_sl + t];
                    s[j] = acc * scale;
                }
                NOVEC for (j = 0; j < nk; j++) mx = s[j] > mx ? s[j] : mx;
                NOVEC for (j = 0; j < nk; j++) {
                    s[j] = expf(s[j] - mx);
                    sum += s[j];
                }
                inv = 1.0f / sum;
                NOVEC for (j = 0; j < nk; j++) s[j] *= inv;
                NOVEC for (t = 0; t < d; t++) o[i * p->o_sl + t] = 0.0f;
                for (j = 0; j < nk; j++)
                    NOVEC for (t = 0; t < d; t++)
                        o[i * p->o_sl + t] += s[j] * v[j * p->v_sl + t];
            }
        }
}

static void attn_attention_run(void *ctx, void *data)
{
    const struct attcase *c = (const struct attcase *)data;
    (void)ctx;
    check(attn_attention(&c->p, c->ws, c->ws_size), "attn_attention");
}

#ifdef HAVE_DISPATCHED
static void dispatched_attention_run(void *ctx, void *data)
{
    const struct attcase *c = (const struct attcase *)data;
    (void)ctx;
    check(bench_dispatched_attention(&c->p, c->ws, c->ws_size), "attn_attention (dispatched)");
}
#endif

static void gemm_attn(const struct attcase *c, int tb, size_t m, size_t n, size_t k, float alpha,
                      const float *a, size_t lda, const float *b, size_t ldb, float *out,
                      size_t ldc)
{
    check(attn_matmul(ATTN_NO_TRANS, tb ? ATTN_TRANS : ATTN_NO_TRANS, m, n, k, alpha, a, lda, b,
                      ldb, 0.0f, out, ldc, c->mm_ws, c->mm_ws_size),
          "attn_matmul");
}

/* Per head: S = scale Q K^T, softmax over each row (attn_softmax), O = P V. block = 0: the
 * whole L x L score matrix at once (causal: the masked part is computed, then zeroed after
 * the softmax); block > 0: `block` query rows at a time, and when causal only the keys up
 * to the block's last row. */
void unfused_attention(const struct attcase *c, gemm_fn gemm, size_t block)
{
    const attn_attention_params *p = &c->p;
    const size_t L = p->q_len, Lk = p->kv_len, d = p->head_dim, dv = p->v_head_dim;
    const float scale = 1.0f / sqrtf((float)d);
    const int causal = p->causal != ATTN_CAUSAL_NONE;
    size_t b, h, r0, i;
    for (b = 0; b < p->batch; b++)
        for (h = 0; h < p->heads; h++) {
            const float *q = p->q + b * p->q_sb + h * p->q_sh;
            const size_t g = h / (p->heads / p->kv_heads);
            const float *k = att_k32(c) + b * p->k_sb + g * p->k_sh;
            const float *v = att_v32(c) + b * p->v_sb + g * p->v_sh;
            float *o = p->o + b * p->o_sb + h * p->o_sh;
            for (r0 = 0; r0 < L; r0 += block ? block : L) {
                size_t rb = block && L - r0 > block ? block : L - r0;
                size_t kend = block && causal ? r0 + rb : Lk;
                float *s = c->scores;
                gemm(c, 1, rb, kend, d, scale, q + r0 * p->q_sl, p->q_sl, k, p->k_sl, s, kend);
                if (!causal)
                    check(attn_softmax(s, kend, s, kend, rb, kend, 1.0f), "attn_softmax");
                else
                    for (i = 0; i < rb; i++) {
                        size_t vis = r0 + i + 1;
                        float *row = s + i * kend;
                        check(attn_softmax(row, kend, row, kend, 1, vis, 1.0f), "attn_softmax");
                        if (vis < kend)
                            memset(row + vis, 0, (kend - vis) * sizeof(float));
                    }
                gemm(c, 0, rb, dv, kend, 1.0f, s, kend, v, p->v_sl, o + r0 * p->o_sl, p->o_sl);
            }
        }
}

static void attn_unfused_run(void *ctx, void *data)
{
    (void)ctx;
    unfused_attention((const struct attcase *)data, gemm_attn, 0);
}

static void attn_unfused128_run(void *ctx, void *data)
{
    (void)ctx;
    unfused_attention((const struct attcase *)data, gemm_attn, 128);
}

/* Extra memory (bytes): buffers beyond Q, K, V and O. */
static double naive_att_extra(const void *data)
{
    const struct attcase *c = (const struct attcase *)data;
    return (double)(c->p.q_len * c->p.kv_len * sizeof(float));
}
static double fused_att_extra(const void *data)
{
    return (double)((const struct attcase *)data)->ws_size;
}
double unfused_att_extra(const void *data)
{
    const struct attcase *c = (const struct attcase *)data;
    return (double)(c->p.q_len * c->p.kv_len * sizeof(float));
}
double unfused128_att_extra(const void *data)
{
    const struct attcase *c = (const struct attcase *)data;
    size_t rows = c->p.q_len < 128 ? c->p.q_len : 128;
    return (double)(rows * c->p.kv_len * sizeof(float));
}
static double attn_unfused_extra(const void *data)
{
    return unfused_att_extra(data) + (double)((const struct attcase *)data)->mm_ws_size;
}
static double attn_unfused128_extra(const void *data)
{
    return unfused128_att_extra(data) + (double)((const struct attcase *)data)->mm_ws_size;
}

/* The attn row's speed on a 16-bit or q8_0 cache over its speed on the f32 cache, from the
 * last times per call of variants v16 and v32 of impls[ia] (attn) */
static void attn_ratio_row(const struct op *op, const char *shape, attn_dtype t, int v16,
                           int v32, int ia)
{
    char impl[32], note[64];
    const double t16 = g_call_ns[ia][v16], t32 = g_call_ns[ia][v32];
    if (!(t16 > 0.0 && t32 > 0.0))
        return;
    snprintf(impl, sizeof impl, "attn-%s/f32", dtype_name[t]);
    snprintf(note, sizeof note, "calls/s of attn on the %s cache / on the f32 cache",
             dtype_name[t]);
    print_derived(op, shape, impl, "ratio", t32 / t16, note);
}

static void bench_attention(struct op *op)
{
    static const size_t lens[] = {128, 512, 2048, 8192};
    const size_t batch = 1, heads = 8, d = 64;
    size_t li;
    int causal, ty;
    for (li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (causal = 0; causal <= 1; causal++)
            for (ty = ATTN_F32; ty <= ATTN_F16; ty++) { /* f16: L = 512 and 2048 */
                size_t L = lens[li], count = batch * heads * L * d;
                struct attcase c;
                struct limit lim;
                char shape[64];
                float *q, *k, *v, *o;
                double flop = 4.0 * (double)L * (double)L * (double)d * (double)(batch * heads);
                if ((L == 8192 && g_opt.quick) || (ty != ATTN_F32 && L != 512 && L != 2048))
                    continue;
                q = falloc(count);
                k = falloc(count);
                v = falloc(count);
                o = falloc(count);
                /* L = 8192: each implementation only if its L = 2048 time x 16 is <= 20 s;
                 * --quick, L = 2048: only if its L = 512 time x 16 is <= 1 s (scalar builds) */
                g_predict.variant = causal + 2 * ty;
                g_predict.factor = L == 8192 || (L == 2048 && g_opt.quick) ? 16.0 : 0.0;
                g_predict.max_ns = L == 8192 ? 20e9 : 1e9;
                g_predict.what = L == 8192 ? "16 x its L = 2048 time, over 20 s"
                                           : "16 x its L = 512 time, over 1 s with --quick";
                fill_uniform(q, count, -1.0f, 1.0f);
                fill_uniform(k, count, -1.0f, 1.0f);
                fill_uniform(v, count, -1.0f, 1.0f);
                memset(o, 0, count * sizeof(float));
                c.p = attn_attention_init(batch, heads, heads, L, L, d, d, q, k, v, o,
                                          ATTN_LAYOUT_BHLD);
                attcase_store(&c, (attn_dtype)ty, k, v, count, count);
                if (causal) {
                    c.p.causal = ATTN_CAUSAL_OFFSET;
                    c.p.causal_offset = 0;
                    flop *= 0.5;
                }
                attcase_alloc(&c, L, L, d);
                bench_fma_limit(&lim);
                lim.factor = 1.0;
                sprintf(shape, "%lux%lux%lux%lu:%s%s", (unsigned long)batch,
                        (unsigned long)heads, (unsigned long)L, (unsigned long)d,
                        causal ? "causal" : "full", ty == ATTN_F16 ? ":f16" : "");
                bench_shape(op, shape, flop, &c, o, count, L <= 512, &lim);
                if (ty == ATTN_F16)
                    attn_ratio_row(op, shape, ATTN_F16, causal + 2, causal, 1);
                free(q);
                free(k);
                free(v);
                free(o);
                attcase_free(&c);
            }
    g_predict.factor = 0.0;
}

/* Decode: value = bytes of K and V stored (4, 2 or 34/32 per element) read per call / time
 * (GB/s), share of the measured read bandwidth; each layout with the cache in f32, f16, bf16
 * and q8_0, and the other caches' calls per second over the f32 cache's. */
static void bench_decode(struct op *op)
{
    /* q_len, kv_len, heads, kv_heads, Q's offset from a 64-byte boundary in floats (4: the
     * 16 bytes malloc guarantees) */
    static const size_t cfg[][5] = {
        {1, 4096, 8, 8, 0},   {1, 4096, 32, 32, 0}, {1, 4096, 32, 8, 0},  {4, 4096, 8, 8, 0},
        {1, 16384, 8, 8, 0},  {1, 16384, 32, 32, 0}, {1, 16384, 32, 8, 0}, {4, 16384, 8, 8, 0},
        {1, 256, 32, 8, 0},   {4, 256, 8, 8, 0},    {1, 4096, 32, 8, 4},  {4, 4096, 8, 8, 4}};
    const size_t d = 128;
    size_t ci;
    int ty;
    for (ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++)
        for (ty = ATTN_F32; ty <= ATTN_Q8_0; ty++) {
            const size_t lq = cfg[ci][0], lk = cfg[ci][1], heads = cfg[ci][2], kvh = cfg[ci][3];
            const size_t qoff = cfg[ci][4];
            const size_t nq = heads * lq * d, nkv = kvh * lk * d;
            struct attcase c;
            struct limit lim;
            char shape[64];
            float *q, *k, *v, *o;
            if (g_opt.quick && ci > 0)
                continue;
            q = falloc(nq + qoff);
            k = falloc(nkv);
            v = falloc(nkv);
            o = falloc(nq);
            fill_uniform(q + qoff, nq, -1.0f, 1.0f);
            fill_uniform(k, nkv, -1.0f, 1.0f);
            fill_uniform(v, nkv, -1.0f, 1.0f);
            memset(o, 0, nq * sizeof(float));
            c.p = attn_attention_init(1, heads, kvh, lq, lk, d, d, q + qoff, k, v, o,
                                      ATTN_LAYOUT_BHLD);
            attcase_store(&c, (attn_dtype)ty, k, v, nkv, nkv);
            attcase_alloc(&c, lq, lk, d);
            lim.name = "read_256MiB";
            lim.value = g_lim.read_mem;
            lim.factor = 1.0;
            g_predict.variant = ty;
            sprintf(shape, "q%lu:kv%lu:h%lu/%lu:d%lu%s%s%s", (unsigned long)lq,
                    (unsigned long)lk, (unsigned long)heads, (unsigned long)kvh,
                    (unsigned long)d, ty == ATTN_F32 ? "" : ":",
                    ty == ATTN_F32 ? "" : dtype_name[ty], qoff ? ":q16B" : "");
            bench_shape(op, shape, 2.0 * (double)attn_dtype_bytes((attn_dtype)ty, nkv), &c, o,
                        nq, 1, &lim);
            if (ty != ATTN_F32)
                attn_ratio_row(op, shape, (attn_dtype)ty, ty, ATTN_F32, 1);
            free(q);
            free(k);
            free(v);
            free(o);
            attcase_free(&c);
        }
}

/* decode-cold: the decode shapes of 4096 and 16384 keys out of cache. A case's K and V are
 * stored in `n` copies spanning BENCH_COLD_BYTES; each call reads the next copy. */
struct coldatt {
    struct attcase c[BENCH_COLD_MAX]; /* one workspace (c[0].ws), one Q and one O for all */
    size_t n, next;
};

static void attn_cold_run(void *ctx, void *data)
{
    struct coldatt *w = (struct coldatt *)data;
    const struct attcase *c = &w->c[w->next];
    (void)ctx;
    w->next = w->next + 1 < w->n ? w->next + 1 : 0;
    check(attn_attention(&c->p, w->c[0].ws, w->c[0].ws_size), "attn_attention");
}

static void bench_decode_cold(struct op *op)
{
    /* q_len, kv_len, heads, kv_heads: the decode op's shapes of 4096 and 16384 keys */
    static const size_t cfg[][4] = {{1, 4096, 8, 8},  {1, 4096, 32, 32},  {1, 4096, 32, 8},
                                    {4, 4096, 8, 8},  {1, 16384, 8, 8},   {1, 16384, 32, 32},
                                    {1, 16384, 32, 8}, {4, 16384, 8, 8}};
    static struct coldatt w;
    const size_t d = 128;
    size_t ci, i;
    int ty;
    for (ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++)
        for (ty = ATTN_F32; ty <= ATTN_Q8_0; ty++) {
            const size_t lq = cfg[ci][0], lk = cfg[ci][1], heads = cfg[ci][2], kvh = cfg[ci][3];
            const size_t nq = heads * lq * d, nkv = kvh * lk * d;
            const double bytes = 2.0 * (double)attn_dtype_bytes((attn_dtype)ty, nkv);
            struct limit lim;
            char shape[64];
            float *q, *o;
            if (g_opt.quick && ci > 0)
                continue;
            q = falloc(nq);
            o = falloc(nq);
            fill_uniform(q, nq, -1.0f, 1.0f);
            memset(o, 0, nq * sizeof(float));
            w.n = cold_copies(bytes);
            w.next = 0;
            for (i = 0; i < w.n; i++) {
                struct attcase *c = &w.c[i];
                float *k = falloc(nkv), *v = falloc(nkv);
                fill_uniform(k, nkv, -1.0f, 1.0f);
                fill_uniform(v, nkv, -1.0f, 1.0f);
                c->p = attn_attention_init(1, heads, kvh, lq, lk, d, d, q, k, v, o,
                                           ATTN_LAYOUT_BHLD);
                attcase_store(c, (attn_dtype)ty, k, v, nkv, nkv);
                if (ty != ATTN_F32) { /* the stored copy only */
                    free(k);
                    free(v);
                    c->k32 = c->v32 = NULL;
                }
                c->ws = NULL;
            }
            w.c[0].ws_size = attn_attention_workspace_size(&w.c[0].p);
            w.c[0].ws = xalloc(w.c[0].ws_size);
            lim.name = "read_256MiB";
            lim.value = g_lim.read_mem;
            lim.factor = 1.0;
            g_predict.variant = ty;
            sprintf(shape, "q%lu:kv%lu:h%lu/%lu:d%lu%s%s", (unsigned long)lq, (unsigned long)lk,
                    (unsigned long)heads, (unsigned long)kvh, (unsigned long)d,
                    ty == ATTN_F32 ? "" : ":", ty == ATTN_F32 ? "" : dtype_name[ty]);
            bench_shape(op, shape, bytes, &w, o, nq, 1, &lim);
            if (ty != ATTN_F32)
                attn_ratio_row(op, shape, (attn_dtype)ty, ty, ATTN_F32, 0);
            free(w.c[0].ws);
            for (i = 0; i < w.n; i++) {
                if (ty == ATTN_F32) {
                    free((void *)w.c[i].p.k);
                    free((void *)w.c[i].p.v);
                }
                free(w.c[i].kv16);
            }
            free(q);
            free(o);
        }
}

static const struct impl attention_impls[] = {
    {"naive", naive_attention, NULL, NULL, NULL, NULL, naive_att_extra, 0},
    {"attn", attn_attention_run, NULL, NULL, NULL, NULL, fused_att_extra, 0},
    {"attn-unfused", attn_unfused_run, NULL, NULL, NULL, NULL, attn_unfused_extra, 0},
    {"attn-unfused-128", attn_unfused128_run, NULL, NULL, NULL, NULL, attn_unfused128_extra, 0},
};

static const struct impl decode_impls[] = {
    {"naive", naive_attention, NULL, NULL, NULL, NULL, naive_att_extra, 0},
    {"attn", attn_attention_run, NULL, NULL, NULL, NULL, fused_att_extra, 0},
    {"attn-unfused", attn_unfused_run, NULL, NULL, NULL, NULL, attn_unfused_extra, 0},
#ifdef HAVE_DISPATCHED
    {"attn-dispatched", dispatched_attention_run, NULL, NULL, NULL, NULL, fused_att_extra, 0},
#endif
};

/* Peer children compare with attn-unfused-128, the composition they are built like. */
struct op bench_op_attention = {
    .name = "attention",
    .metric = "GFLOP/s",
    .note =
        "shape batch x heads x L x d, Lq = Lk = L; value = 4*L*L*d per head (half when "
        "causal) / time; ratio = value / naive attention with the full score matrix (L <= "
        "512); attn = fused attn_attention; *-unfused = sgemm + attn_softmax + sgemm over the "
        "full score matrix, *-unfused-128 over 128-row blocks; mem = extra memory; :f16 = K "
        "and V stored in f16 (the unfused compositions on the widened values), attn-f16/f32 "
        "= its speed over the f32 shape's",
    .own = attention_impls,
    .nown = NIMPL(attention_impls),
    .bench = bench_attention,
    .primary = "attn",
    .child_ref = 3,
};

struct op bench_op_decode = {
    .name = "decode",
    .metric = "GB/s",
    .note =
        "shape q<queries per head>:kv<cached keys>:h<heads>/<kv heads>:d<head dim>[:f16, "
        ":bf16 or :q8_0, the cache's type]; value = bytes of K and V stored in the cache / "
        "time; ratio = value / naive loop (on the widened values); share of the read "
        "bandwidth measured at 256 MiB (the caches of 4096 and 16384 keys are 4-512 MiB, so "
        "part may sit in L3; those of 256 keys, 0.5-2 MiB, sit in L2 or L3: the per-key work "
        "binds there); :q16B = Q 16 bytes past a 64-byte boundary, as malloc may give it; "
        "*-unfused = sgemm (m = queries) + attn_softmax + sgemm; attn-<type>/f32 = calls/s "
        "on the 16-bit or q8_0 cache over the f32 cache's; attn-dispatched = the one-binary "
        "build (see the header); on a CPU with VNNI a q8_0 cache's scores round the queries "
        "to q8_0 too (the README's bound), so its rows differ from the naive loop's by up to "
        "a few 1e-3",
    .own = decode_impls,
    .nown = NIMPL(decode_impls),
    .bench = bench_decode,
    .primary = "attn",
    .child_ref = 1,
    .warn_diff = 1e-2,
};

static const struct impl decode_cold_impls[] = {
    {"attn", attn_cold_run, NULL, NULL, NULL, NULL, NULL, 0},
};

struct op bench_op_decode_cold = {
    .name = "decode-cold",
    .metric = "GB/s",
    .note =
        "the decode op's shapes of 4096 and 16384 keys out of cache: each shape's K and V "
        "stored in as many copies as span 256 MiB (the read bandwidth's buffer), each call "
        "on the next copy; value = bytes of K and V stored / time; share of the read "
        "bandwidth measured at 256 MiB; attn-<type>/f32 = calls/s on the 16-bit or q8_0 "
        "cache over the f32 cache's, both out of cache",
    .own = decode_cold_impls,
    .nown = NIMPL(decode_cold_impls),
    .bench = bench_decode_cold,
    .primary = "attn",
    .child_ref = 0,
};
