#!/usr/bin/env bash
# t_shim_wakeups: the shim's own threads do not wake when nothing changes.
# t_idle (one thread, blocked reading stdin: no CPU, no samples, no mappings changing) runs under
# the shim (199 Hz, the leader: writer and watcher threads). Between 1 s after its start (past
# the writer's quick passes of a young process) and 3 s, the voluntary context switches of every
# thread but the main one (the shim's threads: each wakeup from a sleep is one) are counted:
# - counters off (PERFSCOPE_COUNTER_MS=0): at most 5 a second in all (10 in the 2 s);
# - with a markers file (inotify-watched), counters off: the same;
# - counters at their default 100 ms: at most 5 a second plus one per counter period (the
#   period is the user's setting, its reads are its own wakeups): 2 x (5 + 10) = 30;
# - meta.json's sampling.shim_threads_wakeups counts the shim threads' passes, and the report
#   states the shim's own cost ("- perfscope's own threads: ... CPU s ..., N wakeups").
# A count of context switches, never a timing; a loaded machine delays a wakeup, it adds none.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_idle

python3 - <<'EOF2'
import glob, json, os, subprocess, time
from shimlib import *

def shim_switches(pid):
    n = 0
    for task in glob.glob("/proc/%d/task/*" % pid):
        if int(task.rsplit("/", 1)[1]) == pid:
            continue
        try:
            with open(task + "/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        n += int(line.split()[1])
        except OSError:
            pass
    return n

def case(what, limit, **kw):
    out = "out-%d" % case.n
    case.n += 1
    p = subprocess.Popen([target("t_idle")], env=shim_env(out, **kw), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(1.0)
    threads = len(os.listdir("/proc/%d/task" % p.pid))
    a = shim_switches(p.pid)
    time.sleep(2.0)
    b = shim_switches(p.pid)
    o, e = p.communicate(b"", timeout=30)
    require(p.returncode == 0 and o == b"" and e == b"", "%s: exit %d, output %r %r" % (what, p.returncode, o, e[:300]))
    info("%s: %d threads, the shim's woke %d times in 2 s (at most %d)" % (what, threads, b - a, limit))
    check(threads >= 2, "%s: only %d thread(s): the shim's threads did not start" % (what, threads))
    check(b - a <= limit, "%s: the shim's threads woke %d times in 2 s of an idle target (at most %d)"
          % (what, b - a, limit))
    return out
case.n = 0

case("counters off", 10, COUNTER_MS=0)
case("markers file, counters off", 10, COUNTER_MS=0, LLMPERFSCOPE_MARKERS=os.path.abspath("markers.txt"))
out = case("counters every 100 ms", 30)
with open(os.path.join(out, "meta.json")) as f:
    lines = [l for l in f.read().splitlines() if l.strip()]
s = json.loads(lines[-1]).get("sampling", {})
w = s.get("shim_threads_wakeups")
check(isinstance(w, (int, float)) and 20 <= w <= 200,
      "meta.json sampling.shim_threads_wakeups is %r after ~3 s with counters every 100 ms (want 20-200)" % (w,))
rep = subprocess.run([os.path.join(os.environ["TOOLS"], "perfscope-report"), out], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, timeout=120)
line = [l for l in rep.stdout.decode(errors="replace").splitlines() if l.startswith("- perfscope's own threads: ")]
check(rep.returncode == 0 and len(line) == 1 and (" %.0f wakeups" % w) in line[0],
      "the report states the shim's own cost with meta.json's %r wakeups: rc %d, lines %r" % (w, rep.returncode, line))
# The target slept: its few milliseconds of sampled CPU are too little to put the shim's CPU as a
# share of (it read "137%" for a sleep).
check(len(line) == 1 and "is too little for a share" in line[0] and "%" not in line[0],
      "the report puts no share of a sleeping target's CPU on the shim's threads: %r" % line)
finish()
EOF2
