/* timing.c - the clock, timing one implementation on one shape, medians, and skipping
 * shapes predicted too long.
 *
 * A warm-up (at least one call, ~warm-up time) also estimates the time per call; a sample
 * is then `reps` back-to-back calls (~10 ms, 2 ms with --quick), and the result is the
 * median over the samples (9, 3 with --quick; fewer, but at least 3, when one call is
 * long) with the spread (max - min) / median.
 */
#define _POSIX_C_SOURCE 200112L
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

struct predict g_predict;
double g_call_ns[BENCH_MAX_IMPLS][8];

double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double time_impl(const struct impl *im, void *data, double *spread, double *best)
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

double normalized_diff(const float *out, const float *ref, size_t count)
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

/* 1 = skip impls[i] on this shape (and says so: a note, or in a child an #info line). */
int predict_skip(const struct op *op, size_t i, const char *label, const char *shape)
{
    double pred;
    char msg[200];
    if (g_predict.factor <= 0.0 || i >= BENCH_MAX_IMPLS)
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
