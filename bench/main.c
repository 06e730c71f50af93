/* attn_bench - benchmark of the attn.h kernels against naive loops, peer libraries and the
 * machine's own limits, all measured in the same run.
 *
 *   meson compile -C build && ./build/bench/attn_bench [--quick] [--csv] [--op NAME]
 *
 * Every op (the list below, one op_*.c file per family) is timed on its shapes for each
 * of its implementations: the naive scalar loop, the library, and the peers' entries
 * (peers.c, each peer setting in child processes). The machine's limits (limits.c) come
 * first; after the main table, a ratios table gives the library's value over each peer's
 * and its share of the binding limit; the notes close the run.
 *
 * The naive loops are compiled with the build's flags (-O3 for meson's release buildtype)
 * but with auto-vectorization disabled (NAIVE_FN, NOVEC in bench.h), so they stay plain
 * scalar loops; libm expf / sqrtf are called per element.
 */
#define _POSIX_C_SOURCE 200112L
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The operations, in the order they run and print. Adding one: its op_*.c file defining
 * `struct op bench_op_<id>`, a line here, and the file in bench/meson.build. */
#define BENCH_OPS(X) \
    X(softmax)       \
    X(layernorm)     \
    X(rmsnorm)       \
    X(matmul)        \
    X(matmul2t)      \
    X(attention)     \
    X(decode)        \
    X(decode_cold)   \
    X(matvec)        \
    X(matvec_cold)   \
    X(linear16)      \
    X(int8)          \
    X(rope)          \
    X(mlp_dec)       \
    X(mlp)           \
    X(block)         \
    X(block_dec)

#define BENCH_DECLARE(id) extern struct op bench_op_##id;
BENCH_OPS(BENCH_DECLARE)
#define BENCH_ENTRY(id) &bench_op_##id,
static struct op *const g_ops[] = {BENCH_OPS(BENCH_ENTRY)};
#define NOPS NIMPL(g_ops)

struct options g_opt;
FILE *g_info;

static void usage(FILE *f)
{
    size_t i;
    fprintf(f,
            "usage: attn_bench [--quick] [--csv] [--op NAME] [--help]\n"
            "  --quick     3 samples of ~2 ms each (CI smoke run) instead of 9 of ~10 ms;\n"
            "              no 2048^3 matmul, matmul-2t on 1024^3\n"
            "  --csv       rows as CSV on stdout (header op,shape,impl,metric,value,ratio):\n"
            "              op limit (the machine's limits), the timed rows, extra_bytes and\n"
            "              bit_identical rows, then ratio_vs_<impl> (attn / impl) and\n"
            "              share_of_<limit> rows; the header and the notes go to stderr\n"
            "  --op NAME   only");
    for (i = 0; i < NOPS; i++)
        fprintf(f, "%s %s", i == 0 ? "" : i + 1 == NOPS ? " or" : ",", g_ops[i]->name);
    fprintf(f,
            "\n"
            "  --help      this text\n"
            "One thread except matmul-2t. Each op is timed for the library (impl attn), a\n"
            "naive scalar loop (impl naive, ratio 1.00) and the peer libraries found at build\n"
            "time (OpenBLAS, oneDNN; each in child processes); ratio = value / naive value,\n"
            "higher is faster. The table's spread is (max - min) / median of the samples.\n");
}

static void cpu_name(char *buf, size_t size)
{
    char line[512];
    FILE *f = fopen("/proc/cpuinfo", "r");
    snprintf(buf, size, "unknown");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *p = strchr(line, ':'), *e;
            if (!p)
                continue;
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            e = p + strlen(p);
            while (e > p && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\r'))
                *--e = '\0';
            if (*p)
                snprintf(buf, size, "%s", p);
            break;
        }
    }
    fclose(f);
}

static const char *compiler_name(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " __VERSION__;
#elif defined(__VERSION__)
    return __VERSION__;
#else
    return "unknown";
#endif
}

static void print_header(void)
{
    char cpu[256], cc[256];
    size_t i;
    cpu_name(cpu, sizeof cpu);
    fprintf(g_info, "attn.h %d.%d.%d benchmark\n", ATTN_VERSION_MAJOR, ATTN_VERSION_MINOR,
            ATTN_VERSION_PATCH);
    fprintf(g_info, "cpu:      %s (%ld online)\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    fprintf(g_info, "isa:      %s\n", attn_isa());
#ifdef HAVE_DISPATCHED
    fprintf(g_info, "dispatch: attn-dispatched rows (matmul, softmax, decode) = the library built "
                    "with no -m flag (run-time\n          dispatch), in this binary, pinned to "
                    "%s\n", bench_dispatched_isa());
#endif
    fprintf(g_info, "exp:      %s\n", attn_exp_impl());
    snprintf(cc, sizeof cc, "%s", compiler_name());
    for (i = strlen(cc); i > 0 && cc[i - 1] == ' '; i--)
        cc[i - 1] = '\0';
    fprintf(g_info, "compiler: %s\n", cc);
#ifdef ATTN_BENCH_BUILD
    fprintf(g_info, "build:    %s\n", ATTN_BENCH_BUILD);
#endif
    print_peers_header();
    fprintf(g_info, "timing:   1 thread (matmul-2t: 2), CLOCK_MONOTONIC, median of %d samples "
                    "of ~%.0f ms%s\n          (fewer, at least 3, when calls are long; a "
                    "warm-up call over %s is a sample); spread = (max - min) / median\n",
            g_opt.samples, g_opt.sample_ns / 1e6, g_opt.quick ? " (--quick)" : "",
            g_opt.quick ? "0.1 s" : "1 s");
    fflush(g_info);
}

int main(int argc, char **argv)
{
    const char *child = NULL;
    struct op *only = NULL;
    size_t i;
    int a;
    double t_start = now_ns();

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--csv") == 0)
            g_opt.csv = 1;
        else if (strcmp(argv[a], "--quick") == 0)
            g_opt.quick = 1;
        else if (strcmp(argv[a], "--op") == 0 && a + 1 < argc)
            g_opt.only = argv[++a];
        else if (strncmp(argv[a], "--op=", 5) == 0)
            g_opt.only = argv[a] + 5;
        else if (strcmp(argv[a], "--peer-child") == 0 && a + 1 < argc)
            child = argv[++a];
        else if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "attn_bench: unknown or incomplete option '%s'\n", argv[a]);
            usage(stderr);
            return 2;
        }
    }
    if (g_opt.only) {
        for (i = 0; i < NOPS; i++)
            if (strcmp(g_opt.only, g_ops[i]->name) == 0)
                only = g_ops[i];
        if (!only) {
            fprintf(stderr, "attn_bench: unknown op '%s'\n", g_opt.only);
            usage(stderr);
            return 2;
        }
    }
    g_opt.samples = g_opt.quick ? 3 : 9;
    g_opt.sample_ns = g_opt.quick ? 2e6 : 10e6;
    g_opt.warmup_ns = g_opt.quick ? 2e6 : 10e6;
    g_opt.budget_ns = g_opt.quick ? 0.3e9 : 2e9;
    g_info = g_opt.csv ? stderr : stdout;
    for (i = 0; i < NOPS; i++)
        peers_attach(g_ops[i]);

    if (child) {
        g_opt.child = peer_find(child);
        if (!g_opt.child || !only) {
            fprintf(stderr, "attn_bench: --peer-child needs a known peer and --op\n");
            return 2;
        }
        return peer_child_main(only);
    }

#ifdef HAVE_DISPATCHED
    if (!bench_dispatched_pin(attn_isa()))
        die("attn_use_isa", "the dispatching copy cannot take this build's path");
#endif
    print_header();
    if (g_opt.csv)
        printf("op,shape,impl,metric,value,ratio\n");
    measure_limits();
    print_limits();
    fprintf(g_info, "\n");
    fflush(g_info);

    if (!g_opt.csv)
        print_header_row();
    for (i = 0; i < NOPS; i++)
        if (!only || only == g_ops[i]) {
            run_peers(g_ops[i]);
            g_ops[i]->bench(g_ops[i]);
            g_ops[i]->ran = 1;
        }
    print_ratios(g_ops, NOPS);

    fflush(stdout);
    print_notes(g_ops, NOPS);
    fprintf(g_info, "total time %.0f s\n", (now_ns() - t_start) / 1e9);
    free_scratch();
    return 0;
}
