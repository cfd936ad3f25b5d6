#!/usr/bin/env bash
# t_shim_proc_reads: the system calls of the shim's own threads for the /proc files they read
# every period (preload/fdcache.c), counted by strace -f, never timed. t_idle (blocked reading
# stdin: no samples) runs 3 s under the shim at its defaults (counters every 100 ms: each read
# takes the run's pids and /proc/<pid>/statm). A /proc file kept open is bound to its process
# and has no rename, so it is read without a stat of its path first, and a read shorter than
# asked is its end (one record): per counter line the shim's threads make at most 1.5 pread64
# (2.3 before: a second read met the end of file) and at most 0.3 stat of a /proc path (1.1
# before). The counters still hold the memory of the run's process on every line.
set -u
. "$ROOT/tests/lib.sh"
need_shim
command -v strace >/dev/null 2>&1 || skip "strace is not installed: the system calls cannot be counted"
build_target t_idle

mkdir -p out
(sleep 3) | strace -f -o trace.txt -E LD_PRELOAD="$SHIM" -E PERFSCOPE_OUT="$PWD/out" \
    "$TBUILD/t_idle" >stdout.txt 2>stderr.txt || fail "t_idle under the shim and strace failed"
check "t_idle wrote nothing (stdout $(wc -c <stdout.txt) bytes, stderr $(wc -c <stderr.txt))" \
    [ ! -s stdout.txt ] && [ ! -s stderr.txt ]

py_check "system calls" - <<'EOF'
import json, re
from checks import check, finish
trace = open("trace.txt", errors="replace").read().splitlines()
main = trace[0].split()[0]
shim = [l for l in trace if l.split()[0] != main]  # the shim's threads: every thread but t_idle's
preads = sum(1 for l in shim if re.match(r"\d+\s+pread64\(", l))
proc_stats = sum(1 for l in shim if re.match(r'\d+\s+newfstatat\(AT_FDCWD, "/proc/', l))
lines = [json.loads(l) for l in open("out/counters.jsonl") if l.strip()]
n = len(lines)
print("%d counter lines; the shim's threads: %d pread64 (%.2f a line), %d stat of a /proc path (%.2f a line)"
     % (n, preads, preads / max(n, 1), proc_stats, proc_stats / max(n, 1)))
check(n >= 10, "only %d counter lines in 3 s at 100 ms" % n)
pid = str(int(main))
check(all(l.get("rss_anon_by_pid", {}).get(pid, 0) > 0 for l in lines),
      "a counter line without the memory of pid %s: %s" % (pid, [l.get("rss_anon_by_pid") for l in lines][:5]))
check(preads <= 1.5 * n, "%d pread64 for %d counter lines (at most 1.5 a line)" % (preads, n))
check(proc_stats <= 0.3 * n, "%d stat calls of a /proc path for %d counter lines (at most 0.3 a line)" % (proc_stats, n))
finish()
EOF
checks_done
