/* test_int8: attn_matmul_int8 (A quantized to q8_0 per block, int8 dot products with q8_0 or
 * q4_0 B) against a double-precision product of the dequantized A and B.
 *
 * Covered:
 *  - q8_0 and q4_0 B; m = 1..9, 13; n over every tail of two vector widths (1..35, 47, 64,
 *    65); k = 32, 64, 96, 160; A at an odd float offset, lda, ldb and ldc padded; alpha and
 *    beta (beta = 0 with C full of NaN: never read); C's padding untouched;
 *  - B's codes at their extremes: q8_0 bytes of -128 and 127, q4_0 nibbles 0 and 15;
 *    A blocks of zeros, tiny values (subnormal scales), mixed magnitudes, large values, and
 *    blocks whose scale is 1 exactly holding ties (k + 1/2: away from zero) and 0.5 - 2^-25;
 *  - products over several chunks of B's columns (k = 4096, n = 100), and one row (n = 37);
 *  - the bound: |C - ref| <= (k / 32 + 4) eps |alpha| sum |a b| + 2 eps |beta c| against the
 *    reference on A quantized by attn_convert (so one code of A off fails it);
 *  - determinism: the same bits row by row and column block by column block;
 *  - built again as int8_isa with the int8 instructions targeted by the compiler (x86: VNNI,
 *    skipped on a CPU without them; AArch64: sdot);
 *  - where the ISA file has int8 instructions chosen at run time (x86: AVX-VNNI, AVX512-VNNI)
 *    and this CPU has them, every case twice: those and the compiler-targeted ones (the
 *    test hook attn__matmul_int8_path), each to the bound, the two bit for bit; so also
 *    the few rows read B in place (m <= 8: quads of 4 rows of A against 4 columns, one row
 *    on its own) against the packed B, in every case;
 *  - refusals with C untouched: NaN, inf and a scale past binary16 in A's last block, k and
 *    ldb not whole blocks, other B types, NULL pointers and workspace, a short workspace,
 *    overlaps; m = 0 and n = 0 touch nothing; k = 0 gives beta C. */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"

#include <float.h>

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* B: n rows of k values quantized by attn_convert into rows of ldb elements (ldb - k of
 * padding blocks filled with 0xFF bytes: a NaN scale, never to be read); extremes forced
 * into some codes. Returns the bytes, bd the dequantized rows (n x k). */
static unsigned char *make_b(attn_dtype bt, size_t n, size_t k, size_t ldb, float *bd)
{
    const size_t bs = bt == ATTN_Q8_0 ? 34 : 18, rb = ldb / 32 * bs;
    unsigned char *b = (unsigned char *)xmalloc(n * rb + 1);
    float *x = (float *)xmalloc(k * sizeof(float));
    size_t j, p;
    memset(b, 0xFF, n * rb + 1);
    for (j = 0; j < n; j++) {
        unsigned char *row = b + j * rb;
        for (p = 0; p < k; p++) x[p] = check_uniform(-1.0f, 1.0f);
        attn_convert(bt, row, ATTN_F32, x, k);
        if (j % 3 == 1) /* extreme codes in the first block */
            for (p = 0; p < 16; p++) {
                if (bt == ATTN_Q8_0) row[2 + p] = p % 2 ? 0x80 : 0x7F;
                else row[2 + p] = p % 2 ? 0x0F : 0xF0;
            }
        attn_convert(ATTN_F32, bd + j * k, bt, row, k);
    }
    free(x);
    return b;
}

/* A's values: by block, random, zeros, tiny, mixed or large */
static void make_a(float *a, size_t m, size_t k, size_t lda)
{
    size_t i, p;
    for (i = 0; i < m; i++)
        for (p = 0; p < k; p++) {
            const size_t kind = (i + p / 32) % 7;
            float v = check_uniform(-2.0f, 2.0f);
            if (kind == 2) { /* d = 1 exactly: ties of the rounding, and just below one */
                const size_t q = p % 32;
                v = q == 0 ? 127.0f : q == 5 ? 0.49999997f : q == 6 ? -0.49999997f
                    : (float)((long)(p * 37 % 253) - 126) + (q % 2 ? 0.5f : -0.5f);
            }
            if (kind == 3) v = 0.0f;
            else if (kind == 4) v *= 1e-30f;
            else if (kind == 5) v *= (p % 5 == 0) ? 1e3f : 1e-3f;
            else if (kind == 6) v *= 1e5f;
            a[i * lda + p] = v;
        }
}

/* A's rows quantized by attn_convert and back */
static void deq_a(const float *a, size_t m, size_t k, size_t lda, float *ad)
{
    unsigned char *q = (unsigned char *)xmalloc(k / 32 * 34);
    size_t i;
    for (i = 0; i < m; i++) {
        attn_convert(ATTN_Q8_0, q, ATTN_F32, a + i * lda, k);
        attn_convert(ATTN_F32, ad + i * k, ATTN_Q8_0, q, k);
    }
    free(q);
}

static long n_elems;
static double worst; /* the largest error as a fraction of the bound */
static int g_rt = 1; /* attn__matmul_int8_path's rt for this pass */

static attn_status mm8(size_t m, size_t n, size_t k, float alpha, const float *a, size_t lda,
                       attn_dtype bt, const void *b, size_t ldb, float beta, float *c,
                       size_t ldc, void *w, size_t ws)
{
    return attn__matmul_int8_path(m, n, k, alpha, a, lda, bt, b, ldb, beta, c, ldc, w, ws,
                                  g_rt);
}

static void check_case(attn_dtype bt, size_t m, size_t n, size_t k, float alpha, float beta)
{
    const size_t lda = k + 3, ldb = k + 32, ldc = n + 2;
    float *abuf = (float *)xmalloc((m * lda + 1) * sizeof(float)), *a = abuf + 1;
    float *ad = (float *)xmalloc(m * k * sizeof(float)), *bd = (float *)xmalloc(n * k * 4);
    float *c = (float *)xmalloc(m * ldc * sizeof(float)), *c0 = (float *)xmalloc(m * ldc * 4);
    float *c1 = (float *)xmalloc(m * ldc * sizeof(float));
    unsigned char *b = make_b(bt, n, k, ldb, bd);
    const size_t ws = attn_matmul_int8_workspace_size(m, n, k);
    void *w = xmalloc(ws);
    size_t i, j, p, bad = 0;
    attn_status st;
    make_a(a, m, k, lda);
    deq_a(a, m, k, lda, ad);
    for (i = 0; i < m * ldc; i++) c0[i] = beta == 0.0f ? NAN : check_uniform(-1.0f, 1.0f);
    memcpy(c, c0, m * ldc * sizeof(float));
    st = mm8(m, n, k, alpha, a, lda, bt, b, ldb, beta, c, ldc, w, ws);
    check(st == ATTN_OK, "int8 %s m=%zu n=%zu k=%zu: status %d", bt == ATTN_Q8_0 ? "q8_0" : "q4_0",
          m, n, k, (int)st);
    for (i = 0; i < m; i++) {
        for (j = 0; j < n; j++) {
            double s = 0.0, sa = 0.0, want, tol, e;
            for (p = 0; p < k; p++) {
                s += (double)ad[i * k + p] * bd[j * k + p];
                sa += fabs((double)ad[i * k + p] * bd[j * k + p]);
            }
            want = alpha * s + (beta == 0.0f ? 0.0 : beta * (double)c0[i * ldc + j]);
            tol = (k / 32 + 4) * (double)FLT_EPSILON * fabs(alpha) * sa +
                  (beta == 0.0f ? 0.0 : 2 * (double)FLT_EPSILON * fabs(beta * c0[i * ldc + j])) +
                  1e-37;
            e = fabs(c[i * ldc + j] - want) / tol;
            if (e > worst) worst = e;
            if (!(fabs(c[i * ldc + j] - want) <= tol) && bad++ < 3)
                check(0, "int8 %s m=%zu n=%zu k=%zu alpha=%g beta=%g C[%zu,%zu] = %.9g, want %.9g"
                      " (tol %.3g)", bt == ATTN_Q8_0 ? "q8_0" : "q4_0", m, n, k, alpha, beta, i,
                      j, c[i * ldc + j], want, tol);
            n_elems++;
        }
        for (j = n; j < ldc; j++)
            if (memcmp(&c[i * ldc + j], &c0[i * ldc + j], 4) != 0 && bad++ < 3)
                check(0, "int8 m=%zu n=%zu k=%zu: padding C[%zu,%zu] written", m, n, k, i, j);
    }
    check(bad == 0, "int8 %s m=%zu n=%zu k=%zu alpha=%g beta=%g: %zu elements off",
          bt == ATTN_Q8_0 ? "q8_0" : "q4_0", m, n, k, alpha, beta, bad);
    if (g_rt) { /* the same bits from the compiler-targeted path (x86: no quads, B packed) */
        memcpy(c1, c0, m * ldc * sizeof(float));
        g_rt = 0;
        mm8(m, n, k, alpha, a, lda, bt, b, ldb, beta, c1, ldc, w, ws);
        g_rt = 1;
        bad = 0;
        for (i = 0; i < m * ldc; i++) bad += memcmp(&c[i], &c1[i], 4) != 0;
        check(bad == 0, "int8 m=%zu n=%zu k=%zu: run-time and compiler-targeted paths, %zu "
              "elements differ", m, n, k, bad);
    }
    /* the same bits row by row, and in two column blocks */
    memcpy(c1, c0, m * ldc * sizeof(float));
    for (i = 0; i < m; i++)
        mm8(1, n, k, alpha, a + i * lda, lda, bt, b, ldb, beta, c1 + i * ldc, ldc,
                         w, ws);
    bad = 0;
    for (i = 0; i < m * ldc; i++) bad += memcmp(&c[i], &c1[i], 4) != 0;
    check(bad == 0, "int8 m=%zu n=%zu k=%zu: row by row, %zu elements differ", m, n, k, bad);
    if (n > 1) {
        const size_t h = n / 2, rb = ldb / 32 * (bt == ATTN_Q8_0 ? 34 : 18);
        memcpy(c1, c0, m * ldc * sizeof(float));
        mm8(m, h, k, alpha, a, lda, bt, b, ldb, beta, c1, ldc, w, ws);
        mm8(m, n - h, k, alpha, a, lda, bt, b + h * rb, ldb, beta, c1 + h, ldc, w,
                         ws);
        bad = 0;
        for (i = 0; i < m * ldc; i++) bad += memcmp(&c[i], &c1[i], 4) != 0;
        check(bad == 0, "int8 m=%zu n=%zu k=%zu: two column blocks, %zu elements differ", m, n,
              k, bad);
    }
    free(abuf), free(ad), free(bd), free(c), free(c0), free(c1), free(b), free(w);
}

static void test_products(void)
{
    static const size_t ms[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13};
    static const size_t ks[] = {32, 64, 96, 160};
    const attn_dtype bts[2] = {ATTN_Q8_0, ATTN_Q4_0};
    size_t t, mi, n, ki, x = 0;
    for (t = 0; t < 2; t++)
        for (mi = 0; mi < sizeof ms / sizeof *ms; mi++)
            for (n = 1; n <= 65; n++) {
                if (n > 35 && n != 47 && n != 64 && n != 65) continue;
                ki = (mi + n) % 4, x++;
                check_case(bts[t], ms[mi], n, ks[ki], x % 3 ? 1.0f : -0.75f,
                           x % 4 == 1 ? 0.5f : 0.0f);
            }
    check_case(ATTN_Q8_0, 5, 100, 4096, 1.0f, 0.0f);
    check_case(ATTN_Q4_0, 3, 100, 4096, 2.0f, 1.0f);
    check_case(ATTN_Q8_0, 1, 37, 4096, -1.0f, 0.5f);
}

static void test_refusals(void)
{
    enum { M = 3, N = 5, K = 64 };
    float a[M * K], c[M * N], c0[M * N];
    unsigned char b[N * 2 * 34];
    const size_t ws = attn_matmul_int8_workspace_size(M, N, K);
    void *w = xmalloc(ws);
    const float bads[3] = {NAN, INFINITY, 1e7f};
    size_t i;
    int s;
    for (i = 0; i < M * K; i++) a[i] = check_uniform(-1.0f, 1.0f);
    for (i = 0; i < N * K; i += K) attn_convert(ATTN_Q8_0, b + i / 32 * 34, ATTN_F32, a, K);
    for (i = 0; i < M * N; i++) c0[i] = (float)i;
#define REFUSE(want, call, what)                                                            \
    do {                                                                                    \
        attn_status st_;                                                                    \
        memcpy(c, c0, sizeof c);                                                            \
        st_ = (call);                                                                       \
        check(st_ == (want) && memcmp(c, c0, sizeof c) == 0, "int8 refusal %s: status %d", \
              what, (int)st_);                                                              \
    } while (0)
    for (s = 0; s < 3; s++) {
        a[M * K - 1] = bads[s];
        REFUSE(ATTN_ERR_ARG, attn_matmul_int8(M, N, K, 1, a, K, ATTN_Q8_0, b, K, 0, c, N, w, ws),
               "bad A value");
    }
    a[M * K - 1] = 0.5f;
    REFUSE(ATTN_ERR_SIZE, attn_matmul_int8(M, N, 33, 1, a, K, ATTN_Q8_0, b, K, 0, c, N, w, ws),
           "k = 33");
    REFUSE(ATTN_ERR_LD, attn_matmul_int8(M, N, K, 1, a, K, ATTN_Q8_0, b, 80, 0, c, N, w, ws),
           "ldb = 80");
    REFUSE(ATTN_ERR_LD, attn_matmul_int8(M, N, K, 1, a, K - 1, ATTN_Q8_0, b, K, 0, c, N, w, ws),
           "lda < k");
    REFUSE(ATTN_ERR_ARG, attn_matmul_int8(M, N, K, 1, a, K, ATTN_F16, b, K, 0, c, N, w, ws),
           "f16 B");
    REFUSE(ATTN_ERR_ARG, attn_matmul_int8(M, N, K, 1, a, K, (attn_dtype)9, b, K, 0, c, N, w, ws),
           "type 9");
    REFUSE(ATTN_ERR_NULL, attn_matmul_int8(M, N, K, 1, NULL, K, ATTN_Q8_0, b, K, 0, c, N, w, ws),
           "NULL A");
    REFUSE(ATTN_ERR_NULL, attn_matmul_int8(M, N, K, 1, a, K, ATTN_Q8_0, NULL, K, 0, c, N, w, ws),
           "NULL B");
    REFUSE(ATTN_ERR_NULL, attn_matmul_int8(M, N, K, 1, a, K, ATTN_Q8_0, b, K, 0, c, N, NULL, ws),
           "NULL workspace");
    REFUSE(ATTN_ERR_WORKSPACE,
           attn_matmul_int8(M, N, K, 1, a, K, ATTN_Q8_0, b, K, 0, c, N, w, ws - 1),
           "short workspace");
    REFUSE(ATTN_ERR_ALIAS,
           attn_matmul_int8(M, N, K, 1, a, K, ATTN_Q8_0, b, K, 0, c, N, a + 8, ws),
           "workspace over A");
    REFUSE(ATTN_ERR_ALIAS,
           attn_matmul_int8(M, N, K, 1, a, K, ATTN_Q8_0, b, K, 0, c, N, c, ws),
           "workspace over C");
    REFUSE(ATTN_OK, attn_matmul_int8(0, N, K, 1, a, K, ATTN_Q8_0, b, K, 0, c, N, w, ws), "m = 0");
    REFUSE(ATTN_OK, attn_matmul_int8(M, 0, K, 1, a, K, ATTN_Q8_0, b, K, 0, c, N, w, ws), "n = 0");
    check(attn_matmul_int8_workspace_size(0, N, K) == 0 &&
              attn_matmul_int8_workspace_size(M, N, 0) == 0 &&
              attn_matmul_int8_workspace_size(SIZE_MAX / 64, 1, SIZE_MAX / 2048 * 32) == SIZE_MAX,
          "int8 workspace sizes of empty and huge products");
    memcpy(c, c0, sizeof c);
    s = attn_matmul_int8(M, N, 0, 1, a, K, ATTN_Q8_0, b, K, 2.0f, c, N, NULL, 0);
    for (i = 0; i < M * N; i++)
        if (c[i] != 2.0f * c0[i]) s = -100;
    check(s == ATTN_OK, "int8 k = 0: C = beta C (%d)", s);
    free(w);
#undef REFUSE
}

int main(void)
{
    if (check_vnni_missing("test_int8")) return 77;
    check_begin("test_int8");
    check_seed(7);
    test_products();
#ifdef ATTN__HAVE_VI_RT
    if (attn__vi_rt_cpu()) {
        float x[64 * 64], c1[64 * 64], c2[64 * 64];
        unsigned char b[64 * 2 * 34];
        void *w = xmalloc(attn_matmul_int8_workspace_size(64, 64, 64));
        size_t i;
        printf("int8 instructions chosen at run time: run; the compiler-targeted ones too\n");
        for (i = 0; i < 64 * 64; i++) x[i] = check_uniform(-1.0f, 1.0f);
        for (i = 0; i < 64; i++) attn_convert(ATTN_Q8_0, b + i * 68, ATTN_F32, x + i * 64, 64);
        g_rt = 0;
        check_seed(7);
        test_products();
        mm8(64, 64, 64, 1, x, 64, ATTN_Q8_0, b, 64, 0, c1, 64, w,
            attn_matmul_int8_workspace_size(64, 64, 64));
        g_rt = 1;
        mm8(64, 64, 64, 1, x, 64, ATTN_Q8_0, b, 64, 0, c2, 64, w,
            attn_matmul_int8_workspace_size(64, 64, 64));
        check(memcmp(c1, c2, sizeof c1) == 0, "int8: run-time and compiler-targeted paths differ");
        free(w);
    } else {
        printf("int8 instructions chosen at run time: this CPU has none (not run)\n");
    }
#endif
    test_refusals();
    printf("%ld elements compared; largest error %.3g of the bound\n", n_elems, worst);
    return check_end("test_int8");
}
