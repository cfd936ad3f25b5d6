#!/usr/bin/env bash
# bench/html.sh: how big report.html gets and how fast it opens, for a 100k-sample run: a
# synthetic run folder (bench/symbolize_gen.py: 30-frame stacks over libc, libstdc++, libm, 3
# phases), 100000 samples over 5000 and over 20000 distinct stacks, perfscope-report on it, then
# headless Chromium (--dump-dom) opens the page three times: the page's own figure of when its
# last picture was drawn (body data-ready-ms, ms since navigation began) and chromium's wall
# time, medians. `make bench` runs it last; it runs alone too. Prints; never fails on figures
# (exit 0 unless it could not run). Knobs: HTML_N (samples, default 100000), BUILD.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=${HTML_N:-100000}
tool=$BUILD/perfscope-report
[ -x "$tool" ] || { echo "bench html: $tool is not built (make)"; exit 1; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "bench html: chromium is not installed (apt-get install chromium): skipped"; exit 0; }
work=$BUILD/bench/html
rm -rf "$work"
mkdir -p "$work"
echo "report.html of a $N-sample run (synthetic, 30-frame stacks), opened in headless chromium:"
for stacks in 5000 20000; do
  d=$work/run$stacks
  python3 bench/symbolize_gen.py "$d" "$N" $((stacks / 4)) 4 >/dev/null || { echo "bench html: generator failed"; exit 1; }
  "$tool" "$d" >/dev/null 2>"$work/report.err" || { echo "bench html: perfscope-report failed: $(cat "$work/report.err")"; exit 1; }
  ready=() wall=()
  for i in 1 2 3; do
    prof=$(mktemp -d "$work/chromium.XXXXXX")
    t0=$EPOCHREALTIME
    timeout 60 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$prof" \
      --dump-dom "file://$PWD/$d/report.html" >"$work/dom.html" 2>/dev/null
    wall+=("$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b-a}')")
    ready+=("$(grep -o 'data-ready-ms="[0-9]*"' "$work/dom.html" | tr -dc 0-9)")
    rm -rf "$prof"
  done
  med() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
  size=$(stat -c %s "$d/report.html")
  frames=$(grep -o '<rect[^>]*data-name=' "$work/dom.html" | wc -l)
  awk -v s="$stacks" -v b="$size" -v r="$(med "${ready[@]}")" -v w="$(med "${wall[@]}")" -v f="$frames" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
    'BEGIN{printf "  %5d distinct stacks: report.html %.2f MB, DOM ready (last picture drawn) %s ms, chromium --dump-dom %s s wall, %d frames drawn (load %s)\n", s, b/1048576, r, w, f, l}'
done
