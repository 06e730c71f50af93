/* test_link_static: with ATTN_STATIC, each translation unit gets its own private copy
 * of the library; two units doing so must link (no duplicate symbols) and build
 * warning-free although each uses only some functions. */
#define ATTN_STATIC
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include "check.h"

float link_static_b_rmsnorm_first(void); /* test_link_static_b.c */

int main(void)
{
    float x[3] = {2.0f, 1.5f, 1.0f};
    check_begin("link_static");
    check(attn_softmax(x, 3, x, 3, 1, 3, 1.0f) == ATTN_OK, "softmax in unit a");
    check(fabs(x[0] - 0.506480391) < 1e-6, "unit a: softmax([2,1.5,1])[0] = %g", (double)x[0]);
    /* rmsnorm([3,4]) = [3,4] / sqrt(12.5) */
    check(fabs(link_static_b_rmsnorm_first() - 3.0 / sqrt(12.5)) < 1e-6,
          "unit b: its own static copy");
    return check_end("link_static");
}
