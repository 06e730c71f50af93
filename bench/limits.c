/* limits.c - the machine's limits, measured at start: the FMA peak (AVX2 and AVX-512 where
 * present, else the library's vector layer), read and memcpy bandwidth in and out of cache,
 * and the throughput of the library's own vector exp. Each op's share column divides by
 * the limit that binds it.
 *
 * This is the benchmark's one ATTN_IMPLEMENTATION unit: the exp and the portable kernels
 * use the library's private vector layer (attn__v, attn__vexp, ATTN__VW).
 */
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include "bench.h"
#ifdef HAVE_EXP_ALT
#include "exp_alt.h"
#endif

#include <string.h>
#include <stdlib.h>

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define BENCH_X86 1 /* FMA peaks and read bandwidth with target attributes */
#include <immintrin.h>
#endif

struct limits g_lim;

static volatile float g_sink; /* keeps results of the limit kernels alive */

struct limcase {
    long iters;     /* FMA kernels: loop trips */
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

double measure_copy(const float *x, float *y, size_t n)
{
    struct limcase c;
    memset(&c, 0, sizeof c);
    c.x = x;
    c.y = y;
    c.n = n;
    c.passes = 1;
    return measure(copy_run, &c, 2.0 * (double)(n * sizeof(float)), NULL);
}

void measure_limits(void)
{
    const size_t big = ((size_t)256 << 20) / sizeof(float);
    const size_t l2 = ((size_t)512 << 10) / sizeof(float);
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

void bench_fma_limit(struct limit *lim)
{
    const int w512 = strcmp(attn_isa(), "avx512") == 0 && g_lim.fma512 > 0.0;
    lim->name = w512 ? "avx512_fma_peak" : "fma_peak";
    lim->value = w512 ? g_lim.fma512 : g_lim.fma;
}

void print_limits(void)
{
    fprintf(g_info, "limits:   %s peak %.1f GFLOP/s (best sample %.1f; 12 chains)",
            g_lim.fma_what, g_lim.fma, g_lim.fma_best);
    if (g_lim.fma512 > 0.0)
        fprintf(g_info, "; AVX-512 FMA peak %.1f (best %.1f)", g_lim.fma512, g_lim.fma512_best);
    fprintf(g_info, "\n          read %.1f GB/s (256 MiB), %.1f GB/s (512 KiB, L2); memcpy "
                    "(read + write bytes) %.1f GB/s (256 MiB), %.1f GB/s (4 MiB)\n",
            g_lim.read_mem, g_lim.read_l2, g_lim.copy_mem, g_lim.copy_cache);
    fprintf(g_info, "          exp: attn__vexp (%s) %.2f elem/ns (2048 floats in L1)",
            attn_exp_impl(), g_lim.exp_l1);
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
        printf("limit,exp_%s_L1,machine,elem/ns,%.6g,\n", bench_exp_alt_name(),
               g_lim.exp_alt_l1);
#endif
    }
}
