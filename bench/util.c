/* util.c - errors, aligned buffers, random input and strings for the benchmark */
#define _POSIX_C_SOURCE 200112L
#include "bench.h"

#include <stdlib.h>
#include <string.h>

void die(const char *what, const char *why)
{
    fprintf(stderr, "attn_bench: %s: %s\n", what, why);
    exit(1);
}

void check(attn_status st, const char *call)
{
    if (st != ATTN_OK) {
        fprintf(stderr, "attn_bench: %s failed: %s (%d)\n", call, attn_status_string(st),
                (int)st);
        abort();
    }
}

void *xalloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0)
        return NULL;
    if (posix_memalign(&p, 64, bytes) != 0 || p == NULL)
        die("posix_memalign", "out of memory");
    return p;
}

float *falloc(size_t count) { return (float *)xalloc(count * sizeof(float)); }

static float *g_buf[BUF_COUNT];
static size_t g_buf_count[BUF_COUNT];

float *scratch(int which, size_t count)
{
    if (count > g_buf_count[which]) {
        free(g_buf[which]);
        g_buf[which] = falloc(count);
        memset(g_buf[which], 0, count * sizeof(float));
        g_buf_count[which] = count;
    }
    return g_buf[which];
}

void free_scratch(void)
{
    int i;
    for (i = 0; i < BUF_COUNT; i++) {
        free(g_buf[i]);
        g_buf[i] = NULL;
        g_buf_count[i] = 0;
    }
}

/* One generator for the whole run, so every op sees the same input from run to run. */
static unsigned long long g_rng = 0x243f6a8885a308d3ull;

void fill_uniform(float *x, size_t count, float lo, float hi)
{
    size_t i;
    for (i = 0; i < count; i++) {
        g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = lo + (hi - lo) * (float)((g_rng >> 40) * (1.0 / 16777216.0));
    }
}

size_t cold_copies(double bytes)
{
    double n = bytes > 0.0 ? (double)BENCH_COLD_BYTES / bytes : 1.0;
    size_t c = (size_t)n + ((double)(size_t)n < n);
    return c < 1 ? 1 : c > BENCH_COLD_MAX ? BENCH_COLD_MAX : c;
}

void copy_str(char *dst, size_t size, const char *src)
{
    size_t i;
    for (i = 0; i + 1 < size && src[i]; i++)
        dst[i] = src[i];
    dst[i] = '\0';
}

const char *fmt_bytes(double bytes, char *buf, size_t size)
{
    if (bytes >= 1024.0 * 1024.0)
        snprintf(buf, size, "%.1f MiB", bytes / (1024.0 * 1024.0));
    else if (bytes >= 1024.0)
        snprintf(buf, size, "%.1f KiB", bytes / 1024.0);
    else
        snprintf(buf, size, "%.0f B", bytes);
    return buf;
}
