/* test_onnx.c - runs the ONNX backend node tests (the .txt files in tests/onnx, see
 * tests/onnx/README.md)
 * through the library and compares every output with ONNX's expected values.
 *
 * Usage: test_onnx <directory with the case files>
 *
 * Tolerance: |got - want| <= 1e-5 + 1e-4 * |want| for every element (check_close; NaN and
 * inf must match exactly). ONNX's own runner uses rtol 1e-3, atol 1e-7.
 *
 * Each case file is either passed, failed or skipped with a stated reason; one line per case,
 * then a per-op summary, a line counting the Attention cases that passed fully (every output
 * checked), checked present_key/present_value through the KV-cache API, checked
 * qk_matmul_output, or were partial, then "onnx: N cases passed, M failed, S skipped
 * (reasons)", then the check_end() line. Every comparison (one per output tensor, plus the
 * status of every library call and the output shapes) goes through check(). An empty
 * directory is a failure.
 *
 * How the ONNX ops map onto the API:
 *   Softmax (opset >= 13): softmax over one axis. For the last axis the tensor is rows x n
 *     with leading dimension n. For any other axis the elements of one softmax are `inner`
 *     floats apart, and the API needs contiguous rows (only the leading dimension is free), so
 *     the test gathers them into a temporary [outer*inner, n] array (a transpose), runs one
 *     attn_softmax over all rows and scatters back. (Opset < 13: flatten to 2-D at the axis,
 *     one contiguous call.)
 *   LayerNormalization / RMSNormalization: normalizing over dims [axis, rank) of a row-major
 *     tensor is rows = prod(dims[:axis]) rows of n = prod(dims[axis:]) contiguous floats; the
 *     scale/bias have exactly n floats. LayerNormalization's Mean and InvStdDev outputs are
 *     checked through mean_out / rstd_out.
 *   MatMul: NumPy semantics. A 1-D a is [1,K], a 1-D b is [K,1] (the dim is dropped from the
 *     result again); the batch dims broadcast right-aligned; one attn_matmul call per output
 *     matrix, each operand addressed at its (broadcast) batch offset.
 *   Attention (opset 23/24):
 *     4-D Q [B,Hq,Sq,D], K [B,Hkv,S,D], V [B,Hkv,S,Dv]: ATTN_LAYOUT_BHLD.
 *     3-D Q [B,Sq,Hq*D] (q_num_heads / kv_num_heads attributes): ATTN_LAYOUT_BLHD.
 *     GQA: the API's g = h / (heads/kv_heads) is ONNX's np.repeat grouping.
 *     scale and softcap attributes map directly (absent = 0 = the API's defaults, which
 *     match ONNX: 1/sqrt(D) of Q's head size, no softcap).
 *     past_key / past_value [B,Hkv,P,D(v)] and present_key / present_value: the KV-cache
 *       API. Whenever a past or a present output is involved, the test inits an attn_kv_cache
 *       of capacity T = P + S (so its buffers are exactly the present tensors [B,Hkv,T,D(v)]),
 *       appends the past (n = P, ATTN_LAYOUT_BHLD) when given, then the new K/V (n = S,
 *       BHLD for 4-D, BLHD for 3-D inputs), compares present_key / present_value with the
 *       cache's k / v buffers and runs the attention on params from attn_attention_init_kv
 *       (K/V read from the cache; Q/O in the inputs' layout; masks, scale, softcap and causal
 *       set as below). Cases without past or present use attn_attention_init directly.
 *     attn_mask (float: additive -> mask; bool: attend -> bool_mask) of shape [Sq,T],
 *       [B,1,Sq,T], [B,Hq,Sq,T] (any right-aligned broadcastable shape of rank 2..4): a size-1
 *       or missing batch/head dim gets stride 0. A mask shorter than T = P + S is padded with
 *       -inf / false into a copy built here.
 *     nonpad_kv_seqlen (opset 24) -> key_lengths.
 *     is_causal: ONNX aligns causal bottom-right with offset P when past_key is given, else
 *       nonpad_kv_seqlen[b] - Sq when only nonpad_kv_seqlen is given, else 0. Mapped to
 *       ATTN_CAUSAL_OFFSET with causal_offset = P (0 without a past), or, with only
 *       nonpad_kv_seqlen, to ATTN_CAUSAL_BOTTOM_RIGHT (which uses key_lengths[b] as kv_len).
 *     qk_matmul_output [B,Hq,Sq,T] (output slot 3) -> the scores output (scores_sb/sh/sq
 *       dense), in the scores mode that reproduces qk_matmul_output_mode (default 0) as ONNX's
 *       reference implementation computes it (checked against the expected data, which
 *       matches the reference with softcap applied before the mask, onnx PR 7867):
 *         0 -> ATTN_SCORES_LOGITS: scale * Q K^T, softcapped when softcap is set (the
 *              reference softcaps qk_matmul_output in place, so mode 0 is softcapped too;
 *              QK^T before a softcap has no scores mode, but the reference never outputs it);
 *         1 -> ATTN_SCORES_LOGITS: the reference keeps the softcapped QK^T (no mask added;
 *              without a softcap mode 1 changes nothing, so it is plain scaled QK^T, also
 *              LOGITS; no case has mode 1 without a softcap);
 *         2 -> ATTN_SCORES_MASKED: softcapped QK^T + attn_mask, with the causal, boolean and
 *              nonpad_kv_seqlen masks as -inf;
 *         3 -> ATTN_SCORES_PROBS: the softmax weights (a fully masked row is all 0, as the
 *              expected data has it).
 *       Any other mode value has no scores mode: such a case would check Y and present only,
 *       print what it checked and be counted as partial.
 *   Gelu (opset 20): elementwise, one call to attn_activation over all the values;
 *     approximate absent -> ATTN_ACT_GELU (erf form), "tanh" -> ATTN_ACT_GELU_TANH.
 */
#include "attn.h"
#include "check.h"

#include <stdint.h>

#ifdef _WIN32
#include <io.h>
#else
#include <dirent.h>
#endif

#define ATOL 1e-5
#define RTOL 1e-4

#define MAXRANK 8
#define MAXSLOTS 16
#define MAXATTRS 32

typedef struct tensor {
    int present;
    char name[64];
    char dtype[16];
    int rank;
    long long dims[MAXRANK];
    size_t count;
    float *f;     /* dtype float */
    long long *i; /* dtype bool or int64 */
} tensor;

typedef struct attr {
    char name[64];
    char kind[16];
    long long i; /* kind i */
    float f;     /* kind f */
    char s[256]; /* kind s */
} attr;

typedef struct onnx_case {
    char name[256], op[64], domain[64];
    int opset, nattrs;
    attr attrs[MAXATTRS];
    tensor in[MAXSLOTS], out[MAXSLOTS];
} onnx_case;

enum { R_PASS = 0, R_FAIL = 1, R_SKIP = 2 };

typedef struct result {
    int status;
    int partial;     /* qk_matmul_output present but not checked */
    int via_cache;   /* Attention: present K/V built by the KV-cache API */
    int qk_checked;  /* Attention: qk_matmul_output compared with the scores output */
    char why[512];   /* failure summary or skip reason */
    char notes[256]; /* what was checked (for partial passes) */
} result;

/* the largest |got - want| / (ATOL + RTOL * |want|) over all compared elements, and where */
static double g_worst_ratio;
static char g_worst_where[320];

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static void set_skip(result *r, const char *fmt, const char *arg)
{
    r->status = R_SKIP;
    snprintf(r->why, sizeof r->why, fmt, arg);
}

static void add_fail(result *r, const char *text)
{
    size_t len = strlen(r->why);
    r->status = R_FAIL;
    if (len + 3 < sizeof r->why)
        snprintf(r->why + len, sizeof r->why - len, "%s%s", len ? "; " : "", text);
}

/* ----------------------------------------------------------------------------------------
 * Reading a case file (format "onnx2txt 1", see tests/onnx/README.md).
 */
static void free_case(onnx_case *c)
{
    int s;
    for (s = 0; s < MAXSLOTS; s++) {
        free(c->in[s].f);
        free(c->in[s].i);
        free(c->out[s].f);
        free(c->out[s].i);
    }
}

/* Reads the tensors after "inputs"/"outputs"; returns 0 on a format error. */
static int read_tensors(FILE *f, const char *kw, tensor *t, char *err, size_t errsz)
{
    int np, nslots, k, d;
    char head[32], key[32];
    snprintf(head, sizeof head, " %ss %%d %%d", kw);
    if (fscanf(f, head, &np, &nslots) != 2 || np < 0 || nslots < np || nslots > MAXSLOTS) {
        snprintf(err, errsz, "bad '%ss' line", kw);
        return 0;
    }
    for (k = 0; k < np; k++) {
        int slot, rank;
        char name[64], dtype[16];
        size_t count = 1, e;
        tensor *x;
        if (fscanf(f, " %31s %d %63s %15s %d", key, &slot, name, dtype, &rank) != 5 ||
            strcmp(key, kw) != 0 || slot < 0 || slot >= nslots || rank < 0 || rank > MAXRANK ||
            t[slot].present) {
            snprintf(err, errsz, "bad '%s' line", kw);
            return 0;
        }
        x = &t[slot];
        x->present = 1;
        strcpy(x->name, name);
        strcpy(x->dtype, dtype);
        x->rank = rank;
        for (d = 0; d < rank; d++) {
            if (fscanf(f, " %lld", &x->dims[d]) != 1 || x->dims[d] < 0 || x->dims[d] > 100000000) {
                snprintf(err, errsz, "bad dims of %s", name);
                return 0;
            }
            count *= (size_t)x->dims[d];
        }
        x->count = count;
        if (strcmp(dtype, "float") == 0) {
            x->f = (float *)xmalloc(count * sizeof(float));
            for (e = 0; e < count; e++)
                if (fscanf(f, " %f", &x->f[e]) != 1) {
                    snprintf(err, errsz, "bad value %lu of %s", (unsigned long)e, name);
                    return 0;
                }
        } else if (strcmp(dtype, "bool") == 0 || strcmp(dtype, "int64") == 0) {
            x->i = (long long *)xmalloc(count * sizeof(long long));
            for (e = 0; e < count; e++)
                if (fscanf(f, " %lld", &x->i[e]) != 1) {
                    snprintf(err, errsz, "bad value %lu of %s", (unsigned long)e, name);
                    return 0;
                }
        } else {
            snprintf(err, errsz, "unknown dtype %s", dtype);
            return 0;
        }
    }
    return 1;
}

static int read_case(const char *path, onnx_case *c, char *err, size_t errsz)
{
    FILE *f = fopen(path, "r");
    int ver, a, ok = 0;
    char endkw[16];
    memset(c, 0, sizeof *c);
    if (!f) {
        snprintf(err, errsz, "cannot open %.200s", path);
        return 0;
    }
    if (fscanf(f, " onnx2txt %d case %255s op %63s domain %63s opset %d attrs %d", &ver, c->name,
               c->op, c->domain, &c->opset, &c->nattrs) != 6 ||
        ver != 1 || c->nattrs < 0 || c->nattrs > MAXATTRS) {
        snprintf(err, errsz, "bad header (not an onnx2txt 1 file?)");
        goto done;
    }
    for (a = 0; a < c->nattrs; a++) {
        attr *at = &c->attrs[a];
        int n, v;
        if (fscanf(f, " attr %63s %15s", at->name, at->kind) != 2) {
            snprintf(err, errsz, "bad attr line");
            goto done;
        }
        if (strcmp(at->kind, "i") == 0) {
            if (fscanf(f, " %lld", &at->i) != 1) goto badattr;
        } else if (strcmp(at->kind, "f") == 0) {
            if (fscanf(f, " %f", &at->f) != 1) goto badattr;
        } else if (strcmp(at->kind, "s") == 0) {
            if (fscanf(f, " %d", &n) != 1 || n < 0 || n > 255) goto badattr;
            if (n > 0 && fscanf(f, " %255s", at->s) != 1) goto badattr;
        } else if (strcmp(at->kind, "ints") == 0 || strcmp(at->kind, "floats") == 0 ||
                   strcmp(at->kind, "g") == 0) {
            /* list values are read and dropped: no op here uses a list attribute, and an
             * unexpected attribute makes its case a skip. */
            char tok[256];
            if (fscanf(f, " %d", &n) != 1 || n < 0) goto badattr;
            for (v = 0; v < n; v++)
                if (fscanf(f, " %255s", tok) != 1) goto badattr;
        } else {
            goto badattr;
        }
    }
    if (!read_tensors(f, "input", c->in, err, errsz)) goto done;
    if (!read_tensors(f, "output", c->out, err, errsz)) goto done;
    if (fscanf(f, " %15s", endkw) != 1 || strcmp(endkw, "end") != 0) {
        snprintf(err, errsz, "missing 'end'");
        goto done;
    }
    ok = 1;
    goto done;
badattr:
    snprintf(err, errsz, "bad attribute value");
done:
    fclose(f);
    return ok;
}

static const attr *find_attr(const onnx_case *c, const char *name)
{
    int a;
    for (a = 0; a < c->nattrs; a++)
        if (strcmp(c->attrs[a].name, name) == 0) return &c->attrs[a];
    return NULL;
}

/* Skips the case if it has an attribute outside `known` (a NULL-terminated list) or of the
 * wrong kind. Returns 1 if all attributes are known. */
static int known_attrs(const onnx_case *c, const char *const *known, const char *const *kinds,
                       result *r)
{
    int a, k;
    for (a = 0; a < c->nattrs; a++) {
        int found = 0;
        for (k = 0; known[k]; k++)
            if (strcmp(c->attrs[a].name, known[k]) == 0) {
                found = strcmp(c->attrs[a].kind, kinds[k]) == 0;
                break;
            }
        if (!found) {
            set_skip(r, "attribute %s not expressible", c->attrs[a].name);
            return 0;
        }
    }
    return 1;
}

static int is_float(const tensor *t) { return t->present && strcmp(t->dtype, "float") == 0; }

/* ----------------------------------------------------------------------------------------
 * Comparison: one check() per output tensor.
 */
static int shape_is(const tensor *t, int rank, const long long *dims)
{
    int d;
    if (t->rank != rank) return 0;
    for (d = 0; d < rank; d++)
        if (t->dims[d] != dims[d]) return 0;
    return 1;
}

static void shape_str(char *buf, size_t sz, int rank, const long long *dims)
{
    int d;
    size_t len;
    snprintf(buf, sz, "[");
    for (d = 0; d < rank; d++) {
        len = strlen(buf);
        snprintf(buf + len, sz - len, "%s%lld", d ? "," : "", dims[d]);
    }
    len = strlen(buf);
    snprintf(buf + len, sz - len, "]");
}

/* Compares `got` (rank/dims as computed from the API mapping) with the expected tensor. */
static int compare_output(result *r, const onnx_case *c, const tensor *want, const float *got,
                          int rank, const long long *dims)
{
    size_t e, worst = 0;
    double maxerr = 0.0, failerr = 0.0;
    int ok = 1;
    char msg[400];
    if (!check(shape_is(want, rank, dims), "%s %s: shape mismatch", c->name, want->name)) {
        char a[96], b[96];
        shape_str(a, sizeof a, rank, dims);
        shape_str(b, sizeof b, want->rank, want->dims);
        snprintf(msg, sizeof msg, "%s shape %s, expected %s", want->name, a, b);
        add_fail(r, msg);
        return 0;
    }
    for (e = 0; e < want->count; e++) {
        double g = got[e], w = want->f[e], err;
        if (isnan(g) || isnan(w)) err = (isnan(g) && isnan(w)) ? 0.0 : HUGE_VAL;
        else if (g == w) err = 0.0;
        else err = fabs(g - w);
        if (!check_close(g, w, ATOL, RTOL)) {
            if (ok || err > failerr) {
                failerr = err;
                worst = e; /* the worst failing element */
            }
            ok = 0;
        }
        if (err > maxerr) maxerr = err;
        if (err / (ATOL + RTOL * fabs(w)) > g_worst_ratio) {
            g_worst_ratio = err / (ATOL + RTOL * fabs(w));
            snprintf(g_worst_where, sizeof g_worst_where, "%.200s %.60s", c->name, want->name);
        }
    }
    check(ok, "%s %s: element %lu got %.9g want %.9g (max err %.3g)", c->name, want->name,
          (unsigned long)worst, want->count ? (double)got[worst] : 0.0,
          want->count ? (double)want->f[worst] : 0.0, maxerr);
    if (!ok) {
        snprintf(msg, sizeof msg, "%s max err %.3g, element %lu got %.9g want %.9g", want->name,
                 maxerr, (unsigned long)worst, (double)got[worst], (double)want->f[worst]);
        add_fail(r, msg);
    }
    return ok;
}

static int check_status(result *r, const onnx_case *c, const char *fn, attn_status st)
{
    char msg[160];
    if (check(st == ATTN_OK, "%s: %s returned %d (%s)", c->name, fn, (int)st,
              attn_status_string(st)))
        return 1;
    snprintf(msg, sizeof msg, "%s returned %s", fn, attn_status_string(st));
    add_fail(r, msg);
    return 0;
}

static float *nan_buffer(size_t n)
{
    float *p = (float *)xmalloc(n * sizeof(float));
    size_t e;
    for (e = 0; e < n; e++) p[e] = (float)NAN; /* anything left unwritten fails */
    return p;
}

static size_t prod(const long long *dims, int from, int to)
{
    size_t p = 1;
    int d;
    for (d = from; d < to; d++) p *= (size_t)dims[d];
    return p;
}

/* ----------------------------------------------------------------------------------------
 * Softmax
 */
static void run_softmax(const onnx_case *c, result *r)
{
    static const char *const known[] = {"axis", NULL}, *const kinds[] = {"i", NULL};
    const tensor *x = &c->in[0];
    const attr *ax = find_attr(c, "axis");
    long long axis = ax ? ax->i : (c->opset >= 13 ? -1 : 1);
    size_t outer, n, inner, o, i, k;
    float *y, *tmp;
    attn_status st;
    if (!known_attrs(c, known, kinds, r)) return;
    if (!is_float(x) || !c->out[0].present) {
        set_skip(r, "%s", "needs a float input X and output Y");
        return;
    }
    if (x->rank == 0) {
        set_skip(r, "%s", "rank-0 input");
        return;
    }
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) {
        set_skip(r, "%s", "axis out of range");
        return;
    }
    y = nan_buffer(x->count);
    if (c->opset < 13) {
        /* opset <= 12: flatten to 2-D at the axis, softmax over each flattened row */
        outer = prod(x->dims, 0, (int)axis);
        n = prod(x->dims, (int)axis, x->rank);
        st = attn_softmax(x->f, n, y, n, outer, n, 1.0f);
        if (check_status(r, c, "attn_softmax", st))
            compare_output(r, c, &c->out[0], y, x->rank, x->dims);
        free(y);
        return;
    }
    outer = prod(x->dims, 0, (int)axis);
    n = (size_t)x->dims[axis];
    inner = prod(x->dims, (int)axis + 1, x->rank);
    if (inner == 1) {
        st = attn_softmax(x->f, n, y, n, outer, n, 1.0f);
    } else {
        /* gather: tmp row (o, i) = x[o, :, i]; one call over outer*inner rows; scatter back */
        tmp = (float *)xmalloc(outer * inner * n * sizeof(float));
        for (o = 0; o < outer; o++)
            for (i = 0; i < inner; i++)
                for (k = 0; k < n; k++)
                    tmp[(o * inner + i) * n + k] = x->f[(o * n + k) * inner + i];
        st = attn_softmax(tmp, n, tmp, n, outer * inner, n, 1.0f);
        if (st == ATTN_OK)
            for (o = 0; o < outer; o++)
                for (i = 0; i < inner; i++)
                    for (k = 0; k < n; k++)
                        y[(o * n + k) * inner + i] = tmp[(o * inner + i) * n + k];
        free(tmp);
    }
    if (check_status(r, c, "attn_softmax", st))
        compare_output(r, c, &c->out[0], y, x->rank, x->dims);
    free(y);
}

/* ----------------------------------------------------------------------------------------
 * LayerNormalization / RMSNormalization
 */
static void run_norm(const onnx_case *c, result *r, int rms)
{
    static const char *const known[] = {"axis", "epsilon", "stash_type", NULL},
                             *const kinds[] = {"i", "f", "i", NULL};
    const tensor *x = &c->in[0], *w = &c->in[1], *b = &c->in[2];
    const attr *ax = find_attr(c, "axis"), *ep = find_attr(c, "epsilon"),
               *stash = find_attr(c, "stash_type");
    long long axis = ax ? ax->i : -1, sdims[MAXRANK];
    float eps = ep ? ep->f : 1e-5f;
    size_t rows, n;
    float *y, *mean, *rstd;
    attn_status st;
    int d;
    if (!known_attrs(c, known, kinds, r)) return;
    if (stash && stash->i != 1) {
        set_skip(r, "%s", "stash_type other than 1 (float32) not expressible");
        return;
    }
    if (!is_float(x) || !is_float(w) || (b->present && !is_float(b)) || !c->out[0].present) {
        set_skip(r, "%s", "needs float X, Scale (and B) and an output Y");
        return;
    }
    if (x->rank == 0) {
        set_skip(r, "%s", "rank-0 input");
        return;
    }
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank) {
        set_skip(r, "%s", "axis out of range");
        return;
    }
    rows = prod(x->dims, 0, (int)axis);
    n = prod(x->dims, (int)axis, x->rank);
    if (w->count != n || (b->present && b->count != n)) {
        set_skip(r, "%s", "broadcast Scale/B (fewer than the normalized elements) not expressible");
        return;
    }
    y = nan_buffer(x->count);
    mean = nan_buffer(rows);
    rstd = nan_buffer(rows);
    if (rms) {
        st = attn_rmsnorm(x->f, n, y, n, rows, n, w->f, eps);
        if (check_status(r, c, "attn_rmsnorm", st))
            compare_output(r, c, &c->out[0], y, x->rank, x->dims);
    } else {
        st = attn_layernorm(x->f, n, y, n, rows, n, w->f, b->present ? b->f : NULL, eps, mean,
                            rstd);
        if (check_status(r, c, "attn_layernorm", st)) {
            /* Mean / InvStdDev: shape X.shape[:axis] followed by 1s */
            for (d = 0; d < x->rank; d++) sdims[d] = d < axis ? x->dims[d] : 1;
            compare_output(r, c, &c->out[0], y, x->rank, x->dims);
            if (c->out[1].present) compare_output(r, c, &c->out[1], mean, x->rank, sdims);
            if (c->out[2].present) compare_output(r, c, &c->out[2], rstd, x->rank, sdims);
        }
    }
    free(y);
    free(mean);
    free(rstd);
}

/* ----------------------------------------------------------------------------------------
 * MatMul (NumPy semantics)
 */
static void run_matmul(const onnx_case *c, result *r)
{
    const tensor *a = &c->in[0], *b = &c->in[1];
    long long adims[MAXRANK + 1], bdims[MAXRANK + 1], odims[MAXRANK + 1], cdims[MAXRANK + 1];
    int ar, br, nb, d, orank = 0;
    size_t m, n, k, nbatch, bi, astride[MAXRANK], bstride[MAXRANK];
    float *out;
    attn_status st = ATTN_OK;
    if (c->nattrs) {
        set_skip(r, "attribute %s not expressible", c->attrs[0].name);
        return;
    }
    if (!is_float(a) || !is_float(b) || !c->out[0].present) {
        set_skip(r, "%s", "needs float A and B and an output");
        return;
    }
    if (a->rank == 0 || b->rank == 0) {
        set_skip(r, "%s", "rank-0 operand (not a MatMul in ONNX)");
        return;
    }
    /* promote 1-D operands: a [K] -> [1,K], b [K] -> [K,1] */
    ar = a->rank < 2 ? 2 : a->rank;
    br = b->rank < 2 ? 2 : b->rank;
    if (a->rank == 1) {
        adims[0] = 1;
        adims[1] = a->dims[0];
    } else {
        memcpy(adims, a->dims, sizeof(long long) * (size_t)a->rank);
    }
    if (b->rank == 1) {
        bdims[0] = b->dims[0];
        bdims[1] = 1;
    } else {
        memcpy(bdims, b->dims, sizeof(long long) * (size_t)b->rank);
    }
    m = (size_t)adims[ar - 2];
    k = (size_t)adims[ar - 1];
    n = (size_t)bdims[br - 1];
    if ((size_t)bdims[br - 2] != k) {
        set_skip(r, "%s", "inner dimensions differ (invalid MatMul)");
        return;
    }
    /* broadcast batch dims, right-aligned */
    nb = (ar > br ? ar : br) - 2;
    for (d = 0; d < nb; d++) {
        int ia = d - (nb - (ar - 2)), ib = d - (nb - (br - 2));
        long long da = ia >= 0 ? adims[ia] : 1, db = ib >= 0 ? bdims[ib] : 1;
        if (da != db && da != 1 && db != 1) {
            set_skip(r, "%s", "batch dims not broadcastable (invalid MatMul)");
            return;
        }
        odims[d] = da > db ? da : db;
    }
    /* element strides (in matrices) of each operand's batch dims, 0 where broadcast */
    {
        size_t sa = 1, sb = 1;
        for (d = nb - 1; d >= 0; d--) {
            int ia = d - (nb - (ar - 2)), ib = d - (nb - (br - 2));
            long long da = ia >= 0 ? adims[ia] : 1, db = ib >= 0 ? bdims[ib] : 1;
            astride[d] = da == 1 ? 0 : sa;
            bstride[d] = db == 1 ? 0 : sb;
            sa *= (size_t)da;
            sb *= (size_t)db;
        }
    }
    nbatch = prod(odims, 0, nb);
    out = nan_buffer(nbatch * m * n);
    for (bi = 0; bi < nbatch && st == ATTN_OK; bi++) {
        size_t rem = bi, ao = 0, bo = 0;
        for (d = nb - 1; d >= 0; d--) {
            size_t idx = rem % (size_t)odims[d];
            rem /= (size_t)odims[d];
            ao += idx * astride[d];
            bo += idx * bstride[d];
        }
        st = attn_matmul(ATTN_NO_TRANS, ATTN_NO_TRANS, m, n, k, 1.0f, a->f + ao * m * k, k,
                         b->f + bo * k * n, n, 0.0f, out + bi * m * n, n, NULL, 0);
    }
    if (check_status(r, c, "attn_matmul", st)) {
        /* result shape: batch dims, then m unless a was 1-D, then n unless b was 1-D */
        for (d = 0; d < nb; d++) cdims[orank++] = odims[d];
        if (a->rank > 1) cdims[orank++] = (long long)m;
        if (b->rank > 1) cdims[orank++] = (long long)n;
        compare_output(r, c, &c->out[0], out, orank, cdims);
    }
    free(out);
}

/* ----------------------------------------------------------------------------------------
 * Attention (opset 23 / 24)
 */

/* The scores mode reproducing ONNX's qk_matmul_output_mode, or -1 if there is none. */
static int qk_scores_mode(long long mode)
{
    switch (mode) {
    case 0: return ATTN_SCORES_LOGITS;
    case 1: return ATTN_SCORES_LOGITS;
    case 2: return ATTN_SCORES_MASKED;
    case 3: return ATTN_SCORES_PROBS;
    default: return -1;
    }
}
static void run_attention(const onnx_case *c, result *r)
{
    static const char *const known[] = {"is_causal", "kv_num_heads", "q_num_heads",
                                        "qk_matmul_output_mode", "scale", "softcap", NULL},
                             *const kinds[] = {"i", "i", "i", "i", "f", "f", NULL};
    const tensor *Q = &c->in[0], *K = &c->in[1], *V = &c->in[2], *M = &c->in[3];
    const tensor *PK = &c->in[4], *PV = &c->in[5], *NP = &c->in[6];
    const attr *a_causal = find_attr(c, "is_causal"), *a_qh = find_attr(c, "q_num_heads"),
               *a_kvh = find_attr(c, "kv_num_heads"), *a_scale = find_attr(c, "scale"),
               *a_softcap = find_attr(c, "softcap");
    int rank3, s;
    size_t B, Hq, Hkv, Sq, S, P, T, D, Dv, bb;
    float *pk = NULL, *pv = NULL, *o = NULL, *fmask = NULL, *sc = NULL;
    uint8_t *bmask = NULL;
    long long qk_onnx_mode = 0;
    int qk_lib_mode = -1;
    attn_layout layout;
    int64_t *klen = NULL;
    void *ws = NULL;
    size_t wsz;
    attn_attention_params p;
    attn_status st;
    long long ydims[4], pdims[4];

    if (!known_attrs(c, known, kinds, r)) return;
    for (s = 7; s < MAXSLOTS; s++)
        if (c->in[s].present) {
            set_skip(r, "input %s not expressible", c->in[s].name);
            return;
        }
    for (s = 4; s < MAXSLOTS; s++)
        if (c->out[s].present) {
            set_skip(r, "output %s not expressible", c->out[s].name);
            return;
        }
    if (!is_float(Q) || !is_float(K) || !is_float(V) || !c->out[0].present) {
        set_skip(r, "%s", "needs float Q, K, V and an output Y");
        return;
    }
    if (Q->rank != K->rank || Q->rank != V->rank || (Q->rank != 3 && Q->rank != 4)) {
        set_skip(r, "%s", "Q, K, V must all be 3-D or all 4-D");
        return;
    }
    rank3 = Q->rank == 3;
    if (rank3) {
        long long qh, kvh;
        if (!a_qh || !a_kvh || a_qh->i <= 0 || a_kvh->i <= 0) {
            set_skip(r, "%s", "3-D inputs without q_num_heads/kv_num_heads");
            return;
        }
        qh = a_qh->i;
        kvh = a_kvh->i;
        B = (size_t)Q->dims[0];
        Sq = (size_t)Q->dims[1];
        Hq = (size_t)qh;
        Hkv = (size_t)kvh;
        S = (size_t)K->dims[1];
        if (Q->dims[2] % qh || K->dims[2] % kvh || V->dims[2] % kvh) {
            set_skip(r, "%s", "hidden size not a multiple of the head count");
            return;
        }
        D = (size_t)(Q->dims[2] / qh);
        Dv = (size_t)(V->dims[2] / kvh);
        if ((size_t)K->dims[0] != B || (size_t)V->dims[0] != B || (size_t)V->dims[1] != S ||
            (size_t)(K->dims[2] / kvh) != D) {
            set_skip(r, "%s", "inconsistent Q/K/V shapes");
            return;
        }
    } else {
        B = (size_t)Q->dims[0];
        Hq = (size_t)Q->dims[1];
        Sq = (size_t)Q->dims[2];
        D = (size_t)Q->dims[3];
        Hkv = (size_t)K->dims[1];
        S = (size_t)K->dims[2];
        Dv = (size_t)V->dims[3];
        if ((size_t)K->dims[0] != B || (size_t)K->dims[3] != D || (size_t)V->dims[0] != B ||
            (size_t)V->dims[1] != Hkv || (size_t)V->dims[2] != S) {
            set_skip(r, "%s", "inconsistent Q/K/V shapes");
            return;
        }
    }
    if (Hkv == 0 || Hq % Hkv) {
        set_skip(r, "%s", "q heads not a multiple of kv heads");
        return;
    }
    if (PK->present != PV->present) {
        set_skip(r, "%s", "past_key without past_value (or the reverse)");
        return;
    }
    P = 0;
    if (PK->present) {
        if (!is_float(PK) || !is_float(PV) || PK->rank != 4 || PV->rank != 4 ||
            (size_t)PK->dims[0] != B || (size_t)PK->dims[1] != Hkv || (size_t)PK->dims[3] != D ||
            (size_t)PV->dims[0] != B || (size_t)PV->dims[1] != Hkv ||
            PV->dims[2] != PK->dims[2] || (size_t)PV->dims[3] != Dv) {
            set_skip(r, "%s", "past_key/past_value shapes not [B,Hkv,P,D(v)]");
            return;
        }
        P = (size_t)PK->dims[2];
    }
    T = P + S;
    if (a_scale && !(a_scale->f > 0.0f)) {
        set_skip(r, "%s", "scale <= 0 not expressible (0 means the default in the API)");
        return;
    }
    if (a_softcap && a_softcap->f < 0.0f) {
        set_skip(r, "%s", "negative softcap");
        return;
    }
    if (NP->present && (strcmp(NP->dtype, "int64") != 0 || NP->rank != 1 ||
                        (size_t)NP->dims[0] != B)) {
        set_skip(r, "%s", "nonpad_kv_seqlen not an int64 [B] tensor");
        return;
    }
    if (M->present && (M->rank < 2 || M->rank > 4 || M->dims[M->rank - 1] > (long long)T ||
                       (strcmp(M->dtype, "float") != 0 && strcmp(M->dtype, "bool") != 0))) {
        set_skip(r, "%s", "attn_mask of an unsupported rank, dtype or length > T");
        return;
    }

    o = nan_buffer(B * Hq * Sq * Dv);
    layout = rank3 ? ATTN_LAYOUT_BLHD : ATTN_LAYOUT_BHLD;
    if (PK->present || c->out[1].present || c->out[2].present) {
        /* present K/V = concat(past, new) along the sequence, built by the KV-cache API: a
         * cache of capacity T = P + S, so that its buffers are the present tensors
         * [B,Hkv,T,D(v)]; the past (BHLD) is appended first, then the new K/V (BHLD for 4-D,
         * BLHD for 3-D inputs); the attention reads K/V from the cache. */
        attn_kv_cache kc;
        pk = nan_buffer(B * Hkv * T * D); /* anything the appends leave unwritten fails */
        pv = nan_buffer(B * Hkv * T * Dv);
        st = attn_kv_cache_init(&kc, pk, pv, B, Hkv, T, D, Dv);
        if (!check_status(r, c, "attn_kv_cache_init", st)) goto cleanup;
        if (P) {
            st = attn_kv_cache_append(&kc, P, PK->f, PV->f, ATTN_LAYOUT_BHLD);
            if (!check_status(r, c, "attn_kv_cache_append (past)", st)) goto cleanup;
        }
        st = attn_kv_cache_append(&kc, S, K->f, V->f, layout);
        if (!check_status(r, c, "attn_kv_cache_append (new)", st)) goto cleanup;
        if (!check(kc.len == T && kc.k == pk && kc.v == pv, "%s: cache len %lu, want %lu",
                   c->name, (unsigned long)kc.len, (unsigned long)T)) {
            add_fail(r, "the KV cache's len is not P + S after the appends");
            goto cleanup;
        }
        r->via_cache = 1;
        p = attn_attention_init_kv(&kc, Hq, Sq, Q->f, o, layout, ATTN_CAUSAL_NONE);
    } else {
        p = attn_attention_init(B, Hq, Hkv, Sq, T, D, Dv, Q->f, K->f, V->f, o, layout);
    }
    if (a_scale) p.scale = a_scale->f;
    if (a_softcap) p.softcap = a_softcap->f;

    if (M->present) {
        /* padded copy [rows, T], then right-aligned broadcast strides onto [B, Hq, Sq, T] */
        int mr = M->rank, isbool = strcmp(M->dtype, "bool") == 0, ax;
        size_t Tm = (size_t)M->dims[mr - 1], rows = M->count / (Tm ? Tm : 1), rr, j;
        size_t target[3], stride[3], st_after = T;
        target[0] = B;
        target[1] = Hq;
        target[2] = Sq;
        if (Tm == 0) rows = prod(M->dims, 0, mr - 1);
        if (isbool)
            bmask = (uint8_t *)xmalloc(rows * T);
        else
            fmask = (float *)xmalloc(rows * T * sizeof(float));
        for (rr = 0; rr < rows; rr++)
            for (j = 0; j < T; j++) {
                if (isbool)
                    bmask[rr * T + j] = (uint8_t)(j < Tm ? M->i[rr * Tm + j] != 0 : 0);
                else
                    fmask[rr * T + j] = j < Tm ? M->f[rr * Tm + j] : -INFINITY;
            }
        for (ax = 2; ax >= 0; ax--) {
            int md = mr - 1 - (3 - ax); /* the mask's axis aligned with target axis ax */
            if (md < 0) {
                stride[ax] = 0;
            } else if ((size_t)M->dims[md] == target[ax]) {
                stride[ax] = target[ax] == 1 ? 0 : st_after;
                st_after *= (size_t)M->dims[md];
            } else if (M->dims[md] == 1) {
                stride[ax] = 0;
            } else {
                set_skip(r, "%s", "attn_mask shape not broadcastable to [B,Hq,Sq,T]");
                goto cleanup;
            }
        }
        if (isbool) {
            p.bool_mask = bmask;
            p.bmask_sb = stride[0];
            p.bmask_sh = stride[1];
            p.bmask_sq = stride[2];
        } else {
            p.mask = fmask;
            p.mask_sb = stride[0];
            p.mask_sh = stride[1];
            p.mask_sq = stride[2];
        }
    }
    if (NP->present) {
        klen = (int64_t *)xmalloc(B * sizeof(int64_t));
        for (bb = 0; bb < B; bb++) klen[bb] = (int64_t)NP->i[bb];
        p.key_lengths = klen;
    }
    if (a_causal && a_causal->i) {
        if (PK->present || !NP->present) {
            p.causal = ATTN_CAUSAL_OFFSET; /* offset = past length (0 without a past) */
            p.causal_offset = (ptrdiff_t)P;
        } else {
            p.causal = ATTN_CAUSAL_BOTTOM_RIGHT; /* offset = key_lengths[b] - Sq */
        }
    }

    if (c->out[3].present) {
        /* qk_matmul_output [B,Hq,Sq,T] through the scores output */
        const attr *a_mode = find_attr(c, "qk_matmul_output_mode");
        qk_onnx_mode = a_mode ? a_mode->i : 0;
        qk_lib_mode = qk_scores_mode(qk_onnx_mode);
        if (qk_lib_mode >= 0) {
            sc = nan_buffer(B * Hq * Sq * T);
            p.scores = sc;
            p.scores_sq = T;
            p.scores_sh = Sq * T;
            p.scores_sb = Hq * Sq * T;
            p.scores_mode = (attn_scores)qk_lib_mode;
        }
    }

    wsz = attn_attention_workspace_size(&p);
    ws = xmalloc(wsz);
    st = attn_attention(&p, ws, wsz);
    if (check_status(r, c, "attn_attention", st)) {
        if (rank3) {
            ydims[0] = (long long)B;
            ydims[1] = (long long)Sq;
            ydims[2] = (long long)(Hq * Dv);
        } else {
            ydims[0] = (long long)B;
            ydims[1] = (long long)Hq;
            ydims[2] = (long long)Sq;
            ydims[3] = (long long)Dv;
        }
        compare_output(r, c, &c->out[0], o, rank3 ? 3 : 4, ydims);
        if (sc) {
            long long qdims[4];
            qdims[0] = (long long)B;
            qdims[1] = (long long)Hq;
            qdims[2] = (long long)Sq;
            qdims[3] = (long long)T;
            compare_output(r, c, &c->out[3], sc, 4, qdims);
            r->qk_checked = 1;
        }
    }
    /* present_key / present_value: the KV cache's buffers */
    pdims[0] = (long long)B;
    pdims[1] = (long long)Hkv;
    pdims[2] = (long long)T;
    pdims[3] = (long long)D;
    if (c->out[1].present) compare_output(r, c, &c->out[1], pk, 4, pdims);
    pdims[3] = (long long)Dv;
    if (c->out[2].present) compare_output(r, c, &c->out[2], pv, 4, pdims);
    if (c->out[3].present && qk_lib_mode < 0) {
        r->partial = 1;
        snprintf(r->notes, sizeof r->notes, "%s checked; qk_matmul_output: not expressible: "
                 "qk_matmul_output_mode %lld has no scores mode",
                 c->out[1].present ? "Y, present_key, present_value" : "Y", qk_onnx_mode);
    }
cleanup:
    free(ws);
    free(o);
    free(sc);
    free(pk);
    free(pv);
    free(fmask);
    free(bmask);
    free(klen);
}

/* ----------------------------------------------------------------------------------------
 * Gelu (opset 20): approximate absent or "none" -> ATTN_ACT_GELU (erf form), "tanh" ->
 * ATTN_ACT_GELU_TANH; elementwise, so the tensor is one row of count floats.
 */
static void run_gelu(const onnx_case *c, result *r)
{
    static const char *const known[] = {"approximate", NULL}, *const kinds[] = {"s", NULL};
    const tensor *x = &c->in[0];
    const attr *ap = find_attr(c, "approximate");
    attn_act act = ATTN_ACT_GELU;
    float *y;
    attn_status st;
    if (!known_attrs(c, known, kinds, r)) return;
    if (ap && strcmp(ap->s, "tanh") == 0) act = ATTN_ACT_GELU_TANH;
    else if (ap && ap->s[0] && strcmp(ap->s, "none") != 0) {
        set_skip(r, "approximate=%s not expressible", ap->s);
        return;
    }
    if (!is_float(x) || !c->out[0].present || x->count == 0) {
        set_skip(r, "%s", "needs a non-empty float input X and output Y");
        return;
    }
    y = nan_buffer(x->count);
    st = attn_activation(act, x->f, x->count, y, x->count, 1, x->count);
    if (check_status(r, c, "attn_activation", st))
        compare_output(r, c, &c->out[0], y, x->rank, x->dims);
    free(y);
}

/* ----------------------------------------------------------------------------------------
 * Driver
 */
#define NOPS 7
static const char *const op_names[NOPS] = {"Softmax", "LayerNormalization", "RMSNormalization",
                                           "MatMul", "Attention", "Gelu", "other"};

static int op_index(const char *op)
{
    int k;
    for (k = 0; k < NOPS - 1; k++)
        if (strcmp(op, op_names[k]) == 0) return k;
    return NOPS - 1;
}

static void run_case(const onnx_case *c, result *r)
{
    if (strcmp(c->domain, "ai.onnx") != 0) {
        snprintf(r->why, sizeof r->why, "op %s of domain %s not in this library", c->op,
                 c->domain);
        r->status = R_SKIP;
    } else if (strcmp(c->op, "Softmax") == 0) {
        run_softmax(c, r);
    } else if (strcmp(c->op, "LayerNormalization") == 0) {
        run_norm(c, r, 0);
    } else if (strcmp(c->op, "RMSNormalization") == 0) {
        run_norm(c, r, 1);
    } else if (strcmp(c->op, "MatMul") == 0) {
        run_matmul(c, r);
    } else if (strcmp(c->op, "Attention") == 0) {
        run_attention(c, r);
    } else if (strcmp(c->op, "Gelu") == 0) {
        run_gelu(c, r);
    } else {
        set_skip(r, "op %s not in this library", c->op);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The *.txt file names in dir, sorted. */
static char **list_cases(const char *dir, size_t *count)
{
    char **names = NULL;
    size_t n = 0, cap = 0;
#ifdef _WIN32
    char pattern[4096];
    struct _finddata_t fd;
    intptr_t hd;
    snprintf(pattern, sizeof pattern, "%s/*.txt", dir);
    hd = _findfirst(pattern, &fd);
    if (hd != -1) {
        do {
            const char *nm = fd.name;
#else
    DIR *dp = opendir(dir);
    struct dirent *de;
    if (dp) {
        while ((de = readdir(dp)) != NULL) {
            const char *nm = de->d_name;
#endif
            size_t len = strlen(nm);
            if (len <= 4 || strcmp(nm + len - 4, ".txt") != 0) continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                names = (char **)realloc(names, cap * sizeof(char *));
                if (!names) {
                    fprintf(stderr, "out of memory\n");
                    exit(2);
                }
            }
            names[n] = (char *)xmalloc(len + 1);
            memcpy(names[n], nm, len + 1);
            n++;
#ifdef _WIN32
        } while (_findnext(hd, &fd) == 0);
        _findclose(hd);
    }
#else
        }
        closedir(dp);
    }
#endif
    if (n) qsort(names, n, sizeof(char *), cmp_str);
    *count = n;
    return names;
}

#define MAXREASONS 32

int main(int argc, char **argv)
{
    char **files;
    size_t nfiles, fi;
    long passed = 0, failed = 0, skipped = 0, partial = 0;
    long att_full = 0, att_cache = 0, att_qk = 0; /* Attention: full passes, how checked */
    long per_op[NOPS][3];
    char reasons[MAXREASONS][512];
    long reason_count[MAXREASONS];
    int nreasons = 0, k;
    onnx_case *c = (onnx_case *)xmalloc(sizeof(onnx_case));

    memset(per_op, 0, sizeof per_op);
    check_begin("onnx");
    if (argc < 2) {
        fprintf(stderr, "usage: %s <directory with the ONNX case files>\n", argv[0]);
        check(0, "no case directory given");
        free(c);
        return check_end("onnx");
    }
    printf("onnx: tolerance |got - want| <= %g + %g * |want| (NaN and inf must match)\n", ATOL,
           RTOL);
    files = list_cases(argv[1], &nfiles);
    check(nfiles > 0, "no case files (*.txt) in %s", argv[1]);

    for (fi = 0; fi < nfiles; fi++) {
        char path[4096], err[256];
        result r;
        int oi;
        memset(&r, 0, sizeof r);
        snprintf(path, sizeof path, "%s/%s", argv[1], files[fi]);
        if (!read_case(path, c, err, sizeof err)) {
            check(0, "%s: cannot read: %s", files[fi], err);
            printf("%s: FAIL (cannot read the file: %s)\n", files[fi], err);
            failed++;
            per_op[NOPS - 1][R_FAIL]++;
            free_case(c);
            continue;
        }
        run_case(c, &r);
        oi = op_index(c->op);
        per_op[oi][r.status]++;
        if (r.status == R_PASS) {
            passed++;
            if (r.partial) printf("%s: pass (%s)\n", c->name, r.notes);
            else printf("%s: pass\n", c->name);
        } else if (r.status == R_FAIL) {
            failed++;
            printf("%s: FAIL (%s)%s%s\n", c->name, r.why, r.partial ? "; " : "",
                   r.partial ? r.notes : "");
        } else {
            skipped++;
            printf("%s: skip: %s\n", c->name, r.why);
            for (k = 0; k < nreasons; k++)
                if (strcmp(reasons[k], r.why) == 0) break;
            if (k == nreasons && nreasons < MAXREASONS) {
                strcpy(reasons[nreasons], r.why);
                reason_count[nreasons++] = 0;
            }
            if (k < MAXREASONS) reason_count[k]++;
        }
        if (r.partial) partial++;
        if (oi == op_index("Attention") && r.status == R_PASS) {
            if (!r.partial) att_full++;
            if (r.via_cache) att_cache++;
            if (r.qk_checked) att_qk++;
        }
        free_case(c);
    }

    for (k = 0; k < NOPS; k++)
        if (per_op[k][0] + per_op[k][1] + per_op[k][2])
            printf("onnx: %-18s %3ld passed, %ld failed, %ld skipped\n", op_names[k],
                   per_op[k][0], per_op[k][1], per_op[k][2]);
    if (per_op[op_index("Attention")][R_PASS])
        printf("onnx: Attention: %ld passed fully (every output checked), %ld of them with "
               "present_key/present_value built and checked through the KV-cache API, %ld with "
               "qk_matmul_output checked through the scores output; %ld partial\n",
               att_full, att_cache, att_qk, partial);
    if (partial)
        printf("onnx: %ld of these cases have a qk_matmul_output that was not checked (its "
               "qk_matmul_output_mode has no scores mode); their Y/present were checked\n",
               partial);
    printf("onnx: the largest error used %.3g of the tolerance (%s)\n", g_worst_ratio,
           g_worst_where[0] ? g_worst_where : "-");
    printf("onnx: %ld cases passed, %ld failed, %ld skipped (", passed, failed, skipped);
    if (!skipped) printf("none");
    for (k = 0; k < nreasons; k++)
        printf("%s%ld x %s", k ? "; " : "", reason_count[k], reasons[k]);
    printf(")\n");

    for (fi = 0; fi < nfiles; fi++) free(files[fi]);
    free(files);
    free(c);
    return check_end("onnx");
}
