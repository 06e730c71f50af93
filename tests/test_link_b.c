/* test_link, second unit: declarations only. */
#include "attn.h"

float link_b_softmax_first(void);
float link_b_softmax_first(void)
{
    float x[3] = {2.0f, 1.5f, 1.0f}, y[3];
    if (attn_softmax(x, 3, y, 3, 1, 3, 1.0f) != ATTN_OK) return -1.0f;
    return y[0];
}
