/* simd/common.h - compiler macros shared by attn.h's vector layer and kernels. */
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
#define ATTN__UNROLL _Pragma("GCC unroll 8") /* the next loop, in full */
#define ATTN__NOINLINE __attribute__((noinline))
#define ATTN__PREFETCH(p) __builtin_prefetch(p)
#define ATTN__PREFETCHW(p) __builtin_prefetch(p, 1)
#else
#define ATTN__FORCE_INLINE inline
#define ATTN__NOINLINE
#define ATTN__UNROLL
#define ATTN__PREFETCH(p) ((void)(p))
#define ATTN__PREFETCHW(p) ((void)(p))
#endif
#endif
