/* test_blocks_ex.c - the 2017-style blocks with weights as stored, key and memory masks and
 * KV caches (attn_mha_ex, attn_encoder_ex, attn_decoder_ex), checked by equivalences whose
 * sides take different routes through the library, over odd sizes:
 *   - weights as stored (PyTorch's [out, in] with a fused in_proj [3E, E], GPT-2's fused
 *     [E, 3E], padded leading dimensions, f32 and bf16) against the dense [in, out] weights;
 *   - a key mask against the same call without the masked keys (rows removed); every key
 *     masked gives the output bias exactly;
 *   - decoding through a cache (prefill, then chunks of 1 or 2 tokens; the decoder's memory
 *     projected once) against the whole sequence in one call; a ring cache with a sliding
 *     window against the window without a cache; 16-bit caches within their rounding;
 *   - the non-causal decoder: its last row is the causal one's, an earlier one is not;
 *   - errors, with the output and the cache untouched.
 * Tolerance: the two sides are each within the f32 path's bound of the same exact block, so
 * they agree to TOL * max(1, max|y|) (TOL 3e-5); 16-bit caches round K and V (f16: 2^-11
 * relative, bf16: 2^-8), TOL16 = 4e-3 and TOLBF = 3e-2. */
#include "../attn.h"

#include <stdint.h>

#include "check.h"

#define TOL 3e-5
#define TOL16 4e-3
#define TOLBF 3e-2

#define EXPECT(call, want)                                                                     \
    do {                                                                                       \
        attn_status st_ = (call);                                                              \
        check(st_ == (want), "line %d: %s returned %d, want %d", __LINE__, #call, (int)st_,    \
              (int)(want));                                                                    \
    } while (0)

static void *owned[512];
static size_t n_owned;

static float *alloc_f(size_t n)
{
    float *p = (float *)malloc((n ? n : 1) * sizeof(float) + 64);
    if (!p) exit(2);
    owned[n_owned++] = p;
    return p;
}

static float *rnd(size_t n, float s)
{
    float *p = alloc_f(n);
    size_t i;
    for (i = 0; i < n; i++) p[i] = check_uniform(-s, s);
    return p;
}

/* a d_in x d_out weight stored as [out, in] at ld (the layout nn.Linear uses, padded) */
static float *transposed(const float *w, size_t din, size_t dout, size_t ld, float *dst)
{
    size_t i, o;
    for (o = 0; o < dout; o++)
        for (i = 0; i < din; i++) dst[o * ld + i] = w[i * dout + o];
    return dst;
}

/* a d_in x d_out weight copied to [in, out] at ld >= d_out */
static float *padded(const float *w, size_t din, size_t dout, size_t ld, float *dst)
{
    size_t i;
    for (i = 0; i < din; i++) memcpy(dst + i * ld, w + i * dout, dout * sizeof(float));
    return dst;
}

/* bf16 copy of n floats (as const float *, the blocks' convention for 16-bit weights) */
static const float *to_bf16(const float *w, size_t n)
{
    float *p = alloc_f(n / 2 + 1);
    if (attn_convert(ATTN_BF16, p, ATTN_F32, w, n) != ATTN_OK) exit(2);
    return p;
}

typedef struct shape {
    size_t d, heads, dff, T, M;
} shape;

typedef struct model {
    shape s;
    attn_encoder_weights enc; /* dense [in, out] */
    attn_decoder_weights dec;
    float *inproj, *c_attn; /* the self-attention's q, k, v fused both ways */
} model;

static attn_mha_weights mk_mha(size_t d, size_t h)
{
    attn_mha_weights w;
    const float s = 1.0f / sqrtf((float)d);
    memset(&w, 0, sizeof w);
    w.d_model = d, w.heads = h;
    w.wq = rnd(d * d, s), w.wk = rnd(d * d, s), w.wv = rnd(d * d, s), w.wo = rnd(d * d, s);
    w.bq = rnd(d, 0.1f), w.bk = rnd(d, 0.1f), w.bv = rnd(d, 0.1f), w.bo = rnd(d, 0.1f);
    return w;
}

static attn_ffn_weights mk_ffn(size_t d, size_t dff)
{
    attn_ffn_weights w;
    memset(&w, 0, sizeof w);
    w.d_model = d, w.d_ff = dff, w.act = ATTN_ACT_GELU;
    w.w1 = rnd(d * dff, 1.0f / sqrtf((float)d)), w.b1 = rnd(dff, 0.1f);
    w.w2 = rnd(dff * d, 1.0f / sqrtf((float)dff)), w.b2 = rnd(d, 0.1f);
    return w;
}

static void mk_model(model *m, shape s)
{
    const size_t d = s.d;
    memset(m, 0, sizeof *m);
    m->s = s;
    m->enc.attn = mk_mha(d, s.heads), m->enc.ffn = mk_ffn(d, s.dff);
    m->enc.ln1_gamma = rnd(d, 1.0f), m->enc.ln1_beta = rnd(d, 0.1f);
    m->enc.ln2_gamma = rnd(d, 1.0f), m->enc.ln2_beta = rnd(d, 0.1f);
    m->enc.eps = 1e-5f;
    m->dec.self_attn = m->enc.attn, m->dec.cross_attn = mk_mha(d, s.heads), m->dec.ffn = m->enc.ffn;
    m->dec.ln1_gamma = m->enc.ln1_gamma, m->dec.ln1_beta = m->enc.ln1_beta;
    m->dec.ln2_gamma = m->enc.ln2_gamma, m->dec.ln2_beta = m->enc.ln2_beta;
    m->dec.ln3_gamma = rnd(d, 1.0f), m->dec.ln3_beta = rnd(d, 0.1f);
    m->dec.eps = 1e-5f;
}

/* The self-attention and FFN as stored by PyTorch: in_proj [3d, d] (trans, dense),
 * out_proj [d, d + 3], linear1 [dff, d + 2], linear2 [d, dff + 1] */
static void as_torch(const model *m, attn_mha_weights *a, attn_ffn_weights *f)
{
    const size_t d = m->s.d, dff = m->s.dff;
    float *in = alloc_f(3 * d * d);
    *a = m->enc.attn, *f = m->enc.ffn;
    transposed(a->wq, d, d, d, in), transposed(a->wk, d, d, d, in + d * d);
    transposed(a->wv, d, d, d, in + 2 * d * d);
    a->wq = in, a->wk = in + d * d, a->wv = in + 2 * d * d, a->trans = ATTN_TRANS;
    a->ldo = d + 3, a->wo = transposed(m->enc.attn.wo, d, d, d + 3, alloc_f(d * (d + 3)));
    f->trans = ATTN_TRANS, f->ld1 = d + 2, f->ld2 = dff + 1;
    f->w1 = transposed(m->enc.ffn.w1, d, dff, d + 2, alloc_f(dff * (d + 2)));
    f->w2 = transposed(m->enc.ffn.w2, dff, d, dff + 1, alloc_f(d * (dff + 1)));
}

/* GPT-2's Conv1D layout: c_attn [d, 3d] (no trans, ld 3d), c_proj [d, d + 5] */
static void as_gpt2(const model *m, attn_mha_weights *a)
{
    const size_t d = m->s.d;
    float *c = alloc_f(3 * d * d);
    *a = m->enc.attn;
    padded(a->wq, d, d, 3 * d, c), padded(a->wk, d, d, 3 * d, c + d);
    padded(a->wv, d, d, 3 * d, c + 2 * d);
    a->wq = c, a->wk = c + d, a->wv = c + 2 * d, a->ldq = a->ldk = a->ldv = 3 * d;
    a->ldo = d + 5, a->wo = padded(m->enc.attn.wo, d, d, d + 5, alloc_f(d * (d + 5)));
}

static double max_abs(const float *y, size_t n)
{
    double m = 1.0;
    size_t i;
    for (i = 0; i < n; i++)
        if (fabs(y[i]) > m) m = fabs(y[i]);
    return m;
}

/* max |a - b| / max(1, max|b|) over rows x d (a at lda, b dense) */
static double rel_err(const float *a, size_t lda, const float *b, size_t rows, size_t d)
{
    double e = 0, s = max_abs(b, rows * d);
    size_t r, c;
    for (r = 0; r < rows; r++)
        for (c = 0; c < d; c++) {
            double t = fabs((double)a[r * lda + c] - b[r * d + c]);
            if (!(t <= e)) e = t; /* NaN wins */
        }
    return e / s;
}

static unsigned char *ws;
static size_t ws_size = (size_t)8 << 20;
static double worst_view, worst_mask, worst_cache, worst16, worst_bf;

static void note(double *worst, double e)
{
    if (!(e <= *worst)) *worst = e;
}

/* ---- weights as stored ---------------------------------------------------------------- */

static void test_views(const model *m)
{
    const size_t d = m->s.d, T = m->s.T, M = m->s.M;
    attn_encoder_weights e = m->enc, eb = m->enc, ebv;
    attn_decoder_weights dv = m->dec;
    attn_mha_weights g;
    float *x = rnd(T * d, 1.0f), *mem = rnd(M * d, 1.0f), *y0 = alloc_f(T * d);
    float *y1 = alloc_f(T * d);
    int norm, causal, k;
    as_torch(m, &e.attn, &e.ffn);
    as_gpt2(m, &g);
    dv.self_attn = e.attn, dv.ffn = e.ffn;
    /* bf16: the dense and the stored weights rounded alike */
    ebv = e;
    eb.attn.wtype = eb.ffn.wtype = ebv.attn.wtype = ebv.ffn.wtype = ATTN_BF16;
    eb.attn.wq = to_bf16(m->enc.attn.wq, d * d), eb.attn.wk = to_bf16(m->enc.attn.wk, d * d);
    eb.attn.wv = to_bf16(m->enc.attn.wv, d * d), eb.attn.wo = to_bf16(m->enc.attn.wo, d * d);
    eb.ffn.w1 = to_bf16(m->enc.ffn.w1, d * m->s.dff);
    eb.ffn.w2 = to_bf16(m->enc.ffn.w2, d * m->s.dff);
    ebv.attn.wq = to_bf16(e.attn.wq, 3 * d * d), ebv.attn.wk = ebv.attn.wq + d * d / 2;
    ebv.attn.wv = ebv.attn.wq + d * d;
    ebv.attn.wo = to_bf16(e.attn.wo, d * (d + 3));
    ebv.ffn.w1 = to_bf16(e.ffn.w1, m->s.dff * (d + 2));
    ebv.ffn.w2 = to_bf16(e.ffn.w2, d * (m->s.dff + 1));
    for (norm = 0; norm < 2; norm++)
        for (causal = 0; causal < 2; causal++) {
            attn_encoder_weights a = m->enc;
            a.norm = e.norm = eb.norm = ebv.norm = (attn_norm_order)norm;
            EXPECT(attn_encoder(&a, x, d, y0, d, T, causal, ws, ws_size), ATTN_OK);
            EXPECT(attn_encoder(&e, x, d, y1, d, T, causal, ws, ws_size), ATTN_OK);
            note(&worst_view, rel_err(y1, d, y0, T, d));
            check(rel_err(y1, d, y0, T, d) <= TOL, "encoder, torch layout, norm %d causal %d: %g",
                  norm, causal, rel_err(y1, d, y0, T, d));
            a.attn = g;
            EXPECT(attn_encoder(&a, x, d, y1, d, T, causal, ws, ws_size), ATTN_OK);
            check(rel_err(y1, d, y0, T, d) <= TOL, "encoder, GPT-2 layout: %g",
                  rel_err(y1, d, y0, T, d));
            EXPECT(attn_encoder(&eb, x, d, y0, d, T, causal, ws, ws_size), ATTN_OK);
            EXPECT(attn_encoder(&ebv, x, d, y1, d, T, causal, ws, ws_size), ATTN_OK);
            note(&worst_view, rel_err(y1, d, y0, T, d));
            check(rel_err(y1, d, y0, T, d) <= TOL, "encoder, bf16 torch layout: %g",
                  rel_err(y1, d, y0, T, d));
        }
    for (k = 0; k < 2; k++) { /* the decoder, its self-attention and FFN as stored */
        attn_decoder_weights a = m->dec;
        a.norm = dv.norm = (attn_norm_order)k;
        EXPECT(attn_decoder(&a, x, d, y0, d, T, mem, d, M, ws, ws_size), ATTN_OK);
        EXPECT(attn_decoder(&dv, x, d, y1, d, T, mem, d, M, ws, ws_size), ATTN_OK);
        note(&worst_view, rel_err(y1, d, y0, T, d));
        check(rel_err(y1, d, y0, T, d) <= TOL, "decoder, torch layout: %g",
              rel_err(y1, d, y0, T, d));
    }
    { /* the FFN alone, and in place */
        attn_ffn_weights f = e.ffn;
        EXPECT(attn_ffn(&m->enc.ffn, x, d, y0, d, T, ws, ws_size), ATTN_OK);
        memcpy(y1, x, T * d * sizeof(float));
        EXPECT(attn_ffn(&f, y1, d, y1, d, T, ws, ws_size), ATTN_OK);
        check(rel_err(y1, d, y0, T, d) <= TOL, "ffn, torch layout in place: %g",
              rel_err(y1, d, y0, T, d));
    }
}

/* ---- masks ---------------------------------------------------------------------------- */

static void test_masks(const model *m)
{
    const size_t d = m->s.d, T = m->s.T, M = m->s.M;
    float *x = rnd(T * d, 1.0f), *mem = rnd(M * d, 1.0f), *kept = alloc_f(M * d);
    float *y0 = alloc_f(T * d), *y1 = alloc_f(T * d);
    uint8_t mask[64];
    attn_block_options o;
    size_t j, n = 0, r, c;
    int k;
    memset(&o, 0, sizeof o);
    for (j = 0; j < M; j++) { /* keep about two thirds, at least one */
        mask[j] = (uint8_t)(M == 1 || (j * 7 + 3) % 3 != 0);
        if (mask[j]) memcpy(kept + n++ * d, mem + j * d, d * sizeof(float));
    }
    o.key_mask = mask;
    EXPECT(attn_mha(&m->enc.attn, x, d, T, kept, d, n, 0, y0, d, ws, ws_size), ATTN_OK);
    EXPECT(attn_mha_ex(&m->enc.attn, x, d, T, mem, d, M, 0, &o, y1, d, ws, ws_size), ATTN_OK);
    note(&worst_mask, rel_err(y1, d, y0, T, d));
    check(rel_err(y1, d, y0, T, d) <= TOL, "mha key mask vs keys removed: %g",
          rel_err(y1, d, y0, T, d));
    o.key_mask = NULL, o.mem_mask = mask;
    for (k = 0; k < 2; k++) {
        attn_decoder_weights a = m->dec;
        a.norm = (attn_norm_order)k;
        EXPECT(attn_decoder(&a, x, d, y0, d, T, kept, d, n, ws, ws_size), ATTN_OK);
        EXPECT(attn_decoder_ex(&a, x, d, y1, d, T, 1, mem, d, M, &o, ws, ws_size), ATTN_OK);
        note(&worst_mask, rel_err(y1, d, y0, T, d));
        check(rel_err(y1, d, y0, T, d) <= TOL, "decoder memory mask vs rows removed: %g",
              rel_err(y1, d, y0, T, d));
    }
    /* every key masked: attention gives zeros, so y = bo exactly */
    memset(mask, 0, sizeof mask);
    o.key_mask = mask, o.mem_mask = NULL;
    EXPECT(attn_mha_ex(&m->enc.attn, x, d, T, mem, d, M, 0, &o, y1, d, ws, ws_size), ATTN_OK);
    for (r = 0, n = 0; r < T; r++)
        for (c = 0; c < d; c++) n += y1[r * d + c] != m->enc.attn.bo[c];
    check(n == 0, "mha with every key masked: %zu outputs differ from the bias", n);
}

/* ---- caches --------------------------------------------------------------------------- */

/* the encoder (pre or post LN, causal) decoded through a cache of type t in chunks of 1..2
 * after a prefill of 3, against the whole sequence; with `window`, through a ring */
static void test_encoder_cache(const model *m, int norm, attn_dtype t, size_t window)
{
    const size_t d = m->s.d, N = 12, dh = d / m->s.heads, cap = window ? window + 2 : N;
    float *x = rnd(N * d, 1.0f), *yf = alloc_f(N * d), *y = alloc_f(N * d);
    float *kc = alloc_f(cap * d), *vc = alloc_f(cap * d);
    attn_encoder_weights e = m->enc;
    attn_block_options o, ow;
    attn_kv_cache c;
    size_t i = 0, step = 0;
    double e1, tol = t == ATTN_F32 ? TOL : t == ATTN_F16 ? TOL16 : TOLBF;
    memset(&o, 0, sizeof o);
    ow = o, ow.window = window;
    e.norm = (attn_norm_order)norm;
    EXPECT(attn_encoder_ex(&e, x, d, yf, d, N, 1, &ow, ws, ws_size), ATTN_OK);
    if (window)
        EXPECT(attn_kv_cache_init_ring(&c, t, kc, vc, 1, m->s.heads, cap, dh, dh), ATTN_OK);
    else
        EXPECT(attn_kv_cache_init_type(&c, t, kc, vc, 1, m->s.heads, cap, dh, dh), ATTN_OK);
    o.cache = &c, o.window = window;
    while (i < N) {
        size_t n = i == 0 ? 3 : 1 + step++ % 2;
        if (n > N - i) n = N - i;
        EXPECT(attn_encoder_ex(&e, x + i * d, d, y + i * d, d, n, 1, &o, ws, ws_size), ATTN_OK);
        i += n;
    }
    e1 = rel_err(y, d, yf, N, d);
    note(t == ATTN_F32 ? &worst_cache : t == ATTN_F16 ? &worst16 : &worst_bf, e1);
    check(e1 <= tol && c.pos == N, "encoder decoded through a %s cache (type %d, window %zu): %g",
          window ? "ring" : "plain", (int)t, window, e1);
}

static void test_decoder_cache(const model *m, int norm)
{
    const size_t d = m->s.d, N = 10, M = m->s.M, dh = d / m->s.heads;
    float *x = rnd(N * d, 1.0f), *mem = rnd(M * d, 1.0f), *yf = alloc_f(N * d);
    float *y = alloc_f(N * d), *kc = alloc_f(N * d), *vc = alloc_f(N * d);
    float *mk = alloc_f(M * d), *mv = alloc_f(M * d);
    attn_decoder_weights w = m->dec;
    attn_block_options o;
    attn_kv_cache c, mc;
    size_t i;
    double e1, e0;
    w.norm = (attn_norm_order)norm;
    memset(&o, 0, sizeof o);
    EXPECT(attn_decoder(&w, x, d, yf, d, N, mem, d, M, ws, ws_size), ATTN_OK);
    EXPECT(attn_kv_cache_init(&c, kc, vc, 1, m->s.heads, N, dh, dh), ATTN_OK);
    EXPECT(attn_kv_cache_init(&mc, mk, mv, 1, m->s.heads, M, dh, dh), ATTN_OK);
    o.cache = &c, o.mem_cache = &mc;
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 2, 1, mem, d, M, &o, ws, ws_size), ATTN_OK);
    for (i = 2; i < N; i++) /* the memory's K and V reused */
        EXPECT(attn_decoder_ex(&w, x + i * d, d, y + i * d, d, 1, 1, NULL, 0, 0, &o, ws,
                               attn_decoder_workspace_size(&w, 1, 0)),
               ATTN_OK);
    e1 = rel_err(y, d, yf, N, d);
    note(&worst_cache, e1);
    check(e1 <= TOL && mc.len == M && c.len == N, "decoder decoded through caches: %g", e1);
    /* non-causal: the last row sees every key either way; the first does not */
    EXPECT(attn_decoder_ex(&w, x, d, y, d, N, 0, mem, d, M, NULL, ws, ws_size), ATTN_OK);
    e1 = rel_err(y + (N - 1) * d, d, yf + (N - 1) * d, 1, d);
    e0 = rel_err(y, d, yf, 1, d);
    check(e1 <= TOL && e0 > 1e-3, "non-causal decoder: last row %g, first %g", e1, e0);
}

/* ---- errors --------------------------------------------------------------------------- */

static void test_errors(const model *m)
{
    const size_t d = m->s.d, T = m->s.T, M = m->s.M, dh = d / m->s.heads;
    float *x = rnd(T * d, 1.0f), *mem = rnd(M * d, 1.0f), *y = alloc_f(T * d);
    const size_t cap = T + M + 1; /* the decoder's self cache, then its memory cache */
    float *kc = alloc_f((cap + M) * d), *vc = alloc_f((cap + M) * d), *y0 = alloc_f(T * d);
    attn_encoder_weights e = m->enc;
    attn_decoder_weights w = m->dec;
    attn_block_options o;
    attn_kv_cache c, c2;
    uint8_t mask[64];
    size_t need = attn_encoder_workspace_size(&e, T), i, changed = 0;
    memset(&o, 0, sizeof o);
    memset(mask, 1, sizeof mask);
    for (i = 0; i < T * d; i++) y[i] = y0[i] = -7.0f;
    e.attn.trans = (attn_trans)2;
    EXPECT(attn_encoder(&e, x, d, y, d, T, 0, ws, ws_size), ATTN_ERR_ARG);
    e = m->enc, e.attn.ldk = d - 1;
    EXPECT(attn_encoder(&e, x, d, y, d, T, 0, ws, ws_size), ATTN_ERR_LD);
    e = m->enc, e.ffn.trans = ATTN_TRANS, e.ffn.ld1 = d - 1;
    EXPECT(attn_encoder(&e, x, d, y, d, T, 0, ws, ws_size), ATTN_ERR_LD);
    check(attn_encoder_workspace_size(&e, T) == 0, "ws query of bad views");
    e = m->enc;
    EXPECT(attn_kv_cache_init(&c, kc, vc, 1, m->s.heads, T + 1, dh, dh), ATTN_OK);
    o.cache = &c;
    EXPECT(attn_encoder_ex(&e, x, d, y, d, T, 2, &o, ws, need), ATTN_ERR_ARG);
    EXPECT(attn_kv_cache_init(&c2, kc, vc, 1, m->s.heads, T + 1, dh / 2 ? dh / 2 : 2, dh), 0);
    o.cache = &c2;
    EXPECT(attn_encoder_ex(&e, x, d, y, d, T, 1, &o, ws, need), ATTN_ERR_SIZE);
    EXPECT(attn_kv_cache_init(&c2, kc, vc, 2, m->s.heads, 2, dh, dh), ATTN_OK);
    EXPECT(attn_encoder_ex(&e, x, d, y, d, T, 1, &o, ws, need), ATTN_ERR_SIZE);
    c2 = c, c2.len = c2.capacity + 1;
    EXPECT(attn_encoder_ex(&e, x, d, y, d, T, 1, &o, ws, need), ATTN_ERR_ARG);
    o.cache = &c, c.len = 2;
    EXPECT(attn_encoder_ex(&e, x, d, y, d, T, 1, &o, ws, need), ATTN_ERR_CAPACITY);
    check(c.len == 2, "a failed call appended to the cache");
    c.len = 0;
    EXPECT(attn_encoder_ex(&e, x, d, y, d, T, 1, &o, kc, need), ATTN_ERR_ALIAS);
    EXPECT(attn_encoder_ex(&e, vc, d, y, d, T, 1, &o, ws, need), ATTN_ERR_ALIAS);
    EXPECT(attn_encoder_ex(&e, x, d, kc + d, d, T, 1, &o, ws, need), ATTN_ERR_ALIAS);
    o.cache = NULL, o.key_mask = (const uint8_t *)ws;
    EXPECT(attn_encoder_ex(&e, x, d, y, d, T, 1, &o, ws, need), ATTN_ERR_ALIAS);
    o.key_mask = (const uint8_t *)y;
    EXPECT(attn_mha_ex(&e.attn, x, d, T, x, d, T, 0, &o, y, d, ws, ws_size), ATTN_ERR_ALIAS);
    o.key_mask = mask;
    EXPECT(attn_mha_ex(&e.attn, x, d, T, NULL, d, 0, 0, &o, y, d, ws, ws_size), ATTN_ERR_NULL);
    EXPECT(attn_mha_ex(&e.attn, x, d, T, x, d, 0, 0, &o, y, d, ws, ws_size), ATTN_ERR_SIZE);
    /* the decoder's caches */
    EXPECT(attn_kv_cache_init(&c, kc, vc, 1, m->s.heads, cap, dh, dh), ATTN_OK);
    o.key_mask = NULL, o.cache = &c, o.mem_cache = &c;
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 1, 1, mem, d, M, &o, ws, ws_size), ATTN_ERR_ALIAS);
    o.mem_cache = NULL;
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 1, 1, NULL, d, 0, &o, ws, ws_size), ATTN_ERR_NULL);
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 1, 1, mem, d, 0, &o, ws, ws_size), ATTN_ERR_SIZE);
    EXPECT(attn_kv_cache_init(&c2, kc + cap * d, vc + cap * d, 1, m->s.heads, M, dh, dh),
           ATTN_OK);
    o.mem_cache = &c2;
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 1, 1, NULL, d, 0, &o, ws, ws_size), ATTN_ERR_SIZE);
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 1, 2, mem, d, M, &o, ws, ws_size), ATTN_ERR_ARG);
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 1, 1, kc + cap * d, d, M, &o, ws, ws_size),
           ATTN_ERR_ALIAS);
    for (i = 0; i < T * d; i++) changed += y[i] != y0[i];
    check(changed == 0 && c.len == 0 && c2.len == 0, "failed calls wrote %zu outputs", changed);
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 1, 1, mem, d, M, &o, ws, ws_size), ATTN_OK);
    check(c.len == 1 && c2.len == M, "a decoder call fills both caches");
    o.window = 3; /* a plain cache with a window is fine; a ring needs the room */
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 1, 1, NULL, d, 0, &o, ws, ws_size), ATTN_OK);
    EXPECT(attn_kv_cache_init_ring(&c, ATTN_F32, kc, vc, 1, m->s.heads, 3, dh, dh), ATTN_OK);
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 2, 1, NULL, d, 0, &o, ws, ws_size),
           ATTN_ERR_CAPACITY);
    EXPECT(attn_decoder_ex(&w, x, d, y, d, 1, 1, NULL, d, 0, &o, ws, ws_size), ATTN_OK);
}

int main(void)
{
    static const shape shapes[] = {{24, 3, 40, 5, 7}, {20, 4, 36, 1, 3}, {32, 2, 48, 13, 9}};
    size_t s;
    check_begin("blocks_ex");
    ws = (unsigned char *)malloc(ws_size);
    if (!ws) return 2;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        model m;
        int norm;
        check_seed(1000 + s);
        mk_model(&m, shapes[s]);
        test_views(&m);
        test_masks(&m);
        for (norm = 0; norm < 2; norm++) {
            test_encoder_cache(&m, norm, ATTN_F32, 0);
            test_encoder_cache(&m, norm, ATTN_F16, 0);
            test_encoder_cache(&m, norm, ATTN_BF16, 0);
            test_encoder_cache(&m, norm, ATTN_F32, 4);
            test_encoder_cache(&m, norm, ATTN_F16, 3);
            test_decoder_cache(&m, norm);
        }
        test_errors(&m);
    }
    printf("worst: views %.3g, masks %.3g, f32 caches %.3g, f16 %.3g, bf16 %.3g (of max|y|)\n",
           worst_view, worst_mask, worst_cache, worst16, worst_bf);
    while (n_owned) free(owned[--n_owned]);
    free(ws);
    return check_end("blocks_ex");
}
