#!/usr/bin/env bash
# t_shim_review_exit: regressions from a review of the shim (docs/shim.md: the shim never changes the
# target's behaviour, output, exit status, errno, signals or descriptors), the exit paths. Each
# case runs its r_* target without and with the shim (PERFSCOPE_HZ=997) and compares (harness:
# tests/reviewlib.py); cases numbered as in the review:
#  2 exitsig      _exit(3) from a SIGALRM handler while main mallocs/frees: status 3, no hang
#                 (20 runs, 10 s each)
#  7 exitcode     return -1 and exit(256): status 255 / 0, meta.json "exit 255" / "ok"
# Optional argument: case numbers or names to run (default all), e.g. `t_shim_review_exit.sh 2`.
set -u
. "$ROOT/tests/lib.sh"
need_shim
for t in r_exitsig r_exitcode; do
    build_target "$t"
done

python3 - "$@" <<'EOF'
import os
import sys
from reviewlib import *
from shimlib import target, plain_env, sig_name


def c_exitsig():
    exe = target("r_exitsig")
    base = run([exe], plain_env(), timeout=10, what="r_exitsig")
    need(base.rc == 3, "r_exitsig without the shim: %s" % sig_name(base.rc))
    for k in range(20):
        delay = 1000 + 137 * k
        what = "r_exitsig %d (run %d of 20)" % (delay, k + 1)
        res = run([exe, str(delay)], senv("out-exitsig-%d" % k), timeout=10, what=what)
        need(res.rc == 3, "%s: %s under the shim, exit 3 without; stderr %r" % (what, sig_name(res.rc), res.stderr[-300:]))


def c_exitcode():
    exe = target("r_exitcode")
    for mode, rc, status in (("ret", 255, "exit 255"), ("exit256", 0, "ok")):
        what = "r_exitcode %s" % mode
        base = run([exe, mode], plain_env(), what=what)
        need(base.rc == rc, "%s without the shim: %s" % (what, sig_name(base.rc)))
        out = "out-exitcode-%s" % mode
        res = run([exe, mode], senv(out), what=what)
        same(base, res, what)
        got = meta_of(out).get("status")
        need(got == status, "%s: meta.json status %r, the process's status is %r" % (what, got, status))


CASES = [(2, "exitsig", c_exitsig),
         (7, "exitcode", c_exitcode)]
run_cases(CASES, sys.argv[1:])
EOF
