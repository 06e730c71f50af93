/* test_link_static, second unit: its own static copy of the implementation. */
#define ATTN_STATIC
#define ATTN_IMPLEMENTATION
#include "attn.h"

float link_static_b_rmsnorm_first(void);
float link_static_b_rmsnorm_first(void)
{
    float x[2] = {3.0f, 4.0f}, y[2];
    if (attn_rmsnorm(x, 2, y, 2, 1, 2, NULL, 0.0f) != ATTN_OK) return -1.0f;
    return y[0];
}
