/* src/rope.h - rotary position embedding (attn_rope).
 *
 * Per row, the pairs go in chunks of ATTN__ROPE_CHUNK: the chunk's cosines and sines are
 * computed once in double (angle pos * pos_scale * f_k, one rounding to float each), laid
 * out per element in a small stack table, then every head of the row turns by it:
 * y = x * C + partner(x) * S, the partner being the lane swapped within its pair
 * (adjacent pairs: attn__vswap_pairs) or the element half the rotated part away
 * (halves: a second load). The trigonometry is shared by all heads of a row. */

#define ATTN__ROPE_CHUNK 128 /* pairs per table: 2 x 256 floats of stack */

/* Pairs k0 .. k0 + nk of one head at h (adjacent: elements 2k, 2k + 1) by the table: C and
 * S per element, S holding -sin at the first element of a pair and sin at the second */
static void attn__rope_adjacent(float *h, size_t k0, size_t nk, const float *c, const float *s)
{
    float *x = h + 2 * k0;
    const size_t n = 2 * nk;
    size_t i = 0;
#ifdef ATTN__HAVE_VSWAP_PAIRS
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        const attn__v v = attn__vload(x + i);
        attn__vstore(x + i, attn__vfma(v, attn__vload(c + i),
                                       attn__vmul(attn__vswap_pairs(v), attn__vload(s + i))));
    }
    if (i < n) {
        const attn__v v = attn__vload_part(x + i, n - i, 0.0f);
        attn__vstore_part(x + i, attn__vfma(v, attn__vload_part(c + i, n - i, 0.0f),
                                            attn__vmul(attn__vswap_pairs(v),
                                                       attn__vload_part(s + i, n - i, 0.0f))),
                          n - i);
    }
#else
    for (; i < n; i += 2) { /* the same operations, one pair at a time */
        const float a = x[i], b = x[i + 1];
        x[i] = attn__vfma(a, c[i], b * s[i]);
        x[i + 1] = attn__vfma(b, c[i + 1], a * s[i + 1]);
    }
#endif
}

/* Pairs k0 .. k0 + nk of one head at h (halves: elements k and k + half) by the table: C
 * and S per pair */
static void attn__rope_halves(float *h, size_t half, size_t k0, size_t nk, const float *c,
                              const float *s)
{
    float *a = h + k0, *b = h + half + k0;
    size_t i = 0;
    for (; i + ATTN__VW <= nk; i += ATTN__VW) {
        const attn__v va = attn__vload(a + i), vb = attn__vload(b + i);
        const attn__v vc = attn__vload(c + i), vs = attn__vload(s + i);
        attn__vstore(a + i, attn__vfma(va, vc, attn__vmul(attn__vsub(attn__vzero(), vb), vs)));
        attn__vstore(b + i, attn__vfma(vb, vc, attn__vmul(va, vs)));
    }
    if (i < nk) {
        const size_t t = nk - i;
        const attn__v va = attn__vload_part(a + i, t, 0.0f), vb = attn__vload_part(b + i, t, 0.0f);
        const attn__v vc = attn__vload_part(c + i, t, 0.0f), vs = attn__vload_part(s + i, t, 0.0f);
        attn__vstore_part(a + i, attn__vfma(va, vc, attn__vmul(attn__vsub(attn__vzero(), vb), vs)),
                          t);
        attn__vstore_part(b + i, attn__vfma(vb, vc, attn__vmul(va, vs)), t);
    }
}

ATTN_API attn_status attn_rope(const attn_rope_params *p, float *x, size_t ldx, size_t tokens,
                               size_t heads, size_t pos0, const size_t *positions)
{
    float c[2 * ATTN__ROPE_CHUNK], s[2 * ATTN__ROPE_CHUNK];
    double f[ATTN__ROPE_CHUNK];
    attn_status st;
    size_t r, half, t, k0, k, h, width;
    double theta, scale;
    if (!p || (tokens && !x)) return ATTN_ERR_NULL;
    r = p->rot_dim ? p->rot_dim : p->head_dim;
    if (p->head_dim == 0 || heads == 0 || r % 2 || r > p->head_dim) return ATTN_ERR_SIZE;
    if (heads > ATTN__MAX_ELEMS / p->head_dim ||
        (!positions && tokens && pos0 + (tokens - 1) < pos0)) /* a position past SIZE_MAX */
        return ATTN_ERR_OVERFLOW;
    width = heads * p->head_dim;
    if ((st = attn__check_mat(tokens, width, ldx)) != ATTN_OK) return st;
    if (!(p->theta >= 0.0f) || !attn__finite(p->theta) || !(p->pos_scale >= 0.0f) ||
        !attn__finite(p->pos_scale) || (p->pairing != ATTN_ROPE_ADJACENT &&
                                        p->pairing != ATTN_ROPE_HALVES))
        return ATTN_ERR_ARG;
    if (!tokens) return ATTN_OK;
    if ((p->inv_freq && attn__bytes_overlap(x, attn__mat_bytes(tokens, width, ldx), p->inv_freq,
                                            r / 2 * sizeof(float))) ||
        (positions && attn__bytes_overlap(x, attn__mat_bytes(tokens, width, ldx), positions,
                                          tokens * sizeof(size_t))))
        return ATTN_ERR_ALIAS;
    theta = p->theta > 0.0f ? (double)p->theta : 10000.0;
    scale = p->pos_scale > 0.0f ? (double)p->pos_scale : 1.0;
    half = r / 2;
    /* chunks of pairs outer, rows inner: the frequencies (a pow each) once per call */
    for (k0 = 0; k0 < half; k0 += ATTN__ROPE_CHUNK) {
        const size_t nk = half - k0 < ATTN__ROPE_CHUNK ? half - k0 : ATTN__ROPE_CHUNK;
        for (k = 0; k < nk; k++)
            f[k] = p->inv_freq ? (double)p->inv_freq[k0 + k]
                               : pow(theta, -2.0 * (double)(k0 + k) / (double)r);
        for (t = 0; t < tokens; t++) {
            const double pos = (double)(positions ? positions[t] : pos0 + t) * scale;
            float *row = x + t * ldx;
            for (k = 0; k < nk; k++) {
                const float cs = (float)cos(pos * f[k]), sn = (float)sin(pos * f[k]);
                if (p->pairing == ATTN_ROPE_ADJACENT) {
                    c[2 * k] = c[2 * k + 1] = cs;
                    s[2 * k] = -sn;
                    s[2 * k + 1] = sn;
                } else {
                    c[k] = cs;
                    s[k] = sn;
                }
            }
            for (h = 0; h < heads; h++) {
                if (p->pairing == ATTN_ROPE_ADJACENT)
                    attn__rope_adjacent(row + h * p->head_dim, k0, nk, c, s);
                else
                    attn__rope_halves(row + h * p->head_dim, half, k0, nk, c, s);
            }
        }
    }
    return ATTN_OK;
}
