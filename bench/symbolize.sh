#!/usr/bin/env bash
# bench/symbolize.sh: how fast perfscope-symbolize is and how its memory grows. Generates
# synthetic run folders (bench/symbolize_gen.py: 30-frame stacks over libc, libstdc++, libm) and
# times the tool on them: samples per second and peak RSS (GNU time), at 1,000,000 samples and
# at 200,000 with the same distinct stacks (memory should follow distinct stacks, not samples),
# and at 1,000,000 with 5x the distinct stacks. Writes bench/SYMBOLIZE.md. Reports, never fails
# on figures: exit 0 unless the bench could not run.
# Knobs: SYMBOLIZE_N (default 1000000), SYMBOLIZE_WORK (default build/bench/symbolize).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
tool=$BUILD/perfscope-symbolize
[ -x "$tool" ] || { echo "bench: $tool is not built (make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: GNU time missing (apt-get install time)"; exit 1; }
N=${SYMBOLIZE_N:-1000000}
work=${SYMBOLIZE_WORK:-$BUILD/bench/symbolize}
rm -rf "$work"
mkdir -p "$work"
out=bench/SYMBOLIZE.md
rows=()

measure() { # name samples paths leaves
  local d=$work/$1
  python3 bench/symbolize_gen.py "$d" "$2" "$3" "$4" >/dev/null || { echo "bench: generator failed"; exit 1; }
  local best= cpu= rss= t u s r
  for rep in 1 2 3; do
    /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$tool" "$d" >/dev/null 2>"$work/err.txt" ||
      { echo "bench: $tool $d failed: $(tail -n 3 "$work/err.txt")"; exit 1; }
    read -r t u s r <"$work/time.txt"
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then
      best=$t; rss=$r; cpu=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u + s}')
    fi
  done
  local stacks=$(( $3 * $4 ))
  local rate=$(awk -v n="$2" -v t="$best" 'BEGIN{printf "%.0f", (t > 0 ? n / t : 0)}')
  local bin=$(du -m "$d"/cpuprof.*.bin | awk '{print $1}')
  local load=$(cut -d' ' -f1 /proc/loadavg)
  rows+=("| $1 | $2 | $stacks | $bin MiB | $best s | $cpu s | $rate | $(( rss / 1024 )) MiB | $load |")
  echo "bench: $1: $2 samples, $stacks distinct stacks: $best s wall, $cpu s CPU, $rate samples/s, peak RSS $(( rss / 1024 )) MiB (load $load)"
  rm -rf "$d"
}

measure "1M, 50k stacks" "$N" 2000 25
measure "200k, 50k stacks" $(( N / 5 )) 2000 25
measure "1M, 250k stacks" "$N" 10000 25

{
  echo "# perfscope-symbolize speed and memory"
  echo
  echo "Written by \`bench/symbolize.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))."
  echo "Synthetic run folders (\`bench/symbolize_gen.py\`): 30-frame stacks whose addresses lie in libc,"
  echo "libstdc++ and libm (resolved through libdwfl, with libc's separate debug info when installed),"
  echo "8 threads (a call path runs on one), 3 phases. Best of 3 runs of the whole tool (read and"
  echo "resolve on one thread, then the four outputs written by three): wall time, CPU time (user +"
  echo "system, all threads), peak RSS from GNU time, and the 1-minute load average when the row was"
  echo "measured: on a shared machine the wall time includes waiting for the CPU."
  echo
  echo "| run | samples | distinct stacks | .bin | wall | CPU | samples/s (wall) | peak RSS | load |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "Memory follows distinct stacks and addresses, not samples: the first two rows hold the same"
  echo "stacks at 5x fewer samples. The last row is a worst case: 250,000 distinct 30-frame stacks"
  echo "(over half a million distinct addresses) make a stacks.folded of about 1 GB of long C++ names"
  echo "and as many call tree nodes; time then goes to resolving addresses, building the tree and"
  echo "writing that text, not to the samples."
} >"$out"
echo "bench: wrote $out"
