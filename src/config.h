/* src/config.h - every tunable of the implementation, one block per instruction set.
 * Sizes are in floats unless stated. The microkernels' shapes (ATTN__MR x ATTN__NR) are
 * not tunables: they come with the microkernel (simd/mm_*.h). */

/* ---- shared by every ISA ---- */
/* Sums over rows are blocked so that rounding grows with n / block + block, not n. */
#define ATTN__SUM_BLOCK (64 * ATTN__VW)
/* Row operations (norms) reduce a batch of rows at once (attn__vhred8 takes 8). */
#define ATTN__NORM_BATCH 8
/* Norm rows up to this long take their output pass per batch; longer, right after each
 * row's sums. */
#define ATTN__NORM_BATCHED 512
/* Matmul: NN products with n at most this read A in place, one MR-row sliver at a time
 * against the whole packed B panel (no copy of A, whose elements are used n / NR times). */
#define ATTN__MM_DIRECT_N (32 * ATTN__NR)
/* Matmul: floats of A or C past which software prefetching pays (twice a common L2). */
#define ATTN__MM_FAR (512 * 1024)
/* Matmul: packed op(B) up to this size is packed whole (NN, n <= DIRECT_N): the panel
 * stays in L2 and each A sliver streams through all of k. */
#define ATTN__MM_WHOLE_B (128 * 1024)
/* Matrix-vector, one row of A, B^T in 16 bits or blocks: fma chains per row of B (enough
 * to cover the fma latency; the loads bind) */
#define ATTN__MV1_U 4
/* ... up to this k (longer rows of B, out of cache, ran at 0.5-0.8x the 4-row path: not
 * understood; the 4-row body takes them) */
#define ATTN__MV1_K 4096
/* Attention: query tiles with fewer rows take the rows (decode) path. */
#define ATTN__FUSED_MIN 12
/* Attention, rows path: keys per block of P V (their V rows requested into L1, then the
 * column chunks of the accumulators take them in registers; each chunk loads, checks and
 * stores its accumulators once a block, so longer blocks spend less on that). */
#define ATTN__PV_KB 64
/* Attention, rows path: one row alone (decode, one query per head) holds its accumulator
 * in registers across a block of keys where it has at most this many vectors (its first
 * half of them, or all: each V row then read in one pass); longer rows stream. */
#define ATTN__PV_NV1 8
/* Attention, rows path: bytes of K and V a call reads past which each key tile's V rows
 * are requested while its K rows are scored, and the next tile's K rows while P V runs (out
 * of cache memory then stays busy through both; in L2 the requests cost more than they save) */
#define ATTN__DEC_PF ((size_t)2 << 20)
/* Attention, rows path, past ATTN__DEC_PF: bytes of K rows ahead of the scores requested into
 * L2, which keeps more misses in flight than L1's fill buffers (the scores read several K rows
 * at once, a pattern the hardware does not prefetch) */
#define ATTN__DEC_KPF 8192
/* Softmax and the norms: bytes of input past which a call is far out of the caches: y is then
 * written by non-temporal stores (where the ISA has them; softmax from a row's exps in a stack
 * scratch) */
#define ATTN__SM_FAR ((size_t)32 << 20)
/* Softmax: floats of that stack scratch (16 KiB); longer rows keep normal stores. */
#define ATTN__SM_SCRATCH 4096
/* int8 matmul: bytes of B repacked per chunk of columns (stays in L2 while every row of A
 * passes over it) */
#define ATTN__QD_PANEL (256 * 1024)
/* int8 matmul on CPUs with VNNI (AVX512-VNNI, AVX-VNNI): up to this many rows of A read B
 * where it lies, in quads of 4 rows over chunks of ATTN__QK8_NC columns (a chunk stays in L2
 * for the next quad) */
#define ATTN__QK8_MR 8
#define ATTN__QK8_NC 64
/* int8 matmul: rows of A per tile (two column groups each; 4 rows make 8 integer and 8
 * float accumulators: within 32 vector registers, and 16 with AVX2's 3) */
#if ATTN__VW == 8
#define ATTN__QD_MR 3
#else
#define ATTN__QD_MR 4
#endif

/* Matrix-vector products with f32 B^T: vectors of B's rows read together (each lane a row
 * of B along k), 16 rows either way. The rows' lines at one step of k share an L1 set when
 * B's rows are 4 KiB apart (a power-of-two d_in), and 32 rows (two AVX-512 vectors) thrash
 * it. */
#if ATTN__VW == 16
#define ATTN__MV_TXV 1
#else
#define ATTN__MV_TXV 2
#endif

#if ATTN__VW == 16 /* ---- AVX-512 ---- */
/* Matrix-vector with 4 rows of A: B's rows per pass (B^T in 16 bits or blocks, and B of any
 * type), their products held in registers (32 of them) */
#define ATTN__MV_J4 4
#define ATTN__MM_KC 256
#define ATTN__MM_MC (16 * ATTN__MR)
#define ATTN__MM_NC (128 * ATTN__NR)
#define ATTN__TQ 192
#define ATTN__TK 128
#define ATTN__SM_SHORT 4
#elif ATTN__VW == 8 /* ---- AVX2 ---- */
#define ATTN__MM_KC 256            /* depth of a chunk: a KC x NR B sliver stays in L1 */
#define ATTN__MM_MC (24 * ATTN__MR) /* rows of op(A) per packed block (L2) */
#define ATTN__MM_NC (255 * ATTN__NR) /* columns of op(B) per packed panel (L3) */
#define ATTN__TQ 192               /* attention: query rows per tile (a multiple of MR) */
#define ATTN__TK 128               /* attention: keys per tile (a multiple of NR) */
#define ATTN__SM_SHORT 8           /* softmax: rows of up to this many vectors in registers */
#elif ATTN__VW == 4 /* ---- NEON (AArch64 8 x 12, ARMv7 4 x 8), wasm (4 x 8 microkernel) ---- */
#define ATTN__MM_KC 256
#define ATTN__MM_MC (24 * ATTN__MR)
#define ATTN__MM_NC (255 * ATTN__NR)
#define ATTN__TQ 192
#define ATTN__TK ((128 + ATTN__NR - 1) / ATTN__NR * ATTN__NR) /* 132 on AArch64 */
#define ATTN__SM_SHORT 8
#ifdef ATTN__ISA_WASM
#define ATTN__NORM_PAIR 0 /* V8 spills two rows' 16 accumulators (and the whole function) */
#endif
#else /* ---- scalar ---- */
#define ATTN__MM_KC 256
#define ATTN__MM_MC (24 * ATTN__MR)
#define ATTN__MM_NC (255 * ATTN__NR)
#define ATTN__TQ 192
#define ATTN__TK 128
#define ATTN__SM_SHORT 8
#endif

#ifndef ATTN__MV_J4
#define ATTN__MV_J4 2 /* (16 vector registers) */
#endif
/* Norms: short rows' sums two rows at a time (their latencies overlapped) */
#ifndef ATTN__NORM_PAIR
#define ATTN__NORM_PAIR 1
#endif

/* the transposing packs write whole vectors per row: a sliver's rows must fit one vector
 * or be a multiple of it */
#if ATTN__MR > ATTN__VW && ATTN__MR % ATTN__VW != 0
#error "ATTN__MR must be at most ATTN__VW or a multiple of it"
#endif
#if ATTN__TQ % ATTN__MR != 0 || ATTN__TK % ATTN__NR != 0
#error "ATTN__TQ and ATTN__TK must be multiples of the microkernel's ATTN__MR and ATTN__NR"
#endif
