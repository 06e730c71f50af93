/* ---- storage types: f32, f16, bf16 arrays converted; q8_0, q4_0 blocks ----------------- */

ATTN_API size_t attn_dtype_size(attn_dtype type)
{
    switch (type) {
    case ATTN_F32: return 4;
    case ATTN_F16: return 2;
    case ATTN_BF16: return 2;
    default: break;
    }
    return 0;
}

#define ATTN__QK 32 /* elements per block of the block types */

/* Bytes per block (per element for the element types); 0 for an invalid type */
static ATTN__FORCE_INLINE size_t attn__dt_block_bytes(attn_dtype type)
{
    switch (type) {
    case ATTN_Q8_0: return 2 + ATTN__QK;
    case ATTN_Q4_0: return 2 + ATTN__QK / 2;
    default: break;
    }
    return attn_dtype_size(type);
}

ATTN_API size_t attn_dtype_block(attn_dtype type)
{
    if (type == ATTN_Q8_0 || type == ATTN_Q4_0) return ATTN__QK;
    return attn_dtype_size(type) ? 1 : 0;
}

/* Whether a KV cache (or attn_attention's K and V) can be stored as type t: every type but
 * q4_0 */
static int attn__kv_dtype(attn_dtype t) { return attn_dtype_block(t) && t != ATTN_Q4_0; }

ATTN_API size_t attn_dtype_bytes(attn_dtype type, size_t n)
{
    const size_t bs = attn__dt_block_bytes(type), blk = attn_dtype_block(type);
    if (!bs || n % blk) return 0;
    n /= blk;
    return n > (size_t)PTRDIFF_MAX / bs ? 0 : n * bs;
}

/* The address of element i of an array of type t at p (for the block types: i a multiple of
 * ATTN__QK, the address of its block) */
static ATTN__FORCE_INLINE const void *attn__dt_at(attn_dtype t, const void *p, size_t i)
{
    if (t == ATTN_F32) return (const float *)p + i;
    if (t == ATTN_F16 || t == ATTN_BF16) return (const uint16_t *)p + i;
    return (const unsigned char *)p + i / ATTN__QK * attn__dt_block_bytes(t);
}

/* A block's scale (binary16, little-endian, any alignment) */
static ATTN__FORCE_INLINE uint16_t attn__q_scale(const unsigned char *blk)
{
    return (uint16_t)(blk[0] | blk[1] << 8);
}

/* ATTN__VW elements of the block at blk from element off (a multiple of ATTN__VW),
 * dequantized exactly (as ggml does, zeros signed): d * q, d * (nibble - 8) */
static ATTN__FORCE_INLINE attn__v attn__vload_q(attn_dtype t, const unsigned char *blk,
                                                size_t off)
{
    const attn__v d = attn__vset1_f16(attn__q_scale(blk));
    if (t == ATTN_Q8_0) return attn__vmul(d, attn__vload_i8((const int8_t *)(blk + 2 + off)));
    return attn__vmul(d, attn__vload_u4(blk + 2 + off % 16, off >= 16));
}

/* The 32 values of the q8_0 or q4_0 (t) block at blk as ATTN__QK / ATTN__VW vectors, times
 * d: the block's scale (attn__vset1_f16 of attn__q_scale: d * q exactly, the bits
 * attn__vload_q gives) or 1 (the integers; the compiler drops the product) */
static ATTN__FORCE_INLINE void attn__vload_qblock(attn_dtype t, const void *blk, attn__v d,
                                                  attn__v *w)
{
    size_t v;
    if (t == ATTN_Q4_0) {
        attn__vload_q4_32((const uint8_t *)blk + 2, d, w);
        return;
    }
    attn__vload_q8_32((const int8_t *)blk + 2, w);
    ATTN__UNROLL
    for (v = 0; v < ATTN__QK / ATTN__VW; v++) w[v] = attn__vmul(d, w[v]);
}
/* attn__vload_qblock of a block's own scale */
static ATTN__FORCE_INLINE void attn__vload_qdeq(attn_dtype t, const void *blk, attn__v *w)
{
    attn__vload_qblock(t, blk, attn__vset1_f16(attn__q_scale((const unsigned char *)blk)), w);
}

/* ATTN__VW elements of type t at element i of p, widened to floats (t: a constant after
 * inlining, so each conversion loop below is specialized) */
/* (block types: p a block's address, i a multiple of ATTN__VW) */
static ATTN__FORCE_INLINE attn__v attn__vload_dt(attn_dtype t, const void *p, size_t i)
{
    if (t == ATTN_F16) return attn__vload_f16((const uint16_t *)p + i);
    if (t == ATTN_BF16) return attn__vload_bf16((const uint16_t *)p + i);
    if (t == ATTN_Q8_0 || t == ATTN_Q4_0)
        return attn__vload_q(t, (const unsigned char *)attn__dt_at(t, p, i), i % ATTN__QK);
    return attn__vload((const float *)p + i);
}
static ATTN__FORCE_INLINE void attn__vstore_dt(attn_dtype t, void *p, size_t i, attn__v v)
{
    if (t == ATTN_F16) attn__vstore_f16((uint16_t *)p + i, v);
    else if (t == ATTN_BF16) attn__vstore_bf16((uint16_t *)p + i, v);
    else attn__vstore((float *)p + i, v);
}
/* the same for n < ATTN__VW elements (nothing past element i + n touched) */
static ATTN__FORCE_INLINE attn__v attn__vload_dt_part(attn_dtype t, const void *p, size_t i,
                                                      size_t n)
{
    if (t == ATTN_F16) return attn__vload_f16_part((const uint16_t *)p + i, n);
    if (t == ATTN_BF16) return attn__vload_bf16_part((const uint16_t *)p + i, n);
    if (t == ATTN_Q8_0 || t == ATTN_Q4_0) { /* within one block: whole vectors readable */
        float f[ATTN__VW];
        size_t l;
        attn__vstore(f, attn__vload_dt(t, p, i));
        for (l = n; l < ATTN__VW; l++) f[l] = 0.0f;
        return attn__vload(f);
    }
    return attn__vload_part((const float *)p + i, n, 0.0f);
}
static ATTN__FORCE_INLINE void attn__vstore_dt_part(attn_dtype t, void *p, size_t i, attn__v v,
                                                    size_t n)
{
    if (t == ATTN_F16) attn__vstore_f16_part((uint16_t *)p + i, v, n);
    else if (t == ATTN_BF16) attn__vstore_bf16_part((uint16_t *)p + i, v, n);
    else attn__vstore_part((float *)p + i, v, n);
}

/* n elements from src (type st) to dst (type dt), a vector at a time: each vector is read
 * before it is written, so dst == src with types of one size is safe. */
static ATTN__FORCE_INLINE void attn__convert_run(attn_dtype dt, void *dst, attn_dtype st,
                                                 const void *src, size_t n)
{
    size_t i;
    for (i = 0; i + ATTN__VW <= n; i += ATTN__VW)
        attn__vstore_dt(dt, dst, i, attn__vload_dt(st, src, i));
    if (i < n) attn__vstore_dt_part(dt, dst, i, attn__vload_dt_part(st, src, i, n - i), n - i);
}

/* ---- quantization: one block of 32 floats, ggml's reference rules --------------------- */

/* Whether a block quantizes: every element finite and the scale finite in binary16 */
static int attn__q_block_ok(attn_dtype t, const float *x)
{
    float amax = 0.0f, d;
    size_t j;
    for (j = 0; j < ATTN__QK; j++) {
        const float a = x[j] < 0.0f ? -x[j] : x[j];
        if (!(a <= FLT_MAX)) return 0; /* NaN, inf */
        if (a > amax) amax = a;
    }
    d = t == ATTN_Q8_0 ? amax / 127.0f : amax / 8.0f;
    return (attn__f32_to_f16(d) & 0x7C00u) != 0x7C00u;
}

/* v rounded half away from zero (|v| <= 127: the truncation and v - t are exact) */
static int attn__q_round(float v)
{
    const int t = (int)v;
    const float f = v - (float)t;
    return f >= 0.5f ? t + 1 : f <= -0.5f ? t - 1 : t;
}

/* Quantizes 32 floats x into the block at out. The products x * id are clamped to the
 * range they lie in up to rounding (which changes no result) so that no compiler contracts
 * them into the rounding's additions. */
static void attn__q_block(attn_dtype t, const float *x, unsigned char *out)
{
    float amax = 0.0f, mx = 0.0f, d, id, v;
    uint16_t h;
    size_t j;
    for (j = 0; j < ATTN__QK; j++) {
        const float a = x[j] < 0.0f ? -x[j] : x[j];
        if (a > amax) amax = a, mx = x[j];
    }
    d = t == ATTN_Q8_0 ? amax / 127.0f : mx / -8.0f;
    id = d != 0.0f ? 1.0f / d : 0.0f;
    if (!(id <= FLT_MAX && id >= -FLT_MAX)) id = 0.0f; /* d tiny: binary16 holds it as 0 */
    h = attn__f32_to_f16(d);
    out[0] = (unsigned char)(h & 0xFFu), out[1] = (unsigned char)(h >> 8);
    if (t == ATTN_Q8_0) {
        for (j = 0; j < ATTN__QK; j++) {
            v = x[j] * id;
            v = v < -127.0f ? -127.0f : v > 127.0f ? 127.0f : v;
            out[2 + j] = (unsigned char)(signed char)attn__q_round(v);
        }
        return;
    }
    for (j = 0; j < ATTN__QK / 2; j++) {
        int q0, q1;
        float v1;
        v = x[j] * id, v1 = x[j + ATTN__QK / 2] * id;
        v = v < -8.0f ? -8.0f : v > 8.0f ? 8.0f : v;
        v1 = v1 < -8.0f ? -8.0f : v1 > 8.0f ? 8.0f : v1;
        q0 = (int)(v + 8.5f), q1 = (int)(v1 + 8.5f);
        out[2 + j] = (unsigned char)((q0 > 15 ? 15 : q0) | (q1 > 15 ? 15 : q1) << 4);
    }
}

/* n elements (a multiple of 32) between a block type qt and an element type et; src and dst
 * already checked. Quantizing checks every block before writing one. */
static attn_status attn__convert_q(int quantize, attn_dtype qt, attn_dtype et, void *dst,
                                   const void *src, size_t n)
{
    const size_t bs = attn__dt_block_bytes(qt);
    float x[ATTN__QK];
    size_t b, j, pass;
    if (!quantize) {
        for (b = 0; b < n; b += ATTN__QK) {
            const unsigned char *blk = (const unsigned char *)src + b / ATTN__QK * bs;
            for (j = 0; j < ATTN__QK; j += ATTN__VW) {
                const attn__v v = attn__vload_q(qt, blk, j);
                if (et == ATTN_F16) attn__vstore_f16((uint16_t *)dst + b + j, v);
                else if (et == ATTN_BF16) attn__vstore_bf16((uint16_t *)dst + b + j, v);
                else attn__vstore((float *)dst + b + j, v);
            }
        }
        return ATTN_OK;
    }
    for (pass = 0; pass < 2; pass++)
        for (b = 0; b < n; b += ATTN__QK) {
            for (j = 0; j < ATTN__QK; j += ATTN__VW)
                attn__vstore(x + j, attn__vload_dt(et, src, b + j));
            if (pass == 0 && !attn__q_block_ok(qt, x)) return ATTN_ERR_ARG;
            if (pass == 1) attn__q_block(qt, x, (unsigned char *)dst + b / ATTN__QK * bs);
        }
    return ATTN_OK;
}

ATTN_API attn_status attn_convert(attn_dtype dst_type, void *dst, attn_dtype src_type,
                                  const void *src, size_t n)
{
    const size_t ds = attn_dtype_size(dst_type), ss = attn_dtype_size(src_type);
    if (!attn_dtype_block(dst_type) || !attn_dtype_block(src_type)) return ATTN_ERR_ARG;
    if (!ds || !ss) { /* a block type */
        size_t db, sb;
        if (!ds && !ss && dst_type != src_type) return ATTN_ERR_ARG;
        if (n % ATTN__QK) return ATTN_ERR_SIZE;
        if (n == 0) return ATTN_OK;
        if (!dst || !src) return ATTN_ERR_NULL;
        db = attn_dtype_bytes(dst_type, n), sb = attn_dtype_bytes(src_type, n);
        if (!db || !sb || db > (size_t)PTRDIFF_MAX || sb > (size_t)PTRDIFF_MAX)
            return ATTN_ERR_OVERFLOW;
        if (attn__bytes_overlap(dst, db, src, sb)) return ATTN_ERR_ALIAS;
        if (dst_type == src_type) {
            memcpy(dst, src, db);
            return ATTN_OK;
        }
        if (!ds) { /* quantize */
            if (src_type == ATTN_F16) return attn__convert_q(1, dst_type, ATTN_F16, dst, src, n);
            if (src_type == ATTN_BF16) return attn__convert_q(1, dst_type, ATTN_BF16, dst, src, n);
            return attn__convert_q(1, dst_type, ATTN_F32, dst, src, n);
        }
        if (dst_type == ATTN_F16) return attn__convert_q(0, src_type, ATTN_F16, dst, src, n);
        if (dst_type == ATTN_BF16) return attn__convert_q(0, src_type, ATTN_BF16, dst, src, n);
        return attn__convert_q(0, src_type, ATTN_F32, dst, src, n);
    }
    if (n == 0) return ATTN_OK;
    if (!dst || !src) return ATTN_ERR_NULL;
    if (n > (size_t)PTRDIFF_MAX / (ds > ss ? ds : ss)) return ATTN_ERR_OVERFLOW;
    if (!(dst == src && ds == ss) && attn__bytes_overlap(dst, n * ds, src, n * ss))
        return ATTN_ERR_ALIAS;
    if (dst_type == src_type) {
        if (dst != src) memcpy(dst, src, n * ds);
    } else if (src_type == ATTN_F32) {
        if (dst_type == ATTN_F16) attn__convert_run(ATTN_F16, dst, ATTN_F32, src, n);
        else attn__convert_run(ATTN_BF16, dst, ATTN_F32, src, n);
    } else if (dst_type == ATTN_F32) {
        if (src_type == ATTN_F16) attn__convert_run(ATTN_F32, dst, ATTN_F16, src, n);
        else attn__convert_run(ATTN_F32, dst, ATTN_BF16, src, n);
    } else if (src_type == ATTN_F16) {
        attn__convert_run(ATTN_BF16, dst, ATTN_F16, src, n);
    } else {
        attn__convert_run(ATTN_F16, dst, ATTN_BF16, src, n);
    }
    return ATTN_OK;
}
