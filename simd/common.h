/* simd/common.h - compiler macros shared by attn.h's vector layer and kernels. */
#ifndef ATTN_SIMD_COMMON_H
#define ATTN_SIMD_COMMON_H
#include <stddef.h>
#include <stdint.h>

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
