#!/usr/bin/env python3
"""bench/vs_scalar.py - the library's speed on a vector path as a ratio to the scalar build
of the same target, in one run: for each op, the benchmark of the vector build then that of
the scalar build (attn_bench --csv --op OP), each shape's attn value over the scalar one's.
Where absolute figures mean little (an emulator, a JavaScript engine), the ratio still says
what the vector layer buys.

  bench/vs_scalar.py [--wrapper 'node --no-liftoff'] [--full] [--op softmax ...] \\
      build-wasm/bench/attn_bench.js build-wasm-scalar/bench/attn_bench.js

--wrapper: the command that runs a benchmark binary (an emulator, node); --full: the
benchmark's full sampling instead of --quick; --repeat N: N runs of each build, alternating,
each shape's best value kept (on a shared machine, other load only ever slows a run down),
the builds taking turns to run first; use an even N.
WebAssembly: the scalar build without SIMD128 (.ci/wasm32-scalar.ini: else LLVM vectorizes
the scalar path's loops) and --wrapper 'node --no-experimental-fetch --no-liftoff' (V8's
optimized code from the first call).
Default ops: softmax, layernorm, matmul. Prints one row per shape and each op's geometric
mean; exits non-zero if a run fails."""
import argparse
import csv
import io
import math
import shlex
import subprocess
import sys

VALUE_METRICS = ('elem/ns', 'GFLOP/s', 'GB/s')


def run(wrapper, exe, op, quick):
    cmd = shlex.split(wrapper) + [exe, '--csv', '--op', op] + (['--quick'] if quick else [])
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        sys.exit('vs_scalar: %s failed (%d):\n%s' % (' '.join(cmd), p.returncode, p.stderr))
    isa = next((l.split(':', 1)[1].strip() for l in p.stderr.splitlines()
                if l.startswith('isa:')), '?')
    vals = {}
    for row in csv.DictReader(io.StringIO(p.stdout)):
        if row['op'] == op and row['impl'] == 'attn' and row['metric'] in VALUE_METRICS:
            vals[row['shape']] = (row['metric'], float(row['value']))
    return isa, vals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--wrapper', default='')
    ap.add_argument('--full', action='store_true')
    ap.add_argument('--repeat', type=int, default=1)
    ap.add_argument('--op', action='append')
    ap.add_argument('vector_bench')
    ap.add_argument('scalar_bench')
    a = ap.parse_args()
    ops = a.op or ['softmax', 'layernorm', 'matmul']
    print('%-10s %-22s %-8s %10s %10s %7s' % ('op', 'shape', 'metric', 'vector', 'scalar',
                                              'ratio'))
    isas = set()
    for op in ops:
        vec, sca = {}, {}
        for i in range(max(1, a.repeat)):
            # the two builds take turns to run first: on a shared machine the first of two
            # back-to-back runs was seen up to 1.4x faster than the same binary second
            if i % 2 == 0:
                isa_v, v = run(a.wrapper, a.vector_bench, op, not a.full)
                isa_s, s = run(a.wrapper, a.scalar_bench, op, not a.full)
            else:
                isa_s, s = run(a.wrapper, a.scalar_bench, op, not a.full)
                isa_v, v = run(a.wrapper, a.vector_bench, op, not a.full)
            isas.add((isa_v, isa_s))
            for best, new in ((vec, v), (sca, s)):
                for shape, (metric, val) in new.items():
                    if shape not in best or val > best[shape][1]:
                        best[shape] = (metric, val)
        logs = []
        for shape, (metric, v) in vec.items():
            if shape not in sca or sca[shape][1] <= 0:
                continue
            r = v / sca[shape][1]
            logs.append(math.log(r))
            print('%-10s %-22s %-8s %10.3f %10.3f %7.2f' % (op, shape, metric, v, sca[shape][1], r))
        if logs:
            print('%-10s %-22s %-8s %10s %10s %7.2f' % (op, 'geometric mean', '', '', '',
                                                        math.exp(sum(logs) / len(logs))))
    for isa_v, isa_s in sorted(isas):
        print('vector build: isa %s; scalar build: isa %s' % (isa_v, isa_s))


if __name__ == '__main__':
    main()
