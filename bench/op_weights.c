/* op_weights.c - products with the weights stored in f32, f16, bf16, q8_0 or q4_0
 * (attn_matmul_typed): the decode matrix-vector product (1 and 4 rows against a 4096 x 4096
 * weight, nn.Linear's [out, in] layout and, for the element types, the [in, out] one), whose
 * speed is the weight bytes streamed, and prefill-sized linear layers (512 tokens, 1024 ->
 * 1024 and 4096 -> 4096). Each shape runs once per storage type; a derived row gives each
 * type's speed over the f32 one. */
#include "bench.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct wcase {
    struct mmcase mm; /* a = X (m x k), b = W as floats (the 16-bit values widened), c = Y */
    attn_dtype t;
    const void *w; /* W as stored: mm.b for f32, else 16-bit elements or blocks */
};

static const char *const type_name[5] = {"f32", "f16", "bf16", "q8_0", "q4_0"};

/* Y = X op(W), a triple loop on the widened W */
static NAIVE_FN void naive_weights(void *ctx, void *data)
{
    const struct mmcase *c = &((const struct wcase *)data)->mm;
    size_t i, j, p;
    const size_t bs_p = c->tb == ATTN_TRANS ? 1 : c->ldb, bs_j = c->tb == ATTN_TRANS ? c->ldb : 1;
    (void)ctx;
    for (i = 0; i < c->m; i++)
        for (j = 0; j < c->n; j++) {
            float s = 0.0f;
            NOVEC for (p = 0; p < c->k; p++) s += c->a[i * c->lda + p] * c->b[p * bs_p + j * bs_j];
            c->c[i * c->ldc + j] = s;
        }
}

static void attn_weights_run(void *ctx, void *data)
{
    const struct wcase *w = (const struct wcase *)data;
    const struct mmcase *c = &w->mm;
    (void)ctx;
    check(attn_matmul_typed(ATTN_NO_TRANS, c->tb, c->m, c->n, c->k, 1.0f, c->a, c->lda, w->t,
                            w->w, c->ldb, 0.0f, c->c, c->ldc, c->ws, c->ws_size),
          "attn_matmul_typed");
}

/* the attn row's speed with t weights over its speed with f32 weights (impls[ia]) */
/* v: the variant timed (the type, or 5 + the type's offset from q8_0 for attn_matmul_int8) */
static void ratio_row_v(const struct op *op, const char *shape, int v, attn_dtype t, int ia)
{
    char impl[48], note[80];
    const double t16 = g_call_ns[ia][v], t32 = g_call_ns[ia][ATTN_F32];
    if (!(t16 > 0.0 && t32 > 0.0))
        return;
    snprintf(impl, sizeof impl, "attn%s-%s/f32", v > ATTN_Q4_0 ? "-int8" : "", type_name[t]);
    snprintf(note, sizeof note, "calls/s with %s weights%s / with f32 weights", type_name[t],
             v > ATTN_Q4_0 ? " (attn_matmul_int8)" : "");
    print_derived(op, shape, impl, "ratio", t32 / t16, note);
}

static void ratio_row(const struct op *op, const char *shape, attn_dtype t, int ia)
{
    ratio_row_v(op, shape, (int)t, t, ia);
}

/* One shape, the storage types in the bit mask `types` (block types only for [out, in]):
 * m rows of X times a k x n op(W) */
static void bench_w(struct op *op, size_t m, size_t n, size_t k, attn_trans tw, int bytes_metric,
                    unsigned types)
{
    const size_t nw = n * k;
    float *x = falloc(m * k), *wf = falloc(nw), *y = falloc(m * n);
    uint16_t *wh = (uint16_t *)xalloc(nw * sizeof(uint16_t)); /* room for any type */
    int ty;
    fill_uniform(x, m * k, -1.0f, 1.0f);
    for (ty = ATTN_F32; ty <= ATTN_Q4_0; ty++) {
        struct wcase c;
        struct limit lim;
        char shape[64];
        double work;
        if (!(types >> ty & 1u) || (ty >= ATTN_Q8_0 && tw != ATTN_TRANS))
            continue;
        fill_uniform(wf, nw, -1.0f, 1.0f);
        c.t = (attn_dtype)ty;
        c.w = wf;
        if (ty != ATTN_F32) { /* round (quantize), and widen back for the naive loop */
            check(attn_convert(c.t, wh, ATTN_F32, wf, nw), "attn_convert");
            check(attn_convert(ATTN_F32, wf, c.t, wh, nw), "attn_convert");
            c.w = wh;
        }
        c.mm.ta = ATTN_NO_TRANS, c.mm.tb = tw;
        c.mm.m = m, c.mm.n = n, c.mm.k = k;
        c.mm.a = x, c.mm.b = wf, c.mm.c = y;
        c.mm.lda = k, c.mm.ldb = tw == ATTN_TRANS ? k : n, c.mm.ldc = n;
        c.mm.ws_size = attn_matmul_workspace_size(ATTN_NO_TRANS, tw, m, n, k);
        c.mm.ws = xalloc(c.mm.ws_size);
        c.mm.ws2 = NULL;
        memset(y, 0, m * n * sizeof(float));
        if (bytes_metric) { /* GB/s of the weight bytes stored */
            work = (double)attn_dtype_bytes(c.t, nw);
            lim.name = "read_256MiB";
            lim.value = g_lim.read_mem;
        } else {
            work = 2.0 * (double)m * (double)n * (double)k;
            bench_fma_limit(&lim);
        }
        lim.factor = 1.0;
        g_predict.variant = ty;
        sprintf(shape, "%lux%lux%lu:%s:%s", (unsigned long)m, (unsigned long)n,
                (unsigned long)k, tw == ATTN_TRANS ? "NT" : "NN", type_name[ty]);
        bench_shape(op, shape, work, &c, y, m * n, bytes_metric, &lim);
        if (ty != ATTN_F32)
            ratio_row(op, shape, c.t, 1);
        free(c.mm.ws);
    }
    free(x);
    free(wf);
    free(y);
    free(wh);
}

static void bench_matvec(struct op *op)
{
    static const size_t rows[] = {1, 4};
    size_t i;
    int tw;
    for (i = 0; i < 2; i++)
        for (tw = 1; tw >= 0; tw--)
            if (!g_opt.quick || (rows[i] == 1 && tw))
                bench_w(op, rows[i], 4096, 4096, (attn_trans)tw, 1, 0x1Fu);
}

static void bench_linear(struct op *op)
{
    bench_w(op, g_opt.quick ? 64 : 512, 1024, 1024, ATTN_TRANS, 0, 0x1Fu);
    if (!g_opt.quick) /* a 7B model's square projection: f32 and the block types */
        bench_w(op, 512, 4096, 4096, ATTN_TRANS, 0,
                1u << ATTN_F32 | 1u << ATTN_Q8_0 | 1u << ATTN_Q4_0);
}

/* matvec-cold: the [out, in] matrix-vector shapes out of cache. The weights are stored in
 * `n` copies spanning BENCH_COLD_BYTES; each call multiplies by the next copy. */
struct wcold {
    struct wcase c[BENCH_COLD_MAX]; /* one X, one Y and one workspace (c[0]'s) for all */
    size_t n, next;
    int int8; /* attn_matmul_int8, not attn_matmul_typed */
};

static void attn_cold_run(void *ctx, void *data)
{
    struct wcold *w = (struct wcold *)data;
    const struct wcase *c = &w->c[w->next];
    (void)ctx;
    w->next = w->next + 1 < w->n ? w->next + 1 : 0;
    if (w->int8) {
        check(attn_matmul_int8(c->mm.m, c->mm.n, c->mm.k, 1.0f, c->mm.a, c->mm.lda, c->t, c->w,
                               c->mm.ldb, 0.0f, c->mm.c, c->mm.ldc, w->c[0].mm.ws,
                               w->c[0].mm.ws_size),
              "attn_matmul_int8");
        return;
    }
    check(attn_matmul_typed(ATTN_NO_TRANS, ATTN_TRANS, c->mm.m, c->mm.n, c->mm.k, 1.0f,
                            c->mm.a, c->mm.lda, c->t, c->w, c->mm.ldb, 0.0f, c->mm.c,
                            c->mm.ldc, w->c[0].mm.ws, w->c[0].mm.ws_size),
          "attn_matmul_typed");
}

static void bench_matvec_cold(struct op *op)
{
    static const size_t rows[] = {1, 4};
    static struct wcold w;
    const size_t n = 4096, k = 4096, nw = n * k;
    size_t ri, i;
    int v;
    float *wf = falloc(nw);
    for (ri = 0; ri < 2; ri++)
        for (v = ATTN_F32; v <= ATTN_Q4_0 + 2; v++) { /* the block types again: int8 products */
            const int ty = v > ATTN_Q4_0 ? v - 2 : v;
            const size_t m = rows[ri];
            const double bytes = (double)attn_dtype_bytes((attn_dtype)ty, nw);
            float *x = falloc(m * k), *y = falloc(m * n);
            struct limit lim;
            char shape[64];
            if (g_opt.quick && ri > 0)
                continue;
            fill_uniform(x, m * k, -1.0f, 1.0f);
            memset(y, 0, m * n * sizeof(float));
            w.n = cold_copies(bytes);
            w.next = 0;
            w.int8 = v > ATTN_Q4_0;
            for (i = 0; i < w.n; i++) {
                struct wcase *c = &w.c[i];
                void *st = xalloc((size_t)bytes);
                fill_uniform(wf, nw, -1.0f, 1.0f);
                check(attn_convert((attn_dtype)ty, st, ATTN_F32, wf, nw), "attn_convert");
                c->t = (attn_dtype)ty;
                c->w = st;
                c->mm.ta = ATTN_NO_TRANS, c->mm.tb = ATTN_TRANS;
                c->mm.m = m, c->mm.n = n, c->mm.k = k;
                c->mm.a = x, c->mm.b = NULL, c->mm.c = y;
                c->mm.lda = k, c->mm.ldb = k, c->mm.ldc = n;
                c->mm.ws = c->mm.ws2 = NULL;
                c->mm.ws_size = 0;
            }
            w.c[0].mm.ws_size = w.int8 ? attn_matmul_int8_workspace_size(m, n, k)
                                       : attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_TRANS, m,
                                                                    n, k);
            w.c[0].mm.ws = xalloc(w.c[0].mm.ws_size);
            lim.name = "read_256MiB";
            lim.value = g_lim.read_mem;
            lim.factor = 1.0;
            g_predict.variant = v;
            sprintf(shape, "%lux%lux%lu:NT:%s%s", (unsigned long)m, (unsigned long)n,
                    (unsigned long)k, type_name[ty], w.int8 ? ":int8" : "");
            bench_shape(op, shape, bytes, &w, y, m * n, 1, &lim);
            if (ty != ATTN_F32)
                ratio_row_v(op, shape, v, (attn_dtype)ty, 0);
            free(w.c[0].mm.ws);
            for (i = 0; i < w.n; i++)
                free((void *)w.c[i].w);
            free(x);
            free(y);
        }
    free(wf);
}

static const struct impl weights_impls[] = {
    {"naive", naive_weights, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_weights_run, NULL, NULL, NULL, NULL, NULL, 0},
};

struct op bench_op_matvec = {
    .name = "matvec",
    .metric = "GB/s",
    .note = "shape m x n x k:NT|NN:<type>: m rows of X times a 4096 x 4096 weight stored as "
            "<type> (NT: [out, in], nn.Linear's layout), attn_matmul_typed; value = weight "
            "bytes stored / time; ratio = value / naive loop; share of the read bandwidth; "
            "attn-<type>/f32 = calls/s with <type> weights over f32 weights",
    .own = weights_impls,
    .nown = NIMPL(weights_impls),
    .bench = bench_matvec,
    .primary = "attn",
    .child_ref = 1,
};

static const struct impl matvec_cold_impls[] = {
    {"attn", attn_cold_run, NULL, NULL, NULL, NULL, NULL, 0},
};

struct op bench_op_matvec_cold = {
    .name = "matvec-cold",
    .metric = "GB/s",
    .note = "the matvec op's [out, in] shapes out of cache: the weight stored in as many "
            "copies as span 256 MiB (the read bandwidth's buffer), each call on the next "
            "copy; value = weight bytes stored / time; share of the read bandwidth measured "
            "at 256 MiB; attn-<type>/f32 = calls/s with <type> weights over f32 weights, both "
            "out of cache; :int8 = attn_matmul_int8 (X quantized per block, int8 dot products)",
    .own = matvec_cold_impls,
    .nown = NIMPL(matvec_cold_impls),
    .bench = bench_matvec_cold,
    .primary = "attn",
    .child_ref = 0,
};

struct op bench_op_linear16 = {
    .name = "linear16",
    .metric = "GFLOP/s",
    .note = "shape tokens x d_out x d_in:NT:<type>: a linear layer's product with the weight "
            "stored as <type> ([out, in]), attn_matmul_typed; value = 2 tokens d_out d_in / "
            "time; attn-<type>/f32 = calls/s with <type> weights over f32 weights",
    .own = weights_impls,
    .nown = NIMPL(weights_impls),
    .bench = bench_linear,
    .primary = "attn",
    .child_ref = 1,
};

/* ---- int8: attn_matmul_int8 beside the dequantizing product of the same weights ---------- */

/* X is rounded to q8_0 first (quantized and widened back): attn_matmul_int8 then quantizes
 * it to the same codes, so every row computes one product and their outputs compare. */
static void int8_run(void *ctx, void *data)
{
    const struct wcase *w = (const struct wcase *)data;
    const struct mmcase *c = &w->mm;
    (void)ctx;
    check(attn_matmul_int8(c->m, c->n, c->k, 1.0f, c->a, c->lda, w->t, w->w, c->ldb, 0.0f,
                           c->c, c->ldc, c->ws2, attn_matmul_int8_workspace_size(c->m, c->n,
                                                                                 c->k)),
          "attn_matmul_int8");
}

static void int8_f32_run(void *ctx, void *data)
{
    const struct mmcase *c = &((const struct wcase *)data)->mm;
    (void)ctx;
    check(attn_matmul(ATTN_NO_TRANS, ATTN_TRANS, c->m, c->n, c->k, 1.0f, c->a, c->lda, c->b,
                      c->ldb, 0.0f, c->c, c->ldc, c->ws, c->ws_size),
          "attn_matmul");
}

static void bench_int8(struct op *op)
{
    /* prefill (m 512), then decode's few rows over the same weights (1 and 4 tokens) */
    static const size_t ms[4] = {512, 512, 1, 4}, dims[4] = {1024, 4096, 4096, 4096};
    size_t di;
    int ty;
    for (di = 0; di < 4; di++) {
        const size_t m = g_opt.quick && di < 2 ? 64 : ms[di];
        const size_t n = g_opt.quick ? 1024 : dims[di], k = n;
        const size_t nw = n * k;
        if (g_opt.quick && di == 1) continue;
        float *x = falloc(m * k), *wf = falloc(nw), *y = falloc(m * n);
        void *wq = xalloc(attn_dtype_bytes(ATTN_Q8_0, nw));
        fill_uniform(x, m * k, -1.0f, 1.0f);
        check(attn_convert(ATTN_Q8_0, wq, ATTN_F32, x, m * k), "attn_convert");
        check(attn_convert(ATTN_F32, x, ATTN_Q8_0, wq, m * k), "attn_convert");
        for (ty = ATTN_Q8_0; ty <= ATTN_Q4_0; ty++) {
            struct wcase c;
            struct limit lim;
            char shape[64];
            fill_uniform(wf, nw, -1.0f, 1.0f);
            c.t = (attn_dtype)ty;
            check(attn_convert(c.t, wq, ATTN_F32, wf, nw), "attn_convert");
            check(attn_convert(ATTN_F32, wf, c.t, wq, nw), "attn_convert");
            c.w = wq;
            c.mm.ta = ATTN_NO_TRANS, c.mm.tb = ATTN_TRANS;
            c.mm.m = m, c.mm.n = n, c.mm.k = k;
            c.mm.a = x, c.mm.b = wf, c.mm.c = y;
            c.mm.lda = k, c.mm.ldb = k, c.mm.ldc = n;
            c.mm.ws_size = attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_TRANS, m, n, k);
            c.mm.ws = xalloc(c.mm.ws_size);
            c.mm.ws2 = xalloc(attn_matmul_int8_workspace_size(m, n, k));
            memset(y, 0, m * n * sizeof(float));
            bench_fma_limit(&lim);
            lim.factor = 1.0;
            g_predict.variant = ty;
            sprintf(shape, "%lux%lux%lu:NT:%s", (unsigned long)m, (unsigned long)n,
                    (unsigned long)k, type_name[ty]);
            bench_shape(op, shape, 2.0 * (double)m * (double)n * (double)k, &c, y, m * n, 0,
                        &lim);
            free(c.mm.ws);
            free(c.mm.ws2);
        }
        free(x);
        free(wf);
        free(y);
        free(wq);
    }
}

static const struct impl int8_impls[] = {
    {"naive", naive_weights, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", int8_run, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn-dequant", attn_weights_run, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn-f32", int8_f32_run, NULL, NULL, NULL, NULL, NULL, 0},
};

struct op bench_op_int8 = {
    .name = "int8",
    .metric = "GFLOP/s",
    .note = "shape tokens x d_out x d_in:NT:<type>: a linear layer's product (prefill, and "
            "decode's 1 and 4 tokens) with <type> weights ([out, in]) and X on the q8_0 grid; "
            "attn = attn_matmul_int8 (X quantized per block, int8 dot products), "
            "attn-dequant = attn_matmul_typed (the weights widened while packing), "
            "attn-f32 = attn_matmul on the widened weights; "
            "value = 2 tokens d_out d_in / time",
    .own = int8_impls,
    .nown = NIMPL(int8_impls),
    .bench = bench_int8,
    .primary = "attn",
    .child_ref = 1,
};
