/* test_quant: the block-quantized weight types ATTN_Q8_0 and ATTN_Q4_0 (ggml's block_q8_0 and
 * block_q4_0) against references written here from ggml's definitions.
 *
 * Covered:
 *  - attn_dtype_size, attn_dtype_block and attn_dtype_bytes for every type, invalid values,
 *    lengths that are not whole blocks and byte counts that overflow;
 *  - quantizing (attn_convert to q8_0 / q4_0 from f32, f16 and bf16) against ref_quant_block
 *    (ggml's quantize_row_q8_0_reference / quantize_row_q4_0_reference, float arithmetic, the
 *    scale rounded to binary16 to nearest even), byte for byte: random data of magnitudes
 *    1e-3, 1 and 1e3 over n = 32, 64 and 32 * 33; constructed blocks: zeros, exact ties
 *    (x * (1 / d) = k + 1/2 exactly: q8_0 rounds them away from zero, q4_0 truncates
 *    x * (1 / d) + 8.5), the q4_0 sign rule (the first x of largest |x| gives d = x / -8),
 *    subnormal elements, scales that are float subnormals, binary16 subnormals and binary16
 *    ties, scales next to binary16's overflow on both sides, wide ranges; and blocks found by
 *    search where x / d instead of x * (1 / d), fma(x, 1 / d, 8.5) instead of x * (1 / d) + 8.5,
 *    or amax * (1 / 127) instead of amax / 127 give other bits. Two hand-computed blocks check
 *    the reference itself. Where 1 / d overflows float (max |x| below about 1e-37) ggml's q
 *    are undefined and only the scale (+-0) is compared. Destinations at byte offsets 0, 1, 3,
 *    sources at element offsets 0 and 1, guard bytes before and after;
 *  - dequantizing (to f32 exactly; to f16 and bf16, d * q rounded once to nearest even) on
 *    blocks built directly: every int8 value and every nibble in both halves of a byte, under
 *    scales 0, -0, 1, -1, binary16's smallest and largest subnormal and smallest normal, 65504
 *    (products past f16's range: inf) and random finite scales, over n = 32, 64, 32 * 33 at
 *    odd offsets. Values bit for bit; the sign of a zero (ggml's d * q is -0 where d and q,
 *    for q4_0 q - 8, have opposite signs) in a check of its own;
 *  - a block type copied to itself; refusals with nothing written: NaN, inf, a scale that
 *    overflows binary16 (the bad block last of 33: checked before anything is written), n not
 *    a multiple of 32, q8_0 <-> q4_0, bad types, NULL, any overlap of the bytes (and buffers
 *    just touching accepted), lengths whose bytes overflow;
 *  - attn_matmul_typed with B in blocks (op(B) = B^T, rows padded with NaN-scaled blocks, at
 *    odd byte offsets; A and C one float off their allocation; lda, ldb, ldc padded), both
 *    op(A), m over 1..9, 13, 37, 70, n over 1..40, k over 32..544 (past the 256 chunk depth),
 *    alpha != 1, beta 0 (C NaN: never read) and 0.5, without a workspace (streamed) and with
 *    one (packed for m > 8), against the double product with B dequantized here:
 *        |C - Cref| <= (k + 2) u mag + 1e-30,  mag = |alpha| sum_p |a_ip b_pj| + |beta c_ij|,
 *    u = 2^-24: attn_matmul's bound, as test_matmul16 holds its 16-bit products to (the
 *    dequantized elements are exact in float32, so it is the f32 path's); C's padding and the
 *    guards around it untouched. Its errors, C untouched;
 *  - attn_linear_typed with q weights (bias, GELU / SiLU, 1..20 tokens, with and without a
 *    workspace) against ref_linear on the dequantized W within test_blocks' linear bound
 *    1.2 (d_in + 4) u mag + 2e-6 |ref|; its errors, y untouched;
 *  - a decoder-only layer (attn_decoder_only: d_model 64, 4 heads on 2 KV heads of 16,
 *    SwiGLU d_ff 96, RMSNorm, RoPE; weights [out, in]) run on 5 tokens of prefill, then 2,
 *    then 1 with (a) f32 weights, (b) the same quantized to q8_0 / q4_0, (c) the f32
 *    path on (b)'s weights dequantized: (b) against (c) within 1e-5 max|y| (the same arithmetic
 *    on the same values: only summation orders differ), (b) against (a) within a bound about
 *    3x the error measured when it was written (printed every run); (d) (b) with
 *    int8_products: bit for bit the layer composed here from the public kernels with
 *    attn_matmul_int8 for its products (the composition with attn_linear_typed equal to (b)
 *    bit for bit, so the composition is the block's), within TOL_ACT of (b) (and not equal
 *    to it) and within (b)'s bound of (a); its workspace query never below (b)'s; errors of
 *    a q weight with trans NO_TRANS or a leading dimension not a multiple of 32, nothing
 *    written or appended. */
#include "attn.h"
#include "check.h"
#include "ref_linalg.h"
#include "ref_blocks.h"

#include <float.h>
#include <stdint.h>

#define QK 32                       /* elements per block */
#define GUARD 16                    /* guard bytes (or floats) after every output */
static const unsigned char GB = 0xA5; /* guard byte */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* check_seed with a well-mixed state (xorshift's first draws from a small seed are small) */
static void seed(unsigned long long s) { check_seed((s + 1) * 0x9E3779B97F4A7C15ull); }

static float f_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t u_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static const char *qname(attn_dtype t) { return t == ATTN_Q8_0 ? "q8_0" : "q4_0"; }
static const char *ename(attn_dtype t)
{
    return t == ATTN_F32 ? "f32" : t == ATTN_F16 ? "f16" : "bf16";
}
static size_t qbytes(attn_dtype t) { return t == ATTN_Q8_0 ? 34 : 18; } /* bytes per block */
static size_t esize(attn_dtype t) { return t == ATTN_F32 ? 4 : 2; }      /* element types */

/* ---- the formats ---------------------------------------------------------------------- */

/* binary16 bits to float: (-1)^s 2^(e-15) (1 + m/1024), subnormals 2^-14 m/1024 (exact) */
static float ref_h2f(uint16_t h)
{
    const int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v;
    if (e == 31) v = m ? NAN : INFINITY;
    else if (e == 0) v = ldexp((double)m, -24);
    else v = ldexp(1024.0 + m, e - 25);
    return (float)(s ? -v : v);
}

/* float to binary16 bits, to nearest even on the 11-bit grid of the value's binade
 * (subnormal quantum 2^-24), inf past 65520 */
static uint16_t ref_f2h(float f)
{
    const uint16_t s = signbit(f) ? 0x8000u : 0u;
    const double a = fabs((double)f);
    double r;
    int e;
    if (isnan(f)) return (uint16_t)(s | 0x7E00u);
    if (isinf(f)) return (uint16_t)(s | 0x7C00u);
    if (a == 0.0) return s;
    frexp(a, &e); /* a = m 2^e, m in [0.5, 1): the quantum is 2^(e - 11) */
    if (e < -13) e = -13;
    r = rint(ldexp(a, 11 - e)); /* exact scaling; rint: nearest even */
    r = ldexp(r, e - 11);
    if (r >= 65536.0) return (uint16_t)(s | 0x7C00u);
    if (r < ldexp(1.0, -14)) return (uint16_t)(s | (uint16_t)ldexp(r, 24));
    frexp(r, &e);
    return (uint16_t)(s | (e + 14) << 10 | ((uint16_t)ldexp(r, 11 - e) - 1024));
}

static float ref_bf2f(uint16_t h) { return f_of((uint32_t)h << 16); }

/* float to bfloat16 bits, to nearest even (finite and inf inputs; a NaN kept quiet) */
static uint16_t ref_f2bf(float f)
{
    const uint32_t u = u_of(f);
    if (isnan(f)) return (uint16_t)(u >> 16 | 0x40u);
    return (uint16_t)((u + 0x7FFFu + (u >> 16 & 1u)) >> 16);
}

/* ---- the reference quantizer and dequantizer (ggml's rules) ---------------------------- */

/* One block x[0..31] into out (qbytes(t) bytes), as ggml's reference code:
 *   q8_0: amax = max |x|, d = amax / 127, id = d ? 1 / d : 0, q = roundf(x * id);
 *   q4_0: max = the first x of largest |x|, d = max / -8, id = d ? 1 / d : 0,
 *         q = min(15, (int)(x * id + 8.5f)), qs[j] = q(x[j]) | q(x[j + 16]) << 4;
 * d stored as binary16. Every operation in float, each product its own statement (no
 * contraction into an fma). Returns -1 for a block to refuse (NaN or inf, or d rounding to inf
 * in binary16); 1 when 1 / d overflows float (every |x| below about 1e-37: ggml's q are then
 * undefined, its d is defined: +-0 in binary16; out's q are zeroed); 0 otherwise. */
static int ref_quant_block(attn_dtype t, const float *x, unsigned char *out)
{
    float amax = 0.0f, max = 0.0f, d, id;
    uint16_t dh;
    int j;
    for (j = 0; j < QK; j++) {
        if (isnan(x[j]) || isinf(x[j])) return -1;
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    d = t == ATTN_Q8_0 ? amax / 127.0f : max / -8.0f;
    id = d != 0.0f ? 1.0f / d : 0.0f;
    dh = ref_f2h(d);
    if ((dh & 0x7FFFu) == 0x7C00u) return -1;
    out[0] = (unsigned char)(dh & 0xFFu);
    out[1] = (unsigned char)(dh >> 8);
    if (isinf(id)) {
        memset(out + 2, 0, qbytes(t) - 2);
        return 1;
    }
    if (t == ATTN_Q8_0) {
        for (j = 0; j < QK; j++) {
            const float v = x[j] * id;
            out[2 + j] = (unsigned char)(int)roundf(v); /* two's complement byte */
        }
    } else {
        for (j = 0; j < QK / 2; j++) {
            const float v0 = x[j] * id, v1 = x[j + QK / 2] * id;
            const float w0 = v0 + 8.5f, w1 = v1 + 8.5f;
            int q0 = (int)w0, q1 = (int)w1; /* truncation (w >= 0 here) */
            if (q0 > 15) q0 = 15;
            if (q1 > 15) q1 = 15;
            out[2 + j] = (unsigned char)(q0 | q1 << 4);
        }
    }
    return 0;
}

/* The integer of element i of a block: q8_0 its int8, q4_0 its nibble (0..15) */
static int code_of(attn_dtype t, const unsigned char *blk, int i)
{
    if (t == ATTN_Q8_0) return blk[2 + i] < 128 ? blk[2 + i] : blk[2 + i] - 256;
    return i < QK / 2 ? blk[2 + i] & 15 : blk[2 + i - QK / 2] >> 4;
}

static uint16_t scale_of(const unsigned char *blk) { return (uint16_t)(blk[0] | blk[1] << 8); }

/* Element i of a block: d * q (q4_0: d * (nibble - 8)), exact in double and in float */
static float ref_deq(attn_dtype t, const unsigned char *blk, int i)
{
    const double d = ref_h2f(scale_of(blk));
    const int q = code_of(t, blk, i) - (t == ATTN_Q4_0 ? 8 : 0);
    return (float)(d * q);
}

/* The bits of float v stored as element type t (rounded once) */
static uint32_t ref_bits(attn_dtype t, float v)
{
    return t == ATTN_F32 ? u_of(v) : t == ATTN_F16 ? ref_f2h(v) : ref_f2bf(v);
}

static uint32_t get_bits(attn_dtype t, const unsigned char *p, size_t i)
{
    uint32_t x = 0;
    uint16_t h;
    if (t == ATTN_F32) memcpy(&x, p + 4 * i, 4);
    else memcpy(&h, p + 2 * i, 2), x = h;
    return x;
}

/* x stored as type t at dst (n elements, any alignment); xw receives the stored values as
 * floats (what a quantizer takes: 16-bit values widened exactly) */
static void make_src(attn_dtype t, const float *x, size_t n, unsigned char *dst, float *xw)
{
    size_t i;
    for (i = 0; i < n; i++) {
        if (t == ATTN_F32) {
            memcpy(dst + 4 * i, &x[i], 4);
            xw[i] = x[i];
        } else {
            const uint16_t h = t == ATTN_F16 ? ref_f2h(x[i]) : ref_f2bf(x[i]);
            memcpy(dst + 2 * i, &h, 2);
            xw[i] = t == ATTN_F16 ? ref_h2f(h) : ref_bf2f(h);
        }
    }
}

/* ---- storage types: sizes ------------------------------------------------------------- */

static void test_sizes(void)
{
    const size_t big = SIZE_MAX - (QK - 1); /* a multiple of 32 */
    const size_t n4 = (SIZE_MAX / 18 / QK + 1) * QK, n8 = (SIZE_MAX / 34 / QK + 1) * QK;
    check(attn_dtype_size(ATTN_F32) == 4 && attn_dtype_size(ATTN_F16) == 2 &&
              attn_dtype_size(ATTN_BF16) == 2 && attn_dtype_size(ATTN_Q8_0) == 0 &&
              attn_dtype_size(ATTN_Q4_0) == 0 && attn_dtype_size((attn_dtype)5) == 0 &&
              attn_dtype_size((attn_dtype)7) == 0 && attn_dtype_size((attn_dtype)-1) == 0,
          "attn_dtype_size: %zu %zu %zu %zu %zu %zu", attn_dtype_size(ATTN_F32),
          attn_dtype_size(ATTN_F16), attn_dtype_size(ATTN_BF16), attn_dtype_size(ATTN_Q8_0),
          attn_dtype_size(ATTN_Q4_0), attn_dtype_size((attn_dtype)5));
    check(attn_dtype_block(ATTN_F32) == 1 && attn_dtype_block(ATTN_F16) == 1 &&
              attn_dtype_block(ATTN_BF16) == 1 && attn_dtype_block(ATTN_Q8_0) == 32 &&
              attn_dtype_block(ATTN_Q4_0) == 32 && attn_dtype_block((attn_dtype)5) == 0 &&
              attn_dtype_block((attn_dtype)7) == 0 && attn_dtype_block((attn_dtype)-1) == 0,
          "attn_dtype_block: %zu %zu %zu %zu %zu %zu", attn_dtype_block(ATTN_F32),
          attn_dtype_block(ATTN_F16), attn_dtype_block(ATTN_BF16), attn_dtype_block(ATTN_Q8_0),
          attn_dtype_block(ATTN_Q4_0), attn_dtype_block((attn_dtype)5));
    check(attn_dtype_bytes(ATTN_F32, 3) == 12 && attn_dtype_bytes(ATTN_F16, 5) == 10 &&
              attn_dtype_bytes(ATTN_BF16, 7) == 14 && attn_dtype_bytes(ATTN_F32, 0) == 0,
          "attn_dtype_bytes of the element types");
    check(attn_dtype_bytes(ATTN_Q8_0, 32) == 34 && attn_dtype_bytes(ATTN_Q8_0, 64) == 68 &&
              attn_dtype_bytes(ATTN_Q4_0, 32) == 18 &&
              attn_dtype_bytes(ATTN_Q4_0, 32 * 33) == 594 &&
              attn_dtype_bytes(ATTN_Q8_0, 32 * 33) == 1122,
          "attn_dtype_bytes of whole blocks: %zu %zu %zu %zu", attn_dtype_bytes(ATTN_Q8_0, 32),
          attn_dtype_bytes(ATTN_Q8_0, 64), attn_dtype_bytes(ATTN_Q4_0, 32),
          attn_dtype_bytes(ATTN_Q4_0, 32 * 33));
    check(attn_dtype_bytes(ATTN_Q8_0, 40) == 0 && attn_dtype_bytes(ATTN_Q4_0, 16) == 0 &&
              attn_dtype_bytes(ATTN_Q8_0, 1) == 0 && attn_dtype_bytes((attn_dtype)7, 32) == 0 &&
              attn_dtype_bytes((attn_dtype)-1, 4) == 0,
          "attn_dtype_bytes: part of a block or an invalid type is not 0");
    /* overflow: SIZE_MAX / 32 blocks of 34 bytes; SIZE_MAX / 4 + 1 floats */
    check(attn_dtype_bytes(ATTN_Q8_0, big) == 0 &&
              attn_dtype_bytes(ATTN_F32, SIZE_MAX / 4 + 1) == 0,
          "attn_dtype_bytes: an overflow is not 0 (%zu)", attn_dtype_bytes(ATTN_Q8_0, big));
    /* 18 n or 34 n overflows, the bytes (n / 32 blocks) do not */
    check(attn_dtype_bytes(ATTN_Q4_0, n4) == n4 / 32 * 18 &&
              attn_dtype_bytes(ATTN_Q8_0, n8) == n8 / 32 * 34,
          "attn_dtype_bytes(q4_0, %zu) = %zu, want %zu; (q8_0, %zu) = %zu, want %zu", n4,
          attn_dtype_bytes(ATTN_Q4_0, n4), n4 / 32 * 18, n8, attn_dtype_bytes(ATTN_Q8_0, n8),
          n8 / 32 * 34);
}

/* ---- quantizing ----------------------------------------------------------------------- */

static long n_quant_blocks, n_deq_elems;

/* Describes the first difference between two blocks (got, want) of x */
static void block_diff(attn_dtype t, const unsigned char *got, const unsigned char *want,
                       const float *x, char *msg, size_t size)
{
    int j, im = 0;
    for (j = 1; j < QK; j++)
        if (fabsf(x[j]) > fabsf(x[im])) im = j;
    if (scale_of(got) != scale_of(want)) {
        snprintf(msg, size, "d %04x, want %04x (largest |x|: x[%d] = %.9g = %a)",
                 (unsigned)scale_of(got), (unsigned)scale_of(want), im, (double)x[im],
                 (double)x[im]);
        return;
    }
    for (j = 0; j < QK; j++)
        if (code_of(t, got, j) != code_of(t, want, j)) {
            snprintf(msg, size, "d %04x, element %d x = %.9g (%a): q %d, want %d",
                     (unsigned)scale_of(want), j, (double)x[j], (double)x[j], code_of(t, got, j),
                     code_of(t, want, j));
            return;
        }
    snprintf(msg, size, "same");
}

/* Quantizes x (n floats, stored first as st at element offset soff) with attn_convert into
 * a guarded buffer at byte offset doff; compares with the reference byte for byte (for blocks
 * whose q ggml leaves undefined, the scale only). A block the reference refuses makes the
 * call ATTN_ERR_ARG with the whole buffer untouched. */
static void check_quantize(attn_dtype qt, attn_dtype st, const float *x, size_t n, size_t doff,
                           size_t soff, const char *tag)
{
    const size_t es = esize(st), bb = qbytes(qt), nb = n / QK, bytes = nb * bb;
    unsigned char *sbuf = (unsigned char *)xmalloc((n + soff) * es);
    unsigned char *src = sbuf + soff * es;
    float *xw = (float *)xmalloc(n * sizeof(float));
    unsigned char *want = (unsigned char *)xmalloc(bytes);
    unsigned char *buf = (unsigned char *)xmalloc(doff + bytes + GUARD), *dst = buf + doff;
    int *flag = (int *)xmalloc(nb * sizeof(int));
    int refuse = 0, kept = 1;
    long bad = -1;
    size_t b, i;
    attn_status r;
    char msg[200] = "";
    make_src(st, x, n, src, xw);
    for (b = 0; b < nb; b++) {
        flag[b] = ref_quant_block(qt, xw + b * QK, want + b * bb);
        if (flag[b] < 0) refuse = 1;
    }
    memset(buf, GB, doff + bytes + GUARD);
    r = attn_convert(qt, dst, st, src, n);
    for (i = 0; i < doff + bytes + GUARD; i++)
        if (refuse || i < doff || i >= doff + bytes) kept &= buf[i] == GB;
    if (refuse) {
        check(r == ATTN_ERR_ARG && kept, "quantize %s <- %s, %s, n %zu: status %d, want %d "
              "(ATTN_ERR_ARG); dst %s", qname(qt), ename(st), tag, n, (int)r, (int)ATTN_ERR_ARG,
              kept ? "untouched" : "written");
    } else {
        for (b = 0; b < nb && bad < 0; b++)
            if (memcmp(dst + b * bb, want + b * bb, flag[b] ? 2 : bb) != 0) bad = (long)b;
        if (bad >= 0)
            block_diff(qt, dst + bad * bb, want + bad * bb, xw + bad * QK, msg, sizeof msg);
        check(r == ATTN_OK && bad < 0 && kept, "quantize %s <- %s, %s, n %zu, dst +%zu bytes, "
              "src +%zu: status %d, %s%ld: %s; guards %s", qname(qt), ename(st), tag, n, doff,
              soff, (int)r, "first wrong block ", bad, msg, kept ? "kept" : "written");
        n_quant_blocks += (long)nb;
    }
    free(sbuf), free(xw), free(want), free(buf), free(flag);
}

/* ---- constructed blocks ---- */

#define MAXSP 64
static float sp[MAXSP * QK];
static const char *sp_name[MAXSP];
static size_t n_sp;

static float *sp_new(const char *name)
{
    float *b;
    if (n_sp == MAXSP) {
        fprintf(stderr, "too many special blocks\n");
        exit(2);
    }
    b = sp + n_sp * QK;
    sp_name[n_sp++] = name;
    memset(b, 0, QK * sizeof(float));
    return b;
}

/* b[from..31] uniform in (-amp, amp) */
static void fill_rand(float *b, int from, float amp)
{
    int j;
    for (j = from; j < QK; j++) b[j] = amp * check_uniform(-0.999f, 0.999f);
}

static float step(float x, int s)
{
    for (; s > 0; s--) x = nextafterf(x, INFINITY);
    for (; s < 0; s++) x = nextafterf(x, -INFINITY);
    return x;
}

/* q8_0: elements whose x * (1 / d) and x / d round to different integers (ggml multiplies).
 * Returns how many were found. */
static int adv_q8_div(float amax, float *b)
{
    const float d = amax / 127.0f, id = 1.0f / d;
    int j = 1, k, s, found;
    b[0] = amax;
    for (k = 0; k < 127 && j < QK; k++) {
        const float x0 = (float)(((double)k + 0.5) * (double)d);
        for (s = -6; s <= 6; s++) {
            const float x = step(x0, s);
            if (fabsf(x) <= amax && roundf(x * id) != roundf(x / d)) {
                b[j++] = k % 2 ? -x : x;
                break;
            }
        }
    }
    found = j - 1;
    fill_rand(b, j, amax);
    return found;
}

/* q4_0: elements whose x * (1 / d) + 8.5 truncates differently from fma(x, 1 / d, 8.5)
 * (fma != 0) or from x / d + 8.5 (fma == 0). Returns how many were found. */
static int adv_q4(float max, int fma, float *b)
{
    const float d = max / -8.0f, id = 1.0f / d;
    int j = 1, k, s, found;
    b[0] = max;
    for (k = 1; k < 16 && j < QK; k++) /* x * id near k - 8.5: the truncation's edges */
        for (s = -40; s <= 40 && j < QK; s++) {
            const float x = step((float)(((double)k - 8.5) * (double)d), s);
            const float p = x * id, w = p + 8.5f;
            const float alt = fma ? fmaf(x, id, 8.5f) : x / d + 8.5f;
            if (fabsf(x) < fabsf(max) && (int)w != (int)alt) b[j++] = x;
        }
    found = j - 1;
    fill_rand(b, j, fabsf(max) * 0.9f);
    return found;
}

/* a block max for which amax / 127 and amax * (1 / 127) round to other binary16 scales */
static float adv_d(int which)
{
    int i, s, seen = 0;
    for (i = 0; i < 1024; i++) {
        const double t = 1.0 + (2.0 * i + 1.0) / 2048.0; /* a tie of binary16 in [1, 2) */
        for (s = -3; s <= 3; s++) {
            const float a = step((float)(127.0 * t), s);
            const float d1 = a / 127.0f, d2 = a * (1.0f / 127.0f);
            if (ref_f2h(d1) != ref_f2h(d2) && seen++ == which) return a;
        }
    }
    return 0.0f;
}

static void build_special(void)
{
    float *b;
    int j, found;
    seed(77);
    b = sp_new("zeros");
    b = sp_new("negative zeros");
    for (j = 0; j < QK; j++) b[j] = -0.0f;
    b = sp_new("q8_0 ties (d = 1, x = k + 1/2)");
    b[0] = 127.0f;
    for (j = 1; j < QK; j++) b[j] = (float)((j * 37) % 127) + 0.5f, b[j] = j % 2 ? b[j] : -b[j];
    b[1] = 0.5f, b[2] = -0.5f, b[3] = 2.5f, b[4] = -2.5f, b[5] = 126.5f, b[6] = -126.5f;
    b = sp_new("q4_0 ties (d = 1, x = k + 1/2)");
    b[0] = -8.0f;
    for (j = 1; j < 17; j++) b[j] = (float)j - 8.5f; /* -7.5 .. 7.5 */
    b[17] = 7.9f, b[18] = -7.9f, b[19] = 7.0f, b[20] = -7.0f, b[21] = 0.0f, b[22] = -0.0f;
    for (j = 23; j < QK; j++) b[j] = (float)(j - 27) + 0.5f;
    b = sp_new("q4_0 first of equal |x| positive");
    fill_rand(b, 0, 6.0f);
    b[3] = 8.0f, b[10] = -8.0f, b[20] = 8.0f;
    b = sp_new("q4_0 first of equal |x| negative");
    fill_rand(b, 0, 6.0f);
    b[3] = -8.0f, b[10] = 8.0f, b[25] = 8.0f;
    b = sp_new("negative maximum last");
    fill_rand(b, 0, 3.0f);
    b[31] = -3.75f;
    b = sp_new("positive maximum first");
    fill_rand(b, 1, 2.0f);
    b[0] = 2.5f;
    b = sp_new("subnormal elements");
    fill_rand(b, 0, 1.0f);
    b[0] = 1.0f, b[1] = f_of(1), b[2] = f_of(0x80000001u), b[3] = FLT_MIN / 2, b[4] = -FLT_MIN / 3;
    b[5] = f_of(0x007FFFFFu), b[6] = 1e-40f, b[7] = -1e-30f, b[8] = FLT_MIN, b[9] = -FLT_MIN;
    b = sp_new("max 1e-36 (q8_0 d a float subnormal, 1/d finite)");
    fill_rand(b, 0, 1e-36f);
    b[5] = 1e-36f;
    b = sp_new("max -2e-37 (q8_0: 1/d overflows, q undefined)");
    fill_rand(b, 0, 2e-37f);
    b[9] = -2e-37f;
    b = sp_new("all subnormal (1/d overflows, q undefined)");
    for (j = 0; j < QK; j++) b[j] = j % 3 ? f_of((uint32_t)j * 1000u + 1u) : -f_of(77u * j);
    b = sp_new("q8_0 d = 1 + 2^-11 (binary16 tie, to even: down)");
    fill_rand(b, 1, 127.0f);
    b[0] = (float)(127.0 * (1.0 + 1.0 / 2048));
    b = sp_new("q8_0 d = 1 + 3 2^-11 (binary16 tie, to even: up)");
    fill_rand(b, 1, 127.0f);
    b[7] = (float)(-127.0 * (1.0 + 3.0 / 2048));
    b = sp_new("q4_0 d = 1 + 2^-11 (binary16 tie, down)");
    fill_rand(b, 1, 8.0f);
    b[0] = (float)(-8.0 * (1.0 + 1.0 / 2048));
    b = sp_new("q4_0 d = -(1 + 3 2^-11) (binary16 tie, up)");
    fill_rand(b, 1, 8.0f);
    b[0] = (float)(8.0 * (1.0 + 3.0 / 2048));
    b = sp_new("q8_0 d = 1.5 2^-24 (binary16 subnormal tie)");
    fill_rand(b, 1, (float)(127 * 1.5 * ldexp(1, -24)));
    b[0] = (float)(127 * 1.5 * ldexp(1, -24));
    b = sp_new("q4_0 d = 2.5 2^-24 (binary16 subnormal tie)");
    fill_rand(b, 1, (float)(8 * 2.5 * ldexp(1, -24)));
    b[0] = (float)(-8 * 2.5 * ldexp(1, -24));
    b = sp_new("d = 2^-26 (binary16 0, q defined)");
    fill_rand(b, 1, (float)(127 * ldexp(1, -26)));
    b[0] = (float)(127 * ldexp(1, -26));
    b = sp_new("q8_0 d = 65504");
    fill_rand(b, 1, 8319008.0f);
    b[0] = 8319008.0f;
    b = sp_new("q8_0 d = 65519.99 (65504; q4_0 overflows)");
    fill_rand(b, 0, 8e6f);
    b[4] = -8321039.0f;
    b = sp_new("q8_0 d = 65520 (overflows)");
    fill_rand(b, 0, 8e6f);
    b[31] = 8321040.0f;
    b = sp_new("q4_0 d = 65519.875 (65504)");
    fill_rand(b, 0, 5e5f);
    b[2] = -524159.0f;
    b = sp_new("q4_0 d = -65520 (overflows)");
    fill_rand(b, 0, 5e5f);
    b[2] = 524160.0f;
    b = sp_new("1e7");
    fill_rand(b, 0, 1.0f);
    b[13] = 1e7f;
    b = sp_new("FLT_MAX");
    fill_rand(b, 0, 1.0f);
    b[0] = -FLT_MAX;
    b = sp_new("NaN");
    fill_rand(b, 0, 1.0f);
    b[17] = NAN;
    b = sp_new("inf");
    fill_rand(b, 0, 1.0f);
    b[31] = INFINITY;
    b = sp_new("-inf");
    fill_rand(b, 0, 1.0f);
    b[0] = -INFINITY;
    b = sp_new("wide range");
    for (j = 0; j < QK; j++) b[j] = (j % 2 ? -1.0f : 1.0f) * (float)ldexp(1.0, (j * 7) % 41 - 30);
    b = sp_new("wide range, log-uniform");
    for (j = 0; j < QK; j++)
        b[j] = (float)ldexp(check_uniform(-1.0f, 1.0f), (int)check_uniform(-20.0f, 12.0f));
    /* searched: the operations ggml uses are the only ones that give these bits */
    found = adv_q8_div(100.7f, sp_new("q8_0 x * (1 / d) != x / d, amax 100.7"));
    found += adv_q8_div(3.3f, sp_new("q8_0 x * (1 / d) != x / d, amax 3.3"));
    found += adv_q8_div(0.0123f, sp_new("q8_0 x * (1 / d) != x / d, amax 0.0123"));
    check(found >= 8, "the search for q8_0's x * (1 / d) != x / d found %d elements", found);
    found = adv_q4(-5.3f, 1, sp_new("q4_0 x * (1 / d) + 8.5 != fma, max -5.3"));
    found += adv_q4(3.7f, 1, sp_new("q4_0 x * (1 / d) + 8.5 != fma, max 3.7"));
    found += adv_q4(-1234.5f, 1, sp_new("q4_0 x * (1 / d) + 8.5 != fma, max -1234.5"));
    check(found >= 8, "the search for q4_0's fma differences found %d elements", found);
    found = adv_q4(-5.3f, 0, sp_new("q4_0 x * (1 / d) != x / d, max -5.3"));
    found += adv_q4(0.77f, 0, sp_new("q4_0 x * (1 / d) != x / d, max 0.77"));
    found += adv_q4(-99.1f, 0, sp_new("q4_0 x * (1 / d) != x / d, max -99.1"));
    check(found >= 8, "the search for q4_0's x / d differences found %d elements", found);
    for (j = 0; j < 3; j++) {
        const float a = adv_d(j);
        b = sp_new("q8_0 amax / 127 != amax * (1 / 127) in binary16");
        check(a != 0.0f, "the search for amax / 127 != amax * (1 / 127) found nothing");
        fill_rand(b, 0, a);
        b[(j * 11) % QK] = j % 2 ? -a : a;
    }
}

/* The reference itself against blocks worked out by hand */
static void test_reference(void)
{
    static const float x8[QK] = {127, 63.5f, -63.5f, 0.5f, -0.5f, 2.5f, -2.5f, 126.5f, -1.4f, 3};
    static const signed char q8[QK] = {127, 64, -64, 1, -1, 3, -3, 127, -1, 3};
    static const float x4[QK] = {-8, 7.5f, 7, 6.5f, 0.5f, -0.5f, -7.5f, -7.9f, 3.2f, 3.7f,
                                 [16] = 1.5f, -1.5f, -8, 8, 0.49f};
    /* q = min(15, trunc(x + 8.5)) */
    static const unsigned char n4[QK] = {0, 15, 15, 15, 9, 8, 1, 0, 11, 12, [10] = 8, 8, 8, 8, 8,
                                         8, 10, 7, 0, 15, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8};
    unsigned char out[34];
    int j, ok = 1, r = ref_quant_block(ATTN_Q8_0, x8, out);
    check(r == 0 && out[0] == 0x00 && out[1] == 0x3C, "reference q8_0: d %02x%02x, want 3c00",
          out[1], out[0]);
    for (j = 0; j < QK; j++) ok &= code_of(ATTN_Q8_0, out, j) == q8[j];
    check(ok, "reference q8_0: the hand-computed codes");
    r = ref_quant_block(ATTN_Q4_0, x4, out);
    check(r == 0 && out[0] == 0x00 && out[1] == 0x3C, "reference q4_0: d %02x%02x, want 3c00",
          out[1], out[0]);
    for (j = 0, ok = 1; j < QK; j++) ok &= code_of(ATTN_Q4_0, out, j) == n4[j];
    check(ok, "reference q4_0: the hand-computed nibbles");
    check(out[2] == (0 | 10 << 4) && out[3] == (15 | 7 << 4), "reference q4_0: byte layout");
    check(ref_f2h(65504.0f) == 0x7BFF && ref_f2h(65519.99f) == 0x7BFF &&
              ref_f2h(65520.0f) == 0x7C00 && ref_f2h((float)ldexp(1, -24)) == 0x0001 &&
              ref_f2h((float)ldexp(1, -25)) == 0 && ref_f2h(-1.0f) == 0xBC00 &&
              ref_f2h(1.00048828125f) == 0x3C00 && ref_f2h(1.00146484375f) == 0x3C02 &&
              ref_h2f(0x03FF) == (float)ldexp(1023, -24) && ref_f2bf(1.00390625f) == 0x3F80 &&
              ref_f2bf(1.01171875f) == 0x3F82,
          "reference binary16 / bfloat16 conversions");
}

static void test_quantize(void)
{
    static const float mags[3] = {1e-3f, 1.0f, 1e3f};
    static const size_t lens[3] = {32, 64, 32 * 33};
    static const attn_dtype srcs[3] = {ATTN_F32, ATTN_F16, ATTN_BF16};
    static const size_t doffs[3] = {0, 1, 3};
    float *x = (float *)xmalloc(32 * 33 * sizeof(float)), *all;
    size_t mi, li, si, i, k, nall;
    int q;
    char tag[160];
    for (q = 0; q < 2; q++) {
        const attn_dtype qt = q ? ATTN_Q4_0 : ATTN_Q8_0;
        /* random data */
        for (mi = 0; mi < 3; mi++)
            for (li = 0; li < 3; li++)
                for (si = 0; si < 3; si++) {
                    seed(1000 + 100 * mi + 10 * li + si);
                    for (i = 0; i < lens[li]; i++) x[i] = mags[mi] * check_uniform(-1.0f, 1.0f);
                    snprintf(tag, sizeof tag, "random, magnitude %g", (double)mags[mi]);
                    check_quantize(qt, srcs[si], x, lens[li], doffs[(mi + li + si) % 3],
                                   (mi + si) % 2, tag);
                }
        /* each constructed block alone, from each source type */
        for (k = 0; k < n_sp; k++)
            for (si = 0; si < 3; si++)
                check_quantize(qt, srcs[si], sp + k * QK, QK, doffs[(k + si) % 3], k % 2,
                               sp_name[k]);
        /* the blocks it accepts from f32, all in one array */
        all = (float *)xmalloc(n_sp * QK * sizeof(float));
        for (k = 0, nall = 0; k < n_sp; k++) {
            unsigned char tmp[34];
            if (ref_quant_block(qt, sp + k * QK, tmp) >= 0)
                memcpy(all + QK * nall++, sp + k * QK, QK * sizeof(float));
        }
        check(nall >= 30, "%s: only %zu constructed blocks accepted", qname(qt), nall);
        check_quantize(qt, ATTN_F32, all, nall * QK, 1, 1, "the constructed blocks accepted");
        free(all);
    }
    free(x);
}

/* A bad block (NaN, inf, an overflowing scale) last of 33, from each source: refused with
 * nothing written */
static void test_refusals(void)
{
    float *x = (float *)xmalloc(32 * 33 * sizeof(float));
    static const float bad[4] = {NAN, INFINITY, -INFINITY, 1e7f};
    size_t i, si;
    int q, v;
    char tag[96];
    for (q = 0; q < 2; q++)
        for (v = 0; v < 5; v++)
            for (si = 0; si < 3; si++) {
                const attn_dtype qt = q ? ATTN_Q4_0 : ATTN_Q8_0;
                const attn_dtype st = si == 0 ? ATTN_F32 : si == 1 ? ATTN_F16 : ATTN_BF16;
                /* v 3: 1e7 (f16: inf); v 4: 6e5 (q4_0's scale overflows; q8_0's does not;
                 * f16: inf) */
                const float b = v < 4 ? bad[v] : 6e5f;
                seed(5 + (unsigned long long)v);
                for (i = 0; i < 32 * 33; i++) x[i] = check_uniform(-2.0f, 2.0f);
                x[32 * 32 + (size_t)(7 * v) % 32] = b;
                snprintf(tag, sizeof tag, "%g last of 33 blocks", (double)b);
                check_quantize(qt, st, x, 32 * 33, 1, 0, tag);
            }
    free(x);
}

/* ---- dequantizing --------------------------------------------------------------------- */

/* Dequantizes nb blocks q (type qt, copied to byte offset soff) to dt at element offset doff
 * and compares every element's bits with the reference; guards after dst untouched. */
static void check_dequantize(attn_dtype qt, const unsigned char *q, size_t nb, attn_dtype dt,
                             size_t doff, size_t soff, const char *tag)
{
    const size_t bb = qbytes(qt), n = nb * QK, es = esize(dt);
    unsigned char *sbuf = (unsigned char *)xmalloc(nb * bb + soff), *src = sbuf + soff;
    unsigned char *dbuf = (unsigned char *)xmalloc((doff + n) * es + GUARD);
    unsigned char *dst = dbuf + doff * es;
    size_t i;
    long bad = -1, zero = -1;
    int kept = 1;
    attn_status r;
    char msg[160] = "values right";
    memcpy(src, q, nb * bb);
    memset(dbuf, GB, (doff + n) * es + GUARD);
    r = attn_convert(dt, dst, qt, src, n);
    for (i = 0; i < n; i++) {
        const uint32_t got = get_bits(dt, dst, i);
        const uint32_t want = ref_bits(dt, ref_deq(qt, q + i / QK * bb, (int)(i % QK)));
        const uint32_t sign = dt == ATTN_F32 ? 0x80000000u : 0x8000u;
        if (got == want) continue;
        if ((got | sign) == sign && (want | sign) == sign) { /* +0 for -0, or -0 for +0 */
            if (zero < 0) zero = (long)i;
        } else if (bad < 0) bad = (long)i;
    }
    for (i = 0; i < (doff + n) * es + GUARD; i++)
        if (i < doff * es || i >= (doff + n) * es) kept &= dbuf[i] == GB;
    if (bad >= 0) {
        const unsigned char *blk = q + (size_t)bad / QK * bb;
        const int j = (int)(bad % QK);
        snprintf(msg, sizeof msg, "element %ld (d %04x, q %d): %08x, want %08x (%.9g)", bad,
                 (unsigned)scale_of(blk), code_of(qt, blk, j),
                 (unsigned)get_bits(dt, dst, (size_t)bad),
                 (unsigned)ref_bits(dt, ref_deq(qt, blk, j)), (double)ref_deq(qt, blk, j));
    }
    check(r == ATTN_OK && bad < 0 && kept, "dequantize %s -> %s, %s, n %zu, dst +%zu, src +%zu "
          "bytes: status %d, %s; guards %s", qname(qt), ename(dt), tag, n, doff, soff, (int)r,
          msg, kept ? "kept" : "written");
    /* ggml's d * q is -0 where d and q (q4_0: q - 8) have opposite signs and one is 0 */
    if (zero >= 0) {
        const unsigned char *blk = q + (size_t)zero / QK * bb;
        snprintf(msg, sizeof msg, "element %ld (d %04x, code %d): %08x, want %08x", zero,
                 (unsigned)scale_of(blk), code_of(qt, blk, (int)(zero % QK)),
                 (unsigned)get_bits(dt, dst, (size_t)zero),
                 (unsigned)ref_bits(dt, ref_deq(qt, blk, (int)(zero % QK))));
    }
    check(zero < 0, "dequantize %s -> %s, %s, n %zu: the sign of a zero: %s", qname(qt),
          ename(dt), tag, n, msg);
    n_deq_elems += (long)n;
    free(sbuf), free(dbuf);
}

static void test_dequantize(void)
{
    static const uint16_t scales[] = {0x0000, 0x8000, 0x3C00, 0xBC00, 0x0001, 0x03FF, 0x0400,
                                      0x7BFF, 0xFBFF, 0x2E66, 0xC8E1, 0x8001};
    static const attn_dtype dts[3] = {ATTN_F32, ATTN_F16, ATTN_BF16};
    const size_t ns = sizeof scales / sizeof scales[0];
    unsigned char *q = (unsigned char *)xmalloc(40 * 34);
    size_t si, di, b, j, nb;
    int t;
    char tag[96];
    for (t = 0; t < 2; t++) {
        const attn_dtype qt = t ? ATTN_Q4_0 : ATTN_Q8_0;
        const size_t bb = qbytes(qt);
        /* every code: q8_0 all 256 int8 values in 8 blocks, q4_0 all 256 bytes (every nibble
         * low and high) in 16 blocks, under each scale */
        nb = t ? 16 : 8;
        for (si = 0; si < ns; si++) {
            for (b = 0; b < nb; b++) {
                q[b * bb] = (unsigned char)(scales[si] & 0xFF);
                q[b * bb + 1] = (unsigned char)(scales[si] >> 8);
                for (j = 2; j < bb; j++) q[b * bb + j] = (unsigned char)(b * (bb - 2) + j - 2);
            }
            for (di = 0; di < 3; di++) {
                snprintf(tag, sizeof tag, "every code, d %04x", (unsigned)scales[si]);
                check_dequantize(qt, q, nb, dts[di], (si + di) % 2, (si + 2 * di) % 3, tag);
            }
        }
        /* random blocks with random finite scales, n = 32, 64, 32 * 33 */
        for (nb = 1; nb <= 33; nb = nb == 1 ? 2 : nb == 2 ? 33 : 34) {
            unsigned char *r = (unsigned char *)xmalloc(nb * bb);
            seed(400 + nb);
            for (b = 0; b < nb; b++) {
                uint16_t d;
                do d = (uint16_t)(check_uniform(0.0f, 65536.0f));
                while ((d & 0x7C00u) == 0x7C00u);
                r[b * bb] = (unsigned char)(d & 0xFF), r[b * bb + 1] = (unsigned char)(d >> 8);
                for (j = 2; j < bb; j++) r[b * bb + j] = (unsigned char)check_uniform(0.0f, 256.0f);
            }
            for (di = 0; di < 3; di++)
                for (si = 0; si < 2; si++)
                    check_dequantize(qt, r, nb, dts[di], si, 2 * si + 1, "random blocks");
            free(r);
        }
    }
    free(q);
}

/* ---- copies, errors ------------------------------------------------------------------- */

static void test_convert_errors(void)
{
    static float src[1200], dst[1200], keep[1200], ov[2048], ovk[2048];
    unsigned char *s = (unsigned char *)src, *o = (unsigned char *)ov;
    size_t i;
    int t;
    /* copies of a block type: the bytes, nothing after them */
    for (t = 0; t < 2; t++) {
        const attn_dtype qt = t ? ATTN_Q4_0 : ATTN_Q8_0;
        const size_t bytes = 33 * qbytes(qt);
        unsigned char *d = (unsigned char *)dst + 3;
        attn_status r;
        for (i = 0; i < sizeof src; i++) s[i] = (unsigned char)(i * 131 + 7);
        memset(dst, GB, sizeof dst);
        r = attn_convert(qt, d, qt, s + 1, 32 * 33);
        check(r == ATTN_OK && memcmp(d, s + 1, bytes) == 0 && d[bytes] == GB && d[-1] == GB,
              "%s copy: status %d", qname(qt), (int)r);
    }
    for (i = 0; i < 1200; i++) src[i] = 0.01f * (float)i - 3.0f;
    {
        struct {
            attn_dtype dt;
            void *d;
            attn_dtype st;
            const void *s;
            size_t n;
            attn_status want;
            const char *what;
        } cases[] = {
            {ATTN_Q8_0, dst, ATTN_F32, src, 40, ATTN_ERR_SIZE, "quantize n 40"},
            {ATTN_Q4_0, dst, ATTN_BF16, src, 1, ATTN_ERR_SIZE, "quantize n 1"},
            {ATTN_F16, dst, ATTN_Q4_0, src, 16, ATTN_ERR_SIZE, "dequantize n 16"},
            {ATTN_F32, dst, ATTN_Q8_0, src, 33, ATTN_ERR_SIZE, "dequantize n 33"},
            {ATTN_Q8_0, dst, ATTN_Q8_0, src, 48, ATTN_ERR_SIZE, "q8_0 copy n 48"},
            {ATTN_Q4_0, dst, ATTN_Q8_0, src, 32, ATTN_ERR_ARG, "q8_0 -> q4_0"},
            {ATTN_Q8_0, dst, ATTN_Q4_0, src, 64, ATTN_ERR_ARG, "q4_0 -> q8_0"},
            {ATTN_Q8_0, dst, ATTN_Q4_0, src, 0, ATTN_ERR_ARG, "q4_0 -> q8_0, n 0"},
            {ATTN_Q8_0, dst, (attn_dtype)7, src, 32, ATTN_ERR_ARG, "quantize from type 7"},
            {(attn_dtype)7, dst, ATTN_Q4_0, src, 32, ATTN_ERR_ARG, "dequantize to type 7"},
            {(attn_dtype)5, dst, ATTN_Q8_0, src, 32, ATTN_ERR_ARG, "dequantize to type 5"},
            {ATTN_Q4_0, dst, (attn_dtype)-1, src, 32, ATTN_ERR_ARG, "quantize from type -1"},
            {ATTN_Q8_0, NULL, ATTN_F32, src, 32, ATTN_ERR_NULL, "quantize to NULL"},
            {ATTN_Q4_0, dst, ATTN_F16, NULL, 32, ATTN_ERR_NULL, "quantize from NULL"},
            {ATTN_F32, dst, ATTN_Q8_0, NULL, 32, ATTN_ERR_NULL, "dequantize from NULL"},
            {ATTN_BF16, NULL, ATTN_Q4_0, src, 32, ATTN_ERR_NULL, "dequantize to NULL"},
            {ATTN_Q8_0, NULL, ATTN_F32, NULL, 0, ATTN_OK, "quantize NULL, n 0"},
            {ATTN_F32, NULL, ATTN_Q4_0, NULL, 0, ATTN_OK, "dequantize NULL, n 0"},
            {ATTN_Q8_0, dst, ATTN_F32, src, 0, ATTN_OK, "quantize n 0"},
            {ATTN_Q4_0, dst, ATTN_Q4_0, src, 0, ATTN_OK, "q4_0 copy n 0"},
        };
        for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            attn_status r;
            memset(dst, 0x5A, sizeof dst);
            memcpy(keep, dst, sizeof dst);
            r = attn_convert(cases[i].dt, cases[i].d, cases[i].st, cases[i].s, cases[i].n);
            check(r == cases[i].want && memcmp(dst, keep, sizeof dst) == 0,
                  "convert error %s: status %d, want %d; dst %s", cases[i].what, (int)r,
                  (int)cases[i].want, memcmp(dst, keep, sizeof dst) == 0 ? "untouched" : "written");
        }
    }
    /* overlaps (byte offsets into one buffer): any overlap is ATTN_ERR_ALIAS with the buffer
     * untouched, buffers that only touch are fine (and the source stays intact) */
    {
        static const struct {
            attn_dtype dt, st;
            size_t doff, soff, n;
            attn_status want;
        } c[] = {
            {ATTN_Q8_0, ATTN_F32, 0, 0, 32, ATTN_ERR_ALIAS},   /* dst == src */
            {ATTN_Q8_0, ATTN_F32, 64, 0, 32, ATTN_ERR_ALIAS},  /* dst inside src */
            {ATTN_Q8_0, ATTN_F32, 127, 0, 32, ATTN_ERR_ALIAS}, /* dst's first byte on src's last */
            {ATTN_Q8_0, ATTN_F32, 128, 0, 32, ATTN_OK},        /* dst just past src */
            {ATTN_Q8_0, ATTN_F32, 0, 32, 32, ATTN_ERR_ALIAS},  /* dst's last bytes on src */
            {ATTN_Q8_0, ATTN_F32, 0, 36, 32, ATTN_OK},         /* dst (34 bytes) just before */
            {ATTN_Q4_0, ATTN_F16, 2, 0, 64, ATTN_ERR_ALIAS},
            {ATTN_Q4_0, ATTN_F16, 0, 36, 64, ATTN_OK},         /* dst 36 bytes, then src */
            {ATTN_Q4_0, ATTN_F16, 0, 34, 64, ATTN_ERR_ALIAS},
            {ATTN_Q4_0, ATTN_BF16, 128, 0, 64, ATTN_OK},
            {ATTN_F32, ATTN_Q8_0, 0, 0, 32, ATTN_ERR_ALIAS},   /* dequantize in place */
            {ATTN_F32, ATTN_Q8_0, 32, 0, 32, ATTN_ERR_ALIAS},
            {ATTN_F16, ATTN_Q8_0, 34, 0, 32, ATTN_OK},         /* dst just past src's 34 bytes */
            {ATTN_F16, ATTN_Q8_0, 0, 64, 32, ATTN_OK},         /* dst's 64 bytes, then src */
            {ATTN_F16, ATTN_Q8_0, 0, 62, 32, ATTN_ERR_ALIAS},
            {ATTN_F32, ATTN_Q4_0, 36, 0, 64, ATTN_OK},
            {ATTN_BF16, ATTN_Q4_0, 34, 0, 64, ATTN_ERR_ALIAS},
            {ATTN_Q8_0, ATTN_Q8_0, 17, 0, 32, ATTN_ERR_ALIAS}, /* copies */
            {ATTN_Q8_0, ATTN_Q8_0, 34, 0, 32, ATTN_OK},
            {ATTN_Q4_0, ATTN_Q4_0, 0, 35, 64, ATTN_ERR_ALIAS},
            {ATTN_Q4_0, ATTN_Q4_0, 0, 36, 64, ATTN_OK},
        };
        for (i = 0; i < sizeof c / sizeof c[0]; i++) {
            const size_t srcb = attn_dtype_bytes(c[i].st, c[i].n);
            attn_status r;
            size_t k;
            for (k = 0; k < 2048; k++) ov[k] = 0.125f * (float)(k % 97) - 5.0f;
            if (c[i].st == ATTN_Q8_0 || c[i].st == ATTN_Q4_0) /* scales 1 */
                for (k = 0; k < c[i].n / QK; k++)
                    memcpy(o + c[i].soff + k * qbytes(c[i].st), "\x00\x3c", 2);
            memcpy(ovk, ov, sizeof ov);
            r = attn_convert(c[i].dt, o + c[i].doff, c[i].st, o + c[i].soff, c[i].n);
            check(r == c[i].want &&
                      (r == ATTN_OK ? memcmp(o + c[i].soff, (unsigned char *)ovk + c[i].soff,
                                             srcb) == 0
                                    : memcmp(ov, ovk, sizeof ov) == 0),
                  "overlap: %s at +%zu <- %s at +%zu bytes, n %zu: status %d, want %d, or "
                  "bytes written", c[i].dt <= ATTN_BF16 ? ename(c[i].dt) : qname(c[i].dt),
                  c[i].doff, c[i].st <= ATTN_BF16 ? ename(c[i].st) : qname(c[i].st), c[i].soff,
                  c[i].n, (int)r, (int)c[i].want);
        }
    }
}

/* Lengths whose bytes overflow: refused before anything is read (last: a library that read
 * would crash here, after everything else has been reported) */
static void test_convert_overflow(void)
{
    static float src[64], dst[64], keep[64];
    const size_t big = SIZE_MAX - (QK - 1), f32big = ((size_t)PTRDIFF_MAX / 4 / QK + 1) * QK;
    attn_status r1, r2, r3, r4, r5;
    memset(dst, 0x5A, sizeof dst);
    memcpy(keep, dst, sizeof dst);
    r1 = attn_convert(ATTN_Q8_0, dst, ATTN_F32, src, big);
    r2 = attn_convert(ATTN_F32, dst, ATTN_Q4_0, src, f32big);
    r3 = attn_convert(ATTN_Q4_0, dst, ATTN_F16, src, big);
    r4 = attn_convert(ATTN_Q8_0, dst, ATTN_Q8_0, src, big);
    check(r1 == ATTN_ERR_OVERFLOW && r2 == ATTN_ERR_OVERFLOW && r3 == ATTN_ERR_OVERFLOW &&
              r4 == ATTN_ERR_OVERFLOW && memcmp(dst, keep, sizeof dst) == 0,
          "convert lengths that overflow: status %d %d %d %d, want %d", (int)r1, (int)r2, (int)r3,
          (int)r4, (int)ATTN_ERR_OVERFLOW);
    /* too many for floats, but the f16 and q8_0 bytes fit (no overflow); they overlap here */
    r5 = attn_convert(ATTN_Q8_0, dst, ATTN_F16, dst + 1, f32big);
    check(r5 == ATTN_ERR_ALIAS && memcmp(dst, keep, sizeof dst) == 0,
          "convert %zu f16 values to q8_0 over themselves: status %d, want %d", f32big, (int)r5,
          (int)ATTN_ERR_ALIAS);
}

/* ---- matmul --------------------------------------------------------------------------- */

/* A quantized matrix: rows x k stored [rows, ld] in blocks at an odd byte offset; the padding
 * blocks (ld > k) have a NaN scale, so reading them poisons the result. wq: the float values it
 * stands for (rows x k dense), dequantized by the reference. */
typedef struct qmat {
    unsigned char *mem, *p;
    float *w;
} qmat;

static void qmat_new(qmat *m, attn_dtype qt, size_t rows, size_t k, size_t ld, size_t off,
                     const float *src)
{
    const size_t bb = qbytes(qt), rowb = ld / QK * bb;
    float x[QK];
    size_t i, b, j;
    m->mem = (unsigned char *)xmalloc(rows * rowb + off);
    m->p = m->mem + off;
    m->w = (float *)xmalloc(rows * k * sizeof(float));
    for (i = 0; i < rows; i++)
        for (b = 0; b < ld / QK; b++) {
            unsigned char *blk = m->p + i * rowb + b * bb;
            if (b < k / QK) {
                const float amp =
                    src ? 1.0f : (float)ldexp(check_uniform(0.25f, 1.0f), (int)(i % 5) - 2);
                for (j = 0; j < QK; j++)
                    x[j] = src ? src[i * k + b * QK + j] : amp * check_uniform(-1.0f, 1.0f);
                if (ref_quant_block(qt, x, blk) != 0) {
                    fprintf(stderr, "qmat_new: a block the reference refuses\n");
                    exit(2);
                }
                for (j = 0; j < QK; j++) m->w[i * k + b * QK + j] = ref_deq(qt, blk, (int)j);
            } else {
                blk[0] = 0x00, blk[1] = 0x7E; /* NaN */
                for (j = 2; j < bb; j++) blk[j] = (unsigned char)(j * 37);
            }
        }
}

static void qmat_free(qmat *m) { free(m->mem), free(m->w); }

/* rows x cols floats in [-1, 1) with leading dimension ld (padding NaN), one float past the
 * start of the allocation (*mem: to free) */
static float *rand_mat(size_t rows, size_t cols, size_t ld, float **mem)
{
    float *p;
    size_t i, j;
    *mem = (float *)xmalloc((rows * ld + 1) * sizeof(float));
    p = *mem + 1;
    for (i = 0; i < rows; i++)
        for (j = 0; j < ld; j++) p[i * ld + j] = j < cols ? check_uniform(-1.0f, 1.0f) : NAN;
    return p;
}

static double mm_worst[2];
static long mm_products[2], mm_same_bits[2];
static const float C_GUARD = -4242.5f;

static void mm_case(attn_dtype qt, int ta, size_t m, size_t n, size_t k, float alpha, float beta,
                    size_t boff)
{
    const size_t ar = ta ? k : m, ac = ta ? m : k, lda = ac + 3, ldb = k + 32, ldc = n + 2;
    const size_t wsz = attn_matmul_workspace_size((attn_trans)ta, ATTN_TRANS, m, n, k);
    const int ti = qt == ATTN_Q4_0;
    float *amem, *c0mem, *a = rand_mat(ar, ac, lda, &amem), *c0 = rand_mat(m, n, ldc, &c0mem);
    float *cmem = (float *)xmalloc((1 + m * ldc + GUARD) * sizeof(float)), *c = cmem + 1;
    float *c2 = (float *)xmalloc((m * ldc + GUARD) * sizeof(float));
    double *ref = (double *)xmalloc(m * n * sizeof(double));
    double *mag = (double *)xmalloc(m * n * sizeof(double));
    unsigned char *wsmem = (unsigned char *)xmalloc(wsz + 3);
    qmat b;
    int use_ws;
    size_t i, j;
    qmat_new(&b, qt, n, k, ldb, boff, NULL);
    ref_matmul(ta, 1, m, n, k, alpha, a, lda, b.w, k, beta, c0, ldc, ref, mag);
    for (use_ws = 0; use_ws < 2; use_ws++) {
        int ok = 1, okg = 1;
        size_t bi = 0, bj = 0;
        double worst = 0.0, bad_tol = 0.0;
        attn_status st;
        cmem[0] = C_GUARD;
        for (i = 0; i < m * ldc + GUARD; i++) c[i] = i < m * ldc ? c0[i] : C_GUARD;
        if (beta == 0.0f)
            for (i = 0; i < m; i++)
                for (j = 0; j < n; j++) c[i * ldc + j] = NAN; /* never read */
        memcpy(c2, c, (m * ldc + GUARD) * sizeof(float));
        st = attn_matmul_typed((attn_trans)ta, ATTN_TRANS, m, n, k, alpha, a, lda, qt, b.p, ldb,
                               beta, c, ldc, use_ws ? wsmem + 3 : NULL, use_ws ? wsz : 0);
        for (i = 0; i < m; i++)
            for (j = 0; j < ldc; j++) {
                const float x = c[i * ldc + j];
                if (j < n) {
                    const double tol = ((double)k + 2.0) * REF_U_FLT * mag[i * n + j] + 1e-30;
                    const double e = fabs((double)x - ref[i * n + j]);
                    if (!(e <= tol)) {
                        if (ok) bi = i, bj = j, bad_tol = tol;
                        ok = 0;
                    } else if (e / tol > worst) worst = e / tol;
                } else if (memcmp(&x, &c0[i * ldc + j], sizeof x) != 0) okg = 0;
            }
        for (i = 0; i < GUARD; i++) okg &= c[m * ldc + i] == C_GUARD;
        okg &= cmem[0] == C_GUARD;
        check(st == ATTN_OK, "matmul %s ta %d m %zu n %zu k %zu ws %d: status %d", qname(qt), ta,
              m, n, k, use_ws, (int)st);
        check(ok, "matmul %s ta %d m %zu n %zu k %zu alpha %g beta %g ws %d: C[%zu][%zu] = %.9g, "
              "want %.9g (bound %.3g)", qname(qt), ta, m, n, k, (double)alpha, (double)beta,
              use_ws, bi, bj, (double)c[bi * ldc + bj], ref[bi * n + bj], bad_tol);
        check(okg, "matmul %s ta %d m %zu n %zu k %zu ws %d: C's padding or a guard written",
              qname(qt), ta, m, n, k, use_ws);
        if (worst > mm_worst[ti]) mm_worst[ti] = worst;
        /* not promised: the same bits as attn_matmul on the dequantized B (printed) */
        if (attn_matmul((attn_trans)ta, ATTN_TRANS, m, n, k, alpha, a, lda, b.w, k, beta, c2, ldc,
                        use_ws ? wsmem + 3 : NULL, use_ws ? wsz : 0) == ATTN_OK &&
            memcmp(c, c2, m * ldc * sizeof(float)) == 0)
            mm_same_bits[ti]++;
        mm_products[ti]++;
    }
    qmat_free(&b);
    free(amem), free(c0mem), free(cmem), free(c2), free(ref), free(mag), free(wsmem);
}

static void test_matmul(void)
{
    static const size_t ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 37, 70};
    static const size_t ns[] = {1, 3, 5, 8, 17, 33, 40};
    static const size_t ks[] = {32, 64, 96, 288, 544};
    size_t im, in, ik;
    int t, ta;
    seed(2024);
    for (t = 0; t < 2; t++)
        for (ta = 0; ta < 2; ta++)
            for (im = 0; im < sizeof ms / sizeof ms[0]; im++)
                for (in = 0; in < sizeof ns / sizeof ns[0]; in++)
                    for (ik = 0; ik < sizeof ks / sizeof ks[0]; ik++)
                        mm_case(t ? ATTN_Q4_0 : ATTN_Q8_0, ta, ms[im], ns[in], ks[ik],
                                (im + in) % 3 ? 1.25f : -0.75f, (im + in + ik) % 2 ? 0.5f : 0.0f,
                                1 + 2 * ((im + ik + (size_t)ta) % 3));
    /* decode-sized: one and three rows of a 1024 x 2048 weight */
    mm_case(ATTN_Q8_0, 0, 1, 1024, 2048, 1.0f, 0.0f, 1);
    mm_case(ATTN_Q4_0, 0, 3, 1024, 2048, -1.0f, 0.5f, 3);
}

static void test_matmul_errors(void)
{
    static float a[4 * 64], c[4 * 8], keep[4 * 8], buf[64];
    static unsigned char b[8 * 68 + 1];
    const size_t m = 4, n = 8;
    const size_t wsz = attn_matmul_workspace_size(ATTN_NO_TRANS, ATTN_TRANS, 4, 8, 64);
    void *ws = xmalloc(wsz);
    size_t i;
    int t;
    for (i = 0; i < 4 * 64; i++) a[i] = 0.01f * (float)i;
    for (i = 0; i < sizeof b; i++) b[i] = (unsigned char)(i % 64); /* scales tiny and finite */
    for (t = 0; t < 2; t++) {
        const attn_dtype qt = t ? ATTN_Q4_0 : ATTN_Q8_0;
        struct {
            int tb;
            size_t k, ldb;
            attn_dtype type;
            attn_status want;
            const char *what;
        } cs[] = {
            {ATTN_NO_TRANS, 64, 64, qt, ATTN_ERR_ARG, "tb ATTN_NO_TRANS"},
            {ATTN_TRANS, 40, 64, qt, ATTN_ERR_SIZE, "k 40"},
            {ATTN_TRANS, 16, 32, qt, ATTN_ERR_SIZE, "k 16"},
            {ATTN_TRANS, 32, 48, qt, ATTN_ERR_LD, "ldb 48"},
            {ATTN_TRANS, 64, 32, qt, ATTN_ERR_LD, "ldb 32 < k 64"},
            {ATTN_TRANS, 64, 64, (attn_dtype)7, ATTN_ERR_ARG, "type 7"},
            {ATTN_TRANS, 64, 64, (attn_dtype)5, ATTN_ERR_ARG, "type 5"},
        };
        for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            int w;
            for (w = 0; w < 2; w++) {
                attn_status r;
                size_t j;
                for (j = 0; j < m * n; j++) c[j] = keep[j] = -7.25f;
                r = attn_matmul_typed(ATTN_NO_TRANS, (attn_trans)cs[i].tb, m, n, cs[i].k, 1.0f, a,
                                      64, cs[i].type, b + 1, cs[i].ldb, 0.0f, c, n,
                                      w ? ws : NULL, w ? wsz : 0);
                check(r == cs[i].want && memcmp(c, keep, sizeof c) == 0,
                      "matmul %s %s (ws %d): status %d, want %d; C %s", qname(qt), cs[i].what, w,
                      (int)r, (int)cs[i].want, memcmp(c, keep, sizeof c) ? "written" : "untouched");
            }
        }
        /* C over B's bytes: B is 2 rows of 64 (q8_0 136 bytes, q4_0 72) at the start of buf */
        {
            const size_t bytes = 2 * 2 * qbytes(qt);
            float *last = buf + bytes / 4 - 1, *past = buf + bytes / 4;
            attn_status r1, r2;
            memset(buf, 0, sizeof buf);
            r1 = attn_matmul_typed(ATTN_NO_TRANS, ATTN_TRANS, 1, 2, 64, 1.0f, a, 64, qt, buf, 64,
                                   0.0f, last, 2, NULL, 0);
            r2 = attn_matmul_typed(ATTN_NO_TRANS, ATTN_TRANS, 1, 2, 64, 1.0f, a, 64, qt, buf, 64,
                                   0.0f, past, 2, NULL, 0);
            check(r1 == ATTN_ERR_ALIAS && r2 == ATTN_OK,
                  "matmul %s: C on B's last 4 bytes: status %d (want %d); C just past B: %d",
                  qname(qt), (int)r1, (int)ATTN_ERR_ALIAS, (int)r2);
        }
        /* m = 0: nothing */
        for (i = 0; i < m * n; i++) c[i] = keep[i] = -7.25f;
        check(attn_matmul_typed(ATTN_NO_TRANS, ATTN_TRANS, 0, n, 64, 1.0f, a, 64, qt, b, 64, 0.0f,
                                c, n, NULL, 0) == ATTN_OK && memcmp(c, keep, sizeof c) == 0,
              "matmul %s m 0", qname(qt));
    }
    free(ws);
}

/* ---- linear --------------------------------------------------------------------------- */

static double lin_worst;

/* One attn_linear_typed call: T tokens (ldx d_in + 1), W dout x d_in in blocks (ldw d_in + 32,
 * at an odd byte offset), bias, act; y (ldy dout + 2) against ref_linear on the dequantized W */
static void lin_case(attn_dtype qt, size_t T, size_t din, attn_act act, int ws, size_t woff)
{
    const size_t dout = 37, ldx = din + 1, ldy = dout + 2, ldw = din + 32;
    const size_t wsz = attn_linear_workspace_size(ATTN_TRANS, T, din, dout);
    float *xmem, *bmem, *x = rand_mat(T, din, ldx, &xmem), *bias = rand_mat(1, dout, dout, &bmem);
    float *y = (float *)xmalloc((T * ldy + GUARD) * sizeof(float));
    double *xd = (double *)xmalloc(T * din * sizeof(double));
    double *ref = (double *)xmalloc(T * dout * sizeof(double));
    double *mag = (double *)xmalloc(T * dout * sizeof(double));
    void *wsp = xmalloc(wsz);
    qmat w;
    attn_status st;
    size_t i, j, bad = 0;
    int ok = 1, okg = 1;
    qmat_new(&w, qt, dout, din, ldw, woff, NULL);
    for (i = 0; i < T * ldy + GUARD; i++) y[i] = C_GUARD;
    st = attn_linear_typed(x, ldx, T, din, ATTN_TRANS, qt, w.p, ldw, bias, dout, act, y, ldy,
                           ws ? wsp : NULL, ws ? wsz : 0);
    for (i = 0; i < T; i++)
        for (j = 0; j < din; j++) xd[i * din + j] = x[i * ldx + j];
    ref_linear(xd, T, din, w.w, din, 1, bias, dout, (int)act, ref, mag);
    for (i = 0; i < T; i++)
        for (j = 0; j < ldy; j++) {
            const double got = y[i * ldy + j];
            if (j < dout) {
                const double r = ref[i * dout + j];
                const double tol = 1.2 * ((double)din + 4) * REF_U_FLT * mag[i * dout + j] +
                                   2e-6 * fabs(r) + 1e-37;
                const double e = fabs(got - r);
                if (!(e <= tol)) {
                    if (ok) bad = i * dout + j;
                    ok = 0;
                } else if (e / tol > lin_worst) lin_worst = e / tol;
            } else okg &= got == C_GUARD;
        }
    for (i = 0; i < GUARD; i++) okg &= y[T * ldy + i] == C_GUARD;
    check(st == ATTN_OK && ok && okg, "linear %s T %zu d_in %zu act %d ws %d: status %d, "
          "y[%zu][%zu] = %.9g, want %.9g; guards %s", qname(qt), T, din, (int)act, ws, (int)st,
          bad / dout, bad % dout, (double)y[bad / dout * ldy + bad % dout], ref[bad],
          okg ? "kept" : "written");
    qmat_free(&w);
    free(xmem), free(bmem), free(y), free(xd), free(ref), free(mag), free(wsp);
}

static void test_linear(void)
{
    static const size_t toks[] = {1, 3, 9, 20}, dins[] = {96, 544};
    size_t it, id, t;
    int act, ws;
    seed(99);
    for (t = 0; t < 2; t++)
        for (id = 0; id < 2; id++)
            for (it = 0; it < 4; it++)
                for (act = 0; act < 2; act++)
                    for (ws = 0; ws < 2; ws++)
                        lin_case(t ? ATTN_Q4_0 : ATTN_Q8_0, toks[it], dins[id],
                                 act ? ATTN_ACT_SILU : ATTN_ACT_GELU, ws, 1 + 2 * it);
    /* errors: y untouched */
    {
        static float x[2 * 64], y[2 * 40], keep[2 * 40];
        static unsigned char w[40 * 68 + 1];
        size_t i;
        for (i = 0; i < 2 * 64; i++) x[i] = 0.5f;
        for (t = 0; t < 2; t++) {
            const attn_dtype qt = t ? ATTN_Q4_0 : ATTN_Q8_0;
            struct {
                int tw;
                size_t din, ldw;
                attn_dtype type;
                attn_status want;
                const char *what;
            } cs[] = {
                {ATTN_NO_TRANS, 64, 64, qt, ATTN_ERR_ARG, "tw ATTN_NO_TRANS"},
                {ATTN_TRANS, 40, 64, qt, ATTN_ERR_SIZE, "d_in 40"},
                {ATTN_TRANS, 32, 40, qt, ATTN_ERR_LD, "ldw 40"},
                {ATTN_TRANS, 64, 32, qt, ATTN_ERR_LD, "ldw 32 < d_in 64"},
                {ATTN_TRANS, 64, 64, (attn_dtype)7, ATTN_ERR_ARG, "type 7"},
            };
            memset(w, 0, sizeof w);
            for (i = 0; i < sizeof cs / sizeof cs[0]; i++) {
                attn_status r;
                size_t j;
                for (j = 0; j < 2 * 40; j++) y[j] = keep[j] = 3.5f;
                r = attn_linear_typed(x, 64, 2, cs[i].din, (attn_trans)cs[i].tw, cs[i].type, w + 1,
                                      cs[i].ldw, NULL, 40, ATTN_ACT_NONE, y, 40, NULL, 0);
                check(r == cs[i].want && memcmp(y, keep, sizeof y) == 0,
                      "linear %s %s: status %d, want %d; y %s", qname(qt), cs[i].what, (int)r,
                      (int)cs[i].want, memcmp(y, keep, sizeof y) ? "written" : "untouched");
            }
        }
    }
}

/* ---- a decoder-only layer --------------------------------------------------------------- */

#define D 64   /* d_model */
#define HD 16  /* head_dim */
#define NH 4   /* heads */
#define NKV 2  /* kv_heads */
#define FF 96  /* d_ff */
#define NTOK 8 /* 5 prefilled, then 2 and 1 decoded */

/* (b) against (a), max|y_b - y_a| / max|y_a|: measured 8.4e-3 (q8_0) and 0.098 (q4_0) when
 * written (AVX2; printed every run); the bounds are about 3x that */
#define TOL_Q8 2.5e-2
#define TOL_Q4 0.3
#define TOL_SAME 1e-5
/* int8_products against the float products on the same weights (the activations rounded to
 * q8_0: half a step, max|block| / 254, per element, as large as the q8_0 weights' own
 * rounding); measured 1.2e-2 (q8_0, q4_0) when written, the bound about 2.5x */
#define TOL_ACT 3e-2

enum { MQ, MK, MV, MO, MG, MU, MD, NMAT };
static const size_t mat_out[NMAT] = {NH * HD, NKV * HD, NKV * HD, D, FF, FF, D};
static const size_t mat_in[NMAT] = {D, D, D, NH * HD, D, D, FF};

typedef struct model {
    float *wf[NMAT]; /* f32 [out, in] */
    float gamma1[D], gamma2[D];
    float x[NTOK * D];
} model;

static void set_weights(attn_decoder_only_weights *w, const model *md, const void *const *mats,
                        attn_dtype type)
{
    attn_matrix *m[NMAT];
    int i;
    memset(w, 0, sizeof *w);
    m[MQ] = &w->wq, m[MK] = &w->wk, m[MV] = &w->wv, m[MO] = &w->wo;
    m[MG] = &w->w_gate, m[MU] = &w->w_up, m[MD] = &w->w_down;
    w->d_model = D, w->heads = NH, w->kv_heads = NKV, w->head_dim = HD, w->d_ff = FF;
    for (i = 0; i < NMAT; i++) {
        m[i]->w = mats[i];
        m[i]->ld = mat_in[i];
        m[i]->trans = ATTN_TRANS;
        m[i]->type = type;
        m[i]->bias = NULL;
    }
    w->act = ATTN_ACT_SILU, w->norm = ATTN_NORM_RMS;
    w->attn_norm = md->gamma1, w->ffn_norm = md->gamma2;
    w->eps = 1e-5f;
    w->rope.head_dim = HD, w->rope.pairing = ATTN_ROPE_HALVES;
}

/* The 8 tokens through one layer: 5 at once, then 2, then 1; y: NTOK x D */
static void run_model(const attn_decoder_only_weights *w, float *y, const char *what)
{
    float kc[NTOK * NKV * HD], vc[NTOK * NKV * HD];
    attn_kv_cache c;
    const size_t need = attn_decoder_only_workspace_size(w, 5);
    void *ws = xmalloc(need);
    size_t pos = 0, n;
    attn_status st = attn_kv_cache_init(&c, kc, vc, 1, NKV, NTOK, HD, HD);
    check(st == ATTN_OK && need > 0, "%s: cache init %d, workspace %zu", what, (int)st, need);
    for (n = 5; pos < NTOK; pos += n, n = n == 5 ? 2 : 1) {
        st = attn_decoder_only(w, y + pos * D, D, y + pos * D, D, n, &c, ws, need);
        check(st == ATTN_OK, "%s: attn_decoder_only at %zu (%zu tokens): status %d", what, pos, n,
              (int)st);
    }
    check(c.len == NTOK, "%s: cache length %zu", what, c.len);
    free(ws);
}

static double model_err[2], model_same[2], model_i8[2], model_i8q[2];
static int one8[2]; /* int8_products took attn_matmul_int8 for one token */

/* One product of the composed layer: attn_matmul_int8 (int8 1: 2 or more rows; 2: any
 * rows) or attn_linear_typed */
static void comp_lin(const attn_matrix *m, int int8, const float *x, size_t rows, size_t din,
                     size_t dout, float *y, void *ws, size_t wsz)
{
    attn_status st;
    if (int8 > 1 || (int8 && rows > 1))
        st = attn_matmul_int8(rows, dout, din, 1.0f, x, din, m->type, m->w, m->ld, 0.0f, y, dout,
                              ws, wsz);
    else
        st = attn_linear_typed(x, din, rows, din, m->trans, m->type, m->w, m->ld, NULL, dout,
                               ATTN_ACT_NONE, y, dout, ws, wsz);
    check(st == ATTN_OK, "composed layer: product status %d", (int)st);
}

/* The layer of set_weights composed here from the public kernels, as attn_decoder_only
 * documents it, its products by comp_lin: run as run_model runs the block (5 tokens, then 2,
 * then 1; y in place) */
static void run_composed(const attn_decoder_only_weights *w, int int8, float *y)
{
    enum { T5 = 5 };
    float kc[NTOK * NKV * HD], vc[NTOK * NKV * HD], h[T5 * D], t[T5 * D], q[T5 * NH * HD];
    float o[T5 * NH * HD], k[T5 * NKV * HD], v[T5 * NKV * HD], up[T5 * FF], gate[T5 * FF];
    const size_t wsz = (size_t)1 << 20;
    void *ws = xmalloc(wsz);
    attn_kv_cache c;
    size_t pos = 0, n;
    attn_kv_cache_init(&c, kc, vc, 1, NKV, NTOK, HD, HD);
    for (n = T5; pos < NTOK; pos += n, n = n == T5 ? 2 : 1) {
        float *x = y + pos * D;
        attn_attention_params p;
        check(attn_matmul_int8_workspace_size(n, FF, FF) <= wsz &&
                  attn_linear_workspace_size(ATTN_TRANS, n, FF, FF) <= wsz,
              "composed layer: workspace");
        attn_rmsnorm(x, D, h, D, n, D, w->attn_norm, w->eps);
        comp_lin(&w->wq, int8, h, n, D, NH * HD, q, ws, wsz);
        comp_lin(&w->wk, int8, h, n, D, NKV * HD, k, ws, wsz);
        comp_lin(&w->wv, int8, h, n, D, NKV * HD, v, ws, wsz);
        attn_rope(&w->rope, q, NH * HD, n, NH, pos, NULL);
        attn_rope(&w->rope, k, NKV * HD, n, NKV, pos, NULL);
        attn_kv_cache_append(&c, n, k, v, ATTN_LAYOUT_BLHD);
        p = attn_attention_init_kv(&c, NH, n, q, o, ATTN_LAYOUT_BLHD, ATTN_CAUSAL_BOTTOM_RIGHT);
        check(attn_attention_workspace_size(&p) <= wsz, "composed layer: attention workspace");
        check(attn_attention(&p, ws, attn_attention_workspace_size(&p)) == ATTN_OK,
              "composed layer: attention");
        comp_lin(&w->wo, int8, o, n, NH * HD, D, t, ws, wsz);
        attn_add(x, D, t, D, n, D); /* x = x + attention */
        attn_rmsnorm(x, D, h, D, n, D, w->ffn_norm, w->eps);
        comp_lin(&w->w_up, int8, h, n, D, FF, up, ws, wsz);
        comp_lin(&w->w_gate, int8, h, n, D, FF, gate, ws, wsz);
        attn_glu(w->act, gate, FF, up, FF, up, FF, n, FF);
        comp_lin(&w->w_down, int8, up, n, FF, D, t, ws, wsz);
        attn_add(x, D, t, D, n, D);
    }
    free(ws);
}

static void test_model(void)
{
    model md;
    attn_decoder_only_weights w;
    const void *mats[NMAT];
    float ya[NTOK * D], yb[NTOK * D], yc[NTOK * D];
    qmat q[NMAT];
    double amax = 0.0;
    size_t i, j;
    int t;
    seed(31337);
    for (i = 0; i < NMAT; i++) {
        const float amp = (float)(1.7 / sqrt((double)mat_in[i]));
        md.wf[i] = (float *)xmalloc(mat_out[i] * mat_in[i] * sizeof(float));
        for (j = 0; j < mat_out[i] * mat_in[i]; j++) md.wf[i][j] = amp * check_uniform(-1.0f, 1.0f);
    }
    for (i = 0; i < D; i++) {
        md.gamma1[i] = check_uniform(0.8f, 1.2f);
        md.gamma2[i] = check_uniform(0.8f, 1.2f);
    }
    for (i = 0; i < NTOK * D; i++) md.x[i] = check_uniform(-1.0f, 1.0f);
    /* (a) f32 weights */
    for (i = 0; i < NMAT; i++) mats[i] = md.wf[i];
    set_weights(&w, &md, mats, ATTN_F32);
    memcpy(ya, md.x, sizeof ya);
    run_model(&w, ya, "f32 model");
    for (i = 0; i < NTOK * D; i++) amax = fabs(ya[i]) > amax ? fabs(ya[i]) : amax;
    for (t = 0; t < 2; t++) {
        const attn_dtype qt = t ? ATTN_Q4_0 : ATTN_Q8_0;
        const double tol = t ? TOL_Q4 : TOL_Q8;
        double e_ab = 0.0, e_bc = 0.0, cmax = 0.0;
        char what[64];
        /* (b) the weights quantized (by the reference), at odd byte offsets */
        for (i = 0; i < NMAT; i++) {
            qmat_new(&q[i], qt, mat_out[i], mat_in[i], mat_in[i], 1 + 2 * i, md.wf[i]);
            mats[i] = q[i].p;
        }
        set_weights(&w, &md, mats, qt);
        memcpy(yb, md.x, sizeof yb);
        snprintf(what, sizeof what, "%s model", qname(qt));
        run_model(&w, yb, what);
        /* (c) the f32 path on the dequantized weights */
        for (i = 0; i < NMAT; i++) mats[i] = q[i].w;
        set_weights(&w, &md, mats, ATTN_F32);
        memcpy(yc, md.x, sizeof yc);
        run_model(&w, yc, "dequantized f32 model");
        for (i = 0; i < NTOK * D; i++) cmax = fabs(yc[i]) > cmax ? fabs(yc[i]) : cmax;
        for (i = 0; i < NTOK * D; i++) {
            const double ab = fabs((double)yb[i] - ya[i]), bc = fabs((double)yb[i] - yc[i]);
            if (!(ab <= e_ab)) e_ab = ab; /* NaN too */
            if (!(bc <= e_bc)) e_bc = bc;
        }
        e_ab /= amax, e_bc /= cmax;
        model_err[t] = e_ab, model_same[t] = e_bc;
        check(e_bc <= TOL_SAME, "%s model against the f32 path on its dequantized weights: "
              "max|dy| / max|y| = %.3g, bound %.3g", qname(qt), e_bc, TOL_SAME);
        check(e_ab <= tol, "%s model against the f32 model: max|dy| / max|y| = %.3g, bound %.3g",
              qname(qt), e_ab, tol);
        check(e_ab > 1e-5, "%s model equals the f32 model (%.3g): the weights not quantized?",
              qname(qt), e_ab);
        /* (d) int8_products: against the same layer composed with attn_matmul_int8 bit for
         * bit (and the composition with attn_linear_typed against (b), the composition
         * checked), against (b) (the activations' rounding) and against (a) */
        {
            float yd[NTOK * D], ye[NTOK * D], yf[NTOK * D];
            attn_decoder_only_weights wi;
            double e_db = 0.0, e_da = 0.0, bmax = 0.0;
            for (i = 0; i < NMAT; i++) mats[i] = q[i].p;
            set_weights(&w, &md, mats, qt);
            memcpy(ye, md.x, sizeof ye);
            run_composed(&w, 0, ye);
            check(memcmp(ye, yb, sizeof ye) == 0, "%s: the composed layer (attn_linear_typed) "
                  "differs from attn_decoder_only", qname(qt));
            wi = w, wi.int8_products = 1;
            /* (run_model gives the block exactly what it asks for: were the int8 scratch
             * not counted, the products would refuse it and run in float, unlike ye) */
            for (i = 1; i <= 9; i++)
                check(attn_decoder_only_workspace_size(&wi, i) >=
                          attn_decoder_only_workspace_size(&w, i),
                      "%s: int8_products' workspace for %zu tokens", qname(qt), i);
            memcpy(yd, md.x, sizeof yd);
            snprintf(what, sizeof what, "%s model, int8 products", qname(qt));
            run_model(&wi, yd, what);
            /* one token: attn_matmul_int8 where the CPU runs VNNI, else the float product
             * (the block's choice: either composition, bit for bit) */
            memcpy(ye, md.x, sizeof ye);
            run_composed(&w, 1, ye);
            memcpy(yf, md.x, sizeof yf);
            run_composed(&w, 2, yf);
            one8[t] = memcmp(yf, yd, sizeof yf) == 0;
            check(one8[t] || memcmp(ye, yd, sizeof ye) == 0, "%s: int8_products differs from "
                  "the layer composed with attn_matmul_int8", qname(qt));
            for (i = 0; i < NTOK * D; i++) bmax = fabs(yb[i]) > bmax ? fabs(yb[i]) : bmax;
            for (i = 0; i < NTOK * D; i++) {
                const double db = fabs((double)yd[i] - yb[i]), da = fabs((double)yd[i] - ya[i]);
                if (!(db <= e_db)) e_db = db;
                if (!(da <= e_da)) e_da = da;
            }
            e_db /= bmax, e_da /= amax;
            model_i8[t] = e_da, model_i8q[t] = e_db;
            check(e_db <= TOL_ACT && e_db > 1e-6, "%s model, int8 products, against the float "
                  "products: max|dy| / max|y| = %.3g, bound %.3g (and above 1e-6)", qname(qt),
                  e_db, TOL_ACT);
            check(e_da <= tol, "%s model, int8 products, against the f32 model: max|dy| / "
                  "max|y| = %.3g, bound %.3g", qname(qt), e_da, tol);
        }
        /* errors: a q weight with NO_TRANS, an ld not a multiple of 32: nothing written or
         * appended */
        {
            attn_decoder_only_weights bad;
            float kc[NTOK * NKV * HD], vc[NTOK * NKV * HD], y[2 * D], keep[2 * D];
            attn_kv_cache c;
            const size_t need = attn_decoder_only_workspace_size(&w, 2);
            void *ws = xmalloc(need);
            attn_status r1, r2;
            for (i = 0; i < NMAT; i++) mats[i] = q[i].p;
            set_weights(&w, &md, mats, qt);
            attn_kv_cache_init(&c, kc, vc, 1, NKV, NTOK, HD, HD);
            for (i = 0; i < 2 * D; i++) y[i] = keep[i] = 2.5f;
            bad = w, bad.wk.trans = ATTN_NO_TRANS;
            r1 = attn_decoder_only(&bad, md.x, D, y, D, 2, &c, ws, need);
            bad = w, bad.w_down.ld = FF + 4;
            r2 = attn_decoder_only(&bad, md.x, D, y, D, 2, &c, ws, need);
            check(r1 == ATTN_ERR_ARG && r2 == ATTN_ERR_LD && c.len == 0 &&
                      memcmp(y, keep, sizeof y) == 0,
                  "decoder_only %s errors: NO_TRANS %d (want %d), ld %d (want %d), cache length "
                  "%zu, y %s", qname(qt), (int)r1, (int)ATTN_ERR_ARG, (int)r2, (int)ATTN_ERR_LD,
                  c.len, memcmp(y, keep, sizeof y) ? "written" : "untouched");
            free(ws);
        }
        for (i = 0; i < NMAT; i++) qmat_free(&q[i]);
    }
    for (i = 0; i < NMAT; i++) free(md.wf[i]);
    printf("quant: decoder-only layer, 5 prefilled + 2 + 1 decoded, max|y - y_f32| / "
           "max|y_f32|: q8_0 %.3g (bound %.3g), q4_0 %.3g (bound %.3g); against the f32 path "
           "on the dequantized weights: %.3g, %.3g (bound %.3g)\n", model_err[0], TOL_Q8,
           model_err[1], TOL_Q4, model_same[0], model_same[1], TOL_SAME);
    printf("quant: the layer with int8_products against the f32 model: q8_0 %.3g, q4_0 %.3g; "
           "against the float products on the same weights: %.3g, %.3g (bound %.3g); one "
           "token by %s\n", model_i8[0], model_i8[1], model_i8q[0], model_i8q[1], TOL_ACT,
           one8[0] ? "attn_matmul_int8 (VNNI)" : "the float products");
    check(one8[0] == one8[1], "int8_products: one token by attn_matmul_int8 for q8_0 %d, q4_0 %d",
          one8[0], one8[1]);
}

/* ---- the 2017-style blocks with block-type weights ----------------------------------------- */

/* attn_ffn and attn_mha with q8_0 / q4_0 weights ([out, in], wtype) against the same blocks
 * with the dequantized float weights: the same arithmetic on the same values (the matrix
 * products' order aside), so within 1e-5 of max|y|; NO_TRANS refused, y untouched. */
static void test_blocks_q(void)
{
    enum { E = 64, F = 96, T = 7, NHEADS = 4 };
    static float wf[4][F * E], wd[4][F * E], x[T * E], ya[T * E], yb[T * E], bias[F];
    static unsigned char wq[4][F * E * 2]; /* room for 34 bytes per 32 */
    size_t i, j, need;
    int t;
    void *ws;
    seed(777);
    for (i = 0; i < 4; i++)
        for (j = 0; j < F * E; j++) wf[i][j] = 0.2f * check_uniform(-1.0f, 1.0f);
    for (i = 0; i < T * E; i++) x[i] = check_uniform(-1.0f, 1.0f);
    for (i = 0; i < F; i++) bias[i] = check_uniform(-0.1f, 0.1f);
    for (t = 0; t < 2; t++) {
        const attn_dtype qt = t ? ATTN_Q4_0 : ATTN_Q8_0;
        attn_ffn_weights f, fd;
        attn_mha_weights m, md;
        double e_f = 0.0, e_m = 0.0, amax_f = 0.0, amax_m = 0.0;
        attn_status r;
        for (i = 0; i < 4; i++) {
            check(attn_convert(qt, wq[i], ATTN_F32, wf[i], F * E) == ATTN_OK, "quantize");
            check(attn_convert(ATTN_F32, wd[i], qt, wq[i], F * E) == ATTN_OK, "dequantize");
        }
        memset(&f, 0, sizeof f);
        f.d_model = E, f.d_ff = F, f.act = ATTN_ACT_GELU, f.trans = ATTN_TRANS;
        f.b1 = bias, f.b2 = bias;
        fd = f;
        f.wtype = qt, f.w1 = (const float *)(const void *)wq[0];
        f.w2 = (const float *)(const void *)wq[1];
        fd.w1 = wd[0], fd.w2 = wd[1];
        need = attn_ffn_workspace_size(&f, T);
        ws = xmalloc(need);
        check(attn_ffn(&f, x, E, yb, E, T, ws, need) == ATTN_OK, "attn_ffn %s", qname(qt));
        check(attn_ffn(&fd, x, E, ya, E, T, ws, need) == ATTN_OK, "attn_ffn dequantized");
        for (i = 0; i < T * E; i++) {
            amax_f = fabs(ya[i]) > amax_f ? fabs(ya[i]) : amax_f;
            if (!(fabs((double)yb[i] - ya[i]) <= e_f)) e_f = fabs((double)yb[i] - ya[i]);
        }
        check(e_f <= 1e-5 * amax_f, "attn_ffn %s against its dequantized weights: %.3g of max|y|",
              qname(qt), e_f / amax_f);
        for (i = 0; i < T * E; i++) yb[i] = 3.25f;
        f.trans = ATTN_NO_TRANS;
        r = attn_ffn(&f, x, E, yb, E, T, ws, need);
        for (i = 0; i < T * E && yb[i] == 3.25f; i++) continue;
        check(r == ATTN_ERR_ARG && i == T * E, "attn_ffn %s with NO_TRANS: %d, y %s", qname(qt),
              (int)r, i == T * E ? "untouched" : "written");
        free(ws);
        memset(&m, 0, sizeof m);
        m.d_model = E, m.heads = NHEADS, m.trans = ATTN_TRANS, m.bq = bias, m.bo = bias;
        md = m;
        m.wtype = qt;
        m.wq = (const float *)(const void *)wq[0], m.wk = (const float *)(const void *)wq[1];
        m.wv = (const float *)(const void *)wq[2], m.wo = (const float *)(const void *)wq[3];
        md.wq = wd[0], md.wk = wd[1], md.wv = wd[2], md.wo = wd[3];
        need = attn_mha_workspace_size(&m, T, T);
        ws = xmalloc(need);
        check(attn_mha(&m, x, E, T, x, E, T, 1, yb, E, ws, need) == ATTN_OK, "attn_mha %s",
              qname(qt));
        check(attn_mha(&md, x, E, T, x, E, T, 1, ya, E, ws, need) == ATTN_OK,
              "attn_mha dequantized");
        for (i = 0; i < T * E; i++) {
            amax_m = fabs(ya[i]) > amax_m ? fabs(ya[i]) : amax_m;
            if (!(fabs((double)yb[i] - ya[i]) <= e_m)) e_m = fabs((double)yb[i] - ya[i]);
        }
        check(e_m <= 1e-5 * amax_m, "attn_mha %s against its dequantized weights: %.3g of max|y|",
              qname(qt), e_m / amax_m);
        free(ws);
    }
}

int main(void)
{
    check_begin("quant");
    test_sizes();
    build_special();
    test_reference();
    test_quantize();
    test_refusals();
    test_dequantize();
    test_convert_errors();
    test_matmul();
    test_matmul_errors();
    test_linear();
    test_model();
    test_blocks_q();
    printf("quant: %ld blocks quantized and %ld elements dequantized bit for bit; %zu "
           "constructed blocks\n", n_quant_blocks, n_deq_elems, n_sp);
    printf("quant: %ld q8_0 and %ld q4_0 products, worst error / bound %.3f and %.3f (%ld and "
           "%ld bit-identical to attn_matmul on the dequantized B, not promised); linear worst "
           "error / bound %.3f\n", mm_products[0], mm_products[1], mm_worst[0], mm_worst[1],
           mm_same_bits[0], mm_same_bits[1], lin_worst);
    test_convert_overflow();
    return check_end("quant");
}
