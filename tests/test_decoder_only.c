/* test_decoder_only.c - attn_decoder_only against PyTorch (tests/torch/gen_decoder_only.py):
 * a Llama-style and a GPT-NeoX-style model of two layers each, their weights used as the
 * state dict stores them ([out, in], q/k/v fused in one tensor for NeoX) in f16 and widened
 * to f32, KV caches in f32 and f16; 7 tokens prefilled, then 32 decoded one at a time, and
 * all 39 at once; the outputs against PyTorch's float64 run of the same weights. Then the
 * block's errors. Usage: test_decoder_only tests/torch/decoder_only.bin */
#include "../attn.h"

#include <stdint.h>

#include "check.h"

#define T 39  /* tokens of the data */
#define P 7   /* of which prefilled */
#define D 64  /* d_model */
#define HD 16 /* head_dim */

#include "torch_records.h"

static const rec *find(const char *name) { return find_in(name, "decoder_only"); }

/* a weight record as f16 (as stored) or widened to f32 (one copy per record) */
static float *widened[TORCH_MAXREC];
static const void *weight(const char *name, attn_dtype type)
{
    const rec *r = find(name);
    const size_t i = (size_t)(r - recs);
    if (type == ATTN_F16 || r->type == 0) return r->data;
    if (!widened[i]) {
        widened[i] = (float *)malloc(r->count * sizeof(float));
        if (!widened[i]) exit(2);
        attn_convert(ATTN_F32, widened[i], ATTN_F16, r->data, r->count);
    }
    return widened[i];
}

static const float *vec(const char *name) { return (const float *)weight(name, ATTN_F32); }

static attn_matrix mat(const void *w, size_t ld, attn_dtype type, const float *bias)
{
    attn_matrix m;
    m.w = w, m.ld = ld, m.trans = ATTN_TRANS, m.type = type, m.bias = bias;
    return m;
}

static void layer_weights(int neox, int layer, attn_dtype wt, attn_decoder_only_weights *w)
{
    char n[64];
    const char *pre = neox ? "neox" : "llama";
    memset(w, 0, sizeof *w);
    w->d_model = D, w->head_dim = HD, w->eps = 1e-5f;
    w->rope.head_dim = HD, w->rope.pairing = ATTN_ROPE_HALVES;
#define W(field) (snprintf(n, sizeof n, "%s.%d.%s", pre, layer, field), n)
    if (!neox) {
        w->heads = 4, w->kv_heads = 2, w->d_ff = 96;
        w->wq = mat(weight(W("wq"), wt), D, wt, NULL);
        w->wk = mat(weight(W("wk"), wt), D, wt, NULL);
        w->wv = mat(weight(W("wv"), wt), D, wt, NULL);
        w->wo = mat(weight(W("wo"), wt), 4 * HD, wt, NULL);
        w->w_gate = mat(weight(W("w_gate"), wt), D, wt, NULL);
        w->w_up = mat(weight(W("w_up"), wt), D, wt, NULL);
        w->w_down = mat(weight(W("w_down"), wt), 96, wt, NULL);
        w->act = ATTN_ACT_SILU, w->norm = ATTN_NORM_RMS;
        w->attn_norm = vec(W("attn_norm"));
        w->ffn_norm = vec(W("ffn_norm"));
    } else {
        /* the fused [Wq; Wk; Wv] as stored: the parts are row offsets into it */
        const void *qkv = weight(W("wqkv"), wt);
        const float *b = vec(W("bqkv"));
        const size_t es = wt == ATTN_F16 ? 2 : 4;
        w->heads = 4, w->kv_heads = 4, w->d_ff = 128;
        w->wq = mat(qkv, D, wt, b);
        w->wk = mat((const char *)qkv + D * D * es, D, wt, b + D);
        w->wv = mat((const char *)qkv + 2 * D * D * es, D, wt, b + 2 * D);
        w->wo = mat(weight(W("wo"), wt), D, wt, vec(W("bo")));
        w->w_up = mat(weight(W("w_up"), wt), D, wt, vec(W("b_up")));
        w->w_down = mat(weight(W("w_down"), wt), 128, wt, vec(W("b_down")));
        w->act = ATTN_ACT_GELU, w->norm = ATTN_NORM_LAYER, w->parallel_residual = 1;
        w->attn_norm = vec(W("ln1_w")), w->attn_norm_b = vec(W("ln1_b"));
        w->ffn_norm = vec(W("ln2_w")), w->ffn_norm_b = vec(W("ln2_b"));
        w->rope.rot_dim = 4; /* 25% */
    }
#undef W
}

static double max_err[2][2][2]; /* [neox][16-bit weights][16-bit cache] */

/* Runs the model on x (T x D) in `chunks` calls per layer (sizes in steps[]), in place
 * or not; returns the largest |y - y64| / (1 + |y64|) of the last layer's outputs. */
static double run(int neox, attn_dtype wt, attn_dtype ct, const size_t *steps, int inplace)
{
    attn_decoder_only_weights w[2];
    attn_kv_cache c[2];
    const float *x = vec(neox ? "neox.x" : "llama.x"), *ref;
    const rec *r64 = find(neox ? "neox.y64" : "llama.y64");
    float *buf = (float *)malloc(T * D * sizeof(float)),
          *out = (float *)malloc(T * D * sizeof(float));
    void *kc[2], *vc[2], *ws;
    size_t l, pos = 0, s, i, need = 0;
    double worst = 0;
    ref = (const float *)r64->data;
    for (l = 0; l < 2; l++) {
        layer_weights(neox, (int)l, wt, &w[l]);
        kc[l] = malloc(T * D * 4), vc[l] = malloc(T * D * 4);
        check(attn_kv_cache_init_type(&c[l], ct, kc[l], vc[l], 1, w[l].kv_heads, T, HD, HD) ==
                  ATTN_OK, "cache init");
        if (attn_decoder_only_workspace_size(&w[l], T) > need)
            need = attn_decoder_only_workspace_size(&w[l], T);
    }
    ws = malloc(need + 1);
    check(need > 0 && ws, "workspace query %zu", need);
    for (s = 0; pos < T; s++) {
        const size_t n = steps[s];
        memcpy(buf, x + pos * D, n * D * sizeof(float));
        for (l = 0; l < 2; l++) {
            float *dst = inplace ? buf : out;
            attn_status st = attn_decoder_only(&w[l], buf, D, dst, D, n, &c[l], ws, need);
            check(st == ATTN_OK, "%s layer %zu at %zu (%zu tokens): %s", neox ? "neox" : "llama",
                  l, pos, n, attn_status_string(st));
            if (!inplace) memcpy(buf, out, n * D * sizeof(float));
        }
        for (i = 0; i < n * D; i++) {
            const double e = fabs(buf[i] - ref[pos * D + i]) / (1.0 + fabs(ref[pos * D + i]));
            if (!(e <= worst)) worst = e; /* NaN too */
        }
        pos += n;
    }
    check(c[0].len == T && c[1].len == T, "cache lengths %zu %zu", c[0].len, c[1].len);
    for (l = 0; l < 2; l++) free(kc[l]), free(vc[l]);
    free(ws), free(buf), free(out);
    return worst;
}

static void test_models(void)
{
    size_t dec[1 + T], all[1] = {T}, odd[8] = {3, 1, 5, 2, 9, 1, 4, 14}, i;
    int neox, w16, c16;
    double torch32[2];
    dec[0] = P;
    for (i = 1; i <= T - P; i++) dec[i] = 1;
    for (neox = 0; neox < 2; neox++) {
        const rec *a = find(neox ? "neox.y32" : "llama.y32"),
                  *b = find(neox ? "neox.y64" : "llama.y64");
        double worst = 0;
        for (i = 0; i < a->count; i++) {
            const double r = ((const float *)b->data)[i];
            const double e = fabs(((const float *)a->data)[i] - r) / (1.0 + fabs(r));
            worst = e > worst ? e : worst;
        }
        torch32[neox] = worst;
        for (w16 = 0; w16 < 2; w16++)
            for (c16 = 0; c16 < 2; c16++) {
                const attn_dtype wt = w16 ? ATTN_F16 : ATTN_F32, ct = c16 ? ATTN_BF16 : ATTN_F32;
                /* an f32 cache: float32 arithmetic throughout (PyTorch's own error is ~1e-6);
                 * a bf16 cache rounds K and V to 8 bits of mantissa */
                const double tol = c16 ? 3e-2 : 2e-5;
                double e1 = run(neox, wt, ct, dec, 0), e2 = run(neox, wt, ct, all, 0);
                double e3 = run(neox, wt, ct, odd, 1);
                const double e = e1 > e2 ? (e1 > e3 ? e1 : e3) : (e2 > e3 ? e2 : e3);
                max_err[neox][w16][c16] = e;
                check(e <= tol, "%s, %s weights, %s cache: error %.3g (prefill + decode %.3g, "
                      "all at once %.3g, odd chunks in place %.3g), bound %.3g",
                      neox ? "neox" : "llama", w16 ? "f16" : "f32", c16 ? "bf16" : "f32", e, e1,
                      e2, e3, tol);
            }
    }
    for (neox = 0; neox < 2; neox++)
        printf("decoder_only: %s (2 layers, 7 prefilled + 32 decoded, all at once, odd chunks "
               "in place) vs PyTorch float64, max |dy|/(1+|y|): f32 weights %.3g, f16 weights "
               "(as stored) %.3g, bf16 KV cache %.3g; PyTorch float32's own %.3g\n",
               neox ? "GPT-NeoX-style" : "Llama-style", max_err[neox][0][0], max_err[neox][1][0],
               max_err[neox][1][1], torch32[neox]);
}

/* Errors: nothing written to y, nothing appended */
static void test_errors(void)
{
    attn_decoder_only_weights w, b;
    attn_kv_cache c, c2;
    float kc[T * 32], vc[T * 32], x[4 * D], y[4 * D], y0[4 * D], kc2[T * 64], vc2[T * 64];
    size_t i, need;
    void *ws;
    layer_weights(0, 0, ATTN_F32, &w);
    need = attn_decoder_only_workspace_size(&w, 4);
    ws = malloc(need);
    for (i = 0; i < 4 * D; i++) x[i] = (float)(i % 13) * 0.1f - 0.6f, y[i] = y0[i] = 7.0f;
    attn_kv_cache_init(&c, kc, vc, 1, 2, T, HD, HD);
#define DO_ERR(call, want, ln)                                                                \
    do {                                                                                      \
        attn_status st_ = (call);                                                             \
        check(st_ == (want) && memcmp(y, y0, sizeof y) == 0 && c.len == (ln),                 \
              "line %d: %s: %s, want %s; y %s, cache length %zu", __LINE__, #call,            \
              attn_status_string(st_), attn_status_string(want),                              \
              memcmp(y, y0, sizeof y) ? "written" : "intact", c.len);                         \
    } while (0)
    DO_ERR(attn_decoder_only(NULL, x, D, y, D, 4, &c, ws, need), ATTN_ERR_NULL, 0);
    DO_ERR(attn_decoder_only(&w, NULL, D, y, D, 4, &c, ws, need), ATTN_ERR_NULL, 0);
    DO_ERR(attn_decoder_only(&w, x, D, y, D, 4, NULL, ws, need), ATTN_ERR_NULL, 0);
    DO_ERR(attn_decoder_only(&w, x, D, y, D, 0, NULL, NULL, 0), ATTN_OK, 0);
    DO_ERR(attn_decoder_only(&w, x, D, y, D, 4, &c, NULL, need), ATTN_ERR_WORKSPACE, 0);
    DO_ERR(attn_decoder_only(&w, x, D, y, D, 4, &c, ws, need - 1), ATTN_ERR_WORKSPACE, 0);
    DO_ERR(attn_decoder_only(&w, x, D - 1, y, D, 4, &c, ws, need), ATTN_ERR_LD, 0);
    DO_ERR(attn_decoder_only(&w, y + 1, D, y, D, 4, &c, ws, need), ATTN_ERR_ALIAS, 0);
    DO_ERR(attn_decoder_only(&w, x, D, y, D, 4, &c, (void *)kc, need), ATTN_ERR_ALIAS, 0);
    DO_ERR(attn_decoder_only(&w, vc + 8, D, y, D, 4, &c, ws, need), ATTN_ERR_ALIAS, 0);
    DO_ERR(attn_decoder_only(&w, x, D, (float *)kc + 1, D, 4, &c, ws, need), ATTN_ERR_ALIAS, 0);
    b = w, b.heads = 3;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_SIZE, 0);
    b = w, b.wk.w = NULL;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_NULL, 0);
    b = w, b.ffn_norm = NULL;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_NULL, 0);
    b = w, b.wo.ld = 4 * HD - 1;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_LD, 0);
    b = w, b.wq.type = (attn_dtype)9;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_ARG, 0);
    b = w, b.act = (attn_act)9;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_ARG, 0);
    b = w, b.norm = (attn_norm_kind)2;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_ARG, 0);
    b = w, b.int8_products = 2;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_ARG, 0);
    b = w, b.eps = -1.0f;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_ARG, 0);
    b = w, b.rope.pairing = (attn_rope_pairing)5;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_ARG, 0);
    b = w, b.rope.head_dim = 8;
    DO_ERR(attn_decoder_only(&b, x, D, y, D, 4, &c, ws, need), ATTN_ERR_SIZE, 0);
    attn_kv_cache_init(&c2, kc2, vc2, 1, 4, T, HD, HD); /* 4 KV heads: another shape */
    check(attn_decoder_only(&w, x, D, y, D, 4, &c2, ws, need) == ATTN_ERR_SIZE &&
              memcmp(y, y0, sizeof y) == 0 && c2.len == 0, "a cache of another shape");
    c.len = T - 3; /* room for 3: the 4 are refused whole */
    DO_ERR(attn_decoder_only(&w, x, D, y, D, 4, &c, ws, need), ATTN_ERR_CAPACITY, T - 3);
    c.len = T + 1; /* an invalid cache */
    DO_ERR(attn_decoder_only(&w, x, D, y, D, 4, &c, ws, need), ATTN_ERR_ARG, T + 1);
    c.len = 0;
    check(attn_decoder_only(&w, x, D, y, D, 4, &c, ws, need) == ATTN_OK && c.len == 4,
          "a valid call after the errors");
#undef DO_ERR
    check(attn_decoder_only_workspace_size(NULL, 4) == 0 &&
              attn_decoder_only_workspace_size(&w, 0) == 0 &&
              attn_decoder_only_workspace_size(&w, 5) >= need,
          "workspace query: NULL, 0 tokens, monotone");
    free(ws);
}

/* One stream of N tokens through layer 0 of the Llama-style model with a sliding window W,
 * sinks and ALiBi: a ring cache of W + 3 positions fed in chunks of 1 to 4 tokens against a
 * plain cache of all N fed one token at a time (the ring drops only keys the window hides,
 * so the outputs agree within rounding: the key tiles split differently). */
#define N 300
#define W 12
static void stream(attn_decoder_only_weights *w, int ring, float *y)
{
    static float kc[N * 2 * HD], vc[N * 2 * HD], x[N * D];
    static const size_t chunk[4] = {1, 4, 2, 3};
    attn_kv_cache c;
    size_t t, i, n;
    void *ws = malloc(attn_decoder_only_workspace_size(w, 4));
    for (i = 0; i < N * D; i++) x[i] = (float)((i * 7919) % 101) / 50.0f - 1.0f;
    if (ring) attn_kv_cache_init_ring(&c, ATTN_F16, kc, vc, 1, 2, W + 3, HD, HD);
    else attn_kv_cache_init_type(&c, ATTN_F16, kc, vc, 1, 2, N, HD, HD);
    for (t = i = 0; t < N; t += n, i++) {
        n = ring ? chunk[i % 4] : 1;
        if (n > N - t) n = N - t;
        check(attn_decoder_only(w, x + t * D, D, y + t * D, D, n, &c, ws,
                                attn_decoder_only_workspace_size(w, 4)) == ATTN_OK,
              "stream (ring %d) refused at token %zu", ring, t);
    }
    check(c.pos == N && c.len == (ring ? W + 3 : N) && (!ring || c.start == N % (W + 3)),
          "stream (ring %d): pos %zu, len %zu, start %zu", ring, c.pos, c.len, c.start);
    free(ws);
}

static void test_window_ring(void)
{
    static float ya[N * D], yb[N * D], yc[N * D];
    float sinks[4] = {0.5f, -INFINITY, 2.0f, -1.0f}, slopes[4];
    attn_decoder_only_weights w;
    double e = 0.0, far = 0.0;
    size_t i;
    layer_weights(0, 0, ATTN_F32, &w);
    stream(&w, 0, yc); /* no window: must differ from the windowed stream */
    attn_alibi_slopes(4, slopes);
    w.window = W, w.sinks = sinks, w.alibi_slopes = slopes;
    stream(&w, 0, ya);
    stream(&w, 1, yb);
    for (i = 0; i < N * D; i++) {
        const double d = fabs((double)ya[i] - yb[i]) / (1.0 + fabs((double)ya[i]));
        const double f = fabs((double)ya[i] - yc[i]) / (1.0 + fabs((double)ya[i]));
        if (!(d <= e)) e = d;
        if (f > far) far = f;
    }
    check(e <= 1e-5, "ring cache of %d against the whole cache, window %d: %.3g", W + 3, W, e);
    check(far > 1e-2, "the window changed nothing (%.3g)", far);
    printf("decoder_only: %d tokens, window %d, sinks, ALiBi: ring cache of %d in chunks of 1-4 "
           "vs the whole cache, max |dy|/(1+|y|) %.3g (bound 1e-5); vs no window %.3g\n", N, W,
           W + 3, e, far);
    { /* a chunk too long for the ring with this window, a NaN sink: refused, nothing appended */
        static float kc[(W + 3) * 2 * HD], vc[(W + 3) * 2 * HD], x[5 * D], y[5 * D];
        attn_kv_cache c;
        void *ws = malloc(attn_decoder_only_workspace_size(&w, 5));
        for (i = 0; i < 5 * D; i++) x[i] = 0.1f;
        attn_kv_cache_init_ring(&c, ATTN_F32, kc, vc, 1, 2, W + 3, HD, HD);
        check(attn_decoder_only(&w, x, D, y, D, 5, &c, ws,
                                attn_decoder_only_workspace_size(&w, 5)) == ATTN_ERR_CAPACITY &&
                  c.len == 0 && c.pos == 0, "ring: 5 tokens with window %d in %d accepted", W,
              W + 3);
        sinks[1] = NAN;
        check(attn_decoder_only(&w, x, D, y, D, 4, &c, ws,
                                attn_decoder_only_workspace_size(&w, 5)) == ATTN_ERR_ARG &&
                  c.len == 0, "a NaN sink accepted");
        free(ws);
    }
}
#undef N
#undef W

int main(int argc, char **argv)
{
    size_t i;
    check_begin("decoder_only");
    if (argc < 2 || !load(argv[1])) {
        check(0, "cannot read the data (pass tests/torch/decoder_only.bin)");
        return check_end("decoder_only");
    }
    test_models();
    test_errors();
    test_window_ring();
    free_records();
    for (i = 0; i < TORCH_MAXREC; i++) free(widened[i]);
    return check_end("decoder_only");
}
