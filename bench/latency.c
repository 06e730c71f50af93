/* latency.c - the latency distribution of one transformer encoder block, for real-time use.
 *
 * One pre-LN encoder block (d_model 256, 4 heads, d_ff 1024, GELU) over 64 tokens, with
 * fixed-seed weights and a workspace allocated once; 10,000 timed calls (after 100 warm-up
 * calls) inside attn_denormals_flush_begin/end, as a real-time thread would run it. Prints
 * the median, 99th percentile, minimum, mean and maximum time per call.
 *
 * Usage: attn_latency [--calls N] [--budget SECONDS]   (defaults 10000 and 45)
 * The timed loop stops early when the budget is spent (a slow machine or emulator), and
 * then says how many calls the figures are over. */
#define _POSIX_C_SOURCE 200809L
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T 64
#define D 256
#define H 4
#define DFF 1024

static unsigned long long rng = 7;
static float *rnd(size_t n, float scale, float center)
{
    float *p = (float *)malloc(n * sizeof(float));
    size_t i;
    if (!p) exit(2);
    for (i = 0; i < n; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        p[i] = center + scale * (float)((double)(rng >> 40) / 8388608.0 - 1.0);
    }
    return p;
}

static double now_s(void)
{
#ifdef _WIN32
    return (double)clock() / CLOCKS_PER_SEC;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    attn_encoder_weights w;
    attn_fp_state fp;
    size_t calls = 10000, need, i;
    double budget = 45.0, start;
    int a;
    float *x, *y;
    void *ws;
    double *t, sum = 0, flops;
    attn_status st;
    for (a = 1; a < argc; a++) {
        if (a + 1 < argc && strcmp(argv[a], "--calls") == 0)
            calls = (size_t)strtoul(argv[++a], NULL, 10);
        else if (a + 1 < argc && strcmp(argv[a], "--budget") == 0) budget = atof(argv[++a]);
        else {
            fprintf(stderr, "usage: %s [--calls N] [--budget SECONDS]\n", argv[0]);
            return 2;
        }
    }
    if (calls == 0) calls = 1;
    memset(&w, 0, sizeof w); /* float32 weights (wtype 0) */
    w.attn.d_model = D, w.attn.heads = H;
    w.attn.wq = rnd(D * D, 1.7f / 16, 0), w.attn.wk = rnd(D * D, 1.7f / 16, 0);
    w.attn.wv = rnd(D * D, 1.7f / 16, 0), w.attn.wo = rnd(D * D, 1.7f / 16, 0);
    w.attn.bq = rnd(D, 0.1f, 0), w.attn.bk = rnd(D, 0.1f, 0);
    w.attn.bv = rnd(D, 0.1f, 0), w.attn.bo = rnd(D, 0.1f, 0);
    w.ffn.d_model = D, w.ffn.d_ff = DFF, w.ffn.act = ATTN_ACT_GELU;
    w.ffn.w1 = rnd(D * DFF, 1.7f / 16, 0), w.ffn.b1 = rnd(DFF, 0.1f, 0);
    w.ffn.w2 = rnd(DFF * D, 1.7f / 32, 0), w.ffn.b2 = rnd(D, 0.1f, 0);
    w.ln1_gamma = rnd(D, 0.2f, 1), w.ln1_beta = rnd(D, 0.1f, 0);
    w.ln2_gamma = rnd(D, 0.2f, 1), w.ln2_beta = rnd(D, 0.1f, 0);
    w.eps = 1e-5f, w.norm = ATTN_PRE_LN;
    x = rnd(T * D, 1.0f, 0);
    y = rnd(T * D, 1.0f, 0);
    need = attn_encoder_workspace_size(&w, T);
    ws = malloc(need);
    t = (double *)malloc(calls * sizeof(double));
    if (!ws || !t) return 2;
    attn_denormals_flush_begin(&fp);
    for (i = 0; i < 100; i++)
        if ((st = attn_encoder(&w, x, D, y, D, T, 0, ws, need)) != ATTN_OK) {
            fprintf(stderr, "attn_encoder: %s\n", attn_status_string(st));
            return 1;
        }
    start = now_s();
    for (i = 0; i < calls; i++) {
        double t0 = now_s();
        attn_encoder(&w, x, D, y, D, T, 0, ws, need);
        t[i] = now_s() - t0;
        sum += t[i];
        if (t0 - start > budget) {
            printf("attn_latency: the %.0f s budget ran out after %lu of %lu calls\n", budget,
                   (unsigned long)(i + 1), (unsigned long)calls);
            calls = i + 1;
            break;
        }
    }
    attn_denormals_flush_end(&fp);
    qsort(t, calls, sizeof(double), cmp_double);
    flops = 2.0 * T * D * D * 4 + 2.0 * T * D * DFF * 2 + 2.0 * T * T * D * 2;
    printf("attn_latency [%s]: encoder block (pre-LN, d_model %d, %d heads, d_ff %d, GELU), "
           "%d tokens, workspace %lu bytes\n", attn_isa(), D, H, DFF, T, (unsigned long)need);
    printf("%lu calls: median %.1f us, p99 %.1f us, min %.1f us, mean %.1f us, max %.1f us "
           "(%.2f GFLOP/s at the median, %.2f us per token)\n",
           (unsigned long)calls, 1e6 * t[calls / 2],
           1e6 * t[(size_t)(0.99 * (double)(calls - 1))], 1e6 * t[0], 1e6 * sum / (double)calls,
           1e6 * t[calls - 1], flops / t[calls / 2] * 1e-9, 1e6 * t[calls / 2] / T);
    free(ws);
    free(t);
    free(x);
    free(y);
    free((void *)w.attn.wq), free((void *)w.attn.wk);
    free((void *)w.attn.wv), free((void *)w.attn.wo);
    free((void *)w.attn.bq), free((void *)w.attn.bk);
    free((void *)w.attn.bv), free((void *)w.attn.bo);
    free((void *)w.ffn.w1), free((void *)w.ffn.b1), free((void *)w.ffn.w2), free((void *)w.ffn.b2);
    free((void *)w.ln1_gamma), free((void *)w.ln1_beta);
    free((void *)w.ln2_gamma), free((void *)w.ln2_beta);
    return 0;
}
