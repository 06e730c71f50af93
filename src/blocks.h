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
    if (!attn_dtype_size(w_type)) return ATTN_ERR_ARG;
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

/* ---- feed-forward ----------------------------------------------------------------------- */

static attn_status attn__ffn_check(const attn_ffn_weights *w)
{
    attn_status st;
    if (!w) return ATTN_ERR_NULL;
    if (!w->w1 || !w->w2) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(w->d_model, w->d_ff, w->d_ff)) != ATTN_OK) return st;
    if (!attn__act_valid(w->act) || !attn_dtype_size(w->wtype)) return ATTN_ERR_ARG;
    return ATTN_OK;
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
    size_t a = attn_linear_workspace_size(ATTN_NO_TRANS, tokens, w->d_model, w->d_ff);
    size_t b = attn_linear_workspace_size(ATTN_NO_TRANS, tokens, w->d_ff, w->d_model);
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
    float *h = (float *)attn__take(&cur, tokens * w->d_ff * sizeof(float));
    void *mws = mm ? attn__take(&cur, mm) : NULL;
    attn_linear_typed(x, ldx, tokens, w->d_model, ATTN_NO_TRANS, w->wtype, w->w1, w->d_ff, w->b1,
                      w->d_ff, w->act, h, w->d_ff, mws, mm);
    attn_linear_typed(h, w->d_ff, tokens, w->d_ff, ATTN_NO_TRANS, w->wtype, w->w2, w->d_model,
                      w->b2, w->d_model, ATTN_ACT_NONE, y, ldy, mws, mm);
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

static attn_status attn__mha_check(const attn_mha_weights *w)
{
    attn_status st;
    if (!w) return ATTN_ERR_NULL;
    if (!w->wq || !w->wk || !w->wv || !w->wo) return ATTN_ERR_NULL;
    if (!w->heads || !w->d_model || w->d_model % w->heads) return ATTN_ERR_SIZE;
    if ((st = attn__check_mat(w->d_model, w->d_model, w->d_model)) != ATTN_OK) return st;
    return attn_dtype_size(w->wtype) ? ATTN_OK : ATTN_ERR_ARG;
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
    size_t a = attn_linear_workspace_size(ATTN_NO_TRANS, lq, d, d);
    size_t b = attn_linear_workspace_size(ATTN_NO_TRANS, lk, d, d);
    return a > b ? a : b;
}

/* bytes of attn_mha's workspace (valid weights) without the base alignment; 0 on overflow */
static size_t attn__mha_ws(const attn_mha_weights *w, size_t lq, size_t lk)
{
    attn_attention_params p;
    size_t total = 0;
    if (lq == 0 || lk == 0) return 0;
    p = attn__mha_params(w, lq, lk, NULL, NULL, NULL, NULL, 0);
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

static void attn__mha_run(const attn_mha_weights *w, const float *xq, size_t ldxq, size_t lq,
                          const float *xkv, size_t ldxkv, size_t lk, int causal, float *y,
                          size_t ldy, unsigned char *cur)
{
    const size_t d = w->d_model, mm = attn__mha_mm(w, lq, lk);
    float *q = (float *)attn__take(&cur, lq * d * sizeof(float));
    float *k = (float *)attn__take(&cur, lk * d * sizeof(float));
    float *v = (float *)attn__take(&cur, lk * d * sizeof(float));
    float *o = (float *)attn__take(&cur, lq * d * sizeof(float));
    attn_attention_params p = attn__mha_params(w, lq, lk, q, k, v, o, causal);
    const size_t aws = attn_attention_workspace_size(&p);
    void *att_ws = attn__take(&cur, aws);
    void *mws = mm ? attn__take(&cur, mm) : NULL;
    const attn_dtype t = w->wtype;
    attn_linear_typed(xq, ldxq, lq, d, ATTN_NO_TRANS, t, w->wq, d, w->bq, d, ATTN_ACT_NONE, q, d,
                      mws, mm);
    attn_linear_typed(xkv, ldxkv, lk, d, ATTN_NO_TRANS, t, w->wk, d, w->bk, d, ATTN_ACT_NONE, k,
                      d, mws, mm);
    attn_linear_typed(xkv, ldxkv, lk, d, ATTN_NO_TRANS, t, w->wv, d, w->bv, d, ATTN_ACT_NONE, v,
                      d, mws, mm);
    attn_attention(&p, att_ws, aws);
    /* the output of attention is a convex combination of V rows: it may be denormal only
     * where V is; attn_linear flushes y */
    attn_linear_typed(o, d, lq, d, ATTN_NO_TRANS, t, w->wo, d, w->bo, d, ATTN_ACT_NONE, y, ldy,
                      mws, mm);
}

ATTN_API attn_status attn_mha(const attn_mha_weights *w, const float *xq, size_t ldxq,
                              size_t q_tokens, const float *xkv, size_t ldxkv, size_t kv_tokens,
                              int causal, float *y, size_t ldy, void *workspace,
                              size_t workspace_size)
{
    attn_status st = attn__mha_check(w);
    size_t need, kb;
    if (st != ATTN_OK) return st;
    if (q_tokens && (!xq || !xkv || !y)) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(q_tokens, w->d_model, ldxq)) != ATTN_OK) return st;
    if ((st = attn__check_mat(kv_tokens, w->d_model, ldxkv)) != ATTN_OK) return st;
    if ((st = attn__check_mat(q_tokens, w->d_model, ldy)) != ATTN_OK) return st;
    if (causal != 0 && causal != 1) return ATTN_ERR_ARG;
    if (!q_tokens) return ATTN_OK;
    if (!kv_tokens) return ATTN_ERR_SIZE; /* queries with no keys */
    if ((need = attn_mha_workspace_size(w, q_tokens, kv_tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    /* y may be xq or xkv exactly (same pointer, leading dimension and rows) */
    kb = attn__mat_bytes(kv_tokens, w->d_model, ldxkv);
    if (attn__block_alias(xq, ldxq, y, ldy, q_tokens, w->d_model, 1, workspace, need) ||
        (!(xkv == y && ldxkv == ldy && kv_tokens == q_tokens) &&
         attn__bytes_overlap(y, attn__mat_bytes(q_tokens, w->d_model, ldy), xkv, kb)) ||
        attn__bytes_overlap(workspace, need, xkv, kb))
        return ATTN_ERR_ALIAS;
    attn__mha_run(w, xq, ldxq, q_tokens, xkv, ldxkv, kv_tokens, causal, y, ldy,
                  (unsigned char *)attn__align(workspace));
    return ATTN_OK;
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

ATTN_API attn_status attn_encoder(const attn_encoder_weights *w, const float *x, size_t ldx,
                                  float *y, size_t ldy, size_t tokens, int causal,
                                  void *workspace, size_t workspace_size)
{
    attn_status st = attn__encoder_check(w);
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
    if ((need = attn__encoder_ws(w, tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    if (attn__block_alias(x, ldx, y, ldy, tokens, d, 1, workspace, need)) return ATTN_ERR_ALIAS;
    cur = (unsigned char *)attn__align(workspace);
    t = (float *)attn__take(&cur, tokens * d * sizeof(float));
    sub = cur; /* the sublayers' workspace, aligned */
    if (w->norm == ATTN_PRE_LN) {
        attn__copy_rows(x, ldx, y, ldy, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->attn, t, d, tokens, t, d, tokens, causal, t, d, sub);
        attn_add(y, ldy, t, d, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, t, d, t, d, tokens, sub);
        attn_add(y, ldy, t, d, tokens, d);
    } else {
        attn__mha_run(&w->attn, x, ldx, tokens, x, ldx, tokens, causal, t, d, sub);
        attn_add(t, d, x, ldx, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, y, ldy, t, d, tokens, sub);
        attn_add(t, d, y, ldy, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
    }
    attn__flush_rows(y, ldy, tokens, d);
    return ATTN_OK;
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
    if (attn__decoder_check(w) != ATTN_OK || tokens == 0 || mem_tokens == 0) return 0;
    return attn__decoder_ws(w, tokens, mem_tokens);
}

ATTN_API attn_status attn_decoder(const attn_decoder_weights *w, const float *x, size_t ldx,
                                  float *y, size_t ldy, size_t tokens, const float *mem,
                                  size_t ldmem, size_t mem_tokens, void *workspace,
                                  size_t workspace_size)
{
    attn_status st = attn__decoder_check(w);
    size_t need, d;
    unsigned char *cur, *sub;
    float *t;
    if (st != ATTN_OK) return st;
    d = w->ffn.d_model;
    if (tokens && (!x || !y || !mem)) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(tokens, d, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(tokens, d, ldy)) != ATTN_OK) return st;
    if ((st = attn__check_mat(mem_tokens, d, ldmem)) != ATTN_OK) return st;
    if (!tokens) return ATTN_OK;
    if (!mem_tokens) return ATTN_ERR_SIZE; /* cross-attention with no keys */
    if ((need = attn__decoder_ws(w, tokens, mem_tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    if (attn__block_alias(x, ldx, y, ldy, tokens, d, 1, workspace, need) ||
        attn__bytes_overlap(y, attn__mat_bytes(tokens, d, ldy), mem,
                            attn__mat_bytes(mem_tokens, d, ldmem)) ||
        attn__bytes_overlap(workspace, need, mem, attn__mat_bytes(mem_tokens, d, ldmem)))
        return ATTN_ERR_ALIAS;
    cur = (unsigned char *)attn__align(workspace);
    t = (float *)attn__take(&cur, tokens * d * sizeof(float));
    sub = cur;
    if (w->norm == ATTN_PRE_LN) {
        attn__copy_rows(x, ldx, y, ldy, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->self_attn, t, d, tokens, t, d, tokens, 1, t, d, sub);
        attn_add(y, ldy, t, d, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->cross_attn, t, d, tokens, mem, ldmem, mem_tokens, 0, t, d, sub);
        attn_add(y, ldy, t, d, tokens, d);
        attn_layernorm(y, ldy, t, d, tokens, d, w->ln3_gamma, w->ln3_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, t, d, t, d, tokens, sub);
        attn_add(y, ldy, t, d, tokens, d);
    } else {
        attn__mha_run(&w->self_attn, x, ldx, tokens, x, ldx, tokens, 1, t, d, sub);
        attn_add(t, d, x, ldx, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln1_gamma, w->ln1_beta, w->eps, NULL, NULL);
        attn__mha_run(&w->cross_attn, y, ldy, tokens, mem, ldmem, mem_tokens, 0, t, d, sub);
        attn_add(t, d, y, ldy, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln2_gamma, w->ln2_beta, w->eps, NULL, NULL);
        attn__ffn_run(&w->ffn, y, ldy, t, d, tokens, sub);
        attn_add(t, d, y, ldy, tokens, d);
        attn_layernorm(t, d, y, ldy, tokens, d, w->ln3_gamma, w->ln3_beta, w->eps, NULL, NULL);
    }
    attn__flush_rows(y, ldy, tokens, d);
    return ATTN_OK;
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
