#!/usr/bin/env bash
# demo.sh: what `make demo` runs: the toy engine under the shim twice, once marking its own
# phases through include/perfscope.h, once driven by examples/drive.py through the markers file,
# each into a fresh folder under demo-out/, then the summary of each. It must never write outside
# demo-out/ and never leave an older run's files mixed into a new one. Not under perfscope-out/:
# that is the folder `perfscope record` and the shim use by default, and a folder of two runs there
# made the user's first `perfscope record -- CMD` refuse it (not a run folder).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
for f in build/libperfscope.so build/toy-engine build/perfscope-report; do
  [ -e "$f" ] || { echo "demo: $f is missing: run make first" >&2; exit 1; }
done

base=$root/demo-out
rm -rf "$base"
mkdir -p "$base/api" "$base/drive"

# Run $2... under the shim into folder $1, at 997 samples per CPU second: the perf clock, which
# counts user time only (`perfscope record` defaults to 199 Hz on the tick timer, user and system
# time: its CPU column reads "CPU s (user+sys)" where this one reads "CPU s (user)").
measured() {
  local out=$1; shift
  LD_PRELOAD=$root/build/libperfscope.so PERFSCOPE_OUT=$out LLMPERFSCOPE_MARKERS=$out/markers \
    PERFSCOPE_HZ=997 "$@"
}

echo "== 1. toy engine marking its own phases (perfscope_begin/perfscope_end)"
measured "$base/api" build/toy-engine --threads 2

# The interpreter itself, not a wrapper script (pyenv's shims are bash + env + readlink, which
# would all be measured too).
python=$(python3 -c 'import sys; print(sys.executable)')

echo
echo "== 2. the same engine driven from outside by examples/drive.py (markers file)"
measured "$base/drive" "$python" examples/drive.py --engine build/toy-engine --idle 0.5 \
  --requests 2 -- --threads 2 --scale 0.5

for run in api drive; do
  echo
  echo "== perfscope-report demo-out/$run"
  build/perfscope-report "$base/$run"
done
