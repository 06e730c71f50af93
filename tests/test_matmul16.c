/* test_matmul16: attn_matmul_typed and attn_linear_typed with B (the weights) stored in f16
 * and bf16.
 *
 * Each case draws float A, B and C, rounds B to the 16-bit type with attn_convert (stored
 * one element, 2 bytes, past an aligned address, rows padded with 16-bit NaNs) and widens it
 * back into a float matrix. Then:
 *  - C must be within attn_matmul's bound of the double-precision reference computed from
 *    the widened (rounded) B: |C - Cref| <= (k + 2) u mag per element (u = 2^-24, mag the
 *    sum of |alpha a b| plus |beta c|), C's padding and the guard after it untouched;
 *  - where api.h promises attn_matmul's order (op(B) = B at any m; m > 8 rows; op(A) = A^T
 *    with op(B) = B^T), C must equal attn_matmul on the widened B bit for bit;
 *  - with and without a workspace (the packed and unpacked paths; a skinny 16-bit product
 *    ignores it), beta 0 over a NaN-filled C and beta 0.5.
 * Shapes: m over 1..9 and 17 (the matrix-vector rows 4 + 2 + 1 and past them), n and k over
 * every tail of the vector widths and across the k passes (1030 > ATTN__MV_PASS), all four
 * transpose pairs. Also: attn_matmul_typed with ATTN_F32 is attn_matmul bit for bit, errors
 * (a bad type, a short ldb, C over B's 16-bit bytes; C just past them is fine),
 * attn_linear_typed against attn_linear on the widened weights (bias, activation), and the
 * skinny products' determinism as api.h states it, for f16, bf16, q8_0 and q4_0 B (the same
 * bits again, with a workspace, in column blocks; 16-bit: in row blocks of 2 to 8 rows, and
 * a single row past k = 4096). */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"
#include "ref_linalg.h"
#include <stdint.h>
#include <string.h>

#define GUARD 16
static const float C_GUARD = -4242.5f;
static double max_ratio[2];
static long n_cases[2];

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static int same_bits(const float *x, const float *y, size_t n)
{
    return memcmp(x, y, n * sizeof(float)) == 0;
}

/* rows x cols floats (ld = cols + 3) in [-1, 1), the padding NaN */
static float *rand_mat(size_t rows, size_t cols, size_t ld)
{
    float *p = (float *)xmalloc(rows * ld * sizeof(float) + 1);
    size_t i, j;
    for (i = 0; i < rows; i++)
        for (j = 0; j < ld; j++) p[i * ld + j] = j < cols ? check_uniform(-1.0f, 1.0f) : NAN;
    return p;
}

/* One product: B (rows x cols stored, ld) rounded to t, stored at an odd 2-byte offset */
static void run(attn_dtype t, int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                float beta)
{
    const size_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    const size_t lda = ac + 3, ldb = bc + 3, ldc = n + 2;
    float *a = rand_mat(ar, ac, lda), *bf = rand_mat(br, bc, ldb);
    uint16_t *bh_mem = (uint16_t *)xmalloc((br * ldb + 1) * sizeof(uint16_t)), *bh = bh_mem + 1;
    float *bw = (float *)xmalloc(br * ldb * sizeof(float));
    float *c0 = rand_mat(m, n, ldc);
    float *c = (float *)xmalloc((m * ldc + GUARD) * sizeof(float));
    float *c2 = (float *)xmalloc((m * ldc + GUARD) * sizeof(float));
    double *ref = (double *)xmalloc(m * n * sizeof(double));
    double *mag = (double *)xmalloc(m * n * sizeof(double));
    const size_t wsz = attn_matmul_workspace_size((attn_trans)ta, (attn_trans)tb, m, n, k);
    void *ws = xmalloc(wsz);
    const int ti = t == ATTN_F16 ? 0 : 1;
    const int exact = !tb || m > 8 || (ta && tb); /* api.h: attn_matmul's order */
    int use_ws;
    size_t i, j;
    attn_convert(t, bh, ATTN_F32, bf, br * ldb); /* NaN padding stays NaN */
    attn_convert(ATTN_F32, bw, t, bh, br * ldb);
    ref_matmul(ta, tb, m, n, k, alpha, a, lda, bw, ldb, beta, c0, ldc, ref, mag);
    for (use_ws = 0; use_ws < 2; use_ws++) {
        int ok = 1, okg = 1;
        double worst = 0.0;
        attn_status st;
        for (i = 0; i < m * ldc + GUARD; i++) c[i] = i < m * ldc ? c0[i] : C_GUARD;
        if (beta == 0.0f)
            for (i = 0; i < m; i++)
                for (j = 0; j < n; j++) c[i * ldc + j] = NAN; /* never read */
        memcpy(c2, c, (m * ldc + GUARD) * sizeof(float));
        st = attn_matmul_typed((attn_trans)ta, (attn_trans)tb, m, n, k, alpha, a, lda, t, bh, ldb,
                               beta, c, ldc, use_ws ? ws : NULL, use_ws ? wsz : 0);
        check(st == ATTN_OK, "matmul16 status %d", (int)st);
        for (i = 0; i < m; i++)
            for (j = 0; j < ldc; j++) {
                const float x = c[i * ldc + j];
                if (j < n) {
                    const double tol = ((double)k + 2.0) * REF_U_FLT * mag[i * n + j] + 1e-30;
                    const double e = fabs((double)x - ref[i * n + j]);
                    if (!(e <= tol)) ok = 0;
                    else if (e / tol > worst) worst = e / tol;
                } else if (!same_bits(&x, &c0[i * ldc + j], 1)) okg = 0;
            }
        for (i = 0; i < GUARD; i++) okg &= c[m * ldc + i] == C_GUARD;
        check(ok, "matmul16 %s ta %d tb %d m %zu n %zu k %zu beta %g ws %d: outside the bound",
              t == ATTN_F16 ? "f16" : "bf16", ta, tb, m, n, k, beta, use_ws);
        check(okg, "matmul16 m %zu n %zu k %zu: padding or guard written", m, n, k);
        if (worst > max_ratio[ti]) max_ratio[ti] = worst;
        if (exact) {
            st = attn_matmul((attn_trans)ta, (attn_trans)tb, m, n, k, alpha, a, lda, bw, ldb, beta,
                             c2, ldc, use_ws ? ws : NULL, use_ws ? wsz : 0);
            check(st == ATTN_OK && same_bits(c, c2, m * ldc + GUARD),
                  "matmul16 ta %d tb %d m %zu n %zu k %zu ws %d: not attn_matmul's bits", ta, tb,
                  m, n, k, use_ws);
        }
        n_cases[ti]++;
    }
    free(a), free(bf), free(bh_mem), free(bw), free(c0), free(c), free(c2), free(ref), free(mag);
    free(ws);
}

static void test_sweep(void)
{
    static const size_t ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 17};
    static const size_t ns[] = {1, 3, 8, 15, 16, 17, 31, 33, 70};
    static const size_t ks[] = {1, 2, 7, 8, 9, 16, 17, 33, 100, 1030};
    size_t im, in, ik;
    int t, ta, tb;
    for (t = 0; t < 2; t++)
        for (ta = 0; ta < 2; ta++)
            for (tb = 0; tb < 2; tb++)
                for (im = 0; im < sizeof ms / sizeof ms[0]; im++)
                    for (in = 0; in < sizeof ns / sizeof ns[0]; in++)
                        for (ik = 0; ik < sizeof ks / sizeof ks[0]; ik++) {
                            /* the long k only on a few shapes (its cost) */
                            if (ks[ik] == 1030 && (ns[in] > 17 || ms[im] % 4 == 0)) continue;
                            run(t ? ATTN_BF16 : ATTN_F16, ta, tb, ms[im], ns[in], ks[ik],
                                (im + in) % 3 ? 1.0f : -0.75f, (ik + in) % 2 ? 0.5f : 0.0f);
                        }
    /* decode-sized weights: 1 and 3 rows of a 4096 x 256 B^T, 1 row of B, 1 row of a long k */
    run(ATTN_F16, 0, 1, 1, 256, 4096, 1.0f, 0.0f);
    run(ATTN_BF16, 0, 1, 3, 256, 4096, 1.0f, 1.0f);
    run(ATTN_BF16, 0, 0, 1, 256, 4096, 1.0f, 0.0f);
    run(ATTN_F16, 0, 1, 1, 6, 4096 + 40, 1.0f, 0.5f); /* one row, k past ATTN__MV1_K */
    run(ATTN_F16, 0, 1, 1, 6, 2 * 4096 + 40, 1.0f, 0.5f); /* one row, k past 2 x ATTN__MV1_K */
}

static void test_f32_and_errors(void)
{
    const size_t m = 5, n = 19, k = 23;
    float *a = rand_mat(m, k, k), *b = rand_mat(k, n, n), *c = rand_mat(m, n, n);
    float *c2 = (float *)xmalloc(m * n * sizeof(float));
    float *buf = (float *)xmalloc((k * n + m * n) * sizeof(float));
    uint16_t *bh = (uint16_t *)(void *)buf;
    float *after = buf + (k * n + 1) / 2; /* just past B's 16-bit bytes */
    float saved[5 * 19];
    memcpy(c2, c, m * n * sizeof(float));
    check(attn_matmul_typed(ATTN_NO_TRANS, ATTN_TRANS, m, n, k, 1.0f, a, k, ATTN_F32, b, k, 0.5f,
                            c, n, NULL, 0) == ATTN_OK &&
              attn_matmul(ATTN_NO_TRANS, ATTN_TRANS, m, n, k, 1.0f, a, k, b, k, 0.5f, c2, n, NULL,
                          0) == ATTN_OK &&
              same_bits(c, c2, m * n),
          "matmul16: ATTN_F32 is not attn_matmul's bits");
    attn_convert(ATTN_F16, bh, ATTN_F32, b, k * n);
    memcpy(saved, c, sizeof saved);
    check(attn_matmul_typed(ATTN_NO_TRANS, ATTN_NO_TRANS, m, n, k, 1.0f, a, k, (attn_dtype)7, bh,
                            n, 0.0f, c, n, NULL, 0) == ATTN_ERR_ARG,
          "matmul16: a bad type accepted");
    check(attn_matmul_typed(ATTN_NO_TRANS, ATTN_NO_TRANS, m, n, k, 1.0f, a, k, ATTN_F16, bh,
                            n - 1, 0.0f, c, n, NULL, 0) == ATTN_ERR_LD,
          "matmul16: a short ldb accepted");
    check(attn_matmul_typed(ATTN_NO_TRANS, ATTN_NO_TRANS, m, n, k, 1.0f, a, k, ATTN_F16, bh, n,
                            0.0f, (float *)(void *)(bh + k * n - 2), n, NULL, 0) == ATTN_ERR_ALIAS,
          "matmul16: C over B's last elements accepted");
    check(memcmp(saved, c, sizeof saved) == 0, "matmul16: C written on an error");
    check(attn_matmul_typed(ATTN_NO_TRANS, ATTN_NO_TRANS, m, n, k, 1.0f, a, k, ATTN_F16, bh, n,
                            0.0f, after, n, NULL, 0) == ATTN_OK,
          "matmul16: C just past B's 16-bit bytes refused");
    free(a), free(b), free(c), free(c2), free(buf);
}

/* attn_linear_typed on W in 16 bits against attn_linear on the widened W */
static void test_linear(void)
{
    static const size_t toks[] = {1, 3, 9, 20};
    const size_t din = 37, dout = 29;
    size_t it, tw, ty;
    for (ty = 0; ty < 2; ty++)
        for (tw = 0; tw < 2; tw++)
            for (it = 0; it < 4; it++) {
                const attn_dtype t = ty ? ATTN_BF16 : ATTN_F16;
                const size_t T = toks[it], wr = tw ? dout : din, wc = tw ? din : dout;
                float *x = rand_mat(T, din, din), *wf = rand_mat(wr, wc, wc);
                float *bias = rand_mat(1, dout, dout);
                uint16_t *wh = (uint16_t *)xmalloc(wr * wc * sizeof(uint16_t));
                float *ww = (float *)xmalloc(wr * wc * sizeof(float));
                float *y = (float *)xmalloc(T * dout * sizeof(float));
                float *y2 = (float *)xmalloc(T * dout * sizeof(float));
                double *ref = (double *)xmalloc(T * dout * sizeof(double));
                double *mag = (double *)xmalloc(T * dout * sizeof(double));
                const size_t wsz = attn_linear_workspace_size((attn_trans)tw, T, din, dout);
                void *ws = xmalloc(wsz);
                size_t i;
                int ok = 1;
                attn_convert(t, wh, ATTN_F32, wf, wr * wc);
                attn_convert(ATTN_F32, ww, t, wh, wr * wc);
                check(attn_linear_typed(x, din, T, din, (attn_trans)tw, t, wh, wc, bias, dout,
                                        ATTN_ACT_GELU, y, dout, ws, wsz) == ATTN_OK &&
                          attn_linear(x, din, T, din, (attn_trans)tw, ww, wc, bias, dout,
                                      ATTN_ACT_GELU, y2, dout, ws, wsz) == ATTN_OK,
                      "linear16: status");
                if (!tw || T > 8) {
                    check(same_bits(y, y2, T * dout), "linear16 tw %zu T %zu: not attn_linear's "
                          "bits", tw, T);
                }
                /* the product alone against the reference */
                check(attn_linear_typed(x, din, T, din, (attn_trans)tw, t, wh, wc, NULL, dout,
                                        ATTN_ACT_NONE, y, dout, NULL, 0) == ATTN_OK,
                      "linear16: status");
                ref_matmul(0, (int)tw, T, dout, din, 1.0, x, din, ww, wc, 0.0, NULL, 0, ref, mag);
                for (i = 0; i < T * dout; i++)
                    if (!(fabs(y[i] - ref[i]) <= (din + 2.0) * REF_U_FLT * mag[i] + 1e-30)) ok = 0;
                check(ok, "linear16 %s tw %zu T %zu: outside the bound", ty ? "bf16" : "f16", tw,
                      T);
                free(x), free(wf), free(bias), free(wh), free(ww), free(y), free(y2), free(ref);
                free(mag), free(ws);
            }
}

/* api.h's determinism of the skinny products (op(B) = B^T, op(A) = A, m <= 8) for B of type
 * t, k elements deep: C of 8 rows and 13 columns must keep its bits when computed in column
 * blocks, with or without a workspace, again, and (f16, bf16) in row blocks of 2 to 8 rows;
 * a single row keeps them where k > 4096 (api.h: one row with k <= 4096 sums in 4 chains). */
static const char *tname(attn_dtype t)
{
    return t == ATTN_F16 ? "f16" : t == ATTN_BF16 ? "bf16" : t == ATTN_Q8_0 ? "q8_0" : "q4_0";
}

static void skinny_bits(attn_dtype t, size_t k)
{
    static const size_t splits[][4] = {{2, 6}, {3, 5}, {4, 4}, {5, 3}, {6, 2}, {2, 3, 3},
                                       {2, 2, 4}, {3, 3, 2}};
    const size_t m = 8, n = 13, lda = k + 3, ldc = n + 2, rb = attn_dtype_bytes(t, k);
    const size_t wsz = attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_TRANS, m, n, k);
    const int half = t == ATTN_F16 || t == ATTN_BF16;
    float *a = rand_mat(m, k, lda), *bf = rand_mat(n, k, k);
    unsigned char *b = (unsigned char *)xmalloc(n * rb);
    float c[8 * 15], c2[8 * 15];
    void *ws = xmalloc(wsz);
    size_t s, i, r0;
    int ok = 1;
    for (i = 0; i < n; i++)
        check(attn_convert(t, b + i * rb, ATTN_F32, bf + i * k, k) == ATTN_OK, "convert");
#define SKINNY(rows, cols, ap, bp, cp, w, wn)                                              \
    attn_matmul_typed(ATTN_NO_TRANS, ATTN_TRANS, rows, cols, k, 0.75f, ap, lda, t, bp,     \
                      k, 0.0f, cp, ldc, w, wn)
    check(SKINNY(m, n, a, b, c, NULL, 0) == ATTN_OK, "skinny %s k %zu", tname(t), k);
    memcpy(c2, c, sizeof c);
    ok &= SKINNY(m, n, a, b, c2, NULL, 0) == ATTN_OK && same_bits(c, c2, m * ldc); /* again */
    ok &= SKINNY(m, n, a, b, c2, ws, wsz) == ATTN_OK && same_bits(c, c2, m * ldc);
    memset(c2, 0, sizeof c2);
    ok &= SKINNY(m, 5, a, b, c2, NULL, 0) == ATTN_OK; /* columns 0..4, then 5..12 */
    ok &= SKINNY(m, n - 5, a, b + 5 * rb, c2 + 5, NULL, 0) == ATTN_OK;
    for (i = 0; i < m; i++) ok &= same_bits(c + i * ldc, c2 + i * ldc, n);
    check(ok, "skinny %s k %zu: not the same bits again, with a workspace, in column blocks",
          tname(t), k);
    for (s = 0; half && s < sizeof splits / sizeof splits[0]; s++) {
        memset(c2, 0, sizeof c2);
        for (i = 0, r0 = 0; i < 4 && splits[s][i]; r0 += splits[s][i++])
            check(SKINNY(splits[s][i], n, a + r0 * lda, b, c2 + r0 * ldc, NULL, 0) == ATTN_OK,
                  "skinny rows");
        for (i = 0; i < m; i++)
            check(same_bits(c + i * ldc, c2 + i * ldc, n),
                  "skinny %s k %zu: row %zu not the same bits in row blocks %zu+%zu+%zu",
                  tname(t), k, i, splits[s][0], splits[s][1], splits[s][2]);
    }
    for (i = 0; half && k > 4096 && i < m; i++) {
        check(SKINNY(1, n, a + i * lda, b, c2, NULL, 0) == ATTN_OK, "skinny one row");
        check(same_bits(c + i * ldc, c2, n), "skinny %s k %zu: row %zu alone not the same bits",
              tname(t), k, i);
    }
#undef SKINNY
    free(a), free(bf), free(b), free(ws);
}

static void test_skinny_bits(void)
{
    static const size_t ks[] = {5, 64, 1000, 4096, 4100, 8192};
    static const attn_dtype ts[] = {ATTN_F16, ATTN_BF16, ATTN_Q8_0, ATTN_Q4_0};
    size_t i, j;
    for (i = 0; i < 4; i++)
        for (j = 0; j < sizeof ks / sizeof ks[0]; j++)
            if (i < 2 || ks[j] % 32 == 0) skinny_bits(ts[i], ks[j]);
}

int main(void)
{
    check_begin("matmul16");
    test_sweep();
    test_f32_and_errors();
    test_linear();
    test_skinny_bits();
    printf("matmul16: %ld f16 and %ld bf16 products; worst error / bound %.3f (f16), %.3f "
           "(bf16)\n", n_cases[0], n_cases[1], max_ratio[0], max_ratio[1]);
    return check_end("matmul16");
}
