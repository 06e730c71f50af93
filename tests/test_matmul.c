/* test_matmul: attn_matmul (C = alpha * op(A) * op(B) + beta * C) against a double
 * reference (ref_linalg.h).
 *
 * Covers: all four transpose combinations with every m, n, k in 1..17 (all 4913
 * combinations for each), odd larger sizes (127, 257, 263, 1000 in some dimension), k = 0,
 * leading dimensions larger than the rows (the padding of A and B holds NaN that must not be
 * used, the padding of C guard values that must stay untouched), pointers offset by one
 * float, alpha in {1, -0.5, 0, 2.5} x beta in {0 (C full of NaN that must not leak), 1, -2},
 * with no workspace, the queried workspace, and the queried workspace at an address offset
 * by one float; sizes crossing every block boundary of the packed implementation (k, m and
 * n past its chunk depth, A block and B panel, with ragged edges); a too-small workspace;
 * bit-identical results when C is computed in row, column and 2-D blocks (the documented
 * threading contract) and with or without a workspace; and every error path, with the
 * output untouched.
 *
 * Tolerance, per element, computed in double:
 *   |C - Cref| <= (k + 2) * 2^-23 * (|alpha| * sum_p |a_ip b_pj| + |beta c_ij|) + 1e-30.
 * A float dot product of length k in any order is within gamma_k ~= k * 2^-24 of the exact
 * value relative to sum |a b|; scaling by alpha and adding beta * c rounds twice more; the
 * bound allows twice that. A wrong element, a missed or extra term, a wrong transpose or a
 * wrong alpha/beta is off by ~|a b| or more and fails. */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"
#include "ref_linalg.h"
#include <stdint.h>

#define GUARD 32 /* floats of guard before and after every buffer */
#define FLT_EPSILON_D (1.0 / 8388608.0) /* 2^-23 */

static const float C_GUARD = -7777.25f;   /* C's padding and guards: must stay bit-identical */
static double max_err_ulps;               /* max |C - Cref| / (2^-23 * magnitude) */
static double max_err_ratio;              /* max |C - Cref| / tolerance */
static long n_products;

static float *alloc_f(size_t n)
{
    float *p = (float *)malloc((n ? n : 1) * sizeof(float));
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

static const char *tname(int t) { return t ? "T" : "N"; }

/* One product: the shape and every knob of a call. */
typedef struct mm_case {
    int ta, tb;
    size_t m, n, k;
    float alpha, beta;
    size_t pa, pb, pc; /* extra leading dimension (padding) of A, B, C */
    int off;           /* 1: every pointer offset by one float from the allocation */
    int ws;            /* 0: no workspace, 1: the queried size, 2: queried size, misaligned */
} mm_case;

/* A stored matrix: rows x cols with leading dimension ld, inside a guarded buffer. */
typedef struct smat {
    float *buf, *p;
    size_t total, rows, cols, ld;
} smat;

static void smat_alloc(smat *s, size_t rows, size_t cols, size_t ld, int off)
{
    s->rows = rows;
    s->cols = cols;
    s->ld = ld;
    s->total = rows * ld + (size_t)off + 2 * GUARD;
    s->buf = alloc_f(s->total);
    s->p = s->buf + GUARD + off;
}

/* Inputs: NaN everywhere (padding, guards), uniform [-1, 1) in the matrix. */
static void smat_fill_input(smat *s)
{
    size_t i, j;
    for (i = 0; i < s->total; i++) s->buf[i] = NAN;
    for (i = 0; i < s->rows; i++)
        for (j = 0; j < s->cols; j++) s->p[i * s->ld + j] = check_uniform(-1.0f, 1.0f);
}

/* Is buffer index idx an element of the matrix (not padding / guard)? */
static int smat_is_elem(const smat *s, size_t idx)
{
    size_t rel;
    if (idx < (size_t)(s->p - s->buf)) return 0;
    rel = idx - (size_t)(s->p - s->buf);
    if (rel >= s->rows * s->ld) return 0;
    return rel % s->ld < s->cols;
}

static void case_str(char *out, size_t cap, const mm_case *t)
{
    snprintf(out, cap, "%s%s m=%zu n=%zu k=%zu alpha=%g beta=%g pad=(%zu,%zu,%zu) off=%d ws=%d",
             tname(t->ta), tname(t->tb), t->m, t->n, t->k, (double)t->alpha, (double)t->beta,
             t->pa, t->pb, t->pc, t->off, t->ws);
}

/* Runs one product and checks: status, every element within the tolerance, C's padding and
 * guards untouched, A and B unchanged. Returns 1 when everything passed. */
static int run_mm(const mm_case *t)
{
    const size_t ra = t->ta ? t->k : t->m, ca = t->ta ? t->m : t->k;
    const size_t rb = t->tb ? t->n : t->k, cb = t->tb ? t->k : t->n;
    size_t lda = ca + t->pa, ldb = cb + t->pb, ldc = t->n + t->pc;
    smat A, B, C;
    float *acopy, *bcopy;
    double *ref, *mag;
    unsigned char *wsbuf = NULL;
    void *ws = NULL;
    size_t wsz = 0, i, j, bad_i = 0, bad_j = 0;
    int ok_vals = 1, ok_guard = 1, all_ok;
    attn_status st;
    char desc[200];

    if (lda == 0) lda = 1; /* k = 0 with A stored m x 0: any lda >= 0 is valid; use 1 */
    if (ldb == 0) ldb = 1;
    case_str(desc, sizeof desc, t);
    smat_alloc(&A, ra, ca, lda, t->off);
    smat_alloc(&B, rb, cb, ldb, t->off);
    smat_alloc(&C, t->m, t->n, ldc, t->off);
    smat_fill_input(&A);
    smat_fill_input(&B);
    for (i = 0; i < C.total; i++) C.buf[i] = C_GUARD;
    for (i = 0; i < t->m; i++)
        for (j = 0; j < t->n; j++)
            C.p[i * ldc + j] = t->beta == 0.0f ? NAN : check_uniform(-1.0f, 1.0f);
    acopy = alloc_f(A.total);
    bcopy = alloc_f(B.total);
    memcpy(acopy, A.buf, A.total * sizeof(float));
    memcpy(bcopy, B.buf, B.total * sizeof(float));
    ref = (double *)malloc(t->m * t->n * sizeof(double));
    mag = (double *)malloc(t->m * t->n * sizeof(double));
    if (!ref || !mag) exit(2);
    ref_matmul(t->ta, t->tb, t->m, t->n, t->k, (double)t->alpha, A.p, lda, B.p, ldb,
               (double)t->beta, C.p, ldc, ref, mag);

    if (t->ws) {
        wsz = attn_matmul_workspace_size((attn_trans)t->ta, (attn_trans)t->tb, t->m, t->n, t->k);
        wsbuf = (unsigned char *)malloc(wsz + sizeof(float));
        if (!wsbuf) exit(2);
        ws = wsbuf + (t->ws == 2 ? sizeof(float) : 0);
    }
    st = attn_matmul((attn_trans)t->ta, (attn_trans)t->tb, t->m, t->n, t->k, t->alpha, A.p, lda,
                     B.p, ldb, t->beta, C.p, ldc, ws, wsz);
    n_products++;
    if (!check(st == ATTN_OK, "matmul %s: status %d (%s)", desc, (int)st,
               attn_status_string(st))) {
        all_ok = 0;
        goto done;
    }
    for (i = 0; i < t->m; i++) {
        for (j = 0; j < t->n; j++) {
            const double got = (double)C.p[i * ldc + j], want = ref[i * t->n + j];
            const double tol = ((double)t->k + 2.0) * FLT_EPSILON_D * mag[i * t->n + j] + 1e-30;
            const double err = fabs(got - want);
            if (!(err <= tol)) { /* also catches NaN */
                if (ok_vals) {
                    bad_i = i;
                    bad_j = j;
                }
                ok_vals = 0;
            } else {
                if (mag[i * t->n + j] > 0.0 &&
                    err / (FLT_EPSILON_D * mag[i * t->n + j]) > max_err_ulps)
                    max_err_ulps = err / (FLT_EPSILON_D * mag[i * t->n + j]);
                if (err / tol > max_err_ratio) max_err_ratio = err / tol;
            }
        }
    }
    check(ok_vals, "matmul %s: C[%zu][%zu] = %.9g, want %.9g (tolerance %.3g)", desc, bad_i,
          bad_j, (double)C.p[bad_i * ldc + bad_j], ref[bad_i * t->n + bad_j],
          ((double)t->k + 2.0) * FLT_EPSILON_D * mag[bad_i * t->n + bad_j] + 1e-30);
    for (i = 0; i < C.total; i++) {
        if (!smat_is_elem(&C, i) && !same_bits(C.buf[i], C_GUARD)) {
            ok_guard = 0;
            break;
        }
    }
    check(ok_guard, "matmul %s: C's padding/guard at buffer index %zu was written (%g)", desc,
          i, ok_guard ? 0.0 : (double)C.buf[i]);
    check(memcmp(acopy, A.buf, A.total * sizeof(float)) == 0 &&
              memcmp(bcopy, B.buf, B.total * sizeof(float)) == 0,
          "matmul %s: an input (A or B) was modified", desc);
    all_ok = ok_vals && ok_guard;
done:
    free(A.buf);
    free(B.buf);
    free(C.buf);
    free(acopy);
    free(bcopy);
    free(ref);
    free(mag);
    free(wsbuf);
    return all_ok;
}

static const float alphas[4] = {1.0f, -0.5f, 0.0f, 2.5f};
static const float betas[3] = {0.0f, 1.0f, -2.0f};

/* Every m, n, k in 1..17 for each transpose combination, knobs cycling with the index. */
static void test_small_all(void)
{
    int ta, tb;
    size_t m, n, k;
    long idx = 0;
    for (ta = 0; ta < 2; ta++)
        for (tb = 0; tb < 2; tb++)
            for (m = 1; m <= 17; m++)
                for (n = 1; n <= 17; n++)
                    for (k = 1; k <= 17; k++, idx++) {
                        mm_case t;
                        t.ta = ta;
                        t.tb = tb;
                        t.m = m;
                        t.n = n;
                        t.k = k;
                        t.alpha = alphas[idx % 4];
                        t.beta = betas[(idx / 4) % 3];
                        t.pa = idx % 5 == 1 ? 3 : 0;
                        t.pb = idx % 7 == 2 ? 5 : 0;
                        t.pc = idx % 3 == 0 ? 2 : 0;
                        t.off = (int)(idx % 2);
                        t.ws = (int)((idx / 2) % 3);
                        run_mm(&t);
                    }
}

/* Every alpha x beta x workspace mode x alignment x padding on a few shapes, and k = 0. */
static void test_knobs(void)
{
    static const size_t shapes[][3] = {{1, 1, 1}, {5, 7, 3}, {16, 16, 16}, {33, 17, 65},
                                       {9, 24, 40}, {3, 5, 0}, {17, 1, 0}, {1, 9, 0}};
    size_t s;
    int ta, tb, ai, bi, ws, off, pad;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (ta = 0; ta < 2; ta++)
            for (tb = 0; tb < 2; tb++)
                for (ai = 0; ai < 4; ai++)
                    for (bi = 0; bi < 3; bi++)
                        for (ws = 0; ws < 3; ws++)
                            for (off = 0; off < 2; off++)
                                for (pad = 0; pad < 2; pad++) {
                                    mm_case t;
                                    t.ta = ta;
                                    t.tb = tb;
                                    t.m = shapes[s][0];
                                    t.n = shapes[s][1];
                                    t.k = shapes[s][2];
                                    t.alpha = alphas[ai];
                                    t.beta = betas[bi];
                                    t.pa = pad ? 1 : 0;
                                    t.pb = pad ? 4 : 0;
                                    t.pc = pad ? 3 : 0;
                                    t.off = off;
                                    t.ws = ws;
                                    run_mm(&t);
                                }
}

/* Odd larger sizes, every transpose combination. */
static void test_large(void)
{
    static const size_t shapes[][3] = {{127, 129, 257}, {257, 127, 127}, {1000, 7, 33},
                                       {5, 1000, 17},   {17, 9, 1000},   {1, 1000, 1000},
                                       {1000, 1, 257},  {257, 263, 255}, {64, 64, 64},
                                       {100, 100, 1}};
    size_t s;
    int ta, tb;
    long idx = 0;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (ta = 0; ta < 2; ta++)
            for (tb = 0; tb < 2; tb++, idx++) {
                mm_case t;
                t.ta = ta;
                t.tb = tb;
                t.m = shapes[s][0];
                t.n = shapes[s][1];
                t.k = shapes[s][2];
                t.alpha = alphas[idx % 4];
                t.beta = betas[idx % 3];
                t.pa = idx % 2 ? 3 : 0;
                t.pb = idx % 3 ? 0 : 1;
                t.pc = idx % 4 == 1 ? 5 : 0;
                t.off = (int)(idx % 2);
                t.ws = (int)(idx % 3);
                run_mm(&t);
            }
}

/* Sizes that cross every block boundary of the packed implementation (the private block
 * sizes of this build, read from the implementation): k over one and two chunk depths
 * (ATTN__MM_KC), m over the A block height (ATTN__MM_MC), n over the B panel width
 * (ATTN__MM_NC), each with a ragged edge tile (not a multiple of ATTN__MR / ATTN__NR), n
 * on both sides of the limit under which A is read in place (ATTN__MM_DIRECT_N), and op(B)
 * below and above the size packed whole (ATTN__MM_WHOLE_B floats). Every transpose
 * combination, with every workspace mode or (the costlier shapes, to stay quick under
 * emulation) one mode per combination, cycling. */
static void test_blocks(void)
{
    /* shape, and whether to run every workspace mode (else one per transpose combination,
     * cycling: the exact boundaries are costly under emulation) */
    const size_t shapes[][4] = {
        {ATTN__MM_MC + ATTN__MR + 1, ATTN__MM_DIRECT_N + 5, 2 * ATTN__MM_KC + 5, 0},
        {ATTN__MM_MC + ATTN__MR + 1, ATTN__MM_DIRECT_N + 5, ATTN__MM_KC + 5, 0},
        {2 * ATTN__MM_MC + 7, 2 * ATTN__NR + 5, ATTN__MM_KC + 3, 1},
        {2 * ATTN__MR + 1, ATTN__MM_NC + ATTN__NR + 3, 33, 1},
        {ATTN__MR + 3, ATTN__MM_NC + 2 * ATTN__NR, ATTN__MM_KC + 7, 0},
        {ATTN__MM_MC - 1, ATTN__MM_DIRECT_N, ATTN__MM_KC, 0},
        {ATTN__MM_MC, ATTN__MM_DIRECT_N + 1, ATTN__MM_KC + 1, 0},
        {2 * ATTN__MR + 5, ATTN__MM_DIRECT_N - 3, ATTN__MM_WHOLE_B / ATTN__MM_DIRECT_N + 7, 1}};
    size_t s;
    int ta, tb, ws;
    long idx = 0;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (ta = 0; ta < 2; ta++)
            for (tb = 0; tb < 2; tb++)
                for (ws = 0; ws < 3; ws++, idx++) {
                    if (!shapes[s][3] && ws != (int)(idx / 3 % 3)) continue;
                    mm_case t;
                    t.ta = ta;
                    t.tb = tb;
                    t.m = shapes[s][0];
                    t.n = shapes[s][1];
                    t.k = shapes[s][2];
                    t.alpha = alphas[idx % 4];
                    t.beta = betas[idx % 3];
                    t.pa = idx % 2 ? 3 : 0;
                    t.pb = idx % 5 ? 0 : 1;
                    t.pc = idx % 4 == 1 ? 5 : 0;
                    t.off = (int)(idx % 2);
                    t.ws = ws;
                    run_mm(&t);
                }
}

/* Splitting C into blocks (sub-matrices by pointer offsets and leading dimensions) must give
 * bit-identical results: how a job system spreads one product over threads. */
static void mm_block(int ta, int tb, size_t r0, size_t r1, size_t c0, size_t c1, size_t k,
                     float alpha, const float *a, size_t lda, const float *b, size_t ldb,
                     float beta, float *c, size_t ldc, void *ws, size_t wsz, attn_status *st)
{
    const float *ap = ta ? a + r0 : a + r0 * lda;
    const float *bp = tb ? b + c0 * ldb : b + c0;
    attn_status s = attn_matmul((attn_trans)ta, (attn_trans)tb, r1 - r0, c1 - c0, k, alpha, ap,
                                lda, bp, ldb, beta, c + r0 * ldc + c0, ldc, ws, wsz);
    if (s != ATTN_OK) *st = s;
}

static void test_determinism(void)
{
    /* 40 x 300 x 700: op(B) too big to pack whole, its column blocks small enough; the last
     * crosses the m and n block boundaries (see test_blocks; k's chunks are the same for
     * every block, and k = 1000 above already spans several) */
    const size_t shapes[][3] = {{67, 45, 300}, {33, 70, 1000}, {130, 20, 64}, {40, 300, 700},
                                {ATTN__MM_MC + ATTN__MR + 1, ATTN__MM_NC + ATTN__NR + 1, 33}};
    /* clipped to m / n; the last block runs to the end */
    static const size_t rcuts[] = {0, 1, 4, 12, 29, 30, 64, 200, (size_t)-1};
    static const size_t ccuts[] = {0, 1, 3, 10, 16, 19, 40, 200, (size_t)-1};
    const size_t ncut = sizeof rcuts / sizeof rcuts[0];
    size_t s;
    int ta, tb, wsmode;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (ta = 0; ta < 2; ta++)
            for (tb = 0; tb < 2; tb++)
                for (wsmode = 0; wsmode < 2; wsmode++) {
                    const size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                    const size_t lda = (ta ? m : k) + 1, ldb = (tb ? k : n) + 2, ldc = n + 3;
                    const float alpha = 0.75f, beta = wsmode ? 0.0f : -1.5f;
                    float *a = alloc_f((ta ? k : m) * lda), *b = alloc_f((tb ? n : k) * ldb);
                    float *c0 = alloc_f(m * ldc), *c1 = alloc_f(m * ldc);
                    float *c2 = alloc_f(m * ldc), *c3 = alloc_f(m * ldc), *cinit = alloc_f(m * ldc);
                    size_t i, wsz = 0, x, y;
                    void *ws = NULL;
                    attn_status st = ATTN_OK;
                    char desc[120];

                    snprintf(desc, sizeof desc, "%s%s m=%zu n=%zu k=%zu ws=%d", tname(ta),
                             tname(tb), m, n, k, wsmode);
                    for (i = 0; i < (ta ? k : m) * lda; i++) a[i] = check_uniform(-1.0f, 1.0f);
                    for (i = 0; i < (tb ? n : k) * ldb; i++) b[i] = check_uniform(-1.0f, 1.0f);
                    for (i = 0; i < m * ldc; i++) cinit[i] = check_uniform(-1.0f, 1.0f);
                    memcpy(c0, cinit, m * ldc * sizeof(float));
                    memcpy(c1, cinit, m * ldc * sizeof(float));
                    memcpy(c2, cinit, m * ldc * sizeof(float));
                    memcpy(c3, cinit, m * ldc * sizeof(float));
                    if (wsmode) {
                        /* one buffer big enough for the whole product and every block */
                        wsz = attn_matmul_workspace_size((attn_trans)ta, (attn_trans)tb, m, n, k);
                        for (x = 1; x <= m; x++)
                            for (y = 1; y <= n; y += (y < 20 ? 1 : 7)) {
                                size_t q = attn_matmul_workspace_size((attn_trans)ta,
                                                                      (attn_trans)tb, x, y, k);
                                if (q > wsz) wsz = q;
                            }
                        ws = malloc(wsz ? wsz : 1);
                        if (!ws) exit(2);
                    }
                    /* whole */
                    mm_block(ta, tb, 0, m, 0, n, k, alpha, a, lda, b, ldb, beta, c0, ldc, ws,
                             wsz, &st);
                    /* row blocks */
                    for (x = 0; x + 1 < ncut && rcuts[x] < m; x++) {
                        size_t r1 = rcuts[x + 1] < m ? rcuts[x + 1] : m;
                        mm_block(ta, tb, rcuts[x], r1, 0, n, k, alpha, a, lda, b, ldb, beta, c1,
                                 ldc, ws, wsz, &st);
                    }
                    /* column blocks */
                    for (y = 0; y + 1 < ncut && ccuts[y] < n; y++) {
                        size_t e1 = ccuts[y + 1] < n ? ccuts[y + 1] : n;
                        mm_block(ta, tb, 0, m, ccuts[y], e1, k, alpha, a, lda, b, ldb, beta, c2,
                                 ldc, ws, wsz, &st);
                    }
                    /* 2-D tiles, including 1 x 1 ones */
                    for (x = 0; x + 1 < ncut && rcuts[x] < m; x++)
                        for (y = 0; y + 1 < ncut && ccuts[y] < n; y++) {
                            size_t r1 = rcuts[x + 1] < m ? rcuts[x + 1] : m;
                            size_t e1 = ccuts[y + 1] < n ? ccuts[y + 1] : n;
                            mm_block(ta, tb, rcuts[x], r1, ccuts[y], e1, k, alpha, a, lda, b,
                                     ldb, beta, c3, ldc, ws, wsz, &st);
                        }
                    check(st == ATTN_OK, "determinism %s: a call failed: %s", desc,
                          attn_status_string(st));
                    check(memcmp(c0, c1, m * ldc * sizeof(float)) == 0,
                          "determinism %s: row blocks differ from the whole product", desc);
                    check(memcmp(c0, c2, m * ldc * sizeof(float)) == 0,
                          "determinism %s: column blocks differ from the whole product", desc);
                    check(memcmp(c0, c3, m * ldc * sizeof(float)) == 0,
                          "determinism %s: 2-D tiles differ from the whole product", desc);
                    /* and run to run */
                    memcpy(c1, cinit, m * ldc * sizeof(float));
                    mm_block(ta, tb, 0, m, 0, n, k, alpha, a, lda, b, ldb, beta, c1, ldc, ws, wsz,
                             &st);
                    check(memcmp(c0, c1, m * ldc * sizeof(float)) == 0,
                          "determinism %s: two identical calls differ", desc);
                    /* and the other way, with a workspace or without (a documented promise) */
                    {
                        size_t osz = wsmode ? 0
                                            : attn_matmul_workspace_size((attn_trans)ta,
                                                                         (attn_trans)tb, m, n, k);
                        void *ows = wsmode ? NULL : malloc(osz ? osz : 1);
                        if (!wsmode && !ows) exit(2);
                        memcpy(c1, cinit, m * ldc * sizeof(float));
                        mm_block(ta, tb, 0, m, 0, n, k, alpha, a, lda, b, ldb, beta, c1, ldc,
                                 ows, osz, &st);
                        check(memcmp(c0, c1, m * ldc * sizeof(float)) == 0,
                              "determinism %s: results with and without a workspace differ",
                              desc);
                        free(ows);
                    }
                    free(a);
                    free(b);
                    free(c0);
                    free(c1);
                    free(c2);
                    free(c3);
                    free(cinit);
                    free(ws);
                }
}

/* The workspace: optional; the queried size works; anything smaller (non-NULL) is refused. */
static void test_workspace(void)
{
    static const size_t shapes[][3] = {{3, 3, 3}, {64, 64, 64}, {257, 263, 255}, {1000, 7, 33}};
    size_t s;
    int ta, tb;
    int any_nonzero = 0;
    for (s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (ta = 0; ta < 2; ta++)
            for (tb = 0; tb < 2; tb++) {
                const size_t m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
                const size_t lda = ta ? m : k, ldb = tb ? k : n, ldc = n;
                const size_t wsz =
                    attn_matmul_workspace_size((attn_trans)ta, (attn_trans)tb, m, n, k);
                float *a = alloc_f((ta ? k : m) * lda), *b = alloc_f((tb ? n : k) * ldb);
                float *c = alloc_f(m * ldc), *c0 = alloc_f(m * ldc);
                unsigned char *ws = (unsigned char *)malloc(wsz + 16);
                size_t i, sizes[3];
                int si;
                char desc[100];

                if (!ws) exit(2);
                snprintf(desc, sizeof desc, "%s%s m=%zu n=%zu k=%zu (query %zu bytes)", tname(ta),
                         tname(tb), m, n, k, wsz);
                if (wsz) any_nonzero = 1;
                check(wsz == attn_matmul_workspace_size((attn_trans)ta, (attn_trans)tb, m, n, k),
                      "workspace %s: the query is not repeatable", desc);
                for (i = 0; i < (ta ? k : m) * lda; i++) a[i] = check_uniform(-1.0f, 1.0f);
                for (i = 0; i < (tb ? n : k) * ldb; i++) b[i] = check_uniform(-1.0f, 1.0f);
                for (i = 0; i < m * ldc; i++) c0[i] = c[i] = check_uniform(-1.0f, 1.0f);
                /* too small, non-zero size with a real pointer: ATTN_ERR_WORKSPACE ("smaller
                 * than the query says"), C untouched */
                sizes[0] = wsz - 1;
                sizes[1] = wsz / 2;
                sizes[2] = 1;
                for (si = 0; si < 3; si++) {
                    attn_status st;
                    if (wsz == 0 || sizes[si] == 0 || sizes[si] >= wsz) continue;
                    st = attn_matmul((attn_trans)ta, (attn_trans)tb, m, n, k, 1.0f, a, lda, b,
                                     ldb, 1.0f, c, ldc, ws, sizes[si]);
                    check(st == ATTN_ERR_WORKSPACE,
                          "workspace %s: size %zu < query gave %d (%s), want ATTN_ERR_WORKSPACE",
                          desc, sizes[si], (int)st, attn_status_string(st));
                    check(memcmp(c, c0, m * ldc * sizeof(float)) == 0,
                          "workspace %s: C written on a workspace error", desc);
                }
                /* non-NULL with size 0: the doc says only "NULL with size 0 is fine"; a
                 * non-NULL pointer of size 0 is "smaller than the query" when the query is
                 * not 0. Accept ATTN_ERR_WORKSPACE (C untouched) or running without one. */
                {
                    attn_status st = attn_matmul((attn_trans)ta, (attn_trans)tb, m, n, k, 1.0f,
                                                 a, lda, b, ldb, 0.0f, c, ldc, ws, 0);
                    if (st == ATTN_ERR_WORKSPACE && wsz > 0)
                        check(memcmp(c, c0, m * ldc * sizeof(float)) == 0,
                              "workspace %s: C written on a workspace error", desc);
                    else
                        check(st == ATTN_OK, "workspace %s: non-NULL size 0 gave %d (%s)", desc,
                              (int)st, attn_status_string(st));
                }
                free(a);
                free(b);
                free(c);
                free(c0);
                free(ws);
            }
    if (!any_nonzero)
        printf("note: attn_matmul_workspace_size() was 0 for every shape; the too-small "
               "workspace path could not be exercised\n");
}

/* One call expected to fail with `want` and leave C untouched. */
static void expect_err(const char *what, attn_status want, int ta, int tb, size_t m, size_t n,
                       size_t k, const float *a, size_t lda, const float *b, size_t ldb,
                       float *c, size_t ldc, void *ws, size_t wsz, float *cbuf, size_t cn)
{
    float *copy = alloc_f(cn);
    attn_status st;
    memcpy(copy, cbuf, cn * sizeof(float));
    st = attn_matmul((attn_trans)ta, (attn_trans)tb, m, n, k, 1.0f, a, lda, b, ldb, 0.5f, c,
                     ldc, ws, wsz);
    check(st == want, "error path '%s': got %d (%s), want %d (%s)", what, (int)st,
          attn_status_string(st), (int)want, attn_status_string(want));
    check(memcmp(copy, cbuf, cn * sizeof(float)) == 0, "error path '%s': C was written", what);
    free(copy);
}

static void test_errors(void)
{
    /* a valid problem: m = 5, n = 4, k = 3 (A stored 5 x 3 or 3 x 5, B 3 x 4 or 4 x 3) */
    float a[64], b[64], cbuf[64];
    float *c = cbuf;
    const size_t bigh = (size_t)1 << (sizeof(size_t) * 4 + 1); /* bigh * bigh overflows */
    size_t i;
    attn_status st;
    for (i = 0; i < 64; i++) {
        a[i] = check_uniform(-1.0f, 1.0f);
        b[i] = check_uniform(-1.0f, 1.0f);
        cbuf[i] = check_uniform(-1.0f, 1.0f);
    }
    /* sanity: the valid base calls succeed (so every failure below is about one change) */
    st = attn_matmul(ATTN_NO_TRANS, ATTN_NO_TRANS, 5, 4, 3, 1.0f, a, 3, b, 4, 0.0f, c, 4, NULL, 0);
    check(st == ATTN_OK, "errors: valid NN base call gave %s", attn_status_string(st));
    st = attn_matmul(ATTN_TRANS, ATTN_TRANS, 5, 4, 3, 1.0f, a, 5, b, 3, 0.0f, c, 4, NULL, 0);
    check(st == ATTN_OK, "errors: valid TT base call gave %s", attn_status_string(st));
    /* lda = k = 3 < m = 5 is valid for A stored m x k (NO_TRANS) even though m > 3 */
    st = attn_matmul(ATTN_NO_TRANS, ATTN_NO_TRANS, 5, 4, 3, 1.0f, a, 3, b, 4, 0.0f, c, 4, NULL, 0);
    check(st == ATTN_OK, "errors: lda = k < m with NO_TRANS must be valid, got %s",
          attn_status_string(st));
    /* TN: A stored k x m = 3 x 5, lda = m = 5 > k valid; NT: B stored n x k = 4 x 3, ldb = 3 */
    st = attn_matmul(ATTN_TRANS, ATTN_TRANS, 5, 4, 3, 1.0f, a, 5, b, 3, 0.0f, c, 4, NULL, 0);
    check(st == ATTN_OK, "errors: TT lda = m, ldb = k must be valid, got %s",
          attn_status_string(st));
    st = attn_matmul(ATTN_NO_TRANS, ATTN_TRANS, 5, 4, 3, 1.0f, a, 3, b, 3, 0.0f, c, 4, NULL, 0);
    check(st == ATTN_OK, "errors: NT ldb = k < n must be valid, got %s", attn_status_string(st));

    /* NULL pointers (a and b are unread with k = 0: C = beta C) */
    expect_err("a NULL", ATTN_ERR_NULL, 0, 0, 5, 4, 3, NULL, 3, b, 4, c, 4, NULL, 0, cbuf, 64);
    expect_err("b NULL", ATTN_ERR_NULL, 0, 0, 5, 4, 3, a, 3, NULL, 4, c, 4, NULL, 0, cbuf, 64);
    expect_err("c NULL", ATTN_ERR_NULL, 0, 0, 5, 4, 3, a, 3, b, 4, NULL, 4, NULL, 0, cbuf, 64);
    expect_err("c NULL, k = 0", ATTN_ERR_NULL, 0, 0, 5, 4, 0, a, 1, b, 4, NULL, 4, NULL, 0, cbuf,
               64);
    {
        float keep[64];
        size_t j;
        int bad = 0;
        memcpy(keep, cbuf, sizeof keep);
        st = attn_matmul(ATTN_NO_TRANS, ATTN_NO_TRANS, 5, 4, 0, 1.0f, NULL, 1, NULL, 4, 0.5f, c,
                         4, NULL, 0);
        for (j = 0; j < 64; j++) bad += cbuf[j] != (j < 20 ? 0.5f * keep[j] : keep[j]);
        check(st == ATTN_OK && !bad, "k = 0 with a, b NULL: status %s, %d elements wrong",
              attn_status_string(st), bad);
    }
    /* zero sizes: m = 0 or n = 0 is an empty product (pointers unchecked), k = 0 above */
    expect_err("m = 0", ATTN_OK, 0, 0, 0, 4, 3, a, 3, b, 4, c, 4, NULL, 0, cbuf, 64);
    expect_err("n = 0", ATTN_OK, 0, 0, 5, 0, 3, a, 3, b, 4, c, 4, NULL, 0, cbuf, 64);
    expect_err("m = n = 0, k = 0", ATTN_OK, 0, 0, 0, 0, 0, a, 3, b, 4, c, 4, NULL, 0, cbuf, 64);
    expect_err("m = 0, all NULL", ATTN_OK, 0, 0, 0, 4, 3, NULL, 3, NULL, 4, NULL, 4, NULL, 0,
               cbuf, 64);
    expect_err("m = 0, bad ta", ATTN_ERR_ARG, 7, 0, 0, 4, 3, a, 3, b, 4, c, 4, NULL, 0, cbuf, 64);
    /* overlaps: C over A or B, the workspace over A, B or C (nothing written) */
    expect_err("C inside A", ATTN_ERR_ALIAS, 0, 0, 2, 2, 3, cbuf, 3, b, 4, cbuf + 4, 4, NULL, 0,
               cbuf, 64);
    expect_err("C over B", ATTN_ERR_ALIAS, 0, 0, 2, 2, 3, a, 3, cbuf + 8, 4, cbuf + 10, 4, NULL,
               0, cbuf, 64);
    {
        const size_t wsz = attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_NO_TRANS, 2, 2, 3);
        float *big = (float *)malloc(wsz + 64 * sizeof(float));
        float keep[64];
        size_t j;
        check(big != NULL, "out of memory");
        if (big) {
            for (j = 0; j < 64; j++) big[j] = (float)j;
            memcpy(keep, big, sizeof keep);
            st = attn_matmul(ATTN_NO_TRANS, ATTN_NO_TRANS, 2, 2, 3, 1.0f, a, 3, b, 4, 0.0f, big,
                             2, big + 2, wsz);
            check(st == ATTN_ERR_ALIAS && memcmp(keep, big, sizeof keep) == 0,
                  "workspace over C: status %s (want alias), C %s", attn_status_string(st),
                  memcmp(keep, big, sizeof keep) ? "written" : "untouched");
            st = attn_matmul(ATTN_NO_TRANS, ATTN_NO_TRANS, 2, 2, 3, 1.0f, big + 8, 3, b, 4, 0.0f,
                             c, 2, big, wsz);
            check(st == ATTN_ERR_ALIAS, "workspace over A: status %s (want alias)",
                  attn_status_string(st));
            free(big);
        }
    }
    /* leading dimensions: A stored m x k (NO_TRANS) or k x m (TRANS), B k x n or n x k */
    expect_err("NN lda < k", ATTN_ERR_LD, 0, 0, 5, 4, 3, a, 2, b, 4, c, 4, NULL, 0, cbuf, 64);
    expect_err("TN lda < m (lda = k valid only untransposed)", ATTN_ERR_LD, 1, 0, 5, 4, 3, a, 3,
               b, 4, c, 4, NULL, 0, cbuf, 64);
    expect_err("TN lda = 4 < m", ATTN_ERR_LD, 1, 0, 5, 4, 3, a, 4, b, 4, c, 4, NULL, 0, cbuf, 64);
    expect_err("NN ldb < n", ATTN_ERR_LD, 0, 0, 5, 4, 3, a, 3, b, 3, c, 4, NULL, 0, cbuf, 64);
    expect_err("NT ldb < k", ATTN_ERR_LD, 0, 1, 5, 4, 3, a, 3, b, 2, c, 4, NULL, 0, cbuf, 64);
    expect_err("ldc < n", ATTN_ERR_LD, 0, 0, 5, 4, 3, a, 3, b, 4, c, 3, NULL, 0, cbuf, 64);
    expect_err("TT ldc < n", ATTN_ERR_LD, 1, 1, 5, 4, 3, a, 5, b, 3, c, 3, NULL, 0, cbuf, 64);
    /* bad enum values */
    expect_err("ta = 2", ATTN_ERR_ARG, 2, 0, 5, 4, 3, a, 5, b, 4, c, 4, NULL, 0, cbuf, 64);
    expect_err("tb = 2", ATTN_ERR_ARG, 0, 2, 5, 4, 3, a, 3, b, 4, c, 4, NULL, 0, cbuf, 64);
#ifndef __cplusplus /* outside the enum's range of values in C++ */
    expect_err("ta = 7", ATTN_ERR_ARG, 7, 0, 5, 4, 3, a, 5, b, 4, c, 4, NULL, 0, cbuf, 64);
#endif
    /* overflow: sizes whose extents overflow size_t or the address space; the pointers are
     * real but tiny, so an implementation that does not check crashes here */
    expect_err("C extent m * ldc overflows", ATTN_ERR_OVERFLOW, 0, 0, bigh, bigh, 1, a, 1, b,
               bigh, c, bigh, NULL, 0, cbuf, 64);
    expect_err("A extent (TRANS, k x m) overflows", ATTN_ERR_OVERFLOW, 1, 0, bigh, 1, bigh, a,
               bigh, b, 1, c, 1, NULL, 0, cbuf, 64);
    expect_err("B extent (TRANS, n x k) overflows", ATTN_ERR_OVERFLOW, 0, 1, 1, bigh, bigh, a,
               bigh, b, bigh, c, bigh, NULL, 0, cbuf, 64);
    expect_err("A extent (m - 1) * lda overflows", ATTN_ERR_OVERFLOW, 0, 0, 4, 1, SIZE_MAX / 2,
               a, SIZE_MAX / 2, b, 1, c, 1, NULL, 0, cbuf, 64);
    expect_err("ldc * (m - 1) overflows", ATTN_ERR_OVERFLOW, 0, 0, 4, 1, 1, a, 1, b, 1, c,
               SIZE_MAX / 2, NULL, 0, cbuf, 64);
    expect_err("bytes of C overflow (elements fit)", ATTN_ERR_OVERFLOW, 0, 0, SIZE_MAX / 4 + 2, 1,
               1, a, 1, b, 1, c, 1, NULL, 0, cbuf, 64);
    /* status strings: never NULL, never empty */
    {
        static const attn_status all[] = {ATTN_OK,           ATTN_ERR_NULL,      ATTN_ERR_SIZE,
                                          ATTN_ERR_LD,       ATTN_ERR_WORKSPACE, ATTN_ERR_OVERFLOW,
                                          ATTN_ERR_ARG,      (attn_status)-7};
        size_t s;
        for (s = 0; s < sizeof all / sizeof all[0]; s++) {
            const char *str = attn_status_string(all[s]);
            check(str != NULL && str[0] != '\0', "attn_status_string(%d) is NULL or empty",
                  (int)all[s]);
        }
    }
}

int main(void)
{
    check_begin("matmul");
    check_seed(20240611ull);
    test_small_all();
    test_knobs();
    test_large();
    test_blocks();
    test_determinism();
    test_workspace();
    test_errors();
    printf("matmul: %ld products checked; max error %.3g x 2^-23 x magnitude, %.3f of the "
           "tolerance\n",
           n_products, max_err_ulps, max_err_ratio);
    /* check_close is the harness's scalar comparison; one use here keeps it exercised */
    check(check_close(1.0, 1.0, 0.0, 0.0), "check_close sanity");
    return check_end("matmul");
}
