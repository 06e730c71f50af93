/* src/dispatch.h - run-time dispatch for x86-64 builds without instruction-set flags (or
 * with ATTN_DISPATCH): tools/amalgamate.py writes the implementation three times (scalar,
 * AVX2+FMA+F16C, AVX-512F; each copy's names prefixed, its target set by pragmas) and the
 * public functions that route each call to one copy. The CPU and the OS's saved register
 * state are checked once (cpuid, xgetbv); attn_use_isa() pins a target. */
#include <cpuid.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { ATTN__T_SCALAR, ATTN__T_AVX2, ATTN__T_AVX512 };

/* The best target this CPU and OS run: AVX2 needs AVX, FMA, F16C, AVX2 and the OS saving
 * the ymm state; AVX-512 also AVX512F and the opmask and zmm state. */
static int attn__cpu_best(void)
{
    unsigned a, b, c, d, xlo, xhi;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return ATTN__T_SCALAR;
    /* OSXSAVE (27), AVX (28), FMA (12), F16C (29) */
    if ((c & 0x38001000u) != 0x38001000u) return ATTN__T_SCALAR;
    __asm__ __volatile__("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    (void)xhi;
    if ((xlo & 0x6u) != 0x6u || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return ATTN__T_SCALAR;
    if (!(b & (1u << 5))) return ATTN__T_SCALAR;                         /* AVX2 */
    if ((b & (1u << 16)) && (xlo & 0xE6u) == 0xE6u) return ATTN__T_AVX512; /* AVX512F */
    return ATTN__T_AVX2;
}

/* The best target this CPU runs, asked of cpuid once (slow under a hypervisor): -1 until
 * then, one word written with its final value. The workspace queries take the largest size
 * of the targets up to it, the ones attn_use_isa accepts (a target the CPU cannot run is
 * never entered, not even to size a workspace). */
static int attn__best_once(void)
{
    static int best = -1;
    int t = __atomic_load_n(&best, __ATOMIC_RELAXED);
    if (t < 0) {
        t = attn__cpu_best();
        __atomic_store_n(&best, t, __ATOMIC_RELAXED);
    }
    return t;
}

/* The target attn_use_isa pinned, -1 for the best */
static int attn__dispatch_target = -1;

static int attn__target(void)
{
    const int t = __atomic_load_n(&attn__dispatch_target, __ATOMIC_RELAXED);
    return t < 0 ? attn__best_once() : t;
}

ATTN_API const char *attn_isa(void)
{
    static const char *const names[3] = {"scalar", "avx2", "avx512"};
    return names[attn__target()];
}

ATTN_API attn_status attn_use_isa(const char *name)
{
    int t;
    if (!name || strcmp(name, "auto") == 0) t = attn__best_once();
    else if (strcmp(name, "scalar") == 0) t = ATTN__T_SCALAR;
    else if (strcmp(name, "avx2") == 0) t = ATTN__T_AVX2;
    else if (strcmp(name, "avx512") == 0) t = ATTN__T_AVX512;
    else return ATTN_ERR_ARG;
    if (t > attn__best_once()) return ATTN_ERR_ARG; /* this CPU cannot run it */
    __atomic_store_n(&attn__dispatch_target, t, __ATOMIC_RELAXED);
    return ATTN_OK;
}
