/* simd/simd.h - picks attn.h's vector layer and matmul microkernel for the target:
 * AVX-512 (unless ATTN_NO_AVX512, which keeps AVX2 on such a build), AVX2+FMA, NEON
 * (AArch64, or ARMv7 with VFPv4's fma), WebAssembly SIMD128 (-msimd128), or the portable
 * scalar layer (also ATTN_NO_SIMD). */
#ifndef ATTN_SIMD_SIMD_H
#define ATTN_SIMD_SIMD_H
#include "common.h"
/* ATTN__FORCE_ISA with ATTN__FORCE_AVX512 / _AVX2 / neither (scalar): one copy of the
 * implementation in a build that dispatches at run time (its target set by pragmas) */
#if defined(ATTN__FORCE_AVX512) || (!defined(ATTN__FORCE_ISA) && !defined(ATTN_NO_SIMD) && \
                                    !defined(ATTN_NO_AVX512) && defined(__AVX512F__))
#define ATTN__ISA_AVX512 1
#include "avx512.h"
#elif defined(ATTN__FORCE_AVX2) || (!defined(ATTN__FORCE_ISA) && !defined(ATTN_NO_SIMD) && \
                                    defined(__AVX2__) && defined(__FMA__))
#define ATTN__ISA_AVX2 1
#include "avx2.h"
#elif !defined(ATTN__FORCE_ISA) && !defined(ATTN_NO_SIMD) && defined(__ARM_NEON) && \
    (defined(__aarch64__) || defined(__ARM_FEATURE_FMA))
#define ATTN__ISA_NEON 1
#include "neon.h"
#if !defined(__aarch64__) && defined(ATTN_USE_SLEEF)
#undef ATTN_USE_SLEEF /* ARMv7 keeps the library's exp */
#endif
#elif !defined(ATTN__FORCE_ISA) && !defined(ATTN_NO_SIMD) && defined(__wasm_simd128__)
#define ATTN__ISA_WASM 1
#include "wasm.h"
#ifdef ATTN_USE_SLEEF
#undef ATTN_USE_SLEEF /* wasm keeps the library's exp */
#endif
#else
#define ATTN__ISA_SCALAR 1
#include "scalar.h"
#ifdef ATTN_USE_SLEEF
#undef ATTN_USE_SLEEF /* the scalar path keeps the library's exp */
#endif
#endif

#include "generic.h"

#if defined(ATTN__ISA_AVX512)
#include "mm_12x32_avx512.h"
#include "qk_4xq8_avx512.h"
#elif defined(ATTN__ISA_AVX2)
#include "mm_6x16_avx2.h"
#include "qk_4xq8_avx2.h"
#elif defined(ATTN__ISA_NEON) && defined(__aarch64__)
#include "mm_8x12_neon.h"
#elif defined(ATTN__ISA_NEON)
#include "mm_4x8_neon32.h"
#elif defined(ATTN__ISA_WASM)
#include "mm_4x8_wasm.h"
#else
#include "mm_4xnr.h"
#endif
#endif
