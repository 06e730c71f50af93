/* attn_bench - single-threaded benchmark of the attn.h kernels against naive loops.
 *
 *   meson compile -C build && ./build/bench/attn_bench [--quick] [--csv] [--op NAME]
 *
 * For every op and shape, each implementation in that op's table is timed in the same
 * run. Entry 0 of every table is the naive scalar baseline ("naive", ratio 1.00); the
 * ratio of any other row is its metric value over the baseline's for the same shape
 * (higher = faster). Adding a peer (OpenBLAS, oneDNN, ...) is one more { name, run, ctx }
 * entry in the op's table: `run(ctx, data)` performs one call on the shape described by
 * `data` (struct rowcase / mmcase / attcase) and writes the same output buffer.
 *
 * Timing: CLOCK_MONOTONIC. A warm-up (at least one call, ~warm-up time) also estimates the
 * time per call; a sample is then `reps` back-to-back calls (~10 ms, 2 ms with --quick),
 * and the row reports the median over the samples (9, 3 with --quick) and the spread
 * (max - min) / median. After timing, each implementation's output is compared with the
 * baseline's; the largest difference is reported in the closing notes.
 *
 * The naive loops are compiled into this binary with the build's flags (-O3 for meson's
 * release buildtype) but with auto-vectorization disabled (GCC: optimize attribute, clang:
 * loop pragmas), so they stay plain scalar loops; libm expf / sqrtf are called per element.
 */
#define _POSIX_C_SOURCE 200112L
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------------------ */
/* Keep the naive loops scalar. */
#if defined(__clang__)
#define NAIVE_FN
#define NOVEC _Pragma("clang loop vectorize(disable) interleave(disable)")
#elif defined(__GNUC__)
#define NAIVE_FN __attribute__((optimize("no-tree-vectorize", "no-loop-interchange")))
#define NOVEC
#else
#define NAIVE_FN
#define NOVEC
#endif

/* ------------------------------------------------------------------------------------ */
/* Options and small utilities. */

static struct {
    int csv;
    int quick;
    const char *only; /* NULL = every op */
    int samples;
    double sample_ns; /* target duration of one sample */
    double warmup_ns; /* minimum warm-up duration */
} g_opt;

static FILE *g_info; /* header and notes: stdout for the table, stderr with --csv */

static void die(const char *what, const char *why)
{
    fprintf(stderr, "attn_bench: %s: %s\n", what, why);
    exit(1);
}

static void check(attn_status st, const char *call)
{
    if (st != ATTN_OK) {
        fprintf(stderr, "attn_bench: %s failed: %s (%d)\n", call, attn_status_string(st),
                (int)st);
        abort();
    }
}

static void *xalloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        return NULL;
    if (posix_memalign(&p, 64, bytes) != 0 || p == NULL)
        die("posix_memalign", "out of memory");
    return p;
}

static float *falloc(size_t count) { return (float *)xalloc(count * sizeof(float)); }

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static unsigned long long g_rng = 0x243f6a8885a308d3ull;

/* Uniform in [lo, hi). */
static void fill_uniform(float *x, size_t count, float lo, float hi)
{
    size_t i;
    for (i = 0; i < count; i++) {
        g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = lo + (hi - lo) * (float)((g_rng >> 40) * (1.0 / 16777216.0));
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ------------------------------------------------------------------------------------ */
/* The generic part: an implementation, an op, timing one (impl, shape), the rows. */

typedef void (*impl_fn)(void *ctx, void *data);

struct impl {
    const char *name;
    impl_fn run; /* one call on the shape `data` */
    void *ctx;   /* implementation-specific state (handles, ...); NULL for ours */
};

struct op {
    const char *name;
    const char *metric; /* unit of the value column */
    const char *note;   /* what the value and the ratio mean */
    const struct impl *impls; /* impls[0] is the baseline (ratio 1.00) */
    size_t nimpl;
    void (*bench)(struct op *op); /* times every shape of the op */
    double max_diff; /* largest normalized difference from the baseline seen so far */
    const char *max_diff_impl;
    char max_diff_shape[64];
};

/* Median time per call in ns; *spread = (max - min) / median of the samples. */
static double time_impl(const struct impl *im, void *data, double *spread)
{
    double t0, t, per_call, samples[16];
    long reps, calls = 0;
    int s, ns = g_opt.samples < 16 ? g_opt.samples : 16;

    /* Warm-up, which also estimates the time per call. */
    t0 = now_ns();
    do {
        im->run(im->ctx, data);
        calls++;
        t = now_ns() - t0;
    } while (t < g_opt.warmup_ns);
    per_call = t / (double)calls;
    reps = (long)(g_opt.sample_ns / per_call + 0.5);
    if (reps < 1)
        reps = 1;

    for (s = 0; s < ns; s++) {
        long r;
        t0 = now_ns();
        for (r = 0; r < reps; r++)
            im->run(im->ctx, data);
        samples[s] = (now_ns() - t0) / (double)reps;
    }
    qsort(samples, (size_t)ns, sizeof samples[0], cmp_double);
    t = (ns % 2) ? samples[ns / 2] : 0.5 * (samples[ns / 2 - 1] + samples[ns / 2]);
    *spread = (samples[ns - 1] - samples[0]) / t;
    return t;
}

/* max |out - ref| / max |ref| (infinity when a NaN appears where ref has none). */
static double normalized_diff(const float *out, const float *ref, size_t count)
{
    double md = 0.0, mr = 0.0;
    size_t i;
    for (i = 0; i < count; i++) {
        double d = fabs((double)out[i] - (double)ref[i]), r = fabs((double)ref[i]);
        if (isnan(d) && !isnan(ref[i]))
            return INFINITY;
        if (d > md)
            md = d;
        if (r > mr)
            mr = r;
    }
    return mr > 0.0 ? md / mr : md;
}

static void print_row(const struct op *op, const char *shape, const char *impl, double value,
                      double spread, double ratio)
{
    if (g_opt.csv)
        printf("%s,%s,%s,%s,%.6g,%.4f\n", op->name, shape, impl, op->metric, value, ratio);
    else
        printf("%-10s %-20s %-8s %-8s %10.3f %7.1f%% %7.2f\n", op->name, shape, impl,
               op->metric, value, 100.0 * spread, ratio);
    fflush(stdout);
}

/* Times every implementation of `op` on one shape. `work` is the metric's numerator per
 * call (FLOP for GFLOP/s, elements for elem/ns: both are "per ns" of the median).
 * out / out_count: the buffer every implementation writes, compared with the baseline's. */
static void bench_shape(struct op *op, const char *shape, double work, void *data,
                        const float *out, size_t out_count)
{
    float *ref = falloc(out_count);
    double base = 0.0;
    size_t i;
    for (i = 0; i < op->nimpl; i++) {
        double spread, ns = time_impl(&op->impls[i], data, &spread);
        double value = work / ns;
        if (i == 0) {
            base = value;
            memcpy(ref, out, out_count * sizeof(float));
        } else {
            double d = normalized_diff(out, ref, out_count);
            if (!(d <= op->max_diff)) {
                op->max_diff = d;
                op->max_diff_impl = op->impls[i].name;
                snprintf(op->max_diff_shape, sizeof op->max_diff_shape, "%s", shape);
            }
        }
        print_row(op, shape, op->impls[i].name, value, spread, i == 0 ? 1.0 : value / base);
    }
    free(ref);
}

/* ------------------------------------------------------------------------------------ */
/* Row operations: softmax, layernorm, rmsnorm. */

struct rowcase {
    size_t rows, n;
    const float *x;
    float *y;
    const float *gamma, *beta;
    float eps;
};

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

static const struct impl softmax_impls[] = {
    {"naive", naive_softmax, NULL},
    {"attn", attn_softmax_run, NULL},
};
static const struct impl layernorm_impls[] = {
    {"naive", naive_layernorm, NULL},
    {"attn", attn_layernorm_run, NULL},
};
static const struct impl rmsnorm_impls[] = {
    {"naive", naive_rmsnorm, NULL},
    {"attn", attn_rmsnorm_run, NULL},
};

#define ROW_INPUT_BYTES ((size_t)4 << 20) /* rows * n * 4 bytes = 4 MiB */

static void bench_rowop(struct op *op)
{
    static const size_t ns[] = {64, 256, 1024, 4096};
    size_t total = ROW_INPUT_BYTES / sizeof(float), maxn = 4096, i;
    float *x = falloc(total), *y = falloc(total);
    float *gamma = falloc(maxn), *beta = falloc(maxn);
    fill_uniform(x, total, -4.0f, 4.0f);
    fill_uniform(gamma, maxn, 0.5f, 1.5f);
    fill_uniform(beta, maxn, -0.5f, 0.5f);
    memset(y, 0, total * sizeof(float));
    for (i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        struct rowcase c;
        char shape[64];
        c.n = ns[i];
        c.rows = total / c.n;
        c.x = x;
        c.y = y;
        c.gamma = gamma;
        c.beta = beta;
        c.eps = 1e-5f;
        sprintf(shape, "%lux%lu", (unsigned long)c.rows, (unsigned long)c.n);
        bench_shape(op, shape, (double)(c.rows * c.n), &c, y, c.rows * c.n);
    }
    free(x);
    free(y);
    free(gamma);
    free(beta);
}

/* ------------------------------------------------------------------------------------ */
/* Matmul: C = op(A) op(B), alpha 1, beta 0. */

struct mmcase {
    attn_trans ta, tb;
    size_t m, n, k;
    const float *a, *b;
    size_t lda, ldb, ldc;
    float *c;
    void *ws;
    size_t ws_size;
};

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
            NOVEC for (p = 0; p < c->k; p++) s += c->a[i * as_i + p * as_p] * c->b[p * bs_p + j * bs_j];
            c->c[i * c->ldc + j] = s;
        }
}

static void attn_matmul_run(void *ctx, void *data)
{
    const struct mmcase *c = (const struct mmcase *)data;
    (void)ctx;
    check(attn_matmul(c->ta, c->tb, c->m, c->n, c->k, 1.0f, c->a, c->lda, c->b, c->ldb, 0.0f,
                      c->c, c->ldc, c->ws, c->ws_size),
          "attn_matmul");
}

static const struct impl matmul_impls[] = {
    {"naive", naive_matmul, NULL},
    {"attn", attn_matmul_run, NULL},
};

static void bench_matmul(struct op *op)
{
    static const struct {
        size_t m, n, k;
        attn_trans tb;
    } shapes[] = {
        {64, 64, 64, ATTN_NO_TRANS},   {128, 128, 128, ATTN_NO_TRANS},
        {256, 256, 256, ATTN_NO_TRANS}, {512, 512, 512, ATTN_NO_TRANS},
        {512, 512, 64, ATTN_TRANS},    /* scores = Q K^T: B stored n x k */
        {512, 64, 512, ATTN_NO_TRANS}, /* O = P V */
    };
    size_t i;
    for (i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        struct mmcase c;
        char shape[64];
        float *a, *b;
        c.ta = ATTN_NO_TRANS;
        c.tb = shapes[i].tb;
        c.m = shapes[i].m;
        c.n = shapes[i].n;
        c.k = shapes[i].k;
        c.lda = c.k;
        c.ldb = c.tb == ATTN_TRANS ? c.k : c.n;
        c.ldc = c.n;
        a = falloc(c.m * c.k);
        b = falloc(c.k * c.n);
        c.c = falloc(c.m * c.n);
        fill_uniform(a, c.m * c.k, -1.0f, 1.0f);
        fill_uniform(b, c.k * c.n, -1.0f, 1.0f);
        memset(c.c, 0, c.m * c.n * sizeof(float));
        c.a = a;
        c.b = b;
        c.ws_size = attn_matmul_workspace_size(c.ta, c.tb, c.m, c.n, c.k);
        c.ws = xalloc(c.ws_size);
        sprintf(shape, "%lux%lux%lu:N%c", (unsigned long)c.m, (unsigned long)c.n,
                (unsigned long)c.k, c.tb == ATTN_TRANS ? 'T' : 'N');
        bench_shape(op, shape, 2.0 * (double)c.m * (double)c.n * (double)c.k, &c, c.c,
                    c.m * c.n);
        free(a);
        free(b);
        free(c.c);
        free(c.ws);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Attention: BHLD layout, kv_heads = heads, Lq = Lk = L, scale 1/sqrt(d). */

struct attcase {
    attn_attention_params p;
    void *ws;
    size_t ws_size;
    float *scores; /* L x L, for the naive version */
};

/* Materializes each head's score matrix S = scale Q K^T (only the unmasked part when
 * causal), a 3-pass softmax over each row, then O = P V. */
static NAIVE_FN void naive_attention(void *ctx, void *data)
{
    const struct attcase *c = (const struct attcase *)data;
    const attn_attention_params *p = &c->p;
    size_t L = p->q_len, d = p->head_dim, b, h, i, j, t;
    float scale = 1.0f / sqrtf((float)d);
    int causal = p->causal != ATTN_CAUSAL_NONE;
    (void)ctx;
    for (b = 0; b < p->batch; b++)
        for (h = 0; h < p->heads; h++) {
            const float *q = p->q + b * p->q_sb + h * p->q_sh;
            const float *k = p->k + b * p->k_sb + h * p->k_sh;
            const float *v = p->v + b * p->v_sb + h * p->v_sh;
            float *o = p->o + b * p->o_sb + h * p->o_sh;
            for (i = 0; i < L; i++) {
                size_t nk = causal ? i + 1 : L;
                float *s = c->scores + i * L, mx = -INFINITY, sum = 0.0f, inv;
                for (j = 0; j < nk; j++) {
                    float acc = 0.0f;
                    NOVEC for (t = 0; t < d; t++) acc += q[i * p->q_sl + t] * k[j * p->k_sl + t];
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
                    NOVEC for (t = 0; t < d; t++) o[i * p->o_sl + t] += s[j] * v[j * p->v_sl + t];
            }
        }
}

static void attn_attention_run(void *ctx, void *data)
{
    const struct attcase *c = (const struct attcase *)data;
    (void)ctx;
    check(attn_attention(&c->p, c->ws, c->ws_size), "attn_attention");
}

static const struct impl attention_impls[] = {
    {"naive", naive_attention, NULL},
    {"attn", attn_attention_run, NULL},
};

static void bench_attention(struct op *op)
{
    static const size_t lens[] = {128, 512};
    const size_t batch = 1, heads = 8, d = 64;
    size_t li;
    int causal;
    for (li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (causal = 0; causal <= 1; causal++) {
            size_t L = lens[li], count = batch * heads * L * d;
            struct attcase c;
            char shape[64];
            float *q = falloc(count), *k = falloc(count), *v = falloc(count);
            float *o = falloc(count);
            double flop = 4.0 * (double)L * (double)L * (double)d * (double)(batch * heads);
            fill_uniform(q, count, -1.0f, 1.0f);
            fill_uniform(k, count, -1.0f, 1.0f);
            fill_uniform(v, count, -1.0f, 1.0f);
            memset(o, 0, count * sizeof(float));
            c.p = attn_attention_init(batch, heads, heads, L, L, d, d, q, k, v, o,
                                      ATTN_LAYOUT_BHLD);
            if (causal) {
                c.p.causal = ATTN_CAUSAL_OFFSET;
                c.p.causal_offset = 0;
                flop *= 0.5;
            }
            c.ws_size = attn_attention_workspace_size(&c.p);
            if (c.ws_size == 0)
                die("attn_attention_workspace_size", "returned 0 for valid parameters");
            c.ws = xalloc(c.ws_size);
            c.scores = falloc(L * L);
            sprintf(shape, "%lux%lux%lux%lu:%s", (unsigned long)batch, (unsigned long)heads,
                    (unsigned long)L, (unsigned long)d, causal ? "causal" : "full");
            bench_shape(op, shape, flop, &c, o, count);
            free(q);
            free(k);
            free(v);
            free(o);
            free(c.ws);
            free(c.scores);
        }
}

/* ------------------------------------------------------------------------------------ */
/* Driver. */

#define NIMPL(t) (sizeof(t) / sizeof((t)[0]))

static struct op g_ops[] = {
    {"softmax", "elem/ns",
     "value = rows*n elements per ns (GB/s of input = 4 x value); ratio = attn_softmax "
     "/ naive 3-pass softmax with libm expf",
     softmax_impls, NIMPL(softmax_impls), bench_rowop, 0.0, NULL, ""},
    {"layernorm", "elem/ns",
     "value = elements per ns (GB/s of input = 4 x value), gamma and beta given; ratio = "
     "attn_layernorm / naive two-pass (mean, variance) loop",
     layernorm_impls, NIMPL(layernorm_impls), bench_rowop, 0.0, NULL, ""},
    {"rmsnorm", "elem/ns",
     "value = elements per ns (GB/s of input = 4 x value), gamma given; ratio = "
     "attn_rmsnorm / naive sum-of-squares loop",
     rmsnorm_impls, NIMPL(rmsnorm_impls), bench_rowop, 0.0, NULL, ""},
    {"matmul", "GFLOP/s",
     "shape m x n x k : op(A) op(B), NT = B transposed; value = 2mnk / time; ratio = "
     "attn_matmul (with workspace) / naive i-j-k triple loop",
     matmul_impls, NIMPL(matmul_impls), bench_matmul, 0.0, NULL, ""},
    {"attention", "GFLOP/s",
     "shape batch x heads x L x d, Lq = Lk = L; value = 4*L*L*d per head (half when "
     "causal) / time; ratio = attn_attention / naive attention with the full score matrix",
     attention_impls, NIMPL(attention_impls), bench_attention, 0.0, NULL, ""},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: attn_bench [--quick] [--csv] [--op NAME] [--help]\n"
            "  --quick     3 samples of ~2 ms each (CI smoke run) instead of 9 of ~10 ms\n"
            "  --csv       rows as CSV on stdout (header op,shape,impl,metric,value,ratio);\n"
            "              the machine header and the notes go to stderr\n"
            "  --op NAME   only softmax, layernorm, rmsnorm, matmul or attention\n"
            "  --help      this text\n"
            "Single-threaded. Each op is timed for the library (impl attn) and a naive\n"
            "scalar loop (impl naive, ratio 1.00); ratio = value / naive value, higher is\n"
            "faster. The table's spread is (max - min) / median of the samples.\n");
}

static void cpu_name(char *buf, size_t size)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(buf, size, "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':'), *e;
            if (!p)
                continue;
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            e = p + strlen(p);
            while (e > p && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\r'))
                *--e = '\0';
            if (*p)
                snprintf(buf, size, "%s", p);
            break;
        }
    }
    fclose(f);
}

static const char *compiler_name(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#elif defined(__VERSION__)
    return __VERSION__;
#else
    return "unknown";
#endif
}

int main(int argc, char **argv)
{
    char cpu[256], cc[256];
    size_t i;
    int a;

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--csv") == 0)
            g_opt.csv = 1;
        else if (strcmp(argv[a], "--quick") == 0)
            g_opt.quick = 1;
        else if (strcmp(argv[a], "--op") == 0 && a + 1 < argc)
            g_opt.only = argv[++a];
        else if (strncmp(argv[a], "--op=", 5) == 0)
            g_opt.only = argv[a] + 5;
        else if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "attn_bench: unknown or incomplete option '%s'\n", argv[a]);
            usage(stderr);
            return 2;
        }
    }
    if (g_opt.only) {
        for (i = 0; i < NIMPL(g_ops); i++)
            if (strcmp(g_opt.only, g_ops[i].name) == 0)
                break;
        if (i == NIMPL(g_ops)) {
            fprintf(stderr, "attn_bench: unknown op '%s'\n", g_opt.only);
            usage(stderr);
            return 2;
        }
    }
    g_opt.samples = g_opt.quick ? 3 : 9;
    g_opt.sample_ns = g_opt.quick ? 2e6 : 10e6;
    g_opt.warmup_ns = g_opt.quick ? 2e6 : 10e6;
    g_info = g_opt.csv ? stderr : stdout;

    cpu_name(cpu, sizeof cpu);
    fprintf(g_info, "attn.h %d.%d.%d benchmark\n", ATTN_VERSION_MAJOR, ATTN_VERSION_MINOR,
            ATTN_VERSION_PATCH);
    fprintf(g_info, "cpu:      %s\n", cpu);
    fprintf(g_info, "isa:      %s\n", attn_isa());
    fprintf(g_info, "exp:      %s\n", attn_exp_impl());
    snprintf(cc, sizeof cc, "%s", compiler_name());
    for (i = strlen(cc); i > 0 && cc[i - 1] == ' '; i--)
        cc[i - 1] = '\0';
    fprintf(g_info, "compiler: %s\n", cc);
    fprintf(g_info, "timing:   1 thread, CLOCK_MONOTONIC, median of %d samples of ~%.0f ms%s;\n"
                    "          spread = (max - min) / median of the samples\n",
            g_opt.samples, g_opt.sample_ns / 1e6, g_opt.quick ? " (--quick)" : "");
    fprintf(g_info, "\n");
    fflush(g_info);

    if (g_opt.csv)
        printf("op,shape,impl,metric,value,ratio\n");
    else
        printf("%-10s %-20s %-8s %-8s %10s %8s %7s\n", "op", "shape", "impl", "metric",
               "value", "spread", "ratio");

    for (i = 0; i < NIMPL(g_ops); i++)
        if (!g_opt.only || strcmp(g_opt.only, g_ops[i].name) == 0)
            g_ops[i].bench(&g_ops[i]);

    fflush(stdout);
    fprintf(g_info, "\n");
    for (i = 0; i < NIMPL(g_ops); i++) {
        const struct op *op = &g_ops[i];
        if (g_opt.only && strcmp(g_opt.only, op->name) != 0)
            continue;
        fprintf(g_info, "%-10s %s.", op->name, op->note);
        if (op->max_diff_impl)
            fprintf(g_info, " Largest max|impl-naive|/max|naive|: %.1e (%s, %s).",
                    op->max_diff, op->max_diff_impl, op->max_diff_shape);
        if (op->max_diff_impl && !(op->max_diff <= 1e-4))
            fprintf(g_info, " WARNING: above 1e-4, check the implementation.");
        fprintf(g_info, "\n");
    }
    return 0;
}
