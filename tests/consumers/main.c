/* A consumer of attn.h (tests/consumers/run.sh builds it in every supported way): one
 * softmax row checked against a double-precision reference, and the path the build chose.
 * Usage: consumer [ISA [EXP]] - fails unless attn_isa() is ISA and attn_exp_impl() is EXP
 * ("-" or absent: any). Prints one line: isa, exp, largest relative error, verdict. */
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { N = 11 }; /* a full AVX2 vector, a full NEON vector and a tail */

int main(int argc, char **argv)
{
    float x[N], y[N];
    double sum = 0.0, err = 0.0;
    int i, bad = 0;
    const char *want_isa = argc > 1 ? argv[1] : "-", *want_exp = argc > 2 ? argv[2] : "-";
    attn_status st;

    for (i = 0; i < N; i++) x[i] = 0.75f * (float)i - 3.0f;
    st = attn_softmax(x, N, y, N, 1, N, 1.0f);
    if (st != ATTN_OK) {
        printf("attn_softmax: %s\n", attn_status_string(st));
        return 1;
    }
    for (i = 0; i < N; i++) sum += exp((double)x[i] - (double)x[N - 1]);
    for (i = 0; i < N; i++) {
        double ref = exp((double)x[i] - (double)x[N - 1]) / sum;
        double e = fabs((double)y[i] - ref) / ref;
        if (!(e <= 1e-6)) bad = 1; /* NaN too */
        if (e > err) err = e;
    }
    if (strcmp(want_isa, "-") != 0 && strcmp(want_isa, attn_isa()) != 0) bad = 1;
    if (strcmp(want_exp, "-") != 0 && strcmp(want_exp, attn_exp_impl()) != 0) bad = 1;
    printf("attn %d.%d.%d isa=%s exp=%s softmax err %.1e (want isa=%s exp=%s): %s\n",
           ATTN_VERSION_MAJOR, ATTN_VERSION_MINOR, ATTN_VERSION_PATCH, attn_isa(),
           attn_exp_impl(), err, want_isa, want_exp, bad ? "WRONG" : "ok");
    return bad;
}
