/* src/matmul.h - attn_matmul, the packed sgemm.
 *
 * BLIS's structure: loops jc (NC columns of C) / pc (KC-deep slices of k) / ic (MC rows)
 * around a register-blocked microkernel attn__mm_ukr_body (MR x NR, simd/mm_*.h, named by
 * shape; the generic one over the vector layer serves the scalar path). op(B)'s KC x NC panel is packed into NR-column
 * slivers and op(A)'s MC x KC block into MR-row slivers, zero padded, so the microkernel
 * streams contiguous memory whatever the transposes; edge tiles are computed whole into a
 * register-sized buffer and only their valid part is merged into C.
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

/* Merges the mr x nr corner of a raw accumulator tile t (row length ATTN__NR) into C by the
 * microkernel's rule for mode 1 or 2: the same operations, lane for lane. */
static void attn__mm_merge(float *c, size_t ldc, const float *t, size_t mr, size_t nr,
                           float alpha, float beta, int mode)
{
    const attn__v va = attn__vset1(alpha), vb = attn__vset1(beta);
    size_t i, j;
    for (i = 0; i < mr; i++) { /* row i at c + i * ldc: never a pointer past the last row */
        float *cr = c + i * ldc;
        const float *tr = t + i * ATTN__NR;
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

/* The general tile (no workspace: B^T, and edge tiles, read in place): raw accumulators of
 * an mr x nr tile into t (ATTN__MR x ATTN__NR, row length ATTN__NR), in the microkernel's
 * order. A(i, p) = a[i * ars + p * acs]; B(p, j) = b[p * ldb + j], or b[j * ldb + p] when
 * tb (transposed ATTN__VW steps at a time through a small buffer). Never reads outside the
 * mr x kc and kc x nr operands (rows past mr repeat the last one and are never stored). */
static void attn__mm_tile_any(size_t mr, size_t nr, size_t kc, const float *a, size_t ars,
                              size_t acs, const float *b, size_t ldb, int tb, float *t)
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
                for (v = 0; v < ATTN__NR; v += ATTN__VW)
                    attn__vtranspose_copy(b + (nr > v ? v : 0) * ldb + p, ldb, nr > v ? nr - v : 0,
                                          blk + v, ATTN__NR); /* no pointer past the last row */
            } else {
                for (q = 0; q < steps; q++)
                    for (j = 0; j < ATTN__NR; j++) blk[q * ATTN__NR + j] = j < nr ? b[j * ldb + p + q] : 0.0f;
            }
        } else if (nr == ATTN__NR) {
            bp = b + p * ldb;
            bs = ldb;
            steps = kc - p;
        } else {
            for (j = 0; j < ATTN__NR; j++) blk[j] = j < nr ? b[p * ldb + j] : 0.0f;
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
        for (v = 0; v < ATTN__NR / ATTN__VW; v++) attn__vstore(t + i * ATTN__NR + v * ATTN__VW, acc[i][v]);
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
static void attn__mm_pack_t(const float *src, size_t ld, size_t rows, size_t kc, size_t w,
                            int far, float *dst)
{
    size_t s, g, p, i;
    for (s = 0; s < rows; s += w, dst += w * kc) {
        const size_t r = attn__min(w, rows - s);
        const float *sp = src + s * ld;
        if (far && s + w < rows) attn__mm_prefetch_rows(sp + w * ld, ld, attn__min(w, rows - s - w), kc);
        for (g = 0; g < w; g += ATTN__VW) {
            const float *sg = r > g ? sp + g * ld : sp; /* no rows left: zeros, nothing read */
            for (p = 0; p + ATTN__VW <= kc; p += ATTN__VW)
                attn__vtranspose_copy(sg + p, ld, r > g ? r - g : 0, dst + p * w + g, w);
            for (; p < kc; p++)
                for (i = 0; i < ATTN__VW && g + i < w; i++)
                    dst[p * w + g + i] = g + i < r ? sg[i * ld + p] : 0.0f;
        }
    }
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
    size_t s, p, g;
    if (ta) { /* A stored k x m: row p of the storage holds op(A)'s column p */
        for (p = 0; p < kc; p++) {
            const float *src = a + (p0 + p) * lda + i0;
            float *dst = pa + p * ATTN__MR;
            for (s = 0; s < mc; s += ATTN__MR, dst += ATTN__MR * kc) {
                const size_t mr = attn__min(ATTN__MR, mc - s);
                for (g = 0; g < ATTN__MR; g += ATTN__VW) {
                    attn__v x = attn__vzero();
                    if (i0 + s + g + ATTN__VW <= m) x = attn__vload(src + s + g); /* lanes past mr: unused rows */
                    else if (g < mr) x = attn__vload_part(src + s + g, mr - g, 0.0f);
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

/* Packs op(B)[p0 .. p0+kc, j0 .. j0+nc) into NR-column slivers: sliver s holds element
 * (p, s*NR + j) at pb[s * NR * kc + p * NR + j]; columns past nc are zero. B is read row
 * after row of its storage (in order for B; for B^T, sliver after sliver). */
static void attn__mm_pack_b(int tb, const float *b, size_t ldb, size_t p0, size_t kc,
                            size_t j0, size_t nc, float *pb)
{
    size_t s, p, v;
    if (!tb) { /* B stored k x n: row p of the storage holds op(B)'s row p */
        for (p = 0; p < kc; p++) {
            const float *src = b + (p0 + p) * ldb + j0;
            float *dst = pb + p * ATTN__NR;
            for (s = 0; s + ATTN__NR <= nc; s += ATTN__NR, dst += ATTN__NR * kc)
                for (v = 0; v < ATTN__NR; v += ATTN__VW) attn__vstore(dst + v, attn__vload(src + s + v));
            if (s < nc) {
                const size_t nr = nc - s;
                for (v = 0; v < ATTN__NR; v += ATTN__VW) {
                    attn__v x = attn__vzero();
                    if (v + ATTN__VW <= nr) x = attn__vload(src + s + v);
                    else if (v < nr) x = attn__vload_part(src + s + v, nr - v, 0.0f);
                    attn__vstore(dst + v, x);
                }
            }
        }
        return;
    }
    /* B stored n x k: transposes */
    attn__mm_pack_t(b + j0 * ldb + p0, ldb, nc, kc, ATTN__NR, nc * ldb > ATTN__MM_FAR, pb);
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
                            const float *a, size_t lda, const float *b, size_t ldb, float beta,
                            float *c, size_t ldc)
{
    const size_t kcb = attn__mm_kc(k), ars = ta ? 1 : lda, acs = ta ? lda : 1;
    size_t i, j, pc;
    for (j = 0; j < n; j += ATTN__NR) {
        const size_t nr = attn__min(ATTN__NR, n - j);
        for (i = 0; i < m; i += ATTN__MR) {
            const size_t mr = attn__min(ATTN__MR, m - i);
            for (pc = 0; pc < k; pc += kcb) {
                const size_t kc = attn__min(kcb, k - pc);
                const float *ap = a + i * ars + pc * acs;
                const float *bp = tb ? b + j * ldb + pc : b + pc * ldb + j;
                float *cp = c + i * ldc + j;
                const int mode = pc == 0 ? 1 : 2;
                if (mr == ATTN__MR && nr == ATTN__NR && !tb) {
                    attn__mm_ukr_strided(kc, ap, ars, acs, bp, ldb, cp, ldc, alpha, beta, mode);
                } else {
                    float t[ATTN__MR * ATTN__NR];
                    attn__mm_tile_any(mr, nr, kc, ap, ars, acs, bp, ldb, tb, t);
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
 * sliver's lines are requested while one runs, a share before each tile (for short streams
 * of an A far out of cache; through all of k, the hardware's prefetcher does better
 * alone). pfc: see attn__mm_tile. */
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
            const size_t kc = attn__min(kcb, p1 - pc), lines = (kc + 15) / 16;
            const size_t per = (next * lines + tiles - 1) / tiles;
            const float *ap = a + ir * lda + pc, *bp = pb + (pc - p0) * np;
            const int mode = pc == 0 ? 1 : 2;
            size_t ars = lda, acs = 1, r = 0, l = 0;
#ifndef ATTN__MM_UKR_ROWS
            if (mr < ATTN__MR) { /* rows past m do not exist: pack the edge */
                attn__mm_pack_a(0, a, lda, m, ir, mr, pc, kc, pa);
                ap = pa;
                ars = 1;
                acs = ATTN__MR;
            }
#endif
            for (jr = 0; jr < nc; jr += ATTN__NR) {
                size_t q;
                for (q = 0; q < per && r < next; q++) { /* line l of row r of the next tile */
                    ATTN__PREFETCH(a + (ir + mr + r) * lda + pc + l * 16);
                    if (++l == lines) {
                        l = 0;
                        r++;
                    }
                }
                attn__mm_tile(mr, attn__min(ATTN__NR, nc - jr), kc, ap, ars, acs, bp + jr * kc,
                              ATTN__NR, c + ir * ldc + jr, ldc, alpha, beta, mode, pfc);
            }
        }
    }
    (void)pa;
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

ATTN_API attn_status attn_matmul(attn_trans ta, attn_trans tb, size_t m, size_t n, size_t k,
                                 float alpha, const float *a, size_t lda, const float *b,
                                 size_t ldb, float beta, float *c, size_t ldc, void *workspace,
                                 size_t workspace_size)
{
    attn_status st;
    size_t i, j, need, kcb, fa, fb, jc, pc, ic, ir, jr;
    float *pa, *pb;
    int packa, pfc;
    size_t ab, bb, cb;
    if ((ta != ATTN_NO_TRANS && ta != ATTN_TRANS) || (tb != ATTN_NO_TRANS && tb != ATTN_TRANS))
        return ATTN_ERR_ARG;
    if (m == 0 || n == 0) return ATTN_OK; /* an empty C: nothing read or written */
    if (!c || (k && (!a || !b))) return ATTN_ERR_NULL;
    if (k > 0) {
        if ((st = ta ? attn__check_mat(k, m, lda) : attn__check_mat(m, k, lda)) != ATTN_OK) return st;
        if ((st = tb ? attn__check_mat(n, k, ldb) : attn__check_mat(k, n, ldb)) != ATTN_OK) return st;
    }
    if ((st = attn__check_mat(m, n, ldc)) != ATTN_OK) return st;
    /* C may not overlap A, B or the workspace, nor the workspace A or B */
    ab = k ? (ta ? attn__mat_bytes(k, m, lda) : attn__mat_bytes(m, k, lda)) : 0;
    bb = k ? (tb ? attn__mat_bytes(n, k, ldb) : attn__mat_bytes(k, n, ldb)) : 0;
    cb = attn__mat_bytes(m, n, ldc);
    need = workspace ? attn_matmul_workspace_size(ta, tb, m, n, k) : 0;
    if (attn__bytes_overlap(c, cb, a, ab) || attn__bytes_overlap(c, cb, b, bb) ||
        attn__bytes_overlap(workspace, need, a, ab) || attn__bytes_overlap(workspace, need, b, bb) ||
        attn__bytes_overlap(workspace, need, c, cb))
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
    if (!workspace) {
        attn__mm_nopack(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return ATTN_OK;
    }
    kcb = attn__mm_kc(k);
    attn__mm_ws_floats(m, n, k, &fa, &fb);
    pa = attn__align(workspace);
    pb = pa + fa;
    packa = ta || n > ATTN__MM_DIRECT_N;
    pfc = m * ldc > ATTN__MM_FAR;
    if (!packa && attn__mm_whole_b(n, k)) {
        /* all of op(B) packed at once: each A sliver then streams through all of k */
        const size_t np = attn__round_up(n, ATTN__NR);
        for (pc = 0; pc < k; pc += kcb)
            attn__mm_pack_b(tb, b, ldb, pc, attn__min(kcb, k - pc), 0, n, pb + pc * np);
        attn__mm_direct_a(m, n, 0, k, kcb, a, lda, pb, np, pa, c, ldc, alpha, beta, 0, pfc);
        return ATTN_OK;
    }
    for (jc = 0; jc < n; jc += ATTN__MM_NC) {
        const size_t nc = attn__min(ATTN__MM_NC, n - jc);
        for (pc = 0; pc < k; pc += kcb) {
            const size_t kc = attn__min(kcb, k - pc);
            const int mode = pc == 0 ? 1 : 2;
            attn__mm_pack_b(tb, b, ldb, pc, kc, jc, nc, pb);
            if (packa) {
                for (ic = 0; ic < m; ic += ATTN__MM_MC) {
                    const size_t mc = attn__min(ATTN__MM_MC, m - ic);
                    attn__mm_pack_a(ta, a, lda, m, ic, mc, pc, kc, pa);
                    for (jr = 0; jr < nc; jr += ATTN__NR)
                        for (ir = 0; ir < mc; ir += ATTN__MR)
                            attn__mm_tile(attn__min(ATTN__MR, mc - ir),
                                          attn__min(ATTN__NR, nc - jr), kc, pa + ir * kc, 1,
                                          ATTN__MR, pb + jr * kc, ATTN__NR,
                                          c + (ic + ir) * ldc + jc + jr, ldc, alpha, beta, mode,
                                          pfc);
                }
            } else {
                attn__mm_direct_a(m, nc, pc, pc + kc, kcb, a, lda, pb, 0, pa, c + jc, ldc, alpha,
                                  beta, m * lda > ATTN__MM_FAR, pfc);
            }
        }
    }
    return ATTN_OK;
}
