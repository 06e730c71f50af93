/* op_blocks.c - the pieces of a decoder-only language model's layer and the layer itself:
 * RoPE on query rows (attn_rope, both pairings, head_dim 128); the gated MLP (SwiGLU: gate,
 * up, down with attn_linear_typed and attn_glu, as attn_decoder_only composes it) against
 * an ungated one of the same parameter count, at 1 token (decode: weight bytes streamed)
 * and at 128 tokens (GFLOP/s); and a small Llama-like block (attn_decoder_only: d_model
 * 1024, 16 heads, 4 kv heads, head_dim 64, d_ff 2816, RMSNorm, SwiGLU, RoPE halves) in
 * prefill (GFLOP/s) and decoding one token against a 2048-position KV cache (tokens/s).
 * Weights in PyTorch's [out, in] layout (ATTN_TRANS), f32 and f16 (the block also q8_0,
 * with and without int8_products); every buffer and workspace caller-allocated. No peers. */
#include "bench.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const blk_type_name[3] = {"f32", "f16", "bf16"};

/* ---------------------------------------------------------------------------------- */
/* Naive pieces, scalar. Weights w are [out, in] floats (16-bit ones widened). */

/* y = x w^T for one row: d_in -> d_out */
static NAIVE_FN void nv_linear(const float *x, const float *w, float *y, size_t d_in,
                               size_t d_out)
{
    size_t j, p;
    for (j = 0; j < d_out; j++) {
        float s = 0.0f;
        NOVEC for (p = 0; p < d_in; p++) s += x[p] * w[j * d_in + p];
        y[j] = s;
    }
}

static NAIVE_FN void nv_rmsnorm(const float *x, const float *g, float *y, size_t n, float eps)
{
    size_t j;
    float ss = 0.0f, rms;
    NOVEC for (j = 0; j < n; j++) ss += x[j] * x[j];
    rms = 1.0f / sqrtf(ss / (float)n + eps);
    NOVEC for (j = 0; j < n; j++) y[j] = x[j] * rms * g[j];
}

/* RoPE of `tokens` rows of `heads` heads (rows dense), positions pos0 + t: the angles of a
 * row in double (libm pow, cos, sin once per pair, shared by its heads, as the library
 * does), then the rotation one element pair at a time. */
static NAIVE_FN void nv_rope(const attn_rope_params *p, float *x, size_t tokens, size_t heads,
                             size_t pos0)
{
    float cs[256], sn[256];
    const size_t hd = p->head_dim, half = hd / 2;
    const double theta = p->theta > 0.0f ? (double)p->theta : 10000.0;
    size_t t, h, k;
    for (t = 0; t < tokens; t++) {
        float *row = x + t * heads * hd;
        for (k = 0; k < half; k++) {
            const double a = (double)(pos0 + t) * pow(theta, -2.0 * (double)k / (double)hd);
            cs[k] = (float)cos(a);
            sn[k] = (float)sin(a);
        }
        for (h = 0; h < heads; h++) {
            float *v = row + h * hd;
            if (p->pairing == ATTN_ROPE_ADJACENT) {
                NOVEC for (k = 0; k < half; k++) {
                    const float a = v[2 * k], b = v[2 * k + 1];
                    v[2 * k] = a * cs[k] - b * sn[k];
                    v[2 * k + 1] = b * cs[k] + a * sn[k];
                }
            } else {
                NOVEC for (k = 0; k < half; k++) {
                    const float a = v[k], b = v[k + half];
                    v[k] = a * cs[k] - b * sn[k];
                    v[k + half] = b * cs[k] + a * sn[k];
                }
            }
        }
    }
}

/* One token through the MLP: gated, y = (silu(x Wg^T) * (x Wu^T)) Wd^T; ungated,
 * y = silu(x Wu^T) Wd^T. gate and up: d_ff floats of scratch. */
static NAIVE_FN void nv_mlp(const float *x, const float *wg, const float *wu, const float *wd,
                            size_t d, size_t dff, float *gate, float *up, float *y)
{
    size_t j;
    nv_linear(x, wu, up, d, dff);
    if (wg) {
        nv_linear(x, wg, gate, d, dff);
        NOVEC for (j = 0; j < dff; j++) up[j] *= gate[j] / (1.0f + expf(-gate[j]));
    } else {
        NOVEC for (j = 0; j < dff; j++) up[j] = up[j] / (1.0f + expf(-up[j]));
    }
    nv_linear(up, wd, y, dff, d);
}

/* Rounds n floats to type t and widens them back (nothing for f32); tmp: n 16-bit slots */
static void round_to(attn_dtype t, float *x, size_t n, uint16_t *tmp)
{
    if (t == ATTN_F32)
        return;
    check(attn_convert(t, tmp, ATTN_F32, x, n), "attn_convert");
    check(attn_convert(ATTN_F32, x, t, tmp, n), "attn_convert");
}

/* Weights: `count` random floats in [-scale, scale) as type t; *wf gets the values (rounded
 * to t and widened), the return value the storage the library reads (wf itself for f32). */
static const void *make_weights(attn_dtype t, float *wf, uint16_t *wh, size_t count,
                                float scale)
{
    fill_uniform(wf, count, -scale, scale);
    if (t == ATTN_F32)
        return wf;
    check(attn_convert(t, wh, ATTN_F32, wf, count), "attn_convert");
    check(attn_convert(ATTN_F32, wf, t, wh, count), "attn_convert");
    return wh;
}

/* The attn row's calls/s of variant v16 over variant v32 (impls[1] is attn) */
static void blk_ratio_row(const struct op *op, const char *shape, const char *impl,
                          const char *note, int v_num, int v_den)
{
    const double tn = g_call_ns[1][v_num], td = g_call_ns[1][v_den];
    if (tn > 0.0 && td > 0.0)
        print_derived(op, shape, impl, "ratio", td / tn, note);
}

/* ---------------------------------------------------------------------------------- */
/* RoPE. attn_rope is in place, so the timed calls rotate x over and over (a rotation keeps
 * the values' size); the output compared between implementations is a separate slice
 * (vt rows at positions vpos..) rotated once from the same input by `prepare`. */

struct ropecase {
    attn_rope_params p;
    size_t tokens, heads;
    float *x;        /* tokens x heads*head_dim, rotated in place by the timed calls */
    const float *x0; /* the slice's input */
    float *v;        /* the slice's output */
    size_t vt, vpos;
};

static NAIVE_FN void naive_rope_run(void *ctx, void *data)
{
    const struct ropecase *c = (const struct ropecase *)data;
    (void)ctx;
    nv_rope(&c->p, c->x, c->tokens, c->heads, 0);
}

static void naive_rope_prepare(void *ctx, void *data)
{
    const struct ropecase *c = (const struct ropecase *)data;
    (void)ctx;
    memcpy(c->v, c->x0, c->vt * c->heads * c->p.head_dim * sizeof(float));
    nv_rope(&c->p, c->v, c->vt, c->heads, c->vpos);
}

static void attn_rope_run(void *ctx, void *data)
{
    const struct ropecase *c = (const struct ropecase *)data;
    const size_t w = c->heads * c->p.head_dim;
    (void)ctx;
    check(attn_rope(&c->p, c->x, w, c->tokens, c->heads, 0, NULL), "attn_rope");
}

static void attn_rope_prepare(void *ctx, void *data)
{
    const struct ropecase *c = (const struct ropecase *)data;
    const size_t w = c->heads * c->p.head_dim;
    (void)ctx;
    memcpy(c->v, c->x0, c->vt * w * sizeof(float));
    check(attn_rope(&c->p, c->v, w, c->vt, c->heads, c->vpos, NULL), "attn_rope");
}

/* 32 heads x 128: 512 tokens (8 MiB, in cache, against the 4 MiB memcpy: 8 bytes per
 * element), then 256 MiB (16384 tokens, out of cache, against a memcpy of 256 MiB timed
 * just before), each pairing. */
static void bench_rope(struct op *op)
{
    const size_t heads = 32, hd = 128, w = heads * hd, vt_max = 512;
    const size_t far_total = ((size_t)256 << 20) / sizeof(float);
    float *x0 = falloc(vt_max * w), *v = falloc(vt_max * w), *xin = falloc(vt_max * w);
    int far, pairing;
    g_predict.variant = 0;
    fill_uniform(x0, vt_max * w, -1.0f, 1.0f);
    memset(v, 0, vt_max * w * sizeof(float));
    for (far = 0; far <= 1; far++)
        for (pairing = ATTN_ROPE_ADJACENT; pairing <= ATTN_ROPE_HALVES; pairing++) {
            struct ropecase c;
            struct limit lim;
            char shape[64];
            memset(&c, 0, sizeof c);
            if (g_opt.quick && far && pairing == ATTN_ROPE_HALVES)
                continue;
            c.p.head_dim = hd;
            c.p.pairing = (attn_rope_pairing)pairing;
            c.heads = heads;
            c.x0 = x0;
            c.v = v;
            if (!far) {
                c.tokens = vt_max;
                c.x = xin;
                memcpy(xin, x0, vt_max * w * sizeof(float));
                c.vt = vt_max, c.vpos = 0;
                lim.name = "copy_4MiB";
                lim.value = g_lim.copy_cache;
            } else {
                char text[160];
                float *src = scratch(BUF_ROW_X, far_total);
                c.tokens = far_total / w;
                c.x = scratch(BUF_ROW_Y, far_total);
                c.vt = 64, c.vpos = c.tokens - 64; /* the slice: the last positions */
                lim.name = "copy_256MiB";
                lim.value = measure_copy(src, c.x, far_total);
                fill_uniform(c.x, far_total, -1.0f, 1.0f);
                sprintf(text, "%s: out of cache, the share is of a memcpy of its 256 MiB timed "
                        "just before it: %s %.1f GB/s", op->name,
                        pairing == ATTN_ROPE_ADJACENT ? "adj" : "half", lim.value);
                add_run_note(text);
            }
            lim.factor = 8.0; /* read and write x */
            sprintf(shape, "%lux%lux%lu:%s", (unsigned long)c.tokens, (unsigned long)heads,
                    (unsigned long)hd, pairing == ATTN_ROPE_ADJACENT ? "adj" : "half");
            /* --quick: no naive loop out of cache */
            bench_shape(op, shape, (double)(c.tokens * w), &c, v, c.vt * w,
                        !(g_opt.quick && far), &lim);
        }
    free(x0);
    free(v);
    free(xin);
}

/* Decode reads each layer's weights once per token, from memory: a model's layers together
 * are far larger than the L3. The decode shapes hold copies of one layer's weights side by
 * side, at least 128 MiB of them, and each call takes the next copy. */
static size_t n_layers(size_t bytes)
{
    const size_t want = (size_t)128 << 20;
    return bytes >= want ? 1 : (want + bytes - 1) / bytes;
}

/* ---------------------------------------------------------------------------------- */
/* The MLP, gated (SwiGLU, d_ff 2816) and ungated (SiLU, d_ff 4224 = 1.5 x 2816: the same
 * 3 x 1024 x 2816 weights), weights [out, in]. */

struct mlpcase {
    size_t tokens, d, dff;
    attn_dtype t;
    const void *wg, *wu, *wd;  /* as stored, layer 0's; wg NULL: ungated */
    size_t layers, stride, cur; /* the weights of `layers` layers, stride bytes apart; each
                                   call takes the next (cur) */
    const float *fg, *fu, *fd; /* widened */
    const float *x;
    float *y, *gate, *up;
    void *ws;
    size_t ws_size;
};

static NAIVE_FN void naive_mlp_run(void *ctx, void *data)
{
    const struct mlpcase *c = (const struct mlpcase *)data;
    size_t t;
    (void)ctx;
    for (t = 0; t < c->tokens; t++)
        nv_mlp(c->x + t * c->d, c->wg ? c->fg : NULL, c->fu, c->fd, c->d, c->dff, c->gate,
               c->up, c->y + t * c->d);
}

/* What attn_decoder_only does for its MLP: up, gate, attn_glu in place into up, down */
static void attn_mlp_run(void *ctx, void *data)
{
    struct mlpcase *c = (struct mlpcase *)data;
    const size_t d = c->d, dff = c->dff, n = c->tokens, o = c->cur * c->stride;
    const void *wu = (const char *)c->wu + o, *wd = (const char *)c->wd + o;
    const void *wg = c->wg ? (const char *)c->wg + o : NULL;
    (void)ctx;
    c->cur = c->cur + 1 < c->layers ? c->cur + 1 : 0;
    check(attn_linear_typed(c->x, d, n, d, ATTN_TRANS, c->t, wu, d, NULL, dff,
                            wg ? ATTN_ACT_NONE : ATTN_ACT_SILU, c->up, dff, c->ws,
                            c->ws_size),
          "attn_linear_typed");
    if (wg) {
        check(attn_linear_typed(c->x, d, n, d, ATTN_TRANS, c->t, wg, d, NULL, dff,
                                ATTN_ACT_NONE, c->gate, dff, c->ws, c->ws_size),
              "attn_linear_typed");
        check(attn_glu(ATTN_ACT_SILU, c->gate, dff, c->up, dff, c->up, dff, n, dff),
              "attn_glu");
    }
    check(attn_linear_typed(c->up, dff, n, dff, ATTN_TRANS, c->t, wd, dff, NULL, d,
                            ATTN_ACT_NONE, c->y, d, c->ws, c->ws_size),
          "attn_linear_typed");
}

/* decode = 1: one token, GB/s of weights (the naive loop too); else 128 tokens, GFLOP/s */
static void bench_mlp_tokens(struct op *op, int decode)
{
    const size_t d = 1024, dff_g = 2816, dff_u = 3 * dff_g / 2, nw = 3 * d * dff_g;
    const size_t tokens = decode ? 1 : g_opt.quick ? 32 : 128;
    float *wf = falloc(nw), *x = falloc(tokens * d), *y = falloc(tokens * d);
    float *gate = falloc(tokens * dff_u), *up = falloc(tokens * dff_u);
    uint16_t *wh = (uint16_t *)xalloc(nw * sizeof(uint16_t));
    int ty, gated;
    fill_uniform(x, tokens * d, -1.0f, 1.0f);
    for (ty = ATTN_F32; ty <= ATTN_F16; ty++) {
        const size_t es = attn_dtype_size((attn_dtype)ty), layers = decode ? n_layers(nw * es) : 1;
        char *ws;
        size_t l;
        if (g_opt.quick && ty != ATTN_F32)
            continue; /* --quick: f32 only */
        ws = (char *)xalloc(layers * nw * es);
        memcpy(ws, make_weights((attn_dtype)ty, wf, wh, nw, 0.05f), nw * es);
        for (l = 1; l < layers; l++)
            memcpy(ws + l * nw * es, ws, nw * es);
        for (gated = 0; gated <= 1; gated++) {
            struct mlpcase c;
            struct limit lim;
            char shape[64];
            size_t s1, s2;
            memset(&c, 0, sizeof c);
            c.tokens = tokens, c.d = d, c.dff = gated ? dff_g : dff_u;
            c.t = (attn_dtype)ty;
            c.layers = layers, c.stride = nw * es, c.cur = 0;
            /* the same 3 d dff_g weights: gate, up, down or up, down */
            c.fu = wf, c.wu = ws;
            if (gated) {
                c.fg = wf + d * c.dff, c.wg = ws + d * c.dff * es;
                c.fd = wf + 2 * d * c.dff, c.wd = ws + 2 * d * c.dff * es;
            } else {
                c.fd = wf + d * c.dff, c.wd = ws + d * c.dff * es;
            }
            c.x = x, c.y = y, c.gate = gate, c.up = up;
            s1 = attn_linear_workspace_size(ATTN_TRANS, tokens, d, c.dff);
            s2 = attn_linear_workspace_size(ATTN_TRANS, tokens, c.dff, d);
            c.ws_size = s1 > s2 ? s1 : s2;
            c.ws = xalloc(c.ws_size);
            memset(y, 0, tokens * d * sizeof(float));
            lim.factor = 1.0;
            if (decode) {
                lim.name = "read_256MiB";
                lim.value = g_lim.read_mem;
            } else {
                bench_fma_limit(&lim);
            }
            g_predict.variant = 2 * ty + gated;
            sprintf(shape, "%lu:%s%lu:%s", (unsigned long)tokens, gated ? "glu" : "ffn",
                    (unsigned long)c.dff, blk_type_name[ty]);
            bench_shape(op, shape,
                        decode ? (double)(nw * es) : 2.0 * (double)nw * (double)tokens, &c, y,
                        tokens * d, decode, &lim);
            if (gated)
                blk_ratio_row(op, shape, "attn-glu/ffn",
                              "calls/s gated / ungated of the same parameter count", 2 * ty + 1,
                              2 * ty);
            if (ty != ATTN_F32)
                blk_ratio_row(op, shape, "attn-f16/f32", "calls/s with f16 weights / f32",
                              2 * ty + gated, gated);
            free(c.ws);
        }
        if (decode) {
            char text[160];
            sprintf(text, "%s: %s weights of %lu layers side by side (%.0f MiB), each call the "
                    "next, as a model's decode streams them", op->name, blk_type_name[ty],
                    (unsigned long)layers, (double)(layers * nw * es) / 1048576.0);
            add_run_note(text);
        }
        free(ws);
    }
    free(wf);
    free(x);
    free(y);
    free(gate);
    free(up);
    free(wh);
}

static void bench_mlp_decode(struct op *op) { bench_mlp_tokens(op, 1); }
static void bench_mlp_prefill(struct op *op) { bench_mlp_tokens(op, 0); }

/* ---------------------------------------------------------------------------------- */
/* The decoder-only block. */

enum { BLK_D = 1024, BLK_H = 16, BLK_KVH = 4, BLK_HD = 64, BLK_FF = 2816, BLK_CTX = 2048 };
enum { BLK_MAXL = 16 }; /* decode: layers side by side (n_layers) */

struct blockcase {
    attn_decoder_only_weights w[BLK_MAXL]; /* each layer's: the same values, own copies */
    attn_kv_cache cache[BLK_MAXL];
    size_t layers, cur;  /* each call takes the next layer (cur) */
    size_t len0, tokens; /* cache->len before each call; new tokens */
    const float *x;
    float *y;
    void *ws;
    size_t ws_size;
    /* the naive loop's: widened weights [out, in], its own float cache [kv_heads, capacity,
     * head_dim] (the stored values widened), scratch */
    const float *wq, *wk, *wv, *wo, *wg, *wu, *wd;
    float *k32, *v32, *tmp;
    uint16_t *tmp16;
};

/* One token at a time (the prefill would be the same loop over its tokens) */
static NAIVE_FN void naive_block_run(void *ctx, void *data)
{
    const struct blockcase *c = (const struct blockcase *)data;
    const attn_decoder_only_weights *w = &c->w[0];
    const size_t d = BLK_D, dq = BLK_H * BLK_HD, dkv = BLK_KVH * BLK_HD;
    const size_t cap = c->cache[0].capacity;
    const float scale = 1.0f / sqrtf((float)BLK_HD);
    float *h = c->tmp, *q = h + d, *k = q + dq, *v = k + dkv, *o = v + dkv, *r = o + dq;
    float *a = r + d, *gate = a + d, *up = gate + BLK_FF, *s = up + BLK_FF;
    size_t t, hh, j, e;
    (void)ctx;
    for (t = 0; t < c->tokens; t++) {
        const size_t pos = c->len0 + t;
        const float *x = c->x + t * d;
        float *y = c->y + t * d;
        nv_rmsnorm(x, w->attn_norm, h, d, w->eps);
        nv_linear(h, c->wq, q, d, dq);
        nv_linear(h, c->wk, k, d, dkv);
        nv_linear(h, c->wv, v, d, dkv);
        nv_rope(&w->rope, q, 1, BLK_H, pos);
        nv_rope(&w->rope, k, 1, BLK_KVH, pos);
        round_to(c->cache[0].type, k, dkv, c->tmp16);
        round_to(c->cache[0].type, v, dkv, c->tmp16);
        for (hh = 0; hh < BLK_KVH; hh++) {
            memcpy(c->k32 + (hh * cap + pos) * BLK_HD, k + hh * BLK_HD, BLK_HD * sizeof(float));
            memcpy(c->v32 + (hh * cap + pos) * BLK_HD, v + hh * BLK_HD, BLK_HD * sizeof(float));
        }
        for (hh = 0; hh < BLK_H; hh++) { /* causal: keys 0 .. pos */
            const size_t g = hh / (BLK_H / BLK_KVH);
            const float *qh = q + hh * BLK_HD, *kh = c->k32 + g * cap * BLK_HD;
            const float *vh = c->v32 + g * cap * BLK_HD;
            float *oh = o + hh * BLK_HD, mx = -INFINITY, sum = 0.0f, inv;
            for (j = 0; j <= pos; j++) {
                float acc = 0.0f;
                NOVEC for (e = 0; e < BLK_HD; e++) acc += qh[e] * kh[j * BLK_HD + e];
                s[j] = acc * scale;
                mx = s[j] > mx ? s[j] : mx;
            }
            NOVEC for (j = 0; j <= pos; j++) {
                s[j] = expf(s[j] - mx);
                sum += s[j];
            }
            inv = 1.0f / sum;
            NOVEC for (e = 0; e < BLK_HD; e++) oh[e] = 0.0f;
            for (j = 0; j <= pos; j++)
                NOVEC for (e = 0; e < BLK_HD; e++) oh[e] += s[j] * inv * vh[j * BLK_HD + e];
        }
        nv_linear(o, c->wo, a, dq, d);
        NOVEC for (e = 0; e < d; e++) r[e] = x[e] + a[e];
        nv_rmsnorm(r, w->ffn_norm, h, d, w->eps);
        nv_mlp(h, c->wg, c->wu, c->wd, d, BLK_FF, gate, up, a);
        NOVEC for (e = 0; e < d; e++) y[e] = r[e] + a[e];
    }
}

static void attn_block_run(void *ctx, void *data)
{
    struct blockcase *c = (struct blockcase *)data;
    const size_t l = c->cur;
    (void)ctx;
    c->cur = l + 1 < c->layers ? l + 1 : 0;
    c->cache[l].len = c->len0; /* the same call every time: the cache does not grow */
    check(attn_decoder_only(&c->w[l], c->x, BLK_D, c->y, BLK_D, c->tokens, &c->cache[l], c->ws,
                            c->ws_size),
          "attn_decoder_only");
}

/* weight matrix parameters of the block (the norms' 2 d_model gammas not counted) */
#define BLK_PARAMS                                                                           \
    ((size_t)2 * BLK_D * BLK_H * BLK_HD + (size_t)2 * BLK_D * BLK_KVH * BLK_HD +             \
     (size_t)3 * BLK_D * BLK_FF)

/* decode = 1: one token after BLK_CTX cached positions (tokens/s, the naive loop too), the
 * layers side by side (n_layers); else prefill of 512 tokens into an empty cache (GFLOP/s) */
static void bench_block(struct op *op, int decode)
{
    const size_t d = BLK_D, dq = BLK_H * BLK_HD, dkv = BLK_KVH * BLK_HD, np = BLK_PARAMS;
    const size_t tokens = decode ? 1 : g_opt.quick ? 64 : 512;
    const size_t len0 = decode ? BLK_CTX : 0, cap = len0 + tokens, nkv = BLK_KVH * cap * BLK_HD;
    const size_t off[7] = {0, dq * d, dq * d + dkv * d, dq * d + 2 * dkv * d,
                           2 * dq * d + 2 * dkv * d, 2 * dq * d + 2 * dkv * d + BLK_FF * d,
                           2 * dq * d + 2 * dkv * d + 2 * BLK_FF * d};
    float *wf = falloc(np), *x = falloc(tokens * d), *y = falloc(tokens * d);
    float *gammas = falloc(2 * d), *kv0 = falloc(2 * nkv);
    float *k32 = falloc(nkv), *v32 = falloc(nkv);
    float *tmp = falloc(4 * d + 2 * dq + 2 * dkv + 2 * BLK_FF + cap);
    uint16_t *wh = (uint16_t *)xalloc(np * sizeof(uint16_t));
    uint16_t *tmp16 = (uint16_t *)xalloc(dkv * sizeof(uint16_t));
    /* variants: weights and cache in f32, f16, q8_0; q8_0 with int8_products */
    static const attn_dtype vt[4] = {ATTN_F32, ATTN_F16, ATTN_Q8_0, ATTN_Q8_0};
    static const char *const vname[4] = {"f32", "f16", "q8_0", "q8_0-int8"};
    int ty;
    fill_uniform(x, tokens * d, -1.0f, 1.0f);
    fill_uniform(gammas, 2 * d, 0.5f, 1.5f);
    fill_uniform(kv0, 2 * nkv, -1.0f, 1.0f);
    for (ty = 0; ty < 4; ty++) {
        const attn_dtype t = vt[ty];
        const size_t lw = attn_dtype_bytes(t, np), lkv = attn_dtype_bytes(t, nkv);
        const size_t layers = decode ? n_layers(lw + 2 * lkv) : 1;
        struct blockcase c;
        struct limit lim;
        char shape[64], *wl, *kc, *vc;
        size_t i, l;
        double work, bytes = (double)lw;
        if (g_opt.quick && ty != 0)
            continue;
        if (layers > BLK_MAXL)
            die("bench_block", "too many layers");
        /* each layer: its weights (the same values) and its cache, in the weights' type,
         * len0 random positions appended (the same ones) */
        wl = (char *)xalloc(layers * lw);
        kc = (char *)xalloc(layers * lkv);
        vc = (char *)xalloc(layers * lkv);
        memset(kc, 0, layers * lkv);
        memset(vc, 0, layers * lkv);
        memcpy(wl, make_weights(t, wf, wh, np, 0.05f), lw);
        memset(&c, 0, sizeof c);
        c.layers = layers;
        for (l = 0; l < layers; l++) {
            attn_decoder_only_weights *w = &c.w[l];
            attn_matrix *m[7];
            if (l)
                memcpy(wl + l * lw, wl, lw);
            w->d_model = d, w->heads = BLK_H, w->kv_heads = BLK_KVH, w->head_dim = BLK_HD;
            w->d_ff = BLK_FF;
            m[0] = &w->wq, m[1] = &w->wk, m[2] = &w->wv, m[3] = &w->wo, m[4] = &w->w_gate;
            m[5] = &w->w_up, m[6] = &w->w_down;
            for (i = 0; i < 7; i++) { /* [out, in]: ld = d_in */
                m[i]->w = wl + l * lw + attn_dtype_bytes(t, off[i]);
                m[i]->ld = i == 3 ? dq : i == 6 ? BLK_FF : d;
                m[i]->trans = ATTN_TRANS;
                m[i]->type = t;
                m[i]->bias = NULL;
            }
            w->act = ATTN_ACT_SILU;
            w->norm = ATTN_NORM_RMS;
            w->attn_norm = gammas, w->ffn_norm = gammas + d;
            w->eps = 1e-5f;
            w->rope.head_dim = BLK_HD;
            w->rope.pairing = ATTN_ROPE_HALVES;
            w->int8_products = ty == 3;
            check(attn_kv_cache_init_type(&c.cache[l], t, kc + l * lkv, vc + l * lkv, 1,
                                          BLK_KVH, cap, BLK_HD, BLK_HD),
                  "attn_kv_cache_init_type");
            if (len0)
                check(attn_kv_cache_append(&c.cache[l], len0, kv0, kv0 + BLK_KVH * len0 * BLK_HD,
                                           ATTN_LAYOUT_BHLD),
                      "attn_kv_cache_append");
        }
        c.wq = wf + off[0], c.wk = wf + off[1], c.wv = wf + off[2], c.wo = wf + off[3];
        c.wg = wf + off[4], c.wu = wf + off[5], c.wd = wf + off[6];
        if (t == ATTN_F32) { /* the naive loop's cache: layer 0's values as floats */
            memcpy(k32, kc, nkv * sizeof(float));
            memcpy(v32, vc, nkv * sizeof(float));
        } else {
            check(attn_convert(ATTN_F32, k32, t, kc, nkv), "attn_convert");
            check(attn_convert(ATTN_F32, v32, t, vc, nkv), "attn_convert");
        }
        c.len0 = len0, c.tokens = tokens;
        c.x = x, c.y = y;
        c.k32 = k32, c.v32 = v32, c.tmp = tmp, c.tmp16 = tmp16;
        c.ws_size = attn_decoder_only_workspace_size(&c.w[0], tokens);
        if (c.ws_size == 0)
            die("attn_decoder_only_workspace_size", "returned 0 for valid weights");
        c.ws = xalloc(c.ws_size);
        memset(y, 0, tokens * d * sizeof(float));
        if (decode) { /* tokens/s; share: weights and the K and V read (len0 + 1 positions) */
            char text[160];
            bytes += 2.0 * (double)attn_dtype_bytes(t, (len0 + 1) * dkv);
            work = 1e9;
            lim.name = "read_256MiB";
            lim.value = g_lim.read_mem;
            lim.factor = bytes / 1e9;
            sprintf(shape, "kv%lu:%s", (unsigned long)len0, vname[ty]);
            sprintf(text, "%s: %s weights and caches of %lu layers side by side (%.0f MiB), "
                    "each call the next", op->name, vname[ty], (unsigned long)layers,
                    (double)(layers * (lw + 2 * lkv)) / 1048576.0);
            add_run_note(text);
        } else {
            work = 2.0 * (double)np * (double)tokens +
                   2.0 * (double)tokens * (double)tokens * (double)(BLK_H * BLK_HD);
            bench_fma_limit(&lim);
            lim.factor = 1.0;
            sprintf(shape, "L%lu:%s", (unsigned long)tokens, vname[ty]);
        }
        g_predict.variant = ty;
        /* (the naive loop takes float products: against int8_products it would differ by the
         * activations' rounding to q8_0, which the tests bound; none for that variant) */
        bench_shape(op, shape, work, &c, y, tokens * d, decode && ty != 3, &lim);
        if (decode) {
            char note[96];
            sprintf(note, "MB read per token: weights %.1f + K, V %.1f (share's bytes)",
                    (double)lw / 1e6, (bytes - (double)lw) / 1e6);
            print_derived(op, shape, "bytes/token", "MB", bytes / 1e6, note);
        }
        if (ty == 1)
            blk_ratio_row(op, shape, "attn-f16/f32", "calls/s with f16 weights and cache / f32",
                          ty, 0);
        if (ty >= 2)
            blk_ratio_row(op, shape, "attn-q8/f32", "calls/s with q8_0 weights and cache / f32",
                          ty, 0);
        if (ty == 3)
            blk_ratio_row(op, shape, "attn-int8/q8", "calls/s with int8_products / without",
                          ty, 2);
        free(c.ws);
        free(wl);
        free(kc);
        free(vc);
    }
    free(wf);
    free(x);
    free(y);
    free(gammas);
    free(kv0);
    free(k32);
    free(v32);
    free(tmp);
    free(wh);
    free(tmp16);
}

static void bench_block_prefill(struct op *op) { bench_block(op, 0); }
static void bench_block_decode(struct op *op) { bench_block(op, 1); }

/* ---------------------------------------------------------------------------------- */

static const struct impl rope_impls[] = {
    {"naive", naive_rope_run, NULL, NULL, naive_rope_prepare, NULL, NULL, 0},
    {"attn", attn_rope_run, NULL, NULL, attn_rope_prepare, NULL, NULL, 0},
};
static const struct impl mlp_impls[] = {
    {"naive", naive_mlp_run, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_mlp_run, NULL, NULL, NULL, NULL, NULL, 0},
};
static const struct impl block_impls[] = {
    {"naive", naive_block_run, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_block_run, NULL, NULL, NULL, NULL, NULL, 0},
};

struct op bench_op_rope = {
    .name = "rope",
    .metric = "elem/ns",
    .note = "shape tokens x heads x head_dim:adj|half (the pairing), attn_rope in place on "
            "[L, H * D] query rows at positions 0 .. L-1 (theta 10000, no inv_freq); value = "
            "elements per ns; ratio = value / naive loop (the same double-precision angles "
            "once per row and pair, the rotation one pair at a time); share: 8 bytes per "
            "element (read and write x) / memcpy bandwidth at 4 MiB in cache, at 256 MiB "
            "out of it; outputs compared on the rows of one rotation (the last 64 far out)",
    .own = rope_impls,
    .nown = NIMPL(rope_impls),
    .bench = bench_rope,
    .primary = "attn",
    .child_ref = 1,
};

struct op bench_op_mlp_dec = {
    .name = "mlp-dec",
    .metric = "GB/s",
    .note = "shape tokens:glu|ffn<d_ff>:<type>, one token, d_model 1024: glu = SwiGLU "
            "(silu(x Wg) * x Wu) Wd as attn_decoder_only composes it (attn_linear_typed "
            "x 3, attn_glu), ffn = ungated silu(x Wu) Wd with d_ff 1.5x, the same 3 x 1024 x "
            "2816 parameters; weights [out, in] in <type>; value = weight bytes stored / "
            "time; ratio = value / naive loop; share of the read bandwidth; each call reads "
            "the next of a few copies of the weights (>= 128 MiB in all, past the L3, as a "
            "model's layers are); attn-glu/ffn = calls/s gated over ungated, attn-f16/f32 = "
            "calls/s with f16 weights over f32",
    .own = mlp_impls,
    .nown = NIMPL(mlp_impls),
    .bench = bench_mlp_decode,
    .primary = "attn",
    .child_ref = 1,
};

struct op bench_op_mlp = {
    .name = "mlp",
    .metric = "GFLOP/s",
    .note = "the shapes of mlp-dec for 128 tokens (32 with --quick); value = 2 x parameters "
            "x tokens / time (the activation and the gating not counted); no naive loop "
            "(ratio -); share of the FMA peak",
    .own = mlp_impls,
    .nown = NIMPL(mlp_impls),
    .bench = bench_mlp_prefill,
    .primary = "attn",
    .child_ref = 1,
};

struct op bench_op_block = {
    .name = "block",
    .metric = "GFLOP/s",
    .note = "shape L<tokens>:<type>: attn_decoder_only prefill into an empty cache, a "
            "Llama-like layer (d_model 1024, 16 heads, 4 kv heads, head_dim 64, d_ff 2816, "
            "RMSNorm, SwiGLU, RoPE halves, no biases) with weights [out, in] and the KV "
            "cache in <type> (q8_0-int8: q8_0 with int8_products); value = (2 x 11.27M "
            "weights x L + 2 L^2 heads head_dim, the causal attention) / time; no naive loop "
            "(ratio -); share of the FMA peak",
    .own = block_impls,
    .nown = NIMPL(block_impls),
    .bench = bench_block_prefill,
    .primary = "attn",
    .child_ref = 1,
};

struct op bench_op_block_dec = {
    .name = "block-dec",
    .metric = "tokens/s",
    .note = "shape kv<cached positions>:<type>: the block of `block` decoding 1 token after "
            "2048 cached positions (cache->len reset to 2048 before each call); value = "
            "tokens per s; ratio = value / naive loop (the whole block, scalar); each call "
            "takes the next of a few copies of the layer, weights and cache (>= 128 MiB in "
            "all, past the L3); share: (the weights stored + K and V of the 2049 positions "
            "attended, bytes/token) x value / read bandwidth",
    .own = block_impls,
    .nown = NIMPL(block_impls),
    .bench = bench_block_decode,
    .primary = "attn",
    .child_ref = 1,
};
