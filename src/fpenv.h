/* src/fpenv.h - the floating-point environment: flush denormals to zero. The control
 * registers differ per ISA (MXCSR, FPCR); the kernels never depend on them. */
#ifdef __cplusplus
}
#endif
#if defined(__SSE__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 1)
#include <xmmintrin.h>
#define ATTN__FTZ_X86 1
#elif defined(__aarch64__) && (defined(__GNUC__) || defined(__clang__))
#define ATTN__FTZ_A64 1
#endif
#ifdef __cplusplus
extern "C" {
#endif

ATTN_API int attn_denormals_flush_supported(void)
{
#if defined(ATTN__FTZ_X86) || defined(ATTN__FTZ_A64)
    return 1;
#else
    return 0;
#endif
}

ATTN_API attn_status attn_denormals_flush_begin(attn_fp_state *state)
{
    if (!state) return ATTN_ERR_NULL;
#if defined(ATTN__FTZ_X86)
    {
        const unsigned int csr = _mm_getcsr();
        state->saved = csr;
        state->active = 1;
        _mm_setcsr(csr | (1u << 15) | (1u << 6)); /* FTZ, DAZ */
    }
#elif defined(ATTN__FTZ_A64)
    {
        uint64_t fpcr;
        __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr) : : "memory");
        state->saved = fpcr;
        state->active = 1;
        fpcr |= (uint64_t)1 << 24; /* FZ */
        __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr) : "memory");
    }
#else
    state->saved = 0;
    state->active = 0;
#endif
    return ATTN_OK;
}

ATTN_API attn_status attn_denormals_flush_end(const attn_fp_state *state)
{
    if (!state) return ATTN_ERR_NULL;
    if (!state->active) return ATTN_OK;
#if defined(ATTN__FTZ_X86)
    _mm_setcsr((unsigned int)state->saved);
#elif defined(ATTN__FTZ_A64)
    {
        const uint64_t fpcr = state->saved;
        __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr) : "memory");
    }
#endif
    return ATTN_OK;
}

#ifdef __cplusplus
}
#endif
