/* ---- decoder-only block -----------------------------------------------------------------
 * Today's small language models' layer (Llama, Mistral, Qwen, GPT-NeoX, Phi): norm ->
 * attention with RoPE and grouped-query heads against a KV cache -> residual -> norm ->
 * (gated) MLP -> residual, or both branches from one input (parallel residual). Composed
 * from the public kernels; the weights are used as stored (attn_matrix views). */

static size_t attn__dq(const attn_decoder_only_weights *w) { return w->heads * w->head_dim; }
static size_t attn__dkv(const attn_decoder_only_weights *w) { return w->kv_heads * w->head_dim; }

static attn_status attn__dec_only_check(const attn_decoder_only_weights *w)
{
    attn_status st;
    size_t dq, dkv;
    if (!w) return ATTN_ERR_NULL;
    if (!w->d_model || !w->heads || !w->kv_heads || !w->head_dim || !w->d_ff ||
        w->heads % w->kv_heads)
        return ATTN_ERR_SIZE;
    if (w->heads > ATTN__MAX_ELEMS / w->head_dim) return ATTN_ERR_OVERFLOW;
    dq = attn__dq(w), dkv = attn__dkv(w);
    if ((st = attn__matrix_check(&w->wq, w->d_model, dq)) != ATTN_OK ||
        (st = attn__matrix_check(&w->wk, w->d_model, dkv)) != ATTN_OK ||
        (st = attn__matrix_check(&w->wv, w->d_model, dkv)) != ATTN_OK ||
        (st = attn__matrix_check(&w->wo, dq, w->d_model)) != ATTN_OK ||
        (st = attn__matrix_check(&w->w_up, w->d_model, w->d_ff)) != ATTN_OK ||
        (w->w_gate.w && (st = attn__matrix_check(&w->w_gate, w->d_model, w->d_ff)) != ATTN_OK) ||
        (st = attn__matrix_check(&w->w_down, w->d_ff, w->d_model)) != ATTN_OK)
        return st;
    if (!w->attn_norm || (!w->parallel_residual && !w->ffn_norm)) return ATTN_ERR_NULL;
    if (!attn__act_valid(w->act) || (w->norm != ATTN_NORM_RMS && w->norm != ATTN_NORM_LAYER) ||
        (w->parallel_residual != 0 && w->parallel_residual != 1) ||
        (w->int8_products != 0 && w->int8_products != 1) || !attn__finite(w->eps) ||
        w->eps < 0)
        return ATTN_ERR_ARG;
    if (w->rope.head_dim && w->rope.head_dim != w->head_dim) return ATTN_ERR_SIZE;
    if (w->rope.head_dim && (st = attn_rope(&w->rope, NULL, dq, 0, w->heads, 0, NULL)) != ATTN_OK)
        return st;
    /* before anything is appended to the cache */
    return attn__head_arrays_check(w->heads, w->alibi_slopes, w->sinks);
}

/* The largest matmul workspace of the block's seven products for `tokens` rows (with
 * int8_products, attn_matmul_int8's where it runs) */
static size_t attn__dec_only_mm(const attn_decoder_only_weights *w, size_t tokens)
{
    const attn_matrix *m[7];
    const size_t din[7] = {w->d_model, w->d_model, w->d_model, attn__dq(w), w->d_model,
                           w->d_model, w->d_ff};
    const size_t dout[7] = {attn__dq(w), attn__dkv(w), attn__dkv(w), w->d_model, w->d_ff,
                            w->d_ff, w->d_model};
    size_t i, best = 0;
    m[0] = &w->wq, m[1] = &w->wk, m[2] = &w->wv, m[3] = &w->wo, m[4] = &w->w_up;
    m[5] = &w->w_gate, m[6] = &w->w_down;
    for (i = 0; i < 7; i++) {
        const size_t s = attn__view_ws(m[i], w->int8_products, tokens, din[i], dout[i]);
        best = s > best ? s : best;
    }
    return best;
}

/* Bytes of the workspace (valid weights, tokens > 0) past the base alignment; 0 on overflow:
 * h (tokens x d_model), q, o (x heads*head_dim), k, v (x kv_heads*head_dim), t (x d_model),
 * gate, up (x d_ff), then the attention's and the matmul's scratch */
static size_t attn__dec_only_ws(const attn_decoder_only_weights *w, size_t tokens)
{
    attn_attention_params p = attn_attention_init(1, w->heads, w->kv_heads, tokens, 1,
                                                  w->head_dim, w->head_dim, NULL, NULL, NULL,
                                                  NULL, ATTN_LAYOUT_BLHD);
    size_t total = 0;
    if (!attn__seg_f(&total, tokens, w->d_model) || !attn__seg_f(&total, tokens, attn__dq(w)) ||
        !attn__seg_f(&total, tokens, attn__dq(w)) || !attn__seg_f(&total, tokens, attn__dkv(w)) ||
        !attn__seg_f(&total, tokens, attn__dkv(w)) || !attn__seg_f(&total, tokens, w->d_model) ||
        !attn__seg_f(&total, tokens, w->d_ff) || !attn__seg_f(&total, tokens, w->d_ff) ||
        !attn__seg(&total, attn_attention_workspace_size(&p)) ||
        !attn__seg(&total, attn__dec_only_mm(w, tokens)) || !attn__seg(&total, ATTN__ALIGN))
        return 0;
    return total;
}

ATTN_API size_t attn_decoder_only_workspace_size(const attn_decoder_only_weights *w,
                                                 size_t tokens)
{
    if (attn__dec_only_check(w) != ATTN_OK || tokens == 0) return 0;
    return attn__dec_only_ws(w, tokens);
}

/* y (rows x d) = norm(x) with the block's norm */
static void attn__dec_only_norm(const attn_decoder_only_weights *w, const float *g,
                                const float *b, const float *x, size_t ldx, float *y,
                                size_t rows)
{
    if (w->norm == ATTN_NORM_RMS)
        attn_rmsnorm(x, ldx, y, w->d_model, rows, w->d_model, g, w->eps);
    else
        attn_layernorm(x, ldx, y, w->d_model, rows, w->d_model, g, b, w->eps, NULL, NULL);
}

ATTN_API attn_status attn_decoder_only(const attn_decoder_only_weights *w, const float *x,
                                       size_t ldx, float *y, size_t ldy, size_t tokens,
                                       attn_kv_cache *cache, void *workspace,
                                       size_t workspace_size)
{
    attn_status st = attn__dec_only_check(w);
    const int i8 = w && w->int8_products;
    attn_attention_params p;
    size_t need, mm, dq, dkv, d, pos;
    unsigned char *cur;
    float *h, *q, *k, *v, *o, *t, *gate, *up;
    void *aws, *mws;
    if (st != ATTN_OK) return st;
    d = w->d_model, dq = attn__dq(w), dkv = attn__dkv(w);
    if (tokens && (!x || !y || !cache)) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(tokens, d, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(tokens, d, ldy)) != ATTN_OK) return st;
    if (!tokens) return ATTN_OK;
    if (!attn__kv_valid(cache)) return ATTN_ERR_ARG;
    if (cache->batch != 1 || cache->kv_heads != w->kv_heads || cache->head_dim != w->head_dim ||
        cache->v_head_dim != w->head_dim)
        return ATTN_ERR_SIZE;
    if (!attn__kv_room(cache, tokens, w->window)) return ATTN_ERR_CAPACITY;
    if ((need = attn__dec_only_ws(w, tokens)) == 0) return ATTN_ERR_OVERFLOW;
    if (!workspace || workspace_size < need) return ATTN_ERR_WORKSPACE;
    if (attn__block_alias(x, ldx, y, ldy, tokens, d, 1, workspace, need) ||
        attn__kv_hits(cache, y, attn__mat_bytes(tokens, d, ldy)) ||
        attn__kv_hits(cache, x, attn__mat_bytes(tokens, d, ldx)) ||
        attn__kv_hits(cache, workspace, need))
        return ATTN_ERR_ALIAS;
    cur = (unsigned char *)attn__align(workspace);
    h = (float *)attn__take(&cur, tokens * d * sizeof(float));
    q = (float *)attn__take(&cur, tokens * dq * sizeof(float));
    o = (float *)attn__take(&cur, tokens * dq * sizeof(float));
    k = (float *)attn__take(&cur, tokens * dkv * sizeof(float));
    v = (float *)attn__take(&cur, tokens * dkv * sizeof(float));
    t = (float *)attn__take(&cur, tokens * d * sizeof(float));
    gate = (float *)attn__take(&cur, tokens * w->d_ff * sizeof(float));
    up = (float *)attn__take(&cur, tokens * w->d_ff * sizeof(float));
    p = attn_attention_init(1, w->heads, w->kv_heads, tokens, 1, w->head_dim, w->head_dim,
                            NULL, NULL, NULL, NULL, ATTN_LAYOUT_BLHD);
    aws = attn__take(&cur, attn_attention_workspace_size(&p));
    mm = attn__dec_only_mm(w, tokens);
    mws = mm ? attn__take(&cur, mm) : NULL;
    /* attention: h = norm1(x); q, k, v; RoPE at the cache's positions; append; attend */
    pos = cache->ring ? cache->pos : cache->len;
    attn__dec_only_norm(w, w->attn_norm, w->attn_norm_b, x, ldx, h, tokens);
    attn__linear_view(&w->wq, h, d, tokens, d, dq, ATTN_ACT_NONE, q, dq, mws, mm, i8);
    attn__linear_view(&w->wk, h, d, tokens, d, dkv, ATTN_ACT_NONE, k, dkv, mws, mm, i8);
    attn__linear_view(&w->wv, h, d, tokens, d, dkv, ATTN_ACT_NONE, v, dkv, mws, mm, i8);
    if (w->rope.head_dim) {
        attn_rope(&w->rope, q, dq, tokens, w->heads, pos, NULL);
        attn_rope(&w->rope, k, dkv, tokens, w->kv_heads, pos, NULL);
    }
    attn_kv_cache_append(cache, tokens, k, v, ATTN_LAYOUT_BLHD);
    p = attn_attention_init_kv(cache, w->heads, tokens, q, o, ATTN_LAYOUT_BLHD,
                               ATTN_CAUSAL_BOTTOM_RIGHT);
    p.window = w->window, p.sinks = w->sinks, p.alibi_slopes = w->alibi_slopes;
    attn_attention(&p, aws, attn_attention_workspace_size(&p));
    attn__linear_view(&w->wo, o, dq, tokens, dq, d, ATTN_ACT_NONE, t, d, mws, mm, i8);
    /* MLP: from norm2 of x (parallel) or of x + attention (sequential, written to y) */
    if (w->parallel_residual) {
        if (w->ffn_norm) attn__dec_only_norm(w, w->ffn_norm, w->ffn_norm_b, x, ldx, h, tokens);
    } else {
        attn_add(t, d, x, ldx, tokens, d); /* then y = x + attention (y may be x) */
        attn__copy_rows(t, d, y, ldy, tokens, d);
        attn__dec_only_norm(w, w->ffn_norm, w->ffn_norm_b, y, ldy, h, tokens);
    }
    attn__linear_view(&w->w_up, h, d, tokens, d, w->d_ff, w->w_gate.w ? ATTN_ACT_NONE : w->act,
                      up, w->d_ff, mws, mm, i8);
    if (w->w_gate.w) {
        attn__linear_view(&w->w_gate, h, d, tokens, d, w->d_ff, ATTN_ACT_NONE, gate, w->d_ff,
                          mws, mm, i8);
        attn_glu(w->act, gate, w->d_ff, up, w->d_ff, up, w->d_ff, tokens, w->d_ff);
    }
    attn__linear_view(&w->w_down, up, w->d_ff, tokens, w->d_ff, d, ATTN_ACT_NONE, h, d, mws,
                      mm, i8);
    if (w->parallel_residual) { /* y = x + attention + MLP */
        attn_add(t, d, x, ldx, tokens, d);
        attn_add(t, d, h, d, tokens, d);
        attn__copy_rows(t, d, y, ldy, tokens, d);
    } else {
        attn_add(y, ldy, h, d, tokens, d);
    }
    attn__flush_rows(y, ldy, tokens, d);
    return ATTN_OK;
}
