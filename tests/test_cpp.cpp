// test_cpp: attn.h compiled as C++ (C++11, -Wall -Wextra -Werror) in both modes:
// this unit holds the implementation, and the declarations have C linkage.
#define ATTN_IMPLEMENTATION
#include "attn.h"
#include <cmath>
#include <cstdio>

int main()
{
    float x[3] = {2.0f, 1.5f, 1.0f};
    int failed = 0;
    if (attn_softmax(x, 3, x, 3, 1, 3, 1.0f) != ATTN_OK) failed++;
    if (std::fabs(x[0] - 0.506480391) > 1e-6) failed++;
    attn_attention_params p = attn_attention_init(1, 1, 1, 1, 1, 3, 3, x, x, x, x, ATTN_LAYOUT_BHLD);
    if (attn_attention(&p, NULL, 0) != ATTN_ERR_WORKSPACE) failed++;
    std::printf("cpp [%s]: %d passed, %d failed\n", attn_isa(), 3 - failed, failed);
    return failed ? 1 : 0;
}
