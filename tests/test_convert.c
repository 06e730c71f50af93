/* test_convert.c - the storage types and attn_convert against references written here
 * from the formats' definitions (double arithmetic, ldexp, rint), bit for bit:
 *   f16 -> f32 and bf16 -> f32    all 65,536 bit patterns (an f16 signaling NaN quieted)
 *   f32 -> f16 and f32 -> bf16    a dense sweep: every exponent of both signs, for every
 *                                 rounding position the values at, next to and between
 *                                 the ties, random fractions, both subnormal boundaries,
 *                                 the overflow boundary, inf, NaNs with payloads, -0
 *   f16 <-> bf16                  all 65,536 patterns, rounded once through f32
 * each as one long array (the vector path) and element by element (the tails), the same
 * again under attn_denormals_flush_begin; the element conversions of simd/generic.h (the
 * scalar path's and an ISA's fallback) on the same inputs; every pair of types for lengths
 * 0..33 and odd sizes at unaligned offsets, in place, with guard elements after the end;
 * every error path (dst untouched). */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"

#include <float.h>
#include <stdint.h>

static float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t u_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

/* ---- references --------------------------------------------------------------------- */

/* f16 bits to float bits: (-1)^s 2^(e-15) (1 + m/1024), subnormals 2^-14 (m/1024);
 * a NaN keeps its payload shifted up 13 bits with the quiet bit set */
static uint32_t ref_f16_to_f32(uint16_t h)
{
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31 && m != 0)
        return (uint32_t)s << 31 | 0x7F800000u | 0x400000u | (uint32_t)m << 13;
    if (e == 31) v = INFINITY;
    else if (e == 0) v = ldexp((double)m, -24);
    else v = ldexp(1024.0 + m, e - 25);
    return u_of((float)(s ? -v : v));
}

/* bf16 bits to float bits: (-1)^s 2^(e-127) (1 + m/128), subnormals 2^-126 (m/128); a NaN
 * shifted unchanged */
static uint32_t ref_bf16_to_f32(uint16_t h)
{
    const int s = h >> 15, e = (h >> 7) & 255, m = h & 127;
    double v;
    if (e == 255 && m != 0) return (uint32_t)h << 16;
    if (e == 255) v = INFINITY;
    else if (e == 0) v = ldexp((double)m, -133);
    else v = ldexp(128.0 + m, e - 134);
    return u_of((float)(s ? -v : v));
}

/* |x| rounded to nearest even on the grid of a format with `bits` significant bits and
 * least normal exponent emin (its subnormal quantum 2^(emin - bits + 1)) */
static double ref_round(double ax, int bits, int emin)
{
    int e;
    double q;
    frexp(ax, &e); /* ax = f 2^e, f in [0.5, 1) */
    if (e - 1 < emin) e = emin + 1;
    q = ldexp(1.0, e - bits); /* the quantum of ax's binade */
    return rint(ax / q) * q;  /* ax / q exact; rint: to nearest even by default */
}

static uint16_t ref_f32_to_f16(uint32_t x)
{
    const uint16_t s = (uint16_t)(x >> 16 & 0x8000u);
    const float f = f_of(x & 0x7FFFFFFFu);
    double r;
    int e;
    if (isnan(f)) return (uint16_t)(s | 0x7E00u | (x >> 13 & 0x3FFu));
    r = isinf(f) ? INFINITY : ref_round(f, 11, -14);
    if (r >= 65536.0) return (uint16_t)(s | 0x7C00u);
    if (r < ldexp(1.0, -14)) return (uint16_t)(s | (uint16_t)ldexp(r, 24));
    frexp(r, &e); /* r = f 2^e: biased exponent e - 1 + 15, fraction r 2^(11-e) - 1024 */
    return (uint16_t)(s | (e + 14) << 10 | ((uint16_t)ldexp(r, 11 - e) - 1024));
}

static uint16_t ref_f32_to_bf16(uint32_t x)
{
    const uint16_t s = (uint16_t)(x >> 16 & 0x8000u);
    const float f = f_of(x & 0x7FFFFFFFu);
    double r;
    if (isnan(f)) return (uint16_t)(x >> 16 | 0x40u);
    r = isinf(f) ? INFINITY : ref_round(f, 8, -126);
    if (r >= ldexp(1.0, 128)) return (uint16_t)(s | 0x7F80u);
    return (uint16_t)(s | u_of((float)r) >> 16); /* r has 8 significant bits: exact */
}

/* ---- the sweep of floats ------------------------------------------------------------ */

static uint32_t *sweep;
static size_t n_sweep, cap_sweep;

static void add(uint32_t x)
{
    if (n_sweep == cap_sweep) {
        cap_sweep = cap_sweep ? 2 * cap_sweep : 4096;
        sweep = (uint32_t *)realloc(sweep, cap_sweep * sizeof *sweep);
        if (!sweep) exit(2);
    }
    sweep[n_sweep++] = x;
}

static void build_sweep(void)
{
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, /* +-0, +-inf */
        0x7F800001u, 0xFF800001u, 0x7FC00000u, 0xFFC00000u, /* NaNs: signaling, quiet */
        0x7FA00000u, 0x7F802000u, 0x7F801FFFu, 0x7F800100u, /* payloads high, low only */
        0x7FBFFFFFu, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FC00001u, 0x7F80FFFFu, 0x7F810000u,
        0x7F7FFFFFu, 0xFF7FFFFFu, 0x00000001u, 0x80000001u, /* FLT_MAX, least subnormal */
        0x00800000u, 0x007FFFFFu, 0x00400000u, 0x00008000u, 0x00018000u, 0x00017FFFu,
        0x477FE000u, 0x477FEFFFu, 0x477FF000u, 0x477FF001u, 0x47800000u, /* 65504, 65520 */
        0x38800000u, 0x387FFFFFu, 0x387FE000u, 0x387FF000u, 0x387FEFFFu, /* 2^-14 - ... */
        0x33800000u, 0x33000000u, 0x33000001u, 0x32FFFFFFu, 0x33C00000u, /* 2^-24, 2^-25 */
        0x7F7F8000u, 0x7F7F7FFFu, 0x7F7E8000u, 0x3F808000u, 0x3F818000u, 0x3F80FFFFu,
    };
    size_t i;
    int sign, e, s, o, b, k;
    for (i = 0; i < sizeof special / sizeof special[0]; i++) add(special[i]);
    check_seed(20260519);
    for (sign = 0; sign < 2; sign++)
        for (e = 0; e < 256; e++) {
            const uint32_t top = (uint32_t)sign << 31 | (uint32_t)e << 23;
            /* for each rounding position s (the bits dropped), fractions at multiples of
             * 2^s (b = 0..3 and the largest) plus -1, 0, +1 and the tie 2^(s-1) -1, 0, +1 */
            for (s = 1; s <= 23; s++)
                for (b = 0; b < 5; b++) {
                    const uint32_t unit = 1u << s;
                    const uint32_t base = b < 4 ? (uint32_t)b * unit : 0x800000u - unit;
                    for (o = -1; o <= 1; o++) {
                        add(top | ((base + (uint32_t)o) & 0x7FFFFFu));
                        add(top | ((base + (unit >> 1) + (uint32_t)o) & 0x7FFFFFu));
                    }
                }
            for (k = 0; k < 64; k++)
                add(top | ((uint32_t)(check_uniform(0.0f, 1.0f) * 8388608.0f) & 0x7FFFFFu));
        }
}

/* ---- conversions of whole arrays and of each element --------------------------------- */

static uint16_t all16[65536];

static void init_all16(void)
{
    size_t i;
    for (i = 0; i < 65536; i++) all16[i] = (uint16_t)i;
}

/* Under flush-to-zero (flush != 0) only attn_convert runs inside begin / end: the
 * references' double arithmetic would be flushed too. */
static attn_fp_state fp;
static void flush_on(int flush)
{
    if (flush) check(attn_denormals_flush_begin(&fp) == ATTN_OK, "flush begin");
}
static void flush_off(int flush)
{
    if (flush) check(attn_denormals_flush_end(&fp) == ATTN_OK, "flush end");
}

/* The 65,536 patterns of a 16-bit type to f32, at once and one by one. */
static void check_16_to_32(attn_dtype t, const char *what, int flush)
{
    static float out[65536], one[65536];
    size_t i;
    long bad = 0;
    attn_status st;
    flush_on(flush);
    st = attn_convert(ATTN_F32, out, t, all16, 65536);
    for (i = 0; i < 65536; i++) attn_convert(ATTN_F32, &one[i], t, &all16[i], 1);
    flush_off(flush);
    check(st == ATTN_OK, "%s: status %d", what, (int)st);
    for (i = 0; i < 65536; i++) {
        const uint32_t want = t == ATTN_F16 ? ref_f16_to_f32(all16[i]) : ref_bf16_to_f32(all16[i]);
        bad += !check(u_of(out[i]) == want && u_of(one[i]) == want, "%s %04zx: %08x (alone "
                      "%08x), want %08x", what, i, (unsigned)u_of(out[i]), (unsigned)u_of(one[i]),
                      (unsigned)want);
    }
    printf("%s: 65536 patterns, %ld wrong\n", what, bad);
}

/* The sweep to a 16-bit type, at once and one by one. */
static void check_32_to_16(attn_dtype t, const char *what, int flush)
{
    uint16_t *out = (uint16_t *)malloc(n_sweep * sizeof *out);
    uint16_t *one = (uint16_t *)malloc(n_sweep * sizeof *one);
    size_t i;
    long bad = 0;
    attn_status st;
    if (!out || !one) exit(2);
    flush_on(flush);
    st = attn_convert(t, out, ATTN_F32, sweep, n_sweep);
    for (i = 0; i < n_sweep; i++) attn_convert(t, &one[i], ATTN_F32, &sweep[i], 1);
    flush_off(flush);
    check(st == ATTN_OK, "%s: status %d", what, (int)st);
    for (i = 0; i < n_sweep; i++) {
        const uint16_t want = t == ATTN_F16 ? ref_f32_to_f16(sweep[i]) : ref_f32_to_bf16(sweep[i]);
        bad += !check(out[i] == want && one[i] == want, "%s %08x (%a): %04x (alone %04x), "
                      "want %04x", what, (unsigned)sweep[i], (double)f_of(sweep[i]),
                      (unsigned)out[i], (unsigned)one[i], (unsigned)want);
    }
    printf("%s: %zu floats, %ld wrong\n", what, n_sweep, bad);
    free(out);
    free(one);
}

/* All 65,536 patterns from one 16-bit type to the other, and in place. */
static void check_16_to_16(attn_dtype from, attn_dtype to, const char *what, int flush)
{
    static uint16_t out[65536], inplace[65536];
    size_t i;
    long bad = 0;
    attn_status st, st2;
    memcpy(inplace, all16, sizeof inplace);
    flush_on(flush);
    st = attn_convert(to, out, from, all16, 65536);
    st2 = attn_convert(to, inplace, from, inplace, 65536);
    flush_off(flush);
    check(st == ATTN_OK && st2 == ATTN_OK, "%s: status %d, in place %d", what, (int)st, (int)st2);
    for (i = 0; i < 65536; i++) {
        const uint32_t f = from == ATTN_F16 ? ref_f16_to_f32(all16[i]) : ref_bf16_to_f32(all16[i]);
        const uint16_t want = to == ATTN_F16 ? ref_f32_to_f16(f) : ref_f32_to_bf16(f);
        bad += !check(out[i] == want && inplace[i] == want, "%s %04zx: %04x (in place %04x), "
                      "want %04x", what, i, (unsigned)out[i], (unsigned)inplace[i], (unsigned)want);
    }
    printf("%s: 65536 patterns, %ld wrong\n", what, bad);
}

/* simd/generic.h's element conversions (the scalar path's; AVX2's f16 without F16C). */
static void check_elements(void)
{
    size_t i;
    long bad = 0;
    for (i = 0; i < 65536; i++) {
        const uint16_t h = (uint16_t)i;
        bad += !check(u_of(attn__f16_to_f32(h)) == ref_f16_to_f32(h), "attn__f16_to_f32 %04x",
                      (unsigned)h);
        bad += !check(u_of(attn__bf16_to_f32(h)) == ref_bf16_to_f32(h),
                      "attn__bf16_to_f32 %04x", (unsigned)h);
    }
    for (i = 0; i < n_sweep; i++) {
        const float f = f_of(sweep[i]);
        bad += !check(attn__f32_to_f16(f) == ref_f32_to_f16(sweep[i]), "attn__f32_to_f16 %08x",
                      (unsigned)sweep[i]);
        bad += !check(attn__f32_to_bf16(f) == ref_f32_to_bf16(sweep[i]),
                      "attn__f32_to_bf16 %08x", (unsigned)sweep[i]);
    }
    printf("element conversions: %ld wrong\n", bad);
}

static void check_all(int flush)
{
    printf("-- %s\n", !flush ? "default floating-point environment"
                     : attn_denormals_flush_supported() ? "flush-to-zero on"
                                                       : "flush-to-zero (none on this target)");
    check_16_to_32(ATTN_F16, "f16 -> f32", flush);
    check_16_to_32(ATTN_BF16, "bf16 -> f32", flush);
    check_32_to_16(ATTN_F16, "f32 -> f16", flush);
    check_32_to_16(ATTN_BF16, "f32 -> bf16", flush);
    check_16_to_16(ATTN_F16, ATTN_BF16, "f16 -> bf16", flush);
    check_16_to_16(ATTN_BF16, ATTN_F16, "bf16 -> f16", flush);
}

/* ---- lengths, offsets, guards, in place ---------------------------------------------- */

static const attn_dtype TYPES[3] = {ATTN_F32, ATTN_F16, ATTN_BF16};
static const char *const NAMES[3] = {"f32", "f16", "bf16"};

/* element i of the source pattern (type t): a mix of ordinary, tie, subnormal, huge and
 * special values */
static void put_src(attn_dtype t, void *p, size_t i)
{
    const uint32_t x = sweep[(i * 7919u) % n_sweep];
    if (t == ATTN_F32) memcpy((float *)p + i, &x, 4);
    else ((uint16_t *)p)[i] = (uint16_t)(t == ATTN_F16 ? (x ^ x >> 16) : x >> 16);
}

/* element i of src (type st) converted to dt, as the reference gives it (bits) */
static uint32_t want_elem(attn_dtype dt, attn_dtype st, const void *src, size_t i)
{
    uint32_t f;
    if (st == ATTN_F32) memcpy(&f, (const float *)src + i, 4);
    else {
        const uint16_t h = ((const uint16_t *)src)[i];
        if (st == dt) return h;
        f = st == ATTN_F16 ? ref_f16_to_f32(h) : ref_bf16_to_f32(h);
    }
    if (dt == ATTN_F32) return f;
    return dt == ATTN_F16 ? ref_f32_to_f16(f) : ref_f32_to_bf16(f);
}

static uint32_t get_elem(attn_dtype t, const void *p, size_t i)
{
    uint32_t x;
    if (t == ATTN_F32) memcpy(&x, (const float *)p + i, 4);
    else x = ((const uint16_t *)p)[i];
    return x;
}

#define GUARD 9
#define MAXN 1024

static void check_lengths(void)
{
    static const size_t extra[] = {63, 65, 127, 257, 1001};
    static const size_t offs[] = {0, 1, 3};
    static float sbuf[MAXN + GUARD + 4], dbuf[MAXN + GUARD + 4], keep[MAXN + GUARD + 4];
    size_t di, si, li, oi, i, n;
    for (di = 0; di < 3; di++)
        for (si = 0; si < 3; si++)
            for (li = 0; li < 34 + sizeof extra / sizeof extra[0]; li++)
                for (oi = 0; oi < 3; oi++) {
                    const attn_dtype dt = TYPES[di], st = TYPES[si];
                    const size_t off = offs[oi], ds = attn_dtype_size(dt);
                    unsigned char *d0 = (unsigned char *)dbuf, *s0 = (unsigned char *)sbuf;
                    void *d = d0 + off * ds, *s = s0 + offs[2 - oi] * attn_dtype_size(st);
                    attn_status r;
                    int ok = 1, same;
                    n = li < 34 ? li : extra[li - 34];
                    for (i = 0; i < n + GUARD; i++) put_src(st, s, i);
                    memset(dbuf, 0xA5, sizeof dbuf);
                    memcpy(keep, dbuf, sizeof keep);
                    r = attn_convert(dt, d, st, s, n);
                    for (i = 0; i < n; i++) ok &= get_elem(dt, d, i) == want_elem(dt, st, s, i);
                    /* the bytes before d and from element n on are untouched */
                    same = memcmp(d0, keep, off * ds) == 0 &&
                           memcmp(d0 + (off + n) * ds, (unsigned char *)keep + (off + n) * ds,
                                  sizeof dbuf - (off + n) * ds) == 0;
                    check(r == ATTN_OK && ok && same, "%s <- %s, n %zu, offset %zu: status %d, "
                          "values %s, guards %s", NAMES[di], NAMES[si], n, off, (int)r,
                          ok ? "ok" : "wrong", same ? "kept" : "written");
                    /* in place, types of one size */
                    if (ds == attn_dtype_size(st)) {
                        for (i = 0; i < n + GUARD; i++) put_src(st, d, i);
                        memcpy(keep, dbuf, sizeof keep);
                        r = attn_convert(dt, d, st, d, n);
                        for (i = 0, ok = 1; i < n; i++)
                            ok &= get_elem(dt, d, i) == want_elem(dt, st, (unsigned char *)keep +
                                                                  off * ds, i);
                        same = memcmp(d0 + (off + n) * ds, (unsigned char *)keep + (off + n) * ds,
                                      sizeof dbuf - (off + n) * ds) == 0;
                        check(r == ATTN_OK && ok && same, "%s <- %s in place, n %zu, offset %zu:"
                              " status %d", NAMES[di], NAMES[si], n, off, (int)r);
                    }
                }
}

/* ---- errors: status, and dst untouched ----------------------------------------------- */

static void check_errors(void)
{
    static float src[64], dst[64], keep[64];
    unsigned char *s = (unsigned char *)src;
    size_t i;
    struct {
        attn_dtype dt;
        void *d;
        attn_dtype st;
        const void *s;
        size_t n;
        attn_status want;
        const char *what;
    } cases[] = {
        {ATTN_F16, NULL, ATTN_F32, src, 4, ATTN_ERR_NULL, "dst NULL"},
        {ATTN_F16, dst, ATTN_F32, NULL, 4, ATTN_ERR_NULL, "src NULL"},
        {ATTN_F16, dst, ATTN_F32, NULL, 0, ATTN_OK, "src NULL, n 0 (nothing read)"},
        {ATTN_F16, NULL, ATTN_F32, NULL, 0, ATTN_OK, "both NULL, n 0"},
        {(attn_dtype)7, dst, ATTN_F32, src, 4, ATTN_ERR_ARG, "dst type 7"},
        {ATTN_F16, dst, (attn_dtype)-1, src, 4, ATTN_ERR_ARG, "src type -1"},
        {(attn_dtype)7, dst, (attn_dtype)7, src, 0, ATTN_ERR_ARG, "types 7, n 0"},
        {ATTN_F16, dst, ATTN_F32, src, SIZE_MAX, ATTN_ERR_OVERFLOW, "n SIZE_MAX"},
        {ATTN_F16, dst, ATTN_BF16, src, (size_t)PTRDIFF_MAX / 2 + 1, ATTN_ERR_OVERFLOW,
         "16-bit n PTRDIFF_MAX / 2 + 1"},
        {ATTN_F32, dst, ATTN_F16, src, (size_t)PTRDIFF_MAX / 4 + 1, ATTN_ERR_OVERFLOW,
         "f32 n PTRDIFF_MAX / 4 + 1"},
        {ATTN_F32, dst, ATTN_F32, src, 0, ATTN_OK, "n 0"},
        {ATTN_F16, dst, ATTN_BF16, src, 0, ATTN_OK, "16-bit n 0"},
    };
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        attn_status r;
        memset(dst, 0x5A, sizeof dst);
        memcpy(keep, dst, sizeof dst);
        r = attn_convert(cases[i].dt, cases[i].d, cases[i].st, cases[i].s, cases[i].n);
        check(r == cases[i].want && memcmp(dst, keep, sizeof dst) == 0,
              "error %s: status %d, want %d; dst %s", cases[i].what, (int)r, (int)cases[i].want,
              memcmp(dst, keep, sizeof dst) == 0 ? "untouched" : "written");
    }
    /* overlap: every partial overlap, and exact overlap of different sizes, is ATTN_ERR_ALIAS
     * with the buffer untouched; dst == src with one size is in place */
    {
        static const struct { int dt, st; long doff, soff; size_t n; attn_status want; } ov[] = {
            {0, 0, 2, 0, 8, ATTN_ERR_ALIAS},  {0, 0, 0, 2, 8, ATTN_ERR_ALIAS},
            {1, 1, 2, 0, 8, ATTN_ERR_ALIAS},  {1, 2, 0, 2, 9, ATTN_ERR_ALIAS},
            {0, 1, 0, 0, 4, ATTN_ERR_ALIAS},  {1, 0, 0, 0, 4, ATTN_ERR_ALIAS},
            {0, 2, 4, 0, 8, ATTN_ERR_ALIAS},  {2, 0, 0, 6, 8, ATTN_ERR_ALIAS},
            {0, 1, 2, 0, 8, ATTN_ERR_ALIAS},  {1, 0, 1, 0, 1, ATTN_ERR_ALIAS},
            {1, 1, 7, 0, 8, ATTN_ERR_ALIAS},  {1, 0, 0, 4, 8, ATTN_ERR_ALIAS},
            {0, 0, 32, 0, 8, ATTN_OK},      {0, 0, 0, 32, 8, ATTN_OK},
            {1, 1, 16, 0, 8, ATTN_OK},      {0, 1, 16, 0, 8, ATTN_OK},
            {1, 1, 8, 0, 8, ATTN_OK},       {1, 0, 0, 32, 8, ATTN_OK},
            {2, 1, 0, 0, 9, ATTN_OK},       {1, 1, 0, 0, 9, ATTN_OK},
            {0, 0, 0, 0, 9, ATTN_OK},
        };
        for (i = 0; i < sizeof ov / sizeof ov[0]; i++) {
            const attn_dtype dt = TYPES[ov[i].dt], st = TYPES[ov[i].st];
            attn_status r;
            size_t k;
            for (k = 0; k < 64; k++) src[k] = 0.25f * (float)k + 1.0f;
            memcpy(keep, src, sizeof src);
            r = attn_convert(dt, s + ov[i].doff * 2, st, s + ov[i].soff * 2, ov[i].n);
            check(r == ov[i].want && (r == ATTN_OK || memcmp(src, keep, sizeof src) == 0),
                  "overlap %s at +%ld bytes <- %s at +%ld bytes, n %zu: status %d, want %d",
                  NAMES[ov[i].dt], 2 * ov[i].doff, NAMES[ov[i].st], 2 * ov[i].soff, ov[i].n,
                  (int)r, (int)ov[i].want);
        }
    }
    check(attn_dtype_size(ATTN_F32) == 4 && attn_dtype_size(ATTN_F16) == 2 &&
              attn_dtype_size(ATTN_BF16) == 2 && attn_dtype_size((attn_dtype)7) == 0 &&
              attn_dtype_size((attn_dtype)-1) == 0, "attn_dtype_size");
}

int main(void)
{
    check_begin("convert");
#ifdef ATTN__HAVE_VF16
    printf("convert: f16 by the ISA's vector conversion\n");
#else
    printf("convert: f16 by the exact element code (no vector conversion on this path)\n");
#endif
    init_all16();
    build_sweep();
    check_elements();
    check_all(0);
    check_all(1);
    check_lengths();
    check_errors();
    free(sweep);
    return check_end("convert");
}
