/* test_paths, second unit: the implementation with softmax's short-row kernel switched
 * off (ATTN__SM_SHORT_N=0), private to this unit, so that test_paths.c can hold every call
 * of the short kernel to the general path's bits. */
#define ATTN_STATIC
#define ATTN__SM_SHORT_N 0
#define ATTN_IMPLEMENTATION
#include "attn.h"

int paths_general_softmax(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                          size_t n, float scale);
int paths_general_softmax(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                          size_t n, float scale)
{
    return (int)attn_softmax(x, ldx, y, ldy, rows, n, scale);
}
