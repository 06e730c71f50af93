/* ---- KV cache ------------------------------------------------------------------------ */

ATTN_API attn_status attn_kv_cache_init_type(attn_kv_cache *c, attn_dtype type, void *k,
                                             void *v, size_t batch, size_t kv_heads,
                                             size_t capacity, size_t head_dim,
                                             size_t v_head_dim)
{
    size_t ek = head_dim, ev = v_head_dim;
    if (!c || !k || !v) return ATTN_ERR_NULL;
    if (!attn__kv_dtype(type)) return ATTN_ERR_ARG;
    if (!batch || !kv_heads || !capacity || !head_dim || !v_head_dim ||
        head_dim % attn_dtype_block(type) || v_head_dim % attn_dtype_block(type))
        return ATTN_ERR_SIZE;
    if (head_dim > ATTN__MAX_ELEMS || v_head_dim > ATTN__MAX_ELEMS ||
        !attn__extent_add(&ek, capacity - 1, head_dim) ||
        !attn__extent_add(&ek, kv_heads - 1, capacity * head_dim) ||
        !attn__extent_add(&ek, batch - 1, kv_heads * capacity * head_dim) ||
        !attn__extent_add(&ev, capacity - 1, v_head_dim) ||
        !attn__extent_add(&ev, kv_heads - 1, capacity * v_head_dim) ||
        !attn__extent_add(&ev, batch - 1, kv_heads * capacity * v_head_dim))
        return ATTN_ERR_OVERFLOW;
    if (attn__bytes_overlap(k, attn_dtype_bytes(type, ek), v, attn_dtype_bytes(type, ev)))
        return ATTN_ERR_ALIAS;
    c->k = k;
    c->v = v;
    c->batch = batch;
    c->kv_heads = kv_heads;
    c->capacity = capacity;
    c->head_dim = head_dim;
    c->v_head_dim = v_head_dim;
    c->len = 0;
    c->type = type;
    c->ring = 0;
    c->start = c->pos = 0;
    return ATTN_OK;
}

ATTN_API attn_status attn_kv_cache_init_ring(attn_kv_cache *c, attn_dtype type, void *k,
                                             void *v, size_t batch, size_t kv_heads,
                                             size_t capacity, size_t head_dim,
                                             size_t v_head_dim)
{
    const attn_status st = attn_kv_cache_init_type(c, type, k, v, batch, kv_heads, capacity,
                                                   head_dim, v_head_dim);
    if (st == ATTN_OK) c->ring = 1;
    return st;
}

ATTN_API attn_status attn_kv_cache_init(attn_kv_cache *c, float *k, float *v, size_t batch,
                                        size_t kv_heads, size_t capacity, size_t head_dim,
                                        size_t v_head_dim)
{
    return attn_kv_cache_init_type(c, ATTN_F32, k, v, batch, kv_heads, capacity, head_dim,
                                   v_head_dim);
}

static int attn__kv_valid(const attn_kv_cache *c)
{
    attn_kv_cache t;
    return c && c->k && c->v && c->len <= c->capacity && (c->ring == 0 || c->ring == 1) &&
           (c->start == 0 || (c->ring && c->start < c->capacity && c->len == c->capacity)) &&
           attn_kv_cache_init_type(&t, c->type, c->k, c->v, c->batch, c->kv_heads, c->capacity,
                                   c->head_dim, c->v_head_dim) == ATTN_OK;
}

/* n floats from src to dst of type t (f32: a copy; 16 bits: rounded to nearest even; q8_0:
 * quantized, a block that does not quantize (NaN, inf, a scale past binary16) stored as NaN:
 * scale NaN, q = 0; the arguments already checked) */
static void attn__kv_put(attn_dtype t, void *dst, const float *src, size_t n)
{
    size_t b;
    if (t != ATTN_Q8_0) {
        (void)attn_convert(t, dst, ATTN_F32, src, n);
        return;
    }
    for (b = 0; b < n; b += ATTN__QK) {
        unsigned char *blk = (unsigned char *)dst + b / ATTN__QK * attn__dt_block_bytes(t);
        if (attn__q_block_ok(t, src + b)) {
            attn__q_block(t, src + b, blk);
        } else {
            memset(blk, 0, attn__dt_block_bytes(t));
            blk[0] = 0x00, blk[1] = 0x7E; /* binary16 quiet NaN, little-endian */
        }
    }
}

/* The address of element i (a multiple of the type's block) of a cache array */
static void *attn__kv_at(attn_dtype t, void *p, size_t i)
{
    return (unsigned char *)p + attn_dtype_bytes(t, i);
}

ATTN_API attn_status attn_kv_cache_append(attn_kv_cache *c, size_t n, const float *k_new,
                                          const float *v_new, attn_layout layout)
{
    size_t b, g, t, kd, vd, kb, vb, nk, nv, row0, run;
    attn_dtype ty;
    if (!c || (n && (!k_new || !v_new))) return ATTN_ERR_NULL;
    if (!attn__kv_valid(c)) return ATTN_ERR_ARG;
    if (layout != ATTN_LAYOUT_BHLD && layout != ATTN_LAYOUT_BLHD) return ATTN_ERR_ARG;
    if (n > c->capacity - (c->ring ? 0 : c->len)) return ATTN_ERR_CAPACITY;
    if (!n) return ATTN_OK;
    kd = c->head_dim, vd = c->v_head_dim, ty = c->type;
    /* the new rows may not lie in the cache (sizes fit: the cache's extents do, and the new
     * rows are at most as many elements, of floats) */
    kb = attn_dtype_bytes(ty, c->batch * c->kv_heads * c->capacity * kd);
    vb = attn_dtype_bytes(ty, c->batch * c->kv_heads * c->capacity * vd);
    nk = c->batch * c->kv_heads * n * kd * sizeof(float);
    nv = c->batch * c->kv_heads * n * vd * sizeof(float);
    if (attn__bytes_overlap(k_new, nk, c->k, kb) || attn__bytes_overlap(k_new, nk, c->v, vb) ||
        attn__bytes_overlap(v_new, nv, c->k, kb) || attn__bytes_overlap(v_new, nv, c->v, vb))
        return ATTN_ERR_ALIAS;
    /* new position t goes to row (row0 + t) mod capacity: a ring wraps at most once */
    row0 = (c->start + c->len) % c->capacity;
    run = attn__min(n, c->capacity - row0);
    for (b = 0; b < c->batch; b++)
        for (g = 0; g < c->kv_heads; g++) {
            void *kc = attn__kv_at(ty, c->k, (b * c->kv_heads + g) * c->capacity * kd);
            void *vc = attn__kv_at(ty, c->v, (b * c->kv_heads + g) * c->capacity * vd);
            if (layout == ATTN_LAYOUT_BHLD) {
                const float *ks = k_new + (b * c->kv_heads + g) * n * kd;
                const float *vs = v_new + (b * c->kv_heads + g) * n * vd;
                attn__kv_put(ty, attn__kv_at(ty, kc, row0 * kd), ks, run * kd);
                attn__kv_put(ty, attn__kv_at(ty, vc, row0 * vd), vs, run * vd);
                attn__kv_put(ty, kc, ks + run * kd, (n - run) * kd);
                attn__kv_put(ty, vc, vs + run * vd, (n - run) * vd);
            } else {
                for (t = 0; t < n; t++) {
                    const size_t row = t < run ? row0 + t : t - run;
                    attn__kv_put(ty, attn__kv_at(ty, kc, row * kd),
                                 k_new + ((b * n + t) * c->kv_heads + g) * kd, kd);
                    attn__kv_put(ty, attn__kv_at(ty, vc, row * vd),
                                 v_new + ((b * n + t) * c->kv_heads + g) * vd, vd);
                }
            }
        }
    if (c->len + n > c->capacity) { /* a ring: the oldest positions overwritten */
        c->start = (c->start + c->len + n - c->capacity) % c->capacity;
        c->len = c->capacity;
    } else {
        c->len += n;
    }
    c->pos += n;
    return ATTN_OK;
}

ATTN_API attn_attention_params attn_attention_init_kv(const attn_kv_cache *c, size_t heads,
                                                      size_t q_len, const float *q, float *o,
                                                      attn_layout layout, attn_causal causal)
{
    attn_attention_params p;
    if (!attn__kv_valid(c)) {
        memset(&p, 0, sizeof p);
        return p;
    }
    p = attn_attention_init(c->batch, heads, c->kv_heads, q_len, c->len, c->head_dim,
                            c->v_head_dim, q, NULL, NULL, o, layout);
    p.k = c->k, p.v = c->v, p.kv_type = c->type;
    p.k_sl = c->head_dim, p.k_sh = c->capacity * c->head_dim, p.k_sb = c->kv_heads * p.k_sh;
    p.v_sl = c->v_head_dim, p.v_sh = c->capacity * c->v_head_dim, p.v_sb = c->kv_heads * p.v_sh;
    p.kv_start = c->start;
    if (p.causal == ATTN_CAUSAL_NONE) p.causal = causal; /* else: an unknown layout's mark */
    return p;
}
