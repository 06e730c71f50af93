#!/bin/sh
# tests/fuzz/run.sh - builds the fuzz target (fuzz_api.c) with clang's libFuzzer, ASan and
# UBSan for AVX2 (-mavx2 -mfma) and for the scalar path (-DATTN_NO_SIMD), with the vector
# layer's contract checks (ATTN__CHECKS, as the meson tests), and runs the two
# side by side from the seed and regression corpora; prints libFuzzer's final statistics.
# LENGTH "ci" (the default) is reproducible: random seed 1, 80000 inputs on AVX2 and 30000 on
# the scalar path, from an empty working corpus (about 50 and 35 s on two cores); a number is
# that many seconds each with a random seed, to explore. Exits non-zero when either fails
# (the failing input is left in OUT as <isa>-crash-* or -timeout-*, the log as OUT/log_<isa>).
# Usage: tests/fuzz/run.sh [ci|SECONDS] [OUT]   (from anywhere; CC defaults to clang-14)
set -eu
len=${1:-ci}
out=${2:-${TMPDIR:-/tmp}/attn-fuzz}
root=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CC:-clang-14}
mkdir -p "$out"

build() { # isa flags...
  isa=$1
  shift
  "$cc" -std=c99 -O1 -g -DATTN__CHECKS "$@" -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=all \
    -I"$root" "$root/tests/fuzz/fuzz_api.c" -o "$out/fuzz_api_$isa" -lm
}

run() { # isa runs
  if [ "$len" = ci ]; then
    lim="-seed=1 -runs=$2"
    rm -rf "$out/corpus_$1"
  else
    lim="-max_total_time=$len"
  fi
  mkdir -p "$out/corpus_$1"
  # shellcheck disable=SC2086
  "$out/fuzz_api_$1" $lim -timeout=10 -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$out/$1-" "$out/corpus_$1" "$root/tests/fuzz/seeds" \
    "$root/tests/fuzz/regress" > "$out/log_$1" 2>&1
}

build avx2 -mavx2 -mfma &
pa=$!
build scalar -DATTN_NO_SIMD &
ps=$!
wait $pa
wait $ps
sa=0
ss=0
run avx2 80000 &
pa=$!
run scalar 30000 &
ps=$!
wait $pa || sa=$?
wait $ps || ss=$?
for isa in avx2 scalar; do
  echo "fuzz_api [$isa]: $len"
  grep -E '^(stat::|#[0-9]+[[:space:]]+DONE)|ERROR|SUMMARY|runtime error|fuzz_api:' \
    "$out/log_$isa" || true
done
if [ "$sa" -ne 0 ] || [ "$ss" -ne 0 ]; then
  echo "fuzz_api: failed (avx2 status $sa, scalar status $ss; logs in $out)"
  exit 1
fi
