/* test_attention16: attn_attention with K and V stored in f16, bf16 and q8_0 (kv_type), and
 * the KV cache in those types (attn_kv_cache_init_type, append, attn_attention_init_kv).
 *
 * Each case draws float K and V, rounds them to the 16-bit type with attn_convert (the
 * padding between rows holds NaN, rounded to a 16-bit NaN) or quantizes them to q8_0 blocks
 * (a block holding NaN or inf stored as a NaN block, as the cache does) and widens them back
 * into float tensors of the same layout. Then:
 *  - the stored call must give O bit for bit equal to the f32 call on the widened values
 *    (the kernel widens each element exactly and then does the f32 path's arithmetic; two
 *    NaNs count as equal: their sign and payload are the compiler's choice), with O's
 *    padding and guards untouched, and the scores output likewise;
 *  - O must be within test_attention's tolerance of the double-precision reference
 *    computed from the rounded values (ref_linalg.h): per element
 *      |O - Oref| <= vmax * (2e-5 + expm1(2 * ds)) + 1e-6
 *    (vmax the largest |V| the row sees, ds the bound on the row's score error; see
 *    test_attention.c for why), a row that sees no key exactly 0;
 *  - the call as work items in reverse order must give the same bits.
 * The error against the reference on the values before rounding is printed (not tested: it
 * is the rounding of K and V, about 2^-11 (f16) or 2^-8 (bf16) relative per element, q8_0
 * up to half a step of max|block| / 127).
 * q8_0 cases: head dims in {32, 64, 96, 128, 160, 256}, every stride and padding a multiple
 * of 32 elements, the stored K and V at odd byte addresses in half of the cases.
 *
 * Sweeps as test_attention's: q_len x kv_len over {1,2,3,7,8,9,15,16,17,31,33,64,65,70}
 * (both types), head_dim x v_head_dim over {1,3,8,64,80,128} and 256 (every tail of
 * every vector width), decode q_len 1..4 and prefill of 12, 13, 192, 193, 200 rows, MHA,
 * GQA (the decode group path: 8 and 32 query heads on 1, 2 and 8 KV heads) and MQA,
 * dense BHLD and BLHD and padded layouts (sequence-first too), pointers one element
 * (2 bytes) past an aligned address, causal bottom-right and offsets (negative, past
 * length), float and bool masks, fully masked rows, key_lengths (0 included), softcap,
 * explicit and negative scales, NaN / inf in masked keys' K and V rows, a NaN query row,
 * scores in each mode. The KV cache: contents after appends in both layouts equal
 * attn_convert of the rows, attention through it, capacity and alias errors with the
 * 16-bit byte sizes, n = 0, a bad type. */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"
#include "ref_linalg.h"
#include <stdint.h>

#define GUARD 24 /* elements of guard before and after every tensor */

static const float O_GUARD = -31337.5f;
static double max_rel_err[4], max_tol_ratio[4], max_raw_err[4]; /* per kv type */
static long n_calls[4];

static const char *ty_name(attn_dtype t)
{
    return t == ATTN_F16 ? "f16" : t == ATTN_BF16 ? "bf16" : "q8_0";
}

/* n floats (a multiple of 32) to q8_0 blocks as the KV cache stores them: attn_convert's
 * bits, a block it refuses (NaN, inf, scale overflow) a NaN block (scale NaN, q 0) */
static void q8_store(unsigned char *dst, const float *src, size_t n)
{
    size_t b;
    for (b = 0; b < n; b += 32, dst += 34)
        if (attn_convert(ATTN_Q8_0, dst, ATTN_F32, src + b, 32) != ATTN_OK) {
            memset(dst, 0, 34);
            dst[1] = 0x7E;
        }
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static int same_or_nan(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (a != a && b != b);
}

/* Layouts of a [B][H][L][D] tensor: dense BHLD, dense BLHD, padded BHLD, padded BLHD,
 * padded sequence-first */
static void lay_strides(int lay, size_t B, size_t H, size_t L, size_t D, size_t u, size_t *sb,
                        size_t *sh, size_t *sl)
{ /* paddings in units of u elements (32 for q8_0: strides in whole blocks) */
    switch (lay) {
    case 0: *sl = D; *sh = L * D; *sb = H * L * D; break;
    case 1: *sh = D; *sl = H * D; *sb = L * H * D; break;
    case 2: *sl = D + u; *sh = L * (D + u) + 2 * u; *sb = H * *sh + 7 * u; break;
    case 3: *sh = D + 2 * u; *sl = H * (D + 2 * u) + 3 * u; *sb = L * *sl + 5 * u; break;
    default: *sh = D + u; *sb = H * (D + u) + u; *sl = B * *sb + 3 * u; break;
    }
}

typedef struct tens {
    float *buf, *p;  /* floats (the widened values) */
    unsigned char *h16;  /* the stored K or V (16 bits or q8_0), the same element layout */
    void *p16;
    size_t total, B, H, L, D, sb, sh, sl;
} tens;

/* q8: every size a multiple of 32 elements (off then offsets the stored bytes instead) */
static void tens_alloc(tens *t, int lay, size_t B, size_t H, size_t L, size_t D, int off,
                       float fill, int q8)
{
    const size_t g = q8 ? 32 : GUARD, o = q8 ? 0 : (size_t)off;
    size_t i;
    t->B = B, t->H = H, t->L = L, t->D = D;
    lay_strides(lay, B, H, L, D, q8 ? 32 : 1, &t->sb, &t->sh, &t->sl);
    t->total = (B - 1) * t->sb + (H - 1) * t->sh + (L - 1) * t->sl + D + o + 2 * g;
    t->buf = (float *)xmalloc(t->total * sizeof(float));
    t->p = t->buf + g + o;
    t->h16 = t->p16 = NULL;
    for (i = 0; i < t->total; i++) t->buf[i] = fill;
}

static float *tens_at(const tens *t, size_t b, size_t h, size_t l)
{
    return t->p + b * t->sb + h * t->sh + l * t->sl;
}

static void tens_fill(tens *t, float lo, float hi)
{
    size_t b, h, l, c;
    for (b = 0; b < t->B; b++)
        for (h = 0; h < t->H; h++)
            for (l = 0; l < t->L; l++)
                for (c = 0; c < t->D; c++) tens_at(t, b, h, l)[c] = check_uniform(lo, hi);
}

/* The whole buffer (padding included) to type ty (q8_0: at byte offset off) and back into
 * buf */
static void tens_round(tens *t, attn_dtype ty, int off)
{
    const size_t o = ty == ATTN_Q8_0 && off ? 1 : 0;
    unsigned char *h;
    t->h16 = (unsigned char *)xmalloc(attn_dtype_bytes(ty, t->total) + o);
    h = t->h16 + o;
    t->p16 = h + attn_dtype_bytes(ty, (size_t)(t->p - t->buf));
    if (ty == ATTN_Q8_0) q8_store(h, t->buf, t->total);
    else if (attn_convert(ty, h, ATTN_F32, t->buf, t->total) != ATTN_OK) t->total = 0;
    if (!t->total || attn_convert(ATTN_F32, t->buf, ty, h, t->total) != ATTN_OK) {
        fprintf(stderr, "attn_convert failed\n");
        exit(2);
    }
}

static void tens_free(tens *t)
{
    free(t->buf);
    free(t->h16);
}

typedef struct case16 {
    attn_dtype ty;
    size_t B, H, KVH, Lq, Lk, d, dv;
    int lay;   /* 0..4 the same layout for all, 5 mixed */
    int off;   /* tensors one element past an aligned address */
    float scale, softcap, qk;
    attn_causal causal;
    ptrdiff_t coff;
    int fmask;  /* 0 none, 1 full (padded rows), 2 broadcast over b and h, 3 per batch key pad */
    int bmask;  /* the same kinds, bool */
    int klen;   /* 0 none, 1 half, 2 zero / one, 3 random */
    int kill;   /* full masks: a row every key of which is masked */
    int poison; /* NaN / inf in the K and V rows of keys no query of their group sees */
    int nan_q;
    int scores; /* 1 + attn_scores */
} case16;

static case16 c16(attn_dtype ty, size_t B, size_t H, size_t KVH, size_t Lq, size_t Lk,
                  size_t d, size_t dv)
{
    case16 t;
    memset(&t, 0, sizeof t);
    t.ty = ty, t.B = B, t.H = H, t.KVH = KVH, t.Lq = Lq, t.Lk = Lk, t.d = d, t.dv = dv;
    t.qk = 1.0f;
    return t;
}

static void mask_strides(int kind, size_t H, size_t Lq, size_t Lk, size_t *sb, size_t *sh,
                         size_t *sq)
{
    switch (kind) {
    case 1: *sq = Lk + 3; *sh = Lq * *sq; *sb = H * *sh; break;
    case 2: *sb = 0; *sh = 0; *sq = Lk; break;
    default: *sb = Lk; *sh = 0; *sq = 0; break;
    }
}

static size_t mask_extent(size_t B, size_t H, size_t Lq, size_t Lk, size_t sb, size_t sh,
                          size_t sq)
{
    return (B - 1) * sb + (H - 1) * sh + (Lq - 1) * sq + Lk;
}

/* NaN-tolerant bitwise comparison of two float buffers; returns the first differing index
 * or n */
static size_t first_diff(const float *a, const float *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!same_or_nan(a[i], b[i])) return i;
    return n;
}

/* Where the CPU has AVX512-VNNI (AVX-512 builds) or AVX-VNNI (AVX2 builds), decode over a
 * q8_0 K rounds each query row to q8_0 first (src/attention.h, attn__qk8_quads) */
static int qk8_active(void)
{
#ifdef ATTN__HAVE_QK8
    return attn__qk8_cpu();
#else
    return 0;
#endif
}

/* A copy of Q's buffer with the rows the kernel rounds (those of the rows path: every row
 * when scores are asked for, else the rows of a query tile shorter than ATTN__FUSED_MIN)
 * rounded to q8_0 and back, each row whose blocks all quantize (finite, max|q| / 127
 * within binary16's range) */
static float *q8_queries(const attn_attention_params *p, const tens *Q, int scores)
{
    float *qh = (float *)xmalloc(Q->total * sizeof(float));
    size_t b, h, i, c;
    memcpy(qh, Q->buf, Q->total * sizeof(float));
    for (b = 0; b < p->batch; b++)
        for (h = 0; h < p->heads; h++)
            for (i = 0; i < p->q_len; i++) {
                const size_t q0 = i / ATTN__TQ * ATTN__TQ;
                const size_t tq = p->q_len - q0 < ATTN__TQ ? p->q_len - q0 : ATTN__TQ;
                float *row = qh + (tens_at(Q, b, h, i) - Q->buf);
                unsigned char blk[34];
                int good = 1;
                if (!scores && tq >= ATTN__FUSED_MIN) continue;
                for (c = 0; c < p->head_dim && good; c += 32) {
                    float mx = 0.0f, dq;
                    uint16_t hd;
                    size_t e;
                    for (e = 0; e < 32; e++) {
                        good &= isfinite(row[c + e]) != 0;
                        if (fabsf(row[c + e]) > mx) mx = fabsf(row[c + e]);
                    }
                    dq = mx / 127.0f;
                    attn_convert(ATTN_F16, &hd, ATTN_F32, &dq, 1);
                    good &= (hd & 0x7C00u) != 0x7C00u;
                }
                for (c = 0; c < p->head_dim && good; c += 32) {
                    attn_convert(ATTN_Q8_0, blk, ATTN_F32, row + c, 32);
                    attn_convert(ATTN_F32, row + c, ATTN_Q8_0, blk, 32);
                }
            }
    return qh;
}

static void run16(const char *group, const case16 *t)
{
    static const int lays[5][4] = {{2, 3, 4, 1}, {4, 0, 3, 2}, {3, 4, 2, 0}, {1, 2, 0, 4},
                                   {0, 1, 2, 3}};
    const size_t B = t->B, H = t->H, KVH = t->KVH, Lq = t->Lq, Lk = t->Lk, d = t->d, dv = t->dv;
    const size_t G = H / KVH, nrows = B * H * Lq, tyi = (size_t)t->ty;
    const int off = t->off ? 1 : 0, q8 = t->ty == ATTN_Q8_0;
    int lq, lk, lv, lo;
    tens Q, K, V, O, O16;
    attn_attention_params p, p16, praw;
    float *fm = NULL, *sc32 = NULL, *sc16 = NULL, *kraw, *vraw;
    uint8_t *bm = NULL;
    int64_t klen[4];
    double *ref, *vmax, *dsc, *rref, *rvmax, *rdsc;
    size_t *nvis, *rnvis, wsz, i, b, h, j, c, bad, nsc = 0;
    unsigned char *ws = NULL;
    float *qhat = NULL;
    attn_status st, st16;
    char desc[360];

    snprintf(desc, sizeof desc,
             "[%s %s] B=%zu H=%zu KVH=%zu Lq=%zu Lk=%zu d=%zu dv=%zu lay=%d off=%d scale=%g "
             "softcap=%g causal=%d(%td) fmask=%d bmask=%d klen=%d kill=%d poison=%d nanq=%d "
             "scores=%d",
             group, ty_name(t->ty), B, H, KVH, Lq, Lk, d, dv, t->lay, off,
             (double)t->scale, (double)t->softcap, (int)t->causal, t->coff, t->fmask, t->bmask,
             t->klen, t->kill, t->poison, t->nan_q, t->scores);
    if (t->lay < 5) lq = lk = lv = lo = t->lay;
    else {
        const int *l = lays[(Lq + Lk) % 5];
        lq = l[0], lk = l[1], lv = l[2], lo = l[3];
    }
    tens_alloc(&Q, lq, B, H, Lq, d, off, NAN, q8);
    tens_alloc(&K, lk, B, KVH, Lk, d, off, NAN, q8);
    tens_alloc(&V, lv, B, KVH, Lk, dv, off, NAN, q8);
    tens_alloc(&O, lo, B, H, Lq, dv, off, O_GUARD, q8);
    tens_alloc(&O16, lo, B, H, Lq, dv, off, O_GUARD, q8);
    tens_fill(&Q, -t->qk, t->qk);
    tens_fill(&K, -t->qk, t->qk);
    tens_fill(&V, -1.0f, 1.0f);

    p = attn_attention_init(B, H, KVH, Lq, Lk, d, dv, Q.p, K.p, V.p, O.p,
                            t->lay == 1 ? ATTN_LAYOUT_BLHD : ATTN_LAYOUT_BHLD);
    p.q_sb = Q.sb, p.q_sh = Q.sh, p.q_sl = Q.sl;
    p.k_sb = K.sb, p.k_sh = K.sh, p.k_sl = K.sl;
    p.v_sb = V.sb, p.v_sh = V.sh, p.v_sl = V.sl;
    p.o_sb = O.sb, p.o_sh = O.sh, p.o_sl = O.sl;
    p.scale = t->scale;
    p.softcap = t->softcap;
    p.causal = t->causal;
    p.causal_offset = t->coff;
    if (t->fmask) {
        size_t n;
        mask_strides(t->fmask, H, Lq, Lk, &p.mask_sb, &p.mask_sh, &p.mask_sq);
        n = mask_extent(B, H, Lq, Lk, p.mask_sb, p.mask_sh, p.mask_sq);
        fm = (float *)xmalloc(n * sizeof(float));
        for (i = 0; i < n; i++)
            fm[i] = check_uniform(0.0f, 1.0f) < 0.15f ? -INFINITY : check_uniform(-3.0f, 1.0f);
        if (t->kill && t->fmask == 1)
            for (j = 0; j < Lk; j++) fm[(Lq > 2 ? 2 : Lq - 1) * p.mask_sq + j] = -INFINITY;
        p.mask = fm;
    }
    if (t->bmask) {
        size_t n;
        mask_strides(t->bmask, H, Lq, Lk, &p.bmask_sb, &p.bmask_sh, &p.bmask_sq);
        n = mask_extent(B, H, Lq, Lk, p.bmask_sb, p.bmask_sh, p.bmask_sq);
        bm = (uint8_t *)xmalloc(n);
        for (i = 0; i < n; i++)
            bm[i] = check_uniform(0.0f, 1.0f) < 0.15f ? 0 : (uint8_t)(1 + i % 200);
        if (t->kill && t->bmask == 1)
            for (j = 0; j < Lk; j++) bm[(B - 1) * p.bmask_sb + (Lq - 1) * p.bmask_sq + j] = 0;
        p.bool_mask = bm;
    }
    if (t->klen) {
        for (b = 0; b < B; b++) {
            switch (t->klen) {
            case 1: klen[b] = (int64_t)(b % 2 ? (Lk + 1) / 2 : Lk); break;
            case 2: klen[b] = (int64_t)(b % 2 ? (Lk > 1 ? 1 : 0) : 0); break;
            default: klen[b] = (int64_t)((size_t)check_uniform(0.0f, (float)Lk + 0.99f)); break;
            }
            if (klen[b] > (int64_t)Lk) klen[b] = (int64_t)Lk;
        }
        p.key_lengths = klen;
    }
    if (t->poison)
        for (b = 0; b < B; b++)
            for (h = 0; h < KVH; h++)
                for (j = 0; j < Lk; j++) {
                    size_t hh;
                    int seen = 0;
                    for (hh = h * G; hh < (h + 1) * G && !seen; hh++)
                        for (i = 0; i < Lq && !seen; i++) seen = ref_attn_visible(&p, b, hh, i, j);
                    if (seen) continue;
                    for (c = 0; c < d; c++)
                        tens_at(&K, b, h, j)[c] = j % 3 == 0 ? NAN : j % 3 == 1 ? INFINITY
                                                                                : -INFINITY;
                    for (c = 0; c < dv; c++)
                        tens_at(&V, b, h, j)[c] = j % 3 == 0 ? INFINITY : j % 3 == 1 ? NAN
                                                                                     : -INFINITY;
                }
    if (t->nan_q) tens_at(&Q, B - 1, H - 1, Lq / 2)[d / 2] = NAN;

    /* the reference on the values before rounding (printed only), then round */
    kraw = (float *)xmalloc(K.total * sizeof(float));
    vraw = (float *)xmalloc(V.total * sizeof(float));
    memcpy(kraw, K.buf, K.total * sizeof(float));
    memcpy(vraw, V.buf, V.total * sizeof(float));
    praw = p;
    praw.k = kraw + (K.p - K.buf), praw.v = vraw + (V.p - V.buf);
    rref = (double *)xmalloc(nrows * dv * sizeof(double));
    rvmax = (double *)xmalloc(nrows * dv * sizeof(double));
    rdsc = (double *)xmalloc(nrows * sizeof(double));
    rnvis = (size_t *)xmalloc(nrows * sizeof(size_t));
    ref_attention(&praw, rref, rvmax, rdsc, rnvis);
    qhat = q8 && qk8_active() ? q8_queries(&p, &Q, t->scores != 0) : NULL;
    if (qhat) p.q = qhat + (Q.p - Q.buf);
    tens_round(&K, t->ty, off);
    tens_round(&V, t->ty, off);
    ref = (double *)xmalloc(nrows * dv * sizeof(double));
    vmax = (double *)xmalloc(nrows * dv * sizeof(double));
    dsc = (double *)xmalloc(nrows * sizeof(double));
    nvis = (size_t *)xmalloc(nrows * sizeof(size_t));
    ref_attention(&p, ref, vmax, dsc, nvis);

    p16 = p;
    p16.q = Q.p; /* the rounded queries are the kernel's own doing */
    p16.k = K.p16, p16.v = V.p16, p16.kv_type = t->ty, p16.o = O16.p;
    if (t->scores) {
        p.scores_mode = p16.scores_mode = (attn_scores)(t->scores - 1);
        p.scores_sq = p16.scores_sq = Lk + 1;
        p.scores_sh = p16.scores_sh = Lq * (Lk + 1);
        p.scores_sb = p16.scores_sb = H * Lq * (Lk + 1);
        nsc = B * H * Lq * (Lk + 1);
        sc32 = (float *)xmalloc(nsc * sizeof(float));
        sc16 = (float *)xmalloc(nsc * sizeof(float));
        for (i = 0; i < nsc; i++) sc32[i] = sc16[i] = O_GUARD;
        p.scores = sc32, p16.scores = sc16;
    }
    wsz = attn_attention_workspace_size(&p16);
    check(wsz == attn_attention_workspace_size(&p), "%s: workspace size depends on kv_type", desc);
    ws = (unsigned char *)xmalloc(wsz);
    st = attn_attention(&p, ws, wsz);
    st16 = attn_attention(&p16, ws, wsz);
    n_calls[tyi]++;
    if (!check(st == ATTN_OK && st16 == ATTN_OK, "%s: status f32 %s, 16-bit %s", desc,
               attn_status_string(st), attn_status_string(st16)))
        goto done;
    bad = qhat ? O.total : first_diff(O.buf, O16.buf, O.total); /* qhat: integer products */
    check(bad == O.total, "%s: O (buffer index %zu) %.9g, the f32 path on the rounded "
                                "values %.9g",
                desc, bad, bad < O.total ? (double)O16.buf[bad] : 0.0,
                bad < O.total ? (double)O.buf[bad] : 0.0);
    if (t->scores && !qhat) {
        bad = first_diff(sc32, sc16, nsc);
        check(bad == nsc, "%s: scores differ from the f32 path's at %zu", desc, bad);
    } else if (t->scores) { /* integer products: the f32 path's logits to within its rounding */
        const double sc = t->scale != 0.0f ? fabs((double)t->scale) : 1.0 / sqrt((double)d);
        const double tl = 4e-7 * (double)d * t->qk * t->qk * sc + 1e-6;
        const double tol = t->scores - 1 == ATTN_SCORES_PROBS ? 4.0 * tl : tl;
        for (i = 0; i < nsc; i++)
            if (!same_or_nan(sc32[i], sc16[i]) && !(fabs(sc32[i] - sc16[i]) <= tol)) break;
        check(i == nsc, "%s: scores[%zu] %.9g, the f32 path on the rounded queries %.9g (tol %.3g)",
              desc, i, i < nsc ? (double)sc16[i] : 0.0, i < nsc ? (double)sc32[i] : 0.0, tol);
    }
    for (b = 0; b < B; b++)
        for (h = 0; h < H; h++)
            for (i = 0; i < Lq; i++) {
                const size_t row = (b * H + h) * Lq + i;
                const float *orow = tens_at(&O16, b, h, i);
                for (c = 0; c < dv; c++) {
                    const double got = orow[c], want = ref[row * dv + c], vm = vmax[row * dv + c];
                    const double tol = nvis[row] ? vm * (2e-5 + expm1(2.0 * dsc[row])) + 1e-6 : 0;
                    const double err = fabs(got - want), raw = fabs(got - rref[row * dv + c]);
                    if (!check_close(got, want, tol, 0.0)) {
                        check(0, "%s: O[%zu][%zu][%zu][%zu] = %.9g, want %.9g (tol %.3g)", desc,
                              b, h, i, c, got, want, tol);
                        b = B, h = H, i = Lq;
                        break;
                    }
                    if (isnan(want) || vm <= 0) continue;
                    if (err / vm > max_rel_err[tyi]) max_rel_err[tyi] = err / vm;
                    if (tol > 0 && err / tol > max_tol_ratio[tyi]) max_tol_ratio[tyi] = err / tol;
                    /* inputs in [-1, 1); q8_0's step is max|block| / 127: relative to 1 */
                    if (t->qk == 1.0f && rvmax[row * dv + c] > 0) {
                        const double r = raw / (q8 ? 1.0 : rvmax[row * dv + c]);
                        if (r > max_raw_err[tyi]) max_raw_err[tyi] = r;
                    }
                }
            }
    { /* work items in reverse order: the same bits */
        const size_t nt = attn_attention_tasks(&p16);
        size_t k;
        attn_status worst = ATTN_OK;
        float *o2 = (float *)xmalloc(O16.total * sizeof(float));
        for (i = 0; i < O16.total; i++) o2[i] = O_GUARD;
        p16.o = o2 + (O16.p - O16.buf);
        for (k = nt; k-- > 0;)
            if ((st = attn_attention_task(&p16, k, ws, wsz)) != ATTN_OK) worst = st;
        bad = first_diff(o2, O16.buf, O16.total);
        check(worst == ATTN_OK && bad == O16.total,
                    "%s: work items differ from the whole call at %zu (status %s)", desc, bad,
                    attn_status_string(worst));
        free(o2);
    }
done:
    free(ws);
    tens_free(&Q), tens_free(&K), tens_free(&V), tens_free(&O), tens_free(&O16);
    free(fm), free(bm), free(sc32), free(sc16), free(kraw), free(vraw);
    free(ref), free(vmax), free(dsc), free(nvis), free(rref), free(rvmax), free(rdsc), free(rnvis);
    free(qhat);
}

static const size_t LSET[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 70};
static const size_t HCFG[][2] = {{1, 1}, {2, 2}, {2, 1}, {3, 1}, {4, 4}, {4, 2}, {4, 1}, {8, 1}};
static const size_t DSET[] = {1, 3, 8, 64, 80, 128, 256};
static const size_t D8SET[] = {32, 64, 96, 128, 160, 256}; /* q8_0: whole blocks */

/* the knobs test_attention cycles through, from an index */
static void knobs(case16 *t, long idx)
{
    t->lay = (int)(idx % 6);
    t->off = (int)(idx / 2 % 2);
    switch (idx % 7) {
    case 0: t->causal = ATTN_CAUSAL_NONE; break;
    case 1: case 5: t->causal = ATTN_CAUSAL_BOTTOM_RIGHT; break;
    case 2: t->causal = ATTN_CAUSAL_OFFSET; t->coff = 0; break;
    case 3: t->causal = ATTN_CAUSAL_OFFSET; t->coff = -3; break;
    case 4: t->causal = ATTN_CAUSAL_OFFSET; t->coff = (ptrdiff_t)t->Lk - (ptrdiff_t)t->Lq; break;
    default: t->causal = ATTN_CAUSAL_OFFSET; t->coff = 2; break;
    }
    t->fmask = (int)(idx / 3 % 4);
    t->bmask = idx % 2 ? (int)(idx / 5 % 4) : 0;
    t->klen = (int)(idx / 4 % 4);
    t->kill = idx % 5 == 0;
    t->poison = idx % 3 != 0;
    t->nan_q = idx % 13 == 5;
    if (idx % 5 == 3) t->softcap = 20.0f, t->qk = 3.0f;
    if (idx % 4 == 1) t->scale = 0.3f;
    if (idx % 11 == 7) t->scale = -0.5f;
    if (idx % 17 == 3) t->scores = 1 + (int)(idx / 17 % 3);
}

static void test_lengths(void)
{
    const size_t nl = sizeof LSET / sizeof LSET[0];
    size_t qi, ki;
    long idx = 0;
    for (qi = 0; qi < nl; qi++)
        for (ki = 0; ki < nl; ki++, idx++) {
            case16 t = c16(idx % 2 ? ATTN_BF16 : ATTN_F16, 2, HCFG[idx % 8][0], HCFG[idx % 8][1],
                           LSET[qi], LSET[ki], DSET[idx % 7], DSET[(idx / 6 + idx) % 4]);
            knobs(&t, idx);
            run16("lengths", &t);
            if (idx % 2 == 0) { /* q8_0 on every other pair of lengths */
                t = c16(ATTN_Q8_0, 2, HCFG[idx / 2 % 8][0], HCFG[idx / 2 % 8][1], LSET[qi],
                        LSET[ki], D8SET[idx / 2 % 6], D8SET[(idx / 12 + idx) % 4]);
                knobs(&t, idx / 2);
                run16("lengths", &t);
            }
        }
}

static void test_dims(void)
{
    static const size_t Ls[][2] = {{1, 37}, {3, 20}, {13, 29}, {2, 131}, {12, 12}, {4, 9}};
    const size_t nd = sizeof DSET / sizeof DSET[0];
    size_t di, vi;
    long idx = 0;
    for (di = 0; di < nd; di++)
        for (vi = 0; vi < nd; vi++, idx++) {
            int ty;
            for (ty = ATTN_F16; ty <= ATTN_BF16; ty++) {
                case16 t = c16((attn_dtype)ty, 1 + (size_t)(idx % 2), HCFG[idx % 8][0],
                               HCFG[idx % 8][1], Ls[idx % 6][0], Ls[idx % 6][1], DSET[di],
                               DSET[vi]);
                knobs(&t, idx * 3 + ty);
                run16("dims", &t);
            }
        }
    idx = 0;
    for (di = 0; di < 6; di++)
        for (vi = 0; vi < 6; vi++, idx++) {
            case16 t = c16(ATTN_Q8_0, 1 + (size_t)(idx % 2), HCFG[idx % 8][0], HCFG[idx % 8][1],
                           Ls[idx % 6][0], Ls[idx % 6][1], D8SET[di], D8SET[vi]);
            knobs(&t, idx * 3 + 2);
            run16("dims", &t);
        }
}

static int emulated; /* --emulated: fewer of the largest cases (the cross builds' runs) */

/* decode (q_len 1..4, the rows path and the GQA group path) and prefill (>= 12 rows, the
 * fused path) at model sizes */
static void test_tiles(void)
{
    static const size_t lq[] = {1, 2, 3, 4, 11, 12, 13, 192, 193, 200};
    static const size_t hk[][2] = {{8, 8}, {8, 1}, {32, 8}, {4, 2}};
    size_t i, k;
    long idx = 0;
    for (i = 0; i < sizeof lq / sizeof lq[0]; i++)
        for (k = 0; k < 4; k++, idx++) {
            const int ty = idx % 2 ? ATTN_BF16 : ATTN_F16;
            const size_t H = lq[i] > 100 ? (k == 2 ? 8 : 2) : hk[k][0];
            const size_t KVH = lq[i] > 100 ? (k % 2 ? 1 : 2) : hk[k][1];
            case16 t = c16((attn_dtype)ty, 1, H, KVH, lq[i],
                           lq[i] > 100 ? 300 : 257 + k, k == 3 ? 64 : 128, k == 3 ? 80 : 128);
            /* under emulation, of the query counts past the tiles only the ragged 193 */
            if (emulated && (lq[i] == 192 || lq[i] == 200)) continue;
            t.lay = (int)(idx % 5);
            t.off = (int)(idx % 2);
            t.causal = idx % 3 ? ATTN_CAUSAL_BOTTOM_RIGHT : ATTN_CAUSAL_NONE;
            if (idx % 4 == 3) t.fmask = 1, t.kill = 1, t.poison = 1;
            if (idx % 5 == 2) t.klen = 3;
            if (idx % 6 == 1) t.softcap = 30.0f;
            if (idx % 7 == 4) t.causal = ATTN_CAUSAL_OFFSET, t.coff = -5;
            run16("tiles", &t);
            t.ty = ATTN_Q8_0, t.dv = k == 3 ? 96 : 128; /* the same case, q8_0 */
            run16("tiles", &t);
        }
    /* decode over more than ATTN__DEC_PF bytes of K and V (each tile's V rows requested
     * while its K rows are scored, the next tile's K rows while its P V runs; q8_0 too): 32
     * heads on 8, 4 queries of 8 heads, and one query of 8 heads on 8 (one row a group) */
    check(8 * 1100 * 2 * attn_dtype_bytes(ATTN_Q8_0, 128) > ATTN__DEC_PF,
          "the tiles' far cases are under ATTN__DEC_PF");
    for (k = 0; k < 9; k++, idx++) {
        case16 t = c16((attn_dtype)(ATTN_F16 + k % 3), 1, k < 3 ? 32 : 8, 8,
                       k >= 3 && k < 6 ? 4 : 1, 1100, 128, 128);
        t.off = (int)(k % 2);
        t.causal = k % 2 ? ATTN_CAUSAL_BOTTOM_RIGHT : ATTN_CAUSAL_NONE;
        if (k == 4) t.klen = 3;
        run16("tiles", &t);
    }
}

/* Large values: K with |k| up to 60000 (near f16's largest, 65504) and scores of 1e4. */
static void test_values(void)
{
    int ty;
    for (ty = ATTN_F16; ty <= ATTN_Q8_0; ty++) {
        const size_t d = ty == ATTN_Q8_0 ? 32 : 16, dv = ty == ATTN_Q8_0 ? 32 : 8;
        case16 t = c16((attn_dtype)ty, 1, 2, 1, 5, 40, d, dv);
        t.qk = 60000.0f;
        t.scale = 1e-8f;
        run16("values", &t);
        t = c16((attn_dtype)ty, 1, 2, 1, 14, 40, d, dv);
        t.qk = 25.0f;
        t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        run16("values", &t);
    }
}

/* Status of one attention call with O's bytes unchanged on error (the 8 x 32 floats from O,
 * the largest O below, and for the smaller ones the buffer's bytes after it) */
static void expect16(const char *what, const attn_attention_params *p, void *ws, size_t wsz,
                     attn_status want)
{
    const size_t n = 8 * 32;
    float before[8 * 32];
    attn_status st;
    memcpy(before, p->o, n * sizeof(float));
    st = attn_attention(p, ws, wsz);
    check(st == want, "error path '%s': got %s, want %s", what, attn_status_string(st),
          attn_status_string(want));
    if (want != ATTN_OK)
        check(memcmp(before, p->o, n * sizeof(float)) == 0, "error path '%s': O written", what);
}

static void test_errors(void)
{
    /* K and V 16-bit [1, 1, 7, 8] and [1, 1, 7, 3], O [1, 1, 8, 3] */
    uint16_t *buf = (uint16_t *)xmalloc(4096);
    float *q = (float *)xmalloc(8 * 8 * sizeof(float)), *o;
    attn_attention_params p;
    size_t wsz, i;
    unsigned char *ws;
    for (i = 0; i < 64; i++) q[i] = check_uniform(-1.0f, 1.0f);
    for (i = 0; i < 2048; i++) buf[i] = 0x3C00; /* 1.0 in f16 */
    /* K at buf (56 elements = 112 bytes), V at buf + 56 (21 elements, 42 bytes, ending at
     * byte 154), O right after at byte 156: only the 16-bit sizes leave them apart */
    o = (float *)(void *)(buf + 78);
    for (i = 0; i < 24; i++) o[i] = O_GUARD;
    p = attn_attention_init(1, 1, 1, 8, 7, 8, 3, q, NULL, NULL, o, ATTN_LAYOUT_BHLD);
    p.k = buf, p.v = buf + 56, p.kv_type = ATTN_F16;
    wsz = attn_attention_workspace_size(&p);
    ws = (unsigned char *)xmalloc(wsz);
    expect16("O just past the 16-bit V", &p, ws, wsz, ATTN_OK);
    for (i = 0; i < 24; i++)
        check(fabsf(o[i] - 1.0f) < 1e-6f, "all-ones V: O[%zu] = %g", i, (double)o[i]);
    for (i = 0; i < 24; i++) o[i] = O_GUARD;
    p.kv_type = ATTN_F32; /* V's 21 floats reach byte 308: O inside */
    expect16("the same pointers as f32 (O inside V)", &p, ws, wsz, ATTN_ERR_ALIAS);
    p.kv_type = (attn_dtype)7;
    expect16("kv_type 3", &p, ws, wsz, ATTN_ERR_ARG);
    p.kv_type = (attn_dtype)-1;
    expect16("kv_type -1", &p, ws, wsz, ATTN_ERR_ARG);
    check(attn_attention_task(&p, 0, ws, wsz) == ATTN_ERR_ARG, "task with kv_type -1");
    p.kv_type = ATTN_BF16;
    p.batch = 0; /* empty, but the type is still checked */
    expect16("empty call, bf16", &p, ws, wsz, ATTN_OK);
    p.kv_type = (attn_dtype)7;
    expect16("empty call, kv_type 7", &p, ws, wsz, ATTN_ERR_ARG);
    p.batch = 1, p.kv_type = ATTN_BF16;
    p.k = NULL;
    expect16("K NULL", &p, ws, wsz, ATTN_ERR_NULL);
    p.k = buf, p.k_sl = 7;
    expect16("K rows overlapping", &p, ws, wsz, ATTN_ERR_LD);
    free(buf), free(q), free(ws);
    { /* q8_0: K and V [1, 1, 7, 32] (7 blocks of 34 bytes each), O right after V */
        unsigned char *qb = (unsigned char *)xmalloc(4096);
        float *q8 = (float *)xmalloc(8 * 32 * sizeof(float));
        memset(qb, 0, 4096);
        for (i = 0; i < 14; i++) { /* scale 1.0, every q 1 */
            memset(qb + 34 * i, 1, 34);
            qb[34 * i] = 0x00, qb[34 * i + 1] = 0x3C;
        }
        for (i = 0; i < 8 * 32; i++) q8[i] = check_uniform(-1.0f, 1.0f);
        o = (float *)(void *)(qb + 476);
        for (i = 0; i < 24; i++) o[i] = O_GUARD;
        p = attn_attention_init(1, 1, 1, 8, 7, 32, 32, q8, NULL, NULL, o, ATTN_LAYOUT_BHLD);
        p.k = qb, p.v = qb + 238, p.kv_type = ATTN_Q8_0;
        wsz = attn_attention_workspace_size(&p);
        ws = (unsigned char *)xmalloc(wsz);
        expect16("q8_0: O just past V", &p, ws, wsz, ATTN_OK);
        for (i = 0; i < 8 * 32; i++)
            check(fabsf(o[i] - 1.0f) < 1e-6f, "q8_0 all-ones V: O[%zu] = %g", i, (double)o[i]);
        p.o = (float *)(void *)(qb + 472);
        expect16("q8_0: O on V's last bytes", &p, ws, wsz, ATTN_ERR_ALIAS);
        p.o = o, p.kv_type = ATTN_Q4_0;
        expect16("q4_0 K and V", &p, ws, wsz, ATTN_ERR_ARG);
        p.kv_type = ATTN_Q8_0, p.head_dim = 16, p.k_sl = 16;
        expect16("q8_0: head_dim 16", &p, ws, wsz, ATTN_ERR_SIZE);
        p.head_dim = 32, p.k_sl = 32, p.v_head_dim = 48;
        expect16("q8_0: v_head_dim 48", &p, ws, wsz, ATTN_ERR_SIZE);
        p.v_head_dim = 32, p.k_sl = 48;
        expect16("q8_0: K row stride 48", &p, ws, wsz, ATTN_ERR_LD);
        p.k_sl = 32, p.v_sh = 7 * 32 + 1;
        expect16("q8_0: V head stride off the blocks", &p, ws, wsz, ATTN_ERR_LD);
        p.v_sh = 7 * 32;
        expect16("q8_0: back to valid", &p, ws, wsz, ATTN_OK);
        free(qb), free(q8), free(ws);
    }
}

/* The stored row of n floats as the cache keeps it (q8_0: q8_store) */
static void row_store(attn_dtype t, unsigned char *dst, const float *src, size_t n)
{
    if (t == ATTN_Q8_0) q8_store(dst, src, n);
    else attn_convert(t, dst, ATTN_F32, src, n);
}

/* The KV cache in 16 bits and q8_0 */
static void test_kv_cache(void)
{
    const size_t B = 2, KVH = 2, H = 4, cap = 40;
    int ty;
    for (ty = ATTN_F16; ty <= ATTN_Q8_0; ty++) {
        const attn_dtype T = (attn_dtype)ty;
        const size_t d = T == ATTN_Q8_0 ? 64 : 24, dv = T == ATTN_Q8_0 ? 32 : 20;
        const size_t kbytes = attn_dtype_bytes(T, B * KVH * cap * d);
        const size_t vbytes = attn_dtype_bytes(T, B * KVH * cap * dv);
        unsigned char *kc = (unsigned char *)xmalloc(kbytes);
        unsigned char *vc = (unsigned char *)xmalloc(vbytes);
        float *kn = (float *)xmalloc(B * KVH * cap * d * sizeof(float));
        float *vn = (float *)xmalloc(B * KVH * cap * dv * sizeof(float));
        float *q = (float *)xmalloc(B * H * 3 * d * sizeof(float));
        float *o1 = (float *)xmalloc(B * H * 3 * dv * sizeof(float));
        float *o2 = (float *)xmalloc(B * H * 3 * dv * sizeof(float));
        unsigned char *row = (unsigned char *)xmalloc(d * 2);
        attn_kv_cache c;
        attn_attention_params p, pm;
        size_t step, len = 0, i, b, g, l, wsz;
        unsigned char *ws;
        int lay = 0, ok = 1;
        attn_status st;
        const char *tn = ty_name(T);

        memset(kc, 0xEE, kbytes);
        memset(vc, 0xEE, vbytes);
        check(attn_kv_cache_init_type(&c, (attn_dtype)7, kc, vc, B, KVH, cap, d, dv) ==
                  ATTN_ERR_ARG, "kv cache: type 3 accepted");
        check(attn_kv_cache_init_type(&c, T, kc, vc, B, KVH, cap, d, dv) == ATTN_OK &&
                  c.type == T && c.len == 0, "%s kv cache: init", tn);
        /* the same bytes as f32 would overlap: V right after the stored K */
        {
            attn_kv_cache c2;
            const size_t e = T == ATTN_Q8_0 ? 32 : 2; /* the smallest head_dim of the type */
            check(attn_kv_cache_init_type(&c2, T, kc, kc + attn_dtype_bytes(T, 2 * e), 1, 1, 2,
                                          e, e) == ATTN_OK, "%s kv cache: V right after K refused",
                  tn);
            check(attn_kv_cache_init_type(&c2, T, kc, kc + 3, 1, 1, 2, e, e) == ATTN_ERR_ALIAS,
                  "%s kv cache: overlapping K and V accepted", tn);
            check(attn_kv_cache_init_type(&c2, T, kc, vc, 1, 1, 2, e + (T == ATTN_Q8_0 ? 16 : 0),
                                          e) == (T == ATTN_Q8_0 ? ATTN_ERR_SIZE : ATTN_OK),
                  "%s kv cache: head_dim 48", tn);
            check(attn_kv_cache_init_type(&c2, ATTN_Q4_0, kc, vc, 1, 1, 2, 32, 32) == ATTN_ERR_ARG,
                  "kv cache: q4_0 accepted");
        }
        for (step = 1; len + step <= cap; len += step, step = step % 5 + 1, lay ^= 1) {
            for (i = 0; i < B * KVH * step * d; i++) kn[i] = check_uniform(-70000.0f, 70000.0f);
            for (i = 0; i < B * KVH * step * dv; i++) vn[i] = check_uniform(-2.0f, 2.0f);
            kn[0] = NAN;
            if (step == 3) vn[dv] = 1e7f; /* q8_0: a scale past binary16: a NaN block */
            st = attn_kv_cache_append(&c, step, kn, vn, lay ? ATTN_LAYOUT_BLHD : ATTN_LAYOUT_BHLD);
            if (!check(st == ATTN_OK && c.len == len + step, "%s kv cache: append %zu: %s", tn,
                       step, attn_status_string(st)))
                break;
            for (b = 0; b < B; b++) /* every new row: attn_convert of the float row */
                for (g = 0; g < KVH; g++)
                    for (l = 0; l < step; l++) {
                        const size_t src = lay ? ((b * step + l) * KVH + g) * d
                                               : ((b * KVH + g) * step + l) * d;
                        const size_t srv = lay ? ((b * step + l) * KVH + g) * dv
                                               : ((b * KVH + g) * step + l) * dv;
                        const size_t dst = (b * KVH + g) * cap + len + l;
                        row_store(T, row, kn + src, d);
                        ok &= memcmp(row, kc + attn_dtype_bytes(T, dst * d),
                                     attn_dtype_bytes(T, d)) == 0;
                        row_store(T, row, vn + srv, dv);
                        ok &= memcmp(row, vc + attn_dtype_bytes(T, dst * dv),
                                     attn_dtype_bytes(T, dv)) == 0;
                    }
        }
        check(ok, "%s kv cache: appended rows differ from attn_convert's", tn);
        ok = 1;
        for (b = 0; b < B * KVH; b++) /* past len: untouched */
            for (i = attn_dtype_bytes(T, c.len * d); i < attn_dtype_bytes(T, cap * d); i++)
                ok &= kc[attn_dtype_bytes(T, b * cap * d) + i] == 0xEE;
        check(ok, "%s kv cache: bytes past len written", tn);
        check(attn_kv_cache_append(&c, cap, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_CAPACITY,
              "%s kv cache: capacity", tn);
        check(attn_kv_cache_append(&c, 0, NULL, NULL, ATTN_LAYOUT_BHLD) == ATTN_OK && c.len == len,
              "%s kv cache: n = 0", tn);
        c.len = 30;
        /* new rows inside the cache (stored byte sizes): the last bytes of K's buffer */
        check(attn_kv_cache_append(&c, 1, (const float *)(void *)(kc + (kbytes - 8) / 4 * 4), vn,
                                   ATTN_LAYOUT_BHLD) == ATTN_ERR_ALIAS,
              "%s kv cache: k_new in the cache accepted", tn);
        check(attn_kv_cache_append(&c, 1, kn, (const float *)(void *)(vc + 4), ATTN_LAYOUT_BHLD) ==
                  ATTN_ERR_ALIAS, "%s kv cache: v_new in the cache accepted", tn);
        check(c.len == 30, "%s kv cache: len moved by a refused append", tn);
        /* attention through the cache: the same as the params by hand */
        for (i = 0; i < B * H * 3 * d; i++) q[i] = check_uniform(-1.0f, 1.0f);
        p = attn_attention_init_kv(&c, H, 3, q, o1, ATTN_LAYOUT_BHLD, ATTN_CAUSAL_BOTTOM_RIGHT);
        check(p.kv_type == T && p.k == kc && p.v == vc && p.kv_len == 30 && p.k_sh == cap * d,
              "%s kv cache: attn_attention_init_kv", tn);
        pm = attn_attention_init(B, H, KVH, 3, 30, d, dv, q, NULL, NULL, o2, ATTN_LAYOUT_BHLD);
        pm.k = kc, pm.v = vc, pm.kv_type = T, pm.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        pm.k_sl = d, pm.k_sh = cap * d, pm.k_sb = KVH * cap * d;
        pm.v_sl = dv, pm.v_sh = cap * dv, pm.v_sb = KVH * cap * dv;
        wsz = attn_attention_workspace_size(&p);
        ws = (unsigned char *)xmalloc(wsz);
        check(attn_attention(&p, ws, wsz) == ATTN_OK && attn_attention(&pm, ws, wsz) == ATTN_OK &&
                  first_diff(o1, o2, B * H * 3 * dv) == B * H * 3 * dv,
              "%s kv cache: attention through the cache", tn);
        { /* against the f32 path on the widened cache (the NaNs appended make some rows NaN
           * in both) */
            float *kw = (float *)xmalloc(B * KVH * cap * d * sizeof(float));
            float *vw = (float *)xmalloc(B * KVH * cap * dv * sizeof(float));
            attn_convert(ATTN_F32, kw, T, kc, B * KVH * cap * d);
            attn_convert(ATTN_F32, vw, T, vc, B * KVH * cap * dv);
            pm.k = kw, pm.v = vw, pm.kv_type = ATTN_F32;
            check(attn_attention(&pm, ws, wsz) == ATTN_OK &&
                      first_diff(o1, o2, B * H * 3 * dv) == B * H * 3 * dv,
                  "%s kv cache: differs from the f32 path on the widened cache", tn);
            free(kw), free(vw);
        }
        free(kc), free(vc), free(kn), free(vn), free(q), free(o1), free(o2), free(row), free(ws);
    }
}

int main(int argc, char **argv)
{
    int ty;
    emulated = argc > 1 && strcmp(argv[1], "--emulated") == 0;
    if (check_vnni_missing("attention16")) return 77;
    check_begin("attention16");
    check_seed(0xA77E1716ull);
    test_errors();
    test_kv_cache();
    test_lengths();
    test_dims();
    test_tiles();
    test_values();
    for (ty = ATTN_F16; ty <= ATTN_Q8_0; ty++)
        printf("attention16 %s: %ld calls equal to the f32 path on the rounded K and V%s; max "
               "error %.3g of max|V| against the reference on the rounded values (%.3f of "
               "the f32 tolerance), %.3g against the reference before rounding (q8_0: of 1, the "
               "inputs' range)\n",
               ty_name((attn_dtype)ty), n_calls[ty],
               ty == ATTN_Q8_0 && qk8_active()
                   ? " (decode: and queries, by integer products, to within tolerance)"
                   : "",
               max_rel_err[ty],
               max_tol_ratio[ty], max_raw_err[ty]);
    return check_end("attention16");
}
