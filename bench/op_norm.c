/* op_norm.c - layer normalization and RMS normalization over rows, on the row operations'
 * shapes (bench_rows, op_softmax.c). Peer: oneDNN for layernorm (peers.c). */
#include "bench.h"

#include <math.h>

/* Two-pass layernorm (mean, then variance about the mean), then the output pass. */
static NAIVE_FN void naive_layernorm(void *ctx, void *data)
{
    const struct rowcase *c = (const struct rowcase *)data;
    size_t r, j, n = c->n;
    (void)ctx;
    for (r = 0; r < c->rows; r++) {
        const float *x = c->x + r * n;
        float *y = c->y + r * n;
        float mean = 0.0f, var = 0.0f, rstd;
        NOVEC for (j = 0; j < n; j++) mean += x[j];
        mean /= (float)n;
        NOVEC for (j = 0; j < n; j++) var += (x[j] - mean) * (x[j] - mean);
        var /= (float)n;
        rstd = 1.0f / sqrtf(var + c->eps);
        NOVEC for (j = 0; j < n; j++) y[j] = (x[j] - mean) * rstd * c->gamma[j] + c->beta[j];
    }
}

static void attn_layernorm_run(void *ctx, void *data)
{
    const struct rowcase *c = (const struct rowcase *)data;
    (void)ctx;
    check(attn_layernorm(c->x, c->n, c->y, c->n, c->rows, c->n, c->gamma, c->beta, c->eps,
                         NULL, NULL),
          "attn_layernorm");
}

static NAIVE_FN void naive_rmsnorm(void *ctx, void *data)
{
    const struct rowcase *c = (const struct rowcase *)data;
    size_t r, j, n = c->n;
    (void)ctx;
    for (r = 0; r < c->rows; r++) {
        const float *x = c->x + r * n;
        float *y = c->y + r * n;
        float ss = 0.0f, rms;
        NOVEC for (j = 0; j < n; j++) ss += x[j] * x[j];
        rms = 1.0f / sqrtf(ss / (float)n + c->eps);
        NOVEC for (j = 0; j < n; j++) y[j] = x[j] * rms * c->gamma[j];
    }
}

static void attn_rmsnorm_run(void *ctx, void *data)
{
    const struct rowcase *c = (const struct rowcase *)data;
    (void)ctx;
    check(attn_rmsnorm(c->x, c->n, c->y, c->n, c->rows, c->n, c->gamma, c->eps),
          "attn_rmsnorm");
}

/* In cache, the norms are bound by copying their 4 MiB: 8 bytes per element. */
static void bench_norm(struct op *op)
{
    struct limit lim;
    lim.name = "copy_4MiB";
    lim.value = g_lim.copy_cache;
    lim.factor = 8.0;
    bench_rows(op, lim);
}

static const struct impl layernorm_impls[] = {
    {"naive", naive_layernorm, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_layernorm_run, NULL, NULL, NULL, NULL, NULL, 0},
};
static const struct impl rmsnorm_impls[] = {
    {"naive", naive_rmsnorm, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_rmsnorm_run, NULL, NULL, NULL, NULL, NULL, 0},
};

struct op bench_op_layernorm = {
    .name = "layernorm",
    .metric = "elem/ns",
    .note =
        "value = elements per ns (GB/s of input = 4 x value), gamma and beta given; ratio = "
        "attn_layernorm / naive two-pass (mean, variance) loop; share: 8 bytes per element / "
        "memcpy bandwidth at the same footprint",
    .own = layernorm_impls,
    .nown = NIMPL(layernorm_impls),
    .bench = bench_norm,
    .primary = "attn",
    .child_ref = 1,
};

struct op bench_op_rmsnorm = {
    .name = "rmsnorm",
    .metric = "elem/ns",
    .note =
        "value = elements per ns (GB/s of input = 4 x value), gamma given; ratio = "
        "attn_rmsnorm / naive sum-of-squares loop; share as for layernorm",
    .own = rmsnorm_impls,
    .nown = NIMPL(rmsnorm_impls),
    .bench = bench_norm,
    .primary = "attn",
    .child_ref = 1,
};
