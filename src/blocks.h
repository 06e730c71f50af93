/* ---- workspace carving ---------------------------------------------------------------- */

/* Adds a segment of `bytes` (rounded up to ATTN__ALIGN) to *total; 0 on overflow. */
static int attn__seg(size_t *total, size_t bytes)
{
    const size_t lim = (size_t)PTRDIFF_MAX;
    if (bytes > lim - ATTN__ALIGN) return 0;
    bytes = attn__round_up(bytes, ATTN__ALIGN);
    if (*total > lim - bytes) return 0;
    *total += bytes;
    return 1;
}

/* A segment of rows x cols floats. */
static int attn__seg_f(size_t *total, size_t rows, size_t cols)
{
    size_t n = attn__mul_lim(rows, cols, ATTN__MAX_ELEMS);
    return n <= ATTN__MAX_ELEMS && attn__seg(total, n * sizeof(float));
}

/* The next segment of `bytes` from *cur (aligned base, segments as attn__seg counts them). */
static void *attn__take(unsigned char **cur, size_t bytes)
{
    void *p = *cur;
    *cur += attn__round_up(bytes, ATTN__ALIGN);
    return p;
}

static size_t attn__max3(size_t a, size_t b, size_t c)
{
    size_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* ---- linear ----------------------------------------------------------------------------- */

ATTN_API size_t attn_linear_workspace_size(attn_trans tw, size_t tokens, size_t d_in,
                                           size_t d_out)
{
    return attn_matmul_workspace_size(ATTN_NO_TRANS, tw, tokens, d_out, d_in);
}

ATTN_API attn_status attn_linear_typed(const float *x, size_t ldx, size_t tokens, size_t d_in,
                                       attn_trans tw, attn_dtype w_type, const void *w,
                                       size_t ldw, const float *bias, size_t d_out, attn_act act,
                                       float *y, size_t ldy, void *workspace,
                                       size_t workspace_size)
{
    attn_status st;
    size_t r;
    if (tokens && (!x || !w || !y)) return ATTN_ERR_NULL;
    if (tw != ATTN_NO_TRANS && tw != ATTN_TRANS) return ATTN_ERR_ARG;
    if (!attn_dtype_block(w_type)) return ATTN_ERR_ARG;
    if ((st = attn__mm_block_check(w_type, tw, d_in, ldw)) != ATTN_OK) return st;
    if ((st = attn__check_mat(tokens, d_in, ldx)) != ATTN_OK) return st;
    if ((st = tw ? attn__check_mat(d_out, d_in, ldw) : attn__check_mat(d_in, d_out, ldw)) !=
        ATTN_OK)
        return st;
    if ((st = attn__check_mat(tokens, d_out, ldy)) != ATTN_OK) return st;
    if (!attn__act_valid(act)) return ATTN_ERR_ARG;
    if (!tokens) return ATTN_OK;
    if (workspace && workspace_size < attn_linear_workspace_size(tw, tokens, d_in, d_out))
        return ATTN_ERR_WORKSPACE;
    if (bias && attn__bytes_overlap(y, attn__mat_bytes(tokens, d_out, ldy), bias,
                                    d_out * sizeof(float)))
        return ATTN_ERR_ALIAS; /* y over x, W or the workspace: attn_matmul's check */
    st = attn__matmul(ATTN_NO_TRANS, tw, tokens, d_out, d_in, 1.0f, x, ldx, w_type, w, ldw, 0.0f,
                      y, ldy, workspace, workspace ? workspace_size : 0);
    if (st != ATTN_OK) return st;
    for (r = 0; r < tokens; r++) attn__act_row(act, y + r * ldy, bias, y + r * ldy, d_out);
    return ATTN_OK;
}

ATTN_API attn_status attn_linear(const float *x, size_t ldx, size_t tokens, size_t d_in,
                                 attn_trans tw, const float *w, size_t ldw, const float *bias,
                                 size_t d_out, attn_act act, float *y, size_t ldy,
                                 void *workspace, size_t workspace_size)
{
    return attn_linear_typed(x, ldx, tokens, d_in, tw, ATTN_F32, w, ldw, bias, d_out, act, y, ldy,
                             workspace, workspace_size);
}

/* ---- weight views and caches --------------------------------------------------------------- */

/* The checks of one matrix view mapping d_in -> d_out (nothing computed) */
static attn_status attn__matrix_check(const attn_matrix *m, size_t d_in, size_t d_out)
{
    if (!m->w) return ATTN_ERR_NULL; /* then attn_linear_typed's checks, the type's included */
    return attn_linear_typed(NULL, d_in, 0, d_in, m->trans, m->type, m->w, m->ld, m->bias, d_out,
                             ATTN_ACT_NONE, NULL, d_out, NULL, 0);
}

/* A block struct's weight as a view; ld 0 is the dense row of its stored layout */
static attn_matrix attn__view(const float *w, size_t ld, attn_trans tr, attn_dtype type,
                              const float *bias, size_t d_in, size_t d_out)
{
    attn_matrix m;
    m.w = w, m.ld = ld ? ld : tr == ATTN_TRANS ? d_in : d_out, m.trans = tr, m.type = type;
    m.bias = bias;
    return m;
}

/* Whether a view's product takes attn_matmul_int8 (int8: the block's int8_products): for
 * 2 or more rows; one row where the CPU runs VNNI, on which attn_matmul_int8 reads the
 * weights in place (faster than the float product; without VNNI it repacks them, and the
 * float product, which streams them once, is as fast or faster) */
static int attn__view_int8(const attn_matrix *m, int int8, size_t tokens)
{
    if (!int8 || (m->type != ATTN_Q8_0 && m->type != ATTN_Q4_0)) return 0;
#ifdef ATTN__HAVE_QK8_ROWS
    if (tokens == 1) return attn__qk8_cpu();
#endif
    return tokens > 1;
}

/* Bytes of matmul workspace of a view's product (int8: attn_matmul_int8's too, one row
 * included, whatever the CPU) */
static size_t attn__view_ws(const attn_matrix *m, int int8, size_t tokens, size_t d_in,
                            size_t d_out)
{
    const size_t s = attn_linear_workspace_size(m->trans, tokens, d_in, d_out);
    const size_t s8 = int8 && (m->type == ATTN_Q8_0 || m->type == ATTN_Q4_0)
                          ? attn_matmul_int8_workspace_size(tokens, d_out, d_in)
                          : 0;
    return s > s8 ? s : s8;
}

/* y = act(x op(W) + bias) for a view (x: tokens x d_in at ldx, y: tokens x d_out at ldy);
 * int8: integer products for block types, as attn_decoder_only_weights.int8_products says */
static void attn__linear_view(const attn_matrix *m, const float *x, size_t ldx, size_t tokens,
                              size_t d_in, size_t d_out, attn_act act, float *y, size_t ldy,
                              void *mws, size_t mm, int int8)
{
    size_t r;
    if (attn__view_int8(m, int8, tokens) &&
        attn__matmul_int8_path(tokens, d_out, d_in, 1.0f, x, ldx, m->type, m->w, m->ld, 0.0f, y,
                               ldy, mws, mm, 1) == ATTN_OK) {
        for (r = 0; r < tokens; r++) attn__act_row(act, y + r * ldy, m->bias, y + r * ldy, d_out);
        return;
    }
    attn_linear_typed(x, ldx, tokens, d_in, m->trans, m->type, m->w, m->ld, m->bias, d_out, act,
                      y, ldy, mws, mm);
}

/* Whether bytes [p, p + n) meet a cache's K or V (a valid cache, or NULL: never) */
static int attn__kv_hits(const attn_kv_cache *c, const void *p, size_t n)
{
    size_t e;
    if (!c) return 0;
    e = c->batch * c->kv_heads * c->capacity;
    return attn__bytes_overlap(p, n, c->k, attn_dtype_bytes(c->type, e * c->head_dim)) ||
           attn__bytes_overlap(p, n, c->v, attn_dtype_bytes(c->type, e * c->v_head_dim));
}

/* Whether a valid cache takes n more positions: a ring up to capacity a call, and with a
 * window only as many as leave every key the window shows the first of them */
static int attn__kv_room(const attn_kv_cache *c, size_t n, size_t window)
{
    return c->ring ? n <= c->capacity && (!window || window - 1 <= c->capacity - n)
                   : n <= c->capacity - c->len;
}

/* ---- feed-forward ----------------------------------------------------------------------- */

static attn_matrix attn__ffn_w1(const attn_ffn_weights *w)
{
    return attn__view(w->w1, w->ld1, w->trans, w->wtype, w->b1, w->d_model, w->d_ff);
}

static attn_matrix attn__ffn_w2(const attn_ffn_weights *w)
{
    return attn__view(w->w2, w->ld2, w->trans, w->wtype, w->b2, w->d_ff, w->d_model);
}

static attn_status attn__ffn_check(const attn_ffn_weights *w)
{
    attn_status st;
    attn_matrix m1, m2;
    if (!w) return ATTN_ERR_NULL;
    if (!w->w1 || !w->w2) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(w->d_model, w->d_ff, w->d_ff)) != ATTN_OK) return st;
    if (!attn__act_valid(w->act)) return ATTN_ERR_ARG;
    m1 = attn__ffn_w1(w), m2 = attn__ffn_w2(w);
    if ((st = attn__matrix_check(&m1, w->d_model, w->d_ff)) != ATTN_OK) return st;
    return attn__matrix_check(&m2, w->d_ff, w->d_model);
}

/* Whether a block's output y (tokens x d at ldy) overlaps its input x (other than exactly,
 * when `in_place`), or the workspace's first `need` bytes overlap x or y */
static int attn__block_alias(const float *x, size_t ldx, const float *y, size_t ldy,
                             size_t tokens, size_t d, int in_place, const void *ws, size_t need)
{
    return attn__mat_alias(y, ldy, x, ldx, tokens, d, in_place) ||
           attn__bytes_overlap(ws, need, x, attn__mat_bytes(tokens, d, ldx)) ||
           attn__bytes_overlap(ws, need, y, attn__mat_bytes(tokens, d, ldy));
}

/* bytes of the matmul workspace of the FFN's two products */
static size_t attn__ffn_mm(const attn_ffn_weights *w, size_t tokens)
{
    size_t a = attn_linear_workspace_size(w->trans, tokens, w->d_model, w->d_ff);
    size_t b = attn_linear_workspace_size(w->trans, tokens, w->d_ff, w->d_model);
    return a > b ? a : b;
}

static size_t attn__ffn_ws(const attn_ffn_weights *w, size_t tokens)
{
    size_t total = ATTN__ALIGN;
    if (tokens == 0) return 0;
    if (!attn__seg_f(&total, tokens, w->d_ff) || !attn__seg(&total, attn__ffn_mm(w, tokens)))
        return 0;
    return total;
}

ATTN_API size_t attn_ffn_workspace_size(const attn_ffn_weights *w, size_t tokens)
{
    if (attn__ffn_check(w) != ATTN_OK) return 0;
    return attn__ffn_ws(w, tokens);
}

/* the work of attn_ffn on validated arguments and a big enough aligned workspace */
static void attn__ffn_run(const attn_ffn_weights *w, const float *x, size_t ldx, float *y,
                          size_t ldy, size_t tokens, unsigned char *cur)
{
    const size_t mm = attn__ffn_mm(w, tokens);
    const attn_matrix m1 = attn__ffn_w1(w), m2 = attn__ffn_w2(w);
    float *h = (float *)attn__take(&cur, tokens * w->d_ff * sizeof(float));
    void *mws = mm ? attn__take(&cur, mm) : NULL;
    attn__linear_view(&m1, x, ldx, tokens, w->d_model, w->d_ff, w->act, h, w->d_ff, mws, mm, 0);
    attn__linear_view(&m2, h, w->d_ff, tokens, w->d_ff, w->d_model, ATTN_ACT_NONE, y, ldy, mws,
                      mm, 0);
}

ATTN_API attn_status attn_ffn(const attn_ffn_weights *w, const float *x, size_t ldx, float *y,
                              size_t ldy, size_t tokens, void *workspace,
                              size_t workspace_size)
{
    attn_status st = attn__ffn_check(w);
    size_t need;
    if (st != ATTN_OK) return st;
    if (tokens && (!x || !y)) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(tokens, w->d_model, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(tokens, w->d_model, ldy)) != ATTN_OK) return st;
    if (!tokens) return ATTN_OK;
    if ((need = attn__ffn_ws(w, tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    if (attn__block_alias(x, ldx, y, ldy, tokens, w->d_model, 1, workspace, need))
        return ATTN_ERR_ALIAS;
    attn__ffn_run(w, x, ldx, y, ldy, tokens, (unsigned char *)attn__align(workspace));
    return ATTN_OK;
}

/* ---- multi-head attention ---------------------------------------------------------------- */

/* view i of wq, wk, wv, wo (each d_model -> d_model) */
static attn_matrix attn__mha_w(const attn_mha_weights *w, int i)
{
    const float *p[4], *b[4];
    const size_t ld[4] = {w->ldq, w->ldk, w->ldv, w->ldo};
    p[0] = w->wq, p[1] = w->wk, p[2] = w->wv, p[3] = w->wo;
    b[0] = w->bq, b[1] = w->bk, b[2] = w->bv, b[3] = w->bo;
    return attn__view(p[i], ld[i], w->trans, w->wtype, b[i], w->d_model, w->d_model);
}

static attn_status attn__mha_check(const attn_mha_weights *w)
{
    attn_status st;
    attn_matrix m;
    int i;
    if (!w) return ATTN_ERR_NULL;
    if (!w->wq || !w->wk || !w->wv || !w->wo) return ATTN_ERR_NULL;
    if (!w->heads || !w->d_model || w->d_model % w->heads) return ATTN_ERR_SIZE;
    if ((st = attn__check_mat(w->d_model, w->d_model, w->d_model)) != ATTN_OK) return st;
    for (i = 0; i < 4; i++) {
        m = attn__mha_w(w, i);
        if ((st = attn__matrix_check(&m, w->d_model, w->d_model)) != ATTN_OK) return st;
    }
    return ATTN_OK;
}

/* The checks of an attention over lk new keys and values and a cache c (or none) */
static attn_status attn__mha_kv_check(const attn_mha_weights *w, const attn_kv_cache *c,
                                      size_t lk, size_t window)
{
    const size_t dh = w->d_model / w->heads;
    if (!c) return lk ? ATTN_OK : ATTN_ERR_SIZE; /* queries with no keys */
    if (!attn__kv_valid(c)) return ATTN_ERR_ARG;
    if (c->batch != 1 || c->kv_heads != w->heads || c->head_dim != dh || c->v_head_dim != dh)
        return ATTN_ERR_SIZE;
    if (!attn__kv_room(c, lk, window)) return ATTN_ERR_CAPACITY;
    return c->len || lk ? ATTN_OK : ATTN_ERR_SIZE;
}

/* Keys an attention over lk new ones and cache c (or none) sees after the append */
static size_t attn__mha_keys(const attn_kv_cache *c, size_t lk)
{
    if (!c) return lk;
    return c->ring && lk > c->capacity - c->len ? c->capacity : c->len + lk;
}

static attn_attention_params attn__mha_params(const attn_mha_weights *w, size_t lq, size_t lk,
                                              const float *q, const float *k, const float *v,
                                              float *o, int causal)
{
    const size_t dh = w->d_model / w->heads;
    attn_attention_params p = attn_attention_init(1, w->heads, w->heads, lq, lk, dh, dh, q, k,
                                                  v, o, ATTN_LAYOUT_BLHD);
    p.causal = causal ? ATTN_CAUSAL_BOTTOM_RIGHT : ATTN_CAUSAL_NONE;
    return p;
}

/* bytes of the matmul workspace the projections need (the largest of the four products) */
static size_t attn__mha_mm(const attn_mha_weights *w, size_t lq, size_t lk)
{
    const size_t d = w->d_model;
    size_t a = attn_linear_workspace_size(w->trans, lq, d, d);
    size_t b = attn_linear_workspace_size(w->trans, lk, d, d);
    return a > b ? a : b;
}

/* bytes of attn_mha's workspace (valid weights) without the base alignment; 0 on overflow */
static size_t attn__mha_ws(const attn_mha_weights *w, size_t lq, size_t lk)
{
    attn_attention_params p;
    size_t total = 0;
    if (lq == 0) return 0;
    p = attn__mha_params(w, lq, 1, NULL, NULL, NULL, NULL, 0);
    if (!attn__seg_f(&total, lq, w->d_model) || !attn__seg_f(&total, lk, w->d_model) ||
        !attn__seg_f(&total, lk, w->d_model) || !attn__seg_f(&total, lq, w->d_model) ||
        !attn__seg(&total, attn_attention_workspace_size(&p)) ||
        !attn__seg(&total, attn__mha_mm(w, lq, lk)))
        return 0;
    return total;
}

ATTN_API size_t attn_mha_workspace_size(const attn_mha_weights *w, size_t q_tokens,
                                        size_t kv_tokens)
{
    size_t t;
    if (attn__mha_check(w) != ATTN_OK) return 0;
    t = attn__mha_ws(w, q_tokens, kv_tokens);
    return t && attn__seg(&t, ATTN__ALIGN) ? t : 0;
}

/* The attention sublayer of a block on checked arguments: the lk rows of xkv projected
 * (and appended to the cache c, if any), the lq queries of xq attending over them (or over
 * the cache) with key mask km and window win; y = O Wo + bo */
static void attn__mha_run(const attn_mha_weights *w, const float *xq, size_t ldxq, size_t lq,
                          const float *xkv, size_t ldxkv, size_t lk, int causal,
                          const uint8_t *km, attn_kv_cache *c, size_t win, float *y,
                          size_t ldy, unsigned char *cur)
{
    const size_t d = w->d_model, mm = attn__mha_mm(w, lq, lk);
    const attn_matrix mq = attn__mha_w(w, 0), mk = attn__mha_w(w, 1), mv = attn__mha_w(w, 2);
    const attn_matrix mo = attn__mha_w(w, 3);
    float *q = (float *)attn__take(&cur, lq * d * sizeof(float));
    float *k = (float *)attn__take(&cur, lk * d * sizeof(float));
    float *v = (float *)attn__take(&cur, lk * d * sizeof(float));
    float *o = (float *)attn__take(&cur, lq * d * sizeof(float));
    attn_attention_params p = attn__mha_params(w, lq, lk, q, k, v, o, causal);
    const size_t aws = attn_attention_workspace_size(&p);
    void *att_ws = attn__take(&cur, aws);
    void *mws = mm ? attn__take(&cur, mm) : NULL;
    attn__linear_view(&mq, xq, ldxq, lq, d, d, ATTN_ACT_NONE, q, d, mws, mm, 0);
    attn__linear_view(&mk, xkv, ldxkv, lk, d, d, ATTN_ACT_NONE, k, d, mws, mm, 0);
    attn__linear_view(&mv, xkv, ldxkv, lk, d, d, ATTN_ACT_NONE, v, d, mws, mm, 0);
    if (c) {
        attn_kv_cache_append(c, lk, k, v, ATTN_LAYOUT_BLHD);
        p = attn_attention_init_kv(c, w->heads, lq, q, o, ATTN_LAYOUT_BLHD, p.causal);
    }
    p.bool_mask = km, p.bmask_sb = p.bmask_sh = p.bmask_sq = 0, p.window = win;
    attn_attention(&p, att_ws, aws);
    /* the output of attention is a convex combination of V rows: it may be denormal only
     * where V is; attn_linear flushes y */
    attn__linear_view(&mo, o, d, lq, d, d, ATTN_ACT_NONE, y, ldy, mws, mm, 0);
}

/* Whether a cache or a key mask (of `keys` bytes) meets what a block writes or reads: the
 * inputs a and b, the output y, the workspace (need bytes), or the other cache */
static int attn__kv_alias(const attn_kv_cache *c, const uint8_t *km, size_t keys,
                          const void *a, size_t na, const void *b, size_t nb, const void *y,
                          size_t ny, const void *ws, size_t need, const attn_kv_cache *other)
{
    const size_t kb = km ? keys : 0;
    size_t e;
    if (attn__kv_hits(c, a, na) || attn__kv_hits(c, b, nb) || attn__kv_hits(c, y, ny) ||
        attn__kv_hits(c, ws, need) || attn__kv_hits(c, km, kb) ||
        attn__bytes_overlap(km, kb, y, ny) || attn__bytes_overlap(km, kb, ws, need))
        return 1;
    if (!c || !other) return 0;
    e = other->batch * other->kv_heads * other->capacity;
    return c == other ||
           attn__kv_hits(c, other->k, attn_dtype_bytes(other->type, e * other->head_dim)) ||
           attn__kv_hits(c, other->v, attn_dtype_bytes(other->type, e * other->v_head_dim));
}

ATTN_API attn_status attn_mha_ex(const attn_mha_weights *w, const float *xq, size_t ldxq,
                                 size_t q_tokens, const float *xkv, size_t ldxkv,
                                 size_t kv_tokens, int causal, const attn_block_options *opt,
                                 float *y, size_t ldy, void *workspace, size_t workspace_size)
{
    attn_status st = attn__mha_check(w);
    attn_kv_cache *c = opt ? opt->cache : NULL;
    const uint8_t *km = opt ? opt->key_mask : NULL;
    const size_t win = opt ? opt->window : 0;
    size_t need, kb, qb, yb;
    if (st != ATTN_OK) return st;
    if (q_tokens && (!xq || !y || (!xkv && (kv_tokens || !c)))) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(q_tokens, w->d_model, ldxq)) != ATTN_OK) return st;
    if (xkv && (st = attn__check_mat(kv_tokens, w->d_model, ldxkv)) != ATTN_OK) return st;
    if ((st = attn__check_mat(q_tokens, w->d_model, ldy)) != ATTN_OK) return st;
    if (causal != 0 && causal != 1) return ATTN_ERR_ARG;
    if (!q_tokens) return ATTN_OK;
    if ((st = attn__mha_kv_check(w, c, kv_tokens, win)) != ATTN_OK) return st;
    if ((need = attn_mha_workspace_size(w, q_tokens, kv_tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    /* y may be xq or xkv exactly (same pointer and leading dimension; every input is read
     * before y is written) */
    kb = attn__mat_bytes(kv_tokens, w->d_model, ldxkv);
    qb = attn__mat_bytes(q_tokens, w->d_model, ldxq);
    yb = attn__mat_bytes(q_tokens, w->d_model, ldy);
    if (attn__block_alias(xq, ldxq, y, ldy, q_tokens, w->d_model, 1, workspace, need) ||
        (!(xkv == y && ldxkv == ldy) &&
         attn__bytes_overlap(y, yb, xkv, kb)) ||
        attn__bytes_overlap(workspace, need, xkv, kb) ||
        attn__kv_alias(c, km, attn__mha_keys(c, kv_tokens), xq, qb, xkv, kb, y, yb, workspace,
                       need, NULL))
        return ATTN_ERR_ALIAS;
    attn__mha_run(w, xq, ldxq, q_tokens, xkv, ldxkv, kv_tokens, causal, km, c, win, y, ldy,
                  (unsigned char *)attn__align(workspace));
    return ATTN_OK;
}

ATTN_API attn_status attn_mha(const attn_mha_weights *w, const float *xq, size_t ldxq,
                              size_t q_tokens, const float *xkv, size_t ldxkv, size_t kv_tokens,
                              int causal, float *y, size_t ldy, void *workspace,
                              size_t workspace_size)
{
    return attn_mha_ex(w, xq, ldxq, q_tokens, xkv, ldxkv, kv_tokens, causal, NULL, y, ldy,
                       workspace, workspace_size);
}

/* ---- encoder and decoder blocks ------------------------------------------------------------ */

static attn_status attn__block_common(float eps, attn_norm_order norm)
{
    if (!attn__finite(eps) || eps < 0) return ATTN_ERR_ARG;
    if (norm != ATTN_PRE_LN && norm != ATTN_POST_LN) return ATTN_ERR_ARG;
    return ATTN_OK;
}

static attn_status attn__encoder_check(const attn_encoder_weights *w)
{
    attn_status st;
    if (!w) return ATTN_ERR_NULL;
    if ((st = attn__mha_check(&w->attn)) != ATTN_OK) return st;
    if ((st = attn__ffn_check(&w->ffn)) != ATTN_OK) return st;
    if (w->attn.d_model != w->ffn.d_model) return ATTN_ERR_SIZE;
    return attn__block_common(w->eps, w->norm);
}

/* t (tokens x d) plus the largest of the sublayers' workspaces; 0 on overflow */
static size_t attn__encoder_ws(const attn_encoder_weights *w, size_t tokens)
{
    size_t total = ATTN__ALIGN, m = attn__mha_ws(&w->attn, tokens, tokens);
    size_t f = attn__ffn_ws(&w->ffn, tokens);
    if (!m || !f || !attn__seg_f(&total, tokens, w->attn.d_model) ||
        !attn__seg(&total, m > f - ATTN__ALIGN ? m : f - ATTN__ALIGN))
        return 0;
    return total;
}

ATTN_API size_t attn_encoder_workspace_size(const attn_encoder_weights *w, size_t tokens)
{
    if (attn__encoder_check(w) != ATTN_OK || tokens == 0) return 0;
    return attn__encoder_ws(w, tokens);
}

/* rows x n: y = x (row by row; nothing when y is x) */
static void attn__copy_rows(const float *x, size_t ldx, float *y, size_t ldy, size_t rows,
                            size_t n)
{
    size_t r;
    if (x == y) return;
    for (r = 0; r < rows; r++) memcpy(y + r * ldy, x + r * ldx, n * sizeof(float));
}

ATTN_API attn_status attn_encoder_ex(const attn_encoder_weights *w, const float *x, size_t ldx,
                                     float *y, size_t ldy, size_t tokens, int causal,
                                     const attn_block_options *opt, void *workspace,
                                     size_t workspace_size)
{
    attn_status st = attn__encoder_check(w);
    attn_kv_cache *c = opt ? opt->cache : NULL;
    const uint8_t *km = opt ? opt->key_mask : NULL;
    const size_t win = opt ? opt->window : 0;
    size_t need, d;
    unsigned char *cur, *sub;
    float *t;
    if (st != ATTN_OK) return st;
    d = w->attn.d_model;
    if (tokens && (!x || !y)) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(tokens, d, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(tokens, d, ldy)) != ATTN_OK) return st;
    if (causal != 0 && causal != 1) return ATTN_ERR_ARG;
    if (!tokens) return ATTN_OK;
    if ((st = attn__mha_kv_check(&w->attn, c, tokens, win)) != ATTN_OK) return st;
    if ((need = attn__encoder_ws(w, tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    if (attn__block_alias(x, ldx, y, ldy, tokens, d, 1, workspace, need) ||
        attn__kv_alias(c, km, attn__mha_keys(c, tokens), x, attn__mat_bytes(tokens, d, ldx),
                       NULL, 0, y, attn__mat_bytes(tokens, d, ldy), workspace, need, NULL))
        return ATTN_ERR_ALIAS;
    cur = (unsigned char *)attn__align(workspace);
    t = (float *)attn__take(&cur, tokens * d * sizeof(float));
    sub = cur; /* the sublayers' workspace, aligned */
    if (w->norm == ATTN_PRE_LN) {
        attn__copy_rows(x, ldx, y, ldy, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->attn, t, d, tokens, t, d, tokens, causal, km, c, win, t, d, sub);
        attn_add(y, ldy, t, d, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, t, d, t, d, tokens, sub);
        attn_add(y, ldy, t, d, tokens, d);
    } else {
        attn__mha_run(&w->attn, x, ldx, tokens, x, ldx, tokens, causal, km, c, win, t, d, sub);
        attn_add(t, d, x, ldx, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, y, ldy, t, d, tokens, sub);
        attn_add(t, d, y, ldy, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
    }
    attn__flush_rows(y, ldy, tokens, d);
    return ATTN_OK;
}

ATTN_API attn_status attn_encoder(const attn_encoder_weights *w, const float *x, size_t ldx,
                                  float *y, size_t ldy, size_t tokens, int causal,
                                  void *workspace, size_t workspace_size)
{
    return attn_encoder_ex(w, x, ldx, y, ldy, tokens, causal, NULL, workspace, workspace_size);
}

static attn_status attn__decoder_check(const attn_decoder_weights *w)
{
    attn_status st;
    if (!w) return ATTN_ERR_NULL;
    if ((st = attn__mha_check(&w->self_attn)) != ATTN_OK) return st;
    if ((st = attn__mha_check(&w->cross_attn)) != ATTN_OK) return st;
    if ((st = attn__ffn_check(&w->ffn)) != ATTN_OK) return st;
    if (w->self_attn.d_model != w->ffn.d_model || w->cross_attn.d_model != w->ffn.d_model)
        return ATTN_ERR_SIZE;
    return attn__block_common(w->eps, w->norm);
}

static size_t attn__decoder_ws(const attn_decoder_weights *w, size_t tokens, size_t mem_tokens)
{
    size_t total = ATTN__ALIGN, s = attn__mha_ws(&w->self_attn, tokens, tokens);
    size_t c = attn__mha_ws(&w->cross_attn, tokens, mem_tokens), f = attn__ffn_ws(&w->ffn, tokens);
    if (!s || !c || !f || !attn__seg_f(&total, tokens, w->ffn.d_model) ||
        !attn__seg(&total, attn__max3(s, c, f - ATTN__ALIGN)))
        return 0;
    return total;
}

ATTN_API size_t attn_decoder_workspace_size(const attn_decoder_weights *w, size_t tokens,
                                            size_t mem_tokens)
{
    if (attn__decoder_check(w) != ATTN_OK || tokens == 0) return 0;
    return attn__decoder_ws(w, tokens, mem_tokens);
}

ATTN_API attn_status attn_decoder_ex(const attn_decoder_weights *w, const float *x, size_t ldx,
                                     float *y, size_t ldy, size_t tokens, int causal,
                                     const float *mem, size_t ldmem, size_t mem_tokens,
                                     const attn_block_options *opt, void *workspace,
                                     size_t workspace_size)
{
    attn_status st = attn__decoder_check(w);
    attn_kv_cache *c = opt ? opt->cache : NULL, *mc = opt ? opt->mem_cache : NULL;
    const uint8_t *km = opt ? opt->key_mask : NULL, *mm = opt ? opt->mem_mask : NULL;
    const size_t win = opt ? opt->window : 0;
    size_t need, d, xb, yb, mb;
    unsigned char *cur, *sub;
    float *t;
    if (st != ATTN_OK) return st;
    d = w->ffn.d_model;
    if (tokens && (!x || !y || (!mem && (mem_tokens || !mc)))) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(tokens, d, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(tokens, d, ldy)) != ATTN_OK) return st;
    if (mem && (st = attn__check_mat(mem_tokens, d, ldmem)) != ATTN_OK) return st;
    if (causal != 0 && causal != 1) return ATTN_ERR_ARG;
    if (!tokens) return ATTN_OK;
    if ((st = attn__mha_kv_check(&w->self_attn, c, tokens, win)) != ATTN_OK ||
        (st = attn__mha_kv_check(&w->cross_attn, mc, mem_tokens, 0)) != ATTN_OK)
        return st;
    if ((need = attn__decoder_ws(w, tokens, mem_tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    xb = attn__mat_bytes(tokens, d, ldx), yb = attn__mat_bytes(tokens, d, ldy);
    mb = attn__mat_bytes(mem_tokens, d, ldmem);
    if (attn__block_alias(x, ldx, y, ldy, tokens, d, 1, workspace, need) ||
        attn__bytes_overlap(y, yb, mem, mb) || attn__bytes_overlap(workspace, need, mem, mb) ||
        attn__kv_alias(c, km, attn__mha_keys(c, tokens), x, xb, mem, mb, y, yb, workspace, need,
                       mc) ||
        attn__kv_alias(mc, mm, attn__mha_keys(mc, mem_tokens), x, xb, mem, mb, y, yb, workspace,
                       need, c))
        return ATTN_ERR_ALIAS;
    cur = (unsigned char *)attn__align(workspace);
    t = (float *)attn__take(&cur, tokens * d * sizeof(float));
    sub = cur;
    if (w->norm == ATTN_PRE_LN) {
        attn__copy_rows(x, ldx, y, ldy, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->self_attn, t, d, tokens, t, d, tokens, causal, km, c, win, t, d, sub);
        attn_add(y, ldy, t, d, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->cross_attn, t, d, tokens, mem, ldmem, mem_tokens, 0, mm, mc, 0, t, d,
                      sub);
        attn_add(y, ldy, t, d, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln3_gamma, w->ln3_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, t, d, t, d, tokens, sub);
        attn_add(y, ldy, t, d, tokens, d);
    } else {
        attn__mha_run(&w->self_attn, x, ldx, tokens, x, ldx, tokens, causal, km, c, win, t, d,
                      sub);
        attn_add(t, d, x, ldx, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->cross_attn, y, ldy, tokens, mem, ldmem, mem_tokens, 0, mm, mc, 0, t, d,
                      sub);
        attn_add(t, d, y, ldy, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, y, ldy, t, d, tokens, sub);
        attn_add(t, d, y, ldy, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln3_gamma, w->ln3_beta, w->eps, NULL, NULL);
    }
    attn__flush_rows(y, ldy, tokens, d);
    return ATTN_OK;
}

ATTN_API attn_status attn_decoder(const attn_decoder_weights *w, const float *x, size_t ldx,
                                  float *y, size_t ldy, size_t tokens, const float *mem,
                                  size_t ldmem, size_t mem_tokens, void *workspace,
                                  size_t workspace_size)
{
    return attn_decoder_ex(w, x, ldx, y, ldy, tokens, 1, mem, ldmem, mem_tokens, NULL, workspace,
                           workspace_size);
}

/* ---- parameter counts ------------------------------------------------------------------- */

/* *acc += a * b (SIZE_MAX limit); 0 on overflow */
static int attn__count_add(size_t *acc, size_t a, size_t b)
{
    size_t t = attn__mul_lim(a, b, (size_t)-1 - 1);
    if (t == (size_t)-1 || *acc > (size_t)-1 - 1 - t) return 0;
    *acc += t;
    return 1;
}

static attn_status attn__param_count(size_t d, size_t heads, size_t dff, size_t n_attn,
                                     size_t n_ln, attn_param_count *c)
{
    attn_param_count r;
    size_t dd;
    if (!c) return ATTN_ERR_NULL;
    if (!d || !heads || !dff || d % heads) return ATTN_ERR_SIZE;
    memset(&r, 0, sizeof r);
    dd = attn__mul_lim(d, d, (size_t)-1 - 1);
    if (dd == (size_t)-1 || !attn__count_add(&r.attention_weights, 4 * n_attn, dd) ||
        !attn__count_add(&r.attention_biases, 4 * n_attn, d) ||
        !attn__count_add(&r.ffn_weights, 2 * d, dff) || !attn__count_add(&r.ffn_biases, 1, dff) ||
        !attn__count_add(&r.ffn_biases, 1, d) || !attn__count_add(&r.layernorm, 2 * n_ln, d) ||
        !attn__count_add(&r.total, 1, r.attention_weights) ||
        !attn__count_add(&r.total, 1, r.attention_biases) ||
        !attn__count_add(&r.total, 1, r.ffn_weights) ||
        !attn__count_add(&r.total, 1, r.ffn_biases) || !attn__count_add(&r.total, 1, r.layernorm))
        return ATTN_ERR_OVERFLOW;
    *c = r;
    return ATTN_OK;
}

ATTN_API attn_status attn_encoder_param_count(size_t d_model, size_t heads, size_t d_ff,
                                              attn_param_count *count)
{
    return attn__param_count(d_model, heads, d_ff, 1, 2, count);
}

ATTN_API attn_status attn_decoder_param_count(size_t d_model, size_t heads, size_t d_ff,
                                              attn_param_count *count)
{
    return attn__param_count(d_model, heads, d_ff, 2, 3, count);
}
