/* test_exp: the library's vector exp (attn__vexp, behind softmax and attention) against
 * double-precision exp over every float in [-104, 89] (or every stride-th one, under
 * emulation and sanitizers), plus the special values. Asserts: at most 2 ulp for results
 * in the normal range; exactly 0 (never a denormal) below it; +inf above the overflow
 * threshold and never a wrong inf; NaN for NaN. Prints the max ulp error found.
 * Usage: test_exp [--stride S] [--sign neg|pos] (the negative or the positive floats only,
 * two halves of the sweep that meson runs side by side). */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"
#include <float.h>
#include <stdint.h>

static float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t u_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* ulp of a double value as a float result (normal range) */
static double ulp_at(double r) { int e; frexp(r, &e); return ldexp(1.0, e - 24); }

static double max_ulp;
static double max_ulp_at;
static long n_swept;

/* One check per block of inputs (passes when every float in it is right); each wrong
 * float is reported and counted as a failure of its own. */
static int block_ok;
static void expect(int ok, const char *fmt, double a, double b, double c, double d)
{
    if (!ok) {
        block_ok = 0;
        check(0, fmt, a, b, c, d);
    }
}

static void check_block(const float *x, size_t n)
{
    float y[ATTN__VW];
    size_t i, l;
    block_ok = 1;
    for (i = 0; i < n; i += ATTN__VW) {
        attn__vstore(y, attn__vexp(attn__vload(x + i)));
        for (l = 0; l < ATTN__VW && i + l < n; l++) {
            const float xi = x[i + l], yi = y[l];
            const double ref = exp((double)xi);
            n_swept++;
            if (ref > (double)FLT_MAX) {
                /* overflow: +inf (a result rounding to FLT_MAX is tolerated only if ref is
                 * within 2 ulp of it) */
                expect(yi == INFINITY || (double)yi >= (double)FLT_MAX * (1 - 2 * FLT_EPSILON),
                       "exp(%a) = %a, want +inf%.0f%.0f", (double)xi, (double)yi, 0, 0);
            } else if (ref < (double)FLT_MIN) {
                /* below the normal range: exactly 0, or FLT_MIN-ish when ref rounds there */
                int ok = yi == 0.0f || (yi >= FLT_MIN && fabs(yi - ref) <= 2 * ulp_at(FLT_MIN));
                expect(ok, "exp(%a) = %a, want 0 (no denormal)%.0f%.0f", (double)xi, (double)yi, 0,
                       0);
            } else {
                double u = fabs((double)yi - ref) / ulp_at(ref);
                if (u > max_ulp) { max_ulp = u; max_ulp_at = xi; }
                expect(u <= 2.0 && isfinite(yi) && (yi == 0.0f || yi >= FLT_MIN),
                       "exp(%a) = %a, want %a (%.2f ulp)", (double)xi, (double)yi, ref, u);
            }
        }
    }
    if (block_ok) check(1, "");
}

int main(int argc, char **argv)
{
    static float buf[4096];
    size_t nb = 0;
    uint32_t stride = 1, u;
    int a, neg = 1, pos = 1;
    for (a = 1; a + 1 < argc; a++) {
        if (!strcmp(argv[a], "--stride")) stride = (uint32_t)strtoul(argv[a + 1], NULL, 10);
        if (!strcmp(argv[a], "--sign")) {
            neg = !strcmp(argv[a + 1], "neg");
            pos = !strcmp(argv[a + 1], "pos");
        }
    }
    if (stride == 0) stride = 1;
    check_begin("exp");
    check(neg || pos, "--sign takes neg or pos");
    /* negative floats from -0 down to -104, then positive from +0 up to 89 */
    for (u = 0x80000000u; neg && u <= u_of(-104.0f); u += stride) {
        buf[nb++] = f_of(u);
        if (nb == 4096) { check_block(buf, nb); nb = 0; }
    }
    for (u = 0; pos && u <= u_of(89.0f); u += stride) {
        buf[nb++] = f_of(u);
        if (nb == 4096) { check_block(buf, nb); nb = 0; }
    }
    if (nb) check_block(buf, nb);
    printf("exp: swept %ld floats in [%s, %s] (stride %u), one check per block of 4096: max "
           "error %.3f ulp at x = %a\n",
           n_swept, neg ? "-104" : "0", pos ? "89" : "-0", (unsigned)stride, max_ulp, max_ulp_at);
    {
        float sp[16], y[16];
        size_t i;
        sp[0] = NAN; sp[1] = -NAN; sp[2] = INFINITY; sp[3] = -INFINITY; sp[4] = 89.0f;
        sp[5] = 88.72283935546875f; sp[6] = 88.7228317f; sp[7] = -87.3365479f; sp[8] = -87.33654f;
        sp[9] = -1e30f; sp[10] = 1e30f; sp[11] = 0.0f; sp[12] = -0.0f; sp[13] = FLT_MIN;
        sp[14] = -103.97208f; sp[15] = 1e-45f;
        for (i = 0; i < 16; i += ATTN__VW) attn__vstore(y + i, attn__vexp(attn__vload(sp + i)));
        check(isnan(y[0]) && isnan(y[1]), "exp(NaN) = %g, %g, want NaN", (double)y[0],
              (double)y[1]);
        check(y[2] == INFINITY, "exp(inf) = %g", (double)y[2]);
        check(y[3] == 0.0f, "exp(-inf) = %g", (double)y[3]);
        check(y[4] == INFINITY && y[5] == INFINITY, "exp(89), exp(88.72284) = %g %g, want inf",
              (double)y[4], (double)y[5]);
        check(isfinite(y[6]) && y[6] > 3.4e38f, "exp(88.7228317) = %g, want finite ~3.4028e38",
              (double)y[6]);
        check(y[9] == 0.0f && y[10] == INFINITY, "exp(-+1e30) = %g %g", (double)y[9],
              (double)y[10]);
        check(y[11] == 1.0f && y[12] == 1.0f && y[15] == 1.0f, "exp(0) = %g", (double)y[11]);
        check(y[14] == 0.0f, "exp(-103.97) = %g, want 0", (double)y[14]);
        for (i = 0; i < 16; i++)
            check(y[i] == 0.0f || !(fabsf(y[i]) < FLT_MIN), "denormal from exp(%g)", (double)sp[i]);
    }
    { /* attn__vhred8: each of 8 lane sums (maxima, minima) the bits of attn__vhsum's
       * (attn__vhmax's, attn__vhmin's) on that vector alone, lanes of mixed magnitude */
        float x[8 * ATTN__VW], r8[8];
        attn__v v[8];
        int op, k, rep, bad = 0;
        size_t i;
        check_seed(12345u);
        for (rep = 0; rep < 200; rep++) {
            for (i = 0; i < 8 * ATTN__VW; i++) { /* exponents -20 .. 20 */
                const int e = (int)floorf(check_uniform(-20.0f, 21.0f));
                x[i] = ldexpf(check_uniform(-0.5f, 0.5f), e < 20 ? e : 20);
            }
            if (rep == 1) x[3] = INFINITY, x[ATTN__VW + 1] = NAN, x[2 * ATTN__VW] = -INFINITY;
            for (k = 0; k < 8; k++) v[k] = attn__vload(x + k * ATTN__VW);
            for (op = 0; op < 3; op++) {
                attn__vhred8(v, r8, op);
                for (k = 0; k < 8; k++) {
                    const float one = op == 0 ? attn__vhsum(v[k])
                                      : op == 1 ? attn__vhmax(v[k]) : attn__vhmin(v[k]);
                    if (u_of(one) != u_of(r8[k]) && !(one != one && r8[k] != r8[k])) bad++;
                }
            }
        }
        check(bad == 0, "attn__vhred8: %d of 4800 lane reductions differ from one by one",
              bad);
    }
    { /* attn__vtsum: lane k the bits of attn__vhsum(v[k]), k < ATTN__VW, the same values */
        float x[ATTN__VW * ATTN__VW], r[ATTN__VW];
        attn__v v[ATTN__VW];
        int k, rep, bad = 0;
        size_t i;
        check_seed(54321u);
        for (rep = 0; rep < 200; rep++) {
            for (i = 0; i < ATTN__VW * ATTN__VW; i++) {
                const int e = (int)floorf(check_uniform(-20.0f, 21.0f));
                x[i] = ldexpf(check_uniform(-0.5f, 0.5f), e < 20 ? e : 20);
            }
            if (rep == 1) x[ATTN__VW - 1] = INFINITY, x[0] = NAN;
            for (k = 0; k < ATTN__VW; k++) v[k] = attn__vload(x + k * ATTN__VW);
            attn__vstore(r, attn__vtsum(v));
            for (k = 0; k < ATTN__VW; k++) {
                const float one = attn__vhsum(v[k]);
                if (u_of(one) != u_of(r[k]) && !(one != one && r[k] != r[k])) bad++;
            }
        }
        check(bad == 0, "attn__vtsum: %d of %d lane sums differ from attn__vhsum's", bad,
              200 * ATTN__VW);
    }
    return check_end("exp");
}
