/* ---- layernorm, rmsnorm -------------------------------------------------------------- */

/* Sums of a row, vectorized with four accumulators and blocked so that the rounding
 * error grows with block + n/block terms, not n. mode 0: sum x; mode 1: sum (x-c) and
 * sum (x-c)^2 (into *s2); mode 2: sum x^2. */
static float attn__row_sums(const float *x, size_t n, int mode, float c, float *s2)
{
    const attn__v vc = attn__vset1(c);
    attn__v t1 = attn__vzero(), t2 = attn__vzero();
    size_t i = 0;
    while (i < n) {
        size_t end = n - i > ATTN__SUM_BLOCK ? i + ATTN__SUM_BLOCK : n;
        attn__v a0 = attn__vzero(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (; i + 4 * ATTN__VW <= end; i += 4 * ATTN__VW) { /* four chains hide the add latency */
            attn__v u0 = attn__vload(x + i), u1 = attn__vload(x + i + ATTN__VW);
            attn__v u2 = attn__vload(x + i + 2 * ATTN__VW), u3 = attn__vload(x + i + 3 * ATTN__VW);
            if (mode == 1) {
                u0 = attn__vsub(u0, vc);
                u1 = attn__vsub(u1, vc);
                u2 = attn__vsub(u2, vc);
                u3 = attn__vsub(u3, vc);
            }
            if (mode != 2) {
                a0 = attn__vadd(a0, u0);
                a1 = attn__vadd(a1, u1);
                a2 = attn__vadd(a2, u2);
                a3 = attn__vadd(a3, u3);
            }
            if (mode != 0) {
                b0 = attn__vfma(u0, u0, b0);
                b1 = attn__vfma(u1, u1, b1);
                b2 = attn__vfma(u2, u2, b2);
                b3 = attn__vfma(u3, u3, b3);
            }
        }
        for (; i < end; i += ATTN__VW) {
            size_t k = end - i;
            attn__v u0 = k >= ATTN__VW ? attn__vload(x + i)
                                       : attn__vload_part(x + i, k, mode == 1 ? c : 0.0f);
            if (mode == 1) u0 = attn__vsub(u0, vc);
            if (mode != 2) a0 = attn__vadd(a0, u0);
            if (mode != 0) b0 = attn__vfma(u0, u0, b0);
        }
        i = end;
        t1 = attn__vadd(t1, attn__vadd(attn__vadd(a0, a1), attn__vadd(a2, a3)));
        t2 = attn__vadd(t2, attn__vadd(attn__vadd(b0, b1), attn__vadd(b2, b3)));
    }
    if (s2) *s2 = attn__vhsum(t2);
    return attn__vhsum(t1);
}

/* The rare rows where float sums overflow, underflow or meet inf/NaN: in double. */
static void attn__norm_row_double(const float *x, float *y, size_t n, const float *g,
                                  const float *b, float eps, int rms, float *mean_out,
                                  float *rstd_out)
{
    double mean = 0, var = 0, rstd, f;
    size_t i;
    if (!rms) {
        for (i = 0; i < n; i++) mean += x[i];
        mean /= (double)n;
    }
    for (i = 0; i < n; i++) var += ((double)x[i] - mean) * ((double)x[i] - mean);
    var /= (double)n;
    rstd = 1.0 / sqrt(var + eps);
    /* var + eps = 0 (eps = 0 and a constant row, or an all-zero row for rmsnorm): every
     * x - mean is exactly 0 here (the sums of n equal floats are exact in double), so the
     * row normalizes to 0 (y = beta) rather than 0 * inf = NaN; rstd_out is +inf */
    f = rstd == HUGE_VAL ? 0.0 : rstd;
    for (i = 0; i < n; i++) {
        double v = ((double)x[i] - mean) * f;
        if (g) v *= g[i];
        if (b) v += b[i];
        y[i] = (float)v;
    }
    if (mean_out) *mean_out = (float)mean;
    if (rstd_out) *rstd_out = (float)rstd;
}

/* y = ((x - c) - d) * (rstd * g) + b over a row: c + d is the mean, kept as two floats
 * (x - c is exact for x near c); c = d = 0 and b = NULL for rmsnorm. One loop per case
 * (gamma, beta given or not, shifted or not), two vectors a step, the tail apart. */
static ATTN__FORCE_INLINE void attn__norm_apply_body(const float *x, float *y, size_t n, float c,
                                                     float d, float rstd, const float *g,
                                                     const float *b, int shift, int stream)
{
    const attn__v vc = attn__vset1(c), vd = attn__vset1(d), vr = attn__vset1(rstd);
    size_t i = 0;
#define ATTN__NORM_ONE(u, j)                                                                 \
    do {                                                                                     \
        attn__v sc_ = g ? attn__vmul(vr, attn__vload(g + (j))) : vr;                         \
        if (shift) u = attn__vsub(attn__vsub(u, vc), vd);                                    \
        u = b ? attn__vfma(u, sc_, attn__vload(b + (j))) : attn__vmul(u, sc_);               \
    } while (0)
#define ATTN__NORM_LOOPS(store)                                                              \
    do {                                                                                     \
        for (; i + 2 * ATTN__VW <= n; i += 2 * ATTN__VW) {                                   \
            attn__v u0 = attn__vload(x + i), u1 = attn__vload(x + i + ATTN__VW);             \
            ATTN__NORM_ONE(u0, i);                                                           \
            ATTN__NORM_ONE(u1, i + ATTN__VW);                                                \
            store(y + i, u0);                                                                \
            store(y + i + ATTN__VW, u1);                                                     \
        }                                                                                    \
        for (; i + ATTN__VW <= n; i += ATTN__VW) {                                           \
            attn__v u0 = attn__vload(x + i);                                                 \
            ATTN__NORM_ONE(u0, i);                                                           \
            store(y + i, u0);                                                                \
        }                                                                                    \
    } while (0)
    if (stream) ATTN__NORM_LOOPS(attn__vstream); /* y's rows aligned: attn__norm_stream */
    else ATTN__NORM_LOOPS(attn__vstore);
#undef ATTN__NORM_LOOPS
#undef ATTN__NORM_ONE
    if (i < n) {
        const size_t k = n - i;
        attn__v u = attn__vload_part(x + i, k, 0.0f), sc = vr, bias = attn__vzero();
        if (g) sc = attn__vmul(vr, attn__vload_part(g + i, k, 0.0f));
        if (b) bias = attn__vload_part(b + i, k, 0.0f);
        if (shift) u = attn__vsub(attn__vsub(u, vc), vd);
        attn__vstore_part(y + i, attn__vfma(u, sc, bias), k);
    }
}

static void attn__norm_apply(const float *x, float *y, size_t n, float c, float d, float rstd,
                             const float *g, const float *b, int st)
{
    const int shift = c != 0.0f || d != 0.0f;
    if (g && b) {
        if (shift) attn__norm_apply_body(x, y, n, c, d, rstd, g, b, 1, st);
        else attn__norm_apply_body(x, y, n, c, d, rstd, g, b, 0, st);
    } else if (g) {
        if (shift) attn__norm_apply_body(x, y, n, c, d, rstd, g, NULL, 1, st);
        else attn__norm_apply_body(x, y, n, c, d, rstd, g, NULL, 0, st);
    } else if (b) {
        if (shift) attn__norm_apply_body(x, y, n, c, d, rstd, NULL, b, 1, st);
        else attn__norm_apply_body(x, y, n, c, d, rstd, NULL, b, 0, st);
    } else {
        if (shift) attn__norm_apply_body(x, y, n, c, d, rstd, NULL, NULL, 1, st);
        else attn__norm_apply_body(x, y, n, c, d, rstd, NULL, NULL, 0, st);
    }
}

/* Whether a call writes y by non-temporal stores: far out of the caches (softmax's
 * threshold), where the ISA has them, y not x and every row of y on a vector boundary.
 * Normal stores first read each line of y from memory; these do not. */
static int attn__norm_stream(const float *x, const float *y, size_t ldy, size_t rows, size_t n)
{
    return ATTN__HAVE_VSTREAM && x != y && rows * n + 1 > ATTN__SM_FAR / sizeof(float) &&
           (uintptr_t)y % (ATTN__VW * sizeof(float)) == 0 && (rows == 1 || ldy % ATTN__VW == 0);
}

static attn_status attn__norm_check(const float *x, size_t ldx, float *y, size_t ldy,
                                    size_t rows, size_t n, float eps)
{
    attn_status st;
    if ((st = attn__rows_check(x, ldx, y, ldy, rows, n, 1)) != ATTN_OK) return st;
    if (!attn__finite(eps) || eps < 0) return ATTN_ERR_ARG;
    return ATTN_OK;
}

/* The mean of x[0..32), unrolled: (x0 + x1) + (x2 + x3) in vectors */
static ATTN__FORCE_INLINE float attn__norm_prefix_mean(const float *x)
{
    attn__v p0 = attn__vload(x), p1 = attn__vload(x + ATTN__VW);
    size_t i;
    for (i = 2 * ATTN__VW; i + 2 * ATTN__VW <= 32; i += 2 * ATTN__VW) {
        p0 = attn__vadd(p0, attn__vload(x + i));
        p1 = attn__vadd(p1, attn__vload(x + i + ATTN__VW));
    }
    return attn__vhsum(attn__vadd(p0, p1)) * (1.0f / 32.0f);
}

/* Short rows (n <= ATTN__NORM_SHORT: one block of attn__row_sums), K = 1 or 2 rows
 * at once: the sums of layernorm (mode 1: c the mean of the first 32 elements, or of the
 * row when shorter, then sum (x-c) into tv, sum (x-c)^2 into sv) or rmsnorm (mode 2: sum x^2 into
 * sv), left as vectors for attn__vhred8 to reduce a batch's rows together; each row by the same
 * operations in the same order, so a row's bits do not depend on its partner; two rows interleaved
 * overlap the latencies. Longer rows: two rows' accumulators would not fit the registers (n = 256
 * lost 6-15% out of cache on Zen 4). */
#define ATTN__NORM_SHORT (ATTN__SUM_BLOCK < 128 ? ATTN__SUM_BLOCK : 128)
static ATTN__FORCE_INLINE void attn__norm_sums_short(const float *x0, const float *x1, int K,
                                                     size_t n, int mode, float *c,
                                                     attn__v *tv, attn__v *sv)
{
    const float *xs[2];
    attn__v vc[2], a0[2], a1[2], a2[2], a3[2], b0[2], b1[2], b2[2], b3[2];
    size_t i;
    int k;
    xs[0] = x0;
    xs[1] = x1;
    ATTN__UNROLL
    for (k = 0; k < K; k++) {
        if (mode == 1) { /* the prefix mean, as attn_layernorm's general loop (each row's
                          * own loads first: out of cache, reading 8 rows' prefixes ahead
                          * of their sums halved the speed at n = 64) */
            c[k] = n >= 32 ? attn__norm_prefix_mean(xs[k])
                           : attn__row_sums(xs[k], n, 0, 0.0f, NULL) / (float)n;
        } else {
            c[k] = 0.0f;
        }
        vc[k] = attn__vset1(c[k]);
        a0[k] = a1[k] = a2[k] = a3[k] = b0[k] = b1[k] = b2[k] = b3[k] = attn__vzero();
    }
    for (i = 0; i + 4 * ATTN__VW <= n; i += 4 * ATTN__VW)
        ATTN__UNROLL
        for (k = 0; k < K; k++) {
            attn__v u0 = attn__vload(xs[k] + i), u1 = attn__vload(xs[k] + i + ATTN__VW);
            attn__v u2 = attn__vload(xs[k] + i + 2 * ATTN__VW),
                    u3 = attn__vload(xs[k] + i + 3 * ATTN__VW);
            if (mode == 1) {
                u0 = attn__vsub(u0, vc[k]);
                u1 = attn__vsub(u1, vc[k]);
                u2 = attn__vsub(u2, vc[k]);
                u3 = attn__vsub(u3, vc[k]);
                a0[k] = attn__vadd(a0[k], u0);
                a1[k] = attn__vadd(a1[k], u1);
                a2[k] = attn__vadd(a2[k], u2);
                a3[k] = attn__vadd(a3[k], u3);
            }
            b0[k] = attn__vfma(u0, u0, b0[k]);
            b1[k] = attn__vfma(u1, u1, b1[k]);
            b2[k] = attn__vfma(u2, u2, b2[k]);
            b3[k] = attn__vfma(u3, u3, b3[k]);
        }
    for (; i < n; i += ATTN__VW)
        ATTN__UNROLL
        for (k = 0; k < K; k++) {
            const size_t m = n - i;
            attn__v u0 = m >= ATTN__VW ? attn__vload(xs[k] + i)
                                       : attn__vload_part(xs[k] + i, m, mode == 1 ? c[k] : 0.0f);
            if (mode == 1) {
                u0 = attn__vsub(u0, vc[k]);
                a0[k] = attn__vadd(a0[k], u0);
            }
            b0[k] = attn__vfma(u0, u0, b0[k]);
        }
    ATTN__UNROLL
    for (k = 0; k < K; k++) {
        if (mode == 1) tv[k] = attn__vadd(attn__vadd(a0[k], a1[k]), attn__vadd(a2[k], a3[k]));
        sv[k] = attn__vadd(attn__vadd(b0[k], b1[k]), attn__vadd(b2[k], b3[k]));
    }
}

/* A batch's short layernorm rows (x, x + ldx, ... nb <= 8 of them), their sums reduced
 * together: c[k] the prefix mean (of the first 32 elements, or of the row when shorter),
 * t[k] = sum (x-c), s2[k] = sum (x-c)^2; lanes k >= nb: 0. (Rmsnorm keeps one horizontal
 * sum a row: the tree measured 3-10% slower there at n = 64.) */
static ATTN__FORCE_INLINE void attn__norm_batch_sums(const float *x, size_t ldx, size_t nb,
                                                     size_t n, float *c, float *t, float *s2)
{
    const int mode = 1;
    attn__v tv[ATTN__NORM_BATCH], sv[ATTN__NORM_BATCH];
    size_t k;
    ATTN__UNROLL
    for (k = 0; k < ATTN__NORM_BATCH; k++) tv[k] = sv[k] = attn__vzero();
    /* no unroll pragma: the count depends on nb (clang warns it cannot unroll it fully) */
    for (k = nb; k < ATTN__NORM_BATCH; k++) c[k] = 0.0f;
    /* short rows two at a time (ATTN__NORM_PAIR), then (longer: up to one block of
     * attn__row_sums) one at a time */
    for (k = 0; ATTN__NORM_PAIR && n <= ATTN__NORM_SHORT && k + 2 <= nb; k += 2)
        attn__norm_sums_short(x + k * ldx, x + (k + 1) * ldx, 2, n, mode, c + k, tv + k, sv + k);
    for (; k < nb; k++)
        attn__norm_sums_short(x + k * ldx, NULL, 1, n, mode, c + k, tv + k, sv + k);
    attn__vhred8(tv, t, 0);
    attn__vhred8(sv, s2, 0);
}

/* The rest of one layernorm row from its sums around c: d = t / n the mean of x - c,
 * s2 the sum of squares of x - c. */
static void attn__layernorm_finish(const float *xr, float *yr, size_t n, float c, float t,
                                   float s2, const float *gamma, const float *beta, float eps,
                                   float *mean_out, float *rstd_out, int st)
{
    float d = t / (float)n, var, rstd;
    if (d * d > 0.25f * (s2 / (float)n)) {
        c += d;
        d = attn__row_sums(xr, n, 1, c, &s2) / (float)n;
    }
    var = s2 / (float)n - d * d;
    if (!((c - c) + (s2 - s2) == 0.0f && s2 > 1e-30f)) { /* c, s2 not finite, or s2 tiny */
        attn__norm_row_double(xr, yr, n, gamma, beta, eps, 0, mean_out, rstd_out);
        return;
    }
    if (var < 0) var = 0;
    rstd = 1.0f / sqrtf(var + eps);
    if (mean_out) *mean_out = c + d;
    if (rstd_out) *rstd_out = rstd;
    attn__norm_apply(xr, yr, n, c, d, rstd, gamma, beta, st);
}

/* Layernorm of rows up to ATTN__NORM_BATCHED in batches of ATTN__NORM_BATCH:
 * first every row's sums (up to one summation block: attn__norm_batch_sums, the 8 rows'
 * horizontal sums in one tree; longer: attn__row_sums), then every row's scale in one
 * vector pass (lanes are rows: one square root and division for the batch), then every
 * row's output pass: the reductions' latencies, which bind short rows, overlap the other
 * rows' work instead of stalling the output pass. Each lane's arithmetic is that of one
 * row alone (a partial batch's missing rows are zeros), so a row's bits do not depend on
 * the other rows. Rows needing the second pass (d^2 > var / 4) or the double path go
 * through attn__layernorm_finish. */
#define ATTN__NORM_LANES (ATTN__NORM_BATCH > ATTN__VW ? ATTN__NORM_BATCH : ATTN__VW)

static ATTN__FORCE_INLINE void attn__layernorm_short_body(const float *x, size_t ldx, float *y,
                                                          size_t ldy, size_t rows, size_t n,
                                                          const float *g, const float *b,
                                                          float eps, float *mean_out,
                                                          float *rstd_out, int st)
{
    size_t r0;
    for (r0 = 0; r0 < rows; r0 += ATTN__NORM_BATCH) {
        const size_t nb = rows - r0 < ATTN__NORM_BATCH ? rows - r0 : ATTN__NORM_BATCH;
        /* a vector of rows at a time below: lanes past the batch padded with zeros */
        float c[ATTN__NORM_LANES], t[ATTN__NORM_LANES], s2[ATTN__NORM_LANES];
        float d[ATTN__NORM_LANES], rs[ATTN__NORM_LANES];
        size_t k;
        ATTN__UNROLL
        for (k = ATTN__NORM_BATCH; k < ATTN__NORM_LANES; k++) c[k] = t[k] = s2[k] = 0.0f;
        if (n <= ATTN__SUM_BLOCK) {
            attn__norm_batch_sums(x + r0 * ldx, ldx, nb, n, c, t, s2);
        } else {
            for (k = 0; k < ATTN__NORM_BATCH; k++) c[k] = t[k] = s2[k] = 0.0f;
            for (k = 0; k < nb; k++) {
                c[k] = attn__norm_prefix_mean(x + (r0 + k) * ldx);
                t[k] = attn__row_sums(x + (r0 + k) * ldx, n, 1, c[k], s2 + k);
            }
        }
        for (k = 0; k < ATTN__NORM_BATCH; k += ATTN__VW) { /* every row's scale at once */
            const attn__v vn = attn__vset1((float)n), m1 = attn__vset1(-1.0f);
            const attn__v inf = attn__vset1(INFINITY), vs = attn__vload(s2 + k);
            const attn__v vdk = attn__vdiv(attn__vload(t + k), vn), sn = attn__vdiv(vs, vn);
            const attn__v dd = attn__vmul(vdk, vdk);
            const attn__v var = attn__vmax(attn__vsub(sn, dd), attn__vzero());
            attn__v r =
                attn__vdiv(attn__vset1(1.0f), attn__vsqrt(attn__vadd(var, attn__vset1(eps))));
            /* the general path (rs = -1): c far from the mean (d^2 > var / 4), c or s2 not
             * finite, s2 tiny */
            r = attn__vselect(attn__vgt(dd, attn__vmul(attn__vset1(0.25f), sn)), m1, r);
            r = attn__vselect(attn__vgt(vs, attn__vset1(1e-30f)), r, m1);
            r = attn__vselect(attn__vlt(vs, inf), r, m1);
            r = attn__vselect(attn__vlt(attn__vfabs(attn__vload(c + k)), inf), r, m1);
            attn__vstore(d + k, vdk);
            attn__vstore(rs + k, r);
        }
        for (k = 0; k < nb; k++) {
            const size_t r = r0 + k;
            const float *xr = x + r * ldx;
            float *yr = y + r * ldy;
            if (rs[k] < 0) {
                attn__layernorm_finish(xr, yr, n, c[k], t[k], s2[k], g, b, eps,
                                       mean_out ? mean_out + r : NULL,
                                       rstd_out ? rstd_out + r : NULL, st);
                continue;
            }
            if (mean_out) mean_out[r] = c[k] + d[k];
            if (rstd_out) rstd_out[r] = rs[k];
            attn__norm_apply_body(xr, yr, n, c[k], d[k], rs[k], g, b, 1, st);
        }
    }
}

static void attn__layernorm_short(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                                  size_t n, const float *g, const float *b, float eps,
                                  float *mean_out, float *rstd_out, int st)
{
#define ATTN__LN_SHORT(g_, b_)                                                               \
    attn__layernorm_short_body(x, ldx, y, ldy, rows, n, g_, b_, eps, mean_out, rstd_out, st)
    if (g && b) ATTN__LN_SHORT(g, b);
    else if (g) ATTN__LN_SHORT(g, NULL);
    else if (b) ATTN__LN_SHORT(NULL, b);
    else ATTN__LN_SHORT(NULL, NULL);
#undef ATTN__LN_SHORT
}

ATTN_API attn_status attn_layernorm(const float *x, size_t ldx, float *y, size_t ldy,
                                    size_t rows, size_t n, const float *gamma,
                                    const float *beta, float eps, float *mean_out,
                                    float *rstd_out)
{
    attn_status st = attn__norm_check(x, ldx, y, ldy, rows, n, eps);
    const size_t yb = attn__mat_bytes(rows, n, ldy), xb = attn__mat_bytes(rows, n, ldx);
    const size_t vb = n * sizeof(float), sb = rows * sizeof(float);
    const int stream = attn__norm_stream(x, y, ldy, rows, n);
    size_t r = 0;
    if (st != ATTN_OK) return st;
    if (!rows) return ATTN_OK;
    /* y over gamma or beta; a statistic over x, y, gamma, beta or the other statistic */
    if ((gamma && attn__bytes_overlap(y, yb, gamma, vb)) ||
        (beta && attn__bytes_overlap(y, yb, beta, vb)) ||
        (mean_out && (attn__bytes_overlap(mean_out, sb, x, xb) ||
                      attn__bytes_overlap(mean_out, sb, y, yb) ||
                      (gamma && attn__bytes_overlap(mean_out, sb, gamma, vb)) ||
                      (beta && attn__bytes_overlap(mean_out, sb, beta, vb)) ||
                      (rstd_out && attn__bytes_overlap(mean_out, sb, rstd_out, sb)))) ||
        (rstd_out && (attn__bytes_overlap(rstd_out, sb, x, xb) ||
                      attn__bytes_overlap(rstd_out, sb, y, yb) ||
                      (gamma && attn__bytes_overlap(rstd_out, sb, gamma, vb)) ||
                      (beta && attn__bytes_overlap(rstd_out, sb, beta, vb)))))
        return ATTN_ERR_ALIAS;
    /* Shifted sums: the mean d and the sum of squares s2 of x - c, with c the mean of the
     * first (up to) 32 elements. x - c is exact or nearly so for x near c, so rows whose
     * mean is far larger than their spread lose nothing, in one pass. When c turns out
     * far from the mean (d^2 > var / 4, where s2/n - d^2 starts to cancel), the sums are
     * redone around c + d. */
    if (n <= ATTN__NORM_BATCHED) {
        attn__layernorm_short(x, ldx, y, ldy, rows, n, gamma, beta, eps, mean_out, rstd_out,
                              stream);
    } else {
        for (; r < rows; r++) {
            const float *xr = x + r * ldx;
            float c, s2, t;
            c = attn__norm_prefix_mean(xr); /* n > ATTN__NORM_BATCHED >= 32 here */
            t = attn__row_sums(xr, n, 1, c, &s2);
            attn__layernorm_finish(xr, y + r * ldy, n, c, t, s2, gamma, beta, eps,
                                   mean_out ? mean_out + r : NULL,
                                   rstd_out ? rstd_out + r : NULL, stream);
        }
    }
    if (stream) attn__vstream_fence();
    return ATTN_OK;
}

static void attn__rmsnorm_finish(const float *xr, float *yr, size_t n, float s2,
                                 const float *gamma, float eps, int st)
{
    if (!attn__finite(s2) || !(s2 > 1e-30f)) {
        attn__norm_row_double(xr, yr, n, gamma, NULL, eps, 1, NULL, NULL);
        return;
    }
    attn__norm_apply(xr, yr, n, 0.0f, 0.0f, 1.0f / sqrtf(s2 / (float)n + eps), gamma, NULL, st);
}

/* Rmsnorm of rows up to ATTN__NORM_BATCHED, batched as layernorm (attn__layernorm_short_body):
 * every row's sum of squares and scale, then every row's output pass; each row's
 * operations those of attn__rmsnorm_finish. */
static ATTN__FORCE_INLINE void attn__rmsnorm_short_body(const float *x, size_t ldx, float *y,
                                                        size_t ldy, size_t rows, size_t n,
                                                        const float *g, float eps, int st)
{
    size_t r0;
    for (r0 = 0; r0 < rows; r0 += ATTN__NORM_BATCH) {
        const size_t nb = rows - r0 < ATTN__NORM_BATCH ? rows - r0 : ATTN__NORM_BATCH;
        float c[ATTN__NORM_BATCH], s2[ATTN__NORM_BATCH], rs[ATTN__NORM_BATCH];
        size_t k;
        if (n <= ATTN__NORM_SHORT) {
            attn__v tv[2], sv[2];
            for (k = 0; ATTN__NORM_PAIR && k + 2 <= nb; k += 2) {
                attn__norm_sums_short(x + (r0 + k) * ldx, x + (r0 + k + 1) * ldx, 2, n, 2, c + k,
                                      tv, sv);
                s2[k] = attn__vhsum(sv[0]);
                s2[k + 1] = attn__vhsum(sv[1]);
            }
            for (; k < nb; k++) {
                attn__norm_sums_short(x + (r0 + k) * ldx, NULL, 1, n, 2, c + k, tv, sv);
                s2[k] = attn__vhsum(sv[0]);
            }
        } else {
            for (k = 0; k < nb; k++) attn__row_sums(x + (r0 + k) * ldx, n, 2, 0.0f, s2 + k);
        }
        for (k = 0; k < nb; k++)
            rs[k] = attn__finite(s2[k]) && s2[k] > 1e-30f ? 1.0f / sqrtf(s2[k] / (float)n + eps)
                                                          : -1.0f; /* the double path */
        for (k = 0; k < nb; k++) {
            const float *xr = x + (r0 + k) * ldx;
            float *yr = y + (r0 + k) * ldy;
            if (rs[k] < 0 || n > ATTN__NORM_SHORT) {
                attn__rmsnorm_finish(xr, yr, n, s2[k], g, eps, st);
                continue;
            }
            attn__norm_apply_body(xr, yr, n, 0.0f, 0.0f, rs[k], g, NULL, 0, st);
        }
    }
}

static void attn__rmsnorm_short(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                                size_t n, const float *g, float eps, int st)
{
    if (g) attn__rmsnorm_short_body(x, ldx, y, ldy, rows, n, g, eps, st);
    else attn__rmsnorm_short_body(x, ldx, y, ldy, rows, n, NULL, eps, st);
}

ATTN_API attn_status attn_rmsnorm(const float *x, size_t ldx, float *y, size_t ldy,
                                  size_t rows, size_t n, const float *gamma, float eps)
{
    attn_status st = attn__norm_check(x, ldx, y, ldy, rows, n, eps);
    const int stream = attn__norm_stream(x, y, ldy, rows, n);
    size_t r = 0;
    if (st != ATTN_OK) return st;
    if (!rows) return ATTN_OK;
    if (gamma && attn__bytes_overlap(y, attn__mat_bytes(rows, n, ldy), gamma, n * sizeof(float)))
        return ATTN_ERR_ALIAS;
    if (n <= ATTN__NORM_BATCHED) {
        attn__rmsnorm_short(x, ldx, y, ldy, rows, n, gamma, eps, stream);
    } else {
        for (; r < rows; r++) {
            const float *xr = x + r * ldx;
            float s2;
            attn__row_sums(xr, n, 2, 0.0f, &s2);
            attn__rmsnorm_finish(xr, y + r * ldy, n, s2, gamma, eps, stream);
        }
    }
    if (stream) attn__vstream_fence();
    return ATTN_OK;
}
