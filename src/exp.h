/* src/exp.h - the vector exp behind softmax, attention and the activations. */

/* The exp: e^x = 2^(k/8) e^r, k = round(8 x / ln2), r = x - k ln2/8 (Cody-Waite, two
 * constants, the first of 13 bits: k ln2/8 and r exact even without a fused fma), |r| <= ln2/16.
 * 2^(k/8) = 2^(j/8) 2^m (k = 8m + j) comes from an 8-entry table by a per-ISA lookup
 * (attn__vlut8_scale: vpermd, tbl, an index) that also adds m to the exponent bits, and
 * e^r = 1 + p(r), p(r) = r (c1 + c2 r + c3 r^2) (minimax for the relative error over
 * |r| <= 0.0434: 2.5e-8), so e^x = fma(s, p, s). The table entries are 2^(j/8) as float
 * bits minus j << 20, so that adding bits(z) << 20, z = 8x/ln2 + 1.5 * 2^23 (the rounding
 * shifter, whose low 12 bits are zero), adds m << 23. Max error 1.4 ulp measured over
 * every float (tests/test_exp.c). No special case costs anything in the common case:
 * for |x| <= ATTN__EXP_FAST (2^m is normal, the result at least FLT_MIN and finite) the
 * fast path is exact as written, and a NaN flows through it (r is NaN, so is fma(s, p, s));
 * a vector with a lane outside takes attn__vexp_slow. */
static const int32_t attn__exp2_8[8] = {1065353216, 1065063874, 1064843248, 1064697559,
                                        1064633587, 1064658730, 1064781053, 1065009351};
#define ATTN__EXP_FAST 87.3f

/* e^(hi + lo), lo tiny relative to 1 (it carries the rounding error of hi; has_lo = 0:
 * none). half: the scale is 2^(j/8) 2^(m-1) where hi > 0, the result doubled, so that
 * arguments up to the overflow threshold (m = 128) stay finite (the slow path's). */
static ATTN__FORCE_INLINE attn__v attn__vexp_core(attn__v hi, attn__v lo, int has_lo, int half)
{
    const attn__v shifter = attn__vset1(12582912.0f); /* 1.5 * 2^23: round to nearest */
    attn__v z = attn__vfma(hi, attn__vset1(11.54156017303466796875f), shifter); /* 8/ln2 */
    attn__v k = attn__vsub(z, shifter), r, p, sc, res;
    r = attn__vfma(k, attn__vset1(-0.086639404296875f), hi); /* 13 bits: exact, fma or not */
    r = attn__vfma(k, attn__vset1(-3.993272912339307e-06f), r);
    if (has_lo) r = attn__vadd(r, lo);
    p = attn__vfma(attn__vset1(1.666429103e-01f), r, attn__vset1(5.000650357e-01f));
    p = attn__vfma(p, r, attn__vset1(1.000000049e+00f));
    p = attn__vmul(p, r);
    if (half) {
        const attn__vm pos = attn__vgt(hi, attn__vzero());
        z = attn__vsub(z, attn__vselect(pos, attn__vset1(8.0f), attn__vzero()));
        sc = attn__vlut8_scale(attn__exp2_8, z);
        res = attn__vfma(sc, p, sc);
        return attn__vmul(res, attn__vselect(pos, attn__vset1(2.0f), attn__vset1(1.0f)));
    }
    sc = attn__vlut8_scale(attn__exp2_8, z);
    return attn__vfma(sc, p, sc);
}

/* Any lane of |hi| (NaN aside) beyond the fast path's range? */
static inline int attn__vexp_out(attn__v hi)
{
    return attn__vany_neg(attn__vsub(attn__vset1(ATTN__EXP_FAST), attn__vfabs(hi)));
}

/* Every lane, out of range included: hi above the overflow threshold gives +inf, below
 * ln(FLT_MIN) 0, a NaN NaN. With flush, results below FLT_MIN (the few arguments just
 * above ln(FLT_MIN) whose result rounds under it) are 0; without, the caller flushes. */
static attn__v attn__vexp_slow(attn__v hi, attn__v lo, int has_lo, int flush)
{
    attn__v res = attn__vexp_core(hi, lo, has_lo, 1);
    if (flush) res = attn__vselect(attn__vlt(res, attn__vset1(FLT_MIN)), attn__vzero(), res);
    res = attn__vselect(attn__vlt(hi, attn__vset1(-87.33654475f)), attn__vzero(), res);
    /* the largest x with e^x < FLT_MAX */
    return attn__vselect(attn__vgt(hi, attn__vset1(88.72283172607421875f)), attn__vset1(INFINITY),
                         res);
}

/* exp(hi + lo) for |lo| tiny relative to 1 (lo carries the rounding error of hi), with
 * the special cases above; flush as for attn__vexp_slow (the fast path's results are all
 * at least FLT_MIN). */
static inline attn__v attn__vexp_lo(attn__v hi, attn__v lo, int flush)
{
    if (!attn__vexp_out(hi)) return attn__vexp_core(hi, lo, 1, 0);
    return attn__vexp_slow(hi, lo, 1, flush);
}

#ifdef ATTN_USE_SLEEF
/* SLEEF's 1-ulp exp for the ISA, then the library's guarantee: below FLT_MIN is 0 */
static inline attn__v attn__vexp_sleef(attn__v x)
{
    attn__v r = attn__vsleef_exp(x);
    return attn__vselect(attn__vlt(r, attn__vset1(FLT_MIN)), attn__vzero(), r);
}
#endif

static inline attn__v attn__vexp(attn__v x)
{
#ifdef ATTN_USE_SLEEF
    return attn__vexp_sleef(x);
#else
    if (!attn__vexp_out(x)) return attn__vexp_core(x, x, 0, 0);
    return attn__vexp_slow(x, x, 0, 1);
#endif
}

static float attn__expf(float x)
{
    float t[ATTN__VW];
    attn__vstore(t, attn__vexp(attn__vset1(x)));
    return t[0];
}
