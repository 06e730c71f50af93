/* ---- transformer blocks ---------------------------------------------------------------
 * Activations over the vector layer, linear layers around attn_matmul, and the blocks
 * composed from the public kernels. Nothing here allocates: every buffer is a slice of the
 * caller's workspace, carved in 64-byte aligned segments. */

static inline attn__v attn__vabs(attn__v v) { return attn__vmax(v, attn__vsub(attn__vzero(), v)); }

/* |v| < FLT_MIN -> 0 (NaN stays) */
static inline attn__v attn__vflush(attn__v v)
{
    return attn__vselect(attn__vlt(attn__vabs(v), attn__vset1(FLT_MIN)), attn__vzero(), v);
}

/* GELU, erf form: x Phi(x), Phi(x) = 1 - E for x > 0 and E for x <= 0, E = erfc(z) / 2,
 * z = |x| / sqrt 2. erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z/2), P Numerical Recipes'
 * Chebyshev fit (fractional error < 1.2e-7 for every z >= 0). z^2 = x^2 / 2 is carried
 * as hi + lo (exact), and -z^2 + P as a 2Sum, so the exp's argument has no rounding error
 * worth an ulp of the result even where it reaches -87. */
static inline attn__v attn__vgelu_erf(attn__v x)
{
    const attn__v half = attn__vset1(0.5f), one = attn__vset1(1.0f), zero = attn__vzero();
    attn__v ax = attn__vabs(x), z, t, p, hi, lo, a, s, bb, err, e, big_e, y;
    z = attn__vmul(ax, attn__vset1(0.707106781186547524f));
    t = attn__vdiv(one, attn__vfma(z, half, one));
    p = attn__vset1(0.17087277f);
    p = attn__vfma(p, t, attn__vset1(-0.82215223f));
    p = attn__vfma(p, t, attn__vset1(1.48851587f));
    p = attn__vfma(p, t, attn__vset1(-1.13520398f));
    p = attn__vfma(p, t, attn__vset1(0.27886807f));
    p = attn__vfma(p, t, attn__vset1(-0.18628806f));
    p = attn__vfma(p, t, attn__vset1(0.09678418f));
    p = attn__vfma(p, t, attn__vset1(0.37409196f));
    p = attn__vfma(p, t, attn__vset1(1.00002368f));
    p = attn__vfma(p, t, attn__vset1(-1.26551223f));
    hi = attn__vmul(x, x);
    lo = attn__vfma_exact(x, x, attn__vsub(zero, hi)); /* x^2 = hi + lo exactly */
    a = attn__vmul(hi, attn__vset1(-0.5f));             /* exact */
    s = attn__vadd(p, a);                               /* 2Sum: s + err = p + a */
    bb = attn__vsub(s, p);
    err = attn__vadd(attn__vsub(p, attn__vsub(s, bb)), attn__vsub(a, bb));
    /* e = exp(s + err - lo/2) as h^2, h = exp of half the argument (halving is exact), so
     * that an exp below FLT_MIN (argument below -87) still gives a normal x E */
    e = attn__vexp_lo(attn__vmul(s, half),
                      attn__vmul(attn__vfma(lo, attn__vset1(-0.5f), err), half), 1);
    big_e = attn__vmul(attn__vmul(attn__vmul(t, e), half), e); /* E = erfc(z) / 2 */
    /* x > 0: x (1 - E); x <= 0: x E (0 below -20, where -inf * 0 would be NaN) */
    y = attn__vselect(attn__vgt(x, zero), attn__vmul(x, attn__vsub(one, big_e)),
                      attn__vmul(attn__vmul(attn__vmul(x, half), attn__vmul(t, e)), e));
    y = attn__vselect(attn__vlt(x, attn__vset1(-20.0f)), zero, y);
    return attn__vflush(y);
}

/* GELU, tanh form: x/2 (1 + tanh(u)) = x sigmoid(2u) = x * (u >= 0 ? 1 : w) / (1 + w),
 * w = exp(-|2u|) in (0, 1]: no overflow, no cancellation. */
static inline attn__v attn__vgelu_tanh(attn__v x)
{
    const attn__v one = attn__vset1(1.0f), zero = attn__vzero();
    attn__v x3 = attn__vmul(attn__vmul(x, x), x);
    attn__v u2 = attn__vmul(attn__vfma(x3, attn__vset1(0.044715f), x),
                            attn__vset1(1.59576912160573071f)); /* 2u */
    /* w = h^2, h = exp(-|u|), so that x w stays normal where w alone would underflow */
    attn__v h = attn__vexp(attn__vmul(attn__vabs(u2), attn__vset1(-0.5f)));
    attn__v num = attn__vselect(attn__vlt(u2, zero), attn__vmul(attn__vmul(x, h), h), x);
    attn__v y = attn__vdiv(num, attn__vfma(h, h, one));
    y = attn__vselect(attn__vlt(x, attn__vset1(-20.0f)), zero, y);
    return attn__vflush(y);
}

/* SiLU: x sigmoid(x) = x * (x >= 0 ? 1 : w) / (1 + w), w = exp(-|x|) in (0, 1]: no overflow,
 * no cancellation; w = h^2, h = exp(-|x| / 2), so that x w stays normal where w would not */
static inline attn__v attn__vsilu(attn__v x)
{
    const attn__v one = attn__vset1(1.0f), zero = attn__vzero();
    attn__v h = attn__vexp(attn__vmul(attn__vabs(x), attn__vset1(-0.5f)));
    attn__v num = attn__vselect(attn__vlt(x, zero), attn__vmul(attn__vmul(x, h), h), x);
    attn__v y = attn__vdiv(num, attn__vfma(h, h, one));
    y = attn__vselect(attn__vlt(x, attn__vset1(-200.0f)), zero, y); /* -inf * 0 */
    return attn__vflush(y);
}

static inline attn__v attn__vact(attn_act act, attn__v v)
{
    switch (act) {
    case ATTN_ACT_RELU: return attn__vflush(attn__vmax(attn__vzero(), v)); /* NaN stays NaN */
    case ATTN_ACT_GELU: return attn__vgelu_erf(v);
    case ATTN_ACT_GELU_TANH: return attn__vgelu_tanh(v);
    case ATTN_ACT_SILU: return attn__vsilu(v);
    default: return attn__vflush(v);
    }
}

/* y[0..n) = act(x + bias) (bias may be NULL) */
static void attn__act_row(attn_act act, const float *x, const float *bias, float *y, size_t n)
{
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        attn__v v = attn__vload(x + i);
        if (bias) v = attn__vadd(v, attn__vload(bias + i));
        attn__vstore(y + i, attn__vact(act, v));
    }
    if (i < n) {
        attn__v v = attn__vload_part(x + i, n - i, 0.0f);
        if (bias) v = attn__vadd(v, attn__vload_part(bias + i, n - i, 0.0f));
        attn__vstore_part(y + i, attn__vact(act, v), n - i);
    }
}

static int attn__act_valid(attn_act act)
{
    return act == ATTN_ACT_NONE || act == ATTN_ACT_RELU || act == ATTN_ACT_GELU ||
           act == ATTN_ACT_GELU_TANH || act == ATTN_ACT_SILU;
}

ATTN_API attn_status attn_activation(attn_act act, const float *x, size_t ldx, float *y,
                                     size_t ldy, size_t rows, size_t n)
{
    attn_status st;
    size_t r;
    if ((st = attn__rows_check(x, ldx, y, ldy, rows, n, 1)) != ATTN_OK) return st;
    if (!attn__act_valid(act)) return ATTN_ERR_ARG;
    for (r = 0; r < rows; r++) attn__act_row(act, x + r * ldx, NULL, y + r * ldy, n);
    return ATTN_OK;
}

/* y[0..n) = act(g) * u, the product flushed below FLT_MIN */
static void attn__glu_row(attn_act act, const float *g, const float *u, float *y, size_t n)
{
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW)
        attn__vstore(y + i, attn__vflush(attn__vmul(attn__vact(act, attn__vload(g + i)),
                                                    attn__vload(u + i))));
    if (i < n)
        attn__vstore_part(y + i, attn__vflush(attn__vmul(
                                     attn__vact(act, attn__vload_part(g + i, n - i, 0.0f)),
                                     attn__vload_part(u + i, n - i, 0.0f))), n - i);
}

ATTN_API attn_status attn_glu(attn_act act, const float *gate, size_t ldg, const float *up,
                              size_t ldu, float *y, size_t ldy, size_t rows, size_t n)
{
    attn_status st;
    size_t r;
    if (rows && !up) return ATTN_ERR_NULL;
    if ((st = attn__rows_check(gate, ldg, y, ldy, rows, n, 1)) != ATTN_OK) return st;
    if ((st = attn__check_mat(rows, n, ldu)) != ATTN_OK) return st;
    if (attn__mat_alias(y, ldy, up, ldu, rows, n, 1)) return ATTN_ERR_ALIAS;
    if (!attn__act_valid(act)) return ATTN_ERR_ARG;
    for (r = 0; r < rows; r++) attn__glu_row(act, gate + r * ldg, up + r * ldu, y + r * ldy, n);
    return ATTN_OK;
}

/* rows x n of y: values below FLT_MIN in magnitude -> 0 */
static void attn__flush_rows(float *y, size_t ldy, size_t rows, size_t n)
{
    size_t r;
    for (r = 0; r < rows; r++) attn__act_row(ATTN_ACT_NONE, y + r * ldy, NULL, y + r * ldy, n);
}
