#!/usr/bin/env bash
# t_shim_exits: the shim's ways out and its lifetime (issue 8; docs/shim.md "Exit status and
# output", "Known limits"). Each case runs its x_* target without and with the shim
# (PERFSCOPE_HZ=997, harness tests/reviewlib.py) and compares; numbered as the issue's defects:
#  1 pthread_exit  the main thread ends with pthread_exit, a worker burns 0.2 s: same output
#                  (atexit ran), status 0, no hang, at 997 Hz and at PERFSCOPE_HZ=0
#                  PERFSCOPE_COUNTER_MS=0; meta.json "ok", an exit line; the end time is noted
#  2 strict        seccomp strict mode, then writes and a raw exit(2) of 0, then of 6: same output,
#                  the same status (6: the last shim thread to end ends by the same raw exit; it
#                  returned before, and the process ended 0), no hang; the log says the thread was
#                  no longer sampled; and a main thread's raw exit(2) of 6 with a worker that ends
#                  after it through the C library: status 0 as without the shim (the last thread's)
#  3 seccomp       a filter that kills on openat (prctl, and seccomp(2) with TSYNC), then exit(3),
#                  return 3, _exit(3) or SIGTERM: same output and status; meta.json and
#                  procs.jsonl have the real status; the log says what stopped; a process the
#                  filter kills (SIGSYS) ends so, meta.json saying why its end passed unseen; a
#                  target's dup2 onto the numbers of the files the shim keeps open for the filter
#                  writes nothing of the run into the target's file
#  5 rawexit       0.04 s of CPU, then a raw exit_group: the samples kept (at least half the
#                  CPU time at the rate), meta.json intact ("running": nothing saw the end)
#  6 resethand     a SIGTERM handler with SA_RESETHAND that raises again (Node): killed by
#                  SIGTERM as without the shim, its sigaction queries answered as without it,
#                  and meta.json and procs.jsonl say "signal SIGTERM"
#  8 exitlines     exit lines written on the _exit path have t_ns and ppid; a process that ends
#                  with _exit before the writer's first pass has its thread name in its samples;
#                  a daemon()'s parent has its exit line and keeps its samples
# 13 quick         a process that ends at once with _exit(3) (and `sh -c 'exit 3'`, and an
#                  exit_group(3) through syscall()) leaves meta.json with "exit 3"
# Optional argument: case numbers or names to run (default all).
set -u
. "$ROOT/tests/lib.sh"
need_shim
for t in x_pthread_exit x_strict x_mainrawexit x_seccomp_open x_rawexit x_resethand x_quick_exit r_daemon; do
    build_target "$t"
done
REVIEW_PERF=0
if perf_events_allowed; then REVIEW_PERF=1; else note "perf events refused: the shim's 997 Hz falls back to the tick timer"; fi
export REVIEW_PERF

python3 - "$@" <<'EOF'
import collections
import os
import sys
import time

import samples
from reviewlib import *
from shimlib import target, plain_env, sig_name


def procs_of(out):
    return samples.read_jsonl(os.path.join(out, "procs.jsonl"))


def exit_lines(out, pid):
    return [p for p in procs_of(out) if p.get("pid") == pid and p.get("event") == "exit"]


def log_of(out):
    path = os.path.join(out, "perfscope.log")
    return open(path).read() if os.path.exists(path) else ""


def c_pthread_exit():
    exe = target("x_pthread_exit")
    base = run([exe], plain_env(), timeout=20, what="x_pthread_exit")
    need(base.rc == 0 and base.stdout == b"worker done\natexit\n",
         "x_pthread_exit without the shim: %s %r" % (sig_name(base.rc), base.stdout))
    for label, kw in (("997 Hz", {}), ("HZ=0 COUNTER_MS=0", {"HZ": 0, "COUNTER_MS": 0})):
        what = "x_pthread_exit %s" % label
        out = "out-pthread-exit-%d" % len(kw)
        res = run([exe], senv(out, **kw), timeout=20, what=what)
        same(base, res, what)
        need(meta_of(out).get("status") == "ok", "%s: meta.json status %r" % (what, meta_of(out).get("status")))
        ends = exit_lines(out, res.pid)
        need(len(ends) == 1 and ends[0].get("status") == "ok", "%s: exit lines %r" % (what, ends))
        note("%s: ended %.3f s after its start, %.3f s without the shim"
             % (what, (res.t1 - res.t0) / 1e9, (base.t1 - base.t0) / 1e9))


def c_strict():
    exe = target("x_strict")
    for code in (0, 6):
        base = run([exe, str(code)], plain_env(), timeout=20, what="x_strict %d" % code)
        need(base.rc == code and base.stdout == b"strict ok\n",
             "x_strict %d without the shim: %s %r" % (code, sig_name(base.rc), base.stdout))
        for label, kw in (("997 Hz", {}), ("HZ=0", {"HZ": 0})):
            what = "x_strict %d %s" % (code, label)
            out = "out-strict-%d-%d" % (code, len(kw))
            res = run([exe, str(code)], senv(out, **kw), timeout=20, what=what)
            same(base, res, what)
            status = "exit %d" % code if code else "ok"
            need(meta_of(out).get("status") == status, "%s: meta.json status %r" % (what, meta_of(out).get("status")))
            need("seccomp strict mode" in log_of(out), "%s: the log does not say the thread entered strict mode: %r"
                 % (what, log_of(out)))
    exe = target("x_mainrawexit")
    base = run([exe], plain_env(), timeout=20, what="x_mainrawexit")
    need(base.rc == 0 and base.stdout == b"worker done\n", "x_mainrawexit without the shim: %s %r" % (sig_name(base.rc), base.stdout))
    for label, kw in (("997 Hz", {}), ("HZ=0", {"HZ": 0})):
        what = "x_mainrawexit %s" % label
        out = "out-mainrawexit-%d" % len(kw)
        res = run([exe], senv(out, **kw), timeout=20, what=what)
        same(base, res, what)
        need(meta_of(out).get("status") == "ok", "%s: meta.json status %r" % (what, meta_of(out).get("status")))


def c_seccomp():
    exe = target("x_seccomp_open")
    for mode in ("exit", "ret", "_exit", "term"):
        for sync in ("", "tsync"):
            argv = [exe, mode] + ([sync] if sync else [])
            what = " ".join(["x_seccomp_open", mode, sync]).strip()
            base = run(argv, plain_env(), timeout=20, what=what)
            want_rc = -15 if mode == "term" else 3
            need(base.rc == want_rc and base.stdout == b"filtered ok\n",
                 "%s without the shim: %s %r" % (what, sig_name(base.rc), base.stdout))
            out = "out-seccomp-%s-%s" % (mode, sync or "thread")
            res = run(argv, senv(out), timeout=20, what=what)
            same(base, res, what)
            status = "signal SIGTERM" if mode == "term" else "exit 3"
            got = meta_of(out).get("status")
            need(got == status, "%s: meta.json status %r, the process's %r" % (what, got, status))
            ends = exit_lines(out, res.pid)
            need(len(ends) == 1 and ends[0].get("status") == status, "%s: exit lines %r" % (what, ends))
            need("seccomp filter" in log_of(out), "%s: the log does not say a filter was installed" % what)
            need(meta_of(out).get("end_unseen"), "%s: meta.json has no end_unseen" % what)
    # The target's dup2 onto the numbers of the files the shim keeps open for the filter: they
    # move first, and nothing of the run is written into the target's file (a review: before,
    # the exit line and meta.json went into it, and meta.json said "running").
    argv = [exe, "dup2"]
    base = run(argv, plain_env(), timeout=20, what="x_seccomp_open dup2")
    need(base.rc == 3 and base.stdout == b"filtered ok\n" and os.path.getsize("x_seccomp_dup2.txt") == 0,
         "x_seccomp_open dup2 without the shim: %s %r" % (sig_name(base.rc), base.stdout))
    res = run(argv, senv("out-seccomp-dup2"), timeout=20, what="x_seccomp_open dup2")
    same(base, res, "x_seccomp_open dup2")
    written = open("x_seccomp_dup2.txt", "rb").read()
    need(written == b"", "x_seccomp_open dup2: the shim wrote %d bytes into the target's file: %r"
         % (len(written), written[:120]))
    got = meta_of("out-seccomp-dup2").get("status")
    need(got == "exit 3", "x_seccomp_open dup2: meta.json status %r" % got)
    ends = exit_lines("out-seccomp-dup2", res.pid)
    need(len(ends) == 1 and ends[0].get("status") == "exit 3", "x_seccomp_open dup2: exit lines %r" % ends)
    # The filter kills the process: nothing sees the end, meta.json says why it may pass unseen.
    argv = [exe, "die"]
    base = run(argv, plain_env(), timeout=20, what="x_seccomp_open die")
    need(base.rc == -31 and base.stdout == b"filtered ok\n", "x_seccomp_open die without the shim: %s" % sig_name(base.rc))
    res = run(argv, senv("out-seccomp-die"), timeout=20, what="x_seccomp_open die")
    same(base, res, "x_seccomp_open die")
    m = meta_of("out-seccomp-die")
    need(m.get("status") == "running" and m.get("end_unseen"), "x_seccomp_open die: meta.json status %r end_unseen %r"
         % (m.get("status"), m.get("end_unseen")))


def c_rawexit():
    exe = target("x_rawexit")
    base = run([exe, "0.04"], plain_env(), timeout=20, what="x_rawexit")
    need(base.rc == 0, "x_rawexit without the shim: %s" % sig_name(base.rc))
    out = "out-rawexit"
    res = run([exe, "0.04"], senv(out), timeout=20, what="x_rawexit")
    same(base, res, "x_rawexit")
    files = samples.bin_files(out)
    need(res.pid in files, "x_rawexit: no sample file")
    sf = samples.read_samples(files[res.pid][0][1] + ".bin")
    want = 0.04 * RATE
    note("x_rawexit: %d samples kept of 0.04 s of CPU at %d Hz (%.0f)" % (len(sf.samples), RATE, want))
    need(len(sf.samples) >= 0.5 * want, "x_rawexit: %d samples kept for 0.04 s of CPU at %d Hz: the writer "
         "flushed too seldom for a short life ended unseen" % (len(sf.samples), RATE))
    need(meta_of(out).get("status") == "running", "x_rawexit: meta.json status %r" % meta_of(out).get("status"))


def c_resethand():
    exe = target("x_resethand")
    base = run([exe], plain_env(), timeout=20, what="x_resethand")
    need(base.rc == -15 and base.stdout.startswith(b"query ok flags") and b"term handler reset ok flags" in base.stdout,
         "x_resethand without the shim: %s %r" % (sig_name(base.rc), base.stdout))
    out = "out-resethand"
    res = run([exe], senv(out), timeout=20, what="x_resethand")
    same(base, res, "x_resethand")
    got = meta_of(out).get("status")
    need(got == "signal SIGTERM", "x_resethand: meta.json status %r" % got)
    ends = exit_lines(out, res.pid)
    need(len(ends) == 1 and ends[0].get("status") == "signal SIGTERM", "x_resethand: exit lines %r" % ends)


def c_exitlines():
    exe = target("x_quick_exit")
    out = "out-exitlines"
    res = run([exe, "burn"], senv(out), timeout=20, what="x_quick_exit burn")
    need(res.rc == 3, "x_quick_exit burn: %s" % sig_name(res.rc))
    ends = exit_lines(out, res.pid)
    need(len(ends) == 1, "x_quick_exit burn: exit lines %r" % ends)
    for k in ("pid", "ppid", "event", "t_ns", "status"):
        need(k in ends[0], "x_quick_exit burn: the _exit path's exit line lacks %s: %r" % (k, ends[0]))
    need(ends[0]["ppid"] == os.getpid(), "x_quick_exit burn: ppid %r, its parent is %d" % (ends[0]["ppid"], os.getpid()))
    start = [p for p in procs_of(out) if p.get("pid") == res.pid and p.get("event") == "start"]
    need(start and start[0]["t_ns"] <= ends[0]["t_ns"] <= res.t1, "x_quick_exit burn: exit t_ns %r" % ends[0]["t_ns"])
    files = samples.bin_files(out)
    sf = samples.read_samples(files[res.pid][0][1] + ".bin")
    names = collections.Counter(s.comm for s in sf.samples)
    need(sf.samples and set(names) == {"x_quick_exit"}, "x_quick_exit burn: thread names in its samples %r" % dict(names))

    exe = target("r_daemon")
    pidfile = os.path.abspath("daemon.pid")
    out = "out-daemon"
    res = run([exe, pidfile], senv(out), timeout=20, what="r_daemon")
    need(res.rc == 0, "r_daemon: %s" % sig_name(res.rc))
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and len([p for p in procs_of(out) if p.get("event") == "exit"]) < 2:
        time.sleep(0.05)
    starts = [p["pid"] for p in procs_of(out) if p.get("event") == "start"]
    need(len(starts) == 2, "r_daemon: start lines for %r" % starts)
    for pid in starts:
        ends = exit_lines(out, pid)
        need(len(ends) == 1 and ends[0].get("status") == "ok" and "t_ns" in ends[0] and "ppid" in ends[0],
             "r_daemon: pid %d (%s): exit lines %r" % (pid, "the parent" if pid == res.pid else "the daemon", ends))
    sf = samples.read_samples(samples.bin_files(out)[res.pid][0][1] + ".bin")
    names = collections.Counter(s.comm for s in sf.samples)
    want = 0.2 * RATE
    note("r_daemon's parent: %d samples of 0.2 s of CPU at %d Hz (%.0f), names %r" % (len(sf.samples), RATE, want, dict(names)))
    need(len(sf.samples) >= 0.8 * want and set(names) == {"r_daemon"},
         "r_daemon's parent: %d samples (%.0f expected), names %r" % (len(sf.samples), want, dict(names)))


def c_quick():
    exe = target("x_quick_exit")
    for argv, what in (([exe], "x_quick_exit"), (["sh", "-c", "exit 3"], "sh -c 'exit 3'"),
                       ([exe, "syscall"], "x_quick_exit syscall")):
        base = run(argv, plain_env(), timeout=20, what=what)
        need(base.rc == 3, "%s without the shim: %s" % (what, sig_name(base.rc)))
        out = "out-quick-%d" % len(argv)
        res = run(argv, senv(out), timeout=20, what=what)
        same(base, res, what)
        need(os.path.exists(os.path.join(out, "meta.json")), "%s: no meta.json" % what)
        m = meta_of(out)
        need(m.get("status") == "exit 3" and m.get("pid") == res.pid and "end_ns" in m,
             "%s: meta.json status %r pid %r end_ns %r" % (what, m.get("status"), m.get("pid"), m.get("end_ns")))
        need(isinstance(m.get("sampling", {}).get("samples"), int), "%s: meta.json sampling lacks the exit figures: %r"
             % (what, m.get("sampling")))
        ends = exit_lines(out, res.pid)
        need(len(ends) == 1 and ends[0].get("status") == "exit 3", "%s: exit lines %r" % (what, ends))


CASES = [(1, "pthread_exit", c_pthread_exit),
         (2, "strict", c_strict),
         (3, "seccomp", c_seccomp),
         (5, "rawexit", c_rawexit),
         (6, "resethand", c_resethand),
         (8, "exitlines", c_exitlines),
         (13, "quick", c_quick)]
run_cases(CASES, sys.argv[1:])
EOF
