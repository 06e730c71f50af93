/* src/attention.h - fused attention (attn_attention and its work items).
 *
 * One (batch, head) at a time, its queries in tiles of ATTN__TQ rows that start at
 * multiples of ATTN__TQ, its keys in tiles of ATTN__TK that start at multiples of ATTN__TK.
 * A query tile takes one of two paths, chosen by its row count alone:
 *  - fused (at least ATTN__FUSED_MIN rows): the tile's queries are packed once into MR-row
 *    slivers; per key tile, K^T is packed into NR-column slivers and V into NR-column
 *    slivers; per query sliver, S = Q K^T by the matmul microkernel into an MR x TK buffer
 *    (L1), the online softmax on it, and acc += P V by the microkernel (P read in place).
 *    Causal: key tiles past a sliver's last visible key are skipped, and the partial tile on
 *    the diagonal is cut at the sliver's last visible key.
 *  - rows (fewer rows: decode): in groups of MR rows, the scores of up to four rows at a
 *    time over each block of keys while its K rows are in L1 (the rows share each K load;
 *    16-bit and q8_0 K rows are scored several at once and their lane sums reduced
 *    together), the online softmax per row, and acc += p V with a V row once for the group;
 *    K and V stream through once per group (out of cache, a tile's V rows requested while
 *    its K rows are scored, the next tile's K rows while its P V runs).
 * Online softmax per row: running max m, running sum l, acc scaled by exp(m_old - m_new) when
 * the max grows; O = acc / l at the end (0 when every key was masked).
 * Each row's arithmetic depends only on its own scores and on the tiles it belongs to, so
 * a call's output is the same bits however the caller splits batches, heads and query tiles
 * (attn_attention_task), and from run to run.
 */

/* K and V are stored as attn_dtype t (ATTN_F32, ATTN_F16, ATTN_BF16, or ATTN_Q8_0 blocks
 * along each row) and widened in registers as they are loaded (attn__vload_dt, exact): the
 * arithmetic is that of f32 rows holding the same values, so a 16-bit or int8 cache gives
 * the bits of the f32 path run on its widened values (but for the rows path's scores on a
 * q8_0 K where the CPU has AVX512-VNNI or AVX-VNNI: attn__kdots_qk8). The bodies below take t
 * as a constant (each is inlined into one function per type, the type switch outside the
 * loops over keys). */

/* Rows path scores: nr rows (1, 2 or 4) x ATTN__KD(t, nr) keys per pass, one fma chain each.
 * On 16-bit and q8_0 K, 2 and 4 rows make ATTN__KD_SUMS scores (at least 8 chains, for the
 * fma latency) whose lanes attn__vtsum sums together (no horizontal sum per score), one row
 * alone 4. An f32 K takes one key per pass: its rows, twice the bytes, stream from memory
 * faster read one after another (measured: 10-15% out of cache), so the passes share only
 * the K row's loads across the rows. */
#define ATTN__KD_SUMS (ATTN__VW > 8 ? ATTN__VW : 8)
#define ATTN__KD(t, nr) ((t) == ATTN_F32 ? 1 : (nr) == 1 ? 4 : ATTN__KD_SUMS / (nr))

/* acc[r * nk + u] = q[r] * key u over elements [i, d) (less than a vector), lane by lane:
 * the start of attn__dots_body's chains where d is not a multiple of ATTN__VW (rare, so one
 * copy for every type and shape) */
static ATTN__NOINLINE void attn__dots_part(attn_dtype t, const float *const *q, size_t nr,
                                           const void *const *k, size_t i, size_t d,
                                           attn__v *acc)
{
    const size_t nk = ATTN__KD(t, nr);
    size_t r, u;
    for (u = 0; u < nk; u++) {
        const attn__v kv = attn__vload_dt_part(t, k[u], i, d - i);
        for (r = 0; r < nr; r++)
            acc[r * nk + u] = attn__vmul(attn__vload_part(q[r] + i, d - i, 0.0f), kv);
    }
}

/* x[r * nk + u] = q[r] . key u over d elements for nr rows and nk = ATTN__KD(t, nr) keys (nr a
 * constant), keys of type t at k[u]: one chain per score, the part vector past d's whole
 * vectors first, then the whole vectors in order, then attn__vhsum's order over the lanes,
 * so each score has the same bits whatever nr is and wherever its row and key sit */
static ATTN__FORCE_INLINE void attn__dots_body(attn_dtype t, const float *const *q, size_t nr,
                                               const void *const *k, size_t d, float *x)
{
    const size_t nk = ATTN__KD(t, nr), dw = d - d % ATTN__VW;
    attn__v acc[ATTN__KD_SUMS], qv[4], kv, ds[ATTN__KD_SUMS];
    size_t i, r, u;
    ATTN__UNROLL16
    for (u = 0; u < ATTN__KD_SUMS; u++) ds[u] = attn__vzero(); /* (set before use) */
    if (dw < d) { /* acc never has its address taken: it stays in registers */
        attn__v part[ATTN__KD_SUMS];
        attn__dots_part(t, q, nr, k, dw, d, part);
        ATTN__UNROLL16
        for (u = 0; u < ATTN__KD_SUMS; u++) acc[u] = u < nr * nk ? part[u] : attn__vzero();
    } else {
        ATTN__UNROLL16
        for (u = 0; u < ATTN__KD_SUMS; u++) acc[u] = attn__vzero();
    }
    for (i = 0; i < dw; i += ATTN__VW) {
        ATTN__UNROLL16
        for (r = 0; r < nr; r++) qv[r] = attn__vload(q[r] + i);
        if (t == ATTN_Q8_0 && i % ATTN__QK == 0) /* a block's scales widened once */
            ATTN__UNROLL16
            for (u = 0; u < nk; u++)
                ds[u] = attn__vset1_f16(attn__q_scale(
                    (const unsigned char *)attn__dt_at(t, k[u], i)));
        ATTN__UNROLL16
        for (u = 0; u < nk; u++) {
            if (t == ATTN_Q8_0) /* attn__vload_q's d * q */
                kv = attn__vmul(ds[u], attn__vload_i8((const int8_t *)attn__dt_at(t, k[u], i)
                                                      + 2 + i % ATTN__QK));
            else
                kv = attn__vload_dt(t, k[u], i);
            ATTN__UNROLL16
            for (r = 0; r < nr; r++) acc[r * nk + u] = attn__vfma(qv[r], kv, acc[r * nk + u]);
        }
    }
    if (nr * nk % ATTN__VW == 0) {
        ATTN__UNROLL16
        for (u = 0; u < nr * nk; u += ATTN__VW) attn__vstore(x + u, attn__vtsum(acc + u));
    } else {
        ATTN__UNROLL16
        for (u = 0; u < nr * nk; u++) x[u] = attn__vhsum(acc[u]);
    }
}

/* Rows requested ahead of the scores: V row j, vb bytes at v + j * rs, or none (v NULL), as
 * K row j is scored; and K rows ATTN__DEC_KPF bytes ahead of the scores, up to row kn of the
 * tile's K (0: none; the scores read K across rows, which the hardware's prefetchers do not
 * follow as they follow one row) */
typedef struct {
    const unsigned char *v;
    size_t rs, vb, kn;
} attn__vpf;

/* Keys [j0, j0 + kb) of nr rows (a constant; nst of them stored, the others repeat the last):
 * s[r * lds + j] for keys j < n[r]; past the block's last key, its last key again */
static ATTN__FORCE_INLINE void attn__kdots_rows(attn_dtype t, const float *const *q, size_t nr,
                                                size_t nst, const size_t *n, size_t j0,
                                                size_t kb, const void *kt, size_t ld, size_t d,
                                                float *s, size_t lds, attn__vpf pf)
{
    const size_t nk = ATTN__KD(t, nr), kbytes = attn_dtype_bytes(t, d);
    const size_t ka = ATTN__DEC_KPF / kbytes > nk ? ATTN__DEC_KPF / kbytes : nk; /* keys ahead */
    const void *k[ATTN__KD_SUMS];
    float x[ATTN__KD_SUMS];
    size_t j, u, r;
    for (j = j0; j < j0 + kb; j += nk) {
        ATTN__UNROLL16
        for (u = 0; u < nk; u++)
            k[u] = attn__dt_at(t, kt, (j + u < j0 + kb ? j + u : j0 + kb - 1) * ld);
        for (u = 0; pf.v && u < nk && j + u < j0 + kb; u++)
            attn__prefetch_bytes(pf.v + (j + u) * pf.rs, pf.vb, 0);
        for (u = 0; nk > 1 && u < nk && j + u + ka < pf.kn; u++)
            attn__prefetch_bytes(attn__dt_at(t, kt, (j + u + ka) * ld), kbytes, 0);
        attn__dots_body(t, q, nr, k, d, x);
        for (r = 0; r < nst; r++)
            if (n[r] >= j + nk) memcpy(s + r * lds + j, x + r * nk, nk * sizeof(float));
            else
                for (u = 0; j + u < n[r]; u++) s[r * lds + j + u] = x[r * nk + u];
    }
}

/* s[r * lds + j] = q[r] . K row j for rows r < gr and keys j < n[r] (nmax the largest n[r];
 * K rows of type t at kt, ld elements apart): blocks of ATTN__KD_SUMS keys, each read into
 * L1 once for all the rows, up to four rows at a time (three as four); each score has the
 * same bits whatever gr is. pf's rows requested as the first rows' passes score the keys. */
static ATTN__FORCE_INLINE void attn__kdots_body(attn_dtype t, const float *const *q, size_t gr,
                                                const size_t *n, size_t nmax, const void *kt,
                                                size_t ld, size_t d, float *s, size_t lds,
                                                attn__vpf pf)
{
    size_t j0, r, kb;
    for (j0 = 0; j0 < nmax; j0 += kb) {
        attn__vpf p = pf; /* V's rows requested by the first rows' pass alone */
        kb = attn__min(ATTN__KD_SUMS, nmax - j0);
        for (r = 0; r < gr; r += 4, p.v = NULL, p.kn = 0) {
            const size_t nr = attn__min(4, gr - r);
            if (nr == 1) {
                attn__kdots_rows(t, q + r, 1, 1, n + r, j0, kb, kt, ld, d, s + r * lds, lds, p);
            } else if (nr == 2) {
                attn__kdots_rows(t, q + r, 2, 2, n + r, j0, kb, kt, ld, d, s + r * lds, lds, p);
            } else {
                const float *q4[4];
                q4[0] = q[r], q4[1] = q[r + 1], q4[2] = q[r + 2], q4[3] = q[r + nr - 1];
                attn__kdots_rows(t, q4, 4, nr, n + r, j0, kb, kt, ld, d, s + r * lds, lds, p);
            }
        }
    }
}

static void attn__kdots(attn_dtype t, const float *const *q, size_t gr, const size_t *n,
                        size_t nmax, const void *kt, size_t ld, size_t d, float *s, size_t lds,
                        attn__vpf pf)
{
    switch (t) {
    case ATTN_F16: attn__kdots_body(ATTN_F16, q, gr, n, nmax, kt, ld, d, s, lds, pf); break;
    case ATTN_BF16: attn__kdots_body(ATTN_BF16, q, gr, n, nmax, kt, ld, d, s, lds, pf); break;
    case ATTN_Q8_0: attn__kdots_body(ATTN_Q8_0, q, gr, n, nmax, kt, ld, d, s, lds, pf); break;
    default: attn__kdots_body(ATTN_F32, q, gr, n, nmax, kt, ld, d, s, lds, pf); break;
    }
}

/* The next key tile's K rows requested into L2 while P V runs on this one (out of cache,
 * memory would otherwise idle while the keys' values are summed): `rows` rows of rb bytes,
 * rs apart, from p, one line at a time, `per` lines a key that P V applies. */
typedef struct {
    const unsigned char *p;
    size_t rs, rb, rows, o, per;
} attn__kpf;

static ATTN__FORCE_INLINE void attn__kpf_step(attn__kpf *f)
{
    size_t i;
    for (i = 0; i < f->per && f->rows; i++) { /* lines at 0, 64, .. and the row's last byte */
        ATTN__PREFETCH_L2(f->p + (f->o < f->rb ? f->o : f->rb - 1));
        if (f->o < f->rb) {
            f->o += 64;
        } else {
            f->o = 0;
            if (--f->rows) f->p += f->rs; /* (no pointer past the last row) */
        }
    }
}

/* P V, the rows path's (and, by the skipping loop alone, the fused path's where V holds inf
 * or NaN): acc row r += p[r * lds + j] * V row j for keys j in order, one fma a key and
 * element, keys of weight 0 adding nothing (not even 0 * inf). The caller zeroes p where a
 * row sees no key. */

/* Columns [c, c + nv * VW) of nr rows (nr and nv constants, nr * nv <= 8), acc rows y[r]
 * and p rows pr[r] (repeated rows allowed: each gets the same sums), keys j < nk of V rows
 * ld elements of type t apart at vt: the chunk held in registers across the keys, each V
 * row's chunk read once (a q8_0 block at a time where the chunk is whole blocks: c is then
 * a multiple of QK), every key applied. A weight of 0 then adds exactly nothing where V is
 * finite (acc is never -0), so the sums equal the skipping ones unless they come out inf or
 * NaN: then nothing is stored and 0 returned. */
static ATTN__FORCE_INLINE int attn__pv_chunk(attn_dtype t, float *const *y,
                                             const float *const *pr, size_t nr, size_t nk,
                                             const void *vt, size_t ld, size_t c, size_t nv,
                                             attn__kpf *kp)
{
    const attn__v zero = attn__vzero();
    /* whole q8_0 blocks (c is then a multiple of QK) */
    const int blocks = t == ATTN_Q8_0 && (nv * ATTN__VW) % ATTN__QK == 0;
    /* or a part of one block (its scale widened once a key) */
    const int part = t == ATTN_Q8_0 && !blocks && c % ATTN__QK + nv * ATTN__VW <= ATTN__QK;
    attn__v a[8], pv[4], w[ATTN__QK / ATTN__VW], chk = zero, dq = zero;
    size_t j, r, i;
    ATTN__UNROLL
    for (r = 0; r < nr; r++) {
        ATTN__UNROLL
        for (i = 0; i < nv; i++) a[r * nv + i] = attn__vload(y[r] + c + i * ATTN__VW);
    }
    for (j = 0; j < nk; j++) {
        const void *vj = attn__dt_at(t, vt, j * ld);
        attn__kpf_step(kp);
        ATTN__UNROLL
        for (r = 0; r < nr; r++) pv[r] = attn__vset1(pr[r][j]);
        if (part)
            dq = attn__vset1_f16(attn__q_scale((const unsigned char *)attn__dt_at(t, vj, c)));
        ATTN__UNROLL
        for (i = 0; i < nv; i++) {
            attn__v x;
            if (part) { /* attn__vload_q's d * q */
                x = attn__vmul(dq, attn__vload_i8((const int8_t *)attn__dt_at(t, vj, c) + 2 +
                                                  (c + i * ATTN__VW) % ATTN__QK));
            } else if (blocks) { /* a q8_0 block's scale widened once */
                if (i % (ATTN__QK / ATTN__VW) == 0)
                    attn__vload_qdeq(ATTN_Q8_0, attn__dt_at(t, vj, c + i * ATTN__VW), w);
                x = w[i % (ATTN__QK / ATTN__VW)];
            } else {
                x = attn__vload_dt(t, vj, c + i * ATTN__VW);
            }
            ATTN__UNROLL
            for (r = 0; r < nr; r++) a[r * nv + i] = attn__vfma(pv[r], x, a[r * nv + i]);
        }
    }
    ATTN__UNROLL
    for (i = 0; i < nr * nv; i++) chk = attn__vfma(a[i], zero, chk);
    if (!(attn__vhsum(chk) == 0.0f)) return 0; /* x * 0 is NaN where x is inf or NaN */
    ATTN__UNROLL
    for (r = 0; r < nr; r++) {
        ATTN__UNROLL
        for (i = 0; i < nv; i++) attn__vstore(y[r] + c + i * ATTN__VW, a[r * nv + i]);
    }
    return 1;
}

/* The same sums in memory for columns [c, c1) of nr distinct rows, keys of weight 0
 * skipped: for one row alone, a chunk whose sums came out inf or NaN, the columns past the
 * last whole vector, and the fused path's tiles whose V holds inf or NaN */
static ATTN__FORCE_INLINE void attn__pv_skip0_body(attn_dtype t, float *acc, size_t lda,
                                                   const float *p, size_t lds, size_t nr,
                                                   size_t nk, const void *vt, size_t ld,
                                                   size_t c, size_t c1, attn__kpf *kp)
{
    size_t j, r, e;
    for (j = 0; j < nk; j++) {
        const void *vj = attn__dt_at(t, vt, j * ld);
        attn__kpf_step(kp);
        for (r = 0; r < nr; r++) {
            const float pj = p[r * lds + j];
            const attn__v pv = attn__vset1(pj);
            float *y = acc + r * lda;
            if (pj == 0.0f) continue;
            e = c;
            for (; t == ATTN_Q8_0 && e % ATTN__QK == 0 && e + ATTN__QK <= c1; e += ATTN__QK) {
                attn__v w[ATTN__QK / ATTN__VW]; /* a block's scale widened once */
                size_t v;
                attn__vload_qdeq(ATTN_Q8_0, attn__dt_at(t, vj, e), w);
                ATTN__UNROLL
                for (v = 0; v < ATTN__QK / ATTN__VW; v++)
                    attn__vstore(y + e + v * ATTN__VW,
                                 attn__vfma(pv, w[v], attn__vload(y + e + v * ATTN__VW)));
            }
            for (; e + ATTN__VW <= c1; e += ATTN__VW)
                attn__vstore(y + e, attn__vfma(pv, attn__vload_dt(t, vj, e), attn__vload(y + e)));
            if (e < c1)
                attn__vstore_part(y + e, attn__vfma(pv, attn__vload_dt_part(t, vj, e, c1 - e),
                                                    attn__vload_part(y + e, c1 - e, 0.0f)),
                                  c1 - e);
        }
    }
}

static ATTN__NOINLINE void attn__pv_skip0(attn_dtype t, float *acc, size_t lda, const float *p,
                                          size_t lds, size_t nr, size_t nk, const void *vt,
                                          size_t ld, size_t c, size_t c1, attn__kpf *f)
{
    switch (t) {
    case ATTN_F16: attn__pv_skip0_body(ATTN_F16, acc, lda, p, lds, nr, nk, vt, ld, c, c1, f);
        break;
    case ATTN_BF16: attn__pv_skip0_body(ATTN_BF16, acc, lda, p, lds, nr, nk, vt, ld, c, c1, f);
        break;
    case ATTN_Q8_0: attn__pv_skip0_body(ATTN_Q8_0, acc, lda, p, lds, nr, nk, vt, ld, c, c1, f);
        break;
    default: attn__pv_skip0_body(ATTN_F32, acc, lda, p, lds, nr, nk, vt, ld, c, c1, f); break;
    }
}

/* acc[r * lda ..] += P V for rows r < gr and keys j < nk (p rows lds apart, V rows of dv
 * elements of type t, ld apart at vt): blocks of ATTN__PV_KB keys, whose V rows stay in L1
 * while register chunks take them: 2 vectors of 4 rows (fewer repeated), or one row's first
 * 8 or 4 vectors. kp's lines are spread over the keys the chunks apply. */
static ATTN__FORCE_INLINE void attn__pv_body(attn_dtype t, float *acc, size_t lda,
                                             const float *p, size_t lds, size_t gr, size_t nk,
                                             const void *vt, size_t ld, size_t dv,
                                             attn__kpf *kp)
{
    /* the keys' passes: a row's one, or a pass per 2 vectors of each 4 rows */
    const size_t steps = nk * (gr > 1 ? (gr + 3) / 4 * ((dv + 2 * ATTN__VW - 1) / (2 * ATTN__VW))
                                      : 1);
    size_t j0, r, c, u, kb;
    /* lines a step, rounded down (the last few lines may go unrequested) */
    kp->per = kp->rows * ((kp->rb + 63) / 64 + 1) / (steps ? steps : 1);
    kp->per += !kp->per;
    for (j0 = 0; j0 < nk; j0 += kb) {
        const void *vb = attn__dt_at(t, vt, j0 * ld);
        kb = attn__min(ATTN__PV_KB, nk - j0);
        for (r = 0; r < gr; r += 4) {
            const size_t nr = attn__min(4, gr - r);
            float *y[4];
            const float *pr[4];
            for (u = 0; u < 4; u++) {
                const size_t ru = r + attn__min(u, nr - 1);
                y[u] = acc + ru * lda, pr[u] = p + ru * lds + j0;
            }
            if (nr == 1) { /* one row: its first 8 or 4 vectors in registers where the whole
                            * row has at most 8 (V rows read in one pass), the rest streamed
                            * with the accumulator in L1; longer rows streamed whole */
                const size_t nv = dv <= ATTN__PV_NV1 * ATTN__VW ? dv / ATTN__VW : 0;
                c = 0;
                if (nv == ATTN__PV_NV1
                    && attn__pv_chunk(t, y, pr, 1, kb, vb, ld, 0, ATTN__PV_NV1, kp))
                    c = ATTN__PV_NV1 * ATTN__VW;
                else if (nv >= ATTN__PV_NV1 / 2 && nv < ATTN__PV_NV1
                         && attn__pv_chunk(t, y, pr, 1, kb, vb, ld, 0, ATTN__PV_NV1 / 2, kp))
                    c = ATTN__PV_NV1 / 2 * ATTN__VW;
                if (c < dv) attn__pv_skip0(t, y[0], lda, pr[0], lds, 1, kb, vb, ld, c, dv, kp);
                continue;
            }
            for (c = 0; c + 2 * ATTN__VW <= dv; c += 2 * ATTN__VW)
                if (!attn__pv_chunk(t, y, pr, 4, kb, vb, ld, c, 2, kp))
                    attn__pv_skip0(t, y[0], lda, pr[0], lds, nr, kb, vb, ld, c,
                                   c + 2 * ATTN__VW, kp);
            if (c < dv) attn__pv_skip0(t, y[0], lda, pr[0], lds, nr, kb, vb, ld, c, dv, kp);
        }
    }
}

static void attn__pv(attn_dtype t, float *acc, size_t lda, const float *p, size_t lds,
                     size_t gr, size_t nk, const void *vt, size_t ld, size_t dv, attn__kpf *f)
{
    switch (t) {
    case ATTN_F16: attn__pv_body(ATTN_F16, acc, lda, p, lds, gr, nk, vt, ld, dv, f); break;
    case ATTN_BF16: attn__pv_body(ATTN_BF16, acc, lda, p, lds, gr, nk, vt, ld, dv, f); break;
    case ATTN_Q8_0: attn__pv_body(ATTN_Q8_0, acc, lda, p, lds, gr, nk, vt, ld, dv, f); break;
    default: attn__pv_body(ATTN_F32, acc, lda, p, lds, gr, nk, vt, ld, dv, f); break;
    }
}

/* y[0..n) *= s */
static void attn__vscale(float *y, float s, size_t n)
{
    const attn__v vs = attn__vset1(s);
    size_t i = 0;
    for (; i + ATTN__VW <= n; i += ATTN__VW)
        attn__vstore(y + i, attn__vmul(attn__vload(y + i), vs));
    if (i < n)
        attn__vstore_part(y + i, attn__vmul(attn__vload_part(y + i, n - i, 0.0f), vs), n - i);
}

/* The largest of x[0..n), NaNs ignored (-inf when n = 0 or all are NaN or -inf) */
static float attn__max_nonan(const float *x, size_t n)
{
    attn__v m0 = attn__vset1(-INFINITY), m1 = m0;
    size_t i = 0;
    for (; i + 2 * ATTN__VW <= n; i += 2 * ATTN__VW) { /* vmax(x, m): m where x is NaN */
        m0 = attn__vmax(attn__vload(x + i), m0);
        m1 = attn__vmax(attn__vload(x + i + ATTN__VW), m1);
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW) m0 = attn__vmax(attn__vload(x + i), m0);
    if (i < n) m1 = attn__vmax(attn__vload_part(x + i, n - i, -INFINITY), m1);
    return attn__vhmax(attn__vmax(m0, m1));
}

/* x[i] = exp(x[i] * s - m) in place over n floats (one rounding: fma), or exp(x[i] - m)
 * when s is 0; returns the sum */
static float attn__exp_rows(float *x, size_t n, float s, float m)
{
    const attn__v vm = attn__vset1(-m), vs = attn__vset1(s);
    attn__v s0 = attn__vzero(), s1 = attn__vzero();
    size_t i = 0;
#define ATTN__EXPARG(v) (s != 0.0f ? attn__vfma(v, vs, vm) : attn__vadd(v, vm))
    for (; i + 2 * ATTN__VW <= n; i += 2 * ATTN__VW) {
        const attn__v e0 = attn__vexp(ATTN__EXPARG(attn__vload(x + i)));
        const attn__v e1 = attn__vexp(ATTN__EXPARG(attn__vload(x + i + ATTN__VW)));
        attn__vstore(x + i, e0);
        attn__vstore(x + i + ATTN__VW, e1);
        s0 = attn__vadd(s0, e0);
        s1 = attn__vadd(s1, e1);
    }
    for (; i + ATTN__VW <= n; i += ATTN__VW) {
        const attn__v e = attn__vexp(ATTN__EXPARG(attn__vload(x + i)));
        attn__vstore(x + i, e);
        s0 = attn__vadd(s0, e);
    }
    if (i < n) {
        const attn__v e = attn__vexp(ATTN__EXPARG(attn__vload_part(x + i, n - i, -INFINITY)));
        attn__vstore_part(x + i, e, n - i);
        s1 = attn__vadd(s1, e);
    }
#undef ATTN__EXPARG
    return attn__vhsum(attn__vadd(s0, s1));
}

/* One (batch, head), resolved from the parameters. */
typedef struct attn__hd {
    const float *q, *mask;
    const void *k, *v; /* of type kvt */
    attn_dtype kvt;
    const uint8_t *bmask;
    float *o;
    size_t q_sl, k_sl, v_sl, o_sl, mask_sq, bmask_sq;
    size_t d, dv, klen;
    float scale, softcap;
    float slope, sink;   /* ALiBi slope (0: none), sink logit (-inf: none) */
    size_t window;       /* keys more than window - 1 positions before the query masked */
    size_t kstart, wrap; /* key j in row kstart + j below wrap (= kv_len - kstart), else j - wrap */
    int causal, general; /* general: the per-score transform (masks, softcap, scale <= 0,
                          * ALiBi, window, scores) */
    ptrdiff_t off;       /* query i is at position i + off; causal: it sees keys j <= i + off */
    float *scores;       /* the optional scores output, and its mode */
    size_t scores_sq;
    int scores_mode;
} attn__hd;

static attn__hd attn__head(const attn_attention_params *p, size_t b, size_t h)
{
    attn__hd hd;
    const size_t g = h / (p->heads / p->kv_heads);
    hd.q = p->q + b * p->q_sb + h * p->q_sh;
    hd.kvt = p->kv_type;
    hd.k = attn__dt_at(p->kv_type, p->k, b * p->k_sb + g * p->k_sh);
    hd.v = attn__dt_at(p->kv_type, p->v, b * p->v_sb + g * p->v_sh);
    hd.o = p->o + b * p->o_sb + h * p->o_sh;
    hd.mask = p->mask ? p->mask + b * p->mask_sb + h * p->mask_sh : NULL;
    hd.bmask = p->bool_mask ? p->bool_mask + b * p->bmask_sb + h * p->bmask_sh : NULL;
    hd.q_sl = p->q_sl, hd.k_sl = p->k_sl, hd.v_sl = p->v_sl, hd.o_sl = p->o_sl;
    hd.mask_sq = p->mask_sq, hd.bmask_sq = p->bmask_sq;
    hd.d = p->head_dim, hd.dv = p->v_head_dim;
    hd.klen = p->key_lengths ? (size_t)p->key_lengths[b] : p->kv_len;
    hd.scale = p->scale != 0.0f ? p->scale : 1.0f / sqrtf((float)p->head_dim);
    hd.softcap = p->softcap;
    hd.causal = p->causal != ATTN_CAUSAL_NONE;
    hd.off = p->causal == ATTN_CAUSAL_OFFSET ? p->causal_offset
                                              : (ptrdiff_t)hd.klen - (ptrdiff_t)p->q_len;
    hd.scores = p->scores ? p->scores + b * p->scores_sb + h * p->scores_sh : NULL;
    hd.scores_sq = p->scores_sq;
    hd.scores_mode = (int)p->scores_mode;
    hd.slope = p->alibi_slopes ? p->alibi_slopes[h] : 0.0f;
    hd.sink = p->sinks ? p->sinks[h] : -INFINITY;
    hd.window = p->window;
    hd.kstart = p->kv_start, hd.wrap = p->kv_len - p->kv_start;
    hd.general = hd.mask || hd.bmask || hd.softcap > 0 || !(hd.scale > 0) || hd.scores ||
                 hd.slope != 0.0f || hd.window;
    return hd;
}

/* Keys of row qi at or past k0 that causal masking leaves visible, at most n. Row qi sees
 * keys [0, qi + off + 1); computed in size_t without overflow for any off (qi + 1 is at most
 * ATTN__MAX_ELEMS, so qi + 1 + off fits for off <= PTRDIFF_MAX). */
static size_t attn__qend(const attn__hd *hd, size_t qi)
{
    if (hd->off >= 0) return qi + 1 + (size_t)hd->off;
    {
        const size_t neg = (size_t)(-(hd->off + 1)) + 1; /* -off, also for PTRDIFF_MIN */
        return qi + 1 > neg ? qi + 1 - neg : 0;
    }
}

static size_t attn__visible(const attn__hd *hd, size_t qi, size_t k0, size_t n)
{
    size_t end;
    if (!hd->causal) return n;
    end = attn__qend(hd, qi);
    return end <= k0 ? 0 : end - k0 < n ? end - k0 : n;
}

/* The storage row of key j, and how many keys from k0 on (at most n) lie in consecutive
 * rows: a ring of K and V rows wraps once, at key hd->wrap */
static size_t attn__krow(const attn__hd *hd, size_t j)
{
    return j < hd->wrap ? hd->kstart + j : j - hd->wrap;
}

static size_t attn__krun(const attn__hd *hd, size_t k0, size_t n)
{
    return k0 < hd->wrap && hd->wrap - k0 < n ? hd->wrap - k0 : n;
}

/* The first key the window leaves row qi: keys j <= i + off - window are masked */
static size_t attn__first(const attn__hd *hd, size_t qi)
{
    const size_t end = hd->window ? attn__qend(hd, qi) : 0;
    return end > hd->window ? end - hd->window : 0;
}

/* Online softmax step of row qi over keys k0 .. k0+n: s holds the raw dot products (q . k),
 * n of them visible (causal) out of nz; on return s[0..nz) holds the unnormalized
 * probabilities exp(score - m) (0 for masked keys), *m and *l are updated and the row's
 * accumulator acc[0..na) is rescaled. Scores: scaled, softcapped, then masked (a masked
 * key is -inf whatever its K row holds; a NaN score makes the row NaN). */
static void attn__online_row(const attn__hd *hd, size_t qi, size_t k0, size_t n, size_t nz,
                             float *s, float *m, float *l, float *acc, size_t na)
{
    float mx = -INFINITY, mnew, alpha, sum, es = 0.0f;
    size_t j;
    if (!hd->general && n) { /* plain scores, scale > 0: max(scale * s) = scale * max(s) */
        mx = attn__max_nonan(s, n) * hd->scale;
        /* exp(fma(s, scale, -m)): the largest key's argument is the rounding error of m,
         * at most half an ulp of m, which stays within 0.5 while |m| < 2^24. Larger (or
         * non-finite) maxima take the per-score transform, which rounds every scaled score
         * first and subtracts in the scaled domain: the largest argument is exactly 0, so
         * the sum neither overflows nor underflows. */
        if (fabsf(mx) < 16777216.0f) es = hd->scale;
        else mx = -INFINITY;
    }
    if (es == 0.0f && n) { /* the per-score transform */
        const float *mrow = hd->mask ? hd->mask + qi * hd->mask_sq + k0 : NULL;
        const uint8_t *brow = hd->bmask ? hd->bmask + qi * hd->bmask_sq + k0 : NULL;
        float *sc = hd->scores ? hd->scores + qi * hd->scores_sq + k0 : NULL;
        const size_t lo = attn__first(hd, qi);
        /* ALiBi: slope * (j - position of the query), the distance exact below 2^24 */
        const double pos = (double)qi + (double)hd->off;
        int nan = 0;
        for (j = 0; j < n; j++) {
            float x = s[j] * hd->scale;
            if (hd->softcap > 0) x = hd->softcap * tanhf(x / hd->softcap);
            if (sc && hd->scores_mode == ATTN_SCORES_LOGITS) sc[j] = x;
            if (mrow) x = mrow[j] == -INFINITY ? -INFINITY : x + mrow[j];
            /* (a key the mask removed stays removed, even where the bias overflows) */
            if (hd->slope != 0.0f && x != -INFINITY)
                x += hd->slope * (float)((double)(k0 + j) - pos);
            if ((brow && !brow[j]) || k0 + j < lo) x = -INFINITY;
            if (sc && hd->scores_mode != ATTN_SCORES_LOGITS) sc[j] = x;
            if (x != x) nan = 1;
            else if (x > mx) mx = x;
            s[j] = x;
        }
        if (nan) mx = NAN;
    }
    mnew = mx != mx ? mx : mx > *m ? mx : *m; /* a NaN row stays NaN */
    if (mnew == -INFINITY) { /* every key so far masked: nothing to add */
        memset(s, 0, nz * sizeof(float));
        return;
    }
    alpha = mnew == *m ? 1.0f : attn__expf(*m - mnew); /* exp(0) = 1 exactly anyway */
    sum = attn__exp_rows(s, n, es, mnew);
    if (n < nz) memset(s + n, 0, (nz - n) * sizeof(float));
    *l = *l * alpha + sum;
    if (alpha != 1.0f) attn__vscale(acc, alpha, na);
    *m = mnew;
}

/* Packs V rows [0, tk) (type t, stride ld, dv elements) into NR-column slivers of depth tk
 * (sliver c at dst + c * NR * tk), columns past dv zero. Returns nonzero when a value is inf
 * or NaN. */
static ATTN__FORCE_INLINE int attn__pack_v_body(attn_dtype t, const void *v, size_t ld,
                                                size_t tk, size_t dv, float *dst)
{
    attn__v bad = attn__vzero();
    const attn__v z = attn__vzero();
    size_t p, c, u;
    float f;
    for (p = 0; p < tk; p++)
        for (c = 0; c < dv; c += ATTN__NR) {
            const void *vr = attn__dt_at(t, v, p * ld); /* never a pointer past the last row */
            float *dp = dst + c * tk + p * ATTN__NR;
            for (u = 0; u < ATTN__NR; u += ATTN__VW) {
                attn__v x = z;
                if (c + u + ATTN__VW <= dv) x = attn__vload_dt(t, vr, c + u);
                else if (c + u < dv) x = attn__vload_dt_part(t, vr, c + u, dv - c - u);
                bad = attn__vadd(bad, attn__vmul(x, z)); /* 0 * (inf or NaN) = NaN */
                attn__vstore(dp + u, x);
            }
        }
    f = attn__vhsum(bad);
    return f != f;
}

/* Packs K rows [0, tk) (type t, stride ld, d elements) transposed into NR-column slivers
 * (attn__mm_pack_t's layout: sliver s holds K^T[p][s*NR + i] at dst + s*NR*d + p*NR + i,
 * columns past tk zero). f32 by attn__mm_pack_t; 16 bits widened a block of ATTN__VW rows x
 * ATTN__VW columns at a time into registers, through an L1 block, then transposed. */
static ATTN__FORCE_INLINE void attn__pack_kt_body(attn_dtype t, const void *k, size_t ld,
                                                  size_t tk, size_t d, float *dst, float *blk)
{
    size_t s, g, p, i, c;
    for (s = 0; s < tk; s += ATTN__NR, dst += ATTN__NR * d)
        for (g = 0; g < ATTN__NR; g += ATTN__VW) {
            const size_t r = s + g < tk ? attn__min(ATTN__VW, tk - s - g) : 0;
            for (p = 0; p < d; p += ATTN__VW) {
                const size_t nc = attn__min(ATTN__VW, d - p);
                for (i = 0; i < ATTN__VW; i++) {
                    attn__v x = attn__vzero();
                    if (i < r) {
                        const void *kr = attn__dt_at(t, k, (s + g + i) * ld);
                        x = nc == ATTN__VW ? attn__vload_dt(t, kr, p)
                                           : attn__vload_dt_part(t, kr, p, nc);
                    }
                    attn__vstore(blk + i * ATTN__VW, x);
                }
                if (nc == ATTN__VW) {
                    attn__vtranspose_copy(blk, ATTN__VW, ATTN__VW, dst + p * ATTN__NR + g,
                                          ATTN__NR);
                } else {
                    for (c = 0; c < nc; c++)
                        for (i = 0; i < ATTN__VW; i++)
                            dst[(p + c) * ATTN__NR + g + i] = blk[i * ATTN__VW + c];
                }
            }
        }
}

/* The key tile's K^T and V slivers; returns attn__pack_v's flag. blk: ATTN__VW^2 floats of
 * scratch (the score sliver, free while packing; no stack array grows the frame) */
#if ATTN__MR * ATTN__TK < ATTN__VW * ATTN__VW
#error "attn__pack_kv's scratch (the MR x TK score sliver) is too small"
#endif
/* The stored types other than f32, apart: their widening bodies' frames stay out of the f32
 * path's stack */
static ATTN__NOINLINE int attn__pack_kv_dt(const attn__hd *hd, const void *k, const void *v,
                                           size_t tk, float *kp, float *vp, float *blk)
{
    switch (hd->kvt) {
    case ATTN_F16:
        attn__pack_kt_body(ATTN_F16, k, hd->k_sl, tk, hd->d, kp, blk);
        return attn__pack_v_body(ATTN_F16, v, hd->v_sl, tk, hd->dv, vp);
    case ATTN_BF16:
        attn__pack_kt_body(ATTN_BF16, k, hd->k_sl, tk, hd->d, kp, blk);
        return attn__pack_v_body(ATTN_BF16, v, hd->v_sl, tk, hd->dv, vp);
    default:
        attn__pack_kt_body(ATTN_Q8_0, k, hd->k_sl, tk, hd->d, kp, blk);
        return attn__pack_v_body(ATTN_Q8_0, v, hd->v_sl, tk, hd->dv, vp);
    }
}
static int attn__pack_kv(const attn__hd *hd, size_t k0, size_t tk, float *kp, float *vp,
                         float *blk)
{
    const void *k = attn__dt_at(hd->kvt, hd->k, attn__krow(hd, k0) * hd->k_sl);
    const void *v = attn__dt_at(hd->kvt, hd->v, attn__krow(hd, k0) * hd->v_sl);
    if (hd->kvt != ATTN_F32) return attn__pack_kv_dt(hd, k, v, tk, kp, vp, blk);
    attn__mm_pack_t((const float *)k, hd->k_sl, tk, hd->d, ATTN__NR, 0, kp);
    return attn__pack_v_body(ATTN_F32, v, hd->v_sl, tk, hd->dv, vp);
}

/* The workspace: carved into 64-byte aligned segments (the same arithmetic sizes it). */
typedef struct attn__ws {
    float *qp;   /* ATTN__TQ x d: the query tile in MR-row slivers (+ ATTN__VW slack) */
    float *kp;   /* ATTN__TK x d: the key tile, K^T in NR-column slivers */
    float *vp;   /* ATTN__TK x dvp: the value tile in NR-column slivers */
    float *s;    /* ATTN__MR x ATTN__TK: one sliver's scores, then probabilities */
    float *m, *l; /* ATTN__TQ each: running max and sum */
    float *acc;  /* ATTN__TQ x dvp */
    size_t dvp;  /* dv rounded up to NR */
    unsigned char *q8; /* attn__qk8_quads: the rows path's queries quantized (q8_0 K) */
    int qk8;           /* the CPU runs attn__qk8_scores */
    int pfv;           /* the rows path requests V rows as it scores (attn__ws_set) */
} attn__ws;

#ifdef ATTN__HAVE_QK8
#define ATTN__QK8_QPG ((ATTN__MR + 3) / 4) /* quads per group of MR rows */
#define ATTN__QK8_NQ(d) (((d) / ATTN__QK + 3) / 4 * 4)
/* bytes of the quantized queries of a tile: its quads, then a flag per row */
#define ATTN__QK8_BYTES(d)                                                                  \
    (((ATTN__TQ + ATTN__MR - 1) / ATTN__MR * ATTN__QK8_QPG) *                              \
         ATTN__QK8_QUAD_BYTES(ATTN__QK8_NQ(d)) + ATTN__TQ)
#else
#define ATTN__QK8_BYTES(d) 0
#endif

/* Lays the segments out from base (NULL: only sizes); returns the bytes, 0 on overflow */
static size_t attn__ws_layout(void *base, size_t d, size_t dv, attn__ws *w)
{
    const size_t lim = ATTN__MAX_ELEMS / (4 * (ATTN__TQ + ATTN__TK));
    const size_t fa = ATTN__ALIGN / sizeof(float);
    size_t dvp, n[8], off = 0, i;
    float *f = base ? attn__align(base) : NULL;
    float *seg[8];
    if (d == 0 || dv == 0 || d > lim || dv > lim) return 0;
    dvp = attn__round_up(dv, ATTN__NR);
    n[0] = ATTN__TQ * d + ATTN__VW;
    n[1] = ATTN__TK * d + ATTN__VW;
    n[2] = ATTN__TK * dvp;
    n[3] = ATTN__MR * ATTN__TK;
    n[4] = ATTN__TQ;
    n[5] = ATTN__TQ;
    n[6] = ATTN__TQ * dvp;
    n[7] = (ATTN__QK8_BYTES(d) + 3) / 4;
    for (i = 0; i < 8; i++) {
        seg[i] = f ? f + off : NULL;
        off += attn__round_up(n[i], fa);
    }
    if (w) {
        w->qp = seg[0], w->kp = seg[1], w->vp = seg[2], w->s = seg[3];
        w->m = seg[4], w->l = seg[5], w->acc = seg[6], w->dvp = dvp;
        w->q8 = (unsigned char *)seg[7];
#ifdef ATTN__HAVE_QK8
        w->qk8 = base && attn__qk8_cpu();
#else
        w->qk8 = 0;
#endif
    }
    return off * sizeof(float) + ATTN__ALIGN;
}

/* The workspace of a call on p: its segments, and whether its K and V are far (past
 * ATTN__DEC_PF bytes) */
static void attn__ws_set(const attn_attention_params *p, void *base, attn__ws *w)
{
    const double kv = (double)p->batch * (double)p->kv_heads * (double)p->kv_len *
                      (double)(attn_dtype_bytes(p->kv_type, p->head_dim) +
                               attn_dtype_bytes(p->kv_type, p->v_head_dim));
    attn__ws_layout(base, p->head_dim, p->v_head_dim, w);
    w->pfv = kv > (double)ATTN__DEC_PF;
}

/* Key tiles a query tile of rows q0 .. q0+tq visits: [0, kend) */
static size_t attn__kend(const attn__hd *hd, size_t q0, size_t tq)
{
    return attn__visible(hd, q0 + tq - 1, 0, hd->klen);
}

/* O rows of a tile: acc / l, zeros where no key was visible (row r of the workspace) */
static void attn__tile_out(const attn__hd *hd, size_t q0, size_t tq, const attn__ws *w,
                           size_t r)
{
    size_t i;
    for (i = 0; i < tq; i++, r++) {
        float *orow = hd->o + (q0 + i) * hd->o_sl;
        const float l = w->l[r];
        if (l == 0.0f) memset(orow, 0, hd->dv * sizeof(float)); /* fully masked row */
        else {
            memcpy(orow, w->acc + r * w->dvp, hd->dv * sizeof(float));
            attn__vscale(orow, 1.0f / l, hd->dv);
        }
    }
}

/* Rows [0, rows) of the tile's state, row i of head hds[i / tq]: a sink joins the softmax
 * as a key of logit sink and value 0 (max sink, sum 1). acc rows [0, nacc) zeroed. */
static void attn__tile_init(const attn__hd *hds, size_t tq, size_t rows, size_t nacc,
                            const attn__ws *w)
{
    size_t i;
    for (i = 0; i < rows; i++) {
        w->m[i] = hds[i / tq].sink;
        w->l[i] = hds[i / tq].sink > -INFINITY ? 1.0f : 0.0f;
    }
    memset(w->acc, 0, nacc * w->dvp * sizeof(float));
}

/* The fused path for query rows q0 .. q0+tq (see above) */
static void attn__tile_fused(const attn__hd *hd, size_t q0, size_t tq, const attn__ws *w)
{
    const size_t d = hd->d, dv = hd->dv, dvp = w->dvp, nsl = (tq + ATTN__MR - 1) / ATTN__MR;
    const size_t kend = attn__kend(hd, q0, tq);
    size_t k0, sl, i, j, tk;
    attn__tile_init(hd, tq, tq, nsl * ATTN__MR, w);
    attn__mm_pack_t(hd->q + q0 * hd->q_sl, hd->q_sl, tq, d, ATTN__MR, 0, w->qp);
    for (k0 = attn__first(hd, q0); k0 < kend; k0 += tk) {
        tk = attn__krun(hd, k0, attn__min(ATTN__TK, kend - k0));
        const int vbad = attn__pack_kv(hd, k0, tk, w->kp, w->vp, w->s);
        for (sl = 0; sl < nsl; sl++) {
            const size_t r0 = sl * ATTN__MR, mr = attn__min(ATTN__MR, tq - r0);
            const size_t ts = attn__visible(hd, q0 + r0 + mr - 1, k0, tk);
            float *acc = w->acc + r0 * dvp;
            if (ts == 0) continue; /* the sliver sees no key of this tile or later */
            for (j = 0; j < ts; j += ATTN__NR)
                attn__mm_ukr_packed(d, w->qp + r0 * d, w->kp + j * d, w->s + j, ATTN__TK, 1.0f,
                                    0.0f, 0);
            for (i = 0; i < mr; i++)
                attn__online_row(hd, q0 + r0 + i, k0, attn__visible(hd, q0 + r0 + i, k0, ts),
                                 ts, w->s + i * ATTN__TK, &w->m[r0 + i], &w->l[r0 + i],
                                 acc + i * dvp, dvp);
            if (!vbad) {
                for (j = 0; j < dvp; j += ATTN__NR)
                    attn__mm_ukr_strided(ts, w->s, ATTN__TK, 1, w->vp + j * tk, ATTN__NR,
                                         acc + j, dvp, 1.0f, 0.0f, 2);
            } else { /* inf or NaN in V: keys with p = 0 must not contribute 0 * inf */
                attn__kpf none = {NULL, 0, 0, 0, 0, 0};
                attn__pv_skip0(hd->kvt, acc, dvp, w->s, ATTN__TK, mr, ts,
                               attn__dt_at(hd->kvt, hd->v, attn__krow(hd, k0) * hd->v_sl),
                               hd->v_sl, 0, dv, &none);
            }
        }
    }
    attn__tile_out(hd, q0, tq, w, 0);
}

#ifdef ATTN__HAVE_QK8
/* The rows path on a q8_0 K where the CPU has AVX512-VNNI (AVX-512 builds) or AVX-VNNI
 * (AVX2 builds; simd/qk_4xq8_*.h): each query row is quantized once per tile by
 * attn_convert's q8_0 rule (attn__qd_quant: a block's scale max|q| / 127, held as the float
 * its binary16 gives) and its scores are integer dot products (attn__qk8_scores): the f32
 * path's scores on the query so rounded, to within f32 rounding. A row that does not
 * quantize (a value not finite, or max|q| / 127 past binary16's range) keeps the f32 path
 * on its own values. */

/* The ISA file's attn__qk8_scores_body for one row or four (the quad's sums in registers,
 * not in memory, for either) */
static ATTN__QK8_ATTR void attn__qk8_scores(const unsigned char *k, size_t rb, size_t nk,
                                            size_t nb, const unsigned char *quad, size_t nq,
                                            size_t nr, const size_t *n, float *s, size_t lds,
                                            const unsigned char *v, size_t vrb, size_t vb)
{
    if (nr == 1) attn__qk8_scores_body(1, k, rb, nk, nb, quad, nq, nr, n, s, lds, v, vrb, vb);
    else attn__qk8_scores_body(0, k, rb, nk, nb, quad, nq, nr, n, s, lds, v, vrb, vb);
}

/* The tile's flags: row i quantized */
static unsigned char *attn__qk8_ok(const attn__ws *w, size_t d)
{
    return w->q8 + (ATTN__QK8_BYTES(d) - ATTN__TQ);
}

/* The quad of group row g (a multiple of MR) and chunk row r (a multiple of 4) */
static unsigned char *attn__qk8_quad(const attn__ws *w, size_t d, size_t g, size_t r)
{
    const size_t q = g / ATTN__MR * ATTN__QK8_QPG + r / 4;
    return w->q8 + q * ATTN__QK8_QUAD_BYTES(ATTN__QK8_NQ(d));
}

/* Quantizes the tile's rows (rows of heads hds, tq each) into their quads as
 * attn__kdots_qk8 groups them, chunks of 3 as 4 with the last row twice, and flags each
 * row that does not quantize; 0 if none quantizes */
static int attn__qk8_quads(const attn__hd *hds, size_t q0, size_t tq, size_t rows,
                           const attn__ws *w)
{
    const size_t d = hds->d, nb = d / ATTN__QK, nq = ATTN__QK8_NQ(d);
    unsigned char *ok = attn__qk8_ok(w, d);
    size_t g, r, u, any = 0;
    for (g = 0; g < rows; g += ATTN__MR)
        for (r = 0; r < attn__min(ATTN__MR, rows - g); r += 4) {
            const size_t nr = attn__min(4, attn__min(ATTN__MR, rows - g) - r);
            unsigned char *quad = attn__qk8_quad(w, d, g, r);
            memset(quad, 0, ATTN__QK8_QUAD_BYTES(nq));
            for (u = 0; u < 4; u++) {
                const size_t row = g + r + (u < nr ? u : nr - 1);
                const float *qrow = hds[row / tq].q + (q0 + row % tq) * hds->q_sl;
                const int good = attn__qk8_quad_row(qrow, nb, quad, nq, u);
                if (u < nr) ok[g + r + u] = (unsigned char)good, any |= (size_t)good;
            }
        }
    return any != 0;
}

/* attn__kdots for the gr rows of group g (rows q, of a q8_0 K) from their quads: the rows
 * that did not quantize by attn__kdots on their own values */
static void attn__kdots_qk8(const attn__ws *w, size_t g, const float *const *q, size_t gr,
                            const size_t *n, size_t nmax, const void *kt, size_t ld,
                            size_t d, float *s, size_t lds, attn__vpf pf)
{
    const size_t nb = d / ATTN__QK, nq = ATTN__QK8_NQ(d);
    const unsigned char *ok = attn__qk8_ok(w, d) + g;
    const size_t rb = attn_dtype_bytes(ATTN_Q8_0, ld);
    const attn__vpf none = {NULL, 0, 0, 0};
    size_t r;
    for (r = 0; r < gr; r += 4, pf = none)
        attn__qk8_scores((const unsigned char *)kt, rb, nmax, nb, attn__qk8_quad(w, d, g, r), nq,
                         attn__min(4, gr - r), n + r, s + r * lds, lds,
                         pf.v, pf.rs, pf.vb);
    for (r = 0; r < gr; r++)
        if (!ok[r])
            attn__kdots(ATTN_Q8_0, q + r, 1, n + r, n[r], kt, ld, d, s + r * lds, lds, none);
}
#endif

/* The rows path for query rows q0 .. q0+tq of nh heads that share their K and V (a GQA
 * group; nh * tq <= ATTN__TQ): each key tile is read once for all of them. Rows whose
 * scores are written see every key the causal mask allows (the masked ones scored too). */
static void attn__tile_rows(const attn__hd *hds, size_t nh, size_t q0, size_t tq,
                            const attn__ws *w)
{
    const attn__hd *hd = hds;
    const size_t d = hd->d, dv = hd->dv, dvp = w->dvp, rows = nh * tq;
    const size_t kend = attn__kend(hd, q0, tq); /* the same for every head of the group */
    /* the rows copied to the packed queries' (unused) segment, each at a 64-byte boundary,
     * wherever they fit: Q's loads in the dot products then never split a cache line */
    const size_t dq = attn__round_up(d, ATTN__ALIGN / sizeof(float));
    const int staged = rows * dq <= ATTN__TQ * d + ATTN__VW;
    size_t k0, g, r, tk;
#ifdef ATTN__HAVE_QK8
    const int qk8 = w->qk8 && hd->kvt == ATTN_Q8_0 && attn__qk8_quads(hds, q0, tq, rows, w);
#endif
    attn__tile_init(hds, tq, rows, rows, w);
    for (r = 0; staged && r < rows; r++)
        memcpy(w->qp + r * dq, hds[r / tq].q + (q0 + r % tq) * hd->q_sl, d * sizeof(float));
    /* with scores, every key is scored (the window's too) */
    for (k0 = hd->scores ? 0 : attn__first(hd, q0); k0 < kend; k0 += tk) {
        const void *kt = attn__dt_at(hd->kvt, hd->k, attn__krow(hd, k0) * hd->k_sl);
        const void *vt = attn__dt_at(hd->kvt, hd->v, attn__krow(hd, k0) * hd->v_sl);
        attn__vpf pf; /* the tile's V rows, requested as the first group scores their keys */
        attn__kpf kn = {NULL, 0, 0, 0, 0, 0};
        tk = attn__krun(hd, k0, attn__min(ATTN__TK, kend - k0));
        pf.v = w->pfv ? (const unsigned char *)vt : NULL;
        pf.rs = attn_dtype_bytes(hd->kvt, hd->v_sl), pf.vb = attn_dtype_bytes(hd->kvt, dv);
        pf.kn = w->pfv ? attn__krun(hd, k0, kend - k0) : 0; /* K's rows, past this tile too */
        /* the next tile's K rows (a run of them) as the first group's P V runs; not for one
         * row of f32, whose K and V the hardware's prefetchers follow row after row (the
         * requests slowed it) */
        if (w->pfv && k0 + tk < kend && (hd->kvt != ATTN_F32 || rows > 1)) {
            kn.p = (const unsigned char *)attn__dt_at(hd->kvt, hd->k,
                                                      attn__krow(hd, k0 + tk) * hd->k_sl);
            kn.rs = attn_dtype_bytes(hd->kvt, hd->k_sl), kn.rb = attn_dtype_bytes(hd->kvt, d);
            kn.rows = attn__krun(hd, k0 + tk, attn__min(ATTN__TK, kend - k0 - tk));
            kn.o = 0;
            if (kn.rs == kn.rb) kn.rb *= kn.rows, kn.rows = 1; /* one run of bytes */
        }
        for (g = 0; g < rows; g += ATTN__MR) { /* MR rows at a time (w->s: MR x TK) */
            const size_t gr = attn__min(ATTN__MR, rows - g);
            const float *qr[ATTN__MR];
            size_t n[ATTN__MR], nmax = 0;
            for (r = 0; r < gr; r++) { /* row g + r: head (g + r) / tq, query (g + r) % tq */
                const size_t qi = q0 + (g + r) % tq;
                n[r] = attn__visible(hd, qi, k0, tk);
                qr[r] = staged ? w->qp + (g + r) * dq : hds[(g + r) / tq].q + qi * hd->q_sl;
                nmax = n[r] > nmax ? n[r] : nmax;
            }
#ifdef ATTN__HAVE_QK8
            if (qk8)
                attn__kdots_qk8(w, g, qr, gr, n, nmax, kt, hd->k_sl, d, w->s, ATTN__TK, pf);
            else
#endif
                attn__kdots(hd->kvt, qr, gr, n, nmax, kt, hd->k_sl, d, w->s, ATTN__TK, pf);
            pf.v = NULL, pf.kn = 0; /* the later groups find K and V in cache */
            for (r = 0; r < gr; r++) /* p: 0 past a row's visible keys */
                if (n[r])
                    attn__online_row(&hds[(g + r) / tq], q0 + (g + r) % tq, k0, n[r], nmax,
                                     w->s + r * ATTN__TK, &w->m[g + r], &w->l[g + r],
                                     w->acc + (g + r) * dvp, dv);
                else
                    memset(w->s + r * ATTN__TK, 0, nmax * sizeof(float));
            attn__pv(hd->kvt, w->acc + g * dvp, dvp, w->s, ATTN__TK, gr, nmax, vt, hd->v_sl,
                     dv, &kn);
            kn.rows = 0;
        }
    }
    for (r = 0; r < nh; r++) attn__tile_out(&hds[r], q0, tq, w, r * tq);
}

/* The scores output of rows q0 .. q0+tq, after their tile: every key j < kv_len gets the
 * mode's value; keys the kernel never scored are masked (-inf; probability 0). LOGITS of
 * masked keys are computed here (the kernel skips them). */
static void attn__tile_scores(const attn_attention_params *p, const attn__hd *hd, size_t q0,
                              size_t tq, const attn__ws *w)
{
    const attn__vpf nopf = {NULL, 0, 0, 0};
    size_t i, j;
    for (i = 0; i < tq; i++) {
        const size_t qi = q0 + i, n = attn__visible(hd, qi, 0, hd->klen);
        float *sc = hd->scores + qi * hd->scores_sq;
        const float m = w->m[i], l = w->l[i];
        if (hd->scores_mode == ATTN_SCORES_LOGITS) {
            const float *qrow = hd->q + qi * hd->q_sl;
            size_t nk;
            /* keys n .. kv_len in runs of consecutive rows (no pointer formed past them) */
            for (j = n; j < p->kv_len; j += nk) {
                const void *kj = attn__dt_at(hd->kvt, hd->k, attn__krow(hd, j) * hd->k_sl);
                nk = attn__krun(hd, j, p->kv_len - j);
#ifdef ATTN__HAVE_QK8
                if (w->qk8 && hd->kvt == ATTN_Q8_0 &&
                    attn__qk8_ok(w, hd->d)[i]) { /* as attn__kdots_qk8 */
                    const size_t g = i / ATTN__MR * ATTN__MR, r = (i - g) / 4 * 4;
                    size_t nn[4] = {0, 0, 0, 0};
                    nn[i - g - r] = nk; /* only the row's own lane is stored (lds 0) */
                    attn__qk8_scores((const unsigned char *)kj,
                                     attn_dtype_bytes(ATTN_Q8_0, hd->k_sl), nk, hd->d / ATTN__QK,
                                     attn__qk8_quad(w, hd->d, g, r), ATTN__QK8_NQ(hd->d),
                                     i - g - r + 1, nn, sc + j, 0, NULL, 0, 0);
                    continue;
                }
#endif
                attn__kdots(hd->kvt, &qrow, 1, &nk, nk, kj, hd->k_sl, hd->d, sc + j, 0, nopf);
            }
            for (j = n; j < p->kv_len; j++) {
                float x = sc[j] * hd->scale;
                if (hd->softcap > 0) x = hd->softcap * tanhf(x / hd->softcap);
                sc[j] = x;
            }
            continue;
        }
        for (j = n; j < p->kv_len; j++) sc[j] = -INFINITY;
        if (hd->scores_mode != ATTN_SCORES_PROBS) continue;
        for (j = 0; j < p->kv_len; j++) /* MASKED values -> exp(s - m) / l */
            sc[j] = l == 0.0f ? 0.0f : attn__expf(sc[j] - m) / l;
    }
}

static void attn__head_tile(const attn_attention_params *p, const attn__hd *hd, size_t q0,
                            const attn__ws *w)
{
    const size_t tq = attn__min(ATTN__TQ, p->q_len - q0);
    if (hd->scores) { /* the reference-order rows path, then the keys it skipped */
        attn__tile_rows(hd, 1, q0, tq, w);
        attn__tile_scores(p, hd, q0, tq, w);
    } else if (tq >= ATTN__FUSED_MIN) {
        attn__tile_fused(hd, q0, tq, w);
    } else {
        attn__tile_rows(hd, 1, q0, tq, w);
    }
}

ATTN_API size_t attn_attention_workspace_size(const attn_attention_params *p)
{
    if (!p) return 0;
    return attn__ws_layout(NULL, p->head_dim, p->v_head_dim, NULL);
}

ATTN_API attn_attention_params attn_attention_init(size_t batch, size_t heads, size_t kv_heads,
                                                   size_t q_len, size_t kv_len,
                                                   size_t head_dim, size_t v_head_dim,
                                                   const float *q, const float *k,
                                                   const float *v, float *o,
                                                   attn_layout layout)
{
    attn_attention_params p;
    const size_t M = (size_t)-1; /* strides saturate at SIZE_MAX instead of wrapping */
    memset(&p, 0, sizeof p);
    p.batch = batch;
    p.heads = heads;
    p.kv_heads = kv_heads;
    p.q_len = q_len;
    p.kv_len = kv_len;
    p.head_dim = head_dim;
    p.v_head_dim = v_head_dim;
    p.q = q;
    p.k = k;
    p.v = v;
    p.o = o;
    /* A stride that does not fit size_t saturates: a dimension of size > 1 with it is then
     * ATTN_ERR_OVERFLOW in attn_attention (a dimension of size 1 never uses its stride). */
    if (layout == ATTN_LAYOUT_BLHD) { /* [B, L, H*D] */
        p.q_sh = head_dim, p.q_sl = attn__mul_lim(heads, head_dim, M);
        p.q_sb = attn__mul_lim(q_len, p.q_sl, M);
        p.k_sh = head_dim, p.k_sl = attn__mul_lim(kv_heads, head_dim, M);
        p.k_sb = attn__mul_lim(kv_len, p.k_sl, M);
        p.v_sh = v_head_dim, p.v_sl = attn__mul_lim(kv_heads, v_head_dim, M);
        p.v_sb = attn__mul_lim(kv_len, p.v_sl, M);
        p.o_sh = v_head_dim, p.o_sl = attn__mul_lim(heads, v_head_dim, M);
        p.o_sb = attn__mul_lim(q_len, p.o_sl, M);
    } else { /* [B, H, L, D] */
        p.q_sl = head_dim, p.q_sh = attn__mul_lim(q_len, head_dim, M);
        p.q_sb = attn__mul_lim(heads, p.q_sh, M);
        p.k_sl = head_dim, p.k_sh = attn__mul_lim(kv_len, head_dim, M);
        p.k_sb = attn__mul_lim(kv_heads, p.k_sh, M);
        p.v_sl = v_head_dim, p.v_sh = attn__mul_lim(kv_len, v_head_dim, M);
        p.v_sb = attn__mul_lim(kv_heads, p.v_sh, M);
        p.o_sl = v_head_dim, p.o_sh = attn__mul_lim(q_len, v_head_dim, M);
        p.o_sb = attn__mul_lim(heads, p.o_sh, M);
    }
    /* an unknown layout: causal out of range, which attn_attention reports as ATTN_ERR_ARG */
    p.causal = layout == ATTN_LAYOUT_BHLD || layout == ATTN_LAYOUT_BLHD ? ATTN_CAUSAL_NONE
                                                                        : (attn_causal)3;
    return p;
}

/* Per-head ALiBi slopes finite and sinks below +inf (-inf: no sink; NaN refused), either
 * array NULL for none */
static attn_status attn__head_arrays_check(size_t heads, const float *slopes,
                                           const float *sinks)
{
    size_t i;
    for (i = 0; i < heads && (slopes || sinks); i++)
        if ((slopes && !attn__finite(slopes[i])) || (sinks && !(sinks[i] < INFINITY)))
            return ATTN_ERR_ARG;
    return ATTN_OK;
}

/* A [n0, n1, n2, row] tensor with strides s0, s1, s2: rows may not overlap within a dim
 * of size > 1 (stride >= row) unless `broadcast` allows stride 0; the extent must fit. */
static attn_status attn__check_tensor(size_t n0, size_t s0, size_t n1, size_t s1, size_t n2,
                                      size_t s2, size_t row, int broadcast)
{
    size_t ext = row;
    if ((n0 > 1 && s0 < row && !(broadcast && s0 == 0)) ||
        (n1 > 1 && s1 < row && !(broadcast && s1 == 0)) ||
        (n2 > 1 && s2 < row && !(broadcast && s2 == 0)))
        return ATTN_ERR_LD;
    if (row > ATTN__MAX_ELEMS || !attn__extent_add(&ext, n0 - 1, s0) ||
        !attn__extent_add(&ext, n1 - 1, s1) || !attn__extent_add(&ext, n2 - 1, s2))
        return ATTN_ERR_OVERFLOW;
    return ATTN_OK;
}

/* Whether a [n0, n1, n2, row] tensor at strides s0, s1, s2 (extent already checked) has
 * distinct floats for distinct elements, by the layouts' rule: the dimensions of size > 1,
 * sorted by stride, each step past the whole extent of the smaller ones. Outputs must pass
 * (work items write disjoint rows); the rare injective layouts this rule misses (strides
 * interleaving two dimensions) are refused as well. */
static int attn__nested(size_t n0, size_t s0, size_t n1, size_t s1, size_t n2, size_t s2,
                        size_t row)
{
    size_t n[3], s[3], i, j, t, ext = row;
    n[0] = n0, n[1] = n1, n[2] = n2, s[0] = s0, s[1] = s1, s[2] = s2;
    for (i = 0; i < 3; i++)
        for (j = i + 1; j < 3; j++)
            if (s[j] < s[i]) {
                t = s[i], s[i] = s[j], s[j] = t;
                t = n[i], n[i] = n[j], n[j] = t;
            }
    for (i = 0; i < 3; i++) {
        if (n[i] <= 1) continue;
        if (s[i] < ext) return 0;
        ext += (n[i] - 1) * s[i];
    }
    return 1;
}

/* Bytes from the first to the last element of a [n0, n1, n2, row] tensor at strides s0, s1,
 * s2 of `elem`-byte elements (extent already checked; every n > 0) */
static size_t attn__tensor_bytes(size_t n0, size_t s0, size_t n1, size_t s1, size_t n2,
                                 size_t s2, size_t row, size_t elem)
{
    return ((n0 - 1) * s0 + (n1 - 1) * s1 + (n2 - 1) * s2 + row) * elem;
}

/* The checks of attn_attention; *empty is set when batch or q_len is 0 (nothing to do, the
 * pointers and strides unchecked) */
static attn_status attn__attention_check(const attn_attention_params *p, const void *ws,
                                         size_t ws_size, int *empty)
{
    attn_status st;
    size_t b, i, j, ext[7], need;
    const void *at[7];
    size_t blk; /* the type's block: head dims and strides whole blocks */
    *empty = 0;
    if (!p) return ATTN_ERR_NULL;
    blk = attn_dtype_block(p->kv_type);
    if (!attn__kv_dtype(p->kv_type)) return ATTN_ERR_ARG;
    if (!p->heads || !p->kv_heads || !p->head_dim || !p->v_head_dim || p->heads % p->kv_heads ||
        p->head_dim % blk || p->v_head_dim % blk)
        return ATTN_ERR_SIZE;
    if (!attn__finite(p->scale) || !attn__finite(p->softcap) || p->softcap < 0) return ATTN_ERR_ARG;
    if (p->causal != ATTN_CAUSAL_NONE && p->causal != ATTN_CAUSAL_BOTTOM_RIGHT &&
        p->causal != ATTN_CAUSAL_OFFSET)
        return ATTN_ERR_ARG;
    if (p->scores && p->scores_mode != ATTN_SCORES_LOGITS &&
        p->scores_mode != ATTN_SCORES_MASKED && p->scores_mode != ATTN_SCORES_PROBS)
        return ATTN_ERR_ARG;
    if (p->kv_len && p->kv_start >= p->kv_len) return ATTN_ERR_ARG;
    if (!p->batch || !p->q_len) {
        *empty = 1;
        return ATTN_OK;
    }
    if (!p->q || !p->k || !p->v || !p->o) return ATTN_ERR_NULL;
    if (!p->kv_len) return ATTN_ERR_SIZE;
    if ((p->k_sb | p->k_sh | p->k_sl | p->v_sb | p->v_sh | p->v_sl) % blk) return ATTN_ERR_LD;
    if ((st = attn__check_tensor(p->batch, p->q_sb, p->heads, p->q_sh, p->q_len, p->q_sl,
                                 p->head_dim, 0)) ||
        (st = attn__check_tensor(p->batch, p->k_sb, p->kv_heads, p->k_sh, p->kv_len, p->k_sl,
                                 p->head_dim, 0)) ||
        (st = attn__check_tensor(p->batch, p->v_sb, p->kv_heads, p->v_sh, p->kv_len, p->v_sl,
                                 p->v_head_dim, 0)) ||
        (st = attn__check_tensor(p->batch, p->o_sb, p->heads, p->o_sh, p->q_len, p->o_sl,
                                 p->v_head_dim, 0)))
        return st;
    if (!attn__nested(p->batch, p->o_sb, p->heads, p->o_sh, p->q_len, p->o_sl, p->v_head_dim))
        return ATTN_ERR_LD; /* two output rows on one float */
    if (p->mask && (st = attn__check_tensor(p->batch, p->mask_sb, p->heads, p->mask_sh, p->q_len,
                                             p->mask_sq, p->kv_len, 1)))
        return st;
    if (p->bool_mask && (st = attn__check_tensor(p->batch, p->bmask_sb, p->heads, p->bmask_sh,
                                                  p->q_len, p->bmask_sq, p->kv_len, 1)))
        return st;
    if ((st = attn__head_arrays_check(p->heads, p->alibi_slopes, p->sinks))) return st;
    if (p->key_lengths)
        for (b = 0; b < p->batch; b++)
            if (p->key_lengths[b] < 0 || (uint64_t)p->key_lengths[b] > (uint64_t)p->kv_len)
                return ATTN_ERR_ARG;
    if (p->scores) {
        if ((st = attn__check_tensor(p->batch, p->scores_sb, p->heads, p->scores_sh, p->q_len,
                                     p->scores_sq, p->kv_len, 0)))
            return st;
        if (!attn__nested(p->batch, p->scores_sb, p->heads, p->scores_sh, p->q_len,
                          p->scores_sq, p->kv_len))
            return ATTN_ERR_LD;
    }
    if ((need = attn_attention_workspace_size(p)) == 0) return ATTN_ERR_OVERFLOW;
    if (!ws || ws_size < need) return ATTN_ERR_WORKSPACE;
    /* the outputs (O, scores, the workspace: the first three) may not overlap each other or
     * an input (Q, K, V, the masks, the key lengths) */
    at[0] = p->o, ext[0] = attn__tensor_bytes(p->batch, p->o_sb, p->heads, p->o_sh, p->q_len,
                                              p->o_sl, p->v_head_dim, sizeof(float));
    at[1] = p->scores, ext[1] = p->scores ? attn__tensor_bytes(p->batch, p->scores_sb, p->heads,
                                                               p->scores_sh, p->q_len,
                                                               p->scores_sq, p->kv_len,
                                                               sizeof(float)) : 0;
    at[2] = ws, ext[2] = need;
    at[3] = p->q, ext[3] = attn__tensor_bytes(p->batch, p->q_sb, p->heads, p->q_sh, p->q_len,
                                              p->q_sl, p->head_dim, sizeof(float));
    at[4] = p->k, ext[4] = attn_dtype_bytes(p->kv_type,
                                            attn__tensor_bytes(p->batch, p->k_sb, p->kv_heads,
                                                               p->k_sh, p->kv_len, p->k_sl,
                                                               p->head_dim, 1));
    at[5] = p->v, ext[5] = attn_dtype_bytes(p->kv_type,
                                            attn__tensor_bytes(p->batch, p->v_sb, p->kv_heads,
                                                               p->v_sh, p->kv_len, p->v_sl,
                                                               p->v_head_dim, 1));
    at[6] = p->mask ? (const void *)p->mask : (const void *)p->bool_mask;
    ext[6] = p->mask ? attn__tensor_bytes(p->batch, p->mask_sb, p->heads, p->mask_sh, p->q_len,
                                          p->mask_sq, p->kv_len, sizeof(float))
             : p->bool_mask ? attn__tensor_bytes(p->batch, p->bmask_sb, p->heads, p->bmask_sh,
                                                 p->q_len, p->bmask_sq, p->kv_len, 1) : 0;
    for (i = 0; i < 3; i++)
        for (j = i + 1; j < 7; j++)
            if (attn__bytes_overlap(at[i], ext[i], at[j], ext[j])) return ATTN_ERR_ALIAS;
    if (p->mask && p->bool_mask) /* the second mask, and the key lengths */
        for (i = 0; i < 3; i++)
            if (attn__bytes_overlap(at[i], ext[i], p->bool_mask,
                                    attn__tensor_bytes(p->batch, p->bmask_sb, p->heads,
                                                       p->bmask_sh, p->q_len, p->bmask_sq,
                                                       p->kv_len, 1)))
                return ATTN_ERR_ALIAS;
    for (i = 0; i < 3; i++)
        if ((p->key_lengths &&
             attn__bytes_overlap(at[i], ext[i], p->key_lengths, p->batch * sizeof(int64_t))) ||
            (p->alibi_slopes &&
             attn__bytes_overlap(at[i], ext[i], p->alibi_slopes, p->heads * sizeof(float))) ||
            (p->sinks && attn__bytes_overlap(at[i], ext[i], p->sinks, p->heads * sizeof(float))))
            return ATTN_ERR_ALIAS;
    return ATTN_OK;
}

static size_t attn__qtiles(const attn_attention_params *p)
{
    return (p->q_len + ATTN__TQ - 1) / ATTN__TQ;
}

ATTN_API attn_status attn_attention(const attn_attention_params *p, void *workspace,
                                    size_t workspace_size)
{
    int empty;
    attn_status st = attn__attention_check(p, workspace, workspace_size, &empty);
    attn__ws w;
    size_t b, h, q0;
    if (st != ATTN_OK || empty) return st;
    attn__ws_set(p, workspace, &w);
    if (p->q_len < ATTN__FUSED_MIN && !p->scores && p->heads > p->kv_heads) {
        /* decode with grouped-query heads: the heads of a group share each K/V tile read
         * (the same rows path, row by row, as one head alone: the same bits) */
        const size_t group = p->heads / p->kv_heads, per = attn__min(8, ATTN__TQ / p->q_len);
        attn__hd hds[8];
        size_t n, i;
        for (b = 0; b < p->batch; b++)
            for (h = 0; h < p->heads; h += n) {
                n = attn__min(per, group - h % group);
                for (i = 0; i < n; i++) hds[i] = attn__head(p, b, h + i);
                attn__tile_rows(hds, n, 0, p->q_len, &w);
            }
        return ATTN_OK;
    }
    for (b = 0; b < p->batch; b++)
        for (h = 0; h < p->heads; h++) {
            const attn__hd hd = attn__head(p, b, h);
            for (q0 = 0; q0 < p->q_len; q0 += ATTN__TQ) attn__head_tile(p, &hd, q0, &w);
        }
    return ATTN_OK;
}

ATTN_API size_t attn_attention_query_tile(void) { return ATTN__TQ; }

ATTN_API attn_status attn_alibi_slopes(size_t heads, float *slopes)
{
    size_t n = 1, i;
    if (!slopes) return ATTN_ERR_NULL;
    if (!heads) return ATTN_ERR_SIZE;
    while (n <= heads / 2) n *= 2;
    for (i = 0; i < heads; i++) /* exponents -8 i / n, then -4 (2 i - 1) / n past n */
        slopes[i] = (float)pow(2.0, i < n ? -8.0 * (double)(i + 1) / (double)n
                                          : -4.0 * (double)(2 * (i - n) + 1) / (double)n);
    return ATTN_OK;
}

ATTN_API size_t attn_attention_tasks(const attn_attention_params *p)
{
    size_t n;
    /* a q_len past ATTN__MAX_ELEMS never passes the checks (and would wrap q_len + TQ - 1) */
    if (!p || !p->batch || !p->heads || !p->q_len || p->q_len > ATTN__MAX_ELEMS || !p->kv_heads ||
        !p->kv_len || !p->head_dim || !p->v_head_dim)
        return 0;
    n = attn__qtiles(p);
    if (p->heads > ATTN__MAX_ELEMS / n || p->batch > ATTN__MAX_ELEMS / (n * p->heads)) return 0;
    return p->batch * p->heads * n;
}

ATTN_API attn_status attn_attention_task(const attn_attention_params *p, size_t task,
                                         void *workspace, size_t workspace_size)
{
    int empty;
    attn_status st = attn__attention_check(p, workspace, workspace_size, &empty);
    attn__ws w;
    attn__hd hd;
    size_t nt;
    if (st != ATTN_OK) return st;
    if (empty) return ATTN_ERR_ARG; /* no work items */
    if (task >= attn_attention_tasks(p)) return ATTN_ERR_ARG;
    nt = attn__qtiles(p);
    attn__ws_set(p, workspace, &w);
    hd = attn__head(p, task / (nt * p->heads), task / nt % p->heads);
    attn__head_tile(p, &hd, task % nt * ATTN__TQ, &w);
    return ATTN_OK;
}
