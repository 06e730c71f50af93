/* op_matmul.c - matrix multiplication C = op(A) op(B), alpha 1, beta 0: square sizes, the
 * shapes of attention's Q K^T and P V, every transpose combination; and the same on two
 * threads (matmul-2t). Peers: OpenBLAS cblas_sgemm, oneDNN dnnl_sgemm (peers.c). */
#define _POSIX_C_SOURCE 200112L
#include "bench.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The definition, as a triple loop: c[i][j] = sum_p op(A)[i][p] * op(B)[p][j]. */
static NAIVE_FN void naive_matmul(void *ctx, void *data)
{
    const struct mmcase *c = (const struct mmcase *)data;
    size_t i, j, p;
    size_t as_i = c->ta == ATTN_TRANS ? 1 : c->lda, as_p = c->ta == ATTN_TRANS ? c->lda : 1;
    size_t bs_p = c->tb == ATTN_TRANS ? 1 : c->ldb, bs_j = c->tb == ATTN_TRANS ? c->ldb : 1;
    (void)ctx;
    for (i = 0; i < c->m; i++)
        for (j = 0; j < c->n; j++) {
            float s = 0.0f;
            NOVEC for (p = 0; p < c->k; p++)
                s += c->a[i * as_i + p * as_p] * c->b[p * bs_p + j * bs_j];
            c->c[i * c->ldc + j] = s;
        }
}

static void attn_matmul_rows(const struct mmcase *c, size_t r0, size_t r1, void *ws)
{
    const float *a = c->ta == ATTN_TRANS ? c->a + r0 : c->a + r0 * c->lda;
    check(attn_matmul(c->ta, c->tb, r1 - r0, c->n, c->k, 1.0f, a, c->lda, c->b, c->ldb, 0.0f,
                      c->c + r0 * c->ldc, c->ldc, ws, c->ws_size),
          "attn_matmul");
}

static void attn_matmul_run(void *ctx, void *data)
{
    const struct mmcase *c = (const struct mmcase *)data;
    (void)ctx;
    attn_matmul_rows(c, 0, c->m, c->ws);
}

#ifdef HAVE_DISPATCHED
static void dispatched_matmul_run(void *ctx, void *data)
{
    const struct mmcase *c = (const struct mmcase *)data;
    (void)ctx;
    check(bench_dispatched_matmul(c->ta, c->tb, c->m, c->n, c->k, 1.0f, c->a, c->lda, c->b,
                                  c->ldb, 0.0f, c->c, c->ldc, c->ws, c->ws_size),
          "attn_matmul (dispatched)");
}
#endif

/* Two threads: C split into two row blocks (at a multiple of 4 rows), each thread with
 * its own workspace; this thread computes the first block. */
struct mt_arg {
    const struct mmcase *c;
    size_t r0, r1;
    void *ws;
};

static void *mt_worker(void *arg)
{
    const struct mt_arg *a = (const struct mt_arg *)arg;
    attn_matmul_rows(a->c, a->r0, a->r1, a->ws);
    return NULL;
}

static void attn_matmul_2t_run(void *ctx, void *data)
{
    const struct mmcase *c = (const struct mmcase *)data;
    struct mt_arg second;
    pthread_t t;
    size_t half = (c->m / 2 + 3) / 4 * 4;
    (void)ctx;
    if (half >= c->m) {
        attn_matmul_rows(c, 0, c->m, c->ws);
        return;
    }
    second.c = c;
    second.r0 = half;
    second.r1 = c->m;
    second.ws = c->ws2;
    if (pthread_create(&t, NULL, mt_worker, &second) != 0)
        die("pthread_create", "failed");
    attn_matmul_rows(c, 0, half, c->ws);
    pthread_join(t, NULL);
}

/* The naive loop only up to this many FLOP (512^3 takes ~0.3 s per call, TN ~0.5 s);
 * with --quick up to 256^3 and the 512 x 512 x 64 attention shapes. */
#define NAIVE_MATMUL_MAX_FLOP (g_opt.quick ? 5e7 : 3e8)

static void bench_mm(struct op *op, size_t m, size_t n, size_t k, attn_trans ta, attn_trans tb,
                     int run_baseline)
{
    struct mmcase c;
    struct limit lim;
    char shape[64];
    float *a, *b;
    double flop = 2.0 * (double)m * (double)n * (double)k;
    c.ta = ta;
    c.tb = tb;
    c.m = m;
    c.n = n;
    c.k = k;
    c.lda = ta == ATTN_TRANS ? m : k;
    c.ldb = tb == ATTN_TRANS ? k : n;
    c.ldc = n;
    a = falloc(m * k);
    b = falloc(k * n);
    c.c = falloc(m * n);
    fill_uniform(a, m * k, -1.0f, 1.0f);
    fill_uniform(b, k * n, -1.0f, 1.0f);
    memset(c.c, 0, m * n * sizeof(float));
    c.a = a;
    c.b = b;
    c.ws_size = attn_matmul_workspace_size(ta, tb, m, n, k);
    c.ws = xalloc(c.ws_size);
    c.ws2 = xalloc(c.ws_size);
    bench_fma_limit(&lim);
    lim.factor = 1.0;
    sprintf(shape, "%lux%lux%lu:%c%c", (unsigned long)m, (unsigned long)n, (unsigned long)k,
            ta == ATTN_TRANS ? 'T' : 'N', tb == ATTN_TRANS ? 'T' : 'N');
    bench_shape(op, shape, flop, &c, c.c, m * n, run_baseline, &lim);
    free(a);
    free(b);
    free(c.c);
    free(c.ws);
    free(c.ws2);
}

static void bench_matmul(struct op *op)
{
    static const size_t shapes[][3] = {
        {64, 64, 64},     {128, 128, 128},  {256, 256, 256}, {512, 512, 512},
        {1024, 1024, 1024}, {2048, 2048, 2048},
        {128, 128, 64},   {512, 512, 64},   {2048, 2048, 64}, /* Q K^T (NT is the natural one) */
        {512, 64, 512},   {2048, 64, 2048},                   /* P V */
    };
    size_t i;
    int t;
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        double flop = 2.0 * (double)shapes[i][0] * (double)shapes[i][1] * (double)shapes[i][2];
        if (g_opt.quick && shapes[i][0] == 2048 && shapes[i][2] == 2048 && shapes[i][1] == 2048)
            continue;
        for (t = 0; t < 4; t++)
            bench_mm(op, shapes[i][0], shapes[i][1], shapes[i][2],
                     (t & 2) ? ATTN_TRANS : ATTN_NO_TRANS, (t & 1) ? ATTN_TRANS : ATTN_NO_TRANS,
                     flop <= NAIVE_MATMUL_MAX_FLOP);
    }
}

static void bench_matmul2t(struct op *op)
{
    size_t s = g_opt.quick ? 1024 : 2048;
    bench_mm(op, s, s, s, ATTN_NO_TRANS, ATTN_NO_TRANS, 1);
}

static const struct impl matmul_impls[] = {
    {"naive", naive_matmul, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_matmul_run, NULL, NULL, NULL, NULL, NULL, 0},
#ifdef HAVE_DISPATCHED
    {"attn-dispatched", dispatched_matmul_run, NULL, NULL, NULL, NULL, NULL, 0},
#endif
};

static const struct impl matmul2t_impls[] = {
    {"attn", attn_matmul_run, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn-2t", attn_matmul_2t_run, NULL, NULL, NULL, NULL, NULL, 2},
};

struct op bench_op_matmul = {
    .name = "matmul",
    .metric = "GFLOP/s",
    .note =
        "shape m x n x k : op(A) op(B) (NT = B transposed); value = 2mnk / time; ratio = "
        "value / naive i-j-k triple loop (run only for 2mnk <= 3e8, 5e7 with --quick); share "
        "of the FMA peak; attn-dispatched = the one-binary build (see the header)",
    .own = matmul_impls,
    .nown = NIMPL(matmul_impls),
    .bench = bench_matmul,
    .primary = "attn",
    .child_ref = 1,
};

/* The baseline of the ratio column is the library on one thread. */
struct op bench_op_matmul2t = {
    .name = "matmul-2t",
    .metric = "GFLOP/s",
    .note =
        "attn-2t = attn_matmul on 2 pthreads, C split into 2 row blocks, own workspace each; "
        "ratio = speedup over attn on 1 thread; share of 2 x the one-core FMA peak for 2 "
        "threads",
    .own = matmul2t_impls,
    .nown = NIMPL(matmul2t_impls),
    .bench = bench_matmul2t,
    .primary = "attn-2t",
    .child_ref = 0,
};
