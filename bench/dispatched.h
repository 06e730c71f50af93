/* bench/dispatched.c: the library as a plain build compiles it (see there) */
#ifndef ATTN_BENCH_DISPATCHED_H
#define ATTN_BENCH_DISPATCHED_H
#include "attn.h"
int bench_dispatched_pin(const char *isa); /* 1 when the dispatcher took it */
const char *bench_dispatched_isa(void);
attn_status bench_dispatched_matmul(attn_trans ta, attn_trans tb, size_t m, size_t n, size_t k,
                                    float alpha, const float *a, size_t lda, const float *b,
                                    size_t ldb, float beta, float *c, size_t ldc,
                                    void *workspace, size_t workspace_size);
attn_status bench_dispatched_softmax(const float *x, size_t ldx, float *y, size_t ldy,
                                     size_t rows, size_t n, float scale);
attn_status bench_dispatched_attention(const attn_attention_params *p, void *workspace,
                                       size_t workspace_size);
#endif
