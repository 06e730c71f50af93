/* dispatch_ops.h - a fixed set of calls through the public API, their outputs appended to
 * out; shared by test_dispatch.c (the build that dispatches at run time) and dispatch_ref.c
 * (the same calls in a build of one instruction set), so that their bits can be compared. */
#include <string.h>

#define DSP_WS (4u << 20)

static float dsp_val(size_t i, size_t salt)
{
    const unsigned h = (unsigned)(i * 2654435761u + salt * 40503u);
    return (float)(h % 8001u) / 1000.0f - 4.0f;
}

static void dsp_fill(float *x, size_t n, size_t salt)
{
    size_t i;
    for (i = 0; i < n; i++) x[i] = dsp_val(i, salt);
}

/* Appends a status as a float, so that a failing call shows up as a difference too */
static size_t dsp_status(float *out, size_t o, attn_status st)
{
    out[o] = (float)st;
    return o + 1;
}

static size_t dispatch_ops(float *out)
{
    static float a[64 * 1024], b[64 * 1024], c[64 * 1024];
    static unsigned char ws[DSP_WS];
    static const size_t sm_n[] = {3, 16, 17, 64, 100, 1000};
    size_t o = 0, i, t;
    dsp_fill(a, 64 * 1024, 1);
    dsp_fill(b, 64 * 1024, 2);
    for (i = 0; i < sizeof sm_n / sizeof sm_n[0]; i++) {
        o = dsp_status(out, o, attn_softmax(a, sm_n[i], out + o + 1, sm_n[i], 5, sm_n[i], 1.0f));
        o += 5 * sm_n[i];
        o = dsp_status(out, o, attn_softmax(a, sm_n[i], out + o + 1, sm_n[i], 5, sm_n[i], 0.7f));
        o += 5 * sm_n[i];
    }
    o = dsp_status(out, o, attn_layernorm(a, 37, out + o + 1, 37, 7, 37, b, b + 40, 1e-5f, NULL,
                                          NULL));
    o += 7 * 37;
    o = dsp_status(out, o, attn_rmsnorm(a, 256, out + o + 1, 256, 3, 256, b, 1e-6f));
    o += 3 * 256;
    for (t = 0; t < 4; t++) { /* every transpose combination, odd sizes, with a workspace */
        const attn_trans ta = t & 1 ? ATTN_TRANS : ATTN_NO_TRANS;
        const attn_trans tb = t & 2 ? ATTN_TRANS : ATTN_NO_TRANS;
        const size_t m = 70, n = 50, k = 300;
        const size_t lda = ta ? m : k, ldb = tb ? k : n;
        memset(c, 0, m * n * sizeof(float));
        o = dsp_status(out, o, attn_matmul(ta, tb, m, n, k, 0.5f, a, lda, b, ldb, 0.0f, c, n,
                                           ws, DSP_WS));
        memcpy(out + o, c, m * n * sizeof(float));
        o += m * n;
    }
    { /* grouped-query attention, causal, prefill and decode */
        attn_attention_params p = attn_attention_init(1, 4, 2, 50, 70, 32, 32, a, b, a + 8192,
                                                      c, ATTN_LAYOUT_BHLD);
        p.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        o = dsp_status(out, o, attn_attention(&p, ws, DSP_WS));
        memcpy(out + o, c, 4 * 50 * 32 * sizeof(float));
        o += 4 * 50 * 32;
        p = attn_attention_init(1, 4, 2, 1, 70, 32, 32, a, b, a + 8192, c, ATTN_LAYOUT_BHLD);
        o = dsp_status(out, o, attn_attention(&p, ws, DSP_WS));
        memcpy(out + o, c, 4 * 32 * sizeof(float));
        o += 4 * 32;
    }
    {
        attn_rope_params p; /* adjacent and halves, partial rotary */
        memset(&p, 0, sizeof p);
        p.head_dim = 40;
        memcpy(out + o + 1, a, 7 * 120 * sizeof(float));
        o = dsp_status(out, o, attn_rope(&p, out + o + 1, 120, 7, 3, 1000, NULL));
        o += 7 * 120;
        p.pairing = ATTN_ROPE_HALVES;
        p.rot_dim = 24;
        memcpy(out + o + 1, a, 7 * 120 * sizeof(float));
        o = dsp_status(out, o, attn_rope(&p, out + o + 1, 120, 7, 3, 5, NULL));
        o += 7 * 120;
    }
    { /* f32 -> f16 -> f32, f32 -> bf16 -> f32 */
        static unsigned short h[1000];
        o = dsp_status(out, o, attn_convert(ATTN_F16, h, ATTN_F32, a, 1000));
        o = dsp_status(out, o, attn_convert(ATTN_F32, out + o + 1, ATTN_F16, h, 1000));
        o += 1000;
        o = dsp_status(out, o, attn_convert(ATTN_BF16, h, ATTN_F32, b, 1000));
        o = dsp_status(out, o, attn_convert(ATTN_F32, out + o + 1, ATTN_BF16, h, 1000));
        o += 1000;
    }
    { /* int8 products with q8_0 and q4_0 weights */
        static unsigned char q[40 * 2 * 34];
        o = dsp_status(out, o, attn_convert(ATTN_Q8_0, q, ATTN_F32, b, 40 * 64));
        o = dsp_status(out, o, attn_matmul_int8(9, 40, 64, 0.5f, a, 64, ATTN_Q8_0, q, 64, 0.0f,
                                                out + o + 1, 40, ws, DSP_WS));
        o += 9 * 40;
        o = dsp_status(out, o, attn_convert(ATTN_Q4_0, q, ATTN_F32, b, 40 * 64));
        o = dsp_status(out, o, attn_matmul_int8(9, 40, 64, 0.5f, a, 64, ATTN_Q4_0, q, 64, 0.0f,
                                                out + o + 1, 40, ws, DSP_WS));
        o += 9 * 40;
    }
    o = dsp_status(out, o, attn_activation(ATTN_ACT_GELU, a, 100, out + o + 1, 100, 2, 100));
    o += 200;
    o = dsp_status(out, o, attn_linear(a, 33, 7, 33, ATTN_TRANS, b, 33, b + 2000, 40,
                                       ATTN_ACT_GELU_TANH, out + o + 1, 40, ws, DSP_WS));
    o += 7 * 40;
    return o;
}

/* The workspace sizes of a few calls (attention at three head sizes, matmul, linear,
 * decode's matrix-vector product) into ws; returns their count */
enum { DSP_NWS = 8 };
static size_t dispatch_ws(size_t *ws)
{
    static const size_t hd[3] = {64, 128, 96};
    size_t i;
    for (i = 0; i < 3; i++) {
        const attn_attention_params p = attn_attention_init(1, 8, 2, 5, 100, hd[i], hd[i], NULL,
                                                            NULL, NULL, NULL,
                                                            ATTN_LAYOUT_BHLD);
        ws[i] = attn_attention_workspace_size(&p);
    }
    ws[3] = attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_TRANS, 300, 200, 100);
    ws[4] = attn_matmul_workspace_size(ATTN_TRANS, ATTN_NO_TRANS, SIZE_MAX, SIZE_MAX, SIZE_MAX);
    ws[5] = attn_matmul_int8_workspace_size(64, 256, 512);
    ws[6] = attn_linear_workspace_size(ATTN_TRANS, 3, 96, 160);
    ws[7] = attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_NO_TRANS, 8, 4096, 4096);
    return DSP_NWS;
}
