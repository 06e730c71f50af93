/* op_softmax.c - softmax over rows, and the row operations' shapes (shared with the norms
 * in op_norm.c): n in {64, 256, 1024, 4096}, 4 MiB of input (in cache), then 256 MiB (out
 * of cache). Peer: oneDNN (peers.c). */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void bench_rows(struct op *op, struct limit in_cache)
{
    static const size_t ns[] = {64, 256, 1024, 4096};
    static const size_t bytes[] = {(size_t)4 << 20, (size_t)256 << 20};
    static int filled;
    size_t total = bytes[1] / sizeof(float), maxn = 4096, i, b;
    float *x = scratch(BUF_ROW_X, total), *y = scratch(BUF_ROW_Y, total);
    float *gamma = falloc(maxn), *beta = falloc(maxn);
    if (!filled) { /* the same input for every row op */
        fill_uniform(x, total, -4.0f, 4.0f);
        filled = 1;
    }
    fill_uniform(gamma, maxn, 0.5f, 1.5f);
    fill_uniform(beta, maxn, -0.5f, 0.5f);
    for (b = 0; b < 2; b++)
        for (i = 0; i < sizeof ns / sizeof ns[0]; i++) {
            struct rowcase c;
            struct limit lim = in_cache;
            char shape[64];
            c.n = ns[i];
            c.rows = bytes[b] / sizeof(float) / c.n;
            c.x = x;
            c.y = y;
            c.gamma = gamma;
            c.beta = beta;
            c.eps = 1e-5f;
            /* Out of cache every row op is bound by memory: 8 bytes (read x, write y) per
             * element. The memory bandwidth moves with the other tenants of a shared
             * machine, so the copy is measured on these buffers just before each shape. */
            if (b == 1) {
                char text[160];
                lim.name = "copy_256MiB";
                lim.value = measure_copy(x, y, total);
                lim.factor = 8.0;
                sprintf(text, "%s: out of cache, each shape's share is of a memcpy of its 256 MiB "
                        "timed just before it: n = %lu %.1f GB/s", op->name,
                        (unsigned long)ns[i], lim.value);
                add_run_note(text);
            }
            sprintf(shape, "%lux%lu", (unsigned long)c.rows, (unsigned long)c.n);
            /* --quick: no naive loop out of cache (a quarter of a second per call) */
            bench_shape(op, shape, (double)(c.rows * c.n), &c, y, c.rows * c.n,
                        !(g_opt.quick && b == 1), &lim);
        }
    free(gamma);
    free(beta);
}

/* 3-pass softmax: max, exp and sum, normalize. */
static NAIVE_FN void naive_softmax(void *ctx, void *data)
{
    const struct rowcase *c = (const struct rowcase *)data;
    size_t r, j, n = c->n;
    (void)ctx;
    for (r = 0; r < c->rows; r++) {
        const float *x = c->x + r * n;
        float *y = c->y + r * n;
        float mx = -INFINITY, sum = 0.0f, inv;
        NOVEC for (j = 0; j < n; j++) mx = x[j] > mx ? x[j] : mx;
        NOVEC for (j = 0; j < n; j++) {
            y[j] = expf(x[j] - mx);
            sum += y[j];
        }
        inv = 1.0f / sum;
        NOVEC for (j = 0; j < n; j++) y[j] *= inv;
    }
}

static void attn_softmax_run(void *ctx, void *data)
{
    const struct rowcase *c = (const struct rowcase *)data;
    (void)ctx;
    check(attn_softmax(c->x, c->n, c->y, c->n, c->rows, c->n, 1.0f), "attn_softmax");
}

#ifdef HAVE_DISPATCHED
static void dispatched_softmax_run(void *ctx, void *data)
{
    const struct rowcase *c = (const struct rowcase *)data;
    (void)ctx;
    check(bench_dispatched_softmax(c->x, c->n, c->y, c->n, c->rows, c->n, 1.0f),
          "attn_softmax (dispatched)");
}
#endif

/* In cache, softmax is bound by the exp. */
static void bench_softmax(struct op *op)
{
    struct limit lim;
    lim.name = "exp";
    lim.value = g_lim.exp_l1;
    lim.factor = 1.0;
    bench_rows(op, lim);
}

static const struct impl softmax_impls[] = {
    {"naive", naive_softmax, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_softmax_run, NULL, NULL, NULL, NULL, NULL, 0},
#ifdef HAVE_DISPATCHED
    {"attn-dispatched", dispatched_softmax_run, NULL, NULL, NULL, NULL, NULL, 0},
#endif
};

struct op bench_op_softmax = {
    .name = "softmax",
    .metric = "elem/ns",
    .note =
        "value = rows*n elements per ns (GB/s of input = 4 x value); ratio = attn_softmax "
        "/ naive 3-pass softmax with libm expf; share: in cache of the exp throughput, out of "
        "cache 8 bytes (read x, write y) per element / memcpy bandwidth; attn-dispatched = "
        "the one-binary build (see the header)",
    .own = softmax_impls,
    .nown = NIMPL(softmax_impls),
    .bench = bench_softmax,
    .primary = "attn",
    .child_ref = 1,
};
