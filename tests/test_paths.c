/* test_paths.c - softmax's paths against each other, bit for bit, through the test hook
 * attn__softmax_path: every path must give a row the same bits (the same operations in the
 * same order), whatever its length, the other rows, the layout or the alignment.
 *
 * Mode (argv[1]):
 *   (none)  paths: the short-row kernel (rows of up to ATTN__SM_SHORT vectors in registers,
 *           one range test per row, the long rows' path for rows outside its frame) against
 *           the long rows' path in cache;
 *   far     paths_far: the paths for calls far out of the caches (short rows streamed where
 *           y is aligned) against the long rows' path in cache;
 *   stream  paths_stream: the long rows' path far out of the caches (exps in a stack
 *           scratch, y by non-temporal stores from its first aligned entry; in place, normal
 *           stores) against the same in cache, also at long lengths up to ATTN__SM_SCRATCH + 1
 *           (tails of every kind, past the scratch).
 * Every row length 1..72, scales 1, 0.7, -0.5, 0 and 3, rows of 19, strides, an unaligned
 * x, in place, y unaligned with a stride that moves each row's alignment, and rows made to
 * take every branch: either frame, rows whose range fails the test, a NaN the max and min
 * trees can pass over, entries at the range test's margin (beside the rest or a lone max),
 * +-inf, all -inf, denormal and huge inputs. */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"

enum { ROWS = 19, NMAX = 4097, LD = NMAX + 3, KINDS = 15, NLONG = 23 };
static const size_t long_n[NLONG] = {95,   96,   97,   127,  128,  129,  200,  255,
                                     256,  257,  511,  512,  513,  520,  1000, 1024,
                                     1031, 2047, 2048, 2049, 4095, 4096, 4097};

/* a NaN with a sign and a payload, which a NaN the library makes up would not have */
static float odd_nan(void)
{
    const unsigned bits = 0xFFC01234u;
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static float row_value(int kind, size_t r, size_t i, size_t n)
{
    switch (kind) {
    case 0: return check_uniform(-4.0f, 4.0f);             /* max >= 0: unshifted */
    case 1: return check_uniform(-20.0f, -10.0f);          /* max < 0: shifted */
    case 2: return check_uniform(100.0f, 200.0f);          /* max past 80 - ln n: shifted */
    case 3:
        return r % 3 == 0 ? check_uniform(-30.0f, -1.0f)
                          : check_uniform(-2.0f, 6.0f); /* mixed batches */
    case 4:
        return i == n / 2 ? 0.0f : check_uniform(-120.0f, 0.0f); /* wide: fails the range test */
    case 5:
        return r == 5 ? check_uniform(-1.0f, 1.0f)
                      : check_uniform(-80.0f, 0.5f); /* near the threshold */
    case 6:
        return i == (r * 7) % n && r % 2 ? odd_nan()
                                         : check_uniform(-3.0f, 3.0f); /* a NaN somewhere */
    case 7:
        return i == (r * 5) % n && r % 3 == 1 ? (r % 2 ? INFINITY : -INFINITY)
                                              : check_uniform(-3.0f, 3.0f);
    case 8: return r % 4 == 2 ? -INFINITY : check_uniform(-3.0f, 3.0f); /* all -inf rows */
    case 9: return check_uniform(-1.0f, 1.0f) * 1e-39f;    /* denormal inputs */
    case 10: /* the middle batch of 8 fails the range test (row 11's -inf), the others pass:
              * the pending batch goes out before the general path, the next one after */
        return r == 11 && i == n / 2 ? -INFINITY : check_uniform(-3.0f, 3.0f);
    case 11: { /* inside the range test's margin: in each row one entry at c - 87 + f ln n,
                * f = 0.5 to 0.85 (c: the rows' max, 5 in the unshifted frame for rows 0-7 and
                * 16-18, -10 in the shifted one for rows 8-15), which fails the test; the
                * general path flushes the results under FLT_MIN */
        const float c = r % 16 < 8 ? 5.0f : -10.0f;
        return i == (r * 3) % n ? c - 87.0f + (0.5f + 0.05f * (float)(r % 8)) * logf((float)n)
                                : c - check_uniform(0.0f, 1.0f);
    }
    case 12: /* one shifted row (max < 0) in the first batch, none after: the short kernel's
              * guess (exps first, in the unshifted frame) fails, then holds again */
        return r == 2 ? check_uniform(-9.0f, -1.0f) : check_uniform(-3.0f, 3.0f);
    case 13: { /* one max, c = 25 (rows 0-7, 16-18: unshifted) or -10 (8-15), the rest 20
                * to 21 below it but one entry at c - 87.4 - 0.05 k, whose result is under
                * FLT_MIN (the sum is about e^c): the flush turns on both extremes, each at
                * every position of a step of four vectors across the rows (the streaming
                * path's guess takes them from trees of the four) */
        const float c = r % 16 < 8 ? 25.0f : -10.0f;
        if (i == (r * 13) % n) return c;
        if (i == (r * 13 + 17) % n) return c - 87.4f - 0.05f * (float)(r % 8);
        return c - 20.0f - check_uniform(0.0f, 1.0f);
    }
    default: return check_uniform(-1.0f, 1.0f) * 3e38f;   /* huge inputs */
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    const int far = strcmp(mode, "far") == 0, stream = strcmp(mode, "stream") == 0;
    const char *name = far ? "paths_far" : stream ? "paths_stream" : "paths";
    /* path 1 under test, path 2 the long rows' path in cache */
    const int p1 = far ? ATTN__SM_FAR_PATH : stream ? ATTN__SM_FAR_PATH | ATTN__SM_LONG_PATH : 0;
    const int p2 = ATTN__SM_LONG_PATH;
    const size_t nlong = stream ? NLONG : 0;
    static const float scales[5] = {1.0f, 0.7f, -0.5f, 0.0f, 3.0f};
    static float xbuf[ROWS * LD + 8], yabuf[ROWS * (LD + 5) + 32], ybbuf[ROWS * (LD + 5) + 32];
    /* 32-byte aligned, and room for an offset of 5 and a guard vector after the last row */
    float *const ya = yabuf + (8 - (uintptr_t)yabuf / sizeof(float) % 8) % 8;
    float *const yb = ybbuf + (8 - (uintptr_t)ybbuf / sizeof(float) % 8) % 8;
    size_t n, r, i, t, li;
    int kind;
    long calls = 0;
    check_begin(name);
    check_seed(20261123);
    for (kind = 0; kind < KINDS; kind++)
        for (li = 0; li < 72 + nlong; li++)
            for (t = 0; t < 5; t++) {
                const float s = scales[t];
                /* layouts: x unaligned with a stride, y aligned with ldy a multiple of 8
                 * (streams when far), packed rows, in place, and y unaligned with a stride
                 * that moves each row's alignment */
                int layout;
                n = li < 72 ? li + 1 : long_n[li - 72];
                for (r = 0; r < ROWS; r++)
                    for (i = 0; i < n; i++) xbuf[1 + r * LD + i] = row_value(kind, r, i, n);
                for (layout = 0; layout < 4; layout++) {
                    const float *x = xbuf + 1;
                    size_t ldx = LD, ldy = layout == 0 ? (n + 7) / 8 * 8 : layout == 3 ? n + 5 : n;
                    float *y1 = layout == 3 ? ya + 5 : ya, *y2 = layout == 3 ? yb + 5 : yb;
                    int st1, st2;
                    /* the part a call of this n can reach: y's offset, rows of at most
                     * n + 7 floats and the guard vector */
                    const size_t used = (ROWS * (n + 8) + 32) * sizeof(float);
                    memset(yabuf, 0xA5, used < sizeof yabuf ? used : sizeof yabuf);
                    memset(ybbuf, 0xA5, used < sizeof ybbuf ? used : sizeof ybbuf);
                    if (layout == 2) { /* in place: each path on its own copy */
                        for (r = 0; r < ROWS; r++) {
                            memcpy(ya + 3 + r * n, x + r * LD, n * sizeof(float));
                            memcpy(yb + 3 + r * n, x + r * LD, n * sizeof(float));
                        }
                        y1 = ya + 3;
                        y2 = yb + 3;
                        ldx = n;
                        st1 = (int)attn__softmax_path(y1, n, y1, n, ROWS, n, s, p1);
                        st2 = (int)attn__softmax_path(y2, n, y2, n, ROWS, n, s, p2);
                    } else {
                        st1 = (int)attn__softmax_path(x, ldx, y1, ldy, ROWS, n, s, p1);
                        st2 = (int)attn__softmax_path(x, ldx, y2, ldy, ROWS, n, s, p2);
                    }
                    calls++;
                    check(st1 == 0 && st2 == 0, "kind %d n %zu scale %g layout %d: status %d / %d",
                          kind, n, s, layout, st1, st2);
                    for (r = 0; r < ROWS; r++)
                        check(memcmp(y1 + r * ldy, y2 + r * ldy, n * sizeof(float)) == 0,
                              "kind %d n %zu scale %g layout %d row %zu: the two paths' bits "
                              "differ (first %.9g vs %.9g)",
                              kind, n, s, layout, r, y1[r * ldy], y2[r * ldy]);
                    /* nothing written between the rows or past the last */
                    if (layout == 0 || layout == 3)
                        for (r = 0; r < ROWS; r++)
                            for (i = n; i < (r + 1 < ROWS ? ldy : ldy + 8); i++) {
                                unsigned u;
                                memcpy(&u, y1 + r * ldy + i, sizeof u);
                                check(u == 0xA5A5A5A5u,
                                      "kind %d n %zu row %zu: wrote y[%zu] past the row", kind, n,
                                      r, i);
                            }
                }
            }
    printf("%ld calls, each on both paths\n", calls);
    return check_end(name);
}
