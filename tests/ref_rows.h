/* ref_rows.h - reference implementations of the row operations, for the tests.
 *
 * Written independently of attn.h: plain loops in double, with long double for the
 * accumulations. Each function works on one row (n elements) and returns doubles, so the
 * tests measure the kernels' float results against values far more accurate than float.
 * Needs nothing from attn.h. */
#ifndef ATTN_TEST_REF_ROWS_H
#define ATTN_TEST_REF_ROWS_H
#include <math.h>
#include <stddef.h>

/* y = softmax(scale * x), exactly as the mathematical limit:
 *   any NaN in scale * x     -> every y is NaN;
 *   every entry -inf         -> every y is 0;
 *   some entries +inf        -> 1/count at the +inf entries, 0 elsewhere;
 *   otherwise                -> exp(s_i - max s) / sum_j exp(s_j - max s).
 * The product scale * x of two floats is exact in double. */
static void ref_softmax_row(const float *x, size_t n, float scale, double *y)
{
    size_t i, count = 0;
    int has_nan = 0;
    double m = -HUGE_VAL;
    long double sum = 0.0L;

    for (i = 0; i < n; i++) {
        double s = (double)scale * (double)x[i];
        if (isnan(s))
            has_nan = 1;
        else if (s > m)
            m = s;
    }
    if (has_nan) {
        for (i = 0; i < n; i++) y[i] = (double)NAN;
        return;
    }
    if (m == -HUGE_VAL) {
        for (i = 0; i < n; i++) y[i] = 0.0;
        return;
    }
    if (m == HUGE_VAL) {
        for (i = 0; i < n; i++)
            if ((double)scale * (double)x[i] == HUGE_VAL) count++;
        for (i = 0; i < n; i++)
            y[i] = ((double)scale * (double)x[i] == HUGE_VAL) ? 1.0 / (double)count : 0.0;
        return;
    }
    for (i = 0; i < n; i++) {
        double e = exp((double)scale * (double)x[i] - m);
        y[i] = e;
        sum += (long double)e;
    }
    for (i = 0; i < n; i++) y[i] = (double)((long double)y[i] / sum);
}

/* LayerNorm of one row: mean, biased variance (two-pass), rstd = 1/sqrt(var + eps),
 * y = (x - mean) * rstd * gamma + beta; gamma/beta NULL mean 1 and 0. mean_out, rstd_out
 * and std_out (sqrt(var), without eps) receive the row statistics when not NULL. */
static void ref_layernorm_row(const float *x, size_t n, const float *gamma,
                              const float *beta, float eps, double *y, double *mean_out,
                              double *rstd_out, double *std_out)
{
    size_t i;
    long double sum = 0.0L, mean, var = 0.0L, rstd;

    for (i = 0; i < n; i++) sum += (long double)x[i];
    mean = sum / (long double)n;
    for (i = 0; i < n; i++) {
        long double d = (long double)x[i] - mean;
        var += d * d;
    }
    var /= (long double)n;
    rstd = 1.0L / sqrtl(var + (long double)eps);
    for (i = 0; i < n; i++) {
        long double v = ((long double)x[i] - mean) * rstd;
        if (gamma) v *= (long double)gamma[i];
        if (beta) v += (long double)beta[i];
        y[i] = (double)v;
    }
    if (mean_out) *mean_out = (double)mean;
    if (rstd_out) *rstd_out = (double)rstd;
    if (std_out) *std_out = (double)sqrtl(var);
}

/* RMSNorm of one row: y = x / sqrt(mean(x^2) + eps) * gamma; gamma NULL means 1. */
static void ref_rmsnorm_row(const float *x, size_t n, const float *gamma, float eps,
                            double *y)
{
    size_t i;
    long double ss = 0.0L, r;

    for (i = 0; i < n; i++) ss += (long double)x[i] * (long double)x[i];
    r = 1.0L / sqrtl(ss / (long double)n + (long double)eps);
    for (i = 0; i < n; i++) {
        long double v = (long double)x[i] * r;
        if (gamma) v *= (long double)gamma[i];
        y[i] = (double)v;
    }
}

/* The residual add is defined as one float addition (correctly rounded, IEEE). */
static float ref_add(float y, float x)
{
    float s = y + x;
    return s;
}

/* Sinusoidal positional encoding of position p, column col of d:
 * col = 2i -> sin(p / 10000^(2i/d)), col = 2i + 1 -> cos(p / 10000^(2i/d)). */
static double ref_pe(size_t p, size_t col, size_t d)
{
    size_t two_i = col - (col % 2);
    long double expo = (long double)two_i / (long double)d;
    long double angle = (long double)p / powl(10000.0L, expo);
    return (double)((col % 2) ? cosl(angle) : sinl(angle));
}
#endif
