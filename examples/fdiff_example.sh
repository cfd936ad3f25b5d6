#!/usr/bin/env bash
# fdiff_example.sh: the worked example of docs/diff.md, to rerun: the toy engine built twice, B
# with a slower decode kernel (-DTOY_NORM_REPS=64: its decode_norm does its work 64 times, the
# output unchanged), 5 profiled runs of each under the shim, alternating, into
# perfscope-out/fdiff/{A,B}/rN; then `perfscope diff --profiles` says which functions changed.
#   examples/fdiff_example.sh [RUNS]     (default 5 a side; needs `make` first)
# It must never write outside perfscope-out/fdiff/ and never mix an older run into a new one.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${1:-5}
for f in build/libperfscope.so build/perfscope; do
  [ -e "$f" ] || { echo "fdiff_example: $f is missing: run make first" >&2; exit 1; }
done
base=$root/perfscope-out/fdiff
rm -rf "$base"
mkdir -p "$base/A" "$base/B"
cc=${CC:-gcc}
# Both builds as the Makefile builds the toy engine; only B's define differs.
flags=(-O2 -g -fno-omit-frame-pointer -pthread -Iinclude -D_GNU_SOURCE)
"$cc" "${flags[@]}" -o "$base/toy-A" examples/toy_engine.c -lm
"$cc" "${flags[@]}" -DTOY_NORM_REPS=64 -o "$base/toy-B" examples/toy_engine.c -lm
for i in $(seq 1 "$runs"); do
  for side in A B; do
    out=$base/$side/r$i
    LD_PRELOAD=$root/build/libperfscope.so PERFSCOPE_OUT=$out LLMPERFSCOPE_MARKERS=$out/markers \
      PERFSCOPE_HZ=997 "$base/toy-$side" --threads 2 --scale 0.25 --gen 64 >/dev/null
  done
done
echo "== build/perfscope diff --profiles perfscope-out/fdiff/A -- perfscope-out/fdiff/B"
build/perfscope diff --profiles "$base/A" -- "$base/B"
