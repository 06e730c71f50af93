/* test_dispatch.c - the build that dispatches at run time (x86-64, no instruction-set
 * flags): for every path this CPU runs, attn_use_isa() pins it, attn_isa() names it, and the
 * calls of dispatch_ops.h give the same bits as a build of that one path (dispatch_ref.c,
 * compiled with its own flags). Paths this CPU cannot run are said not to be run. */
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"
#include "dispatch_ops.h"

#if !defined(ATTN_DISPATCH)
#error "test_dispatch.c is built without instruction-set flags, to dispatch"
#endif

size_t ref_scalar(float *out);
size_t ref_avx2(float *out);
size_t ref_avx512(float *out);
size_t ws_scalar(size_t *ws);
size_t ws_avx2(size_t *ws);
size_t ws_avx512(size_t *ws);

enum { OUT = 64 * 1024 };

int main(void)
{
    static float got[OUT], want[OUT];
    static const char *const names[3] = {"scalar", "avx2", "avx512"};
    size_t (*const refs[3])(float *) = {ref_scalar, ref_avx2, ref_avx512};
    size_t (*const wss[3])(size_t *) = {ws_scalar, ws_avx2, ws_avx512};
    size_t ws[DSP_NWS], wref[DSP_NWS], wmax[DSP_NWS] = {0};
    const char *best;
    int t, ran = 0;
    check_begin("dispatch");
    best = attn_isa();
    printf("dispatch: this CPU's best path: %s\n", best);
    /* workspace queries: the largest size of the paths this CPU runs, whatever path is
     * pinned, so that a buffer sized once serves a path pinned later */
    dispatch_ws(ws);
    check(attn_use_isa("neon") == ATTN_ERR_ARG, "attn_use_isa accepted a path not compiled in");
    check(attn_use_isa("nonsense") == ATTN_ERR_ARG, "attn_use_isa accepted an unknown name");
    check(strcmp(attn_isa(), best) == 0, "a refused attn_use_isa changed the path");
    for (t = 0; t < 3; t++) {
        size_t n, m, i, diff = 0;
        if (attn_use_isa(names[t]) != ATTN_OK) {
            printf("dispatch: the %s path NOT run (this CPU lacks it)\n", names[t]);
            continue;
        }
        ran++;
        {
            size_t w[DSP_NWS], j;
            dispatch_ws(w);
            wss[t](wref);
            for (j = 0; j < DSP_NWS; j++) {
                check(w[j] == ws[j], "%s pinned: workspace query %zu gave %zu, %zu before",
                      names[t], j, w[j], ws[j]);
                check(wref[j] > 0 && ws[j] >= wref[j],
                      "workspace query %zu: %zu, below the %s build's %zu", j, ws[j],
                      names[t], wref[j]);
                if (wref[j] > wmax[j]) wmax[j] = wref[j];
            }
        }
        check(strcmp(attn_isa(), names[t]) == 0, "attn_isa() = %s after pinning %s", attn_isa(),
              names[t]);
        memset(got, 0, sizeof got);
        memset(want, 0xFF, sizeof want);
        n = dispatch_ops(got);
        m = refs[t](want);
        check(n == m && n <= OUT, "%s: %zu / %zu outputs", names[t], n, m);
        for (i = 0; i < n && i < m; i++) diff += memcmp(got + i, want + i, sizeof(float)) != 0;
        check(diff == 0, "%s: %zu of %zu outputs differ from the single-path build", names[t],
              diff, n);
        printf("dispatch: the %s path: %zu outputs, bit for bit the single-path build's\n",
               names[t], n);
    }
    check(ran >= 1, "no path ran");
    if (ran == 3) {
        size_t j;
        for (j = 0; j < DSP_NWS; j++)
            check(ws[j] == wmax[j], "workspace query %zu: %zu, the largest path's %zu", j,
                  ws[j], wmax[j]);
        printf("dispatch: workspace queries the largest of the three paths' (%zu, %zu, %zu, ..."
               ")\n", ws[0], ws[1], ws[2]);
    }
    check(attn_use_isa("auto") == ATTN_OK && strcmp(attn_isa(), best) == 0,
          "attn_use_isa(\"auto\") did not restore the best path");
    check(attn_use_isa(NULL) == ATTN_OK, "attn_use_isa(NULL) refused");
    return check_end("dispatch");
}
