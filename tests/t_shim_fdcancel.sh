#!/usr/bin/env bash
# t_shim_fdcancel: the descriptor gate (preload/fdgate.h) survives threads that end inside it,
# and a thread never waits for itself (tests/targets/r_fdcancel.c, under the shim at 997 Hz: the
# perf clock opens a descriptor in every new thread, announced to the gate).
# 1. inclose: a thread cancelled inside close() (the gate had counted its call and never
#    uncounted it): before the fix each later thread start waited 52 ms for it (50 of 50), and
#    the exit 0.3 s. Checked: at most 1 of 50 thread starts over 40 ms, at most 2 closes of the
#    main thread's 2 s of them over 40 ms.
# 2. atstart: 100 threads cancelled as soon as created (in the shim's start of the thread, inside
#    its perf event's announcement): before the fix every later close of the target's waited 50
#    ms (199 of 200), and each dead thread left its perf event's descriptor at a low number (the
#    next free number was 204). Checked: the next free number is 3 and at most 2 of 200 closes
#    over 40 ms.
# 3. inhandler: a signal handler's close on a new thread whose start is waiting in the gate (for
#    another thread's close that lingers a second): before the fix it waited for its own
#    thread's announcement, 45-52 ms in 4 of 4 rounds. Checked: at most 2 of 4 over 30 ms (a
#    round may still wait for another thread's allocation that waits, announced, for the
#    lingering close: the gate's bound, at most 50 ms, mostly the first round).
# 4. busystart: 200 thread starts while 8 threads close high numbers in a loop. A version of the
#    fix whose allocations withdrew while a close was under way took 50 ms a start (176 of 200
#    over 40 ms; 0.3 ms without the shim). Checked: at most 10 of 200 over 40 ms.
# 5. longjmp: a handler siglongjmps out of a thread's lingering close, and the thread then ends by
#    pthread_exit (another by cancellation): a version of the fix that ended the close's call
#    in a cleanup handler left the thread's cleanup chain pointing into the dead frame, and both
#    died of SIGSEGV. Checked: exit 0, both threads ended as asked.
# 6. latecancel: threads with a cancellation pending that return without passing a cancellation
#    point: pthread_join must get their value (20 of 20 without the shim); the shim's end of the
#    thread closed its clock, a cancellation point, and 20 of 20 were reported cancelled.
# 7. dup2cancel: threads with a cancellation pending that call only dup2 (no cancellation point)
#    and return 7, while 3 threads start threads (PERFSCOPE_UNWIND=fp: the gate alone): the gate's
#    wait slept with the C library's nanosleep, a cancellation point, and 7-9 of 20 were
#    cancelled. Checked: 20 of 20 joined with 7.
# 8. spincancel: 8 threads with a cancellation pending that compute 0.3 s calling nothing, at
#    the defaults (199 Hz, libunwind): libunwind's address checks in the SIGPROF handler (write,
#    read, msync) are cancellation points, and 2-3 of 4 were cancelled inside the handler.
#    Checked: 8 of 8 joined with 7.
# 9. holdstart: number 0 closed, a thread opening, reading and closing a file (on 0) in a loop
#    with 2 ms of work between, while 30 threads are started: every thread start waited for the
#    gate's bound (40-51 ms), each close of 0 starting its wait for 0 to be filled over again.
#    Checked: at most 3 of 30 over 20 ms (0.02 ms without the shim; 2.7 ms now: one cycle of the
#    program's, waited for once).
# 10. reopen: close(0) then open("/dev/null") 20,000 times, 5 us apart, while another process
#    appends marker lines (the watcher opens its files at every line; counters every 1 ms), 3
#    runs: the rule of 9, as first written, let an allocation go ahead as soon as the number had
#    been filled and freed again once, and the program's open missed 0 in 1-2 of 20,000 rounds
#    in 5 of 8 runs. Checked: never.
# 11. asynccancel: 400 threads in asynchronous cancellation cancelled while computing at 199 Hz
#    (libunwind), then 20 dlopen and dlclose pairs: threads unwound out of the SIGPROF handler's
#    walk left its count up (66 of 400), so the first dlclose waited the whole 100 ms for walks
#    that were over and libunwind went off for the run. Checked: the pairs take under 50 ms and
#    perfscope.log never says a dlclose waited for the handler's walks.
# 12. ownhandler: the program's own SIGPROF handler (ITIMER_PROF), on a thread in asynchronous
#    cancellation, never returns; the thread must be cancelled there. The shim's handler, which
#    calls the program's, blocks the C library's cancellation signal during its samples: before
#    it opened it again for the program's handler, the cancellation never came (joined after 3
#    s: no). Checked: cancelled, as without the shim.
# 13. ownlongjmp: a thread leaves its own SIGPROF handler by longjmp (a CPU-time limit's way),
#    which keeps the handler's mask, opens SIGPROF again and sleeps; cancelled there. With the
#    cancellation signal left blocked by the shim's handler the cancellation never came.
#    Checked: cancelled, as without the shim.
# Each also without the shim, for the program's own figures.
set -u
. "$ROOT/tests/lib.sh"
need_shim
perf_events_allowed || skip "perf events not allowed here (perf_event_paranoid or seccomp): the gate's thread-start case needs them"
build_target r_fdcancel -pthread

python3 - <<'EOF2'
import os
import re
import subprocess
from shimlib import *


def figures(res, what, mode):
    require(res.rc == 0, "%s: exit %s, output %r %r" % (what, res.rc, res.stdout, res.stderr[-300:]))
    line = res.stdout.decode()
    require(line.startswith(mode + " "), "%s: output %r" % (what, line))
    return {k: (float(v) if re.match(r"[\d.]+$", v) else v) for k, v in re.findall(r"(\w+)=([\w.]+)", line)}


settings = {"spincancel": dict(HZ=199), "asynccancel": dict(HZ=199),
            "dup2cancel": dict(HZ=997, COUNTER_MS=0, UNWIND="fp")}
for mode in ("inclose", "atstart", "inhandler", "busystart", "longjmp", "latecancel", "dup2cancel", "spincancel",
             "holdstart", "asynccancel", "ownhandler", "ownlongjmp"):
    bare = figures(run([target("r_fdcancel"), mode], plain_env(), what=mode), mode + " without the shim", mode)
    env = shim_env("out-" + mode, **settings.get(mode, dict(HZ=997, COUNTER_MS=0)))
    got = figures(run([target("r_fdcancel"), mode], env, what=mode), mode + " under the shim", mode)
    info("%s: without the shim %r; under it %r" % (mode, bare, got))
    if mode == "inclose":
        check(got["starts_over_40ms"] <= 1,
              "after a thread cancelled inside close(), %d of 50 thread starts took over 40 ms" % got["starts_over_40ms"])
        check(got["closes_over_40ms"] <= 2,
              "after a thread cancelled inside close(), %d of %d closes took over 40 ms"
              % (got["closes_over_40ms"], got["closes"]))
    elif mode == "atstart":
        check(got["next_fd"] == bare["next_fd"],
              "after 100 threads cancelled at their start the next free number is %d, %d without the shim"
              % (got["next_fd"], bare["next_fd"]))
        check(got["closes_over_40ms"] <= 2,
              "after 100 threads cancelled at their start, %d of 200 closes took over 40 ms" % got["closes_over_40ms"])
    elif mode == "busystart":
        check(got["starts_over_40ms"] <= 10,
              "with 8 threads closing in a loop, %d of 200 thread starts took over 40 ms (mean %.2f ms, %.2f without "
              "the shim)" % (got["starts_over_40ms"], got["mean_ms"], bare["mean_ms"]))
    elif mode == "longjmp":
        check(got == bare == {"exit": "joined", "cancel": "canceled"},
              "after a handler's longjmp out of a close: %r under the shim, %r without" % (got, bare))
    elif mode in ("dup2cancel", "spincancel"):
        n = 20 if mode == "dup2cancel" else 8
        check(got["returned"] == bare["returned"] == n,
              "%s: %d of %d threads with a cancellation pending and no cancellation point joined with their value "
              "under the shim (%d cancelled), %d without" % (mode, got["returned"], n, got["canceled"], bare["returned"]))
    elif mode == "holdstart":
        check(got["starts_over_20ms"] <= 3,
              "with number 0 opened and closed in a loop, %d of 30 thread starts took over 20 ms (mean %.2f ms, %.2f "
              "without the shim)" % (got["starts_over_20ms"], got["mean_ms"], bare["mean_ms"]))
    elif mode == "asynccancel":
        log = open("out-asynccancel/perfscope.log").read() if os.path.exists("out-asynccancel/perfscope.log") else ""
        check(got["canceled"] == 400 and got["dl_ms"] < 50 and "waited 100 ms" not in log,
              "after 400 threads in asynchronous cancellation were cancelled: %d cancelled, 20 dlopen/dlclose pairs "
              "%.1f ms (%.1f without the shim), perfscope.log %r" % (got["canceled"], got["dl_ms"], bare["dl_ms"],
                                                                    log[-300:]))
    elif mode == "ownlongjmp":
        check(got["canceled"] == bare["canceled"] == "yes",
              "a thread that left its own SIGPROF handler by longjmp, then slept: cancelled %s under the shim, %s without"
              % (got["canceled"], bare["canceled"]))
    elif mode == "ownhandler":
        check(got["canceled"] == bare["canceled"] == "yes",
              "a thread in asynchronous cancellation inside its own SIGPROF handler: cancelled %s under the shim (%.1f ms), "
              "%s without" % (got["canceled"], got["ms"], bare["canceled"]))
    elif mode == "latecancel":
        check(got["returned"] == bare["returned"] == 20,
              "threads returning with a cancellation pending: %d of 20 joined with their value under the shim "
              "(%d cancelled), %d without" % (got["returned"], got["canceled"], bare["returned"]))
    elif "handler_closes_over_30ms" in got:
        check(got["handler_closes_over_30ms"] <= 2,
              "a handler's close on a thread starting in the gate took over 30 ms in %d of 4 rounds (max %.1f ms)"
              % (got["handler_closes_over_30ms"], got["max_ms"]))
    else:
        info("inhandler: no loopback socket here; not checked")
# 10. reopen beside a marker appender in another process.
markers = os.path.abspath("reopen.markers")
lost = 0
for i in range(3):
    open(markers, "w").close()
    appender = subprocess.Popen(["/bin/sh", "-c", 'i=0; while [ $i -lt 100000 ]; do echo "q$i begin" >> "$1"; '
                                 'i=$((i+1)); done', "sh", markers])
    got = figures(run([target("r_fdcancel"), "reopen"],
                      shim_env("out-reopen-%d" % i, HZ=997, COUNTER_MS=1, LLMPERFSCOPE_MARKERS=markers), what="reopen"),
                  "reopen under the shim", "reopen")
    appender.kill()
    appender.wait()
    lost += got["not_on_0"]
info("reopen: open after close(0) missed 0 in %d of 60000 rounds" % lost)
check(lost == 0, "close(0) then open(): the open missed number 0 in %d of 60000 rounds under the shim" % lost)
finish()
EOF2
