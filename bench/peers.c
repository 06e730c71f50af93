/* peers.c - the peer libraries: OpenBLAS cblas_sgemm (matmul, and the unfused attention's
 * sgemm) and oneDNN dnnl_sgemm, softmax and layer normalization, found by meson when installed
 * (HAVE_OPENBLAS, HAVE_DNNL). Adding a peer library or setting touches this file only
 * (and bench/meson.build to find the library).
 *
 * A peer's ISA and thread count are set through environment variables read when the
 * library initializes, so each peer setting (g_peers) runs in child processes: the
 * benchmark re-executes itself (/proc/self/exe) with that environment and the hidden option
 * --peer-child NAME --op OP, and reads the child's CSV rows from a pipe. A setting with
 * several processes reports the median process.
 */
#if defined(HAVE_OPENBLAS) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* OpenBLAS's cblas.h declares functions taking a cpu_set_t */
#endif
#define _POSIX_C_SOURCE 200112L
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#if DNNL_VERSION_MAJOR == 2
#define BENCH_DNNL 1 /* the oneDNN 2.x C API (operation descriptors) */
#endif
#endif

extern char **environ;

/* ---------------------------------------------------------------------------------- */
/* Settings: openblas-avx2 (OPENBLAS_CORETYPE=Haswell), openblas-avx512 (SkylakeX: its
 * AVX-512 kernels, where the CPU has AVX-512F; an OpenBLAS that does not know the CPU's model
 * takes its SSE3 kernels by itself) and openblas, 1 thread, for matmul and (unrestricted) the
 * unfused attention; the same on 2 threads for matmul-2t; onednn-avx2 (DNNL_MAX_CPU_ISA=AVX2,
 * ONEDNN_MAX_CPU_ISA=AVX2) and onednn (3 processes for the row ops, whose figures vary most
 * from process to process; 1 for matmul), OMP_NUM_THREADS=1 (Debian's oneDNN uses OpenMP),
 * for softmax, layernorm and matmul. */

static const struct peer g_peers[] = {
    {"openblas-avx2", "openblas", " matmul attention decode ",
     {"OPENBLAS_CORETYPE=Haswell", NULL, NULL}, 1, 1, 0},
    {"openblas-avx512", "openblas", " matmul attention decode ",
     {"OPENBLAS_CORETYPE=SkylakeX", NULL, NULL}, 1, 1, 1},
    {"openblas", "openblas", " matmul attention decode ", {NULL, NULL, NULL}, 1, 1, 0},
    {"openblas-avx2-2t", "openblas", " matmul-2t ", {"OPENBLAS_CORETYPE=Haswell", NULL, NULL},
     2, 1, 0},
    {"openblas-avx512-2t", "openblas", " matmul-2t ",
     {"OPENBLAS_CORETYPE=SkylakeX", NULL, NULL}, 2, 1, 1},
    {"openblas-2t", "openblas", " matmul-2t ", {NULL, NULL, NULL}, 2, 1, 0},
    {"onednn-avx2", "onednn", " softmax layernorm matmul ",
     {"DNNL_MAX_CPU_ISA=AVX2", "ONEDNN_MAX_CPU_ISA=AVX2", NULL}, 1, 1, 0},
    {"onednn", "onednn", " softmax layernorm ", {NULL, NULL, NULL}, 1, 3, 0},
    {"onednn-sgemm", "onednn", " matmul ", {NULL, NULL, NULL}, 1, 1, 0},
};
#define NPEERS (sizeof g_peers / sizeof g_peers[0])

/* Removed from the child's environment before its setting's own are added. */
static const char *const g_peer_env_vars[] = {
    "OPENBLAS_CORETYPE", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS",
    "OPENBLAS_VERBOSE", "DNNL_MAX_CPU_ISA", "ONEDNN_MAX_CPU_ISA", "DNNL_VERBOSE",
    "ONEDNN_VERBOSE", "DNNL_CPU_ISA_HINTS", "ONEDNN_CPU_ISA_HINTS"};

static int group_compiled(const char *group)
{
#ifdef HAVE_OPENBLAS
    if (strcmp(group, "openblas") == 0)
        return 1;
#endif
#ifdef BENCH_DNNL
    if (strcmp(group, "onednn") == 0)
        return 1;
#endif
    (void)group;
    return 0;
}

static int peer_runs_here(const struct peer *p)
{
#if defined(__x86_64__) || defined(__i386__)
    if (p->avx512) {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx512f");
    }
#endif
    return !p->avx512;
}

static int peer_serves(const struct peer *p, const char *opname)
{
    char key[40];
    snprintf(key, sizeof key, " %s ", opname);
    return strstr(p->ops, key) != NULL;
}

/* ---------------------------------------------------------------------------------- */
/* OpenBLAS. */

#ifdef HAVE_OPENBLAS
static void openblas_matmul_run(void *ctx, void *data)
{
    const struct mmcase *c = (const struct mmcase *)data;
    (void)ctx;
    cblas_sgemm(CblasRowMajor, c->ta == ATTN_TRANS ? CblasTrans : CblasNoTrans,
                c->tb == ATTN_TRANS ? CblasTrans : CblasNoTrans, (blasint)c->m, (blasint)c->n,
                (blasint)c->k, 1.0f, c->a, (blasint)c->lda, c->b, (blasint)c->ldb, 0.0f, c->c,
                (blasint)c->ldc);
}

static void gemm_openblas(const struct attcase *c, int tb, size_t m, size_t n, size_t k,
                          float alpha, const float *a, size_t lda, const float *b, size_t ldb,
                          float *out, size_t ldc)
{
    (void)c;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
                (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, 0.0f, out,
                (blasint)ldc);
}

static void openblas_unfused_run(void *ctx, void *data)
{
    (void)ctx;
    unfused_attention((const struct attcase *)data, gemm_openblas, 0);
}

static void openblas_unfused128_run(void *ctx, void *data)
{
    (void)ctx;
    unfused_attention((const struct attcase *)data, gemm_openblas, 128);
}
#endif

/* ---------------------------------------------------------------------------------- */
/* oneDNN softmax / layer normalization, forward inference, f32, plain {rows, n} tensors
 * on the caller's buffers. One primitive per shape (prepare), timed executions. */

#ifdef BENCH_DNNL
static struct {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_t prim;
    dnnl_memory_t src, dst, scale, shift;
    int nargs;
    dnnl_exec_arg_t args[4];
} g_dnnl;

static void dnnl_check(dnnl_status_t st, const char *what)
{
    if (st != dnnl_success) {
        fprintf(stderr, "attn_bench: oneDNN %s failed: %s\n", what, dnnl_status2str(st));
        exit(1);
    }
}

static const char *dnnl_isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    default: return "other";
    }
}

static int g_dnnl_layernorm_tag; /* its address marks the layernorm entry's ctx */

static void dnnl_prepare(void *ctx, void *data)
{
    const struct rowcase *c = (const struct rowcase *)data;
    const int layernorm = ctx != NULL;
    dnnl_memory_desc_t md, vd;
    dnnl_dims_t dims, vdims;
    dnnl_primitive_desc_t pd;
    const char *info = NULL;
    char line[200];
    if (!g_dnnl.engine) {
        dnnl_check(dnnl_engine_create(&g_dnnl.engine, dnnl_cpu, 0), "engine_create");
        dnnl_check(dnnl_stream_create(&g_dnnl.stream, g_dnnl.engine, dnnl_stream_default_flags),
                   "stream_create");
    }
    dims[0] = (dnnl_dim_t)c->rows;
    dims[1] = (dnnl_dim_t)c->n;
    vdims[0] = (dnnl_dim_t)c->n;
    dnnl_check(dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_f32, dnnl_ab), "memory_desc");
    if (!layernorm) {
        dnnl_softmax_desc_t sd;
        dnnl_check(dnnl_softmax_forward_desc_init(&sd, dnnl_forward_inference, &md, 1),
                   "softmax_forward_desc_init");
        dnnl_check(dnnl_primitive_desc_create(&pd, &sd, NULL, g_dnnl.engine, NULL),
                   "primitive_desc_create");
    } else {
        dnnl_layer_normalization_desc_t ld;
        dnnl_check(dnnl_layer_normalization_forward_desc_init(
                       &ld, dnnl_forward_inference, &md, NULL, c->eps,
                       (unsigned)dnnl_use_scale | (unsigned)dnnl_use_shift),
                   "layer_normalization_forward_desc_init");
        dnnl_check(dnnl_primitive_desc_create(&pd, &ld, NULL, g_dnnl.engine, NULL),
                   "primitive_desc_create");
    }
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, (void *)&info) ==
            dnnl_success &&
        info) {
        snprintf(line, sizeof line, "%s: oneDNN %s runs %s", g_opt.child->name,
                 layernorm ? "layer_normalization" : "softmax", info);
        printf("#info,%s\n", line); /* the parent keeps each distinct line once */
    }
    dnnl_check(dnnl_primitive_create(&g_dnnl.prim, pd), "primitive_create");
    dnnl_primitive_desc_destroy(pd);
    dnnl_check(dnnl_memory_create(&g_dnnl.src, &md, g_dnnl.engine, (void *)c->x),
               "memory_create");
    dnnl_check(dnnl_memory_create(&g_dnnl.dst, &md, g_dnnl.engine, c->y), "memory_create");
    g_dnnl.args[0].arg = DNNL_ARG_SRC;
    g_dnnl.args[0].memory = g_dnnl.src;
    g_dnnl.args[1].arg = DNNL_ARG_DST;
    g_dnnl.args[1].memory = g_dnnl.dst;
    g_dnnl.nargs = 2;
    g_dnnl.scale = g_dnnl.shift = NULL;
    if (layernorm) {
        dnnl_check(dnnl_memory_desc_init_by_tag(&vd, 1, vdims, dnnl_f32, dnnl_a), "memory_desc");
        dnnl_check(dnnl_memory_create(&g_dnnl.scale, &vd, g_dnnl.engine, (void *)c->gamma),
                   "memory_create");
        dnnl_check(dnnl_memory_create(&g_dnnl.shift, &vd, g_dnnl.engine, (void *)c->beta),
                   "memory_create");
        g_dnnl.args[2].arg = DNNL_ARG_SCALE;
        g_dnnl.args[2].memory = g_dnnl.scale;
        g_dnnl.args[3].arg = DNNL_ARG_SHIFT;
        g_dnnl.args[3].memory = g_dnnl.shift;
        g_dnnl.nargs = 4;
    }
}

static void dnnl_run(void *ctx, void *data)
{
    (void)ctx;
    (void)data;
    dnnl_check(dnnl_primitive_execute(g_dnnl.prim, g_dnnl.stream, g_dnnl.nargs, g_dnnl.args),
               "primitive_execute");
    dnnl_check(dnnl_stream_wait(g_dnnl.stream), "stream_wait");
}

/* dnnl_sgemm: row-major, like cblas_sgemm; its kernel is chosen per call for the
 * setting's ISA (the packed-B variants are not used: attn_matmul does not pack ahead). */
static void dnnl_matmul_run(void *ctx, void *data)
{
    const struct mmcase *c = (const struct mmcase *)data;
    (void)ctx;
    dnnl_check(dnnl_sgemm(c->ta == ATTN_TRANS ? 'T' : 'N', c->tb == ATTN_TRANS ? 'T' : 'N',
                          (dnnl_dim_t)c->m, (dnnl_dim_t)c->n, (dnnl_dim_t)c->k, 1.0f, c->a,
                          (dnnl_dim_t)c->lda, c->b, (dnnl_dim_t)c->ldb, 0.0f, c->c,
                          (dnnl_dim_t)c->ldc),
               "sgemm");
}

static void dnnl_release(void *ctx)
{
    (void)ctx;
    dnnl_primitive_destroy(g_dnnl.prim);
    dnnl_memory_destroy(g_dnnl.src);
    dnnl_memory_destroy(g_dnnl.dst);
    if (g_dnnl.scale)
        dnnl_memory_destroy(g_dnnl.scale);
    if (g_dnnl.shift)
        dnnl_memory_destroy(g_dnnl.shift);
}
#endif

/* ---------------------------------------------------------------------------------- */
/* The peers' entries, appended to each op's own in this order. An entry's name is
 * appended to the setting's ("openblas-avx2" + "-unfused"). */

static const struct {
    const char *op;
    struct impl impl;
} g_entries[] = {
#ifdef BENCH_DNNL
    {"softmax", {"", dnnl_run, NULL, "onednn", dnnl_prepare, dnnl_release, NULL, 0}},
    {"layernorm",
     {"", dnnl_run, &g_dnnl_layernorm_tag, "onednn", dnnl_prepare, dnnl_release, NULL, 0}},
    {"matmul", {"", dnnl_matmul_run, NULL, "onednn", NULL, NULL, NULL, 0}},
#endif
#ifdef HAVE_OPENBLAS
    {"matmul", {"", openblas_matmul_run, NULL, "openblas", NULL, NULL, NULL, 0}},
    {"matmul-2t", {"", openblas_matmul_run, NULL, "openblas", NULL, NULL, NULL, 0}},
    {"attention",
     {"-unfused", openblas_unfused_run, NULL, "openblas", NULL, NULL, unfused_att_extra, 0}},
    {"attention", {"-unfused-128", openblas_unfused128_run, NULL, "openblas", NULL, NULL,
                   unfused128_att_extra, 0}},
    {"decode",
     {"-unfused", openblas_unfused_run, NULL, "openblas", NULL, NULL, unfused_att_extra, 0}},
#endif
    {NULL, {NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0}}, /* the end */
};

void peers_attach(struct op *op)
{
    size_t i;
    op->nimpl = 0;
    for (i = 0; i < op->nown && op->nimpl < BENCH_MAX_IMPLS; i++)
        op->impls[op->nimpl++] = op->own[i];
    for (i = 0; g_entries[i].op && op->nimpl < BENCH_MAX_IMPLS; i++)
        if (strcmp(g_entries[i].op, op->name) == 0)
            op->impls[op->nimpl++] = g_entries[i].impl;
}

/* ---------------------------------------------------------------------------------- */
/* Child processes. */

struct prow g_prows[512];
size_t g_nprows;

/* One CSV row of a child, before aggregation over its processes. */
struct raw {
    int proc;
    char shape[48], impl[48], metric[24];
    double value;
};

static const char *self_exe(void)
{
    static const char *argv0 = "attn_bench";
    return access("/proc/self/exe", X_OK) == 0 ? "/proc/self/exe" : argv0;
}

/* Runs one child for peer p and op `opname`; appends its rows to raw (proc index proc).
 * Returns the exit status (0 = fine). */
static int run_child(const struct peer *p, const char *opname, int proc, struct raw **raw,
                     size_t *nraw, size_t *craw)
{
    char **envp, *argv[8], line[1024], threads_a[48], threads_b[48], threads_c[48];
    size_t nenv = 0, e, k, j;
    int fd[2], status = 0, argc = 0;
    pid_t pid;
    FILE *f;

    for (e = 0; environ[e]; e++)
        ;
    envp = (char **)malloc((e + 8) * sizeof *envp);
    if (!envp)
        die("malloc", "out of memory");
    for (e = 0; environ[e]; e++) {
        int drop = 0;
        for (k = 0; k < sizeof g_peer_env_vars / sizeof g_peer_env_vars[0]; k++) {
            size_t len = strlen(g_peer_env_vars[k]);
            if (strncmp(environ[e], g_peer_env_vars[k], len) == 0 && environ[e][len] == '=')
                drop = 1;
        }
        if (!drop)
            envp[nenv++] = environ[e];
    }
    for (k = 0; k < 3; k++)
        if (p->env[k])
            envp[nenv++] = (char *)p->env[k];
    snprintf(threads_a, sizeof threads_a, "OMP_NUM_THREADS=%d", p->threads);
    snprintf(threads_b, sizeof threads_b, "OPENBLAS_NUM_THREADS=%d", p->threads);
    snprintf(threads_c, sizeof threads_c, "GOTO_NUM_THREADS=%d", p->threads);
    envp[nenv++] = threads_a;
    envp[nenv++] = threads_b;
    envp[nenv++] = threads_c;
    envp[nenv] = NULL;

    argv[argc++] = (char *)"attn_bench";
    argv[argc++] = (char *)"--peer-child";
    argv[argc++] = (char *)p->name;
    argv[argc++] = (char *)"--op";
    argv[argc++] = (char *)opname;
    if (g_opt.quick)
        argv[argc++] = (char *)"--quick";
    argv[argc] = NULL;

    if (pipe(fd) != 0)
        die("pipe", "failed");
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0)
        die("fork", "failed");
    if (pid == 0) { /* only async-signal-safe calls until execve */
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execve(self_exe(), argv, envp);
        _exit(127);
    }
    close(fd[1]);
    free(envp);
    f = fdopen(fd[0], "r");
    if (!f)
        die("fdopen", "failed");
    while (fgets(line, sizeof line, f)) {
        char *field[6], *s = line;
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (strncmp(line, "#info,", 6) == 0) {
            add_note(line + 6);
            continue;
        }
        for (j = 0; j < 6; j++) {
            field[j] = s;
            s = j < 5 ? strchr(s, ',') : NULL;
            if (j < 5) {
                if (!s)
                    break;
                *s++ = '\0';
            }
        }
        if (j < 6 || strcmp(field[0], "op") == 0 || strcmp(field[0], opname) != 0)
            continue;
        if (*nraw == *craw) {
            *craw = *craw ? 2 * *craw : 256;
            *raw = (struct raw *)realloc(*raw, *craw * sizeof **raw);
            if (!*raw)
                die("realloc", "out of memory");
        }
        (*raw)[*nraw].proc = proc;
        copy_str((*raw)[*nraw].shape, sizeof (*raw)[0].shape, field[1]);
        copy_str((*raw)[*nraw].impl, sizeof (*raw)[0].impl, field[2]);
        copy_str((*raw)[*nraw].metric, sizeof (*raw)[0].metric, field[3]);
        (*raw)[*nraw].value = strtod(field[4], NULL);
        (*nraw)++;
    }
    fclose(f);
    while (waitpid(pid, &status, 0) < 0)
        ;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

void run_peers(const struct op *op)
{
    size_t pi, i, j;
    g_nprows = 0;
    for (pi = 0; pi < NPEERS; pi++) {
        const struct peer *p = &g_peers[pi];
        struct raw *raw = NULL;
        size_t nraw = 0, craw = 0;
        int proc;
        if (!group_compiled(p->group) || !peer_serves(p, op->name) || !peer_runs_here(p))
            continue;
        for (proc = 0; proc < p->procs; proc++) {
            int st = run_child(p, op->name, proc, &raw, &nraw, &craw);
            if (st != 0) {
                char msg[200];
                snprintf(msg, sizeof msg, "WARNING: peer child %s --op %s exited with status %d",
                         p->name, op->name, st);
                add_note(msg);
            }
        }
        /* Aggregate: one row per (shape, impl) with the op's metric. */
        for (i = 0; i < nraw; i++) {
            struct prow *r;
            double vals[16];
            int nv = 0, seen = 0;
            if (strcmp(raw[i].metric, op->metric) != 0)
                continue;
            for (j = 0; j < g_nprows; j++)
                if (strcmp(g_prows[j].shape, raw[i].shape) == 0 &&
                    strcmp(g_prows[j].impl, raw[i].impl) == 0)
                    seen = 1;
            if (seen)
                continue;
            if (g_nprows == sizeof g_prows / sizeof g_prows[0])
                break;
            r = &g_prows[g_nprows++];
            copy_str(r->shape, sizeof r->shape, raw[i].shape);
            copy_str(r->impl, sizeof r->impl, raw[i].impl);
            r->threads = p->threads;
            r->spread = 0.0;
            r->diff = 0.0;
            r->extra = -1.0;
            for (j = 0; j < nraw; j++) {
                if (strcmp(raw[j].shape, r->shape) != 0 || strcmp(raw[j].impl, r->impl) != 0)
                    continue;
                if (strcmp(raw[j].metric, op->metric) == 0 && nv < 16)
                    vals[nv++] = raw[j].value;
                else if (strcmp(raw[j].metric, "spread") == 0 && p->procs == 1)
                    r->spread = raw[j].value;
                else if (strcmp(raw[j].metric, "diff") == 0 && !(raw[j].value <= r->diff))
                    r->diff = raw[j].value;
                else if (strcmp(raw[j].metric, "extra_bytes") == 0)
                    r->extra = raw[j].value;
            }
            r->nproc = nv;
            r->value = median(vals, nv);
            if (nv > 1) /* across processes: (max - min) / median of the process medians */
                r->spread = (vals[nv - 1] - vals[0]) / r->value;
        }
        free(raw);
    }
}

/* ---------------------------------------------------------------------------------- */
/* The header's peers lines, and the child's side. */

void print_peers_header(void)
{
    size_t i;
    fprintf(g_info, "peers:    ");
#ifdef HAVE_OPENBLAS
    fprintf(g_info, "%s (cblas_sgemm; this process's config)\n", openblas_get_config());
#else
    fprintf(g_info, "OpenBLAS: not found at build time (libopenblas-dev)\n");
#endif
#ifdef BENCH_DNNL
    {
        const dnnl_version_t *v = dnnl_version();
        fprintf(g_info, "          oneDNN %d.%d.%d (hash %s, CPU runtime %s) (sgemm, softmax, "
                        "layer_normalization)\n",
                v->major, v->minor, v->patch, v->hash ? v->hash : "?",
                v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP"
                : v->cpu_runtime == DNNL_RUNTIME_SEQ ? "sequential"
                : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB"
                : v->cpu_runtime == DNNL_RUNTIME_THREADPOOL ? "threadpool"
                                                            : "other");
    }
#elif defined(HAVE_DNNL)
    fprintf(g_info, "          oneDNN: found, but only the 2.x C API is supported here\n");
#else
    fprintf(g_info, "          oneDNN: not found at build time (libdnnl-dev)\n");
#endif
    fprintf(g_info, "          child processes (thread count in OMP_NUM_THREADS, "
                    "OPENBLAS_NUM_THREADS):\n");
    for (i = 0; i < NPEERS; i++) {
        const struct peer *p = &g_peers[i];
        int k;
        if (!group_compiled(p->group) || !peer_runs_here(p))
            continue;
        fprintf(g_info, "            %-18s %d thread%s, %d process%s;", p->name, p->threads,
                p->threads > 1 ? "s" : "", p->procs, p->procs > 1 ? "es (median)" : "");
        for (k = 0; k < 3; k++)
            if (p->env[k])
                fprintf(g_info, " %s", p->env[k]);
        if (!p->env[0])
            fprintf(g_info, " unrestricted ISA");
        fprintf(g_info, "\n");
    }
}

const struct peer *peer_find(const char *name)
{
    size_t i;
    for (i = 0; i < NPEERS; i++)
        if (strcmp(name, g_peers[i].name) == 0)
            return &g_peers[i];
    return NULL;
}

/* Threads of this process (from /proc/self/status), 0 if unknown. */
static int process_threads(void)
{
    char line[256];
    int n = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Threads:", 8) == 0)
            n = atoi(line + 8);
    fclose(f);
    return n;
}

int peer_child_main(struct op *op)
{
    const struct peer *p = g_opt.child;
    if (!group_compiled(p->group)) {
        fprintf(stderr, "attn_bench: peer %s not compiled in\n", p->name);
        return 3;
    }
#ifdef HAVE_OPENBLAS
    if (strcmp(p->group, "openblas") == 0) {
        openblas_set_num_threads(p->threads);
        printf("#info,%s: OpenBLAS core %s, %d thread%s\n", p->name, openblas_get_corename(),
               openblas_get_num_threads(), openblas_get_num_threads() > 1 ? "s" : "");
    }
#endif
#ifdef BENCH_DNNL
    if (strcmp(p->group, "onednn") == 0)
        printf("#info,%s: oneDNN effective ISA %s, OMP_NUM_THREADS=%d\n", p->name,
               dnnl_isa_name(dnnl_get_effective_cpu_isa()), p->threads);
#endif
    printf("op,shape,impl,metric,value,ratio\n");
    op->bench(op);
    printf("#info,%s: %d thread%s in the process after its %s run\n", p->name,
           process_threads(), process_threads() == 1 ? "" : "s", op->name);
#ifdef BENCH_DNNL
    if (g_dnnl.engine) {
        dnnl_stream_destroy(g_dnnl.stream);
        dnnl_engine_destroy(g_dnnl.engine);
    }
#endif
    return 0;
}
