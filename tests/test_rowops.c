/* test_rowops.c - tests of the row operations: attn_softmax, attn_layernorm, attn_rmsnorm,
 * attn_add and attn_positional_encoding, against the double-precision references in
 * ref_rows.h.
 *
 * Covered: every row length 1..65 and 127, 257, 1000, 4096; aligned and unaligned
 * pointers; leading dimensions larger than the row (ldx != ldy) with guard values in the
 * padding and after the last row; in place; special values (inf, NaN, huge, tiny,
 * denormal); every error path, with the outputs checked untouched.
 *
 * Tolerances (the library's documented bounds):
 *   softmax    relative error <= 1e-6 where the exact value is > 1e-30, |error| <= 1e-30
 *              below; no denormal output; row sums within 1e-6 of 1.
 *   layernorm  |error| <= 2e-6 (1 + |y|) (inputs of mean up to 1e3, n <= 4096);
 *              mean within 1e-6 |mean| + 1e-6 std; rstd relative 1e-5.
 *   rmsnorm    |error| <= 2e-6 (1 + |y|).
 *   add        exact (one float addition).
 *   PE         |error| <= 6e-8 max(1, |pe|) (computed in double, rounded once).
 *
 * With --far (the rowops_far test) every softmax call takes the paths for calls far out of
 * the caches (attn__softmax_path's test hook): y by non-temporal stores where the ISA has
 * them, unaligned heads and tails included, the next rows prefetched.
 */
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include "check.h"
#include "ref_rows.h"

/* the softmax path under test: attn_softmax's own, or (--far) the far ones */
static int sm_path = ATTN__SM_AUTO;
#define attn_softmax(x, ldx, y, ldy, rows, n, s)                                            \
    attn__softmax_path(x, ldx, y, ldy, rows, n, s, sm_path)

#include <float.h>
#include <stdint.h>

#define TAIL 8 /* guard floats after the last row of every matrix */

/* ---- buffers with guards --------------------------------------------------------------- */

typedef struct fbuf {
    void *raw;
    float *base; /* 64-byte aligned */
    size_t len;  /* floats */
} fbuf;

/* A buffer of len floats, every byte 0xA5 (the sentinel, a normal negative float). */
static float *fbuf_new(fbuf *b, size_t len)
{
    b->raw = malloc(len * sizeof(float) + 64);
    if (!b->raw) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    b->base = (float *)(((uintptr_t)b->raw + 63) & ~(uintptr_t)63);
    b->len = len;
    memset(b->base, 0xA5, len * sizeof(float));
    return b->base;
}

static void fbuf_free(fbuf *b) { free(b->raw); }

static int is_sentinel(const float *p)
{
    unsigned char c[sizeof(float)];
    size_t i;
    memcpy(c, p, sizeof c);
    for (i = 0; i < sizeof c; i++)
        if (c[i] != 0xA5) return 0;
    return 1;
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* ARMv7's NEON flushes denormal inputs and results to zero (of the same sign) */
static float ftz32(float v)
{
#if defined(__ARM_NEON) && !defined(__aarch64__) && !defined(ATTN_NO_SIMD)
    if (v != 0.0f && fabsf(v) < FLT_MIN) return v < 0 ? -0.0f : 0.0f;
#endif
    return v;
}

/* A rows x n matrix at base + off with leading dimension ld, TAIL guard floats after it. */
typedef struct mat {
    fbuf b;
    float *p;
    size_t off, ld, rows, n;
} mat;

static void mat_new(mat *m, size_t rows, size_t n, size_t off, size_t ld)
{
    fbuf_new(&m->b, off + (rows - 1) * ld + n + TAIL);
    m->p = m->b.base + off;
    m->off = off;
    m->ld = ld;
    m->rows = rows;
    m->n = n;
}

/* Copies a dense rows x n source into the matrix (padding keeps the sentinel). */
static void mat_load(mat *m, const float *src)
{
    size_t r;
    for (r = 0; r < m->rows; r++) memcpy(m->p + r * m->ld, src + r * m->n, m->n * sizeof(float));
}

static void mat_free(mat *m) { fbuf_free(&m->b); }

/* Number of floats outside the data region that lost the sentinel; *first = the first. */
static size_t mat_guard_bad(const mat *m, size_t *first)
{
    size_t i, bad = 0;
    for (i = 0; i < m->b.len; i++) {
        int in_data = 0;
        if (i >= m->off) {
            size_t k = i - m->off, r = k / m->ld, c = k % m->ld;
            in_data = r < m->rows && c < m->n;
        }
        if (!in_data && !is_sentinel(m->b.base + i)) {
            if (!bad) *first = i;
            bad++;
        }
    }
    return bad;
}

static void check_guards(const char *op, const char *ctx, const char *which, const mat *m)
{
    size_t first = 0, bad = mat_guard_bad(m, &first);
    check(bad == 0, "%s %s: %lu guard floats of %s overwritten (first at buffer index %lu)", op,
          ctx, (unsigned long)bad, which, (unsigned long)first);
}

/* The input matrix must be bit-for-bit what was loaded, guards included. */
static void check_input_unchanged(const char *op, const char *ctx, const mat *m,
                                  const float *src)
{
    size_t r, c, bad = 0;
    for (r = 0; r < m->rows; r++)
        for (c = 0; c < m->n; c++)
            if (!same_bits(m->p[r * m->ld + c], src[r * m->n + c])) bad++;
    check(bad == 0, "%s %s: %lu input elements modified", op, ctx, (unsigned long)bad);
    check_guards(op, ctx, "the input", m);
}

/* ---- test data ------------------------------------------------------------------------- */

typedef struct layout {
    const char *name;
    size_t xoff, yoff; /* first element's offset from a 64-byte aligned base, in floats */
    size_t xpad, ypad; /* ld = n + pad */
    int inplace;       /* y == x with ldy == ldx (x's offset and pad) */
} layout;

static const layout layouts[] = {
    {"contiguous", 0, 0, 0, 0, 0},
    {"unaligned", 1, 1, 0, 0, 0},
    {"ldx=n+3 ldy=n+7", 1, 0, 3, 7, 0},
    {"ldx=n+9 ldy=n+1", 0, 1, 9, 1, 0},
    {"in place", 0, 0, 0, 0, 1},
    {"in place unaligned ld=n+5", 1, 1, 5, 5, 1},
};
#define NLAYOUTS (sizeof layouts / sizeof layouts[0])

#define NSWEEP 69
static size_t sweep_n(size_t i)
{
    static const size_t big[4] = {127, 257, 1000, 4096};
    return i < 65 ? i + 1 : big[i - 65];
}

static const float scales[4] = {1.0f, 0.125f, -1.0f, 3.0f};

static void fill_uniform(float *p, size_t count, float lo, float hi)
{
    size_t i;
    for (i = 0; i < count; i++) p[i] = check_uniform(lo, hi);
}

/* Random rows of the given kind: 0 [-1,1], 1 [-30,30], 2 1e3 + [-1,1], 3 -1e3 + [-1,1]. */
static const char *kind_name[4] = {"[-1,1]", "[-30,30]", "1e3+[-1,1]", "-1e3+[-1,1]"};
static void fill_kind(float *p, size_t count, int kind)
{
    switch (kind) {
    case 0: fill_uniform(p, count, -1.0f, 1.0f); break;
    case 1: fill_uniform(p, count, -30.0f, 30.0f); break;
    case 2: fill_uniform(p, count, 999.0f, 1001.0f); break;
    default: fill_uniform(p, count, -1001.0f, -999.0f); break;
    }
}

static float *falloc(size_t count)
{
    float *p = (float *)malloc((count ? count : 1) * sizeof(float));
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static double *dalloc(size_t count)
{
    double *p = (double *)malloc((count ? count : 1) * sizeof(double));
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* ---- softmax ----------------------------------------------------------------------------- */

static double sm_max_rel, sm_max_tiny, sm_max_sum;
static long sm_nan_bad; /* NaN outputs where the exact value is a number */

static void softmax_check_row(const char *ctx, size_t r, size_t n, const float *got,
                              const double *want)
{
    size_t j, bad = n, denorm = n;
    int nanrow = isnan(want[0]) != 0, allzero = 1;
    double sum = 0.0;

    for (j = 0; j < n; j++) {
        double g = got[j], w = want[j];
        int ok;
        if (isnan(w)) {
            ok = isnan(g) != 0;
        } else {
            if (w != 0.0) allzero = 0;
            if (isnan(g)) sm_nan_bad++;
            if (w > 1e-30) {
                double rel = fabs(g - w) / w;
                ok = rel <= 1e-6;
                if (rel > sm_max_rel) sm_max_rel = rel;
            } else {
                double ab = fabs(g - w);
                ok = ab <= 1e-30;
                if (ab > sm_max_tiny) sm_max_tiny = ab;
            }
            if (!(g == 0.0 || fabs(g) >= FLT_MIN) && denorm == n) denorm = j;
            sum += g;
        }
        if (!ok && bad == n) bad = j;
    }
    j = bad < n ? bad : 0;
    check(bad == n, "softmax %s row %lu col %lu: got %.9g want %.17g (rel err %.3g)", ctx,
          (unsigned long)r, (unsigned long)j, (double)got[j], want[j],
          fabs((double)got[j] - want[j]) / fabs(want[j]));
    if (nanrow) return;
    j = denorm < n ? denorm : 0;
    check(denorm == n, "softmax %s row %lu col %lu: denormal output %.9g (want %.17g)", ctx,
          (unsigned long)r, (unsigned long)j, (double)got[j], want[j]);
    if (allzero) {
        check(sum == 0.0, "softmax %s row %lu: row of zeros expected, sum %.17g", ctx,
              (unsigned long)r, sum);
    } else {
        double dev = fabs(sum - 1.0);
        if (dev > sm_max_sum) sm_max_sum = dev;
        check(dev <= 1e-6, "softmax %s row %lu: row sum %.17g (|sum - 1| = %.3g)", ctx,
              (unsigned long)r, sum, dev);
    }
    if (n == 1 && want[0] == 1.0)
        check(got[0] == 1.0f, "softmax %s row %lu: n = 1 must give exactly 1, got %.9g", ctx,
              (unsigned long)r, (double)got[0]);
}

/* Runs softmax on a dense rows x n source laid out per L; checks values, guards and the
 * input. out (rows x n, dense) receives the outputs when not NULL. */
static void run_softmax(const char *tag, const float *src, size_t rows, size_t n, float scale,
                        const layout *L, float *out)
{
    char ctx[200];
    mat xm, ymm, *ym;
    size_t r;
    double *want = dalloc(n);
    attn_status st;

    snprintf(ctx, sizeof ctx, "[%s n=%lu rows=%lu scale=%g %s]", tag, (unsigned long)n,
             (unsigned long)rows, (double)scale, L->name);
    mat_new(&xm, rows, n, L->xoff, n + L->xpad);
    mat_load(&xm, src);
    if (L->inplace) {
        ym = &xm;
    } else {
        mat_new(&ymm, rows, n, L->yoff, n + L->ypad);
        ym = &ymm;
    }
    st = attn_softmax(xm.p, xm.ld, ym->p, ym->ld, rows, n, scale);
    if (check(st == ATTN_OK, "softmax %s: status %d (%s)", ctx, (int)st,
              attn_status_string(st))) {
        for (r = 0; r < rows; r++) {
            ref_softmax_row(src + r * n, n, scale, want);
            softmax_check_row(ctx, r, n, ym->p + r * ym->ld, want);
            if (out) memcpy(out + r * n, ym->p + r * ym->ld, n * sizeof(float));
        }
        check_guards("softmax", ctx, "y", ym);
        if (!L->inplace) check_input_unchanged("softmax", ctx, &xm, src);
    }
    if (!L->inplace) mat_free(&ymm);
    mat_free(&xm);
    free(want);
}

static void test_softmax_sweep(void)
{
    size_t si, li, sc;
    int kind;
    for (si = 0; si < NSWEEP; si++) {
        size_t n = sweep_n(si), rows = 3;
        float *src = falloc(rows * n);
        for (li = 0; li < NLAYOUTS; li++)
            for (sc = 0; sc < 4; sc++)
                for (kind = 0; kind < 2; kind++) {
                    fill_kind(src, rows * n, kind);
                    run_softmax(kind_name[kind], src, rows, n, scales[sc], &layouts[li], NULL);
                }
        /* scale 0 is finite: a uniform distribution */
        fill_kind(src, rows * n, 1);
        run_softmax("scale 0", src, rows, n, 0.0f, &layouts[si % NLAYOUTS], NULL);
        free(src);
    }
}

/* Special rows for softmax; the NaN patterns are 3, 4 and 5. */
#define NPATTERNS 17
static int pattern_has_nan(int pat) { return pat >= 3 && pat <= 5; }

static void softmax_pattern(float *row, size_t n, int pat, float scale)
{
    static const float near_underflow[8] = {0.0f,    -87.3f, -87.5f,  -88.0f,
                                            -100.0f, -103.9f, -86.0f, -87.33f};
    size_t j;
    fill_uniform(row, n, -1.0f, 1.0f);
    switch (pat) {
    case 0: /* all -inf */
        for (j = 0; j < n; j++) row[j] = -INFINITY;
        break;
    case 1: /* one +inf, the rest finite */
        row[n - 1] = INFINITY;
        break;
    case 2: /* +inf twice, -inf, finite */
        for (j = 0; j < n; j += 3) row[j] = -INFINITY;
        row[0] = INFINITY;
        row[n / 2] = INFINITY;
        break;
    case 3: /* NaN at the end */
        row[n - 1] = NAN;
        break;
    case 4: /* NaN at the start, large values elsewhere */
        for (j = 0; j < n; j++) row[j] *= 30.0f;
        row[0] = NAN;
        break;
    case 5: /* NaN in the middle, +inf first, -inf elsewhere */
        for (j = 0; j < n; j++) row[j] = -INFINITY;
        row[0] = INFINITY;
        row[n / 2] = NAN;
        break;
    case 6: /* 5064.5 + [-1,1] */
        for (j = 0; j < n; j++) row[j] = 5064.5f + row[j];
        break;
    case 7: /* +-1e30 */
        for (j = 0; j < n; j++) row[j] = (j % 3 == 1) ? -1e30f : 1e30f * row[j];
        break;
    case 8: /* +-3e38 and zeros: differences overflow float */
        for (j = 0; j < n; j++) row[j] = (j % 3 == 0) ? 3e38f : (j % 3 == 1) ? -3e38f : 0.0f;
        if (n > 1) row[n - 1] = -3e38f;
        break;
    case 9: /* tiny */
        for (j = 0; j < n; j++) row[j] *= 1e-38f;
        break;
    case 10: /* denormal inputs */
        for (j = 0; j < n; j++) row[j] = ldexpf((float)(j * 7919 % 8388607 + 1), -149);
        if (n > 1) row[1] = -row[1];
        break;
    case 11: /* scale * x near the flush-to-zero boundary of exp (exp(-87.3) ~ FLT_MIN) */
        for (j = 0; j < n; j++) row[j] = near_underflow[(j + n) % 8] / scale;
        break;
    case 12: /* -inf mixed with finite */
        for (j = 1; j < n; j += 3) row[j] = -INFINITY;
        break;
    case 13: /* constant */
        for (j = 0; j < n; j++) row[j] = 2.5f;
        break;
    case 14: /* all +inf */
        for (j = 0; j < n; j++) row[j] = INFINITY;
        break;
    case 15: /* zeros of both signs */
        for (j = 0; j < n; j++) row[j] = (j % 2) ? -0.0f : 0.0f;
        break;
    default: /* one finite value far above the rest (exp of the others flushes) */
        for (j = 0; j < n; j++) row[j] = -200.0f / scale + row[j];
        row[n / 2] = 0.0f;
        break;
    }
}

static void test_softmax_special(void)
{
    static const size_t ns[] = {1,  2,  3,  4,  5,  7,  8,  9,   15, 16,
                                17, 31, 32, 33, 63, 64, 65, 100, 257};
    static const size_t lay[3] = {0, 3, 5};
    size_t ni, sc, li, r, j;
    for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
        size_t n = ns[ni], rows = NPATTERNS;
        float *src = falloc(rows * n), *src2 = falloc(rows * n);
        float *out = falloc(rows * n), *out2 = falloc(rows * n);
        for (sc = 0; sc < 4; sc++) {
            for (r = 0; r < rows; r++) softmax_pattern(src + r * n, n, (int)r, scales[sc]);
            /* the same rows with the NaN rows replaced by finite ones */
            memcpy(src2, src, rows * n * sizeof(float));
            for (r = 0; r < rows; r++)
                if (pattern_has_nan((int)r)) fill_uniform(src2 + r * n, n, -1.0f, 1.0f);
            for (li = 0; li < 3; li++) {
                const layout *L = &layouts[lay[li]];
                size_t bad = 0, badr = 0, badc = 0;
                run_softmax("special", src, rows, n, scales[sc], L, out);
                run_softmax("special, NaN rows replaced", src2, rows, n, scales[sc], L, out2);
                /* A NaN stays in its row: every other row is bit-identical. */
                for (r = 0; r < rows; r++) {
                    if (pattern_has_nan((int)r)) continue;
                    for (j = 0; j < n; j++)
                        if (!same_bits(out[r * n + j], out2[r * n + j])) {
                            if (!bad) {
                                badr = r;
                                badc = j;
                            }
                            bad++;
                        }
                }
                check(bad == 0,
                      "softmax NaN isolation n=%lu scale=%g %s: row %lu col %lu differs "
                      "(%.9g vs %.9g) when other rows hold NaN",
                      (unsigned long)n, (double)scales[sc], L->name, (unsigned long)badr,
                      (unsigned long)badc, (double)out[badr * n + badc],
                      (double)out2[badr * n + badc]);
            }
        }
        free(src);
        free(src2);
        free(out);
        free(out2);
    }
}

/* ---- layernorm / rmsnorm ----------------------------------------------------------------- */

static double ln_max_err, ln_max_err_offset, ln_max_mean_ratio, ln_max_mean_abs, ln_max_rstd_rel,
    rms_max_err;

static void norm_check_row(const char *op, double *maxerr, const char *ctx, size_t r, size_t n,
                           const float *got, const double *want)
{
    size_t j, bad = n;
    for (j = 0; j < n; j++) {
        double g = got[j], w = want[j], e = fabs(g - w);
        if (!(e <= 2e-6 * (1.0 + fabs(w)))) {
            if (bad == n) bad = j;
        }
        if (e / (1.0 + fabs(w)) > *maxerr || isnan(e)) *maxerr = e / (1.0 + fabs(w));
    }
    j = bad < n ? bad : 0;
    check(bad == n, "%s %s row %lu col %lu: got %.9g want %.17g (err %.3g, tol %.3g)", op, ctx,
          (unsigned long)r, (unsigned long)j, (double)got[j], want[j],
          fabs((double)got[j] - want[j]), 2e-6 * (1.0 + fabs(want[j])));
}

/* gamma/beta: dense n floats or NULL; they are passed from a buffer at offset L->xoff. */
static void run_layernorm(const char *tag, const float *src, size_t rows, size_t n,
                          const float *gamma, const float *beta, float eps, int stats,
                          const layout *L)
{
    char ctx[240];
    mat xm, ymm, *ym;
    fbuf gb = {NULL, NULL, 0}, bb = {NULL, NULL, 0}, mb = {NULL, NULL, 0}, rb = {NULL, NULL, 0};
    float *g = NULL, *b = NULL, *mo = NULL, *ro = NULL;
    size_t r, i;
    double *want = dalloc(n);
    attn_status st;

    snprintf(ctx, sizeof ctx, "[%s n=%lu rows=%lu eps=%g gamma=%s beta=%s stats=%s %s]", tag,
             (unsigned long)n, (unsigned long)rows, (double)eps, gamma ? "yes" : "NULL",
             beta ? "yes" : "NULL", stats ? "yes" : "NULL", L->name);
    mat_new(&xm, rows, n, L->xoff, n + L->xpad);
    mat_load(&xm, src);
    if (L->inplace) {
        ym = &xm;
    } else {
        mat_new(&ymm, rows, n, L->yoff, n + L->ypad);
        ym = &ymm;
    }
    if (gamma) {
        g = fbuf_new(&gb, n + L->xoff) + L->xoff;
        memcpy(g, gamma, n * sizeof(float));
    }
    if (beta) {
        b = fbuf_new(&bb, n + L->xoff) + L->xoff;
        memcpy(b, beta, n * sizeof(float));
    }
    if (stats) {
        mo = fbuf_new(&mb, rows + TAIL);
        ro = fbuf_new(&rb, rows + TAIL);
    }
    st = attn_layernorm(xm.p, xm.ld, ym->p, ym->ld, rows, n, g, b, eps, mo, ro);
    if (check(st == ATTN_OK, "layernorm %s: status %d (%s)", ctx, (int)st,
              attn_status_string(st))) {
        for (r = 0; r < rows; r++) {
            double mref, rref, sd;
            ref_layernorm_row(src + r * n, n, gamma, beta, eps, want, &mref, &rref, &sd);
            /* rows with |mean| >> std (the 1e3 offsets) are tallied apart */
            norm_check_row("layernorm", fabs(mref) > 10.0 * sd ? &ln_max_err_offset : &ln_max_err,
                           ctx, r, n, ym->p + r * ym->ld, want);
            if (stats) {
                double me = fabs((double)mo[r] - mref), mtol = 1e-6 * fabs(mref) + 1e-6 * sd;
                double re = fabs((double)ro[r] - rref) / rref;
                if (me > ln_max_mean_abs || isnan(me)) ln_max_mean_abs = me;
                if (mtol > 0 && me / mtol > ln_max_mean_ratio) ln_max_mean_ratio = me / mtol;
                if (re > ln_max_rstd_rel || isnan(re)) ln_max_rstd_rel = re;
                check(me <= mtol, "layernorm %s row %lu: mean %.9g want %.17g (err %.3g, tol %.3g)",
                      ctx, (unsigned long)r, (double)mo[r], mref, me, mtol);
                check(re <= 1e-5, "layernorm %s row %lu: rstd %.9g want %.17g (rel err %.3g)",
                      ctx, (unsigned long)r, (double)ro[r], rref, re);
            }
        }
        check_guards("layernorm", ctx, "y", ym);
        if (!L->inplace) check_input_unchanged("layernorm", ctx, &xm, src);
        if (stats) {
            size_t badm = 0, badr = 0;
            for (i = rows; i < rows + TAIL; i++) {
                badm += !is_sentinel(mo + i);
                badr += !is_sentinel(ro + i);
            }
            check(badm == 0 && badr == 0, "layernorm %s: wrote past mean_out/rstd_out", ctx);
        }
        if (gamma)
            check(memcmp(g, gamma, n * sizeof(float)) == 0, "layernorm %s: gamma modified", ctx);
        if (beta)
            check(memcmp(b, beta, n * sizeof(float)) == 0, "layernorm %s: beta modified", ctx);
    }
    if (gamma) fbuf_free(&gb);
    if (beta) fbuf_free(&bb);
    if (stats) {
        fbuf_free(&mb);
        fbuf_free(&rb);
    }
    if (!L->inplace) mat_free(&ymm);
    mat_free(&xm);
    free(want);
}

static void run_rmsnorm(const char *tag, const float *src, size_t rows, size_t n,
                        const float *gamma, float eps, const layout *L)
{
    char ctx[240];
    mat xm, ymm, *ym;
    fbuf gb = {NULL, NULL, 0};
    float *g = NULL;
    size_t r;
    double *want = dalloc(n);
    attn_status st;

    snprintf(ctx, sizeof ctx, "[%s n=%lu rows=%lu eps=%g gamma=%s %s]", tag, (unsigned long)n,
             (unsigned long)rows, (double)eps, gamma ? "yes" : "NULL", L->name);
    mat_new(&xm, rows, n, L->xoff, n + L->xpad);
    mat_load(&xm, src);
    if (L->inplace) {
        ym = &xm;
    } else {
        mat_new(&ymm, rows, n, L->yoff, n + L->ypad);
        ym = &ymm;
    }
    if (gamma) {
        g = fbuf_new(&gb, n + L->yoff) + L->yoff;
        memcpy(g, gamma, n * sizeof(float));
    }
    st = attn_rmsnorm(xm.p, xm.ld, ym->p, ym->ld, rows, n, g, eps);
    if (check(st == ATTN_OK, "rmsnorm %s: status %d (%s)", ctx, (int)st,
              attn_status_string(st))) {
        for (r = 0; r < rows; r++) {
            ref_rmsnorm_row(src + r * n, n, gamma, eps, want);
            norm_check_row("rmsnorm", &rms_max_err, ctx, r, n, ym->p + r * ym->ld, want);
        }
        check_guards("rmsnorm", ctx, "y", ym);
        if (!L->inplace) check_input_unchanged("rmsnorm", ctx, &xm, src);
        if (gamma)
            check(memcmp(g, gamma, n * sizeof(float)) == 0, "rmsnorm %s: gamma modified", ctx);
    }
    if (gamma) fbuf_free(&gb);
    if (!L->inplace) mat_free(&ymm);
    mat_free(&xm);
    free(want);
}

static void test_norm_sweep(void)
{
    size_t si, li;
    int kind;
    for (si = 0; si < NSWEEP; si++) {
        size_t n = sweep_n(si), rows = 3;
        float *src = falloc(rows * n), *gamma = falloc(n), *beta = falloc(n);
        fill_uniform(gamma, n, 0.5f, 1.5f);
        fill_uniform(beta, n, -1.0f, 1.0f);
        for (li = 0; li < NLAYOUTS; li++)
            for (kind = 0; kind < 4; kind++) {
                size_t cfg = (li + (size_t)kind + si) % 4;
                const float *g = (cfg & 1) ? gamma : NULL, *b = (cfg & 2) ? beta : NULL;
                float eps;
                /* eps = 0 only where the variance is well away from 0 */
                if (kind <= 1 && n > 1)
                    eps = (cfg == 0) ? 0.0f : 1e-5f;
                else
                    eps = (cfg == 3) ? 1e-3f : 1e-5f;
                fill_kind(src, rows * n, kind);
                run_layernorm(kind_name[kind], src, rows, n, g, b, eps,
                              (int)((li + (size_t)kind) % 2), &layouts[li]);
                fill_kind(src, rows * n, kind);
                run_rmsnorm(kind_name[kind], src, rows, n, (cfg & 2) ? gamma : NULL,
                            (cfg == 1) ? 0.0f : (cfg == 2 ? 1e-3f : 1e-5f), &layouts[li]);
            }
        free(src);
        free(gamma);
        free(beta);
    }
}

static void test_norm_special(void)
{
    static const float consts[7] = {0.0f, 1000.25f, -999.9f, -3.7f, 1e-3f, 1e-38f, 1.0f};
    static const size_t ns[] = {1, 2, 3, 7, 8, 9, 16, 17, 33, 64, 100, 1000};
    size_t ni, r, j;
    for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
        size_t n = ns[ni], rows = 7;
        float *src = falloc(rows * n), *gamma = falloc(n), *beta = falloc(n);
        const layout *L = &layouts[ni % NLAYOUTS];
        fill_uniform(gamma, n, 0.5f, 1.5f);
        fill_uniform(beta, n, -1.0f, 1.0f);

        /* constant rows: the output is beta (0 without beta) */
        for (r = 0; r < rows; r++)
            for (j = 0; j < n; j++) src[r * n + j] = consts[r];
        run_layernorm("constant rows", src, rows, n, gamma, beta, 1e-5f, 1, L);
        run_layernorm("constant rows", src, rows, n, NULL, NULL, 1e-5f, 1, L);
        run_layernorm("constant rows", src, rows, n, NULL, beta, 1e-2f, 0, L);
        run_rmsnorm("constant rows", src, rows, n, gamma, 1e-5f, L);

        if (n > 1) {
            /* eps = 0 with non-constant rows, several scales */
            for (r = 0; r < rows; r++) {
                static const float mul[7] = {1.0f, 1e15f, 1e-15f, 1e-3f, 1e3f, 7.0f, 0.01f};
                for (j = 0; j < n; j++) src[r * n + j] = mul[r] * check_uniform(-1.0f, 1.0f);
            }
            src[0] = 1.0f; /* the first row: exact +-1 pattern */
            for (j = 1; j < n; j++) src[j] = (j % 2) ? -1.0f : 1.0f;
            run_layernorm("eps 0, scaled rows", src, rows, n, NULL, NULL, 0.0f, 1, L);
            run_layernorm("eps 0, scaled rows", src, rows, n, gamma, beta, 0.0f, 1, L);
            run_rmsnorm("eps 0, scaled rows", src, rows, n, NULL, 0.0f, L);
            run_rmsnorm("eps 0, scaled rows", src, rows, n, gamma, 0.0f, L);
        }
        /* eps = -0.0 is >= 0: valid */
        fill_kind(src, rows * n, 0);
        if (n > 1) run_layernorm("eps -0", src, rows, n, gamma, NULL, -0.0f, 1, L);
        run_rmsnorm("eps -0", src, rows, n, NULL, -0.0f, L);
        free(src);
        free(gamma);
        free(beta);
    }
}

/* ---- add ----------------------------------------------------------------------------------- */

static double add_max_err;
static long add_mismatch;

/* y0 (rows x n dense): initial y; x0: the addend (ignored in place, where x is y). */
static void run_add(const char *tag, const float *y0, const float *x0, size_t rows, size_t n,
                    const layout *L)
{
    char ctx[200];
    mat ym, xmm, *xm;
    size_t r, j, bad = 0, br = 0, bc = 0;
    attn_status st;

    snprintf(ctx, sizeof ctx, "[%s n=%lu rows=%lu %s]", tag, (unsigned long)n,
             (unsigned long)rows, L->name);
    if (L->inplace) {
        mat_new(&ym, rows, n, L->xoff, n + L->xpad);
        xm = &ym;
    } else {
        mat_new(&ym, rows, n, L->yoff, n + L->ypad);
        mat_new(&xmm, rows, n, L->xoff, n + L->xpad);
        mat_load(&xmm, x0);
        xm = &xmm;
    }
    mat_load(&ym, y0);
    st = attn_add(ym.p, ym.ld, xm->p, xm->ld, rows, n);
    if (check(st == ATTN_OK, "add %s: status %d (%s)", ctx, (int)st, attn_status_string(st))) {
        for (r = 0; r < rows; r++)
            for (j = 0; j < n; j++) {
                float a = y0[r * n + j], b = L->inplace ? a : x0[r * n + j];
                float want = ftz32(ref_add(ftz32(a), ftz32(b))), got = ym.p[r * ym.ld + j];
                int ok = isnan(want) ? isnan(got) != 0 : same_bits(got, want);
                if (!ok) {
                    double e = fabs((double)got - (double)want);
                    if (!bad) {
                        br = r;
                        bc = j;
                    }
                    bad++;
                    add_mismatch++;
                    if (e > add_max_err || isnan(e)) add_max_err = e;
                }
            }
        check(bad == 0, "add %s: %lu wrong, first row %lu col %lu: %.9g + %.9g gave %.9g want %.9g",
              ctx, (unsigned long)bad, (unsigned long)br, (unsigned long)bc,
              (double)y0[br * n + bc], (double)(L->inplace ? y0[br * n + bc] : x0[br * n + bc]),
              (double)ym.p[br * ym.ld + bc],
              (double)ref_add(y0[br * n + bc], L->inplace ? y0[br * n + bc] : x0[br * n + bc]));
        check_guards("add", ctx, "y", &ym);
        if (!L->inplace) check_input_unchanged("add", ctx, xm, x0);
    }
    if (!L->inplace) mat_free(&xmm);
    mat_free(&ym);
}

/* Calls far out of the caches (past ATTN__SM_FAR bytes) write y by non-temporal stores where
 * the ISA has them (attn__norm_stream): the same bits as the same rows normed a row at a time
 * (in cache, normal stores), for the batched short rows and the long rows' path. */
static void test_norm_far(void)
{
    static const size_t shapes[2][2] = {{65600, 128}, {2049, 4096}};
    size_t si, r, i;
    for (si = 0; si < 2 && ATTN__HAVE_VSTREAM; si++) {
        const size_t rows = shapes[si][0], n = shapes[si][1], len = rows * n;
        float *x = falloc(len), *yraw = falloc(len + 16), *y = yraw;
        float *y1 = falloc(n), *g = falloc(n), *b = falloc(n), *mu = falloc(rows);
        float *rs = falloc(rows);
        size_t bad = 0, badm = 0;
        while ((uintptr_t)y % 64) y++; /* every row on a vector boundary */
        fill_uniform(x, len, -2.0f, 3.0f);
        fill_uniform(g, n, 0.5f, 1.5f);
        fill_uniform(b, n, -0.5f, 0.5f);
        check(attn__norm_stream(x, y, n, rows, n), "norm far %lu x %lu: not streamed",
              (unsigned long)rows, (unsigned long)n);
        check(attn_layernorm(x, n, y, n, rows, n, g, b, 1e-5f, mu, rs) == ATTN_OK, "layernorm far");
        for (r = 0; r < rows; r++) {
            float m1, r1;
            attn_layernorm(x + r * n, n, y1, n, 1, n, g, b, 1e-5f, &m1, &r1);
            for (i = 0; i < n; i++) bad += !same_bits(y[r * n + i], y1[i]);
            badm += !same_bits(mu[r], m1) || !same_bits(rs[r], r1);
        }
        check(bad == 0 && badm == 0, "layernorm far %lu x %lu: %lu outputs, %lu statistics differ "
              "from the rows alone", (unsigned long)rows, (unsigned long)n, (unsigned long)bad,
              (unsigned long)badm);
        bad = 0;
        check(attn_rmsnorm(x, n, y, n, rows, n, g, 1e-5f) == ATTN_OK, "rmsnorm far");
        for (r = 0; r < rows; r++) {
            attn_rmsnorm(x + r * n, n, y1, n, 1, n, g, 1e-5f);
            for (i = 0; i < n; i++) bad += !same_bits(y[r * n + i], y1[i]);
        }
        check(bad == 0, "rmsnorm far %lu x %lu: %lu outputs differ from the rows alone",
              (unsigned long)rows, (unsigned long)n, (unsigned long)bad);
        free(x), free(yraw), free(y1), free(g), free(b), free(mu), free(rs);
    }
}

static void test_add(void)
{
    size_t si, li;
    int kind;
    for (si = 0; si < NSWEEP; si++) {
        size_t n = sweep_n(si), rows = 3;
        float *y0 = falloc(rows * n), *x0 = falloc(rows * n);
        for (li = 0; li < NLAYOUTS; li++)
            for (kind = 0; kind < 2; kind++) {
                fill_kind(y0, rows * n, kind);
                fill_kind(x0, rows * n, 1 - kind);
                run_add(kind_name[kind], y0, x0, rows, n, &layouts[li]);
            }
        free(y0);
        free(x0);
    }
    {
        /* special values: inf, NaN, overflow to inf, denormals, signed zeros, cancellation */
        static const size_t ns[] = {1, 5, 8, 13, 16, 33};
        size_t ni, j, li2;
        for (ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
            size_t n = ns[ni], rows = 2;
            float *y0 = falloc(rows * n), *x0 = falloc(rows * n);
            for (j = 0; j < rows * n; j++) {
                float dn = ldexpf((float)(j % 5 + 1), -149);
                switch (j % 11) {
                case 0: y0[j] = INFINITY; x0[j] = -INFINITY; break;
                case 1: y0[j] = NAN; x0[j] = 1.0f; break;
                case 2: y0[j] = 3e38f; x0[j] = 3e38f; break;
                case 3: y0[j] = dn; x0[j] = dn; break;
                case 4: y0[j] = -0.0f; x0[j] = -0.0f; break;
                case 5: y0[j] = 0.0f; x0[j] = -0.0f; break;
                case 6: y0[j] = 1.0f; x0[j] = ldexpf(1.0f, -24); break; /* ties to even */
                case 7: y0[j] = 1.0f + ldexpf(1.0f, -23); x0[j] = ldexpf(1.0f, -24); break;
                case 8: y0[j] = 1e-38f; x0[j] = -1.0000001e-38f; break;
                case 9: y0[j] = -INFINITY; x0[j] = 5.0f; break;
                default: y0[j] = 1.5f; x0[j] = NAN; break;
                }
            }
            for (li2 = 0; li2 < NLAYOUTS; li2++) run_add("special", y0, x0, rows, n, &layouts[li2]);
            free(y0);
            free(x0);
        }
    }
}

/* ---- positional encoding ---------------------------------------------------------------- */

static double pe_max_abs, pe_max_norm, pe_add_max_norm;

/* init (rows x d dense) is the initial content for add != 0; with add == 0 the data
 * region starts as the sentinel. */
static void run_pe(const char *tag, size_t rows, size_t d, size_t pos0, int add, size_t off,
                   size_t pad, const float *init)
{
    char ctx[200];
    mat pm;
    size_t r, c, bad = 0, br = 0, bcol = 0;
    double bgot = 0, bwant = 0;
    attn_status st;

    snprintf(ctx, sizeof ctx, "[%s rows=%lu d=%lu pos0=%lu add=%d off=%lu ld=d+%lu]", tag,
             (unsigned long)rows, (unsigned long)d, (unsigned long)pos0, add,
             (unsigned long)off, (unsigned long)pad);
    mat_new(&pm, rows, d, off, d + pad);
    if (add) mat_load(&pm, init);
    st = attn_positional_encoding(pm.p, pm.ld, rows, d, pos0, add);
    if (check(st == ATTN_OK, "positional_encoding %s: status %d (%s)", ctx, (int)st,
              attn_status_string(st))) {
        for (r = 0; r < rows; r++)
            for (c = 0; c < d; c++) {
                double enc = ref_pe(pos0 + r, c, d), got = pm.p[r * pm.ld + c], want, e, tol;
                if (add) {
                    double base = init[r * d + c];
                    want = base + enc;
                    /* "computed in double and rounded once": (float)(pe + enc) */
                    tol = 6e-8 * (fabs(want) > 1.0 ? fabs(want) : 1.0);
                    e = fabs(got - want);
                    if (e / (fabs(want) > 1.0 ? fabs(want) : 1.0) > pe_add_max_norm || isnan(e))
                        pe_add_max_norm = e / (fabs(want) > 1.0 ? fabs(want) : 1.0);
                } else {
                    want = enc;
                    tol = 6e-8 * (fabs(want) > 1.0 ? fabs(want) : 1.0);
                    e = fabs(got - want);
                    if (e > pe_max_abs || isnan(e)) pe_max_abs = e;
                    if (e / (tol / 6e-8) > pe_max_norm || isnan(e)) pe_max_norm = e / (tol / 6e-8);
                }
                if (!(e <= tol && e <= 1e-6 * (fabs(want) > 1.0 ? fabs(want) : 1.0))) {
                    if (!bad) {
                        br = r;
                        bcol = c;
                        bgot = got;
                        bwant = want;
                    }
                    bad++;
                }
            }
        check(bad == 0,
              "positional_encoding %s: %lu wrong, first row %lu col %lu: got %.9g want %.17g (err "
              "%.3g)",
              ctx, (unsigned long)bad, (unsigned long)br, (unsigned long)bcol, bgot, bwant,
              fabs(bgot - bwant));
        check_guards("positional_encoding", ctx, "pe", &pm);
    }
    mat_free(&pm);
}

static void test_pe(void)
{
    size_t si;
    for (si = 0; si < NSWEEP; si++) {
        size_t d = sweep_n(si), rows = 3;
        float *init = falloc(rows * d);
        fill_uniform(init, rows * d, -1.0f, 1.0f);
        run_pe("store", rows, d, 0, 0, 0, 0, NULL);
        run_pe("store", rows, d, 1, 0, 1, 0, NULL);
        run_pe("store", rows, d, 1000, 0, 0, 5, NULL);
        run_pe("add", rows, d, 7, 1, 1, 3, init);
        run_pe("add", rows, d, 100000, -1, 0, 0, init);
        free(init);
    }
    {
        float *init = falloc(64 * 64);
        fill_uniform(init, 64 * 64, -30.0f, 30.0f);
        run_pe("store", 64, 64, 0, 0, 1, 0, NULL);
        run_pe("store", 2, 512, 1000000, 0, 0, 0, NULL);
        run_pe("store", 5, 6, 123456789, 0, 0, 2, NULL);
        run_pe("store", 8, 6, ((size_t)1 << 27) - 8, 0, 0, 0, NULL); /* the bound's range */
        run_pe("add", 64, 64, 3, 2, 0, 1, init);
        free(init);
    }
}

/* ---- error paths --------------------------------------------------------------------------- */

#define EB 64
typedef struct errbufs {
    fbuf xb, yb, gb, bb, mb, rb;
    float *x, *y, *g, *b, *mean, *rstd;
    float x0[EB];
} errbufs;

static void eb_init(errbufs *e, int yvalues)
{
    size_t i;
    e->x = fbuf_new(&e->xb, EB);
    e->y = fbuf_new(&e->yb, EB);
    e->g = fbuf_new(&e->gb, EB);
    e->b = fbuf_new(&e->bb, EB);
    e->mean = fbuf_new(&e->mb, EB);
    e->rstd = fbuf_new(&e->rb, EB);
    for (i = 0; i < EB; i++) {
        e->x[i] = e->x0[i] = 0.1f * (float)i - 2.0f;
        e->g[i] = 1.0f;
        e->b[i] = 0.0f;
    }
    if (yvalues) /* add: y is an input too; make it differ from the sentinel */
        for (i = 0; i < EB; i++) e->y[i] = (float)i;
}

/* Nothing written: y, mean and rstd keep their initial content; x, gamma, beta intact. */
static int eb_untouched(const errbufs *e, int yvalues)
{
    size_t i;
    for (i = 0; i < EB; i++) {
        if (yvalues ? !same_bits(e->y[i], (float)i) : !is_sentinel(e->y + i)) return 0;
        if (!is_sentinel(e->mean + i) || !is_sentinel(e->rstd + i)) return 0;
        if (!same_bits(e->x[i], e->x0[i]) || e->g[i] != 1.0f || e->b[i] != 0.0f) return 0;
    }
    return 1;
}

static void eb_free(errbufs *e)
{
    fbuf_free(&e->xb);
    fbuf_free(&e->yb);
    fbuf_free(&e->gb);
    fbuf_free(&e->bb);
    fbuf_free(&e->mb);
    fbuf_free(&e->rb);
}

static void expect_status(const char *op, const char *what, attn_status st, attn_status want,
                          const errbufs *e, int yvalues)
{
    check(st == want, "%s error path (%s): status %d (%s), want %d (%s)", op, what, (int)st,
          attn_status_string(st), (int)want, attn_status_string(want));
    check(eb_untouched(e, yvalues), "%s error path (%s): an output or input was written", op,
          what);
}

/* which: 0 valid, 1 x NULL, 2 y NULL, 3 y = x (in place) */
/* y of an error case: which 2 NULL, 3 and 5 x itself (5: with another ldy), 4 inside x */
static float *err_y(errbufs *e, int which)
{
    return which == 2 ? NULL : which == 3 || which == 5 ? e->x : which == 4 ? e->x + 3 : e->y;
}

static void softmax_err(const char *what, int which, size_t rows, size_t n, size_t ldx,
                        size_t ldy, float scale, attn_status want)
{
    errbufs e;
    attn_status st;
    eb_init(&e, 0);
    st = attn_softmax(which == 1 ? NULL : e.x, ldx, err_y(&e, which), ldy, rows, n, scale);
    expect_status("softmax", what, st, want, &e, 0);
    eb_free(&e);
}

/* which: 0 valid, 1 x NULL, 2 y NULL, 3 y = x, 4 y inside x, 5 y = x with another ldy,
 * 6 mean_out inside y, 7 rstd_out inside x, 8 y over gamma; mean_out/rstd_out passed */
static void layernorm_err(const char *what, int which, size_t rows, size_t n, size_t ldx,
                          size_t ldy, float eps, attn_status want)
{
    errbufs e;
    attn_status st;
    eb_init(&e, 0);
    st = attn_layernorm(which == 1 ? NULL : e.x, ldx, which == 8 ? e.g : err_y(&e, which), ldy,
                        rows, n, e.g, e.b, eps, which == 6 ? e.y + 5 : e.mean,
                        which == 7 ? e.x + 1 : e.rstd);
    expect_status("layernorm", what, st, want, &e, 0);
    eb_free(&e);
}

static void rmsnorm_err(const char *what, int which, size_t rows, size_t n, size_t ldx,
                        size_t ldy, float eps, attn_status want)
{
    errbufs e;
    attn_status st;
    eb_init(&e, 0);
    st = attn_rmsnorm(which == 1 ? NULL : e.x, ldx, which == 8 ? e.g : err_y(&e, which), ldy,
                      rows, n, e.g, eps);
    expect_status("rmsnorm", what, st, want, &e, 0);
    eb_free(&e);
}

static void add_err(const char *what, int which, size_t rows, size_t n, size_t ldx, size_t ldy,
                    attn_status want)
{
    errbufs e;
    attn_status st;
    eb_init(&e, 1);
    st = attn_add(err_y(&e, which), ldy, which == 1 ? NULL : e.x, ldx, rows, n);
    expect_status("add", what, st, want, &e, 1);
    eb_free(&e);
}

static void pe_err(const char *what, int isnull, size_t rows, size_t d, size_t ld, int add,
                   attn_status want)
{
    errbufs e;
    attn_status st;
    eb_init(&e, 1);
    st = attn_positional_encoding(isnull ? NULL : e.y, ld, rows, d, 3, add);
    expect_status(add ? "positional_encoding(add)" : "positional_encoding", what, st, want, &e, 1);
    eb_free(&e);
}

#define PMAXF ((size_t)PTRDIFF_MAX / sizeof(float))

typedef struct ovf {
    const char *what;
    size_t rows, n, ldx, ldy;
} ovf;

static const ovf ovfs[] = {
    {"rows = SIZE_MAX", SIZE_MAX, 1, 1, 1},
    {"rows = PTRDIFF_MAX/4 + 1, n = ld = 1", PMAXF + 1, 1, 1, 1},
    {"x: (rows-1)*ldx + n = PTRDIFF_MAX/4 + 1", 2, 1, PMAXF, 1},
    {"y: (rows-1)*ldy + n = PTRDIFF_MAX/4 + 1", 2, 1, 1, PMAXF},
    {"x: (rows-1)*ldx wraps to 0", 5, 2, SIZE_MAX / 4 + 1, 2},
    {"y: (rows-1)*ldy wraps to 0", 5, 2, 2, SIZE_MAX / 4 + 1},
    {"x: (rows-1)*ldx + n wraps to 0", 2, 2, SIZE_MAX - 1, 2},
    {"y: (rows-1)*ldy + n wraps to 0", 2, 2, 2, SIZE_MAX - 1},
    {"n = PTRDIFF_MAX/4 + 1", 1, PMAXF + 1, PMAXF + 1, PMAXF + 1},
    {"n = SIZE_MAX", 1, SIZE_MAX, SIZE_MAX, SIZE_MAX},
    {"rows = ld = SIZE_MAX/2", SIZE_MAX / 2, 3, SIZE_MAX / 2, SIZE_MAX / 2},
};
#define NOVF (sizeof ovfs / sizeof ovfs[0])

static void test_errors(void)
{
    static const float bad_eps_v[6] = {-1.0f, -FLT_MIN, -1e-45f, NAN, INFINITY, -INFINITY};
    static const char *bad_eps_s[6] = {"eps -1", "eps -FLT_MIN", "eps -denormal", "eps NaN",
                                       "eps +inf", "eps -inf"};
    static const float bad_scale_v[3] = {NAN, INFINITY, -INFINITY};
    static const char *bad_scale_s[3] = {"scale NaN", "scale +inf", "scale -inf"};
    size_t i;
    int inplace;
    char what[160];

    /* sanity: the harness accepts a valid call (so the error cases differ only by one argument) */
    {
        errbufs e;
        eb_init(&e, 0);
        check(attn_softmax(e.x, 8, e.y, 8, 2, 8, 1.0f) == ATTN_OK, "softmax valid call failed");
        check(attn_layernorm(e.x, 8, e.y, 8, 2, 8, e.g, e.b, 1e-5f, e.mean, e.rstd) == ATTN_OK,
              "layernorm valid call failed");
        check(attn_rmsnorm(e.x, 8, e.y, 8, 2, 8, e.g, 1e-5f) == ATTN_OK,
              "rmsnorm valid call failed");
        check(attn_add(e.y, 8, e.x, 8, 2, 8) == ATTN_OK, "add valid call failed");
        check(attn_positional_encoding(e.y, 8, 2, 8, 0, 0) == ATTN_OK, "pe valid call failed");
        eb_free(&e);
    }

    /* NULL pointers */
    softmax_err("x NULL", 1, 2, 8, 8, 8, 1.0f, ATTN_ERR_NULL);
    softmax_err("y NULL", 2, 2, 8, 8, 8, 1.0f, ATTN_ERR_NULL);
    layernorm_err("x NULL", 1, 2, 8, 8, 8, 1e-5f, ATTN_ERR_NULL);
    layernorm_err("y NULL", 2, 2, 8, 8, 8, 1e-5f, ATTN_ERR_NULL);
    rmsnorm_err("x NULL", 1, 2, 8, 8, 8, 1e-5f, ATTN_ERR_NULL);
    rmsnorm_err("y NULL", 2, 2, 8, 8, 8, 1e-5f, ATTN_ERR_NULL);
    add_err("x NULL", 1, 2, 8, 8, 8, ATTN_ERR_NULL);
    add_err("y NULL", 2, 2, 8, 8, 8, ATTN_ERR_NULL);
    pe_err("pe NULL", 1, 2, 8, 8, 0, ATTN_ERR_NULL);
    pe_err("pe NULL", 1, 2, 8, 8, 1, ATTN_ERR_NULL);

    for (inplace = 0; inplace < 2; inplace++) {
        int w = inplace ? 3 : 0;
        const char *ip = inplace ? " (in place)" : "";
        /* zero sizes */
        snprintf(what, sizeof what, "rows = 0%s: an empty call", ip);
        softmax_err(what, w, 0, 8, 8, 8, 1.0f, ATTN_OK);
        layernorm_err(what, w, 0, 8, 8, 8, 1e-5f, ATTN_OK);
        rmsnorm_err(what, w, 0, 8, 8, 8, 1e-5f, ATTN_OK);
        add_err(what, w, 0, 8, 8, 8, ATTN_OK);
        snprintf(what, sizeof what, "n = 0%s", ip);
        softmax_err(what, w, 2, 0, 8, 8, 1.0f, ATTN_ERR_SIZE);
        layernorm_err(what, w, 2, 0, 8, 8, 1e-5f, ATTN_ERR_SIZE);
        rmsnorm_err(what, w, 2, 0, 8, 8, 1e-5f, ATTN_ERR_SIZE);
        add_err(what, 0, 2, 0, 8, 8, ATTN_ERR_SIZE);

        /* bad values */
        for (i = 0; i < 3; i++) {
            snprintf(what, sizeof what, "%s%s", bad_scale_s[i], ip);
            softmax_err(what, w, 2, 8, 8, 8, bad_scale_v[i], ATTN_ERR_ARG);
        }
        for (i = 0; i < 6; i++) {
            snprintf(what, sizeof what, "%s%s", bad_eps_s[i], ip);
            layernorm_err(what, w, 2, 8, 8, 8, bad_eps_v[i], ATTN_ERR_ARG);
            rmsnorm_err(what, w, 2, 8, 8, 8, bad_eps_v[i], ATTN_ERR_ARG);
        }
    }
    /* rows = 0: pointers unchecked, the other arguments still are */
    for (i = 1; i <= 2; i++) {
        softmax_err("rows = 0, a NULL", (int)i, 0, 8, 8, 8, 1.0f, ATTN_OK);
        layernorm_err("rows = 0, a NULL", (int)i, 0, 8, 8, 8, 1e-5f, ATTN_OK);
        rmsnorm_err("rows = 0, a NULL", (int)i, 0, 8, 8, 8, 1e-5f, ATTN_OK);
        add_err("rows = 0, a NULL", (int)i, 0, 8, 8, 8, ATTN_OK);
    }
    softmax_err("rows = 0, n = 0", 0, 0, 0, 8, 8, 1.0f, ATTN_ERR_SIZE);
    softmax_err("rows = 0, ldy < n", 0, 0, 8, 8, 7, 1.0f, ATTN_ERR_LD);
    softmax_err("rows = 0, scale NaN", 0, 0, 8, 8, 8, NAN, ATTN_ERR_ARG);
    layernorm_err("rows = 0, eps < 0", 0, 0, 8, 8, 8, -1.0f, ATTN_ERR_ARG);
    pe_err("rows = 0", 0, 0, 8, 8, 0, ATTN_OK);
    pe_err("rows = 0, pe NULL", 1, 0, 8, 8, 0, ATTN_OK);
    /* overlaps other than exactly in place: nothing written */
    softmax_err("y inside x", 4, 2, 8, 8, 8, 1.0f, ATTN_ERR_ALIAS);
    softmax_err("y = x, ldy != ldx", 5, 2, 8, 8, 12, 1.0f, ATTN_ERR_ALIAS);
    softmax_err("y = x, one row, ldy != ldx", 5, 1, 8, 8, 12, 1.0f, ATTN_ERR_ALIAS);
    softmax_err("rows overlapping, one ld", 4, 2, 5, 8, 8, 1.0f, ATTN_ERR_ALIAS);
    softmax_err("rows interleaved, ldy != ldx", 4, 2, 3, 8, 9, 1.0f, ATTN_ERR_ALIAS);
    layernorm_err("y inside x", 4, 2, 8, 8, 8, 1e-5f, ATTN_ERR_ALIAS);
    layernorm_err("y = x, ldy != ldx", 5, 2, 8, 8, 12, 1e-5f, ATTN_ERR_ALIAS);
    layernorm_err("mean_out inside y", 6, 2, 8, 8, 8, 1e-5f, ATTN_ERR_ALIAS);
    layernorm_err("rstd_out inside x", 7, 2, 8, 8, 8, 1e-5f, ATTN_ERR_ALIAS);
    layernorm_err("y over gamma", 8, 2, 8, 8, 8, 1e-5f, ATTN_ERR_ALIAS);
    rmsnorm_err("y inside x", 4, 2, 8, 8, 8, 1e-5f, ATTN_ERR_ALIAS);
    rmsnorm_err("y = x, ldy != ldx", 5, 2, 8, 8, 12, 1e-5f, ATTN_ERR_ALIAS);
    rmsnorm_err("y over gamma", 8, 2, 8, 8, 8, 1e-5f, ATTN_ERR_ALIAS);
    add_err("y inside x", 4, 2, 8, 8, 8, ATTN_ERR_ALIAS);
    add_err("y = x, ldy != ldx", 5, 2, 8, 8, 12, ATTN_ERR_ALIAS);
    pe_err("d = 0", 0, 2, 0, 8, 0, ATTN_ERR_SIZE);
    pe_err("d = 0", 0, 2, 0, 8, 1, ATTN_ERR_SIZE);

    /* leading dimensions below the row, with 2 rows and with 1 row */
    for (i = 1; i <= 2; i++) {
        snprintf(what, sizeof what, "ldx = n - 1, rows = %lu", (unsigned long)i);
        softmax_err(what, 0, i, 8, 7, 8, 1.0f, ATTN_ERR_LD);
        layernorm_err(what, 0, i, 8, 7, 8, 1e-5f, ATTN_ERR_LD);
        rmsnorm_err(what, 0, i, 8, 7, 8, 1e-5f, ATTN_ERR_LD);
        add_err(what, 0, i, 8, 7, 8, ATTN_ERR_LD);
        snprintf(what, sizeof what, "ldy = n - 1, rows = %lu", (unsigned long)i);
        softmax_err(what, 0, i, 8, 8, 7, 1.0f, ATTN_ERR_LD);
        layernorm_err(what, 0, i, 8, 8, 7, 1e-5f, ATTN_ERR_LD);
        rmsnorm_err(what, 0, i, 8, 8, 7, 1e-5f, ATTN_ERR_LD);
        add_err(what, 0, i, 8, 8, 7, ATTN_ERR_LD);
        snprintf(what, sizeof what, "ldx = ldy = 0, rows = %lu", (unsigned long)i);
        softmax_err(what, 0, i, 1, 0, 0, 1.0f, ATTN_ERR_LD);
        layernorm_err(what, 0, i, 1, 0, 0, 1e-5f, ATTN_ERR_LD);
        rmsnorm_err(what, 0, i, 1, 0, 0, 1e-5f, ATTN_ERR_LD);
        add_err(what, 0, i, 1, 0, 0, ATTN_ERR_LD);
        snprintf(what, sizeof what, "in place, ld = n - 1, rows = %lu", (unsigned long)i);
        softmax_err(what, 3, i, 8, 7, 7, 1.0f, ATTN_ERR_LD);
        snprintf(what, sizeof what, "ldpe = d - 1, rows = %lu", (unsigned long)i);
        pe_err(what, 0, i, 8, 7, 0, ATTN_ERR_LD);
        pe_err(what, 0, i, 8, 7, 1, ATTN_ERR_LD);
    }

    /* sizes that overflow size_t or the address space: real small pointers, detected
     * before any memory is touched */
    for (i = 0; i < NOVF; i++) {
        const ovf *o = &ovfs[i];
        softmax_err(o->what, 0, o->rows, o->n, o->ldx, o->ldy, 1.0f, ATTN_ERR_OVERFLOW);
        layernorm_err(o->what, 0, o->rows, o->n, o->ldx, o->ldy, 1e-5f, ATTN_ERR_OVERFLOW);
        rmsnorm_err(o->what, 0, o->rows, o->n, o->ldx, o->ldy, 1e-5f, ATTN_ERR_OVERFLOW);
        add_err(o->what, 0, o->rows, o->n, o->ldx, o->ldy, ATTN_ERR_OVERFLOW);
        if (o->ldx == o->ldy) {
            softmax_err(o->what, 3, o->rows, o->n, o->ldx, o->ldy, 1.0f, ATTN_ERR_OVERFLOW);
            pe_err(o->what, 0, o->rows, o->n, o->ldx, 0, ATTN_ERR_OVERFLOW);
            pe_err(o->what, 0, o->rows, o->n, o->ldx, 1, ATTN_ERR_OVERFLOW);
        } else {
            /* the pe has one leading dimension: take the larger one */
            pe_err(o->what, 0, o->rows, o->n, o->ldx > o->ldy ? o->ldx : o->ldy, 0,
                   ATTN_ERR_OVERFLOW);
        }
    }

    /* one row: only (rows-1)*ld + n = n floats are addressed, so a huge ld is fine */
    {
        errbufs e;
        float want[4];
        double w[4];
        size_t j;
        int ok = 1;
        eb_init(&e, 0);
        check(attn_softmax(e.x, SIZE_MAX, e.y, SIZE_MAX, 1, 4, 1.0f) == ATTN_OK,
              "softmax rows = 1, ld = SIZE_MAX: should be valid ((rows-1)*ld + n = n)");
        ref_softmax_row(e.x, 4, 1.0f, w);
        for (j = 0; j < 4; j++) {
            want[j] = (float)w[j];
            ok &= fabs((double)e.y[j] - w[j]) <= 1e-6 * w[j];
        }
        for (j = 4; j < EB; j++) ok &= is_sentinel(e.y + j);
        check(ok, "softmax rows = 1, ld = SIZE_MAX: wrong output (%.9g, want %.9g)",
              (double)e.y[0], (double)want[0]);
        eb_free(&e);
    }
}

static void test_status_strings(void)
{
    static const attn_status codes[9] = {ATTN_OK,        ATTN_ERR_NULL,      ATTN_ERR_SIZE,
                                         ATTN_ERR_LD,    ATTN_ERR_WORKSPACE, ATTN_ERR_OVERFLOW,
                                         ATTN_ERR_ARG,   ATTN_ERR_CAPACITY,  ATTN_ERR_ALIAS};
    const char *s[9];
    size_t i, j;
    for (i = 0; i < 9; i++) {
        s[i] = attn_status_string(codes[i]);
        check(s[i] != NULL && s[i][0] != '\0', "attn_status_string(%d) is NULL or empty",
              (int)codes[i]);
    }
    for (i = 0; i < 9; i++)
        for (j = i + 1; j < 9; j++)
            if (s[i] && s[j])
                check(strcmp(s[i], s[j]) != 0,
                      "attn_status_string(%d) == attn_status_string(%d): \"%s\"", (int)codes[i],
                      (int)codes[j], s[i]);
    {
        const char *u1 = attn_status_string((attn_status)-9);
        const char *u2 = attn_status_string((attn_status)7);
        check(u1 != NULL && u1[0] != '\0', "attn_status_string(-9) is NULL or empty");
        check(u2 != NULL && u2[0] != '\0', "attn_status_string(7) is NULL or empty");
#ifndef __cplusplus
        {
            const char *u3 = attn_status_string((attn_status)-1000);
            const char *u4 = attn_status_string((attn_status)1000);
            check(u3 != NULL && u3[0] != '\0', "attn_status_string(-1000) is NULL or empty");
            check(u4 != NULL && u4[0] != '\0', "attn_status_string(1000) is NULL or empty");
        }
#endif
    }
    {
#if defined(ATTN_NO_SIMD)
        const char *isa = "scalar";
#elif defined(__AVX512F__) && !defined(ATTN_NO_AVX512)
        const char *isa = "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
        const char *isa = "avx2";
#elif defined(__aarch64__) && defined(__ARM_NEON)
        const char *isa = "neon";
#elif defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)
        const char *isa = "neon32";
#elif defined(__wasm_simd128__)
        const char *isa = "wasm";
#else
        const char *isa = "scalar";
#endif
        check(strcmp(attn_isa(), isa) == 0, "attn_isa() = \"%s\", this build should be \"%s\"",
              attn_isa(), isa);
    }
}

/* Results are identical run to run, and a row's result does not depend on the other rows
 * of the call nor on where the row sits in memory (a job system may split the rows). Short
 * rows are processed in pairs and batches of 8: R = 11 rows give a full batch, a partial
 * one, pairs and an odd row out; the lengths cover every path (pairs, one row at a time
 * within one summation block, longer rows) at VW = 1, 4 and 8. */
static void test_determinism(void)
{
    enum { R = 11, N = 1000, LD = 1003 };
    static float x[R * LD + 8], y1[R * LD], y2[R * LD], y3[N + 8];
    static const size_t lens[8] = {7, 40, 64, 100, 200, 256, 333, 1000};
    size_t t, r, i, op;
    for (i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = check_uniform(-20.0f, 20.0f);
    for (op = 0; op < 3; op++)
        for (t = 0; t < 8; t++) {
            const size_t n = lens[t];
            for (r = 0; r < 2; r++) {
                float *y = r ? y2 : y1;
                if (op == 0) attn_softmax(x, LD, y, LD, R, n, 0.7f);
                else if (op == 1) attn_layernorm(x, LD, y, LD, R, n, NULL, NULL, 1e-5f, NULL, NULL);
                else attn_rmsnorm(x, LD, y, LD, R, n, NULL, 1e-5f);
            }
            check(memcmp(y1, y2, sizeof y1) == 0, "determinism op %zu n %zu: two runs differ", op,
                  n);
            for (r = 0; r < R; r++) { /* row r alone, copied to an address one float off */
                memcpy(y3 + 1, x + r * LD, n * sizeof(float));
                if (op == 0) attn_softmax(y3 + 1, n, y3 + 1, n, 1, n, 0.7f);
                else if (op == 1)
                    attn_layernorm(y3 + 1, n, y3 + 1, n, 1, n, NULL, NULL, 1e-5f, NULL, NULL);
                else attn_rmsnorm(y3 + 1, n, y3 + 1, n, 1, n, NULL, 1e-5f);
                check(memcmp(y3 + 1, y1 + r * LD, n * sizeof(float)) == 0,
                      "determinism op %zu n %zu row %zu: alone and unaligned differs from in the "
                      "batch",
                      op, n, r);
            }
        }
}

/* The overlap rule against brute force: two rows x n matrices in one buffer, y at byte
 * offset dy from x (any sign, also not a multiple of a float), share a byte exactly when
 * attn__mat_alias says so (row by row for one ld, extents for two); then a softmax over
 * interleaved rows (one ld) gives each row's own result. */
static void test_overlap_rule(void)
{
    static unsigned char mark[4096];
    static float buf[1024], ref[2048];
    long bad = 0, cases = 0;
    size_t rows, n, ldx, ldy, r, c, i;
    long dy;
    for (rows = 1; rows <= 4; rows++)
        for (n = 1; n <= 5; n++)
            for (ldx = n; ldx <= n + 6; ldx++)
                for (ldy = n; ldy <= n + 6; ldy += (ldy == ldx ? 1 : 3))
                    for (dy = -170; dy <= 170; dy++) {
                        const unsigned char *base = (const unsigned char *)(void *)buf + 1024;
                        const float *x = (const float *)(const void *)base;
                        const float *y = (const float *)(const void *)(base + dy);
                        int want = 0, got;
                        memset(mark, 0, sizeof mark);
                        for (r = 0; r < rows; r++)
                            for (c = 0; c < n * 4; c++) mark[1024 + (r * ldx) * 4 + c] = 1;
                        for (r = 0; r < rows && !want; r++)
                            for (c = 0; c < n * 4; c++)
                                if (mark[(size_t)(1024 + dy + (long)(r * ldy * 4 + c))]) want = 1;
                        got = attn__mat_alias(y, ldy, x, ldx, rows, n, 0);
                        if (ldx != ldy) want = want || got; /* extents: may refuse more */
                        bad += !check(got == want, "overlap rule: rows %zu n %zu ldx %zu ldy %zu"
                                      " dy %ld: %d, want %d", rows, n, ldx, ldy, dy, got, want);
                        cases++;
                    }
    printf("overlap rule: %ld layouts against brute force, %ld wrong\n", cases, bad);
    /* softmax from the even rows to the odd ones of one buffer (ld 2n for both) */
    for (i = 0; i < 1024; i++) buf[i] = ref[i] = (float)((i * 37) % 23) * 0.25f - 2.0f;
    check(attn_softmax(ref, 32, ref + 1024, 32, 16, 16, 1.0f) == ATTN_OK, "reference softmax");
    check(attn_softmax(buf, 32, buf + 16, 32, 16, 16, 1.0f) == ATTN_OK,
          "softmax over interleaved rows (one ld) refused");
    for (r = 0; r < 16; r++)
        for (c = 0; c < 16; c++)
            check(same_bits(buf[r * 32 + 16 + c], ref[1024 + r * 32 + c]) &&
                      same_bits(buf[r * 32 + c], ref[r * 32 + c]),
                  "interleaved softmax row %zu col %zu", r, c);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--far") == 0) sm_path = ATTN__SM_FAR_PATH;
    check_begin("rowops");
    check_seed(20240601);
    test_status_strings();
    test_errors();
    test_overlap_rule();
    test_softmax_sweep();
    test_softmax_special();
    test_norm_sweep();
    test_norm_special();
    test_norm_far();
    test_add();
    test_determinism();
    test_pe();
    printf(
        "max error softmax: rel %.3g (outputs > 1e-30, bound 1e-6), abs %.3g (outputs <= 1e-30, "
        "bound 1e-30), |row sum - 1| %.3g (bound 1e-6); %ld NaN outputs where a number was due\n",
        sm_max_rel, sm_max_tiny, sm_max_sum, sm_nan_bad);
    printf("max error layernorm: |dy|/(1+|y|) %.3g for |mean| <= 10 std, %.3g for |mean| > 10 std "
           "(bound 2e-6); mean abs %.3g (%.3g of its bound); rstd rel %.3g (bound 1e-5)\n",
           ln_max_err, ln_max_err_offset, ln_max_mean_abs, ln_max_mean_ratio, ln_max_rstd_rel);
    printf("max error rmsnorm: |dy|/(1+|y|) %.3g (bound 2e-6)\n", rms_max_err);
    printf("max error add: %.3g (%ld results not bit-exact, bound: exact)\n", add_max_err,
           add_mismatch);
    printf("max error positional_encoding: abs %.3g, |err|/max(1,|pe|) %.3g (bound 6e-8); add mode "
           "|err|/max(1,|pe+x|) %.3g (bound 6e-8)\n",
           pe_max_abs, pe_max_norm, pe_add_max_norm);
    return check_end("rowops");
}
