#!/usr/bin/env bash
# t_shim_thread_exit: each thread's perf event or timer is closed when the thread exits.
# t_churn starts and joins 240 short threads (4 at a time, 3 ms of CPU each) under the shim at
# 997 Hz, on perf events (where allowed) and on the tick timer:
# - the process's open descriptors and POSIX timers after the churn are those before it (+1;
#   the main thread's own /proc files, which the shim keeps once it reads them, not counted);
# - exit 0, no output from the shim;
# - on perf events: most threads have samples, and the samples cover >= 80% of their CPU time.
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target t_churn
clocks=timer
if perf_events_allowed; then clocks="perf timer"; fi

python3 - $clocks <<'EOF2'
import collections, os, re, sys
import samples
from shimlib import *

pat = re.compile(rb"^fds_before (-?\d+) fds_after (-?\d+) timers_before (-?\d+) timers_after (-?\d+) threads (\d+)\n$")
for clock in sys.argv[1:]:
    what = "t_churn PERFSCOPE_CLOCK=%s HZ=997" % clock
    out = "out-%s" % clock
    res = run([target("t_churn")], shim_env(out, HZ=997, CLOCK=clock), what=what)
    expect_ok(res, what)
    m = pat.match(res.stdout)
    require(m and res.stderr == b"", "%s: output %r %r" % (what, res.stdout, res.stderr[:300]))
    fds0, fds1, tm0, tm1, nthreads = map(int, m.groups())
    info("%s: descriptors %d -> %d, POSIX timers %d -> %d over %d threads" % (what, fds0, fds1, tm0, tm1, nthreads))
    check(fds1 <= fds0 + 1, "%s: %d descriptors open after %d threads came and went, %d before: the threads' events leak"
          % (what, fds1, nthreads, fds0))
    if tm0 >= 0:
        check(tm1 <= tm0 + 1, "%s: %d POSIX timers after %d threads came and went, %d before: the threads' timers leak"
              % (what, tm1, nthreads, tm0))
    if clock == "perf":
        files = samples.bin_files(out)
        sf = samples.read_samples(files[res.pid][0][1] + ".bin")
        per = collections.Counter(s.tid for s in sf.samples if s.tid != res.pid)
        want = nthreads * 0.003 * 997
        info("%s: %d threads with samples, %d samples in them (CPU x rate: %.0f)" % (what, len(per), sum(per.values()), want))
        check(len(per) >= 0.8 * nthreads, "%s: only %d of %d threads have samples" % (what, len(per), nthreads))
        check(sum(per.values()) >= 0.8 * want, "%s: %d samples for the threads' %.2f s of CPU at 997 Hz"
              % (what, sum(per.values()), nthreads * 0.003))
finish()
EOF2
