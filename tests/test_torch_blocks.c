/* test_torch_blocks.c - attn_encoder_ex / attn_decoder_ex against PyTorch's
 * nn.TransformerEncoderLayer / nn.TransformerDecoderLayer (tests/torch/gen_blocks.py):
 * d_model 48, 4 heads, d_ff 80, erf GELU, post-LN and pre-LN, the weights used as the state
 * dict stores them (in_proj_weight [3E, E] split by pointer offsets, [out, in] matrices with
 * ATTN_TRANS, nothing copied or transposed). Full sequences with and without padding masks
 * (key_mask / mem_mask: PyTorch's padding masks negated), causal and not; then token-by-token
 * decoding through KV caches (4 tokens prefilled, then 1 a call; the decoder's memory K/V
 * projected once into mem_cache and reused with mem = NULL) in f32 and f16, each step's rows
 * against the rows of PyTorch's full causal output.
 * Usage: test_torch_blocks tests/torch/blocks.bin */
#include "../attn.h"

#include <stdint.h>

#include "check.h"

#define E 48  /* d_model */
#define H 4   /* heads */
#define HD 12 /* head_dim */
#define FF 80 /* dim_feedforward */
#define T 11  /* tokens */
#define M 9   /* memory tokens of the decoder */
#define P 4   /* tokens prefilled before decoding one at a time */

#include "torch_records.h"

/* the record `name` of `count` floats (a missing or misshapen record ends the test) */
static const float *get(const char *name, size_t count)
{
    const rec *r = find_in(name, "torch_blocks");
    if (r->count == count && r->type == 0) return (const float *)r->data;
    check(0, "record %s has %u elements, not %zu floats", name, (unsigned)r->count, count);
    exit(check_end("torch_blocks"));
}

static const float *param(const char *block, const char *name, size_t count)
{
    char n[128];
    snprintf(n, sizeof n, "%s.%s", block, name);
    return get(n, count);
}

/* nn.MultiheadAttention's parameters as stored: q, k, v are row blocks of in_proj_weight
 * [3E, E] and of in_proj_bias [3E] (pointers into the records), out_proj.weight [E, E] */
static void mha_weights(attn_mha_weights *w, const char *block, const char *attn)
{
    char n[48];
    const float *p, *b;
    memset(w, 0, sizeof *w);
    w->d_model = E, w->heads = H, w->wtype = ATTN_F32, w->trans = ATTN_TRANS;
    snprintf(n, sizeof n, "%s.in_proj_weight", attn), p = param(block, n, 3 * E * E);
    snprintf(n, sizeof n, "%s.in_proj_bias", attn), b = param(block, n, 3 * E);
    w->wq = p, w->wk = p + E * E, w->wv = p + 2 * E * E; /* ld 0: dense (E) */
    w->bq = b, w->bk = b + E, w->bv = b + 2 * E;
    snprintf(n, sizeof n, "%s.out_proj.weight", attn), w->wo = param(block, n, E * E);
    snprintf(n, sizeof n, "%s.out_proj.bias", attn), w->bo = param(block, n, E);
}

/* linear1.weight [F, E], linear2.weight [E, F]: nn.Linear's [out, in], ATTN_TRANS */
static void ffn_weights(attn_ffn_weights *w, const char *block)
{
    memset(w, 0, sizeof *w);
    w->d_model = E, w->d_ff = FF, w->act = ATTN_ACT_GELU, w->wtype = ATTN_F32;
    w->trans = ATTN_TRANS;
    w->w1 = param(block, "linear1.weight", FF * E), w->b1 = param(block, "linear1.bias", FF);
    w->w2 = param(block, "linear2.weight", E * FF), w->b2 = param(block, "linear2.bias", E);
}

static void encoder_weights(attn_encoder_weights *w, attn_norm_order norm)
{
    memset(w, 0, sizeof *w);
    mha_weights(&w->attn, "enc", "self_attn");
    ffn_weights(&w->ffn, "enc");
    w->ln1_gamma = param("enc", "norm1.weight", E), w->ln1_beta = param("enc", "norm1.bias", E);
    w->ln2_gamma = param("enc", "norm2.weight", E), w->ln2_beta = param("enc", "norm2.bias", E);
    w->eps = 1e-5f, w->norm = norm;
}

static void decoder_weights(attn_decoder_weights *w, attn_norm_order norm)
{
    memset(w, 0, sizeof *w);
    mha_weights(&w->self_attn, "dec", "self_attn");
    mha_weights(&w->cross_attn, "dec", "multihead_attn");
    ffn_weights(&w->ffn, "dec");
    w->ln1_gamma = param("dec", "norm1.weight", E), w->ln1_beta = param("dec", "norm1.bias", E);
    w->ln2_gamma = param("dec", "norm2.weight", E), w->ln2_beta = param("dec", "norm2.bias", E);
    w->ln3_gamma = param("dec", "norm3.weight", E), w->ln3_beta = param("dec", "norm3.bias", E);
    w->eps = 1e-5f, w->norm = norm;
}

/* attn's key mask (nonzero = attend) from PyTorch's padding mask (1 = padded) */
static void negate(const char *name, uint8_t *mask, size_t n)
{
    const float *pad = get(name, n);
    size_t i;
    for (i = 0; i < n; i++) mask[i] = pad[i] == 0.0f;
}

static uint8_t src_mask[T], tgt_mask[T], mem_mask[M];

static const char *tag(attn_norm_order norm) { return norm == ATTN_POST_LN ? "post" : "pre"; }
static const char *ln_name(attn_norm_order norm)
{
    return norm == ATTN_POST_LN ? "post-LN" : "pre-LN";
}

/* PyTorch's float64 output `name` of the blocks */
static const float *ref(const char *blk, attn_norm_order norm, const char *variant)
{
    char n[64];
    snprintf(n, sizeof n, "%s.%s.%s", blk, tag(norm), variant);
    return get(n, T * E);
}

static double max_abs(const float *y, size_t n)
{
    double m = 0;
    size_t i;
    for (i = 0; i < n; i++)
        if (fabs(y[i]) > m) m = fabs(y[i]);
    return m;
}

/* largest |got - want| over n values (NaN counts as infinite) */
static double max_err(const float *got, const float *want, size_t n)
{
    double e = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        const double d = fabs((double)got[i] - want[i]);
        if (!(d <= e)) e = d == d ? d : INFINITY;
    }
    return e;
}

/* The full-sequence tolerance: float32 arithmetic throughout against float64 (the errors
 * are ~1e-6; the layer norms scale them by up to gamma / sigma) */
static double tol32(const float *want) { return 2e-5 * fmax(1.0, max_abs(want, T * E)); }

/* f16 caches: K and V rounded to 11 significant bits (relative error <= 2^-11 = 4.9e-4) make
 * the scores' error up to ~|q| |k| 4.9e-4 / sqrt(12) and the attention output's about
 * 4.9e-4 |v|; through Wo, the residual and the layer norm (gain gamma / sigma ~ 1-3) that is
 * ~1e-3 of the outputs' scale, where the f32 cache gives ~1e-6. */
static double tol16(const float *want) { return 2e-3 * max_abs(want, T * E); }

static void *alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) exit(2);
    return p;
}

/* ---- full sequences ----------------------------------------------------------------------- */

static void full_encoder(attn_norm_order norm, const char *variant, int causal,
                         const uint8_t *key_mask, int plain)
{
    attn_encoder_weights w;
    attn_block_options opt;
    const float *x = get("enc.x", T * E), *want = ref("enc", norm, variant);
    float y[T * E];
    size_t need;
    void *ws;
    attn_status st;
    double err, tol = tol32(want);
    encoder_weights(&w, norm);
    memset(&opt, 0, sizeof opt);
    opt.key_mask = key_mask;
    need = attn_encoder_workspace_size(&w, T);
    ws = alloc(need);
    memset(y, 0xff, sizeof y); /* NaN */
    st = plain ? attn_encoder(&w, x, E, y, E, T, causal, ws, need)
               : attn_encoder_ex(&w, x, E, y, E, T, causal, &opt, ws, need);
    check(need > 0 && st == ATTN_OK, "encoder %s %s: %s", tag(norm), variant,
          attn_status_string(st));
    err = max_err(y, want, T * E);
    check(err <= tol, "encoder %s-LN %s%s: max |dy| %.3g > %.3g", tag(norm), variant,
          plain ? " (attn_encoder)" : "", err, tol);
    printf("torch_blocks: encoder %-7s %-10s %-16s max |dy| %.3g (bound %.3g, max |y| %.3g)\n",
           ln_name(norm), variant, plain ? "attn_encoder" : "attn_encoder_ex", err, tol,
           max_abs(want, T * E));
    free(ws);
}

static void full_decoder(attn_norm_order norm, const char *variant, int causal,
                         const uint8_t *key_mask, const uint8_t *mmask, int plain)
{
    attn_decoder_weights w;
    attn_block_options opt;
    const float *x = get("dec.x", T * E), *mem = get("dec.mem", M * E);
    const float *want = ref("dec", norm, variant);
    float y[T * E];
    size_t need;
    void *ws;
    attn_status st;
    double err, tol = tol32(want);
    decoder_weights(&w, norm);
    memset(&opt, 0, sizeof opt);
    opt.key_mask = key_mask, opt.mem_mask = mmask;
    need = attn_decoder_workspace_size(&w, T, M);
    ws = alloc(need);
    memset(y, 0xff, sizeof y);
    st = plain ? attn_decoder(&w, x, E, y, E, T, mem, E, M, ws, need)
               : attn_decoder_ex(&w, x, E, y, E, T, causal, mem, E, M, &opt, ws, need);
    check(need > 0 && st == ATTN_OK, "decoder %s %s: %s", tag(norm), variant,
          attn_status_string(st));
    err = max_err(y, want, T * E);
    check(err <= tol, "decoder %s-LN %s%s: max |dy| %.3g > %.3g", tag(norm), variant,
          plain ? " (attn_decoder)" : "", err, tol);
    printf("torch_blocks: decoder %-7s %-11s %-15s max |dy| %.3g (bound %.3g, max |y| %.3g)\n",
           ln_name(norm), variant, plain ? "attn_decoder" : "attn_decoder_ex", err, tol,
           max_abs(want, T * E));
    free(ws);
}

/* ---- token by token through KV caches -------------------------------------------------- */

/* The causal encoder: P tokens in one call, then one a call, through a cache of `type`;
 * each call's output rows against PyTorch's full causal output (with key_mask: over the
 * cache's len after the append, the prefix of the whole sequence's mask). Returns the
 * largest error. */
static double decode_encoder(attn_norm_order norm, attn_dtype type, const char *variant,
                             const uint8_t *key_mask)
{
    attn_encoder_weights w;
    attn_block_options opt;
    attn_kv_cache c;
    const float *x = get("enc.x", T * E), *want = ref("enc", norm, variant);
    void *kc = alloc(T * E * 4), *vc = alloc(T * E * 4);
    float y[T * E];
    size_t pos, n;
    double worst = 0;
    encoder_weights(&w, norm);
    check(attn_kv_cache_init_type(&c, type, kc, vc, 1, H, T, HD, HD) == ATTN_OK, "cache init");
    memset(&opt, 0, sizeof opt);
    opt.cache = &c;
    for (pos = 0; pos < T; pos += n) {
        const size_t need = attn_encoder_workspace_size(&w, n = pos ? 1 : P);
        void *ws = alloc(need);
        uint8_t *km = key_mask ? (uint8_t *)alloc(pos + n) : NULL; /* the len keys, exactly */
        attn_status st;
        double e;
        if (km) memcpy(km, key_mask, pos + n);
        opt.key_mask = km;
        memset(y, 0xff, sizeof y);
        st = attn_encoder_ex(&w, x + pos * E, E, y, E, n, 1, &opt, ws, need);
        check(st == ATTN_OK && c.len == pos + n, "encoder %s-LN decode at %zu: %s (len %zu)",
              tag(norm), pos, attn_status_string(st), c.len);
        e = max_err(y, want + pos * E, n * E);
        if (!(e <= worst)) worst = e;
        free(ws), free(km);
    }
    free(kc), free(vc);
    return worst;
}

/* The causal decoder the same way; the memory's K and V are projected into mem_cache by the
 * first call (mem, M tokens; mem_cache.len reset to 0 before: a new memory) and reused by the
 * others (mem NULL, mem_tokens 0). `reuse` runs a whole sequence first with the same caches,
 * then resets both lens, as a caller starting a new sequence does. */
static double decode_decoder(attn_norm_order norm, attn_dtype type, const char *variant,
                             const uint8_t *mmask, int reuse)
{
    attn_decoder_weights w;
    attn_block_options opt;
    attn_kv_cache c, mc;
    const float *x = get("dec.x", T * E), *mem = get("dec.mem", M * E);
    const float *want = ref("dec", norm, variant);
    void *kc = alloc(T * E * 4), *vc = alloc(T * E * 4), *mk = alloc(M * E * 4),
         *mv = alloc(M * E * 4);
    float y[T * E];
    size_t pos, n;
    double worst = 0;
    int round;
    decoder_weights(&w, norm);
    check(attn_kv_cache_init_type(&c, type, kc, vc, 1, H, T, HD, HD) == ATTN_OK &&
              attn_kv_cache_init_type(&mc, type, mk, mv, 1, H, M, HD, HD) == ATTN_OK,
          "cache init");
    memset(&opt, 0, sizeof opt);
    opt.cache = &c, opt.mem_cache = &mc, opt.mem_mask = mmask;
    for (round = reuse ? 0 : 1; round < 2; round++) {
        c.len = 0, mc.len = 0; /* a new sequence, a new memory */
        for (pos = 0; pos < T; pos += n) {
            const size_t mt = pos ? 0 : M;
            const size_t need = attn_decoder_workspace_size(&w, n = pos ? 1 : P, mt);
            void *ws = alloc(need);
            attn_status st;
            double e;
            memset(y, 0xff, sizeof y);
            st = attn_decoder_ex(&w, x + pos * E, E, y, E, n, 1, pos ? NULL : mem, E, mt, &opt, ws,
                                 need);
            check(st == ATTN_OK && c.len == pos + n && mc.len == M,
                  "decoder %s-LN decode at %zu: %s (len %zu, mem len %zu)", tag(norm), pos,
                  attn_status_string(st), c.len, mc.len);
            e = max_err(y, want + pos * E, n * E);
            if (round == 1 && !(e <= worst)) worst = e;
            free(ws);
        }
    }
    free(kc), free(vc), free(mk), free(mv);
    return worst;
}

static void test_decode(attn_norm_order norm)
{
    static const struct {
        const char *name;
        attn_dtype type;
    } caches[2] = {{"f32", ATTN_F32}, {"f16", ATTN_F16}};
    int i;
    for (i = 0; i < 2; i++) {
        const attn_dtype ct = caches[i].type;
        double (*tol)(const float *) = ct == ATTN_F32 ? tol32 : tol16;
        const float *we = ref("enc", norm, "causal"), *wep = ref("enc", norm, "causal_pad");
        const float *wd = ref("dec", norm, "causal"), *wdm = ref("dec", norm, "causal_mpad");
        const double e1 = decode_encoder(norm, ct, "causal", NULL);
        const double e2 = decode_encoder(norm, ct, "causal_pad", src_mask);
        const double e3 = decode_decoder(norm, ct, "causal", NULL, 0);
        const double e4 = decode_decoder(norm, ct, "causal_mpad", mem_mask, 1);
        check(e1 <= tol(we), "encoder %s-LN decode, %s cache: %.3g > %.3g", tag(norm),
              caches[i].name, e1, tol(we));
        check(e2 <= tol(wep), "encoder %s-LN decode with key_mask, %s cache: %.3g > %.3g",
              tag(norm), caches[i].name, e2, tol(wep));
        check(e3 <= tol(wd), "decoder %s-LN decode, %s caches: %.3g > %.3g", tag(norm),
              caches[i].name, e3, tol(wd));
        check(e4 <= tol(wdm), "decoder %s-LN decode with mem_mask (caches reused), %s caches: "
              "%.3g > %.3g", tag(norm), caches[i].name, e4, tol(wdm));
        printf("torch_blocks: %s-LN decode (%d prefilled + %d x 1), %s caches, max |dy|: encoder "
               "%.3g, with key_mask %.3g (bound %.3g); decoder %.3g, with mem_mask %.3g "
               "(bound %.3g)\n", tag(norm), P, T - P, caches[i].name, e1, e2,
               fmax(tol(we), tol(wep)), e3, e4, fmax(tol(wd), tol(wdm)));
    }
}

/* The masks and the causal flag must matter in this data, else their checks test nothing */
static void test_data(void)
{
    static const char *const pairs[][3] = {
        {"enc", "none", "pad"},          {"enc", "none", "causal"},
        {"enc", "causal", "causal_pad"}, {"dec", "causal", "causal_mpad"},
        {"dec", "causal", "full"},       {"dec", "full", "full_pad"}};
    size_t i;
    int norm;
    for (norm = 0; norm < 2; norm++)
        for (i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            const double d = max_err(ref(pairs[i][0], (attn_norm_order)norm, pairs[i][1]),
                                     ref(pairs[i][0], (attn_norm_order)norm, pairs[i][2]), T * E);
            check(d > 0.05, "%s %s-LN: %s and %s differ by only %.3g", pairs[i][0],
                  tag((attn_norm_order)norm), pairs[i][1], pairs[i][2], d);
        }
}

int main(int argc, char **argv)
{
    static const attn_norm_order orders[2] = {ATTN_POST_LN, ATTN_PRE_LN};
    size_t i;
    check_begin("torch_blocks");
    if (argc < 2 || !load(argv[1])) {
        check(0, "cannot read the data (pass tests/torch/blocks.bin)");
        return check_end("torch_blocks");
    }
    negate("enc.src_key_padding_mask", src_mask, T);
    negate("dec.tgt_key_padding_mask", tgt_mask, T);
    negate("dec.memory_key_padding_mask", mem_mask, M);
    test_data();
    for (i = 0; i < 2; i++) {
        const attn_norm_order o = orders[i];
        full_encoder(o, "none", 0, NULL, 0);
        full_encoder(o, "none", 0, NULL, 1);
        full_encoder(o, "pad", 0, src_mask, 0);
        full_encoder(o, "causal", 1, NULL, 0);
        full_encoder(o, "causal", 1, NULL, 1);
        full_encoder(o, "causal_pad", 1, src_mask, 0);
        full_decoder(o, "causal", 1, NULL, NULL, 0);
        full_decoder(o, "causal", 1, NULL, NULL, 1);
        full_decoder(o, "causal_mpad", 1, NULL, mem_mask, 0);
        full_decoder(o, "full", 0, NULL, NULL, 0);
        full_decoder(o, "full_pad", 0, tgt_mask, mem_mask, 0);
        test_decode(o);
    }
    free_records();
    return check_end("torch_blocks");
}
