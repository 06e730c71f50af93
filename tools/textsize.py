#!/usr/bin/env python3
"""Prints the compiled text of attn.h per operation family (one source file of src/ each)
and fails when a family, or the whole, is above its budget in tools/text_budget.txt.

One translation unit (gcc -O2 -mavx2 -mfma -mf16c, ATTN_IMPLEMENTATION) of src/attn.h compiled
with debug lines; each function is charged to the file that defines it (inlined helpers
to their callers). Usage: tools/textsize.py [--cc gcc] [--flags "-O2 -mavx2 -mfma -mf16c"]"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def measure(cc, flags):
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'tu.c')
        obj = os.path.join(tmp, 'tu.o')
        with open(src, 'w') as f:
            f.write('#define ATTN_IMPLEMENTATION\n#include "%s"\n'
                    % os.path.join(ROOT, 'src', 'attn.h'))
        subprocess.run([cc, '-std=c99', '-g', '-c', src, '-o', obj] + flags.split(),
                       check=True)
        out = subprocess.run(['nm', '-S', '-l', '-t', 'd', '--defined-only', obj],
                             check=True, capture_output=True, text=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[2].lower() != 't':
            continue
        size = int(parts[1])
        where = parts[4] if len(parts) > 4 else ''
        path = os.path.relpath(where.rsplit(':', 1)[0], ROOT) if where else '?'
        family = 'simd' if path.startswith('simd') else os.path.splitext(os.path.basename(path))[0]
        sizes[family] = sizes.get(family, 0) + size
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--cc', default='gcc')
    ap.add_argument('--flags', default='-O2 -mavx2 -mfma -mf16c')
    ap.add_argument('--budget', default=os.path.join(ROOT, 'tools', 'text_budget.txt'))
    args = ap.parse_args()
    sizes = measure(args.cc, args.flags)
    budget = {}
    with open(args.budget) as f:
        for line in f:
            line = line.split('#', 1)[0].split()
            if len(line) == 2:
                budget[line[0]] = int(line[1])
    total = sum(sizes.values())
    over = []
    print('%-12s %8s %8s' % ('family', 'bytes', 'budget'))
    for fam in sorted(sizes, key=lambda k: -sizes[k]):
        b = budget.get(fam)
        print('%-12s %8d %8s' % (fam, sizes[fam], b if b is not None else '-'))
        if b is None or sizes[fam] > b:
            over.append(fam)
    print('%-12s %8d %8d' % ('total', total, budget.get('total', 0)))
    if total > budget.get('total', 0):
        over.append('total')
    if over:
        print('textsize: over budget (or not in %s): %s' % (os.path.basename(args.budget),
                                                          ', '.join(over)))
        return 1
    print('textsize: every family within its budget')
    return 0


if __name__ == '__main__':
    sys.exit(main())
