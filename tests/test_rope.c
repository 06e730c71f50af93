/* test_rope.c - attn_rope against a double-precision reference: both pairings, partial
 * rotary (r < head_dim, elements past r untouched), head sizes on every side of the vector
 * width and of the 128-pair chunk, several heads per row, positions from an offset or an
 * array (up to 2^31 + 7), theta, linear scaling and a caller's frequency table, strides
 * with guard values that must stay untouched, unaligned rows, and every error path (x
 * untouched). Bound: |y - y_ref| <= 2.5e-7 (|a| + |b|) + 1e-30 per element, (a, b) its
 * pair: the angle, cosine and sine are computed in double and rounded once.
 * With a path (argv[1]: tests/torch/rope.txt, written by tests/torch/gen_rope.py), also
 * against PyTorch's Hugging Face (halves) and GPT-J (adjacent) code, with the model's
 * float32 frequency table and again with theta alone: |y - y_torch| <= (|a| + |b|)
 * (1e-6 + 3 pos 2^-24), PyTorch's float32 angles being off by up to pos 2^-24. */
#include "attn.h"
#include "check.h"

#include <math.h>
#include <string.h>

#define GUARD 1234.5f

static double max_ratio; /* the largest |y - y_ref| / (|a| + |b|) */

/* the reference rotation of one row of heads, in double, from the original values */
static void ref_rope(const attn_rope_params *p, const float *x0, double *y, size_t heads,
                     size_t pos)
{
    const size_t d = p->head_dim, r = p->rot_dim ? p->rot_dim : d, half = r / 2;
    const double theta = p->theta > 0 ? p->theta : 10000.0,
                 sc = p->pos_scale > 0 ? p->pos_scale : 1.0;
    size_t h, k, i;
    for (h = 0; h < heads; h++) {
        const float *a = x0 + h * d;
        double *o = y + h * d;
        for (i = 0; i < d; i++) o[i] = a[i];
        for (k = 0; k < half; k++) {
            const double f =
                p->inv_freq ? (double)p->inv_freq[k] : pow(theta, -2.0 * (double)k / (double)r);
            const double ang = (double)pos * sc * f, c = cos(ang), s = sin(ang);
            const size_t i0 = p->pairing == ATTN_ROPE_ADJACENT ? 2 * k : k;
            const size_t i1 = p->pairing == ATTN_ROPE_ADJACENT ? 2 * k + 1 : k + half;
            o[i0] = a[i0] * c - a[i1] * s;
            o[i1] = a[i0] * s + a[i1] * c;
        }
    }
}

/* the pair partner of element i of a head (i itself past r) */
static size_t partner(const attn_rope_params *p, size_t i)
{
    const size_t r = p->rot_dim ? p->rot_dim : p->head_dim;
    if (i >= r) return i;
    if (p->pairing == ATTN_ROPE_ADJACENT) return i ^ 1u;
    return i < r / 2 ? i + r / 2 : i - r / 2;
}

static void run(const attn_rope_params *p, size_t tokens, size_t heads, size_t pad, size_t off,
                size_t pos0, const size_t *positions)
{
    static float buf[8 * 4 * 300 + 64], orig[8 * 4 * 300 + 64];
    static double ref[4 * 300];
    const size_t d = p->head_dim, w = heads * d, ld = w + pad, n = tokens * ld + 8;
    float *x = buf + off, *x0 = orig + off;
    size_t t, i;
    attn_status st;
    for (i = 0; i < n; i++) x[i] = check_uniform(-3.0f, 3.0f);
    for (t = 0; t < tokens; t++)
        for (i = w; i < ld; i++) x[t * ld + i] = GUARD;
    for (i = tokens * ld - pad; i < n; i++) x[i] = GUARD;
    memcpy(x0, x, n * sizeof(float));
    st = attn_rope(p, x, ld, tokens, heads, pos0, positions);
    check(st == ATTN_OK, "attn_rope: status %d (d %zu r %zu heads %zu)", (int)st, d, p->rot_dim,
          heads);
    for (t = 0; t < tokens; t++) {
        const size_t pos = positions ? positions[t] : pos0 + t;
        ref_rope(p, x0 + t * ld, ref, heads, pos);
        for (i = 0; i < w; i++) {
            const size_t h = i / d, j = i % d;
            const double mag =
                fabs((double)x0[t * ld + i]) + fabs((double)x0[t * ld + h * d + partner(p, j)]);
            const double err = fabs((double)x[t * ld + i] - ref[i]);
            if (mag > 0 && err / mag > max_ratio) max_ratio = err / mag;
            check(err <= 2.5e-7 * mag + 1e-30,
                  "pairing %d d %zu r %zu heads %zu pos %zu elem %zu: %.9g vs %.9g",
                  (int)p->pairing, d, p->rot_dim, heads, pos, i, x[t * ld + i], ref[i]);
            if (j >= (p->rot_dim ? p->rot_dim : d))
                check(x[t * ld + i] == x0[t * ld + i], "element past r changed");
        }
        for (i = w; i < ld; i++) check(x[t * ld + i] == GUARD, "guard between rows written");
    }
    for (i = tokens * ld - pad; i < n; i++)
        check(x[i] == GUARD, "guard after the last row written");
}

static void test_errors(void)
{
    float x[64], x0[64];
    attn_rope_params p;
    size_t i;
    memset(&p, 0, sizeof p);
    p.head_dim = 8;
    for (i = 0; i < 64; i++) x[i] = x0[i] = (float)i;
#define ROPE_ERR(expr, want)                                                                \
    do {                                                                                    \
        check((expr) == (want), "%s: want %d", #expr, (int)(want));                       \
        check(memcmp(x, x0, sizeof x) == 0, "%s wrote x", #expr);                          \
    } while (0)
    ROPE_ERR(attn_rope(NULL, x, 8, 2, 1, 0, NULL), ATTN_ERR_NULL);
    ROPE_ERR(attn_rope(&p, NULL, 8, 2, 1, 0, NULL), ATTN_ERR_NULL);
    ROPE_ERR(attn_rope(&p, x, 8, 0, 1, 0, NULL), ATTN_OK); /* no tokens: nothing */
    ROPE_ERR(attn_rope(&p, NULL, 8, 0, 1, 0, NULL), ATTN_OK);
    ROPE_ERR(attn_rope(&p, NULL, 8, 0, 0, 0, NULL), ATTN_ERR_SIZE);
    {
        attn_rope_params pf = p;
        pf.inv_freq = x + 1; /* the frequencies inside x */
        ROPE_ERR(attn_rope(&pf, x, 8, 2, 1, 0, NULL), ATTN_ERR_ALIAS);
        ROPE_ERR(attn_rope(&p, x, 8, 2, 1, 0, (const size_t *)(const void *)(x + 4)),
                 ATTN_ERR_ALIAS);
    }
    ROPE_ERR(attn_rope(&p, x, 8, 2, 0, 0, NULL), ATTN_ERR_SIZE);
    ROPE_ERR(attn_rope(&p, x, 7, 2, 1, 0, NULL), ATTN_ERR_LD);
    ROPE_ERR(attn_rope(&p, x, 8, 2, 2, 0, NULL), ATTN_ERR_LD);
    p.rot_dim = 5;
    ROPE_ERR(attn_rope(&p, x, 8, 2, 1, 0, NULL), ATTN_ERR_SIZE);
    p.rot_dim = 10;
    ROPE_ERR(attn_rope(&p, x, 8, 2, 1, 0, NULL), ATTN_ERR_SIZE);
    p.rot_dim = 0;
    p.head_dim = 0;
    ROPE_ERR(attn_rope(&p, x, 8, 2, 1, 0, NULL), ATTN_ERR_SIZE);
    p.head_dim = 8;
    p.theta = -1.0f;
    ROPE_ERR(attn_rope(&p, x, 8, 2, 1, 0, NULL), ATTN_ERR_ARG);
    p.theta = NAN;
    ROPE_ERR(attn_rope(&p, x, 8, 2, 1, 0, NULL), ATTN_ERR_ARG);
    p.theta = 0.0f;
    p.pos_scale = INFINITY;
    ROPE_ERR(attn_rope(&p, x, 8, 2, 1, 0, NULL), ATTN_ERR_ARG);
    p.pos_scale = 0.0f;
    p.pairing = (attn_rope_pairing)7;
    ROPE_ERR(attn_rope(&p, x, 8, 2, 1, 0, NULL), ATTN_ERR_ARG);
    p.pairing = ATTN_ROPE_ADJACENT;
    ROPE_ERR(attn_rope(&p, x, SIZE_MAX / 2, 3, 1, 0, NULL), ATTN_ERR_OVERFLOW);
#undef ROPE_ERR
}

static double torch_max; /* the largest |y - y_torch| / (|a| + |b|) */

/* one PyTorch case: x (TOKENS x HEADS x D) through attn_rope, against y */
static void torch_case(const char *pairing, size_t d, size_t r, size_t heads, size_t tokens,
                       float theta, const size_t *pos, const float *inv_freq, const float *x,
                       const float *y, int use_table)
{
    static float buf[64 * 4 * 64];
    attn_rope_params p;
    const size_t w = heads * d;
    size_t t, i;
    memset(&p, 0, sizeof p);
    p.head_dim = d;
    p.rot_dim = r;
    p.pairing = strcmp(pairing, "halves") == 0 ? ATTN_ROPE_HALVES : ATTN_ROPE_ADJACENT;
    p.theta = theta;
    p.inv_freq = use_table ? inv_freq : NULL;
    memcpy(buf, x, tokens * w * sizeof(float));
    check(attn_rope(&p, buf, w, tokens, heads, 0, pos) == ATTN_OK, "torch case: status");
    for (t = 0; t < tokens; t++)
        for (i = 0; i < w; i++) {
            const size_t h = i / d, j = i % d;
            const double mag =
                fabs((double)x[t * w + i]) + fabs((double)x[t * w + h * d + partner(&p, j)]);
            const double err = fabs((double)buf[t * w + i] - (double)y[t * w + i]);
            if (mag > 0 && err / mag > torch_max) torch_max = err / mag;
            check(err <= mag * (1e-6 + 3.0 * (double)pos[t] / 16777216.0),
                  "torch %s d %zu r %zu pos %zu elem %zu (%s): %.9g vs %.9g", pairing, d, r, pos[t],
                  i, use_table ? "table" : "theta", buf[t * w + i], y[t * w + i]);
        }
}

static void test_torch(const char *path)
{
    static float inv[64], x[64 * 4 * 64], y[64 * 4 * 64];
    static size_t pos[64];
    char pairing[16];
    unsigned long d, r, heads, tokens;
    float theta;
    int cases = 0;
    size_t i;
    FILE *f = fopen(path, "r");
    check(f != NULL, "cannot open %s", path);
    if (!f) return;
    while (fscanf(f, " case %15s %lu %lu %lu %lu %f", pairing, &d, &r, &heads, &tokens, &theta) ==
           6) {
        int ok = tokens <= 64 && heads * d <= 256 && r / 2 <= 64;
        for (i = 0; ok && i < tokens; i++) ok = fscanf(f, " %zu", pos + i) == 1;
        for (i = 0; ok && i < r / 2; i++) ok = fscanf(f, " %f", inv + i) == 1;
        for (i = 0; ok && i < tokens * heads * d; i++) ok = fscanf(f, " %f", x + i) == 1;
        for (i = 0; ok && i < tokens * heads * d; i++) ok = fscanf(f, " %f", y + i) == 1;
        check(ok, "%s: malformed case %d", path, cases);
        if (!ok) break;
        torch_case(pairing, d, r, heads, tokens, theta, pos, inv, x, y, 1);
        torch_case(pairing, d, r, heads, tokens, theta, pos, inv, x, y, 0);
        cases++;
    }
    fclose(f);
    check(cases >= 4, "%s: %d cases read", path, cases);
    printf("rope: %d PyTorch cases, max |y - y_torch| / (|a| + |b|) = %.3g\n", cases, torch_max);
}

int main(int argc, char **argv)
{
    static const size_t dims[] = {2, 6, 8, 16, 18, 34, 64, 66, 128, 260, 300};
    static const size_t positions[5] = {0, 1, 4096, 1000003, 2147483655u};
    static float table[150];
    size_t di, pi, ri, hi, i;
    check_begin("rope");
    check_seed(20261125);
    test_errors();
    for (i = 0; i < 150; i++)
        table[i] = (float)pow(500000.0, -2.0 * (double)i / 300.0) * (i % 3 ? 1.0f : 0.25f);
    for (di = 0; di < sizeof dims / sizeof dims[0]; di++)
        for (pi = 0; pi < 2; pi++)
            for (ri = 0; ri < 3; ri++)
                for (hi = 1; hi <= 3; hi += 2) {
                    attn_rope_params p;
                    const size_t d = dims[di];
                    memset(&p, 0, sizeof p);
                    p.head_dim = d;
                    p.pairing = pi ? ATTN_ROPE_HALVES : ATTN_ROPE_ADJACENT;
                    p.rot_dim = ri == 0 ? 0 : ri == 1 ? (d / 4 + 1) / 2 * 2 : 2;
                    if (p.rot_dim > d) p.rot_dim = d;
                    run(&p, 5, hi, 0, 0, 7, NULL);               /* offset positions */
                    run(&p, 5, hi, 3, 1, 0, positions);          /* an array, strided, unaligned */
                    p.theta = 500000.0f;                         /* Llama 3's base, scaled */
                    p.pos_scale = 0.25f;
                    run(&p, 3, hi, 5, 3, 1000000, NULL);
                    p.inv_freq = table;                          /* a caller's table */
                    p.theta = 0.0f;
                    p.pos_scale = 0.0f;
                    run(&p, 5, hi, 1, 2, 0, positions);
                }
    printf("rope: max |y - y_ref| / (|a| + |b|) = %.3g (bound 2.5e-7)\n", max_ratio);
    if (argc > 1) test_torch(argv[1]);
    return check_end("rope");
}
