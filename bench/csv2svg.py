#!/usr/bin/env python3
"""csv2svg.py - draw attn_bench's CSV as one SVG chart (python3 standard library only).

    ./build/bench/attn_bench --csv > bench.csv 2> header.txt
    python3 bench/csv2svg.py bench.csv --header header.txt -o bench.svg
    python3 bench/csv2svg.py --selftest

Input: the CSV on stdout of `attn_bench --csv` (file argument, or stdin when absent or
"-"), header line `op,shape,impl,metric,value,ratio`. Optional --header: the benchmark's
stderr (its header gives the title: cpu, ISA, compiler, build, timing, peers).

One panel per operation and shape family, each plotting throughput (y, the CSV's unit:
GFLOP/s or elem/ns) against size (x), one line with markers per implementation (the same
colour and marker for an implementation in every panel), and the binding machine limit
of the panel's rows as a dashed horizontal line labelled with its value:

  softmax, layernorm, rmsnorm  x = row length n (log scale); one panel per buffer size
                               (in cache / out of cache), each with its own limit
  matmul                       one panel per transpose combination (NN, NT, TN, TT);
                               x = the shapes m x n x k, ordered by m*n*k
  matmul-2t                    bars (one shape); 1-thread and 2-thread FMA peaks
  attention                    x = L (log scale); one panel each for full and causal
  any other op                 x = its shapes, in CSV order

The panels of one op share their y scale (linear, from 0), so in-cache and out-of-cache
compare directly; a panel with a single x value is drawn as bars.

The binding limit of a row is the <limit> of its `share_of_<limit>` row, in the panel's
unit: value / share (the row with the largest share, the most precise). When the CSV's
`limit` rows hold that limit (share_of_exp -> limit exp_L1, share_of_fma_peak_x2 ->
2 x fma_peak), the label shows the measured limit and the conversion (memcpy GB/s / 8 bytes
per element = elem/ns) and the line uses the exact converted value.

The written file is parsed back (xml.etree) and checked (one <g class="panel"> per panel,
each with its series and limit lines); a failure exits with status 2 (bad input or an
unwritable file: 1). --selftest converts an embedded sample of a real run (and variants:
no limit rows, one op, bad input) and checks the panels, the limits and the checker.
"""

import argparse
import csv
import io
import math
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

CSV_HEADER = ["op", "shape", "impl", "metric", "value", "ratio"]
SVG_NS = "http://www.w3.org/2000/svg"

# ---------------------------------------------------------------------------------------
# Styling: one colour and marker per implementation, the same in every panel.

STYLES = {
    # ours (attn.h): blues and purples, drawn thicker
    "attn": ("#1f77b4", "circle"),
    "attn-2t": ("#17becf", "diamond"),
    "attn-unfused": ("#9467bd", "square"),
    "attn-unfused-128": ("#e377c2", "triangle"),
    # the naive scalar loop
    "naive": ("#7f7f7f", "cross"),
    # OpenBLAS: oranges, reds, browns
    "openblas": ("#ff7f0e", "square"),
    "openblas-avx2": ("#d62728", "triangle"),
    "openblas-2t": ("#bcbd22", "square"),
    "openblas-avx2-2t": ("#8c564b", "triangle"),
    "openblas-unfused": ("#ff7f0e", "square"),
    "openblas-unfused-128": ("#d62728", "triangle"),
    # oneDNN: greens
    "onednn": ("#2ca02c", "square"),
    "onednn-avx2": ("#0b5d1e", "triangle"),
}
# openblas-unfused(-128) never share a panel with openblas(-avx2): the same hue tells
# "OpenBLAS sgemm" in the matmul and the attention panels; the name is in each legend.
SPARE_COLOURS = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
                 "#e6550d", "#31a354", "#756bb1", "#636363"]
SPARE_MARKERS = ["circle", "square", "triangle", "diamond", "tridown", "cross"]

FONT = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif"

LIMIT_NAMES = {
    "fma_peak": "FMA peak",
    "avx512_fma_peak": "AVX-512 FMA peak",
    "read_256MiB": "read bandwidth (256 MiB)",
    "read_L2_512KiB": "read bandwidth (512 KiB, L2)",
    "copy_256MiB": "memcpy (256 MiB)",
    "copy_4MiB": "memcpy (4 MiB)",
    "exp_L1": "vector exp (L1)",
}

OP_NOTES = {
    "softmax": "elements per ns (GB/s of input = 4 x value)",
    "layernorm": "elements per ns (GB/s of input = 4 x value), gamma and beta",
    "rmsnorm": "elements per ns (GB/s of input = 4 x value), gamma",
    "matmul": "C = op(A) op(B); 2mnk / time, 1 thread",
    "matmul-2t": "2mnk / time; attn on 1 thread, the others on 2 threads",
    "attention": "4 L\u00b2 d per head (half when causal) / time, 1 thread",
}

TRANS_TITLES = {
    "NN": "NN",
    "NT": "NT (B transposed)",
    "TN": "TN (A transposed)",
    "TT": "TT (A and B transposed)",
}


class Failure(Exception):
    pass


def fmt(v, digits=3):
    """A value for a label: 3 significant digits, no exponent for ordinary sizes."""
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 10 ** digits:
        return "%.0f" % v
    decimals = max(0, digits - 1 - int(math.floor(math.log10(a))))
    s = "%.*f" % (decimals, v)
    return s


def tick_fmt(v, step):
    decimals = max(0, -int(math.floor(math.log10(step) + 1e-9)))
    if abs(step * 10 ** decimals - round(step * 10 ** decimals)) > 1e-6:
        decimals += 1
    return "%.*f" % (decimals, v)


def size_text(nbytes):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return "%s %s" % (fmt(nbytes / scale, 3).rstrip("0").rstrip(".") if
                              nbytes % scale else str(nbytes // scale), unit)
    return "%d B" % nbytes


# ---------------------------------------------------------------------------------------
# Input

class Data:
    def __init__(self):
        self.limits = {}      # name -> (value, unit), from the `limit` rows
        self.values = {}      # (op, shape, impl) -> value, throughput rows
        self.units = {}       # op -> unit of its throughput rows
        self.shares = {}      # (op, shape, impl) -> {limit name: share}
        self.ops = []         # ops in CSV order
        self.shapes = {}      # op -> shapes in CSV order
        self.impls = {}       # op -> impls in CSV order
        self.all_impls = []   # every impl, CSV order


def parse_csv(text):
    rows = list(csv.reader(io.StringIO(text)))
    while rows and not rows[0]:
        rows.pop(0)
    if not rows:
        raise Failure("empty input: expected the CSV of attn_bench --csv")
    if [c.strip() for c in rows[0]] != CSV_HEADER:
        raise Failure("first line is %r, expected %r" % (",".join(rows[0]), ",".join(CSV_HEADER)))
    d = Data()
    for lineno, r in enumerate(rows[1:], start=2):
        if not r or all(not c.strip() for c in r):
            continue
        if len(r) != len(CSV_HEADER):
            raise Failure("line %d: %d fields, expected %d" % (lineno, len(r), len(CSV_HEADER)))
        op, shape, impl, metric, value = (c.strip() for c in r[:5])
        try:
            v = float(value)
        except ValueError:
            raise Failure("line %d: value %r is not a number" % (lineno, value))
        if op == "limit":
            d.limits[shape] = (v, metric)
            continue
        key = (op, shape, impl)
        if metric.startswith("share_of_"):
            d.shares.setdefault(key, {})[metric[len("share_of_"):]] = v
            continue
        if "/" not in metric:  # ratio_vs_*, extra_bytes, bit_identical, ...
            continue
        if not math.isfinite(v) or v <= 0:
            continue
        if op not in d.shapes:
            d.ops.append(op)
            d.shapes[op] = []
            d.impls[op] = []
        if d.units.setdefault(op, metric) != metric:
            raise Failure("line %d: op %s has rows in %s and %s" % (lineno, op, d.units[op], metric))
        if shape not in d.shapes[op]:
            d.shapes[op].append(shape)
        if impl not in d.impls[op]:
            d.impls[op].append(impl)
        if impl not in d.all_impls:
            d.all_impls.append(impl)
        d.values[key] = v
    if not d.values:
        raise Failure("no throughput rows (metric GFLOP/s, elem/ns, ...) in the CSV")
    return d


def parse_header(text):
    """The benchmark's stderr header: 'key: value' lines, indented continuations."""
    info, key = {}, None
    for line in text.splitlines():
        if not line.strip():
            if len(info) > 1:
                break
            continue
        m = re.match(r"([a-z][a-z0-9_-]*):\s+(.*)$", line)
        if m and not line[0].isspace():
            key = m.group(1)
            info.setdefault(key, []).append(m.group(2).strip())
        elif line[0].isspace() and key:
            info[key].append(line.rstrip())
        elif "title" not in info:
            info["title"] = [line.strip()]
    return info


# ---------------------------------------------------------------------------------------
# Panels

class Panel:
    def __init__(self, op, key, title, xlabel, unit):
        self.op, self.key, self.title, self.xlabel, self.unit = op, key, title, xlabel, unit
        self.subtitle = OP_NOTES.get(op, "")
        self.xkind = "cat"            # "log", "lin" or "cat"; "bar" when one x only
        self.xs = []                  # x values (numbers or category labels), sorted
        self.series = {}              # impl -> {x: (value, shape)}
        self.impls = []
        self.limits = []              # (value in unit, label, name)
        self.shapes = []
        self.new_row = False
        self.ymax = None

    @property
    def id(self):
        return re.sub(r"[^A-Za-z0-9_-]+", "-", "%s-%s" % (self.op, self.key)).strip("-")


ROW_RE = re.compile(r"^(\d+)x(\d+)$")
MM_RE = re.compile(r"^(\d+)x(\d+)x(\d+):([NT]{2})$")
ATT_RE = re.compile(r"^(\d+)x(\d+)x(\d+)x(\d+):(\w+)$")


def classify(shapes):
    for kind, rx in (("row", ROW_RE), ("mm", MM_RE), ("att", ATT_RE)):
        if all(rx.match(s) for s in shapes):
            return kind
    return "other"


def mm_label(m, n, k):
    if m == n == k:
        return "%d\u00b3" % m
    return "%d\u00d7%d\u00d7%d" % (m, n, k)


def build_panels(d):
    panels = []
    for op in d.ops:
        shapes, unit = d.shapes[op], d.units[op]
        kind = classify(shapes)
        groups = {}   # key -> [(sort key, x, shape)]
        titles = {}
        if kind == "row":
            for s in shapes:
                rows, n = map(int, ROW_RE.match(s).groups())
                groups.setdefault(rows * n, []).append((n, n, s))
            foot = sorted(groups)
            for i, f in enumerate(foot):
                where = ""
                if len(foot) > 1 and i == 0:
                    where = ", in cache"
                elif len(foot) > 1 and i == len(foot) - 1:
                    where = ", out of cache"
                titles[f] = ("%s \u2014 rows \u00d7 n = %s per buffer%s" %
                             (op, size_text(4 * f), where),
                             "row length n (floats), log scale; rows = %s / (4 n)" %
                             size_text(4 * f))
            order = foot
        elif kind == "mm":
            for s in shapes:
                m, n, k, t = MM_RE.match(s).groups()
                m, n, k = int(m), int(n), int(k)
                groups.setdefault(t, []).append(((m * n * k, m, n, k), mm_label(m, n, k), s))
            order = [t for t in ("NN", "NT", "TN", "TT") if t in groups]
            for t in order:
                titles[t] = ("%s %s" % (op, TRANS_TITLES[t]),
                             "shape m \u00d7 n \u00d7 k, ordered by m\u00b7n\u00b7k")
        elif kind == "att":
            for s in shapes:
                b, h, L, dd, var = ATT_RE.match(s).groups()
                key = (var, int(b), int(h), int(dd))
                groups.setdefault(key, []).append((int(L), int(L), s))
            order = sorted(groups, key=lambda k: ({"full": 0, "causal": 1}.get(k[0], 2), k))
            for key in order:
                var, b, h, dd = key
                vt = {"full": "full (non-causal)", "causal": "causal"}.get(var, var)
                titles[key] = ("%s, %s \u2014 batch %d, %d heads, d = %d" % (op, vt, b, h, dd),
                               "sequence length L = Lq = Lk, log scale")
        else:
            groups[""] = [(i, s, s) for i, s in enumerate(shapes)]
            order = [""]
            titles[""] = (op, "shape")
        for gi, key in enumerate(order):
            title, xlabel = titles[key]
            if kind == "row":
                pid = size_text(4 * key).replace(" ", "")
            else:
                pid = "-".join(map(str, key)) if isinstance(key, tuple) else str(key)
            p = Panel(op, pid, title, xlabel, unit)
            p.new_row = gi == 0
            pts = sorted(groups[key], key=lambda t: t[0])
            xs = []
            for _, x, s in pts:
                if x not in xs:
                    xs.append(x)
                p.shapes.append(s)
                for impl in d.impls[op]:
                    v = d.values.get((op, s, impl))
                    if v is not None:
                        p.series.setdefault(impl, {})[x] = (v, s)
            p.xs = xs
            p.impls = [i for i in d.impls[op] if i in p.series]
            numeric = all(isinstance(x, (int, float)) for x in xs)
            if len(xs) == 1:
                p.xkind = "bar"
                if kind == "mm":
                    p.xlabel = "shape m \u00d7 n \u00d7 k"
            elif numeric and kind != "other":
                p.xkind = "log" if max(xs) / min(xs) >= 4 else "lin"
                if p.xkind == "lin":
                    p.xlabel = p.xlabel.replace(", log scale", "")
            else:
                p.xkind = "cat"
            p.limits = panel_limits(d, p)
            panels.append(p)
    # one y scale per op: its panels compare directly
    for op in d.ops:
        ps = [p for p in panels if p.op == op]
        top = 0.0
        for p in ps:
            for s in p.series.values():
                top = max(top, max(v for v, _ in s.values()))
            for v, _, _ in p.limits:
                top = max(top, v)
        for p in ps:
            p.ymax = top
    return panels


def resolve_limit(d, name):
    """The `limit` row behind share_of_<name>: (value, unit, pretty name, multiplier)."""
    mult = 1
    m = re.match(r"^(.*)_x(\d+)$", name)
    base = name
    if m and any(k == m.group(1) or k.startswith(m.group(1) + "_") for k in d.limits):
        base, mult = m.group(1), int(m.group(2))
    key = None
    if base in d.limits:
        key = base
    else:
        cands = [k for k in d.limits if k.startswith(base + "_")]
        if len(cands) == 1:
            key = cands[0]
    if key is None:
        return None
    v, unit = d.limits[key]
    return v, unit, LIMIT_NAMES.get(key, key), mult


def panel_limits(d, p):
    best = {}  # limit name -> (share, value / share)
    for impl, pts in p.series.items():
        for x, (v, s) in pts.items():
            for name, share in d.shares.get((p.op, s, impl), {}).items():
                if share > 0 and (name not in best or share > best[name][0]):
                    best[name] = (share, v / share)
    out = []
    for name, (_, derived) in best.items():
        value, label = derived, "%s %s %s" % (name, fmt(derived), p.unit)
        raw = resolve_limit(d, name)
        if raw:
            rv, runit, pretty, mult = raw
            factor = rv * mult / derived  # raw units per panel unit (8 B/elem for memcpy)
            nice = round(factor)
            if nice >= 1 and abs(factor - nice) <= 0.02 * factor:
                value = rv * mult / nice
                head = "%s%s" % ("%d \u00d7 " % mult if mult > 1 else "", pretty)
                if nice == 1 and runit == p.unit:
                    label = "%s %s %s" % (head, fmt(value), p.unit)
                else:
                    per = " B/elem" if runit == "GB/s" and p.unit == "elem/ns" else ""
                    label = "%s %s %s \u00f7 %d%s = %s %s" % (head, fmt(rv * mult), runit, nice,
                                                             per, fmt(value), p.unit)
        out.append((value, label, name))
    out.sort()
    return out


# ---------------------------------------------------------------------------------------
# SVG

PANEL_W, PANEL_H = 784, 430
GAP = 10
COLS = 2
PLOT_L, PLOT_T, LEGEND_W, PLOT_B = 70, 60, 198, 100


def style_of(impl, spare):
    if impl in STYLES:
        return STYLES[impl]
    if impl not in spare:
        i = len(spare)
        spare[impl] = (SPARE_COLOURS[i % len(SPARE_COLOURS)], SPARE_MARKERS[i % len(SPARE_MARKERS)])
    return spare[impl]


def marker(shape, x, y, colour, r=4.5, tip=None):
    t = "<title>%s</title>" % escape(tip) if tip else ""
    common = 'fill="%s" stroke="white" stroke-width="1"' % colour
    if shape == "circle":
        el = '<circle cx="%.1f" cy="%.1f" r="%.1f" %s>%s</circle>' % (x, y, r, common, t)
    elif shape == "square":
        s = r * 0.9
        el = '<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" %s>%s</rect>' % (
            x - s, y - s, 2 * s, 2 * s, common, t)
    elif shape in ("triangle", "tridown"):
        s = r * 1.25
        sg = 1 if shape == "triangle" else -1
        el = '<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fZ" %s>%s</path>' % (
            x, y - sg * s, x + s, y + sg * s * 0.75, x - s, y + sg * s * 0.75, common, t)
    elif shape == "diamond":
        s = r * 1.3
        el = '<path d="M%.1f %.1fL%.1f %.1fL%.1f %.1fL%.1f %.1fZ" %s>%s</path>' % (
            x, y - s, x + s, y, x, y + s, x - s, y, common, t)
    else:  # cross
        s = r
        el = ('<path d="M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f" stroke="%s" '
              'stroke-width="2.2" fill="none">%s</path>') % (
            x - s, y - s, x + s, y + s, x - s, y + s, x + s, y - s, colour, t)
    return '<g class="marker">%s</g>' % el


def overlap(a, b):
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def nice_axis(vmax, target=6):
    if vmax <= 0:
        vmax = 1.0
    raw = vmax / target
    mag = 10 ** math.floor(math.log10(raw))
    step = mag * 10
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag * (1 + 1e-9):
            step = m * mag
            break
    top = math.ceil(vmax / step - 1e-9) * step
    return step, top


def text(x, y, s, size=12, anchor="start", weight=None, fill="#222", extra=""):
    w = ' font-weight="%s"' % weight if weight else ""
    return '<text x="%.1f" y="%.1f" font-size="%g" text-anchor="%s" fill="%s"%s%s>%s</text>' % (
        x, y, size, anchor, fill, w, extra, escape(s))


def render_panel(p, ox, oy, spare):
    out = ['<g class="panel" id="panel-%s" data-op="%s" data-series="%d" data-limits="%d" '
           'transform="translate(%d,%d)">' % (escape(p.id), escape(p.op), len(p.impls),
                                              len(p.limits), ox, oy)]
    out.append('<rect class="frame" x="0.5" y="0.5" width="%d" height="%d" rx="6" fill="white" '
               'stroke="#c8c8c8"/>' % (PANEL_W - 1, PANEL_H - 1))
    out.append(text(14, 24, p.title, 15, weight="bold", extra=' class="panel-title"'))
    if p.subtitle:
        out.append(text(14, 42, p.subtitle, 11.5, fill="#555"))
    x0, y0 = PLOT_L, PLOT_T
    x1 = PANEL_W - LEGEND_W
    n = len(p.xs)
    # long category labels are drawn slanted, below the axis: less room for the plot
    rotate = p.xkind == "cat" and max(len(str(x)) for x in p.xs) * 7.0 > (x1 - x0) / n
    y1 = PANEL_H - (PLOT_B if rotate else 58)
    # y axis: linear from 0, room above the highest line or limit for its label
    step, top = nice_axis(p.ymax * 1.12)

    def Y(v):
        return y1 - (y1 - y0) * v / top

    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#fbfbfb" stroke="none"/>' % (
        x0, y0, x1 - x0, y1 - y0))
    i = 0
    while i * step <= top * (1 + 1e-9):
        v = i * step
        yy = Y(v)
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1"/>' % (
            x0, yy, x1, yy, "#e3e3e3" if i else "#888"))
        out.append(text(x0 - 6, yy + 4, tick_fmt(v, step), 11, "end", fill="#444"))
        i += 1
    out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>' % (x0, y0, x0, y1))
    out.append(text(0, 0, "throughput [%s]" % p.unit, 12, "middle", fill="#333",
                    extra=' transform="translate(%d,%.1f) rotate(-90)"' % (18, (y0 + y1) / 2)))
    # x axis
    pad = 28
    if p.xkind in ("log", "lin"):
        f = math.log if p.xkind == "log" else (lambda v: v)
        lo, hi = f(min(p.xs)), f(max(p.xs))

        def X(x):
            return x0 + pad + (x1 - x0 - 2 * pad) * (f(x) - lo) / (hi - lo)
    else:
        def X(x):
            return x0 + (x1 - x0) * (p.xs.index(x) + 0.5) / n
    for x in p.xs:
        xx = X(x)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888"/>' % (xx, y1, xx, y1 + 5))
        if p.xkind in ("log", "lin"):
            out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eeeeee"/>' % (
                xx, y0, xx, y1))
        if rotate:
            out.append(text(0, 0, str(x), 11, "end", fill="#333",
                            extra=' transform="translate(%.1f,%d) rotate(-35)"' % (xx + 4, y1 + 16)))
        else:
            out.append(text(xx, y1 + 18, str(x), 11, "middle", fill="#333"))
    out.append(text((x0 + x1) / 2, PANEL_H - 14, p.xlabel, 12, "middle", fill="#333"))
    # data; obstacles (x, y, w, h) for the placement of the limit labels
    ours = lambda impl: impl.startswith("attn")
    obstacles = []
    if p.xkind == "bar":
        k = len(p.impls)
        gw = (x1 - x0) * 0.8
        bw = gw / k
        for j, impl in enumerate(p.impls):
            colour, _ = style_of(impl, spare)
            for x, (v, s) in p.series[impl].items():
                bx = X(x) - gw / 2 + j * bw
                out.append('<g class="series" data-impl="%s"><rect x="%.1f" y="%.1f" width="%.1f" '
                           'height="%.1f" fill="%s"><title>%s</title></rect></g>' % (
                               escape(impl), bx + 3, Y(v), bw - 6, y1 - Y(v), colour,
                               escape("%s %s: %s %s" % (impl, s, fmt(v, 4), p.unit))))
                ly = Y(v) - 5  # the value above the bar, or inside when a limit line is there
                if any(-4 <= ly - Y(w) <= 14 for w, _, _ in p.limits) and y1 - Y(v) > 24:
                    out.append(text(bx + bw / 2, Y(v) + 15, fmt(v), 11, "middle", fill="white",
                                    weight="bold"))
                else:
                    out.append(text(bx + bw / 2, ly, fmt(v), 11, "middle", fill="#222"))
                obstacles.append((bx + 3, Y(v) - 18, bw - 6, y1 - Y(v) + 18))
    else:
        for impl in p.impls:
            colour, mk = style_of(impl, spare)
            pts = p.series[impl]
            width = 2.8 if ours(impl) else 1.8
            seg, segs = [], []
            for x in p.xs:  # a gap in the x values breaks the line
                if x in pts:
                    seg.append((X(x), Y(pts[x][0])))
                elif seg:
                    segs.append(seg)
                    seg = []
            if seg:
                segs.append(seg)
            g = ['<g class="series" data-impl="%s">' % escape(impl)]
            for sg in segs:
                if len(sg) > 1:
                    g.append('<polyline fill="none" stroke="%s" stroke-width="%.1f" '
                             'stroke-linejoin="round" points="%s"/>' % (
                                 colour, width, " ".join("%.1f,%.1f" % q for q in sg)))
                for (ax, ay), (bx, by) in zip(sg, sg[1:]):
                    steps = max(1, int(abs(bx - ax) / 3))
                    for t in range(steps + 1):
                        obstacles.append((ax + (bx - ax) * t / steps - 1,
                                          ay + (by - ay) * t / steps - 1, 2, 2))
            for x in p.xs:
                if x in pts:
                    v, s = pts[x]
                    g.append(marker(mk, X(x), Y(v), colour, 5 if ours(impl) else 4.5,
                                    "%s %s: %s %s" % (impl, s, fmt(v, 4), p.unit)))
                    obstacles.append((X(x) - 6, Y(v) - 6, 12, 12))
            g.append("</g>")
            out.append("".join(g))
    # machine limits: dashed lines, each labelled above or below it, at the right or the
    # left end, wherever the label covers the fewest data points and other labels
    for v, _, name in p.limits:
        out.append('<line class="limit" data-limit="%s" x1="%d" y1="%.1f" x2="%d" y2="%.1f" '
                   'stroke="#222" stroke-width="1.4" stroke-dasharray="7,4"/>' % (
                       escape(name), x0, Y(v), x1, Y(v)))
    placed = []
    for v, label, name in sorted(p.limits, key=lambda t: -t[0]):
        yy = Y(v)
        label = "limit: " + label
        tw = len(label) * 6.4  # DejaVu Sans at 11.5 px: ~6.1 px a character
        others = [(x0, Y(w) - 1, x1 - x0, 2) for w, _, n2 in p.limits if n2 != name]
        best = None
        cands = []
        for shift in range(0, int(y1 - y0), 6):  # farther from the line: less preferred
            for anchor in (1, 0):
                cands.append((anchor, yy - 18 - shift, shift))
                cands.append((anchor, yy + 4 + shift, shift + 3))
        for anchor, by, dist in cands:
            bx = x1 - 6 - tw if anchor else x0 + 6
            box = (bx - 2, by - 1, tw + 4, 15)
            score = 10 * sum(1 for o in obstacles + others if overlap(box, o))
            score += 1000 * sum(1 for o in placed if overlap(box, o))
            if by < y0 + 2 or by + 14 > y1 - 2:
                score += 100000
            score += dist / 6.0 + (0 if anchor else 0.5)
            if best is None or score < best[0]:
                best = (score, bx, by, box)
        _, bx, by, box = best
        placed.append(box)
        right = bx > x0 + 10
        tx = x1 - 6 if right else x0 + 6  # the anchored end is exact, the other estimated
        if by + 14 < yy - 6 or by > yy + 6:  # away from its line: a leader to the line
            lx_ = tx - 3 if right else tx + 3
            out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#666" '
                       'stroke-width="1"/>' % (lx_, by + 14 if by < yy else by, lx_, yy))
        out.append(text(tx, by + 11, label, 11.5, "end" if right else "start", fill="#111",
                        extra=' class="limit-label" stroke="white" stroke-width="3.5" '
                              'paint-order="stroke" stroke-linejoin="round"'))
    # legend
    lx, ly = x1 + 14, y0 + 6
    out.append(text(lx, ly + 4, "implementation", 12, weight="bold", fill="#333"))
    ly += 22
    for impl in p.impls:
        colour, mk = style_of(impl, spare)
        if p.xkind == "bar":
            out.append('<rect x="%d" y="%d" width="22" height="10" fill="%s"/>' % (lx, ly - 5, colour))
        else:
            out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="%.1f"/>' % (
                lx, ly, lx + 26, ly, colour, 2.8 if ours(impl) else 1.8))
            out.append(marker(mk, lx + 13, ly, colour))
        out.append(text(lx + 32, ly + 4, impl, 11.5, fill="#222",
                        weight="bold" if impl == "attn" else None))
        ly += 20
    if p.limits:
        ly += 4
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#222" stroke-width="1.4" '
                   'stroke-dasharray="7,4"/>' % (lx, ly, lx + 26, ly))
        out.append(text(lx + 32, ly + 4, "machine limit", 11.5, fill="#222"))
    out.append("</g>")
    return "\n".join(out)


def wrap(items, width_chars, sep=" \u00b7 "):
    lines, cur = [], ""
    for it in items:
        cand = it if not cur else cur + sep + it
        if cur and len(cand) > width_chars:
            lines.append(cur)
            cur = it
        else:
            cur = cand
    if cur:
        lines.append(cur)
    return lines


def title_lines(d, info):
    title = (info.get("title") or ["attn.h benchmark"])[0]
    machine = []
    for key, prefix in (("cpu", ""), ("isa", "ISA "), ("exp", "exp: "), ("compiler", "")):
        if info.get(key):
            machine.append(prefix + info[key][0])
    if machine:
        title += " \u2014 " + ", ".join(machine)
    lines = []
    for key in ("build", "timing"):
        if info.get(key):
            lines += wrap(["%s: %s" % (key, info[key][0])], 185)
    peers, settings = [], []
    for line in info.get("peers", []):
        s = line.strip()
        m = re.match(r"^(\S+)\s{2,}(.*)$", s)
        if s.startswith("child processes"):
            continue
        if m and line.startswith("            "):
            settings.append("%s: %s" % (m.group(1), m.group(2)))
        else:
            peers.append(s.split(" (")[0])
    if peers:
        lines.append("peers: " + ", ".join(peers))
    lim = []
    for name in ("fma_peak", "avx512_fma_peak", "read_256MiB", "read_L2_512KiB", "copy_256MiB",
                 "copy_4MiB", "exp_L1"):
        if name in d.limits:
            v, unit = d.limits[name]
            lim.append("%s %s %s" % (LIMIT_NAMES[name], fmt(v), unit))
    for name, (v, unit) in d.limits.items():
        if name not in LIMIT_NAMES:
            lim.append("%s %s %s" % (name, fmt(v), unit))
    if lim:
        lim[0] = "machine limits (measured in the same run): " + lim[0]
        lines += wrap(lim, 185, ", ")
    return title, lines, settings


def render(d, panels, info):
    title, sub, settings = title_lines(d, info)
    width = COLS * PANEL_W + (COLS + 1) * GAP
    head = 40 + 18 * len(sub) + 10
    # layout: an op starts a new row of the grid
    pos, col, row = [], COLS, -1
    for p in panels:
        if p.new_row or col >= COLS:
            row += 1
            col = 0
        pos.append((GAP + col * (PANEL_W + GAP), head + row * (PANEL_H + GAP)))
        col += 1
    foot_lines = []
    if settings:
        foot_lines = wrap(["peer settings: " + settings[0]] + settings[1:], 210)
    foot_lines += ["attn* = attn.h (this library, thicker lines); naive = scalar loop "
                   "(auto-vectorization off); dashed = the machine limit binding the panel's "
                   "rows (value / share in the CSV's share_of_<limit> rows). Hover a marker "
                   "for its value."]
    height = head + (row + 1) * (PANEL_H + GAP) + 18 * len(foot_lines) + 12
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="%s" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">' % (
               SVG_NS, width, height, width, height, FONT),
           '<title>%s</title>' % escape(title),
           '<rect width="100%" height="100%" fill="#f2f2f2"/>',
           text(GAP + 2, 28, title, 19, weight="bold", fill="#111")]
    for i, s in enumerate(sub):
        out.append(text(GAP + 2, 50 + 18 * i, s, 12.5, fill="#444"))
    spare = {}
    for impl in d.all_impls:  # spare colours in CSV order: the same in every panel
        style_of(impl, spare)
    for p, (x, y) in zip(panels, pos):
        out.append(render_panel(p, x, y, spare))
    fy = head + (row + 1) * (PANEL_H + GAP) + 8
    for i, s in enumerate(foot_lines):
        out.append(text(GAP + 2, fy + 18 * i, s, 11.5, fill="#555"))
    out.append("</svg>")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------
# Checks

def validate(svg_text, panels):
    """Parse the SVG back and check it holds the expected panels, series and limits."""
    errors = []
    try:
        root = ET.fromstring(svg_text)
    except ET.ParseError as e:
        return ["not well-formed XML: %s" % e]
    if root.tag != "{%s}svg" % SVG_NS:
        errors.append("root element is %s, expected svg" % root.tag)
    got = [g for g in root.iter("{%s}g" % SVG_NS) if g.get("class") == "panel"]
    if len(got) != len(panels):
        errors.append("%d panels in the SVG, expected %d" % (len(got), len(panels)))
    for g, p in zip(got, panels):
        if g.get("id") != "panel-" + p.id:
            errors.append("panel %s where %s was expected" % (g.get("id"), p.id))
            continue
        series = [e for e in g.iter("{%s}g" % SVG_NS) if e.get("class") == "series"]
        impls = [e.get("data-impl") for e in series]
        if impls != p.impls or not impls:
            errors.append("panel %s: series %s, expected %s" % (p.id, impls, p.impls))
        for e in series:
            shapes = [c for c in e if c.tag in ("{%s}polyline" % SVG_NS, "{%s}rect" % SVG_NS,
                                                 "{%s}g" % SVG_NS)]
            if not shapes:
                errors.append("panel %s: series %s draws nothing" % (p.id, e.get("data-impl")))
        lines = [e for e in g.iter("{%s}line" % SVG_NS) if e.get("class") == "limit"]
        if len(lines) != len(p.limits):
            errors.append("panel %s: %d limit lines, expected %d" % (p.id, len(lines), len(p.limits)))
        titles = [e for e in g.iter("{%s}text" % SVG_NS) if e.get("class") == "panel-title"]
        if len(titles) != 1 or not (titles[0].text or "").strip():
            errors.append("panel %s: no title" % p.id)
    return errors


def convert(csv_text, header_text):
    d = parse_csv(csv_text)
    info = parse_header(header_text) if header_text else {}
    panels = build_panels(d)
    return d, panels, render(d, panels, info)


SAMPLE_CSV = """\
op,shape,impl,metric,value,ratio
limit,fma_peak,machine,GFLOP/s,112.324,
limit,avx512_fma_peak,machine,GFLOP/s,116.152,
limit,read_256MiB,machine,GB/s,23.5938,
limit,read_L2_512KiB,machine,GB/s,97.7364,
limit,copy_256MiB,machine,GB/s,23.0042,
limit,copy_4MiB,machine,GB/s,82.7472,
limit,exp_L1,machine,elem/ns,2.54396,
softmax,16384x64,naive,elem/ns,0.225668,1.0000
softmax,16384x64,attn,elem/ns,1.31552,5.8294
softmax,16384x64,onednn,elem/ns,1.29366,5.7326
softmax,256x4096,naive,elem/ns,0.221948,1.0000
softmax,256x4096,attn,elem/ns,1.726,7.7766
softmax,256x4096,onednn,elem/ns,1.38944,6.2602
softmax,1048576x64,attn,elem/ns,1.28782,
softmax,1048576x64,onednn,elem/ns,1.23435,
softmax,16384x4096,attn,elem/ns,1.44231,
softmax,16384x4096,onednn,elem/ns,0.971375,
layernorm,16384x64,naive,elem/ns,0.442788,1.0000
layernorm,16384x64,attn,elem/ns,1.96788,4.4443
layernorm,16384x64,onednn,elem/ns,2.58699,5.8425
layernorm,256x4096,naive,elem/ns,0.460118,1.0000
layernorm,256x4096,attn,elem/ns,4.84934,10.5394
layernorm,256x4096,onednn,elem/ns,3.10984,6.7588
layernorm,1048576x64,attn,elem/ns,1.45195,
layernorm,1048576x64,onednn,elem/ns,2.74985,
layernorm,16384x4096,attn,elem/ns,1.70317,
layernorm,16384x4096,onednn,elem/ns,1.65192,
rmsnorm,16384x64,naive,elem/ns,0.777991,1.0000
rmsnorm,16384x64,attn,elem/ns,3.17989,4.0873
rmsnorm,256x4096,naive,elem/ns,0.853975,1.0000
rmsnorm,256x4096,attn,elem/ns,4.43447,5.1927
rmsnorm,1048576x64,attn,elem/ns,2.89919,
rmsnorm,16384x4096,attn,elem/ns,2.23439,
matmul,64x64x64:NN,naive,GFLOP/s,2.99802,1.0000
matmul,64x64x64:NN,attn,GFLOP/s,43.9121,14.6470
matmul,64x64x64:NN,attn,ratio_vs_openblas,0.4019,
matmul,64x64x64:NN,openblas,GFLOP/s,109.271,36.4479
matmul,64x64x64:NT,naive,GFLOP/s,3.61878,1.0000
matmul,64x64x64:NT,attn,GFLOP/s,40.8494,11.2882
matmul,64x64x64:NT,openblas,GFLOP/s,84.0245,23.2190
matmul,64x64x64:TN,naive,GFLOP/s,2.93627,1.0000
matmul,64x64x64:TN,attn,GFLOP/s,45.0269,15.3347
matmul,64x64x64:TN,openblas,GFLOP/s,104.049,35.4356
matmul,64x64x64:TT,naive,GFLOP/s,3.63793,1.0000
matmul,64x64x64:TT,attn,GFLOP/s,38.7924,10.6633
matmul,64x64x64:TT,openblas,GFLOP/s,102.124,28.0719
matmul,512x64x512:NN,naive,GFLOP/s,2.53225,1.0000
matmul,512x64x512:NN,attn,GFLOP/s,45.3059,17.8916
matmul,512x64x512:NN,openblas,GFLOP/s,94.6415,37.3745
matmul,512x64x512:NT,naive,GFLOP/s,2.55103,1.0000
matmul,512x64x512:NT,attn,GFLOP/s,44.6866,17.5171
matmul,512x64x512:NT,openblas,GFLOP/s,97.4828,38.2132
matmul,512x64x512:TN,naive,GFLOP/s,0.930858,1.0000
matmul,512x64x512:TN,attn,GFLOP/s,44.908,48.2437
matmul,512x64x512:TN,openblas,GFLOP/s,94.7445,101.7819
matmul,512x64x512:TT,naive,GFLOP/s,0.996059,1.0000
matmul,512x64x512:TT,attn,GFLOP/s,42.492,42.6601
matmul,512x64x512:TT,openblas,GFLOP/s,93.4219,93.7915
matmul-2t,1024x1024x1024:NN,attn,GFLOP/s,41.8858,1.0000
matmul-2t,1024x1024x1024:NN,attn-2t,GFLOP/s,45.436,1.0848
matmul-2t,1024x1024x1024:NN,attn-2t,bit_identical,1,
matmul-2t,1024x1024x1024:NN,openblas-avx2-2t,GFLOP/s,106.144,2.5341
matmul-2t,1024x1024x1024:NN,openblas-2t,GFLOP/s,102.708,2.4521
attention,1x8x128x64:full,naive,GFLOP/s,3.97896,1.0000
attention,1x8x128x64:full,attn,GFLOP/s,25.763,6.4748
attention,1x8x128x64:full,openblas-unfused,GFLOP/s,75.7772,19.0445
attention,1x8x128x64:causal,naive,GFLOP/s,3.95002,1.0000
attention,1x8x128x64:causal,attn,GFLOP/s,24.0761,6.0952
attention,1x8x128x64:causal,openblas-unfused,GFLOP/s,38.9305,9.8558
attention,1x8x512x64:full,naive,GFLOP/s,3.98876,1.0000
attention,1x8x512x64:full,attn,GFLOP/s,24.913,6.2458
attention,1x8x512x64:full,openblas-unfused,GFLOP/s,79.5982,19.9556
attention,1x8x512x64:causal,naive,GFLOP/s,3.96357,1.0000
attention,1x8x512x64:causal,attn,GFLOP/s,24.7282,6.2389
attention,1x8x512x64:causal,openblas-unfused,GFLOP/s,41.2911,10.4177
softmax,16384x64,naive,share_of_exp,0.0887,
softmax,16384x64,attn,share_of_exp,0.5171,
softmax,16384x64,onednn,share_of_exp,0.5085,
softmax,256x4096,naive,share_of_exp,0.0872,
softmax,256x4096,attn,share_of_exp,0.6785,
softmax,256x4096,onednn,share_of_exp,0.5462,
softmax,1048576x64,attn,share_of_copy_256MiB,0.4479,
softmax,1048576x64,onednn,share_of_copy_256MiB,0.4293,
softmax,16384x4096,attn,share_of_copy_256MiB,0.5016,
softmax,16384x4096,onednn,share_of_copy_256MiB,0.3378,
layernorm,16384x64,naive,share_of_copy_4MiB,0.0428,
layernorm,16384x64,attn,share_of_copy_4MiB,0.1903,
layernorm,16384x64,onednn,share_of_copy_4MiB,0.2501,
layernorm,256x4096,naive,share_of_copy_4MiB,0.0445,
layernorm,256x4096,attn,share_of_copy_4MiB,0.4688,
layernorm,256x4096,onednn,share_of_copy_4MiB,0.3007,
layernorm,1048576x64,attn,share_of_copy_256MiB,0.5049,
layernorm,1048576x64,onednn,share_of_copy_256MiB,0.9563,
layernorm,16384x4096,attn,share_of_copy_256MiB,0.5923,
layernorm,16384x4096,onednn,share_of_copy_256MiB,0.5745,
rmsnorm,16384x64,naive,share_of_copy_4MiB,0.0752,
rmsnorm,16384x64,attn,share_of_copy_4MiB,0.3074,
rmsnorm,256x4096,naive,share_of_copy_4MiB,0.0826,
rmsnorm,256x4096,attn,share_of_copy_4MiB,0.4287,
rmsnorm,1048576x64,attn,share_of_copy_256MiB,1.0082,
rmsnorm,16384x4096,attn,share_of_copy_256MiB,0.7770,
matmul,64x64x64:NN,naive,share_of_fma_peak,0.0267,
matmul,64x64x64:NN,attn,share_of_fma_peak,0.3909,
matmul,64x64x64:NN,openblas,share_of_fma_peak,0.9728,
matmul,64x64x64:NT,naive,share_of_fma_peak,0.0322,
matmul,64x64x64:NT,attn,share_of_fma_peak,0.3637,
matmul,64x64x64:NT,openblas,share_of_fma_peak,0.7481,
matmul,64x64x64:TN,naive,share_of_fma_peak,0.0261,
matmul,64x64x64:TN,attn,share_of_fma_peak,0.4009,
matmul,64x64x64:TN,openblas,share_of_fma_peak,0.9263,
matmul,64x64x64:TT,naive,share_of_fma_peak,0.0324,
matmul,64x64x64:TT,attn,share_of_fma_peak,0.3454,
matmul,64x64x64:TT,openblas,share_of_fma_peak,0.9092,
matmul,512x64x512:NN,naive,share_of_fma_peak,0.0225,
matmul,512x64x512:NN,attn,share_of_fma_peak,0.4033,
matmul,512x64x512:NN,openblas,share_of_fma_peak,0.8426,
matmul,512x64x512:NT,naive,share_of_fma_peak,0.0227,
matmul,512x64x512:NT,attn,share_of_fma_peak,0.3978,
matmul,512x64x512:NT,openblas,share_of_fma_peak,0.8679,
matmul,512x64x512:TN,naive,share_of_fma_peak,0.0083,
matmul,512x64x512:TN,attn,share_of_fma_peak,0.3998,
matmul,512x64x512:TN,openblas,share_of_fma_peak,0.8435,
matmul,512x64x512:TT,naive,share_of_fma_peak,0.0089,
matmul,512x64x512:TT,attn,share_of_fma_peak,0.3783,
matmul,512x64x512:TT,openblas,share_of_fma_peak,0.8317,
matmul-2t,1024x1024x1024:NN,attn,share_of_fma_peak,0.3729,
matmul-2t,1024x1024x1024:NN,attn-2t,share_of_fma_peak_x2,0.2023,
matmul-2t,1024x1024x1024:NN,openblas-avx2-2t,share_of_fma_peak_x2,0.4725,
matmul-2t,1024x1024x1024:NN,openblas-2t,share_of_fma_peak_x2,0.4572,
attention,1x8x128x64:full,naive,share_of_fma_peak,0.0354,
attention,1x8x128x64:full,attn,share_of_fma_peak,0.2294,
attention,1x8x128x64:full,openblas-unfused,share_of_fma_peak,0.6746,
attention,1x8x128x64:causal,naive,share_of_fma_peak,0.0352,
attention,1x8x128x64:causal,attn,share_of_fma_peak,0.2143,
attention,1x8x128x64:causal,openblas-unfused,share_of_fma_peak,0.3466,
attention,1x8x512x64:full,naive,share_of_fma_peak,0.0355,
attention,1x8x512x64:full,attn,share_of_fma_peak,0.2218,
attention,1x8x512x64:full,openblas-unfused,share_of_fma_peak,0.7086,
attention,1x8x512x64:causal,naive,share_of_fma_peak,0.0353,
attention,1x8x512x64:causal,attn,share_of_fma_peak,0.2202,
attention,1x8x512x64:causal,openblas-unfused,share_of_fma_peak,0.3676,
"""

SAMPLE_HEADER = """\
attn.h 0.1.0 benchmark
cpu:      AMD EPYC (2 online)
isa:      avx2
compiler: gcc 12.2.0
build:    buildtype=release optimization=3 simd=auto flags: -mavx2 -mfma
peers:    OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH (cblas_sgemm; this process's config)
          child processes (thread count in OMP_NUM_THREADS, OPENBLAS_NUM_THREADS):
            openblas          1 thread, 1 process; unrestricted ISA
timing:   1 thread (matmul-2t: 2), CLOCK_MONOTONIC, median of 3 samples of ~2 ms (--quick)

notes:
softmax    value = rows*n elements per ns
"""


def selftest():
    fails = []

    def check(cond, what):
        if not cond:
            fails.append(what)

    d, panels, svg = convert(SAMPLE_CSV, SAMPLE_HEADER)
    ids = [p.id for p in panels]
    expect = ["softmax-4MiB", "softmax-256MiB", "layernorm-4MiB", "layernorm-256MiB",
              "rmsnorm-4MiB", "rmsnorm-256MiB", "matmul-NN", "matmul-NT", "matmul-TN",
              "matmul-TT", "matmul-2t-NN", "attention-full-1-8-64", "attention-causal-1-8-64"]
    check(ids == expect, "panels %s, expected %s" % (ids, expect))
    fails += validate(svg, panels)
    with tempfile.TemporaryDirectory() as tmp:  # the file path of main(), parsed back
        path = os.path.join(tmp, "chart.svg")
        write_checked(svg, panels, path)
        check(len(ET.parse(path).getroot().findall("{%s}g" % SVG_NS)) == 13,
              "13 top-level panels in the written file")
    lim = {p.id: {name: v for v, _, name in p.limits} for p in panels}

    def near(a, b):
        return a is not None and abs(a - b) <= 1e-9 * abs(b)

    check(near(lim["softmax-4MiB"].get("exp"), 2.54396), "softmax in cache: exp limit")
    check(near(lim["softmax-256MiB"].get("copy_256MiB"), 23.0042 / 8),
          "softmax out of cache: memcpy / 8 B")
    check(near(lim["layernorm-4MiB"].get("copy_4MiB"), 82.7472 / 8), "layernorm: copy_4MiB / 8")
    check(near(lim["matmul-TT"].get("fma_peak"), 112.324), "matmul: FMA peak")
    check(near(lim["matmul-2t-NN"].get("fma_peak_x2"), 2 * 112.324), "matmul-2t: 2 x FMA peak")
    check(near(lim["matmul-2t-NN"].get("fma_peak"), 112.324), "matmul-2t: 1-thread FMA peak")
    check(near(lim["attention-causal-1-8-64"].get("fma_peak"), 112.324), "attention: FMA peak")
    kinds = {p.id: p.xkind for p in panels}
    check(kinds["softmax-4MiB"] == "log" and kinds["attention-full-1-8-64"] == "log",
          "x scales: %s" % kinds)
    check(kinds["matmul-NN"] == "cat" and kinds["matmul-2t-NN"] == "bar", "x kinds: %s" % kinds)
    check("AMD EPYC" in svg and "limit: FMA peak 112 GFLOP/s" in svg, "title and limit label")
    # without limit rows the limits still come from value / share
    bare = "\n".join(l for l in SAMPLE_CSV.splitlines() if not l.startswith("limit,"))
    d2, p2, svg2 = convert(bare, "")
    fails += validate(svg2, p2)
    l2 = {p.id: {name: v for v, _, name in p.limits} for p in p2}
    check(abs(l2["matmul-NN"]["fma_peak"] / 112.324 - 1) < 1e-3, "derived FMA peak")
    # one op only (--op softmax), and bad input is refused
    one = "\n".join(l for l in SAMPLE_CSV.splitlines() if l.startswith(("op,", "softmax,")))
    d3, p3, svg3 = convert(one, "")
    check(len(p3) == 2 and not validate(svg3, p3), "softmax alone: 2 panels")
    for bad in ("", "a,b,c\n1,2,3\n", "op,shape,impl,metric,value,ratio\nsoftmax,1x2,attn,elem/ns,x,\n"):
        try:
            convert(bad, "")
            fails.append("accepted bad input %r" % bad[:40])
        except Failure:
            pass
    # a broken SVG is caught
    check(validate(svg.replace('class="limit"', 'class="lim"', 1), panels) != [],
          "validate: a missing limit line")
    check(validate(svg[:-20], panels) != [], "validate: truncated file")
    for f in fails:
        print("selftest: FAIL: %s" % f, file=sys.stderr)
    if fails:
        return 1
    print("selftest: ok (%d panels, %d series, %d limit lines)" % (
        len(panels), sum(len(p.impls) for p in panels), sum(len(p.limits) for p in panels)))
    return 0


def write_checked(svg, panels, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write(svg)
    with open(path, encoding="utf-8") as f:
        errors = validate(f.read(), panels)
    if errors:
        raise Failure("%s: invalid SVG:\n  %s" % (path, "\n  ".join(errors)))


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Draw attn_bench --csv output as an SVG chart (standard library only).")
    ap.add_argument("csv", nargs="?", default="-", help="the CSV (default: stdin)")
    ap.add_argument("-o", "--output", help="the SVG file to write")
    ap.add_argument("--header", help="the benchmark's stderr (title: cpu, ISA, build, peers)")
    ap.add_argument("--selftest", action="store_true",
                    help="convert an embedded sample, check the panels and limits, exit")
    a = ap.parse_args(argv)
    if a.selftest:
        return selftest()
    if not a.output:
        ap.error("-o FILE is required")
    try:
        if a.csv == "-":
            csv_text = sys.stdin.read()
        else:
            with open(a.csv, encoding="utf-8") as f:
                csv_text = f.read()
        header = ""
        if a.header:
            with open(a.header, encoding="utf-8", errors="replace") as f:
                header = f.read()
        d, panels, svg = convert(csv_text, header)
    except (Failure, OSError) as e:
        print("csv2svg: %s" % e, file=sys.stderr)
        return 1
    try:
        write_checked(svg, panels, a.output)
    except OSError as e:
        print("csv2svg: %s" % e, file=sys.stderr)
        return 1
    except Failure as e:
        print("csv2svg: %s" % e, file=sys.stderr)
        return 2
    print("csv2svg: %s: %d panels (%s)" % (a.output, len(panels),
                                          ", ".join(p.id for p in panels)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
