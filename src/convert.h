/* ---- storage types: f32, f16, bf16 arrays converted ---------------------------------- */

ATTN_API size_t attn_dtype_size(attn_dtype type)
{
    switch (type) {
    case ATTN_F32: return 4;
    case ATTN_F16: return 2;
    case ATTN_BF16: return 2;
    }
    return 0;
}

/* The address of element i of an array of type t at p */
static ATTN__FORCE_INLINE const void *attn__dt_at(attn_dtype t, const void *p, size_t i)
{
    return t == ATTN_F32 ? (const void *)((const float *)p + i)
                         : (const void *)((const uint16_t *)p + i);
}

/* ATTN__VW elements of type t at element i of p, widened to floats (t: a constant after
 * inlining, so each conversion loop below is specialized) */
static ATTN__FORCE_INLINE attn__v attn__vload_dt(attn_dtype t, const void *p, size_t i)
{
    if (t == ATTN_F16) return attn__vload_f16((const uint16_t *)p + i);
    if (t == ATTN_BF16) return attn__vload_bf16((const uint16_t *)p + i);
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

ATTN_API attn_status attn_convert(attn_dtype dst_type, void *dst, attn_dtype src_type,
                                  const void *src, size_t n)
{
    const size_t ds = attn_dtype_size(dst_type), ss = attn_dtype_size(src_type);
    if (!ds || !ss) return ATTN_ERR_ARG;
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
