/* check.h - the tiny test harness every test program uses.
 * A test program counts the cases it checks, prints each failure (the first 20),
 * prints the ISA it tested and a closing line "<name>: N passed, M failed", and exits
 * non-zero if anything failed. Include after attn.h. */
#ifndef ATTN_TEST_CHECK_H
#define ATTN_TEST_CHECK_H
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define CHECK__UNUSED __attribute__((unused))
#else
#define CHECK__UNUSED
#endif

static long check__passed, check__failed;

/* Record one case; on failure print the formatted message (the first 20 only). */
static CHECK__UNUSED int check(int ok, const char *fmt, ...)
{
    if (ok) {
        check__passed++;
    } else {
        check__failed++;
        if (check__failed <= 20) {
            va_list ap;
            va_start(ap, fmt);
            fputs("FAIL: ", stdout);
            vprintf(fmt, ap);
            fputc('\n', stdout);
            va_end(ap);
        }
    }
    return ok;
}

/* |got - want| <= atol + rtol * |want|, with NaN == NaN and inf == inf of the same sign. */
static CHECK__UNUSED int check_close(double got, double want, double atol, double rtol)
{
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    if (isnan(got) || isinf(got)) return 0;
    return fabs(got - want) <= atol + rtol * fabs(want);
}

static CHECK__UNUSED void check_begin(const char *name)
{
    printf("%s: testing the %s path (exp: %s)\n", name, attn_isa(), attn_exp_impl());
}

#if (defined(__AVX512VNNI__) || defined(__AVXVNNI__)) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif
/* 1 (after saying so) where the program was built for VNNI (AVX512-VNNI or AVX-VNNI) and
 * this CPU lacks it: the program must then exit 77 (skipped) before any kernel runs */
static CHECK__UNUSED int check_vnni_missing(const char *name)
{
#if (defined(__AVX512VNNI__) || defined(__AVXVNNI__)) && (defined(__GNUC__) || defined(__clang__))
    unsigned ra = 0, rb = 0, rc = 0, rd = 0;
#ifdef __AVX512VNNI__
    const int has = __get_cpuid_count(7, 0, &ra, &rb, &rc, &rd) && (rc >> 11 & 1u);
#else
    const int has = __get_cpuid_count(7, 1, &ra, &rb, &rc, &rd) && (ra >> 4 & 1u);
#endif
    if (!has) {
        printf("%s: built for VNNI, which this CPU lacks: not run\n", name);
        return 1;
    }
#endif
    (void)name;
    return 0;
}

/* Prints the closing line and returns the exit code. */
static CHECK__UNUSED int check_end(const char *name)
{
    printf("%s [%s]: %ld passed, %ld failed\n", name, attn_isa(), check__passed, check__failed);
    return check__failed ? 1 : 0;
}

/* Deterministic pseudo-random floats (xorshift), uniform in [lo, hi). */
static unsigned long long check__rng = 0x9E3779B97F4A7C15ull;
static CHECK__UNUSED void check_seed(unsigned long long s) { check__rng = s ? s : 1; }
static CHECK__UNUSED float check_uniform(float lo, float hi)
{
    check__rng ^= check__rng << 13;
    check__rng ^= check__rng >> 7;
    check__rng ^= check__rng << 17;
    return lo + (hi - lo) * (float)((check__rng >> 40) * (1.0 / 16777216.0));
}
#endif
