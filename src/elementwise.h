/* ---- residual add, positional encoding ----------------------------------------------- */

ATTN_API attn_status attn_add(float *y, size_t ldy, const float *x, size_t ldx,
                              size_t rows, size_t n)
{
    attn_status st;
    size_t r, i;
    if ((st = attn__rows_check(x, ldx, y, ldy, rows, n, 1)) != ATTN_OK) return st;
    for (r = 0; r < rows; r++) {
        float *yr = y + r * ldy;
        const float *xr = x + r * ldx;
        for (i = 0; i + ATTN__VW <= n; i += ATTN__VW)
            attn__vstore(yr + i, attn__vadd(attn__vload(yr + i), attn__vload(xr + i)));
        if (i < n)
            attn__vstore_part(yr + i, attn__vadd(attn__vload_part(yr + i, n - i, 0.0f),
                                                 attn__vload_part(xr + i, n - i, 0.0f)), n - i);
    }
    return ATTN_OK;
}

ATTN_API attn_status attn_positional_encoding(float *pe, size_t ldpe, size_t rows, size_t d,
                                              size_t pos0, int add)
{
    attn_status st;
    size_t r, i;
    if (rows && !pe) return ATTN_ERR_NULL;
    if ((st = attn__check_mat(rows, d, ldpe)) != ATTN_OK) return st;
    for (r = 0; r < rows; r++) {
        double pos = (double)pos0 + (double)r;
        float *row = pe + r * ldpe;
        for (i = 0; i < d; i++) {
            double a = pos / pow(10000.0, (double)(i & ~(size_t)1) / (double)d);
            double v = (i & 1) ? cos(a) : sin(a);
            row[i] = add ? (float)((double)row[i] + v) : (float)v;
        }
    }
    return ATTN_OK;
}
