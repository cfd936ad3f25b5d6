#!/usr/bin/env bash
# t_shim_procs_read: the leader's reads of procs.jsonl (preload/procs.c), counted by strace -f,
# never timed. At every counter line (ten a second) the leader lists the run's live processes
# from procs.jsonl, which every process appends to at its start and exit. A bash leader runs a
# loop of 300 /bin/true beside a background sleep: the file grows to about 1,200 lines while
# the leader reads it.
# - The file is read on from where the last read stopped: all reads of it together are at most
#   2.5 times its final size (once bit by bit, once whole for meta.json's run figures when the
#   first process ends). They were the whole file at every change: tens of times it here, and
#   7% of a core for a loop of 3,000 processes.
# - Its growth is seen through the kept descriptor's fstat: at most 0.2 stat of its path a
#   counter line (1 before).
# - What it lists is still right: the sleep's memory is on counter lines written after the loop
#   (hundreds of lines after its start line), and a process whose exit line was read is gone.
# - A process started when the file is already large (1 MB) is listed from the next counter
#   lines on: the reads go on past each 16 KiB buffer (they stopped at the first cut line).
set -u
. "$ROOT/tests/lib.sh"
need_shim
command -v strace >/dev/null 2>&1 || skip "strace is not installed: the system calls cannot be counted"

mkdir -p out
strace -f -y -qq -e trace=read,pread64,newfstatat,stat -o trace.txt -E LD_PRELOAD="$SHIM" -E PERFSCOPE_OUT="$PWD/out" \
    bash -c 'sleep 30 & echo $! >sleep.pid; for ((i = 0; i < 300; i++)); do /bin/true; done
             sleep 0.5; kill $!; wait' >stdout.txt 2>stderr.txt
check "the run wrote nothing (stdout $(wc -c <stdout.txt) bytes, stderr $(wc -c <stderr.txt))" \
    [ ! -s stdout.txt ] && [ ! -s stderr.txt ]

py_check "procs.jsonl reads" - <<'EOF'
import json, os, re
from checks import check, finish
path = os.path.abspath("out/procs.jsonl")
size = os.path.getsize(path)
reads = stats = 0
for l in open("trace.txt", errors="replace"):
    m = re.match(r"\d+\s+(?:read|pread64)\(\d+<([^>]*)>.*\)\s+=\s+(\d+)", l)
    if m and m.group(1) == path:
        reads += int(m.group(2))
    if re.match(r'\d+\s+(?:newfstatat\(AT_FDCWD(?:<[^>]*>)?, |stat\()"%s"' % re.escape(path), l):
        stats += 1
procs = [json.loads(l) for l in open(path)]
lines = [json.loads(l) for l in open("out/counters.jsonl") if l.strip()]
n = len(lines)
print("procs.jsonl: %d lines, %d bytes; read %d bytes in all (%.2f times its size); %d stat of its path for %d counter lines"
      % (len(procs), size, reads, reads / size, stats, n))
check(len(procs) >= 1200, "%d lines in procs.jsonl (a start and an exit line of 300 processes, each also exec)" % len(procs))
check(reads <= 2.5 * size, "%d bytes of procs.jsonl read, %.1f times its %d (at most 2.5)" % (reads, reads / size, size))
check(stats <= 0.2 * n + 2, "%d stat of procs.jsonl's path for %d counter lines (at most 0.2 a line)" % (stats, n))
sleep_pid = open("sleep.pid").read().strip()
exits = {str(p["pid"]): p["t_ns"] for p in procs if p["event"] == "exit"}
trues = {str(p["pid"]) for p in procs if p.get("exe", "").endswith("/true")}
check(len(trues) == 300, "%d start lines of /bin/true (300 run)" % len(trues))
loop_end = max([t for p, t in exits.items() if p in trues] or [0])  # the last one's exit line
after = [l for l in lines if loop_end < l["t_ns"] < exits.get(sleep_pid, float("inf"))]
check(after, "no counter line between the loop's end and the sleep's exit")
check(all(sleep_pid in l.get("rss_anon_by_pid", {}) for l in after),
      "the sleep (pid %s) missing from a counter line after the loop: %s" % (sleep_pid, [sorted(l.get("rss_anon_by_pid", {})) for l in after]))
gone = [(l["t_ns"], p) for l in lines for p in l.get("rss_anon_by_pid", {}) if p in exits and exits[p] + 100000000 < l["t_ns"]]
check(not gone, "a process listed 100 ms after its exit line: %s" % gone[:3])
finish()
EOF

# A file already large when a process starts (a long build's, here 1 MB of lines another process
# appended): the new process is listed at the next counter lines all the same, not once the
# reads have caught up (they read 16 KiB a counter line at first: 6 s behind here).
cat >filler.py <<'PY'
import sys
line = '{"pid":999999,"ppid":1,"event":"exit","t_ns":1,"status":"ok"}\n'
with open(sys.argv[1], "a") as f:
    f.write(line * (1000000 // len(line)))
PY
mkdir -p out2
LD_PRELOAD="$SHIM" PERFSCOPE_OUT="$PWD/out2" bash -c 'python3 filler.py out2/procs.jsonl
    sleep 30 & echo $! >late.pid; sleep 1; kill $!; wait' >stdout2.txt 2>stderr2.txt
py_check "a large procs.jsonl" - <<'EOF'
import json
from checks import check, finish
procs = [json.loads(l) for l in open("out2/procs.jsonl")]
pid = int(open("late.pid").read())
start = [p["t_ns"] for p in procs if p["pid"] == pid and p["event"] == "start"]
end = [p["t_ns"] for p in procs if p["pid"] == pid and p["event"] == "exit"]
lines = [json.loads(l) for l in open("out2/counters.jsonl") if l.strip()]
if check(start and end, "the sleep's start and exit lines (pid %d)" % pid):
    span = [l for l in lines if start[0] + 300000000 < l["t_ns"] < end[0]]
    print("procs.jsonl %d lines; %d counter lines from 0.3 s after the sleep's start to its exit" % (len(procs), len(span)))
    check(span, "no counter line in the sleep's life")
    missing = [l["t_ns"] for l in span if str(pid) not in l.get("rss_anon_by_pid", {})]
    check(not missing, "the sleep (pid %d) missing from %d of %d counter lines in its life" % (pid, len(missing), len(span)))
finish()
EOF
checks_done
