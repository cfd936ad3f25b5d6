#!/usr/bin/env bash
# t_shim_namespaces: the calls the kernel grants only to a process of one thread, whose filesystem
# information is its own (unshare of a user namespace, setns into a mount namespace), succeed
# under the shim as without it, though the shim's writer and watcher are threads (docs/shim.md,
# "Calls refused to a process of several threads"), and the shim's threads are back after them:
#  1 leader     r_unshare as the run's leader: the same lines; the samples after the calls are
#               all written (at 997 Hz more than a ring holds: the writer is back), and the
#               counters go on (the watcher is back: no gap of 0.45 s between counters lines)
#  2 follower   r_unshare as a shell's child: the same lines; its samples and its exit line
#  3 util-linux `unshare --user --map-root-user id -u` and `nsenter --mount` into our own
#               mount namespace, as a shell's children: the same output and status
# Optional argument: case numbers or names to run (default all).
set -u
. "$ROOT/tests/lib.sh"
need_shim
build_target r_unshare -pthread
# Without the shim first: where user namespaces are refused (a container's seccomp profile,
# user.max_user_namespaces=0) or setns needs a privilege this user lacks, nothing here can run.
base=$("$TBUILD/r_unshare" 2>&1 | head -4 | tr '\n' ' ')
[ "$base" = "setns mnt: ok unshare user: ok map ids: ok syscall unshare user: ok " ] \
    || skip "user or mount namespaces refused here without the shim (r_unshare: $base): not run"

REVIEW_PERF=0
if perf_events_allowed; then REVIEW_PERF=1; else note "perf events refused: the shim's 997 Hz falls back to the tick timer"; fi
export REVIEW_PERF

python3 - "$@" <<'PYEOF'
import os, sys
import samples
from reviewlib import *
from shimlib import target, sig_name

EXPECT = (b"setns mnt: ok\nunshare user: ok\nmap ids: ok\nsyscall unshare user: ok\n"
          b"unshare user, two threads: EINVAL\n")


def procs_of(out, pid):
    return [r for r in samples.read_jsonl(os.path.join(out, "procs.jsonl")) if r.get("pid") == pid]


def check_samples(out, pid, what):
    n, dropped = samples_of(out, pid)
    note("%s: %d samples, %d dropped (0.9 s of CPU at %d Hz)" % (what, n, dropped, RATE))
    need(dropped == 0, "%s: %d samples dropped: the writer did not come back after the calls" % (what, dropped))
    need(n >= 0.7 * 0.9 * RATE, "%s: %d samples of 0.9 s of CPU at %d Hz" % (what, n, RATE))
    ends = [r for r in procs_of(out, pid) if r.get("event") == "exit"]
    need(ends and ends[-1].get("status") == "ok", "%s: procs.jsonl's exit line: %r" % (what, ends))


def c_leader():
    exe = target("r_unshare")
    out = "out-leader"
    base, res = base_then_shim([exe], out, lambda b: b.rc == 0 and b.stdout == EXPECT, "r_unshare",
                               PERFSCOPE_COUNTER_MS="100")
    check_samples(out, res.pid, "r_unshare (leader)")
    ts = [r["t_ns"] for r in samples.read_jsonl(os.path.join(out, "counters.jsonl"))]
    gaps = [(b - a) / 1e9 for a, b in zip(ts, ts[1:])]
    note("counters: %d lines, largest gap %.3f s" % (len(ts), max(gaps) if gaps else 0))
    need(len(ts) >= 5 and max(gaps) < 0.45, "counters.jsonl: %d lines, gaps %s: the watcher did not "
         "come back after the calls" % (len(ts), ["%.2f" % g for g in gaps]))


def c_follower():
    exe = target("r_unshare")
    out = "out-follower"
    base, res = base_then_shim(["/bin/sh", "-c", '"$0"; echo "child $!" >/dev/null', exe], out,
                               lambda b: b.rc == 0 and b.stdout == EXPECT, "sh -c r_unshare")
    kids = [r["pid"] for r in samples.read_jsonl(os.path.join(out, "procs.jsonl"))
            if r.get("event") == "start" and r.get("exe", "").endswith("/r_unshare")]
    need(len(kids) == 1 and kids[0] != res.pid, "procs.jsonl: r_unshare's start lines for pids %r" % kids)
    check_samples(out, kids[0], "r_unshare (follower)")


def c_utillinux():
    me = str(os.getpid())
    script = 'unshare --user --map-root-user id -u && nsenter --target "$0" --mount true && echo done'
    base, res = base_then_shim(["/bin/sh", "-c", script, me], "out-utillinux",
                               lambda b: b.rc == 0 and b.stdout == b"0\ndone\n", "unshare and nsenter")


CASES = [(1, "leader", c_leader),
         (2, "follower", c_follower),
         (3, "util-linux", c_utillinux)]
run_cases(CASES, sys.argv[1:])
PYEOF
