/* test_blocks.c - the transformer blocks: attn_activation, attn_linear, attn_ffn, attn_mha,
 * attn_encoder, attn_decoder and the parameter counts, against the double-precision
 * references of ref_blocks.h.
 *
 * Covered: GELU (erf and tanh forms) against double erfc / tanh over every 2003rd float
 * in [-20, 20] (every 20011th under emulation or sanitizers, "--stride N"), with the error
 * bounds attn.h documents, and their special values (NaN, +-inf, +-0, denormal inputs,
 * FLT_MAX); ReLU and identity exact; row lengths 1..19 with leading dimensions larger than
 * the row, guard values after each row and after the matrix, in place; attn_linear in both
 * weight layouts, with and without bias, every activation, with and without the matmul
 * workspace; FFN, self-, cross- and causal MHA, pre-LN and post-LN encoder (bidirectional
 * and causal) and decoder blocks against the whole-block double references, for several
 * sizes (d_model 8..64, 1..8 heads, 1..33 tokens); in place (bit-identical to out of
 * place); a workspace at an odd address (bit-identical); the exact workspace size works and
 * one byte less is ATTN_ERR_WORKSPACE; causality (changing a later token leaves the
 * earlier outputs bit-identical); every error path (NULL, zero sizes, leading dimensions,
 * heads not dividing d_model, bad enums, NaN eps, overflow) with the output untouched;
 * tiny inputs give no denormal output; embeddings + attn_positional_encoding (add) into an
 * encoder against the reference adding the sinusoids in double; the BERT-base parameter
 * counts of seed E10.
 *
 * Tolerances. Activations: as documented in attn.h. attn_linear (act NONE):
 * |y - ref| <= (d_in + 4) u mag, mag = sum |x_i w_io| + |b_o|, u = 2^-24 (the standard
 * bound of a float dot product with fma); through an activation the same bound times 1.2
 * (GELU's slope is at most 1.13) plus the activation's own relative error. Blocks: every
 * output element within 2e-5 * (1 + max |ref| of the block), relative to the block's
 * output scale (about 1 here: layer-normed or residual values). The measured errors are
 * printed; they are ~1e-6, so the tolerance has a 10x margin, while a wrong weight, bias,
 * head split, mask, norm order or residual moves outputs by 1e-2 .. 1. */
#include "attn.h"
#include "check.h"
#include "ref_blocks.h"

#include <float.h>
#include <stdint.h>

#define U_FLT (1.0 / 16777216.0)
#define GUARD_F (-7777.25f)

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static int is_denormal(float v) { return v != 0.0f && fabsf(v) < FLT_MIN; }
static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* ---- a pool for the weights of one test (freed at the end) ---------------------------- */

static float *pool;
static size_t pool_used, pool_cap;

static float *pool_take(size_t n)
{
    float *p;
    n = (n + 15) / 16 * 16 + 16; /* keep pointers 64-byte apart, and one float off sometimes */
    if (pool_used + n > pool_cap) {
        fprintf(stderr, "pool exhausted\n");
        exit(2);
    }
    p = pool + pool_used;
    pool_used += n;
    return p;
}

static float *rnd(size_t n, float scale)
{
    float *p = pool_take(n);
    size_t i;
    for (i = 0; i < n; i++) p[i] = check_uniform(-scale, scale);
    return p;
}

static float *rnd_around(size_t n, float center, float spread)
{
    float *p = pool_take(n);
    size_t i;
    for (i = 0; i < n; i++) p[i] = center + check_uniform(-spread, spread);
    return p;
}

static attn_mha_weights make_mha(size_t d, size_t heads, int bias)
{
    attn_mha_weights w;
    const float s = 1.7f / sqrtf((float)d);
    memset(&w, 0, sizeof w); /* wtype ATTN_F32 */
    w.d_model = d;
    w.heads = heads;
    w.wq = rnd(d * d, 2.0f * s); /* larger Q/K: peaked attention weights */
    w.wk = rnd(d * d, 2.0f * s);
    w.wv = rnd(d * d, s);
    w.wo = rnd(d * d, s);
    w.bq = bias ? rnd(d, 0.2f) : NULL;
    w.bk = bias ? rnd(d, 0.2f) : NULL;
    w.bv = bias ? rnd(d, 0.2f) : NULL;
    w.bo = bias ? rnd(d, 0.2f) : NULL;
    return w;
}

static attn_ffn_weights make_ffn(size_t d, size_t dff, attn_act act, int bias)
{
    attn_ffn_weights w;
    memset(&w, 0, sizeof w); /* wtype ATTN_F32 */
    w.d_model = d;
    w.d_ff = dff;
    w.act = act;
    w.w1 = rnd(d * dff, 1.7f / sqrtf((float)d));
    w.b1 = bias ? rnd(dff, 0.2f) : NULL;
    w.w2 = rnd(dff * d, 1.7f / sqrtf((float)dff));
    w.b2 = bias ? rnd(d, 0.2f) : NULL;
    return w;
}

static attn_encoder_weights make_encoder(size_t d, size_t heads, size_t dff, attn_act act,
                                         int bias, attn_norm_order norm)
{
    attn_encoder_weights w;
    w.attn = make_mha(d, heads, bias);
    w.ffn = make_ffn(d, dff, act, bias);
    w.ln1_gamma = bias ? rnd_around(d, 1.0f, 0.3f) : NULL;
    w.ln1_beta = bias ? rnd(d, 0.2f) : NULL;
    w.ln2_gamma = bias ? rnd_around(d, 1.0f, 0.3f) : NULL;
    w.ln2_beta = bias ? rnd(d, 0.2f) : NULL;
    w.eps = 1e-5f;
    w.norm = norm;
    return w;
}

static attn_decoder_weights make_decoder(size_t d, size_t heads, size_t dff, attn_act act,
                                         int bias, attn_norm_order norm)
{
    attn_decoder_weights w;
    w.self_attn = make_mha(d, heads, bias);
    w.cross_attn = make_mha(d, heads, bias);
    w.ffn = make_ffn(d, dff, act, bias);
    w.ln1_gamma = bias ? rnd_around(d, 1.0f, 0.3f) : NULL;
    w.ln1_beta = bias ? rnd(d, 0.2f) : NULL;
    w.ln2_gamma = bias ? rnd_around(d, 1.0f, 0.3f) : NULL;
    w.ln2_beta = bias ? rnd(d, 0.2f) : NULL;
    w.ln3_gamma = bias ? rnd_around(d, 1.0f, 0.3f) : NULL;
    w.ln3_beta = bias ? rnd(d, 0.2f) : NULL;
    w.eps = 1e-5f;
    w.norm = norm;
    return w;
}

/* ---- matrices with padding and guards ----------------------------------------------------- */

typedef struct mat {
    float *buf, *p;
    size_t rows, n, ld, total;
} mat;

/* rows x n at leading dimension n + pad, GUARD_F everywhere else (8 floats before/after) */
static void mat_new(mat *m, size_t rows, size_t n, size_t pad, float scale)
{
    size_t r, c;
    m->rows = rows;
    m->n = n;
    m->ld = n + pad;
    m->total = rows * m->ld + 16;
    m->buf = (float *)xmalloc(m->total * sizeof(float));
    for (r = 0; r < m->total; r++) m->buf[r] = GUARD_F;
    m->p = m->buf + 8;
    for (r = 0; r < rows; r++)
        for (c = 0; c < n; c++) m->p[r * m->ld + c] = check_uniform(-scale, scale);
}

static void mat_fill(mat *m, float v)
{
    size_t r, c;
    for (r = 0; r < m->rows; r++)
        for (c = 0; c < m->n; c++) m->p[r * m->ld + c] = v;
}

/* every float outside the matrix still GUARD_F */
static int mat_guards_ok(const mat *m)
{
    size_t i;
    for (i = 0; i < m->total; i++) {
        const size_t off = i >= 8 ? i - 8 : (size_t)-1;
        const int inside = off != (size_t)-1 && off / m->ld < m->rows && off % m->ld < m->n;
        if (!inside && !same_bits(m->buf[i], GUARD_F)) return 0;
    }
    return 1;
}

static double *mat_to_double(const mat *m)
{
    double *d = (double *)xmalloc(m->rows * m->n * sizeof(double));
    size_t r, c;
    for (r = 0; r < m->rows; r++)
        for (c = 0; c < m->n; c++) d[r * m->n + c] = m->p[r * m->ld + c];
    return d;
}

static int mat_same(const mat *a, const mat *b)
{
    size_t r;
    for (r = 0; r < a->rows; r++)
        if (memcmp(a->p + r * a->ld, b->p + r * b->ld, a->n * sizeof(float)) != 0) return 0;
    return 1;
}

static void mat_copy(mat *dst, const mat *src)
{
    size_t r;
    for (r = 0; r < src->rows; r++)
        memcpy(dst->p + r * dst->ld, src->p + r * src->ld, src->n * sizeof(float));
}

static int mat_no_denormal(const mat *m)
{
    size_t r, c;
    for (r = 0; r < m->rows; r++)
        for (c = 0; c < m->n; c++)
            if (is_denormal(m->p[r * m->ld + c])) return 0;
    return 1;
}

/* a workspace of `bytes` at an address `off` bytes past 64-byte alignment */
typedef struct wsbuf {
    void *raw;
    unsigned char *p;
    size_t bytes;
} wsbuf;

#define WS_GUARD 48 /* bytes after the workspace that must stay untouched */

static void *ws_new(wsbuf *w, size_t bytes, size_t off)
{
    w->raw = xmalloc(bytes + 128);
    w->p = (unsigned char *)(((uintptr_t)w->raw + 63) & ~(uintptr_t)63) + off;
    w->bytes = bytes;
    memset(w->p, 0xCD, bytes + WS_GUARD);
    return w->p;
}

/* nothing written past the workspace size the query gave */
static int ws_guard_ok(const wsbuf *w)
{
    size_t i;
    for (i = 0; i < WS_GUARD; i++)
        if (w->p[w->bytes + i] != 0xCD) return 0;
    return 1;
}

/* ---- activations ------------------------------------------------------------------------- */

static double max_rel_gelu, max_rel_tanh_scaled, max_rel_tanh;

static void test_activation_accuracy(unsigned stride)
{
    enum { CH = 1024 };
    float *x = (float *)xmalloc(CH * sizeof(float)), *y = (float *)xmalloc(CH * sizeof(float));
    const uint32_t top = 0x41A00000u; /* 20.0f */
    uint64_t bits;
    long npts = 0, bad_gelu = 0, bad_tanh = 0, denorm = 0;
    int form;
    for (form = 0; form < 2; form++) {
        const attn_act act = form ? ATTN_ACT_GELU_TANH : ATTN_ACT_GELU;
        size_t k = 0, i;
        for (bits = 0; bits <= 2ull * top + stride; bits += stride) {
            /* bits < top: positive floats, then negative ones */
            uint32_t b =
                bits <= top
                    ? (uint32_t)bits
                    : (bits - top - 1 <= top ? 0x80000000u | (uint32_t)(bits - top - 1) : top);
            float v;
            memcpy(&v, &b, 4);
            x[k++] = v;
            if (k == CH || bits + stride > 2ull * top + stride) {
                check(attn_activation(act, x, k, y, k, 1, k) == ATTN_OK, "activation status");
                for (i = 0; i < k; i++) {
                    const double xd = x[i], ref = form ? ref_gelu_tanh(xd) : ref_gelu(xd);
                    const double err = fabs((double)y[i] - ref);
                    if (is_denormal(y[i])) denorm++;
                    npts++;
                    if (fabs(ref) < FLT_MIN) {
                        /* the result underflows: 0, or a normal float next to FLT_MIN */
                        if (!(y[i] == 0.0f || fabs((double)y[i]) < 1.0001 * FLT_MIN)) {
                            if (form) bad_tanh++;
                            else bad_gelu++;
                        }
                        continue;
                    }
                    if (!form) {
                        const double rel = err / fabs(ref);
                        if (rel > max_rel_gelu) max_rel_gelu = rel;
                        if (rel > 1e-6) {
                            if (bad_gelu++ < 5)
                                printf("gelu(%.9g) = %.9g, ref %.12g, rel %.3g\n", xd, y[i], ref,
                                       rel);
                        }
                    } else {
                        const double a = fabs(2.0 * sqrt(2.0 / 3.14159265358979323846) *
                                              (xd + 0.044715 * xd * xd * xd));
                        const double rel = err / fabs(ref);
                        if (rel > max_rel_tanh) max_rel_tanh = rel;
                        if (rel / (1.0 + a) > max_rel_tanh_scaled)
                            max_rel_tanh_scaled = rel / (1.0 + a);
                        if (rel > 1e-6 * (1.0 + a)) {
                            if (bad_tanh++ < 5)
                                printf("gelu_tanh(%.9g) = %.9g, ref %.12g, rel %.3g\n", xd, y[i],
                                       ref, rel);
                        }
                    }
                }
                k = 0;
            }
        }
    }
    check(bad_gelu == 0, "GELU (erf): %ld of the points outside relative error 1e-6", bad_gelu);
    check(bad_tanh == 0, "GELU (tanh): %ld points outside 1e-6 (1 + |a|)", bad_tanh);
    check(denorm == 0, "GELU: %ld denormal outputs", denorm);
    printf("blocks: GELU over %ld points of [-20, 20] (every %u-th float): erf form max relative "
           "error %.3g (bound 1e-6); tanh form max relative error %.3g, max relative error / "
           "(1 + |a|) %.3g (bound 1e-6)\n",
           npts / 2, stride, max_rel_gelu, max_rel_tanh, max_rel_tanh_scaled);
    {
        /* the reference's two forms of the tanh GELU agree where both are accurate */
        double xx, worst = 0;
        for (xx = -1.5; xx > -3.5; xx -= 0.01) {
            const double u = sqrt(2.0 / 3.14159265358979323846) * (xx + 0.044715 * xx * xx * xx);
            const double t = 0.5 * xx * (1.0 + tanh(u)), e = xx / (1.0 + exp(-2.0 * u));
            if (fabs(t - e) / fabs(e) > worst) worst = fabs(t - e) / fabs(e);
        }
        check(worst < 1e-9, "reference tanh GELU: tanh and exp forms differ by %.3g", worst);
    }
    free(x);
    free(y);
}

static void test_activation_special(void)
{
    const float inf = INFINITY;
    float x[10] = {0}, y[10] = {0}; /* initialized: gcc cannot see attn_activation write y */
    const float dn = FLT_MIN / 8.0f; /* a denormal */
    int form;
    /* values from the ONNX Gelu cases (x = -1, 0, 1) */
    x[0] = -1.0f, x[1] = 0.0f, x[2] = 1.0f;
    check(attn_activation(ATTN_ACT_GELU, x, 3, y, 3, 1, 3) == ATTN_OK, "gelu status");
    check(check_close(y[0], -0.158655256, 0, 4e-7) && y[1] == 0.0f &&
              check_close(y[2], 0.841344774, 0, 2e-7),
          "gelu(-1, 0, 1) = %.9g %.9g %.9g", y[0], y[1], y[2]);
    check(attn_activation(ATTN_ACT_GELU_TANH, x, 3, y, 3, 1, 3) == ATTN_OK, "gelu tanh status");
    check(check_close(y[0], -0.158807993, 0, 4e-7) && y[1] == 0.0f &&
              check_close(y[2], 0.841192007, 0, 2e-7),
          "gelu_tanh(-1, 0, 1) = %.9g %.9g %.9g", y[0], y[1], y[2]);
    for (form = 0; form < 2; form++) {
        const attn_act act = form ? ATTN_ACT_GELU_TANH : ATTN_ACT_GELU;
        x[0] = NAN, x[1] = inf, x[2] = -inf, x[3] = -0.0f, x[4] = dn, x[5] = -dn;
        x[6] = FLT_MAX, x[7] = -FLT_MAX, x[8] = 1e-30f, x[9] = -13.0f;
        check(attn_activation(act, x, 10, y, 10, 1, 10) == ATTN_OK, "status");
        check(isnan(y[0]), "gelu[%d](NaN) = %g", form, y[0]);
        check(y[1] == inf, "gelu[%d](inf) = %g", form, y[1]);
        check(y[2] == 0.0f, "gelu[%d](-inf) = %g", form, y[2]);
        check(y[3] == 0.0f && y[4] == 0.0f && y[5] == 0.0f, "gelu[%d](-0, +-denormal) = %g %g %g",
              form, y[3], y[4], y[5]);
        check(y[6] == FLT_MAX && y[7] == 0.0f, "gelu[%d](+-FLT_MAX) = %g %g", form, y[6], y[7]);
        check(check_close(y[8], 0.5e-30, 0, 1e-6), "gelu[%d](1e-30) = %g", form, y[8]);
        check(!is_denormal(y[9]), "gelu[%d](-13) = %g is denormal", form, y[9]);
    }
    /* relu and identity: exact; NaN stays; denormals flush */
    x[0] = -2.5f, x[1] = 3.25f, x[2] = NAN, x[3] = dn, x[4] = -dn, x[5] = -0.0f;
    check(attn_activation(ATTN_ACT_RELU, x, 6, y, 6, 1, 6) == ATTN_OK, "relu status");
    check(y[0] == 0.0f && y[1] == 3.25f && isnan(y[2]) && y[3] == 0.0f && y[4] == 0.0f &&
              y[5] == 0.0f,
          "relu: %g %g %g %g %g %g", y[0], y[1], y[2], y[3], y[4], y[5]);
    check(attn_activation(ATTN_ACT_NONE, x, 6, y, 6, 1, 6) == ATTN_OK, "none status");
    check(y[0] == -2.5f && y[1] == 3.25f && isnan(y[2]) && y[3] == 0.0f && y[4] == 0.0f,
          "identity: %g %g %g %g %g", y[0], y[1], y[2], y[3], y[4]);
}

/* SiLU over every stride-th float of [-200, 200] against the double reference, and its
 * special values */
static double max_rel_silu, max_rel_glu;

static void test_silu(unsigned stride)
{
    enum { CH = 1024 };
    float x[CH], y[CH];
    const uint32_t top = 0x43480000u; /* 200.0f */
    uint64_t bits;
    long npts = 0, bad = 0;
    size_t k = 0, i;
    const float dn = FLT_MIN / 8.0f;
    for (bits = 0; bits <= 2ull * top + 1; bits += stride) {
        uint32_t b = bits <= top ? (uint32_t)bits : 0x80000000u | (uint32_t)(bits - top - 1);
        float v;
        memcpy(&v, &b, 4);
        x[k++] = v;
        if (k == CH || bits + stride > 2ull * top + 1) {
            check(attn_activation(ATTN_ACT_SILU, x, k, y, k, 1, k) == ATTN_OK, "silu status");
            for (i = 0; i < k; i++) {
                const double ref = ref_silu(x[i]), rel = fabs(y[i] - ref) / fabs(ref);
                npts++;
                if (is_denormal(y[i])) bad += !check(0, "silu(%.9g) = %g is denormal", x[i], y[i]);
                if (fabs(ref) < FLT_MIN) {
                    if (!(y[i] == 0.0f || fabs((double)y[i]) < 1.0001 * FLT_MIN))
                        bad +=
                            !check(0, "silu(%.9g) = %.9g, ref %.9g (underflow)", x[i], y[i], ref);
                    continue;
                }
                if (rel > max_rel_silu) max_rel_silu = rel;
                if (rel > 1e-6 && bad++ < 5)
                    check(0, "silu(%.9g) = %.9g, ref %.12g, rel %.3g", x[i], y[i], ref, rel);
            }
            k = 0;
        }
    }
    check(bad == 0, "SiLU: %ld points outside relative error 1e-6", bad);
    printf("blocks: SiLU over %ld points of [-200, 200] (every %u-th float): max relative error "
           "%.3g (bound 1e-6)\n", npts, stride, max_rel_silu);
    x[0] = NAN, x[1] = INFINITY, x[2] = -INFINITY, x[3] = -0.0f, x[4] = dn, x[5] = -dn;
    x[6] = FLT_MAX, x[7] = -FLT_MAX, x[8] = 1.0f, x[9] = -1.0f;
    check(attn_activation(ATTN_ACT_SILU, x, 10, y, 10, 1, 10) == ATTN_OK, "silu status");
    check(isnan(y[0]) && y[1] == INFINITY && y[2] == 0.0f && y[3] == 0.0f && y[4] == 0.0f &&
              y[5] == 0.0f && y[6] == FLT_MAX && y[7] == 0.0f,
          "silu(NaN, inf, -inf, -0, +-denormal, +-FLT_MAX) = %g %g %g %g %g %g %g %g", y[0],
          y[1], y[2], y[3], y[4], y[5], y[6], y[7]);
    /* PyTorch: F.silu(torch.tensor([1., -1.])) = 0.7310586, -0.2689414 */
    check(check_close(y[8], 0.731058578630005, 0, 3e-7) &&
              check_close(y[9], -0.268941421369995, 0, 3e-7),
          "silu(1, -1) = %.9g %.9g", y[8], y[9]);
}

/* attn_glu: every act, n across the vector tails, separate and fused [gate | up] layouts,
 * in place onto gate and onto up, guards; errors and overlaps */
static void test_glu(void)
{
    size_t n, r, c, rows = 3;
    int act, lay;
    for (act = 0; act < 5; act++)
        for (n = 1; n <= 37; n += (n < 19 ? 1 : 6))
            for (lay = 0; lay < 4; lay++) {
                /* lay 0: separate gate, up, y; 1: fused h = [gate | up], y apart;
                 * 2: fused, y = gate (in place); 3: separate, y = up (in place) */
                mat g, u, h, yv, keep;
                const float *gp, *up;
                float *yp;
                size_t ldg, ldu, ldy;
                int ok = 1;
                mat_new(&g, rows, n, 3, 3.0f);
                mat_new(&u, rows, n, 1, 2.0f);
                mat_new(&h, rows, 2 * n, 2, 3.0f);
                mat_new(&yv, rows, n, 5, 0.0f);
                mat_new(&keep, rows, 2 * n, 0, 0.0f);
                if (lay == 1 || lay == 2) {
                    gp = h.p, up = h.p + n, ldg = ldu = h.ld;
                } else {
                    gp = g.p, up = u.p, ldg = g.ld, ldu = u.ld;
                }
                yp = lay == 2 ? h.p : lay == 3 ? u.p : yv.p;
                ldy = lay == 2 ? h.ld : lay == 3 ? u.ld : yv.ld;
                for (r = 0; r < rows; r++) /* the inputs, kept for the reference */
                    for (c = 0; c < n; c++) {
                        keep.p[r * keep.ld + c] = gp[r * ldg + c];
                        keep.p[r * keep.ld + n + c] = up[r * ldu + c];
                    }
                check(attn_glu((attn_act)act, gp, ldg, up, ldu, yp, ldy, rows, n) == ATTN_OK,
                      "glu status");
                for (r = 0; r < rows; r++)
                    for (c = 0; c < n; c++) {
                        const double gv = keep.p[r * keep.ld + c], uv = keep.p[r * keep.ld + n + c];
                        const double ref = ref_act(act, gv) * uv;
                        const double a = 1.6 * fabs(gv + 0.044715 * gv * gv * gv);
                        const double tol = act == 3 ? 1.2e-6 * (1 + a) : 1.2e-6;
                        const double rel = fabs(yp[r * ldy + c] - ref) / (fabs(ref) + 1e-30);
                        if (act != 3 && rel > max_rel_glu && fabs(ref) >= FLT_MIN)
                            max_rel_glu = rel;
                        if (!check_close(yp[r * ldy + c], ref, 1e-30, tol)) ok = 0;
                        if (lay == 1 && up[r * ldu + c] != (float)uv) ok = 0; /* up intact */
                    }
                check(ok, "glu act %d n %zu layout %d: values", act, n, lay);
                check(mat_guards_ok(&g) && mat_guards_ok(&u) && mat_guards_ok(&h) &&
                          mat_guards_ok(&yv),
                      "glu act %d n %zu layout %d: guards", act, n, lay);
                free(g.buf), free(u.buf), free(h.buf), free(yv.buf), free(keep.buf);
            }
    printf("blocks: attn_glu max relative error %.3g (SiLU, GELU, ReLU, none; bound 1.2e-6)\n",
           max_rel_glu);
    {
        float buf[64], keep[64];
        size_t i;
        for (i = 0; i < 64; i++) buf[i] = keep[i] = (float)i * 0.125f - 3.0f;
#define GLU_ERR(call, want)                                                                   \
    check((call) == (want) && memcmp(buf, keep, sizeof buf) == 0, "%s: want %d, buffer %s",   \
          #call, (int)(want), memcmp(buf, keep, sizeof buf) ? "written" : "intact")
        GLU_ERR(attn_glu(ATTN_ACT_SILU, NULL, 4, buf, 4, buf + 32, 4, 2, 4), ATTN_ERR_NULL);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 4, NULL, 4, buf + 32, 4, 2, 4), ATTN_ERR_NULL);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 4, buf + 8, 4, NULL, 4, 2, 4), ATTN_ERR_NULL);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, NULL, 4, NULL, 4, NULL, 4, 0, 4), ATTN_OK);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 4, buf + 8, 4, buf + 32, 4, 2, 0), ATTN_ERR_SIZE);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 3, buf + 8, 4, buf + 32, 4, 2, 4), ATTN_ERR_LD);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 4, buf + 8, 3, buf + 32, 4, 2, 4), ATTN_ERR_LD);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 4, buf + 8, 4, buf + 32, 3, 2, 4), ATTN_ERR_LD);
        GLU_ERR(attn_glu((attn_act)5, buf, 4, buf + 8, 4, buf + 32, 4, 2, 4), ATTN_ERR_ARG);
        GLU_ERR(attn_glu((attn_act)5, NULL, 4, NULL, 4, NULL, 4, 0, 4), ATTN_ERR_ARG);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 4, buf + 8, 4, buf + 2, 4, 2, 4), ATTN_ERR_ALIAS);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 4, buf + 8, 4, buf + 10, 4, 2, 4), ATTN_ERR_ALIAS);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 4, buf + 8, 4, buf + 8, 5, 2, 4), ATTN_ERR_ALIAS);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, 4, buf + 8, 4, buf, 6, 2, 4), ATTN_ERR_ALIAS);
        GLU_ERR(attn_glu(ATTN_ACT_SILU, buf, (size_t)-1 / 2, buf + 8, 4, buf + 32, 4, 2, 4),
                ATTN_ERR_OVERFLOW);
#undef GLU_ERR
    }
}

/* shapes, leading dimensions, guards, in place */
static void test_activation_shapes(void)
{
    size_t n, rows = 3;
    int act;
    for (act = 0; act < 5; act++)
        for (n = 1; n <= 19; n++) {
            mat x, y, z;
            size_t r, c;
            int ok = 1;
            mat_new(&x, rows, n, 3, 4.0f);
            mat_new(&y, rows, n, 1, 0.0f);
            mat_new(&z, rows, n, 3, 0.0f);
            mat_copy(&z, &x);
            check(attn_activation((attn_act)act, x.p, x.ld, y.p, y.ld, rows, n) == ATTN_OK,
                  "status");
            for (r = 0; r < rows; r++)
                for (c = 0; c < n; c++) {
                    const double xv = x.p[r * x.ld + c], ref = ref_act(act, xv);
                    const double a = 1.6 * fabs(xv + 0.044715 * xv * xv * xv); /* |2u| */
                    if (!check_close(y.p[r * y.ld + c], ref, 1e-30,
                                     act == 3 ? 1e-6 * (1 + a) : 1e-6))
                        ok = 0;
                }
            check(ok, "activation %d n %lu: values", act, (unsigned long)n);
            check(mat_guards_ok(&y) && mat_guards_ok(&x), "activation %d n %lu: guards", act,
                  (unsigned long)n);
            check(attn_activation((attn_act)act, z.p, z.ld, z.p, z.ld, rows, n) == ATTN_OK &&
                      mat_same(&z, &y),
                  "activation %d n %lu: in place differs", act, (unsigned long)n);
            free(x.buf);
            free(y.buf);
            free(z.buf);
        }
}

/* ---- linear --------------------------------------------------------------------------------- */

static void test_linear(void)
{
    static const size_t Ts[] = {1, 3, 7, 17}, dins[] = {1, 5, 16, 33}, douts[] = {1, 7, 8, 9, 31};
    size_t a, b, c;
    long bad = 0, cases = 0;
    double worst = 0;
    for (a = 0; a < 4; a++)
        for (b = 0; b < 4; b++)
            for (c = 0; c < 5; c++) {
                const size_t T = Ts[a], din = dins[b], dout = douts[c];
                int tw, act, bias, usews;
                for (tw = 0; tw < 2; tw++)
                    for (act = 0; act < 4; act++)
                        for (bias = 0; bias < 2; bias++)
                            for (usews = 0; usews < 2; usews++) {
                                mat x, w, y;
                                float *bv;
                                double *xd, *ref, *mag;
                                size_t i,
                                    wsz = attn_linear_workspace_size((attn_trans)tw, T, din, dout);
                                wsbuf ws;
                                void *wp = NULL;
                                int ok = 1;
                                pool_used = 0;
                                mat_new(&x, T, din, 2, 2.0f);
                                if (tw) mat_new(&w, dout, din, 1, 1.0f);
                                else mat_new(&w, din, dout, 1, 1.0f);
                                mat_new(&y, T, dout, 3, 0.0f);
                                mat_fill(&y, NAN); /* beta = 0: never read */
                                bv = bias ? rnd(dout, 1.0f) : NULL;
                                if (usews) wp = ws_new(&ws, wsz, 4);
                                check(attn_linear(x.p, x.ld, T, din, (attn_trans)tw, w.p, w.ld, bv,
                                                  dout, (attn_act)act, y.p, y.ld, wp,
                                                  usews ? wsz : 0) == ATTN_OK,
                                      "linear status");
                                xd = mat_to_double(&x);
                                ref = (double *)xmalloc(T * dout * sizeof(double));
                                mag = (double *)xmalloc(T * dout * sizeof(double));
                                ref_linear(xd, T, din, w.p, w.ld, tw, bv, dout, act, ref, mag);
                                for (i = 0; i < T * dout; i++) {
                                    const double got = y.p[(i / dout) * y.ld + i % dout];
                                    const double tol = 1.2 * ((double)din + 4) * U_FLT * mag[i] +
                                                       2e-6 * fabs(ref[i]) + 1e-37;
                                    const double e = fabs(got - ref[i]);
                                    if (!(e <= tol)) ok = 0;
                                    if (e / tol > worst) worst = e / tol;
                                }
                                cases++;
                                if (!check(
                                        ok && mat_guards_ok(&y),
                                        "linear T %lu din %lu dout %lu tw %d act %d bias %d ws %d",
                                        (unsigned long)T, (unsigned long)din, (unsigned long)dout,
                                        tw, act, bias, usews))
                                    bad++;
                                free(xd);
                                free(ref);
                                free(mag);
                                free(x.buf);
                                free(w.buf);
                                free(y.buf);
                                if (usews) free(ws.raw);
                            }
            }
    printf("blocks: attn_linear: %ld shapes x layouts x activations, the largest error used %.3g "
           "of the tolerance\n", cases, worst);
}

/* ---- blocks against the double references ---------------------------------------------------- */

typedef struct blk_stat {
    double worst; /* max |y - ref| / (1 + max |ref|) */
} blk_stat;

static blk_stat st_ffn, st_mha, st_enc, st_dec;

#define BLOCK_TOL 2e-5

/* compares y with ref (rows x n); records into s */
static int compare_block(const mat *y, const double *ref, blk_stat *s)
{
    size_t r, c;
    double scale = 0.0, e = 0.0;
    for (r = 0; r < y->rows * y->n; r++)
        if (fabs(ref[r]) > scale) scale = fabs(ref[r]);
    for (r = 0; r < y->rows; r++)
        for (c = 0; c < y->n; c++) {
            const double d = fabs((double)y->p[r * y->ld + c] - ref[r * y->n + c]);
            if (!(d <= e)) e = d; /* NaN propagates into e */
        }
    e /= 1.0 + scale;
    if (!(e <= s->worst)) s->worst = e;
    return e <= BLOCK_TOL && mat_guards_ok(y);
}

typedef struct bcase {
    size_t d, heads, dff, T, M;
} bcase;

static const bcase bcases[] = {
    {8, 1, 16, 1, 1},  {8, 2, 32, 5, 3},    {16, 4, 64, 7, 9},   {32, 4, 64, 17, 4},
    {24, 3, 40, 33, 2}, {64, 8, 256, 12, 20}, {48, 6, 96, 16, 16},
};
#define NBCASES (sizeof bcases / sizeof bcases[0])

static void test_ffn_mha(void)
{
    size_t ci;
    for (ci = 0; ci < NBCASES; ci++) {
        const bcase *bc = &bcases[ci];
        int act, bias, causal, cross;
        for (act = 0; act < 4; act++)
            for (bias = 0; bias < 2; bias++) {
                attn_ffn_weights fw;
                mat x, y;
                double *xd, *ref;
                size_t wsz;
                wsbuf ws;
                pool_used = 0;
                fw = make_ffn(bc->d, bc->dff, (attn_act)act, bias);
                mat_new(&x, bc->T, bc->d, 1, 1.5f);
                mat_new(&y, bc->T, bc->d, 2, 0.0f);
                wsz = attn_ffn_workspace_size(&fw, bc->T);
                ws_new(&ws, wsz, 0);
                check(attn_ffn(&fw, x.p, x.ld, y.p, y.ld, bc->T, ws.p, wsz) == ATTN_OK,
                      "ffn status");
                xd = mat_to_double(&x);
                ref = (double *)xmalloc(bc->T * bc->d * sizeof(double));
                ref_ffn(&fw, xd, bc->T, ref);
                check(compare_block(&y, ref, &st_ffn), "ffn case %lu act %d bias %d",
                      (unsigned long)ci, act, bias);
                /* in place */
                check(attn_ffn(&fw, x.p, x.ld, x.p, x.ld, bc->T, ws.p, wsz) == ATTN_OK &&
                          mat_same(&x, &y),
                      "ffn case %lu: in place differs", (unsigned long)ci);
                check(ws_guard_ok(&ws), "ffn case %lu: wrote past the workspace",
                      (unsigned long)ci);
                free(ws.raw);
                free(xd);
                free(ref);
                free(x.buf);
                free(y.buf);
            }
        for (cross = 0; cross < 2; cross++)
            for (causal = 0; causal < 2; causal++)
                for (bias = 0; bias < 2; bias++) {
                    attn_mha_weights mw;
                    mat xq, xkv, y, y2;
                    const size_t Lk = cross ? bc->M : bc->T;
                    double *xqd, *xkvd, *ref;
                    size_t wsz;
                    wsbuf ws, ws2;
                    pool_used = 0;
                    mw = make_mha(bc->d, bc->heads, bias);
                    mat_new(&xq, bc->T, bc->d, 3, 1.5f);
                    mat_new(&xkv, Lk, bc->d, 0, 1.5f);
                    mat_new(&y, bc->T, bc->d, 1, 0.0f);
                    mat_new(&y2, bc->T, bc->d, 1, 0.0f);
                    wsz = attn_mha_workspace_size(&mw, bc->T, Lk);
                    ws_new(&ws, wsz, 0);
                    ws_new(&ws2, wsz, 4);
                    if (cross)
                        check(attn_mha(&mw, xq.p, xq.ld, bc->T, xkv.p, xkv.ld, Lk, causal, y.p,
                                       y.ld, ws.p, wsz) == ATTN_OK,
                              "mha status");
                    else
                        check(attn_mha(&mw, xq.p, xq.ld, bc->T, xq.p, xq.ld, Lk, causal, y.p, y.ld,
                                       ws.p, wsz) == ATTN_OK,
                              "mha status");
                    xqd = mat_to_double(&xq);
                    xkvd = cross ? mat_to_double(&xkv) : xqd;
                    ref = (double *)xmalloc(bc->T * bc->d * sizeof(double));
                    ref_mha(&mw, xqd, bc->T, xkvd, Lk, causal, ref);
                    check(compare_block(&y, ref, &st_mha),
                          "mha case %lu cross %d causal %d bias %d", (unsigned long)ci, cross,
                          causal, bias);
                    /* unaligned workspace: bit-identical; then in place over xq */
                    check(attn_mha(&mw, xq.p, xq.ld, bc->T, cross ? xkv.p : xq.p,
                                   cross ? xkv.ld : xq.ld, Lk, causal, y2.p, y2.ld, ws2.p,
                                   wsz) == ATTN_OK &&
                              mat_same(&y, &y2),
                          "mha case %lu: odd workspace address differs", (unsigned long)ci);
                    check(attn_mha(&mw, xq.p, xq.ld, bc->T, cross ? xkv.p : xq.p,
                                   cross ? xkv.ld : xq.ld, Lk, causal, xq.p, xq.ld, ws.p,
                                   wsz) == ATTN_OK &&
                              mat_same(&xq, &y),
                          "mha case %lu: in place differs", (unsigned long)ci);
                    check(ws_guard_ok(&ws) && ws_guard_ok(&ws2),
                          "mha case %lu: wrote past the workspace", (unsigned long)ci);
                    free(ws.raw);
                    free(ws2.raw);
                    free(xqd);
                    if (cross) free(xkvd);
                    free(ref);
                    free(xq.buf);
                    free(xkv.buf);
                    free(y.buf);
                    free(y2.buf);
                }
    }
}

static void test_encoder_decoder(void)
{
    size_t ci;
    for (ci = 0; ci < NBCASES; ci++) {
        const bcase *bc = &bcases[ci];
        int norm, causal, bias;
        for (norm = 0; norm < 2; norm++)
            for (bias = 0; bias < 2; bias++) {
                const attn_act act = bias ? ATTN_ACT_GELU : ATTN_ACT_RELU;
                for (causal = 0; causal < 2; causal++) {
                    attn_encoder_weights ew;
                    mat x, y, z;
                    double *xd, *ref;
                    size_t wsz;
                    wsbuf ws;
                    pool_used = 0;
                    ew = make_encoder(bc->d, bc->heads, bc->dff, act, bias, (attn_norm_order)norm);
                    mat_new(&x, bc->T, bc->d, 2, 1.5f);
                    mat_new(&y, bc->T, bc->d, 1, 0.0f);
                    mat_new(&z, bc->T, bc->d, 2, 0.0f);
                    wsz = attn_encoder_workspace_size(&ew, bc->T);
                    ws_new(&ws, wsz, 4);
                    check(attn_encoder(&ew, x.p, x.ld, y.p, y.ld, bc->T, causal, ws.p, wsz) ==
                              ATTN_OK,
                          "encoder status");
                    xd = mat_to_double(&x);
                    ref = (double *)xmalloc(bc->T * bc->d * sizeof(double));
                    ref_encoder(&ew, xd, bc->T, causal, ref);
                    check(compare_block(&y, ref, &st_enc),
                          "encoder case %lu norm %d bias %d causal %d", (unsigned long)ci, norm,
                          bias, causal);
                    check(attn_encoder(&ew, x.p, x.ld, y.p, y.ld, bc->T, causal, ws.p, wsz - 1) ==
                              ATTN_ERR_WORKSPACE,
                          "encoder: one byte short of the workspace accepted");
                    /* in place */
                    mat_copy(&z, &x);
                    check(attn_encoder(&ew, z.p, z.ld, z.p, z.ld, bc->T, causal, ws.p, wsz) ==
                                  ATTN_OK &&
                              mat_same(&z, &y),
                          "encoder case %lu: in place differs", (unsigned long)ci);
                    if (causal && bc->T > 1) {
                        /* a change in the last token leaves every earlier output bit-identical */
                        mat_copy(&z, &x);
                        z.p[(bc->T - 1) * z.ld] += 1.0f;
                        z.rows = bc->T - 1;
                        check(attn_encoder(&ew, z.p, z.ld, z.p, z.ld, bc->T, causal, ws.p, wsz) ==
                                  ATTN_OK,
                              "status");
                        check(mat_same(&z, &y),
                              "causal encoder case %lu: a later token changed earlier outputs",
                              (unsigned long)ci);
                        z.rows = bc->T;
                    }
                    check(ws_guard_ok(&ws), "encoder case %lu: wrote past the workspace",
                          (unsigned long)ci);
                    free(ws.raw);
                    free(xd);
                    free(ref);
                    free(x.buf);
                    free(y.buf);
                    free(z.buf);
                }
                {
                    attn_decoder_weights dw;
                    mat x, mem, y, z;
                    double *xd, *md, *ref;
                    size_t wsz;
                    wsbuf ws;
                    pool_used = 0;
                    dw = make_decoder(bc->d, bc->heads, bc->dff,
                                      bias ? ATTN_ACT_GELU_TANH : ATTN_ACT_GELU, bias,
                                      (attn_norm_order)norm);
                    mat_new(&x, bc->T, bc->d, 1, 1.5f);
                    mat_new(&mem, bc->M, bc->d, 3, 1.5f);
                    mat_new(&y, bc->T, bc->d, 0, 0.0f);
                    mat_new(&z, bc->T, bc->d, 1, 0.0f);
                    wsz = attn_decoder_workspace_size(&dw, bc->T, bc->M);
                    ws_new(&ws, wsz, 8);
                    check(attn_decoder(&dw, x.p, x.ld, y.p, y.ld, bc->T, mem.p, mem.ld, bc->M, ws.p,
                                       wsz) == ATTN_OK,
                          "decoder status");
                    xd = mat_to_double(&x);
                    md = mat_to_double(&mem);
                    ref = (double *)xmalloc(bc->T * bc->d * sizeof(double));
                    ref_decoder(&dw, xd, bc->T, md, bc->M, ref);
                    check(compare_block(&y, ref, &st_dec), "decoder case %lu norm %d bias %d",
                          (unsigned long)ci, norm, bias);
                    check(attn_decoder(&dw, x.p, x.ld, y.p, y.ld, bc->T, mem.p, mem.ld, bc->M, ws.p,
                                       wsz - 1) == ATTN_ERR_WORKSPACE,
                          "decoder: one byte short of the workspace accepted");
                    mat_copy(&z, &x);
                    check(attn_decoder(&dw, z.p, z.ld, z.p, z.ld, bc->T, mem.p, mem.ld, bc->M, ws.p,
                                       wsz) == ATTN_OK &&
                              mat_same(&z, &y),
                          "decoder case %lu: in place differs", (unsigned long)ci);
                    if (bc->T > 1) {
                        mat_copy(&z, &x);
                        z.p[(bc->T - 1) * z.ld + 1 % bc->d] -= 1.0f;
                        z.rows = bc->T - 1;
                        check(attn_decoder(&dw, z.p, z.ld, z.p, z.ld, bc->T, mem.p, mem.ld, bc->M,
                                           ws.p, wsz) == ATTN_OK &&
                                  mat_same(&z, &y),
                              "decoder case %lu: a later token changed earlier outputs",
                              (unsigned long)ci);
                        z.rows = bc->T;
                    }
                    check(ws_guard_ok(&ws), "decoder case %lu: wrote past the workspace",
                          (unsigned long)ci);
                    free(ws.raw);
                    free(xd);
                    free(md);
                    free(ref);
                    free(x.buf);
                    free(mem.buf);
                    free(y.buf);
                    free(z.buf);
                }
            }
    }
    printf(
        "blocks: max |y - ref| / (1 + max |ref|) (tolerance %g): ffn %.3g, mha %.3g, encoder %.3g, "
        "decoder %.3g\n",
        BLOCK_TOL, st_ffn.worst, st_mha.worst, st_enc.worst, st_dec.worst);
}

/* ---- embeddings + positional encoding -> encoder (the model's input path) ------------------- */

static void test_embedding_pe_encoder(void)
{
    const size_t T = 9, d = 32, pos0 = 5;
    attn_encoder_weights ew;
    mat x, y;
    double *xd, *ref;
    size_t r, c, wsz;
    wsbuf ws;
    pool_used = 0;
    ew = make_encoder(d, 4, 64, ATTN_ACT_GELU, 1, ATTN_PRE_LN);
    mat_new(&x, T, d, 1, 0.5f);
    mat_new(&y, T, d, 1, 0.0f);
    xd = mat_to_double(&x);
    /* the reference adds the sinusoids in double: sin / cos(p / 10000^(2i/d)) */
    for (r = 0; r < T; r++)
        for (c = 0; c < d; c++) {
            const double a =
                (double)(pos0 + r) / pow(10000.0, (double)(c & ~(size_t)1) / (double)d);
            xd[r * d + c] += (c & 1) ? cos(a) : sin(a);
        }
    check(attn_positional_encoding(x.p, x.ld, T, d, pos0, 1) == ATTN_OK, "PE status");
    wsz = attn_encoder_workspace_size(&ew, T);
    ws_new(&ws, wsz, 0);
    check(attn_encoder(&ew, x.p, x.ld, y.p, y.ld, T, 0, ws.p, wsz) == ATTN_OK, "encoder status");
    ref = (double *)xmalloc(T * d * sizeof(double));
    ref_encoder(&ew, xd, T, 0, ref);
    check(compare_block(&y, ref, &st_enc), "embeddings + PE (positions %lu..) -> encoder",
          (unsigned long)pos0);
    free(ws.raw);
    free(xd);
    free(ref);
    free(x.buf);
    free(y.buf);
}

/* ---- denormals ------------------------------------------------------------------------------ */

static void test_no_denormals(void)
{
    /* tiny inputs and tiny weights: products and sums in the denormal range */
    const size_t T = 5, d = 16, dff = 32;
    attn_encoder_weights ew;
    attn_decoder_weights dw;
    mat x, y, mem;
    float *tw;
    size_t i, wsz;
    wsbuf ws;
    int act;
    pool_used = 0;
    mat_new(&x, T, d, 0, 1e-19f); /* x^2 ~ 1e-38: around FLT_MIN */
    mat_new(&y, T, d, 0, 0.0f);
    for (act = 0; act < 4; act++) {
        mat t;
        mat_new(&t, T, d, 0, 3e-38f);
        check(attn_activation((attn_act)act, t.p, t.ld, t.p, t.ld, T, d) == ATTN_OK &&
                  mat_no_denormal(&t),
              "activation %d of tiny inputs gave a denormal", act);
        free(t.buf);
    }
    tw = rnd(d * d, 1e-19f);
    check(attn_linear(x.p, x.ld, T, d, ATTN_NO_TRANS, tw, d, NULL, d, ATTN_ACT_NONE, y.p, y.ld,
                      NULL, 0) == ATTN_OK &&
              mat_no_denormal(&y),
          "linear of tiny values gave a denormal");
    for (i = 0; i < 2; i++) {
        ew = make_encoder(d, 2, dff, ATTN_ACT_GELU, 1, (attn_norm_order)i);
        /* tiny gamma and beta: every layer norm output is tiny */
        ew.ln1_gamma = rnd(d, 1e-37f), ew.ln1_beta = rnd(d, 1e-38f);
        ew.ln2_gamma = rnd(d, 1e-37f), ew.ln2_beta = rnd(d, 1e-38f);
        ew.attn.wv = rnd(d * d, 1e-20f);
        ew.ffn.w2 = rnd(dff * d, 1e-20f);
        ew.attn.bo = NULL, ew.ffn.b2 = NULL;
        wsz = attn_encoder_workspace_size(&ew, T);
        ws_new(&ws, wsz, 0);
        check(attn_encoder(&ew, x.p, x.ld, y.p, y.ld, T, 0, ws.p, wsz) == ATTN_OK &&
                  mat_no_denormal(&y),
              "encoder (norm %d) of tiny values gave a denormal", (int)i);
        free(ws.raw);
        dw = make_decoder(d, 2, dff, ATTN_ACT_GELU, 1, (attn_norm_order)i);
        dw.ln3_gamma = rnd(d, 1e-37f), dw.ln3_beta = rnd(d, 1e-38f);
        dw.ffn.w2 = rnd(dff * d, 1e-20f), dw.ffn.b2 = NULL;
        dw.self_attn.wv = rnd(d * d, 1e-20f), dw.self_attn.bo = NULL;
        dw.cross_attn.wv = rnd(d * d, 1e-20f), dw.cross_attn.bo = NULL;
        mat_new(&mem, 3, d, 0, 1e-19f);
        wsz = attn_decoder_workspace_size(&dw, T, 3);
        ws_new(&ws, wsz, 0);
        check(attn_decoder(&dw, x.p, x.ld, y.p, y.ld, T, mem.p, mem.ld, 3, ws.p, wsz) == ATTN_OK &&
                  mat_no_denormal(&y),
              "decoder (norm %d) of tiny values gave a denormal", (int)i);
        free(ws.raw);
        free(mem.buf);
    }
    free(x.buf);
    free(y.buf);
}

/* ---- errors -----------------------------------------------------------------------------------
 */

static void test_errors(void)
{
    const size_t T = 4, d = 8, dff = 16, M = 3;
    attn_encoder_weights ew, e2;
    attn_decoder_weights dw, d2;
    attn_mha_weights mw;
    attn_ffn_weights fw;
    mat x, y, mem, snap;
    float *w;
    size_t wsz;
    wsbuf ws;
    unsigned char *wp;
    const size_t big = (size_t)-1 / 2;
    pool_used = 0;
    ew = make_encoder(d, 2, dff, ATTN_ACT_GELU, 1, ATTN_PRE_LN);
    dw = make_decoder(d, 2, dff, ATTN_ACT_GELU, 1, ATTN_POST_LN);
    mw = ew.attn;
    fw = ew.ffn;
    w = rnd(d * d, 1.0f);
    mat_new(&x, T, d, 0, 1.0f);
    mat_new(&y, T, d, 0, 1.0f);
    mat_new(&snap, T, d, 0, 1.0f);
    mat_new(&mem, M, d, 0, 1.0f);
    mat_copy(&snap, &y);
    wsz = attn_decoder_workspace_size(&dw, T, T) + attn_encoder_workspace_size(&ew, T) + 4096;
    wp = (unsigned char *)ws_new(&ws, wsz, 0);

#define EXPECT(call, want)                                                                         \
    do {                                                                                           \
        attn_status st_ = (call);                                                                  \
        check(st_ == (want), "line %d: %s returned %d, want %d", __LINE__, #call, (int)st_,        \
              (int)(want));                                                                        \
        check(mat_same(&y, &snap) && mat_guards_ok(&y), "line %d: output written on error",        \
              __LINE__);                                                                           \
    } while (0)

    /* activation */
    EXPECT(attn_activation(ATTN_ACT_GELU, NULL, d, y.p, d, T, d), ATTN_ERR_NULL);
    EXPECT(attn_activation(ATTN_ACT_GELU, x.p, d, NULL, d, T, d), ATTN_ERR_NULL);
    EXPECT(attn_activation(ATTN_ACT_GELU, x.p, d, y.p, d, 0, d), ATTN_OK); /* empty */
    EXPECT(attn_activation(ATTN_ACT_GELU, NULL, d, NULL, d, 0, d), ATTN_OK);
    EXPECT(attn_activation((attn_act)5, NULL, d, NULL, d, 0, d), ATTN_ERR_ARG);
    EXPECT(attn_activation(ATTN_ACT_GELU, y.p + 1, d, y.p, d, T, d), ATTN_ERR_ALIAS);
    EXPECT(attn_activation(ATTN_ACT_GELU, y.p, d, y.p, d - 1, T, d - 1), ATTN_ERR_ALIAS);
    EXPECT(attn_activation(ATTN_ACT_GELU, x.p, d, y.p, d, T, 0), ATTN_ERR_SIZE);
    EXPECT(attn_activation(ATTN_ACT_GELU, x.p, d - 1, y.p, d, T, d), ATTN_ERR_LD);
    EXPECT(attn_activation(ATTN_ACT_GELU, x.p, d, y.p, d - 1, T, d), ATTN_ERR_LD);
    EXPECT(attn_activation((attn_act)5, x.p, d, y.p, d, T, d), ATTN_ERR_ARG);
    EXPECT(attn_activation((attn_act)-1, x.p, d, y.p, d, T, d), ATTN_ERR_ARG);
    EXPECT(attn_activation(ATTN_ACT_RELU, x.p, big, y.p, d, T, d), ATTN_ERR_OVERFLOW);
    /* linear */
    EXPECT(attn_linear(NULL, d, T, d, ATTN_NO_TRANS, w, d, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
           ATTN_ERR_NULL);
    EXPECT(
        attn_linear(x.p, d, T, d, ATTN_NO_TRANS, NULL, d, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
        ATTN_ERR_NULL);
    EXPECT(attn_linear(x.p, d, T, d, ATTN_NO_TRANS, w, d, NULL, d, ATTN_ACT_NONE, NULL, d, NULL, 0),
           ATTN_ERR_NULL);
    EXPECT(attn_linear(x.p, d, 0, d, ATTN_NO_TRANS, w, d, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
           ATTN_OK);
    EXPECT(attn_linear(NULL, d, 0, d, ATTN_NO_TRANS, NULL, d, NULL, d, ATTN_ACT_NONE, NULL, d, NULL,
                       0), ATTN_OK);
    EXPECT(attn_linear(y.p, d, T, d, ATTN_NO_TRANS, w, d, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
           ATTN_ERR_ALIAS);
    EXPECT(
        attn_linear(x.p, d, T, d, ATTN_NO_TRANS, y.p, d, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
        ATTN_ERR_ALIAS);
    EXPECT(attn_linear(x.p, d, T, d, ATTN_NO_TRANS, w, d, y.p + d, d, ATTN_ACT_NONE, y.p, d, NULL,
                       0), ATTN_ERR_ALIAS);
    EXPECT(attn_linear(x.p, d, T, d, ATTN_NO_TRANS, w, d, NULL, d, ATTN_ACT_NONE, y.p, d,
                       (void *)y.p, attn_linear_workspace_size(ATTN_NO_TRANS, T, d, d) + 64),
           ATTN_ERR_ALIAS);
    EXPECT(attn_linear(x.p, d, T, 0, ATTN_NO_TRANS, w, d, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
           ATTN_ERR_SIZE);
    EXPECT(attn_linear(x.p, d, T, d, ATTN_NO_TRANS, w, d, NULL, 0, ATTN_ACT_NONE, y.p, d, NULL, 0),
           ATTN_ERR_SIZE);
    EXPECT(
        attn_linear(x.p, d - 1, T, d, ATTN_NO_TRANS, w, d, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
        ATTN_ERR_LD);
    EXPECT(
        attn_linear(x.p, d, T, d, ATTN_NO_TRANS, w, d - 1, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
        ATTN_ERR_LD);
    EXPECT(attn_linear(x.p, d, T, d, ATTN_TRANS, w, 4, NULL, 4, ATTN_ACT_NONE, y.p, d, NULL, 0),
           ATTN_ERR_LD);
    EXPECT(
        attn_linear(x.p, d, T, d, ATTN_NO_TRANS, w, d, NULL, d, ATTN_ACT_NONE, y.p, d - 1, NULL, 0),
        ATTN_ERR_LD);
    EXPECT(attn_linear(x.p, d, T, d, (attn_trans)2, w, d, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
           ATTN_ERR_ARG);
    EXPECT(attn_linear(x.p, d, T, d, ATTN_NO_TRANS, w, d, NULL, d, (attn_act)9, y.p, d, NULL, 0),
           ATTN_ERR_ARG);
    EXPECT(
        attn_linear(x.p, big, T, d, ATTN_NO_TRANS, w, d, NULL, d, ATTN_ACT_NONE, y.p, d, NULL, 0),
        ATTN_ERR_OVERFLOW);
    if (attn_linear_workspace_size(ATTN_TRANS, T, d, d) > 0)
        EXPECT(attn_linear(x.p, d, T, d, ATTN_TRANS, w, d, NULL, d, ATTN_ACT_NONE, y.p, d, wp, 1),
               ATTN_ERR_WORKSPACE);
    /* ffn */
    {
        attn_ffn_weights f2 = fw;
        size_t fs = attn_ffn_workspace_size(&fw, T);
        check(fs > 0 && attn_ffn_workspace_size(NULL, T) == 0 &&
                  attn_ffn_workspace_size(&fw, 0) == 0,
              "ffn ws query");
        EXPECT(attn_ffn(NULL, x.p, d, y.p, d, T, wp, fs), ATTN_ERR_NULL);
        EXPECT(attn_ffn(&fw, NULL, d, y.p, d, T, wp, fs), ATTN_ERR_NULL);
        EXPECT(attn_ffn(&fw, x.p, d, NULL, d, T, wp, fs), ATTN_ERR_NULL);
        EXPECT(attn_ffn(&fw, x.p, d, y.p, d, T, NULL, fs), ATTN_ERR_WORKSPACE);
        EXPECT(attn_ffn(&fw, x.p, d, y.p, d, T, wp, fs - 1), ATTN_ERR_WORKSPACE);
        EXPECT(attn_ffn(&fw, x.p, d, y.p, d, 0, wp, fs), ATTN_OK);
        EXPECT(attn_ffn(&fw, NULL, d, NULL, d, 0, NULL, 0), ATTN_OK);
        EXPECT(attn_ffn(&fw, y.p + 1, d, y.p, d, T, wp, fs), ATTN_ERR_ALIAS);
        EXPECT(attn_ffn(&fw, x.p, d, y.p, d, T, (void *)(y.p + 2), fs), ATTN_ERR_ALIAS);
        EXPECT(attn_ffn(&fw, x.p, d - 1, y.p, d, T, wp, fs), ATTN_ERR_LD);
        EXPECT(attn_ffn(&fw, x.p, d, y.p, d - 1, T, wp, fs), ATTN_ERR_LD);
        f2.w2 = NULL;
        EXPECT(attn_ffn(&f2, x.p, d, y.p, d, T, wp, fs), ATTN_ERR_NULL);
        f2 = fw, f2.d_ff = 0;
        EXPECT(attn_ffn(&f2, x.p, d, y.p, d, T, wp, fs), ATTN_ERR_SIZE);
        check(attn_ffn_workspace_size(&f2, T) == 0, "ffn ws query of d_ff 0");
        f2 = fw, f2.act = (attn_act)7;
        EXPECT(attn_ffn(&f2, x.p, d, y.p, d, T, wp, fs), ATTN_ERR_ARG);
        f2 = fw, f2.d_ff = big;
        EXPECT(attn_ffn(&f2, x.p, d, y.p, d, T, wp, fs), ATTN_ERR_OVERFLOW);
        f2 = fw,
        f2.d_ff = ((size_t)PTRDIFF_MAX / sizeof(float)) / d / 2; /* fine weights, hidden too big */
        EXPECT(attn_ffn(&f2, x.p, d, y.p, d, 64, wp, fs), ATTN_ERR_OVERFLOW);
    }
    /* mha */
    {
        attn_mha_weights m2 = mw;
        size_t ms = attn_mha_workspace_size(&mw, T, M);
        check(ms > 0 && attn_mha_workspace_size(NULL, T, M) == 0 &&
                  attn_mha_workspace_size(&mw, 0, M) == 0 &&
                  attn_mha_workspace_size(&mw, T, 0) > 0,
              "mha ws query");
        EXPECT(attn_mha(NULL, x.p, d, T, mem.p, d, M, 0, y.p, d, wp, ms), ATTN_ERR_NULL);
        EXPECT(attn_mha(&mw, NULL, d, T, mem.p, d, M, 0, y.p, d, wp, ms), ATTN_ERR_NULL);
        EXPECT(attn_mha(&mw, x.p, d, T, NULL, d, M, 0, y.p, d, wp, ms), ATTN_ERR_NULL);
        EXPECT(attn_mha(&mw, x.p, d, T, mem.p, d, M, 0, NULL, d, wp, ms), ATTN_ERR_NULL);
        EXPECT(attn_mha(&mw, x.p, d, T, mem.p, d, M, 0, y.p, d, NULL, ms), ATTN_ERR_WORKSPACE);
        EXPECT(attn_mha(&mw, x.p, d, T, mem.p, d, M, 0, y.p, d, wp, ms - 1), ATTN_ERR_WORKSPACE);
        EXPECT(attn_mha(&mw, x.p, d, 0, mem.p, d, M, 0, y.p, d, wp, ms), ATTN_OK);
        EXPECT(attn_mha(&mw, NULL, d, 0, NULL, d, 0, 0, NULL, d, NULL, 0), ATTN_OK);
        EXPECT(attn_mha(&mw, x.p, d, T, y.p + 1, d, M, 0, y.p, d, wp, ms), ATTN_ERR_ALIAS);
        EXPECT(attn_mha(&mw, y.p + d, d, T, mem.p, d, M, 0, y.p, d, wp, ms), ATTN_ERR_ALIAS);
        EXPECT(attn_mha(&mw, x.p, d, T, mem.p, d, M, 0, y.p, d, (void *)mem.p, ms),
               ATTN_ERR_ALIAS);
        EXPECT(attn_mha(&mw, x.p, d, T, mem.p, d, 0, 0, y.p, d, wp, ms), ATTN_ERR_SIZE);
        EXPECT(attn_mha(&mw, x.p, d, T, mem.p, d - 1, M, 0, y.p, d, wp, ms), ATTN_ERR_LD);
        EXPECT(attn_mha(&mw, x.p, d, T, mem.p, d, M, 2, y.p, d, wp, ms), ATTN_ERR_ARG);
        EXPECT(attn_mha(&mw, x.p, d, T, mem.p, d, M, -1, y.p, d, wp, ms), ATTN_ERR_ARG);
        m2.heads = 3;
        EXPECT(attn_mha(&m2, x.p, d, T, mem.p, d, M, 0, y.p, d, wp, ms), ATTN_ERR_SIZE);
        check(attn_mha_workspace_size(&m2, T, M) == 0, "mha ws query, heads not dividing d_model");
        m2 = mw, m2.heads = 0;
        EXPECT(attn_mha(&m2, x.p, d, T, mem.p, d, M, 0, y.p, d, wp, ms), ATTN_ERR_SIZE);
        m2 = mw, m2.wo = NULL;
        EXPECT(attn_mha(&m2, x.p, d, T, mem.p, d, M, 0, y.p, d, wp, ms), ATTN_ERR_NULL);
        m2 = mw, m2.d_model = big, m2.heads = 1;
        EXPECT(attn_mha(&m2, x.p, d, T, mem.p, d, M, 0, y.p, d, wp, ms), ATTN_ERR_OVERFLOW);
    }
    /* encoder */
    {
        size_t es = attn_encoder_workspace_size(&ew, T);
        EXPECT(attn_encoder(NULL, x.p, d, y.p, d, T, 0, wp, es), ATTN_ERR_NULL);
        EXPECT(attn_encoder(&ew, NULL, d, y.p, d, T, 0, wp, es), ATTN_ERR_NULL);
        EXPECT(attn_encoder(&ew, x.p, d, NULL, d, T, 0, wp, es), ATTN_ERR_NULL);
        EXPECT(attn_encoder(&ew, x.p, d, y.p, d, T, 0, NULL, es), ATTN_ERR_WORKSPACE);
        EXPECT(attn_encoder(&ew, x.p, d, y.p, d, T, 0, wp, es - 1), ATTN_ERR_WORKSPACE);
        EXPECT(attn_encoder(&ew, x.p, d, y.p, d, 0, 0, wp, es), ATTN_OK);
        EXPECT(attn_encoder(&ew, NULL, d, NULL, d, 0, 0, NULL, 0), ATTN_OK);
        EXPECT(attn_encoder(&ew, NULL, d, NULL, d, 0, 3, NULL, 0), ATTN_ERR_ARG);
        EXPECT(attn_encoder(&ew, y.p, d + 1, y.p, d, T, 0, wp, es), ATTN_ERR_ALIAS);
        EXPECT(attn_encoder(&ew, x.p, d, y.p, d - 1, T, 0, wp, es), ATTN_ERR_LD);
        EXPECT(attn_encoder(&ew, x.p, d, y.p, d, T, 5, wp, es), ATTN_ERR_ARG);
        e2 = ew, e2.eps = NAN;
        EXPECT(attn_encoder(&e2, x.p, d, y.p, d, T, 0, wp, es), ATTN_ERR_ARG);
        e2 = ew, e2.eps = -1.0f;
        EXPECT(attn_encoder(&e2, x.p, d, y.p, d, T, 0, wp, es), ATTN_ERR_ARG);
        e2 = ew, e2.norm = (attn_norm_order)2;
        EXPECT(attn_encoder(&e2, x.p, d, y.p, d, T, 0, wp, es), ATTN_ERR_ARG);
        check(attn_encoder_workspace_size(&e2, T) == 0, "encoder ws query with a bad enum");
        e2 = ew, e2.ffn.d_model = 2 * d;
        EXPECT(attn_encoder(&e2, x.p, d, y.p, d, T, 0, wp, es), ATTN_ERR_SIZE);
        e2 = ew, e2.attn.wq = NULL;
        EXPECT(attn_encoder(&e2, x.p, d, y.p, d, T, 0, wp, es), ATTN_ERR_NULL);
        e2 = ew, e2.ffn.act = (attn_act)5;
        EXPECT(attn_encoder(&e2, x.p, d, y.p, d, T, 0, wp, es), ATTN_ERR_ARG);
    }
    /* decoder */
    {
        size_t ds = attn_decoder_workspace_size(&dw, T, M);
        check(ds > 0 && attn_decoder_workspace_size(&dw, T, 0) > 0 &&
                  attn_decoder_workspace_size(NULL, T, M) == 0,
              "decoder ws query");
        EXPECT(attn_decoder(NULL, x.p, d, y.p, d, T, mem.p, d, M, wp, ds), ATTN_ERR_NULL);
        EXPECT(attn_decoder(&dw, x.p, d, y.p, d, T, NULL, d, M, wp, ds), ATTN_ERR_NULL);
        EXPECT(attn_decoder(&dw, x.p, d, y.p, d, T, mem.p, d, M, NULL, ds), ATTN_ERR_WORKSPACE);
        EXPECT(attn_decoder(&dw, x.p, d, y.p, d, T, mem.p, d, M, wp, ds - 1), ATTN_ERR_WORKSPACE);
        EXPECT(attn_decoder(&dw, x.p, d, y.p, d, T, mem.p, d, 0, wp, ds), ATTN_ERR_SIZE);
        EXPECT(attn_decoder(&dw, x.p, d, y.p, d, 0, mem.p, d, M, wp, ds), ATTN_OK);
        EXPECT(attn_decoder(&dw, NULL, d, NULL, d, 0, NULL, d, 0, NULL, 0), ATTN_OK);
        EXPECT(attn_decoder(&dw, x.p, d, y.p, d, T, y.p + 3, d, M, wp, ds), ATTN_ERR_ALIAS);
        EXPECT(attn_decoder(&dw, x.p, d, y.p, d, T, mem.p, d, M, (void *)(mem.p + 1), ds),
               ATTN_ERR_ALIAS);
        EXPECT(attn_decoder(&dw, x.p, d, y.p, d, T, mem.p, d - 1, M, wp, ds), ATTN_ERR_LD);
        d2 = dw, d2.cross_attn.d_model = 2 * d, d2.cross_attn.heads = 2;
        EXPECT(attn_decoder(&d2, x.p, d, y.p, d, T, mem.p, d, M, wp, ds), ATTN_ERR_SIZE);
        d2 = dw, d2.self_attn.wv = NULL;
        EXPECT(attn_decoder(&d2, x.p, d, y.p, d, T, mem.p, d, M, wp, ds), ATTN_ERR_NULL);
        d2 = dw, d2.eps = INFINITY;
        EXPECT(attn_decoder(&d2, x.p, d, y.p, d, T, mem.p, d, M, wp, ds), ATTN_ERR_ARG);
        d2 = dw, d2.norm = (attn_norm_order)-3;
        EXPECT(attn_decoder(&d2, x.p, d, y.p, d, T, mem.p, d, M, wp, ds), ATTN_ERR_ARG);
    }
#undef EXPECT
    free(ws.raw);
    free(x.buf);
    free(y.buf);
    free(snap.buf);
    free(mem.buf);
}

/* ---- parameter counts (seed E10: BERT-base) ------------------------------------------------ */

static void test_param_counts(void)
{
    attn_param_count c, keep;
    memset(&c, 0, sizeof c);
    check(attn_encoder_param_count(768, 12, 3072, &c) == ATTN_OK, "param count status");
    printf("blocks: BERT-base encoder layer: attention weights %lu (+ %lu biases), FFN %lu, "
           "layernorm %lu, total %lu\n",
           (unsigned long)c.attention_weights, (unsigned long)c.attention_biases,
           (unsigned long)(c.ffn_weights + c.ffn_biases), (unsigned long)c.layernorm,
           (unsigned long)c.total);
    check(c.attention_weights == 2359296, "E10 mha_weights: %lu",
          (unsigned long)c.attention_weights);
    check(c.ffn_weights + c.ffn_biases == 4722432, "E10 ffn: %lu",
          (unsigned long)(c.ffn_weights + c.ffn_biases));
    check(c.layernorm == 3072, "E10 layernorms: %lu", (unsigned long)c.layernorm);
    check(c.attention_biases == 3072 && c.total == 7087872, "BERT-base layer total %lu",
          (unsigned long)c.total);
    check(attn_decoder_param_count(512, 8, 2048, &c) == ATTN_OK &&
              c.attention_weights == 2 * 4 * 512 * 512 && c.attention_biases == 8 * 512 &&
              c.ffn_weights == 2 * 512 * 2048 && c.ffn_biases == 2048 + 512 &&
              c.layernorm == 6 * 512 &&
              c.total == 2u * 4 * 512 * 512 + 8 * 512 + 2u * 512 * 2048 + 2048 + 512 + 6 * 512,
          "decoder param count (Transformer-base)");
    keep = c;
    check(attn_encoder_param_count(768, 12, 3072, NULL) == ATTN_ERR_NULL, "param count NULL");
    check(attn_encoder_param_count(768, 5, 3072, &c) == ATTN_ERR_SIZE, "heads not dividing");
    check(attn_decoder_param_count(0, 1, 3072, &c) == ATTN_ERR_SIZE, "d_model 0");
    check(attn_encoder_param_count(768, 12, 0, &c) == ATTN_ERR_SIZE, "d_ff 0");
    check(attn_encoder_param_count((size_t)1 << (sizeof(size_t) * 4), 1, 1, &c) ==
              ATTN_ERR_OVERFLOW,
          "overflowing count");
    check(memcmp(&c, &keep, sizeof c) == 0, "param count written on error");
}

int main(int argc, char **argv)
{
    unsigned stride = 2003;
    if (argc > 2 && strcmp(argv[1], "--stride") == 0) stride = (unsigned)strtoul(argv[2], NULL, 10);
    if (stride == 0) stride = 1;
    check_begin("blocks");
    pool_cap = (size_t)1 << 21;
    pool = (float *)xmalloc(pool_cap * sizeof(float));
    check_seed(20240607);
    test_activation_accuracy(stride);
    test_activation_special();
    test_activation_shapes();
    test_silu(stride);
    test_glu();
    test_linear();
    test_ffn_mha();
    test_encoder_decoder();
    test_embedding_pe_encoder();
    test_no_denormals();
    test_errors();
    test_param_counts();
    free(pool);
    return check_end("blocks");
}
