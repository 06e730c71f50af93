/* report.c - one shape across every implementation of an op, the rows it prints, the
 * ratios table after the main one, and the notes at the end.
 *
 * For every shape, each implementation is timed (timing.c). impls[0] is the baseline of
 * the ratio column (the naive scalar loop, or for matmul-2t the library on one thread);
 * the ratio of any other row is its value over the baseline's for the same shape (higher =
 * faster), "-" where the baseline was not run. After timing, each implementation's output
 * is compared with the reference (the first implementation run for that shape; for peers,
 * the op's child_ref entry, run once in the child); the largest difference is reported in
 * the notes.
 */
#include "bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every row, for the ratios table. */
struct result {
    char op[16], shape[48], impl[48];
    double value, share;
    const char *limit;
};
static struct result *g_res;
static size_t g_nres, g_cres;

static void add_result(const char *op, const char *shape, const char *impl, double value,
                       double share, const char *limit)
{
    struct result *r;
    if (g_nres == g_cres) {
        g_cres = g_cres ? 2 * g_cres : 256;
        g_res = (struct result *)realloc(g_res, g_cres * sizeof *g_res);
        if (!g_res)
            die("realloc", "out of memory");
    }
    r = &g_res[g_nres++];
    copy_str(r->op, sizeof r->op, op);
    copy_str(r->shape, sizeof r->shape, shape);
    copy_str(r->impl, sizeof r->impl, impl);
    r->value = value;
    r->share = share;
    r->limit = limit;
}

/* Notes gathered from children and from the run. */
static char g_notes[64][200];
static size_t g_nnotes;

void add_note(const char *text)
{
    size_t i;
    for (i = 0; i < g_nnotes; i++)
        if (strcmp(g_notes[i], text) == 0)
            return;
    if (g_nnotes < sizeof g_notes / sizeof g_notes[0])
        copy_str(g_notes[g_nnotes++], sizeof g_notes[0], text);
}

/* Notes of this process's measurements, printed after the ops' notes. */
static char g_rnotes[32][160];
static size_t g_nrnotes;

void add_run_note(const char *text)
{
    if (g_nrnotes < sizeof g_rnotes / sizeof g_rnotes[0])
        copy_str(g_rnotes[g_nrnotes++], sizeof g_rnotes[0], text);
}

void print_header_row(void)
{
    if (g_opt.csv)
        printf("op,shape,impl,metric,value,ratio\n");
    else
        printf("%-10s %-18s %-20s %-8s %9s %7s %6s  %s\n", "op", "shape", "impl", "metric",
               "value", "spread", "ratio", "note");
}

/* One row. ratio NaN = no baseline ("-", empty in CSV). */
static void print_row(const struct op *op, const char *shape, const char *impl, double value,
                      double spread, double ratio, const char *note)
{
    if (g_opt.csv) {
        printf("%s,%s,%s,%s,%.6g,", op->name, shape, impl, op->metric, value);
        if (!isnan(ratio))
            printf("%.4f", ratio);
        printf("\n");
    } else {
        char r[16];
        if (isnan(ratio))
            snprintf(r, sizeof r, "-");
        else
            snprintf(r, sizeof r, "%.2f", ratio);
        printf("%-10s %-18s %-20s %-8s %9.3f %6.1f%% %6s  %s\n", op->name, shape, impl,
               op->metric, value, 100.0 * spread, r, note ? note : "");
    }
    fflush(stdout);
}

static void print_csv_extra(const struct op *op, const char *shape, const char *impl,
                            const char *metric, double value)
{
    if (g_opt.csv)
        printf("%s,%s,%s,%s,%.6g,\n", op->name, shape, impl, metric, value);
}

void print_derived(const struct op *op, const char *shape, const char *impl,
                   const char *metric, double value, const char *note)
{
    if (g_opt.child)
        return;
    if (g_opt.csv)
        printf("%s,%s,%s,%s,%.6g,\n", op->name, shape, impl, metric, value);
    else
        printf("%-10s %-18s %-20s %-8s %9.3f %7s %6s  %s\n", op->name, shape, impl, metric,
               value, "", "", note ? note : "");
    fflush(stdout);
}

/* In a peer child: times the peer's entries of `op` on this shape, writes CSV rows with
 * the value, the spread, the difference from the reference implementation and the
 * extra memory. */
static void child_shape(struct op *op, const char *shape, double work, void *data,
                        const float *out, size_t out_count)
{
    const struct peer *p = g_opt.child;
    float *ref = NULL;
    size_t i;
    for (i = 0; i < op->nimpl; i++) {
        const struct impl *im = &op->impls[i];
        char label[64];
        double spread, ns, diff;
        if (!im->group || strcmp(im->group, p->group) != 0)
            continue;
        snprintf(label, sizeof label, "%s%s", p->name, im->name);
        if (predict_skip(op, i, label, shape))
            continue;
        if (!ref) {
            const struct impl *r = &op->impls[op->child_ref];
            r->run(r->ctx, data);
            ref = scratch(BUF_REF, out_count);
            memcpy(ref, out, out_count * sizeof(float));
        }
        if (im->prepare)
            im->prepare(im->ctx, data);
        ns = time_impl(im, data, &spread, NULL);
        if (i < BENCH_MAX_IMPLS)
            g_call_ns[i][g_predict.variant] = ns;
        diff = normalized_diff(out, ref, out_count);
        printf("%s,%s,%s,%s,%.9g,\n", op->name, shape, label, op->metric, work / ns);
        printf("%s,%s,%s,spread,%.6g,\n", op->name, shape, label, spread);
        printf("%s,%s,%s,diff,%.6g,\n", op->name, shape, label, diff);
        if (im->extra)
            printf("%s,%s,%s,extra_bytes,%.0f,\n", op->name, shape, label, im->extra(data));
        fflush(stdout);
        if (im->release)
            im->release(im->ctx);
    }
}

/* The limit an implementation on `threads` threads is held to: the FMA peak scales. */
static const char *limit_name(const struct limit *lim, int threads)
{
    if (threads > 1 && strcmp(lim->name, "fma_peak") == 0) return "fma_peak_x2";
    if (threads > 1 && strcmp(lim->name, "avx512_fma_peak") == 0) return "avx512_fma_peak_x2";
    return lim->name;
}

void bench_shape(struct op *op, const char *shape, double work, void *data, const float *out,
                 size_t out_count, int run_baseline, const struct limit *lim)
{
    float *ref = NULL;
    const char *ref_name = NULL;
    double base = NAN;
    size_t i;
    if (g_opt.child) {
        child_shape(op, shape, work, data, out, out_count);
        return;
    }
    for (i = 0; i < op->nimpl; i++) {
        const struct impl *im = &op->impls[i];
        double spread, ns, value, share = NAN, diff = NAN, lv;
        int same = -1;
        char note[96] = "", mem[32];
        if (im->group || (i == 0 && !run_baseline) || predict_skip(op, i, im->name, shape))
            continue;
        if (im->prepare)
            im->prepare(im->ctx, data);
        ns = time_impl(im, data, &spread, NULL);
        if (i < BENCH_MAX_IMPLS)
            g_call_ns[i][g_predict.variant] = ns;
        value = work / ns;
        if (i == 0)
            base = value;
        if (!ref) {
            ref = scratch(BUF_REF, out_count);
            memcpy(ref, out, out_count * sizeof(float));
            ref_name = im->name;
        } else {
            diff = normalized_diff(out, ref, out_count);
            same = memcmp(out, ref, out_count * sizeof(float)) == 0;
            if (!(diff <= op->max_diff)) {
                op->max_diff = diff;
                copy_str(op->max_diff_impl, sizeof op->max_diff_impl, im->name);
                copy_str(op->max_diff_shape, sizeof op->max_diff_shape, shape);
                copy_str(op->max_diff_ref, sizeof op->max_diff_ref, ref_name);
            }
        }
        lv = lim->value * (im->threads > 1 ? im->threads : 1);
        if (lv > 0.0)
            share = value * lim->factor / lv;
        if (im->extra)
            snprintf(note, sizeof note, "mem %s", fmt_bytes(im->extra(data), mem, sizeof mem));
        if (im->threads > 1 && same >= 0)
            snprintf(note + strlen(note), sizeof note - strlen(note),
                     "%sbit-identical to %s (1 thread): %s", note[0] ? "; " : "", ref_name,
                     same ? "yes" : "NO");
        print_row(op, shape, im->name, value, spread, isnan(base) ? NAN : value / base, note);
        if (im->extra)
            print_csv_extra(op, shape, im->name, "extra_bytes", im->extra(data));
        if (im->threads > 1 && same >= 0)
            print_csv_extra(op, shape, im->name, "bit_identical", same);
        add_result(op->name, shape, im->name, value, share, limit_name(lim, im->threads));
        if (im->release)
            im->release(im->ctx);
    }
    for (i = 0; i < g_nprows; i++) {
        const struct prow *r = &g_prows[i];
        double share = NAN, lv = lim->value * (r->threads > 1 ? r->threads : 1);
        char note[96] = "", mem[32];
        if (strcmp(r->shape, shape) != 0)
            continue;
        if (lv > 0.0)
            share = r->value * lim->factor / lv;
        if (r->extra >= 0.0)
            snprintf(note, sizeof note, "mem %s (+ library buffers)",
                     fmt_bytes(r->extra, mem, sizeof mem));
        if (r->nproc > 1)
            snprintf(note + strlen(note), sizeof note - strlen(note),
                     "%smedian of %d processes", note[0] ? "; " : "", r->nproc);
        print_row(op, shape, r->impl, r->value, r->spread, isnan(base) ? NAN : r->value / base,
                  note);
        if (r->extra >= 0.0)
            print_csv_extra(op, shape, r->impl, "extra_bytes", r->extra);
        add_result(op->name, shape, r->impl, r->value, share, limit_name(lim, r->threads));
        if (!(r->diff <= op->peer_max_diff)) {
            op->peer_max_diff = r->diff;
            copy_str(op->peer_max_diff_impl, sizeof op->peer_max_diff_impl, r->impl);
            copy_str(op->peer_max_diff_shape, sizeof op->peer_max_diff_shape, shape);
        }
    }
}

/* The ratios table: for each op and shape, primary / every other non-naive impl, and the
 * primary's share of the binding limit; in CSV, ratio_vs_<impl> and share_of_<limit> rows. */
void print_ratios(struct op *const *ops, size_t nops)
{
    size_t oi, i, j, s;
    if (!g_opt.csv)
        printf("\nratios: attn / peer (> 1: attn faster); share = attn's value / the binding "
               "limit\n");
    for (oi = 0; oi < nops; oi++) {
        const struct op *op = ops[oi];
        const char *cols[16];
        size_t ncol = 0;
        if (!op->ran)
            continue;
        for (i = 0; i < g_nres; i++) {
            const struct result *r = &g_res[i];
            int seen = 0;
            if (strcmp(r->op, op->name) != 0 || strcmp(r->impl, "naive") == 0 ||
                strcmp(r->impl, op->primary) == 0)
                continue;
            for (j = 0; j < ncol; j++)
                if (strcmp(cols[j], r->impl) == 0)
                    seen = 1;
            if (!seen && ncol < 16)
                cols[ncol++] = r->impl;
        }
        if (!g_opt.csv) {
            printf("%-10s %-18s", op->name, "shape");
            for (j = 0; j < ncol; j++) {
                char h[64];
                snprintf(h, sizeof h, "/%s", cols[j]);
                printf(" %*s", (int)(strlen(h) > 9 ? strlen(h) : 9), h);
            }
            printf(" %8s  %s\n", "share", "limit");
        }
        for (s = 0; s < g_nres; s++) {
            const struct result *pr = &g_res[s];
            if (strcmp(pr->op, op->name) != 0 || strcmp(pr->impl, op->primary) != 0)
                continue;
            if (!g_opt.csv)
                printf("%-10s %-18s", "", pr->shape);
            for (j = 0; j < ncol; j++) {
                double ratio = NAN;
                size_t w = strlen(cols[j]) + 1 > 9 ? strlen(cols[j]) + 1 : 9;
                for (i = 0; i < g_nres; i++)
                    if (strcmp(g_res[i].op, op->name) == 0 &&
                        strcmp(g_res[i].shape, pr->shape) == 0 &&
                        strcmp(g_res[i].impl, cols[j]) == 0)
                        ratio = pr->value / g_res[i].value;
                if (g_opt.csv) {
                    if (!isnan(ratio))
                        printf("%s,%s,%s,ratio_vs_%s,%.4f,\n", op->name, pr->shape, pr->impl,
                               cols[j], ratio);
                } else if (isnan(ratio))
                    printf(" %*s", (int)w, "-");
                else
                    printf(" %*.2f", (int)w, ratio);
            }
            if (!g_opt.csv) {
                if (isnan(pr->share))
                    printf(" %8s  %s\n", "-", pr->limit);
                else
                    printf(" %7.1f%%  %s\n", 100.0 * pr->share, pr->limit);
            }
        }
        if (g_opt.csv)
            for (i = 0; i < g_nres; i++)
                if (strcmp(g_res[i].op, op->name) == 0 && !isnan(g_res[i].share))
                    printf("%s,%s,%s,share_of_%s,%.4f,\n", op->name, g_res[i].shape,
                           g_res[i].impl, g_res[i].limit, g_res[i].share);
    }
}

/* Each op's note and largest differences, then the run's and the peers' notes. */
void print_notes(struct op *const *ops, size_t nops)
{
    size_t i;
    fprintf(g_info, "\nnotes:\n");
    for (i = 0; i < nops; i++) {
        const struct op *op = ops[i];
        const double warn = op->warn_diff > 0.0 ? op->warn_diff : 1e-4;
        if (!op->ran)
            continue;
        fprintf(g_info, "%-10s %s.", op->name, op->note);
        if (op->max_diff_impl[0])
            fprintf(g_info, " Largest max|impl-ref|/max|ref|: %.1e (%s vs %s, %s).",
                    op->max_diff, op->max_diff_impl, op->max_diff_ref, op->max_diff_shape);
        if (op->max_diff_impl[0] && !(op->max_diff <= warn))
            fprintf(g_info, " WARNING: above %.0e, check the implementation.", warn);
        if (op->peer_max_diff_impl[0])
            fprintf(g_info, " Peers vs %s: largest %.1e (%s, %s).",
                    op->impls[op->child_ref].name, op->peer_max_diff, op->peer_max_diff_impl,
                    op->peer_max_diff_shape);
        if (op->peer_max_diff_impl[0] && !(op->peer_max_diff <= warn))
            fprintf(g_info, " WARNING: a peer differs by more than %.0e.", warn);
        fprintf(g_info, "\n");
    }
    for (i = 0; i < g_nrnotes; i++)
        fprintf(g_info, "limit      %s\n", g_rnotes[i]);
    for (i = 0; i < g_nnotes; i++)
        fprintf(g_info, "peer       %s\n", g_notes[i]);
    free(g_res);
    g_res = NULL;
    g_nres = g_cres = 0;
}
