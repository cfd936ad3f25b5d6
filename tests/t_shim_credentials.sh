#!/usr/bin/env bash
# t_shim_credentials: a program that changes its own thread's credentials (capset,
# PR_SET_KEEPCAPS) and then calls the C library's setuid family, which changes every thread's and
# aborts the process when one thread's call fails where another's did not, runs under the shim
# as without it, though the shim's writer and watcher are threads (docs/shim.md, "Credentials
# changed on one thread"), and the shim's threads are back after the calls:
#  1 setxid    r_setxid (setpriv's steps by hand) as the run's leader: the same lines; no sample
#              dropped after the calls (0.6 s at 997 Hz, more than a ring holds)
#  2 setpriv   util-linux's `setpriv --reuid --regid` (with --clear-groups, and with
#              --init-groups --inh-caps=-all), as the run's leader and as a shell's child
# Root only: the calls change to another user. Optional argument: case numbers or names.
set -u
. "$ROOT/tests/lib.sh"
need_shim
[ "$(id -u)" = 0 ] || skip "needs root (setresuid to another user): not run"
command -v setpriv >/dev/null || skip "setpriv (util-linux) missing: not run"
build_target r_setxid

REVIEW_PERF=0
if perf_events_allowed; then REVIEW_PERF=1; else note "perf events refused: the shim's 997 Hz falls back to the tick timer"; fi
export REVIEW_PERF

python3 - "$@" <<'PYEOF'
import os, sys
import samples
from reviewlib import *
from shimlib import target

EXPECT = (b"keepcaps: ok\nsetresuid: ok\ncapset: ok\nsetresgid: ok\n"
          b"uid 65534 gid 65534\n")


def c_setxid():
    out = "out-setxid"
    base, res = base_then_shim([target("r_setxid")], out, lambda b: b.rc == 0 and b.stdout == EXPECT, "r_setxid")
    n = dropped = 0
    for _, p in samples.bin_files(out).get(res.pid, []):
        s = samples.read_samples(p + ".bin")
        n += len(s.samples)
        dropped += s.dropped
    note("r_setxid: %d samples, %d dropped (0.9 s of CPU at %d Hz)" % (n, dropped, RATE))
    need(dropped == 0, "r_setxid: %d samples dropped: the writer did not come back after capset" % dropped)
    need(n >= 0.7 * 0.9 * RATE, "r_setxid: %d samples of 0.9 s of CPU at %d Hz" % (n, RATE))


def only_unusable_folder_line(what, base, res):
    """`id` runs as nobody, who may not write the run folder root made: the shim says so in one
    line on stderr and lets it run (docs/shim.md, "Unusable output folder"); nothing else."""
    extra = [l for l in res.stderr.splitlines() if l not in base.stderr.splitlines()]
    need(all(l.startswith(b"perfscope[") and b"cannot use the output folder" in l for l in extra),
         "%s: stderr under the shim %r" % (what, res.stderr[-400:]))


def c_setpriv():
    for i, flags in enumerate(["--clear-groups", "--init-groups --inh-caps=-all"]):
        cmd = "setpriv --reuid=65534 --regid=65534 %s id -u" % flags
        base, res = base_then_shim(cmd.split(), "out-setpriv%d" % i, lambda b: b.rc == 0 and b.stdout == b"65534\n",
                                   cmd, stderr=False)
        only_unusable_folder_line(cmd, base, res)
        what = "sh -c '%s; echo back'" % cmd
        base, res = base_then_shim(["/bin/sh", "-c", cmd + "; echo back"], "out-setpriv-sh%d" % i,
                                   lambda b: b.rc == 0 and b.stdout == b"65534\nback\n", what, stderr=False)
        only_unusable_folder_line(what, base, res)


CASES = [(1, "setxid", c_setxid),
         (2, "setpriv", c_setpriv)]
run_cases(CASES, sys.argv[1:])
PYEOF
