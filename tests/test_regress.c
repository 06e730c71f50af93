/* test_regress.c - regression tests for defects found by fuzzing and review (issue 23),
 * one named group per defect; each failed before its fix (the pointer ones under UBSan,
 * -fsanitize=undefined, which the fuzz builds use).
 *   attention_huge_scores   plain path, scaled scores of 2^24 and more: finite, exact winner
 *   tasks_huge_qlen         attn_attention_tasks for q_len near SIZE_MAX: 0, no division by 0
 *   causal_offset_extremes  ATTN_CAUSAL_OFFSET near PTRDIFF_MAX / PTRDIFF_MIN: no overflow
 *   one_row_huge_ld         one-row matrices with leading dimensions up to SIZE_MAX
 *   workspace_monotone      matmul / int8 / linear workspace monotone in m, n, k, bounded, no wrap
 *   norm_eps_zero           layernorm / rmsnorm with eps = 0 on zero-variance rows: no NaN
 *   init_reports            attention init functions: unknown layout, overflowing strides
 *   attention_aliased_output  O / scores strides mapping two rows onto one float: refused
 *   tasks_zero_sizes        attn_attention_tasks: 0 for a zero kv_heads / kv_len / head dims
 *   rope_pos_wrap           attn_rope: pos0 + tokens - 1 past SIZE_MAX refused, x untouched
 *   ring_reset              a wrapped ring: emptied by len = start = 0; rewinding it refused
 *   q8_cache_range          q8_0 cache rows: NaN exactly where max|x| / 127 is binary16's inf
 *   mha_over_xkv            attn_mha's y over xkv (in place) with q_tokens != kv_tokens
 */
#include "attn.h"

#include "check.h"

#include <float.h>
#include <stdint.h>

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static int same_bits(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof(float)) == 0;
}

/* ---- attention_huge_scores ------------------------------------------------------------ */

/* q_len queries, kv_len keys, d = 4: q = (a, 0, 0, 0) for every query, k_j = (b_j, 0, 0, 0)
 * with b_j = bw for the winner (key `win`; also key `tie` when tie < kv_len) and at most
 * bw * (1 - 1/64) elsewhere (for a bw > 0; else bw (1 + 1/64)). The scaled scores are
 * ~2^e; the gap to the losers is ~2^(e-6), far past exp's range, so O is the winner's V
 * row (the mean of the two tied rows) up to rounding. */
static void huge_case(size_t q_len, size_t kv_len, size_t win, size_t tie, float a, float bw,
                      float scale)
{
    const size_t d = 4, dv = 3;
    float *q = (float *)xcalloc(q_len * d, sizeof(float));
    float *k = (float *)xcalloc(kv_len * d, sizeof(float));
    float *v = (float *)xcalloc(kv_len * dv, sizeof(float));
    float *o = (float *)xcalloc(q_len * dv, sizeof(float));
    attn_attention_params p = attn_attention_init(1, 1, 1, q_len, kv_len, d, dv, q, k, v, o,
                                                  ATTN_LAYOUT_BHLD);
    size_t wsz = attn_attention_workspace_size(&p), i, j, c;
    void *ws = xcalloc(wsz, 1);
    attn_status st;
    int ok = 1;
    for (i = 0; i < q_len; i++) q[i * d] = a;
    for (j = 0; j < kv_len; j++) {
        const float f = 1.0f - (1.0f + (float)(j % 7)) / 64.0f; /* the losers' fractions */
        k[j * d] = j == win || j == tie ? bw : bw * ((a > 0) == (bw > 0) ? f : 2.0f - f);
        for (c = 0; c < dv; c++) v[j * dv + c] = (float)(j + 1) + 0.25f * (float)c;
    }
    p.scale = scale;
    st = attn_attention(&p, ws, wsz);
    for (i = 0; i < q_len && ok; i++)
        for (c = 0; c < dv; c++) {
            double want = v[win * dv + c];
            if (tie < kv_len) want = 0.5 * (want + v[tie * dv + c]);
            if (!isfinite(o[i * dv + c]) || fabs(o[i * dv + c] - want) > 1e-5 * fabs(want)) {
                ok = 0;
                check(0, "attention_huge_scores: q_len %zu kv_len %zu win %zu tie %zu a %g "
                      "bw %g scale %g: O[%zu][%zu] = %g, want %g", q_len, kv_len, win, tie,
                      (double)a, (double)bw, (double)scale, i, c, (double)o[i * dv + c], want);
                break;
            }
        }
    check(st == ATTN_OK && ok, "attention_huge_scores: status %d", (int)st);
    free(q), free(k), free(v), free(o), free(ws);
}

static void test_attention_huge_scores(void)
{
    static const size_t QL[] = {1, 3, 16, 200};
    static const size_t KL[] = {2, 9, 130, 300};
    int e, t;
    size_t qi, ki;
    check_seed(23);
    for (e = 20; e <= 60; e += 4)
        for (qi = 0; qi < sizeof QL / sizeof QL[0]; qi++)
            for (ki = 0; ki < sizeof KL / sizeof KL[0]; ki++)
                for (t = 0; t < 6; t++) {
                    const size_t kv = KL[ki], win = (size_t)(check_uniform(0, 1) * (float)kv) % kv;
                    const size_t tie = t % 3 == 0 ? (win + kv / 2) % kv : kv;
                    const float scale = check_uniform(0.05f, 0.95f);
                    const float a = ldexpf(check_uniform(1, 2), e / 2) * (t & 1 ? -1.0f : 1.0f);
                    const float bw = ldexpf(check_uniform(1, 2), e - e / 2) *
                                     (t & 2 ? -1.0f : 1.0f);
                    if (tie == win) continue;
                    huge_case(QL[qi], kv, win, tie, a, bw, scale);
                }
}

/* ---- tasks_huge_qlen -------------------------------------------------------------------- */

static void test_tasks_huge_qlen(void)
{
    static const size_t QL[] = {(size_t)-1, (size_t)-2, (size_t)-1 - 190, (size_t)-1 - 191,
                                (size_t)-1 - 192, (size_t)PTRDIFF_MAX, (size_t)PTRDIFF_MAX / 4 + 1};
    float buf[64] = {0};
    size_t i;
    for (i = 0; i < sizeof QL / sizeof QL[0]; i++) {
        attn_attention_params p = attn_attention_init(1, 1, 1, QL[i], 1, 4, 4, buf, buf, buf,
                                                      buf + 32, ATTN_LAYOUT_BHLD);
        char ws[16];
        check(attn_attention_tasks(&p) == 0, "tasks_huge_qlen: q_len %zu gives %zu tasks", QL[i],
              attn_attention_tasks(&p));
        check(attn_attention_task(&p, 0, ws, sizeof ws) != ATTN_OK,
              "tasks_huge_qlen: q_len %zu task 0 accepted", QL[i]);
    }
}

/* ---- causal_offset_extremes ------------------------------------------------------------- */

static void causal_case(size_t q_len, size_t kv_len, ptrdiff_t off, int all_visible)
{
    const size_t d = 5, dv = 3;
    float *q = (float *)xcalloc(q_len * d, sizeof(float));
    float *k = (float *)xcalloc(kv_len * d, sizeof(float));
    float *v = (float *)xcalloc(kv_len * dv, sizeof(float));
    float *o = (float *)xcalloc(q_len * dv, sizeof(float));
    float *want = (float *)xcalloc(q_len * dv, sizeof(float));
    attn_attention_params p = attn_attention_init(1, 1, 1, q_len, kv_len, d, dv, q, k, v, o,
                                                  ATTN_LAYOUT_BHLD);
    size_t wsz = attn_attention_workspace_size(&p), i;
    void *ws = xcalloc(wsz, 1);
    attn_status st;
    for (i = 0; i < q_len * d; i++) q[i] = check_uniform(-1, 1);
    for (i = 0; i < kv_len * d; i++) k[i] = check_uniform(-1, 1);
    for (i = 0; i < kv_len * dv; i++) v[i] = check_uniform(-1, 1);
    if (all_visible) { /* the same call without a causal mask */
        p.o = want;
        attn_attention(&p, ws, wsz);
        p.o = o;
    }
    p.causal = ATTN_CAUSAL_OFFSET;
    p.causal_offset = off;
    st = attn_attention(&p, ws, wsz);
    check(st == ATTN_OK && same_bits(o, want, q_len * dv),
          "causal_offset_extremes: q_len %zu kv_len %zu offset %td: status %d, O differs from %s",
          q_len, kv_len, off, (int)st, all_visible ? "no mask" : "zeros");
    free(q), free(k), free(v), free(o), free(want), free(ws);
}

static void test_causal_offset_extremes(void)
{
    static const size_t QL[] = {1, 5, 16, 200}, KL[] = {1, 7, 300};
    size_t qi, ki;
    for (qi = 0; qi < sizeof QL / sizeof QL[0]; qi++)
        for (ki = 0; ki < sizeof KL / sizeof KL[0]; ki++) {
            causal_case(QL[qi], KL[ki], PTRDIFF_MAX, 1);
            causal_case(QL[qi], KL[ki], PTRDIFF_MAX - 1, 1);
            causal_case(QL[qi], KL[ki], PTRDIFF_MAX - (ptrdiff_t)QL[qi], 1);
            causal_case(QL[qi], KL[ki], (ptrdiff_t)KL[ki], 1);
            causal_case(QL[qi], KL[ki], PTRDIFF_MIN, 0);
            causal_case(QL[qi], KL[ki], PTRDIFF_MIN + 1, 0);
            causal_case(QL[qi], KL[ki], -(ptrdiff_t)QL[qi], 0);
        }
}

/* ---- one_row_huge_ld -------------------------------------------------------------------- */

/* One-row operands accept any leading dimension: the results must be those of the dense
 * call, and (under UBSan) no pointer past the last row may be formed. */
static void test_one_row_huge_ld(void)
{
    static const size_t NS[] = {1, 3, 8, 17, 40}, KS[] = {1, 2, 9, 300};
    static const size_t BIG[] = {(size_t)-1, (size_t)PTRDIFF_MAX, (size_t)PTRDIFF_MAX / 4 + 1};
    size_t ni, ki, bi, i;
    int ta, tb, wsm;
    for (ni = 0; ni < sizeof NS / sizeof NS[0]; ni++)
        for (ki = 0; ki < sizeof KS / sizeof KS[0]; ki++)
            for (bi = 0; bi < sizeof BIG / sizeof BIG[0]; bi++)
                for (ta = 0; ta < 2; ta++)
                    for (tb = 0; tb < 2; tb++)
                        for (wsm = 0; wsm < 2; wsm++) {
                            /* m = 1: C one row; A one row when not transposed; B one row when
                             * k = 1 (not transposed) or n = 1 (transposed) */
                            const size_t n = NS[ni], k = KS[ki], big = BIG[bi];
                            const size_t lda = ta ? 1 : k, ldb = tb ? k : n;
                            float *a = (float *)xcalloc(k, sizeof(float));
                            float *b = (float *)xcalloc(k * n, sizeof(float));
                            float *c0 = (float *)xcalloc(n, sizeof(float));
                            float *c1 = (float *)xcalloc(n, sizeof(float));
                            const size_t wsz = attn_matmul_workspace_size((attn_trans)ta,
                                                                          (attn_trans)tb, 1, n, k);
                            void *ws = wsm ? xcalloc(wsz, 1) : NULL;
                            const int b1 = tb ? n == 1 : k == 1;
                            attn_status s0, s1;
                            for (i = 0; i < k; i++) a[i] = check_uniform(-1, 1);
                            for (i = 0; i < k * n; i++) b[i] = check_uniform(-1, 1);
                            s0 = attn_matmul((attn_trans)ta, (attn_trans)tb, 1, n, k, 1.0f, a, lda,
                                             b, ldb, 0.0f, c0, n, ws, wsm ? wsz : 0);
                            s1 = attn_matmul((attn_trans)ta, (attn_trans)tb, 1, n, k, 1.0f, a,
                                             ta && k > 1 ? lda : big, b, b1 ? big : ldb, 0.0f, c1,
                                             big, ws, wsm ? wsz : 0);
                            check(s0 == ATTN_OK && s1 == ATTN_OK && same_bits(c0, c1, n),
                                  "one_row_huge_ld: matmul ta %d tb %d n %zu k %zu ld %zu ws %d: "
                                  "status %d %d or bits differ", ta, tb, n, k, big, wsm, (int)s0,
                                  (int)s1);
                            if (!ta) { /* the linear layer with one token */
                                s1 = attn_linear(a, big, 1, k, (attn_trans)tb, b, b1 ? big : ldb,
                                                 NULL, n, ATTN_ACT_NONE, c1, big, ws,
                                                 wsm ? wsz : 0);
                                check(s1 == ATTN_OK && same_bits(c0, c1, n),
                                      "one_row_huge_ld: linear tw %d n %zu k %zu ld %zu: status %d"
                                      " or bits differ", tb, n, k, big, (int)s1);
                            }
                            free(a), free(b), free(c0), free(c1), free(ws);
                        }
    /* attn_mha with one query token and one key token, huge leading dimensions */
    for (bi = 0; bi < sizeof BIG / sizeof BIG[0]; bi++) {
        const size_t d = 8, big = BIG[bi];
        float *wt = (float *)xcalloc(4 * d * d, sizeof(float));
        float xq[8], xkv[8], y0[8], y1[8];
        attn_mha_weights w;
        size_t wsz;
        void *ws;
        attn_status s0, s1;
        for (i = 0; i < 4 * d * d; i++) wt[i] = check_uniform(-0.5f, 0.5f);
        for (i = 0; i < d; i++) xq[i] = check_uniform(-1, 1), xkv[i] = check_uniform(-1, 1);
        memset(&w, 0, sizeof w);
        w.d_model = d, w.heads = 2;
        w.wq = wt, w.wk = wt + d * d, w.wv = wt + 2 * d * d, w.wo = wt + 3 * d * d;
        wsz = attn_mha_workspace_size(&w, 1, 1);
        ws = xcalloc(wsz, 1);
        s0 = attn_mha(&w, xq, d, 1, xkv, d, 1, 0, y0, d, ws, wsz);
        s1 = attn_mha(&w, xq, big, 1, xkv, big, 1, 0, y1, big, ws, wsz);
        check(s0 == ATTN_OK && s1 == ATTN_OK && same_bits(y0, y1, d),
              "one_row_huge_ld: mha one token ld %zu: status %d %d or bits differ", big, (int)s0,
              (int)s1);
        free(wt), free(ws);
    }
    /* attention with one key: K and V row strides are free */
    for (bi = 0; bi < sizeof BIG / sizeof BIG[0]; bi++) {
        const size_t ql = 16, d = 4;
        float q[64], k[4], v[4], o0[64], o1[64];
        attn_attention_params p = attn_attention_init(1, 1, 1, ql, 1, d, d, q, k, v, o0,
                                                      ATTN_LAYOUT_BHLD);
        const size_t wsz = attn_attention_workspace_size(&p);
        void *ws = xcalloc(wsz, 1);
        attn_status s0, s1;
        for (i = 0; i < 64; i++) q[i] = check_uniform(-1, 1);
        for (i = 0; i < 4; i++) k[i] = check_uniform(-1, 1), v[i] = check_uniform(-1, 1);
        s0 = attn_attention(&p, ws, wsz);
        p.o = o1, p.k_sl = p.v_sl = BIG[bi];
        s1 = attn_attention(&p, ws, wsz);
        check(s0 == ATTN_OK && s1 == ATTN_OK && same_bits(o0, o1, ql * d),
              "one_row_huge_ld: attention one key, k_sl = v_sl = %zu: status %d %d or bits differ",
              BIG[bi], (int)s0, (int)s1);
        free(ws);
    }
}

/* ---- workspace_monotone ----------------------------------------------------------------- */

static void test_workspace_monotone(void)
{
    static const size_t V[] = {1, 2, 5, 6, 16, 17, 100, 144, 255, 256, 257, 300, 511, 512, 513,
                               4080, 4096, 8192, 131072, 131073, 1000000, (size_t)1 << 31,
                               (size_t)PTRDIFF_MAX / 4, (size_t)PTRDIFF_MAX, (size_t)-1 - 191,
                               (size_t)-1 - 15, (size_t)-1};
    const size_t nv = sizeof V / sizeof V[0];
    size_t i, j, l, k, ta, tb, bad = 0;
    size_t top[2][2];
    for (ta = 0; ta < 2; ta++)
        for (tb = 0; tb < 2; tb++)
            top[ta][tb] = attn_matmul_workspace_size((attn_trans)ta, (attn_trans)tb, (size_t)-1,
                                                     (size_t)-1, (size_t)-1);
    for (ta = 0; ta < 2; ta++)
        for (tb = 0; tb < 2; tb++) {
            const attn_trans A = (attn_trans)ta, B = (attn_trans)tb;
            check(top[ta][tb] > 0 && top[ta][tb] < ((size_t)64 << 20),
                  "workspace_monotone: bound %zu", top[ta][tb]);
            for (i = 0; i < nv; i++)
                for (j = 0; j < nv; j++)
                    for (l = 0; l < nv; l++) {
                        const size_t w = attn_matmul_workspace_size(A, B, V[i], V[j], V[l]);
                        const size_t i1 = i + 1 < nv ? i + 1 : i, j1 = j + 1 < nv ? j + 1 : j;
                        const size_t l1 = l + 1 < nv ? l + 1 : l;
                        int ok = w > 0 && w <= top[ta][tb];
                        ok &= w <= attn_matmul_workspace_size(A, B, V[i1], V[j], V[l]);
                        ok &= w <= attn_matmul_workspace_size(A, B, V[i], V[j1], V[l]);
                        ok &= w <= attn_matmul_workspace_size(A, B, V[i], V[j], V[l1]);
                        if (!ok && bad++ < 5)
                            check(0, "workspace_monotone: ta %zu tb %zu m %zu n %zu k %zu: %zu",
                                  ta, tb, V[i], V[j], V[l], w);
                    }
            /* every k from 1 to 1100, a few n */
            for (j = 0; j < nv; j++)
                for (k = 1; k < 1100; k++)
                    if (attn_matmul_workspace_size(A, B, 7, V[j], k) >
                            attn_matmul_workspace_size(A, B, 7, V[j], k + 1) && bad++ < 5)
                        check(0, "workspace_monotone: n %zu: k %zu needs more than k + 1", V[j], k);
        }
    /* attn_matmul_int8's (k in blocks of 32): m, n and k grown one at a time, both sides
     * of the few-row path's limit (8 rows) and of the B chunk's cap */
    {
        static const size_t KB[] = {1, 2, 3, 4, 5, 8, 16, 17, 100, 205, 1000, 131072,
                                    (size_t)-1 / 32};
        const size_t nkb = sizeof KB / sizeof KB[0];
        for (i = 0; i < nv; i++)
            for (j = 0; j < nv; j++)
                for (l = 0; l < nkb; l++) {
                    const size_t m = V[i], n = V[j], kk = 32 * KB[l];
                    const size_t w = attn_matmul_int8_workspace_size(m, n, kk);
                    int ok = w > 0;
                    if (m < (size_t)-1) ok &= w <= attn_matmul_int8_workspace_size(m + 1, n, kk);
                    if (n < (size_t)-1) ok &= w <= attn_matmul_int8_workspace_size(m, n + 1, kk);
                    if (l + 1 < nkb)
                        ok &= w <= attn_matmul_int8_workspace_size(m, n, 32 * KB[l + 1]);
                    if (kk + 32 > kk) ok &= w <= attn_matmul_int8_workspace_size(m, n, kk + 32);
                    if (!ok && bad++ < 10)
                        check(0, "workspace_monotone: int8 m %zu n %zu k %zu: %zu", m, n, kk, w);
                }
        for (i = 1; i <= 20; i++) /* every m, every k to 32 * 300 */
            for (k = 32; k <= 32 * 300; k += 32)
                if ((attn_matmul_int8_workspace_size(i, 13, k) >
                         attn_matmul_int8_workspace_size(i + 1, 13, k) ||
                     attn_matmul_int8_workspace_size(i, 13, k) >
                         attn_matmul_int8_workspace_size(i, 13, k + 32)) &&
                    bad++ < 10)
                    check(0, "workspace_monotone: int8 m %zu k %zu", i, k);
    }
    check(bad == 0, "workspace_monotone: %zu non-monotone sizes", bad);
    for (i = 0; i + 1 < nv; i++)
        check(attn_linear_workspace_size(ATTN_TRANS, V[i], V[i], V[i]) <=
                      attn_linear_workspace_size(ATTN_TRANS, V[i + 1], V[i + 1], V[i + 1]),
              "workspace_monotone: linear size %zu", V[i]);
}

/* ---- norm_eps_zero ---------------------------------------------------------------------- */

/* eps = 0 is a valid argument: a row of equal values (layernorm) or of zeros (rmsnorm) has
 * variance 0 and normalizes to 0 (y = beta; rstd_out +inf), never 0 * inf = NaN. */
static void test_norm_eps_zero(void)
{
    static const size_t NS[] = {1, 2, 7, 8, 33, 300, 600};
    static const float VS[] = {0.0f, 1.0f, -3.5f, 0.1f, 1e6f, 1e-30f, 3e38f};
    size_t ni, vi, i;
    for (ni = 0; ni < sizeof NS / sizeof NS[0]; ni++)
        for (vi = 0; vi < sizeof VS / sizeof VS[0]; vi++) {
            const size_t n = NS[ni], rows = 3;
            float *x = (float *)xcalloc(rows * n, sizeof(float));
            float *y = (float *)xcalloc(rows * n, sizeof(float));
            float *beta = (float *)xcalloc(n, sizeof(float));
            float mean[3], rstd[3];
            attn_status st;
            int ok = 1;
            for (i = 0; i < rows * n; i++) x[i] = VS[vi];
            for (i = 0; i < n; i++) beta[i] = (float)i - 2.0f;
            st = attn_layernorm(x, n, y, n, rows, n, NULL, beta, 0.0f, mean, rstd);
            for (i = 0; i < rows * n; i++) ok &= y[i] == beta[i % n];
            for (i = 0; i < rows; i++) ok &= mean[i] == VS[vi] && rstd[i] == INFINITY;
            check(st == ATTN_OK && ok, "norm_eps_zero: layernorm n %zu value %g: status %d, "
                  "y[0] %g mean %g rstd %g", n, (double)VS[vi], (int)st, (double)y[0],
                  (double)mean[0], (double)rstd[0]);
            if (VS[vi] == 0.0f) {
                st = attn_rmsnorm(x, n, y, n, rows, n, beta, 0.0f);
                for (i = 0, ok = 1; i < rows * n; i++) ok &= y[i] == 0.0f;
                check(st == ATTN_OK && ok, "norm_eps_zero: rmsnorm n %zu zero row: status %d, "
                      "y[0] %g", n, (int)st, (double)y[0]);
            }
            free(x), free(y), free(beta);
        }
}

/* ---- init_reports ------------------------------------------------------------------------ */

/* attn_attention_init / attn_attention_init_kv cannot return a status: an unknown layout and
 * strides that overflow size_t must show up as the call's error, never as a silent result. */
static void test_init_reports(void)
{
    float buf[4096] = {0}, kc[256] = {0}, vc[256] = {0};
    char ws[1 << 16];
    const size_t big = (size_t)1 << (sizeof(size_t) * 4 + 1); /* big * big overflows */
    attn_attention_params p;
    attn_kv_cache c;
    attn_status st;
    int lay;
    for (lay = 2; lay < 5; lay++) {
        p = attn_attention_init(1, 1, 1, 2, 2, 4, 4, buf, buf + 64, buf + 128, buf + 256,
                                (attn_layout)lay);
        st = attn_attention(&p, ws, sizeof ws);
        check(st == ATTN_ERR_ARG, "init_reports: layout %d: status %d", lay, (int)st);
    }
    for (lay = 0; lay < 2; lay++) { /* q_len * head_dim overflows; the strides must not wrap */
        p = attn_attention_init(2, 2, 2, big, 2, big, 4, buf, buf + 64, buf + 128, buf + 256,
                                (attn_layout)lay);
        st = attn_attention(&p, ws, sizeof ws);
        check(st == ATTN_ERR_OVERFLOW, "init_reports: overflowing strides, layout %d: status %d",
              lay, (int)st);
        p = attn_attention_init(2, big, big, big, 2, 4, 4, buf, buf + 64, buf + 128, buf + 256,
                                (attn_layout)lay);
        st = attn_attention(&p, ws, sizeof ws);
        check(st == ATTN_ERR_OVERFLOW, "init_reports: overflowing heads, layout %d: status %d",
              lay, (int)st);
    }
    st = attn_kv_cache_init(&c, kc, vc, 1, 1, 8, 4, 4);
    check(st == ATTN_OK && attn_kv_cache_append(&c, 2, buf, buf, ATTN_LAYOUT_BHLD) == ATTN_OK,
          "init_reports: cache");
    p = attn_attention_init_kv(&c, 1, 2, buf, buf + 256, (attn_layout)5, ATTN_CAUSAL_BOTTOM_RIGHT);
    st = attn_attention(&p, ws, sizeof ws);
    check(st == ATTN_ERR_ARG, "init_reports: init_kv with layout 5: status %d", (int)st);
    p = attn_attention_init_kv(&c, 1, 2, buf, buf + 256, ATTN_LAYOUT_BLHD,
                               ATTN_CAUSAL_BOTTOM_RIGHT);
    st = attn_attention(&p, ws, sizeof ws);
    check(st == ATTN_OK && p.causal == ATTN_CAUSAL_BOTTOM_RIGHT, "init_reports: init_kv: %d",
          (int)st);
}

/* ---- attention_aliased_output ---------------------------------------------------------- */

/* O strides mapping two output rows onto one float (a race between work items, and the
 * last writer wins in one call) are refused as ATTN_ERR_LD, nothing written; the usual
 * and padded layouts pass. */
static void test_attention_aliased_output(void)
{
    static float q[4096], k[4096], v[4096], o[4096], sc[4096];
    static char ws[1 << 18];
    attn_attention_params p;
    attn_status st;
    size_t i;
    int ok;
    for (i = 0; i < 4096; i++) q[i] = k[i] = v[i] = 0.5f;
    p = attn_attention_init(1, 2, 2, 3, 4, 4, 4, q, k, v, o, ATTN_LAYOUT_BHLD);
    check(attn_attention(&p, ws, sizeof ws) == ATTN_OK, "attention_aliased_output: dense");
    p.o_sh = 4, p.o_sl = 4; /* head 1 row i = head 0 row i + 1 */
    for (i = 0; i < 4096; i++) o[i] = -7.0f;
    st = attn_attention(&p, ws, sizeof ws);
    for (i = 0, ok = 1; i < 4096; i++) ok &= o[i] == -7.0f;
    check(st == ATTN_ERR_LD && ok, "attention_aliased_output: heads over rows: status %d", (int)st);
    p.o_sh = 8, p.o_sl = 4, p.batch = 1; /* rows 0..2 of head 1 over rows 2.. of head 0 */
    st = attn_attention(&p, ws, sizeof ws);
    check(st == ATTN_ERR_LD, "attention_aliased_output: partial: status %d", (int)st);
    p.o_sh = 3 * 4 + 1, p.o_sl = 4; /* padded, distinct */
    check(attn_attention(&p, ws, sizeof ws) == ATTN_OK, "attention_aliased_output: padded");
    p = attn_attention_init(1, 2, 2, 3, 4, 4, 4, q, k, v, o, ATTN_LAYOUT_BLHD);
    p.scores = sc, p.scores_sq = 4, p.scores_sh = 4, p.scores_sb = 0; /* scores aliased */
    st = attn_attention(&p, ws, sizeof ws);
    check(st == ATTN_ERR_LD, "attention_aliased_output: scores: status %d", (int)st);
}

/* ---- tasks_zero_sizes ------------------------------------------------------------------- */

static void test_tasks_zero_sizes(void)
{
    float buf[64] = {0};
    int f;
    for (f = 0; f < 5; f++) {
        attn_attention_params p = attn_attention_init(1, 2, 2, 3, 4, 4, 4, buf, buf, buf,
                                                      buf + 32, ATTN_LAYOUT_BHLD);
        if (f == 1) p.kv_heads = 0;
        if (f == 2) p.kv_len = 0;
        if (f == 3) p.head_dim = 0;
        if (f == 4) p.v_head_dim = 0;
        check(attn_attention_tasks(&p) == (f ? 0u : 2u),
              "tasks_zero_sizes: size %d zero: %zu tasks", f, attn_attention_tasks(&p));
    }
}

/* ---- rope_pos_wrap ---------------------------------------------------------------------- */

static void test_rope_pos_wrap(void)
{
    attn_rope_params rp = {8, 0, ATTN_ROPE_ADJACENT, 0.0f, 0.0f, NULL};
    float x[3 * 8], x0[3 * 8];
    size_t i, t;
    for (i = 0; i < 3 * 8; i++) x[i] = x0[i] = (float)i + 0.5f;
    for (t = 1; t <= 3; t++) { /* positions SIZE_MAX - 1 .. : 2 tokens fit, 3 wrap */
        const attn_status st = attn_rope(&rp, x, 8, t, 1, (size_t)-1 - 1, NULL);
        check(t < 3 ? st == ATTN_OK : st == ATTN_ERR_OVERFLOW && same_bits(x, x0, 3 * 8),
              "rope_pos_wrap: %zu tokens from SIZE_MAX - 1: status %d", t, (int)st);
        memcpy(x, x0, sizeof x);
    }
}

/* ---- ring_reset ------------------------------------------------------------------------- */

static void test_ring_reset(void)
{
    enum { D = 4, CAP = 3 };
    float k[CAP * D], v[CAP * D], kn[5 * D], vn[5 * D], q[D], o[D], k0[CAP * D];
    attn_kv_cache c;
    attn_attention_params p;
    size_t i;
    for (i = 0; i < 5 * D; i++) kn[i] = vn[i] = (float)i;
    for (i = 0; i < D; i++) q[i] = 1.0f;
    check(attn_kv_cache_init_ring(&c, ATTN_F32, k, v, 1, 1, CAP, D, D) == ATTN_OK &&
              attn_kv_cache_append(&c, 5, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_CAPACITY &&
              attn_kv_cache_append(&c, 2, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_OK &&
              attn_kv_cache_append(&c, 2, kn + 2 * D, vn + 2 * D, ATTN_LAYOUT_BHLD) == ATTN_OK,
          "ring_reset: appends");
    check(c.len == CAP && c.start == 1, "ring_reset: wrapped to len %zu start %zu", c.len,
          c.start);
    memcpy(k0, k, sizeof k);
    c.len = 2; /* a rewind of a wrapped ring: refused, as documented */
    check(attn_kv_cache_append(&c, 1, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_ARG &&
              same_bits(k, k0, CAP * D),
          "ring_reset: a wrapped ring rewound to len 2 accepted");
    p = attn_attention_init_kv(&c, 1, 1, q, o, ATTN_LAYOUT_BHLD, ATTN_CAUSAL_NONE);
    check(p.kv_len == 0 && p.k == NULL, "ring_reset: init_kv of a rewound ring not refused");
    c.len = 0, c.start = 0; /* emptied: appends from row 0 again */
    check(attn_kv_cache_append(&c, 1, kn + 4 * D, vn + 4 * D, ATTN_LAYOUT_BHLD) == ATTN_OK &&
              c.len == 1 && c.start == 0 && k[0] == kn[4 * D],
          "ring_reset: an emptied ring does not append at row 0");
    p = attn_attention_init_kv(&c, 1, 1, q, o, ATTN_LAYOUT_BHLD, ATTN_CAUSAL_NONE);
    {
        const size_t wsz = attn_attention_workspace_size(&p);
        void *ws = xcalloc(wsz ? wsz : 1, 1);
        check(p.kv_len == 1 && attn_attention(&p, ws, wsz) == ATTN_OK && o[0] == vn[4 * D],
              "ring_reset: attention over the emptied ring's one key");
        free(ws);
    }
}

/* ---- q8_cache_range --------------------------------------------------------------------- */

static void test_q8_cache_range(void)
{
    /* the largest finite binary16 is 65504; max|x| / 127 from 65520 on rounds to inf */
    static const float X[] = {65504.0f * 127, 8320000.0f, 65519.0f * 127, 65520.0f * 127,
                              9e6f};
    unsigned char k[34], v[34];
    float row[32], back[32];
    attn_kv_cache c;
    size_t i, j;
    for (i = 0; i < sizeof X / sizeof X[0]; i++) {
        const int nan = (double)X[i] / 127 >= 65520.0;
        for (j = 0; j < 32; j++) row[j] = j == 5 ? X[i] : (float)j;
        check(attn_kv_cache_init_type(&c, ATTN_Q8_0, k, v, 1, 1, 1, 32, 32) == ATTN_OK &&
                  attn_kv_cache_append(&c, 1, row, row, ATTN_LAYOUT_BHLD) == ATTN_OK &&
                  attn_convert(ATTN_F32, back, ATTN_Q8_0, k, 32) == ATTN_OK,
              "q8_cache_range: %g: append", (double)X[i]);
        check(nan ? back[5] != back[5] : back[5] == back[5] && fabsf(back[5] - X[i]) <= X[i] / 254,
              "q8_cache_range: max %.9g read back as %.9g (NaN expected: %d)", (double)X[i],
              (double)back[5], nan);
    }
}

/* ---- mha_over_xkv ----------------------------------------------------------------------- */

static void test_mha_over_xkv(void)
{
    enum { D = 8, HEADS = 2 };
    static const size_t LQ[] = {2, 5, 3}, LK[] = {5, 2, 3};
    float w[4][D * D], b[4][D], xq[5 * D], xkv[5 * D], y[5 * D], want[5 * D];
    attn_mha_weights mw;
    size_t i, t, wsz;
    void *ws;
    memset(&mw, 0, sizeof mw);
    for (t = 0; t < 4; t++)
        for (i = 0; i < D * D; i++) w[t][i] = check_uniform(-0.5, 0.5), b[t][i % D] = 0.1f * t;
    mw.d_model = D, mw.heads = HEADS;
    mw.wq = w[0], mw.wk = w[1], mw.wv = w[2], mw.wo = w[3];
    mw.bq = b[0], mw.bk = b[1], mw.bv = b[2], mw.bo = b[3];
    for (t = 0; t < 3; t++) {
        attn_status st;
        for (i = 0; i < 5 * D; i++) xq[i] = check_uniform(-1, 1), xkv[i] = check_uniform(-1, 1);
        wsz = attn_mha_workspace_size(&mw, LQ[t], LK[t]);
        ws = xcalloc(wsz, 1);
        st = attn_mha(&mw, xq, D, LQ[t], xkv, D, LK[t], 0, want, D, ws, wsz);
        check(st == ATTN_OK, "mha_over_xkv: out of place: status %d", (int)st);
        if (LQ[t] <= LK[t]) { /* y over xkv's first rows */
            st = attn_mha(&mw, xq, D, LQ[t], xkv, D, LK[t], 0, xkv, D, ws, wsz);
            check(st == ATTN_OK && same_bits(xkv, want, LQ[t] * D),
                  "mha_over_xkv: q_tokens %zu kv_tokens %zu: status %d or other bits", LQ[t],
                  LK[t], (int)st);
        } else { /* xkv the first rows of y */
            memcpy(y, xkv, LK[t] * D * sizeof(float));
            st = attn_mha(&mw, xq, D, LQ[t], y, D, LK[t], 0, y, D, ws, wsz);
            check(st == ATTN_OK && same_bits(y, want, LQ[t] * D),
                  "mha_over_xkv: q_tokens %zu kv_tokens %zu: status %d or other bits", LQ[t],
                  LK[t], (int)st);
        }
        free(ws);
    }
}

/* ---- alibi_masked_overflow ------------------------------------------------------------- */

/* A key the additive mask removes (-inf) stays removed when its ALiBi bias overflows to +inf
 * (a finite slope near FLT_MAX / kv_len): once -inf + inf made the row NaN. Each row sees one
 * key (at its own position: bias 0), so O is that key's V row exactly; decode (one query of
 * 40 keys) and prefill (40 x 40). */
static void test_alibi_masked_overflow(void)
{
    enum { L = 40, D = 4 };
    static float k[L * D], v[L * D], q[L * D], o[L * D], mask[L * L];
    static unsigned char ws[1 << 20];
    const float slope = -1e38f;
    size_t i, j, lq;
    for (i = 0; i < L * D; i++) k[i] = 0.01f * (float)(i % 7), v[i] = (float)i, q[i] = 0.1f;
    for (lq = 1; lq <= L; lq += L - 1) {
        attn_attention_params p = attn_attention_init(1, 1, 1, lq, L, D, D, q, k, v, o,
                                                      ATTN_LAYOUT_BHLD);
        size_t bad = 0;
        for (i = 0; i < lq; i++)
            for (j = 0; j < L; j++) mask[i * L + j] = j == i + L - lq ? 0.0f : -INFINITY;
        p.mask = mask, p.mask_sq = L, p.mask_sh = p.mask_sb = L * L;
        p.alibi_slopes = &slope;
        check(attn_attention(&p, ws, sizeof ws) == ATTN_OK, "alibi_masked_overflow: status");
        for (i = 0; i < lq * D; i++) bad += o[i] != v[(L - lq) * D + i];
        check(bad == 0, "alibi_masked_overflow: %zu query rows: %zu of %zu outputs wrong "
              "(o[0] %g)", lq, bad, lq * D, o[0]);
    }
}

/* ---- empty_kv_start --------------------------------------------------------------------- */

/* An empty call (batch or q_len 0) still checks kv_start against a nonzero kv_len */
static void test_empty_kv_start(void)
{
    attn_attention_params p = attn_attention_init(0, 1, 1, 1, 7, 4, 4, NULL, NULL, NULL, NULL,
                                                  ATTN_LAYOUT_BHLD);
    p.kv_start = 100;
    check(attn_attention(&p, NULL, 0) == ATTN_ERR_ARG, "empty_kv_start: batch 0 accepted "
          "kv_start 100 of 7");
    p.batch = 1, p.q_len = 0;
    check(attn_attention(&p, NULL, 0) == ATTN_ERR_ARG, "empty_kv_start: q_len 0 accepted it");
    p.kv_start = 6;
    check(attn_attention(&p, NULL, 0) == ATTN_OK, "empty_kv_start: kv_start 6 of 7 refused");
    p.kv_len = 0, p.kv_start = 0;
    check(attn_attention(&p, NULL, 0) == ATTN_OK, "empty_kv_start: kv_len 0 refused");
}

/* Every group, or only those named on the command line. */
int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } groups[] = {{"attention_huge_scores", test_attention_huge_scores},
                  {"tasks_huge_qlen", test_tasks_huge_qlen},
                  {"causal_offset_extremes", test_causal_offset_extremes},
                  {"one_row_huge_ld", test_one_row_huge_ld},
                  {"workspace_monotone", test_workspace_monotone},
                  {"norm_eps_zero", test_norm_eps_zero},
                  {"init_reports", test_init_reports},
                  {"attention_aliased_output", test_attention_aliased_output},
                  {"tasks_zero_sizes", test_tasks_zero_sizes},
                  {"rope_pos_wrap", test_rope_pos_wrap},
                  {"ring_reset", test_ring_reset},
                  {"q8_cache_range", test_q8_cache_range},
                  {"mha_over_xkv", test_mha_over_xkv},
                  {"alibi_masked_overflow", test_alibi_masked_overflow},
                  {"empty_kv_start", test_empty_kv_start}};
    size_t g;
    int i;
    setvbuf(stdout, NULL, _IOLBF, 0);
    check_begin("regress");
    for (g = 0; g < sizeof groups / sizeof groups[0]; g++) {
        int run = argc < 2;
        for (i = 1; i < argc; i++) run |= strcmp(argv[i], groups[g].name) == 0;
        if (run) groups[g].fn();
    }
    return check_end("regress");
}
