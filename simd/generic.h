/* simd/generic.h - vector operations derived once from an ISA file's primitives, each
 * behind the ISA's "has it natively" flag where one exists. Compiles on its own (with the
 * scalar layer unless an ISA file was included first). */
#ifndef ATTN_SIMD_GENERIC_H
#define ATTN_SIMD_GENERIC_H
#ifndef ATTN__VW
#include "scalar.h"
#endif

/* the least lane of a */
static inline float attn__vhmin(attn__v a) { return -attn__vhmax(attn__vsub(attn__vzero(), a)); }

#ifndef ATTN__HAVE_VHRED8
/* out[k] = the sum (op 0), max (1) or min (2) of v[k]'s lanes, k < 8 (ISAs without a
 * batched tree: one by one) */
static ATTN__FORCE_INLINE void attn__vhred8(const attn__v *v, float *out, int op)
{
    int k;
    for (k = 0; k < 8; k++)
        out[k] = op == 0 ? attn__vhsum(v[k]) : op == 1 ? attn__vhmax(v[k]) : attn__vhmin(v[k]);
}
#endif

#ifndef ATTN__HAVE_VSTREAM
/* ISAs without a non-temporal store (or whose cores stream full-line writes themselves) */
#define ATTN__HAVE_VSTREAM 0
static inline void attn__vstream(float *p, attn__v v) { attn__vstore(p, v); }
static inline void attn__vstream_fence(void) {}
#endif


/* the lanes' maximum / minimum of four vectors */
static ATTN__FORCE_INLINE attn__v attn__vmax4(attn__v a, attn__v b, attn__v c, attn__v d)
{
    return attn__vmax(attn__vmax(a, b), attn__vmax(c, d));
}
static ATTN__FORCE_INLINE attn__v attn__vmin4(attn__v a, attn__v b, attn__v c, attn__v d)
{
    return attn__vmin(attn__vmin(a, b), attn__vmin(c, d));
}

#endif
