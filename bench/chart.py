#!/usr/bin/python3
"""chart.py - draw attn_bench's CSV with matplotlib (Debian: python3-matplotlib).

    build/bench/attn_bench --csv > bench.csv 2> header.txt
    python3 bench/chart.py bench.csv --header header.txt -o bench.png   # or .svg
    python3 bench/chart.py --selftest

One panel per operation: for each shape, a bar per other implementation (the naive loop,
the peers) gives attn's value over that one's on a log scale, up from 1 where attn is faster
(for matmul-2t, attn-2t's); above each shape, attn's value and its share of the limit that
binds it (share_of_<limit> rows). --header: the benchmark's stderr, for the title.
"""
import argparse
import csv
import io
import os
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

FAMILY = {"attn": "tab:blue", "openblas": "tab:green", "onednn": "tab:orange"}


def style(impl):
    """The same look for an implementation in every panel: colour by library (naive grey),
    lighter when restricted to AVX2, hatched for the unfused attention's 128-row blocks."""
    if impl == "naive":
        return {"color": "0.55"}
    rgb = to_rgb(FAMILY.get(impl.split("-")[0], "tab:purple"))
    if "-avx2" in impl:
        rgb = tuple(0.45 * c + 0.55 for c in rgb)
    return {"color": rgb, "hatch": "///" if impl.endswith("-128") else None,
            "edgecolor": "white", "linewidth": 0}


def load(f):
    """{op: {metric, primary, shapes, impls, value[(shape, impl)], share[(shape, impl)]}}"""
    ops = {}
    for r in csv.DictReader(f):
        m = r["metric"]
        if r["op"] == "limit" or m in ("", "extra_bytes", "bit_identical"):
            continue
        op = ops.setdefault(r["op"], {"primary": None, "shapes": [], "impls": [],
                                      "value": {}, "share": {}})
        key = (r["shape"], r["impl"])
        if m.startswith("ratio_vs_"):  # rows of the primary only
            op["primary"] = r["impl"]
        elif m.startswith("share_of_"):
            op["share"][key] = (float(r["value"]), m[len("share_of_"):])
        else:
            op["metric"] = m
            op["value"][key] = float(r["value"])
            for k, v in (("shapes", r["shape"]), ("impls", r["impl"])):
                if v not in op[k]:
                    op[k].append(v)
    for op in ops.values():
        if op["primary"] is None:
            op["primary"] = "attn" if "attn" in op["impls"] else op["impls"][-1]
    return ops


def panel(ax, name, op):
    prim, shapes, value = op["primary"], op["shapes"], op["value"]
    others = [i for i in op["impls"] if i != prim]
    width = min(0.8 / max(len(others), 1), 0.2)
    for j, impl in enumerate(others):
        xs, ys = [], []
        for x, s in enumerate(shapes):
            if value.get((s, prim)) and value.get((s, impl)):
                xs.append(x + width * (j + 0.5 - len(others) / 2))
                ys.append(value[(s, prim)] / value[(s, impl)] - 1.0)
        ax.bar(xs, ys, width, bottom=1.0, label="%s / %s" % (prim, impl), **style(impl))
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel("%s / other" % prim)
    ax.set_title("%s: bars = %s / other (above 1: %s faster); above each shape: %s in %s, "
                 "%% of its limit" % (name, prim, prim, prim, op["metric"]),
                 fontsize=10, loc="left")
    many = len(shapes) > 12
    ax.set_xticks(range(len(shapes)))
    ax.set_xticklabels(shapes, rotation=90 if many else 20, fontsize=7,
                       ha="center" if many else "right")
    mid, half = (len(shapes) - 1) / 2, max(len(shapes), 3) / 2  # a lone shape: not one block
    ax.set_xlim(mid - half, mid + half)
    bottom, top = ax.get_ylim()
    top = max(top, 2.0)
    ax.set_ylim(min(bottom, 0.5), top * 3.0)  # room for the text above the bars
    limits = {lim for (s, i), (v, lim) in op["share"].items() if i == prim}
    for x, s in enumerate(shapes):
        if (s, prim) not in value:
            continue
        text = "%.3g" % value[(s, prim)]
        if (s, prim) in op["share"]:
            share, lim = op["share"][(s, prim)]
            text += "\n%.0f%%%s" % (100 * share, " " + lim if len(limits) > 1 else "")
        ax.text(x, top * 1.15, text, ha="center", va="bottom", fontsize=6)
    if len(limits) == 1:
        ax.text(1.0, 1.01, "limit: " + limits.pop(), transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7)
    if others:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.005, 1.0))
    ax.grid(axis="y", which="both", alpha=0.3)


def draw(ops, out, title):
    names = [n for n in ops if ops[n]["shapes"]]
    fig, axes = plt.subplots(len(names), 1, squeeze=False, figsize=(15, 3.4 * len(names) + 0.6))
    for ax, name in zip(axes[:, 0], names):
        panel(ax, name, ops[name])
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.99))
    fig.savefig(out, dpi=110)
    plt.close(fig)


def header_title(path):
    """'attn_bench: <cpu>, <isa>, <compiler>' from the benchmark's header lines."""
    keep = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.partition(":")
            keep.setdefault(k, v.strip())
    return "attn_bench: " + ", ".join(keep[k] for k in ("cpu", "isa", "compiler") if k in keep)


SAMPLE = """op,shape,impl,metric,value,ratio
limit,exp_L1,machine,elem/ns,6.1,
softmax,16384x64,naive,elem/ns,0.217,1.0000
softmax,16384x64,attn,elem/ns,4.73,21.7600
softmax,16384x64,onednn,elem/ns,1.93,8.8800
softmax,1048576x64,attn,elem/ns,2.89,
softmax,1048576x64,onednn,elem/ns,1.84,
softmax,16384x64,attn,ratio_vs_onednn,2.4500,
softmax,16384x64,attn,share_of_exp,0.7750,
softmax,1048576x64,attn,share_of_copy_256MiB,0.8300,
rmsnorm,16384x64,attn,elem/ns,7.1,
matmul-2t,1024x1024x1024:NN,attn,GFLOP/s,96.0,1.0000
matmul-2t,1024x1024x1024:NN,attn-2t,GFLOP/s,180.0,1.8750
matmul-2t,1024x1024x1024:NN,attn-2t,bit_identical,1,
matmul-2t,1024x1024x1024:NN,attn-2t,ratio_vs_attn,1.8750,
"""


def selftest():
    """The sample drawn as PNG and SVG: the parse as expected, each file non-empty."""
    ops = load(io.StringIO(SAMPLE))
    ok = [ops[o]["primary"] for o in ("softmax", "rmsnorm", "matmul-2t")] == \
        ["attn", "attn", "attn-2t"] and ops["softmax"]["shapes"] == ["16384x64", "1048576x64"]
    with tempfile.TemporaryDirectory() as tmp:
        for ext in ("png", "svg"):
            out = os.path.join(tmp, "chart." + ext)
            draw(ops, out, "chart.py selftest")
            ok = ok and os.path.getsize(out) > 1000
            print("chart.py selftest: %s, %d bytes" % (ext, os.path.getsize(out)))
    print("chart.py selftest:", "passed" if ok else "FAILED")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="?", default="-", help="attn_bench --csv output (- = stdin)")
    ap.add_argument("-o", "--output", default="bench.png", help="the PNG or SVG to write")
    ap.add_argument("--header", help="attn_bench's stderr, for the title")
    ap.add_argument("--selftest", action="store_true", help="draw an embedded sample")
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    ops = load(sys.stdin if args.csv == "-" else open(args.csv))
    if not ops:
        sys.exit("chart.py: no benchmark rows in %s" % args.csv)
    draw(ops, args.output, header_title(args.header) if args.header else "attn_bench")
    print("wrote %s (%d panels)" % (args.output, len(ops)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
