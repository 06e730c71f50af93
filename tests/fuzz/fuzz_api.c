/* fuzz_api.c - libFuzzer target over attn.h's public API (issue 23).
 *
 * Each input is a byte stream: the first byte picks an operation, the rest decode its sizes,
 * leading dimensions and strides (mostly small, sometimes 0, just below the row, or huge:
 * SIZE_MAX, PTRDIFF_MAX, ...), flags, masks, causal modes, head layouts, cache appends,
 * workspace sizes (none, one byte short, exact, ample) and the values (moderate floats, or
 * with a flag inf / NaN / huge ones). Buffers are allocated exactly as the documented
 * contract requires (the extent of every matrix or tensor), between guard floats, so ASan
 * sees any read or write past them. Checked, for every call:
 *  - a non-OK status leaves every output byte untouched (guards and gaps included);
 *  - an OK status writes no output byte outside the elements the call owns (the gaps
 *    between strided rows, the guards);
 *  - sizes whose extent overflows the address space are never accepted;
 *  - OK on moderate finite inputs gives finite outputs where the operation promises it;
 *  - the attention's work items (attn_attention_task) give the bits of the whole call, and
 *    a KV cache holds exactly the positions appended.
 * A failed check calls abort(), which libFuzzer and the plain driver (driver.c) report.
 * Build: clang-14 -fsanitize=fuzzer,address,undefined -I. tests/fuzz/fuzz_api.c
 * (add -mavx2 -mfma for AVX2, -DATTN_NO_SIMD for the scalar path). The tests' plain driver
 * defines FUZZ_API_LINKED and links the implementation from tests/attn_impl.c instead. */
#ifndef FUZZ_API_LINKED
#define ATTN_IMPLEMENTATION
#endif
#include "attn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXEL ((size_t)PTRDIFF_MAX / sizeof(float))
#define LIMIT ((size_t)1 << 20) /* floats per buffer the fuzzer allocates at most */
#define GUARD 16                /* guard floats on each side of every buffer */

/* ---- the input reader ------------------------------------------------------------------ */

typedef struct rd {
    const uint8_t *p;
    size_t n;
} rd;

static unsigned u8(rd *r)
{
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}

/* the special sizes: edges of size_t, ptrdiff_t and the element limit */
static size_t special(unsigned b)
{
    static const size_t S[] = {0,
                               1,
                               (size_t)-1,
                               (size_t)-2,
                               (size_t)-1 - 191,
                               (size_t)-1 - 15,
                               (size_t)PTRDIFF_MAX,
                               (size_t)PTRDIFF_MAX / 4,
                               (size_t)PTRDIFF_MAX / 4 + 1,
                               (size_t)PTRDIFF_MAX / 2 + 1,
                               (size_t)1 << 31,
                               ((size_t)1 << 31) + 1,
                               (size_t)0xFFFFFFFFu,
                               (SIZE_MAX >> 24) + 3};
    return S[b % (sizeof S / sizeof S[0])];
}

/* a size: 0 .. max mostly, a special one sometimes */
static size_t dsize(rd *r, size_t max)
{
    const unsigned b = u8(r);
    if (b >= 248) return special(u8(r));
    return b % (max + 1);
}

/* a size of at least 1 (0 with a small chance) */
static size_t dsize1(rd *r, size_t max)
{
    const unsigned b = u8(r);
    if (b >= 250) return special(u8(r));
    if (b == 249) return 0;
    return 1 + b % max;
}

/* a leading dimension for rows of n: n plus a little, or below n, 0 or huge */
static size_t dld(rd *r, size_t n)
{
    const unsigned b = u8(r);
    if (b < 160) return n;
    if (b < 224) return n + (b & 7);
    if (b < 232) return n ? n - 1 : 0;
    if (b < 236) return 0;
    return special(u8(r));
}

static int vflags; /* bit 0: specials (inf, NaN, huge) allowed in values */

static float dval(rd *r)
{
    const unsigned b = u8(r);
    if ((vflags & 1) && b >= 250) {
        static const float S[] = {INFINITY, -INFINITY, NAN, 3e38f, -3e38f, 1e-40f};
        return S[b - 250];
    }
    return ((float)b - 128.0f) / 32.0f;
}

/* ---- buffers ----------------------------------------------------------------------------- */

#define SENT 0x7FC0DEADu /* a NaN payload no kernel produces */

typedef struct buf {
    float *raw;          /* GUARD + n + GUARD floats */
    float *p;            /* the n floats the contract asks for */
    size_t n;            /* floats (0 allowed) */
    float *snap;         /* outputs: a copy before the call */
    unsigned char *own;  /* outputs: 1 where the call may write */
    struct buf *next;
} buf;

static buf *bufs;

/* a and b hold the same bits, except that a NaN matches any NaN: which of two NaN operands
 * an operation passes on (so the sign and payload of a NaN result) is the compiler's choice */
static int differ(const float *a, const float *b, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (memcmp(a + i, b + i, sizeof(float)) && !(a[i] != a[i] && b[i] != b[i])) return 1;
    return 0;
}

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_api: %s\n", what);
    abort();
}

static buf *balloc(size_t n)
{
    buf *b = (buf *)calloc(1, sizeof *b);
    size_t i;
    uint32_t s = SENT;
    if (!b) fail("out of memory");
    b->raw = (float *)malloc((n + 2 * GUARD) * sizeof(float));
    if (!b->raw) fail("out of memory");
    for (i = 0; i < n + 2 * GUARD; i++) memcpy(b->raw + i, &s, sizeof s);
    b->p = b->raw + GUARD;
    b->n = n;
    b->next = bufs;
    bufs = b;
    return b;
}

/* an input: n floats of values */
static float *input(rd *r, size_t n)
{
    buf *b = balloc(n);
    size_t i;
    for (i = 0; i < n; i++) b->p[i] = dval(r);
    return b->p;
}

static void free_all(void)
{
    while (bufs) {
        buf *n = bufs->next;
        free(bufs->raw), free(bufs->snap), free(bufs->own), free(bufs);
        bufs = n;
    }
}

/* marks an output: its snapshot, nothing owned yet */
static buf *output(buf *b)
{
    b->snap = (float *)malloc((b->n + 2 * GUARD) * sizeof(float));
    b->own = (unsigned char *)calloc(b->n + 2 * GUARD, 1);
    if (!b->snap || !b->own) fail("out of memory");
    memcpy(b->snap, b->raw, (b->n + 2 * GUARD) * sizeof(float));
    return b;
}

static void resnap(buf *b) { memcpy(b->snap, b->raw, (b->n + 2 * GUARD) * sizeof(float)); }

/* a * b, or SIZE_MAX when it overflows */
static size_t msat(size_t a, size_t b)
{
    return a && b > (size_t)-1 / a ? (size_t)-1 : a * b;
}

/* extent of rows x n at ld (floats from the first to one past the last), or SIZE_MAX */
static size_t ext_mat(size_t rows, size_t n, size_t ld)
{
    if (rows == 0 || n == 0) return 0;
    if (n > MAXEL || (rows - 1 != 0 && ld > (MAXEL - n) / (rows - 1))) return (size_t)-1;
    return (rows - 1) * ld + n;
}

/* extent of a [n0, n1, n2, row] tensor at strides s0, s1, s2, or SIZE_MAX */
static size_t ext_t4(size_t n0, size_t s0, size_t n1, size_t s1, size_t n2, size_t s2,
                     size_t row)
{
    size_t e = row, i;
    const size_t n[3] = {n0, n1, n2}, s[3] = {s0, s1, s2};
    if (!n0 || !n1 || !n2 || !row) return 0;
    if (row > MAXEL) return (size_t)-1;
    for (i = 0; i < 3; i++) {
        if (n[i] - 1 != 0 && s[i] > (MAXEL - e) / (n[i] - 1)) return (size_t)-1;
        e += (n[i] - 1) * s[i];
    }
    return e;
}

/* the buffer for an extent: exact, or tiny when it cannot exist (the call must refuse);
 * NULL when it could exist but is too large to allocate here (skip the case) */
static buf *for_extent(size_t e, int *impossible)
{
    if (e > MAXEL) {
        *impossible = 1;
        return balloc(4);
    }
    if (e > LIMIT) return NULL;
    return balloc(e);
}

/* Owns rows x n at ld. More rows x n than the buffer holds means ld < n: the call must
 * refuse, and nothing is owned. */
static void own_mat(buf *b, size_t rows, size_t n, size_t ld)
{
    size_t r, c;
    if (msat(rows, n) > b->n || ext_mat(rows, n, ld) > b->n) return;
    for (r = 0; r < rows; r++)
        for (c = 0; c < n; c++) b->own[GUARD + r * ld + c] = 1;
}

static void own_t4(buf *b, size_t n0, size_t s0, size_t n1, size_t s1, size_t n2, size_t s2,
                   size_t row)
{
    size_t i, j, l, c;
    if (!n0 || !n1 || !n2 || !row) return; /* empty (and no loop over a huge other size) */
    for (i = 0; i < n0; i++)
        for (j = 0; j < n1; j++)
            for (l = 0; l < n2; l++)
                for (c = 0; c < row; c++) b->own[GUARD + i * s0 + j * s1 + l * s2 + c] = 1;
}

/* after a call: untouched when st != OK, else untouched outside what it owns */
static void verify(buf *b, attn_status st, const char *what)
{
    size_t i;
    for (i = 0; i < b->n + 2 * GUARD; i++)
        if ((st != ATTN_OK || !b->own[i]) && memcmp(b->raw + i, b->snap + i, sizeof(float))) {
            fprintf(stderr, "fuzz_api: %s: status %d, float %zu of %zu (guard %d) written\n",
                    what, (int)st, i, b->n, GUARD);
            abort();
        }
}

/* every owned float of b finite */
static void finite_owned(const buf *b, const char *what)
{
    size_t i;
    for (i = 0; i < b->n; i++)
        if (b->own[GUARD + i] && !isfinite(b->p[i])) {
            fprintf(stderr, "fuzz_api: %s: non-finite output %g at %zu\n", what,
                    (double)b->p[i], i);
            abort();
        }
}

/* Whether i + off >= j + w, exactly, for any off (a causal offset near PTRDIFF_MAX, where
 * double would round) and any w */
static int sum_ge(size_t i, ptrdiff_t off, size_t j, size_t w)
{
    uint64_t lhs;
    if (off >= 0) {
        lhs = (uint64_t)i + (uint64_t)off; /* i < 2^63 and off < 2^63: no wrap */
    } else {
        const uint64_t neg = (uint64_t)(-(off + 1)) + 1; /* -off, also for PTRDIFF_MIN */
        if ((uint64_t)i < neg) return 0;
        lhs = (uint64_t)i - neg;
    }
    return lhs >= (uint64_t)j && lhs - (uint64_t)j >= (uint64_t)w;
}

static void refused(attn_status st, int impossible, const char *what)
{
    if (impossible && st == ATTN_OK) {
        fprintf(stderr, "fuzz_api: %s accepted sizes past the address space\n", what);
        abort();
    }
}

/* a workspace for a query's answer q: NULL, one byte short, exact or ample; *sz its size */
static void *dws(rd *r, size_t q, size_t *sz, int null_ok)
{
    const unsigned b = u8(r) % 8;
    buf *w;
    if (q > LIMIT * sizeof(float)) return NULL;
    if (b == 0 && null_ok) {
        *sz = 0;
        return NULL;
    }
    *sz = b == 1 && q ? q - 1 : b == 2 ? q + 100 : q;
    w = balloc((*sz + sizeof(float) - 1) / sizeof(float) + 1);
    return (unsigned char *)w->p + (b == 3 ? 1 : 0); /* any alignment */
}

/* ---- row operations ------------------------------------------------------------------------ */

/* whether a rows x n matrix at offset yo (leading dimension ldy) shares an element with one
 * at offset 0 (ldx) */
static int rows_meet(size_t rows, size_t n, size_t ldx, size_t yo, size_t ldy)
{
    const size_t lx = ldx < n ? n : ldx; /* ldx < n: one row, or refused for its ld */
    size_t i;
    for (i = 0; i < rows * n; i++) {
        const size_t q = yo + i / n * ldy + i % n;
        if (q / lx < rows && q % lx < n) return 1;
    }
    return 0;
}

static void fz_rowop(rd *r, unsigned op)
{
    const size_t rows = dsize(r, 9), n = dsize(r, 70);
    const size_t ldx = dld(r, n), ldy0 = dld(r, n);
    const unsigned mode = u8(r);
    const int inplace = mode % 4 == 0, overlap = mode % 8 == 1; /* overlap: y inside x */
    const size_t ldy = inplace ? ldx : ldy0;
    int imp = 0, yhit = 0;
    buf *xb = for_extent(ext_mat(rows, n, ldx), &imp), *yb;
    size_t i;
    float *yp;
    float eps, scale;
    attn_status st;
    const float *gamma = NULL, *beta = NULL;
    buf *mb = NULL, *rb = NULL;
    const char *name;
    if (!xb) return;
    for (i = 0; i < xb->n; i++) xb->p[i] = dval(r);
    yb = inplace ? xb : for_extent(ext_mat(rows, n, ldy), &imp);
    if (!yb) return;
    if (!inplace)
        for (i = 0; i < yb->n; i++) yb->p[i] = dval(r);
    eps = (u8(r) & 3) == 0 ? 0.0f : 1e-5f;
    scale = dval(r);
    if (u8(r) & 1 && n && n <= LIMIT) gamma = input(r, n);
    if (u8(r) & 1 && n && n <= LIMIT) beta = input(r, n);
    output(yb);
    if (yb->n) own_mat(yb, rows, n, ldy);
    yp = yb->p;
    if (overlap && !inplace && xb->n > 1 && !imp) { /* y from a float of x on, inside x's buffer */
        const size_t yo = 1 + u8(r) % (xb->n - 1);
        if (yo + ext_mat(rows, n, ldy) <= xb->n) {
            yb = xb;
            output(yb);
            yp = xb->p + yo;
            yhit = rows_meet(rows, n, ldx, yo, ldy);
            if (!yhit) /* y between x's rows: a valid call, y's floats its own */
                for (i = 0; i < rows * n; i++) xb->own[GUARD + yo + i / n * ldy + i % n] = 1;
        }
    }
    switch (op % 5) {
    case 0:
        name = "attn_softmax";
        st = attn_softmax(xb->p, ldx, yp, ldy, rows, n, scale);
        break;
    case 1:
        name = "attn_layernorm";
        if (rows <= LIMIT && u8(r) & 1) mb = output(balloc(rows)), own_mat(mb, 1, rows, rows);
        if (rows <= LIMIT && u8(r) & 1) rb = output(balloc(rows)), own_mat(rb, 1, rows, rows);
        st = attn_layernorm(xb->p, ldx, yp, ldy, rows, n, gamma, beta, eps,
                            mb ? mb->p : NULL, rb ? rb->p : NULL);
        if (mb) verify(mb, st, "attn_layernorm mean_out");
        if (rb) verify(rb, st, "attn_layernorm rstd_out");
        break;
    case 2:
        name = "attn_rmsnorm";
        st = attn_rmsnorm(xb->p, ldx, yp, ldy, rows, n, gamma, eps);
        break;
    case 3:
        name = "attn_add";
        st = attn_add(yp, ldy, xb->p, ldx, rows, n);
        break;
    default:
        name = "attn_activation";
        st = attn_activation((attn_act)(u8(r) % 6), xb->p, ldx, yp, ldy, rows, n);
        break;
    }
    verify(yb, st, name);
    refused(st, imp, name);
    if (yhit && st == ATTN_OK) fail("a row operation accepted y over x's elements");
    /* finite promises on moderate finite input: every row operation, the norms also with
     * eps = 0 (a zero-variance row normalizes to 0) */
    if (st == ATTN_OK && !(vflags & 1)) finite_owned(yb, name);
}

/* attn_rope in place on tokens x (heads * head_dim) rows at ldx */
static void fz_rope(rd *r)
{
    attn_rope_params rp;
    const size_t hd = dsize(r, 40), heads = dsize(r, 4), tokens = dsize(r, 9);
    const size_t ldx = dld(r, heads * hd), pos0 = dsize(r, 100);
    int imp = 0;
    buf *b = for_extent(ext_mat(tokens, msat(heads, hd), ldx), &imp), *fr = NULL;
    size_t *pos = NULL, i;
    attn_status st;
    if (!b) return;
    memset(&rp, 0, sizeof rp);
    rp.head_dim = hd;
    rp.rot_dim = u8(r) & 1 ? 0 : dsize(r, 40);
    rp.pairing = (attn_rope_pairing)(u8(r) % 3);
    rp.theta = u8(r) & 1 ? 0.0f : dval(r) * 1000.0f;
    rp.pos_scale = u8(r) & 1 ? 0.0f : dval(r);
    if (u8(r) % 4 == 0 && hd <= LIMIT) {
        fr = balloc(hd / 2 + 1);
        for (i = 0; i < hd / 2 + 1; i++) fr->p[i] = dval(r) / 4.0f;
        rp.inv_freq = fr->p;
    }
    if (u8(r) % 4 == 0 && tokens <= 64) {
        pos = (size_t *)balloc(2 * tokens + 2)->p;
        for (i = 0; i < tokens; i++) pos[i] = dsize(r, 5000);
    }
    for (i = 0; i < b->n; i++) b->p[i] = dval(r);
    output(b);
    if (b->n) own_mat(b, tokens, msat(heads, hd), ldx);
    st = attn_rope(u8(r) % 16 ? &rp : NULL, b->p, ldx, tokens, heads, pos0, pos);
    verify(b, st, "attn_rope");
    refused(st, imp, "attn_rope");
    if (st == ATTN_OK && !(vflags & 1) && !fr) finite_owned(b, "attn_rope");
}

static void fz_posenc(rd *r)
{
    const size_t rows = dsize(r, 9), d = dsize(r, 40), ld = dld(r, d), pos0 = dsize(r, 200);
    const int add = u8(r) & 1;
    int imp = 0;
    buf *b = for_extent(ext_mat(rows, d, ld), &imp);
    attn_status st;
    size_t i;
    if (!b) return;
    for (i = 0; i < b->n; i++) b->p[i] = dval(r);
    output(b);
    if (b->n) own_mat(b, rows, d, ld);
    st = attn_positional_encoding(b->p, ld, rows, d, pos0, add);
    verify(b, st, "attn_positional_encoding");
    refused(st, imp, "attn_positional_encoding");
    if (st == ATTN_OK && !(vflags & 1)) finite_owned(b, "attn_positional_encoding");
}

/* ---- matmul, linear -------------------------------------------------------------------------- */

static void fz_matmul(rd *r, int linear)
{
    const int ta = linear ? 0 : (int)(u8(r) & 1), tb = u8(r) & 1;
    const size_t m = dsize(r, 20), n = dsize(r, 40), k = dsize(r, 300);
    const size_t lda = dld(r, ta ? m : k), ldb = dld(r, tb ? k : n), ldc = dld(r, n);
    const float alpha = dval(r), beta = (u8(r) & 1) ? 0.0f : dval(r);
    const attn_act act = (attn_act)(u8(r) % 6);
    int imp = 0, ws_short;
    buf *ab = for_extent(ta ? ext_mat(k, m, lda) : ext_mat(m, k, lda), &imp);
    buf *bb = for_extent(tb ? ext_mat(n, k, ldb) : ext_mat(k, n, ldb), &imp);
    buf *cb = for_extent(ext_mat(m, n, ldc), &imp);
    const float *bias = NULL;
    size_t i, q, wsz = 0;
    void *ws;
    attn_status st;
    attn_dtype bt;
    if (!ab || !bb || !cb) return;
    for (i = 0; i < ab->n; i++) ab->p[i] = dval(r);
    for (i = 0; i < bb->n; i++) bb->p[i] = dval(r);
    for (i = 0; i < cb->n; i++) cb->p[i] = dval(r);
    if (linear && u8(r) & 1 && n && n <= LIMIT) bias = input(r, n);
    q = linear ? attn_linear_workspace_size((attn_trans)tb, m, k, n)
               : attn_matmul_workspace_size((attn_trans)ta, (attn_trans)tb, m, n, k);
    if (q > attn_matmul_workspace_size((attn_trans)ta, (attn_trans)tb, (size_t)-1, (size_t)-1,
                                       (size_t)-1))
        fail("matmul workspace above its documented bound");
    ws = dws(r, q, &wsz, 1);
    ws_short = ws && wsz < q;
    /* B's storage (decoded last: older inputs keep f32): f32, f16, bf16, q8_0, q4_0 (B's
     * floats' bytes read as such; fewer bytes than the floats), or 5, invalid */
    bt = linear ? ATTN_F32 : (attn_dtype)(u8(r) % 6);
    output(cb);
    if (cb->n) own_mat(cb, m, n, ldc);
    if (linear)
        st = attn_linear(ab->p, lda, m, k, (attn_trans)tb, bb->p, ldb, bias, n, act, cb->p, ldc,
                         ws, wsz);
    else
        st = attn_matmul_typed((attn_trans)ta, (attn_trans)tb, m, n, k, alpha, ab->p, lda, bt,
                               bb->p, ldb, beta, cb->p, ldc, ws, wsz);
    verify(cb, st, linear ? "attn_linear" : "attn_matmul");
    /* m = 0 or n = 0: an empty product, leading dimensions unchecked */
    refused(st, imp && (linear || (m && n)), linear ? "attn_linear" : "attn_matmul");
    if (ws_short && st == ATTN_OK) fail("matmul accepted a short workspace");
    if (st == ATTN_OK && (bt > ATTN_Q4_0 || ((bt == ATTN_Q8_0 || bt == ATTN_Q4_0) && m && n &&
                                            (!tb || k % 32 || (k && ldb % 32)))))
        fail("attn_matmul_typed accepted an invalid type or block layout");
    if (st == ATTN_OK && !(vflags & 1) && bt == ATTN_F32)
        finite_owned(cb, linear ? "attn_linear" : "attn_matmul");
    if (st == ATTN_OK && !linear && ws) { /* the same bits without a workspace */
        buf *c2 = balloc(cb->n);
        memcpy(c2->p, cb->snap + GUARD, cb->n * sizeof(float));
        if (attn_matmul_typed((attn_trans)ta, (attn_trans)tb, m, n, k, alpha, ab->p, lda, bt,
                              bb->p, ldb, beta, c2->p, ldc, NULL, 0) != ATTN_OK ||
            differ(c2->p, cb->p, cb->n))
            fail("attn_matmul: workspace and no workspace differ");
    }
}

/* ---- attention ----------------------------------------------------------------------------- */

/* strides of a [b, h, l, d] tensor: the layout's, or decoded ones */
static void dstrides(rd *r, int lay, size_t H, size_t L, size_t D, size_t *sb, size_t *sh,
                     size_t *sl)
{
    const unsigned m = u8(r) % 8;
    if (lay == ATTN_LAYOUT_BLHD) *sl = H * D, *sh = D, *sb = L * H * D;
    else *sl = D, *sh = L * D, *sb = H * L * D;
    if (m == 5) *sl = dld(r, D);
    if (m == 6) *sh = dld(r, *sh);
    if (m == 7) *sb = dld(r, *sb), *sl = dld(r, *sl);
}

/* whether O's strides map two output elements onto one float */
static int dup_rows(const attn_attention_params *p)
{
    const size_t n = ext_t4(p->batch, p->o_sb, p->heads, p->o_sh, p->q_len, p->o_sl,
                            p->v_head_dim);
    unsigned char *cnt = (unsigned char *)calloc(n + 1, 1);
    size_t b, h, l, c;
    int dup = 0;
    if (!cnt) fail("out of memory");
    for (b = 0; b < p->batch && !dup; b++)
        for (h = 0; h < p->heads && !dup; h++)
            for (l = 0; l < p->q_len && !dup; l++)
                for (c = 0; c < p->v_head_dim; c++)
                    if (cnt[b * p->o_sb + h * p->o_sh + l * p->o_sl + c]++) dup = 1;
    free(cnt);
    return dup;
}

static void dump_params(const attn_attention_params *p)
{
    fprintf(stderr,
            "params: B %zu H %zu KVH %zu Lq %zu Lk %zu d %zu dv %zu\n"
            "  q %zu %zu %zu  k %zu %zu %zu  v %zu %zu %zu  o %zu %zu %zu\n"
            "  scale %g softcap %g causal %d offset %td mask %d (%zu %zu %zu) bool %d "
            "(%zu %zu %zu) key_lengths %d scores %d mode %d window %zu alibi %d sinks %d "
            "kv_start %zu\n",
            p->batch, p->heads, p->kv_heads, p->q_len, p->kv_len, p->head_dim, p->v_head_dim,
            p->q_sb, p->q_sh, p->q_sl, p->k_sb, p->k_sh, p->k_sl, p->v_sb, p->v_sh, p->v_sl,
            p->o_sb, p->o_sh, p->o_sl, (double)p->scale, (double)p->softcap, (int)p->causal,
            p->causal_offset, p->mask != NULL, p->mask_sb, p->mask_sh, p->mask_sq,
            p->bool_mask != NULL, p->bmask_sb, p->bmask_sh, p->bmask_sq, p->key_lengths != NULL,
            p->scores != NULL, (int)p->scores_mode, p->window, p->alibi_slopes != NULL,
            p->sinks != NULL, p->kv_start);
}

/* O against a double-precision reference, row by row, within the bound test_attention.c
 * asserts: vmax (2e-5 + expm1(2 ds)) + 1e-6, ds the row's float error bound on the scores
 * (a silent wrong answer, e.g. every key masked by an overflowing causal test, fails). */
static void check_reference(const attn_attention_params *p)
{
    const size_t grp = p->heads / p->kv_heads;
    const float sc = p->scale != 0.0f ? p->scale : 1.0f / sqrtf((float)p->head_dim);
    size_t b, h, i, j, c;
    double *w = (double *)malloc((p->kv_len + 1) * sizeof(double));
    double *o = (double *)malloc((p->v_head_dim + 1) * sizeof(double));
    if (!w || !o) fail("out of memory");
    for (b = 0; b < p->batch; b++)
        for (h = 0; h < p->heads; h++)
            for (i = 0; i < p->q_len; i++) {
                const float *q = p->q + b * p->q_sb + h * p->q_sh + i * p->q_sl;
                const size_t g = h / grp;
                const size_t klen = p->key_lengths ? (size_t)p->key_lengths[b] : p->kv_len;
                const ptrdiff_t offi = p->causal == ATTN_CAUSAL_OFFSET
                                           ? p->causal_offset
                                           : (ptrdiff_t)klen - (ptrdiff_t)p->q_len;
                const double off = (double)offi; /* for ALiBi's bias only */
                double mx = -HUGE_VAL, sum = 0.0, ds = 0.0, vmax = 0.0;
                const float *orow = p->o + b * p->o_sb + h * p->o_sh + i * p->o_sl;
                for (j = 0; j < p->kv_len; j++) {
                    const float *k = (const float *)p->k + b * p->k_sb + g * p->k_sh +
                                     (p->kv_start + j) % p->kv_len * p->k_sl;
                    double x = 0.0, ab = 0.0, e;
                    w[j] = -HUGE_VAL;
                    if (j >= klen || (p->causal != ATTN_CAUSAL_NONE && !sum_ge(i, offi, j, 0)))
                        continue;
                    if (p->window && sum_ge(i, offi, j, p->window)) continue;
                    if (p->bool_mask && !p->bool_mask[b * p->bmask_sb + h * p->bmask_sh +
                                                      i * p->bmask_sq + j])
                        continue;
                    for (c = 0; c < p->head_dim; c++) {
                        x += (double)q[c] * k[c];
                        ab += fabs((double)q[c] * k[c]);
                    }
                    x *= sc;
                    e = fabs((double)sc) * ab * (double)(p->head_dim + 2) * 0x1p-23;
                    if (p->softcap > 0) {
                        x = p->softcap * tanh(x / p->softcap);
                        e += 1e-6 * p->softcap;
                    }
                    if (p->mask) {
                        const float m =
                            p->mask[b * p->mask_sb + h * p->mask_sh + i * p->mask_sq + j];
                        if (m == -INFINITY) continue;
                        x += m;
                        e += (fabs(x) + fabs((double)m)) * 0x1p-22;
                    }
                    if (p->alibi_slopes) {
                        const double a =
                            (double)p->alibi_slopes[h] * ((double)j - ((double)i + off));
                        x += a;
                        e += (fabs(x) + fabs(a)) * 0x1p-22;
                    }
                    w[j] = x;
                    if (x > mx) mx = x;
                    if (e > ds) ds = e;
                }
                for (c = 0; c < p->v_head_dim; c++) o[c] = 0.0;
                if (p->sinks && p->sinks[h] > -INFINITY && mx > -HUGE_VAL) {
                    if (p->sinks[h] > mx) mx = p->sinks[h]; /* a key of value 0 */
                    sum = exp((double)p->sinks[h] - mx);
                }
                for (j = 0; j < p->kv_len; j++) {
                    const float *v = (const float *)p->v + b * p->v_sb + g * p->v_sh +
                                     (p->kv_start + j) % p->kv_len * p->v_sl;
                    double e;
                    if (w[j] == -HUGE_VAL) continue;
                    e = exp(w[j] - mx);
                    sum += e;
                    for (c = 0; c < p->v_head_dim; c++) {
                        o[c] += e * v[c];
                        if (fabs((double)v[c]) > vmax) vmax = fabs((double)v[c]);
                    }
                }
                for (c = 0; c < p->v_head_dim; c++) {
                    const double want = sum > 0 ? o[c] / sum : 0.0;
                    /* V all 0: O exactly 0, whatever the scores' bound (inf when ALiBi's
                     * bias is huge) */
                    const double tol =
                        sum > 0 ? (vmax > 0 ? vmax * (2e-5 + expm1(2 * ds)) : 0.0) + 1e-6 : 0.0;
                    if (!(fabs((double)orow[c] - want) <= tol)) {
                        dump_params(p);
                        fprintf(stderr, "fuzz_api: attn_attention: O[%zu][%zu][%zu][%zu] = %.9g,"
                                " reference %.9g (tolerance %.3g)\n", b, h, i, c,
                                (double)orow[c], want, tol);
                        abort();
                    }
                }
            }
    free(w), free(o);
}

static void fz_attention(rd *r)
{
    const int lay = u8(r) & 1, big = u8(r) % 4 == 0;
    const size_t kvh = dsize1(r, 3), grp = dsize1(r, 3);
    const size_t B = dsize1(r, 2), H = kvh * grp + (u8(r) % 8 == 0), Lq = dsize1(r, 40),
                 Lk = dsize1(r, 300), d = dsize1(r, 40), dv = dsize1(r, 24);
    size_t qsb, qsh, qsl, ksb, ksh, ksl, vsb, vsh, vsl, osb, osh, osl, i, wsz = 0, nt, t;
    int imp = 0, dup = 0;
    buf *qb, *kb, *vb, *ob, *mb = NULL, *bmb = NULL, *sb = NULL;
    attn_attention_params p;
    attn_status st;
    void *ws;
    unsigned flags;
    float e = 1.0f;
    if (big) e = ldexpf(1.0f, (int)(u8(r) % 40));
    dstrides(r, lay, H, Lq, d, &qsb, &qsh, &qsl);
    dstrides(r, lay, kvh, Lk, d, &ksb, &ksh, &ksl);
    dstrides(r, lay, kvh, Lk, dv, &vsb, &vsh, &vsl);
    dstrides(r, lay, H, Lq, dv, &osb, &osh, &osl);
    qb = for_extent(ext_t4(B, qsb, H, qsh, Lq, qsl, d), &imp);
    kb = for_extent(ext_t4(B, ksb, kvh, ksh, Lk, ksl, d), &imp);
    vb = for_extent(ext_t4(B, vsb, kvh, vsh, Lk, vsl, dv), &imp);
    ob = for_extent(ext_t4(B, osb, H, osh, Lq, osl, dv), &imp);
    if (!qb || !kb || !vb || !ob) return;
    /* keep each case fast (strides that alias rows can make a small buffer hold many) */
    if (!imp && msat(msat(msat(B, H), Lq), Lk > 4096 || d > 4096 || dv > 4096 ? (size_t)-1
                                                                          : Lk + d + dv) > 400000)
        return;
    for (i = 0; i < qb->n; i++) qb->p[i] = dval(r) * e;
    for (i = 0; i < kb->n; i++) kb->p[i] = dval(r) * e;
    for (i = 0; i < vb->n; i++) vb->p[i] = dval(r);
    p = attn_attention_init(B, H, kvh, Lq, Lk, d, dv, qb->p, kb->p, vb->p, ob->p,
                            (attn_layout)lay);
    p.q_sb = qsb, p.q_sh = qsh, p.q_sl = qsl, p.k_sb = ksb, p.k_sh = ksh, p.k_sl = ksl;
    p.v_sb = vsb, p.v_sh = vsh, p.v_sl = vsl, p.o_sb = osb, p.o_sh = osh, p.o_sl = osl;
    flags = u8(r);
    if (flags & 1) p.scale = (u8(r) & 1) ? 0.0f : dval(r) / 8.0f;
    if (flags & 2) p.softcap = (float)(u8(r) % 50);
    p.causal = (attn_causal)(u8(r) % 3);
    if (p.causal == ATTN_CAUSAL_OFFSET) {
        const unsigned c = u8(r);
        p.causal_offset = c < 200 ? (ptrdiff_t)c - 100 : c & 1 ? PTRDIFF_MAX - (ptrdiff_t)(c & 7)
                                                                : PTRDIFF_MIN + (ptrdiff_t)(c & 7);
    }
    if (flags & 4) { /* an additive mask, strides possibly broadcasting */
        const size_t msq = u8(r) & 1 ? 0 : Lk, msh = u8(r) & 1 ? 0 : msat(Lq, msq),
                     msb = u8(r) & 1 ? 0 : msat(msat(H, Lq), Lk);
        mb = for_extent(ext_t4(B, msb, H, msh, Lq, msq, Lk), &imp);
        if (!mb) return;
        for (i = 0; i < mb->n; i++) mb->p[i] = u8(r) % 4 == 0 ? -INFINITY : dval(r);
        p.mask = mb->p, p.mask_sb = msb, p.mask_sh = msh, p.mask_sq = msq;
    }
    if (flags & 8) { /* a bool mask: bytes, strides possibly broadcasting */
        const size_t bsq = u8(r) & 1 ? 0 : Lk, bsh = u8(r) & 1 ? 0 : msat(Lq, bsq),
                     bsb = u8(r) & 1 ? 0 : msat(msat(H, Lq), Lk);
        const size_t need = ext_t4(B, bsb, H, bsh, Lq, bsq, Lk);
        if (need == (size_t)-1 || need > LIMIT) return;
        bmb = balloc((need + 3) / 4);
        for (i = 0; i < need; i++) ((uint8_t *)bmb->p)[i] = (uint8_t)(u8(r) % 3);
        p.bool_mask = (const uint8_t *)bmb->p;
        p.bmask_sb = bsb, p.bmask_sh = bsh, p.bmask_sq = bsq;
    }
    if (flags & 16 && B <= 8) {
        int64_t *kl = (int64_t *)balloc(2 * B + 2)->p;
        for (i = 0; i < B; i++) {
            const unsigned c = u8(r);
            kl[i] = c < 250 ? (int64_t)(Lk < 4096 ? c % (Lk + 1) : c)
                            : c == 250 || Lk >= (size_t)INT64_MAX ? -1 : (int64_t)Lk + 1;
        }
        p.key_lengths = kl;
    }
    if (flags & 32) { /* the scores output */
        const size_t ssq = dld(r, Lk);
        const size_t ssh = msat(Lq, ssq), ssb = msat(H, ssh);
        sb = for_extent(ext_t4(B, ssb, H, ssh, Lq, ssq, Lk), &imp);
        if (!sb) return;
        p.scores = sb->p, p.scores_sb = ssb, p.scores_sh = ssh;
        p.scores_sq = ssq, p.scores_mode = (attn_scores)(u8(r) % 4);
    }
    if (flags & 64 && kvh + 1 != 0 && H % (kvh + 1)) p.kv_heads = kvh + 1; /* not dividing */
    if (flags & 128 && u8(r) < 32) p.q = NULL;
    ws = dws(r, attn_attention_workspace_size(&p), &wsz, 0);
    flags = u8(r); /* read after the rest: the older corpus decodes as it did */
    if (flags & 1) p.window = flags & 2 ? special(u8(r)) : u8(r) % 40;
    if (H > 64) flags &= ~12u; /* per-head arrays only for possible head counts */
    if (flags & 4) { /* ALiBi slopes, sinks: one float per head */
        buf *al = balloc(H);
        for (i = 0; i < H; i++) al->p[i] = u8(r) & 1 ? dval(r) / 4.0f : 0.0f;
        p.alibi_slopes = al->p;
    }
    if (flags & 16) p.kv_start = flags & 32 || !Lk ? special(u8(r)) : u8(r) % Lk; /* a ring */
    if (flags & 8) {
        buf *sk = balloc(H);
        for (i = 0; i < H; i++) sk->p[i] = u8(r) % 4 ? dval(r) : -INFINITY;
        p.sinks = sk->p;
    }
    output(ob);
    if (sb) output(sb);
    if (!imp) { /* impossible sizes: nothing owned, the call must refuse */
        own_t4(ob, B, osb, H, osh, Lq, osl, dv);
        if (sb) own_t4(sb, B, p.scores_sb, H, p.scores_sh, Lq, p.scores_sq, Lk);
    }
    st = attn_attention(&p, ws, wsz);
    verify(ob, st, "attn_attention O");
    if (sb) verify(sb, st, "attn_attention scores");
    refused(st, imp && p.batch && p.q_len, "attn_attention"); /* else empty: unchecked */
    if (st != ATTN_OK) {
        nt = attn_attention_tasks(&p);
        if (nt && attn_attention_task(&p, 0, ws, wsz) == ATTN_OK)
            fail("attn_attention_task accepted what attn_attention refused");
        verify(ob, ATTN_ERR_ARG, "attn_attention_task O after a refused call");
        return;
    }
    if (!p.batch || !p.q_len) { /* an empty call: nothing written (verified), no items */
        if (attn_attention_tasks(&p)) fail("attn_attention_tasks of an empty call");
        return;
    }
    if (getenv("FUZZ_API_VERBOSE")) dump_params(&p);
    if (!(vflags & 1)) finite_owned(ob, "attn_attention O");
    if (!(vflags & 1) && !big) check_reference(&p);
    /* strides mapping two output rows onto one float are refused (ATTN_ERR_LD) */
    dup = dup_rows(&p);
    if (dup) fail("attn_attention accepted O strides mapping two rows onto one float");
    nt = attn_attention_tasks(&p);
    if (nt != B * H * ((Lq + attn_attention_query_tile() - 1) / attn_attention_query_tile()))
        fail("attn_attention_tasks: wrong count");
    if (!dup) { /* the work items, in reverse order, give the whole call's bits */
        buf *o2 = balloc(ob->n);
        float *keep = (float *)malloc(ob->n * sizeof(float) + 1);
        if (!keep) fail("out of memory");
        memcpy(keep, ob->p, ob->n * sizeof(float));
        memcpy(o2->p, ob->snap + GUARD, ob->n * sizeof(float));
        p.o = o2->p;
        if (sb) p.scores = NULL; /* scores change O's path: compare without them */
        if (!sb)
            for (t = nt; t-- > 0;)
                if (attn_attention_task(&p, t, ws, wsz) != ATTN_OK) fail("a work item refused");
        if (!sb && differ(o2->p, keep, ob->n))
            fail("attn_attention_task: the split differs from the whole call");
        if (attn_attention_task(&p, nt, ws, wsz) != ATTN_ERR_ARG)
            fail("attn_attention_task: task past the count accepted");
        free(keep);
    }
}

/* ---- KV cache -------------------------------------------------------------------------------- */

static void fz_kv(rd *r)
{
    const size_t B = dsize1(r, 2), G = dsize1(r, 3), cap = dsize(r, 40), d = dsize1(r, 16),
                 dv = dsize1(r, 16), H = G * dsize1(r, 2);
    attn_kv_cache c;
    int imp = 0;
    const size_t ek = msat(msat(msat(B, G), cap), d), ev = msat(msat(msat(B, G), cap), dv);
    buf *kb = for_extent(ek, &imp), *vb = for_extent(ev, &imp);
    attn_status st;
    size_t steps, s, len = 0, i;
    float *kref, *vref;
    if (!kb || !vb) return;
    output(kb), output(vb);
    st = attn_kv_cache_init(&c, kb->p, vb->p, B, G, cap, d, dv);
    verify(kb, ATTN_ERR_ARG, "attn_kv_cache_init K");
    refused(st, imp, "attn_kv_cache_init");
    if (st != ATTN_OK) return;
    kref = (float *)calloc(kb->n + 1, sizeof(float));
    vref = (float *)calloc(vb->n + 1, sizeof(float));
    if (!kref || !vref) fail("out of memory");
    steps = u8(r) % 5;
    for (s = 0; s < steps; s++) {
        const size_t n = dsize(r, 12);
        const int lay = u8(r) & 1;
        buf *kn, *vn;
        size_t b, g, t, j;
        if (n > LIMIT / (B * G * (d + dv))) break;
        kn = balloc(B * G * n * d), vn = balloc(B * G * n * dv);
        for (i = 0; i < kn->n; i++) kn->p[i] = dval(r);
        for (i = 0; i < vn->n; i++) vn->p[i] = dval(r);
        resnap(kb), resnap(vb);
        memset(kb->own, 0, kb->n + 2 * GUARD), memset(vb->own, 0, vb->n + 2 * GUARD);
        for (b = 0; b < B; b++)
            for (g = 0; g < G; g++)
                for (t = 0; t < n && len + t < cap; t++) {
                    const size_t pos = (b * G + g) * cap + len + t;
                    const size_t sk = lay ? ((b * n + t) * G + g) * d : ((b * G + g) * n + t) * d;
                    const size_t sv = lay ? ((b * n + t) * G + g) * dv : ((b * G + g) * n + t) * dv;
                    for (j = 0; j < d; j++) kb->own[GUARD + pos * d + j] = 1;
                    for (j = 0; j < dv; j++) vb->own[GUARD + pos * dv + j] = 1;
                    if (len + n <= cap) {
                        memcpy(kref + pos * d, kn->p + sk, d * sizeof(float));
                        memcpy(vref + pos * dv, vn->p + sv, dv * sizeof(float));
                    }
                }
        st = attn_kv_cache_append(&c, n, kn->p, vn->p, (attn_layout)lay);
        verify(kb, st, "attn_kv_cache_append K");
        verify(vb, st, "attn_kv_cache_append V");
        if ((st == ATTN_OK) != (len + n <= cap)) fail("attn_kv_cache_append: capacity check");
        if (st == ATTN_OK) len += n;
        if (c.len != len) fail("attn_kv_cache_append: len");
    }
    for (i = 0; i < B * G * cap; i++)
        if ((i % cap) < len && (memcmp(kb->p + i * d, kref + i * d, d * sizeof(float)) ||
                                memcmp(vb->p + i * dv, vref + i * dv, dv * sizeof(float))))
            fail("attn_kv_cache_append: cache contents");
    if (len && msat(msat(B, H), 4 * (d + dv)) <= LIMIT) { /* attention over the cache */
        const size_t lq = 1 + u8(r) % 4;
        const int lay = u8(r) & 1;
        buf *qb = balloc(B * H * lq * d), *ob = balloc(B * H * lq * dv);
        attn_attention_params p;
        size_t wsz;
        void *ws;
        for (i = 0; i < qb->n; i++) qb->p[i] = dval(r);
        p = attn_attention_init_kv(&c, H, lq, qb->p, ob->p, (attn_layout)lay,
                                   (attn_causal)(u8(r) % 3));
        wsz = attn_attention_workspace_size(&p);
        ws = balloc(wsz / sizeof(float) + 1)->p;
        output(ob);
        own_t4(ob, B, p.o_sb, H, p.o_sh, lq, p.o_sl, dv);
        st = attn_attention(&p, ws, wsz);
        verify(ob, st, "attn_attention over a KV cache");
        if (st == ATTN_OK && !(vflags & 1)) finite_owned(ob, "attn_attention over a KV cache");
    }
    free(kref), free(vref);
}

/* ---- blocks -------------------------------------------------------------------------------- */

static void fz_blocks(rd *r, unsigned op)
{
    const size_t heads = dsize1(r, 4), d = heads * dsize1(r, 8) + (u8(r) % 16 == 0);
    const size_t dff = dsize1(r, 48), t = dsize(r, 12), tk = dsize(r, 12);
    const size_t ldx = dld(r, d), ldy0 = dld(r, d), ldm = dld(r, d);
    const int inplace = u8(r) % 4 == 0, causal = (int)(u8(r) % 3) - (u8(r) % 8 == 0);
    const size_t ldy = inplace ? ldx : ldy0;
    int imp = 0, imp_mem = 0, self = 0;
    buf *xb, *yb, *mem, *wb;
    attn_mha_weights a1, a2;
    attn_ffn_weights f;
    attn_encoder_weights ew;
    attn_decoder_weights dw;
    size_t i, q, wsz = 0;
    attn_status st;
    void *ws;
    const char *name;
    const float *ln[6];
    float eps = (u8(r) & 7) == 0 ? 0.0f : 1e-5f;
    if (d > 64 || dff > 64) return;
    xb = for_extent(ext_mat(t, d, ldx), &imp);
    yb = inplace ? xb : for_extent(ext_mat(t, d, ldy), &imp);
    mem = for_extent(ext_mat(tk, d, ldm), &imp_mem);
    if (!xb || !yb || !mem) return;
    for (i = 0; i < xb->n; i++) xb->p[i] = dval(r);
    if (!inplace)
        for (i = 0; i < yb->n; i++) yb->p[i] = dval(r);
    for (i = 0; i < mem->n; i++) mem->p[i] = dval(r);
    wb = balloc(8 * d * d + 2 * d * dff + 16 * d + 2 * dff);
    for (i = 0; i < wb->n; i++) wb->p[i] = dval(r) / 16.0f;
    memset(&a1, 0, sizeof a1);
    a1.d_model = d, a1.heads = heads;
    a1.wq = wb->p, a1.wk = wb->p + d * d, a1.wv = wb->p + 2 * d * d, a1.wo = wb->p + 3 * d * d;
    if (u8(r) & 1) a1.bq = a1.bk = a1.bv = a1.bo = wb->p + 8 * d * d + 2 * d * dff;
    a2 = a1;
    a2.wq = wb->p + 4 * d * d, a2.wk = wb->p + 5 * d * d;
    a2.wv = wb->p + 6 * d * d, a2.wo = wb->p + 7 * d * d;
    memset(&f, 0, sizeof f);
    f.d_model = d, f.d_ff = dff, f.act = (attn_act)(u8(r) % 6);
    f.w1 = wb->p + 8 * d * d, f.w2 = f.w1 + d * dff;
    if (u8(r) & 1) f.b1 = f.w2 + d * dff + d, f.b2 = f.w2 + d * dff;
    for (i = 0; i < 6; i++) ln[i] = u8(r) & 1 ? f.w2 + d * dff + 2 * d + i : NULL;
    if (u8(r) % 8 == 0) f.w1 = NULL;
    memset(&ew, 0, sizeof ew);
    ew.attn = a1, ew.ffn = f, ew.eps = eps, ew.norm = (attn_norm_order)(u8(r) % 3);
    ew.ln1_gamma = ln[0], ew.ln1_beta = ln[1], ew.ln2_gamma = ln[2], ew.ln2_beta = ln[3];
    memset(&dw, 0, sizeof dw);
    dw.self_attn = a1, dw.cross_attn = a2, dw.ffn = f, dw.eps = eps, dw.norm = ew.norm;
    dw.ln1_gamma = ln[0], dw.ln1_beta = ln[1], dw.ln2_gamma = ln[2], dw.ln2_beta = ln[3];
    dw.ln3_gamma = ln[4], dw.ln3_beta = ln[5];
    switch (op % 4) {
    case 0: q = attn_ffn_workspace_size(&f, t), name = "attn_ffn"; break;
    case 1: q = attn_mha_workspace_size(&a1, t, t > tk ? t : tk), name = "attn_mha"; break;
    case 2: q = attn_encoder_workspace_size(&ew, t), name = "attn_encoder"; break;
    default: q = attn_decoder_workspace_size(&dw, t, tk), name = "attn_decoder"; break;
    }
    ws = dws(r, q, &wsz, 0);
    output(yb);
    if (yb->n) own_mat(yb, t, d, ldy);
    switch (op % 4) {
    case 0: st = attn_ffn(&f, xb->p, ldx, yb->p, ldy, t, ws, wsz); break;
    case 1: /* self-attention (xkv = xq) or attention over mem */
        self = u8(r) & 1;
        st = attn_mha(&a1, xb->p, ldx, t, self ? xb->p : mem->p, self ? ldx : ldm, self ? t : tk,
                      causal, yb->p, ldy, ws, wsz);
        imp_mem &= !self;
        break;
    case 2: st = attn_encoder(&ew, xb->p, ldx, yb->p, ldy, t, causal, ws, wsz); break;
    default:
        st = attn_decoder(&dw, xb->p, ldx, yb->p, ldy, t, mem->p, ldm, tk, ws, wsz);
        break;
    }
    if (op % 4 == 0 || op % 4 == 2) imp_mem = 0; /* mem unused */
    verify(yb, st, name);
    refused(st, imp || imp_mem, name);
    if (st == ATTN_OK && !(vflags & 1)) finite_owned(yb, name);
}

static void fz_misc(rd *r)
{
    attn_param_count pc;
    attn_fp_state fs;
    const size_t d = dsize(r, 4096), h = dsize(r, 64), dff = dsize(r, 16384);
    unsigned i;
    for (i = 0; i < 12; i++)
        if (!attn_status_string((attn_status)((int)i - 9))) fail("attn_status_string NULL");
    if (!attn_isa() || !attn_exp_impl()) fail("attn_isa NULL");
    (void)attn_encoder_param_count(d, h, dff, &pc);
    (void)attn_decoder_param_count(d, h, dff, u8(r) & 1 ? &pc : NULL);
    if (attn_denormals_flush_begin(&fs) == ATTN_OK) attn_denormals_flush_end(&fs);
    (void)attn_denormals_flush_supported();
    /* instruction-set pinning: this build's own name and "auto" / NULL only (no state) */
    if (attn_use_isa(NULL) != ATTN_OK || attn_use_isa("auto") != ATTN_OK ||
        attn_use_isa(attn_isa()) != ATTN_OK || attn_use_isa("no-such-isa") != ATTN_ERR_ARG)
        fail("attn_use_isa");
    { /* storage conversions: exactly n elements (their bytes) written, nothing on an error;
       * types 0 .. 4 valid (3, 4 the block types: n a multiple of 32), 5 not */
        const attn_dtype st = (attn_dtype)(u8(r) % 6), dt = (attn_dtype)(u8(r) % 6);
        const size_t n = u8(r) & 1 ? dsize(r, 100) : dsize(r, 4) * 32;
        const size_t ss = attn_dtype_size(st), ds = attn_dtype_bytes(dt, n);
        const int null_src = u8(r) % 16 == 0;
        const int qs = st == ATTN_Q8_0 || st == ATTN_Q4_0, qd = dt == ATTN_Q8_0 || dt == ATTN_Q4_0;
        const int bad = st > ATTN_Q4_0 || dt > ATTN_Q4_0 ||
                        ((qs || qd) && (n % 32 || (qs && qd && st != dt)));
        buf *src, *dst;
        attn_status cs;
        size_t i2;
        if (st > ATTN_BF16 ? ss != 0 : ss != (st == ATTN_F32 ? 4u : 2u)) fail("attn_dtype_size");
        if (n > LIMIT) {
            dst = balloc(4);
            output(dst);
            cs = attn_convert(dt, dst->p, st, dst->p + 2, n);
            verify(dst, cs, "attn_convert (huge n)");
            return;
        }
        src = balloc(n + 1), dst = balloc(n + 1);
        for (i2 = 0; i2 < n; i2++) src->p[i2] = dval(r);
        output(dst);
        for (i2 = 0; !bad && i2 < (ds + sizeof(float) - 1) / sizeof(float); i2++)
            dst->own[GUARD + i2] = 1;
        cs = attn_convert(dt, dst->p, st, null_src ? NULL : src->p, n);
        verify(dst, cs, "attn_convert");
        if ((bad && (n || st > ATTN_Q4_0 || dt > ATTN_Q4_0) && cs == ATTN_OK) ||
            (null_src && n && cs == ATTN_OK))
            fail("attn_convert accepted an invalid type, size or NULL");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd r;
    unsigned op;
    r.p = data, r.n = size;
    op = u8(&r);
    vflags = (int)(u8(&r) % 4 == 0);
    switch (op % 8) {
    case 0: fz_rowop(&r, op / 8); break;
    case 1: if (op & 8) fz_rope(&r); else fz_posenc(&r); break;
    case 2: fz_matmul(&r, 0); break;
    case 3: fz_matmul(&r, 1); break;
    case 4: case 5: fz_attention(&r); break;
    case 6: fz_kv(&r); break;
    default: if (op & 8) fz_blocks(&r, op / 16); else fz_misc(&r); break;
    }
    free_all();
    return 0;
}
