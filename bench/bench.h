/* bench.h - what the benchmark's files share.
 *
 *   main.c       options, the list of operations, the header, the run
 *   util.c       errors, aligned buffers, random input, strings
 *   timing.c     the clock, timing one call repeatedly, medians, skipping long shapes
 *   report.c     one shape across every implementation: rows, ratios table, notes
 *   limits.c     the machine's limits (FMA peak, bandwidths, exp throughput); the only
 *                unit with ATTN_IMPLEMENTATION, since it times the private vector layer
 *   peers.c      peer libraries (OpenBLAS, oneDNN): their entries, their settings, and the
 *                child processes that run each setting
 *   op_*.c       one operation family each: its shapes, naive loops and the library's calls
 *
 * An implementation ("impl") is { name, run, ... }: run(ctx, data) performs one call on the
 * shape `data` (struct rowcase / mmcase / attcase below) and writes the same output buffer
 * as every other implementation of that op.
 */
#ifndef ATTN_BENCH_H
#define ATTN_BENCH_H

#include "attn.h"
#ifdef HAVE_DISPATCHED
#include "dispatched.h"
#endif

#include <stddef.h>
#include <stdio.h>

/* Keep the naive loops scalar: GCC by attribute, clang by loop pragma. */
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

#define NIMPL(t) (sizeof(t) / sizeof((t)[0]))
#define BENCH_MAX_IMPLS 16 /* per op, the peers' entries included */

/* ---------------------------------------------------------------------------------- */
/* Options (main.c). */

struct peer;

struct options {
    int csv;
    int quick;
    const char *only; /* NULL = every op */
    int samples;
    double sample_ns; /* target duration of one sample */
    double warmup_ns; /* minimum warm-up duration */
    double budget_ns; /* fewer samples (>= 3) when samples * time per call exceed this */
    const struct peer *child; /* set in a --peer-child process */
};
extern struct options g_opt;
extern FILE *g_info; /* header and notes: stdout for the table, stderr with --csv */

/* ---------------------------------------------------------------------------------- */
/* Implementations and operations. */

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

/* One operation. Its op_*.c file sets the fields up to child_ref; main.c appends the peers'
 * entries to impls at start (peers_attach), report.c fills the rest during the run. */
struct op {
    const char *name;
    const char *metric; /* unit of the value column */
    const char *note;   /* what the value and the ratio mean */
    const struct impl *own; /* own[0] is the baseline of the ratio column */
    size_t nown;
    void (*bench)(struct op *op); /* times every shape of the op (bench_shape per shape) */
    const char *primary;          /* the ratios table compares this impl with the others */
    size_t child_ref; /* the in-process impl a peer child compares its output with */
    double warn_diff; /* differences above this are flagged (0: 1e-4) */

    struct impl impls[BENCH_MAX_IMPLS]; /* own, then the peers' */
    size_t nimpl;
    double max_diff; /* largest normalized difference from the reference seen so far */
    char max_diff_impl[48], max_diff_shape[48], max_diff_ref[48];
    double peer_max_diff; /* the same for peers (vs child_ref, in the child) */
    char peer_max_diff_impl[48], peer_max_diff_shape[48];
    int ran;
};

/* The limit a shape's value is compared with: share = value * factor / limit. */
struct limit {
    const char *name; /* in share_of_<name> */
    double value;
    double factor;
};

/* ---------------------------------------------------------------------------------- */
/* The shapes handed to implementations (the peers' entries in peers.c take them too). */

/* softmax, layernorm, rmsnorm: rows x n, contiguous */
struct rowcase {
    size_t rows, n;
    const float *x;
    float *y;
    const float *gamma, *beta;
    float eps;
};

/* matmul: C = op(A) op(B), alpha 1, beta 0 */
struct mmcase {
    attn_trans ta, tb;
    size_t m, n, k;
    const float *a, *b;
    size_t lda, ldb, ldc;
    float *c;
    void *ws, *ws2; /* ws2: the second thread's */
    size_t ws_size;
};

/* attention and decode */
struct attcase {
    attn_attention_params p;
    void *ws;
    size_t ws_size;
    float *scores; /* L x L: the naive version and the unfused compositions */
    void *mm_ws;   /* attn_matmul workspace for the unfused composition */
    size_t mm_ws_size;
    /* K and V as floats when p holds them in 16 bits (p.kv_type): the naive loop and the
     * unfused compositions read these (the values widened back, so every implementation
     * computes the same attention); NULL when p.k and p.v are floats */
    const float *k32, *v32;
    void *kv16; /* the 16-bit storage, freed with the case */
};

/* C (m x n, ldc) = alpha A B^T (tb) or alpha A B, A m x k row-major. */
typedef void (*gemm_fn)(const struct attcase *c, int tb, size_t m, size_t n, size_t k,
                        float alpha, const float *a, size_t lda, const float *b, size_t ldb,
                        float *out, size_t ldc);

/* op_attention.c: sgemm + attn_softmax + sgemm per head, on the whole score matrix
 * (block 0) or `block` query rows at a time; and the extra bytes of its score buffer. */
void unfused_attention(const struct attcase *c, gemm_fn gemm, size_t block);
double unfused_att_extra(const void *data);
double unfused128_att_extra(const void *data);

/* Out-of-cache shapes (decode-cold, matvec-cold): the call rotates over copies of its
 * inputs that together span at least this many bytes, as the read-bandwidth limit's buffer
 * does, so that each call reads data last touched 256 MiB of reads earlier. */
#define BENCH_COLD_BYTES ((size_t)256 << 20)
#define BENCH_COLD_MAX 64 /* copies at most */
/* copies of `bytes` each that span BENCH_COLD_BYTES (1 to BENCH_COLD_MAX) */
size_t cold_copies(double bytes);

/* op_softmax.c: the row operations' shapes, shared with the norms. The in-cache shapes
 * are held to `in_cache` (limit value in the op's unit), the out-of-cache ones to a memcpy
 * of the same buffers. */
void bench_rows(struct op *op, struct limit in_cache);

/* ---------------------------------------------------------------------------------- */
/* util.c */

void die(const char *what, const char *why);
void check(attn_status st, const char *call); /* aborts unless ATTN_OK */
void *xalloc(size_t bytes);                    /* 64-byte aligned; NULL for 0 bytes */
float *falloc(size_t count);
/* Grow-only buffers kept for the whole run: every fresh large one costs page faults. */
enum { BUF_REF, BUF_ROW_X, BUF_ROW_Y, BUF_COUNT };
float *scratch(int which, size_t count);
void free_scratch(void);
void fill_uniform(float *x, size_t count, float lo, float hi); /* in [lo, hi) */
void copy_str(char *dst, size_t size, const char *src); /* truncated to size - 1 */
const char *fmt_bytes(double bytes, char *buf, size_t size); /* "12.0 MiB" */

/* ---------------------------------------------------------------------------------- */
/* timing.c */

double now_ns(void); /* CLOCK_MONOTONIC */
double median(double *v, int n); /* sorts v */
/* Median time per call in ns; *spread = (max - min) / median of the samples; *best = the
 * fastest sample (may be NULL). */
double time_impl(const struct impl *im, void *data, double *spread, double *best);
/* max |out - ref| / max |ref| (infinity when a NaN appears where ref has none). */
double normalized_diff(const float *out, const float *ref, size_t count);

/* Skipping long shapes: with g_predict.factor > 0, an implementation whose time per call
 * on this shape, predicted as factor x its time on the previous shape of the same variant,
 * exceeds g_predict.max_ns is skipped (L = 8192 attention from the L = 2048 times). */
struct predict {
    double factor, max_ns;
    int variant; /* 0..3 */
    const char *what;
};
extern struct predict g_predict;
extern double g_call_ns[BENCH_MAX_IMPLS][8]; /* [impl index][variant]: last time per call */
int predict_skip(const struct op *op, size_t i, const char *label, const char *shape);

/* ---------------------------------------------------------------------------------- */
/* report.c */

/* Times every in-process implementation of `op` on one shape, then prints the peers' rows
 * for it (measured before, in child processes; in a child, times that peer's entries).
 * `work` is the metric's numerator per call (FLOP for GFLOP/s, elements for elem/ns).
 * out / out_count: the buffer every implementation writes. run_baseline = 0 skips
 * impls[0] (too slow for this shape). */
void bench_shape(struct op *op, const char *shape, double work, void *data, const float *out,
                 size_t out_count, int run_baseline, const struct limit *lim);
void print_header_row(void);
void print_ratios(struct op *const *ops, size_t nops);
/* A value derived from the rows already printed (e.g. one impl's speed over another's on
 * the same shape): a CSV row op,shape,impl,metric,value, or a table row without spread or
 * ratio. */
void print_derived(const struct op *op, const char *shape, const char *impl,
                   const char *metric, double value, const char *note);
void print_notes(struct op *const *ops, size_t nops);
void add_note(const char *text);     /* from peers; printed once each */
void add_run_note(const char *text); /* from this process's measurements */

/* ---------------------------------------------------------------------------------- */
/* limits.c */

extern struct limits {
    double fma, fma_best;       /* GFLOP/s, AVX2 FMA (or the vector layer's) */
    double fma512, fma512_best; /* GFLOP/s, AVX-512 FMA */
    double read_mem, read_l2;   /* GB/s */
    double copy_mem, copy_cache; /* GB/s, read + written bytes */
    double exp_l1;               /* elements/ns */
    double exp_alt_l1;           /* elements/ns, the other exp (bench/exp_alt.c), 0 if none */
    const char *fma_what;
} g_lim;
void measure_limits(void);
/* The FMA peak of the path this build runs (AVX-512's where attn_isa() is avx512). */
void bench_fma_limit(struct limit *lim);
void print_limits(void);
/* GB/s of memcpy(y, x, n floats), read + written bytes. */
double measure_copy(const float *x, float *y, size_t n);

/* ---------------------------------------------------------------------------------- */
/* peers.c */

/* A peer setting: one library, environment and thread count, in its own processes. */
struct peer {
    const char *name;  /* row label, and the argument of --peer-child */
    const char *group; /* matches struct impl.group */
    const char *ops;   /* the ops it runs, each surrounded by spaces */
    const char *env[3]; /* NAME=value added to the child's environment */
    int threads;
    int procs; /* child processes; the median is reported */
    int avx512; /* runs only where the CPU and the OS run AVX-512F */
};

/* A row a peer child reported, aggregated over its processes. */
struct prow {
    char shape[48], impl[48];
    double value, spread, diff, extra;
    int nproc;
    int threads; /* the peer setting's */
};
extern struct prow g_prows[512]; /* the current op's */
extern size_t g_nprows;

void peers_attach(struct op *op); /* impls = own, then the peers' entries for op */
void run_peers(const struct op *op); /* every child for op, rows into g_prows */
void print_peers_header(void);
const struct peer *peer_find(const char *name);
int peer_child_main(struct op *op); /* --peer-child: g_opt.child's entries of op, as CSV */

#endif
