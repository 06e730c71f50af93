/* ref_linalg.h - double-precision references for the matmul and attention tests.
 *
 * Written independently of the kernels: plain loops in double over the full problem (the
 * attention reference builds every score of a row; nothing is fused or blocked). The
 * product of two floats is exact in double, and the sums here are far more accurate than
 * anything float can produce, so the tests measure the kernels' float results against
 * (almost) exact values. Include after attn.h (the attention reference reads an
 * attn_attention_params, the public description of the problem). */
#ifndef ATTN_TEST_REF_LINALG_H
#define ATTN_TEST_REF_LINALG_H
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__GNUC__) || defined(__clang__)
#define REF_UNUSED __attribute__((unused))
#else
#define REF_UNUSED
#endif

/* Unit roundoff of float (round to nearest): 2^-24. */
#define REF_U_FLT (1.0 / 16777216.0)

/* ---------------------------------------------------------------------------------------
 * out = alpha * op(A) * op(B) + beta * C, all m x n, out dense (row length n).
 * ta / tb nonzero: op(X) = X^T, i.e. A is stored k x m (element (i, p) of op(A) is
 * a[p * lda + i]), B is stored n x k. beta == 0 never reads c (c may then hold NaN or
 * be NULL). mag (optional, m x n dense) receives |alpha| * sum_p |a_ip b_pj| + |beta c_ij|,
 * the magnitude a floating-point error bound scales with. k = 0 gives beta * C. */
static REF_UNUSED void ref_matmul(int ta, int tb, size_t m, size_t n, size_t k, double alpha,
                                  const float *a, size_t lda, const float *b, size_t ldb,
                                  double beta, const float *c, size_t ldc, double *out,
                                  double *mag)
{
    size_t i, j, p;
    for (i = 0; i < m; i++) {
        for (j = 0; j < n; j++) {
            double s = 0.0, sa = 0.0, r, g;
            for (p = 0; p < k; p++) {
                const double x = ta ? (double)a[p * lda + i] : (double)a[i * lda + p];
                const double y = tb ? (double)b[j * ldb + p] : (double)b[p * ldb + j];
                s += x * y;
                sa += fabs(x * y);
            }
            r = alpha * s;
            g = fabs(alpha) * sa;
            if (beta != 0.0) {
                const double cij = (double)c[i * ldc + j];
                r += beta * cij;
                g += fabs(beta * cij);
            }
            out[i * n + j] = r;
            if (mag) mag[i * n + j] = g;
        }
    }
}

/* ---------------------------------------------------------------------------------------
 * Attention. */

/* Length of batch b's keys: key_lengths[b] when given, else kv_len. */
static REF_UNUSED ptrdiff_t ref_attn_len(const attn_attention_params *p, size_t b)
{
    return p->key_lengths ? (ptrdiff_t)p->key_lengths[b] : (ptrdiff_t)p->kv_len;
}

/* The position of query i in batch b: i + causal_offset (ATTN_CAUSAL_OFFSET), else
 * i + len - q_len, with or without causal masking (the window and ALiBi use it). */
static REF_UNUSED double ref_attn_pos(const attn_attention_params *p, size_t b, size_t i)
{
    return (double)i + (p->causal == ATTN_CAUSAL_OFFSET
                            ? (double)p->causal_offset
                            : (double)ref_attn_len(p, b) - (double)p->q_len);
}

/* Does query i of head h in batch b see key j? Every mask of the params, combined:
 * key_lengths, causal (bottom-right uses that batch's length), the sliding window (keys
 * j <= pos - window masked), the bool mask (0 = masked), and the float mask (-inf =
 * masked; a finite value is added to the score instead). */
static REF_UNUSED int ref_attn_visible(const attn_attention_params *p, size_t b, size_t h,
                                       size_t i, size_t j)
{
    const ptrdiff_t len = ref_attn_len(p, b);
    const ptrdiff_t si = (ptrdiff_t)i, sj = (ptrdiff_t)j;
    if (sj >= len) return 0;
    if (p->causal == ATTN_CAUSAL_BOTTOM_RIGHT && sj > si + (len - (ptrdiff_t)p->q_len))
        return 0;
    if (p->causal == ATTN_CAUSAL_OFFSET && sj > si + p->causal_offset) return 0;
    if (p->window && (double)j + (double)p->window <= ref_attn_pos(p, b, i)) return 0;
    if (p->bool_mask &&
        p->bool_mask[b * p->bmask_sb + h * p->bmask_sh + i * p->bmask_sq + j] == 0)
        return 0;
    if (p->mask && p->mask[b * p->mask_sb + h * p->mask_sh + i * p->mask_sq + j] == -HUGE_VAL)
        return 0;
    return 1;
}

/* Naive attention over the full score matrix, in double.
 *   out   [batch][heads][q_len][v_head_dim]  the exact result (a fully masked row is 0);
 *   vmax  same shape: max over the keys the row sees of |V[j][c]| (0 when it sees none),
 *         the scale of the row's output and of its error;
 *   dscore [batch][heads][q_len]: a bound on the absolute error a float computation makes
 *         in any visible score of the row (see below); 0 when the row sees no key;
 *   nvis  [batch][heads][q_len]: how many keys the row sees.
 * Masked keys are skipped, never multiplied by 0: their K and V rows are not even read, so
 * NaN or inf there cannot reach the result. A NaN score (e.g. a NaN in the query row) makes
 * the row NaN through the normalisation.
 *
 * dscore: a float score scale * sum_c q_c k_c, computed with any summation order, any
 * placement of the scale (on Q, on the dot product, folded with log2(e) into an exp2) and
 * a float max subtraction, is within (head_dim + 8) * u * |scale| * sum_c |q_c k_c| of the
 * exact one (u = 2^-24; the standard gamma_n bound plus a few roundings, including
 * 1/sqrtf(head_dim) for scale 0). softcap * tanh(s / softcap) passes that error on times
 * at most sech^2 over the interval it spans (<= 1) and adds its own (16 * u * softcap);
 * adding a mask value m rounds once more (2 * u * |m| covers it together with the slack);
 * an ALiBi bias a = slope (j - pos) is rounded, then added: 2 u (|a| + |s|).
 * A sink (sinks[h] > -inf) joins the denominator as exp(sink - max) with no value. */
static REF_UNUSED void ref_attention(const attn_attention_params *p, double *out, double *vmax,
                                     double *dscore, size_t *nvis)
{
    const size_t B = p->batch, H = p->heads, Lq = p->q_len, Lk = p->kv_len;
    const size_t d = p->head_dim, dv = p->v_head_dim;
    const size_t group = p->heads / p->kv_heads;
    const double scale = p->scale == 0.0f ? 1.0 / sqrt((double)d) : (double)p->scale;
    const double cap = (double)p->softcap;
    double *sc = (double *)malloc((Lk ? Lk : 1) * sizeof(double));
    double *w = (double *)malloc((Lk ? Lk : 1) * sizeof(double));
    unsigned char *vis = (unsigned char *)malloc(Lk ? Lk : 1);
    size_t b, h, i, j, c;

    if (!sc || !w || !vis) abort();
    for (b = 0; b < B; b++) {
        for (h = 0; h < H; h++) {
            const size_t g = h / group;
            const float *K = (const float *)p->k + b * p->k_sb + g * p->k_sh;
            const float *V = (const float *)p->v + b * p->v_sb + g * p->v_sh;
            for (i = 0; i < Lq; i++) {
                const size_t row = (b * H + h) * Lq + i;
                const float *Q = p->q + b * p->q_sb + h * p->q_sh + i * p->q_sl;
                double *o = out + row * dv, *vm = vmax + row * dv;
                double mx = -HUGE_VAL, sum = 0.0, ds = 0.0;
                size_t count = 0;

                for (c = 0; c < dv; c++) o[c] = vm[c] = 0.0;
                for (j = 0; j < Lk; j++) {
                    const float *Kj = K + j * p->k_sl;
                    double dot = 0.0, mag = 0.0, s, e, mval = 0.0;
                    vis[j] = (unsigned char)ref_attn_visible(p, b, h, i, j);
                    if (!vis[j]) continue;
                    count++;
                    for (c = 0; c < d; c++) {
                        const double t = (double)Q[c] * (double)Kj[c];
                        dot += t;
                        mag += fabs(t);
                    }
                    s = scale * dot;
                    e = ((double)d + 8.0) * REF_U_FLT * fabs(scale) * mag;
                    if (cap > 0.0) {
                        double prop = 1.0;
                        if (fabs(s) > e) {
                            const double ch = cosh((fabs(s) - e) / cap);
                            prop = 1.0 / (ch * ch);
                        }
                        s = cap * tanh(s / cap);
                        e = e * prop + 16.0 * REF_U_FLT * cap;
                    }
                    if (p->mask) {
                        mval = (double)p->mask[b * p->mask_sb + h * p->mask_sh +
                                               i * p->mask_sq + j];
                        s += mval;
                        e += 2.0 * REF_U_FLT * fabs(mval);
                    }
                    if (p->alibi_slopes) {
                        const double a = (double)p->alibi_slopes[h] *
                                         ((double)j - ref_attn_pos(p, b, i));
                        s += a;
                        e += 2.0 * REF_U_FLT * (fabs(a) + fabs(s));
                    }
                    sc[j] = s;
                    if (s > mx) mx = s; /* a NaN never wins; it reaches the row below */
                    if (e > ds) ds = e;
                }
                nvis[row] = count;
                dscore[row] = count ? ds : 0.0;
                if (!count) continue; /* fully masked: zeros */
                if (p->sinks && p->sinks[h] > -HUGE_VAL) {
                    const double sink = (double)p->sinks[h];
                    if (sink > mx) mx = sink;
                    sum = exp(sink - mx);
                }
                for (j = 0; j < Lk; j++) {
                    if (!vis[j]) continue;
                    w[j] = exp(sc[j] - mx);
                    sum += w[j];
                }
                for (j = 0; j < Lk; j++) {
                    const float *Vj = V + j * p->v_sl;
                    if (!vis[j]) continue;
                    for (c = 0; c < dv; c++) {
                        const double a = fabs((double)Vj[c]);
                        o[c] += w[j] * (double)Vj[c];
                        if (a > vm[c]) vm[c] = a;
                    }
                }
                for (c = 0; c < dv; c++) o[c] /= sum;
            }
        }
    }
    free(sc);
    free(w);
    free(vis);
}
#endif
