/* attn_bench - benchmark of the attn.h kernels against naive loops, peer libraries and the
 * machine's own limits, all measured in the same run.
 *
 *   meson compile -C build && ./build/bench/attn_bench [--quick] [--csv] [--op NAME]
 *
 * For every op and shape, each implementation in that op's table is timed. Entry 0 of a
 * table is the baseline of the ratio column (the naive scalar loop, or for matmul-2t the
 * library on one thread); the ratio of any other row is its value over the baseline's
 * for the same shape (higher = faster), "-" where the baseline was not run. An entry is
 * { name, run, ... }: `run(ctx, data)` performs one call on the shape described by `data`
 * (struct rowcase / mmcase / attcase) and writes the same output buffer.
 *
 * Peers (OpenBLAS cblas_sgemm, oneDNN softmax and layer normalization) are found by meson
 * when installed (HAVE_OPENBLAS, HAVE_DNNL). Their ISA and thread count are set through
 * environment variables read when the library initializes, so each peer setting runs in a
 * child process: the benchmark re-executes itself (/proc/self/exe) with that environment
 * and the hidden option --peer-child NAME, and reads the child's CSV rows from a pipe.
 * Peers marked so run in several processes; the table then shows the median process.
 * Settings (g_peers): openblas-avx2 (OPENBLAS_CORETYPE=Haswell) and openblas, 1 thread, for
 * matmul and (unrestricted) the unfused attention; the same on 2 threads for matmul-2t;
 * onednn-avx2 (DNNL_MAX_CPU_ISA=AVX2, ONEDNN_MAX_CPU_ISA=AVX2) and onednn (3 processes),
 * OMP_NUM_THREADS=1 (Debian's oneDNN uses OpenMP), for softmax and layernorm.
 *
 * Machine limits (FMA peak, read and copy bandwidth, throughput of the library's own
 * vector exp) are measured at start; the "ratios" table after the main one gives the
 * library's value over each peer's and its share of the binding limit.
 *
 * Timing: CLOCK_MONOTONIC. A warm-up (at least one call, ~warm-up time) also estimates the
 * time per call; a sample is then `reps` back-to-back calls (~10 ms, 2 ms with --quick),
 * and the row reports the median over the samples (9, 3 with --quick; fewer, but at least
 * 3, when one call is long) and the spread (max - min) / median. After timing, each
 * implementation's output is compared with the reference (the first implementation run
 * for that shape; for peers, the op's child_ref entry, run once in the child); the largest
 * difference is reported in the notes. Calls predicted over 20 s (attention at L = 8192,
 * full run only) are skipped.
 *
 * The naive loops are compiled into this binary with the build's flags (-O3 for meson's
 * release buildtype) but with auto-vectorization disabled (GCC: optimize attribute, clang:
 * loop pragmas), so they stay plain scalar loops; libm expf / sqrtf are called per element.
 */
#if defined(HAVE_OPENBLAS) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* OpenBLAS's cblas.h declares functions taking a cpu_set_t */
#endif
#define _POSIX_C_SOURCE 200112L
#define ATTN_IMPLEMENTATION
#include "attn.h"
#ifdef HAVE_EXP_ALT
#include "exp_alt.h"
#endif

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#if DNNL_VERSION_MAJOR == 2
#define BENCH_DNNL 1 /* the oneDNN 2.x C API (operation descriptors) */
#endif
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define BENCH_X86 1 /* FMA peaks and read bandwidth with target attributes */
#include <immintrin.h>
#endif

extern char **environ;

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

struct peer;

static struct {
    int csv;
    int quick;
    const char *only; /* NULL = every op */
    int samples;
    double sample_ns; /* target duration of one sample */
    double warmup_ns; /* minimum warm-up duration */
    double budget_ns; /* fewer samples (>= 3) when samples * time per call exceed this */
    const struct peer *child; /* set in a --peer-child process */
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

/* Grow-only buffers kept for the whole run: large allocations come from mmap and every
 * fresh one costs page faults (~0.25 s per 256 MiB here). */
enum { BUF_REF, BUF_ROW_X, BUF_ROW_Y, BUF_COUNT };
static float *g_buf[BUF_COUNT];
static size_t g_buf_count[BUF_COUNT];

static float *scratch(int which, size_t count)
{
    if (count > g_buf_count[which]) {
        free(g_buf[which]);
        g_buf[which] = falloc(count);
        memset(g_buf[which], 0, count * sizeof(float));
        g_buf_count[which] = count;
    }
    return g_buf[which];
}

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

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Copies src, truncated to size - 1 characters. */
static void copy_str(char *dst, size_t size, const char *src)
{
    size_t i;
    for (i = 0; i + 1 < size && src[i]; i++)
        dst[i] = src[i];
    dst[i] = '\0';
}

/* "12.0 MiB" */
static const char *fmt_bytes(double bytes, char *buf, size_t size)
{
    if (bytes >= 1024.0 * 1024.0)
        snprintf(buf, size, "%.1f MiB", bytes / (1024.0 * 1024.0));
    else if (bytes >= 1024.0)
        snprintf(buf, size, "%.1f KiB", bytes / 1024.0);
    else
        snprintf(buf, size, "%.0f B", bytes);
    return buf;
}

/* ------------------------------------------------------------------------------------ */
/* The generic part: an implementation, an op, timing one (impl, shape), the rows. */

typedef void (*impl_fn)(void *ctx, void *data);

struct impl {
    const char *name; /* row label; for a peer, appended to the peer's name ("" = none) */
    impl_fn run;      /* one call on the shape `data` */
    void *ctx;        /* implementation-specific state; NULL for ours */
    const char *group; /* NULL: in this process; else a peer library ("openblas", "onednn"),
                          run only in that peer's child processes */
    void (*prepare)(void *ctx, void *data); /* optional, before timing a shape */
    void (*release)(void *ctx);              /* optional, after */
    double (*extra)(const void *data); /* optional: bytes of workspace / buffers it needs */
    int threads;                       /* 0 = 1 */
};

struct op {
    const char *name;
    const char *metric; /* unit of the value column */
    const char *note;   /* what the value and the ratio mean */
    const struct impl *impls; /* impls[0] is the baseline of the ratio column */
    size_t nimpl;
    void (*bench)(struct op *op); /* times every shape of the op */
    const char *primary;          /* the ratios table compares this impl with the others */
    size_t child_ref; /* the in-process impl a peer child compares its output with */
    double max_diff;  /* largest normalized difference from the reference seen so far */
    char max_diff_impl[48], max_diff_shape[48], max_diff_ref[48];
    double peer_max_diff; /* the same for peers (vs child_ref, in the child) */
    char peer_max_diff_impl[48], peer_max_diff_shape[48];
    int ran;
};

/* A peer setting: one library, environment and thread count, in its own process. */
struct peer {
    const char *name;  /* row label, and the argument of --peer-child */
    const char *group; /* matches struct impl.group */
    const char *ops;   /* the ops it runs, each surrounded by spaces */
    const char *env[3]; /* NAME=value added to the child's environment */
    int threads;
    int procs; /* child processes; the median is reported */
};

static const char *const g_peer_env_vars[] = {
    "OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS",
    "OPENBLAS_VERBOSE", "DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA", "DNNL_VERBOSE",
    "ONEDNN_VERBOSE", "DNNL_CPU_ISA_HINTS", "ONEDNN_CPU_ISA_HINTS"};

static const struct peer g_peers[] = {
    {"openblas-avx2", "openblas", " matmul attention decode ", {"OPENBLAS_CORETYPE=Haswell", NULL, NULL}, 1, 1},
    {"openblas", "openblas", " matmul attention decode ", {NULL, NULL, NULL}, 1, 1},
    {"openblas-avx2-2t", "openblas", " matmul-2t ", {"OPENBLAS_CORETYPE=Haswell", NULL, NULL}, 2,
     1},
    {"openblas-2t", "openblas", " matmul-2t ", {NULL, NULL, NULL}, 2, 1},
    {"onednn-avx2", "onednn", " softmax layernorm ",
     {"DNNL_MAX_CPU_ISA=AVX2", "ONEDNN_MAX_CPU_ISA=AVX2", NULL}, 1, 1},
    {"onednn", "onednn", " softmax layernorm ", {NULL, NULL, NULL}, 1, 3},
};
#define NPEERS (sizeof g_peers / sizeof g_peers[0])

static int group_compiled(const char *group)
{
#ifdef HAVE_OPENBLAS
    if (strcmp(group, "openblas") == 0)
        return 1;
#endif
#ifdef BENCH_DNNL
    if (strcmp(group, "onednn") == 0)
        return 1;
#endif
    (void)group;
    return 0;
}

static int peer_serves(const struct peer *p, const char *opname)
{
    char key[40];
    snprintf(key, sizeof key, " %s ", opname);
    return strstr(p->ops, key) != NULL;
}

/* The machine's limits, measured at start (0 = not measured). */
static struct {
    double fma, fma_best;       /* GFLOP/s, AVX2 FMA (or the vector layer's) */
    double fma512, fma512_best; /* GFLOP/s, AVX-512 FMA */
    double read_mem, read_l2;   /* GB/s */
    double copy_mem, copy_cache; /* GB/s, read + written bytes */
    double exp_l1;               /* elements/ns */
    double exp_alt_l1;           /* elements/ns, the other exp (bench/exp_alt.c), 0 if none */
    const char *fma_what;
} g_lim;

/* The limit a shape's value is compared with: share = value * factor / limit. */
struct limit {
    const char *name; /* in share_of_<name> */
    double value;
    double factor;
};

/* Every row, for the ratios table. */
struct result {
    char op[16], shape[48], impl[48];
    double value, share;
    const char *limit;
};
static struct result *g_res;
static size_t g_nres, g_cres;

static void add_result(const char *op, const char *shape, const char *impl, double value,
                       double share, const char *limit)
{
    struct result *r;
    if (g_nres == g_cres) {
        g_cres = g_cres ? 2 * g_cres : 256;
        g_res = (struct result *)realloc(g_res, g_cres * sizeof *g_res);
        if (!g_res)
            die("realloc", "out of memory");
    }
    r = &g_res[g_nres++];
    copy_str(r->op, sizeof r->op, op);
    copy_str(r->shape, sizeof r->shape, shape);
    copy_str(r->impl, sizeof r->impl, impl);
    r->value = value;
    r->share = share;
    r->limit = limit;
}

/* Rows a peer child reported for the current op, aggregated over its processes. */
struct prow {
    char shape[48], impl[48];
    double value, spread, diff, extra;
    int nproc;
    const struct peer *peer;
};
static struct prow g_prows[512];
static size_t g_nprows;

/* Notes gathered from children and from the run. */
static char g_notes[64][200];
static size_t g_nnotes;

static void add_note(const char *text)
{
    size_t i;
    for (i = 0; i < g_nnotes; i++)
        if (strcmp(g_notes[i], text) == 0)
            return;
    if (g_nnotes < sizeof g_notes / sizeof g_notes[0])
        copy_str(g_notes[g_nnotes++], sizeof g_notes[0], text);
}

/* Notes of this process's measurements, printed after the ops' notes. */
static char g_rnotes[32][160];
static size_t g_nrnotes;

static void add_run_note(const char *text)
{
    if (g_nrnotes < sizeof g_rnotes / sizeof g_rnotes[0])
        copy_str(g_rnotes[g_nrnotes++], sizeof g_rnotes[0], text);
}

/* Skipping long shapes: with g_predict.factor > 0, an implementation whose time per call
 * on this shape, predicted as factor x its time on the previous shape of the same variant,
 * exceeds g_predict.max_ns is skipped (L = 8192 attention from the L = 2048 times). */
static struct {
    double factor, max_ns;
    int variant; /* 0..3 */
    const char *what;
} g_predict;
static double g_call_ns[16][4]; /* [impl index][variant]: last time per call */

/* 1 = skip impls[i] on this shape (and says so). */
static int predict_skip(const struct op *op, size_t i, const char *label, const char *shape)
{
    double pred;
    char msg[200];
    if (g_predict.factor <= 0.0 || i >= 16)
        return 0;
    pred = g_call_ns[i][g_predict.variant] * g_predict.factor;
    if (pred > 0.0 && pred <= g_predict.max_ns)
        return 0;
    snprintf(msg, sizeof msg, "%s %s: %s skipped, predicted %.0f s per call (%s)", op->name,
             shape, label, pred / 1e9, g_predict.what);
    if (g_opt.child)
        printf("#info,%s\n", msg);
    else
        add_note(msg);
    return 1;
}

/* Median time per call in ns; *spread = (max - min) / median of the samples; *best = the
 * fastest sample (time per call). */
static double time_impl(const struct impl *im, void *data, double *spread, double *best)
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
    if ((double)ns * (double)reps * per_call > g_opt.budget_ns) {
        int fit = (int)(g_opt.budget_ns / ((double)reps * per_call));
        if (fit < ns)
            ns = fit < 3 ? 3 : fit % 2 ? fit : fit - 1;
    }

    s = 0;
    /* a long call (over 1 s, 0.1 s with --quick): the warm-up call is also a sample */
    if (calls == 1 && per_call > (g_opt.quick ? 1e8 : 1e9))
        samples[s++] = per_call;
    for (; s < ns; s++) {
        long r;
        t0 = now_ns();
        for (r = 0; r < reps; r++)
            im->run(im->ctx, data);
        samples[s] = (now_ns() - t0) / (double)reps;
    }
    t = median(samples, ns);
    *spread = (samples[ns - 1] - samples[0]) / t;
    if (best)
        *best = samples[0];
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

static void print_header_row(void)
{
    if (g_opt.csv)
        printf("op,shape,impl,metric,value,ratio\n");
    else
        printf("%-10s %-18s %-20s %-8s %9s %7s %6s  %s\n", "op", "shape", "impl", "metric",
               "value", "spread", "ratio", "note");
}

/* One row. ratio NaN = no baseline ("-", empty in CSV). */
static void print_row(const struct op *op, const char *shape, const char *impl, double value,
                      double spread, double ratio, const char *note)
{
    if (g_opt.csv) {
        printf("%s,%s,%s,%s,%.6g,", op->name, shape, impl, op->metric, value);
        if (!isnan(ratio))
            printf("%.4f", ratio);
        printf("\n");
    } else {
        char r[16];
        if (isnan(ratio))
            snprintf(r, sizeof r, "-");
        else
            snprintf(r, sizeof r, "%.2f", ratio);
        printf("%-10s %-18s %-20s %-8s %9.3f %6.1f%% %6s  %s\n", op->name, shape, impl,
               op->metric, value, 100.0 * spread, r, note ? note : "");
    }
    fflush(stdout);
}

static void print_csv_extra(const struct op *op, const char *shape, const char *impl,
                            const char *metric, double value)
{
    if (g_opt.csv)
        printf("%s,%s,%s,%s,%.6g,\n", op->name, shape, impl, metric, value);
}

/* In a peer child: times the peer's entries of `op` on this shape, writes CSV rows with
 * the value, the spread, the difference from the reference implementation and the
 * extra memory. */
static void child_shape(struct op *op, const char *shape, double work, void *data,
                        const float *out, size_t out_count)
{
    const struct peer *p = g_opt.child;
    float *ref = NULL;
    size_t i;
    for (i = 0; i < op->nimpl; i++) {
        const struct impl *im = &op->impls[i];
        char label[64];
        double spread, ns, diff;
        if (!im->group || strcmp(im->group, p->group) != 0)
            continue;
        snprintf(label, sizeof label, "%s%s", p->name, im->name);
        if (predict_skip(op, i, label, shape))
            continue;
        if (!ref) {
            const struct impl *r = &op->impls[op->child_ref];
            r->run(r->ctx, data);
            ref = scratch(BUF_REF, out_count);
            memcpy(ref, out, out_count * sizeof(float));
        }
        if (im->prepare)
            im->prepare(im->ctx, data);
        ns = time_impl(im, data, &spread, NULL);
        if (i < 16)
            g_call_ns[i][g_predict.variant] = ns;
        diff = normalized_diff(out, ref, out_count);
        printf("%s,%s,%s,%s,%.9g,\n", op->name, shape, label, op->metric, work / ns);
        printf("%s,%s,%s,spread,%.6g,\n", op->name, shape, label, spread);
        printf("%s,%s,%s,diff,%.6g,\n", op->name, shape, label, diff);
        if (im->extra)
            printf("%s,%s,%s,extra_bytes,%.0f,\n", op->name, shape, label, im->extra(data));
        fflush(stdout);
        if (im->release)
            im->release(im->ctx);
    }
}

/* Times every in-process implementation of `op` on one shape, then prints the peers' rows
 * for it (measured before, in child processes). `work` is the metric's numerator per call
 * (FLOP for GFLOP/s, elements for elem/ns). out / out_count: the buffer every
 * implementation writes. run_baseline = 0 skips impls[0] (too slow for this shape). */
static void bench_shape(struct op *op, const char *shape, double work, void *data,
                        const float *out, size_t out_count, int run_baseline,
                        const struct limit *lim)
{
    float *ref = NULL;
    const char *ref_name = NULL;
    double base = NAN;
    size_t i;
    if (g_opt.child) {
        child_shape(op, shape, work, data, out, out_count);
        return;
    }
    for (i = 0; i < op->nimpl; i++) {
        const struct impl *im = &op->impls[i];
        double spread, ns, value, share = NAN, diff = NAN, lv;
        int same = -1;
        char note[96] = "", mem[32];
        if (im->group || (i == 0 && !run_baseline) || predict_skip(op, i, im->name, shape))
            continue;
        if (im->prepare)
            im->prepare(im->ctx, data);
        ns = time_impl(im, data, &spread, NULL);
        if (i < 16)
            g_call_ns[i][g_predict.variant] = ns;
        value = work / ns;
        if (i == 0)
            base = value;
        if (!ref) {
            ref = scratch(BUF_REF, out_count);
            memcpy(ref, out, out_count * sizeof(float));
            ref_name = im->name;
        } else {
            diff = normalized_diff(out, ref, out_count);
            same = memcmp(out, ref, out_count * sizeof(float)) == 0;
            if (!(diff <= op->max_diff)) {
                op->max_diff = diff;
                copy_str(op->max_diff_impl, sizeof op->max_diff_impl, im->name);
                copy_str(op->max_diff_shape, sizeof op->max_diff_shape, shape);
                copy_str(op->max_diff_ref, sizeof op->max_diff_ref, ref_name);
            }
        }
        lv = lim->value * (im->threads > 1 ? im->threads : 1);
        if (lv > 0.0)
            share = value * lim->factor / lv;
        if (im->extra)
            snprintf(note, sizeof note, "mem %s", fmt_bytes(im->extra(data), mem, sizeof mem));
        if (im->threads > 1 && same >= 0)
            snprintf(note + strlen(note), sizeof note - strlen(note),
                     "%sbit-identical to %s (1 thread): %s", note[0] ? "; " : "", ref_name,
                     same ? "yes" : "NO");
        print_row(op, shape, im->name, value, spread, isnan(base) ? NAN : value / base, note);
        if (im->extra)
            print_csv_extra(op, shape, im->name, "extra_bytes", im->extra(data));
        if (im->threads > 1 && same >= 0)
            print_csv_extra(op, shape, im->name, "bit_identical", same);
        add_result(op->name, shape, im->name, value, share,
                   im->threads > 1 && strcmp(lim->name, "fma_peak") == 0 ? "fma_peak_x2"
                                                                         : lim->name);
        if (im->release)
            im->release(im->ctx);
    }
    for (i = 0; i < g_nprows; i++) {
        const struct prow *r = &g_prows[i];
        double share = NAN, lv = lim->value * (r->peer->threads > 1 ? r->peer->threads : 1);
        char note[96] = "", mem[32];
        if (strcmp(r->shape, shape) != 0)
            continue;
        if (lv > 0.0)
            share = r->value * lim->factor / lv;
        if (r->extra >= 0.0)
            snprintf(note, sizeof note, "mem %s (+ library buffers)",
                     fmt_bytes(r->extra, mem, sizeof mem));
        if (r->nproc > 1)
            snprintf(note + strlen(note), sizeof note - strlen(note),
                     "%smedian of %d processes", note[0] ? "; " : "", r->nproc);
        print_row(op, shape, r->impl, r->value, r->spread, isnan(base) ? NAN : r->value / base,
                  note);
        if (r->extra >= 0.0)
            print_csv_extra(op, shape, r->impl, "extra_bytes", r->extra);
        add_result(op->name, shape, r->impl, r->value, share,
                   r->peer->threads > 1 && strcmp(lim->name, "fma_peak") == 0 ? "fma_peak_x2"
                                                                              : lim->name);
        if (!(r->diff <= op->peer_max_diff)) {
            op->peer_max_diff = r->diff;
            copy_str(op->peer_max_diff_impl, sizeof op->peer_max_diff_impl, r->impl);
            copy_str(op->peer_max_diff_shape, sizeof op->peer_max_diff_shape, shape);
        }
    }
}

/* ------------------------------------------------------------------------------------ */
/* Peer child processes. */

struct raw {
    int proc;
    char shape[48], impl[48], metric[24];
    double value;
};

static const char *self_exe(void)
{
    static const char *argv0 = "attn_bench";
    return access("/proc/self/exe", X_OK) == 0 ? "/proc/self/exe" : argv0;
}

/* Runs one child for peer p and op `opname`; appends its rows to raw (proc index proc).
 * Returns the exit status (0 = fine). */
static int run_child(const struct peer *p, const char *opname, int proc, struct raw **raw,
                     size_t *nraw, size_t *craw)
{
    char **envp, *argv[8], line[1024], threads_a[48], threads_b[48], threads_c[48];
    size_t nenv = 0, e, k, j;
    int fd[2], status = 0, argc = 0;
    pid_t pid;
    FILE *f;

    for (e = 0; environ[e]; e++)
        ;
    envp = (char **)malloc((e + 8) * sizeof *envp);
    if (!envp)
        die("malloc", "out of memory");
    for (e = 0; environ[e]; e++) {
        int drop = 0;
        for (k = 0; k < sizeof g_peer_env_vars / sizeof g_peer_env_vars[0]; k++) {
            size_t len = strlen(g_peer_env_vars[k]);
            if (strncmp(environ[e], g_peer_env_vars[k], len) == 0 && environ[e][len] == '=')
                drop = 1;
        }
        if (!drop)
            envp[nenv++] = environ[e];
    }
    for (k = 0; k < 3; k++)
        if (p->env[k])
            envp[nenv++] = (char *)p->env[k];
    snprintf(threads_a, sizeof threads_a, "OMP_NUM_THREADS=%d", p->threads);
    snprintf(threads_b, sizeof threads_b, "OPENBLAS_NUM_THREADS=%d", p->threads);
    snprintf(threads_c, sizeof threads_c, "GOTO_NUM_THREADS=%d", p->threads);
    envp[nenv++] = threads_a;
    envp[nenv++] = threads_b;
    envp[nenv++] = threads_c;
    envp[nenv] = NULL;

    argv[argc++] = (char *)"attn_bench";
    argv[argc++] = (char *)"--peer-child";
    argv[argc++] = (char *)p->name;
    argv[argc++] = (char *)"--op";
    argv[argc++] = (char *)opname;
    if (g_opt.quick)
        argv[argc++] = (char *)"--quick";
    argv[argc] = NULL;

    if (pipe(fd) != 0)
        die("pipe", "failed");
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0)
        die("fork", "failed");
    if (pid == 0) { /* only async-signal-safe calls until execve */
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execve(self_exe(), argv, envp);
        _exit(127);
    }
    close(fd[1]);
    free(envp);
    f = fdopen(fd[0], "r");
    if (!f)
        die("fdopen", "failed");
    while (fgets(line, sizeof line, f)) {
        char *field[6], *s = line;
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (strncmp(line, "#info,", 6) == 0) {
            add_note(line + 6);
            continue;
        }
        for (j = 0; j < 6; j++) {
            field[j] = s;
            s = j < 5 ? strchr(s, ',') : NULL;
            if (j < 5) {
                if (!s)
                    break;
                *s++ = '\0';
            }
        }
        if (j < 6 || strcmp(field[0], "op") == 0 || strcmp(field[0], opname) != 0)
            continue;
        if (*nraw == *craw) {
            *craw = *craw ? 2 * *craw : 256;
            *raw = (struct raw *)realloc(*raw, *craw * sizeof **raw);
            if (!*raw)
                die("realloc", "out of memory");
        }
        (*raw)[*nraw].proc = proc;
        copy_str((*raw)[*nraw].shape, sizeof (*raw)[0].shape, field[1]);
        copy_str((*raw)[*nraw].impl, sizeof (*raw)[0].impl, field[2]);
        copy_str((*raw)[*nraw].metric, sizeof (*raw)[0].metric, field[3]);
        (*raw)[*nraw].value = strtod(field[4], NULL);
        (*nraw)++;
    }
    fclose(f);
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* Runs every peer child for `op` and keeps the aggregated rows in g_prows. */
static void run_peers(const struct op *op)
{
    size_t pi, i, j;
    g_nprows = 0;
    for (pi = 0; pi < NPEERS; pi++) {
        const struct peer *p = &g_peers[pi];
        struct raw *raw = NULL;
        size_t nraw = 0, craw = 0;
        int proc;
        if (!group_compiled(p->group) || !peer_serves(p, op->name))
            continue;
        for (proc = 0; proc < p->procs; proc++) {
            int st = run_child(p, op->name, proc, &raw, &nraw, &craw);
            if (st != 0) {
                char msg[200];
                snprintf(msg, sizeof msg, "WARNING: peer child %s --op %s exited with status %d",
                         p->name, op->name, st);
                add_note(msg);
            }
        }
        /* Aggregate: one row per (shape, impl) with the op's metric. */
        for (i = 0; i < nraw; i++) {
            struct prow *r;
            double vals[16];
            int nv = 0, seen = 0;
            if (strcmp(raw[i].metric, op->metric) != 0)
                continue;
            for (j = 0; j < g_nprows; j++)
                if (strcmp(g_prows[j].shape, raw[i].shape) == 0 &&
                    strcmp(g_prows[j].impl, raw[i].impl) == 0)
                    seen = 1;
            if (seen)
                continue;
            if (g_nprows == sizeof g_prows / sizeof g_prows[0])
                break;
            r = &g_prows[g_nprows++];
            copy_str(r->shape, sizeof r->shape, raw[i].shape);
            copy_str(r->impl, sizeof r->impl, raw[i].impl);
            r->peer = p;
            r->spread = 0.0;
            r->diff = 0.0;
            r->extra = -1.0;
            for (j = 0; j < nraw; j++) {
                if (strcmp(raw[j].shape, r->shape) != 0 || strcmp(raw[j].impl, r->impl) != 0)
                    continue;
                if (strcmp(raw[j].metric, op->metric) == 0 && nv < 16)
                    vals[nv++] = raw[j].value;
                else if (strcmp(raw[j].metric, "spread") == 0 && p->procs == 1)
                    r->spread = raw[j].value;
                else if (strcmp(raw[j].metric, "diff") == 0 && !(raw[j].value <= r->diff))
                    r->diff = raw[j].value;
                else if (strcmp(raw[j].metric, "extra_bytes") == 0)
                    r->extra = raw[j].value;
            }
            r->nproc = nv;
            r->value = median(vals, nv);
            if (nv > 1) /* across processes: (max - min) / median of the process medians */
                r->spread = (vals[nv - 1] - vals[0]) / r->value;
        }
        free(raw);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Machine limits. */

static volatile float g_sink; /* keeps results of the limit kernels alive */

struct limcase {
    long iters; /* FMA kernels: loop trips */
    float seed[12]; /* FMA kernels: the chains' starting values */
    const float *x;
    float *y;
    size_t n; /* floats */
    int passes;
};

#ifdef BENCH_X86
/* 12 independent FMA chains of 8 lanes: 12 * 8 * 2 FLOP per trip. */
__attribute__((target("avx2,fma"))) static void fma_avx2_run(void *ctx, void *data)
{
    const struct limcase *c = (const struct limcase *)data;
    const __m256 b = _mm256_set1_ps(0.9999999f), d = _mm256_set1_ps(1e-7f);
    /* distinct starting values (from memory), or the compiler merges the chains */
    __m256 a0 = _mm256_set1_ps(c->seed[0]), a1 = _mm256_set1_ps(c->seed[1]);
    __m256 a2 = _mm256_set1_ps(c->seed[2]), a3 = _mm256_set1_ps(c->seed[3]);
    __m256 a4 = _mm256_set1_ps(c->seed[4]), a5 = _mm256_set1_ps(c->seed[5]);
    __m256 a6 = _mm256_set1_ps(c->seed[6]), a7 = _mm256_set1_ps(c->seed[7]);
    __m256 a8 = _mm256_set1_ps(c->seed[8]), a9 = _mm256_set1_ps(c->seed[9]);
    __m256 a10 = _mm256_set1_ps(c->seed[10]), a11 = _mm256_set1_ps(c->seed[11]);
    float t[8];
    long i;
    (void)ctx;
    for (i = 0; i < c->iters; i++) {
        a0 = _mm256_fmadd_ps(a0, b, d);
        a1 = _mm256_fmadd_ps(a1, b, d);
        a2 = _mm256_fmadd_ps(a2, b, d);
        a3 = _mm256_fmadd_ps(a3, b, d);
        a4 = _mm256_fmadd_ps(a4, b, d);
        a5 = _mm256_fmadd_ps(a5, b, d);
        a6 = _mm256_fmadd_ps(a6, b, d);
        a7 = _mm256_fmadd_ps(a7, b, d);
        a8 = _mm256_fmadd_ps(a8, b, d);
        a9 = _mm256_fmadd_ps(a9, b, d);
        a10 = _mm256_fmadd_ps(a10, b, d);
        a11 = _mm256_fmadd_ps(a11, b, d);
    }
    a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                       _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    a0 = _mm256_add_ps(a0, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    _mm256_storeu_ps(t, a0);
    g_sink = t[0] + t[7];
}

/* The same with 16 lanes: 12 * 16 * 2 FLOP per trip. */
__attribute__((target("avx512f"))) static void fma_avx512_run(void *ctx, void *data)
{
    const struct limcase *c = (const struct limcase *)data;
    const __m512 b = _mm512_set1_ps(0.9999999f), d = _mm512_set1_ps(1e-7f);
    /* distinct starting values (from memory), or the compiler merges the chains */
    __m512 a0 = _mm512_set1_ps(c->seed[0]), a1 = _mm512_set1_ps(c->seed[1]);
    __m512 a2 = _mm512_set1_ps(c->seed[2]), a3 = _mm512_set1_ps(c->seed[3]);
    __m512 a4 = _mm512_set1_ps(c->seed[4]), a5 = _mm512_set1_ps(c->seed[5]);
    __m512 a6 = _mm512_set1_ps(c->seed[6]), a7 = _mm512_set1_ps(c->seed[7]);
    __m512 a8 = _mm512_set1_ps(c->seed[8]), a9 = _mm512_set1_ps(c->seed[9]);
    __m512 a10 = _mm512_set1_ps(c->seed[10]), a11 = _mm512_set1_ps(c->seed[11]);
    float t[16];
    long i;
    (void)ctx;
    for (i = 0; i < c->iters; i++) {
        a0 = _mm512_fmadd_ps(a0, b, d);
        a1 = _mm512_fmadd_ps(a1, b, d);
        a2 = _mm512_fmadd_ps(a2, b, d);
        a3 = _mm512_fmadd_ps(a3, b, d);
        a4 = _mm512_fmadd_ps(a4, b, d);
        a5 = _mm512_fmadd_ps(a5, b, d);
        a6 = _mm512_fmadd_ps(a6, b, d);
        a7 = _mm512_fmadd_ps(a7, b, d);
        a8 = _mm512_fmadd_ps(a8, b, d);
        a9 = _mm512_fmadd_ps(a9, b, d);
        a10 = _mm512_fmadd_ps(a10, b, d);
        a11 = _mm512_fmadd_ps(a11, b, d);
    }
    a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                       _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    a0 = _mm512_add_ps(a0, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    _mm512_storeu_ps(t, a0);
    g_sink = t[0] + t[15];
}

/* Sum of n floats (n a multiple of 64), 8 independent ymm accumulators. */
__attribute__((target("avx2"))) static void read_avx2_run(void *ctx, void *data)
{
    const struct limcase *c = (const struct limcase *)data;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0;
    __m256 s7 = s0;
    float t[8];
    int pass;
    size_t i;
    (void)ctx;
    for (pass = 0; pass < c->passes; pass++)
        for (i = 0; i < c->n; i += 64) {
            s0 = _mm256_add_ps(s0, _mm256_load_ps(c->x + i));
            s1 = _mm256_add_ps(s1, _mm256_load_ps(c->x + i + 8));
            s2 = _mm256_add_ps(s2, _mm256_load_ps(c->x + i + 16));
            s3 = _mm256_add_ps(s3, _mm256_load_ps(c->x + i + 24));
            s4 = _mm256_add_ps(s4, _mm256_load_ps(c->x + i + 32));
            s5 = _mm256_add_ps(s5, _mm256_load_ps(c->x + i + 40));
            s6 = _mm256_add_ps(s6, _mm256_load_ps(c->x + i + 48));
            s7 = _mm256_add_ps(s7, _mm256_load_ps(c->x + i + 56));
        }
    s0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)),
                       _mm256_add_ps(_mm256_add_ps(s4, s5), _mm256_add_ps(s6, s7)));
    _mm256_storeu_ps(t, s0);
    g_sink = t[0] + t[7];
}
#endif

/* Portable versions, through the library's vector layer (used when not x86). */
static void fma_vec_run(void *ctx, void *data)
{
    const struct limcase *c = (const struct limcase *)data;
    const attn__v b = attn__vset1(0.9999999f), d = attn__vset1(1e-7f);
    attn__v a[12];
    long i;
    int j;
    (void)ctx;
    for (j = 0; j < 12; j++)
        a[j] = attn__vset1(c->seed[j]);
    for (i = 0; i < c->iters; i++)
        for (j = 0; j < 12; j++)
            a[j] = attn__vfma(a[j], b, d);
    for (j = 1; j < 12; j++)
        a[0] = attn__vadd(a[0], a[j]);
    g_sink = attn__vhsum(a[0]);
}

static void read_vec_run(void *ctx, void *data)
{
    const struct limcase *c = (const struct limcase *)data;
    attn__v s[8];
    int pass, j;
    size_t i;
    (void)ctx;
    for (j = 0; j < 8; j++)
        s[j] = attn__vzero();
    for (pass = 0; pass < c->passes; pass++)
        for (i = 0; i < c->n; i += 8 * ATTN__VW)
            for (j = 0; j < 8; j++)
                s[j] = attn__vadd(s[j], attn__vload(c->x + i + (size_t)j * ATTN__VW));
    for (j = 1; j < 8; j++)
        s[0] = attn__vadd(s[0], s[j]);
    g_sink = attn__vhsum(s[0]);
}

static void copy_run(void *ctx, void *data)
{
    const struct limcase *c = (const struct limcase *)data;
    int pass;
    (void)ctx;
    for (pass = 0; pass < c->passes; pass++)
        memcpy(c->y, c->x, c->n * sizeof(float));
}

/* The library's own vector exp (attn__vexp, internal), n a multiple of 4 vectors. */
static void exp_run(void *ctx, void *data)
{
    const struct limcase *c = (const struct limcase *)data;
    size_t i;
    int pass;
    (void)ctx;
    for (pass = 0; pass < c->passes; pass++)
        for (i = 0; i < c->n; i += 4 * ATTN__VW) {
            attn__v e0 = attn__vexp(attn__vload(c->x + i));
            attn__v e1 = attn__vexp(attn__vload(c->x + i + ATTN__VW));
            attn__v e2 = attn__vexp(attn__vload(c->x + i + 2 * ATTN__VW));
            attn__v e3 = attn__vexp(attn__vload(c->x + i + 3 * ATTN__VW));
            attn__vstore(c->y + i, e0);
            attn__vstore(c->y + i + ATTN__VW, e1);
            attn__vstore(c->y + i + 2 * ATTN__VW, e2);
            attn__vstore(c->y + i + 3 * ATTN__VW, e3);
        }
}

#ifdef HAVE_EXP_ALT
/* The other vector exp (SLEEF's or the library's own, whichever this build does not use) */
static void exp_alt_run(void *ctx, void *data)
{
    const struct limcase *c = (const struct limcase *)data;
    (void)ctx;
    bench_exp_alt(c->x, c->y, c->n, c->passes);
}
#endif

/* Work per call / median time (per ns); *best from the fastest sample. */
static double measure(impl_fn fn, struct limcase *c, double work, double *best)
{
    struct impl im;
    double spread, b, t;
    memset(&im, 0, sizeof im);
    im.run = fn;
    t = time_impl(&im, c, &spread, &b);
    if (best)
        *best = work / b;
    return work / t;
}

static void measure_limits(void)
{
    const size_t big = ((size_t)256 << 20) / sizeof(float), l2 = ((size_t)512 << 10) / sizeof(float);
    const size_t cached = ((size_t)4 << 20) / sizeof(float), expn = 2048;
    struct limcase c;
    float *x, *y;
    impl_fn fma = fma_vec_run, rd = read_vec_run;
    double flop_per_trip = 12.0 * 2.0 * ATTN__VW;
    memset(&c, 0, sizeof c);

    g_lim.fma_what = "attn vector layer";
#ifdef BENCH_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        fma = fma_avx2_run;
        flop_per_trip = 12.0 * 2.0 * 8.0;
        g_lim.fma_what = "AVX2 FMA";
    }
    if (__builtin_cpu_supports("avx2"))
        rd = read_avx2_run;
#endif
    c.iters = g_opt.quick ? 200000 : 1000000;
    fill_uniform(c.seed, 12, 0.0f, 1.0f);
    g_lim.fma = measure(fma, &c, flop_per_trip * (double)c.iters, &g_lim.fma_best);
#ifdef BENCH_X86
    if (__builtin_cpu_supports("avx512f"))
        g_lim.fma512 = measure(fma_avx512_run, &c, 12.0 * 2.0 * 16.0 * (double)c.iters,
                               &g_lim.fma512_best);
#endif

    /* Read: 256 MiB once per call; 512 KiB (L2) 64 times per call. */
    x = falloc(big);
    y = falloc(big);
    memset(x, 0, big * sizeof(float));
    memset(y, 0, big * sizeof(float));
    c.x = x;
    c.y = y;
    c.n = big;
    c.passes = 1;
    g_lim.read_mem = measure(rd, &c, (double)(big * sizeof(float)), NULL);
    c.n = l2;
    c.passes = 64;
    g_lim.read_l2 = measure(rd, &c, 64.0 * (double)(l2 * sizeof(float)), NULL);

    /* Copy with memcpy, counting read + written bytes. */
    c.n = big;
    c.passes = 1;
    g_lim.copy_mem = measure(copy_run, &c, 2.0 * (double)(big * sizeof(float)), NULL);
    c.n = cached;
    c.passes = 4;
    g_lim.copy_cache = measure(copy_run, &c, 8.0 * (double)(cached * sizeof(float)), NULL);

    /* exp: 2048 inputs in [-10, 10] (8 KiB in, 8 KiB out: L1). */
    fill_uniform(x, expn, -10.0f, 10.0f);
    c.n = expn;
    c.passes = 64;
    g_lim.exp_l1 = measure(exp_run, &c, 64.0 * (double)expn, NULL);
#ifdef HAVE_EXP_ALT
    g_lim.exp_alt_l1 = measure(exp_alt_run, &c, 64.0 * (double)expn, NULL);
#endif
    free(x);
    free(y);
}

static void print_limits(void)
{
    fprintf(g_info, "limits:   %s peak %.1f GFLOP/s (best sample %.1f; 12 chains)", g_lim.fma_what,
            g_lim.fma, g_lim.fma_best);
    if (g_lim.fma512 > 0.0)
        fprintf(g_info, "; AVX-512 FMA peak %.1f (best %.1f)", g_lim.fma512, g_lim.fma512_best);
    fprintf(g_info, "\n          read %.1f GB/s (256 MiB), %.1f GB/s (512 KiB, L2); memcpy "
                    "(read + write bytes) %.1f GB/s (256 MiB), %.1f GB/s (4 MiB)\n",
            g_lim.read_mem, g_lim.read_l2, g_lim.copy_mem, g_lim.copy_cache);
    fprintf(g_info, "          exp: attn__vexp (%s) %.2f elem/ns (2048 floats in L1)", attn_exp_impl(),
            g_lim.exp_l1);
#ifdef HAVE_EXP_ALT
    fprintf(g_info, "; the other exp, not used by this build (%s): %.2f elem/ns",
            bench_exp_alt_name(), g_lim.exp_alt_l1);
#endif
    fprintf(g_info, "\n");
    if (g_opt.csv) {
        printf("limit,fma_peak,machine,GFLOP/s,%.6g,\n", g_lim.fma);
        if (g_lim.fma512 > 0.0)
            printf("limit,avx512_fma_peak,machine,GFLOP/s,%.6g,\n", g_lim.fma512);
        printf("limit,read_256MiB,machine,GB/s,%.6g,\n", g_lim.read_mem);
        printf("limit,read_L2_512KiB,machine,GB/s,%.6g,\n", g_lim.read_l2);
        printf("limit,copy_256MiB,machine,GB/s,%.6g,\n", g_lim.copy_mem);
        printf("limit,copy_4MiB,machine,GB/s,%.6g,\n", g_lim.copy_cache);
        printf("limit,exp_L1,machine,elem/ns,%.6g,\n", g_lim.exp_l1);
#ifdef HAVE_EXP_ALT
        printf("limit,exp_%s_L1,machine,elem/ns,%.6g,\n", bench_exp_alt_name(), g_lim.exp_alt_l1);
#endif
    }
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

#ifdef BENCH_DNNL
/* oneDNN softmax / layer normalization, forward inference, f32, plain {rows, n} tensors
 * on the caller's buffers. One primitive per shape (prepare), timed executions. */
static struct {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_t prim;
    dnnl_memory_t src, dst, scale, shift;
    int nargs;
    dnnl_exec_arg_t args[4];
} g_dnnl;

static void dnnl_check(dnnl_status_t st, const char *what)
{
    if (st != dnnl_success) {
        fprintf(stderr, "attn_bench: oneDNN %s failed: %s\n", what, dnnl_status2str(st));
        exit(1);
    }
}

static const char *dnnl_isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    default: return "other";
    }
}

static void dnnl_prepare(void *ctx, void *data)
{
    const struct rowcase *c = (const struct rowcase *)data;
    const int layernorm = ctx != NULL;
    dnnl_memory_desc_t md, vd;
    dnnl_dims_t dims, vdims;
    dnnl_primitive_desc_t pd;
    const char *info = NULL;
    char line[200];
    if (!g_dnnl.engine) {
        dnnl_check(dnnl_engine_create(&g_dnnl.engine, dnnl_cpu, 0), "engine_create");
        dnnl_check(dnnl_stream_create(&g_dnnl.stream, g_dnnl.engine, dnnl_stream_default_flags),
                   "stream_create");
    }
    dims[0] = (dnnl_dim_t)c->rows;
    dims[1] = (dnnl_dim_t)c->n;
    vdims[0] = (dnnl_dim_t)c->n;
    dnnl_check(dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_f32, dnnl_ab), "memory_desc");
    if (!layernorm) {
        dnnl_softmax_desc_t sd;
        dnnl_check(dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, &md, 1),
                   "softmax_forward_desc_init");
        dnnl_check(dnnl_primitive_desc_create(&pd, &sd, NULL, g_dnnl.engine, NULL),
                   "primitive_desc_create");
    } else {
        dnnl_layer_normalization_desc_t ld;
        dnnl_check(dnnl_layer_normalization_forward_desc_init(
                       &ld, dnnl_forward_inference, &md, NULL, c->eps,
                       (unsigned)dnnl_use_scale | (unsigned)dnnl_use_shift),
                   "layer_normalization_forward_desc_init");
        dnnl_check(dnnl_primitive_desc_create(&pd, &ld, NULL, g_dnnl.engine, NULL),
                   "primitive_desc_create");
    }
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, (void *)&info) == dnnl_success &&
        info) {
        snprintf(line, sizeof line, "%s: oneDNN %s runs %s", g_opt.child->name,
                 layernorm ? "layer_normalization" : "softmax", info);
        printf("#info,%s\n", line); /* the parent keeps each distinct line once */
    }
    dnnl_check(dnnl_primitive_create(&g_dnnl.prim, pd), "primitive_create");
    dnnl_primitive_desc_destroy(pd);
    dnnl_check(dnnl_memory_create(&g_dnnl.src, &md, g_dnnl.engine, (void *)c->x), "memory_create");
    dnnl_check(dnnl_memory_create(&g_dnnl.dst, &md, g_dnnl.engine, c->y), "memory_create");
    g_dnnl.args[0].arg = DNNL_ARG_SRC;
    g_dnnl.args[0].memory = g_dnnl.src;
    g_dnnl.args[1].arg = DNNL_ARG_DST;
    g_dnnl.args[1].memory = g_dnnl.dst;
    g_dnnl.nargs = 2;
    g_dnnl.scale = g_dnnl.shift = NULL;
    if (layernorm) {
        dnnl_check(dnnl_memory_desc_init_by_tag(&vd, 1, vdims, dnnl_f32, dnnl_a), "memory_desc");
        dnnl_check(dnnl_memory_create(&g_dnnl.scale, &vd, g_dnnl.engine, (void *)c->gamma),
                   "memory_create");
        dnnl_check(dnnl_memory_create(&g_dnnl.shift, &vd, g_dnnl.engine, (void *)c->beta),
                   "memory_create");
        g_dnnl.args[2].arg = DNNL_ARG_SCALE;
        g_dnnl.args[2].memory = g_dnnl.scale;
        g_dnnl.args[3].arg = DNNL_ARG_SHIFT;
        g_dnnl.args[3].memory = g_dnnl.shift;
        g_dnnl.nargs = 4;
    }
}

static void dnnl_run(void *ctx, void *data)
{
    (void)ctx;
    (void)data;
    dnnl_check(dnnl_primitive_execute(g_dnnl.prim, g_dnnl.stream, g_dnnl.nargs, g_dnnl.args),
               "primitive_execute");
    dnnl_check(dnnl_stream_wait(g_dnnl.stream), "stream_wait");
}

static void dnnl_release(void *ctx)
{
    (void)ctx;
    dnnl_primitive_destroy(g_dnnl.prim);
    dnnl_memory_destroy(g_dnnl.src);
    dnnl_memory_destroy(g_dnnl.dst);
    if (g_dnnl.scale)
        dnnl_memory_destroy(g_dnnl.scale);
    if (g_dnnl.shift)
        dnnl_memory_destroy(g_dnnl.shift);
}

static int g_dnnl_layernorm_tag; /* its address marks the layernorm entry's ctx */
#endif

static const struct impl softmax_impls[] = {
    {"naive", naive_softmax, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_softmax_run, NULL, NULL, NULL, NULL, NULL, 0},
#ifdef BENCH_DNNL
    {"", dnnl_run, NULL, "onednn", dnnl_prepare, dnnl_release, NULL, 0},
#endif
};
static const struct impl layernorm_impls[] = {
    {"naive", naive_layernorm, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_layernorm_run, NULL, NULL, NULL, NULL, NULL, 0},
#ifdef BENCH_DNNL
    {"", dnnl_run, &g_dnnl_layernorm_tag, "onednn", dnnl_prepare, dnnl_release, NULL, 0},
#endif
};
static const struct impl rmsnorm_impls[] = {
    {"naive", naive_rmsnorm, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_rmsnorm_run, NULL, NULL, NULL, NULL, NULL, 0},
};

/* n in {64, 256, 1024, 4096}, 4 MiB of input (in cache), then 256 MiB (out of cache). */
static void bench_rowop(struct op *op)
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
            struct limit lim;
            char shape[64];
            c.n = ns[i];
            c.rows = bytes[b] / sizeof(float) / c.n;
            c.x = x;
            c.y = y;
            c.gamma = gamma;
            c.beta = beta;
            c.eps = 1e-5f;
            /* In cache, softmax is bound by exp and the norms by copying 4 MiB; out of
             * cache every row op by memory: 8 bytes (read x, write y) per element. */
            if (b == 1) { /* memory bandwidth moves with the other tenants: the copy is
                           * re-measured on these buffers just before each shape */
                struct limcase lc;
                char text[160];
                memset(&lc, 0, sizeof lc);
                lc.x = x;
                lc.y = y;
                lc.n = total;
                lc.passes = 1;
                lim.name = "copy_256MiB";
                lim.value = measure(copy_run, &lc, 2.0 * (double)(total * sizeof(float)), NULL);
                lim.factor = 8.0;
                sprintf(text, "%s: out of cache, each shape's share is of a memcpy of its 256 MiB "
                        "timed just before it: n = %lu %.1f GB/s", op->name,
                        (unsigned long)ns[i], lim.value);
                add_run_note(text);
            } else if (strcmp(op->name, "softmax") == 0) {
                lim.name = "exp";
                lim.value = g_lim.exp_l1;
                lim.factor = 1.0;
            } else {
                lim.name = "copy_4MiB";
                lim.value = g_lim.copy_cache;
                lim.factor = 8.0;
            }
            sprintf(shape, "%lux%lu", (unsigned long)c.rows, (unsigned long)c.n);
            /* --quick: no naive loop out of cache (a quarter of a second per call) */
            bench_shape(op, shape, (double)(c.rows * c.n), &c, y, c.rows * c.n,
                        !(g_opt.quick && b == 1), &lim);
        }
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
    void *ws, *ws2; /* ws2: the second thread's */
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

#ifdef HAVE_OPENBLAS
static void openblas_matmul_run(void *ctx, void *data)
{
    const struct mmcase *c = (const struct mmcase *)data;
    (void)ctx;
    cblas_sgemm(CblasRowMajor, c->ta == ATTN_TRANS ? CblasTrans : CblasNoTrans,
                c->tb == ATTN_TRANS ? CblasTrans : CblasNoTrans, (blasint)c->m, (blasint)c->n,
                (blasint)c->k, 1.0f, c->a, (blasint)c->lda, c->b, (blasint)c->ldb, 0.0f, c->c,
                (blasint)c->ldc);
}
#endif

static const struct impl matmul_impls[] = {
    {"naive", naive_matmul, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn", attn_matmul_run, NULL, NULL, NULL, NULL, NULL, 0},
#ifdef HAVE_OPENBLAS
    {"", openblas_matmul_run, NULL, "openblas", NULL, NULL, NULL, 0},
#endif
};

static const struct impl matmul2t_impls[] = {
    {"attn", attn_matmul_run, NULL, NULL, NULL, NULL, NULL, 0},
    {"attn-2t", attn_matmul_2t_run, NULL, NULL, NULL, NULL, NULL, 2},
#ifdef HAVE_OPENBLAS
    {"", openblas_matmul_run, NULL, "openblas", NULL, NULL, NULL, 0},
#endif
};

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
    lim.name = "fma_peak";
    lim.value = g_lim.fma;
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
        if (g_opt.quick && shapes[i][0] == 2048 && shapes[i][2] == 2048 && shapes[i][1] == 2048)
            continue;
        for (t = 0; t < 4; t++)
            bench_mm(op, shapes[i][0], shapes[i][1], shapes[i][2],
                     (t & 2) ? ATTN_TRANS : ATTN_NO_TRANS, (t & 1) ? ATTN_TRANS : ATTN_NO_TRANS,
                     2.0 * (double)shapes[i][0] * (double)shapes[i][1] * (double)shapes[i][2] <=
                         NAIVE_MATMUL_MAX_FLOP);
    }
}

static void bench_matmul2t(struct op *op)
{
    size_t s = g_opt.quick ? 1024 : 2048;
    bench_mm(op, s, s, s, ATTN_NO_TRANS, ATTN_NO_TRANS, 1);
}

/* ------------------------------------------------------------------------------------ */
/* Attention: BHLD layout, kv_heads = heads, Lq = Lk = L, scale 1/sqrt(d). */

struct attcase {
    attn_attention_params p;
    void *ws;
    size_t ws_size;
    float *scores; /* L x L: the naive version and the unfused compositions */
    void *mm_ws;   /* attn_matmul workspace for the unfused composition */
    size_t mm_ws_size;
};

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
            const float *k = p->k + b * p->k_sb + g * p->k_sh;
            const float *v = p->v + b * p->v_sb + g * p->v_sh;
            float *o = p->o + b * p->o_sb + h * p->o_sh;
            for (i = 0; i < L; i++) {
                size_t nk = causal ? i + 1 : Lk;
                float *s = c->scores + i * Lk, mx = -INFINITY, sum = 0.0f, inv;
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

/* C (m x n, ldc) = alpha A B^T (tb) or alpha A B, A m x k row-major. */
typedef void (*gemm_fn)(const struct attcase *c, int tb, size_t m, size_t n, size_t k,
                        float alpha, const float *a, size_t lda, const float *b, size_t ldb,
                        float *out, size_t ldc);

static void gemm_attn(const struct attcase *c, int tb, size_t m, size_t n, size_t k, float alpha,
                      const float *a, size_t lda, const float *b, size_t ldb, float *out,
                      size_t ldc)
{
    check(attn_matmul(ATTN_NO_TRANS, tb ? ATTN_TRANS : ATTN_NO_TRANS, m, n, k, alpha, a, lda, b,
                      ldb, 0.0f, out, ldc, c->mm_ws, c->mm_ws_size),
          "attn_matmul");
}

#ifdef HAVE_OPENBLAS
static void gemm_openblas(const struct attcase *c, int tb, size_t m, size_t n, size_t k,
                          float alpha, const float *a, size_t lda, const float *b, size_t ldb,
                          float *out, size_t ldc)
{
    (void)c;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
                (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, 0.0f, out,
                (blasint)ldc);
}
#endif

/* The unfused composition, per head: S = scale Q K^T, softmax over each row (attn_softmax),
 * O = P V. block = 0: the whole L x L score matrix at once (causal: the masked part is
 * computed, then zeroed after the softmax); block > 0: `block` query rows at a time,
 * and when causal only the keys up to the block's last row. */
static void unfused_attention(const struct attcase *c, gemm_fn gemm, size_t block)
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
            const float *k = p->k + b * p->k_sb + g * p->k_sh;
            const float *v = p->v + b * p->v_sb + g * p->v_sh;
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

#ifdef HAVE_OPENBLAS
static void openblas_unfused_run(void *ctx, void *data)
{
    (void)ctx;
    unfused_attention((const struct attcase *)data, gemm_openblas, 0);
}

static void openblas_unfused128_run(void *ctx, void *data)
{
    (void)ctx;
    unfused_attention((const struct attcase *)data, gemm_openblas, 128);
}
#endif

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
static double unfused_att_extra(const void *data)
{
    const struct attcase *c = (const struct attcase *)data;
    return (double)(c->p.q_len * c->p.kv_len * sizeof(float));
}
static double unfused128_att_extra(const void *data)
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

static const struct impl attention_impls[] = {
    {"naive", naive_attention, NULL, NULL, NULL, NULL, naive_att_extra, 0},
    {"attn", attn_attention_run, NULL, NULL, NULL, NULL, fused_att_extra, 0},
    {"attn-unfused", attn_unfused_run, NULL, NULL, NULL, NULL, attn_unfused_extra, 0},
    {"attn-unfused-128", attn_unfused128_run, NULL, NULL, NULL, NULL, attn_unfused128_extra, 0},
#ifdef HAVE_OPENBLAS
    {"-unfused", openblas_unfused_run, NULL, "openblas", NULL, NULL, unfused_att_extra, 0},
    {"-unfused-128", openblas_unfused128_run, NULL, "openblas", NULL, NULL,
     unfused128_att_extra, 0},
#endif
};

static void bench_attention(struct op *op)
{
    static const size_t lens[] = {128, 512, 2048, 8192};
    const size_t batch = 1, heads = 8, d = 64;
    size_t li;
    int causal;
    for (li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (causal = 0; causal <= 1; causal++) {
            size_t L = lens[li], count = batch * heads * L * d;
            struct attcase c;
            struct limit lim;
            char shape[64];
            float *q = falloc(count), *k = falloc(count), *v = falloc(count);
            float *o = falloc(count);
            double flop = 4.0 * (double)L * (double)L * (double)d * (double)(batch * heads);
            if (L == 8192 && g_opt.quick) {
                free(q);
                free(k);
                free(v);
                free(o);
                continue;
            }
            /* L = 8192: each implementation only if its L = 2048 time x 16 is <= 20 s;
             * --quick, L = 2048: only if its L = 512 time x 16 is <= 1 s (scalar builds) */
            g_predict.variant = causal;
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
            if (causal) {
                c.p.causal = ATTN_CAUSAL_OFFSET;
                c.p.causal_offset = 0;
                flop *= 0.5;
            }
            attcase_alloc(&c, L, L, d);
            lim.name = "fma_peak";
            lim.value = g_lim.fma;
            lim.factor = 1.0;
            sprintf(shape, "%lux%lux%lux%lu:%s", (unsigned long)batch, (unsigned long)heads,
                    (unsigned long)L, (unsigned long)d, causal ? "causal" : "full");
            bench_shape(op, shape, flop, &c, o, count, L <= 512, &lim);
            free(q);
            free(k);
            free(v);
            free(o);
            attcase_free(&c);
        }
    g_predict.factor = 0.0;
}

/* Decode: a few queries per head against a long KV cache; value = bytes of K and V read
 * per call / time (GB/s), share of the measured read bandwidth. */
static const struct impl decode_impls[] = {
    {"naive", naive_attention, NULL, NULL, NULL, NULL, naive_att_extra, 0},
    {"attn", attn_attention_run, NULL, NULL, NULL, NULL, fused_att_extra, 0},
    {"attn-unfused", attn_unfused_run, NULL, NULL, NULL, NULL, attn_unfused_extra, 0},
#ifdef HAVE_OPENBLAS
    {"-unfused", openblas_unfused_run, NULL, "openblas", NULL, NULL, unfused_att_extra, 0},
#endif
};

static void bench_decode(struct op *op)
{
    static const size_t cfg[][4] = {/* q_len, kv_len, heads, kv_heads */
                                    {1, 4096, 8, 8}, {4, 4096, 8, 8}, {1, 4096, 32, 8},
                                    {1, 16384, 8, 8}};
    const size_t d = 128;
    size_t ci;
    for (ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++) {
        const size_t lq = cfg[ci][0], lk = cfg[ci][1], heads = cfg[ci][2], kvh = cfg[ci][3];
        const size_t nq = heads * lq * d, nkv = kvh * lk * d;
        struct attcase c;
        struct limit lim;
        char shape[64];
        float *q, *k, *v, *o;
        if (g_opt.quick && ci > 0) continue;
        q = falloc(nq), k = falloc(nkv), v = falloc(nkv), o = falloc(nq);
        fill_uniform(q, nq, -1.0f, 1.0f);
        fill_uniform(k, nkv, -1.0f, 1.0f);
        fill_uniform(v, nkv, -1.0f, 1.0f);
        memset(o, 0, nq * sizeof(float));
        c.p = attn_attention_init(1, heads, kvh, lq, lk, d, d, q, k, v, o, ATTN_LAYOUT_BHLD);
        attcase_alloc(&c, lq, lk, d);
        lim.name = "read_256MiB";
        lim.value = g_lim.read_mem;
        lim.factor = 1.0;
        sprintf(shape, "q%lu:kv%lu:h%lu/%lu:d%lu", (unsigned long)lq, (unsigned long)lk,
                (unsigned long)heads, (unsigned long)kvh, (unsigned long)d);
        bench_shape(op, shape, 2.0 * (double)(nkv * sizeof(float)), &c, o,
                    nq, 1, &lim);
        free(q);
        free(k);
        free(v);
        free(o);
        attcase_free(&c);
    }
}

/* ------------------------------------------------------------------------------------ */
/* Driver. */

#define NIMPL(t) (sizeof(t) / sizeof((t)[0]))

static struct op g_ops[] = {
    {"softmax", "elem/ns",
     "value = rows*n elements per ns (GB/s of input = 4 x value); ratio = attn_softmax "
     "/ naive 3-pass softmax with libm expf; share: in cache of the exp throughput, out of "
     "cache 8 bytes (read x, write y) per element / memcpy bandwidth",
     softmax_impls, NIMPL(softmax_impls), bench_rowop, "attn", 1, 0.0, "", "", "", 0.0, "", "",
     0},
    {"layernorm", "elem/ns",
     "value = elements per ns (GB/s of input = 4 x value), gamma and beta given; ratio = "
     "attn_layernorm / naive two-pass (mean, variance) loop; share: 8 bytes per element / "
     "memcpy bandwidth at the same footprint",
     layernorm_impls, NIMPL(layernorm_impls), bench_rowop, "attn", 1, 0.0, "", "", "", 0.0, "",
     "", 0},
    {"rmsnorm", "elem/ns",
     "value = elements per ns (GB/s of input = 4 x value), gamma given; ratio = "
     "attn_rmsnorm / naive sum-of-squares loop; share as for layernorm",
     rmsnorm_impls, NIMPL(rmsnorm_impls), bench_rowop, "attn", 1, 0.0, "", "", "", 0.0, "", "",
     0},
    {"matmul", "GFLOP/s",
     "shape m x n x k : op(A) op(B) (NT = B transposed); value = 2mnk / time; ratio = "
     "value / naive i-j-k triple loop (run only for 2mnk <= 3e8, 5e7 with --quick); share of "
     "the FMA peak",
     matmul_impls, NIMPL(matmul_impls), bench_matmul, "attn", 1, 0.0, "", "", "", 0.0, "", "",
     0},
    {"matmul-2t", "GFLOP/s",
     "attn-2t = attn_matmul on 2 pthreads, C split into 2 row blocks, own workspace each; "
     "ratio = speedup over attn on 1 thread; share of 2 x the one-core FMA peak for 2 threads",
     matmul2t_impls, NIMPL(matmul2t_impls), bench_matmul2t, "attn-2t", 0, 0.0, "", "", "", 0.0,
     "", "", 0},
    {"attention", "GFLOP/s",
     "shape batch x heads x L x d, Lq = Lk = L; value = 4*L*L*d per head (half when "
     "causal) / time; ratio = value / naive attention with the full score matrix (L <= 512); "
     "attn = fused attn_attention; *-unfused = sgemm + attn_softmax + sgemm over the full "
     "score matrix, *-unfused-128 over 128-row blocks; mem = extra memory",
     attention_impls, NIMPL(attention_impls), bench_attention, "attn", 3, 0.0, "", "", "", 0.0,
     "", "", 0},
    {"decode", "GB/s",
     "shape q<queries per head>:kv<cached keys>:h<heads>/<kv heads>:d<head dim>; value = "
     "bytes of K and V in the cache / time; ratio = value / naive loop; share of the read "
     "bandwidth measured at 256 MiB (the cache is 16-64 MiB, so part of it may sit in L3); "
     "*-unfused = sgemm (m = queries) + attn_softmax + sgemm",
     decode_impls, NIMPL(decode_impls), bench_decode, "attn", 1, 0.0, "", "", "", 0.0, "", "",
     0},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: attn_bench [--quick] [--csv] [--op NAME] [--help]\n"
            "  --quick     3 samples of ~2 ms each (CI smoke run) instead of 9 of ~10 ms;\n"
            "              no 2048^3 matmul, matmul-2t on 1024^3\n"
            "  --csv       rows as CSV on stdout (header op,shape,impl,metric,value,ratio):\n"
            "              op limit (the machine's limits), the timed rows, extra_bytes and\n"
            "              bit_identical rows, then ratio_vs_<impl> (attn / impl) and\n"
            "              share_of_<limit> rows; the header and the notes go to stderr\n"
            "  --op NAME   only softmax, layernorm, rmsnorm, matmul, matmul-2t, attention or decode\n"
            "  --help      this text\n"
            "One thread except matmul-2t. Each op is timed for the library (impl attn), a\n"
            "naive scalar loop (impl naive, ratio 1.00) and the peer libraries found at build\n"
            "time (OpenBLAS, oneDNN; each in child processes); ratio = value / naive value,\n"
            "higher is faster. The table's spread is (max - min) / median of the samples.\n");
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

static void print_peers_header(void)
{
    size_t i;
    fprintf(g_info, "peers:    ");
#ifdef HAVE_OPENBLAS
    fprintf(g_info, "%s (cblas_sgemm; this process's config)\n", openblas_get_config());
#else
    fprintf(g_info, "OpenBLAS: not found at build time (libopenblas-dev)\n");
#endif
#ifdef BENCH_DNNL
    {
        const dnnl_version_t *v = dnnl_version();
        fprintf(g_info, "          oneDNN %d.%d.%d (hash %s, CPU runtime %s) (softmax, "
                        "layer_normalization)\n",
                v->major, v->minor, v->patch, v->hash ? v->hash : "?",
                v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP"
                : v->cpu_runtime == DNNL_RUNTIME_SEQ ? "sequential"
                : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                : v->cpu_runtime == DNNL_RUNTIME_THREADPOOL ? "threadpool"
                                                            : "other");
    }
#elif defined(HAVE_DNNL)
    fprintf(g_info, "          oneDNN: found, but only the 2.x C API is supported here\n");
#else
    fprintf(g_info, "          oneDNN: not found at build time (libdnnl-dev)\n");
#endif
    fprintf(g_info, "          child processes (thread count in OMP_NUM_THREADS, "
                    "OPENBLAS_NUM_THREADS):\n");
    for (i = 0; i < NPEERS; i++) {
        const struct peer *p = &g_peers[i];
        int k;
        if (!group_compiled(p->group))
            continue;
        fprintf(g_info, "            %-17s %d thread%s, %d process%s;", p->name, p->threads,
                p->threads > 1 ? "s" : "", p->procs, p->procs > 1 ? "es (median)" : "");
        for (k = 0; k < 3; k++)
            if (p->env[k])
                fprintf(g_info, " %s", p->env[k]);
        if (!p->env[0])
            fprintf(g_info, " unrestricted ISA");
        fprintf(g_info, "\n");
    }
}

/* The ratios table: for each op and shape, primary / every other non-naive impl, and the
 * primary's share of the binding limit; in CSV, ratio_vs_<impl> and share_of_<limit> rows. */
static void print_ratios(void)
{
    size_t oi, i, j, s;
    if (!g_opt.csv)
        printf("\nratios: attn / peer (> 1: attn faster); share = attn's value / the binding "
               "limit\n");
    for (oi = 0; oi < NIMPL(g_ops); oi++) {
        const struct op *op = &g_ops[oi];
        const char *cols[16];
        size_t ncol = 0;
        if (!op->ran)
            continue;
        for (i = 0; i < g_nres; i++) {
            const struct result *r = &g_res[i];
            int seen = 0;
            if (strcmp(r->op, op->name) != 0 || strcmp(r->impl, "naive") == 0 ||
                strcmp(r->impl, op->primary) == 0)
                continue;
            for (j = 0; j < ncol; j++)
                if (strcmp(cols[j], r->impl) == 0)
                    seen = 1;
            if (!seen && ncol < 16)
                cols[ncol++] = r->impl;
        }
        if (!g_opt.csv) {
            printf("%-10s %-18s", op->name, "shape");
            for (j = 0; j < ncol; j++) {
                char h[64];
                snprintf(h, sizeof h, "/%s", cols[j]);
                printf(" %*s", (int)(strlen(h) > 9 ? strlen(h) : 9), h);
            }
            printf(" %8s  %s\n", "share", "limit");
        }
        for (s = 0; s < g_nres; s++) {
            const struct result *pr = &g_res[s];
            if (strcmp(pr->op, op->name) != 0 || strcmp(pr->impl, op->primary) != 0)
                continue;
            if (!g_opt.csv)
                printf("%-10s %-18s", "", pr->shape);
            for (j = 0; j < ncol; j++) {
                double ratio = NAN;
                size_t w = strlen(cols[j]) + 1 > 9 ? strlen(cols[j]) + 1 : 9;
                for (i = 0; i < g_nres; i++)
                    if (strcmp(g_res[i].op, op->name) == 0 &&
                        strcmp(g_res[i].shape, pr->shape) == 0 &&
                        strcmp(g_res[i].impl, cols[j]) == 0)
                        ratio = pr->value / g_res[i].value;
                if (g_opt.csv) {
                    if (!isnan(ratio))
                        printf("%s,%s,%s,ratio_vs_%s,%.4f,\n", op->name, pr->shape, pr->impl,
                               cols[j], ratio);
                } else if (isnan(ratio))
                    printf(" %*s", (int)w, "-");
                else
                    printf(" %*.2f", (int)w, ratio);
            }
            if (!g_opt.csv) {
                if (isnan(pr->share))
                    printf(" %8s  %s\n", "-", pr->limit);
                else
                    printf(" %7.1f%%  %s\n", 100.0 * pr->share, pr->limit);
            }
        }
        if (g_opt.csv)
            for (i = 0; i < g_nres; i++)
                if (strcmp(g_res[i].op, op->name) == 0 && !isnan(g_res[i].share))
                    printf("%s,%s,%s,share_of_%s,%.4f,\n", op->name, g_res[i].shape,
                           g_res[i].impl, g_res[i].limit, g_res[i].share);
    }
}

/* Threads of this process (from /proc/self/status), 0 if unknown. */
static int process_threads(void)
{
    char line[256];
    int n = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Threads:", 8) == 0)
            n = atoi(line + 8);
    fclose(f);
    return n;
}

/* --peer-child NAME: run one op's peer entries, CSV rows on stdout. */
static int child_main(void)
{
    const struct peer *p = g_opt.child;
    size_t i;
    if (!group_compiled(p->group)) {
        fprintf(stderr, "attn_bench: peer %s not compiled in\n", p->name);
        return 3;
    }
#ifdef HAVE_OPENBLAS
    if (strcmp(p->group, "openblas") == 0) {
        openblas_set_num_threads(p->threads);
        printf("#info,%s: OpenBLAS core %s, %d thread%s\n", p->name, openblas_get_corename(),
               openblas_get_num_threads(), openblas_get_num_threads() > 1 ? "s" : "");
    }
#endif
#ifdef BENCH_DNNL
    if (strcmp(p->group, "onednn") == 0)
        printf("#info,%s: oneDNN effective ISA %s, OMP_NUM_THREADS=%d\n", p->name,
               dnnl_isa_name(dnnl_get_effective_cpu_isa()), p->threads);
#endif
    printf("op,shape,impl,metric,value,ratio\n");
    for (i = 0; i < NIMPL(g_ops); i++)
        if (strcmp(g_opt.only, g_ops[i].name) == 0)
            g_ops[i].bench(&g_ops[i]);
    printf("#info,%s: %d thread%s in the process after its %s run\n", p->name,
           process_threads(), process_threads() == 1 ? "" : "s", g_opt.only);
#ifdef BENCH_DNNL
    if (g_dnnl.engine) {
        dnnl_stream_destroy(g_dnnl.stream);
        dnnl_engine_destroy(g_dnnl.engine);
    }
#endif
    return 0;
}

int main(int argc, char **argv)
{
    char cpu[256], cc[256];
    const char *child = NULL;
    size_t i;
    int a;
    double t_start = now_ns();

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--csv") == 0)
            g_opt.csv = 1;
        else if (strcmp(argv[a], "--quick") == 0)
            g_opt.quick = 1;
        else if (strcmp(argv[a], "--op") == 0 && a + 1 < argc)
            g_opt.only = argv[++a];
        else if (strncmp(argv[a], "--op=", 5) == 0)
            g_opt.only = argv[a] + 5;
        else if (strcmp(argv[a], "--peer-child") == 0 && a + 1 < argc)
            child = argv[++a];
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
    g_opt.budget_ns = g_opt.quick ? 0.3e9 : 2e9;
    g_info = g_opt.csv ? stderr : stdout;

    if (child) {
        for (i = 0; i < NPEERS; i++)
            if (strcmp(child, g_peers[i].name) == 0)
                g_opt.child = &g_peers[i];
        if (!g_opt.child || !g_opt.only) {
            fprintf(stderr, "attn_bench: --peer-child needs a known peer and --op\n");
            return 2;
        }
        return child_main();
    }

    cpu_name(cpu, sizeof cpu);
    fprintf(g_info, "attn.h %d.%d.%d benchmark\n", ATTN_VERSION_MAJOR, ATTN_VERSION_MINOR,
            ATTN_VERSION_PATCH);
    fprintf(g_info, "cpu:      %s (%ld online)\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(g_info, "isa:      %s\n", attn_isa());
    fprintf(g_info, "exp:      %s\n", attn_exp_impl());
    snprintf(cc, sizeof cc, "%s", compiler_name());
    for (i = strlen(cc); i > 0 && cc[i - 1] == ' '; i--)
        cc[i - 1] = '\0';
    fprintf(g_info, "compiler: %s\n", cc);
#ifdef ATTN_BENCH_BUILD
    fprintf(g_info, "build:    %s\n", ATTN_BENCH_BUILD);
#endif
    print_peers_header();
    fprintf(g_info, "timing:   1 thread (matmul-2t: 2), CLOCK_MONOTONIC, median of %d samples of "
                    "~%.0f ms%s\n          (fewer, at least 3, when calls are long; a warm-up call over "
                    "%s is a sample); spread = (max - min) / median\n",
            g_opt.samples, g_opt.sample_ns / 1e6, g_opt.quick ? " (--quick)" : "",
            g_opt.quick ? "0.1 s" : "1 s");
    fflush(g_info);
    if (g_opt.csv)
        printf("op,shape,impl,metric,value,ratio\n");
    measure_limits();
    print_limits();
    fprintf(g_info, "\n");
    fflush(g_info);

    if (!g_opt.csv)
        print_header_row();
    for (i = 0; i < NIMPL(g_ops); i++)
        if (!g_opt.only || strcmp(g_opt.only, g_ops[i].name) == 0) {
            run_peers(&g_ops[i]);
            g_ops[i].bench(&g_ops[i]);
            g_ops[i].ran = 1;
        }
    print_ratios();

    fflush(stdout);
    fprintf(g_info, "\nnotes:\n");
    for (i = 0; i < NIMPL(g_ops); i++) {
        const struct op *op = &g_ops[i];
        if (!op->ran)
            continue;
        fprintf(g_info, "%-10s %s.", op->name, op->note);
        if (op->max_diff_impl[0])
            fprintf(g_info, " Largest max|impl-ref|/max|ref|: %.1e (%s vs %s, %s).",
                    op->max_diff, op->max_diff_impl, op->max_diff_ref, op->max_diff_shape);
        if (op->max_diff_impl[0] && !(op->max_diff <= 1e-4))
            fprintf(g_info, " WARNING: above 1e-4, check the implementation.");
        if (op->peer_max_diff_impl[0])
            fprintf(g_info, " Peers vs %s: largest %.1e (%s, %s).",
                    op->impls[op->child_ref].name, op->peer_max_diff, op->peer_max_diff_impl,
                    op->peer_max_diff_shape);
        if (op->peer_max_diff_impl[0] && !(op->peer_max_diff <= 1e-4))
            fprintf(g_info, " WARNING: a peer differs by more than 1e-4.");
        fprintf(g_info, "\n");
    }
    for (i = 0; i < g_nrnotes; i++)
        fprintf(g_info, "limit      %s\n", g_rnotes[i]);
    for (i = 0; i < g_nnotes; i++)
        fprintf(g_info, "peer       %s\n", g_notes[i]);
    fprintf(g_info, "total time %.0f s\n", (now_ns() - t_start) / 1e9);
    free(g_res);
    for (i = 0; i < BUF_COUNT; i++)
        free(g_buf[i]);
    return 0;
}
