/* src/matmul.h - attn_matmul, the packed sgemm.
 *
 * BLIS's structure: loops jc (NC columns of C) / pc (KC-deep slices of k) / ic (MC rows)
 * around a register-blocked microkernel attn__mm_ukr_body (MR x NR, simd/mm_*.h, named by
 * shape; the generic one over the vector layer serves the scalar path). op(B)'s KC x NC panel is
 * packed into NR-column slivers and op(A)'s MC x KC block into MR-row slivers, zero padded, so the
 * microkernel streams contiguous memory whatever the transposes; edge tiles are computed whole into
 * a register-sized buffer and only their valid part is merged into C.
 *
 * Summation order: k is cut into chunks of attn__mm_kc(k) (a function of k alone); in each
 * chunk every C element is one fma chain over p in order, starting from 0, and the chunks
 * are merged in order: C = alpha * acc0 (+ beta * C), then C = fma(alpha, acc_q, C). Every
 * path below (packed, A read in place, no workspace, edge tiles) follows exactly that
 * order, so C's bits do not depend on m, n, the tile position, the workspace or on how C
 * is split into blocks.
 */

static size_t attn__round_up(size_t x, size_t m) { return (x + m - 1) / m * m; }
static size_t attn__min(size_t a, size_t b) { return a < b ? a : b; }

/* B of any storage type (f32, f16, bf16; q8_0, q4_0 stored n x k, whose blocks every path
 * below reads from a block's start, in chunks of k of whole blocks): element i of
 * p and the copies the paths below read it through (its address: attn__dt_at). The
 * conversions are exact, so every path computes on the floats the stored values stand for. */
static ATTN__FORCE_INLINE float attn__mm_elem(attn_dtype t, const void *p, size_t i)
{
    if (t == ATTN_F16) return attn__f16_to_f32(((const uint16_t *)p)[i]);
    if (t == ATTN_BF16) return attn__bf16_to_f32(((const uint16_t *)p)[i]);
    if (t == ATTN_Q8_0 || t == ATTN_Q4_0) {
        const unsigned char *blk = (const unsigned char *)attn__dt_at(t, p, i - i % ATTN__QK);
        const float d = attn__f16_to_f32(attn__q_scale(blk));
        const size_t o = i % ATTN__QK;
        if (t == ATTN_Q8_0) return d * (float)(signed char)blk[2 + o];
        return d * (float)((o < 16 ? blk[2 + o] & 15 : blk[2 + o - 16] >> 4) - 8);
    }
    return ((const float *)p)[i];
}
/* n <= ATTN__VW elements from element i (the rest 0), nothing past them read */
static ATTN__FORCE_INLINE attn__v attn__mm_vload_n(attn_dtype t, const void *p, size_t i,
                                                   size_t n)
{
    if (n >= ATTN__VW) return attn__vload_dt(t, p, i);
    return n ? attn__vload_dt_part(t, p, i, n) : attn__vzero();
}
/* min(rows, ATTN__VW) rows of ATTN__VW elements from element p of the rows at src (stride
 * ld elements) transposed: dst[q * ldd + i] = row i's element p + q; missing rows give
 * zeros */
static ATTN__NOINLINE void attn__mm_tcopy_dt(attn_dtype t, const void *src, size_t p,
                                             size_t ld, size_t rows, float *dst, size_t ldd)
{
    float tmp[ATTN__VW * ATTN__VW]; /* in this function alone: f32 callers' frames lack it */
    size_t i;
    for (i = 0; i < ATTN__VW; i++) /* rows past `rows` zero, so all of tmp is written */
        attn__vstore(tmp + i * ATTN__VW,
                     i < rows ? attn__vload_dt(t, src, i * ld + p) : attn__vzero());
    attn__vtranspose_copy(tmp, ATTN__VW, ATTN__VW, dst, ldd);
}
static void attn__mm_tcopy(attn_dtype t, const void *src, size_t p, size_t ld, size_t rows,
                           float *dst, size_t ldd)
{
    if (t == ATTN_F32)
        attn__vtranspose_copy((const float *)src + p, ld, rows, dst, ldd);
    else
        attn__mm_tcopy_dt(t, src, p, ld, rows, dst, ldd);
}

/* The chunk depth for a given k: k split into ceil(k / KC) near-equal chunks. Depends on
 * k alone (never on m or n): it fixes every C element's summation order. */
static size_t attn__mm_kc(size_t k)
{
    size_t chunks = (k + ATTN__MM_KC - 1) / ATTN__MM_KC;
    return chunks ? (k + chunks - 1) / chunks : 0;
}

/* Microkernel over packed slivers (compile-time strides) and over matrices in place. */
static void attn__mm_ukr_packed(size_t kc, const float *a, const float *b, float *c,
                                size_t ldc, float alpha, float beta, int mode)
{
    attn__mm_ukr_body(ATTN__MR, kc, a, 1, ATTN__MR, b, ATTN__NR, c, ldc, alpha, beta, mode);
}
static void attn__mm_ukr_strided(size_t kc, const float *a, size_t ars, size_t acs,
                                 const float *b, size_t ldb, float *c, size_t ldc, float alpha,
                                 float beta, int mode)
{
    attn__mm_ukr_body(ATTN__MR, kc, a, ars, acs, b, ldb, c, ldc, alpha, beta, mode);
}
/* Raw accumulators of the first mr rows of a tile into t (row length ATTN__NR): where the
 * ISA's kernel honours its rows argument, a kernel of exactly mr rows (same fma chains,
 * fewer of them; A's rows past mr are never read); otherwise all ATTN__MR rows. */
#ifdef ATTN__MM_UKR_ROWS
#define ATTN__MM_ROWS_CASES(ARS, ACS, LDB)                                                  \
    switch (mr) {                                                                           \
    case 1: attn__mm_ukr_body(1, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    case 2: attn__mm_ukr_body(2, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    case 3: attn__mm_ukr_body(3, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    case 4: attn__mm_ukr_body(4, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    case 5: attn__mm_ukr_body(5, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); break; \
    default: attn__mm_ukr_body(ATTN__MR, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0); \
    }
#else
#define ATTN__MM_ROWS_CASES(ARS, ACS, LDB)                                                  \
    attn__mm_ukr_body(ATTN__MR, kc, a, ARS, ACS, b, LDB, t, ATTN__NR, 0.0f, 0.0f, 0);       \
    (void)mr;
#endif
static void attn__mm_ukr_packed_rows(size_t mr, size_t kc, const float *a, const float *b,
                                     float *t)
{
    ATTN__MM_ROWS_CASES(1, ATTN__MR, ATTN__NR)
}
static void attn__mm_ukr_strided_rows(size_t mr, size_t kc, const float *a, size_t ars,
                                      size_t acs, const float *b, size_t ldb, float *t)
{
    ATTN__MM_ROWS_CASES(ars, acs, ldb)
}
#undef ATTN__MM_ROWS_CASES

/* Merges the mr x nr corner of raw accumulators t (row length ldt) into C by the
 * microkernel's rule for mode 1 or 2: the same operations, lane for lane. */
static void attn__mm_merge_ld(float *c, size_t ldc, const float *t, size_t ldt, size_t mr,
                              size_t nr, float alpha, float beta, int mode)
{
    const attn__v va = attn__vset1(alpha), vb = attn__vset1(beta);
    size_t i, j;
    for (i = 0; i < mr; i++) { /* row i at c + i * ldc: never a pointer past the last row */
        float *cr = c + i * ldc;
        const float *tr = t + i * ldt;
        for (j = 0; j < nr; j += ATTN__VW) {
            const size_t w = attn__min(ATTN__VW, nr - j);
            const attn__v acc = attn__vload(tr + j);
            attn__v r;
            if (mode == 2) {
                r = attn__vfma(va, acc, w == ATTN__VW ? attn__vload(cr + j)
                                                      : attn__vload_part(cr + j, w, 0.0f));
            } else {
                r = attn__vmul(va, acc);
                if (beta != 0.0f)
                    r = attn__vfma(vb, w == ATTN__VW ? attn__vload(cr + j)
                                                     : attn__vload_part(cr + j, w, 0.0f), r);
            }
            if (w == ATTN__VW) attn__vstore(cr + j, r);
            else attn__vstore_part(cr + j, r, w);
        }
    }
}
static void attn__mm_merge(float *c, size_t ldc, const float *t, size_t mr, size_t nr,
                           float alpha, float beta, int mode)
{
    attn__mm_merge_ld(c, ldc, t, ATTN__NR, mr, nr, alpha, beta, mode);
}

/* The general tile (no workspace: B^T, and edge tiles, read in place): raw accumulators of
 * an mr x nr tile into t (ATTN__MR x ATTN__NR, row length ATTN__NR), in the microkernel's
 * order. A(i, p) = a[i * ars + p * acs]; B(p, j) = b[p * ldb + j], or b[j * ldb + p] when
 * tb (transposed ATTN__VW steps at a time through a small buffer). Never reads outside the
 * mr x kc and kc x nr operands (rows past mr repeat the last one and are never stored). */
static void attn__mm_tile_any(size_t mr, size_t nr, size_t kc, const float *a, size_t ars,
                              size_t acs, attn_dtype bt, const void *b, size_t ldb, int tb,
                              float *t)
{
    attn__v acc[ATTN__MR][ATTN__NR / ATTN__VW];
    const float *ar[ATTN__MR];
    float blk[ATTN__VW * ATTN__NR];
    size_t i, p, q, j, v;
    for (i = 0; i < ATTN__MR; i++) {
        ar[i] = a + (i < mr ? i : mr - 1) * ars;
        for (v = 0; v < ATTN__NR / ATTN__VW; v++) acc[i][v] = attn__vzero();
    }
    for (p = 0; p < kc;) {
        const float *bp = blk; /* steps p .. p + steps of op(B), rows bs apart */
        size_t steps = 1, bs = ATTN__NR;
        if (tb) {
            steps = attn__min(ATTN__VW, kc - p);
            if (steps == ATTN__VW) {
                for (v = 0; v < ATTN__NR; v += ATTN__VW) /* no pointer past the last row */
                    attn__mm_tcopy(bt, attn__dt_at(bt, b, (nr > v ? v : 0) * ldb), p, ldb,
                                   nr > v ? nr - v : 0, blk + v, ATTN__NR);
            } else {
                for (q = 0; q < steps; q++)
                    for (j = 0; j < ATTN__NR; j++)
                        blk[q * ATTN__NR + j] =
                            j < nr ? attn__mm_elem(bt, b, j * ldb + p + q) : 0.0f;
            }
        } else if (nr == ATTN__NR && bt == ATTN_F32) {
            bp = (const float *)b + p * ldb;
            bs = ldb;
            steps = kc - p;
        } else { /* one row of op(B), converted */
            for (v = 0; v < ATTN__NR; v += ATTN__VW)
                attn__vstore(blk + v, attn__mm_vload_n(bt, b, p * ldb + v, nr > v ? nr - v : 0));
        }
        for (q = 0; q < steps; q++, p++)
            for (i = 0; i < ATTN__MR; i++) {
                const attn__v av = attn__vset1(ar[i][p * acs]);
                const float *bq = bp + q * bs; /* never a pointer past the last row */
                for (v = 0; v < ATTN__NR / ATTN__VW; v++)
                    acc[i][v] = attn__vfma(av, attn__vload(bq + v * ATTN__VW), acc[i][v]);
            }
    }
    for (i = 0; i < ATTN__MR; i++)
        for (v = 0; v < ATTN__NR / ATTN__VW; v++)
            attn__vstore(t + i * ATTN__NR + v * ATTN__VW, acc[i][v]);
}

/* The chunk depth for B of type bt: block types take whole blocks (k and KC multiples of
 * ATTN__QK, so the chunk stays within min(k, KC)) */
static size_t attn__mm_kct(attn_dtype bt, size_t k)
{
    const size_t kc = attn__mm_kc(k);
    return bt == ATTN_Q8_0 || bt == ATTN_Q4_0 ? attn__round_up(kc, ATTN__QK) : kc;
}

/* Requests rows r0 .. r1 (stride ld) of kc floats each: the next sliver while one packs
 * (short row pieces the hardware prefetcher does not pick up in time). */
static void attn__mm_prefetch_rows(const float *x, size_t ld, size_t rows, size_t kc)
{
    size_t r, l;
    for (r = 0; r < rows; r++)
        for (l = 0; l < kc; l += 16) ATTN__PREFETCH(x + r * ld + l);
}

/* Packs `rows` rows of a row-major matrix (stride ld, kc floats each) transposed into
 * slivers of w rows: sliver s holds element (s*w + i, p) at dst[s * w * kc + p * w + i];
 * rows past `rows` are zero. With far (the matrix far out of cache), the next sliver's rows
 * are prefetched while one packs. Where w is not a multiple of ATTN__VW, the transposing
 * copy writes up to ATTN__VW floats past a sliver's last row (see attn__mm_pack_a). */
static void attn__mm_pack_t_dt(attn_dtype st, const void *src, size_t ld, size_t rows,
                               size_t kc, size_t w, int far, float *dst)
{
    size_t s, g, p, i;
    for (s = 0; s < rows; s += w, dst += w * kc) {
        const size_t r = attn__min(w, rows - s);
        const void *sp = attn__dt_at(st, src, s * ld);
        if (far && s + w < rows && st == ATTN_F32)
            attn__mm_prefetch_rows((const float *)sp + w * ld, ld, attn__min(w, rows - s - w), kc);
        for (g = 0; g < w; g += ATTN__VW) {
            /* no rows left: zeros, nothing read */
            const void *sg = r > g ? attn__dt_at(st, sp, g * ld) : sp;
            for (p = 0; p + ATTN__VW <= kc; p += ATTN__VW)
                attn__mm_tcopy(st, sg, p, ld, r > g ? r - g : 0, dst + p * w + g, w);
            for (; p < kc; p++)
                for (i = 0; i < ATTN__VW && g + i < w; i++)
                    dst[p * w + g + i] = g + i < r ? attn__mm_elem(st, sg, i * ld + p) : 0.0f;
        }
    }
}
static void attn__mm_pack_t(const float *src, size_t ld, size_t rows, size_t kc, size_t w,
                            int far, float *dst)
{
    attn__mm_pack_t_dt(ATTN_F32, src, ld, rows, kc, w, far, dst);
}

/* Packs op(A)[i0 .. i0+mc, p0 .. p0+kc) into MR-row slivers: sliver s holds element
 * (s*MR + i, p) at pa[s * MR * kc + p * MR + i]; rows past mc hold zeros or other rows of
 * op(A) (m rows in all), and feed only results that are never stored. Stores whole vectors
 * where MR is not a multiple of ATTN__VW: up to ATTN__VW floats past a sliver's last row are
 * written and later overwritten (or, from the transposes, land in the ATTN__VW floats of
 * slack after the A area).
 * A is read row after row of its storage (in order for A^T; for A, sliver after sliver). */
static void attn__mm_pack_a(int ta, const float *a, size_t lda, size_t m, size_t i0,
                            size_t mc, size_t p0, size_t kc, float *pa)
{
    size_t s, p, g, q;
    if (ta) { /* A stored k x m: row p of the storage holds op(A)'s column p */
        /* 16 rows of the storage at a time, sliver after sliver: each sliver receives whole
         * cache lines in order (the slivers lie MR * kc floats apart, often a multiple of
         * 4 KiB: a row at a time across them would write every sliver's line of one L1 set) */
        for (q = 0; q < kc; q += 16)
            for (s = 0; s < mc; s += ATTN__MR) {
                const size_t mr = attn__min(ATTN__MR, mc - s);
                for (p = q; p < kc && p < q + 16; p++) {
                    const float *src = a + (p0 + p) * lda + i0 + s;
                    float *dst = pa + s * kc + p * ATTN__MR;
                    for (g = 0; g < ATTN__MR; g += ATTN__VW) {
                        attn__v x = attn__vzero();
                        if (i0 + s + g + ATTN__VW <= m)
                            x = attn__vload(src + g); /* lanes past mr: unused rows */
                        else if (g < mr) x = attn__vload_part(src + g, mr - g, 0.0f);
                        if (g + ATTN__VW > ATTN__MR && p + 1 == kc) /* not into the next sliver */
                            attn__vstore_part(dst + g, x, ATTN__MR - g);
                        else
                            attn__vstore(dst + g, x);
                    }
                }
            }
        return;
    }
    /* A stored m x k: transposes */
    attn__mm_pack_t(a + i0 * lda + p0, lda, mc, kc, ATTN__MR, m * lda > ATTN__MM_FAR, pa);
}

/* Requests the lines of `rows` rows of len floats (stride ld) from x, a share before each
 * of `tiles` tiles (attn__mm_ahead_step): the next part of A (far out of cache) arrives
 * while the current one computes, its short row pieces too few for the hardware prefetcher
 * alone. rows = 0: nothing. */
typedef struct {
    const float *x;
    size_t ld, rows, len, per, r, l; /* per: lines a step; r, l: the next row and line */
} attn__mm_ahead;

static void attn__mm_ahead_init(attn__mm_ahead *h, const float *x, size_t ld, size_t rows,
                                size_t len, size_t tiles)
{
    h->x = x, h->ld = ld, h->rows = rows, h->len = len, h->r = h->l = 0;
    h->per = rows ? (rows * (len / 16 + 1) + tiles - 1) / tiles : 0;
}

static ATTN__FORCE_INLINE void attn__mm_ahead_step(attn__mm_ahead *h)
{
    size_t q;
    for (q = 0; q < h->per && h->r < h->rows; q++) {
        ATTN__PREFETCH(h->x + h->r * h->ld + attn__min(h->l * 16, h->len - 1));
        if (++h->l > h->len / 16) h->l = 0, h->r++;
    }
}

/* Packs op(B)[p0 .. p0+kc, j0 .. j0+nc) into NR-column slivers: sliver s holds element
 * (p, s*NR + j) at pb[s * NR * kc + p * NR + j]; columns past nc are zero. B (of type bt,
 * converted to float here) is read row after row of its storage (in order for B; for B^T,
 * sliver after sliver). */
static ATTN__FORCE_INLINE void attn__mm_pack_bn(attn_dtype bt, const void *b, size_t ldb,
                                                size_t p0, size_t kc, size_t j0, size_t nc,
                                                float *pb)
{
    size_t s, p, v;
    for (p = 0; p < kc; p++) { /* row p of the storage holds op(B)'s row p */
        const void *src = attn__dt_at(bt, b, (p0 + p) * ldb + j0);
        float *dst = pb + p * ATTN__NR;
        for (s = 0; s + ATTN__NR <= nc; s += ATTN__NR, dst += ATTN__NR * kc)
            for (v = 0; v < ATTN__NR; v += ATTN__VW)
                attn__vstore(dst + v, attn__vload_dt(bt, src, s + v));
        if (s < nc)
            for (v = 0; v < ATTN__NR; v += ATTN__VW)
                attn__vstore(dst + v,
                             attn__mm_vload_n(bt, src, s + v, nc - s > v ? nc - s - v : 0));
    }
}
static void attn__mm_pack_b(int tb, attn_dtype bt, const void *b, size_t ldb, size_t p0,
                            size_t kc, size_t j0, size_t nc, float *pb)
{
    if (tb) /* B stored n x k: transposes */
        attn__mm_pack_t_dt(bt, attn__dt_at(bt, b, j0 * ldb + p0), ldb, nc, kc, ATTN__NR,
                           nc * ldb > ATTN__MM_FAR, pb);
    else if (bt == ATTN_F16)
        attn__mm_pack_bn(ATTN_F16, b, ldb, p0, kc, j0, nc, pb);
    else if (bt == ATTN_BF16)
        attn__mm_pack_bn(ATTN_BF16, b, ldb, p0, kc, j0, nc, pb);
    else
        attn__mm_pack_bn(ATTN_F32, b, ldb, p0, kc, j0, nc, pb);
}

/* One MR x NR tile of C (mr x nr valid) through the microkernel: whole tiles straight into
 * C, edge tiles into a buffer first. A(i, p) = a[i * ars + p * acs] (all MR rows readable
 * unless ATTN__MM_UKR_ROWS),
 * B(p, j) = b[p * ldb + j] (all NR columns readable); packed slivers have ars = 1,
 * acs = MR, ldb = NR. pfc: request the tile's lines of C first (C far out of cache). */
static ATTN__FORCE_INLINE void attn__mm_tile(size_t mr, size_t nr, size_t kc, const float *a,
                                             size_t ars, size_t acs, const float *b, size_t ldb,
                                             float *c, size_t ldc, float alpha, float beta,
                                             int mode, int pfc)
{
    const int packed = ars == 1 && acs == ATTN__MR && ldb == ATTN__NR;
    if (pfc) { /* C far out of cache: its lines arrive while the tile computes */
        size_t i;
        for (i = 0; i < mr; i++) {
            ATTN__PREFETCH(c + i * ldc);
            ATTN__PREFETCH(c + i * ldc + nr - 1);
        }
    }
    if (mr == ATTN__MR && nr == ATTN__NR) {
        if (packed) attn__mm_ukr_packed(kc, a, b, c, ldc, alpha, beta, mode);
        else attn__mm_ukr_strided(kc, a, ars, acs, b, ldb, c, ldc, alpha, beta, mode);
    } else {
        float t[ATTN__MR * ATTN__NR];
        if (packed) attn__mm_ukr_packed_rows(mr, kc, a, b, t);
        else attn__mm_ukr_strided_rows(mr, kc, a, ars, acs, b, ldb, t);
        attn__mm_merge(c, ldc, t, mr, nr, alpha, beta, mode);
    }
}

/* Without a workspace: A and B read in place, tile by tile. */
static void attn__mm_nopack(int ta, int tb, size_t m, size_t n, size_t k, float alpha,
                            const float *a, size_t lda, attn_dtype bt, const void *b, size_t ldb,
                            float beta, float *c, size_t ldc)
{
    const size_t kcb = attn__mm_kct(bt, k), ars = ta ? 1 : lda, acs = ta ? lda : 1;
    size_t i, j, pc;
    for (j = 0; j < n; j += ATTN__NR) {
        const size_t nr = attn__min(ATTN__NR, n - j);
        for (i = 0; i < m; i += ATTN__MR) {
            const size_t mr = attn__min(ATTN__MR, m - i);
            for (pc = 0; pc < k; pc += kcb) {
                const size_t kc = attn__min(kcb, k - pc);
                const float *ap = a + i * ars + pc * acs;
                const void *bp = attn__dt_at(bt, b, tb ? j * ldb + pc : pc * ldb + j);
                float *cp = c + i * ldc + j;
                const int mode = pc == 0 ? 1 : 2;
                if (mr == ATTN__MR && nr == ATTN__NR && !tb && bt == ATTN_F32) {
                    attn__mm_ukr_strided(kc, ap, ars, acs, (const float *)bp, ldb, cp, ldc, alpha,
                                         beta, mode);
                } else {
                    float t[ATTN__MR * ATTN__NR];
                    attn__mm_tile_any(mr, nr, kc, ap, ars, acs, bt, bp, ldb, tb, t);
                    attn__mm_merge(cp, ldc, t, mr, nr, alpha, beta, mode);
                }
            }
        }
    }
}

/* C[0..m, 0..nc) (+)= alpha * A[0..m, p0..p1) * op(B)[p0..p1, 0..nc) for the chunks of depth
 * kcb from p0 to p1 (p1 - p0 <= kcb, or all of k), A (not transposed) read in place one
 * MR-row sliver at a time, each through all chunks; chunk q of op(B) is packed at
 * pb + q * kcb * np. The B panels stay in L2 while A streams by. Edge rows: with the ISA's
 * exact-row kernels (ATTN__MM_UKR_ROWS), read in place, the last MR + r rows split into
 * two near-equal tiles; otherwise the edge sliver is packed into pa. With pfa, the next
 * sliver's lines are requested while one runs (attn__mm_ahead; for short streams of an A
 * far out of cache; through all of k, the hardware's prefetcher does better alone).
 * pfc: see attn__mm_tile. */
static void attn__mm_direct_a(size_t m, size_t nc, size_t p0, size_t p1, size_t kcb,
                              const float *a, size_t lda, const float *pb, size_t np, float *pa,
                              float *c, size_t ldc, float alpha, float beta, int pfa, int pfc)
{
    const size_t tiles = (nc + ATTN__NR - 1) / ATTN__NR;
    size_t ir, jr, pc, mr, next;
    for (ir = 0; ir < m; ir += mr) {
        mr = attn__min(ATTN__MR, m - ir);
#ifdef ATTN__MM_UKR_ROWS
        /* MR < rows left < 2 MR: two near-equal short tiles rather than MR + a few rows */
        if (m - ir > ATTN__MR && m - ir < 2 * ATTN__MR) mr = (m - ir + 1) / 2;
#endif
        next = pfa ? attn__min(ATTN__MR, m - ir - mr) : 0; /* rows to request ahead */
        for (pc = p0; pc < p1; pc += kcb) {
            const size_t kc = attn__min(kcb, p1 - pc);
            const float *ap = a + ir * lda + pc, *bp = pb + (pc - p0) * np;
            const int mode = pc == 0 ? 1 : 2;
            size_t ars = lda, acs = 1;
            attn__mm_ahead ah;
            attn__mm_ahead_init(&ah, next ? a + (ir + mr) * lda + pc : a, lda, next, kc, tiles);
#ifndef ATTN__MM_UKR_ROWS
            if (mr < ATTN__MR) { /* rows past m do not exist: pack the edge */
                attn__mm_pack_a(0, a, lda, m, ir, mr, pc, kc, pa);
                ap = pa;
                ars = 1;
                acs = ATTN__MR;
            }
#endif
            for (jr = 0; jr < nc; jr += ATTN__NR) {
                attn__mm_ahead_step(&ah);
                attn__mm_tile(mr, attn__min(ATTN__NR, nc - jr), kc, ap, ars, acs, bp + jr * kc,
                              ATTN__NR, c + ir * ldc + jr, ldc, alpha, beta, mode, pfc);
            }
        }
    }
    (void)pa;
}

/* ---- skinny products: m <= ATTN__MM_SKINNY rows (decode), B streamed once ------------- */

/* Rows of C up to which the matrix-vector paths below serve the 16-bit B types: no
 * packing, the weights read once, accumulators in registers. */
#define ATTN__MM_SKINNY 8
/* op(B) = B^T: elements of k per pass over a block of B's rows (the block stays in L1 while
 * each group of A's rows takes it; the accumulators wait in memory between passes, so the
 * summation order does not depend on it) */
#define ATTN__MV_PASS 1024
/* Floats of the stack buffer in which attn__mv_nn keeps its rows' chains */
#define ATTN__MV_PANEL 1024

/* op(B) = B (k x n, row stride ldb): the chains of R rows of op(A) (A(i, p) = a[i * ars +
 * p * acs]) over kc rows of B and the w columns at b, into t (R rows of wp >= w floats, zeroed
 * here): each row of B read once, whole, for the R rows; each element one fma chain over p
 * in order from 0, the microkernel's order, so the result is the packed path's, bit for
 * bit. The chains wait in t (L1) between rows of B. The U rows at nb are requested into L2
 * as these are read (the pieces of a panel are too short for the hardware prefetcher; L2,
 * not L1, keeps more misses in flight than L1's fill buffers hold). */
static ATTN__FORCE_INLINE void attn__mv_nn_step(attn_dtype bt, size_t R, size_t U,
                                                const float *a, size_t ars, size_t acs,
                                                const void *b, const void *nb, size_t ldb,
                                                size_t w, size_t wp, float *t)
{
    attn__v av[4][4], bv[4], s;
    size_t i, j, q;
    ATTN__UNROLL
    for (i = 0; i < R; i++)
        ATTN__UNROLL
        for (q = 0; q < U; q++) av[i][q] = attn__vset1(a[i * ars + q * acs]);
    for (j = 0; j + ATTN__VW <= w; j += ATTN__VW) {
        ATTN__UNROLL
        for (q = 0; q < U; q++) {
            ATTN__PREFETCH_L2(attn__dt_at(bt, nb, q * ldb + j));
            bv[q] = attn__vload_dt(bt, b, q * ldb + j);
        }
        ATTN__UNROLL
        for (i = 0; i < R; i++) {
            s = attn__vload(t + i * wp + j);
            ATTN__UNROLL
            for (q = 0; q < U; q++) s = attn__vfma(av[i][q], bv[q], s);
            attn__vstore(t + i * wp + j, s);
        }
    }
}
/* attn__mv_nn_step's rows of B per pass over t for R rows of A (u x R broadcasts held) */
#define ATTN__MV_NN_U(R) ((R) == 4 ? ATTN__MV_J4 : 4)
static ATTN__FORCE_INLINE void attn__mv_nn_body(attn_dtype bt, size_t R, size_t kc,
                                                const float *a, size_t ars, size_t acs,
                                                const void *b, size_t ldb, size_t w, size_t wp,
                                                float *t)
{
    const size_t u = ATTN__MV_NN_U(R);
    size_t p;
    for (p = 0; p + u <= kc; p += u) /* the next u rows requested (or these, at the end) */
        attn__mv_nn_step(bt, R, u, a + p * acs, ars, acs, attn__dt_at(bt, b, p * ldb),
                         attn__dt_at(bt, b, (p + 2 * u <= kc ? p + u : p) * ldb), ldb, w, wp, t);
}

/* op(B) = B^T (B n x k), op(A) = A: acc[i * 4 + q] += A(i, p .. p + VW) * B(row q, same p)
 * lane by lane for p in [p0, p1) (whole vectors, then the rest of k zero padded), R rows of
 * A at a (stride lda), J rows of B at brow[q]: per element ATTN__VW fma chains over p in
 * order, lane l taking the p = l mod ATTN__VW. pf (or NULL): the next rows of B, requested
 * as these are read (kept in registers here, not stepped through memory). */
static ATTN__FORCE_INLINE void attn__mv_t_body(attn_dtype bt, size_t R, size_t J, size_t p0,
                                               size_t p1, const float *a, size_t lda,
                                               const void *const *brow, attn__pfs *pf,
                                               attn__v *acc)
{
    attn__v s[4][4], av[4], bv;
    attn__pfs f = pf ? *pf : attn__pfs_make(NULL, NULL);
    size_t i, q, p;
    ATTN__UNROLL
    for (i = 0; i < R; i++)
        ATTN__UNROLL
        for (q = 0; q < J; q++) s[i][q] = acc[i * 4 + q];
    for (p = p0; p + ATTN__VW <= p1; p += ATTN__VW) {
        ATTN__UNROLL
        for (i = 0; i < R; i++) av[i] = attn__vload(a + i * lda + p);
        attn__pfs_step(&f, J * ATTN__VW * attn__dt_block_bytes(bt));
        ATTN__UNROLL
        for (q = 0; q < J; q++) {
            bv = attn__vload_dt(bt, brow[q], p);
            ATTN__UNROLL
            for (i = 0; i < R; i++) s[i][q] = attn__vfma(av[i], bv, s[i][q]);
        }
    }
    if (p < p1) {
        attn__pfs_step(&f, J * (p1 - p) * attn__dt_block_bytes(bt));
        ATTN__UNROLL
        for (i = 0; i < R; i++) av[i] = attn__vload_part(a + i * lda + p, p1 - p, 0.0f);
        ATTN__UNROLL
        for (q = 0; q < J; q++) {
            bv = attn__vload_dt_part(bt, brow[q], p, p1 - p);
            ATTN__UNROLL
            for (i = 0; i < R; i++) s[i][q] = attn__vfma(av[i], bv, s[i][q]);
        }
    }
    if (pf) *pf = f;
    ATTN__UNROLL
    for (i = 0; i < R; i++)
        ATTN__UNROLL
        for (q = 0; q < J; q++) acc[i * 4 + q] = s[i][q];
}

/* s[i * ss] += d * (A row i . the block at blk) for R rows of A (32 floats each at ab, lda
 * apart), the block (q8_0, q4_0) widened once for them: its products with a row summed lane
 * by lane, then times its scale d (few rows: fewer operations than widening to d * q) */
static ATTN__FORCE_INLINE void attn__mv_qsums(attn_dtype bt, size_t R, const unsigned char *blk,
                                              const float *ab, size_t lda, attn__v *s,
                                              size_t ss)
{
    const attn__v d = attn__vset1_f16(attn__q_scale(blk));
    attn__v w[ATTN__QK / ATTN__VW];
    size_t i, v;
    attn__vload_qblock(bt, blk, attn__vset1(1.0f), w);
    ATTN__UNROLL
    for (i = 0; i < R; i++) {
        attn__v bsum = attn__vmul(attn__vload(ab + i * lda), w[0]);
        ATTN__UNROLL
        for (v = 1; v < ATTN__QK / ATTN__VW; v++)
            bsum = attn__vfma(attn__vload(ab + i * lda + v * ATTN__VW), w[v], bsum);
        s[i * ss] = attn__vfma(d, bsum, s[i * ss]);
    }
}

/* attn__mv_t_body for B in blocks (q8_0, q4_0): blocks [b0, b1) of k, each block of each
 * of B's J rows dequantized in registers once for the R rows of A. 4 rows: as the weights'
 * f32 values (d * q exact, as the packing step dequantizes them), fma'd into the lanes; 1
 * or 2 rows: attn__mv_qsums. pf as there. */
static ATTN__FORCE_INLINE void attn__mv_q_body(attn_dtype bt, size_t R, size_t J, size_t b0,
                                               size_t b1, const float *a, size_t lda,
                                               const void *const *brow, attn__pfs *pf,
                                               attn__v *acc)
{
    const size_t bs = attn__dt_block_bytes(bt), nv = ATTN__QK / ATTN__VW;
    attn__v s[4][4], w[4][ATTN__QK / ATTN__VW], av;
    attn__pfs f = pf ? *pf : attn__pfs_make(NULL, NULL);
    size_t i, q, b, v;
    ATTN__UNROLL
    for (i = 0; i < R; i++)
        ATTN__UNROLL
        for (q = 0; q < J; q++) s[i][q] = acc[i * 4 + q];
    for (b = b0; b < b1; b++) {
        const float *ab = a + b * ATTN__QK;
        attn__pfs_step(&f, J * bs);
        ATTN__UNROLL
        for (q = 0; q < J; q++) {
            const unsigned char *blk = (const unsigned char *)brow[q] + b * bs;
            if (R == 4) {
                attn__vload_qdeq(bt, blk, w[q]);
                continue;
            }
            attn__mv_qsums(bt, R, blk, ab, lda, &s[0][q], 4);
        }
        if (R == 4)
            ATTN__UNROLL
            for (i = 0; i < R; i++)
                ATTN__UNROLL
                for (v = 0; v < nv; v++) {
                    av = attn__vload(ab + i * lda + v * ATTN__VW);
                    ATTN__UNROLL
                    for (q = 0; q < J; q++) s[i][q] = attn__vfma(av, w[q][v], s[i][q]);
                }
    }
    if (pf) *pf = f;
    ATTN__UNROLL
    for (i = 0; i < R; i++)
        ATTN__UNROLL
        for (q = 0; q < J; q++) acc[i * 4 + q] = s[i][q];
}

/* C has one row (m = 1): the dot product of A's row and one row of B (brow, k elements),
 * over ATTN__MV1_U chains (the lanes of elements p, p + VW, ...; the block types: a block's
 * partial sums per lane times its scale, into alternate chains). B is read one row after
 * the other, in storage order: the single stream that the hardware prefetcher follows best
 * (rows read side by side are several streams, read slower). Row groups of A gain nothing
 * from this order (A's rows then come from L2, not L1, for every row of B). */
static ATTN__FORCE_INLINE float attn__mv_t1_body(attn_dtype bt, size_t k, const float *a,
                                                 const void *brow)
{
    const size_t U = ATTN__MV1_U, bs = attn__dt_block_bytes(bt);
    attn__v s[ATTN__MV1_U], bv[ATTN__MV1_U];
    size_t u, p;
    ATTN__UNROLL
    for (u = 0; u < U; u++) s[u] = attn__vzero();
    if (bt == ATTN_Q8_0 || bt == ATTN_Q4_0) /* k: whole blocks */
        for (p = 0; p < k; p += U * ATTN__QK)
            ATTN__UNROLL
            for (u = 0; u < U; u++) {
                const size_t e = p + u * ATTN__QK;
                const unsigned char *blk = (const unsigned char *)brow + e / ATTN__QK * bs;
                if (e >= k) break;
                attn__mv_qsums(bt, 1, blk, a + e, 0, &s[u], 1);
            }
    else {
        for (p = 0; p + U * ATTN__VW <= k; p += U * ATTN__VW) {
            ATTN__UNROLL
            for (u = 0; u < U; u++) bv[u] = attn__vload_dt(bt, brow, p + u * ATTN__VW);
            ATTN__UNROLL
            for (u = 0; u < U; u++)
                s[u] = attn__vfma(attn__vload(a + p + u * ATTN__VW), bv[u], s[u]);
        }
        for (; p + ATTN__VW <= k; p += ATTN__VW)
            s[0] = attn__vfma(attn__vload(a + p), attn__vload_dt(bt, brow, p), s[0]);
        if (p < k)
            s[0] = attn__vfma(attn__vload_part(a + p, k - p, 0.0f),
                              attn__vload_dt_part(bt, brow, p, k - p), s[0]);
    }
    ATTN__UNROLL
    for (u = 1; u < U; u++) s[0] = attn__vadd(s[0], s[u]);
    return attn__vhsum(s[0]);
}
static float attn__mv_t1(attn_dtype bt, size_t k, const float *a, const void *brow)
{
    if (bt == ATTN_F16) return attn__mv_t1_body(ATTN_F16, k, a, brow);
    if (bt == ATTN_BF16) return attn__mv_t1_body(ATTN_BF16, k, a, brow);
    if (bt == ATTN_Q8_0) return attn__mv_t1_body(ATTN_Q8_0, k, a, brow);
    return attn__mv_t1_body(ATTN_Q4_0, k, a, brow);
}

/* The bodies above for a storage type and row count known at run time (1, 2 or 4 rows;
 * 4 rows take B's 4 rows ATTN__MV_J4 at a time, within the ISA's vector registers). */
#define ATTN__MV_ROWS(BODY, T)                                                             \
    if (R == 4 && ATTN__MV_J4 == 4) BODY(T, 4, 4, p0, p1, a, lda, brow, pf, acc);          \
    else if (R == 4) {                                                                     \
        BODY(T, 4, 2, p0, p1, a, lda, brow, pf, acc);                                      \
        BODY(T, 4, 2, p0, p1, a, lda, brow + 2, pf, acc + 2);                              \
    } else if (R == 2) BODY(T, 2, 4, p0, p1, a, lda, brow, pf, acc);                       \
    else BODY(T, 1, 4, p0, p1, a, lda, brow, pf, acc);
/* attn__mv_t_body, or for the block types attn__mv_q_body (over blocks, not elements):
 * only 16-bit and block-type B come here (f32 B^T keeps attn_matmul's order: attn__mv_tx) */
static void attn__mv_trows(attn_dtype bt, size_t R, size_t p0, size_t p1, const float *a,
                           size_t lda, const void *const *brow, attn__pfs *pf,
                           attn__v *acc)
{
    if (bt == ATTN_F16) {
        ATTN__MV_ROWS(attn__mv_t_body, ATTN_F16)
    } else if (bt == ATTN_BF16) {
        ATTN__MV_ROWS(attn__mv_t_body, ATTN_BF16)
    } else {
        p0 /= ATTN__QK, p1 /= ATTN__QK;
        if (bt == ATTN_Q8_0) {
            ATTN__MV_ROWS(attn__mv_q_body, ATTN_Q8_0)
        } else {
            ATTN__MV_ROWS(attn__mv_q_body, ATTN_Q4_0)
        }
    }
}
#undef ATTN__MV_ROWS
static void attn__mv_nn_rows(attn_dtype bt, size_t R, size_t kc, const float *a, size_t ars,
                             size_t acs, const void *b, size_t ldb, size_t w, size_t wp, float *t)
{
    const size_t u = ATTN__MV_NN_U(R);
    size_t i, p, j;
    for (i = 0; i < R * wp; i += ATTN__VW) attn__vstore(t + i, attn__vzero());
#define ATTN__MV_NN(T)                                                                      \
    if (R == 4) attn__mv_nn_body(T, 4, kc, a, ars, acs, b, ldb, w, wp, t);                  \
    else if (R == 2) attn__mv_nn_body(T, 2, kc, a, ars, acs, b, ldb, w, wp, t);             \
    else attn__mv_nn_body(T, 1, kc, a, ars, acs, b, ldb, w, wp, t);
    if (bt == ATTN_F16) {
        ATTN__MV_NN(ATTN_F16)
    } else if (bt == ATTN_BF16) {
        ATTN__MV_NN(ATTN_BF16)
    } else {
        ATTN__MV_NN(ATTN_F32)
    }
#undef ATTN__MV_NN
    for (p = 0; p < kc; p++) /* the last rows of B, and the last columns, one at a time */
        for (j = p < kc / u * u ? w / ATTN__VW * ATTN__VW : 0; j < w; j += ATTN__VW) {
            const attn__v bv = attn__mm_vload_n(bt, b, p * ldb + j, w - j);
            for (i = 0; i < R; i++)
                attn__vstore(t + i * wp + j, attn__vfma(attn__vset1(a[i * ars + p * acs]), bv,
                                                        attn__vload(t + i * wp + j)));
        }
}

/* Rows of C taken together: 4, then 2, then 1 */
static size_t attn__mv_group(size_t left) { return left >= 4 ? 4 : left >= 2 ? 2 : 1; }

/* C = alpha op(A) B (+ beta C), m <= ATTN__MM_SKINNY, B in f32 or 16 bits: for each panel of
 * columns (as many as the chains of the largest row group fit in: ws's wsf floats if more
 * than the ATTN__MV_PANEL on the stack) and each chunk of k (attn__mm_kc, as the packed path),
 * each group of rows runs over the chunk's rows of B (read once from memory, from cache for
 * the later groups), merged into C by attn__mm_merge_ld: attn_matmul's order. Not inlined:
 * its stack panel would widen attn__matmul's frame, under which the no-workspace path runs. */
static ATTN__NOINLINE void attn__mv_nn(int ta, size_t m, size_t n, size_t k, float alpha,
                                       const float *a, size_t lda, attn_dtype bt, const void *b,
                                       size_t ldb, float beta, float *c, size_t ldc, float *ws,
                                       size_t wsf)
{
    const size_t kcb = attn__mm_kc(k), ars = ta ? 1 : lda, acs = ta ? lda : 1;
    const size_t g = attn__mv_group(m);
    float stack[ATTN__MV_PANEL], *t = ws && wsf > ATTN__MV_PANEL ? ws : stack;
    const size_t wmax = attn__min(attn__round_up(n, ATTN__VW),
                                  (t == ws ? wsf : ATTN__MV_PANEL) / g / ATTN__VW * ATTN__VW);
    size_t pc, j, i, R;
    for (j = 0; j < n; j += wmax) {
        const size_t w = attn__min(wmax, n - j), wp = attn__round_up(w, ATTN__VW);
        for (pc = 0; pc < k; pc += kcb) {
            const size_t kc = attn__min(kcb, k - pc);
            for (i = 0; i < m; i += R) {
                R = attn__mv_group(m - i);
                attn__mv_nn_rows(bt, R, kc, a + i * ars + pc * acs, ars, acs,
                                 attn__dt_at(bt, b, pc * ldb + j), ldb, w, wp, t);
                attn__mm_merge_ld(c + i * ldc + j, ldc, t, wp, R, w, alpha, beta,
                                  pc == 0 ? 1 : 2);
            }
        }
    }
}

/* op(B) = B^T, f32 B (n x k): the chains of R rows of op(A) over kc steps of k of jn <=
 * ATTN__MV_TXW rows of B at bj, into t (row length ATTN__MV_TXW): the rows of B read along
 * k together, transposed ATTN__VW steps at a time into blk, the chains in registers. */
#define ATTN__MV_TXW (ATTN__MV_TXV * ATTN__VW)
static void attn__mv_tx_block(const float *bj, size_t ldb, size_t jn, size_t p, size_t steps,
                              float *blk)
{
    size_t q, l, v;
    if (steps == ATTN__VW) {
        ATTN__UNROLL
        for (v = 0; v < ATTN__MV_TXW; v += ATTN__VW) {
            if (jn > v) /* no pointer past the last row */
                attn__vtranspose_copy(bj + v * ldb + p, ldb, attn__min(jn - v, ATTN__VW),
                                      blk + v, ATTN__MV_TXW);
            else
                for (q = 0; q < ATTN__VW; q++)
                    attn__vstore(blk + q * ATTN__MV_TXW + v, attn__vzero());
        }
    } else { /* all of blk written: a call's stack use does not depend on its sizes */
        for (q = 0; q < ATTN__VW; q++)
            for (l = 0; l < ATTN__MV_TXW; l++)
                blk[q * ATTN__MV_TXW + l] = l < jn && q < steps ? bj[l * ldb + p + q] : 0.0f;
    }
}
static ATTN__FORCE_INLINE void attn__mv_tx_body(size_t R, size_t kc, const float *bj,
                                                size_t ldb, size_t jn, const float *a,
                                                size_t ars, size_t acs, float *t)
{
    float blk[ATTN__VW * ATTN__MV_TXW];
    attn__v s[4][ATTN__MV_TXV], bv[ATTN__MV_TXV], av;
    size_t i, p, q, v, steps;
    ATTN__UNROLL
    for (i = 0; i < R; i++)
        ATTN__UNROLL
        for (v = 0; v < ATTN__MV_TXV; v++) s[i][v] = attn__vzero();
    for (p = 0; p < kc; p += steps) {
        steps = attn__min(ATTN__VW, kc - p);
        attn__mv_tx_block(bj, ldb, jn, p, steps, blk);
        for (q = 0; q < steps; q++) {
            ATTN__UNROLL
            for (v = 0; v < ATTN__MV_TXV; v++)
                bv[v] = attn__vload(blk + q * ATTN__MV_TXW + v * ATTN__VW);
            ATTN__UNROLL
            for (i = 0; i < R; i++) {
                av = attn__vset1(a[i * ars + (p + q) * acs]);
                ATTN__UNROLL
                for (v = 0; v < ATTN__MV_TXV; v++) s[i][v] = attn__vfma(av, bv[v], s[i][v]);
            }
        }
    }
    ATTN__UNROLL
    for (i = 0; i < R; i++)
        ATTN__UNROLL
        for (v = 0; v < ATTN__MV_TXV; v++)
            attn__vstore(t + i * ATTN__MV_TXW + v * ATTN__VW, s[i][v]);
}
static void attn__mv_tx_rows(size_t R, size_t kc, const float *bj, size_t ldb, size_t jn,
                             const float *a, size_t ars, size_t acs, float *t)
{
    if (R == 4) attn__mv_tx_body(4, kc, bj, ldb, jn, a, ars, acs, t);
    else if (R == 2) attn__mv_tx_body(2, kc, bj, ldb, jn, a, ars, acs, t);
    else attn__mv_tx_body(1, kc, bj, ldb, jn, a, ars, acs, t);
}

/* C = alpha op(A) B^T (+ beta C), m <= ATTN__MM_SKINNY, f32 B (n x k): attn_matmul's order
 * (one chain per element over each chunk of k, chunks merged in order) with B streamed once
 * (ATTN__MV_TXW rows at a time; a second group of rows reads the chunk from L1). */
static void attn__mv_tx(int ta, size_t m, size_t n, size_t k, float alpha, const float *a,
                        size_t lda, const float *b, size_t ldb, float beta, float *c,
                        size_t ldc)
{
    const size_t kcb = attn__mm_kc(k), ars = ta ? 1 : lda, acs = ta ? lda : 1;
    float t[ATTN__MM_SKINNY * ATTN__MV_TXW];
    size_t j, pc, i, R;
    for (j = 0; j < n; j += ATTN__MV_TXW) {
        const size_t jn = attn__min(ATTN__MV_TXW, n - j);
        for (pc = 0; pc < k; pc += kcb) {
            const size_t kc = attn__min(kcb, k - pc);
            for (i = 0; i < m; i += R) {
                R = attn__mv_group(m - i);
                attn__mv_tx_rows(R, kc, b + j * ldb + pc, ldb, jn, a + i * ars + pc * acs, ars,
                                 acs, t + i * ATTN__MV_TXW);
            }
            attn__mm_merge_ld(c + j, ldc, t, ATTN__MV_TXW, m, jn, alpha, beta,
                              pc == 0 ? 1 : 2);
        }
    }
}

/* C = alpha A B^T (+ beta C), m <= ATTN__MM_SKINNY, B in 16 bits or blocks: 4 rows of B at
 * a time (the next 4 requested as they are read, one stream: attn__pfs), k in passes of
 * ATTN__MV_PASS, lane sums reduced (attn__vhsum) and merged into C once. */
static void attn__mv_t(size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                       attn_dtype bt, const void *b, size_t ldb, float beta, float *c,
                       size_t ldc)
{
    attn__v acc[ATTN__MM_SKINNY * 4];
    float t[ATTN__MM_SKINNY * ATTN__NR];
    /* the next rows of B requested (rows j + 4 on), up to the end of row n - 1 */
    const void *end = (const unsigned char *)attn__dt_at(bt, b, (n - 1) * ldb) +
                      attn_dtype_bytes(bt, k);
    size_t j, i, p, q, R;
    memset(t, 0, sizeof t); /* lanes the merge loads but never stores */
    for (j = 0; j < n; j += 4) {
        const size_t jn = attn__min(4, n - j);
        const void *brow[4]; /* rows past n repeat the last one; never stored */
        attn__pfs pf;
        for (q = 0; q < 4; q++) brow[q] = attn__dt_at(bt, b, (j + (q < jn ? q : jn - 1)) * ldb);
        if (m == 1 && k <= ATTN__MV1_K) { /* one stream: no requests */
            for (q = 0; q < jn; q++) t[q] = attn__mv_t1(bt, k, a, brow[q]);
            attn__mm_merge(c + j, ldc, t, m, jn, alpha, beta, 1);
            continue;
        }
        pf = attn__pfs_make(j + 4 < n ? attn__dt_at(bt, b, (j + 4) * ldb) : end, end);
        for (q = 0; q < m * 4; q++) acc[q] = attn__vzero();
        for (p = 0; p < k; p += ATTN__MV_PASS)
            for (i = 0; i < m; i += R) {
                R = attn__mv_group(m - i);
                attn__mv_trows(bt, R, p, attn__min(k, p + ATTN__MV_PASS), a + i * lda, lda,
                               brow, i ? NULL : &pf, acc + i * 4);
            }
        for (i = 0; i < m; i++)
            for (q = 0; q < 4; q++) t[i * ATTN__NR + q] = attn__vhsum(acc[i * 4 + q]);
        attn__mm_merge(c + j, ldc, t, m, jn, alpha, beta, 1);
    }
}

/* The packed A and B areas of a workspace for this product, in floats. Monotone in m, n and
 * k (a chunk is attn__mm_kc(k) <= min(k, KC) deep, and min(k, KC) is what is counted), and
 * bounded by the sizes for m >= MC, n >= NC, k >= KC: attn_matmul_workspace_max(). */
static void attn__mm_ws_floats(size_t m, size_t n, size_t k, size_t *fa, size_t *fb)
{
    const size_t kc = attn__min(k, ATTN__MM_KC);
    const size_t np = attn__round_up(attn__min(n, ATTN__MM_WHOLE_B), ATTN__NR);
    /* + slack for whole-vector stores, rounded so that B starts on a cache line too */
    *fa = attn__round_up(attn__round_up(attn__min(m, ATTN__MM_MC), ATTN__MR) * kc + ATTN__VW,
                         ATTN__ALIGN / sizeof(float));
    *fb = attn__round_up(attn__min(n, ATTN__MM_NC), ATTN__NR) * kc;
    /* room for all of op(B) when small (ATTN__MM_WHOLE_B); np * k saturates there */
    if (*fb < ATTN__MM_WHOLE_B)
        *fb = k > ATTN__MM_WHOLE_B / np ? ATTN__MM_WHOLE_B : attn__min(ATTN__MM_WHOLE_B, np * k);
}

/* Whether all of op(B) (n x k, NR-column slivers) fits the whole-panel area. */
static int attn__mm_whole_b(size_t n, size_t k)
{
    const size_t np = attn__round_up(attn__min(n, ATTN__MM_WHOLE_B), ATTN__NR);
    return n <= ATTN__MM_WHOLE_B && k <= ATTN__MM_WHOLE_B / np;
}

ATTN_API size_t attn_matmul_workspace_size(attn_trans ta, attn_trans tb, size_t m, size_t n,
                                           size_t k)
{
    size_t fa, fb;
    (void)ta; (void)tb;
    if (m == 0 || n == 0 || k == 0) return 0;
    attn__mm_ws_floats(m, n, k, &fa, &fb);
    return (fa + fb) * sizeof(float) + ATTN__ALIGN;
}

static float *attn__align(void *p)
{
    uintptr_t u = (uintptr_t)p;
    return (float *)(void *)((u + ATTN__ALIGN - 1) & ~(uintptr_t)(ATTN__ALIGN - 1));
}

/* A block-type B (n x k): stored as op(B) = B^T, k and ldb whole blocks */
static attn_status attn__mm_block_check(attn_dtype bt, attn_trans tb, size_t k, size_t ldb)
{
    if (bt != ATTN_Q8_0 && bt != ATTN_Q4_0) return ATTN_OK;
    if (tb != ATTN_TRANS) return ATTN_ERR_ARG; /* blocks run along k */
    if (k % ATTN__QK) return ATTN_ERR_SIZE;
    return k && ldb % ATTN__QK ? ATTN_ERR_LD : ATTN_OK;
}

/* attn_matmul and attn_matmul_typed: B stored as bt (attn_dtype; checked by the caller) */
static attn_status attn__matmul(attn_trans ta, attn_trans tb, size_t m, size_t n, size_t k,
                                float alpha, const float *a, size_t lda, attn_dtype bt,
                                const void *b, size_t ldb, float beta, float *c, size_t ldc,
                                void *workspace, size_t workspace_size)
{
    attn_status st;
    size_t i, j, need, kcb, fa, fb, jc, pc, ic, ir, jr;
    float *pa, *pb;
    int packa, pfc, far;
    size_t ab, bb, cb;
    if ((ta != ATTN_NO_TRANS && ta != ATTN_TRANS) || (tb != ATTN_NO_TRANS && tb != ATTN_TRANS))
        return ATTN_ERR_ARG;
    if ((st = attn__mm_block_check(bt, tb, k, ldb)) != ATTN_OK) return st;
    if (m == 0 || n == 0) return ATTN_OK; /* an empty C: nothing read or written */
    if (!c || (k && (!a || !b))) return ATTN_ERR_NULL;
    if (k > 0) {
        if ((st = ta ? attn__check_mat(k, m, lda) : attn__check_mat(m, k, lda)) != ATTN_OK)
            return st;
        if ((st = tb ? attn__check_mat(n, k, ldb) : attn__check_mat(k, n, ldb)) != ATTN_OK)
            return st;
    }
    if ((st = attn__check_mat(m, n, ldc)) != ATTN_OK) return st;
    /* C may not overlap A, B or the workspace, nor the workspace A or B */
    ab = k ? (ta ? attn__mat_bytes(k, m, lda) : attn__mat_bytes(m, k, lda)) : 0;
    bb = k ? (tb ? attn__mat_bytes(n, k, ldb) : attn__mat_bytes(k, n, ldb)) : 0;
    if (bt != ATTN_F32) bb = attn_dtype_bytes(bt, bb / sizeof(float)); /* the stored bytes */
    cb = attn__mat_bytes(m, n, ldc);
    need = workspace ? attn_matmul_workspace_size(ta, tb, m, n, k) : 0;
    if (attn__bytes_overlap(c, cb, a, ab) || attn__bytes_overlap(c, cb, b, bb) ||
        attn__bytes_overlap(workspace, need, a, ab) ||
        attn__bytes_overlap(workspace, need, b, bb) || attn__bytes_overlap(workspace, need, c, cb))
        return ATTN_ERR_ALIAS;
    /* A matrix of one stored row accepts any leading dimension; it never addresses a second
     * row, so it becomes the row length: no pointer (e.g. a microkernel's step past its
     * last row) is ever formed that far out. The arithmetic does not depend on it. */
    if (m == 1) ldc = n;
    if (ta ? k == 1 : m == 1) lda = ta ? m : k;
    if (tb ? n == 1 : k == 1) ldb = tb ? k : n;
    need = attn_matmul_workspace_size(ta, tb, m, n, k);
    if (workspace && workspace_size < need) return ATTN_ERR_WORKSPACE;
    if (k == 0) {
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return ATTN_OK;
    }
    if (m <= ATTN__MM_SKINNY) { /* decode: B read once */
        if (!tb) { /* the chains of a panel in the workspace, if there is one */
            attn__mm_ws_floats(m, n, k, &fa, &fb);
            attn__mv_nn(ta, m, n, k, alpha, a, lda, bt, b, ldb, beta, c, ldc,
                        workspace ? attn__align(workspace) : NULL, fa + fb);
            return ATTN_OK;
        }
        if (bt == ATTN_F32) {
            attn__mv_tx(ta, m, n, k, alpha, a, lda, (const float *)b, ldb, beta, c, ldc);
            return ATTN_OK;
        }
        if (!ta) {
            attn__mv_t(m, n, k, alpha, a, lda, bt, b, ldb, beta, c, ldc);
            return ATTN_OK;
        }
    }
    if (!workspace) {
        attn__mm_nopack(ta, tb, m, n, k, alpha, a, lda, bt, b, ldb, beta, c, ldc);
        return ATTN_OK;
    }
    kcb = attn__mm_kct(bt, k);
    attn__mm_ws_floats(m, n, k, &fa, &fb);
    pa = attn__align(workspace);
    pb = pa + fa;
    packa = ta || n > ATTN__MM_DIRECT_N;
    pfc = m * ldc > ATTN__MM_FAR;
    far = ta && ab / sizeof(float) > ATTN__MM_FAR; /* A^T, for attn__mm_ahead */
    if (!packa && attn__mm_whole_b(n, k)) {
        /* all of op(B) packed at once: each A sliver then streams through all of k */
        const size_t np = attn__round_up(n, ATTN__NR);
        for (pc = 0; pc < k; pc += kcb)
            attn__mm_pack_b(tb, bt, b, ldb, pc, attn__min(kcb, k - pc), 0, n, pb + pc * np);
        attn__mm_direct_a(m, n, 0, k, kcb, a, lda, pb, np, pa, c, ldc, alpha, beta, 0, pfc);
        return ATTN_OK;
    }
    for (jc = 0; jc < n; jc += ATTN__MM_NC) {
        const size_t nc = attn__min(ATTN__MM_NC, n - jc);
        for (pc = 0; pc < k; pc += kcb) {
            const size_t kc = attn__min(kcb, k - pc);
            const int mode = pc == 0 ? 1 : 2;
            attn__mm_pack_b(tb, bt, b, ldb, pc, kc, jc, nc, pb);
            if (packa) {
                for (ic = 0; ic < m; ic += ATTN__MM_MC) {
                    const size_t mc = attn__min(ATTN__MM_MC, m - ic);
                    /* A^T far out of cache: the next block (rows i1.., depth p1..) requested
                     * while this one's tiles run, so its packing reads from cache (a narrow
                     * n leaves too few tiles to hide that wait) */
                    size_t i1 = ic + ATTN__MM_MC, p1 = pc;
                    attn__mm_ahead ah;
                    if (i1 >= m) i1 = 0, p1 += kcb;
                    attn__mm_pack_a(ta, a, lda, m, ic, mc, pc, kc, pa);
                    attn__mm_ahead_init(&ah, far && p1 < k ? a + p1 * lda + i1 : a, lda,
                                        far && p1 < k ? attn__min(kcb, k - p1) : 0,
                                        attn__min(ATTN__MM_MC, m - i1),
                                        (mc + ATTN__MR - 1) / ATTN__MR *
                                            ((nc + ATTN__NR - 1) / ATTN__NR));
                    for (jr = 0; jr < nc; jr += ATTN__NR)
                        for (ir = 0; ir < mc; ir += ATTN__MR) {
                            attn__mm_ahead_step(&ah);
                            attn__mm_tile(attn__min(ATTN__MR, mc - ir),
                                          attn__min(ATTN__NR, nc - jr), kc, pa + ir * kc, 1,
                                          ATTN__MR, pb + jr * kc, ATTN__NR,
                                          c + (ic + ir) * ldc + jc + jr, ldc, alpha, beta, mode,
                                          pfc);
                        }
                }
            } else {
                attn__mm_direct_a(m, nc, pc, pc + kc, kcb, a, lda, pb, 0, pa, c + jc, ldc, alpha,
                                  beta, m * lda > ATTN__MM_FAR, pfc);
            }
        }
    }
    return ATTN_OK;
}

ATTN_API attn_status attn_matmul(attn_trans ta, attn_trans tb, size_t m, size_t n, size_t k,
                                 float alpha, const float *a, size_t lda, const float *b,
                                 size_t ldb, float beta, float *c, size_t ldc, void *workspace,
                                 size_t workspace_size)
{
    return attn__matmul(ta, tb, m, n, k, alpha, a, lda, ATTN_F32, b, ldb, beta, c, ldc,
                        workspace, workspace_size);
}

ATTN_API attn_status attn_matmul_typed(attn_trans ta, attn_trans tb, size_t m, size_t n,
                                       size_t k, float alpha, const float *a, size_t lda,
                                       attn_dtype b_type, const void *b, size_t ldb, float beta,
                                       float *c, size_t ldc, void *workspace,
                                       size_t workspace_size)
{
    if (!attn_dtype_block(b_type)) return ATTN_ERR_ARG;
    return attn__matmul(ta, tb, m, n, k, alpha, a, lda, b_type, b, ldb, beta, c, ldc, workspace,
                        workspace_size);
}

/* ---- int8 products: attn_matmul_int8 ------------------------------------------------ */
/* A is quantized into the workspace, each row as blocks of 36 bytes: the scale d as a float
 * (the binary16 value attn_convert stores), then 32 int8 (attn_convert's q8_0 rule, so
 * never -128). B (n x k, q8_0 or q4_0) is repacked a chunk of columns at a time (by the
 * ISA's attn__vi_t8), in groups of ATTN__VW columns; a group's block of 32 values of k is
 * ATTN__QD_GB bytes:
 *   8 steps of ATTN__VW x 4 int8 (lane l: column l's 4 values of the step; q4_0 less 8),
 *   ATTN__VW floats (each column's d), ATTN__VW int32 (the sum of each column's values),
 * so that one attn__vi_dot4 takes 4 values of k for ATTN__VW columns. Columns past n are
 * zeros. */
#define ATTN__QD_AB (4 + ATTN__QK)
#define ATTN__QD_GB (40 * ATTN__VW)

static void attn__qd_pack(attn_dtype bt, const unsigned char *b, size_t rb, size_t n,
                          size_t j0, size_t kb, unsigned char *dst)
{
    const size_t bs = attn__dt_block_bytes(bt), w = j0 < n ? attn__min(ATTN__VW, n - j0) : 0;
    unsigned char pad[ATTN__VW * (2 + ATTN__QK)]; /* a short group's blocks, zeros after */
    size_t blk, l;
    memset(pad, 0, sizeof pad);
    for (l = 0; l < ATTN__VW && bt == ATTN_Q4_0; l++) memset(pad + l * bs + 2, 0x88, bs - 2);
    for (blk = 0; blk < kb; blk++, dst += ATTN__QD_GB) {
        const unsigned char *c0 = b + j0 * rb + blk * bs;
        size_t r = rb;
        uint16_t h[ATTN__VW];
        int32_t sum[ATTN__VW];
        if (w < ATTN__VW) {
            for (l = 0; l < w; l++) memcpy(pad + l * bs, c0 + l * rb, bs);
            c0 = pad;
            r = bs;
        }
        attn__vi_t8(bt == ATTN_Q4_0, c0, r, dst, sum, h);
        attn__vstore((float *)(void *)(dst + 32 * ATTN__VW), attn__vload_f16(h));
        memcpy(dst + 36 * ATTN__VW, sum, sizeof sum);
    }
}

/* attn__q_block's q8_0 rule on 32 floats of A, into a block of the layout above (the scale
 * as the float its binary16 holds); 0 if the block does not quantize (attn__q_block_ok) */
static int attn__qd_quant(const float *x, unsigned char *o)
{
    attn__v mx = attn__vzero(), nf = attn__vzero();
    float d, id, dq;
    uint16_t h;
    size_t j;
    for (j = 0; j < ATTN__QK; j += ATTN__VW) { /* max |x|; NaN in nf if any x is not finite */
        const attn__v x1 = attn__vload(x + j);
        mx = attn__vmax(mx, attn__vmax(x1, attn__vsub(attn__vzero(), x1)));
        nf = attn__vadd(nf, attn__vmul(x1, attn__vzero()));
    }
    if (attn__vhsum(nf) != 0.0f) return 0;
    d = attn__vhmax(mx) / 127.0f;
    h = attn__f32_to_f16(d);
    if ((h & 0x7C00u) == 0x7C00u) return 0;
    id = d != 0.0f ? 1.0f / d : 0.0f;
    if (!(id <= FLT_MAX)) id = 0.0f;
    dq = attn__f16_to_f32(h);
    memcpy(o, &dq, 4);
    for (j = 0; j < ATTN__QK; j += ATTN__VW) { /* x id rounded half away from zero, exactly */
        const attn__v one = attn__vset1(1.0f), big = attn__vset1(8388608.0f);
        const attn__v v = attn__vmax(attn__vmin(attn__vmul(attn__vload(x + j), attn__vset1(id)),
                                                attn__vset1(127.0f)),
                                     attn__vset1(-127.0f));
        const attn__v av = attn__vfabs(v);
        attn__v fl = attn__vsub(attn__vadd(av, big), big); /* nearest, ties even (av < 2^23) */
        fl = attn__vselect(attn__vlt(attn__vsub(av, fl), attn__vset1(0.5f)), fl, /* up a tie */
                           attn__vadd(fl, one));
        attn__vstore_i8((int8_t *)(void *)(o + 4 + j),
                        attn__vselect(attn__vlt(v, attn__vzero()), attn__vsub(attn__vzero(), fl),
                                      fl));
    }
    return 1;
}

/* NAME(R, kb, a, ra, g0, g1, out): R <= ATTN__QD_MR rows of quantized A (ra bytes apart)
 * times two column groups g0, g1 over kb blocks, each block's integer dot products exact,
 * then scaled by the two d and added into out[2 i + v]; over the integer primitives VI
 * (VI_zero, VI_dot4, VI_tof), in functions marked ATTR. Defined once per set. */
#define ATTN__QD_ROWS(NAME, ATTR, VI)                                                       \
    static ATTR ATTN__FORCE_INLINE void NAME##_body(                                        \
        size_t R, size_t kb, const unsigned char *a, size_t ra, const unsigned char *g0,    \
        const unsigned char *g1, attn__v *out)                                              \
    {                                                                                       \
        attn__v f[2 * ATTN__QD_MR];                                                         \
        size_t i, blk, st;                                                                  \
        ATTN__UNROLL                                                                        \
        for (i = 0; i < 2 * R; i++) f[i] = attn__vzero();                                   \
        for (blk = 0; blk < kb;                                                             \
             blk++, a += ATTN__QD_AB, g0 += ATTN__QD_GB, g1 += ATTN__QD_GB) {               \
            VI s[2 * ATTN__QD_MR];                                                          \
            const int32_t *s0 = (const int32_t *)(const void *)(g0 + 36 * ATTN__VW);        \
            const int32_t *s1 = (const int32_t *)(const void *)(g1 + 36 * ATTN__VW);        \
            attn__v d0, d1;                                                                 \
            ATTN__UNROLL                                                                    \
            for (i = 0; i < 2 * R; i++) s[i] = VI##_zero();                                 \
            for (st = 0; st < 8; st++) {                                                    \
                const int8_t *b0 = (const int8_t *)g0 + st * 4 * ATTN__VW;                  \
                const int8_t *b1 = (const int8_t *)g1 + st * 4 * ATTN__VW;                  \
                ATTN__UNROLL                                                                \
                for (i = 0; i < R; i++) {                                                   \
                    uint32_t a4;                                                            \
                    memcpy(&a4, a + i * ra + 4 + 4 * st, 4);                                \
                    s[2 * i] = VI##_dot4(s[2 * i], a4, b0);                                 \
                    s[2 * i + 1] = VI##_dot4(s[2 * i + 1], a4, b1);                         \
                }                                                                           \
            }                                                                               \
            d0 = attn__vload((const float *)(const void *)(g0 + 32 * ATTN__VW));            \
            d1 = attn__vload((const float *)(const void *)(g1 + 32 * ATTN__VW));            \
            ATTN__UNROLL                                                                    \
            for (i = 0; i < R; i++) {                                                       \
                float da;                                                                   \
                attn__v dv;                                                                 \
                memcpy(&da, a + i * ra, 4);                                                 \
                dv = attn__vset1(da);                                                       \
                f[2 * i] = attn__vfma(VI##_tof(s[2 * i], s0), attn__vmul(d0, dv), f[2 * i]);  \
                f[2 * i + 1] =                                                              \
                    attn__vfma(VI##_tof(s[2 * i + 1], s1), attn__vmul(d1, dv), f[2 * i + 1]); \
            }                                                                               \
        }                                                                                   \
        ATTN__UNROLL                                                                        \
        for (i = 0; i < 2 * R; i++) out[i] = f[i];                                          \
    }                                                                                       \
    static ATTR ATTN__NOINLINE void NAME(size_t R, size_t kb, const unsigned char *a,       \
                                         size_t ra, const unsigned char *g0,                \
                                         const unsigned char *g1, attn__v *out)             \
    {                                                                                       \
        size_t r;                                                                           \
        ATTN__UNROLL                                                                        \
        for (r = ATTN__QD_MR; r >= 1; r--)                                                  \
            if (R == r) NAME##_body(r, kb, a, ra, g0, g1, out);                             \
    }
ATTN__QD_ROWS(attn__qd_rows, , attn__vi)
#ifdef ATTN__HAVE_VI_RT
ATTN__QD_ROWS(attn__qd_rows_rt, ATTN__VI_RT_ATTR, attn__vi_rt)
#endif
#undef ATTN__QD_ROWS

#ifdef ATTN__HAVE_QK8
/* Quads (simd/qk_4xq8_*.h): the rows path's queries on a q8_0 K cache, and (AVX512-VNNI:
 * ATTN__HAVE_QK8_ROWS) decode's few rows of A in attn_matmul_int8, B read where it lies:
 * attn__qd_rows's bits without packing B. */
#define ATTN__QD_NQ(kb) (((kb) + 3) / 4 * 4)

/* Row u of a quad of nq blocks from the nb blocks of 32 floats at x (attn__qd_quant's
 * rule); 0 at the first block that does not quantize */
static int attn__qk8_quad_row(const float *x, size_t nb, unsigned char *quad, size_t nq,
                              size_t u)
{
    unsigned char *qd = quad + 4 * nq * ATTN__QK;
    size_t b, t;
    for (b = 0; b < nb; b++) {
        unsigned char blk[ATTN__QD_AB];
        const size_t lane = 4 * (b % 4) + u, at = b / 4 * 128;
        int32_t sum = 0;
        if (!attn__qd_quant(x + b * ATTN__QK, blk)) return 0;
        for (t = 0; t < ATTN__QK; t++) sum += (int8_t)blk[4 + t];
        memcpy(quad + (u * nq + b) * ATTN__QK, blk + 4, ATTN__QK);
        memcpy(qd + at + 4 * lane, blk, 4);
        sum *= 128;
        memcpy(qd + at + 64 + 4 * lane, &sum, 4);
    }
    return 1;
}
#endif

#ifdef ATTN__HAVE_QK8_ROWS
/* The ISA file's attn__qk8_rows_body for q8_0 or q4_0 (q4) B and 1 or 4 (R) rows */
static ATTN__QK8_ATTR void attn__qk8_rows(int q4, size_t R, const unsigned char *b, size_t rb,
                                          size_t nc, size_t nb, const unsigned char *quad,
                                          size_t nq, float *out, size_t ldo, size_t npf)
{
    if (q4 && R == 1) attn__qk8_rows_body(1, 1, b, rb, nc, nb, quad, nq, out, ldo, npf);
    else if (q4) attn__qk8_rows_body(1, 4, b, rb, nc, nb, quad, nq, out, ldo, npf);
    else if (R == 1) attn__qk8_rows_body(0, 1, b, rb, nc, nb, quad, nq, out, ldo, npf);
    else attn__qk8_rows_body(0, 4, b, rb, nc, nb, quad, nq, out, ldo, npf);
}
#endif

/* C's ATTN__VW (wv <= VW) columns at cv = alpha acc (+ beta C) */
static void attn__qd_store(float *cv, attn__v acc, size_t wv, float alpha, float beta)
{
    attn__v y = attn__vmul(attn__vset1(alpha), acc);
    if (beta != 0.0f)
        y = attn__vfma(attn__vset1(beta),
                       wv == ATTN__VW ? attn__vload(cv) : attn__vload_part(cv, wv, 0.0f), y);
    if (wv == ATTN__VW) attn__vstore(cv, y);
    else attn__vstore_part(cv, y, wv);
}

/* Columns of B per packed chunk: about ATTN__QD_PANEL bytes, whole pairs of groups */
static size_t attn__qd_nc(size_t n, size_t kb)
{
    const size_t pair = 2 * ATTN__VW, per = kb * 40;
    size_t nc = ATTN__QD_PANEL / per / pair * pair;
    if (nc < pair) nc = pair;
    return attn__min(nc, attn__round_up(n, pair));
}

ATTN_API size_t attn_matmul_int8_workspace_size(size_t m, size_t n, size_t k)
{
    const size_t kb = k / ATTN__QK;
    size_t ab, cap;
    if (m == 0 || n == 0 || kb == 0) return 0;
    if (kb > SIZE_MAX / 64 / ATTN__QD_AB / (m > 1 ? m : 1)) return SIZE_MAX;
    /* A's blocks, then B's chunk (attn__qd_nc columns of kb blocks, 40 bytes per column and
     * block): counted as at most ATTN__QD_PANEL bytes, or one pair of groups where that is
     * more, so that the size never falls as m, n or k grow */
    cap = 2 * ATTN__VW * kb * 40 > ATTN__QD_PANEL ? 2 * ATTN__VW * kb * 40 : ATTN__QD_PANEL;
    ab = attn__round_up(m * kb * ATTN__QD_AB, ATTN__ALIGN) + ATTN__ALIGN;
    ab += n > cap / (kb * 40) ? cap : attn__min(attn__round_up(n, 2 * ATTN__VW) * kb * 40, cap);
#ifdef ATTN__HAVE_QK8_ROWS
    { /* the quads of up to ATTN__QK8_MR rows (the CPU decides at the call), counted for more
       * rows too: the size never falls as m grows */
        const size_t mq = attn__min(m, ATTN__QK8_MR);
        const size_t qb = (mq + 3) / 4 * ATTN__QK8_QUAD_BYTES(ATTN__QD_NQ(kb)) + ATTN__ALIGN;
        if (qb > ab) ab = qb;
    }
#endif
    return ab;
}

/* attn_matmul_int8; rt = 0 keeps the primitives the compiler targets (for tests), 1 takes
 * the ISA file's run-time ones where the CPU has them */
static attn_status attn__matmul_int8_path(size_t m, size_t n, size_t k, float alpha,
                                          const float *a, size_t lda, attn_dtype b_type,
                                          const void *b, size_t ldb, float beta, float *c,
                                          size_t ldc, void *workspace, size_t workspace_size,
                                          int rt)
{
    const size_t kb = k / ATTN__QK;
    size_t need, ab, bb, cb, i, j, jc, blk, rb, ra, nc;
    unsigned char *qa, *pb;
    attn_status st;
    void (*rows)(size_t, size_t, const unsigned char *, size_t, const unsigned char *,
                 const unsigned char *, attn__v *) = attn__qd_rows;
    if (b_type != ATTN_Q8_0 && b_type != ATTN_Q4_0) return ATTN_ERR_ARG;
    if (k % ATTN__QK) return ATTN_ERR_SIZE;
    if (k && ldb % ATTN__QK) return ATTN_ERR_LD;
    if (m == 0 || n == 0) return ATTN_OK;
    if (!c || (k && (!a || !b))) return ATTN_ERR_NULL;
    if (k > 0) {
        if ((st = attn__check_mat(m, k, lda)) != ATTN_OK) return st;
        if ((st = attn__check_mat(n, k, ldb)) != ATTN_OK) return st;
    }
    if ((st = attn__check_mat(m, n, ldc)) != ATTN_OK) return st;
    need = attn_matmul_int8_workspace_size(m, n, k);
    if (need && !workspace) return ATTN_ERR_NULL;
    if (need && workspace_size < need) return ATTN_ERR_WORKSPACE;
    ab = k ? attn__mat_bytes(m, k, lda) : 0;
    bb = k ? attn_dtype_bytes(b_type, attn__mat_bytes(n, k, ldb) / sizeof(float)) : 0;
    cb = attn__mat_bytes(m, n, ldc);
    if (attn__bytes_overlap(c, cb, a, ab) || attn__bytes_overlap(c, cb, b, bb) ||
        attn__bytes_overlap(workspace, need, a, ab) ||
        attn__bytes_overlap(workspace, need, b, bb) || attn__bytes_overlap(workspace, need, c, cb))
        return ATTN_ERR_ALIAS;
    if (m == 1) ldc = n;
    if (k == 0) {
        for (i = 0; i < m; i++)
            for (j = 0; j < n; j++) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return ATTN_OK;
    }
    qa = (unsigned char *)attn__align(workspace);
#ifdef ATTN__HAVE_QK8_ROWS
    if (rt && m <= ATTN__QK8_MR && attn__qk8_cpu()) {
        const size_t nq = ATTN__QD_NQ(kb), qb = ATTN__QK8_QUAD_BYTES(nq), nquad = (m + 3) / 4;
        const size_t rbq = ldb / ATTN__QK * attn__dt_block_bytes(b_type);
        const int q4 = b_type == ATTN_Q4_0;
        memset(qa, 0, nquad * qb);
        for (i = 0; i < m; i++) /* before C is touched; a quad's missing rows zero */
            if (!attn__qk8_quad_row(a + i * lda, kb, qa + i / 4 * qb, nq, i % 4))
                return ATTN_ERR_ARG;
        for (j = 0; j < n; j += ATTN__QK8_NC) {
            const size_t w = attn__min(ATTN__QK8_NC, n - j);
            float o[4 * ATTN__QK8_NC];
            size_t q, r, v;
            for (q = 0; q < nquad; q++) {
                attn__qk8_rows(q4, m == 1 ? 1 : 4, (const unsigned char *)b + j * rbq, rbq, w,
                               kb, qa + q * qb, nq, o, ATTN__QK8_NC, n - j);
                for (r = 0; r < 4 && 4 * q + r < m; r++)
                    for (v = 0; v < w; v += ATTN__VW) {
                        const size_t wv = attn__min(ATTN__VW, w - v);
                        const float *ov = o + r * ATTN__QK8_NC + v;
                        attn__qd_store(c + (4 * q + r) * ldc + j + v,
                                       wv == ATTN__VW ? attn__vload(ov)
                                                      : attn__vload_part(ov, wv, 0.0f),
                                       wv, alpha, beta);
                    }
            }
        }
        return ATTN_OK;
    }
#endif
    /* A quantized into the workspace; every block must quantize before C is touched */
    ra = kb * ATTN__QD_AB;
    pb = qa + attn__round_up(m * ra, ATTN__ALIGN);
    for (i = 0; i < m; i++)
        for (blk = 0; blk < kb; blk++)
            if (!attn__qd_quant(a + i * lda + blk * ATTN__QK, qa + i * ra + blk * ATTN__QD_AB))
                return ATTN_ERR_ARG;
#ifdef ATTN__HAVE_VI_RT
    if (rt && attn__vi_rt_cpu()) rows = attn__qd_rows_rt;
#else
    (void)rt;
#endif
    rb = ldb / ATTN__QK * attn__dt_block_bytes(b_type);
    nc = attn__qd_nc(n, kb);
    for (jc = 0; jc < n; jc += nc) {
        const size_t w = attn__min(nc, n - jc), groups = (w + ATTN__VW - 1) / ATTN__VW;
        size_t g, R;
        for (g = 0; g < attn__round_up(groups, 2); g++)
            attn__qd_pack(b_type, (const unsigned char *)b, rb, n, jc + g * ATTN__VW, kb,
                          pb + g * kb * ATTN__QD_GB);
        for (i = 0; i < m; i += R) {
            R = attn__min(ATTN__QD_MR, m - i);
            for (g = 0; g < groups; g += 2) {
                attn__v acc[2 * ATTN__QD_MR];
                size_t r, v;
                const size_t j0 = jc + g * ATTN__VW, cols = attn__min(2 * ATTN__VW, n - j0);
                rows(R, kb, qa + i * ra, ra, pb + g * kb * ATTN__QD_GB,
                     pb + (g + 1) * kb * ATTN__QD_GB, acc);
                for (r = 0; r < R; r++)
                    for (v = 0; v * ATTN__VW < cols; v++)
                        attn__qd_store(c + (i + r) * ldc + j0 + v * ATTN__VW, acc[2 * r + v],
                                       attn__min(ATTN__VW, cols - v * ATTN__VW), alpha, beta);
            }
        }
    }
    return ATTN_OK;
}

ATTN_API attn_status attn_matmul_int8(size_t m, size_t n, size_t k, float alpha, const float *a,
                                      size_t lda, attn_dtype b_type, const void *b, size_t ldb,
                                      float beta, float *c, size_t ldc, void *workspace,
                                      size_t workspace_size)
{
    return attn__matmul_int8_path(m, n, k, alpha, a, lda, b_type, b, ldb, beta, c, ldc,
                                  workspace, workspace_size, 1);
}
