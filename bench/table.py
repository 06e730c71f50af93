#!/usr/bin/python3
"""table.py - the README's performance table from attn_bench --csv runs of two builds.

    python3 bench/table.py --avx2 a.csv [a2.csv ...] --avx512 b.csv [b2.csv ...]

One row per group of shapes; one column per build. A cell's figures all come from one run
(its peers and ratios measured beside it): of several runs of a build, the one whose attn
values are highest for that row (geometric mean), the machine being shared and noisy. Shares
are of the highest figure of their limit (FMA peak, bandwidth) among all the runs given.
"""
import argparse
import csv
import math
import sys

N4 = "n = 64 / 256 / 1024 / 4096"
IN, OUT = ["16384x64", "4096x256", "1024x1024", "256x4096"], \
    ["1048576x64", "262144x256", "65536x1024", "16384x4096"]
TR = ["NN", "NT", "TN", "TT"]
LAYOUTS = ["q1:kv{}:h8/8:d128", "q1:kv{}:h32/32:d128", "q1:kv{}:h32/8:d128",
           "q4:kv{}:h8/8:d128"]
LAY = "1 query x 8 heads, 1 x 32, 32 on 8 KV heads, 4 queries x 8"
BLAS = {"avx2": ["openblas-avx2"],
        "avx512": ["openblas", "openblas-avx2", "openblas-avx512"]}
DNN = {"avx2": ["onednn-avx2"], "avx512": ["onednn", "onednn-sgemm"]}
SGEMM = {"avx2": ["onednn-avx2"], "avx512": ["onednn-sgemm"]}
COMP = {"avx2": ["openblas-avx2-unfused", "openblas-avx2-unfused-128"],
        "avx512": ["openblas-unfused", "openblas-unfused-128", "openblas-avx512-unfused",
                   "openblas-avx512-unfused-128"]}


def load(path):
    """{(op, shape, impl, metric): value}, and {("limit", name): value} for the limits"""
    d = {}
    for r in csv.DictReader(open(path)):
        d[(r["op"], r["shape"], r["impl"], r["metric"])] = float(r["value"])
        if r["op"] == "limit":
            d[("limit", r["shape"])] = float(r["value"])
    return d


def num(v):
    if v >= 99.95:
        return "%.0f" % v
    return "%.1f" % v if v >= 9.995 else "%.2f" % v


def ratios(xs):
    """"a / b / cx" of the ratios given (None: left out)"""
    xs = ["%.2f" % x for x in xs if x is not None]
    return " / ".join(xs) + "x" if xs else None


def pct(x):
    return "%.0f%%" % (100 * x)


class Row:
    def __init__(self, label, op, shapes, shape_text, unit, peers=(), share=None, extra=None):
        self.label, self.op, self.shapes, self.shape_text = label, op, shapes, shape_text
        self.unit, self.peers, self.share, self.extra = unit, peers, share, extra

    def value(self, run, shape, impl="attn"):
        return run.get((self.op, shape, impl, self.unit))

    def score(self, run):
        vs = [self.value(run, s) for s in self.shapes]
        if any(v is None for v in vs):
            return -1.0
        return sum(math.log(v) for v in vs)

    def cell(self, runs, isa):
        run = max(runs, key=self.score)
        if self.score(run) < 0:
            return "-"
        vs = [self.value(run, s) for s in self.shapes]
        out = [" / ".join(num(v) for v in vs) + " " + self.unit]
        if self.share:
            lim = self.share(isa)
            sh = [run.get((self.op, s, "attn", "share_of_" + lim)) for s in self.shapes]
            if all(x is not None for x in sh):
                # against the highest figure of the limit among all runs (the machine's)
                sh = [x * limit(run, lim) / max(limit(r, lim) for r in ALL) for x in sh]
                out.append(" / ".join(pct(x) for x in sh) + " of " + LIMIT[self.share(isa)])
        for name, impls in self.peers:
            rs = []
            for s, v in zip(self.shapes, vs):
                ps = [self.value(run, s, i) for i in impls[isa]]
                ps = [p for p in ps if p]
                rs.append(v / max(ps) if ps else None)
            t = ratios(rs)
            if t:
                out.append(t + " " + name)
        if self.extra:
            t = self.extra(run, self, isa)
            if t:
                out.append(t)
        return "; ".join(out)


ALL = []  # every run: the limits are the machine's


def limit(run, name):
    return run[("limit", name)]


LIMIT = {"fma_peak": "the AVX2 FMA peak", "avx512_fma_peak": "the AVX-512 FMA peak",
         "read_256MiB": "read bandwidth", "copy_256MiB": "memcpy", "copy_4MiB": "memcpy (4 MiB)",
         "exp_L1": "the exp throughput"}


F32W = "the f32 weights' calls/s"


def fma(isa):
    return "avx512_fma_peak" if isa == "avx512" else "fma_peak"


def over(metrics, shapes, text):
    """the attn-<x>/<y> ratio rows of the same run (metrics[i] of shapes[i]; one metric: the
    same for every shape)"""
    if isinstance(metrics, str):
        metrics = [metrics] * len(shapes)

    def f(run, row, isa):
        rs = [run.get((row.op, s, m, "ratio")) for m, s in zip(metrics, shapes)]
        if any(r is None for r in rs):
            return None
        return ratios(rs) + " " + text
    return f


def rows():
    out = []
    for op, name in (("softmax", "softmax"), ("layernorm", "layernorm"), ("rmsnorm", "rmsnorm")):
        dnn = [("oneDNN", {"avx2": ["onednn-avx2"], "avx512": ["onednn", "onednn-avx2"]})]
        out.append(Row(name + ", 4 MiB", op, IN, N4, "elem/ns", dnn if op != "rmsnorm" else ()))
        out.append(Row(name + ", 256 MiB", op, OUT, N4, "elem/ns",
                       dnn if op != "rmsnorm" else (), share=lambda isa: "copy_256MiB"))
    for shp, text in (("512x512x512", "512^3"), ("2048x2048x2048", "2048^3"),
                      ("512x512x64", "512x512x64"), ("2048x2048x64", "2048x2048x64"),
                      ("512x64x512", "512x64x512"), ("2048x64x2048", "2048x64x2048")):
        out.append(Row("matmul" + ("" if "^" in text else ", attention shape"), "matmul",
                       [shp + ":" + t for t in TR], text + " NN / NT / TN / TT", "GFLOP/s",
                       [("OpenBLAS", BLAS), ("oneDNN sgemm", SGEMM)], share=fma))
    for mask in ("full", "causal"):
        out.append(Row("attention, d 64, 8 heads, " + mask, "attention",
                       ["1x8x%dx64:%s" % (L, mask) for L in
                        (128, 512, 2048, 8192)], "L = 128 / 512 / 2048 / 8192", "GFLOP/s",
                       [("the OpenBLAS composition", COMP)], share=fma))
    f16 = ["1x8x%dx64:%s:f16" % (L, m) for L in (512, 2048) for m in ("full", "causal")]
    out.append(Row("attention, K and V in f16", "attention", f16,
                   "L = 512 full / causal, 2048 full / causal", "GFLOP/s", share=fma,
                   extra=over("attn-f16/f32", f16, "the f32 cache's GFLOP/s")))
    for kv in (4096, 16384):
        for t in ("", ":f16", ":bf16", ":q8_0"):
            sh = [lay.format(kv) + t for lay in LAYOUTS]
            ex = over("attn-%s/f32" % t[1:], sh, "the f32 cache's calls/s") if t else None
            out.append(Row("decode, d 128, %d keys, K and V in %s" % (kv, t[1:] or "f32"),
                           "decode", sh, LAY, "GB/s",
                           [] if t else [("attn.h unfused", {"avx2": ["attn-unfused"],
                                                             "avx512": ["attn-unfused"]})],
                           share=lambda isa: "read_256MiB", extra=ex))
    for m in (1, 4):
        for lay, types in (("NT", ("f32", "f16", "bf16", "q8_0", "q4_0")),
                           ("NN", ("f32", "f16", "bf16"))):
            sh = ["%dx4096x4096:%s:%s" % (m, lay, t) for t in types]
            out.append(Row("matrix-vector, weights %s in %s" %
                           ("`[out, in]`" if lay == "NT" else "`[in, out]`", " / ".join(types)),
                           "matvec", sh, "%d x 4096 x 4096" % m, "GB/s",
                           share=lambda isa: "read_256MiB",
                           extra=over(["attn-%s/f32" % t for t in types[1:]], sh[1:], F32W)))
    sh = ["512x1024x1024:NT:" + t for t in ("f32", "f16", "bf16", "q8_0", "q4_0")]
    out.append(Row("linear, weights in f32 / f16 / bf16 / q8_0 / q4_0", "linear16", sh,
                   "512 x 1024 x 1024", "GFLOP/s", share=fma,
                   extra=over(["attn-%s/f32" % t for t in ("f16", "bf16", "q8_0", "q4_0")],
                              sh[1:], F32W)))
    sh = ["512x4096x4096:NT:" + t for t in ("f32", "q8_0", "q4_0")]
    out.append(Row("linear, weights in f32 / q8_0 / q4_0", "linear16", sh, "512 x 4096 x 4096",
                   "GFLOP/s", share=fma,
                   extra=over(["attn-q8_0/f32", "attn-q4_0/f32"], sh[1:], F32W)))
    for toks in ("512x1024x1024", "512x4096x4096", "1x4096x4096", "4x4096x4096"):
        sh = [toks + ":NT:q8_0", toks + ":NT:q4_0"]
        out.append(Row("`attn_matmul_int8`, weights q8_0 / q4_0", "int8", sh,
                       toks.replace("x", " x "), "GFLOP/s",
                       [("`attn_matmul_typed`", {"avx2": ["attn-dequant"],
                                                 "avx512": ["attn-dequant"]}),
                        ("f32 weights", {"avx2": ["attn-f32"], "avx512": ["attn-f32"]})]))
    for L, size in ((512, "4 MiB"), (16384, "256 MiB")):
        out.append(Row("RoPE, %s, 32 heads x 128" % size, "rope",
                       ["%dx32x128:adj" % L, "%dx32x128:half" % L],
                       "%d tokens, adjacent / halves" % L, "elem/ns",
                       [("the naive loop", {"avx2": ["naive"], "avx512": ["naive"]})],
                       share=lambda isa, L=L: "copy_4MiB" if L == 512 else "copy_256MiB"))
    for t in ("f32", "f16"):
        sh = ["1:glu2816:" + t, "1:ffn4224:" + t]
        out.append(Row("gated MLP (SwiGLU) / ungated, decode, %s weights" % t, "mlp-dec", sh,
                       "1 x 1024 -> 2816 (ungated 4224) -> 1024", "GB/s",
                       share=lambda isa: "read_256MiB"))
    sh = ["L512:" + t for t in ("f32", "f16", "q8_0", "q8_0-int8")]
    out.append(Row("decoder-only block prefill (d 1024, 16 heads on 4 KV heads, d_ff 2816), "
                   "weights and cache in f32 / f16 / q8_0 / q8_0 with `int8_products`", "block",
                   sh, "512 tokens", "GFLOP/s"))
    sh = ["kv2048:" + t for t in ("f32", "f16", "q8_0")]
    out.append(Row("decoder-only block decode, weights and cache in f32 / f16 / q8_0",
                   "block-dec", sh, "1 token after 2048", "tokens/s",
                   [("the naive loop", {"avx2": ["naive"], "avx512": ["naive"]})],
                   share=lambda isa: "read_256MiB"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--avx2", nargs="+", required=True)
    ap.add_argument("--avx512", nargs="+", required=True)
    a = ap.parse_args()
    runs = {"avx2": [load(p) for p in a.avx2], "avx512": [load(p) for p in a.avx512]}
    ALL.extend(runs["avx2"] + runs["avx512"])
    names = sorted({k[1] for r in ALL for k in r if k[0] == "limit" and len(k) == 2})
    sys.stderr.write("limits (highest of the runs): %s\n" % ", ".join(
        "%s %.1f" % (n, max(limit(r, n) for r in ALL)) for n in names))
    w = sys.stdout.write
    w("| operation | shape | AVX2 path (default build) | AVX-512 path (`-Dsimd=avx512`) |\n")
    w("|---|---|---|---|\n")
    for r in rows():
        w("| %s | %s | %s | %s |\n" % (r.label, r.shape_text, r.cell(runs["avx2"], "avx2"),
                                       r.cell(runs["avx512"], "avx512")))


if __name__ == "__main__":
    main()
