/* test_seeds.c - the worked examples E1..E10 of the seed documents (recomputed in double
 * precision, see /work/shared/seed-examples.md), each as a named test case:
 * "E<k> <what>: pass/FAIL (max err ...)".
 *
 * Tolerances (the library's documented error bounds; the expected values are printed to 9
 * significant digits, so every bound also allows 1e-8 * |want|):
 *   matmul:    exact (small integer inputs; every partial sum is an integer below 2^24, and the
 *              alpha used, 0.5 or 1, is a power of two).
 *   softmax:   |got - want| <= (1e-6 + 1e-8 + in) * want for want > 1e-30; |got| <= 1e-30 for
 *              want <= 1e-30; exactly 0 where the input is -inf. `in` is the effect of inputs
 *              that are not exact in float32 (decimal scores, the float 1/sqrt(2)): relative
 *              input errors <= delta move each softmax output by at most a factor
 *              exp(2 * delta * max|z|), so in = 2 * delta * max|z| (0 for exact inputs).
 *   layernorm: |got - want| <= 2e-6 * (1 + |want|) + 1e-8 * |want|.
 *   attention: |got - want| <= 1e-5 * max|V| + 1e-8 * |want| (also for the residual sum, which
 *              adds exact integers).
 *   scaled scores formed in the test (exact integer scores times the float 1/sqrt(d_k)):
 *              relative 2^-23 (the rounding of the constant and of the product) + 1e-8.
 *   positional encoding: "computed in double and rounded once", i.e. within half an ulp:
 *              |got - want| <= (2^-24 + 1e-8) * |want|.
 *   E10 is plain arithmetic done here (there is no library helper for parameter counts).
 */
#include "attn.h"
#include "check.h"

#include <stdint.h>

typedef enum tolkind { T_EXACT, T_SOFTMAX, T_LN, T_ATTN, T_REL } tolkind;

/* Compares rows x cols of got (leading dimension ldg) with want (dense); prints the named
 * case's line and records one check. `param`: T_SOFTMAX the input term `in`, T_ATTN max|V|,
 * T_REL the relative bound (1e-8 is added on top). `input` (softmax only, may be NULL, same
 * layout as got) marks the -inf inputs whose outputs must be exactly 0. */
static int compare(const char *label, attn_status st, const float *got, size_t ldg,
                   const double *want, size_t rows, size_t cols, tolkind kind, double param,
                   const float *input)
{
    size_t r, c, bad_r = 0, bad_c = 0;
    double maxerr = 0.0;
    int ok = 1;
    if (st != ATTN_OK) {
        check(0, "%s: library call returned %s", label, attn_status_string(st));
        printf("%s: FAIL (library call returned %s)\n", label, attn_status_string(st));
        return 0;
    }
    for (r = 0; r < rows; r++)
        for (c = 0; c < cols; c++) {
            double g = got[r * ldg + c], w = want[r * cols + c], err = fabs(g - w);
            int good;
            if (isnan(g)) err = HUGE_VAL;
            switch (kind) {
            case T_EXACT: good = g == w; break;
            case T_SOFTMAX:
                if (input && isinf(input[r * ldg + c]) && input[r * ldg + c] < 0)
                    good = g == 0.0;
                else if (w > 1e-30)
                    good = err <= (1e-6 + 1e-8 + param) * w;
                else
                    good = fabs(g) <= 1e-30;
                break;
            case T_LN: good = err <= 2e-6 * (1.0 + fabs(w)) + 1e-8 * fabs(w); break;
            case T_ATTN: good = err <= 1e-5 * param + 1e-8 * fabs(w); break;
            default: good = err <= (param + 1e-8) * fabs(w); break;
            }
            if (!good && ok) {
                bad_r = r;
                bad_c = c;
            }
            ok = ok && good;
            if (err > maxerr) maxerr = err;
        }
    check(ok, "%s: [%lu][%lu] got %.9g want %.9g (max err %.3g)", label, (unsigned long)bad_r,
          (unsigned long)bad_c, (double)got[bad_r * ldg + bad_c], want[bad_r * cols + bad_c],
          maxerr);
    printf("%s: %s (max err %.3g)\n", label, ok ? "pass" : "FAIL", maxerr);
    return ok;
}

static double max_abs(const float *x, size_t n)
{
    double m = 0.0;
    size_t i;
    for (i = 0; i < n; i++)
        if (!isinf(x[i]) && fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

static void to_float(float *dst, const double *src, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) dst[i] = (float)src[i];
}

/* One head of attention, B = H = 1, all dense: O = softmax(scale Q K^T [+ causal]) V. */
static attn_status attention1(const float *q, const float *k, const float *v, float *o,
                              size_t lq, size_t lk, size_t d, size_t dv, attn_causal causal)
{
    attn_attention_params p =
        attn_attention_init(1, 1, 1, lq, lk, d, dv, q, k, v, o, ATTN_LAYOUT_BHLD);
    size_t wsz;
    void *ws;
    attn_status st;
    p.causal = causal;
    p.causal_offset = 0;
    wsz = attn_attention_workspace_size(&p);
    ws = malloc(wsz ? wsz : 1);
    if (!ws) return ATTN_ERR_NULL;
    st = attn_attention(&p, ws, wsz);
    free(ws);
    return st;
}

static attn_status matmul(attn_trans tb, size_t m, size_t n, size_t k, float alpha, const float *a,
                          const float *b, float *c)
{
    return attn_matmul(ATTN_NO_TRANS, tb, m, n, k, alpha, a, k, b, tb == ATTN_TRANS ? k : n, 0.0f,
                       c, n, NULL, 0);
}

/* ---------------------------------------------------------------------------------------- */

static void e1(void)
{
    static const float X[8] = {6, 1, 4, 4, 8, 4, 6, 3};
    static const float WQ[16] = {1, 4, 3, 1, 1, 1, 3, 2, 3, 4, 4, 3, 1, 2, 2, 2};
    static const float WK[16] = {2, 1, 2, 1, 4, 1, 4, 2, 3, 4, 4, 1, 3, 4, 1, 2};
    static const float WV[16] = {4, 2, 4, 4, 3, 4, 1, 2, 2, 2, 4, 1, 4, 3, 1, 4};
    static const double Qw[8] = {23, 49, 45, 28, 33, 66, 66, 40};
    static const double Kw[8] = {40, 39, 36, 20, 59, 48, 59, 28};
    static const double Vw[8] = {51, 36, 45, 46, 68, 53, 63, 58};
    static const double Sw[4] = {2505.5, 3574, 3535, 5064.5};
    static const double Pw[4] = {0, 1, 0, 1};
    static const double Ow[8] = {68, 53, 63, 58, 68, 53, 63, 58};
    static const double Rw[8] = {74, 54, 67, 62, 76, 57, 69, 61};
    float Q[8], K[8], V[8], S[4], P[4], O[8];
    attn_status st;
    double vmax;

    st = matmul(ATTN_NO_TRANS, 2, 4, 4, 1.0f, X, WQ, Q);
    compare("E1 Q = X W_Q", st, Q, 4, Qw, 2, 4, T_EXACT, 0, NULL);
    st = matmul(ATTN_NO_TRANS, 2, 4, 4, 1.0f, X, WK, K);
    compare("E1 K = X W_K", st, K, 4, Kw, 2, 4, T_EXACT, 0, NULL);
    st = matmul(ATTN_NO_TRANS, 2, 4, 4, 1.0f, X, WV, V);
    compare("E1 V = X W_V", st, V, 4, Vw, 2, 4, T_EXACT, 0, NULL);
    /* scaled scores Q K^T / sqrt(4): alpha 0.5 keeps them exact */
    st = matmul(ATTN_TRANS, 2, 2, 4, 0.5f, Q, K, S);
    compare("E1 scaled_scores = Q K^T / 2 (attn_matmul)", st, S, 2, Sw, 2, 2, T_EXACT, 0, NULL);
    /* 5064.5 is far past expf's overflow: needs the max subtraction */
    st = attn_softmax(S, 2, P, 2, 2, 2, 1.0f);
    compare("E1 weights = softmax(scaled_scores) (attn_softmax)", st, P, 2, Pw, 2, 2, T_SOFTMAX,
            0, S);
    vmax = max_abs(V, 8);
    st = attention1(Q, K, V, O, 2, 2, 4, 4, ATTN_CAUSAL_NONE);
    compare("E1 attention output (attn_attention, d_k=4)", st, O, 4, Ow, 2, 4, T_ATTN, vmax,
            NULL);
    if (st == ATTN_OK) st = attn_add(O, 4, X, 4, 2, 4);
    compare("E1 residual_out = X + attention (attn_add)", st, O, 4, Rw, 2, 4, T_ATTN, vmax, NULL);
}

/* Scores of E2/E3: raw integer Q K^T by attn_matmul (checked exactly against the seed's
 * scaled scores times sqrt(d_k)), the seed's scaled scores (raw times the float 1/sqrt(d_k)),
 * and the weights softmax(scale * raw) by attn_softmax's scale. */
static void scores_and_weights(const char *ex, const float *Q, const float *K, size_t n, size_t dk,
                               const double *Sw, const double *Pw, int causal)
{
    float raw[9], scaled[9], P[9];
    double rawW[9], M = 0.0;
    const double scale = 1.0 / sqrt((double)dk);
    const float scale_f = (float)scale;
    char label[160];
    size_t i, j;
    attn_status st = matmul(ATTN_TRANS, n, n, dk, 1.0f, Q, K, raw);
    if (!causal) { /* E3c has the same scores as E3 */
        for (i = 0; i < n * n; i++) rawW[i] = floor(Sw[i] * sqrt((double)dk) + 0.5);
        snprintf(label, sizeof label, "%s scores Q K^T (attn_matmul; = scaled_scores * sqrt(%lu))",
                 ex, (unsigned long)dk);
        compare(label, st, raw, n, rawW, n, n, T_EXACT, 0, NULL);
        for (i = 0; i < n * n; i++) scaled[i] = raw[i] * scale_f;
        snprintf(label, sizeof label, "%s scaled_scores (scores * float 1/sqrt(%lu))", ex,
                 (unsigned long)dk);
        compare(label, st, scaled, n, Sw, n, n, T_REL, ldexp(1.0, -23), NULL);
    }
    if (causal)
        for (i = 0; i < n; i++)
            for (j = i + 1; j < n; j++) raw[i * n + j] = -INFINITY;
    for (i = 0; i < n * n; i++)
        if (!isinf(raw[i]) && fabs(raw[i] * scale) > M) M = fabs(raw[i] * scale);
    st = attn_softmax(raw, n, P, n, n, n, scale_f);
    snprintf(label, sizeof label, "%s weights%s (attn_softmax, scale 1/sqrt(%lu))", ex,
             causal ? " with causal -inf" : "", (unsigned long)dk);
    compare(label, st, P, n, Pw, n, n, T_SOFTMAX, 2.0 * M * fabs(scale_f - scale) / scale, raw);
}

static void e2(void)
{
    static const float X[6] = {1, 2, 2, 3, 3, 1};
    static const double Sw[9] = {3.53553391, 5.65685425, 3.53553391, 5.65685425, 9.19238816,
                                 6.36396103, 3.53553391, 6.36396103, 7.07106781};
    static const double Pw[9] = {0.0966917431, 0.806616514, 0.0966917431,
                                 0.0267798957, 0.918907397, 0.0543127077,
                                 0.0191452934, 0.323915939, 0.656938768};
    static const double Ow[6] = {2, 2.70992477, 2.02753281, 2.86459469, 2.63779347, 1.66697717};
    float O[6];
    attn_status st;
    scores_and_weights("E2", X, X, 3, 2, Sw, Pw, 0);
    st = attention1(X, X, X, O, 3, 3, 2, 2, ATTN_CAUSAL_NONE);
    compare("E2 output (attn_attention, Q=K=V=X, d=2)", st, O, 2, Ow, 3, 2, T_ATTN,
            max_abs(X, 6), NULL);
}

static void e3(void)
{
    static const float X[9] = {1, 0, 1, 0, 1, 0, 1, 1, 0};
    static const float WQ[6] = {1, 0, 0, 1, 1, 1};
    static const float WK[6] = {1, 1, 1, 0, 0, 1};
    static const float WV[6] = {0, 1, 1, 0, 1, 1};
    static const double Qw[6] = {2, 1, 0, 1, 1, 1};
    static const double Kw[6] = {1, 2, 1, 0, 2, 1};
    static const double Vw[6] = {1, 2, 1, 0, 1, 1};
    static const double Sw[9] = {2.82842712, 1.41421356, 3.53553391, 1.41421356, 0,
                                 0.707106781, 2.12132034, 0.707106781, 2.12132034};
    static const double Pw[9] = {0.305695251, 0.0743196311, 0.619985118,
                                 0.575975345, 0.140029245, 0.28399541,
                                 0.445808274, 0.108383452, 0.445808274};
    static const double Ow[6] = {1, 1.23137562, 1, 1.4359461, 1, 1.33742482};
    static const double Pcw[9] = {1, 0, 0, 0.804429683, 0.195570317, 0,
                                  0.445808274, 0.108383452, 0.445808274};
    static const double Ocw[6] = {1, 2, 1, 1.60885937, 1, 1.33742482};
    float Q[6], K[6], V[6], O[6];
    attn_status st;
    double vmax;

    st = matmul(ATTN_NO_TRANS, 3, 2, 3, 1.0f, X, WQ, Q);
    compare("E3 Q = X W_Q", st, Q, 2, Qw, 3, 2, T_EXACT, 0, NULL);
    st = matmul(ATTN_NO_TRANS, 3, 2, 3, 1.0f, X, WK, K);
    compare("E3 K = X W_K", st, K, 2, Kw, 3, 2, T_EXACT, 0, NULL);
    st = matmul(ATTN_NO_TRANS, 3, 2, 3, 1.0f, X, WV, V);
    compare("E3 V = X W_V", st, V, 2, Vw, 3, 2, T_EXACT, 0, NULL);
    scores_and_weights("E3", Q, K, 3, 2, Sw, Pw, 0);
    vmax = max_abs(V, 6);
    st = attention1(Q, K, V, O, 3, 3, 2, 2, ATTN_CAUSAL_NONE);
    compare("E3 output (attn_attention, d_k=2)", st, O, 2, Ow, 3, 2, T_ATTN, vmax, NULL);

    /* E3c: causal. Lq = Lk, so bottom-right and offset 0 are the same mask. */
    scores_and_weights("E3c", Q, K, 3, 2, NULL, Pcw, 1);
    st = attention1(Q, K, V, O, 3, 3, 2, 2, ATTN_CAUSAL_OFFSET);
    compare("E3c output (attn_attention, ATTN_CAUSAL_OFFSET 0)", st, O, 2, Ocw, 3, 2, T_ATTN,
            vmax, NULL);
    st = attention1(Q, K, V, O, 3, 3, 2, 2, ATTN_CAUSAL_BOTTOM_RIGHT);
    compare("E3c output (attn_attention, ATTN_CAUSAL_BOTTOM_RIGHT)", st, O, 2, Ocw, 3, 2, T_ATTN,
            vmax, NULL);
}

static void e4(void)
{
    static const float x[4] = {3, 5, 7, 9};
    static const float ones[4] = {1, 1, 1, 1}, zeros[4] = {0, 0, 0, 0};
    static const double y5[4] = {-1.34163944, -0.447213148, 0.447213148, 1.34163944};
    static const double y6[4] = {-1.34164065, -0.447213551, 0.447213551, 1.34164065};
    float y[4];
    attn_status st = attn_layernorm(x, 4, y, 4, 1, 4, NULL, NULL, 1e-5f, NULL, NULL);
    compare("E4 LayerNorm([3,5,7,9]) eps=1e-5 (gamma, beta NULL)", st, y, 4, y5, 1, 4, T_LN, 0,
            NULL);
    st = attn_layernorm(x, 4, y, 4, 1, 4, ones, zeros, 1e-6f, NULL, NULL);
    compare("E4 LayerNorm([3,5,7,9]) eps=1e-6 (gamma=1, beta=0 given)", st, y, 4, y6, 1, 4, T_LN,
            0, NULL);
}

static void e5(void)
{
    static const float x[3] = {2.0f, 1.5f, 1.0f};
    static const double w[3] = {0.506480391, 0.307195886, 0.186323723};
    float y[3];
    attn_status st = attn_softmax(x, 3, y, 3, 1, 3, 1.0f);
    compare("E5 softmax([2, 1.5, 1])", st, y, 3, w, 1, 3, T_SOFTMAX, 0, x);
}

static void e6(void)
{
    static const double s[9] = {1.55, -INFINITY, -INFINITY, 1.14, 1.9, -INFINITY,
                                0.81, 1.11, 1.71};
    static const double w[9] = {1, 0, 0, 0.318646266, 0.681353734, 0,
                                0.207923468, 0.280667324, 0.511409208};
    float x[9], y[9];
    attn_status st;
    to_float(x, s, 9);
    /* the decimal scores are rounded to float: delta = 2^-24 */
    st = attn_softmax(x, 3, y, 3, 3, 3, 1.0f);
    compare("E6 softmax of the causal-masked scores (-INFINITY entries)", st, y, 3, w, 3, 3,
            T_SOFTMAX, 2.0 * max_abs(x, 9) * ldexp(1.0, -24), x);
}

static void e7(void)
{
    static const float x[3] = {32, 28, 12};
    static const float one[1] = {1};
    static const double yw[3] = {4, 3.5, 1.5};
    static const double pw[3] = {0.59220107, 0.359188106, 0.048610824};
    float y[3], p[3];
    /* y = x / sqrt(64) as a 1 x 3 product with alpha 1/8 (exact) */
    attn_status st = matmul(ATTN_NO_TRANS, 1, 3, 1, 1.0f / 8.0f, one, x, y);
    compare("E7 y = [32, 28, 12] / sqrt(64) (attn_matmul alpha 1/8)", st, y, 3, yw, 1, 3, T_EXACT,
            0, NULL);
    st = attn_softmax(y, 3, p, 3, 1, 3, 1.0f);
    compare("E7 softmax(y)", st, p, 3, pw, 1, 3, T_SOFTMAX, 0, y);
    st = attn_softmax(x, 3, p, 3, 1, 3, 1.0f / 8.0f);
    compare("E7 softmax([32, 28, 12], scale 1/sqrt(64))", st, p, 3, pw, 1, 3, T_SOFTMAX, 0, x);
}

static void e8(void)
{
    static const double want[3][8] = {
        {0, 1, 0, 1, 0, 1, 0, 1},
        {0.841470985, 0.540302306, 0.82185619, 0.569695009, 0.801961795, 0.597375325,
         0.000103663293, 0.999999995},
        {0.909297427, -0.416146837, 0.936414739, -0.350895194, 0.958144376, -0.286285442,
         0.000207326584, 0.999999979}};
    static float pe[3 * 512];
    float sel[3 * 8];
    const double rel = ldexp(1.0, -24);
    size_t r, c;
    attn_status st = attn_positional_encoding(pe, 512, 3, 512, 0, 0);
    for (r = 0; r < 3; r++)
        for (c = 0; c < 8; c++) sel[r * 8 + c] = pe[r * 512 + (c < 6 ? c : 504 + c)];
    compare("E8 PE d_model=512, positions 0..2, dims 0..5 and 510..511", st, sel, 8, &want[0][0],
            3, 8, T_REL, rel, NULL);
    /* the same positions 1..2 started at pos0 = 1 */
    st = attn_positional_encoding(pe, 512, 2, 512, 1, 0);
    for (r = 0; r < 2; r++)
        for (c = 0; c < 8; c++) sel[r * 8 + c] = pe[r * 512 + (c < 6 ? c : 504 + c)];
    compare("E8 PE d_model=512, positions 1..2 via pos0=1", st, sel, 8, &want[1][0], 2, 8, T_REL,
            rel, NULL);
}

static void e9(void)
{
    static const double want[12] = {0, 1, 0, 1,
                                     0.841470985, 0.540302306, 0.00999983333, 0.99995,
                                     0.909297427, -0.416146837, 0.0199986667, 0.999800007};
    float pe[12];
    size_t i;
    attn_status st = attn_positional_encoding(pe, 4, 3, 4, 0, 0);
    compare("E9 PE d_model=4, positions 0..2", st, pe, 4, want, 3, 4, T_REL, ldexp(1.0, -24),
            NULL);
    /* add mode onto zero embeddings gives the same values */
    for (i = 0; i < 12; i++) pe[i] = 0.0f;
    st = attn_positional_encoding(pe, 4, 3, 4, 0, 1);
    compare("E9 PE d_model=4, positions 0..2, add=1 onto zeros", st, pe, 4, want, 3, 4, T_REL,
            ldexp(1.0, -24), NULL);
}

static void e10(void)
{
    /* arithmetic only: no library function counts parameters */
    const long d_model = 768, heads = 12, d_ff = 3072;
    const long mha = 4 * d_model * d_model;                     /* W_Q, W_K, W_V, W_O */
    const long ffn = d_model * d_ff * 2 + d_ff + d_model;       /* two weights + two biases */
    const long ln = 2 * 2 * d_model;                            /* two LayerNorms, gamma+beta */
    int ok;
    (void)heads; /* the head count does not change the projection sizes */
    ok = check(mha == 2359296, "E10 mha_weights %ld != 2359296", mha);
    printf("E10 mha_weights = 4*768*768 = %ld (arithmetic only): %s (max err %ld)\n", mha,
           ok ? "pass" : "FAIL", labs(mha - 2359296L));
    ok = check(ffn == 4722432, "E10 ffn %ld != 4722432", ffn);
    printf("E10 ffn = 768*3072*2 + 3072 + 768 = %ld (arithmetic only): %s (max err %ld)\n", ffn,
           ok ? "pass" : "FAIL", labs(ffn - 4722432L));
    ok = check(ln == 3072, "E10 layernorms %ld != 3072", ln);
    printf("E10 layernorms = 2*2*768 = %ld (arithmetic only): %s (max err %ld)\n", ln,
           ok ? "pass" : "FAIL", labs(ln - 3072L));
}

int main(void)
{
    check_begin("seeds");
    e1();
    e2();
    e3();
    e4();
    e5();
    e6();
    e7();
    e8();
    e9();
    e10();
    return check_end("seeds");
}
