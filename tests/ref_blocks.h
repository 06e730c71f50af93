/* ref_blocks.h - double-precision references for the transformer blocks (test_blocks.c).
 *
 * Written independently of the kernels: plain loops in double over whole matrices, with
 * every intermediate (projections, scores, softmax, hidden activations, layer norms,
 * residual sums) kept in double, so a block's reference is the exact block up to double
 * rounding. The weights are read from the public weight structs (the problem description);
 * nothing else of attn.h is used. Matrices here are dense double arrays, row length given.
 * Include after attn.h. */
#ifndef ATTN_TEST_REF_BLOCKS_H
#define ATTN_TEST_REF_BLOCKS_H
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define REFB_UNUSED __attribute__((unused))
#else
#define REFB_UNUSED
#endif

static void *refb_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) abort();
    return p;
}

/* GELU, erf form: x Phi(x) = x/2 erfc(-x / sqrt 2) (erfc: no cancellation for x < 0). */
static REFB_UNUSED double ref_gelu(double x)
{
    if (isinf(x)) return x > 0 ? x : 0.0;
    return 0.5 * x * erfc(-x / sqrt(2.0));
}

/* GELU, tanh form: x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3). For u >= -1 this
 * is evaluated with tanh itself; below, 1 + tanh(u) cancels in double, so the identical
 * 1 + tanh(u) = 2 / (1 + e^(-2u)) is used (test_blocks checks the two agree where both are
 * accurate). */
static REFB_UNUSED double ref_gelu_tanh(double x)
{
    const double u = sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x);
    if (isinf(x)) return x > 0 ? x : 0.0;
    if (u >= -1.0) return 0.5 * x * (1.0 + tanh(u));
    return x / (1.0 + exp(-2.0 * u));
}

/* SiLU: x / (1 + e^-x) (no cancellation in double for any x) */
static REFB_UNUSED double ref_silu(double x)
{
    if (isinf(x)) return x > 0 ? x : 0.0;
    return x / (1.0 + exp(-x));
}

/* act: 0 none, 1 relu, 2 gelu (erf), 3 gelu (tanh), 4 silu - the attn_act values */
static REFB_UNUSED double ref_act(int act, double x)
{
    switch (act) {
    case 1: return x > 0 ? x : 0.0;
    case 2: return ref_gelu(x);
    case 3: return ref_gelu_tanh(x);
    case 4: return ref_silu(x);
    default: return x;
    }
}

/* y (T x dout) = act(x (T x din) W + b); W float din x dout with leading dimension ldw
 * (trans: W stored dout x din, element (i, o) at w[o * ldw + i]). mag (optional, T x dout):
 * sum_i |x_i W_io| + |b_o|, the scale of a float error of the sum. */
static REFB_UNUSED void ref_linear(const double *x, size_t T, size_t din, const float *w,
                                   size_t ldw, int trans, const float *b, size_t dout, int act,
                                   double *y, double *mag)
{
    size_t t, i, o;
    for (t = 0; t < T; t++)
        for (o = 0; o < dout; o++) {
            double s = b ? (double)b[o] : 0.0, m = b ? fabs((double)b[o]) : 0.0;
            for (i = 0; i < din; i++) {
                const double wv = trans ? (double)w[o * ldw + i] : (double)w[i * ldw + o];
                s += x[t * din + i] * wv;
                m += fabs(x[t * din + i] * wv);
            }
            y[t * dout + o] = ref_act(act, s);
            if (mag) mag[t * dout + o] = m;
        }
}

/* LayerNorm of each row (biased variance, two passes), gamma/beta NULL = 1/0. */
static REFB_UNUSED void ref_ln(const double *x, size_t T, size_t d, const float *g,
                               const float *b, double eps, double *y)
{
    size_t t, i;
    for (t = 0; t < T; t++) {
        double mean = 0.0, var = 0.0, r;
        for (i = 0; i < d; i++) mean += x[t * d + i];
        mean /= (double)d;
        for (i = 0; i < d; i++) var += (x[t * d + i] - mean) * (x[t * d + i] - mean);
        var /= (double)d;
        r = 1.0 / sqrt(var + eps);
        for (i = 0; i < d; i++)
            y[t * d + i] =
                (x[t * d + i] - mean) * r * (g ? (double)g[i] : 1.0) + (b ? (double)b[i] : 0.0);
    }
}

/* Multi-head attention: y (Lq x d) = concat_h softmax(Q_h K_h^T / sqrt(dh)) V_h  Wo + bo,
 * every score of a row built before its softmax. causal: key j visible to query i iff
 * j <= i + Lk - Lq. */
static REFB_UNUSED void ref_mha(const attn_mha_weights *w, const double *xq, size_t Lq,
                                const double *xkv, size_t Lk, int causal, double *y)
{
    const size_t d = w->d_model, H = w->heads, dh = d / H;
    double *q = (double *)refb_alloc(Lq * d * sizeof(double));
    double *k = (double *)refb_alloc(Lk * d * sizeof(double));
    double *v = (double *)refb_alloc(Lk * d * sizeof(double));
    double *o = (double *)refb_alloc(Lq * d * sizeof(double));
    double *s = (double *)refb_alloc(Lk * sizeof(double));
    size_t h, i, j, c;
    ref_linear(xq, Lq, d, w->wq, d, 0, w->bq, d, 0, q, NULL);
    ref_linear(xkv, Lk, d, w->wk, d, 0, w->bk, d, 0, k, NULL);
    ref_linear(xkv, Lk, d, w->wv, d, 0, w->bv, d, 0, v, NULL);
    for (h = 0; h < H; h++)
        for (i = 0; i < Lq; i++) {
            double mx = -HUGE_VAL, sum = 0.0;
            for (j = 0; j < Lk; j++) {
                double dot = 0.0;
                if (causal && (ptrdiff_t)j > (ptrdiff_t)i + (ptrdiff_t)Lk - (ptrdiff_t)Lq) {
                    s[j] = -HUGE_VAL;
                    continue;
                }
                for (c = 0; c < dh; c++) dot += q[i * d + h * dh + c] * k[j * d + h * dh + c];
                s[j] = dot / sqrt((double)dh);
                if (s[j] > mx) mx = s[j];
            }
            for (c = 0; c < dh; c++) o[i * d + h * dh + c] = 0.0;
            if (mx == -HUGE_VAL) continue; /* no visible key: zeros */
            for (j = 0; j < Lk; j++) {
                s[j] = s[j] == -HUGE_VAL ? 0.0 : exp(s[j] - mx);
                sum += s[j];
            }
            for (j = 0; j < Lk; j++)
                for (c = 0; c < dh; c++)
                    o[i * d + h * dh + c] += s[j] / sum * v[j * d + h * dh + c];
        }
    ref_linear(o, Lq, d, w->wo, d, 0, w->bo, d, 0, y, NULL);
    free(q);
    free(k);
    free(v);
    free(o);
    free(s);
}

/* y (T x d) = act(x W1 + b1) W2 + b2 */
static REFB_UNUSED void ref_ffn(const attn_ffn_weights *w, const double *x, size_t T, double *y)
{
    double *h = (double *)refb_alloc(T * w->d_ff * sizeof(double));
    ref_linear(x, T, w->d_model, w->w1, w->d_ff, 0, w->b1, w->d_ff, (int)w->act, h, NULL);
    ref_linear(h, T, w->d_ff, w->w2, w->d_model, 0, w->b2, w->d_model, 0, y, NULL);
    free(h);
}

static REFB_UNUSED void refb_add(double *y, const double *x, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) y[i] += x[i];
}

/* Encoder block (pre- or post-LN, as w->norm says). */
static REFB_UNUSED void ref_encoder(const attn_encoder_weights *w, const double *x, size_t T,
                                    int causal, double *y)
{
    const size_t d = w->attn.d_model, n = T * d;
    double *a = (double *)refb_alloc(n * sizeof(double));
    double *b = (double *)refb_alloc(n * sizeof(double));
    double *x1 = (double *)refb_alloc(n * sizeof(double));
    if (w->norm == ATTN_PRE_LN) {
        ref_ln(x, T, d, w->ln1_gamma, w->ln1_beta, w->eps, a);  /* a = LN1(x) */
        ref_mha(&w->attn, a, T, a, T, causal, b);               /* b = MHA(a) */
        memcpy(x1, x, n * sizeof(double));
        refb_add(x1, b, n);                                     /* x1 = x + b */
        ref_ln(x1, T, d, w->ln2_gamma, w->ln2_beta, w->eps, a); /* a = LN2(x1) */
        ref_ffn(&w->ffn, a, T, b);
        memcpy(y, x1, n * sizeof(double));
        refb_add(y, b, n); /* y = x1 + FFN(LN2(x1)) */
    } else {
        ref_mha(&w->attn, x, T, x, T, causal, a);
        refb_add(a, x, n);
        ref_ln(a, T, d, w->ln1_gamma, w->ln1_beta, w->eps, x1); /* x1 = LN1(x + MHA(x)) */
        ref_ffn(&w->ffn, x1, T, b);
        refb_add(b, x1, n);
        ref_ln(b, T, d, w->ln2_gamma, w->ln2_beta, w->eps, y); /* y = LN2(x1 + FFN(x1)) */
    }
    free(a);
    free(b);
    free(x1);
}

/* Decoder block: causal self-attention, cross-attention over mem (M x d), FFN. */
static REFB_UNUSED void ref_decoder(const attn_decoder_weights *w, const double *x, size_t T,
                                    const double *mem, size_t M, double *y)
{
    const size_t d = w->ffn.d_model, n = T * d;
    double *a = (double *)refb_alloc(n * sizeof(double));
    double *b = (double *)refb_alloc(n * sizeof(double));
    double *r = (double *)refb_alloc(n * sizeof(double));
    if (w->norm == ATTN_PRE_LN) {
        memcpy(r, x, n * sizeof(double));
        ref_ln(r, T, d, w->ln1_gamma, w->ln1_beta, w->eps, a);
        ref_mha(&w->self_attn, a, T, a, T, 1, b);
        refb_add(r, b, n);
        ref_ln(r, T, d, w->ln2_gamma, w->ln2_beta, w->eps, a);
        ref_mha(&w->cross_attn, a, T, mem, M, 0, b);
        refb_add(r, b, n);
        ref_ln(r, T, d, w->ln3_gamma, w->ln3_beta, w->eps, a);
        ref_ffn(&w->ffn, a, T, b);
        refb_add(r, b, n);
        memcpy(y, r, n * sizeof(double));
    } else {
        ref_mha(&w->self_attn, x, T, x, T, 1, a);
        refb_add(a, x, n);
        ref_ln(a, T, d, w->ln1_gamma, w->ln1_beta, w->eps, r);
        ref_mha(&w->cross_attn, r, T, mem, M, 0, a);
        refb_add(a, r, n);
        ref_ln(a, T, d, w->ln2_gamma, w->ln2_beta, w->eps, r);
        ref_ffn(&w->ffn, r, T, a);
        refb_add(a, r, n);
        ref_ln(a, T, d, w->ln3_gamma, w->ln3_beta, w->eps, y);
    }
    free(a);
    free(b);
    free(r);
}
#endif
