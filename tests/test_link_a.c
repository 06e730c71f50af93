/* test_link: two translation units include attn.h for its declarations and a third,
 * attn_impl.c, defines ATTN_IMPLEMENTATION. Linking proves there are no duplicate
 * definitions, and both units calling the library proves the declarations match the
 * definitions. */
#include "attn.h"
#include "check.h"

float link_b_softmax_first(void); /* test_link_b.c */

int main(void)
{
    float x[3] = {2.0f, 1.5f, 1.0f};
    check_begin("link");
    check(attn_softmax(x, 3, x, 3, 1, 3, 1.0f) == ATTN_OK, "softmax in unit a");
    check(fabs(x[0] - 0.506480391) < 1e-6, "unit a: softmax([2,1.5,1])[0] = %g", (double)x[0]);
    check(fabs(link_b_softmax_first() - 0.506480391) < 1e-6,
          "unit b: softmax through the declarations only");
    return check_end("link");
}
