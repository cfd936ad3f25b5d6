#!/usr/bin/env bash
# t_shim_busy_wakeups: while the target is busy, the shim's threads share their wakeups.
# t_spin burns CPU on two threads under the shim at 199 Hz (the run's leader: writer and watcher).
# Between 1 s after its start (past the writer's quick passes of a young process) and 3 s, the
# voluntary context switches of the shim's threads (every thread but the main one and "spin-2";
# each wakeup from a sleep is one) are counted, and then the run is ended with SIGTERM:
# - counters at their default 100 ms: the leader's watcher wakes for each counter read (the
#   period is the user's setting) and the writer's passes ride on those wakeups: at most one
#   wakeup per counter period plus 3 a second, 2 x (10 + 3) = 26 (before: the writer woke on its
#   own every 100 ms, about 40);
# - counters off (PERFSCOPE_COUNTER_MS=0): the writer passes every 250 ms, the watcher once a
#   second: at most 2 x (4 + 1 + 1) = 12 (before: about 22);
# - meta.json's sampling.shim_threads_wakeups (the whole run, the young process's quick passes
#   included) is at most 20 + 13 per second of the run with counters (before: about 22 a second);
# - nothing recorded is lost by it: counters.jsonl has a line for every 100 ms of the run (at
#   least 80% of them, times increasing, one read per line), and the samples stand for the
#   threads' CPU time (at least 90% of CPU s x 199 after the SIGTERM's last flush).
# Counts of context switches and lines, never timings; a loaded machine delays a wakeup, it adds
# none.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_spin

python3 - <<'EOF2'
import glob, json, os, signal, subprocess, time
import samples
from shimlib import *

def tasks(pid):
    """tid -> (name, voluntary context switches, CPU s) of every thread of pid."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for task in glob.glob("/proc/%d/task/*" % pid):
        tid = int(task.rsplit("/", 1)[1])
        try:
            name, vol = "", 0
            with open(task + "/status") as f:
                for line in f:
                    if line.startswith("Name:"):
                        name = line.split(None, 1)[1].strip()
                    elif line.startswith("voluntary_ctxt_switches:"):
                        vol = int(line.split()[1])
            fields = open(task + "/stat").read().rsplit(")", 1)[1].split()
            out[tid] = (name, vol, (int(fields[11]) + int(fields[12])) / tick)
        except OSError:
            pass
    return out

def shim_switches(pid, t):
    return sum(v for tid, (name, v, _) in t.items() if tid != pid and name != "spin-2")

def case(what, limit, per_s=None, **kw):
    out = "out-%d" % case.n
    case.n += 1
    t0 = time.monotonic()
    p = subprocess.Popen([target("t_spin"), "30"], env=shim_env(out, HZ=199, **kw),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))
    a = shim_switches(p.pid, tasks(p.pid))
    time.sleep(2.0)
    t = tasks(p.pid)
    b = shim_switches(p.pid, t)
    cpu = sum(c for tid, (name, _, c) in t.items() if tid == p.pid or name == "spin-2")
    p.send_signal(signal.SIGTERM)
    o, e = p.communicate(timeout=30)
    require(p.returncode == -signal.SIGTERM, "%s: t_spin ended with %s, not SIGTERM (%r)" % (what, sig_name(p.returncode), e[:300]))
    info("%s: %d threads, the shim's woke %d times in 2 s of a busy target (at most %d)" % (what, len(t), b - a, limit))
    check(len(t) >= 4, "%s: %d thread(s): the shim's threads did not start" % (what, len(t)))
    check(b - a <= limit, "%s: the shim's threads woke %d times in 2 s of a target busy on 2 threads at 199 Hz (at most %d)"
          % (what, b - a, limit))
    with open(os.path.join(out, "meta.json")) as f:
        meta = json.loads(f.read())
    s = meta.get("sampling", {})
    wall = (meta.get("end_ns", 0) - meta.get("t0_ns", 0)) / 1e9
    w = s.get("shim_threads_wakeups")
    require(isinstance(w, (int, float)) and wall > 2.5, "%s: meta.json: wakeups %r, run of %.2f s" % (what, w, wall))
    info("%s: meta.json: %d wakeups in %.2f s (%.1f a second), shim threads %.4f CPU s" % (what, w, wall, w / wall, s.get("shim_threads_cpu_s", -1)))
    if per_s is not None:
        check(w <= 20 + per_s * wall, "%s: meta.json counts %d wakeups of the shim's threads in %.2f s (at most %.0f)"
              % (what, w, wall, 20 + per_s * wall))
    # what is recorded: the samples of the busy threads' CPU time, all of it flushed
    files = samples.bin_files(out)
    require(p.pid in files, "%s: no sample file" % what)
    sf = samples.read_samples(files[p.pid][0][1] + ".bin")
    info("%s: %d samples for %.2f CPU s at the last look" % (what, len(sf.samples), cpu))
    check(len(sf.samples) >= 0.9 * cpu * 199, "%s: %d samples for %.2f CPU s at 199 Hz (want at least 90%%)"
          % (what, len(sf.samples), cpu))
    return out, wall
case.n = 0

out, wall = case("counters every 100 ms", 26, per_s=13)
lines = load_json_lines(os.path.join(out, "counters.jsonl"))
ts = [l.get("t_ns") for l in lines]
info("counters.jsonl: %d lines in %.2f s" % (len(lines), wall))
check(len(lines) >= 0.8 * wall / 0.1, "counters.jsonl has %d lines for %.2f s at 100 ms (want at least 80%%)" % (len(lines), wall))
check(all(isinstance(x, (int, float)) for x in ts) and all(b > a for a, b in zip(ts, ts[1:])),
      "counters.jsonl's t_ns are not increasing: %r" % ts[:20])
gaps = [(b - a) / 1e6 for a, b in zip(ts, ts[1:])]
check(gaps and sorted(gaps)[len(gaps) // 2] < 150, "counters.jsonl: median gap %.1f ms between reads (want ~100)"
      % (sorted(gaps)[len(gaps) // 2] if gaps else -1))
case("counters off", 12, COUNTER_MS=0)
finish()
EOF2
