/* simd/common.h - compiler macros shared by attn.h's vector layer and kernels, and the x86
 * ISA files' few shared helpers. */
#ifndef ATTN_SIMD_COMMON_H
#define ATTN_SIMD_COMMON_H
#include <stddef.h>
#include <stdint.h>
#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
/* all x86 intrinsics, first, where g++ 12 would report the AVX-512 ones' own
 * _mm512_undefined_* as uninitialized once inlined */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#if defined(__GNUC__) || defined(__clang__)
#include <cpuid.h>
#endif
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ATTN__FORCE_INLINE inline __attribute__((always_inline))
/* the next loop unrolled in full (its trip count a constant after inlining: up to 8, or 16
 * for ATTN__UNROLL16), so that its small arrays of vectors live in registers. clang takes
 * "GCC unroll N" as a count, not a request to unroll in full, and leaves such loops rolled,
 * with those arrays in memory. */
#ifdef __clang__
#define ATTN__UNROLL _Pragma("clang loop unroll(full)")
#define ATTN__UNROLL16 _Pragma("clang loop unroll(full)")
#else
#define ATTN__UNROLL _Pragma("GCC unroll 8")
#define ATTN__UNROLL16 _Pragma("GCC unroll 16")
#endif
#define ATTN__NOINLINE __attribute__((noinline))
#define ATTN__PREFETCH(p) __builtin_prefetch(p)
#define ATTN__PREFETCH_L2(p) __builtin_prefetch(p, 0, 2) /* to L2 (and out) only */
#define ATTN__PREFETCHW(p) __builtin_prefetch(p, 1)
#else
#define ATTN__FORCE_INLINE inline
#define ATTN__NOINLINE
#define ATTN__UNROLL
#define ATTN__UNROLL16
#define ATTN__PREFETCH(p) ((void)(p))
#define ATTN__PREFETCH_L2(p) ((void)(p))
#define ATTN__PREFETCHW(p) ((void)(p))
#endif

/* The vector layer's partial loads and stores take n < ATTN__VW lanes (a whole vector is a
 * plain load or store; with one lane, n is 0). Where ATTN__CHECKS is defined
 * (the test builds: meson.build), a call outside that contract traps on every ISA:
 * the x86 ones would otherwise accept n == ATTN__VW, which the scalar and 4-lane ones do not. */
#ifdef ATTN__CHECKS
#if defined(__GNUC__) || defined(__clang__)
#define ATTN__CHECK_PART(n) ((n) < ATTN__VW ? (void)0 : __builtin_trap())
#else
#include <stdlib.h>
#define ATTN__CHECK_PART(n) ((n) < ATTN__VW ? (void)0 : abort())
#endif
#else
#define ATTN__CHECK_PART(n) ((void)0)
#endif

/* The cache lines of bytes [p, p + n) requested (n > 0), into L1 where l1 (a constant),
 * else into L2 only: the decode path asks for V row j into L2 while it scores K row j, so
 * out of cache the two streams arrive together (L2, as a tile's V rows in f32 outgrow L1
 * before P V reads them), and for K rows ahead of its scores and V rows before P V into L1 */
static inline void attn__prefetch_bytes(const void *p, size_t n, int l1)
{
    const char *b = (const char *)p;
    size_t c;
    for (c = 0; c < n; c += 64)
        if (l1) ATTN__PREFETCH(b + c);
        else ATTN__PREFETCH_L2(b + c);
    if (l1) ATTN__PREFETCH(b + n - 1);
    else ATTN__PREFETCH_L2(b + n - 1);
}

/* A stream of requests into L2: the rows a kernel reads next, requested in the order they are
 * stored (from at, below end), as many bytes a step as the current rows are read. Rows of a
 * few KiB are too short for the hardware prefetcher, and it serves one stream far better than
 * several interleaved ones (into L2, not L1: more misses in flight). Addresses as integers:
 * the cursor may pass end, the requests stop there. */
typedef struct {
    uintptr_t at, end;
} attn__pfs;
static inline attn__pfs attn__pfs_make(const void *at, const void *end)
{
    attn__pfs f;
    f.at = (uintptr_t)at, f.end = (uintptr_t)end;
    return f;
}
static ATTN__FORCE_INLINE void attn__pfs_step(attn__pfs *f, size_t bytes)
{
    size_t x;
    for (x = 0; x < bytes; x += 64)
        if (f->at + x < f->end) ATTN__PREFETCH_L2((const void *)(f->at + x));
    f->at += bytes;
}

#if defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
#include <string.h>
/* For the x86 ISA files' attn__vi_t8: the 8 little-endian 16-bit block scales rb bytes apart
 * at b, gathered in a register (its one 16-byte store then read back as one: 8 small stores
 * would stall the load's store forwarding) */
static inline int attn__ld16(const unsigned char *p)
{
    uint16_t t;
    memcpy(&t, p, 2);
    return t;
}
static inline __m128i attn__vi_h8(const unsigned char *b, size_t rb)
{
    __m128i h = _mm_cvtsi32_si128(attn__ld16(b));
    h = _mm_insert_epi16(h, attn__ld16(b + rb), 1);
    h = _mm_insert_epi16(h, attn__ld16(b + 2 * rb), 2);
    h = _mm_insert_epi16(h, attn__ld16(b + 3 * rb), 3);
    h = _mm_insert_epi16(h, attn__ld16(b + 4 * rb), 4);
    h = _mm_insert_epi16(h, attn__ld16(b + 5 * rb), 5);
    h = _mm_insert_epi16(h, attn__ld16(b + 6 * rb), 6);
    return _mm_insert_epi16(h, attn__ld16(b + 7 * rb), 7);
}
#endif
#endif
