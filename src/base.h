/* src/base.h - the implementation's base: the vector layer, status strings, argument
 * checks. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "../simd/simd.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ATTN__MAX_ELEMS ((size_t)PTRDIFF_MAX / sizeof(float))
#define ATTN__ALIGN 64

/* ---- status, identification ---------------------------------------------------------- */

ATTN_API const char *attn_status_string(attn_status status)
{
    switch (status) {
    case ATTN_OK: return "ok";
    case ATTN_ERR_NULL: return "null pointer";
    case ATTN_ERR_SIZE: return "zero or inconsistent size";
    case ATTN_ERR_LD: return "leading dimension or stride smaller than its row";
    case ATTN_ERR_WORKSPACE: return "workspace missing or too small";
    case ATTN_ERR_OVERFLOW: return "sizes overflow the address space";
    case ATTN_ERR_ARG: return "invalid argument value";
    case ATTN_ERR_CAPACITY: return "append past the KV cache's capacity";
    case ATTN_ERR_ALIAS: return "an output overlaps an input or another output";
    }
    return "unknown status";
}

ATTN_API const char *attn_isa(void) { return ATTN__ISA_NAME; }

ATTN_API attn_status attn_use_isa(const char *name)
{
    return !name || strcmp(name, "auto") == 0 || strcmp(name, ATTN__ISA_NAME) == 0
               ? ATTN_OK
               : ATTN_ERR_ARG;
}

ATTN_API const char *attn_exp_impl(void)
{
#ifdef ATTN_USE_SLEEF
    return "sleef";
#else
    return "attn";
#endif
}

/* ---- argument checks ----------------------------------------------------------------- */

/* a * b, or SIZE_MAX when it exceeds `limit` */
static size_t attn__mul_lim(size_t a, size_t b, size_t limit)
{
    if (a != 0 && b > limit / a) return (size_t)-1;
    return a * b;
}

/* Adds a * b to *acc; returns 0 when the result would exceed ATTN__MAX_ELEMS. */
static int attn__extent_add(size_t *acc, size_t a, size_t b)
{
    size_t t = attn__mul_lim(a, b, ATTN__MAX_ELEMS);
    if (t > ATTN__MAX_ELEMS || *acc > ATTN__MAX_ELEMS - t) return 0;
    *acc += t;
    return 1;
}

/* rows x n matrix with leading dimension ld; rows = 0 is an empty matrix (nothing read or
 * written), n = 0 an error */
static attn_status attn__check_mat(size_t rows, size_t n, size_t ld)
{
    size_t ext = n;
    if (n == 0) return ATTN_ERR_SIZE;
    if (ld < n) return ATTN_ERR_LD;
    if (n > ATTN__MAX_ELEMS || (rows && !attn__extent_add(&ext, rows - 1, ld)))
        return ATTN_ERR_OVERFLOW;
    return ATTN_OK;
}

/* Do the byte ranges [a, a + na) and [b, b + nb) share a byte? (empty ones never do) */
static int attn__bytes_overlap(const void *a, size_t na, const void *b, size_t nb)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return na && nb && (x < y ? y - x < na : x - y < nb);
}

/* Bytes from the first to the last float of a rows x n matrix at ld (extent checked) */
static size_t attn__mat_bytes(size_t rows, size_t n, size_t ld)
{
    return rows ? ((rows - 1) * ld + n) * sizeof(float) : 0;
}

/* Whether rows x n matrices y (ldy, written) and x (ldx, read) share a float, unless they are
 * the same matrix (x == y, ldx == ldy) and `in_place` allows that. With equal leading
 * dimensions the test is row by row (interleaved rows are disjoint); otherwise on the extents
 * (first to last float). */
static int attn__mat_alias(const float *y, size_t ldy, const float *x, size_t ldx, size_t rows,
                           size_t n, int in_place)
{
    const size_t eb = attn__mat_bytes(rows, n, ldy), nb = n * sizeof(float);
    ptrdiff_t d, lb, k, lo, hi, t;
    if (in_place && x == y && ldx == ldy) return 0;
    if (!attn__bytes_overlap(y, eb, x, attn__mat_bytes(rows, n, ldx))) return 0;
    if (ldx != ldy || rows < 2) return 1;
    /* row i of y and row i + k of x meet iff |d - k lb| < nb, d = y - x in bytes (|d| is below
     * the extent now); the k nearest d / lb, within |k| < rows, decide */
    d = (ptrdiff_t)((uintptr_t)y - (uintptr_t)x);
    lb = (ptrdiff_t)(ldy * sizeof(float));
    hi = (ptrdiff_t)rows - 1, lo = -hi;
    k = d >= 0 ? d / lb : -((-d + lb - 1) / lb); /* floor(d / lb) */
    for (t = k; t <= k + 1; t++) {
        const ptrdiff_t kk = t < lo ? lo : t > hi ? hi : t, r = d - kk * lb;
        if (r > -(ptrdiff_t)nb && r < (ptrdiff_t)nb) return 1;
    }
    return 0;
}

/* The checks of a row operation from x (ldx) to y (ldy): pointers (unless rows = 0), sizes,
 * and overlap (y == x with ldy == ldx allowed when `in_place`). */
static attn_status attn__rows_check(const float *x, size_t ldx, const float *y, size_t ldy,
                                    size_t rows, size_t n, int in_place)
{
    attn_status st;
    if (rows && (!x || !y)) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(rows, n, ldx)) != ATTN_OK) return st;
    if ((st = attn__check_mat(rows, n, ldy)) != ATTN_OK) return st;
    if (attn__mat_alias(y, ldy, x, ldx, rows, n, in_place)) return ATTN_ERR_ALIAS;
    return ATTN_OK;
}

static int attn__finite(float v) { return v == v && v - v == 0.0f; }
