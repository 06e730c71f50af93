/* demo.c - "The cat sat on the mat" through one transformer encoder block.
 *
 * Six tokens get a tiny deterministic embedding (each word's vector from a PRNG seeded by
 * the word, so "The" and "the" share one; the sinusoidal positional encoding tells them
 * apart), then one pre-LN encoder block (d_model 64, 4 heads, d_ff 256, GELU) with weights
 * from a fixed-seed PRNG runs over them. The demo prints each head's attention weights as
 * a heatmap (rows: queries, columns: keys; computed beside the block with attn_layernorm,
 * attn_linear, attn_matmul and attn_softmax, exactly the weights inside the block), then
 * the output shape and the time per token.
 *
 * Usage: attn_demo [--no-color | --color]
 *   Colours (ANSI 256-colour backgrounds) are used when stdout is a terminal and NO_COLOR is
 *   not set; otherwise each cell is a Unicode shade (blank, light, medium, dark, full)
 *   with the weight. The weights are random, so the patterns mean nothing linguistic; they
 *   show what the kernels compute. Everything is deterministic: same output on every run
 *   and every instruction set, up to float rounding in the last printed digit. */
#define _POSIX_C_SOURCE 200809L
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef _WIN32
#include <unistd.h>
#endif

#define T 6
#define D 64
#define H 4
#define DFF 256
#define DH (D / H)

static const char *const tokens[T] = {"The", "cat", "sat", "on", "the", "mat"};

static unsigned long long rng = 42;
static float uniform(float lo, float hi)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return lo + (hi - lo) * (float)((rng >> 40) * (1.0 / 16777216.0));
}

static float *params(float *pool, size_t *used, size_t n, float scale, float center)
{
    float *p = pool + *used;
    size_t i;
    for (i = 0; i < n; i++) p[i] = center + uniform(-scale, scale);
    *used += n;
    return p;
}

static double now_s(void)
{
#ifdef _WIN32
    return (double)clock() / CLOCKS_PER_SEC;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

static void die(const char *what, attn_status st)
{
    fprintf(stderr, "attn_demo: %s: %s\n", what, attn_status_string(st));
    exit(1);
}

/* one heatmap cell of weight w in [0, 1] */
static void cell(float w, int color)
{
    if (color) {
        /* grayscale ramp 232 (black) .. 255 (white); dark text on light cells */
        int g = 232 + (int)(w * 23.0f + 0.5f);
        printf("\x1b[48;5;%dm\x1b[38;5;%dm %4.2f \x1b[0m", g, w > 0.5f ? 16 : 250, (double)w);
    } else {
        static const char *const shade[5] = {
            "  ", "\xe2\x96\x91\xe2\x96\x91", "\xe2\x96\x92\xe2\x96\x92",
            "\xe2\x96\x93\xe2\x96\x93", "\xe2\x96\x88\xe2\x96\x88"};
        int s = w < 0.05f ? 0 : w < 0.15f ? 1 : w < 0.35f ? 2 : w < 0.6f ? 3 : 4;
        printf("%s%4.2f ", shade[s], (double)w);
    }
}

int main(int argc, char **argv)
{
    static float pool[4 * D * D + 2 * D * DFF + 16 * D + DFF];
    static float x[T * D], y[T * D], ln[T * D], q[T * D], k[T * D], s[T * T];
    static unsigned char ws[256 * 1024];
    size_t used = 0, i, j, h, need;
    attn_encoder_weights w;
    attn_status st;
    int color = 0, a, iters;
    double t0, t1;

#ifndef _WIN32
    color = isatty(1) && !getenv("NO_COLOR");
#endif
    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--no-color") == 0) color = 0;
        else if (strcmp(argv[a], "--color") == 0) color = 1;
        else {
            fprintf(stderr, "usage: %s [--no-color | --color]\n", argv[0]);
            return 2;
        }
    }

    /* weights: fixed seed; Q and K scaled up so that the heads attend sharply */
    memset(&w, 0, sizeof w); /* float32 weights (wtype 0) */
    w.attn.d_model = D, w.attn.heads = H;
    w.attn.wq = params(pool, &used, D * D, 3.0f / sqrtf(D), 0.0f);
    w.attn.wk = params(pool, &used, D * D, 3.0f / sqrtf(D), 0.0f);
    w.attn.wv = params(pool, &used, D * D, 1.7f / sqrtf(D), 0.0f);
    w.attn.wo = params(pool, &used, D * D, 1.7f / sqrtf(D), 0.0f);
    w.attn.bq = params(pool, &used, D, 0.1f, 0.0f);
    w.attn.bk = params(pool, &used, D, 0.1f, 0.0f);
    w.attn.bv = params(pool, &used, D, 0.1f, 0.0f);
    w.attn.bo = params(pool, &used, D, 0.1f, 0.0f);
    w.ffn.d_model = D, w.ffn.d_ff = DFF, w.ffn.act = ATTN_ACT_GELU;
    w.ffn.w1 = params(pool, &used, D * DFF, 1.7f / sqrtf(D), 0.0f);
    w.ffn.b1 = params(pool, &used, DFF, 0.1f, 0.0f);
    w.ffn.w2 = params(pool, &used, DFF * D, 1.7f / sqrtf(DFF), 0.0f);
    w.ffn.b2 = params(pool, &used, D, 0.1f, 0.0f);
    w.ln1_gamma = params(pool, &used, D, 0.2f, 1.0f);
    w.ln1_beta = params(pool, &used, D, 0.1f, 0.0f);
    w.ln2_gamma = params(pool, &used, D, 0.2f, 1.0f);
    w.ln2_beta = params(pool, &used, D, 0.1f, 0.0f);
    w.eps = 1e-5f;
    w.norm = ATTN_PRE_LN;

    /* embeddings: each (lower-cased) word seeds its own vector; then + positional encoding */
    for (i = 0; i < T; i++) {
        unsigned long long hsh = 1469598103934665603ull; /* FNV-1a */
        const char *c;
        for (c = tokens[i]; *c; c++) {
            hsh ^= (unsigned long long)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
            hsh *= 1099511628211ull;
        }
        rng = hsh | 1;
        for (j = 0; j < D; j++) x[i * D + j] = uniform(-1.0f, 1.0f);
    }
    if ((st = attn_positional_encoding(x, D, T, D, 0, 1)) != ATTN_OK)
        die("positional encoding", st);

    /* the block */
    need = attn_encoder_workspace_size(&w, T);
    if (need == 0 || need > sizeof ws) die("workspace", ATTN_ERR_WORKSPACE);
    if ((st = attn_encoder(&w, x, D, y, D, T, 0, ws, need)) != ATTN_OK) die("attn_encoder", st);

    /* the attention weights inside it: softmax(Q_h K_h^T / sqrt(dh)) of LN1(x) */
    if ((st = attn_layernorm(x, D, ln, D, T, D, w.ln1_gamma, w.ln1_beta, w.eps, NULL,
                             NULL)) != ATTN_OK ||
        (st = attn_linear(ln, D, T, D, ATTN_NO_TRANS, w.attn.wq, D, w.attn.bq, D, ATTN_ACT_NONE,
                          q, D, NULL, 0)) != ATTN_OK ||
        (st = attn_linear(ln, D, T, D, ATTN_NO_TRANS, w.attn.wk, D, w.attn.bk, D, ATTN_ACT_NONE,
                          k, D, NULL, 0)) != ATTN_OK)
        die("projections", st);

    printf("attn.h demo [%s]: \"The cat sat on the mat\" through one pre-LN encoder block\n",
           attn_isa());
    printf("d_model %d, %d heads of %d, d_ff %d, GELU; deterministic weights (seed 42)\n\n", D, H,
           DH, DFF);
    for (h = 0; h < H; h++) {
        if ((st = attn_matmul(ATTN_NO_TRANS, ATTN_TRANS, T, T, DH, 1.0f / sqrtf((float)DH),
                              q + h * DH, D, k + h * DH, D, 0.0f, s, T, NULL, 0)) != ATTN_OK ||
            (st = attn_softmax(s, T, s, T, T, T, 1.0f)) != ATTN_OK)
            die("attention weights", st);
        printf("head %lu (rows: queries, columns: keys)\n      ", (unsigned long)h);
        for (j = 0; j < T; j++) printf(color ? " %-5s" : "  %-5s", tokens[j]);
        printf("\n");
        for (i = 0; i < T; i++) {
            printf("%-5s ", tokens[i]);
            for (j = 0; j < T; j++) cell(s[i * T + j], color);
            printf("\n");
        }
        printf("\n");
    }

    /* time per token */
    iters = 2000;
    t0 = now_s();
    for (a = 0; a < iters; a++) attn_encoder(&w, x, D, y, D, T, 0, ws, need);
    t1 = now_s();
    printf("output: %d x %d (tokens x d_model); y[0][0..3] = %.4f %.4f %.4f %.4f\n", T, D,
           (double)y[0], (double)y[1], (double)y[2], (double)y[3]);
    printf("time: %.2f us per block call, %.2f us per token (%d calls)\n", 1e6 * (t1 - t0) / iters,
           1e6 * (t1 - t0) / iters / T, iters);
    return 0;
}
