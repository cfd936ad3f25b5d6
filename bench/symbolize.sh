#!/usr/bin/env bash
# bench/symbolize.sh: how fast perfscope-symbolize is and how its memory grows; `make bench` runs
# it after the overhead pairs (bench/run.sh), and it runs alone as well. Generates synthetic run
# folders (bench/symbolize_gen.py: 30-frame stacks over libc, libstdc++, libm) and times the tool
# on them: samples per second and peak RSS (GNU time), at N samples over N/20 distinct stacks,
# at N/5 samples with the same stacks (memory should follow distinct stacks, not samples), and
# at N with 5x the distinct stacks; then the issue's fixed points: 1,000 samples (the fixed
# cost), 1M samples of 30 frames over 50k distinct stacks beside 200k samples of the same 50k
# stacks (time, and peak RSS that must not grow with samples), and the tool against the
# reference harness's Python reader (tests/samples.py reference_read_samples, which only reads)
# on two 200k-sample files (100 and 10k distinct stacks; the first also with the debug info cache
# off), paired and alternated, as ratios. Every run uses the bench's own debug info cache (empty
# at the start, so its first run writes libc's copy), and the fixed cost is also measured with
# that cache off and cold (emptied before each run). Writes its tables as the
# "Symbolizer" section of bench/RESULTS.md (replacing that section, leaving the rest of the file
# as it is). Reports, never fails on figures: exit 0 unless the bench could not run.
# Knobs: SYMBOLIZE_N (default 200000, to keep make bench bounded; 1000000 gives the million-sample
# figures of the first table, over 50,000 and 250,000 stacks), SYMBOLIZE_BIG (default 1000000:
# the samples of the fixed-point row; 0 leaves it out), SYMBOLIZE_PAIRS (default 5: pairs of the
# reference comparison), SYMBOLIZE_WORK (default build/bench/symbolize), SYMBOLIZE_OUT (default
# bench/RESULTS.md).
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
tool=$BUILD/perfscope-symbolize
[ -x "$tool" ] || { echo "bench: $tool is not built (make)"; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: GNU time missing (apt-get install time)"; exit 1; }
N_DEFAULT=200000
N=${SYMBOLIZE_N:-$N_DEFAULT}
BIG=${SYMBOLIZE_BIG:-1000000}
PAIRS=${SYMBOLIZE_PAIRS:-5}
work=${SYMBOLIZE_WORK:-$BUILD/bench/symbolize}
out=${SYMBOLIZE_OUT:-bench/RESULTS.md}
rm -rf "$work"
mkdir -p "$work"
rows=()
# The symbolizer's debug info cache (docs/symbolize.md): the bench's own, so that what it holds
# is known: empty at the start (the first run writes libc's copy), warm after it.
cache=$work/debug-cache
export PERFSCOPE_DEBUG_CACHE=$cache

# 1000000 -> 1M, 200000 -> 200k, 50000 -> 50k
short() { awk -v n="$1" 'BEGIN{ if (n >= 1e6 && n % 1e6 == 0) printf "%dM", n / 1e6;
  else if (n >= 1e3 && n % 1e3 == 0) printf "%dk", n / 1e3; else printf "%d", n }'; }

# measure name samples paths leaves [keep]: one row of $rows; keep: leave the folder for later.
# MEASURE_CACHE=off: the debug info cache off; cold: emptied before each run (what the first
# run on a machine pays, the copies' writing included); else warm.
measure() {
  local d=$work/$1
  python3 bench/symbolize_gen.py "$d" "$2" "$3" "$4" >/dev/null || { echo "bench: generator failed"; exit 1; }
  last_dir=$d
  local best= cpu= rss= t u s r dc=$cache
  [ "${MEASURE_CACHE:-}" = off ] && dc=0
  for rep in 1 2 3; do
    [ "${MEASURE_CACHE:-}" = cold ] && rm -rf "$cache"
    PERFSCOPE_DEBUG_CACHE=$dc /usr/bin/time -f "%e %U %S %M" -o "$work/time.txt" "$tool" "$d" >/dev/null 2>"$work/err.txt" ||
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
  last_wall=$best last_cpu=$cpu last_rss=$(( rss / 1024 ))
  [ "${5:-}" = keep ] || rm -rf "$d"
}

# "wall CPU" seconds (CPU: user + system) of one command, to the microsecond (bench/timeit.py:
# GNU time's hundredths were a quarter of the symbolizer's time on the compared files).
time_of() {
  python3 bench/timeit.py "$@" >"$work/cpu.txt" 2>"$work/err.txt" ||
    { echo "bench: $* failed: $(tail -n 3 "$work/err.txt")"; exit 1; }
  awk '{printf "%.4f %.4f", $1, $2}' "$work/cpu.txt"
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }

# 25 leaves a call path: N/20 distinct stacks, then 5x as many.
paths=$(( N / 500 > 0 ? N / 500 : 1 ))
measure "$(short "$N"), $(short $(( paths * 25 ))) stacks" "$N" "$paths" 25
measure "$(short $(( N / 5 ))), $(short $(( paths * 25 ))) stacks" $(( N / 5 )) "$paths" 25
measure "$(short "$N"), $(short $(( paths * 125 ))) stacks" "$N" $(( paths * 5 )) 25

# The issue's fixed points. 1,000 samples over few stacks: what any run pays (opening the
# modules' symbols and DWARF). 200k and 1M samples over the same 50k distinct 30-frame stacks.
rows_main=("${rows[@]}")
rows=()
measure "1k, 25 stacks" 1000 1 25
fixed_cpu=$last_cpu fixed_wall=$last_wall
MEASURE_CACHE=off measure "1k, 25 stacks, debug info cache off" 1000 1 25
off_cpu=$last_cpu off_wall=$last_wall
MEASURE_CACHE=cold measure "1k, 25 stacks, debug info cache cold" 1000 1 25
cold_cpu=$last_cpu cold_wall=$last_wall
measure "1k, 25 stacks" 1000 1 25 # the cold runs emptied it: warm again for what follows
unset 'rows[-1]'
measure "200k, 50k stacks" 200000 2000 25
rss_200k=$last_rss
big_wall= big_cpu= rss_big=
if [ "$BIG" -gt 0 ]; then
  measure "$(short "$BIG"), 50k stacks" "$BIG" 2000 25
  big_wall=$last_wall big_cpu=$last_cpu rss_big=$last_rss
fi
rows_fixed=("${rows[@]}")

# Against the reference reader, paired and alternated (the order of the tool's run, the reader's
# and the Python start's rotates pair by pair), on two 200k-sample files: 100 distinct stacks (a profile of a few hot loops)
# and 10k: wall and CPU seconds of the whole tool (read, resolve, write the five outputs) and
# of the Python reader (read only), and of the Python start the reader's time includes (the
# interpreter and the reader's module imported, nothing read). Ratios of the medians, each
# with its verdict against the 20x target: the file decides it, so every file has its line.
refs=() ref_verdicts=()
ref_pair() { # name paths leaves [off: the debug info cache off]
  measure "$1" 200000 "$2" "$3" keep
  local d=$last_dir ow=() oc=() tw=() tc=() pw=() w c dc=$cache label= i
  [ "${4:-}" = off ] && dc=0 label=", debug info cache off"
  local ref='import sys; sys.path.insert(0, "tests"); import samples, glob
samples.reference_read_samples(glob.glob(sys.argv[1] + "/cpuprof.*.bin")[0])'
  local order=(tool reader start) k
  for i in $(seq "$PAIRS"); do
    for k in 0 1 2; do # the three runs' order rotates pair by pair
      case ${order[$(( (k + i) % 3 ))]} in
        tool) read -r w c <<<"$(PERFSCOPE_DEBUG_CACHE=$dc time_of "$tool" "$d")"; ow+=("$w"); oc+=("$c") ;;
        reader) read -r w c <<<"$(time_of python3 -c "$ref" "$d")"; tw+=("$w"); tc+=("$c") ;;
        start) read -r w c <<<"$(time_of python3 -c 'import sys; sys.path.insert(0, "tests"); import samples, glob')"
          pw+=("$w") ;;
      esac
    done
  done
  local mow=$(median "${ow[@]}") moc=$(median "${oc[@]}") mtw=$(median "${tw[@]}") mtc=$(median "${tc[@]}")
  local mpw=$(median "${pw[@]}")
  local rw=$(awk -v a="$mtw" -v b="$mow" 'BEGIN{printf "%.1f", (b > 0 ? a / b : 0)}')
  local rc=$(awk -v a="$mtc" -v b="$moc" 'BEGIN{printf "%.1f", (b > 0 ? a / b : 0)}')
  local rn=$(awk -v a="$mtw" -v p="$mpw" -v b="$mow" 'BEGIN{printf "%.1f", (b > 0 ? (a - p) / b : 0)}')
  local name="200k samples, $(( $2 * $3 )) stacks$label"
  refs+=("| $name | $mtw s / $mtc s | $mpw s | $mow s / $moc s | **${rw}x** / ${rc}x | ${rn}x | $(cut -d' ' -f1 /proc/loadavg) |")
  local v=MISSED
  awk -v r="$rw" 'BEGIN{exit !(r >= 20)}' && v=met
  ref_verdicts+=("- target: the symbolizer at least 20x the reference reader, $name: ${rw}x wall -> $v (${rc}x by CPU; ${rn}x without the Python start)")
  echo "bench: $1: reference reader $mtw s wall $mtc s CPU (Python start $mpw s), perfscope-symbolize $mow s wall $moc s CPU (medians of $PAIRS pairs): ${rw}x wall, ${rc}x CPU"
  rm -rf "$d"
}
ref_pair "ref, 100 stacks" 4 25
ref_pair "ref, 100 stacks, cache off" 4 25 off
ref_pair "ref, 10k stacks" 400 25
rows=("${rows_main[@]}")

section=$work/section.md
{
  echo "## Symbolizer: speed and memory"
  echo
  echo "Written by \`bench/symbolize.sh\` (run by \`make bench\` after the pairs above, or alone) on $(date -u +%Y-%m-%d), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')), SYMBOLIZE_N=$N."
  echo "Synthetic run folders (\`bench/symbolize_gen.py\`): 30-frame stacks whose addresses lie in libc,"
  echo "libstdc++ and libm (resolved through libdwfl, with libc's separate debug info when installed),"
  echo "8 threads (a call path runs on one), 3 phases. Best of 3 runs of the whole tool (the samples"
  echo "read on one thread while another resolves new stacks, then the five outputs written by three):"
  echo "wall time, CPU time (user +"
  echo "system, all threads), peak RSS from GNU time, and the 1-minute load average when the row was"
  echo "measured: on a shared machine the wall time includes waiting for the CPU."
  echo
  echo "| run | samples | distinct stacks | .bin | wall | CPU | samples/s (wall) | peak RSS | load |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  if [ "$N" = "$N_DEFAULT" ]; then
    echo "N=$N samples: the default, small enough for \`make bench\` to stay bounded;"
  else
    echo "N=$N samples (the default is $N_DEFAULT);"
  fi
  echo "\`SYMBOLIZE_N=1000000 bench/symbolize.sh\` gives the million-sample figures. The samples fall"
  echo "on N/20 distinct stacks, 20 each on average. Memory follows distinct stacks and addresses,"
  echo "not samples: the first two rows hold the same stacks at 5x fewer samples. The last row is a"
  echo "worst case: 5x the distinct 30-frame stacks (at N=1000000, 250,000 of them: over half a"
  echo "million distinct addresses and a stacks.folded of about 1 GB of long C++ names) and as many"
  echo "call tree nodes; time then goes to resolving addresses, building the tree and writing that"
  echo "text, not to the samples."
  echo
  echo "### Fixed points (issue 9)"
  echo
  echo "| run | samples | distinct stacks | .bin | wall | CPU | samples/s (wall) | peak RSS | load |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows_fixed[@]}"
  echo
  echo "- Fixed cost (1,000 samples over 25 stacks): $fixed_wall s wall, $fixed_cpu s CPU with the debug"
  echo "  info cache warm (every row but the two below: the bench's own cache, which its first run"
  echo "  fills); $off_wall s wall, $off_cpu s CPU with it off, nearly all of it libdw inflating libc's"
  echo "  compressed separate debug info (libc6-dbg: 4 MB of zlib-compressed .debug_* sections, 10 MB"
  echo "  inflated, whole, by dwarf_begin_elf on the first libc address); $cold_wall s wall, $cold_cpu s CPU"
  echo "  for the run that meets an empty cache and writes libc's copy (once per libc build)."
  echo "  Without libc6-dbg none of it is paid (and libc gets no inline frames or lines)."
  if [ -n "$big_wall" ]; then
    echo "- $(short "$BIG") samples of 30 frames over 50k distinct stacks: $big_wall s wall, $big_cpu s CPU"
    echo "  (target: at most 2 s -> $(awk -v w="$big_wall" 'BEGIN{print (w <= 2 ? "met" : "MISSED")}')). Peak RSS $rss_200k MiB at 200k samples, $rss_big MiB at $(short "$BIG"):"
    echo "  memory follows the distinct stacks, not the samples."
  fi
  echo "- Against the reference harness's Python reader (tests/samples.py reference_read_samples,"
  echo "  which only reads and unpacks the records; target: the symbolizer 20x faster), on the same"
  echo "  files, medians of $PAIRS pairs (the tool, the reader and the Python start, in an order that"
  echo "  rotates pair by pair), wall / CPU (each timed to the microsecond by"
  echo "  bench/timeit.py: wall around the child alone, CPU from wait4); the Python start is that of"
  echo "  the interpreter with the reader's module imported, which the reader's wall time includes:"
  echo
  echo "| file | reference reader | its Python start (wall) | perfscope-symbolize (read, resolve, five outputs) | ratio wall / CPU | ratio wall, Python start left out | load |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${refs[@]}"
  echo
  printf '%s\n' "${ref_verdicts[@]}"
  echo "- The reference reader only reads and unpacks the records; the symbolizer also resolves every"
  echo "  distinct address (libdwfl: function, inline frames, line) and writes five outputs, so its time"
  echo "  grows with the distinct stacks and the reader's does not: 100 stacks is a profile of a few hot"
  echo "  loops, 10k the bench's many-stack worst case, where its time goes to resolving the addresses. With"
  echo "  the debug info cache off, every run inflates libc's compressed debug info (the fixed cost above)."
} >"$section"

# The section replaces its earlier self in $out (or is added at the end); the rest of the file,
# written by bench/analyze.py, is kept as it is. Written to a temporary name, then renamed.
python3 - "$out" "$section" <<'PY' || { echo "bench: cannot write $out"; exit 1; }
import os, sys
path, section = sys.argv[1], open(sys.argv[2]).read()
try:
    text = open(path).read()
except FileNotFoundError:
    text = "# perfscope bench results\n"
head = "\n## Symbolizer: speed and memory\n"
at = text.find(head)
if at >= 0:
    end = text.find("\n## ", at + len(head))
    text = text[:at + 1] + (text[end + 1:] if end >= 0 else "")
text = text.rstrip("\n") + "\n\n" + section
tmp = "%s.tmp.%d" % (path, os.getpid())
with open(tmp, "w") as f:
    f.write(text)
os.replace(tmp, path)
PY
rm -f "$section"
echo "bench: wrote the symbolizer section of $out"
