/* test_attention: attn_attention (fused scaled-dot-product attention) against a naive
 * double-precision reference over the full score matrix (ref_linalg.h).
 *
 * Covers: q_len x kv_len over {1,2,3,7,8,9,15,16,17,31,33,64,65,70} (all 196 pairs) and
 * larger odd lengths (127, 300); head_dim x v_head_dim over {1,3,8,64,80,128} (all 36
 * pairs) and 256; batch 1..3; heads 1..4 with kv_heads dividing them (MHA, GQA, MQA); the
 * BHLD and BLHD layouts from attn_attention_init, padded custom layouts (padding between
 * heads, rows and batches, holding NaN in the inputs and guard values in O that must stay
 * untouched), a sequence-first layout and tensors of different layouts in one call;
 * pointers offset by one float; a workspace at an address offset by one float; every
 * mask: float masks (full with padded rows, broadcast over batch and heads, over queries,
 * per head), bool masks (any nonzero value attends) with the same strides, key_lengths
 * (including 0), causal bottom-right with q_len < kv_len and q_len > kv_len and with
 * key_lengths, causal offset 0, negative, past length and beyond; softcap; explicit and
 * negative scales; fully masked rows (exact zeros); a NaN query row (NaN stays in that
 * row); NaN / inf in the K and V rows of masked keys (must not leak); scores of 1e4 and,
 * unmasked, near FLT_MAX (no overflow); the workspace query (independent of the lengths)
 * and a too-small workspace; every error path with O untouched; bit-identical output when
 * the call is split into (batch, head) slices via pointer offsets, as a job system does; a
 * row's bits across calls of q_len 1 to 40 (the same within each of the two paths).
 *
 * Tolerance, per output element (b, h, i, c), for a row that sees at least one key:
 *   |O - Oref| <= vmax * (2e-5 + expm1(2 * ds)) + 1e-6,
 * vmax = max over the keys the row sees of |V[j][c]| (|O| <= vmax: O is a convex
 * combination), ds = ref_attention's bound on the absolute float error of any of the row's
 * scores. Why: perturbing every score by at most ds changes each softmax weight by a factor
 * within exp(+-2 ds), so the output moves by at most expm1(2 ds) * vmax; the remaining
 * 2e-5 (~170 float ulps) covers exp (<= 2 ulp), the normalisation and the float
 * accumulation of up to a few hundred weighted V rows (worst case n * 2^-24 relative,
 * 1.8e-5 at n = 300). A row that sees no key must be exactly 0. A wrong mask decision on one
 * key moves the output by about vmax / (visible keys) >= 1e-3 here, a wrong scale or a
 * wrong head far more, so real bugs fail by orders of magnitude; the measured errors are
 * printed as a fraction of vmax and of the tolerance. */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"
#include "ref_linalg.h"
#include <stdint.h>

#define GUARD 24 /* floats of guard before and after every tensor */

static const float O_GUARD = -31337.5f; /* O's padding and guards: must stay bit-identical */
static double max_rel_err;              /* max |O - Oref| / vmax */
static double max_tol_ratio;            /* max |O - Oref| / tolerance */
static long n_calls;

/* the same two maxima per test group, printed at the end */
static struct group_stat {
    const char *name;
    long calls;
    double rel, ratio;
} gstats[24];

static struct group_stat *gstat(const char *name)
{
    size_t i;
    for (i = 0; i < sizeof gstats / sizeof gstats[0] - 1 && gstats[i].name; i++)
        if (strcmp(gstats[i].name, name) == 0) return &gstats[i];
    gstats[i].name = name;
    return &gstats[i];
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

/* ---------------------------------------------------------------------------------------
 * Tensors [batch][heads][len][dim] at arbitrary strides inside a guarded buffer. */

enum {
    LAY_BHLD = 0,     /* dense [B][H][L][D] (what attn_attention_init gives for BHLD) */
    LAY_BLHD = 1,     /* dense [B][L][H*D] (init's BLHD) */
    LAY_BLHD_PAD = 2, /* [B][L][H][D] with padding after each head, row and batch */
    LAY_BHLD_PAD = 3, /* [B][H][L][D] with padding after each row, head and batch */
    LAY_LBHD_PAD = 4  /* sequence-first [L][B][H][D], padded */
};

typedef struct tens {
    float *buf, *p;
    size_t total; /* floats in buf */
    size_t B, H, L, D, sb, sh, sl;
} tens;

static void lay_strides(int lay, size_t B, size_t H, size_t L, size_t D, size_t *sb, size_t *sh,
                        size_t *sl)
{
    switch (lay) {
    case LAY_BHLD: *sl = D; *sh = L * D; *sb = H * L * D; break;
    case LAY_BLHD: *sh = D; *sl = H * D; *sb = L * H * D; break;
    case LAY_BLHD_PAD: *sh = D + 2; *sl = H * (D + 2) + 3; *sb = L * *sl + 5; break;
    case LAY_BHLD_PAD: *sl = D + 1; *sh = L * (D + 1) + 2; *sb = H * *sh + 7; break;
    default: *sh = D + 1; *sb = H * (D + 1) + 1; *sl = B * *sb + 3; break;
    }
}

static size_t extent(size_t B, size_t H, size_t L, size_t D, size_t sb, size_t sh, size_t sl)
{
    return (B - 1) * sb + (H - 1) * sh + (L - 1) * sl + D;
}

/* Allocates; the whole buffer holds `fill` (NaN for inputs, O_GUARD for the output). */
static void tens_alloc(tens *t, int lay, size_t B, size_t H, size_t L, size_t D, int off,
                       float fill)
{
    size_t i;
    t->B = B;
    t->H = H;
    t->L = L;
    t->D = D;
    lay_strides(lay, B, H, L, D, &t->sb, &t->sh, &t->sl);
    t->total = extent(B, H, L, D, t->sb, t->sh, t->sl) + (size_t)off + 2 * GUARD;
    t->buf = (float *)xmalloc(t->total * sizeof(float));
    t->p = t->buf + GUARD + off;
    for (i = 0; i < t->total; i++) t->buf[i] = fill;
}

static float *tens_at(const tens *t, size_t b, size_t h, size_t l)
{
    return t->p + b * t->sb + h * t->sh + l * t->sl;
}

/* Rows stored as a ring: row l moves to row (start + l) % L, in every (b, h) */
static void tens_ring(tens *t, size_t start)
{
    float *tmp = (float *)xmalloc(t->L * t->D * sizeof(float) + 1);
    size_t b, h, l;
    for (b = 0; b < t->B; b++)
        for (h = 0; h < t->H; h++) {
            for (l = 0; l < t->L; l++)
                memcpy(tmp + l * t->D, tens_at(t, b, h, l), t->D * sizeof(float));
            for (l = 0; l < t->L; l++)
                memcpy(tens_at(t, b, h, (start + l) % t->L), tmp + l * t->D,
                       t->D * sizeof(float));
        }
    free(tmp);
}

static void tens_fill(tens *t, float lo, float hi)
{
    size_t b, h, l, c;
    for (b = 0; b < t->B; b++)
        for (h = 0; h < t->H; h++)
            for (l = 0; l < t->L; l++)
                for (c = 0; c < t->D; c++) tens_at(t, b, h, l)[c] = check_uniform(lo, hi);
}

/* marks[i] = 1 where buffer index i is an element of the tensor */
static unsigned char *tens_marks(const tens *t)
{
    unsigned char *m = (unsigned char *)xmalloc(t->total);
    size_t b, h, l, c;
    memset(m, 0, t->total);
    for (b = 0; b < t->B; b++)
        for (h = 0; h < t->H; h++)
            for (l = 0; l < t->L; l++)
                for (c = 0; c < t->D; c++)
                    m[(size_t)(tens_at(t, b, h, l) - t->buf) + c] = 1;
    return m;
}

static int same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* n floats equal bit for bit, two NaNs equal whatever their sign and payload (api.h: the
 * split calls' promise stops there; the compiler picks the NaN an operation returns) */
static int same_or_nan(const float *x, const float *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!same_bits(x[i], y[i]) && !(x[i] != x[i] && y[i] != y[i])) return 0;
    return 1;
}

/* ---------------------------------------------------------------------------------------
 * Test cases. */

enum { MK_NONE, MK_FULL, MK_BCAST_BH, MK_KEYPAD, MK_PER_HEAD, MK_PER_BATCH, MK_KINDS };
static const char *mk_name[MK_KINDS] = {"none", "full", "bcast-bh", "keypad", "per-head",
                                        "per-batch"};

/* key_lengths modes */
enum { KL_NONE, KL_HALF, KL_ZERO_ONE, KL_RANDOM, KL_KINDS };

typedef struct at_case {
    size_t B, H, KVH, Lq, Lk, d, dv;
    int lay;  /* 0 BHLD (init), 1 BLHD (init), 2..4 one padded layout for all, 5, 6 mixed */
    int off;  /* tensors and masks at one float (byte for bool) past an aligned address */
    int wsoff; /* workspace one float past an aligned address */
    float scale, softcap;
    attn_causal causal;
    ptrdiff_t coff;
    int fmask, bmask, klen;
    float finf, bzero; /* probability of a -inf / 0 mask entry */
    int kill_rows;     /* full masks: one row all -inf (float) / all 0 (bool) */
    int poison;        /* NaN / inf into K and V rows of keys every query of the group masks */
    int nan_q;         /* a NaN in one query row */
    float qk;          /* Q and K uniform in [-qk, qk) */
    int scores;        /* 1 + attn_scores mode: also check the scores output */
    int alibi;         /* 0 none, 1 attn_alibi_slopes, 2 random slopes in [-1, 1] */
    size_t window;     /* sliding window (0 none) */
    int sinks;         /* 0 none, 1 random sink logits in [-2, 4], every third head -inf */
    size_t kv_start;   /* K and V rows as a ring starting at this row (kv_start < Lk) */
} at_case;

static at_case at_default(size_t B, size_t H, size_t KVH, size_t Lq, size_t Lk, size_t d,
                          size_t dv)
{
    at_case t;
    memset(&t, 0, sizeof t);
    t.B = B;
    t.H = H;
    t.KVH = KVH;
    t.Lq = Lq;
    t.Lk = Lk;
    t.d = d;
    t.dv = dv;
    t.causal = ATTN_CAUSAL_NONE;
    t.finf = 0.2f;
    t.bzero = 0.2f;
    t.qk = 1.0f;
    return t;
}

static void case_str(char *out, size_t cap, const char *group, const at_case *t)
{
    static const char *cn[3] = {"none", "bottom-right", "offset"};
    snprintf(out, cap,
             "[%s] B=%zu H=%zu KVH=%zu Lq=%zu Lk=%zu d=%zu dv=%zu lay=%d off=%d scale=%g "
             "softcap=%g causal=%s(%td) fmask=%s bmask=%s klen=%d kill=%d poison=%d nanq=%d "
             "qk=%g alibi=%d window=%zu sinks=%d kv_start=%zu",
             group, t->B, t->H, t->KVH, t->Lq, t->Lk, t->d, t->dv, t->lay, t->off,
             (double)t->scale, (double)t->softcap, cn[(int)t->causal % 3], t->coff,
             mk_name[t->fmask], mk_name[t->bmask], t->klen, t->kill_rows, t->poison, t->nan_q,
             (double)t->qk, t->alibi, t->window, t->sinks, t->kv_start);
}

static void mask_strides(int kind, size_t B, size_t H, size_t Lq, size_t Lk, size_t *sb,
                         size_t *sh, size_t *sq)
{
    (void)B;
    switch (kind) {
    case MK_FULL: *sq = Lk + 3; *sh = Lq * *sq; *sb = H * *sh; break;
    case MK_BCAST_BH: *sb = 0; *sh = 0; *sq = Lk; break;
    case MK_KEYPAD: *sb = Lk; *sh = 0; *sq = 0; break;
    case MK_PER_HEAD: *sb = 0; *sh = Lq * Lk; *sq = Lk; break;
    default: *sb = Lq * Lk; *sh = 0; *sq = Lk; break; /* MK_PER_BATCH */
    }
}

/* Split the call into (batch, head) slices with batch = heads = kv_heads = 1, each pointing
 * into the big tensors; o must be a buffer laid out like p->o. */
static attn_status run_sliced(const attn_attention_params *p, float *o, void *ws, size_t wsz)
{
    const size_t group = p->heads / p->kv_heads;
    size_t b, h;
    attn_status worst = ATTN_OK;
    for (b = 0; b < p->batch; b++)
        for (h = 0; h < p->heads; h++) {
            attn_attention_params s = *p;
            const size_t g = h / group;
            attn_status st;
            s.batch = s.heads = s.kv_heads = 1;
            s.q = p->q + b * p->q_sb + h * p->q_sh;
            s.k = (const float *)p->k + b * p->k_sb + g * p->k_sh;
            s.v = (const float *)p->v + b * p->v_sb + g * p->v_sh;
            s.o = o + b * p->o_sb + h * p->o_sh;
            if (p->mask) s.mask = p->mask + b * p->mask_sb + h * p->mask_sh;
            if (p->bool_mask) s.bool_mask = p->bool_mask + b * p->bmask_sb + h * p->bmask_sh;
            if (p->key_lengths) s.key_lengths = p->key_lengths + b;
            if (p->alibi_slopes) s.alibi_slopes = p->alibi_slopes + h;
            if (p->sinks) s.sinks = p->sinks + h;
            st = attn_attention(&s, ws, wsz);
            if (st != ATTN_OK) worst = st;
        }
    return worst;
}

/* The scores output (mode) against double references, and O with scores requested
 * against the call without (same tolerance as run_case, read from the caller's O). */
static long n_scores;
static double max_scores_ratio;

static void check_scores(const char *desc, const attn_attention_params *p0, int mode,
                         unsigned char *ws, size_t wsz, const float *obuf, const float *o0,
                         size_t ototal)
{
    const size_t B = p0->batch, H = p0->heads, Lq = p0->q_len, Lk = p0->kv_len;
    const size_t d = p0->head_dim, G = p0->heads / p0->kv_heads, sq = Lk + 2;
    const double scale = p0->scale == 0.0f ? 1.0 / sqrt((double)d) : (double)p0->scale;
    const double cap = (double)p0->softcap, u = 1.0 / 16777216.0;
    const size_t n = B * H * Lq * sq;
    float *sc = (float *)xmalloc(n * sizeof(float)), *o = (float *)xmalloc(ototal * sizeof(float));
    double *lg = (double *)xmalloc(Lk * sizeof(double)),
           *er = (double *)xmalloc(Lk * sizeof(double));
    attn_attention_params p = *p0;
    size_t b, h, i, j, c, bad = 0;
    double worst = 0.0;
    attn_status st;
    for (i = 0; i < n; i++) sc[i] = O_GUARD;
    for (i = 0; i < ototal; i++) o[i] = O_GUARD;
    p.scores = sc;
    p.scores_sq = sq, p.scores_sh = Lq * sq, p.scores_sb = H * Lq * sq;
    p.scores_mode = (attn_scores)mode;
    p.o = o + (o0 - obuf);
    st = attn_attention(&p, ws, wsz);
    n_calls++;
    if (!check(st == ATTN_OK, "%s scores mode %d: status %s", desc, mode, attn_status_string(st)))
        goto out;
    for (b = 0; b < B; b++)
        for (h = 0; h < H; h++)
            for (i = 0; i < Lq; i++) {
                const float *Q = p.q + b * p.q_sb + h * p.q_sh + i * p.q_sl;
                const float *K0 = (const float *)p.k + b * p.k_sb + (h / G) * p.k_sh;
                const float *row = sc + ((b * H + h) * Lq + i) * sq;
                double mx = -HUGE_VAL, sum = 0.0, ds = 0.0;
                int nan = 0;
                for (j = 0; j < Lk; j++) {
                    const float *K = K0 + (p.kv_start + j) % Lk * p.k_sl; /* key j's row */
                    double dot = 0.0, mag = 0.0, s, e;
                    for (c = 0; c < d; c++) {
                        dot += (double)Q[c] * (double)K[c];
                        mag += fabs((double)Q[c] * (double)K[c]);
                    }
                    s = scale * dot;
                    e = ((double)d + 8.0) * u * fabs(scale) * mag + u * fabs(s);
                    if (cap > 0.0) {
                        s = cap * tanh(s / cap);
                        e += 16.0 * u * cap;
                    }
                    if (mode != ATTN_SCORES_LOGITS) {
                        if (!ref_attn_visible(&p, b, h, i, j)) s = -HUGE_VAL, e = 0.0;
                        else {
                            if (p.mask) {
                                const double mv = (double)p.mask[b * p.mask_sb + h * p.mask_sh +
                                                                 i * p.mask_sq + j];
                                s += mv;
                                e += 2.0 * u * fabs(mv) + u * fabs(s);
                            }
                            if (p.alibi_slopes) {
                                const double a = (double)p.alibi_slopes[h] *
                                                 ((double)j - ref_attn_pos(&p, b, i));
                                s += a;
                                e += 2.0 * u * (fabs(a) + fabs(s));
                            }
                        }
                        if (s != s) nan = 1;
                        if (s > mx) mx = s;
                        if (s > -HUGE_VAL && e > ds) ds = e;
                    }
                    lg[j] = s;
                    er[j] = e;
                }
                if (mode == ATTN_SCORES_PROBS) {
                    /* a sink takes its share of the denominator (rows with a visible key) */
                    if (p.sinks && p.sinks[h] > -HUGE_VAL && mx > -HUGE_VAL) {
                        if ((double)p.sinks[h] > mx) mx = (double)p.sinks[h];
                        sum = exp((double)p.sinks[h] - mx);
                    }
                    for (j = 0; j < Lk; j++) sum += lg[j] > -HUGE_VAL ? exp(lg[j] - mx) : 0.0;
                }
                for (j = 0; j < Lk; j++) {
                    double want = lg[j], tol = er[j] + 1e-30, got = (double)row[j];
                    int ok;
                    if (mode == ATTN_SCORES_PROBS) {
                        want = nan                 ? NAN
                               : mx == -HUGE_VAL   ? 0.0
                               : lg[j] > -HUGE_VAL ? exp(lg[j] - mx) / sum
                                                   : 0.0;
                        tol = want * (expm1(2.0 * ds) + 2e-6) + 1e-7;
                    }
                    if (want != want) ok = got != got;
                    else if (want == -HUGE_VAL || want == HUGE_VAL) ok = got == want;
                    else ok = fabs(got - want) <= tol;
                    if (ok && want == want && tol > 0 && fabs(got - want) / tol > worst)
                        worst = fabs(got - want) / tol;
                    if (!ok && !bad++)
                        check(0,
                              "%s scores mode %d: [b=%zu h=%zu i=%zu j=%zu] = %.9g, want %.9g (tol "
                              "%.3g)",
                              desc, mode, b, h, i, j, got, want, tol);
                }
                for (j = Lk; j < sq; j++)
                    if (!same_bits(row[j], O_GUARD) && !bad++)
                        check(0, "%s scores mode %d: row padding written", desc, mode);
            }
    check(bad == 0, "%s scores mode %d: %zu wrong", desc, mode, bad);
    /* O with scores: within run_case's tolerance of O without (both were checked against the
     * reference there; here: finite where O is, close) */
    for (i = 0; i < ototal; i++) {
        const double a = (double)obuf[i], g = (double)o[i];
        if (!(a == g || (a != a && g != g) || fabs(a - g) <= 1e-5 * (1.0 + fabs(a)))) break;
    }
    check(i == ototal,
          "%s scores mode %d: O differs from the call without scores at %zu (%g vs %g)", desc, mode,
          i, i < ototal ? (double)o[i] : 0.0, i < ototal ? (double)obuf[i] : 0.0);
    n_scores++;
    if (worst > max_scores_ratio) max_scores_ratio = worst;
out:
    free(sc);
    free(o);
    free(lg);
    free(er);
}

/* Runs one case: builds the tensors and masks, runs the reference and the kernel, checks
 * status, values, O's padding and guards, and the sliced call. Returns 1 when all passed. */
static int run_case(const char *group, const at_case *t)
{
    const size_t B = t->B, H = t->H, KVH = t->KVH, Lq = t->Lq, Lk = t->Lk;
    const size_t d = t->d, dv = t->dv, G = H / KVH;
    const int off = t->off ? 1 : 0;
    int lq, lk, lv, lo;
    tens Q, K, V, O;
    float *fmask_buf = NULL, *fm = NULL, *o2 = NULL;
    uint8_t *bmask_buf = NULL, *bm = NULL;
    int64_t klen[8];
    float slopes[16], sinks[16];
    attn_attention_params p;
    double *ref, *vmax, *dsc;
    size_t *nvis;
    unsigned char *omarks, *wsbuf;
    size_t wsz, i, b, h, j, c, nrows = B * H * Lq;
    size_t bad_b = 0, bad_h = 0, bad_i = 0, bad_c = 0;
    double bad_got = 0, bad_want = 0, bad_tol = 0;
    int ok_vals = 1, ok_guard = 1, ok_all;
    attn_status st;
    char desc[400];
    struct group_stat *gs = gstat(group);
    float *qcopy, *kcopy, *vcopy;

    case_str(desc, sizeof desc, group, t);
    switch (t->lay) {
    case 0: lq = lk = lv = lo = LAY_BHLD; break;
    case 1: lq = lk = lv = lo = LAY_BLHD; break;
    case 2: lq = lk = lv = lo = LAY_BLHD_PAD; break;
    case 3: lq = lk = lv = lo = LAY_BHLD_PAD; break;
    case 4: lq = lk = lv = lo = LAY_LBHD_PAD; break;
    case 5: lq = LAY_BHLD_PAD; lk = LAY_BLHD_PAD; lv = LAY_LBHD_PAD; lo = LAY_BLHD; break;
    default: lq = LAY_LBHD_PAD; lk = LAY_BHLD; lv = LAY_BLHD_PAD; lo = LAY_BHLD_PAD; break;
    }
    tens_alloc(&Q, lq, B, H, Lq, d, off, NAN);
    tens_alloc(&K, lk, B, KVH, Lk, d, off, NAN);
    tens_alloc(&V, lv, B, KVH, Lk, dv, off, NAN);
    tens_alloc(&O, lo, B, H, Lq, dv, off, O_GUARD);
    tens_fill(&Q, -t->qk, t->qk);
    tens_fill(&K, -t->qk, t->qk);
    tens_fill(&V, -1.0f, 1.0f);

    if (t->lay == 0 || t->lay == 1) {
        const attn_layout L = t->lay == 0 ? ATTN_LAYOUT_BHLD : ATTN_LAYOUT_BLHD;
        p = attn_attention_init(B, H, KVH, Lq, Lk, d, dv, Q.p, K.p, V.p, O.p, L);
        check(p.q_sb == Q.sb && p.q_sh == Q.sh && p.q_sl == Q.sl && p.k_sb == K.sb &&
                  p.k_sh == K.sh && p.k_sl == K.sl && p.v_sb == V.sb && p.v_sh == V.sh &&
                  p.v_sl == V.sl && p.o_sb == O.sb && p.o_sh == O.sh && p.o_sl == O.sl,
              "%s: attn_attention_init strides differ from the dense %s layout", desc,
              t->lay == 0 ? "BHLD" : "BLHD");
    } else {
        p = attn_attention_init(B, H, KVH, Lq, Lk, d, dv, Q.p, K.p, V.p, O.p, ATTN_LAYOUT_BHLD);
    }
    /* use the strides of the buffers actually allocated (identical for 0/1 if init is right) */
    p.q_sb = Q.sb; p.q_sh = Q.sh; p.q_sl = Q.sl;
    p.k_sb = K.sb; p.k_sh = K.sh; p.k_sl = K.sl;
    p.v_sb = V.sb; p.v_sh = V.sh; p.v_sl = V.sl;
    p.o_sb = O.sb; p.o_sh = O.sh; p.o_sl = O.sl;
    p.scale = t->scale;
    p.softcap = t->softcap;
    p.causal = t->causal;
    p.causal_offset = t->coff;
    p.window = t->window;
    if (t->alibi || t->sinks) check(H <= 16, "%s: more heads than the test's arrays", desc);
    if (t->alibi == 1) check(attn_alibi_slopes(H, slopes) == ATTN_OK, "%s: slopes", desc);
    for (h = 0; h < H && t->alibi == 2; h++) slopes[h] = check_uniform(-1.0f, 1.0f);
    for (h = 0; h < H && t->sinks; h++)
        sinks[h] = h % 3 == 2 ? -INFINITY : check_uniform(-2.0f, 4.0f);
    if (t->alibi) p.alibi_slopes = slopes;
    if (t->sinks) p.sinks = sinks;

    if (t->fmask) {
        size_t n;
        mask_strides(t->fmask, B, H, Lq, Lk, &p.mask_sb, &p.mask_sh, &p.mask_sq);
        n = extent(B, H, Lq, Lk, p.mask_sb, p.mask_sh, p.mask_sq) + (size_t)off;
        fmask_buf = (float *)xmalloc(n * sizeof(float));
        fm = fmask_buf + off;
        for (i = 0; i < n; i++) fmask_buf[i] = NAN; /* row padding: must not be used */
        for (b = 0; b < B; b++)
            for (h = 0; h < H; h++)
                for (i = 0; i < Lq; i++)
                    for (j = 0; j < Lk; j++) {
                        float *e = fm + b * p.mask_sb + h * p.mask_sh + i * p.mask_sq + j;
                        *e = check_uniform(0.0f, 1.0f) < t->finf ? -INFINITY
                                                                  : check_uniform(-3.0f, 1.0f);
                    }
        if (t->kill_rows && t->fmask == MK_FULL) {
            const size_t ri = Lq > 2 ? 2 : Lq - 1;
            for (j = 0; j < Lk; j++) fm[ri * p.mask_sq + j] = -INFINITY; /* b = 0, h = 0 */
        }
        p.mask = fm;
    }
    if (t->bmask) {
        size_t n;
        static const uint8_t yes[4] = {1, 2, 255, 17};
        mask_strides(t->bmask, B, H, Lq, Lk, &p.bmask_sb, &p.bmask_sh, &p.bmask_sq);
        n = extent(B, H, Lq, Lk, p.bmask_sb, p.bmask_sh, p.bmask_sq) + (size_t)off;
        bmask_buf = (uint8_t *)xmalloc(n);
        bm = bmask_buf + off;
        memset(bmask_buf, 0, n);
        for (b = 0; b < B; b++)
            for (h = 0; h < H; h++)
                for (i = 0; i < Lq; i++)
                    for (j = 0; j < Lk; j++) {
                        uint8_t *e = bm + b * p.bmask_sb + h * p.bmask_sh + i * p.bmask_sq + j;
                        *e = check_uniform(0.0f, 1.0f) < t->bzero
                                 ? 0
                                 : yes[(size_t)check_uniform(0.0f, 4.0f) & 3];
                    }
        if (t->kill_rows && t->bmask == MK_FULL) {
            uint8_t *row = bm + (B - 1) * p.bmask_sb + (H - 1) * p.bmask_sh +
                           (Lq - 1) * p.bmask_sq;
            for (j = 0; j < Lk; j++) row[j] = 0;
        }
        p.bool_mask = bm;
    }
    if (t->klen) {
        for (b = 0; b < B; b++) {
            switch (t->klen) {
            case KL_HALF: klen[b] = (int64_t)(b % 2 ? (Lk + 1) / 2 : Lk); break;
            case KL_ZERO_ONE: klen[b] = (int64_t)(b % 2 ? (Lk > 1 ? 1 : 0) : 0); break;
            default: klen[b] = (int64_t)((size_t)check_uniform(0.0f, (float)Lk + 0.99f)); break;
            }
            if (klen[b] > (int64_t)Lk) klen[b] = (int64_t)Lk;
        }
        p.key_lengths = klen;
    }
    /* Poison the K and V rows of keys that no query of any head sharing them sees. */
    if (t->poison) {
        size_t g, hh;
        for (b = 0; b < B; b++)
            for (g = 0; g < KVH; g++)
                for (j = 0; j < Lk; j++) {
                    int seen = 0;
                    for (hh = g * G; hh < (g + 1) * G && !seen; hh++)
                        for (i = 0; i < Lq && !seen; i++) seen = ref_attn_visible(&p, b, hh, i, j);
                    if (seen) continue;
                    for (c = 0; c < d; c++)
                        tens_at(&K, b, g, j)[c] = j % 3 == 0   ? NAN
                                                  : j % 3 == 1 ? INFINITY
                                                               : -INFINITY;
                    for (c = 0; c < dv; c++)
                        tens_at(&V, b, g, j)[c] = j % 3 == 0   ? INFINITY
                                                  : j % 3 == 1 ? NAN
                                                               : -INFINITY;
                }
    }
    if (t->nan_q) tens_at(&Q, B - 1, H - 1, Lq / 2)[d / 2] = NAN;

    ref = (double *)xmalloc(nrows * dv * sizeof(double));
    vmax = (double *)xmalloc(nrows * dv * sizeof(double));
    dsc = (double *)xmalloc(nrows * sizeof(double));
    nvis = (size_t *)xmalloc(nrows * sizeof(size_t));
    ref_attention(&p, ref, vmax, dsc, nvis);
    if (t->kv_start) { /* the reference read the keys in order; the call takes them as a ring */
        tens_ring(&K, t->kv_start);
        tens_ring(&V, t->kv_start);
        p.kv_start = t->kv_start;
    }

    qcopy = (float *)xmalloc(Q.total * sizeof(float));
    kcopy = (float *)xmalloc(K.total * sizeof(float));
    vcopy = (float *)xmalloc(V.total * sizeof(float));
    memcpy(qcopy, Q.buf, Q.total * sizeof(float));
    memcpy(kcopy, K.buf, K.total * sizeof(float));
    memcpy(vcopy, V.buf, V.total * sizeof(float));
    wsz = attn_attention_workspace_size(&p);
    wsbuf = (unsigned char *)xmalloc(wsz + sizeof(float));
    st = attn_attention(&p, wsbuf + (t->wsoff ? sizeof(float) : 0), wsz);
    n_calls++;
    gs->calls++;
    check(memcmp(qcopy, Q.buf, Q.total * sizeof(float)) == 0 &&
              memcmp(kcopy, K.buf, K.total * sizeof(float)) == 0 &&
              memcmp(vcopy, V.buf, V.total * sizeof(float)) == 0,
          "%s: an input tensor (Q, K or V) was modified", desc);
    omarks = tens_marks(&O);
    if (!check(st == ATTN_OK, "%s: status %d (%s)", desc, (int)st, attn_status_string(st))) {
        ok_all = 0;
        goto done;
    }
    for (b = 0; b < B; b++)
        for (h = 0; h < H; h++)
            for (i = 0; i < Lq; i++) {
                const size_t row = (b * H + h) * Lq + i;
                const float *orow = tens_at(&O, b, h, i);
                for (c = 0; c < dv; c++) {
                    const double got = (double)orow[c], want = ref[row * dv + c];
                    const double vm = vmax[row * dv + c];
                    const double tol =
                        nvis[row] ? vm * (2e-5 + expm1(2.0 * dsc[row])) + 1e-6 : 0.0;
                    const double err = fabs(got - want);
                    /* NaN wanted (a NaN query row): NaN required; else within tol */
                    const int ok = check_close(got, want, tol, 0.0);
                    if (ok && !isnan(want)) {
                        if (vm > 0 && err / vm > max_rel_err) max_rel_err = err / vm;
                        if (tol > 0 && err / tol > max_tol_ratio) max_tol_ratio = err / tol;
                        if (vm > 0 && err / vm > gs->rel) gs->rel = err / vm;
                        if (tol > 0 && err / tol > gs->ratio) gs->ratio = err / tol;
                    }
                    if (!ok && ok_vals) {
                        ok_vals = 0;
                        bad_b = b; bad_h = h; bad_i = i; bad_c = c;
                        bad_got = got; bad_want = want; bad_tol = tol;
                    }
                }
            }
    check(ok_vals, "%s: O[b=%zu][h=%zu][i=%zu][c=%zu] = %.9g, want %.9g (tol %.3g, row sees "
                   "%zu keys)",
          desc, bad_b, bad_h, bad_i, bad_c, bad_got, bad_want, bad_tol,
          nvis[(bad_b * H + bad_h) * Lq + bad_i]);
    for (i = 0; i < O.total; i++)
        if (!omarks[i] && !same_bits(O.buf[i], O_GUARD)) {
            ok_guard = 0;
            break;
        }
    check(ok_guard, "%s: O's padding/guard written at buffer index %zu (%g)", desc, i,
          ok_guard ? 0.0 : (double)O.buf[i]);

    /* the same call in (batch, head) slices: bit-identical */
    o2 = (float *)xmalloc(O.total * sizeof(float));
    for (i = 0; i < O.total; i++) o2[i] = O_GUARD;
    st = run_sliced(&p, o2 + (O.p - O.buf), wsbuf, wsz);
    check(st == ATTN_OK && same_or_nan(o2, O.buf, O.total),
          "%s: (batch, head) slices differ from the whole call (status %s)", desc,
          attn_status_string(st));
    /* the call as work items, in reverse order: bit-identical */
    {
        const size_t nt = attn_attention_tasks(&p);
        size_t t2;
        attn_status worst = ATTN_OK;
        for (i = 0; i < O.total; i++) o2[i] = O_GUARD;
        p.o = o2 + (O.p - O.buf);
        check(nt == B * H * ((Lq + attn_attention_query_tile() - 1) / attn_attention_query_tile()),
              "%s: attn_attention_tasks gave %zu", desc, nt);
        for (t2 = nt; t2-- > 0;) {
            st = attn_attention_task(&p, t2, wsbuf, wsz);
            if (st != ATTN_OK) worst = st;
        }
        check(worst == ATTN_OK && same_or_nan(o2, O.buf, O.total),
              "%s: work items (attn_attention_task) differ from the whole call (status %s)",
              desc, attn_status_string(worst));
        p.o = O.p;
    }
    if (t->scores) check_scores(desc, &p, t->scores - 1, wsbuf, wsz, O.buf, O.p, O.total);
    ok_all = ok_vals && ok_guard;
done:
    free(Q.buf);
    free(K.buf);
    free(V.buf);
    free(O.buf);
    free(o2);
    free(fmask_buf);
    free(bmask_buf);
    free(ref);
    free(vmax);
    free(dsc);
    free(nvis);
    free(omarks);
    free(wsbuf);
    free(qcopy);
    free(kcopy);
    free(vcopy);
    return ok_all;
}

/* ---------------------------------------------------------------------------------------
 * Groups. */

static const size_t LSET[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 70};
static const size_t HCFG[][2] = {{1, 1}, {2, 2}, {2, 1}, {3, 1}, {3, 3}, {4, 4}, {4, 2}, {4, 1}};
static const size_t DSET[] = {1, 3, 8, 64, 80, 128, 256};

/* All q_len x kv_len pairs; the other knobs cycle with the index. Run twice with different
 * phases, so each pair meets two configurations. */
static void test_lengths(long phase)
{
    const size_t nl = sizeof LSET / sizeof LSET[0];
    size_t qi, ki;
    long idx = phase;
    for (qi = 0; qi < nl; qi++)
        for (ki = 0; ki < nl; ki++, idx++) {
            const size_t Lq = LSET[qi], Lk = LSET[ki];
            at_case t = at_default(2, HCFG[idx % 8][0], HCFG[idx % 8][1], Lq, Lk, DSET[idx % 7],
                                   DSET[(idx / 6 + idx) % 4]);
            t.lay = (int)(idx % 7);
            t.off = (int)(idx % 2);
            t.wsoff = (int)((idx / 2) % 2);
            switch (idx % 7) {
            case 0: t.causal = ATTN_CAUSAL_NONE; break;
            case 1: t.causal = ATTN_CAUSAL_BOTTOM_RIGHT; break;
            case 2: t.causal = ATTN_CAUSAL_OFFSET; t.coff = 0; break;
            case 3: t.causal = ATTN_CAUSAL_OFFSET; t.coff = -3; break;
            case 4: t.causal = ATTN_CAUSAL_OFFSET; t.coff = (ptrdiff_t)Lk - (ptrdiff_t)Lq; break;
            case 5: t.causal = ATTN_CAUSAL_BOTTOM_RIGHT; break;
            default: t.causal = ATTN_CAUSAL_OFFSET; t.coff = 2; break;
            }
            t.fmask = (int)((idx / 3) % MK_KINDS);
            t.bmask = (int)((idx / 5) % MK_KINDS);
            if (t.bmask && t.fmask) t.bmask = idx % 2 ? t.bmask : MK_NONE;
            t.klen = (int)((idx / 4) % KL_KINDS);
            t.finf = 0.15f;
            t.bzero = 0.15f;
            t.kill_rows = idx % 5 == 0;
            t.poison = idx % 3 != 0;
            t.nan_q = idx % 13 == 5;
            if (idx % 5 == 3) {
                t.softcap = 20.0f;
                t.qk = 3.0f;
            }
            if (idx % 4 == 1) t.scale = 0.3f;
            if (idx % 11 == 7) t.scale = -0.5f;
            if (idx % 17 == 3) t.scores = 1 + (int)(idx / 17 % 3);
            run_case("lengths", &t);
        }
}

/* All head_dim x v_head_dim pairs (and 256). */
static void test_dims(void)
{
    const size_t nd = sizeof DSET / sizeof DSET[0];
    size_t di, vi;
    long idx = 0;
    for (di = 0; di < nd; di++)
        for (vi = 0; vi < nd; vi++, idx++) {
            at_case t =
                at_default(2, 4, 2, idx % 2 ? 9 : 17, idx % 3 ? 33 : 31, DSET[di], DSET[vi]);
            t.lay = (int)(idx % 7);
            t.off = (int)((idx / 2) % 2);
            t.causal = idx % 3 == 0 ? ATTN_CAUSAL_NONE : ATTN_CAUSAL_BOTTOM_RIGHT;
            t.klen = idx % 4 == 1 ? KL_HALF : KL_NONE;
            t.fmask = idx % 5 == 2 ? MK_KEYPAD : MK_NONE;
            t.poison = 1;
            run_case("dims", &t);
        }
    {
        at_case t = at_default(2, 2, 1, 17, 40, 256, 256);
        t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        t.lay = 1;
        run_case("dims", &t);
        t = at_default(1, 2, 2, 5, 70, 256, 1);
        t.lay = 3;
        t.off = 1;
        t.klen = KL_RANDOM;
        t.poison = 1;
        run_case("dims", &t);
        t = at_default(1, 1, 1, 3, 9, 1, 256);
        t.lay = 5;
        run_case("dims", &t);
    }
}

/* Larger odd lengths. */
static void test_large(void)
{
    at_case t = at_default(2, 2, 1, 127, 300, 64, 64);
    t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    t.klen = KL_HALF;
    t.poison = 1;
    run_case("large", &t);

    t = at_default(2, 2, 2, 300, 127, 80, 80); /* q_len > kv_len: 173 rows fully masked */
    t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    t.lay = 1;
    t.off = 1;
    run_case("large", &t);

    t = at_default(2, 3, 1, 300, 300, 8, 8);
    t.causal = ATTN_CAUSAL_OFFSET;
    t.coff = -17;
    t.fmask = MK_KEYPAD;
    t.finf = 0.3f;
    t.poison = 1;
    t.lay = 5;
    run_case("large", &t);

    t = at_default(1, 4, 1, 127, 127, 128, 64);
    t.bmask = MK_FULL;
    t.lay = 2;
    run_case("large", &t);

    t = at_default(2, 4, 2, 1, 300, 128, 128); /* one decode step against a long cache */
    t.klen = KL_RANDOM;
    t.poison = 1;
    t.lay = 6;
    run_case("large", &t);

    /* decode over more than ATTN__DEC_PF bytes of K and V (each tile's V rows requested
     * while its K rows are scored, the next tile's K rows while its P V runs, across a ring's
     * wrap too): one query of 8 heads on 2 KV heads, 4 queries of 2 */
    t = at_default(1, 8, 2, 1, 2100, 128, 128);
    check(2 * 2100 * 256 * sizeof(float) > ATTN__DEC_PF, "the case is under ATTN__DEC_PF");
    t.klen = KL_RANDOM;
    t.poison = 1;
    t.off = 1;
    run_case("large", &t);
    t = at_default(2, 2, 2, 4, 1100, 128, 96);
    t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    t.kv_start = 700; /* a ring */
    t.lay = 3;
    run_case("large", &t);

    t = at_default(1, 2, 1, 65, 257, 80, 3);
    t.softcap = 15.0f;
    t.qk = 3.0f;
    t.fmask = MK_PER_HEAD;
    t.finf = 0.05f;
    t.lay = 4;
    run_case("large", &t);
}

/* Each mask kind by itself and in combination. */
static void test_masks(void)
{
    int fk, bk, poison;
    long idx = 0;
    for (poison = 0; poison < 2; poison++) {
        for (fk = 1; fk < MK_KINDS; fk++) {
            at_case t = at_default(2, 4, 2, 17, 33, 8, 8);
            t.fmask = fk;
            t.poison = poison;
            t.kill_rows = 1;
            t.lay = (int)(idx++ % 7);
            run_case("float mask", &t);
        }
        for (bk = 1; bk < MK_KINDS; bk++) {
            at_case t = at_default(2, 4, 2, 17, 33, 8, 8);
            t.bmask = bk;
            t.poison = poison;
            t.kill_rows = 1;
            t.lay = (int)(idx++ % 7);
            run_case("bool mask", &t);
        }
        {
            int k;
            for (k = 1; k < KL_KINDS; k++) {
                at_case t = at_default(3, 2, 1, 9, 40, 16, 24);
                t.klen = k;
                t.poison = poison;
                t.lay = (int)(idx++ % 7);
                run_case("key_lengths", &t);
            }
        }
        /* everything together */
        {
            at_case t = at_default(2, 4, 1, 33, 65, 64, 80);
            t.fmask = MK_PER_BATCH;
            t.bmask = MK_PER_HEAD;
            t.klen = KL_HALF;
            t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
            t.softcap = 10.0f;
            t.qk = 2.0f;
            t.poison = poison;
            t.off = 1;
            t.lay = 6;
            run_case("all masks", &t);
        }
        /* masks with nothing -inf / 0 (pure additive mask), and a very dense mask */
        {
            at_case t = at_default(2, 2, 2, 16, 31, 8, 3);
            t.fmask = MK_FULL;
            t.finf = 0.0f;
            t.poison = poison;
            run_case("float mask dense", &t);
            t.finf = 0.9f;
            t.bmask = MK_KEYPAD;
            t.bzero = 0.5f;
            run_case("float mask dense", &t);
        }
    }
}

/* Causal variants. */
static void test_causal(void)
{
    static const size_t lens[][2] = {{5, 40}, {40, 5}, {16, 16}, {1, 33}, {33, 1}, {17, 64}};
    size_t s;
    int kl, mode;
    long idx = 0;
    for (s = 0; s < sizeof lens / sizeof lens[0]; s++)
        for (mode = 0; mode < 7; mode++)
            for (kl = 0; kl < 2; kl++, idx++) {
                const size_t Lq = lens[s][0], Lk = lens[s][1];
                at_case t = at_default(2, 2, 1, Lq, Lk, 8, 5);
                switch (mode) {
                case 0: t.causal = ATTN_CAUSAL_BOTTOM_RIGHT; break;
                case 1: t.causal = ATTN_CAUSAL_OFFSET; t.coff = 0; break;
                case 2: t.causal = ATTN_CAUSAL_OFFSET; t.coff = -1; break;
                case 3: t.causal = ATTN_CAUSAL_OFFSET; t.coff = -(ptrdiff_t)Lq / 2 - 1; break;
                case 4:
                    t.causal = ATTN_CAUSAL_OFFSET;
                    t.coff = (ptrdiff_t)Lk - (ptrdiff_t)Lq;
                    break;
                case 5: t.causal = ATTN_CAUSAL_OFFSET; t.coff = 1000; break; /* sees everything */
                default: t.causal = ATTN_CAUSAL_OFFSET; t.coff = -1000; break; /* sees nothing */
                }
                t.klen = kl ? KL_HALF : KL_NONE;
                t.poison = 1;
                t.lay = (int)(idx % 7);
                t.off = (int)(idx % 2);
                run_case("causal", &t);
            }
}

/* scale, softcap, NaN query rows, large scores. */
static void test_values(void)
{
    static const float scales[] = {0.0f, 0.5f, -1.0f, 2.0f, 0.01f};
    static const float caps[] = {1.0f, 5.0f, 30.0f};
    size_t s;
    long idx = 0;
    for (s = 0; s < sizeof scales / sizeof scales[0]; s++) {
        at_case t = at_default(2, 2, 1, 9, 17, 8, 8);
        t.scale = scales[s];
        t.lay = (int)(idx++ % 7);
        run_case("scale", &t);
    }
    for (s = 0; s < sizeof caps / sizeof caps[0]; s++) {
        at_case t = at_default(2, 2, 1, 9, 17, 16, 8);
        t.softcap = caps[s];
        t.scale = 1.0f;
        t.qk = 3.0f;
        t.lay = (int)(idx++ % 7);
        t.fmask = s == 1 ? MK_FULL : MK_NONE;
        run_case("softcap", &t);
    }
    /* a NaN in one query row: that row NaN, every other row (other heads sharing the KV
     * head included) untouched */
    {
        at_case t = at_default(2, 4, 2, 7, 9, 8, 8);
        t.nan_q = 1;
        run_case("nan query", &t);
        t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        t.poison = 1;
        t.klen = KL_HALF;
        t.lay = 2;
        run_case("nan query", &t);
        t = at_default(1, 1, 1, 64, 64, 64, 64);
        t.nan_q = 1;
        t.lay = 1;
        run_case("nan query", &t);
    }
    /* scores around 1e4 and beyond: the running max must be subtracted */
    {
        at_case t = at_default(2, 2, 1, 9, 33, 8, 8);
        t.scale = 1e4f;
        run_case("large scores", &t);
        t = at_default(2, 2, 1, 16, 70, 1, 3);
        t.scale = 1e4f;
        t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        run_case("large scores", &t);
        t = at_default(1, 2, 2, 17, 65, 64, 8);
        t.qk = 30.0f; /* |q.k| up to ~6e4 with the default scale 1/8 */
        t.poison = 1;
        t.klen = KL_HALF;
        run_case("large scores", &t);
        t = at_default(2, 2, 1, 9, 33, 8, 8);
        t.scale = -1e4f;
        t.softcap = 50.0f;
        run_case("large scores", &t);
        /* scaled maxima near FLT_MAX, no mask (plain scores), fused and rows paths: past 2^24
         * a row takes the per-score transform (exp(fma(s, scale, -max)) would overflow) */
        t = at_default(1, 2, 1, 16, 300, 8, 8);
        t.scale = 1e36f;
        run_case("large scores", &t);
        t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        run_case("large scores", &t);
        t.Lq = 3;
        run_case("large scores", &t);
    }
}

/* Query counts around the path switch (rows path below 12 rows) and the query tile, every
 * feature on the fused path: causal on the diagonal tiles, masks, poisoned K/V (inf/NaN in
 * a V tile takes the tile's p * V row by row), GQA, strides; and the scores modes. */
static void test_tiles(void)
{
    const size_t tq = attn_attention_query_tile(), tk = ATTN__TK;
    const size_t lq[] = {7, 8, 11, 12, 13, tq - 1, tq, tq + 1, tq + 34, 2 * tq + 5};
    const size_t lk[] = {tk / 2 + 1, tk - 1, tk, tk + 1, 2 * tk + 1, 2 * tk + 22};
    size_t a, c;
    long idx = 0;
    for (a = 0; a < sizeof lq / sizeof lq[0]; a++)
        for (c = 0; c < sizeof lk / sizeof lk[0]; c++, idx++) {
            at_case t = at_default(1 + (size_t)(idx % 2), 2, idx % 3 ? 1 : 2, lq[a], lk[c],
                                   DSET[idx % 7], DSET[(idx + 3) % 7]);
            t.lay = (int)(idx % 7);
            t.off = (int)(idx % 2);
            t.wsoff = (int)(idx / 2 % 2);
            switch (idx % 5) {
            case 0: break;
            case 1: t.causal = ATTN_CAUSAL_BOTTOM_RIGHT; break;
            case 2: t.causal = ATTN_CAUSAL_OFFSET; t.coff = 0; break;
            case 3: t.causal = ATTN_CAUSAL_OFFSET; t.coff = -(ptrdiff_t)(idx % 40); break;
            default:
                t.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
                t.fmask = MK_PER_HEAD;
                t.finf = 0.1f;
                break;
            }
            if (idx % 4 == 1) t.bmask = MK_FULL, t.bzero = 0.1f;
            if (idx % 6 == 2) t.klen = KL_RANDOM;
            if (idx % 9 == 4) t.softcap = 8.0f, t.qk = 2.0f;
            t.poison = idx % 3 != 1;
            t.nan_q = idx % 7 == 3;
            t.kill_rows = idx % 5 == 4;
            if (idx % 8 == 5) t.scale = -0.3f;
            if (idx % 5 == 2) t.scores = 1 + (int)(idx % 3);
            if (idx % 4 == 3) t.kv_start = lk[c] - 1 - (size_t)(idx % 3) * (tk / 2); /* a ring */
            run_case("tiles", &t);
        }
}

/* The ALiBi paper's get_slopes (github.com/ofirpress/attention_with_linear_biases), in
 * double: the power-of-two rule, and for other counts the nearest power's slopes followed by
 * every other slope of twice that count. */
static void ref_slopes(size_t n, double *out)
{
    size_t p2 = 1, i;
    while (p2 * 2 <= n) p2 *= 2;
    for (i = 0; i < p2; i++) out[i] = pow(pow(2.0, -pow(2.0, -(log2((double)p2) - 3))), i + 1);
    if (p2 < n) {
        double *twice = (double *)xmalloc(2 * p2 * sizeof(double));
        ref_slopes(2 * p2, twice);
        for (i = 0; i < n - p2; i++) out[p2 + i] = twice[2 * i];
        free(twice);
    }
}

static void test_alibi_slopes(void)
{
    float got[80];
    double want[80];
    size_t n, i;
    for (n = 1; n <= 80; n++) {
        ref_slopes(n, want);
        check(attn_alibi_slopes(n, got) == ATTN_OK, "attn_alibi_slopes(%zu) refused", n);
        for (i = 0; i < n; i++)
            check(fabs((double)got[i] - want[i]) <= 6e-8 * want[i],
                  "attn_alibi_slopes(%zu)[%zu] = %.9g, the paper's %.9g", n, i, got[i], want[i]);
    }
}

/* ALiBi, sliding windows and sinks: query lengths across the decode rows path, one and two
 * query tiles, key lengths across key tiles (windows that skip whole tiles), every causal
 * kind, grouped heads, masks, key lengths, poisoned keys outside the window, scores. */
static void test_bias(void)
{
    const size_t tq = attn_attention_query_tile(), tk = ATTN__TK;
    const size_t lq[] = {1, 3, 12, tq + 9};
    const size_t lk[] = {1, 9, tk + 3, 3 * tk + 5};
    const size_t win[] = {0, 1, 2, 7, tk - 1, tk + 1, 1000};
    size_t a, c, v;
    long idx = 0;
    for (a = 0; a < sizeof lq / sizeof lq[0]; a++)
        for (c = 0; c < sizeof lk / sizeof lk[0]; c++)
            for (v = 0; v < 7; v++, idx++) {
                at_case t = at_default(2, idx % 3 ? 8 : 3, idx % 3 ? 2 : 3, lq[a], lk[c],
                                       DSET[idx % 5], DSET[(idx + 2) % 5]);
                t.lay = (int)(idx % 7);
                t.off = (int)(idx % 2);
                t.window = win[idx % 7];
                t.alibi = (int)(idx % 3);
                t.sinks = idx % 4 != 1;
                if (!t.window && !t.alibi && !t.sinks) t.sinks = 1;
                switch (idx % 4) {
                case 0: break;
                case 1: t.causal = ATTN_CAUSAL_BOTTOM_RIGHT; break;
                case 2: t.causal = ATTN_CAUSAL_OFFSET; t.coff = (ptrdiff_t)(idx % 5) - 2; break;
                default: t.causal = ATTN_CAUSAL_BOTTOM_RIGHT; t.klen = KL_RANDOM; break;
                }
                if (idx % 5 == 3) t.fmask = MK_PER_HEAD, t.finf = 0.1f;
                if (idx % 6 == 4) t.bmask = MK_KEYPAD, t.bzero = 0.2f;
                if (idx % 9 == 2) t.softcap = 6.0f, t.qk = 2.0f;
                t.poison = idx % 3 != 0;
                t.kill_rows = idx % 11 == 6;
                if (idx % 3 == 1) t.kv_start = (size_t)(idx * 37 + 1) % lk[c]; /* a ring */
                if (idx % 4 == 3 && lq[a] * lk[c] < 20000) t.scores = 1 + (int)(idx / 4 % 3);
                if (t.scores) t.kv_start = (lk[c] / 2 + 1) % lk[c]; /* scored past the wrap */
                run_case("alibi/window/sinks", &t);
            }
}

/* A ring cache: appends of 1 to capacity positions in both layouts; after each, every
 * filled row holds its position's key (value k = position + 1000 (b, g) + c / 100), len,
 * start and pos as documented; attention through attn_attention_init_kv against the same
 * keys in order (the reference, within run_case's tolerance). */
static void test_kv_ring(void)
{
    enum { B = 2, KVH = 2, H = 4, CAP = 7, DK = 3, DV = 2, LQ = 2 };
    static const size_t steps[] = {3, 5, 1, 7, 2, 6, 4, 7, 1};
    float kc[B * KVH * CAP * DK], vc[B * KVH * CAP * DV], kn[B * KVH * CAP * DK],
        vn[B * KVH * CAP * DV], ko[B * KVH * CAP * DK], vo[B * KVH * CAP * DV];
    float q[B * H * LQ * DK], o1[B * H * LQ * DV], o2[B * H * LQ * DV];
    unsigned char ws[64 * 1024];
    size_t si, pos = 0, b, g, t, c, i, bad = 0;
    attn_kv_cache kv;
    check(attn_kv_cache_init_ring(&kv, ATTN_F32, kc, vc, B, KVH, CAP, DK, DV) == ATTN_OK &&
              kv.ring == 1 && kv.len == 0 && kv.start == 0 && kv.pos == 0,
          "ring: init");
    for (i = 0; i < B * H * LQ * DK; i++) q[i] = check_uniform(-2.0f, 2.0f);
    for (si = 0; si < sizeof steps / sizeof steps[0]; si++) {
        const size_t n = steps[si];
        const attn_layout lay = si % 2 ? ATTN_LAYOUT_BLHD : ATTN_LAYOUT_BHLD;
        size_t len;
        attn_attention_params p;
        for (b = 0; b < B; b++)
            for (g = 0; g < KVH; g++)
                for (t = 0; t < n; t++) {
                    const size_t r = lay == ATTN_LAYOUT_BHLD ? (b * KVH + g) * n + t
                                                             : (b * n + t) * KVH + g;
                    for (c = 0; c < DK; c++)
                        kn[r * DK + c] = (float)(pos + t) + 1000.0f * (float)(b * KVH + g) +
                                         (float)c / 100.0f;
                    for (c = 0; c < DV; c++) vn[r * DV + c] = -kn[r * DK + c];
                }
        check(attn_kv_cache_append(&kv, n, kn, vn, lay) == ATTN_OK, "ring: append %zu", n);
        pos += n;
        len = pos < CAP ? pos : CAP;
        check(kv.pos == pos && kv.len == len && kv.start == (pos < CAP ? 0 : pos % CAP),
              "ring: after %zu positions len %zu start %zu pos %zu", pos, kv.len, kv.start,
              kv.pos);
        for (b = 0; b < B; b++) /* key j (position pos - len + j) in row (start + j) % CAP */
            for (g = 0; g < KVH; g++)
                for (t = 0; t < len; t++) {
                    const size_t row = (b * KVH + g) * CAP + (kv.start + t) % CAP;
                    const size_t in = (b * KVH + g) * len + t;
                    for (c = 0; c < DK; c++) {
                        const float want = (float)(pos - len + t) +
                                           1000.0f * (float)(b * KVH + g) + (float)c / 100.0f;
                        if (kc[row * DK + c] != want) bad++;
                        ko[in * DK + c] = want;
                    }
                    for (c = 0; c < DV; c++) {
                        if (vc[row * DV + c] != -ko[in * DK + c]) bad++;
                        vo[in * DV + c] = vc[row * DV + c];
                    }
                }
        /* scaled down keys: the positions' values would saturate the softmax */
        p = attn_attention_init_kv(&kv, H, LQ, q, o1, ATTN_LAYOUT_BHLD, ATTN_CAUSAL_BOTTOM_RIGHT);
        check(p.kv_start == kv.start, "ring: init_kv's kv_start");
        p.scale = 1e-4f;
        check(attn_attention(&p, ws, sizeof ws) == ATTN_OK, "ring: attention refused");
        p = attn_attention_init(B, H, KVH, LQ, len, DK, DV, q, ko, vo, o2, ATTN_LAYOUT_BHLD);
        p.causal = ATTN_CAUSAL_BOTTOM_RIGHT, p.scale = 1e-4f;
        check(attn_attention(&p, ws, sizeof ws) == ATTN_OK, "ring: in-order attention refused");
        for (i = 0; i < B * H * LQ * DV; i++)
            if (!(fabsf(o1[i] - o2[i]) <= 2e-5f * (1.0f + fabsf(o2[i])))) bad++;
    }
    check(bad == 0, "ring: %zu rows or outputs wrong", bad);
    check(attn_kv_cache_append(&kv, CAP + 1, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_CAPACITY &&
              kv.pos == pos, "ring: an append past the capacity accepted");
    kv.start = CAP;
    check(attn_kv_cache_append(&kv, 1, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_ARG,
          "ring: start past the capacity accepted");
    kv.start = 1, kv.ring = 0;
    check(attn_kv_cache_append(&kv, 1, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_ARG,
          "ring: a plain cache with start 1 accepted");
    kv.start = 0, kv.ring = 1;
}

/* The KV cache: appends in both layouts, contents, capacity errors, and attention through
 * attn_attention_init_kv against the same keys passed directly (bit-identical). */
static void test_kv_cache(void)
{
    const size_t B = 2, KVH = 2, H = 4, cap = 40, d = 8, dv = 5;
    float *kc = (float *)xmalloc(B * KVH * cap * d * sizeof(float));
    float *vc = (float *)xmalloc(B * KVH * cap * dv * sizeof(float));
    float *kn = (float *)xmalloc(B * KVH * cap * d * sizeof(float));
    float *vn = (float *)xmalloc(B * KVH * cap * dv * sizeof(float));
    float *kref = (float *)xmalloc(B * KVH * cap * d * sizeof(float));
    float *vref = (float *)xmalloc(B * KVH * cap * dv * sizeof(float));
    static const size_t steps[] = {5, 1, 0, 17, 1, 9};
    size_t si, len = 0, b, g, t, c, i;
    attn_kv_cache kv, saved;
    attn_status st;
    int ok = 1;
    for (i = 0; i < B * KVH * cap * d; i++) kc[i] = O_GUARD;
    for (i = 0; i < B * KVH * cap * dv; i++) vc[i] = O_GUARD;
    check(attn_kv_cache_init(&kv, kc, vc, B, KVH, cap, d, dv) == ATTN_OK && kv.len == 0,
          "kv cache: init failed");
    check(attn_kv_cache_init(NULL, kc, vc, B, KVH, cap, d, dv) == ATTN_ERR_NULL &&
              attn_kv_cache_init(&saved, NULL, vc, B, KVH, cap, d, dv) == ATTN_ERR_NULL &&
              attn_kv_cache_init(&saved, kc, vc, B, 0, cap, d, dv) == ATTN_ERR_SIZE &&
              attn_kv_cache_init(&saved, kc, vc, B, KVH, 0, d, dv) == ATTN_ERR_SIZE &&
              attn_kv_cache_init(&saved, kc, vc, SIZE_MAX / 4, KVH, SIZE_MAX / 4, d, dv) ==
                  ATTN_ERR_OVERFLOW,
          "kv cache: init error statuses");
    for (si = 0; si < sizeof steps / sizeof steps[0]; si++) {
        const size_t n = steps[si];
        const attn_layout lay = si % 2 ? ATTN_LAYOUT_BLHD : ATTN_LAYOUT_BHLD;
        for (b = 0; b < B; b++)
            for (g = 0; g < KVH; g++)
                for (t = 0; t < n; t++) {
                    const size_t ko = lay == ATTN_LAYOUT_BHLD ? ((b * KVH + g) * n + t) * d
                                                              : ((b * n + t) * KVH + g) * d;
                    const size_t vo = lay == ATTN_LAYOUT_BHLD ? ((b * KVH + g) * n + t) * dv
                                                              : ((b * n + t) * KVH + g) * dv;
                    for (c = 0; c < d; c++)
                        kn[ko + c] = kref[((b * KVH + g) * cap + len + t) * d + c] =
                            check_uniform(-1, 1);
                    for (c = 0; c < dv; c++)
                        vn[vo + c] = vref[((b * KVH + g) * cap + len + t) * dv + c] =
                            check_uniform(-1, 1);
                }
        st = attn_kv_cache_append(&kv, n, kn, vn, lay);
        len += n;
        check(st == ATTN_OK && kv.len == len, "kv cache: append %zu (%s) gave %s, len %zu", n,
              lay == ATTN_LAYOUT_BHLD ? "BHLD" : "BLHD", attn_status_string(st), kv.len);
    }
    for (b = 0; b < B; b++)
        for (g = 0; g < KVH; g++)
            for (t = 0; t < cap; t++) {
                for (c = 0; c < d; c++) {
                    const float got = kc[((b * KVH + g) * cap + t) * d + c];
                    if (t < len ? !same_bits(got, kref[((b * KVH + g) * cap + t) * d + c])
                                : !same_bits(got, O_GUARD))
                        ok = 0;
                }
                for (c = 0; c < dv; c++) {
                    const float got = vc[((b * KVH + g) * cap + t) * dv + c];
                    if (t < len ? !same_bits(got, vref[((b * KVH + g) * cap + t) * dv + c])
                                : !same_bits(got, O_GUARD))
                        ok = 0;
                }
            }
    check(ok, "kv cache: contents after the appends differ (or positions past len written)");
    saved = kv;
    check(attn_kv_cache_append(&kv, cap - len + 1, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_CAPACITY &&
              kv.len == len && memcmp(&saved, &kv, sizeof kv) == 0,
          "kv cache: overfull append must give ATTN_ERR_CAPACITY and change nothing");
    for (i = len * d, ok = 1; i < cap * d; i++)
        if (!same_bits(kc[i], O_GUARD)) ok = 0;
    check(ok, "kv cache: an overfull append wrote into the cache");
    check(attn_kv_cache_append(NULL, 1, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_NULL &&
              attn_kv_cache_append(&kv, 1, NULL, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_NULL &&
              attn_kv_cache_append(&kv, 1, kn, vn, (attn_layout)7) == ATTN_ERR_ARG,
          "kv cache: append error statuses");
    kv.len = cap + 1;
    check(attn_kv_cache_append(&kv, 0, kn, vn, ATTN_LAYOUT_BHLD) == ATTN_ERR_ARG,
          "kv cache: len > capacity must be ATTN_ERR_ARG");
    kv.len = len;
    /* attention of 3 new queries (causal, bottom-right) through the cache == direct */
    {
        const size_t lq = 3;
        float *q = (float *)xmalloc(B * H * lq * d * sizeof(float));
        float *o1 = (float *)xmalloc(B * H * lq * dv * sizeof(float));
        float *o2 = (float *)xmalloc(B * H * lq * dv * sizeof(float));
        attn_attention_params p, p2;
        size_t wsz;
        unsigned char *ws;
        for (i = 0; i < B * H * lq * d; i++) q[i] = check_uniform(-1, 1);
        p = attn_attention_init_kv(&kv, H, lq, q, o1, ATTN_LAYOUT_BLHD, ATTN_CAUSAL_BOTTOM_RIGHT);
        check(p.kv_len == len && p.k == kc && p.v == vc && p.k_sh == cap * d && p.v_sl == dv &&
                  p.causal == ATTN_CAUSAL_BOTTOM_RIGHT && p.q_sl == H * d,
              "kv cache: attn_attention_init_kv fields");
        p2 = attn_attention_init(B, H, KVH, lq, len, d, dv, q, kref, vref, o2, ATTN_LAYOUT_BLHD);
        p2.k_sh = cap * d, p2.k_sb = KVH * cap * d, p2.k_sl = d;
        p2.v_sh = cap * dv, p2.v_sb = KVH * cap * dv, p2.v_sl = dv;
        p2.causal = ATTN_CAUSAL_OFFSET;
        p2.causal_offset = (ptrdiff_t)(len - lq);
        wsz = attn_attention_workspace_size(&p);
        ws = (unsigned char *)xmalloc(wsz);
        check(attn_attention(&p, ws, wsz) == ATTN_OK && attn_attention(&p2, ws, wsz) == ATTN_OK &&
                  memcmp(o1, o2, B * H * lq * dv * sizeof(float)) == 0,
              "kv cache: attention through the cache differs from the direct call");
        saved.k = NULL;
        p = attn_attention_init_kv(&saved, H, lq, q, o1, ATTN_LAYOUT_BLHD, ATTN_CAUSAL_NONE);
        check(attn_attention(&p, ws, wsz) == ATTN_ERR_SIZE,
              "kv cache: init_kv of an invalid cache must give params attn_attention rejects");
        free(q);
        free(o1);
        free(o2);
        free(ws);
    }
    free(kc);
    free(vc);
    free(kn);
    free(vn);
    free(kref);
    free(vref);
}

/* attn_attention_init: sizes, pointers, strides of both layouts, defaults. */
static void test_init(void)
{
    float q[1] = {0}, k[1] = {0}, v[1] = {0}, o[1] = {0};
    const size_t B = 3, H = 4, KVH = 2, Lq = 5, Lk = 7, d = 6, dv = 9;
    attn_attention_params p = attn_attention_init(B, H, KVH, Lq, Lk, d, dv, q, k, v, o,
                                                  ATTN_LAYOUT_BHLD);
    check(p.batch == B && p.heads == H && p.kv_heads == KVH && p.q_len == Lq && p.kv_len == Lk &&
              p.head_dim == d && p.v_head_dim == dv,
          "init: sizes not stored");
    check(p.q == q && p.k == k && p.v == v && p.o == o, "init: pointers not stored");
    check(p.q_sl == d && p.q_sh == Lq * d && p.q_sb == H * Lq * d && p.k_sl == d &&
              p.k_sh == Lk * d && p.k_sb == KVH * Lk * d && p.v_sl == dv && p.v_sh == Lk * dv &&
              p.v_sb == KVH * Lk * dv && p.o_sl == dv && p.o_sh == Lq * dv &&
              p.o_sb == H * Lq * dv,
          "init: BHLD strides wrong");
    check(p.scale == 0.0f && p.softcap == 0.0f && p.causal == ATTN_CAUSAL_NONE &&
              p.causal_offset == 0 && p.mask == NULL && p.bool_mask == NULL &&
              p.key_lengths == NULL,
          "init: defaults (scale 0, no softcap, no masks) not set");
    p = attn_attention_init(B, H, KVH, Lq, Lk, d, dv, q, k, v, o, ATTN_LAYOUT_BLHD);
    check(p.q_sh == d && p.q_sl == H * d && p.q_sb == Lq * H * d && p.k_sh == d &&
              p.k_sl == KVH * d && p.k_sb == Lk * KVH * d && p.v_sh == dv &&
              p.v_sl == KVH * dv && p.v_sb == Lk * KVH * dv && p.o_sh == dv &&
              p.o_sl == H * dv && p.o_sb == Lq * H * dv,
          "init: BLHD strides wrong");
    check(p.scale == 0.0f && p.softcap == 0.0f && p.causal == ATTN_CAUSAL_NONE &&
              p.mask == NULL && p.bool_mask == NULL && p.key_lengths == NULL,
          "init: BLHD defaults not set");
}

/* The workspace query depends on head_dim and v_head_dim only. */
static void test_workspace_query(void)
{
    static const size_t dims[][2] = {{1, 1}, {8, 3}, {64, 64}, {80, 128}, {128, 128}, {256, 256}};
    float dummy[4] = {0, 0, 0, 0};
    uint8_t bdummy[4] = {1, 1, 1, 1};
    int64_t kl[4] = {1, 1, 1, 1};
    size_t s;
    for (s = 0; s < sizeof dims / sizeof dims[0]; s++) {
        const size_t d = dims[s][0], dv = dims[s][1];
        attn_attention_params p =
            attn_attention_init(1, 1, 1, 1, 1, d, dv, dummy, dummy, dummy, dummy, ATTN_LAYOUT_BHLD);
        const size_t w0 = attn_attention_workspace_size(&p);
        size_t w;
        p = attn_attention_init(1, 1, 1, 1, 100000, d, dv, dummy, dummy, dummy, dummy,
                                ATTN_LAYOUT_BHLD);
        w = attn_attention_workspace_size(&p);
        check(w == w0, "workspace query: d=%zu dv=%zu: kv_len 1 -> %zu bytes, 100000 -> %zu",
              d, dv, w0, w);
        p = attn_attention_init(1, 1, 1, 100000, 1, d, dv, dummy, dummy, dummy, dummy,
                                ATTN_LAYOUT_BLHD);
        w = attn_attention_workspace_size(&p);
        check(w == w0, "workspace query: d=%zu dv=%zu: q_len 100000 -> %zu bytes, want %zu", d,
              dv, w, w0);
        p = attn_attention_init(8, 16, 4, 4096, 4096, d, dv, dummy, dummy, dummy, dummy,
                                ATTN_LAYOUT_BLHD);
        p.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        p.softcap = 30.0f;
        p.mask = dummy;
        p.bool_mask = bdummy;
        p.key_lengths = kl;
        w = attn_attention_workspace_size(&p);
        check(w == w0, "workspace query: d=%zu dv=%zu: big batch/heads/lengths with masks -> "
                       "%zu bytes, want %zu",
              d, dv, w, w0);
    }
    check(attn_attention_workspace_size(NULL) == 0, "workspace query: NULL params must give 0");
    {
        attn_attention_params p = attn_attention_init(1, 1, 1, 4, 4, 0, 8, dummy, dummy, dummy,
                                                      dummy, ATTN_LAYOUT_BHLD);
        check(attn_attention_workspace_size(&p) == 0, "workspace query: head_dim 0 must give 0");
        p = attn_attention_init(1, 1, 1, 4, 4, 8, 0, dummy, dummy, dummy, dummy, ATTN_LAYOUT_BHLD);
        check(attn_attention_workspace_size(&p) == 0, "workspace query: v_head_dim 0 must give 0");
    }
}

/* Error paths: each expects a status and O untouched. */
typedef struct err_env {
    float *q, *k, *v, *obuf, *o, *ocopy;
    size_t on; /* floats in obuf */
    unsigned char *ws;
    size_t wsz, wsbig;
} err_env;

static void expect_at(err_env *e, const char *what, const attn_attention_params *p, void *ws,
                      size_t wsz, attn_status want, attn_status alt)
{
    attn_status st;
    memcpy(e->ocopy, e->obuf, e->on * sizeof(float));
    st = attn_attention(p, ws, wsz);
    check(st == want || st == alt, "attention error path '%s': got %d (%s), want %d (%s)", what,
          (int)st, attn_status_string(st), (int)want, attn_status_string(want));
    check(memcmp(e->ocopy, e->obuf, e->on * sizeof(float)) == 0,
          "attention error path '%s': O was written", what);
}

static void test_errors(void)
{
    const size_t B = 2, H = 2, KVH = 1, Lq = 5, Lk = 7, d = 8, dv = 3;
    err_env e;
    attn_attention_params base, p;
    size_t i;
    attn_status st;

    e.q = (float *)xmalloc(B * H * Lq * d * sizeof(float));
    e.k = (float *)xmalloc(B * KVH * Lk * d * sizeof(float));
    e.v = (float *)xmalloc(B * KVH * Lk * dv * sizeof(float));
    e.on = B * H * Lq * dv + 64;
    e.obuf = (float *)xmalloc(e.on * sizeof(float));
    e.ocopy = (float *)xmalloc(e.on * sizeof(float));
    e.o = e.obuf;
    for (i = 0; i < B * H * Lq * d; i++) e.q[i] = check_uniform(-1.0f, 1.0f);
    for (i = 0; i < B * KVH * Lk * d; i++) e.k[i] = check_uniform(-1.0f, 1.0f);
    for (i = 0; i < B * KVH * Lk * dv; i++) e.v[i] = check_uniform(-1.0f, 1.0f);
    for (i = 0; i < e.on; i++) e.obuf[i] = O_GUARD;
    base = attn_attention_init(B, H, KVH, Lq, Lk, d, dv, e.q, e.k, e.v, e.o, ATTN_LAYOUT_BHLD);
    e.wsz = attn_attention_workspace_size(&base);
    e.wsbig = e.wsz + 4096; /* enough for every variant below: the errors are not about it */
    e.ws = (unsigned char *)xmalloc(e.wsbig);

    /* sanity: the base call succeeds, then restore O's guard for the untouched checks */
    st = attn_attention(&base, e.ws, e.wsz);
    check(st == ATTN_OK, "attention errors: the valid base call gave %s", attn_status_string(st));
    for (i = 0; i < e.on; i++) e.obuf[i] = O_GUARD;

    expect_at(&e, "params NULL", NULL, e.ws, e.wsbig, ATTN_ERR_NULL, ATTN_ERR_NULL);
    p = base; p.q = NULL;
    expect_at(&e, "q NULL", &p, e.ws, e.wsbig, ATTN_ERR_NULL, ATTN_ERR_NULL);
    p = base; p.k = NULL;
    expect_at(&e, "k NULL", &p, e.ws, e.wsbig, ATTN_ERR_NULL, ATTN_ERR_NULL);
    p = base; p.v = NULL;
    expect_at(&e, "v NULL", &p, e.ws, e.wsbig, ATTN_ERR_NULL, ATTN_ERR_NULL);
    p = base; p.o = NULL;
    expect_at(&e, "o NULL", &p, e.ws, e.wsbig, ATTN_ERR_NULL, ATTN_ERR_NULL);
    if (e.wsz > 0) {
        /* "a required pointer is NULL" vs "the workspace is missing": either status */
        expect_at(&e, "workspace NULL (size given)", &base, NULL, e.wsz, ATTN_ERR_WORKSPACE,
                  ATTN_ERR_NULL);
        expect_at(&e, "workspace NULL, size 0", &base, NULL, 0, ATTN_ERR_WORKSPACE, ATTN_ERR_NULL);
        expect_at(&e, "workspace size = query - 1", &base, e.ws, e.wsz - 1, ATTN_ERR_WORKSPACE,
                  ATTN_ERR_WORKSPACE);
        expect_at(&e, "workspace size 0 (non-NULL)", &base, e.ws, 0, ATTN_ERR_WORKSPACE,
                  ATTN_ERR_WORKSPACE);
        if (e.wsz > 2)
            expect_at(&e, "workspace size = query / 2", &base, e.ws, e.wsz / 2,
                      ATTN_ERR_WORKSPACE, ATTN_ERR_WORKSPACE);
    } else {
        printf("note: attn_attention_workspace_size() is 0; workspace error paths skipped\n");
    }
    /* batch 0 or q_len 0: an empty call (pointers, strides and workspace unchecked) */
    p = base; p.batch = 0;
    expect_at(&e, "batch 0", &p, e.ws, e.wsbig, ATTN_OK, ATTN_OK);
    p = base; p.batch = 0; p.q = NULL; p.k = NULL; p.q_sl = 0;
    expect_at(&e, "batch 0, q and k NULL, no workspace", &p, NULL, 0, ATTN_OK, ATTN_OK);
    check(attn_attention_tasks(&p) == 0 && attn_attention_task(&p, 0, NULL, 0) == ATTN_ERR_ARG,
          "batch 0: no work items, item 0 is ATTN_ERR_ARG");
    p = base; p.q_len = 0; p.kv_len = 0; p.o = NULL;
    expect_at(&e, "q_len 0 (kv_len 0 too)", &p, NULL, 0, ATTN_OK, ATTN_OK);
    p = base; p.batch = 0; p.heads = 0;
    expect_at(&e, "batch 0, heads 0", &p, e.ws, e.wsbig, ATTN_ERR_SIZE, ATTN_ERR_SIZE);
    p = base; p.q_len = 0; p.scale = NAN;
    expect_at(&e, "q_len 0, scale NaN", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
    {   /* overlaps: O over Q or K, O inside the workspace, O over the scores: nothing written */
        float *qc = (float *)xmalloc(B * H * Lq * d * sizeof(float));
        float *sc = (float *)xmalloc(400 * sizeof(float));
        unsigned char *wc = (unsigned char *)xmalloc(e.wsbig);
        memcpy(qc, e.q, B * H * Lq * d * sizeof(float));
        for (i = 0; i < 400; i++) sc[i] = O_GUARD;
        p = base; p.o = e.q;
        expect_at(&e, "O over Q", &p, e.ws, e.wsbig, ATTN_ERR_ALIAS, ATTN_ERR_ALIAS);
        p = base; p.o = e.k + 1;
        expect_at(&e, "O over K", &p, e.ws, e.wsbig, ATTN_ERR_ALIAS, ATTN_ERR_ALIAS);
        p = base; p.o = (float *)(void *)(e.ws + 64);
        memcpy(wc, e.ws, e.wsbig);
        expect_at(&e, "O inside the workspace", &p, e.ws, e.wsbig, ATTN_ERR_ALIAS, ATTN_ERR_ALIAS);
        check(memcmp(wc, e.ws, e.wsz) == 0, "O inside the workspace: the workspace was written");
        p = base; p.scores = sc, p.scores_sq = Lk, p.scores_sh = Lq * Lk, p.scores_sb = H * Lq * Lk;
        p.o = sc + 100;
        expect_at(&e, "O over the scores", &p, e.ws, e.wsbig, ATTN_ERR_ALIAS, ATTN_ERR_ALIAS);
        for (i = 0; i < 400; i++) check(sc[i] == O_GUARD, "O over the scores: written at %zu", i);
        p = base; p.scores = sc, p.scores_sq = Lk, p.scores_sh = Lq * Lk, p.scores_sb = H * Lq * Lk;
        check(attn_attention(&p, e.ws, e.wsbig) == ATTN_OK, "scores apart from O: refused");
        for (i = 0; i < e.on; i++) e.obuf[i] = O_GUARD;
        check(memcmp(qc, e.q, B * H * Lq * d * sizeof(float)) == 0, "overlap cases wrote Q");
        free(qc);
        free(sc);
        free(wc);
    }
    p = base; p.heads = 0;
    expect_at(&e, "heads 0", &p, e.ws, e.wsbig, ATTN_ERR_SIZE, ATTN_ERR_SIZE);
    p = base; p.kv_heads = 0;
    expect_at(&e, "kv_heads 0", &p, e.ws, e.wsbig, ATTN_ERR_SIZE, ATTN_ERR_SIZE);
    p = base; p.kv_len = 0;
    expect_at(&e, "kv_len 0", &p, e.ws, e.wsbig, ATTN_ERR_SIZE, ATTN_ERR_SIZE);
    p = base; p.head_dim = 0;
    expect_at(&e, "head_dim 0", &p, e.ws, e.wsbig, ATTN_ERR_SIZE, ATTN_ERR_SIZE);
    p = base; p.v_head_dim = 0;
    expect_at(&e, "v_head_dim 0", &p, e.ws, e.wsbig, ATTN_ERR_SIZE, ATTN_ERR_SIZE);
    p = base; p.kv_heads = 3; /* 3 > heads = 2 */
    expect_at(&e, "kv_heads 3 with heads 2", &p, e.ws, e.wsbig, ATTN_ERR_SIZE, ATTN_ERR_SIZE);
    {
        /* heads 4, kv_heads 3: does not divide (tensors big enough for 4 heads) */
        attn_attention_params p4;
        float *q4 = (float *)xmalloc(B * 4 * Lq * d * sizeof(float));
        float *k4 = (float *)xmalloc(B * 3 * Lk * d * sizeof(float));
        float *v4 = (float *)xmalloc(B * 3 * Lk * dv * sizeof(float));
        float *o4 = (float *)xmalloc(B * 4 * Lq * dv * sizeof(float));
        for (i = 0; i < B * 4 * Lq * d; i++) q4[i] = 0.5f;
        for (i = 0; i < B * 3 * Lk * d; i++) k4[i] = 0.5f;
        for (i = 0; i < B * 3 * Lk * dv; i++) v4[i] = 0.5f;
        for (i = 0; i < B * 4 * Lq * dv; i++) o4[i] = O_GUARD;
        p4 = attn_attention_init(B, 4, 3, Lq, Lk, d, dv, q4, k4, v4, o4, ATTN_LAYOUT_BHLD);
        st = attn_attention(&p4, e.ws, e.wsbig);
        check(st == ATTN_ERR_SIZE, "attention error path 'kv_heads 3 with heads 4': got %s",
              attn_status_string(st));
        for (i = 0; i < B * 4 * Lq * dv; i++)
            if (!same_bits(o4[i], O_GUARD)) break;
        check(i == B * 4 * Lq * dv, "attention error path 'kv_heads 3 with heads 4': O written");
        free(q4);
        free(k4);
        free(v4);
        free(o4);
    }
    p = base; p.q_sl = d - 1;
    expect_at(&e, "q_sl < head_dim (BHLD)", &p, e.ws, e.wsbig, ATTN_ERR_LD, ATTN_ERR_LD);
    p = base; p.k_sl = d - 1;
    expect_at(&e, "k_sl < head_dim (BHLD)", &p, e.ws, e.wsbig, ATTN_ERR_LD, ATTN_ERR_LD);
    p = base; p.v_sl = dv - 1;
    expect_at(&e, "v_sl < v_head_dim (BHLD)", &p, e.ws, e.wsbig, ATTN_ERR_LD, ATTN_ERR_LD);
    p = base; p.o_sl = dv - 1;
    expect_at(&e, "o_sl < v_head_dim (BHLD)", &p, e.ws, e.wsbig, ATTN_ERR_LD, ATTN_ERR_LD);
    p = base; p.q_sl = 0;
    expect_at(&e, "q_sl 0", &p, e.ws, e.wsbig, ATTN_ERR_LD, ATTN_ERR_LD);
    p = base; p.scale = NAN;
    expect_at(&e, "scale NaN", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
    p = base; p.softcap = -1.0f;
    expect_at(&e, "softcap -1", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
    p = base; p.causal = (attn_causal)3;
    expect_at(&e, "causal 3", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
    { /* ALiBi slopes finite, sinks below +inf (-inf: none); neither under an output */
        float al[2] = {0.5f, NAN}, sk[2] = {1.0f, NAN};
        p = base; p.alibi_slopes = al;
        expect_at(&e, "ALiBi slope NaN", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
        al[1] = -INFINITY;
        expect_at(&e, "ALiBi slope -inf", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
        p = base; p.sinks = sk;
        expect_at(&e, "sink NaN", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
        sk[1] = INFINITY;
        expect_at(&e, "sink +inf", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
        sk[1] = -INFINITY, al[1] = 0.25f;
        p.alibi_slopes = al, p.window = 2;
        check(attn_attention(&p, e.ws, e.wsbig) == ATTN_OK, "sink -inf, ALiBi, window: refused");
        for (i = 0; i < e.on; i++) e.obuf[i] = O_GUARD;
        p = base; p.alibi_slopes = e.o + 5;
        expect_at(&e, "ALiBi slopes under O", &p, e.ws, e.wsbig, ATTN_ERR_ALIAS, ATTN_ERR_ALIAS);
        memcpy(e.ws + 32, sk, sizeof(float)); /* valid values: the overlap is the error */
        memcpy(e.ws + 36, sk, sizeof(float));
        p = base; p.sinks = (const float *)(const void *)(e.ws + 32);
        expect_at(&e, "sinks in the workspace", &p, e.ws, e.wsbig, ATTN_ERR_ALIAS,
                  ATTN_ERR_ALIAS);
        check(attn_alibi_slopes(2, NULL) == ATTN_ERR_NULL && attn_alibi_slopes(0, al) ==
                  ATTN_ERR_SIZE, "attn_alibi_slopes: NULL or 0 heads accepted");
    }
#ifndef __cplusplus /* outside the enum's range of values in C++ */
    p = base; p.causal = (attn_causal)100;
    expect_at(&e, "causal 100", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
#endif

    {
        float sc[2 * 2 * 5 * 7];
        p = base; p.scores = sc; p.scores_sq = Lk, p.scores_sh = Lq * Lk, p.scores_sb = H * Lq * Lk;
        p.scores_mode = (attn_scores)3;
        expect_at(&e, "scores mode 3", &p, e.ws, e.wsbig, ATTN_ERR_ARG, ATTN_ERR_ARG);
        p.scores_mode = ATTN_SCORES_PROBS; p.scores_sq = Lk - 1;
        expect_at(&e, "scores_sq < kv_len", &p, e.ws, e.wsbig, ATTN_ERR_LD, ATTN_ERR_LD);
    }
    p = base;
    st = attn_attention_task(&p, attn_attention_tasks(&p), e.ws, e.wsbig);
    check(st == ATTN_ERR_ARG, "attention task past the last: got %s", attn_status_string(st));
    check(memcmp(e.ocopy, e.obuf, e.on * sizeof(float)) == 0,
          "attention task past the last: O written");
    check(attn_attention_tasks(NULL) == 0, "attn_attention_tasks(NULL) must be 0");
    p = base; p.v_head_dim = SIZE_MAX / 16;
    check(attn_attention_workspace_size(&p) == 0, "workspace query: a huge v_head_dim must give 0");

    /* the valid call still works with exactly the queried size after all that */
    st = attn_attention(&base, e.ws, e.wsz);
    check(st == ATTN_OK, "attention errors: the base call after the error paths gave %s",
          attn_status_string(st));
    free(e.q);
    free(e.k);
    free(e.v);
    free(e.obuf);
    free(e.ocopy);
    free(e.ws);
}

/* api.h's determinism of a row: the last query row of each head (the same query, K and V),
 * causal bottom-right, in calls of q_len 1 .. 40: the same bits in every call whose query
 * tile has fewer than ATTN__FUSED_MIN rows (the rows path; grouped-query heads together) and
 * in every call whose tile has more (the tiled product); the two paths may differ. */
static void test_row_paths(void)
{
    const size_t L = 300, d = 64, H = 4, KVH = 2, QM = 40;
    float *q = (float *)xmalloc(H * QM * d * sizeof(float));
    float *k = (float *)xmalloc(KVH * L * d * sizeof(float));
    float *v = (float *)xmalloc(KVH * L * d * sizeof(float));
    float *o = (float *)xmalloc(H * QM * d * sizeof(float));
    float *qq = (float *)xmalloc(H * QM * d * sizeof(float));
    float *first[2];
    size_t i, h, nq;
    first[0] = (float *)xmalloc(H * d * sizeof(float));
    first[1] = (float *)xmalloc(H * d * sizeof(float));
    for (i = 0; i < H * QM * d; i++) q[i] = check_uniform(-1.0f, 1.0f);
    for (i = 0; i < KVH * L * d; i++)
        k[i] = check_uniform(-1.0f, 1.0f), v[i] = check_uniform(-1.0f, 1.0f);
    for (nq = 1; nq <= QM; nq++) {
        attn_attention_params p;
        const int path = nq >= ATTN__FUSED_MIN;
        size_t wsz;
        void *ws;
        for (h = 0; h < H; h++) /* head h's last nq queries of its QM */
            memcpy(qq + h * nq * d, q + (h * QM + QM - nq) * d, nq * d * sizeof(float));
        p = attn_attention_init(1, H, KVH, nq, L, d, d, qq, k, v, o, ATTN_LAYOUT_BHLD);
        p.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        wsz = attn_attention_workspace_size(&p);
        ws = xmalloc(wsz);
        check(attn_attention(&p, ws, wsz) == ATTN_OK, "row_paths: q_len %zu", nq);
        for (h = 0; h < H; h++) {
            const float *last = o + (h * nq + nq - 1) * d;
            if (nq == 1 || nq == ATTN__FUSED_MIN) memcpy(first[path] + h * d, last, d * 4);
            else
                check(memcmp(first[path] + h * d, last, d * sizeof(float)) == 0,
                      "row_paths: head %zu's last row in a call of q_len %zu not the bits of "
                      "q_len %d", h, nq, path ? ATTN__FUSED_MIN : 1);
        }
        free(ws);
    }
    free(q), free(k), free(v), free(o), free(qq), free(first[0]), free(first[1]);
}

int main(void)
{
    check_begin("attention");
    check_seed(0xA77E17100ull);
    test_init();
    test_workspace_query();
    test_errors();
    test_lengths(0);
    test_lengths(3);
    test_dims();
    test_masks();
    test_causal();
    test_values();
    test_large();
    test_tiles();
    test_alibi_slopes();
    test_bias();
    test_kv_cache();
    test_kv_ring();
    test_row_paths();
    printf("attention: scores checked in %ld calls, worst %.3f of the tolerance\n", n_scores,
           max_scores_ratio);
    {
        size_t g;
        for (g = 0; g < sizeof gstats / sizeof gstats[0] && gstats[g].name; g++)
            printf("  %-18s %4ld calls: max error %.3g of max|V|, %.3f of the tolerance\n",
                   gstats[g].name, gstats[g].calls, gstats[g].rel, gstats[g].ratio);
    }
    printf("attention: %ld calls checked; max error %.3g of max|V| (%.3f of the tolerance)\n",
           n_calls, max_rel_err, max_tol_ratio);
    return check_end("attention");
}
