#!/usr/bin/env bash
# t_shim_failexec_refresh: after an exec that fails, every thread samples on. Under
# PERFSCOPE_PERF_DELIVERY=refresh a thread's perf event fires once and waits for the handler to
# re-arm it; a signal that came while the way out had closed the record (the failed exec's
# shim_finish) was not re-armed, and that thread took no sample again (a worker with 0 samples
# in the 0.7 s after the failed exec in 5 of 8 runs). tests/targets/r_failexec_threads.c, 6 runs at 997 Hz.
set -u
. "$ROOT/tests/lib.sh"
need_shim
perf_events_allowed || skip "perf events refused here: refresh delivery needs them"
build_target r_failexec_threads -pthread

python3 - <<'EOF2'
import os
import samples
from shimlib import *

for i in range(6):
    out, what = "out-%d" % i, "r_failexec_threads (run %d)" % (i + 1)
    res = run([target("r_failexec_threads")], shim_env(out, HZ=997, CLOCK="perf", PERF_DELIVERY="refresh"), what=what)
    if not check(res.rc == 0, "%s: rc %r" % (what, res.rc)):
        continue
    t0 = int(res.stdout.split()[0])
    files = samples.bin_files(out).get(res.pid, [])
    per = {}
    for f in files:
        for s in samples.read_samples(f[1] + ".bin").samples:
            b, a = per.get(s.tid, (0, 0))
            per[s.tid] = (b + (s.t < t0), a + (s.t >= t0))
    check(len(per) == 3, "%s: samples of %d threads, want 3: %r" % (what, len(per), per))
    check(all(a > 50 for b, a in per.values()),
          "%s: (before, after the failed exec) per thread %r: each should sample on for 0.7 s" % (what, sorted(per.values())))

finish()
EOF2
