#!/usr/bin/env bash
# Consumers of attn.h: tiny projects that take the library each way the README describes,
# build a program calling attn_softmax (main.c; main.cpp for C++17) and run it. The program
# checks the result against a double-precision reference and that the build got the path
# it asked for (attn_isa(), and attn_exp_impl() where the build says).
#
#   plain copy   attn.h alone copied beside main.c: cc -O2 -std=c99 -Werror -mavx2 -mfma,
#                plain cc -O2
#   C++17        the copy under third_party/attn, c++ -std=c++17 -Wall -Wextra -Werror
#   meson        the repository as subprojects/attn, dependency('attn'), simd/sleef options
#   pkg-config   meson install into a temporary prefix, pkg-config --cflags --libs attn
#   CMake        add_subdirectory, and find_package after cmake --install
#
# One line per consumer, then "consumers: N passed, M failed". Builds happen under a
# temporary directory that is removed at the end; nothing is downloaded and nothing is
# written into the repository. Honours CC, CXX, MESON, CMAKE, PKG_CONFIG; the CMake
# consumers are skipped when cmake is missing.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
here=$src/tests/consumers
CC=${CC:-cc}
CXX=${CXX:-c++}
MESON=${MESON:-meson}
CMAKE=${CMAKE:-cmake}
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
export CC CXX
unset PKG_CONFIG_PATH # the pkg-config consumer sets it; elsewhere no installed attn.pc leaks in

tmp=$(mktemp -d "${TMPDIR:-/tmp}/attn-consumers.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# Expected paths: "auto" is what the build systems' simd=auto gives, "plain" what a bare
# compiler gives: on x86-64 both dispatch at run time to the best path this CPU runs (AVX2
# or AVX-512 instead when the compiler's defaults already enable them).
version=$(awk '/^#define ATTN_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 }
               END { print v }' "$src/attn.h")
auto=scalar plain=scalar avx2=no
case $(uname -m) in
x86_64 | amd64)
  if grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo &&
    grep -qw f16c /proc/cpuinfo; then
    avx2=yes auto=avx2
    if grep -qw avx512f /proc/cpuinfo; then auto=avx512; fi
  fi
  plain=$auto
  defaults=$(echo | "$CC" -dM -E - 2>/dev/null)
  if grep -q '__AVX512F__' <<<"$defaults"; then plain=avx512
  elif grep -q '__AVX2__' <<<"$defaults" && grep -q '__FMA__' <<<"$defaults"; then plain=avx2
  fi ;;
aarch64 | arm64) auto=neon plain=neon ;;
esac
# The scalar consumers compile with the project's own -mavx2 -mfma where AVX2 runs, so
# that only ATTN_NO_SIMD can give them the scalar path.
own_avx2=
if [ "$avx2" = yes ]; then own_avx2="-mavx2 -mfma"; fi
sleef=no
if "$PKG_CONFIG" --exists sleef 2>/dev/null; then sleef=yes; fi
gen=()
if command -v ninja >/dev/null 2>&1; then gen=(-G Ninja); fi

# check NAME COMMAND...: run one consumer (configure, build, run) with its output in a log;
# its last line is the consumer program's own line.
# Each consumer's line goes to a numbered file (result.LANE.SEQ, with .ok or .failed beside
# it): the two lanes below run side by side, one per core, and the lines print in lane
# order at the end.
lane=0 seq=0
next_out() { seq=$((seq + 1)); out=$(printf '%s/result.%d.%02d' "$tmp" "$lane" "$seq"); }
check() {
  local name=$1 log="$tmp/$1.log" out
  shift
  next_out
  if ("$@") >"$log" 2>&1; then
    printf '%-31s %s\n' "$name" "$(tail -n 1 "$log")" >"$out"
    touch "$out.ok"
  else
    { printf '%-31s FAILED\n' "$name"; tail -n 40 "$log" | sed 's/^/    | /'; } >"$out"
    touch "$out.failed"
  fi
}
skip() {
  local out
  next_out
  printf '%-31s skipped (%s)\n' "$1" "$2" >"$out"
}
# need_avx2 NAME: false (after a skip line) when this machine cannot run AVX2+FMA code.
need_avx2() {
  [ "$avx2" = yes ] && return 0
  skip "$1" "no AVX2+FMA here"
  return 1
}

# The header folder as a user copies it: the single attn.h, nothing else.
mkdir -p "$tmp/attn"
cp "$src/attn.h" "$tmp/attn/"

# Lane 1: plain copies, C++17 and meson subprojects.
lane1() {
# 1. Plain copy: the folder's files beside main.c, one #include, no -I.
plain_copy() { # flags...
  local d
  d=$(mktemp -d "$tmp/plain.XXXX")
  cp -r "$tmp/attn/." "$here/main.c" "$d/"
  cd "$d" && "$CC" -O2 "$@" main.c -o consumer -lm
}
plain_avx2() { # as C99 with every warning an error (pkg-config below: the same, no flags)
  plain_copy -std=c99 -Wall -Wextra -Wpedantic -Werror -mavx2 -mfma && ./consumer avx2 attn
}
plain_none() {
  plain_copy && ./consumer "$plain" attn
}
if need_avx2 "plain copy, -mavx2 -mfma, C99"; then
  check "plain copy, -mavx2 -mfma, C99" plain_avx2
fi
check "plain copy, no flags" plain_none

# 2. C++17: the folder under third_party/attn, found through -I.
cxx17() { # flags...
  local d
  d=$(mktemp -d "$tmp/cxx.XXXX")
  mkdir -p "$d/third_party" && cp -r "$tmp/attn" "$d/third_party/" && cp "$here/main.cpp" "$d/"
  cd "$d" && "$CXX" -std=c++17 -O2 -Wall -Wextra -Wpedantic -Werror -Ithird_party/attn "$@" \
    main.cpp -o consumer -lm
}
cxx_avx2() { cxx17 -mavx2 -mfma && ./consumer avx2 attn; }
cxx_none() { cxx17 && ./consumer "$plain" attn; }
if need_avx2 "C++17, -mavx2 -mfma"; then check "C++17, -mavx2 -mfma" cxx_avx2; fi
check "C++17, no flags" cxx_none

# 3. meson: the repository as a subproject; its tests and benchmark must not build and
#    nothing of it may be installed.
meson_sub() { # isa exp meson-options...
  local isa=$1 exp=$2 d
  shift 2
  d=$(mktemp -d "$tmp/meson.XXXX")
  cp "$here/meson/meson.build" "$here/main.c" "$d/"
  mkdir "$d/subprojects" && ln -s "$src" "$d/subprojects/attn"
  cd "$d" && "$MESON" setup build "$@" && "$MESON" compile -C build || return 1
  local targets installed
  targets=$("$MESON" introspect build --targets | grep -o '"name": "[^"]*"' | tr '\n' ' ')
  installed=$("$MESON" introspect build --installed)
  echo "targets: $targets; installed: $installed"
  [ "$targets" = '"name": "consumer" ' ] || { echo "the subproject built targets"; return 1; }
  [ "$installed" = "{}" ] || { echo "the subproject installs files"; return 1; }
  build/consumer "$isa" "$exp"
}
# (the sleef option defaults to disabled: the library's own exp)
if [ "$auto" != avx2 ] || need_avx2 "meson subproject"; then
  check "meson subproject" meson_sub "$auto" attn
fi
# simd=scalar must win over the parent's own -mavx2 -mfma (ATTN_NO_SIMD, not missing flags)
check "meson subproject, scalar" meson_sub scalar attn -Dattn:simd=scalar \
  ${own_avx2:+"-Dc_args=$own_avx2"}
if [ "$auto" != scalar ]; then
  if [ "$sleef" = no ]; then
    skip "meson subproject, SLEEF" "no sleef.pc"
  elif [ "$auto" != avx2 ] || need_avx2 "meson subproject, SLEEF"; then
    check "meson subproject, SLEEF" meson_sub "$auto" sleef -Dattn:sleef=enabled
  fi
fi

}

# The installed header folder must be the copied one: attn.h alone.
same_headers() { # prefix
  diff -r "$tmp/attn" "$1/include/attn" && echo "installed header matches attn.h"
}

# Lane 2: meson install with pkg-config, and CMake.
lane2() {
# 4. meson install into a prefix (default options: the tests and benchmark configured but
#    not installed), then a consumer built with pkg-config's flags.
pc_prefix=$tmp/prefix-meson
meson_install() {
  "$MESON" setup "$tmp/build-install" "$src" --prefix="$pc_prefix" &&
    "$MESON" install -C "$tmp/build-install" --no-rebuild || return 1
  local files want
  files=$(cd "$pc_prefix" && find . -type f | sort | tr '\n' ' ')
  want=$(cd "$tmp/attn" && find . -type f | sed 's|^\./|./include/attn/|' |
    sort | sed '$a ./share/pkgconfig/attn.pc' | sort | tr '\n' ' ')
  echo "installed: $files"
  [ "$files" = "$want" ] || { echo "expected: $want"; return 1; }
  same_headers "$pc_prefix" || return 1
  local v
  v=$(PKG_CONFIG_PATH="$pc_prefix/share/pkgconfig" "$PKG_CONFIG" --modversion attn)
  [ "$v" = "$version" ] || { echo "attn.pc says version $v, attn.h $version"; return 1; }
  echo "headers and attn.pc (version $v) installed, nothing else"
}
pkgconfig_consumer() { # isa flags...
  local isa=$1 d flags
  shift
  [ -f "$pc_prefix/share/pkgconfig/attn.pc" ] || { echo "meson install failed"; return 1; }
  flags=$(PKG_CONFIG_PATH="$pc_prefix/share/pkgconfig" "$PKG_CONFIG" --cflags --libs attn) ||
    return 1
  echo "pkg-config --cflags --libs attn: $flags"
  d=$(mktemp -d "$tmp/pc.XXXX")
  cp "$here/main.c" "$d/"
  # shellcheck disable=SC2086 # word splitting of pkg-config's flags is intended
  cd "$d" && "$CC" -std=c99 -O2 -Wall -Wextra -Wpedantic -Werror "$@" main.c -o consumer \
    $flags && ./consumer "$isa" attn
}
check "meson install" meson_install
if need_avx2 "pkg-config, -mavx2 -mfma"; then
  check "pkg-config, -mavx2 -mfma" pkgconfig_consumer avx2 -mavx2 -mfma
fi
check "pkg-config, no flags" pkgconfig_consumer "$plain"

# 5. CMake: add_subdirectory of the repository, and find_package after cmake --install.
cm_prefix=$tmp/prefix-cmake
cmake_consumer() { # isa cmake-options...
  local isa=$1 d
  shift
  d=$(mktemp -d "$tmp/cmake.XXXX")
  cp "$here/cmake/CMakeLists.txt" "$here/main.c" "$d/"
  "$CMAKE" -S "$d" -B "$d/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "$@" &&
    "$CMAKE" --build "$d/build" && "$d/build/consumer" "$isa" attn
}
cmake_install() {
  "$CMAKE" -S "$src" -B "$tmp/build-cmake" "${gen[@]}" -DCMAKE_INSTALL_PREFIX="$cm_prefix" &&
    "$CMAKE" --install "$tmp/build-cmake" || return 1
  (cd "$cm_prefix" && find . -type f | sort)
  same_headers "$cm_prefix" && [ -f "$cm_prefix/share/cmake/attn/attnConfig.cmake" ] &&
    echo "headers and share/cmake/attn/attnConfig.cmake installed"
}
if ! command -v "$CMAKE" >/dev/null 2>&1; then
  skip "CMake consumers" "no cmake"
else
  if [ "$auto" != avx2 ] || need_avx2 "cmake add_subdirectory"; then
    check "cmake add_subdirectory" cmake_consumer "$auto" -DATTN_SOURCE_DIR="$src"
  fi
  check "cmake add_subdirectory, scalar" cmake_consumer scalar -DATTN_SOURCE_DIR="$src" \
    -DATTN_SIMD=scalar ${own_avx2:+"-DCMAKE_C_FLAGS=$own_avx2"}
  check "cmake --install" cmake_install
  if [ "$auto" != avx2 ] || need_avx2 "cmake find_package"; then
    check "cmake find_package" cmake_consumer "$auto" -DCMAKE_PREFIX_PATH="$cm_prefix" \
      -DATTN_VERSION="$version"
  fi
  check "cmake find_package, scalar" cmake_consumer scalar -DCMAKE_PREFIX_PATH="$cm_prefix" \
    -DATTN_VERSION="$version" -DATTN_SIMD=scalar ${own_avx2:+"-DCMAKE_C_FLAGS=$own_avx2"}
fi

}

(lane=1 && lane1) &
l1=$!
(lane=2 && lane2) &
l2=$!
wait $l1 $l2
passed=0 failed=0
for f in "$tmp"/result.*; do
  case $f in
  *.ok) passed=$((passed + 1)) ;;
  *.failed) failed=$((failed + 1)) ;;
  *) cat "$f" ;;
  esac
done
echo "consumers: $passed passed, $failed failed"
[ "$passed" -gt 0 ] && [ "$failed" -eq 0 ]
