/* The library as a plain `cc -O2` build compiles it on x86-64: no instruction-set flags, so
 * every path is compiled (by target pragmas) and each call goes to one chosen at run time.
 * A private copy (ATTN_STATIC), pinned to the path the rest of the benchmark is built for,
 * gives the attn-dispatched rows: the one-binary build beside the single-path build of the
 * same path, in the same run. Compiled on x86-64 for every SIMD build (bench/meson.build). */
#define ATTN_STATIC
#define ATTN_IMPLEMENTATION
#include "attn.h"

#include "dispatched.h"

int bench_dispatched_pin(const char *isa) { return attn_use_isa(isa) == ATTN_OK; }

const char *bench_dispatched_isa(void) { return attn_isa(); }

attn_status bench_dispatched_matmul(attn_trans ta, attn_trans tb, size_t m, size_t n, size_t k,
                                    float alpha, const float *a, size_t lda, const float *b,
                                    size_t ldb, float beta, float *c, size_t ldc,
                                    void *workspace, size_t workspace_size)
{
    return attn_matmul(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace,
                       workspace_size);
}

attn_status bench_dispatched_softmax(const float *x, size_t ldx, float *y, size_t ldy,
                                     size_t rows, size_t n, float scale)
{
    return attn_softmax(x, ldx, y, ldy, rows, n, scale);
}

attn_status bench_dispatched_attention(const attn_attention_params *p, void *workspace,
                                       size_t workspace_size)
{
    return attn_attention(p, workspace, workspace_size);
}
