/* src/softmax.h - attn_softmax.
 *
 * Every row: its extreme (attn__row_extreme), then its frame (attn__softmax_frame), the
 * exps with their sum, and the normalizing pass. Two strategies compute exactly that, with
 * the same operations in the same order, so a row's bits never depend on the path:
 *  - short rows (up to ATTN__SM_SHORT vectors) stay in registers: x read once after the
 *    extreme, the exps and their sum unrolled, one range test for the whole row, y
 *    written once (attn__softmax_short);
 *  - longer rows: the exp pass writes the exps and sums them (attn__softmax_body), then the
 *    normalizing pass (attn__softmax_out). Calls far out of the caches keep a row's exps in
 *    a stack scratch and write y by non-temporal stores (8 bytes of memory traffic per
 *    element instead of 12), prefetching the rows ahead.
 */

/* Rows whose extreme (max x for s >= 0, min x for s < 0) is not finite: all -inf after
 * scaling -> zeros; entries that are +inf after scaling share 1; any NaN -> NaN. Rare,
 * so scalar. */
static void attn__softmax_special(const float *x, float *y, size_t n, float s)
{
    size_t i, count = 0;
    int has_nan = 0;
    for (i = 0; i < n; i++) {
        if (x[i] != x[i] || (s == 0 && isinf(x[i]))) has_nan = 1; /* 0 * inf */
        if (isinf(x[i]) && x[i] * s > 0) count++;
    }
    for (i = 0; i < n; i++)
        y[i] = has_nan ? NAN : (count && isinf(x[i]) && x[i] * s > 0) ? 1.0f / (float)count : 0.0f;
}

/* The argument of softmax's exp, carried as hi + lo (lo: the rounding error of hi), in
 * one of two frames; softmax promises 1e-6 relative error at any input magnitude.
 * Shifted (any row): s (x - xm), xm the row's extreme (max x for s >= 0, min x for s < 0),
 * hi <= 0 (or NaN); x - xm is split exactly (2Sum), then scaled (the product's error by
 * fma). Unshifted (rows where sm = s xm is in [0, 80 - ln n]): s x itself, since
 * e^(s x) / sum e^(s x) is the same softmax; every e^(s x) <= e^sm and their sum stay far
 * from overflow, and an e^(s x) that underflows has e^(s x - sm) < FLT_MIN too, so the
 * results are those of the shifted frame. mode: ATTN__SM_ANY computes either frame (the
 * unshifted one with xm = 0, where the 2Sum is exact and lo is the product's error alone);
 * ATTN__SM_UNSHIFTED and ATTN__SM_UNIT (s = 1: hi = x, no lo) compute the unshifted frame
 * with fewer operations and the same results. Every product here has a non-additive use as
 * well, so a compiler contracting a*b+c into fma (-ffp-contract=fast) cannot fold it. */
#define ATTN__SM_ANY 0
#define ATTN__SM_UNSHIFTED 1
#define ATTN__SM_UNIT 2
static ATTN__FORCE_INLINE void attn__softmax_arg(attn__v x, attn__v s, attn__v xm, int mode,
                                                 attn__v *hi_out, attn__v *lo_out)
{
    attn__v hi = x, lo = x, bb, h;
    if (mode == ATTN__SM_ANY) {
        hi = attn__vsub(x, xm);
        bb = attn__vsub(hi, x);
        lo = attn__vsub(attn__vsub(x, attn__vsub(hi, bb)), attn__vadd(xm, bb));
        h = attn__vmul(hi, s);
        lo = attn__vfma(lo, s, attn__vfma_exact(hi, s, attn__vsub(attn__vzero(), h)));
        hi = h;
    } else if (mode == ATTN__SM_UNSHIFTED) {
        hi = attn__vmul(x, s);
        lo = attn__vfma_exact(x, s, attn__vsub(attn__vzero(), hi));
    }
    *hi_out = hi;
    *lo_out = lo;
}

/* e^(hi + lo) for softmax, any argument: below FLT_MIN not flushed (softmax flushes after
 * normalizing). With SLEEF: e^(hi+lo) = e^hi (1 + lo) to far below an ulp, as |lo| <=
 * ulp(hi) / 2. */
static ATTN__FORCE_INLINE attn__v attn__softmax_exp_any(attn__v hi, attn__v lo, int has_lo)
{
#ifdef ATTN_USE_SLEEF
    const attn__v tiny = attn__vset1(FLT_MIN);
    attn__v e0 = attn__vexp_sleef(hi), e = has_lo ? attn__vfma(e0, lo, e0) : e0;
    return attn__vselect(attn__vlt(e0, tiny), attn__vzero(), e); /* hi = -inf: lo is NaN */
#else
    return attn__vexp_slow(hi, lo, has_lo, 0);
#endif
}

/* k vectors of softmax's exps e^(hi + lo) from x into y, every argument allowed: the slow
 * path, out of line so that the fast loop keeps its registers. */
static void attn__softmax_slow(const float *x, float *y, size_t k, attn__v vs, attn__v vm,
                               int mode)
{
    size_t j;
    for (j = 0; j < k; j++) {
        attn__v hi, lo;
        attn__softmax_arg(attn__vload(x + j * ATTN__VW), vs, vm, mode, &hi, &lo);
        attn__vstore(y + j * ATTN__VW, attn__softmax_exp_any(hi, lo, mode != ATTN__SM_UNIT));
    }
}

/* max (want_max) or min of x[0..n) */
static float attn__row_extreme(const float *x, size_t n, int want_max)
{
    const float fill = want_max ? -INFINITY : INFINITY;
    attn__v m0 = attn__vset1(fill), m1 = m0, m2 = m0, m3 = m0;
    size_t i = 0;
    if (want_max) {
        for (; i + 4 * ATTN__VW <= n; i += 4 * ATTN__VW) {
            m0 = attn__vmax(m0, attn__vload(x + i));
            m1 = attn__vmax(m1, attn__vload(x + i + ATTN__VW));
            m2 = attn__vmax(m2, attn__vload(x + i + 2 * ATTN__VW));
            m3 = attn__vmax(m3, attn__vload(x + i + 3 * ATTN__VW));
        }
        for (; i + ATTN__VW <= n; i += ATTN__VW) m0 = attn__vmax(m0, attn__vload(x + i));
        if (i < n) m1 = attn__vmax(m1, attn__vload_part(x + i, n - i, fill));
        return attn__vhmax(attn__vmax4(m0, m1, m2, m3));
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW) m0 = attn__vmin(m0, attn__vload(x + i));
    if (i < n) m0 = attn__vmin(m0, attn__vload_part(x + i, n - i, fill));
    return attn__vhmin(m0);
}


/* A row's frame (see attn__softmax_arg) and the fast exp's least argument thr: when every
 * argument is at least thr (the frame's largest argument - 87 + ln n), every exp divided by
 * the row's sum (at most n times the largest) is at least FLT_MIN, so nothing needs
 * flushing. */
typedef struct {
    attn__v vs, vm, thr; /* the scale, the extreme subtracted (0 unshifted), thr */
    int unshifted;
} attn__sm_frame;

/* The frame of a row whose extreme m is finite; n = 1 is shifted, which gives exactly 1. */
static ATTN__FORCE_INLINE attn__sm_frame attn__softmax_frame(float m, float s, float lnn,
                                                             size_t n)
{
    const float sm = s * m;
    const int unshifted = sm >= 0.0f && sm <= 80.0f - lnn && n > 1;
    attn__sm_frame f;
    f.vs = attn__vset1(s);
    f.vm = attn__vset1(unshifted ? 0.0f : m);
    f.thr = attn__vset1((unshifted ? sm : 0.0f) - 87.0f + lnn);
    f.unshifted = unshifted;
    return f;
}

/* The exp pass of one row in frame f (mode: see attn__softmax_arg, a constant): the exps
 * into e, returns their sum, blocked (ATTN__SUM_BLOCK) with two accumulators in a fixed
 * order. Four vectors at a time take the fast exp when their least argument is at least
 * f->thr (a NaN, which the minimum may pass over, gives NaN on either path), else the slow
 * one, and *flush is set (results under FLT_MIN are then flushed after normalizing); the
 * partial vector at the row's end, padded with the extreme, always the slow one. xn (or
 * NULL): a later row of x to prefetch. */
static ATTN__FORCE_INLINE float attn__softmax_body(const float *x, float *e, size_t n,
                                                   const attn__sm_frame *f, int mode,
                                                   float m, const float *xn, int *flush)
{
    attn__v total = attn__vzero(), h0, h1, h2, h3, l0, l1, l2, l3;
    size_t i;
    for (i = 0; i < n;) {
        const size_t end = n - i > ATTN__SUM_BLOCK ? i + ATTN__SUM_BLOCK : n;
        attn__v a0 = attn__vzero(), a1 = a0;
        for (; i + 4 * ATTN__VW <= end; i += 4 * ATTN__VW) {
            if (xn) {
                ATTN__PREFETCH(xn + i);
                ATTN__PREFETCH(xn + i + 4 * ATTN__VW - 1);
            }
            attn__softmax_arg(attn__vload(x + i), f->vs, f->vm, mode, &h0, &l0);
            attn__softmax_arg(attn__vload(x + i + ATTN__VW), f->vs, f->vm, mode, &h1, &l1);
            attn__softmax_arg(attn__vload(x + i + 2 * ATTN__VW), f->vs, f->vm, mode, &h2, &l2);
            attn__softmax_arg(attn__vload(x + i + 3 * ATTN__VW), f->vs, f->vm, mode, &h3, &l3);
#ifndef ATTN_USE_SLEEF
            if (!attn__vany_neg(attn__vsub(attn__vmin4(h0, h1, h2, h3), f->thr))) {
                h0 = attn__vexp_core(h0, l0, mode != ATTN__SM_UNIT, 0);
                h1 = attn__vexp_core(h1, l1, mode != ATTN__SM_UNIT, 0);
                h2 = attn__vexp_core(h2, l2, mode != ATTN__SM_UNIT, 0);
                h3 = attn__vexp_core(h3, l3, mode != ATTN__SM_UNIT, 0);
                attn__vstore(e + i, h0);
                attn__vstore(e + i + ATTN__VW, h1);
                attn__vstore(e + i + 2 * ATTN__VW, h2);
                attn__vstore(e + i + 3 * ATTN__VW, h3);
            } else
#endif
            {
                attn__softmax_slow(x + i, e + i, 4, f->vs, f->vm, mode);
                *flush = 1;
                h0 = attn__vload(e + i);
                h1 = attn__vload(e + i + ATTN__VW);
                h2 = attn__vload(e + i + 2 * ATTN__VW);
                h3 = attn__vload(e + i + 3 * ATTN__VW);
            }
            /* two accumulators, not four: with the exp's constants, four spill */
            a0 = attn__vadd(a0, attn__vadd(h0, h1));
            a1 = attn__vadd(a1, attn__vadd(h2, h3));
        }
        for (; i + ATTN__VW <= end; i += ATTN__VW) {
            attn__softmax_arg(attn__vload(x + i), f->vs, f->vm, mode, &h0, &l0);
#ifndef ATTN_USE_SLEEF
            if (!attn__vany_neg(attn__vsub(h0, f->thr))) {
                h0 = attn__vexp_core(h0, l0, mode != ATTN__SM_UNIT, 0);
            } else
#endif
            {
                h0 = attn__softmax_exp_any(h0, l0, mode != ATTN__SM_UNIT);
                *flush = 1;
            }
            attn__vstore(e + i, h0);
            a0 = attn__vadd(a0, h0);
        }
        if (i < end) { /* only at the row's end */
            const size_t t = end - i;
            attn__softmax_arg(attn__vload_part(x + i, t, m), f->vs, f->vm, mode, &h0, &l0);
            attn__vstore_part(e + i, attn__softmax_exp_any(h0, l0, mode != ATTN__SM_UNIT), t);
            *flush = 1;
            a1 = attn__vadd(a1, attn__vload_part(e + i, t, 0.0f));
            i = end;
        }
        total = attn__vadd(total, attn__vadd(a0, a1));
    }
    return attn__vhsum(total);
}

/* One row's exps into e (y, or a scratch) and their sum: returns the flush flag for
 * attn__softmax_out, or -1 when the row's extreme is not finite (its results are then
 * attn__softmax_special's). lnn: ln n, rounded up; xn: see attn__softmax_body. */
static ATTN__NOINLINE int attn__softmax_exps(const float *x, float *e, size_t n, float s,
                                             float lnn, const float *xn, float *sum)
{
    const float m = attn__row_extreme(x, n, s >= 0); /* where s x is largest */
    attn__sm_frame f;
    int flush = 0;
#ifdef ATTN_USE_SLEEF
    flush = 1;
#endif
    if (!attn__finite(m)) return -1;
    f = attn__softmax_frame(m, s, lnn, n);
    if (f.unshifted && s == 1.0f)
        *sum = attn__softmax_body(x, e, n, &f, ATTN__SM_UNIT, m, xn, &flush);
    else *sum = attn__softmax_body(x, e, n, &f, ATTN__SM_ANY, m, xn, &flush);
    return flush;
}

/* v / sum for the normalizing pass, under FLT_MIN flushed to 0 when flush */
static ATTN__FORCE_INLINE attn__v attn__softmax_scale(attn__v v, attn__v inv, int flush)
{
    v = attn__vmul(v, inv);
    return flush ? attn__vselect(attn__vlt(v, attn__vset1(FLT_MIN)), attn__vzero(), v) : v;
}

/* The normalizing pass: y = e / sum (e may be y). stream: y by non-temporal stores from its
 * first aligned entry (the entries before it and the partial vector at the end by normal
 * ones); the caller fences. */
static void attn__softmax_out(const float *e, float *y, size_t n, float sum, int flush,
                              int stream)
{
    const attn__v inv = attn__vset1(1.0f / sum);
    size_t i = 0;
    if (stream) {
        i = (ATTN__VW - ((uintptr_t)y / sizeof(float)) % ATTN__VW) % ATTN__VW;
        if (i > n) i = n;
        if (i) attn__vstore_part(y, attn__softmax_scale(attn__vload_part(e, i, 0.0f), inv, 1), i);
        for (; i + ATTN__VW <= n; i += ATTN__VW)
            attn__vstream(y + i, attn__softmax_scale(attn__vload(e + i), inv, flush));
    } else if (!flush) {
        for (; i + ATTN__VW <= n; i += ATTN__VW)
            attn__vstore(y + i, attn__vmul(attn__vload(e + i), inv));
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW)
        attn__vstore(y + i, attn__softmax_scale(attn__vload(e + i), inv, 1));
    if (i < n)
        attn__vstore_part(y + i, attn__softmax_scale(attn__vload_part(e + i, n - i, 0.0f), inv, 1),
                          n - i);
}

/* Rows longer than the short kernel's. far: the call is far out of the caches; the next
 * row of x is prefetched while this one is computed (without it, a long row's max pass
 * waits on memory with nothing to overlap it). */
static ATTN__NOINLINE void attn__softmax_rows_long(const float *x, size_t ldx, float *y,
                                                   size_t ldy, size_t rows, size_t n, float s,
                                                   float lnn, int far)
{
    size_t r;
    for (r = 0; r < rows; r++) {
        const float *const xr = x + r * ldx, *const xn = far && r + 1 < rows ? xr + ldx : NULL;
        float *const yr = y + r * ldy;
        float sum = 0.0f;
        const int flush = attn__softmax_exps(xr, yr, n, s, lnn, xn, &sum);
        if (flush < 0) attn__softmax_special(xr, yr, n, s);
        else attn__softmax_out(yr, yr, n, sum, flush, 0);
    }
}

/* Long rows of up to ATTN__SM_SCRATCH far out of the caches, not in place: each row's exps
 * into a scratch on the stack (in L1), then y from it by non-temporal stores, which write
 * y's lines without reading them first. Out of line, so that only these calls have the
 * scratch on their stack. */
static ATTN__NOINLINE void attn__softmax_rows_stream(const float *x, size_t ldx, float *y,
                                                     size_t ldy, size_t rows, size_t n,
                                                     float s, float lnn)
{
    float raw[ATTN__SM_SCRATCH + ATTN__VW];
    float *const e = raw + (ATTN__VW - ((uintptr_t)raw / sizeof(float)) % ATTN__VW) % ATTN__VW;
    size_t r;
    for (r = 0; r < rows; r++) {
        const float *const xr = x + r * ldx, *const xn = r + 1 < rows ? xr + ldx : NULL;
        float sum = 0.0f;
        const int flush = attn__softmax_exps(xr, e, n, s, lnn, xn, &sum);
        if (flush < 0) attn__softmax_special(xr, y + r * ldy, n, s);
        else attn__softmax_out(e, y + r * ldy, n, sum, flush, 1);
    }
    attn__vstream_fence();
}

/* A short row's exps in registers, in the unshifted frame, from its nf whole vectors xv
 * and, when t > 0, a partial one of t entries padded with the extreme (ev[nf], its padding
 * lanes 0): 0 when some argument is under f->thr (the row then takes the long rows' path),
 * else 1 with the results of attn__softmax_body (fast exps, nothing to flush). */
static ATTN__FORCE_INLINE int attn__softmax_short_exps(const attn__v *xv, attn__v *ev, size_t nf,
                                                       size_t t, const attn__sm_frame *f,
                                                       int mode)
{
    static const float ones[16] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f,
                                   1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
    attn__v hv[ATTN__SM_SHORT + 1], lv[ATTN__SM_SHORT + 1], lo = attn__vset1(INFINITY);
    size_t j;
    ATTN__UNROLL
    for (j = 0; j < nf; j++) {
        attn__softmax_arg(xv[j], f->vs, f->vm, mode, hv + j, lv + j);
        lo = attn__vmin(lo, hv[j]);
    }
    if (t) {
        attn__softmax_arg(xv[nf], f->vs, f->vm, mode, hv + nf, lv + nf);
        lo = attn__vmin(lo, hv[nf]);
    }
#ifdef ATTN_USE_SLEEF
    return 0;
#endif
    if (attn__vany_neg(attn__vsub(lo, f->thr))) return 0;
    ATTN__UNROLL
    for (j = 0; j < nf; j++) ev[j] = attn__vexp_core(hv[j], lv[j], mode != ATTN__SM_UNIT, 0);
    if (t) ev[nf] = attn__vmul(attn__vexp_core(hv[nf], lv[nf], mode != ATTN__SM_UNIT, 0),
                               attn__vload_part(ones, t, 0.0f)); /* padding: 0 */
    return 1;
}

/* One short row of nf whole vectors (a constant after inlining) and a partial one when n
 * is not a multiple of ATTN__VW; the sum in attn__softmax_body's order. stream: y aligned,
 * its whole vectors by non-temporal stores. */
static ATTN__FORCE_INLINE void attn__softmax_short_row(const float *x, float *y, size_t n,
                                                       size_t nf, float s, float lnn,
                                                       int stream)
{
    const size_t t = n - nf * ATTN__VW;
    attn__v xv[ATTN__SM_SHORT + 1], ev[ATTN__SM_SHORT + 1], a0 = attn__vzero(), a1 = a0, inv;
    attn__sm_frame f;
    size_t j;
    float m;
    ATTN__UNROLL
    for (j = 0; j < nf; j++) xv[j] = attn__vload(x + j * ATTN__VW);
    /* the extreme by attn__row_extreme's tree, to its bits (a NaN included) */
    if (s >= 0) {
        attn__v m0 = attn__vset1(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
        ATTN__UNROLL
        for (j = 0; j + 4 <= nf; j += 4) {
            m0 = attn__vmax(m0, xv[j]);
            m1 = attn__vmax(m1, xv[j + 1]);
            m2 = attn__vmax(m2, xv[j + 2]);
            m3 = attn__vmax(m3, xv[j + 3]);
        }
        ATTN__UNROLL
        for (; j < nf; j++) m0 = attn__vmax(m0, xv[j]);
        if (t) m1 = attn__vmax(m1, attn__vload_part(x + nf * ATTN__VW, t, -INFINITY));
        m = attn__vhmax(attn__vmax4(m0, m1, m2, m3));
    } else {
        attn__v m0 = attn__vset1(INFINITY);
        ATTN__UNROLL
        for (j = 0; j < nf; j++) m0 = attn__vmin(m0, xv[j]);
        if (t) m0 = attn__vmin(m0, attn__vload_part(x + nf * ATTN__VW, t, INFINITY));
        m = attn__vhmin(m0);
    }
    if (!attn__finite(m)) {
        attn__softmax_special(x, y, n, s);
        return;
    }
    if (t) xv[nf] = attn__vload_part(x + nf * ATTN__VW, t, m);
    ATTN__UNROLL
    for (j = 0; j <= nf; j++) ev[j] = a0; /* set below; for the compiler's flow analysis */
    f = attn__softmax_frame(m, s, lnn, n);
    if (!f.unshifted ||
        !(s == 1.0f ? attn__softmax_short_exps(xv, ev, nf, t, &f, ATTN__SM_UNIT)
                    : attn__softmax_short_exps(xv, ev, nf, t, &f, ATTN__SM_UNSHIFTED))) {
        attn__softmax_rows_long(x, 0, y, 0, 1, n, s, lnn, 0);
        return;
    }
    ATTN__UNROLL
    for (j = 0; j + 4 <= nf; j += 4) {
        a0 = attn__vadd(a0, attn__vadd(ev[j], ev[j + 1]));
        a1 = attn__vadd(a1, attn__vadd(ev[j + 2], ev[j + 3]));
    }
    ATTN__UNROLL
    for (; j < nf; j++) a0 = attn__vadd(a0, ev[j]);
    if (t) a1 = attn__vadd(a1, ev[nf]);
    inv = attn__vset1(1.0f / attn__vhsum(attn__vadd(attn__vzero(), attn__vadd(a0, a1))));
    ATTN__UNROLL
    for (j = 0; j < nf; j++) {
        const attn__v v = attn__vmul(ev[j], inv);
        if (stream) attn__vstream(y + j * ATTN__VW, v);
        else attn__vstore(y + j * ATTN__VW, v);
    }
    if (t) attn__vstore_part(y + nf * ATTN__VW, attn__vmul(ev[nf], inv), t);
}

/* Rows of up to ATTN__SM_SHORT vectors: one unrolled case per count of whole vectors */
static ATTN__NOINLINE void attn__softmax_rows_short(const float *x, size_t ldx, float *y,
                                                    size_t ldy, size_t rows, size_t n,
                                                    float s, float lnn, int stream)
{
    size_t r;
    switch (n / ATTN__VW) {
#define ATTN__SM_CASE(k)                                                                    \
    case k:                                                                                 \
        for (r = 0; r < rows && (k) <= ATTN__SM_SHORT; r++)                                 \
            attn__softmax_short_row(x + r * ldx, y + r * ldy, n, k, s, lnn, stream);        \
        break;
        ATTN__SM_CASE(1) ATTN__SM_CASE(2) ATTN__SM_CASE(3) ATTN__SM_CASE(4)
        ATTN__SM_CASE(5) ATTN__SM_CASE(6) ATTN__SM_CASE(7) ATTN__SM_CASE(8)
#undef ATTN__SM_CASE
    default: break;
    }
    if (stream) attn__vstream_fence();
}

/* The paths of a softmax call, for tests (attn__softmax_path): ATTN__SM_AUTO chooses by
 * size as attn_softmax does; otherwise a set of these flags. */
#define ATTN__SM_AUTO (-1)
#define ATTN__SM_FAR_PATH 1 /* the paths for calls far out of the caches */
#define ATTN__SM_LONG_PATH 2 /* the long rows' path even for short rows */

static attn_status attn__softmax_path(const float *x, size_t ldx, float *y, size_t ldy,
                                      size_t rows, size_t n, float scale, int path)
{
    attn_status st;
    float lnn;
    int far, stream;
    if ((st = attn__rows_check(x, ldx, y, ldy, rows, n, 1)) != ATTN_OK) return st;
    if (!attn__finite(scale)) return ATTN_ERR_ARG;
    if (!rows) return ATTN_OK;
    lnn = 1.0001f * logf((float)n); /* rounded up */
    far = path == ATTN__SM_AUTO ? rows * n + 1 > ATTN__SM_FAR / sizeof(float)
                                : (path & ATTN__SM_FAR_PATH) != 0;
    /* in place, y's lines are read already: normal stores */
    stream = far && ATTN__HAVE_VSTREAM && x != y;
    if (n >= ATTN__VW && n <= ATTN__SM_SHORT * ATTN__VW &&
        (path < 0 || !(path & ATTN__SM_LONG_PATH)))
        attn__softmax_rows_short(x, ldx, y, ldy, rows, n, scale, lnn,
                                 stream && (uintptr_t)y % (ATTN__VW * sizeof(float)) == 0 &&
                                     ldy % ATTN__VW == 0);
    else if (stream && n <= ATTN__SM_SCRATCH)
        attn__softmax_rows_stream(x, ldx, y, ldy, rows, n, scale, lnn);
    else
        attn__softmax_rows_long(x, ldx, y, ldy, rows, n, scale, lnn, far);
    return ATTN_OK;
}

ATTN_API attn_status attn_softmax(const float *x, size_t ldx, float *y, size_t ldy,
                                  size_t rows, size_t n, float scale)
{
    return attn__softmax_path(x, ldx, y, ldy, rows, n, scale, ATTN__SM_AUTO);
}
