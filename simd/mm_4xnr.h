/* simd/mm_4xnr.h - attn.h's generic matmul microkernel over the vector layer: a
 * 4 x (4 * ATTN__VW) tile (the scalar path's). Compiles on its own. */
#ifndef ATTN_SIMD_MM_4XNR_H
#define ATTN_SIMD_MM_4XNR_H
#include "generic.h"

/* the generic microkernel over the vector layer: a 4 x (4 * ATTN__VW) tile */
#define ATTN__MR 4
#define ATTN__NR (4 * ATTN__VW)
static ATTN__FORCE_INLINE void attn__mm_ukr_body(size_t rows, size_t kc, const float *a,
                                                 size_t ars, size_t acs, const float *b,
                                                 size_t ldb, float *c, size_t ldc, float alpha,
                                                 float beta, int mode)
{
    attn__v acc[ATTN__MR][4];
    const attn__v va = attn__vset1(alpha), vb = attn__vset1(beta);
    size_t i, v, p;
    (void)rows; /* all ATTN__MR rows are computed and written */
    for (i = 0; i < ATTN__MR; i++)
        for (v = 0; v < 4; v++) acc[i][v] = attn__vzero();
    for (p = 0; p < kc; p++, a += acs, b += ldb) {
        const attn__v b0 = attn__vload(b), b1 = attn__vload(b + ATTN__VW);
        const attn__v b2 = attn__vload(b + 2 * ATTN__VW), b3 = attn__vload(b + 3 * ATTN__VW);
        for (i = 0; i < ATTN__MR; i++) {
            const attn__v t = attn__vset1(a[i * ars]);
            acc[i][0] = attn__vfma(t, b0, acc[i][0]);
            acc[i][1] = attn__vfma(t, b1, acc[i][1]);
            acc[i][2] = attn__vfma(t, b2, acc[i][2]);
            acc[i][3] = attn__vfma(t, b3, acc[i][3]);
        }
    }
    for (i = 0; i < ATTN__MR; i++)
        for (v = 0; v < 4; v++) {
            float *cp = c + i * ldc + v * ATTN__VW;
            if (mode == 0) attn__vstore(cp, acc[i][v]);
            else if (mode == 2) attn__vstore(cp, attn__vfma(va, acc[i][v], attn__vload(cp)));
            else if (beta != 0.0f)
                attn__vstore(cp, attn__vfma(vb, attn__vload(cp), attn__vmul(va, acc[i][v])));
            else attn__vstore(cp, attn__vmul(va, acc[i][v]));
        }
}
#endif
